"""The CoNLL-2012 reference scorer's own test cases (v8.01), read from ``golden/coref_scorer_cases.json``: the
expected [recall, precision, F1] per metric of test/CorefMetricTestConfig.pm, as published there (exact fractions,
kept as the arithmetic written there, or 5 decimals), and the coreference column of test/DataFiles/TC-*.key and
TC-*.response (one string per token line; blank lines and document markers left out as they hold no token).
Commented-out expectations of the original are left out."""

from __future__ import annotations

import ast
import json
import operator
from pathlib import Path
from typing import Any

_ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def _value(node: ast.AST) -> float:
    """A published expression's value, computed as Python computes the same expression written as code."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        return _ARITHMETIC[type(node.op)](_value(node.left), _value(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_value(node.operand)
    raise ValueError(f"not an arithmetic expression: {ast.dump(node)}")


def _expected(published: dict[str, list[str]]) -> dict[str, list[float]]:
    return {metric: [_value(ast.parse(text, mode="eval").body) for text in values]
            for metric, values in published.items()}


_DATA: dict[str, Any] = json.loads((Path(__file__).parent / "golden" / "coref_scorer_cases.json").read_text("utf-8"))
COLUMNS: dict[str, list[str]] = _DATA["columns"]
# (case id, key file, response file, {metric: [recall, precision, F1]})
CASES: list[tuple[str, str, str, dict[str, list[float]]]] = [
    (case["case"], case["key"], case["response"], _expected(case["expected"])) for case in _DATA["cases"]
]
