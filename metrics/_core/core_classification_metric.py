"""The five classification metrics on the statistics-metric base, and their ``transformers.Trainer`` hook.

A metric script is ``class Accuracy(ClassificationMetric, evaluate.Metric)``
declaring :attr:`about`, ``inputs = LABELS`` and its options class; this mixin
supplies the rest: the keyed confusion statistics of ``core_classification``
(counted per batch with numpy, exact across shards and streamed batches),
``sample_weight`` sliced per batch, the ``"multilabel"`` configuration's
options variant, and :class:`TrainerClassificationMetrics` for
sequence-classification models in ``Trainer``.
"""

from __future__ import annotations

import array as array_module
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from .core_classification import (
    FROM_TOTALS,
    MULTILABEL_CONFIG,
    PROBLEM_TYPES,
    classification_batch_totals,
    classification_inputs,
    classification_rows,
    classification_schema,
    options_for_config,
    preprocess_classification_logits,
)
from .core_inputs import LABELS, Columns, InputKind
from .core_metric import Batch, StatsMetric
from .core_stats import StatsSchema
from .core_trainer import checked_metrics


def _integer_labels(values: Any) -> np.ndarray | None:
    """Integer labels (one per example, or rows of equal width) as an int64 array, found at numpy speed; None
    for anything else, which the shared check then examines value by value (and names the bad one)."""
    if isinstance(values, np.ndarray):
        good = values.dtype.kind in "iu" and values.ndim in (1, 2) and values.size > 0
        return values.astype(np.int64, copy=False) if good else None
    if not isinstance(values, (list, tuple)) or not values:
        return None
    kinds = set(map(type, values))
    try:
        if kinds == {int}:
            return np.frombuffer(array_module.array("q", values), dtype=np.int64)
        if all(issubclass(kind, (int, np.integer, list, tuple)) and kind not in (bool, np.bool_) for kind in kinds):
            array = np.array(values)
            good = array.dtype.kind in "iu" and array.ndim <= 2 and array.size > 0
            return array.astype(np.int64, copy=False) if good else None
    except (ValueError, TypeError, OverflowError):
        return None
    return None


def _check_class_labels(metric: str, given: Mapping[str, Any], allow_empty: bool) -> Columns:
    predictions = _integer_labels(given.get("predictions"))
    references = _integer_labels(given.get("references"))
    if predictions is None or references is None or predictions.shape != references.shape:
        return LABELS.check(metric, given, allow_empty=allow_empty)
    return {"predictions": predictions, "references": references}  # type: ignore[dict-item]


# The shared LABELS kind (same name, columns and evaluate features) with a numpy fast path for integer labels:
# valid input is checked in bulk; anything else goes through LABELS' own check, so errors are LABELS' errors.
CLASS_LABELS = InputKind(LABELS.name, LABELS.columns, LABELS.make_features, _check_class_labels)


def batch_weights(options: Any, batch: Batch) -> Any:
    """The ``sample_weight`` values of a batch's examples (None when no weights were given)."""
    weights = options.sample_weight
    return None if weights is None else weights[batch.start : batch.start + batch.size]


def preprocess_multilabel_logits(logits: Any, labels: Any) -> Any:
    """0/1 rows (logit > 0, a probability above one half), computed where the logits are, for
    ``Trainer(preprocess_logits_for_metrics=...)`` with a multi-label head."""
    if isinstance(logits, tuple):
        logits = logits[0]
    if hasattr(logits, "detach"):
        return (logits > 0).long()
    return (np.asarray(logits) > 0).astype(np.int64)


def _problem_type(source: Any) -> str:
    """A problem type: given as a string, or read from a model or its config (single-label when unset)."""
    if source is None:
        return PROBLEM_TYPES[0]
    if isinstance(source, str):
        if source not in PROBLEM_TYPES:
            raise ValueError(f"classification metrics: unknown problem type {source!r}; use one of {PROBLEM_TYPES}")
        return source
    config = getattr(source, "config", source)
    problem_type = getattr(config, "problem_type", None)
    if problem_type is None and getattr(config, "num_labels", 2) == 1:
        return "regression"
    return _problem_type(problem_type)


