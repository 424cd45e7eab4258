"""NLTK's METEOR alignment (``_enum_align_words``) for many (hypothesis, reference) pairs at once.

NLTK aligns one pair in three stages, each on the words the earlier stages left; in each, hypothesis
positions are visited from last to first and each takes the last remaining reference position that
qualifies. In the first two stages (same word; same Porter stem) a position qualifies by one key, so
the stage is a matching by rank: within one pair and one key, the k-th hypothesis position from the end
takes the k-th remaining reference position from the end. That is computed here for every pair of a
batch together, on integer ids with numpy (words and stems interned once per batch, each distinct word
stemmed once). The third stage (a reference stem among the WordNet synonyms of the hypothesis stem) is
greedy: a hypothesis position takes, among its synonyms' remaining positions, the last one, which can
depend on the positions visited before it. A vectorised test finds the pairs where some remaining
hypothesis stem has a synonym among the remaining reference stems; only those pairs run NLTK's loop.

Codes combine (pair, key, rank) into one 64-bit integer; :func:`fits` says whether a batch's sizes allow
it (callers align a batch that does not in smaller ones).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain

import numpy as np

# Codes stay below this bound (int64, with room to spare).
_CODE_BOUND = 1 << 62


def fits(pairs: int, vocabulary: int, longest: int) -> bool:
    """True when the codes of ``pairs`` pairs with at most ``vocabulary`` distinct words, texts of at most
    ``longest`` words, fit."""
    return pairs * max(vocabulary, 1) * (longest + 1) < _CODE_BOUND


class PairAlignment:
    """The alignment of a batch of pairs: per hypothesis word of each pair (pairs in order, words in order),
    its pair, its position and the reference position it is aligned to (-1: none)."""

    __slots__ = ("pair", "position", "target", "count")

    def __init__(self, pair: np.ndarray, position: np.ndarray, target: np.ndarray, count: int) -> None:
        self.pair = pair
        self.position = position
        self.target = target
        self.count = count

    def pairs(self, index: int) -> list[tuple[int, int]]:
        """(hypothesis position, reference position) of pair ``index``, in hypothesis order."""
        selected = (self.pair == index) & (self.target >= 0)
        return list(zip(self.position[selected].tolist(), self.target[selected].tolist(), strict=True))

    def chunks_and_matches(self) -> tuple[list[int], list[int]]:
        """Per pair: NLTK's ``_count_chunks`` (runs of pairs adjacent in both texts, in hypothesis order) and
        the number of aligned words."""
        aligned = self.target >= 0
        pair, position, target = self.pair[aligned], self.position[aligned], self.target[aligned]
        starts = np.ones(len(pair), dtype=bool)
        starts[1:] = (pair[1:] != pair[:-1]) | (position[1:] != position[:-1] + 1) | (target[1:] != target[:-1] + 1)
        chunks = np.bincount(pair[starts], minlength=self.count)
        matches = np.bincount(pair, minlength=self.count)
        return chunks.tolist(), matches.tolist()


class _Side:
    """One side's words, one entry per word of each pair: pair, position, word id, stem id."""

    __slots__ = ("pair", "position", "word", "stem", "occurrence")

    def __init__(self, texts: Sequence[int], starts: np.ndarray, lengths: np.ndarray, words: np.ndarray,
                 stems: np.ndarray, occurrences: np.ndarray) -> None:
        chosen = np.asarray(texts, dtype=np.int64)
        counts = lengths[chosen]
        total = int(counts.sum())
        self.pair = np.repeat(np.arange(len(chosen), dtype=np.int64), counts)
        first = np.repeat(np.cumsum(counts) - counts, counts)
        self.position = np.arange(total, dtype=np.int64) - first
        token = np.repeat(starts[chosen], counts) + self.position
        self.word = words[token]
        self.stem = stems[token]
        self.occurrence = occurrences[token]


def _ranks_from_end(groups: np.ndarray) -> np.ndarray:
    """For each element, how many later elements (in array order) share its group."""
    count = len(groups)
    if not count:
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(groups, kind="stable")
    ordered = groups[order]
    boundary = np.ones(count, dtype=bool)
    boundary[1:] = ordered[1:] != ordered[:-1]
    starts = np.flatnonzero(boundary)
    ends = np.append(starts[1:], count)
    ranks = np.empty(count, dtype=np.int64)
    ranks[order] = np.repeat(ends - 1, ends - starts) - np.arange(count)
    return ranks


