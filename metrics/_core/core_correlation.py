"""Pearson's and Spearman's correlation coefficients with scipy.stats' numbers, computed on the whole corpus.

The drop-ins for evaluate's ``pearsonr`` and ``spearmanr`` modules, which call
``scipy.stats.pearsonr(references, predictions)`` and
``scipy.stats.spearmanr(references, predictions)``. The coefficients repeat
scipy's arithmetic operation for operation (Pearson: mean-centred values scaled
by their largest magnitude, then normalised; Spearman: average ranks, then
``numpy.corrcoef``), so they equal scipy's; p-values use the distributions
scipy uses (the symmetric beta distribution on [-1, 1] for Pearson, Student's t
with n - 2 degrees of freedom for Spearman) from ``scipy.special``.

Both need every example at once: ranks are a property of the whole corpus, and
a Pearson coefficient from sums of squares and products (the sufficient
statistics) loses digits on badly conditioned data (a large mean, a small
spread), where the two-pass arithmetic does not. So these metrics keep their
inputs (8 bytes per value) and score the corpus in one pass.

Defined results where scipy returns NaN: a constant input (every value equal)
has no correlation; the result is a coefficient of 0.0 and a p-value of 1.0
(no evidence of association), with an :class:`UndefinedCorrelationWarning`
naming the constant argument. Spearman's p-value for two examples (zero
degrees of freedom) is 1.0, as scipy's Pearson p-value for two examples is.
NaN or infinite inputs, fewer than two examples and inputs of different
lengths are errors.
"""

from __future__ import annotations

import math

import numbers
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from .core_options import MetricOptions, boolean, choice, option
from .core_stats import StatField, StatsSchema

Alternative = Literal["two-sided", "less", "greater"]
ALTERNATIVES: tuple[str, ...] = ("two-sided", "less", "greater")


class UndefinedCorrelationWarning(UserWarning):
    """An input is constant: the correlation is undefined and reported as 0.0 (p-value 1.0)."""


class NearConstantInputWarning(UserWarning):
    """An input is nearly constant; the coefficient may be inaccurate (scipy's warning of the same name)."""


@dataclass(frozen=True)
class PearsonrOptions(MetricOptions):
    """evaluate's ``pearsonr`` options, and scipy's ``alternative`` hypothesis (an addition)."""

    metric_name: ClassVar[str] = "pearsonr"
    return_pvalue: bool = option(False, boolean)
    alternative: Alternative = option("two-sided", choice(*ALTERNATIVES))


@dataclass(frozen=True)
class SpearmanrOptions(PearsonrOptions):
    """evaluate's ``spearmanr`` options, and scipy's ``alternative`` hypothesis (an addition)."""

    metric_name: ClassVar[str] = "spearmanr"


def number_array(metric: str, argument: str, values: Any) -> np.ndarray:
    """One finite real number per example as a float64 array; anything else is an error naming the index."""
    if values is None:
        raise TypeError(f"{metric}: `{argument}` is None; pass one number per example")
    if isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__len__"):
        raise TypeError(f"{metric}: `{argument}` must be a list of numbers, one per example, got {type(values).__name__}")
    if hasattr(values, "detach") and hasattr(values, "cpu"):
        values = values.detach().cpu().double().numpy()
    array = values if isinstance(values, np.ndarray) else None
    if array is None:
        try:
            array = np.asarray(values)
        except (ValueError, TypeError):
            array = np.empty(len(values), dtype=object)
            array[:] = list(values)
    if array.dtype.kind not in "iuf" or array.ndim != 1:
        listed = list(values)
        for index, value in enumerate(listed):
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
                raise TypeError(
                    f"{metric}: `{argument}[{index}]` must be a number, got {type(value).__name__} ({value!r:.60})"
                )
        raise TypeError(f"{metric}: `{argument}` must be one number per example, got an array of shape {array.shape}")
    array = array.astype(np.float64, copy=False)
    bad = ~np.isfinite(array)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{metric}: `{argument}[{index}]` is {array[index]}; every value must be finite")
    return array


