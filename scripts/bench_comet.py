#!/usr/bin/env python3
"""Benchmark: our comet module against unbabel-comet 2.2.7's `predict` on the CPU, same checkpoint, one run.

unbabel-comet (in `.venv-oracles`, built by `scripts/setup-env tests`) builds a checkpoint of --model (`da`: a
COMET-DA regression model; `kiwi`: a CometKiwi-style unified model, source only; `xcomet`: XCOMET, with references)
on a randomly initialised XLM-R encoder of the given shape (--hidden-size, --layers, --heads, --intermediate-size;
the tests' tiny model by default; XLM-R large is 1024, 24, 16, 4096) and times its `predict` on --segments WMT17
en-de examples (a system's outputs and the reference; English CNN/DailyMail sentences stand in for the sources,
which ../shared/data lacks) with each of --batch-sizes; our module scores the same examples end to end through
`evaluate.load(...).compute` (the model loaded by a warm-up call first, as unbabel-comet's is before `predict`).
Runs alternate (ours, theirs) --repeats times, each run's time printed as soon as it is measured (a long run keeps
what it measured if it is stopped); medians. The cases: 1 system, and --systems systems on the same
segments, so sources and references repeat as they do when systems are compared (de-duplication pays). The case
``report`` times the comparison report's statistics of --systems systems (our module only), one call over all of
them against one call per system (``bench_compare.shared_text_statistics``).

Prints the times, tokens per second (the tokens of every sample's encoder inputs, what unbabel-comet encodes; the
same count for both sides; ours encodes each chunk's distinct texts once, counted apart), the ratio (the faster
unbabel-comet run / ours), the largest per-example difference, the load average, the share of the machine's GEMM
rate reached (scripts/gemm_rate.py) and the times extrapolated linearly to --extrapolate-to segments (same systems). The
tokenizer is trained on 1000 WMT17 sentences (1000 pieces), so texts are longer in tokens than with XLM-R's own.

With ``--precision bf16`` our module runs in bfloat16 (on a CPU with AMX or AVX-512 BF16 its matrix multiplies
run at a multiple of the fp32 rate) against unbabel-comet's fp32 ``predict``; the printed difference is then
bf16's, to hold against the card's bf16 tolerance. ``--ours-only`` times our module alone (its time, tokens per
second and share of the GEMM rate; no ratio).

    python scripts/bench_comet.py [--model da] [--segments 3000] [--systems 4] [--hidden-size 32] [--layers 2]
        [--heads 4] [--intermediate-size 0] [--repeats 3] [--batch-sizes 16,64] [--cases 1,N] [--precision fp32]
        [--ours-only]
"""

from __future__ import annotations

import atexit
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import project

ROOT = project.ROOT
ORACLE = ROOT / "tests" / "comet_oracle_run.py"
ORACLE_PYTHON = ROOT / ".venv-oracles" / "bin" / "python"
DATA = ROOT.parent / "shared" / "data"


