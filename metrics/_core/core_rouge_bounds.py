"""Resource bounds of the ROUGE family's longest common subsequences: what an alignment costs, and match masks of
bounded memory.

The LCS of two texts is quadratic in time: ROUGE-L aligns the prediction's n tokens with the reference's m tokens
(m x n cells, bit-parallel, 64 cells per machine-word operation); summary-level ROUGE-L (rouge-score's
``rougeLsum``, ROUGE-1.5.5's ``rougeL``) aligns every reference sentence with every prediction sentence and walks
back through each table, one sentence pair at a time, so each pair also costs a fixed amount and a walk as long
as its two sentences. :func:`lcs_cells` counts that work in cells: ``m * n`` for one pair of texts; for sentences
(lengths m_i and n_j), the sum over sentence pairs of ``m_i * n_j + SENTENCE_PAIR_CELLS * (m_i + n_j + 1)``. The
metrics refuse a pair of texts whose cells exceed their ``max_lcs_cells`` option before aligning anything.

Memory grows with the shorter text where only the length is needed (the bit vectors run over the candidate, which
may be either text) and with the candidate sentence where the aligned positions are needed; the candidate's match
masks (one bit vector per distinct token) would grow with its vocabulary times its length, so a long candidate
keeps whole masks only for its most frequent tokens, within ``MASK_BUDGET`` bytes, and makes the mask of any other
token from its positions when the alignment looks it up (:func:`candidate_masks`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from .core_lcs import SPARSE_MASKS_FROM, MatchMasks, match_masks
from .core_process import MIB

# The walk back and the fixed cost of one sentence pair, in cells (fitted to rouge-score's rougeLsum: a pair of
# 1-token sentences costs about as much as 400 cells, a pair of 20-token sentences 6,000).
SENTENCE_PAIR_CELLS = 128
# Bytes of whole masks one long candidate keeps.
MASK_BUDGET = 64 * MIB
# Tokens occurring fewer times than this keep their positions only (their mask is cheap to make).
_FEW = 4


def lcs_cells(reference_tokens: int, prediction_tokens: int, reference_sentences: int | None = None,
              prediction_sentences: int | None = None) -> int:
    """The work of aligning a reference of m tokens with a prediction of n tokens, in cells: ``m * n`` for two
    texts (no sentence counts), or for texts of ``reference_sentences`` and ``prediction_sentences`` sentences, the
    sum over every (reference sentence, prediction sentence) pair of ``m_i * n_j + SENTENCE_PAIR_CELLS * (m_i + n_j
    + 1)``, which is ``m * n + SENTENCE_PAIR_CELLS * (m * S_p + n * S_r + S_r * S_p)``."""
    cells = reference_tokens * prediction_tokens
    if reference_sentences is None or prediction_sentences is None:
        return cells
    return cells + SENTENCE_PAIR_CELLS * (reference_tokens * prediction_sentences
                                          + prediction_tokens * reference_sentences
                                          + reference_sentences * prediction_sentences)


def _mask(places: Sequence[int], length: int) -> int:
    if len(places) < _FEW:
        mask = 0
        for place in places:
            mask |= 1 << place
        return mask
    bits = bytearray((length >> 3) + 1)
    for place in places:
        bits[place >> 3] |= 1 << (place & 7)
    return int.from_bytes(bits, "little")


class BoundedMasks(dict):
    """The match masks of a long candidate within ``budget`` bytes: its most frequent tokens hold their mask; the
    others hold their positions, and ``get`` makes their mask (about ``len(candidate) / 8`` bytes of work)."""

    def __init__(self, candidate: Sequence[Hashable], budget: int = MASK_BUDGET) -> None:
        super().__init__()
        positions: dict[Hashable, list[int]] = {}
        for position, token in enumerate(candidate):
            positions.setdefault(token, []).append(position)
        length = len(candidate)
        kept = budget // ((length >> 3) + 64)
        self.rare: dict[Hashable, list[int]] = {}
        for token, places in sorted(positions.items(), key=lambda item: len(item[1]), reverse=True):
            if len(self) < kept and len(places) >= _FEW:
                self[token] = _mask(places, length)
            else:
                self.rare[token] = places
        self.length = length

    def get(self, token: Hashable, default: Any = None) -> Any:  # type: ignore[override]
        mask = dict.get(self, token)
        if mask is not None:
            return mask
        places = self.rare.get(token)
        return default if places is None else _mask(places, self.length)


def candidate_masks(candidate: Sequence[Hashable]) -> MatchMasks:
    """:func:`core_lcs.match_masks` of a short candidate; :class:`BoundedMasks` of a long one."""
    if len(candidate) < SPARSE_MASKS_FROM:
        return match_masks(candidate)
    return BoundedMasks(candidate)
