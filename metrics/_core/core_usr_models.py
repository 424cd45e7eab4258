"""USR's three RoBERTa models, found and loaded offline, each checked to be the kind its role needs.

The official release (github.com/Shikib/usr, README "Setup": a Google Drive folder) holds three transformers-2.x
model folders, unzipped side by side: ``roberta_ft/`` (RoBERTa-base fine-tuned as a masked language model on the
corpus's dialogues: the MLM sub-metric), ``ctx/`` (that model fine-tuned further for dialog retrieval with the
dialogue context and the fact as x: DR x = c) and ``uk/`` (dialog retrieval with the fact alone: DR x = f); the
PersonaChat models are ``roberta_pc3/``, ``pc_both/`` and ``pc_uk/`` (``examples/pc_*.sh``). Each folder holds
``config.json``, the weights (``pytorch_model.bin``, or ``model.safetensors`` once re-saved) and RoBERTa's
``vocab.json`` and ``merges.txt``. Weights are read with safetensors or ``torch.load(weights_only=True)``: no code
in a file runs. A folder whose weights are not a RoBERTa masked language model (for MLM) or a two-class RoBERTa
sequence classifier (for DR) is refused with an error that says what it holds.
"""

from __future__ import annotations

import json
import pickle
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from .core_models import offline_model_folder
from .core_onednn import use_onednn_linears
from .core_process import process_state
from .core_usr_tokens import UsrTokenizer, tokenizer_folder_problem

# role -> (option, the official release's folder, what the model is)
ROLES: dict[str, tuple[str, str, str]] = {
    "mlm": ("mlm_model", "roberta_ft",
            "the MLM model: RoBERTa fine-tuned as a masked language model on the dialogues (official: roberta_ft/)"),
    "dr_context": ("dr_context_model", "ctx",
                   "the dialog-retrieval model with x = c, dialogue context and fact (official: ctx/)"),
    "dr_fact": ("dr_fact_model", "uk", "the dialog-retrieval model with x = f, the fact alone (official: uk/)"),
}
RELEASE = ("the official models are a download linked from github.com/Shikib/usr (README, 'Setup': a Google Drive "
           "folder; unzip it to get roberta_ft/, ctx/ and uk/ for Topical-Chat; roberta_pc3/, pc_both/ and pc_uk/ "
           "are the PersonaChat ones); nothing is downloaded by this module")
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
_MLM_KEYS = ("lm_head.dense.weight", "lm_head.layer_norm.weight", "lm_head.bias")
_DR_KEYS = ("classifier.dense.weight", "classifier.out_proj.weight", "classifier.out_proj.bias")
# keys a transformers-2.x checkpoint has that today's RoBERTa heads do not, or that today's build by themselves
_IGNORED = ("roberta.pooler.", "roberta.embeddings.position_ids", "roberta.embeddings.token_type_ids")


@dataclass(frozen=True)
class UsrModelSource:
    """A located model folder: its role, the name it was given by, its folder and weights file."""

    role: str
    name: str
    folder: Path
    weights: Path

    def stamp(self) -> str:
        stat = self.weights.stat()
        return f"{self.weights}@{stat.st_mtime_ns}:{stat.st_size}"


def missing_models(given: dict[str, Any]) -> list[str]:
    """The roles none of ``models``/``<role>_model`` names."""
    return [role for role, (option, _, _) in ROLES.items() if given.get(option) is None and given.get("models") is None]


def no_models_message(metric: str, roles: list[str]) -> str:
    described = "; ".join(f"`{ROLES[role][0]}`: {ROLES[role][2]}" for role in roles)
    return (f"{metric}: no model given for {', '.join(ROLES[role][0] for role in roles)}, and none ships with this "
            f"module. Pass `models` (or the config name of `evaluate.load`) naming a folder that holds the official "
            f"release's roberta_ft/, ctx/ and uk/, or name each folder: {described}. {RELEASE[0].upper()}{RELEASE[1:]}")


