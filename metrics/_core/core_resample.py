"""Seeded resampling over per-example statistics: bootstrap confidence intervals and paired tests.

Resampling draws rows of the statistics matrix (one row per example), never
text, and scores each resample with the metric's score-from-totals function.
The random streams are those of sacreBLEU 2.x (``numpy.random.default_rng``
with the same calls and the same default seed, 12345), so with the same seed
the resamples are identical to sacreBLEU's; sums are exact integers here
where sacreBLEU sums float32. Resamples are processed in chunks so memory stays
bounded for large corpora.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any
from dataclasses import dataclass

import numpy as np

ScoreFn = Callable[[np.ndarray], float]

DEFAULT_SEED = 12345
_CHUNK_ELEMENTS = 1 << 22
_BOOL_CHUNK_ROWS = 32  # bool draws are buffered in 32-bit words: chunks of 32 rows keep the stream intact


@dataclass(frozen=True)
class Interval:
    """A bootstrap estimate: mean of the resampled scores and a percentile interval around it."""

    mean: float
    low: float
    high: float
    half_width: float
    level: float
    n_samples: int
    seed: int | None


@dataclass(frozen=True)
class PairedTestResult:
    """Outcome of a paired significance test of a system against a baseline."""

    method: str
    p_value: float
    system_score: float
    baseline_score: float
    n_samples: int
    seed: int | None


def as_stats_matrix(rows: Sequence[Sequence[float]]) -> np.ndarray:
    """Per-example statistics as a 2-D array (integers stay exact as int64)."""
    matrix = np.asarray(rows)
    if matrix.dtype.kind in "biu":
        return matrix.astype(np.int64, copy=False)
    return matrix.astype(np.float64, copy=False)


def weighted_totals(weights: np.ndarray, stats: np.ndarray) -> np.ndarray:
    """``weights @ stats``: column sums of the statistics weighted by each row of ``weights`` (counts or 0/1
    selections). Multiplied in float64 by BLAS (numpy's integer product has no fast path); for integer statistics
    every product and partial sum is an integer far below 2**53, so the result is exact in any summation order
    and returned as int64."""
    product = weights.astype(np.float64) @ stats.astype(np.float64, copy=False)
    return np.rint(product).astype(np.int64) if stats.dtype.kind in "biu" else product


def _rows_per_chunk(n_examples: int) -> int:
    return max(1, _CHUNK_ELEMENTS // max(n_examples, 1))


def bootstrap_weights(n_examples: int, *, n_samples: int, seed: int | None) -> Iterator[np.ndarray]:
    """Bootstrap resamples of ``n_examples`` examples, drawn as sacreBLEU draws them, in chunks: each chunk is a
    matrix of how many times each example (column) is drawn in each resample (row). The same seed, corpus size
    and sample count give the same resamples, so scores of several systems and metrics resampled with them are
    paired."""
    rng = np.random.default_rng(seed)
    step = _rows_per_chunk(n_examples)
    for start in range(0, n_samples, step):
        indices = rng.choice(n_examples, size=(min(step, n_samples - start), n_examples), replace=True)
        yield np.stack([np.bincount(row, minlength=n_examples) for row in indices])


def bootstrap_scores(stats: np.ndarray, score: ScoreFn, *, n_samples: int, seed: int | None) -> np.ndarray:
    """Scores of ``n_samples`` bootstrap resamples of the examples (drawn as sacreBLEU draws them)."""
    chunks = bootstrap_weights(stats.shape[0], n_samples=n_samples, seed=seed)
    return np.array([score(totals) for weights in chunks for totals in weighted_totals(weights, stats)],
                    dtype=np.float64)


def percentile_interval(scores: np.ndarray, *, level: float = 0.95, seed: int | None = None) -> Interval:
    """Mean and percentile interval of resampled scores (sacreBLEU's 95% rule: drop n//40 on each side)."""
    ordered = np.sort(scores)
    n = len(ordered)
    lower_index = int(math.floor(round(n * (1.0 - level) / 2.0, 9)))
    upper_index = n - lower_index - 1
    low, high = float(ordered[lower_index]), float(ordered[upper_index])
    return Interval(
        mean=float(ordered.mean()),
        low=low,
        high=high,
        half_width=0.5 * (high - low),
        level=level,
        n_samples=n,
        seed=seed,
    )


def bootstrap_interval(
    stats: np.ndarray, score: ScoreFn, *, n_samples: int = 1000, seed: int | None = DEFAULT_SEED, level: float = 0.95
) -> Interval:
    """Bootstrap confidence interval of a corpus score."""
    return percentile_interval(bootstrap_scores(stats, score, n_samples=n_samples, seed=seed), level=level, seed=seed)


def _p_value(statistics: np.ndarray, observed: float) -> float:
    """(count of statistics strictly above the observed one + 1) / (n + 1), as multeval and sacreBLEU."""
    return (int(np.sum(statistics > observed)) + 1) / (len(statistics) + 1)


def paired_bootstrap_p_value(baseline_scores: np.ndarray, system_scores: np.ndarray, baseline_score: float,
                             system_score: float) -> float:
    """The paired bootstrap's p-value from the two systems' scores on the same resamples: how often the resampled
    difference, centred on its mean, is at least the observed one (sacreBLEU's and Moses' rule)."""
    differences = np.abs(system_scores - baseline_scores)
    return _p_value(differences - differences.mean(), abs(baseline_score - system_score))


def _paired_scores(baseline_stats: np.ndarray, system_stats: np.ndarray,
                   score: Callable[[np.ndarray], Any]) -> tuple[Any, Any]:
    """The baseline's and the system's corpus scores, once both are known to cover the same examples."""
    if baseline_stats.shape != system_stats.shape:
        raise ValueError(
            f"paired test: the baseline has {baseline_stats.shape[0]} examples and the system "
            f"{system_stats.shape[0]}; both must be scored on the same examples"
        )
    return score(baseline_stats.sum(axis=0)), score(system_stats.sum(axis=0))


def paired_bootstrap_test(baseline_stats: np.ndarray, system_stats: np.ndarray, score: ScoreFn, *,
                          n_samples: int = 1000, seed: int | None = DEFAULT_SEED) -> PairedTestResult:
    """Paired bootstrap resampling (Koehn 2004; Moses' bootstrap-hypothesis-difference-significance.pl)."""
    baseline_score, system_score = _paired_scores(baseline_stats, system_stats, score)
    baseline_scores = bootstrap_scores(baseline_stats, score, n_samples=n_samples, seed=seed)
    system_scores = bootstrap_scores(system_stats, score, n_samples=n_samples, seed=seed)
    p_value = paired_bootstrap_p_value(baseline_scores, system_scores, baseline_score, system_score)
    return PairedTestResult(method="bs", p_value=p_value, system_score=system_score, baseline_score=baseline_score,
                            n_samples=n_samples, seed=seed)


def approximate_randomization_p_values(baseline_stats: np.ndarray, system_stats: np.ndarray,
                                       scores: Callable[[np.ndarray], Sequence[float]], *, n_samples: int = 10000,
                                       seed: int | None = DEFAULT_SEED) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Paired two-sided approximate randomization of several scores of the same statistics at once (the same
    trials for each): the p-values, the baseline's and the system's scores."""
    baseline_scores, system_scores = (np.asarray(values, dtype=np.float64)
                                      for values in _paired_scores(baseline_stats, system_stats, scores))
    rng = np.random.default_rng(seed)
    n_examples = baseline_stats.shape[0]
    differences = np.empty((n_samples, len(baseline_scores)), dtype=np.float64)
    step = max(_BOOL_CHUNK_ROWS, _rows_per_chunk(n_examples) // _BOOL_CHUNK_ROWS * _BOOL_CHUNK_ROWS)
    for start in range(0, n_samples, step):
        rows = min(step, n_samples - start)
        swap = rng.integers(2, size=(rows, n_examples), dtype=bool)
        keep = ~swap
        shuffled_a = weighted_totals(swap, baseline_stats) + weighted_totals(keep, system_stats)
        shuffled_b = weighted_totals(keep, baseline_stats) + weighted_totals(swap, system_stats)
        for offset in range(rows):
            differences[start + offset] = np.abs(np.asarray(scores(shuffled_a[offset]), dtype=np.float64)
                                                 - np.asarray(scores(shuffled_b[offset]), dtype=np.float64))
    observed = np.abs(baseline_scores - system_scores)
    p_values = np.array([_p_value(differences[:, column], observed[column]) for column in range(len(observed))])
    return p_values, baseline_scores, system_scores


def approximate_randomization_test(baseline_stats: np.ndarray, system_stats: np.ndarray, score: ScoreFn, *,
                                   n_samples: int = 10000, seed: int | None = DEFAULT_SEED) -> PairedTestResult:
    """Paired two-sided approximate randomization (Riezler & Maxwell 2005), as in multeval and sacreBLEU."""
    p_values, baseline_scores, system_scores = approximate_randomization_p_values(
        baseline_stats, system_stats, lambda totals: (score(totals),), n_samples=n_samples, seed=seed)
    return PairedTestResult(method="ar", p_value=float(p_values[0]), system_score=float(system_scores[0]),
                            baseline_score=float(baseline_scores[0]), n_samples=n_samples, seed=seed)
