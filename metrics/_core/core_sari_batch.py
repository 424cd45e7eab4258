"""SARI's statistics for many examples at once: the n-grams of a chunk of examples counted with numpy sorts,
each variant's per-n-gram terms computed on whole arrays and reduced per example and order, the values bit
for bit those of the one-example code (``core_sari_counts``, which names the quantities).

Per chunk (at most :data:`MAX_CHUNK_CHARACTERS` characters of text, :data:`MAX_CHUNK_EXAMPLES` examples):

1. Ids (``core_sari_ids``): all texts tokenized at once (``core_sari_tokens``) into one list with a separator
   token before each text; one ``dict`` gives every distinct token an id, and a presence table renumbers the ids so that each
   block of examples (the whole chunk when its vocabulary is small enough, else 256, 32 or 4 examples) uses
   1..V; separators are 0. (Per-example dicts when even that does not fit.) ``SARI.py`` and evaluate split
   an empty text into one empty token: it gets a fresh id.
2. Keys: each token starts a window of 4 ids, zeros from its text's end on. A window is packed into an
   unsigned 64-bit key: the 4 ids (``b`` bits each), then a low field: the token's position in the source for
   the source's windows, ``L`` for the prediction's, ``L + 1`` for the references' (``L`` the longest
   source). The keys of each example are sorted (examples of similar lengths as the rows of one 2-D array,
   which numpy sorts with sorting networks); equal n-grams of every order n are then next to each other (an
   n-gram is a prefix of its window's key).
3. Per order n, a group is a run of one example's keys equal in their first n ids (the n-th not 0); it gives
   the n-gram's counts in the source ``S``, the prediction ``C`` and the references together ``Rc``
   (cumulative sums of the low field's kind) and its first position in the source (the smallest low field).
   Only groups with ``S`` or ``C`` need more than being counted.
4. Per group, the variant's terms; integer ones are summed per example and order exactly. The float sums
   (keep precision and recall, delete precision) must be added in the order in which ``SARI.py`` and
   evaluate iterate their counters, the source's first occurrences, to be bit-for-bit theirs: each term is
   put at its n-gram's first position in the source, zeros elsewhere (adding 0.0 changes no sum), and the
   positions are added one after the other for all examples at once (:class:`_SourceSlots`).
5. Ratios, F1 and the means over orders as ``core_sari_counts.sentence_scores`` computes them, operation
   for operation; the mean of 4 orders is added left to right, as Python's ``sum`` does before 3.12 (where
   ``sum`` compensates, it is called per example instead).

An example whose keys cannot fit in 64 bits (4 x the bits of its distinct tokens, plus the bits of its source
length: e.g. more than 8,191 distinct tokens with a source of 4,094) is scored by ``core_sari_counts``.
Memory: about 100 bytes per token of a chunk (a chunk holds about 700,000 tokens).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain

import numpy as np

from .core_sari_counts import NGRAM_ORDER, easse_counts, order_counts, references_counts, sentence_scores
from .core_sari_ids import TextLayout, bit_width, chunk_ids, fill_empty_texts, local_ids
from .core_sari_tokens import chunk_tokens

KEY_BITS = 64

# A chunk takes examples until their texts hold this many characters (about 180,000 tokens; arrays of about
# 100 bytes per token) or this many examples. Smaller chunks are no slower (their arrays stay in cache).
MAX_CHUNK_CHARACTERS = 1 << 20
MAX_CHUNK_EXAMPLES = 1 << 14
# A chunk with fewer characters than this (a few examples) is scored one example at a time: numpy's fixed costs
# (about half a millisecond a chunk) would outweigh its speed.
SMALL_CHUNK_CHARACTERS = 2048

# Whether Python's sum adds floats left to right (before 3.12; later versions compensate).
SEQUENTIAL_SUM = sum([1e16, 1.0, -1e16]) == 0.0


def example_chunks(sources: Sequence[str], predictions: Sequence[str],
                   references: Sequence[Sequence[str]]) -> list[tuple[int, int, int]]:
    """Consecutive ranges of examples within :data:`MAX_CHUNK_CHARACTERS` and :data:`MAX_CHUNK_EXAMPLES` (an
    example larger than the limit is a range of its own): (begin, end, characters)."""
    examples = len(sources)
    numrefs = np.fromiter(map(len, references), dtype=np.int64, count=examples)
    reference_sizes = np.fromiter(map(len, chain.from_iterable(references)), dtype=np.int64,
                                  count=int(numrefs.sum()))
    sizes = (np.fromiter(map(len, sources), dtype=np.int64, count=examples)
             + np.fromiter(map(len, predictions), dtype=np.int64, count=examples) + 4 * numrefs + 8)
    sizes += _per_example_sums(reference_sizes, numrefs)
    ends = np.cumsum(sizes)
    chunks: list[tuple[int, int, int]] = []
    begin = 0
    while begin < examples:
        offset = int(ends[begin - 1]) if begin else 0
        end = int(np.searchsorted(ends, offset + MAX_CHUNK_CHARACTERS, side="right"))
        end = min(max(end, begin + 1), begin + MAX_CHUNK_EXAMPLES, examples)
        chunks.append((begin, end, int(ends[end - 1]) - offset))
        begin = end
    return chunks


def _per_example_sums(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Sums of consecutive runs of ``values``, ``counts[e]`` values for example e (exact integers)."""
    totals = np.concatenate(([0], np.cumsum(values)))
    ends = np.cumsum(counts)
    return totals[ends] - totals[ends - counts]


