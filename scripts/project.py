"""What the project's scripts (and tests) share: the repository root on ``sys.path``, so the core imports
as ``metrics._core`` everywhere, and readers of the real data in ``../shared/data``.

Scripts run as ``python scripts/<name>.py`` have ``scripts/`` on ``sys.path`` and start with
``import project``.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from itertools import islice
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"
WMT17 = SHARED_DATA / "wmt17-en-de"
CNNDM = SHARED_DATA / "cnndm-see2017" / "test.jsonl.gz"
CNNDM_SYSTEMS = ("baseline", "pointer-gen", "pointer-gen-cov")

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def use_test_helpers() -> None:
    """Put ``tests/`` on ``sys.path``: benchmarks compare against the tests' oracles and read data with their
    readers."""
    if str(ROOT / "tests") not in sys.path:
        sys.path.insert(0, str(ROOT / "tests"))


def bench_parser(description: str | None, **counts: int) -> argparse.ArgumentParser:
    """A benchmark's command line: ``description`` (its docstring) and one integer option ``--name`` per keyword,
    defaulting to the keyword's value."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, default in counts.items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=int, default=default)
    return parser


def read_lines(path: Path) -> list[str]:
    """Lines of a text file without their newline (exactly as a one-segment-per-line file holds them)."""
    with open(path, encoding="utf-8", newline="\n") as handle:
        return [line[:-1] if line.endswith("\n") else line for line in handle]


def jsonl_records(path: Path) -> list[tuple[int, dict]]:
    """(line number, object) of each non-blank line of a JSONL file; ValueError naming the line that is not JSON."""
    records = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    records.append((number, json.loads(line)))
                except json.JSONDecodeError as error:
                    raise ValueError(f"{path}:{number} is not JSON: {error}") from None
    return records


def wmt17() -> tuple[list[str], dict[str, list[str]]]:
    """WMT17 en-de newstest2017: (references, {system name: outputs}); exits with a message when absent."""
    if not WMT17.is_dir():
        sys.exit(f"WMT17 data not found at {WMT17} (../shared/data beside the project)")
    references = read_lines(WMT17 / "newstest2017.ref.de")
    systems = {path.stem: read_lines(path) for path in sorted((WMT17 / "systems").glob("*.de"))}
    return references, systems


def cnndm(limit: int | None = None) -> list[dict[str, str]]:
    """The CNN/DailyMail test outputs of See et al. 2017 (``reference`` and the three systems), one record per
    article; exits with a message when absent."""
    if not CNNDM.is_file():
        sys.exit(f"CNN/DailyMail data not found at {CNNDM} (../shared/data beside the project)")
    with gzip.open(CNNDM, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in islice(handle, limit)]


def timed(run: Callable[[], T], repeats: int, before: Callable[[], None] | None = None) -> tuple[float, T]:
    """Median wall time of ``repeats`` runs (``before`` runs untimed before each, e.g. to clear caches) and the
    last result."""
    times, result = [], None
    for _ in range(repeats):
        if before is not None:
            before()
        gc.collect()
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result  # type: ignore[return-value]


def peak_mib(run: Callable[[], object], before: Callable[[], None] | None = None) -> float:
    """Peak of Python allocations (tracemalloc) during one run, in MiB."""
    if before is not None:
        before()
    gc.collect()
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
