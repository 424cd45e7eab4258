"""What a comparison reads: one reference set, N systems' outputs and optional sources, checked before scoring."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import project  # noqa: F401 - puts the repository root on sys.path, so the core imports as metrics._core
from comparison.files import DEFAULT_MAX_LINE_BYTES, InputFileError, jsonl_records, text_lines


class ComparisonError(ValueError):
    """Input that cannot be compared (lengths, missing files, unknown metrics): raised before any scoring."""


@dataclass(frozen=True)
class ComparisonData:
    """Line-aligned examples: references (one list per example), each system's outputs, optional sources."""

    references: list[list[str]]
    systems: dict[str, list[str]]
    sources: list[str] | None = None

    def __post_init__(self) -> None:
        if not self.systems:
            raise ComparisonError("compare: no system outputs given")
        if not self.references:
            raise ComparisonError("compare: the reference set is empty")
        size = len(self.references)
        for name, outputs in self.systems.items():
            if len(outputs) != size:
                raise ComparisonError(f"compare: system {name!r} has {len(outputs)} outputs but there are {size} "
                                      "references; every system must answer every example, in order")
            for index, output in enumerate(outputs):
                if not isinstance(output, str):
                    raise ComparisonError(f"compare: system {name!r} output {index} is a "
                                          f"{type(output).__name__}, not a string")
        for index, group in enumerate(self.references):
            if not group or not all(isinstance(reference, str) for reference in group):
                raise ComparisonError(f"compare: references of example {index} must be one or more strings")
        if self.sources is not None and len(self.sources) != size:
            raise ComparisonError(f"compare: {len(self.sources)} sources for {size} references")

    @property
    def size(self) -> int:
        return len(self.references)

    @property
    def single_references(self) -> bool:
        return all(len(group) == 1 for group in self.references)


def _as_reference_groups(references: Sequence[Any]) -> list[list[str]]:
    return [list(group) if isinstance(group, (list, tuple)) else group for group in references]


def from_columns(references: Sequence[Any], systems: Mapping[str, Sequence[str]],
                 sources: Sequence[str] | None = None) -> ComparisonData:
    """Data from in-memory columns (lists, or columns of a ``datasets.Dataset``): a reference per example, or a list
    of references per example."""
    groups = [[group] if isinstance(group, str) else group for group in _as_reference_groups(list(references))]
    return ComparisonData(groups, {name: list(outputs) for name, outputs in systems.items()},
                          list(sources) if sources is not None else None)


def read_file(reader, path: Path, what: str, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Any:
    """What ``reader`` (a reader of ``comparison.files``) reads from ``path``; ComparisonError naming the file (and
    the line) when it is missing, unreadable, not UTF-8, has a line over the bound or is not the data it should
    hold."""
    if not path.is_file():
        raise ComparisonError(f"compare: {what} file {path} does not exist")
    try:
        return reader(path, max_line_bytes)
    except InputFileError as error:
        raise ComparisonError(f"compare: {error}") from None
    except OSError as error:
        raise ComparisonError(f"compare: cannot read {what} file {path}: {error.strerror or error}") from None


def _read(path: Path, what: str, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> list[str]:
    return read_file(text_lines, path, what, max_line_bytes)


def system_name(spec: str) -> tuple[str, Path]:
    """``name=path`` or a path (named by its file name without the extension)."""
    name, separator, path = spec.partition("=")
    if separator and name and path:
        return name, Path(path)
    return Path(spec).stem, Path(spec)


def from_files(reference_files: Sequence[Path], system_specs: Sequence[str],
               source_file: Path | None = None, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> ComparisonData:
    """Data from one-segment-per-line files: reference files (several give several references per example),
    system files (``name=path`` or a path) and an optional source file (UTF-8, a leading byte-order mark dropped,
    no line over ``max_line_bytes``; see ``comparison.files``)."""
    if not reference_files:
        raise ComparisonError("compare: give at least one reference file")
    streams = [_read(path, "reference", max_line_bytes) for path in reference_files]
    for path, stream in zip(reference_files, streams):
        if len(stream) != len(streams[0]):
            raise ComparisonError(f"compare: reference file {path} has {len(stream)} lines but "
                                  f"{reference_files[0]} has {len(streams[0])}")
    systems: dict[str, list[str]] = {}
    for spec in system_specs:
        name, path = system_name(spec)
        if name in systems:
            raise ComparisonError(f"compare: two systems are named {name!r}; name them with name=path")
        systems[name] = _read(path, f"system {name!r}", max_line_bytes)
    sources = _read(source_file, "source", max_line_bytes) if source_file is not None else None
    return ComparisonData([list(group) for group in zip(*streams)], systems, sources)


def from_jsonl(path: Path, system_fields: Sequence[str], reference_field: str = "reference",
               source_field: str | None = None, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> ComparisonData:
    """Data from a JSONL file with one object per example: a reference field (a string or a list of strings),
    one field per system and an optional source field."""
    records = read_file(jsonl_records, path, "JSONL", max_line_bytes)
    if not records:
        raise ComparisonError(f"compare: {path} holds no records")
    wanted = [reference_field, *system_fields, *([source_field] if source_field else [])]
    for number, record in records:
        missing = [field for field in wanted if field not in record]
        if missing:
            raise ComparisonError(f"compare: {path}:{number} has no field {missing[0]!r}")
    return from_columns([record[reference_field] for _, record in records],
                        {field: [record[field] for _, record in records] for field in system_fields},
                        [record[source_field] for _, record in records] if source_field else None)
