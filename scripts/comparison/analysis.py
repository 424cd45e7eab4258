"""Where systems differ: scores by reference-length bucket and by per-example difficulty quantile, and the
examples on which two systems differ most."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from comparison.data import ComparisonData
from comparison.statistics import Headline, MetricStatistics


@dataclass(frozen=True)
class Bucket:
    label: str
    indices: list[int]


@dataclass(frozen=True)
class BucketTable:
    """Each system's headline numbers on each bucket of examples (exact sums of the bucket's statistics)."""

    title: str
    buckets: list[Bucket]
    headline: Headline
    scores: dict[str, list[float]]  # system -> one score per bucket


@dataclass(frozen=True)
class ExampleContrast:
    """One example where two systems differ: its texts and every headline's per-example numbers for both."""

    index: int
    source: str | None
    references: list[str]
    outputs: dict[str, str]
    scores: dict[str, dict[str, float]]  # system -> headline label -> per-example number
    difference: float  # of the analysis headline, second system minus first (signed so that > 0 is better)
    annotations: dict[str, dict[str, Any]] = field(default_factory=dict)  # system -> label -> e.g. error spans


def _quantile_buckets(values: np.ndarray, count: int, describe) -> list[Bucket]:
    """Up to ``count`` buckets of examples split at the quantiles of ``values`` (equal values stay together)."""
    order = np.argsort(values, kind="stable")
    edges = sorted({float(np.quantile(values, q, method="lower")) for q in np.linspace(0, 1, count + 1)[1:-1]})
    buckets, start = [], 0
    for edge in [*edges, math.inf]:
        stop = start
        while stop < len(order) and (values[order[stop]] <= edge):
            stop += 1
        if stop > start:
            members = order[start:stop]
            buckets.append(Bucket(describe(values[members[0]], values[members[-1]]), sorted(members.tolist())))
        start = stop
    return buckets


def reference_length_buckets(data: ComparisonData, count: int = 4) -> list[Bucket]:
    """Examples by the length of their first reference in whitespace-separated words, at its quantiles."""
    lengths = np.array([len(group[0].split()) for group in data.references])
    return _quantile_buckets(lengths, count, lambda low, high: f"{low:.0f} words" if low == high
                            else f"{low:.0f}-{high:.0f} words")


def difficulty_buckets(per_example: np.ndarray, headline: Headline, count: int = 4) -> list[Bucket]:
    """Examples by the mean over systems (rows of ``per_example``) of a per-example headline number, at its
    quantiles, lowest first; examples where it is undefined for every system are left out."""
    defined = np.flatnonzero(~np.all(np.isnan(per_example), axis=0))
    values = np.nanmean(per_example[:, defined], axis=0)
    buckets = _quantile_buckets(values, count, lambda low, high: f"{headline.label} {low:.1f}-{high:.1f}")
    return [Bucket(bucket.label, [int(defined[index]) for index in bucket.indices]) for bucket in buckets]


def bucket_table(title: str, buckets: Sequence[Bucket], metric: MetricStatistics, position: int,
                 systems: Sequence[str]) -> BucketTable:
    return BucketTable(title, list(buckets), metric.headlines[position], {
        system: [metric.exact_values(system, bucket.indices)[position] for bucket in buckets] for system in systems})


def contrasts(data: ComparisonData, metrics: Sequence[MetricStatistics], per_example: dict[tuple[str, str], np.ndarray],
              analysis: tuple[MetricStatistics, int], first: str, second: str, count: int) -> list[ExampleContrast]:
    """The ``count`` examples where ``second`` beats ``first`` most on the analysis headline and the ``count``
    where it loses most (per-example numbers of every headline alongside)."""
    metric, position = analysis
    headline = metric.headlines[position]
    sign = 1.0 if headline.higher_is_better else -1.0
    difference = sign * (per_example[(metric.name, second)][:, position] - per_example[(metric.name, first)][:, position])
    valid = np.flatnonzero(~np.isnan(difference))
    ranked = valid[np.argsort(-difference[valid], kind="stable")]
    chosen = [int(index) for index in ranked[:count] if difference[index] > 0]
    chosen += [int(index) for index in ranked[::-1][:count] if difference[index] < 0]
    notes = {system: [dict[str, Any]() for _ in chosen] for system in (first, second)}
    for other in metrics:
        for system in (first, second):
            for row, labelled in zip(notes[system], other.annotations(data, system, chosen), strict=True):
                row.update(labelled)
    return [ExampleContrast(
        index=index,
        source=data.sources[index] if data.sources is not None else None,
        references=data.references[index],
        outputs={system: data.systems[system][index] for system in (first, second)},
        scores={system: {h.label: float(per_example[(m.name, system)][index, p])
                         for m in metrics for p, h in enumerate(m.headlines)} for system in (first, second)},
        difference=float(difference[index]),
        annotations={system: notes[system][row] for system in (first, second)}) for row, index in enumerate(chosen)]
