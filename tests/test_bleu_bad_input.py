"""Bad input to bleu and sacrebleu: one clear ValueError/TypeError per case, naming the argument and index."""

from __future__ import annotations

import pytest
import sacrebleu

from conftest import load_metric

METRICS = ("bleu", "sacrebleu")


@pytest.mark.parametrize("name", METRICS)
@pytest.mark.parametrize(
    ("predictions", "references", "error", "message"),
    [
        (["a", "b"], ["a"], ValueError, r"got 2 predictions but 1 references"),
        ([], [], ValueError, r"`predictions` is empty"),
        (None, ["a"], TypeError, r"`predictions` is None"),
        (["a"], None, TypeError, r"`references` is None"),
        ("a b", ["a b"], TypeError, r"`predictions` is a single string"),
        (["a", 3], ["a", "b"], TypeError, r"`predictions\[1\]` must be a string, got int"),
        (["a", None], ["a", "b"], TypeError, r"`predictions\[1\]` must be a string, got NoneType"),
        (["a"], [["a", b"b"]], TypeError, r"`references\[0\]\[1\]` must be a string or None, got bytes"),
        (["a", "b"], [["a"], []], ValueError, r"`references\[1\]` holds no reference"),
        (["a", "b"], [["a"], [None, None]], ValueError, r"`references\[1\]` holds no reference"),
        (["a"], [{"text": "a"}], TypeError, r"`references\[0\]` must be a string or a list of strings, got dict"),
    ],
)
def test_bad_corpus(name: str, predictions, references, error, message) -> None:
    with pytest.raises(error, match=rf"^{name}: .*{message}"):
        load_metric(name).compute(predictions=predictions, references=references)


@pytest.mark.parametrize("name", METRICS)
def test_bad_example_through_add(name: str) -> None:
    metric = load_metric(name)
    with pytest.raises(TypeError, match=r"must be a string, got int"):
        metric.add(prediction=5, reference="a")


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"tokenize": "moses"}, ValueError, r"unknown `tokenize` 'moses'; valid values are '13a', 'intl'"),
        ({"smooth_method": "laplace"}, ValueError, r"unknown `smooth_method` 'laplace'; valid values are 'none'"),
        ({"smooth_value": "big"}, TypeError, r"`smooth_value` must be a number"),
        ({"smooth_value": -1}, ValueError, r"`smooth_value` must be at least 0"),
        ({"lowercase": "yes"}, TypeError, r"`lowercase` must be True or False"),
        ({"use_effective_order": 1}, TypeError, r"`use_effective_order` must be True or False"),
        ({"confidence": True, "n_bootstrap": 1}, ValueError, r"`n_bootstrap` must be at least 2"),
        ({"confidence": True, "confidence_level": 95}, ValueError, r"`confidence_level` must be between 0 and 1"),
        ({"trg_lang": 7}, TypeError, r"`trg_lang` must be a language code string"),
        ({"baseline_predictions": ["a", "b"]}, ValueError, r"got 1 predictions but 2 baseline_predictions"),
        ({"baseline_predictions": ["a"], "paired_test": "t"}, ValueError, r"unknown `paired_test` 't'"),
        ({"baseline_predictions": [None]}, TypeError, r"`baseline_predictions\[0\]` must be a string"),
        ({"seed": -3}, ValueError, r"`seed` must be at least 0"),
    ],
)
def test_bad_sacrebleu_options(options, error, message) -> None:
    with pytest.raises(error, match=rf"^sacrebleu: {message}"):
        load_metric("sacrebleu").compute(predictions=["a b c"], references=["a b c"], **options)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"tokenizer": "13a"}, TypeError, r"`tokenizer` must be a callable"),
        ({"max_order": 0}, ValueError, r"`max_order` must be at least 1"),
        ({"max_order": 2.0}, TypeError, r"`max_order` must be an integer"),
        ({"smooth": "no"}, TypeError, r"`smooth` must be True or False"),
        ({"evaluate_compatible": None}, TypeError, r"`evaluate_compatible` must be True or False"),
        ({"pycocoevalcap_compatible": 1}, TypeError, r"`pycocoevalcap_compatible` must be True or False"),
        ({"evaluate_compatible": True, "pycocoevalcap_compatible": True}, ValueError,
         r"`evaluate_compatible` and `pycocoevalcap_compatible` are two different arithmetics"),
        ({"pycocoevalcap_compatible": True, "smooth": True}, ValueError, r"`smooth=True` with `pycocoevalcap_comp"),
        ({"orders": 4}, TypeError, r"`orders` must be a list of BLEU orders such as \[1, 2, 3, 4\], got int"),
        ({"orders": "1234"}, TypeError, r"`orders` must be a list of BLEU orders"),
        ({"orders": []}, ValueError, r"`orders` is empty"),
        ({"orders": [1, 2.0]}, TypeError, r"`orders\[1\]` must be an integer, got float"),
        ({"orders": [True]}, TypeError, r"`orders\[0\]` must be an integer, got bool"),
        ({"orders": [0]}, ValueError, r"`orders\[0\]` must be at least 1, got 0"),
        ({"orders": [2, 5]}, ValueError, r"`orders` asks for BLEU-5 but `max_order` is 4"),
        ({"orders": [3], "max_order": 2}, ValueError, r"`orders` asks for BLEU-3 but `max_order` is 2"),
        ({"sentence_scores": None}, TypeError, r"`sentence_scores` must be True or False"),
    ],
)
def test_bad_bleu_options(options, error, message) -> None:
    with pytest.raises(error, match=rf"^bleu: {message}"):
        load_metric("bleu").compute(predictions=["a b c"], references=["a b c"], **options)


def test_ragged_references_score_as_sacrebleu_with_none_padding() -> None:
    predictions = ["the cat sat on the mat", "a dog barked", "hello"]
    references = [["the cat sat on a mat", None, "a cat sat"], ["the dog barked loudly"], [None, "hello there"]]
    streams = [
        ["the cat sat on a mat", "the dog barked loudly", None],
        [None, None, "hello there"],
        ["a cat sat", None, None],
    ]
    ours = load_metric("sacrebleu").compute(predictions=predictions, references=references)
    theirs = sacrebleu.corpus_bleu(predictions, streams)
    assert ours["score"] == pytest.approx(theirs.score, abs=1e-9)
    assert (ours["counts"], ours["totals"], ours["ref_len"]) == (theirs.counts, theirs.totals, theirs.ref_len)
    assert ours["signature"].startswith("nrefs:var|")


def test_empty_strings_are_valid_input() -> None:
    ours = load_metric("sacrebleu").compute(predictions=["", "a"], references=[[""], ["", "a"]])
    theirs = sacrebleu.corpus_bleu(["", "a"], [["", ""], [None, "a"]])
    assert ours["score"] == theirs.score and ours["sys_len"] == theirs.sys_len
    assert load_metric("bleu").compute(predictions=[""], references=[""])["bleu"] == 0.0


def test_stats_from_other_options_are_refused() -> None:
    metric = load_metric("sacrebleu")
    stats = metric.example_stats(["a b"], ["a b"], tokenize="intl")
    with pytest.raises(ValueError, match=r"computed with options .*tok:intl.* but the score was asked for with"):
        metric.compute_from_stats(stats, tokenize="13a")
