"""Which tokens of a text a causal LM scores, in which windows, padded to which length: pure index arithmetic.

A text's token sequence (with the start token in front when there is one) is
scored from its second token on: token t is predicted from tokens before it.
A sequence longer than the model's window is cut into windows of the window's
length: each window scores the tokens the previous one did not, with the
tokens before them in the window as context, so every token is scored exactly
once; a window starts ``stride`` tokens after the previous one (the last one is
moved back so that it is full, giving its tokens more context). With
``truncation`` only the first window is scored, as evaluate's module does with
``max_length``.

A window of ``n`` tokens always goes through the model padded (on the right,
where causal attention never looks back at it) to :func:`bucket_length`, a
function of ``n`` alone, in batches of windows of one padded length. The
arithmetic a window sees is then the same whatever else is in its batch, so
results do not depend on batch size, batch composition or input order: bit for
bit where the matrix-multiply kernels give a row the same result whatever the
number of rows (measured: the CPU with MKL or oneDNN, CUDA in bf16 and fp16 on
an H100); CUDA fp32 picks kernels by shape, and there results move by rounding
only (2.2e-6 nats per token from a plain forward pass, measured on SmolLM2).
Against an unpadded forward pass the padded length changes the length of
attention's reductions: 7.5e-7 nats per token (SmolLM2, CPU).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# Padded lengths are multiples of 8 up to 128 tokens, then of 1/16 of the next power of two (at most 1/8 waste).
_MIN_QUANTUM = 8


@dataclass(frozen=True)
class Window:
    """Tokens ``start:end`` of a sequence through the model, scoring tokens ``first_target:end``."""

    start: int
    end: int
    first_target: int

    @property
    def length(self) -> int:
        return self.end - self.start

    @property
    def scored(self) -> int:
        return self.end - self.first_target


def windows_of(length: int, window: int | None, stride: int, truncation: bool) -> list[Window]:
    """The windows of a sequence of ``length`` tokens (empty when fewer than 2 tokens: nothing to score)."""
    if length < 2:
        return []
    if window is None or length <= window:
        return [Window(0, length, 1)]
    if truncation:
        return [Window(0, window, 1)]
    if not 1 <= stride < window:
        raise ValueError(f"stride must be between 1 and window - 1 = {window - 1}, got {stride}")
    result = [Window(0, window, 1)]
    while result[-1].end < length:
        previous = result[-1]
        start = min(previous.start + stride, length - window)
        result.append(Window(start, start + window, previous.end))
    return result


def forward_tokens(length: int, window: int | None, stride: int, truncation: bool) -> int:
    """The tokens the model is run on for a sequence of ``length`` tokens: the summed lengths of
    :func:`windows_of`'s windows (before padding), by arithmetic alone (no window is built)."""
    if length < 2:
        return 0
    if window is None or length <= window:
        return length
    if truncation:
        return window
    if not 1 <= stride < window:
        raise ValueError(f"stride must be between 1 and window - 1 = {window - 1}, got {stride}")
    return (1 + -(-(length - window) // stride)) * window


def bucket_length(length: int, limit: int | None = None) -> int:
    """The padded length of a window of ``length`` tokens: a function of ``length`` (and ``limit``) alone."""
    quantum = max(_MIN_QUANTUM, 1 << max(0, (length - 1).bit_length() - 4))
    padded = -(-length // quantum) * quantum
    return padded if limit is None else max(length, min(padded, limit))


def window_batches(padded_lengths: Sequence[int], batch_size: int, max_batch_tokens: int) -> list[list[int]]:
    """Indices of windows grouped by padded length, longest first, at most ``batch_size`` windows and (when
    several windows) ``max_batch_tokens`` padded tokens per batch; never two padded lengths in one batch."""
    order = sorted(range(len(padded_lengths)), key=lambda index: (-padded_lengths[index], index))
    batches: list[list[int]] = []
    for index in order:
        padded = padded_lengths[index]
        capacity = max(1, min(batch_size, max_batch_tokens // padded))
        last = batches[-1] if batches else None
        if last is not None and padded_lengths[last[0]] == padded and len(last) < capacity:
            last.append(index)
        else:
            batches.append([index])
    return batches
