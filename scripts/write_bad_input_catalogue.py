#!/usr/bin/env python3
"""Write tests/bad_input_catalogue.md: every class of bad input (tests/bad_input_cases.py) given to every metric
module, with the error each answers. tests/test_bad_input.py fails when the file is stale.

    .venv/bin/python scripts/write_bad_input_catalogue.py
"""

from __future__ import annotations

import os
import tempfile

import project

for variable in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_EVALUATE_OFFLINE"):
    os.environ[variable] = "1"
os.environ.setdefault("HF_MODULES_CACHE", tempfile.mkdtemp(prefix="bad-input-modules-"))
project.use_test_helpers()

from bad_input_cases import CATALOGUE, answer, bounds_of, cases_for, render  # noqa: E402
from conftest import load_metric, metric_names  # noqa: E402


def main() -> None:
    rows, bounds = [], []
    for name in metric_names():
        module = load_metric(name)  # as the tests load it: bound to the suite's tiny model where one is needed
        rows += [(name, case, *answer(module, case)) for case in cases_for(module)]
        bounds += bounds_of(module)
    CATALOGUE.write_text(render(rows, bounds), encoding="utf-8")
    print(f"wrote {CATALOGUE.relative_to(project.ROOT)} ({len(rows)} cases)")


if __name__ == "__main__":
    main()
