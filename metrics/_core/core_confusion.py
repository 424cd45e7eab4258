"""Confusion counts for every classification metric: labels checked once, cells counted in one bincount pass.

Class labels (integers or strings, never both) are checked and turned into one
numpy array per argument. The (reference, prediction) pair of each example is
mapped to one cell code and counted with a single ``numpy.bincount``: integer
labels in a small range are used as codes directly, without a sort; other
labels are first mapped to positions in the sorted set of labels present in
either argument (the classes scikit-learn's metrics see). Only the cells that
occur are kept, so a thousand classes cost what their occurring pairs cost.

Weighted cells hold exact sums (``core_stats.exact_group_sums``): the correctly
rounded sum of the weights of the examples in the cell, and residual floats
whose sum with it is the exact sum (the convention of ``core_stats``
``keyed_fsum`` fields), so counts made from shards merge to the same bits as
one pass over every example. Multi-label indicator rows are packed into bits
once and counted per label column (the four (reference, prediction) cells of
each column, from byte bincounts) and per example (true positives, predicted
labels, true labels, from popcounts).
"""

from __future__ import annotations

import array as array_module
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from .core_stats import exact_column_sums, exact_group_sums

# Dense bincount tables up to this many cells (or the number of examples, if larger); sparse beyond.
_DENSE_CELLS = 1 << 20


def _type_name(value: Any) -> str:
    return type(value).__name__


def _first_bad(values: Sequence[Any], ok: Any) -> int:
    for index, value in enumerate(values):
        if not ok(value):
            return index
    return -1


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer, np.bool_))


def _is_integral_float(value: Any) -> bool:
    return isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer()


def _describe_list_problem(metric: str, argument: str, values: Sequence[Any]) -> Exception:
    """The error for the first label of ``values`` that is neither an integer nor a string like the first."""
    first = values[0]
    if isinstance(first, (str, np.str_)):
        index = _first_bad(values, lambda value: isinstance(value, (str, np.str_)))
        expected = "a string label like the others"
    else:
        index = _first_bad(values, lambda value: _is_int(value) or _is_integral_float(value))
        expected = "an integer label like the others" if index else "an integer or string label"
    value = values[index]
    if isinstance(value, (list, tuple, np.ndarray)):
        return ValueError(
            f"{metric}: `{argument}[{index}]` is a sequence; this configuration takes one label per example "
            f"(use the 'multilabel' configuration for rows of 0/1 indicators)"
        )
    return ValueError(
        f"{metric}: `{argument}[{index}]` must be {expected}, got {_type_name(value)} ({value!r:.60}); "
        f"labels are integers or strings, never both"
    )


def _as_sequence(metric: str, argument: str, values: Any) -> Any:
    if values is None:
        raise TypeError(f"{metric}: `{argument}` is None; pass one label per example")
    if isinstance(values, (str, bytes, Mapping)):
        raise TypeError(f"{metric}: `{argument}` must be a list of labels, one per example, got {_type_name(values)}")
    if hasattr(values, "detach") and hasattr(values, "cpu"):  # a torch tensor
        values = values.detach().cpu().numpy()
    if not isinstance(values, np.ndarray) and not (hasattr(values, "__len__") and hasattr(values, "__getitem__")):
        raise TypeError(f"{metric}: `{argument}` must be a list of labels, one per example, got {_type_name(values)}")
    if len(values) == 0:
        raise ValueError(f"{metric}: `{argument}` is empty; the score of an empty corpus is undefined")
    return values


def _integral(metric: str, argument: str, array: np.ndarray) -> np.ndarray:
    """A float array of whole numbers as int64; anything else is an error naming the first bad index."""
    bad = ~np.isfinite(array) | (array != np.floor(array))
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        where = "".join(f"[{i}]" for i in index)
        raise ValueError(
            f"{metric}: `{argument}{where}` is {array[index].item()!r}; class labels must be integers or strings "
            f"(a continuous value is a regression target, not a label)"
        )
    return array.astype(np.int64)


