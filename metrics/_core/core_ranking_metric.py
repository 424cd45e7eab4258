"""The base of the ranking modules (mrr, map, precision_at_k, recall_at_k, ndcg).

Every module computes trec_eval's measures from the same per-query statistics
(``core_ranking``) and reports its own: a script declares ``about``,
``options_class`` (from :func:`ranking_options`) and ``measure``, the prefix of
the outputs it returns (``"mrr"``, ``"map"``, ``"precision"``, ``"recall"``,
``"ndcg"``; cut-off measures as ``precision@k`` for each ``k``), with
``num_queries``; ``per_query=True`` adds each query's values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from .core_inputs import Columns
from .core_metric import Batch, StatsMetric
from .core_options import boolean, bound, option
from .core_process import garbage_collection_paused
from .core_ranking import RankingOptions, ranking_from_totals, ranking_per_query, ranking_rows, ranking_schema
from .core_ranking import ranking_totals
from .core_ranking_inputs import RANKINGS
from .core_resources import refuse_above
from .core_stats import StatsSchema

# Queries x cut-offs of one batch: each pair is 3 values (precision, recall, nDCG) kept as floats, about 1 us and
# 150 bytes a pair (10,000 queries x 1,000 cut-offs: 11 s, 1.5 GB), so 2**25 pairs take about 35 s and 4 GB.
DEFAULT_MAX_CUTOFF_VALUES = 1 << 25


@dataclass(frozen=True)
class RankingMetricOptions(RankingOptions):
    """trec_eval's options and the modules' per-query output switch."""

    per_query: bool = option(False, boolean)
    max_cutoff_values: int = bound(DEFAULT_MAX_CUTOFF_VALUES)


def ranking_options(name: str) -> type[RankingMetricOptions]:
    """The options class of the module ``name`` (its errors and signatures name it)."""
    return dataclass(frozen=True)(
        type(f"{name.title().replace('_', '')}Options", (RankingMetricOptions,), {"metric_name": name,
                                                                                  "__module__": __name__})
    )


class RankingMetric(StatsMetric):
    """A trec_eval measure: the script declares ``about``, ``options_class`` and ``measure``."""

    inputs = RANKINGS
    measure: ClassVar[str]

    def _reported(self, key: str) -> bool:
        return key == self.measure or key.startswith(self.measure + "@")

    def check_resources(self, columns: Columns, options: RankingMetricOptions, start: int = 0) -> None:
        """Refuse a batch whose queries x cut-offs (each a precision, a recall and an nDCG kept per query) exceed
        ``max_cutoff_values``."""
        super().check_resources(columns, options, start)
        queries = len(columns["predictions"])
        refuse_above(self.name, work=f"predictions[{start}:{start + queries}] holds {queries:,} queries, each "
                                     f"scored at {len(options.k):,} cut-offs (k); queries x cut-offs",
                     amount=queries * len(options.k), option_name="max_cutoff_values", bound=options.max_cutoff_values,
                     default=DEFAULT_MAX_CUTOFF_VALUES,
                     remedy="use fewer cut-offs, or add the queries with add_batch and compute once (read back "
                            "stream_batch_size queries at a time)")

    def schema(self, options: RankingMetricOptions) -> StatsSchema:
        return ranking_schema(self.name, options)

    def example_rows(self, batch: Batch, options: RankingMetricOptions) -> list[tuple[Any, ...]]:
        with garbage_collection_paused():
            return ranking_rows(batch["predictions"], batch["references"], options, checked=True)

    def batch_totals(self, batch: Batch, options: RankingMetricOptions) -> dict[str, Any]:
        with garbage_collection_paused():
            return ranking_totals(batch["predictions"], batch["references"], options, checked=True)

    def score(self, totals: Mapping[str, Any], options: RankingMetricOptions) -> dict[str, Any]:
        result = ranking_from_totals(totals, options)
        return {key: value for key, value in result.items() if self._reported(key) or key == "num_queries"}

    def per_example_outputs(self, options: RankingMetricOptions) -> bool:
        return options.per_query

    def per_example(self, rows: Sequence[Sequence[Any]], options: RankingMetricOptions) -> dict[str, list[Any]]:
        return {f"per_query_{key}": values for key, values in ranking_per_query(rows, options).items()
                if self._reported(key)}
