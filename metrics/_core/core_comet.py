"""COMET scores of (source, translation[, reference]) triples from a loaded checkpoint.

Each distinct text of a chunk of examples (at most :data:`CHUNK_TEXTS` distinct texts among them; the examples
that share their source and references are taken together, so that systems scored together on the same sources and
references embed each of them once) is tokenized once
(as unbabel-comet tokenizes: truncated to the encoder's positions less four) and embedded once, in length-sorted
batches that pad to nearly their own length; the estimator then scores every (source, translation, reference) row
from those embeddings. unbabel-comet embeds the three texts of every sample again in batches sorted by source length
only; the scores are the same (the embedding of a text does not depend on its batch beyond the last bits of
floating-point summation order).
Loaded models stay in memory for the life of the process (``core_process``'s registry).

Monte Carlo dropout (unbabel-comet's ``predict(mc_dropout=N)``, regression models) scores every example N more
times with a copy of the model in training mode (dropout in the encoder, the layer mix and the estimator), each
text of an example embedded apart from the example's other texts, as unbabel-comet embeds them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from .core_comet_checkpoint import CometCheckpoint, read_weights
from .core_comet_joint import JointResult, joint_scores
from .core_comet_model import CometEstimator, build_estimator
from .core_comet_unified import UnifiedModel, build_unified
from .core_devices import run_halving
from .core_embed import grouped_order, model_batches, pad_ids
from .core_models import offline_model_folder
from .core_onednn import use_onednn_linears
from .core_process import process_state

REDUCTIONS = ("mean", "max")
# the distinct texts (their token ids and sentence embeddings) a regression model holds at once: the three texts of
# 8,192 examples. Four systems' 3,000 WMT17 segments (16,926 distinct texts) fit in one chunk; cut into chunks of
# 8,192 examples, their sources and references were embedded in both chunks (38.7% more tokens with
# scripts/bench_comet.py's tokenizer). More systems take several chunks, each holding whole segments (all systems'
# translations of a source with its references: text_chunks), so each source and reference is still embedded once
CHUNK_TEXTS = 3 * 8192


@dataclass
class LoadedComet:
    """A checkpoint's model and tokenizer on one device."""

    checkpoint: CometCheckpoint
    model: CometEstimator | UnifiedModel
    tokenizer: Any
    device: torch.device
    max_length: int


@dataclass
class _LoadedCheckpoints:
    models: dict[tuple[str, ...], LoadedComet] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


_LOADED = process_state(__file__, "loaded COMET models", _LoadedCheckpoints)


def encoder_folder(metric: str, checkpoint: CometCheckpoint, encoder_path: str | None) -> Path:
    """The folder with the configuration and tokenizer of the checkpoint's encoder, found offline."""
    return offline_model_folder(
        metric, "encoder_path" if encoder_path else "pretrained_model", encoder_path or checkpoint.encoder_name,
        kinds="a local folder",
        otherwise=(f"pass `encoder_path`, a local folder with the configuration and tokenizer files of "
                   f"{checkpoint.encoder_name!r} (its weights come from the COMET checkpoint)"),
    )


def load_comet(metric: str, checkpoint: CometCheckpoint, encoder: Path, *, device: torch.device,
               dtype: torch.dtype, mc_dropout: bool = False) -> LoadedComet:
    """The model of ``checkpoint`` on ``device`` with its encoder in ``dtype``, loaded once per process; with
    ``mc_dropout``, a copy of its own in training mode (dropout on; no fused oneDNN blocks, which leave it out)."""
    stamp = checkpoint.checkpoint.stat()
    key = (str(checkpoint.checkpoint), str(stamp.st_mtime_ns), str(stamp.st_size), str(encoder), str(device),
           str(dtype), "mc-dropout" if mc_dropout else "inference")
    with _LOADED.lock:
        if key in _LOADED.models:
            return _LOADED.models[key]
        state, hparams = read_weights(metric, checkpoint)
        try:
            if checkpoint.is_unified:
                model, tokenizer = build_unified(state, checkpoint.class_identifier, hparams, encoder)
            else:
                model, tokenizer = build_estimator(state, hparams, encoder, checkpoint.needs_references)
        except (OSError, ValueError, KeyError) as error:
            raise ValueError(f"{metric}: could not build COMET model {checkpoint.name!r} on encoder {str(encoder)!r}: "
                             f"{error}") from error
        model.to(device)
        model.encoder.to(dtype=dtype)
        if mc_dropout:
            model.train()
        else:
            use_onednn_linears(model, device, dtype)
        max_length = model.encoder.config.max_position_embeddings - 4
        loaded = LoadedComet(checkpoint, model, tokenizer, device, max_length)
        _LOADED.models[key] = loaded
        return loaded


