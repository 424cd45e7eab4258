"""The base of the ranking modules (mrr, map, precision_at_k, recall_at_k, ndcg).

Every module computes one of trec_eval's measures with the same core (``core_ranking``): a script declares
``about`` and ``options_class`` (from :func:`ranking_options`, which names the measure, the prefix of the outputs
the module returns: ``"mrr"``, ``"map"``, ``"precision"``, ``"recall"``, ``"ndcg"``; cut-off measures as
``precision@k`` for each ``k``). Its per-query statistics are that measure's values (and the query count); it
returns them with ``num_queries``; ``per_query=True`` adds each query's values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .core_inputs import Columns
from .core_metric import Batch, StatsMetric
from .core_options import boolean, bound, option
from .core_process import garbage_collection_paused
from .core_ranking import MEASURES, RankingOptions, ranking_from_totals, ranking_per_query, ranking_rows
from .core_ranking import ranking_schema, ranking_totals
from .core_ranking_inputs import RANKINGS
from .core_resources import refuse_above
from .core_stats import StatsSchema

# Queries x cut-offs of one batch: a cut-off module keeps one float a pair, about 0.2 us and 60 bytes a pair for ndcg,
# the costliest (10,000 queries x 1,000 cut-offs: 2 s, 0.6 GB), so 2**25 pairs take about 7 s and 2 GB.
DEFAULT_MAX_CUTOFF_VALUES = 1 << 25


@dataclass(frozen=True)
class RankingMetricOptions(RankingOptions):
    """trec_eval's options and the modules' per-query output switch."""

    per_query: bool = option(False, boolean)
    max_cutoff_values: int = bound(DEFAULT_MAX_CUTOFF_VALUES)


def ranking_options(name: str, measure: str) -> type[RankingMetricOptions]:
    """The options class of the module ``name`` (its errors and signatures name it), which computes ``measure``
    (one of ``MEASURES``)."""
    if measure not in MEASURES:
        raise ValueError(f"{name}: unknown ranking measure {measure!r}; choose one of {MEASURES}")
    return dataclass(frozen=True)(
        type(f"{name.title().replace('_', '')}Options", (RankingMetricOptions,),
             {"metric_name": name, "measures": (measure,), "__module__": __name__})
    )


class RankingMetric(StatsMetric):
    """A trec_eval measure: the script declares ``about`` and ``options_class``."""

    inputs = RANKINGS

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
        return ranking_from_totals(totals, options)

    def per_example_outputs(self, options: RankingMetricOptions) -> bool:
        return options.per_query

    def per_example(self, rows: Sequence[Sequence[Any]], options: RankingMetricOptions) -> dict[str, list[Any]]:
        return {f"per_query_{key}": values for key, values in ranking_per_query(rows, options).items()}
