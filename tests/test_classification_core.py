"""Classification core: accuracy, precision, recall, F1 and MCC against scikit-learn (the library evaluate's modules
wrap), with evaluate's output shapes; exact statistics (rows, batch totals, shards, the datasets column form); bad
input; the Trainer helpers.

The oracle is scikit-learn called as evaluate's modules call it (metrics/<name>/<name>.py in huggingface/evaluate):
``score if getattr(score, "size", 1) > 1 else float(score)`` for precision, recall and F1, ``float(...)`` for
accuracy and single-label MCC, and the per-column loop of the ``multilabel`` MCC.
"""

from __future__ import annotations

import decimal
import math
import random
import warnings
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from sklearn import metrics as sklearn_metrics

from metrics._core import core_classification as cc  # noqa: E402
from metrics._core.core_stats import exact_float_sum  # noqa: E402

pytestmark = [
    pytest.mark.filterwarnings("ignore:A single label was found:UserWarning"),
    pytest.mark.filterwarnings("ignore:invalid value encountered in sqrt:RuntimeWarning"),  # scikit-learn's MCC
]

TOLERANCE = 1e-12
SETWISE = ("precision", "recall", "f1")
OPTIONS_CLASSES = {"precision": cc.PrecisionOptions, "recall": cc.RecallOptions, "f1": cc.F1Options}
SKLEARN_SETWISE = {
    "precision": sklearn_metrics.precision_score,
    "recall": sklearn_metrics.recall_score,
    "f1": sklearn_metrics.f1_score,
}
opts = cc.resolve_options
FROM_TOTALS = {"precision": cc.precision_from_totals, "recall": cc.recall_from_totals, "f1": cc.f1_from_totals}
ZERO_DIVISIONS = ("warn", 0, 1, 0.0, 1.0, math.nan)


# -- oracles -------------------------------------------------------------------------------------------------


def _captured(function, *args, **kwargs) -> tuple[Any, BaseException | None, list[str]]:
    """(result, exception, messages of the zero-division and pos_label warnings)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result, error = function(*args, **kwargs), None
        except Exception as exception:  # noqa: BLE001 - the oracle's exception is compared, not handled
            result, error = None, exception
    messages = [
        str(item.message)
        for item in caught
        if "UndefinedMetricWarning" in item.category.__name__ or "pos_label" in str(item.message)
    ]
    return result, error, messages


def evaluate_setwise(measure: str, references, predictions, options, weights) -> Any:
    """evaluate's precision/recall/f1 ``_compute``: scikit-learn, then an array for several labels else a float."""
    kwargs = {
        "labels": None if options.labels is None else list(options.labels),
        "pos_label": options.pos_label,
        "average": options.average,
        "sample_weight": weights,
        "zero_division": options.zero_division,
    }
    score = SKLEARN_SETWISE[measure](references, predictions, **kwargs)
    # evaluate writes float(score); numpy 2 refuses float() of a 1-element 1-D array (average=None with one
    # label), which evaluate's module then raises as a TypeError: its intended value is that one number.
    return score if getattr(score, "size", 1) > 1 else float(np.asarray(score).reshape(-1)[0])


def evaluate_mcc(references, predictions, options, weights) -> Any:
    """evaluate's matthews_correlation ``_compute`` (multi-label: one scikit-learn call per column)."""
    if not options.multilabel:
        return float(sklearn_metrics.matthews_corrcoef(references, predictions, sample_weight=weights))
    references, predictions = np.array(references), np.array(predictions)
    per_label = [
        sklearn_metrics.matthews_corrcoef(predictions[:, i], references[:, i], sample_weight=weights)
        for i in range(references.shape[1])
    ]
    return np.mean(per_label) if options.average == "macro" else per_label


def exact_mcc(references, predictions, weights) -> float:
    """The Matthews correlation by scikit-learn's formula (cov(y, p) / sqrt(cov(p, p) cov(y, y)) over the confusion
    matrix C: t = row sums, p = column sums, n = total, c = trace), in exact rational arithmetic, rounded once
    through 60-digit decimals; 0.0 when undefined, as scikit-learn."""
    weights = [1] * len(references) if weights is None else weights
    labels = sorted(set(references) | set(predictions))
    t = {label: Fraction(0) for label in labels}
    p = {label: Fraction(0) for label in labels}
    correct = Fraction(0)
    for reference, prediction, weight in zip(references, predictions, weights, strict=True):
        t[reference] += Fraction(weight)
        p[prediction] += Fraction(weight)
        if reference == prediction:
            correct += Fraction(weight)
    n = sum(t.values())
    cov_yp = correct * n - sum(t[label] * p[label] for label in labels)
    cov_pp = n * n - sum(value * value for value in p.values())
    cov_yy = n * n - sum(value * value for value in t.values())
    if cov_pp * cov_yy == 0:
        return 0.0
    with decimal.localcontext() as context:
        context.prec = 60
        numerator = decimal.Decimal(cov_yp.numerator) / decimal.Decimal(cov_yp.denominator)
        product = cov_pp * cov_yy
        denominator = (decimal.Decimal(product.numerator) / decimal.Decimal(product.denominator)).sqrt()
        return float(numerator / denominator)


def check_mcc(ours: Any, theirs: Any, exact: Any, outcomes: dict[str, int], context: str) -> None:
    """Ours within 1e-15 of the exact value; within TOLERANCE of scikit-learn's, except where scikit-learn's own
    error exceeds TOLERANCE (its n**2 - p.p cancels with weights of very different sizes): counted apart."""
    if isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), context
        for mine, reference, truth in zip(ours, theirs, exact, strict=True):
            check_mcc(mine, reference, truth, outcomes, context)
        return
    assert type(ours) is float, context
    assert abs(ours - exact) <= 1e-15, (ours, exact, theirs, context)
    if not abs(theirs - exact) <= TOLERANCE:  # NaN included: sqrt of a product that rounding made negative
        outcomes["sklearn inexact"] += 1
    else:
        assert abs(ours - theirs) <= TOLERANCE, (ours, theirs, context)
        outcomes["equal"] += 1


