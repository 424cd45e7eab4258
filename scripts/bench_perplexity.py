#!/usr/bin/env python3
"""Benchmark: our perplexity against evaluate's algorithm, same model (the packaged SmolLM2-135M-Instruct GGUF,
dequantized to fp32), same device, same process, one after the other.

Texts: the first --texts reference summaries of CNN/DailyMail (../shared/data/cnndm-see2017/test.jsonl.gz).
evaluate's ``perplexity`` module cannot be installed offline (it is fetched from the Hub), so its algorithm is
reimplemented here from its source: every text tokenized at once and padded to the longest of the corpus, a BOS
column in front, batches of --evaluate-batch-size (its default 16), full logits, masked cross-entropy.
Variants timed (scoring only; the model is loaded first, and the load of the GGUF file is timed apart):

- ``evaluate``: the algorithm above, PyTorch's default linear layers (MKL);
- ``plain loop``: one unpadded forward pass per text (the reference of the tests);
- ``ours mkl``: our core with PyTorch's default linear layers;
- ``ours onednn``: our core with oneDNN linear layers and fused Llama layers (what ``load_lm`` does on the CPU
  in fp32);
- ``ours bf16`` (--bf16): our core with the model cast to bfloat16.

Prints tokens/s (scored tokens per second of wall time), the ratio to evaluate's, the peak resident memory
above the level before each run (sampled every 5 ms; the C heap's free memory handed back before each run, and
the default allocator otherwise, as users run: forcing every large block through ``mmap`` for cleaner peaks made
each new activation page-fault, about 20% slower on this model), the largest relative difference of per-text
perplexities against evaluate's, and each variant's FLOP rate as a fraction of the machine's matrix-multiply rate
on the model's own GEMM shapes (``gemm_rate``: every linear layer, the output layer included, at the rows our
batches give them, fastest kernel per shape), measured in the same run before and after the variants (their mean
is used).
--scale N repeats the texts N times for our onednn variant alone (memory must not grow with the corpus).

    python scripts/bench_perplexity.py [--texts 500] [--threads 2] [--evaluate-batch-size 16] [--batch-size 16]
                                       [--scale 10] [--bf16] [--skip-evaluate] [--device cpu]
"""

from __future__ import annotations

import copy
import ctypes
import gzip
import json
import math
import os
import threading
import time
from pathlib import Path
from typing import Any

import project  # the repository root on sys.path

project.use_test_helpers()
DATA = project.CNNDM


def summaries(count: int, path: Path = DATA) -> list[str]:
    texts = []
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            texts.append(json.loads(line)["reference"])
            if len(texts) == count:
                break
    return texts


