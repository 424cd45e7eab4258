#!/usr/bin/env python3
"""Benchmark: our BLEURT module end to end against bleurt-pytorch 0.0.1's scoring loop, on the CPU.

Both score the same WMT17 newstest2017 (reference, candidate) pairs (the first --segments segments of --systems
systems, each against the one reference, so references repeat as they do in practice; 3,000 pairs by default) with
the same checkpoint, which bleurt-pytorch builds and saves offline (`tests/bleurt_oracle_run.py`'s ``build``:
sentencepiece tokenizer trained here, embedding projection). --shape names its architecture (``SHAPES``): ``tiny``
(the tests' 2 layers of width 32, the default), or, with random weights of BERT's initialisation, ``d12``
(BLEURT-20-D12: 12 layers of width 1024) or ``bleurt-20`` (BLEURT-20, RemBERT's sizes: 32 layers of width 1152,
2.3 GB of fp32 weights like the released pytorch_model.bin); --layers overrides the number of layers. The
sentencepiece vocabulary of the realistic shapes (6,000 pieces, trained on WMT17 references) is smaller than
BLEURT-20's and cuts texts into somewhat more tokens: the work per pair is larger, tokens per second comparable.

bleurt-pytorch runs in the oracle environment (`.venv-oracles`, transformers<5) in a child process, as its README
scores: in the given order, --batch-size pairs a time padded to the batch's longest, `model.eval()`,
`torch.no_grad()`; its time is that of the scoring loop only (tokenization and model, not loading). Ours is
`evaluate.load("metrics/bleurt").compute` with the same batch size, after a first call that loaded the checkpoint.
Both use --threads CPU threads. Runs are alternated; medians of --repeats runs are printed with the ratio
(bleurt-pytorch / ours), the largest score difference and the load average. On a small machine shared with other
jobs, `--threads 1` gives stable timings: with 2 threads each side's OpenMP threads wait on the other jobs'.

Then, per side: tokens per second (the real tokens of every pair, padding excluded), the tokens its forward passes
read (bleurt-pytorch: every pair, padded to its batch's longest; ours: each distinct pair once, its linear layers
on the real tokens only, its attention in length-sorted batches padded to their longest) and the fraction of the
machine's matrix-multiply rate on the model's own GEMM shapes (``gemm_rate``, measured in the same run) that those
forward passes reach; and the bound this puts on the ratio: ours cannot run the tokens it reads faster than the
GEMM rate, so the ratio is at most bleurt-pytorch's padded tokens / ours, divided by bleurt-pytorch's fraction of
the rate. A BLEURT-20-sized model scores tens to hundreds of tokens
per second on a 2-core CPU: run a subset (e.g. --systems 4 --segments 25) and extrapolate.

    python scripts/bench_bleurt.py [--systems 3] [--segments 1000] [--batch-size 16] [--threads 2] [--repeats 3]
                                   [--shape tiny|d12|bleurt-20] [--layers N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import project

# bleurt-pytorch BleurtConfig sizes of the named architectures (tests/bleurt_oracle_run.py's tiny one by default).
# bleurt-20: RemBERT-32 with 512 positions (google-research/bleurt checkpoints.md: "a 32 layers pre-trained
# Transformer model, RemBERT", 579M parameters) at RemBERT's sizes (transformers' RemBertConfig: width 1152, 18 heads,
# feed-forward 4608, input embeddings 256). d12: the config.json of lucadiliello/BLEURT-20-D12 (as copied with
# "_name_or_path": "lucadiliello/BLEURT-20-D12" into huggingface.co/razasju/aissmeditext, commit d7f87f6: width 1024,
# 16 heads, feed-forward 4096, embeddings 128, vocabulary 120,300), which gives checkpoints.md's 167M parameters.
# Random weights use BERT's initialisation: the tiny one's 0.2 over 12-32 layers makes scores chaotic.
SHAPES: dict[str, dict[str, float]] = {
    "tiny": {},
    "d12": {"hidden_size": 1024, "num_hidden_layers": 12, "num_attention_heads": 16, "intermediate_size": 4096,
            "embedding_size": 128, "initializer_range": 0.02},
    "bleurt-20": {"hidden_size": 1152, "num_hidden_layers": 32, "num_attention_heads": 18, "intermediate_size": 4608,
                  "embedding_size": 256, "initializer_range": 0.02},
}


def padded_tokens(lengths: Sequence[int], batches: Sequence[Sequence[int]]) -> int:
    """Tokens the forward passes read: each batch's size times its longest length."""
    return sum(len(batch) * max(lengths[index] for index in batch) for batch in batches)


