"""compute() after add_batch reduces evaluate's cache one batch at a time (metrics/_core/core_streaming.py and
core_metric.py).

For bleu, sacrebleu and rouge the result equals the one-shot result and the oracle (sacreBLEU, tensorflow/nmt's
BLEU as transcribed in test_bleu, rouge-score) whatever the add_batch sizes, evaluate's Arrow writer batch size
and the streaming batch size; options that need every example (bootstrap, paired tests) keep every example's
statistics row, not its text, and stream too; evaluate's cache handling (in-memory mode, cache files removed,
the module reusable) is kept; and the streamed path never holds more than one batch of text (checked by
instrumenting the reduction and by tracing Python allocations).
"""

from __future__ import annotations

import math
import os
import random
import tracemalloc
import warnings
from collections.abc import Iterator

import datasets
import evaluate
import pytest
import sacrebleu
from evaluate.module import EvaluationModule

from conftest import METRICS_DIR, load_metric
from generated_text import padded_streams, random_corpus
from metrics._core.core_mt_tokenizers import tokenize_13a
from test_bleu import nmt_compute_bleu
from test_rouge_parity import oracle_rows
from test_sacrebleu import assert_same

STATS_METRICS = ("bleu", "sacrebleu", "rouge")
# (add_batch size, streaming batch size): batches that straddle each other, single examples, one batch
BOUNDARIES = ((7, 5), (1, 64), (64, 1), (33, 10_000), (10_000, 50))
ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")


def add_in_batches(metric, predictions: list[str], references: list, size: int) -> None:
    for start in range(0, len(predictions), size):
        metric.add_batch(predictions=predictions[start : start + size], references=references[start : start + size])


def streamed(metric, predictions, references, add_size: int, stream_size: int, **options):
    add_in_batches(metric, predictions, references, add_size)
    previous = metric.stream_batch_size
    metric.stream_batch_size = stream_size
    try:
        return metric.compute(**options)
    finally:
        metric.stream_batch_size = previous


def oracle(name: str, predictions: list[str], references: list[list[str]]) -> dict:
    """The reference implementation's corpus result in our output keys."""
    if name == "bleu":
        tokenized = [[tokenize_13a(reference) for reference in group] for group in references]
        return nmt_compute_bleu(tokenized, [tokenize_13a(p) for p in predictions], 4, False)
    if name == "sacrebleu":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return sacrebleu.corpus_bleu(predictions, padded_streams(references))
    rows = oracle_rows(predictions, references, ROUGE_TYPES, use_stemmer=False)
    return {name: math.fsum(row[3 * i + 2] for row in rows) / len(rows) for i, name in enumerate(ROUGE_TYPES)}


def assert_oracle(name: str, ours: dict, theirs, context: str) -> None:
    if name == "sacrebleu":
        assert_same(ours, theirs, context)
    else:
        assert ours == theirs, context


ORACLE_OPTIONS = {"bleu": {"evaluate_compatible": True}, "sacrebleu": {}, "rouge": {}}


@pytest.mark.parametrize("name", STATS_METRICS)
def test_add_batch_equals_one_shot_and_oracle_across_batch_boundaries(name: str) -> None:
    predictions, references = random_corpus(random.Random(21), 150)
    metric = load_metric(name)
    options = ORACLE_OPTIONS[name]
    one_shot = metric.compute(predictions=predictions, references=references, **options)
    assert_oracle(name, one_shot, oracle(name, predictions, references), "one shot")
    for add_size, stream_size in BOUNDARIES:
        result = streamed(metric, predictions, references, add_size, stream_size, **options)
        assert result == one_shot, f"add_batch {add_size}, stream {stream_size}"
    add_in_batches(metric, predictions, references, 40)
    assert EvaluationModule.compute(metric, **options) == one_shot, "evaluate's own (materialising) compute"


@pytest.mark.parametrize("name", STATS_METRICS)
def test_arrow_writer_batches_smaller_than_the_data(name: str) -> None:
    """evaluate writes its cache in record batches of `writer_batch_size`; streaming crosses them."""
    predictions, references = random_corpus(random.Random(22), 120)
    metric = evaluate.load(str(METRICS_DIR / name), writer_batch_size=8)
    one_shot = load_metric(name).compute(predictions=predictions, references=references)
    assert streamed(metric, predictions, references, 13, 11) == one_shot
    assert metric.data is None and metric.writer is None, "evaluate's clean-up after compute"


def test_sacrebleu_real_data_streamed_equals_sacrebleu(wmt17) -> None:
    references, systems = wmt17
    predictions, references = systems["online-B.0"][:1000], [[reference] for reference in references[:1000]]
    metric = load_metric("sacrebleu")
    result = streamed(metric, predictions, references, 100, 97, tokenize="intl")
    theirs = sacrebleu.corpus_bleu(predictions, padded_streams(references), tokenize="intl")
    assert_same(result, theirs, "wmt17 online-B.0, 1,000 segments, streamed in 97s")
    assert result == metric.compute(predictions=predictions, references=references, tokenize="intl")


