"""Meta-evaluation core against test-only oracles: scipy.stats (pearsonr, spearmanr, kendalltau with variants b
and c) on generated system-by-item tables, brute-force pair counting for pairwise accuracy and WMT's Kendall-like
tau, a Kendall-like example worked by hand, the Williams test against its formula and against R's psych package,
and the item bootstrap against a plain re-implementation of its resampling."""

from __future__ import annotations

import itertools
import math
import random
import warnings
from collections import defaultdict
from typing import Any

import numpy as np
import pytest
from scipy import stats

from metrics._core import core_meta_pairs as pairs
from metrics._core.core_correlation import UndefinedCorrelationWarning
from metrics._core.core_meta_correlations import williams_test
from metrics._core.core_meta_evaluation import meta_evaluation_of_table, table_from_columns
from metrics._core.core_meta_options import MetaEvaluationOptions
from metrics._core.core_meta_table import ScoreTable

METRIC = "meta_evaluation"
TOLERANCE = 1e-12  # coefficients and p-values alike


def options(**given: Any) -> MetaEvaluationOptions:
    return MetaEvaluationOptions.resolve(METRIC, given)


def score(rows: list[tuple[str, str, float, float]], quiet: bool = True, **given: Any) -> dict[str, Any]:
    """Our result for rows (system, item, metric score, human score)."""
    systems, items, metric, human = (list(column) for column in zip(*rows, strict=True))
    table = ScoreTable.build(METRIC, systems, items, {"predictions": metric, "references": human})
    with warnings.catch_warnings():
        if quiet:
            warnings.simplefilter("ignore", UndefinedCorrelationWarning)
        return meta_evaluation_of_table(METRIC, table, options(**given))


# -- the oracle: scipy per group, brute force for pair counts ----------------------------------------------------


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


def _agreement(metric: list[float], human: list[float]) -> float:
    """Pairwise accuracy by brute force: pairs ordered alike by both (a tie in both agreeing) over all pairs."""
    pairs_ = list(itertools.combinations(range(len(metric)), 2))
    agree = sum(np.sign(metric[i] - metric[j]) == np.sign(human[i] - human[j]) for i, j in pairs_)
    return agree / len(pairs_)


def _or_zero(value: float) -> float:
    """scipy's NaN for an undefined correlation is the module's documented 0.0."""
    return 0.0 if math.isnan(value) else float(value)


def oracle(rows: list[tuple[str, str, float, float]], grouping: str = "item", threshold: float = 25.0) -> dict:
    """What scipy and plain counting say, written independently of the module."""
    by_system: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for system, _, metric, human in rows:
        by_system[system].append((metric, human))
    names = sorted(by_system)
    metric_means = np.array([np.mean([m for m, _ in by_system[name]]) for name in names])
    human_means = np.array([np.mean([h for _, h in by_system[name]]) for name in names])
    pearson = _quiet(stats.pearsonr, human_means, metric_means)
    spearman = _quiet(stats.spearmanr, human_means, metric_means)
    kendall = _quiet(stats.kendalltau, human_means, metric_means)
    expected = {
        "system/pearson": _or_zero(pearson.statistic), "system/spearman": _or_zero(spearman.statistic),
        "system/kendall": _or_zero(kendall.statistic),
        "system/pairwise_accuracy": _agreement(list(metric_means), list(human_means)),
    }
    if not math.isnan(pearson.statistic):
        expected.update({"system/pearson_pvalue": pearson.pvalue, "system/kendall_pvalue": kendall.pvalue})
        if len(names) > 2:
            expected["system/spearman_pvalue"] = spearman.pvalue
    groups: dict[Any, list[tuple[float, float]]] = defaultdict(list)
    for system, item, metric, human in rows:
        groups[{"item": item, "system": system, "none": None}[grouping]].append((metric, human))
    taus: dict[str, list[float]] = {"b": [], "c": []}
    accuracies = []
    for members in groups.values():
        if len(members) < 2:
            continue
        metric, human = [m for m, _ in members], [h for _, h in members]
        accuracies.append(_agreement(metric, human))
        for variant in taus:
            tau = _quiet(stats.kendalltau, metric, human, variant=variant).statistic
            if not math.isnan(tau):
                taus[variant].append(tau)
    concordant = discordant = 0
    by_item: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for _, item, metric, human in rows:
        by_item[item].append((metric, human))
    for members in by_item.values():
        for (m1, h1), (m2, h2) in itertools.combinations(members, 2):
            if abs(h1 - h2) > threshold:
                if (m1 - m2) * (h1 - h2) > 0:
                    concordant += 1
                else:
                    discordant += 1
    expected.update({
        "segment/kendall_b": float(np.mean(taus["b"])) if taus["b"] else 0.0,
        "segment/kendall_c": float(np.mean(taus["c"])) if taus["c"] else 0.0,
        "segment/pairwise_accuracy": float(np.mean(accuracies)) if accuracies else 0.0,
        "segment/kendall_like": ((concordant - discordant) / (concordant + discordant)
                                 if concordant + discordant else 0.0),
        "segment/kendall_groups": len(taus["b"]), "segment/accuracy_groups": len(accuracies),
        "segment/darr_pairs": concordant + discordant,
    })
    return expected


def random_table(rng: random.Random) -> list[tuple[str, str, float, float]]:
    """2 to 8 systems on 1 to 20 items (some rows missing): DA-like integer human scores (0-100, some exactly 25
    apart), metric scores that are continuous, coarse (ties) or dyadic (sums exact in any order), sometimes a
    constant side."""
    n_systems, n_items = rng.randint(2, 8), rng.randint(1, 20)
    kind = rng.randrange(5)
    rows = []
    for system in range(n_systems):
        quality = rng.uniform(20, 80)
        for item in range(n_items):
            if item and rng.random() < 0.2:
                continue
            human = float(min(100, max(0, round(rng.gauss(quality, 25) / 5) * 5)))
            if kind == 0:
                metric = human / 100 + rng.gauss(0, 0.3)
            elif kind == 1:
                metric = float(rng.randint(0, 3))
            elif kind == 2:
                metric = rng.randint(-40, 40) / 8
            elif kind == 3:
                metric, human = (human + rng.randint(-30, 30)) / 4, float(rng.randint(0, 2))
            else:
                metric = 0.5 if rng.random() < 0.7 else rng.random()
            rows.append((f"sys{system}", f"seg{item}", metric, human))
    return rows


def parity(seed: int, tables: int) -> dict[str, int]:
    rng = random.Random(seed)
    counts: dict[str, Any] = {"tables": 0, "comparisons": 0, "bit-identical": 0, "largest difference": 0.0,
                              "largest p-value difference": 0.0}
    for _ in range(tables):
        rows = random_table(rng)
        for grouping in ("item", "system", "none"):
            expected = oracle(rows, grouping)
            try:
                ours = score(rows, grouping=grouping)
            except ValueError as error:  # no group of two rows: an error, as documented
                assert "needs a group of two rows" in str(error)
                assert expected["segment/accuracy_groups"] == 0
                continue
            for key, value in expected.items():
                difference = abs(ours[key] - value)
                assert difference <= TOLERANCE, (key, ours[key], value, grouping, rows)
                largest = "largest p-value difference" if key.endswith("pvalue") else "largest difference"
                counts[largest] = max(counts[largest], float(difference))
                counts["comparisons"] += 1
                counts["bit-identical"] += int(ours[key] == value)
            constant = "system/pearson_pvalue" not in expected
            if constant:
                assert ours["system/pearson_pvalue"] == ours["system/kendall_pvalue"] == 1.0
        counts["tables"] += 1
    return counts


def test_parity_with_scipy_on_generated_tables() -> None:
    counts = parity(seed=19, tables=300)
    assert counts["tables"] == 300 and counts["comparisons"] > 10_000
    # most values equal scipy's bit for bit; the rest differ by summation order of means and group averages
    assert counts["bit-identical"] > 0.8 * counts["comparisons"], counts


@pytest.mark.slow
def test_parity_with_scipy_on_many_generated_tables() -> None:
    counts = parity(seed=2023, tables=10_000)
    print(counts)
    assert counts["tables"] == 10_000


# -- pair counts -------------------------------------------------------------------------------------------------


def test_earlier_greater_counts_inversions() -> None:
    rng = np.random.default_rng(3)
    for size in (0, 1, 2, 3, 7, 64, 65, 300):
        values = rng.integers(0, max(size, 1), size)
        expected = [sum(values[i] > values[j] for i in range(j)) for j in range(size)]
        assert pairs.earlier_greater(values).tolist() == expected


