"""Pearson's and Spearman's correlations on the statistics-metric base.

A metric script is ``class Pearsonr(CorrelationMetric, evaluate.Metric)``
declaring :attr:`about`, ``inputs = NUMBER_PAIRS`` and its options class. The
corpus is scored at once, in input order (scipy's arithmetic on scipy's
order); per-example statistics are the (reference, prediction) pairs, so
shards merge exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .core_correlation import SCORES, correlation_from_totals, correlation_rows, correlation_schema
from .core_inputs import Columns
from .core_metric import Batch, StatsMetric
from .core_stats import StatsSchema


class CorrelationMetric(StatsMetric):
    """pearsonr and spearmanr: the script declares ``about``, ``inputs`` and ``options_class``."""

    def needs_corpus(self, options: Any) -> bool:
        return True

    def score_corpus(self, columns: Columns, options: Any) -> dict[str, Any]:
        return SCORES[options.metric_name](columns["predictions"], columns["references"], options)

    def schema(self, options: Any) -> StatsSchema:
        return correlation_schema(self.name)

    def example_rows(self, batch: Batch, options: Any) -> list[tuple[Any, ...]]:
        return correlation_rows(batch["predictions"], batch["references"], self.name)

    def score(self, totals: Mapping[str, Any], options: Any) -> dict[str, Any]:
        return correlation_from_totals(totals, options)
