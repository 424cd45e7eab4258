"""Summed negative log-likelihood of texts under a causal LM, in bounded memory, independent of batching.

Texts are taken ``chunk_size`` at a time: tokenized (without special tokens,
the start token put in front as evaluate's ``perplexity`` does), cut into
windows (:mod:`core_lm_windows`), and the windows of the chunk go through the
model in batches of one padded length, longest first. Per token the NLL is
``logsumexp(logits) - logit(target)`` in float32; per text the NLLs of all its
scored tokens are summed exactly (``math.fsum``), so the sum does not depend on
how the text was cut or batched. Only the hidden states of the scored
positions go through the output layer, a bounded number of rows at a time, so
no batch x length x vocabulary tensor is kept (where the model's head cannot
be split off, the model's own logits are used, per batch). On an accelerator
out-of-memory error a batch is split in halves and retried; since a window's
result does not depend on its batch, the results are the same.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

from .core_checks import warn_caller
from .core_devices import run_halving
from .core_lm_models import LoadedLm, run_head
from .core_lm_windows import Window, bucket_length, window_batches, windows_of

DEFAULT_CHUNK_SIZE = 2048
DEFAULT_MAX_BATCH_TOKENS = 16384
# Rows of hidden states sent through the output layer at once (a multiple of 8: no small-matrix kernels).
HEAD_ROWS = 1024
_ROW_MULTIPLE = 8


@dataclass(frozen=True)
class TextScore:
    """Summed NLL (nats) of a text's scored tokens, how many were scored, and the UTF-8 bytes they cover."""

    nll: float
    tokens: int
    bytes: int


@dataclass(frozen=True)
class Encoded:
    """A text's token ids as scored (start token first when there is one) and the UTF-8 bytes scored."""

    ids: list[int]
    windows: list[Window]
    bytes: int


@contextmanager
def progress_bar(total: int, enabled: bool = True, description: str = "perplexity") -> Iterator[
        Callable[[int], None] | None]:
    """A ``progress`` callback that advances a tqdm bar over ``total`` texts (None when disabled or without
    tqdm)."""
    if not enabled:
        yield None
        return
    try:
        from tqdm.auto import tqdm
    except ImportError:
        yield None
        return
    bar = tqdm(total=total, desc=description, unit="text")
    try:
        yield bar.update
    finally:
        bar.close()


def start_token_id(metric: str, tokenizer: Any, add_start_token: bool, model_name: str) -> int | None:
    """The id put in front of each text, or None (with a warning when ``add_start_token`` cannot be honoured)."""
    if not add_start_token:
        return None
    bos = getattr(tokenizer, "bos_token_id", None)
    if bos is None:
        warn_caller(
            f"{metric}: add_start_token=True cannot be honoured: the tokenizer of {model_name!r} has no start "
            f"(BOS) token, so the first token of each text is not scored, as with add_start_token=False"
        )
        return None
    return int(bos)


def _scored_bytes(text: str, ids: list[int], offsets: Any, tokenizer: Any, first_scored: int, kept: int) -> int:
    """UTF-8 bytes of the part of ``text`` whose tokens are scored (tokens ``first_scored:kept`` of the text)."""
    whole = first_scored == 0 and kept == len(ids)
    if whole or kept <= first_scored:
        return len(text.encode("utf-8")) if whole else 0
    if offsets is not None:
        begin = 0 if first_scored == 0 else offsets[first_scored - 1][1]
        end = len(text) if kept == len(ids) else offsets[kept - 1][1]
        return len(text[begin:end].encode("utf-8"))
    return len(tokenizer.decode(ids[first_scored:kept]).encode("utf-8"))


# ``check(first, lengths)``: called with the token counts (start token included) of texts ``first``, ``first + 1``,
# ... before any of them is cut into windows or scored; it raises to refuse them.
LengthCheck = Callable[[int, Sequence[int]], None]


