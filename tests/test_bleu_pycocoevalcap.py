"""metrics/bleu: `pycocoevalcap_compatible=True` against pycocoevalcap 1.2's `Bleu` (the MS-COCO caption scorer,
which nlg-eval wraps unchanged), and the options that come with it: `orders` (BLEU-k of every listed k from one
pass of statistics) and `sentence_scores` (each example's own score).

pycocoevalcap returns BLEU-1..n of the corpus and, per example, BLEU-1..n of that example alone; every one of those
values must equal ours with `==` (same float operations in the same order), on generated corpora, WMT17, CNN/DM and
the USR dialogue responses."""

from __future__ import annotations

import contextlib
import io
import math
import random
from pathlib import Path

import pytest

from cnndm_data import SYSTEMS, cnndm_or_skip
from conftest import default_and_slow, load_metric
from generated_text import random_corpora, random_text
from metrics._core.core_bleu import BleuOptions, bleu_from_totals, bleu_rows, bleu_schema, bleu_sentence_scores
from metrics._core.core_bleu import pycocoevalcap_score
from usr_turns import turns_or_skip

from pycocoevalcap.bleu.bleu import Bleu

# pycocoevalcap's scorer counts n-grams up to 4 whatever its n (cook_refs/cook_test are called with their default
# n=4), so its Bleu(n) raises an IndexError for n > 4: parity is checked for orders 1..4.
COCO_ORDERS = (1, 2, 3, 4)


def oracle(predictions: list[str], references: list[list[str]], max_order: int = 4) -> tuple[list, list]:
    """pycocoevalcap's (corpus BLEU-1..n, per-example BLEU-1..n lists), as nlg-eval calls it."""
    gts = {index: list(group) for index, group in enumerate(references)}
    res = {index: [prediction] for index, prediction in enumerate(predictions)}
    with contextlib.redirect_stdout(io.StringIO()):
        return Bleu(max_order).compute_score(gts, res, verbose=0)


def ours_core(predictions, references, max_order: int = 4, tokenizer=None) -> tuple[list, list]:
    """Our (corpus BLEU-1..n, per-example BLEU-1..n lists) from the core, in the oracle's shape."""
    options = BleuOptions(pycocoevalcap_compatible=True, max_order=max_order, orders=tuple(range(1, max_order + 1)),
                          tokenizer=tokenizer)
    schema = bleu_schema("bleu", options)
    rows = bleu_rows(predictions, references, options)
    corpus = bleu_from_totals(schema.totals_of_rows(rows, "s"), options)
    sentences = bleu_sentence_scores([schema.named(row) for row in rows], options)
    return ([corpus[f"bleu_{k}"] for k in range(1, max_order + 1)],
            [sentences[f"sentence_bleu_{k}"] for k in range(1, max_order + 1)])


def ours_module(predictions, references, max_order: int = 4) -> tuple[list, list]:
    """The same through `evaluate.load`."""
    result = load_metric("bleu").compute(
        predictions=predictions, references=references, pycocoevalcap_compatible=True, max_order=max_order,
        orders=list(range(1, max_order + 1)), sentence_scores=True)
    assert result["bleu"] == result[f"bleu_{max_order}"]
    assert result["sentence_scores"] == result[f"sentence_bleu_{max_order}"]
    return ([result[f"bleu_{k}"] for k in range(1, max_order + 1)],
            [result[f"sentence_bleu_{k}"] for k in range(1, max_order + 1)])


def mismatches(ours: tuple[list, list], theirs: tuple[list, list]) -> tuple[int, int]:
    """(values compared, values not equal with ==), corpus and per-example values together."""
    our_corpus, our_sentences = ours
    their_corpus, their_sentences = theirs
    compared = different = 0
    for ours_value, theirs_value in zip(our_corpus, their_corpus, strict=True):
        compared += 1
        different += ours_value != theirs_value
    for our_list, their_list in zip(our_sentences, their_sentences, strict=True):
        for ours_value, theirs_value in zip(our_list, their_list, strict=True):
            compared += 1
            different += ours_value != theirs_value
    return compared, different


