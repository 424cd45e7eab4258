#!/usr/bin/env python3
"""Readability: our default counting against textstat 0.7.13, text by text, with the causes of the differences.

    python scripts/compare_textstat.py [--articles 11490] [--repeats 3] [--top 8] [--timing-only]

Texts: the CNN/DailyMail test summaries of See et al. (2017) in ../shared/data (the reference and the three
systems' outputs of each article; lowercased, PTB-tokenised, one sentence a line). For each text it compares our
default counts (``textstat_compatible=False``) with textstat's ``sentence_count``, ``lexicon_count`` and
``syllable_count`` and our per-text Flesch-Kincaid grade (FKGL) and Flesch reading ease (FRE) with textstat's,
then counts what causes the differences:

- sentences: the mechanisms present in the texts whose sentence counts differ (textstat drops regex "sentences"
  of at most 2 words, cuts at every full stop, also inside ``u.s.`` or ``3.5``, and reads newlines as spaces;
  ours cuts at newlines and at sentence-final punctuation followed by space, abbreviations excepted);
- words: tokens that one side counts as a word and the other does not;
- syllables: word occurrences whose counts differ, by kind: textstat deleted inner punctuation (``co-op`` ->
  ``coop``, ``u.s.`` -> ``us``), cmudict's count differs from our rule, or pyphen's (words cmudict lacks);
  and how often our rule and pyphen's hyphenation points + 1 give cmudict's count, where cmudict has the word.

It also splits the corpus-level difference between the counts (sentences, then words, then syllables swapped in
one at a time) and times textstat (``flesch_kincaid_grade`` + ``flesch_reading_ease`` per text, its per-text
caches cleared before each run) against ours in both modes (rows, per-text scores and the corpus score; our
memos of token, word and run counts cleared before each run) on the same texts in the same process, interleaved:
medians of --repeats rounds, wall and CPU time; ratio = textstat / ours. Then where our default's time goes, stage by
stage. The Markdown it prints is meant for the metric card.
Needs textstat 0.7.13 and NLTK's cmudict corpus (``python -m nltk.downloader cmudict``); downloads nothing.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from functools import partial

import project
from bench_timing import interleaved

from metrics._core import core_readability_textstat
from metrics._core.core_process import process_state
from metrics._core.core_readability import ReadabilityOptions, clear_readability_memos, flesch_kincaid_grade
from metrics._core.core_readability import flesch_reading_ease
from metrics._core.core_readability import readability_example_scores, readability_from_totals, readability_rows
from metrics._core.core_readability import readability_schema, readability_sentences, readability_words
from metrics._core.core_readability_syllables import english_syllables
from metrics._core.core_readability_textstat import nltk_cmudict_found, textstat_syllable_counter, textstat_words
from metrics._core.core_sentence_split import split_sentences

_SENTENCE = re.compile(r"\b[^.!?]+[.!?]*")
_INNER_STOP = re.compile(r"[.!?](?=[^\s.!?])")
_LINE_END = re.compile(r"[.!?\u2026][\"'\u201d\u2019)\]]*\s*$")
_WORD_CHARACTER = re.compile(r"[^\W_]")
_DICTIONARY_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


def load_textstat():
    """textstat 0.7.13 with NLTK's cmudict present (it would try to download it otherwise), or exit."""
    try:
        import textstat
    except ImportError:
        sys.exit("textstat is not installed: pip install textstat==0.7.13")
    if tuple(textstat.__version__) != (0, 7, 13):
        print(f"warning: this compares with textstat 0.7.13, found {textstat.__version__}", file=sys.stderr)
    import nltk

    if nltk_cmudict_found():
        return textstat
    sys.exit(f"NLTK's cmudict corpus (textstat 0.7.13 reads it) is not in {nltk.data.path}: "
             "python -m nltk.downloader cmudict")


def clear_textstat_caches() -> None:
    """Empty textstat's per-text lru caches (not its loaded cmudict and pyphen objects)."""
    for name, module in list(sys.modules.items()):
        if not name.startswith("textstat.backend"):
            continue
        for attribute in vars(module).values():
            if hasattr(attribute, "cache_clear") and getattr(attribute, "__name__", "") not in (
                    "get_cmudict", "get_pyphen", "get_lang_easy_words"):
                attribute.cache_clear()


def clear_our_caches() -> None:
    clear_readability_memos()
    process_state(core_readability_textstat.__file__, "pyphen_memo", dict).clear()


def percent(part: int, whole: int) -> str:
    return f"{part:,} ({100 * part / whole:.1f}%)" if whole else "0"