def forward_tokens(folder: Path, pairs: tuple[list[str], list[str]], batch_size: int) -> dict[str, int]:
    """Token counts of scoring ``pairs`` (references, candidates) with ``folder``'s tokenizer: "real" (every pair,
    no padding), "bleurt-pytorch" (every pair, in order, padded per batch), "distinct" (the distinct pairs of each of
    our chunks, no padding: what our linear layers read) and "ours attention" (those in our length-sorted batches,
    padded: what our attention reads)."""
    from metrics._core.core_bleurt import DEFAULT_CHUNK_SIZE, resolve_checkpoint
    from metrics._core.core_bleurt_tokenize import load_texts_tokenizer, pair_ids, tokenize_texts
    from metrics._core.core_embed import length_batches
    from metrics._core.core_encoder_rows import MAX_PADDING

    tokenizer = load_texts_tokenizer(folder)
    limit = resolve_checkpoint("bleurt", str(folder)).config.max_position_embeddings
    texts = list(dict.fromkeys(pairs[0] + pairs[1]))
    ids = dict(zip(texts, tokenize_texts(tokenizer, texts), strict=True))
    every = list(zip(*pairs, strict=True))
    length = {pair: len(pair_ids(tokenizer, ids[pair[0]], ids[pair[1]], limit)[0]) for pair in every}
    lengths = [length[pair] for pair in every]
    theirs = padded_tokens(lengths, [range(start, min(start + batch_size, len(every)))
                                     for start in range(0, len(every), batch_size)])
    distinct = ours = 0
    for start in range(0, len(every), DEFAULT_CHUNK_SIZE):
        chunk = [length[pair] for pair in dict.fromkeys(every[start:start + DEFAULT_CHUNK_SIZE])]
        distinct += sum(chunk)
        ours += padded_tokens(chunk, length_batches(chunk, batch_size, max_padding=MAX_PADDING))
    return {"real": sum(lengths), "bleurt-pytorch": theirs, "distinct": distinct, "ours": distinct,
            "ours attention": ours}


def utilisation(folder: Path, pairs: tuple[list[str], list[str]], batch_size: int, seconds: dict[str, float]) -> None:
    """Prints each side's tokens/s and the fraction of the GEMM rate (measured now, on the model's shapes) that its
    forward passes reach, and the bound on the ratio."""
    import torch
    from gemm_rate import flops_per_row, gemm_rate, linear_shapes, utilisation_line

    from metrics._core.core_bleurt import resolve_checkpoint
    from metrics._core.core_bleurt_model import BleurtRegressor

    config = resolve_checkpoint("bleurt", str(folder)).config
    with torch.device("meta"):
        model = BleurtRegressor(config)  # its linear layers' shapes only: no weights
    tokens = forward_tokens(folder, pairs, batch_size)
    count = len(pairs[0])
    mean_length = tokens["real"] / count
    shapes = linear_shapes(model.layers, max(8, round(batch_size * mean_length / 8) * 8))
    flops = flops_per_row(shapes) + 4 * config.num_hidden_layers * config.hidden_size * mean_length  # + attention
    rate = gemm_rate(shapes)
    print(rate.describe())
    print(f"{tokens['real']} tokens in {count} pairs (mean {mean_length:.1f}); model {flops / 1e9:.3f} GFLOP/token; "
          f"load average {os.getloadavg()[0]:.2f}")
    for name, value in seconds.items():
        read, scored = tokens[name], tokens["distinct" if name == "ours" else "real"]
        padding = (f"none in its linear layers, {1 - scored / tokens['ours attention']:.1%} in its attention; "
                   "repeated pairs once") if name == "ours" else f"{1 - scored / read:.1%} padding"
        print(f"  {name}: {tokens['real'] / value:,.1f} tokens/s of the pairs; its forward passes read {read} tokens "
              f"({padding})")
        print("    " + utilisation_line(name + " (tokens read)", read / value, flops, rate))
    theirs_fraction = tokens["bleurt-pytorch"] / seconds["bleurt-pytorch"] * flops / 1e9 / rate.gflops
    print(f"bound: ratio <= (bleurt-pytorch's tokens read / ours) / bleurt-pytorch's fraction = "
          f"{tokens['bleurt-pytorch'] / tokens['ours']:.3f} / {theirs_fraction:.3f} = "
          f"{tokens['bleurt-pytorch'] / tokens['ours'] / theirs_fraction:.2f}x")


