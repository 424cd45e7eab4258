"""The command-line scorer (scripts/score.py) run the two ways the tests use it: as its own process, as a user runs
it, and inside the test's process through its ``main(argv)``, which reads the same arguments and prints the same
output, without a fresh process's ~5 s import of evaluate (transformers' pipelines, torch) and with the models
the test process already loaded. Both give a ``subprocess.CompletedProcess``: exit code, standard output and
error as text."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "score.py"


def score_in_a_process(arguments: Sequence[str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``python scripts/score.py ARGUMENTS`` in a fresh process."""
    return subprocess.run([sys.executable, str(SCRIPT), *arguments], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def score_in_this_process(arguments: Sequence[str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``score.main(ARGUMENTS)`` here, with what a process would give: the code of ``SystemExit`` (its message on
    standard error, exit code 1, as Python's own handler does) or ``main``'s return value."""
    if str(SCRIPT.parent) not in sys.path:
        sys.path.insert(0, str(SCRIPT.parent))
    import score

    stdout, stderr = io.StringIO(), io.StringIO()
    previous = Path.cwd()
    try:
        os.chdir(cwd or previous)
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                code = score.main(list(arguments))
            except SystemExit as stop:
                if isinstance(stop.code, str):
                    print(stop.code, file=sys.stderr)
                    code = 1
                else:
                    code = stop.code or 0
    finally:
        os.chdir(previous)
    return subprocess.CompletedProcess([str(SCRIPT), *arguments], code, stdout.getvalue(), stderr.getvalue())
