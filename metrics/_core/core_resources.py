"""A metric's resource contract: what its work costs, from the inputs' sizes, and the refusal above a bound.

Every module's card states its costs in time and memory (section "Resource Bounds"). A cost that can grow
beyond a constant times the size of the inputs themselves has a bound, an option with a default that a 2-core,
24 GB machine finishes in about a minute, and is checked from the sizes alone before the work it bounds:

* one text's size, ``max_text_chars`` (:class:`TextBounds`): a text's statistics (n-gram counts, alignments,
  tokenizations) take time and memory in proportion to its length, and a corpus is streamed example by example,
  so the largest single text is what bounds one example's memory;
* resampling, ``max_resample_work`` (:class:`ResampleBounds`): a bootstrap interval or a paired test redoes the
  corpus score over every example once per resample;
* a metric's own quadratic or worse dimensions (ROUGE-L cells, skip-bigrams, CEAF alignment, label pairs, k-means
  assignments, ...), each with its own option, refused with :func:`refuse_above`.

A refusal is a ``ValueError`` naming the metric, the input, its size, the bound and the remedy.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import chain
from typing import Any

from .core_options import MetricOptions, bound

MINUTE = "the default: about a minute's work on a 2-core machine"
# A text of 10 MB: its statistics take from 3 to 20 seconds and at most about 2.5 GB (SARI, BLEU, chrF, METEOR).
DEFAULT_MAX_TEXT_CHARS = 10_000_000
# A text a model metric reads: its tokenization (fast tokenizers take about 10 s a million characters on a loaded
# 2-core machine) and its token lists in memory; the model then reads what its truncation keeps.
DEFAULT_MODEL_MAX_TEXT_CHARS = 2_000_000
# Resamples times examples: 1,000 resamples of 1,000,000 examples.
DEFAULT_MAX_RESAMPLE_WORK = 1_000_000_000


def default_note(value: int, default: int) -> str:
    """``, the default: ...`` where a bound is at its default (the user has not chosen it)."""
    return f", {MINUTE}" if value == default else ""


def refuse_above(metric: str, *, work: str, amount: int, option_name: str, bound: int, default: int,
                 remedy: str) -> None:
    """Raise ``ValueError`` when ``amount`` of work (described by ``work``: the input and what is counted)
    exceeds the option ``option_name``'s ``bound``; the message names the remedy and the option."""
    if amount > bound:
        raise ValueError(f"{metric}: {work}: {amount:,}, more than {option_name}={bound:,}"
                         f"{default_note(bound, default)}; {remedy}, or raise {option_name}")


@dataclass(frozen=True)
class TextBounds(MetricOptions):
    """The bound of one text's size, in characters."""

    max_text_chars: int = bound(DEFAULT_MAX_TEXT_CHARS)


@dataclass(frozen=True)
class ModelTextBounds(TextBounds):
    """The bound of one text's size for a model metric, whose tokenizer is the costly step."""

    max_text_chars: int = bound(DEFAULT_MODEL_MAX_TEXT_CHARS)


@dataclass(frozen=True)
class ResampleBounds(MetricOptions):
    """The bound of resampling's work, in resamples times examples."""

    max_resample_work: int = bound(DEFAULT_MAX_RESAMPLE_WORK)

    def resampling_runs(self) -> list[tuple[str, int]]:
        """(what, resamples) of each resampling these options ask for (the resampling options add theirs)."""
        return []


def _max_chars(value: Any) -> int:
    """The length of the longest string in a value of nested lists, tuples and mappings (0 for none)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, Mapping):
        return max(map(_max_chars, value.values()), default=0)
    if isinstance(value, (list, tuple)):
        kinds = set(map(type, value))
        if kinds <= {str}:
            return max(map(len, value), default=0)
        if kinds <= {list, tuple}:  # e.g. each example's references: one flat pass
            return _max_chars(list(chain.from_iterable(value)))
        return max(map(_max_chars, value), default=0)
    return 0


def _place_of_longest(value: Any, place: str) -> tuple[int, str]:
    """(characters, place) of the longest string in ``value``, the place written as indexes after ``place``."""
    if isinstance(value, str):
        return len(value), place
    items: Iterable[tuple[Any, Any]] = ()
    if isinstance(value, Mapping):
        items = ((repr(key), item) for key, item in value.items())
    elif isinstance(value, (list, tuple)):
        items = enumerate(value)
    return max((_place_of_longest(item, f"{place}[{key}]") for key, item in items), key=lambda found: found[0],
               default=(0, place))


def check_text_sizes(metric: str, columns: Mapping[str, Any], bound: int, start: int = 0,
                     default: int = DEFAULT_MAX_TEXT_CHARS) -> None:
    """Refuse a batch holding a text longer than ``bound`` characters (``max_text_chars``, whose default is
    ``default``); ``start`` is the corpus index of the batch's first example, so that the message names it."""
    for name, values in columns.items():
        if _max_chars(values) > bound:
            length, where = max((_place_of_longest(value, f"{name}[{start + index}]")
                                 for index, value in enumerate(values)), key=lambda found: found[0])
            refuse_above(metric, work=f"the characters of {where}", amount=length,
                         option_name="max_text_chars", bound=bound, default=default,
                         remedy="split it into segments scored as separate examples (a text's tokens and "
                                "statistics take time and memory in proportion to its length)")


def check_resample_work(metric: str, examples: int, resamples: int, what: str, bound: int) -> None:
    """Refuse resampling whose resamples times examples exceed ``bound`` (``max_resample_work``)."""
    refuse_above(metric, work=f"{what} rescores the corpus of {examples:,} examples {resamples:,} times; resamples "
                              f"x examples", amount=examples * resamples, option_name="max_resample_work",
                 bound=bound, default=DEFAULT_MAX_RESAMPLE_WORK,
                 remedy="use fewer resamples (n_bootstrap, n_samples) or score a sample of the corpus")
