"""Correlations of metric scores with human scores at system level and segment level, and the Williams test.

System level: each system's mean metric score against its mean human score, across systems: Pearson's r and
Spearman's rho with scipy's arithmetic and p-values (``core_correlation``), Kendall's tau-b (scipy's arithmetic
on exact pair counts, scipy's p-value) and pairwise accuracy (system pairs ordered alike, ties in both agreeing).

Segment level: Kendall's tau-b and tau-c and pairwise accuracy within groups (an item's systems, a system's items,
or every row as one group), averaged over groups (a plain mean; groups where the value is undefined are left
out and counted); WMT's Kendall-like tau on relative-ranking pairs of the same item, pooled over items.

Turn level (dialogue papers' name for it): Pearson's r and Spearman's rho of every row's metric score against its
human score, flat (no grouping), with scipy's arithmetic and p-values (``core_correlation``), on the rows in the
table's canonical order.

Every function takes the human column it correlates with (``references``, or another human quality's column).

Undefined values (a constant side) are 0.0 with an :class:`UndefinedCorrelationWarning` (p-value 1.0), as in the
pearsonr and spearmanr modules, where scipy returns NaN.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .core_checks import warn_caller
from .core_correlation import (
    PearsonrOptions, SpearmanrOptions, UndefinedCorrelationWarning, pearsonr_score, spearmanr_score,
)
from .core_meta_options import QUALITY_PREFIX
from .core_meta_pairs import darr_counts, kendall_tau_b, kendall_tau_c, pair_counts, pairwise_accuracy
from .core_meta_table import HUMAN, ScoreTable, SystemScores


@dataclass(frozen=True)
class _Pearson(PearsonrOptions):
    metric_name: ClassVar[str] = "meta_evaluation"


@dataclass(frozen=True)
class _Spearman(SpearmanrOptions):
    metric_name: ClassVar[str] = "meta_evaluation"


_PEARSON = _Pearson(return_pvalue=True)
_SPEARMAN = _Spearman(return_pvalue=True)
_PEARSON_ONLY = _Pearson(return_pvalue=False)
_SPEARMAN_ONLY = _Spearman(return_pvalue=False)


def human_name(column: str) -> str:
    """How messages name a human column: ``human score`` for the references, ``human score (<quality>)`` else."""
    return "human score" if column == HUMAN else f"human score ({column.removeprefix(QUALITY_PREFIX)})"


def undefined(metric: str, what: str) -> None:
    """Warn, at the caller's line, that ``what`` is undefined and reported as 0.0."""
    warn_caller(f"{metric}: {what}; reported as 0.0", UndefinedCorrelationWarning)


