"""The report's formats: one self-contained HTML file (figures inlined as SVG), Markdown, JSON, CSV, LaTeX."""

from __future__ import annotations

import csv
import html
import io
import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from comparison.plots import Figure
from comparison.report import Report
from comparison.statistics import Headline

FORMATS = ("html", "md", "json", "csv", "tex")


def _digits(report: Report, headline: Headline) -> int:
    """Two decimals for numbers on a 0-100 scale, four for numbers on a 0-1 scale."""
    return 2 if abs(report.cell(headline, report.baseline).score) >= 1.5 else 4


def _number(value: float | None, digits: int) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _p(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def table_rows(report: Report) -> list[dict[str, object]]:
    """One record per metric headline and system (the CSV's rows and the JSON's table)."""
    rows = []
    for headline in report.headlines:
        for system in report.systems:
            cell = report.cell(headline, system)
            rows.append({
                "metric": headline.metric, "output": headline.key, "label": headline.label,
                "higher_is_better": headline.higher_is_better, "system": system,
                "baseline": system == report.baseline, "score": cell.score, "bootstrap_mean": cell.interval.mean,
                "interval_low": cell.interval.low, "interval_high": cell.interval.high,
                "p_paired_bootstrap": cell.p_bootstrap, "p_approximate_randomization": cell.p_randomization,
                "significant": cell.significant(report.settings.alpha) if system != report.baseline else None,
            })
    return rows


def _cell_text(report: Report, headline: Headline, system: str) -> tuple[str, str, str]:
    """(score, interval, p-values with the marker) of one cell, as text."""
    cell, digits = report.cell(headline, system), _digits(report, headline)
    interval = f"{_number(cell.interval.low, digits)}-{_number(cell.interval.high, digits)}"
    if system == report.baseline:
        return _number(cell.score, digits), interval, "baseline"
    tests = ", ".join(f"{name} {_p(value)}" for name, value in (("bs", cell.p_bootstrap), ("ar", cell.p_randomization))
                      if value is not None)
    marker = "*" if cell.significant(report.settings.alpha) else ""
    return _number(cell.score, digits) + marker, interval, f"p: {tests}"


def _settings_line(report: Report) -> str:
    settings = report.settings
    tests = f"paired bootstrap ({settings.n_samples} resamples)"
    if settings.ar_samples > 0:
        tests += f" and approximate randomization ({settings.ar_samples} trials)"
    return (f"{len(report.systems)} systems, {report.size} examples, baseline {report.baseline}. "
            f"{settings.level:.0%} bootstrap intervals over {settings.n_samples} resamples shared by every metric and "
            f"system (seed {settings.seed}); {tests} against the baseline; * marks p < {settings.alpha} in every "
            "test run.")


_HUMAN_NOTE = ("Correlation of each metric with the human scores (meta_evaluation): system level, the corpus score "
               "against the mean human score; segment level, per-example numbers against per-example human scores, "
               "grouped by example. Lower-is-better metrics are negated, so positive means agreement.")


_HUMAN_COLUMNS = ("system/pearson", "system/spearman", "system/kendall", "segment/kendall_b", "segment/kendall_like",
                  "segment/pairwise_accuracy")


def _human_names(report: Report) -> list[str]:
    """The correlations shown in the tables (the JSON has every output of meta_evaluation)."""
    given = {name for values in report.human.correlations.values() for name in values}
    return [name for name in _HUMAN_COLUMNS if name in given]


def markdown(report: Report, figures: Sequence[Figure]) -> str:
    lines = ["# System comparison", "", _settings_line(report), ""]
    lines += ["| system | " + " | ".join(h.label for h in report.headlines) + " |",
              "|---|" + "---|" * len(report.headlines)]
    for system in report.systems:
        cells = []
        for headline in report.headlines:
            score, interval, tests = _cell_text(report, headline, system)
            cells.append(f"{score} ({interval}; {tests})")
        lines.append(f"| {system} | " + " | ".join(cells) + " |")
    for table in report.buckets:
        digits = _digits(report, table.headline)
        lines += ["", f"## {table.headline.label} {table.title}", "",
                  "| system | " + " | ".join(f"{b.label} ({len(b.indices)})" for b in table.buckets) + " |",
                  "|---|" + "---|" * len(table.buckets)]
        lines += [f"| {system} | " + " | ".join(_number(value, digits) for value in scores) + " |"
                  for system, scores in table.scores.items()]
    if report.examples:
        first, second = report.contrast
        lines += ["", f"## Examples where {second} and {first} differ most", ""]
        for example in report.examples:
            lines += [f"### Example {example.index} ({second} {'better' if example.difference > 0 else 'worse'})", ""]
            if example.source is not None:
                lines.append(f"- source: {example.source}")
            lines += [f"- reference: {reference}" for reference in example.references]
            for system, output in example.outputs.items():
                numbers = ", ".join(f"{label} {value:.2f}" for label, value in example.scores[system].items())
                lines.append(f"- {system}: {output} ({numbers})")
            lines.append("")
    if report.human is not None:
        names = _human_names(report)
        lines += ["## Agreement with human scores", "", _HUMAN_NOTE, "",
                  "| metric | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
        lines += [f"| {label} | " + " | ".join(_number(values.get(name), 4) for name in names) + " |"
                  for label, values in report.human.correlations.items()]
        lines.append("")
    lines += ["## Figures", ""] + [f"![{figure.title}](figures/{figure.name}.png)" for figure in figures]
    lines += ["", "## Signatures", ""] + [f"- {name}: `{signature}`" for name, signature in report.signatures.items()]
    return "\n".join(lines) + "\n"


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _latex_text(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(character, character) for character in text)


def latex(report: Report) -> str:
    columns = "l" + "r" * len(report.headlines)
    header = " & ".join(["System", *(_latex_text(h.label) + (r" $\uparrow$" if h.higher_is_better else r" $\downarrow$")
                                     for h in report.headlines)])
    lines = [r"\begin{table}[t]", r"\centering", rf"\begin{{tabular}}{{{columns}}}", r"\toprule", header + r" \\",
             r"\midrule"]
    for system in report.systems:
        cells = [_latex_text(system)]
        for headline in report.headlines:
            cell, digits = report.cell(headline, system), _digits(report, headline)
            marker = "$^{*}$" if system != report.baseline and cell.significant(report.settings.alpha) else ""
            cells.append(f"{_number(cell.score, digits)}{marker} {{\\scriptsize $\\pm${cell.interval.half_width:.{digits}f}}}")
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}",
              rf"\caption{{{_latex_text(_settings_line(report))} $\pm$: half the interval's width.}}",
              r"\end{table}"]
    return "\n".join(lines) + "\n"


