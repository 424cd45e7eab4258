"""Options of resampling shared by metrics: bootstrap confidence intervals and paired significance tests.

A metric's options dataclass inherits these to take the same keyword arguments,
defaults and checks as sacreBLEU's: ``confidence``, ``n_bootstrap``,
``confidence_level``, ``seed`` (default 12345, sacreBLEU's), and for a paired
test against a baseline system ``baseline_predictions``, ``paired_test``
('bs': paired bootstrap, 'ar': approximate randomization) and ``n_samples``.
:class:`MeanIntervals` gives a statistics metric the intervals of its per-example means.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .core_options import boolean, choice, integer, number, option, optional, texts
from .core_resample import DEFAULT_SEED, Interval, ScoreFn, as_stats_matrix, bootstrap_interval
from .core_resources import ResampleBounds

PAIRED_TESTS = ("bs", "ar")
DEFAULT_PAIRED_SAMPLES = {"bs": 1000, "ar": 10000}


@dataclass(frozen=True)
class BootstrapOptions(ResampleBounds):
    """A seeded bootstrap confidence interval of the corpus score."""

    confidence: bool = option(False, boolean)
    n_bootstrap: int = option(1000, integer(minimum=2))
    confidence_level: float = option(0.95, number(minimum=0, maximum=1, exclusive=True))
    seed: int | None = option(DEFAULT_SEED, optional(integer(minimum=0)))

    def resampling_runs(self) -> list[tuple[str, int]]:
        runs = super().resampling_runs()
        if self.confidence:
            runs.append(("the bootstrap interval (confidence=True)", self.n_bootstrap))
        return runs

    def interval(self, stats: np.ndarray, score: ScoreFn) -> Interval:
        """The bootstrap confidence interval of ``score`` over the examples' statistics, with these options."""
        return bootstrap_interval(stats, score, n_samples=self.n_bootstrap, seed=self.seed, level=self.confidence_level)


@dataclass(frozen=True)
class PairedTestOptions(ResampleBounds):
    """A paired significance test of the predictions against a baseline system's predictions."""

    baseline_predictions: list[str] | None = option(None, optional(texts))
    paired_test: str = option("bs", choice(*PAIRED_TESTS))
    n_samples: int | None = option(None, optional(integer(minimum=1)))

    def resampling_runs(self) -> list[tuple[str, int]]:
        runs = super().resampling_runs()
        if self.baseline_predictions is not None:
            runs.append((f"the paired test (paired_test={self.paired_test!r})", self.paired_samples))
        return runs

    @property
    def paired_samples(self) -> int:
        """Resamples (bs) or randomization trials (ar) of the paired test."""
        return DEFAULT_PAIRED_SAMPLES[self.paired_test] if self.n_samples is None else self.n_samples


class MeanIntervals:
    """Mixed into a statistics metric whose options inherit :class:`BootstrapOptions`: with ``confidence=True``
    every example's row is kept, and each mean the metric names in :meth:`interval_means` gets
    ``<name>_low``/``<name>_high``, the bootstrap interval of its summed field over the summed ``count``."""

    def interval_means(self, options: Any) -> Mapping[str, str]:
        """Output name -> the statistics field whose per-example mean it is."""
        raise NotImplementedError

    def needs_rows(self, options: Any) -> bool:
        return options.confidence

    def averages_examples(self, options: Any) -> bool:
        return not options.confidence  # an interval of the mean is not a mean of per-example intervals

    def corpus_outputs(self, rows: Sequence[Sequence[Any]], extra: Mapping[str, Any], totals: Any,
                       options: Any) -> dict[str, float]:
        schema = self.schema(options)  # type: ignore[attr-defined]
        matrix = as_stats_matrix([[float(value) for value in row] for row in rows])
        count = schema.position("count")
        result = {}
        for name, field in self.interval_means(options).items():
            column = schema.position(field)

            def mean(sums: Any, column: int = column) -> float:
                return float(sums[column] / sums[count])

            interval = options.interval(matrix, mean)
            result[f"{name}_low"] = interval.low
            result[f"{name}_high"] = interval.high
        return result
