"""Finding and reading unbabel-comet checkpoints offline, without pytorch-lightning.

unbabel-comet saves a model as a folder holding ``hparams.yaml`` and ``checkpoints/model.ckpt`` (a
pytorch-lightning checkpoint: the ``state_dict`` and the ``hyper_parameters``). The encoder's weights are in the
checkpoint; its configuration and tokenizer come from the model named by the ``pretrained_model`` hyper-parameter
(e.g. ``xlm-roberta-large``), which must be a local folder or already in the local Hugging Face cache. The
checkpoint is read with ``torch.load(weights_only=True)``: no code from the file is run, and a folder holding a
symbolic link out of it is refused before anything is read (``core_models.check_folder_links``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from .core_models import check_folder_links

LAYOUT = (
    "a COMET model folder as unbabel-comet saves it: <folder>/hparams.yaml and <folder>/checkpoints/model.ckpt "
    "(or the path of that model.ckpt, or the name of such a model already in the local Hugging Face cache, "
    "e.g. 'Unbabel/wmt22-comet-da')"
)
# unbabel-comet's class identifiers (hparams.yaml) this module implements, and what each model reads.
ESTIMATORS = {"regression_metric": "reference-based", "referenceless_regression_metric": "reference-free"}
# ... and the multitask models that encode the translation joined with its source and/or reference.
UNIFIED = ("unified_metric", "xcomet_metric")
_OTHER_MODELS = ("ranking_metric",)


@dataclass(frozen=True)
class CometCheckpoint:
    """A located checkpoint: the name it was asked for by, its files and its hyper-parameters."""

    name: str
    checkpoint: Path
    hparams: dict[str, Any]

    @property
    def class_identifier(self) -> str:
        return self.hparams["class_identifier"]

    @property
    def is_unified(self) -> bool:
        """A multitask model (CometKiwi, XCOMET): one encoder pass over the joined segments."""
        return self.class_identifier in UNIFIED

    @property
    def segments(self) -> tuple[str, ...]:
        """The segments the model reads besides the translation, as unbabel-comet selects them."""
        if self.class_identifier == "xcomet_metric":
            return ("src", "ref")
        if self.is_unified:
            return tuple(segment for segment in self.hparams.get("input_segments", ("mt", "src", "ref"))
                         if segment != "mt")
        return ("src", "ref") if self.class_identifier == "regression_metric" else ("src",)

    @property
    def needs_references(self) -> bool:
        """Whether every example needs a reference (unified models without the source need one too)."""
        return self.class_identifier == "regression_metric" or self.segments == ("ref",)

    @property
    def takes_references(self) -> bool:
        return "ref" in self.segments

    @property
    def tags_words(self) -> bool:
        """Whether the model tags the translation's tokens with error severities (XCOMET; CometKiwi models trained
        with word-level tags), so that its results carry error spans."""
        return self.class_identifier == "xcomet_metric" or (
            self.is_unified and bool(self.hparams.get("word_level_training", False)))

    @property
    def encoder_name(self) -> str:
        return str(self.hparams.get("pretrained_model", "xlm-roberta-large"))


def locate_checkpoint(metric: str, model: Any) -> CometCheckpoint:
    """The checkpoint named by ``model`` (a folder, the path of its model.ckpt, or a cached Hub name), its
    hyper-parameters read and checked; never downloads."""
    if model is None:
        raise ValueError(
            f"{metric}: no COMET checkpoint given, and none ships with this module (none can be downloaded "
            f"offline). Pass `checkpoint` (or the config name of `evaluate.load`) naming {LAYOUT}"
        )
    if not isinstance(model, (str, Path)):
        raise TypeError(f"{metric}: `checkpoint` must be a string or a path, got {type(model).__name__}")
    path = Path(model).expanduser()
    if path.is_file():
        checkpoint, folder = path, path.parent.parent
    elif path.is_dir():
        checkpoint, folder = path / "checkpoints" / "model.ckpt", path
    else:
        folder = _cached_snapshot(metric, str(model))
        checkpoint = folder / "checkpoints" / "model.ckpt"
    hparams_file = folder / "hparams.yaml"
    if os.path.lexists(hparams_file):  # a COMET folder: links out of it are refused before anything is read
        check_folder_links(metric, folder, argument="checkpoint")
    if not checkpoint.is_file() or not hparams_file.is_file():
        missing = [str(file) for file in (hparams_file, checkpoint) if not file.is_file()]
        raise ValueError(f"{metric}: {str(model)!r} is not a COMET checkpoint: {', '.join(missing)} missing; "
                         f"expected {LAYOUT}")
    hparams = _read_hparams(metric, hparams_file)
    return CometCheckpoint(str(model), checkpoint.resolve(), hparams)


def _cached_snapshot(metric: str, name: str) -> Path:
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(name, local_files_only=True))
    except Exception as error:  # noqa: BLE001 - any failure means: not available offline
        raise ValueError(
            f"{metric}: COMET checkpoint {name!r} is neither a local path nor a model in the local Hugging Face "
            f"cache, and nothing is downloaded; expected {LAYOUT}"
        ) from error


def _read_hparams(metric: str, file: Path) -> dict[str, Any]:
    import yaml

    try:
        hparams = yaml.safe_load(file.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        raise ValueError(f"{metric}: {file} is not a readable hparams.yaml: {error}") from error
    if not isinstance(hparams, dict) or "class_identifier" not in hparams:
        raise ValueError(f"{metric}: {file} holds no `class_identifier`; it is not an unbabel-comet hparams.yaml")
    identifier = hparams["class_identifier"]
    if identifier in _OTHER_MODELS:
        raise ValueError(
            f"{metric}: {file} describes a {identifier!r} model; this module implements unbabel-comet's "
            f"{', '.join(map(repr, [*ESTIMATORS, *UNIFIED]))} models (COMET-DA, COMET-QE, CometKiwi, XCOMET), "
            f"not ranking models"
        )
    if identifier not in ESTIMATORS and identifier not in UNIFIED:
        raise ValueError(f"{metric}: {file} has the unknown `class_identifier` {identifier!r}; expected one of "
                         f"{', '.join(map(repr, [*ESTIMATORS, *UNIFIED]))}")
    return hparams


def _lightning_dict(module: str) -> type:
    """A stand-in for pytorch-lightning's ``AttributeDict`` (a dict), so that a checkpoint's hyper-parameters
    unpickle under ``weights_only`` without importing pytorch-lightning."""
    return type("AttributeDict", (dict,), {"__module__": module})


def _lightning_callback(module: str, name: str) -> type:
    """A stand-in for a pytorch-lightning callback class: before pytorch-lightning 1.5 a checkpoint keyed each
    callback's state by the callback's class (a reference, never called), e.g. ``ModelCheckpoint``."""
    return type(name, (), {"__module__": module})


# What a pytorch-lightning checkpoint of unbabel-comet may hold besides tensors, containers, strings and numbers
# (see the metric card, "Checkpoint files"): AttributeDict hyper-parameters, and the classes of comet-train's
# stateful callbacks as keys of their states (pytorch-lightning < 1.5).
_LIGHTNING_GLOBALS = [
    *(_lightning_dict(module) for module in (
        "pytorch_lightning.utilities.parsing", "lightning_fabric.utilities.data", "lightning.fabric.utilities.data")),
    _lightning_callback("pytorch_lightning.callbacks.model_checkpoint", "ModelCheckpoint"),
    _lightning_callback("pytorch_lightning.callbacks.early_stopping", "EarlyStopping"),
]


def read_weights(metric: str, checkpoint: CometCheckpoint) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """The checkpoint's state dict and hyper-parameters (those saved in the checkpoint over hparams.yaml's, as
    pytorch-lightning's loader takes them), read without running code from the file (``weights_only``)."""
    try:
        with torch.serialization.safe_globals(_LIGHTNING_GLOBALS):
            content = torch.load(checkpoint.checkpoint, map_location="cpu", weights_only=True)
    except Exception as error:  # noqa: BLE001 - unpickling arbitrary bytes fails in many ways (a text file: IndexError)
        raise ValueError(
            f"{metric}: could not read {checkpoint.checkpoint} safely (weights only): {type(error).__name__}: "
            f"{error}. It must be a "
            f"pytorch-lightning checkpoint saved by unbabel-comet"
        ) from error
    state = content.get("state_dict") if isinstance(content, dict) else None
    if not isinstance(state, dict) or not all(isinstance(value, torch.Tensor) for value in state.values()):
        raise ValueError(f"{metric}: {checkpoint.checkpoint} holds no `state_dict` of tensors; it is not a "
                         f"checkpoint saved by unbabel-comet")
    saved = content.get("hyper_parameters")
    return state, {**checkpoint.hparams, **(dict(saved) if isinstance(saved, dict) else {})}
