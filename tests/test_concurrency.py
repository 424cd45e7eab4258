"""Several processes using the same metric module at once: the default experiment id and cache directory, and
several experiment ids, with compute given its inputs (in memory) and after add_batch (evaluate's cache files).
No error, and every process gets the result of its own data: nothing lost, nothing mixed."""

from __future__ import annotations

import json
import multiprocessing
import random
from pathlib import Path

import pytest

from conftest import METRICS_DIR, load_metric
from generated_text import random_corpus

PROCESSES = 4
ITERATIONS = 6


def _corpus(worker: int, iteration: int) -> tuple[list[str], list[list[str]]]:
    return random_corpus(random.Random(1000 * worker + iteration), 25)


def _work(name: str, worker: int, experiment_id: str | None, out_dir: str) -> None:
    import evaluate

    arguments = {} if experiment_id is None else {"experiment_id": experiment_id}
    module = evaluate.load(str(METRICS_DIR / name), **arguments)
    results = []
    for iteration in range(ITERATIONS):
        predictions, references = _corpus(worker, iteration)
        if iteration % 2:
            for start in range(0, len(predictions), 7):
                module.add_batch(predictions=predictions[start : start + 7], references=references[start : start + 7])
            results.append(module.compute())
        else:
            results.append(module.compute(predictions=predictions, references=references))
    Path(out_dir, f"{worker}.json").write_text(json.dumps(results), encoding="utf-8")


@pytest.mark.parametrize(("name", "shared_id"), [("sacrebleu", True), ("rouge", True), ("rouge", False)],
                         ids=["sacrebleu-default experiment id", "rouge-default experiment id", "rouge-own ids"])
def test_processes_at_once_get_their_own_results(name: str, shared_id: bool, tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    processes = [
        context.Process(target=_work, args=(name, worker, None if shared_id else f"run-{worker}", str(tmp_path)))
        for worker in range(PROCESSES)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=600)
        assert process.exitcode == 0, f"a worker failed (exit code {process.exitcode})"
    metric = load_metric(name)
    for worker in range(PROCESSES):
        results = json.loads((tmp_path / f"{worker}.json").read_text(encoding="utf-8"))
        assert len(results) == ITERATIONS
        for iteration, result in enumerate(results):
            predictions, references = _corpus(worker, iteration)
            expected = json.loads(json.dumps(metric.compute(predictions=predictions, references=references)))
            assert result == expected, (worker, iteration)
