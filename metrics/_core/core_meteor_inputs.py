"""METEOR's inputs: texts, or texts already split into tokens, with one or several references per prediction.

:data:`TEXT_OR_TOKEN_PAIRS` is the input kind of the ``meteor`` module. It takes
what ``core_inputs.TEXT_PAIRS`` takes (one string per prediction; per prediction a
reference string or a ragged list of reference strings, ``None`` entries
dropped) and, in its place, pre-tokenized input as NLTK's ``meteor_score``
takes it: one list of tokens per prediction; per prediction a list of tokens
(one reference) or a list of token lists (several; an empty reference is
``[[]]``). A corpus is all texts or all token lists. References come out as one
list per prediction in both forms.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .core_checks import check_encodable, check_list, check_reference_lists, check_text_list, is_list_like
from .core_inputs import Columns, InputKind

METRIC = "meteor"
INPUT_KIND_NAME = "text pairs or token lists"


def _string() -> Any:
    import datasets

    return datasets.Value("string", id="sequence")


def _tokens() -> Any:
    import datasets

    return datasets.Sequence(datasets.Value("string", id="token"), id="tokens")


def _features(config_name: str) -> list[Any]:
    import datasets

    return [
        datasets.Features({"predictions": _string(), "references": datasets.Sequence(_string(), id="references")}),
        datasets.Features({"predictions": _string(), "references": _string()}),
        datasets.Features({"predictions": _tokens(), "references": datasets.Sequence(_tokens(), id="references")}),
    ]


def _is_token_list(value: Any) -> bool:
    return isinstance(value, (list, tuple))


def _token_list(metric: str, argument: str, value: Any) -> list[str]:
    tokens = check_list(metric, argument, value, what="tokens (strings)", allow_empty=True)
    for position, token in enumerate(tokens):
        if not isinstance(token, str):
            raise TypeError(
                f"{metric}: `{argument}[{position}]` must be a token (a string), got {type(token).__name__} "
                f"({token!r:.60}); pre-tokenized input is one list of strings per text"
            )
        check_encodable(metric, f"{argument}[{position}]", token)
    return tokens


def _token_references(metric: str, references: Any, count: int) -> list[list[list[str]]]:
    if references is None or isinstance(references, str) or not is_list_like(references):
        raise TypeError(
            f"{metric}: `references` must be a list with one entry per prediction (a list of tokens or a list of "
            f"token lists, as the predictions are token lists), got {type(references).__name__}"
        )
    if len(references) != count:
        raise ValueError(
            f"{metric}: got {count} predictions but {len(references)} references; "
            "pass one reference (or one list of references) per prediction"
        )
    nested: list[list[list[str]]] = []
    for index, entry in enumerate(references):
        if not isinstance(entry, (list, tuple)):
            raise TypeError(
                f"{metric}: `references[{index}]` must be a list of tokens or a list of token lists (the predictions "
                f"are token lists), got {type(entry).__name__} ({entry!r:.60})"
            )
        if not entry:
            raise ValueError(
                f"{metric}: `references[{index}]` is empty; with pre-tokenized input pass a list of tokens, a "
                "list of token lists, or [[]] for one empty reference"
            )
        if all(isinstance(item, str) for item in entry):
            nested.append([_token_list(metric, f"references[{index}]", entry)])
        elif all(_is_token_list(item) for item in entry):
            nested.append([_token_list(metric, f"references[{index}][{i}]", item) for i, item in enumerate(entry)])
        else:
            position = next(i for i, item in enumerate(entry) if not _is_token_list(item))
            raise TypeError(
                f"{metric}: `references[{index}][{position}]` must be a token list like its neighbours, got "
                f"{type(entry[position]).__name__} ({entry[position]!r:.60}); pass a list of tokens (one reference) "
                "or a list of token lists (several)"
            )
    return nested


def is_tokenized(predictions: Any) -> bool:
    """True when ``predictions`` is a non-empty sequence (a list, a tuple, a 1-D object array) whose first item is a
    list or tuple (pre-tokenized input)."""
    return is_list_like(predictions) and len(predictions) > 0 and _is_token_list(predictions[0])


def check_meteor_inputs(
    predictions: Any, references: Any, *, metric: str = METRIC, allow_empty: bool = False
) -> tuple[list[Any], list[list[Any]]]:
    """Texts or token lists, checked and normalised to one prediction and one list of references per example."""
    if is_tokenized(predictions):
        tokens = []
        for index, prediction in enumerate(predictions):
            if not _is_token_list(prediction):
                raise TypeError(
                    f"{metric}: `predictions[{index}]` is a {type(prediction).__name__} but `predictions[0]` is a "
                    "token list; pass all predictions as strings or all as lists of tokens"
                )
            tokens.append(_token_list(metric, f"predictions[{index}]", prediction))
        return tokens, _token_references(metric, references, len(tokens))
    texts = check_text_list(metric, "predictions", predictions, allow_empty=allow_empty)
    return texts, check_reference_lists(metric, references, len(texts))  # type: ignore[return-value]


def _check_batch(metric: str, given: Mapping[str, Any], allow_empty: bool) -> Columns:
    predictions, references = check_meteor_inputs(
        given.get("predictions"), given.get("references"), metric=metric, allow_empty=allow_empty
    )
    return {"predictions": predictions, "references": references}


TEXT_OR_TOKEN_PAIRS = InputKind(INPUT_KIND_NAME, ("predictions", "references"), _features, _check_batch)
