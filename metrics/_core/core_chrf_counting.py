"""chrF's n-gram match counts for many (hypothesis, reference) pairs at once, with one sort per pair chunk.

For every pair and order n, chrF needs the number of hypothesis n-grams, of reference n-grams, and of matches
(the sum over n-grams of min(hypothesis count, reference count)). Each position of each text starts a window
of ``max_order`` symbols (characters, or words for chrF++'s word orders), padded past the text's end with a
symbol 0 that no real symbol uses. A window is packed into one unsigned 64-bit key: the pair's index in the
chunk, then the symbols (dense ids, ``bits`` each), then one bit saying whether the window is the reference's.
Sorting the keys once puts equal n-grams of one pair next to each other for every order n at once (a window's
first n symbols are a prefix of its key), so each order is a few linear passes over the sorted keys: a group
is a run of keys equal in their pair and first n symbols; it holds ``h`` hypothesis and ``r`` reference
windows and adds min(h, r) matches, unless its n-th symbol is the padding (the n-gram would run past the end).

The packing is exact while pair bits + ``max_order`` x symbol bits + 1 fit in 64 bits; :func:`fits` says when
they do not (very large alphabets at high orders) and the caller counts such pairs another way.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

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


def fits(pairs: int, alphabet_size: int, max_order: int) -> bool:
    """True when windows of ``max_order`` symbols of ``pairs`` pairs pack into one 64-bit key."""
    return pair_bits(pairs) + max_order * symbol_bits(alphabet_size) + 1 <= KEY_BITS


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


def match_counts(
    symbols: np.ndarray, lengths: np.ndarray, alphabet_size: int, pairs: int, max_order: int
) -> np.ndarray:
    """Matches per pair and order (``pairs`` x ``max_order``) of texts given as symbol ids.

    ``symbols`` holds the texts one after another: the ``pairs`` hypotheses, then the ``pairs`` references
    (``lengths`` in the same order). Requires :func:`fits`.
    """
    bits = symbol_bits(alphabet_size)
    window_bits = max_order * bits + 1
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
    windows = padded.copy()
    for offset in range(1, max_order):
        windows[:-offset] <<= np.uint64(bits)
        windows[:-offset] |= padded[offset:]
        windows[-offset:] <<= np.uint64(bits)
    keys = windows[real]
    del padded, windows, real
    keys <<= np.uint64(1)
    text_labels = np.arange(texts, dtype=np.uint64)
    text_labels = (text_labels % np.uint64(pairs)) << np.uint64(window_bits) | (text_labels >= pairs)
    keys |= np.repeat(text_labels, lengths)
    keys.sort()
    references_before = np.concatenate(([0], np.cumsum(keys & np.uint64(1), dtype=np.int64)))
    changed = keys[1:] ^ keys[:-1]
    boundary = np.ones(keys.size + 1, dtype=bool)
    symbol_mask = np.uint64((1 << bits) - 1)
    for order in range(1, max_order + 1):
        shift = (max_order - order) * bits + 1
        np.greater_equal(changed, np.uint64(1 << shift), out=boundary[1:-1])
        bounds = np.flatnonzero(boundary)
        starts = bounds[:-1]
        references = np.diff(references_before[bounds])
        hypotheses = np.diff(bounds) - references
        complete = (keys[starts] >> np.uint64(shift)) & symbol_mask != 0
        common = np.concatenate(([0], np.cumsum(np.minimum(hypotheses, references) * complete)))
        pair_bounds = np.searchsorted(keys[starts] >> np.uint64(window_bits), np.arange(pairs + 1, dtype=np.uint64))
        matches[:, order - 1] = np.diff(common[pair_bounds])
    return matches
