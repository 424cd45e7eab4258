"""Meta-evaluation of automatic metrics against human scores: per-row statistics and the result.

The statistics of a row are keyed by its (system, item) pair: a row count and exact sums of the metric's, any other
metrics', the humans' and any other human qualities' scores. Merged over shards they give back every row (a pair
counted twice is an error), so the corpus result from statistics equals the one-shot result bit for bit. With
``level="system"`` and no bootstrap, the key is the system alone: per-system counts and exact sums, all that system
means need.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .core_meta_bootstrap import bootstrap_intervals
from .core_meta_correlations import check_segment_table, check_system_count, check_turn_table, segment_level
from .core_meta_correlations import system_level, system_williams, turn_level
from .core_meta_options import METRIC, MetaEvaluationOptions
from .core_meta_table import ScoreTable, SystemScores
from .core_resources import DEFAULT_MAX_RESAMPLE_WORK, refuse_above
from .core_stats import StatField, StatsSchema

ROWS = "rows"

# -- statistics ------------------------------------------------------------------------------------------------


def meta_schema(metric: str, options: MetaEvaluationOptions) -> StatsSchema:
    """A row count and exact score sums, keyed by (system, item), or by system for ``options.system_keys``."""
    return StatsSchema(metric, (StatField(ROWS, "keyed"),
                                *(StatField(name, "keyed_fsum") for name in options.score_fields())))


def _option_name(column: str) -> str:
    """How errors name the option holding a table column: ``other_metrics['bleu']``, ``qualities['Natural']``."""
    option, name = column.split("/", 1)
    return f"{option}[{name!r}]"


def _extra_scores(metric: str, options: MetaEvaluationOptions, start: int, size: int) -> dict[str, list[float]]:
    """Each other metric's and each other human quality's scores of rows ``start`` to ``start + size``, by column."""
    extra = {}
    for column, scores in options.extra_scores().items():
        if len(scores) < start + size:
            raise ValueError(f"{metric}: `{_option_name(column)}` has {len(scores)} scores but the rows reach "
                             f"{start + size}; pass one score per row")
        extra[column] = scores[start:start + size]
    return extra


def meta_rows(metric: str, columns: Mapping[str, Sequence[Any]], start: int,
              options: MetaEvaluationOptions) -> list[tuple[dict[Any, Any], ...]]:
    """One statistics row per input row (in schema order); other metrics' and other qualities' scores are taken from
    row ``start`` on."""
    keys: Sequence[Any] = (columns["systems"] if options.system_keys
                           else list(zip(columns["systems"], columns["items"], strict=True)))
    scores = {**columns, **_extra_scores(metric, options, start, len(keys))}
    ordered = [scores[field] for field in options.score_fields()]
    return [({key: 1}, *({key: column[index]} for column in ordered)) for index, key in enumerate(keys)]


def check_other_lengths(metric: str, size: int, options: MetaEvaluationOptions) -> None:
    """Every other metric and every other human quality has one score per row."""
    for column, scores in options.extra_scores().items():
        if len(scores) != size:
            raise ValueError(f"{metric}: `{_option_name(column)}` has {len(scores)} scores but there are {size} rows; "
                             f"pass one score per row")


def table_from_columns(metric: str, columns: Mapping[str, Sequence[Any]], options: MetaEvaluationOptions) -> ScoreTable:
    """The table of the input columns (and the other metrics' and qualities' scores of the same rows)."""
    scores = {**columns, **_extra_scores(metric, options, 0, len(columns[METRIC]))}
    return ScoreTable.build(metric, columns["systems"], columns["items"],
                            {field: scores[field] for field in options.score_fields()})


def table_from_totals(metric: str, totals: Mapping[str, Any], options: MetaEvaluationOptions) -> ScoreTable:
    """The table of merged (system, item)-keyed statistics."""
    counts = totals[ROWS]
    repeated = sorted(key for key, count in counts.items() if count > 1)
    if repeated:
        system, item = repeated[0]
        raise ValueError(f"{metric}: the statistics hold {counts[repeated[0]]} rows of system {system!r} on item "
                         f"{item!r}; pass one row per system and item (average repeated human ratings first)")
    keys = sorted(counts)
    scores = {field: [totals[field][key] for key in keys] for field in options.score_fields()}
    return ScoreTable.build(metric, [key[0] for key in keys], [key[1] for key in keys], scores)


def systems_from_totals(totals: Mapping[str, Any], options: MetaEvaluationOptions) -> SystemScores:
    """System means from merged per-system statistics."""
    names = sorted(totals[ROWS])
    return SystemScores.from_sums(names, [totals[ROWS][name] for name in names],
                                  {field: [totals[field][name] for name in names] for field in options.score_fields()})


# -- the result ------------------------------------------------------------------------------------------------

# The bootstrap's work per resample, row and (metric, human quality) pair, in units of about 0.07 us (measured on a
# 2-core machine): system means 1; segment level grouped by item 6 (per-item values reweighted); segment level grouped
# by system or none 40 (the resample's rows materialised and their pairs counted again, n log^2 n); turn level 18
# (the resample's rows materialised and ranked).
SYSTEM_COST, ITEM_SEGMENT_COST, ROW_SEGMENT_COST, TURN_COST = 1, 6, 40, 18


def resample_work(rows: int, options: MetaEvaluationOptions) -> int:
    """The bootstrap's work: resamples x rows x (metric, human quality) pairs x the levels' cost per row."""
    if not options.confidence:
        return 0
    cost = (SYSTEM_COST if options.system else 0) + (TURN_COST if options.turn else 0)
    if options.segment:
        cost += ITEM_SEGMENT_COST if options.grouping == "item" else ROW_SEGMENT_COST
    pairs = len(options.score_columns()) * len(options.human_columns())
    return options.n_bootstrap * rows * pairs * cost


def check_resample_work(metric: str, rows: int, options: MetaEvaluationOptions) -> None:
    """Refuse a bootstrap whose work (:func:`resample_work`) exceeds ``max_resample_work``, before any resample."""
    pairs = len(options.score_columns()) * len(options.human_columns())
    refuse_above(metric, work=f"the bootstrap interval (confidence=True) recomputes {pairs} metric-human "
                              f"correlation(s) on {rows:,} rows {options.n_bootstrap:,} times at the levels "
                              f"{', '.join(options.levels)}; resamples x rows x correlations x the levels' cost per "
                              f"row (system 1, segment by item 6, segment by system or none 40, turn 18)",
                 amount=resample_work(rows, options), option_name="max_resample_work", bound=options.max_resample_work,
                 default=DEFAULT_MAX_RESAMPLE_WORK,
                 remedy="lower n_bootstrap, ask for fewer levels or other metrics, or score a sample of the items")


def _williams(metric: str, scores: SystemScores, options: MetaEvaluationOptions) -> dict[str, Any]:
    """The Williams test of each other metric against ``predictions`` (system-level Pearson), for each human
    quality (keys of the qualities after the references' prefixed with the quality's name)."""
    if not options.system or not options.others:
        return {}
    if len(scores.names) < 4:
        raise ValueError(f"{metric}: the Williams test of `other_metrics` against `predictions` needs at least 4 "
                         f"systems (n - 3 degrees of freedom), got {len(scores.names)}; compare other metrics in "
                         f"separate calls, or use level='segment'")
    result = {}
    for human, quality in options.human_columns().items():
        for other, prefix in options.score_columns().items():
            if other == METRIC:
                continue
            test = system_williams(scores, METRIC, other, human)
            name = prefix.removesuffix("/")
            result.update({f"{quality}williams/{name}/t": test.t, f"{quality}williams/{name}/pvalue": test.pvalue})
    return result


def _result(metric: str, table: ScoreTable | None, scores: SystemScores, options: MetaEvaluationOptions) -> dict:
    """Counts, every metric's correlations with every human quality (keys prefixed with the metric's name, then the
    quality's), Williams tests and intervals."""
    if options.confidence and table is not None:
        check_resample_work(metric, len(table), options)
    if options.system:
        check_system_count(metric, scores)
    if options.segment and table is not None:
        check_segment_table(metric, table, options.grouping)
    if options.turn and table is not None:
        check_turn_table(metric, table)
    williams = _williams(metric, scores, options)
    result: dict[str, Any] = {"num_systems": len(scores.names)}
    if table is not None:
        result["num_items"] = len(table.item_names)
    result["num_segments"] = int(scores.counts.sum())
    for column, prefix in options.score_columns().items():
        for human, quality in options.human_columns().items():
            values = system_level(metric, scores, column, human) if options.system else {}
            if options.segment and table is not None:
                values.update(segment_level(metric, table, column, options.grouping, options.darr_threshold, human))
            if options.turn and table is not None:
                values.update(turn_level(metric, table, column, human))
            result.update({prefix + quality + key: value for key, value in values.items()})
    result.update(williams)
    if options.confidence and table is not None:
        result.update(bootstrap_intervals(metric, table, options))
    return result


def meta_evaluation_of_table(metric: str, table: ScoreTable, options: MetaEvaluationOptions) -> dict[str, Any]:
    """The result of a table of rows."""
    return _result(metric, table, table.system_scores(), options)


def meta_evaluation_from_totals(metric: str, totals: Mapping[str, Any],
                                options: MetaEvaluationOptions) -> dict[str, Any]:
    """The result of merged statistics (keyed by system, or by system and item)."""
    if options.system_keys:
        return _result(metric, None, systems_from_totals(totals, options), options)
    return meta_evaluation_of_table(metric, table_from_totals(metric, totals, options), options)
