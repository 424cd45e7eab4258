#!/usr/bin/env python3
"""Benchmark: SARI, our core against evaluate's ``sari`` module (its code, transcribed in the tests), one run.

    python scripts/bench_sari.py [--examples 10000] [--references 8] [--repeats 3]

Data: seeded TurkCorpus-like examples (untokenized English-like sentences of 8 to 40 words with
punctuation, capitals and numbers; a system output and 8 references per source, each a light edit of it:
words dropped, replaced or appended, some references equal to the source). Rows, each timed as a median
of --repeats runs:

- arithmetic: evaluate's ``SARIsent`` summed over the corpus, on texts already normalised by evaluate's
  ``normalize``, against our ``sari_rows`` + ``sari_from_totals`` on the same texts (``variant="evaluate"``,
  ``lowercase=False``, ``tokenizer="none"``, no input checks), process caches cleared before each run;
- end to end: evaluate's ``_compute`` (normalisation with sacreBLEU's 13a, then ``SARIsent``) against our
  ``sari_score`` (input checks, our 13a, arithmetic), caches cleared before each run;
- end to end, another system on the same test set: the source/reference counts and tokenizations already
  cached by a run on the first system's outputs (the cache limit is raised to hold the whole test set);
- the default ``variant="paper"``, end to end, for its own cost.

Results are checked equal: evaluate's corpus SARI and ours within 1e-12 on both systems. ratio =
evaluate / ours. Peak memory (tracemalloc, one run, slow) with --memory.
"""

from __future__ import annotations

import argparse
import random
from typing import Any

import project

project.use_test_helpers()

from metrics._core.core_process import cache_usage, clear_caches, set_cache_limit  # noqa: E402
from metrics._core.core_sari import SariOptions, sari_from_totals, sari_rows, sari_schema, sari_score  # noqa: E402
from test_sari_core import SARIsent, evaluate_compute, normalize  # noqa: E402

COUNTS_CACHE = "simplification.sari_source_reference_counts"
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


def evaluate_arithmetic(sources: list[str], predictions: list[str], references: list[list[str]]) -> float:
    """evaluate's corpus SARI on texts it has normalised already: the sum of ``SARIsent``, averaged."""
    total = 0
    for source, prediction, example_references in zip(sources, predictions, references):
        total += SARIsent(source, prediction, example_references)
    return 100 * (total / len(predictions))


def ours_score(sources: list[str], predictions: list[str], references: list[list[str]], options: SariOptions,
               validate: bool = True) -> dict[str, float]:
    schema = sari_schema("sari", options)
    rows = sari_rows(sources, predictions, references, options, validate=validate)
    return sari_from_totals(schema.totals_of_rows(rows, options.stats_signature()), options)


def close(ours: float, theirs: float) -> bool:
    return abs(ours - theirs) <= 1e-12


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
          f"{arguments.references} references each; medians of {arguments.repeats} runs\n")
    print("| what | evaluate's sari | ours | ratio | equal |")
    print("|---|---|---|---|---|")
    evaluate_options = SariOptions(variant="evaluate")
    raw_options = SariOptions(variant="evaluate", lowercase=False, tokenizer="none")
    all_equal = True
    rows: list[tuple[str, Any, Any, Any, Any]] = []

    def arithmetic_theirs() -> float:
        return evaluate_arithmetic(*normalized)

    def arithmetic_ours() -> dict[str, float]:
        return ours_score(*normalized, raw_options, validate=False)

    theirs_time, theirs = project.timed(arithmetic_theirs, arguments.repeats)
    ours_time, ours = project.timed(arithmetic_ours, arguments.repeats, before=clear_caches)
    rows.append(("arithmetic (normalised texts, cold caches)", theirs_time, ours_time, close(ours["sari"], theirs),
                 (arithmetic_theirs, arithmetic_ours)))

    def end_to_end_theirs() -> float:
        return evaluate_compute(sources, first, references)["sari"]

    def end_to_end_ours() -> dict[str, float]:
        return sari_score(sources, first, references, evaluate_options)

    theirs_time, theirs = project.timed(end_to_end_theirs, arguments.repeats)
    ours_time, ours = project.timed(end_to_end_ours, arguments.repeats, before=clear_caches)
    rows.append(("end to end (raw texts, cold caches)", theirs_time, ours_time, close(ours["sari"], theirs),
                 (end_to_end_theirs, end_to_end_ours)))

    set_cache_limit(COUNTS_CACHE, 4 << 30)

    def second_theirs() -> float:
        return evaluate_compute(sources, second, references)["sari"]

    def second_ours() -> dict[str, float]:
        return sari_score(sources, second, references, evaluate_options)

    def warm_up() -> None:
        sari_score(sources, first, references, evaluate_options)

    clear_caches()
    warm_up()
    theirs_time, theirs = project.timed(second_theirs, arguments.repeats)
    ours_time, ours = project.timed(second_ours, arguments.repeats)
    cached = cache_usage().get(COUNTS_CACHE, (0, 0, 0))
    rows.append((f"end to end, second system (cached counts: {cached[1] / 2**20:,.0f} MiB)", theirs_time, ours_time,
                 close(ours["sari"], theirs), (second_theirs, second_ours)))
    set_cache_limit(COUNTS_CACHE, 128 << 20)

    def paper_ours() -> dict[str, float]:
        return sari_score(sources, first, references, SariOptions())

    ours_time, paper = project.timed(paper_ours, arguments.repeats, before=clear_caches)
    rows.append(('default variant="paper", end to end (cold caches)', None, ours_time, None, None))

    for name, theirs_time, ours_time, equal, runs in rows:
        if theirs_time is None:
            print(f"| {name} | - | {ours_time:.2f} s | - | - |")
            continue
        all_equal &= bool(equal)
        print(f"| {name} | {theirs_time:.2f} s | {ours_time:.2f} s | {theirs_time / ours_time:.1f}x | {equal} |")
    print(f"\ncorpus SARI: evaluate variant {ours['sari']:.6f} (second system), "
          f"paper variant {paper['sari']:.6f} (first system)")
    if arguments.memory:
        print("\n| what | peak MiB evaluate's sari / ours |")
        print("|---|---|")
        for name, _, _, _, runs in rows[:2]:
            print(f"| {name} | {project.peak_mib(runs[0]):,.0f} / {project.peak_mib(runs[1], before=clear_caches):,.0f} |")
    return 0 if all_equal else 1


if __name__ == "__main__":
    raise SystemExit(main())
