"""The options of meta-evaluation: levels, segment grouping, WMT's relative-ranking threshold, other metrics' scores,
other human qualities' scores, and the bootstrap over items."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from .core_checks import check_number_list
from .core_meta_table import HUMAN
from .core_options import choice, number, option, optional
from .core_resample_options import BootstrapOptions

LEVELS = ("system", "segment", "turn")
LEVEL_NAMES = {"both": ("system", "segment"), **{level: (level,) for level in LEVELS}}
GROUPINGS = ("item", "system", "none")
METRIC = "predictions"
OTHER_PREFIX = "other_metrics/"
QUALITY_PREFIX = "qualities/"
_RESERVED = ("system", "segment", "turn", "williams")  # first parts of output keys: no quality may take them


def check_levels(metric: str, name: str, value: Any) -> tuple[str, ...]:
    """``"both"`` (system and segment: the default), ``"system"``, ``"segment"``, ``"turn"``, or a list of some of
    ``"system"``, ``"segment"``, ``"turn"``: the levels computed, in that canonical order."""
    valid = ", ".join(repr(level) for level in LEVEL_NAMES)
    if isinstance(value, str):
        if value not in LEVEL_NAMES:
            raise ValueError(f"{metric}: unknown `{name}` {value!r:.60}; valid values are {valid}, or a list of "
                             f"'system', 'segment', 'turn'")
        return LEVEL_NAMES[value]
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{metric}: `{name}` must be a level name ({valid}) or a list of them such as "
                        f"['turn', 'system'], got {type(value).__name__} ({value!r:.60})")
    if not value:
        raise ValueError(f"{metric}: `{name}` is an empty list; name at least one of 'system', 'segment', 'turn'")
    for index, level in enumerate(value):
        if not isinstance(level, str) or level not in LEVELS:
            raise ValueError(f"{metric}: unknown `{name}[{index}]` {level!r:.60}; valid values are 'system', "
                             f"'segment', 'turn'")
    return tuple(level for level in LEVELS if level in value)


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


def quality_scores(metric: str, name: str, value: Any) -> dict[str, list[float]]:
    """Other human qualities' scores: a non-empty mapping from a quality's name (no '/', not a level's name) to one
    finite human score per row."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{metric}: `{name}` must be a mapping from a human quality's name to its scores (one per "
                        f"row), e.g. {{'Natural': [...], 'Engaging': [...]}}, got {type(value).__name__}")
    if not value:
        raise ValueError(f"{metric}: `{name}` is empty; leave it out (None) to correlate with `references` alone")
    checked = {}
    for key, scores in value.items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"{metric}: `{name}` keys must be non-empty quality names (strings), got {key!r:.60}")
        if "/" in key or key in _RESERVED:
            raise ValueError(f"{metric}: `{name}` key {key!r:.60} cannot name a quality (it would be read as part of "
                             f"an output key); use a name without '/' other than {', '.join(_RESERVED)}")
        checked[key] = check_number_list(metric, f"{name}[{key!r}]", scores)
    return checked


@dataclass(frozen=True)
class MetaEvaluationOptions(BootstrapOptions):
    """What to correlate and how: levels, segment grouping, WMT's relative-ranking threshold, other metrics, other
    human qualities, and the bootstrap over items (``confidence``, ``n_bootstrap``, ``confidence_level``,
    ``seed``)."""

    metric_name: ClassVar[str] = "meta_evaluation"
    level: tuple[str, ...] = option("both", check_levels)
    grouping: str = option("item", choice(*GROUPINGS))
    darr_threshold: float = option(25.0, number(minimum=0))
    other_metrics: dict[str, list[float]] | None = option(None, optional(metric_scores))
    qualities: dict[str, list[float]] | None = option(None, optional(quality_scores))

    def validate(self, metric: str) -> None:
        shared = sorted(set(self.others) & set(self.quality_names))
        if shared:
            raise ValueError(f"{metric}: {shared[0]!r} names both one of `other_metrics` and one of `qualities`; "
                             f"give the metric and the human quality different names")

    @property
    def levels(self) -> tuple[str, ...]:
        """The levels computed, in canonical order (``level`` as checked; its unchecked default names them too)."""
        return LEVEL_NAMES[self.level] if isinstance(self.level, str) else self.level

    @property
    def system(self) -> bool:
        return "system" in self.levels

    @property
    def segment(self) -> bool:
        return "segment" in self.levels

    @property
    def turn(self) -> bool:
        return "turn" in self.levels

    @property
    def system_keys(self) -> bool:
        """Whether per-system sums suffice (no segment or turn level, no resampling of items)."""
        return self.levels == ("system",) and not self.confidence

    @property
    def others(self) -> tuple[str, ...]:
        return tuple(self.other_metrics or ())

    @property
    def quality_names(self) -> tuple[str, ...]:
        return tuple(self.qualities or ())

    def score_columns(self) -> dict[str, str]:
        """Table column (and statistics field) of each metric, to the prefix of its output keys."""
        return {METRIC: "", **{OTHER_PREFIX + name: f"{name}/" for name in self.others}}

    def human_columns(self) -> dict[str, str]:
        """Table column (and statistics field) of each human quality (``references`` first), to the part of the
        output keys' prefix that names it."""
        return {HUMAN: "", **{QUALITY_PREFIX + name: f"{name}/" for name in self.quality_names}}

    def extra_scores(self) -> dict[str, list[float]]:
        """The scores given as options, by table column: other metrics', then other human qualities'."""
        return {**{OTHER_PREFIX + name: scores for name, scores in (self.other_metrics or {}).items()},
                **{QUALITY_PREFIX + name: scores for name, scores in (self.qualities or {}).items()}}

    def score_fields(self) -> tuple[str, ...]:
        """Every score column: the metrics', then the humans' (``references``, then the other qualities)."""
        return (*self.score_columns(), *self.human_columns())

    def signature(self) -> str:
        """The statistics' signature: what they are keyed by, which other metrics and which qualities they hold."""
        keys = "system" if self.system_keys else "system,item"
        qualities = f"|qualities:{','.join(self.quality_names)}" if self.qualities else ""
        return f"{self.stats_signature()}|keys:{keys}|other_metrics:{','.join(self.others)}{qualities}"
