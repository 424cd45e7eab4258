"""BERTScore of a corpus, streamed through the model chunk by chunk with bounded memory.

Predictions are taken a chunk at a time, those with the same references
together (several systems scored against one reference set share chunks, so
each reference is embedded once per chunk, not once per system); the distinct
texts of the chunk (its predictions and all their references) are tokenized,
embedded once each in length-sorted batches, matched pair by pair, and dropped
before the next chunk. Memory is bounded by the chunk size, not by the corpus
size.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from .core_bertscore import IdfWeights, greedy_match, idf_from_references, uniform_weights
from .core_embed import PackedEmbeddings, embed_packed, encode_texts, in_corpus_order, pair_chunks
from .core_models import LoadedModel, truncated_model

DEFAULT_CHUNK_SIZE = 2048


def check_layer(metric: str, num_layers: Any, available: int, model_name: str) -> int:
    """``num_layers`` as a valid layer index 0..available (0 is the embedding layer)."""
    if isinstance(num_layers, bool) or not isinstance(num_layers, int):
        raise TypeError(f"{metric}: `num_layers` must be an integer, got {type(num_layers).__name__}")
    if not 0 <= num_layers <= available:
        raise ValueError(
            f"{metric}: unknown layer `num_layers`={num_layers} for {model_name}, which has layers 0..{available} "
            f"(0 is the embedding layer)"
        )
    return num_layers


def token_weights(loaded: LoadedModel, references: Sequence[Sequence[str]], idf: bool) -> IdfWeights:
    """idf weights from every reference (each counted once per occurrence), or bert-score's uniform weights."""
    tokenizer = loaded.tokenizer
    if not idf:
        return uniform_weights((tokenizer.sep_token_id, tokenizer.cls_token_id))
    flat = [reference for group in references for reference in group]
    return idf_from_references(ids for start in range(0, len(flat), 4096)
                               for ids in encode_texts(tokenizer, flat[start:start + 4096]))


def _match_batches(packed: PackedEmbeddings, table: torch.Tensor, weights: torch.Tensor, predictions: Sequence[int],
                   references: Sequence[int], batch_size: int) -> torch.Tensor:
    """[n, 3] scores of the pairs (``predictions[i]``, ``references[i]``) of packed texts: ``table`` is the
    packed rows (one layer's), ``weights`` each row's token weight (0 at the zero row)."""
    out = []
    for start in range(0, len(predictions), batch_size):
        sides = []
        for texts in (predictions[start:start + batch_size], references[start:start + batch_size]):
            index = packed.gather_index(texts).to(table.device)
            sides.append((table[index], index.ne(packed.zero_row), weights[index]))
        (prediction, prediction_mask, prediction_w), (reference, reference_mask, reference_w) = sides
        out.append(torch.stack(greedy_match(prediction, prediction_mask, prediction_w,
                                            reference, reference_mask, reference_w), dim=-1))
    return torch.cat(out, dim=0)


def score_corpus(
    loaded: LoadedModel,
    predictions: Sequence[str],
    references: Sequence[Sequence[str]],
    *,
    num_layers: int,
    weights: IdfWeights,
    all_layers: bool = False,
    batch_size: int = 64,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    progress: Callable[[int], None] | None = None,
) -> torch.Tensor:
    """Scores (P, R, F) of every prediction, the maximum over its references of each: [N, 3] float32 on the
    CPU, or [L+1, N, 3] with ``all_layers``."""
    model, tokenizer, device = loaded.model, loaded.tokenizer, loaded.device
    truncated = None if all_layers else truncated_model(model, num_layers)
    layer = None if all_layers else num_layers
    if all_layers:  # every layer's embeddings are held: fewer texts per chunk keep memory in the same bound
        chunk_size = max(1, chunk_size // (loaded.num_hidden_layers + 1))
    results, indices = [], []
    for chunk in pair_chunks(tokenizer, predictions, references, chunk_size):
        order = list(chunk.token_ids)
        packed = embed_packed(model, tokenizer, [chunk.token_ids[text] for text in order], device=device,
                              batch_size=batch_size, layer=layer, truncated=truncated)
        row_weights = [0.0] * packed.table.shape[0]  # in the table's order; the zero row's stays 0
        for position, text in enumerate(order):
            start = packed.starts[position]
            row_weights[start:start + packed.lengths[position]] = weights.weights(chunk.token_ids[text])
        weight_table = torch.tensor(row_weights, dtype=torch.float32, device=device)
        position_of = {text: position for position, text in enumerate(order)}
        pair_predictions, pair_references = ([position_of[text] for text in texts] for texts in chunk.pairs())
        layers = [None] if not all_layers else list(range(loaded.num_hidden_layers + 1))
        per_layer = [_match_batches(packed, packed.table if index is None else packed.table[:, index], weight_table,
                                    pair_predictions, pair_references, batch_size).cpu()
                     for index in layers]
        del packed
        scores = torch.stack(per_layer, dim=0)  # [layers, pairs, 3]
        results.append(chunk.reference_maxima(scores, dim=1))
        indices += chunk.indices
        if progress is not None:
            progress(len(chunk.predictions))
    combined = in_corpus_order(indices, results, dim=1)
    return combined if all_layers else combined[0]
