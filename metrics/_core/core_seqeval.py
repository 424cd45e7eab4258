"""Span-level precision, recall and F1 of tag sequences, as seqeval computes them, from per-example statistics.

Two ways to find entities, both seqeval's:

* the default (lenient, conlleval-compatible) mode, seqeval's ``get_entities``:
  the sequences of a corpus are read as one sequence with an ``"O"`` between
  sentences; each tag is a prefix character (the first one, or the last with
  ``suffix=True``) and a type (the rest after the first ``-``); a chunk ends
  and starts on the transitions of conlleval's rules, and an entity is
  reported, with the type of its last token, where a chunk ends. ``scheme``
  is not used (as in seqeval and evaluate's module).
* ``mode="strict"``, seqeval's ``Entities``: each sentence on its own; tokens
  are prefix letters of a tagging scheme (IOB1, IOB2, IOE1, IOE2, IOBES, BILOU)
  and an entity is a start token, its inside tokens and a valid end, with the
  start token's type. Without ``scheme`` the scheme is detected, as seqeval
  does, from the prefixes of all references (IOB2, IOE2, IOBES or BILOU); the
  statistics then hold the counts under each of these four, and the score uses
  the detected one, so shards merge exactly.

Both are computed per batch with numpy: every tag is coded once, each
transition is looked up in a table derived from seqeval's rules, and entities
of the references and predictions are matched by position and type.

Statistics of one example: ``tokens`` and ``correct`` (token accuracy), and
keyed counts per entity type ``true``, ``pred`` and ``tp``; ``non_entity_tags``
counts tags seqeval warns are not NE tags (lenient mode); with strict mode and
no scheme, ``reference_prefixes`` and ``invalid`` (predicted prefixes a
candidate scheme does not allow). ``sample_weight`` is checked (one finite,
non-negative number per sentence) and, as in seqeval 1.2.2, changes no score:
the package passes it on only to an average (``"samples"``) that its reports
never compute, so a warning says that it is ignored.

One difference of the lenient mode cannot be made order-independent: seqeval
joins sentences with ``"O"``, which does not end a chunk whose tags have no
type and no known prefix (tags such as ``"X"``, which seqeval warns about), so
such an entity can begin in an earlier sentence. Entities are found per batch
here, so in such input an entity never spans two batches; every sentence of a
``compute`` given its inputs at once is one batch, which gives seqeval's
numbers exactly.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from .core_checks import warn_caller
from .core_options import MetricOptions, boolean, choice, option, optional
from .core_stats import EXAMPLES_FIELD, SIGNATURE_FIELD, StatField, StatsSchema

SCHEMES = ("IOB1", "IOB2", "IOE1", "IOE2", "IOBES", "BILOU")
DETECTABLE_SCHEMES = ("IOB2", "IOE2", "IOBES", "BILOU")
MODES = ("strict",)
ZERO_DIVISION_VALUES = ("warn", 0, 1)


class UndefinedMetricWarning(UserWarning):
    """A precision or recall is 0/0 and was set by ``zero_division`` (seqeval's warning of the same name)."""


class NotEntityTagWarning(UserWarning):
    """Tags that seqeval warns 'seem not to be NE tags' (one warning per computation here)."""


# -- options -------------------------------------------------------------------------------------------------


def _zero_division(metric: str, name: str, value: Any) -> Any:
    if isinstance(value, str) and value == "warn":
        return value
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and value in (0, 1):
        return int(value)
    raise ValueError(f"{metric}: unknown `{name}` {value!r}; valid values are 'warn', 0 and 1")


def _sample_weight(metric: str, name: str, value: Any) -> tuple[float, ...] | None:
    if value is None:
        return None
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__len__"):
        raise TypeError(f"{metric}: `{name}` must be a list of numbers, one per sequence, got {type(value).__name__}")
    weights = []
    for index, weight in enumerate(value.tolist() if hasattr(value, "tolist") else value):
        if isinstance(weight, bool) or not isinstance(weight, numbers.Real):
            raise TypeError(f"{metric}: `{name}[{index}]` must be a number, got {type(weight).__name__} ({weight!r:.60})")
        weight = float(weight)
        if not math.isfinite(weight) or weight < 0:
            raise ValueError(f"{metric}: `{name}[{index}]` is {weight}; weights must be finite and non-negative")
        weights.append(weight)
    return tuple(weights)


@dataclass(frozen=True)
class SeqevalOptions(MetricOptions):
    """evaluate's ``seqeval`` options."""

    metric_name = "seqeval"

    suffix: bool = option(False, boolean, stats=True)
    scheme: str | None = option(None, optional(choice(*SCHEMES)), stats=True)
    mode: str | None = option(None, optional(choice(*MODES)), stats=True)
    sample_weight: tuple[float, ...] | None = option(None, _sample_weight)
    zero_division: Any = option("warn", _zero_division)

    @property
    def strict(self) -> bool:
        return self.mode == "strict"

    def stats_signature(self) -> str:
        """Names what the statistics depend on: ``scheme`` only in strict mode (the lenient mode ignores it)."""
        scheme = (self.scheme or "detected") if self.strict else "unused"
        return f"{self.metric_name}|suffix:{self.suffix}|mode:{self.mode or 'default'}|scheme:{scheme}"


# -- the rules, derived from seqeval's -------------------------------------------------------------------------

# Lenient mode: categories of the prefix character.
_B, _I, _E, _S, _O, _DOT, _OTHER = range(7)
_CATEGORY_OF_CHARACTER = {"B": _B, "I": _I, "E": _E, "S": _S, "O": _O, ".": _DOT}
_CHARACTER_OF_CATEGORY = ("B", "I", "E", "S", "O", ".", "X")


def _conll_end(prev_tag: str, tag: str, prev_type: str, type_: str) -> bool:
    """seqeval's ``end_of_chunk``."""
    end = prev_tag in ("E", "S")
    end = end or (prev_tag in ("B", "I") and tag in ("B", "S", "O"))
    return end or (prev_tag not in ("O", ".") and prev_type != type_)


def _conll_start(prev_tag: str, tag: str, prev_type: str, type_: str) -> bool:
    """seqeval's ``start_of_chunk``."""
    start = tag in ("B", "S")
    start = start or (prev_tag in ("E", "S", "O") and tag in ("E", "I"))
    return start or (tag not in ("O", ".") and prev_type != type_)


def _lenient_tables() -> tuple[np.ndarray, np.ndarray]:
    end = np.zeros((7, 7, 2), dtype=bool)
    start = np.zeros((7, 7, 2), dtype=bool)
    for prev in range(7):
        for current in range(7):
            for differ in (0, 1):
                arguments = (_CHARACTER_OF_CATEGORY[prev], _CHARACTER_OF_CATEGORY[current], "a", "b" if differ else "a")
                end[prev, current, differ] = _conll_end(*arguments)
                start[prev, current, differ] = _conll_start(*arguments)
    return end, start


_LENIENT_END, _LENIENT_START = _lenient_tables()

# Strict mode: seqeval.scheme's patterns (previous prefixes, current prefixes, type condition); '*' is any prefix.
PREFIXES = "IOBESUL"
_ANY = PREFIXES
_STRICT_RULES: dict[str, dict[str, Any]] = {
    "IOB1": {"allowed": "IOB",
             "start": (("O", "I", "any"), ("I", "I", "diff"), ("B", "I", "any"), ("I", "B", "same"), ("B", "B", "same")),
             "inside": (("B", "I", "same"), ("I", "I", "same")),
             "end": (("I", "I", "diff"), ("I", "O", "any"), ("I", "B", "any"), ("B", "O", "any"), ("B", "I", "diff"),
                     ("B", "B", "same"))},
    "IOE1": {"allowed": "IOE",
             "start": (("O", "I", "any"), ("I", "I", "diff"), ("E", "I", "any"), ("E", "E", "same")),
             "inside": (("I", "I", "same"), ("I", "E", "same")),
             "end": (("I", "I", "diff"), ("I", "O", "any"), ("I", "E", "diff"), ("E", "I", "same"), ("E", "E", "same"))},
    "IOB2": {"allowed": "IOB",
             "start": ((_ANY, "B", "any"),),
             "inside": (("B", "I", "same"), ("I", "I", "same")),
             "end": (("I", "O", "any"), ("I", "I", "diff"), ("I", "B", "any"), ("B", "O", "any"), ("B", "I", "diff"),
                     ("B", "B", "any"))},
    "IOE2": {"allowed": "IOE",
             "start": (("O", "I", "any"), ("O", "E", "any"), ("E", "I", "any"), ("E", "E", "any"), ("I", "I", "diff"),
                       ("I", "E", "diff")),
             "inside": (("I", "E", "same"), ("I", "I", "same")),
             "end": (("E", _ANY, "any"),)},
    "IOBES": {"allowed": "IOBES",
              "start": ((_ANY, "B", "any"), (_ANY, "S", "any")),
              "inside": (("B", "I", "same"), ("B", "E", "same"), ("I", "I", "same"), ("I", "E", "same")),
              "end": (("S", _ANY, "any"), ("E", _ANY, "any"))},
    "BILOU": {"allowed": "BILOU",
              "start": ((_ANY, "B", "any"), (_ANY, "U", "any")),
              "inside": (("B", "I", "same"), ("B", "L", "same"), ("I", "I", "same"), ("I", "L", "same")),
              "end": (("U", _ANY, "any"), ("L", _ANY, "any"))},
}

# seqeval.scheme.auto_detect: the reference prefix sets each detectable scheme accepts, in the order tried.
_DETECTION = {
    "IOB2": ("IOB", "IB", "BO", "B"),
    "IOE2": ("IOE", "IE", "EO", "E"),
    "IOBES": ("IOBES", "IBES", "IOBE", "OBES", "IBE", "BES", "OBE", "BE", "S"),
    "BILOU": ("IOBLU", "IBLU", "IOBL", "OBLU", "IBL", "BLU", "OBL", "BL", "U"),
}


@dataclass(frozen=True)
class _StrictTables:
    allowed: np.ndarray  # [prefix] bool
    start: np.ndarray  # [prev prefix, prefix, same type] bool
    inside: np.ndarray
    end: np.ndarray


def _strict_tables(scheme: str) -> _StrictTables:
    rules = _STRICT_RULES[scheme]
    tables = {}
    for kind in ("start", "inside", "end"):
        table = np.zeros((7, 7, 2), dtype=bool)
        for previous, current, condition in rules[kind]:
            for p in previous:
                for c in current:
                    for same in (0, 1):
                        if condition == "any" or (condition == "same") == bool(same):
                            table[PREFIXES.index(p), PREFIXES.index(c), same] = True
        tables[kind] = table
    allowed = np.array([letter in rules["allowed"] for letter in PREFIXES])
    return _StrictTables(allowed, tables["start"], tables["inside"], tables["end"])


_STRICT_TABLES = {scheme: _strict_tables(scheme) for scheme in SCHEMES}


def detect_scheme(prefixes: set[str], metric: str = "seqeval") -> str:
    """The scheme seqeval's ``auto_detect`` picks for the set of reference prefix letters, or a ValueError."""
    for scheme, accepted in _DETECTION.items():
        if any(prefixes == set(letters) for letters in accepted):
            return scheme
    found = "{" + ", ".join(sorted(prefixes)) + "}" if prefixes else "no tags at all"
    raise ValueError(
        f"{metric}: mode='strict' without `scheme` detects the scheme from the references' prefixes, and "
        f"{found} fits none of {', '.join(DETECTABLE_SCHEMES)} (seqeval: 'This scheme is not supported'); "
        f"pass scheme=... explicitly"
    )


def is_entity_tag(tag: str, suffix: bool) -> bool:
    """Whether seqeval accepts ``tag`` without warning that it 'seems not to be NE tag'."""
    if tag in ("O", "B", "I", "E", "S"):
        return True
    return tag.endswith(("-B", "-I", "-E", "-S")) if suffix else tag.startswith(("B-", "I-", "E-", "S-"))


def conll_parts(tag: str, suffix: bool) -> tuple[str, str]:
    """(prefix character, type) of a tag as seqeval's ``get_entities`` reads it."""
    if suffix:
        return tag[-1], tag[:-1].rsplit("-", maxsplit=1)[0] or "_"
    return tag[0], tag[1:].split("-", maxsplit=1)[-1] or "_"


def scheme_parts(tag: str, suffix: bool) -> tuple[str, str]:
    """(prefix letter, type) of a tag as seqeval's strict ``Token`` reads it."""
    if suffix:
        return tag[-1], tag[:-1].strip("-") or "_"
    return tag[0], tag[1:].strip("-") or "_"


# -- entities of a batch --------------------------------------------------------------------------------------


@dataclass
class _Layout:
    """The sentences of a batch laid out as one array: a separator, then each sentence followed by one."""

    size: int  # number of sentences
    lengths: np.ndarray
    tags: list[str]  # distinct tags, by code
    reference_codes: np.ndarray  # [positions] codes, separators included
    prediction_codes: np.ndarray
    sentence_at: np.ndarray  # [positions] the sentence of each position (the leading separator: 0)
    token_positions: np.ndarray  # [tokens] position of each token


_SEPARATOR = "O"


def _layout(predictions: Sequence[Sequence[str]], references: Sequence[Sequence[str]]) -> _Layout:
    lengths = np.fromiter(map(len, references), dtype=np.int64, count=len(references))
    distinct = dict.fromkeys(chain.from_iterable(references))
    distinct.update(dict.fromkeys(chain.from_iterable(predictions)))
    distinct.setdefault(_SEPARATOR, None)
    tags = list(distinct)
    code = {tag: index for index, tag in enumerate(tags)}
    tokens = int(lengths.sum())
    size = len(references)
    positions = tokens + size + 1
    sentence_of_token = np.repeat(np.arange(size, dtype=np.int64), lengths)
    token_positions = 1 + np.arange(tokens, dtype=np.int64) + sentence_of_token
    columns = []
    for sequences in (references, predictions):
        codes = np.full(positions, code[_SEPARATOR], dtype=np.int64)
        codes[token_positions] = np.fromiter(map(code.__getitem__, chain.from_iterable(sequences)), dtype=np.int64,
                                             count=tokens)
        columns.append(codes)
    sentence_at = np.concatenate(([0], np.repeat(np.arange(size, dtype=np.int64), lengths + 1)))
    return _Layout(size, lengths, tags, columns[0], columns[1], sentence_at, token_positions)


@dataclass
class _Entities:
    """Entities of one side: their sentence and type id, and (references only) whether predicted too."""

    sentence: np.ndarray
    type_id: np.ndarray
    matched: np.ndarray | None = None


def _conll_entities(codes: np.ndarray, category_of: np.ndarray, type_of: np.ndarray, initial_type: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(begin, end, type id) of every entity seqeval's ``get_entities`` reports for the laid-out sequence."""
    category = category_of[codes]
    type_ids = type_of[codes].copy()
    type_ids[0] = initial_type  # seqeval's first previous type is '' (no tag has it)
    previous_category = np.empty_like(category)
    previous_category[0] = _O
    previous_category[1:] = category[:-1]
    previous_type = np.empty_like(type_ids)
    previous_type[0] = initial_type
    previous_type[1:] = type_ids[:-1]
    differ = (previous_type != type_ids).astype(np.int64)
    ends = _LENIENT_END[previous_category, category, differ]
    starts = _LENIENT_START[previous_category, category, differ]
    ends[0] = starts[0] = False
    end_at = np.flatnonzero(ends)
    start_at = np.flatnonzero(starts)
    last_start = np.searchsorted(start_at, end_at, side="left") - 1
    begin = np.where(last_start >= 0, start_at[np.maximum(last_start, 0)] if start_at.size else 1, 1)
    return begin, end_at - 1, type_ids[end_at - 1]


def _strict_entities(codes: np.ndarray, prefix_of: np.ndarray, type_of: np.ndarray, tables: _StrictTables
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start, end, type id) of every entity of seqeval's strict ``Tokens.entities``, sentence by sentence."""
    prefix = prefix_of[codes]
    type_ids = type_of[codes]
    previous_prefix = np.empty_like(prefix)
    previous_prefix[0] = PREFIXES.index("O")
    previous_prefix[1:] = prefix[:-1]
    same = np.empty(len(codes), dtype=np.int64)
    same[0] = 0
    same[1:] = type_ids[1:] == type_ids[:-1]
    starts = tables.start[previous_prefix, prefix, same]
    inside = tables.inside[previous_prefix, prefix, same]
    ends = tables.end[previous_prefix, prefix, same]
    starts[0] = inside[0] = False
    heads = np.flatnonzero(~inside)
    segment = np.cumsum(~inside) - 1
    start_at = np.flatnonzero(starts)
    if not start_at.size:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    first = np.ones(start_at.size, dtype=bool)
    first[1:] = segment[start_at[1:]] != segment[start_at[:-1]]
    start_at = start_at[first]
    end_at = heads[np.searchsorted(heads, start_at, side="right")]
    valid = ends[end_at]
    start_at, end_at = start_at[valid], end_at[valid]
    return start_at, end_at, type_ids[start_at]


def _match(reference: tuple[np.ndarray, ...], prediction: tuple[np.ndarray, ...], positions: int) -> np.ndarray:
    """Whether each reference entity is also a predicted entity (same first position, last position, type).

    ``reference``/``prediction`` are (key position, other position, type); each side has at most one entity per
    key position."""
    other_at = np.full(positions, -1, dtype=np.int64)
    type_at = np.full(positions, -1, dtype=np.int64)
    other_at[prediction[0]] = prediction[1]
    type_at[prediction[0]] = prediction[2]
    return (other_at[reference[0]] == reference[1]) & (type_at[reference[0]] == reference[2])


@dataclass
class BatchCounts:
    """Everything the statistics of a batch are made of."""

    size: int
    lengths: np.ndarray  # tokens per sentence
    correct: np.ndarray  # correct tokens per sentence
    type_names: list[Any]  # type keys by id (strings, or (scheme, type) with a detected scheme)
    reference: _Entities
    prediction: _Entities
    non_entity_tags: dict[str, Occurrences]  # tag -> its (sentences, counts) (lenient mode)
    reference_prefixes: dict[str, Occurrences]  # prefix -> its (sentences, counts) in the references (detected scheme)
    invalid: dict[tuple[str, str], Occurrences]  # (scheme, prefix) -> its (sentences, counts) in the predictions


def _empty_tag_error(metric: str, predictions: Sequence[Sequence[str]], references: Sequence[Sequence[str]]) -> None:
    for argument, sequences in (("references", references), ("predictions", predictions)):
        for index, sequence in enumerate(sequences):
            for position, tag in enumerate(sequence):
                if tag == "":
                    raise ValueError(f"{metric}: `{argument}[{index}][{position}]` is an empty tag; a tag needs at "
                                     f"least a prefix character (seqeval fails with IndexError)")


def _first_tag(metric: str, predictions: Sequence[Sequence[str]], references: Sequence[Sequence[str]],
               wanted: Any, start: int) -> tuple[str, int, int, str]:
    for argument, sequences in (("references", references), ("predictions", predictions)):
        for index, sequence in enumerate(sequences):
            for position, tag in enumerate(sequence):
                if wanted(tag):
                    return argument, start + index, position, tag
    raise AssertionError("no such tag")  # pragma: no cover - called only when one exists


# Occurrences of one key (a tag, a prefix, a scheme's invalid prefix) in a batch, sparse: (sentences, counts) of the
# sentences where it occurs (a sentence may appear more than once; its counts then add up).
Occurrences = tuple[np.ndarray, np.ndarray]


def _occurrences(codes: np.ndarray, layout: _Layout, selected: np.ndarray) -> dict[int, Occurrences]:
    """code -> its occurrences (sentences, counts), for the codes flagged in ``selected`` (token positions only).

    One sort of (code, sentence) keys: linear in the tokens (times a log), whatever the number of distinct tags, where
    a dense count per tag and sentence would be distinct tags x sentences."""
    token_codes = codes[layout.token_positions]
    picked = selected[token_codes]
    if not picked.any():
        return {}
    sentences = layout.sentence_at[layout.token_positions][picked]
    chosen = token_codes[picked]
    keys, counts = np.unique(chosen * np.int64(max(layout.size, 1)) + sentences, return_counts=True)
    owners, where = np.divmod(keys, np.int64(max(layout.size, 1)))
    bounds = np.flatnonzero(np.diff(owners)) + 1
    firsts = np.concatenate(([0], bounds))
    return dict(zip(owners[firsts].tolist(), zip(np.split(where, bounds), np.split(counts, bounds), strict=True),
                    strict=True))


def _gather(pieces: Mapping[Any, list[Occurrences]]) -> dict[Any, Occurrences]:
    """Each key's pieces of occurrences joined once (in the keys' order of first insertion)."""
    return {key: (np.concatenate([sentences for sentences, _ in parts]), np.concatenate([counts for _, counts in parts]))
            for key, parts in pieces.items()}


def seqeval_counts(predictions: Sequence[Sequence[str]], references: Sequence[Sequence[str]],
                   options: SeqevalOptions, *, start: int = 0, metric: str = "seqeval") -> BatchCounts:
    """Entities, matches and token counts of a batch of checked tag sequences (same lengths pairwise)."""
    layout = _layout(predictions, references)
    tags = layout.tags
    if "" in tags:
        _empty_tag_error(metric, predictions, references)
    token_positions = layout.token_positions
    same = layout.reference_codes[token_positions] == layout.prediction_codes[token_positions]
    correct = np.bincount(layout.sentence_at[token_positions][same], minlength=layout.size)
    type_index: dict[Any, int] = {}
    non_entity: dict[str, list[Occurrences]] = {}
    reference_prefixes: dict[str, list[Occurrences]] = {}
    invalid: dict[tuple[str, str], list[Occurrences]] = {}
    if not options.strict:
        parts = [conll_parts(tag, options.suffix) for tag in tags]
        category_of = np.array([_CATEGORY_OF_CHARACTER.get(character, _OTHER) for character, _ in parts])
        type_of = np.array([type_index.setdefault(type_, len(type_index)) for _, type_ in parts])
        initial = len(type_index)  # seqeval's '' (no tag's type)
        sides = []
        for codes in (layout.reference_codes, layout.prediction_codes):
            begin, end, type_ids = _conll_entities(codes, category_of, type_of, initial)
            sides.append((end, begin, type_ids))
        flagged = np.array([not is_entity_tag(tag, options.suffix) for tag in tags])
        if flagged.any():
            for codes in (layout.reference_codes, layout.prediction_codes):
                for tag_code, found in _occurrences(codes, layout, flagged).items():
                    non_entity.setdefault(tags[tag_code], []).append(found)
        reference_entities, prediction_entities = sides
        matched = _match(reference_entities, prediction_entities, len(layout.reference_codes))
        names = list(type_index)
        return BatchCounts(
            layout.size, layout.lengths, correct, names,
            _Entities(layout.sentence_at[reference_entities[0]], reference_entities[2], matched),
            _Entities(layout.sentence_at[prediction_entities[0]], prediction_entities[2]),
            _gather(non_entity), {}, {},
        )
    parts = [scheme_parts(tag, options.suffix) for tag in tags]
    unknown = np.array([letter not in PREFIXES for letter, _ in parts])
    if unknown.any():
        argument, index, position, tag = _first_tag(
            metric, predictions, references, lambda tag: scheme_parts(tag, options.suffix)[0] not in PREFIXES, start)
        raise ValueError(
            f"{metric}: `{argument}[{index}][{position}]` is {tag!r}, whose prefix {scheme_parts(tag, options.suffix)[0]!r} "
            f"is none of the scheme prefixes {', '.join(PREFIXES)} (mode='strict'; seqeval fails with KeyError)"
        )
    prefix_of = np.array([PREFIXES.index(letter) for letter, _ in parts])
    tag_types = [type_ for _, type_ in parts]
    schemes = (options.scheme,) if options.scheme else DETECTABLE_SCHEMES
    reference_sentences, reference_types, prediction_sentences, prediction_types, matches = [], [], [], [], []
    for scheme in schemes:
        tables = _STRICT_TABLES[scheme]
        disallowed = ~tables.allowed[prefix_of]
        if options.scheme:
            if disallowed.any():
                argument, index, position, tag = _first_tag(
                    metric, predictions, references,
                    lambda tag: not tables.allowed[PREFIXES.index(scheme_parts(tag, options.suffix)[0])], start)
                allowed = ", ".join(letter for letter in PREFIXES if letter in _STRICT_RULES[scheme]["allowed"])
                raise ValueError(
                    f"{metric}: `{argument}[{index}][{position}]` is {tag!r}, whose prefix "
                    f"{scheme_parts(tag, options.suffix)[0]!r} the scheme {scheme} does not allow (allowed: {allowed})"
                )
            type_of = np.array([type_index.setdefault(type_, len(type_index)) for type_ in tag_types])
        else:
            for tag_code, found in _occurrences(layout.prediction_codes, layout, disallowed).items():
                invalid.setdefault((scheme, parts[tag_code][0]), []).append(found)
            type_of = np.array([type_index.setdefault((scheme, type_), len(type_index)) for type_ in tag_types])
        sides = [_strict_entities(codes, prefix_of, type_of, tables)
                 for codes in (layout.reference_codes, layout.prediction_codes)]
        matches.append(_match(sides[0], sides[1], len(layout.reference_codes)))
        reference_sentences.append(layout.sentence_at[sides[0][0]])
        reference_types.append(sides[0][2])
        prediction_sentences.append(layout.sentence_at[sides[1][0]])
        prediction_types.append(sides[1][2])
    if not options.scheme:
        every = np.ones(len(tags), dtype=bool)
        for tag_code, found in _occurrences(layout.reference_codes, layout, every).items():
            reference_prefixes.setdefault(parts[tag_code][0], []).append(found)
    return BatchCounts(
        layout.size, layout.lengths, correct, list(type_index),
        _Entities(np.concatenate(reference_sentences), np.concatenate(reference_types), np.concatenate(matches)),
        _Entities(np.concatenate(prediction_sentences), np.concatenate(prediction_types)),
        {}, _gather(reference_prefixes), _gather(invalid),
    )


# -- statistics ---------------------------------------------------------------------------------------------


def seqeval_schema(metric: str, options: SeqevalOptions) -> StatsSchema:
    """Token counts, keyed entity counts per type, non-NE tag counts and (detected scheme) prefix counts."""
    return StatsSchema(metric, (
        StatField("tokens"), StatField("correct"),
        StatField("true", "keyed"), StatField("pred", "keyed"), StatField("tp", "keyed"),
        StatField("non_entity_tags", "keyed"), StatField("reference_prefixes", "keyed"), StatField("invalid", "keyed"),
    ))


def _per_type(entities: _Entities, count: int, selected: np.ndarray | None = None) -> np.ndarray:
    types = entities.type_id if selected is None else entities.type_id[selected]
    return np.bincount(types, minlength=count)


def seqeval_rows(counts: BatchCounts, options: SeqevalOptions, start: int = 0) -> list[tuple]:
    """One row per sentence of the batch, in schema order."""
    names = counts.type_names
    rows_true: list[dict] = [{} for _ in range(counts.size)]
    rows_pred: list[dict] = [{} for _ in range(counts.size)]
    rows_tp: list[dict] = [{} for _ in range(counts.size)]
    for entities, target in ((counts.reference, rows_true), (counts.prediction, rows_pred)):
        for sentence, type_id in zip(entities.sentence.tolist(), entities.type_id.tolist(), strict=True):
            key = names[type_id]
            target[sentence][key] = target[sentence].get(key, 0) + 1
    for sentence, type_id in zip(counts.reference.sentence[counts.reference.matched].tolist(),
                                 counts.reference.type_id[counts.reference.matched].tolist(), strict=True):
        key = names[type_id]
        rows_tp[sentence][key] = rows_tp[sentence].get(key, 0) + 1
    sparse: list[list[dict[Any, int]]] = []
    for occurrences in (counts.non_entity_tags, counts.reference_prefixes, counts.invalid):
        per_sentence: list[dict[Any, int]] = [{} for _ in range(counts.size)]
        for key, (sentences, amounts) in occurrences.items():
            for sentence, number in zip(sentences.tolist(), amounts.tolist(), strict=True):
                per_sentence[sentence][key] = per_sentence[sentence].get(key, 0) + number
        sparse.append(per_sentence)
    rows = []
    lengths, correct = counts.lengths.tolist(), counts.correct.tolist()
    for sentence in range(counts.size):
        keys = {**rows_true[sentence], **rows_pred[sentence]}
        true = {key: rows_true[sentence].get(key, 0) for key in keys}
        pred = {key: rows_pred[sentence].get(key, 0) for key in keys}
        tp = {key: rows_tp[sentence].get(key, 0) for key in keys}
        tokens, right = lengths[sentence], correct[sentence]
        rows.append((
            tokens, right, true, pred, tp, sparse[0][sentence], sparse[1][sentence], sparse[2][sentence],
        ))
    return rows


def seqeval_batch_totals(counts: BatchCounts, options: SeqevalOptions, signature: str) -> dict[str, Any] | None:
    """Totals of a whole batch at once, equal to summing its rows."""
    size = len(counts.type_names)
    true = _per_type(counts.reference, size)
    pred = _per_type(counts.prediction, size)
    tp = _per_type(counts.reference, size, counts.reference.matched)
    present = np.flatnonzero((true > 0) | (pred > 0)).tolist()
    names = counts.type_names
    return {
        "tokens": int(counts.lengths.sum()), "correct": int(counts.correct.sum()),
        "true": {names[i]: int(true[i]) for i in present}, "pred": {names[i]: int(pred[i]) for i in present},
        "tp": {names[i]: int(tp[i]) for i in present},
        "non_entity_tags": {tag: int(amounts.sum()) for tag, (_, amounts) in counts.non_entity_tags.items()},
        "reference_prefixes": {letter: int(amounts.sum()) for letter, (_, amounts) in counts.reference_prefixes.items()},
        "invalid": {key: int(amounts.sum()) for key, (_, amounts) in counts.invalid.items()},
        EXAMPLES_FIELD: len(counts.lengths),
        SIGNATURE_FIELD: signature,
    }


# -- scores -------------------------------------------------------------------------------------------------


def _ratio(numerator: float, denominator: float, zero_division: Any) -> tuple[float, bool]:
    if denominator == 0:
        return (1.0 if zero_division == 1 else 0.0), True
    return numerator / denominator, False


def _f1(precision: float, recall: float) -> float:
    denominator = 1.0 * precision + recall
    return (1 + 1.0) * precision * recall / (denominator if denominator != 0.0 else 1)


def seqeval_from_totals(totals: Mapping[str, Any], options: SeqevalOptions, metric: str = "seqeval") -> dict[str, Any]:
    """evaluate's ``seqeval`` result: per type {precision, recall, f1, number}, then overall precision, recall,
    F1 and token accuracy; at most one warning (ill-defined scores, tags that are not NE tags)."""
    true, pred, tp = totals["true"], totals["pred"], totals["tp"]
    if options.strict and not options.scheme:
        scheme = detect_scheme(set(totals["reference_prefixes"]), metric)
        bad = {letter: count for (candidate, letter), count in totals["invalid"].items() if candidate == scheme}
        if bad:
            found = ", ".join(f"{letter!r} ({count} tags)" for letter, count in sorted(bad.items()))
            raise ValueError(
                f"{metric}: the references' prefixes give the scheme {scheme} (mode='strict', scheme=None), which does "
                f"not allow the predicted prefixes {found}; pass the predictions' scheme explicitly"
            )
        true, pred, tp = ({key[1]: value for key, value in mapping.items() if key[0] == scheme}
                          for mapping in (true, pred, tp))
    if not totals["tokens"]:
        raise ValueError(f"{metric}: there is no tag to score (every sequence is empty); token "
                         f"accuracy is undefined (seqeval fails with ZeroDivisionError)")
    zero_division = options.zero_division
    result: dict[str, Any] = {}
    no_predicted, no_true = [], []
    for name in sorted(set(true) | set(pred)):
        precision, undefined_precision = _ratio(tp.get(name, 0), pred.get(name, 0), zero_division)
        recall, undefined_recall = _ratio(tp.get(name, 0), true.get(name, 0), zero_division)
        if undefined_precision:
            no_predicted.append(name)
        if undefined_recall:
            no_true.append(name)
        result[name] = {"precision": precision, "recall": recall, "f1": _f1(precision, recall),
                        "number": true.get(name, 0)}
    tp_sum, pred_sum, true_sum = (_sum(mapping) for mapping in (tp, pred, true))
    precision, undefined_precision = _ratio(tp_sum, pred_sum, zero_division)
    recall, undefined_recall = _ratio(tp_sum, true_sum, zero_division)
    result["overall_precision"] = precision
    result["overall_recall"] = recall
    result["overall_f1"] = _f1(precision, recall)
    tokens = totals["tokens"]
    result["overall_accuracy"] = totals["correct"] / tokens
    messages = []
    if zero_division == "warn":
        if undefined_precision or no_predicted:
            where = "overall (no predicted entities)" if undefined_precision else ""
            types = f"for the types {_names(no_predicted)} (no predicted entity of the type)" if no_predicted else ""
            messages.append(f"precision is ill-defined and set to 0.0 {' and '.join(part for part in (where, types) if part)}")
        if undefined_recall or no_true:
            where = "overall (no true entities)" if undefined_recall else ""
            types = f"for the types {_names(no_true)} (no true entity of the type)" if no_true else ""
            messages.append(f"recall is ill-defined and set to 0.0 {' and '.join(part for part in (where, types) if part)}")
    undefined = bool(messages)
    non_entity = totals["non_entity_tags"]
    if non_entity:
        shown = ", ".join(f"{tag!r} ({count})" for tag, count in sorted(non_entity.items(), key=lambda item: -item[1])[:5])
        more = f" and {len(non_entity) - 5} more" if len(non_entity) > 5 else ""
        messages.append(f"{sum(non_entity.values())} tags seem not to be NE tags (B-/I-/E-/S- prefix or 'O'): "
                        f"{shown}{more}")
    if options.sample_weight is not None:
        messages.append("`sample_weight` is ignored: it changes none of these scores in seqeval 1.2.2 either")
    if messages:
        category = UndefinedMetricWarning if undefined else NotEntityTagWarning if non_entity else UserWarning
        advice = "; use `zero_division` to control ill-defined scores" if undefined else ""
        warn_caller(f"{metric}: " + "; ".join(messages) + advice, category)
    return result


def _sum(mapping: Mapping[str, Any]) -> Any:
    values = list(mapping.values())
    if any(isinstance(value, float) for value in values):
        return math.fsum(values)
    return sum(values)


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(repr(name) for name in names[:5])
    return shown + (f" and {len(names) - 5} more" if len(names) > 5 else "")
