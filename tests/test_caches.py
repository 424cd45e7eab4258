"""Process-wide caches are bounded in bytes, shared by every copy of the core, and can be emptied.

Before, the caches were capped by entry count (131,072 segments, 16,384 references' n-gram counts), so long
documents left gigabytes resident after `compute` returned; now each cache holds at most its byte limit
(an estimate that is at least the memory really held: checked here with tracemalloc).
"""

from __future__ import annotations

import gc
import random
import tracemalloc

import pytest

from conftest import load_metric
from metrics._core import core_process

MIB = 1 << 20


def documents(seed: int, count: int, length: int) -> list[str]:
    rng = random.Random(seed)
    vocabulary = [f"w{index}x" for index in range(50_000)]
    return [" ".join(rng.choice(vocabulary) for _ in range(length)) + " ." for _ in range(count)]


@pytest.fixture
def small_limits():
    """Tight limits for the caches sacreBLEU uses, restored afterwards."""
    load_metric("sacrebleu")  # its core copies register their caches when imported
    usage = core_process.cache_usage()
    saved = {name: limit for name, (_, _, limit) in usage.items()}
    core_process.set_cache_limit("mt.tokens.13a", 4 * MIB)
    core_process.set_cache_limit("mt.reference_counts", 8 * MIB)
    yield
    for name, limit in saved.items():
        core_process.set_cache_limit(name, limit)
    core_process.clear_caches()


def test_what_the_caches_keep_after_compute_is_bounded(small_limits) -> None:
    sacrebleu = load_metric("sacrebleu")
    sacrebleu.compute(predictions=["warm up"], references=["warm up"])
    predictions, references = documents(1, 40, 2_000), documents(2, 40, 2_000)
    core_process.clear_caches()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        sacrebleu.compute(predictions=predictions, references=references)
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
        sacrebleu.clear_caches()
        gc.collect()
        cleared = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    usage = core_process.cache_usage()
    assert usage["mt.tokens.13a"][0] == 0 and usage["mt.reference_counts"][0] == 0  # cleared
    # 80 documents of 2,000 tokens: about 10 MiB of token lists and 24 MiB of n-gram counts unbounded
    assert kept <= 12 * MIB * 1.1, kept / MIB
    assert cleared <= 1 * MIB, cleared / MIB


def test_estimates_are_not_below_the_memory_held(small_limits) -> None:
    core_process.set_cache_limit("mt.tokens.13a", 1 << 40)
    core_process.set_cache_limit("mt.reference_counts", 1 << 40)
    sacrebleu = load_metric("sacrebleu")
    sacrebleu.compute(predictions=["warm up"], references=["warm up"])
    core_process.clear_caches()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        sacrebleu.compute(predictions=documents(3, 20, 2_000), references=documents(4, 20, 2_000))
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    usage = core_process.cache_usage()
    estimated = usage["mt.tokens.13a"][1] + usage["mt.reference_counts"][1]
    assert usage["mt.tokens.13a"][0] == 40 and usage["mt.reference_counts"][0] == 20
    assert held <= estimated, (held / MIB, estimated / MIB)


def test_limits_are_shared_by_every_copy_of_the_core() -> None:
    bleu = load_metric("bleu")
    bleu.compute(predictions=["a b c d"], references=["a b c d"])
    copies = [load_metric(name) for name in ("bleu", "sacrebleu")]
    registries = {id(__import__(type(module).__module__.rpartition(".")[0] + ".core_process",
                                fromlist=["x"])._registry()) for module in copies}
    assert len(registries) == 1 and id(core_process._registry()) in registries


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="no cache named 'nope'"):
        core_process.set_cache_limit("nope", MIB)
    with pytest.raises(ValueError, match="number of bytes"):
        core_process.set_cache_limit("mt.tokens.13a", -1)
