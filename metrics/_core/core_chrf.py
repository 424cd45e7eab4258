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

import functools

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .core_checks import check_bool, check_int, check_number
from .core_chrf_counting import character_ids, match_counts, pair_chunks, token_ids
from .core_options import boolean, integer, number, option
from .core_resample_options import BootstrapOptions, PairedTestOptions
from .core_stats import StatField, StatsSchema
from .core_mt_signature import nrefs_label, sacrebleu_signature
from .core_resources import TextBounds

METRIC = "chrf"

# chrF++'s punctuation (Python's string.punctuation), split from the start or end of words.
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")

# sacreBLEU's smoothing constant for orders without n-grams.
_EPSILON = 1e-16


@dataclass(frozen=True)
class ChrfOptions(PairedTestOptions, BootstrapOptions, TextBounds):
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


@functools.lru_cache(maxsize=64)
def _count_names(char_order: int, word_order: int) -> tuple[str, ...]:
    """Names of the hypothesis, reference and match counts of each character and word order."""
    orders = [f"char{order}" for order in range(1, char_order + 1)]
    orders += [f"word{order}" for order in range(1, word_order + 1)]
    return tuple(f"{name}_{count}" for name in orders for count in ("hyp", "ref", "match"))


def chrf_schema(options: ChrfOptions, metric: str = METRIC) -> StatsSchema:
    """The statistics of chrF with ``options``' orders: hypothesis, reference and match counts per order."""
    fields = [StatField(name) for name in _count_names(options.char_order, options.word_order)]
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


def _pair_statistics(hypotheses: Sequence[str], references: Sequence[str], options: ChrfOptions) -> list[list[int]]:
    """[hypothesis n-grams, reference n-grams, matches] per order of each (hypothesis, reference) pair, all
    pairs of a chunk counted at once (:mod:`core_chrf_counting`)."""
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
        matches = match_counts(ids, lengths, alphabet_size, pairs, max_order)
        grams = np.maximum(lengths[:, None] - np.arange(max_order)[None, :], 0)
        hypothesis_grams, reference_grams = grams[:pairs], grams[pairs:]
        columns.append(np.stack((hypothesis_grams * (reference_grams > 0), reference_grams, matches), axis=2))
    return np.concatenate(columns, axis=1).reshape(pairs, -1).tolist()


def pair_statistics(hypotheses: Sequence[str], references: Sequence[str], options: ChrfOptions) -> list[list[int]]:
    """[hypothesis n-grams, reference n-grams, matches] per order of each (hypothesis, reference) pair, as
    sacreBLEU counts them (the hypothesis count is 0 for an order the reference has no n-gram of)."""
    statistics: list[list[int]] = []
    for chunk in pair_chunks(hypotheses, references):
        statistics += _pair_statistics(hypotheses[chunk], references[chunk], options)
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
    statistics = iter(pair_statistics(hypotheses, flat_references, options))

    def sentence_chrf(candidate: list[int]) -> float:
        return chrf_f_score(candidate, beta=options.beta, eps_smoothing=options.eps_smoothing)

    rows = []
    for example_references in references:
        count = len(example_references)
        candidates = [next(statistics) for _ in range(count)]
        best = candidates[0] if count == 1 else max(candidates, key=sentence_chrf, default=[])
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
    return [totals[name] for name in _count_names(options.char_order, options.word_order)]


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
