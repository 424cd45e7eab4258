"""Every metric with per-example sufficient statistics, on both real corpora: the statistics columns that
datasets.Dataset.map writes reduce to exactly the one-shot corpus result. Text metrics are mapped with 2
processes; model-based metrics (those that vendor the model loader) in-process (num_proc=None; datasets 5
starts a pool even for num_proc=1) on a subset, since forking a
process whose PyTorch thread pool is running can deadlock the child (map in-process, or one process per
device as in tests/test_distributed.py)."""

from __future__ import annotations

import gzip
import json
import math

import datasets
import pytest

from conftest import METRICS_DIR, load_metric, metric_names

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


def uses_a_model(name: str) -> bool:
    return (METRICS_DIR / name / "core_models.py").is_file()


@pytest.mark.parametrize("name", STATS_METRICS)
def test_map_reduces_to_the_corpus_result(name: str, corpora) -> None:
    metric = load_metric(name)
    num_proc, size = (None, 64) if uses_a_model(name) else (2, None)
    for corpus, (predictions, references) in corpora.items():
        predictions, references = predictions[:size], references[:size]
        dataset = datasets.Dataset.from_dict({"prediction": predictions, "references": references})
        stats = dataset.map(
            lambda batch: metric.example_stats(batch["prediction"], batch["references"]),
            batched=True,
            batch_size=300,
            num_proc=num_proc,
            remove_columns=["prediction", "references"],
        )
        assert len(stats) == len(predictions)
        assert_same_corpus_result(
            metric.compute_from_stats(stats), metric.compute(predictions=predictions, references=references), corpus
        )


def assert_same_corpus_result(from_stats: dict, one_shot: dict, context: str) -> None:
    """Every output of compute_from_stats equals compute's; where compute returns per-example scores (model
    metrics), the statistics give their exact mean."""
    compared = 0
    for key, value in from_stats.items():
        if key not in one_shot:
            continue
        expected = one_shot[key]
        if isinstance(expected, list) and not isinstance(value, list):
            expected = math.fsum(expected) / len(expected)
        assert value == expected, f"{context}: {key}"
        compared += 1
    assert compared, f"{context}: no output in common"