def evaluate_accuracy(references, predictions, options, weights) -> float:
    return float(
        sklearn_metrics.accuracy_score(references, predictions, normalize=options.normalize, sample_weight=weights)
    )


def assert_same(ours: Any, theirs: Any, context: str) -> None:
    """Same type (array, list or float) and values within TOLERANCE (NaN equal to NaN)."""
    if isinstance(theirs, np.ndarray):
        assert isinstance(ours, np.ndarray), context
        assert ours.shape == theirs.shape, context
        assert ours.dtype == np.float64, context
        assert np.allclose(ours, theirs, rtol=0, atol=TOLERANCE, equal_nan=True), (ours, theirs, context)
        return
    if isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), context
        for mine, reference in zip(ours, theirs, strict=True):
            assert_same(mine, reference, context)
        return
    assert isinstance(ours, float), (type(ours), context)
    assert type(ours) is type(theirs) or isinstance(theirs, np.float64), (type(ours), type(theirs), context)
    if math.isnan(theirs):
        assert math.isnan(ours), (ours, theirs, context)
    else:
        assert abs(ours - theirs) <= TOLERANCE * max(1.0, abs(theirs)), (ours, theirs, context)


# -- generated label sets ------------------------------------------------------------------------------------


def random_weights(rng: random.Random, size: int) -> list[float] | None:
    roll = rng.random()
    if roll < 0.4:
        return None
    if roll < 0.6:
        weights = [rng.uniform(0, 2) for _ in range(size)]
    elif roll < 0.7:
        weights = [rng.choice([0.0, 0.0, rng.uniform(0, 3)]) for _ in range(size)]
    elif roll < 0.8:
        weights = [float(rng.randint(0, 4)) for _ in range(size)]
    elif roll < 0.9:
        weights = [rng.choice([0.5, 0.25, 1.5, 2.0]) for _ in range(size)]
    else:
        weights = [10 ** rng.uniform(-6, 6) for _ in range(size)]
    if not any(weights):
        weights[rng.randrange(size)] = 1.0
    return weights


def random_vocabulary(rng: random.Random) -> list[Any]:
    roll = rng.random()
    if roll < 0.5:
        return list(range(rng.randint(1, 6)))
    if roll < 0.65:
        start = rng.randint(-5, 100)
        return sorted(rng.sample(range(start, start + 40), rng.randint(1, 6)))
    if roll < 0.75:
        return rng.sample([-3, -1, 0, 1, 2, 10**6, 2**40], rng.randint(1, 5))
    return rng.sample(["cat", "dog", "bird", "a", "B", "ünï", "東京", ""], rng.randint(1, 6))


def random_multiclass_case(rng: random.Random) -> tuple[list[Any], list[Any], list[float] | None, list[Any]]:
    """References, predictions, weights and the vocabulary: missing classes, labels only in predictions,
    single-class input, all-zero predictions, perfect and inverted predictions."""
    vocabulary = random_vocabulary(rng)
    size = rng.randint(1, 40)
    reference_labels = rng.sample(vocabulary, rng.randint(1, len(vocabulary)))
    prediction_labels = rng.sample(vocabulary, rng.randint(1, len(vocabulary)))
    references = [rng.choice(reference_labels) for _ in range(size)]
    roll = rng.random()
    if roll < 0.1:
        predictions = list(references)
    elif roll < 0.2:
        predictions = [vocabulary[0]] * size
    elif roll < 0.3:
        predictions = [reference if rng.random() < 0.7 else rng.choice(vocabulary) for reference in references]
    else:
        predictions = [rng.choice(prediction_labels) for _ in range(size)]
    return references, predictions, random_weights(rng, size), vocabulary


def random_setwise_options(rng: random.Random, measure: str, vocabulary: list[Any], multilabel: bool = False,
                           width: int = 0) -> Any:
    average = rng.choice(cc.AVERAGES)
    labels = None
    if rng.random() < 0.35:
        if multilabel:
            pool = list(range(width)) if width > 1 else [0]
            labels = [rng.choice(pool) for _ in range(rng.randint(1, max(1, width)))]
        else:
            extra = [v + 1000 for v in vocabulary if isinstance(v, int)] or [v + "?" for v in vocabulary]
            pool = vocabulary + extra[:2]
            labels = rng.sample(pool, rng.randint(1, len(pool)))
    pos_choices = [1, 1, 1, None, 0]
    if not multilabel:
        pos_choices += [rng.choice(vocabulary), rng.choice(vocabulary)]
    pos_label = rng.choice(pos_choices)
    if average == "binary" and pos_label is None:
        pos_label = 1
    zero_division = rng.choice(ZERO_DIVISIONS)
    return opts(OPTIONS_CLASSES[measure], labels=labels, pos_label=pos_label, average=average,
                zero_division=zero_division, multilabel=multilabel)


def random_multilabel_case(rng: random.Random) -> tuple[list[list[int]], list[list[int]], list[float] | None]:
    size, width = rng.randint(1, 30), rng.choice([1, 2, 3, 4, 6])
    density = rng.choice([0.0, 0.1, 0.5, 0.9, 1.0])
    references = [[int(rng.random() < density) for _ in range(width)] for _ in range(size)]
    roll = rng.random()
    if roll < 0.15:
        predictions = [list(row) for row in references]
    elif roll < 0.3:
        predictions = [[0] * width for _ in range(size)]
    elif roll < 0.6:
        predictions = [[value if rng.random() < 0.8 else 1 - value for value in row] for row in references]
    else:
        other = rng.choice([0.0, 0.3, 0.7, 1.0])
        predictions = [[int(rng.random() < other) for _ in range(width)] for _ in range(size)]
    return references, predictions, random_weights(rng, size)


# -- checks shared by the parity tests ---------------------------------------------------------------------


