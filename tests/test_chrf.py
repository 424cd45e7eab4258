"""metrics/chrf against sacreBLEU 2.6.0's CHRF (the oracle), through evaluate.load: WMT17 systems (chrF, chrF++,
lowercase, ragged references), generated corpora with every option, sentence scores, signatures, the bootstrap
interval and paired tests, and option errors."""

from __future__ import annotations

import random

import pytest
from sacrebleu.metrics.chrf import CHRF

from conftest import load_metric, wmt17_ragged
from generated_text import padded_streams, random_corpus
from sacrebleu_resampling import TOLERANCE, assert_resampling_matches_sacrebleu, assert_sentence_scores_match

OPTION_SETS = ({}, {"word_order": 2}, {"word_order": 2, "lowercase": True}, {"char_order": 4, "beta": 1,
               "whitespace": True}, {"word_order": 2, "eps_smoothing": True})


def test_wmt17_systems_chrf_and_chrf_plus_plus(wmt17) -> None:
    references, systems = wmt17
    chrf = load_metric("chrf")
    size = 1000
    for name in ("online-B.0", "uedin-nmt.4722"):
        for options in OPTION_SETS[:3]:
            ours = chrf.compute(predictions=systems[name][:size], references=references[:size], **options)
            oracle = CHRF(**options)
            theirs = oracle.corpus_score(systems[name][:size], [references[:size]])
            assert abs(ours["score"] - theirs.score) <= TOLERANCE, (name, options)
            assert ours["signature"] == oracle.get_signature().format()
            assert (ours["char_order"], ours["word_order"], ours["beta"]) == (oracle.char_order, oracle.word_order,
                                                                             oracle.beta)


def test_wmt17_ragged_references_and_sentence_scores(wmt17) -> None:
    hypotheses, ragged, streams = wmt17_ragged(wmt17, 200)
    chrf = load_metric("chrf")
    for options in OPTION_SETS:
        ours = chrf.compute(predictions=hypotheses, references=ragged, sentence_scores=True, **options)
        oracle = CHRF(**options)
        theirs = oracle.corpus_score(hypotheses, streams)
        assert abs(ours["score"] - theirs.score) <= TOLERANCE, options
        assert ours["signature"] == oracle.get_signature().format() and "nrefs:var" in ours["signature"]
        assert_sentence_scores_match(ours, CHRF(**options), hypotheses, ragged)


def test_generated_corpora_through_the_module() -> None:
    rng = random.Random(41)
    chrf = load_metric("chrf")
    for index in range(60):
        predictions, references = random_corpus(rng, rng.randint(1, 12))
        options = {
            "char_order": rng.randint(0, 6),
            "word_order": rng.choice((0, 0, 1, 2, 3)),
            "beta": rng.choice((1, 2, 3, 0.5)),
            "lowercase": rng.random() < 0.3,
            "whitespace": rng.random() < 0.3,
            "eps_smoothing": rng.random() < 0.3,
        }
        if options["char_order"] + options["word_order"] == 0:
            options["char_order"] = 6
        ours = chrf.compute(predictions=predictions, references=references, sentence_scores=True, **options)
        oracle = CHRF(**options)
        theirs = oracle.corpus_score(predictions, padded_streams(references))
        assert abs(ours["score"] - theirs.score) <= TOLERANCE, (index, options)
        assert ours["signature"] == oracle.get_signature().format()
        assert_sentence_scores_match(ours, CHRF(**options), predictions, references)


def test_bootstrap_and_paired_tests_match_sacrebleu(wmt17) -> None:
    assert_resampling_matches_sacrebleu(load_metric("chrf"), CHRF, wmt17, size=1000)


def test_option_errors() -> None:
    chrf = load_metric("chrf")
    data = {"predictions": ["a b"], "references": [["a b"]]}
    with pytest.raises(ValueError, match="chrf: `char_order` must be at least 0"):
        chrf.compute(**data, char_order=-1)
    with pytest.raises(TypeError, match="chrf: `word_order` must be an integer"):
        chrf.compute(**data, word_order="2")
    with pytest.raises(ValueError, match="both 0"):
        chrf.compute(**data, char_order=0, word_order=0)
    with pytest.raises(ValueError, match="chrf: `beta` must be at least 0"):
        chrf.compute(**data, beta=-1)
    with pytest.raises(TypeError, match="chrf: `lowercase` must be True or False"):
        chrf.compute(**data, lowercase="yes")
    with pytest.raises(TypeError, match="unknown options"):
        chrf.compute(**data, tokenize="13a")


def test_identical_and_empty_texts() -> None:
    chrf = load_metric("chrf")
    assert chrf.compute(predictions=["the same text"], references=["the same text"])["score"] == 100.0
    result = chrf.compute(predictions=["", "x"], references=[[""], ["", "y"]], sentence_scores=True)
    theirs = CHRF().corpus_score(["", "x"], [["", ""], [None, "y"]])
    assert result["score"] == pytest.approx(theirs.score, abs=TOLERANCE)
