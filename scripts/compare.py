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
checked before anything is scored: the files (UTF-8, a leading byte-order mark dropped; an invalid byte, a JSONL
line that is not one object or a line over --max-line-bytes stops with the file and line), the numbers' bounds
(--bootstrap-samples 1-100,000; --ar-samples 0-1,000,000; --examples 0-1,000; --seed >= 0), the output folder
(a folder, or one that can be made, that can be written) and the names the figures draw. Names and texts from the
data are escaped in every format (HTML, Markdown, LaTeX; CSV cells that a spreadsheet would run as formulas get a
leading single quote); each file is written whole or not at all.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from comparison import ComparisonError, ResamplingSettings, compare, from_files, from_jsonl, write_report
from comparison.data import read_file, system_name
from comparison.files import DEFAULT_MAX_LINE_BYTES, checked_bound, text_lines
from comparison.render import FORMATS, check_output_folder
from comparison.report import MAX_EXAMPLES
from comparison.significance import MAX_AR_SAMPLES, MAX_BOOTSTRAP_SAMPLES
from score import parse_options


def read_human_scores(specs: Sequence[str], max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> dict[str, list[float]]:
    """``name=path`` files of one human score per line."""
    scores = {}
    for spec in specs:
        name, path = system_name(spec)
        values = []
        for number, line in enumerate(read_file(text_lines, path, "human score", max_line_bytes), start=1):
            try:
                values.append(float(line))
            except ValueError:
                raise ComparisonError(f"compare: {path}:{number}: {line!r:.60} is not a number (one human score "
                                      "per line)") from None
        scores[name] = values
    return scores


def check_figure_names(names: Sequence[str]) -> None:
    """The names the figures draw, drawn once now (before any scoring)."""
    from comparison.plots import check_labels

    try:
        check_labels(names)
    except ValueError as error:
        raise ComparisonError(f"compare: {error}") from None


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
    parser.add_argument("--examples", type=int, default=5,
                        help=f"contrasting examples each way (default 5; 0 to {MAX_EXAMPLES:,})")
    parser.add_argument("--bootstrap-samples", type=int, default=1000,
                        help=f"bootstrap resamples (default 1000; 1 to {MAX_BOOTSTRAP_SAMPLES:,})")
    parser.add_argument("--ar-samples", type=int, default=10000,
                        help=f"approximate randomization trials (default 10000; 0: none; at most {MAX_AR_SAMPLES:,})")
    parser.add_argument("--seed", type=int, default=12345, help="resampling seed (a whole number >= 0)")
    parser.add_argument("--max-line-bytes", type=int, default=DEFAULT_MAX_LINE_BYTES,
                        help=f"refuse an input line longer than this (default {DEFAULT_MAX_LINE_BYTES:,}; 0: no bound)")
    parser.add_argument("--output", type=Path, default=Path("comparison-report"),
                        help="folder for the report (made if absent; must not be a file; must be writable)")
    parser.add_argument("--formats", nargs="+", choices=FORMATS, default=list(FORMATS))
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = build_parser().parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        settings = ResamplingSettings(n_samples=arguments.bootstrap_samples, ar_samples=arguments.ar_samples,
                                      seed=arguments.seed)
        if not 0 <= arguments.examples <= MAX_EXAMPLES:
            raise ComparisonError(f"compare: --examples must be from 0 to {MAX_EXAMPLES:,}, got {arguments.examples}")
        try:
            bound = checked_bound(arguments.max_line_bytes)
        except ValueError as error:
            raise ComparisonError(f"compare: {error}") from None
        check_output_folder(arguments.output, arguments.formats)
        if arguments.jsonl is not None:
            if not arguments.system_fields:
                raise ComparisonError("compare: --jsonl needs --system-fields")
            data = from_jsonl(arguments.jsonl, arguments.system_fields, arguments.reference_field,
                              arguments.source_field, bound)
        else:
            if not arguments.systems:
                raise ComparisonError("compare: give the systems' outputs with -s (or --jsonl)")
            data = from_files(arguments.references, arguments.systems, arguments.sources, bound)
        from comparison.statistics import TASK_METRICS

        metrics = arguments.metrics or list(TASK_METRICS[arguments.task])
        options = {name: values for name, values in parse_options(arguments.option, metrics).items() if values}
        human = read_human_scores(arguments.human, bound) if arguments.human else None
        check_figure_names(list(data.systems))
        report = compare(data, metrics, task=arguments.task, options=options, baseline=arguments.baseline,
                         settings=settings, analysis_metric=arguments.analysis_metric,
                         contrast=tuple(arguments.contrast) if arguments.contrast else None,
                         examples=arguments.examples, human=human, progress=not arguments.quiet)
        written = write_report(report, arguments.output, arguments.formats)
    except ComparisonError as error:
        raise SystemExit(str(error)) from None
    from comparison.render import markdown

    print(markdown(report, []).split("\n## ")[0].rstrip())
    print("\nwritten: " + ", ".join(str(path) for path in written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
