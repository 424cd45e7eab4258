"""The input kind of meta-evaluation: one row per (system, item) with a metric's score and a human score.

``predictions[i]`` is the score an automatic metric gave the output of system ``systems[i]`` for item
``items[i]`` (a segment, a source sentence, a document); ``references[i]`` is the human score of that same
output. Scores are finite real numbers (held as float64); system and item ids are strings (integers are taken
as their decimal strings, as evaluate's cache stores them). Errors name the argument and the row.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .core_checks import check_id, check_list, check_number_list, check_same_length
from .core_inputs import Columns, InputKind

SCORE_COLUMNS = ("predictions", "references")
ID_COLUMNS = ("systems", "items")
_ID_WHAT = {"systems": "a system id (a string or an integer)", "items": "an item id (a string or an integer)"}


def _features(config_name: str) -> Any:
    import datasets

    return datasets.Features({"predictions": datasets.Value("float64"), "references": datasets.Value("float64"),
                              "systems": datasets.Value("string"), "items": datasets.Value("string")})


def check_ids(metric: str, argument: str, values: Any, *, allow_empty: bool = False) -> list[str]:
    """One id per row, as strings; errors name the argument and the row."""
    values = check_list(metric, argument, values, what="ids (strings or integers)", allow_empty=allow_empty)
    what = _ID_WHAT.get(argument, "an id (a string or an integer)")
    return [check_id(metric, f"{argument}[{index}]", value, what=what) for index, value in enumerate(values)]


def _check_rows(metric: str, given: Mapping[str, Any], allow_empty: bool) -> Columns:
    columns: Columns = {}
    for name in SCORE_COLUMNS:
        columns[name] = check_number_list(metric, name, given.get(name), allow_empty=allow_empty)
    for name in ID_COLUMNS:
        columns[name] = check_ids(metric, name, given.get(name), allow_empty=allow_empty)
    check_same_length(metric, *((name, len(columns[name])) for name in (*SCORE_COLUMNS, *ID_COLUMNS)))
    return columns


SCORE_ROWS = InputKind("system and item scores", (*SCORE_COLUMNS, *ID_COLUMNS), _features, _check_rows)
