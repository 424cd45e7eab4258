"""Parity with the oracle, rouge-score 0.1.2 (test-only): real CNN/DailyMail summaries and generated cases.

Every per-example precision, recall and F-measure must equal rouge-score's (tolerance 1e-12; in practice they
are bit-identical).
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from cnndm_data import SYSTEMS, cnndm_or_skip
from conftest import load_metric
from metrics._core.core_rouge import RougeOptions, rouge_rows
from metrics._core.core_rouge_tokenize import make_tokenizer

from rouge_score import rouge_scorer

TOLERANCE = 1e-12
DEFAULT_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")


@pytest.fixture(scope="module")
def cnndm(shared_data: Path) -> list[dict]:
    return cnndm_or_skip(shared_data)


class CallableTokenizer:
    """evaluate's wrapper of a callable tokenizer for rouge-score."""

    def __init__(self, function):
        self.function = function

    def tokenize(self, text):
        return self.function(text)


def oracle_rows(predictions, references, types, use_stemmer, tokenizer=None):
    scorer = rouge_scorer.RougeScorer(
        list(types), use_stemmer=use_stemmer, tokenizer=CallableTokenizer(tokenizer) if tokenizer else None
    )
    rows = []
    for prediction, reference in zip(predictions, references, strict=True):
        if isinstance(reference, str):
            scores = scorer.score(reference, prediction)
        else:
            scores = scorer.score_multi(reference, prediction)
        rows.append([value for name in types for value in scores[name]])
    return rows


def count_mismatches(ours, theirs) -> tuple[int, float, int]:
    mismatches, worst, compared = 0, 0.0, 0
    for our_row, their_row in zip(ours, theirs, strict=True):
        for our_value, their_value in zip(our_row, their_row, strict=True):
            difference = abs(our_value - their_value)
            compared += 1
            worst = max(worst, difference)
            mismatches += difference > TOLERANCE
    return mismatches, worst, compared


def check_cnndm(cnndm, system: str, use_stemmer: bool, limit: int | None) -> None:
    records = cnndm[:limit] if limit else cnndm
    predictions = [record[system] for record in records]
    references = [record["reference"] for record in records]
    options = RougeOptions(DEFAULT_TYPES, make_tokenizer(None, use_stemmer))
    ours = rouge_rows(predictions, [[reference] for reference in references], options)
    theirs = oracle_rows(predictions, references, DEFAULT_TYPES, use_stemmer)
    mismatches, worst, compared = count_mismatches([row[:-1] for row in ours], theirs)
    assert compared == len(records) * 12
    assert mismatches == 0, f"{system}, stemmer={use_stemmer}: {mismatches} of {compared} differ (max {worst})"


@pytest.mark.parametrize("use_stemmer", [False, True], ids=["plain", "stemmer"])
@pytest.mark.parametrize("system", SYSTEMS)
def test_cnndm_parity_first_1000(cnndm, system: str, use_stemmer: bool) -> None:
    check_cnndm(cnndm, system, use_stemmer, 1000)


@pytest.mark.slow
@pytest.mark.parametrize("use_stemmer", [False, True], ids=["plain", "stemmer"])
@pytest.mark.parametrize("system", SYSTEMS)
def test_cnndm_parity_all(cnndm, system: str, use_stemmer: bool) -> None:
    assert len(cnndm) == 11490
    check_cnndm(cnndm, system, use_stemmer, None)


def test_cnndm_module_mean_matches_oracle_mean(cnndm) -> None:
    """Through evaluate's loader: the aggregated score is the mean of the oracle's per-example F-measures."""
    records = cnndm[:300]
    predictions = [record["pointer-gen"] for record in records]
    references = [record["reference"] for record in records]
    result = load_metric("rouge").compute(predictions=predictions, references=references, use_stemmer=True)
    theirs = oracle_rows(predictions, references, DEFAULT_TYPES, True)
    for position, name in enumerate(DEFAULT_TYPES):
        assert result[name] == math.fsum(row[3 * position + 2] for row in theirs) / len(theirs)


WORDS = (
    "the a of and running runs ran connection connected connecting generously generous happy happiness "
    "cat cats dog dogs x 2 42 3.5 U.S. it's can't well-known"
).split()
NOISE = ["", " ", ".", ",", "!!", "--", "\u00e9t\u00e9", "\u041f\u0440\u0438\u0432\u0435\u0442", "\u6211\u7231", "Caf\u00e9"]
NOISE += ["THE", "Running"]


