#!/usr/bin/env python3
"""Benchmark: our METEOR against NLTK's meteor_score, side by side in one run, on CNN/DailyMail summaries.

    python scripts/bench_meteor.py [--data ../shared/data] [--examples 2000] [--repeats 3] [--fresh-repeats 3]

Every system (baseline, pointer-gen, pointer-gen-cov) is scored against the references of the first
--examples articles. The two headline ratios (issue 33's floor: 10x):

- steady state: WordNet loaded on both sides, NLTK's reader warm (it has read these texts' synsets in an
  earlier round: in its favour), ours "warmed on other text" (every cache emptied, then the next --examples
  articles scored, then the prepared texts emptied), texts tokenized on both sides;
- fresh process: one new Python process per side and round, timed from outside (wall clock, and the child's
  CPU time), doing everything a fresh evaluate process does: import, load WordNet (NLTK's reader over the
  same files; ours), read the examples and score every pair. The children print their own phases.

Then where our steady-state time goes: stages timed one by one over the same pairs (tokenization, lowercasing,
the Porter stems of each system's batch, the batch alignment without the WordNet stage (interning, exact and
stem stages, chunk counts, formula) and with it) against the whole run, and cProfile's top functions.

The other variants:

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
Debian's files made as tests/meteor_oracle.py makes it (once, by the parent: the copy is not NLTK's load
time); ours reads the same database.
"""

from __future__ import annotations

import argparse
import atexit
import cProfile
import gc
import gzip
import json
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import project  # the repository root on sys.path
from bench_timing import Timing, first_run, interleaved

project.use_test_helpers()
# Our core and NLTK are imported inside the functions, so that a fresh child process imports only its own side.

SYSTEMS = project.CNNDM_SYSTEMS


def clear_caches() -> None:
    """Empty our per-process caches (prepared texts, stems, synonym sets); the WordNet files stay loaded."""
    from metrics._core import core_meteor

    core_meteor.clear_meteor_caches()


def clear_texts() -> None:
    """Empty our prepared texts only (texts are tokenized again; stems and synonym sets stay)."""
    from metrics._core import core_meteor

    core_meteor.clear_meteor_caches(words=False)


def read_examples(data: Path, start: int, count: int) -> list[dict[str, str]]:
    """CNN/DM examples ``start`` to ``start + count`` (reference and the systems' summaries)."""
    records = []
    with gzip.open(data / "cnndm-see2017" / "test.jsonl.gz", "rt", encoding="utf-8") as handle:
        for index, line in enumerate(handle):
            if index >= start + count:
                break
            if index >= start:
                records.append(json.loads(line))
    return records


def nltk_corpus(scratch: Path) -> tuple[Path | None, str]:
    """Where NLTK's reader reads WordNet: None for its own corpus when installed, else a copy of Debian's files
    made in ``scratch`` (by the caller, once)."""
    try:
        from nltk.corpus import wordnet

        wordnet.ensure_loaded()
        return None, "nltk_data"
    except LookupError:
        from meteor_oracle import build_nltk_corpus, debian_wordnet_available

        if not debian_wordnet_available():
            raise SystemExit("no WordNet for NLTK: apt-get install wordnet-base wordnet-sense-index") from None
        build_nltk_corpus(scratch)
        return scratch, "Debian's wordnet-base copied to an NLTK corpus"


def nltk_reader(data_root: Path | None) -> Any:
    """NLTK's WordNet reader, loaded: its own corpus (``data_root`` None), or the corpus built in ``data_root``."""
    if data_root is None:
        from nltk.corpus import wordnet

        wordnet.ensure_loaded()
        return wordnet
    import warnings

    import nltk.data
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    saved = list(nltk.data.path)
    nltk.data.path[:] = [str(data_root)]
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "The multilingual functions are not available")
            reader = WordNetCorpusReader(str(data_root / "corpora" / "wordnet"), None)
        for pos in ("n", "v", "a", "r"):  # NLTK opens corpus files only under nltk.data.path: open them now
            reader._data_file(pos)
        return reader
    finally:
        nltk.data.path[:] = saved


