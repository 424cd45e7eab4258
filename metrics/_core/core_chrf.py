"""chrF and chrF++ as pure functions of per-example sufficient statistics, with sacreBLEU 2.x's numbers.

Per example and per n-gram order (character orders 1..char_order, then word
orders 1..word_order): the number of hypothesis n-grams (0 when the reference
has none of that order, as in sacreBLEU), of reference n-grams, and of matches
(clipped counts). With several references the statistics of the reference with
the highest sentence-level chrF are kept (the first on ties), so the
statistics depend on ``beta`` and ``eps_smoothing`` as well. The corpus score
is the F-score of the summed statistics (micro-average); its arithmetic,
including sacreBLEU's effective-order averaging and the optional epsilon
smoothing of chrF++.py, is reproduced operation for operation.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import add
from typing import Any, NamedTuple

import numpy as np

from .core_checks import check_bool, check_int, check_number
from .core_chrf_counting import character_ids, fits, match_counts, pair_chunks, token_ids
from .core_options import boolean, integer, number, option
from .core_process import MIB, bounded_cache
from .core_resample_options import BootstrapOptions, PairedTestOptions
from .core_stats import StatField, StatsSchema
from .core_mt_signature import nrefs_label, sacrebleu_signature

METRIC = "chrf"

# References' n-gram tables kept per process (for pairs counted one by one).
REFERENCE_CACHE_BYTES = 128 * MIB

# chrF++'s punctuation (Python's string.punctuation), split from the start or end of words.
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")

# sacreBLEU's smoothing constant for orders without n-grams.
_EPSILON = 1e-16


@dataclass(frozen=True)
class ChrfOptions(PairedTestOptions, BootstrapOptions):
    """The keyword options of evaluate's ``chrf`` with its (and sacreBLEU's) defaults (``word_order=2`` is
    chrF++), sacreBLEU's resampling options, and ``sentence_scores``."""

    metric_name = METRIC

    char_order: int = option(6, integer(minimum=0), stats=True)
    word_order: int = option(0, integer(minimum=0), stats=True)
    beta: float = option(2, number(minimum=0), stats=True)
    lowercase: bool = option(False, boolean, stats=True)
    whitespace: bool = option(False, boolean, stats=True)
    eps_smoothing: bool = option(False, boolean, stats=True)
    sentence_scores: bool = option(False, boolean)

    def __post_init__(self) -> None:
        check_int(METRIC, "char_order", self.char_order, minimum=0)
        check_int(METRIC, "word_order", self.word_order, minimum=0)
        if self.char_order + self.word_order == 0:
            raise ValueError(f"{METRIC}: `char_order` and `word_order` are both 0; at least one order must be used")
        check_number(METRIC, "beta", self.beta, minimum=0)
        check_bool(METRIC, "lowercase", self.lowercase)
        check_bool(METRIC, "whitespace", self.whitespace)
        check_bool(METRIC, "eps_smoothing", self.eps_smoothing)

    @property
    def order(self) -> int:
        return self.char_order + self.word_order

    @property
    def key(self) -> tuple[int, int, float, bool, bool, bool]:
        """The options the statistics depend on, as a hashable cache key."""
        return (self.char_order, self.word_order, self.beta, self.lowercase, self.whitespace, self.eps_smoothing)

    def stats_signature(self) -> str:
        """Identifies the options the statistics depend on (beta and smoothing pick the best reference)."""
        case = "lc" if self.lowercase else "mixed"
        return (
            f"chrf|nc:{self.char_order}|nw:{self.word_order}|beta:{self.beta}|case:{case}"
            f"|space:{_yes(self.whitespace)}|eps:{_yes(self.eps_smoothing)}"
        )


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def chrf_schema(options: ChrfOptions, metric: str = METRIC) -> StatsSchema:
    """The statistics of chrF with ``options``' orders: hypothesis, reference and match counts per order."""
    names = [f"char{order}" for order in range(1, options.char_order + 1)]
    names += [f"word{order}" for order in range(1, options.word_order + 1)]
    fields = [StatField(f"{name}_{count}") for name in names for count in ("hyp", "ref", "match")]
    return StatsSchema(metric, (*fields, StatField("min_refs", "min"), StatField("max_refs", "max")))