def encode_texts(tokenizer: Any, texts: Sequence[str], *, start_id: int | None, window: int | None, stride: int,
                 truncation: bool, check: LengthCheck | None = None, first: int = 0) -> list[Encoded]:
    """Token ids, windows and scored bytes of each text (``check``, when given, sees the token counts first;
    ``first`` is the index of ``texts[0]`` that it is told)."""
    fast = bool(getattr(tokenizer, "is_fast", False))
    encoding = tokenizer(list(texts), add_special_tokens=False, return_attention_mask=False,
                         return_offsets_mapping=fast)
    all_offsets = encoding.get("offset_mapping") if fast else None
    if check is not None:
        shift = 0 if start_id is None else 1
        check(first, [len(ids) + shift for ids in encoding["input_ids"]])
    result = []
    for position, text in enumerate(texts):
        token_ids = list(encoding["input_ids"][position])
        ids = token_ids if start_id is None else [start_id, *token_ids]
        windows = windows_of(len(ids), window, stride, truncation)
        shift = 0 if start_id is None else 1
        kept = (windows[-1].end - shift) if windows else 0
        first_scored = 1 - shift
        offsets = all_offsets[position] if all_offsets is not None else None
        scored_bytes = _scored_bytes(text, token_ids, offsets, tokenizer, first_scored, kept)
        result.append(Encoded(ids, windows, scored_bytes))
    return result


def _filler_id(tokenizer: Any) -> int:
    """A token id for padding positions (never attended to by real positions; any valid id works)."""
    pad = getattr(tokenizer, "pad_token_id", None)
    return 1 if pad == 0 else 0


def _scored_rows(hidden_or_logits: torch.Tensor, batch: Sequence[tuple[list[int], Window]]) -> torch.Tensor:
    """Rows (positions predicting a scored token) of every window of the batch, concatenated in batch order."""
    parts = [
        hidden_or_logits[row, window.first_target - window.start - 1:window.length - 1]
        for row, (_, window) in enumerate(batch)
    ]
    return torch.cat(parts, dim=0)


def _targets(batch: Sequence[tuple[list[int], Window]]) -> torch.Tensor:
    return torch.tensor([token for ids, window in batch for token in ids[window.first_target:window.end]],
                        dtype=torch.long)


