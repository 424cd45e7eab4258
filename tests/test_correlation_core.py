"""Correlation core: Pearson and Spearman against scipy.stats (what evaluate's pearsonr/spearmanr modules call, as
``pearsonr(references, predictions)`` and ``spearmanr(references, predictions)``), the defined results where scipy
returns NaN, and bad input."""

from __future__ import annotations

import math
import random
import warnings

import numpy as np
import pytest

from scipy import stats as scipy_stats

from metrics._core import core_correlation as cr  # noqa: E402


def opts(options_class, **given):
    """Checked options, as the metric modules resolve them."""
    return options_class.resolve(options_class.metric_name, given)


COEFFICIENT_TOLERANCE = 1e-12
PVALUE_TOLERANCE = 1e-9


def random_pair(rng: random.Random, size: int) -> tuple[list[float], list[float]]:
    """Predictions and references: correlated normals, ties (small integers), badly conditioned values (large mean,
    tiny spread), near-perfect and inverted relations, heavy tails."""
    kind = rng.randrange(6)
    x = [rng.gauss(0, 1) for _ in range(size)]
    if kind == 0:
        slope, noise = rng.uniform(-2, 2), rng.random()
        y = [slope * value + noise * rng.gauss(0, 1) for value in x]
    elif kind == 1:
        x = [float(rng.randint(0, 3)) for _ in range(size)]
        y = [float(rng.randint(0, 2)) + (value if rng.random() < 0.5 else 0) for value in x]
    elif kind == 2:
        x = [1e8 + rng.gauss(0, 1e-3) for _ in range(size)]
        y = [value * 0.5 + rng.gauss(0, 1e-4) for value in x]
    elif kind == 3:
        y = [-value + 1e-9 * rng.random() for value in x]
    elif kind == 4:
        x = [math.exp(rng.gauss(0, 5)) for _ in range(size)]
        y = [value + rng.expovariate(1e-3) for value in x]
    else:
        y = [rng.choice([0.5, 1.5, 2.5]) for _ in range(size)]
    return y, x


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


def run_parity(seed: int, cases: int) -> dict[str, int]:
    rng = random.Random(seed)
    counts = {"comparisons": 0, "bit-identical": 0, "skipped constant": 0}
    for _ in range(cases):
        size = rng.choice([2, 3, 3, 4, 5, 10, 50, 200])
        predictions, references = random_pair(rng, size)
        if len(set(predictions)) == 1 or len(set(references)) == 1:
            counts["skipped constant"] += 1
            continue
        for alternative in cr.ALTERNATIVES:
            theirs = _quiet(scipy_stats.pearsonr, references, predictions, alternative=alternative)
            options = opts(cr.PearsonrOptions, return_pvalue=True, alternative=alternative)
            ours = _quiet(cr.pearsonr_score, predictions, references, options)
            assert abs(ours["pearsonr"] - theirs.statistic) <= COEFFICIENT_TOLERANCE, (predictions, references)
            assert abs(ours["p-value"] - theirs.pvalue) <= PVALUE_TOLERANCE, (predictions, references)
            counts["bit-identical"] += bool(ours["pearsonr"] == theirs.statistic and ours["p-value"] == theirs.pvalue)
            counts["comparisons"] += 1
            theirs = _quiet(scipy_stats.spearmanr, references, predictions, alternative=alternative)
            options = opts(cr.SpearmanrOptions, return_pvalue=True, alternative=alternative)
            ours = _quiet(cr.spearmanr_score, predictions, references, options)
            assert abs(ours["spearmanr"] - theirs.statistic) <= COEFFICIENT_TOLERANCE, (predictions, references)
            if size > 2:
                assert abs(ours["spearmanr_pvalue"] - theirs.pvalue) <= PVALUE_TOLERANCE, (predictions, references)
                counts["bit-identical"] += bool(ours["spearmanr"] == theirs.statistic
                                                and ours["spearmanr_pvalue"] == theirs.pvalue)
                counts["comparisons"] += 1
    return counts


def test_parity_generated() -> None:
    counts = run_parity(seed=7, cases=300)
    assert counts["comparisons"] > 1500, counts


@pytest.mark.slow
def test_parity_many() -> None:
    counts = run_parity(seed=8, cases=20000)
    print("correlation parity", counts)


