"""The report's formats: one self-contained HTML file (figures inlined as SVG), Markdown, JSON, CSV, LaTeX.

System names, outputs, references and sources are data, never markup, in every format: HTML escapes them;
Markdown backslash-escapes the characters that make links, images, emphasis, code, math, raw HTML or entities
(``\\ ` * _ [ ] < > & ~ $ |``) and puts newlines as spaces, so a table row keeps its cells
(:func:`markdown_text`); CSV prefixes a cell that a spreadsheet would run as a formula (starting with
``= + - @``, a tab or a carriage return, after blanks or in full width too) with a single quote, as OWASP
recommends (:func:`csv_cell`); LaTeX escapes its special characters (:func:`latex_text`). Files are written only
under the output folder, each completely or not at all (a temporary file renamed into place), and a folder that
cannot take them is refused before any scoring (:func:`check_output_folder`).
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from comparison.data import ComparisonError
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


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>&~$|])")
_LINE_BREAKS = re.compile(r"\r\n|[\r\n\v\f\x85\u2028\u2029]")


def markdown_text(text: object) -> str:
    """Text as Markdown shows it literally, on one line and inside a table cell: the characters that start
    links, images, emphasis, code, math, strike-through, raw HTML or entities backslash-escaped (CommonMark
    renders an escaped character as itself), ``|`` escaped (GitHub's tables), line breaks as spaces."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", _LINE_BREAKS.sub(" ", str(text)))


def markdown_code(text: object) -> str:
    """Text as a Markdown code span (shown verbatim, never markup): fenced by more backticks than it holds."""
    text = _LINE_BREAKS.sub(" ", str(text))
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    padding = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{padding}{text}{padding}{fence}"


def markdown_row(cells: Sequence[object]) -> str:
    """A Markdown table row of texts (each escaped by :func:`markdown_text`)."""
    return "| " + " | ".join(markdown_text(cell) for cell in cells) + " |"


def markdown(report: Report, figures: Sequence[Figure]) -> str:
    md = markdown_text
    lines = ["# System comparison", "", md(_settings_line(report)), ""]
    lines += [markdown_row(["system", *(h.label for h in report.headlines)]), "|---|" + "---|" * len(report.headlines)]
    for system in report.systems:
        cells = []
        for headline in report.headlines:
            score, interval, tests = _cell_text(report, headline, system)
            cells.append(f"{score} ({interval}; {tests})")
        lines.append(markdown_row([system, *cells]))
    for table in report.buckets:
        digits = _digits(report, table.headline)
        lines += ["", f"## {md(table.headline.label)} {md(table.title)}", "",
                  markdown_row(["system", *(f"{b.label} ({len(b.indices)})" for b in table.buckets)]),
                  "|---|" + "---|" * len(table.buckets)]
        lines += [markdown_row([system, *(_number(value, digits) for value in scores)])
                  for system, scores in table.scores.items()]
    if report.examples:
        first, second = report.contrast
        lines += ["", f"## Examples where {md(second)} and {md(first)} differ most", ""]
        for example in report.examples:
            lines += [f"### Example {example.index} ({md(second)} "
                      f"{'better' if example.difference > 0 else 'worse'})", ""]
            if example.source is not None:
                lines.append(f"- source: {md(example.source)}")
            lines += [f"- reference: {md(reference)}" for reference in example.references]
            for system, output in example.outputs.items():
                numbers = ", ".join(f"{label} {value:.2f}" for label, value in example.scores[system].items())
                lines.append(f"- {md(system)}: {md(output)} ({md(numbers)})")
                lines += [f"  - {md(label)}: {md(annotation_text(value))}"
                          for label, value in example.annotations.get(system, {}).items()]
            lines.append("")
    if report.human is not None:
        names = _human_names(report)
        lines += ["## Agreement with human scores", "", md(_HUMAN_NOTE), "",
                  markdown_row(["metric", *names]), "|---|" + "---|" * len(names)]
        lines += [markdown_row([label, *(_number(values.get(name), 4) for name in names)])
                  for label, values in report.human.correlations.items()]
        lines.append("")
    lines += ["## Figures", ""] + [f"![{md(figure.title)}](figures/{figure.name}.png)" for figure in figures]
    lines += ["", "## Signatures", ""] + [f"- {md(name)}: {markdown_code(signature)}"
                                          for name, signature in report.signatures.items()]
    return "\n".join(lines) + "\n"


def annotation_text(value: Any) -> str:
    """A per-example annotation as text: error spans as "text" (severity, characters start-end, confidence)."""
    if isinstance(value, list) and all(isinstance(item, dict) and "severity" in item for item in value):
        return "; ".join(f'"{span["text"]}" ({span["severity"]}, {span["start"]}-{span["end"]}, '
                         f'{span["confidence"]:.2f})' for span in value) or "none"
    return str(value)


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  # OT1 fonts draw < > | as other glyphs; a [ right after a row's \\ would be read as its argument
                  "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}", "[": "{[}", "]": "{]}"}


