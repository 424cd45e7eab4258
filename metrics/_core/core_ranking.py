"""trec_eval's ranking measures (MRR, MAP, precision, recall and nDCG at cut-offs) from per-query statistics.

The reference is trec_eval (usnistgov/trec_eval) as pytrec_eval (pytrec-eval-terrier) runs it: measures
``recip_rank``, ``map``, ``P.k``, ``recall.k`` and ``ndcg_cut.k``. A query is a ranking (``runs[i]``: document
id -> score) and its judgements (``qrels[i]``: document id -> integer grade); ``pair_queries`` aligns a run and
qrels keyed by query id, ``read_trec_run`` / ``read_trec_qrels`` read TREC files (as read-only mappings). The statistics of a query
are its value of each measure and a count of 1; a corpus value is the mean over the queries scored
(trec_eval's average: sum over queries / number of queries), computed as an exact sum (``math.fsum``) over
the count, so shards merge to the same value.

trec_eval's conventions, all kept (source files of usnistgov/trec_eval unless said otherwise):

- Ranking (form_res_rels.c, ``comp_sim_docno``): documents by score descending; equal scores by document id
  *descending* (``strcmp(p2->docno, p1->docno)``: byte order of the UTF-8 ids, which is Python's order of the
  strings). The rank column of run files is never read.
- Score precision: trec_eval up to 9.0.8, which pytrec_eval builds on, holds scores as C ``float``, so scores
  equal after rounding to float32 tie (then the document id decides) and values beyond float32 become
  infinite. ``score_precision="float32"`` (default) does the same; ``"float64"`` is trec_eval 10.0 (scores as
  ``double``, commit dc0c991). ``-0.0`` equals ``0.0``; infinite scores rank first or last; NaN is rejected
  (trec_eval's comparisons with NaN give no consistent order).
- Relevance (form_res_rels.c; trec_eval's ``-l``): a document is relevant when its grade is at least
  ``relevance_level`` (default 1; at least 1, as pytrec_eval requires). A retrieved document absent from the
  qrels (trec_eval's RELVALUE_NONPOOL) and a document with a negative grade (RELVALUE_UNJUDGED) are
  non-relevant with gain 0; negative grades count nowhere.
- Denominators (m_recall.c, m_map.c): the number of relevant documents is every judged document with grade >=
  ``relevance_level``, retrieved or not. ``recall@k`` = relevant in the top k / relevant (0 when the query has
  none); ``map`` = sum over relevant retrieved documents of precision at their rank / relevant (0 when none is
  retrieved); ``mrr`` = 1 / rank of the first relevant document (0 when none).
- ``precision@k`` (m_P.c) divides by k even when fewer than k documents are retrieved.
- ``ndcg@k`` (m_ndcg_cut.c, trec_eval's ``ndcg_cut``): DCG = sum over the top k of grade / log2(rank + 1) for
  positive grades; the ideal DCG sorts every positive grade of the query's qrels, highest first, and cuts it
  at k; nDCG = DCG / ideal DCG, and 0 when the ideal DCG is 0. Gains ignore ``relevance_level`` (grade 1 gains
  even at ``relevance_level=2``). Sums are added rank by rank from 0.0, in trec_eval's order.
- Queries (trec_eval.c, pytrec_eval.cpp): a query of the run absent from the qrels, or with empty qrels
  (pytrec_eval drops those), is skipped (``pair_queries`` leaves it out; ``ranking_rows`` gives it a row of
  zeros with ``queries`` 0, so it never counts); a query of the qrels absent from the run is skipped unless
  ``pair_queries(..., complete=True)`` (trec_eval's ``-c``: it counts with every measure 0). A query whose
  qrels hold no relevant document is scored (every measure 0) and counts in the mean. An empty ranking scores
  0 everywhere.
- Duplicates: a mapping cannot hold a document twice; the file readers reject a document listed twice for one
  query, as trec_eval does ("duplicate docs").
- Document and query ids are strings (pytrec_eval requires them); grades are integers (bool rejected);
  scores are real numbers (bool rejected; pytrec_eval would read True as 1.0).

Statistics (one row per query, in this order): ``recip_rank``, ``map``, ``P_k`` for each k, ``recall_k`` for
each k, ``ndcg_cut_k`` for each k (all ``fsum``: the query's value), ``queries`` (1; 0 for a query without
judgements). Output keys of
``ranking_from_totals``: ``mrr``, ``map``, ``precision@k``, ``recall@k``, ``ndcg@k`` (each k in ``options.k``),
``num_queries``. Options classes whose ``measures`` name fewer of ``MEASURES`` (a module's: the one it reports)
compute, keep and report only those.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from .core_options import MetricOptions, choice, integer, option
from .core_ranking_measures import MEASURES, RankingColumns, ranking_columns
from .core_ranking_trec import PairedQueries, pair_queries, read_trec_qrels, read_trec_run
from .core_stats import EXAMPLES_FIELD, RESIDUAL_SUFFIX, SIGNATURE_FIELD, StatField, StatsSchema, exact_column_sums

__all__ = [
    "MEASURES", "PairedQueries", "RankingColumns", "RankingOptions", "pair_queries", "ranking_columns", "ranking_from_totals",
    "ranking_per_query", "ranking_rows", "ranking_schema", "ranking_totals", "read_trec_qrels", "read_trec_run",
]

DEFAULT_CUTOFFS = (1, 3, 5, 10, 20, 100)
QUERIES = "queries"


def _cutoffs(metric: str, name: str, value: Any) -> tuple[int, ...]:
    """One positive integer or several distinct ones (trec_eval: "positive without duplicates"), sorted."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = (value,)
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{metric}: `{name}` must be a cut-off or a list of cut-offs (positive integers, e.g. "
                        f"[1, 5, 10]), got {type(value).__name__} ({value!r:.60})")
    cutoffs = list(value)
    if not cutoffs:
        raise ValueError(f"{metric}: `{name}` is empty; give at least one cut-off (e.g. [10])")
    for index, cutoff in enumerate(cutoffs):
        if isinstance(cutoff, bool) or not isinstance(cutoff, numbers.Integral):
            raise TypeError(f"{metric}: `{name}[{index}]` must be a positive integer, got {type(cutoff).__name__} "
                            f"({cutoff!r:.60})")
        if cutoff < 1:
            raise ValueError(f"{metric}: `{name}[{index}]` must be at least 1, got {cutoff}")
    if len(set(cutoffs)) != len(cutoffs):
        raise ValueError(f"{metric}: `{name}` repeats a cut-off ({cutoffs}); give each once")
    return tuple(sorted(int(cutoff) for cutoff in cutoffs))