def _scipy_pair(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float, float, bool]:
    """(Pearson r, its p-value, Spearman rho, its p-value, whether a side is constant) of y against x."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pearson = pearsonr_score(y, x, _PEARSON)
        spearman = spearmanr_score(y, x, _SPEARMAN)
    constant = False
    for warning in caught:
        if issubclass(warning.category, UndefinedCorrelationWarning):
            constant = True
        else:
            warn_caller(str(warning.message), warning.category)
    spearman_p = float(spearman["spearmanr_pvalue"])
    # two rows: scipy's (and the spearmanr module's) NaN, this module's documented 1.0 for an undefined p-value
    return (float(pearson["pearsonr"]), float(pearson["p-value"]), float(spearman["spearmanr"]),
            1.0 if math.isnan(spearman_p) else spearman_p, constant)


def _kendall_pvalue(x: np.ndarray, y: np.ndarray) -> float:
    from scipy import stats

    return float(stats.kendalltau(x, y).pvalue)


def check_system_count(metric: str, scores: SystemScores) -> None:
    """Raise unless there are two systems to correlate."""
    if len(scores.names) < 2:
        raise ValueError(f"{metric}: system-level correlation needs at least 2 systems, got {len(scores.names)} in "
                         f"`systems`; use level='segment' for one system")


def system_level(metric: str, scores: SystemScores, column: str, human_column: str = HUMAN, *,
                 resample: bool = False) -> dict[str, Any]:
    """System-level correlations of metric ``column`` with the human scores of ``human_column`` (``system/...``
    keys); a bootstrap resample (``resample``) gets no p-values, and 0.0 where fewer than 2 systems remain."""
    human, means = scores.means[human_column], scores.means[column]
    if len(human) < 2:  # only in a resample: check_system_count rejects fewer than 2 systems
        return {"system/pearson": 0.0, "system/spearman": 0.0, "system/kendall": 0.0, "system/pairwise_accuracy": 0.0}
    pearson, pearson_p, spearman, spearman_p, constant = _scipy_pair(human, means)
    counts = pair_counts(np.zeros(len(human), dtype=np.int64), 1, means, human)
    result = {"system/pearson": pearson, "system/spearman": spearman,
              "system/kendall": 0.0 if constant else float(kendall_tau_b(counts)[0]),
              "system/pairwise_accuracy": float(pairwise_accuracy(counts)[0])}
    if not resample:
        if constant:
            side = human_name(human_column) if np.all(human == human[0]) else f"metric score ({column})"
            undefined(metric, f"system level: every system has the same mean {side}, so the correlations are "
                              f"undefined (p-values 1.0)")
        result.update({"system/pearson_pvalue": pearson_p, "system/spearman_pvalue": spearman_p,
                       "system/kendall_pvalue": 1.0 if constant else _kendall_pvalue(means, human)})
    return result


def _groups(table: ScoreTable, grouping: str) -> tuple[np.ndarray, int]:
    if grouping == "item":
        return table.item, len(table.item_names)
    if grouping == "system":
        return table.system, len(table.system_names)
    return np.zeros(len(table), dtype=np.int64), 1


def _mean(values: np.ndarray, weights: np.ndarray | None) -> float:
    """The mean of the defined (not NaN) values, each counted ``weights`` times (once by default); 0.0 if none."""
    defined = ~np.isnan(values)
    if weights is None:
        return math.fsum(values[defined]) / int(defined.sum()) if defined.any() else 0.0
    total = float(weights[defined].sum())
    return float(weights[defined] @ values[defined]) / total if total else 0.0


def check_segment_table(metric: str, table: ScoreTable, grouping: str) -> None:
    """Raise unless some group of ``grouping`` has two rows (a pair to compare)."""
    groups, n_groups = _groups(table, grouping)
    if not np.any(np.bincount(groups, minlength=n_groups) > 1):
        within = {"item": "no item has scores of two systems", "system": "no system has scores of two items",
                  "none": "there is a single row"}[grouping]
        raise ValueError(f"{metric}: segment-level correlation grouped by {grouping!r} needs a group of two rows, "
                         f"but {within}; use another `grouping`, or level='system'")


@dataclass(frozen=True)
class GroupValues:
    """One metric's Kendall tau-b, tau-c and pairwise accuracy in each group (NaN where undefined)."""

    kendall_b: np.ndarray
    kendall_c: np.ndarray
    accuracy: np.ndarray

    @classmethod
    def of(cls, table: ScoreTable, column: str, grouping: str, human_column: str = HUMAN) -> GroupValues:
        groups, n_groups = _groups(table, grouping)
        counts = pair_counts(groups, n_groups, table.scores[column], table.scores[human_column])
        return cls(kendall_tau_b(counts), kendall_tau_c(counts), pairwise_accuracy(counts))

    def averaged(self, weights: np.ndarray | None = None) -> dict[str, float]:
        """Means over groups (each counted ``weights`` times: a bootstrap resample of groups)."""
        return {"segment/kendall_b": _mean(self.kendall_b, weights),
                "segment/kendall_c": _mean(self.kendall_c, weights),
                "segment/pairwise_accuracy": _mean(self.accuracy, weights)}


@dataclass(frozen=True)
class RelativeRankingPairs:
    """One metric's concordant and discordant relative-ranking pairs (WMT's daRR) in each item."""

    concordant: np.ndarray
    discordant: np.ndarray

    @classmethod
    def of(cls, table: ScoreTable, column: str, threshold: float, human_column: str = HUMAN) -> RelativeRankingPairs:
        return cls(*darr_counts(table.item, len(table.item_names), table.scores[column], table.scores[human_column],
                                threshold))

    def kendall_like(self, weights: np.ndarray | None = None) -> float:
        """(Concordant - Discordant) / (Concordant + Discordant), pooled over items (each counted ``weights``
        times); 0.0 without pairs."""
        balance, pairs = self.concordant - self.discordant, self.concordant + self.discordant
        if weights is None:
            return int(balance.sum()) / int(pairs.sum()) if pairs.any() else 0.0
        total = float(weights @ pairs)
        return float(weights @ balance) / total if total else 0.0


def segment_level(metric: str, table: ScoreTable, column: str, grouping: str, threshold: float,
                  human_column: str = HUMAN) -> dict[str, Any]:
    """Segment-level correlations of metric ``column`` with the human scores of ``human_column``
    (``segment/...`` keys)."""
    values = GroupValues.of(table, column, grouping, human_column)
    ranking = RelativeRankingPairs.of(table, column, threshold, human_column)
    defined = int((~np.isnan(values.kendall_b)).sum())
    darr_pairs = int(ranking.concordant.sum() + ranking.discordant.sum())
    against = "" if human_column == HUMAN else f" against the {human_name(human_column)}"
    if not defined:
        undefined(metric, f"segment level ({column}{against}): every group of two or more rows has constant metric "
                          f"or human scores, so Kendall's tau is undefined")
    if not darr_pairs:
        undefined(metric, f"segment level ({column}{against}): no two systems' human scores for an item differ by "
                          f"more than darr_threshold={threshold}, so WMT's Kendall-like tau has no pairs")
    return {**values.averaged(), "segment/kendall_like": ranking.kendall_like(), "segment/kendall_groups": defined,
            "segment/accuracy_groups": int((~np.isnan(values.accuracy)).sum()), "segment/darr_pairs": darr_pairs}


