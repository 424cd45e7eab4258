"""Named sufficient statistics: per-example records, exact reduction to corpus totals, merging of shards.

A metric describes its statistics once, as a :class:`StatsSchema` (field names
and how each field reduces across examples). Per-example records, the columns
that ``datasets.Dataset.map`` writes, and totals computed on separate shards or
machines all reduce through the same schema, so a corpus score computed from
merged shard totals equals the one-shot score exactly. Every record and total
carries the signature of the options that produced it; merging statistics
made with different options is an error.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Reduction = Literal["sum", "fsum", "min", "max"]

SIGNATURE_FIELD = "signature"


@dataclass(frozen=True)
class StatField:
    """One named statistic and how it reduces across examples (``fsum`` for float sums)."""

    name: str
    reduce: Reduction = "sum"


def _reduce(reduction: Reduction, values: Iterable[Any]) -> Any:
    if reduction == "sum":
        return sum(values)
    if reduction == "fsum":
        return math.fsum(values)
    if reduction == "min":
        return min(values)
    return max(values)


@dataclass(frozen=True)
class StatsSchema:
    """The sufficient statistics of one metric."""

    metric: str
    fields: tuple[StatField, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(field.name for field in self.fields)

    def record(self, values: Sequence[Any], signature: str) -> dict[str, Any]:
        """A per-example record from values given in schema order."""
        record = dict(zip(self.names, values, strict=True))
        record[SIGNATURE_FIELD] = signature
        return record

    def columns(self, rows: Sequence[Sequence[Any]], signature: str) -> dict[str, list[Any]]:
        """Column form of many per-example rows (what ``Dataset.map(batched=True)`` expects)."""
        columns: dict[str, list[Any]] = {name: [] for name in self.names}
        for name, values in zip(self.names, zip(*rows), strict=False):
            columns[name] = list(values)
        columns[SIGNATURE_FIELD] = [signature] * len(rows)
        return columns

    def totals_of_rows(self, rows: Sequence[Sequence[Any]], signature: str) -> dict[str, Any]:
        """Corpus totals of per-example rows given in schema order."""
        if not rows:
            raise ValueError(f"{self.metric}: no statistics to reduce; the score of an empty corpus is undefined")
        totals = {
            field.name: _reduce(field.reduce, values)
            for field, values in zip(self.fields, zip(*rows), strict=True)
        }
        totals[SIGNATURE_FIELD] = signature
        return totals

    def totals(self, stats: Any, *, expected_signature: str | None = None) -> dict[str, Any]:
        """Reduce statistics in any supported form to corpus totals.

        ``stats`` may be totals (a mapping of scalars), columns (a mapping of
        sequences, e.g. a ``datasets.Dataset`` or its ``to_dict()``), an iterable
        of per-example records, or an iterable of totals from several shards.
        """
        if isinstance(stats, Mapping) or hasattr(stats, "column_names"):
            columns = self._as_columns(stats)
        else:
            records = list(stats)
            if not records:
                raise ValueError(f"{self.metric}: no statistics to reduce; the score of an empty corpus is undefined")
            for index, record in enumerate(records):
                if not isinstance(record, Mapping):
                    raise TypeError(
                        f"{self.metric}: statistics record {index} must be a mapping of field names to numbers, "
                        f"got {type(record).__name__}"
                    )
            columns = {
                name: [self._field(record, name, index) for index, record in enumerate(records)]
                for name in (*self.names, SIGNATURE_FIELD)
            }
        signatures = set(columns[SIGNATURE_FIELD])
        if len(signatures) != 1:
            raise ValueError(
                f"{self.metric}: statistics computed with different options cannot be merged; "
                f"signatures found: {sorted(signatures)}"
            )
        (signature,) = signatures
        if expected_signature is not None and signature != expected_signature:
            raise ValueError(
                f"{self.metric}: the statistics were computed with options {signature!r} "
                f"but the score was asked for with {expected_signature!r}; pass the same options"
            )
        totals = {field.name: _reduce(field.reduce, columns[field.name]) for field in self.fields}
        totals[SIGNATURE_FIELD] = signature
        return totals

    def merge(self, *totals: Mapping[str, Any]) -> dict[str, Any]:
        """Merge totals of several shards into the totals of their union."""
        return self.totals(list(totals))

    def _field(self, record: Mapping[str, Any], name: str, index: int) -> Any:
        if name not in record:
            raise ValueError(f"{self.metric}: statistics record {index} lacks the field {name!r}")
        return record[name]

    def _as_columns(self, stats: Any) -> dict[str, list[Any]]:
        available = set(stats.column_names if hasattr(stats, "column_names") else stats.keys())
        missing = [name for name in (*self.names, SIGNATURE_FIELD) if name not in available]
        if missing:
            raise ValueError(
                f"{self.metric}: the statistics lack the fields {missing}; "
                f"expected {list(self.names) + [SIGNATURE_FIELD]}"
            )
        columns = {}
        for name in (*self.names, SIGNATURE_FIELD):
            value = stats[name]
            if isinstance(value, (str, int, float)):
                columns[name] = [value]
            else:
                columns[name] = list(value)
        if len({len(values) for values in columns.values()}) != 1:
            raise ValueError(f"{self.metric}: statistics columns have different lengths")
        if not columns[SIGNATURE_FIELD]:
            raise ValueError(f"{self.metric}: no statistics to reduce; the score of an empty corpus is undefined")
        return columns
