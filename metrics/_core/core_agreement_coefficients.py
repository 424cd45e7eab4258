"""Agreement coefficients as functions of sums of per-item statistics, with the oracles' arithmetic.

Each coefficient is built as an :class:`ItemStatistics`: a few numbers per item (a sparse items x columns matrix)
and the coefficient as a function of their column sums. The sums over every item give the corpus value; sums
weighted by how often a bootstrap resample draws each item give that resample's value, so the point estimate and
the bootstrap share one path.

- Krippendorff's alpha (Krippendorff 2011; the ``krippendorff`` package): an item u with m_u >= 2 ratings, n_uc
  of them label c, adds n_uc n_uk / (m_u - 1) to the coincidence o_ck (c != k) and n_uc to the marginal n_c;
  alpha = 1 - (n - 1) sum o_ck d_ck / sum_{c != k} n_c n_k d_ck with the level's distance d (nominal 1; interval
  (c - k)^2; ratio ((c - k) / (c + k))^2; ordinal (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2, the squared difference
  of the two labels' mid-ranks, which depend on the marginals). An item's disagreement sum_{c != k} n_uc n_uk d_ck
  / (m_u - 1) is computed without listing its pairs of labels where the distance allows: nominal's is (m_u^2 -
  sum_c n_uc^2) / (m_u - 1), interval's 2 m_u / (m_u - 1) sum_c n_uc (c - mean_u)^2 (a weighted variance), ordinal's
  the same on mid-ranks; ratio's sums over its pairs of distinct labels, a block at a time. Nominal, interval and
  ratio give one number per item; ordinal's mid-ranks depend on the marginals of the items a resample draws, so
  its statistics are the items' draw counts themselves and the value is computed from each resample's draws. The
  expected disagreement is in closed form for nominal, interval and ordinal (interval's on mid-ranks); ratio's
  sums over pairs of distinct labels, a block at a time. Items with one rating have nothing to pair and are left
  out (the package's zero rows).
- Fleiss' kappa (Fleiss 1971; statsmodels' ``fleiss_kappa``): m ratings per item; per item its category counts
  and P_u = (sum_c n_uc^2 - m) / (m (m - 1)); kappa = (mean P_u - sum p_c^2) / (1 - sum p_c^2).
- Cohen's kappa (Cohen 1960; scikit-learn's ``cohen_kappa_score``): two annotators; per item the cell of its
  (first annotator's label, second's) in the confusion matrix; weights by label position (|i - j| or (i - j)^2);
  the chance term sum_ij w_ij a_i b_j of the two annotators' label counts in closed form.
- Percentage agreement: per item with m_u >= 2 ratings, the share of its m_u (m_u - 1) ordered pairs of ratings
  (by different annotators) that agree; the mean over those items.

A score of a resample without any chance disagreement (a single label) is NaN; the corpus value is then
undefined, which the caller reports.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

import numpy as np

from .core_agreement_table import RatingTable

_BLOCK_ELEMENTS = 1 << 22  # floats of one block of resampled sums or of a distance matrix


@dataclass(frozen=True)
class ItemStatistics:
    """One coefficient's statistics of each item, given by the entries (row = item, column, value) of a sparse
    items x columns matrix, and the coefficient as a function of column sums."""

    rows: np.ndarray
    columns: np.ndarray
    values: np.ndarray
    shape: tuple[int, int]
    score: Callable[[np.ndarray], float]

    def totals(self) -> np.ndarray:
        """Column sums over every item."""
        return np.bincount(self.columns, weights=self.values, minlength=self.shape[1])

    def value(self) -> float:
        """The coefficient of the corpus (NaN where it is undefined)."""
        return self.score(self.totals())

    @property
    def size(self) -> int:
        """The number of items (what the bootstrap resamples)."""
        return self.shape[0]

    def resampled_scores(self, weights: np.ndarray) -> Iterator[float]:
        """The coefficient for each row of ``weights`` (how often a resample draws each item)."""
        return (self.score(sums) for sums in self.resampled_totals(weights))

    def resampled_totals(self, weights: np.ndarray) -> Iterator[np.ndarray]:
        """Column sums for each row of ``weights`` (how often a resample draws each item), in blocks of bounded
        memory."""
        order = np.argsort(self.columns, kind="stable")
        columns, rows, values = self.columns[order], self.rows[order], self.values[order]
        present, starts = np.unique(columns, return_index=True)
        step = max(1, _BLOCK_ELEMENTS // max(len(values), self.shape[1], 1))
        for start in range(0, len(weights), step):
            block = weights[start:start + step]
            sums = np.zeros((len(block), self.shape[1]))
            if len(values):
                sums[:, present] = np.add.reduceat(block[:, rows] * values, starts, axis=1)
            yield from sums


def _statistics(shape: tuple[int, int], score: Callable[[np.ndarray], float],
                *entries: tuple[np.ndarray, np.ndarray | int, np.ndarray | float]) -> ItemStatistics:
    """Statistics from groups of (rows, columns, values) entries (a scalar column or value applies to every row)."""
    rows = [np.asarray(group_rows, dtype=np.int64) for group_rows, _, _ in entries]
    columns = [np.broadcast_to(np.asarray(column, dtype=np.int64), len(group)) for group, (_, column, _)
               in zip(rows, entries, strict=True)]
    values = [np.broadcast_to(np.asarray(value, dtype=np.float64), len(group)) for group, (_, _, value)
              in zip(rows, entries, strict=True)]
    return ItemStatistics(np.concatenate(rows), np.concatenate(columns), np.concatenate(values), shape, score)


def pairs_within_items(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(left, right) positions of every pair of entries of one item, left < right, for entries sorted by row."""
    size = len(rows)
    ends = np.searchsorted(rows, rows, side="right")
    after = ends - np.arange(size) - 1
    left = np.repeat(np.arange(size), after)
    offsets = np.arange(len(left)) - np.repeat(np.cumsum(after) - after, after)
    return left, left + 1 + offsets


