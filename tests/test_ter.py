"""metrics/ter against sacreBLEU 2.6.0's TER (the oracle), through evaluate.load: WMT17 systems under option
combinations, ragged references, generated corpora, sentence scores, signatures, the bootstrap interval and
paired tests, and option errors."""

from __future__ import annotations

import random

import pytest
from sacrebleu.metrics.ter import TER

from conftest import load_metric, wmt17_ragged
from generated_text import padded_streams, random_corpus
from sacrebleu_resampling import TOLERANCE, assert_resampling_matches_sacrebleu, assert_sentence_scores_match

SACREBLEU_NAMES = {"normalized": "normalized", "ignore_punct": "no_punct",
                   "support_zh_ja_chars": "asian_support", "case_sensitive": "case_sensitive"}
OPTION_SETS = ({}, {"normalized": True}, {"ignore_punct": True, "case_sensitive": True},
               {"normalized": True, "ignore_punct": True, "support_zh_ja_chars": True})


def sacrebleu_ter(options: dict) -> TER:
    return TER(**{SACREBLEU_NAMES[name]: value for name, value in options.items()})


def assert_same(ours: dict, theirs, context) -> None:
    assert abs(ours["score"] - theirs.score) <= TOLERANCE, context
    assert ours["num_edits"] == theirs.num_edits, context
    assert abs(ours["ref_length"] - theirs.ref_length) <= TOLERANCE * max(1.0, theirs.ref_length), context


def test_wmt17_systems_and_options(wmt17) -> None:
    references, systems = wmt17
    size = 300
    ter = load_metric("ter")
    for name in ("online-B.0", "uedin-nmt.4722"):
        for options in OPTION_SETS:
            ours = ter.compute(predictions=systems[name][:size], references=references[:size], **options)
            oracle = sacrebleu_ter(options)
            theirs = oracle.corpus_score(systems[name][:size], [references[:size]])
            assert_same(ours, theirs, (name, options))
            assert ours["signature"] == oracle.get_signature().format()


def test_wmt17_ragged_references_and_sentence_scores(wmt17) -> None:
    hypotheses, ragged, streams = wmt17_ragged(wmt17, 200)
    ter = load_metric("ter")
    ours = ter.compute(predictions=hypotheses, references=ragged, sentence_scores=True)
    oracle = TER()
    theirs = oracle.corpus_score(hypotheses, streams)
    assert_same(ours, theirs, "ragged")
    assert ours["signature"] == oracle.get_signature().format() and "nrefs:var" in ours["signature"]
    assert_sentence_scores_match(ours, TER(), hypotheses, ragged)


def test_generated_corpora_through_the_module() -> None:
    rng = random.Random(43)
    ter = load_metric("ter")
    for index in range(60):
        predictions, references = random_corpus(rng, rng.randint(1, 10))
        options = {name: rng.random() < 0.5 for name in SACREBLEU_NAMES}
        ours = ter.compute(predictions=predictions, references=references, sentence_scores=True, **options)
        oracle = sacrebleu_ter(options)
        theirs = oracle.corpus_score(predictions, padded_streams(references))
        assert_same(ours, theirs, (index, options))
        assert ours["signature"] == oracle.get_signature().format()
        assert_sentence_scores_match(ours, sacrebleu_ter(options), predictions, references)


def test_bootstrap_and_paired_tests_match_sacrebleu(wmt17) -> None:
    assert_resampling_matches_sacrebleu(load_metric("ter"), TER, wmt17, size=400)


def test_evaluate_docstring_example_and_edge_cases() -> None:
    ter = load_metric("ter")
    # evaluate's `ter` card example (case-sensitive): 150.0, 15 edits, reference length 10.0
    predictions = ["does this sentence match??", "what about this sentence?",
                   "What did the TER metric user say to the developer?"]
    references = [["does this sentence match", "does this sentence match!?!"],
                  ["wHaT aBoUt ThIs SeNtEnCe?", "wHaT aBoUt ThIs SeNtEnCe?"],
                  ["Your jokes are...", "...TERrible"]]
    result = ter.compute(predictions=predictions, references=references, case_sensitive=True)
    assert (result["score"], result["num_edits"], result["ref_length"]) == (150.0, 15, 10.0)
    assert ter.compute(predictions=["the same text"], references=["the same text"])["score"] == 0.0
    assert ter.compute(predictions=["", ""], references=["", ""])["score"] == 0.0
    assert ter.compute(predictions=["a b"], references=[""])["score"] == 100.0


def test_option_errors() -> None:
    ter = load_metric("ter")
    data = {"predictions": ["a b"], "references": [["a b"]]}
    for name in SACREBLEU_NAMES:
        with pytest.raises(TypeError, match=f"ter: `{name}` must be True or False"):
            ter.compute(**data, **{name: "yes"})
    with pytest.raises(TypeError, match="unknown options"):
        ter.compute(**data, no_punct=True)
    with pytest.raises(ValueError, match="baseline_predictions"):
        ter.compute(**data, baseline_predictions=["a", "b"])
