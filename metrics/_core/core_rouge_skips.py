"""Skip-bigram hits of two token sequences (ROUGE-S), counted without listing every pair where that is cheaper.

A skip-bigram of a text is an ordered pair of its tokens ``(t_i, t_j)``, ``i < j``, with at most ``max_skip``
tokens between them (``j - i <= max_skip + 1``; any gap when ``max_skip`` is None). The hits of a (prediction,
reference) pair are, over the pair types ``(a, b)``, the sum of min(count in the prediction, count in the
reference). A text of n tokens has n (n - 1) / 2 skip-bigrams at any distance: listing them, as a Counter of
pairs does, takes memory quadratic in the length (10,000 tokens: 50 million pairs, gigabytes as Python tuples).

Only pair types whose two tokens occur in both texts ("shared" types) can match. Two exact ways to count:

- *listing*: the pairs of each text as integer codes counted with numpy, work and memory proportional to the
  number of pairs. At any distance only the shared tokens are kept first (dropping the other tokens changes no
  count of a pair of shared types); with a skip limit the pairs are at most ``n * (max_skip + 1)``.
- *by first token*: for a block of shared types ``a``, a running count of ``a`` along each text gives, at every
  position ``j`` holding a shared type ``b``, the number of ``a`` before ``j`` (within the window, with a skip
  limit); summed per ``b``, that is count(a, b) for every ``b`` at once. Work proportional to the number of shared
  types times the texts' lengths, memory to one block.

:func:`skip_bigram_work` is the cost of the cheaper way, which the caller bounds; :func:`skip_bigram_hits` counts.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

# Pairs listed (both texts together) up to which listing is used whatever the other way costs, and beyond which
# it is used only with a dense table of pair types (listed codes take 8 bytes a pair, and sorting them twice that).
LIST_PAIRS = 1 << 20
MAX_LIST_PAIRS = 1 << 24
# Listing one pair costs about this many steps of the other way (it sorts or counts the codes).
LIST_COST = 4
# Elements of one block of running counts (shared types x text length).
_BLOCK = 1 << 21
# Dense (types x types) count tables up to this many cells (8 bytes each); beyond, pair codes are sorted.
_DENSE = 1 << 24
# Codes listed at once into a dense table.
_CHUNK = 1 << 22


def skip_pair_total(length: int, max_skip: int | None) -> int:
    """The number of skip-bigrams of a text of ``length`` tokens."""
    if length < 2:
        return 0
    if max_skip is None or max_skip + 1 >= length - 1:
        return length * (length - 1) // 2
    gap = max_skip + 1
    return gap * length - gap * (gap + 1) // 2


class _Shared:
    """The two texts as ids of their shared types (0 .. size - 1; ``size`` stands for a token of one text only)."""

    def __init__(self, prediction: Sequence[Hashable], reference: Sequence[Hashable], max_skip: int | None) -> None:
        in_reference = set(reference)
        ids: dict[Hashable, int] = {}
        for token in prediction:
            if token in in_reference and token not in ids:
                ids[token] = len(ids)
        self.size = size = len(ids)
        get = ids.get
        self.prediction = np.fromiter((get(token, size) for token in prediction), dtype=np.int64,
                                      count=len(prediction))
        self.reference = np.fromiter((get(token, size) for token in reference), dtype=np.int64, count=len(reference))
        self.anywhere = max_skip is None
        if self.anywhere:  # at any distance the other tokens change no count of a shared pair
            self.prediction = self.prediction[self.prediction < size]
            self.reference = self.reference[self.reference < size]
        self.max_skip = max_skip

    @property
    def width(self) -> int:
        """The ids' range: the shared types, and one for the other tokens where they are kept."""
        return self.size if self.anywhere else self.size + 1

    def listed(self) -> int:
        return skip_pair_total(len(self.prediction), self.max_skip) + skip_pair_total(len(self.reference),
                                                                                     self.max_skip)

    def by_first_token(self) -> int:
        return self.size * (len(self.prediction) + len(self.reference))


def _work(shared: _Shared) -> tuple[int, str]:
    if not shared.size:
        return 0, "none"
    return _cheaper(shared.listed(), shared.by_first_token(), shared.width)


def _cheaper(listed: int, by_type: int, width: int) -> tuple[int, str]:
    if listed <= LIST_PAIRS or (listed <= MAX_LIST_PAIRS or width * width <= _DENSE) and LIST_COST * listed <= by_type:
        return LIST_COST * listed, "list"
    return by_type, "types"


def skip_bigram_work(prediction: Sequence[Hashable], reference: Sequence[Hashable], max_skip: int | None) -> int:
    """Steps :func:`skip_bigram_hits` takes for these texts (the cheaper of its two ways, see the module text)."""
    return _work(_Shared(prediction, reference, max_skip))[0]


