"""Perplexity's core on tiny randomly initialised causal LMs built offline from configs, with a byte-level BPE
tokenizer trained here on generated text: windows and padded lengths by hand, per-text NLL against a plain
unbatched unpadded forward pass, sliding windows against a plainly written reference loop, exact invariance
to batch size, order, padding side and out-of-memory halving, statistics that merge exactly, evaluate's
arithmetic reimplemented (agreement where it is right, its documented bugs pinned), bad input."""

from __future__ import annotations

import functools
import math
import random
import warnings
from pathlib import Path

import pytest

import torch
import transformers
import tokenizers

from generated_text import random_text  # noqa: E402
from perplexity_oracle import evaluate_perplexity  # noqa: E402

from metrics._core import core_lm_score  # noqa: E402
from metrics._core.core_lm_models import clear_lm_cache, load_lm, max_positions_of  # noqa: E402
from metrics._core.core_lm_perplexity import (  # noqa: E402
    PerplexityOptions,
    perplexity_from_totals,
    perplexity_per_text,
    perplexity_rows,
    perplexity_schema,
)
from metrics._core.core_lm_windows import bucket_length, window_batches, windows_of  # noqa: E402

# Largest difference in mean NLL per text (nats) between our windows (padded to their bucket length, batched)
# and a plain unpadded forward pass in fp32, measured here: 8.6e-7 (tiny Llama), 7.5e-7 (SmolLM2, 24 CNN/DM
# summaries). The padded length changes the length of attention's reductions, hence the summation order.
TOLERANCE = 1e-5


@functools.cache
def _trained_bpe(vocab_size: int) -> str:
    rng = random.Random(0)
    model = tokenizers.Tokenizer(tokenizers.models.BPE())
    model.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    model.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<bos>", "<eos>", "<pad>"],
                                             initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet())
    model.train_from_iterator([random_text(rng, 30) for _ in range(2000)], trainer)
    return model.to_str()


def train_tokenizer(*, bos: bool = True, eos: bool = True, pad: bool = False, vocab_size: int = 500):
    """A GPT-2 style byte-level BPE tokenizer trained on generated text (any unicode encodes); a new object
    each call (tests change them)."""
    named = {"bos_token": "<bos>" if bos else None, "eos_token": "<eos>" if eos else None,
             "pad_token": "<pad>" if pad else None}
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizers.Tokenizer.from_str(_trained_bpe(vocab_size)),
                                                **{key: value for key, value in named.items() if value})


def tiny_llama(vocab_size: int, *, positions: int = 64, seed: int = 0, hidden: int = 32):
    torch.manual_seed(seed)
    config = transformers.LlamaConfig(
        vocab_size=vocab_size, hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=positions, bos_token_id=0,
        eos_token_id=1, pad_token_id=None,
    )
    return transformers.LlamaForCausalLM(config).eval()


def tiny_gpt2(vocab_size: int, *, positions: int = 64, seed: int = 0):
    torch.manual_seed(seed)
    config = transformers.GPT2Config(vocab_size=vocab_size, n_positions=positions, n_embd=32, n_layer=2, n_head=4,
                                     bos_token_id=0, eos_token_id=1)
    return transformers.GPT2LMHeadModel(config).eval()


@pytest.fixture(scope="module")
def lm(llama, tokenizer):
    return load_lm("perplexity", llama, tokenizer=tokenizer)


@pytest.fixture(scope="module")
def texts():
    """Generated texts, several longer than the 64-position window, an empty one and a one-token one."""
    rng = random.Random(7)
    return [random_text(rng, rng.choice((8, 20, 50))) for _ in range(24)] + ["", "a", "naïve café 東京 😀"]


def rows_for(lm, texts, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return perplexity_rows(texts, PerplexityOptions(model_id=lm.model, tokenizer=lm.tokenizer, **options),
                               lm=lm)


def plain_nll(model, ids: list[int]) -> float:
    """Summed NLL of ids[1:] given the ids before, one unpadded forward pass, no batching."""
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0].float()
    return torch.nn.functional.cross_entropy(logits[:-1], torch.tensor(ids[1:]), reduction="sum").item()


