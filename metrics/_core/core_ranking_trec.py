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

The readers return a read-only ``TrecTable``, equal to the ``{qid: {docno: value}}`` dict it stands for (the
same order, the same print) and holding the file as arrays: a regular file (``core_ranking_trec_parse``) is
parsed with numpy a piece at a time, any other line by line, which names the first bad line. ``pair_queries`` of
two such tables takes the scores, grades and judged documents' scores straight from the arrays (``Flattened``;
each judged document found in its run by the files' sorted keys, with no sort of its own), so the ranking modules
and ``ranking_totals(..., checked=True)`` score them without a dict per query.

Pairing (trec_eval.c, and pytrec_eval's ``evaluate``): only queries with both a ranking and relevance
judgements are scored; a query of the run absent from the qrels is skipped, and so is a query whose
judgements are empty (pytrec_eval drops them); a query of the qrels absent from the run is skipped too,
unless ``complete=True`` (trec_eval's ``-c``), which scores it with an empty ranking (every measure 0).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from .core_process import garbage_collection_paused
from .core_ranking_checks import Flattened
from .core_ranking_trec_parse import Table, judged_scores, parse_table


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
    """``{qid: {docno: value_of(parts[value_field])}}`` of a TREC file, line by line; a duplicate document or a
    value that ``value_of`` refuses (its ValueError says why) is an error naming the file and line."""
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


class FrozenDict(dict):
    """A dict that refuses changes: a query of a ``TrecTable``, read by code that needs a dict (pytrec_eval), whose
    edits would silently not be scored (the modules score the table's arrays)."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("a query read from a TREC file is read-only; copy it with dict(...) or use to_dict() to edit")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse


class TrecTable(Mapping[str, dict[str, Any]]):
    """A TREC file read as a read-only ``{qid: {docno: value}}`` (queries and documents in file order), held as
    arrays (``table``); a query's dict is made when first asked for (``made``: those made already, by query
    index) as a ``FrozenDict``. Equal to the dict it stands for, and printed as it; ``to_dict()`` gives
    the plain dicts (e.g. for pytrec_eval)."""

    def __init__(self, table: Table, made: dict[int, dict[str, Any]] | None = None) -> None:
        self.table = table
        self.positions = {query: index for index, query in enumerate(table.query_ids)}
        self._made = {} if made is None else made

    def __getitem__(self, query: str) -> dict[str, Any]:
        return self.query(self.positions[query])

    def query(self, index: int) -> dict[str, Any]:
        """The dict of the ``index``-th query."""
        made = self._made.get(index)
        if made is None:
            begin, end = int(self.table.bounds[index]), int(self.table.bounds[index + 1])
            made = self._made[index] = FrozenDict(zip(self.document_ids(begin, end),
                                                      self.table.values[begin:end].tolist()))
        return made

    def document_ids(self, begin: int, end: int) -> list[str]:
        """The document ids of lines ``begin:end`` (in query order)."""
        ids = self.table.documents[begin:end].tolist()
        return [document.decode("utf-8") for document in ids] if self.table.documents.dtype.kind == "S" else ids

    def __iter__(self) -> Iterator[str]:
        return iter(self.table.query_ids)

    def __len__(self) -> int:
        return len(self.table.query_ids)

    def __contains__(self, query: object) -> bool:
        return query in self.positions

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """The plain ``{qid: {docno: value}}`` dicts, new and editable."""
        return {query: dict(self.query(index)) for index, query in enumerate(self.table.query_ids)}

    def __repr__(self) -> str:
        return repr({query: self.query(index) for index, query in enumerate(self.table.query_ids)})


class TrecQuery(Mapping[str, Any]):
    """One query of a ``TrecTable``, ``{docno: value}``, its dict made when first read."""

    def __init__(self, table: TrecTable, index: int) -> None:
        self._table = table
        self._index = index

    def __getitem__(self, document: str) -> Any:
        return self._table.query(self._index)[document]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table.query(self._index))

    def __len__(self) -> int:
        return int(self._table.table.bounds[self._index + 1] - self._table.table.bounds[self._index])

    def __repr__(self) -> str:
        return repr(self._table.query(self._index))


class _DocumentIds(Sequence[str]):
    """Document ids held as UTF-8 bytes, each decoded when read."""

    def __init__(self, documents: np.ndarray) -> None:
        self._documents = documents

    def __getitem__(self, index: Any) -> Any:
        return self._documents[index].decode("utf-8")

    def __len__(self) -> int:
        return len(self._documents)


def _table_of(lines: dict[str, dict[str, Any]], dtype: type) -> Table:
    """The arrays of a table read line by line."""
    lengths = np.fromiter(map(len, lines.values()), dtype=np.int64, count=len(lines))
    documents = np.empty(int(lengths.sum()), dtype=object)
    documents[:] = [document for judged in lines.values() for document in judged]
    values = [value for judged in lines.values() for value in judged.values()]
    try:
        values = np.array(values, dtype=dtype)
    except OverflowError:  # a grade beyond 64 bits, kept as read
        values = np.array(values, dtype=object)
    return Table(list(lines), np.concatenate(([0], np.cumsum(lengths))), documents, values)


def _read(path: str | os.PathLike[str], fields: int, exact: bool, layout: str, value_field: int,
          value_of: Callable[[str], Any], dtype: type) -> TrecTable:
    """A TREC file as a ``TrecTable``, parsed with numpy when regular, else line by line (naming any error)."""
    table = parse_table(path, fields, exact, value_field, dtype is np.int64)
    if table is not None:
        return TrecTable(table)
    lines = _read_table(path, fields, exact, layout, value_field, value_of)
    return TrecTable(_table_of(lines, dtype), dict(enumerate(lines.values())))


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


def read_trec_run(path: str | os.PathLike[str]) -> TrecTable:
    """A TREC run file as a read-only ``{qid: {docno: score}}`` (queries and documents in file order)."""
    return _read(path, 6, False, "qid Q0 docno rank score tag", 4, _score, np.float64)


def read_trec_qrels(path: str | os.PathLike[str]) -> TrecTable:
    """A TREC qrels file as a read-only ``{qid: {docno: relevance grade}}`` (queries and documents in file
    order)."""
    return _read(path, 4, True, "qid iter docno rel", 3, _grade, np.int64)


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
    from_files = _from_files(run, qrels)
    if not from_files:
        run = _query_table(metric, "run", run)
        qrels = _query_table(metric, "qrels", qrels)
    if not isinstance(complete, bool):
        raise TypeError(f"{metric}: `complete` must be True or False, got {type(complete).__name__}")
    if from_files:
        return _paired_tables(run, qrels, complete)
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


def _from_files(run: Mapping[str, Any], qrels: Mapping[str, Any]) -> bool:
    """Whether ``run`` and ``qrels`` were both parsed as whole files (document ids as bytes, float64 scores, int64
    grades, a ``Lookup``)."""
    return (isinstance(run, TrecTable) and isinstance(qrels, TrecTable) and run.table.lookup is not None
            and qrels.table.lookup is not None)


def _lines(bounds: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray | slice]:
    """(lines per query, the lines of the queries ``indices`` (-1: none) one after another) of a table: a slice
    where they are queries one after another (as when a run and its qrels list the same queries in one order)."""
    begins = np.where(indices >= 0, bounds[indices], 0)
    lengths = np.where(indices >= 0, bounds[indices + 1] - begins, 0)
    if len(indices) and indices[0] >= 0 and (np.diff(indices) == 1).all():
        return lengths, slice(int(begins[0]), int(begins[0] + lengths.sum()))
    offsets = np.cumsum(lengths) - lengths
    return lengths, np.repeat(begins - offsets, lengths) + np.arange(int(lengths.sum()))


def _paired_tables(run: TrecTable, qrels: TrecTable, complete: bool) -> PairedQueries:
    """``pair_queries`` of two parsed files: the queries' mappings made on demand, their values and each judged
    document's score in its run (``Flattened``) taken from the files' arrays."""
    run_index = {query: index for index, query in enumerate(run)}
    query_ids = [query for query in run if query in qrels]
    if complete:
        query_ids += [query for query in qrels if query not in run_index]
    run_indices = np.array([run_index.get(query, -1) for query in query_ids], dtype=np.int64)
    judged_indices = np.array([qrels.positions[query] for query in query_ids], dtype=np.int64)
    run_lengths, run_lines = _lines(run.table.bounds, run_indices)
    judged_lengths, judged_lines = _lines(qrels.table.bounds, judged_indices)
    runs = Flattened([TrecQuery(run, index) if index >= 0 else {} for index in run_indices.tolist()],
                     run.table.values[run_lines], lengths=run_lengths)
    runs_of = np.full(len(qrels), -1, dtype=np.int64)
    runs_of[judged_indices] = run_indices
    starts = np.zeros(len(qrels), dtype=np.int64)
    starts[judged_indices] = np.cumsum(judged_lengths) - judged_lengths
    found = judged_scores(run.table, qrels.table, runs_of, starts, int(judged_lengths.sum()))
    judgements = Flattened([TrecQuery(qrels, index) for index in judged_indices.tolist()],
                           qrels.table.values[judged_lines], _DocumentIds(qrels.table.documents[judged_lines]), found,
                           judged_lengths)
    return PairedQueries(query_ids, runs, judgements)