def describe(values: Sequence[float]) -> str:
    """mean |d|, median |d|, 95th percentile |d|, max |d| of differences."""
    absolute = sorted(abs(value) for value in values)
    p95 = absolute[min(len(absolute) - 1, int(0.95 * len(absolute)))]
    return (f"{statistics.fmean(absolute):.2f} | {statistics.median(absolute):.2f} | {p95:.2f} | "
            f"{absolute[-1]:.2f}")


def sentence_mechanisms(text: str) -> Counter:
    """What in ``text`` makes textstat's sentence count differ from ours (occurrences of each mechanism)."""
    found: Counter = Counter()
    pieces = _SENTENCE.findall(text)
    found["textstat drops regex pieces of <= 2 words"] = sum(1 for piece in pieces if len(textstat_words(piece)) <= 2)
    found["textstat cuts at a full stop inside a token (u.s., 3.5, p.m.)"] = len(_INNER_STOP.findall(text))
    lines = [line for line in text.split("\n") if _WORD_CHARACTER.search(line)]
    found["we cut at a newline not after . ! ? (textstat reads a space)"] = sum(
        1 for line in lines[:-1] if not _LINE_END.search(line))
    ours_pieces = sum(1 for line in lines for piece in split_sentences(line) if _WORD_CHARACTER.search(piece))
    regex_cuts = sum(len(re.findall(r"[.!?]+(?=\s|$)", line)) or 1 for line in lines)
    found["our splitter keeps an abbreviation's full stop (mr., dr., j.)"] = max(0, regex_cuts - ours_pieces)
    return found


def syllable_causes(text: str, syllables_of: Callable[[str], int], cmudict: dict[str, int],
                    causes: dict[str, Counter], net: Counter, occurrences: Counter) -> None:
    """Compare token by token (textstat's filter never joins or splits whitespace tokens)."""
    for token in text.split():
        ours = english_syllables(token) if _WORD_CHARACTER.search(token) else 0
        filtered = textstat_words(token)
        if not filtered:
            continue
        word = filtered[0].lower()
        theirs = syllables_of(word)
        if ours == theirs:
            continue
        plain = re.sub(r"^[^\w']+|[^\w']+$", "", token.lower())
        if plain != word:
            kind = "textstat deletes inner punctuation (co-op -> coop, u.s. -> us)"
        elif word in cmudict:
            kind = "cmudict's first pronunciation differs from our rule"
        else:
            kind = "pyphen's hyphenation points + 1 differ from our rule (word not in cmudict)"
        causes[kind][f"{token.lower()} {ours}/{theirs}"] += 1
        net[kind] += ours - theirs
        occurrences[kind] += 1


def score_rows(rows: list, options: ReadabilityOptions) -> dict[str, float]:
    """Per-text scores and the corpus score of ready rows."""
    readability_example_scores(rows, options)
    totals = readability_schema().totals_of_rows(rows, options.stats_signature())
    return readability_from_totals(totals, options)


def ours_run(texts: list[str], options: ReadabilityOptions) -> Callable[[], object]:
    """Our whole path: rows (texts checked), per-text scores and the corpus score."""
    return lambda: score_rows(readability_rows(texts, options), options)


