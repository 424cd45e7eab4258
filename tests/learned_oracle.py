"""Running the learned metrics' oracles (unbabel-comet, bleurt-pytorch) in their own virtual environment.

Their pins (numpy<2, transformers<5, huggingface-hub<1) conflict with the project's, so `scripts/setup-env tests`
installs them into `.venv-oracles` (tests/oracle-requirements.txt). A test hands an oracle script a JSON payload on
standard input and reads the JSON it prints last on standard output; the script runs offline like the tests.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
ORACLE_VENV = ROOT / ".venv-oracles"
_OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def oracle_python() -> Path:
    """The oracle environment's interpreter; the test is skipped, naming the command that builds it, without one."""
    python = ORACLE_VENV / "bin" / "python"
    if not python.is_file():
        pytest.skip(f"the oracle environment {ORACLE_VENV} is missing: run `bash scripts/setup-env tests`")
    return python


def run_oracle(script: Path, payload: dict[str, Any], *, timeout: float = 900) -> Any:
    """Run ``script`` with the oracle environment's interpreter on ``payload``; its last line of output, as JSON."""
    python = oracle_python()
    environment = {**os.environ, **_OFFLINE, "PYTHONWARNINGS": "ignore"}
    environment.pop("PYTHONPATH", None)
    done = subprocess.run([str(python), str(script)], input=json.dumps(payload), capture_output=True, text=True,
                          env=environment, timeout=timeout, check=False)
    if done.returncode != 0:
        raise AssertionError(f"oracle {script.name} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])
