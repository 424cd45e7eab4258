"""metrics/_core/core_agreement*: Krippendorff's alpha against the `krippendorff` package (every level of
measurement, missing data), Cohen's kappa against scikit-learn's `cohen_kappa_score` (every weighting), Fleiss'
kappa against statsmodels' `fleiss_kappa`, percentage agreement against its definition written plainly here, on
thousands of generated tables; the published examples (Krippendorff 2011, Fleiss 1971, Wikipedia's); the bootstrap
resamples against the oracles on the resampled tables; the matrix helper."""

from __future__ import annotations

import itertools
import json
import math
import random
import warnings
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from conftest import default_and_slow
from metrics._core.core_agreement import STATISTICS, agreement_batch_totals, agreement_from_totals
from metrics._core.core_agreement_inputs import RATINGS, ratings_from_matrix
from metrics._core.core_agreement_options import AgreementOptions
from metrics._core.core_agreement_table import rating_table
from metrics._core.core_resample import bootstrap_weights

TOLERANCE = 1e-12
LEVELS = ("nominal", "ordinal", "interval", "ratio")
nan = np.nan


def options(**given: Any) -> AgreementOptions:
    return AgreementOptions.resolve("agreement", given)


def score(columns: dict[str, list[Any]], **given: Any) -> dict[str, Any]:
    """The metric's result for rating rows, through the core as the module runs it (check, totals, score)."""
    checked = RATINGS.check("agreement", columns)
    return agreement_from_totals("agreement", agreement_batch_totals(checked, "agreement"), options(**given))


def alpha(reliability_data: Any, level: str, **given: Any) -> float:
    """Our alpha of annotators x items data (the krippendorff package's layout)."""
    ratings = ratings_from_matrix(np.asarray(reliability_data, dtype=object).T)
    return score(ratings, coefficients="krippendorff_alpha", level_of_measurement=level, **given)["krippendorff_alpha"]


