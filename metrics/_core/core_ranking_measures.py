"""trec_eval's per-query measures (recip_rank, map, P, recall, ndcg_cut) for many queries at once, with numpy.

The conventions are trec_eval's; ``core_ranking``'s module docstring lists them with their sources. This
module holds the arithmetic: it never orders a ranking's documents. Only documents with a positive grade matter
to these measures, so each such document's rank is computed directly, as one plus the number of documents of
its query with a higher score (binary searches of all of them at once in the queries' scores, sorted once as
rows of a matrix, or in one sort of all scores when rankings are very uneven), plus, where scores tie, the
number of tied documents with a greater document id (trec_eval breaks ties by document id, descending).
Sums run in trec_eval's order (rank by rank, from 0.0), so per-query values match trec_eval's to the bit
wherever the C library's ``log2`` is the one ``math.log2`` calls.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, compress, repeat
from typing import Any

import numpy as np

from .core_ranking_checks import Flattened, checked_queries, flat_grades, flat_scores

# The measures, by the prefix of their outputs (trec_eval's recip_rank, map, P, recall, ndcg_cut), in statistics order.
MEASURES = ("mrr", "map", "precision", "recall", "ndcg")


@dataclass(frozen=True)
class RankingColumns:
    """Per-query values of the measures asked for (None: not asked for): one entry per query (``precision``,
    ``recall``, ``ndcg``: one column per cut-off); ``judged``: 1 for a query with judgements, 0 for one without
    (trec_eval skips it: every value 0, not counted)."""

    judged: np.ndarray
    recip_rank: np.ndarray | None = None
    average_precision: np.ndarray | None = None
    precision: np.ndarray | None = None
    recall: np.ndarray | None = None
    ndcg: np.ndarray | None = None

    def columns(self) -> list[np.ndarray]:
        """The columns asked for, in statistics order: recip_rank, map, P at each k, recall at each k, ndcg_cut at
        each k."""
        columns = [column for column in (self.recip_rank, self.average_precision) if column is not None]
        for matrix in (self.precision, self.recall, self.ndcg):
            if matrix is not None:
                columns.extend(matrix.T)
        return columns


def _rounded(scores: np.ndarray, precision: str) -> np.ndarray:
    """Scores as trec_eval holds them: C ``float`` (float32, round to nearest) or ``double``."""
    if precision == "float64":
        return scores
    with np.errstate(over="ignore"):
        return scores.astype(np.float32)


# -- ranks ---------------------------------------------------------------------------------------------------


def _counted_below(rows: np.ndarray, values: np.ndarray, queries: np.ndarray, before: np.ufunc) -> np.ndarray:
    """For each value: the entries of its query's sorted row (NaN padding last) with ``before(entry, value)``, a
    prefix of the row, found by a branch-free binary search of all values at once."""
    width = rows.shape[1]
    flat = rows.reshape(-1)
    base = queries * width - 1
    found = np.zeros(len(values), dtype=np.int64)
    step = 1 << (width.bit_length() - 1)
    while step:
        candidate = found + step
        inside = candidate <= width
        found += step * (inside & before(flat[base + np.where(inside, candidate, 1)], values))
        step >>= 1
    return found


def _dense_counts(scores: np.ndarray, lengths: np.ndarray, starts: np.ndarray, width: int,
                  queries: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each (query, score) of a document of the query: documents of the query scored higher, and scored equal,
    by binary searches of each query's row of scores sorted once (rows padded with NaN)."""
    count = len(lengths)
    if int(lengths.min()) == width:
        matrix = scores.reshape(count, width)
    else:
        matrix = np.full((count, width), np.nan, dtype=scores.dtype)
        rows = np.repeat(np.arange(count), lengths)
        matrix[rows, np.arange(len(scores)) - np.repeat(starts, lengths)] = scores
    matrix = np.sort(matrix, axis=1)
    below = _counted_below(matrix, values, queries, np.less)
    # The value is the row's entry after those below it; only where the next entry ties it (or, for a value not in
    # its row, anywhere else) are the entries up to it searched for too.
    flat = matrix.reshape(-1)
    at = queries * width + np.minimum(below, width - 1)
    alone = (flat[at] == values) & ((below + 1 >= width) | (flat[np.minimum(at + 1, len(flat) - 1)] != values))
    at_most = below + 1
    unsure = np.flatnonzero(~alone)
    at_most[unsure] = _counted_below(matrix, values[unsure], queries[unsure], np.less_equal)
    return lengths[queries] - at_most, at_most - below


