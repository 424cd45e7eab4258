"""BERTScore's arithmetic on tensors: greedy cosine matching with idf weights, rescaling, the hash.

Pure functions of embeddings and token ids, testable with synthetic tensors.
The numbers are those of bert-score 0.3.13 (``bert_score/utils.py``):

- token weights are idf values from the references, ``log((N + 1) / (df + 1))``
  with ``log(N + 1)`` for tokens no reference holds; without idf every token
  weighs 1 except the [CLS] and [SEP] ids, which weigh 0. The special tokens
  still take part in the matching (as candidates for the best match);
- precision is the weighted mean over prediction tokens of the best cosine
  similarity with any reference token, recall the same the other way round,
  F1 their harmonic mean (0 where undefined);
- a prediction or reference with no tokens besides the two special ones gets
  P = R = 0 (and so F1 = 0), as bert-score does;
- a prediction or reference whose tokens all weigh 0 (the text is only the
  tokenizer's [CLS]/[SEP] strings, or with idf every token is in every
  reference) gets bert-score's 0/0: its precision or recall is NaN, F1 0;
  :func:`warn_undefined_scores` says which examples;
- rescaling is ``(score - baseline) / (1 - baseline)`` per P, R, F.

One deliberate difference: padded positions are excluded from the maxima.
bert-score multiplies the similarities by the padding mask, so a padded
position counts as similarity 0 and wins the maximum whenever every real
similarity of a token is negative; its result then depends on which other
sentences share the batch. Here the maximum is over real tokens only, so the
result never depends on batching. The two agree whenever a token's best match
is non-negative, which is the case on all the data we tested.
"""

from __future__ import annotations

import csv
import io
import logging
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch

from .core_checks import listed_indices, warn_caller

logger = logging.getLogger(__name__)

PROJECT_BERTSCORE_VERSION = "0.1.0"


@dataclass(frozen=True)
class IdfWeights:
    """Token weights: a table and the weight of tokens not in it."""

    table: dict[int, float]
    default: float

    def weights(self, token_ids: Sequence[int]) -> list[float]:
        return [self.table.get(token, self.default) for token in token_ids]


def idf_from_references(reference_token_ids: Iterable[Sequence[int]]) -> IdfWeights:
    """Inverse document frequencies over references (each a set of token ids), as bert-score's get_idf_dict."""
    counts: Counter[int] = Counter()
    documents = 0
    for token_ids in reference_token_ids:
        documents += 1
        counts.update(set(token_ids))
    table = {token: math.log((documents + 1) / (count + 1)) for token, count in counts.items()}
    return IdfWeights(table, math.log((documents + 1) / 1))


def uniform_weights(special_token_ids: Iterable[int | None]) -> IdfWeights:
    """Weight 1 for every token and 0 for the special tokens given (bert-score's weights without idf)."""
    return IdfWeights({token: 0.0 for token in special_token_ids if token is not None}, 1.0)


