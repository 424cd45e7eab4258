#!/usr/bin/env python3
"""Compare systems' outputs on one reference set: a table of every metric x system with 95% bootstrap
intervals and paired significance tests against a baseline (paired bootstrap and approximate randomization,
on the same resamples for every metric), scores by reference length and by per-example difficulty, the examples
where two systems differ most, and figures; written as report.html (self-contained), .md, .json, .csv and .tex.

    python scripts/compare.py -r ref.de -s base=baseline.de new=new.de --task mt -o report/
    python scripts/compare.py -r ref.txt -s a.txt b.txt c.txt -m rouge bertscore -o rouge.use_stemmer=true
    python scripts/compare.py --jsonl outputs.jsonl --system-fields baseline pointer-gen --task summarization

Systems are `name=path` or a path (named by its file name); the baseline is the first unless --baseline names
another. Metric options as the scorer takes them (`-o metric.key=value`). Every input, metric name and option is
checked before anything is scored.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from comparison import ComparisonError, ResamplingSettings, compare, from_files, from_jsonl, write_report
from comparison.data import system_name
from comparison.render import FORMATS
from project import read_lines
from score import parse_options


def read_human_scores(specs: Sequence[str]) -> dict[str, list[float]]:
    """``name=path`` files of one human score per line."""
    scores = {}
    for spec in specs:
        name, path = system_name(spec)
        if not path.is_file():
            raise ComparisonError(f"compare: human score file {path} does not exist")
        try:
            scores[name] = [float(line) for line in read_lines(path)]
        except ValueError as error:
            raise ComparisonError(f"compare: {path}: {error}") from None
    return scores


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-r", "--references", type=Path, nargs="+", default=[], help="reference file(s)")
    parser.add_argument("-s", "--systems", nargs="+", default=[], help="system outputs: name=path or path")
    parser.add_argument("--sources", type=Path, help="source file, line-aligned (for metrics that read sources)")
    parser.add_argument("--jsonl", type=Path, help="JSONL file, one object per example, instead of text files")
    parser.add_argument("--system-fields", nargs="+", default=[], help="with --jsonl: the systems' fields")
    parser.add_argument("--reference-field", default="reference", help="with --jsonl (default: reference)")
    parser.add_argument("--source-field", help="with --jsonl: the sources' field")
    parser.add_argument("--task", choices=("mt", "summarization"), default="mt",
                        help="default metric set: mt = sacrebleu chrf ter, summarization = rouge meteor")
    parser.add_argument("-m", "--metrics", nargs="+", help="metric names (instead of the task's set)")
    parser.add_argument("-o", "--option", action="append", default=[], help="metric.key=value (repeatable)")
    parser.add_argument("--baseline", help="the system the others are tested against (default: the first)")
    parser.add_argument("--analysis-metric", help="metric of the difficulty buckets and contrasting examples")
    parser.add_argument("--contrast", nargs=2, metavar=("FIRST", "SECOND"),
                        help="the two systems whose most different examples are shown")
    parser.add_argument("--human", nargs="+", default=[],
                        help="human scores, name=path per system (one number per line): adds the metrics' agreement "
                             "with them")
    parser.add_argument("--examples", type=int, default=5, help="contrasting examples each way (default 5)")
    parser.add_argument("--bootstrap-samples", type=int, default=1000)
    parser.add_argument("--ar-samples", type=int, default=10000, help="approximate randomization trials; 0: none")
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--output", type=Path, default=Path("comparison-report"), help="folder for the report")
    parser.add_argument("--formats", nargs="+", choices=FORMATS, default=list(FORMATS))
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = build_parser().parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        if arguments.jsonl is not None:
            if not arguments.system_fields:
                raise ComparisonError("compare: --jsonl needs --system-fields")
            data = from_jsonl(arguments.jsonl, arguments.system_fields, arguments.reference_field,
                              arguments.source_field)
        else:
            if not arguments.systems:
                raise ComparisonError("compare: give the systems' outputs with -s (or --jsonl)")
            data = from_files(arguments.references, arguments.systems, arguments.sources)
        if arguments.bootstrap_samples < 1 or arguments.ar_samples < 0:
            raise ComparisonError("compare: --bootstrap-samples must be at least 1 and --ar-samples at least 0")
        from comparison.statistics import TASK_METRICS

        metrics = arguments.metrics or list(TASK_METRICS[arguments.task])
        options = {name: values for name, values in parse_options(arguments.option, metrics).items() if values}
        human = read_human_scores(arguments.human) if arguments.human else None
        report = compare(data, metrics, task=arguments.task, options=options, baseline=arguments.baseline,
                         settings=ResamplingSettings(n_samples=arguments.bootstrap_samples,
                                                     ar_samples=arguments.ar_samples, seed=arguments.seed),
                         analysis_metric=arguments.analysis_metric,
                         contrast=tuple(arguments.contrast) if arguments.contrast else None,
                         examples=arguments.examples, human=human, progress=not arguments.quiet)
    except ComparisonError as error:
        raise SystemExit(str(error)) from None
    written = write_report(report, arguments.output, arguments.formats)
    from comparison.render import markdown

    print(markdown(report, []).split("\n## ")[0].rstrip())
    print("\nwritten: " + ", ".join(str(path) for path in written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
