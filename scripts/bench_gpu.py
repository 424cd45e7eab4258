#!/usr/bin/env python3
"""GPU benchmark of the model metrics (perplexity, bertscore, comet, cometkiwi, xcomet, bleurt): parity, precisions, speed against the
reference libraries on the same GPU, and the fraction of the GPU's measured matrix-multiply rate reached.

Per metric, in one run on one device:

- the device's matrix-multiply rate, measured here: a GEMM of the model's feed-forward shape ([batch tokens x
  width] x [width x inner]) in fp32 (strict, what our fp32 path runs), tf32 (CUDA only, for information), bf16 and
  fp16 (CUDA only);
- our module's scores on the device in fp32 against the same module on the CPU in fp32 (max abs difference; with
  ``--device cpu`` both runs are on the CPU and the difference must be 0), and in bf16 and fp16 against the
  device's fp32 scores;
- tokens per second (input tokens scored, the same count for both sides) of ours and of the reference library on
  the same device: evaluate's perplexity algorithm (re-implemented in tests/perplexity_oracle.py, as
  scripts/bench_perplexity.py runs it), bert-score (in this environment), unbabel-comet's ``predict`` and
  bleurt-pytorch's README loop (in the oracle environment given by --reference-python, run in a child process of
  that interpreter: this script with ``--child``); "not installed" where the reference cannot be imported;
- the fraction of the measured GEMM rate (same precision) our forward passes reach: model FLOPs per token x
  the tokens they read per second / rate (``bench_perplexity.flops_per_token``,
  ``model_flops.encoder_flops_per_token``); where ours de-duplicates (bertscore, comet), the tokens of the distinct
  texts or joined inputs, not every input's.

Models: the packaged SmolLM2-135M GGUF (perplexity) and all-MiniLM-L6-v2 (bertscore, --layer); for comet,
cometkiwi, xcomet and bleurt, random-weight checkpoints of realistic shape built offline by the reference libraries
(COMET-DA, a CometKiwi-style unified model scoring without references and XCOMET scoring with them, as
scripts/bench_comet.py builds them, on wmt22-comet-da's and wmt22-cometkiwi-da's XLM-R large encoder, 24 layers of
width 1024 (XCOMET's released models are XLM-R XL/XXL: this is its architecture at large size); BLEURT:
BLEURT-20-D12's shape, ``bench_bleurt.SHAPES["d12"]``, 12 layers of width 1024, embedding projection 128), or with
--small the tests' tiny checkpoints (tests/comet_checkpoint.py, tests/bleurt_checkpoint.py) and a few short inputs,
so that a whole run takes under a minute. Prints one table; --json writes it with the date, the device's name and
the torch and CUDA versions. Without a CUDA GPU it exits with status 2 unless ``--device cpu`` (a smoke run of the
same code on the CPU; fp16 is then skipped, since our CPU path refuses it). ``--cpu-items N`` checks the COMET
models' CPU parity on the first N examples only, for corpora the host would take minutes on (e.g. the full 3,000 x 4
WMT17 examples).

    python scripts/bench_gpu.py [--device cuda] [--small] [--only perplexity,bertscore,comet,cometkiwi,xcomet,bleurt]
                                [--json PATH] [--repeats 3] [--reference-python .venv-oracles/bin/python]
                                [--systems 2] [--segments 1000] [--cpu-items 0]
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import project

ROOT = project.ROOT
METRICS = ("perplexity", "bertscore", "comet", "cometkiwi", "xcomet", "bleurt")
COMET_KINDS = {"comet": "da", "cometkiwi": "kiwi", "xcomet": "xcomet"}  # bench_comet.MODELS' keys
DEFAULT_REFERENCE_PYTHON = ROOT / ".venv-oracles" / "bin" / "python"
NO_GPU = ("bench_gpu.py: no CUDA GPU is available (torch.cuda.is_available() is False); run it on a machine with "
          "one, or pass --device cpu for a smoke run on the CPU")
COMET_SHAPE = {"hidden_size": 1024, "layers": 24, "heads": 16, "inner": 4096}  # XLM-R large (wmt22-comet-da)
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONWARNINGS": "ignore",
           "TOKENIZERS_PARALLELISM": "false"}


# --- the child: runs under --reference-python (the oracle environment), imports only the reference libraries ---

def _child_sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _child_timed(run: Callable[[], list[float]], repeats: int, device: str) -> dict[str, Any]:
    run()  # warm-up
    times, scores = [], []
    for _ in range(repeats):
        _child_sync(device)
        start = time.perf_counter()
        scores = run()
        _child_sync(device)
        times.append(time.perf_counter() - start)
    return {"scores": scores, "seconds": statistics.median(times)}


def child_comet_predict(payload: dict[str, Any]) -> dict[str, Any]:
    """unbabel-comet's ``load_from_checkpoint`` and ``predict`` on the device (gpus=1 on CUDA)."""
    from comet import load_from_checkpoint

    model = load_from_checkpoint(payload["checkpoint"], local_files_only=True)
    gpus = 1 if payload["device"].startswith("cuda") else 0

    def run() -> list[float]:
        output = model.predict(payload["samples"], batch_size=payload["batch_size"], gpus=gpus, progress_bar=False,
                               num_workers=0)
        return [float(score) for score in output.scores]

    return _child_timed(run, payload["repeats"], payload["device"])


