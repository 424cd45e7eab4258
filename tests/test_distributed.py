"""Distributed evaluation across processes gives the single-process result exactly: evaluate's own distributed
mode (num_process/process_id/experiment_id) in 2 torch.distributed (gloo) processes, and statistics gathered with
torch.distributed. Each group of tests spawns its 2 processes once, which score every metric of the group in turn.
(Ray and Spark: test_scale_out.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import METRICS_DIR, load_metric

import torch

CORPUS_METRICS = ("bleu", "sacrebleu", "rouge")


def _rank_main(rank: int, world: int, names: tuple[str, ...], predictions, references, out_dir: str,
               init_file: str) -> None:
    import evaluate
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    size = (len(predictions) + world - 1) // world
    shard = slice(rank * size, (rank + 1) * size)
    for name in names:
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
        Path(out_dir, f"{name} {rank}.json").write_text(json.dumps({"evaluate": result, "gathered": merged}))
        dist.barrier()
    dist.destroy_process_group()


def _wmt17_pairs(wmt17, count: int) -> tuple[list[str], list[str]]:
    references, systems = wmt17
    return systems["online-B.0"][:count], references[:count]


@pytest.fixture(scope="module")
def corpus_results(wmt17, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of each metric's results in each of 2 processes (``<metric> <rank>.json``): one spawn of 2
    processes scores every metric of CORPUS_METRICS in turn."""
    folder = tmp_path_factory.mktemp("distributed")
    predictions, references = _wmt17_pairs(wmt17, 1500)
    torch.multiprocessing.spawn(
        _rank_main,
        args=(2, CORPUS_METRICS, predictions, [[reference] for reference in references], str(folder),
              str(folder / "rendezvous")),
        nprocs=2,
        join=True,
    )
    return folder


@pytest.mark.loopback
@pytest.mark.filterwarnings("ignore:rouge. rougeLsum splits sentences")  # one segment per line: expected
@pytest.mark.parametrize("name", CORPUS_METRICS)
def test_two_processes_equal_one(name: str, wmt17, corpus_results: Path) -> None:
    predictions, references = _wmt17_pairs(wmt17, 1500)
    references = [[reference] for reference in references]
    single = json.loads(json.dumps(load_metric(name).compute(predictions=predictions, references=references)))
    rank0 = json.loads((corpus_results / f"{name} 0.json").read_text())
    rank1 = json.loads((corpus_results / f"{name} 1.json").read_text())
    assert rank0["evaluate"] == single, "evaluate's distributed mode: process 0 gets the full-corpus result"
    assert rank1["evaluate"] is None
    assert rank0["gathered"] == rank1["gathered"] == single


MODEL_METRICS = ("bertscore", "semantic_similarity")


def _model_rank_main(rank: int, world: int, names: tuple[str, ...], predictions, references, out_dir: str,
                     init_file: str) -> None:
    import evaluate
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    own = list(range(rank, len(predictions), world))
    for name in names:
        metric = evaluate.load(str(METRICS_DIR / name))
        result = metric.compute(predictions=[predictions[i] for i in own],
                                references=[references[i] for i in own])
        per_example = {key: value for key, value in result.items() if isinstance(value, list)}
        gathered = [None] * world
        dist.all_gather_object(gathered, (own, per_example))
        merged: dict = {key: [None] * len(predictions) for key in per_example}
        for indices, values in gathered:
            for key, column in values.items():
                for index, value in zip(indices, column):
                    merged[key][index] = value
        if rank == 0:
            Path(out_dir, f"{name} merged.json").write_text(json.dumps(merged))
        dist.barrier()
    dist.destroy_process_group()


@pytest.fixture(scope="module")
def model_results(wmt17, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of each model metric's gathered per-example scores (``<metric> merged.json``): one spawn of 2
    processes, each scoring its own interleaved shard with its own model copy, metric after metric."""
    folder = tmp_path_factory.mktemp("distributed-models")
    predictions, references = _wmt17_pairs(wmt17, 48)
    torch.multiprocessing.spawn(
        _model_rank_main,
        args=(2, MODEL_METRICS, predictions, references, str(folder), str(folder / "rendezvous")),
        nprocs=2,
        join=True,
    )
    return folder


@pytest.mark.loopback
@pytest.mark.parametrize("name", MODEL_METRICS)
def test_model_metrics_score_shards_per_process_and_gather(name: str, wmt17, model_results: Path) -> None:
    """Each process scores its own (interleaved) shard with its own model copy; gathered per-example scores
    equal the single-process ones."""
    predictions, references = _wmt17_pairs(wmt17, 48)
    merged = json.loads((model_results / f"{name} merged.json").read_text())
    single = load_metric(name).compute(predictions=predictions, references=references)
    assert merged, "the metric returns per-example lists"
    for key, values in merged.items():
        assert values == pytest.approx(single[key], abs=1e-6), key
