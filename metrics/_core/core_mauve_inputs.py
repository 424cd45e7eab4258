"""MAUVE's inputs: texts as evaluate's ``mauve`` declares them, precomputed features, token ids, and the options
whose valid values are particular to MAUVE; each check names the argument and, per item, the index."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .core_checks import check_int, check_same_length, check_text_list
from .core_inputs import Columns, InputKind


def _text_features(config_name: str) -> Any:
    import datasets

    text = datasets.Value("string", id="sequence")
    return datasets.Features({"predictions": text, "references": text})


def _check_texts(metric: str, given: Mapping[str, Any], allow_empty: bool) -> Columns:
    predictions = check_text_list(metric, "predictions", given.get("predictions"), allow_empty=allow_empty)
    references = check_text_list(metric, "references", given.get("references"), allow_empty=allow_empty)
    check_same_length(metric, ("predictions", len(predictions)), ("references", len(references)))
    return {"predictions": predictions, "references": references}


MAUVE_TEXTS = InputKind("generated and human texts", ("predictions", "references"), _text_features, _check_texts)


def check_features(metric: str, name: str, value: Any) -> np.ndarray | None:
    """None, or a finite [n, d] float array with n >= 1 and d >= 1 (numpy arrays, nested lists, CPU or GPU
    tensors)."""
    if value is None:
        return None
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        value = value.detach().float().cpu().numpy()
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{metric}: `{name}` must be a 2-D array of numbers [n, d] (one row per text), got "
                        f"{type(value).__name__}: {error}") from None
    if array.ndim != 2:
        raise ValueError(f"{metric}: `{name}` must be a 2-D array [n, d] (one row per text), got shape {array.shape}")
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise ValueError(f"{metric}: `{name}` is empty (shape {array.shape}); MAUVE of an empty sample is undefined")
    bad = np.flatnonzero(~np.isfinite(array).all(axis=1))
    if bad.size:
        raise ValueError(f"{metric}: `{name}[{bad[0]}]` holds a NaN or infinite value")
    return array


def check_tokens(metric: str, name: str, value: Any) -> list[list[int]] | None:
    """None, or a non-empty list of token-id sequences (lists, 1-D arrays or [1, length] tensors as mauve-text
    takes them), each non-empty."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise TypeError(f"{metric}: `{name}` must be a list of token-id sequences, got {type(value).__name__}")
    if len(value) == 0:
        raise ValueError(f"{metric}: `{name}` is empty; MAUVE of an empty sample is undefined")
    sequences = []
    for index, item in enumerate(value):
        if hasattr(item, "tolist"):
            item = item.tolist()
        if isinstance(item, list) and len(item) == 1 and isinstance(item[0], list):
            item = item[0]  # a [1, length] tensor, as mauve-text's tokenizer call returns
        if not isinstance(item, (list, tuple)) or not all(
                isinstance(token, int) and not isinstance(token, bool) and token >= 0 for token in item):
            raise TypeError(f"{metric}: `{name}[{index}]` must be a sequence of non-negative integer token ids, "
                            f"got {type(item).__name__} ({item!r:.60})")
        if not item:
            raise ValueError(f"{metric}: `{name}[{index}]` is empty; a text needs at least one token")
        sequences.append(list(item))
    return sequences


def check_num_buckets(metric: str, name: str, value: Any) -> int | str:
    """'auto' or a positive integer."""
    if value == "auto":
        return value
    if isinstance(value, str):
        raise ValueError(f"{metric}: `{name}` must be 'auto' or a positive integer, got {value!r}")
    return check_int(metric, name, value, minimum=1)


def check_pca_max_data(metric: str, name: str, value: Any) -> int:
    """-1 (every row) or a positive number of rows."""
    check_int(metric, name, value, minimum=-1)
    if value == 0:
        raise ValueError(f"{metric}: `{name}` must be -1 (fit on every row) or a positive number of rows, got 0")
    return value


def check_device_id(metric: str, name: str, value: Any) -> int | str | None:
    """None (automatic), -1 (the CPU), a GPU index, or a device string such as 'cuda:0'."""
    if value is None or isinstance(value, str):
        return value
    return check_int(metric, name, value, minimum=-1)
