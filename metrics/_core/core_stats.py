"""Named sufficient statistics: per-example records, exact reduction to corpus totals, merging of shards.

A metric describes its statistics once, as a :class:`StatsSchema` (field names
and how each field reduces across examples). Per-example records, the columns
that ``datasets.Dataset.map`` writes, and totals computed on separate shards or
machines all reduce through the same schema, so a corpus score computed from
merged shard totals equals the one-shot score exactly. Every record and total
carries the signature of the options that produced it; merging statistics
made with different options is an error.

Float statistics (``fsum`` fields) are summed exactly: totals hold the
correctly rounded sum and, under ``<field>__residual``, the few floats whose
sum is the rounding error, so totals of shards merge to the same bits as one
``math.fsum`` over every example, in any order and grouping. Vectorised totals
of numpy arrays (:func:`exact_group_sums`, :func:`exact_column_sums`) give the
same bits from a few ``numpy.bincount`` passes.

Keyed statistics (``keyed`` and ``keyed_fsum`` fields) are counts whose keys are
not known in advance, such as per-class or per-entity-type counts: each
example holds a mapping from key (a string, an integer, or a tuple of them) to
a number, and totals hold the per-key sums (``keyed_fsum``: exact float sums,
residuals per key). In the column form that ``datasets.Dataset.map`` stores,
a keyed value is a JSON string of ``[key, value]`` pairs (tuples as lists).

Statistics arrive in whatever form the engine that computed them hands back:
columns (a mapping of lists or arrays, a ``datasets.Dataset``, a pandas
DataFrame, a pyarrow Table), per-example records (mappings, Spark ``Row``
objects), lists of column batches, or totals of shards. Totals say how many
examples they sum (:data:`EXAMPLES_FIELD`), so per-example rows, which
resampling needs, are never confused with them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Literal

import numpy as np

Reduction = Literal["sum", "fsum", "min", "max", "keyed", "keyed_fsum"]
Key = str | int | tuple[Any, ...]
KEYED_REDUCTIONS = ("keyed", "keyed_fsum")

SIGNATURE_FIELD = "signature"
RESIDUAL_SUFFIX = "__residual"
# In totals: the number of examples they sum (absent from a per-example record, which counts as one).
EXAMPLES_FIELD = "reduced_examples"
_DATASET_BATCH = 1 << 16
# Significant bits of a float64: whole numbers below 2**53 in magnitude, and their sums below it, are exact.
_MANTISSA_BITS = 53
# Exact sums of numpy arrays cut values into at most this many integer limbs (wider spans: sorted, math.fsum).
_MAX_LIMBS = 8
# The least power of two that is a normal float64.
_LOWEST_NORMAL_EXPONENT = -1022
# Values spread over an array that are checked on a grid before all of them (values off a grid mostly show there).
_GRID_SAMPLE = 64


class EmptyStatistics(ValueError):
    """Statistics of no example: the score of an empty corpus is undefined."""


@dataclass(frozen=True)
class StatField:
    """One named statistic and how it reduces across examples (``fsum`` for float sums)."""

    name: str
    reduce: Reduction = "sum"


def exact_float_sum(values: Iterable[float]) -> tuple[float, list[float]]:
    """The correctly rounded sum of ``values`` and residuals such that sum + residuals is the exact sum."""
    values = list(values)
    total = math.fsum(values)
    residuals: list[float] = []
    subtracted = [-total]
    while len(residuals) < 64:
        residual = math.fsum(chain(values, subtracted))
        if residual == 0.0:
            break
        residuals.append(residual)
        subtracted.append(-residual)
    return total, residuals


def exact_group_sums(groups: np.ndarray, size: int, values: np.ndarray) -> tuple[np.ndarray, dict[int, list[float]]]:
    """Per group 0..size-1 of finite float64 ``values`` (``values[i]`` in group ``groups[i]``): the correctly
    rounded sum, and the residuals of inexact groups, as :func:`exact_float_sum` gives them for the group's values.

    Values that are whole multiples of a power of two coarse enough for every
    partial sum to be exact (integers, halves, ...) are summed by one
    ``numpy.bincount``; other values are cut into integer limbs on a common
    binary grid, each summed exactly by one ``bincount`` (spans of up to 8
    limbs: about 200 bits for 2**27 values, more for fewer); wider spans are
    sorted by group and summed with ``math.fsum``.
    """
    return _exact_sums(values, size, lambda parts: np.bincount(groups, weights=parts, minlength=size), lambda: groups)


def exact_column_sums(columns: Sequence[np.ndarray]) -> list[tuple[float, list[float]]]:
    """:func:`exact_float_sum` of each column (columns of one length, finite floats): :func:`exact_group_sums` of
    the columns as groups."""
    if not columns:
        return []
    matrix = np.array(columns, dtype=np.float64)
    count, length = matrix.shape
    # each group is a row of the matrix: its sums are row sums, several times faster than a bincount
    sums, residuals = _exact_sums(matrix.reshape(-1), count, lambda parts: parts.reshape(count, length).sum(axis=1),
                                  lambda: np.repeat(np.arange(count), length))
    return [(total, residuals.get(column, [])) for column, total in enumerate(sums.tolist())]


def _exact_sums(values: np.ndarray, size: int, group_sums: Callable[[np.ndarray], np.ndarray],
                groups: Callable[[], np.ndarray]) -> tuple[np.ndarray, dict[int, list[float]]]:
    """Exact group sums (:func:`exact_group_sums`) of ``values``, given the sums of each of ``size`` groups of any
    values in ``values``' layout (any order of addition: they are exact here) and the group of each value."""
    magnitudes = np.abs(values)
    bound = 2.0 * float(np.sum(magnitudes))  # above the sum of the magnitudes, which bounds every partial sum
    if bound == 0.0:
        return np.zeros(size), {}
    lowest = math.frexp(float(np.where(magnitudes > 0.0, magnitudes, math.inf).min()))[1]
    top = math.frexp(float(np.max(magnitudes)))[1]  # every value is below 2**top in magnitude
    coarse = math.frexp(bound)[1] - _MANTISSA_BITS  # partial sums in units of 2**coarse stay below 2**53
    if math.isfinite(bound) and _on_grid(values, coarse, lowest):
        return group_sums(values), {}
    grid = lowest - _MANTISSA_BITS  # every value is a whole multiple of 2**grid
    limb_bits = _MANTISSA_BITS - len(values).bit_length()  # sums of len(values) limbs below 2**limb_bits are exact
    limbs = -(-(top - grid) // limb_bits)
    if limbs > _MAX_LIMBS:
        return _sorted_sums(groups(), size, values)
    return _limb_sums(values, size, group_sums, grid, limb_bits, limbs)


def _on_grid(values: np.ndarray, grid: int, lowest: int) -> bool:
    """Whether every value is a whole multiple of 2**grid (``lowest``: no nonzero value is below 2**(lowest - 1)
    in magnitude); values spread over the array first."""
    if grid <= lowest - _MANTISSA_BITS:
        return True
    if grid >= lowest:  # the smallest nonzero value is below 2**grid
        return False
    for checked in (values[:: max(1, len(values) // _GRID_SAMPLE)], values):
        scaled = np.ldexp(checked, -grid)  # exact: no nonzero value falls below 1
        if not np.array_equal(np.trunc(scaled), scaled):
            return False
    return True


def _limb_sums(values: np.ndarray, size: int, group_sums: Callable[[np.ndarray], np.ndarray], grid: int,
               limb_bits: int, limbs: int) -> tuple[np.ndarray, dict[int, list[float]]]:
    """Exact group sums from limbs of ``limb_bits`` bits of the values in units of 2**grid (every step exact in
    float64: scaling by powers of two, truncation, the difference of a whole number and its high part, and sums
    of ``len(values)`` limbs below 2**limb_bits)."""
    scaled = np.ldexp(values, -grid)
    unit = math.ldexp(1.0, limb_bits)
    limb_sums = []
    for _ in range(limbs - 1):
        high = np.trunc(scaled * (1.0 / unit))
        limb_sums.append(group_sums(scaled - high * unit))
        scaled = high
    limb_sums.append(group_sums(scaled))
    summed = np.flatnonzero(np.logical_or.reduce([limb_sum != 0.0 for limb_sum in limb_sums]))
    columns = [limb_sum[summed].tolist() for limb_sum in limb_sums]
    sums = np.zeros(size)
    residuals: dict[int, list[float]] = {}
    for position, group in enumerate(summed.tolist()):
        exact = sum(int(column[position]) << (limb_bits * limb) for limb, column in enumerate(columns))
        sums[group], residual = _exact_parts(exact, grid)
        if residual:
            residuals[group] = residual
    return sums, residuals


def _sorted_sums(groups: np.ndarray, size: int, values: np.ndarray) -> tuple[np.ndarray, dict[int, list[float]]]:
    """Exact group sums of the values sorted by group, each by :func:`exact_float_sum`."""
    # Stable sorts of 16-bit integers are radix sorts.
    order = np.argsort(groups.astype(np.uint16) if size <= 1 << 16 else groups, kind="stable")
    ordered = values[order].tolist()
    ends = np.cumsum(np.bincount(groups, minlength=size)).tolist()
    sums = np.zeros(size)
    residuals: dict[int, list[float]] = {}
    start = 0
    for group, end in enumerate(ends):
        if end > start:
            sums[group], residual = exact_float_sum(ordered[start:end])
            if residual:
                residuals[group] = residual
        start = end
    return sums, residuals


def _rounded(units: int, grid: int) -> float:
    """units * 2**grid correctly rounded to a float (subnormals included)."""
    if grid >= _LOWEST_NORMAL_EXPONENT:  # a nonzero result is normal: scaling the rounded integer is exact
        return math.ldexp(float(units), grid)
    return units / (1 << -grid)


def _in_units(value: float, grid: int) -> int:
    """``value`` (a whole multiple of 2**grid) as an integer number of 2**grid."""
    numerator, denominator = value.as_integer_ratio()
    shift = -grid - (denominator.bit_length() - 1)
    return numerator << shift if shift >= 0 else numerator >> -shift


def _exact_parts(units: int, grid: int) -> tuple[float, list[float]]:
    """:func:`exact_float_sum`'s form of the number units * 2**grid: its correctly rounded value, then the
    correctly rounded remainders until nothing remains."""
    total = _rounded(units, grid)
    remainder = units - _in_units(total, grid)
    residuals: list[float] = []
    while remainder and len(residuals) < 64:
        residuals.append(_rounded(remainder, grid))
        remainder -= _in_units(residuals[-1], grid)
    return total, residuals


def _reduce(reduction: Reduction, values: Sequence[Any]) -> Any:
    if reduction == "sum":
        return sum(values)
    if reduction == "min":
        return min(values)
    return max(values)


def encode_keyed(value: Mapping[Key, Any]) -> str:
    """A keyed statistic as the JSON string stored in ``datasets`` columns (``[[key, value], ...]``)."""
    return json.dumps([[list(key) if isinstance(key, tuple) else key, number] for key, number in value.items()])


def _as_key(key: Any) -> Key:
    return tuple(_as_key(part) for part in key) if isinstance(key, list) else key


def decode_keyed(value: str | Mapping[Key, Any]) -> Mapping[Key, Any]:
    """A keyed statistic from its JSON column form (a mapping is returned as it is)."""
    if isinstance(value, str):
        return {_as_key(key): number for key, number in json.loads(value)}
    return value


def _sum_keyed(mappings: Iterable[Mapping[Key, Any]]) -> dict[Key, Any]:
    totals: dict[Key, Any] = {}
    for mapping in mappings:
        for key, number in decode_keyed(mapping).items():
            totals[key] = totals.get(key, 0) + number
    return totals


def _fsum_keyed(mappings: Iterable[Mapping[Key, Any]], residuals: Iterable[Any]) -> tuple[dict, dict]:
    values: dict[Key, list[float]] = {}
    for mapping in chain(mappings, (residual for residual in residuals if residual)):
        for key, number in decode_keyed(mapping).items():
            parts = values.setdefault(key, [])
            if isinstance(number, list):
                parts.extend(number)
            else:
                parts.append(number)
    totals, residual_totals = {}, {}
    for key, parts in values.items():
        totals[key], residual = exact_float_sum(parts)
        if residual:
            residual_totals[key] = residual
    return totals, residual_totals


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
        for field, values in zip(self.fields, zip(*rows), strict=False):
            keyed = field.reduce in KEYED_REDUCTIONS
            columns[field.name] = [encode_keyed(value) for value in values] if keyed else list(values)
        columns[SIGNATURE_FIELD] = [signature] * len(rows)
        return columns

    def position(self, name: str) -> int:
        """The position of field ``name`` in a row."""
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(f"{self.metric}: no statistic named {name!r}; fields are {list(self.names)}") from None

    def column(self, rows: Sequence[Sequence[Any]], name: str) -> list[Any]:
        """The values of field ``name`` in each row."""
        position = self.position(name)
        return [row[position] for row in rows]

    def named(self, row: Sequence[Any]) -> dict[str, Any]:
        """One row (e.g. resampled sums) as a mapping from field name to value."""
        return dict(zip(self.names, row, strict=True))

    def totals_of_rows(self, rows: Sequence[Sequence[Any]], signature: str) -> dict[str, Any]:
        """Corpus totals of per-example rows given in schema order."""
        if not rows:
            raise ValueError(f"{self.metric}: no statistics to reduce; the score of an empty corpus is undefined")
        return self._reduce_columns(dict(zip(self.names, zip(*rows), strict=True)), signature, len(rows))

    def _reduce_columns(self, columns: Mapping[str, Sequence[Any]], signature: str, examples: int) -> dict[str, Any]:
        totals: dict[str, Any] = {}
        for field in self.fields:
            values = columns[field.name]
            residuals = columns.get(field.name + RESIDUAL_SUFFIX, ())
            if field.reduce == "fsum":
                total, residual = exact_float_sum(chain(values, chain.from_iterable(residuals)))
                totals[field.name] = total
                totals[field.name + RESIDUAL_SUFFIX] = residual
            elif field.reduce == "keyed":
                totals[field.name] = _sum_keyed(values)
            elif field.reduce == "keyed_fsum":
                totals[field.name], totals[field.name + RESIDUAL_SUFFIX] = _fsum_keyed(values, residuals)
            else:
                totals[field.name] = _reduce(field.reduce, values)
        totals[EXAMPLES_FIELD] = examples
        totals[SIGNATURE_FIELD] = signature
        return totals

    def totals(self, stats: Any, *, expected_signature: str | None = None,
               empty_signature: str | None = None) -> dict[str, Any]:
        """Reduce statistics in any supported form to corpus totals.

        ``stats`` may be totals (a mapping of scalars), columns (a mapping of sequences or arrays, e.g. a
        ``datasets.Dataset`` or its ``to_dict()``, a pandas DataFrame, a pyarrow Table), an iterable of
        per-example records (mappings or Spark ``Row`` objects), of column batches (``example_stats`` results,
        DataFrames, Tables, RecordBatches), or of totals from several shards. Totals of no example (an empty
        shard's) merge as nothing; statistics of no example at all are an error, unless ``empty_signature`` is
        given: they then reduce to the empty totals under it (:meth:`empty_totals`).
        """
        if hasattr(stats, "iter") and hasattr(stats, "column_names") and len(stats) > _DATASET_BATCH:
            partials = [self.totals(batch) for batch in stats.iter(batch_size=_DATASET_BATCH)]
            return self.totals(partials, expected_signature=expected_signature)
        try:
            columns = self._checked_columns(stats, expected_signature)
        except EmptyStatistics:
            if empty_signature is None:
                raise
            return self.empty_totals(empty_signature)
        counts = columns.pop(EXAMPLES_FIELD, None)
        examples = len(columns[SIGNATURE_FIELD]) if counts is None else sum(counts)
        return self._reduce_columns(columns, columns[SIGNATURE_FIELD][0], examples)

    def empty_totals(self, signature: str) -> dict[str, Any]:
        """The totals of no example (what an empty shard reduces to): they merge with any totals as nothing."""
        empty: dict[str, Any] = {}
        for field in self.fields:
            empty[field.name] = {"sum": 0, "fsum": 0.0, "keyed": {}, "keyed_fsum": {}}.get(field.reduce)
            if field.reduce in ("fsum", "keyed_fsum"):
                empty[field.name + RESIDUAL_SUFFIX] = [] if field.reduce == "fsum" else {}
        return {**empty, EXAMPLES_FIELD: 0, SIGNATURE_FIELD: signature}

    def rows(self, stats: Any, *, expected_signature: str | None = None) -> list[tuple[Any, ...]]:
        """Every example's row (schema order, keyed values as mappings) from per-example statistics in any form
        :meth:`totals` takes, in the order given; totals of several examples are refused (they cannot be split)."""
        columns = self._checked_columns(stats, expected_signature)
        counts = columns.pop(EXAMPLES_FIELD, None)
        if counts is not None and any(count != 1 for count in counts):
            raise ValueError(
                f"{self.metric}: these options need every example's statistics (the rows of `example_stats`, in "
                f"corpus order), not totals of several examples such as `reduce_stats` gives"
            )
        values = []
        for field in self.fields:
            column = columns[field.name]
            values.append([decode_keyed(value) for value in column] if field.reduce in KEYED_REDUCTIONS else column)
        return list(zip(*values, strict=True))

    def _checked_columns(self, stats: Any, expected_signature: str | None) -> dict[str, list[Any]]:
        """The statistics as columns (fields, residuals, signature and, for totals, their example counts), all
        made with one signature (the expected one, when given), without totals of no example."""
        columns = self._columns_of(stats)
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
        counts = columns.get(EXAMPLES_FIELD)
        if counts is not None and 0 in counts:
            kept = [index for index, count in enumerate(counts) if count != 0]
            columns = {name: [values[index] for index in kept] for name, values in columns.items()}
            if not kept:
                raise EmptyStatistics(f"{self.metric}: the statistics hold no example; the score of an empty corpus "
                                      f"is undefined")
        return columns

    def _columns_of(self, stats: Any) -> dict[str, list[Any]]:
        if hasattr(stats, "to_pydict"):  # a pyarrow Table or RecordBatch
            return self._as_columns(stats.to_pydict())
        if _module_of(stats) == "pandas" and hasattr(stats, "columns") and hasattr(stats, "to_dict"):
            return self._as_columns(stats.to_dict("list"))
        if isinstance(stats, Mapping) or hasattr(stats, "column_names"):
            return self._as_columns(stats)
        refused = _refused_form(stats)
        if refused:
            raise TypeError(f"{self.metric}: {refused}")
        records = [_as_mapping(record) for record in stats]
        if not records:
            raise EmptyStatistics(f"{self.metric}: no statistics to reduce; the score of an empty corpus is undefined")
        for index, record in enumerate(records):
            if not isinstance(record, Mapping):
                raise TypeError(
                    f"{self.metric}: statistics record {index} must be a mapping of field names to values (or a Spark "
                    f"Row), got {type(record).__name__}; {_ACCEPTED}"
                )
        if all(isinstance(record.get(SIGNATURE_FIELD), str) for record in records):
            return self._columns_of_records(records)
        # column batches, maybe records among them; empty batches (an engine's empty partitions) add nothing
        parts = [part for part in (self._as_columns(record, allow_empty=True) for record in records)
                 if part[SIGNATURE_FIELD]]
        if not parts:
            raise EmptyStatistics(f"{self.metric}: the statistics hold no example; the score of an empty corpus is "
                                  f"undefined")
        names = set().union(*(part.keys() for part in parts))
        columns: dict[str, list[Any]] = {name: [] for name in names}
        for part in parts:
            size = len(part[SIGNATURE_FIELD])
            for name in names:
                columns[name].extend(part[name] if name in part else [1 if name == EXAMPLES_FIELD else ()] * size)
        return columns

    def _columns_of_records(self, records: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
        columns = {
            name: [_plain(self._field(record, name, index)) for index, record in enumerate(records)]
            for name in (*self.names, SIGNATURE_FIELD)
        }
        for name in self._residual_names():
            columns[name] = [record.get(name, ()) for record in records]
        if any(EXAMPLES_FIELD in record for record in records):
            columns[EXAMPLES_FIELD] = [record.get(EXAMPLES_FIELD, 1) for record in records]
        return columns

    def merge(self, *totals: Mapping[str, Any]) -> dict[str, Any]:
        """Merge totals of several shards into the totals of their union."""
        return self.totals(list(totals))

    def _residual_names(self) -> list[str]:
        return [field.name + RESIDUAL_SUFFIX for field in self.fields if field.reduce in ("fsum", "keyed_fsum")]

    def _field(self, record: Mapping[str, Any], name: str, index: int) -> Any:
        if name not in record:
            raise ValueError(f"{self.metric}: statistics record {index} lacks the field {name!r}")
        return record[name]

    def _as_columns(self, stats: Any, allow_empty: bool = False) -> dict[str, list[Any]]:
        available = set(stats.column_names if hasattr(stats, "column_names") else stats.keys())
        missing = [name for name in (*self.names, SIGNATURE_FIELD) if name not in available]
        if missing:
            raise ValueError(
                f"{self.metric}: the statistics lack the fields {missing}; "
                f"expected {list(self.names) + [SIGNATURE_FIELD]}"
            )
        single_record = isinstance(stats[SIGNATURE_FIELD], str)
        present = [name for name in (*self._residual_names(), EXAMPLES_FIELD) if name in available]
        columns = {}
        for name in (*self.names, SIGNATURE_FIELD, *present):
            columns[name] = [_plain(stats[name])] if single_record else _plain_list(stats[name])
        if len({len(values) for values in columns.values()}) != 1:
            raise ValueError(f"{self.metric}: statistics columns have different lengths")
        if not columns[SIGNATURE_FIELD] and not allow_empty:
            raise EmptyStatistics(f"{self.metric}: no statistics to reduce; the score of an empty corpus is undefined")
        return columns


_ACCEPTED = ("statistics are columns (a mapping of lists, a datasets.Dataset, a pandas DataFrame, a pyarrow Table), "
             "per-example records (mappings, Spark Rows), a list of column batches (example_stats results, "
             "DataFrames, Tables, RecordBatches), or totals from reduce_stats")


def _as_mapping(record: Any) -> Any:
    """One item of a list of statistics as a mapping: a Spark Row as its dict, a pyarrow Table or RecordBatch and a
    pandas DataFrame as their columns (anything else as it is, checked by the caller)."""
    if hasattr(record, "asDict"):
        return record.asDict()
    if hasattr(record, "to_pydict"):
        return record.to_pydict()
    if _module_of(record) == "pandas" and hasattr(record, "columns") and hasattr(record, "to_dict"):
        return record.to_dict("list")
    return record


def _module_of(value: Any) -> str:
    return type(value).__module__.partition(".")[0]


def _refused_form(stats: Any) -> str | None:
    """Why ``stats`` is no form of statistics (None when it may be an iterable of records)."""
    module = _module_of(stats)
    if module == "pyspark" and hasattr(stats, "collect"):
        return f"got a Spark DataFrame; pass its rows (`.collect()`) or `.toPandas()`; {_ACCEPTED}"
    if module == "ray" and hasattr(stats, "take_all"):
        return f"got a Ray Dataset; pass `.take_all()` or `.to_pandas()`; {_ACCEPTED}"
    if isinstance(stats, (str, bytes)) or not isinstance(stats, Iterable):
        return f"got {type(stats).__name__}; {_ACCEPTED}"
    return None


def _plain(value: Any) -> Any:
    """A NumPy or pyarrow scalar as the Python value it holds (anything else as it is)."""
    if hasattr(value, "as_py"):
        return value.as_py()
    if hasattr(value, "item") and hasattr(value, "dtype") and getattr(value, "ndim", 1) == 0:
        return value.item()
    return value


def _plain_list(values: Any) -> list[Any]:
    """A column (list, NumPy array, pandas Series, pyarrow array) as a list of Python values."""
    if hasattr(values, "to_pylist"):
        return values.to_pylist()
    if hasattr(values, "tolist"):
        return values.tolist()
    return [_plain(value) for value in values]