@dataclass(frozen=True)
class RankingOptions(MetricOptions):
    """trec_eval's options for these measures (all change the per-query statistics); ``measures``: the measures
    computed, of ``MEASURES`` (a module computes the one it reports)."""

    metric_name = "trec_eval"
    measures: ClassVar[tuple[str, ...]] = MEASURES

    k: tuple[int, ...] = option(DEFAULT_CUTOFFS, _cutoffs, stats=True)
    relevance_level: int = option(1, integer(minimum=1), stats=True)
    score_precision: str = option("float32", choice("float32", "float64"), stats=True)


# Each measure's statistic (trec_eval's name) and output; a cut-off measure has one of each per cut-off k.
_NAMES = {"mrr": ("recip_rank", "mrr"), "map": ("map", "map"), "precision": ("P_{k}", "precision@{k}"),
          "recall": ("recall_{k}", "recall@{k}"), "ndcg": ("ndcg_cut_{k}", "ndcg@{k}")}


def _names(options: RankingOptions, which: int) -> list[str]:
    """The statistics (``which`` 0) or outputs (1) of ``options.measures``, in the order of ``MEASURES``."""
    names: list[str] = []
    for measure in MEASURES:
        if measure in options.measures:
            name = _NAMES[measure][which]
            names += [name.format(k=k) for k in options.k] if "{k}" in name else [name]
    return names


