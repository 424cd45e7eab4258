#!/usr/bin/env python3
"""Benchmark: SARI, our core against evaluate's ``sari`` module (its code, transcribed in the tests).

    python scripts/bench_sari.py [--examples 10000] [--references 8] [--repeats 3] [--memory]

Data: seeded TurkCorpus-like examples (untokenized English-like sentences of 8 to 40 words with
punctuation, capitals and numbers; a system output and 8 references per source, each a light edit of it:
words dropped, replaced or appended, some references equal to the source). Rows, each timed as a median
of --repeats runs, evaluate's and ours alternating (the machine may be shared: alternating exposes both to
the same load), process caches cleared before each of our runs (every run is a first run; our core keeps no
per-process SARI cache):

- arithmetic: evaluate's ``SARIsent`` summed over the corpus, on texts already normalised by evaluate's
  ``normalize``, against our ``sari_rows`` + ``sari_from_totals`` on the same texts (``variant="evaluate"``,
  ``lowercase=False``, ``tokenizer="none"``, no input checks);
- end to end: evaluate's ``_compute`` (normalisation with sacreBLEU's 13a, then ``SARIsent``) against our
  ``sari_score`` (input checks, our 13a, arithmetic), on the first system's outputs, then on the second's;
- the default ``variant="paper"`` and ``variant="easse"``, end to end, for their own cost, checked against
  the transcriptions of the authors' ``SARI.py`` (per example) and of EASSE's ``corpus_sari`` (untimed).

Checks: corpus SARI equal within 1e-12, and per-example SARI values bit for bit (``==``) against evaluate's
``SARIsent`` (arithmetic row) and the authors' ``SARI.py`` (paper row). ratio = evaluate / ours. ``first``:
our first run in the process. Peak memory (tracemalloc, one run, slow) with --memory.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import project

project.use_test_helpers()

from metrics._core.core_process import clear_caches  # noqa: E402
from metrics._core.core_sari import SariOptions, sari_from_totals, sari_rows, sari_schema, sari_score  # noqa: E402
from test_sari_core import SARIsent, authors_sari_components, easse_corpus_components  # noqa: E402
from test_sari_core import evaluate_compute, normalize  # noqa: E402

WORDS = (
    "the of and a in to was is for on as by with from at that an his which it were are be this also had "
    "first city school team state born known film new two after species river village county district "
    "season album world during used three national later until between called large small group member "
    "population family however river game moved became played released including between located music"
).split()
SIMPLER = "big small old new good bad get use make show help start end part place many some".split()
PROPER = "London Paris John Smith Texas Rome October Germany Australia Wikipedia".split()


def sentence(rng: random.Random) -> list[str]:
    """An untokenized English-like sentence as a list of space-separated words (punctuation attached)."""
    words = []
    for index in range(rng.randint(8, 40)):
        roll = rng.random()
        if roll < 0.08:
            word = rng.choice(PROPER)
        elif roll < 0.12:
            word = rng.choice(("1,000", "95", "2008", "3.5", "12th", "-5"))
        else:
            word = rng.choice(WORDS)
        if rng.random() < 0.07:
            word += rng.choice((",", ";", ":"))
        if rng.random() < 0.03:
            word = rng.choice(('"', "(")) + word + rng.choice(('"', ")"))
        words.append(word)
    words[0] = words[0].capitalize()
    words[-1] += "."
    return words


def edit(rng: random.Random, words: list[str], rate: float) -> str:
    """A light edit: words dropped, replaced by simpler ones, some appended; sometimes split after a clause."""
    edited = []
    for word in words:
        roll = rng.random()
        if roll < rate / 2:
            continue
        edited.append(rng.choice(SIMPLER) if roll < rate else word)
    if edited and rng.random() < 0.15:
        edited.insert(rng.randrange(len(edited)), rng.choice(SIMPLER))
    if len(edited) > 10 and rng.random() < 0.1:
        cut = rng.randrange(4, len(edited) - 3)
        edited[cut] += "."
        edited[cut + 1] = edited[cut + 1].capitalize()
    return " ".join(edited)


def corpus(examples: int, references: int, seed: int = 2016) -> tuple[list[str], list[list[str]], list[list[str]]]:
    """Sources, two systems' outputs and the references of a seeded TurkCorpus-like test set."""
    rng = random.Random(seed)
    sources, systems, all_references = [], ([], []), []
    for _ in range(examples):
        words = sentence(rng)
        source = " ".join(words)
        sources.append(source)
        for outputs in systems:
            outputs.append(edit(rng, words, rng.choice((0.0, 0.1, 0.2, 0.3))))
        all_references.append([source if rng.random() < 0.15 else edit(rng, words, rng.choice((0.05, 0.15, 0.3)))
                               for _ in range(references)])
    return sources, [list(outputs) for outputs in systems], all_references


