"""Named statistics (metrics/_core/core_stats.py): keyed counts, exact float sums, field access by name.
Expected values are worked by hand in each test."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest

from metrics._core.core_stats import StatField, StatsSchema, exact_column_sums, exact_float_sum, exact_group_sums

SCHEMA = StatsSchema(
    "demo", (StatField("n"), StatField("per_type", "keyed"), StatField("weight", "keyed_fsum"), StatField("x", "fsum"))
)
ROWS = [
    (1, {"PER": 2, ("LOC", 1): 1}, {0: 0.1}, 0.1),
    (1, {"PER": 1}, {0: 0.2, 1: 1e-17}, 0.2),
    (1, {}, {0: 0.3}, 0.3),
]


def test_keyed_counts_sum_per_key() -> None:
    totals = SCHEMA.totals_of_rows(ROWS, "s")
    # PER: 2 + 1; (LOC, 1): 1; no key for the third example
    assert totals["per_type"] == {"PER": 3, ("LOC", 1): 1}
    assert totals["n"] == 3


def test_keyed_float_sums_are_exact_per_key() -> None:
    totals = SCHEMA.totals_of_rows(ROWS, "s")
    # 0.1 + 0.2 + 0.3 in floats is 0.6000000000000001 left to right; the correctly rounded sum is 0.6
    assert totals["weight"][0] == 0.6 and totals["weight"][1] == 1e-17
    assert totals["x"] == 0.6


def test_keyed_statistics_survive_the_column_form_of_datasets() -> None:
    columns = SCHEMA.columns(ROWS, "s")
    assert json.loads(columns["per_type"][0]) == [["PER", 2], [["LOC", 1], 1]]  # tuples as lists
    assert SCHEMA.totals(columns) == SCHEMA.totals_of_rows(ROWS, "s")


@pytest.mark.parametrize("split", [1, 2])
def test_shard_totals_merge_to_the_one_shot_totals(split: int) -> None:
    merged = SCHEMA.merge(SCHEMA.totals_of_rows(ROWS[:split], "s"), SCHEMA.totals_of_rows(ROWS[split:], "s"))
    assert merged == SCHEMA.totals_of_rows(ROWS, "s")


def test_fields_by_name() -> None:
    assert SCHEMA.position("weight") == 2
    assert SCHEMA.column(ROWS, "n") == [1, 1, 1]
    assert SCHEMA.named((3, {}, {}, 1.5)) == {"n": 3, "per_type": {}, "weight": {}, "x": 1.5}
    with pytest.raises(KeyError, match="no statistic named 'nope'"):
        SCHEMA.position("nope")


# -- exact sums of numpy arrays -------------------------------------------------------------------------------------


def _same_bits(ours: tuple[float, list[float]], expected: tuple[float, list[float]]) -> bool:
    """Equal sums (zeros of the same sign) and equal residuals."""
    return ours == expected and math.copysign(1.0, ours[0]) == math.copysign(1.0, expected[0])


def test_exact_group_sums_are_exact_float_sum_of_each_group() -> None:
    """Each group's sum and residuals are ``exact_float_sum``'s of its values, to the bit, on every path: one
    bincount (values on a coarse binary grid: quarters, subnormals), integer limbs (spans up to a few hundred
    bits, grids below the normal floats), sorted ``math.fsum`` (wider spans); signed zeros and empty groups."""
    rng = np.random.default_rng(3)
    size, count = 3000, 40  # groups 37 to 39 stay empty
    for kind in range(9):
        groups = rng.integers(0, 37, size)
        values = [rng.random(size) * 2, rng.random(size) * 10.0 ** rng.uniform(-6, 6, size),
                  rng.normal(size=size) * 1e3, rng.choice([0.1, -0.3, 1e-3, 1e5, 0.0, -0.0], size),
                  rng.random(size) * 10.0 ** rng.uniform(-150, 150, size),
                  (rng.random(size) - 0.5) * 2.0**-900, rng.integers(-9, 9, size) * 0.25,
                  (rng.random(size) - 0.5) * 2.0**-1060, np.full(size, -0.0)][kind]
        sums, residuals = exact_group_sums(groups, count, values)
        for group in range(count):
            expected = exact_float_sum(values[groups == group].tolist())
            assert _same_bits((float(sums[group]), residuals.get(group, [])), expected), (kind, group)
    # worked by hand: 1e16 + 1 - 1e16 is 1 exactly; 1 + 1e-30 rounds to 1 and leaves 1e-30
    sums, residuals = exact_group_sums(np.zeros(3, dtype=np.intp), 1, np.array([1e16, 1.0, -1e16]))
    assert sums.tolist() == [1.0] and residuals == {}
    sums, residuals = exact_group_sums(np.zeros(2, dtype=np.intp), 1, np.array([1.0, 1e-30]))
    assert sums.tolist() == [1.0] and residuals == {0: [1e-30]}
    # worked by hand: limbs in units of 2**-1052 (below the normal floats): a subnormal sum, then a normal sum and
    # its subnormal residual
    tiny = [2.0**-1000 + 2.0**-1052, -(2.0**-1000)]
    sums, residuals = exact_group_sums(np.array([0, 0, 1, 1, 1]), 2, np.array([*tiny, 2.0**-900, *tiny]))
    assert sums.tolist() == [2.0**-1052, 2.0**-900] and residuals == {1: [2.0**-1052]}


def test_exact_column_sums_are_exact_float_sum_of_each_column() -> None:
    """Each column's sum and residuals are ``exact_float_sum``'s, to the bit: values of every magnitude (subnormals
    included), signs, zeros, long columns, one column or several at once; no column, and empty columns."""
    rng = np.random.default_rng(5)
    columns = [rng.random(1000) * 2.0 ** rng.integers(-1074, 60, 1000) * rng.choice((-1.0, 1.0), 1000),
               np.resize([1.0, 1e-300, 5e-324, -1.0, 0.0, -0.0, 2.0**-60], 1000),
               rng.random(1000) / rng.integers(1, 100, 1000),
               np.zeros(1000),
               np.resize([2.0**53, 1.0, -(2.0**53), 1.0, 2.0**-1074, 1e10], 1000),
               rng.integers(0, 2, 1000) / 8,
               np.full(1000, -0.0)]  # columns of equal length
    expected = [exact_float_sum(values.tolist()) for values in columns]
    for values, column_expected in zip(columns, expected, strict=True):
        (ours,) = exact_column_sums([values])
        assert _same_bits(ours, column_expected)
    assert all(_same_bits(ours, column_expected)
               for ours, column_expected in zip(exact_column_sums(columns), expected, strict=True))
    assert any(residuals for _, residuals in expected)  # residuals are exercised
    long = rng.random(1 << 18) / rng.integers(1, 1000, 1 << 18)
    assert exact_column_sums([long, -long[::-1]]) == [exact_float_sum(long.tolist()), exact_float_sum((-long).tolist())]
    assert exact_column_sums([]) == []
    assert exact_column_sums([np.zeros(0), np.zeros(0)]) == [(0.0, []), (0.0, [])]


# -- the forms statistics arrive in --------------------------------------------------------------------------------

PLAIN = StatsSchema("plain", (StatField("hits"), StatField("length"), StatField("x", "fsum")))
PLAIN_ROWS = [(1, 4, 0.1), (0, 3, 0.2), (2, 5, 0.3)]
# worked by hand: hits 1 + 0 + 2, lengths 4 + 3 + 5, 3 examples; x is 0.6, the correctly rounded sum of the three
# doubles, and its residual their exact sum minus the double 0.6 (itself a double, so one residual suffices)
_EXACT_REST = Fraction(0.1) + Fraction(0.2) + Fraction(0.3) - Fraction(0.6)
PLAIN_TOTALS = {"hits": 3, "length": 12, "x": 0.6, "x__residual": [float(_EXACT_REST)], "reduced_examples": 3,
                "signature": "s"}


class SparkLikeRow(tuple):
    """What pyspark.sql.Row is for this purpose: a tuple with ``asDict()``."""

    def __new__(cls, **fields: object) -> "SparkLikeRow":
        row = super().__new__(cls, tuple(fields.values()))
        row.fields = fields
        return row

    def asDict(self) -> dict:  # noqa: N802 (Spark's name)
        return dict(self.fields)


def records() -> list[dict]:
    return [PLAIN.record(row, "s") for row in PLAIN_ROWS]


def test_totals_count_the_examples_they_sum() -> None:
    assert Fraction(float(_EXACT_REST)) == _EXACT_REST
    assert PLAIN.totals_of_rows(PLAIN_ROWS, "s") == PLAIN_TOTALS
    shards = [PLAIN.totals_of_rows(PLAIN_ROWS[:1], "s"), PLAIN.totals_of_rows(PLAIN_ROWS[1:], "s")]
    assert [shard["reduced_examples"] for shard in shards] == [1, 2]
    assert PLAIN.totals(shards) == PLAIN_TOTALS


def test_every_form_an_engine_hands_back_reduces_to_the_same_totals() -> None:
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    columns = PLAIN.columns(PLAIN_ROWS, "s")
    forms = {
        "columns": columns,
        "records": records(),
        "column batches (one example_stats result per example)": [PLAIN.columns([row], "s") for row in PLAIN_ROWS],
        "column batches and records mixed": [PLAIN.columns(PLAIN_ROWS[:2], "s"), records()[2]],
        "pandas DataFrame": pd.DataFrame(columns),
        "pyarrow Table": pa.table(columns),
        "Spark Rows": [SparkLikeRow(**record) for record in records()],
        "NumPy columns": {name: np.asarray(values) for name, values in columns.items()},
        "NumPy scalars in records": [{name: np.asarray(value)[()] for name, value in record.items()}
                                     for record in records()],
    }
    for form, stats in forms.items():
        totals = PLAIN.totals(stats, expected_signature="s")
        assert totals == PLAIN_TOTALS, form
        assert all(type(totals[name]) is type(PLAIN_TOTALS[name]) for name in PLAIN_TOTALS), form
        assert PLAIN.rows(stats) == PLAIN_ROWS, form


def test_a_pyarrow_signature_is_compared_as_text() -> None:
    import pyarrow as pa

    with pytest.raises(ValueError, match="computed with options 's' but the score was asked for with 't'"):
        PLAIN.totals(pa.table(PLAIN.columns(PLAIN_ROWS, "s")), expected_signature="t")


def test_rows_refuse_totals_of_several_examples() -> None:
    """Resampling needs every example's row: shard totals cannot give them (a one-example total can)."""
    one_each = [PLAIN.totals_of_rows([row], "s") for row in PLAIN_ROWS]
    assert PLAIN.rows(one_each) == PLAIN_ROWS
    with pytest.raises(ValueError, match="need every example's statistics .* not totals of several examples"):
        PLAIN.rows([PLAIN.totals_of_rows(PLAIN_ROWS[:2], "s"), one_each[2]])


def test_keyed_rows_come_back_as_mappings() -> None:
    assert SCHEMA.rows(SCHEMA.columns(ROWS, "s")) == ROWS


@pytest.mark.parametrize("stats", ["hits", 3, None, b"x", {1, 2}])
def test_other_things_are_refused_saying_what_is_accepted(stats: object) -> None:
    with pytest.raises(TypeError, match="statistics are columns .* totals from reduce_stats"):
        PLAIN.totals(stats)


def test_engine_datasets_are_refused_with_what_to_pass() -> None:
    spark_like = type("DataFrame", (), {"collect": lambda self: [], "__module__": "pyspark.sql.dataframe"})()
    ray_like = type("Dataset", (), {"take_all": lambda self: [], "__module__": "ray.data.dataset"})()
    with pytest.raises(TypeError, match=r"Spark DataFrame; pass its rows \(`.collect\(\)`\) or `.toPandas\(\)`"):
        PLAIN.totals(spark_like)
    with pytest.raises(TypeError, match=r"Ray Dataset; pass `.take_all\(\)` or `.to_pandas\(\)`"):
        PLAIN.totals(ray_like)
