"""The dialogue-evaluation table in the comparison report's formats: HTML (self-contained, every text escaped),
Markdown (texts escaped), CSV (formula-like cells neutralised) and JSON; the same rows and numbers in each."""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from comparison.dialogue import DialogueReport, TableRow
from comparison.render import _STYLE, _html_table, _number, csv_document, markdown_code, markdown_text

DIALOGUE_FORMATS = ("html", "md", "csv", "json")
DIGITS = 4
TITLE = "Dialogue evaluation: metrics against human ratings"


def _pvalue(value: float) -> str:
    return f"{value:.{DIGITS}f}" if value >= 10 ** -DIGITS else f"{value:.1e}"


def cell_text(row: TableRow, quality: str) -> str:
    """A cell as the Markdown and HTML tables show it: the value, and its p-value where it has one."""
    text = _number(row.values[quality], DIGITS)
    return text if row.pvalues is None else f"{text} (p={_pvalue(row.pvalues[quality])})"


def _first_columns(row: TableRow) -> list[str]:
    return [row.label, row.level, row.statistic_label, str(row.responses), str(row.systems)]


HEADER = ("metric", "level", "statistic", "responses", "systems")


def _options(report: DialogueReport, name: str) -> str:
    return json.dumps(report.options.get(name, {}), ensure_ascii=False, default=str)


def summary_line(report: DialogueReport) -> str:
    return (f"{report.responses} rated responses of {len(report.systems)} systems ({', '.join(report.systems)}); "
            f"qualities: {', '.join(report.qualities)}.")


def markdown(report: DialogueReport) -> str:
    escape = markdown_text
    lines = [f"# {TITLE}", "", escape(summary_line(report)), "",
             "| " + " | ".join(escape(cell) for cell in (*HEADER, *report.qualities)) + " |",
             "|---|---|---|" + "---:|" * (2 + len(report.qualities))]
    for row in report.table:
        cells = [*_first_columns(row), *(cell_text(row, quality) for quality in report.qualities)]
        lines.append("| " + " | ".join(escape(cell) for cell in cells) + " |")
    lines += ["", *(f"- {escape(note)}" for note in report.notes)]
    if report.signatures:
        lines += ["", "## Metrics", ""] + [
            f"- {escape(name)}: options {markdown_code(_options(report, name))}, signature "
            f"{markdown_code(signature)}" for name, signature in report.signatures.items()]
    return "\n".join(lines) + "\n"


def csv_rows(report: DialogueReport) -> list[dict[str, object]]:
    """One record per table row: the row's names and counts, then each quality's value and p-value (empty for
    agreement)."""
    records = []
    for row in report.table:
        record: dict[str, object] = {"section": row.section, "metric": row.metric, "output": row.output,
                                     "label": row.label, "level": row.level, "statistic": row.statistic,
                                     "statistic_label": row.statistic_label,
                                     "responses": row.responses, "systems": row.systems}
        for quality in report.qualities:
            record[quality] = row.values[quality]
            record[f"{quality} p-value"] = "" if row.pvalues is None else row.pvalues[quality]
        records.append(record)
    return records


def csv_text(report: DialogueReport) -> str:
    return csv_document(csv_rows(report))


def json_text(report: DialogueReport) -> str:
    def clean(value):
        return None if isinstance(value, float) and math.isnan(value) else value

    document = {
        "qualities": report.qualities, "systems": report.systems, "responses": report.responses,
        "reference_system": report.reference_system, "notes": report.notes, "options": report.options,
        "signatures": report.signatures,
        "table": [{key: ({k: clean(v) for k, v in value.items()} if isinstance(value, dict) else value)
                   for key, value in asdict(row).items()} for row in report.table],
    }
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def html_page(report: DialogueReport) -> str:
    escape = html.escape
    rows = []
    for row in report.table:
        cells = [f"<td>{escape(cell)}</td>" for cell in _first_columns(row)]
        for quality in report.qualities:
            value = f'<span class="score">{escape(_number(row.values[quality], DIGITS))}</span>'
            if row.pvalues is not None:
                value += f'<span class="detail">p={escape(_pvalue(row.pvalues[quality]))}</span>'
            cells.append(f"<td>{value}</td>")
        rows.append(cells)
    parts = [f"<h1>{escape(TITLE)}</h1><p>{escape(summary_line(report))}</p>",
             _html_table([*HEADER, *report.qualities], rows, "dialogue"),
             "<ul>" + "".join(f"<li>{escape(note)}</li>" for note in report.notes) + "</ul>"]
    if report.signatures:
        items = [f"<li>{escape(name)}: options <code>{escape(_options(report, name))}</code>, signature "
                 f"<code>{escape(signature)}</code></li>" for name, signature in report.signatures.items()]
        parts.append("<h2>Metrics</h2><ul>" + "".join(items) + "</ul>")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{escape(TITLE)}</title>'
            f"<style>{_STYLE}</style></head><body>{''.join(parts)}</body></html>\n")


RENDER = {"html": html_page, "md": markdown, "csv": csv_text, "json": json_text}


def render(report: DialogueReport, name: str) -> str:
    return RENDER[name](report)


def write(report: DialogueReport, folder: Path, formats: Sequence[str] = DIALOGUE_FORMATS) -> list[Path]:
    """The table in each format under ``folder`` (``dialogue.<format>``); the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in formats:
        path = folder / f"dialogue.{name}"
        path.write_text(render(report, name), encoding="utf-8")
        written.append(path)
    return written