def _field_names(options: RankingOptions) -> list[str]:
    return _names(options, 0)


def _output_names(options: RankingOptions) -> list[str]:
    return _names(options, 1)


def ranking_schema(metric_name: str, options: RankingOptions) -> StatsSchema:
    """Per query: its recip_rank, map, P_k, recall_k, ndcg_cut_k (exact float sums; those of ``options.measures``)
    and ``queries`` (1, or 0 for a query without judgements)."""
    return StatsSchema(metric_name, (*(StatField(name, "fsum") for name in _field_names(options)),
                                     StatField(QUERIES)))


def _computed(runs: Any, qrels: Any, options: RankingOptions, checked: bool) -> RankingColumns:
    return ranking_columns(runs, qrels, options.k, options.relevance_level, options.score_precision,
                           options.metric_name, checked=checked, measures=options.measures)


def ranking_rows(runs: Sequence[Mapping[str, float]], qrels: Sequence[Mapping[str, int]],
                 options: RankingOptions, *, checked: bool = False) -> list[tuple[Any, ...]]:
    """One row per query (``runs[i]`` against ``qrels[i]``), in ``ranking_schema`` order. A query with empty
    ``qrels[i]`` has no judgements: trec_eval skips it, so its row is all 0 with ``queries`` 0 (not counted).
    ``checked``: the caller checked the input (``ranking_columns``), so it is not checked again."""
    computed = _computed(runs, qrels, options, checked)
    return list(zip(*(column.tolist() for column in (*computed.columns(), computed.judged)), strict=True))


def ranking_totals(runs: Sequence[Mapping[str, float]], qrels: Sequence[Mapping[str, int]],
                   options: RankingOptions, *, checked: bool = False) -> dict[str, Any]:
    """Totals of many queries at once: equal to ``ranking_schema(...).totals_of_rows(ranking_rows(...))``."""
    computed = _computed(runs, qrels, options, checked)
    if not len(computed.judged):
        raise ValueError(f"{options.metric_name}: no queries to score; the score of an empty corpus is undefined")
    totals: dict[str, Any] = {}
    for name, (total, residuals) in zip(_field_names(options), exact_column_sums(computed.columns()), strict=True):
        totals[name], totals[name + RESIDUAL_SUFFIX] = total, residuals
    totals[QUERIES] = int(computed.judged.sum())
    totals[EXAMPLES_FIELD] = len(computed.judged)
    totals[SIGNATURE_FIELD] = options.stats_signature()
    return totals


def ranking_from_totals(totals: Mapping[str, Any], options: RankingOptions) -> dict[str, Any]:
    """Means over the queries: ``mrr``, ``map``, ``precision@k``, ``recall@k``, ``ndcg@k``; ``num_queries``."""
    queries = totals[QUERIES]
    if not queries:
        raise ValueError(f"{options.metric_name}: no queries with both a ranking and relevance judgements; "
                         f"the score of an empty corpus is undefined")
    result: dict[str, Any] = {output: totals[field] / queries
                              for output, field in zip(_output_names(options), _field_names(options), strict=True)}
    result["num_queries"] = queries
    return result


def ranking_per_query(rows: Sequence[Sequence[Any]], options: RankingOptions) -> dict[str, list[float | None]]:
    """Per-query values from rows, under the output keys (``mrr``, ``map``, ``precision@k``, ...); None for a
    query without judgements (trec_eval skips it)."""
    names = _output_names(options)
    values: dict[str, list[float | None]] = {name: [] for name in names}
    for row in rows:
        for name, value in zip(names, row):
            values[name].append(value if row[-1] else None)
    return values