def remove_punctuation(text: str) -> list[str]:
    """chrF++'s words: whitespace-separated, one punctuation mark split from the end, else from the start.

    As sacreBLEU (and chrF++.py): '(hi)' becomes '(hi' and ')'.
    """
    words: list[str] = []
    for word in text.split():
        if len(word) == 1:
            words.append(word)
        elif word[-1] in _PUNCTUATION:
            words += [word[:-1], word[-1]]
        elif word[0] in _PUNCTUATION:
            words += [word[0], word[1:]]
        else:
            words.append(word)
    return words


class ReferenceOrder(NamedTuple):
    """The n-grams of one order of a reference.

    ``distinct``: the set of its n-grams; ``total``: their number; the n-grams it holds two or more times, with
    their counts, in two groups: ``repeated_in_text``, character n-grams that cannot overlap an occurrence of
    themselves (so ``str.count`` counts them in a text), and ``repeated_in_list``, the others.
    """

    distinct: frozenset[str]
    repeated_in_text: tuple[tuple[str, int], ...]
    repeated_in_list: tuple[tuple[str, int], ...]
    total: int


class HypothesisNgrams(NamedTuple):
    """The n-grams of a hypothesis per order (character orders, then word orders), in text order, and the
    characters the character n-grams are taken from."""

    characters: str
    orders: list[Sequence[str]]


def _orders(tokens: Sequence[str], max_order: int, join: Callable[[str, str], str]) -> list[Sequence[str]]:
    """The n-grams of orders 1..max_order of ``tokens`` in text order (order n joins order n-1 and a token)."""
    if max_order == 0:
        return []
    grams: Sequence[str] = tokens
    orders = [grams]
    for order in range(2, max_order + 1):
        grams = list(map(join, grams, tokens[order - 1 :]))
        orders.append(grams)
    return orders


def _join_words(left: str, right: str) -> str:
    return left + " " + right


def _ngrams(text: str, char_order: int, word_order: int, lowercase: bool, whitespace: bool) -> HypothesisNgrams:
    if lowercase:
        text = text.lower()
    characters = text if whitespace else "".join(text.split())
    orders = _orders(characters, char_order, add)
    if word_order:
        orders += _orders(remove_punctuation(text), word_order, _join_words)
    return HypothesisNgrams(characters, orders)


def hypothesis_ngrams(text: str, options: ChrfOptions) -> HypothesisNgrams:
    """The n-grams of a hypothesis per order, as sacreBLEU extracts them (after optional lowercasing)."""
    return _ngrams(text, options.char_order, options.word_order, options.lowercase, options.whitespace)


def _overlaps_itself(gram: str) -> bool:
    """True when two occurrences of ``gram`` can overlap (a proper prefix equals a suffix, as in 'aa', 'aba')."""
    return any(gram[:size] == gram[-size:] for size in range(1, len(gram)))


def _reference_ngrams(
    text: str, char_order: int, word_order: int, lowercase: bool, whitespace: bool
) -> tuple[ReferenceOrder, ...]:
    orders = []
    for order, grams in enumerate(_ngrams(text, char_order, word_order, lowercase, whitespace).orders):
        distinct = frozenset(grams)
        in_text: list[tuple[str, int]] = []
        in_list: list[tuple[str, int]] = []
        if len(distinct) < len(grams):
            for gram, count in Counter(grams).items():
                if count > 1:
                    words_or_overlapping = order >= char_order or _overlaps_itself(gram)
                    (in_list if words_or_overlapping else in_text).append((gram, count))
        orders.append(ReferenceOrder(distinct, tuple(in_text), tuple(in_list), len(grams)))
    return tuple(orders)


def _reference_size(key: tuple[Any, ...], value: tuple[ReferenceOrder, ...]) -> int:
    return 2 * len(key[0]) + 400 + sum(300 + 90 * order.total for order in value)


_REFERENCES = bounded_cache(__file__, "mt.chrf_references", REFERENCE_CACHE_BYTES, _reference_size)