def child_bleurt_build(payload: dict[str, Any]) -> dict[str, Any]:
    """tests/bleurt_oracle_run.py's ``build``: a checkpoint saved by bleurt-pytorch, of the sizes payload["sizes"]."""
    import bleurt_oracle_run

    return bleurt_oracle_run.build(payload)


def child_bleurt_score(payload: dict[str, Any]) -> dict[str, Any]:
    """bleurt-pytorch's README loop (as tests/bleurt_oracle_run.py's ``score``), the model and inputs on the device."""
    import torch
    from bleurt_pytorch import BleurtForSequenceClassification, BleurtTokenizer

    device = payload["device"]
    model = BleurtForSequenceClassification.from_pretrained(payload["folder"]).to(device).eval()
    tokenizer = BleurtTokenizer.from_pretrained(payload["folder"])
    references, candidates, size = payload["references"], payload["candidates"], payload["batch_size"]

    def run() -> list[float]:
        scores: list[float] = []
        with torch.no_grad():
            for begin in range(0, len(references), size):
                inputs = tokenizer(references[begin:begin + size], candidates[begin:begin + size], padding="longest",
                                   return_tensors="pt")
                scores.extend(model(**{k: v.to(device) for k, v in inputs.items()}).logits.flatten().tolist())
        return scores

    return _child_timed(run, payload["repeats"], device)


CHILD_ACTIONS = {"comet-predict": child_comet_predict, "bleurt-build": child_bleurt_build,
                 "bleurt-score": child_bleurt_score}


def child_main() -> None:
    import logging
    import warnings

    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    sys.path.insert(0, str(ROOT / "tests"))
    payload = json.loads(sys.stdin.read())
    print(json.dumps(CHILD_ACTIONS[payload.pop("action")](payload)))


class NotInstalled(Exception):
    """The reference library cannot be imported (or its interpreter does not exist)."""


