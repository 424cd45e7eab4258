"""A checkpoint folder's weight files read as tensors only: safetensors, or torch pickles under ``weights_only``
(one file, or the shards a Hugging Face index names), so that no code from a file is ever run."""

from __future__ import annotations

import json
import pickle
import zipfile
from pathlib import Path

import torch

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
INDEX_FILES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")


def weights_files(folder: Path) -> list[Path] | None:
    """The checkpoint's weight files (one, or the shards its index names), or None when it has none."""
    for name in WEIGHT_FILES:
        if (folder / name).is_file():
            return [folder / name]
    for name in INDEX_FILES:
        index = folder / name
        if index.is_file():
            weight_map = json.loads(index.read_text(encoding="utf-8")).get("weight_map")
            if not isinstance(weight_map, dict) or not weight_map:
                raise ValueError(f"{name} has no weight_map")
            shards = sorted(set(weight_map.values()))
            if any(not isinstance(shard, str) or Path(shard).name != shard for shard in shards):
                raise ValueError(f"{name} names shards outside the folder")
            return [folder / shard for shard in shards]
    return None


def read_state_dict(folder: Path) -> dict[str, torch.Tensor]:
    """Every tensor of the checkpoint's weight files, by name; a ValueError for a folder without weights, a missing
    shard, or a pickle holding objects other than tensors (which are never unpickled)."""
    files = weights_files(folder)
    if not files:
        raise ValueError(f"no weights file ({' or '.join(WEIGHT_FILES)}, or a sharded index of either)")
    state: dict[str, torch.Tensor] = {}
    for path in files:
        if not path.is_file():
            raise ValueError(f"the weights index names {path.name}, which is missing")
        if path.suffix == ".safetensors":
            from safetensors.torch import load_file

            state.update(load_file(str(path), device="cpu"))
            continue
        try:  # released files are pickled (Ordered)dicts of tensors: nothing else is unpickled
            state.update(torch.load(str(path), map_location="cpu", weights_only=True,
                                    mmap=zipfile.is_zipfile(path)))  # legacy (non-zip) pickles cannot be mapped
        except pickle.UnpicklingError as error:
            reason = str(error).strip().splitlines()[0]
            raise ValueError(f"{path.name} holds objects other than tensors, which are never unpickled "
                             f"(torch.load(weights_only=True) reads a state dict of tensors only): {reason}") from None
    return state
