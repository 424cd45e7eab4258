"""Device and precision selection for model-based metrics, and recovery from GPU out-of-memory.

``device=None`` (or ``"auto"``) picks CUDA, then Apple MPS, then the CPU.
Reduced precision is opt-in by name. :func:`run_halving` runs a batched
function and, when the accelerator runs out of memory, splits the batch in
halves and retries instead of failing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any, TypeVar

import torch

logger = logging.getLogger(__name__)

PRECISIONS: dict[str, torch.dtype] = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}

T = TypeVar("T")
R = TypeVar("R")


def select_device(metric: str, device: Any = None) -> torch.device:
    """The device to run on: the one asked for, or CUDA, then MPS, then CPU when ``device`` is None/"auto"."""
    if device is None or device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    if isinstance(device, int) and not isinstance(device, bool):
        device = f"cuda:{device}"
    if not isinstance(device, (str, torch.device)):
        raise TypeError(f"{metric}: `device` must be a string such as 'cpu' or 'cuda:0', got {type(device).__name__}")
    try:
        chosen = torch.device(device)
    except (RuntimeError, ValueError) as error:
        raise ValueError(f"{metric}: unknown `device` {device!r}; use 'cpu', 'cuda', 'cuda:N', 'mps' or None") from error
    if chosen.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"{metric}: `device` {device!r} was asked for but CUDA is not available; use 'cpu' or None")
    if chosen.type == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise ValueError(f"{metric}: `device` {device!r} was asked for but MPS is not available; use 'cpu' or None")
    return chosen


def select_dtype(metric: str, precision: Any, device: torch.device) -> torch.dtype:
    """The floating-point type of the model for ``precision`` ('fp32', 'fp16' or 'bf16')."""
    if precision not in PRECISIONS:
        valid = ", ".join(repr(name) for name in PRECISIONS)
        raise ValueError(f"{metric}: unknown `precision` {precision!r}; valid values are {valid}")
    if precision == "fp16" and device.type == "cpu":
        raise ValueError(f"{metric}: `precision` 'fp16' needs a GPU; on the CPU use 'fp32' or 'bf16'")
    return PRECISIONS[precision]


class ModelPlacement:
    """Mixed into a model metric's options with ``device`` and ``precision`` options: the torch device and dtype
    they select, resolved once per options object (errors name the metric)."""

    metric_name: str
    device: Any
    precision: str

    @cached_property
    def chosen_device(self) -> torch.device:
        return select_device(self.metric_name, self.device)

    @cached_property
    def chosen_dtype(self) -> torch.dtype:
        return select_dtype(self.metric_name, self.precision, self.chosen_device)


def is_out_of_memory(error: BaseException) -> bool:
    """True for an accelerator out-of-memory error (CUDA or MPS)."""
    oom_type = getattr(torch.cuda, "OutOfMemoryError", None)
    if oom_type is not None and isinstance(error, oom_type):
        return True
    return isinstance(error, RuntimeError) and "out of memory" in str(error).lower()


def free_accelerator_memory(device: torch.device) -> None:
    """Release cached blocks after an out-of-memory error so that the retry can use them."""
    if device.type == "cuda":
        torch.cuda.empty_cache()
    elif device.type == "mps" and hasattr(torch, "mps"):
        torch.mps.empty_cache()


def run_halving(
    function: Callable[[Sequence[T]], list[R]], items: Sequence[T], device: torch.device
) -> list[R]:
    """``function(items)``; on out-of-memory, the same on each half (recursively) and the results joined.

    ``function`` maps a batch to one result per item. A single item that still
    does not fit raises the original error.
    """
    try:
        return function(items)
    except Exception as error:  # noqa: BLE001 - re-raised unless it is an out-of-memory error
        if not is_out_of_memory(error) or len(items) <= 1:
            raise
    free_accelerator_memory(device)
    middle = len(items) // 2
    logger.warning("out of memory on %s with a batch of %d; retrying in halves of %d", device, len(items), middle)
    return run_halving(function, items[:middle], device) + run_halving(function, items[middle:], device)
