"""Input validation shared by every metric: one clear error, raised once, at the entry point.

Every message names the metric, the argument, what was expected, what came and,
for per-example problems, the index of the offending example.
"""

from __future__ import annotations

import numbers
import re
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

# Frames of these modules are the metric's own machinery (evaluate's dynamic modules hold the metric
# scripts and their core copies); a warning is attributed to the first frame outside them.
_INTERNAL_MODULE_PREFIXES = ("evaluate", "datasets", "metrics._core", "core_")


# Lone surrogates (U+D800..U+DFFF) can sit in a Python string but are not Unicode text: no encoding holds them.
_SURROGATE = re.compile("[\ud800-\udfff]")


def check_encodable(metric: str, argument: str, text: str) -> None:
    """Raise for a string holding a lone surrogate (it cannot be written as UTF-8, e.g. to evaluate's cache)."""
    if not text.isascii():
        found = _SURROGATE.search(text)
        if found:
            raise ValueError(
                f"{metric}: `{argument}` holds the lone surrogate U+{ord(found.group()):04X} at character "
                f"{found.start()}, which is not Unicode text (no encoding can hold it); decode the text with "
                f"errors='replace', or fix its source"
            )


def _type_name(value: Any) -> str:
    return type(value).__name__


def is_list_like(value: Any) -> bool:
    """True for sequences of items (lists, tuples, arrow/numpy-backed sequences), false for strings and for
    0-d arrays (which have ``__len__`` but no length)."""
    if isinstance(value, (str, bytes, Mapping)) or getattr(value, "ndim", 1) == 0:
        return False
    return isinstance(value, Sequence) or (hasattr(value, "__len__") and hasattr(value, "__getitem__"))


def _describe(value: Any) -> str:
    if getattr(value, "ndim", None) == 0:
        return f"a 0-d {_type_name(value)} ({value!r:.60})"
    return _type_name(value)


def check_list(metric: str, argument: str, values: Any, *, what: str, allow_empty: bool = False) -> list[Any]:
    """``values`` as a list (one item per example), or raise naming the argument."""
    if values is None:
        raise TypeError(f"{metric}: `{argument}` is None; pass a list of {what}, one per example")
    if not is_list_like(values):
        raise TypeError(f"{metric}: `{argument}` must be a list of {what}, got {_describe(values)}")
    values = list(values)
    if not values and not allow_empty:
        raise ValueError(f"{metric}: `{argument}` is empty; the score of an empty corpus is undefined")
    return values


def check_same_length(metric: str, *columns: tuple[str, int]) -> None:
    """All the named columns have the same number of examples."""
    (first, expected), *others = columns
    for name, length in others:
        if length != expected:
            raise ValueError(
                f"{metric}: got {expected} {first} but {length} {name}; pass one of each per example"
            )


def check_text_list(metric: str, argument: str, texts: Any, *, allow_empty: bool = False) -> list[str]:
    """Return ``texts`` as a list of strings, or raise naming the argument and the index of the first bad item."""
    if texts is None:
        raise TypeError(f"{metric}: `{argument}` is None; pass a list of strings, one per example")
    if isinstance(texts, str):
        raise TypeError(
            f"{metric}: `{argument}` is a single string; pass a list of strings, one per example "
            f"(for one example: [{texts[:30]!r}])"
        )
    texts = check_list(metric, argument, texts, what="strings", allow_empty=allow_empty)
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(
                f"{metric}: `{argument}[{index}]` must be a string, got {_type_name(text)} ({text!r:.60})"
            )
        check_encodable(metric, f"{argument}[{index}]", text)
    return texts