def check_statistics(predictions, references, options, weights, rng: random.Random) -> dict[str, Any]:
    """Batch totals equal the totals of rows, of shards merged in a random grouping, and of the column form."""
    schema = cc.classification_schema(options.metric_name, options.multilabel)
    signature = options.stats_signature()
    totals = cc.classification_batch_totals(predictions, references, options, sample_weight=weights)
    rows = cc.classification_rows(predictions, references, options, sample_weight=weights)
    assert schema.totals_of_rows(rows, signature) == totals
    size = len(references)
    if size >= 2:
        cuts = sorted(rng.sample(range(1, size), min(size - 1, rng.randint(1, 3))))
        bounds = list(zip([0, *cuts], [*cuts, size], strict=True))
        shards = [
            cc.classification_batch_totals(
                predictions[start:end], references[start:end], options,
                sample_weight=None if weights is None else weights[start:end],
            )
            for start, end in bounds
        ]
        rng.shuffle(shards)
        assert schema.merge(*shards) == totals
    return totals


def compare_setwise(measure, references, predictions, weights, options, totals, context) -> str:
    """'equal' or 'both raise'; fails on any other outcome."""
    theirs, their_error, their_warnings = _captured(evaluate_setwise, measure, references, predictions, options,
                                                    weights)
    ours, our_error, our_warnings = _captured(FROM_TOTALS[measure], totals, options)
    if their_error is not None:
        assert isinstance(our_error, ValueError), (ours, their_error, context)
        return "both raise"
    assert our_error is None, (our_error, theirs, context)
    assert_same(ours[measure], theirs, context)
    assert our_warnings == their_warnings, (our_warnings, their_warnings, context)
    return "equal"


def run_multiclass_parity(seed: int, cases: int, every_option: bool) -> dict[str, int]:
    rng = random.Random(seed)
    outcomes = {"equal": 0, "both raise": 0, "sklearn inexact": 0}
    for case in range(cases):
        references, predictions, weights, vocabulary = random_multiclass_case(rng)
        context = f"seed {seed} case {case}: {references} {predictions} {weights}"
        base = opts(cc.AccuracyOptions)
        totals = check_statistics(predictions, references, base, weights, rng)
        for normalize in (True, False):
            options = opts(cc.AccuracyOptions, normalize=normalize)
            assert_same(cc.accuracy_from_totals(totals, options)["accuracy"],
                        evaluate_accuracy(references, predictions, options, weights), context)
            outcomes["equal"] += 1
        options = opts(cc.MatthewsCorrelationOptions)
        check_mcc(cc.matthews_correlation_from_totals(totals, options)["matthews_correlation"],
                  evaluate_mcc(references, predictions, options, weights),
                  exact_mcc(references, predictions, weights), outcomes, context)
        for measure in SETWISE:
            if every_option:
                option_sets = [
                    opts(OPTIONS_CLASSES[measure], average=average, zero_division=zero_division, labels=labels,
                         pos_label=pos_label)
                    for average in cc.AVERAGES
                    for zero_division in ("warn", 0, 1, math.nan)
                    for labels in (None, rng.sample(vocabulary, rng.randint(1, len(vocabulary))))
                    for pos_label in (1, rng.choice(vocabulary))
                ]
            else:
                option_sets = [random_setwise_options(rng, measure, vocabulary) for _ in range(2)]
            for options in option_sets:
                outcomes[compare_setwise(measure, references, predictions, weights, options, totals,
                                         f"{context} {options}")] += 1
    return outcomes


def run_multilabel_parity(seed: int, cases: int, every_option: bool) -> dict[str, int]:
    rng = random.Random(seed)
    outcomes = {"equal": 0, "both raise": 0, "sklearn inexact": 0}
    for case in range(cases):
        references, predictions, weights = random_multilabel_case(rng)
        width = len(references[0])
        context = f"seed {seed} case {case}: {references} {predictions} {weights}"
        reference_array, prediction_array = np.array(references), np.array(predictions)
        totals = check_statistics(predictions, references, opts(cc.AccuracyOptions, multilabel=True), weights, rng)
        for normalize in (True, False):
            options = opts(cc.AccuracyOptions, normalize=normalize, multilabel=True)
            assert_same(cc.accuracy_from_totals(totals, options)["accuracy"],
                        evaluate_accuracy(reference_array, prediction_array, options, weights), context)
            outcomes["equal"] += 1
        per_label = opts(cc.MatthewsCorrelationOptions, multilabel=True)
        exact = [exact_mcc(list(reference_array[:, j]), list(prediction_array[:, j]), weights) for j in range(width)]
        check_mcc(cc.matthews_correlation_from_totals(totals, per_label)["matthews_correlation"],
                  evaluate_mcc(references, predictions, per_label, weights), exact, outcomes, context)
        macro = opts(cc.MatthewsCorrelationOptions, average="macro", multilabel=True)
        ours = cc.matthews_correlation_from_totals(totals, macro)["matthews_correlation"]
        mine = cc.matthews_correlation_from_totals(totals, per_label)["matthews_correlation"]
        assert isinstance(ours, np.float64) and ours == np.mean(mine), context
        for measure in SETWISE:
            if every_option:
                label_sets = [None, [0] if width == 1 else rng.sample(range(width), rng.randint(1, width))]
                option_sets = [
                    opts(OPTIONS_CLASSES[measure], average=average, zero_division=zero_division, labels=labels,
                         multilabel=True)
                    for average in cc.AVERAGES
                    for zero_division in ("warn", 0, 1, math.nan)
                    for labels in label_sets
                ]
            else:
                option_sets = [random_setwise_options(rng, measure, [], True, width) for _ in range(2)]
            for options in option_sets:
                options_totals = totals
                if options.labels is not None:
                    options_totals = check_statistics(predictions, references, options, weights, rng)
                outcomes[compare_setwise(measure, reference_array, prediction_array, weights, options,
                                         options_totals, f"{context} {options}")] += 1
    return outcomes


# -- parity tests ----------------------------------------------------------------------------------------------


