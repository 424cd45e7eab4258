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

--size bleurt-20 builds, instead, a checkpoint of BLEURT-20's architecture with random weights (RemBERT's
sizes: 32 layers of width 1152, 18 heads, feed-forward 4608, embeddings of 256 projected; 2.3 GB of fp32 weights
like the released pytorch_model.bin; the sentencepiece vocabulary is trained here, so it is smaller than
BLEURT-20's and cuts texts into somewhat more tokens); --layers overrides the number of layers. On a 2-core CPU
such a model scores tens of tokens per second, so run a subset (e.g. --systems 2 --segments 40 --repeats 1) and
extrapolate from the tokens per second printed.

Also prints the tokens per second of each side (the real tokens of the pairs, padding excluded) and the fraction
of the machine's matrix-multiply rate on the model's own GEMM shapes (``gemm_rate``, measured in the same run)
that our forward passes reach.

    python scripts/bench_bleurt.py [--systems 3] [--segments 1000] [--batch-size 16] [--threads 2] [--repeats 3]
                                   [--size tiny|bleurt-20] [--layers N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import project

# BLEURT-20 is RemBERT fine-tuned (bleurt-pytorch's BleurtConfig names): RemBERT's published sizes.
SIZES = {
    "tiny": {},
    "bleurt-20": {"hidden_size": 1152, "num_hidden_layers": 32, "num_attention_heads": 18,
                  "intermediate_size": 4608, "embedding_size": 256,
                  "initializer_range": 0.02},  # BERT's: the tiny one's 0.2 over 32 layers makes scores chaotic
}


def our_utilisation(checkpoint: Path, pairs: tuple[list[str], list[str]], batch_size: int, seconds: dict[str, float]
                    ) -> None:
    """Tokens/s of each side and the fraction of the GEMM rate of our model's shapes it reaches."""
    import torch
    from gemm_rate import flops_per_row, gemm_rate, linear_shapes, utilisation_line

    from metrics._core.core_bleurt import load_checkpoint, resolve_checkpoint
    from metrics._core.core_bleurt_tokenize import pair_ids, tokenize_texts

    source = resolve_checkpoint("bleurt", str(checkpoint))
    loaded = load_checkpoint("bleurt", source, torch.device("cpu"), torch.float32)  # cached: the metric's own
    references, candidates = pairs
    texts = list(dict.fromkeys(references + candidates))
    ids = dict(zip(texts, tokenize_texts(loaded.tokenizer, texts), strict=True))
    limit = source.config.max_position_embeddings
    lengths = [len(pair_ids(loaded.tokenizer, ids[r], ids[c], limit)[0]) for r, c in zip(*pairs, strict=True)]
    tokens, mean_length = sum(lengths), sum(lengths) / len(lengths)
    config = source.config
    shapes = linear_shapes(loaded.model.layers, max(8, round(batch_size * mean_length / 8) * 8))
    attention = 4 * config.num_hidden_layers * config.hidden_size * mean_length  # scores and context, all keys
    flops = flops_per_row(shapes) + attention
    rate = gemm_rate(shapes)
    print(rate.describe())
    print(f"{tokens} tokens in {len(lengths)} pairs (mean {mean_length:.1f}); model {flops / 1e9:.2f} GFLOP/token; "
          f"load average {os.getloadavg()[0]:.2f}")
    for name, value in seconds.items():
        print("  " + utilisation_line(name, tokens / value, flops, rate))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--systems", type=int, default=3)
    parser.add_argument("--segments", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--size", choices=sorted(SIZES), default="tiny")
    parser.add_argument("--layers", type=int, default=None, help="number of layers (default: the size's)")
    args = parser.parse_args()
    sizes = dict(SIZES[args.size])
    if args.layers is not None:
        sizes["num_hidden_layers"] = args.layers

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
        folder = Path(work) / f"{args.size}-bleurt"
        build_checkpoint(folder, references[:3000], sizes=sizes, vocab_size=1000 if args.size == "tiny" else 6000)
        print(f"checkpoint {args.size} {sizes or '(2 layers of width 32)'} built", flush=True)
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
            print(f"run: bleurt-pytorch {theirs_times[-1]:.2f} s, ours {ours_times[-1]:.2f} s", flush=True)
        our_utilisation(folder, (refs, predictions), args.batch_size,
                        {"bleurt-pytorch": statistics.median(theirs_times), "ours": statistics.median(ours_times)})
    ours_median, theirs_median = statistics.median(ours_times), statistics.median(theirs_times)
    difference = max(abs(a - b) for a, b in zip(ours_scores, theirs_scores, strict=True))
    print(f"bleurt-pytorch 0.0.1: median {theirs_median:.3f} s  (runs: {', '.join(f'{t:.3f}' for t in theirs_times)})")
    print(f"ours:                 median {ours_median:.3f} s  (runs: {', '.join(f'{t:.3f}' for t in ours_times)})")
    print(f"ratio (bleurt-pytorch / ours): {theirs_median / ours_median:.2f}x; "
          f"max abs score difference {difference:.3g}")


if __name__ == "__main__":
    main()
