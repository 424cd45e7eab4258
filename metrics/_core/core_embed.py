"""Batched, length-bucketed, de-duplicated embedding of texts with a transformer encoder.

Texts are tokenized as bert-score 0.3.13 tokenizes them (stripped, special
tokens added, truncated to the tokenizer's maximum length, an empty text
becomes just the special tokens). Each distinct text is embedded once; texts
are sorted by token count and cut into batches so that a batch pads to nearly
its own length. BERT-family encoders run on the real tokens only
(``core_encoder_rows``), and the embeddings are kept packed, each text's rows
end to end with no padding (:class:`PackedEmbeddings`), from which batches of
pairs are gathered in one indexing each. The caller decides how many texts to
embed at a time, so the memory held is bounded by one chunk of texts, never
the whole corpus.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from .core_devices import run_halving
from .core_encoder_rows import MAX_PADDING, TokenRows, hidden_rows, packs


def encode_text(tokenizer: Any, text: str, max_length: int | None = None) -> list[int]:
    """Token ids of ``text`` with special tokens, exactly as bert-score's ``sent_encode`` (truncated to
    ``max_length`` when given, else to the tokenizer's maximum)."""
    text = text.strip()
    if text == "":
        # bert-score calls build_inputs_with_special_tokens([]), which transformers 5 no longer has;
        # encoding the empty string gives the same ids (the special tokens alone).
        build = getattr(type(tokenizer), "build_inputs_with_special_tokens", None)
        if build is not None:
            return list(tokenizer.build_inputs_with_special_tokens([]))
        return list(tokenizer.encode("", add_special_tokens=True))
    return list(tokenizer.encode(text, **_encoding_options(tokenizer, max_length)))


def _encoding_options(tokenizer: Any, max_length: int | None) -> dict[str, Any]:
    """bert-score's ``sent_encode`` options: special tokens, truncation to ``max_length`` (or the tokenizer's
    maximum), a prefix space for (slow) GPT-2 and RoBERTa tokenizers."""
    limit = tokenizer.model_max_length if max_length is None else max_length
    options: dict[str, Any] = {"add_special_tokens": True, "max_length": limit, "truncation": True}
    if _needs_prefix_space(tokenizer):
        options["add_prefix_space"] = True
    return options


def encode_texts(tokenizer: Any, texts: Sequence[str], max_length: int | None = None) -> list[list[int]]:
    """:func:`encode_text` of each of ``texts``, the non-empty ones encoded in one call of the tokenizer (the
    same ids: a batch is each text encoded alone)."""
    stripped = [text.strip() for text in texts]
    present = [index for index, text in enumerate(stripped) if text]
    result: list[list[int]] = [[] for _ in texts]
    if present:
        encoded = tokenizer([stripped[index] for index in present],
                            **_encoding_options(tokenizer, max_length))["input_ids"]
        for index, ids in zip(present, encoded, strict=True):
            result[index] = list(ids)
    for index, text in enumerate(stripped):
        if not text:
            result[index] = encode_text(tokenizer, text, max_length)
    return result


def _needs_prefix_space(tokenizer: Any) -> bool:
    """bert-score adds a prefix space for (slow) GPT-2 and RoBERTa tokenizers."""
    import transformers

    classes = tuple(getattr(transformers, name) for name in ("GPT2Tokenizer", "RobertaTokenizer")
                    if hasattr(transformers, name))
    return bool(classes) and isinstance(tokenizer, classes)


@dataclass(frozen=True)
class PairChunk:
    """Predictions with their references (at the corpus positions ``indices``), and the token ids of each distinct
    text among them."""

    indices: Sequence[int]
    predictions: Sequence[str]
    references: Sequence[Sequence[str]]
    token_ids: dict[str, list[int]]

    def pairs(self) -> tuple[list[str], list[str]]:
        """(prediction, reference) texts of every pair, each prediction once per reference, in order."""
        pair_predictions = [p for p, group in zip(self.predictions, self.references, strict=True) for _ in group]
        return pair_predictions, [r for group in self.references for r in group]

    def reference_maxima(self, pair_values: torch.Tensor, dim: int = 0) -> torch.Tensor:
        """The maximum over each prediction's references of values given per pair (in :meth:`pairs` order)
        along ``dim``."""
        if all(len(group) == 1 for group in self.references):
            return pair_values
        parts = pair_values.split([len(group) for group in self.references], dim=dim)
        return torch.stack([part.max(dim=dim).values for part in parts], dim=dim)


