"""BERT-family encoders run on the real tokens of a padded batch only.

A right-padded batch of [batch, length] token ids is mostly real tokens, but a transformers encoder multiplies
every position, padding included, by every weight matrix. Here the embeddings' output is cut down to the real
tokens' rows ([tokens, width], sequence after sequence) and every layer's linear layers, activations and
LayerNorms run on those rows; attention runs within each sequence, each run of neighbouring sequences of equal
length as one unpadded batch (:func:`attend_runs`; length-sorted batches make few runs), so a real token's hidden
states are transformers' own up to the order of float additions. The models this applies to are transformers'
post-LayerNorm BERT, RoBERTa and XLM-R encoders (``BertModel``, ``RobertaModel``, ``XLMRobertaModel``: BERTScore's
and sentence-transformers' encoders, COMET's XLM-R) on the CPU; others, and models on a GPU, run as they are
(:func:`packs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby
from typing import Any

import torch

# transformers' encoder classes whose layers are BERT's (attention.self's query/key/value, attention.output,
# intermediate, output), whose embeddings need only the ids, and which attend with a bidirectional mask
_PACKED_MODELS = ("BertModel", "RobertaModel", "XLMRobertaModel")
_ATTENTIONS = ("sdpa", "eager")
Runs = list[tuple[int, int]]  # (sequences, length) of each run of neighbouring equal-length sequences
# A length-sorted batch of a packed encoder is closed before it is full only where its lengths spread by more than
# this fraction (as padding would): its linear layers never read padding, so fuller batches (larger matrix
# multiplies) pay.
MAX_PADDING = 0.3


class TokenRows:
    """Where the real tokens of a right-padded [batch, length] batch are: the linear layers, norms and activations
    run on those rows only ([tokens, width], padding never multiplied); :meth:`padded` lays rows out padded again
    (for an attention that runs on the padded layout)."""

    def __init__(self, mask: torch.Tensor) -> None:
        self.batch, self.length = mask.shape
        flat = mask.reshape(-1).bool()
        self.count = int(flat.sum())
        self.index = flat.nonzero().squeeze(1)
        self.padding = (~flat).nonzero().squeeze(1)
        counts = mask.sum(1)
        self.firsts = torch.cumsum(counts, 0) - counts  # each sequence's first token ([CLS]) among the rows

    def packed(self, padded: torch.Tensor) -> torch.Tensor:
        """[tokens, ...] rows of a [batch, length, ...] tensor."""
        flat = padded.reshape(self.batch * self.length, *padded.shape[2:])
        return flat if self.count == len(flat) else flat.index_select(0, self.index)

    def padded(self, rows: torch.Tensor) -> torch.Tensor:
        """[batch, length, ...] of [tokens, ...] rows, zeros at the padding."""
        if self.count == self.batch * self.length:
            return rows.view(self.batch, self.length, *rows.shape[1:])
        padded = rows.new_empty(self.batch * self.length, *rows.shape[1:])
        padded.index_fill_(0, self.padding, 0.0).index_copy_(0, self.index, rows)
        return padded.view(self.batch, self.length, *rows.shape[1:])


def packs(model: Any) -> bool:
    """Whether ``model``'s layers run on packed rows here (else it runs as it is): CPU models only. Packing saves
    matrix-multiply work, which a CPU is short of; on a GPU these encoders' time goes to kernel launches and host
    synchronisations (BERTScore's card), which packing's per-run attention and row indexing add to, and the packed
    path has not been measured there."""
    config = getattr(model, "config", None)
    return (type(model).__name__ in _PACKED_MODELS and config is not None and not config.is_decoder
            and next(model.parameters()).device.type == "cpu"
            and getattr(config, "_attn_implementation", None) in _ATTENTIONS
            and getattr(config, "position_embedding_type", "absolute") == "absolute"
            and getattr(config, "chunk_size_feed_forward", 0) == 0 and not model.training)


def length_runs(lengths: Sequence[int]) -> Runs:
    """The runs of neighbouring equal-length sequences among ``lengths``, in order."""
    return [(len(list(group)), length) for length, group in groupby(lengths)]


def attend_runs(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, sequence_runs: Runs, heads: int,
                scale: float, query_rows: int | None = None) -> torch.Tensor:
    """Softmax attention within each packed sequence: ``key``/``value`` hold every token of the runs' sequences
    (``[tokens, width]``), ``query`` the same or, with ``query_rows``, that many rows per sequence."""
    width = key.shape[-1]
    size = width // heads
    outputs = query.new_empty(sum(count for count, _ in sequence_runs) * query_rows, width) \
        if query_rows is not None else torch.empty_like(query)
    token, row = 0, 0
    for count, length in sequence_runs:
        rows = length if query_rows is None else query_rows
        q = query[row:row + count * rows].view(count, rows, heads, size).transpose(1, 2)
        k = key[token:token + count * length].view(count, length, heads, size).transpose(1, 2)
        v = value[token:token + count * length].view(count, length, heads, size).transpose(1, 2)
        attended = torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=scale)
        outputs[row:row + count * rows].view(count, rows, heads, size).copy_(attended.transpose(1, 2))
        token, row = token + count * length, row + count * rows
    return outputs


def encoder_layer(layer: Any, hidden: torch.Tensor, sequence_runs: Runs,
                  picked: torch.Tensor | None = None) -> torch.Tensor:
    """One BERT layer (transformers' ``BertLayer`` in evaluation mode, or RoBERTa's) on the rows ``hidden``
    ([tokens, width]); with ``picked`` (one row per sequence of ``sequence_runs``, then any repeats) only those
    rows' outputs, the keys and values still from every row. Its blocks run as they are, so those ``core_onednn``
    fused run fused."""
    attention = layer.attention.self
    # transformers 4's attention classes have no `scaling`; they divide by sqrt(head size)
    scale = getattr(attention, "scaling", attention.attention_head_size ** -0.5)
    own = hidden if picked is None else hidden[picked]
    context = attend_runs(attention.query(own), attention.key(hidden), attention.value(hidden), sequence_runs,
                          attention.num_attention_heads, scale, None if picked is None else 1)
    if context.shape[0] < own.shape[0]:  # the repeated picked rows: any finite values
        context = torch.cat([context, context[-1:].expand(own.shape[0] - context.shape[0], -1)])
    own = layer.attention.output(context, own)
    return layer.output(layer.intermediate(own), own)


def hidden_rows(model: Any, ids: torch.Tensor, mask: torch.Tensor, layers: int) -> tuple[TokenRows, list[torch.Tensor]]:
    """The hidden states 0..``layers`` (0: the embeddings) of the real tokens of a right-padded batch, each as
    [tokens, width] rows, for a model that :func:`packs`."""
    rows = TokenRows(mask)
    sequence_runs = length_runs(mask.sum(1).tolist())
    states = [rows.packed(model.embeddings(input_ids=ids))]
    for layer in model.encoder.layer[:layers]:
        states.append(encoder_layer(layer, states[-1], sequence_runs))
    return rows, states


def hidden_states(model: Any, ids: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Every hidden state of a right-padded batch, [batch, length, width] each (transformers'
    ``output_hidden_states``); zeros at the padding where the model :func:`packs`, transformers' values there
    otherwise (no caller reads them)."""
    if not packs(model):
        output = model(input_ids=ids, attention_mask=mask, output_hidden_states=True, return_dict=True)
        return tuple(output.hidden_states)
    rows, states = hidden_rows(model, ids, mask, len(model.encoder.layer))
    return tuple(rows.padded(state) for state in states)
