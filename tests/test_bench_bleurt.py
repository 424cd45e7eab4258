"""scripts/bench_bleurt.py: its named architectures against published sizes, its count of the tokens each side's
forward passes read (hand-computed), and a run at BLEURT-20-D12's width against bleurt-pytorch."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from bench_bleurt import SHAPES, padded_tokens  # noqa: E402
from learned_oracle import oracle_python  # noqa: E402

from metrics._core.core_bleurt_model import BleurtConfig, BleurtRegressor  # noqa: E402


def _parameters(shape: str, vocab_size: int) -> int:
    sizes = {name: value for name, value in SHAPES[shape].items() if name != "initializer_range"}
    with torch.device("meta"):
        model = BleurtRegressor(BleurtConfig.from_dict({**sizes, "vocab_size": vocab_size}))
    return sum(parameter.numel() for parameter in model.parameters())


def test_bleurt_20_has_rembert_sizes() -> None:
    from transformers import RemBertConfig  # google/rembert's defaults; BLEURT-20 is RemBERT-32 (checkpoints.md)

    rembert, shape = RemBertConfig(), SHAPES["bleurt-20"]
    assert (shape["hidden_size"], shape["num_hidden_layers"], shape["num_attention_heads"],
            shape["intermediate_size"], shape["embedding_size"]) == (
        rembert.hidden_size, rembert.num_hidden_layers, rembert.num_attention_heads, rembert.intermediate_size,
        rembert.input_embedding_size)


def test_d12_has_the_published_parameter_count() -> None:
    # google-research/bleurt checkpoints.md: BLEURT-20-D12 has 167M parameters; its config.json's vocabulary: 120,300
    assert _parameters("d12", 120_300) == pytest.approx(167e6, rel=0.01)


def test_padded_tokens_by_hand() -> None:
    lengths = [5, 3, 4, 2]
    assert padded_tokens(lengths, [[0, 1], [2, 3]]) == 2 * 5 + 2 * 4
    assert padded_tokens(lengths, [[0], [2, 1], [3]]) == 5 + 2 * 4 + 2
    assert padded_tokens(lengths, [range(4)]) == 4 * 5


@pytest.mark.slow  # builds a one-layer checkpoint with bleurt-pytorch and times both sides once: about 40 s
def test_d12_width_run_matches_bleurt_pytorch_and_counts_padding(tmp_path: Path) -> None:
    oracle_python()  # skips, naming the set-up command, without the oracle environment
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_EVALUATE_CACHE": str(tmp_path / "evaluate"),
                   "HF_DATASETS_CACHE": str(tmp_path / "datasets")}
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_bleurt.py"), "--shape", "d12", "--layers",
                           "1", "--systems", "2", "--segments", "10", "--repeats", "1", "--threads", "1"],
                          capture_output=True, text=True, env=environment, timeout=600, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-4000:]
    out = done.stdout
    assert "20 pairs" in out and "'hidden_size': 1024" in out and "'num_hidden_layers': 1" in out
    # one layer's four linear shapes (query/key/value, attention output, feed-forward in and out)
    assert "model's 4 linear shapes" in out
    difference = float(re.search(r"max abs score difference (\S+)", out).group(1))
    assert difference < 1e-4
    theirs = int(re.search(r"bleurt-pytorch: .* read (\d+) tokens", out).group(1))
    ours = int(re.search(r"ours: .* read (\d+) tokens", out).group(1))
    real = int(re.search(r"(\d+) tokens in 20 pairs", out).group(1))
    assert real < theirs and ours <= real  # bleurt-pytorch pads its batches; our linear layers read no padding
    assert re.search(r"bound: ratio <= .* = \d+\.\d+x", out)
