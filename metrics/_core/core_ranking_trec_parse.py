"""Whole-file parsing of regular TREC run and qrels files into arrays, in vectorised passes over the bytes.

A file is regular when it is UTF-8 with no control character but white space and no white space beyond ASCII's,
every data line holds the fields its layout asks for, and every value is a plain decimal number (scores: digits,
sign, point, exponent; grades: digits and sign). Such a file splits on bytes exactly as ``str.split`` splits its lines;
anything else gives None, and the line-by-line reader (``core_ranking_trec``) reads it and names any error.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Iterator
from typing import NamedTuple

import numpy as np

# str.split's ASCII white space (with the space, every byte below 32 in a regular file); a line ends at a line
# feed only (as in the line-by-line reader)
_SPACE_BYTES = b"\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f"
# The UTF-8 prefixes of every non-ASCII character str.split takes for white space (U+0085, U+00A0, U+1680,
# U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000); some other characters share the U+20xx prefix
_WIDE_SPACES = (b"\xc2\x85", b"\xc2\xa0", b"\xe1\x9a\x80", b"\xe2\x80", b"\xe2\x81\x9f", b"\xe3\x80\x80")
_CHUNK = 1 << 21  # bytes parsed at a time


class Table(NamedTuple):
    """A TREC file's data lines grouped by query: ``query_ids`` in order of first appearance, query ``i``'s lines
    at ``bounds[i]:bounds[i + 1]`` of ``documents`` (UTF-8 bytes) and ``values``, each query's lines in file
    order."""

    query_ids: list[str]
    bounds: np.ndarray
    documents: np.ndarray
    values: np.ndarray


def _allowed(characters: bytes) -> np.ndarray:
    table = np.zeros(256, dtype=bool)
    table[list(characters)] = True
    table[0] = True  # the padding of fixed-width fields
    return table


_SCORE_BYTES = _allowed(b"0123456789+-.eE")
_GRADE_BYTES = _allowed(b"0123456789+-")


def _column(windows: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The fields ``data[starts[i]:ends[i]]`` as one fixed-width bytes array (``windows``: row ``j`` holds the
    bytes of the data from ``j`` on, as many as the widest field)."""
    lengths = ends - starts
    width = int(lengths.max(initial=1))
    gathered = windows[starts, :width]
    gathered[np.arange(width) >= lengths[:, None]] = 0
    return gathered.view(f"S{width}").ravel()


def _windows(data: np.ndarray, width: int) -> np.ndarray:
    """A view of ``data`` (zero-padded) whose row ``j`` holds its ``width`` bytes from ``j`` on."""
    padded = np.concatenate((data, np.zeros(width, dtype=np.uint8)))
    return np.lib.stride_tricks.as_strided(padded, shape=(len(data), width), strides=(1, 1), writeable=False)


def _regular_text(raw: bytes) -> bool:
    if raw.translate(None, _SPACE_BYTES + bytes(range(32, 256))):  # a control character that is not a space
        return False
    if raw.isascii():
        return True
    if any(space in raw for space in _WIDE_SPACES):
        return False
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _numbers(column: np.ndarray, allowed: np.ndarray, integer: bool) -> np.ndarray | None:
    """The fields as int64 (``integer``) or float64, as ``int`` / ``float`` read them; None when one is not a plain
    decimal number or (an integer) does not fit."""
    if not allowed[column.view(np.uint8)].all():
        return None
    try:
        return column.astype(np.int64 if integer else np.float64)
    except (ValueError, OverflowError):
        return None


Fields = Callable[[int], tuple[np.ndarray, np.ndarray]]


def _spaced_fields(data: np.ndarray, fields: int) -> Fields | None:
    """Where field ``i`` of each data line begins and ends, when every line (the last one ending with a line
    feed) holds exactly ``fields`` fields, one white-space byte apart, and no line is blank or a comment (one
    search of the separators); None otherwise."""
    separators = np.flatnonzero(data <= 32)
    if not len(separators) or len(separators) % fields or data[-1] != ord("\n"):
        return None
    grid = separators.reshape(-1, fields)
    line_starts = np.concatenate(([0], grid[:-1, -1] + 1))
    if (separators[0] == 0 or (np.diff(separators) == 1).any() or (data[grid[:, -1]] != ord("\n")).any()
            or (data[grid[:, :-1]] == ord("\n")).any() or (data[line_starts] == ord("#")).any()):
        return None
    return lambda field: (line_starts if field == 0 else grid[:, field - 1] + 1, grid[:, field])


