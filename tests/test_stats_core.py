"""Named statistics (metrics/_core/core_stats.py): keyed counts, exact float sums, field access by name.
Expected values are worked by hand in each test."""

from __future__ import annotations

import json

import pytest

from metrics._core.core_stats import StatField, StatsSchema

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