def wmt17_pairs(systems: int, segments: int) -> tuple[list[str], list[str], list[str]]:
    """(references, candidates) of the first ``segments`` segments of the first ``systems`` systems, and the
    reference file's lines."""
    from conftest import read_lines

    references = read_lines(project.WMT17 / "newstest2017.ref.de")
    outputs = {path.stem: read_lines(path) for path in sorted((project.WMT17 / "systems").glob("*.de"))}
    candidates, refs = [], []
    for name in sorted(outputs)[:systems]:
        candidates += outputs[name][:segments]
        refs += references[:segments]
    return refs, candidates, references


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--systems", type=int, default=3)
    parser.add_argument("--segments", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--shape", "--size", dest="shape", choices=sorted(SHAPES), default="tiny",
                        help="the checkpoint's architecture (--size is the former name)")
    parser.add_argument("--layers", type=int, default=None, help="number of layers (default: the shape's)")
    args = parser.parse_args()
    sizes = dict(SHAPES[args.shape])
    if args.layers is not None:
        sizes["num_hidden_layers"] = args.layers

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    project.use_test_helpers()
    import torch

    from bleurt_oracle import build_checkpoint, oracle_scores

    torch.set_num_threads(args.threads)
    refs, predictions, references = wmt17_pairs(args.systems, args.segments)
    print(f"{len(predictions)} pairs ({len(set(zip(refs, predictions)))} distinct), batch size {args.batch_size}, "
          f"{args.threads} threads, CPU")

    with tempfile.TemporaryDirectory(prefix="bench-bleurt-") as work:
        folder = Path(work) / f"{args.shape}-bleurt"
        build_checkpoint(folder, references[:3000], sizes=sizes, vocab_size=1000 if args.shape == "tiny" else 6000)
        print(f"checkpoint {args.shape} {sizes or '(2 layers of width 32)'} built", flush=True)
        import evaluate

        metric = evaluate.load(str(project.ROOT / "metrics" / "bleurt"))
        metric.compute(predictions=predictions[:4], references=refs[:4], checkpoint=str(folder))  # loads the model
        ours_times, theirs_times = [], []
        ours_scores = theirs_scores = None
        for _ in range(args.repeats):
            theirs = oracle_scores(folder, refs, predictions, batch_size=args.batch_size, threads=args.threads,
                                   timeout=None)  # the whole corpus at BLEURT-20's size takes hours
            theirs_times.append(theirs["seconds"])
            theirs_scores = theirs["scores"]
            start = time.perf_counter()
            ours_scores = metric.compute(predictions=predictions, references=refs, checkpoint=str(folder),
                                         batch_size=args.batch_size)["scores"]
            ours_times.append(time.perf_counter() - start)
            print(f"run: bleurt-pytorch {theirs_times[-1]:.2f} s, ours {ours_times[-1]:.2f} s "
                  f"(load average {os.getloadavg()[0]:.2f})", flush=True)
        utilisation(folder, (refs, predictions), args.batch_size,
                    {"bleurt-pytorch": statistics.median(theirs_times), "ours": statistics.median(ours_times)})
    ours_median, theirs_median = statistics.median(ours_times), statistics.median(theirs_times)
    difference = max(abs(a - b) for a, b in zip(ours_scores, theirs_scores, strict=True))
    spread = max(theirs_scores) - min(theirs_scores)
    print(f"bleurt-pytorch 0.0.1: median {theirs_median:.3f} s  (runs: {', '.join(f'{t:.3f}' for t in theirs_times)})")
    print(f"ours:                 median {ours_median:.3f} s  (runs: {', '.join(f'{t:.3f}' for t in ours_times)})")
    print(f"ratio (bleurt-pytorch / ours): {theirs_median / ours_median:.2f}x; max abs score difference "
          f"{difference:.3g} (bleurt-pytorch's scores span {spread:.3g})")


if __name__ == "__main__":
    main()
