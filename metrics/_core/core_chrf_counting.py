"""chrF's n-gram match counts for many (hypothesis, reference) pairs at once, with one sort per pair chunk.

For every pair and order n, chrF needs the number of hypothesis n-grams, of reference n-grams, and of matches
(the sum over n-grams of min(hypothesis count, reference count)). Each position of each text starts a window
of ``max_order`` symbols (characters, or words for chrF++'s word orders), padded past the text's end with a
symbol 0 that no real symbol uses. A window is packed into an unsigned 64-bit key: the pair's index in the
chunk, then the symbols (dense ids, ``bits`` each), then one bit saying whether the window is the reference's
(a key too long for 64 bits, from a large alphabet at high orders, takes several words, sorted together).
Sorting the keys once puts equal n-grams of one pair next to each other for every order n at once (a window's
first n symbols are a prefix of its key), so each order is a few linear passes over the sorted keys: a group
is a run of keys equal in their pair and first n symbols; it holds ``h`` hypothesis and ``r`` reference
windows and adds min(h, r) matches, unless its n-th symbol is the padding (the n-gram would run past the end).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import NamedTuple

import numpy as np

KEY_BITS = 64

# One sort takes pairs until their texts hold this many characters (about 100 bytes of memory each) or this
# many pairs; a longer pair is sorted alone.
MAX_CHUNK_CHARACTERS = 1 << 20
MAX_CHUNK_PAIRS = 1 << 14


def pair_chunks(hypotheses: Sequence[str], references: Sequence[str]) -> list[slice]:
    """Consecutive ranges of pairs within :data:`MAX_CHUNK_CHARACTERS` and :data:`MAX_CHUNK_PAIRS`."""
    chunks: list[slice] = []
    begin, characters = 0, 0
    for index, size in enumerate(map(len, hypotheses)):
        size += len(references[index])
        if index > begin and (characters + size > MAX_CHUNK_CHARACTERS or index - begin == MAX_CHUNK_PAIRS):
            chunks.append(slice(begin, index))
            begin, characters = index, 0
        characters += size
    if begin < len(hypotheses):
        chunks.append(slice(begin, len(hypotheses)))
    return chunks


def symbol_bits(alphabet_size: int) -> int:
    """Bits that hold the dense ids 1..alphabet_size and the padding symbol 0."""
    return max(int(alphabet_size).bit_length(), 1)


def pair_bits(pairs: int) -> int:
    """Bits that hold a pair index 0..pairs-1."""
    return max(int(pairs - 1).bit_length(), 1)


class KeyWord(NamedTuple):
    """One 64-bit word of a window's key: ``used`` bits, holding symbols ``first``..``first + count - 1``
    (after the pair index in the first word, before the reference bit in the last)."""

    used: int
    first: int
    count: int


def key_words(pair_width: int, bits: int, max_order: int) -> list[KeyWord]:
    """The words of a key (pair index, ``max_order`` symbols of ``bits`` bits, reference bit), filled in order."""
    words = [[pair_width, 0, 0]]
    for symbol in range(max_order):
        if words[-1][0] + bits > KEY_BITS:
            words.append([0, symbol, 0])
        words[-1][0] += bits
        words[-1][2] += 1
    if words[-1][0] + 1 > KEY_BITS:
        words.append([0, max_order, 0])
    words[-1][0] += 1
    return [KeyWord(*word) for word in words]


def character_ids(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, int]:
    """The characters of ``texts`` as dense ids 1..V (in code point order), the texts' lengths, and V."""
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    codes = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    if codes.size == 0:
        return np.zeros(0, dtype=np.uint64), lengths, 0
    present = np.bincount(codes) > 0
    ranks = np.cumsum(present, dtype=np.uint64)
    return ranks[codes], lengths, int(ranks[-1])


def token_ids(texts: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray, int]:
    """The tokens of token lists as dense ids 1..V (in order of first appearance), the lists' lengths, and V."""
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    tokens = list(chain.from_iterable(texts))
    vocabulary = {token: index for index, token in enumerate(dict.fromkeys(tokens), 1)}
    ids = np.fromiter(map(vocabulary.__getitem__, tokens), dtype=np.uint64, count=len(tokens))
    return ids, lengths, len(vocabulary)


