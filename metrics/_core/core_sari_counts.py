"""SARI's n-gram arithmetic for one example: the sentence-level scores of the authors' ``SARI.py`` and of
evaluate's ``sari.py``, and the per-example n-gram counts that EASSE sums over a corpus.

Notation (per n-gram order n = 1..4, as in Xu et al. 2016): ``S``, ``C`` are the counts of an n-gram in
the source and in the candidate (prediction), ``Rc`` its count summed over the ``numref`` references.
Both reference implementations multiply source and candidate counts by ``numref`` so that the
references' counts weigh as the paper's fractional ``R'``:

- keep: kept ``R·min(S, C)`` for n-grams in source and candidate; kept correctly
  ``min(R·min(S, C), Rc)``; kept by the references ``min(R·S, Rc)``;
- delete: deleted ``R·(S - C)`` where ``S > C``; deleted correctly ``R·(S - C) - Rc`` where positive
  (``SARI.py``/evaluate) or ``min(R·(S - C), R·S - Rc)`` where both are positive (EASSE, the paper's Eq. 6);
- add (binary): n-grams of the candidate not in the source; of those, the ones in a reference; n-grams of
  the references not in the source.

Each text's n-grams are counted once, one dict per order (unigrams keyed by the token, longer
n-grams by token tuples), and one pass over the source's n-grams gathers every keep/delete term and the
intersection sizes the add terms need. Sums run over the source's n-grams in order of first occurrence,
the order in which both reference implementations iterate their counters, so results are bit-for-bit
theirs.

``core_sari_batch`` computes the same quantities for many examples at once (numpy) and names them as here;
it scores examples with these functions when a call has only a few, or when one is too large for its keys.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import chain

try:  # the C helper behind Counter.update: counts into a plain dict without Counter's per-call overhead
    from collections import _count_elements as _count_into
except ImportError:  # pragma: no cover - every CPython has it; a pure-Python fallback for other interpreters
    def _count_into(mapping: dict, iterable: Iterable) -> None:
        get = mapping.get
        for item in iterable:
            mapping[item] = get(item, 0) + 1

NGRAM_ORDER = 4
"""SARI's highest n-gram order (k = 4 in the paper; fixed in every reference implementation)."""

OrderCounts = tuple[dict, dict, dict, dict]
"""Counts of n-grams of orders 1..4, one dict each (unigrams keyed by the token, longer n-grams by tuples)."""

EASSE_OPERATIONS = ("add", "keep", "del")
EASSE_KINDS = ("correct", "sys", "ref")


def order_counts(tokens: Sequence[str]) -> OrderCounts:
    """Counts of the n-grams of one text, one dict per order n = 1..4."""
    second, third, fourth = tokens[1:], tokens[2:], tokens[3:]
    unigrams: dict = {}
    bigrams: dict = {}
    trigrams: dict = {}
    fourgrams: dict = {}
    _count_into(unigrams, tokens)
    _count_into(bigrams, zip(tokens, second))
    _count_into(trigrams, zip(tokens, second, third))
    _count_into(fourgrams, zip(tokens, second, third, fourth))
    return unigrams, bigrams, trigrams, fourgrams


def references_counts(references: Sequence[Sequence[str]]) -> OrderCounts:
    """Counts of the n-grams of several texts summed together (SARI's reference counts), one dict per order."""
    if len(references) == 1:
        return order_counts(references[0])
    second = [tokens[1:] for tokens in references]
    third = [tokens[2:] for tokens in references]
    fourth = [tokens[3:] for tokens in references]
    unigrams: dict = {}
    bigrams: dict = {}
    trigrams: dict = {}
    fourgrams: dict = {}
    _count_into(unigrams, chain.from_iterable(references))
    _count_into(bigrams, chain.from_iterable(map(zip, references, second)))
    _count_into(trigrams, chain.from_iterable(map(zip, references, second, third)))
    _count_into(fourgrams, chain.from_iterable(map(zip, references, second, third, fourth)))
    return unigrams, bigrams, trigrams, fourgrams


