"""The pearsonr and spearmanr modules loaded through evaluate's real loader: parity with scipy 1.17.1 called as
evaluate's modules call it (``scipy.stats.pearsonr(references, predictions)``), p-values included, ties and
constant inputs; evaluate's output keys and types; statistics, shards and streaming; bad input."""

from __future__ import annotations

import math
import random
import uuid
import warnings
from typing import Any

import numpy as np
import pytest

from scipy import stats as scipy_stats

import evaluate  # noqa: E402

import test_correlation_core as core_tests  # noqa: E402
from conftest import METRICS_DIR, load_metric  # noqa: E402

METRICS = ("pearsonr", "spearmanr")
PVALUE_KEYS = {"pearsonr": "p-value", "spearmanr": "spearmanr_pvalue"}
SCIPY = {"pearsonr": scipy_stats.pearsonr, "spearmanr": scipy_stats.spearmanr}
ALTERNATIVES = ("two-sided", "less", "greater")


def quiet(function: Any, *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


@pytest.mark.parametrize("name", METRICS)
def test_parity_with_scipy(name: str) -> None:
    """Generated cases (correlated normals, ties, badly conditioned values, heavy tails, 2 to 200 values), every
    alternative: coefficient within 1e-12 and p-value within 1e-9 of scipy's (counted: bit-identical)."""
    metric, rng = load_metric(name), random.Random(90 + METRICS.index(name))
    counts = {"compared": 0, "bit-identical": 0, "constant": 0}
    for _ in range(150):
        predictions, references = core_tests.random_pair(rng, rng.choice([2, 3, 4, 5, 10, 50, 200]))
        if len(set(predictions)) == 1 or len(set(references)) == 1:
            counts["constant"] += 1
            continue
        for alternative in ALTERNATIVES:
            theirs = quiet(SCIPY[name], references, predictions, alternative=alternative)
            ours = quiet(metric.compute, predictions=predictions, references=references, return_pvalue=True,
                         alternative=alternative)
            assert list(ours) == [name, PVALUE_KEYS[name]]
            statistic, pvalue = ours[name], ours[PVALUE_KEYS[name]]
            if math.isnan(theirs.pvalue):  # scipy: two examples, zero degrees of freedom
                assert name == "spearmanr" and len(predictions) == 2 and math.isnan(pvalue)
                counts["nan"] = counts.get("nan", 0) + 1
            else:
                assert abs(pvalue - theirs.pvalue) <= core_tests.PVALUE_TOLERANCE, (predictions, references)
            assert abs(statistic - theirs.statistic) <= core_tests.COEFFICIENT_TOLERANCE, (predictions, references)
            counts["compared"] += 1
            counts["bit-identical"] += bool(statistic == theirs.statistic and pvalue == theirs.pvalue)
    assert counts["compared"] >= 300, counts
    assert name == "pearsonr" or counts.get("nan", 0) > 0, counts  # the two-example case was drawn and checked


@pytest.mark.parametrize("name", METRICS)
def test_two_examples_give_scipys_pvalue(name: str) -> None:
    """scipy gives Pearson's r = -1 for two opposed pairs with p = 1.0, and Spearman's rho a NaN p-value (its
    t-test has no degree of freedom left); a p-value of 1.0 for Spearman would read as "no evidence" instead."""
    theirs = quiet(SCIPY[name], [2, 1], [1, 2])
    ours = load_metric(name).compute(predictions=[1, 2], references=[2, 1], return_pvalue=True)
    assert ours[name] == pytest.approx(theirs.statistic, abs=1e-15)
    pvalue = ours[PVALUE_KEYS[name]]
    assert (math.isnan(pvalue) and math.isnan(theirs.pvalue)) or pvalue == theirs.pvalue


@pytest.mark.parametrize("name", METRICS)
def test_output_keys_and_types_as_evaluate(name: str) -> None:
    """evaluate's modules: pearsonr gives float(r) alone, numpy floats with the p-value; spearmanr numpy floats."""
    metric = load_metric(name)
    predictions, references = [10, 9, 2.5, 6, 4], [1, 2, 3, 4, 5]
    plain = metric.compute(predictions=predictions, references=references)
    expected = SCIPY[name](references, predictions)
    assert list(plain) == [name] and plain[name] == expected.statistic
    assert type(plain[name]) is (float if name == "pearsonr" else np.float64)
    full = metric.compute(predictions=predictions, references=references, return_pvalue=True)
    assert full == {name: expected.statistic, PVALUE_KEYS[name]: expected.pvalue}
    assert all(type(value) is np.float64 for value in full.values())


@pytest.mark.parametrize("name", METRICS)
def test_ties(name: str) -> None:
    metric = load_metric(name)
    references = [1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 5.0, 5.0]
    predictions = [0.5, 0.7, 0.7, 0.7, 0.1, 0.9, 0.9, 0.2]
    ours = metric.compute(predictions=predictions, references=references, return_pvalue=True)
    theirs = SCIPY[name](references, predictions)
    assert ours[name] == theirs.statistic and abs(ours[PVALUE_KEYS[name]] - theirs.pvalue) <= 1e-9


@pytest.mark.parametrize("name", METRICS)
def test_constant_input_is_zero_with_a_warning(name: str) -> None:
    """scipy returns NaN (with a warning); ours is a defined 0.0, p-value 1.0, with a warning naming the argument."""
    metric = load_metric(name)
    with pytest.warns(UserWarning, match=r"`predictions` constant; the correlation is undefined"):
        result = metric.compute(predictions=[2.0, 2.0, 2.0], references=[1.0, 2.0, 3.0], return_pvalue=True)
    assert result == {name: 0.0, PVALUE_KEYS[name]: 1.0}
    with pytest.warns(UserWarning, match=r"`references` and `predictions` constant"):
        assert metric.compute(predictions=[1, 1], references=[4, 4])[name] == 0.0
    assert math.isnan(quiet(SCIPY[name], [1.0, 2.0, 3.0], [2.0, 2.0, 2.0]).statistic)


@pytest.mark.parametrize("name", METRICS)
def test_statistics_shards_and_streaming(name: str) -> None:
    metric, rng = load_metric(name), random.Random(7)
    streamed = evaluate.load(str(METRICS_DIR / name), experiment_id=uuid.uuid4().hex)
    streamed.stream_batch_size = 7
    for _ in range(10):
        predictions, references = core_tests.random_pair(rng, rng.choice([3, 10, 50]))
        if len(set(predictions)) == 1 or len(set(references)) == 1:
            continue
        one_shot = metric.compute(predictions=predictions, references=references, return_pvalue=True)
        for start in range(0, len(predictions), 4):
            streamed.add_batch(predictions=predictions[start : start + 4], references=references[start : start + 4])
        assert streamed.compute(return_pvalue=True) == one_shot  # in input order: identical
        split = len(predictions) // 2
        shards = [metric.reduce_stats(metric.example_stats(predictions[a:b], references[a:b]))
                  for a, b in ((0, split), (split, len(predictions)))]
        merged = metric.compute_from_stats(shards[::-1], return_pvalue=True)
        whole = metric.compute_from_stats(metric.example_stats(predictions, references), return_pvalue=True)
        assert merged == whole  # pair counts merge exactly
        # the statistics are scored in sorted pair order: scipy's numbers for that order ...
        pairs = sorted(zip(references, predictions, strict=True))
        in_order = quiet(SCIPY[name], [pair[0] for pair in pairs], [pair[1] for pair in pairs])
        assert merged[name] == in_order.statistic
        assert abs(merged[PVALUE_KEYS[name]] - in_order.pvalue) <= core_tests.PVALUE_TOLERANCE
        # ... which differ from the input order's by float summation order only (scipy's own sensitivity: up to
        # about 1e-9 on the badly conditioned generator, a mean of 1e8 and a spread of 1e-3)
        for key in one_shot:
            assert abs(merged[key] - one_shot[key]) <= 1e-8 * max(1.0, abs(one_shot[key])), (key, merged, one_shot)


@pytest.mark.parametrize("name", METRICS)
def test_bad_input(name: str) -> None:
    metric = load_metric(name)
    with pytest.raises(ValueError, match=rf"{name}: got 3 predictions but 2 references"):
        metric.compute(predictions=[1.0, 2.0, 3.0], references=[1.0, 2.0])
    with pytest.raises(ValueError, match=rf"{name}: .*empty"):
        metric.compute(predictions=[], references=[])
    with pytest.raises(ValueError, match=rf"{name}: got 1 example\(s\); a correlation needs at least 2"):
        metric.compute(predictions=[1.0], references=[2.0])
    with pytest.raises(ValueError, match=rf"{name}: `predictions\[1\]` is nan; every value must be finite"):
        metric.compute(predictions=[1.0, math.nan, 3.0], references=[1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match=rf"{name}: `references\[1\]` must be a number, got str"):
        metric.compute(predictions=[1.0, 2.0], references=[1.0, "2"])
    with pytest.raises(TypeError, match=rf"{name}: `predictions\[0\]` must be a number, got bool"):
        metric.compute(predictions=[True, False], references=[1.0, 2.0])
    with pytest.raises(ValueError, match=rf"{name}: unknown `alternative` 'bigger'"):
        metric.compute(predictions=[1.0, 2.0], references=[1.0, 2.0], alternative="bigger")
    with pytest.raises(TypeError, match=rf"{name}: `return_pvalue` must be True or False"):
        metric.compute(predictions=[1.0, 2.0], references=[1.0, 2.0], return_pvalue="yes")