def run_child(python: Path | None, payload: dict[str, Any]) -> Any:
    """This script under ``python`` with ``--child`` on ``payload``; the JSON of its last line of output."""
    if python is None or not python.is_file():
        raise NotInstalled(f"not installed ({python or 'no --reference-python'})")
    environment = {**os.environ, **OFFLINE}
    environment.pop("PYTHONPATH", None)
    done = subprocess.run([str(python), str(Path(__file__).resolve()), "--child"], input=json.dumps(payload),
                          capture_output=True, text=True, env=environment, check=False, cwd=ROOT)
    if done.returncode != 0:
        if "ModuleNotFoundError" in done.stderr or "ImportError" in done.stderr:
            raise NotInstalled(f"not installed in {python}")
        raise RuntimeError(f"{payload['action']} under {python} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- the benchmark ---

def synchronize(device: Any) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed_scores(run: Callable[[], list[float]], repeats: int, device: Any) -> tuple[float, list[float]]:
    """A warm-up call (which loads the model), then the median wall time of ``repeats`` synchronised calls."""
    run()

    def synced() -> list[float]:
        synchronize(device)
        result = run()
        synchronize(device)
        return result

    return project.timed(synced, repeats)


def gemm_rate(device: Any, shape: tuple[int, int, int], precision: str, seconds: float) -> float:
    """GFLOP/s of ``torch.matmul`` of [rows x width] by [width x inner] in ``precision`` ('fp32' strict, 'tf32',
    'bf16', 'fp16'), run for about ``seconds``."""
    import torch

    rows, width, inner = shape
    dtype = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[precision]
    generator = torch.Generator(device="cpu").manual_seed(0)
    a = torch.randn(rows, width, generator=generator).to(device=device, dtype=dtype)
    b = torch.randn(width, inner, generator=generator).to(device=device, dtype=dtype)
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    try:
        a @ b
        synchronize(device)
        repeats, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            for _ in range(10):
                a @ b
            repeats += 10
            synchronize(device)
        return 2 * rows * width * inner * repeats / (time.perf_counter() - start) / 1e9
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous


def max_abs(a: list[float], b: list[float]) -> float:
    return max((abs(x - y) for x, y in zip(a, b, strict=True)), default=0.0)


class Case:
    """One metric's benchmark: ``make(device, precision)`` gives a zero-argument call of our module returning
    per-item scores; ``reference(device)`` gives (seconds, scores) of the reference library or raises
    NotInstalled. ``tokens`` are the inputs' tokens (the same count for both sides, for tokens per second);
    ``encoded_tokens`` those our forward passes read (distinct texts only where ours de-duplicates; the GEMM
    fraction counts these). ``cpu_make``, where given, scores only the first items on the CPU (the parity check of a
    corpus too large for the host in the time a device is lent); its scores are compared with the device's first
    ones."""

    def __init__(self, metric: str, model: str, items: int, tokens: int, flops_per_token: float,
                 shape: tuple[int, int, int], make: Callable[[Any, str], Callable[[], list[float]]],
                 reference: Callable[[Any], tuple[float, list[float]]], reference_name: str,
                 score: str = "score", encoded_tokens: int | None = None,
                 cpu_make: Callable[[], list[float]] | None = None) -> None:
        self.__dict__.update(locals())
        del self.__dict__["self"]
        self.encoded_tokens = tokens if encoded_tokens is None else encoded_tokens


def perplexity_case(args: argparse.Namespace, device: Any) -> Case:
    from bench_perplexity import evaluate_algorithm, flops_per_token, ours, summaries

    from metrics._core.core_lm_models import load_lm

    texts = summaries(args.texts)
    if args.small:
        texts = [text.split("\n")[0] for text in texts]

    model = args.perplexity_model

    def make(where: Any, precision: str) -> Callable[[], list[float]]:
        lm = load_lm("perplexity", model, device=where, precision=None if precision == "fp32" else precision)
        return lambda: [math.log(value) for value in ours(lm, texts, args.batch_size)]

    base = load_lm("perplexity", model, device=device)
    tokenizer, config = base.tokenizer, base.model.config
    lengths = [len(tokenizer(text, add_special_tokens=False).input_ids) + 1 for text in texts]

    def reference(where: Any) -> tuple[float, list[float]]:
        plain = load_lm("perplexity", model, device=where, onednn=where.type != "cpu")  # PyTorch's own linears
        run = lambda: [math.log(value) for value in  # noqa: E731
                       evaluate_algorithm(plain.model, plain.tokenizer, texts, args.evaluate_batch_size, where)]
        return timed_scores(run, args.repeats, where)

    return Case("perplexity", args.perplexity_label, len(texts),
                sum(lengths) - len(lengths), flops_per_token(base.model, sum(lengths) / len(lengths)),
                (args.batch_size * max(lengths), config.hidden_size, config.intermediate_size), make, reference,
                "evaluate's algorithm", score="ln perplexity")


def pairs(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    from bench_bertscore import corpus

    return corpus(args.systems, args.segments)


def bertscore_case(args: argparse.Namespace, device: Any) -> Case:
    import evaluate
    from bertscore_common import packaged_model

    from metrics._core.core_embed import encode_text
    from model_flops import encoder_flops_per_token

    predictions, references = pairs(args)
    metric = evaluate.load(str(ROOT / "metrics" / "bertscore"))

    def flat(result: dict[str, list[float]]) -> list[float]:
        return result["precision"] + result["recall"] + result["f1"]

    def make(where: Any, precision: str) -> Callable[[], list[float]]:
        return lambda: flat(metric.compute(predictions=predictions, references=references, num_layers=args.layer,
                                           model_type=args.bertscore_model, device=str(where), precision=precision,
                                           batch_size=64))

    loaded = packaged_model(model_type=args.bertscore_model)
    config = loaded.model.config
    lengths = [len(encode_text(loaded.tokenizer, text)) for text in predictions + references]
    distinct = sum(len(encode_text(loaded.tokenizer, text)) for text in set(predictions + references))

    def reference(where: Any) -> tuple[float, list[float]]:
        try:
            from bert_score import BERTScorer
        except ImportError as error:
            raise NotInstalled("not installed") from error
        scorer = BERTScorer(model_type=str(loaded.source.path), num_layers=args.layer,
                            nthreads=0, device=str(where), batch_size=64)
        run = lambda: [value for tensor in scorer.score(predictions, references, batch_size=64)  # noqa: E731
                       for value in tensor.tolist()]
        return timed_scores(run, args.repeats, where)

    return Case("bertscore", f"{args.bertscore_label}, layer {args.layer}", len(predictions), sum(lengths),
                encoder_flops_per_token(config.hidden_size, config.intermediate_size, args.layer,
                                        sum(lengths) / len(lengths)),
                (64 * max(lengths), config.hidden_size, config.intermediate_size), make, reference, "bert-score",
                score="P, R, F", encoded_tokens=distinct)


def comet_checkpoint(args: argparse.Namespace, work: Path, kind: str) -> tuple[str, str]:
    """(the checkpoint given to our module, unbabel-comet's model.ckpt) of bench_comet's model ``kind``; the tests'
    tiny regression one with --small and no reference."""
    have_reference = args.reference_python is not None and args.reference_python.is_file()
    if args.small and not have_reference and kind == "da":  # unbabel-comet cannot load it: ours only
        from comet_checkpoint import tiny_comet_checkpoint

        folder = Path(tiny_comet_checkpoint())
        return str(folder), str(folder / "checkpoints" / "model.ckpt")
    from bench_comet import MODELS, oracle

    if not have_reference:
        raise NotInstalled("unbabel-comet is needed to build the realistic checkpoint: not installed")
    shape = {"hidden_size": 32, "layers": 2, "heads": 4, "inner": 64} if args.small else COMET_SHAPE  # bench_comet's
    identifier, hparams, _ = MODELS[kind]
    texts = project.read_lines(project.WMT17 / "newstest2017.ref.de")[:1000]
    encoder, folder = work / "comet-encoder", work / f"comet-{kind}"
    if not encoder.is_dir():
        oracle({"action": "encoder", "folder": str(encoder), "encoder_model": "XLM-RoBERTa", "texts": texts,
                "hidden_size": shape["hidden_size"], "layers": shape["layers"], "heads": shape["heads"],
                "intermediate_size": shape["inner"]}, python=args.reference_python)
    oracle({"action": "build", "folder": str(folder), "encoder": str(encoder), "class_identifier": identifier,
            "seed": 0, "hparams": hparams(shape["hidden_size"])}, python=args.reference_python)
    return str(folder), str(folder / "checkpoints" / "model.ckpt")


def comet_case(args: argparse.Namespace, device: Any, work: Path, name: str) -> Case:
    """COMET-DA (``comet``), CometKiwi (``cometkiwi``: source only) or XCOMET (``xcomet``: with references) on a
    random XLM-R large encoder, against unbabel-comet's ``predict``."""
    import evaluate
    import transformers
    import yaml
    from bench_comet import MODELS, examples, sample_tokens

    from model_flops import encoder_flops_per_token

    kind = COMET_KINDS[name]
    identifier, _, with_references = MODELS[kind]
    folder, ckpt = comet_checkpoint(args, work, kind)
    corpus = examples(args.segments, args.systems)
    if not with_references:
        corpus.pop("references")
    metric = evaluate.load(str(ROOT / "metrics" / "comet"), folder)

    def make(where: Any, precision: str) -> Callable[[], list[float]]:
        return lambda: metric.compute(**corpus, device=str(where), precision=precision, batch_size=64)["scores"]

    first = {key: values[:args.cpu_items] for key, values in corpus.items()}
    cpu_make = (lambda: metric.compute(**first, device="cpu", batch_size=64)["scores"]) if args.cpu_items else None
    encoder = Path(yaml.safe_load((Path(folder) / "hparams.yaml").read_text())["pretrained_model"])
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(encoder))
    config = json.loads((encoder / "config.json").read_text())
    keys = ("src", "mt", "ref") if with_references else ("src", "mt")
    samples = [dict(zip(keys, texts)) for texts in zip(*corpus.values(), strict=True)]
    tokens, distinct = sample_tokens(tokenizer, identifier, samples)
    inputs_per_sample = 1 if identifier == "unified_metric" else 3

    def reference(where: Any) -> tuple[float, list[float]]:
        result = run_child(args.reference_python, {"action": "comet-predict", "checkpoint": ckpt, "samples": samples,
                                                   "batch_size": 64, "device": str(where), "repeats": args.repeats})
        return result["seconds"], result["scores"]

    width, inner, layers = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
    label = {"da": "COMET-DA", "kiwi": "CometKiwi (unified, source only)", "xcomet": "XCOMET (with references)"}
    mean_length = tokens / len(samples) / inputs_per_sample
    return Case(name, f"{label[kind]}, XLM-R {layers} layers x {width} (random weights)",
                len(samples), tokens,
                encoder_flops_per_token(width, inner, layers, mean_length), (64 * round(mean_length), width, inner), make, reference, "unbabel-comet predict",
                encoded_tokens=distinct, cpu_make=cpu_make)


def bleurt_case(args: argparse.Namespace, device: Any, work: Path) -> Case:
    import evaluate
    from bench_bleurt import SHAPES

    from metrics._core.core_bleurt_tokenize import load_texts_tokenizer, tokenize_texts
    from model_flops import encoder_flops_per_token

    predictions, references = pairs(args)
    if args.small:
        from bleurt_checkpoint import tiny_bleurt_checkpoint

        folder = Path(tiny_bleurt_checkpoint())
    else:
        folder = work / "bleurt"
        training = work / "bleurt-training.txt"
        training.write_text("\n".join(project.read_lines(project.WMT17 / "newstest2017.ref.de")[:3000]) + "\n",
                            encoding="utf-8")
        run_child(args.reference_python, {"action": "bleurt-build", "folder": str(folder),
                                          "training_text": str(training), "seed": 0, "sizes": SHAPES["d12"]})
    metric = evaluate.load(str(ROOT / "metrics" / "bleurt"))

    def make(where: Any, precision: str) -> Callable[[], list[float]]:
        return lambda: metric.compute(predictions=predictions, references=references, checkpoint=str(folder),
                                      batch_size=args.bleurt_batch_size, device=str(where),
                                      precision=precision)["scores"]

    tokenizer = load_texts_tokenizer(folder)
    lengths = [len(a) + len(b) + 3 for a, b in zip(tokenize_texts(tokenizer, references),
                                                   tokenize_texts(tokenizer, predictions), strict=True)]
    distinct = sum(dict(zip(zip(references, predictions, strict=True), lengths, strict=True)).values())
    config = json.loads((folder / "config.json").read_text())

    def reference(where: Any) -> tuple[float, list[float]]:
        result = run_child(args.reference_python, {"action": "bleurt-score", "folder": str(folder),
                                                   "references": references, "candidates": predictions,
                                                   "batch_size": args.bleurt_batch_size, "device": str(where),
                                                   "repeats": args.repeats})
        return result["seconds"], result["scores"]

    width, inner, layers = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
    return Case("bleurt", f"BLEURT {layers} layers x {width} ({'tiny test' if args.small else 'random weights'})",
                len(predictions), sum(lengths),
                encoder_flops_per_token(width, inner, layers, sum(lengths) / len(lengths)),
                (args.bleurt_batch_size * max(lengths), width, inner), make, reference, "bleurt-pytorch",
                encoded_tokens=distinct)


def measure(case: Case, args: argparse.Namespace, device: Any, rates: dict[str, float]) -> list[dict[str, Any]]:
    """The case's rows: one per precision of ours, the reference's numbers on the fp32 row."""
    import torch

    cpu = torch.device("cpu")
    cpu_scores = case.cpu_make() if case.cpu_make is not None else case.make(cpu, "fp32")()
    precisions = ["fp32", "bf16"] + (["fp16"] if device.type == "cuda" else [])
    rows, fp32_scores = [], None
    for precision in precisions:
        key = f"{case.shape[0]}x{case.shape[1]}x{case.shape[2]} {precision}"
        if key not in rates:
            rates[key] = gemm_rate(device, case.shape, precision, args.gemm_seconds)
        row: dict[str, Any] = {"metric": case.metric, "model": case.model, "precision": precision,
                               "items": case.items, "tokens": case.tokens, "score": case.score,
                               "flops_per_token": case.flops_per_token, "gemm_shape": list(case.shape),
                               "gemm_gflops": rates[key]}
        seconds, scores = timed_scores(case.make(device, precision), args.repeats, device)
        if precision == "fp32":
            fp32_scores = scores
            row.update(against=f"CPU fp32, first {len(cpu_scores)}" if case.cpu_make is not None else "CPU fp32",
                       max_abs_diff=max_abs(scores[:len(cpu_scores)], cpu_scores))
        else:
            row.update(against=f"{device.type} fp32", max_abs_diff=max_abs(scores, fp32_scores))
        model_gflops = case.encoded_tokens / seconds * case.flops_per_token / 1e9
        row.update(seconds=seconds, tokens_per_s=case.tokens / seconds, encoded_tokens=case.encoded_tokens,
                   model_gflops=model_gflops,
                   gemm_fraction=model_gflops / rates[key])
        if precision == "fp32":
            try:
                ref_seconds, ref_scores = case.reference(device)
            except NotInstalled as error:
                row.update(reference=f"{case.reference_name}: {error}", reference_tokens_per_s=None)
            except Exception as error:  # noqa: BLE001 - the reference's failure is reported, ours still is
                last = (str(error).strip().splitlines() or [type(error).__name__])[-1][:120]
                row.update(reference=f"{case.reference_name}: failed ({last})", reference_tokens_per_s=None)
            else:
                row.update(reference=case.reference_name, reference_seconds=ref_seconds,
                           reference_tokens_per_s=case.tokens / ref_seconds, speedup=ref_seconds / seconds,
                           reference_max_abs_diff=max_abs(scores, ref_scores))
        rows.append(row)
        print(f"  {case.metric} {precision}: {seconds:.3f} s", file=sys.stderr, flush=True)
    if device.type != "cuda":
        rows.append({"metric": case.metric, "model": case.model, "precision": "fp16",
                     "skipped": "fp16 needs a GPU (our CPU path refuses it)"})
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    head = ("| metric | precision | max abs diff (against) | ours tokens/s | reference tokens/s | speedup | "
            "ref diff | model GFLOP/s | GEMM GFLOP/s | fraction |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for row in rows:
        if "skipped" in row or "error" in row:
            lines.append(f"| {row['metric']} | {row['precision']} | {row.get('skipped') or row['error']} "
                         "| | | | | | | |")
            continue
        if row["precision"] == "fp32":
            if row.get("reference_tokens_per_s") is None:
                reference, speedup, ref_diff = row["reference"], "", ""
            else:
                reference = f"{row['reference_tokens_per_s']:.0f} ({row['reference']})"
                speedup, ref_diff = f"{row['speedup']:.2f}x", f"{row['reference_max_abs_diff']:.2g}"
        else:
            reference = speedup = ref_diff = ""
        lines.append(f"| {row['metric']} | {row['precision']} | {row['max_abs_diff']:.3g} ({row['against']}) | "
                     f"{row['tokens_per_s']:.0f} | {reference} | {speedup} | {ref_diff} | {row['model_gflops']:.1f} | "
                     f"{row['gemm_gflops']:.0f} | {row['gemm_fraction']:.1%} |")
    return "\n".join(lines)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default=None, help="'cuda' (the default; exit 2 without a GPU), 'cuda:N' or "
                                                       "'cpu' (a smoke run)")
    parser.add_argument("--small", action="store_true", help="tiny inputs and the tests' tiny checkpoints")
    parser.add_argument("--only", default=",".join(METRICS), help="comma-separated subset of " + ", ".join(METRICS))
    parser.add_argument("--json", type=Path, default=None, help="also write the table here as JSON")
    parser.add_argument("--reference-python", default=str(DEFAULT_REFERENCE_PYTHON),
                        help="the interpreter of unbabel-comet and bleurt-pytorch ('' for none: not installed)")
    parser.add_argument("--repeats", type=int, default=None, help="timed runs per measurement (median)")
    parser.add_argument("--texts", type=int, default=None, help="perplexity: CNN/DailyMail summaries")
    parser.add_argument("--systems", type=int, default=None, help="pair metrics: WMT17 systems")
    parser.add_argument("--segments", type=int, default=None, help="pair metrics: segments per system")
    parser.add_argument("--batch-size", type=int, default=16, help="perplexity: our batch size")
    parser.add_argument("--evaluate-batch-size", type=int, default=16)
    parser.add_argument("--bleurt-batch-size", type=int, default=32)
    parser.add_argument("--layer", type=int, default=3, help="bertscore: the layer (as bench_bertscore.py)")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads")
    parser.add_argument("--cpu-items", type=int, default=0,
                        help="comet, cometkiwi, xcomet: check CPU parity on the first N examples only (0: all)")
    parser.add_argument("--random-weights", type=Path, default=None,
                        help="a folder of model configurations and tokenizers (smollm2/, minilm/; written by "
                             "--write-model-configs): perplexity and bertscore run on models of those shapes with "
                             "random weights (seed 0) instead of the packaged ones, for a machine without them")
    parser.add_argument("--write-model-configs", type=Path, default=None,
                        help="write the packaged models' configurations and tokenizers (no weights) to this folder "
                             "for --random-weights elsewhere, and exit")
    args = parser.parse_args(argv)
    small = {"repeats": 1, "texts": 4, "systems": 1, "segments": 8}
    full = {"repeats": 3, "texts": 500, "systems": 2, "segments": 1000}
    for name, value in (small if args.small else full).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    args.gemm_seconds = 0.2 if args.small else 1.0
    args.reference_python = Path(args.reference_python) if args.reference_python else None
    args.only = [name.strip() for name in args.only.split(",") if name.strip()]
    args.perplexity_model = args.bertscore_model = None
    args.perplexity_label = "SmolLM2-135M-Instruct (packaged GGUF)"
    args.bertscore_label = "all-MiniLM-L6-v2 (packaged)"
    unknown = sorted(set(args.only) - set(METRICS))
    if unknown:
        parser.error(f"--only: unknown {', '.join(unknown)}; choose from {', '.join(METRICS)}")
    return args


def write_model_configs(folder: Path) -> None:
    """The packaged models' configurations and tokenizers (no weights), for --random-weights."""
    import shutil

    import transformers

    from metrics._core.core_lm_models import resolve_lm
    from metrics._core.core_models import resolve_model

    lm = resolve_lm("perplexity", None)
    (folder / "smollm2").mkdir(parents=True, exist_ok=True)
    transformers.AutoConfig.from_pretrained(str(lm.path), gguf_file=lm.gguf_file).save_pretrained(folder / "smollm2")
    transformers.AutoTokenizer.from_pretrained(str(lm.path), gguf_file=lm.gguf_file).save_pretrained(
        folder / "smollm2")
    encoder = resolve_model("bertscore", None).path
    shutil.copytree(encoder, folder / "minilm", ignore=shutil.ignore_patterns("*.safetensors", "*.bin", "*.onnx",
                                                                            "*.h5", "*.ot", "onnx", "openvino"),
                    dirs_exist_ok=True)


def random_weight_models(args: argparse.Namespace, work: Path) -> None:
    """Models of the configured shapes with random weights (seed 0) in ``work``, used in place of the packaged
    ones: the packaged files (98 MB and 91 MB) exceed what can be carried to a GPU machine without network."""
    import shutil

    import torch
    import transformers

    for name, auto, label in (("smollm2", transformers.AutoModelForCausalLM, "SmolLM2-135M shape"),
                              ("minilm", transformers.AutoModel, "all-MiniLM-L6-v2 shape")):
        target = work / f"random-{name}"
        shutil.copytree(args.random_weights / name, target)
        torch.manual_seed(0)
        auto.from_config(transformers.AutoConfig.from_pretrained(str(target))).save_pretrained(target)
        if name == "smollm2":
            args.perplexity_model, args.perplexity_label = str(target), f"{label}, random weights (seed 0)"
        else:
            args.bertscore_model, args.bertscore_label = str(target), f"{label}, random weights (seed 0)"


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.write_model_configs is not None:
        write_model_configs(args.write_model_configs)
        return 0
    import torch

    if args.device is None or args.device.startswith("cuda"):
        if not torch.cuda.is_available():
            print(NO_GPU, file=sys.stderr)
            return 2
        device = torch.device(args.device or "cuda")
    elif args.device == "cpu":
        device = torch.device("cpu")
    else:
        raise SystemExit(f"bench_gpu.py: --device must be 'cuda', 'cuda:N' or 'cpu', not {args.device!r}")
    os.environ.update({key: value for key, value in OFFLINE.items() if key != "PYTHONWARNINGS"})
    project.use_test_helpers()
    torch.set_num_threads(args.threads)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else f"CPU ({os.cpu_count()} cores)"
    builders = {"perplexity": perplexity_case, "bertscore": bertscore_case}
    rows: list[dict[str, Any]] = []
    rates: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-gpu-") as work:
        if args.random_weights is not None:
            random_weight_models(args, Path(work))
        for metric in args.only:
            print(f"{metric} ...", file=sys.stderr, flush=True)
            try:
                if metric in COMET_KINDS:
                    case = comet_case(args, device, Path(work), metric)
                elif metric == "bleurt":
                    case = bleurt_case(args, device, Path(work))
                else:
                    case = builders[metric](args, device)
                rows += measure(case, args, device, rates)
            except NotInstalled as error:
                rows.append({"metric": metric, "precision": "-", "error": str(error)})
            except Exception as error:  # noqa: BLE001 - one metric's failure is reported; the others still run
                traceback.print_exc()
                rows.append({"metric": metric, "precision": "-", "error": f"failed: {type(error).__name__}: "
                                                                            f"{str(error)[:300]}"})
    report = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "device": str(device), "device_name": name, "torch": torch.__version__, "cuda": torch.version.cuda,
              "threads": torch.get_num_threads(), "small": args.small, "repeats": args.repeats,
              "models": {"perplexity": args.perplexity_label, "bertscore": args.bertscore_label},
              "gemm_gflops": rates, "rows": rows}
    print(f"{report['date']}, {name} ({device}), torch {torch.__version__}, CUDA {torch.version.cuda}; "
          f"{'small run, ' if args.small else ''}{args.repeats} timed run(s) each, medians")
    print(table(rows))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child_main()
    else:
        sys.exit(main())