def nltk_scorer(wordnet: Any) -> Callable[[list[dict[str, str]]], list[list[float]]]:
    """NLTK as evaluate's module runs it: ``word_tokenize`` both texts, ``meteor_score`` per pair."""
    import nltk
    from nltk.translate.meteor_score import meteor_score

    def score(records: list[dict[str, str]]) -> list[list[float]]:
        tokenize = nltk.word_tokenize
        return [
            [
                meteor_score(
                    [tokenize(record["reference"], preserve_line=True)],
                    tokenize(record[system], preserve_line=True),
                    wordnet=wordnet,
                )
                for record in records
            ]
            for system in SYSTEMS
        ]

    return score


def ours_scorer() -> Callable[[list[dict[str, str]]], list[list[float]]]:
    """Ours on the texts: ``meteor_scores`` per system, with the default options (WordNet loaded now)."""
    from metrics._core.core_meteor import MeteorOptions, meteor_scores

    options = MeteorOptions()
    options.validate("meteor")

    def score(records: list[dict[str, str]]) -> list[list[float]]:
        nested = [[record["reference"]] for record in records]
        return [meteor_scores([record[system] for record in records], nested, options) for system in SYSTEMS]

    return score


def child(side: str, data: Path, examples: int, corpus: Path | None) -> int:
    """One fresh process's work for ``side``: import, load WordNet, read the examples, score; prints its phases
    (seconds since the start of ``main``) and a checksum of the scores as JSON."""
    start = time.perf_counter()
    if side == "nltk":
        import nltk.translate.meteor_score  # noqa: F401 - what evaluate's module imports

        imported = time.perf_counter()
        score = nltk_scorer(nltk_reader(corpus))
    else:
        from metrics._core import core_meteor  # noqa: F401

        imported = time.perf_counter()
        score = ours_scorer()
    loaded = time.perf_counter()
    scores = score(read_examples(data, 0, examples))
    done = time.perf_counter()
    print(json.dumps({
        "import": imported - start, "load": loaded - imported, "score": done - loaded,
        "sum": sum(value for row in scores for value in row),
    }))
    return 0


def fresh_rounds(data: Path, examples: int, corpus: Path | None, repeats: int) -> dict[str, dict[str, float]]:
    """Each side in a new process, ``repeats`` rounds in turn: medians of wall, child CPU and the child's phases
    (interpreter start-up included in wall and CPU)."""
    runs: dict[str, list[dict[str, float]]] = {"nltk": [], "ours": []}
    for _ in range(repeats):
        for side in runs:
            command = [sys.executable, __file__, "--child", side, "--data", str(data), "--examples", str(examples)]
            if corpus is not None:
                command += ["--corpus", str(corpus)]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            runs[side].append({"wall": wall, "cpu": cpu, **json.loads(output.strip().splitlines()[-1])})
    return {side: {key: statistics.median(run[key] for run in rounds) for key in rounds[0]}
            for side, rounds in runs.items()}


def stage_profile(records: list[dict[str, str]], warm: list[dict[str, str]], repeats: int) -> list[tuple[str, float]]:
    """Seconds of each stage of our steady-state run (medians of ``repeats``), each stage timed alone over the
    same pairs after warming on ``warm`` (so each new word's stem and synonym set are computed in the stage that
    first needs them, as in the run), and the whole run; "rest" is the whole minus the stages (caching the
    prepared texts, pairing, the best score per example)."""
    from itertools import chain

    from metrics._core import core_meteor as core
    from metrics._core.core_meteor_tokenize import nltk_word_tokens

    options = core.MeteorOptions()
    exact_and_stem = core.MeteorOptions(synonyms=False)
    wordnet = core.load_wordnet(options.wordnet)
    score = ours_scorer()
    texts = list(dict.fromkeys(text for record in records for text in (record["reference"], *map(record.get, SYSTEMS))))
    times: dict[str, list[float]] = {}

    def timed(name: str, function: Callable[[], Any]) -> Any:
        gc.collect()
        start = time.perf_counter()
        result = function()
        times.setdefault(name, []).append(time.perf_counter() - start)
        return result

    for _ in range(repeats):
        clear_caches()
        score(warm)
        clear_texts()
        timed("whole", lambda: score(records))
        clear_caches()
        score(warm)
        clear_texts()
        tokens = timed("tokenize", lambda: {text: nltk_word_tokens(text) for text in texts})
        words = timed("lowercase", lambda: {text: core._words(tokens[text]) for text in texts})
        # One batch per system, as the run scores them.
        batches = [[(words[record[system]], words[record["reference"]]) for record in records] for system in SYSTEMS]
        timed("stems", lambda: [core.porter_stems(list(dict.fromkeys(chain.from_iterable(chain.from_iterable(batch)))))
                                for batch in batches])
        timed("exact and stem", lambda: [core._pair_scores(batch, exact_and_stem, None) for batch in batches])
        timed("three stages", lambda: [core._pair_scores(batch, options, wordnet) for batch in batches])
    median = {name: statistics.median(values) for name, values in times.items()}
    stages = [
        ("tokenization (NLTK's rules)", median["tokenize"]),
        ("lowercasing", median["lowercase"]),
        ("Porter stems of each batch's distinct words", median["stems"]),
        ("interning, exact and stem stages, chunks, formula", median["exact and stem"]),
        ("WordNet synonym stage", median["three stages"] - median["exact and stem"]),
    ]
    rest = median["whole"] - sum(seconds for _, seconds in stages)
    return [*stages, ("rest (text cache, pairing, best score)", rest), ("whole run", median["whole"])]


