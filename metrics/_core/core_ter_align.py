"""Translation edit rate of two token sequences, with the results of sacreBLEU 2.x's ``lib_ter``.

TER counts the edits (insertions, deletions, substitutions and shifts of word
blocks) that turn a hypothesis into a reference. As in Tercom and sacreBLEU,
shifts are chosen greedily: in each round every admissible block shift is
scored by the edit distance of the shifted hypothesis, the best one (most
edits saved, then longest block, earliest block, earliest target) is applied,
and rounds stop when no shift helps or after 1,000 candidate shifts in all.
Every limit and tie-break is sacreBLEU's: blocks of at most 10 words moved at
most 50 positions, the same candidate order and count, the edit operation
preferences of its trace, and its beam.

sacreBLEU's edit distance is a beam search: only cells within 25 (or more, for
very unequal lengths) of the pseudo-diagonal are computed. Here distances are
computed with the bit-parallel algorithm of Myers (1999) in Hyyrö's
formulation, over the full matrix, and the beam is accounted for exactly:
every path through a cell outside the beam costs at least the cell's distance
from the two corners, so when the full-matrix distance is below the cheapest
such cell (:func:`beam_slack`) the best paths all lie inside the beam, and
distance and trace equal the beam's. Otherwise the beam is computed as
sacreBLEU does (:func:`beam_edit_distance`).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from itertools import accumulate

from .core_process import MIB, bounded_cache

# Tercom's limits, as sacreBLEU applies them.
MAX_SHIFT_SIZE = 10
MAX_SHIFT_DIST = 50
BEAM_WIDTH = 25
MAX_SHIFT_CANDIDATES = 1000

_INFINITY = int(1e16)
# Beam layouts (and their slack) by (hypothesis length, reference length), kept per process.
BEAM_CACHE_BYTES = 16 * MIB

# Edit operations of a trace that rewrites the hypothesis into the reference
# (sacreBLEU's letters): no-op, substitution, insertion of a reference word,
# deletion of a hypothesis word.
OP_NOP = " "
OP_SUB = "s"
OP_INS = "i"
OP_DEL = "d"
_OP_UNDEFINED = "x"


@dataclass(frozen=True, eq=False)
class TerReference:
    """A tokenized reference and its lookup tables: the positions, bit masks and counts of its words.

    Equal (and hashed) by its words alone: the tables are functions of them.
    """

    words: tuple[str, ...]
    positions: dict[str, tuple[int, ...]]
    masks: dict[str, int]
    counts: Counter[str]

    @property
    def length(self) -> int:
        return len(self.words)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TerReference) and self.words == other.words

    def __hash__(self) -> int:
        return hash(self.words)


def ter_reference(words: Sequence[str]) -> TerReference:
    """The lookup tables of one tokenized reference (bit j of a word's mask marks reference position j)."""
    positions: dict[str, list[int]] = {}
    for position, word in enumerate(words):
        positions.setdefault(word, []).append(position)
    masks = {word: sum(1 << position for position in where) for word, where in positions.items()}
    return TerReference(
        tuple(words),
        {word: tuple(where) for word, where in positions.items()},
        masks,
        Counter({word: len(where) for word, where in positions.items()}),
    )


def _beam_size(key: tuple[str, int, int], value: Any) -> int:
    return 200 + (120 * key[1] if key[0] == "rows" else 0)


_BEAMS = bounded_cache(__file__, "mt.ter_beams", BEAM_CACHE_BYTES, _beam_size)


def beam_rows(hypothesis_length: int, reference_length: int) -> tuple[tuple[int, int], ...]:
    """For rows 1..n of the distance matrix, the half-open range of reference positions sacreBLEU computes."""
    return _BEAMS.get(("rows", hypothesis_length, reference_length),
                      lambda: _beam_rows(hypothesis_length, reference_length))


def _beam_rows(hypothesis_length: int, reference_length: int) -> tuple[tuple[int, int], ...]:
    n, m = hypothesis_length, reference_length
    ratio = m / n if n else 1
    width = math.ceil(ratio / 2 + BEAM_WIDTH) if BEAM_WIDTH < ratio / 2 else BEAM_WIDTH
    rows = []
    for i in range(1, n + 1):
        diagonal = math.floor(i * ratio)
        low = max(0, diagonal - width)
        high = m + 1 if i == n else min(m + 1, diagonal + width)
        rows.append((low, high))
    return tuple(rows)


def beam_slack(hypothesis_length: int, reference_length: int) -> int:
    """The least number of edits of any alignment path through a cell outside sacreBLEU's beam.

    A path through cell (i, j) makes at least |i - j| edits before it and
    |(n - i) - (m - j)| after it; an edit distance below this bound is the
    beam's edit distance, reached by the same trace.
    """
    return _BEAMS.get(("slack", hypothesis_length, reference_length),
                      lambda: _beam_slack(hypothesis_length, reference_length))


def _beam_slack(hypothesis_length: int, reference_length: int) -> int:
    n, m = hypothesis_length, reference_length
    slack = _INFINITY
    for i, (low, high) in enumerate(beam_rows(n, m), start=1):
        for first, last in ((0, min(low - 1, m)), (max(high, 0), m)):
            if first > last:
                continue
            for j in {first, last, min(max(i, first), last), min(max(i + m - n, first), last)}:
                slack = min(slack, abs(i - j) + abs((n - i) - (m - j)))
    return slack


def beam_edit_distance(
    hypothesis: Sequence[str], reference: Sequence[str], *, with_trace: bool = True
) -> tuple[int, str]:
    """sacreBLEU's beam edit distance and its trace (operations rewriting the hypothesis into the reference).

    Cells outside the beam are unreachable; ties prefer a no-op or
    substitution, then a deletion, then an insertion, as sacreBLEU's.
    """
    n, m = len(hypothesis), len(reference)
    previous = list(range(m + 1))
    operations = [[OP_INS] * (m + 1)] if with_trace else []
    for i, (low, high) in enumerate(beam_rows(n, m), start=1):
        current = [_INFINITY] * (m + 1)
        row_operations = [_OP_UNDEFINED] * (m + 1) if with_trace else None
        word = hypothesis[i - 1]
        for j in range(low, high):
            if j == 0:
                current[0] = previous[0] + 1
                operation = OP_DEL
            else:
                best, operation = _INFINITY, _OP_UNDEFINED
                if word == reference[j - 1]:
                    cost, substitution = previous[j - 1], OP_NOP
                else:
                    cost, substitution = previous[j - 1] + 1, OP_SUB
                if best > cost:
                    best, operation = cost, substitution
                cost = previous[j] + 1
                if best > cost:
                    best, operation = cost, OP_DEL
                cost = current[j - 1] + 1
                if best > cost:
                    best, operation = cost, OP_INS
                current[j] = best
            if row_operations is not None:
                row_operations[j] = operation
        previous = current
        if with_trace:
            operations.append(row_operations)
    if not with_trace:
        return previous[m], ""
    trace = []
    i, j = n, m
    while i > 0 or j > 0:
        operation = operations[i][j]
        trace.append(operation)
        if operation in (OP_SUB, OP_NOP):
            i -= 1
            j -= 1
        elif operation == OP_INS:
            j -= 1
        elif operation == OP_DEL:
            i -= 1
        else:
            raise RuntimeError(f"ter: the edit distance trace reached an unreachable cell ({i}, {j})")
    return previous[m], "".join(reversed(trace))


# A row of the bit-parallel distance matrix: vertical deltas D[i][j] - D[i][j-1] (+1 in `up`, -1 in `down`,
# bit j-1 for j = 1..m) and horizontal deltas D[i][j] - D[i-1][j] (+1 in `right_up`, -1 in `right_down`).
_Row = tuple[int, int, int, int]


def _with_leading_errors(aligned: list[int], reference_errors: list[int], hypothesis_errors: list[int], i: int,
                         j: int) -> Alignment:
    """The alignment once a trace stops at cell (i, j): the first ``i`` hypothesis and ``j`` reference words are
    errors, those reference words aligned to nothing."""
    hypothesis_errors[:i] = [1] * i
    aligned[:j] = [-1] * j
    reference_errors[:j] = [1] * j
    return aligned, reference_errors, hypothesis_errors


class _Matrix:
    """Bit-parallel rows of the full edit distance matrix of a hypothesis (as word masks) and a reference."""

    __slots__ = ("masks", "rows", "scores", "mask", "top", "length")

    def __init__(self, masks: list[int], reference_length: int) -> None:
        self.length = reference_length
        self.mask = (1 << reference_length) - 1
        self.top = 1 << (reference_length - 1)
        self.masks = masks
        self.rows: list[_Row] = [(self.mask, 0, 0, 0)]
        self.scores = [reference_length]
        self.extend(0)

    def extend(self, start: int) -> None:
        """Recompute rows start+1..n (rows up to ``start`` are kept)."""
        del self.rows[start + 1 :]
        del self.scores[start + 1 :]
        self._run(self.masks, start, keep=True)

    def distance_of(self, masks: list[int], start: int) -> int:
        """Distance of the hypothesis ``masks``, identical to this one's in positions before ``start``."""
        return self._run(masks, start, keep=False)

    def _run(self, masks: list[int], start: int, keep: bool) -> int:
        """The rows of ``masks`` after row ``start``, appended when ``keep``; the last row's distance."""
        rows, scores = self.rows, self.scores
        up, down = rows[start][0], rows[start][1]
        score = scores[start]
        mask, top = self.mask, self.top
        for equal in masks[start:]:
            vertical = equal | down
            horizontal = (((equal & up) + up) ^ up) | equal
            right_up = down | ~(horizontal | up)
            right_down = up & horizontal
            if right_up & top:
                score += 1
            elif right_down & top:
                score -= 1
            shifted_up = (right_up << 1) | 1
            up = ((right_down << 1) | ~(vertical | shifted_up)) & mask
            down = shifted_up & vertical
            if keep:
                rows.append((up, down, right_up, right_down))
                scores.append(score)
        return score

    def alignment(self) -> Alignment:
        """The alignment of the last row's trace, with sacreBLEU's preferences (no-op or substitution, then
        deletion, then insertion) when the trace is followed back from the last cell."""
        rows, masks = self.rows, self.masks
        i, j = len(masks), self.length
        distance = self.scores[i]
        aligned = [0] * j
        reference_errors = [0] * j
        hypothesis_errors = [0] * i
        while i > 0 and j > 0:
            bit = 1 << (j - 1)
            _, _, right_up, right_down = rows[i]
            above = distance - (1 if right_up & bit else -1 if right_down & bit else 0)
            up, down = rows[i - 1][0], rows[i - 1][1]
            diagonal = above - (1 if up & bit else -1 if down & bit else 0)
            if masks[i - 1] & bit:
                if diagonal == distance:
                    i -= 1
                    j -= 1
                    aligned[j] = i
                    continue
            elif diagonal + 1 == distance:
                i -= 1
                j -= 1
                aligned[j] = i
                reference_errors[j] = hypothesis_errors[i] = 1
                distance = diagonal
                continue
            if above + 1 == distance:
                i -= 1
                hypothesis_errors[i] = 1
                distance = above
            else:
                up, down = rows[i][0], rows[i][1]
                distance -= 1 if up & bit else -1 if down & bit else 0
                j -= 1
                aligned[j] = i - 1
                reference_errors[j] = 1
        return _with_leading_errors(aligned, reference_errors, hypothesis_errors, i, j)


# (hypothesis position aligned to each reference position, an error flag per reference position, an error flag
# per hypothesis position), as sacreBLEU's trace_to_alignment gives them.
Alignment = tuple[list[int], list[int], list[int]]


def trace_to_alignment(trace: str) -> Alignment:
    """The alignment of a trace that rewrites the hypothesis into the reference."""
    position_hypothesis = -1
    aligned: list[int] = []
    reference_errors: list[int] = []
    hypothesis_errors: list[int] = []
    for operation in trace:
        if operation == OP_NOP or operation == OP_SUB:
            position_hypothesis += 1
            aligned.append(position_hypothesis)
            error = 0 if operation == OP_NOP else 1
            hypothesis_errors.append(error)
            reference_errors.append(error)
        elif operation == OP_DEL:
            position_hypothesis += 1
            hypothesis_errors.append(1)
        elif operation == OP_INS:
            aligned.append(position_hypothesis)
            reference_errors.append(1)
        else:
            raise ValueError(f"ter: unknown edit operation {operation!r}")
    return aligned, reference_errors, hypothesis_errors


def perform_shift(items: list, start: int, length: int, target: int) -> list:
    """``items`` with the block of ``length`` items at ``start`` moved before position ``target`` (sacreBLEU's)."""
    if target < start:
        return items[:target] + items[start : start + length] + items[target:start] + items[start + length :]
    if target > start + length:
        return items[:start] + items[start + length : target] + items[start : start + length] + items[target:]
    return (
        items[:start]
        + items[start + length : length + target]
        + items[start : start + length]
        + items[length + target :]
    )


def _shift_edits(start: int, length: int, target: int) -> int:
    """At most this many edits turn a sequence into itself with the block shifted (move the block, or the words
    it jumps over): a shift changes the distance to any reference by no more."""
    if target < start:
        jumped = start - target
    elif target > start + length:
        jumped = target - start - length
    else:
        jumped = target - start
    return 2 * min(length, jumped)


class _BeamMatrix:
    """Rows of sacreBLEU's beam edit distance matrix of a hypothesis and a reference (cells outside the beam
    unreachable), for when the full matrix's best paths may leave the beam."""

    __slots__ = ("words", "reference", "bands", "rows")

    def __init__(self, words: list[str], reference: Sequence[str]) -> None:
        self.words = words
        self.reference = reference
        self.bands = beam_rows(len(words), len(reference))
        self.rows = [list(range(len(reference) + 1))]
        self.extend(0)

    def _row(self, previous: list[int], word: str, band: tuple[int, int]) -> list[int]:
        reference = self.reference
        current = [_INFINITY] * len(previous)
        low, high = band
        j = low
        if j == 0:
            current[0] = previous[0] + 1
            j = 1
        for j in range(j, high):
            best = previous[j - 1] if word == reference[j - 1] else previous[j - 1] + 1
            if best > _INFINITY:
                best = _INFINITY
            cost = previous[j] + 1
            if best > cost:
                best = cost
            cost = current[j - 1] + 1
            if best > cost:
                best = cost
            current[j] = best
        return current

    def extend(self, start: int) -> None:
        """Recompute rows start+1..n (rows up to ``start`` are kept)."""
        rows = self.rows
        del rows[start + 1 :]
        for word, band in zip(self.words[start:], self.bands[start:], strict=True):
            rows.append(self._row(rows[-1], word, band))

    def distance_of(self, words: list[str], start: int) -> int:
        """Distance of the hypothesis ``words``, identical to this one's in positions before ``start``."""
        row = self.rows[start]
        for word, band in zip(words[start:], self.bands[start:], strict=True):
            row = self._row(row, word, band)
        return row[-1]

    def alignment(self) -> Alignment:
        """The alignment of the trace, with sacreBLEU's preferences (as :func:`beam_edit_distance`)."""
        rows, words, reference = self.rows, self.words, self.reference
        i, j = len(words), len(reference)
        aligned = [0] * j
        reference_errors = [0] * j
        hypothesis_errors = [0] * i
        while i > 0 and j > 0:
            distance = rows[i][j]
            if distance >= _INFINITY:
                raise RuntimeError(f"ter: the edit distance trace reached an unreachable cell ({i}, {j})")
            equal = words[i - 1] == reference[j - 1]
            if rows[i - 1][j - 1] + (0 if equal else 1) == distance:
                i -= 1
                j -= 1
                aligned[j] = i
                if not equal:
                    reference_errors[j] = hypothesis_errors[i] = 1
            elif rows[i - 1][j] + 1 == distance:
                i -= 1
                hypothesis_errors[i] = 1
            else:
                j -= 1
                aligned[j] = i - 1
                reference_errors[j] = 1
        return _with_leading_errors(aligned, reference_errors, hypothesis_errors, i, j)


class _Hypothesis:
    """The hypothesis being shifted, its distance to the reference and the alignment, beam included."""

    def __init__(self, words: list[str], reference: TerReference) -> None:
        self.reference = reference
        self.words = words
        self.slack = beam_slack(len(words), reference.length)
        get = reference.masks.get
        self.matrix = _Matrix([get(word, 0) for word in words], reference.length)
        self.beam: _BeamMatrix | None = None
        # No order of the words makes fewer edits than the words the reference lacks or has in excess.
        self.floor = max(len(words), reference.length) - sum((Counter(words) & reference.counts).values())

    @property
    def exact(self) -> bool:
        """True when the full-matrix distance (and alignment) is the beam's."""
        return self.matrix.scores[-1] < self.slack

    def _beam(self) -> _BeamMatrix:
        if self.beam is None:
            self.beam = _BeamMatrix(self.words, self.reference.words)
        return self.beam

    def distance(self) -> int:
        if self.exact:
            return self.matrix.scores[-1]
        return self._beam().rows[-1][-1]

    def alignment(self) -> Alignment:
        if self.exact:
            return self.matrix.alignment()
        return self._beam().alignment()

    def full_distance_after_shift(self, start: int, length: int, target: int) -> int:
        """The full-matrix distance of the shifted hypothesis (a lower bound of the beam's)."""
        return self.matrix.distance_of(perform_shift(self.matrix.masks, start, length, target), min(start, target))

    def beam_distance_after_shift(self, start: int, length: int, target: int) -> int:
        """The beam distance of the shifted hypothesis."""
        return self._beam().distance_of(perform_shift(self.words, start, length, target), min(start, target))

    def apply_shift(self, start: int, length: int, target: int) -> None:
        first = min(start, target)
        self.words = perform_shift(self.words, start, length, target)
        self.matrix.masks = perform_shift(self.matrix.masks, start, length, target)
        self.matrix.extend(first)
        if self.beam is not None:
            self.beam.words = self.words
            self.beam.extend(first)


# Ranking of a shift: edits saved, then block length, then earliest block, then earliest target
# (start and target negated). Only shifts that save edits are applied, so the search starts from this bar.
_Rank = tuple[int, int, int, int]
_NO_GAIN: _Rank = (0, MAX_SHIFT_SIZE + 1, 0, 0)


def _best_shift(hypothesis: _Hypothesis, distance: int, checked: int) -> tuple[_Rank, int]:
    """The rank of the best shift that saves edits (or ``_NO_GAIN``) and the candidates checked so far.

    Candidates are enumerated and counted as sacreBLEU's; one whose bound on the edits it can save
    (``_shift_edits``, and the distance above ``floor``) cannot beat the best so far is not scored.
    """
    words = hypothesis.words
    reference = hypothesis.reference
    reference_words = reference.words
    n, m = len(words), reference.length
    aligned, reference_errors, hypothesis_errors = hypothesis.alignment()
    hypothesis_sums = [0, *accumulate(hypothesis_errors)]
    reference_sums = [0, *accumulate(reference_errors)]
    bounded = hypothesis.exact
    slack = hypothesis.slack
    most_saved = distance - hypothesis.floor
    best = _NO_GAIN
    positions = reference.positions
    for start_h in range(n):
        starts_r = positions.get(words[start_h])
        if starts_r is None:
            continue
        if hypothesis_sums[min(start_h + MAX_SHIFT_SIZE, n)] == hypothesis_sums[start_h]:
            continue  # no block starting here holds a hypothesis error: every length would be skipped
        # reference positions more than MAX_SHIFT_DIST before start_h are skipped (as sacreBLEU's, uncounted)
        for start_r in starts_r[bisect_left(starts_r, start_h - MAX_SHIFT_DIST) :]:
            if start_r - start_h > MAX_SHIFT_DIST:
                break
            run = 1
            limit = min(MAX_SHIFT_SIZE, n - start_h, m - start_r)
            while run < limit and words[start_h + run] == reference_words[start_r + run]:
                run += 1
            for length in range(1, run + 1):
                if hypothesis_sums[start_h + length] == hypothesis_sums[start_h]:
                    continue
                if reference_sums[start_r + length] == reference_sums[start_r]:
                    continue
                if start_h <= aligned[start_r] < start_h + length:
                    continue
                previous_target = -1
                for offset in range(-1, length):
                    target = 0 if start_r + offset == -1 else aligned[start_r + offset] + 1
                    if target == previous_target:
                        continue
                    previous_target = target
                    checked += 1
                    if bounded:
                        bound = min(most_saved, _shift_edits(start_h, length, target))
                        if (bound, length, -start_h, -target) <= best:
                            continue
                    cost = hypothesis.full_distance_after_shift(start_h, length, target)
                    if cost >= slack:
                        # the beam may make more edits than the full matrix: score it unless even the full
                        # matrix's distance cannot beat the best
                        if (distance - cost, length, -start_h, -target) <= best:
                            continue
                        cost = hypothesis.beam_distance_after_shift(start_h, length, target)
                    candidate = (distance - cost, length, -start_h, -target)
                    if candidate > best:
                        best = candidate
                if checked >= MAX_SHIFT_CANDIDATES:
                    return best, checked
    return best, checked


def translation_edit_rate(hypothesis: Sequence[str], reference: TerReference | Sequence[str]) -> tuple[int, int]:
    """(number of edits, reference length) of a tokenized hypothesis against one tokenized reference."""
    if not isinstance(reference, TerReference):
        reference = ter_reference(reference)
    if reference.length == 0:
        return len(hypothesis), 0
    state = _Hypothesis(list(hypothesis), reference)
    distance = state.distance()
    shifts = 0
    checked = 0
    while True:
        best, checked = _best_shift(state, distance, checked)
        if checked >= MAX_SHIFT_CANDIDATES or best is _NO_GAIN:
            break
        gain, length, negative_start, negative_target = best
        shifts += 1
        state.apply_shift(-negative_start, length, -negative_target)
        distance = state.distance()
    return shifts + distance, reference.length
