"""scripts/gemm_rate.py, the benchmarks' matrix-multiply rate on a model's own GEMM shapes: which shapes a model
has, their FLOPs (hand-counted), and a rate measured over them."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from gemm_rate import flops_per_row, gemm_rate, linear_shapes, utilisation_line  # noqa: E402


def test_shapes_of_linear_layers_and_gpt2_conv1d() -> None:
    from transformers.pytorch_utils import Conv1D

    model = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU(), torch.nn.Linear(6, 2, bias=False),
                                Conv1D(10, 2))  # GPT-2's layer: 2 inputs, 10 outputs
    assert linear_shapes(model, 8) == [(8, 4, 6), (8, 6, 2), (8, 2, 10)]
    assert linear_shapes(model, 3, extra=[(2, 7)])[0] == (3, 2, 7)
    # per row: 2 x (4*6 + 6*2 + 2*10) = 112 multiply-adds counted as 2 FLOPs each
    assert flops_per_row(linear_shapes(model, 8)) == 112


def test_rate_is_measured_per_kernel_and_the_fastest_is_taken() -> None:
    rate = gemm_rate([(64, 32, 48), (64, 48, 32), (64, 32, 48)], seconds=0.03, repeats=1)
    assert "blas" in rate.kernels and rate.gflops > 0
    assert rate.gflops >= max(rate.kernels.values()) * (1 - 1e-9)
    line = utilisation_line("ours", 1000.0, 2e6, 4.0)  # 1000 tokens/s x 2 MFLOP = 2 GFLOP/s of 4
    assert "= 2.0 GFLOP/s = 50.0% of the GEMM rate" in line
