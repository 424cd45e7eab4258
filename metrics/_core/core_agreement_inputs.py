"""The input kind of inter-annotator agreement: one row per rating, (item, annotator, label); and the same ratings
from an items x annotators matrix with missing cells.

``labels[i]`` is the label annotator ``annotators[i]`` gave item ``items[i]``. Item and annotator ids are strings
(integers are taken as their decimal strings, as evaluate's cache stores them). Labels are all strings (category
names) or all real numbers (held as float64, so ``3`` and ``3.0`` are one label); booleans, None and NaN are
errors (a missing rating is a row left out: :func:`ratings_from_matrix` leaves out missing cells). An annotator
rates an item at most once. Errors name the argument and the row.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

from .core_checks import check_encodable, check_id, check_list, check_same_length
from .core_inputs import Columns, InputKind

Label = str | float
ID_COLUMNS = ("items", "annotators")
_ID_WHAT = {"items": "an item id (a string or an integer)", "annotators": "an annotator id (a string or an integer)"}
_MAX_EXACT_INTEGER = 2**53  # integer labels are held as float64: beyond this they would no longer be distinct


def _features(config_name: str) -> list[Any]:
    import datasets

    ids = {name: datasets.Value("string") for name in ID_COLUMNS}
    return [datasets.Features({**ids, "labels": datasets.Value("string")}),
            datasets.Features({**ids, "labels": datasets.Value("float64")})]


def check_label(metric: str, argument: str, value: Any) -> Label:
    """One label: a string, or a finite real number as a float (``-0.0`` as ``0.0``)."""
    if isinstance(value, str):
        check_encodable(metric, argument, value)
        return str(value)
    if value is None:
        raise TypeError(f"{metric}: `{argument}` is None; a missing rating is a row left out "
                        f"(`ratings_from_matrix` leaves out missing cells of a matrix)")
    if isinstance(value, bool) or type(value).__name__ == "bool_" or not isinstance(value, numbers.Real):
        raise TypeError(f"{metric}: `{argument}` must be a label (a string or a number), got "
                        f"{type(value).__name__} ({value!r:.60}); booleans are ambiguous: use 0/1 or names")
    if isinstance(value, numbers.Integral) and abs(int(value)) > _MAX_EXACT_INTEGER:
        raise ValueError(f"{metric}: `{argument}` is the integer {value}, too large to be held exactly as a number "
                         f"label; pass such labels as strings")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{metric}: `{argument}` is {number}; a label must be finite (a missing rating is a row left "
                         f"out: `ratings_from_matrix` leaves out NaN cells)")
    return number + 0.0


def check_labels(metric: str, argument: str, values: Sequence[Any]) -> list[Label]:
    """Labels all strings or all numbers; errors name the first label of the other kind."""
    labels = [check_label(metric, f"{argument}[{index}]", value) for index, value in enumerate(values)]
    if labels:
        textual = isinstance(labels[0], str)
        for index, label in enumerate(labels):
            if isinstance(label, str) != textual:
                kinds = ("a string", "a number") if textual else ("a number", "a string")
                raise TypeError(f"{metric}: `{argument}[{index}]` is {kinds[1]} ({label!r:.60}) but `{argument}[0]` "
                                f"is {kinds[0]}; labels are all strings or all numbers")
    return labels


def _check_ids(metric: str, argument: str, values: Any, allow_empty: bool) -> list[str]:
    values = check_list(metric, argument, values, what="ids (strings or integers)", allow_empty=allow_empty)
    return [check_id(metric, f"{argument}[{index}]", value, what=_ID_WHAT[argument])
            for index, value in enumerate(values)]


def _check_one_rating_each(metric: str, items: list[str], annotators: list[str]) -> None:
    first: dict[tuple[str, str], int] = {}
    for index, key in enumerate(zip(items, annotators, strict=True)):
        seen = first.setdefault(key, index)
        if seen != index:
            raise ValueError(f"{metric}: rows {seen} and {index} are both annotator {key[1]!r} on item {key[0]!r}; "
                             f"pass one rating per annotator and item")


def _check_ratings(metric: str, given: Mapping[str, Any], allow_empty: bool) -> Columns:
    items = _check_ids(metric, "items", given.get("items"), allow_empty)
    annotators = _check_ids(metric, "annotators", given.get("annotators"), allow_empty)
    raw_labels = check_list(metric, "labels", given.get("labels"), what="labels (strings or numbers)",
                            allow_empty=allow_empty)
    check_same_length(metric, ("items", len(items)), ("annotators", len(annotators)), ("labels", len(raw_labels)))
    labels = check_labels(metric, "labels", raw_labels)
    _check_one_rating_each(metric, items, annotators)
    return {"items": items, "annotators": annotators, "labels": labels}


RATINGS = InputKind("ratings", ("items", "annotators", "labels"), _features, _check_ratings)


def check_label_kind(metric: str, stored: Any, labels: Any) -> None:
    """Labels added after the first batch are of the kind (strings or numbers) that evaluate's cache took from it:
    ``stored`` is the cache's features (None before the first batch)."""
    if stored is None or labels is None or isinstance(labels, str) or not hasattr(labels, "__len__") or not len(labels):
        return
    first, textual = labels[0], stored["labels"].dtype == "string"
    if isinstance(first, str) != textual and (isinstance(first, str) or isinstance(first, numbers.Real)):
        kinds = ("strings", "numbers") if textual else ("numbers", "strings")
        raise TypeError(f"{metric}: `labels` of this batch are {kinds[1]} ({first!r:.40}) but the batches added "
                        f"before hold {kinds[0]}; labels are all strings or all numbers")


