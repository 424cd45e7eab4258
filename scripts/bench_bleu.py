#!/usr/bin/env python3
"""Benchmark corpus BLEU on the 16 WMT17 en-de systems: sacreBLEU vs our core and our evaluate module.

All timings are taken in one run, side by side, and reported as medians over
--repeats; ratios are sacreBLEU's time divided by ours. "cold" clears the
tokenization and reference-count caches before every repeat (as in a fresh
process: the references shared by the 16 systems are tokenized and counted
once in the repeat); "warm" keeps them, as when a process scores again
against references it has seen (e.g. every evaluation of a training run). Scores are checked identical before timing.
Peak memory is measured with tracemalloc in a separate pass.

    .venv/bin/python scripts/bench_bleu.py [--tokenize 13a intl] [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys

import project

from metrics._core import core_bleu  # noqa: E402
from metrics._core.core_process import clear_caches  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokenize", nargs="+", default=["13a", "intl", "zh", "char", "none"])
    parser.add_argument("--repeats", type=int, default=3)
    arguments = parser.parse_args()
    import evaluate
    import sacrebleu
    from sacrebleu.metrics.bleu import BLEU

    references, by_system = project.wmt17()
    systems = list(by_system.values())
    reference_lists = [[reference] for reference in references]
    module = evaluate.load(str(project.ROOT / "metrics" / "sacrebleu"))
    schema = core_bleu.bleu_schema("sacrebleu", core_bleu.SacreBleuOptions())

    print(f"corpus BLEU, {len(systems)} WMT17 en-de systems x {len(references)} segments, median of "
          f"{arguments.repeats}; ratio = sacrebleu.corpus_bleu time / time\n")
    header = f"{'tok':5} {'approach':34} {'seconds':>8} {'ratio':>6} {'peak MiB':>9}"
    print(header)
    print("-" * len(header))
    for tokenize in arguments.tokenize:
        options = core_bleu.SacreBleuOptions(tokenize=tokenize)

        def run_sacrebleu() -> list[float]:
            return [sacrebleu.corpus_bleu(h, [references], tokenize=tokenize).score for h in systems]

        def run_sacrebleu_cached() -> list[float]:
            metric = BLEU(tokenize=tokenize, references=[references])
            return [metric.corpus_score(h, None).score for h in systems]

        def run_core() -> list[float]:
            return [
                core_bleu.sacrebleu_from_totals(
                    schema.totals_of_rows(core_bleu.sacrebleu_rows(h, reference_lists, options), "s"), options
                )["score"]
                for h in systems
            ]

        def run_module() -> list[float]:
            return [module.compute(predictions=h, references=references, tokenize=tokenize)["score"] for h in systems]

        approaches = [
            ("sacrebleu.corpus_bleu", run_sacrebleu, None),
            ("sacrebleu BLEU(references=...) cache", run_sacrebleu_cached, None),
            ("ours: core, cold caches", run_core, clear_caches),
            ("ours: core, warm caches", run_core, None),
            ("ours: evaluate.load(...).compute, cold", run_module, clear_caches),
            ("ours: evaluate.load(...).compute, warm", run_module, None),
        ]
        baseline_seconds, expected = project.timed(run_sacrebleu, arguments.repeats)
        for label, run, before in approaches:
            seconds, scores = (baseline_seconds, expected) if run is run_sacrebleu else project.timed(run, arguments.repeats, before)
            if scores != expected:
                print(f"{tokenize:5} {label}: scores differ from sacreBLEU's", file=sys.stderr)
                return 1
            memory = project.peak_mib(run, before)
            print(f"{tokenize:5} {label:34} {seconds:8.2f} {baseline_seconds / seconds:6.2f} {memory:9.1f}")
        print()
    print("all scores identical to sacreBLEU's (exact float equality)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