def label_array(metric: str, argument: str, values: Any) -> np.ndarray:
    """One label per example as a 1-D array: int64 for integer labels (whole floats and bools included),
    unicode for string labels; a mix of the two, None, or a continuous value is an error naming the index."""
    values = _as_sequence(metric, argument, values)
    if isinstance(values, (list, tuple)) and isinstance(values[0], int):
        try:  # strict: floats, strings and None are refused, and then found below
            return np.frombuffer(array_module.array("q", values), dtype=np.int64)
        except (TypeError, OverflowError):
            pass
    if isinstance(values, np.ndarray):
        array = values
    else:
        try:
            array = np.asarray(values)
        except (ValueError, TypeError):
            array = np.empty(len(values), dtype=object)
            array[:] = [value for value in values]
    if array.ndim != 1:
        if array.ndim == 2 and array.dtype != object:
            raise ValueError(
                f"{metric}: `{argument}[0]` is a sequence; this configuration takes one label per example "
                f"(use the 'multilabel' configuration for rows of 0/1 indicators)"
            )
        array = np.empty(len(values), dtype=object)
        array[:] = [value for value in values]
    kind = array.dtype.kind
    if kind in "iu":
        return array.astype(np.int64, copy=False)
    if kind == "b":
        return array.astype(np.int64)
    if kind == "f":
        return _integral(metric, argument, array)
    if kind == "U":
        if not isinstance(values, np.ndarray) and not all(isinstance(value, str) for value in values):
            raise _describe_list_problem(metric, argument, list(values))
        return array
    listed = array.tolist()
    if all(isinstance(value, (str, np.str_)) for value in listed):
        return np.asarray([str(value) for value in listed])
    if all(_is_int(value) for value in listed):
        index = _first_bad(listed, lambda value: -(1 << 63) <= int(value) < 1 << 63)
        if index >= 0:
            raise ValueError(
                f"{metric}: `{argument}[{index}]` is {listed[index]}; integer labels must fit in 64 bits"
            )
        return np.asarray([int(value) for value in listed], dtype=np.int64)
    raise _describe_list_problem(metric, argument, listed)


def _rows_as_bytes(values: Sequence[Any]) -> np.ndarray | None:
    """Lists of small non-negative integers (one list per row, all of one width) as a uint8 matrix; None when
    they are not (the general path then finds and names the problem)."""
    first = values[0]
    if not isinstance(first, (list, tuple)) or not first:
        return None
    width = len(first)
    try:
        flat = bytes(chain.from_iterable(values))
    except (TypeError, ValueError):
        return None
    if len(flat) != len(values) * width or any(len(row) != width for row in values):
        return None
    return np.frombuffer(flat, dtype=np.uint8).reshape(len(values), width)


def indicator_matrix(metric: str, argument: str, values: Any) -> np.ndarray:
    """One row of 0/1 label indicators per example, every row of one width, as a 2-D array of 0/1 values
    (bool or an integer type; nonzero means the label is present)."""
    values = _as_sequence(metric, argument, values)
    array = None if isinstance(values, np.ndarray) else _rows_as_bytes(values)
    if array is None:
        try:
            array = values if isinstance(values, np.ndarray) else np.asarray(values)
        except (ValueError, TypeError):
            array = None
    if array is None or array.dtype == object or array.ndim != 2:
        rows = list(values)
        for index, row in enumerate(rows):
            if isinstance(row, (str, bytes)) or not hasattr(row, "__len__"):
                raise ValueError(
                    f"{metric}: `{argument}[{index}]` must be a row of 0/1 label indicators (the 'multilabel' "
                    f"configuration), got {_type_name(row)} ({row!r:.60})"
                )
        width = len(rows[0])
        index = _first_bad(rows, lambda row: len(row) == width)
        if index >= 0:
            raise ValueError(
                f"{metric}: `{argument}[{index}]` has {len(rows[index])} label indicators but `{argument}[0]` has "
                f"{width}; every row needs one 0/1 indicator per label"
            )
        raise ValueError(f"{metric}: `{argument}` must hold rows of 0/1 integers, got {array!r:.80}")
    if array.shape[1] == 0:
        raise ValueError(f"{metric}: `{argument}` rows are empty; each row needs one 0/1 indicator per label")
    if array.dtype.kind == "b":
        return array
    if array.dtype.kind not in "iuf":
        raise ValueError(f"{metric}: `{argument}` must hold rows of 0/1 integers, got values of type {array.dtype}")
    if array.min() < 0 or array.max() > 1 or (array.dtype.kind == "f" and not np.all(array == np.floor(array))):
        bad = (array != 0) & (array != 1)
        row, column = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"{metric}: `{argument}[{row}][{column}]` is {array[row, column].item()!r}; multi-label rows hold 0/1 "
            f"indicators (one column per label)"
        )
    return array.astype(np.uint8) if array.dtype.kind == "f" else array


