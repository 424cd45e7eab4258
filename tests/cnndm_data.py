"""The CNN/DailyMail test outputs of See et al. (2017) in the shared data (``cnndm-see2017/test.jsonl.gz``), for
the ROUGE tests and the ROUGE-1.5.5 scripts: one record per article, the ``reference`` and each system's summary."""

from __future__ import annotations

import gzip
import json
from itertools import islice
from pathlib import Path

CNNDM_FILE = Path("cnndm-see2017") / "test.jsonl.gz"
SYSTEMS = ("baseline", "pointer-gen", "pointer-gen-cov")


def read_cnndm(data: Path, limit: int | None = None) -> list[dict]:
    """The test set's records in file order (the first ``limit``, or all), from the shared data folder ``data``."""
    with gzip.open(data / CNNDM_FILE, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in islice(handle, limit)]


def cnndm_or_skip(data: Path, limit: int | None = None) -> list[dict]:
    """:func:`read_cnndm`, skipping the calling test when the file is absent."""
    import pytest

    path = data / CNNDM_FILE
    if not path.is_file():
        pytest.skip(f"CNN/DailyMail summaries not found at {path}")
    return read_cnndm(data, limit)
