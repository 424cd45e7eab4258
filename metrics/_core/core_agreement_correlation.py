"""Correlation-based inter-annotator agreement, as dialogue-evaluation papers report it.

Two families, each with Pearson's r or Spearman's rho, from the same (item, annotator, label) ratings as the
coefficients of :mod:`core_agreement_coefficients`:

- **pairwise**: for every pair of annotators, the correlation of their labels over the items both rated; the
  plain mean over the pairs whose correlation is defined (USR's Table 1, Mehri & Eskenazi 2020, is this mean of
  Spearman's rho over the three rating *positions* of its annotation: pass positions as ``annotators``);
- **leave-one-out**: for every annotator, the correlation of their labels with the mean of the other annotators'
  labels of the same items (over the items they rated that someone else rated too); the plain mean over the
  annotators whose correlation is defined.

A pair or annotator with fewer than two items, or whose labels (or the others' means) are constant on them, has no
correlation: it is left out of the mean (a warning names how many were, for the constant ones) and the counts say
how many were kept; with none kept the coefficient is undefined, an error.

All the correlations of one coefficient are computed at once, grouped (one group per pair or annotator) with
numpy: Pearson's r from centred sums within each group, Spearman's rho as Pearson's r of average ranks within each
group (ties share the mean of their ranks, as ``scipy.stats.rankdata``). The values equal ``scipy.stats.pearsonr``
and ``spearmanr`` on each group's labels to rounding (1e-15); Pearson of two items is exactly +-1, as scipy's.

Bootstrap resamples draw the items with two or more ratings (the same draws as alpha's): an item drawn k times
brings its ratings k times, so every group's rows repeat with it, and the correlations are computed again on the
repeated rows (repeated rows tie, as they would in scipy on the resampled table).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .core_agreement_coefficients import pairs_within_items
from .core_agreement_table import RatingTable

CORRELATIONS = {
    "pairwise_spearman": ("pairwise", "spearman"), "pairwise_pearson": ("pairwise", "pearson"),
    "leave_one_out_spearman": ("leave_one_out", "spearman"), "leave_one_out_pearson": ("leave_one_out", "pearson"),
}
COUNTS = {"pairwise": "num_correlated_pairs", "leave_one_out": "num_correlated_annotators"}


def _group_bounds(groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The order that sorts the rows by group (stable), and whether each sorted row starts its group."""
    order = np.argsort(groups, kind="stable")
    return order, np.concatenate(([True], groups[order][1:] != groups[order][:-1]))