def test_streamed_options_bound_with_configure() -> None:
    predictions, references = random_corpus(random.Random(23), 60)
    metric = evaluate.load(str(METRICS_DIR / "bleu")).configure(max_order=2, smooth=True)
    expected = load_metric("bleu").compute(predictions=predictions, references=references, max_order=2, smooth=True)
    assert streamed(metric, predictions, references, 9, 4) == expected


# --- options that read every example -------------------------------------------------------------------------


def test_sacrebleu_confidence_and_paired_test_after_add_batch() -> None:
    """Bootstrap and paired tests resample every example's statistics: streamed rows, same results as one shot
    and as evaluate's own (materialising) compute."""
    rng = random.Random(24)
    predictions, references = random_corpus(rng, 80)
    baseline, _ = random_corpus(rng, 80)
    metric = load_metric("sacrebleu")
    for options in (
        {"confidence": True, "n_bootstrap": 200},
        {"baseline_predictions": baseline, "n_samples": 200},
        {"baseline_predictions": baseline, "paired_test": "ar", "n_samples": 300, "sentence_scores": True},
    ):
        one_shot = metric.compute(predictions=predictions, references=references, **options)
        assert streamed(metric, predictions, references, 7, 5, **options) == one_shot, options
        add_in_batches(metric, predictions, references, 7)
        assert EvaluationModule.compute(metric, **options) == one_shot, "evaluate's own compute"
    assert "confidence_low" in streamed(metric, predictions, references, 7, 5, confidence=True, n_bootstrap=50)


def test_sacrebleu_sentence_scores_are_streamed() -> None:
    predictions, references = random_corpus(random.Random(25), 90)
    metric = load_metric("sacrebleu")
    result = streamed(metric, predictions, references, 11, 4, sentence_scores=True)
    expected = [
        sacrebleu.sentence_bleu(prediction, group).score for prediction, group in zip(predictions, references)
    ]
    assert result["sentence_scores"] == pytest.approx(expected, abs=1e-9)
    assert result == metric.compute(predictions=predictions, references=references, sentence_scores=True)


def test_rouge_per_example_output_is_streamed_and_matches_rouge_score() -> None:
    predictions, references = random_corpus(random.Random(26), 70)
    metric = load_metric("rouge")
    result = streamed(
        metric, predictions, references, 8, 3, use_aggregator=False, return_precision_recall=True
    )
    rows = oracle_rows(predictions, references, ROUGE_TYPES, use_stemmer=False)
    for position, name in enumerate(ROUGE_TYPES):
        assert result[f"{name}_precision"] == [row[3 * position] for row in rows]
        assert result[f"{name}_recall"] == [row[3 * position + 1] for row in rows]
        assert result[name] == [row[3 * position + 2] for row in rows]
    one_shot = metric.compute(
        predictions=predictions, references=references, use_aggregator=False, return_precision_recall=True
    )
    assert list(result) == list(one_shot) and result == one_shot


def test_rouge_confidence_after_add_batch() -> None:
    predictions, references = random_corpus(random.Random(27), 60)
    metric = load_metric("rouge")
    one_shot = metric.compute(predictions=predictions, references=references, confidence=True, n_bootstrap=100)
    assert streamed(metric, predictions, references, 6, 4, confidence=True, n_bootstrap=100) == one_shot
    assert one_shot["rougeL_low"] <= one_shot["rougeL"] <= one_shot["rougeL_high"]