def greedy_match(
    prediction_embeddings: torch.Tensor,
    prediction_mask: torch.Tensor,
    prediction_weights: torch.Tensor,
    reference_embeddings: torch.Tensor,
    reference_mask: torch.Tensor,
    reference_weights: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Precision, recall and F1 ([B] each) of a batch of pairs.

    Embeddings are [B, T, D] and L2-normalised per token, masks [B, T] (True for
    real tokens), weights [B, T] (unnormalised idf; 0 at padding).
    """
    similarity = torch.bmm(prediction_embeddings, reference_embeddings.transpose(1, 2))
    pair_mask = prediction_mask.unsqueeze(2) & reference_mask.unsqueeze(1)
    similarity = similarity.masked_fill(~pair_mask, float("-inf"))
    word_precision = similarity.max(dim=2)[0].masked_fill(~prediction_mask, 0.0)
    word_recall = similarity.max(dim=1)[0].masked_fill(~reference_mask, 0.0)
    precision_scale = prediction_weights / prediction_weights.sum(dim=1, keepdim=True)
    recall_scale = reference_weights / reference_weights.sum(dim=1, keepdim=True)
    precision = (word_precision * precision_scale).sum(dim=1)
    recall = (word_recall * recall_scale).sum(dim=1)
    f1 = 2 * precision * recall / (precision + recall)
    empty = prediction_mask.sum(dim=1).eq(2) | reference_mask.sum(dim=1).eq(2)
    precision = precision.masked_fill(empty, 0.0)
    recall = recall.masked_fill(empty, 0.0)
    f1 = f1.masked_fill(torch.isnan(f1), 0.0)
    return precision, recall, f1


def warn_undefined_scores(metric: str, scores: torch.Tensor) -> None:
    """Warn about the examples whose precision or recall is NaN in ``scores`` ([N, 3] or [L+1, N, 3])."""
    undefined = scores[..., :2].isnan().any(dim=-1)
    if undefined.dim() > 1:
        undefined = undefined.any(dim=0)
    indices = undefined.nonzero().flatten().tolist()
    if indices:
        warn_caller(
            f"{metric}: {len(indices)} example(s) have a prediction or reference with no weighted token (only the "
            f"tokenizer's special-token strings such as [CLS] and [SEP], or with idf=True only tokens that every "
            f"reference holds): their precision or recall is NaN and F1 0, as in bert-score, and the means over "
            f"them are NaN (indices {listed_indices(indices)})"
        )


def rescale(scores: torch.Tensor, baseline: torch.Tensor) -> torch.Tensor:
    """``(scores - baseline) / (1 - baseline)``, the baseline broadcast over the last dimension (P, R, F)."""
    return (scores - baseline) / (1 - baseline)


def parse_baseline(metric: str, text: str, source: str) -> torch.Tensor:
    """bert-score's baseline file (CSV with a header ``LAYER,P,R,F``, one row per layer from 0) as [L+1, 3]."""
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or [cell.strip() for cell in rows[0][1:4]] != ["P", "R", "F"]:
        raise ValueError(f"{metric}: baseline {source} is not a bert-score baseline file (header LAYER,P,R,F)")
    try:
        values = [[float(cell) for cell in row[1:4]] for row in rows[1:] if row]
    except ValueError as error:
        raise ValueError(f"{metric}: baseline {source} holds a value that is not a number: {error}") from error
    if not values:
        raise ValueError(f"{metric}: baseline {source} holds no layers")
    for layer, row in enumerate(values):
        if len(row) != 3:
            raise ValueError(f"{metric}: baseline {source} row of layer {layer} has {len(row)} values, not 3 (P, R, F)")
        for measure, value in zip("PRF", row, strict=True):
            if not math.isfinite(value) or value >= 1:
                raise ValueError(
                    f"{metric}: baseline {source} has {measure}={value} for layer {layer}; baselines must be finite "
                    f"and below 1 (rescaling divides by 1 - baseline)"
                )
    return torch.tensor(values, dtype=torch.float32)


def check_baseline_layers(metric: str, table: torch.Tensor, num_hidden_layers: int, layer: int, *,
                          all_layers: bool) -> None:
    """The baseline covers the layers that will be rescaled: every layer with ``all_layers``, else ``layer``."""
    needed = num_hidden_layers + 1 if all_layers else layer + 1
    if table.shape[0] < needed:
        what = f"all {needed} layers (0..{num_hidden_layers})" if all_layers else f"layer {layer}"
        raise ValueError(f"{metric}: the baseline has rows for {table.shape[0]} layers but rescaling needs {what}; "
                         f"pass a baseline file for this model")
    if table.shape[0] != num_hidden_layers + 1:
        logger.warning("%s: the baseline has %d rows but the model has %d layers", metric, table.shape[0],
                       num_hidden_layers + 1)


def baseline_for_layer(metric: str, table: torch.Tensor, layer: int, source: str) -> torch.Tensor:
    """The [3] baseline of ``layer`` (row ``layer`` of the file, as bert-score reads it)."""
    if not 0 <= layer < table.shape[0]:
        raise ValueError(
            f"{metric}: baseline {source} has rows for layers 0..{table.shape[0] - 1}, not for `num_layers`={layer}"
        )
    return table[layer]


def bertscore_hash(model: str, num_layers: int, idf: bool, rescale_with_baseline: bool,
                   custom_baseline: bool, use_fast_tokenizer: bool, transformers_version: str) -> str:
    """bert-score's hash layout with this project's version: model, layer, idf, versions, rescaling, tokenizer."""
    text = "{}_L{}{}_version=metrics-{}(hug_trans={})".format(
        model, num_layers, "_idf" if idf else "_no-idf", PROJECT_BERTSCORE_VERSION, transformers_version
    )
    if rescale_with_baseline:
        text += "-custom-rescaled" if custom_baseline else "-rescaled"
    if use_fast_tokenizer:
        text += "_fast-tokenizer"
    return text
