"""SARI's batch scoring, step 1 (``core_sari_batch`` describes all steps): the tokens of a chunk of examples as
integer ids, and where each example's texts and tokens lie in them.

Ids are dense within blocks of examples (:func:`chunk_ids`: one ``dict`` for the chunk, then a presence table
renumbers the ids each block uses as 1..V), or local to each example (:func:`local_ids`) when no block fits;
the text separator is id 0 either way. ``SARI.py`` and evaluate split an empty text into one empty token:
:func:`fill_empty_texts` gives it a fresh id. :class:`TextLayout` holds the offsets the counting step needs.
"""

from __future__ import annotations

from array import array

import numpy as np

from .core_sari_counts import NGRAM_ORDER


def bit_width(value: int) -> int:
    """The bits that hold ``value`` (at least 1)."""
    return max(int(value).bit_length(), 1)


# The largest presence table (blocks x vocabulary) that :func:`chunk_ids` fills to make ids dense per block.
MAX_PRESENCE_CELLS = 1 << 24
# Examples per block, tried in turn (after the whole chunk) until 4 ids and the low field fit in a key.
_BLOCK_EXAMPLES = (256, 32, 4)


def chunk_ids(tokens: list[str], separator: str, numrefs: np.ndarray, key_bits: int
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Ids of a chunk's tokens (:func:`core_sari_tokens.chunk_tokens`) that are dense within blocks of
    examples: one ``dict`` for the chunk gives each distinct token an id, then a presence table (blocks x
    vocabulary) renumbers the ids each block uses as 1..V (separators 0). The largest block (the whole chunk,
    then 256, 32 or 4 examples) whose ids fit in a key of ``key_bits`` bits is taken. Returns (ids and a final 0, the offsets where
    examples start, one more than each example's largest id) or None when no block size fits."""
    # Any numbering will do (results do not depend on it): a set is the fastest to build.
    distinct = set(tokens)
    vocabulary = dict(zip(distinct, range(len(distinct))))
    del distinct
    ids = np.fromiter(map(vocabulary.__getitem__, tokens), dtype=np.int64, count=len(tokens))
    size = len(vocabulary)
    is_separator = ids == vocabulary[separator]
    separators = np.flatnonzero(is_separator)
    texts_per_example = numrefs + 2
    first_text = np.cumsum(texts_per_example) - texts_per_example
    starts = separators[first_text]
    examples = starts.size
    source_lengths = separators[first_text + 1] - starts - 1
    # The low field holds source positions and two more values; an empty source may get an empty token.
    low_bits = bit_width(int(source_lengths.max(initial=0)) + 2)
    # One block: the chunk's ids renumbered in a table (the separator's id to 0).
    present = np.zeros(size, dtype=bool)
    present[ids] = True
    present[vocabulary[separator]] = False
    ranks = np.cumsum(present)
    used = int(ranks[-1])
    if NGRAM_ORDER * bit_width(used + 1) + low_bits <= key_bits:
        ranks[vocabulary[separator]] = 0
        return np.append(ranks[ids], 0), starts, np.full(examples, used + 1, dtype=np.int64)
    real = np.flatnonzero(~is_separator)
    token_example = np.repeat(np.arange(examples, dtype=np.int64), np.diff(np.append(starts, ids.size)))[real]
    tokens_global = ids[real]
    for block in _BLOCK_EXAMPLES:
        blocks = -(-examples // block)
        if blocks * size > MAX_PRESENCE_CELLS:
            break
        cells = (token_example // block) * size + tokens_global
        present = np.zeros(blocks * size, dtype=bool)
        present[cells] = True
        ranks = np.cumsum(present, dtype=np.int64)
        before = np.concatenate(([0], ranks[size - 1::size]))
        block_sizes = np.diff(before)
        # Ids 1..V, and V + 1 for an empty text's token.
        if NGRAM_ORDER * bit_width(int(block_sizes.max(initial=0)) + 1) + low_bits > key_bits:
            continue
        dense = np.zeros(ids.size + 1, dtype=np.int64)
        dense[real] = ranks[cells] - before[token_example // block]
        return dense, starts, (block_sizes + 1)[np.arange(examples) // block]
    return None


def local_ids(examples: list[list[str]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dense ids of each example's tokens, local to the example, in order of first appearance: the text
    separator that starts every example's list is id 0. Returns (the ids of all examples one after another,
    and a final 0; the offsets where examples start; one more than each example's largest id)."""
    ids = array("q")
    extend = ids.extend
    starts = array("q")
    sizes = array("q")
    for tokens in examples:
        unique = dict.fromkeys(tokens)
        local = dict(zip(unique, range(len(unique))))
        starts.append(len(ids))
        extend(map(local.__getitem__, tokens))
        sizes.append(len(unique))
    ids.append(0)
    return (np.frombuffer(ids, dtype=np.int64).copy(), np.frombuffer(starts, dtype=np.int64).copy(),
            np.frombuffer(sizes, dtype=np.int64).copy())


def fill_empty_texts(ids: np.ndarray, starts: np.ndarray, sizes: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """SARI.py and evaluate split an empty text on " ": one empty token. Each empty text gets one, with a fresh
    id of its example (its number of ids, which then grows by one)."""
    zero = ids == 0
    empty = np.flatnonzero(zero[:-1] & zero[1:])
    if not empty.size:
        return ids, starts, sizes
    owner = np.searchsorted(starts, empty, side="right") - 1
    ids = np.insert(ids, empty + 1, sizes[owner])
    starts = starts + np.searchsorted(empty + 1, starts, side="right")
    sizes = sizes + (np.bincount(owner, minlength=sizes.size) > 0)
    return ids, starts, sizes


class TextLayout:
    """Where the texts and tokens of a run of examples are in their id array (:func:`chunk_ids`,
    :func:`local_ids`): every text preceded by a 0, the array ending with a 0."""

    def __init__(self, ids: np.ndarray, starts: np.ndarray, sizes: np.ndarray, numrefs: np.ndarray) -> None:
        examples = starts.size
        separators = np.flatnonzero(ids == 0)
        text_lengths = np.diff(separators) - 1
        texts_per_example = numrefs + 2
        if text_lengths.size != int(texts_per_example.sum()):  # pragma: no cover - the token lists guarantee it
            raise AssertionError("SARI: texts and separators disagree")
        first_text = np.cumsum(texts_per_example) - texts_per_example
        self.ids = ids
        self.starts = starts
        self.sizes = sizes
        self.numrefs = numrefs
        self.examples = examples
        self.source_lengths = text_lengths[first_text]
        self.longest = int(self.source_lengths.max(initial=0))
        token_counts = np.add.reduceat(text_lengths, first_text) if examples else np.zeros(0, dtype=np.int64)
        self.example_bounds = np.concatenate(([0], np.cumsum(token_counts)))
        # Every token (not a separator): where it is in ids, its example, and its key's low field (its place in
        # the source for the source's tokens, L for the prediction's, L + 1 for the references').
        self.positions = np.flatnonzero(ids)
        self.token_example = np.repeat(np.arange(examples, dtype=np.int64), token_counts)
        is_source = np.zeros(text_lengths.size, dtype=bool)
        is_source[first_text] = True
        base = np.full(text_lengths.size, self.longest + 1, dtype=np.int64)
        base[first_text + 1] = self.longest
        base[first_text] = -1 - separators[first_text]
        low = np.repeat(base, text_lengths)
        source_tokens = np.repeat(is_source, text_lengths)
        low[source_tokens] += self.positions[source_tokens]
        self.token_low = low

    def keybit_width(self) -> tuple[np.ndarray, np.ndarray]:
        """Per example, the bits of its largest id and of its key's low field (a key holds 4 ids and the low
        field; examples keyed together use their largest widths)."""
        id_bits = np.frexp(np.maximum(self.sizes - 1, 1).astype(np.float64))[1]  # bit length of the largest id
        return id_bits, np.frexp((self.source_lengths + 1).astype(np.float64))[1]

    def part(self, begin: int, end: int) -> TextLayout:
        """The layout of examples ``begin..end-1``."""
        stop = int(self.starts[end]) if end < self.examples else self.ids.size - 1
        ids = np.append(self.ids[int(self.starts[begin]):stop], 0)
        return TextLayout(ids, self.starts[begin:end] - self.starts[begin], self.sizes[begin:end],
                       self.numrefs[begin:end])
