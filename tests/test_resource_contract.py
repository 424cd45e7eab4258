"""Issue 32, requirement 1: the bounds every metric of a kind shares, checked by the base before any work (one text's
size, ``max_text_chars``; resampling's work, ``max_resample_work``), on every path a corpus takes: in memory,
streamed from evaluate's cache after ``add_batch``, per-example statistics for ``datasets.map``, and statistics
given back to ``compute_from_stats``. A refusal names the example by its index in the corpus and loses nothing
added."""

from __future__ import annotations

import pytest

from conftest import load_metric
from metrics._core.core_resources import DEFAULT_MAX_RESAMPLE_WORK, DEFAULT_MAX_TEXT_CHARS, check_text_sizes

PREDICTIONS = ["the cat sat", "a dog ran", "the bird sang a long song", "one more line here"]
REFERENCES = [["the cat sat on a mat", "there is a cat"], ["a dog runs"], ["birds sing"], ["one more line"]]


def test_the_longest_text_is_named_by_its_place_in_the_corpus() -> None:
    columns = {"predictions": ["ab", "abcd"], "references": [["a"], ["abc", {"text": ["abcdefg"]}]]}
    check_text_sizes("m", columns, 7)
    with pytest.raises(ValueError) as refused:
        check_text_sizes("m", columns, 6, start=10)
    assert str(refused.value) == (
        "m: the characters of references[11][1]['text'][0]: 7, more than max_text_chars=6; split it into segments "
        "scored as separate examples (a text's tokens and statistics take time and memory in proportion to its "
        "length), or raise max_text_chars")
    with pytest.raises(ValueError, match=r"predictions\[1\]: 4, more than max_text_chars=3"):
        check_text_sizes("m", {"predictions": ["ab", "abcd"]}, 3)


def test_the_defaults_are_stated_as_such() -> None:
    with pytest.raises(ValueError, match="about a minute's work on a 2-core machine"):
        check_text_sizes("m", {"predictions": ["x" * (DEFAULT_MAX_TEXT_CHARS + 1)]}, DEFAULT_MAX_TEXT_CHARS)


@pytest.mark.parametrize("name", ["bleu", "chrf", "rouge", "meteor"])
def test_a_text_at_the_bound_scores_as_without_it(name: str) -> None:
    metric = load_metric(name)
    assert metric.compute(predictions=PREDICTIONS, references=REFERENCES, max_text_chars=25) == \
        metric.compute(predictions=PREDICTIONS, references=REFERENCES)
    with pytest.raises(ValueError, match=r"predictions\[2\]: 25, more than max_text_chars=24"):
        metric.compute(predictions=PREDICTIONS, references=REFERENCES, max_text_chars=24)
    with pytest.raises(ValueError, match=r"references\[0\]\[0\]: 20, more than max_text_chars=19"):
        metric.compute(predictions=PREDICTIONS[:2], references=REFERENCES[:2], max_text_chars=19)


def test_a_refusal_in_a_later_streamed_batch_names_the_corpus_index_and_keeps_every_example() -> None:
    metric = load_metric("sacrebleu")
    metric.stream_batch_size = 2
    try:
        for start in (0, 2):
            metric.add_batch(predictions=PREDICTIONS[start:start + 2], references=REFERENCES[start:start + 2])
        with pytest.raises(ValueError, match=r"predictions\[2\]: 25, more than max_text_chars=20"):
            metric.compute(max_text_chars=20)
        assert metric.compute() == load_metric("sacrebleu").compute(predictions=PREDICTIONS, references=REFERENCES)
    finally:
        metric.stream_batch_size = type(metric).stream_batch_size


def test_per_example_statistics_are_refused_too() -> None:
    metric = load_metric("bleu")
    with pytest.raises(ValueError, match=r"predictions\[2\]: 25, more than max_text_chars=5"):
        metric.example_stats(predictions=PREDICTIONS, references=REFERENCES, max_text_chars=5)


def test_resampling_work_is_counted_from_the_corpus_size_on_every_path() -> None:
    metric = load_metric("chrf")
    # 4 examples x 1000 resamples (sacreBLEU's default n_bootstrap) = 4,000 > 3,999
    with pytest.raises(ValueError, match=r"rescores the corpus of 4 examples 1,000 times; resamples x examples: "
                                         r"4,000, more than max_resample_work=3,999"):
        metric.compute(predictions=PREDICTIONS, references=REFERENCES, confidence=True, max_resample_work=3999)
    assert metric.compute(predictions=PREDICTIONS, references=REFERENCES, confidence=True, max_resample_work=4000)
    # approximate randomization: 10,000 trials by default (sacreBLEU's)
    with pytest.raises(ValueError, match=r"the paired test \(paired_test='ar'\) rescores the corpus of 4 examples "
                                         r"10,000 times"):
        metric.compute(predictions=PREDICTIONS, references=REFERENCES, baseline_predictions=PREDICTIONS[::-1],
                       paired_test="ar", max_resample_work=39_999)
    stats = metric.example_stats(predictions=PREDICTIONS, references=REFERENCES)
    with pytest.raises(ValueError, match="max_resample_work=3,999"):
        metric.compute_from_stats(stats, confidence=True, max_resample_work=3999)
    added = load_metric("chrf")
    added.add_batch(predictions=PREDICTIONS, references=REFERENCES)
    with pytest.raises(ValueError, match="max_resample_work=3,999"):
        added.compute(confidence=True, max_resample_work=3999)
    assert added.compute(confidence=True) == metric.compute(predictions=PREDICTIONS, references=REFERENCES,
                                                            confidence=True)


def test_the_resampling_default_is_a_million_examples_with_a_thousand_resamples() -> None:
    assert DEFAULT_MAX_RESAMPLE_WORK == 1000 * 1_000_000
