"""Stress cases of the model metrics (see resource_stress.py): they run with the tiny test models that
conftest.load_metric binds (comet, bleurt, usr) or that the build makes (perplexity), or the packaged small
encoder (bertscore, semantic_similarity); MAUVE is given its features."""

from __future__ import annotations

from resource_stress import RANDOM_TEXT, StressCase

# Two texts of about n characters of random 2-8-letter words.
TEXTS = RANDOM_TEXT + "a, b = text(n), text(n)\n"

PAIRS = TEXTS + 'inputs = {"predictions": [a], "references": [b]}\n'
LISTED_PAIRS = TEXTS + 'inputs = {"predictions": [a], "references": [[b]]}\n'
SOURCED = TEXTS + 'inputs = {"sources": [a], "predictions": [b], "references": [a]}\n'
DIALOGUE = TEXTS + 'inputs = {"contexts": [a], "facts": [b], "predictions": [a]}\n'

# A tiny Llama (64 positions) scoring one text of about n characters in windows of 32 tokens every 16.
PERPLEXITY = TEXTS + """
from test_lm_core import tiny_llama, train_tokenizer
tokenizer = train_tokenizer()
inputs = {"predictions": [a], "model_id": tiny_llama(len(tokenizer)), "tokenizer": tokenizer, "max_length": 32,
          "stride": 16}
"""

# MAUVE of n feature rows a side, 576 wide (SmolLM2's width), 'auto' buckets (n / 10).
MAUVE_FEATURES = """
rng = np.random.default_rng(0)
centres = rng.normal(size=(50, 576))
def side():
    return centres[rng.integers(50, size=n)] + 0.8 * rng.normal(size=(n, 576))
inputs = {"p_features": side(), "q_features": side()}
"""

STRESS_CASES = [
    StressCase("perplexity", "tokens through the model of one text", PERPLEXITY, full=1_000_000, small=20_000,
               expect="refuse", option="max_forward_tokens", small_bound=1_000, memory_gib=12, refusal_seconds=90),
    StressCase("perplexity", "characters of one text", PERPLEXITY, full=20_000_000, small=2_000, expect="refuse",
               option="max_text_chars", small_bound=1_000, memory_gib=12, refusal_seconds=30),
    StressCase("mauve", "texts of P and Q (k-means)", MAUVE_FEATURES, full=20_000, small=300, expect="refuse",
               option="max_kmeans_work", small_bound=1_000_000, memory_gib=12, refusal_seconds=30),
    StressCase("mauve", "texts of P and Q under the bound", MAUVE_FEATURES, full=2_000, small=100, expect="finish",
               memory_gib=12, seconds=120),
    StressCase("bertscore", "characters of one text", PAIRS, full=20_000_000, small=2_000, expect="refuse",
               option="max_text_chars", small_bound=1_000, memory_gib=12, refusal_seconds=30),
    StressCase("comet", "characters of one text", SOURCED, full=20_000_000, small=2_000, expect="refuse",
               option="max_text_chars", small_bound=1_000, memory_gib=12, refusal_seconds=30),
    StressCase("bleurt", "characters of one text", PAIRS, full=20_000_000, small=2_000, expect="refuse",
               option="max_text_chars", small_bound=1_000, memory_gib=12, refusal_seconds=30),
    StressCase("metricx", "characters of one text", SOURCED, full=20_000_000, small=2_000, expect="refuse",
               option="max_text_chars", small_bound=1_000, memory_gib=12, refusal_seconds=30),
    StressCase("semantic_similarity", "characters of one text", PAIRS, full=20_000_000, small=2_000,
               expect="refuse", option="max_text_chars", small_bound=1_000, memory_gib=12, refusal_seconds=30),
    StressCase("usr", "characters of one text", DIALOGUE, full=20_000_000, small=2_000, expect="refuse",
               option="max_text_chars", small_bound=1_000, memory_gib=12, refusal_seconds=30),
]
