"""Scoring text inside ``transformers.Trainer``: from an ``EvalPrediction`` to texts to one dict of metrics.

:class:`TrainerTextMetrics` is a ``compute_metrics`` callable. It decodes
generated ids (``Seq2SeqTrainer`` with ``predict_with_generate=True``) or
token ids taken from logits (use :func:`preprocess_logits_for_metrics` so the
Trainer keeps ids, not logits, in memory), replaces the ``-100`` padding that
Trainer and data collators insert (decoding it raises ``OverflowError``),
drops special tokens, scores the texts with several metric modules and merges
their numeric results under prefixed keys.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

IGNORE_INDEX = -100


def preprocess_logits_for_metrics(logits: Any, labels: Any) -> Any:
    """Most likely token per position, for ``Trainer(preprocess_logits_for_metrics=...)``."""
    if isinstance(logits, (tuple, list)):
        logits = logits[0]
    return logits.argmax(dim=-1)


def _as_id_array(ids: Any) -> Any:
    """Token ids as a 2-D numpy array; a tuple is taken at its first element, logits (3-D) at their argmax."""
    import numpy as np

    if isinstance(ids, tuple):
        ids = ids[0]
    if hasattr(ids, "detach"):
        ids = ids.detach().cpu().numpy()
    array = np.asarray(ids)
    return array.argmax(axis=-1) if array.ndim == 3 else array


def decode_ids(ids: Any, tokenizer: Any, *, keep: Any = None) -> list[str]:
    """Texts of a batch of token ids: negative ids (Trainer's -100 padding) and special tokens removed.

    ``keep`` (same shape, boolean) selects the positions to decode, e.g. those with a label.
    """
    import numpy as np

    array = _as_id_array(ids)
    if keep is None:
        keep = array >= 0
    rows = [row[mask & (row >= 0)] for row, mask in zip(array, np.asarray(keep), strict=True)]
    texts = tokenizer.batch_decode([row.tolist() for row in rows], skip_special_tokens=True)
    return [text.strip() for text in texts]


PredictionSource = Literal["generate", "logits"]


def checked_metrics(
    what: str, metrics: Mapping[str, Any], options: Mapping[str, Mapping[str, Any]] | None, predictions_from: str
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The metrics of a ``compute_metrics`` hook and each one's keyword arguments, once ``predictions_from`` is known
    and ``options`` names only given metrics (errors start with ``what``)."""
    if predictions_from not in ("generate", "logits"):
        raise ValueError(f"{what}: unknown `predictions_from` {predictions_from!r}; use 'generate' or 'logits'")
    options = dict(options or {})
    unknown = sorted(set(options) - set(metrics))
    if unknown:
        raise ValueError(f"{what}: options given for {unknown}, which are not among the metrics {sorted(metrics)}")
    return dict(metrics), {name: dict(options.get(name, {})) for name in metrics}


class TrainerTextMetrics:
    """A ``compute_metrics`` for ``Trainer``/``Seq2SeqTrainer`` that scores decoded predictions with several metrics.

    ``metrics`` maps a key prefix to a loaded metric module; ``options`` maps the
    same prefix to that metric's keyword arguments. With
    ``predictions_from="logits"`` predictions are aligned with labels and only
    positions with a label are decoded (``shift_labels=True`` for causal language
    models, whose logits at position t predict the token at t + 1).
    """

    def __init__(self, tokenizer: Any, metrics: Mapping[str, Any], *,
                 options: Mapping[str, Mapping[str, Any]] | None = None,
                 predictions_from: PredictionSource = "generate", shift_labels: bool = False) -> None:
        self.metrics, self.options = checked_metrics("trainer metrics", metrics, options, predictions_from)
        self.tokenizer = tokenizer
        self.predictions_from = predictions_from
        self.shift_labels = shift_labels

    def texts(self, eval_prediction: Any) -> tuple[list[str], list[str]]:
        """(decoded predictions, decoded references) of an ``EvalPrediction`` (or a (predictions, labels) pair)."""
        predictions, labels = (
            (eval_prediction.predictions, eval_prediction.label_ids)
            if hasattr(eval_prediction, "label_ids")
            else eval_prediction
        )
        prediction_ids, label_ids = _as_id_array(predictions), _as_id_array(labels)
        if self.predictions_from == "generate":
            return decode_ids(prediction_ids, self.tokenizer), decode_ids(label_ids, self.tokenizer)
        if self.shift_labels:
            prediction_ids, label_ids = prediction_ids[:, :-1], label_ids[:, 1:]
        if prediction_ids.shape != label_ids.shape:
            raise ValueError(
                f"trainer metrics: predictions from logits have shape {prediction_ids.shape} but labels "
                f"{label_ids.shape}; they must be aligned (pass preprocess_logits_for_metrics to the Trainer)"
            )
        labelled = label_ids != IGNORE_INDEX
        return (
            decode_ids(prediction_ids, self.tokenizer, keep=labelled),
            decode_ids(label_ids, self.tokenizer, keep=labelled),
        )

    def __call__(self, eval_prediction: Any) -> dict[str, float]:
        predictions, references = self.texts(eval_prediction)
        results: dict[str, float] = {}
        for prefix, metric in self.metrics.items():
            output = metric.compute(predictions=predictions, references=references, **self.options[prefix])
            results.update(numeric_results(output, prefix))
        return results


def numeric_results(output: Mapping[str, Any], prefix: str) -> dict[str, float]:
    """The numbers of a metric's output under ``prefix_key``: scalars as they are, lists of numbers as their
    mean (per-example scores), per-order lists as ``prefix_key_1..n``; strings and nested values dropped."""
    results: dict[str, float] = {}
    for key, value in output.items():
        name = f"{prefix}_{key}"
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, (int, float)):
            results[name] = float(value)
        elif isinstance(value, Sequence) and not isinstance(value, str) and value:
            if all(isinstance(item, (int, float)) and not isinstance(item, bool) for item in value):
                if key in ("precisions", "counts", "totals"):
                    results.update({f"{name}_{order}": float(item) for order, item in enumerate(value, start=1)})
                else:
                    results[name] = math.fsum(value) / len(value)
    return results