def test_within_group_pairs_in_small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pairs, "_PAIR_CHUNK", 5)
    sizes = np.array([3, 0, 1, 5, 2])
    starts = np.cumsum(sizes) - sizes
    expected = [(start + a, start + b) for start, size in zip(starts, sizes, strict=True)
                for a, b in itertools.combinations(range(size), 2)]
    chunks = list(pairs.within_group_pairs(sizes))
    assert len(chunks) > 1
    assert [(int(i), int(j)) for first, second in chunks for i, j in zip(first, second, strict=True)] == expected


@pytest.mark.parametrize("size", [2, 500, 5000])
def test_one_large_group_equals_scipy_bit_for_bit(size: int) -> None:
    rng = np.random.default_rng(size)
    metric = np.round(rng.normal(size=size), 1)
    human = rng.integers(0, 20, size).astype(float)
    counts = pairs.pair_counts(np.zeros(size, dtype=np.int64), 1, metric, human)
    for variant, ours in (("b", pairs.kendall_tau_b(counts)[0]), ("c", pairs.kendall_tau_c(counts)[0])):
        assert ours == stats.kendalltau(metric, human, variant=variant).statistic


# -- WMT's Kendall-like tau, by hand -------------------------------------------------------------------------------


def test_wmt_kendall_like_worked_by_hand() -> None:
    # Two items, four systems; human scores are DA points, WMT's threshold 25 (a pair needs MORE than 25 apart).
    rows = [
        ("A", "s1", 0.9, 80.0), ("B", "s1", 0.6, 50.0), ("C", "s1", 0.6, 50.0), ("D", "s1", 0.6, 20.0),
        ("A", "s2", 0.5, 70.0), ("B", "s2", 0.7, 45.0), ("C", "s2", 0.8, 95.0), ("D", "s2", 0.1, 30.0),
    ]
    # s1: A-B |80-50|=30 > 25, human A>B, metric 0.9>0.6       -> Concordant
    #     A-C 30, human A>C, metric 0.9>0.6                    -> Concordant
    #     A-D 60, human A>D, metric 0.9>0.6                    -> Concordant
    #     B-C  0 (a human tie)                                 -> no pair
    #     B-D 30, human B>D, metric 0.6=0.6 (a metric tie)     -> Discordant (WMT17 onwards)
    #     C-D 30, human C>D, metric 0.6=0.6                    -> Discordant
    # s2: A-B |70-45|=25, not more than 25                     -> no pair
    #     A-C 25                                               -> no pair
    #     A-D 40, human A>D, metric 0.5>0.1                    -> Concordant
    #     B-C 50, human C>B, metric 0.8>0.7                    -> Concordant
    #     B-D 15                                               -> no pair
    #     C-D 65, human C>D, metric 0.8>0.1                    -> Concordant
    # Concordant 6, Discordant 2: tau = (6 - 2) / (6 + 2) = 0.5 over 8 pairs.
    result = score(rows)
    assert result["segment/kendall_like"] == 0.5 and result["segment/darr_pairs"] == 8
    # mt-metrics-eval's KendallLike keeps pairs exactly at the threshold (>=): here 24.9 does the same, adding
    # s2's A-B (human A>B, metric 0.5<0.7: Discordant) and A-C (human C>A, metric 0.8>0.5: Concordant): 7 vs 3
    result = score(rows, darr_threshold=24.9)
    assert result["segment/kendall_like"] == (7 - 3) / 10 and result["segment/darr_pairs"] == 10
    # threshold 0: every pair with a human preference; s1's B-C (a human tie) still is no pair
    assert score(rows, darr_threshold=0.0)["segment/darr_pairs"] == 11


def test_kendall_like_without_pairs_is_zero_with_a_warning() -> None:
    rows = [("A", "s1", 0.9, 50.0), ("B", "s1", 0.1, 40.0), ("A", "s2", 0.2, 60.0), ("B", "s2", 0.3, 70.0)]
    with pytest.warns(UndefinedCorrelationWarning, match="no two systems' human scores for an item differ"):
        result = score(rows, quiet=False, level="segment")
    assert result["segment/kendall_like"] == 0.0 and result["segment/darr_pairs"] == 0


