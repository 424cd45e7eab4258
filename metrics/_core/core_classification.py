"""Accuracy, precision, recall, F1 and the Matthews correlation coefficient from one confusion matrix.

The five metrics of evaluate's modules of the same names, with scikit-learn's
numbers (the library those modules wrap): the same arguments and defaults
(``average``, ``labels``, ``pos_label``, ``sample_weight``, ``normalize``,
``zero_division``), the same handling of labels present in only one argument,
of single-class input and of zero divisions, the same errors (as ``ValueError``
naming the metric and the argument) and evaluate's output types.

Every metric is a function of the same per-example statistics, so one count
serves all five (the signature names what the statistics depend on, and is
the same for the five metrics):

* one label per example: one keyed field, ``cells``, mapping (reference,
  prediction) to a weight (1.0 without ``sample_weight``), summed exactly per
  cell: the confusion matrix, with the labels that occur;
* the ``multilabel`` configuration (rows of 0/1 indicators): ``label_cells``
  mapping (label column, reference value, predicted value) to a weight, the
  weight of exactly matching rows (``exact``, subset accuracy), the total
  ``weight``, and per-example profiles (true positives, predicted labels, true
  labels) over the columns ``labels`` selects, for ``average="samples"`` (a
  row of weight zero counts as (0, 0, 0): scikit-learn multiplies the counts by
  the weight, so such a row's scores are 0/0);
* both: the number of examples with a non-zero weight (scikit-learn refuses
  weights that are all zero).

:func:`classification_rows` gives one row per example (for ``datasets.map``);
:func:`classification_batch_totals` counts a whole batch with numpy at once
(one ``bincount`` pass) and returns the same totals, bit for bit, that summing
its rows gives. ``<metric>_from_totals`` computes a result from totals, and
:func:`classification_results` several results from the same totals.

Weighted sums are exact, so the scores are the exact ratios correctly rounded
where scikit-learn sums in input order (differences in the last bits); the
Matthews coefficient is computed from exact covariances, which matters where
scikit-learn's ``n**2 - p.p`` cancels (weights of very different sizes).

When a score is 0/0 and ``zero_division="warn"``, the score is 0.0 (as
scikit-learn returns) and an :class:`UndefinedMetricWarning` with
scikit-learn's text is issued. Deliberate differences, all errors where
scikit-learn returns a value: an empty ``labels``; ``labels`` of another kind
(integers vs strings) than the data; multi-label values other than 0/1 for the
Matthews correlation (evaluate computes it column by column on any integers);
weights that cancel to a zero total for accuracy. ``pos_label=None`` with
``average="binary"`` is a ValueError (scikit-learn raises ValueError or, with
one class, TypeError). ``average=None`` with one label gives a float, as
evaluate intends (its ``float(score)`` of a one-element array raises TypeError
under numpy 2).
"""

from __future__ import annotations

import math
import numbers
import warnings
from itertools import chain
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar, Literal

import numpy as np

from .core_checks import check_choice
from .core_confusion import (
    check_pair,
    count_cells,
    count_codes,
    count_indicator_rows,
    example_label_counts,
    exact_sum,
    indicator_matrix,
    label_array,
    weight_array,
)
from .core_options import MetricOptions, boolean, choice, option
from .core_stats import EXAMPLES_FIELD, RESIDUAL_SUFFIX, SIGNATURE_FIELD, StatField, StatsSchema

Label = int | str
Average = Literal["binary", "micro", "macro", "weighted", "samples"] | None
AVERAGES: tuple[Average, ...] = ("binary", "micro", "macro", "weighted", "samples", None)
MCC_AVERAGES = (None, "macro")
ZERO_DIVISION_VALUES = '"warn", 0, 1 or float("nan")'
_EXACT_INTEGERS = 1 << 53


class UndefinedMetricWarning(UserWarning):
    """A score is 0/0 and was set by ``zero_division`` (scikit-learn's warning of the same name and text)."""


# -- options -----------------------------------------------------------------------------------------------


def classification_signature(multilabel: bool, labels: tuple[Label, ...] | None = None) -> str:
    """The statistics' signature: shared by the five metrics; multi-label statistics depend on ``labels``."""
    if not multilabel:
        return "classification|multiclass"
    selected = "all" if labels is None else ",".join(str(label) for label in labels)
    return f"classification|multilabel|labels:{selected}"


def _check_labels_option(metric: str, name: str, labels: Any) -> tuple[Label, ...] | None:
    if labels is None:
        return None
    if isinstance(labels, (str, bytes, Mapping)) or not hasattr(labels, "__iter__"):
        raise TypeError(f"{metric}: `{name}` must be a list of labels or None, got {type(labels).__name__}")
    values = list(labels.tolist() if isinstance(labels, np.ndarray) else labels)
    if not values:
        raise ValueError(f"{metric}: `{name}` is empty; pass the labels to score, or None for every label present")
    if all(isinstance(value, (str, np.str_)) for value in values):
        return tuple(str(value) for value in values)
    if all(isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) for value in values):
        return tuple(int(value) for value in values)
    raise ValueError(
        f"{metric}: `{name}` must be all integers or all strings, got {[type(value).__name__ for value in values]}"
    )