def locate_model(metric: str, role: str, explicit: Any, models: Any) -> UsrModelSource:
    """The folder of ``role``'s model: ``explicit`` (its own option) or ``models``/<official subfolder>; never
    downloads."""
    option, subfolder, what = ROLES[role]
    if explicit is not None:
        argument, name = option, explicit
    else:
        if not isinstance(models, (str, Path)):
            raise TypeError(f"{metric}: `models` must be a string or a path (a folder), got {type(models).__name__}")
        base = Path(models).expanduser()
        if not base.is_dir():
            raise ValueError(f"{metric}: `models` {str(models)!r} is not a folder; it must hold the official "
                             f"release's roberta_ft/, ctx/ and uk/ (or name each model with `{option}` and the "
                             f"others). {RELEASE}")
        if not (base / subfolder).is_dir():
            raise ValueError(f"{metric}: `models` folder {str(models)!r} has no {subfolder}/ ({what}); pass "
                             f"`{option}` naming that model's folder")
        argument, name = "models", str(base / subfolder)
    if not isinstance(name, (str, Path)):
        raise TypeError(f"{metric}: `{option}` must be a string or a path (a model folder), got {type(name).__name__}")
    folder = offline_model_folder(metric, argument, name, kinds="a local folder",
                                  otherwise=f"pass a local folder holding {what}. {RELEASE}")
    problem = tokenizer_folder_problem(folder)
    if problem is not None:
        raise ValueError(f"{metric}: `{argument}` folder {str(folder)!r} ({what}) {problem}")
    weights = next((folder / file for file in WEIGHT_FILES if (folder / file).is_file()), None)
    if weights is None:
        raise ValueError(f"{metric}: `{argument}` folder {str(folder)!r} ({what}) holds no weights: expected "
                         f"{' or '.join(WEIGHT_FILES)}")
    return UsrModelSource(role, str(name), folder, weights)


def read_state(metric: str, source: UsrModelSource) -> dict[str, torch.Tensor]:
    """The weights of ``source`` (safetensors, or ``torch.load`` with ``weights_only``: no code runs)."""
    try:
        if source.weights.suffix == ".safetensors":
            from safetensors.torch import load_file

            state = load_file(str(source.weights), device="cpu")
        else:
            state = torch.load(source.weights, map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, OSError, ValueError) as error:
        raise ValueError(f"{metric}: could not read {source.weights} safely (weights only): {error}") from error
    if isinstance(state, dict) and isinstance(state.get("state_dict"), dict):
        state = state["state_dict"]
    if not isinstance(state, dict) or not state or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ValueError(f"{metric}: {source.weights} holds no state dict of tensors; it is not a model's weights")
    return state


def _kind_of(state: dict[str, torch.Tensor]) -> str:
    if not any(key.startswith("roberta.") for key in state):
        prefixes = sorted({key.split(".")[0] for key in state})[:4]
        return f"not a RoBERTa model (its weights start with {', '.join(prefixes)})"
    if all(key in state for key in _MLM_KEYS):
        return "mlm"
    if all(key in state for key in _DR_KEYS):
        return "dr"
    return "a RoBERTa encoder without a masked-LM or a classification head"


_KIND_WORDS = {"mlm": "a RoBERTa masked language model (an MLM checkpoint, e.g. the official roberta_ft/)",
               "dr": "a RoBERTa sequence classifier (a dialog-retrieval checkpoint, e.g. the official ctx/ or uk/)"}


