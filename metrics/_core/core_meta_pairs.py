"""Pair counts within groups: what Kendall's tau-b and tau-c, pairwise accuracy and WMT's Kendall-like tau are made of.

Rows belong to groups (an item's systems, a system's items, or one group of every row). Within a group, a pair of
rows is *concordant* when the metric and the humans order it the same way, *discordant* when they order it
oppositely, or tied in the metric, in the human scores, or in both. Every group's counts are exact integers,
computed for all groups at once: sorted by (group, metric, human score), a pair (i < j) is discordant exactly
when the later row has a smaller human score, so the discordant pairs are the inversions of the human ranks,
counted by a bottom-up merge (O(n log^2 n), vectorised); ties are runs of equal values. The coefficients then
repeat ``scipy.stats.kendalltau``'s arithmetic on those counts (tau-b, tau-c), so they equal scipy's.

WMT's Kendall-like tau (WMT17-WMT19 metrics tasks; "daRR") counts only pairs of the same item whose human scores
differ by more than a threshold (25 points of direct assessment); a metric tie counts as discordant.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

_PAIR_CHUNK = 1 << 22  # pairs enumerated at once (bounded memory for large groups)


def dense_ranks(values: np.ndarray) -> np.ndarray:
    """0-based ranks of ``values`` with ties sharing a rank and no gaps."""
    return np.unique(values, return_inverse=True)[1].reshape(-1).astype(np.int64, copy=False)


@dataclass(frozen=True)
class PairCounts:
    """Per group (arrays indexed by group): rows, discordant pairs, pairs tied in the metric, in the human scores
    and in both (the ties of each side include the joint ones, as scipy counts them), and distinct values."""

    rows: np.ndarray
    discordant: np.ndarray
    metric_ties: np.ndarray
    human_ties: np.ndarray
    joint_ties: np.ndarray
    metric_classes: np.ndarray
    human_classes: np.ndarray

    @property
    def pairs(self) -> np.ndarray:
        return self.rows * (self.rows - 1) // 2

    @property
    def concordant(self) -> np.ndarray:
        return self.pairs - self.metric_ties - self.human_ties + self.joint_ties - self.discordant

    @property
    def defined(self) -> np.ndarray:
        """Groups whose tau is defined: a pair, and neither side constant (scipy's NaN otherwise)."""
        pairs = self.pairs
        return (pairs > 0) & (self.metric_ties < pairs) & (self.human_ties < pairs)


def _tie_pairs(groups: np.ndarray, values: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group: pairs of rows with equal ``values`` (integers in [0, n)), and the number of distinct values."""
    width = len(values) + 1
    keys, counts = np.unique(groups * width + values, return_counts=True)
    owner = keys // width
    ties = np.bincount(owner, weights=counts * (counts - 1) // 2, minlength=n_groups)
    return ties.astype(np.int64), np.bincount(owner, minlength=n_groups).astype(np.int64)


def earlier_greater(values: np.ndarray) -> np.ndarray:
    """For each position j, how many positions i < j hold a greater value (``values``: integers in [0, n))."""
    n = len(values)
    counts = np.zeros(n, dtype=np.int64)
    current, position = values.astype(np.int64), np.arange(n)
    index = np.arange(n)
    width = 1
    while width < n:  # ``current`` is sorted within runs of ``width``; merge runs pairwise
        block = index // (2 * width)
        right = index % (2 * width) >= width
        keys = block * n + current
        left_keys = keys[~right]
        block_end = np.searchsorted(left_keys, (block[right] + 1) * n)
        counts[position[right]] += block_end - np.searchsorted(left_keys, keys[right], side="right")
        order = np.argsort(keys, kind="stable")
        current, position = current[order], position[order]
        width *= 2
    return counts


def pair_counts(groups: np.ndarray, n_groups: int, metric: np.ndarray, human: np.ndarray) -> PairCounts:
    """The pair counts of every group (``groups``: integers in [0, n_groups), one per row)."""
    groups = np.asarray(groups, dtype=np.int64)
    metric_ranks, human_ranks = dense_ranks(metric), dense_ranks(human)
    order = np.lexsort((human_ranks, metric_ranks, groups))
    groups, metric_ranks, human_ranks = groups[order], metric_ranks[order], human_ranks[order]
    # sorted by (group, metric, human): the discordant pairs are the inversions of (group, human rank)
    inversions = earlier_greater(dense_ranks(groups * (len(groups) + 1) + human_ranks))
    metric_ties, metric_classes = _tie_pairs(groups, metric_ranks, n_groups)
    human_ties, human_classes = _tie_pairs(groups, human_ranks, n_groups)
    joint_ties, _ = _tie_pairs(groups, dense_ranks(metric_ranks * (len(groups) + 1) + human_ranks), n_groups)
    return PairCounts(
        rows=np.bincount(groups, minlength=n_groups).astype(np.int64),
        discordant=np.bincount(groups, weights=inversions, minlength=n_groups).astype(np.int64),
        metric_ties=metric_ties, human_ties=human_ties, joint_ties=joint_ties,
        metric_classes=metric_classes, human_classes=human_classes,
    )


def kendall_tau_b(counts: PairCounts) -> np.ndarray:
    """Tau-b of each group, as scipy computes it from the same counts; NaN where undefined."""
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = ((counts.concordant - counts.discordant) / np.sqrt(counts.pairs - counts.metric_ties)
               / np.sqrt(counts.pairs - counts.human_ties))
    return np.where(counts.defined, np.clip(tau, -1.0, 1.0), np.nan)


def kendall_tau_c(counts: PairCounts) -> np.ndarray:
    """Stuart's tau-c of each group, as scipy computes it; NaN where undefined."""
    classes = np.minimum(counts.metric_classes, counts.human_classes)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = 2 * (counts.concordant - counts.discordant) / (counts.rows ** 2 * (classes - 1) / classes)
    return np.where(counts.defined, np.clip(tau, -1.0, 1.0), np.nan)


def pairwise_accuracy(counts: PairCounts) -> np.ndarray:
    """Deutsch et al. (2023)'s acc_eq of each group: pairs the metric orders as the humans do, a tie in both
    counting as agreement, over all pairs; NaN for groups without a pair."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts.pairs > 0, (counts.concordant + counts.joint_ties) / counts.pairs, np.nan)


def within_group_pairs(sizes: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Every pair (i, j), i < j, of rows of the same group, for rows sorted by group (``sizes``: rows per group),
    in chunks of about 4 million pairs."""
    sizes = np.asarray(sizes, dtype=np.int64)
    rows = int(sizes.sum())
    starts = np.repeat(np.cumsum(sizes) - sizes, sizes)
    partners = starts + np.repeat(sizes, sizes) - 1 - np.arange(rows)  # later rows of the same group
    ends = np.cumsum(partners)
    first = 0
    while first < rows:
        last = max(int(np.searchsorted(ends, (ends[first - 1] if first else 0) + _PAIR_CHUNK, side="right")),
                   first + 1)
        counts = partners[first:last]
        i = np.repeat(np.arange(first, last), counts)
        offsets = np.arange(len(i)) - np.repeat(np.cumsum(counts) - counts, counts)
        yield i, i + 1 + offsets
        first = last


_PAIRS_PER_ROW = 64  # within-group pairs per row up to which they are listed; beyond, counted in n log^2 n


def darr_counts(groups: np.ndarray, n_groups: int, metric: np.ndarray, human: np.ndarray,
                threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Per group: (concordant, discordant) relative-ranking pairs as WMT17-WMT19 count them. A pair counts when
    its human scores differ by more than ``threshold``; it is concordant when the metric orders it as the humans
    do, discordant otherwise (a metric tie included).

    Groups of a few rows (at most about 128) have their pairs listed; larger ones are counted without listing
    them (:func:`_darr_counted`, O(n log^2 n)), with the same comparisons, so the counts are the same."""
    groups = np.asarray(groups, dtype=np.int64)
    sizes = np.bincount(groups, minlength=n_groups)
    if int((sizes * (sizes - 1) // 2).sum()) > _PAIRS_PER_ROW * max(len(groups), 1):
        return _darr_counted(groups, n_groups, np.asarray(metric), np.asarray(human), threshold)
    return _darr_listed(groups, n_groups, metric, human, threshold)


def _darr_listed(groups: np.ndarray, n_groups: int, metric: np.ndarray, human: np.ndarray,
                 threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`darr_counts` by listing every pair of rows within each group (quadratic in a group's rows)."""
    order = np.argsort(groups, kind="stable")
    groups, metric, human = np.asarray(groups)[order], np.asarray(metric)[order], np.asarray(human)[order]
    concordant = np.zeros(n_groups, dtype=np.int64)
    discordant = np.zeros(n_groups, dtype=np.int64)
    for i, j in within_group_pairs(np.bincount(groups, minlength=n_groups)):
        human_difference = human[i] - human[j]
        kept = np.abs(human_difference) > threshold
        agree = np.sign(metric[i] - metric[j]) == np.sign(human_difference)
        concordant += np.bincount(groups[i], weights=kept & agree, minlength=n_groups).astype(np.int64)
        discordant += np.bincount(groups[i], weights=kept & ~agree, minlength=n_groups).astype(np.int64)
    return concordant, discordant


def _darr_counted(groups: np.ndarray, n_groups: int, metric: np.ndarray, human: np.ndarray,
                  threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`darr_counts` without listing pairs. Rows sorted by (group, human score): a kept pair has a lower row i
    and a higher row p with ``human[p] - human[i] > threshold`` (the float difference, as the listing computes it;
    monotone in ``human[p]``, so the partners of i are a suffix of its group, found by a vectorised binary search).
    It is concordant when also ``metric[p] > metric[i]`` (a metric tie is discordant): the number of such partners
    in that suffix is a dominance count, the inversions of a merged sequence of rows and queries
    (:func:`earlier_greater`)."""
    size = len(groups)
    concordant = np.zeros(n_groups, dtype=np.int64)
    discordant = np.zeros(n_groups, dtype=np.int64)
    if not size:
        return concordant, discordant
    order = np.lexsort((human, groups))
    groups, metric, human = groups[order], metric[order], human[order]
    end = np.searchsorted(groups, groups, side="right")
    # the first partner of each row: the first p of its group with human[p] - human[i] > threshold (else its end)
    low, high = np.arange(size, dtype=np.int64), end.copy()
    active = np.flatnonzero(low < high)
    while len(active):
        middle = (low[active] + high[active]) // 2
        above = (human[middle] - human[active]) > threshold
        high[active[above]] = middle[above]
        low[active[~above]] = middle[~above] + 1
        active = active[low[active] < high[active]]
    first = low
    kept = end - first
    # concordant partners of row i: rows p >= first[i] of its group with a greater metric score; as a value
    # group * (size + 1) + metric rank, every row of a later group is greater, so count the rows p >= first[i] with
    # a greater value, less the rows of later groups (size - end[i]).
    values = groups * np.int64(size + 1) + dense_ranks(metric)
    # Rows and queries in decreasing position, a row at position p before the queries whose suffix starts at p:
    # then the entries before a query are the rows of its suffix (and earlier queries, counted apart).
    keys = np.concatenate((2 * np.arange(size, dtype=np.int64) + 1, 2 * first))
    sequence = np.argsort(-keys, kind="stable")
    merged = np.concatenate((values, values))[sequence]
    is_query = sequence >= size
    greater = earlier_greater(dense_ranks(merged))[is_query]
    among_queries = earlier_greater(dense_ranks(merged[is_query]))
    rows_of_queries = sequence[is_query] - size
    agreeing = np.empty(size, dtype=np.int64)
    agreeing[rows_of_queries] = greater - among_queries - (size - end[rows_of_queries])
    concordant = np.bincount(groups, weights=agreeing, minlength=n_groups).astype(np.int64)
    discordant = np.bincount(groups, weights=kept - agreeing, minlength=n_groups).astype(np.int64)
    return concordant, discordant
