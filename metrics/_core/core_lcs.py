"""Longest common subsequence of token sequences, bit-parallel over Python integers.

The LCS table of ``reference`` (rows) against ``candidate`` (columns) is kept
one row per integer, as in Allison & Dix (1986) and Hyyrö (2004): bit ``j`` of
row ``i`` is 0 exactly where ``table[i][j + 1] = table[i][j] + 1``, so
``table[i][j]`` is the number of zero bits among the low ``j`` bits of row
``i``. One row costs a few big-integer operations instead of a Python loop over
the candidate, which makes the LCS length of two 5,000-token texts a matter of
milliseconds.

:func:`lcs_indices` reads one LCS out of those rows with exactly the walk that
rouge-score's ``_backtrack_norec`` makes over its quadratic table (prefer the
diagonal on a match, then the left cell only when it is strictly larger than
the upper one), so ROUGE-Lsum's union LCS is the same set of reference
positions as rouge-score's, not merely one of the same size. It keeps every
row only while the table is small; for long texts it keeps every k-th row
(k about the square root of the reference length) and recomputes the rows of
one stretch of k at a time as the walk reaches them, so memory grows with
``sqrt(len(reference)) * len(candidate)`` bits instead of their product, for
twice the row computations. Likewise the match masks of a long candidate are
kept only for its frequent tokens; a rare token keeps its positions and its
mask is made when a reference token looks it up, so the masks do not grow
with the candidate's vocabulary times its length.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

MatchMasks = dict[Hashable, int]

# Tables up to this many cells (bits) keep every row for the walk back (a few MiB).
FULL_TABLE_CELLS = 1 << 25
# Candidates from this many tokens keep masks only for tokens occurring at least FREQUENT_TOKEN times.
SPARSE_MASKS_FROM = 4096
FREQUENT_TOKEN = 16


class SparseMasks(dict):
    """The masks of a long candidate: frequent tokens hold their mask, rare ones their positions (``get`` makes
    a rare token's mask when it is looked up)."""

    def __init__(self, positions: Mapping[Hashable, list[int]]) -> None:
        super().__init__()
        self.rare: dict[Hashable, list[int]] = {}
        for token, places in positions.items():
            if len(places) >= FREQUENT_TOKEN:
                mask = 0
                for place in places:
                    mask |= 1 << place
                self[token] = mask
            else:
                self.rare[token] = places

    def get(self, token: Hashable, default: Any = None) -> Any:  # type: ignore[override]
        mask = dict.get(self, token)
        if mask is not None:
            return mask
        places = self.rare.get(token)
        if places is None:
            return default
        mask = 0
        for place in places:
            mask |= 1 << place
        return mask


def match_masks(candidate: Sequence[Hashable]) -> MatchMasks:
    """For each distinct token of ``candidate``, the bitmask of the positions where it occurs."""
    if len(candidate) >= SPARSE_MASKS_FROM:
        positions: dict[Hashable, list[int]] = {}
        for position, token in enumerate(candidate):
            positions.setdefault(token, []).append(position)
        return SparseMasks(positions)
    masks: MatchMasks = {}
    get = masks.get
    for position, token in enumerate(candidate):
        masks[token] = get(token, 0) | (1 << position)
    return masks


def lcs_length(reference: Sequence[Hashable], candidate_masks: Mapping[Hashable, int], candidate_length: int) -> int:
    """Length of the LCS of ``reference`` and the candidate described by its :func:`match_masks`."""
    if not candidate_length or not reference:
        return 0
    full = (1 << candidate_length) - 1
    row = full
    get = candidate_masks.get
    for token in reference:
        matches = get(token)
        if matches:
            matched = row & matches
            row = ((row + matched) | (row - matched)) & full
    return candidate_length - row.bit_count()


def lcs_rows(
    reference: Sequence[Hashable], candidate_masks: Mapping[Hashable, int], candidate_length: int
) -> list[int]:
    """The rows 0..len(reference) of the LCS table in bit-vector form (row 0 is all ones)."""
    full = (1 << candidate_length) - 1
    rows = [full]
    get = candidate_masks.get
    for token in reference:
        rows.append(_next_row(rows[-1], token, get, full))
    return rows


def _next_row(row: int, token: Hashable, get: Any, full: int) -> int:
    matches = get(token)
    if matches:
        matched = row & matches
        return ((row + matched) | (row - matched)) & full
    return row


class _Rows:
    """Rows of the LCS table for the walk back: all of them for small tables; otherwise every ``step``-th
    row, and the rows of the stretch the walk is in, recomputed from the checkpoint before it."""

    def __init__(self, reference: Sequence[Hashable], get: Any, full: int, step: int) -> None:
        self.reference, self.get, self.full, self.step = reference, get, full, step
        self.checkpoints = [full]
        row = full
        for index, token in enumerate(reference, start=1):
            row = _next_row(row, token, get, full)
            if index % step == 0:
                self.checkpoints.append(row)
        self.last = row
        self.block_start = -1
        self.block: list[int] = []

    def __getitem__(self, index: int) -> int:
        if index == len(self.reference):
            return self.last
        start = index - index % self.step
        if start != self.block_start:
            row = self.checkpoints[start // self.step]
            block = [row]
            for token in self.reference[start : min(start + self.step, len(self.reference))]:
                row = _next_row(row, token, self.get, self.full)
                block.append(row)
            self.block_start, self.block = start, block
        return self.block[index - start]


def lcs_indices(
    reference: Sequence[Hashable],
    candidate: Sequence[Hashable],
    candidate_masks: Mapping[Hashable, int],
    *,
    full_table_cells: int = FULL_TABLE_CELLS,
) -> list[int]:
    """Reference positions of one LCS, the one rouge-score's backtracking finds, in decreasing order.

    Tables of more than ``full_table_cells`` cells are walked from checkpoint rows (see the module docstring).
    """
    n = len(candidate)
    m = len(reference)
    if not n or not m:
        return []
    full = (1 << n) - 1
    rows: Any
    if m * n <= full_table_cells:
        rows = lcs_rows(reference, candidate_masks, n)
    else:
        rows = _Rows(reference, candidate_masks.get, full, max(1, math.isqrt(m)))
    remaining = n - rows[m].bit_count()
    i, j = m, n
    found: list[int] = []
    while remaining:
        if reference[i - 1] == candidate[j - 1]:
            i -= 1
            j -= 1
            found.append(i)
            remaining -= 1
        elif (rows[i] >> (j - 1)) & 1 and j - (rows[i - 1] & ((1 << j) - 1)).bit_count() < remaining:
            # table[i][j - 1] == table[i][j] and table[i - 1][j] == table[i][j] - 1: the left cell is larger.
            j -= 1
        else:
            i -= 1
    return found


def union_lcs_counts(
    reference_sentence: Sequence[Hashable], candidate_sentences: Sequence[tuple[Sequence[Hashable], MatchMasks]]
) -> dict[Hashable, int]:
    """Token counts of the union LCS of one reference sentence with every candidate sentence (Lin 2004, 3.2).

    ``candidate_sentences`` holds each candidate sentence with its :func:`match_masks`.
    """
    positions: set[int] = set()
    for candidate, masks in candidate_sentences:
        positions.update(lcs_indices(reference_sentence, candidate, masks))
    counts: dict[Hashable, int] = {}
    for position in positions:
        token = reference_sentence[position]
        counts[token] = counts.get(token, 0) + 1
    return counts
