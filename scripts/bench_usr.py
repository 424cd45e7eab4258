#!/usr/bin/env python3
"""Benchmark: our USR against the official scoring loops on the CPU, same models, same examples, interleaved.

Models: RoBERTa-base's shapes (12 layers of 768, 12 heads, a 50,265-entry vocabulary) with random weights, in the
official release's layout (roberta_ft/, ctx/, uk/), built offline once into --models by
tests/usr_checkpoint.py ``roberta_base_shaped`` (its byte-level BPE is trained on the USR texts, so that they split
into about as many tokens as RoBERTa's own BPE would give). Examples: the USR annotation release's responses
(Topical-Chat 360, PersonaChat 300) with their contexts and facts, ../shared/data/usr; --examples N takes N of the
660 spread evenly (both corpora, every length).

- **Official**: the scoring functions of tests/usr_oracle_run.py (the official ``run_lm_finetuning.py`` evaluate loop
  and ``train_understandable.py`` predict loop transcribed on transformers 2.2.0: one text at a time, batch size 1,
  the MLM text's masked copies as one batch), in ``.venv-usr``, a child process that stays up for the run. Its
  models and tokenizers are loaded and warmed before any timing (the functions' ``from_pretrained`` calls then return
  them); each function's call is timed inside the child: reading its input file, tokenizing, scoring.
- **Ours**: ``evaluate.load("./metrics/usr", <models>)``, loaded and warmed; ``compute`` is timed, and inside it the
  MLM and the two DR parts (the module's own core functions, wrapped by timers).

The examples are cut into --chunks parts, scored by the two sides in turn (which goes first alternates), so that
both see the same load from anything else running; totals are sums over the parts, and the ratio's median over the
parts is printed beside the ratio of the totals. Prints seconds (wall and CPU), ratios, tokens/s (the tokens of
every sequence the model reads, without padding: the same count for both sides), the masked variants scored and
how many de-duplication removed, the max |difference| of each sub-metric and of USR against the official scores
(with the tolerances of tests/test_usr.py), and GFLOP/s of each side's own arithmetic against the machine's fp32
matrix-multiply rate, measured beside each part on a RoBERTa layer's GEMMs (8192 tokens) through oneDNN and MKL.

Cost: the official MLM loop reads (L - 2) x L tokens per text of L ids; on 2 cores it does a few hundred tokens/s,
so all 660 examples (1.6 million tokens) take it about an hour, hence --examples (80 by default: 12% of the tokens,
the same mix of lengths). On a machine shared with other jobs, multi-threaded timings are erratic (an OpenMP thread
that loses its core stalls every parallel region; the official loop's many small operations suffer most): compare
the median of the parts, or run with --threads 1, whose wall and CPU times agree from part to part.

    python scripts/bench_usr.py [--examples 80] [--chunks 4] [--threads 2] [--batch-tokens 8192] [--warmup 2]
                                [--models DIR] [--bf16]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import project  # the repository root on sys.path

project.use_test_helpers()
USR_DATA = project.SHARED_DATA / "usr"
USR_VENV = project.ROOT / ".venv-usr"
PARTS = ("mlm", "dr_context", "dr_fact")
FOLDERS = {"mlm": "roberta_ft", "dr_context": "ctx", "dr_fact": "uk"}


# -- the official side, run in .venv-usr ----------------------------------------------------------------------------


def official_child(threads: int, models: str) -> None:
    """Serve requests on standard input (one JSON line each: {"examples": [[context, fact, response], ...]}), answer
    each with one JSON line: per part, its scores and wall/CPU seconds; "usr" from the official regression."""
    import torch

    torch.set_num_threads(threads)
    import usr_oracle_run as official
    from transformers import RobertaForMaskedLM, RobertaForSequenceClassification, RobertaTokenizer

    loaded: dict[tuple[str, str], Any] = {}

    def preloaded(kind: Any, key: str) -> Any:
        class Loaded:
            @staticmethod
            def from_pretrained(folder: str, **_: Any) -> Any:
                return loaded[key, str(Path(folder))]

        for name in FOLDERS.values():
            folder = str(Path(models) / name)
            if key == "tokenizer":
                loaded[key, folder] = kind.from_pretrained(folder)
            elif (kind is RobertaForMaskedLM) == (name == "roberta_ft"):
                loaded[key, folder] = kind.from_pretrained(folder)
        return Loaded

    official.RobertaTokenizer = preloaded(RobertaTokenizer, "tokenizer")
    official.RobertaForMaskedLM = preloaded(RobertaForMaskedLM, "mlm")
    official.RobertaForSequenceClassification = preloaded(RobertaForSequenceClassification, "dr")
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("quit"):
            break
        answer: dict[str, Any] = {}
        with tempfile.TemporaryDirectory() as folder:
            official.input_files(request["examples"], True, folder)
            calls = {"mlm": lambda: official.mlm_scores(str(Path(models) / "roberta_ft"), f"{folder}/undr.lm")[0],
                     "dr_context": lambda: official.dr_scores(str(Path(models) / "ctx"), f"{folder}/both/"),
                     "dr_fact": lambda: official.dr_scores(str(Path(models) / "uk"), f"{folder}/fct/")}
            for part, call in calls.items():
                wall, cpu = time.perf_counter(), time.process_time()
                scores = call()
                answer[part] = {"scores": scores, "wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}
        answer["usr"] = {"scores": official.predict_scores([answer["mlm"]["scores"]] * 2
                                                           + [answer["dr_context"]["scores"]] * 2
                                                           + [answer["dr_fact"]["scores"]])}
        print(json.dumps(answer), flush=True)


class Official:
    """The official side's child process in `.venv-usr`."""

    def __init__(self, threads: int, models: Path) -> None:
        python = USR_VENV / "bin" / "python"
        if not python.is_file():
            sys.exit(f"{USR_VENV} is missing: run `bash scripts/setup-env tests`")
        environment = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONWARNINGS": "ignore",
                       "PYTHONPATH": str(project.ROOT / "tests")}
        self.process = subprocess.Popen(
            [str(python), __file__, "--official-child", "--threads", str(threads), "--models", str(models)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=environment)
        self._read()

    def _read(self) -> dict[str, Any]:
        line = self.process.stdout.readline()
        if not line:
            sys.exit(f"the official child process ended ({self.process.wait()})")
        return json.loads(line)

    def score(self, examples: list[tuple[str, str, str]]) -> dict[str, Any]:
        self.process.stdin.write(json.dumps({"examples": [list(example) for example in examples]}) + "\n")
        self.process.stdin.flush()
        return self._read()

    def close(self) -> None:
        self.process.stdin.write(json.dumps({"quit": True}) + "\n")
        self.process.stdin.close()
        self.process.wait()


# -- our side -------------------------------------------------------------------------------------------------------


class Ours:
    """Our module loaded through evaluate's loader, its MLM and DR parts timed inside ``compute``."""

    def __init__(self, models: Path, batch_tokens: int, precision: str) -> None:
        import evaluate

        self.metric = evaluate.load(str(project.ROOT / "metrics" / "usr"), str(models))
        self.options = {"batch_tokens": batch_tokens, "precision": precision, "device": "cpu"}
        package = type(self.metric).__module__.rsplit(".", 1)[0]
        self.core = sys.modules[f"{package}.core_usr_score"]
        self.times: list[tuple[str, float, float]] = []
        for name in ("mlm_scores", "dr_scores"):
            setattr(self.core, name, self._timed(name, getattr(self.core, name)))

    def _timed(self, name: str, function: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            wall, cpu = time.perf_counter(), time.process_time()
            result = function(*args, **kwargs)
            self.times.append((name, time.perf_counter() - wall, time.process_time() - cpu))
            return result

        return timed

    def score(self, examples: list[tuple[str, str, str]]) -> dict[str, Any]:
        self.times.clear()
        contexts, facts, predictions = (list(column) for column in zip(*examples, strict=True))
        wall, cpu = time.perf_counter(), time.process_time()
        result = self.metric.compute(contexts=contexts, facts=facts, predictions=predictions, **self.options)
        answer: dict[str, Any] = {"usr": {"scores": result["usr_scores"], "wall": time.perf_counter() - wall,
                                          "cpu": time.process_time() - cpu}}
        # per batch of examples, usr_example_scores calls mlm_scores, then dr_scores for x = c, then for x = f
        for part in PARTS:
            answer[part] = {"scores": result[f"{part}_scores"], "wall": 0.0, "cpu": 0.0}
        dr_calls = 0
        for name, part_wall, part_cpu in self.times:
            part = "mlm" if name == "mlm_scores" else PARTS[1 + dr_calls % 2]
            dr_calls += name == "dr_scores"
            answer[part]["wall"] += part_wall
            answer[part]["cpu"] += part_cpu
        return answer


# -- what each side computes ----------------------------------------------------------------------------------------


def read_examples(count: int) -> list[tuple[str, str, str]]:
    examples = []
    for name in ("usr_topical_chat.json", "usr_percona_chat.json"):
        path = USR_DATA / name
        if not path.is_file():
            sys.exit(f"USR annotations not found at {path} (../shared/data beside the project)")
        examples += [(record["context"], record["fact"], response["response"])
                     for record in json.loads(path.read_text(encoding="utf-8")) for response in record["responses"]]
    if count >= len(examples):
        return examples
    return [examples[index * len(examples) // count] for index in range(count)]


def tokenizer_texts() -> list[str]:
    texts = []
    for name in ("usr_topical_chat.json", "usr_percona_chat.json"):
        for record in json.loads((USR_DATA / name).read_text(encoding="utf-8")):
            texts += [record["context"].lower(), record["fact"].lower()]
            texts += [response["response"].lower() for response in record["responses"]]
    return texts


def tolerances() -> dict[str, float]:
    """MLM_TOLERANCE, DR_TOLERANCE and USR_TOLERANCE as tests/test_usr.py sets them."""
    tree = ast.parse((project.ROOT / "tests" / "test_usr.py").read_text(encoding="utf-8"))
    values = {target.id: ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
              for target in node.targets if isinstance(target, ast.Name) and target.id.endswith("_TOLERANCE")}
    return {"mlm": values["MLM_TOLERANCE"], "dr_context": values["DR_TOLERANCE"], "dr_fact": values["DR_TOLERANCE"],
            "usr": values["USR_TOLERANCE"]}


class Work:
    """Sequences, tokens and FLOPs of each part, for the official loops and for ours, from the token ids."""

    def __init__(self, models: Path) -> None:
        import torch

        from metrics._core.core_usr_models import load_usr_model, locate_model

        self.loaded = {part: load_usr_model("bench", locate_model("bench", part, None, str(models)),
                                            device=torch.device("cpu"), dtype=torch.float32) for part in PARTS}
        config = json.loads((models / "roberta_ft" / "config.json").read_text(encoding="utf-8"))
        self.width, self.inner = config["hidden_size"], config["intermediate_size"]
        self.layers, self.vocabulary = config["num_hidden_layers"], config["vocab_size"]

    def _dense(self, rows: int) -> float:  # Q, K, V, O and the feed-forward layer of one encoder layer
        return 2.0 * rows * (4 * self.width * self.width + 2 * self.width * self.inner)

    def _attention(self, queries: int, length: int) -> float:  # QK^T and the weighted values
        return 4.0 * queries * length * self.width

    def _encoder(self, length: int, picked_only: bool) -> float:
        """FLOPs of one sequence through the encoder: every layer on every token, or (ours) the last layer only
        on its keys and values plus the one row the score reads."""
        if not picked_only:
            return self.layers * (self._dense(length) + self._attention(length, length))
        last = 2.0 * length * 2 * self.width * self.width + self._dense(1) - 2.0 * 2 * self.width * self.width
        return (self.layers - 1) * (self._dense(length) + self._attention(length, length)) + last \
            + self._attention(1, length)

    def mlm(self, examples: list[tuple[str, str, str]]) -> dict[str, float]:
        from metrics._core.core_usr import usr_texts
        from metrics._core.core_usr_score import mlm_ids

        texts = [usr_texts(*example).mlm for example in examples]
        lengths = {text: len(mlm_ids(self.loaded["mlm"], text)) for text in texts}
        head = 2.0 * (self.width * self.width + self.width * self.vocabulary)  # dense, then the vocabulary
        work = {"sequences": 0.0, "sequences_distinct": 0.0, "tokens": 0.0, "flops_official": 0.0, "flops_ours": 0.0}
        for text in texts:
            length = lengths[text]
            work["sequences"] += length - 2
            work["tokens"] += (length - 2) * length
            work["flops_official"] += (length - 2) * (self._encoder(length, False) + length * head)
        for length in (lengths[text] for text in dict.fromkeys(texts)):
            work["sequences_distinct"] += length - 2
            work["flops_ours"] += (length - 2) * (self._encoder(length, True) + head)
        return work

    def dr(self, examples: list[tuple[str, str, str]], part: str) -> dict[str, float]:
        from metrics._core.core_usr import usr_texts
        from metrics._core.core_usr_score import dr_ids

        pairs = [getattr(usr_texts(*example), part) for example in examples]
        lengths = {pair: len(dr_ids(self.loaded[part], *pair)) for pair in pairs}
        work = {"sequences": float(len(pairs)), "sequences_distinct": float(len(lengths)), "flops_official": 0.0,
                "tokens": float(sum(lengths[pair] for pair in pairs)), "flops_ours": 0.0}
        for pair in pairs:  # the official features are padded to 128 ids
            work["flops_official"] += self._encoder(128, False)
        for length in lengths.values():
            work["flops_ours"] += self._encoder(length, True)
        return work


def gemm_rates(threads: int, width: int, inner: int, rows: int = 8192) -> dict[str, float]:
    """GFLOP/s of one RoBERTa layer's GEMMs (Q, K, V, O, feed-forward in and out) on ``rows`` tokens in fp32:
    through oneDNN (our CPU layers) and through PyTorch's default BLAS, MKL (the official code's)."""
    import torch

    from metrics._core.core_onednn import OneDnnLinear

    torch.set_num_threads(threads)
    generator = torch.Generator().manual_seed(0)
    shapes = [(width, width)] * 4 + [(width, inner), (inner, width)]
    linears = [torch.nn.Linear(a, b) for a, b in shapes]
    inputs = {a: torch.randn(rows, a, generator=generator) for a in (width, inner)}
    flops = sum(2.0 * rows * a * b for a, b in shapes)

    def rate(layers: list[Any]) -> float:
        with torch.inference_mode():
            for layer, (a, _) in zip(layers, shapes, strict=True):
                layer(inputs[a])
            best = float("inf")
            for _ in range(3):
                start = time.perf_counter()
                for layer, (a, _) in zip(layers, shapes, strict=True):
                    layer(inputs[a])
                best = min(best, time.perf_counter() - start)
        return flops / best / 1e9

    return {"onednn": rate([OneDnnLinear(linear) for linear in linears]), "mkl": rate(linears)}


# -- the run ---------------------------------------------------------------------------------------------------------


def main() -> None:
    parser = project.bench_parser(__doc__, examples=80, chunks=4, threads=2, batch_tokens=8192, warmup=2)
    parser.add_argument("--models", type=Path, default=Path(tempfile.gettempdir()) / "usr-bench-roberta-base",
                        help="where the RoBERTa-base-shaped models are built (kept for later runs)")
    parser.add_argument("--bf16", action="store_true", help="also time ours in bf16 (not identical: its error shown)")
    parser.add_argument("--official-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.official_child:
        official_child(args.threads, str(args.models))
        return
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    torch.set_num_threads(args.threads)
    from usr_checkpoint import roberta_base_shaped

    start = time.perf_counter()
    roberta_base_shaped(args.models, tokenizer_texts())
    print(f"models: {args.models} (ready in {time.perf_counter() - start:.0f} s); torch {torch.__version__}, "
          f"{args.threads} threads, {os.cpu_count()} CPUs", flush=True)
    examples = read_examples(args.examples)
    warmup = read_examples(660)[-args.warmup:]
    chunks = [examples[index::args.chunks] for index in range(args.chunks)]
    work = Work(args.models)
    official = Official(args.threads, args.models)
    official.score(warmup)
    ours = Ours(args.models, args.batch_tokens, "fp32")
    ours.score(warmup)
    bf16 = Ours(args.models, args.batch_tokens, "bf16") if args.bf16 else None
    if bf16 is not None:
        bf16.score(warmup)
    print(f"{len(examples)} examples of 660 in {args.chunks} parts; warmed up on {args.warmup}", flush=True)

    sides = ["official", "ours"] + (["ours bf16"] if bf16 else [])
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    rates: list[dict[str, float]] = []
    works: list[dict[str, dict[str, float]]] = []
    for number, chunk in enumerate(chunks):
        rates.append(gemm_rates(args.threads, work.width, work.inner))
        order = sides if number % 2 == 0 else sides[::-1]
        for side in order:
            scorer = {"official": official, "ours": ours, "ours bf16": bf16}[side]
            runs[side].append(scorer.score(chunk))
        works.append({"mlm": work.mlm(chunk), "dr_context": work.dr(chunk, "dr_context"),
                      "dr_fact": work.dr(chunk, "dr_fact")})
        print(f"part {number + 1}/{len(chunks)} ({len(chunk)} examples): " + ", ".join(
            f"{side} {sum(runs[side][-1][part]['wall'] for part in PARTS):.1f} s" for side in sides)
              + f"; GEMM {rates[-1]['onednn']:.0f} GFLOP/s (oneDNN), {rates[-1]['mkl']:.0f} (MKL)", flush=True)
    rates.append(gemm_rates(args.threads, work.width, work.inner))
    official.close()
    report(args, examples, runs, works, rates)


GROUPS = {"mlm": ("mlm",), "dr_context": ("dr_context",), "dr_fact": ("dr_fact",), "dr": ("dr_context", "dr_fact"),
          "usr": PARTS}


def _seconds(run: dict[str, Any], part: str, side: str, key: str) -> float:
    """A side's seconds for ``part`` in one run; ours' usr is its whole compute call."""
    if part == "usr" and side != "official":
        return run["usr"][key]
    return sum(run[name][key] for name in GROUPS[part])


def _work(works: list[dict[str, dict[str, float]]], part: str, key: str) -> float:
    return sum(work[name][key] for work in works for name in GROUPS[part])


def report(args: argparse.Namespace, examples: list, runs: dict[str, list[dict[str, Any]]],
           works: list[dict[str, dict[str, float]]], rates: list[dict[str, float]]) -> None:
    limits = tolerances()
    onednn = statistics.median(rate["onednn"] for rate in rates)
    mkl = statistics.median(rate["mkl"] for rate in rates)
    machine = max(onednn, mkl)
    print(f"\nfp32 matrix-multiply rate (a RoBERTa layer's GEMMs on 8192 tokens, median of {len(rates)} measurements "
          f"taken between the parts): oneDNN {onednn:.0f} GFLOP/s, MKL {mkl:.0f} GFLOP/s; the machine's rate: "
          f"{machine:.0f}")
    mlm = {key: _work(works, "mlm", key) for key in ("sequences", "sequences_distinct", "tokens")}
    print(f"MLM: {mlm['sequences']:.0f} masked variants in the official loop, {mlm['sequences_distinct']:.0f} scored "
          f"by ours (de-duplication removed {mlm['sequences'] - mlm['sequences_distinct']:.0f}); "
          f"{mlm['tokens']:.0f} tokens read")
    for part in ("dr_context", "dr_fact"):
        print(f"{part}: {_work(works, part, 'sequences'):.0f} pairs, {_work(works, part, 'sequences_distinct'):.0f} "
              f"distinct; {_work(works, part, 'tokens'):.0f} tokens (the official pads each to 128 ids: "
              f"{128 * _work(works, part, 'sequences'):.0f})")
    print("\n| part | side | wall s | CPU s | speed-up (wall) | median of the parts' | speed-up (CPU) | tokens/s | "
          "GFLOP/s | of the matmul rate | max abs diff (tolerance) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    reference = runs["official"]
    for part in GROUPS:
        theirs_wall = sum(_seconds(run, part, "official", "wall") for run in reference)
        theirs_cpu = sum(_seconds(run, part, "official", "cpu") for run in reference)
        tokens = _work(works, part, "tokens")
        for side, results in runs.items():
            wall = sum(_seconds(run, part, side, "wall") for run in results)
            cpu = sum(_seconds(run, part, side, "cpu") for run in results)
            per_part = [_seconds(theirs, part, "official", "wall") / _seconds(run, part, side, "wall")
                        for run, theirs in zip(results, reference, strict=True)]
            achieved = _work(works, part, "flops_official" if side == "official" else "flops_ours") / wall / 1e9
            if side == "official":
                difference = "(reference)"
            else:
                names = ("usr",) if part == "usr" else GROUPS[part]
                worst = {name: max(abs(a - b) for run, theirs in zip(results, reference, strict=True)
                                   for a, b in zip(run[name]["scores"], theirs[name]["scores"], strict=True))
                         for name in names}
                difference = ", ".join(f"{name} {worst[name]:.2g} ({limits[name]:g}"
                                       f"{')' if worst[name] <= limits[name] else ': EXCEEDED)'}" for name in names)
            spread = f"{statistics.median(per_part):.2f}x ({min(per_part):.2f}-{max(per_part):.2f})"
            print(f"| {part} | {side} | {wall:.1f} | {cpu:.1f} | {theirs_wall / wall:.2f}x | {spread} | "
                  f"{theirs_cpu / cpu:.2f}x | {tokens / wall:.0f} | {achieved:.0f} | {achieved / machine:.0%} | "
                  f"{difference} |")
    print(f"\ntokens/s: the tokens of every sequence the model reads (each masked variant of each MLM text, each DR "
          f"pair), unpadded, the same count for both sides. GFLOP/s: each side's own arithmetic (the official: the "
          f"encoder on every token, the vocabulary's logits at every position, DR pairs padded to 128 ids; ours: no "
          f"padding, the last layer only where the score reads it, the vocabulary's logits only at the masked "
          f"position). usr: ours, the whole compute call (input checks, texts, tokenization, the three models, the "
          f"regression); the official, its three loops. {len(examples)} examples, {args.threads} threads, "
          f"batch_tokens {args.batch_tokens}.")


if __name__ == "__main__":
    main()