# ----- windows and padded lengths, by hand ------------------------------------------------------------------


def test_windows_by_hand() -> None:
    assert windows_of(0, 4, 2, False) == [] and windows_of(1, 4, 2, False) == []
    assert [(w.start, w.end, w.first_target) for w in windows_of(4, 4, 2, False)] == [(0, 4, 1)]
    # 10 tokens, window 4, stride 2: windows start 0, 2, 4, 6; each scores what the previous did not
    assert [(w.start, w.end, w.first_target) for w in windows_of(10, 4, 2, False)] == [
        (0, 4, 1), (2, 6, 4), (4, 8, 6), (6, 10, 8)]
    # 9 tokens, window 4, stride 3: the last window is moved back to be full (5..9 instead of 6..9)
    assert [(w.start, w.end, w.first_target) for w in windows_of(9, 4, 3, False)] == [
        (0, 4, 1), (3, 7, 4), (5, 9, 7)]
    assert [(w.start, w.end, w.first_target) for w in windows_of(10, 4, 2, True)] == [(0, 4, 1)]
    with pytest.raises(ValueError, match="stride"):
        windows_of(10, 4, 4, False)


def test_every_token_is_scored_exactly_once_with_context() -> None:
    for length in range(2, 60):
        for window in range(2, 12):
            for stride in range(1, window):
                scored = []
                for w in windows_of(length, window, stride, False):
                    assert w.length <= window and w.start < w.first_target <= w.end
                    scored.extend(range(w.first_target, w.end))
                    if length >= window:
                        assert w.length == window  # every window full: the most context it allows
                assert scored == list(range(1, length)), (length, window, stride)


def test_bucket_lengths_by_hand() -> None:
    assert [bucket_length(n) for n in (1, 8, 9, 64, 65, 100, 128, 129, 200, 1000)] == [
        8, 8, 16, 64, 72, 104, 128, 144, 208, 1024]
    assert bucket_length(1000, 1000) == 1000 and bucket_length(60, 62) == 62
    for n in range(129, 5000):
        assert n <= bucket_length(n) <= n * 9 / 8


def test_window_batches_never_mix_lengths() -> None:
    padded = [64, 8, 64, 16, 8, 64, 64, 8]
    batches = window_batches(padded, 2, 10_000)
    assert batches == [[0, 2], [5, 6], [3], [1, 4], [7]]
    assert window_batches(padded, 16, 128) == [[0, 2], [5, 6], [3], [1, 4, 7]]


# ----- correctness against plain computations --------------------------------------------------------------


def test_per_text_nll_equals_a_plain_forward_pass(lm, llama, tokenizer, texts) -> None:
    rows = rows_for(lm, texts, batch_size=8)
    checked = 0
    for text, row in zip(texts, rows, strict=True):
        ids = [tokenizer.bos_token_id, *tokenizer(text, add_special_tokens=False).input_ids]
        if len(ids) > 64 or len(ids) < 2:
            continue
        assert row[1] == len(ids) - 1
        expected = plain_nll(llama, ids)
        assert row[0] / row[1] == pytest.approx(expected / row[1], abs=TOLERANCE)
        assert row[4] == pytest.approx(math.exp(expected / row[1]), rel=TOLERANCE)
        checked += 1
    assert checked >= 12