# -- hand-computed ---------------------------------------------------------------------------------------------


def test_pycocoevalcap_arithmetic_by_hand() -> None:
    # matches 3/4, 1/3, 0/2, 0/1; lengths 4 (hypothesis) and 5 (reference)
    result = pycocoevalcap_score([3, 1, 0, 0], [4, 3, 2, 1], 4, 5)
    p = [(3 + 1e-15) / (4 + 1e-9), (1 + 1e-15) / (3 + 1e-9), 1e-15 / (2 + 1e-9), 1e-15 / (1 + 1e-9)]
    ratio = (4 + 1e-15) / (5 + 1e-9)
    penalty = math.exp(1 - 1 / ratio)
    assert result["precisions"] == p and result["length_ratio"] == ratio and result["brevity_penalty"] == penalty
    assert result["bleus"][0] == p[0] * penalty
    assert result["bleus"][1] == pytest.approx(math.sqrt(p[0] * p[1]) * penalty, rel=1e-15)
    # no match of order 3: BLEU-3 is tiny but positive (the epsilon), not 0
    assert 0 < result["bleus"][2] < 1e-4


def test_equal_lengths_are_still_penalised_by_the_epsilons() -> None:
    """ratio = (c + 1e-15) / (r + 1e-9) < 1 when c = r: an exact match scores just under 1, as in pycocoevalcap."""
    ours = load_metric("bleu").compute(predictions=["a b c d"], references=["a b c d"], pycocoevalcap_compatible=True)
    theirs = oracle(["a b c d"], [["a b c d"]])[0][3]
    assert ours["bleu"] == theirs < 1.0
    assert ours["bleu"] == pytest.approx(1.0, abs=1e-9)


def test_empty_prediction_scores_zero() -> None:
    ours = load_metric("bleu").compute(predictions=["", "a b"], references=["a b", ""], pycocoevalcap_compatible=True,
                                       sentence_scores=True)
    theirs = oracle(["", "a b"], [["a b"], [""]])
    assert ours["sentence_scores"] == [theirs[1][3][0], theirs[1][3][1]]
    assert ours["sentence_scores"][0] == 0.0


def test_whitespace_tokens_by_default_and_a_given_tokenizer_replaces_them() -> None:
    """pycocoevalcap splits at whitespace (after the caller's own tokenization, e.g. COCO's PTBTokenizer or
    nlg-eval's strip); a `tokenizer` takes the place of that split."""
    metric = load_metric("bleu")
    predictions, references = ["Hello, world!"], ["hello , world !"]
    plain = metric.compute(predictions=predictions, references=references, pycocoevalcap_compatible=True)
    assert plain["bleu"] == oracle(predictions, [references])[0][3]
    assert plain["translation_length"] == 2
    tokenized = metric.compute(predictions=predictions, references=references, pycocoevalcap_compatible=True,
                               tokenizer=lambda text: text.lower().replace(",", " ,").replace("!", " !").split())
    assert tokenized["translation_length"] == 4
    assert tokenized["bleu"] == oracle(["hello , world !"], [references])[0][3]


def test_orders_above_four_extend_pycocoevalcap() -> None:
    """max_order=5 gives BLEU-1..4 equal to max_order=4's (pycocoevalcap's own Bleu(5) raises IndexError)."""
    predictions, references = ["a b c d e f", "a b c"], [["a b c d e g"], ["a b c"]]
    five = ours_core(predictions, references, max_order=5)
    four = ours_core(predictions, references, max_order=4)
    assert five[0][:4] == four[0] and five[1][:4] == four[1]
    with pytest.raises(IndexError):
        oracle(predictions, references, max_order=5)


# -- generated cases -------------------------------------------------------------------------------------------


