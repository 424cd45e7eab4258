"""The meta_evaluation module through evaluate.load: plain lists and datasets columns, other metrics, statistics that
merge over shards exactly (per (system, item) row, or per system), streaming, order invariance, bad options."""

from __future__ import annotations

import random
import warnings

import datasets
import pytest

from conftest import metric_fixture
from metrics._core.core_correlation import UndefinedCorrelationWarning

meta = metric_fixture("meta_evaluation")


def rows(seed: int = 0, n_systems: int = 6, n_items: int = 30, missing: float = 0.1) -> dict[str, list]:
    """DA-like human scores (0-100) and a noisy metric; some rows missing."""
    rng = random.Random(seed)
    table: dict[str, list] = {"predictions": [], "references": [], "systems": [], "items": [], "chrf": []}
    for system in range(n_systems):
        quality = rng.uniform(30, 70)
        for item in range(n_items):
            if item and rng.random() < missing:
                continue
            human = float(min(100, max(0, round(rng.gauss(quality, 20)))))
            table["references"].append(human)
            table["predictions"].append(human / 100 + rng.gauss(0, 0.15))
            table["chrf"].append(human / 100 + rng.gauss(0, 0.3))
            table["systems"].append(f"system-{system}")
            table["items"].append(item)
    return table


def inputs(table: dict[str, list]) -> dict[str, list]:
    return {name: table[name] for name in ("predictions", "references", "systems", "items")}


def test_datasets_columns_and_lists_agree(meta) -> None:
    table = rows()
    expected = meta.compute(**inputs(table))
    dataset = datasets.Dataset.from_dict(inputs(table))
    assert meta.compute(**{name: dataset[name] for name in dataset.column_names}) == expected
    for batch in dataset.iter(batch_size=50):
        meta.add_batch(**batch)
    assert meta.compute() == expected
    assert expected["num_systems"] == 6 and expected["num_items"] == 30 and expected["num_segments"] == len(dataset)
    assert expected["system/pearson"] > 0.9 and 0 < expected["segment/kendall_b"] < 1


def test_order_and_id_types_do_not_matter(meta) -> None:
    table = inputs(rows(1))
    order = list(range(len(table["predictions"])))
    random.Random(2).shuffle(order)
    shuffled = {name: [values[index] for index in order] for name, values in table.items()}
    as_strings = {**table, "items": [str(item) for item in table["items"]]}
    expected = meta.compute(**table)
    assert meta.compute(**shuffled) == expected == meta.compute(**as_strings)


@pytest.mark.parametrize("given", [{}, {"grouping": "system"}, {"grouping": "none", "level": "segment"},
                                   {"level": "system"}, {"level": "system", "confidence": True, "n_bootstrap": 20}])
def test_statistics_of_shards_merge_to_the_one_shot_result(meta, given) -> None:
    table = inputs(rows(3))
    size = len(table["predictions"])
    expected = meta.compute(**table, **given)
    shards = [meta.reduce_stats(meta.example_stats(**{name: values[start:start + 40] for name, values in table.items()},
                                                   **given), **given)
              for start in range(0, size, 40)]
    assert meta.compute_from_stats(shards[::-1], **given) == expected
    assert meta.compute_from_stats(meta.example_stats(**table, **given), **given) == expected


def test_system_level_statistics_are_per_system_sums(meta) -> None:
    table = inputs(rows(4))
    stats = meta.example_stats(**table, level="system")
    totals = meta.reduce_stats(stats, level="system")
    assert sorted(totals["rows"]) == [f"system-{index}" for index in range(6)]
    assert sum(totals["rows"].values()) == len(table["predictions"])
    result = meta.compute(**table, level="system")
    assert "num_items" not in result and not any(key.startswith("segment/") for key in result)
    both = meta.compute(**table)
    assert all(result[key] == both[key] for key in result if key.startswith("system/"))
    with pytest.raises(ValueError, match="computed with options .*keys:system"):
        meta.compute_from_stats(stats)  # per-system statistics cannot give segment-level results