def test_sliding_windows_equal_a_plain_reference_loop(lm, llama, tokenizer, texts) -> None:
    """Reference: window W, stride S, written as a loop over target positions, one forward pass per window."""
    window, stride = 16, 5
    rows = rows_for(lm, texts, max_length=window, stride=stride, batch_size=4)
    long_texts = 0
    for text, row in zip(texts, rows, strict=True):
        ids = [tokenizer.bos_token_id, *tokenizer(text, add_special_tokens=False).input_ids]
        total, count, next_target, start = 0.0, 0, 1, 0
        while next_target < len(ids):
            start = min(start, max(0, len(ids) - window))
            end = min(start + window, len(ids))
            with torch.no_grad():
                logits = llama(torch.tensor([ids[start:end]])).logits[0].float()
            for target in range(next_target, end):
                log_probs = torch.log_softmax(logits[target - start - 1], dim=-1)
                total -= log_probs[ids[target]].item()
                count += 1
            next_target = end
            start += stride
        long_texts += len(ids) > window
        assert row[1] == count
        if count:
            assert row[0] / count == pytest.approx(total / count, abs=TOLERANCE)
    assert long_texts >= 5


def test_truncation_scores_only_the_first_window(lm, llama, tokenizer, texts) -> None:
    rows = rows_for(lm, texts, max_length=12, truncation=True)
    for text, row in zip(texts, rows, strict=True):
        ids = [tokenizer.bos_token_id, *tokenizer(text, add_special_tokens=False).input_ids][:12]
        assert row[1] == len(ids) - 1
        if row[1]:
            assert row[0] / row[1] == pytest.approx(plain_nll(llama, ids) / row[1], abs=TOLERANCE)


def test_gpt2_with_learned_positions_never_pads_past_its_positions(tokenizer, texts) -> None:
    model = tiny_gpt2(len(tokenizer), positions=60)
    loaded = load_lm("perplexity", model, tokenizer=tokenizer)
    assert loaded.max_positions == 60 and loaded.split_head
    rows = rows_for(loaded, texts, batch_size=5)
    one = rows_for(loaded, texts, batch_size=1)
    assert rows == one
    ids = [tokenizer.bos_token_id, *tokenizer(texts[0], add_special_tokens=False).input_ids]
    if len(ids) <= 60:
        assert rows[0][0] / rows[0][1] == pytest.approx(plain_nll(model, ids) / rows[0][1], abs=TOLERANCE)


# ----- invariance ------------------------------------------------------------------------------------------


def test_results_do_not_depend_on_batch_size_order_or_padding_side(lm, llama, tokenizer, texts) -> None:
    reference = rows_for(lm, texts, batch_size=1)
    for batch_size in (3, 16):
        assert rows_for(lm, texts, batch_size=batch_size) == reference, batch_size
    order = list(range(len(texts)))
    random.Random(3).shuffle(order)
    shuffled = rows_for(lm, [texts[i] for i in order], batch_size=8)
    assert [shuffled[order.index(i)] for i in range(len(texts))] == reference
    left = train_tokenizer()
    left.padding_side = "left"
    assert rows_for(load_lm("perplexity", llama, tokenizer=left), texts, batch_size=8) == reference
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        small = core_lm_score.score_texts(lm, texts, metric="perplexity", batch_size=64, max_batch_tokens=40,
                                          chunk_size=5)
    assert [(s.nll, s.tokens, s.bytes) for s in small] == [(r[0], r[1], r[2]) for r in reference]


def test_out_of_memory_halving_gives_the_same_results(lm, texts, monkeypatch) -> None:
    reference = rows_for(lm, texts, batch_size=16)
    real = core_lm_score.batch_nlls
    sizes = []

    def flaky(loaded, batch, length):
        sizes.append(len(batch))
        if len(batch) > 3:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(loaded, batch, length)

    monkeypatch.setattr(core_lm_score, "batch_nlls", flaky)
    assert rows_for(lm, texts, batch_size=16) == reference
    assert max(sizes) > 3 and any(size <= 3 for size in sizes)


def test_progress_counts_every_text(lm, texts) -> None:
    counts = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        options = PerplexityOptions(model_id=lm.model, tokenizer=lm.tokenizer, batch_size=4, max_length=16)
        perplexity_rows(texts, options, lm=lm, progress=counts.append)
    assert sum(counts) == len(texts) and len(counts) > 3
    with core_lm_score.progress_bar(len(texts), enabled=False) as callback:
        assert callback is None
    with core_lm_score.progress_bar(2) as callback:
        callback(2)
        assert callback.__self__.n == 2  # a tqdm bar's update


