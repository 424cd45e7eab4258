"""Bootstrap intervals of meta-evaluation correlations: items resampled with replacement, every correlation recomputed.

Items are drawn as sacreBLEU draws examples (``core_resample.bootstrap_weights``: the same generator, seed and
calls), each item with every system's row of it; an item drawn twice counts as two items. A resample is applied
as weights (how often each item was drawn) wherever that gives the resample's value directly: system means are
weighted means, values per item (tau within an item, relative-ranking pairs) are weighted averages. Grouping by
system or by no group pairs rows across items, and turn-level correlations rank and centre all rows, so there the
resample's rows are materialised (a twice-drawn item's rows appear twice) and counted again. Undefined values count
as 0.0, as in the point estimate.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .core_meta_correlations import GroupValues, RelativeRankingPairs, system_level, turn_values
from .core_meta_options import MetaEvaluationOptions
from .core_meta_table import ScoreTable, SystemScores
from .core_resample import bootstrap_weights, percentile_interval

INTERVAL_KEYS = ("system/pearson", "system/spearman", "system/kendall", "system/pairwise_accuracy",
                 "segment/kendall_b", "segment/kendall_c", "segment/pairwise_accuracy", "segment/kendall_like",
                 "turn/pearson", "turn/spearman")


def weighted_system_scores(table: ScoreTable, item_weights: np.ndarray) -> SystemScores:
    """System means of a resample of items: each row counted as often as its item was drawn."""
    row_weights = item_weights[table.item].astype(np.float64)
    n_systems = len(table.system_names)
    counts = np.bincount(table.system, weights=row_weights, minlength=n_systems)
    present = counts > 0
    means = {column: np.bincount(table.system, weights=row_weights * values, minlength=n_systems)[present]
             / counts[present] for column, values in table.scores.items()}
    return SystemScores(tuple(np.asarray(table.system_names)[present].tolist()), counts[present].astype(np.int64),
                        means)


class _Resampler:
    """One resample's correlations of every metric with every human quality, from the table and the per-item values
    computed once."""

    def __init__(self, metric: str, table: ScoreTable, options: MetaEvaluationOptions) -> None:
        self.metric, self.table, self.options = metric, table, options
        pairs = [(column, human) for column in options.score_columns() for human in options.human_columns()]
        per_item = options.segment and options.grouping == "item"
        self.groups = ({(column, human): GroupValues.of(table, column, "item", human) for column, human in pairs}
                       if per_item else {})
        self.pairs = ({(column, human): RelativeRankingPairs.of(table, column, options.darr_threshold, human)
                       for column, human in pairs} if options.segment else {})

    def values(self, weights: np.ndarray) -> dict[str, float]:
        options, result = self.options, {}
        scores = weighted_system_scores(self.table, weights) if options.system else None
        rows = (self.table.resampled(weights)
                if options.turn or (options.segment and not self.groups) else None)
        for column, prefix in options.score_columns().items():
            for human, quality in options.human_columns().items():
                values: dict[str, Any] = {}
                if scores is not None:
                    values.update(system_level(self.metric, scores, column, human, resample=True))
                if options.segment and self.groups:
                    values.update(self.groups[column, human].averaged(weights))
                elif options.segment and rows is not None:
                    values.update(GroupValues.of(rows, column, options.grouping, human).averaged())
                if options.segment:
                    values["segment/kendall_like"] = self.pairs[column, human].kendall_like(weights)
                if options.turn and rows is not None:
                    values.update(turn_values(rows.scores[human], rows.scores[column]))
                result.update({prefix + quality + key: values[key] for key in INTERVAL_KEYS if key in values})
        return result


def bootstrap_intervals(metric: str, table: ScoreTable, options: MetaEvaluationOptions) -> dict[str, float]:
    """``<key>_low`` and ``<key>_high``: the percentile interval of every correlation over item resamples."""
    resampler = _Resampler(metric, table, options)
    samples: dict[str, list[float]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for chunk in bootstrap_weights(len(table.item_names), n_samples=options.n_bootstrap, seed=options.seed):
            for weights in chunk:
                for key, value in resampler.values(weights).items():
                    samples.setdefault(key, []).append(value)
    result = {}
    for key, values in samples.items():
        interval = percentile_interval(np.asarray(values), level=options.confidence_level)
        result.update({f"{key}_low": interval.low, f"{key}_high": interval.high})
    return result
