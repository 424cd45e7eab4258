#!/usr/bin/env python3
"""Benchmark: our semantic_similarity against sentence-transformers on the CPU, same model (the packaged
all-MiniLM-L6-v2), same process, interleaved runs.

Scores WMT17 newstest2017: the first --segments segments of --systems systems, each against the one reference
(so references repeat, as in practice). sentence-transformers encodes the predictions and the references
(``encode(..., batch_size=--batch-size)``), then the cosine of each pair, as a user of it would; ours is
``evaluate.load("metrics/semantic_similarity").compute`` with the same batch size, after a first call that loaded
the model. Prints median times of --repeats alternated runs, the ratio (sentence-transformers / ours), the largest
difference of similarities, the tokens per second of each side (real tokens of the texts each side embeds) and the
fraction of the machine's matrix-multiply rate on the model's own GEMM shapes (``gemm_rate``, in the same run)
that our forward passes reach.

    python scripts/bench_semantic_similarity.py [--systems 2] [--segments 1000] [--batch-size 64] [--threads 2]
                                                [--repeats 3]
"""

from __future__ import annotations

import os

import project
from bertscore_common import wmt17
from gemm_rate import flops_per_row, gemm_rate, linear_shapes, utilisation_line


def corpus(systems_count: int, segments: int) -> tuple[list[str], list[str]]:
    references, systems = wmt17()
    predictions, refs = [], []
    for name in sorted(systems)[:systems_count]:
        predictions += systems[name][:segments]
        refs += references[:segments]
    return predictions, refs


def main() -> None:
    parser = project.bench_parser(__doc__, systems=2, segments=1000, batch_size=64, threads=2, repeats=3)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import evaluate
    import sentence_transformers
    import torch
    from bench_timing import interleaved

    from metrics._core.core_embed import encode_text
    from metrics._core.core_models import packaged_model_path

    torch.set_num_threads(args.threads)
    predictions, references = corpus(args.systems, args.segments)
    metric = evaluate.load(str(project.ROOT / "metrics" / "semantic_similarity"))
    metric.compute(predictions=predictions[:4], references=references[:4])  # loads the model
    theirs_model = sentence_transformers.SentenceTransformer(str(packaged_model_path("semantic_similarity")),
                                                             device="cpu")

    def theirs() -> list[float]:
        a = theirs_model.encode(predictions, batch_size=args.batch_size, convert_to_tensor=True)
        b = theirs_model.encode(references, batch_size=args.batch_size, convert_to_tensor=True)
        return torch.nn.functional.cosine_similarity(a, b, dim=-1).tolist()

    def ours() -> list[float]:
        return metric.compute(predictions=predictions, references=references,
                              batch_size=args.batch_size)["similarities"]

    timings = interleaved({"sentence-transformers": (theirs, lambda: None), "ours": (ours, lambda: None)},
                          args.repeats)
    (theirs_wall, _, theirs_scores), (ours_wall, _, ours_scores) = timings["sentence-transformers"], timings["ours"]
    difference = max(abs(a - b) for a, b in zip(theirs_scores, ours_scores, strict=True))
    print(f"{len(predictions)} pairs ({args.systems} systems x {args.segments} segments), batch size "
          f"{args.batch_size}, {args.threads} threads, CPU, {args.repeats} alternated runs; load average "
          f"{os.getloadavg()[0]:.2f}")
    print(f"sentence-transformers {sentence_transformers.__version__}: median {theirs_wall:.2f} s; ours: median "
          f"{ours_wall:.2f} s; ratio {theirs_wall / ours_wall:.2f}x; max abs difference {difference:.2g}")

    model = theirs_model[0].auto_model
    tokenizer = theirs_model.tokenizer
    lengths = {text: len(encode_text(tokenizer, text)) for text in set(predictions + references)}
    our_tokens = sum(lengths.values())  # each distinct text once
    their_tokens = sum(lengths[text] for text in predictions + references)
    config = model.config
    rows = max(8, round(args.batch_size * our_tokens / len(lengths) / 8) * 8)
    shapes = linear_shapes(model.encoder, rows)
    mean_length = our_tokens / len(lengths)
    flops = flops_per_row(shapes) + 4 * config.num_hidden_layers * config.hidden_size * mean_length
    rate = gemm_rate(shapes)
    print(rate.describe())
    print("  " + utilisation_line("sentence-transformers", their_tokens / theirs_wall, flops, rate))
    print("  " + utilisation_line("ours (distinct texts)", our_tokens / ours_wall, flops, rate))


if __name__ == "__main__":
    main()
