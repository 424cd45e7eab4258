"""Options of resampling shared by metrics: bootstrap confidence intervals and paired significance tests.

A metric's options dataclass inherits these to take the same keyword arguments,
defaults and checks as sacreBLEU's: ``confidence``, ``n_bootstrap``,
``confidence_level``, ``seed`` (default 12345, sacreBLEU's), and for a paired
test against a baseline system ``baseline_predictions``, ``paired_test``
('bs': paired bootstrap, 'ar': approximate randomization) and ``n_samples``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .core_options import MetricOptions, boolean, choice, integer, number, option, optional, texts
from .core_resample import DEFAULT_SEED, Interval, ScoreFn, bootstrap_interval

PAIRED_TESTS = ("bs", "ar")
DEFAULT_PAIRED_SAMPLES = {"bs": 1000, "ar": 10000}


@dataclass(frozen=True)
class BootstrapOptions(MetricOptions):
    """A seeded bootstrap confidence interval of the corpus score."""

    confidence: bool = option(False, boolean)
    n_bootstrap: int = option(1000, integer(minimum=2))
    confidence_level: float = option(0.95, number(minimum=0, maximum=1, exclusive=True))
    seed: int | None = option(DEFAULT_SEED, optional(integer(minimum=0)))

    def interval(self, stats: np.ndarray, score: ScoreFn) -> Interval:
        """The bootstrap confidence interval of ``score`` over the examples' statistics, with these options."""
        return bootstrap_interval(stats, score, n_samples=self.n_bootstrap, seed=self.seed, level=self.confidence_level)


@dataclass(frozen=True)
class PairedTestOptions(MetricOptions):
    """A paired significance test of the predictions against a baseline system's predictions."""

    baseline_predictions: list[str] | None = option(None, optional(texts))
    paired_test: str = option("bs", choice(*PAIRED_TESTS))
    n_samples: int | None = option(None, optional(integer(minimum=1)))

    @property
    def paired_samples(self) -> int:
        """Resamples (bs) or randomization trials (ar) of the paired test."""
        return DEFAULT_PAIRED_SAMPLES[self.paired_test] if self.n_samples is None else self.n_samples