def test_other_metrics_and_the_williams_test(meta) -> None:
    table = rows(5)
    result = meta.compute(**inputs(table), other_metrics={"chrf": table["chrf"]})
    alone = meta.compute(predictions=table["chrf"], **{k: table[k] for k in ("references", "systems", "items")})
    assert all(result[f"chrf/{key}"] == value for key, value in alone.items() if "/" in key)
    assert result["williams/chrf/t"] > 0  # the less noisy metric correlates better
    assert 0 <= result["williams/chrf/pvalue"] <= 0.5
    stats = meta.example_stats(**inputs(table), other_metrics={"chrf": table["chrf"]})
    assert meta.compute_from_stats(stats, other_metrics={"chrf": table["chrf"]}) == result
    with pytest.raises(ValueError, match="other_metrics:chrf"):
        meta.compute_from_stats(stats)


def test_confidence_intervals_surround_the_estimates(meta) -> None:
    result = meta.compute(**inputs(rows(6)), confidence=True, n_bootstrap=100)
    for key in ("system/pearson", "system/kendall", "segment/kendall_b", "segment/kendall_like",
                "segment/pairwise_accuracy"):
        assert result[f"{key}_low"] <= result[key] <= result[f"{key}_high"], key
        assert result[f"{key}_low"] < result[f"{key}_high"], key
    assert "system/pearson_pvalue_low" not in result


def test_bad_options_are_clear_errors(meta) -> None:
    table = inputs(rows(7))
    with pytest.raises(ValueError, match=r"^meta_evaluation: unknown `grouping` 'items'"):
        meta.compute(**table, grouping="items")
    with pytest.raises(TypeError, match=r"^meta_evaluation: `other_metrics` must be a mapping"):
        meta.compute(**table, other_metrics=[0.5] * len(table["predictions"]))
    with pytest.raises(ValueError, match=r"`other_metrics\['x'\]\[1\]` is nan"):
        meta.compute(**table, other_metrics={"x": [0.5, float("nan")]})
    with pytest.raises(ValueError, match="`darr_threshold` must be at least 0"):
        meta.compute(**table, darr_threshold=-1.0)


def test_two_systems_and_constant_scores(meta) -> None:
    two = {"predictions": [0.2, 0.4, 0.9, 0.7], "references": [10.0, 30.0, 80.0, 60.0], "systems": ["a", "a", "b", "b"],
           "items": ["x", "y", "x", "y"]}
    result = meta.compute(**two)
    assert result["system/pearson"] == 1.0 and result["system/pearson_pvalue"] == 1.0  # scipy's values for n = 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = meta.compute(**{**two, "predictions": [0.5] * 4})
    # the loaded module's own copy of the class: compared by name
    assert {type(warning.message).__name__ for warning in caught} == {UndefinedCorrelationWarning.__name__}
    assert result["system/pearson"] == 0.0 and result["segment/kendall_b"] == 0.0
    assert result["segment/pairwise_accuracy"] == 0.0 and result["segment/kendall_like"] == -1.0


def test_several_qualities_and_turn_level_merge_across_shards(meta) -> None:
    """Turn-level correlations with several human qualities from per-row statistics of shards (each shard's
    qualities given with it) equal the one-shot result, intervals included; statistics without the qualities (or with
    other ones) do not merge with them."""
    table = rows(8)
    size = len(table["predictions"])
    rng = random.Random(9)
    natural = [float(rng.randint(1, 3)) for _ in range(size)]
    engaging = [value / 20 + rng.gauss(0, 1) for value in table["references"]]
    given = {"level": ["turn", "system"], "confidence": True, "n_bootstrap": 20}
    qualities = {"Natural": natural, "Engaging": engaging}
    expected = meta.compute(**inputs(table), qualities=qualities, **given)
    assert {"turn/pearson", "Natural/turn/spearman", "Engaging/system/pearson", "Engaging/turn/pearson_low"} <= set(
        expected)
    shards = []
    for start in range(0, size, 40):
        part = {name: values[start:start + 40] for name, values in inputs(table).items()}
        sliced = {name: values[start:start + 40] for name, values in qualities.items()}
        shards.append(meta.reduce_stats(meta.example_stats(**part, qualities=sliced, **given), qualities=sliced,
                                        **given))
    assert meta.compute_from_stats(shards[::-1], qualities=qualities, **given) == expected
    plain = meta.compute(**inputs(table), **given)
    assert {key: expected[key] for key in plain} == plain
    with pytest.raises(ValueError, match="qualities:Natural,Engaging"):
        meta.compute_from_stats(shards, **given)
    with pytest.raises(ValueError, match=r"`qualities\['Natural'\]` has 3 scores but there are \d+ rows"):
        meta.compute(**inputs(table), qualities={"Natural": [1.0, 2.0, 3.0]}, level="turn")