def random_text(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.05:
        return ""
    if kind < 0.1:
        return rng.choice(["...", " ,;! ", "\n\n", " ", "?!"])
    pieces = []
    for _ in range(rng.randint(1, 30)):
        roll = rng.random()
        if roll < 0.12:
            pieces.append(rng.choice(NOISE))
        elif roll < 0.2:
            pieces.append("\n")
        else:
            pieces.append(rng.choice(WORDS))
    return " ".join(pieces)


def generated_cases(seed: int, count: int) -> tuple[list[str], list]:
    rng = random.Random(seed)
    predictions, references = [], []
    for _ in range(count):
        predictions.append(random_text(rng))
        if rng.random() < 0.5:
            references.append(random_text(rng))
        else:
            references.append([random_text(rng) for _ in range(rng.randint(1, 4))])
    return predictions, references


@pytest.mark.parametrize("use_stemmer", [False, True], ids=["plain", "stemmer"])
def test_generated_parity(use_stemmer: bool) -> None:
    """Thousands of generated cases: punctuation-only, empty, repeated tokens, multi-line, multi-reference."""
    types = ("rouge1", "rouge2", "rouge3", "rouge9", "rougeL", "rougeLsum")
    predictions, references = generated_cases(20240 + use_stemmer, 3000)
    nested = [[reference] if isinstance(reference, str) else reference for reference in references]
    ours = rouge_rows(predictions, nested, RougeOptions(types, make_tokenizer(None, use_stemmer)))
    theirs = oracle_rows(predictions, references, types, use_stemmer)
    mismatches, worst, compared = count_mismatches([row[:-1] for row in ours], theirs)
    assert compared == 3000 * 18
    assert mismatches == 0, f"{mismatches} of {compared} differ (max {worst})"


def test_generated_parity_single_type_lsum_and_custom_tokenizer() -> None:
    """rougeLsum alone (rouge-score skips whole-text tokens then) and a callable tokenizer as evaluate wraps it."""
    predictions, references = generated_cases(777, 1500)
    nested = [[reference] if isinstance(reference, str) else reference for reference in references]
    ours = rouge_rows(predictions, nested, RougeOptions(("rougeLsum",), make_tokenizer(None, False)))
    theirs = oracle_rows(predictions, references, ("rougeLsum",), False)
    assert count_mismatches([row[:-1] for row in ours], theirs)[0] == 0
    types = ("rouge1", "rouge2", "rougeL", "rougeLsum")
    ours = rouge_rows(predictions, nested, RougeOptions(types, make_tokenizer(str.split, False)))
    theirs = oracle_rows(predictions, references, types, False, tokenizer=str.split)
    assert count_mismatches([row[:-1] for row in ours], theirs)[0] == 0


def test_generated_module_per_example_parity() -> None:
    """Through evaluate's loader with use_aggregator=False, on generated multi-reference cases."""
    predictions, references = generated_cases(99, 400)
    nested = [[reference] if isinstance(reference, str) else reference for reference in references]
    result = load_metric("rouge").compute(
        predictions=predictions, references=nested, use_aggregator=False, use_stemmer=True, return_precision_recall=True
    )
    theirs = oracle_rows(predictions, nested, DEFAULT_TYPES, True)
    for position, name in enumerate(DEFAULT_TYPES):
        assert result[f"{name}_precision"] == [row[3 * position] for row in theirs]
        assert result[f"{name}_recall"] == [row[3 * position + 1] for row in theirs]
        assert result[name] == [row[3 * position + 2] for row in theirs]


def test_pooled_equals_best_with_one_reference() -> None:
    predictions, references = generated_cases(31, 500)
    single = [[reference if isinstance(reference, str) else reference[0]] for reference in references]
    tokenizer = make_tokenizer(None, True)
    types = ("rouge1", "rouge2", "rougeL", "rougeLsum", "rougeSU4")
    best = rouge_rows(predictions, single, RougeOptions(types, tokenizer, multi_ref="best"))
    pooled = rouge_rows(predictions, single, RougeOptions(types, tokenizer, multi_ref="pooled"))
    assert best == pooled


def test_reference_order_invariance_of_pooled_mode() -> None:
    predictions, references = generated_cases(32, 500)
    nested = [[reference] if isinstance(reference, str) else reference for reference in references]
    options = RougeOptions(("rouge1", "rouge2", "rougeL"), make_tokenizer(None, False), multi_ref="pooled")
    assert rouge_rows(predictions, nested, options) == rouge_rows(
        predictions, [list(reversed(group)) for group in nested], options
    )


def test_pooled_mode_matches_oracle_components() -> None:
    """Pooled (Lin 2004) scores rebuilt from the oracle's own pieces: rouge-score's tokenizer, n-gram counter
    and LCS table, summed over references by hand."""
    from collections import Counter

    from rouge_score import tokenizers
    tokenize = tokenizers.DefaultTokenizer(use_stemmer=True).tokenize
    predictions, references = generated_cases(4242, 600)
    nested = [[reference] if isinstance(reference, str) else reference for reference in references]
    options = RougeOptions(("rouge1", "rouge2", "rougeL"), make_tokenizer(None, True), multi_ref="pooled")
    ours = rouge_rows(predictions, nested, options)
    for row, prediction, group in zip(ours, predictions, nested, strict=True):
        predicted = tokenize(prediction)
        expected = []
        for n in (1, 2):
            hits = prediction_total = reference_total = 0
            for reference in group:
                referenced = tokenize(reference)
                pred_ngrams = rouge_scorer._create_ngrams(predicted, n)
                ref_ngrams = rouge_scorer._create_ngrams(referenced, n)
                hits += sum((Counter(pred_ngrams) & Counter(ref_ngrams)).values())
                prediction_total += sum(pred_ngrams.values())
                reference_total += sum(ref_ngrams.values())
            expected.extend(_prf(hits, prediction_total, reference_total))
        hits = prediction_total = reference_total = 0
        for reference in group:
            referenced = tokenize(reference)
            if predicted and referenced:
                hits += rouge_scorer._lcs_table(referenced, predicted)[-1][-1]
            prediction_total += len(predicted)
            reference_total += len(referenced)
        expected.extend(_prf(hits, prediction_total, reference_total))
        assert row[:-1] == expected


def _prf(hits: int, prediction_total: int, reference_total: int) -> list[float]:
    from rouge_score import scoring

    precision = hits / max(prediction_total, 1)
    recall = hits / max(reference_total, 1)
    return [precision, recall, scoring.fmeasure(precision, recall)]
