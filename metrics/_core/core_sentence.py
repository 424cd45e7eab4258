"""Sentence embeddings by pooling token embeddings, and the cosine similarity of prediction/reference pairs.

The pooling follows the model's sentence-transformers configuration when the
model folder has one (``1_Pooling/config.json``: mean, CLS or max over the
tokens, special tokens included, as sentence-transformers pools) and mean
pooling otherwise; texts are truncated to ``max_seq_length`` from
``sentence_bert_config.json`` when present. Texts stream through the model a
chunk at a time, each distinct text once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Literal

import torch

from .core_devices import PRECISIONS, ModelPlacement
from .core_embed import embed_texts, in_corpus_order, pair_chunks
from .core_models import LoadedModel, ModelSource, resolve_model, truncated_model
from .core_options import anything, boolean, choice, integer, option
from .core_resources import ModelTextBounds

Pooling = Literal["mean", "cls", "max"]
DEFAULT_CHUNK_SIZE = 4096


def pooling_config(model_path: Path) -> tuple[Pooling, int | None]:
    """(pooling mode, maximum sequence length or None) from a sentence-transformers model folder."""
    mode: Pooling = "mean"
    config = model_path / "1_Pooling" / "config.json"
    if config.is_file():
        settings = json.loads(config.read_text(encoding="utf-8"))
        if settings.get("pooling_mode_cls_token"):
            mode = "cls"
        elif settings.get("pooling_mode_max_tokens"):
            mode = "max"
    max_length = None
    sentence_config = model_path / "sentence_bert_config.json"
    if sentence_config.is_file():
        value = json.loads(sentence_config.read_text(encoding="utf-8")).get("max_seq_length")
        max_length = value if isinstance(value, int) else None
    return mode, max_length


def pool(tokens: torch.Tensor, mode: Pooling) -> torch.Tensor:
    """One vector from a [T, D] tensor of token embeddings."""
    if mode == "cls":
        return tokens[0]
    if mode == "max":
        return tokens.max(dim=0)[0]
    return tokens.mean(dim=0)


def pair_similarities(
    loaded: LoadedModel,
    predictions: Sequence[str],
    references: Sequence[Sequence[str]],
    *,
    mode: Pooling,
    max_length: int | None,
    batch_size: int = 64,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    progress: Callable[[int], None] | None = None,
) -> torch.Tensor:
    """Cosine similarity of each prediction's sentence embedding with its references' (the maximum over them):
    a [N] float32 tensor on the CPU."""
    model, tokenizer = loaded.model, loaded.tokenizer
    last = loaded.num_hidden_layers
    truncated = truncated_model(model, last)
    results, indices = [], []
    for chunk in pair_chunks(tokenizer, predictions, references, chunk_size, max_length):
        order = list(chunk.token_ids)
        tokens = embed_texts(model, tokenizer, [chunk.token_ids[text] for text in order], device=loaded.device,
                             batch_size=batch_size, layer=last, truncated=truncated, normalize=False)
        vectors = torch.stack([pool(row, mode) for row in tokens])
        vectors = torch.nn.functional.normalize(vectors, dim=-1)
        index = {text: position for position, text in enumerate(order)}
        pair_predictions, pair_references = chunk.pairs()
        cosines = (vectors[[index[p] for p in pair_predictions]] * vectors[[index[r] for r in pair_references]]
                   ).sum(dim=-1)
        results.append(chunk.reference_maxima(cosines).cpu())
        indices += chunk.indices
        if progress is not None:
            progress(len(chunk.predictions))
    return in_corpus_order(indices, results)


@dataclass(frozen=True)
class SemanticSimilarityOptions(ModelPlacement, ModelTextBounds):
    """The keyword options of the `semantic_similarity` metric; the model and device are resolved when checked."""

    metric_name = "semantic_similarity"

    model_type: str | None = option(None, anything)
    device: str | None = option(None, anything)
    batch_size: int = option(64, integer(minimum=1))
    precision: str = option("fp32", choice(*PRECISIONS))
    verbose: bool = option(False, boolean)

    def validate(self, metric: str) -> None:
        self.source, self.chosen_dtype  # resolved now (the device too): errors before any input is read

    @cached_property
    def source(self) -> ModelSource:
        return resolve_model(self.metric_name, self.model_type)

    def stats_signature(self) -> str:
        return f"{self.source.name}|pool:config|{self.precision}"
