"""MetricX's model inputs as the official code makes them, and token-bounded batches of them.

google-research/metricx (https://github.com/google-research/metricx, commit fc4978e), `get_dataset` of
metricx24/predict.py and metricx23/predict.py: each example becomes one string (`_make_input`), tokenized with the
mT5 tokenizer with truncation to `max_input_length` tokens (`_tokenize`), whose last token, the end-of-sequence
token, is then removed (`_remove_eos`), so a model input holds at most `max_input_length - 1` tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# The README's `--max_input_length` for each family ("The models were trained with a maximum input length of 1536
# and 1024 tokens, respectively").
VERSIONS = {"metricx-24": 1536, "metricx-23": 1024}


def model_input(version: str, source: str, prediction: str, reference: str | None) -> str:
    """The input string of one example; ``reference`` None is the reference-free (QE) form."""
    if version == "metricx-24":
        if reference is None:  # metricx24/predict.py lines 84-90
            return "source: " + source + " candidate: " + prediction
        return "source: " + source + " candidate: " + prediction + " reference: " + reference  # lines 92-99
    if reference is None:  # metricx23/predict.py lines 84-90
        return "candidate: " + prediction + " source: " + source
    return "candidate: " + prediction + " reference: " + reference  # metricx23/predict.py lines 92-97


def as_official_tokenizer(tokenizer: Any) -> Any:
    """``tokenizer`` (an mT5 tokenizer loaded by transformers, fast-backed) made to split text as the official
    code's does: transformers 4.30 converts google/mt5-xl's spiece.model into a fast tokenizer whose normalizer is
    the model's precompiled character map followed by ``Replace(" {2,}", " ")`` and whose pre-tokenizer is
    ``Metaspace("▁", add_prefix_space=True)`` (convert_slow_tokenizer.py, ``SpmConverter``). transformers 5 splits
    on whitespace first, which drops a trailing space's "▁" token (an input ending in an empty reference gets one
    token fewer than the official ids); the official normalizer and pre-tokenizer are put back."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return tokenizer
    from tokenizers import Regex, normalizers, pre_tokenizers

    steps = [backend.normalizer] if backend.normalizer is not None else []
    backend.normalizer = normalizers.Sequence([*steps, normalizers.Replace(Regex(" {2,}"), " ")])
    backend.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    return tokenizer


def encode_inputs(tokenizer: Any, texts: Sequence[str], max_input_length: int) -> list[list[int]]:
    """Token ids of each text: tokenized with truncation to ``max_input_length`` (metricx24/predict.py lines
    102-108), the last token removed (lines 110-113)."""
    if not texts:
        return []
    encoded = tokenizer(list(texts), max_length=max_input_length, truncation=True, padding=False)
    return [list(ids[:-1]) for ids in encoded["input_ids"]]


def token_batches(lengths: Sequence[int], batch_size: int, max_tokens: int) -> list[list[int]]:
    """Indices of ``lengths`` sorted longest first and cut into batches of at most ``batch_size`` rows whose padded
    size (rows times the longest) stays within ``max_tokens`` (a longer single row is a batch of its own)."""
    order = sorted(range(len(lengths)), key=lambda index: (-lengths[index], index))
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        if current and (len(current) >= batch_size or (len(current) + 1) * lengths[current[0]] > max_tokens):
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches
