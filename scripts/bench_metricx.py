#!/usr/bin/env python3
"""Benchmark: our MetricX module end to end against the official google-research/metricx code, on the CPU.

Both score the same WMT17 newstest2017 examples (the first --segments segments of --systems systems against the
one reference, with other references as sources, MetricX-24 reference-based) with the same tiny checkpoint of
the released structure, which the official-code oracle builds offline (`tests/metricx_oracle_run.py`). The official
code runs in its own environment (tests/metricx-oracle-requirements.txt; `$METRICX_ORACLE_PYTHON` or
`.venv-metricx`, the repository at `$METRICX_OFFICIAL_REPO`) in a child process, as its README runs it: `get_dataset`
then `MT5ForRegression` one example at a time (`--batch_size 1`; its Trainer's default collator cannot batch
inputs of different lengths); its time is that of input preparation and scoring, not loading. Ours is
`evaluate.load("metrics/metricx").compute`, after a first call that loaded the checkpoint. Both use --threads CPU
threads. Runs are alternated; medians of --repeats runs are printed with the ratio (official / ours), the largest
score difference and the load average.

    python scripts/bench_metricx.py [--systems 2] [--segments 500] [--threads 1] [--repeats 3]
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import project


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=2)
    parser.add_argument("--segments", type=int, default=500)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    project.use_test_helpers()
    import torch

    from conftest import read_lines
    from learned_oracle import run_in
    from metricx_oracle import ORACLE_SCRIPT, build_and_score, oracle_venv, official_repo

    references = read_lines(project.WMT17 / "newstest2017.ref.de")
    systems = [read_lines(path) for path in sorted((project.WMT17 / "systems").glob("*.de"))][: args.systems]
    predictions = [line for system in systems for line in system[: args.segments]]
    refs = [references[index] for _ in systems for index in range(args.segments)]
    sources = [references[1000 + index] for _ in systems for index in range(args.segments)]
    work = Path(tempfile.mkdtemp(prefix="bench-metricx-"))
    atexit.register(shutil.rmtree, work, True)
    repo = official_repo(work / "official")
    folder, tokenizer = work / "tiny-metricx", work / "mt5-tokenizer"
    build_and_score(folder, tokenizer, references[:3000], repo, [])
    torch.set_num_threads(args.threads)
    import evaluate

    metric = evaluate.load(str(project.ROOT / "metrics" / "metricx"))
    options = {"checkpoint": str(folder), "tokenizer": str(tokenizer)}
    metric.compute(sources=sources[:4], predictions=predictions[:4], references=refs[:4], **options)  # loads
    payload = {"action": "time", "folder": str(folder), "tokenizer_folder": str(tokenizer),
               "official_repo": str(repo), "version": "metricx-24", "max_input_length": 1536, "sources": sources,
               "hypotheses": predictions, "references": refs, "threads": args.threads}
    theirs, ours, difference = [], [], 0.0
    for _ in range(args.repeats):
        official = run_in(oracle_venv(), ORACLE_SCRIPT, payload, cwd=work)
        theirs.append(official["seconds"])
        start = time.perf_counter()
        scores = metric.compute(sources=sources, predictions=predictions, references=refs, **options)["scores"]
        ours.append(time.perf_counter() - start)
        difference = max(difference, max(abs(a - b) for a, b in zip(scores, official["scores"], strict=True)))
    print(f"{len(predictions)} examples ({len(set(zip(sources, predictions, refs)))} distinct), threads "
          f"{args.threads}: official {statistics.median(theirs):.2f} s (runs "
          f"{'/'.join(f'{value:.2f}' for value in theirs)}), ours {statistics.median(ours):.2f} s (runs "
          f"{'/'.join(f'{value:.2f}' for value in ours)}): ratio official/ours "
          f"{statistics.median(theirs) / statistics.median(ours):.2f}x; max abs score difference {difference:.2g}; "
          f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