class _SourceSlots:
    """Rows for terms placed at source positions, position-major with the longest sources first: position k
    of example e is row ``offsets[k] + rank[e]``, and the rows of position k are those of the ``active[k]``
    examples whose source is longer than k, so adding rows position after position adds to a prefix of them."""

    def __init__(self, source_lengths: np.ndarray) -> None:
        examples = source_lengths.size
        by_length = np.argsort(-source_lengths, kind="stable")
        self.rank = np.empty(examples, dtype=np.int64)
        self.rank[by_length] = np.arange(examples)
        longest = int(source_lengths.max(initial=0))
        ascending = np.sort(source_lengths)
        self.active = examples - np.searchsorted(ascending, np.arange(longest), side="right")
        self.offsets = np.cumsum(self.active) - self.active
        self.rows = int(source_lengths.sum())

    def sequential_sums(self, terms: np.ndarray) -> np.ndarray:
        """Per example (in example order), the sum of its rows of ``terms``, added position after position."""
        sums = np.zeros((self.rank.size, *terms.shape[1:]))
        offset = 0
        for count in self.active.tolist():
            sums[:count] += terms[offset:offset + count]
            offset += count
        return sums[self.rank]


def _count(examples: np.ndarray, total: int, weights: np.ndarray | None = None) -> np.ndarray:
    """Per example: how many entries (or the sum of their integer ``weights``, exactly)."""
    if weights is None:
        return np.bincount(examples, minlength=total)
    return np.bincount(examples, weights=weights, minlength=total).astype(np.int64)


def _ratio(numerator: np.ndarray, denominator: np.ndarray, empty: float) -> np.ndarray:
    """``numerator / denominator``, ``empty`` where the denominator is 0 (as Python divides: floats)."""
    return np.divide(numerator, denominator, out=np.full(denominator.shape, empty), where=denominator > 0)


def _f1(precision: np.ndarray, recall: np.ndarray) -> np.ndarray:
    """``SARI.py``'s F1 (``core_sari_counts._f1``): 0 unless precision or recall is positive."""
    total = precision + recall
    return np.divide(2 * precision * recall, total, out=np.zeros(total.shape), where=(precision > 0) | (recall > 0))


# Float terms summed in source order, per variant: keep precision (correct / kept), keep recall
# (correct / kept by the references; SARI.py only), delete precision (deleted correctly / deleted).
_TERMS = {"paper": ("keep_precision", "keep_recall", "delete"), "evaluate": ("keep_precision", "delete"),
          "easse": ()}