def pair_count(rows: np.ndarray) -> int:
    """The number of pairs :func:`pairs_within_items` lists for entries sorted by row."""
    sizes = np.bincount(rows) if len(rows) else np.zeros(0, dtype=np.int64)
    return int((sizes * (sizes - 1) // 2).sum())


def _blocked_sum(weights: np.ndarray, distance: Callable[[slice], np.ndarray]) -> float:
    """sum_{c, k} w_c w_k d_ck, the rows of d made ``distance(rows)`` a block at a time."""
    step = max(1, _BLOCK_ELEMENTS // max(len(weights), 1))
    total = 0.0
    for start in range(0, len(weights), step):
        rows = slice(start, start + step)
        total += float(weights[rows] @ distance(rows) @ weights)
    return total


# -- Krippendorff's alpha ----------------------------------------------------------------------------------------


def _alpha(observed: float, expected: float, total: float) -> float:
    """1 - sum(o d) / sum(e d), e = (n_c n_k - [c = k] n_c) / (n - 1) (the krippendorff package's last line)."""
    if not expected > 0:
        return float("nan")
    return float(1 - observed / (expected / (total - 1)))


def _nominal_expected(marginals: np.ndarray, numbers: np.ndarray | None) -> float:
    total = marginals.sum()
    return float(total * total - marginals @ marginals)


def _interval_expected(marginals: np.ndarray, numbers: np.ndarray) -> float:
    total = marginals.sum()
    mean = (marginals @ numbers) / total
    return float(2 * total * (marginals @ (numbers - mean) ** 2))


def _ratio_distances(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """((c - k) / (c + k))^2, elementwise (0 where both are 0)."""
    sums = first + second
    return np.divide(first - second, sums, out=np.zeros(np.broadcast(first, second).shape), where=sums != 0) ** 2


def _ratio_expected(marginals: np.ndarray, numbers: np.ndarray) -> float:
    return _blocked_sum(marginals, lambda rows: _ratio_distances(numbers[rows, None], numbers[None, :]))


_EXPECTED = {"nominal": _nominal_expected, "interval": _interval_expected, "ratio": _ratio_expected}


def _fixed_alpha(totals: np.ndarray, *, width: int, level: str, numbers: np.ndarray) -> float:
    marginals = totals[:width]
    return _alpha(totals[width], _EXPECTED[level](marginals, numbers), marginals.sum())


def midranks(marginals: np.ndarray) -> np.ndarray:
    """Each label's mid-rank among the pairable values: the values below it plus half its own. Krippendorff's ordinal
    distance of c < k, (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2, is the squared difference of their mid-ranks."""
    return np.cumsum(marginals) - marginals / 2


def _spread(rows: np.ndarray, counts: np.ndarray, values: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Per item, sum_{c, k} n_uc n_uk (x_c - x_k)^2 / (m_u - 1) = 2 m_u / (m_u - 1) sum_c n_uc (x_c - mean_u)^2
    (entries (row, count, value x) sorted by row; every item has m_u >= 2 ratings)."""
    means = np.bincount(rows, weights=counts * values, minlength=len(sizes)) / sizes
    squares = np.bincount(rows, weights=counts * (values - means[rows]) ** 2, minlength=len(sizes))
    return 2 * sizes / (sizes - 1.0) * squares


def _ratio_disagreement(rows: np.ndarray, counts: np.ndarray, numbers: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Per item, sum_{c != k} n_uc n_uk d_ck / (m_u - 1) with ratio's distance, over its pairs of distinct labels a
    block of pairs at a time (entries (row, count, number) sorted by row)."""
    disagreement = np.zeros(len(sizes))
    per_row = np.bincount(rows, minlength=len(sizes)) if len(rows) else np.zeros(len(sizes), dtype=np.int64)
    bounds = np.concatenate(([0], np.cumsum(per_row)))
    pairs = per_row * (per_row - 1) // 2
    start = 0
    while start < len(sizes):  # a run of items with at most about _BLOCK_ELEMENTS pairs (or one item)
        end = start + 1
        total = pairs[start]
        while end < len(sizes) and total + pairs[end] <= _BLOCK_ELEMENTS:
            total += pairs[end]
            end += 1
        first, last = bounds[start], bounds[end]
        block_rows = rows[first:last]
        if pairs[start] <= _BLOCK_ELEMENTS:
            left, right = pairs_within_items(block_rows)
            left, right = left + first, right + first
            weights = 2 * counts[left] * counts[right] * _ratio_distances(numbers[left], numbers[right])
            disagreement += np.bincount(rows[left], weights=weights, minlength=len(sizes))
        else:  # one item with many distinct labels: a block of its labels against all of them at a time
            item_counts, item_numbers = counts[first:last].astype(np.float64), numbers[first:last]
            disagreement[start] = _blocked_sum(item_counts, lambda part: _ratio_distances(
                item_numbers[part, None], item_numbers[None, :]))
        start = end
    return disagreement / (sizes - 1.0)


def _ordinal_alpha(draws: np.ndarray, *, rows: np.ndarray, values: np.ndarray, counts: np.ndarray,
                   sizes: np.ndarray, width: int) -> float:
    """Ordinal alpha of the items drawn ``draws`` times each: the mid-ranks of the drawn marginals, then each item's
    spread of mid-ranks (:func:`_spread`), weighted by its draws."""
    marginals = np.bincount(values, weights=draws[rows] * counts, minlength=width)
    ranks = midranks(marginals)
    observed = float(draws @ _spread(rows, counts, ranks[values], sizes))
    return _alpha(observed, _interval_expected(marginals, ranks), marginals.sum())


def alpha_pairs(table: RatingTable, level: str) -> tuple[int, int]:
    """The pairs of labels alpha compares one by one at ``level``: ratio's pairs of distinct labels within items
    (the observed disagreement, once), and of the distinct labels (the expected disagreement, for the corpus and for
    each resample); none at the other levels, computed in closed form."""
    if level != "ratio":
        return 0, 0
    rows, _, _, _ = table.value_counts(table.pairable())
    return pair_count(rows), len(table.values) * (len(table.values) + 1) // 2


def krippendorff_alpha(table: RatingTable, level: str) -> ItemStatistics:
    """Alpha's statistics of the items with two or more ratings: label marginals and the item's disagreement
    (nominal, interval, ratio), or the item's draw count (ordinal, whose value is computed from the draws)."""
    positions = table.pairable()
    rows, values, counts, sizes = table.value_counts(positions)
    width = len(table.values)
    every = np.arange(len(positions))
    if level == "ordinal":
        score = partial(_ordinal_alpha, rows=rows, values=values, counts=counts.astype(np.float64), sizes=sizes,
                        width=width)
        return _statistics((len(positions), len(positions)), score, (every, every, 1.0))
    if level == "nominal":
        numbers = np.zeros(width)
        squares = np.bincount(rows, weights=counts * counts, minlength=len(positions))
        disagreement = (sizes * sizes - squares) / (sizes - 1.0)
    else:
        numbers = np.asarray(table.values, dtype=np.float64)
        if level == "interval":
            disagreement = _spread(rows, counts, numbers[values], sizes)
        else:
            disagreement = _ratio_disagreement(rows, counts.astype(np.float64), numbers[values], sizes)
    score = partial(_fixed_alpha, width=width, level=level, numbers=numbers)
    return _statistics((len(positions), width + 1), score, (rows, values, counts), (every, width, disagreement))


# -- Fleiss' kappa -------------------------------------------------------------------------------------------------


def _fleiss(totals: np.ndarray, *, width: int) -> float:
    counts = totals[:width]
    if np.count_nonzero(counts) < 2:
        return float("nan")
    categories = counts / counts.sum()
    chance = (categories * categories).sum()
    return float((totals[width] / totals[width + 1] - chance) / (1 - chance))


def fleiss_kappa(table: RatingTable, ratings_per_item: int) -> ItemStatistics:
    """Fleiss' statistics of every item (each with ``ratings_per_item`` ratings): category counts, P_u, 1."""
    size = ratings_per_item
    positions = range(len(table.items))
    rows, values, counts, _ = table.value_counts(positions)
    width = len(table.values)
    agreement = (np.bincount(rows, weights=counts * counts, minlength=len(positions)) - size) / (size * (size - 1.0))
    every = np.arange(len(positions))
    return _statistics((len(positions), width + 2), partial(_fleiss, width=width), (rows, values, counts),
                       (every, width, agreement), (every, width + 1, 1.0))


# -- Cohen's kappa --------------------------------------------------------------------------------------------------


def _cell_weights(first: np.ndarray, second: np.ndarray, weights: str | None) -> np.ndarray:
    """scikit-learn's weight of each confusion cell (label positions i, j): [i != j], |i - j| or (i - j)^2."""
    if weights is None:
        return (first != second).astype(np.float64)
    distance = np.abs(first - second).astype(np.float64)
    return distance if weights == "linear" else distance**2


def chance_disagreement(first: np.ndarray, second: np.ndarray, weights: str | None) -> float:
    """sum_{i, j} w_ij first_i second_j of two label distributions (counts by position), in closed form (no labels x
    labels matrix): unweighted, linear |i - j| or quadratic (i - j)^2."""
    positions = np.arange(len(first), dtype=np.float64)
    if weights is None:
        return float(first.sum() * second.sum() - first @ second)
    if weights == "quadratic":
        return float(first.sum() * (second @ positions**2) + second.sum() * (first @ positions**2)
                     - 2 * (first @ positions) * (second @ positions))
    below, moment = np.cumsum(second), np.cumsum(second * positions)  # sum_{j <= i} second_j, and of j second_j
    distances = positions * below - moment + (moment[-1] - moment) - positions * (below[-1] - below)
    return float(first @ distances)


def _cohen(totals: np.ndarray, *, width: int, first: np.ndarray, second: np.ndarray, cells: np.ndarray,
           weights: str | None) -> float:
    """1 - sum(w * confusion) / sum(w * expected), expected = outer(marginals) / n (scikit-learn's last lines)."""
    chance = chance_disagreement(np.bincount(first, weights=totals, minlength=width),
                                 np.bincount(second, weights=totals, minlength=width), weights)
    if not chance > 0:
        return float("nan")
    return float(1 - (totals @ cells) / (chance / totals.sum()))


def cohen_kappa(table: RatingTable, weights: str | None) -> ItemStatistics:
    """Cohen's statistics of every item (rated by both of the two annotators): its confusion-matrix cell."""
    width = len(table.values)
    first, second = table.annotators
    cells = np.array([ratings[first] * width + ratings[second] for ratings in table.ratings], dtype=np.int64)
    keys, columns = np.unique(cells, return_inverse=True)
    first_labels, second_labels = keys // width, keys % width
    score = partial(_cohen, width=width, first=first_labels, second=second_labels, weights=weights,
                    cells=_cell_weights(first_labels, second_labels, weights))
    return _statistics((len(cells), len(keys)), score, (np.arange(len(cells)), columns, 1.0))


# -- percentage agreement ----------------------------------------------------------------------------------------


def _share(totals: np.ndarray) -> float:
    return float(totals[0] / totals[1])


def percent_agreement(table: RatingTable) -> ItemStatistics:
    """Per item with two or more ratings: the share of its ordered pairs of ratings that agree, and 1."""
    positions = table.pairable()
    rows, _, counts, sizes = table.value_counts(positions)
    agreeing = np.bincount(rows, weights=counts * (counts - 1), minlength=len(positions))
    every = np.arange(len(positions))
    return _statistics((len(positions), 2), _share, (every, 0, agreeing / (sizes * (sizes - 1))), (every, 1, 1.0))
