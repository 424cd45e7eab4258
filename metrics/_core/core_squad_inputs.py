"""The input kinds of SQuAD: predictions and references as records matched by question id.

evaluate's ``squad`` and ``squad_v2`` take predictions as dicts ``{"id",
"prediction_text"}`` (``squad_v2`` adds ``"no_answer_probability"``) and
references as dicts ``{"id", "answers": {"text": [...], "answer_start":
[...]}}``; ``answers`` may also be a list of ``{"text", "answer_start"}``
dicts (``datasets`` accepts both). The kinds here declare evaluate's features,
check every record with an error naming the argument, the index and the key,
and normalise the records to one form (ids as strings; ``answer_start``
filled with -1 where absent: it is not used in scoring; the no-answer
probability rounded to float32, the precision evaluate's cache stores, so a
result does not depend on whether the inputs went through the cache).
"""

from __future__ import annotations

import math
import numbers
import struct
from collections.abc import Mapping
from typing import Any

from .core_checks import check_encodable, check_id, check_list, check_same_length
from .core_inputs import Columns, InputKind

NO_ANSWER_START = -1


def _features(with_probability: bool) -> Any:
    import datasets

    prediction = {"id": datasets.Value("string"), "prediction_text": datasets.Value("string")}
    if with_probability:
        prediction["no_answer_probability"] = datasets.Value("float32")
    reference = {
        "id": datasets.Value("string"),
        "answers": datasets.features.Sequence(
            {"text": datasets.Value("string"), "answer_start": datasets.Value("int32")}
        ),
    }
    return datasets.Features({"predictions": prediction, "references": reference})


