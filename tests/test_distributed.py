"""Distributed evaluation across processes and engines gives the single-process result exactly:
evaluate's own distributed mode (num_process/process_id/experiment_id) in 2 torch.distributed (gloo)
processes, statistics gathered with torch.distributed, and per-partition statistics computed by Ray tasks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import METRICS_DIR, load_metric

import torch

CORPUS_METRICS = ("bleu", "sacrebleu", "rouge")


def _rank_main(rank: int, world: int, name: str, predictions, references, out_dir: str, init_file: str) -> None:
    import evaluate
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    size = (len(predictions) + world - 1) // world
    shard = slice(rank * size, (rank + 1) * size)
    metric = evaluate.load(
        str(METRICS_DIR / name), num_process=world, process_id=rank, experiment_id=f"distributed-{name}"
    )
    metric.stream_batch_size = 128  # process 0 streams both processes' caches in batches straddling the files
    for start in range(shard.start, min(shard.stop, len(predictions)), 100):
        stop = min(start + 100, shard.stop)
        metric.add_batch(predictions=predictions[start:stop], references=references[start:stop])
    result = metric.compute()
    totals = metric.reduce_stats(metric.example_stats(predictions[shard], references[shard]))
    gathered = [None] * world
    dist.all_gather_object(gathered, totals)
    merged = metric.compute_from_stats(gathered)
    Path(out_dir, f"{rank}.json").write_text(json.dumps({"evaluate": result, "gathered": merged}))
    dist.barrier()
    dist.destroy_process_group()


@pytest.mark.loopback
@pytest.mark.filterwarnings("ignore:rouge. rougeLsum splits sentences")  # one segment per line: expected
@pytest.mark.parametrize("name", CORPUS_METRICS)
def test_two_processes_equal_one(name: str, wmt17, tmp_path: Path) -> None:
    references, systems = wmt17
    predictions = systems["online-B.0"][:1500]
    references = [[reference] for reference in references[:1500]]
    torch.multiprocessing.spawn(
        _rank_main,
        args=(2, name, predictions, references, str(tmp_path), str(tmp_path / "rendezvous")),
        nprocs=2,
        join=True,
    )
    single = json.loads(json.dumps(load_metric(name).compute(predictions=predictions, references=references)))
    rank0 = json.loads((tmp_path / "0.json").read_text())
    rank1 = json.loads((tmp_path / "1.json").read_text())
    assert rank0["evaluate"] == single, "evaluate's distributed mode: process 0 gets the full-corpus result"
    assert rank1["evaluate"] is None
    assert rank0["gathered"] == rank1["gathered"] == single


def _model_rank_main(rank: int, world: int, name: str, predictions, references, out_dir: str, init_file: str) -> None:
    import evaluate
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    metric = evaluate.load(str(METRICS_DIR / name))
    own = list(range(rank, len(predictions), world))
    result = metric.compute(predictions=[predictions[i] for i in own], references=[references[i] for i in own])
    per_example = {key: value for key, value in result.items() if isinstance(value, list)}
    gathered = [None] * world
    dist.all_gather_object(gathered, (own, per_example))
    merged: dict = {key: [None] * len(predictions) for key in per_example}
    for indices, values in gathered:
        for key, column in values.items():
            for index, value in zip(indices, column):
                merged[key][index] = value
    if rank == 0:
        Path(out_dir, "merged.json").write_text(json.dumps(merged))
    dist.barrier()
    dist.destroy_process_group()


@pytest.mark.loopback
@pytest.mark.parametrize("name", ["bertscore", "semantic_similarity"])
def test_model_metrics_score_shards_per_process_and_gather(name: str, wmt17, tmp_path: Path) -> None:
    """Each process scores its own (interleaved) shard with its own model copy; gathered per-example scores
    equal the single-process ones."""
    references, systems = wmt17
    predictions, references = systems["online-B.0"][:48], references[:48]
    torch.multiprocessing.spawn(
        _model_rank_main,
        args=(2, name, predictions, references, str(tmp_path), str(tmp_path / "rendezvous")),
        nprocs=2,
        join=True,
    )
    merged = json.loads((tmp_path / "merged.json").read_text())
    single = load_metric(name).compute(predictions=predictions, references=references)
    assert merged, "the metric returns per-example lists"
    for key, values in merged.items():
        assert values == pytest.approx(single[key], abs=1e-6), key


@pytest.mark.loopback
def test_ray_partitions_merge_to_the_corpus_score(wmt17) -> None:
    import ray
    references, systems = wmt17
    predictions = systems["uedin-nmt.4722"]
    folder = str(METRICS_DIR / "sacrebleu")

    @ray.remote
    def partition_totals(part_predictions, part_references):
        import evaluate

        metric = evaluate.load(folder)
        return metric.reduce_stats(metric.example_stats(part_predictions, part_references))

    bounds = [0, 751, 1502, 2253, len(predictions)]
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        totals = ray.get(
            [partition_totals.remote(predictions[a:b], references[a:b]) for a, b in zip(bounds, bounds[1:])]
        )
    finally:
        ray.shutdown()
    metric = load_metric("sacrebleu")
    assert metric.compute_from_stats(totals) == metric.compute(predictions=predictions, references=references)
