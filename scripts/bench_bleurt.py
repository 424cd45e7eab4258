#!/usr/bin/env python3
"""Benchmark: our BLEURT module end to end against bleurt-pytorch 0.0.1's scoring loop, on the CPU.

Both score the same 3,000 WMT17 newstest2017 (reference, candidate) pairs (the first --segments segments of
--systems systems, each against the one reference, so references repeat as they do in practice) with the same
tiny BLEURT-20-style checkpoint, which bleurt-pytorch builds and saves offline (`tests/bleurt_oracle_run.py`:
sentencepiece tokenizer, embedding projection, 2 layers of width 32). bleurt-pytorch runs in the oracle
environment (`.venv-oracles`, transformers<5) in a child process, as its README scores: in the given order,
--batch-size pairs a time padded to the batch's longest, `model.eval()`, `torch.no_grad()`; its time is that of
the scoring loop only (tokenization and model, not loading). Ours is `evaluate.load("metrics/bleurt").compute`
with the same batch size, after a first call that loaded the checkpoint. Both use --threads CPU threads. Runs are
alternated; medians of --repeats runs are printed with the ratio (bleurt-pytorch / ours) and the largest score
difference. On a small machine shared with other jobs, `--threads 1` gives stable timings: with 2 threads each
side's OpenMP threads wait on the other jobs' and single runs vary several-fold.

    python scripts/bench_bleurt.py [--systems 3] [--segments 1000] [--batch-size 16] [--threads 2] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import project


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--systems", type=int, default=3)
    parser.add_argument("--segments", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    project.use_test_helpers()
    import torch

    from bleurt_oracle import build_checkpoint, oracle_scores
    from conftest import read_lines

    torch.set_num_threads(args.threads)
    references = read_lines(project.WMT17 / "newstest2017.ref.de")
    systems = {path.stem: read_lines(path) for path in sorted((project.WMT17 / "systems").glob("*.de"))}
    predictions, refs = [], []
    for name in sorted(systems)[:args.systems]:
        predictions += systems[name][:args.segments]
        refs += references[:args.segments]
    print(f"{len(predictions)} pairs ({len(set(zip(refs, predictions)))} distinct), batch size {args.batch_size}, "
          f"{args.threads} threads, CPU")

    with tempfile.TemporaryDirectory(prefix="bench-bleurt-") as work:
        folder = Path(work) / "tiny-bleurt-20"
        build_checkpoint(folder, references[:3000])
        import evaluate

        metric = evaluate.load(str(project.ROOT / "metrics" / "bleurt"))
        metric.compute(predictions=predictions[:4], references=refs[:4], checkpoint=str(folder))  # loads the model
        ours_times, theirs_times = [], []
        ours_scores = theirs_scores = None
        for _ in range(args.repeats):
            theirs = oracle_scores(folder, refs, predictions, batch_size=args.batch_size, threads=args.threads)
            theirs_times.append(theirs["seconds"])
            theirs_scores = theirs["scores"]
            start = time.perf_counter()
            ours_scores = metric.compute(predictions=predictions, references=refs, checkpoint=str(folder),
                                         batch_size=args.batch_size)["scores"]
            ours_times.append(time.perf_counter() - start)
    ours_median, theirs_median = statistics.median(ours_times), statistics.median(theirs_times)
    difference = max(abs(a - b) for a, b in zip(ours_scores, theirs_scores, strict=True))
    print(f"bleurt-pytorch 0.0.1: median {theirs_median:.3f} s  (runs: {', '.join(f'{t:.3f}' for t in theirs_times)})")
    print(f"ours:                 median {ours_median:.3f} s  (runs: {', '.join(f'{t:.3f}' for t in ours_times)})")
    print(f"ratio (bleurt-pytorch / ours): {theirs_median / ours_median:.2f}x; "
          f"max abs score difference {difference:.3g}")


if __name__ == "__main__":
    main()
