#!/usr/bin/env python3
"""Score --pairs WMT17-like pairs with sacreBLEU on Ray Data, on Spark local mode and in one process.

The 16 WMT17 en-de systems' outputs, each with the reference (48,064 pairs), are cycled up to --pairs and written
as JSON lines in --shards files; each path reads those files and scores them, in a fresh process of its own:

- one process: the files read into two lists, then ``compute`` (tokenization and statistics in one process);
- Ray Data: ``ray.init(num_cpus=--workers)``, ``read_json`` -> ``map_batches`` of ``example_stats`` (tasks;
  each worker process imports the metric once and keeps it for its later tasks) -> ``reduce_stats`` of each
  batch as it streams to the driver -> ``compute_from_stats`` (the README's recipe, "Where to use it");
- Ray Data, no reservation: the same with ``DataContext.op_resource_reservation_enabled = False`` (Ray Data
  plans the read and the map as two operators and reserves CPUs for each: on 2 CPUs the map then runs about one
  task at a time);
- Spark: ``local[--workers]``, ``spark.read.json`` -> ``mapInPandas`` of ``example_stats`` -> one
  ``reduce_stats`` record per partition (``rdd.mapPartitions``) -> ``compute_from_stats``;
- with ``--worker-totals``, also each engine with the totals made in the workers (one ``reduce_stats``
  record per batch comes back instead of every example's statistics; sacreBLEU's totals are flat integers).

Every path must give the same result (``==``). Printed per path: the wall time of the scoring (files to result;
engine start-up, i.e. ``ray.init`` or the Spark session, shown apart), the ratio of the one-process time to it
(above 1: the engine is faster), and peak memory: the driver's max RSS, each worker process's max RSS as the
worker itself reports it (``getrusage`` in the function that computes the statistics), the RSS sampled (every
0.25 s) of the engine's other Python workers (Ray's idle and helper workers, Spark's daemon), and the largest
RSS sampled of the engine's other processes (raylet, GCS, dashboard; Spark's JVM).

The cycled corpus repeats each pair about --pairs / 48,064 times: every process's tokenization cache (128 MiB
per tokenizer) then serves most segments from the second cycle on, in every path alike.

    .venv/bin/python scripts/bench_engines.py [--pairs 1000000] [--workers 2] [--shards 8] [--worker-totals]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from itertools import cycle, islice
from pathlib import Path
from typing import Any

import project

METRIC = "sacrebleu"
PATHS = ("one process", "Ray Data", "Ray Data, no reservation", "Spark")


def write_corpus(folder: Path, pairs: int, shards: int) -> None:
    """``pairs`` pairs (the 16 systems' outputs with the reference, cycled) as JSON lines in ``shards`` files."""
    references, systems = project.wmt17()
    source = [(hypothesis, reference) for outputs in systems.values()
              for hypothesis, reference in zip(outputs, references, strict=True)]
    stream = islice(cycle(source), pairs)
    per_shard = -(-pairs // shards)
    for shard in range(shards):
        with open(folder / f"pairs-{shard:03d}.jsonl", "w", encoding="utf-8") as handle:
            for prediction, reference in islice(stream, per_shard):
                handle.write(json.dumps({"prediction": prediction, "reference": reference}, ensure_ascii=False))
                handle.write("\n")


def max_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class ProcessSampler:
    """The largest RSS seen of each descendant process of this one, sampled every ``interval`` seconds."""

    def __init__(self, interval: float = 0.25) -> None:
        import psutil

        self.me = psutil.Process()
        self.interval = interval
        self.peaks: dict[int, tuple[float, str]] = {}
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        import psutil

        while not self.stopped.wait(self.interval):
            for process in self.me.children(recursive=True):
                try:
                    rss = process.memory_info().rss / 2**20
                    name = " ".join(process.cmdline())[:200] or process.name()
                except psutil.Error:
                    continue
                if rss > self.peaks.get(process.pid, (0.0, ""))[0]:
                    self.peaks[process.pid] = (rss, name)

    def stop(self) -> dict[int, tuple[float, str]]:
        self.stopped.set()
        self.thread.join()
        return self.peaks


# -- what runs in the workers ------------------------------------------------------------------------------------


def stats_of(predictions: Any, references: Any, totals: bool) -> dict[str, Any]:
    """Statistics of a batch (per example, or the batch's totals as one row), with the worker's pid and max RSS."""
    import evaluate_text_metrics

    metric = evaluate_text_metrics.load(METRIC)
    stats = metric.example_stats(predictions, references)
    if totals:
        stats = {name: [value] for name, value in metric.reduce_stats(stats).items()}
    rows = len(stats["signature"])
    return {**stats, "pid": [os.getpid()] * rows, "max_rss_mib": [max_rss_mib()] * rows}


def ray_stats(batch: dict[str, Any], totals: bool) -> dict[str, Any]:
    return stats_of(batch["prediction"], batch["reference"], totals)


def spark_stats(frames: Any, totals: bool) -> Any:
    import pandas as pd

    for frame in frames:
        yield pd.DataFrame(stats_of(frame["prediction"], frame["reference"], totals))


def spark_partition_totals(rows: Any) -> list[tuple[dict[str, Any], dict[int, float]]]:
    """One partition's totals, and the max RSS of the workers that made its statistics and of this one."""
    import evaluate_text_metrics

    rows = list(rows)
    if not rows:
        return []
    workers = {os.getpid(): 0.0}
    for row in rows:
        workers[row["pid"]] = max(workers.get(row["pid"], 0.0), row["max_rss_mib"])
    totals = evaluate_text_metrics.load(METRIC).reduce_stats(rows)
    workers[os.getpid()] = max(workers[os.getpid()], max_rss_mib())
    return [(totals, workers)]


# -- the paths, each in its own process ----------------------------------------------------------------------------


def files_of(folder: Path) -> list[Path]:
    return sorted(folder.glob("pairs-*.jsonl"))


def run_one_process(folder: Path, workers: int, totals: bool) -> dict[str, Any]:
    import evaluate_text_metrics

    metric = evaluate_text_metrics.load(METRIC)
    start = time.perf_counter()
    predictions, references = [], []
    for path in files_of(folder):
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                predictions.append(record["prediction"])
                references.append(record["reference"])
    result = metric.compute(predictions=predictions, references=references)
    return {"seconds": time.perf_counter() - start, "startup": 0.0, "result": result, "workers": {}}


def run_ray(folder: Path, workers: int, totals: bool, reserve: bool = True) -> dict[str, Any]:
    import logging

    import evaluate_text_metrics
    import ray

    metric = evaluate_text_metrics.load(METRIC)
    start = time.perf_counter()
    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, configure_logging=False,
             logging_level=logging.ERROR)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    # Ray Data plans the read and the map as two operators and reserves part of the CPUs for each: on 2 CPUs the
    # map runs about one task at a time. Without the reservation, the map's tasks can take both CPUs.
    context.op_resource_reservation_enabled = reserve
    started = time.perf_counter()
    try:
        pairs = ray.data.read_json([str(path) for path in files_of(folder)])
        # tasks: a pool of actors holding every CPU would leave none to the read tasks, and the run would stall
        stats = pairs.map_batches(ray_stats, fn_kwargs={"totals": totals}, batch_size=10_000)
        worker_rss: dict[int, float] = {}
        parts = []
        for batch in stats.iter_batches(batch_size=None if totals else 100_000):
            for pid, rss in zip(batch["pid"].tolist(), batch["max_rss_mib"].tolist(), strict=True):
                worker_rss[pid] = max(worker_rss.get(pid, 0.0), rss)
            parts.append(batch if totals else metric.reduce_stats(batch))
        result = metric.compute_from_stats(parts)
        seconds = time.perf_counter() - started
    finally:
        ray.shutdown()
    return {"seconds": seconds, "startup": started - start, "result": result, "workers": worker_rss}


def run_spark(folder: Path, workers: int, totals: bool) -> dict[str, Any]:
    import pandas as pd

    import evaluate_text_metrics
    from pyspark.sql import SparkSession

    metric = evaluate_text_metrics.load(METRIC)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    start = time.perf_counter()
    spark = (SparkSession.builder.master(f"local[{workers}]").appName("bench_engines")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.ui.enabled", "false").config("spark.driver.memory", "2g").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    started = time.perf_counter()
    try:
        sample = stats_of(["a"], ["a"], totals)
        schema = spark.createDataFrame(pd.DataFrame(sample)).schema
        pairs = spark.read.json([str(path) for path in files_of(folder)])
        stats = pairs.mapInPandas(lambda frames: spark_stats(frames, totals), schema)
        worker_rss: dict[int, float] = {}
        if totals:
            parts = stats.collect()
            for row in parts:
                worker_rss[row["pid"]] = max(worker_rss.get(row["pid"], 0.0), row["max_rss_mib"])
        else:
            parts = []
            for part, rss_of in stats.rdd.mapPartitions(spark_partition_totals).collect():
                parts.append(part)
                for pid, rss in rss_of.items():
                    worker_rss[pid] = max(worker_rss.get(pid, 0.0), rss)
        result = metric.compute_from_stats(parts)
        seconds = time.perf_counter() - started
    finally:
        spark.stop()
    return {"seconds": seconds, "startup": started - start, "result": result, "workers": worker_rss}


RUNNERS = {"one process": run_one_process, "Ray Data": run_ray, "Spark": run_spark,
           "Ray Data, no reservation": functools.partial(run_ray, reserve=False)}


def child(path: str, folder: Path, workers: int, totals: bool) -> int:
    sampler = ProcessSampler()
    outcome = RUNNERS[path](folder, workers, totals)
    peaks = sampler.stop()
    others = [(rss, name) for pid, (rss, name) in peaks.items() if pid not in outcome["workers"]]
    outcome["other_workers_mib"] = sorted((rss for rss, name in others if is_worker(name)), reverse=True)
    outcome["engine_mib"] = max(((rss, name) for rss, name in others if not is_worker(name)), default=(0.0, ""))
    outcome["driver_mib"] = max_rss_mib()
    print(json.dumps(outcome))
    return 0


def main() -> int:
    parser = project.bench_parser(__doc__, pairs=1_000_000, workers=2, shards=8)
    parser.add_argument("--worker-totals", action="store_true",
                        help="also run each engine with one reduce_stats record per batch made in the workers")
    parser.add_argument("--paths", nargs="+", default=list(PATHS), choices=PATHS)
    parser.add_argument("--child", choices=PATHS, help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--totals", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        return child(arguments.child, Path(arguments.folder), arguments.workers, arguments.totals)
    runs = [(path, False) for path in arguments.paths]
    if arguments.worker_totals:
        runs += [(path, True) for path in arguments.paths if path in ("Ray Data", "Spark")]
    with tempfile.TemporaryDirectory(prefix="bench-engines-") as folder:
        started = time.perf_counter()
        write_corpus(Path(folder), arguments.pairs, arguments.shards)
        print(f"{arguments.pairs:,} WMT17 pairs (16 systems x 3,004 segments, cycled) in {arguments.shards} JSONL "
              f"files ({sum(p.stat().st_size for p in files_of(Path(folder))) / 2**20:,.0f} MiB, written in "
              f"{time.perf_counter() - started:.0f} s); {METRIC}; {arguments.workers} workers; {os.cpu_count()} "
              f"CPUs on this machine\n", flush=True)
        outcomes: dict[str, dict[str, Any]] = {}
        for path, totals in runs:
            label = f"{path} (worker totals)" if totals else path
            command = [sys.executable, __file__, "--child", path, "--folder", folder,
                       "--workers", str(arguments.workers)] + (["--totals"] if totals else [])
            completed = subprocess.run(command, capture_output=True, text=True)
            if completed.returncode:
                print(f"{label}: failed\n{completed.stderr[-3000:]}", file=sys.stderr)
                return 1
            outcomes[label] = json.loads(completed.stdout.strip().splitlines()[-1])
            print(f"{label}: {outcomes[label]['seconds']:.1f} s", flush=True)
    baseline = outcomes.get("one process", {}).get("seconds")
    print("\n| path | scoring s | start-up s | one process / path | driver peak MiB | "
          "peak MiB of each worker that scored | other worker processes (sampled) | largest engine process |")
    print("|---|---|---|---|---|---|---|---|")
    for label, outcome in outcomes.items():
        ratio = f"{baseline / outcome['seconds']:.2f}x" if baseline else "-"
        workers = ", ".join(f"{rss:,.0f}" for _, rss in sorted(outcome["workers"].items())) or "-"
        engine_rss, engine_name = outcome["engine_mib"]
        engine = f"{engine_rss:,.0f} ({short_name(engine_name)})" if engine_rss else "-"
        other = outcome["other_workers_mib"]
        others = f"{len(other)}, up to {other[0]:,.0f}" if other else "-"
        print(f"| {label} | {outcome['seconds']:.1f} | {outcome['startup']:.1f} | {ratio} | "
              f"{outcome['driver_mib']:,.0f} | {workers} | {others} | {engine} |")
    results = {json.dumps(outcome["result"], sort_keys=True) for outcome in outcomes.values()}
    print(f"\nscore {next(iter(outcomes.values()))['result']['score']!r}; identical results on every path: "
          f"{len(results) == 1}")
    return 0 if len(results) == 1 else 1


def is_worker(command: str) -> bool:
    """A Python worker process of the engine (Ray's workers rename themselves ray::...; Spark's are forked from
    pyspark.daemon)."""
    return command.startswith("ray::") or "default_worker.py" in command or "pyspark.daemon" in command \
        or "pyspark.worker" in command


def short_name(command: str) -> str:
    """A process's command line, shortened to what names it (raylet, gcs_server, java, a worker)."""
    for name in ("raylet", "gcs_server", "java", "plasma", "dashboard", "log_monitor", "pyspark.daemon", "ray::"):
        if name in command:
            return name
    words = command.split()
    scripts = [word.rsplit("/", 1)[-1] for word in words[1:] if word.endswith(".py")]
    return scripts[0] if scripts else (words[0].rsplit("/", 1)[-1] if words else "?")


if __name__ == "__main__":
    sys.exit(main())