def reference_ngrams(text: str, options: ChrfOptions) -> tuple[ReferenceOrder, ...]:
    """The n-grams of a reference per order, cached per process by text and the options that shape them."""
    key = (text, options.char_order, options.word_order, options.lowercase, options.whitespace)
    return _REFERENCES.get(key, lambda: _reference_ngrams(*key))


def match_statistics(hypothesis: HypothesisNgrams, reference: Sequence[ReferenceOrder]) -> list[int]:
    """[hypothesis n-grams, reference n-grams, matches] per order, flattened (sacreBLEU's layout).

    Matches are the sum over n-grams of min(hypothesis count, reference count): every n-gram of both counts
    once, and those both hold more than once add min(counts) - 1.
    """
    characters, orders = hypothesis
    statistics: list[int] = []
    for grams, (distinct, repeated_in_text, repeated_in_list, total) in zip(orders, reference, strict=True):
        common = distinct.intersection(grams)
        matches = len(common)
        for gram, count in repeated_in_text:
            if gram in common:
                found = characters.count(gram)
                if found > 1:
                    matches += (found if found < count else count) - 1
        for gram, count in repeated_in_list:
            if gram in common:
                found = grams.count(gram)
                if found > 1:
                    matches += (found if found < count else count) - 1
        statistics += (len(grams) if total else 0, total, matches)
    return statistics


def chrf_f_score(statistics: Sequence[Any], *, beta: float, eps_smoothing: bool) -> float:
    """chrF (0-100) of flattened [hypothesis, reference, match] counts per order, as sacreBLEU computes it."""
    order = len(statistics) // 3
    score = 0.0
    effective_order = 0
    factor = beta**2
    average_precision, average_recall = 0.0, 0.0
    for index in range(order):
        hypothesis_count, reference_count, match_count = statistics[3 * index : 3 * index + 3]
        precision = match_count / hypothesis_count if hypothesis_count > 0 else _EPSILON
        recall = match_count / reference_count if reference_count > 0 else _EPSILON
        denominator = factor * precision + recall
        score += ((1 + factor) * precision * recall / denominator) if denominator > 0 else _EPSILON
        if hypothesis_count > 0 and reference_count > 0:
            average_precision += precision
            average_recall += recall
            effective_order += 1
    if eps_smoothing:
        return 100 * score / order
    if effective_order == 0:
        average_precision = average_recall = 0.0
    else:
        average_precision /= effective_order
        average_recall /= effective_order
    if average_precision + average_recall:
        score = (1 + factor) * average_precision * average_recall
        score /= (factor * average_precision) + average_recall
        return 100 * score
    return 0.0


def pair_statistics(hypothesis: str, reference: str, options: ChrfOptions) -> list[int]:
    """[hypothesis n-grams, reference n-grams, matches] per order of one pair, counted on its own."""
    return match_statistics(hypothesis_ngrams(hypothesis, options), reference_ngrams(reference, options))


def _packed_pair_statistics(
    hypotheses: Sequence[str], references: Sequence[str], options: ChrfOptions
) -> list[list[int]] | None:
    """The statistics of each pair, counted for all pairs at once; None when their symbols do not pack."""
    pairs = len(hypotheses)
    texts = [*hypotheses, *references]
    if options.lowercase:
        texts = [text.lower() for text in texts]
    kinds = []
    if options.char_order:
        characters = texts if options.whitespace else ["".join(text.split()) for text in texts]
        kinds.append((character_ids(characters), options.char_order))
    if options.word_order:
        kinds.append((token_ids([remove_punctuation(text) for text in texts]), options.word_order))
    columns = []
    for (ids, lengths, alphabet_size), max_order in kinds:
        if not fits(pairs, alphabet_size, max_order):
            return None
        matches = match_counts(ids, lengths, alphabet_size, pairs, max_order)
        grams = np.maximum(lengths[:, None] - np.arange(max_order)[None, :], 0)
        hypothesis_grams, reference_grams = grams[:pairs], grams[pairs:]
        columns.append(np.stack((hypothesis_grams * (reference_grams > 0), reference_grams, matches), axis=2))
    return np.concatenate(columns, axis=1).reshape(pairs, -1).tolist()


