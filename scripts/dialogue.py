#!/usr/bin/env python3
"""Dialogue evaluation in one command: every chosen metric's turn-level and system-level correlation (Pearson,
Spearman, p-values) with each human quality of rated responses, and the annotators' agreement on each quality, as
one table in HTML, Markdown, CSV and JSON.

    python scripts/dialogue.py report ratings.jsonl -m bleu rouge usr -o usr.models=/models/usr --output dialogue/
    python scripts/dialogue.py report usr_topical_chat.json --reference-system "Original Ground Truth" -m bleu rouge
    python scripts/dialogue.py usr-to-jsonl usr_topical_chat.json tc.jsonl --reference-system "Original Ground Truth"

Input (JSONL, one rated response per line): "context", "fact" (optional), "response" (or "prediction"), "system",
"reference" (optional), "ratings" ({quality: [one rating per annotator]}; the i-th rating of every response is
annotator position i's), "annotators" (optional ids, in the ratings' order) and "item" (optional: the context's
id; default the context text). A .json file is read as the USR release (usr_topical_chat.json's format).
`--reference-system NAME`: each context's response by NAME becomes the reference of the other responses to it;
NAME's own responses get none. Reference-based metrics score the responses with a reference, reference-free ones
(usr) every response. Metric options as the scorer takes them (`-o metric.key=value`). Every input, metric name and
option is checked before anything is scored.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from comparison import ComparisonError
from comparison.dialogue import (
    ALPHA_LEVELS,
    dialogue_report,
    read_rows,
    read_usr_json,
    select_systems,
    with_reference_system,
    write_jsonl,
)
from comparison.dialogue_render import DIALOGUE_FORMATS, markdown, render, write
from score import parse_options


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    report = commands.add_parser("report", help="the table of correlations and agreement")
    report.add_argument("input", type=Path, help="JSONL of rated responses, or the USR release's .json")
    report.add_argument("-m", "--metrics", nargs="+", required=True, help="metric names (folders of metrics/)")
    report.add_argument("-o", "--option", action="append", default=[], help="metric.key=value (repeatable)")
    report.add_argument("--reference-system", help="the system whose responses are the others' references")
    report.add_argument("--systems", nargs="+", help="only these systems' responses (default: all)")
    report.add_argument("--agreement-by", choices=("position", "id"), default="position",
                        help="annotators of the agreement: rating positions (default, USR's Table 1) or the ids in "
                             "'annotators'")
    report.add_argument("--alpha-level", choices=ALPHA_LEVELS, default="ordinal",
                        help="Krippendorff's alpha's level of measurement (default: ordinal)")
    report.add_argument("--output", default=None,
                        help="folder for dialogue.<format> files; '-' or none: print one format to stdout")
    report.add_argument("--formats", nargs="+", choices=DIALOGUE_FORMATS, default=None,
                        help="formats written (default: all to a folder, md to stdout)")
    convert = commands.add_parser("usr-to-jsonl", help="the USR release's JSON as JSONL rows")
    convert.add_argument("input", type=Path, help="usr_topical_chat.json or usr_percona_chat.json")
    convert.add_argument("output", type=Path, help="the JSONL file written")
    convert.add_argument("--reference-system", help="the system whose responses become the others' references")
    return parser


def run_report(arguments: argparse.Namespace) -> int:
    to_stdout = arguments.output in (None, "-")
    formats = arguments.formats or (["md"] if to_stdout else list(DIALOGUE_FORMATS))
    if to_stdout and len(formats) != 1:
        raise ComparisonError("dialogue: printing to stdout takes one format; give --output FOLDER for several")
    rows = read_rows(arguments.input)
    if arguments.reference_system is not None:
        rows = with_reference_system(rows, arguments.reference_system)
    if arguments.systems:
        rows = select_systems(rows, arguments.systems)
    options = {name: values for name, values in parse_options(arguments.option, arguments.metrics).items() if values}
    report = dialogue_report(rows, arguments.metrics, options=options, reference_system=arguments.reference_system,
                             agreement_by=arguments.agreement_by, alpha_level=arguments.alpha_level)
    if to_stdout:
        print(render(report, formats[0]), end="")
        return 0
    written = write(report, Path(arguments.output), formats)
    print(markdown(report).split("\n## ")[0].rstrip())
    print("\nwritten: " + ", ".join(str(path) for path in written))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    arguments = build_parser().parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        if arguments.command == "usr-to-jsonl":
            rows = read_usr_json(arguments.input)
            if arguments.reference_system is not None:
                rows = with_reference_system(rows, arguments.reference_system)
            write_jsonl(rows, arguments.output)
            print(f"{len(rows)} rows written to {arguments.output}")
            return 0
        return run_report(arguments)
    except ComparisonError as error:
        raise SystemExit(str(error)) from None


if __name__ == "__main__":
    sys.exit(main())
