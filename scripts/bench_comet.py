#!/usr/bin/env python3
"""Benchmark: our comet module against unbabel-comet 2.2.7's `predict` on the CPU, same checkpoint, one run.

unbabel-comet (in `.venv-oracles`, built by `scripts/setup-env tests`) builds a COMET-DA checkpoint on a randomly
initialised XLM-R encoder (--hidden-size, --layers; the tests' tiny model by default) and times its `predict` on
--segments WMT17 en-de examples (a system's outputs and the reference; English CNN/DailyMail sentences stand in for
the sources, which ../shared/data lacks) with batch sizes 16 (its default) and 64; our module scores the same
examples end to end through `evaluate.load(...).compute` (the model loaded by a warm-up call first, as
unbabel-comet's is before `predict`). A second case scores --systems systems on the same segments, so sources and
references repeat as they do when systems are compared. Prints the times, the ratio (the faster unbabel-comet run
/ ours) and the largest per-example difference.

    python scripts/bench_comet.py [--segments 3000] [--systems 4] [--hidden-size 32] [--layers 2] [--repeats 3]
"""

from __future__ import annotations

import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import project

ROOT = project.ROOT
ORACLE = ROOT / "tests" / "comet_oracle_run.py"
ORACLE_PYTHON = ROOT / ".venv-oracles" / "bin" / "python"
DATA = ROOT.parent / "shared" / "data"


def oracle(payload: dict, python: Path = ORACLE_PYTHON) -> object:
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONWARNINGS": "ignore"}
    done = subprocess.run([str(python), str(ORACLE)], input=json.dumps(payload), capture_output=True,
                          text=True, env=environment, check=False)
    if done.returncode != 0:
        raise SystemExit(f"unbabel-comet failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def examples(segments: int, systems: int) -> dict[str, list[str]]:
    wmt = DATA / "wmt17-en-de"
    references = project.read_lines(wmt / "newstest2017.ref.de")[:segments]
    with gzip.open(DATA / "cnndm-see2017" / "test.jsonl.gz", "rt", encoding="utf-8") as handle:
        sources = [json.loads(line)["reference"].split("\n")[0] for line, _ in zip(handle, range(segments))]
    corpus: dict[str, list[str]] = {"sources": [], "predictions": [], "references": []}
    for path in sorted((wmt / "systems").glob("*.de"))[:systems]:
        corpus["sources"] += sources
        corpus["predictions"] += project.read_lines(path)[:segments]
        corpus["references"] += references
    return corpus


def main() -> None:
    args = project.bench_parser(__doc__, segments=3000, systems=4, hidden_size=32, layers=2, repeats=3).parse_args()
    if not ORACLE_PYTHON.is_file():
        raise SystemExit(f"{ORACLE_PYTHON} is missing: run `bash scripts/setup-env tests`")
    os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    import evaluate

    folder = Path(tempfile.mkdtemp(prefix="bench-comet-"))
    texts = project.read_lines(DATA / "wmt17-en-de" / "newstest2017.ref.de")[:1000]
    oracle({"action": "steps", "steps": [
        {"action": "encoder", "folder": str(folder / "encoder"), "encoder_model": "XLM-RoBERTa", "texts": texts,
         "hidden_size": args.hidden_size, "layers": args.layers},
        {"action": "build", "folder": str(folder / "model"), "encoder": str(folder / "encoder"),
         "class_identifier": "regression_metric", "seed": 0,
         "hparams": {"hidden_sizes": [4 * args.hidden_size, args.hidden_size], "layer_transformation": "sparsemax"}},
    ]})
    comet = evaluate.load(str(ROOT / "metrics" / "comet"), str(folder / "model"))
    comet.compute(sources=["warm"], predictions=["up"], references=["call"])
    print(f"checkpoint: XLM-R hidden {args.hidden_size}, {args.layers} layers; torch threads "
          f"{__import__('torch').get_num_threads()}; {args.repeats} runs each, medians")
    for label, corpus in (("1 system", examples(args.segments, 1)),
                          (f"{args.systems} systems", examples(args.segments, args.systems))):
        samples = [{"src": s, "mt": p, "ref": r} for s, p, r in
                   zip(corpus["sources"], corpus["predictions"], corpus["references"])]
        theirs = {}
        for batch_size in (16, 64):
            result = oracle({"action": "predict", "checkpoint": str(folder / "model" / "checkpoints" / "model.ckpt"),
                             "sample_sets": [samples] * args.repeats, "batch_size": batch_size})["results"]
            theirs[batch_size] = (statistics.median(run["seconds"] for run in result), result[0]["scores"])
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            ours = comet.compute(**corpus)["scores"]
            times.append(time.perf_counter() - start)
        ours_time = statistics.median(times)
        best = min(seconds for seconds, _ in theirs.values())
        difference = max(abs(a - b) for a, b in zip(ours, theirs[16][1]))
        print(f"{label} x {args.segments} segments ({len(samples)} examples): unbabel-comet predict "
              f"{theirs[16][0]:.2f} s (batch 16), {theirs[64][0]:.2f} s (batch 64); ours {ours_time:.2f} s; "
              f"ratio {best / ours_time:.2f}x; max |difference| {difference:.2e}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