def work_bound(prediction_length: int, reference_length: int, max_skip: int | None) -> int:
    """An upper bound of :func:`skip_bigram_work` from the texts' lengths alone."""
    listed = skip_pair_total(prediction_length, max_skip) + skip_pair_total(reference_length, max_skip)
    shared = min(prediction_length, reference_length)
    by_type = shared * (prediction_length + reference_length)
    return max(_cheaper(listed, by_type, shared + 1)[0], LIST_COST * LIST_PAIRS)


def skip_bigram_hits(prediction: Sequence[Hashable], reference: Sequence[Hashable], max_skip: int | None) -> int:
    """Sum over skip-bigram types of min(count in ``prediction``, count in ``reference``), exactly."""
    shared = _Shared(prediction, reference, max_skip)
    _, way = _work(shared)
    if way == "none":
        return 0
    if way == "list":
        return _listed_hits(shared)
    return _hits_by_first_token(shared)


def _gaps(length: int, max_skip: int | None) -> range:
    if max_skip is None or max_skip + 1 >= length - 1:
        return range(1, length)
    return range(1, max_skip + 2)


def _pair_counts(ids: np.ndarray, max_skip: int | None, size: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """(codes ``a * width + b``, counts) of the pairs of ``ids`` whose two tokens are shared (ids below ``size``)."""
    if len(ids) < 2:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    gaps = _gaps(len(ids), max_skip)
    if width * width <= _DENSE:  # a table of every pair type, the codes listed a chunk of gaps at a time
        table = np.zeros(width * width, dtype=np.int64)
        chunk: list[np.ndarray] = []
        listed = 0
        for gap in gaps:
            chunk.append(ids[:-gap] * width + ids[gap:])
            listed += len(ids) - gap
            if listed >= _CHUNK or gap == gaps[-1]:
                table += np.bincount(np.concatenate(chunk), minlength=width * width)
                chunk, listed = [], 0
        keys = np.flatnonzero(table)
        counts = table[keys]
    else:
        keys, counts = np.unique(np.concatenate([ids[:-gap] * width + ids[gap:] for gap in gaps]), return_counts=True)
    shared = (keys // width < size) & (keys % width < size)
    return keys[shared], counts[shared]


def _listed_hits(shared: _Shared) -> int:
    prediction_codes, prediction_counts = _pair_counts(shared.prediction, shared.max_skip, shared.size, shared.width)
    reference_codes, reference_counts = _pair_counts(shared.reference, shared.max_skip, shared.size, shared.width)
    _, in_prediction, in_reference = np.intersect1d(prediction_codes, reference_codes, assume_unique=True,
                                                    return_indices=True)
    return int(np.minimum(prediction_counts[in_prediction], reference_counts[in_reference]).sum())


class _Grouped:
    """A text's positions holding shared types, grouped by type: ``order`` (positions, by type then position),
    ``types`` (the types present) and ``starts`` (where each type's positions begin in ``order``)."""

    def __init__(self, ids: np.ndarray, size: int) -> None:
        positions = np.flatnonzero(ids < size)
        self.order = positions[np.argsort(ids[positions], kind="stable")]
        self.types, self.starts = np.unique(ids[self.order], return_index=True)
        self.occurrences = np.diff(np.append(self.starts, len(self.order)))


def _counts_by_first(ids: np.ndarray, grouped: _Grouped, first: np.ndarray, size: int,
                     max_skip: int | None) -> np.ndarray:
    """count(a, b) for ``a`` in ``first`` (rows) and every shared ``b`` (columns) of the text ``ids``."""
    length = len(ids)
    counts = np.zeros((len(first), size), dtype=np.int64)
    if length < 2 or not len(grouped.order):
        return counts
    seen = np.cumsum(ids[None, :] == first[:, None], axis=1, dtype=np.int32)  # occurrences of a in [0, j]
    if max_skip is not None and max_skip + 1 < length - 1:
        window = max_skip + 2  # occurrences of a in [j - max_skip - 1, j]
        seen[:, window:] -= seen[:, :-window].copy()
    # occurrences of a at positions of b, each counting a at j itself: less one per occurrence of b where a = b
    counts[:, grouped.types] = np.add.reduceat(seen[:, grouped.order], grouped.starts, axis=1)
    rows = np.flatnonzero(np.isin(first, grouped.types))
    counts[rows, first[rows]] -= grouped.occurrences[np.searchsorted(grouped.types, first[rows])]
    return counts


def _hits_by_first_token(shared: _Shared) -> int:
    size = shared.size
    step = max(1, _BLOCK // max(len(shared.prediction), len(shared.reference), 1))
    prediction = _Grouped(shared.prediction, size)
    reference = _Grouped(shared.reference, size)
    hits = 0
    for start in range(0, size, step):
        first = np.arange(start, min(start + step, size), dtype=np.int64)
        in_prediction = _counts_by_first(shared.prediction, prediction, first, size, shared.max_skip)
        in_reference = _counts_by_first(shared.reference, reference, first, size, shared.max_skip)
        hits += int(np.minimum(in_prediction, in_reference).sum())
    return hits
