"""The seqeval module through evaluate's loader vs the seqeval package 1.2.2 (test-only oracle).

The oracle is evaluate's own ``seqeval._compute`` transcribed: ``classification_report(output_dict=True)`` with the
same options, the averages popped, per-type {precision, recall, f1, number}, the micro average as ``overall_*`` and
``accuracy_score`` as ``overall_accuracy``. Generated corpora (fixed seeds) cover the lenient mode with arbitrary
tags (types with hyphens, bare prefixes, tags that are not NE tags, suffix style), and the strict mode under every
scheme with tags the scheme allows, the scheme given or detected; seqeval's errors must be ours too.
"""

from __future__ import annotations

import math
import random
import warnings

import pytest

from conftest import metric_fixture

from seqeval import metrics as seqeval_metrics
from seqeval import scheme as seqeval_scheme

SCHEMES = ("IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BILOU")
SCHEME_PREFIXES = {"IOB1": "IOB", "IOB2": "IOB", "IOE1": "IOE", "IOE2": "IOE", "IOBES": "IOBES", "BILOU": "BILOU"}
TYPES = ("PER", "LOC", "MISC", "ORG-X")
LENIENT_TAGS = ("O", "B-PER", "I-PER", "E-PER", "S-PER", "B-LOC", "I-LOC", "E-LOC", "S-LOC", "B-MISC", "I-MISC",
                "B", "I", "E", "S", "B-", "I-ORG-X", "B-ORG-X", "L-PER", "U-LOC", ".", "X", "I-PER-B", "O-PER")


def oracle(predictions, references, *, suffix=False, scheme=None, mode=None, sample_weight=None,
           zero_division="warn"):
    """evaluate's seqeval module, transcribed, on the seqeval package."""
    if scheme is not None:
        scheme = getattr(seqeval_scheme, scheme)
    report = seqeval_metrics.classification_report(
        y_true=references, y_pred=predictions, suffix=suffix, output_dict=True, scheme=scheme, mode=mode,
        sample_weight=sample_weight, zero_division=zero_division,
    )
    report.pop("macro avg")
    report.pop("weighted avg")
    overall = report.pop("micro avg")
    scores = {name: {"precision": score["precision"], "recall": score["recall"], "f1": score["f1-score"],
                     "number": score["support"]} for name, score in report.items()}
    scores["overall_precision"] = overall["precision"]
    scores["overall_recall"] = overall["recall"]
    scores["overall_f1"] = overall["f1-score"]
    scores["overall_accuracy"] = seqeval_metrics.accuracy_score(y_true=references, y_pred=predictions)
    return scores


def _close(a, b) -> bool:
    return a == b or abs(float(a) - float(b)) <= 1e-12


def same_result(ours: dict, theirs: dict) -> bool:
    if list(ours) != list(theirs):
        return False
    for key, value in theirs.items():
        if isinstance(value, dict):
            if set(ours[key]) != set(value) or not all(_close(ours[key][name], value[name]) for name in value):
                return False
        elif not _close(ours[key], value):
            return False
    return True


