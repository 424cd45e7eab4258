"""Scores (and error spans) of CometKiwi and XCOMET models, as unbabel-comet's ``predict`` gives them.

Each example is one sample per reference (or one, without references). A sample's inputs are, as unbabel-comet
selects them from the segments the model reads: the translation joined with the source, with the reference, and
with both (three inputs, whose scores and tag probabilities are combined) when the model reads both and a
reference is given; else the translation joined with the one segment it has. Each distinct text is tokenized once
(truncated to the encoder's positions less four); each distinct joined input runs through the encoder once, in
length-sorted batches, so sources, references and translations repeated across systems cost nothing twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from .core_comet_spans import (XCOMET_SCORE_WEIGHTS, decode_spans, joined_ids, mixed_probabilities, mqm_scores,
                               unified_scores, xcomet_scores)
from .core_comet_unified import UnifiedModel
from .core_devices import run_halving
from .core_embed import model_batches, pad_ids


@dataclass(frozen=True)
class JointResult:
    """One example's score and, for models with word-level tags, its translation's error spans."""

    score: float
    error_spans: list[dict[str, Any]] | None


def sample_inputs(model_segments: Sequence[str], source: str, translation: str,
                  reference: str | None) -> list[tuple[str, ...]]:
    """The texts of each input of one sample, translation first (unbabel-comet's ``prepare_sample``)."""
    source_used = "src" in model_segments
    reference_used = "ref" in model_segments and reference is not None
    if source_used and reference_used:
        return [(translation, source), (translation, reference), (translation, source, reference)]
    return [(translation, source) if source_used else (translation, reference)]  # type: ignore[list-item]


class _Tokens:
    """Token ids (padding removed, as unbabel-comet joins them) and offsets of distinct texts."""

    def __init__(self, tokenizer: Any, texts: Sequence[str], max_length: int) -> None:
        distinct = list(dict.fromkeys(texts))
        encoded = tokenizer(distinct, truncation=True, max_length=max_length, return_offsets_mapping=True)
        pad = tokenizer.pad_token_id
        self.ids = {text: [token for token in ids if token != pad]
                    for text, ids in zip(distinct, encoded["input_ids"], strict=True)}
        self.offsets = {text: [tuple(pair) for pair in offsets]
                        for text, offsets in zip(distinct, encoded["offset_mapping"], strict=True)}


def joint_scores(model: UnifiedModel, tokenizer: Any, device: torch.device, max_length: int,
                 sources: Sequence[str], predictions: Sequence[str], references: Sequence[Sequence[str]], *,
                 batch_size: int, reduction: str, decoding_threshold: float | None = None,
                 progress: Callable[[int], None] | None = None) -> list[JointResult]:
    """One result per example; with several references, the ``reduction`` ('mean' or 'max') of its scores against
    each (error spans then come from no single pair, and are refused by the caller). ``decoding_threshold``: see
    ``decode_spans``."""
    settings = model.settings
    samples = [(index, sample_inputs(settings.segments, source, translation, reference))
               for index, (source, translation, group) in enumerate(zip(sources, predictions, references, strict=True))
               for reference in (group or [None])]
    tokens = _Tokens(tokenizer, [text for _, inputs in samples for texts in inputs for text in texts], max_length)
    sequences: dict[tuple[int, ...], int] = {}
    mt_lengths: list[int] = []
    rows: list[list[int]] = []
    for _, inputs in samples:
        rows.append([])
        for texts in inputs:
            key = tuple(joined_ids([tokens.ids[text] for text in texts], tokenizer.cls_token_id,
                                   tokenizer.sep_token_id, max_length + 2))
            if key not in sequences:
                sequences[key] = len(sequences)
                mt_lengths.append(len(tokens.offsets[texts[0]]))
            rows[-1].append(sequences[key])
    scores, probabilities = _run(model, device, list(sequences), mt_lengths, tokenizer.pad_token_id, batch_size,
                                 progress)
    results: list[list[float]] = [[] for _ in predictions]
    spans: list[list[dict[str, Any]] | None] = [None] * len(predictions)
    for (index, inputs), sample_rows in zip(samples, rows, strict=True):
        translation = inputs[0][0]
        sample_scores = [scores[row:row + 1] for row in sample_rows]
        if settings.word_level:
            mixed = mixed_probabilities([probabilities[row] for row in sample_rows])  # type: ignore[misc]
            spans[index] = decode_spans(mixed, tokens.ids[translation], tokens.offsets[translation], settings.labels,
                                        tokenizer.decode, decoding_threshold)
        if settings.xcomet:
            score = xcomet_scores(sample_scores, mqm_scores([spans[index] or []]), XCOMET_SCORE_WEIGHTS)
        else:
            score = unified_scores(sample_scores)
        results[index].append(float(score.item()))
    combine = max if reduction == "max" else (lambda group: sum(group) / len(group))
    return [JointResult(float(combine(values)), example_spans) for values, example_spans in zip(results, spans)]


def _run(model: UnifiedModel, device: torch.device, sequences: list[tuple[int, ...]], mt_lengths: list[int],
         pad_id: int, batch_size: int, progress: Callable[[int], None] | None
         ) -> tuple[torch.Tensor, list[torch.Tensor | None]]:
    """The float32 score of every joined input, and the tag probabilities of its translation's tokens (None
    without word-level tags)."""
    scores = torch.zeros(len(sequences))
    probabilities: list[torch.Tensor | None] = [None] * len(sequences)

    def run(batch: Sequence[int]) -> list[tuple[torch.Tensor, torch.Tensor | None]]:
        padded, mask = pad_ids([sequences[index] for index in batch], pad_id)
        with torch.inference_mode():
            batch_scores, batch_probabilities = model(padded.to(device), mask.to(device))
        batch_scores = batch_scores.float().cpu()
        if batch_probabilities is None:
            return [(score, None) for score in batch_scores]
        batch_probabilities = batch_probabilities.float().cpu()
        return [(score, batch_probabilities[row, :mt_lengths[index]].clone())
                for row, (score, index) in enumerate(zip(batch_scores, batch, strict=True))]

    for batch in model_batches(model.encoder, [len(sequence) for sequence in sequences], batch_size):
        for index, (score, tags) in zip(batch, run_halving(run, batch, device), strict=True):
            scores[index] = score
            probabilities[index] = tags
        if progress is not None:
            progress(len(batch))
    return scores, probabilities