# ----- statistics ------------------------------------------------------------------------------------------


def test_statistics_by_hand() -> None:
    # two texts: NLL 3.0 over 2 tokens (6 bytes), 1.0 over 1 token (2 bytes); one empty text
    schema = perplexity_schema()
    rows = [(3.0, 2, 6, 1, math.exp(1.5), 1), (1.0, 1, 2, 1, math.exp(1.0), 1), (0.0, 0, 0, 0, 0.0, 1)]
    result = perplexity_from_totals(schema.totals_of_rows(rows, "s"))
    assert result["mean_perplexity"] == pytest.approx((math.exp(1.5) + math.exp(1.0)) / 2, rel=1e-15)
    assert result["corpus_perplexity"] == pytest.approx(math.exp(4.0 / 3), rel=1e-15)
    assert result["cross_entropy"] == pytest.approx(4.0 / 3, rel=1e-15)
    assert result["bits_per_token"] == pytest.approx(4.0 / 3 / math.log(2), rel=1e-15)
    assert result["bits_per_byte"] == pytest.approx(4.0 / math.log(2) / 8, rel=1e-15)
    assert (result["tokens"], result["bytes"], result["texts"], result["skipped_texts"]) == (3, 8, 3, 1)
    per_text = perplexity_per_text(rows)
    assert per_text["perplexities"][:2] == [math.exp(1.5), math.exp(1.0)] and math.isnan(per_text["perplexities"][2])
    single = perplexity_from_totals(schema.totals_of_rows(rows[:1], "s"))
    assert single["mean_perplexity"] == single["corpus_perplexity"] == per_text["perplexities"][0]
    with pytest.raises(ValueError, match="undefined"):
        perplexity_from_totals(schema.totals_of_rows(rows[2:], "s"))


def test_shards_merge_to_the_one_shot_totals(lm, texts) -> None:
    options = PerplexityOptions(model_id=lm.model, batch_size=4)
    schema, signature = perplexity_schema(), options.stats_signature()
    rows = rows_for(lm, texts, batch_size=4)
    whole = schema.totals_of_rows(rows, signature)
    shards = [rows_for(lm, texts[i:i + 9], batch_size=3) for i in range(0, len(texts), 9)]
    merged = schema.merge(*(schema.totals_of_rows(shard, signature) for shard in shards))
    assert merged == whole
    assert perplexity_from_totals(merged) == perplexity_from_totals(whole)
    other = PerplexityOptions(model_id=lm.model, add_start_token=False).stats_signature()
    with pytest.raises(ValueError, match="different options"):
        schema.merge(whole, schema.totals_of_rows(rows, other))


def test_bytes_are_those_of_the_scored_text(lm, tokenizer) -> None:
    text = "naïve café 東京 😀"
    with_start = rows_for(lm, [text])[0]
    assert with_start[2] == len(text.encode("utf-8"))
    encoding = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    first_end = encoding["offset_mapping"][0][1]
    without = rows_for(lm, [text], add_start_token=False)[0]
    assert without[1] == len(encoding["input_ids"]) - 1
    assert without[2] == len(text[first_end:].encode("utf-8"))


@pytest.fixture(scope="module")
def short_texts(texts):
    return [text for text in texts if text.strip() and len(text) < 60][:20]


def test_agrees_with_evaluate_where_it_is_right(lm, llama, short_texts) -> None:
    """Short texts, right padding (masked padding at the end never reaches a real position)."""
    theirs = evaluate_perplexity(llama, train_tokenizer(pad=True), short_texts, batch_size=4)
    ours = perplexity_per_text(rows_for(lm, short_texts))
    assert ours["perplexities"] == pytest.approx(theirs["perplexities"], rel=TOLERANCE)
    mean = perplexity_from_totals(perplexity_schema().totals_of_rows(rows_for(lm, short_texts), "s"))
    assert mean["mean_perplexity"] == pytest.approx(theirs["mean_perplexity"], rel=TOLERANCE)
    unbatched = evaluate_perplexity(llama, train_tokenizer(pad=True), short_texts, batch_size=1, add_start_token=False)
    without = perplexity_per_text(rows_for(lm, short_texts, add_start_token=False))["perplexities"]
    assert without == pytest.approx(unbatched["perplexities"], rel=TOLERANCE, nan_ok=True)


