"""metrics/rouge: F-beta, `multi_ref="max"`, the `pycocoevalcap` tokenizer and `pycocoevalcap_compatible=True`
against pycocoevalcap 1.2's `Rouge` (ROUGE-L of the MS-COCO caption scorer, which nlg-eval wraps unchanged).

pycocoevalcap returns each example's ROUGE-L (F-beta with beta = 1.2 of the highest LCS precision and the highest
LCS recall over the references, tokens split at single spaces) and their numpy mean. Every per-example value must
equal ours with `==`; the mean is `math.fsum(values) / n` here and numpy's pairwise sum / n there, so the two may
differ in the last bit (checked within 4 ulps)."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from cnndm_data import SYSTEMS, cnndm_or_skip
from conftest import default_and_slow, load_metric
from generated_text import random_corpora
from metrics._core.core_rouge import fbeta, fmeasure
from usr_turns import turns_or_skip

from pycocoevalcap.rouge.rouge import Rouge


def oracle(predictions: list[str], references: list[list[str]]) -> tuple[float, list[float]]:
    """pycocoevalcap's (mean, per-example ROUGE-L), as nlg-eval calls it."""
    gts = {index: list(group) for index, group in enumerate(references)}
    res = {index: [prediction] for index, prediction in enumerate(predictions)}
    mean, scores = Rouge().compute_score(gts, res)
    return float(mean), [float(score) for score in scores]


def ours(predictions: list[str], references: list[list[str]], **options) -> tuple[float, list[float]]:
    metric = load_metric("rouge")
    per_example = metric.compute(predictions=predictions, references=references, pycocoevalcap_compatible=True,
                                 use_aggregator=False, **options)
    mean = metric.compute(predictions=predictions, references=references, pycocoevalcap_compatible=True, **options)
    assert list(per_example) == list(mean) == ["rougeL"]
    return mean["rougeL"], per_example["rougeL"]


def check(predictions: list[str], references: list[list[str]]) -> int:
    """Compare with the oracle; the number of per-example values compared (all must be equal)."""
    our_mean, our_scores = ours(predictions, references)
    their_mean, their_scores = oracle(predictions, references)
    different = [index for index, (a, b) in enumerate(zip(our_scores, their_scores, strict=True)) if a != b]
    assert not different, f"{len(different)} of {len(our_scores)} differ, first at {different[0]}"
    assert our_mean == math.fsum(their_scores) / len(their_scores)
    assert abs(our_mean - their_mean) <= 4 * math.ulp(their_mean)
    return len(our_scores)


# -- F-beta and multi_ref="max" by hand ---------------------------------------------------------------------------


def test_fbeta_by_hand() -> None:
    # P = 1/2, R = 1/4: F1 = 1/3; F-beta(1.2) = 2.44 * 1/8 / (1/4 + 1.44/2) = 0.305 / 0.97
    assert fbeta(0.5, 0.25, 1.0) == fmeasure(0.5, 0.25) == 2 * 0.5 * 0.25 / 0.75
    assert fbeta(0.5, 0.25, 1.2) == ((1 + 1.2**2) * 0.5 * 0.25) / (0.25 + 1.2**2 * 0.5)
    assert fbeta(0.5, 0.25, 1.2) == pytest.approx(0.305 / 0.97, rel=1e-15)
    # beta -> large weighs recall, beta -> 0 precision
    assert fbeta(0.5, 0.25, 100.0) == pytest.approx(0.25, rel=1e-3)
    assert fbeta(0.5, 0.25, 0.01) == pytest.approx(0.5, rel=1e-3)
    assert fbeta(0.0, 0.25, 1.2) == fbeta(0.5, 0.0, 1.2) == 0.0


def test_beta_one_is_rouge_score_bit_for_bit() -> None:
    metric = load_metric("rouge")
    rng = random.Random(3)
    for predictions, references in random_corpora(rng, 20, 6):
        default = metric.compute(predictions=predictions, references=references, use_aggregator=False)
        explicit = metric.compute(predictions=predictions, references=references, use_aggregator=False, beta=1)
        assert default == explicit


