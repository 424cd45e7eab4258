"""scripts/bench_gpu.py: its CPU smoke run (the table's structure, fp32 parity 0 on the same device) and its refusal
to run without a GPU unless `--device cpu` is given. The GPU run itself needs a GPU and is not run here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from learned_oracle import oracle_python

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "bench_gpu.py"
COLUMNS = ["metric", "precision", "max abs diff (against)", "ours tokens/s", "reference tokens/s", "speedup",
           "ref diff", "model GFLOP/s", "GEMM GFLOP/s", "fraction"]


def run(tmp_path: Path, *arguments: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "HF_HUB_OFFLINE": "1",
                   "HF_EVALUATE_CACHE": str(tmp_path / "evaluate"), "HF_DATASETS_CACHE": str(tmp_path / "datasets")}
    return subprocess.run([sys.executable, str(SCRIPT), *arguments], capture_output=True, text=True,
                          env=environment, timeout=300, check=False, cwd=ROOT)


def test_without_a_gpu_it_exits_2_with_the_message(tmp_path):
    done = run(tmp_path, "--small", "--only", "bleurt")
    assert done.returncode == 2, done.stderr[-2000:]
    assert "no CUDA GPU is available" in done.stderr and "--device cpu" in done.stderr
    assert done.stdout == ""


@pytest.mark.slow  # about 15 s of CPU; 50 s of wall time on a busy 2-core machine
def test_cpu_smoke_run_table_and_json(tmp_path):
    out = tmp_path / "bench.json"
    done = run(tmp_path, "--device", "cpu", "--small", "--only", "comet,bleurt", "--reference-python", "",
               "--json", str(out))
    assert done.returncode == 0, done.stderr[-4000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith("|")]
    assert [cell.strip() for cell in lines[0].strip("|").split("|")] == COLUMNS
    body = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]
    assert [(row[0], row[1]) for row in body] == [(metric, precision) for metric in ("comet", "bleurt")
                                                  for precision in ("fp32", "bf16", "fp16")]
    for row in body:
        assert len(row) == len(COLUMNS)
        if row[1] == "fp32":
            assert row[2] == "0 (CPU fp32)"  # the same device: identical scores
            assert "not installed" in row[4]
        elif row[1] == "bf16":
            assert row[2].endswith("(cpu fp32)") and float(row[2].split()[0]) < 0.1
            assert float(row[3]) > 0 and row[9].endswith("%")
        else:
            assert "needs a GPU" in row[2]

    report = json.loads(out.read_text())
    assert report["device"] == "cpu" and report["device_name"].startswith("CPU")
    assert {"date", "torch", "cuda", "gemm_gflops", "rows"} <= set(report)
    assert any(key.endswith("fp32") for key in report["gemm_gflops"])
    fp32 = [row for row in report["rows"] if row["precision"] == "fp32"]
    assert [row["metric"] for row in fp32] == ["comet", "bleurt"]
    for row in fp32:
        assert row["max_abs_diff"] == 0.0 and row["against"] == "CPU fp32"
        assert row["tokens_per_s"] > 0 and 0 < row["gemm_fraction"] and row["flops_per_token"] > 0
        assert row["reference_tokens_per_s"] is None
        assert 0 < row["encoded_tokens"] <= row["tokens"]  # each distinct text (comet) or pair (bleurt) once


@pytest.mark.slow  # builds three tiny checkpoints with unbabel-comet and runs its predict: about a minute
def test_comet_models_against_unbabel_comet_and_the_fraction_counts_encoded_tokens(tmp_path):
    out = tmp_path / "bench.json"
    done = run(tmp_path, "--device", "cpu", "--small", "--only", "comet,cometkiwi,xcomet", "--systems", "2",
               "--cpu-items", "3", "--reference-python", str(oracle_python()), "--json", str(out))
    assert done.returncode == 0, done.stderr[-4000:]
    rows = {(row["metric"], row["precision"]): row for row in json.loads(out.read_text())["rows"]}
    for metric in ("comet", "cometkiwi", "xcomet"):
        row = rows[metric, "fp32"]
        assert "error" not in row, row
        assert row["against"] == "CPU fp32, first 3" and row["max_abs_diff"] < 1e-5
        assert row["reference"] == "unbabel-comet predict" and row["reference_max_abs_diff"] < 1e-5
        assert row["items"] == 16  # 2 systems x 8 segments
        # the fraction counts the tokens our forward passes read, fewer than the inputs' where texts repeat
        assert 0 < row["encoded_tokens"] <= row["tokens"]
        expected = row["encoded_tokens"] / row["seconds"] * row["flops_per_token"] / 1e9
        assert row["model_gflops"] == pytest.approx(expected, rel=1e-12)
    # COMET-DA encodes each distinct text once: the 8 sources and 8 references are shared by the 2 systems
    assert rows["comet", "fp32"]["encoded_tokens"] < rows["comet", "fp32"]["tokens"]