def release_free_memory() -> None:
    """Hand the C heap's free memory back to the system (glibc's ``malloc_trim``; nothing elsewhere)."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


class PeakMemory:
    """Peak resident memory (MiB) above the level at entry, sampled every 5 ms (plus CUDA's own peak); the heap's
    free memory is handed back first, so that what an earlier run freed does not hide this one's peak."""

    def __enter__(self) -> PeakMemory:
        import torch

        release_free_memory()
        self.base = self.peak = self._rss()
        self.running = True
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()
        return self

    def _rss(self) -> int:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def _sample(self) -> None:
        while self.running:
            self.peak = max(self.peak, self._rss())
            time.sleep(0.005)

    def __exit__(self, *exc: Any) -> None:
        import torch

        self.running = False
        self.thread.join()
        self.peak = max(self.peak, self._rss())
        self.mib = (self.peak - self.base) / 2**20
        self.cuda_mib = torch.cuda.max_memory_allocated() / 2**20 if torch.cuda.is_available() else 0.0


def evaluate_algorithm(model: Any, tokenizer: Any, predictions: list[str], batch_size: int, device: Any) -> list[float]:
    """evaluate's perplexity ``_compute`` (add_start_token=True, no max_length), with the pad token it would set
    on the caller's tokenizer set on a copy (transformers 5 lacks the attribute evaluate reads it from)."""
    from perplexity_oracle import evaluate_perplexity

    if tokenizer.pad_token is None:
        tokenizer = copy.deepcopy(tokenizer)
        tokenizer.add_special_tokens({"pad_token": list(tokenizer.special_tokens_map.values())[0]})
    return evaluate_perplexity(model, tokenizer, predictions, batch_size, device=device)["perplexities"]


def plain_loop(model: Any, tokenizer: Any, predictions: list[str], device: Any) -> list[float]:
    import torch

    out = []
    with torch.inference_mode():
        for text in predictions:
            ids = torch.tensor([[tokenizer.bos_token_id, *tokenizer(text, add_special_tokens=False).input_ids]],
                               device=device)
            logits = model(ids).logits[0].float()
            out.append(math.exp(torch.nn.functional.cross_entropy(logits[:-1], ids[0, 1:]).item()))
    return out


def ours(lm: Any, predictions: list[str], batch_size: int) -> list[float]:
    from metrics._core.core_lm_perplexity import PerplexityOptions, perplexity_per_text, perplexity_rows

    options = PerplexityOptions(model_id=lm.model, tokenizer=lm.tokenizer, batch_size=batch_size)
    rows = perplexity_rows(predictions, options, lm=lm)
    return perplexity_per_text(rows)["perplexities"]


def batch_rows(tokenizer: Any, texts: list[str], batch_size: int) -> int:
    """Rows our linear layers see per forward pass: the token-weighted mean of our batches' padded tokens."""
    from metrics._core.core_lm_score import DEFAULT_MAX_BATCH_TOKENS
    from metrics._core.core_lm_windows import bucket_length, window_batches

    padded = [bucket_length(len(tokenizer(text, add_special_tokens=False).input_ids) + 1) for text in texts]
    rows = [len(batch) * padded[batch[0]] for batch in window_batches(padded, batch_size, DEFAULT_MAX_BATCH_TOKENS)]
    return max(8, round(sum(r * r for r in rows) / sum(rows) / 8) * 8)


def flops_per_token(model: Any, mean_length: float) -> float:
    """2 x (weights used per token, the output layer included) + attention (4 x layers x width x context)."""
    config = model.config
    embedding = config.vocab_size * config.hidden_size
    weights = sum(p.numel() for p in model.parameters()) - embedding  # the tied output layer counted once below
    attention = 4 * config.num_hidden_layers * config.hidden_size * mean_length / 2
    return 2 * (weights + embedding) + attention


def invariance(base: Any, texts: list[str], device: Any) -> None:
    """Per precision: are our rows identical for batch sizes 1, 5, 16, 64 and shuffled input; how far is the
    mean NLL per text from a plain unbatched unpadded fp32 forward pass."""
    import random

    import torch

    from metrics._core.core_lm_models import load_lm
    from metrics._core.core_lm_perplexity import PerplexityOptions, perplexity_rows

    tokenizer = base.tokenizer
    plain = []
    with torch.inference_mode():
        for text in texts:
            ids = torch.tensor([[tokenizer.bos_token_id, *tokenizer(text, add_special_tokens=False).input_ids]],
                               device=device)
            logits = base.model(ids).logits[0].float()
            plain.append(torch.nn.functional.cross_entropy(logits[:-1], ids[0, 1:]).item())
    precisions = [("fp32", torch.float32), ("bf16", torch.bfloat16)]
    if device.type == "cuda":
        precisions.append(("fp16", torch.float16))
    order = list(range(len(texts)))
    random.Random(0).shuffle(order)
    for name, dtype in precisions:
        model = base.model if dtype == torch.float32 else copy.deepcopy(base.model).to(dtype)
        lm = load_lm("perplexity", model, tokenizer=tokenizer)

        def rows(batch_size: int, items: list[str]) -> list[Any]:
            options = PerplexityOptions(model_id=model, tokenizer=lm.tokenizer, batch_size=batch_size)
            return perplexity_rows(items, options, lm=lm)

        reference = rows(1, texts)
        same = {size: rows(size, texts) == reference for size in (5, 16, 64)}
        shuffled = rows(16, [texts[i] for i in order])
        same["shuffled"] = [shuffled[order.index(i)] for i in range(len(texts))] == reference
        worst = max(abs(row[0] / row[1] - value) for row, value in zip(reference, plain, strict=True))
        print(f"{name}: identical to batch size 1: {same}; max |mean NLL - plain fp32| {worst:.2e} nats",
              flush=True)


def main() -> None:
    parser = project.bench_parser(__doc__, texts=500, threads=2, evaluate_batch_size=16, batch_size=16)
    parser.add_argument("--scale", type=int, default=0, help="also run ours on the texts repeated N times")
    parser.add_argument("--bf16", action="store_true")
    parser.add_argument("--skip-evaluate", action="store_true")
    parser.add_argument("--skip-plain", action="store_true")
    parser.add_argument("--device", default=None)
    parser.add_argument("--invariance", action="store_true",
                        help="only check, per precision, that batch sizes give identical results, and the "
                             "difference from a plain fp32 forward pass")
    parser.add_argument("--gguf", default=None, help="the GGUF file to use instead of the packaged one")
    parser.add_argument("--data", type=Path, default=DATA, help="a .jsonl.gz file of CNN/DailyMail summaries")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    torch.set_num_threads(args.threads)
    from metrics._core.core_devices import select_device
    from metrics._core.core_lm_models import load_lm
    from metrics._core.core_onednn import use_onednn_linears

    device = select_device("perplexity", args.device)
    texts = summaries(args.texts, args.data)
    start = time.perf_counter()
    base = load_lm("perplexity", args.gguf, device=device, onednn=False)
    load_seconds = time.perf_counter() - start
    start = time.perf_counter()
    assert load_lm("perplexity", args.gguf, device=device, onednn=False) is base
    cached_seconds = time.perf_counter() - start
    model, tokenizer = base.model, base.tokenizer
    tokens = sum(len(tokenizer(text, add_special_tokens=False).input_ids) for text in texts)
    lengths = [len(tokenizer(text, add_special_tokens=False).input_ids) + 1 for text in texts]
    print(f"device {device}, {torch.get_num_threads()} threads, torch {torch.__version__}; {len(texts)} texts, "
          f"{tokens} scored tokens, longest {max(lengths)}, mean {sum(lengths) / len(lengths):.1f} tokens")
    print(f"packaged GGUF load (tokenizer + dequantize to fp32 + checks): {load_seconds:.1f} s; cached: "
          f"{cached_seconds * 1000:.2f} ms")
    if args.invariance:
        invariance(base, texts, device)
        return
    from gemm_rate import gemm_rate, linear_shapes, utilisation_line

    shapes = linear_shapes(model, batch_rows(tokenizer, texts, args.batch_size))
    rates = [gemm_rate(shapes, device=device)]
    print(rates[0].describe())
    fpt = flops_per_token(model, sum(lengths) / len(lengths))

    onednn_model = None
    if device.type == "cpu":
        onednn_model = copy.deepcopy(model)
        use_onednn_linears(onednn_model, device, torch.float32)
    variants: list[tuple[str, Any]] = [
        ("ours mkl" if device.type == "cpu" else "ours fp32", lambda: ours(base, texts, args.batch_size))]
    if onednn_model is not None:
        lm_onednn = load_lm("perplexity", onednn_model, tokenizer=tokenizer)
        variants.append(("ours onednn", lambda: ours(lm_onednn, texts, args.batch_size)))
    if args.bf16:
        bf16_model = copy.deepcopy(model).to(torch.bfloat16)
        lm_bf16 = load_lm("perplexity", bf16_model, tokenizer=tokenizer)
        variants.append(("ours bf16", lambda: ours(lm_bf16, texts, args.batch_size)))
    if not args.skip_plain:
        variants.append(("plain loop", lambda: plain_loop(model, tokenizer, texts, device)))
    if not args.skip_evaluate:
        variants.append(("evaluate", lambda: evaluate_algorithm(model, tokenizer, texts, args.evaluate_batch_size,
                                                                device)))

    results: dict[str, tuple[float, float, list[float]]] = {}
    for name, run in variants:
        with PeakMemory() as memory:
            start = time.perf_counter()
            perplexities = run()
            if device.type == "cuda":
                torch.cuda.synchronize()
            seconds = time.perf_counter() - start
        results[name] = (seconds, memory.mib, perplexities)
        extra = f", CUDA peak {memory.cuda_mib:.0f} MiB" if device.type == "cuda" else ""
        print(f"  {name:12s} {seconds:7.1f} s  {tokens / seconds:8.0f} tokens/s  peak +{memory.mib:6.0f} MiB RSS"
              f"{extra}", flush=True)
    rates.append(gemm_rate(shapes, device=device))
    print(rates[1].describe())
    rate = (rates[0].gflops + rates[1].gflops) / 2
    print(f"load average {os.getloadavg()[0]:.2f}; GEMM rate of the model's shapes (mean of the two) "
          f"{rate:.1f} GFLOP/s")
    for name, (seconds, _, _) in results.items():
        print("  " + utilisation_line(name, tokens / seconds, fpt, rate))
    reference = results.get("evaluate", results.get("plain loop", next(iter(results.values()))))
    against = next(name for name, value in results.items() if value is reference)
    print(f"\nper-text perplexity, max relative difference against {against}:")
    for name, (seconds, mib, perplexities) in results.items():
        difference = max(abs(a - b) / b for a, b in zip(perplexities, reference[2], strict=True))
        ratio = reference[0] / seconds
        print(f"  {name:12s} speed x{ratio:5.2f}  diff {difference:.2e}  peak +{mib:.0f} MiB")
    if args.scale:
        many = texts * args.scale
        lm_scaled = load_lm("perplexity", onednn_model, tokenizer=tokenizer) if onednn_model is not None else base
        with PeakMemory() as memory:
            start = time.perf_counter()
            ours(lm_scaled, many, args.batch_size)
            seconds = time.perf_counter() - start
        print(f"\nx{args.scale} texts ({len(many)}): {seconds:.1f} s, {tokens * args.scale / seconds:.0f} tokens/s, "
              f"peak +{memory.mib:.0f} MiB RSS (x1: +{results[variants[min(1, len(variants) - 1)][0]][1]:.0f} MiB)")


if __name__ == "__main__":
    main()