def top_functions(records: list[dict[str, str]], warm: list[dict[str, str]], count: int = 8) -> list[str]:
    """cProfile's top functions by own time in one steady-state run (cProfile inflates call-heavy code)."""
    score = ours_scorer()
    clear_caches()
    score(warm)
    clear_texts()
    profiler = cProfile.Profile()
    profiler.runcall(score, records)
    stats = pstats.Stats(profiler)
    total = stats.total_tt  # type: ignore[attr-defined]
    rows = sorted(stats.stats.items(), key=lambda item: item[1][2], reverse=True)[:count]  # type: ignore[attr-defined]
    return [f"  {own / total:6.1%} {own:6.2f} s {calls:9d} calls  {Path(file).name}:{line}({name})"
            for (file, line, name), (_, calls, own, _, _) in rows]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=project.SHARED_DATA)
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3, help="rounds of every variant (NLTK's are slow)")
    parser.add_argument("--fresh-repeats", type=int, default=3, help="rounds of fresh processes per side")
    parser.add_argument("--memory-examples", type=int, default=500)
    parser.add_argument("--child", choices=("nltk", "ours"), help=argparse.SUPPRESS)
    parser.add_argument("--corpus", type=Path, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        return child(arguments.child, arguments.data, arguments.examples, arguments.corpus)

    import nltk

    from metrics._core import core_wordnet
    from metrics._core.core_meteor import MeteorOptions, meteor_scores, prepare_references
    from metrics._core.core_meteor_tokenize import nltk_word_tokens

    records = read_examples(arguments.data, 0, arguments.examples)
    warm_records = read_examples(arguments.data, arguments.examples, arguments.examples)
    references = [record["reference"] for record in records]
    systems = {system: [record[system] for record in records] for system in SYSTEMS}
    pairs = len(records) * len(SYSTEMS)

    scratch = Path(tempfile.mkdtemp(prefix="bench-meteor-"))
    atexit.register(shutil.rmtree, scratch, True)
    corpus, origin = nltk_corpus(scratch / "nltk_data")
    start = time.perf_counter()
    wordnet = nltk_reader(corpus)
    nltk_load = time.perf_counter() - start
    start = time.perf_counter()
    ours_wordnet = core_wordnet.load_wordnet()
    ours_load = time.perf_counter() - start
    options = MeteorOptions()
    print(f"CNN/DM: {len(records)} examples x {len(SYSTEMS)} systems = {pairs} pairs; nltk {nltk.__version__}; "
          f"warm-up text: examples {len(records)} to {len(records) + len(warm_records) - 1}")
    print(f"WordNet: NLTK's from {origin} ({nltk_load:.2f} s to build the reader); ours from "
          f"{ours_wordnet.location.path} ({ours_load:.2f} s to load)")

    nltk_score = nltk_scorer(wordnet)
    ours_score = ours_scorer()

    def nltk_texts(subset: slice = slice(None)) -> list[list[float]]:
        return nltk_score(records[subset])

    reference_tokens = [nltk.word_tokenize(reference, preserve_line=True) for reference in references]
    system_tokens = {
        system: [nltk.word_tokenize(text, preserve_line=True) for text in texts] for system, texts in systems.items()
    }

    def nltk_tokens(subset: slice = slice(None)) -> list[list[float]]:
        from nltk.translate.meteor_score import meteor_score

        return [
            [
                meteor_score([reference], prediction, wordnet=wordnet)
                for prediction, reference in zip(system_tokens[system][subset], reference_tokens[subset], strict=True)
            ]
            for system in SYSTEMS
        ]

    def ours_texts(subset: slice = slice(None)) -> list[list[float]]:
        return ours_score(records[subset])

    def ours_prepared_run(subset: slice = slice(None)) -> list[list[float]]:
        prepared = prepare_references([[reference] for reference in references[subset]], options)
        return [meteor_scores(systems[system][subset], prepared, options) for system in SYSTEMS]

    def ours_tokens(subset: slice = slice(None)) -> list[list[float]]:
        nested = [[tokens] for tokens in reference_tokens[subset]]
        return [meteor_scores(system_tokens[system][subset], nested, options) for system in SYSTEMS]

    def warmed_on_other_text() -> None:
        clear_caches()
        ours_score(warm_records)
        clear_texts()

    nltk_first = first_run(nltk_texts)
    ours_first = first_run(ours_texts, clear_caches)
    nothing = lambda: None  # noqa: E731
    timings = interleaved(
        {
            "nltk texts": (nltk_texts, nothing),
            "ours texts steady": (ours_texts, warmed_on_other_text),
            "ours texts cold": (ours_texts, clear_caches),
            "ours texts warm": (ours_texts, clear_texts),
            "ours prepared": (ours_prepared_run, clear_caches),
            "nltk tokens": (nltk_tokens, nothing),
            "ours tokens cold": (ours_tokens, clear_caches),
            "ours tokens warm": (ours_tokens, clear_texts),
        },
        arguments.repeats,
    )
    fresh = fresh_rounds(arguments.data, arguments.examples, corpus, arguments.fresh_repeats)

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
    steady = timings["ours texts steady"]
    print(f"\nHeadline ratios (NLTK time / ours; floor 10x), {pairs} pairs, texts tokenized on both sides:")
    print(f"  steady state (medians of {arguments.repeats} interleaved rounds): "
          f"{timings['nltk texts'][0] / steady[0]:.1f}x wall, {timings['nltk texts'][1] / steady[1]:.1f}x CPU; "
          f"scores: {agreement(steady[2], timings['nltk texts'][2])}")
    print(f"  fresh process, load included (medians of {arguments.fresh_repeats} rounds): "
          f"{fresh['nltk']['wall'] / fresh['ours']['wall']:.1f}x wall, {fresh['nltk']['cpu'] / fresh['ours']['cpu']:.1f}x "
          f"CPU; score sums equal: {fresh['nltk']['sum'] == fresh['ours']['sum']}")
    print("\nFresh processes (seconds; wall and CPU of the whole child, start-up included; phases in the child):")
    print(f"  {'':6s} {'wall':>8s} {'CPU':>8s} {'import':>8s} {'load':>8s} {'score':>8s}")
    for side, numbers in fresh.items():
        print(f"  {side:6s} " + " ".join(f"{numbers[key]:8.2f}" for key in ("wall", "cpu", "import", "load", "score")))
    print("\nFirst runs in this process (NLTK's WordNet reader and our caches empty, as in a fresh evaluate process):")
    print(header)
    print(row("NLTK word_tokenize + meteor_score, first run", nltk_first))
    print(row("ours, meteor_scores on texts, first run", ours_first, nltk_first))
    print(f"\nMedians of {arguments.repeats} interleaved rounds.")
    sections = (
        ("Texts (tokenization included):", "nltk texts", "NLTK word_tokenize + meteor_score", (
            ("ours, texts, steady (warmed on other text)", "ours texts steady"),
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

    print(f"\nWhere our steady-state time goes (wall, medians of {arguments.repeats}; each stage timed alone):")
    stages = stage_profile(records, warm_records, arguments.repeats)
    whole = stages[-1][1]
    for name, seconds in stages:
        print(f"  {name:50s} {seconds:7.3f} s {seconds / whole:6.1%} {seconds / pairs * 1e6:6.0f} us/pair")
    print("cProfile, one steady-state run, top functions by own time:")
    print("\n".join(top_functions(records, warm_records)))

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