def test_corpus_wide_warnings_see_every_batch() -> None:
    """sacreBLEU's tokenized-period warning counts over all batches (30 per batch, 120 in all)."""
    predictions = [f"sentence {i} ." for i in range(120)]
    metric = load_metric("sacrebleu")
    with pytest.warns(UserWarning, match="tokenized period"):
        streamed(metric, predictions, predictions, 30, 30)
    rouge = load_metric("rouge")
    texts = ["the cat sat. It was happy."] * 10
    with pytest.warns(UserWarning, match="split_summaries=True"):
        streamed(rouge, texts, texts, 5, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        streamed(rouge, texts[:9] + ["the cat sat.\nIt was happy."], texts, 5, 5)


def test_errors_are_evaluates() -> None:
    metric = evaluate.load(str(METRICS_DIR / "bleu"))
    metric.add_batch(predictions=["a b"], references=["a b"])
    with pytest.raises(TypeError, match=r"^bleu: unknown options \['nope'\]; valid options are"):
        metric.compute(nope=1)
    assert metric.compute()["translation_length"] == 2  # the bad option lost nothing
    with pytest.raises(TypeError, match="`references` is None"):
        load_metric("bleu").compute(predictions=["a"])
    with pytest.raises(ValueError, match=r"^bleu: nothing to score: pass `predictions`, `references` to compute, "
                                         r"or add examples with add/add_batch first"):
        evaluate.load(str(METRICS_DIR / "bleu")).compute()
    with pytest.raises(ValueError, match="stream_batch_size"):
        streamed(evaluate.load(str(METRICS_DIR / "rouge")), ["a"], ["a"], 1, 0)


# --- evaluate's cache handling ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", STATS_METRICS)
def test_in_memory_mode(name: str) -> None:
    predictions, references = random_corpus(random.Random(28), 50)
    metric = evaluate.load(str(METRICS_DIR / name), keep_in_memory=True)
    expected = load_metric(name).compute(predictions=predictions, references=references)
    assert streamed(metric, predictions, references, 6, 7) == expected
    assert metric.buf_writer is None and metric.data is None


def test_cache_files_removed_and_module_reusable() -> None:
    predictions, references = random_corpus(random.Random(29), 40)
    metric = evaluate.load(str(METRICS_DIR / "sacrebleu"), experiment_id="streamed-reuse")
    add_in_batches(metric, predictions, references, 10)
    paths = [metric.cache_file_name]
    first = metric.compute()
    assert paths == metric.file_paths and not any(os.path.exists(path) for path in paths)
    assert streamed(metric, predictions, references, 3, 2) == first
    assert metric.compute(predictions=predictions[:5], references=references[:5]) == load_metric(
        "sacrebleu"
    ).compute(predictions=predictions[:5], references=references[:5])


# --- bounded memory -----------------------------------------------------------------------------------------


@pytest.fixture
def no_full_columns(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fails any read of a whole column of a Dataset (what evaluate's compute does before `_compute`) and any
    iteration over one (the cache files are read directly, so that their memory map never fills up)."""
    original = datasets.Dataset.__getitem__

    def guarded(self, key):
        if isinstance(key, str):
            raise AssertionError(f"column {key!r} read whole")
        return original(self, key)

    def no_iteration(self, *args, **kwargs):
        raise AssertionError("cache read through its memory map")

    monkeypatch.setattr(datasets.Dataset, "__getitem__", guarded)
    monkeypatch.setattr(datasets.Dataset, "iter", no_iteration)
    yield


def record_batches(metric, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Lengths of the batches whose statistics the reduction computes."""
    sizes: list[int] = []
    example_rows = metric.example_rows

    def recording_rows(batch, options):
        sizes.append(len(batch["predictions"]))
        return example_rows(batch, options)

    monkeypatch.setattr(metric, "example_rows", recording_rows)
    return sizes


@pytest.mark.parametrize("name", STATS_METRICS)
def test_reduction_never_holds_more_than_one_batch(name: str, monkeypatch: pytest.MonkeyPatch, no_full_columns) -> None:
    predictions, references = random_corpus(random.Random(30), 103)
    metric = evaluate.load(str(METRICS_DIR / name))
    sizes = record_batches(metric, monkeypatch)
    add_in_batches(metric, predictions, references, 50)
    metric.stream_batch_size = 10
    metric.compute()
    assert max(sizes) == 10 and sum(sizes) == 103 and len(sizes) == 11


def test_resampling_streams_too(monkeypatch: pytest.MonkeyPatch, no_full_columns) -> None:
    """Bootstrap intervals and paired tests keep statistics rows only: the text is read one batch at a time."""
    predictions, references = random_corpus(random.Random(31), 20)
    baseline, _ = random_corpus(random.Random(33), 20)
    for name, options, systems in (("rouge", {"confidence": True, "n_bootstrap": 20}, 1),
                                   ("sacrebleu", {"baseline_predictions": baseline, "n_samples": 20}, 2)):
        metric = evaluate.load(str(METRICS_DIR / name))
        sizes = record_batches(metric, monkeypatch)
        add_in_batches(metric, predictions, references, 5)
        metric.stream_batch_size = 6
        metric.compute(**options)
        assert max(sizes) == 6 and sum(sizes) == 20 * systems, (name, sizes)


def test_the_guard_catches_evaluates_materialising_path(monkeypatch: pytest.MonkeyPatch, no_full_columns) -> None:
    """evaluate's own compute reads whole columns: the guard sees it (so the tests above are not vacuous)."""
    predictions, references = random_corpus(random.Random(31), 20)
    metric = evaluate.load(str(METRICS_DIR / "rouge"))
    add_in_batches(metric, predictions, references, 5)
    with pytest.raises(AssertionError, match="read whole"):
        EvaluationModule.compute(metric)


def test_traced_memory_is_one_batch_not_the_corpus() -> None:
    """Peak Python allocations during compute(): streamed in batches of 100, a fraction of what evaluate's
    compute allocates to hold 10,000 pairs as lists (both measured here, on the same data)."""
    predictions, references = random_corpus(random.Random(32), 10_000, max_references=2)
    metric = evaluate.load(str(METRICS_DIR / "rouge"))
    metric.stream_batch_size = 100
    peaks = {}
    for path, compute in (("materialised", lambda: EvaluationModule.compute(metric)), ("streamed", metric.compute)):
        add_in_batches(metric, predictions, references, 1000)
        tracemalloc.start()
        try:
            compute()
            peaks[path] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peaks["streamed"] * 10 < peaks["materialised"], peaks
