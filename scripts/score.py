#!/usr/bin/env python3
"""Score outputs with the project's metrics; print a table or JSON.

Text files hold one segment per line; give several reference files for several references per prediction,
and a source file for metrics that read sources (e.g. SARI). A TREC run and qrels (`--run`, `--qrels`) feed the
ranking metrics, one example per query that trec_eval scores (queries of the run without judgements are skipped). JSONL holds one object per line; `--field
column=key` maps an input column of the metrics (predictions, references, sources, ...) to a key of the
objects (defaults: predictions <- prediction, references <- references or reference, sources <- source).
Without `-m`, every metric whose inputs the data can fill is run (text metrics for text, label metrics for
labels); metrics named with `-m` must fit the data, or the command stops before scoring anything.

Input files are UTF-8 (a byte-order mark at the start is dropped); a line that is not UTF-8, a JSONL line that
is not one JSON object, a malformed CSV row, or a line longer than `--max-line-bytes` (default 1,000,000 bytes:
one segment's statistics take about 200 times its size in memory) stops the command with the file and line.
CSV cells are text: the id and text columns (items, annotators, systems, sources, contexts, facts) always stay
strings, so `01` and `1` are two items and `2020` is a text; a column that a metric may take as numbers (labels,
scores: predictions, references, labels) is given to that metric as numbers when every cell of it reads as one
(integers when every cell is an integer), and as the cells' text otherwise.

    python scripts/score.py -p hyp.txt -r ref1.txt ref2.txt -m bleu sacrebleu
    python scripts/score.py --jsonl data.jsonl -m sacrebleu -o sacrebleu.tokenize=intl -o sacrebleu.confidence=true
    python scripts/score.py --jsonl labels.jsonl -m accuracy f1 -o f1.average=macro --format json
    python scripts/score.py --jsonl ratings.csv -m agreement   # a .csv with a header line works as JSONL does
    python scripts/score.py --run run.trec --qrels qrels.trec -m ndcg map -o ndcg.k=[10,100]
    python scripts/score.py -p hyp.txt -r ref.txt -s src.txt -m comet -o comet.checkpoint=/models/wmt22-comet-da
    python scripts/score.py -p hyp.txt -r ref.txt -s src.txt -m metricx -o metricx.checkpoint=/models/metricx-24 \
        -o metricx.tokenizer=/models/mt5-xl
    python scripts/score.py -p hyp.txt -s src.txt -m comet -o comet.checkpoint=/models/wmt22-cometkiwi-da  # no -r: QE
    python scripts/score.py --jsonl dialogues.jsonl -m usr -o usr.models=/models/usr   # "context", "fact", "prediction"
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from comparison.files import DEFAULT_MAX_LINE_BYTES, InputFileError, checked_bound, csv_records, jsonl_records
from comparison.files import raw_lines, text_lines
from project import ROOT

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


def _read(reader, path: Path, *arguments: Any) -> Any:
    """What ``reader`` reads from ``path``; a file that cannot be read or is not the data it should hold stops the
    command with a message naming the file (and line)."""
    try:
        return reader(path, *arguments)
    except InputFileError as error:
        raise SystemExit(f"score: {error}") from None
    except OSError as error:
        raise SystemExit(f"score: cannot read {path}: {error.strerror or error}") from None


def read_text_files(prediction_file: Path, reference_files: Sequence[Path], source_file: Path | None,
                    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Columns:
    """Line-aligned text files as input columns (references: one string per prediction from one file, which every
    text metric takes and MAUVE needs; one list per prediction from several)."""
    predictions = _read(text_lines, prediction_file, max_line_bytes)
    columns: Columns = {"predictions": predictions}
    named = [(path, _read(text_lines, path, max_line_bytes))
             for path in (*reference_files, *([source_file] if source_file else []))]
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


def _check_line_lengths(path: Path, max_line_bytes: int) -> None:
    for _ in raw_lines(path, max_line_bytes):
        pass


def read_trec_files(run_file: Path, qrels_file: Path, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Columns:
    """A TREC run and qrels as ranking input columns: the queries trec_eval scores, in the run's order."""
    from metrics._core.core_ranking import pair_queries, read_trec_qrels, read_trec_run

    for path in (run_file, qrels_file):
        _read(_check_line_lengths, path, max_line_bytes)
    try:
        paired = pair_queries(read_trec_run(run_file), read_trec_qrels(qrels_file), metric="score")
    except (OSError, ValueError) as error:
        raise SystemExit(f"score: {error}") from None
    return {"predictions": paired.runs, "references": paired.qrels}


