"""TREC run and qrels files, and the pairing of a run with its qrels by query id, as trec_eval does them.

Run files (trec_eval's get_trec_results.c): one retrieved document per line, ``qid Q0 docno rank score tag``,
fields separated by white space; further fields are ignored, the second (``Q0``) and fourth (``rank``) are not
read (trec_eval ranks by score, never by the rank column), the score is a number. Qrels files
(get_qrels.c): ``qid iter docno rel`` with exactly four fields, ``rel`` an integer grade. Both are UTF-8; a
byte-order mark at the start of the file is dropped (it would otherwise glue itself to the first query id, and
that query would be skipped as unjudged). In both, blank lines
and lines whose first non-blank character is ``#`` are skipped (trec_eval 10 skips ``#`` comments; it rejects
a blank line in a qrels file, we skip it). A document listed twice for one query is an error, as in trec_eval
("duplicate docs"), naming both lines. Unlike trec_eval's ``atof``/``atol``, which read ``1abc`` as 1, a score
or grade that is not a number is an error naming the file and the line.

Pairing (trec_eval.c, and pytrec_eval's ``evaluate``): only queries with both a ranking and relevance
judgements are scored; a query of the run absent from the qrels is skipped, and so is a query whose
judgements are empty (pytrec_eval drops them); a query of the qrels absent from the run is skipped too,
unless ``complete=True`` (trec_eval's ``-c``), which scores it with an empty ranking (every measure 0).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

from .core_process import garbage_collection_paused


class PairedQueries(NamedTuple):
    """Queries scored: their ids, and for each the ranking (doc id -> score) and judgements (doc id -> grade)."""

    query_ids: list[str]
    runs: list[Mapping[str, Any]]
    qrels: list[Mapping[str, int]]


def _decoding_error(path: str | os.PathLike[str], error: UnicodeDecodeError) -> ValueError:
    """The error for a file that is not UTF-8, naming its first line that is not."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as line_error:
                return ValueError(f"{os.fspath(path)}:{number}: not UTF-8 text ({line_error.reason})")
    return ValueError(f"{os.fspath(path)}: not UTF-8 text ({error.reason})")


def _records(path: str | os.PathLike[str], fields: int, exact: bool, layout: str) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of the data lines of a TREC file (UTF-8; a leading byte-order mark dropped; lines end
    at a line feed only); ValueError naming the file and line otherwise."""
    try:
        with open(path, encoding="utf-8-sig", newline="\n") as handle:
            for number, line in enumerate(handle, start=1):
                parts = line.split()
                if not parts or parts[0][0] == "#":
                    continue
                if len(parts) < fields or (exact and len(parts) != fields):
                    expected = f"{'exactly' if exact else 'at least'} {fields} fields `{layout}`"
                    raise ValueError(
                        f"{os.fspath(path)}:{number}: malformed line: expected {expected}, got {len(parts)}: "
                        f"{line.strip()!r:.100}"
                    )
                yield number, parts
    except UnicodeDecodeError as error:
        raise _decoding_error(path, error) from None


def _first_line(path: str | os.PathLike[str], fields: int, exact: bool, layout: str, query: str,
                document: str) -> int:
    """The number of the first line of ``path`` that lists ``document`` for ``query``."""
    return next(number for number, parts in _records(path, fields, exact, layout)
                if parts[0] == query and parts[2] == document)


def _read_table(path: str | os.PathLike[str], fields: int, exact: bool, layout: str, value_field: int,
                value_of: Callable[[str], Any]) -> dict[str, dict[str, Any]]:
    """``{qid: {docno: value_of(parts[value_field])}}`` of a TREC file; a duplicate document or a value that
    ``value_of`` refuses (its ValueError says why) is an error naming the file and line."""
    table: dict[str, dict[str, Any]] = {}
    with garbage_collection_paused():
        for number, parts in _records(path, fields, exact, layout):
            query, document = parts[0], parts[2]
            try:
                value = value_of(parts[value_field])
            except ValueError as error:
                raise ValueError(f"{os.fspath(path)}:{number}: {error}") from None
            documents = table.get(query)
            if documents is None:
                documents = table[query] = {}
            elif document in documents:
                first = _first_line(path, fields, exact, layout, query, document)
                raise ValueError(
                    f"{os.fspath(path)}:{number}: duplicate document {document!r} for query {query!r} (first at "
                    f"line {first}); trec_eval rejects duplicate docs"
                )
            documents[document] = value
    return table


def _score(field: str) -> float:
    try:
        score = float(field)
    except ValueError:
        raise ValueError(f"the score (fifth field) {field!r:.40} is not a number") from None
    if math.isnan(score):
        raise ValueError("the score (fifth field) is NaN")
    return score


def _grade(field: str) -> int:
    try:
        return int(field)
    except ValueError:
        raise ValueError(f"the relevance grade (fourth field) {field!r:.40} is not an integer") from None


def read_trec_run(path: str | os.PathLike[str]) -> dict[str, dict[str, float]]:
    """A TREC run file as ``{qid: {docno: score}}`` (queries and documents in file order)."""
    return _read_table(path, 6, False, "qid Q0 docno rank score tag", 4, _score)


def read_trec_qrels(path: str | os.PathLike[str]) -> dict[str, dict[str, int]]:
    """A TREC qrels file as ``{qid: {docno: relevance grade}}`` (queries and documents in file order)."""
    return _read_table(path, 4, True, "qid iter docno rel", 3, _grade)


def _query_table(metric: str, argument: str, value: Any) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(
            f"{metric}: `{argument}` must be a mapping of query id -> (mapping of document id -> value), got "
            f"{type(value).__name__}"
        )
    for query, documents in value.items():
        if not isinstance(query, str):
            raise TypeError(f"{metric}: `{argument}` has the query id {query!r:.60} of type {type(query).__name__}; "
                            f"query ids must be strings (as in TREC files)")
        if not isinstance(documents, Mapping):
            raise TypeError(
                f"{metric}: `{argument}[{query!r:.60}]` must be a mapping of document id -> value, got "
                f"{type(documents).__name__}"
            )
    return value


def pair_queries(run: Mapping[str, Mapping[str, Any]], qrels: Mapping[str, Mapping[str, int]], *,
                 complete: bool = False, metric: str = "trec_eval") -> PairedQueries:
    """The queries trec_eval scores, aligned: the run's queries that have non-empty qrels, in the run's order;
    with ``complete`` (trec_eval's ``-c``), then the other queries of the qrels, in its order, with empty runs."""
    run = _query_table(metric, "run", run)
    qrels = _query_table(metric, "qrels", qrels)
    if not isinstance(complete, bool):
        raise TypeError(f"{metric}: `complete` must be True or False, got {type(complete).__name__}")
    query_ids, runs, judgements = [], [], []
    for query, ranking in run.items():
        judged = qrels.get(query)
        if judged:
            query_ids.append(query)
            runs.append(ranking)
            judgements.append(judged)
    if complete:
        for query, judged in qrels.items():
            if judged and query not in run:
                query_ids.append(query)
                runs.append({})
                judgements.append(judged)
    return PairedQueries(query_ids, runs, judgements)
