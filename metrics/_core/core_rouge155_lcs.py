"""ROUGE-1.5.5's LCS and weighted LCS tables, for many sentence pairs at once, and the hits they give.

For one model (reference) sentence and one peer (prediction) sentence, ROUGE-1.5.5.pl fills the table

    c[i][j] = c[i-1][j-1] + f(k+1) - f(k)      if model[i] == peer[j]   (k = length of the run ending at i-1, j-1)
    c[i][j] = c[i-1][j] if c[i-1][j] >= c[i][j-1] else c[i][j-1]        otherwise

with f(k) = k ** weight (weight 1 gives the plain LCS of ROUGE-L, 1.2 the WLCS of ``-w 1.2``), then walks back
from the corner: diagonal on a match, up when the upper cell is at least the left one, else left; every
diagonal step marks its model position. On a match the diagonal is taken even where a neighbour is larger
(possible for weight > 1), and ``c + f(k+1) - f(k)`` is evaluated left to right; both are kept here, so ties
are broken on the same floating-point values as in Perl.

:func:`mark_union` computes the marks of many pairs with numpy: pairs of similar shape are stacked and each
table row is computed for the whole stack at once. Along a row, a cell is the running maximum of the upper
cells since the last match, restarted at the match's own value; for weight 1 a match's value is never below
that maximum (a property of the LCS table) so a plain running maximum suffices, and for other weights rows
where a match falls below it are recomputed with a maximum-accumulate of (segment, value) keys compared
lexicographically. The walk back runs for the whole stack step by step, or pair by pair for a stack of a few
pairs (long sentences). :func:`sentence_hits` turns the
marks of one model sentence into ROUGE-L or ROUGE-W hits with the script's unigram clipping.

Long sentence pairs of ROUGE-L (more than ``BIT_PARALLEL_CELLS`` cells) are aligned with the bit-parallel LCS of
``core_lcs`` instead, whose walk back is the same (diagonal on a match, up unless the left cell is strictly
larger) and whose memory grows with the square root of the table for long texts, so two texts of 100,000
characters on one line take seconds, not a quadratic table. ROUGE-W has no such shortcut (its weighted table
is quadratic in time and memory, as in ROUGE-1.5.5.pl); a pair above ``MAX_WEIGHTED_CELLS`` cells is refused
with an error that says so, rather than exhausting memory.
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence

import numpy as np

from .core_lcs import lcs_indices, match_masks

_BUCKET = 8
_MAX_STACK = 8192
# A stack of at most this many pairs is walked back one pair at a time in Python (~0.1 us a step), a larger one
# one step of all its pairs at a time in numpy (~10 us a step, whatever the number of pairs).
_WALK_EACH_PAIR_UP_TO = 64
_MAX_CELLS = 1 << 24  # int8 directions kept for one stack: 16 MiB
_UP, _LEFT, _DIAGONAL = 1, 2, 0
# ROUGE-L pairs with more cells than this use the bit-parallel LCS (one pair at a time, Python big integers).
BIT_PARALLEL_CELLS = 1 << 16
# ROUGE-W pairs with more cells than this are refused (one int8 direction per cell: 256 MiB).
MAX_WEIGHTED_CELLS = 1 << 28


def weight_powers(weight: float, longest: int) -> np.ndarray:
    """f(k) = k ** weight for k = 0..longest + 1, computed with C's pow as Perl's ``**`` does."""
    return np.array([float(k) ** weight for k in range(longest + 2)], dtype=np.float64)


def _gather(flat: np.ndarray, starts: np.ndarray, lengths: np.ndarray, width: int, pad: int) -> np.ndarray:
    columns = np.arange(width)
    inside = columns[None, :] < lengths[:, None]
    index = np.where(inside, starts[:, None] + columns[None, :], 0)
    return np.where(inside, flat[index], pad)


def _stack_marks(
    model_ids: np.ndarray, model_lengths: np.ndarray, peer_ids: np.ndarray, peer_lengths: np.ndarray,
    powers: np.ndarray, plain: bool,
) -> np.ndarray:
    """Marked model positions (count, rows) of a stack of padded pairs."""
    count, rows = model_ids.shape
    columns = peer_ids.shape[1]
    directions = np.empty((count, rows, columns), dtype=np.int8)
    previous = np.zeros((count, columns + 1), dtype=np.float64)
    current = np.zeros((count, columns + 1), dtype=np.float64)
    previous_run = np.zeros((count, columns + 1), dtype=np.int64)
    current_run = np.zeros((count, columns + 1), dtype=np.int64)
    for i in range(rows):
        match = peer_ids == model_ids[:, i : i + 1]
        up = previous[:, 1:]
        values = up.copy()
        hit_pairs, hit_columns = np.nonzero(match)
        if len(hit_pairs):
            run = previous_run[hit_pairs, hit_columns]
            values[hit_pairs, hit_columns] = (previous[hit_pairs, hit_columns] + powers[run + 1]) - powers[run]
        row = current[:, 1:]
        np.maximum.accumulate(values, axis=1, out=row)
        if not plain and len(hit_pairs):
            below = row[hit_pairs, hit_columns] > values[hit_pairs, hit_columns]
            if below.any():
                redo = np.unique(hit_pairs[below])
                keys = np.empty((len(redo), columns), dtype=np.complex128)
                keys.real = np.cumsum(match[redo], axis=1)
                keys.imag = values[redo]
                row[redo] = np.maximum.accumulate(keys, axis=1).imag
        step = directions[:, i, :]
        np.less(up, current[:, :-1], out=step, casting="unsafe")
        step += _UP
        step[match] = _DIAGONAL
        current_run[:, 1:] = 0
        if len(hit_pairs):
            current_run[hit_pairs, hit_columns + 1] = previous_run[hit_pairs, hit_columns] + 1
        previous, current = current, previous
        previous_run, current_run = current_run, previous_run

    if count > _WALK_EACH_PAIR_UP_TO:
        return _walk_stack(directions, model_lengths, peer_lengths)
    return _walk_each_pair(directions, model_lengths, peer_lengths)


def _walk_stack(directions: np.ndarray, model_lengths: np.ndarray, peer_lengths: np.ndarray) -> np.ndarray:
    """Marked model positions (count, rows) of the walks back, one step of every pair at a time."""
    count, rows, _ = directions.shape
    marks = np.zeros((count, rows), dtype=bool)
    i, j = model_lengths.copy(), peer_lengths.copy()
    stack = np.arange(count)
    while True:
        active = np.flatnonzero((i > 0) & (j > 0))
        if not len(active):
            break
        row, column = i[active] - 1, j[active] - 1
        step = directions[active, row, column]
        diagonal = step == _DIAGONAL
        marks[stack[active[diagonal]], row[diagonal]] = True
        i[active[step != _LEFT]] -= 1
        j[active[step != _UP]] -= 1
    return marks


def _walk_each_pair(directions: np.ndarray, model_lengths: np.ndarray, peer_lengths: np.ndarray) -> np.ndarray:
    """:func:`_walk_stack`'s marks, each pair's walk in Python over its table's bytes."""
    count, rows, columns = directions.shape
    marks = np.zeros((count, rows), dtype=bool)
    for pair in range(count):
        cells = directions[pair].tobytes()
        i, j = int(model_lengths[pair]), int(peer_lengths[pair])
        marked = []
        while i > 0 and j > 0:
            step = cells[(i - 1) * columns + j - 1]
            if step == _DIAGONAL:
                marked.append(i - 1)
            if step != _LEFT:
                i -= 1
            if step != _UP:
                j -= 1
        marks[pair, marked] = True
    return marks


