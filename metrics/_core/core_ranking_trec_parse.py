"""Parsing of regular TREC run and qrels files into arrays, a piece of about 256 KiB at a time in vectorised passes
over its bytes, and the look-up of a qrels file's judged documents in a run file by those arrays.

A file is regular when it is UTF-8 with no control character but white space and no white space beyond ASCII's,
every data line holds the fields its layout asks for, and every value is a plain decimal number (scores: digits,
sign, point, exponent; grades: digits and sign). Such a file splits on bytes exactly as ``str.split`` splits its lines;
anything else gives None, and the line-by-line reader (``core_ranking_trec``) reads it and names any error.

Fields are gathered 8 bytes at a time (little-endian words). A number of at most 8 digits each side of its point is
read with integer arithmetic, exactly as ``float`` / ``int`` read it; any other with numpy's conversion of bytes.
Each line has a key (``Lookup``: its query, the top bits of a hash of its document id, its place in the query); sorted,
the keys find a document listed twice (keys alike, the ids then compared exactly) and, by one binary search, a
judged document's score in its run.
"""

from __future__ import annotations

import codecs
import math
import os
from collections.abc import Callable, Iterator
from typing import BinaryIO, NamedTuple

import numpy as np

# The UTF-8 prefixes of every non-ASCII character str.split takes for white space (U+0085, U+00A0, U+1680,
# U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000); some other characters share the U+20xx prefix
_WIDE_SPACES = (b"\xc2\x85", b"\xc2\xa0", b"\xe1\x9a\x80", b"\xe2\x80", b"\xe2\x81\x9f", b"\xe3\x80\x80")
_CHUNK = 1 << 18  # bytes parsed at a time (each piece's arrays small enough to stay in the CPU cache)
_WORD = np.dtype("<u8")  # fields are gathered 8 bytes at a time, in file order
_LOW_BYTES = np.array([(1 << (8 * count)) - 1 for count in range(9)], dtype=_WORD)  # the first n bytes of a word
# Odd multipliers of a document id's words, and the finaliser of MurmurHash3 (fmix64)
_MULTIPLIERS = (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93)
_MIX = (np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53))


def _white(bytes_up_to_32: np.ndarray) -> bool:
    """Whether all these bytes (each at most 32) are str.split's ASCII white space: 9 to 13 and 28 to 32 (a line
    ends at a line feed only, as in the line-by-line reader)."""
    return bool((((bytes_up_to_32 - np.uint8(9)) <= 4) | (bytes_up_to_32 >= 28)).all())


class Lookup(NamedTuple):
    """Every line's key, sorted: its query's index (the top ``query_bits`` bits), then the top bits of its document
    id's hash (``_hashes``), then its place among its query's lines (the low ``line_bits`` bits)."""

    keys: np.ndarray
    query_bits: int
    line_bits: int


class Table(NamedTuple):
    """A TREC file's data lines grouped by query: ``query_ids`` in order of first appearance, query ``i``'s lines
    at ``bounds[i]:bounds[i + 1]`` of ``documents`` (UTF-8 bytes) and ``values``, each query's lines in file
    order; ``lookup`` (a whole-file parse) finds a query's document."""

    query_ids: list[str]
    bounds: np.ndarray
    documents: np.ndarray
    values: np.ndarray
    lookup: Lookup | None = None


def _allowed(characters: bytes) -> np.ndarray:
    table = np.zeros(256, dtype=bool)
    table[list(characters)] = True
    table[0] = True  # the padding of fixed-width fields
    return table


_SCORE_BYTES = _allowed(b"0123456789+-.eE")
_GRADE_BYTES = _allowed(b"0123456789+-")


def _u64(value: int) -> np.uint64:
    return np.uint64(value)


def _low(bits: int) -> np.uint64:
    return _u64((1 << bits) - 1)


def _bits(count: int) -> int:
    """The bits that hold the numbers below ``count``."""
    return max(count - 1, 0).bit_length()


