#!/usr/bin/env python3
"""Benchmark: our ROUGE-1.5.5 core against ROUGE-1.5.5.pl, side by side in one run, on CNN/DailyMail.

    ROUGE155_HOME=/path/to/ROUGE-1.5.5 python scripts/bench_rouge155.py [--system pointer-gen-cov]
        [--examples N] [--no-stem] [--table] [--data ../shared/data]

1. pyrouge's command (-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a, plus -m unless --no-stem) on the first N examples
   (all 11,490 by default): ROUGE-1.5.5.pl as pyrouge runs it (writing the SEE files is included in its time,
   as it is in pyrouge's), then our core (per-example rows for ROUGE-1..4, L, W-1.2, S*, SU*, and the
   bootstrap averages with their intervals). Every per-example value and every average is checked to be equal.
   Wall time and CPU time (the Perl child's, our process's) are reported, with their ratios, and our peak
   memory (tracemalloc).
2. --table: See et al. (2017) Table 1 from the released outputs: ours (= ROUGE-1.5.5), the paper's numbers,
   and the rouge-score mode of this project (metrics/_core/core_rouge.py, rouge-score 0.1.2's numbers) with its
   stemmer (rougeL: one LCS over the whole text; rougeLsum: the summary-level LCS over the lines).

The Perl script runs in a subprocess that is not shared with anything else of ours; on a busy machine compare
CPU-time ratios.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from pathlib import Path

import project  # the repository root on sys.path

project.use_test_helpers()

from cnndm_data import SYSTEMS, read_cnndm  # noqa: E402
from metrics._core.core_rouge155 import (  # noqa: E402
    PYROUGE_ROUGE155_TYPES,
    Rouge155Options,
    rouge155_averages,
    rouge155_rows,
    rouge155_schema,
)

SEE_2017_TABLE_1 = {"baseline": (31.33, 11.81, 28.83), "pointer-gen": (36.44, 15.66, 33.42),
                    "pointer-gen-cov": (39.53, 17.28, 36.38)}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def ours(predictions: list[str], references: list[list[str]], options: Rouge155Options):
    rows = rouge155_rows(predictions, references, options)
    columns = rouge155_schema("rouge155", options).columns(rows, options.stats_signature())
    return columns, rouge155_averages(columns, options)


def bench(records: list[dict], system: str, stem: bool) -> None:
    from rouge155_oracle import PYROUGE_OPTIONS, perl_mismatches, run_rouge155

    os.environ.pop("ROUGE155_CACHE", None)  # time the script itself, never a cached output
    predictions = [record[system] for record in records]
    references = [[record["reference"]] for record in records]
    options = Rouge155Options(rouge_types=PYROUGE_ROUGE155_TYPES, use_stemmer=stem)
    flags = list(PYROUGE_OPTIONS) + (["-m"] if stem else [])
    print(f"{system}, {len(records)} examples, ROUGE-1.5.5.pl {' '.join(flags)}", flush=True)

    cpu, wall = children_cpu(), time.perf_counter()
    output = run_rouge155(predictions, references, flags)
    perl_wall, perl_cpu = time.perf_counter() - wall, children_cpu() - cpu
    print(f"  ROUGE-1.5.5.pl: {perl_wall:8.1f} s wall, {perl_cpu:8.1f} s CPU", flush=True)

    cpu, wall = time.process_time(), time.perf_counter()
    columns, averages = ours(predictions, references, options)
    our_wall, our_cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"  ours:           {our_wall:8.1f} s wall, {our_cpu:8.1f} s CPU")
    print(f"  ratio (Perl / ours): {perl_wall / our_wall:.1f}x wall, {perl_cpu / our_cpu:.1f}x CPU")

    peak = project.peak_mib(lambda: ours(predictions, references, options))
    print(f"  our peak traced memory: {peak:.0f} MiB")

    mismatches, compared = perl_mismatches(output, columns, averages, options)
    print(f"  values compared: {compared}, differing: {len(mismatches)}")


def table(records: list[dict]) -> None:
    from metrics._core.core_rouge import RougeOptions, rouge_from_totals, rouge_rows, rouge_schema
    from metrics._core.core_rouge_tokenize import make_tokenizer

    print("\nSee et al. (2017) Table 1, ROUGE F x 100 (R-1 / R-2 / R-L), CNN/DailyMail test, 11,490 examples")
    print(f"{'system':16} {'paper':>20} {'ROUGE-1.5.5 (ours)':>22} {'without -m':>22} "
          f"{'rouge-score rougeL':>22} {'rouge-score rougeLsum':>22}")
    references = [[record["reference"]] for record in records]
    for system in SYSTEMS:
        predictions = [record[system] for record in records]
        cells = [" / ".join(f"{value:.2f}" for value in SEE_2017_TABLE_1[system])]
        for stem in (True, False):
            options = Rouge155Options(rouge_types=("rouge1", "rouge2", "rougeL"), use_stemmer=stem)
            _, averages = ours(predictions, references, options)
            cells.append(" / ".join(f"{100 * averages[name]:.3f}" for name in options.rouge_types))
        types = ("rouge1", "rouge2", "rougeL", "rougeLsum")
        rouge_options = RougeOptions(types, make_tokenizer(None, True))
        rows = rouge_rows(predictions, references, rouge_options)
        result = rouge_from_totals(rouge_schema("rouge", rouge_options).totals_of_rows(rows, rouge_options.stats_signature()), types)
        for last in ("rougeL", "rougeLsum"):
            cells.append(" / ".join(f"{100 * result[f'{name}_fmeasure']:.3f}" for name in ("rouge1", "rouge2", last)))
        print(f"{system:16} " + " ".join(f"{cell:>22}" for cell in cells), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=project.SHARED_DATA)
    parser.add_argument("--system", default="pointer-gen-cov", choices=SYSTEMS)
    parser.add_argument("--examples", type=int, default=None)
    parser.add_argument("--no-stem", action="store_true")
    parser.add_argument("--table", action="store_true", help="also See et al.'s Table 1 (ours, paper, rouge-score)")
    parser.add_argument("--no-perl", action="store_true", help="only the table")
    args = parser.parse_args()
    records = read_cnndm(args.data)
    if not args.no_perl:
        bench(records[: args.examples] if args.examples else records, args.system, not args.no_stem)
    if args.table or args.no_perl:
        table(records)


if __name__ == "__main__":
    main()
