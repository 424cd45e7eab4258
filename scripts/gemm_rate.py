"""The machine's matrix-multiply rate on a model's own GEMM shapes, measured in the benchmark's own run, and the
fraction of it that a model's forward passes reach. Shared by every model-metric benchmark.

A model's GEMMs are its linear layers at the number of rows one forward pass gives them (tokens per batch):
:func:`linear_shapes` lists them (``nn.Linear``, our ``OneDnnLinear``, transformers' GPT-2 ``Conv1D``), and
:func:`gemm_rate` times one pass over all of them, repeated for ``seconds``, each shape through the fastest kernel
available here (on the CPU in fp32: PyTorch's default BLAS and oneDNN with a pre-packed weight; elsewhere
``torch.nn.functional.linear``): that is what a scorer spending all its time in those GEMMs would reach. To show how close a scorer can come,
:func:`layers_rate` times a model's own linear layers at its batches' rows back to back, and :func:`time_shares`
splits a profiled pass's time by kind of operator (GEMMs, attention, layer norm, embeddings, the rest).

Usage from a benchmark (``scripts/`` is on ``sys.path`` for scripts run as ``python scripts/<name>.py``)::

    from gemm_rate import gemm_rate, linear_shapes, utilisation_line
    rate = gemm_rate(linear_shapes(model, rows=tokens_per_batch))        # GFLOP/s, before (and after) timing
    print(utilisation_line("ours", tokens / seconds, flops_per_token, rate))
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

Shape = tuple[int, int, int]  # (rows M, inputs K, outputs N): an [M x K] x [K x N] product, 2*M*K*N FLOPs


@dataclass(frozen=True)
class GemmRate:
    """GFLOP/s of one pass over ``shapes`` through the fastest kernel per shape, and per kernel."""

    gflops: float
    kernels: dict[str, float]
    shapes: tuple[Shape, ...]

    def describe(self) -> str:
        rows = sorted({shape[0] for shape in self.shapes})
        kernels = ", ".join(f"{name} {value:.0f}" for name, value in self.kernels.items())
        return (f"GEMM rate of the model's {len(self.shapes)} linear shapes at M={rows}: {self.gflops:.1f} GFLOP/s "
                f"(fastest kernel per shape; whole pass per kernel: {kernels})")


def linear_layers(model: Any) -> list[tuple[Any, int, int]]:
    """(layer, in, out) of every linear layer of ``model``, in order."""
    layers = []
    for module in model.modules():
        name = type(module).__name__
        if name in ("Linear", "OneDnnLinear", "NonDynamicallyQuantizableLinear"):
            layers.append((module, module.in_features, module.out_features))
        elif name == "Conv1D" and hasattr(module, "nf"):  # transformers' GPT-2 layer: weight [in, out]
            layers.append((module, module.weight.shape[0], module.nf))
    return layers


def linear_shapes(model: Any, rows: int, *, extra: Sequence[tuple[int, int]] = ()) -> list[Shape]:
    """(rows, in, out) of every linear layer of ``model`` (plus ``extra`` (in, out) pairs, e.g. an output layer
    applied apart), each at ``rows`` rows."""
    pairs = list(extra) + [(k, n) for _, k, n in linear_layers(model)]
    return [(rows, k, n) for k, n in pairs]


def flops_per_row(shapes: Sequence[Shape]) -> float:
    """FLOPs of one row (token) through every shape: 2 x the summed weight sizes."""
    return 2.0 * sum(k * n for _, k, n in shapes)


def _kernels(k: int, n: int, device: Any) -> dict[str, Callable[[Any], Any]]:
    import torch

    weight = torch.randn(n, k, device=device) / k**0.5
    kernels: dict[str, Callable[[Any], Any]] = {"blas": lambda x: torch.nn.functional.linear(x, weight)}
    if torch.device(device).type == "cpu":
        from metrics._core.core_onednn import OneDnnLinear, onednn_linear_works

        if onednn_linear_works():
            linear = torch.nn.Linear(k, n, bias=False)
            with torch.no_grad():
                linear.weight.copy_(weight)
            kernels["onednn"] = OneDnnLinear(linear)
    return kernels


def gemm_rate(shapes: Sequence[Shape], *, seconds: float = 2.0, device: Any = "cpu", repeats: int = 3) -> GemmRate:
    """The FLOP rate of one pass over ``shapes``: per shape the fastest kernel's median time over ``repeats``
    timed blocks of about ``seconds / repeats`` each (first call of each kernel not timed)."""
    import torch

    distinct = sorted(set(shapes))
    weight_of = {shape: shapes.count(shape) for shape in distinct}
    timings: dict[str, dict[Shape, float]] = {}
    budget = seconds / max(1, repeats) / max(1, len(distinct))
    with torch.inference_mode():
        for shape in distinct:
            m, k, n = shape
            inputs = torch.randn(m, k, device=device)
            for name, kernel in _kernels(k, n, device).items():
                kernel(inputs)
                samples = []
                for _ in range(repeats):
                    calls, start = 0, time.perf_counter()
                    while True:
                        kernel(inputs)
                        calls += 1
                        if torch.device(device).type == "cuda":
                            torch.cuda.synchronize()
                        elapsed = time.perf_counter() - start
                        if elapsed >= budget:
                            break
                    samples.append(elapsed / calls)
                timings.setdefault(name, {})[shape] = statistics.median(samples)
    flops = sum(2 * m * k * n * weight_of[(m, k, n)] for m, k, n in distinct)
    per_kernel = {name: flops / sum(t[s] * weight_of[s] for s in distinct) / 1e9 for name, t in timings.items()}
    best = sum(min(t[s] for t in timings.values()) * weight_of[s] for s in distinct)
    return GemmRate(flops / best / 1e9, per_kernel, tuple(shapes))


def utilisation_line(name: str, tokens_per_second: float, flops_per_token: float, rate: GemmRate | float) -> str:
    """``name``: tokens/s, the model's GFLOP/s and the fraction of the GEMM rate they are."""
    gflops = rate.gflops if isinstance(rate, GemmRate) else rate
    achieved = tokens_per_second * flops_per_token / 1e9
    return (f"{name}: {tokens_per_second:,.0f} tokens/s x {flops_per_token / 1e6:.0f} MFLOP/token = "
            f"{achieved:.1f} GFLOP/s = {achieved / gflops:.1%} of the GEMM rate of its shapes ({gflops:.1f} GFLOP/s)")