# -- an items x annotators matrix ------------------------------------------------------------------------------


def _is_missing(value: Any, missing: Any) -> bool:
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return True
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral) and math.isnan(value):
        return True
    return missing is not None and not isinstance(value, bool) and value == missing


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds."""
    return value.item() if hasattr(value, "item") and getattr(value, "ndim", None) == 0 else value


def _matrix_rows(metric: str, matrix: Any) -> tuple[list[list[Any]], list[Any] | None, list[Any] | None]:
    """(rows, row labels, column labels) of a list of rows, a 2-D numpy array or a pandas DataFrame."""
    if hasattr(matrix, "columns") and hasattr(matrix, "index") and hasattr(matrix, "to_numpy"):
        rows = [list(row) for row in matrix.to_numpy(dtype=object)]
        return rows, [_plain(label) for label in matrix.index], [_plain(label) for label in matrix.columns]
    if getattr(matrix, "ndim", 2) != 2:
        raise ValueError(f"{metric}: the ratings matrix must have 2 dimensions (items x annotators), "
                         f"got {matrix.ndim}")
    rows = check_list(metric, "matrix", matrix, what="rows (one per item, one cell per annotator)")
    checked = []
    for index, row in enumerate(rows):
        if isinstance(row, (str, bytes)) or not hasattr(row, "__len__"):
            raise TypeError(f"{metric}: `matrix[{index}]` must be a row of labels (one cell per annotator), got "
                            f"{type(row).__name__}")
        checked.append(list(row))
    return checked, None, None


def ratings_from_matrix(matrix: Any, *, items: Sequence[Any] | None = None, annotators: Sequence[Any] | None = None,
                        missing: Any = None, metric: str = "agreement") -> dict[str, list[Any]]:
    """The rating rows (``items``, ``annotators``, ``labels``) of an items x annotators matrix.

    ``matrix`` is a list of rows, a 2-D numpy array or a pandas DataFrame: one row per item, one column per
    annotator, a cell the label that annotator gave that item. Missing cells (None, NaN, pandas' NA, or a cell equal
    to ``missing``, e.g. ``"*"``) are left out. Items are named by ``items`` (default: the DataFrame's index, or
    0, 1, ...) and annotators by ``annotators`` (default: the DataFrame's columns, or 0, 1, ...). Krippendorff's
    reliability data (annotators x items, as the ``krippendorff`` package takes it) is the transpose:
    ``ratings_from_matrix(numpy.asarray(data).T)``.
    """
    rows, row_labels, column_labels = _matrix_rows(metric, matrix)
    if not rows:
        raise ValueError(f"{metric}: the ratings matrix has no rows; pass one row per item")
    width = len(rows[0])
    for index, row in enumerate(rows):
        if len(row) != width:
            raise ValueError(f"{metric}: `matrix[{index}]` has {len(row)} cells but `matrix[0]` has {width}; "
                             f"every row needs one cell per annotator (None where a rating is missing)")
    item_ids = list(items) if items is not None else row_labels if row_labels is not None else list(range(len(rows)))
    annotator_ids = (list(annotators) if annotators is not None
                     else column_labels if column_labels is not None else list(range(width)))
    check_same_length(metric, ("matrix rows", len(rows)), ("items", len(item_ids)))
    check_same_length(metric, ("matrix columns", width), ("annotators", len(annotator_ids)))
    columns: dict[str, list[Any]] = {"items": [], "annotators": [], "labels": []}
    for item, row in zip(item_ids, rows, strict=True):
        for annotator, value in zip(annotator_ids, row, strict=True):
            value = _plain(value)
            if not _is_missing(value, missing):
                columns["items"].append(item)
                columns["annotators"].append(annotator)
                columns["labels"].append(value)
    return columns