# -- the Williams test ---------------------------------------------------------------------------------------------


def test_williams_test_matches_r_psych() -> None:
    # R psych 2.2.9 (Debian r-cran-psych), run on two dependent correlations sharing a variable:
    #   r.test(n=103, r12=0.5, r13=0.4, r23=0.1)$t  -> 0.89127990476054142
    #   r.test(n=103, r12=0.5, r13=0.4, r23=0.1, twotailed=FALSE)$p -> 0.18745925874562785
    #   paired.r(0.5, 0.3, 0.4, 100, twotailed=FALSE): t 2.0649936492350145, p 0.020795743705913937
    test = williams_test(0.5, 0.4, 0.1, 103)
    assert test.df == 100
    assert abs(test.t - 0.89127990476054142) <= 1e-12 and abs(test.pvalue - 0.18745925874562785) <= 1e-12
    test = williams_test(0.5, 0.3, 0.4, 100)
    assert abs(test.t - 2.0649936492350145) <= 1e-12 and abs(test.pvalue - 0.020795743705913937) <= 1e-12


def test_williams_test_on_system_means_follows_the_formula() -> None:
    # six systems, one item each: the system means are the rows' scores
    human = [72.0, 60.0, 55.0, 41.0, 38.0, 20.0]
    bleu = [0.41, 0.35, 0.38, 0.30, 0.22, 0.18]
    chrf = [0.60, 0.61, 0.52, 0.55, 0.40, 0.47]
    rows = [(f"s{index}", "doc", b, h) for index, (b, h) in enumerate(zip(bleu, human, strict=True))]
    systems, items, metric, humans = (list(column) for column in zip(*rows, strict=True))
    table = ScoreTable.build(METRIC, systems, items,
                             {"predictions": metric, "references": humans, "other_metrics/chrf": chrf})
    result = meta_evaluation_of_table(METRIC, table, options(level="system", other_metrics={"chrf": chrf}))
    # Williams (1959) as Graham & Baldwin (2014) give it, written out here
    r12 = stats.pearsonr(human, bleu).statistic
    r13 = stats.pearsonr(human, chrf).statistic
    r23 = stats.pearsonr(bleu, chrf).statistic
    n = 6
    k = 1 - r12 ** 2 - r13 ** 2 - r23 ** 2 + 2 * r12 * r13 * r23
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23)) / math.sqrt(
        2 * k * (n - 1) / (n - 3) + ((r12 + r13) ** 2 / 4) * (1 - r23) ** 3)
    assert t > 0  # BLEU correlates better here
    assert abs(result["williams/chrf/t"] - t) <= 1e-12
    assert abs(result["williams/chrf/pvalue"] - stats.t.sf(t, n - 3)) <= 1e-12
    assert result["system/pearson"] == pytest.approx(r12, abs=1e-15)
    assert result["chrf/system/pearson"] == pytest.approx(r13, abs=1e-15)


def test_williams_test_is_antisymmetric_and_zero_for_equal_correlations() -> None:
    forward, backward = williams_test(0.8, 0.6, 0.5, 12), williams_test(0.6, 0.8, 0.5, 12)
    assert backward.t == -forward.t and backward.pvalue == forward.pvalue
    same = williams_test(0.7, 0.7, 1.0, 10)  # identical metrics: no difference at all
    assert same.t == 0.0 and same.pvalue == 0.5
    with pytest.raises(ValueError, match="at least 4 observations"):
        williams_test(0.5, 0.4, 0.1, 3)


# -- the bootstrap over items --------------------------------------------------------------------------------------