def clear_comet_cache() -> None:
    """Forget every loaded COMET model."""
    with _LOADED.lock:
        _LOADED.models.clear()


def _embed(loaded: LoadedComet, ids: Sequence[Sequence[int]], batch_size: int,
           progress: Callable[[int], None] | None) -> torch.Tensor:
    """[N, D] sentence embeddings of texts (distinct) given by their token ids, computed in length-sorted
    batches."""
    pad_id = loaded.tokenizer.pad_token_id
    rows: list[torch.Tensor | None] = [None] * len(ids)

    def run(batch: Sequence[int]) -> list[torch.Tensor]:
        padded, mask = pad_ids([ids[index] for index in batch], pad_id)
        with torch.inference_mode():
            embeddings = loaded.model.sentence_embeddings(padded.to(loaded.device), mask.to(loaded.device))
        return list(embeddings)

    for batch in model_batches(loaded.model.encoder, [len(sequence) for sequence in ids], batch_size):
        for index, row in zip(batch, run_halving(run, batch, loaded.device), strict=True):
            rows[index] = row
        if progress is not None:
            progress(len(batch))
    return torch.stack(rows) if rows else torch.zeros((0, 0))  # type: ignore[arg-type]


def text_chunks(sources: Sequence[str], predictions: Sequence[str], references: Sequence[Sequence[str]],
                max_texts: int, separate_roles: bool = False) -> Iterator[list[int]]:
    """The corpus positions cut into chunks of at most ``max_texts`` distinct texts (counted as
    :meth:`_ChunkPlan.of` counts them: each text once, or once per role with ``separate_roles``), each chunk's
    positions in corpus order. The examples are taken with those that share their source and references next to
    each other (:func:`core_embed.grouped_order`), so that a source and its references are embedded again only where
    a chunk's end falls among their examples; an example with more texts than ``max_texts`` forms a chunk alone."""
    seen: set[tuple[int, str]] = set()
    chunk: list[int] = []
    for index in grouped_order([(source, tuple(group)) for source, group in zip(sources, references, strict=True)]):
        entries = {(role if separate_roles else 0, text)
                   for role, texts in enumerate(((sources[index],), (predictions[index],), references[index]))
                   for text in texts}
        new = entries - seen
        if chunk and len(seen) + len(new) > max_texts:
            yield sorted(chunk)
            seen, chunk, new = set(), [], entries
        seen |= new
        chunk.append(index)
    if chunk:
        yield sorted(chunk)


def comet_scores(loaded: LoadedComet, sources: Sequence[str], predictions: Sequence[str],
                 references: Sequence[Sequence[str]], *, batch_size: int, reduction: str = "mean",
                 decoding_threshold: float | None = None, chunk_size: int = 8192, chunk_texts: int = CHUNK_TEXTS,
                 progress: Callable[[int], None] | None = None) -> list[JointResult]:
    """One score per example (with the translation's error spans where the model tags words, decoded with
    ``decoding_threshold``: see ``core_comet_spans.decode_spans``); with several references, the ``reduction``
    ('mean' or 'max') of its scores against each. Joint-input models read ``chunk_size`` examples at a time,
    regression models ``chunk_texts`` distinct texts (:func:`text_chunks`)."""
    results: list[JointResult] = []
    if isinstance(loaded.model, UnifiedModel):
        for start in range(0, len(predictions), chunk_size):
            end = start + chunk_size
            results.extend(joint_scores(loaded.model, loaded.tokenizer, loaded.device, loaded.max_length,
                                        sources[start:end], predictions[start:end], references[start:end],
                                        batch_size=batch_size, reduction=reduction,
                                        decoding_threshold=decoding_threshold, progress=progress))
        return results
    scores = [0.0] * len(predictions)
    for chunk in text_chunks(sources, predictions, references, chunk_texts):
        plan = _ChunkPlan.of(loaded, sources, predictions, references, chunk)
        for index, score in zip(chunk, plan.scores(loaded, batch_size, reduction, progress), strict=True):
            scores[index] = score
    return [JointResult(score, None) for score in scores]