def check_reference_lists(metric: str, references: Any, num_predictions: int) -> list[list[str]]:
    """Normalise references to one list of strings per prediction.

    Accepts one string per prediction or a (possibly ragged) list of strings per
    prediction. ``None`` inside a prediction's list marks a missing reference and
    is dropped, as sacreBLEU drops ``None`` from padded reference streams. A
    prediction left with no reference at all is an error.
    """
    if references is None:
        raise TypeError(
            f"{metric}: `references` is None; pass one reference string or one list of reference strings per prediction"
        )
    if isinstance(references, str) or not is_list_like(references):
        raise TypeError(
            f"{metric}: `references` must be a list with one entry per prediction, got {_describe(references)}"
        )
    references = list(references)
    if len(references) != num_predictions:
        raise ValueError(
            f"{metric}: got {num_predictions} predictions but {len(references)} references; "
            f"pass one reference (or one list of references) per prediction"
        )
    normalised: list[list[str]] = []
    for index, entry in enumerate(references):
        if isinstance(entry, str):
            check_encodable(metric, f"references[{index}]", entry)
            normalised.append([entry])
            continue
        if entry is None:
            raise ValueError(f"{metric}: `references[{index}]` is None; prediction {index} has no reference")
        if not is_list_like(entry):
            raise TypeError(
                f"{metric}: `references[{index}]` must be a string or a list of strings, got {_type_name(entry)}"
            )
        kept = []
        for position, reference in enumerate(entry):
            if reference is None:
                continue
            if not isinstance(reference, str):
                raise TypeError(
                    f"{metric}: `references[{index}][{position}]` must be a string or None, "
                    f"got {_type_name(reference)} ({reference!r:.60})"
                )
            check_encodable(metric, f"references[{index}][{position}]", reference)
            kept.append(reference)
        if not kept:
            raise ValueError(
                f"{metric}: `references[{index}]` holds no reference; every prediction needs at least one "
                f"(None entries only mark missing references in a ragged list)"
            )
        normalised.append(kept)
    return normalised


def check_text_pairs(metric: str, predictions: Any, references: Any) -> tuple[list[str], list[list[str]]]:
    """Validate a corpus of predictions and references; return them normalised."""
    predictions = check_text_list(metric, "predictions", predictions)
    references = check_reference_lists(metric, references, len(predictions))
    return predictions, references


def _is_integer(value: Any) -> bool:
    import numbers

    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and type(value).__name__ != "bool_"


def check_label_list(metric: str, argument: str, labels: Any, *, allow_empty: bool = False) -> list[Any]:
    """Class labels: one integer per example, or one row of integers (0/1 indicators) per example, all rows
    of one width; returned as Python ints."""
    labels = check_list(metric, argument, labels, what="integer labels", allow_empty=allow_empty)
    if not labels:
        return labels
    rows = is_list_like(labels[0])
    width = len(labels[0]) if rows else None
    normalised: list[Any] = []
    for index, label in enumerate(labels):
        if rows:
            if not is_list_like(label) or len(label) != width:
                raise TypeError(
                    f"{metric}: `{argument}[{index}]` must be a row of {width} integer labels like "
                    f"`{argument}[0]`, got {_describe(label)} ({label!r:.60})"
                )
            row = list(label)
            for position, value in enumerate(row):
                if not _is_integer(value):
                    raise TypeError(
                        f"{metric}: `{argument}[{index}][{position}]` must be an integer label, "
                        f"got {_type_name(value)} ({value!r:.60})"
                    )
            normalised.append([int(value) for value in row])
        else:
            if not _is_integer(label):
                raise TypeError(
                    f"{metric}: `{argument}[{index}]` must be an integer label"
                    f"{' like the others' if index else ''}, got {_type_name(label)} ({label!r:.60})"
                )
            normalised.append(int(label))
    return normalised


def check_number_list(metric: str, argument: str, values: Any, *, allow_empty: bool = False) -> list[float]:
    """One finite real number per example, returned as Python floats."""
    import math
    import numbers

    values = check_list(metric, argument, values, what="numbers", allow_empty=allow_empty)
    normalised = []
    for index, value in enumerate(values):
        if isinstance(value, bool) or type(value).__name__ == "bool_" or not isinstance(value, numbers.Real):
            raise TypeError(f"{metric}: `{argument}[{index}]` must be a number, got {_type_name(value)} ({value!r:.60})")
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"{metric}: `{argument}[{index}]` is {value}; every value must be finite")
        normalised.append(value)
    return normalised


