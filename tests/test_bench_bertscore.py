"""scripts/bench_bertscore.py's breakdown of a forward pass and the ceiling it derives (hand-computed), and the
profiler split it rests on (scripts/gemm_rate.py) on a pass that is one matrix multiply."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from bench_bertscore import ceiling_lines  # noqa: E402
from gemm_rate import TimeShares, op_kind, time_shares  # noqa: E402


def test_operators_are_sorted_by_what_they_do() -> None:
    assert op_kind("mkldnn::_linear_pointwise") == "GEMMs"
    assert op_kind("aten::addmm") == "GEMMs"
    assert op_kind("aten::_scaled_dot_product_flash_attention_for_cpu") == "attention"
    assert op_kind("aten::native_layer_norm") == "layer norm"
    assert op_kind("aten::index_select") == "embeddings"
    assert op_kind("aten::where") == "other ops"


def test_a_pass_of_one_matrix_multiply_is_mostly_gemm() -> None:
    inputs, weight = torch.randn(512, 512), torch.randn(512, 512)
    shares = time_shares(lambda: [torch.nn.functional.linear(inputs, weight) for _ in range(20)])
    assert set(shares.seconds) == {"GEMMs", "attention", "layer norm", "embeddings", "other ops", "outside ops"}
    assert sum(shares.seconds.values()) == pytest.approx(shares.wall, rel=1e-6)
    assert shares.seconds["GEMMs"] > 0.5 * shares.wall
    assert shares.seconds["attention"] == shares.seconds["layer norm"] == 0.0


def test_ceiling_by_hand() -> None:
    # 1,000 tokens (900 real) of 2 MFLOP each (1.5 of them in linear layers) in a 0.02 s pass: 100 GFLOP/s;
    # the linear layers took 0.01 s (150 GFLOP/s), attention 0.002 s, layer norm 0.003 s; the GEMM rate is 200.
    shares = TimeShares(0.02, {"GEMMs": 0.01, "attention": 0.002, "layer norm": 0.003, "embeddings": 0.001,
                               "other ops": 0.002, "outside ops": 0.002}, ())
    padding, inside, ceiling = ceiling_lines(shares, 0.02, 1000, 2e6, 1.5e6, 200.0, 160.0, 900)
    assert "100 of the 1,000 tokens through the linear layers (10.0%)" in padding
    assert "150.0 GFLOP/s = 75.0% of the GEMM rate" in inside and "160.0 GFLOP/s = 80.0%" in inside
    # 2 GFLOP in 0.02 s = 50%; in the GEMMs' 0.01 s = 100%; in 0.015 s (with attention and norms) = 66.7%
    assert "the timed pass 50.0% of the GEMM rate; with every operator but the GEMMs free 100.0%" in ceiling
    assert "the rest free 66.7%" in ceiling
