"""Each metric's per-example statistics for every system, and scores from any sum of them (a whole corpus, a
bucket, one example, a resample): one pass over the data per metric and system (one per metric for the metrics
that embed each distinct text of a call once, their ``shares_texts``), everything else from sums."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from comparison.data import ComparisonData, ComparisonError
from metrics._core.core_resample import as_stats_matrix
from metrics._core.core_stats import KEYED_REDUCTIONS


@dataclass(frozen=True)
class Headline:
    """One reported number of a metric: its output key, the column label and which direction is better."""

    metric: str
    key: str
    label: str
    higher_is_better: bool = True


# The numbers a comparison reports for the metrics that compare text-generation systems (other metrics report
# every real-valued output of their result).
HEADLINES: dict[str, tuple[tuple[str, str, bool], ...]] = {
    "sacrebleu": (("score", "BLEU", True),),
    "bleu": (("bleu", "BLEU (evaluate)", True),),
    "chrf": (("score", "chrF", True),),
    "ter": (("score", "TER", False),),
    "rouge": (("rouge1", "ROUGE-1", True), ("rouge2", "ROUGE-2", True), ("rougeL", "ROUGE-L", True),
              ("rougeLsum", "ROUGE-Lsum", True)),
    "meteor": (("meteor", "METEOR", True),),
    "bertscore": (("f1", "BERTScore F1", True),),
    "semantic_similarity": (("similarity", "Similarity", True),),
    "sari": (("sari", "SARI", True),),
    "exact_match": (("exact_match", "Exact match", True),),
    "perplexity": (("corpus_perplexity", "Perplexity", False),),
    "comet": (("mean_score", "COMET", True),),
    "bleurt": (("mean_score", "BLEURT", True),),
    "metricx": (("mean_score", "MetricX", False),),
}
# Per-example outputs that are no numbers, shown beside the contrasting examples: output key -> label.
ANNOTATIONS: dict[str, dict[str, str]] = {"comet": {"error_spans": "COMET error spans"}}
TASK_METRICS: dict[str, tuple[str, ...]] = {"mt": ("sacrebleu", "chrf", "ter"), "summarization": ("rouge", "meteor")}


class MetricStatistics:
    """One metric module with its options, the statistics rows of every system, and scores from sums of rows."""

    def __init__(self, name: str, module: Any, options: Mapping[str, Any]) -> None:
        self.name, self.module, self.given = name, module, dict(options)
        absent = module.missing_options(self.given)
        if absent:
            raise ComparisonError(f"compare: {name} needs " + ", ".join(f"`-o {name}.{option}=...`" for option in absent))
        try:
            self.options = module.resolve_options(self.given)
        except (TypeError, ValueError) as error:
            raise ComparisonError(f"compare: {error}") from None
        if module.needs_corpus(self.options) or module.needs_rows(self.options):
            raise ComparisonError(f"compare: {name} with these options needs every example at once, so it cannot "
                                  "be resampled from per-example statistics; choose other options")
        self.schema = module.schema(self.options)
        if any(field.reduce in KEYED_REDUCTIONS for field in self.schema.fields):
            raise ComparisonError(f"compare: {name} keeps keyed statistics (per-label counts); the comparison "
                                  "resamples text-generation metrics")
        self.signature = module.signature(self.options)
        self.names = self.schema.names
        self._bookkeeping = [field.name for field in self.schema.fields if field.reduce in ("min", "max")]
        self.rows: dict[str, list[tuple[Any, ...]]] = {}
        self.matrices: dict[str, np.ndarray] = {}
        self.corpus_totals: dict[str, dict[str, Any]] = {}
        self.headlines: list[Headline] = []

    def inputs(self, data: ComparisonData, system: str) -> dict[str, Any]:
        """The module's input columns for one system."""
        available = {"predictions": data.systems[system], "references": data.references, "sources": data.sources}
        missing = [column for column in self.module.inputs.columns if available.get(column) is None]
        if missing:
            raise ComparisonError(f"compare: {self.name} needs the input columns {missing}")
        return {column: available[column] for column in self.module.inputs.columns}

    def check(self, data: ComparisonData) -> None:
        """Every system's inputs checked by the module, before any scoring."""
        for system in data.systems:
            try:
                self.module.inputs.check(self.name, self.inputs(data, system))
            except (TypeError, ValueError) as error:
                raise ComparisonError(f"compare: system {system!r}: {error}") from None

    def add_systems(self, data: ComparisonData, systems: Sequence[str]) -> None:
        """Statistics rows of the systems' outputs: one call over all of them for a metric that embeds each distinct
        text of a call once (``shares_texts``: the sources and references the systems share are then embedded once,
        not once per system; a row depends only on its own example, up to float summation order), else
        :meth:`add_system` for each."""
        if not getattr(self.module, "shares_texts", False) or len(systems) < 2:
            for system in systems:
                self.add_system(data, system)
            return
        inputs = [self.inputs(data, system) for system in systems]
        joined = {column: [value for each in inputs for value in each[column]] for column in inputs[0]}
        columns = self.module.example_stats(**joined, **self.given)
        rows = list(zip(*(columns[name] for name in self.names)))
        for index, system in enumerate(systems):
            self._keep(system, rows[index * data.size:(index + 1) * data.size])

    def add_system(self, data: ComparisonData, system: str) -> None:
        """Statistics rows of one system's outputs (the metric's one pass over them)."""
        columns = self.module.example_stats(**self.inputs(data, system), **self.given)
        self._keep(system, list(zip(*(columns[name] for name in self.names))))

    def _keep(self, system: str, rows: list[tuple[Any, ...]]) -> None:
        self.rows[system] = rows
        self.matrices[system] = as_stats_matrix(rows)
        self.corpus_totals[system] = self.schema.totals_of_rows(rows, self.signature)
        if not self.headlines:
            self.headlines = self._headlines(self.result(self.corpus_totals[system]))

    def _headlines(self, result: Mapping[str, Any]) -> list[Headline]:
        declared = HEADLINES.get(self.name)
        if declared is None:
            return [Headline(self.name, key, f"{self.name} {key}") for key, value in result.items()
                    if isinstance(value, (int, float)) and not isinstance(value, bool)]
        chrf_plus = self.name == "chrf" and getattr(self.options, "word_order", 0) > 0
        return [Headline(self.name, key, "chrF++" if chrf_plus else label, higher)
                for key, label, higher in declared if key in result]

    def result(self, totals: Mapping[str, Any]) -> dict[str, Any]:
        """The metric's result from totals (what ``compute`` returns for the examples they sum)."""
        return self.module.score(totals, self.options)

    def values(self, totals: Mapping[str, Any]) -> list[float]:
        """The headline numbers from totals."""
        result = self.result(totals)
        return [float(result[headline.key]) for headline in self.headlines]

    def exact_values(self, system: str, indices: Sequence[int] | None = None) -> list[float]:
        """Headline numbers of a system on all examples or on some (exact sums); NaN where undefined (e.g. no
        reference word in a bucket)."""
        if indices is None:
            totals = self.corpus_totals[system]
        else:
            rows = self.rows[system]
            totals = self.schema.totals_of_rows([rows[index] for index in indices], self.signature)
        try:
            return self.values(totals)
        except (ValueError, ZeroDivisionError):
            return [math.nan] * len(self.headlines)

    def per_example(self, system: str) -> np.ndarray:
        """Headline numbers of each example alone (examples x headlines; NaN where undefined)."""
        return np.array([self.exact_values(system, [index]) for index in range(len(self.rows[system]))])

    def annotations(self, data: ComparisonData, system: str, indices: Sequence[int]) -> list[dict[str, Any]]:
        """The labelled non-numeric per-example outputs (e.g. XCOMET's error spans) of some examples of a system,
        one mapping per index; those examples are scored again (statistics hold numbers only)."""
        keys = ANNOTATIONS.get(self.name, {})
        if not keys or not indices:
            return [{} for _ in indices]
        inputs = {column: [values[index] for index in indices] for column, values in self.inputs(data, system).items()}
        result = self.module.compute(**inputs, **self.given)
        return [{label: result[key][row] for key, label in keys.items() if key in result}
                for row in range(len(indices))]

    def vector_totals(self, system: str, vector: np.ndarray) -> dict[str, Any]:
        """Totals from a vector of column sums (a resample's); min/max bookkeeping fields (reference counts, which
        only name the signature) keep the corpus's values."""
        totals = dict(zip(self.names, vector.tolist()))
        corpus = self.corpus_totals[system]
        for name in self._bookkeeping:
            totals[name] = corpus[name]
        totals["signature"] = self.signature
        return totals

    def vector_scores(self, system: str):
        """A function from a vector of column sums to the headline numbers (for the core's resampling tests)."""
        return lambda vector: self.values(self.vector_totals(system, vector))