def mc_dropout_scores(loaded: LoadedComet, sources: Sequence[str], predictions: Sequence[str],
                      references: Sequence[Sequence[str]], *, passes: int, batch_size: int, reduction: str = "mean",
                      chunk_texts: int = CHUNK_TEXTS, progress: Callable[[int], None] | None = None
                      ) -> list[tuple[float, float]]:
    """Each example's mean and standard deviation (n - 1 in the denominator, as ``torch.std``) of its scores over
    ``passes`` Monte Carlo dropout passes of a model loaded with ``mc_dropout``; with several references, each
    pass scores the ``reduction`` of the example's scores against each. Chunks: :func:`text_chunks`."""
    results: list[tuple[float, float]] = [(0.0, 0.0)] * len(predictions)
    for chunk in text_chunks(sources, predictions, references, chunk_texts, separate_roles=True):
        plan = _ChunkPlan.of(loaded, sources, predictions, references, chunk, separate_roles=True)
        draws = torch.tensor([plan.scores(loaded, batch_size, reduction, progress) for _ in range(passes)],
                             dtype=torch.float64)
        for index, mean, deviation in zip(chunk, draws.mean(dim=0).tolist(), draws.std(dim=0).tolist(), strict=True):
            results[index] = (mean, deviation)
    return results


@dataclass(frozen=True)
class _ChunkPlan:
    """A chunk's distinct texts as token ids, and for each (example, reference) row the positions of its source,
    translation and reference among them: what every pass over the chunk shares (Monte Carlo dropout scores one
    plan many times)."""

    ids: list[list[int]]
    rows: list[tuple[int, int, int | None]]
    counts: list[int]

    @classmethod
    def of(cls, loaded: LoadedComet, sources: Sequence[str], predictions: Sequence[str],
           references: Sequence[Sequence[str]], chunk: Sequence[int], separate_roles: bool = False) -> _ChunkPlan:
        """The plan of the examples at the corpus positions ``chunk``. With ``separate_roles``, each text is
        embedded once as a source, once as a translation and once as a reference (a translation equal to its
        reference is then embedded twice, as unbabel-comet does)."""
        sources, predictions = [sources[index] for index in chunk], [predictions[index] for index in chunk]
        references = [references[index] for index in chunk]
        roles = (sources, predictions, [text for group in references for text in group])
        entries = list(dict.fromkeys((role if separate_roles else 0, text) for role, texts in enumerate(roles)
                                     for text in texts))
        position = {entry: index for index, entry in enumerate(entries)}
        ids = loaded.tokenizer([text for _, text in entries], truncation=True,
                               max_length=loaded.max_length)["input_ids"] if entries else []
        source_role, translation_role, reference_role = (0, 1, 2) if separate_roles else (0, 0, 0)
        counts = [max(len(group), 1) for group in references]
        rows = [(position[source_role, source], position[translation_role, prediction],
                 position[reference_role, group[k]] if group else None)
                for source, prediction, group, count in zip(sources, predictions, references, counts, strict=True)
                for k in range(count)]
        return cls(ids, rows, counts)

    def scores(self, loaded: LoadedComet, batch_size: int, reduction: str,
               progress: Callable[[int], None] | None) -> list[float]:
        """The examples' scores from one pass of the model over the chunk's distinct texts."""
        embeddings = _embed(loaded, self.ids, batch_size, progress)
        values: list[float] = []
        with torch.inference_mode():
            for start in range(0, len(self.rows), 4096):
                part = self.rows[start:start + 4096]
                source = embeddings[[row[0] for row in part]]
                translation = embeddings[[row[1] for row in part]]
                reference = embeddings[[row[2] for row in part]] if loaded.model.references else None
                values.extend(loaded.model.scores(source, translation, reference).tolist())
        combine = max if reduction == "max" else (lambda group: sum(group) / len(group))
        result, offset = [], 0
        for count in self.counts:
            result.append(float(combine(values[offset:offset + count])))
            offset += count
        return result