def _check_zero_division(metric: str, name: str, value: Any) -> Any:
    if isinstance(value, str) and value == "warn":
        return value
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        if math.isnan(value) or value in (0, 1):
            return value
    raise ValueError(f"{metric}: unknown `{name}` {value!r}; valid values are {ZERO_DIVISION_VALUES}")


def _check_pos_label(metric: str, name: str, value: Any) -> Any:
    if value is None or (isinstance(value, (str, numbers.Real)) and not isinstance(value, bool)):
        return value
    raise TypeError(f"{metric}: `{name}` must be a label (an integer or a string) or None, got {value!r:.60}")


def _check_sample_weight(metric: str, name: str, value: Any) -> np.ndarray | None:
    """None, or finite numbers (one per example: the length is checked against the corpus when scoring)."""
    if value is None:
        return None
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__len__"):
        raise TypeError(f"{metric}: `{name}` must be a list of numbers, one per example, got {type(value).__name__}")
    return weight_array(metric, value, len(value))


@dataclass(frozen=True)
class AccuracyOptions(MetricOptions):
    """evaluate's ``accuracy`` options; the ``"multilabel"`` configuration uses :data:`MultilabelAccuracyOptions`."""

    metric_name: ClassVar[str] = "accuracy"
    multilabel: ClassVar[bool] = False
    normalize: bool = option(True, boolean)
    sample_weight: Any = option(None, _check_sample_weight)

    @property
    def labels(self) -> None:
        return None

    def stats_signature(self) -> str:
        return classification_signature(self.multilabel)


@dataclass(frozen=True)
class PrecisionOptions(MetricOptions):
    """evaluate's ``precision`` options (scikit-learn's ``precision_score``)."""

    metric_name: ClassVar[str] = "precision"
    multilabel: ClassVar[bool] = False
    labels: tuple[Label, ...] | None = option(None, _check_labels_option, stats=True)
    pos_label: Label | None = option(1, _check_pos_label)
    average: Average = option("binary", choice(*AVERAGES))
    sample_weight: Any = option(None, _check_sample_weight)
    zero_division: Any = option("warn", _check_zero_division)

    def validate(self, metric: str) -> None:
        if self.average == "binary" and self.pos_label is None:
            raise ValueError(f"{metric}: average='binary' scores the class `pos_label`, which is None; pass a label")
        if self.multilabel and self.labels is not None and not all(isinstance(x, int) for x in self.labels):
            raise ValueError(f"{metric}: multi-label `labels` are column indices (integers), got {self.labels}")

    def stats_signature(self) -> str:
        return classification_signature(self.multilabel, self.labels)


@dataclass(frozen=True)
class RecallOptions(PrecisionOptions):
    """evaluate's ``recall`` options (scikit-learn's ``recall_score``)."""

    metric_name: ClassVar[str] = "recall"


@dataclass(frozen=True)
class F1Options(PrecisionOptions):
    """evaluate's ``f1`` options (scikit-learn's ``f1_score``); ``zero_division`` is an addition to evaluate's."""

    metric_name: ClassVar[str] = "f1"


@dataclass(frozen=True)
class MatthewsCorrelationOptions(MetricOptions):
    """evaluate's ``matthews_correlation`` options; ``average`` (None or "macro") applies to multi-label input."""

    metric_name: ClassVar[str] = "matthews_correlation"
    multilabel: ClassVar[bool] = False
    sample_weight: Any = option(None, _check_sample_weight)
    average: Literal["macro"] | None = option(None, choice(*MCC_AVERAGES))

    @property
    def labels(self) -> None:
        return None

    def stats_signature(self) -> str:
        return classification_signature(self.multilabel)


def _multilabel_variant(options_class: type[MetricOptions]) -> type[MetricOptions]:
    """The same options for the ``"multilabel"`` configuration (rows of 0/1 indicators)."""
    name = f"Multilabel{options_class.__name__}"
    namespace = {"multilabel": True, "__module__": __name__, "__qualname__": name,
                 "__doc__": f"{options_class.__name__} for the 'multilabel' configuration (rows of 0/1 indicators)."}
    return dataclass(frozen=True)(type(name, (options_class,), namespace))


MultilabelAccuracyOptions = _multilabel_variant(AccuracyOptions)
MultilabelPrecisionOptions = _multilabel_variant(PrecisionOptions)
MultilabelRecallOptions = _multilabel_variant(RecallOptions)
MultilabelF1Options = _multilabel_variant(F1Options)
MultilabelMatthewsCorrelationOptions = _multilabel_variant(MatthewsCorrelationOptions)
_MULTILABEL_VARIANTS = {variant.__mro__[1]: variant for variant in (
    MultilabelAccuracyOptions, MultilabelPrecisionOptions, MultilabelRecallOptions, MultilabelF1Options,
    MultilabelMatthewsCorrelationOptions,
)}
MULTILABEL_CONFIG = "multilabel"


def options_for_config(options_class: type[MetricOptions], config_name: str | None) -> type[MetricOptions]:
    """The options class of a metric's evaluate configuration: the multi-label variant for ``"multilabel"``."""
    if config_name == MULTILABEL_CONFIG:
        return _MULTILABEL_VARIANTS.get(options_class, options_class)
    return options_class


def resolve_options(options_class: type[MetricOptions], *, multilabel: bool = False, **given: Any) -> Any:
    """Checked options from keyword arguments (``multilabel``: the ``"multilabel"`` configuration's variant)."""
    variant = options_for_config(options_class, MULTILABEL_CONFIG if multilabel else None)
    return variant.resolve(options_class.metric_name, given)