def oracle(payload: dict, python: Path = ORACLE_PYTHON) -> object:
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONWARNINGS": "ignore"}
    done = subprocess.run([str(python), str(ORACLE)], input=json.dumps(payload), capture_output=True,
                          text=True, env=environment, check=False)
    if done.returncode != 0:
        raise SystemExit(f"unbabel-comet failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def system_columns(segments: int, systems: int) -> tuple[list[str], list[str], dict[str, list[str]]]:
    """The sources, the references and each system's outputs of the first ``segments`` segments."""
    wmt = DATA / "wmt17-en-de"
    references = project.read_lines(wmt / "newstest2017.ref.de")[:segments]
    with gzip.open(DATA / "cnndm-see2017" / "test.jsonl.gz", "rt", encoding="utf-8") as handle:
        sources = [json.loads(line)["reference"].split("\n")[0] for line, _ in zip(handle, range(segments))]
    outputs = {path.stem: project.read_lines(path)[:segments]
               for path in sorted((wmt / "systems").glob("*.de"))[:systems]}
    return sources, references, outputs


def examples(segments: int, systems: int) -> dict[str, list[str]]:
    sources, references, outputs = system_columns(segments, systems)
    return {"sources": sources * len(outputs), "predictions": [text for each in outputs.values() for text in each],
            "references": references * len(outputs)}


# what each --model builds: unbabel-comet's class identifier, its hyper-parameters given the encoder width, and whether
# its samples carry references
MODELS = {
    "da": ("regression_metric", lambda width: {"hidden_sizes": [4 * width, width],
                                               "layer_transformation": "sparsemax"}, True),
    "kiwi": ("unified_metric", lambda width: {"input_segments": ["mt", "src"], "hidden_sizes": [4 * width, width],
                                              "word_level_training": False}, False),
    "xcomet": ("xcomet_metric", lambda width: {"encoder_model": "XLM-RoBERTa", "hidden_sizes": [4 * width, width],
                                               "word_layer": 1}, True),
}


def sample_tokens(tokenizer, identifier: str, samples: list[dict[str, str]]) -> tuple[int, int]:
    """The tokens unbabel-comet's encoder reads for the samples (each text alone for regression models, each joined
    input for unified models), and the tokens ours reads: each chunk's distinct texts (``core_comet.text_chunks``)
    or the distinct joined inputs."""
    from metrics._core.core_comet import CHUNK_TEXTS, text_chunks
    from metrics._core.core_comet_joint import sample_inputs

    texts = sorted({text for sample in samples for text in sample.values()})
    lengths = dict(zip(texts, (len(ids) for ids in tokenizer(texts, truncation=True, max_length=510)["input_ids"])))
    if identifier == "regression_metric":
        sources, predictions = [sample["src"] for sample in samples], [sample["mt"] for sample in samples]
        references = [[sample["ref"]] for sample in samples]
        embedded = sum(lengths[text] for chunk in text_chunks(sources, predictions, references, CHUNK_TEXTS)
                       for text in {text for index in chunk for text in samples[index].values()})
        return sum(lengths[text] for sample in samples for text in sample.values()), embedded
    segments = ("src", "ref") if identifier == "xcomet_metric" else ("src",)
    inputs = [joined for sample in samples
              for joined in sample_inputs(segments, sample["src"], sample["mt"], sample.get("ref"))]

    def length(joined: tuple[str, ...]) -> int:
        return min(512, sum(lengths[text] for text in joined) + 2 * (len(joined) - 1))

    return sum(map(length, inputs)), sum(map(length, set(inputs)))


def gemm_line(args, tokens_per_second: dict[str, float], mean_length: float) -> list[str]:
    """The share of the machine's GEMM rate (on the encoder's shapes, batch 16) each side reaches."""
    from gemm_rate import gemm_rate, utilisation_line
    from model_flops import encoder_flops_per_token

    width, inner = args.hidden_size, args.intermediate_size or 2 * args.hidden_size
    rows = int(16 * mean_length)
    shapes = [(rows, width, width)] * 4 * args.layers + [(rows, width, inner), (rows, inner, width)] * args.layers
    rate = gemm_rate(shapes)
    flops = encoder_flops_per_token(width, inner, args.layers, mean_length)
    return [rate.describe()] + [utilisation_line(name, value, flops, rate) for name, value in tokens_per_second.items()]


def main() -> None:
    parser = project.bench_parser(__doc__, segments=3000, systems=4, hidden_size=32, layers=2, heads=4,
                                  intermediate_size=0, repeats=3, extrapolate_to=3000)
    parser.add_argument("--model", choices=sorted(MODELS), default="da")
    parser.add_argument("--batch-sizes", default="16,64")
    parser.add_argument("--cases", default="1,N",
                        help="1 (one system), N (--systems systems), report (the comparison report's statistics of "
                             "--systems systems: one call against one per system; ours only), comma-separated")
    parser.add_argument("--precision", choices=("fp32", "bf16"), default="fp32", help="our module's precision")
    parser.add_argument("--ours-only", action="store_true",
                        help="time our module alone (no ratio: for a figure beside a reference time measured before)")
    args = parser.parse_args()
    if not ORACLE_PYTHON.is_file():
        raise SystemExit(f"{ORACLE_PYTHON} is missing: run `bash scripts/setup-env tests`")
    os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    import evaluate
    import torch
    import transformers

    identifier, hparams, with_references = MODELS[args.model]
    folder = Path(tempfile.mkdtemp(prefix="bench-comet-"))
    atexit.register(shutil.rmtree, folder, True)  # a large encoder's checkpoint is over 1 GB
    texts = project.read_lines(DATA / "wmt17-en-de" / "newstest2017.ref.de")[:1000]
    oracle({"action": "steps", "steps": [
        {"action": "encoder", "folder": str(folder / "encoder"), "encoder_model": "XLM-RoBERTa", "texts": texts,
         "hidden_size": args.hidden_size, "layers": args.layers, "heads": args.heads,
         "intermediate_size": args.intermediate_size},
        {"action": "build", "folder": str(folder / "model"), "encoder": str(folder / "encoder"),
         "class_identifier": identifier, "seed": 0, "hparams": hparams(args.hidden_size)},
    ]})
    tokenizer = transformers.PreTrainedTokenizerFast.from_pretrained(str(folder / "encoder"))
    comet = evaluate.load(str(ROOT / "metrics" / "comet"), str(folder / "model"))
    comet.compute(sources=["warm"], predictions=["up"], **({"references": ["call"]} if with_references else {}),
                  precision=args.precision)
    load = os.getloadavg()
    print(f"model {args.model} ({identifier}), ours in {args.precision}, on XLM-R hidden {args.hidden_size}, "
          f"{args.layers} layers, "
          f"{args.heads} heads, inner {args.intermediate_size or 2 * args.hidden_size}; torch threads "
          f"{torch.get_num_threads()}; {args.repeats} alternating runs each, medians; load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)
    if "report" in args.cases.split(","):
        from bench_compare import shared_text_statistics
        from comparison import from_columns

        sources, references, outputs = system_columns(args.segments, args.systems)
        shared_text_statistics(from_columns(references, outputs, sources=sources), "comet",
                               {"checkpoint": str(folder / "model"), "precision": args.precision}, args.repeats)
    cases = [("1 system", 1) if case == "1" else (f"{args.systems} systems", args.systems)
             for case in args.cases.split(",") if case != "report"]
    for label, systems in cases:
        corpus = examples(args.segments, systems)
        if not with_references:
            corpus.pop("references")
        keys = ("src", "mt", "ref") if with_references else ("src", "mt")
        samples = [dict(zip(keys, texts)) for texts in zip(*corpus.values())]
        tokens, embedded = sample_tokens(tokenizer, identifier, samples)
        theirs: dict[int, list[float]] = {}
        reference_scores: list[float] = []
        ours_times: list[float] = []
        for repeat in range(1, args.repeats + 1):
            start = time.perf_counter()
            ours = comet.compute(**corpus, precision=args.precision)["scores"]
            ours_times.append(time.perf_counter() - start)
            print(f"  {label}, run {repeat}: ours {ours_times[-1]:.2f} s", flush=True)
            for batch_size in [] if args.ours_only else map(int, args.batch_sizes.split(",")):
                run = oracle({"action": "predict", "checkpoint": str(folder / "model" / "checkpoints" / "model.ckpt"),
                              "sample_sets": [samples], "batch_size": batch_size})["results"][0]
                theirs.setdefault(batch_size, []).append(run["seconds"])
                reference_scores = reference_scores or run["scores"]
                print(f"  {label}, run {repeat}: unbabel-comet {run['seconds']:.2f} s (batch {batch_size})", flush=True)
        ours_time = statistics.median(ours_times)
        our_label = ("ours (tokens it embeds)" if args.precision == "fp32"
                     else f"ours ({args.precision}, tokens it embeds; against the fp32 rate)")
        mean_length = tokens / len(samples) / (3 if identifier != "unified_metric" else 1)
        if args.ours_only:
            print(f"{label} x {args.segments} segments ({len(samples)} samples, {tokens:,} sample tokens, "
                  f"{embedded:,} embedded by ours): ours {ours_time:.2f} s; sample tokens/s {tokens / ours_time:,.0f}")
            for line in gemm_line(args, {our_label: embedded / ours_time}, mean_length):
                print("  " + line)
            continue
        medians = {batch_size: statistics.median(times) for batch_size, times in theirs.items()}
        best = min(medians.values())
        difference = max(abs(a - b) for a, b in zip(ours, reference_scores))
        scale = args.extrapolate_to / args.segments
        print(f"{label} x {args.segments} segments ({len(samples)} samples, {tokens:,} sample tokens, {embedded:,} "
              f"embedded by ours): unbabel-comet "
              + ", ".join(f"{seconds:.2f} s (batch {size})" for size, seconds in medians.items())
              + f"; ours {ours_time:.2f} s; ratio {best / ours_time:.2f}x; tokens/s theirs {tokens / best:,.0f}, ours "
              f"{tokens / ours_time:,.0f}; max |difference| {difference:.2e}; extrapolated to {args.extrapolate_to} "
              f"segments: theirs {best * scale / 60:.1f} min, ours {ours_time * scale / 60:.1f} min")
        for line in gemm_line(args, {"unbabel-comet": tokens / best, our_label: embedded / ours_time}, mean_length):
            print("  " + line)
    print(f"load average after: {' '.join(f'{value:.2f}' for value in os.getloadavg())}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