def latex_text(text: object) -> str:
    """Text as LaTeX typesets it literally: special characters escaped, line breaks and other control
    characters (a blank line would end the table's paragraph) as spaces."""
    return "".join(_LATEX_SPECIAL.get(character, " " if ord(character) < 32 or ord(character) == 0x7F else character)
                   for character in str(text))




def latex(report: Report) -> str:
    columns = "l" + "r" * len(report.headlines)
    header = " & ".join(["System", *(latex_text(h.label) + (r" $\uparrow$" if h.higher_is_better else r" $\downarrow$")
                                     for h in report.headlines)])
    lines = [r"\begin{table}[t]", r"\centering", rf"\begin{{tabular}}{{{columns}}}", r"\toprule", header + r" \\",
             r"\midrule"]
    for system in report.systems:
        cells = [latex_text(system)]
        for headline in report.headlines:
            cell, digits = report.cell(headline, system), _digits(report, headline)
            marker = "$^{*}$" if system != report.baseline and cell.significant(report.settings.alpha) else ""
            cells.append(f"{_number(cell.score, digits)}{marker} {{\\scriptsize $\\pm${cell.interval.half_width:.{digits}f}}}")
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}",
              rf"\caption{{{latex_text(_settings_line(report))} $\pm$: half the interval's width.}}",
              r"\end{table}"]
    return "\n".join(lines) + "\n"


_FORMULA_START = frozenset("=+-@\t\r\uff1d\uff0b\uff0d\uff20")


def csv_cell(value: object) -> object:
    """A CSV cell that no spreadsheet runs as a formula (OWASP's CSV injection advice): a text starting with
    ``= + - @``, a tab or a carriage return (also after blanks, and their full-width forms) gets a leading single
    quote; numbers and other texts are unchanged."""
    if isinstance(value, str) and value and (value[0] in _FORMULA_START or value.lstrip()[:1] in _FORMULA_START):
        return "'" + value
    return value


def csv_document(records: Sequence[Mapping[str, object]]) -> str:
    """Records as CSV text: a header of the first record's keys, one row per record, every cell through
    :func:`csv_cell`."""
    names = list(records[0])
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([csv_cell(name) for name in names])
    writer.writerows([csv_cell(record.get(name)) for name in names] for record in records)
    return out.getvalue()


def csv_text(report: Report) -> str:
    return csv_document(table_rows(report))


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
                notes = "".join(f'<span class="detail">{escape(label)}: {escape(annotation_text(value))}</span>'
                                for label, value in example.annotations.get(system, {}).items())
                cells.append(f'<td>{escape(example.outputs[system])}<span class="detail">{escape(numbers)}</span>'
                             f'{notes}</td>')
            example_rows.append(cells)
        parts.append(_html_table(["example", "source and references", first, second], example_rows, "examples"))
    parts.append("<h2>Signatures</h2><ul>" + "".join(
        f"<li>{escape(name)}: <code>{escape(signature)}</code></li>" for name, signature in report.signatures.items())
        + "</ul>")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>System comparison</title>'
            f"<style>{_STYLE}</style></head><body>{''.join(parts)}</body></html>\n")


