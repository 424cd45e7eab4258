"""The five classification modules (accuracy, precision, recall, f1, matthews_correlation) loaded through
evaluate's real loader: parity with scikit-learn 1.9.1 called as evaluate's modules call it, shards and
streaming equal to one-shot scoring, and bad input.

The generated label sets and the oracles are those of ``tests/test_classification_core.py`` (missing classes,
labels only in predictions, single-class input, all-zero predictions, perfect predictions, weights of several
distributions including zeros); here they go through ``compute`` with evaluate's keyword arguments, integer
labels only (evaluate's features are int32).
"""

from __future__ import annotations

import math
import random
import uuid
from typing import Any

import numpy as np
import pytest

import evaluate  # noqa: E402

import test_classification_core as oracle  # noqa: E402
from conftest import METRICS_DIR, load_metric  # noqa: E402
from metrics._core import core_classification as cc  # noqa: E402

pytestmark = oracle.pytestmark
METRICS = ("accuracy", "precision", "recall", "f1", "matthews_correlation")
INT32 = 2**31
_MULTILABEL: dict[str, Any] = {}


def multilabel_metric(name: str) -> Any:
    if name not in _MULTILABEL:
        _MULTILABEL[name] = evaluate.load(str(METRICS_DIR / name), "multilabel")
    return _MULTILABEL[name]


def random_case(rng: random.Random, multilabel: bool) -> tuple[list, list, Any, list, int]:
    """(references, predictions, sample weights, label vocabulary, multi-label width or 0) of a random case."""
    if multilabel:
        references, predictions, weights = oracle.random_multilabel_case(rng)
        return references, predictions, weights, [], len(references[0])
    return (*integer_case(rng), 0)


def integer_case(rng: random.Random) -> tuple[list[int], list[int], list[float] | None, list[int]]:
    """A generated multi-class case whose labels fit evaluate's int32 features."""
    while True:
        references, predictions, weights, vocabulary = oracle.random_multiclass_case(rng)
        if all(isinstance(label, int) and -INT32 <= label < INT32 for label in vocabulary):
            return references, predictions, weights, vocabulary


def keyword_options(name: str, options: Any) -> dict[str, Any]:
    """evaluate's keyword arguments for resolved core options."""
    if name in oracle.SETWISE:
        return {"labels": None if options.labels is None else list(options.labels), "pos_label": options.pos_label,
                "average": options.average, "zero_division": options.zero_division}
    if name == "accuracy":
        return {"normalize": options.normalize}
    return {} if options.average is None else {"average": options.average}


def option_sets(name: str, rng: random.Random, vocabulary: list[int], multilabel: bool, width: int,
                every_option: bool) -> list[Any]:
    if name == "accuracy":
        return [oracle.opts(cc.AccuracyOptions, normalize=normalize, multilabel=multilabel)
                for normalize in (True, False)]
    if name == "matthews_correlation":
        averages = (None, "macro") if multilabel else (None,)
        return [oracle.opts(cc.MatthewsCorrelationOptions, average=average, multilabel=multilabel)
                for average in averages]
    if not every_option:
        return [oracle.random_setwise_options(rng, name, vocabulary, multilabel, width) for _ in range(3)]
    label_sets = [None, [0] if multilabel else rng.sample(vocabulary, rng.randint(1, len(vocabulary)))]
    return [
        oracle.opts(oracle.OPTIONS_CLASSES[name], average=average, zero_division=zero_division, labels=labels,
                    pos_label=1, multilabel=multilabel)
        for average in cc.AVERAGES
        for zero_division in ("warn", 0, 1, math.nan)
        for labels in label_sets
    ]


def oracle_result(name: str, references: Any, predictions: Any, options: Any, weights: Any) -> Any:
    if name == "accuracy":
        return oracle.evaluate_accuracy(np.array(references), np.array(predictions), options, weights)
    if name == "matthews_correlation":
        return oracle.evaluate_mcc(references, predictions, options, weights)
    return oracle.evaluate_setwise(name, references, predictions, options, weights)