def _match_by_rank(hypothesis_codes: np.ndarray, reference_codes: np.ndarray) -> np.ndarray:
    """For each hypothesis code, the index of the reference element with the same code, or -1 (codes of one
    side are distinct)."""
    if not len(reference_codes):
        return np.full(len(hypothesis_codes), -1, dtype=np.int64)
    order = np.argsort(reference_codes)
    ordered = reference_codes[order]
    slots = np.minimum(np.searchsorted(ordered, hypothesis_codes), len(ordered) - 1)
    return np.where(ordered[slots] == hypothesis_codes, order[slots], -1)


def _stage(hypothesis_pair: np.ndarray, hypothesis_key: np.ndarray, hypothesis_rank: np.ndarray,
           reference_pair: np.ndarray, reference_key: np.ndarray, reference_rank: np.ndarray, keys: int,
           width: int) -> np.ndarray:
    """One rank-matching stage: per hypothesis element, the index of the reference element it takes, or -1."""
    hypothesis_codes = (hypothesis_pair * keys + hypothesis_key) * width + hypothesis_rank
    reference_codes = (reference_pair * keys + reference_key) * width + reference_rank
    return _match_by_rank(hypothesis_codes, reference_codes)


def align_pairs(
    texts: Sequence[Sequence[str]],
    hypotheses: Sequence[int],
    references: Sequence[int],
    stems_of: Callable[[list[str]], list[str]],
    synonyms_of: Callable[[list[str]], list[frozenset[str]]] | None,
) -> PairAlignment:
    """NLTK's alignment of each pair (``texts[hypotheses[i]]``, ``texts[references[i]]``) of lowercased words.

    ``stems_of`` gives words' Porter stems; ``synonyms_of`` stems' WordNet synonym names (None: no synonym stage).
    Raises ValueError when the batch is too large for its codes (:func:`fits`).
    """
    count = len(hypotheses)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    if not fits(count, int(lengths.sum()), int(lengths.max(initial=0))):
        raise ValueError(
            f"meteor: {count} pairs of {int(lengths.sum())} words (longest text {int(lengths.max())}) are too many to "
            "align in one batch; align fewer pairs at a time"
        )
    starts = np.cumsum(lengths) - lengths
    all_words = list(chain.from_iterable(texts))
    vocabulary = list(dict.fromkeys(all_words))
    word_index = dict(zip(vocabulary, range(len(vocabulary))))
    words = np.fromiter(map(word_index.__getitem__, all_words), dtype=np.int64, count=len(all_words))
    stem_names = stems_of(vocabulary)
    stem_index = dict(zip(dict.fromkeys(stem_names), range(len(stem_names))))
    stem_of_word = np.fromiter(map(stem_index.__getitem__, stem_names), dtype=np.int64, count=len(vocabulary))
    stems = stem_of_word[words]
    # Stage 1's ranks depend on the text alone: a word's occurrences after this one in the same text.
    occurrences = _ranks_from_end(np.repeat(np.arange(len(texts), dtype=np.int64), lengths) * len(vocabulary) + words)
    width = int(lengths.max(initial=0)) + 1
    keys = max(len(vocabulary), 1)
    hypothesis = _Side(hypotheses, starts, lengths, words, stems, occurrences)
    reference = _Side(references, starts, lengths, words, stems, occurrences)
    target = np.full(len(hypothesis.pair), -1, dtype=np.int64)
    used = np.zeros(len(reference.pair), dtype=bool)

    # Stage 1, exact words.
    taken = _stage(hypothesis.pair, hypothesis.word, hypothesis.occurrence,
                   reference.pair, reference.word, reference.occurrence, keys, width)
    found = taken >= 0
    target[found] = reference.position[taken[found]]
    used[taken[found]] = True

    # Stage 2, stems, on the words left.
    left = np.flatnonzero(~found)
    free = np.flatnonzero(~used)
    if len(left) and len(free):
        left_groups = hypothesis.pair[left] * keys + hypothesis.stem[left]
        free_groups = reference.pair[free] * keys + reference.stem[free]
        taken = _match_by_rank(left_groups * width + _ranks_from_end(left_groups),
                               free_groups * width + _ranks_from_end(free_groups))
        found = taken >= 0
        target[left[found]] = reference.position[free[taken[found]]]
        used[free[taken[found]]] = True
        left = left[~found]
        free = np.flatnonzero(~used)

    if synonyms_of is not None and len(left) and len(free):
        _synonym_stage(hypothesis, reference, left, free, target, list(stem_index), synonyms_of, keys)
    return PairAlignment(hypothesis.pair, hypothesis.position, target, count)