def test_evaluate_depends_on_the_other_texts_and_ours_does_not(short_texts, texts) -> None:
    """evaluate's module pads the whole corpus to its longest text. With a left-padding tokenizer and a model
    with learned positions (GPT-2), a text's perplexity then changes when a longer text joins the corpus.
    Ours ignore the tokenizer's padding side: a text's result is the same in any corpus, at any batch size."""
    left = train_tokenizer(pad=True)
    left.padding_side = "left"
    gpt2 = tiny_gpt2(len(left))
    alone = evaluate_perplexity(gpt2, left, short_texts, batch_size=4)["perplexities"]
    longest = max((text for text in texts if len(left(text).input_ids) < 60), key=lambda text: len(left(text).input_ids))
    joined = evaluate_perplexity(gpt2, left, [*short_texts, longest], batch_size=4)["perplexities"]
    assert max(abs(a - b) / a for a, b in zip(alone, joined, strict=False)) > 1e-3
    loaded = load_lm("perplexity", gpt2, tokenizer=left)
    ours = perplexity_per_text(rows_for(loaded, short_texts, batch_size=4))["perplexities"]
    assert perplexity_per_text(rows_for(loaded, [*short_texts, longest], batch_size=1))["perplexities"][:-1] == ours
    right = evaluate_perplexity(gpt2, train_tokenizer(pad=True), short_texts, batch_size=4)["perplexities"]
    assert ours == pytest.approx(right, rel=TOLERANCE)


def test_evaluate_truncates_long_texts_and_ours_slides(lm, llama, tokenizer, texts) -> None:
    long_texts = [text for text in texts if len(tokenizer(text, add_special_tokens=False).input_ids) > 30][:5]
    theirs = evaluate_perplexity(llama, train_tokenizer(pad=True), long_texts, batch_size=1, max_length=16)
    truncated = perplexity_per_text(rows_for(lm, long_texts, max_length=16, truncation=True))["perplexities"]
    assert truncated == pytest.approx(theirs["perplexities"], rel=TOLERANCE)
    sliding = rows_for(lm, long_texts, max_length=16)
    assert all(row[1] == len(tokenizer(text, add_special_tokens=False).input_ids)
               for text, row in zip(long_texts, sliding, strict=True))


def test_evaluate_crashes_without_bos_and_ours_says_so(llama, short_texts) -> None:
    no_bos = train_tokenizer(bos=False, pad=True)
    with pytest.raises((TypeError, RuntimeError, ValueError)):  # torch.tensor([[None]])
        evaluate_perplexity(llama, no_bos, short_texts, batch_size=1)
    loaded = load_lm("perplexity", llama, tokenizer=no_bos)
    with pytest.warns(UserWarning, match="add_start_token=True cannot be honoured"):
        rows = perplexity_rows(short_texts, PerplexityOptions(model_id=llama, tokenizer=no_bos), lm=loaded)
    assert rows == rows_for(loaded, short_texts, add_start_token=False)


def test_no_pad_token_is_needed(llama, short_texts) -> None:
    """evaluate's module pads the whole corpus (even with batch_size=1: a ValueError without a pad token) and,
    for batch_size > 1, reads ``special_tokens_map_extended``, gone in transformers 5 (an AttributeError;
    before, it set the caller's tokenizer's pad token). Ours never pads with the tokenizer."""
    bare = train_tokenizer(bos=True, eos=False, pad=False)
    loaded = load_lm("perplexity", llama, tokenizer=bare)
    rows = rows_for(loaded, short_texts, batch_size=8)
    assert bare.pad_token is None and len(rows) == len(short_texts)
    with pytest.raises(ValueError, match="padding token"):
        evaluate_perplexity(llama, bare, short_texts, batch_size=1)
    try:
        evaluate_perplexity(llama, bare, short_texts, batch_size=8)
    except AttributeError as error:
        assert "special_tokens_map_extended" in str(error)
    else:
        assert bare.pad_token == "<bos>"  # older transformers: the caller's tokenizer was changed