def test_multi_ref_max_takes_precision_and_recall_from_different_references() -> None:
    # prediction "a b c d": reference 1 "a b" (LCS 2: P 2/4, R 2/2), reference 2 "a b c d e f g h" (LCS 4: P 4/4,
    # R 4/8): max P = 1 (reference 2), max R = 1 (reference 1), F = 1; "best" keeps the first of the two equal
    # F1 = 2/3, reference 1's.
    metric = load_metric("rouge")
    inputs = {"predictions": ["a b c d"], "references": [["a b", "a b c d e f g h"]], "rouge_types": ["rougeL"],
              "return_precision_recall": True}
    maximum = metric.compute(**inputs, multi_ref="max")
    assert (maximum["rougeL_precision"], maximum["rougeL_recall"], maximum["rougeL"]) == (1.0, 1.0, 1.0)
    best = metric.compute(**inputs)
    assert (best["rougeL_precision"], best["rougeL_recall"]) == (0.5, 1.0)
    assert best["rougeL"] == pytest.approx(2 / 3, rel=1e-15)
    assert oracle(["a b c d"], [["a b", "a b c d e f g h"]])[1] == [1.0]


def test_pycocoevalcap_tokens_keep_case_and_empty_tokens() -> None:
    metric = load_metric("rouge")
    # "A  b" splits into "A", "", "b": three tokens; against "a b" only "b" matches (case kept)
    result = metric.compute(predictions=["A  b"], references=["a b"], tokenizer="pycocoevalcap", rouge_types=["rougeL"],
                            return_precision_recall=True)
    assert (result["rougeL_precision"], result["rougeL_recall"]) == (1 / 3, 1 / 2)
    # the empty text is one empty token: two empty texts match fully, as in pycocoevalcap
    assert ours([""], [[""]]) == oracle([""], [[""]]) == (1.0, [1.0])


def test_compatible_defaults_and_what_may_be_combined() -> None:
    metric = load_metric("rouge")
    inputs = {"predictions": ["the cat sat"], "references": ["the cat sat on the mat"]}
    compatible = metric.compute(**inputs, pycocoevalcap_compatible=True, return_precision_recall=True)
    spelled = metric.compute(**inputs, rouge_types=["rougeL"], tokenizer="pycocoevalcap", beta=1.2, multi_ref="max",
                             return_precision_recall=True)
    assert compatible == spelled
    assert compatible["rougeL"] == oracle(["the cat sat"], [["the cat sat on the mat"]])[0]
    # other types under the same conventions, and a tokenizer of one's own in place of the split at spaces
    more = metric.compute(**inputs, pycocoevalcap_compatible=True, rouge_types=["rouge1", "rougeL"],
                          tokenizer=str.split)
    assert list(more) == ["rouge1", "rougeL"]


# -- generated cases and real texts --------------------------------------------------------------------------------


def test_generated_cases() -> None:
    """2,000 generated examples (unicode, punctuation, empty strings, tabs, newlines and runs of spaces, 1-4
    references)."""
    rng = random.Random(31)
    predictions, references = [], []
    for corpus_predictions, corpus_references in random_corpora(rng, 400, 10):
        predictions += corpus_predictions
        references += corpus_references
    assert check(predictions[:2000], references[:2000]) == min(2000, len(predictions)) > 1500


def test_wmt17(wmt17) -> None:
    references, systems = wmt17
    hypotheses = systems["uedin-nmt.4722"]
    assert check(hypotheses, [[reference] for reference in references]) == 3004
    two = [[reference, other] for reference, other in zip(references, systems["online-B.0"], strict=True)]
    assert check(hypotheses, two) == 3004


@pytest.mark.parametrize(("limit",), default_and_slow((300,), (None,)))
def test_cnndm(shared_data: Path, limit) -> None:
    records = cnndm_or_skip(shared_data, limit)
    for system in SYSTEMS:
        assert check([record[system] for record in records], [[record["reference"]] for record in records]) == len(
            records)


@pytest.mark.parametrize("corpus", ["topical_chat", "persona_chat"])
@pytest.mark.parametrize("strip", [True, False], ids=["nlg-eval", "pycocoevalcap"])
def test_usr_responses(shared_data: Path, corpus: str, strip: bool) -> None:
    """Every USR response against its context's ground truth, stripped (as nlg-eval passes them) and as released
    (trailing ' \\n' kept: pycocoevalcap's split at spaces then keeps '\\n' tokens)."""
    turns = turns_or_skip(shared_data, corpus)
    clean = (lambda text: text.strip()) if strip else (lambda text: text)
    assert check([clean(turn.response) for turn in turns], [[clean(turn.reference)] for turn in turns]) == len(turns)