def test_generated_corpora_core() -> None:
    """3,000 generated corpora (unicode, punctuation, empty strings, repeated n-grams, tabs and newlines, 1-4
    ragged references), orders 1..4, every corpus and per-example BLEU-k."""
    rng = random.Random(2020)
    compared = different = 0
    for predictions, references in random_corpora(rng, 3000, 6):
        max_order = rng.choice(COCO_ORDERS)
        done, wrong = mismatches(ours_core(predictions, references, max_order),
                                 oracle(predictions, references, max_order))
        compared, different = compared + done, different + wrong
    assert different == 0 and compared > 30000


def test_generated_corpora_module() -> None:
    rng = random.Random(5)
    for case, (predictions, references) in enumerate(random_corpora(rng, 100, 8)):
        max_order = rng.choice(COCO_ORDERS)
        assert mismatches(ours_module(predictions, references, max_order),
                          oracle(predictions, references, max_order))[1] == 0, f"case {case}"


def test_repeated_ngrams_and_length_ties() -> None:
    """References equally far from the hypothesis length (the shorter is taken), clipping of repeated n-grams."""
    rng = random.Random(11)
    words = ["x", "y", "z"]
    compared = 0
    for _ in range(500):
        size = rng.randint(1, 4)
        predictions = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 9))) for _ in range(size)]
        references = [[" ".join(rng.choice(words) for _ in range(rng.randint(0, 9))) for _ in range(rng.randint(1, 4))]
                      for _ in range(size)]
        done, wrong = mismatches(ours_core(predictions, references), oracle(predictions, references))
        assert wrong == 0
        compared += done
    assert compared > 2000


# -- real texts ------------------------------------------------------------------------------------------------


def test_wmt17(wmt17) -> None:
    """3,004 WMT17 segments, one reference and two references (the second: online-B's output)."""
    references, systems = wmt17
    hypotheses = systems["uedin-nmt.4722"]
    single = [[reference] for reference in references]
    double = [[reference, other] for reference, other in zip(references, systems["online-B.0"], strict=True)]
    for groups in (single, double):
        compared, different = mismatches(ours_module(hypotheses, groups), oracle(hypotheses, groups))
        assert (compared, different) == (4 + 4 * 3004, 0)


@pytest.mark.parametrize(("limit",), default_and_slow((1000,), (None,)))
def test_cnndm(shared_data: Path, limit) -> None:
    """CNN/DailyMail summaries (several lines each) of See et al.'s three systems against the reference."""
    records = cnndm_or_skip(shared_data, limit)
    references = [[record["reference"]] for record in records]
    for system in SYSTEMS:
        predictions = [record[system] for record in records]
        compared, different = mismatches(ours_core(predictions, references), oracle(predictions, references))
        assert (compared, different) == (4 + 4 * len(records), 0), system


@pytest.mark.parametrize("corpus", ["topical_chat", "persona_chat"])
def test_usr_responses(shared_data: Path, corpus: str) -> None:
    """Every USR response (660, ground truths included) against its context's ground-truth response, as nlg-eval
    scores them (texts stripped); corpus and per-response values."""
    turns = turns_or_skip(shared_data, corpus)
    predictions = [turn.response.strip() for turn in turns]
    references = [[turn.reference.strip()] for turn in turns]
    compared, different = mismatches(ours_module(predictions, references), oracle(predictions, references))
    assert (compared, different) == (4 + 4 * len(turns), 0)


# -- orders and sentence scores in every mode ----------------------------------------------------------------------

MODES = [{}, {"smooth": True}, {"evaluate_compatible": True}, {"evaluate_compatible": True, "smooth": True},
         {"pycocoevalcap_compatible": True}]


