"""Token classification (NER, POS tagging) inside ``transformers.Trainer``: from label ids to tag sequences.

:class:`TrainerTokenMetrics` is the ``compute_metrics`` the hand-written
version of which every token-classification script carries: predicted label
ids (the argmax over the label logits, taken on the device by the metric's
``preprocess_logits_for_metrics``; logits are accepted too), positions whose
label is -100 dropped (special tokens, sub-word continuations and the
Trainer's padding), ids mapped through ``id2label``, then every metric scored
on the tag sequences (those whose input kind is class labels get the flat
label ids instead) and the token accuracy over labelled positions.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .core_trainer import IGNORE_INDEX, checked_metrics

_LABEL_IDS_KIND = "labels"


def label_names(labels: Any) -> dict[int, str]:
    """``id2label`` from a mapping of ids to names, a list of names, a model config or a model."""
    source = labels
    if hasattr(labels, "config") and hasattr(labels.config, "id2label"):
        labels = labels.config.id2label
    elif hasattr(labels, "id2label"):
        labels = labels.id2label
    if isinstance(labels, Mapping):
        names = {}
        for key, name in labels.items():
            if isinstance(key, str) and key.lstrip("-").isdigit():
                key = int(key)
            if isinstance(key, bool) or not isinstance(key, numbers.Integral) or not isinstance(name, str):
                raise TypeError(f"token classification metrics: id2label must map integer ids to label names, got "
                                f"{key!r}: {name!r}")
            names[int(key)] = name
    elif isinstance(labels, Sequence) and not isinstance(labels, str):
        if not all(isinstance(name, str) for name in labels):
            raise TypeError("token classification metrics: the label names must be strings")
        names = dict(enumerate(labels))
    else:
        raise TypeError(f"token classification metrics: pass id2label (a dict of id -> label name, a list of names, "
                        f"the model's config or the model), got {type(source).__name__}")
    if not names:
        raise ValueError("token classification metrics: id2label is empty")
    return names


def _as_array(values: Any) -> np.ndarray:
    if isinstance(values, tuple):
        values = values[0]
    if hasattr(values, "detach"):
        values = values.detach().cpu().numpy()
    return np.asarray(values)


class TrainerTokenMetrics:
    """A ``compute_metrics`` for token classification scoring tag sequences with several metrics.

    ``labels`` gives ``id2label``; ``metrics`` maps a key prefix to a loaded metric module and ``options`` the
    same prefix to its keyword arguments. The result holds every numeric output as ``<prefix>_<key>``
    (per-type dicts as ``<prefix>_<type>_<key>``) and ``token_accuracy`` (unless ``token_accuracy=False``).
    ``predictions_from`` is accepted for the Trainer hooks' common signature: label ids and logits are both read.
    """

    def __init__(self, labels: Any, metrics: Mapping[str, Any], *,
                 options: Mapping[str, Mapping[str, Any]] | None = None, predictions_from: str = "logits",
                 shift_labels: bool = False, token_accuracy: bool = True) -> None:
        self.metrics, self.options = checked_metrics("token classification metrics", metrics, options,
                                                     predictions_from)
        if shift_labels:
            raise ValueError("token classification metrics: labels are per position; `shift_labels` is for causal "
                             "language models")
        self.id2label = label_names(labels)
        self.token_accuracy = token_accuracy
        size = max(self.id2label) + 1
        self._names = np.array([self.id2label.get(index) for index in range(size)], dtype=object)
        self._known = np.array([index in self.id2label for index in range(size)])

    def label_ids(self, eval_prediction: Any) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """(predicted ids, gold ids) per example, at the labelled positions only."""
        predictions, labels = (
            (eval_prediction.predictions, eval_prediction.label_ids)
            if hasattr(eval_prediction, "label_ids") else eval_prediction
        )
        predicted, gold = _as_array(predictions), _as_array(labels)
        if predicted.ndim == gold.ndim + 1:
            predicted = predicted.argmax(axis=-1)
        if predicted.shape != gold.shape or gold.ndim != 2:
            raise ValueError(
                f"token classification metrics: predictions of shape {predicted.shape} do not align with labels of "
                f"shape {gold.shape}; pass the metric's preprocess_logits_for_metrics to the Trainer (label ids "
                f"[examples, length]) or the logits [examples, length, labels]"
            )
        labelled = gold != IGNORE_INDEX
        for name, ids in (("labels", gold[labelled]), ("predictions", predicted[labelled])):
            bad = (ids < 0) | (ids >= len(self._names))
            bad[~bad] = ~self._known[ids[~bad]]
            if bad.any():
                raise ValueError(f"token classification metrics: {name} hold the id {int(ids[bad][0])}, which "
                                 f"id2label does not name (ids {sorted(self.id2label)})")
        return ([row[mask] for row, mask in zip(predicted, labelled, strict=True)],
                [row[mask] for row, mask in zip(gold, labelled, strict=True)])

    def tag_sequences(self, eval_prediction: Any) -> tuple[list[list[str]], list[list[str]]]:
        """(predicted tags, gold tags) per example, at the labelled positions."""
        predicted, gold = self.label_ids(eval_prediction)
        return ([self._names[row].tolist() for row in predicted], [self._names[row].tolist() for row in gold])

    def __call__(self, eval_prediction: Any) -> dict[str, float]:
        predicted_ids, gold_ids = self.label_ids(eval_prediction)
        predictions = [self._names[row].tolist() for row in predicted_ids]
        references = [self._names[row].tolist() for row in gold_ids]
        results: dict[str, float] = {}
        flat: tuple[list[int], list[int]] | None = None
        for prefix, metric in self.metrics.items():
            kind = getattr(getattr(metric, "inputs", None), "name", None)
            if kind == _LABEL_IDS_KIND:
                if flat is None:
                    flat = (np.concatenate(predicted_ids).tolist(), np.concatenate(gold_ids).tolist())
                output = metric.compute(predictions=flat[0], references=flat[1], **self.options[prefix])
            else:
                output = metric.compute(predictions=predictions, references=references, **self.options[prefix])
            results.update(flatten_numbers(output, prefix))
        if self.token_accuracy:
            total = sum(len(row) for row in gold_ids)
            if not total:
                raise ValueError("token classification metrics: no labelled position in the evaluation set")
            correct = sum(int((p == g).sum()) for p, g in zip(predicted_ids, gold_ids, strict=True))
            results["token_accuracy"] = correct / total
        return results


def flatten_numbers(output: Mapping[str, Any], prefix: str) -> dict[str, float]:
    """Every number of a result as a float under ``prefix_key``, nested dicts as ``prefix_key_inner``."""
    results: dict[str, float] = {}
    for key, value in output.items():
        name = f"{prefix}_{key}"
        if isinstance(value, Mapping):
            results.update(flatten_numbers(value, name))
        elif isinstance(value, numbers.Real) and not isinstance(value, bool):
            results[name] = float(value)
    return results
