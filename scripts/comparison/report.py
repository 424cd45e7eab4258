"""The comparison: every metric x system with intervals and paired tests, buckets and contrasting examples."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from comparison.analysis import (
    BucketTable,
    ExampleContrast,
    bucket_table,
    contrasts,
    difficulty_buckets,
    reference_length_buckets,
)
from comparison.data import ComparisonData, ComparisonError
from comparison.human import HumanAgreement, checked_human_scores, human_agreement
from comparison.significance import Cell, ResamplingSettings, cells
from comparison.statistics import TASK_METRICS, Headline, MetricStatistics
from project import ROOT

METRICS_DIR = ROOT / "metrics"
MAX_EXAMPLES = 1000  # contrasting examples each way, and buckets, a report shows at most


@dataclass
class Report:
    """Everything a comparison found, ready to render."""

    systems: list[str]
    baseline: str
    size: int
    headlines: list[Headline]
    cells: dict[tuple[str, str, str], Cell]  # (metric, headline key, system)
    settings: ResamplingSettings
    options: dict[str, dict[str, Any]]
    signatures: dict[str, str]
    buckets: list[BucketTable] = field(default_factory=list)
    contrast: tuple[str, str] | None = None
    examples: list[ExampleContrast] = field(default_factory=list)
    per_example: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)  # (metric, system) -> n x headlines
    human: HumanAgreement | None = None

    def cell(self, headline: Headline, system: str) -> Cell:
        return self.cells[(headline.metric, headline.key, system)]


def available_metrics() -> list[str]:
    return sorted(path.name for path in METRICS_DIR.iterdir()
                  if path.is_dir() and not path.name.startswith(("_", ".")) and (path / f"{path.name}.py").is_file())


def checked_metric_options(command: str, names: list[str], options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The options by metric, once every name is a metric folder and every option names one of ``names``."""
    known = available_metrics()
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ComparisonError(f"{command}: unknown metrics {unknown}; available: {known}")
    options = dict(options or {})
    stray = sorted(set(options) - set(names))
    if stray:
        raise ComparisonError(f"{command}: options given for {stray}, which are not among the metrics {names}")
    return options


def _progress(total: int, description: str, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=description, disable=not enabled, file=sys.stderr, leave=False)


def prepare(data: ComparisonData, metrics: Sequence[str] | None = None, task: str = "mt",
            options: Mapping[str, Mapping[str, Any]] | None = None, baseline: str | None = None
            ) -> tuple[list[MetricStatistics], str]:
    """The metric modules with their options, every input checked, and the baseline's name: every error of the
    inputs, metric names and options is raised here, before any scoring."""
    import evaluate

    if task not in TASK_METRICS:
        raise ComparisonError(f"compare: unknown task {task!r}; choose one of {sorted(TASK_METRICS)}")
    names = list(metrics) if metrics else list(TASK_METRICS[task])
    options = checked_metric_options("compare", names, options)
    baseline = baseline if baseline is not None else next(iter(data.systems))
    if baseline not in data.systems:
        raise ComparisonError(f"compare: the baseline {baseline!r} is not one of the systems {list(data.systems)}")
    prepared = []
    for name in names:
        metric = MetricStatistics(name, evaluate.load(str(METRICS_DIR / name)), options.get(name, {}))
        metric.check(data)
        prepared.append(metric)
    return prepared, baseline


def compare(data: ComparisonData, metrics: Sequence[str] | None = None, *, task: str = "mt",
            options: Mapping[str, Mapping[str, Any]] | None = None, baseline: str | None = None,
            settings: ResamplingSettings = ResamplingSettings(), analysis_metric: str | None = None,
            contrast: tuple[str, str] | None = None, examples: int = 5, buckets: int = 4,
            human: Mapping[str, Sequence[float]] | None = None, progress: bool = True) -> Report:
    """Compare the systems of ``data`` with ``metrics`` (default: the task's set) against ``baseline`` (default:
    the first system); ``analysis_metric`` (a metric name, default the second metric, else the first) drives the
    difficulty buckets and the contrasting examples of ``contrast`` (default: the baseline and the best other
    system on it). ``human`` (system -> one human score per example) adds each headline's agreement with them."""
    for name, value, least in (("examples", examples, 0), ("buckets", buckets, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= MAX_EXAMPLES:
            raise ComparisonError(f"compare: the number of {name} (--{name}) must be a whole number from {least} to "
                                  f"{MAX_EXAMPLES:,}, got {value!r}")
    prepared, baseline = prepare(data, metrics, task, options, baseline)
    human_scores = checked_human_scores(data, human) if human is not None else None
    systems = list(data.systems)
    if contrast is not None and any(system not in data.systems for system in contrast):
        raise ComparisonError(f"compare: the contrast {contrast} names a system not in {systems}")
    if analysis_metric is not None and analysis_metric not in [metric.name for metric in prepared]:
        raise ComparisonError(f"compare: the analysis metric {analysis_metric!r} is not among the metrics")
    with _progress(len(prepared) * len(systems), "statistics", progress) as bar:
        for metric in prepared:
            metric.add_systems(data, systems)
            bar.update(len(systems))
    with _progress(settings.n_samples * len(prepared) * len(systems), "resampling", progress) as bar:
        table = cells(prepared, systems, baseline, data.size, settings, bar)
    per_example = {(metric.name, system): metric.per_example(system) for metric in prepared for system in systems}
    report = Report(systems, baseline, data.size, [h for metric in prepared for h in metric.headlines], table,
                    settings, {metric.name: metric.given for metric in prepared},
                    {metric.name: metric.signature for metric in prepared}, per_example=per_example)
    chosen = next(metric for metric in prepared if metric.name == analysis_metric) if analysis_metric else (
        prepared[1] if len(prepared) > 1 else prepared[0])
    report.buckets = [
        bucket_table("by reference length", reference_length_buckets(data, buckets), chosen, 0, systems),
        bucket_table(f"by per-example {chosen.headlines[0].label} (mean over systems)", difficulty_buckets(
            np.stack([per_example[(chosen.name, system)][:, 0] for system in systems]), chosen.headlines[0], buckets),
            chosen, 0, systems),
    ]
    if human_scores is not None:
        report.human = human_agreement(report.headlines, {(h.label, system): report.cell(h, system).score
                                                          for h in report.headlines for system in systems},
                                       per_example, human_scores)
    if len(systems) > 1:
        if contrast is None:
            others = [system for system in systems if system != baseline]
            sign = 1.0 if chosen.headlines[0].higher_is_better else -1.0
            contrast = (baseline, max(others, key=lambda system: sign * table[(chosen.name, chosen.headlines[0].key,
                                                                              system)].score))
        report.contrast = contrast
        report.examples = contrasts(data, prepared, per_example, (chosen, 0), *contrast, count=examples)
    return report