def test_multiclass_parity_generated() -> None:
    outcomes = run_multiclass_parity(seed=13, cases=150, every_option=False)
    assert outcomes["equal"] > 1000 and outcomes["both raise"] > 150, outcomes


def test_multilabel_parity_generated() -> None:
    outcomes = run_multilabel_parity(seed=29, cases=100, every_option=False)
    assert outcomes["equal"] > 900 and outcomes["both raise"] > 50 and outcomes["sklearn inexact"] >= 1, outcomes


@pytest.mark.slow
def test_multiclass_parity_many() -> None:
    random_options = run_multiclass_parity(seed=101, cases=3000, every_option=False)
    every_option = run_multiclass_parity(seed=102, cases=150, every_option=True)
    print("multiclass: random options", random_options, "every option", every_option)


@pytest.mark.slow
def test_multilabel_parity_many() -> None:
    random_options = run_multilabel_parity(seed=202, cases=2000, every_option=False)
    every_option = run_multilabel_parity(seed=203, cases=150, every_option=True)
    print("multilabel: random options", random_options, "every option", every_option)


def _scores(measure: str, predictions, references, **options: Any) -> Any:
    options_object = opts(OPTIONS_CLASSES[measure], **options)
    totals = cc.classification_batch_totals(predictions, references, options_object)
    return FROM_TOTALS[measure](totals, options_object)[measure]


def test_evaluate_docstring_examples() -> None:
    """The examples of evaluate's module docstrings (metrics/<name>/<name>.py), with their printed results."""
    references, predictions = [0, 1, 0, 1, 0], [0, 0, 1, 1, 0]
    assert _scores("f1", predictions, references) == 0.5
    assert round(_scores("f1", predictions, references, pos_label=0), 2) == 0.67
    weights = [0.9, 0.5, 3.9, 1.2, 0.3]
    options = opts(cc.F1Options)
    totals = cc.classification_batch_totals(predictions, references, options, sample_weight=weights)
    assert round(cc.f1_from_totals(totals, options)["f1"], 2) == 0.35
    precision = opts(cc.PrecisionOptions)
    totals = cc.classification_batch_totals(predictions, references, precision, sample_weight=weights)
    assert cc.precision_from_totals(totals, precision) == {"precision": 0.23529411764705882}
    predictions, references = [0, 2, 1, 0, 0, 1], [0, 1, 2, 0, 1, 2]
    assert round(_scores("f1", predictions, references, average="macro"), 2) == 0.27
    assert round(_scores("f1", predictions, references, average="micro"), 2) == 0.33
    assert round(_scores("f1", predictions, references, average="weighted"), 2) == 0.27
    per_class = _scores("f1", predictions, references, average=None)
    assert isinstance(per_class, np.ndarray) and per_class.tolist() == [0.8, 0.0, 0.0]
    assert _scores("precision", predictions, references, average="macro") == 0.2222222222222222
    assert _scores("precision", predictions, references, average="micro") == 0.3333333333333333
    assert _scores("precision", predictions, references, average="weighted") == 0.2222222222222222
    assert [round(x, 2) for x in _scores("precision", predictions, references, average=None)] == [0.67, 0.0, 0.0]
    assert _scores("recall", predictions, references, average="macro") == 0.3333333333333333
    assert _scores("recall", predictions, references, average=None).tolist() == [1.0, 0.0, 0.0]
    assert _scores("recall", [0, 1, 0, 1, 1], [0, 0, 1, 1, 1]) == 0.6666666666666666
    assert _scores("recall", [0, 1, 0, 1, 1], [0, 0, 1, 1, 1], pos_label=0) == 0.5
    recall = opts(cc.RecallOptions)
    totals = cc.classification_batch_totals([0, 1, 0, 1, 1], [0, 0, 1, 1, 1], recall,
                                            sample_weight=[0.9, 0.2, 0.9, 0.3, 0.8])
    assert cc.recall_from_totals(totals, recall) == {"recall": 0.55}
    multilabel = opts(cc.F1Options, average="macro", multilabel=True)
    totals = cc.classification_batch_totals([[0, 1, 1], [1, 1, 0]], [[0, 1, 1], [0, 1, 0]], multilabel)
    assert round(cc.f1_from_totals(totals, multilabel)["f1"], 2) == 0.67

    accuracy = opts(cc.AccuracyOptions)
    references, predictions = [0, 1, 2, 0, 1, 2], [0, 1, 1, 2, 1, 0]
    totals = cc.classification_batch_totals(predictions, references, accuracy)
    assert cc.accuracy_from_totals(totals, accuracy) == {"accuracy": 0.5}
    assert cc.accuracy_from_totals(totals, opts(cc.AccuracyOptions, normalize=False)) == {"accuracy": 3.0}
    totals = cc.classification_batch_totals(predictions, references, accuracy, sample_weight=[0.5, 2, 0.7, 0.5, 9, 0.4])
    assert cc.accuracy_from_totals(totals, accuracy) == {"accuracy": 0.8778625954198473}

    mcc = opts(cc.MatthewsCorrelationOptions)
    references, predictions = [1, 3, 2, 0, 3, 2], [1, 2, 2, 0, 3, 3]
    for weights, expected in ((None, 0.54), ([0.5, 3, 1, 1, 1, 2], 0.1), ([0.5, 1, 0, 0, 0, 1], -0.25)):
        totals = cc.classification_batch_totals(predictions, references, mcc, sample_weight=weights)
        assert round(cc.matthews_correlation_from_totals(totals, mcc)["matthews_correlation"], 2) == expected
    multilabel_mcc = opts(cc.MatthewsCorrelationOptions, multilabel=True)
    totals = cc.classification_batch_totals([[0, 1], [1, 1], [0, 1]], [[0, 1], [1, 0], [1, 1]], multilabel_mcc)
    assert cc.matthews_correlation_from_totals(totals, multilabel_mcc) == {"matthews_correlation": [0.5, 0.0]}
    macro = opts(cc.MatthewsCorrelationOptions, average="macro", multilabel=True)
    result = cc.matthews_correlation_from_totals(totals, macro)["matthews_correlation"]
    assert isinstance(result, np.float64) and round(result, 2) == 0.25