class _OrderStats:
    """Per example and order (arrays of examples x 4): the n-gram counts of ``core_sari_counts`` (which names
    them), and the float terms of :data:`_TERMS` at their n-grams' first source positions (rows of
    :class:`_SourceSlots`, columns term-major: term x 4 + order)."""

    def __init__(self, examples: int, rows: int, terms: int) -> None:
        def counts() -> np.ndarray:
            return np.zeros((examples, NGRAM_ORDER), dtype=np.int64)

        self.candidate, self.references, self.shared = counts(), counts(), counts()
        self.kept, self.kept_by_references, self.in_all_three, self.deleted = counts(), counts(), counts(), counts()
        self.keep_correct, self.keep_sys, self.keep_ref = counts(), counts(), counts()
        self.delete_correct, self.delete_sys, self.delete_ref = counts(), counts(), counts()
        self.terms = np.zeros((rows, terms * NGRAM_ORDER))


# Examples sorted together as the rows of one 2-D array (numpy sorts short rows with sorting networks, many times
# faster per key than one long array): at most this many, of lengths within a factor of 2 (rows are padded to
# the longest).
SORT_BUCKET_EXAMPLES = 512


def _sort_within_examples(keys: np.ndarray, bounds: np.ndarray) -> None:
    """Sort ``keys[bounds[e]:bounds[e + 1]]`` for every example e, in place: examples whose lengths have the
    same bit length together, as the rows of a 2-D array padded with the largest key (which sorts last)."""
    counts = np.diff(bounds)
    by_count = np.argsort(counts, kind="stable")
    ascending = counts[by_count]
    classes = np.searchsorted(ascending, 1 << np.arange(bit_width(int(ascending[-1])) + 1)) if counts.size else []
    padding = np.iinfo(np.uint64).max
    for begin, end in zip(classes[:-1], classes[1:]):
        for first in range(int(begin), int(end), SORT_BUCKET_EXAMPLES):
            chosen = by_count[first:min(first + SORT_BUCKET_EXAMPLES, int(end))]
            lengths = counts[chosen]
            width = int(lengths[-1])
            if width < 2:
                continue
            columns = np.arange(width)
            inside = columns < lengths[:, None]
            places = (bounds[chosen][:, None] + columns)[inside]
            rows = np.full((chosen.size, width), padding, dtype=np.uint64)
            rows[inside] = keys[places]
            rows.sort(axis=1)
            keys[places] = rows[inside]