def mark_union(
    flat: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    model_sentences: np.ndarray,
    peer_sentences: np.ndarray,
    weight: float,
) -> np.ndarray:
    """Marks of many (model sentence, peer sentence) pairs, OR-ed per model token.

    Sentences are slices ``flat[starts[s] : starts[s] + lengths[s]]`` of token ids; pair k aligns sentence
    ``model_sentences[k]`` (rows) with ``peer_sentences[k]`` (columns). Returns one flag per position of
    ``flat``: true where some pair's walk marked that model token.
    """
    marked = np.zeros(len(flat), dtype=bool)
    model_lengths, peer_lengths = lengths[model_sentences], lengths[peer_sentences]
    keep = np.flatnonzero((model_lengths > 0) & (peer_lengths > 0))
    if not len(keep):
        return marked
    plain = weight == 1
    cells = model_lengths[keep] * peer_lengths[keep]
    if plain:
        long_pairs = cells > BIT_PARALLEL_CELLS
        if long_pairs.any():
            _mark_long_pairs(flat, starts, lengths, model_sentences[keep[long_pairs]], peer_sentences[keep[long_pairs]],
                             marked)
            keep = keep[~long_pairs]
            if not len(keep):
                return marked
    elif cells.max() > MAX_WEIGHTED_CELLS:
        worst = keep[int(np.argmax(cells))]
        raise ValueError(
            f"rouge155: rougeW aligns every reference sentence with every prediction sentence in a table of "
            f"their lengths' product (quadratic, as in ROUGE-1.5.5.pl); a reference sentence of "
            f"{int(model_lengths[worst])} tokens against a prediction sentence of {int(peer_lengths[worst])} tokens "
            f"needs more than {MAX_WEIGHTED_CELLS:,} cells. Put one sentence per line, or leave rougeW out"
        )
    powers = weight_powers(weight, int(max(model_lengths[keep].max(), peer_lengths[keep].max())))
    row_bucket = -(-model_lengths[keep] // _BUCKET)
    column_bucket = -(-peer_lengths[keep] // _BUCKET)
    order = np.lexsort((column_bucket, row_bucket))
    keys = row_bucket[order] * (int(column_bucket.max()) + 1) + column_bucket[order]
    bounds = np.flatnonzero(np.diff(keys)) + 1
    for group in np.split(keep[order], bounds):
        rows = int(model_lengths[group].max())
        columns = int(peer_lengths[group].max())
        per_stack = max(1, min(_MAX_STACK, _MAX_CELLS // (rows * columns)))
        for start in range(0, len(group), per_stack):
            pairs = group[start : start + per_stack]
            model, peer = model_sentences[pairs], peer_sentences[pairs]
            pair_marks = _stack_marks(
                _gather(flat, starts[model], lengths[model], rows, -1),
                lengths[model],
                _gather(flat, starts[peer], lengths[peer], columns, -2),
                lengths[peer],
                powers,
                plain,
            )
            hit_pairs, hit_rows = np.nonzero(pair_marks)
            marked[starts[model][hit_pairs] + hit_rows] = True
    return marked


def _mark_long_pairs(
    flat: np.ndarray, starts: np.ndarray, lengths: np.ndarray, model_sentences: np.ndarray,
    peer_sentences: np.ndarray, marked: np.ndarray,
) -> None:
    """ROUGE-L marks of long pairs, one pair at a time with the bit-parallel LCS (ROUGE-1.5.5's walk back)."""
    order = np.argsort(peer_sentences, kind="stable")  # each peer sentence's masks are made once
    current, tokens, peer_masks = -1, [], {}
    for model, peer in zip(model_sentences[order].tolist(), peer_sentences[order].tolist(), strict=True):
        if peer != current:
            current = peer
            tokens = flat[starts[peer] : starts[peer] + lengths[peer]].tolist()
            peer_masks = match_masks(tokens)
        reference = flat[starts[model] : starts[model] + lengths[model]].tolist()
        positions = lcs_indices(reference, tokens, peer_masks)
        if positions:
            marked[starts[model] + np.array(positions, dtype=np.int64)] = True


def sentence_hits(
    sentence: Sequence[str],
    marked: Sequence[bool],
    model_counts: MutableMapping[str, int],
    peer_counts: MutableMapping[str, int],
    weight: float | None,
    hits: float = 0,
) -> float:
    """``hits`` plus the hits of one model sentence from its marked positions (the union over the peer's sentences).

    A marked token counts only while both unigram counts of it are positive, and uses one of each (so a
    summary's LCS hits never exceed its unigram hits). With ``weight`` (ROUGE-W) a run of counted
    consecutive marks of length k adds k ** weight, added when the next position is unmarked or at the end of
    the sentence, as ROUGE-1.5.5 does (a run whose last mark is not counted is carried on, or lost at the end).
    Without ``weight`` (ROUGE-L) each counted mark adds 1. Additions continue the caller's running total, in
    the script's order, so floating-point sums are the same.
    """
    run = 0
    length = len(sentence)
    for position in [position for position, flag in enumerate(marked) if flag]:
        token = sentence[position]
        if model_counts.get(token, 0) > 0 and peer_counts.get(token, 0) > 0:
            if weight is None:
                hits += 1
            else:
                run += 1
                if position + 1 < length and not marked[position + 1]:
                    hits += float(run) ** weight
                    run = 0
                elif position + 1 == length:
                    hits += float(run) ** weight
                    run = 0
            model_counts[token] -= 1
            peer_counts[token] -= 1
    return hits
