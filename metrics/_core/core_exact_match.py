"""Exact match as evaluate's ``exact_match`` computes it, from per-example statistics.

A prediction matches when, after the same normalisation of both texts, it
equals its reference (or, an extra, any of its references). Normalisation is
evaluate's, in its order: each of ``regexes_to_ignore`` is removed in turn
(``re.sub(pattern, "", text)``), then the text is lowercased
(``ignore_case``), ASCII punctuation (``string.punctuation``) is removed
(``ignore_punctuation``) and ASCII digits are removed (``ignore_numbers``).

The statistics of one example are ``matches`` (0 or 1) and ``examples`` (1);
the score is ``matches / examples`` over the corpus (evaluate's ``np.mean`` of
the booleans gives the same correctly rounded ratio).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .core_options import boolean, option
from .core_stats import StatField, StatsSchema
from .core_resources import TextBounds

_PUNCTUATION = str.maketrans("", "", string.punctuation)
_DIGITS = str.maketrans("", "", string.digits)


def _regexes(metric: str, name: str, value: Any) -> tuple[re.Pattern[str], ...] | None:
    """None, or a list of regular expressions (strings or compiled patterns), each compiled once."""
    if value is None:
        return None
    if isinstance(value, (str, bytes, re.Pattern)) or not isinstance(value, (list, tuple)):
        raise TypeError(
            f"{metric}: `{name}` must be a list of regular expressions (e.g. ['the ', 'yell']) or None, got "
            f"{type(value).__name__} ({value!r:.60}); evaluate's module would apply each character of a single "
            f"string as a separate pattern"
        )
    compiled = []
    for index, pattern in enumerate(value):
        if isinstance(pattern, re.Pattern):
            if not isinstance(pattern.pattern, str):
                raise TypeError(f"{metric}: `{name}[{index}]` is a bytes pattern; the texts are strings")
            compiled.append(pattern)
            continue
        if not isinstance(pattern, str):
            raise TypeError(
                f"{metric}: `{name}[{index}]` must be a regular expression string, got {type(pattern).__name__} "
                f"({pattern!r:.60})"
            )
        try:
            compiled.append(re.compile(pattern))
        except re.error as error:
            raise ValueError(f"{metric}: `{name}[{index}]` {pattern!r} is not a valid regular expression: {error}") from None
    return tuple(compiled)


@dataclass(frozen=True)
class ExactMatchOptions(TextBounds):
    """evaluate's ``exact_match`` options (all change the per-example statistics)."""

    metric_name = "exact_match"

    regexes_to_ignore: tuple[re.Pattern[str], ...] | None = option(None, _regexes, stats=True)
    ignore_case: bool = option(False, boolean, stats=True)
    ignore_punctuation: bool = option(False, boolean, stats=True)
    ignore_numbers: bool = option(False, boolean, stats=True)

    def stats_signature(self) -> str:
        regexes = (
            "none" if self.regexes_to_ignore is None
            else "[" + ",".join(f"{pattern.pattern!r}/{pattern.flags}" for pattern in self.regexes_to_ignore) + "]"
        )
        return (f"{self.metric_name}|regexes_to_ignore:{regexes}|ignore_case:{self.ignore_case}"
                f"|ignore_punctuation:{self.ignore_punctuation}|ignore_numbers:{self.ignore_numbers}")


def exact_match_normalizer(options: ExactMatchOptions) -> Callable[[str], str]:
    """The normalisation evaluate's module applies to predictions and references, as one function."""
    regexes = options.regexes_to_ignore or ()
    tables = [table for flag, table in ((options.ignore_punctuation, _PUNCTUATION), (options.ignore_numbers, _DIGITS))
              if flag]
    lower = options.ignore_case

    def normalize(text: str) -> str:
        for pattern in regexes:
            text = pattern.sub("", text)
        if lower:
            text = text.lower()
        for table in tables:
            text = text.translate(table)
        return text

    return normalize


def exact_match_schema(metric: str = "exact_match", options: ExactMatchOptions | None = None) -> StatsSchema:
    """``matches``: examples whose prediction matches a reference; ``examples``: examples scored (whatever the
    options)."""
    return StatsSchema(metric, (StatField("matches"), StatField("examples")))


def exact_match_rows(predictions: Sequence[str], references: Sequence[Sequence[str]],
                     options: ExactMatchOptions) -> list[tuple[int, int]]:
    """One row per example: (1 if the normalised prediction equals a normalised reference else 0, 1)."""
    normalize = exact_match_normalizer(options)
    rows = []
    for prediction, example_references in zip(predictions, references, strict=True):
        normalized = normalize(prediction)
        matched = any(normalized == normalize(reference) for reference in example_references)
        rows.append((int(matched), 1))
    return rows


def exact_match_from_totals(totals: Mapping[str, Any], options: ExactMatchOptions) -> dict[str, float]:
    """``{"exact_match": matches / examples}`` (0 to 1)."""
    examples = totals["examples"]
    if not examples:
        raise ValueError("exact_match: no examples to score; the score of an empty corpus is undefined")
    return {"exact_match": totals["matches"] / examples}