@pytest.mark.parametrize("mode", MODES, ids=lambda mode: ",".join(mode) or "default")
def test_orders_equal_the_score_of_that_max_order(mode: dict) -> None:
    """BLEU-k from statistics of max_order=4 is, bit for bit, the BLEU of max_order=k."""
    rng = random.Random(7)
    metric = load_metric("bleu")
    for predictions, references in random_corpora(rng, 25, 6):
        result = metric.compute(predictions=predictions, references=references, orders=[1, 2, 3, 4],
                                sentence_scores=True, **mode)
        for order in (1, 2, 3):
            alone = metric.compute(predictions=predictions, references=references, max_order=order,
                                   sentence_scores=True, **mode)
            assert result[f"bleu_{order}"] == alone["bleu"]
            assert result[f"sentence_bleu_{order}"] == alone["sentence_scores"]
        assert result["bleu_4"] == result["bleu"]


@pytest.mark.parametrize("mode", MODES, ids=lambda mode: ",".join(mode) or "default")
def test_sentence_scores_are_each_example_scored_alone(mode: dict) -> None:
    rng = random.Random(8)
    metric = load_metric("bleu")
    predictions, references = next(random_corpora(rng, 1, 12))
    result = metric.compute(predictions=predictions, references=references, sentence_scores=True, orders=[2],
                            **mode)
    for index, (prediction, group) in enumerate(zip(predictions, references, strict=True)):
        alone = metric.compute(predictions=[prediction], references=[group], orders=[2], **mode)
        assert result["sentence_scores"][index] == alone["bleu"]
        assert result["sentence_bleu_2"][index] == alone["bleu_2"]


def test_statistics_of_max_order_four_give_every_lower_order() -> None:
    """The issue's case: statistics computed once with max_order=4 give BLEU-1..4 (sharded, merged)."""
    metric = load_metric("bleu")
    rng = random.Random(9)
    predictions = [random_text(rng) for _ in range(40)]
    references = [[random_text(rng)] for _ in range(40)]
    stats = metric.example_stats(predictions, references)
    totals = [metric.reduce_stats({name: values[:17] for name, values in stats.items()}),
              metric.reduce_stats({name: values[17:] for name, values in stats.items()})]
    from_stats = metric.compute_from_stats(totals, orders=[1, 2, 3, 4])
    direct = metric.compute(predictions=predictions, references=references, orders=[1, 2, 3, 4])
    assert from_stats == direct
    for order in (1, 2, 3):
        assert direct[f"bleu_{order}"] == metric.compute(predictions=predictions, references=references,
                                                         max_order=order)["bleu"]
    # the pycocoevalcap arithmetic reads the same statistics when they were made with its whitespace tokens
    coco_stats = metric.example_stats(predictions, references, pycocoevalcap_compatible=True)
    split_stats = metric.example_stats(predictions, references, tokenizer=str.split)
    assert {name: values for name, values in coco_stats.items() if name != "signature"} == {
        name: values for name, values in split_stats.items() if name != "signature"}
    assert coco_stats["signature"][0].startswith("bleu|tok:none|order:4|reflen:closest")
    coco = metric.compute_from_stats(coco_stats, pycocoevalcap_compatible=True, orders=[1, 2, 3, 4])
    assert [coco[f"bleu_{k}"] for k in COCO_ORDERS] == oracle(predictions, references)[0]


def test_sentence_scores_through_map_and_add_batch() -> None:
    """Per-example scores come out of the streamed compute (add_batch) as out of compute with the inputs."""
    metric = load_metric("bleu")
    predictions, references = ["a b c d", "a b", "x y z"], [["a b c d"], ["a b c"], ["x y"]]
    given = metric.compute(predictions=predictions, references=references, sentence_scores=True,
                           pycocoevalcap_compatible=True)
    metric.add_batch(predictions=predictions[:2], references=references[:2])
    metric.add_batch(predictions=predictions[2:], references=references[2:])
    assert metric.compute(sentence_scores=True, pycocoevalcap_compatible=True) == given
    assert given["sentence_scores"] == oracle(predictions, references)[1][3]


def test_default_results_are_unchanged_without_the_new_options() -> None:
    result = load_metric("bleu").compute(predictions=["the cat sat"], references=["the cat sat on the mat"])
    assert set(result) == {"bleu", "precisions", "brevity_penalty", "length_ratio", "translation_length",
                           "reference_length"}
