"""The README's "Where to use it" code blocks, each run by the test its first line names.

Each Python block there begins with a comment saying where it runs: ``# run by tests/<file>`` (that test file runs
it, in the environment it needs) or ``# needs ...`` (a network, an account or the reader's own model: compiled
only, by tests/test_readme.py). The YAML block of the lm-evaluation-harness route is run with its ``utils.py``.
"""

from __future__ import annotations

import re

from conftest import ROOT

SECTION = "## Where to use it"
RUN_BY = "# run by tests/"
NEEDS = "# needs "


def section() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return readme.split(SECTION, 1)[1].split("\n## ", 1)[0]


def blocks(language: str = "python") -> list[str]:
    """Every ``language`` code block of the section, in order."""
    return re.findall(rf"```{language}\n(.*?)```", section(), flags=re.DOTALL)


def blocks_run_by(test_file: str, language: str = "python") -> list[str]:
    """The Python blocks whose first line says ``# run by tests/<test_file>``."""
    return [block for block in blocks(language) if block.startswith(f"{RUN_BY}{test_file}")]
