"""The averages ROUGE-1.5.5 prints: its bootstrap over per-example scores, reproduced draw for draw.

ROUGE-1.5.5.pl's ``Average_R/P/F`` is not the mean of the per-example scores: it is the mean of ``-r``
bootstrap resample means, and the confidence interval comes from the same resamples. This module redoes that
computation exactly:

* the examples are ordered as the script orders its hash keys: ``"<eval id>.<peer id>"`` sorted as byte
  strings (pyrouge numbers the examples 1, 2, ... and names the peer ``1``, so example 10 comes before 2);
* resample ``s`` (s = 0 .. r-1) calls ``srand(s)`` and draws ``int(rand(N))`` N times. Perl (5.20 and
  later) implements ``rand`` with its own drand48: state ``(s << 16) + 0x330E``, then
  ``x = (0x5DEECE66D * x + 0xB) mod 2**48``, ``rand(N) = N * (x * 2**-48)``. The draws are generated here
  with the same integers and the same two floating-point products;
* a resample's value is the per-example scores (5-decimal numbers) added one by one in draw order, divided
  by N; the printed average is the resample values sorted ascending, added one by one, divided by r, printed
  with ``%7.5f``; the interval ends are sorted values at ``int(delta)`` and ``int(r - delta - 1)``, with
  ``delta = r * ((100 - c) / 2) / 100``, interpolated as the script does (an index past the end reads 0).

Sums are left to right (``numpy.cumsum``), never pairwise, so every floating-point addition is Perl's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

_MULTIPLIER = 0x5DEECE66D
_INCREMENT = 0xB
_MASK = (1 << 48) - 1
_SEED_LOW = 0x330E
_SCALE = 2.0**-48


@dataclass(frozen=True)
class Rouge155Average:
    """One printed ROUGE-1.5.5 average: the bootstrap mean and the confidence interval, as printed (5 decimals)."""

    mean: float
    low: float
    high: float
    level: float
    n_samples: int


def instance_order(count: int, eval_ids: Sequence[str] | None = None, peer_id: str = "1") -> np.ndarray:
    """Positions of the examples in the order ROUGE-1.5.5 sorts its evaluation keys ``"<eval id>.<peer id>"``."""
    ids = [str(index + 1) for index in range(count)] if eval_ids is None else [str(value) for value in eval_ids]
    if len(ids) != count:
        raise ValueError(f"rouge155: got {len(ids)} eval_ids for {count} examples; pass one id per example")
    if len(set(ids)) != count:
        raise ValueError("rouge155: eval_ids must be distinct (ROUGE-1.5.5 merges examples with the same id)")
    keys = [f"{value}.{peer_id}".encode() for value in ids]
    return np.array(sorted(range(count), key=keys.__getitem__), dtype=np.int64)


def resample_means(values: np.ndarray, n_samples: int) -> np.ndarray:
    """Bootstrap means of each column of ``values`` (examples in ROUGE-1.5.5's order): shape (n_samples, columns).

    All resamples advance together: draw k of every resample is made, and its value added, before draw k + 1.
    """
    count = values.shape[0]
    state = (np.arange(n_samples, dtype=np.uint64) << np.uint64(16)) + np.uint64(_SEED_LOW)
    multiplier, increment, mask = np.uint64(_MULTIPLIER), np.uint64(_INCREMENT), np.uint64(_MASK)
    scale = float(count)
    totals = np.zeros((n_samples, values.shape[1]), dtype=np.float64)
    drawn = np.empty_like(totals)
    ratio = np.empty(n_samples, dtype=np.float64)
    for _ in range(count):
        state = (state * multiplier + increment) & mask
        np.multiply(state, _SCALE, out=ratio)
        np.multiply(ratio, scale, out=ratio)
        np.take(values, ratio.astype(np.int64), axis=0, out=drawn)
        totals += drawn
    return totals / count


def printed_average(samples: np.ndarray, confidence: float) -> tuple[str, str, str]:
    """The script's mean and interval of one column of resample values, as the strings it prints."""
    ranked = np.sort(samples)
    n = len(ranked)
    mean = float(np.cumsum(ranked)[-1]) / n
    delta = n * ((100 - confidence) / 2.0) / 100.0
    upper_a = int(n - delta - 1)
    lower_a = int(delta)
    ratio = n - delta - 1 - upper_a

    def at(index: int) -> float:
        return float(ranked[index]) if index < n else 0.0

    low = at(lower_a) + (at(lower_a + 1) - at(lower_a)) * ratio
    high = at(upper_a) + (at(upper_a + 1) - at(upper_a)) * ratio
    return f"{mean:7.5f}", f"{low:7.5f}", f"{high:7.5f}"


def bootstrap_averages(
    columns: Mapping[str, Sequence[int]],
    names: Sequence[str],
    *,
    n_samples: int,
    confidence: float,
    eval_ids: Sequence[str] | None = None,
    peer_id: str = "1",
) -> dict[str, Rouge155Average]:
    """ROUGE-1.5.5's printed averages of the per-example columns ``names`` (integers in units of 1e-5).

    ``eval_ids`` are the examples' ``<EVAL ID>`` values (default: pyrouge's 1, 2, ...), ``peer_id`` the
    system's id (pyrouge: ``1``); both decide the order the resamples draw from.
    """
    if not names:
        return {}
    count = len(columns[names[0]])
    if count == 0:
        raise ValueError("rouge155: no examples; the average of an empty corpus is undefined")
    order = instance_order(count, eval_ids, peer_id)
    values = np.stack([np.asarray(columns[name], dtype=np.int64) for name in names], axis=1)[order]
    means = resample_means(values / 100000, n_samples)
    averages = {}
    for position, name in enumerate(names):
        mean, low, high = printed_average(means[:, position], confidence)
        averages[name] = Rouge155Average(float(mean), float(low), float(high), confidence, n_samples)
    return averages