def _fields_of_lines(data: np.ndarray, fields: int, exact: bool) -> Fields | None:
    """Where field ``i`` of each data line begins and ends (blank lines and comments skipped), when every data
    line holds ``fields`` fields (``exact``) or at least that many; None otherwise."""
    edges = np.flatnonzero(np.diff(np.concatenate(([True], data <= 32, [True])).view(np.int8)))
    starts, ends = edges[0::2], edges[1::2]
    line_ends = np.flatnonzero(data == ord("\n"))
    firsts = np.concatenate(([0], np.searchsorted(starts, line_ends), [len(starts)]))
    counts = np.diff(firsts)
    firsts = firsts[:-1][counts > 0]
    counts = counts[counts > 0]
    data_lines = data[starts[firsts]] != ord("#")
    firsts, counts = firsts[data_lines], counts[data_lines]
    if ((counts != fields) if exact else (counts < fields)).any():
        return None
    return lambda field: (starts[firsts + field], ends[firsts + field])


def _chunks(raw: bytes) -> Iterator[tuple[int, int]]:
    """(begin, end) of pieces of about ``_CHUNK`` bytes that end at a line feed (the last one at the end)."""
    begin = 0
    while begin < len(raw):
        end = raw.find(b"\n", begin + _CHUNK)
        end = len(raw) if end < 0 else end + 1
        yield begin, end
        begin = end


def _piece(data: np.ndarray, fields: int, exact: bool, value_field: int,
           integer: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(query ids, document ids, values) of the data lines of whole lines ``data``; None when irregular."""
    bounds = _spaced_fields(data, fields)
    if bounds is None:
        bounds = _fields_of_lines(data, fields, exact)
    if bounds is None:
        return None
    spans = [bounds(field) for field in (0, 2, value_field)]
    windows = _windows(data, max(int((ends - starts).max(initial=1)) for starts, ends in spans))
    queries, documents, values = (_column(windows, starts, ends) for starts, ends in spans)
    values = _numbers(values, _GRADE_BYTES if integer else _SCORE_BYTES, integer)
    return None if values is None else (queries, documents, values)


def parse_table(raw: bytes, fields: int, exact: bool, value_field: int, integer: bool) -> Table | None:
    """The data lines of a regular TREC file (see the module's docstring) grouped by query, their ``value_field``
    as float64 (``integer``: int64); None when the file is not regular or names a document twice for a query.
    The file is parsed a piece at a time, each piece's arrays small enough to stay in the CPU cache."""
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8):]
    if not _regular_text(raw):
        return None
    data = np.frombuffer(raw, dtype=np.uint8)
    pieces = []
    for begin, end in _chunks(raw):
        piece = _piece(data[begin:end], fields, exact, value_field, integer)
        if piece is None:
            return None
        pieces.append(piece)
    if not pieces:
        return Table([], np.zeros(1, dtype=np.int64), np.zeros(0, dtype="S1"),
                     np.zeros(0, dtype=np.int64 if integer else np.float64))
    queries, documents, values = (np.concatenate(column) for column in zip(*pieces))
    del pieces
    if not len(queries):
        return Table([], np.zeros(1, dtype=np.int64), documents, values)
    heads = np.flatnonzero(np.concatenate(([True], queries[1:] != queries[:-1])))
    unique, first_head, head_codes = np.unique(queries[heads], return_index=True, return_inverse=True)
    order = np.argsort(first_head, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    codes = np.repeat(rank[head_codes.ravel()], np.diff(np.append(heads, len(queries))))
    if len(heads) != len(unique):
        grouped = np.argsort(codes, kind="stable")
        codes, documents, values = codes[grouped], documents[grouped], values[grouped]
    bounds = np.searchsorted(codes, np.arange(len(unique) + 1))
    pairs = np.lexsort((documents, codes))
    if len(pairs) > 1 and ((codes[pairs[1:]] == codes[pairs[:-1]])
                           & (documents[pairs[1:]] == documents[pairs[:-1]])).any():
        return None
    return Table([query.decode("utf-8") for query in unique[order].tolist()], bounds, documents, values)
