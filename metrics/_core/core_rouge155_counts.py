"""Clipped n-gram and skip-bigram hits of many (prediction, reference) pairs at once, on token ids.

A corpus is one flat array of token ids with the start of each text (``starts``, one more entry than there
are texts); a *unit* is one (prediction text, reference text) pair. The hits of a unit are
sum over grams of min(count in the prediction, count in the reference), ROUGE-1.5.5's clipped counts.

:func:`ngram_hits` numbers the n-grams of every order of the whole corpus with ``numpy.unique`` (an n-gram is
a (prefix (n-1)-gram, last token) pair), counts (text, n-gram) occurrences and intersects the prediction's and
the reference's counts of each unit. :func:`skip_bigram_hits` counts the ordered pairs of one unit in a dense
table over the unit's own vocabulary (``numpy.bincount``), which avoids sorting the quadratic number of pairs.
"""

from __future__ import annotations

import numpy as np

from .core_process import MIB, bounded_cache


def text_offsets(lengths: np.ndarray) -> np.ndarray:
    """Start of each text in the flat array, plus the end: ``[0, l0, l0 + l1, ...]``."""
    starts = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    return starts


def _expand_to_units(texts: np.ndarray, unit_text: np.ndarray, n_texts: int) -> tuple[np.ndarray, np.ndarray]:
    """For entries belonging to ``texts``, (entry index, unit) for every unit whose prediction is that text."""
    per_text = np.bincount(unit_text, minlength=n_texts)
    order = np.argsort(unit_text, kind="stable")
    first = text_offsets(per_text)[:-1]
    repeats = per_text[texts]
    entries = np.repeat(np.arange(len(texts)), repeats)
    within = np.arange(len(entries)) - np.repeat(np.cumsum(repeats) - repeats, repeats)
    return entries, order[first[texts[entries]] + within]


