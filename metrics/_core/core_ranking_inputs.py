"""The input kind of ranking metrics: one query per example, its run and its relevance judgements.

``predictions[i]`` is the run of query ``i``: a mapping from document id to
retrieval score (trec_eval orders by score, highest first), or a list of
document ids ranked best first (scores ``n, n-1, ..., 1`` are implied), or the
normalised form ``{"ids": [...], "scores": [...]}``. ``references[i]`` is the
query's qrels: a mapping from document id to relevance grade (an integer;
grades below ``relevance_level`` are not relevant, negative grades included),
or a list of relevant document ids (grade 1 each), or ``{"ids": [...],
"grades": [...]}``. Document ids are strings (integers are taken as their
decimal strings); scores are numbers (infinities allowed, NaN not), held as float64.

A checked batch holds every run as a dict ``{doc_id: score}`` and every qrels as a dict ``{doc_id: grade}``
(what the scorer reads; a valid plain dict is kept as it is, not copied); evaluate's cache holds them in the
form of the features, ``{"ids": [...], "scores": [...]}``, which the same check turns back into dicts.
Valid input is checked in whole-column passes; only input that fails them goes through the per-document
checks, whose errors name the argument, the query and the document. Runs and qrels given as lists are checked
together, a block of whole queries (about 4,096 run documents) at a time, so that each pass over a block finds
its documents still in the CPU cache; the judged documents' scores are looked up in their runs then, and the checked qrels carry them to the
scorer (``Flattened.found``).

An example whose qrels are empty is a query without judgements: trec_eval
skips such a query (it is not an error and does not count in the means). A run
may be empty (nothing retrieved: every measure is 0 when the query has
relevant documents).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from itertools import chain, repeat
from operator import methodcaller
from typing import Any

import numpy as np

from .core_checks import check_encodable, check_id, check_list, check_same_length
from .core_inputs import Columns, InputKind
from .core_process import garbage_collection_paused
from .core_ranking_checks import Flattened

_VALUES = methodcaller("values")
_RUN_SHAPE = "run: {doc_id: score}, a ranked list of doc ids, or {'ids': [...], 'scores': [...]}"
_QRELS_SHAPE = "qrels: {doc_id: grade}, a list of relevant doc ids, or {'ids': [...], 'grades': [...]}"
_RUNS = f"runs (one per query; a {_RUN_SHAPE})"


def _features(config_name: str) -> Any:
    import datasets

    return datasets.Features({
        "predictions": {"ids": datasets.Sequence(datasets.Value("string")),
                        "scores": datasets.Sequence(datasets.Value("float64"))},
        "references": {"ids": datasets.Sequence(datasets.Value("string")),
                       "grades": datasets.Sequence(datasets.Value("int64"))},
    })


def _score(metric: str, argument: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{metric}: `{argument}` must be a number (a retrieval score), got {type(value).__name__} "
                        f"({value!r:.60})")
    try:
        value = float(value)
    except OverflowError:
        raise ValueError(f"{metric}: `{argument}` is too large for a retrieval score (beyond a float's "
                         f"range)") from None
    if math.isnan(value):
        raise ValueError(f"{metric}: `{argument}` is NaN; a retrieval score must be a number (trec_eval's order of "
                         f"NaN scores is undefined)")
    return value


def _grade(metric: str, argument: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{metric}: `{argument}` must be an integer relevance grade, got {type(value).__name__} "
                        f"({value!r:.60})")
    return int(value)


def _pairs(metric: str, argument: str, value: Any, values_key: str, shape: str,
           implied: Any) -> tuple[list[Any], list[Any], str, str]:
    """(ids, values, how an id and how a value are named in errors) of one record in any of its three forms."""
    if isinstance(value, Mapping):
        if set(value) == {"ids", values_key}:
            ids = check_list(metric, f"{argument}['ids']", value["ids"], what="document ids", allow_empty=True)
            values = check_list(metric, f"{argument}['{values_key}']", value[values_key], what=values_key,
                                allow_empty=True)
            if len(ids) != len(values):
                raise ValueError(f"{metric}: `{argument}` has {len(ids)} ids but {len(values)} {values_key}")
            return ids, values, f"{argument}['ids']" + "[{index}]", f"{argument}['{values_key}']" + "[{index}]"
        return list(value), list(value.values()), argument + " (key {key!r})", argument + "[{key!r}]"
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{metric}: `{argument}` must be a {shape}, got {type(value).__name__} ({value!r:.60})")
    ids = check_list(metric, argument, value, what="document ids", allow_empty=True)
    return ids, implied(len(ids)), argument + "[{index}]", argument + "[{index}]"


def _record(metric: str, argument: str, value: Any, values_key: str, shape: str, implied: Any,
            check_value: Any) -> dict[str, Any]:
    ids, values, id_name, value_name = _pairs(metric, argument, value, values_key, shape, implied)
    checked_ids = [check_id(metric, id_name.format(index=index, key=key), key, what="a document id (a string)")
                   for index, key in enumerate(ids)]
    seen: set[str] = set()
    for key in checked_ids:
        if key in seen:
            raise ValueError(f"{metric}: `{argument}` names the document {key!r} twice")
        seen.add(key)
    checked_values = [check_value(metric, value_name.format(index=index, key=key), item)
                      for index, (key, item) in enumerate(zip(ids, values, strict=True))]
    return dict(zip(checked_ids, checked_values))


def _ranked_scores(size: int) -> list[float]:
    return [float(size - rank) for rank in range(size)]


def _unit_grades(size: int) -> list[int]:
    return [1] * size


def _plain_records(values: list[Any], values_key: str, implied: Any) -> list[dict[Any, Any]] | None:
    """Every record as a dict when each is a plain dict or list in one of the three forms and names no document
    twice (a dict given as a mapping is kept as it is); None when a record is anything else."""
    if set(map(type, values)) <= {dict} and 2 not in set(map(len, values)):  # dicts, none of them the normal form
        return list(values)
    records = []
    for value in values:
        if type(value) is dict:
            if len(value) != 2 or "ids" not in value or values_key not in value:
                records.append(value)
                continue
            ids, items = value["ids"], value[values_key]
            if type(ids) is not list or type(items) is not list or len(ids) != len(items):
                return None
            record = dict(zip(ids, items))
        elif type(value) is list:
            ids, record = value, dict(zip(value, implied(len(value))))
        else:
            return None
        if len(record) != len(ids):
            return None
        records.append(record)
    return records


# Documents checked together (whole queries, at least one): each pass over a block's documents finds them still in
# the CPU cache.
_BLOCK_DOCUMENTS = 4096


def _valid_ids(records: list[dict[Any, Any]]) -> bool:
    """Whether every id of ``records`` is a string of Unicode text (no lone surrogate)."""
    try:
        # str.isascii and str.join raise TypeError for an id that is not a string; only a non-ASCII id can hold
        # a lone surrogate
        if not all(map(str.isascii, chain.from_iterable(records))):
            check_encodable("", "", "".join(chain.from_iterable(records)))
    except (TypeError, ValueError):
        return False
    return True


def _checked_block(records: list[dict[Any, Any]], value_types: frozenset[type],
                   convert: type | None) -> tuple[list[dict[str, Any]], list[Any]] | None:
    """(the records, their values as given), the records' values made ``convert`` where another of
    ``value_types``, when all are valid as given (string ids, Unicode text, values of ``value_types``); None when
    anything needs a closer look."""
    items = list(chain.from_iterable(map(_VALUES, records)))
    kinds = set(map(type, items))
    if not kinds <= value_types or not _valid_ids(records):
        return None
    if convert is not None and kinds - {convert}:
        try:
            records = [dict(zip(record, map(convert, record.values()))) for record in records]
        except OverflowError:
            return None
    return records, items


def _sizes(records: list[dict[Any, Any]]) -> np.ndarray:
    return np.fromiter(map(len, records), dtype=np.int64, count=len(records))


def _block_bounds(sizes: np.ndarray) -> list[int]:
    """Where blocks of whole queries (of ``sizes`` documents) begin, and the end: a query begins one where its first
    document is past a multiple of ``_BLOCK_DOCUMENTS``."""
    blocks = (np.cumsum(sizes) - sizes) // _BLOCK_DOCUMENTS
    return [0, *(np.flatnonzero(blocks[1:] != blocks[:-1]) + 1).tolist(), len(sizes)] if len(sizes) else [0]


def _blocks(records: list[dict[Any, Any]], bounds: list[int]) -> list[list[dict[Any, Any]]]:
    return [records[start:end] for start, end in zip(bounds, bounds[1:])]


def _plain_or_none(values: list[Any], values_key: str, implied: Any) -> list[dict[Any, Any]] | None:
    try:
        return _plain_records(values, values_key, implied)
    except TypeError:  # an id that cannot be a dict key: the per-document checks name it
        return None


def _checked_at_once(values: list[Any], values_key: str, implied: Any, value_types: frozenset[type],
                     convert: type | None) -> tuple[list[dict[str, Any]], list[Any]] | None:
    """Every record as a dict (its values made ``convert`` where another of ``value_types``), and every value
    as given in one list, checked in whole-column passes a block at a time, when all of it is valid as given
    (string ids, Unicode text, no document twice, values of ``value_types``); None when anything needs a closer
    look."""
    records = _plain_or_none(values, values_key, implied)
    if records is None:
        return None
    checked: list[dict[str, Any]] = []
    items: list[Any] = []
    for block in _blocks(records, _block_bounds(_sizes(records))):
        block_checked = _checked_block(block, value_types, convert)
        if block_checked is None:
            return None
        checked += block_checked[0]
        items += block_checked[1]
    return checked, items


def _scored_at_once(values: list[Any]) -> Flattened | None:
    """The runs checked in whole-column passes, with every score as float64; None when anything (a NaN score
    included) needs a closer look."""
    checked = _checked_at_once(values, "scores", _ranked_scores, frozenset({float, int}), float)
    if checked is None:
        return None
    records, items = checked
    scores = np.fromiter(items, dtype=np.float64, count=len(items))  # ints beyond a float's range failed above
    if np.isnan(scores).any():
        return None
    return Flattened(records, scores)


def _graded_at_once(values: list[Any]) -> list[dict[str, int]] | None:
    """The qrels checked in whole-column passes, with every grade as int64 where all fit (a larger one is left
    to the scorer's check, which names it); None when anything needs a closer look."""
    checked = _checked_at_once(values, "grades", _unit_grades, frozenset({int}), None)
    if checked is None:
        return None
    records, items = checked
    try:
        return Flattened(records, np.array(items, dtype=np.int64))
    except OverflowError:
        return records


def _queries_at_once(runs: list[Any], qrels: Any) -> tuple[Flattened, Flattened] | None:
    """Runs and qrels checked together in whole-column passes, a block of queries at a time (``_block_bounds`` of
    the runs), the qrels holding each judged document's score in its run (``Flattened.found``); None when anything
    (a NaN score, a grade beyond int64, a length mismatch included) needs the separate checks."""
    if type(qrels) is not list or len(qrels) != len(runs):
        return None
    run_records = _plain_or_none(runs, "scores", _ranked_scores)
    qrel_records = _plain_or_none(qrels, "grades", _unit_grades)
    if run_records is None or qrel_records is None:
        return None
    checked_runs: list[dict[str, float]] = []
    checked_qrels: list[dict[str, int]] = []
    ids: list[str] = []
    run_sizes, qrel_sizes = _sizes(run_records), _sizes(qrel_records)
    scores = np.empty(int(run_sizes.sum()), dtype=np.float64)
    grades = np.empty(int(qrel_sizes.sum()), dtype=np.int64)
    found = np.empty(len(grades), dtype=np.float64)
    begin = 0
    bounds = _block_bounds(run_sizes)
    for run_block, qrel_block in zip(_blocks(run_records, bounds), _blocks(qrel_records, bounds), strict=True):
        runs_checked = _checked_block(run_block, frozenset({float, int}), float)
        qrels_checked = _checked_block(qrel_block, frozenset({int}), None)
        if runs_checked is None or qrels_checked is None:
            return None
        run_block, block_scores = runs_checked
        qrel_block, block_grades = qrels_checked
        block_ids = list(chain.from_iterable(qrel_block))
        judged_begin = len(ids)
        try:
            grades[judged_begin:judged_begin + len(block_ids)] = block_grades
        except OverflowError:
            return None
        scores[begin:begin + len(block_scores)] = block_scores
        begin += len(block_scores)
        owners = chain.from_iterable(map(repeat, run_block, map(len, qrel_block)))
        found[judged_begin:judged_begin + len(block_ids)] = np.fromiter(
            map(dict.get, owners, block_ids, repeat(math.nan)), dtype=np.float64, count=len(block_ids))
        checked_runs += run_block
        checked_qrels += qrel_block
        ids += block_ids
    if np.isnan(scores).any():
        return None
    return (Flattened(checked_runs, scores, lengths=run_sizes),
            Flattened(checked_qrels, grades, ids, found, qrel_sizes))


def check_runs(metric: str, runs: Any, *, allow_empty: bool = False) -> list[dict[str, float]]:
    """Runs as ``{doc_id: score}`` dicts of floats (ranked lists get scores n .. 1); runs valid as given come as
    ``Flattened``, which also holds the scores as one array."""
    values = check_list(metric, "predictions", runs, what=_RUNS, allow_empty=allow_empty)
    fast = _scored_at_once(values)
    if fast is not None:
        return fast
    return [_record(metric, f"predictions[{index}]", value, "scores", _RUN_SHAPE, _ranked_scores, _score)
            for index, value in enumerate(values)]


def check_qrels(metric: str, qrels: Any, *, allow_empty: bool = False) -> list[dict[str, int]]:
    """Qrels as ``{doc_id: grade}`` dicts (lists of ids get grade 1); qrels valid as given come as ``Flattened``,
    which also holds the grades as one array."""
    values = check_list(metric, "references", qrels, what=f"qrels (one per query; {_QRELS_SHAPE})",
                        allow_empty=allow_empty)
    fast = _graded_at_once(values)
    if fast is not None:
        return fast
    return [_record(metric, f"references[{index}]", value, "grades", _QRELS_SHAPE, _unit_grades, _grade)
            for index, value in enumerate(values)]


def _checked_before(runs: Any, qrels: Any, allow_empty: bool) -> bool:
    """Whether ``runs`` and ``qrels`` are queries checked already, by this check or by pairing TREC files
    (``Flattened``, the qrels holding each judged document's score in its run), one run for each qrels."""
    return (isinstance(runs, Flattened) and isinstance(qrels, Flattened) and qrels.found is not None
            and len(runs) == len(qrels) and (allow_empty or len(runs) > 0))


def _check(metric: str, given: Mapping[str, Any], allow_empty: bool) -> Columns:
    if _checked_before(given.get("predictions"), given.get("references"), allow_empty):
        return {"predictions": given["predictions"], "references": given["references"]}
    with garbage_collection_paused():
        runs = check_list(metric, "predictions", given.get("predictions"), what=_RUNS, allow_empty=allow_empty)
        together = _queries_at_once(runs, given.get("references"))
        if together is not None:
            return {"predictions": together[0], "references": together[1]}
        runs = check_runs(metric, runs, allow_empty=allow_empty)
        qrels = check_qrels(metric, given.get("references"), allow_empty=True)
    check_same_length(metric, ("predictions", len(runs)), ("references", len(qrels)))
    return {"predictions": runs, "references": qrels}


def _stored(columns: Columns) -> Columns:
    """The checked dicts in the form of the features: ``{"ids": [...], "scores": [...]}`` and
    ``{"ids": [...], "grades": [...]}``."""
    return {"predictions": [{"ids": list(run), "scores": list(run.values())} for run in columns["predictions"]],
            "references": [{"ids": list(judged), "grades": list(judged.values())} for judged in columns["references"]]}


RANKINGS = InputKind("rankings", ("predictions", "references"), _features, _check, _stored)
