"""Helpers shared by the BERTScore scripts: the core on sys.path, the WMT17 data, the packaged model."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WMT17 = ROOT.parent / "shared" / "data" / "wmt17-en-de"
if str(ROOT / "metrics") not in sys.path:
    sys.path.insert(0, str(ROOT / "metrics"))


def read_lines(path: Path) -> list[str]:
    with open(path, encoding="utf-8", newline="\n") as handle:
        return [line[:-1] if line.endswith("\n") else line for line in handle]


def wmt17() -> tuple[list[str], dict[str, list[str]]]:
    """(references, {system: outputs}) of WMT17 en-de, or exit with a clear message."""
    if not WMT17.is_dir():
        sys.exit(f"WMT17 data not found at {WMT17}")
    references = read_lines(WMT17 / "newstest2017.ref.de")
    systems = {path.stem: read_lines(path) for path in sorted((WMT17 / "systems").glob("*.de"))}
    return references, systems


def packaged_model(device: str = "cpu", precision: str = "fp32"):
    """The packaged all-MiniLM-L6-v2 loaded through the core, in ``precision`` ('fp32', 'bf16' or 'fp16')."""
    from _core.core_devices import select_device, select_dtype
    from _core.core_models import load_model, resolve_model

    source = resolve_model("bertscore", None)
    chosen = select_device("bertscore", device)
    return load_model("bertscore", source, use_fast_tokenizer=False, device=chosen,
                      dtype=select_dtype("bertscore", precision, chosen))