def compare(name: str, metric: Any, references: Any, predictions: Any, weights: Any, options: Any,
            context: str) -> str:
    """'equal', 'both raise' or 'sklearn inexact' (MCC: scikit-learn's cancellation, ours checked exact)."""
    theirs, their_error, their_warnings = oracle._captured(oracle_result, name, references, predictions, options,
                                                           weights)
    ours, our_error, our_warnings = oracle._captured(
        metric.compute, predictions=predictions, references=references, sample_weight=weights,
        **keyword_options(name, options),
    )
    if their_error is not None:
        assert isinstance(our_error, (ValueError, TypeError)), (ours, their_error, context)
        return "both raise"
    assert our_error is None, (our_error, theirs, context)
    assert list(ours) == [name], context
    if name == "matthews_correlation":
        outcomes = {"equal": 0, "sklearn inexact": 0}
        reference_array, prediction_array = np.array(references), np.array(predictions)
        exact = (
            [oracle.exact_mcc(list(reference_array[:, j]), list(prediction_array[:, j]), weights)
             for j in range(reference_array.shape[1])]
            if options.multilabel else oracle.exact_mcc(references, predictions, weights)
        )
        if options.multilabel and options.average == "macro":
            mean = float(np.mean(exact))
            assert abs(ours[name] - mean) <= 1e-15 or abs(ours[name] - theirs) <= oracle.TOLERANCE, context
            return "equal"
        oracle.check_mcc(ours[name], theirs, exact, outcomes, context)
        return "equal" if outcomes["equal"] else "sklearn inexact"
    oracle.assert_same(ours[name], theirs, context)
    assert our_warnings == their_warnings, (our_warnings, their_warnings, context)
    return "equal"


def run_parity(name: str, seed: int, cases: int, multilabel: bool, every_option: bool = False) -> dict[str, int]:
    rng = random.Random(seed)
    metric = multilabel_metric(name) if multilabel else load_metric(name)
    outcomes = {"equal": 0, "both raise": 0, "sklearn inexact": 0}
    for case in range(cases):
        references, predictions, weights, vocabulary, width = random_case(rng, multilabel)
        context = f"{name} seed {seed} case {case}: {references} {predictions} {weights}"
        for options in option_sets(name, rng, vocabulary, multilabel, width, every_option):
            outcomes[compare(name, metric, references, predictions, weights, options, f"{context} {options}")] += 1
    return outcomes


@pytest.mark.parametrize("name", METRICS)
def test_parity_multiclass(name: str) -> None:
    outcomes = run_parity(name, seed=1300 + METRICS.index(name), cases=60, multilabel=False)
    assert outcomes["equal"] + outcomes["sklearn inexact"] >= 60 and outcomes["sklearn inexact"] <= 3, outcomes


@pytest.mark.parametrize("name", METRICS)
def test_parity_multilabel(name: str) -> None:
    outcomes = run_parity(name, seed=2300 + METRICS.index(name), cases=30, multilabel=True)
    assert outcomes["equal"] + outcomes["sklearn inexact"] >= 25 and outcomes["sklearn inexact"] <= 3, outcomes


@pytest.mark.parametrize("name", oracle.SETWISE)
@pytest.mark.parametrize("multilabel", [False, True])
def test_parity_every_average_and_zero_division(name: str, multilabel: bool) -> None:
    outcomes = run_parity(name, seed=3300 + oracle.SETWISE.index(name), cases=1, multilabel=multilabel,
                          every_option=True)
    assert outcomes["equal"] >= 6, outcomes


@pytest.mark.slow
@pytest.mark.parametrize("name", METRICS)
def test_parity_many(name: str) -> None:
    multiclass = run_parity(name, seed=4300 + METRICS.index(name), cases=2000, multilabel=False)
    multilabel = run_parity(name, seed=5300 + METRICS.index(name), cases=1000, multilabel=True)
    every = [run_parity(name, seed=7300 + METRICS.index(name), cases=20, multilabel=flag, every_option=True)
             for flag in (False, True)]
    print(name, "multiclass", multiclass, "multilabel", multilabel, "every option", every)


# -- shards and streaming ------------------------------------------------------------------------------------


def assert_identical(ours: Any, theirs: Any, context: str) -> None:
    assert ours.keys() == theirs.keys(), context
    for key in ours:
        a, b = ours[key], theirs[key]
        assert type(a) is type(b), (key, type(a), type(b), context)
        assert np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True), (key, a, b, context)