def _packed_symbols(padded: np.ndarray, real: np.ndarray, first: int, count: int, bits: int) -> np.ndarray:
    """Symbols ``first``..``first + count - 1`` of the window at every real position, packed (first highest)."""
    packed = np.zeros(padded.size, dtype=np.uint64)
    for offset in range(first, first + count):
        packed <<= np.uint64(bits)
        packed[:padded.size - offset] |= padded[offset:]
    return packed[real]


def match_counts(
    symbols: np.ndarray, lengths: np.ndarray, alphabet_size: int, pairs: int, max_order: int
) -> np.ndarray:
    """Matches per pair and order (``pairs`` x ``max_order``) of texts given as symbol ids.

    ``symbols`` holds the texts one after another: the ``pairs`` hypotheses, then the ``pairs`` references
    (``lengths`` in the same order). Keys longer than 64 bits (large alphabets at high orders) take several
    words, sorted together with ``np.lexsort``.
    """
    bits = symbol_bits(alphabet_size)
    matches = np.zeros((pairs, max_order), dtype=np.int64)
    total = int(symbols.size)
    if total == 0 or max_order == 0:
        return matches
    texts = lengths.size
    # Each text followed by max_order padding symbols: a window never reaches into the next text.
    padded = np.zeros(total + max_order * texts, dtype=np.uint64)
    real = np.ones(padded.size, dtype=bool)
    ends = np.cumsum(lengths + max_order)
    for offset in range(1, max_order + 1):
        real[ends - offset] = False
    padded[real] = symbols
    pair_width = pair_bits(pairs)
    layout = key_words(pair_width, bits, max_order)
    labels = np.arange(texts, dtype=np.uint64)
    pair_shift = np.uint64(layout[0].used - pair_width)
    words = []
    for index, word in enumerate(layout):
        packed = _packed_symbols(padded, real, word.first, word.count, bits)
        if index == len(layout) - 1:
            packed <<= np.uint64(1)
            packed |= np.repeat((labels >= pairs).astype(np.uint64), lengths)
        if index == 0:
            packed |= np.repeat(labels % np.uint64(pairs), lengths) << pair_shift
        words.append(packed)
    del padded, real
    if len(words) == 1:
        words[0].sort()
    else:
        order = np.lexsort(words[::-1])
        words = [word[order] for word in words]
    references_before = np.concatenate(([0], np.cumsum(words[-1] & np.uint64(1), dtype=np.int64)))
    changed = [word[1:] ^ word[:-1] for word in words]
    earlier_changed = np.zeros(changed[0].size, dtype=bool)
    boundary = np.ones(words[0].size + 1, dtype=bool)
    symbol_mask = np.uint64((1 << bits) - 1)
    positions = [
        (index, (word.count - 1 - offset) * bits + (index == len(layout) - 1))
        for index, word in enumerate(layout)
        for offset in range(word.count)
    ]
    compared_words = 0
    for order, (index, shift) in enumerate(positions, 1):
        while compared_words < index:
            earlier_changed |= changed[compared_words] != 0
            compared_words += 1
        np.greater_equal(changed[index], np.uint64(1 << shift), out=boundary[1:-1])
        boundary[1:-1] |= earlier_changed
        bounds = np.flatnonzero(boundary)
        starts = bounds[:-1]
        references = np.diff(references_before[bounds])
        hypotheses = np.diff(bounds) - references
        complete = (words[index][starts] >> np.uint64(shift)) & symbol_mask != 0
        common = np.concatenate(([0], np.cumsum(np.minimum(hypotheses, references) * complete)))
        pair_bounds = np.searchsorted(words[0][starts] >> pair_shift, np.arange(pairs + 1, dtype=np.uint64))
        matches[:, order - 1] = np.diff(common[pair_bounds])
    return matches