def _float32_order(values: np.ndarray) -> np.ndarray:
    """Unsigned integers in the order of the float32 ``values`` (-0.0 and 0.0 equal; no NaN)."""
    bits = (values + np.float32(0.0)).view(np.uint32).astype(np.uint64)  # + 0.0 turns -0.0 into 0.0
    return np.where(bits >> np.uint64(31), bits ^ np.uint64(0xFFFFFFFF), bits | np.uint64(0x80000000))


def _sorted_counts(scores: np.ndarray, lengths: np.ndarray, queries: np.ndarray,
                   values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """As ``_dense_counts``, by one sort of (query, score order) keys."""
    owners = np.repeat(np.arange(len(lengths), dtype=np.uint64), lengths)
    if scores.dtype == np.float32:  # the query and the score's order packed in one 64-bit key
        span = np.uint64(1 << 32)
        keys = np.sort(owners * span + _float32_order(scores))
        own = queries.astype(np.uint64) * span + _float32_order(values)
    else:
        distinct, inverse = np.unique(scores, return_inverse=True)
        span = np.uint64(len(distinct) + 1)
        keys = np.sort(owners * span + inverse.reshape(-1).astype(np.uint64))
        own = queries.astype(np.uint64) * span + np.searchsorted(distinct, values).astype(np.uint64)
    below = np.searchsorted(keys, own, side="left")
    above = np.searchsorted(keys, own, side="right")
    ends = np.searchsorted(keys, (queries.astype(np.uint64) + np.uint64(1)) * span, side="left")
    return (ends - above).astype(np.int64), (above - below).astype(np.int64)


def _ranks(scores: np.ndarray, lengths: np.ndarray, queries: np.ndarray, values: np.ndarray,
           document_id: Callable[[int], str], runs: Sequence[Mapping[str, Any]], method: str | None) -> np.ndarray:
    """The 1-based rank of each (query, score, document) in its query's ranking, trec_eval's ties included.
    ``document_id(i)`` is the id of the i-th; it is asked only where scores tie (there the id decides)."""
    if not len(queries):
        return np.zeros(0, dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    width = int(lengths.max())
    if method is None:
        method = "dense" if len(lengths) * width <= 2 * len(scores) + (1 << 16) else "sorted"
    if method == "dense":
        higher, equal = _dense_counts(scores, lengths, starts, width, queries, values)
    else:
        higher, equal = _sorted_counts(scores, lengths, queries, values)
    ranks = higher + 1
    tied = np.flatnonzero(equal > 1)
    rows: dict[int, tuple[np.ndarray, np.ndarray, list[str]]] = {}
    groups: dict[tuple[int, Any], list[str]] = {}
    for position in tied.tolist():
        query = int(queries[position])
        value = values[position]
        group = groups.get((query, value))
        if group is None:
            row = rows.get(query)
            if row is None:  # the query's scores sorted once, so each tie costs a search, not a scan
                begin = int(starts[query])
                order = np.argsort(scores[begin:begin + int(lengths[query])], kind="stable")
                row = rows[query] = (scores[begin + order], order, list(runs[query]))
            ordered, order, ids = row
            low, high = np.searchsorted(ordered, value, side="left"), np.searchsorted(ordered, value, side="right")
            group = groups[(query, value)] = sorted(map(ids.__getitem__, order[low:high].tolist()))
        ranks[position] += len(group) - bisect_right(group, document_id(position))
    return ranks


# -- sums in trec_eval's order -------------------------------------------------------------------------------


def _group_starts(groups: np.ndarray) -> np.ndarray:
    """For each element of a sorted array of group ids, the index where its group begins."""
    if not len(groups):
        return np.zeros(0, dtype=np.int64)
    firsts = np.flatnonzero(np.concatenate(([True], groups[1:] != groups[:-1])))
    return np.repeat(firsts, np.diff(np.append(firsts, len(groups))))


def _order_within(groups: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """The order that sorts by group, then key (both int64; one argsort of a combined key when it fits)."""
    if not len(groups):
        return np.zeros(0, dtype=np.int64)
    low, high = int(keys.min()), int(keys.max())
    span = high - low + 1
    if (int(groups.max()) + 1) * span < 2**62:
        return np.argsort(groups * np.int64(span) + (keys - low))
    return np.lexsort((keys, groups))


_LONG_GROUP = 64


def _running_sums(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Running sums within each group (``groups`` sorted), added one by one from 0.0 as trec_eval adds:
    position by position across all short groups at once, and each long group by ``np.cumsum`` (an
    accumulation, always sequential; only reductions are pairwise)."""
    sums = values.astype(np.float64, copy=True)
    if not len(values):
        return sums
    offsets = np.arange(len(values)) - _group_starts(groups)
    firsts = np.flatnonzero(offsets == 0)
    lengths = np.diff(np.append(firsts, len(values)))
    long = lengths > _LONG_GROUP
    for begin, length in zip(firsts[long].tolist(), lengths[long].tolist()):
        sums[begin:begin + length] = np.cumsum(values[begin:begin + length])
    short = np.flatnonzero(~np.repeat(long, lengths))
    positions = offsets[short]
    order = short[np.argsort(positions.astype(np.uint8), kind="stable")]  # a radix sort: positions < 64
    bounds = np.cumsum(np.bincount(positions))
    for step in range(1, len(bounds)):
        members = order[bounds[step - 1]:bounds[step]]
        sums[members] = sums[members - 1] + values[members]
    return sums


def _log2(positions: np.ndarray) -> np.ndarray:
    """``log2`` of positive integers, by the C library's ``log2`` (what trec_eval calls), once per distinct value."""
    if not len(positions):
        return np.zeros(0, dtype=np.float64)
    largest = int(positions.max())
    if largest <= 4 * len(positions) + 1024:
        return np.array(list(map(math.log2, range(1, largest + 1))), dtype=np.float64)[positions - 1]
    distinct, inverse = np.unique(positions, return_inverse=True)
    return np.array(list(map(math.log2, distinct.tolist())), dtype=np.float64)[inverse.reshape(-1)]


def _at_cutoffs(groups: np.ndarray, ranks: np.ndarray, count: int,
                cutoffs: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Per query (``groups``: sorted, each of ``0 .. count - 1``): where its elements begin, and how many have rank
    <= k for each cut-off k (``cutoffs`` ascending): each element counted once, at the first cut-off it is within."""
    sizes = np.bincount(groups, minlength=count)
    slots = len(cutoffs) + 1
    bounded = np.array([min(int(cutoff), 1 << 62) for cutoff in cutoffs], dtype=np.int64)  # ranks are below
    first = np.searchsorted(bounded, ranks, side="left")
    counts = np.bincount(groups * slots + first, minlength=count * slots).reshape(count, slots)
    return np.cumsum(sizes) - sizes, np.cumsum(counts[:, :-1], axis=1)


def _prefix_values(sums: np.ndarray, begin: np.ndarray, taken: np.ndarray) -> np.ndarray:
    """``sums[begin + taken - 1]`` where ``taken`` > 0, else 0.0 (one column per cut-off)."""
    if not len(sums):
        return np.zeros(taken.shape)
    index = np.maximum(begin[:, None] + taken - 1, 0)
    return np.where(taken > 0, sums[index], 0.0)


def _judged_in_runs(runs: Sequence[Mapping[str, Any]], qrels: Sequence[Mapping[str, Any]], judged: np.ndarray,
                    owners: np.ndarray, checked: bool) -> tuple[Callable[[int], str], np.ndarray]:
    """For the judged documents where ``judged`` (a mask of the flattened qrels; ``owners``: their queries, in
    order): the id of the i-th, and the score of each in its query's run (NaN: not retrieved), as the input check
    found them where it did."""
    if checked and isinstance(qrels, Flattened) and qrels.found is not None:
        ids, positions = qrels.ids, np.flatnonzero(judged)
        return lambda index: ids[positions[index]], qrels.found[judged]
    documents = list(compress(chain.from_iterable(qrels), judged.tolist()))
    owner_runs = list(chain.from_iterable(map(repeat, runs, np.bincount(owners, minlength=len(runs)).tolist())))
    if set(map(type, runs)) <= {dict}:
        lookups = map(dict.get, owner_runs, documents, repeat(math.nan))
    else:
        lookups = (ranking.get(document, math.nan) for ranking, document in zip(owner_runs, documents))
    return documents.__getitem__, np.fromiter(lookups, dtype=np.float64, count=len(documents))


# -- the measures --------------------------------------------------------------------------------------------


def ranking_columns(runs: Any, qrels: Any, cutoffs: Sequence[int], relevance_level: int, score_precision: str,
                    metric: str, method: str | None = None, *, checked: bool = False,
                    measures: Collection[str] = MEASURES) -> RankingColumns:
    """trec_eval's recip_rank, map, P, recall and ndcg_cut of each query (``runs[i]`` ranked against ``qrels[i]``),
    those of ``measures`` only (``MEASURES`` names them), at the ``cutoffs`` (ascending).

    ``method`` forces how ranks are counted (``"dense"`` or ``"sorted"``; None: chosen by cost); tests use it.
    ``checked``: the caller has checked the input (lists of dicts of the same length; string ids, float or int
    scores, none NaN, int grades), so it is not checked again.
    """
    if not checked:
        runs, qrels = checked_queries(metric, runs, qrels)
    count = len(runs)
    lengths, scores = flat_scores(metric, runs, checked=checked)
    scores = _rounded(scores, score_precision)
    judged, grades = flat_grades(metric, qrels, checked=checked)
    owners = np.repeat(np.arange(count, dtype=np.int64), judged)
    computed: dict[str, np.ndarray] = {}

    # nDCG gains every positive grade; the other measures see only the relevant documents (grade >= level >= 1).
    ranked = grades >= (1 if "ndcg" in measures else relevance_level)
    ranked_owners, ranked_grades = owners[ranked], grades[ranked]
    if "ndcg" in measures:  # the ideal ranking: every positive grade of the query, highest first (rel_levels)
        order = _order_within(ranked_owners, -ranked_grades)
        ideal_owners, ideal_grades = ranked_owners[order], ranked_grades[order]
        ideal_positions = np.arange(len(order), dtype=np.int64) - _group_starts(ideal_owners) + 1
        ideal_sums = _running_sums(ideal_grades / _log2(ideal_positions + 1), ideal_owners)
        ideal_begin, ideal_taken = _at_cutoffs(ideal_owners, ideal_positions, count, cutoffs)
        ideal = _prefix_values(ideal_sums, ideal_begin, ideal_taken)

    # The retrieved documents among them, and their ranks, in rank order within each query.
    document, found = _judged_in_runs(runs, qrels, ranked, ranked_owners, checked)
    retrieved = np.flatnonzero(~np.isnan(found))
    queries = ranked_owners[retrieved]
    ranks = _ranks(scores, lengths, queries, _rounded(found[retrieved], score_precision),
                   lambda position: document(int(retrieved[position])), runs, method)
    order = _order_within(queries, ranks)
    queries, ranks, gains = queries[order], ranks[order], ranked_grades[retrieved][order]

    if "ndcg" in measures:  # gain = grade, discount log2(rank + 1); an ideal DCG of 0 leaves the DCG (0)
        dcg_sums = _running_sums(gains / _log2(ranks + 1), queries)
        begin, taken = _at_cutoffs(queries, ranks, count, cutoffs)
        dcg = _prefix_values(dcg_sums, begin, taken)
        computed["ndcg"] = np.divide(dcg, ideal, out=dcg, where=ideal > 0.0)
        relevant = gains >= relevance_level
        queries, ranks = queries[relevant], ranks[relevant]

    # The binary measures: relevant = grade >= relevance_level.
    relevant_count = np.bincount(owners[grades >= relevance_level], minlength=count)
    denominators = np.maximum(relevant_count, 1).astype(np.float64)
    if "precision" in measures or "recall" in measures:
        _, taken = _at_cutoffs(queries, ranks, count, cutoffs)
        if "precision" in measures:
            computed["precision"] = taken / np.asarray(cutoffs, dtype=np.float64)
        if "recall" in measures:
            computed["recall"] = np.where(relevant_count[:, None] > 0, taken / denominators[:, None], 0.0)
    retrieved_relevant = np.bincount(queries, minlength=count)
    begin = np.cumsum(retrieved_relevant) - retrieved_relevant
    found_any = retrieved_relevant > 0
    if "mrr" in measures:
        first_rank = ranks[np.minimum(begin, max(len(ranks) - 1, 0))] if len(ranks) else np.ones(count, np.int64)
        computed["mrr"] = np.where(found_any, 1.0 / np.where(found_any, first_rank, 1), 0.0)
    if "map" in measures:
        positions = np.arange(len(ranks), dtype=np.int64) - begin[queries] + 1
        precision_sums = _running_sums(positions / ranks, queries)
        last = np.maximum(begin + retrieved_relevant - 1, 0)
        computed["map"] = np.where(found_any, (precision_sums[last] if len(ranks) else 0.0) / denominators, 0.0)
    return RankingColumns((judged > 0).astype(np.int64), *map(computed.get, MEASURES))