def grouped_order(keys: Sequence[Hashable]) -> list[int]:
    """The positions of ``keys``, those with equal keys next to each other (each group where its first member is,
    its members in order); the identity where no two keys are equal."""
    first: dict[Hashable, int] = {}
    group_of = [first.setdefault(key, index) for index, key in enumerate(keys)]
    return sorted(range(len(keys)), key=lambda index: (group_of[index], index))


def pair_chunks(tokenizer: Any, predictions: Sequence[str], references: Sequence[Sequence[str]], chunk_size: int,
                max_length: int | None = None) -> Iterator[PairChunk]:
    """The corpus ``chunk_size`` predictions at a time, each distinct text of a chunk tokenized once. Predictions
    with the same references are taken together (:func:`grouped_order`), so that systems scored against
    the same references embed each reference once per chunk of ``chunk_size`` predictions, not once per system;
    :func:`in_corpus_order` puts per-prediction results back in the corpus's order."""
    order = grouped_order([tuple(group) for group in references])
    for start in range(0, len(order), chunk_size):
        indices = order[start:start + chunk_size]
        chunk_predictions = [predictions[index] for index in indices]
        chunk_references = [references[index] for index in indices]
        distinct = list(dict.fromkeys(text for prediction, group in zip(chunk_predictions, chunk_references,
                                                                         strict=True) for text in (prediction, *group)))
        token_ids = dict(zip(distinct, encode_texts(tokenizer, distinct, max_length), strict=True))
        yield PairChunk(indices, chunk_predictions, chunk_references, token_ids)


def in_corpus_order(indices: Sequence[int], parts: Sequence[torch.Tensor], dim: int = 0) -> torch.Tensor:
    """The chunks' per-prediction results ``parts``, concatenated along ``dim``, in the corpus's order;
    ``indices``: the chunks' :attr:`PairChunk.indices`, concatenated likewise."""
    combined = torch.cat(parts, dim=dim)
    if list(indices) == list(range(len(indices))):
        return combined
    where = torch.empty(len(indices), dtype=torch.long)
    where[torch.tensor(indices, dtype=torch.long)] = torch.arange(len(indices))
    return combined.index_select(dim, where.to(combined.device))


def length_batches(lengths: Sequence[int], batch_size: int, *, max_padding: float = 0.1,
                   min_batch: int = 8) -> list[list[int]]:
    """Indices of ``lengths`` sorted longest first and cut into batches of at most ``batch_size``.

    A batch is also closed early (once it holds ``min_batch`` texts) when the next text is shorter than its
    longest by more than ``max_padding`` (a fraction), so that few padding tokens go through the model.
    """
    order = sorted(range(len(lengths)), key=lambda index: (-lengths[index], index))
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        if current and (
            len(current) >= batch_size
            or (len(current) >= min_batch and lengths[index] < (1 - max_padding) * lengths[current[0]])
        ):
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


