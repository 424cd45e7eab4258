"""The classification modules' Trainer hook in a real ``transformers.Trainer.evaluate`` with a tiny
sequence-classification model built offline from a config: the reported accuracy, F1 and MCC equal
scikit-learn's on the labels and the predictions computed directly from the model (argmax of the logits;
multi-label: logit > 0)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import torch
import transformers
import datasets
from sklearn import metrics as sklearn_metrics

import evaluate  # noqa: E402

from conftest import METRICS_DIR, load_metric  # noqa: E402

LABELS = 4


def _examples(count: int, seed: int, multilabel: bool = False) -> list[dict]:
    rng = np.random.default_rng(seed)
    examples = []
    for _ in range(count):
        length = int(rng.integers(3, 16))
        labels = (rng.random(LABELS) < 0.4).astype(np.float32).tolist() if multilabel else int(rng.integers(LABELS))
        examples.append({"input_ids": rng.integers(5, 60, length).tolist(), "labels": labels})
    return examples


def _collate(features: list[dict]) -> dict:
    """Each batch padded to its own longest example (input 0, attention mask 0)."""
    width = max(len(feature["input_ids"]) for feature in features)
    ids = torch.zeros((len(features), width), dtype=torch.long)
    mask = torch.zeros((len(features), width), dtype=torch.long)
    for row, feature in enumerate(features):
        size = len(feature["input_ids"])
        ids[row, :size] = torch.tensor(feature["input_ids"])
        mask[row, :size] = 1
    labels = [feature["labels"] for feature in features]
    dtype = torch.float32 if isinstance(labels[0], list) else torch.long
    return {"input_ids": ids, "attention_mask": mask, "labels": torch.tensor(labels, dtype=dtype)}


def _model(problem_type: str) -> object:
    torch.manual_seed(5)
    config = transformers.BertConfig(
        vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=32, num_labels=LABELS, problem_type=problem_type, initializer_range=0.5,
    )
    return transformers.BertForSequenceClassification(config)


def _direct_logits(model, examples) -> np.ndarray:
    model.eval()
    with torch.no_grad():
        return np.stack([model(input_ids=torch.tensor([example["input_ids"]])).logits[0].numpy()
                         for example in examples])


def _trainer(model, examples, compute_metrics, preprocess, tmp_path: Path) -> object:
    arguments = transformers.TrainingArguments(
        output_dir=str(tmp_path), per_device_eval_batch_size=4, report_to=[], use_cpu=True, disable_tqdm=True,
    )
    return transformers.Trainer(
        model=model, args=arguments, eval_dataset=datasets.Dataset.from_list(examples), data_collator=_collate,
        compute_metrics=compute_metrics, preprocess_logits_for_metrics=preprocess,
    )


def test_trainer_evaluate_single_label(tmp_path: Path) -> None:
    model, examples = _model("single_label_classification"), _examples(27, seed=1)
    accuracy, f1, mcc = (load_metric(name) for name in ("accuracy", "f1", "matthews_correlation"))
    compute_metrics = accuracy.for_trainer(model, f1, mcc, options={"f1": {"average": "macro"}})
    reported = _trainer(model, examples, compute_metrics, accuracy.preprocess_logits_for_metrics, tmp_path).evaluate()
    predictions = _direct_logits(model, examples).argmax(-1)
    references = np.array([example["labels"] for example in examples])
    assert len(set(predictions.tolist())) > 1  # the model predicts several classes
    assert reported["eval_accuracy"] == pytest.approx(sklearn_metrics.accuracy_score(references, predictions),
                                                      abs=1e-12)
    assert reported["eval_f1"] == pytest.approx(
        sklearn_metrics.f1_score(references, predictions, average="macro", zero_division=0), abs=1e-12)
    assert reported["eval_matthews_correlation"] == pytest.approx(
        sklearn_metrics.matthews_corrcoef(references, predictions), abs=1e-12)


def test_trainer_evaluate_multi_label(tmp_path: Path) -> None:
    model, examples = _model("multi_label_classification"), _examples(21, seed=2, multilabel=True)
    f1 = evaluate.load(str(METRICS_DIR / "f1"), "multilabel")
    accuracy = evaluate.load(str(METRICS_DIR / "accuracy"), "multilabel")
    compute_metrics = f1.for_trainer(model, accuracy, options={"f1": {"average": "micro"}})
    reported = _trainer(model, examples, compute_metrics, f1.preprocess_logits_for_metrics, tmp_path).evaluate()
    predictions = (_direct_logits(model, examples) > 0).astype(int)
    references = np.array([example["labels"] for example in examples]).astype(int)
    assert reported["eval_f1"] == pytest.approx(sklearn_metrics.f1_score(references, predictions, average="micro"),
                                                abs=1e-12)
    assert reported["eval_accuracy"] == pytest.approx(sklearn_metrics.accuracy_score(references, predictions),
                                                      abs=1e-12)


def test_hook_reads_logits_and_per_label_arrays() -> None:
    """Without the preprocessing hook the logits are read (argmax); per-label arrays become indexed keys."""
    precision = load_metric("precision")
    compute_metrics = precision.for_trainer("single_label_classification", options={"precision": {"average": None}})
    logits = np.array([[2.0, 0.1, 0.0], [0.0, 1.0, 0.5], [0.1, 0.0, 3.0], [1.0, 0.0, 0.0]])
    result = compute_metrics((logits, np.array([0, 1, 1, 2])))
    expected = sklearn_metrics.precision_score([0, 1, 1, 2], [0, 1, 2, 0], average=None, zero_division=0)
    assert result == {f"precision_{index}": pytest.approx(value) for index, value in enumerate(expected)}
    with pytest.raises(ValueError, match=r"unknown problem type 'ranking'"):
        precision.for_trainer("ranking")
    with pytest.raises(ValueError, match=r"options given for \['recall'\]"):
        precision.for_trainer(None, options={"recall": {}})