class TrainerClassificationMetrics:
    """A ``compute_metrics`` for sequence classification scoring class ids with several metric modules.

    ``problem`` is the model, its config, a problem type (``"single_label_classification"``,
    ``"multi_label_classification"``) or None (single-label). Logits become their argmax (multi-label: logit
    > ``threshold``); class ids from the metric's ``preprocess_logits_for_metrics`` are taken as they are.
    Results are ``<metric name>_<key>`` (per-label arrays as ``<name>_<key>_<index>``); ``options`` maps a
    metric name to its keyword arguments.
    """

    def __init__(self, problem: Any, metrics: Mapping[str, Any], *,
                 options: Mapping[str, Mapping[str, Any]] | None = None, predictions_from: str = "logits",
                 shift_labels: bool = False, threshold: float = 0.0) -> None:
        self.metrics, self.options = checked_metrics("classification metrics", metrics, options, predictions_from)
        if shift_labels:
            raise ValueError("classification metrics: one label per example; `shift_labels` is for language models")
        self.problem_type = _problem_type(problem)
        self.threshold = threshold

    def __call__(self, eval_prediction: Any) -> dict[str, float]:
        predictions, references = classification_inputs(
            eval_prediction, problem_type=self.problem_type, threshold=self.threshold  # type: ignore[arg-type]
        )
        results: dict[str, float] = {}
        for name, metric in self.metrics.items():
            output = metric.compute(predictions=predictions, references=references, **self.options[name])
            results.update(_numbers(output, name))
        return results


class ClassificationMetric(StatsMetric):
    """accuracy, precision, recall, F1 and MCC: the script declares ``about``, ``inputs`` and ``options_class``."""

    preprocess_logits_for_metrics = staticmethod(preprocess_classification_logits)
    trainer_metrics_class = TrainerClassificationMetrics

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        config_name = getattr(self, "config_name", None)
        variant = options_for_config(type(self).options_class, config_name)
        if variant is not type(self).options_class:
            self.options_class = variant  # type: ignore[misc]
        if config_name == MULTILABEL_CONFIG:
            self.preprocess_logits_for_metrics = preprocess_multilabel_logits  # type: ignore[method-assign]

    def schema(self, options: Any) -> StatsSchema:
        return classification_schema(self.name, options.multilabel)

    def example_rows(self, batch: Batch, options: Any) -> list[tuple[Any, ...]]:
        return classification_rows(batch["predictions"], batch["references"], options,
                                   sample_weight=batch_weights(options, batch))

    def batch_totals(self, batch: Batch, options: Any) -> dict[str, Any]:
        return classification_batch_totals(batch["predictions"], batch["references"], options,
                                           sample_weight=batch_weights(options, batch))

    def score(self, totals: Mapping[str, Any], options: Any) -> dict[str, Any]:
        return FROM_TOTALS[options.metric_name](totals, options)

    def check_corpus_size(self, size: int, options: Any) -> None:
        if options.sample_weight is not None and len(options.sample_weight) != size:
            raise ValueError(
                f"{self.name}: got {size} examples but {len(options.sample_weight)} values in `sample_weight`; "
                f"pass one weight per example"
            )


def _numbers(output: Mapping[str, Any], prefix: str) -> dict[str, float]:
    results: dict[str, float] = {}
    for key, value in output.items():
        name = f"{prefix}_{key}" if key != prefix else key
        if isinstance(value, (np.ndarray, list, tuple)):
            results.update({f"{name}_{index}": float(item) for index, item in enumerate(np.ravel(value))})
        elif isinstance(value, numbers.Real) and not isinstance(value, bool):
            results[name] = float(value)
    return results
