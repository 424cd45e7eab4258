"""FLOPs per token of the benchmarks' encoder models, shared by scripts/bench_bertscore.py and scripts/bench_gpu.py
(the decoder LM's count is ``bench_perplexity.flops_per_token``)."""

from __future__ import annotations


def encoder_flops_per_token(width: int, inner: int, layers: int, mean_length: float) -> float:
    """Per token, per layer: 2 x the dense weights (query, key, value, output: 4 x width^2; feed-forward:
    2 x width x inner) + attention (4 x context x width), times ``layers``."""
    return layers * (2 * (4 * width * width + 2 * width * inner) + 4 * mean_length * width)