def weight_array(metric: str, sample_weight: Any, size: int) -> np.ndarray | None:
    """Per-example weights as float64 (None when not given): finite, one per example.

    Weights that are all zero are allowed here (a shard may hold only such examples); the metrics reject a
    corpus without any non-zero weight when they score it."""
    if sample_weight is None:
        return None
    if isinstance(sample_weight, (str, bytes, Mapping)) or not hasattr(sample_weight, "__len__"):
        raise TypeError(
            f"{metric}: `sample_weight` must be a list of numbers, one per example, got {_type_name(sample_weight)}"
        )
    if hasattr(sample_weight, "detach"):
        sample_weight = sample_weight.detach().cpu().numpy()
    try:
        weights = np.asarray(sample_weight, dtype=np.float64)
    except (ValueError, TypeError):
        listed = list(sample_weight)
        index = _first_bad(listed, lambda value: isinstance(value, (int, float, np.number)))
        raise TypeError(
            f"{metric}: `sample_weight[{max(index, 0)}]` must be a number, got "
            f"{_type_name(listed[max(index, 0)])} ({listed[max(index, 0)]!r:.60})"
        ) from None
    if weights.ndim != 1:
        raise ValueError(f"{metric}: `sample_weight` must be one number per example, got shape {weights.shape}")
    if len(weights) != size:
        raise ValueError(
            f"{metric}: got {size} examples but {len(weights)} values in `sample_weight`; pass one weight per example"
        )
    bad = ~np.isfinite(weights)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{metric}: `sample_weight[{index}]` is {weights[index]}; every weight must be finite")
    with np.errstate(over="ignore"):
        magnitude = float(np.sum(np.abs(weights)))
    if not math.isfinite(magnitude):
        raise ValueError(f"{metric}: the sum of `sample_weight` overflows; scale the weights down")
    return weights


def check_pair(metric: str, references: np.ndarray, predictions: np.ndarray) -> None:
    """References and predictions of the same length and the same label kind (integers or strings)."""
    if len(references) != len(predictions):
        raise ValueError(
            f"{metric}: got {len(predictions)} predictions but {len(references)} references; "
            f"pass one reference per prediction"
        )
    if (references.dtype.kind == "U") != (predictions.dtype.kind == "U"):
        kinds = {True: "strings", False: "integers"}
        raise ValueError(
            f"{metric}: `references` are {kinds[references.dtype.kind == 'U']} but `predictions` are "
            f"{kinds[predictions.dtype.kind == 'U']}; labels are integers or strings, never both"
        )
    if references.ndim == 2 and references.shape[1] != predictions.shape[1]:
        raise ValueError(
            f"{metric}: `references` rows have {references.shape[1]} label indicators but `predictions` rows "
            f"have {predictions.shape[1]}; every row needs one indicator per label"
        )


def exact_sum(weights: np.ndarray | None, size: int) -> tuple[float, list[float]]:
    """Exact sum of the weights (``size`` when unweighted), as a correctly rounded float and residuals."""
    if weights is None:
        return float(size), []
    return exact_column_sums([weights])[0]


