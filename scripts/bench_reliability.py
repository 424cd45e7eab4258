#!/usr/bin/env python3
"""Before/after figures of the reliability fixes, each measured in fresh processes, for any checkout.

    .venv/bin/python scripts/bench_reliability.py caches [--root DIR]      # resident memory the caches keep
    .venv/bin/python scripts/bench_reliability.py small-compute [--root DIR]  # time of a compute of a few pairs

`caches`: sacreBLEU on 1,200 document pairs of 5,000 tokens (CNN/DailyMail summaries joined into documents),
resident memory (RSS) of the process before and after `compute` returns. `small-compute`: milliseconds per
`compute(predictions=..., references=...)` of 10, 100 and 1,000 WMT17 pairs, with the module as it is and
through evaluate's own `compute` (its Arrow cache written to disk, locked, read back and deleted). `--root`
points at another checkout (e.g. a `git worktree` of an older commit) to measure it with this environment.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import project

CHILD = r"""
import gc, json, os, statistics, sys, time
root, mode = sys.argv[1], sys.argv[2]
import evaluate
from evaluate.module import EvaluationModule

def rss_mib():
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024

data = json.loads(sys.stdin.read())
module = evaluate.load(os.path.join(root, "metrics", "sacrebleu"))
if mode == "caches":
    module.compute(predictions=["warm up the module"], references=["warm up the module"])
    gc.collect()
    before = rss_mib()
    start = time.perf_counter()
    module.compute(predictions=data["predictions"], references=data["references"])
    seconds = time.perf_counter() - start
    gc.collect()
    print(json.dumps({"before": before, "after": rss_mib(), "seconds": seconds}))
else:
    out = {}
    for size in (10, 100, 1000):
        predictions, references = data["predictions"][:size], data["references"][:size]
        for label, call in (("module", lambda: module.compute(predictions=predictions, references=references)),
                            ("evaluate", lambda: EvaluationModule.compute(module, predictions=predictions,
                                                                         references=references))):
            call()
            times = []
            for _ in range(15):
                start = time.perf_counter()
                call()
                times.append(time.perf_counter() - start)
            out[f"{label}-{size}"] = 1000 * statistics.median(times)
    print(json.dumps(out))
"""


def documents(count: int, tokens: int) -> tuple[list[str], list[str]]:
    records = project.cnndm()
    texts = [record["reference"].replace("\n", " ") for record in records]
    outputs = [record["pointer-gen-cov"].replace("\n", " ") for record in records]
    return _join(outputs, count, tokens), _join(texts, count, tokens)


def _join(texts: list[str], count: int, tokens: int) -> list[str]:
    joined, current, length, index = [], [], 0, 0
    while len(joined) < count:
        text = texts[index % len(texts)]
        index += 1
        current.append(text)
        length += len(text.split())
        if length >= tokens:
            joined.append(" ".join(current))
            current, length = [], 0
    return joined


def run_child(root: Path, mode: str, data: dict) -> dict:
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_MODULES_CACHE": tempfile.mkdtemp(),
                   "HF_METRICS_CACHE": tempfile.mkdtemp()}
    result = subprocess.run([sys.executable, "-c", CHILD, str(root), mode], input=json.dumps(data), text=True,
                            capture_output=True, env=environment, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=("caches", "small-compute"))
    parser.add_argument("--root", type=Path, default=project.ROOT)
    parser.add_argument("--repeats", type=int, default=3)
    arguments = parser.parse_args()
    if arguments.mode == "caches":
        predictions, references = documents(1200, 5000)
        data = {"predictions": predictions, "references": references}
        runs = [run_child(arguments.root, "caches", data) for _ in range(arguments.repeats)]
        kept = statistics.median(run["after"] - run["before"] for run in runs)
        seconds = statistics.median(run["seconds"] for run in runs)
        print(f"{arguments.root}: 1,200 pairs of ~5,000 tokens: RSS kept after compute {kept:,.0f} MiB "
              f"(median of {len(runs)} fresh processes), compute {seconds:.1f} s")
    else:
        references, systems = project.wmt17()
        data = {"predictions": systems["online-B.0"][:1000], "references": references[:1000]}
        runs = [run_child(arguments.root, "small-compute", data) for _ in range(arguments.repeats)]
        for key in runs[0]:
            print(f"{key:>14}: {statistics.median(run[key] for run in runs):8.1f} ms per compute")
    gc.collect()


if __name__ == "__main__":
    main()
