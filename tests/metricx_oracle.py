"""The MetricX oracle from the tests' side: the official google-research/metricx code on its own pins.

`metricx_oracle_run.py` runs in the environment of tests/metricx-oracle-requirements.txt (`.venv-metricx`, or the
interpreter `$METRICX_ORACLE_PYTHON`), with the official code copied at tests/official/metricx (or a checkout at `$METRICX_OFFICIAL_REPO`).
`scripts/setup-env tests` builds the environment; without it the parity tests are skipped, naming what to set up.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from learned_oracle import ROOT, run_in

ORACLE_SCRIPT = Path(__file__).resolve().parent / "metricx_oracle_run.py"
OFFICIAL_COPY = Path(__file__).resolve().parent / "official" / "metricx"


def oracle_venv() -> Path:
    """The oracle environment's folder (skips the test without one)."""
    python = os.environ.get("METRICX_ORACLE_PYTHON")
    venv = Path(python).parent.parent if python else ROOT / ".venv-metricx"
    if not (venv / "bin" / "python").is_file():
        pytest.skip(f"the MetricX oracle environment {venv} is missing: see tests/metricx-oracle-requirements.txt")
    return venv


def official_repo() -> Path:
    """The official google-research/metricx code: $METRICX_OFFICIAL_REPO, or the copy in tests/official/metricx."""
    given = os.environ.get("METRICX_OFFICIAL_REPO")
    return Path(given) if given else OFFICIAL_COPY


def build_and_score(folder: Path, tokenizer_folder: Path, training_lines: list[str], repo: Path,
                    requests: list[dict[str, Any]], *, seed: int = 0) -> list[dict[str, Any]]:
    """The oracle builds the tiny checkpoint (``folder``) and tokenizer (``tokenizer_folder``), then scores each
    request (sources, hypotheses, references or None, version, max_input_length) with the official code."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    text = folder.parent / f"{folder.name}-training.txt"
    text.write_text("\n".join(line for line in training_lines if line.strip()) + "\n", encoding="utf-8")
    built = run_in(oracle_venv(), ORACLE_SCRIPT, {
        "action": "build", "folder": str(folder), "tokenizer_folder": str(tokenizer_folder),
        "training_text": str(text), "seed": seed, "official_repo": str(repo), "score": requests,
    }, cwd=folder.parent)
    return built["scored"]