def pair_statistics_of(hypotheses: Sequence[str], references: Sequence[str], options: ChrfOptions) -> list[list[int]]:
    """[hypothesis n-grams, reference n-grams, matches] per order of each (hypothesis, reference) pair.

    Pairs are counted a chunk at a time with one sort (:mod:`core_chrf_counting`); a chunk whose alphabet is
    too large to pack (e.g. thousands of distinct characters at six orders) is counted one pair at a time with
    set intersections. Both give the same numbers.
    """
    statistics: list[list[int]] = []
    for chunk in pair_chunks(hypotheses, references):
        packed = _packed_pair_statistics(hypotheses[chunk], references[chunk], options)
        if packed is None:
            packed = [pair_statistics(h, r, options) for h, r in zip(hypotheses[chunk], references[chunk])]
        statistics += packed
    return statistics


def chrf_rows(
    predictions: Sequence[str], references: Sequence[Sequence[str]], options: ChrfOptions
) -> list[tuple[int, ...]]:
    """Per-example statistics in :func:`chrf_schema` order.

    With several references, the statistics of the reference with the highest sentence-level chrF (the first
    of equals), as sacreBLEU keeps them.
    """
    hypotheses: list[str] = []
    flat_references: list[str] = []
    for prediction, example_references in zip(predictions, references, strict=True):
        hypotheses += [prediction] * len(example_references)
        flat_references += example_references
    statistics = iter(pair_statistics_of(hypotheses, flat_references, options))
    rows = []
    for example_references in references:
        count = len(example_references)
        best: list[int] = []
        best_score = -1.0
        for _ in range(count):
            candidate = next(statistics)
            if count == 1:
                best = candidate
                break
            score = chrf_f_score(candidate, beta=options.beta, eps_smoothing=options.eps_smoothing)
            if score > best_score:
                best, best_score = candidate, score
        rows.append((*best, count, count))
    return rows


def chrf_signature(nrefs: int | str, options: ChrfOptions, resampling: Mapping[str, Any] | None = None) -> str:
    """sacreBLEU's chrF signature, e.g. ``nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0``."""
    fields = [
        ("case", "lc" if options.lowercase else "mixed"),
        ("eff", not options.eps_smoothing),
        ("nc", options.char_order),
        ("nw", options.word_order),
        ("space", options.whitespace),
    ]
    return sacrebleu_signature(nrefs=nrefs, fields=fields, resampling=resampling)


def _statistics_of_totals(totals: Mapping[str, Any], options: ChrfOptions) -> list[Any]:
    names = chrf_schema(options).names[:-2]
    return [totals[name] for name in names]


def chrf_from_totals(
    totals: Mapping[str, Any], options: ChrfOptions, *, resampling: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """evaluate's ``chrf`` result (score, char_order, word_order, beta) and sacreBLEU's signature."""
    statistics = [int(value) for value in _statistics_of_totals(totals, options)]
    return {
        "score": chrf_f_score(statistics, beta=options.beta, eps_smoothing=options.eps_smoothing),
        "char_order": options.char_order,
        "word_order": options.word_order,
        "beta": options.beta,
        "signature": chrf_signature(nrefs_label(totals["min_refs"], totals["max_refs"]), options, resampling),
    }


def chrf_corpus_score(totals: Mapping[str, Any], options: ChrfOptions) -> float:
    """chrF (0-100) of named totals (or of one example's row, as a mapping)."""
    statistics = [int(value) for value in _statistics_of_totals(totals, options)]
    return chrf_f_score(statistics, beta=options.beta, eps_smoothing=options.eps_smoothing)


def chrf_score_of_row(options: ChrfOptions) -> Callable[[Sequence[Any]], float]:
    """A function from one row of (summed) statistics in schema order to chrF, for resampling."""
    width = 3 * options.order

    def score(row: Sequence[Any]) -> float:
        return chrf_f_score(
            [int(value) for value in row[:width]], beta=options.beta, eps_smoothing=options.eps_smoothing
        )

    return score


def clear_caches() -> None:
    """Forget every reference's n-grams (as a fresh process)."""
    _REFERENCES.clear()
