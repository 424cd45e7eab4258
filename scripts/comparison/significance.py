"""Bootstrap intervals and paired tests against the baseline, on statistics: one set of bootstrap resamples
(sacreBLEU's draws for the seed) shared by every metric and system, so intervals are comparable and the paired
bootstrap is sacreBLEU's; approximate randomization per metric and system, as sacreBLEU runs it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from comparison.data import ComparisonError
from comparison.statistics import MetricStatistics
from metrics._core.core_resample import (
    Interval,
    approximate_randomization_p_values,
    bootstrap_weights,
    paired_bootstrap_p_value,
    percentile_interval,
    weighted_totals,
)


# Bounds of the resampling, checked before any scoring: every resample and trial scores every metric and system
# once in Python (about 10-50 microseconds each), and the trials' differences are kept in memory (8 bytes per
# trial and headline), so 10^9 trials would run for days and need 8 GB per metric.
MAX_BOOTSTRAP_SAMPLES = 100_000
MAX_AR_SAMPLES = 1_000_000


def _whole(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


@dataclass(frozen=True)
class ResamplingSettings:
    """How intervals and tests are drawn: bootstrap resamples (1 to :data:`MAX_BOOTSTRAP_SAMPLES`),
    approximate-randomization trials (0: no test; at most :data:`MAX_AR_SAMPLES`), seed (a whole number >= 0, or
    None), interval level and the significance level that earns a system its marker (both strictly between 0 and
    1). Checked when made, so a bad setting fails before any scoring."""

    n_samples: int = 1000
    ar_samples: int = 10000
    seed: int | None = 12345
    level: float = 0.95
    alpha: float = 0.05

    def __post_init__(self) -> None:
        if not _whole(self.n_samples) or not 1 <= self.n_samples <= MAX_BOOTSTRAP_SAMPLES:
            raise ComparisonError(f"compare: the bootstrap samples (--bootstrap-samples) must be a whole number from "
                                  f"1 to {MAX_BOOTSTRAP_SAMPLES:,}, got {self.n_samples!r}")
        if not _whole(self.ar_samples) or not 0 <= self.ar_samples <= MAX_AR_SAMPLES:
            raise ComparisonError(f"compare: the approximate randomization trials (--ar-samples) must be a whole "
                                  f"number from 0 (no test) to {MAX_AR_SAMPLES:,}, got {self.ar_samples!r}")
        if self.seed is not None and (not _whole(self.seed) or self.seed < 0):
            raise ComparisonError(f"compare: the seed (--seed) must be a whole number >= 0, got {self.seed!r}")
        for name in ("level", "alpha"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
                raise ComparisonError(f"compare: the {name} must be a number strictly between 0 and 1, got {value!r}")


@dataclass(frozen=True)
class Cell:
    """One metric headline for one system: its score, bootstrap interval and p-values against the baseline
    (``None`` for the baseline itself and for tests not run)."""

    score: float
    interval: Interval
    p_bootstrap: float | None
    p_randomization: float | None

    def significant(self, alpha: float) -> bool:
        p_values = [p for p in (self.p_bootstrap, self.p_randomization) if p is not None]
        return bool(p_values) and max(p_values) < alpha


def bootstrap_samples(metrics: Sequence[MetricStatistics], systems: Sequence[str], size: int,
                      settings: ResamplingSettings, progress=None) -> dict[tuple[str, str, str], np.ndarray]:
    """Resampled headline numbers, (metric, headline key, system) -> n_samples scores, all on the same
    resamples."""
    scores: dict[tuple[str, str, str], list[float]] = {
        (metric.name, headline.key, system): [] for metric in metrics for headline in metric.headlines
        for system in systems}
    for weights in bootstrap_weights(size, n_samples=settings.n_samples, seed=settings.seed):
        for metric in metrics:
            for system in systems:
                for vector in weighted_totals(weights, metric.matrices[system]):
                    for headline, value in zip(metric.headlines, metric.values(metric.vector_totals(system, vector))):
                        scores[(metric.name, headline.key, system)].append(value)
                if progress is not None:
                    progress.update(len(weights))
    return {key: np.array(values) for key, values in scores.items()}


def cells(metrics: Sequence[MetricStatistics], systems: Sequence[str], baseline: str, size: int,
          settings: ResamplingSettings, progress=None) -> dict[tuple[str, str, str], Cell]:
    """Every (metric, headline key, system) cell of the comparison table."""
    samples = bootstrap_samples(metrics, systems, size, settings, progress)
    table = {}
    for metric in metrics:
        baseline_scores = metric.exact_values(baseline)
        for system in systems:
            scores = metric.exact_values(system)
            randomization = [None] * len(metric.headlines)
            if system != baseline and settings.ar_samples > 0:
                randomization = approximate_randomization_p_values(
                    metric.matrices[baseline], metric.matrices[system], metric.vector_scores(system),
                    n_samples=settings.ar_samples, seed=settings.seed)[0].tolist()
            for position, headline in enumerate(metric.headlines):
                key = (metric.name, headline.key, system)
                interval = percentile_interval(samples[key], level=settings.level, seed=settings.seed)
                p_bootstrap = None if system == baseline else paired_bootstrap_p_value(
                    samples[(metric.name, headline.key, baseline)], samples[key], baseline_scores[position],
                    scores[position])
                table[key] = Cell(scores[position], interval, p_bootstrap, randomization[position])
    return table
