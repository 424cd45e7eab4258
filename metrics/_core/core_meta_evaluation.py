"""Meta-evaluation of automatic metrics against human scores: per-row statistics and the result.

The statistics of a row are keyed by its (system, item) pair: a row count and exact sums of the metric's, the
humans' and any other metrics' scores. Merged over shards they give back every row (a pair counted twice is an
error), so the corpus result from statistics equals the one-shot result bit for bit. With ``level="system"`` and no
bootstrap, the key is the system alone: per-system counts and exact sums, all that system means need.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .core_meta_bootstrap import bootstrap_intervals
from .core_meta_correlations import check_segment_table, check_system_count, segment_level, system_level
from .core_meta_correlations import system_williams
from .core_meta_options import METRIC, OTHER_PREFIX, MetaEvaluationOptions
from .core_meta_table import HUMAN, ScoreTable, SystemScores
from .core_stats import StatField, StatsSchema

ROWS = "rows"

# -- statistics ------------------------------------------------------------------------------------------------


def meta_schema(metric: str, options: MetaEvaluationOptions) -> StatsSchema:
    """A row count and exact score sums, keyed by (system, item), or by system for ``options.system_keys``."""
    return StatsSchema(metric, (StatField(ROWS, "keyed"),
                                *(StatField(name, "keyed_fsum") for name in options.score_fields())))


def _other_scores(metric: str, options: MetaEvaluationOptions, start: int, size: int) -> list[list[float]]:
    """Each other metric's scores of rows ``start`` to ``start + size``."""
    others = []
    for name in options.others:
        scores = options.other_metrics[name]  # type: ignore[index]
        if len(scores) < start + size:
            raise ValueError(f"{metric}: `other_metrics[{name!r}]` has {len(scores)} scores but the rows reach "
                             f"{start + size}; pass one score per row")
        others.append(scores[start:start + size])
    return others


def meta_rows(metric: str, columns: Mapping[str, Sequence[Any]], start: int,
              options: MetaEvaluationOptions) -> list[tuple[dict[Any, Any], ...]]:
    """One statistics row per input row (in schema order); other metrics' scores are taken from row ``start`` on."""
    keys: Sequence[Any] = (columns["systems"] if options.system_keys
                           else list(zip(columns["systems"], columns["items"], strict=True)))
    scores = [columns[METRIC], *_other_scores(metric, options, start, len(keys)), columns[HUMAN]]
    return [({key: 1}, *({key: column[index]} for column in scores)) for index, key in enumerate(keys)]


def check_other_lengths(metric: str, size: int, options: MetaEvaluationOptions) -> None:
    """Every other metric has one score per row."""
    for name in options.others:
        count = len(options.other_metrics[name])  # type: ignore[index]
        if count != size:
            raise ValueError(f"{metric}: `other_metrics[{name!r}]` has {count} scores but there are {size} rows; "
                             f"pass one score per row")


def table_from_columns(metric: str, columns: Mapping[str, Sequence[Any]], options: MetaEvaluationOptions) -> ScoreTable:
    """The table of the input columns (and the other metrics' scores of the same rows)."""
    others = dict(zip((OTHER_PREFIX + name for name in options.others),
                      _other_scores(metric, options, 0, len(columns[METRIC])), strict=True))
    scores = {METRIC: columns[METRIC], **others, HUMAN: columns[HUMAN]}
    return ScoreTable.build(metric, columns["systems"], columns["items"], scores)


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


def _williams(metric: str, scores: SystemScores, options: MetaEvaluationOptions) -> dict[str, Any]:
    """The Williams test of each other metric against ``predictions`` (system-level Pearson)."""
    if not options.system or not options.others:
        return {}
    if len(scores.names) < 4:
        raise ValueError(f"{metric}: the Williams test of `other_metrics` against `predictions` needs at least 4 "
                         f"systems (n - 3 degrees of freedom), got {len(scores.names)}; compare other metrics in "
                         f"separate calls, or use level='segment'")
    result = {}
    for name in options.others:
        test = system_williams(scores, METRIC, OTHER_PREFIX + name)
        result.update({f"williams/{name}/t": test.t, f"williams/{name}/pvalue": test.pvalue})
    return result


def _result(metric: str, table: ScoreTable | None, scores: SystemScores, options: MetaEvaluationOptions) -> dict:
    """Counts, every metric's correlations (keys prefixed with its name), Williams tests and intervals."""
    if options.system:
        check_system_count(metric, scores)
    if options.segment and table is not None:
        check_segment_table(metric, table, options.grouping)
    williams = _williams(metric, scores, options)
    result: dict[str, Any] = {"num_systems": len(scores.names)}
    if table is not None:
        result["num_items"] = len(table.item_names)
    result["num_segments"] = int(scores.counts.sum())
    for column, prefix in options.score_columns().items():
        values = system_level(metric, scores, column) if options.system else {}
        if options.segment and table is not None:
            values.update(segment_level(metric, table, column, options.grouping, options.darr_threshold))
        result.update({prefix + key: value for key, value in values.items()})
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