def test_evaluate_docstring_examples() -> None:
    """evaluate's module docstrings (metrics/pearsonr/pearsonr.py, metrics/spearmanr/spearmanr.py)."""
    predictions, references = [10, 9, 2.5, 6, 4], [1, 2, 3, 4, 5]
    result = cr.pearsonr_score(predictions, references, opts(cr.PearsonrOptions))
    assert list(result) == ["pearsonr"] and type(result["pearsonr"]) is float and round(result["pearsonr"], 2) == -0.74
    result = cr.pearsonr_score(predictions, references, opts(cr.PearsonrOptions, return_pvalue=True))
    assert sorted(result) == ["p-value", "pearsonr"]
    assert round(result["pearsonr"], 2) == -0.74 and round(result["p-value"], 2) == 0.15
    assert all(type(value) is np.float64 for value in result.values())
    result = cr.spearmanr_score(predictions, references, opts(cr.SpearmanrOptions))
    assert result == {"spearmanr": -0.7} and type(result["spearmanr"]) is np.float64
    result = cr.spearmanr_score(predictions, references, opts(cr.SpearmanrOptions, return_pvalue=True))
    assert result["spearmanr"] == -0.7 and round(result["spearmanr_pvalue"], 2) == 0.19


def test_two_and_three_examples() -> None:
    for predictions, references in (([1.0, 2.0], [3.0, 1.0]), ([0.5, 0.25], [0.1, 0.2])):
        theirs = scipy_stats.pearsonr(references, predictions)
        ours = cr.pearsonr_score(predictions, references, opts(cr.PearsonrOptions, return_pvalue=True))
        assert (ours["pearsonr"], ours["p-value"]) == (theirs.statistic, theirs.pvalue)
        assert abs(ours["pearsonr"]) == 1.0 and ours["p-value"] == 1.0
        theirs = scipy_stats.spearmanr(references, predictions)
        ours = cr.spearmanr_score(predictions, references, opts(cr.SpearmanrOptions, return_pvalue=True))
        assert ours["spearmanr"] == theirs.statistic
        assert math.isnan(theirs.pvalue) and math.isnan(ours["spearmanr_pvalue"])  # zero degrees of freedom
    predictions, references = [1.0, 3.0, 2.0], [1.0, 2.0, 3.0]
    theirs = scipy_stats.spearmanr(references, predictions)
    ours = cr.spearmanr_score(predictions, references, opts(cr.SpearmanrOptions, return_pvalue=True))
    assert (ours["spearmanr"], ours["spearmanr_pvalue"]) == (theirs.statistic, theirs.pvalue) == (0.5, theirs.pvalue)
    theirs = scipy_stats.pearsonr(references, predictions)
    ours = cr.pearsonr_score(predictions, references, opts(cr.PearsonrOptions, return_pvalue=True))
    assert (ours["pearsonr"], ours["p-value"]) == (theirs.statistic, theirs.pvalue)


def test_constant_input_is_zero_with_a_warning() -> None:
    """scipy returns NaN (ConstantInputWarning); ours is the documented 0.0 with p-value 1.0 and a warning."""
    predictions, references = [2.0, 2.0, 2.0, 2.0], [1.0, 2.0, 3.0, 4.0]
    with pytest.warns(scipy_stats.ConstantInputWarning):
        assert math.isnan(scipy_stats.pearsonr(references, predictions).statistic)
    with pytest.warns(cr.UndefinedCorrelationWarning, match=r"pearsonr: `predictions` constant"):
        result = cr.pearsonr_score(predictions, references, opts(cr.PearsonrOptions, return_pvalue=True))
    assert result == {"pearsonr": 0.0, "p-value": 1.0}
    with pytest.warns(cr.UndefinedCorrelationWarning, match=r"spearmanr: `references` and `predictions` constant"):
        result = cr.spearmanr_score([5, 5], [1, 1], opts(cr.SpearmanrOptions, return_pvalue=True))
    assert result == {"spearmanr": 0.0, "spearmanr_pvalue": 1.0}
    with pytest.warns(cr.UndefinedCorrelationWarning):
        assert cr.pearsonr_score([1, 2, 3], [0, 0, 0], opts(cr.PearsonrOptions)) == {"pearsonr": 0.0}


def test_ties_and_ranks() -> None:
    rng = np.random.default_rng(11)
    for size in (2, 3, 7, 100, 1000):
        for high in (2, 5, 1000):
            values = rng.integers(0, high, size).astype(np.float64)
            assert np.array_equal(cr.average_ranks(values), scipy_stats.rankdata(values))
    assert cr.average_ranks(np.array([-0.0, 0.0, 1.0])).tolist() == [1.5, 1.5, 3.0]