ClassificationOptions = AccuracyOptions | PrecisionOptions | MatthewsCorrelationOptions

# -- statistics ----------------------------------------------------------------------------------------------

CELLS = "cells"
LABEL_CELLS = "label_cells"
EXACT = "exact"
WEIGHT = "weight"
PROFILES = "profiles"
PROFILE_COUNTS = "profile_counts"
WIDTH_MIN = "width_min"
WIDTH_MAX = "width_max"
NONZERO = "nonzero_weights"


def classification_schema(metric: str, multilabel: bool) -> StatsSchema:
    """The per-example statistics of every classification metric (see the module docstring)."""
    if not multilabel:
        return StatsSchema(metric, (StatField(CELLS, "keyed_fsum"), StatField(NONZERO)))
    return StatsSchema(
        metric,
        (
            StatField(LABEL_CELLS, "keyed_fsum"),
            StatField(EXACT, "fsum"),
            StatField(WEIGHT, "fsum"),
            StatField(PROFILES, "keyed_fsum"),
            StatField(PROFILE_COUNTS, "keyed"),
            StatField(WIDTH_MIN, "min"),
            StatField(WIDTH_MAX, "max"),
            StatField(NONZERO),
        ),
    )


@dataclass(frozen=True)
class _Inputs:
    references: np.ndarray
    predictions: np.ndarray
    weights: np.ndarray | None


def _checked(options: Any, predictions: Any, references: Any, sample_weight: Any) -> _Inputs:
    metric = options.metric_name
    convert = indicator_matrix if options.multilabel else label_array
    predictions_array = convert(metric, "predictions", predictions)
    references_array = convert(metric, "references", references)
    check_pair(metric, references_array, predictions_array)
    weights = weight_array(metric, sample_weight, len(references_array))
    if options.multilabel:
        _selected_columns(metric, options.labels, references_array.shape[1])
    return _Inputs(references_array, predictions_array, weights)


def _selected_columns(metric: str, labels: tuple[Label, ...] | None, width: int) -> list[int]:
    if labels is None:
        return list(range(width))
    for label in labels:
        if not isinstance(label, int):
            raise ValueError(f"{metric}: multi-label `labels` are column indices (integers), got {label!r}")
        if label >= width:
            raise ValueError(
                f"{metric}: `labels` holds {label}, but multi-label rows have {width} columns; all labels must be "
                f"in [0, {width})"
            )
        if label < 0:
            raise ValueError(f"{metric}: `labels` holds {label}; all multi-label labels must be in [0, {width})")
    return list(labels)


def classification_rows(
    predictions: Any, references: Any, options: Any, *, sample_weight: Any = None
) -> list[tuple[Any, ...]]:
    """One row of statistics per example, in :func:`classification_schema` order."""
    inputs = _checked(options, predictions, references, sample_weight)
    size = len(inputs.references)
    weights = [1.0] * size if inputs.weights is None else inputs.weights.tolist()
    if not options.multilabel:
        pairs = zip(inputs.references.tolist(), inputs.predictions.tolist(), weights, strict=True)
        return [({(true, predicted): weight}, int(weight != 0)) for true, predicted, weight in pairs]
    width = inputs.references.shape[1]
    selected = _selected_columns(options.metric_name, options.labels, width)
    true_positives, predicted, true = example_label_counts(inputs.references, inputs.predictions)
    selected_counts = _selected_counts(inputs, options.labels, selected, (true_positives, predicted, true))
    rows = []
    columns = range(width)
    for index, (reference, prediction, weight) in enumerate(
        zip(inputs.references.tolist(), inputs.predictions.tolist(), weights, strict=True)
    ):
        cells = {(column, int(reference[column]), int(prediction[column])): weight for column in columns}
        exact = weight if predicted[index] + true[index] == 2 * true_positives[index] else 0.0
        profile = tuple(int(count[index]) for count in selected_counts) if weight != 0 else (0, 0, 0)
        rows.append((cells, exact, weight, {profile: weight}, {profile: 1}, width, width, int(weight != 0)))
    return rows


def _selected_counts(
    inputs: _Inputs, labels: tuple[Label, ...] | None, selected: list[int], all_counts: tuple[np.ndarray, ...]
) -> tuple[np.ndarray, ...]:
    if labels is None:
        return all_counts
    return example_label_counts(inputs.references[:, selected], inputs.predictions[:, selected])