@pytest.mark.parametrize("name", METRICS)
@pytest.mark.parametrize("multilabel", [False, True])
def test_shards_and_streaming_equal_one_shot(name: str, multilabel: bool) -> None:
    rng = random.Random(6300 + METRICS.index(name))
    metric = multilabel_metric(name) if multilabel else load_metric(name)
    streamed = evaluate.load(str(METRICS_DIR / name), "multilabel" if multilabel else None,
                             experiment_id=uuid.uuid4().hex)
    streamed.stream_batch_size = 3
    checked = 0
    for case in range(8):
        references, predictions, weights, vocabulary, width = random_case(rng, multilabel)
        for options in option_sets(name, rng, vocabulary, multilabel, width, every_option=False)[:2]:
            kwargs = {**keyword_options(name, options), "sample_weight": weights}
            one_shot, error, _ = oracle._captured(metric.compute, predictions=predictions, references=references,
                                                  **kwargs)
            if error is not None:
                continue
            context = f"{name} case {case} {kwargs} {references} {predictions}"
            stats_options = {key: value for key, value in kwargs.items() if key != "sample_weight"}
            if weights is None:  # per-example statistics take the weights of their own examples
                stats = metric.example_stats(predictions, references, **stats_options)
                assert_identical(oracle._captured(metric.compute_from_stats, stats, **stats_options)[0], one_shot,
                                 context)
                split = rng.randint(1, len(references))
                shards = [metric.reduce_stats(metric.example_stats(predictions[a:b], references[a:b],
                                                                   **stats_options))
                          for a, b in ((0, split), (split, len(references))) if a < b]
                merged = oracle._captured(metric.compute_from_stats, shards[::-1], **stats_options)[0]
                assert_identical(merged, one_shot, context)
            step = rng.randint(1, 4)
            for start in range(0, len(references), step):
                streamed.add_batch(predictions=predictions[start : start + step],
                                   references=references[start : start + step])
            assert_identical(oracle._captured(streamed.compute, **kwargs)[0], one_shot, context)
            checked += 1
    assert checked >= 6


def test_weighted_statistics_merge_exactly() -> None:
    """Weighted per-example statistics (weights given per shard) merge to the one-shot result."""
    metric = load_metric("f1")
    rng = np.random.default_rng(7)
    references = rng.integers(0, 4, 300).tolist()
    predictions = rng.integers(0, 4, 300).tolist()
    weights = (rng.random(300) * 10 ** rng.uniform(-3, 3, 300)).tolist()
    one_shot = metric.compute(predictions=predictions, references=references, sample_weight=weights, average="macro")
    shards = [
        metric.reduce_stats(metric.example_stats(predictions[a:b], references[a:b], sample_weight=weights[a:b],
                                                 average="macro"), average="macro")
        for a, b in ((0, 100), (100, 170), (170, 300))
    ]
    assert metric.compute_from_stats(shards[::-1], average="macro") == one_shot


# -- bad input -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", METRICS)
def test_mismatched_lengths(name: str) -> None:
    with pytest.raises(ValueError, match=rf"{name}: got 3 predictions but 2 references"):
        load_metric(name).compute(predictions=[0, 1, 1], references=[0, 1])
    with pytest.raises(ValueError, match=rf"{name}: got 2 examples but 3 values in `sample_weight`"):
        load_metric(name).compute(predictions=[0, 1], references=[0, 1], sample_weight=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=rf"{name}: .*3 label indicators.*2|{name}: .*row of 3"):
        multilabel_metric(name).compute(predictions=[[0, 1], [1, 1]], references=[[0, 1, 1], [1, 1, 0]])


@pytest.mark.parametrize("name", ("precision", "recall", "f1", "matthews_correlation"))
def test_unknown_average(name: str) -> None:
    with pytest.raises(ValueError, match=rf"{name}: .*`average`.*'mean'"):
        load_metric(name).compute(predictions=[0, 1], references=[0, 1], average="mean")


def test_average_binary_on_multiclass_input() -> None:
    with pytest.raises(ValueError, match=r"precision: average='binary' needs at most two classes"):
        load_metric("precision").compute(predictions=[0, 1, 2], references=[0, 2, 1])


@pytest.mark.parametrize("name", METRICS)
def test_mixed_label_types(name: str) -> None:
    with pytest.raises(TypeError, match=rf"{name}: `predictions\[1\]` must be an integer label"):
        load_metric(name).compute(predictions=[0, "a", 1], references=[0, 1, 1])
    with pytest.raises(TypeError, match=rf"{name}: `references\[0\]` must be an integer label"):
        load_metric(name).compute(predictions=[0, 1], references=["a", "b"])
    with pytest.raises(TypeError, match=rf"{name}: `predictions\[2\]` must be an integer label"):
        load_metric(name).compute(predictions=[0, 1, 0.5], references=[0, 1, 1])


