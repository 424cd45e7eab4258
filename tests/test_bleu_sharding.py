"""Per-example sufficient statistics: columns written by datasets.map (any num_proc), shard totals merged in
any order, and streaming with add_batch all give exactly the one-shot corpus score."""

from __future__ import annotations

import random

import datasets
import pytest

from conftest import load_metric
from generated_text import random_corpus


def _map_stats(name: str, predictions: list[str], references: list[list[str]], num_proc: int, **options):
    metric = load_metric(name)
    dataset = datasets.Dataset.from_dict({"prediction": predictions, "references": references})
    return dataset.map(
        lambda batch: metric.example_stats(batch["prediction"], batch["references"], **options),
        batched=True,
        batch_size=257,
        num_proc=num_proc,
        remove_columns=["prediction", "references"],
    )


@pytest.mark.parametrize("num_proc", [1, 2])
def test_sacrebleu_map_columns_reduce_to_the_corpus_score(num_proc: int, wmt17) -> None:
    references, systems = wmt17
    metric = load_metric("sacrebleu")
    for system in ("online-B.0", "PROMT-Rule-based.4735"):
        hypotheses = systems[system]
        stats = _map_stats("sacrebleu", hypotheses, [[r] for r in references], num_proc, tokenize="intl")
        one_shot = metric.compute(predictions=hypotheses, references=references, tokenize="intl")
        assert metric.compute_from_stats(stats, tokenize="intl") == one_shot


@pytest.mark.parametrize("num_proc", [1, 2])
def test_bleu_map_columns_reduce_to_the_corpus_score(num_proc: int, wmt17) -> None:
    references, systems = wmt17
    metric = load_metric("bleu")
    paired = [[a, b] for a, b in zip(references, systems["online-A.0"], strict=True)]
    hypotheses = systems["uedin-nmt.4722"]
    for compatible in (False, True):
        stats = _map_stats("bleu", hypotheses, paired, num_proc, evaluate_compatible=compatible)
        one_shot = metric.compute(predictions=hypotheses, references=paired, evaluate_compatible=compatible)
        assert metric.compute_from_stats(stats, evaluate_compatible=compatible) == one_shot


def test_shard_totals_merge_in_any_order(wmt17) -> None:
    references, systems = wmt17
    metric = load_metric("sacrebleu")
    hypotheses = systems["KIT.4950"]
    one_shot = metric.compute(predictions=hypotheses, references=references)
    bounds = [0, 700, 701, 2000, len(hypotheses)]
    shard_totals = [
        metric.reduce_stats(metric.example_stats(hypotheses[a:b], references[a:b]))
        for a, b in zip(bounds, bounds[1:])
    ]
    assert metric.compute_from_stats(shard_totals) == one_shot
    assert metric.compute_from_stats(shard_totals[::-1]) == one_shot


def test_streaming_add_batch_equals_one_shot_on_generated_data() -> None:
    rng = random.Random(5)
    predictions, references = random_corpus(rng, 400)
    for name in ("bleu", "sacrebleu"):
        metric = load_metric(name)
        one_shot = metric.compute(predictions=predictions, references=references)
        for start in range(0, len(predictions), 37):
            metric.add_batch(predictions=predictions[start : start + 37], references=references[start : start + 37])
        assert metric.compute() == one_shot
        records = metric.example_stats(predictions, references)
        assert metric.compute_from_stats(records) == one_shot