# ----- models: objects, folders, cache, dtype and placement ------------------------------------------------


def test_local_folder_loads_once_and_equals_the_object(llama, tokenizer, texts, tmp_path: Path) -> None:
    llama.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    clear_lm_cache()
    first = load_lm("perplexity", str(tmp_path / "tiny"), device="cpu")
    assert load_lm("perplexity", str(tmp_path / "tiny"), device="cpu") is first
    assert first.name == str(tmp_path / "tiny") and first.owned
    object_rows = rows_for(load_lm("perplexity", llama, tokenizer=tokenizer, device="cpu"), texts[:10])
    folder_rows = rows_for(first, texts[:10])
    for a, b in zip(object_rows, folder_rows, strict=True):  # oneDNN linear layers in the loaded copy
        assert a[1] == b[1] and (a[1] == 0 or a[0] / a[1] == pytest.approx(b[0] / b[1], abs=TOLERANCE))
    clear_lm_cache()


def test_model_objects_keep_their_dtype_and_place(tokenizer, short_texts) -> None:
    model = tiny_llama(len(tokenizer)).to(torch.bfloat16)
    loaded = load_lm("perplexity", model, tokenizer=tokenizer)
    assert loaded.dtype == torch.bfloat16 and next(model.parameters()).dtype == torch.bfloat16
    assert loaded.device.type == "cpu" and not loaded.owned
    rows = rows_for(loaded, short_texts)
    fp32 = rows_for(load_lm("perplexity", tiny_llama(len(tokenizer)), tokenizer=tokenizer), short_texts)
    assert all(abs(a[0] / a[1] - b[0] / b[1]) < 0.05 for a, b in zip(rows, fp32, strict=True))
    with pytest.raises(ValueError, match="never cast"):
        load_lm("perplexity", model, tokenizer=tokenizer, precision="fp16")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="never moved"):
            load_lm("perplexity", model, tokenizer=tokenizer, device="cuda")


def test_the_full_logits_path_when_the_head_cannot_be_split(tokenizer, texts, monkeypatch) -> None:
    from metrics._core import core_lm_models

    model = tiny_llama(len(tokenizer))
    split = rows_for(load_lm("perplexity", model, tokenizer=tokenizer), texts)
    monkeypatch.setattr(core_lm_models, "base_and_head", lambda model: (None, None))
    loaded = load_lm("perplexity", model, tokenizer=tokenizer)
    assert not loaded.split_head
    full = rows_for(loaded, texts)
    assert full == rows_for(loaded, texts, batch_size=3)
    for a, b in zip(split, full, strict=True):
        assert a[1] == b[1] and (a[1] == 0 or a[0] / a[1] == pytest.approx(b[0] / b[1], abs=TOLERANCE))


# ----- bad input -------------------------------------------------------------------------------------------


def test_bad_predictions_and_options(lm) -> None:
    with pytest.raises(ValueError, match="`predictions` is empty"):
        perplexity_rows([], PerplexityOptions(), lm=lm)
    with pytest.raises(TypeError, match=r"`predictions\[1\]` must be a string"):
        perplexity_rows(["a", None], PerplexityOptions(), lm=lm)
    with pytest.raises(TypeError, match="single string"):
        perplexity_rows("a text", PerplexityOptions(), lm=lm)
    with pytest.raises(ValueError, match="`batch_size` must be at least 1"):
        perplexity_rows(["a"], PerplexityOptions(batch_size=0), lm=lm)
    with pytest.raises(ValueError, match="`stride` must be smaller than `max_length`"):
        perplexity_rows(["a"], PerplexityOptions(max_length=8, stride=8), lm=lm)
    with pytest.raises(ValueError, match="`stride` must be smaller than the window"):
        perplexity_rows(["a"], PerplexityOptions(stride=64), lm=lm)
    with pytest.raises(ValueError, match="unknown `precision`"):
        perplexity_rows(["a"], PerplexityOptions(precision="fp8"), lm=lm)