def test_badly_conditioned_data_needs_the_corpus() -> None:
    """Values 1e8 + N(0, 1e-3): our two-pass arithmetic equals scipy's; the sufficient-statistics formula
    (n Sxy - Sx Sy) / sqrt((n Sxx - Sx^2)(n Syy - Sy^2)) with exact float sums loses every digit."""
    rng = np.random.default_rng(2)
    x = 1e8 + rng.normal(0, 1e-3, 1000)
    y = x + rng.normal(0, 1e-3, 1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = scipy_stats.pearsonr(x, y).statistic
        ours = cr.pearsonr_score(y, x, opts(cr.PearsonrOptions))["pearsonr"]
    assert ours == theirs and 0.5 < theirs < 0.9
    n, sx, sy = len(x), math.fsum(x), math.fsum(y)
    sxx, syy, sxy = math.fsum(x * x), math.fsum(y * y), math.fsum(x * y)
    with np.errstate(invalid="ignore", divide="ignore"):
        naive = (n * sxy - sx * sy) / np.sqrt((n * sxx - sx * sx) * (n * syy - sy * sy))
    assert not abs(naive - theirs) < 1e-3


def test_near_constant_input_warns_like_scipy() -> None:
    x, y = [1e9, 1e9 + 1e-6, 1e9 - 1e-6, 1e9], [1.0, 2.0, 0.0, 1.5]
    with pytest.warns(scipy_stats.NearConstantInputWarning):
        theirs = scipy_stats.pearsonr(x, y).statistic
    with pytest.warns(cr.NearConstantInputWarning):
        assert cr.pearsonr_score(y, x, opts(cr.PearsonrOptions))["pearsonr"] == theirs


def test_input_forms() -> None:
    expected = cr.pearsonr_score([1.0, 2.0, 4.0], [1.0, 3.0, 2.0], opts(cr.PearsonrOptions))
    assert cr.pearsonr_score(np.array([1, 2, 4], dtype=np.int32), (1, 3, 2), opts(cr.PearsonrOptions)) == expected
    assert cr.pearsonr_score(np.array([1, 2, 4], dtype=np.float32), [1, 3, 2], opts(cr.PearsonrOptions)) == expected
    import torch
    tensors = (torch.tensor([1.0, 2.0, 4.0]), torch.tensor([1, 3, 2]))
    assert cr.pearsonr_score(*tensors, opts(cr.PearsonrOptions)) == expected


def test_bad_input() -> None:
    options = opts(cr.PearsonrOptions)
    with pytest.raises(ValueError, match=r"pearsonr: got 3 predictions but 2 references"):
        cr.pearsonr_score([1, 2, 3], [1, 2], options)
    with pytest.raises(ValueError, match=r"spearmanr: got 1 example\(s\); a correlation needs at least 2 pairs"):
        cr.spearmanr_score([1.0], [2.0], opts(cr.SpearmanrOptions))
    with pytest.raises(ValueError, match=r"pearsonr: got 0 example\(s\)"):
        cr.pearsonr_score([], [], options)
    with pytest.raises(ValueError, match=r"pearsonr: `predictions\[1\]` is nan; every value must be finite"):
        cr.pearsonr_score([1.0, math.nan, 2.0], [1, 2, 3], options)
    with pytest.raises(ValueError, match=r"spearmanr: `references\[2\]` is inf"):
        cr.spearmanr_score([1.0, 2.0, 3.0], [1, 2, math.inf], opts(cr.SpearmanrOptions))
    with pytest.raises(TypeError, match=r"pearsonr: `predictions\[1\]` must be a number, got str"):
        cr.pearsonr_score([1.0, "2", 3.0], [1, 2, 3], options)
    with pytest.raises(TypeError, match=r"pearsonr: `references\[0\]` must be a number, got bool"):
        cr.pearsonr_score([1.0, 2.0], [True, False], options)
    with pytest.raises(TypeError, match=r"pearsonr: `references\[0\]` must be a number, got NoneType"):
        cr.pearsonr_score([1.0, 2.0], [None, 1.0], options)
    with pytest.raises(TypeError, match=r"pearsonr: `predictions\[0\]` must be a number, got list"):
        cr.pearsonr_score([[1.0], [2.0]], [1.0, 2.0], options)
    with pytest.raises(TypeError, match=r"pearsonr: `references` is None"):
        cr.pearsonr_score([1.0, 2.0], None, options)
    with pytest.raises(ValueError, match=r"pearsonr: unknown `alternative` 'bigger'"):
        opts(cr.PearsonrOptions, alternative="bigger")
    with pytest.raises(TypeError, match=r"spearmanr: `return_pvalue` must be True or False"):
        opts(cr.SpearmanrOptions, return_pvalue="yes")
