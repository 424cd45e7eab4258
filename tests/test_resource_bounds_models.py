"""Issue 32, the model metrics: perplexity's tokens through the model per text (``max_forward_tokens``) and MAUVE's
k-means work per iteration (``max_kmeans_work``) are counted from the inputs' sizes before any model runs or any
feature is computed, refused above their bound with the module's clear error, and change nothing at or below it.
The other model metrics (bertscore, comet, bleurt, semantic_similarity, usr) truncate every text to their model's
positions, so one text's cost is bounded by its tokenization (linear) and by ``max_text_chars``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from conftest import load_metric
from test_lm_core import tiny_llama, train_tokenizer

from metrics._core import core_lm_score
from metrics._core.core_lm_models import load_lm
from metrics._core.core_lm_perplexity import PerplexityOptions, perplexity_rows
from metrics._core.core_lm_windows import forward_tokens, windows_of
from metrics._core.core_mauve import kmeans_work
from metrics._core.core_mauve_kmeans import MAX_POINTS_PER_CENTROID


@pytest.fixture(scope="module")
def tokenizer():
    return train_tokenizer()


@pytest.fixture(scope="module")
def llama(tokenizer):
    return tiny_llama(len(tokenizer), positions=64)


def quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return function(*args, **kwargs)


# ----- perplexity -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("window", [None, 2, 5, 16])
@pytest.mark.parametrize("truncation", [False, True])
def test_forward_tokens_are_the_summed_window_lengths(window, truncation) -> None:
    for length in range(0, 60):
        for stride in range(1, (window or 3)):
            windows = windows_of(length, window, stride, truncation)
            assert forward_tokens(length, window, stride, truncation) == sum(item.length for item in windows)


def test_forward_tokens_by_hand() -> None:
    # 100 tokens in windows of 16 every 4: windows start at 0, 4, ..., 84 (22 windows of 16 tokens)
    assert forward_tokens(100, 16, 4, False) == 22 * 16
    assert forward_tokens(100, 16, 4, True) == 16
    assert forward_tokens(10, 16, 4, False) == 10
    assert forward_tokens(1, 16, 4, False) == 0


def test_perplexity_refuses_a_text_over_max_forward_tokens(llama, tokenizer, monkeypatch) -> None:
    metric = load_metric("perplexity")
    texts = ["a short text", " ".join(["the cat sat on the mat"] * 20)]
    length = len(tokenizer(texts[1], add_special_tokens=False)["input_ids"]) + 1  # the start token in front
    expected = (1 + math.ceil((length - 16) / 4)) * 16  # windows of 16 tokens every 4
    options = {"model_id": llama, "tokenizer": tokenizer, "max_length": 16, "stride": 4}

    def no_model(*args, **kwargs):
        raise AssertionError("the model ran before the refusal")

    with monkeypatch.context() as patched:
        patched.setattr(core_lm_score, "batch_nlls", no_model)
        with pytest.raises(ValueError) as refused:
            quiet(metric.compute, predictions=texts, max_forward_tokens=expected - 1, **options)
    message = str(refused.value)
    assert message.startswith("perplexity: predictions[1]")
    assert f"{expected:,}" in message and f"max_forward_tokens={expected - 1:,}" in message
    assert "stride" in message and "truncation" in message
    at_bound = quiet(metric.compute, predictions=texts, max_forward_tokens=expected, **options)
    unbounded = quiet(metric.compute, predictions=texts, **options)
    assert at_bound["perplexities"] == unbounded["perplexities"]
    truncated = quiet(metric.compute, predictions=texts, max_forward_tokens=16, truncation=True, **options)
    assert truncated["tokens"] == 15 + len(tokenizer(texts[0], add_special_tokens=False)["input_ids"])


def test_perplexity_checks_every_chunk_before_scoring_any(llama, tokenizer, monkeypatch) -> None:
    lm = load_lm("perplexity", llama, tokenizer=tokenizer)
    texts = ["a b"] * 5 + [" ".join(["word"] * 200)]
    calls = []
    monkeypatch.setattr(core_lm_score, "DEFAULT_CHUNK_SIZE", 2)
    original = core_lm_score.batch_nlls
    monkeypatch.setattr(core_lm_score, "batch_nlls", lambda *args: calls.append(1) or original(*args))
    options = PerplexityOptions(model_id=llama, tokenizer=tokenizer, max_length=32, stride=16, max_forward_tokens=100)
    with pytest.raises(ValueError, match=r"perplexity: predictions\[5\].*max_forward_tokens=100"):
        quiet(perplexity_rows, texts, options, lm=lm)
    assert not calls  # texts 0-3 (earlier chunks) were not scored
    assert quiet(perplexity_rows, texts[:5], options, lm=lm)  # short texts: unchanged path, scored


# ----- mauve ------------------------------------------------------------------------------------------------


def test_kmeans_work_by_hand() -> None:
    assert kmeans_work(100, 5, 8) == 100 * 5 * 8
    # more points than 256 per bucket: k-means trains on a sample of 256 per bucket
    assert kmeans_work(10_000, 2, 3) == 2 * MAX_POINTS_PER_CENTROID * 2 * 3


def _features(n: int, width: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, width))


def test_mauve_refuses_kmeans_work_over_the_bound_before_featurizing() -> None:
    mauve = load_metric("mauve")
    p, q = _features(40, 8, 0), _features(60, 8, 1)
    work = 100 * 4 * 8  # 100 points, 'auto' buckets = round(40 / 10) = 4, 8 dimensions
    with pytest.raises(ValueError) as refused:
        mauve.compute(p_features=p, q_features=q, max_kmeans_work=work - 1)
    message = str(refused.value)
    assert message.startswith("mauve: k-means of the 40 + 60 texts") and f"{work:,}" in message
    assert f"max_kmeans_work={work - 1:,}" in message and "num_buckets" in message
    at_bound = mauve.compute(p_features=p, q_features=q, max_kmeans_work=work)
    unbounded = mauve.compute(p_features=p, q_features=q)
    assert at_bound["mauve"] == unbounded["mauve"] and at_bound["p_hist"] == unbounded["p_hist"]
    # Q from texts: refused from P's width before Q's texts are featurized (no model is loaded for it)
    with pytest.raises(ValueError, match="max_kmeans_work=10"):
        mauve.compute(predictions=["a"] * 40, references=["b"] * 40, p_features=p, max_kmeans_work=10)
    with pytest.raises(ValueError, match="max_kmeans_work=10"):
        mauve.compute(p_features=p, q_tokens=[[1, 2]] * 60, max_kmeans_work=10)
