"""The report's figures (matplotlib, no display needed): intervals per metric and system, per-bucket bars and a
per-example scatter of two metrics; each as PNG bytes and SVG text.

Names that come from the data (systems; metric labels) are drawn as plain text: a ``$`` is escaped, so that
matplotlib's mathtext never parses a name such as ``sys$\\euro$`` (and fails after all the scoring), control
characters become spaces and a name is shortened to :data:`LABEL_CHARS` characters in the figures (the tables
keep it whole). :func:`check_labels` draws the names once, before any scoring.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np

from comparison.analysis import BucketTable
from comparison.report import Report


LABEL_CHARS = 60


def plain(text: str, legend: bool = False) -> str:
    """``text`` as matplotlib draws it literally: ``$`` escaped (no mathtext), control characters as spaces,
    at most :data:`LABEL_CHARS` characters; in a legend, a leading ``_`` (which hides an entry) kept visible."""
    text = "".join(" " if ord(character) < 32 or 0x7F <= ord(character) < 0xA0 else character
                   for character in str(text))
    if len(text) > LABEL_CHARS:
        text = text[:LABEL_CHARS - 1] + "…"
    text = text.replace("$", r"\$")
    return " " + text if legend and text.startswith("_") else text


@dataclass(frozen=True)
class Figure:
    name: str
    title: str
    png: bytes
    svg: str


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "none", "font.size": 9, "axes.spines.top": False,
                         "axes.spines.right": False})
    return plt


def _saved(plt, figure, name: str, title: str) -> Figure:
    png, svg = io.BytesIO(), io.StringIO()
    figure.savefig(png, format="png", dpi=110, bbox_inches="tight")
    figure.savefig(svg, format="svg", bbox_inches="tight")
    plt.close(figure)
    text = svg.getvalue()
    return Figure(name, title, png.getvalue(), text[text.index("<svg"):])


def interval_figure(report: Report) -> Figure:
    plt = _pyplot()
    count = len(report.headlines)
    columns = min(count, 3)
    rows = -(-count // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(3.6 * columns, 0.35 * len(report.systems) * rows + 1.4),
                                squeeze=False, sharey=True)
    positions = np.arange(len(report.systems))[::-1]
    for axis, headline in zip(axes.flat, report.headlines):
        for position, system in zip(positions, report.systems):
            cell = report.cell(headline, system)
            baseline = system == report.baseline
            colour = "#444444" if baseline else ("#c0392b" if cell.significant(report.settings.alpha) else "#2e86c1")
            axis.errorbar(cell.score, position, xerr=[[cell.score - cell.interval.low], [cell.interval.high - cell.score]],
                          fmt="D" if baseline else "o", color=colour, capsize=3, markersize=4)
        axis.set_yticks(positions, [plain(system) for system in report.systems])
        axis.tick_params(axis="y", labelleft=axis.get_subplotspec().is_first_col())
        axis.set_title(plain(f"{headline.label} ({'higher' if headline.higher_is_better else 'lower'} is better)"))
        axis.grid(axis="x", alpha=0.3)
    for axis in list(axes.flat)[count:]:
        axis.set_visible(False)
    figure.suptitle(f"Scores with {report.settings.level:.0%} bootstrap intervals; red: differs from "
                    f"{plain(report.baseline)} (p < {report.settings.alpha})", fontsize=9)
    figure.tight_layout(rect=(0, 0, 1, 0.92))
    return _saved(plt, figure, "intervals", "Scores and bootstrap intervals")


def bucket_figure(table: BucketTable, index: int) -> Figure:
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(max(5.0, 1.2 * len(table.buckets) * max(1, len(table.scores)) / 2), 3.0))
    width = 0.8 / len(table.scores)
    places = np.arange(len(table.buckets))
    for offset, (system, scores) in enumerate(table.scores.items()):
        axis.bar(places + offset * width - 0.4 + width / 2, np.nan_to_num(scores), width,
                 label=plain(system, legend=True))
    axis.set_xticks(places, [f"{plain(bucket.label)}\n({len(bucket.indices)} ex.)" for bucket in table.buckets])
    axis.set_ylabel(plain(table.headline.label))
    axis.set_title(plain(f"{table.headline.label} {table.title}"))
    axis.legend(fontsize=7, ncols=min(4, len(table.scores)), loc="upper left", bbox_to_anchor=(0, -0.25))
    return _saved(plt, figure, f"buckets-{index}", f"{table.headline.label} {table.title}")


def scatter_figure(report: Report) -> Figure | None:
    """Per-example numbers of the first headlines of the first two metrics for the two contrasted systems (None
    with a single metric or a single system)."""
    firsts = [headline for index, headline in enumerate(report.headlines)
              if index == 0 or headline.metric != report.headlines[index - 1].metric]
    if len(firsts) < 2 or report.contrast is None:
        return None
    x_line, y_line = firsts[:2]
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(4.8, 4.2))
    for system in report.contrast:
        axis.scatter(report.per_example[(x_line.metric, system)][:, 0], report.per_example[(y_line.metric, system)][:, 0],
                     s=6, alpha=0.5, label=plain(system, legend=True), rasterized=True)
    axis.set_xlabel(plain(f"{x_line.label} per example"))
    axis.set_ylabel(plain(f"{y_line.label} per example"))
    axis.legend(fontsize=7, markerscale=2)
    return _saved(plt, figure, "scatter", f"{x_line.label} against {y_line.label} per example")


def check_labels(texts) -> None:
    """Draw each text as the figures will (so a name matplotlib cannot draw fails now, before any scoring, with
    a message naming it)."""
    plt = _pyplot()
    figure = plt.figure(figsize=(2, 1))
    try:
        for text in texts:
            label = figure.text(0, 0, plain(text))
            try:
                figure.canvas.draw()
            except Exception as error:  # noqa: BLE001 - matplotlib raises many kinds; the message names the text
                raise ValueError(f"the name {text!r:.80} cannot be drawn in the report's figures: {error}") from None
            label.remove()
    finally:
        plt.close(figure)


def figures(report: Report) -> list[Figure]:
    made = [interval_figure(report), *(bucket_figure(table, index) for index, table in enumerate(report.buckets))]
    scatter = scatter_figure(report)
    return made + ([scatter] if scatter is not None else [])
