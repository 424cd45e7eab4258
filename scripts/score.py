#!/usr/bin/env python3
"""Score outputs with the project's metrics; print a table or JSON.

Text files hold one segment per line; give several reference files for several references per prediction,
and a source file for metrics that read sources (e.g. SARI). A TREC run and qrels (`--run`, `--qrels`) feed the
ranking metrics, one example per query that trec_eval scores (queries of the run without judgements are skipped). JSONL holds one object per line; `--field
column=key` maps an input column of the metrics (predictions, references, sources, ...) to a key of the
objects (defaults: predictions <- prediction, references <- references or reference, sources <- source).
Without `-m`, every metric whose inputs the data can fill is run (text metrics for text, label metrics for
labels); metrics named with `-m` must fit the data, or the command stops before scoring anything.

    python scripts/score.py -p hyp.txt -r ref1.txt ref2.txt -m bleu sacrebleu
    python scripts/score.py --jsonl data.jsonl -m sacrebleu -o sacrebleu.tokenize=intl -o sacrebleu.confidence=true
    python scripts/score.py --jsonl labels.jsonl -m accuracy f1 -o f1.average=macro --format json
    python scripts/score.py --jsonl ratings.csv -m agreement   # a .csv with a header line works as JSONL does
    python scripts/score.py --run run.trec --qrels qrels.trec -m ndcg map -o ndcg.k=[10,100]
    python scripts/score.py -p hyp.txt -r ref.txt -s src.txt -m comet -o comet.checkpoint=/models/wmt22-comet-da
    python scripts/score.py --jsonl dialogues.jsonl -m usr -o usr.models=/models/usr   # "context", "fact", "prediction"
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from project import ROOT, jsonl_records, read_lines

METRICS_DIR = ROOT / "metrics"


def available_metrics() -> list[str]:
    """Names of the metric folders in metrics/."""
    return sorted(
        path.name
        for path in METRICS_DIR.iterdir()
        if path.is_dir() and not path.name.startswith(("_", ".")) and (path / f"{path.name}.py").is_file()
    )


Columns = dict[str, list[Any]]
DEFAULT_FIELDS = {"predictions": ("prediction", "predictions"), "references": ("references", "reference"),
                  "sources": ("source", "sources"), "systems": ("system", "systems"), "items": ("item", "items"),
                  "annotators": ("annotator", "annotators"), "labels": ("label", "labels"),
                  "contexts": ("context", "contexts"), "facts": ("fact", "facts")}


def read_text_files(prediction_file: Path, reference_files: Sequence[Path], source_file: Path | None) -> Columns:
    """Line-aligned text files as input columns (references: one string per prediction from one file, which every
    text metric takes and MAUVE needs; one list per prediction from several)."""
    predictions = read_lines(prediction_file)
    columns: Columns = {"predictions": predictions}
    named = [(path, read_lines(path)) for path in (*reference_files, *([source_file] if source_file else []))]
    for path, stream in named:
        if len(stream) != len(predictions):
            raise SystemExit(f"score: {path} has {len(stream)} lines but {prediction_file} has {len(predictions)}")
    if len(reference_files) == 1:
        columns["references"] = named[0][1]
    elif reference_files:
        columns["references"] = [list(group) for group in zip(*(stream for _, stream in named[:len(reference_files)]))]
    if source_file is not None:
        columns["sources"] = named[-1][1]
    return columns


def read_trec_files(run_file: Path, qrels_file: Path) -> Columns:
    """A TREC run and qrels as ranking input columns: the queries trec_eval scores, in the run's order."""
    from metrics._core.core_ranking import pair_queries, read_trec_qrels, read_trec_run

    try:
        paired = pair_queries(read_trec_run(run_file), read_trec_qrels(qrels_file), metric="score")
    except (OSError, ValueError) as error:
        raise SystemExit(f"score: {error}") from None
    return {"predictions": paired.runs, "references": paired.qrels}


def _cell(text: str) -> int | float | str:
    """A CSV cell as an integer or a float where it reads as one, else the text."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def csv_records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, row) of a CSV file with a header line; numbers read as numbers."""
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        return [(reader.line_num, {key: _cell(value) for key, value in row.items()}) for row in reader]


def read_jsonl(path: Path, fields: Mapping[str, Sequence[str]]) -> Columns:
    """JSONL objects (or the rows of a .csv file) as input columns: for each column, the first of its keys that
    the first record has."""
    try:
        records = csv_records(path) if path.suffix.lower() == ".csv" else jsonl_records(path)
    except ValueError as error:
        raise SystemExit(f"score: {error}") from None
    if not records:
        raise SystemExit(f"score: {path} holds no records")
    columns: Columns = {}
    for column, keys in fields.items():
        key = next((key for key in keys if key in records[0][1]), None)
        if key is None:
            continue
        values = []
        for number, record in records:
            if key not in record:
                raise SystemExit(f"score: {path}:{number} has no field {key!r} (column {column!r})")
            values.append(record[key])
        columns[column] = values
    return columns