def check_turn_table(metric: str, table: ScoreTable) -> None:
    """Raise unless there are two rows to correlate at turn level."""
    if len(table) < 2:
        raise ValueError(f"{metric}: turn-level correlation needs at least 2 rows, got {len(table)} in `predictions`; "
                         f"pass the scores of every turn (response) scored")


def turn_level(metric: str, table: ScoreTable, column: str, human_column: str = HUMAN) -> dict[str, Any]:
    """Turn-level (flat, ungrouped) Pearson and Spearman of metric ``column`` with the human scores of
    ``human_column`` and their two-sided p-values, as ``scipy.stats.pearsonr(human, metric)`` and
    ``spearmanr(human, metric)`` give them (``turn/...`` keys); 0.0 (p-value 1.0) with a warning where a side is
    constant."""
    human, values = table.scores[human_column], table.scores[column]
    pearson, pearson_p, spearman, spearman_p, constant = _scipy_pair(human, values)
    if constant:
        side = human_name(human_column) if np.all(human == human[0]) else f"metric score ({column})"
        undefined(metric, f"turn level: every row has the same {side}, so the correlations are undefined "
                          f"(p-values 1.0)")
    return {"turn/pearson": pearson, "turn/pearson_pvalue": pearson_p, "turn/spearman": spearman,
            "turn/spearman_pvalue": spearman_p}


def turn_values(human: np.ndarray, values: np.ndarray) -> dict[str, float]:
    """Turn-level Pearson and Spearman of rows (a bootstrap resample's): 0.0 where fewer than 2 rows remain or a
    side is constant, as in the point estimate; no p-values, no warnings."""
    if len(human) < 2 or np.all(human == human[0]) or np.all(values == values[0]):
        return {"turn/pearson": 0.0, "turn/spearman": 0.0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {"turn/pearson": float(pearsonr_score(values, human, _PEARSON_ONLY)["pearsonr"]),
                "turn/spearman": float(spearmanr_score(values, human, _SPEARMAN_ONLY)["spearmanr"])}


@dataclass(frozen=True)
class WilliamsTest:
    """Williams' t for the difference of two dependent correlations sharing a variable, its degrees of freedom,
    and the one-sided p-value that the larger correlation is larger (Graham & Baldwin 2014)."""

    t: float
    df: int
    pvalue: float


def williams_test(r12: float, r13: float, r23: float, n: int) -> WilliamsTest:
    """Williams (1959): is r12 (variable 1 with 2) different from r13 (1 with 3), given r23, on n observations?

    t = (r12 - r13) sqrt((n - 1)(1 + r23)) / sqrt(2 K (n - 1)/(n - 3) + ((r12 + r13)^2 / 4)(1 - r23)^3), with
    K = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23, on n - 3 degrees of freedom (Graham & Baldwin 2014, eq. 1;
    mt-metrics-eval's WilliamsTest, psych's r.test). When both the difference and the denominator vanish
    (identical correlations), t is 0 and the p-value 0.5.
    """
    from scipy import stats

    if n < 4:
        raise ValueError(f"the Williams test needs at least 4 observations (n - 3 degrees of freedom), got {n}")
    k = max(0.0, 1 - r12 ** 2 - r13 ** 2 - r23 ** 2 + 2 * r12 * r13 * r23)
    numerator = (r12 - r13) * math.sqrt((n - 1) * (1 + r23))
    denominator = math.sqrt(2 * k * (n - 1) / (n - 3) + ((r12 + r13) ** 2 / 4) * (1 - r23) ** 3)
    t = numerator / denominator if denominator > 0 else 0.0
    return WilliamsTest(t, n - 3, float(stats.t.sf(abs(t), n - 3)))


def system_williams(scores: SystemScores, column: str, other: str, human_column: str = HUMAN) -> WilliamsTest:
    """The Williams test of the system-level Pearson correlations of ``column`` and ``other`` with the human scores
    of ``human_column``."""
    human, first, second = scores.means[human_column], scores.means[column], scores.means[other]
    r12 = _scipy_pair(human, first)[0]
    r13 = _scipy_pair(human, second)[0]
    r23 = _scipy_pair(first, second)[0]
    return williams_test(r12, r13, r23, len(human))