def test_bootstrap_resamples_items_as_described() -> None:
    rng = random.Random(5)
    rows = [(f"sys{system}", f"seg{item}", rng.random(), float(rng.randint(0, 100)))
            for system in range(4) for item in range(6)]
    n_bootstrap, seed = 40, 7
    result = score(rows, confidence=True, n_bootstrap=n_bootstrap, seed=seed)
    # the resamples, drawn independently: numpy's default_rng(seed).choice over the items (sacreBLEU's draw), each
    # drawn item a separate item; an undefined value counts as 0.0
    items = sorted({item for _, item, _, _ in rows})
    draws = np.random.default_rng(seed).choice(len(items), size=(n_bootstrap, len(items)), replace=True)
    resampled: dict[str, list[float]] = defaultdict(list)
    for draw in draws:
        sample = [(system, f"copy{slot}", metric, human) for slot, index in enumerate(draw)
                  for system, item, metric, human in rows if item == items[index]]
        for key, value in oracle(sample).items():
            resampled[key].append(value)
    for key in ("system/pearson", "system/kendall", "segment/kendall_b", "segment/kendall_c",
                "segment/pairwise_accuracy", "segment/kendall_like"):
        ordered = sorted(resampled[key])
        # 95%: drop floor(40 * 0.025) = 1 value at each end
        assert abs(result[f"{key}_low"] - ordered[1]) <= TOLERANCE, key
        assert abs(result[f"{key}_high"] - ordered[-2]) <= TOLERANCE, key
    assert score(rows, confidence=True, n_bootstrap=n_bootstrap, seed=seed) == result  # seeded
    assert score(rows, confidence=True, n_bootstrap=n_bootstrap, seed=seed + 1) != result


# -- undefined values and bad tables -------------------------------------------------------------------------------


def test_constant_system_means_give_zero_and_a_warning() -> None:
    rows = [("A", "s1", 0.25, 50.0), ("A", "s2", 0.75, 70.0), ("B", "s1", 0.5, 50.0), ("B", "s2", 0.5, 80.0)]
    with pytest.warns(UndefinedCorrelationWarning, match=r"the same mean metric score \(predictions\)"):
        result = score(rows, quiet=False, level="system")
    assert result["system/pearson"] == result["system/spearman"] == result["system/kendall"] == 0.0
    assert result["system/pearson_pvalue"] == result["system/kendall_pvalue"] == 1.0
    assert result["system/pairwise_accuracy"] == 0.0  # means 0.5 and 0.5 (a metric tie) where humans say 60 < 65


def test_groups_with_one_score_or_a_constant_side_are_left_out() -> None:
    rows = [("A", "s1", 0.9, 80.0), ("B", "s1", 0.1, 20.0),   # ordered alike: tau 1
            ("A", "s2", 0.5, 50.0), ("B", "s2", 0.7, 50.0),   # humans tied: tau undefined, accuracy 0
            ("A", "s3", 0.3, 10.0)]                           # one score: no pair
    result = score(rows)
    assert result["segment/kendall_b"] == 1.0 and result["segment/kendall_groups"] == 1
    assert result["segment/pairwise_accuracy"] == 0.5 and result["segment/accuracy_groups"] == 2


def test_every_group_constant_gives_zero_and_a_warning() -> None:
    rows = [("A", "s1", 0.9, 50.0), ("B", "s1", 0.1, 50.0), ("A", "s2", 0.5, 40.0), ("B", "s2", 0.7, 40.0)]
    with pytest.warns(UndefinedCorrelationWarning, match="every group of two or more rows has constant"):
        result = score(rows, quiet=False, level="segment")
    assert result["segment/kendall_b"] == result["segment/kendall_c"] == 0.0
    assert result["segment/kendall_groups"] == 0


def test_bad_tables_are_errors() -> None:
    rows = [("A", "s1", 0.9, 50.0), ("B", "s2", 0.1, 40.0)]
    with pytest.raises(ValueError, match="no item has scores of two systems"):
        score(rows, level="segment")
    assert score(rows, level="segment", grouping="none")["segment/accuracy_groups"] == 1
    with pytest.raises(ValueError, match="needs at least 2 systems, got 1"):
        score([("A", "s1", 0.9, 50.0), ("A", "s2", 0.1, 40.0)])
    with pytest.raises(ValueError, match=r"rows 0 and 2 of `systems` and `items` are both system 'A' on item 's1'"):
        score([("A", "s1", 0.9, 50.0), ("B", "s1", 0.1, 40.0), ("A", "s1", 0.3, 20.0)])
    with pytest.raises(ValueError, match="needs at least 4 systems"):
        systems, items = ["A", "B", "C"], ["s1"] * 3
        table = ScoreTable.build(METRIC, systems, items, {"predictions": [1.0, 2.0, 3.0], "references": [3.0, 1.0, 2.0],
                                                          "other_metrics/x": [1.0, 3.0, 2.0]})
        meta_evaluation_of_table(METRIC, table, options(other_metrics={"x": [1.0, 3.0, 2.0]}))


