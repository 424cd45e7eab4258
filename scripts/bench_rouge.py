#!/usr/bin/env python3
"""Benchmark: our ROUGE against rouge-score, side by side in one run, on the CNN/DailyMail summaries.

    python scripts/bench_rouge.py [--system pointer-gen-cov] [--repeats 3]

1. The four default types (rouge1, rouge2, rougeL, rougeLsum) with the stemmer on all 11,490 pairs: rouge-score's
   RougeScorer.score, our core (rouge_rows), and our module through evaluate.load(...).compute(use_aggregator=False);
   the per-example scores are checked to be identical.
2. ROUGE-L on long texts (1,000-5,000 tokens, built by concatenating consecutive summaries and references).

Times are medians of --repeats runs (the stemming cache is cleared before every run of ours); ratios are
rouge-score time / our time. Peak memory: tracemalloc peak of one run on the first --memory-pairs pairs.
"""

from __future__ import annotations

import argparse
import sys

import project
from project import peak_mib, timed

from metrics._core.core_process import clear_caches  # noqa: E402
from metrics._core.core_rouge import RougeOptions, rouge_rows  # noqa: E402
from metrics._core.core_rouge_tokenize import make_tokenizer  # noqa: E402

TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")


def rouge_score_rows(scorer, predictions: list[str], references: list[str]) -> list[list[float]]:
    rows = []
    for prediction, reference in zip(predictions, references, strict=True):
        scores = scorer.score(reference, prediction)
        rows.append([value for name in scorer.rouge_types for value in scores[name]])
    return rows


def long_pairs(records: list[dict], system: str, lengths: list[int]) -> list[tuple[str, str]]:
    """Pairs of texts of about the given token counts, concatenating consecutive summaries and references."""
    pairs, start = [], 0
    for target in lengths:
        prediction, reference, count = [], [], 0
        while count < target:
            record = records[start % len(records)]
            start += 1
            prediction.append(record[system])
            reference.append(record["reference"])
            count += len(record["reference"].split())
        pairs.append(("\n".join(prediction), "\n".join(reference)))
    return pairs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--system", default="pointer-gen-cov")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--oracle-repeats", type=int, default=1, help="runs of rouge-score (slow)")
    parser.add_argument("--memory-pairs", type=int, default=2000)
    parser.add_argument("--long-lengths", default="1000,2000,3000,4000,5000,1000,2000,3000,4000,5000")
    arguments = parser.parse_args()

    from rouge_score import rouge_scorer

    records = project.cnndm()
    predictions = [record[arguments.system] for record in records]
    references = [record["reference"] for record in records]
    nested = [[reference] for reference in references]
    options = RougeOptions(TYPES, make_tokenizer(None, True))
    print(f"CNN/DM {arguments.system}: {len(records)} pairs, types {', '.join(TYPES)}, stemmer on")

    oracle_time, oracle = timed(
        lambda: rouge_score_rows(rouge_scorer.RougeScorer(list(TYPES), use_stemmer=True), predictions, references),
        arguments.oracle_repeats,
    )
    ours_time, ours = timed(lambda: rouge_rows(predictions, nested, options), arguments.repeats, clear_caches)
    identical = [row[:-1] for row in ours] == oracle  # type: ignore[union-attr]

    import evaluate

    module = evaluate.load(str(project.ROOT / "metrics" / "rouge"))
    module_time, _ = timed(
        lambda: module.compute(predictions=predictions, references=references, use_stemmer=True, use_aggregator=False),
        arguments.repeats,
        clear_caches,
    )
    print(f"  rouge-score                      {oracle_time:8.2f} s")
    print(f"  ours, core                       {ours_time:8.2f} s   ratio {oracle_time / ours_time:6.1f}x")
    print(f"  ours, evaluate.load().compute()  {module_time:8.2f} s   ratio {oracle_time / module_time:6.1f}x")
    print(f"  per-example P/R/F identical to rouge-score: {identical}")

    subset = slice(0, arguments.memory_pairs)
    oracle_peak = peak_mib(
        lambda: rouge_score_rows(
            rouge_scorer.RougeScorer(list(TYPES), use_stemmer=True), predictions[subset], references[subset]
        )
    )
    ours_peak = peak_mib(lambda: rouge_rows(predictions[subset], nested[subset], options), clear_caches)
    print(f"  peak traced memory, first {arguments.memory_pairs} pairs: rouge-score {oracle_peak:.1f} MiB, ours {ours_peak:.1f} MiB")

    lengths = [int(value) for value in arguments.long_lengths.split(",")]
    pairs = long_pairs(records, arguments.system, lengths)
    long_predictions = [prediction for prediction, _ in pairs]
    long_references = [reference for _, reference in pairs]
    token_counts = [len(text.split()) for text in long_references]
    print(f"\nROUGE-L on {len(pairs)} long pairs ({min(token_counts)}-{max(token_counts)} reference tokens), no stemmer")
    long_options = RougeOptions(("rougeL",), make_tokenizer(None, False))
    oracle_time, oracle = timed(
        lambda: rouge_score_rows(rouge_scorer.RougeScorer(["rougeL"]), long_predictions, long_references),
        arguments.oracle_repeats,
    )
    ours_time, ours = timed(
        lambda: rouge_rows(long_predictions, [[text] for text in long_references], long_options), arguments.repeats
    )
    identical = [row[:-1] for row in ours] == oracle  # type: ignore[union-attr]
    print(f"  rouge-score                      {oracle_time:8.2f} s")
    print(f"  ours, core                       {ours_time:8.3f} s   ratio {oracle_time / ours_time:6.1f}x")
    print(f"  per-example P/R/F identical to rouge-score: {identical}")
    oracle_peak = peak_mib(lambda: rouge_score_rows(rouge_scorer.RougeScorer(["rougeL"]), long_predictions[:2], long_references[:2]))
    ours_peak = peak_mib(lambda: rouge_rows(long_predictions[:2], [[text] for text in long_references[:2]], long_options))
    print(f"  peak traced memory, first 2 long pairs: rouge-score {oracle_peak:.1f} MiB, ours {ours_peak:.2f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
