"""The ratings of a corpus as a table by item, built from the merged rating counts (the metric's statistics).

Totals hold one count per (item, annotator, label), however the ratings were batched or sharded, so the table is
the same for any order, batching or sharding of the rows. Items and annotators are sorted by id; labels are
numbered in the order of ``value_domain`` when given, else in sorted order (numbers ascending, strings in code
point order). A coefficient that needs the labels' order or their numeric values checks that it has them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .core_agreement_inputs import Label

RatingKey = tuple[str, str, Label]


@dataclass(frozen=True)
class RatingTable:
    """Every rating, by item: each item's ratings as annotator -> position of the label in ``values``."""

    items: tuple[str, ...]
    ratings: tuple[Mapping[str, int], ...]
    values: tuple[Label, ...]
    annotators: tuple[str, ...]
    ordered: bool  # the order of ``values`` was given (``value_domain``) or is numeric

    @property
    def numeric(self) -> bool:
        return not isinstance(self.values[0], str)

    @property
    def num_ratings(self) -> int:
        return sum(len(ratings) for ratings in self.ratings)

    def pairable(self) -> list[int]:
        """Positions of the items with at least two ratings (the only ones that say anything about agreement)."""
        return [position for position, ratings in enumerate(self.ratings) if len(ratings) >= 2]

    def value_counts(self, positions: Sequence[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The labels given to the items at ``positions``: (row, value, count) of each distinct (item, label),
        sorted by row then value, rows numbered 0, 1, ... in the order of ``positions``; and each item's number of
        ratings."""
        sizes = np.fromiter((len(self.ratings[position]) for position in positions), dtype=np.int64,
                            count=len(positions))
        labels = np.fromiter((value for position in positions for value in self.ratings[position].values()),
                             dtype=np.int64, count=int(sizes.sum()))
        width = len(self.values)
        keys, counts = np.unique(np.repeat(np.arange(len(positions), dtype=np.int64), sizes) * width + labels,
                                 return_counts=True)
        return keys // width, keys % width, counts, sizes


def _duplicate(metric: str, item: str, annotator: str) -> ValueError:
    return ValueError(f"{metric}: annotator {annotator!r} rated item {item!r} more than once (in `items` and "
                      f"`annotators` of different batches or shards); pass one rating per annotator and item")


def _value_order(metric: str, labels: set[Label], value_domain: Sequence[Label] | None) -> tuple[Label, ...]:
    textual = {isinstance(label, str) for label in labels}
    if len(textual) > 1:
        raise TypeError(f"{metric}: `labels` mix strings and numbers across batches or shards; labels are all "
                        f"strings or all numbers")
    if value_domain is None:
        return tuple(sorted(labels))  # type: ignore[type-var]
    if isinstance(value_domain[0], str) != textual.pop():
        raise TypeError(f"{metric}: `value_domain` holds {'strings' if isinstance(value_domain[0], str) else 'numbers'}"
                        f" but `labels` do not; list the labels themselves, in order")
    unknown = sorted(labels.difference(value_domain))  # type: ignore[type-var]
    if unknown:
        raise ValueError(f"{metric}: the labels {unknown[:5]!r:.200} are not in `value_domain`; list every label "
                         f"that occurs")
    return tuple(value_domain)


def rating_table(metric: str, counts: Mapping[RatingKey, int], value_domain: Sequence[Label] | None) -> RatingTable:
    """The table of merged (item, annotator, label) counts; an annotator rating an item twice is an error."""
    by_item: dict[str, dict[str, Label]] = {}
    for (item, annotator, label), count in counts.items():
        ratings = by_item.setdefault(item, {})
        if count != 1 or annotator in ratings:
            raise _duplicate(metric, item, annotator)
        ratings[annotator] = label
    if not by_item:
        raise ValueError(f"{metric}: no ratings to score (`items` is empty); the agreement of nothing is undefined")
    labels = {label for ratings in by_item.values() for label in ratings.values()}
    values = _value_order(metric, labels, value_domain)
    index = {value: position for position, value in enumerate(values)}
    items = tuple(sorted(by_item))
    ratings = tuple({annotator: index[label] for annotator, label in sorted(by_item[item].items())} for item in items)
    annotators = tuple(sorted({annotator for item_ratings in by_item.values() for annotator in item_ratings}))
    ordered = value_domain is not None or not isinstance(values[0], str)
    return RatingTable(items, ratings, values, annotators, ordered)