# -- turn level (flat Pearson and Spearman), several human qualities -------------------------------------------------


def turn_oracle(metric: list[float], human: list[float]) -> dict[str, float]:
    """scipy.stats.pearsonr(human, metric) and spearmanr(human, metric), with the module's documented values where
    scipy has none (a constant side: 0.0, p-value 1.0; Spearman's p-value of two rows: 1.0)."""
    if len(set(metric)) < 2 or len(set(human)) < 2:
        return {"turn/pearson": 0.0, "turn/pearson_pvalue": 1.0, "turn/spearman": 0.0, "turn/spearman_pvalue": 1.0}
    pearson = _quiet(stats.pearsonr, human, metric)
    spearman = _quiet(stats.spearmanr, human, metric)
    return {"turn/pearson": float(pearson.statistic), "turn/pearson_pvalue": float(pearson.pvalue),
            "turn/spearman": float(spearman.statistic),
            "turn/spearman_pvalue": 1.0 if len(metric) == 2 else float(spearman.pvalue)}


def turn_parity(seed: int, tables: int) -> dict[str, Any]:
    rng = random.Random(seed)
    counts: dict[str, Any] = {"tables": 0, "comparisons": 0, "bit-identical in canonical order": 0,
                              "largest difference": 0.0}
    for _ in range(tables):
        rows = random_table(rng)
        if len(rows) < 2:
            continue
        ours = score(rows, level="turn")
        given_order = turn_oracle([r[2] for r in rows], [r[3] for r in rows])
        canonical = sorted(rows, key=lambda row: (row[0], row[1]))  # the table's (system, item) order
        sorted_order = turn_oracle([r[2] for r in canonical], [r[3] for r in canonical])
        for key, value in given_order.items():
            difference = abs(ours[key] - value)
            assert difference <= TOLERANCE, (key, ours[key], value, rows)
            counts["largest difference"] = max(counts["largest difference"], difference)
            counts["comparisons"] += 1
            counts["bit-identical in canonical order"] += int(ours[key] == sorted_order[key])
        counts["tables"] += 1
    return counts


def test_turn_level_equals_scipy_on_generated_tables() -> None:
    counts = turn_parity(seed=29, tables=400)
    print(counts)
    assert counts["tables"] > 350
    # the module correlates the rows in (system, item) order: scipy on that order gives the same bits
    assert counts["bit-identical in canonical order"] == counts["comparisons"], counts


@pytest.mark.slow
def test_turn_level_equals_scipy_on_many_generated_tables() -> None:
    counts = turn_parity(seed=2029, tables=10_000)
    print(counts)
    assert counts["bit-identical in canonical order"] == counts["comparisons"], counts


def table_with_qualities(seed: int) -> tuple[list[tuple[str, str, float, float]], dict[str, list[float]],
                                             dict[str, list[float]]]:
    """Rows (system, item, metric, references), two more human qualities of the same rows, another metric."""
    rng = random.Random(seed)
    rows, natural, engaging, other = [], [], [], []
    for system in range(5):
        for item in range(12):
            if rng.random() < 0.15:
                continue
            quality = rng.gauss(system, 2)
            rows.append((f"sys{system}", f"ctx{item}", quality + rng.gauss(0, 1), float(round(quality))))
            natural.append(float(rng.randint(1, 3)))
            engaging.append(round(quality + rng.gauss(0, 1), 1))
            other.append(quality + rng.gauss(0, 3))
    return rows, {"Natural": natural, "Engaging": engaging}, {"chrf": other}


