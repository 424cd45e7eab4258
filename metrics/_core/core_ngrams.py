"""Word n-gram counting and clipped matching.

One counter holds the n-grams of every order 1..max_order of a text, keyed by
token tuples (so the order of a key is its length); counting runs in C
(``Counter`` over chained ``zip`` iterators) and a hypothesis is matched
against a reference in a single pass over its n-grams.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import chain

NgramCounts = Counter[tuple[str, ...]]


def ngram_counts(tokens: Sequence[str], max_order: int) -> NgramCounts:
    """Counts of all n-grams of ``tokens`` for n = 1..max_order, keyed by token tuples."""
    return Counter(
        chain.from_iterable(zip(*(tokens[start:] for start in range(order))) for order in range(1, max_order + 1))
    )


def max_ngram_counts(counts_per_reference: Sequence[NgramCounts]) -> NgramCounts:
    """The maximum count of each n-gram over several references (BLEU's clipping counts)."""
    if len(counts_per_reference) == 1:
        return counts_per_reference[0]
    merged = Counter(counts_per_reference[0])
    for reference_counts in counts_per_reference[1:]:
        merged |= reference_counts
    return merged


def clipped_matches(
    hypothesis_counts: Mapping[tuple[str, ...], int], reference_counts: Mapping[tuple[str, ...], int], max_order: int
) -> list[int]:
    """Per order n = 1..max_order, the sum over n-grams of min(hypothesis count, reference count)."""
    matches = [0] * max_order
    get = reference_counts.get
    for ngram, count in hypothesis_counts.items():
        other = get(ngram)
        if other:
            matches[len(ngram) - 1] += count if count < other else other
    return matches


def ngram_totals(length: int, max_order: int) -> list[int]:
    """Number of n-grams of each order n = 1..max_order in a sequence of ``length`` tokens."""
    return [max(length - order + 1, 0) for order in range(1, max_order + 1)]