def check_tag_sequences(metric: str, argument: str, sequences: Any, *, allow_empty: bool = False) -> list[list[str]]:
    """One list of string tags per example."""
    sequences = check_list(metric, argument, sequences, what="tag sequences (lists of strings)",
                           allow_empty=allow_empty)
    normalised = []
    for index, sequence in enumerate(sequences):
        if isinstance(sequence, str) or not is_list_like(sequence):
            raise TypeError(
                f"{metric}: `{argument}[{index}]` must be a list of string tags, got {_describe(sequence)}"
            )
        tags = list(sequence)
        for position, tag in enumerate(tags):
            if not isinstance(tag, str):
                raise TypeError(
                    f"{metric}: `{argument}[{index}][{position}]` must be a string tag, got {_type_name(tag)} "
                    f"({tag!r:.60})"
                )
        normalised.append(tags)
    return normalised


def check_id(metric: str, argument: str, value: Any, *, what: str) -> str:
    """An identifier: a string, or an integer taken as its decimal string (as evaluate's cache stores it)."""
    if isinstance(value, str):
        check_encodable(metric, argument, value)
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return str(int(value))
    raise TypeError(f"{metric}: `{argument}` must be {what}, got {_type_name(value)} ({value!r:.60})")


def check_choice(metric: str, argument: str, value: Any, choices: Sequence[Any]) -> Any:
    """Return ``value`` if it is one of ``choices``; otherwise raise listing the valid values."""
    if value not in choices:
        valid = ", ".join(repr(choice) for choice in choices)
        raise ValueError(f"{metric}: unknown `{argument}` {value!r}; valid values are {valid}")
    return value


def check_names(
    metric: str, argument: str, value: Any, *, known: Callable[[str], bool], valid: str, example: str
) -> tuple[str, ...]:
    """A non-empty list or tuple of strings, each one ``known``; errors show an ``example`` and the ``valid`` ones."""
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise TypeError(
            f"{metric}: `{argument}` must be a list of strings such as {example}, got {_type_name(value)} ({value!r:.60})"
        )
    if not value:
        raise ValueError(f"{metric}: `{argument}` is empty; valid values are {valid}")
    for index, entry in enumerate(value):
        if not isinstance(entry, str) or not known(entry):
            raise ValueError(f"{metric}: unknown `{argument}[{index}]` {entry!r:.60}; valid values are {valid}")
    return tuple(value)


def check_int(metric: str, argument: str, value: Any, *, minimum: int | None = None) -> int:
    """Return ``value`` if it is an int (not a bool), of at least ``minimum`` when given."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{metric}: `{argument}` must be an integer, got {_type_name(value)} ({value!r:.60})")
    if minimum is not None and value < minimum:
        raise ValueError(f"{metric}: `{argument}` must be at least {minimum}, got {value}")
    return value


def check_bool(metric: str, argument: str, value: Any) -> bool:
    """Return ``value`` if it is a bool."""
    if not isinstance(value, bool):
        raise TypeError(f"{metric}: `{argument}` must be True or False, got {_type_name(value)} ({value!r:.60})")
    return value


def check_number(metric: str, argument: str, value: Any, *, minimum: float | None = None) -> float:
    """Return ``value`` if it is a real number (not a bool), at least ``minimum`` when given."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{metric}: `{argument}` must be a number, got {_type_name(value)} ({value!r:.60})")
    if value != value:
        raise ValueError(f"{metric}: `{argument}` is NaN")
    if minimum is not None and value < minimum:
        raise ValueError(f"{metric}: `{argument}` must be at least {minimum}, got {value}")
    return value


def _is_internal(frame: Any) -> bool:
    module = frame.f_globals.get("__name__", "")
    return module.startswith(_INTERNAL_MODULE_PREFIXES) or module.rpartition(".")[2].startswith("core_")


def warn_caller(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn`` attributed to the user's line: the first caller outside the metric and evaluate."""
    frame = sys._getframe(1)
    level = 2
    while frame is not None and _is_internal(frame):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)



def listed_indices(indices: Sequence[int], shown: int = 10) -> str:
    """The first ``shown`` indices, comma-separated, with "..." when there are more (for a warning)."""
    return ", ".join(str(index) for index in indices[:shown]) + (", ..." if len(indices) > shown else "")