def _f1(precision: float, recall: float) -> float:
    """``SARI.py``'s F1: 0 unless precision or recall is positive (same operation order, same bits)."""
    if precision > 0 or recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0


def sentence_scores(
    source: OrderCounts, candidate: OrderCounts, references: OrderCounts, numref: int, *, evaluate: bool
) -> tuple[float, float, float, float]:
    """(add, keep, delete, SARI) of one example in 0..1, as ``SARI.py``'s ``SARIsent`` (``evaluate=False``) or
    as evaluate's ``SARIsent`` (``evaluate=True``).

    Per order: F1 of add, F1 of keep, precision of delete; each averaged over the 4 orders, then SARI is
    their mean. ``SARI.py``: a ratio whose denominator is 0 is 0 (the paper's footnote 3); keep precision
    and recall are means, over the distinct n-grams, of per-n-gram ratios. evaluate: 0/0 is 1, and keep
    recall is a ratio of sums (sum of correctly kept over sum of kept by the references).
    """
    empty = 1 if evaluate else 0
    keeps, deletes, adds = [], [], []
    for source_counts, candidate_counts, reference_counts in zip(source, candidate, references):
        candidate_get = candidate_counts.get
        reference_get = reference_counts.get
        kept = kept_by_references = in_all_three = 0
        kept_by_references_total = kept_correctly_total = 0
        keep_precision_sum = keep_recall_sum = 0
        deleted = 0
        delete_sum = 0
        for gram, count in source_counts.items():
            reference_count = reference_get(gram, 0)
            if reference_count:
                by_references = count * numref
                if reference_count < by_references:
                    by_references = reference_count
                kept_by_references += 1
                kept_by_references_total += by_references
            candidate_count = candidate_get(gram, 0)
            if candidate_count:
                kept += 1
                if reference_count:
                    in_all_three += 1
                    by_candidate = (count if count < candidate_count else candidate_count) * numref
                    correct = by_candidate if by_candidate < reference_count else reference_count
                    keep_precision_sum += correct / by_candidate
                    if evaluate:
                        kept_correctly_total += correct
                    else:
                        keep_recall_sum += correct / by_references
                if count <= candidate_count:
                    continue
            deleted += 1
            by_candidate = (count - candidate_count) * numref
            if by_candidate > reference_count:
                delete_sum += (by_candidate - reference_count) / by_candidate

        keep_precision = keep_precision_sum / kept if kept else empty
        if not kept_by_references:
            keep_recall = empty
        elif evaluate:
            keep_recall = kept_correctly_total / kept_by_references_total
        else:
            keep_recall = keep_recall_sum / kept_by_references
        keeps.append(_f1(keep_precision, keep_recall))
        deletes.append(delete_sum / deleted if deleted else empty)

        added = len(candidate_counts) - kept
        added_by_references = len(reference_counts) - kept_by_references
        shared = len(candidate_counts.keys() & reference_counts.keys())
        added_correctly = shared - in_all_three
        add_precision = added_correctly / added if added else empty
        add_recall = added_correctly / added_by_references if added_by_references else empty
        adds.append(_f1(add_precision, add_recall))

    keep = sum(keeps) / NGRAM_ORDER
    delete = sum(deletes) / NGRAM_ORDER
    add = sum(adds) / NGRAM_ORDER
    return add, keep, delete, (keep + delete + add) / 3


def easse_count_names() -> list[str]:
    """Names of EASSE's per-order counts: ``{add,keep,del}_{correct,sys,ref}_{1..4}`` (the order of
    :func:`easse_counts`)."""
    return [f"{operation}_{kind}_{order}" for operation in EASSE_OPERATIONS for kind in EASSE_KINDS
            for order in range(1, NGRAM_ORDER + 1)]