def _unit_hits(
    text_of: np.ndarray, gram: np.ndarray, n_grams: int, peer_text: np.ndarray, model_text: np.ndarray, n_texts: int
) -> np.ndarray:
    """Clipped hits per unit of the gram occurrences (``text_of``, ``gram``)."""
    n_units = len(peer_text)
    keys, counts = np.unique(text_of * n_grams + gram, return_counts=True)
    texts, grams = keys // n_grams, keys % n_grams
    unit_of_model = np.full(n_texts, -1, dtype=np.int64)
    unit_of_model[model_text] = np.arange(n_units)
    is_peer = np.zeros(n_texts, dtype=bool)
    is_peer[peer_text] = True

    model = unit_of_model[texts] >= 0
    model_keys = unit_of_model[texts[model]] * n_grams + grams[model]
    model_counts = counts[model]
    peer = np.flatnonzero(is_peer[texts])
    entries, units = _expand_to_units(texts[peer], peer_text, n_texts)
    peer_keys = units * n_grams + grams[peer][entries]
    peer_counts = counts[peer][entries]
    order = np.argsort(peer_keys, kind="stable")
    peer_keys, peer_counts = peer_keys[order], peer_counts[order]

    _, in_peer, in_model = np.intersect1d(peer_keys, model_keys, assume_unique=True, return_indices=True)
    clipped = np.minimum(peer_counts[in_peer], model_counts[in_model])
    return np.bincount(model_keys[in_model] // n_grams, weights=clipped, minlength=n_units).astype(np.int64)


def ngram_hits(
    flat: np.ndarray, starts: np.ndarray, peer_text: np.ndarray, model_text: np.ndarray, max_n: int
) -> np.ndarray:
    """Clipped n-gram hits, shape (max_n, units): row n-1 holds the n-gram hits of each unit.

    ``flat`` holds dense token ids (0 .. vocabulary size - 1). Every reference text must belong to exactly one
    unit; a prediction text may belong to several.
    """
    n_texts = len(starts) - 1
    hits = np.zeros((max_n, len(peer_text)), dtype=np.int64)
    if not len(flat) or not len(peer_text):
        return hits
    lengths = np.diff(starts)
    text_of = np.repeat(np.arange(n_texts), lengths)
    end_of = starts[1:][text_of]
    positions = np.arange(len(flat))
    gram = flat
    vocabulary = int(flat.max()) + 1
    n_grams = vocabulary
    for n in range(1, max_n + 1):
        if n > 1:
            keep = positions + (n - 1) < end_of
            positions, gram, text_of, end_of = positions[keep], gram[keep], text_of[keep], end_of[keep]
            if not len(positions):
                break
            codes = gram * vocabulary + flat[positions + n - 1]
            _, gram = np.unique(codes, return_inverse=True)
            n_grams = int(gram.max()) + 1
        hits[n - 1] = _unit_hits(text_of, gram, n_grams, peer_text, model_text, n_texts)
    return hits


_CACHED_LENGTH = 400
# Bytes of cached pair positions (two int64 arrays per (length, skip)); a text of 400 tokens has 79,800 pairs.
PAIR_CACHE_BYTES = 64 * MIB
_PAIR_POSITIONS = bounded_cache(
    __file__, "rouge155.skip_pairs", PAIR_CACHE_BYTES, lambda key, pairs: 200 + pairs[0].nbytes + pairs[1].nbytes
)


def _pair_positions(length: int, skip: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions (i, j), i < j <= i + skip + 1 (any j when skip < 0); cached process-wide for short texts."""
    if length <= _CACHED_LENGTH:
        return _PAIR_POSITIONS.get((length, skip), lambda: _pair_positions_of(length, skip))
    return _pair_positions_of(length, skip)


def _pair_positions_of(length: int, skip: int) -> tuple[np.ndarray, np.ndarray]:
    if skip < 0 or skip + 1 >= length - 1:
        return np.triu_indices(length, 1)
    firsts, seconds = [], []
    for i in range(length - 1):
        last = min(i + skip + 1, length - 1)
        firsts.append(np.full(last - i, i))
        seconds.append(np.arange(i + 1, last + 1))
    return np.concatenate(firsts), np.concatenate(seconds)


def skip_pair_count(length: int, skip: int) -> int:
    """Number of skip-bigrams of a text of ``length`` tokens."""
    if length < 2:
        return 0
    if skip < 0 or skip + 1 >= length - 1:
        return length * (length - 1) // 2
    gap = skip + 1
    return gap * length - gap * (gap + 1) // 2


# Dense (vocabulary x vocabulary) pair tables up to this many cells; larger vocabularies count sorted pair codes.
DENSE_PAIR_CELLS = 1 << 22
# Skip-bigrams of one text beyond this number are refused (their positions alone would take 16 bytes each).
MAX_SKIP_PAIRS = 1 << 25


def _pair_counts(local: np.ndarray, skip: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(pair codes, counts) of the skip-bigrams of one text over a local vocabulary of ``size`` tokens."""
    first, second = _pair_positions(len(local), skip)
    codes = local[first] * size + local[second]
    if size * size <= DENSE_PAIR_CELLS:
        counts = np.bincount(codes, minlength=size * size)
        return np.flatnonzero(counts), counts[counts > 0]
    return np.unique(codes, return_counts=True)


def skip_bigram_hits(
    flat: np.ndarray, starts: np.ndarray, peer_text: np.ndarray, model_text: np.ndarray, skip: int,
    max_pairs: int = MAX_SKIP_PAIRS,
) -> np.ndarray:
    """Clipped skip-bigram hits of each unit (pairs with at most ``skip`` tokens between; any when skip < 0).

    A text with more than ``max_pairs`` skip-bigrams (by default ``MAX_SKIP_PAIRS``: about 8,000 tokens without a
    skip limit) is refused with a ``ValueError``: counting them is quadratic in the text's length, as in
    ROUGE-1.5.5.pl.
    """
    hits = np.zeros(len(peer_text), dtype=np.int64)
    for unit, (peer, model) in enumerate(zip(peer_text.tolist(), model_text.tolist(), strict=True)):
        peer_ids = flat[starts[peer] : starts[peer + 1]]
        model_ids = flat[starts[model] : starts[model + 1]]
        if len(peer_ids) < 2 or len(model_ids) < 2:
            continue
        for ids in (peer_ids, model_ids):
            if skip_pair_count(len(ids), skip) > max_pairs:
                raise ValueError(
                    f"rouge155: a text of {len(ids):,} tokens has {skip_pair_count(len(ids), skip):,} skip-bigrams"
                    f"{'' if skip >= 0 else ' at any distance'}, more than max_skip_bigrams={max_pairs:,} "
                    "(counting them is quadratic in the length, as in ROUGE-1.5.5.pl); use a skip limit such as "
                    "rougeSU4, leave rougeS/rougeSU out for such texts, or raise max_skip_bigrams"
                )
        vocabulary, local = np.unique(np.concatenate([peer_ids, model_ids]), return_inverse=True)
        size = len(vocabulary)
        peer_codes, peer_counts = _pair_counts(local[: len(peer_ids)], skip, size)
        model_codes, model_counts = _pair_counts(local[len(peer_ids) :], skip, size)
        _, in_peer, in_model = np.intersect1d(peer_codes, model_codes, assume_unique=True, return_indices=True)
        hits[unit] = int(np.minimum(peer_counts[in_peer], model_counts[in_model]).sum())
    return hits