def _config(metric: str, source: UsrModelSource, state: dict[str, torch.Tensor], kind: str) -> Any:
    from transformers import RobertaConfig

    try:
        raw = json.loads((source.folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"{metric}: {source.folder / 'config.json'} is not readable JSON: {error}") from error
    for stale in ("architectures", "model_type", "transformers_version", "torch_dtype", "dtype", "id2label",
                  "label2id", "num_labels", "finetuning_task", "output_attentions", "output_hidden_states",
                  "torchscript", "pruned_heads", "is_decoder"):
        raw.pop(stale, None)
    config = RobertaConfig(**raw, num_labels=2)
    embeddings = state.get("roberta.embeddings.word_embeddings.weight")
    if embeddings is not None and tuple(embeddings.shape) != (config.vocab_size, config.hidden_size):
        raise ValueError(f"{metric}: {source.weights} does not match {source.folder / 'config.json'} (word "
                         f"embeddings {tuple(embeddings.shape)}, configured {config.vocab_size} x {config.hidden_size})")
    if kind == "dr" and state["classifier.out_proj.weight"].shape[0] != 2:
        raise ValueError(f"{metric}: {source.weights} is a classifier of {state['classifier.out_proj.weight'].shape[0]} "
                         f"classes; USR's dialog-retrieval models have two (random response, true response)")
    return config


@dataclass
class LoadedUsrModel:
    """One sub-metric's model and tokenizer on one device, in evaluation mode."""

    source: UsrModelSource
    model: Any
    tokenizer: UsrTokenizer
    device: torch.device
    dtype: torch.dtype
    max_positions: int


@dataclass
class _Loaded:
    models: dict[tuple[str, ...], LoadedUsrModel] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


_LOADED = process_state(__file__, "loaded USR models", _Loaded)


def load_usr_model(metric: str, source: UsrModelSource, *, device: torch.device, dtype: torch.dtype) -> LoadedUsrModel:
    """``source``'s model (masked LM for the MLM role, sequence classifier for DR) on ``device`` in ``dtype``, loaded
    once per process; a folder holding the other kind of model is refused."""
    key = (source.role, source.stamp(), str(source.folder), str(device), str(dtype))
    with _LOADED.lock:
        if key in _LOADED.models:
            return _LOADED.models[key]
        state = read_state(metric, source)
        kind = _kind_of(state)
        wanted = "mlm" if source.role == "mlm" else "dr"
        if kind != wanted:
            option, _, what = ROLES[source.role]
            holds = _KIND_WORDS.get(kind, kind)
            raise ValueError(f"{metric}: the `{option}` folder {str(source.folder)!r} holds {holds}; it must hold "
                             f"{what}, {_KIND_WORDS[wanted]}")
        config = _config(metric, source, state, kind)
        model = _build(metric, source, state, config, kind)
        try:
            tokenizer = UsrTokenizer(source.folder)
        except (OSError, ValueError, Exception) as error:  # noqa: BLE001 - reported with the folder
            raise ValueError(f"{metric}: could not read the tokenizer of {str(source.folder)!r}: {error}") from error
        model.eval()
        model.to(device=device, dtype=dtype)
        use_onednn_linears(model, device, dtype)
        loaded = LoadedUsrModel(source, model, tokenizer, device, dtype,
                                config.max_position_embeddings - config.pad_token_id - 1)
        _LOADED.models[key] = loaded
        return loaded


def _build(metric: str, source: UsrModelSource, state: dict[str, torch.Tensor], config: Any, kind: str) -> Any:
    from transformers import RobertaForMaskedLM, RobertaForSequenceClassification

    state = {key: value for key, value in state.items() if not key.startswith(_IGNORED)}
    if kind == "mlm":
        # transformers 2.x adds `lm_head.bias` after a bias-free decoder (and ties the decoder to the embeddings);
        # today's head keeps the bias in its decoder
        state.setdefault("lm_head.decoder.bias", state["lm_head.bias"])
        state.setdefault("lm_head.decoder.weight", state["roberta.embeddings.word_embeddings.weight"])
        model = RobertaForMaskedLM(config)
    else:
        model = RobertaForSequenceClassification(config)
    own = model.state_dict()
    missing = [key for key in own if key not in state and not key.startswith(_IGNORED)]
    unexpected = [key for key in state if key not in own]
    if missing or unexpected:
        raise ValueError(f"{metric}: {source.weights} does not fit a RoBERTa of its config.json: "
                         f"missing {missing[:5]}, unexpected {unexpected[:5]}")
    mismatched = [key for key in state if tuple(state[key].shape) != tuple(own[key].shape)]
    if mismatched:
        raise ValueError(f"{metric}: {source.weights} has weights of other shapes than its config.json gives: "
                         f"{mismatched[:5]}")
    model.load_state_dict(state, strict=False)
    return model


def clear_usr_cache() -> None:
    """Forget every loaded USR model."""
    with _LOADED.lock:
        _LOADED.models.clear()
