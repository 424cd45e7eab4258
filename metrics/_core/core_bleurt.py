"""BLEURT checkpoints in bleurt-pytorch's format: offline resolution, checks, a process-wide cache, batched scoring.

A checkpoint is a folder (or a model already in the local Hugging Face cache, e.g. ``lucadiliello/BLEURT-20``)
holding ``config.json`` with ``"model_type": "bleurt"``, the weights of bleurt-pytorch's
``BleurtForSequenceClassification`` (``model.safetensors`` or ``pytorch_model.bin``, or their sharded index), and
the tokenizer files (``spm.model`` for the BLEURT-20 family; ``vocab.txt``/``tokenizer.json`` for the older BERT
wordpiece checkpoints). Nothing is downloaded. Loaded checkpoints stay in memory for the life of the process,
shared by every vendored copy of this module (``core_process``).

Scoring: every distinct (reference, candidate) pair is scored once; each distinct text is tokenized once; pairs
are sorted by length and cut into batches (``core_embed.length_batches``) whose linear layers run on the real tokens
only (padding costs only the attention, ``core_bleurt_model.TokenRows``); a batch that runs the accelerator out of
memory is split in halves (``core_devices.run_halving``). A prediction with several references gets the maximum of
its pairs' scores.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import torch

from .core_bleurt_model import BleurtConfig, BleurtRegressor, build_regressor, read_renamed_state_dict
from .core_weights import weights_files
from .core_bleurt_tokenize import (
    SENTENCEPIECE_FILE, WORDPIECE_FILES, SentencePieceTexts, WordPieceTexts, load_texts_tokenizer, pair_ids,
    tokenize_texts, tokenizer_kind,
)
from .core_devices import PRECISIONS, ModelPlacement, run_halving
from .core_embed import length_batches, pad_ids
from .core_encoder_rows import MAX_PADDING
from .core_models import check_folder_links, offline_model_folder
from .core_onednn import use_onednn_linears
from .core_options import anything, boolean, choice, integer, option
from .core_process import process_state
from .core_resources import ModelTextBounds

DEFAULT_CHUNK_SIZE = 8192
LAYOUT = (
    "a bleurt-pytorch checkpoint folder holds config.json with \"model_type\": \"bleurt\", the weights of "
    "BleurtForSequenceClassification (model.safetensors or pytorch_model.bin) and the tokenizer files "
    f"({SENTENCEPIECE_FILE} for BLEURT-20 checkpoints, or {' / '.join(WORDPIECE_FILES)} for the older BERT ones), "
    "as in https://huggingface.co/lucadiliello/BLEURT-20"
)


@dataclass(frozen=True)
class BleurtCheckpoint:
    """A checked checkpoint folder: the name given (for hashes and outputs), its folder and configuration."""

    name: str
    path: Path
    config: BleurtConfig


@dataclass
class LoadedBleurt:
    checkpoint: BleurtCheckpoint
    model: BleurtRegressor
    tokenizer: SentencePieceTexts | WordPieceTexts
    device: torch.device
    dtype: torch.dtype


@dataclass
class _Loaded:
    models: dict[tuple[str, str, str], LoadedBleurt] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    loads: int = 0


_LOADED = process_state(__file__, "loaded bleurt checkpoints", _Loaded)


def resolve_checkpoint(metric: str, checkpoint: Any) -> BleurtCheckpoint:
    """The checked checkpoint named by ``checkpoint`` (a folder, or a model in the local Hugging Face cache), read
    without loading its weights; a ValueError naming the expected layout otherwise."""
    if checkpoint is None:
        raise ValueError(f"{metric}: no `checkpoint` given, and none ships with this module: pass the folder of a "
                         f"bleurt-pytorch checkpoint (e.g. a download of lucadiliello/BLEURT-20); {LAYOUT}")
    if not isinstance(checkpoint, (str, Path)):
        raise TypeError(f"{metric}: `checkpoint` must be a string (a checkpoint folder or a cached model name), "
                        f"got {type(checkpoint).__name__}")
    folder = Path(checkpoint).expanduser()
    if folder.is_dir():  # a folder that is a link is fine; links in it that point out of it are refused
        folder = (check_folder_links(metric, folder, argument="checkpoint")
                  if os.path.lexists(folder / "config.json") else folder.resolve())
    elif folder.exists():
        raise ValueError(f"{metric}: `checkpoint` {str(checkpoint)!r} is a file, not a folder; {LAYOUT}")
    else:
        folder = offline_model_folder(
            metric, "checkpoint", checkpoint, kinds="a local folder",
            otherwise=f"pass the folder of a downloaded checkpoint; {LAYOUT}",
        )

    def bad(problem: str) -> ValueError:
        return ValueError(f"{metric}: `checkpoint` {str(checkpoint)!r} is not a BLEURT checkpoint: {problem}; {LAYOUT}")

    config_file = folder / "config.json"
    if not config_file.is_file():
        hint = " (it looks like a COMET checkpoint)" if (folder / "hparams.yaml").is_file() else ""
        raise bad(f"it has no config.json{hint}")
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise bad(f"its config.json cannot be read as JSON ({error})") from None
    if not isinstance(config, dict):
        raise bad("its config.json does not hold a JSON object")
    if config.get("model_type") != "bleurt":
        raise bad(f"its config.json has model_type {config.get('model_type')!r}, not 'bleurt'")
    labels = config.get("num_labels", len(config.get("id2label") or {0: None}))
    if labels != 1:
        raise bad(f"its config.json declares {labels} outputs; a BLEURT regression head has 1")
    try:
        parsed = BleurtConfig.from_dict(config)
    except ValueError as error:
        raise bad(str(error)) from None
    if not weights_files(folder):
        raise bad("it has no weights file (model.safetensors or pytorch_model.bin)")
    if tokenizer_kind(folder) is None:
        raise bad("it has no tokenizer files")
    return BleurtCheckpoint(str(checkpoint), folder, parsed)


def load_checkpoint(metric: str, checkpoint: BleurtCheckpoint, device: torch.device,
                    dtype: torch.dtype) -> LoadedBleurt:
    """The model and tokenizer of ``checkpoint`` on ``device`` in ``dtype``, loaded once per process."""
    key = (str(checkpoint.path), str(device), str(dtype))
    with _LOADED.lock:
        loaded = _LOADED.models.get(key)
        if loaded is not None:
            return loaded
        try:
            model = build_regressor(checkpoint.config, read_renamed_state_dict(checkpoint.path))
            tokenizer = load_texts_tokenizer(checkpoint.path)
        except Exception as error:  # noqa: BLE001 - reported with the checkpoint's name and the layout
            raise ValueError(f"{metric}: could not load the BLEURT checkpoint {checkpoint.name!r} from "
                             f"{checkpoint.path}: {error}; {LAYOUT}") from error
        model.to(device=device, dtype=dtype)
        use_onednn_linears(model, device, dtype)
        loaded = LoadedBleurt(checkpoint, model, tokenizer, device, dtype)
        _LOADED.models[key] = loaded
        _LOADED.loads += 1
        return loaded


def checkpoint_loads() -> int:
    """How many times a checkpoint was loaded from disk in this process (for tests of the cache)."""
    return _LOADED.loads


def clear_checkpoint_cache() -> None:
    with _LOADED.lock:
        _LOADED.models.clear()


def _score_pairs(loaded: LoadedBleurt, pairs: Sequence[tuple[list[int], int]], batch_size: int) -> list[float]:
    """Scores of (ids, type-0 count) pairs, in order."""
    scores = [0.0] * len(pairs)
    device = loaded.device

    def run(batch: Sequence[int]) -> list[float]:
        ids, mask = pad_ids([pairs[index][0] for index in batch], loaded.tokenizer.pad_id)
        types = (torch.arange(ids.shape[1])[None, :] >= torch.tensor([pairs[i][1] for i in batch])[:, None]) & \
            mask.bool()
        with torch.inference_mode():
            values = loaded.model(ids.to(device), types.long().to(device), mask.to(device))
        return values.float().cpu().tolist()

    for batch in length_batches([len(ids) for ids, _ in pairs], batch_size, max_padding=MAX_PADDING):
        for index, value in zip(batch, run_halving(run, batch, device), strict=True):
            scores[index] = value
    return scores


def bleurt_scores(loaded: LoadedBleurt, predictions: Sequence[str], references: Sequence[Sequence[str]], *,
                  batch_size: int, chunk_size: int = DEFAULT_CHUNK_SIZE,
                  progress: Callable[[int], None] | None = None) -> list[float]:
    """BLEURT score of each prediction against its references (the maximum over them)."""
    max_length = loaded.checkpoint.config.max_position_embeddings
    results: list[float] = []
    for start in range(0, len(predictions), chunk_size):
        chunk_predictions = predictions[start:start + chunk_size]
        chunk_references = references[start:start + chunk_size]
        pair_index: dict[tuple[str, str], int] = {}
        example_pairs: list[list[int]] = []
        for prediction, group in zip(chunk_predictions, chunk_references, strict=True):
            example_pairs.append([pair_index.setdefault((reference, prediction), len(pair_index))
                                  for reference in group])
        texts = list(dict.fromkeys(text for pair in pair_index for text in pair))
        ids = dict(zip(texts, tokenize_texts(loaded.tokenizer, texts), strict=True))
        pairs = [pair_ids(loaded.tokenizer, ids[reference], ids[candidate], max_length)
                 for reference, candidate in pair_index]
        scores = _score_pairs(loaded, pairs, batch_size)
        results.extend(max(scores[index] for index in indices) for indices in example_pairs)
        if progress is not None:
            progress(len(chunk_predictions))
    return results


@dataclass(frozen=True)
class BleurtOptions(ModelPlacement, ModelTextBounds):
    """The keyword options of the `bleurt` metric; the checkpoint and device are resolved when they are checked."""

    metric_name = "bleurt"

    checkpoint: str | None = option(None, anything)
    device: str | None = option(None, anything)
    batch_size: int = option(32, integer(minimum=1))
    precision: str = option("fp32", choice(*PRECISIONS))
    verbose: bool = option(False, boolean)

    def validate(self, metric: str) -> None:
        # A checkpoint given is resolved and checked now, before any input is read; a missing one is reported when
        # scoring starts (after the inputs' own checks, so that bad inputs are named first).
        if self.checkpoint is not None:
            self.source
        self.chosen_dtype  # and the device

    @cached_property
    def source(self) -> BleurtCheckpoint:
        return resolve_checkpoint(self.metric_name, self.checkpoint)

    def stats_signature(self) -> str:
        return f"bleurt:{self.source.path}|{self.precision}"