_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _inside(folder: Path, *parts: str) -> Path:
    """``folder/parts...`` for names the report makes; a name that could leave the folder is a bug, refused."""
    for part in parts:
        if not _SAFE_NAME.fullmatch(part) or ".." in part:
            raise ValueError(f"compare: refusing to write {part!r} (not a plain file name) under {folder}")
    return folder.joinpath(*parts)


def _refuse_link(path: Path) -> None:
    if path.is_symlink():
        raise ComparisonError(f"compare: {path} is a symbolic link; the report writes only plain files inside its "
                              "folder, so remove it or choose another --output")


def check_output_folder(folder: Path, formats: Sequence[str] = FORMATS) -> None:
    """Refuse, before any scoring, an output folder the report cannot be written to: a path that is a file (or
    under one), a folder that cannot be written, a link or a folder where a report file or ``figures`` goes. The
    check writes and removes a temporary file in the folder (or in its nearest existing parent)."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ComparisonError(f"compare: --output {folder} is an existing file, not a folder; the report is a folder "
                              "of files (report.html, report.md, ..., figures/)")
    existing = folder
    while not existing.exists():
        if existing.is_symlink():
            raise ComparisonError(f"compare: --output {folder}: {existing} is a broken symbolic link")
        existing = existing.parent
    if not existing.is_dir():
        raise ComparisonError(f"compare: --output {folder} cannot be made: {existing} is a file, not a folder")
    if existing == folder:
        for name in (*(f"report.{name}" for name in formats), "figures"):
            path = folder / name
            _refuse_link(path)
            if name == "figures" and path.exists() and not path.is_dir():
                raise ComparisonError(f"compare: {path} is a file; the figures go in a folder of that name")
            if name != "figures" and path.is_dir():
                raise ComparisonError(f"compare: {path} is a folder; the report writes a file of that name there")
    try:
        handle, probe = tempfile.mkstemp(dir=existing, prefix=".compare-probe-")
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        raise ComparisonError(f"compare: --output {folder} cannot be written ({existing}: "
                              f"{error.strerror or error})") from None


def _write_file(path: Path, data: bytes) -> None:
    """``data`` into ``path`` completely or not at all: a temporary file beside it, renamed over it."""
    _refuse_link(path)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        try:
            mask = os.umask(0)
            os.umask(mask)
            os.fchmod(handle, 0o666 & ~mask)  # the mode a plain open() gives, not mkstemp's private 0600
        except BaseException:
            os.close(handle)
            raise
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def write(report: Report, figures: Sequence[Figure], folder: Path, formats: Sequence[str] = FORMATS) -> list[Path]:
    """The report in each format under ``folder`` (``report.<format>``; figures as PNG and SVG in
    ``figures/``); the paths written. Everything is rendered before anything is written; each file is written
    whole or not at all, and a write that fails (a full disk) raises a ComparisonError naming the file."""
    unknown = [name for name in formats if name not in FORMATS]
    if unknown:
        raise ComparisonError(f"compare: unknown report formats {unknown}; choose from {list(FORMATS)}")
    folder = Path(folder)
    render = {"html": lambda: html_page(report, figures), "md": lambda: markdown(report, figures),
              "json": lambda: json_text(report), "csv": lambda: csv_text(report), "tex": lambda: latex(report)}
    files = []
    for figure in figures:
        files.append((_inside(folder, "figures", f"{figure.name}.png"), figure.png))
        files.append((_inside(folder, "figures", f"{figure.name}.svg"), figure.svg.encode("utf-8")))
    files += [(_inside(folder, f"report.{name}"), render[name]().encode("utf-8")) for name in formats]
    check_output_folder(folder, formats)
    done: list[Path] = []
    for path, data in files:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_file(path, data)
        except OSError as error:
            raise ComparisonError(f"compare: could not write {path}: {error.strerror or error}; nothing of it is "
                                  f"left, and the {len(done)} files written before it are complete") from None
        done.append(path)
    return [path for path in done if path.parent == folder]