# -- published examples --------------------------------------------------------------------------------------------

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers (rows) x 12 units,
# values 1-5, nan where an observer did not code a unit.
KRIPPENDORFF_2011 = [[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
                     [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
                     [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
                     [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]


def test_krippendorff_2011_nominal_example_by_hand() -> None:
    """Unit 12 has one value (not pairable); the other 11 units hold n = 40 pairable values: 9 ones, 13 twos,
    10 threes, 5 fours, 3 fives. Disagreeing coincidences: unit 2 (2,2,3,2) pairs 2-3 and 3-2 with weight
    3 * 1 / (4 - 1) each (2 in all); unit 6 (1,2,3,4) has 12 ordered pairs of different values, 1 / 3 each (4);
    unit 8 (1,1,2,1) 2 as unit 2. So sum_{c != k} o_ck = 8; sum_{c != k} n_c n_k = 40^2 - (81 + 169 + 100 + 25 + 9)
    = 1216, and alpha = 1 - (n - 1) * 8 / 1216 = 1 - 312 / 1216 = 0.743, the paper's value."""
    expected = 1 - 39 * 8 / 1216
    ours = alpha(KRIPPENDORFF_2011, "nominal")
    assert ours == pytest.approx(expected, abs=1e-15)
    assert round(ours, 3) == 0.743
    result = score(ratings_from_matrix(np.asarray(KRIPPENDORFF_2011).T))
    assert (result["num_items"], result["num_ratings"], result["num_annotators"], result["num_unpairable_items"]) == (
        12, 41, 4, 1)


@pytest.mark.parametrize(("level", "published"), [("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)])
def test_krippendorff_2011_data_at_other_levels(level: str, published: float) -> None:
    """The other levels on the same data: the values of the krippendorff package's documentation (interval:
    Krippendorff 2011's 0.849), and the package itself."""
    ours = alpha(KRIPPENDORFF_2011, level)
    assert round(ours, 3) == published
    assert ours == pytest.approx(krippendorff.alpha(KRIPPENDORFF_2011, level_of_measurement=level), abs=TOLERANCE)


def test_string_labels_in_a_given_order() -> None:
    """The same data as words: nominal needs no order (0.743); ordinal takes it from `value_domain` (0.815), as the
    krippendorff package does."""
    words = ["very low", "low", "mid", "high", "very high"]
    data = [[None if isinstance(value, float) and math.isnan(value) else words[int(value) - 1] for value in row]
            for row in KRIPPENDORFF_2011]
    assert round(alpha(data, "nominal"), 3) == 0.743
    assert alpha(data, "ordinal", value_domain=words) == pytest.approx(alpha(KRIPPENDORFF_2011, "ordinal"),
                                                                       abs=TOLERANCE)


def test_wikipedia_example() -> None:
    """Wikipedia's "Krippendorff's alpha" example (3 coders x 15 units), as in the krippendorff package's docs."""
    star = None
    rows = [[star, star, star, star, star, 3, 4, 1, 2, 1, 1, 3, 3, star, 3],
            [1, star, 2, 1, 3, 3, 4, 3, star, star, star, star, star, star, star],
            [star, star, 2, 1, 3, 4, 4, star, 2, 1, 1, 3, 3, star, 4]]
    assert round(alpha(rows, "nominal"), 6) == 0.691358
    assert round(alpha(rows, "interval"), 6) == 0.810845


# Fleiss (1971): 30 patients, each diagnosed by 6 of the psychiatrists, 5 categories (statsmodels' test data, as R's
# irr package has it: one row per patient, the diagnoses of its 6 raters).
FLEISS_1971 = [[4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5], [2, 2, 2, 4, 4, 4],
               [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4], [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5],
               [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4], [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5],
               [3, 3, 3, 3, 3, 5], [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
               [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4], [1, 4, 4, 4, 4, 5],
               [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4], [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5]]


def counts_table(rows: list[list[Any]], categories: list[Any]) -> np.ndarray:
    """Subjects x categories counts (statsmodels' input)."""
    return np.array([[row.count(category) for category in categories] for row in rows], dtype=float)


def test_fleiss_1971_example() -> None:
    """Fleiss (1971) reports kappa = .430 for his table; statsmodels' fleiss_kappa agrees."""
    ours = score(ratings_from_matrix(FLEISS_1971), coefficients="fleiss_kappa")["fleiss_kappa"]
    assert round(ours, 3) == 0.430
    assert ours == pytest.approx(statsmodels_fleiss_kappa(counts_table(FLEISS_1971, [1, 2, 3, 4, 5])), abs=TOLERANCE)


def test_wikipedia_fleiss_example() -> None:
    """Wikipedia's "Fleiss' kappa" worked example: 10 subjects, 14 raters, 5 categories (counts per category);
    P-bar = 0.378, P-bar_e = 0.213, kappa = 0.210."""
    counts = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1], [7, 7, 0, 0, 0],
              [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    rows = [[category for category, count in enumerate(row) for _ in range(count)] for row in counts]
    result = score(ratings_from_matrix(rows), coefficients=["fleiss_kappa", "percent_agreement"])
    assert round(result["fleiss_kappa"], 3) == 0.210
    assert round(result["percent_agreement"], 3) == 0.378  # with m constant, percentage agreement is Fleiss' P-bar


def test_scikit_learn_cohen_example_by_hand() -> None:
    """scikit-learn's example: 4 of 5 items agree (p_o = 0.8); the first annotator's labels are 2 negative, 2
    positive, 1 neutral, the second's 3, 1, 1, so p_e = (2*3 + 2*1 + 1*1) / 25 = 0.36 and kappa = 0.44 / 0.64."""
    first = ["negative", "positive", "negative", "neutral", "positive"]
    second = ["negative", "positive", "negative", "neutral", "negative"]
    result = score(ratings_from_matrix(list(zip(first, second, strict=True))), coefficients="cohen_kappa")
    assert result["cohen_kappa"] == pytest.approx(0.44 / 0.64, abs=1e-15) == 0.6875


def test_percent_agreement_by_hand() -> None:
    """Item x: 3 ratings a, a, b: 2 of its 6 ordered pairs agree (a-a both ways); item y: b, b: 2 of 2; item z has one
    rating (not pairable). The mean over x and y: (1/3 + 1) / 2."""
    result = score({"items": ["x", "x", "x", "y", "y", "z"], "annotators": [1, 2, 3, 1, 2, 1],
                    "labels": ["a", "a", "b", "b", "b", "a"]}, coefficients="percent_agreement")
    assert result["percent_agreement"] == pytest.approx((1 / 3 + 1) / 2, abs=1e-15)
    assert result["num_unpairable_items"] == 1


# -- generated tables against the oracles -----------------------------------------------------------------------


def value_pool(rng: random.Random) -> list[Any]:
    """Labels of one table: few small integers, floats with ties, values on a large offset, many distinct values,
    negative integers, or strings."""
    kind = rng.choice(("small", "floats", "offset", "wide", "negative", "strings"))
    if kind == "small":
        return list(range(1, rng.randint(2, 5) + 1))
    if kind == "floats":
        return [round(rng.uniform(0, 10), 2) for _ in range(rng.randint(2, 6))]
    if kind == "offset":
        return [1e6 + rng.randint(0, 4) * 0.5 for _ in range(4)]
    if kind == "wide":
        return [rng.uniform(0, 100) for _ in range(40)]
    if kind == "negative":
        return list(range(-3, 4))
    return ["neg", "neu", "pos", "n/a"][:rng.randint(2, 4)]


def pairable_labels(data: list[list[Any]]) -> set[Any]:
    """Labels of the units (columns) coded by two or more annotators."""
    labels = set()
    for unit in zip(*data, strict=True):
        coded = [value for value in unit if value is not None]
        if len(coded) >= 2:
            labels.update(coded)
    return labels


def reliability_tables(seed: int, count: int) -> list[list[list[Any]]]:
    """Annotators x units tables (None: not coded) whose alpha is defined: a unit with two values, and two labels
    among the pairable values."""
    rng = random.Random(seed)
    tables = []
    while len(tables) < count:
        pool = value_pool(rng)
        missing = rng.choice((0.0, 0.2, 0.5))
        data = [[None if rng.random() < missing else rng.choice(pool) for _ in range(rng.randint(1, 30))]]
        data += [[None if rng.random() < missing else rng.choice(pool) for _ in data[0]]
                 for _ in range(rng.randint(1, 5))]
        if len(pairable_labels(data)) >= 2:
            tables.append(data)
    return tables


def textual(data: list[list[Any]]) -> bool:
    return isinstance(next(value for row in data for value in row if value is not None), str)


def krippendorff_oracle(data: list[list[Any]], level: str) -> float:
    if textual(data):
        domain = sorted({value for row in data for value in row if value is not None})
        array = np.array([[value if value is not None else "nan" for value in row] for row in data])
        return float(krippendorff.alpha(array, level_of_measurement=level, value_domain=domain))
    return float(krippendorff.alpha(np.array(data, dtype=float), level_of_measurement=level))


def compare(pairs: list[tuple[float, float]]) -> tuple[int, float]:
    """(mismatches beyond the tolerance, the largest difference) of (ours, theirs) pairs."""
    differences = [abs(ours - theirs) for ours, theirs in pairs]
    return sum(difference > TOLERANCE for difference in differences), max(differences)


@pytest.mark.parametrize(("seed", "count"), default_and_slow((1, 1500), (2, 10000)))
def test_alpha_matches_krippendorff_at_every_level(seed: int, count: int) -> None:
    pairs: dict[str, list[tuple[float, float]]] = {level: [] for level in LEVELS}
    for data in reliability_tables(seed, count):
        strings = textual(data)
        negative = not strings and min(value for row in data for value in row if value is not None) < 0
        for level in LEVELS:
            if strings and level in ("interval", "ratio") or negative and level == "ratio":
                continue  # string labels have no values; a ratio scale has no negative values (both errors here)
            domain = {"value_domain": sorted(pairable_labels(data) | {v for row in data for v in row if v is not None})}
            extra = domain if strings and level == "ordinal" else {}
            pairs[level].append((alpha(data, level, **extra), krippendorff_oracle(data, level)))
    for level, compared in pairs.items():
        mismatches, largest = compare(compared)
        print(f"alpha {level}: {len(compared)} tables, largest difference {largest:.3g}")
        assert mismatches == 0 and len(compared) > count // 3, (level, mismatches, largest)


def category_pool(rng: random.Random) -> list[Any]:
    """Categories of one table (scikit-learn takes integers or strings, not real values): a few small integers,
    negative ones, large ones, or strings."""
    kind = rng.choice(("small", "negative", "large", "strings"))
    if kind == "small":
        return list(range(1, rng.randint(2, 6) + 1))
    if kind == "negative":
        return list(range(-3, 3))
    if kind == "large":
        return [10**6 + 7 * step for step in range(rng.randint(2, 5))]
    return ["neg", "neu", "pos", "n/a", "other"][:rng.randint(2, 5)]


def two_annotator_tables(seed: int, count: int) -> list[tuple[list[Any], list[Any], list[Any]]]:
    """(first annotator's labels, second's, the label order) with two labels at least; the order sometimes holds
    a label neither used (it moves weighted kappa's positions)."""
    rng = random.Random(seed)
    tables = []
    while len(tables) < count:
        pool = category_pool(rng)
        size = rng.randint(1, 40)
        first = [rng.choice(pool) for _ in range(size)]
        agree = rng.random()
        second = [label if rng.random() < agree else rng.choice(pool) for label in first]
        if len(set(first) | set(second)) >= 2:
            unused = ({"zzz"} if isinstance(pool[0], str) else {1e9}) if rng.random() < 0.5 else set()
            order = sorted(set(pool) | unused)
            tables.append((first, second, order))
    return tables


@pytest.mark.parametrize(("seed", "count"), default_and_slow((3, 500), (4, 5000)))
def test_cohen_kappa_matches_scikit_learn(seed: int, count: int) -> None:
    pairs = []
    for first, second, order in two_annotator_tables(seed, count):
        ratings = ratings_from_matrix(list(zip(first, second, strict=True)))
        for weights in (None, "linear", "quadratic"):
            if weights is None or not isinstance(first[0], str):
                ours = score(ratings, coefficients="cohen_kappa", weights=weights)["cohen_kappa"]
                pairs.append((ours, cohen_kappa_score(first, second, weights=weights)))
            ours = score(ratings, coefficients="cohen_kappa", weights=weights, value_domain=order)["cohen_kappa"]
            pairs.append((ours, cohen_kappa_score(first, second, weights=weights, labels=order)))
    mismatches, largest = compare(pairs)
    print(f"cohen: {len(pairs)} comparisons, largest difference {largest:.3g}")
    assert mismatches == 0 and len(pairs) >= 4 * count, (mismatches, largest)


def fleiss_tables(seed: int, count: int) -> list[list[list[Any]]]:
    """Items x m labels (m from 2 to 8, the same on every item), two labels at least."""
    rng = random.Random(seed)
    tables = []
    while len(tables) < count:
        pool = category_pool(rng)
        size = rng.randint(2, 8)
        rows = [[rng.choice(pool) for _ in range(size)] for _ in range(rng.randint(1, 30))]
        if len({label for row in rows for label in row}) >= 2:
            tables.append(rows)
    return tables


@pytest.mark.parametrize(("seed", "count"), default_and_slow((5, 1500), (6, 10000)))
def test_fleiss_kappa_matches_statsmodels(seed: int, count: int) -> None:
    rng = random.Random(seed)
    pairs = []
    for rows in fleiss_tables(seed, count):
        # raters differ from item to item: each item's m ratings come from a random subset of 10 annotators
        ratings: dict[str, list[Any]] = {"items": [], "annotators": [], "labels": []}
        for item, row in enumerate(rows):
            ratings["items"] += [item] * len(row)
            ratings["annotators"] += rng.sample(range(10), len(row))
            ratings["labels"] += row
        ours = score(ratings, coefficients="fleiss_kappa")["fleiss_kappa"]
        categories = sorted({label for row in rows for label in row})
        pairs.append((ours, statsmodels_fleiss_kappa(counts_table(rows, categories), method="fleiss")))
    mismatches, largest = compare(pairs)
    print(f"fleiss: {len(pairs)} tables, largest difference {largest:.3g}")
    assert mismatches == 0 and len(pairs) == count, (mismatches, largest)


def percent_agreement_by_definition(data: list[list[Any]]) -> float:
    """The mean, over units with two or more values, of the share of ordered pairs of values that agree."""
    shares = []
    for unit in zip(*data, strict=True):
        coded = [value for value in unit if value is not None]
        if len(coded) >= 2:
            pairs = [(a, b) for i, a in enumerate(coded) for j, b in enumerate(coded) if i != j]
            shares.append(sum(a == b for a, b in pairs) / len(pairs))
    return sum(shares) / len(shares)


def test_percent_agreement_matches_its_definition() -> None:
    pairs = []
    for data in reliability_tables(7, 500):
        ratings = ratings_from_matrix(np.asarray(data, dtype=object).T)
        pairs.append((score(ratings, coefficients="percent_agreement")["percent_agreement"],
                      percent_agreement_by_definition(data)))
    assert compare(pairs)[0] == 0


# -- the bootstrap resamples --------------------------------------------------------------------------------------


def resampled_tables(data: list[list[Any]], seed: int, samples: int) -> list[tuple[np.ndarray, list[list[Any]]]]:
    """(draw counts, the resampled annotators x units table) of bootstrap resamples of the pairable units, drawn in
    the order the metric keeps them (sorted by id: the decimal strings of the column numbers)."""
    pairable = sorted((str(unit) for unit, column in enumerate(zip(*data, strict=True))
                       if sum(value is not None for value in column) >= 2))
    weights = next(bootstrap_weights(len(pairable), n_samples=samples, seed=seed))
    tables = []
    for draws in weights:
        units = [int(unit) for unit, count in zip(pairable, draws, strict=True) for _ in range(count)]
        tables.append((draws, [[row[unit] for unit in units] for row in data]))
    return tables


def statistics_of(data: list[list[Any]], name: str, **given: Any):
    ratings = RATINGS.check("agreement", ratings_from_matrix(np.asarray(data, dtype=object).T))
    totals = agreement_batch_totals(ratings, "agreement")
    table = rating_table("agreement", totals["ratings"], None)
    return STATISTICS[name]("agreement", table, options(coefficients=name, **given))


@pytest.mark.parametrize("level", LEVELS)
def test_each_alpha_resample_is_alpha_of_the_resampled_units(level: str) -> None:
    """A resample's value, from weighted sums of per-unit statistics, is the oracle's alpha of the table holding
    each unit as many times as the resample draws it."""
    compared = 0
    for data in reliability_tables(11, 40):
        if textual(data) or level == "ratio" and min(v for r in data for v in r if v is not None) < 0:
            continue
        statistics = statistics_of(data, "krippendorff_alpha", level_of_measurement=level)
        resamples = resampled_tables(data, seed=5, samples=8)
        ours = list(statistics.resampled_totals(np.array([draws for draws, _ in resamples])))
        for sums, (_, table) in zip(ours, resamples, strict=True):
            if len(pairable_labels(table)) >= 2:
                assert statistics.score(sums) == pytest.approx(krippendorff_oracle(table, level), abs=TOLERANCE)
                compared += 1
            else:
                assert math.isnan(statistics.score(sums))
    assert compared > 100


def test_kappa_resamples_are_kappas_of_the_resampled_items() -> None:
    compared = 0
    for first, second, _ in two_annotator_tables(12, 30):
        data = [first, second]
        statistics = statistics_of(data, "cohen_kappa", weights=None)
        resamples = resampled_tables(data, seed=6, samples=5)
        for sums, (_, table) in zip(statistics.resampled_totals(np.array([d for d, _ in resamples])), resamples,
                                    strict=True):
            if len(set(table[0]) | set(table[1])) >= 2:
                assert statistics.score(sums) == pytest.approx(cohen_kappa_score(*table), abs=TOLERANCE)
                compared += 1
    for rows in fleiss_tables(13, 30):
        data = [list(column) for column in zip(*rows, strict=True)]
        statistics = statistics_of(data, "fleiss_kappa")
        resamples = resampled_tables(data, seed=7, samples=5)
        for sums, (_, table) in zip(statistics.resampled_totals(np.array([d for d, _ in resamples])), resamples,
                                    strict=True):
            units = [list(unit) for unit in zip(*table, strict=True)]
            categories = sorted({label for unit in units for label in unit})
            if len(categories) >= 2:
                assert statistics.score(sums) == pytest.approx(
                    statsmodels_fleiss_kappa(counts_table(units, categories)), abs=TOLERANCE)
                compared += 1
    assert compared > 200


def test_intervals_are_seeded_and_hold_the_estimate() -> None:
    ratings = ratings_from_matrix(np.asarray(KRIPPENDORFF_2011).T)
    first = score(ratings, confidence=True, n_bootstrap=300, seed=3)
    assert first == score(ratings, confidence=True, n_bootstrap=300, seed=3)
    assert first != score(ratings, confidence=True, n_bootstrap=300, seed=4)
    for name in ("krippendorff_alpha", "percent_agreement"):
        assert first[f"{name}_low"] <= first[name] <= first[f"{name}_high"]
    assert set(first) == {"krippendorff_alpha", "krippendorff_alpha_low", "krippendorff_alpha_high",
                          "percent_agreement", "percent_agreement_low", "percent_agreement_high", "num_items",
                          "num_ratings", "num_annotators", "num_unpairable_items"}


def test_undefined_resamples_are_left_out_with_a_warning() -> None:
    """Two items, one all 'a', one all 'b': a resample drawing one of them twice has one label (alpha 0/0)."""
    ratings = {"items": [1, 1, 2, 2], "annotators": [1, 2, 1, 2], "labels": ["a", "a", "b", "b"]}
    with pytest.warns(UserWarning, match=r"Krippendorff's alpha is undefined on \d+ of 200 bootstrap resamples"):
        result = score(ratings, coefficients="krippendorff_alpha", confidence=True, n_bootstrap=200)
    assert result["krippendorff_alpha"] == result["krippendorff_alpha_low"] == result["krippendorff_alpha_high"] == 1


# -- the matrix helper ---------------------------------------------------------------------------------------------


def test_ratings_from_matrix_leaves_out_missing_cells() -> None:
    matrix = [["a", None, "b"], [float("nan"), "c", "*"]]
    assert ratings_from_matrix(matrix, missing="*") == {"items": [0, 0, 1], "annotators": [0, 2, 1],
                                                        "labels": ["a", "b", "c"]}
    named = ratings_from_matrix(np.array([[1.0, nan], [2.0, 3.0]]), items=["x", "y"], annotators=["ann", "bob"])
    assert named == {"items": ["x", "y", "y"], "annotators": ["ann", "ann", "bob"], "labels": [1.0, 2.0, 3.0]}
    assert all(type(label) is float for label in named["labels"])


def test_ratings_from_a_dataframe_take_its_index_and_columns() -> None:
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame({"ann": [1, None], "bob": [2, 2]}, index=["x", "y"])
    assert ratings_from_matrix(frame) == {"items": ["x", "x", "y"], "annotators": ["ann", "bob", "bob"],
                                          "labels": [1.0, 2.0, 2.0]}


@pytest.mark.parametrize(("matrix", "given", "message"), [
    ([[1, 2], [3]], {}, r"`matrix\[1\]` has 1 cells but `matrix\[0\]` has 2"),
    ([[1, 2]], {"items": ["x", "y"]}, r"got 1 matrix rows but 2 items"),
    ([[1, 2]], {"annotators": ["a"]}, r"got 2 matrix columns but 1 annotators"),
    ("12", {}, r"`matrix` must be a list of rows"),
    (np.zeros(3), {}, r"must have 2 dimensions"),
    ([], {}, r"`matrix` is empty"),
])
def test_ratings_from_matrix_rejects_bad_shapes(matrix: Any, given: dict, message: str) -> None:
    with pytest.raises((TypeError, ValueError), match=rf"^agreement: .*{message}"):
        ratings_from_matrix(matrix, **given)


# -- correlation-based agreement (dialogue papers) ------------------------------------------------------------------

CORRELATION_COEFFICIENTS = ("pairwise_spearman", "pairwise_pearson", "leave_one_out_spearman",
                            "leave_one_out_pearson")


def _scipy_correlation(kind: str, first: list[float], second: list[float]) -> float:
    """scipy's coefficient, NaN where it is undefined (fewer than 2 values or a constant side)."""
    if len(first) < 2 or len(set(first)) < 2 or len(set(second)) < 2:
        return math.nan
    function = stats.spearmanr if kind == "spearman" else stats.pearsonr
    return float(function(first, second).statistic)


def correlation_oracle(data: list[list[Any]], name: str) -> tuple[float, int]:
    """(the coefficient, the pairs or annotators it averages) of annotators x units data, written plainly: every pair
    of annotators over the units both coded (scipy), or every annotator against the mean of the others on the units
    it coded that someone else coded too; the mean of the defined correlations."""
    family, kind = name.rsplit("_", 1)
    values = []
    if family == "pairwise":
        for first, second in itertools.combinations(range(len(data)), 2):
            shared = [unit for unit in range(len(data[0])) if data[first][unit] is not None
                      and data[second][unit] is not None]
            values.append(_scipy_correlation(kind, [data[first][u] for u in shared], [data[second][u] for u in shared]))
    else:
        for annotator in range(len(data)):
            own, others = [], []
            for unit in range(len(data[0])):
                rest = [data[other][unit] for other in range(len(data)) if other != annotator
                        and data[other][unit] is not None]
                if data[annotator][unit] is not None and rest:
                    own.append(data[annotator][unit])
                    others.append(math.fsum(rest) / len(rest))  # the mean, correctly rounded
            values.append(_scipy_correlation(kind, own, others))
    defined = [value for value in values if not math.isnan(value)]
    return (float(np.mean(defined)) if defined else math.nan), len(defined)


def numeric_tables(seed: int, count: int) -> list[list[list[Any]]]:
    """Annotators x units tables of numeric labels (None: not coded), 2 to 6 annotators."""
    rng = random.Random(seed)
    tables = []
    while len(tables) < count:
        pool = value_pool(rng)
        if isinstance(pool[0], str):
            continue
        missing = rng.choice((0.0, 0.2, 0.5))
        units = rng.randint(2, 40)
        grades = [rng.choice(pool) for _ in range(units)]
        agree = rng.random()
        tables.append([[None if rng.random() < missing else grade if rng.random() < agree else rng.choice(pool)
                        for grade in grades] for _ in range(rng.randint(2, 6))])
    return tables


@pytest.mark.parametrize(("seed", "count"), default_and_slow((21, 600), (22, 5000)))
def test_correlation_agreement_matches_scipy(seed: int, count: int) -> None:
    """Every coefficient against scipy's pearsonr/spearmanr per pair (or annotator), on generated tables; the
    counts of pairs (annotators) kept; undefined tables are the documented error."""
    pairs: dict[str, list[tuple[float, float]]] = {name: [] for name in CORRELATION_COEFFICIENTS}
    errors = 0
    for data in numeric_tables(seed, count):
        ratings = ratings_from_matrix(np.asarray(data, dtype=object).T)
        for name in CORRELATION_COEFFICIENTS:
            expected, kept = correlation_oracle(data, name)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    result = score(ratings, coefficients=name)
            except ValueError as error:
                assert math.isnan(expected), (name, data)
                assert "is undefined" in str(error) or "no item of `items` has two" in str(error)
                errors += 1
                continue
            assert not math.isnan(expected), (name, data)
            count_key = "num_correlated_pairs" if name.startswith("pairwise") else "num_correlated_annotators"
            assert result[count_key] == kept
            pairs[name].append((result[name], expected))
    for name, compared in pairs.items():
        mismatches, largest = compare(compared)
        print(f"{name}: {len(compared)} tables, largest difference {largest:.3g}")
        assert mismatches == 0 and len(compared) > count // 2, (name, mismatches, largest)
    assert errors > 0


def test_correlation_agreement_by_hand() -> None:
    """Three annotators, four items: a and b agree in order (rho 1), c reverses b on two items."""
    data = [[1, 2, 3, 4], [1, 2, 3, 5], [2, 1, 4, 3]]
    ratings = ratings_from_matrix(np.asarray(data, dtype=object).T, annotators=["a", "b", "c"])
    result = score(ratings, coefficients=list(CORRELATION_COEFFICIENTS))
    # rho(a, b) = 1; rho(a, c) = rho(b, c) = 1 - 6 * (1 + 1 + 1 + 1) / (4 * 15) = 0.6
    assert result["pairwise_spearman"] == pytest.approx((1 + 0.6 + 0.6) / 3, abs=1e-15)
    # leave-one-out, a against the means of b and c (1.5, 1.5, 3.5, 4): ranks 1.5, 1.5, 3, 4
    expected = float(stats.spearmanr([1, 2, 3, 4], [1.5, 1.5, 3.5, 4]).statistic)
    assert expected == pytest.approx(0.9486832980505138, abs=1e-15)
    own = [stats.spearmanr(data[k], np.mean([data[j] for j in range(3) if j != k], axis=0)).statistic for k in range(3)]
    assert result["leave_one_out_spearman"] == pytest.approx(float(np.mean(own)), abs=1e-15)
    assert result["num_correlated_pairs"] == 3 and result["num_correlated_annotators"] == 3
    pearson = [stats.pearsonr(data[i], data[j]).statistic for i, j in ((0, 1), (0, 2), (1, 2))]
    assert result["pairwise_pearson"] == pytest.approx(float(np.mean(pearson)), abs=1e-15)


def test_spearman_of_ordered_words_and_pearson_needs_numbers() -> None:
    order = ["bad", "ok", "good"]
    data = [["bad", "ok", "good", "good"], ["bad", "good", "ok", "good"]]
    ratings = ratings_from_matrix(np.asarray(data, dtype=object).T)
    result = score(ratings, coefficients="pairwise_spearman", value_domain=order)
    assert result["pairwise_spearman"] == pytest.approx(float(stats.spearmanr([0, 1, 2, 2], [0, 2, 1, 2]).statistic),
                                                        abs=1e-15)
    with pytest.raises(ValueError, match=r"^agreement: mean pairwise Spearman needs the order of the labels"):
        score(ratings, coefficients="pairwise_spearman")
    with pytest.raises(TypeError, match=r"^agreement: leave-one-out Pearson needs numeric `labels`"):
        score(ratings, coefficients="leave_one_out_pearson", value_domain=order)


def test_undefined_correlations_are_left_out_or_an_error() -> None:
    # c rates every item alike: pairs with c and c's leave-one-out correlation are undefined, left out with a warning
    data = [[1, 2, 3], [1, 3, 2], [2, 2, 2]]
    ratings = ratings_from_matrix(np.asarray(data, dtype=object).T, annotators=["a", "b", "c"])
    with pytest.warns(UserWarning, match=r"mean pairwise Spearman: 2 annotator pair\(s\) \('a'-'c', 'b'-'c'\) have "
                                         r"constant labels"):
        result = score(ratings, coefficients="pairwise_spearman")
    assert result["pairwise_spearman"] == pytest.approx(0.5, abs=1e-15) and result["num_correlated_pairs"] == 1
    # no two annotators share two items: undefined, an error naming the inputs
    sparse = {"items": ["x", "x", "y", "y"], "annotators": ["a", "b", "a", "c"], "labels": [1, 2, 2, 3]}
    with pytest.raises(ValueError, match=r"^agreement: mean pairwise Pearson is undefined: it needs two annotators who "
                                         r"rated two or more items in common"):
        score(sparse, coefficients="pairwise_pearson")


def test_correlation_resamples_are_the_coefficients_of_the_resampled_items() -> None:
    """Each bootstrap resample's value is the oracle's on the table holding each item as often as it is drawn (a
    twice-drawn item's ratings tie with themselves, as in scipy on that table)."""
    compared = 0
    for data in numeric_tables(31, 25):
        for name in CORRELATION_COEFFICIENTS:
            try:
                statistics = statistics_of(data, name)
            except ValueError:
                continue
            resamples = resampled_tables(data, seed=8, samples=6)
            ours = list(statistics.resampled_scores(np.array([draws for draws, _ in resamples])))
            for value, (_, table) in zip(ours, resamples, strict=True):
                expected, _ = correlation_oracle(table, name)
                if math.isnan(expected):
                    assert math.isnan(value)
                else:
                    assert value == pytest.approx(expected, abs=TOLERANCE)
                    compared += 1
    assert compared > 300


def test_correlation_intervals_are_seeded_and_hold_the_estimate() -> None:
    data = numeric_tables(41, 1)[0]
    ratings = ratings_from_matrix(np.asarray(data, dtype=object).T)
    given = {"coefficients": list(CORRELATION_COEFFICIENTS), "confidence": True, "n_bootstrap": 200, "seed": 9}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = score(ratings, **given)
        assert first == score(ratings, **given)
        assert first != score(ratings, **{**given, "seed": 10})
    for name in CORRELATION_COEFFICIENTS:
        assert first[f"{name}_low"] <= first[name] <= first[f"{name}_high"], name


# -- USR's inter-annotator agreement (Mehri & Eskenazi 2020, Table 1) ----------------------------------------------

USR_QUALITIES = ("Understandable", "Natural", "Maintains Context", "Engaging", "Uses Knowledge", "Overall")
USR_FILES = {"Topical-Chat": "usr_topical_chat.json", "PersonaChat": "usr_percona_chat.json"}


def usr_ratings(shared_data: Path, corpus: str, quality: str, by: str) -> dict[str, list[Any]]:
    """The (item, annotator, label) rows of one quality: every response an item, its three ratings by rating
    position (``by="position"``: 1, 2, 3 in the file's order) or by annotator id (``"annotator"``)."""
    with open(shared_data / "usr" / USR_FILES[corpus], encoding="utf-8") as handle:
        contexts = json.load(handle)
    rows: dict[str, list[Any]] = {"items": [], "annotators": [], "labels": []}
    for index, context in enumerate(contexts):
        for number, response in enumerate(context["responses"]):
            for position, (annotator, label) in enumerate(zip(context["annotators"], response[quality], strict=True)):
                rows["items"].append(f"{index}/{number}")
                rows["annotators"].append(position + 1 if by == "position" else annotator)
                rows["labels"].append(label)
    return rows


def position_columns(rows: dict[str, list[Any]]) -> dict[int, list[int]]:
    """Each rating position's labels over every response (the items in file order)."""
    columns: dict[int, list[int]] = {}
    for position, label in zip(rows["annotators"], rows["labels"], strict=True):
        columns.setdefault(position, []).append(label)
    return columns


@pytest.mark.parametrize("corpus", list(USR_FILES))
def test_usr_table_1_is_the_mean_pairwise_spearman_of_rating_positions(shared_data: Path, corpus: str) -> None:
    """USR's Table 1, as the card computes it: the mean over the three pairs of rating positions of Spearman's rho
    over every response of the corpus (flat: 360 or 300 responses, not per context), equal to scipy's on the same
    columns, for all six qualities (the card gives the values; the paper's PDF could not be opened here)."""
    for quality in USR_QUALITIES:
        rows = usr_ratings(shared_data, corpus, quality, "position")
        result = score(rows, coefficients=["pairwise_spearman", "pairwise_pearson"])
        assert result["num_correlated_pairs"] == 3 and result["num_items"] == {"Topical-Chat": 360,
                                                                                 "PersonaChat": 300}[corpus]
        columns = position_columns(rows)
        for kind in ("spearman", "pearson"):
            oracle = np.mean([_scipy_correlation(kind, columns[first], columns[second])
                              for first, second in itertools.combinations(sorted(columns), 2)])
            assert abs(result[f"pairwise_{kind}"] - oracle) <= 1e-12, (corpus, quality, kind)


def test_usr_table_1_readings_differ(shared_data: Path) -> None:
    """The other readings of "inter-annotator agreement" give other numbers on Topical-Chat's Overall: pairs of
    annotator ids (sm, me, er, fl, yf; ten pairs over the items both rated), leave-one-out, mean pairwise Pearson, and
    Spearman per context averaged over the 60 contexts (each computed with scipy here) all differ from the mean
    pairwise Spearman of rating positions by more than a rounding of the fourth decimal."""
    positions = usr_ratings(shared_data, "Topical-Chat", "Overall", "position")
    table = score(positions, coefficients="pairwise_spearman")["pairwise_spearman"]
    by_id = score(usr_ratings(shared_data, "Topical-Chat", "Overall", "annotator"), coefficients="pairwise_spearman")
    others = score(positions, coefficients=["leave_one_out_spearman", "pairwise_pearson"])
    assert by_id["num_correlated_pairs"] == 10
    by_context: dict[str, dict[int, list[float]]] = {}
    for item, position, label in zip(*positions.values(), strict=True):
        by_context.setdefault(item.split("/")[0], {}).setdefault(position, []).append(label)
    per_context = []
    for columns in by_context.values():
        for first, second in itertools.combinations(sorted(columns), 2):
            per_context.append(_scipy_correlation("spearman", columns[first], columns[second]))
    for reading in (by_id["pairwise_spearman"], others["leave_one_out_spearman"], others["pairwise_pearson"],
                    float(np.nanmean(per_context))):
        assert abs(reading - table) > 0.005, reading