def _order_statistics(layout: TextLayout, variant: str) -> tuple[_OrderStats, _SourceSlots]:
    """Sort the windows of ``layout``'s examples once and gather :class:`_OrderStats` for every order."""
    examples, longest = layout.examples, layout.longest
    id_bits = bit_width(int(layout.sizes.max(initial=1)) - 1)
    low_bits = bit_width(longest + 1)
    if NGRAM_ORDER * id_bits + low_bits > KEY_BITS:  # pragma: no cover - callers split runs to fit
        raise AssertionError("SARI: keys wider than 64 bits")
    # Windows: 4 ids from each token on, packed over the whole array, then taken at the tokens; ids after a
    # separator are 0 too, so an n-gram is real when its n-th id is not 0.
    size = layout.ids.size
    ids = np.zeros(size + NGRAM_ORDER - 1, dtype=np.uint64)
    ids[:size] = layout.ids
    packed = ids[:size] << np.uint64((NGRAM_ORDER - 1) * id_bits + low_bits)
    inside = np.ones(size, dtype=bool)
    for offset in range(1, NGRAM_ORDER):
        following = ids[offset:offset + size]
        inside &= following != 0
        packed |= (following * inside) << np.uint64((NGRAM_ORDER - 1 - offset) * id_bits + low_bits)
    del ids, inside
    keys = packed[layout.positions]
    del packed
    keys |= layout.token_low.astype(np.uint64)
    _sort_within_examples(keys, layout.example_bounds)

    tokens = keys.size
    low = np.zeros(tokens + 1, dtype=np.int32)
    low[:-1] = keys & np.uint64((1 << low_bits) - 1)
    # Source windows before each key (low 32 bits) and prediction windows (high 32 bits), counted at once.
    seen_before = np.zeros(tokens + 1, dtype=np.int64)
    kind = (low[:-1] < longest).astype(np.int64)
    kind[low[:-1] == longest] = 1 << 32
    np.cumsum(kind, out=seen_before[1:])
    del kind
    changes = keys[1:] ^ keys[:-1]
    # Examples never share a group: a change in every bit where one example ends and the next begins.
    inner = layout.example_bounds[1:-1]
    changes[inner[(inner > 0) & (inner < tokens)] - 1] = np.iinfo(np.uint64).max
    boundary = np.ones(tokens + 1, dtype=bool)
    id_mask = np.uint64((1 << id_bits) - 1)
    token_example = layout.token_example
    numrefs = layout.numrefs
    slots = _SourceSlots(layout.source_lengths)
    terms = _TERMS[variant]
    stats = _OrderStats(examples, slots.rows, len(terms))
    flat_terms = stats.terms.reshape(-1)
    width = stats.terms.shape[1]
    for order in range(1, NGRAM_ORDER + 1):
        n = order - 1
        shift = low_bits + (NGRAM_ORDER - order) * id_bits
        np.greater_equal(changes, np.uint64(1 << shift), out=boundary[1:-1])
        edges = np.flatnonzero(boundary)
        starts = edges[:-1]
        heads = keys[starts] >> np.uint64(shift)
        # A real n-gram has no separator among its ids: its n-th id is not 0 (its first never is).
        real = (heads & id_mask) != 0
        seen = np.diff(seen_before[edges])
        group_bounds = np.searchsorted(edges, layout.example_bounds)
        real_before = np.zeros(starts.size + 1, dtype=np.int32)
        np.cumsum(real, out=real_before[1:])
        real_groups = np.diff(real_before[group_bounds])
        # Only n-grams of the source or the prediction need more than the count of distinct n-grams.
        chosen = np.flatnonzero(real & (seen > 0))
        begin, end = starts[chosen], edges[1:][chosen]
        example = token_example[begin]
        seen = seen[chosen]
        source, candidate = seen & 0xFFFFFFFF, seen >> 32
        reference = end - begin - source - candidate
        del heads, real, real_before, seen
        stats.references[:, n] = real_groups - _count(example[reference == 0], examples)
        candidate_seen = candidate > 0
        stats.candidate[:, n] = _count(example[candidate_seen], examples)
        stats.shared[:, n] = _count(example[candidate_seen & (reference > 0)], examples)
        # The source's n-grams.
        of_source = np.flatnonzero(source)
        example, source, candidate, reference, begin, end = (
            values[of_source] for values in (example, source, candidate, reference, begin, end))
        numref = numrefs[example]
        kept = candidate > 0
        kept_by_references = reference > 0
        in_all_three = kept & kept_by_references
        deleted = candidate < source
        stats.kept[:, n] = _count(example[kept], examples)
        stats.kept_by_references[:, n] = _count(example[kept_by_references], examples)
        stats.in_all_three[:, n] = _count(example[in_all_three], examples)
        stats.deleted[:, n] = _count(example[deleted], examples)
        replicated = source * numref
        by_references = np.minimum(replicated, reference)
        by_candidate = np.minimum(source, candidate) * numref
        correct = np.minimum(by_candidate, reference)
        deleted_by_candidate = (source - candidate) * numref
        if variant == "easse":
            stats.keep_correct[:, n] = _count(example[in_all_three], examples, correct[in_all_three])
            stats.keep_ref[:, n] = _count(example[kept_by_references], examples, by_references[kept_by_references])
            stats.keep_sys[:, n] = _count(example[kept], examples, by_candidate[kept])
            not_by_references = replicated - reference
            removed = not_by_references > 0
            stats.delete_ref[:, n] = _count(example[removed], examples, not_by_references[removed])
            stats.delete_sys[:, n] = _count(example[deleted], examples, deleted_by_candidate[deleted])
            both = deleted & removed
            stats.delete_correct[:, n] = _count(
                example[both], examples, np.minimum(deleted_by_candidate, not_by_references)[both])
            continue
        # First position in the source: the smallest low field of the group (its first key's for 4-grams, whose
        # keys differ in the low field only; else the minimum over [begin, end)).
        if order == NGRAM_ORDER or not begin.size:
            first = low[begin]
        else:
            bounds = np.empty(2 * begin.size, dtype=np.int64)
            bounds[0::2], bounds[1::2] = begin, end
            first = np.minimum.reduceat(low, bounds)[0::2]
        cells = (slots.offsets[first] + slots.rank[example]) * width + n
        all_correct, all_candidate = correct[in_all_three], by_candidate[in_all_three]
        flat_terms[cells[in_all_three]] = all_correct / all_candidate
        if variant == "evaluate":
            stats.keep_correct[:, n] = _count(example[in_all_three], examples, all_correct)
            stats.keep_ref[:, n] = _count(example[kept_by_references], examples, by_references[kept_by_references])
        else:
            flat_terms[cells[in_all_three] + NGRAM_ORDER] = all_correct / by_references[in_all_three]
        positive = deleted & (deleted_by_candidate > reference)
        removed_by_candidate = deleted_by_candidate[positive]
        flat_terms[cells[positive] + (len(terms) - 1) * NGRAM_ORDER] = (
            (removed_by_candidate - reference[positive]) / removed_by_candidate)
    return stats, slots


