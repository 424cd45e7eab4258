"""The BLEURT oracle from the tests' side: a tiny bleurt-pytorch checkpoint built offline, and bleurt-pytorch's scores.

Both run `bleurt_oracle_run.py` in the oracle environment (`learned_oracle.run_oracle`), since bleurt-pytorch needs
transformers<5. The checkpoint's sentencepiece (or wordpiece) vocabulary is trained on WMT17 references.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from learned_oracle import run_oracle

ORACLE_SCRIPT = Path(__file__).resolve().parent / "bleurt_oracle_run.py"


def build_checkpoint(folder: Path, training_lines: list[str], *, wordpiece: bool = False, seed: int = 0,
                     score: list[dict[str, Any]] = (), sizes: dict[str, int] | None = None,
                     vocab_size: int = 1000) -> list[dict[str, Any]]:
    """A tiny BLEURT-20-style checkpoint (or, with ``wordpiece``, an older BERT-wordpiece one) saved by
    bleurt-pytorch into ``folder``; then, in the same oracle run, bleurt-pytorch's results (as
    :func:`oracle_scores`) for each request of ``score`` (dicts of references, candidates, batch_size, max_length).
    ``sizes`` overrides the config's sizes (hidden_size, num_hidden_layers, ...); ``vocab_size`` is the
    sentencepiece vocabulary's."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    text = folder.parent / f"{folder.name}-training.txt"
    text.write_text("\n".join(line for line in training_lines if line.strip()) + "\n", encoding="utf-8")
    built = run_oracle(ORACLE_SCRIPT, {"action": "build", "folder": str(folder), "training_text": str(text),
                                       "wordpiece": wordpiece, "seed": seed, "score": list(score),
                                       "sizes": dict(sizes or {}), "vocab_size": vocab_size})
    return built["scored"]


def oracle_scores(folder: Path, references: list[str], candidates: list[str], *, batch_size: int = 16,
                  max_length: int | None = None, threads: int | None = None,
                  timeout: float | None = 900) -> dict[str, Any]:
    """bleurt-pytorch's scores of the (reference, candidate) pairs as its README computes them:
    {"scores": [...], "seconds": time spent scoring}; ``timeout`` seconds at most (None: no limit)."""
    payload: dict[str, Any] = {"action": "score", "folder": str(folder), "references": references,
                               "candidates": candidates, "batch_size": batch_size, "max_length": max_length}
    if threads is not None:
        payload["threads"] = threads
    return run_oracle(ORACLE_SCRIPT, payload, timeout=timeout)
