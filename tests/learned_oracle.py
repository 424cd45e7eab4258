"""Running code whose pins conflict with the project's in its own virtual environment.

Two environments beside `.venv`, both built by `scripts/setup-env tests`:

* `.venv-oracles` (tests/oracle-requirements.txt): the learned metrics' oracles, unbabel-comet and bleurt-pytorch,
  whose pins (numpy<2, transformers<5, huggingface-hub<1) conflict with the project's;
* `.venv-usr` (tests/usr-oracle-requirements.txt): transformers 2.2.0, on which the official USR code runs;
* `.venv-clients` (tests/clients-requirements.txt): the clients that cannot share the project's pins, lighteval
  (nltk 3.9.1) and evaluate's evaluator tasks that need transformers 4's pipelines, with the project installed.

A test hands a script a JSON payload on standard input and reads the JSON it prints last on standard output; the
script runs offline like the tests.
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
CLIENTS_VENV = ROOT / ".venv-clients"
USR_VENV = ROOT / ".venv-usr"
_OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false"}


def environment_python(venv: Path) -> Path:
    """An environment's interpreter; the test is skipped, naming the command that builds it, without one."""
    python = venv / "bin" / "python"
    if not python.is_file():
        pytest.skip(f"the environment {venv} is missing: run `bash scripts/setup-env tests`")
    return python


def oracle_python() -> Path:
    """The oracle environment's interpreter."""
    return environment_python(ORACLE_VENV)


def run_in(venv: Path, script: Path, payload: dict[str, Any], *, timeout: float | None = 900,
           cwd: Path | None = None) -> Any:
    """Run ``script`` with ``venv``'s interpreter on ``payload`` (in ``cwd``); its last line of output, as JSON."""
    python = environment_python(venv)
    environment = {**os.environ, **_OFFLINE, "PYTHONWARNINGS": "ignore"}
    environment.pop("PYTHONPATH", None)
    done = subprocess.run([str(python), str(script)], input=json.dumps(payload), capture_output=True, text=True,
                          env=environment, timeout=timeout, check=False, cwd=cwd)
    if done.returncode != 0:
        raise AssertionError(f"{script.name} in {venv.name} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_oracle(script: Path, payload: dict[str, Any], *, timeout: float | None = 900) -> Any:
    """Run an oracle script in `.venv-oracles`."""
    return run_in(ORACLE_VENV, script, payload, timeout=timeout)


def run_usr_oracle(script: Path, payload: dict[str, Any], *, timeout: float = 900) -> Any:
    """Run an oracle script in `.venv-usr`."""
    return run_in(USR_VENV, script, payload, timeout=timeout)


def run_in_clients(script: Path, payload: dict[str, Any], *, timeout: float = 900) -> Any:
    """Run a script in `.venv-clients`."""
    return run_in(CLIENTS_VENV, script, payload, timeout=timeout)
