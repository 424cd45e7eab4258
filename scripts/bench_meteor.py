#!/usr/bin/env python3
"""Benchmark: our METEOR against NLTK's meteor_score, side by side in one run, on CNN/DailyMail summaries.

    python scripts/bench_meteor.py [--data ../shared/data] [--examples 2000] [--repeats 3]

Every system (baseline, pointer-gen, pointer-gen-cov) is scored against the references of the first
--examples articles:

- NLTK, as evaluate's module does it: word tokens of both texts, then ``meteor_score`` per pair
  (``word_tokenize(text, preserve_line=True)``: Punkt's model is a download);
- NLTK ``meteor_score`` alone on token lists made beforehand;
- ours on the texts (``meteor_scores``) and on the same token lists, "cold" (every process cache
  emptied before the run: each word stemmed and looked up in WordNet again) and "warm" (only the
  prepared texts emptied: texts tokenized again, stems and synonym sets kept from earlier runs, as
  NLTK's WordNet reader keeps the synsets it has read);
- ours with the references prepared once (``prepare_references``) for the three systems, cold.

NLTK runs once first; that run, with its WordNet reader's synset cache still empty, is what one fresh
evaluate process pays, and is printed next to our cold run. Then --repeats rounds run every variant
in turn (interleaved, so that both sides see the same load on a shared machine); times are medians of
the rounds, wall clock and CPU time of this process (the steadier measure on a shared machine);
ratios are NLTK time / our time. Per-example scores are compared (zero differences beyond 1e-12
expected; the count of bit-identical scores is printed). Loading WordNet (NLTK's reader, ours) is timed
once, outside the runs. Peak memory: tracemalloc's peak during one run on the first --memory-examples
examples. NLTK's WordNet is its own (``nltk.download('wordnet')``) when installed, otherwise a copy of
Debian's files made as tests/meteor_oracle.py makes it; ours reads the same database.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import project  # the repository root on sys.path

project.use_test_helpers()

from metrics._core import core_meteor, core_wordnet  # noqa: E402
from metrics._core.core_meteor import MeteorOptions, meteor_scores, prepare_references  # noqa: E402
from metrics._core.core_meteor_tokenize import nltk_word_tokens  # noqa: E402

SYSTEMS = project.CNNDM_SYSTEMS


Timing = tuple[float, float, object]


def interleaved(
    runs: dict[str, tuple[Callable[[], object], Callable[[], None]]], repeats: int
) -> dict[str, Timing]:
    """Run every (function, preparation) in turn, ``repeats`` rounds; median wall and CPU seconds, last result."""
    walls: dict[str, list[float]] = {name: [] for name in runs}
    cpus: dict[str, list[float]] = {name: [] for name in runs}
    results: dict[str, object] = {}
    for _ in range(repeats):
        for name, (function, before) in runs.items():
            before()
            gc.collect()
            start, start_cpu = time.perf_counter(), time.process_time()
            results[name] = function()
            walls[name].append(time.perf_counter() - start)
            cpus[name].append(time.process_time() - start_cpu)
    return {name: (statistics.median(walls[name]), statistics.median(cpus[name]), results[name]) for name in runs}


def first_run(function: Callable[[], object], before: Callable[[], None] = lambda: None) -> Timing:
    before()
    gc.collect()
    start, start_cpu = time.perf_counter(), time.process_time()
    result = function()
    return time.perf_counter() - start, time.process_time() - start_cpu, result


def clear_caches() -> None:
    """Empty our per-process caches (prepared texts, stems, synonym sets); the WordNet files stay loaded."""
    core_meteor.clear_meteor_caches()


def clear_texts() -> None:
    """Empty our prepared texts only (texts are tokenized again; stems and synonym sets stay)."""
    core_meteor.clear_meteor_caches(words=False)


def nltk_wordnet(scratch: Path) -> tuple[object, str]:
    """NLTK's WordNet reader: its own corpus when installed, else one built from Debian's files."""
    try:
        from nltk.corpus import wordnet

        wordnet.ensure_loaded()
        return wordnet, "nltk_data"
    except LookupError:
        from meteor_oracle import debian_wordnet_available, nltk_wordnet_reader

        if not debian_wordnet_available():
            raise SystemExit("no WordNet for NLTK: apt-get install wordnet-base wordnet-sense-index") from None
        return nltk_wordnet_reader(scratch), "Debian's wordnet-base copied to an NLTK corpus"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=project.SHARED_DATA)
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3, help="rounds of every variant (NLTK's are slow)")
    parser.add_argument("--memory-examples", type=int, default=500)
    arguments = parser.parse_args()

    import nltk
    from nltk.translate.meteor_score import meteor_score

    path = arguments.data / "cnndm-see2017" / "test.jsonl.gz"
    records = []
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            records.append(json.loads(line))
            if len(records) == arguments.examples:
                break
    references = [record["reference"] for record in records]
    systems = {system: [record[system] for record in records] for system in SYSTEMS}
    pairs = len(records) * len(SYSTEMS)

    scratch = Path(tempfile.mkdtemp(prefix="bench-meteor-"))
    start = time.perf_counter()
    wordnet, origin = nltk_wordnet(scratch / "nltk_data")
    nltk_load = time.perf_counter() - start
    start = time.perf_counter()
    ours_wordnet = core_wordnet.load_wordnet()
    ours_load = time.perf_counter() - start
    options = MeteorOptions()
    print(f"CNN/DM: {len(records)} examples x {len(SYSTEMS)} systems = {pairs} pairs; nltk {nltk.__version__}")
    print(f"WordNet: NLTK's from {origin} ({nltk_load:.2f} s to build the reader); ours from "
          f"{ours_wordnet.location.path} ({ours_load:.2f} s to load)")

    def nltk_texts(subset: slice = slice(None)) -> list[list[float]]:
        tokenize = nltk.word_tokenize
        return [
            [
                meteor_score(
                    [tokenize(reference, preserve_line=True)], tokenize(prediction, preserve_line=True), wordnet=wordnet
                )
                for prediction, reference in zip(systems[system][subset], references[subset], strict=True)
            ]
            for system in SYSTEMS
        ]

    reference_tokens = [nltk.word_tokenize(reference, preserve_line=True) for reference in references]
    system_tokens = {
        system: [nltk.word_tokenize(text, preserve_line=True) for text in texts] for system, texts in systems.items()
    }

    def nltk_tokens(subset: slice = slice(None)) -> list[list[float]]:
        return [
            [
                meteor_score([reference], prediction, wordnet=wordnet)
                for prediction, reference in zip(system_tokens[system][subset], reference_tokens[subset], strict=True)
            ]
            for system in SYSTEMS
        ]

    def ours_texts(subset: slice = slice(None)) -> list[list[float]]:
        nested = [[reference] for reference in references[subset]]
        return [meteor_scores(systems[system][subset], nested, options) for system in SYSTEMS]

    def ours_prepared_run(subset: slice = slice(None)) -> list[list[float]]:
        prepared = prepare_references([[reference] for reference in references[subset]], options)
        return [meteor_scores(systems[system][subset], prepared, options) for system in SYSTEMS]

    def ours_tokens(subset: slice = slice(None)) -> list[list[float]]:
        nested = [[tokens] for tokens in reference_tokens[subset]]
        return [meteor_scores(system_tokens[system][subset], nested, options) for system in SYSTEMS]

    nltk_first = first_run(nltk_texts)
    ours_first = first_run(ours_texts, clear_caches)
    nothing = lambda: None  # noqa: E731
    timings = interleaved(
        {
            "nltk texts": (nltk_texts, nothing),
            "ours texts cold": (ours_texts, clear_caches),
            "ours texts warm": (ours_texts, clear_texts),
            "ours prepared": (ours_prepared_run, clear_caches),
            "nltk tokens": (nltk_tokens, nothing),
            "ours tokens cold": (ours_tokens, clear_caches),
            "ours tokens warm": (ours_tokens, clear_texts),
        },
        arguments.repeats,
    )

    def agreement(ours: object, theirs: object) -> str:
        flat_ours = [score for row in ours for score in row]  # type: ignore[union-attr]
        flat_theirs = [score for row in theirs for score in row]  # type: ignore[union-attr]
        mismatches = sum(abs(a - b) > 1e-12 for a, b in zip(flat_ours, flat_theirs, strict=True))
        identical = sum(a == b for a, b in zip(flat_ours, flat_theirs, strict=True))
        return f"{mismatches} mismatches > 1e-12, {identical}/{len(flat_ours)} bit-identical"

    def row(name: str, timing: Timing, oracle: Timing | None = None) -> str:
        wall, cpu, _ = timing
        ratios = f"   {oracle[0] / wall:6.1f}x   {oracle[1] / cpu:6.1f}x" if oracle else ""
        return f"  {name:50s} {wall:8.2f} s {cpu:8.2f} s {wall / pairs * 1e6:7.0f} us/pair{ratios}"

    header = f"  {'':50s} {'wall':>8s}   {'CPU':>8s}   {'wall/pair':>12s}   ratio: wall     CPU"
    print("\nFirst runs in this process (NLTK's WordNet reader and our caches empty, as in a fresh evaluate process):")
    print(header)
    print(row("NLTK word_tokenize + meteor_score, first run", nltk_first))
    print(row("ours, meteor_scores on texts, first run", ours_first, nltk_first))
    print(f"\nMedians of {arguments.repeats} interleaved rounds.")
    sections = (
        ("Texts (tokenization included):", "nltk texts", "NLTK word_tokenize + meteor_score", (
            ("ours, texts, cold caches", "ours texts cold"),
            ("ours, texts, warm stems and synonym sets", "ours texts warm"),
            ("ours, references prepared once for 3 systems, cold", "ours prepared"),
        )),
        ("Token lists (tokenized beforehand):", "nltk tokens", "NLTK meteor_score", (
            ("ours, token lists, cold caches", "ours tokens cold"),
            ("ours, token lists, warm stems and synonym sets", "ours tokens warm"),
        )),
    )
    for title, oracle, oracle_name, entries in sections:
        print(title)
        print(header)
        print(row(oracle_name, timings[oracle]))
        for name, key in entries:
            print(row(name, timings[key], timings[oracle]))
        for _, key in entries:
            print(f"  scores, {key}: {agreement(timings[key][2], timings[oracle][2])}")
    print(f"  scores, NLTK's first run and later runs identical: {nltk_first[2] == timings['nltk texts'][2]}")
    same_tokens = all(nltk_word_tokens(text) == tokens for text, tokens in zip(references, reference_tokens))
    print(f"  our tokens of the references equal NLTK's: {same_tokens}")

    subset = slice(0, arguments.memory_examples)
    memory = {
        "NLTK word_tokenize + meteor_score": project.peak_mib(lambda: nltk_texts(subset)),
        "NLTK meteor_score (token lists)": project.peak_mib(lambda: nltk_tokens(subset)),
        "ours, texts": project.peak_mib(lambda: ours_texts(subset), clear_caches),
        "ours, prepared references": project.peak_mib(lambda: ours_prepared_run(subset), clear_caches),
        "ours, token lists": project.peak_mib(lambda: ours_tokens(subset), clear_caches),
    }
    print(f"\nPeak traced memory, first {arguments.memory_examples} examples x {len(SYSTEMS)} systems "
          "(WordNet already loaded):")
    for name, mib in memory.items():
        print(f"  {name:52s} {mib:8.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