def csv_text(report: Report) -> str:
    rows = table_rows(report)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def json_text(report: Report) -> str:
    def clean(value):
        return None if isinstance(value, float) and math.isnan(value) else value

    document = {
        "systems": report.systems, "baseline": report.baseline, "examples_scored": report.size,
        "settings": asdict(report.settings), "options": report.options, "signatures": report.signatures,
        "table": [{key: clean(value) for key, value in row.items()} for row in table_rows(report)],
        "buckets": [{"title": table.title, "metric": table.headline.metric, "output": table.headline.key,
                     "buckets": [{"label": b.label, "examples": b.indices} for b in table.buckets],
                     "scores": {system: [clean(v) for v in values] for system, values in table.scores.items()}}
                    for table in report.buckets],
        "agreement_with_human_scores": report.human.correlations if report.human else None,
        "contrast": list(report.contrast) if report.contrast else None,
        "contrasting_examples": [asdict(example) for example in report.examples],
    }
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: right; vertical-align: top; }
th:first-child, td:first-child { text-align: left; }
td.significant .score { color: #c0392b; font-weight: bold; }
.score { font-size: 1.1em; } .detail { color: #666; font-size: 0.8em; display: block; }
figure { margin: 1em 0; } figure svg { max-width: 100%; height: auto; }
.examples td { text-align: left; max-width: 30em; }
code { font-size: 0.8em; }
"""


def _html_table(header: Sequence[str], rows: Sequence[Sequence[str]], css: str = "") -> str:
    head = "".join(f"<th>{html.escape(cell)}</th>" for cell in header)
    body = "".join("<tr>" + "".join(rows_cell for rows_cell in row) + "</tr>" for row in rows)
    return f'<table class="{css}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def html_page(report: Report, figures: Sequence[Figure]) -> str:
    escape = html.escape
    rows = []
    for system in report.systems:
        row = [f"<td>{escape(system)}</td>"]
        for headline in report.headlines:
            score, interval, tests = _cell_text(report, headline, system)
            css = "significant" if system != report.baseline and report.cell(headline, system).significant(
                report.settings.alpha) else ""
            row.append(f'<td class="{css}"><span class="score">{escape(score)}</span>'
                       f'<span class="detail">{escape(interval)}</span><span class="detail">{escape(tests)}</span></td>')
        rows.append(row)
    parts = [f"<h1>System comparison</h1><p>{escape(_settings_line(report))}</p>",
             _html_table(["system", *(h.label + (" ↑" if h.higher_is_better else " ↓") for h in report.headlines)],
                         rows, "scores")]
    for table in report.buckets:
        digits = _digits(report, table.headline)
        parts.append(f"<h2>{escape(table.headline.label)} {escape(table.title)}</h2>")
        parts.append(_html_table(
            ["system", *(f"{b.label} ({len(b.indices)} ex.)" for b in table.buckets)],
            [[f"<td>{escape(system)}</td>", *(f"<td>{_number(v, digits)}</td>" for v in scores)]
             for system, scores in table.scores.items()], "buckets"))
    parts += [f'<figure id="figure-{figure.name}">{figure.svg}<figcaption>{escape(figure.title)}</figcaption></figure>'
              for figure in figures]
    if report.human is not None:
        names = _human_names(report)
        parts.append(f"<h2>Agreement with human scores</h2><p>{escape(_HUMAN_NOTE)}</p>")
        parts.append(_html_table(["metric", *names], [
            [f"<td>{escape(label)}</td>", *(f"<td>{_number(values.get(name), 4)}</td>" for name in names)]
            for label, values in report.human.correlations.items()], "human"))
    if report.examples:
        first, second = report.contrast
        parts.append(f"<h2>Examples where {escape(second)} and {escape(first)} differ most</h2>")
        example_rows = []
        for example in report.examples:
            texts = "".join(f"<div><b>source</b>: {escape(example.source)}</div>" if example.source else "")
            texts += "".join(f"<div><b>reference</b>: {escape(r)}</div>" for r in example.references)
            cells = [f"<td>{example.index}</td>", f"<td>{texts}</td>"]
            for system in (first, second):
                numbers = ", ".join(f"{label} {value:.2f}" for label, value in example.scores[system].items())
                cells.append(f'<td>{escape(example.outputs[system])}<span class="detail">{escape(numbers)}</span></td>')
            example_rows.append(cells)
        parts.append(_html_table(["example", "source and references", first, second], example_rows, "examples"))
    parts.append("<h2>Signatures</h2><ul>" + "".join(
        f"<li>{escape(name)}: <code>{escape(signature)}</code></li>" for name, signature in report.signatures.items())
        + "</ul>")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>System comparison</title>'
            f"<style>{_STYLE}</style></head><body>{''.join(parts)}</body></html>\n")


def write(report: Report, figures: Sequence[Figure], folder: Path, formats: Sequence[str] = FORMATS) -> list[Path]:
    """The report in each format under ``folder`` (``report.<format>``; figures as PNG and SVG in
    ``figures/``); the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "figures").mkdir(exist_ok=True)
    written = []
    for figure in figures:
        (folder / "figures" / f"{figure.name}.png").write_bytes(figure.png)
        (folder / "figures" / f"{figure.name}.svg").write_text(figure.svg, encoding="utf-8")
    render = {"html": lambda: html_page(report, figures), "md": lambda: markdown(report, figures),
              "json": lambda: json_text(report), "csv": lambda: csv_text(report), "tex": lambda: latex(report)}
    for name in formats:
        path = folder / f"report.{name}"
        path.write_text(render[name](), encoding="utf-8")
        written.append(path)
    return written