@pytest.mark.parametrize("name", METRICS)
def test_empty_input(name: str) -> None:
    with pytest.raises(ValueError, match=rf"{name}: .*empty"):
        load_metric(name).compute(predictions=[], references=[])


@pytest.mark.parametrize("name", METRICS)
def test_bad_options(name: str) -> None:
    metric = load_metric(name)
    with pytest.raises(ValueError, match=rf"{name}: every `sample_weight` is zero"):
        metric.compute(predictions=[0, 1], references=[0, 1], sample_weight=[0, 0])
    with pytest.raises(ValueError, match=rf"{name}: `sample_weight\[1\]` is nan"):
        metric.compute(predictions=[0, 1], references=[0, 1], sample_weight=[1, math.nan])
    with pytest.raises(TypeError, match=rf"{name}: `sample_weight` must be a list of numbers"):
        metric.compute(predictions=[0, 1], references=[0, 1], sample_weight="1")
    with pytest.raises(TypeError, match=r"unknown options \['sample_weights'\]"):
        metric.compute(predictions=[0, 1], references=[0, 1], sample_weights=[1, 1])


def test_setwise_option_errors() -> None:
    precision = load_metric("precision")
    with pytest.raises(ValueError, match=r"precision: unknown `zero_division` 2"):
        precision.compute(predictions=[0, 1], references=[0, 1], zero_division=2)
    with pytest.raises(ValueError, match=r"precision: `labels` is empty"):
        precision.compute(predictions=[0, 1], references=[0, 1], labels=[], average="macro")
    with pytest.raises(ValueError, match=r"precision: average='binary' scores the class `pos_label`, which is None"):
        precision.compute(predictions=[0, 1], references=[0, 1], pos_label=None)
    with pytest.raises(ValueError, match=r"precision: average='samples' needs multi-label input"):
        precision.compute(predictions=[0, 1], references=[0, 1], average="samples")
    with pytest.raises(ValueError, match=r"`predictions\[0\]\[1\]` is 2; multi-label rows hold 0/1"):
        multilabel_metric("precision").compute(predictions=[[0, 2]], references=[[0, 1]], average="micro")


def test_multilabel_configuration_and_signature() -> None:
    """The "multilabel" configuration is evaluate's (Sequence features), not a keyword option."""
    metric = multilabel_metric("f1")
    assert "multilabel" not in metric.compute.__signature__.parameters
    assert str(metric._info().features["predictions"]).startswith("List(") or "Sequence" in str(
        metric._info().features["predictions"])
    with pytest.raises(ValueError, match=r"f1: .*is a sequence; this configuration takes one label per example"):
        load_metric("f1").compute(predictions=[[0, 1]], references=[[0, 1]])


@pytest.mark.parametrize("name", METRICS)
def test_numpy_and_list_inputs_agree(name: str) -> None:
    """Integer labels are checked in bulk (lists of ints, numpy arrays, numpy integers in lists); anything else
    gets the shared per-value check and its errors."""
    metric, rng = load_metric(name), np.random.default_rng(3)
    references, predictions = rng.integers(0, 2, 50), rng.integers(0, 2, 50)
    expected = metric.compute(predictions=predictions.tolist(), references=references.tolist())
    assert metric.compute(predictions=predictions, references=references) == expected
    assert metric.compute(predictions=list(predictions), references=tuple(references.astype(np.int32))) == expected
    rows = rng.integers(0, 2, (20, 3))
    multilabel, options = multilabel_metric(name), {"average": "macro"} if name in oracle.SETWISE else {}
    expected_rows = multilabel.compute(predictions=rows.tolist(), references=rows[::-1].tolist(), **options)
    assert_identical(multilabel.compute(predictions=rows, references=rows[::-1], **options), expected_rows, name)
    with pytest.raises(TypeError, match=rf"{name}: `predictions\[1\]` must be an integer label.*got bool"):
        metric.compute(predictions=[0, True], references=[0, 1])
    with pytest.raises(TypeError, match=rf"{name}: `predictions\[0\]` must be an integer label.*got float64"):
        metric.compute(predictions=np.array([0.0, 1.5]), references=[0, 1])
