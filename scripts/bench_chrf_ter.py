#!/usr/bin/env python3
"""Benchmark chrF, chrF++ and TER on the 16 WMT17 en-de systems: sacreBLEU vs our evaluate modules.

End to end: ``evaluate.load("./metrics/chrf").compute`` (and ``./metrics/ter``) against
``sacrebleu.metrics.CHRF/TER(...).corpus_score``, one system at a time, in one run, side by side; medians over
--repeats; ratios are sacreBLEU's time divided by ours. For TER, "cold" clears our process caches (reference
tokens, per-example statistics) before every repeat, so the references shared by the 16 systems are prepared
once per repeat, as in a fresh process; "warm" keeps them (a process that scores again against references it
has seen). chrF keeps nothing between calls, so it is timed once. Scores are compared with sacreBLEU's (exact equality, and the largest difference).
Peak memory (tracemalloc) is measured in a separate pass over the first --memory-systems systems.

    .venv/bin/python scripts/bench_chrf_ter.py [--metrics chrf chrf++ ter] [--repeats 1] [--memory-systems 2]
"""

from __future__ import annotations

import argparse
import sys

import project

from metrics._core.core_process import clear_caches  # noqa: E402

METRICS = {
    # name: (our folder, our options, sacreBLEU class name, sacreBLEU options, whether ours caches across calls)
    "chrf": ("chrf", {}, "CHRF", {}, False),
    "chrf++": ("chrf", {"word_order": 2}, "CHRF", {"word_order": 2}, False),
    "ter": ("ter", {}, "TER", {}, True),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--metrics", nargs="+", default=list(METRICS), choices=list(METRICS))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--memory-systems", type=int, default=2)
    arguments = parser.parse_args()
    import evaluate
    import sacrebleu.metrics

    references, by_system = project.wmt17()
    systems = list(by_system.values())
    print(f"{len(systems)} WMT17 en-de systems x {len(references)} segments, median of {arguments.repeats}; "
          f"ratio = sacreBLEU time / time; peak MiB over the first {arguments.memory_systems} systems\n")
    header = f"{'metric':7} {'approach':40} {'seconds':>8} {'ratio':>6} {'peak MiB':>9}  scores"
    print(header)
    print("-" * len(header))
    failed = False
    for name in arguments.metrics:
        folder, options, class_name, oracle_options, caches = METRICS[name]
        module = evaluate.load(str(project.ROOT / "metrics" / folder))
        oracle_class = getattr(sacrebleu.metrics, class_name)

        def run_sacrebleu(count: int = len(systems)) -> list[float]:
            return [oracle_class(**oracle_options).corpus_score(h, [references]).score for h in systems[:count]]

        def run_module(count: int = len(systems)) -> list[float]:
            return [module.compute(predictions=h, references=references, **options)["score"] for h in systems[:count]]

        baseline_seconds, expected = project.timed(run_sacrebleu, arguments.repeats)
        approaches = [("sacrebleu.metrics." + class_name + ".corpus_score", run_sacrebleu, None)]
        if caches:
            approaches += [("ours: evaluate.load(...).compute, cold", run_module, clear_caches),
                           ("ours: evaluate.load(...).compute, warm", run_module, None)]
        else:
            approaches.append(("ours: evaluate.load(...).compute", run_module, None))
        for label, run, before in approaches:
            if run is run_sacrebleu:
                seconds, scores = baseline_seconds, expected
            else:
                seconds, scores = project.timed(run, arguments.repeats, before)
            difference = max(abs(a - b) for a, b in zip(scores, expected, strict=True))
            verdict = "identical" if scores == expected else f"max difference {difference:.1e}"
            failed |= difference > 1e-9
            memory = project.peak_mib(lambda: run(arguments.memory_systems), before)
            print(f"{name:7} {label:40} {seconds:8.2f} {baseline_seconds / seconds:6.2f} {memory:9.1f}  {verdict}")
        print()
    if failed:
        print("scores differ from sacreBLEU's by more than 1e-9", file=sys.stderr)
        return 1
    print("all scores within 1e-9 of sacreBLEU's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
