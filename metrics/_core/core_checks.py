"""Input validation shared by every metric: one clear error, raised once, at the entry point.

Every message names the metric, the argument, what was expected, what came and,
for per-example problems, the index of the offending example.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def _type_name(value: Any) -> str:
    return type(value).__name__


def _is_list_like(value: Any) -> bool:
    """True for sequences of items (lists, tuples, arrow/numpy-backed sequences), false for strings."""
    if isinstance(value, (str, bytes, Mapping)):
        return False
    return isinstance(value, Sequence) or (hasattr(value, "__len__") and hasattr(value, "__getitem__"))


def check_text_list(metric: str, argument: str, texts: Any, *, allow_empty: bool = False) -> list[str]:
    """Return ``texts`` as a list of strings, or raise naming the argument and the index of the first bad item."""
    if texts is None:
        raise TypeError(f"{metric}: `{argument}` is None; pass a list of strings, one per example")
    if isinstance(texts, str):
        raise TypeError(
            f"{metric}: `{argument}` is a single string; pass a list of strings, one per example "
            f"(for one example: [{texts[:30]!r}])"
        )
    if not _is_list_like(texts):
        raise TypeError(f"{metric}: `{argument}` must be a list of strings, got {_type_name(texts)}")
    texts = list(texts)
    if not texts and not allow_empty:
        raise ValueError(f"{metric}: `{argument}` is empty; the score of an empty corpus is undefined")
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(
                f"{metric}: `{argument}[{index}]` must be a string, got {_type_name(text)} ({text!r:.60})"
            )
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
    if isinstance(references, str) or not _is_list_like(references):
        raise TypeError(
            f"{metric}: `references` must be a list with one entry per prediction, got {_type_name(references)}"
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
            normalised.append([entry])
            continue
        if entry is None:
            raise ValueError(f"{metric}: `references[{index}]` is None; prediction {index} has no reference")
        if not _is_list_like(entry):
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


def check_choice(metric: str, argument: str, value: Any, choices: Sequence[Any]) -> Any:
    """Return ``value`` if it is one of ``choices``; otherwise raise listing the valid values."""
    if value not in choices:
        valid = ", ".join(repr(choice) for choice in choices)
        raise ValueError(f"{metric}: unknown `{argument}` {value!r}; valid values are {valid}")
    return value


def check_int(metric: str, argument: str, value: Any, *, minimum: int) -> int:
    """Return ``value`` if it is an int (not a bool) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{metric}: `{argument}` must be an integer, got {_type_name(value)} ({value!r:.60})")
    if value < minimum:
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


def check_bootstrap(metric: str, n_bootstrap: Any, confidence_level: Any) -> None:
    """Options of a bootstrap confidence interval: at least 2 resamples, a level strictly between 0 and 1."""
    check_int(metric, "n_bootstrap", n_bootstrap, minimum=2)
    check_number(metric, "confidence_level", confidence_level)
    if not 0 < confidence_level < 1:
        raise ValueError(f"{metric}: `confidence_level` must be between 0 and 1, got {confidence_level}")
