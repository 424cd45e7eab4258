"""The seqeval module's Trainer hook in a real ``transformers.Trainer.evaluate`` with a tiny token-classification model
built offline from a config: the reported scores equal seqeval 1.2.2 on the gold and predicted tag sequences
computed directly from the model (argmax, positions labelled -100 dropped, ids mapped through id2label)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import torch
import transformers
import datasets
from seqeval import metrics as seqeval_metrics

from conftest import load_metric  # noqa: E402
from labelled_argmax import labelled_argmax  # noqa: E402

ID2LABEL = {0: "O", 1: "B-PER", 2: "I-PER", 3: "B-LOC", 4: "I-LOC", 5: "B-MISC"}


def _examples(count: int, seed: int) -> list[dict]:
    """Token ids of varied lengths; labels -100 at [CLS]/[SEP] and at some sub-word continuations."""
    rng = np.random.default_rng(seed)
    examples = []
    for _ in range(count):
        length = int(rng.integers(3, 20))
        labels = rng.integers(0, len(ID2LABEL), length)
        labels[0] = labels[-1] = -100
        labels[1:-1][rng.random(length - 2) < 0.2] = -100
        examples.append({"input_ids": rng.integers(5, 60, length).tolist(), "labels": labels.tolist()})
    return examples


def _collate(features: list[dict]) -> dict:
    """Each batch padded to its own longest example (input 0, label -100), as token-classification collators do."""
    width = max(len(feature["input_ids"]) for feature in features)
    ids = torch.zeros((len(features), width), dtype=torch.long)
    mask = torch.zeros((len(features), width), dtype=torch.long)
    labels = torch.full((len(features), width), -100, dtype=torch.long)
    for row, feature in enumerate(features):
        size = len(feature["input_ids"])
        ids[row, :size] = torch.tensor(feature["input_ids"])
        mask[row, :size] = 1
        labels[row, :size] = torch.tensor(feature["labels"])
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(3)
    config = transformers.BertConfig(
        vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=32, num_labels=len(ID2LABEL), id2label=ID2LABEL,
        label2id={name: index for index, name in ID2LABEL.items()}, initializer_range=0.5,
    )
    return transformers.BertForTokenClassification(config)


def _direct_tags(model, examples) -> tuple[list[list[str]], list[list[str]]]:
    pairs = labelled_argmax(model, examples)
    return ([[ID2LABEL[int(i)] for i in predicted] for predicted, _ in pairs],
            [[ID2LABEL[int(i)] for i in labels] for _, labels in pairs])


def test_trainer_evaluate_equals_seqeval_on_tags(model, tmp_path: Path) -> None:
    examples = _examples(23, seed=1)
    seqeval = load_metric("seqeval")
    arguments = transformers.TrainingArguments(
        output_dir=str(tmp_path), per_device_eval_batch_size=4, report_to=[], use_cpu=True, disable_tqdm=True,
    )
    trainer = transformers.Trainer(
        model=model,
        args=arguments,
        eval_dataset=datasets.Dataset.from_list(examples),
        data_collator=_collate,
        compute_metrics=seqeval.for_trainer(model.config.id2label, options={"seqeval": {"zero_division": 0}}),
        preprocess_logits_for_metrics=seqeval.preprocess_logits_for_metrics,
    )
    reported = trainer.evaluate()
    predictions, references = _direct_tags(model, examples)
    assert len({tag for sentence in predictions for tag in sentence}) > 2  # the model predicts several tags
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = seqeval_metrics.classification_report(references, predictions, output_dict=True, zero_division=0)
    overall = report["micro avg"]
    assert reported["eval_seqeval_overall_precision"] == pytest.approx(overall["precision"], abs=1e-12)
    assert reported["eval_seqeval_overall_recall"] == pytest.approx(overall["recall"], abs=1e-12)
    assert reported["eval_seqeval_overall_f1"] == pytest.approx(overall["f1-score"], abs=1e-12)
    accuracy = seqeval_metrics.accuracy_score(references, predictions)
    assert reported["eval_seqeval_overall_accuracy"] == pytest.approx(accuracy, abs=1e-12)
    assert reported["eval_token_accuracy"] == pytest.approx(accuracy, abs=1e-12)
    for name in ("PER", "LOC", "MISC"):
        if name in report:
            assert reported[f"eval_seqeval_{name}_f1"] == pytest.approx(report[name]["f1-score"], abs=1e-12)
            assert reported[f"eval_seqeval_{name}_number"] == report[name]["support"]


def test_hook_reads_logits_and_rejects_unknown_ids() -> None:
    seqeval = load_metric("seqeval")
    compute_metrics = seqeval.for_trainer(["O", "B-PER", "I-PER"])
    labels = np.array([[-100, 1, 2, 0, -100], [-100, 0, 1, -100, -100]])
    logits = np.zeros((2, 5, 3))
    logits[0, [1, 2, 3], [1, 2, 0]] = 1.0
    logits[1, [1, 2], [1, 1]] = 1.0
    result = compute_metrics((logits, labels))
    # gold: [B-PER I-PER O], [O B-PER]; predicted: [B-PER I-PER O], [B-PER B-PER]
    expected = seqeval.compute(predictions=[["B-PER", "I-PER", "O"], ["B-PER", "B-PER"]],
                               references=[["B-PER", "I-PER", "O"], ["O", "B-PER"]])
    assert result["seqeval_overall_f1"] == expected["overall_f1"] == pytest.approx(2 * (2 / 3) * 1 / (2 / 3 + 1))
    assert result["token_accuracy"] == 4 / 5
    with pytest.raises(ValueError, match="id2label"):
        compute_metrics((np.full((1, 2), 7), np.array([[0, 1]])))
    with pytest.raises(ValueError, match="shape"):
        compute_metrics((np.zeros((1, 3)), np.zeros((1, 2), dtype=int)))