def _words_of(data: np.ndarray, padding: int) -> np.ndarray:
    """The words of ``data`` padded with zeros, 8 bytes before and ``padding`` after (at least 8): element ``j`` holds
    its 8 bytes from ``j - 8`` on, as a little-endian word."""
    padded = np.concatenate((np.zeros(8, dtype=np.uint8), data, np.zeros(padding, dtype=np.uint8)))
    return np.ndarray((len(padded) - 7,), dtype=_WORD, buffer=padded, strides=(1,))


def _column(words: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The fields ``data[starts[i]:ends[i]]`` as rows of zero-padded words (``words``: ``_words_of(data)``)."""
    lengths = ends - starts
    count = -(-int(lengths.max(initial=1)) // 8)
    column = np.empty((len(starts), count), dtype=_WORD)
    for word in range(count):
        kept = np.minimum(lengths, 8) if word == 0 else np.maximum(np.minimum(lengths - 8 * word, 8), 0)
        np.bitwise_and(words[starts + (8 + 8 * word)], _LOW_BYTES[kept], out=column[:, word])
    return column


def _as_bytes(column: np.ndarray) -> np.ndarray:
    """Rows of words as fixed-width bytes."""
    return column.view(f"S{column.shape[1] * 8}").ravel()


def _hashes(words: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row of words (a document id), the same whatever the number of zero words after it."""
    hashes = np.zeros(len(words), dtype=np.uint64)
    for index in range(words.shape[1]):
        hashes += words[:, index] * np.uint64(_MULTIPLIERS[index % len(_MULTIPLIERS)] + 2 * (index // 4))
    for multiplier in _MIX:
        hashes ^= hashes >> np.uint64(33)
        hashes *= multiplier
    hashes ^= hashes >> np.uint64(33)
    return hashes


def _utf8_without_wide_spaces(raw: bytes) -> bool:
    if raw.isascii():
        return True
    if any(space in raw for space in _WIDE_SPACES):
        return False
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# The bytes of a word kept (``_LOW_BYTES``: the first n; ``_HIGH_BYTES``: the last n), and their zero digits
_HIGH_BYTES = ~_LOW_BYTES[::-1]
_LOW_ZEROS, _HIGH_ZEROS = (_u64(0x3030303030303030) & kept for kept in (_LOW_BYTES, _HIGH_BYTES))


def _digits(words: np.ndarray, count: np.ndarray, high: bool) -> tuple[np.ndarray, np.ndarray]:
    """(the number, whether it is one) of the first (last: ``high``) ``count`` (at most 8) bytes of each word taken
    as decimal digits, the word's first byte the most significant, the other bytes as zeros (8-digit SWAR parse,
    as in simdjson)."""
    kept, zeros = (_HIGH_BYTES, _HIGH_ZEROS) if high else (_LOW_BYTES, _LOW_ZEROS)
    digits = words & kept[count]
    digits -= zeros[count]  # a byte below "0" borrows, and its top bit is set
    valid = (((digits + _u64(0x7676767676767676)) | digits) & _u64(0x8080808080808080)) == _u64(0)  # all below 10
    digits *= _u64(2561)
    digits >>= _u64(8)
    digits &= _u64(0x00FF00FF00FF00FF)
    digits *= _u64(6553601)
    digits >>= _u64(16)
    digits &= _u64(0x0000FFFF0000FFFF)
    digits *= _u64(42949672960001)
    digits >>= _u64(32)
    return digits, valid


def _signs(first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(whether a field begins with a sign, whether with a minus) of the fields' first words."""
    byte = first & _u64(0xFF)
    minus = byte == ord("-")
    return minus | (byte == ord("+")), minus


def _grades(column: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the int64 values, whether read) of fields of a sign and at most 8 digits, as ``int`` reads them."""
    signed, minus = _signs(column[:, 0])
    digits = np.minimum(lengths - signed, 8)
    read = (digits >= 1) & (lengths <= 8)
    shifts = (8 * (8 - digits)).astype(np.uint64)
    aligned = (column[:, 0] >> (8 * signed).astype(np.uint64)) << shifts  # the last digit in the last byte
    number, valid = _digits(aligned, digits, True)
    grades = number.astype(np.int64)
    np.negative(grades, out=grades, where=minus)
    return grades, read & valid


_DOT_BYTES = _u64(0x2E2E2E2E2E2E2E2E)
_SEVEN_BITS = _u64(0x7F7F7F7F7F7F7F7F)


def _points(column: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Where each field's first point is (its length when it has none)."""
    point = np.zeros(len(column), dtype=np.int64)
    before = np.ones(len(column), dtype=bool)  # no point in the words so far
    for word in range(column.shape[1]):
        others = column[:, word] ^ _DOT_BYTES  # a point's byte zero
        dots = ~(((others & _SEVEN_BITS) + _SEVEN_BITS) | others | _SEVEN_BITS)  # 0x80 in each point's byte
        below = np.bitwise_count((dots - _u64(1)) & ~dots) >> np.uint8(3)  # bytes before the first; 8: none
        point += below if word == 0 else np.where(before, below, 0)
        before &= below == 8
    return np.minimum(point, lengths)


def _scores(words: np.ndarray, column: np.ndarray, starts: np.ndarray,
            lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the float64 values, whether read) of fields of a sign, at most 8 digits, a point and at most 8 digits, as
    ``float`` reads them: ``digits / 10**8``, both exact and so the quotient rounded once, when the digits are
    below 2**53."""
    signed, minus = _signs(column[:, 0])
    point = _points(column, lengths)
    whole, fraction = point - signed, lengths - point - 1  # fraction -1: no point
    read = (np.maximum(whole, fraction) <= 8) & (whole + fraction + (point == lengths) >= 1)
    at = starts + point  # ``words[at]``: the 8 bytes before the point
    whole_number, whole_valid = _digits(words[at], np.minimum(whole, 8), True)
    fraction_number, fraction_valid = _digits(words[at + 9], np.maximum(np.minimum(fraction, 8), 0), False)
    whole_number *= _u64(10 ** 8)
    whole_number += fraction_number
    read &= whole_valid & fraction_valid & (whole_number < _u64(1 << 53))
    scores = whole_number.astype(np.float64)
    scores /= 1e8
    np.negative(scores, out=scores, where=minus)
    return scores, read


_POWERS_OF_TEN = 10.0 ** np.arange(9)


def _short_scores(column: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``_scores`` of fields of at most 8 bytes (one word each): the digits (at most 8, the point taken out)
    divided by the power of ten of the fraction's digits, both exact and so the quotient rounded once."""
    signed, minus = _signs(column[:, 0])
    point = _points(column, lengths) - signed
    unsigned = column[:, 0] >> (8 * signed).astype(np.uint64)
    before = _LOW_BYTES[point]
    joined = (unsigned & before) | ((unsigned >> _u64(8)) & ~before)  # the digits after the point moved down one
    count = lengths - signed - (point + signed < lengths)
    number, read = _digits(joined << (8 * (8 - count)).astype(np.uint64), count, True)
    scores = number.astype(np.float64)
    scores /= _POWERS_OF_TEN[count - point]
    np.negative(scores, out=scores, where=minus)
    return scores, read & (count >= 1)


def _numbers(words: np.ndarray, column: np.ndarray, starts: np.ndarray, ends: np.ndarray,
             integer: bool) -> np.ndarray | None:
    """The fields (rows of words; ``words`` as for ``_column``) as int64 (``integer``) or float64, as ``int`` /
    ``float`` read them; None when one is not a plain decimal number or (an integer) does not fit."""
    lengths = ends - starts
    if integer:
        values, read = _grades(column, lengths)
    else:
        values, read = _short_scores(column, lengths) if column.shape[1] == 1 else _scores(words, column, starts,
                                                                                           lengths)
    if read.all():
        return values
    others = np.flatnonzero(~read)
    if not (_GRADE_BYTES if integer else _SCORE_BYTES)[column[others].view(np.uint8)].all():
        return None
    try:
        values[others] = _as_bytes(column[others]).astype(values.dtype)
    except (ValueError, OverflowError):
        return None
    return values


Fields = Callable[[int], tuple[np.ndarray, np.ndarray]]


def _spaced_fields(data: np.ndarray, fields: int) -> Fields | None:
    """Where field ``i`` of each data line begins and ends, when every line (the last one ending with a line
    feed) holds exactly ``fields`` fields, one white-space byte apart, and no line is blank or a comment (one
    search of the separators); None otherwise."""
    spaces = data <= 32
    separators = np.flatnonzero(spaces)
    if not len(separators) or len(separators) % fields or data[-1] != ord("\n"):
        return None
    between = data[separators].reshape(-1, fields)  # the separators' bytes, a line a row
    grid = separators.reshape(-1, fields)
    line_starts = np.concatenate(([0], grid[:-1, -1] + 1))
    # white space only, each line's last separator a line feed and no other one, no separator next to another
    if (not _white(between) or (between[:, -1] != ord("\n")).any()
            or np.count_nonzero(between == ord("\n")) != len(between)
            or spaces[0] or (spaces[1:] & spaces[:-1]).any() or (data[line_starts] == ord("#")).any()):
        return None
    return lambda field: (line_starts if field == 0 else grid[:, field - 1] + 1, grid[:, field])


def _fields_of_lines(data: np.ndarray, fields: int, exact: bool) -> Fields | None:
    """Where field ``i`` of each data line begins and ends (blank lines and comments skipped), when every data
    line holds ``fields`` fields (``exact``) or at least that many; None otherwise."""
    spaces = data <= 32
    if not _white(data[spaces]):  # a control character that is not white space
        return None
    edges = np.flatnonzero(np.diff(np.concatenate(([True], spaces, [True])).view(np.int8)))
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


def _pieces(handle: BinaryIO) -> Iterator[bytes]:
    """The bytes of a file in pieces of about ``_CHUNK`` bytes that end at a line feed (the last one at the end of
    the file), a byte-order mark at its start dropped."""
    rest = handle.read(_CHUNK)
    while len(rest) < len(codecs.BOM_UTF8) and (more := handle.read(_CHUNK)):
        rest += more
    rest = rest.removeprefix(codecs.BOM_UTF8)
    while block := handle.read(_CHUNK):
        rest += block
        end = rest.rfind(b"\n") + 1
        if end:
            yield rest[:end]
            rest = rest[end:]
    if rest:
        yield rest


class _Piece(NamedTuple):
    """A piece's data lines: where a query's lines begin (``heads``, piece lines, with the query ids), the
    document ids (fixed-width bytes; ``width``: the longest one's), their hashes, and the values."""

    heads: np.ndarray
    queries: list[bytes]
    documents: np.ndarray
    width: int
    hashes: np.ndarray
    values: np.ndarray


def _piece(raw: bytes, fields: int, exact: bool, value_field: int, integer: bool) -> _Piece | None:
    """The data lines of whole lines ``raw``; None when irregular."""
    data = np.frombuffer(raw, dtype=np.uint8)
    bounds = _spaced_fields(data, fields)
    if bounds is None:
        bounds = _fields_of_lines(data, fields, exact)
    if bounds is None:
        return None
    spans = [bounds(field) for field in (0, 2, value_field)]
    widths = [int((ends - starts).max(initial=1)) for starts, ends in spans]
    words = _words_of(data, max(widths) + 16)
    queries, documents, values = (_column(words, starts, ends) for starts, ends in spans)
    values = _numbers(words, values, *spans[2], integer)
    if values is None:
        return None
    first = np.ones(min(len(queries), 1), dtype=bool)
    heads = np.flatnonzero(np.concatenate((first, (queries[1:] != queries[:-1]).any(axis=1))))
    return _Piece(heads, _as_bytes(queries[heads]).tolist(), _as_bytes(documents), widths[1], _hashes(documents),
                  values)


class _Lines:
    """A file's data lines, written a piece at a time into arrays grown as needed (``capacity`` lines at first)
    and trimmed to the lines written by ``trimmed``: document ids (as wide as the longest), their hashes, the
    values, and where each query's lines begin (``heads``, with the query ids)."""

    def __init__(self, capacity: int, integer: bool) -> None:
        self.documents = np.zeros(capacity, dtype="S1")
        self.hashes = np.empty(capacity, dtype=np.uint64)
        self.values = np.empty(capacity, dtype=np.int64 if integer else np.float64)
        self.count = 0
        self.heads: list[np.ndarray] = []
        self.queries: list[bytes] = []

    def add(self, piece: _Piece) -> None:
        begin, end = self.count, self.count + len(piece.values)
        if end > len(self.values):
            capacity = max(end, len(self.values) + len(self.values) // 2)
            self.hashes, self.values = (np.concatenate((array[:begin], np.empty(capacity - begin, array.dtype)))
                                        for array in (self.hashes, self.values))
        if len(self.values) > len(self.documents) or piece.width > self.documents.itemsize:
            documents = np.zeros(len(self.values), dtype=f"S{max(piece.width, self.documents.itemsize)}")
            documents[:begin] = self.documents[:begin]
            self.documents = documents
        self.documents[begin:end] = piece.documents
        self.hashes[begin:end] = piece.hashes
        self.values[begin:end] = piece.values
        continued = bool(self.queries) and bool(piece.queries) and piece.queries[0] == self.queries[-1]
        self.heads.append(piece.heads[int(continued):] + begin)
        self.queries += piece.queries[int(continued):]
        self.count = end

    def trimmed(self) -> None:
        for array in (self.documents, self.hashes, self.values):
            array.resize(self.count, refcheck=False)  # no copy: the end is given back


_KEY_BLOCK = 1 << 16  # lines keyed at a time


def _keyed(hashes: np.ndarray, bounds: np.ndarray, query_bits: int, line_bits: int) -> np.ndarray:
    """``Lookup``'s keys of lines grouped by query (query ``i``'s at ``bounds[i]:bounds[i + 1]``), unsorted, made
    from the lines' hashes in place, a block of lines at a time."""
    # a key's query and place in the query: its line plus its query's (index << 64 - query_bits) - first line
    offsets = (np.arange(len(bounds) - 1, dtype=np.uint64) << np.uint64(64 - query_bits)) - bounds[:-1].astype(
        np.uint64)
    for begin in range(0, len(hashes), _KEY_BLOCK):
        end = min(begin + _KEY_BLOCK, len(hashes))
        first, last = np.searchsorted(bounds, [begin, end - 1], side="right") - 1  # the block's queries
        counts = np.diff(np.clip(bounds[first:last + 2], begin, end))
        block = hashes[begin:end]
        block >>= np.uint64(query_bits)
        block &= ~_low(line_bits)
        block |= np.repeat(offsets[first:last + 1], counts) + np.arange(begin, end, dtype=np.uint64)
    return hashes


def _lines_of(lookup: Lookup, keys: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """The table lines of ``lookup`` keys."""
    return bounds[(keys >> np.uint64(64 - lookup.query_bits)).astype(np.int64)] + (
        keys & _low(lookup.line_bits)).astype(np.int64)


def _repeats_document(lookup: Lookup, bounds: np.ndarray, documents: np.ndarray) -> bool:
    """Whether a query lists a document twice: keys alike but for the place in the query (a block of keys at a
    time), compared exactly."""
    shift = np.uint64(lookup.line_bits)
    near = [np.zeros(0, dtype=np.int64)]
    for begin in range(0, len(lookup.keys), _KEY_BLOCK):
        prefixes = lookup.keys[begin:begin + _KEY_BLOCK + 1] >> shift
        alike = np.flatnonzero(prefixes[1:] == prefixes[:-1]) + begin
        near += [alike, alike + 1]
    near = np.unique(np.concatenate(near))
    if not len(near):
        return False
    pairs = list(zip((lookup.keys[near] >> shift).tolist(),
                     documents[_lines_of(lookup, lookup.keys[near], bounds)].tolist()))
    return len(set(pairs)) < len(pairs)


def parse_table(path: str | os.PathLike[str], fields: int, exact: bool, value_field: int,
                integer: bool) -> Table | None:
    """The data lines of a regular TREC file (see the module's docstring) grouped by query, their ``value_field``
    as float64 (``integer``: int64); None when the file is not regular or names a document twice for a query.
    The file is read and parsed a piece at a time, each piece's arrays small enough to stay in the CPU cache."""
    found: _Lines | None = None
    with open(path, "rb") as handle:
        for raw in _pieces(handle):
            piece = _piece(raw, fields, exact, value_field, integer) if _utf8_without_wide_spaces(raw) else None
            if piece is None:
                return None
            if found is None:  # room for the lines of the file, if all like the first piece's, and some more
                size = os.fstat(handle.fileno()).st_size
                found = _Lines(len(piece.values) * size // len(raw) * 9 // 8 + 1024, integer)
            found.add(piece)
    if found is None:
        found = _Lines(0, integer)
    found.trimmed()
    lines, documents, hashes, values = found.count, found.documents, found.hashes, found.values
    numbers: dict[bytes, int] = {}
    head_codes = np.array([numbers.setdefault(query, len(numbers)) for query in found.queries], dtype=np.int64)
    heads = np.concatenate(found.heads or [np.zeros(0, dtype=np.int64)])
    del found
    bounds = np.append(heads, lines)
    if len(heads) != len(numbers):  # a query's lines not all together
        codes = np.repeat(head_codes, np.diff(bounds))
        grouped = np.argsort(codes, kind="stable")
        documents, hashes, values = documents[grouped], hashes[grouped], values[grouped]
        bounds = np.searchsorted(codes[grouped], np.arange(len(numbers) + 1))
        del codes, grouped
    query_bits, line_bits = max(_bits(len(numbers)), 1), _bits(int(np.diff(bounds).max(initial=0)))
    if query_bits + line_bits > 56:  # too few bits left for the hashes
        return None
    keys = _keyed(hashes, bounds, query_bits, line_bits)
    keys.sort()
    for array in (bounds, documents, values, keys):  # read-only, as the table (pairing hands out views of them)
        array.flags.writeable = False
    table = Table([query.decode("utf-8") for query in numbers], bounds, documents, values,
                  Lookup(keys, query_bits, line_bits))
    return None if _repeats_document(table.lookup, bounds, table.documents) else table


def judged_scores(run: Table, qrels: Table, runs_of: np.ndarray, starts: np.ndarray, count: int) -> np.ndarray:
    """The score in its query's run of each of ``count`` judged documents: qrels query ``i``'s lines at
    ``starts[i]:``, its run query ``runs_of[i]`` (-1: none, or the query is not scored); NaN: not retrieved. Both
    tables are whole-file parses; the judged documents are sought a block at a time, in the order of their keys."""
    found = np.full(count, math.nan)
    retrieved, judged = run.lookup, qrels.lookup
    hash_bits = min(64 - retrieved.query_bits - retrieved.line_bits, 64 - judged.query_bits - judged.line_bits)
    shift = np.uint64(64 - retrieved.query_bits - hash_bits)  # keys alike above it: same query and hash
    for begin in range(0, len(judged.keys), _KEY_BLOCK):
        keys = judged.keys[begin:begin + _KEY_BLOCK]
        queries = (keys >> np.uint64(64 - judged.query_bits)).astype(np.int64)
        scored = runs_of[queries] >= 0
        keys, queries = keys[scored], queries[scored]
        sought = ((keys << np.uint64(judged.query_bits)) >> np.uint64(64 - hash_bits)) << shift
        sought |= runs_of[queries].astype(np.uint64) << np.uint64(64 - retrieved.query_bits)
        places = (keys & _low(judged.line_bits)).astype(np.int64)
        judged_lines, positions = qrels.bounds[queries] + places, starts[queries] + places
        at = np.searchsorted(retrieved.keys, sought)
        while len(at):  # a key alike but another document (the hashes' top bits alike): the next key
            inside = at < len(retrieved.keys)
            candidates = retrieved.keys[np.where(inside, at, 0)]
            alike = inside & ((candidates >> shift) == (sought >> shift))
            at, candidates, sought, judged_lines, positions = (
                array[alike] for array in (at, candidates, sought, judged_lines, positions))
            run_lines = _lines_of(retrieved, candidates, run.bounds)
            same = run.documents[run_lines] == qrels.documents[judged_lines]
            found[positions[same]] = run.values[run_lines[same]]
            at, sought, judged_lines, positions = (array[~same] for array in (at, sought, judged_lines, positions))
            at += 1
    return found
