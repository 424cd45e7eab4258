"""Perplexity inside a real ``transformers.Trainer.evaluate`` with a tiny causal LM built offline from a config:
logits reduced to per-token NLL on the device (labels -100 honoured, the causal shift), perplexity equal to
exp(eval_loss) where the two average the same way, and what the Trainer keeps per batch independent of the
vocabulary size."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import torch
import transformers
import datasets

from test_lm_core import tiny_llama, train_tokenizer  # noqa: E402

from metrics._core.core_lm_trainer import (  # noqa: E402
    PerplexityFromNll,
    nll_totals,
    preprocess_logits_for_metrics,
    token_nll,
)

SENTENCES = [
    "The cat sat on the mat near the window.",
    "A storm knocked out power to thousands of homes.",
    "The committee will publish its findings next month, after a long review of the evidence.",
    "He bought three apples.",
    "Scientists found water ice in a crater near the south pole of the moon.",
    "The train was delayed.",
    "She reads a book every week.",
    "The museum opens at nine in the morning and closes at six.",
]


@pytest.fixture(scope="module")
def tokenizer():
    return train_tokenizer(pad=True)


def labelled_dataset(tokenizer, *, fixed_length: int | None = None):
    def encode(batch):
        if fixed_length is None:
            return tokenizer(batch["text"], add_special_tokens=False)
        encoded = tokenizer([text * 3 for text in batch["text"]], add_special_tokens=False, truncation=True,
                            max_length=fixed_length)
        assert all(len(ids) == fixed_length for ids in encoded["input_ids"])
        return encoded

    return datasets.Dataset.from_dict({"text": SENTENCES}).map(encode, batched=True, remove_columns=["text"])


def evaluate_with(model, tokenizer, dataset, tmp_path: Path, batch_size: int, record: list | None = None):
    def preprocess(logits, labels):
        out = preprocess_logits_for_metrics(logits, labels)
        if record is not None:
            record.append((tuple(logits.shape), logits.element_size() * logits.nelement(),
                           out.element_size() * out.nelement()))
        return out

    arguments = transformers.TrainingArguments(output_dir=str(tmp_path), per_device_eval_batch_size=batch_size,
                                               report_to=[], use_cpu=True, disable_tqdm=True)
    trainer = transformers.Trainer(
        model=model, args=arguments, eval_dataset=dataset,
        data_collator=transformers.DataCollatorForLanguageModeling(tokenizer, mlm=False),
        compute_metrics=PerplexityFromNll(), preprocess_logits_for_metrics=preprocess,
    )
    return trainer.evaluate()


def direct_totals(model, dataset) -> tuple[float, int, list[float]]:
    """Token-weighted NLL computed plainly: one unpadded forward pass per example, every next token scored."""
    total, count, per_example = 0.0, 0, []
    with torch.no_grad():
        for example in dataset:
            ids = torch.tensor([example["input_ids"]])
            logits = model(ids).logits[0].float()
            nll = torch.nn.functional.cross_entropy(logits[:-1], ids[0, 1:], reduction="sum").item()
            total += nll
            count += ids.shape[1] - 1
            per_example.append(math.exp(nll / (ids.shape[1] - 1)))
    return total, count, per_example


def test_token_nll_honours_labels_and_the_shift() -> None:
    torch.manual_seed(0)
    logits = torch.randn(2, 4, 5)
    labels = torch.tensor([[3, 1, -100, 4], [0, 2, 2, -100]])
    out = token_nll(logits, labels)
    log_probs = torch.log_softmax(logits, dim=-1)
    expected = [[-100.0, -log_probs[0, 0, 1].item(), -100.0, -log_probs[0, 2, 4].item()],
                [-100.0, -log_probs[1, 0, 2].item(), -log_probs[1, 1, 2].item(), -100.0]]
    assert out.flatten().tolist() == pytest.approx([value for row in expected for value in row], abs=1e-6)
    totals = nll_totals(out.numpy())
    assert totals["tokens"] == 4
    assert totals["nll"] == pytest.approx(sum(value for row in expected for value in row if value >= 0), abs=1e-5)
    with pytest.raises(ValueError, match="same batch and length"):
        token_nll(logits, labels[:, :3])
    with pytest.raises(ValueError, match="negative per-token NLLs"):
        nll_totals(np.array([[-3.0, 1.0]]))


def test_equal_to_exp_eval_loss_when_every_batch_has_as_many_tokens(tokenizer, tmp_path: Path) -> None:
    model = tiny_llama(len(tokenizer))
    dataset = labelled_dataset(tokenizer, fixed_length=12)
    metrics = evaluate_with(model, tokenizer, dataset, tmp_path, batch_size=4)
    assert metrics["eval_perplexity"] == pytest.approx(math.exp(metrics["eval_loss"]), rel=1e-5)
    total, count, per_example = direct_totals(model, dataset)
    assert metrics["eval_tokens"] == count == 8 * 11
    assert metrics["eval_cross_entropy"] == pytest.approx(total / count, abs=1e-5)
    assert metrics["eval_mean_perplexity"] == pytest.approx(sum(per_example) / len(per_example), rel=1e-5)


def test_token_weighted_where_eval_loss_averages_batches(tokenizer, tmp_path: Path) -> None:
    """Texts of different lengths in batches of 3 (3 + 3 + 2): eval_loss averages per-batch mean losses, our
    perplexity is exp(total NLL / total tokens), equal to the plain computation."""
    model = tiny_llama(len(tokenizer))
    dataset = labelled_dataset(tokenizer)
    metrics = evaluate_with(model, tokenizer, dataset, tmp_path, batch_size=3)
    total, count, _ = direct_totals(model, dataset)
    assert metrics["eval_perplexity"] == pytest.approx(math.exp(total / count), rel=1e-5)
    assert abs(metrics["eval_perplexity"] - math.exp(metrics["eval_loss"])) > 1e-4 * metrics["eval_perplexity"]
    # eval_loss, by hand: each batch's token mean, weighted by the number of sequences in the batch
    batch_means, weights = [], []
    for start in range(0, len(dataset), 3):
        part = dataset.select(range(start, min(start + 3, len(dataset))))
        part_total, part_count, _ = direct_totals(model, part)
        batch_means.append(part_total / part_count)
        weights.append(len(part))
    by_hand = sum(mean * weight for mean, weight in zip(batch_means, weights, strict=True)) / sum(weights)
    assert metrics["eval_loss"] == pytest.approx(by_hand, abs=1e-5)


def test_what_the_trainer_keeps_does_not_grow_with_the_vocabulary(tokenizer, tmp_path: Path) -> None:
    dataset = labelled_dataset(tokenizer, fixed_length=12)
    kept = {}
    for vocabulary in (len(tokenizer), 8 * len(tokenizer)):
        record: list = []
        evaluate_with(tiny_llama(vocabulary), tokenizer, dataset, tmp_path, batch_size=4, record=record)
        kept[vocabulary] = record
    small, large = kept.values()
    assert [entry[2] for entry in small] == [entry[2] for entry in large] == [4 * 12 * 4, 4 * 12 * 4]
    assert [entry[1] for entry in large] == [8 * entry[1] for entry in small]  # logits the Trainer no longer keeps