@dataclass(frozen=True)
class CellCounts:
    """The occurring cells of a confusion matrix (rows: references, columns: predictions), sparse.

    ``labels`` are the sorted labels present in either argument; cell ``i`` is
    (``labels[true_index[i]]``, ``labels[pred_index[i]]``), seen
    ``occurrences[i]`` times with weights summing exactly to
    ``weights[i] + sum(residuals.get(i, []))``.
    """

    labels: np.ndarray
    true_index: np.ndarray
    pred_index: np.ndarray
    occurrences: np.ndarray
    weights: np.ndarray
    residuals: dict[int, list[float]]

    def keyed(self) -> tuple[dict[tuple[Any, Any], float], dict[tuple[Any, Any], list[float]]]:
        """Cells as {(reference label, predicted label): weight} and the residuals of inexact cells."""
        labels = self.labels.tolist()
        keys = [(labels[t], labels[p]) for t, p in zip(self.true_index.tolist(), self.pred_index.tolist(), strict=True)]
        cells = dict(zip(keys, self.weights.tolist(), strict=True))
        return cells, {keys[index]: residual for index, residual in self.residuals.items()}


def count_codes(
    codes: np.ndarray, size: int, weights: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[int, list[float]]]:
    """Counts of integer codes in [0, size): (occurring codes, occurrences, exact weight sums, residuals by
    position among the occurring codes); dense bincount for small ``size``, sorted unique codes otherwise."""
    if size <= max(_DENSE_CELLS, 4 * len(codes)):
        occurrences = np.bincount(codes, minlength=size)
        occurring = np.flatnonzero(occurrences)
        counts = occurrences[occurring]
        compact = None
    else:
        occurring, compact = np.unique(codes, return_inverse=True)
        counts = np.bincount(compact, minlength=len(occurring))
    if weights is None:
        return occurring, counts, counts.astype(np.float64), {}
    if compact is None:
        sums, residuals = exact_group_sums(codes, size, weights)
        position = np.full(size, -1, dtype=np.int64)
        position[occurring] = np.arange(len(occurring))
        return occurring, counts, sums[occurring], {int(position[code]): r for code, r in residuals.items()}
    sums, residuals = exact_group_sums(compact, len(occurring), weights)
    return occurring, counts, sums, residuals


def count_cells(references: np.ndarray, predictions: np.ndarray, weights: np.ndarray | None = None) -> CellCounts:
    """The confusion cells of checked label arrays (see :func:`label_array`), in one bincount pass."""
    size = len(references)
    if references.dtype.kind in "iu" and predictions.dtype.kind in "iu":
        low = min(int(references.min()), int(predictions.min()))
        span = max(int(references.max()), int(predictions.max())) - low + 1
        if span * span <= max(_DENSE_CELLS, size):
            if low == 0:
                codes = references * span
                codes += predictions
            else:
                codes = (references - low) * span + (predictions - low)
            occurring, counts, sums, residuals = count_codes(codes, span * span, weights)
            true_position, pred_position = np.divmod(occurring, span)
            present = np.union1d(true_position, pred_position)
            lookup = np.zeros(span, dtype=np.int64)
            lookup[present] = np.arange(len(present))
            return CellCounts(present + low, lookup[true_position], lookup[pred_position], counts, sums, residuals)
    labels, inverse = np.unique(np.concatenate([references, predictions]), return_inverse=True)
    n_labels = len(labels)
    codes = inverse[:size].astype(np.int64) * n_labels + inverse[size:]
    occurring, counts, sums, residuals = count_codes(codes, n_labels * n_labels, weights)
    true_index, pred_index = np.divmod(occurring, n_labels)
    return CellCounts(labels, true_index, pred_index, counts, sums, residuals)


@dataclass(frozen=True)
class LabelColumnCounts:
    """Per label column of indicator rows: the occurrences and exact weights of its four cells.

    Arrays have shape (labels, 2, 2), indexed [column, reference value,
    predicted value]; ``residuals`` maps (column, reference value, predicted
    value) to the residuals of inexact weight sums.
    """

    occurrences: np.ndarray
    weights: np.ndarray
    residuals: dict[tuple[int, int, int], list[float]]