def _outcome(function, *args, **kwargs):
    """('ok', result) or ('error', exception type); warnings silenced (seqeval warns per tag)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", function(*args, **kwargs)
        except (ValueError, KeyError, TypeError, ZeroDivisionError) as error:
            return "error", type(error)


def _suffixed(tag: str) -> str:
    if tag in ("O", ".", "X") or "-" not in tag:
        return tag
    prefix, type_ = tag.split("-", 1)
    return f"{type_}-{prefix}"


def lenient_corpus(rng: random.Random, *, suffix: bool = False) -> tuple[list[list[str]], list[list[str]]]:
    """Arbitrary tags (seqeval reads any string in the default mode); predictions are noisy copies."""
    tags = [tag for tag in LENIENT_TAGS if rng.random() < 0.6] or ["O", "B-PER"]
    if rng.random() < 0.3:
        tags = [tag for tag in tags if tag not in (".", "X", "B", "I", "E", "S", "B-", "L-PER", "U-LOC", "O-PER")] \
            or ["O", "B-PER", "I-PER"]
    references, predictions = [], []
    for _ in range(rng.randint(1, 8)):
        length = rng.randint(0, 12) if rng.random() < 0.9 else 0
        gold = [rng.choice(tags) if rng.random() < 0.6 else "O" for _ in range(length)]
        predicted = [tag if rng.random() < 0.7 else rng.choice(tags) for tag in gold]
        references.append(gold)
        predictions.append(predicted)
    if not any(references):
        references[0], predictions[0] = ["O"], [rng.choice(tags)]
    if suffix:
        references = [[_suffixed(tag) for tag in sentence] for sentence in references]
        predictions = [[_suffixed(tag) for tag in sentence] for sentence in predictions]
    return predictions, references


def scheme_corpus(rng: random.Random, scheme: str, *, suffix: bool = False, invalid_rate: float = 0.0
                  ) -> tuple[list[list[str]], list[list[str]]]:
    """Tags of ``scheme``'s prefixes (any order: ill-formed entities included); some predictions may use a prefix
    of another scheme (``invalid_rate``)."""
    prefixes = SCHEME_PREFIXES[scheme]
    types = TYPES[: rng.randint(1, len(TYPES))]

    def tag(letters: str) -> str:
        prefix = rng.choice(letters)
        if prefix == "O":
            return "O"
        type_ = rng.choice(types)
        return f"{type_}-{prefix}" if suffix else f"{prefix}-{type_}"

    references, predictions = [], []
    for _ in range(rng.randint(1, 8)):
        length = rng.randint(0, 12)
        gold = [tag(prefixes) for _ in range(length)]
        predicted = [item if rng.random() < 0.6 else tag(prefixes) for item in gold]
        if invalid_rate and predicted and rng.random() < invalid_rate:
            predicted[rng.randrange(len(predicted))] = tag("IOBESLU")
        references.append(gold)
        predictions.append(predicted)
    if not any(references):
        references[0], predictions[0] = ["O"], ["O"]
    return predictions, references


seqeval = metric_fixture("seqeval")


def _compare(seqeval, cases, options) -> tuple[int, list]:
    mismatches = []
    for predictions, references in cases:
        theirs = _outcome(oracle, predictions, references, **options)
        ours = _outcome(seqeval.compute, predictions=predictions, references=references, **options)
        if theirs[0] == "error":
            if ours[0] != "error":
                mismatches.append((predictions, references, options, theirs, ours))
        elif ours[0] != "ok" or not same_result(ours[1], theirs[1]):
            mismatches.append((predictions, references, options, theirs, ours))
    return len(cases), mismatches


def _lenient_cases(seed: int, count: int, suffix: bool):
    rng = random.Random(seed)
    return [lenient_corpus(rng, suffix=suffix) for _ in range(count)]


def _strict_cases(seed: int, count: int, scheme: str, suffix: bool, invalid_rate: float = 0.0):
    rng = random.Random(seed)
    return [scheme_corpus(rng, scheme, suffix=suffix, invalid_rate=invalid_rate) for _ in range(count)]


@pytest.mark.parametrize("suffix", [False, True])
@pytest.mark.parametrize("zero_division", ["warn", 0, 1])
def test_lenient_parity(seqeval, suffix, zero_division) -> None:
    cases = _lenient_cases(11 + suffix, 200, suffix)
    checked, mismatches = _compare(seqeval, cases, {"suffix": suffix, "zero_division": zero_division})
    assert checked == 200 and not mismatches, mismatches[:2]


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("suffix", [False, True])
def test_strict_parity_given_scheme(seqeval, scheme, suffix) -> None:
    cases = _strict_cases(SCHEMES.index(scheme) * 7 + suffix, 150, scheme, suffix, invalid_rate=0.03)
    checked, mismatches = _compare(seqeval, cases, {"mode": "strict", "scheme": scheme, "suffix": suffix,
                                                    "zero_division": 0})
    assert checked == 150 and not mismatches, mismatches[:2]


@pytest.mark.parametrize("scheme", ["IOB2", "IOE2", "IOBES", "BILOU"])
def test_strict_parity_detected_scheme(seqeval, scheme) -> None:
    # the references' prefixes choose the scheme; predictions may use prefixes it does not allow (an error)
    cases = _strict_cases(100 + SCHEMES.index(scheme), 150, scheme, False, invalid_rate=0.05)
    checked, mismatches = _compare(seqeval, cases, {"mode": "strict", "zero_division": 1})
    assert checked == 150 and not mismatches, mismatches[:2]


def test_lenient_ignores_scheme_as_seqeval_does(seqeval) -> None:
    cases = _lenient_cases(21, 100, False)
    checked, mismatches = _compare(seqeval, cases, {"scheme": "IOBES"})
    assert checked == 100 and not mismatches, mismatches[:2]


def test_sample_weight_changes_nothing_as_in_seqeval(seqeval) -> None:
    rng = random.Random(4)
    for mode, cases in ((None, _lenient_cases(31, 60, False)), ("strict", _strict_cases(32, 60, "IOB2", False))):
        scheme = "IOB2" if mode else None
        for predictions, references in cases:
            weights = [rng.choice([0, 0.5, 1, 3]) for _ in references]
            theirs = oracle(predictions, references, mode=mode, scheme=scheme, sample_weight=weights, zero_division=0)
            with pytest.warns(UserWarning, match="sample_weight"):
                ours = seqeval.compute(predictions=predictions, references=references, mode=mode, scheme=scheme,
                                       sample_weight=weights, zero_division=0)
            assert same_result(ours, theirs)
    with pytest.raises(ValueError, match="sample weights"):
        seqeval.compute(predictions=[["O"]], references=[["O"]], sample_weight=[1, 2])
    with pytest.raises(ValueError, match="sample_weight"):
        seqeval.compute(predictions=[["O"]], references=[["O"]], sample_weight=[math.nan])


def test_all_outside_tags(seqeval) -> None:
    predictions = references = [["O", "O"], ["O"], []]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = seqeval.compute(predictions=predictions, references=references)
    assert result == oracle(predictions, references, zero_division=0)
    assert result == {"overall_precision": 0.0, "overall_recall": 0.0, "overall_f1": 0.0, "overall_accuracy": 1.0}
    assert len(caught) == 1
    result = seqeval.compute(predictions=predictions, references=references, zero_division=1)
    assert result == oracle(predictions, references, zero_division=1)
    assert result["overall_f1"] == 1.0
    # strict mode, scheme given: no entity, no error
    result = seqeval.compute(predictions=predictions, references=references, mode="strict", scheme="IOB2",
                             zero_division=0)
    assert result == oracle(predictions, references, mode="strict", scheme="IOB2", zero_division=0)
    # strict mode without a scheme: seqeval cannot detect one from 'O' alone; a clear ValueError here too
    with pytest.raises(ValueError, match="scheme"):
        seqeval.compute(predictions=predictions, references=references, mode="strict")


def test_one_warning_per_computation(seqeval) -> None:
    rng = random.Random(8)
    predictions, references = [], []
    for _ in range(500):
        predictions.append([rng.choice(["X", "Y", "B-PER", "O"]) for _ in range(10)])
        references.append([rng.choice(["Z", "I-LOC", "O"]) for _ in range(10)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        seqeval.compute(predictions=predictions, references=references)
    assert len(caught) == 1, [str(warning.message) for warning in caught]
    assert "NE tags" in str(caught[0].message) and "ill-defined" in str(caught[0].message)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        seqeval.compute(predictions=predictions, references=references, zero_division=0)
    assert len(caught) == 1 and "ill-defined" not in str(caught[0].message)


def test_empty_sequences_only(seqeval) -> None:
    assert _outcome(oracle, [[]], [[]])[0] == "error"  # ZeroDivisionError in accuracy_score
    with pytest.raises(ValueError, match="no tag to score"):
        seqeval.compute(predictions=[[], []], references=[[], []])


@pytest.mark.parametrize("options", [{}, {"mode": "strict", "scheme": "IOBES"}, {"mode": "strict"}])
def test_shards_and_batches_equal_one_shot(seqeval, options) -> None:
    rng = random.Random(40)
    scheme = options.get("scheme", "IOB2")
    predictions, references = [], []
    for _ in range(60):
        corpus = scheme_corpus(rng, scheme)
        predictions += corpus[0]
        references += corpus[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one_shot = seqeval.compute(predictions=predictions, references=references, **options)
        assert same_result(one_shot, oracle(predictions, references, **options))
        shards = [seqeval.reduce_stats(seqeval.example_stats(predictions[start:start + 37],
                                                             references[start:start + 37], **options), **options)
                  for start in range(0, len(references), 37)]
        assert seqeval.compute_from_stats(shards, **options) == one_shot
        records = seqeval.example_stats(predictions, references, **options)
        assert seqeval.compute_from_stats(records, **options) == one_shot
        for start in range(0, len(references), 50):
            seqeval.add_batch(predictions=predictions[start:start + 50], references=references[start:start + 50])
        assert seqeval.compute(**options) == one_shot


def test_statistics_of_other_options_do_not_merge(seqeval) -> None:
    stats = seqeval.example_stats([["B-PER", "I-PER"]], [["B-PER", "I-PER"]], mode="strict", scheme="IOB2")
    with pytest.raises(ValueError, match="options"):
        seqeval.compute_from_stats(stats)


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"mode": "lenient"}, ValueError, "mode"),
        ({"scheme": "IOB3"}, ValueError, "scheme"),
        ({"zero_division": 2}, ValueError, "zero_division"),
        ({"suffix": "yes"}, TypeError, "suffix"),
        ({"sample_weight": "1"}, TypeError, "sample_weight"),
    ],
)
def test_bad_options(seqeval, options, error, match) -> None:
    with pytest.raises(error, match=match):
        seqeval.compute(predictions=[["O"]], references=[["O"]], **options)


def test_bad_tags(seqeval) -> None:
    with pytest.raises(ValueError, match=r"predictions\[0\].*2 tags.*references\[0\].*1"):
        seqeval.compute(predictions=[["O", "O"]], references=[["O"]])
    with pytest.raises(ValueError, match="empty tag"):
        seqeval.compute(predictions=[["O", ""]], references=[["O", "B-PER"]])
    with pytest.raises(ValueError, match=r"references\[0\]\[1\].*'Q-PER'"):
        seqeval.compute(predictions=[["O", "B-PER"]], references=[["O", "Q-PER"]], mode="strict")
    with pytest.raises(ValueError, match="does not allow"):
        seqeval.compute(predictions=[["O", "E-PER"]], references=[["O", "B-PER"]], mode="strict", scheme="IOB2")


@pytest.mark.slow
def test_parity_many_cases(seqeval) -> None:
    total = 0
    for suffix in (False, True):
        checked, mismatches = _compare(seqeval, _lenient_cases(1000 + suffix, 3000, suffix), {"suffix": suffix})
        assert not mismatches, mismatches[:2]
        total += checked
    for scheme in SCHEMES:
        cases = _strict_cases(2000 + SCHEMES.index(scheme), 1500, scheme, False, invalid_rate=0.03)
        checked, mismatches = _compare(seqeval, cases, {"mode": "strict", "scheme": scheme, "zero_division": 0})
        assert not mismatches, mismatches[:2]
        total += checked
        if scheme in ("IOB2", "IOE2", "IOBES", "BILOU"):
            checked, mismatches = _compare(seqeval, cases, {"mode": "strict"})
            assert not mismatches, mismatches[:2]
            total += checked
    print(f"seqeval parity: {total} corpora, 0 mismatches")
