"""Every metric with per-example sufficient statistics, on both real corpora: the statistics columns that
datasets.Dataset.map writes with 2 processes reduce to exactly the one-shot corpus result."""

from __future__ import annotations

import gzip
import json

import datasets
import pytest

from conftest import load_metric, metric_names

STATS_METRICS = [name for name in metric_names() if hasattr(load_metric(name), "example_stats")]


@pytest.fixture(scope="module")
def corpora(wmt17, shared_data) -> dict[str, tuple[list[str], list[list[str]]]]:
    references, systems = wmt17
    with gzip.open(shared_data / "cnndm-see2017" / "test.jsonl.gz", "rt", encoding="utf-8") as handle:
        records = [json.loads(line) for _, line in zip(range(2000), handle)]
    return {
        "wmt17 uedin-nmt": (systems["uedin-nmt.4722"], [[reference] for reference in references]),
        "cnndm pointer-gen": ([r["pointer-gen"] for r in records], [[r["reference"]] for r in records]),
    }


def test_every_corpus_metric_has_statistics() -> None:
    assert {"bleu", "sacrebleu", "rouge"} <= set(STATS_METRICS)


@pytest.mark.parametrize("name", STATS_METRICS)
def test_map_with_two_processes_reduces_to_the_corpus_result(name: str, corpora) -> None:
    metric = load_metric(name)
    for corpus, (predictions, references) in corpora.items():
        dataset = datasets.Dataset.from_dict({"prediction": predictions, "references": references})
        stats = dataset.map(
            lambda batch: metric.example_stats(batch["prediction"], batch["references"]),
            batched=True,
            batch_size=300,
            num_proc=2,
            remove_columns=["prediction", "references"],
        )
        assert len(stats) == len(predictions)
        assert metric.compute_from_stats(stats) == metric.compute(predictions=predictions, references=references), corpus