def parse_fields(pairs: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """``column=key`` pairs over the default field names."""
    fields = dict(DEFAULT_FIELDS)
    for pair in pairs:
        column, separator, key = pair.partition("=")
        if not separator or not column or not key:
            raise SystemExit(f"score: field {pair!r} is not of the form column=key")
        fields[column] = (key,)
    return fields


def parse_options(pairs: Sequence[str], metrics: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``metric.key=value`` pairs into per-metric keyword arguments (values parsed as JSON when they parse)."""
    options: dict[str, dict[str, Any]] = {name: {} for name in metrics}
    for pair in pairs:
        target, separator, raw = pair.partition("=")
        metric, dot, key = target.partition(".")
        if not separator or not dot or not key:
            raise SystemExit(f"score: option {pair!r} is not of the form metric.key=value")
        if metric not in options:
            raise SystemExit(f"score: option {pair!r} names metric {metric!r}, which is not in --metrics")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        options[metric][key] = value
    return options


def load_fitting(names: Sequence[str], columns: Columns, explicit: bool,
                 options: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The metric modules whose inputs the columns fill and whose required options (e.g. a model checkpoint that
    does not ship) are given, checked before any scoring; with ``explicit`` names a metric that does not fit stops
    the command, otherwise it is left out."""
    import evaluate

    modules = {}
    for name in names:
        module = evaluate.load(str(METRICS_DIR / name))
        needed = module.inputs.columns
        missing = [column for column in needed if column not in columns]
        problem = f"needs the input columns {missing}" if missing else None
        absent = module.missing_options((options or {}).get(name, {}))
        if problem is None and absent:
            problem = "needs " + ", ".join(f"`-o {name}.{option}=...`" for option in absent)
        if problem is None:
            try:
                module.inputs.check(name, {column: columns[column] for column in needed})
            except (TypeError, ValueError) as error:
                problem = str(error)
        if problem is None:
            modules[name] = module
        elif explicit:
            raise SystemExit(f"score: {name} cannot score this data: {problem}")
    if not modules:
        raise SystemExit(f"score: no metric fits the data's columns {sorted(columns)}")
    return modules


def score(modules: Mapping[str, Any], columns: Columns, options: Mapping[str, Mapping[str, Any]]
          ) -> dict[str, dict[str, Any]]:
    """Each metric's result (metric name -> result dict)."""
    results = {}
    for name, module in modules.items():
        inputs = {column: columns[column] for column in module.inputs.columns}
        results[name] = module.compute(**inputs, **options.get(name, {}))
    return results


def summary_rows(results: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str, str]]:
    """(metric, key, value) rows: numbers as they are, lists of numbers as their mean, strings as text."""
    rows = []
    for metric, result in results.items():
        for key, value in result.items():
            if isinstance(value, bool):
                text = str(value)
            elif isinstance(value, (int, float)):
                text = f"{value:.4f}" if isinstance(value, float) else str(value)
            elif isinstance(value, str):
                text = value
            elif isinstance(value, Sequence) and value and all(isinstance(item, (int, float)) for item in value):
                if len(value) <= 4:
                    text = " / ".join(f"{item:.4f}" if isinstance(item, float) else str(item) for item in value)
                else:
                    text = f"mean {math.fsum(value) / len(value):.4f} over {len(value)}"
            else:
                continue
            rows.append((metric, key, text))
    return rows


def format_table(rows: Sequence[tuple[str, str, str]]) -> str:
    header = ("metric", "output", "value")
    widths = [max(len(row[column]) for row in (header, *rows)) for column in range(3)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(header, widths, strict=True))]
    lines.append("  ".join("-" * width for width in widths))
    lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("-p", "--predictions", type=Path, help="text file, one prediction per line")
    source.add_argument("--jsonl", type=Path, help="JSONL file (or .csv with a header line) with the input columns")
    source.add_argument("--run", type=Path, help="TREC run file (qid Q0 docno rank score tag); needs --qrels")
    parser.add_argument("--qrels", type=Path, help="TREC qrels file (qid iter docno grade), with --run")
    parser.add_argument("-r", "--references", type=Path, nargs="+", default=[],
                        help="reference text file(s), line-aligned")
    parser.add_argument("-s", "--sources", type=Path, help="source text file, line-aligned")
    parser.add_argument("--field", action="append", default=[], help="JSONL column=key (repeatable)")
    parser.add_argument("-m", "--metrics", nargs="+", default=None, help="metric names (default: all)")
    parser.add_argument("-o", "--option", action="append", default=[], help="metric.key=value (repeatable)")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = build_parser().parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    known = available_metrics()
    metrics = arguments.metrics or known
    unknown = [name for name in metrics if name not in known]
    if unknown:
        raise SystemExit(f"score: unknown metrics {unknown}; available: {known}")
    options = parse_options(arguments.option, metrics)
    if (arguments.run is None) != (arguments.qrels is None):
        raise SystemExit("score: --run and --qrels go together")
    if arguments.run is not None:
        columns = read_trec_files(arguments.run, arguments.qrels)
    elif arguments.jsonl:
        columns = read_jsonl(arguments.jsonl, parse_fields(arguments.field))
    else:
        columns = read_text_files(arguments.predictions, arguments.references, arguments.sources)
    modules = load_fitting(metrics, columns, explicit=arguments.metrics is not None, options=options)
    results = score(modules, columns, options)
    if arguments.format == "json":
        print(json.dumps(results, indent=2, ensure_ascii=False))
    else:
        print(format_table(summary_rows(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
