"""Helpers shared by the BERTScore scripts: the packaged model loaded through the core."""

from __future__ import annotations

from project import ROOT, wmt17

__all__ = ["ROOT", "packaged_model", "wmt17"]


def packaged_model(device: str = "cpu", precision: str = "fp32", model_type: str | None = None):
    """The packaged all-MiniLM-L6-v2 (or the local model folder ``model_type``) loaded through the core, in
    ``precision`` ('fp32', 'bf16' or 'fp16')."""
    from metrics._core.core_devices import select_device, select_dtype
    from metrics._core.core_models import load_model, resolve_model

    source = resolve_model("bertscore", model_type)
    chosen = select_device("bertscore", device)
    return load_model("bertscore", source, use_fast_tokenizer=False, device=chosen,
                      dtype=select_dtype("bertscore", precision, chosen))
