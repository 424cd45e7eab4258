"""The scores of a meta-evaluation as a table: one row per (system, item), in a canonical order.

Rows are sorted by (system id, item id), so every result is independent of the order of the input rows and the
same whether the table comes from the input columns or from merged per-row statistics. System means are
correctly rounded sums (``math.fsum``) over counts, so they are the same bits from rows, from shards' exact
sums, or from per-system totals.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

HUMAN = "references"


@dataclass(frozen=True)
class SystemScores:
    """Per system (in sorted id order): the number of rows and the mean of each score column (each metric's and
    each human quality's; ``HUMAN`` the references)."""

    names: tuple[str, ...]
    counts: np.ndarray
    means: dict[str, np.ndarray]

    @classmethod
    def from_sums(cls, names: Sequence[str], counts: Sequence[int],
                  sums: Mapping[str, Sequence[float]]) -> SystemScores:
        """From per-system row counts and correctly rounded sums."""
        counts_array = np.asarray(counts, dtype=np.int64)
        return cls(tuple(names), counts_array,
                   {column: np.asarray(values, dtype=np.float64) / counts_array for column, values in sums.items()})


@dataclass(frozen=True)
class ScoreTable:
    """Rows sorted by (system, item): integer system and item indices into the sorted ids, and each score column
    (every metric's and every human quality's, ``HUMAN`` the references)."""

    system_names: tuple[str, ...]
    item_names: tuple[str, ...]
    system: np.ndarray
    item: np.ndarray
    scores: dict[str, np.ndarray]

    @property
    def human(self) -> np.ndarray:
        return self.scores[HUMAN]

    def __len__(self) -> int:
        return len(self.system)

    @classmethod
    def build(cls, metric: str, systems: Sequence[str], items: Sequence[str],
              scores: Mapping[str, Sequence[float]]) -> ScoreTable:
        """The table of rows given in any order; two rows of one system and item are an error naming them."""
        system_names, system = np.unique(np.asarray(systems, dtype=str), return_inverse=True)
        item_names, item = np.unique(np.asarray(items, dtype=str), return_inverse=True)
        order = np.lexsort((item.reshape(-1), system.reshape(-1)))
        system, item = system.reshape(-1)[order], item.reshape(-1)[order]
        repeated = np.flatnonzero((system[1:] == system[:-1]) & (item[1:] == item[:-1]))
        if len(repeated):
            rows = sorted((int(order[repeated[0]]), int(order[repeated[0] + 1])))
            raise ValueError(
                f"{metric}: rows {rows[0]} and {rows[1]} of `systems` and `items` are both system "
                f"{str(system_names[system[repeated[0]]])!r} on item {str(item_names[item[repeated[0]]])!r}; pass "
                f"one row per system and item (average repeated human ratings first)"
            )
        return cls(tuple(system_names.tolist()), tuple(item_names.tolist()), system.astype(np.int64),
                   item.astype(np.int64),
                   {column: np.asarray(values, dtype=np.float64)[order] for column, values in scores.items()})

    def system_scores(self) -> SystemScores:
        """Each system's row count and mean scores (correctly rounded sums over counts)."""
        bounds = np.flatnonzero(np.diff(self.system)) + 1
        present = self.system[np.concatenate(([0], bounds))] if len(self) else self.system
        counts = np.diff(np.concatenate(([0], bounds, [len(self)])))
        sums = {column: [math.fsum(chunk) for chunk in np.split(values, bounds)]
                for column, values in self.scores.items()}
        return SystemScores.from_sums([self.system_names[index] for index in present], counts, sums)

    def resampled(self, item_weights: np.ndarray) -> ScoreTable:
        """The table of a bootstrap resample of items: item ``i`` drawn ``item_weights[i]`` times, each copy a
        separate item (so grouping by item keeps copies apart; grouping by system sees their rows repeated)."""
        repeats = item_weights[self.item]
        rows = np.repeat(np.arange(len(self)), repeats)
        first_copy = np.cumsum(item_weights) - item_weights
        copy = np.arange(len(rows)) - np.repeat(np.cumsum(repeats) - repeats, repeats)
        item = first_copy[self.item[rows]] + copy
        order = np.lexsort((item, self.system[rows]))
        rows, item = rows[order], item[order]
        return ScoreTable(self.system_names, tuple(str(index) for index in range(int(item_weights.sum()))),
                          self.system[rows], item, {column: values[rows] for column, values in self.scores.items()})