def test_empty_texts_are_skipped_with_a_warning(lm) -> None:
    with pytest.warns(UserWarning, match=r"2 text\(s\) have no token to score.*indices 0, 2"):
        rows = perplexity_rows(["", "a b c", ""], PerplexityOptions(), lm=lm)
    per_text = perplexity_per_text(rows)
    assert math.isnan(per_text["perplexities"][0]) and math.isfinite(per_text["perplexities"][1])
    totals = perplexity_from_totals(perplexity_schema().totals_of_rows(rows, "s"))
    assert totals["mean_perplexity"] == per_text["perplexities"][1] and totals["skipped_texts"] == 2
    with pytest.warns(UserWarning, match="no token to score"):
        rows = perplexity_rows(["a"], PerplexityOptions(add_start_token=False), lm=lm)
    with pytest.raises(ValueError, match="undefined"):
        perplexity_from_totals(perplexity_schema().totals_of_rows(rows, "s"))


def test_models_that_are_not_causal_lms(tokenizer, tmp_path: Path) -> None:
    config = transformers.BertConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)
    bidirectional = transformers.BertForMaskedLM(config)  # attends to later tokens
    with pytest.raises(ValueError, match="not a causal language model: its predictions"):
        load_lm("perplexity", bidirectional, tokenizer=tokenizer)
    with pytest.raises(TypeError, match="not a causal language model"):
        load_lm("perplexity", transformers.BertModel(config), tokenizer=tokenizer)
    t5 = transformers.T5ForConditionalGeneration(transformers.T5Config(
        vocab_size=len(tokenizer), d_model=16, d_ff=32, num_layers=1, num_heads=2, d_kv=8))
    with pytest.raises(ValueError, match="encoder-decoder"):
        load_lm("perplexity", t5, tokenizer=tokenizer)
    transformers.DistilBertForMaskedLM(transformers.DistilBertConfig(
        vocab_size=len(tokenizer), dim=16, hidden_dim=32, n_layers=1, n_heads=2)).save_pretrained(tmp_path / "db")
    with pytest.raises(ValueError, match="type 'distilbert'.* is not a causal language model"):
        load_lm("perplexity", str(tmp_path / "db"))
    small = train_tokenizer(vocab_size=300)
    with pytest.raises(ValueError, match="tokenizer has .* tokens but the model .* embeds only 100"):
        load_lm("perplexity", tiny_llama(100), tokenizer=small)


def test_models_that_cannot_be_found_offline(tmp_path: Path, llama) -> None:
    with pytest.raises(ValueError, match="not available offline.*nothing is downloaded"):
        load_lm("perplexity", "no-such-org/no-such-model-xyz")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="has no config.json"):
        load_lm("perplexity", str(tmp_path / "empty"))
    with pytest.raises(ValueError, match="GGUF file .* does not exist"):
        load_lm("perplexity", str(tmp_path / "missing.gguf"))
    with pytest.raises(ValueError, match="without its tokenizer"):
        load_lm("perplexity", llama)
    with pytest.raises(TypeError, match="`model_id` must be a string"):
        from metrics._core.core_lm_models import resolve_lm

        resolve_lm("perplexity", 3)


def test_max_positions_from_config_or_tokenizer(tokenizer) -> None:
    assert max_positions_of(tiny_llama(len(tokenizer), positions=48)) == 48
    assert max_positions_of(tiny_gpt2(len(tokenizer), positions=40)) == 40
    assert max_positions_of(object(), tokenizer) is None
