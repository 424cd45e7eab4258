"""MAUVE's text features: one vector per text from an offline model, in bounded memory, batch-independent.

Two kinds of featurizer, chosen by the model named by ``featurize_model_name``:

* ``last_token`` (causal language models; mauve-text's featurization with GPT-2): the final hidden state
  (after the last layer norm) at the text's last token. The tokenizer's start token, when it has one, is put
  in front of every text (so that an empty text has a feature too); texts are cut to ``max_text_length``
  tokens before it. Texts go through the model in batches of one padded length (:mod:`core_lm_windows`), right
  padded where causal attention never looks back, so a text's feature does not depend on its batch. Only the
  last token's state is computed past the last layer's keys and values where the model's layers allow it
  (:func:`core_onednn.final_states_at`).
* ``mean_pooled`` (encoders such as the packaged all-MiniLM-L6-v2): the sentence embedding as
  sentence-transformers pools it (:mod:`core_sentence`), texts tokenized as :mod:`core_embed` does and cut
  to the smaller of ``max_text_length`` and the model's own maximum.

Each distinct text is featurized once. Names resolve offline only: the packaged models by their aliases, a
``.gguf`` file, a local folder, or a model already in the local Hugging Face cache; anything else is an error
naming ``featurize_model_name``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch

from .core_devices import run_halving, select_dtype
from .core_embed import embed_texts, encode_text
from .core_lm_models import PACKAGED_LM_NAME, PACKAGED_LM_PACKAGE, PACKAGED_LM_PIP, LoadedLm, load_lm
from .core_lm_windows import bucket_length, window_batches
from .core_models import PACKAGED_MODEL_NAME, PACKAGED_MODEL_PACKAGE, PACKAGED_MODEL_PIP, LoadedModel, load_model
from .core_models import FolderLinkError, ModelSource, resolve_model, truncated_model
from .core_onednn import final_states_at
from .core_sentence import pool, pooling_config

FeatureKind = Literal["last_token", "mean_pooled"]
Progress = Callable[[int], None] | None

ENCODER_ALIASES = (PACKAGED_MODEL_NAME, "all-MiniLM-L6-v2", PACKAGED_MODEL_PACKAGE, PACKAGED_MODEL_PIP)
LM_ALIASES = (PACKAGED_LM_PIP, PACKAGED_LM_PACKAGE, PACKAGED_LM_NAME)
DEFAULT_FEATURIZE_MODEL = PACKAGED_LM_PIP  # chosen by measurement: see the card of metrics/mauve
# Texts featurized per chunk (bounds the token embeddings held at once), and padded tokens per LM batch.
CHUNK_SIZE = 2048
MAX_BATCH_TOKENS = 16384


@dataclass(frozen=True)
class FeatureModel:
    """A resolved featurizer: what it computes and the model it loads (``name`` as given, or the alias)."""

    kind: FeatureKind
    name: str
    load_name: str | None


def resolve_feature_model(metric: str, name: Any) -> FeatureModel:
    """Resolve ``featurize_model_name`` to a featurizer without loading weights or touching the network."""
    if name is None:
        name = DEFAULT_FEATURIZE_MODEL
    if not isinstance(name, (str, Path)):
        raise TypeError(f"{metric}: `featurize_model_name` must be a string (a packaged model's name, a local "
                        f"folder, a .gguf file or a cached model name), got {type(name).__name__}")
    name = str(name)
    if name in LM_ALIASES:
        return FeatureModel("last_token", PACKAGED_LM_NAME, None)
    if name in ENCODER_ALIASES:
        return FeatureModel("mean_pooled", PACKAGED_MODEL_NAME, None)
    if name.lower().endswith(".gguf"):
        if not Path(name).expanduser().is_file():
            raise ValueError(f"{metric}: `featurize_model_name` GGUF file {name!r} does not exist")
        return FeatureModel("last_token", name, name)
    if Path(name).expanduser().is_dir():  # a local folder's own faults (no config.json, a link out) as they are
        source = resolve_model(metric, name, argument="featurize_model_name")
    else:
        source = _cached_model(metric, name)
    kind: FeatureKind = "last_token" if _is_causal_lm(metric, source) else "mean_pooled"
    return FeatureModel(kind, name, name)


def _cached_model(metric: str, name: str) -> ModelSource:
    try:
        return resolve_model(metric, name, argument="featurize_model_name")
    except FolderLinkError:  # found in the cache, but its snapshot links out of the model's cache folder
        raise
    except ValueError as error:
        raise ValueError(
            f"{metric}: `featurize_model_name` {name!r} is not a model available offline: it is neither a packaged "
            f"model ({PACKAGED_LM_PIP!r}, 'all-MiniLM-L6-v2'), nor a .gguf file, nor a local model folder, "
            f"nor a model in the local Hugging Face cache, and nothing is downloaded. Download it once "
            f"(`huggingface-cli download {name}`) or pass a local folder"
        ) from error


def _is_causal_lm(metric: str, source: ModelSource) -> bool:
    """True for a decoder-only language model (GPT-2, Llama, ...), false for encoders (BERT-like)."""
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import (MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
                                                        MODEL_FOR_MASKED_LM_MAPPING_NAMES)

    try:
        config = AutoConfig.from_pretrained(str(source.path), local_files_only=True, trust_remote_code=False)
    except Exception as error:  # noqa: BLE001 - reported with the model's name
        raise ValueError(f"{metric}: could not read the configuration of `featurize_model_name` "
                         f"{source.name!r}: {error}") from error
    model_type = str(getattr(config, "model_type", ""))
    return model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and model_type not in MODEL_FOR_MASKED_LM_MAPPING_NAMES


def load_feature_model(metric: str, model: FeatureModel, device: torch.device, precision: str
                       ) -> LoadedLm | LoadedModel:
    """The loaded model of ``model`` on ``device`` in ``precision`` ('fp32', 'bf16', 'fp16'), once per process
    (the neural core's caches)."""
    if model.kind == "last_token":
        return load_lm(metric, model.load_name, device=device, precision=precision)
    source = resolve_model(metric, model.load_name, argument="featurize_model_name")
    return load_model(metric, source, use_fast_tokenizer=True, device=device,
                      dtype=select_dtype(metric, precision, device))


def tokenize_for_features(kind: FeatureKind, loaded: Any, texts: Sequence[str],
                          max_text_length: int) -> list[list[int]]:
    """The token ids each text is featurized from (start token first for language models that have one)."""
    tokenizer = loaded.tokenizer
    if kind == "last_token":
        start = getattr(tokenizer, "bos_token_id", None)
        encoded = tokenizer(list(texts), add_special_tokens=False, return_attention_mask=False)["input_ids"]
        prefix = [] if start is None else [int(start)]
        return [prefix + list(ids[:max_text_length]) for ids in encoded]
    _, model_limit = pooling_config(loaded.source.path)
    limit = min(max_text_length, model_limit or tokenizer.model_max_length)
    return [encode_text(tokenizer, text, limit) for text in texts]


def features_of_ids(kind: FeatureKind, loaded: Any, token_ids: Sequence[Sequence[int]], *, batch_size: int,
                    progress: Progress = None) -> np.ndarray:
    """A float32 [N, D] array: the feature of each token sequence (``loaded`` a :class:`LoadedLm` for
    ``last_token``, a :class:`LoadedModel` for ``mean_pooled``), each distinct sequence computed once,
    ``CHUNK_SIZE`` sequences at a time; ``progress`` is told how many of the sequences each chunk finished."""
    distinct: dict[tuple[int, ...], int] = {}
    rows = [distinct.setdefault(tuple(ids), len(distinct)) for ids in token_ids]
    unique = [list(ids) for ids in distinct]
    copies = np.bincount(rows, minlength=len(unique))  # texts per distinct sequence, for ``progress``
    featurize = _last_token_features if kind == "last_token" else _pooled_features
    parts = []
    for start in range(0, len(unique), CHUNK_SIZE):
        chunk = unique[start:start + CHUNK_SIZE]
        parts.append(featurize(loaded, chunk, batch_size))
        if progress is not None:
            progress(int(copies[start:start + CHUNK_SIZE].sum()))
    return np.concatenate(parts)[rows]


def _last_token_features(lm: LoadedLm, token_ids: Sequence[list[int]], batch_size: int) -> np.ndarray:
    """Final hidden state at the last token of each sequence (sequences of at least one token)."""
    if any(len(ids) == 0 for ids in token_ids):
        raise ValueError(f"the tokenizer of {lm.name!r} has no start token, so an empty text has no feature")
    padded = [bucket_length(len(ids)) for ids in token_ids]
    filler = 1 if getattr(lm.tokenizer, "pad_token_id", None) == 0 else 0  # never attended to: any id works

    def run(batch: Sequence[int]) -> list[np.ndarray]:
        ids = torch.full((len(batch), padded[batch[0]]), filler, dtype=torch.long)
        for row, index in enumerate(batch):
            ids[row, :len(token_ids[index])] = torch.tensor(token_ids[index], dtype=torch.long)
        last = torch.tensor([len(token_ids[index]) - 1 for index in batch], device=lm.device)
        with torch.inference_mode():
            if lm.base is not None:
                states = final_states_at(lm.base, ids.to(lm.device), last)
            else:
                hidden = lm.model(input_ids=ids.to(lm.device), use_cache=False,
                                  output_hidden_states=True).hidden_states[-1]
                states = hidden[torch.arange(len(batch), device=hidden.device), last.to(hidden.device)]
        return list(states.float().cpu().numpy())

    vectors: list[np.ndarray] = [np.empty(0, dtype=np.float32)] * len(token_ids)
    for batch in window_batches(padded, batch_size, MAX_BATCH_TOKENS):
        for index, vector in zip(batch, run_halving(run, batch, lm.device), strict=True):
            vectors[index] = vector
    return np.stack(vectors)


def _pooled_features(loaded: LoadedModel, token_ids: Sequence[list[int]], batch_size: int) -> np.ndarray:
    """Sentence embeddings of token sequences, pooled as the model's sentence-transformers configuration says."""
    mode, _ = pooling_config(loaded.source.path)
    last = loaded.num_hidden_layers
    tokens = embed_texts(loaded.model, loaded.tokenizer, token_ids, device=loaded.device, batch_size=batch_size,
                         layer=last, truncated=truncated_model(loaded.model, last), normalize=False)
    return torch.stack([pool(row, mode) for row in tokens]).float().cpu().numpy()