def test_hand_computed_confusion() -> None:
    """references [a, a, b, c], predictions [a, b, b, a]: cells (a,a) (a,b) (b,b) (c,a); c never predicted.
    precision: a 1/2, b 1/2, c 0/0; recall: a 1/2, b 1/1, c 0/1; micro = accuracy = 2/4.
    MCC: t = (2, 1, 1), p = (2, 2, 0), n = 4, correct = 2: (2*4 - 6) / sqrt((16 - 8) * (16 - 6)) = 2 / sqrt(80)."""
    references, predictions = ["a", "a", "b", "c"], ["a", "b", "b", "a"]
    options = opts(cc.PrecisionOptions, average=None, zero_division=1)
    totals = cc.classification_batch_totals(predictions, references, options)
    assert totals["cells"] == {("a", "a"): 1.0, ("a", "b"): 1.0, ("b", "b"): 1.0, ("c", "a"): 1.0}
    assert cc.precision_from_totals(totals, options)["precision"].tolist() == [0.5, 0.5, 1.0]
    recall = opts(cc.RecallOptions, average=None)
    assert cc.recall_from_totals(totals, recall)["recall"].tolist() == [0.5, 1.0, 0.0]
    assert cc.f1_from_totals(totals, opts(cc.F1Options, average="micro"))["f1"] == 0.5
    mcc = cc.matthews_correlation_from_totals(totals, opts(cc.MatthewsCorrelationOptions))["matthews_correlation"]
    assert mcc == pytest.approx(2 / math.sqrt(80), abs=1e-15)


def test_one_count_serves_every_metric() -> None:
    references, predictions = [0, 1, 2, 2, 1, 0, 3], [0, 2, 2, 2, 1, 1, 0]
    options = [opts(cc.AccuracyOptions), opts(cc.F1Options, average="macro"), opts(cc.MatthewsCorrelationOptions),
               opts(cc.PrecisionOptions, average="weighted", zero_division=0), opts(cc.RecallOptions, average=None)]
    assert len({option.stats_signature() for option in options}) == 1
    totals = cc.classification_batch_totals(predictions, references, options[0])
    results = cc.classification_results(totals, options)
    assert set(results) == {"accuracy", "f1", "matthews_correlation", "precision", "recall"}
    assert results["f1"] == pytest.approx(sklearn_metrics.f1_score(references, predictions, average="macro"), abs=0)
    multilabel = opts(cc.F1Options, average="samples", multilabel=True, labels=[0])
    with pytest.raises(ValueError, match="were computed with"):
        cc.classification_results(totals, [multilabel])


def test_zero_division_warning_matches_sklearn() -> None:
    """'warn' returns scikit-learn's value (0.0) and issues our UndefinedMetricWarning with scikit-learn's text."""
    options = opts(cc.PrecisionOptions, average="macro")
    totals = cc.classification_batch_totals([0, 0, 0], [0, 1, 2], options)
    with pytest.warns(cc.UndefinedMetricWarning) as caught:
        ours = cc.precision_from_totals(totals, options)["precision"]
    with pytest.warns(sklearn_metrics._classification.UndefinedMetricWarning) as theirs:
        expected = sklearn_metrics.precision_score([0, 1, 2], [0, 0, 0], average="macro")
    assert ours == expected and [str(w.message) for w in caught] == [str(w.message) for w in theirs]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = opts(cc.PrecisionOptions, average="macro", zero_division=0)
        assert cc.precision_from_totals(totals, quiet)["precision"] == expected


def test_multiclass_large_label_values_and_many_classes() -> None:
    """Labels far apart (sparse path), a thousand classes, and large integer labels count like small ones."""
    rng = np.random.default_rng(5)
    for labels in (rng.integers(0, 1000, 5000), rng.choice([-(2**40), 0, 7, 2**50], 5000), rng.integers(0, 3, 5000)):
        predictions = np.where(rng.random(5000) < 0.6, labels, rng.permutation(labels))
        options = opts(cc.F1Options, average="macro")
        totals = cc.classification_batch_totals(predictions, labels, options)
        expected = sklearn_metrics.f1_score(labels, predictions, average="macro")
        assert abs(cc.f1_from_totals(totals, options)["f1"] - expected) <= TOLERANCE
        mcc = cc.matthews_correlation_from_totals(totals, opts(cc.MatthewsCorrelationOptions))["matthews_correlation"]
        assert mcc == sklearn_metrics.matthews_corrcoef(labels, predictions)


def test_weighted_batch_totals_are_exact() -> None:
    """Cell weights are exact sums (fsum with residuals), equal for rows, batch and any sharding."""
    rng = np.random.default_rng(3)
    weights = rng.random(2000) * 10 ** rng.uniform(-8, 8, 2000)
    references, predictions = rng.integers(0, 3, 2000), rng.integers(0, 3, 2000)
    options = opts(cc.AccuracyOptions)
    totals = cc.classification_batch_totals(predictions, references, options, sample_weight=weights)
    for (true, predicted), weight in totals["cells"].items():
        chosen = weights[(references == true) & (predictions == predicted)].tolist()
        assert (weight, totals["cells__residual"].get((true, predicted), [])) == exact_float_sum(chosen)
    rows = cc.classification_rows(predictions, references, options, sample_weight=weights)
    schema = cc.classification_schema("accuracy", False)
    assert schema.totals_of_rows(rows, options.stats_signature()) == totals