# The input columns that name things or hold texts: from a CSV file always strings, never numbers.
TEXT_COLUMNS = frozenset({"items", "annotators", "systems", "sources", "contexts", "facts"})
_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


class CsvColumn(list):
    """A CSV column: the cells' text, and ``numbers``, the cells as numbers when every cell of the column reads as
    one (decimal digits, a sign, a point, an exponent, blanks around; all integers: ints, else floats), None
    otherwise. Which of the two a metric gets depends on what its inputs take (:func:`metric_inputs`)."""

    def __init__(self, cells: Sequence[str], numeric: bool) -> None:
        super().__init__(cells)
        self.numbers: list[int] | list[float] | None = None
        stripped = [cell.strip() for cell in cells]
        if numeric and cells:
            try:
                if all(_INTEGER.fullmatch(cell) for cell in stripped):
                    self.numbers = [int(cell) for cell in stripped]
                elif all(_DECIMAL.fullmatch(cell) for cell in stripped):
                    self.numbers = [float(cell) for cell in stripped]
            except ValueError:  # an integer of more digits than Python converts: not a number a metric takes
                self.numbers = None


def _takes_numbers(feature: Any) -> bool:
    """Whether a ``datasets`` feature of a column is a number (a Value of a numeric or boolean type)."""
    dtype = getattr(feature, "dtype", None)
    return type(feature).__name__ == "Value" and dtype not in (None, "string", "large_string")


def metric_inputs(module: Any, columns: Columns) -> Columns:
    """The module's input columns: a CSV column as numbers where the module's features for it (one of their
    alternatives) take numbers and every cell is a number, else as the cells' text."""
    features = module.inputs.features(getattr(module, "config_name", "default"))
    alternatives = features if isinstance(features, list) else [features]
    inputs = {}
    for column in module.inputs.columns:
        if column not in columns and column in module.inputs.optional:
            continue
        values = columns[column]
        if isinstance(values, CsvColumn):
            numeric = values.numbers is not None and any(
                _takes_numbers(alternative.get(column)) for alternative in alternatives if hasattr(alternative, "get"))
            values = values.numbers if numeric else list(values)
        inputs[column] = values
    return inputs


def read_jsonl(path: Path, fields: Mapping[str, Sequence[str]],
               max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Columns:
    """JSONL objects (or the rows of a .csv file) as input columns: for each column, the first of its keys that
    the first record has. CSV columns are :class:`CsvColumn`: text, and numbers where the column may be numbers."""
    is_csv = path.suffix.lower() == ".csv"
    records = _read(csv_records if is_csv else jsonl_records, path, max_line_bytes)
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
        columns[column] = CsvColumn(values, column not in TEXT_COLUMNS) if is_csv else values
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
        missing = [column for column in module.inputs.columns
                   if column not in columns and column not in module.inputs.optional]
        problem = f"needs the input columns {missing}" if missing else None
        absent = module.missing_options((options or {}).get(name, {}))
        if problem is None and absent:
            problem = "needs " + ", ".join(f"`-o {name}.{option}=...`" for option in absent)
        if problem is None:
            try:
                module.inputs.check(name, metric_inputs(module, columns))
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
        results[name] = module.compute(**metric_inputs(module, columns), **options.get(name, {}))
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
            elif key == "error_spans":  # XCOMET's: one list of spans per example
                severities = Counter(span["severity"] for spans in value for span in spans)
                text = f"{sum(severities.values())} in {len(value)} examples" + "".join(
                    f", {severity} {count}" for severity, count in sorted(severities.items()))
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
    parser.add_argument("--max-line-bytes", type=int, default=DEFAULT_MAX_LINE_BYTES,
                        help="refuse an input line (a segment, a JSONL record, a CSV field, a TREC line) longer than "
                             f"this, before any scoring (default {DEFAULT_MAX_LINE_BYTES:,}; 0: no bound)")
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
    try:
        bound = checked_bound(arguments.max_line_bytes)
    except ValueError as error:
        raise SystemExit(f"score: {error}") from None
    if arguments.run is not None:
        columns = read_trec_files(arguments.run, arguments.qrels, bound)
    elif arguments.jsonl:
        columns = read_jsonl(arguments.jsonl, parse_fields(arguments.field), bound)
    else:
        columns = read_text_files(arguments.predictions, arguments.references, arguments.sources, bound)
    modules = load_fitting(metrics, columns, explicit=arguments.metrics is not None, options=options)
    results = score(modules, columns, options)
    if arguments.format == "json":
        print(json.dumps(results, indent=2, ensure_ascii=False))
    else:
        print(format_table(summary_rows(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