def evaluate_arithmetic(sources: list[str], predictions: list[str], references: list[list[str]]
                        ) -> tuple[float, list[float]]:
    """evaluate's corpus SARI on texts it has normalised already: the sum of ``SARIsent``, averaged (and the
    per-example values)."""
    total = 0
    values = []
    for source, prediction, example_references in zip(sources, predictions, references):
        value = SARIsent(source, prediction, example_references)
        values.append(value)
        total += value
    return 100 * (total / len(predictions)), values


def ours_rows(sources: list[str], predictions: list[str], references: list[list[str]], options: SariOptions,
              validate: bool = True) -> tuple[dict[str, float], list[tuple]]:
    schema = sari_schema("sari", options)
    rows = sari_rows(sources, predictions, references, options, validate=validate)
    return sari_from_totals(schema.totals_of_rows(rows, options.stats_signature()), options), rows


def close(ours: float, theirs: float) -> bool:
    return abs(ours - theirs) <= 1e-12


def timed_pair(theirs: Callable[[], Any] | None, ours: Callable[[], Any], repeats: int
               ) -> tuple[float | None, Any, float, Any, float]:
    """Medians of ``repeats`` runs of ``theirs`` and ``ours``, alternating (caches cleared before ours), their
    last results, and our first run's time."""
    their_times, our_times = [], []
    their_result = our_result = None
    for _ in range(repeats):
        if theirs is not None:
            gc.collect()
            start = time.perf_counter()
            their_result = theirs()
            their_times.append(time.perf_counter() - start)
        clear_caches()
        gc.collect()
        start = time.perf_counter()
        our_result = ours()
        our_times.append(time.perf_counter() - start)
    their_median = statistics.median(their_times) if their_times else None
    return their_median, their_result, statistics.median(our_times), our_result, our_times[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--references", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--memory", action="store_true", help="also measure peak memory (tracemalloc; slow)")
    arguments = parser.parse_args()

    sources, (first, second), references = corpus(arguments.examples, arguments.references)
    normalized = ([normalize(text) for text in sources], [normalize(text) for text in first],
                  [[normalize(text) for text in texts] for texts in references])
    tokens = sum(len(text.split()) for text in normalized[0])
    print(f"{arguments.examples:,} examples ({tokens / arguments.examples:.1f} tokens per source after 13a), "
          f"{arguments.references} references each; medians of {arguments.repeats} runs, alternating\n")
    evaluate_options = SariOptions(variant="evaluate")
    raw_options = SariOptions(variant="evaluate", lowercase=False, tokenizer="none")
    rows: list[tuple[str, Any, float, float, str, Any]] = []

    def arithmetic_theirs() -> tuple[float, list[float]]:
        return evaluate_arithmetic(*normalized)

    def arithmetic_ours() -> tuple[dict[str, float], list[tuple]]:
        return ours_rows(*normalized, raw_options, validate=False)

    theirs_time, theirs, ours_time, ours, first_time = timed_pair(arithmetic_theirs, arithmetic_ours,
                                                                  arguments.repeats)
    position = sari_schema("sari", raw_options).position("sari")
    identical = sum(row[position] == value for row, value in zip(ours[1], theirs[1], strict=True))
    equal = close(ours[0]["sari"], theirs[0])
    rows.append(("arithmetic (normalised texts)", theirs_time, ours_time, first_time,
                 f"{equal}; per example {identical:,}/{len(theirs[1]):,} bit-identical",
                 (arithmetic_theirs, arithmetic_ours)))
    all_equal = equal and identical == len(theirs[1])

    for name, outputs in (("end to end (raw texts)", first), ("end to end, second system", second)):
        def end_to_end_theirs(outputs: list[str] = outputs) -> float:
            return evaluate_compute(sources, outputs, references)["sari"]

        def end_to_end_ours(outputs: list[str] = outputs) -> dict[str, float]:
            return sari_score(sources, outputs, references, evaluate_options)

        theirs_time, theirs, ours_time, ours, first_time = timed_pair(end_to_end_theirs, end_to_end_ours,
                                                                      arguments.repeats)
        equal = close(ours["sari"], theirs)
        all_equal &= equal
        rows.append((name, theirs_time, ours_time, first_time, str(equal), (end_to_end_theirs, end_to_end_ours)))

    def paper_ours() -> tuple[dict[str, float], list[tuple]]:
        return ours_rows(sources, first, references, SariOptions())

    _, _, ours_time, (paper, paper_rows), first_time = timed_pair(None, paper_ours, arguments.repeats)
    authors = [authors_sari_components(source, prediction, texts) for source, prediction, texts in zip(*normalized)]
    identical = sum(tuple(row[:4]) == values for row, values in zip(paper_rows, authors, strict=True))
    equal = close(paper["sari"], 100 * sum(values[3] for values in authors) / len(authors))
    all_equal &= equal and identical == len(authors)
    rows.append(('default variant="paper", end to end', None, ours_time, first_time,
                 f"{equal} (SARI.py); per example {identical:,}/{len(authors):,} bit-identical", None))

    def easse_ours() -> dict[str, float]:
        return sari_score(sources, first, references, SariOptions(variant="easse"))

    _, _, ours_time, easse, first_time = timed_pair(None, easse_ours, arguments.repeats)
    expected = dict(zip(("sari_add", "sari_keep", "sari_del", "sari"), easse_corpus_components(sources, first,
                                                                                              references)))
    equal = all(close(easse[key], value) for key, value in expected.items())
    all_equal &= equal
    rows.append(('variant="easse", end to end', None, ours_time, first_time, f"{equal} (EASSE)", None))

    print("| what | evaluate's sari | ours (median; first) | ratio | equal |")
    print("|---|---|---|---|---|")
    for name, theirs_time, ours_time, first_time, equal_text, _ in rows:
        if theirs_time is None:
            print(f"| {name} | - | {ours_time:.2f} s; {first_time:.2f} s | - | {equal_text} |")
            continue
        print(f"| {name} | {theirs_time:.2f} s | {ours_time:.2f} s; {first_time:.2f} s | "
              f"{theirs_time / ours_time:.1f}x | {equal_text} |")
    print(f"\ncorpus SARI: evaluate variant {ours['sari']:.6f} (second system), paper variant {paper['sari']:.6f}, "
          f"easse variant {easse['sari']:.6f} (first system)")
    if arguments.memory:
        print("\n| what | peak MiB evaluate's sari / ours |")
        print("|---|---|")
        for name, _, _, _, _, runs in rows[:2]:
            print(f"| {name} | {project.peak_mib(runs[0]):,.0f} / {project.peak_mib(runs[1], before=clear_caches):,.0f} |")
    return 0 if all_equal else 1


if __name__ == "__main__":
    raise SystemExit(main())