def _sentence_values(stats: _OrderStats, slots: _SourceSlots, evaluate: bool) -> list[tuple]:
    """Rows (add, keep, delete, SARI, 1) as ``core_sari_counts.sentence_scores`` computes them."""
    empty = 1.0 if evaluate else 0.0
    sums = slots.sequential_sums(stats.terms).reshape(-1, stats.terms.shape[1] // NGRAM_ORDER, NGRAM_ORDER)
    keep_precision = _ratio(sums[:, 0], stats.kept, empty)
    if evaluate:
        keep_recall = _ratio(stats.keep_correct.astype(np.float64), stats.keep_ref, empty)
    else:
        keep_recall = _ratio(sums[:, 1], stats.kept_by_references, empty)
    keeps = _f1(keep_precision, keep_recall)
    deletes = _ratio(sums[:, -1], stats.deleted, empty)
    added_correctly = (stats.shared - stats.in_all_three).astype(np.float64)
    add_precision = _ratio(added_correctly, stats.candidate - stats.kept, empty)
    add_recall = _ratio(added_correctly, stats.references - stats.kept_by_references, empty)
    adds = _f1(add_precision, add_recall)
    if SEQUENTIAL_SUM:
        keep, delete, add = (
            (((values[:, 0] + values[:, 1]) + values[:, 2]) + values[:, 3]) / NGRAM_ORDER
            for values in (keeps, deletes, adds))
        sari = (keep + delete + add) / 3
        return list(zip(add.tolist(), keep.tolist(), delete.tolist(), sari.tolist(), [1] * add.size))
    rows = []
    for add_values, keep_values, delete_values in zip(adds.tolist(), keeps.tolist(), deletes.tolist()):
        add = sum(add_values) / NGRAM_ORDER
        keep = sum(keep_values) / NGRAM_ORDER
        delete = sum(delete_values) / NGRAM_ORDER
        rows.append((add, keep, delete, (keep + delete + add) / 3, 1))
    return rows


def _easse_values(stats: _OrderStats) -> list[tuple]:
    """Rows of EASSE's 36 counts (``core_sari_counts.easse_counts``) and 1."""
    counts = np.stack((
        stats.shared - stats.in_all_three, stats.candidate - stats.kept, stats.references - stats.kept_by_references,
        stats.keep_correct, stats.keep_sys, stats.keep_ref,
        stats.delete_correct, stats.delete_sys, stats.delete_ref,
    ), axis=1).reshape(stats.kept.shape[0], -1)
    return [(*row, 1) for row in counts.tolist()]


def _run_rows(layout: TextLayout, variant: str) -> list[tuple]:
    stats, slots = _order_statistics(layout, variant)
    if variant == "easse":
        return _easse_values(stats)
    return _sentence_values(stats, slots, variant == "evaluate")


def _python_row(source: str, prediction: str, references: Sequence[str], variant: str,
                tokenize: Callable[[str], list[str]]) -> tuple:
    """One example n-gram by n-gram (``core_sari_counts``)."""
    source_counts = order_counts(tokenize(source))
    prediction_counts = order_counts(tokenize(prediction))
    reference_counts = references_counts([tokenize(reference) for reference in references])
    if variant == "easse":
        return (*easse_counts(source_counts, prediction_counts, reference_counts, len(references)), 1)
    return (*sentence_scores(source_counts, prediction_counts, reference_counts, len(references),
                             evaluate=variant == "evaluate"), 1)


def _fitting_runs(id_bits: np.ndarray, low_bits: np.ndarray) -> list[tuple[int, int, bool]]:
    """Consecutive runs of examples whose keys fit in 64 bits when keyed together: (begin, end, fits); an
    example that does not fit alone is a run of its own with ``fits`` false."""
    runs: list[tuple[int, int, bool]] = []
    begin, widest_id, widest_low = 0, 0, 0
    for index, (ids, low) in enumerate(zip(id_bits.tolist(), low_bits.tolist())):
        if NGRAM_ORDER * ids + low > KEY_BITS:
            if index > begin:
                runs.append((begin, index, True))
            runs.append((index, index + 1, False))
            begin, widest_id, widest_low = index + 1, 0, 0
            continue
        if NGRAM_ORDER * max(widest_id, ids) + max(widest_low, low) > KEY_BITS:
            runs.append((begin, index, True))
            begin, widest_id, widest_low = index, 0, 0
        widest_id, widest_low = max(widest_id, ids), max(widest_low, low)
    if begin < id_bits.size:
        runs.append((begin, id_bits.size, True))
    return runs


def sari_batch_rows(sources: Sequence[str], predictions: Sequence[str], references: Sequence[Sequence[str]],
                    *, variant: str, lowercase: bool, tokenizer: str,
                    tokenize: Callable[[str], list[str]], raw_tokenize: Callable[[str], list[str]]) -> list[tuple]:
    """The rows of ``core_sari.sari_rows`` (checked inputs) for every example, chunk by chunk.

    ``tokenize`` is SARI's one-text tokenizer (``core_sari.sari_tokenizer``); ``raw_tokenize`` the same without
    the empty-text rule (used for the ``intl`` tokenizer, whose texts are tokenized one by one)."""
    rows: list[tuple] = []
    whitespace = variant == "easse"
    empty_token = not whitespace and tokenizer != "none"
    for begin, end, characters in example_chunks(sources, predictions, references):
        chunk_references = references[begin:end]
        joined = None
        if characters >= SMALL_CHUNK_CHARACTERS:
            joined = chunk_tokens(sources[begin:end], predictions[begin:end], chunk_references,
                                  lowercase=lowercase, tokenizer=tokenizer, whitespace=whitespace,
                                  tokenize=raw_tokenize)
        if joined is None:  # a small chunk, or texts that hold every separator candidate: one example at a time
            rows += [_python_row(sources[index], predictions[index], references[index], variant, tokenize)
                     for index in range(begin, end)]
            continue
        numrefs = np.fromiter(map(len, chunk_references), dtype=np.int64, count=end - begin)
        tokens, separator = joined
        chunk = chunk_ids(tokens, separator, numrefs, KEY_BITS)
        if chunk is None:
            # Too many distinct tokens for blocks: ids local to each example.
            bounds = [index for index, token in enumerate(tokens) if token == separator]
            first_text = (np.cumsum(numrefs + 2) - numrefs - 2).tolist()
            edges = [bounds[index] for index in first_text] + [len(tokens)]
            chunk = local_ids([tokens[edges[index]:edges[index + 1]] for index in range(end - begin)])
        ids, starts, sizes = chunk
        del tokens, joined, chunk
        if empty_token:
            ids, starts, sizes = fill_empty_texts(ids, starts, sizes)
        layout = TextLayout(ids, starts, sizes, numrefs)
        id_bits, low_bits = layout.keybit_width()
        if NGRAM_ORDER * int(id_bits.max()) + int(low_bits.max()) <= KEY_BITS:
            rows += _run_rows(layout, variant)
            continue
        for run_begin, run_end, fits in _fitting_runs(id_bits, low_bits):
            if fits:
                rows += _run_rows(layout.part(run_begin, run_end), variant)
            else:
                index = begin + run_begin
                rows.append(_python_row(sources[index], predictions[index], references[index], variant, tokenize))
    return rows
