#!/usr/bin/env python3
"""Score a million prediction/reference pairs (the real data repeated) with BLEU and ROUGE at scale.

Two paths, each in a fresh process so that its peak memory (max RSS) is its own:

- stream: ``evaluate.load(...).add_batch`` in batches of 10,000, then ``compute()`` (which reads evaluate's
  Arrow cache back in batches of ``stream_batch_size``, not as whole lists);
- with ``--with-evaluate-compute``, also the same ``add_batch`` calls followed by evaluate's own
  ``EvaluationModule.compute`` (every input read into Python lists), for comparison;
- map: a ``datasets.Dataset`` (built from a generator, so the texts live in Arrow files, not in memory)
  ``.map(example_stats, batched=True, num_proc=N)`` for N = 1 and 2, then ``compute_from_stats``
  (which reduces the statistics column-batch by column-batch).

Every path must give the same corpus result. Prints wall time, the 2-process speed-up and peak RSS.

    .venv/bin/python scripts/bench_scale.py --pairs 1000000 --metrics sacrebleu rouge [--with-evaluate-compute]
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import subprocess
import sys
import tempfile
import time
from itertools import cycle, islice
from pathlib import Path

from project import ROOT, SHARED_DATA as DATA, read_lines

BATCH = 10_000


def source_pairs(metric: str) -> list[tuple[str, list[str]]]:
    """The real pairs to repeat: WMT17 online-B for BLEU, CNN/DM pointer-gen-cov for ROUGE."""
    if metric == "rouge":
        with gzip.open(DATA / "cnndm-see2017" / "test.jsonl.gz", "rt", encoding="utf-8") as handle:
            records = [json.loads(line) for line in handle]
        return [(record["pointer-gen-cov"], [record["reference"]]) for record in records]
    references = read_lines(DATA / "wmt17-en-de" / "newstest2017.ref.de")
    hypotheses = read_lines(DATA / "wmt17-en-de" / "systems" / "online-B.0.de")
    return [(hypothesis, [reference]) for hypothesis, reference in zip(hypotheses, references, strict=True)]


def pairs(metric: str, count: int):
    return islice(cycle(source_pairs(metric)), count)


def max_rss_mib() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return own, children


def run_stream(metric_name: str, count: int, evaluate_compute: bool = False) -> dict:
    import evaluate

    metric = evaluate.load(str(ROOT / "metrics" / metric_name))
    start = time.perf_counter()
    iterator = pairs(metric_name, count)
    while batch := list(islice(iterator, BATCH)):
        metric.add_batch(predictions=[p for p, _ in batch], references=[r for _, r in batch])
    result = evaluate.EvaluationModule.compute(metric) if evaluate_compute else metric.compute()
    return {"seconds": time.perf_counter() - start, "result": result}


def run_map(metric_name: str, count: int, num_proc: int) -> dict:
    import datasets
    import evaluate

    metric = evaluate.load(str(ROOT / "metrics" / metric_name))
    with tempfile.TemporaryDirectory() as cache:

        def generate():
            for prediction, references in pairs(metric_name, count):
                yield {"prediction": prediction, "references": references}

        data = datasets.Dataset.from_generator(generate, cache_dir=cache)
        start = time.perf_counter()
        stats = data.map(
            lambda batch: metric.example_stats(batch["prediction"], batch["references"]),
            batched=True,
            batch_size=BATCH,
            num_proc=num_proc,
            remove_columns=["prediction", "references"],
            cache_file_name=str(Path(cache) / "stats.arrow"),
        )
        mapped = time.perf_counter() - start
        result = metric.compute_from_stats(stats)
        return {"seconds": time.perf_counter() - start, "map_seconds": mapped, "result": result}


def child(arguments: argparse.Namespace) -> int:
    if arguments.path in ("stream", "evaluate"):
        outcome = run_stream(arguments.metric, arguments.pairs, evaluate_compute=arguments.path == "evaluate")
    else:
        outcome = run_map(arguments.metric, arguments.pairs, arguments.num_proc)
    own, children = max_rss_mib()
    outcome.update(max_rss_mib=own, children_max_rss_mib=children)
    print(json.dumps(outcome))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=1_000_000)
    parser.add_argument("--metrics", nargs="+", default=["sacrebleu", "rouge"])
    parser.add_argument("--with-evaluate-compute", action="store_true",
                        help="also time add_batch followed by evaluate's own compute (reads every input into lists)")
    parser.add_argument("--path", choices=("stream", "evaluate", "map"), help=argparse.SUPPRESS)
    parser.add_argument("--metric", help=argparse.SUPPRESS)
    parser.add_argument("--num-proc", type=int, default=1, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.path:
        return child(arguments)
    if not DATA.is_dir():
        print(f"bench_scale: {DATA} not found (../shared/data beside the project)", file=sys.stderr)
        return 1
    print(f"{arguments.pairs:,} pairs per metric (real data repeated); peak memory = max RSS of the process "
          f"(and of its worker processes)\n")
    print(f"{'metric':10} {'path':22} {'seconds':>9} {'peak MiB':>9} {'workers MiB':>12}")
    for metric in arguments.metrics:
        outcomes = {}
        paths = [("stream add_batch", ["--path", "stream"])]
        if arguments.with_evaluate_compute:
            paths.append(("evaluate's compute()", ["--path", "evaluate"]))
        paths += [("map num_proc=1", ["--path", "map", "--num-proc", "1"]),
                  ("map num_proc=2", ["--path", "map", "--num-proc", "2"])]
        for label, extra in paths:
            command = [sys.executable, __file__, "--pairs", str(arguments.pairs), "--metric", metric, *extra]
            completed = subprocess.run(command, capture_output=True, text=True, check=True)
            outcome = json.loads(completed.stdout.strip().splitlines()[-1])
            outcomes[label] = outcome
            print(f"{metric:10} {label:22} {outcome['seconds']:9.1f} {outcome['max_rss_mib']:9.0f} "
                  f"{outcome['children_max_rss_mib']:12.0f}", flush=True)
        results = [json.dumps(outcome["result"], sort_keys=True) for outcome in outcomes.values()]
        speedup = outcomes["map num_proc=1"]["map_seconds"] / outcomes["map num_proc=2"]["map_seconds"]
        print(f"{metric:10} identical results on every path: {len(set(results)) == 1}; "
              f".map speed-up with 2 processes: {speedup:.2f}x\n")
        if len(set(results)) != 1:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
