"""The options of meta-evaluation: level, segment grouping, WMT's relative-ranking threshold, other metrics' scores,
and the bootstrap over items."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from .core_checks import check_number_list
from .core_meta_table import HUMAN
from .core_options import choice, number, option, optional
from .core_resample_options import BootstrapOptions

LEVELS = ("both", "system", "segment")
GROUPINGS = ("item", "system", "none")
METRIC = "predictions"
OTHER_PREFIX = "other_metrics/"


def metric_scores(metric: str, name: str, value: Any) -> dict[str, list[float]]:
    """Other metrics' scores: a non-empty mapping from a metric's name to one finite score per row."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{metric}: `{name}` must be a mapping from a metric's name to its scores (one per row), "
                        f"got {type(value).__name__}")
    if not value:
        raise ValueError(f"{metric}: `{name}` is empty; leave it out (None) to evaluate `predictions` alone")
    checked = {}
    for key, scores in value.items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"{metric}: `{name}` keys must be non-empty metric names (strings), got {key!r:.60}")
        checked[key] = check_number_list(metric, f"{name}[{key!r}]", scores)
    return checked


@dataclass(frozen=True)
class MetaEvaluationOptions(BootstrapOptions):
    """What to correlate and how: level, segment grouping, WMT's relative-ranking threshold, other metrics, and
    the bootstrap over items (``confidence``, ``n_bootstrap``, ``confidence_level``, ``seed``)."""

    metric_name: ClassVar[str] = "meta_evaluation"
    level: str = option("both", choice(*LEVELS))
    grouping: str = option("item", choice(*GROUPINGS))
    darr_threshold: float = option(25.0, number(minimum=0))
    other_metrics: dict[str, list[float]] | None = option(None, optional(metric_scores))

    @property
    def system(self) -> bool:
        return self.level != "segment"

    @property
    def segment(self) -> bool:
        return self.level != "system"

    @property
    def system_keys(self) -> bool:
        """Whether per-system sums suffice (no segment level, no resampling of items)."""
        return self.level == "system" and not self.confidence

    @property
    def others(self) -> tuple[str, ...]:
        return tuple(self.other_metrics or ())

    def score_columns(self) -> dict[str, str]:
        """Table column (and statistics field) of each metric, to the prefix of its output keys."""
        return {METRIC: "", **{OTHER_PREFIX + name: f"{name}/" for name in self.others}}

    def score_fields(self) -> tuple[str, ...]:
        """Every score column: the metrics', then the humans'."""
        return (*self.score_columns(), HUMAN)

    def signature(self) -> str:
        """The statistics' signature: what they are keyed by, and which other metrics they hold."""
        keys = "system" if self.system_keys else "system,item"
        return f"{self.stats_signature()}|keys:{keys}|other_metrics:{','.join(self.others)}"