def _synonym_stage(hypothesis: _Side, reference: _Side, left: np.ndarray, free: np.ndarray, target: np.ndarray,
                   stem_list: list[str], synonyms_of: Callable[[list[str]], list[frozenset[str]]], keys: int) -> None:
    """Stage 3 in place on ``target``: NLTK's loop over the hypothesis words left that have a synonym of their stem
    among the stems of their pair's reference words left, on those reference words (the others can take nothing:
    the words left only ever shrink)."""
    left_stems = hypothesis.stem[left]
    distinct = np.unique(left_stems)
    names = dict(zip(distinct.tolist(), synonyms_of([stem_list[stem] for stem in distinct.tolist()])))
    free_stems = np.unique(reference.stem[free]).tolist()
    free_index = dict(zip([stem_list[stem] for stem in free_stems], free_stems))
    known = frozenset(free_index)
    targets = [[free_index[name] for name in synonyms & known] for synonyms in names.values()]
    sizes = np.fromiter(map(len, targets), dtype=np.int64, count=len(targets))
    flat = np.fromiter(chain.from_iterable(targets), dtype=np.int64, count=int(sizes.sum()))
    slot = np.searchsorted(distinct, left_stems)
    repeat = sizes[slot]
    # One candidate per (hypothesis word left, synonym stem among the reference words left): its pair's code.
    element = np.repeat(np.arange(len(left), dtype=np.int64), repeat)
    first = np.repeat(np.cumsum(repeat) - repeat, repeat)
    offsets = np.repeat((np.cumsum(sizes) - sizes)[slot], repeat)
    candidates = hypothesis.pair[left][element] * keys + flat[offsets + np.arange(len(element), dtype=np.int64) - first]
    free_codes = reference.pair[free] * keys + reference.stem[free]
    hits = _member(candidates, np.unique(free_codes))
    if not hits.any():
        return
    left = left[np.unique(element[hits])]
    free = free[_member(free_codes, np.unique(candidates[hits]))]
    hypothesis_runs = _runs(hypothesis.pair[left])
    reference_runs = _runs(reference.pair[free])
    left_stems_list = hypothesis.stem[left].tolist()
    free_positions, free_stems_list = reference.position[free].tolist(), reference.stem[free].tolist()
    for pair, (start, end) in hypothesis_runs.items():
        available: dict[str, list[int]] = {}
        low, high = reference_runs[pair]
        for index in range(low, high):
            available.setdefault(stem_list[free_stems_list[index]], []).append(free_positions[index])
        for index in range(end - 1, start - 1, -1):
            position = _greedy_synonym(names[left_stems_list[index]], available)
            if position >= 0:
                target[left[index]] = position
                if not available:
                    break


def _member(values: np.ndarray, ordered: np.ndarray) -> np.ndarray:
    """Whether each value is in ``ordered`` (sorted, non-empty)."""
    slots = np.minimum(np.searchsorted(ordered, values), len(ordered) - 1)
    return ordered[slots] == values


def _runs(pairs: np.ndarray) -> dict[int, tuple[int, int]]:
    """For a sorted array of pair indices, each pair's (start, end) slice."""
    values, starts = np.unique(pairs, return_index=True)
    ends = np.append(starts[1:], len(pairs))
    return dict(zip(values.tolist(), zip(starts.tolist(), ends.tolist(), strict=True), strict=True))


def _greedy_synonym(names: frozenset[str], available: dict[str, list[int]]) -> int:
    """NLTK's synonym step for one hypothesis word: the last remaining reference position whose stem is among
    ``names`` (the synonyms of the word's stem), removed from ``available`` (-1: none). NLTK adds the stem
    itself to its synonyms, but stage 2 left no reference position with the stem of a word still unaligned."""
    if names.isdisjoint(available):
        return -1
    best = max(names.intersection(available), key=lambda candidate: available[candidate][-1])
    positions = available[best]
    position = positions.pop()
    if not positions:
        del available[best]
    return position