def _number_columns(metric: str, predictions: Any, references: Any) -> tuple[np.ndarray, np.ndarray]:
    """(references, predictions) as float64 arrays of one length."""
    predictions_array = number_array(metric, "predictions", predictions)
    references_array = number_array(metric, "references", references)
    if len(predictions_array) != len(references_array):
        raise ValueError(
            f"{metric}: got {len(predictions_array)} predictions but {len(references_array)} references; "
            f"pass one reference per prediction"
        )
    return references_array, predictions_array


def _checked_pair(metric: str, predictions: Any, references: Any) -> tuple[np.ndarray, np.ndarray]:
    """(references, predictions) as float64 arrays of at least two values: evaluate passes references first to scipy."""
    references_array, predictions_array = _number_columns(metric, predictions, references)
    if len(predictions_array) < 2:
        raise ValueError(
            f"{metric}: got {len(predictions_array)} example(s); a correlation needs at least 2 pairs of values"
        )
    return references_array, predictions_array


def _constant_argument(metric: str, references: np.ndarray, predictions: np.ndarray) -> str | None:
    constant = [
        name
        for name, values in (("references", references), ("predictions", predictions))
        if bool(np.all(values == values[0]))
    ]
    if not constant:
        return None
    warnings.warn(
        f"{metric}: {' and '.join(f'`{name}`' for name in constant)} constant; the correlation is undefined and "
        f"reported as 0.0 (p-value 1.0)",
        UndefinedCorrelationWarning,
        stacklevel=4,
    )
    return constant[0]


