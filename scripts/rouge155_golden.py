#!/usr/bin/env python3
"""Write the ROUGE-1.5.5 golden files: what the Perl script ROUGE-1.5.5.pl prints, for tests that run without it.

    ROUGE155_HOME=/path/to/ROUGE-1.5.5 python scripts/rouge155_golden.py [--data ../shared/data] [--full]

The script is run exactly as pyrouge runs it (see tests/rouge155_oracle.py: SEE files, one <EVAL> per example,
``-e <data> -a -d`` plus the options of each setting). Files written under tests/golden/rouge155/:

* generated.json: seeded generated cases (tests/rouge155_cases.py; their SHA-256 is recorded and checked),
  per setting the per-example recall/precision/F (as printed, in units of 1e-5) and the printed averages;
* cnndm_sample.json: a sample of the CNN/DailyMail test set (See et al. 2017 outputs, read from the shared data
  at test time) for the three systems with pyrouge's options, with and without -m;
* cnndm_full.json (``--full``, an hour or more): the averages printed for all 11,490 examples of each system, with
  and without -m (See et al.'s Table 1), and for the extra settings of tests/rouge155_sets.py.

Every file records the script (name and md5), the repository and commit it came from, how its WordNet database
was rebuilt, and each command. Only this script writes them.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import project  # the repository root on sys.path

project.use_test_helpers()

from cnndm_data import CNNDM_FILE, SYSTEMS, read_cnndm  # noqa: E402
from metrics._core.core_rouge155 import MEASURES  # noqa: E402
from rouge155_cases import cases_digest, spec_cases  # noqa: E402
from rouge155_oracle import PYROUGE_OPTIONS, SOURCE, find_rouge155, perl_measure, perl_options, run_rouge155  # noqa: E402
from rouge155_sets import (  # noqa: E402
    CNNDM_OPTION_SETS,
    EDGE_OPTION_SETS,
    GENERATED_OPTION_SETS,
    PYROUGE,
    PYROUGE_NO_STEM,
    cnndm_inputs,
)

GOLDEN = project.ROOT / "tests" / "golden" / "rouge155"
CASES = {"main": {"seed": 155, "count": 250, "tokens_in_references": True},
         "edge": {"seed": 1551, "count": 150, "tokens_in_references": False}}
CNNDM_SAMPLE = list(range(0, 11490, 191))  # 61 examples spread over the test set


def provenance() -> dict:
    return {**SOURCE, "written_by": "scripts/rouge155_golden.py", "date": time.strftime("%Y-%m-%d"),
            "input_writer": "pyrouge 0.1.x convert_text_to_rouge_format (tests/rouge155_oracle.py: see_html)"}


def options_record(options) -> dict:
    return {field.name: getattr(options, field.name) for field in dataclasses.fields(options)}


def pyrouge_flags(options) -> list[str]:
    """pyrouge's own command line for the two pyrouge settings (its options, then -m when stemming)."""
    return list(PYROUGE_OPTIONS) + (["-m"] if options.use_stemmer else [])


def result_record(predictions: list[str], references: list[list[str]], options, flags: list[str] | None = None) -> dict:
    flags = perl_options(options) if flags is None else flags
    output = run_rouge155(predictions, references, flags)
    per_example, averages = {}, {}
    for name in options.rouge_types:
        measure = perl_measure(name, options.w_weight)
        values = []
        for triple in output.per_example[measure]:
            values.extend(int(value.replace(".", "")) for value in triple)
        per_example[name] = values
        averages[name] = output.averages[measure]
    return {"options": options_record(options), "command": output.command, "per_example": per_example,
            "averages": averages, "measures": list(MEASURES)}


def write(name: str, content: dict) -> None:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    path = GOLDEN / name
    path.write_text(json.dumps(content, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB)")


def generated() -> None:
    cases, results = {}, {}
    for key, spec in CASES.items():
        predictions, references = spec_cases(spec)
        cases[key] = {**spec, "sha256": cases_digest(predictions, references)}
        sets = GENERATED_OPTION_SETS if key == "main" else EDGE_OPTION_SETS
        for set_name, options in sets.items():
            print(f"generated/{key}: {set_name}", flush=True)
            results[set_name] = {"cases": key, **result_record(predictions, references, options)}
    write("generated.json", {"provenance": provenance(), "cases": cases, "results": results})


def cnndm_sample(records: list[dict]) -> None:
    sample = [records[index] for index in CNNDM_SAMPLE]
    results = {}
    for system in SYSTEMS:
        for set_name, options in (("pyrouge_m", PYROUGE), ("pyrouge_no_m", PYROUGE_NO_STEM)):
            print(f"cnndm sample: {system} {set_name}", flush=True)
            predictions, references = cnndm_inputs(sample, "pyrouge", system)
            results[f"{system}/{set_name}"] = result_record(predictions, references, options, pyrouge_flags(options))
    write("cnndm_sample.json", {"provenance": provenance(), "data": CNNDM_FILE.as_posix(),
                                "indices": CNNDM_SAMPLE, "results": results})


def cnndm_full(records: list[dict]) -> None:
    results = {}
    for system in SYSTEMS:
        for set_name, options in (("pyrouge_m", PYROUGE), ("pyrouge_no_m", PYROUGE_NO_STEM)):
            print(f"cnndm full: {system} {set_name}", flush=True)
            predictions, references = cnndm_inputs(records, "pyrouge", system)
            record = result_record(predictions, references, options, pyrouge_flags(options))
            del record["per_example"]
            results[f"{system}/{set_name}"] = record
    for set_name, options in CNNDM_OPTION_SETS.items():
        print(f"cnndm full: {set_name}", flush=True)
        predictions, references = cnndm_inputs(records, set_name)
        record = result_record(predictions, references, options)
        del record["per_example"]
        results[set_name] = record
    write("cnndm_full.json", {"provenance": provenance(), "data": CNNDM_FILE.as_posix(),
                              "examples": len(records), "results": results})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=project.SHARED_DATA)
    parser.add_argument("--full", action="store_true", help="also the full CNN/DailyMail averages (slow)")
    parser.add_argument("--only", choices=("generated", "cnndm_sample", "cnndm_full"), help="write one file")
    args = parser.parse_args()
    install, reason = find_rouge155()
    if install is None:
        sys.exit(f"rouge155_golden: {reason}")
    if args.only in (None, "generated"):
        generated()
    if args.only in (None, "cnndm_sample", "cnndm_full"):
        records = read_cnndm(args.data)
        if args.only in (None, "cnndm_sample"):
            cnndm_sample(records)
        if args.full or args.only == "cnndm_full":
            cnndm_full(records)


if __name__ == "__main__":
    main()