def model_batches(model: Any, lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """:func:`length_batches` for ``model``: fuller batches (closed early only past ``MAX_PADDING``) where it runs
    on the real tokens only (``core_encoder_rows.packs``), since padding then costs only attention."""
    return length_batches(lengths, batch_size, **({"max_padding": MAX_PADDING} if packs(model) else {}))


def pad_ids(token_ids: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ids and the attention mask of a batch."""
    longest = max(len(ids) for ids in token_ids)
    ids = torch.tensor([[*sequence, *[pad_id] * (longest - len(sequence))] for sequence in token_ids],
                       dtype=torch.long)
    lengths = torch.tensor([len(sequence) for sequence in token_ids])
    mask = (torch.arange(longest) < lengths.unsqueeze(1)).long()
    return ids, mask


def _padded_hidden(model: Any, ids: torch.Tensor, mask: torch.Tensor, *, layer: int | None,
                   truncated: Any | None) -> torch.Tensor:
    """Hidden states of one padded batch as the model gives them: [B, T, D] for ``layer``, or [B, T, L+1, D]
    when ``layer`` is None."""
    if layer is not None and truncated is not None:
        return truncated(ids, attention_mask=mask)[0]
    hidden = model(ids, attention_mask=mask, output_hidden_states=True).hidden_states
    return torch.stack(tuple(hidden), dim=2) if layer is None else hidden[layer]


def token_states(model: Any, ids: torch.Tensor, mask: torch.Tensor, *, layer: int | None,
                 truncated: Any | None) -> torch.Tensor:
    """Hidden states of the real tokens of one right-padded batch, sequence after sequence: [tokens, D] for
    ``layer``, or [tokens, L+1, D] when ``layer`` is None. BERT-family encoders run on those tokens only
    (``core_encoder_rows``); other models on the padded batch, their real tokens' states then taken."""
    with torch.inference_mode():
        if packs(model):
            _, states = hidden_rows(model, ids, mask, len(model.encoder.layer) if layer is None else layer)
            return states[-1] if layer is not None else torch.stack(states, dim=1)
        return TokenRows(mask).packed(_padded_hidden(model, ids, mask, layer=layer, truncated=truncated))


@dataclass(frozen=True)
class PackedEmbeddings:
    """Token embeddings of texts laid end to end in one tensor, with no padding between them: ``table`` holds the
    texts' rows ([tokens + 1, ...], in the order they were embedded) and, last, one row of zeros that pads the
    batches :meth:`gather_index` indexes; text ``i`` is rows ``starts[i]`` to ``starts[i] + lengths[i]``."""

    table: torch.Tensor
    starts: list[int]
    lengths: list[int]

    @property
    def zero_row(self) -> int:
        return self.table.shape[0] - 1

    def rows(self, text: int) -> torch.Tensor:
        """[T, ...] rows of text ``text`` (a view of the table)."""
        return self.table[self.starts[text]:self.starts[text] + self.lengths[text]]

    def gather_index(self, texts: Sequence[int]) -> torch.Tensor:
        """[B, T] table rows of ``texts``, each right-padded to the longest with the zero row (on the CPU)."""
        starts = torch.tensor([self.starts[text] for text in texts])
        lengths = torch.tensor([self.lengths[text] for text in texts])
        positions = torch.arange(int(lengths.max()))
        index = starts.unsqueeze(1) + positions
        return index.masked_fill_(positions >= lengths.unsqueeze(1), self.zero_row)


def embed_packed(
    model: Any,
    tokenizer: Any,
    token_ids: Sequence[Sequence[int]],
    *,
    device: torch.device,
    batch_size: int,
    layer: int | None,
    truncated: Any | None = None,
    normalize: bool = True,
    progress: Callable[[int], None] | None = None,
) -> PackedEmbeddings:
    """The float32 token embeddings of every text, [T, D] (or [T, L+1, D] with ``layer=None``), L2-normalised per
    token when ``normalize`` is true, packed in one table on ``device``."""
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    lengths = [len(ids) for ids in token_ids]
    starts = [0] * len(token_ids)
    table: torch.Tensor | None = None
    filled = 0

    def run(batch: Sequence[int]) -> list[torch.Tensor]:
        ids, mask = pad_ids([token_ids[index] for index in batch], pad_id)
        hidden = token_states(model, ids.to(device), mask.to(device), layer=layer, truncated=truncated).float()
        if normalize:
            hidden = hidden / torch.norm(hidden, dim=-1).unsqueeze(-1)
        return list(hidden.split([lengths[index] for index in batch]))

    for batch in model_batches(model, lengths, batch_size):
        rows = run_halving(run, batch, device)
        if table is None:  # the width (and layers) are known once a batch has run; the last row stays zero
            table = rows[0].new_zeros((sum(lengths) + 1, *rows[0].shape[1:]))
        count = sum(lengths[index] for index in batch)
        torch.cat(rows, out=table[filled:filled + count])
        for index in batch:
            starts[index] = filled
            filled += lengths[index]
        if progress is not None:
            progress(len(batch))
    if table is None:  # no texts
        table = torch.zeros((1, 0), device=device)
    return PackedEmbeddings(table, starts, lengths)


def embed_texts(
    model: Any,
    tokenizer: Any,
    token_ids: Sequence[Sequence[int]],
    *,
    device: torch.device,
    batch_size: int,
    layer: int | None,
    truncated: Any | None = None,
    normalize: bool = True,
    progress: Callable[[int], None] | None = None,
) -> list[torch.Tensor]:
    """One float32 tensor per text, [T, D] (or [T, L+1, D] with ``layer=None``), L2-normalised per token
    when ``normalize`` is true, in the order of ``token_ids``, kept on ``device`` (views of one packed table)."""
    packed = embed_packed(model, tokenizer, token_ids, device=device, batch_size=batch_size, layer=layer,
                          truncated=truncated, normalize=normalize, progress=progress)
    return [packed.rows(index) for index in range(len(token_ids))]