def pearson_coefficient(x: np.ndarray, y: np.ndarray) -> np.float64:
    """Pearson's r of two non-constant float64 arrays, with scipy.stats.pearsonr's arithmetic."""
    xmean = np.mean(x, axis=-1, keepdims=True)
    ymean = np.mean(y, axis=-1, keepdims=True)
    xm = x - xmean
    ym = y - ymean
    xmax = np.max(np.abs(xm), axis=-1, keepdims=True)
    ymax = np.max(np.abs(ym), axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        normxm = xmax * np.linalg.norm(xm / xmax, ord=2, axis=-1, keepdims=True)
        normym = ymax * np.linalg.norm(ym / ymax, ord=2, axis=-1, keepdims=True)
    threshold = np.finfo(np.float64).eps ** 0.75
    if np.any(normxm < threshold * np.abs(xmean)) or np.any(normym < threshold * np.abs(ymean)):
        warnings.warn(
            "An input array is nearly constant; the computed correlation coefficient may be inaccurate.",
            NearConstantInputWarning,
            stacklevel=5,
        )
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.vecdot(xm / normxm, ym / normym, axis=-1)
    return np.clip(r, -1.0, 1.0)[()]


def _pearson_pvalue(r: np.float64, n: int, alternative: str) -> np.float64:
    from scipy import special

    ab = np.asarray(n, dtype=np.float64) / 2 - 1
    if alternative == "less":
        return special.betainc(ab, ab, (r - -1) / 2)[()]
    if alternative == "greater":
        return special.betaincc(ab, ab, (r - -1) / 2)[()]
    return (2 * special.betaincc(ab, ab, (np.abs(r) - -1) / 2))[()]


def _coefficient_and_pvalue(
    predictions: Any,
    references: Any,
    options: PearsonrOptions | SpearmanrOptions,
    coefficient: Callable[[np.ndarray, np.ndarray], np.float64],
    pvalue_of: Callable[[np.float64, int, str], np.float64],
    two_pairs_pvalue: float,
) -> tuple[np.float64, np.float64]:
    """A coefficient of (references, predictions) and its p-value: (0, 1) for a constant argument,
    ``two_pairs_pvalue`` for two pairs (scipy's: 1 for Pearson, NaN for Spearman, whose t-test has no degree of
    freedom left)."""
    references_array, predictions_array = _checked_pair(options.metric_name, predictions, references)
    if _constant_argument(options.metric_name, references_array, predictions_array) is not None:
        return np.float64(0.0), np.float64(1.0)
    value = coefficient(references_array, predictions_array)
    n = len(references_array)
    return value, np.float64(two_pairs_pvalue) if n == 2 else pvalue_of(value, n, options.alternative)


def _pearson_r(x: np.ndarray, y: np.ndarray) -> np.float64:
    """Pearson's r, exactly -1 or 1 for two pairs (scipy's value)."""
    r = pearson_coefficient(x, y)
    return np.round(r) if len(x) == 2 else r


def pearsonr_score(predictions: Any, references: Any, options: PearsonrOptions) -> dict[str, Any]:
    """evaluate's ``pearsonr`` result: ``{"pearsonr": r}``, with ``"p-value"`` when ``return_pvalue``."""
    r, pvalue = _coefficient_and_pvalue(predictions, references, options, _pearson_r, _pearson_pvalue, 1.0)
    if options.return_pvalue:
        return {"pearsonr": np.float64(r), "p-value": np.float64(pvalue)}
    return {"pearsonr": float(r)}


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks from 1, tied values sharing the mean of their ranks (scipy.stats.rankdata's "average")."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.concatenate(([True], ordered[1:] != ordered[:-1]))
    first = np.flatnonzero(starts)
    counts = np.diff(first, append=len(values))
    group_ranks = first + 1 + (counts - 1) / 2
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = np.repeat(group_ranks, counts)
    return ranks


def spearman_coefficient(x: np.ndarray, y: np.ndarray) -> np.float64:
    """Spearman's rho of two non-constant float64 arrays, with scipy.stats.spearmanr's arithmetic."""
    ranked = np.column_stack((average_ranks(x), average_ranks(y)))
    return np.corrcoef(ranked, rowvar=False)[1, 0]


def _spearman_pvalue(rho: np.float64, n: int, alternative: str) -> np.float64:
    from scipy import special

    dof = n - 2
    with np.errstate(divide="ignore"):
        t = rho * np.sqrt((dof / ((rho + 1.0) * (1.0 - rho))).clip(0))
    if alternative == "less":
        return np.float64(special.stdtr(dof, t))
    if alternative == "greater":
        return np.float64(special.stdtr(dof, -t))
    return np.float64(2 * special.stdtr(dof, -np.abs(t)))


def spearmanr_score(predictions: Any, references: Any, options: SpearmanrOptions) -> dict[str, Any]:
    """evaluate's ``spearmanr`` result: ``{"spearmanr": rho}``, with ``"spearmanr_pvalue"`` when ``return_pvalue``."""
    rho, pvalue = _coefficient_and_pvalue(predictions, references, options, spearman_coefficient, _spearman_pvalue,
                                          math.nan)
    if options.return_pvalue:
        return {"spearmanr": np.float64(rho), "spearmanr_pvalue": np.float64(pvalue)}
    return {"spearmanr": np.float64(rho)}


# -- statistics ----------------------------------------------------------------------------------------------

PAIRS = "pairs"
SCORES = {"pearsonr": pearsonr_score, "spearmanr": spearmanr_score}


def correlation_schema(metric: str) -> StatsSchema:
    """Per-example statistics of a correlation: the (reference, prediction) pair, counted (a keyed field).

    A correlation needs every pair, so the statistics are the pairs themselves; they merge exactly across shards.
    """
    return StatsSchema(metric, (StatField(PAIRS, "keyed"),))


def correlation_rows(predictions: Any, references: Any, metric: str) -> list[tuple[dict[tuple[float, float], int]]]:
    """One row per example: ``{(reference, prediction): 1}``."""
    references_array, predictions_array = _number_columns(metric, predictions, references)
    pairs = zip(references_array.tolist(), predictions_array.tolist(), strict=True)
    return [({(reference, prediction): 1},) for reference, prediction in pairs]


def correlation_from_totals(totals: Mapping[str, Any], options: PearsonrOptions) -> dict[str, Any]:
    """The result from merged pair counts, scored in sorted pair order: scipy's numbers for that order, which
    differ from the input order's by float summation order only (last bits; more on badly conditioned data)."""
    pairs = sorted(totals[PAIRS].items())
    counts = [count for _, count in pairs]
    references = np.repeat(np.array([key[0] for key, _ in pairs], dtype=np.float64), counts)
    predictions = np.repeat(np.array([key[1] for key, _ in pairs], dtype=np.float64), counts)
    return SCORES[options.metric_name](predictions, references, options)