def layers_rate(model: Any, rows: Sequence[int], *, repeats: int = 3) -> float:
    """GFLOP/s of ``model``'s own linear layers (their kernels, packed weights and biases) run on random inputs,
    every layer in model order at each of ``rows`` in turn: the model's GEMMs at its batches' shapes with nothing
    else in between (the median of ``repeats`` such passes, after one untimed pass at the first rows)."""
    import torch

    layers = linear_layers(model)
    inputs = {k: torch.randn(max(rows), k) for k in {k for _, k, _ in layers}}
    samples = []
    with torch.inference_mode():
        for layer, k, _ in layers:
            layer(inputs[k][:rows[0]])
        for _ in range(repeats):
            start = time.perf_counter()
            for count in rows:
                for layer, k, _ in layers:
                    layer(inputs[k][:count])
            samples.append(time.perf_counter() - start)
    return flops_per_row([(1, k, n) for _, k, n in layers]) * sum(rows) / statistics.median(samples) / 1e9


# What a profiled operator (by name, self time) does in a transformer's forward pass; the first match counts.
OP_KINDS = (
    ("GEMMs", ("_linear_pointwise", "addmm", "aten::mm", "bmm", "matmul")),
    ("attention", ("scaled_dot_product", "softmax")),
    ("layer norm", ("layer_norm", "rms_norm")),
    ("embeddings", ("embedding", "index_select")),
)


def op_kind(name: str) -> str:
    """The kind (:data:`OP_KINDS`) of the profiled operator ``name``, or ``other ops``."""
    return next((kind for kind, parts in OP_KINDS if any(part in name for part in parts)), "other ops")


@dataclass(frozen=True)
class TimeShares:
    """Where one profiled run's wall time went: seconds per kind of operator (self time), ``outside ops`` for the
    rest (Python, batching, the profiler's own overhead), and the operators of ``other ops`` with the most time."""

    wall: float
    seconds: dict[str, float]
    top_other: tuple[tuple[str, float], ...]

    def describe(self) -> str:
        shares = ", ".join(f"{kind} {value / self.wall:.1%}" for kind, value in self.seconds.items())
        top = ", ".join(f"{name} {value / self.wall:.1%}" for name, value in self.top_other)
        return f"time of a profiled pass ({self.wall:.2f} s): {shares} (largest other ops: {top})"


def time_shares(run: Callable[[], Any], *, top: int = 4) -> TimeShares:
    """Run ``run`` once under torch.profiler (CPU operators) and split its wall time by :func:`op_kind`."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as profiler:
        start = time.perf_counter()
        run()
        wall = time.perf_counter() - start
    seconds = {kind: 0.0 for kind, _ in OP_KINDS} | {"other ops": 0.0}
    other: dict[str, float] = {}
    for event in profiler.key_averages():
        value = event.self_cpu_time_total / 1e6
        kind = op_kind(event.key)
        seconds[kind] += value
        if kind == "other ops":
            other[event.key] = value
    seconds["outside ops"] = max(0.0, wall - sum(seconds.values()))
    largest = tuple(sorted(other.items(), key=lambda item: -item[1])[:top])
    return TimeShares(wall, seconds, largest)
