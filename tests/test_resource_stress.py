"""Issue 32, requirement 3: every module, grown along each of its costly dimensions, finishes within its stated
bound or refuses early with its clear error, under a memory limit and a time limit in a subprocess.

The default run scores every case at small scale (its bound lowered, so that a refusal shows in seconds) in one
child process; ``-m slow`` runs every case at full scale with the module's default bounds, one child each.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from conftest import metric_names
from resource_stress import GIB, StressCase, check_outcome, run_cases

_FAMILIES = sorted(path.stem for path in Path(__file__).parent.glob("stress_cases_*.py"))
CASES: list[StressCase] = [case for family in _FAMILIES for case in importlib.import_module(family).STRESS_CASES]


@pytest.fixture(scope="module")
def small_outcomes() -> tuple[list[dict[str, Any]], str]:
    return run_cases([(case, "small") for case in CASES], timeout=600, memory=12 * GIB)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[case.id for case in CASES])
def test_small_scale(index: int, small_outcomes: tuple[list[dict[str, Any]], str]) -> None:
    outcomes, errors = small_outcomes
    check_outcome(CASES[index], outcomes[index] if index < len(outcomes) else None, errors, "small")


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_full_scale(case: StressCase) -> None:
    outcomes, errors = run_cases([(case, "full")], timeout=case.seconds + 60, memory=case.memory_gib * GIB)
    check_outcome(case, outcomes[0] if outcomes else None, errors, "full")


def test_every_module_has_a_case() -> None:
    assert sorted(set(metric_names()) - {case.module for case in CASES}) == []