def test_datasets_column_form_round_trip() -> None:
    """Rows written as datasets columns (keyed values as JSON) reduce to the same totals."""
    options = opts(cc.F1Options, average="samples", multilabel=True, labels=[2, 0])
    references = [[0, 1, 1], [1, 0, 0], [0, 0, 0]]
    predictions = [[0, 1, 0], [1, 1, 0], [0, 0, 1]]
    schema = cc.classification_schema("f1", True)
    rows = cc.classification_rows(predictions, references, options, sample_weight=[0.3, 1.1, 2.0])
    columns = schema.columns(rows, options.stats_signature())
    assert isinstance(columns["label_cells"][0], str)
    totals = cc.classification_batch_totals(predictions, references, options, sample_weight=[0.3, 1.1, 2.0])
    assert schema.totals(columns) == totals
    strings = opts(cc.AccuracyOptions)
    rows = cc.classification_rows(["b", "a"], ["a", "a"], strings)
    columns = cc.classification_schema("accuracy", False).columns(rows, strings.stats_signature())
    assert cc.accuracy_from_totals(cc.classification_schema("accuracy", False).totals(columns), strings) == {
        "accuracy": 0.5
    }


def test_input_forms() -> None:
    """numpy arrays of any integer dtype, bools, whole floats, numpy strings and torch tensors are labels."""
    expected = sklearn_metrics.f1_score([0, 1, 1, 0], [0, 1, 0, 0])
    options = opts(cc.F1Options)
    for references, predictions in (
        (np.array([0, 1, 1, 0], dtype=np.int8), np.array([0, 1, 0, 0], dtype=np.uint16)),
        ([False, True, True, False], [False, True, False, False]),
        ([0.0, 1.0, 1.0, 0.0], [0, 1, 0, 0]),
    ):
        totals = cc.classification_batch_totals(predictions, references, options)
        assert cc.f1_from_totals(totals, options)["f1"] == expected
    strings = opts(cc.F1Options, pos_label="x")
    totals = cc.classification_batch_totals(np.array(["y", "x"]), ["x", "x"], strings)
    assert cc.f1_from_totals(totals, strings)["f1"] == sklearn_metrics.f1_score(["x", "x"], ["y", "x"], pos_label="x")
    multilabel = opts(cc.F1Options, average="micro", multilabel=True)
    references, predictions = [[0, 1, 1], [1, 0, 0]], [[0, 1, 0], [1, 1, 0]]
    expected = sklearn_metrics.f1_score(np.array(references), np.array(predictions), average="micro")
    for given_references, given_predictions in (
        (references, predictions),
        ([tuple(row) for row in references], [tuple(row) for row in predictions]),
        (np.array(references, dtype=bool), np.array(predictions, dtype=np.int32)),
        (np.array(references, dtype=np.float32), [[False, True, False], [True, True, False]]),
    ):
        totals = cc.classification_batch_totals(given_predictions, given_references, multilabel)
        assert cc.f1_from_totals(totals, multilabel)["f1"] == expected
    import torch
    totals = cc.classification_batch_totals(torch.tensor([0, 1, 0, 0]), torch.tensor([0, 1, 1, 0]), options)
    assert cc.f1_from_totals(totals, options)["f1"] == sklearn_metrics.f1_score([0, 1, 1, 0], [0, 1, 0, 0])


# -- bad input ---------------------------------------------------------------------------------------------------


def _sklearn_raises(function, *args, **kwargs) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError):
            function(*args, **kwargs)


