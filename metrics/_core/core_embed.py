"""Batched, length-bucketed, de-duplicated embedding of texts with a transformer encoder.

Texts are tokenized as bert-score 0.3.13 tokenizes them (stripped, special
tokens added, truncated to the tokenizer's maximum length, an empty text
becomes just the special tokens). Each distinct text is embedded once; texts
are sorted by token count and cut into batches so that a batch pads to nearly
its own length. The caller decides how many texts to embed at a time, so the
memory held is bounded by one chunk of texts, never the whole corpus.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from .core_devices import run_halving


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
    """A run of predictions with their references, and the token ids of each distinct text among them."""

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
        parts = pair_values.split([len(group) for group in self.references], dim=dim)
        return torch.stack([part.max(dim=dim).values for part in parts], dim=dim)


def pair_chunks(tokenizer: Any, predictions: Sequence[str], references: Sequence[Sequence[str]], chunk_size: int,
                max_length: int | None = None) -> Iterator[PairChunk]:
    """The corpus ``chunk_size`` predictions at a time, each distinct text of a chunk tokenized once."""
    for start in range(0, len(predictions), chunk_size):
        chunk_predictions = predictions[start:start + chunk_size]
        chunk_references = references[start:start + chunk_size]
        distinct = list(dict.fromkeys(text for prediction, group in zip(chunk_predictions, chunk_references,
                                                                         strict=True) for text in (prediction, *group)))
        token_ids = dict(zip(distinct, encode_texts(tokenizer, distinct, max_length), strict=True))
        yield PairChunk(chunk_predictions, chunk_references, token_ids)


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


def pad_ids(token_ids: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ids and the attention mask of a batch."""
    longest = max(len(ids) for ids in token_ids)
    ids = torch.full((len(token_ids), longest), pad_id, dtype=torch.long)
    mask = torch.zeros((len(token_ids), longest), dtype=torch.long)
    for row, sequence in enumerate(token_ids):
        ids[row, :len(sequence)] = torch.tensor(sequence, dtype=torch.long)
        mask[row, :len(sequence)] = 1
    return ids, mask


def forward_hidden(model: Any, ids: torch.Tensor, mask: torch.Tensor, *, layer: int | None,
                   truncated: Any | None) -> torch.Tensor:
    """Hidden states of one padded batch: [B, T, D] for ``layer``, or [B, T, L+1, D] when ``layer`` is None."""
    with torch.inference_mode():
        if layer is not None and truncated is not None:
            return truncated(ids, attention_mask=mask)[0]
        output = model(ids, attention_mask=mask, output_hidden_states=True)
        hidden = output.hidden_states
        if layer is None:
            return torch.stack(tuple(hidden), dim=2)
        return hidden[layer]


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
    when ``normalize`` is true, in the order of ``token_ids``, kept on ``device``."""
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    results: list[torch.Tensor | None] = [None] * len(token_ids)

    def run(batch: Sequence[int]) -> list[torch.Tensor]:
        ids, mask = pad_ids([token_ids[index] for index in batch], pad_id)
        hidden = forward_hidden(model, ids.to(device), mask.to(device), layer=layer, truncated=truncated)
        hidden = hidden.float()
        if normalize:
            hidden = hidden / torch.norm(hidden, dim=-1).unsqueeze(-1)
        return [hidden[row, :len(token_ids[index])] for row, index in enumerate(batch)]

    for batch in length_batches([len(ids) for ids in token_ids], batch_size):
        for index, tensor in zip(batch, run_halving(run, batch, device), strict=True):
            results[index] = tensor
        if progress is not None:
            progress(len(batch))
    return results  # type: ignore[return-value]