def print_timing(textstat, texts: list[str], repeats: int) -> None:
    """textstat against ours in both modes, interleaved on the same texts, and where our default's time goes."""
    default = ReadabilityOptions.resolve("readability", {})
    compatible = ReadabilityOptions.resolve("readability", {"textstat_compatible": True})
    timings = interleaved({
        "textstat 0.7.13 (FKGL + FRE per text)": (
            lambda: [(textstat.flesch_kincaid_grade(text), textstat.flesch_reading_ease(text)) for text in texts],
            clear_textstat_caches),
        "ours, default (rows, per-text scores, corpus)": (ours_run(texts, default), clear_our_caches),
        "ours, textstat_compatible=True": (ours_run(texts, compatible), clear_our_caches),
    }, repeats)
    (theirs_wall, theirs_cpu, _), *_ = timings.values()
    print(f"Timing ({len(texts):,} texts, medians of {repeats} interleaved rounds; textstat's per-text caches and "
          "our memos of token, word and run counts cleared before each run; cmudict and pyphen loaded, pyphen's own "
          "per-word cache shared):\n")
    print("| | wall | CPU | texts/s (CPU) | ratio textstat / ours, wall | ratio, CPU |")
    print("|---|---|---|---|---|---|")
    for label, (wall, cpu, _) in timings.items():
        print(f"| {label} | {wall:.2f} s | {cpu:.2f} s | {len(texts) / cpu:,.0f} | {theirs_wall / wall:.2f}x | "
              f"{theirs_cpu / cpu:.2f}x |")
    print()
    tokens = list(dict.fromkeys(token for text in texts for token in text.split()))
    stages = interleaved({
        "whole default path (as above)": (ours_run(texts, default), clear_our_caches),
        f"counts of the {len(tokens):,} distinct tokens (as one text), memos cold": (
            partial(readability_rows, [" ".join(tokens)], default), clear_our_caches),
        "rows with the memos warm": (lambda: readability_rows(texts, default), lambda: None),
        "of which `str.split` of each text": (lambda: [len(text.split()) for text in texts], lambda: None),
        "of which sentences (`readability_sentences`)": (
            lambda: list(map(readability_sentences, texts)), lambda: None),
        "per-text scores and corpus score": (partial(score_rows, readability_rows(texts, default), default),
                                             lambda: None),
    }, repeats)
    print("Where our default's time goes (CPU, same rounds):\n")
    print("| stage | CPU | share of textstat's time |")
    print("|---|---|---|")
    for label, (_, cpu, _) in stages.items():
        print(f"| {label} | {cpu:.3f} s | {100 * cpu / theirs_cpu:.1f}% |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--articles", type=int, default=None, help="first N articles (default: all 11,490)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--top", type=int, default=8, help="examples listed per cause")
    parser.add_argument("--timing-only", action="store_true", help="only the parity count and the timing")
    arguments = parser.parse_args()
    textstat = load_textstat()
    records = project.cnndm(arguments.articles)
    texts = [record[key] for record in records for key in ("reference", *project.CNNDM_SYSTEMS)]
    default = ReadabilityOptions.resolve("readability", {})
    compatible = ReadabilityOptions.resolve("readability", {"textstat_compatible": True})
    syllables_of = textstat_syllable_counter()  # loads cmudict and pyphen once, outside the timings
    textstat.flesch_kincaid_grade("Warm up textstat's cmudict.")
    cmudict = process_state(core_readability_textstat.__file__, "cmudict_syllables",
                            core_readability_textstat._load_cmudict_syllables)

    ours_rows = readability_rows(texts, default)
    theirs_rows = readability_rows(texts, compatible)  # textstat's counts (checked equal below)
    ours_scores = readability_example_scores(ours_rows, default)
    theirs_scores = [{"flesch_kincaid_grade": textstat.flesch_kincaid_grade(text),
                      "flesch_reading_ease": textstat.flesch_reading_ease(text)} for text in texts]
    parity = sum(ours != theirs for ours, theirs in zip(readability_example_scores(theirs_rows, compatible),
                                                         theirs_scores, strict=True))

    differ = {name: [i for i in range(len(texts)) if ours_rows[i][k] != theirs_rows[i][k]]
              for k, name in enumerate(("sentences", "words", "syllables"))}
    scored = [i for i in range(len(texts)) if ours_scores[i]["flesch_kincaid_grade"] is not None
              and theirs_rows[i][1] and theirs_rows[i][2]]
    n = len(texts)
    print(f"## Default counting vs textstat 0.7.13: {n:,} CNN/DailyMail summaries (references and 3 systems)\n")
    print(f"`textstat_compatible=True` reproduces textstat's per-text scores on all of them: {parity} mismatches.\n")
    if arguments.timing_only:
        print_timing(textstat, texts, arguments.repeats)
        return 0 if parity == 0 else 1
    print("| count | texts that differ | mean per text, ours | mean per text, textstat | mean difference |")
    print("|---|---|---|---|---|")
    for k, name in enumerate(("sentences", "words", "syllables")):
        ours_mean = statistics.fmean(row[k] for row in ours_rows)
        theirs_mean = statistics.fmean(row[k] for row in theirs_rows)
        print(f"| {name} | {percent(len(differ[name]), n)} | {ours_mean:.3f} | {theirs_mean:.3f} | "
              f"{ours_mean - theirs_mean:+.3f} |")
    print()
    print("| per-text score (texts scored by both) | texts differing by > 0.5 | mean ours − textstat | "
          "mean abs. difference | median | 95th percentile | max |")
    print("|---|---|---|---|---|---|---|")
    for key, label in (("flesch_kincaid_grade", "Flesch-Kincaid grade"),
                       ("flesch_reading_ease", "Flesch reading ease")):
        deltas = [ours_scores[i][key] - theirs_scores[i][key] for i in scored]
        print(f"| {label} | {percent(sum(abs(d) > 0.5 for d in deltas), len(scored))} | "
              f"{statistics.fmean(deltas):+.2f} | {describe(deltas)} |")
    print()

    schema = readability_schema()
    ours_total = readability_from_totals(schema.totals_of_rows(ours_rows, default.stats_signature()), default)
    theirs_total = readability_from_totals(schema.totals_of_rows(theirs_rows, compatible.stats_signature()),
                                           compatible)
    sums_theirs = [sum(row[k] for row in theirs_rows) for k in range(3)]
    sums_ours = [sum(row[k] for row in ours_rows) for k in range(3)]
    print("Corpus scores (formulas on summed counts) and what each count contributes to the difference "
          "(textstat's counts, then ours swapped in one at a time):\n")
    print("| counts used (sentences, words, syllables) | sums | FKGL | FRE |")
    print("|---|---|---|---|")
    steps = [("textstat's", list(sums_theirs))]
    current = list(sums_theirs)
    for k, name in enumerate(("sentences", "words", "syllables")):
        current[k] = sums_ours[k]
        steps.append((f"+ our {name}", list(current)))
    previous = None
    for label, sums in steps:
        fkgl, fre = flesch_kincaid_grade(*sums), flesch_reading_ease(*sums)
        change = "" if previous is None else f" ({fkgl - previous[0]:+.3f} / {fre - previous[1]:+.3f})"
        print(f"| {label}{change} | {sums[0]:,} / {sums[1]:,} / {sums[2]:,} | {fkgl:.3f} | {fre:.3f} |")
        previous = (fkgl, fre)
    assert previous == (ours_total["flesch_kincaid_grade"], ours_total["flesch_reading_ease"])
    assert (flesch_kincaid_grade(*sums_theirs), flesch_reading_ease(*sums_theirs)) == (
        theirs_total["flesch_kincaid_grade"], theirs_total["flesch_reading_ease"])
    print()

    print(f"Causes. Sentences (in the {len(differ['sentences']):,} texts whose counts differ; a text may have "
          "several):\n")
    print("| mechanism | texts | occurrences |")
    print("|---|---|---|")
    mechanism_texts: Counter = Counter()
    mechanism_total: Counter = Counter()
    for i in differ["sentences"]:
        for mechanism, count in sentence_mechanisms(texts[i]).items():
            if count:
                mechanism_texts[mechanism] += 1
                mechanism_total[mechanism] += count
    for mechanism, count in mechanism_texts.most_common():
        print(f"| {mechanism} | {count:,} | {mechanism_total[mechanism]:,} |")
    print()

    word_causes: Counter = Counter()
    for i in differ["words"]:
        for token in texts[i].split():
            ours = 1 if readability_words(token) else 0
            theirs = len(textstat_words(token))
            if ours != theirs:
                word_causes[f"`{token}` (ours {ours}, textstat {theirs})"] += 1
    listed = ", ".join(f"{cause} ×{count:,}" for cause, count in word_causes.most_common(arguments.top)) or "none"
    print(f"Words ({len(differ['words']):,} texts): tokens counted differently: {listed}.\n")

    causes: dict[str, Counter] = defaultdict(Counter)
    net: Counter = Counter()
    occurrences: Counter = Counter()
    for i in differ["syllables"]:
        syllable_causes(texts[i], syllables_of, cmudict, causes, net, occurrences)
    total_words = sum_words = sums_theirs[1]
    print(f"Syllables ({len(differ['syllables']):,} texts; {total_words:,} word occurrences in all; "
          "examples as `word ours/textstat ×occurrences`):\n")
    print("| cause | word occurrences | distinct words | net syllables, ours − textstat | most frequent |")
    print("|---|---|---|---|---|")
    for kind, count in occurrences.most_common():
        examples = ", ".join(f"`{example}` ×{times:,}" for example, times in causes[kind].most_common(arguments.top))
        print(f"| {kind} | {percent(count, sum_words)} | {len(causes[kind]):,} | {net[kind]:+,} | {examples} |")
    print()

    hyphenator = process_state(core_readability_textstat.__file__, "pyphen_en_US",
                               core_readability_textstat._load_pyphen)
    agreement: Counter = Counter()
    for text in texts:
        for token in text.split():
            word = token.lower()
            truth = cmudict.get(word)
            if truth is None or not _DICTIONARY_WORD.fullmatch(word):
                continue
            agreement["words"] += 1
            for name, count in (("rule", english_syllables(word)), ("pyphen", len(hyphenator.positions(word)) + 1)):
                agreement[name] += count == truth
                agreement[name + " difference"] += count - truth
    print(f"Syllable counters against cmudict 0.7a's first pronunciation, on the {agreement['words']:,} word "
          "occurrences of these texts that cmudict holds (why the default counts by rule):\n")
    print("| counter | same count as cmudict | mean difference a word |")
    print("|---|---|---|")
    for name, label in (("rule", "ours (rules, the default)"),
                        ("pyphen", "pyphen en_US points + 1 (textstat's fallback)")):
        print(f"| {label} | {100 * agreement[name] / agreement['words']:.1f}% | "
              f"{agreement[name + ' difference'] / agreement['words']:+.3f} |")
    print()

    print_timing(textstat, texts, arguments.repeats)
    return 0 if parity == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