def classification_batch_totals(
    predictions: Any, references: Any, options: Any, *, sample_weight: Any = None
) -> dict[str, Any]:
    """Totals of a whole batch, counted with numpy at once; equal to the totals of its summed rows."""
    inputs = _checked(options, predictions, references, sample_weight)
    signature = options.stats_signature()
    size = len(inputs.references)
    nonzero = size if inputs.weights is None else int(np.count_nonzero(inputs.weights))
    if not options.multilabel:
        cells, residuals = count_cells(inputs.references, inputs.predictions, inputs.weights).keyed()
        return {CELLS: cells, CELLS + RESIDUAL_SUFFIX: residuals, NONZERO: nonzero, EXAMPLES_FIELD: size,
                SIGNATURE_FIELD: signature}
    width = inputs.references.shape[1]
    counts = count_indicator_rows(inputs.references, inputs.predictions, inputs.weights)
    columns = counts.columns
    occurring = np.argwhere(columns.occurrences > 0)
    label_cells = {
        (column, true, predicted): float(columns.weights[column, true, predicted])
        for column, true, predicted in occurring.tolist()
    }
    all_counts = (counts.true_positive, counts.predicted, counts.true)
    if inputs.weights is None:
        exact, exact_residual = float(np.count_nonzero(counts.equal)), []
    else:
        exact, exact_residual = exact_sum(inputs.weights[counts.equal], 0)
    weight, weight_residual = exact_sum(inputs.weights, size)
    selected = _selected_columns(options.metric_name, options.labels, width)
    profile_true_positives, profile_predicted, profile_true = _selected_counts(
        inputs, options.labels, selected, all_counts
    )
    base = len(selected) + 1
    codes = (profile_true_positives.astype(np.int64) * base + profile_predicted) * base + profile_true
    if inputs.weights is not None:
        codes[inputs.weights == 0] = 0
    occurring_codes, profile_counts, sums, residuals = count_codes(codes, base**3, inputs.weights)
    keys = [(code // (base * base), code // base % base, code % base) for code in occurring_codes.tolist()]
    return {
        LABEL_CELLS: label_cells,
        LABEL_CELLS + RESIDUAL_SUFFIX: dict(columns.residuals),
        EXACT: exact,
        EXACT + RESIDUAL_SUFFIX: exact_residual,
        WEIGHT: weight,
        WEIGHT + RESIDUAL_SUFFIX: weight_residual,
        PROFILES: dict(zip(keys, sums.tolist(), strict=True)),
        PROFILES + RESIDUAL_SUFFIX: {keys[position]: residual for position, residual in residuals.items()},
        PROFILE_COUNTS: dict(zip(keys, profile_counts.tolist(), strict=True)),
        WIDTH_MIN: width,
        WIDTH_MAX: width,
        NONZERO: nonzero,
        EXAMPLES_FIELD: size,
        SIGNATURE_FIELD: signature,
    }


# -- confusion totals ----------------------------------------------------------------------------------------


def _exact(parts: Iterable[float]) -> float:
    return math.fsum(parts)


@dataclass(frozen=True)
class Confusion:
    """Per label (sorted labels present in references or predictions): true positives, references carrying
    the label (``true_sum``) and predictions carrying it (``pred_sum``), weights summed exactly, with the exact
    sums of the diagonal (``correct``) and of every cell (``total``). ``parts`` holds, for true positives,
    ``true_sum`` and ``pred_sum``, the floats whose exact sums they are; it is None when every cell holds a
    whole number (counts), whose sums the arrays hold exactly."""

    labels: list[Label]
    true_positive: np.ndarray
    true_sum: np.ndarray
    pred_sum: np.ndarray
    correct: float
    total: float
    parts: tuple[list[list[float]], list[list[float]], list[list[float]]] | None

    @property
    def index(self) -> dict[Label, int]:
        return {label: position for position, label in enumerate(self.labels)}


def _confusion_of_cells(
    metric: str, cells: Mapping[tuple[Any, Any], float], residuals: Mapping[tuple[Any, Any], Sequence[float]]
) -> Confusion:
    keys = list(cells)
    flat = list(chain.from_iterable(keys))
    strings = {isinstance(label, str) for label in set(flat)}
    if len(strings) > 1:
        raise ValueError(f"{metric}: the statistics mix integer and string labels; labels are one or the other")
    present, inverse = np.unique(np.array(flat), return_inverse=True)
    labels = present.tolist()
    size = len(labels)
    true_index, pred_index = inverse[0::2], inverse[1::2]
    values = np.fromiter(cells.values(), dtype=np.float64, count=len(keys))
    on_diagonal = true_index == pred_index
    if not residuals and np.all(values == np.floor(values)) and float(np.sum(np.abs(values))) < _EXACT_INTEGERS:
        true_positive = np.bincount(true_index[on_diagonal], values[on_diagonal], minlength=size)
        return Confusion(
            labels,
            true_positive,
            np.bincount(true_index, values, minlength=size),
            np.bincount(pred_index, values, minlength=size),
            float(np.sum(true_positive)),
            float(np.sum(values)),
            None,
        )
    true_parts: list[list[float]] = [[] for _ in range(size)]
    pred_parts: list[list[float]] = [[] for _ in range(size)]
    diagonal: list[list[float]] = [[] for _ in range(size)]
    for key, true, predicted, weight in zip(keys, true_index.tolist(), pred_index.tolist(), values.tolist(),
                                            strict=True):
        parts = [weight, *residuals.get(key, ())]
        true_parts[true].extend(parts)
        pred_parts[predicted].extend(parts)
        if true == predicted:
            diagonal[true].extend(parts)
    return Confusion(
        labels,
        np.array([_exact(parts) for parts in diagonal]),
        np.array([_exact(parts) for parts in true_parts]),
        np.array([_exact(parts) for parts in pred_parts]),
        _exact(part for parts in diagonal for part in parts),
        _exact(part for parts in true_parts for part in parts),
        (diagonal, true_parts, pred_parts),
    )


class _SharedTotals(dict):
    """Totals read by several metrics at once: the confusion is made from them once."""

    confusion: Confusion | None = None


def _multiclass_confusion(metric: str, totals: Mapping[str, Any]) -> Confusion:
    if isinstance(totals, _SharedTotals) and totals.confusion is not None:
        return totals.confusion
    confusion = _confusion_of_cells(metric, totals[CELLS], totals.get(CELLS + RESIDUAL_SUFFIX) or {})
    if isinstance(totals, _SharedTotals):
        totals.confusion = confusion
    return confusion


@dataclass(frozen=True)
class _LabelColumns:
    width: int
    cells: Mapping[tuple[int, int, int], float]
    residuals: Mapping[tuple[int, int, int], Sequence[float]]

    def parts(self, column: int, true: int, predicted: int) -> list[float]:
        key = (column, true, predicted)
        if key not in self.cells:
            return []
        return [self.cells[key], *self.residuals.get(key, ())]

    def column_cells(self, column: int) -> tuple[dict[tuple[int, int], float], dict[tuple[int, int], list[float]]]:
        cells = {(true, predicted): weight for (j, true, predicted), weight in self.cells.items() if j == column}
        residuals = {
            (true, predicted): list(residual)
            for (j, true, predicted), residual in self.residuals.items()
            if j == column
        }
        return cells, residuals

    def cells_by_column(self) -> dict[int, tuple[dict[tuple[int, int], float], dict[tuple[int, int], list[float]]]]:
        """:meth:`column_cells` of every column at once, in one pass over the cells (not one pass per column,
        which is quadratic in the label columns)."""
        grouped: dict[int, tuple[dict[tuple[int, int], float], dict[tuple[int, int], list[float]]]] = {}
        for (column, true, predicted), weight in self.cells.items():
            grouped.setdefault(column, ({}, {}))[0][(true, predicted)] = weight
        for (column, true, predicted), residual in self.residuals.items():
            grouped.setdefault(column, ({}, {}))[1][(true, predicted)] = list(residual)
        return grouped


def _label_columns(metric: str, totals: Mapping[str, Any]) -> _LabelColumns:
    width, widest = int(totals[WIDTH_MIN]), int(totals[WIDTH_MAX])
    if width != widest:
        raise ValueError(
            f"{metric}: the statistics merge multi-label rows of {width} and of {widest} columns; "
            f"every row needs one indicator per label"
        )
    return _LabelColumns(width, totals[LABEL_CELLS], totals.get(LABEL_CELLS + RESIDUAL_SUFFIX) or {})


# -- set-wise scores (precision, recall, F1) -----------------------------------------------------------------

_MEASURES = {
    "precision": ("precision", "Precision is", "predicted"),
    "recall": ("recall", "Recall is", "true"),
    "f1": ("f-score", "F-score is", "true nor predicted"),
}


def _zero_division_value(zero_division: Any) -> float:
    if zero_division == "warn":
        return 0.0
    return float(zero_division)


def _warn_undefined(measure: str, average: Average, size: int) -> None:
    _, start, modifier = _MEASURES[measure]
    axis0, axis1 = ("label", "sample") if average == "samples" else ("sample", "label")
    where = "due to" if size == 1 else f"in {axis1}s with"
    warnings.warn(
        f"{start} ill-defined and being set to 0.0 {where} no {modifier} {axis0}s. "
        f"Use `zero_division` parameter to control this behavior.",
        UndefinedMetricWarning,
        stacklevel=4,
    )


def _divide(numerator: np.ndarray, denominator: np.ndarray, measure: str, options: Any, warn_size: int) -> np.ndarray:
    """numerator / denominator, with ``zero_division`` where the denominator is zero (scikit-learn's rule)."""
    mask = denominator == 0
    safe = np.where(mask, 1.0, denominator).astype(np.float64)
    result = np.asarray(numerator, dtype=np.float64) / safe
    if mask.any():
        result[mask] = _zero_division_value(options.zero_division)
        if options.zero_division == "warn":
            _warn_undefined(measure, options.average, warn_size)
    return result


def _measure(measure: str, true_positive: np.ndarray, true_sum: np.ndarray, pred_sum: np.ndarray,
             options: Any, warn_size: int) -> np.ndarray:
    if measure == "precision":
        return _divide(true_positive, pred_sum, measure, options, warn_size)
    if measure == "recall":
        return _divide(true_positive, true_sum, measure, options, warn_size)
    return _divide(2 * true_positive, true_sum + pred_sum, measure, options, warn_size)


def _nanaverage(values: np.ndarray, weights: np.ndarray | None = None) -> float:
    """scikit-learn's average ignoring NaN (unweighted when the remaining weights sum to zero)."""
    if values.shape[0] == 0:
        return math.nan
    mask = np.isnan(values)
    if mask.all():
        return math.nan
    if weights is None:
        return float(np.nanmean(values))
    kept, kept_weights = values[~mask], weights[~mask]
    if np.sum(kept_weights) == 0:
        return float(np.average(kept))
    return float(np.average(kept, weights=kept_weights))


def _warn_pos_label(options: Any) -> None:
    if options.average != "binary" and options.pos_label not in (None, 1):
        warnings.warn(
            f"Note that pos_label (set to {options.pos_label!r}) is ignored when average != 'binary' "
            f"(got {options.average!r}). You may use labels=[pos_label] to specify a single positive class.",
            UserWarning,
            stacklevel=3,
        )


def _evaluate_output(score: Any) -> Any:
    """evaluate's shape of a set-wise score: an array for several labels, otherwise a float."""
    if isinstance(score, np.ndarray):
        return score if score.size > 1 else float(score.reshape(-1)[0])
    return float(score)


def _per_label(confusion: Confusion, selected: Sequence[Label]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    index = confusion.index
    positions = [index.get(label, -1) for label in selected]

    def take(values: np.ndarray) -> np.ndarray:
        return np.array([values[p] if p >= 0 else 0.0 for p in positions], dtype=np.float64)

    return take(confusion.true_positive), take(confusion.true_sum), take(confusion.pred_sum)


def _check_label_kind(metric: str, labels: tuple[Label, ...] | None, present: Sequence[Label]) -> None:
    if labels is None or not present:
        return
    data_strings = isinstance(present[0], str)
    if isinstance(labels[0], str) != data_strings:
        kinds = {True: "strings", False: "integers"}
        raise ValueError(
            f"{metric}: `labels` are {kinds[not data_strings]} but the data's labels are {kinds[data_strings]}; "
            f"pass labels of the data's kind"
        )


def _multiclass_setwise(measure: str, confusion: Confusion, options: Any) -> Any:
    metric, average = options.metric_name, options.average
    if average == "samples":
        raise ValueError(
            f"{metric}: average='samples' needs multi-label input (rows of 0/1 indicators, the 'multilabel' "
            f"configuration); with one label per example use 'micro', 'macro', 'weighted' or None"
        )
    if average == "binary":
        if len(confusion.labels) > 2:
            shown = ", ".join(repr(label) for label in confusion.labels[:10])
            raise ValueError(
                f"{metric}: average='binary' needs at most two classes, but the references and predictions hold "
                f"{len(confusion.labels)} ({shown}{', ...' if len(confusion.labels) > 10 else ''}); choose `average` "
                f"among None, 'micro', 'macro', 'weighted'"
            )
        if options.pos_label not in confusion.labels and len(confusion.labels) >= 2:
            raise ValueError(
                f"{metric}: pos_label={options.pos_label!r} is not a valid label; it should be one of "
                f"{confusion.labels}"
            )
        selected: Sequence[Label] = [options.pos_label]
    else:
        _warn_pos_label(options)
        _check_label_kind(metric, options.labels, confusion.labels)
        selected = confusion.labels if options.labels is None else options.labels
    true_positive, true_sum, pred_sum = _per_label(confusion, selected)
    return _finish_setwise(measure, true_positive, true_sum, pred_sum, options)


def _finish_setwise(measure: str, true_positive: np.ndarray, true_sum: np.ndarray, pred_sum: np.ndarray,
                    options: Any) -> Any:
    average = options.average
    if average == "micro":
        true_positive = np.array([_exact(true_positive)])
        true_sum = np.array([_exact(true_sum)])
        pred_sum = np.array([_exact(pred_sum)])
    scores = _measure(measure, true_positive, true_sum, pred_sum, options, len(true_positive))
    if average is None:
        return _evaluate_output(scores)
    weights = true_sum if average == "weighted" else None
    return _nanaverage(scores, weights)


def _multilabel_setwise(measure: str, totals: Mapping[str, Any], options: Any) -> Any:
    metric, average = options.metric_name, options.average
    columns = _label_columns(metric, totals)
    if columns.width == 1:  # scikit-learn reads a single indicator column as one label per example
        cells, residuals = columns.column_cells(0)
        return _multiclass_setwise(measure, _confusion_of_cells(metric, cells, residuals), options)
    if average == "binary":
        raise ValueError(
            f"{metric}: average='binary' does not apply to multi-label input; choose `average` among None, "
            f"'micro', 'macro', 'weighted', 'samples'"
        )
    _warn_pos_label(options)
    selected = _selected_columns(metric, options.labels, columns.width)
    if average == "samples":
        return _samples_average(measure, totals, options)
    true_positive = np.array([_exact(columns.parts(j, 1, 1)) for j in selected])
    true_sum = np.array([_exact(columns.parts(j, 1, 1) + columns.parts(j, 1, 0)) for j in selected])
    pred_sum = np.array([_exact(columns.parts(j, 1, 1) + columns.parts(j, 0, 1)) for j in selected])
    return _finish_setwise(measure, true_positive, true_sum, pred_sum, options)


def _samples_average(measure: str, totals: Mapping[str, Any], options: Any) -> float:
    profiles: Mapping[tuple[int, int, int], float] = totals[PROFILES]
    residuals = totals.get(PROFILES + RESIDUAL_SUFFIX) or {}
    counts: Mapping[tuple[int, int, int], int] = totals[PROFILE_COUNTS]
    keys = sorted(profiles)
    true_positive = np.array([key[0] for key in keys], dtype=np.float64)
    pred_sum = np.array([key[1] for key in keys], dtype=np.float64)
    true_sum = np.array([key[2] for key in keys], dtype=np.float64)
    examples = int(sum(counts.values()))
    scores = _measure(measure, true_positive, true_sum, pred_sum, options, examples)
    defined = ~np.isnan(scores)
    if not defined.any():
        return math.nan
    kept = [key for key, keep in zip(keys, defined.tolist(), strict=True) if keep]
    kept_scores = scores[defined].tolist()
    weight = _exact(part for key in kept for part in (profiles[key], *residuals.get(key, ())))
    if weight == 0:
        weights = [float(counts[key]) for key in kept]
        return math.fsum(score * w for score, w in zip(kept_scores, weights, strict=True)) / math.fsum(weights)
    return math.fsum(score * profiles[key] for score, key in zip(kept_scores, kept, strict=True)) / weight


def _check_weights(metric: str, totals: Mapping[str, Any]) -> None:
    if totals[NONZERO] == 0:
        raise ValueError(f"{metric}: every `sample_weight` is zero; at least one example needs a non-zero weight")


def _setwise_from_totals(measure: str, totals: Mapping[str, Any], options: Any) -> Any:
    _check_weights(options.metric_name, totals)
    if options.multilabel:
        return _multilabel_setwise(measure, totals, options)
    return _multiclass_setwise(measure, _multiclass_confusion(options.metric_name, totals), options)


def precision_from_totals(totals: Mapping[str, Any], options: PrecisionOptions) -> dict[str, Any]:
    """``{"precision": ...}``: a float, or per label (average=None) an array (a float for one label)."""
    return {"precision": _setwise_from_totals("precision", totals, options)}


def recall_from_totals(totals: Mapping[str, Any], options: RecallOptions) -> dict[str, Any]:
    """``{"recall": ...}``: a float, or per label (average=None) an array (a float for one label)."""
    return {"recall": _setwise_from_totals("recall", totals, options)}


def f1_from_totals(totals: Mapping[str, Any], options: F1Options) -> dict[str, Any]:
    """``{"f1": ...}``: a float, or per label (average=None) an array (a float for one label)."""
    return {"f1": _setwise_from_totals("f1", totals, options)}


# -- accuracy and the Matthews correlation coefficient -------------------------------------------------------


def accuracy_from_totals(totals: Mapping[str, Any], options: AccuracyOptions) -> dict[str, float]:
    """``{"accuracy": ...}``: the (weighted) fraction of exact matches, or their (weighted) number."""
    metric = options.metric_name
    _check_weights(metric, totals)
    if options.multilabel:
        correct = _exact([totals[EXACT], *totals.get(EXACT + RESIDUAL_SUFFIX, ())])
        total = _exact([totals[WEIGHT], *totals.get(WEIGHT + RESIDUAL_SUFFIX, ())])
    else:
        confusion = _multiclass_confusion(metric, totals)
        correct, total = confusion.correct, confusion.total
    if not options.normalize:
        return {"accuracy": float(correct)}
    if total == 0:
        raise ValueError(f"{metric}: the sample weights sum to zero; the weighted accuracy is undefined")
    return {"accuracy": float(correct / total)}


def _scaled_sums(groups: Sequence[Sequence[float]]) -> list[int]:
    """The exact sum of each group of floats as an integer, all in one unit (a power of two)."""
    ratios = [[float(part).as_integer_ratio() for part in parts] for parts in groups]
    unit = max((denominator for parts in ratios for _, denominator in parts), default=1)
    return [sum(numerator * (unit // denominator) for numerator, denominator in parts) for parts in ratios]


def _mcc(confusion: Confusion) -> float:
    """The Matthews correlation coefficient of a confusion (0.0 when undefined, as scikit-learn).

    The covariances of scikit-learn's ``matthews_corrcoef`` are computed exactly
    (integers; weights as integer multiples of a common power of two). When scikit-learn's own float
    arithmetic is exact (whole counts, n squared below 2**53) the final
    operations are its own, so the result is bit-identical; otherwise the
    result is the exact coefficient correctly rounded to about one unit in the
    last place, where scikit-learn's cancellation in ``n**2 - p.p`` can lose
    digits (weights of very different sizes).
    """
    if confusion.parts is None:
        t_sum = confusion.true_sum.astype(np.int64).tolist()
        p_sum = confusion.pred_sum.astype(np.int64).tolist()
        n_correct = int(confusion.correct)
    else:
        diagonal, true_parts, pred_parts = confusion.parts
        sums = _scaled_sums([*true_parts, *pred_parts, [part for parts in diagonal for part in parts]])
        size = len(true_parts)
        t_sum, p_sum, n_correct = sums[:size], sums[size : 2 * size], sums[-1]
    n_samples = sum(p_sum)
    cov_ytyp = n_correct * n_samples - sum(t * p for t, p in zip(t_sum, p_sum, strict=True))
    cov_ypyp = n_samples**2 - sum(p * p for p in p_sum)
    cov_ytyt = n_samples**2 - sum(t * t for t in t_sum)
    cov_ypyp_ytyt = cov_ypyp * cov_ytyt
    if cov_ypyp_ytyt == 0:
        return 0.0
    if confusion.parts is None and n_samples**2 < _EXACT_INTEGERS:
        return float(np.float64(cov_ytyp) / np.sqrt(np.float64(cov_ypyp) * np.float64(cov_ytyt)))
    squared = Fraction(cov_ytyp) ** 2 / Fraction(cov_ypyp_ytyt)
    return math.copysign(math.sqrt(float(squared)), cov_ytyp)


def matthews_correlation_from_totals(totals: Mapping[str, Any], options: MatthewsCorrelationOptions) -> dict[str, Any]:
    """``{"matthews_correlation": ...}``: a float; multi-label: a list per label column, or its mean ("macro")."""
    metric = options.metric_name
    _check_weights(metric, totals)
    if not options.multilabel:
        return {"matthews_correlation": _mcc(_multiclass_confusion(metric, totals))}
    columns = _label_columns(metric, totals)
    by_column = columns.cells_by_column()
    per_label = [_mcc(_confusion_of_cells(metric, *by_column.get(column, ({}, {})))) for column in range(columns.width)]
    if options.average == "macro":
        return {"matthews_correlation": np.mean(per_label)}
    return {"matthews_correlation": per_label}


FROM_TOTALS = {
    "accuracy": accuracy_from_totals,
    "precision": precision_from_totals,
    "recall": recall_from_totals,
    "f1": f1_from_totals,
    "matthews_correlation": matthews_correlation_from_totals,
}


def classification_results(totals: Mapping[str, Any], options: Sequence[Any]) -> dict[str, Any]:
    """The results of several metrics from the same totals (one count serves them all), merged in one dict."""
    results: dict[str, Any] = {}
    shared = _SharedTotals(totals)
    for metric_options in options:
        if metric_options.stats_signature() != totals[SIGNATURE_FIELD]:
            raise ValueError(
                f"{metric_options.metric_name}: the statistics were computed with {totals[SIGNATURE_FIELD]!r} but "
                f"these options need {metric_options.stats_signature()!r}"
            )
        results.update(FROM_TOTALS[metric_options.metric_name](shared, metric_options))
    return results


# -- transformers.Trainer ------------------------------------------------------------------------------------

ProblemType = Literal["single_label_classification", "multi_label_classification", "regression"]
PROBLEM_TYPES = ("single_label_classification", "multi_label_classification", "regression")


def _first_output(values: Any) -> Any:
    """A model's first output (Trainer passes a tuple when the model returns several), as a numpy array."""
    if isinstance(values, tuple):
        values = values[0]
    if hasattr(values, "detach") and hasattr(values, "cpu"):
        values = values.detach().cpu()
        if str(values.dtype) == "torch.bfloat16":
            values = values.float()
        values = values.numpy()
    return np.asarray(values)


def preprocess_classification_logits(logits: Any, labels: Any) -> Any:
    """The most likely class per example, computed where the logits are (``argmax`` on the device), for
    ``Trainer(preprocess_logits_for_metrics=...)``: the Trainer then gathers one id per example, not logits."""
    if isinstance(logits, tuple):
        logits = logits[0]
    if hasattr(logits, "detach"):
        return logits.argmax(dim=-1)
    return np.asarray(logits).argmax(axis=-1)


def classification_inputs(
    eval_prediction: Any, *, problem_type: ProblemType = "single_label_classification", threshold: float = 0.0
) -> tuple[list[Any], list[Any]]:
    """(predictions, references) as lists from a sequence-classification ``EvalPrediction``.

    Single-label: logits (examples x classes) become their argmax; class ids
    (from :func:`preprocess_classification_logits`) are taken as they are.
    Multi-label: logits become 0/1 rows (logit > ``threshold``; 0.0 is a
    probability of one half); 0/1 rows are taken as they are. Regression: one
    number per example. Accepts numpy arrays and torch tensors, and a
    ``(predictions, label_ids)`` pair in place of an ``EvalPrediction``.
    """
    check_choice("classification", "problem_type", problem_type, PROBLEM_TYPES)
    if hasattr(eval_prediction, "label_ids"):
        predictions, labels = eval_prediction.predictions, eval_prediction.label_ids
    else:
        predictions, labels = eval_prediction
    predictions, labels = _first_output(predictions), _first_output(labels)
    if len(predictions) != len(labels):
        raise ValueError(
            f"classification: got {len(predictions)} predictions but {len(labels)} labels; pass one label per example"
        )
    if problem_type == "regression":
        values = predictions.reshape(len(predictions), -1)
        if values.shape[1] != 1:
            raise ValueError(
                f"classification: regression predictions need one number per example, got shape {predictions.shape}"
            )
        return values[:, 0].astype(np.float64).tolist(), labels.reshape(-1).astype(np.float64).tolist()
    if problem_type == "multi_label_classification":
        if predictions.ndim != 2 or labels.ndim != 2:
            raise ValueError(
                f"classification: multi-label predictions and labels are (examples x labels) arrays, got shapes "
                f"{predictions.shape} and {labels.shape}"
            )
        if predictions.dtype.kind == "f":
            predictions = predictions > threshold
        return predictions.astype(np.int64).tolist(), np.rint(labels).astype(np.int64).tolist()
    if predictions.ndim == 2 and predictions.dtype.kind == "f":
        predictions = predictions.argmax(axis=-1)
    elif predictions.ndim == 2 and predictions.shape[1] == 1:
        predictions = predictions[:, 0]
    if predictions.ndim != 1 or predictions.dtype.kind not in "iub":
        raise ValueError(
            f"classification: single-label predictions are logits (examples x classes) or one class id per "
            f"example, got shape {predictions.shape} of {predictions.dtype}"
        )
    if labels.ndim != 1:
        raise ValueError(f"classification: single-label labels are one class id per example, got shape {labels.shape}")
    return predictions.astype(np.int64).tolist(), labels.astype(np.int64).tolist()