def test_mismatched_lengths() -> None:
    with pytest.raises(ValueError, match=r"f1: got 2 predictions but 3 references"):
        cc.classification_batch_totals([0, 1], [0, 1, 1], opts(cc.F1Options))
    _sklearn_raises(sklearn_metrics.f1_score, [0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match=r"accuracy: got 2 examples but 1 values in `sample_weight`"):
        cc.classification_rows([0, 1], [0, 1], opts(cc.AccuracyOptions), sample_weight=[1.0])
    _sklearn_raises(sklearn_metrics.accuracy_score, [0, 1], [0, 1], sample_weight=[1.0])


def test_unknown_average() -> None:
    with pytest.raises(ValueError, match=r"precision: unknown `average` 'foo'; valid values are 'binary'"):
        opts(cc.PrecisionOptions, average="foo")
    _sklearn_raises(sklearn_metrics.precision_score, [0, 1], [0, 1], average="foo")
    with pytest.raises(ValueError, match=r"matthews_correlation: unknown `average` 'micro'"):
        opts(cc.MatthewsCorrelationOptions, average="micro", multilabel=True)


def test_mixed_label_types() -> None:
    with pytest.raises(ValueError, match=r"recall: `predictions\[2\]` must be an integer label like the others"):
        cc.classification_batch_totals([0, 1, "a"], [0, 1, 1], opts(cc.RecallOptions))
    _sklearn_raises(sklearn_metrics.recall_score, [0, 1, 1], [0, 1, "a"])
    with pytest.raises(ValueError, match=r"`references\[1\]` must be a string label like the others"):
        cc.classification_batch_totals(["a", "b"], ["a", 3], opts(cc.AccuracyOptions))
    with pytest.raises(ValueError, match=r"`references` are integers but `predictions` are strings"):
        cc.classification_batch_totals(["a", "b"], [0, 1], opts(cc.AccuracyOptions))
    _sklearn_raises(sklearn_metrics.accuracy_score, [0, 1], ["a", "b"])
    with pytest.raises(ValueError, match=r"f1: `labels` must be all integers or all strings"):
        opts(cc.F1Options, labels=[0, "a"], average="macro")
    options = opts(cc.F1Options, labels=["a"], average="macro")
    totals = cc.classification_batch_totals([0, 1], [0, 1], options)
    with pytest.raises(ValueError, match=r"f1: `labels` are strings but the data's labels are integers"):
        cc.f1_from_totals(totals, options)
    with pytest.raises(ValueError, match=r"`predictions\[1\]` must be an integer label like the others, got NoneType"):
        cc.classification_batch_totals([0, None], [0, 1], opts(cc.AccuracyOptions))
    with pytest.raises(ValueError, match=r"`predictions\[1\]` is 1180591620717411303424; integer labels must fit"):
        cc.classification_batch_totals([0, 2**70], [0, 1], opts(cc.AccuracyOptions))
    with pytest.raises(ValueError, match=r"`predictions\[0\]` is 0.5; class labels must be integers or strings"):
        cc.classification_batch_totals([0.5, 1.0], [0, 1], opts(cc.AccuracyOptions))
    _sklearn_raises(sklearn_metrics.accuracy_score, [0, 1], [0.5, 1.0])


def test_empty_input() -> None:
    with pytest.raises(ValueError, match=r"accuracy: `predictions` is empty"):
        cc.classification_batch_totals([], [], opts(cc.AccuracyOptions))
    _sklearn_raises(sklearn_metrics.accuracy_score, [], [])
    with pytest.raises(ValueError, match=r"f1: `predictions` is empty"):
        cc.classification_rows([], [], opts(cc.F1Options, multilabel=True, average="micro"))
    with pytest.raises(ValueError, match=r"the score of an empty corpus is undefined"):
        cc.classification_schema("f1", False).totals_of_rows([], "classification|multiclass")
    with pytest.raises(TypeError, match=r"f1: `references` is None"):
        cc.classification_batch_totals([0], None, opts(cc.F1Options))
    with pytest.raises(ValueError, match=r"f1: `labels` is empty"):
        opts(cc.F1Options, labels=[], average="macro")


def test_binary_average_on_multiclass_labels() -> None:
    totals = cc.classification_batch_totals([0, 1, 2], [0, 1, 1], opts(cc.F1Options))
    with pytest.raises(ValueError, match=r"f1: average='binary' needs at most two classes, but the references "
                                         r"and predictions hold 3 \(0, 1, 2\)"):
        cc.f1_from_totals(totals, opts(cc.F1Options))
    _sklearn_raises(sklearn_metrics.f1_score, [0, 1, 1], [0, 1, 2])
    totals = cc.classification_batch_totals([2, 3], [3, 3], opts(cc.F1Options))
    with pytest.raises(ValueError, match=r"f1: pos_label=1 is not a valid label; it should be one of \[2, 3\]"):
        cc.f1_from_totals(totals, opts(cc.F1Options))
    _sklearn_raises(sklearn_metrics.f1_score, [3, 3], [2, 3])
    multilabel = opts(cc.F1Options, multilabel=True)
    totals = cc.classification_batch_totals([[0, 1], [1, 1]], [[0, 1], [1, 0]], multilabel)
    with pytest.raises(ValueError, match=r"f1: average='binary' does not apply to multi-label input"):
        cc.f1_from_totals(totals, multilabel)
    _sklearn_raises(sklearn_metrics.f1_score, np.array([[0, 1], [1, 0]]), np.array([[0, 1], [1, 1]]))
    samples = opts(cc.RecallOptions, average="samples")
    totals = cc.classification_batch_totals([0, 1], [0, 1], samples)
    with pytest.raises(ValueError, match=r"recall: average='samples' needs multi-label input"):
        cc.recall_from_totals(totals, samples)
    _sklearn_raises(sklearn_metrics.recall_score, [0, 1], [0, 1], average="samples")


def test_multilabel_rows_of_different_widths() -> None:
    options = opts(cc.PrecisionOptions, multilabel=True, average="micro")
    with pytest.raises(ValueError, match=r"precision: `predictions\[1\]` has 1 label indicators but "
                                         r"`predictions\[0\]` has 2"):
        cc.classification_batch_totals([[0, 1], [1]], [[0, 1], [1, 0]], options)
    _sklearn_raises(sklearn_metrics.precision_score, [[0, 1], [1, 0]], [[0, 1], [1]], average="micro")
    with pytest.raises(ValueError, match=r"`references` rows have 3 label indicators but `predictions` rows have 2"):
        cc.classification_batch_totals([[0, 1], [1, 1]], [[0, 1, 0], [1, 0, 0]], options)
    with pytest.raises(ValueError, match=r"`predictions\[0\]\[1\]` is 2; multi-label rows hold 0/1 indicators"):
        cc.classification_batch_totals([[0, 2], [1, 1]], [[0, 1], [1, 0]], options)
    _sklearn_raises(sklearn_metrics.precision_score, np.array([[0, 1], [1, 0]]), np.array([[0, 2], [1, 1]]),
                    average="micro")
    with pytest.raises(ValueError, match=r"`predictions\[0\]` must be a row of 0/1 label indicators"):
        cc.classification_batch_totals([1, 0], [[0, 1], [1, 0]], options)
    with pytest.raises(ValueError, match=r"`predictions\[0\]` is a sequence; this configuration takes one label"):
        cc.classification_batch_totals([[0, 1], [1, 0]], [1, 0], opts(cc.PrecisionOptions))
    schema = cc.classification_schema("precision", True)
    narrow = cc.classification_batch_totals([[0, 1]], [[0, 1]], options)
    wide = cc.classification_batch_totals([[0, 1, 1]], [[0, 1, 0]], options)
    with pytest.raises(ValueError, match=r"precision: the statistics merge multi-label rows of 2 and of 3 columns"):
        cc.precision_from_totals(schema.merge(narrow, wide), options)
    out_of_range = opts(cc.PrecisionOptions, multilabel=True, average="micro", labels=[2])
    with pytest.raises(ValueError, match=r"precision: `labels` holds 2, but multi-label rows have 2 columns"):
        cc.classification_batch_totals([[0, 1]], [[0, 1]], out_of_range)
    _sklearn_raises(sklearn_metrics.precision_score, np.array([[0, 1]]), np.array([[0, 1]]), average="micro",
                    labels=[2])


def test_bad_options_and_weights() -> None:
    with pytest.raises(ValueError, match=r"precision: unknown `zero_division` 0.5; valid values are \"warn\""):
        opts(cc.PrecisionOptions, zero_division=0.5)
    _sklearn_raises(sklearn_metrics.precision_score, [0, 1], [0, 1], zero_division=0.5)
    with pytest.raises(ValueError, match=r"f1: average='binary' scores the class `pos_label`, which is None"):
        opts(cc.F1Options, pos_label=None)
    _sklearn_raises(sklearn_metrics.f1_score, [0, 1], [0, 1], pos_label=None)
    with pytest.raises(ValueError, match=r"unknown `zero_division` 'nan'"):
        opts(cc.F1Options, zero_division="nan")
    with pytest.raises(TypeError, match=r"accuracy: `normalize` must be True or False"):
        opts(cc.AccuracyOptions, normalize="yes")
    totals = cc.classification_batch_totals([0, 1], [0, 1], opts(cc.AccuracyOptions), sample_weight=[0, 0])
    with pytest.raises(ValueError, match=r"accuracy: every `sample_weight` is zero"):
        cc.accuracy_from_totals(totals, opts(cc.AccuracyOptions))
    _sklearn_raises(sklearn_metrics.accuracy_score, [0, 1], [0, 1], sample_weight=[0, 0])
    with pytest.raises(ValueError, match=r"accuracy: `sample_weight\[0\]` is nan; every weight must be finite"):
        cc.classification_batch_totals([0, 1], [0, 1], opts(cc.AccuracyOptions), sample_weight=[math.nan, 1])
    _sklearn_raises(sklearn_metrics.accuracy_score, [0, 1], [0, 1], sample_weight=[math.nan, 1])
    with pytest.raises(TypeError, match=r"accuracy: `sample_weight\[1\]` must be a number, got str"):
        cc.classification_batch_totals([0, 1], [0, 1], opts(cc.AccuracyOptions), sample_weight=[1, "x"])
    with pytest.raises(ValueError, match=r"accuracy: the sum of `sample_weight` overflows"):
        cc.classification_batch_totals([0, 1], [0, 1], opts(cc.AccuracyOptions), sample_weight=[1e308, 1e308])
    with pytest.raises(ValueError, match=r"f1: `references\[1\]\[0\]` is 0.5; multi-label rows hold 0/1"):
        cc.classification_batch_totals([[0], [1]], np.array([[1.0], [0.5]]), opts(cc.F1Options, multilabel=True))
    options = opts(cc.AccuracyOptions)
    totals = cc.classification_batch_totals([0, 1], [0, 1], options, sample_weight=[1.0, -1.0])
    with pytest.raises(ValueError, match=r"accuracy: the sample weights sum to zero"):
        cc.accuracy_from_totals(totals, options)


# -- Trainer helpers -----------------------------------------------------------------------------------------


def test_classification_inputs_numpy() -> None:
    logits = np.array([[0.1, 2.0, -1.0], [3.0, 0.0, 0.0], [0.0, 0.0, 5.0], [1.0, 1.5, 0.2]], dtype=np.float32)
    labels = np.array([1, 0, 1, 1])
    predictions, references = cc.classification_inputs((logits, labels))
    assert predictions == [1, 0, 2, 1] and references == [1, 0, 1, 1]
    assert all(type(value) is int for value in predictions + references)
    ids = cc.preprocess_classification_logits(logits, labels)
    assert cc.classification_inputs((ids, labels)) == (predictions, references)
    assert cc.classification_inputs(((logits, np.zeros((4, 7))), labels)) == (predictions, references)
    multi = np.array([[2.0, -1.0], [-0.5, 0.5]])
    assert cc.classification_inputs((multi, np.array([[1.0, 0.0], [0.0, 0.0]])),
                                    problem_type="multi_label_classification") == ([[1, 0], [0, 1]], [[1, 0], [0, 0]])
    assert cc.classification_inputs((multi, np.array([[1, 0], [0, 0]])), problem_type="multi_label_classification",
                                    threshold=1.0)[0] == [[1, 0], [0, 0]]
    assert cc.classification_inputs((np.array([[0.5], [1.5]]), np.array([0.25, 2.0])),
                                    problem_type="regression") == ([0.5, 1.5], [0.25, 2.0])
    with pytest.raises(ValueError, match=r"got 4 predictions but 3 labels"):
        cc.classification_inputs((logits, labels[:3]))
    with pytest.raises(ValueError, match=r"single-label predictions are logits"):
        cc.classification_inputs((np.array([0.5, 0.2]), np.array([0, 1])))
    with pytest.raises(ValueError, match=r"unknown `problem_type` 'ranking'"):
        cc.classification_inputs((logits, labels), problem_type="ranking")


def test_classification_inputs_torch_and_eval_prediction() -> None:
    import torch
    import transformers
    logits = torch.tensor([[0.1, 2.0], [3.0, 0.0], [0.0, 5.0]], dtype=torch.bfloat16)
    labels = torch.tensor([1, 1, 1])
    ids = cc.preprocess_classification_logits((logits, torch.zeros(3, 4)), labels)
    assert isinstance(ids, torch.Tensor) and ids.tolist() == [1, 0, 1]
    evaluation = transformers.EvalPrediction(predictions=logits, label_ids=labels)
    predictions, references = cc.classification_inputs(evaluation)
    assert (predictions, references) == ([1, 0, 1], [1, 1, 1])
    evaluation = transformers.EvalPrediction(predictions=ids.numpy(), label_ids=labels.numpy())
    assert cc.classification_inputs(evaluation) == (predictions, references)
    options = opts(cc.F1Options)
    totals = cc.classification_batch_totals(predictions, references, options)
    assert cc.f1_from_totals(totals, options)["f1"] == sklearn_metrics.f1_score(references, predictions)


def test_preprocess_logits_on_the_gpu() -> None:
    """The argmax stays where the logits are: on the GPU the Trainer then gathers one id per example."""
    import torch
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    generator = torch.Generator(device="cuda").manual_seed(0)
    logits = torch.randn(256, 7, device="cuda", generator=generator).half()
    labels = torch.randint(0, 7, (256,), device="cuda", generator=generator)
    ids = cc.preprocess_classification_logits(logits, labels)
    assert ids.device.type == "cuda" and ids.dtype == torch.int64 and ids.shape == (256,)
    predictions, references = cc.classification_inputs((ids, labels))
    assert predictions == logits.float().cpu().numpy().argmax(axis=-1).tolist()
    assert references == labels.cpu().tolist()
    assert cc.classification_inputs((logits, labels)) == (predictions, references)
