"""Agreement with human scores: how well each metric headline correlates with human judgements of the same
outputs, at system level (the metric's corpus score against the mean human score) and at segment level
(per-example numbers against per-example human scores, grouped by example), by the meta_evaluation module."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from comparison.data import ComparisonData, ComparisonError
from comparison.statistics import Headline


@dataclass(frozen=True)
class HumanAgreement:
    """Each headline's correlations with the human scores (output key of meta_evaluation -> value)."""

    headlines: list[Headline]
    correlations: dict[str, dict[str, float]]  # headline label -> correlation name -> value


def checked_human_scores(data: ComparisonData, human: Mapping[str, Sequence[float]]) -> dict[str, list[float]]:
    """Human scores of every system, one per example, as floats (checked before any scoring)."""
    missing = [system for system in data.systems if system not in human]
    stray = [system for system in human if system not in data.systems]
    if missing or stray:
        raise ComparisonError(f"compare: human scores must be given for exactly the systems {list(data.systems)} "
                              f"(missing {missing}, unknown {stray})")
    checked = {}
    for system in data.systems:
        scores = list(human[system])
        if len(scores) != data.size:
            raise ComparisonError(f"compare: {len(scores)} human scores for system {system!r}, which has "
                                  f"{data.size} outputs")
        for index, score in enumerate(scores):
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
                raise ComparisonError(f"compare: human score {index} of system {system!r} is {score!r}, not a "
                                      "finite number")
        checked[system] = [float(score) for score in scores]
    if len(data.systems) < 2:
        raise ComparisonError("compare: agreement with human scores needs at least two systems")
    return checked


def human_agreement(headlines: Sequence[Headline], corpus_scores: Mapping[tuple[str, str], float],
                    per_example: Mapping[tuple[str, str], np.ndarray], human: Mapping[str, list[float]]
                    ) -> HumanAgreement:
    """Correlations of each headline with the human scores; lower-is-better headlines (TER, perplexity) are
    negated first, so a positive correlation always means agreement."""
    import evaluate

    from comparison.report import METRICS_DIR

    meta = evaluate.load(str(METRICS_DIR / "meta_evaluation"))
    systems = list(human)
    size = len(next(iter(human.values())))
    correlations = {}
    for headline in headlines:
        sign = 1.0 if headline.higher_is_better else -1.0
        positions = [h.key for h in headlines if h.metric == headline.metric]
        position = positions.index(headline.key)
        system_level = meta.compute(
            predictions=[sign * corpus_scores[(headline.label, system)] for system in systems],
            references=[float(np.mean(human[system])) for system in systems], systems=systems,
            items=["corpus"] * len(systems), level="system")
        rows = [(system, index) for system in systems for index in range(size)
                if not math.isnan(per_example[(headline.metric, system)][index, position])]
        segment_level = meta.compute(
            predictions=[sign * float(per_example[(headline.metric, system)][index, position]) for system, index in rows],
            references=[human[system][index] for system, index in rows], systems=[system for system, _ in rows],
            items=[index for _, index in rows], level="segment")
        correlations[headline.label] = {
            key: float(value) for key, value in {**system_level, **segment_level}.items()
            if key.startswith(("system/", "segment/")) and isinstance(value, (int, float))}
    return HumanAgreement(list(headlines), correlations)
