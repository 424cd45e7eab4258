"""Coreference inputs: one document per example, as CoNLL-2012 lines or as entities (lists of ``[start, end]``
token spans), both read into entities; errors name the argument, the document and, for CoNLL lines, the line.

CoNLL lines (the reference scorer's and coval's format): one token per line, its last column the coreference
brackets (``(3`` opens a mention of entity 3, ``3)`` closes the latest open one, ``(3)`` is a one-token mention,
``-`` none, several joined by ``|``); lines starting with ``#`` (``#begin document``/``#end document``) and
blank lines (sentence breaks) hold no token. Mentions are spans of token positions counted over the document.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .core_checks import check_list, check_same_length
from .core_inputs import Columns, InputKind

_DOUBLE_ANTECEDENT = re.compile(r"\(\d+\+\d\)")
_SINGLE = re.compile(r"\((\d+)\)")
_OPEN = re.compile(r"\((\d+)")
_CLOSE = re.compile(r"(\d+)\)")


def _features(config_name: str) -> list[Any]:
    import datasets

    entities = datasets.Sequence(datasets.Sequence(datasets.Sequence(datasets.Value("int64"))))
    lines = datasets.Sequence(datasets.Value("string"))
    return [datasets.Features({"predictions": entities, "references": entities}),
            datasets.Features({"predictions": lines, "references": lines})]


def entities_from_conll(metric: str, argument: str, lines: Sequence[Any]) -> list[list[list[int]]]:
    """The entities of one document's CoNLL lines, mentions as [start, end], read as the reference scorer reads
    them: double antecedents ``(N+M)`` dropped, then one-token mentions, openings and closings taken in that order;
    entities in order of first appearance; a span mentioned again (``(1(1 ... 1)1)``) kept once, at its first
    place (the scorer drops repeated mentions)."""
    entities: dict[str, list[list[int]]] = {}
    open_mentions: dict[str, list[int]] = {}
    token = 0
    for number, line in enumerate(lines, start=1):
        if not isinstance(line, str):
            raise TypeError(f"{metric}: `{argument}` line {number} must be a string, got {type(line).__name__}")
        if line.startswith("#") or not line.strip():
            continue
        column = _DOUBLE_ANTECEDENT.sub("", line.split()[-1])
        for single in _SINGLE.findall(column):
            entities.setdefault(single, []).append([token, token])
        column = _SINGLE.sub("", column)
        for opened in _OPEN.findall(column):
            entities.setdefault(opened, [])
            open_mentions.setdefault(opened, []).append(token)
        column = _OPEN.sub("", column)
        for closed in _CLOSE.findall(column):
            if not open_mentions.get(closed):
                raise ValueError(f"{metric}: `{argument}` line {number}: entity {closed} closes a mention that "
                                 f"was never opened")
            entities[closed].append([open_mentions[closed].pop(), token])
        if _CLOSE.sub("", column).strip("|-_"):
            raise ValueError(f"{metric}: `{argument}` line {number}: malformed coreference column "
                             f"{line.split()[-1]!r:.60} (expected '(N', 'N)', '(N)', several joined by '|', or '-')")
        token += 1
    unclosed = sorted(entity for entity, starts in open_mentions.items() if starts)
    if unclosed:
        raise ValueError(f"{metric}: `{argument}` ends with mentions of entities {unclosed} never closed")
    seen: set[tuple[int, int]] = set()
    unique = []
    for mentions in entities.values():
        kept = [mention for mention in mentions if tuple(mention) not in seen and not seen.add(tuple(mention))]
        if kept:
            unique.append(kept)
    return unique


def _checked_entities(metric: str, argument: str, entities: Any) -> list[list[list[int]]]:
    """Entities as lists of [start, end] integer spans, each mention in at most one entity."""
    seen: dict[tuple[int, int], int] = {}
    checked = []
    for index, entity in enumerate(check_list(metric, argument, entities, what="entities", allow_empty=True)):
        mentions = []
        for position, mention in enumerate(check_list(metric, f"{argument}[{index}]", entity, what="mentions")):
            name = f"{argument}[{index}][{position}]"
            if (isinstance(mention, str) or not hasattr(mention, "__len__") or len(mention) != 2
                    or not all(isinstance(bound, int) and not isinstance(bound, bool) for bound in mention)):
                raise TypeError(f"{metric}: `{name}` must be a mention [start, end] of two integer token positions, "
                                f"got {mention!r:.60}")
            start, end = int(mention[0]), int(mention[1])
            if not 0 <= start <= end:
                raise ValueError(f"{metric}: `{name}` is the span [{start}, {end}]; a mention needs "
                                 f"0 <= start <= end")
            if (start, end) in seen:
                raise ValueError(f"{metric}: `{name}` [{start}, {end}] is also a mention of entity "
                                 f"{seen[(start, end)]}; a mention belongs to one entity")
            seen[(start, end)] = index
            mentions.append([start, end])
        checked.append(mentions)
    return checked


def _document(metric: str, argument: str, value: Any) -> list[list[list[int]]]:
    if isinstance(value, str):
        raise TypeError(f"{metric}: `{argument}` must be a document (a list of CoNLL lines, or of entities), got "
                        f"a string; put a document's lines in a list")
    items = check_list(metric, argument, value, what="CoNLL lines or entities", allow_empty=True)
    if items and all(isinstance(item, str) for item in items):
        return _checked_entities(metric, argument, entities_from_conll(metric, argument, items))
    return _checked_entities(metric, argument, items)


def _check_documents(metric: str, given: Mapping[str, Any], allow_empty: bool) -> Columns:
    columns = {}
    for name in ("predictions", "references"):
        documents = check_list(metric, name, given.get(name), what="documents", allow_empty=allow_empty)
        columns[name] = [_document(metric, f"{name}[{index}]", document) for index, document in enumerate(documents)]
    check_same_length(metric, ("predictions", len(columns["predictions"])), ("references", len(columns["references"])))
    return columns


COREF_DOCUMENTS = InputKind("coreference documents", ("predictions", "references"), _features, _check_documents)
