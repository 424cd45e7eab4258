#!/usr/bin/env python3
"""The comparison report's speed on the 16 WMT17 systems: our `compare` against sacreBLEU's own multi-system
paired test (`PairedTest`, BLEU and chrF, one process) doing the same work in the same run; 10 systems with
the MT task's defaults; then the full report with BLEU, chrF and ROUGE (and, with --ar-samples, approximate
randomization). With --bertscore-systems N, only this: the statistics of BERTScore for N systems on every
segment, scored the report's way (one call over all systems: the references embedded once) and one call per
system, alternated in the same run."""

from __future__ import annotations

import time
from typing import Any

import project
from comparison import ComparisonData, ResamplingSettings, compare, from_columns, write_report
from comparison.report import prepare


def shared_text_statistics(data: ComparisonData, metric_name: str, options: dict[str, Any] | None = None,
                           repeats: int = 2) -> None:
    """A model metric's statistics rows of every system of ``data``, the report's way (one call over all of them)
    against one call per system, alternated; prints the best times, their ratio and the rows' largest difference."""
    (metric,), _ = prepare(data, [metric_name], options={metric_name: options or {}})
    systems = list(data.systems)
    metric.add_system(from_columns(data.references[:1], {systems[0]: data.systems[systems[0]][:1]},
                                   sources=data.sources[:1] if data.sources else None), systems[0])  # loads the model
    times: dict[str, list[float]] = {"one call": [], "one per system": []}
    rows = {}
    for _ in range(repeats):
        for way, spent in times.items():
            start = time.perf_counter()
            if way == "one call":
                metric.add_systems(data, systems)
            else:
                for system in systems:
                    metric.add_system(data, system)
            spent.append(time.perf_counter() - start)
            rows[way] = {system: metric.matrices[system] for system in systems}
    difference = max(float(abs(rows["one call"][system] - rows["one per system"][system]).max()) for system in systems)
    best = {way: min(values) for way, values in times.items()}
    print(f"{metric_name} statistics of {len(systems)} systems x {data.size} segments (best of {repeats}): one call "
          f"{best['one call']:.2f} s, one per system {best['one per system']:.2f} s "
          f"({best['one per system'] / best['one call']:.2f}x); max |row difference| {difference:.1e}", flush=True)


def main() -> None:
    arguments = project.bench_parser(__doc__, bootstrap_samples=1000, ar_samples=0, systems=16,
                                     bertscore_systems=0).parse_args()
    references, systems = project.wmt17()
    if arguments.bertscore_systems:
        shared_text_statistics(from_columns(references, dict(sorted(systems.items())[:arguments.bertscore_systems])),
                               "bertscore")
        return
    named = dict(sorted(systems.items())[:arguments.systems])
    data = from_columns(references, named)
    settings = ResamplingSettings(n_samples=arguments.bootstrap_samples, ar_samples=0)

    from sacrebleu.metrics import BLEU, CHRF
    from sacrebleu.significance import PairedTest

    start = time.perf_counter()
    PairedTest(list(named.items()), {"BLEU": BLEU(), "chrF": CHRF()}, [references], test_type="bs",
               n_samples=arguments.bootstrap_samples)()
    theirs = time.perf_counter() - start
    compare(data, ["sacrebleu"], settings=settings, progress=False)  # loads the modules: not timed below
    start = time.perf_counter()
    compare(data, ["sacrebleu", "chrf"], settings=settings, progress=False)
    ours = time.perf_counter() - start
    print(f"{len(named)} systems x {data.size} segments, paired bootstrap ({arguments.bootstrap_samples}) with "
          f"intervals, BLEU and chrF:\n  sacreBLEU PairedTest {theirs:.1f} s, ours {ours:.1f} s "
          f"({theirs / ours:.1f}x)")

    ten = from_columns(references, dict(list(named.items())[:10]))
    start = time.perf_counter()
    compare(ten, task="mt", progress=False)
    print(f"10 systems, the MT task's metrics (BLEU, chrF, TER) with the default settings (1000 bootstrap "
          f"resamples, 10000 randomization trials): {time.perf_counter() - start:.1f} s")

    full = ResamplingSettings(n_samples=arguments.bootstrap_samples, ar_samples=arguments.ar_samples)
    start = time.perf_counter()
    report = compare(data, ["sacrebleu", "chrf", "rouge"], settings=full, progress=False)
    scored = time.perf_counter() - start
    start = time.perf_counter()
    write_report(report, project.ROOT / "comparison-report" / "wmt17")
    written = time.perf_counter() - start
    print(f"full report, BLEU + chrF + ROUGE (4 headlines), approximate randomization {arguments.ar_samples} "
          f"trials: scoring and resampling {scored:.1f} s, figures and five formats {written:.1f} s")


if __name__ == "__main__":
    main()