def grouped_average_ranks(groups: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each row's rank among the rows of its group, from 1, tied values sharing the mean of their ranks
    (``scipy.stats.rankdata(method="average")`` within every group)."""
    size = len(values)
    if not size:
        return np.zeros(0)
    order = np.lexsort((values, groups))
    sorted_groups, sorted_values = groups[order], values[order]
    positions = np.arange(size)
    new_group = np.concatenate(([True], sorted_groups[1:] != sorted_groups[:-1]))
    new_run = new_group | np.concatenate(([True], sorted_values[1:] != sorted_values[:-1]))
    group_start = np.maximum.accumulate(np.where(new_group, positions, 0))
    run_start = np.maximum.accumulate(np.where(new_run, positions, 0))
    run_ends = np.append(np.flatnonzero(new_run)[1:], size)  # one past each run's last row, by run
    run_end = run_ends[np.cumsum(new_run) - 1]
    ranks = np.empty(size)
    ranks[order] = (run_start - group_start) + (run_end - run_start + 1) / 2
    return ranks


def grouped_correlation(groups: np.ndarray, n_groups: int, x: np.ndarray, y: np.ndarray,
                        kind: str) -> np.ndarray:
    """Pearson's r (``kind="pearson"``) or Spearman's rho (``"spearman"``) of x and y within each group, NaN for a
    group with fewer than two rows or a constant side."""
    if kind == "spearman":
        x, y = grouped_average_ranks(groups, x), grouped_average_ranks(groups, y)
    counts = np.bincount(groups, minlength=n_groups)
    result = np.full(n_groups, np.nan)
    if not len(x):
        return result
    with np.errstate(invalid="ignore", divide="ignore"):
        centred_x = x - (np.bincount(groups, weights=x, minlength=n_groups) / counts)[groups]
        centred_y = y - (np.bincount(groups, weights=y, minlength=n_groups) / counts)[groups]
        xx = np.bincount(groups, weights=centred_x * centred_x, minlength=n_groups)
        yy = np.bincount(groups, weights=centred_y * centred_y, minlength=n_groups)
        xy = np.bincount(groups, weights=centred_x * centred_y, minlength=n_groups)
        r = np.clip(xy / np.sqrt(xx) / np.sqrt(yy), -1.0, 1.0)
    order, starts = _group_bounds(groups)
    first = np.flatnonzero(starts)
    both_vary = np.ones(len(first), dtype=bool)
    for values in (x, y):
        ordered = values[order]
        both_vary &= np.minimum.reduceat(ordered, first) < np.maximum.reduceat(ordered, first)
    varies = np.zeros(n_groups, dtype=bool)
    varies[groups[order][starts]] = both_vary
    defined = (counts >= 2) & varies
    if kind == "pearson":
        r = np.where(counts == 2, np.sign(r), r)  # scipy's pearsonr is exactly +-1 for two pairs
    result[defined] = r[defined]
    return result


@dataclass(frozen=True)
class CorrelationAgreement:
    """One correlation coefficient's rows: for each row, its group (an annotator pair, or an annotator), the item
    (position among the items with two or more ratings, which the bootstrap draws) and the two values correlated."""

    groups: np.ndarray
    items: np.ndarray
    x: np.ndarray
    y: np.ndarray
    n_groups: int
    size: int  # items with two or more ratings
    kind: str

    def group_values(self) -> np.ndarray:
        """Each group's correlation (NaN where undefined)."""
        return grouped_correlation(self.groups, self.n_groups, self.x, self.y, self.kind)

    def value(self) -> float:
        """The mean of the defined correlations (NaN if none is defined)."""
        return _mean_defined(self.group_values())

    def resampled_scores(self, weights: np.ndarray) -> Iterator[float]:
        """The coefficient for each row of ``weights`` (how often a resample draws each item)."""
        for draw in weights:
            rows = np.repeat(np.arange(len(self.groups)), draw[self.items])
            yield _mean_defined(grouped_correlation(self.groups[rows], self.n_groups, self.x[rows], self.y[rows],
                                                    self.kind))


def _mean_defined(values: np.ndarray) -> float:
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if len(defined) else float("nan")


def _entries(table: RatingTable, numbers: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every rating of the items with two or more ratings: (item position among them, annotator index, value), sorted
    by item then annotator id; and each item's number of ratings."""
    positions = table.pairable()
    annotator_index = {annotator: index for index, annotator in enumerate(table.annotators)}
    sizes = np.fromiter((len(table.ratings[position]) for position in positions), dtype=np.int64,
                        count=len(positions))
    items = np.repeat(np.arange(len(positions), dtype=np.int64), sizes)
    annotators = np.fromiter((annotator_index[annotator] for position in positions
                              for annotator in table.ratings[position]), dtype=np.int64, count=len(items))
    labels = np.fromiter((label for position in positions for label in table.ratings[position].values()),
                         dtype=np.int64, count=len(items))
    return items, annotators, numbers[labels], sizes


_EXACT = 2.0 ** 40  # integer labels this small sum exactly in any order


def _means_of_others(items: np.ndarray, values: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """For every rating, the mean of the other ratings of its item, correctly rounded (so two ratings whose others
    hold the same labels get the same mean, bit for bit, and tie as they should for Spearman's rho)."""
    if np.all(values == np.round(values)) and np.all(np.abs(values) < _EXACT):  # integer sums are exact
        totals = np.bincount(items, weights=values, minlength=len(sizes))
        return (totals[items] - values) / (sizes[items] - 1)
    bounds = np.concatenate(([0], np.cumsum(sizes)))
    others = np.empty(len(values))
    listed = values.tolist()
    for start, end in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        others[start:end] = [total / (end - start - 1) for total in _sums_of_others(listed[start:end])]
    return others


def _sums_of_others(values: list[float]) -> list[float]:
    """For each value, ``math.fsum`` of the others (the correctly rounded sum), in linear time: the values as
    integers over a common power of two, whose exact total less each one is divided back correctly rounded (Python's
    integer true division rounds correctly, as fsum does)."""
    ratios = [value.as_integer_ratio() for value in values]
    scale = max(denominator for _, denominator in ratios)  # each denominator is a power of two
    integers = [numerator * (scale // denominator) for numerator, denominator in ratios]
    total = sum(integers)
    return [(total - integer) / scale for integer in integers]


def correlation_agreement(table: RatingTable, numbers: np.ndarray, family: str,
                          kind: str) -> tuple[CorrelationAgreement, list[tuple[str, ...]]]:
    """The rows of a correlation coefficient (``family``: "pairwise" or "leave_one_out"; ``kind``: "pearson" or
    "spearman"), the labels read as ``numbers`` (one per label position), and the name of each group (an annotator
    pair, or an annotator)."""
    items, annotators, values, sizes = _entries(table, numbers)
    if family == "pairwise":
        left, right = pairs_within_items(items)
        keys, groups = np.unique(annotators[left] * len(table.annotators) + annotators[right], return_inverse=True)
        names = [(table.annotators[key // len(table.annotators)], table.annotators[key % len(table.annotators)])
                 for key in keys.tolist()]
        rows = CorrelationAgreement(groups.reshape(-1).astype(np.int64), items[left], values[left], values[right],
                                    len(keys), len(sizes), kind)
        return rows, names
    others = _means_of_others(items, values, sizes)
    rows = CorrelationAgreement(annotators, items, values, others, len(table.annotators), len(sizes), kind)
    return rows, [(annotator,) for annotator in table.annotators]
