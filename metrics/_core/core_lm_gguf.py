"""GGUF models kept converted on disk: a model read from a ``.gguf`` file is dequantized to float32 by transformers
(34 s for the packaged SmolLM2-135M on a 2-core CPU, most of it parsing the file's metadata three times); its
float32 weights (safetensors), config and tokenizer are then written once as an ordinary transformers folder,
which every later process loads in about a second with the same weights, bit for bit, and the same tokenizer.

The folder is named by the SHA-256 of the GGUF file's bytes and the transformers and gguf versions that converted
it, under ``$EVALUATE_TEXT_METRICS_CACHE/gguf`` (default ``~/.cache/evaluate_text_metrics/gguf``); setting that
variable to ``none`` turns the copies off. Only models whose float32 weights take at most ``MAX_KEPT_BYTES``
are kept (a 7B model would take 28 GB). A folder is written under a temporary name and renamed when complete,
so a process never reads a half-written copy and two processes converting at once leave one; a cache that
cannot be written (read-only, full) costs a warning, never the result. The copy holds data only (safetensors,
JSON), loaded without running any code.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.metadata
import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

CACHE_VARIABLE = "EVALUATE_TEXT_METRICS_CACHE"
MAX_KEPT_BYTES = 2 << 30
_COMPLETE = "converted-from-gguf.txt"  # written last: its presence means the folder is whole


def converted_folder(gguf_path: Path) -> Path | None:
    """Where the converted copy of ``gguf_path`` is (or would be) kept; None when copies are turned off."""
    root = os.environ.get(CACHE_VARIABLE, "").strip()
    if root.lower() == "none":
        return None
    base = Path(root).expanduser() if root else Path.home() / ".cache" / "evaluate_text_metrics"
    digest = hashlib.sha256()
    with open(gguf_path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    versions = "-".join(f"{package}{_version(package)}" for package in ("transformers", "gguf"))
    return base / "gguf" / f"{digest.hexdigest()[:32]}-{versions}"


def is_complete(folder: Path | None) -> bool:
    """Whether ``folder`` holds a whole converted copy."""
    return folder is not None and (folder / _COMPLETE).is_file()


def keep_converted(metric: str, model: Any, tokenizer: Any, folder: Path, gguf_path: Path) -> bool:
    """Write ``model`` (float32, as dequantized from ``gguf_path``) and ``tokenizer`` to ``folder``; False (with a
    warning when the write failed) when nothing was kept."""
    from safetensors.torch import save_model

    size = sum(tensor.numel() * tensor.element_size() for tensor in model.state_dict().values())
    if size > MAX_KEPT_BYTES or is_complete(folder):
        return False
    temporary = None
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        temporary = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
        config = copy.deepcopy(model.config)
        if hasattr(config, "quantization_config"):  # the GGUF reader's marker; the weights are plain float32 now
            del config.quantization_config
        config.save_pretrained(temporary)
        save_model(model, str(temporary / "model.safetensors"), metadata={"format": "pt"})
        tokenizer.save_pretrained(temporary)
        (temporary / _COMPLETE).write_text(f"{gguf_path}\n", encoding="utf-8")
        try:
            temporary.rename(folder)
        except OSError:
            if not is_complete(folder):  # not another process's finished copy: a real failure
                raise
        return True
    except OSError as error:
        warnings.warn(f"{metric}: could not keep the converted GGUF model in {folder} ({error}); it is converted "
                      f"again in each new process (set {CACHE_VARIABLE} to a writable folder, or to 'none')",
                      stacklevel=3)
        return False
    finally:
        if temporary is not None and temporary.exists():
            shutil.rmtree(temporary, ignore_errors=True)


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
