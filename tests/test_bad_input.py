"""Every metric module answers every class of bad input of its input kind with a clear ValueError/TypeError that
names the module and the argument, and the committed catalogue (tests/bad_input_catalogue.md) says so."""

from __future__ import annotations

import pytest

from bad_input_cases import CATALOGUE, answer, bounds_of, cases_for, render
from conftest import load_metric, metric_names

METRICS = metric_names()
CASES = [(name, case) for name in METRICS for case in cases_for(load_metric(name))]


@pytest.mark.parametrize(("name", "case"), CASES, ids=[f"{name}-{case.key}" for name, case in CASES])
def test_bad_input_is_a_clear_error(name: str, case) -> None:
    error, message = answer(load_metric(name), case)
    assert error in ("TypeError", "ValueError"), f"{name} accepted {case.description}"
    assert message.startswith(f"{name}: "), message
    assert f"`{case.names}`" in message or f"'{case.names}'" in message or case.names in message, message


def test_the_catalogue_is_current() -> None:
    rows = [(name, case, *answer(load_metric(name), case)) for name, case in CASES]
    expected = render(rows, [bound for name in metric_names() for bound in bounds_of(load_metric(name))])
    current = CATALOGUE.read_text(encoding="utf-8") if CATALOGUE.is_file() else ""
    assert current == expected, (
        "tests/bad_input_catalogue.md is stale: run `.venv/bin/python scripts/write_bad_input_catalogue.py`"
    )
