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
positions as rouge-score's, not merely one of the same size.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

MatchMasks = dict[Hashable, int]


def match_masks(candidate: Sequence[Hashable]) -> MatchMasks:
    """For each distinct token of ``candidate``, the bitmask of the positions where it occurs."""
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
    row = full
    rows = [row]
    get = candidate_masks.get
    for token in reference:
        matches = get(token)
        if matches:
            matched = row & matches
            row = ((row + matched) | (row - matched)) & full
        rows.append(row)
    return rows


def lcs_indices(
    reference: Sequence[Hashable], candidate: Sequence[Hashable], candidate_masks: Mapping[Hashable, int]
) -> list[int]:
    """Reference positions of one LCS, the one rouge-score's backtracking finds, in decreasing order."""
    n = len(candidate)
    if not n or not reference:
        return []
    full = (1 << n) - 1
    row = full
    rows = [row]
    append = rows.append
    get = candidate_masks.get
    for token in reference:
        matches = get(token)
        if matches:
            matched = row & matches
            row = ((row + matched) | (row - matched)) & full
        append(row)
    remaining = n - row.bit_count()
    i, j = len(reference), n
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
