"""Users' input files read as data, safely: text (one segment per line), JSONL and CSV, for the scorer
(scripts/score.py) and the comparison (scripts/compare.py).

Every reader decodes UTF-8 line by line and strips a byte-order mark at the start of the file (what Windows
editors and Excel write; it is not part of the first segment, query id or column name). A problem stops the
read with an :class:`InputFileError` naming the file and the line: text that is not UTF-8, a line longer than
the bound (``max_line_bytes``, :data:`DEFAULT_MAX_LINE_BYTES` unless given; 0 lifts it), a JSONL line that is
not JSON, nests deeper than Python's parser can follow or is not an object, a CSV row whose fields do not match
the header. A line is never read whole before its length is checked, so a file without newlines cannot fill the
memory.

The bound: the metrics' per-example work grows with the length of one segment (a 5 MB line takes about 1 GB and
10 s in sacrebleu's BLEU, a 58 MB line more memory than a 24 GB machine has), so a segment over 1,000,000 bytes
(about 170,000 words, longer than a novel's chapter) is refused up front unless the bound is raised.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DEFAULT_MAX_LINE_BYTES = 1_000_000
BOM = "\ufeff"
_CHUNK = 1 << 20


class InputFileError(ValueError):
    """An input file that cannot be read as the data it should hold; the message names the file and line."""


def checked_bound(value: int, option: str = "--max-line-bytes") -> int:
    """``value`` as a line bound (0: none); ValueError for a negative one."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{option} must be a whole number of bytes, at least 0 (0: no bound), got {value!r}")
    return value


def _size(count: int) -> str:
    return f"{count:,} bytes"


def _too_long(path: Path, number: int, length: int, limit: int) -> InputFileError:
    return InputFileError(
        f"{os.fspath(path)}:{number}: the line is {_size(length)} long, more than the bound of {_size(limit)} "
        f"a line (one segment or record) may have; split the text, or raise the bound (--max-line-bytes, 0 for "
        "none) if the machine has the memory"
    )


def raw_lines(path: Path, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes without the final newline) of each line; a line over ``max_line_bytes`` (0: no bound)
    is measured without being kept and refused."""
    with open(path, "rb") as handle:
        number = 0
        while True:
            raw = handle.readline(max_line_bytes + 1) if max_line_bytes else handle.readline()
            if not raw:
                return
            number += 1
            ended = raw.endswith(b"\n")
            body = raw[:-1] if ended else raw
            if max_line_bytes and len(body) > max_line_bytes:
                length = len(body)
                while not ended:
                    chunk = handle.readline(_CHUNK)
                    if not chunk:
                        break
                    ended = chunk.endswith(b"\n")
                    length += len(chunk) - ended
                raise _too_long(path, number, length, max_line_bytes)
            yield number, body


def decoded_lines(path: Path, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line (UTF-8; a byte-order mark at the start of the file dropped; only ``\\n``
    ends a line, so a ``\\r`` or a Unicode line separator stays in its segment, as sacreBLEU reads files)."""
    for number, raw in raw_lines(path, max_line_bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InputFileError(f"{os.fspath(path)}:{number}: not UTF-8 text ({error.reason} at byte "
                                 f"{error.start + 1} of the line); save the file as UTF-8") from None
        if number == 1 and text.startswith(BOM):
            text = text[1:]
        yield number, text


def text_lines(path: Path, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> list[str]:
    """The segments of a one-segment-per-line text file."""
    return [text for _, text in decoded_lines(path, max_line_bytes)]


def _json_value(path: Path, number: int, line: str) -> Any:
    try:
        return json.loads(line)
    except RecursionError:
        raise InputFileError(f"{os.fspath(path)}:{number}: the JSON nests too deeply to be read (arrays or objects "
                             "inside each other thousands of times)") from None
    except ValueError as error:  # JSONDecodeError, and an integer of more digits than Python converts
        raise InputFileError(f"{os.fspath(path)}:{number} is not JSON: {error}") from None


def jsonl_records(path: Path, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) of each non-blank line of a JSONL file."""
    records = []
    for number, line in decoded_lines(path, max_line_bytes):
        if not line.strip():
            continue
        value = _json_value(path, number, line)
        if not isinstance(value, dict):
            kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(type(value),
                                                                                                "a number")
            raise InputFileError(f"{os.fspath(path)}:{number} holds {kind}, not an object; each line of a JSONL "
                                 "file must be one JSON object ({\"key\": value, ...})")
        records.append((number, value))
    return records


def csv_records(path: Path, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> list[tuple[int, dict[str, str]]]:
    """(line number, {column: cell text}) of each row of a CSV file with a header line; cells stay text (the
    caller decides which columns are numbers). A field may span lines inside quotes; a field over the line bound
    is refused too."""
    lines = ((number, text + "\n") for number, text in decoded_lines(path, max_line_bytes))
    current = [0]

    def texts() -> Iterator[str]:
        for number, text in lines:
            current[0] = number
            yield text

    previous = csv.field_size_limit(max_line_bytes or 2**31 - 1)
    try:
        reader = csv.reader(texts(), strict=True)
        try:
            header = next(reader, None)
            if header is None:
                raise InputFileError(f"{os.fspath(path)}: the CSV file is empty; it needs a header line naming the "
                                     "columns")
            if any(not name for name in header) or len(set(header)) != len(header):
                raise InputFileError(f"{os.fspath(path)}:1: the header line {header!r:.200} must name every column, "
                                     "each once")
            records = []
            for row in reader:
                if not row:
                    continue
                if len(row) != len(header):
                    raise InputFileError(f"{os.fspath(path)}:{current[0]}: {len(row)} fields, but the header names "
                                         f"{len(header)} columns")
                records.append((current[0], dict(zip(header, row))))
            return records
        except csv.Error as error:
            if "field larger than field limit" in str(error):
                raise InputFileError(
                    f"{os.fspath(path)}:{current[0]}: a field is longer than the bound of {_size(max_line_bytes)} "
                    "a segment may have; split the text, or raise the bound (--max-line-bytes, 0 for none)"
                ) from None
            raise InputFileError(f"{os.fspath(path)}:{current[0]}: not valid CSV ({error})") from None
    finally:
        csv.field_size_limit(previous)