def _nll_of_rows(rows: torch.Tensor, targets: torch.Tensor, to_logits: Callable[[torch.Tensor], torch.Tensor]
                 ) -> torch.Tensor:
    """Float32 NLL of each row's target, ``HEAD_ROWS`` rows at a time, each block padded to a multiple of 8."""
    out = []
    for begin in range(0, rows.shape[0], HEAD_ROWS):
        block = rows[begin:begin + HEAD_ROWS]
        count = block.shape[0]
        padded = -(-count // _ROW_MULTIPLE) * _ROW_MULTIPLE
        if padded != count:
            block = torch.cat([block, block.new_zeros((padded - count, *block.shape[1:]))], dim=0)
        logits = to_logits(block)[:count].float()
        target = targets[begin:begin + count].to(logits.device)
        out.append(torch.nn.functional.cross_entropy(logits, target, reduction="none"))
    return torch.cat(out)


def batch_nlls(lm: LoadedLm, batch: Sequence[tuple[list[int], Window]], padded_length: int) -> list[torch.Tensor]:
    """Per-token NLLs (float32, on the CPU) of the scored tokens of each window of one batch."""
    ids = torch.full((len(batch), padded_length), _filler_id(lm.tokenizer), dtype=torch.long)
    for row, (sequence, window) in enumerate(batch):
        ids[row, :window.length] = torch.tensor(sequence[window.start:window.end], dtype=torch.long)
    ids = ids.to(lm.device)
    targets = _targets(batch)
    with torch.inference_mode():
        if lm.split_head:
            hidden = lm.base(input_ids=ids, use_cache=False)[0]
            nll = _nll_of_rows(_scored_rows(hidden, batch), targets, lambda block: run_head(lm.head, block))
        else:
            output = lm.model(input_ids=ids, use_cache=False)
            logits = output.logits if hasattr(output, "logits") else output[0]
            nll = _nll_of_rows(_scored_rows(logits, batch), targets, lambda block: block)
    nll = nll.cpu()
    return list(nll.split([window.scored for _, window in batch]))


def score_texts(
    lm: LoadedLm,
    texts: Sequence[str],
    *,
    metric: str,
    add_start_token: bool = True,
    window: int | None = None,
    stride: int | None = None,
    truncation: bool = False,
    batch_size: int = 16,
    max_batch_tokens: int = DEFAULT_MAX_BATCH_TOKENS,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    progress: Callable[[int], None] | None = None,
    check: LengthCheck | None = None,
) -> list[TextScore]:
    """Summed NLL, scored tokens and scored bytes of each text under ``lm``.

    ``window`` (None: the model's number of positions) is the most tokens one forward pass sees;
    ``stride`` (None: half the window) how far consecutive windows of a long text are apart.
    ``progress`` is called with the number of texts finished after each batch. ``check``, when given, is
    told every text's token count before any text is scored (texts after the first chunk are tokenized once
    beforehand for it, their lengths alone kept).
    """
    start_id = start_token_id(metric, lm.tokenizer, add_start_token, lm.name)
    window = window if window is not None else lm.max_positions
    stride = stride if stride is not None else max(1, (window or 2) // 2)
    if check is not None:
        shift = 0 if start_id is None else 1
        for begin in range(chunk_size, len(texts), chunk_size):
            ids = lm.tokenizer(list(texts[begin:begin + chunk_size]), add_special_tokens=False,
                               return_attention_mask=False)["input_ids"]
            check(begin, [len(item) + shift for item in ids])
    results: list[TextScore] = []
    for begin in range(0, len(texts), chunk_size):
        chunk = texts[begin:begin + chunk_size]
        encoded = encode_texts(lm.tokenizer, chunk, start_id=start_id, window=window, stride=stride,
                               truncation=truncation, check=check if begin == 0 else None, first=begin)
        results.extend(_score_encoded(metric, lm, encoded, batch_size, max_batch_tokens, window, progress))
    return results


def _score_encoded(metric: str, lm: LoadedLm, encoded: Sequence[Encoded], batch_size: int, max_batch_tokens: int,
                   window: int | None, progress: Callable[[int], None] | None) -> list[TextScore]:
    jobs = [(text, item) for text, enc in enumerate(encoded) for item in enc.windows]
    padded = [bucket_length(item.length, window) for _, item in jobs]
    token_nlls: list[list[float]] = [[] for _ in encoded]
    remaining = [len(enc.windows) for enc in encoded]
    if progress is not None and any(count == 0 for count in remaining):
        progress(sum(count == 0 for count in remaining))
    for batch in window_batches(padded, batch_size, max_batch_tokens):
        length = padded[batch[0]]

        def run(indices: Sequence[int], length: int = length) -> list[torch.Tensor]:
            return batch_nlls(lm, [(encoded[jobs[i][0]].ids, jobs[i][1]) for i in indices], length)

        finished = 0
        for index, values in zip(batch, run_halving(run, batch, lm.device), strict=True):
            text = jobs[index][0]
            token_nlls[text].extend(values.double().tolist())
            remaining[text] -= 1
            finished += remaining[text] == 0
        if progress is not None and finished:
            progress(finished)
    scores = []
    for enc, values in zip(encoded, token_nlls, strict=True):
        if any(not math.isfinite(value) for value in values):
            raise ValueError(f"{metric}: the model {lm.name!r} gave a non-finite log-likelihood (inf or NaN logits); "
                             "try precision 'fp32'")
        scores.append(TextScore(math.fsum(values), len(values), enc.bytes))
    return scores
