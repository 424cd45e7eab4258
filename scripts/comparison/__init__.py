"""Comparing systems: every metric x system with bootstrap intervals and paired tests against a baseline,
bucketed scores, the examples where two systems differ most, figures, and the report in HTML, Markdown, JSON,
CSV and LaTeX. ``scripts/compare.py`` is its command line.

    from comparison import compare, from_files, write_report
    report = compare(from_files([Path("ref.txt")], ["base=a.txt", "new=b.txt"]), task="mt")
    write_report(report, Path("report"))
"""

from __future__ import annotations

from pathlib import Path

from comparison.data import ComparisonData, ComparisonError, from_columns, from_files, from_jsonl
from comparison.report import Report, compare
from comparison.significance import ResamplingSettings

__all__ = ["ComparisonData", "ComparisonError", "Report", "ResamplingSettings", "compare", "from_columns",
           "from_files", "from_jsonl", "write_report"]


def write_report(report: Report, folder: Path, formats=None) -> list[Path]:
    """The report's files under ``folder`` (every format by default, figures in ``folder/figures``)."""
    from comparison.plots import figures
    from comparison.render import FORMATS, write

    return write(report, figures(report), folder, formats or FORMATS)
