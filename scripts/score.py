#!/usr/bin/env python3
"""Score predictions against references with the project's metrics; print a table or JSON.

Text files hold one segment per line; give several reference files for several
references per prediction. JSONL holds one object per line with a prediction
field and a reference field (a string or a list of strings).

    python scripts/score.py -p hyp.txt -r ref1.txt ref2.txt -m bleu sacrebleu
    python scripts/score.py --jsonl data.jsonl -m sacrebleu -o sacrebleu.tokenize=intl -o sacrebleu.confidence=true
    python scripts/score.py -p hyp.txt -r ref.txt --format json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
METRICS_DIR = ROOT / "metrics"


def available_metrics() -> list[str]:
    """Names of the metric folders in metrics/."""
    return sorted(
        path.name
        for path in METRICS_DIR.iterdir()
        if path.is_dir() and not path.name.startswith(("_", ".")) and (path / f"{path.name}.py").is_file()
    )


def read_segments(path: Path) -> list[str]:
    """One segment per line, newline removed (other whitespace kept, as sacreBLEU reads files)."""
    with open(path, encoding="utf-8", newline="\n") as handle:
        return [line[:-1] if line.endswith("\n") else line for line in handle]


def read_text_files(prediction_file: Path, reference_files: Sequence[Path]) -> tuple[list[str], list[list[str]]]:
    predictions = read_segments(prediction_file)
    streams = [read_segments(path) for path in reference_files]
    for path, stream in zip(reference_files, streams, strict=True):
        if len(stream) != len(predictions):
            raise SystemExit(f"score: {path} has {len(stream)} lines but {prediction_file} has {len(predictions)}")
    return predictions, [list(references) for references in zip(*streams)]


def read_jsonl(path: Path, prediction_field: str, reference_field: str) -> tuple[list[str], list[list[str]]]:
    predictions, references = [], []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            record = json.loads(line)
            for field in (prediction_field, reference_field):
                if field not in record:
                    raise SystemExit(f"score: {path}:{number} has no field {field!r}")
            reference = record[reference_field]
            predictions.append(record[prediction_field])
            references.append([reference] if isinstance(reference, str) else list(reference))
    return predictions, references


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


def score(
    predictions: list[str], references: list[list[str]], options: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Each metric's result (metric name -> result dict), metrics loaded from metrics/ with evaluate.load."""
    import evaluate

    results = {}
    for name, metric_options in options.items():
        module = evaluate.load(str(METRICS_DIR / name))
        results[name] = module.compute(predictions=predictions, references=references, **metric_options)
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
    source.add_argument("--jsonl", type=Path, help="JSONL file with predictions and references")
    parser.add_argument("-r", "--references", type=Path, nargs="+", help="reference text file(s), line-aligned")
    parser.add_argument("--prediction-field", default="prediction", help="JSONL field of the prediction")
    parser.add_argument("--reference-field", default="references", help="JSONL field of the reference(s)")
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
    if arguments.jsonl:
        predictions, references = read_jsonl(arguments.jsonl, arguments.prediction_field, arguments.reference_field)
    else:
        if not arguments.references:
            raise SystemExit("score: give --references with --predictions")
        predictions, references = read_text_files(arguments.predictions, arguments.references)
    results = score(predictions, references, parse_options(arguments.option, metrics))
    if arguments.format == "json":
        print(json.dumps(results, indent=2, ensure_ascii=False))
    else:
        print(format_table(summary_rows(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