def count_label_columns(
    references: np.ndarray, predictions: np.ndarray, weights: np.ndarray | None = None
) -> LabelColumnCounts:
    """The four cells of every label column of 0/1 indicator rows (2-D arrays of one shape)."""
    return count_indicator_rows(references, predictions, weights).columns


def example_label_counts(references: np.ndarray, predictions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per example: (true positives, predicted labels, true labels) of 0/1 indicator rows."""
    counts = count_indicator_rows(references, predictions, None, columns=False)
    return counts.true_positive, counts.predicted, counts.true


_BITS = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.int64)  # [byte value, bit] -> 0/1


def _pack(matrix: np.ndarray) -> np.ndarray:
    """Rows of 0/1 values as bits (label j is bit j % 8 of byte j // 8), one pass."""
    return np.packbits(matrix, axis=1, bitorder="little")


def _row_popcounts(packed: np.ndarray) -> np.ndarray:
    if packed.shape[1] <= 8:
        padded = np.zeros((packed.shape[0], 8), dtype=np.uint8)
        padded[:, : packed.shape[1]] = packed
        return np.bitwise_count(padded.view(np.uint64).reshape(-1)).astype(np.int64)
    return np.bitwise_count(packed).sum(axis=1, dtype=np.int64)


def _column_counts(packed: np.ndarray, width: int) -> np.ndarray:
    counts = np.concatenate([np.bincount(packed[:, byte], minlength=256) @ _BITS for byte in range(packed.shape[1])])
    return counts[:width]


@dataclass(frozen=True)
class IndicatorCounts:
    """Counts of 0/1 indicator rows: per label column (``columns``, None when not asked for) and per example
    (true positives, predicted labels, true labels, and whether the two rows are equal)."""

    columns: LabelColumnCounts | None
    true_positive: np.ndarray
    predicted: np.ndarray
    true: np.ndarray
    equal: np.ndarray


def count_indicator_rows(
    references: np.ndarray, predictions: np.ndarray, weights: np.ndarray | None = None, *, columns: bool = True
) -> IndicatorCounts:
    """Per-column cells and per-example counts of 0/1 indicator rows, from their bits packed once."""
    size, width = references.shape
    packed_true, packed_pred = _pack(references), _pack(predictions)
    packed_both = packed_true & packed_pred
    true_positive = _row_popcounts(packed_both)
    predicted, true = _row_popcounts(packed_pred), _row_popcounts(packed_true)
    equal = predicted + true == 2 * true_positive
    if not columns:
        return IndicatorCounts(None, true_positive, predicted, true, equal)
    both_count = _column_counts(packed_both, width)
    true_count = _column_counts(packed_true, width)
    pred_count = _column_counts(packed_pred, width)
    occurrences = np.empty((width, 2, 2), dtype=np.int64)
    occurrences[:, 1, 1] = both_count
    occurrences[:, 1, 0] = true_count - both_count
    occurrences[:, 0, 1] = pred_count - both_count
    occurrences[:, 0, 0] = size - true_count - pred_count + both_count
    if weights is None:
        cells = LabelColumnCounts(occurrences, occurrences.astype(np.float64), {})
        return IndicatorCounts(cells, true_positive, predicted, true, equal)
    sums = np.empty((width, 2, 2))
    residuals: dict[tuple[int, int, int], list[float]] = {}
    for column in range(width):
        groups = (references[:, column] != 0).astype(np.intp) * 2 + (predictions[:, column] != 0)
        column_sums, column_residuals = exact_group_sums(groups, 4, weights)
        sums[column] = column_sums.reshape(2, 2)
        for group, residual in column_residuals.items():
            residuals[(column, group // 2, group % 2)] = residual
    return IndicatorCounts(LabelColumnCounts(occurrences, sums, residuals), true_positive, predicted, true, equal)
