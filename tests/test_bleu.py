"""metrics/bleu: evaluate's `bleu` interface. Default behaviour (closest reference length, Lin & Och smoothing
of orders n > 1) is checked against sacreBLEU; `evaluate_compatible=True` against evaluate's published example
and an independent transcription of tensorflow/nmt's compute_bleu algorithm (which evaluate's module wraps)."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest
import sacrebleu

from conftest import load_metric
from generated_text import padded_streams, random_corpora
from metrics._core.core_mt_tokenizers import tokenize_13a


def nmt_compute_bleu(references: list[list[list[str]]], translations: list[list[str]], max_order: int, smooth: bool):
    """tensorflow/nmt's compute_bleu as published: shortest reference length, n-gram counts merged by max over
    references, add-one smoothing of every order when `smooth`, brevity penalty exp(1 - 1/ratio)."""
    matches = [0] * max_order
    possible = [0] * max_order
    reference_length = translation_length = 0
    for example_references, translation in zip(references, translations, strict=True):
        reference_length += min(len(reference) for reference in example_references)
        translation_length += len(translation)
        merged: Counter = Counter()
        for reference in example_references:
            merged |= Counter(
                tuple(reference[i : i + n]) for n in range(1, max_order + 1) for i in range(len(reference) - n + 1)
            )
        counts = Counter(
            tuple(translation[i : i + n]) for n in range(1, max_order + 1) for i in range(len(translation) - n + 1)
        )
        for ngram, count in (counts & merged).items():
            matches[len(ngram) - 1] += count
        for n in range(1, max_order + 1):
            if len(translation) - n + 1 > 0:
                possible[n - 1] += len(translation) - n + 1
    precisions = [0.0] * max_order
    for i in range(max_order):
        if smooth:
            precisions[i] = (matches[i] + 1.0) / (possible[i] + 1.0)
        elif possible[i] > 0:
            precisions[i] = float(matches[i]) / possible[i]
    geo_mean = math.exp(sum((1.0 / max_order) * math.log(p) for p in precisions)) if min(precisions) > 0 else 0
    if reference_length == 0 or translation_length == 0:
        ratio, bp = 0.0, 0.0
    else:
        ratio = float(translation_length) / reference_length
        bp = 1.0 if ratio > 1.0 else math.exp(1 - 1.0 / ratio)
    return dict(bleu=geo_mean * bp, precisions=precisions, brevity_penalty=bp, length_ratio=ratio,
                translation_length=translation_length, reference_length=reference_length)


def nmt_bleu_of_texts(predictions: list[str], references: list[list[str]], max_order: int, smooth: bool) -> dict:
    """:func:`nmt_compute_bleu` of texts tokenized with 13a (evaluate's bleu's default tokenizer)."""
    return nmt_compute_bleu(
        [[tokenize_13a(r) for r in refs] for refs in references], [tokenize_13a(p) for p in predictions], max_order, smooth
    )


PUBLISHED_PREDICTIONS = ["hello there general kenobi", "foo bar foobar"]
PUBLISHED_REFERENCES = [["hello there general kenobi", "hello there !"], ["foo bar foobar"]]


def test_evaluate_compatible_reproduces_evaluates_published_example() -> None:
    """evaluate's bleu card prints this exact output for this input."""
    result = load_metric("bleu").compute(
        predictions=PUBLISHED_PREDICTIONS, references=PUBLISHED_REFERENCES, evaluate_compatible=True
    )
    assert result == {
        "bleu": 1.0,
        "precisions": [1.0, 1.0, 1.0, 1.0],
        "brevity_penalty": 1.0,
        "length_ratio": 1.1666666666666667,
        "translation_length": 7,
        "reference_length": 6,
    }


def test_default_uses_the_closest_reference_length() -> None:
    # "hello there general kenobi" (4 tokens) is closest to itself (4), not to "hello there !" (3): 4 + 3 = 7.
    result = load_metric("bleu").compute(predictions=PUBLISHED_PREDICTIONS, references=PUBLISHED_REFERENCES)
    assert (result["reference_length"], result["length_ratio"], result["bleu"]) == (7, 1.0, 1.0)


def test_the_two_modes_differ_by_hand() -> None:
    # prediction "a b c d e f" (6): references "a b c d e f g h" (8) and "a b" (2).
    # closest: |6-8| = 2 < |6-2| = 4 -> 8, bp = exp(1 - 8/6); shortest: 2, bp = 1 (ratio 3 > 1).
    metric = load_metric("bleu")
    predictions, references = ["a b c d e f"], [["a b c d e f g h", "a b"]]
    default = metric.compute(predictions=predictions, references=references)
    compatible = metric.compute(predictions=predictions, references=references, evaluate_compatible=True)
    assert default["reference_length"] == 8 and compatible["reference_length"] == 2
    assert default["bleu"] == pytest.approx(math.exp(1 - 8 / 6), rel=1e-14)
    assert compatible["bleu"] == 1.0


@pytest.mark.parametrize("smooth", [False, True])
def test_evaluate_compatible_equals_nmt_on_generated_corpora(smooth: bool) -> None:
    rng = random.Random(3 + smooth)
    metric = load_metric("bleu")
    for case, (predictions, references) in enumerate(random_corpora(rng, 60, 8)):
        max_order = rng.randint(1, 5)
        expected = nmt_bleu_of_texts(predictions, references, max_order, smooth)
        ours = metric.compute(predictions=predictions, references=references, max_order=max_order, smooth=smooth,
                              evaluate_compatible=True)
        assert ours == expected, f"case {case}"


def test_evaluate_compatible_equals_nmt_on_core_corpora() -> None:
    """2,000 more generated corpora at the core level (the module adds only input handling)."""
    from metrics._core.core_bleu import BleuOptions, bleu_from_totals, bleu_rows, bleu_schema

    rng = random.Random(99)
    for case, (predictions, references) in enumerate(random_corpora(rng, 2000, 6)):
        options = BleuOptions(max_order=rng.randint(1, 4), smooth=rng.random() < 0.5, evaluate_compatible=True)
        rows = bleu_rows(predictions, references, options)
        ours = bleu_from_totals(bleu_schema("bleu", options).totals_of_rows(rows, "s"), options)
        expected = nmt_bleu_of_texts(predictions, references, options.max_order, options.smooth)
        assert ours == expected, f"case {case}"


@pytest.mark.parametrize("smooth", [False, True])
def test_default_equals_sacrebleu_on_generated_corpora(smooth: bool) -> None:
    """Closest reference length and Lin & Och smoothing are sacreBLEU's BLEU with smooth 'none' / 'add-k'."""
    rng = random.Random(17 + smooth)
    metric = load_metric("bleu")
    for case, (predictions, references) in enumerate(random_corpora(rng, 60, 8)):
        # sacreBLEU strips trailing whitespace before tokenizing; evaluate's bleu does not
        predictions = [p.rstrip() for p in predictions]
        references = [[r.rstrip() for r in refs] for refs in references]
        theirs = sacrebleu.corpus_bleu(
            predictions, padded_streams(references), smooth_method="add-k" if smooth else "none"
        )
        ours = metric.compute(predictions=predictions, references=references, smooth=smooth)
        assert ours["bleu"] * 100 == pytest.approx(theirs.score, rel=1e-12, abs=1e-12), f"case {case}"
        assert (ours["translation_length"], ours["reference_length"]) == (theirs.sys_len, theirs.ref_len)


def test_wmt17_with_two_references(wmt17) -> None:
    references, systems = wmt17
    metric = load_metric("bleu")
    hypotheses = systems["uedin-nmt.4722"]
    second = systems["online-B.0"]
    paired = [[a, b] for a, b in zip(references, second, strict=True)]
    ours = metric.compute(predictions=hypotheses, references=paired)
    theirs = sacrebleu.corpus_bleu(hypotheses, [references, second], smooth_method="none")
    assert ours["bleu"] * 100 == pytest.approx(theirs.score, rel=1e-12)
    assert ours["reference_length"] == theirs.ref_len
    compatible = metric.compute(predictions=hypotheses, references=paired, evaluate_compatible=True)
    expected = nmt_bleu_of_texts(hypotheses, paired, 4, False)
    assert compatible == expected
    assert compatible["reference_length"] < ours["reference_length"]


def test_single_reference_modes_agree_and_match_sacrebleu(wmt17) -> None:
    references, systems = wmt17
    metric = load_metric("bleu")
    hypotheses = systems["KIT.4950"]
    default = metric.compute(predictions=hypotheses, references=references)
    assert default == metric.compute(predictions=hypotheses, references=references, evaluate_compatible=True)
    assert default["bleu"] * 100 == pytest.approx(
        sacrebleu.corpus_bleu(hypotheses, [references], smooth_method="none").score, rel=1e-12
    )


def test_custom_tokenizer() -> None:
    metric = load_metric("bleu")
    result = metric.compute(predictions=["A B"], references=["a b"], tokenizer=lambda text: text.lower().split(), max_order=2)
    assert result["bleu"] == 1.0


def test_tokenizer_returning_a_string_is_rejected() -> None:
    """A sacreBLEU tokenizer returns a string; evaluate's module would silently score characters."""
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    with pytest.raises(TypeError, match="must return a list of tokens"):
        load_metric("bleu").compute(predictions=["a b"], references=["a b"], tokenizer=Tokenizer13a())
