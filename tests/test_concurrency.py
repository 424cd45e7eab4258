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


# (metric, whether every process uses the default experiment id) of each case; each process runs the cases in this
# order, so the processes use each case's module at the same time
CASES = {"sacrebleu-default experiment id": ("sacrebleu", True), "rouge-default experiment id": ("rouge", True),
         "rouge-own ids": ("rouge", False)}


def _work(worker: int, out_dir: str) -> None:
    import evaluate

    for case, (name, shared_id) in CASES.items():
        arguments = {} if shared_id else {"experiment_id": f"run-{worker}"}
        module = evaluate.load(str(METRICS_DIR / name), **arguments)
        results = []
        for iteration in range(ITERATIONS):
            predictions, references = _corpus(worker, iteration)
            if iteration % 2:
                for start in range(0, len(predictions), 7):
                    module.add_batch(predictions=predictions[start : start + 7],
                                     references=references[start : start + 7])
                results.append(module.compute())
            else:
                results.append(module.compute(predictions=predictions, references=references))
        Path(out_dir, f"{case} {worker}.json").write_text(json.dumps(results), encoding="utf-8")


@pytest.fixture(scope="module")
def results_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of each process's results (``<case> <worker>.json``), from PROCESSES processes started at once."""
    folder = tmp_path_factory.mktemp("concurrency")
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_work, args=(worker, str(folder))) for worker in range(PROCESSES)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=600)
        assert process.exitcode == 0, f"a worker failed (exit code {process.exitcode})"
    return folder


@pytest.mark.parametrize("case", list(CASES))
def test_processes_at_once_get_their_own_results(case: str, results_folder: Path) -> None:
    metric = load_metric(CASES[case][0])
    for worker in range(PROCESSES):
        results = json.loads((results_folder / f"{case} {worker}.json").read_text(encoding="utf-8"))
        assert len(results) == ITERATIONS
        for iteration, result in enumerate(results):
            predictions, references = _corpus(worker, iteration)
            expected = json.loads(json.dumps(metric.compute(predictions=predictions, references=references)))
            assert result == expected, (worker, iteration)