def _record(metric: str, argument: str, index: int, value: Any, shape: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(f"{metric}: `{argument}[{index}]` must be a dict {shape}, got {type(value).__name__} "
                        f"({value!r:.60})")
    return value


def _key(metric: str, argument: str, record: Mapping[str, Any], key: str, shape: str) -> Any:
    if key not in record:
        raise ValueError(f"{metric}: `{argument}` lacks the key {key!r}; each one is a dict {shape}")
    return record[key]


def _identifier(metric: str, argument: str, value: Any) -> str:
    """A question id: a string (an integer is taken as its decimal string, as evaluate's cache stores it)."""
    return check_id(metric, argument, value, what="a string id")


def _text(metric: str, argument: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{metric}: `{argument}` must be a string, got {type(value).__name__} ({value!r:.60})")
    check_encodable(metric, argument, value)
    return value


def float32(value: float) -> float:
    """``value`` rounded to the nearest float32 (what a ``float32`` feature stores)."""
    return struct.unpack("f", struct.pack("f", value))[0]


def _probability(metric: str, argument: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{metric}: `{argument}` must be a number, got {type(value).__name__} ({value!r:.60})")
    value = float(value)
    try:
        rounded = float32(value) if math.isfinite(value) else value
    except OverflowError:
        rounded = math.inf
    if not math.isfinite(rounded):
        raise ValueError(f"{metric}: `{argument}` is {value}; it must be a finite number (stored as float32)")
    return rounded


_PREDICTION = "{'id': ..., 'prediction_text': ...}"
_PREDICTION_V2 = "{'id': ..., 'prediction_text': ..., 'no_answer_probability': ...}"
_REFERENCE = "{'id': ..., 'answers': {'text': [...], 'answer_start': [...]}}"


def check_predictions(metric: str, predictions: Any, *, with_probability: bool, allow_empty: bool) -> list[dict]:
    """Prediction records normalised to ``{"id", "prediction_text"[, "no_answer_probability"]}``."""
    shape = _PREDICTION_V2 if with_probability else _PREDICTION
    values = check_list(metric, "predictions", predictions, what=f"dicts {shape}", allow_empty=allow_empty)
    checked = []
    for index, value in enumerate(values):
        argument = f"predictions[{index}]"
        record = _record(metric, "predictions", index, value, shape)
        normalized = {
            "id": _identifier(metric, f"{argument}['id']", _key(metric, argument, record, "id", shape)),
            "prediction_text": _text(metric, f"{argument}['prediction_text']",
                                     _key(metric, argument, record, "prediction_text", shape)),
        }
        if with_probability:
            normalized["no_answer_probability"] = _probability(
                metric, f"{argument}['no_answer_probability']",
                _key(metric, argument, record, "no_answer_probability", shape))
        checked.append(normalized)
    return checked


def _answers(metric: str, argument: str, value: Any, require_answer: bool) -> dict[str, list[Any]]:
    if isinstance(value, Mapping):
        if "text" not in value:
            raise ValueError(f"{metric}: `{argument}` lacks the key 'text'; answers are "
                             f"{{'text': [...], 'answer_start': [...]}}")
        texts = value["text"]
        if isinstance(texts, str) or not isinstance(texts, (list, tuple)):
            raise TypeError(f"{metric}: `{argument}['text']` must be a list of answer strings, got "
                            f"{type(texts).__name__} ({texts!r:.60})")
        texts = [_text(metric, f"{argument}['text'][{position}]", text) for position, text in enumerate(texts)]
        starts = value.get("answer_start")
        if starts is None:
            starts = [NO_ANSWER_START] * len(texts)
        elif isinstance(starts, (str, bytes)) or not isinstance(starts, (list, tuple)) or len(starts) != len(texts):
            raise ValueError(f"{metric}: `{argument}['answer_start']` must be a list of {len(texts)} integers, one "
                             f"per answer text, got {starts!r:.60}")
        else:
            starts = [_start(metric, f"{argument}['answer_start'][{position}]", start)
                      for position, start in enumerate(starts)]
    elif isinstance(value, (list, tuple)):
        texts, starts = [], []
        for position, answer in enumerate(value):
            if not isinstance(answer, Mapping) or "text" not in answer:
                raise TypeError(f"{metric}: `{argument}[{position}]` must be a dict {{'text': ..., 'answer_start': "
                                f"...}}, got {answer!r:.60}")
            texts.append(_text(metric, f"{argument}[{position}]['text']", answer["text"]))
            start = answer.get("answer_start")
            starts.append(NO_ANSWER_START if start is None else
                          _start(metric, f"{argument}[{position}]['answer_start']", start))
    else:
        raise TypeError(f"{metric}: `{argument}` must be a dict {{'text': [...], 'answer_start': [...]}}, got "
                        f"{type(value).__name__} ({value!r:.60})")
    if require_answer and not texts:
        raise ValueError(f"{metric}: `{argument}['text']` is empty; every SQuAD v1.1 question has at least one "
                         f"answer (use squad_v2 for questions without an answer)")
    return {"text": texts, "answer_start": starts}


def _start(metric: str, argument: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{metric}: `{argument}` must be an integer, got {type(value).__name__} ({value!r:.60})")
    return int(value)


def check_references(metric: str, references: Any, *, require_answer: bool, allow_empty: bool) -> list[dict]:
    """Reference records normalised to ``{"id", "answers": {"text": [...], "answer_start": [...]}}``."""
    values = check_list(metric, "references", references, what=f"dicts {_REFERENCE}", allow_empty=allow_empty)
    checked = []
    for index, value in enumerate(values):
        argument = f"references[{index}]"
        record = _record(metric, "references", index, value, _REFERENCE)
        checked.append({
            "id": _identifier(metric, f"{argument}['id']", _key(metric, argument, record, "id", _REFERENCE)),
            "answers": _answers(metric, f"{argument}['answers']",
                                _key(metric, argument, record, "answers", _REFERENCE), require_answer),
        })
    return checked


def _checker(with_probability: bool, require_answer: bool) -> Any:
    def check(metric: str, given: Mapping[str, Any], allow_empty: bool) -> Columns:
        predictions = check_predictions(metric, given.get("predictions"), with_probability=with_probability,
                                        allow_empty=allow_empty)
        references = check_references(metric, given.get("references"), require_answer=require_answer,
                                      allow_empty=allow_empty)
        check_same_length(metric, ("predictions", len(predictions)), ("references", len(references)))
        return {"predictions": predictions, "references": references}

    return check


def _v1_features(config_name: str) -> Any:
    return _features(False)


def _v2_features(config_name: str) -> Any:
    return _features(True)


SQUAD_ANSWERS = InputKind("squad answers", ("predictions", "references"), _v1_features,
                          _checker(with_probability=False, require_answer=True))
SQUAD_V2_ANSWERS = InputKind("squad_v2 answers", ("predictions", "references"), _v2_features,
                             _checker(with_probability=True, require_answer=False))