def score_with(rows: list[tuple[str, str, float, float]], extra: dict[str, list[float]], **given: Any) -> dict:
    """Our result for rows with other score columns (``other_metrics/<name>``, ``qualities/<name>``)."""
    systems, items, metric, human = (list(column) for column in zip(*rows, strict=True))
    table = ScoreTable.build(METRIC, systems, items, {"predictions": metric, **{
        f"other_metrics/{name}": values for name, values in given.get("other_metrics", {}).items()},
        "references": human, **{f"qualities/{name}": values for name, values in extra.items()}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedCorrelationWarning)
        return meta_evaluation_of_table(METRIC, table, options(qualities=extra or None, **given))


@pytest.mark.parametrize("given", [{"level": ["system", "segment", "turn"]},
                                   {"level": "turn", "confidence": True, "n_bootstrap": 50},
                                   {"level": ["turn", "system"], "grouping": "none", "confidence": True,
                                    "n_bootstrap": 30}])
def test_several_qualities_equal_one_call_per_quality(given: dict) -> None:
    """Every quality's keys (``<quality>/...``, ``<metric>/<quality>/...``) are, bit for bit, the result of a call
    with that quality as `references`; the references' keys are the plain call's."""
    rows, qualities, others = table_with_qualities(3)
    both = score_with(rows, qualities, other_metrics=others, **given)
    alone = score_with(rows, {}, other_metrics=others, **given)
    assert {key: both[key] for key in alone} == alone
    for name, human in qualities.items():
        swapped = [(system, item, metric, value) for (system, item, metric, _), value in zip(rows, human, strict=True)]
        separate = score_with(swapped, {}, other_metrics=others, **given)
        for key, value in separate.items():
            if key.startswith("num_"):
                continue
            prefixed = f"chrf/{name}/{key[5:]}" if key.startswith("chrf/") else f"{name}/{key}"
            assert both[prefixed] == value, (prefixed, both[prefixed], value)
    assert "Natural/turn/spearman" in both and "chrf/Engaging/turn/pearson" in both


def test_turn_level_bootstrap_resamples_items() -> None:
    """Turn-level intervals: items drawn with numpy's default_rng(seed).choice (sacreBLEU's draw), every row of a
    drawn item taken as often as it is drawn, scipy's pearsonr/spearmanr on the rows, sacreBLEU's percentile rule."""
    rows, _, _ = table_with_qualities(4)
    n_bootstrap, seed = 80, 11
    result = score(rows, level="turn", confidence=True, n_bootstrap=n_bootstrap, seed=seed)
    items = sorted({item for _, item, _, _ in rows})
    draws = np.random.default_rng(seed).choice(len(items), size=(n_bootstrap, len(items)), replace=True)
    resampled: dict[str, list[float]] = defaultdict(list)
    for draw in draws:
        sample = [row for index in draw for row in rows if row[1] == items[index]]
        for key, value in turn_oracle([r[2] for r in sample], [r[3] for r in sample]).items():
            resampled[key].append(value)
    for key in ("turn/pearson", "turn/spearman"):
        ordered = sorted(resampled[key])
        drop = int(n_bootstrap * 0.025)
        assert abs(result[f"{key}_low"] - ordered[drop]) <= TOLERANCE, key
        assert abs(result[f"{key}_high"] - ordered[-1 - drop]) <= TOLERANCE, key
        assert result[f"{key}_low"] <= result[key] <= result[f"{key}_high"]
    assert "turn/pearson_pvalue_low" not in result
    assert score(rows, level="turn", confidence=True, n_bootstrap=n_bootstrap, seed=seed) == result


def test_levels_and_the_default_result() -> None:
    rows, _, _ = table_with_qualities(5)
    default = score(rows)
    assert score(rows, level="both") == default == score(rows, level=["segment", "system"])
    assert not any(key.startswith("turn/") for key in default)
    turn = score(rows, level=["turn"])
    assert set(turn) == {"num_systems", "num_items", "num_segments", "turn/pearson", "turn/pearson_pvalue",
                         "turn/spearman", "turn/spearman_pvalue"}
    everything = score(rows, level=["turn", "segment", "system"])
    assert {key: everything[key] for key in default} == default
    assert {key: everything[key] for key in turn} == turn
    single = [(f"sys{index}", "ctx", float(index), float(index % 3)) for index in range(4)]
    assert score(single, level="turn")["turn/spearman"] == pytest.approx(
        float(stats.spearmanr([r[3] for r in single], [r[2] for r in single]).statistic), abs=1e-15)
    one_system = [("sys", f"ctx{index}", float(index), float(index % 3)) for index in range(4)]
    assert score(one_system, level="turn")["num_systems"] == 1  # no system-level check at turn level


def test_turn_level_errors_and_undefined_values() -> None:
    with pytest.raises(ValueError, match=r"turn-level correlation needs at least 2 rows, got 1"):
        score([("A", "s1", 0.5, 3.0)], level="turn")
    with pytest.warns(UndefinedCorrelationWarning, match=r"turn level: every row has the same human score"):
        result = score([("A", "s1", 0.5, 3.0), ("B", "s1", 0.7, 3.0)], quiet=False, level="turn")
    assert result["turn/pearson"] == 0.0 and result["turn/pearson_pvalue"] == 1.0
    two = score([("A", "s1", 0.5, 2.0), ("B", "s1", 0.7, 3.0)], level="turn")
    assert two["turn/pearson"] == 1.0  # scipy's exact value for two rows
    # 0.9999999999999999, as scipy's
    assert two["turn/spearman"] == float(stats.spearmanr([2.0, 3.0], [0.5, 0.7]).statistic)
    assert two["turn/pearson_pvalue"] == two["turn/spearman_pvalue"] == 1.0  # scipy's Pearson value for n = 2
    for level, message in (("turns", r"unknown `level` 'turns'"), ([], r"`level` is an empty list"),
                           (["turn", "items"], r"unknown `level\[1\]` 'items'")):
        with pytest.raises(ValueError, match=message):
            options(level=level)
    with pytest.raises(TypeError, match=r"`level` must be a level name"):
        options(level=3)
    with pytest.raises(ValueError, match=r"'bleu' names both one of `other_metrics` and one of `qualities`"):
        options(other_metrics={"bleu": [1.0]}, qualities={"bleu": [1.0]})
    for name in ("turn", "a/b"):
        with pytest.raises(ValueError, match=r"`qualities` key .* cannot name a quality"):
            options(qualities={name: [1.0]})
    with pytest.raises(TypeError, match=r"`qualities` must be a mapping"):
        options(qualities=[1.0, 2.0])


# -- the USR annotations: one annotator against the mean of the others ------------------------------------------------

USR_QUALITIES = ("Understandable", "Natural", "Maintains Context", "Engaging", "Uses Knowledge", "Overall")


@pytest.mark.parametrize("corpus", ["usr_topical_chat.json", "usr_percona_chat.json"])
def test_usr_one_annotator_against_the_mean_of_the_others(shared_data, corpus: str) -> None:
    """Every response of the USR release is a row (its model the system, its context the item): the first rating
    position's Overall as `predictions`, the mean of the other two positions' ratings of each quality as the human
    scores (Overall as `references`, the other five as `qualities`), one call for all six; every turn-level value
    equals scipy's on the rows in file order (1e-12), system-level Spearman too, and the item bootstrap is seeded."""
    import json

    with open(shared_data / "usr" / corpus, encoding="utf-8") as handle:
        contexts = json.load(handle)
    responses = [(response["model"], str(index), response) for index, context in enumerate(contexts)
                 for response in context["responses"]]
    first = [float(response["Overall"][0]) for _, _, response in responses]
    others = {quality: [float(np.mean(response[quality][1:])) for _, _, response in responses]
              for quality in USR_QUALITIES}
    columns = {"predictions": first, "references": others["Overall"], "systems": [m for m, _, _ in responses],
               "items": [i for _, i, _ in responses]}
    qualities = {quality: values for quality, values in others.items() if quality != "Overall"}
    given = {"level": ["turn", "system"], "qualities": qualities, "confidence": True, "n_bootstrap": 200}
    opts = options(**given)
    result = meta_evaluation_of_table(METRIC, table_from_columns(METRIC, columns, opts), opts)
    assert result["num_segments"] == len(responses) and result["num_items"] == 60
    for quality, human in others.items():
        prefix = "" if quality == "Overall" else f"{quality}/"
        for key, value in turn_oracle(first, human).items():
            assert abs(result[prefix + key] - value) <= TOLERANCE, (quality, key, result[prefix + key], value)
        models = sorted({m for m, _, _ in responses})
        means = [[float(np.mean([v for (m, _, _), v in zip(responses, values, strict=True) if m == model]))
                  for model in models] for values in (first, human)]
        assert result[prefix + "system/spearman"] == pytest.approx(
            float(stats.spearmanr(means[1], means[0]).statistic), abs=TOLERANCE)
        assert result[prefix + "turn/pearson_low"] <= result[prefix + "turn/pearson"] <= result[
            prefix + "turn/pearson_high"]
    assert result["turn/spearman"] > 0.5  # an annotator agrees with the others on Overall
    again = meta_evaluation_of_table(METRIC, table_from_columns(METRIC, columns, opts), opts)
    assert again == result