def easse_counts(source: OrderCounts, candidate: OrderCounts, references: OrderCounts, numref: int) -> list[int]:
    """The n-gram counts of one example that EASSE's ``compute_ngram_stats`` adds to its corpus totals, in the
    order of :func:`easse_count_names`.

    add: candidate n-grams not in the source (binary), of those the ones in a reference, reference n-grams
    not in the source. keep: ``R·min(S, C)``, ``min(R·S, Rc)`` and their minimum, summed. delete:
    ``R·(S - C)``, ``R·S - Rc`` (each where positive) and their minimum, summed.
    """
    add = [[0] * NGRAM_ORDER for _ in EASSE_KINDS]
    keep = [[0] * NGRAM_ORDER for _ in EASSE_KINDS]
    delete = [[0] * NGRAM_ORDER for _ in EASSE_KINDS]
    for index, (source_counts, candidate_counts, reference_counts) in enumerate(zip(source, candidate, references)):
        candidate_get = candidate_counts.get
        reference_get = reference_counts.get
        in_candidate = in_references = in_all_three = 0
        keep_correct = keep_sys = keep_ref = 0
        delete_correct = delete_sys = delete_ref = 0
        for gram, count in source_counts.items():
            candidate_count = candidate_get(gram, 0)
            reference_count = reference_get(gram, 0)
            replicated = count * numref
            by_references = replicated if replicated < reference_count else reference_count
            if reference_count:
                in_references += 1
                keep_ref += by_references
            if candidate_count:
                in_candidate += 1
                by_candidate = (count if count < candidate_count else candidate_count) * numref
                keep_sys += by_candidate
                if reference_count:
                    in_all_three += 1
                    keep_correct += by_candidate if by_candidate < reference_count else reference_count
            not_by_references = replicated - reference_count
            if not_by_references > 0:
                delete_ref += not_by_references
            if count > candidate_count:
                by_candidate = (count - candidate_count) * numref
                delete_sys += by_candidate
                if not_by_references > 0:
                    delete_correct += by_candidate if by_candidate < not_by_references else not_by_references
        shared = len(candidate_counts.keys() & reference_counts.keys())
        add[0][index] = shared - in_all_three
        add[1][index] = len(candidate_counts) - in_candidate
        add[2][index] = len(reference_counts) - in_references
        keep[0][index], keep[1][index], keep[2][index] = keep_correct, keep_sys, keep_ref
        delete[0][index], delete[1][index], delete[2][index] = delete_correct, delete_sys, delete_ref
    return [value for operation in (add, keep, delete) for kind in operation for value in kind]


def _easse_precision_recall_f1(correct: int, sys_total: int, ref_total: int) -> tuple[float, float, float]:
    """EASSE's ``compute_precision_recall_f1``: 0 where a denominator is 0; F1 0 unless both are positive."""
    precision = correct / sys_total if sys_total > 0 else 0.0
    recall = correct / ref_total if ref_total > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision > 0 and recall > 0 else 0.0
    return precision, recall, f1


def easse_scores(counts: Sequence[int]) -> tuple[float, float, float, float]:
    """(add, keep, delete, SARI) in 0..100 from counts summed over a corpus (the order of
    :func:`easse_count_names`), as EASSE's ``corpus_sari`` with its defaults: per order, F1 of add, keep and
    delete (``use_f1_for_deletion=True``), each averaged over the orders (``compute_macro_sari``)."""
    scores = []
    for operation in range(len(EASSE_OPERATIONS)):
        base = operation * len(EASSE_KINDS) * NGRAM_ORDER
        score = 0.0
        for order in range(NGRAM_ORDER):
            correct, sys_total, ref_total = (counts[base + kind * NGRAM_ORDER + order] for kind in range(3))
            score += _easse_precision_recall_f1(correct, sys_total, ref_total)[2] / NGRAM_ORDER
        scores.append(100.0 * score)
    add, keep, delete = scores
    return add, keep, delete, (add + keep + delete) / 3
