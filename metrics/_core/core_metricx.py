"""MetricX-24 and MetricX-23 checkpoints: offline resolution, checks, a process-wide cache, batched scoring.

A checkpoint is a folder (or a model already in the local Hugging Face cache, e.g.
``google/metricx-24-hybrid-xl-v2p6``) holding config.json (``"model_type": "mt5"``, architectures
``MT5ForRegression``) and the weights (``pytorch_model.bin``, ``model.safetensors``, or a sharded index of either).
The released checkpoints hold no tokenizer: the official code reads google/mt5-xl's, so the tokenizer comes from
the checkpoint folder when it holds one (``spiece.model`` or ``tokenizer.json``) and from the ``tokenizer`` option
(a folder, or a model in the local cache such as ``google/mt5-xl``) otherwise. Nothing is downloaded. Loaded
checkpoints stay in memory for the life of the process, shared by every vendored copy (``core_process``).

Scoring: every distinct model input is tokenized and scored once; inputs are sorted by length and cut into batches
bounded in rows and in padded tokens (``core_metricx_inputs.token_batches``); a batch that runs the accelerator out
of memory is split in halves (``core_devices.run_halving``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import torch

from .core_devices import PRECISIONS, ModelPlacement, run_halving, select_dtype
from .core_embed import pad_ids
from .core_metricx_inputs import VERSIONS, as_official_tokenizer, encode_inputs, model_input, token_batches
from .core_metricx_model import MetricxRegressor, build_regressor, check_config, saved_precision
from .core_weights import read_state_dict, weights_files
from .core_models import check_folder_links, offline_model_folder
from .core_options import anything, boolean, choice, integer, optional, option
from .core_process import process_state
from .core_resources import ModelTextBounds

DEFAULT_CHUNK_SIZE = 8192
TOKENIZER_FILES = ("spiece.model", "tokenizer.json")
LAYOUT = (
    "a MetricX checkpoint folder holds config.json (\"model_type\": \"mt5\", architectures MT5ForRegression) and "
    "the weights (pytorch_model.bin or model.safetensors, or a sharded index of either), as "
    "https://huggingface.co/google/metricx-24-hybrid-xl-v2p6 does"
)
NO_TOKENIZER = (
    "the released MetricX checkpoints hold no tokenizer (the official code reads google/mt5-xl's): pass "
    "`tokenizer`, the folder of google/mt5-xl (its spiece.model), or its name when it is in the local Hugging Face "
    "cache"
)


@dataclass(frozen=True)
class MetricxCheckpoint:
    """A checked checkpoint: the name given (for hashes and outputs), its folder, configuration and tokenizer
    folder."""

    name: str
    path: Path
    config: dict[str, Any]
    tokenizer_path: Path


@dataclass
class LoadedMetricx:
    checkpoint: MetricxCheckpoint
    model: MetricxRegressor
    tokenizer: Any
    device: torch.device
    dtype: torch.dtype


@dataclass
class _Loaded:
    models: dict[tuple[str, str, str, str], LoadedMetricx] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    loads: int = 0


_LOADED = process_state(__file__, "loaded metricx checkpoints", _Loaded)


def _has_tokenizer(folder: Path) -> bool:
    return any((folder / name).is_file() for name in TOKENIZER_FILES)


def _local_folder(metric: str, argument: str, value: Any, what: str) -> Path:
    """The folder ``value`` names: a local folder (links out of it refused) or a model in the local cache."""
    if not isinstance(value, (str, Path)):
        raise TypeError(f"{metric}: `{argument}` must be a string (a folder or a cached model name), "
                        f"got {type(value).__name__}")
    folder = Path(value).expanduser()
    if folder.is_dir():
        return check_folder_links(metric, folder, argument=argument)
    if folder.exists():
        raise ValueError(f"{metric}: `{argument}` {str(value)!r} is a file, not a folder; {what}")
    return offline_model_folder(metric, argument, value, kinds="a local folder",
                                otherwise=f"pass the folder of a downloaded copy; {what}")


def resolve_checkpoint(metric: str, checkpoint: Any, tokenizer: Any = None) -> MetricxCheckpoint:
    """The checked checkpoint named by ``checkpoint`` and its tokenizer folder, read without loading weights; a
    ValueError naming the expected layout otherwise."""
    if checkpoint is None:
        raise ValueError(f"{metric}: no `checkpoint` given, and none ships with this module: pass the folder of a "
                         f"MetricX checkpoint (e.g. a download of google/metricx-24-hybrid-xl-v2p6); {LAYOUT}")
    folder = _local_folder(metric, "checkpoint", checkpoint, LAYOUT)

    def bad(problem: str) -> ValueError:
        return ValueError(f"{metric}: `checkpoint` {str(checkpoint)!r} is not a MetricX checkpoint: {problem}; "
                          f"{LAYOUT}")

    config_file = folder / "config.json"
    if not config_file.is_file():
        hint = " (it looks like a COMET checkpoint)" if (folder / "hparams.yaml").is_file() else ""
        raise bad(f"it has no config.json{hint}")
    try:
        config = check_config(json.loads(config_file.read_text(encoding="utf-8")))
        files = weights_files(folder)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, ValueError) as error:
        raise bad(str(error)) from None
    if not files:
        raise bad("it has no weights file (pytorch_model.bin or model.safetensors)")
    if tokenizer is None:
        if not _has_tokenizer(folder):
            raise ValueError(f"{metric}: `checkpoint` {str(checkpoint)!r} holds no tokenizer files "
                             f"({' or '.join(TOKENIZER_FILES)}); {NO_TOKENIZER}")
        tokenizer_path = folder
    else:
        tokenizer_path = _local_folder(metric, "tokenizer", tokenizer, NO_TOKENIZER)
        if not _has_tokenizer(tokenizer_path):
            raise ValueError(f"{metric}: `tokenizer` {str(tokenizer)!r} holds no tokenizer files "
                             f"({' or '.join(TOKENIZER_FILES)}); {NO_TOKENIZER}")
    return MetricxCheckpoint(str(checkpoint), folder, config, tokenizer_path)


def load_checkpoint(metric: str, checkpoint: MetricxCheckpoint, device: torch.device,
                    dtype: torch.dtype) -> LoadedMetricx:
    """The model and tokenizer of ``checkpoint`` on ``device`` in ``dtype``, loaded once per process."""
    key = (str(checkpoint.path), str(checkpoint.tokenizer_path), str(device), str(dtype))
    with _LOADED.lock:
        loaded = _LOADED.models.get(key)
        if loaded is not None:
            return loaded
        try:
            from transformers import AutoTokenizer

            model = build_regressor(checkpoint.config, read_state_dict(checkpoint.path), dtype)
            tokenizer = as_official_tokenizer(
                AutoTokenizer.from_pretrained(str(checkpoint.tokenizer_path), local_files_only=True))
        except Exception as error:  # noqa: BLE001 - reported with the checkpoint's name and the layout
            raise ValueError(f"{metric}: could not load the MetricX checkpoint {checkpoint.name!r} from "
                             f"{checkpoint.path} (tokenizer {checkpoint.tokenizer_path}): {error}; {LAYOUT}") from error
        model.to(device=device)
        loaded = LoadedMetricx(checkpoint, model, tokenizer, device, dtype)
        _LOADED.models[key] = loaded
        _LOADED.loads += 1
        return loaded


def checkpoint_loads() -> int:
    """How many times a checkpoint was loaded from disk in this process (for tests of the cache)."""
    return _LOADED.loads


def clear_checkpoint_cache() -> None:
    with _LOADED.lock:
        _LOADED.models.clear()


def _score_ids(loaded: LoadedMetricx, token_ids: Sequence[list[int]], batch_size: int,
               max_batch_tokens: int) -> list[float]:
    """Scores of the token-id rows, in order."""
    scores = [0.0] * len(token_ids)
    device = loaded.device
    pad = loaded.tokenizer.pad_token_id if loaded.tokenizer.pad_token_id is not None else 0

    def run(batch: Sequence[int]) -> list[float]:
        ids, mask = pad_ids([token_ids[index] for index in batch], pad)
        with torch.inference_mode():
            values = loaded.model(ids.to(device), mask.to(device))
        return values.float().cpu().tolist()

    for batch in token_batches([max(len(ids), 1) for ids in token_ids], batch_size, max_batch_tokens):
        for index, value in zip(batch, run_halving(run, batch, device), strict=True):
            scores[index] = value
    return scores


def metricx_scores(loaded: LoadedMetricx, sources: Sequence[str], predictions: Sequence[str],
                   references: Sequence[str | None], *, version: str, max_input_length: int, batch_size: int,
                   max_batch_tokens: int, chunk_size: int = DEFAULT_CHUNK_SIZE,
                   progress: Callable[[int], None] | None = None) -> list[float]:
    """MetricX score of each prediction (an error score in [0, 25], lower is better), against its reference, or
    reference-free (QE) where the reference is None."""
    results: list[float] = []
    for start in range(0, len(predictions), chunk_size):
        texts = [model_input(version, source, prediction, reference) for source, prediction, reference in
                 zip(sources[start:start + chunk_size], predictions[start:start + chunk_size],
                     references[start:start + chunk_size], strict=True)]
        distinct = list(dict.fromkeys(texts))
        ids = encode_inputs(loaded.tokenizer, distinct, max_input_length)
        scores = dict(zip(distinct, _score_ids(loaded, ids, batch_size, max_batch_tokens), strict=True))
        results.extend(scores[text] for text in texts)
        if progress is not None:
            progress(len(texts))
    return results


@dataclass(frozen=True)
class MetricxOptions(ModelPlacement, ModelTextBounds):
    """The keyword options of the `metricx` metric; the checkpoint and device are resolved when they are checked."""

    metric_name = "metricx"

    checkpoint: str | None = option(None, anything)
    tokenizer: str | None = option(None, anything)
    version: str = option("metricx-24", choice(*VERSIONS))
    max_input_length: int | None = option(None, optional(integer(minimum=2)))
    device: str | None = option(None, anything)
    batch_size: int = option(16, integer(minimum=1))
    max_batch_tokens: int = option(16384, integer(minimum=1))
    precision: str | None = option(None, optional(choice(*PRECISIONS)))
    verbose: bool = option(False, boolean)

    def validate(self, metric: str) -> None:
        # A checkpoint given is resolved and checked now, before any input is read; a missing one is reported when
        # scoring starts (after the inputs' own checks, so that bad inputs are named first).
        self.chosen_device
        if self.checkpoint is not None:
            self.source, self.chosen_dtype

    @cached_property
    def source(self) -> MetricxCheckpoint:
        return resolve_checkpoint(self.metric_name, self.checkpoint, self.tokenizer)

    @cached_property
    def chosen_dtype(self) -> torch.dtype:
        """The precision asked for, or else the one the checkpoint was saved in (as the official code runs it)."""
        precision = self.precision if self.precision is not None else saved_precision(self.source.config)
        return select_dtype(self.metric_name, precision, self.chosen_device)

    @property
    def input_length(self) -> int:
        """Tokens of one model input before the EOS is removed: the option, or the version's official length."""
        return self.max_input_length if self.max_input_length is not None else VERSIONS[self.version]

    def stats_signature(self) -> str:
        stamp = max(path.stat().st_mtime_ns for path in weights_files(self.source.path) or ())
        return (f"metricx:{self.source.path}@{stamp}|tokenizer:{self.source.tokenizer_path}|{self.version}|"
                f"len:{self.input_length}|{self.chosen_dtype}")


def single_references(metric: str, references: Sequence[Sequence[str]], start: int) -> list[str | None]:
    """The reference of each example (None for all when none is given: reference-free scoring); a ValueError for
    an example with several references, or with none where others have one."""
    if all(not group for group in references):
        return [None] * len(references)
    result: list[str | None] = []
    for index, group in enumerate(references):
        if len(group) != 1:
            raise ValueError(f"{metric}: example {start + index} has {len(group)} references; MetricX scores a "
                             f"prediction against one reference (or none, reference-free): pass one per example, "
                             f"or leave `references` out for every example")
        result.append(group[0])
    return result
