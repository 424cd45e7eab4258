"""Runs and qrels (one mapping per query) checked and flattened into numpy arrays, in one pass each.

Errors name the argument and the query index (``runs[3]``), and for a bad value the document
(``runs[3]['doc7']``). Document ids are strings (trec_eval compares them as strings; pytrec_eval requires
them); scores are real numbers, not bool and not NaN (infinities are valid); grades are integers, not bool,
within 64 bits. The checks run over whole columns (the set of the types present), so a valid corpus costs one
C-level pass per check and only an invalid one is searched for the offending entry.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from itertools import chain, islice
from operator import methodcaller
from typing import Any

import numpy as np

from .core_checks import check_list

_VALUES = methodcaller("values")


class Flattened(list):  # type: ignore[type-arg]
    """Checked mappings (one per query: runs' ``{doc_id: score}``, qrels' ``{doc_id: grade}``) with their values as
    the check read them, as one array in query order (float64 scores, int64 grades), so that ``flat_scores`` and
    ``flat_grades`` do not read every value again. Qrels checked together with their runs also hold their
    document ids in that order (``ids``) and each one's score in its query's run, NaN where the run lacks it
    (``found``, float64), read while the check had both in the CPU cache. ``lengths`` (int64, one per query),
    where given, spares asking each mapping its length (mappings made on demand, as from TREC files)."""

    def __init__(self, mappings: list[Mapping[str, Any]], values: np.ndarray, ids: Sequence[str] | None = None,
                 found: np.ndarray | None = None, lengths: np.ndarray | None = None) -> None:
        super().__init__(mappings)
        self.values = values
        self.ids = ids
        self.found = found
        self.lengths = lengths

    def sizes(self) -> np.ndarray:
        """The number of documents of each query (int64)."""
        if self.lengths is not None:
            return self.lengths
        return np.fromiter(map(len, self), dtype=np.int64, count=len(self))


# -- checks --------------------------------------------------------------------------------------------------


def _mappings(metric: str, argument: str, values: Any, what: str) -> list[Any]:
    """``values`` as a list of mappings (one per query), or raise naming the argument and the index."""
    if isinstance(values, Mapping):
        raise TypeError(
            f"{metric}: `{argument}` must be a list with one mapping per query (document id -> {what}), got a "
            f"{type(values).__name__}; to pair a run and qrels keyed by query id, use pair_queries(run, qrels)"
        )
    values = check_list(metric, argument, values, what=f"mappings of document id -> {what}", allow_empty=True)
    for kind in set(map(type, values)):
        if kind is not dict and not issubclass(kind, Mapping):
            index = next(i for i, value in enumerate(values) if type(value) is kind)
            raise TypeError(
                f"{metric}: `{argument}[{index}]` must be a mapping of document id -> {what}, got {kind.__name__} "
                f"({values[index]!r:.60})"
            )
    return values


def _check_document_ids(metric: str, argument: str, mappings: Sequence[Mapping[Any, Any]], ids: Any) -> None:
    """Every document id is a string (trec_eval compares them as strings)."""
    for kind in set(map(type, ids)):
        if not issubclass(kind, str):
            for index, mapping in enumerate(mappings):
                for key in mapping:
                    if type(key) is kind:
                        raise TypeError(
                            f"{metric}: `{argument}[{index}]` has the document id {key!r:.60} of type "
                            f"{kind.__name__}; document ids must be strings (as in TREC files)"
                        )


def _locate(mappings: Sequence[Mapping[Any, Any]], ends: np.ndarray, position: int) -> tuple[int, Any]:
    """The query index and document id of entry ``position`` of the flattened mappings."""
    index = int(np.searchsorted(ends, position, side="right"))
    offset = position - (int(ends[index - 1]) if index else 0)
    return index, next(islice(iter(mappings[index]), offset, None))


def _is_number_type(kind: type) -> bool:
    return issubclass(kind, (numbers.Real, np.integer, np.floating)) and not issubclass(kind, (bool, np.bool_))


def _is_integer_type(kind: type) -> bool:
    return issubclass(kind, (numbers.Integral, np.integer)) and not issubclass(kind, (bool, np.bool_))


def _check_types(metric: str, argument: str, mappings: Sequence[Mapping[str, Any]], flat: list[Any],
                 ends: np.ndarray, usual: set[type], accepts: Callable[[type], bool], what: str) -> None:
    """Raise naming ``argument[i][doc]`` for the first value of ``flat`` whose type ``accepts`` refuses (the
    ``usual`` types are accepted without asking)."""
    kinds = set(map(type, flat))
    if kinds <= usual:
        return
    bad = {kind for kind in kinds if not accepts(kind)}
    if bad:
        position = next(i for i, value in enumerate(flat) if type(value) in bad)
        index, doc = _locate(mappings, ends, position)
        raise TypeError(
            f"{metric}: `{argument}[{index}][{doc!r:.60}]` must be {what}, got {type(flat[position]).__name__} "
            f"({flat[position]!r:.60})"
        )


def _scores(metric: str, runs: Sequence[Mapping[str, Any]], flat: list[Any], ends: np.ndarray) -> np.ndarray:
    """The scores as float64, or raise naming ``runs[i][doc]`` for a non-number or NaN."""
    _check_types(metric, "runs", runs, flat, ends, {float, int}, _is_number_type, "a number (the document's score)")
    try:
        scores = np.fromiter(flat, dtype=np.float64, count=len(flat))
    except (OverflowError, ValueError, TypeError):
        for position, value in enumerate(flat):
            try:
                float(value)
            except (OverflowError, ValueError, TypeError) as error:
                index, doc = _locate(runs, ends, position)
                raise ValueError(
                    f"{metric}: `runs[{index}][{doc!r:.60}]` ({value!r:.60}) cannot be a score: {error}"
                ) from None
        raise
    if scores.size and np.isnan(scores).any():
        index, doc = _locate(runs, ends, int(np.flatnonzero(np.isnan(scores))[0]))
        raise ValueError(
            f"{metric}: `runs[{index}][{doc!r:.60}]` is NaN; every score must be a number (NaN has no place in "
            f"a ranking)"
        )
    return scores


def _grades(metric: str, qrels: Sequence[Mapping[str, Any]], flat: list[Any], ends: np.ndarray,
            checked: bool) -> np.ndarray:
    """The relevance grades as int64, or raise naming ``qrels[i][doc]`` for a non-integer or one beyond 64 bits."""
    if not checked:
        _check_types(metric, "qrels", qrels, flat, ends, {int}, _is_integer_type, "an integer relevance grade")
    try:
        return np.array(flat, dtype=np.int64)
    except OverflowError:
        position = next(i for i, value in enumerate(flat) if not -(2**63) <= int(value) < 2**63)
        index, doc = _locate(qrels, ends, position)
        raise ValueError(
            f"{metric}: `qrels[{index}][{doc!r:.60}]` = {flat[position]} is out of range for a relevance grade "
            f"(a 64-bit integer)"
        ) from None


def checked_queries(metric: str, runs: Any, qrels: Any) -> tuple[list[Any], list[Any]]:
    """``runs`` and ``qrels`` as lists of mappings of the same length."""
    runs = _mappings(metric, "runs", runs, "score")
    qrels = _mappings(metric, "qrels", qrels, "relevance grade")
    if len(runs) != len(qrels):
        raise ValueError(
            f"{metric}: got {len(runs)} runs but {len(qrels)} qrels; pass one of each per query "
            f"(pair_queries(run, qrels) pairs mappings keyed by query id)"
        )
    return runs, qrels


def flat_scores(metric: str, runs: Sequence[Mapping[str, Any]], *,
                checked: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(documents per query, every score as float64 in query order), the document ids and scores checked unless
    ``checked`` says a caller did (string ids; float or int scores, none NaN)."""
    if checked and isinstance(runs, Flattened):
        return runs.sizes(), runs.values
    lengths = np.fromiter(map(len, runs), dtype=np.int64, count=len(runs))
    if checked:
        return lengths, np.fromiter(chain.from_iterable(map(_VALUES, runs)), dtype=np.float64, count=int(lengths.sum()))
    _check_document_ids(metric, "runs", runs, chain.from_iterable(runs))
    flat = list(chain.from_iterable(map(_VALUES, runs)))
    return lengths, _scores(metric, runs, flat, np.cumsum(lengths))


def flat_grades(metric: str, qrels: Sequence[Mapping[str, Any]], *,
                checked: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(judged documents per query, their grades as int64), in query order; the document ids and grade types
    checked unless ``checked`` says a caller did (string ids, int grades)."""
    if checked and isinstance(qrels, Flattened):
        return qrels.sizes(), qrels.values
    judged = np.fromiter(map(len, qrels), dtype=np.int64, count=len(qrels))
    if not checked:
        _check_document_ids(metric, "qrels", qrels, chain.from_iterable(qrels))
    flat = list(chain.from_iterable(map(_VALUES, qrels)))
    return judged, _grades(metric, qrels, flat, np.cumsum(judged), checked)
