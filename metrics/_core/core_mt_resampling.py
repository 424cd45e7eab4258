"""Bootstrap intervals and paired tests for the sacreBLEU-family metrics, with sacreBLEU's outputs.

:class:`SacrebleuResampling` is mixed into a statistics metric whose options
inherit :class:`~core_resample_options.BootstrapOptions` and
:class:`~core_resample_options.PairedTestOptions`. It keeps every example's
statistics row when an interval or a test is asked for (rows, not text), scores
the baseline system's predictions batch by batch against the same references,
and resamples the rows with sacreBLEU's random streams (``core_resample``). The
metric supplies ``resampled_score(totals, options) -> float``, the corpus score
of named totals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .core_resample import approximate_randomization_test, as_stats_matrix
from .core_resample import paired_bootstrap_test


def resampling_fields(options: Any) -> dict[str, Any]:
    """The signature's resampling fields (``bs``, ``ar``, ``seed``) for the options' interval and test."""
    fields: dict[str, Any] = {}
    if options.confidence:
        fields["bs"] = options.n_bootstrap
    if options.baseline_predictions is not None:
        fields[options.paired_test] = options.paired_samples
    if fields:
        fields["seed"] = str(options.seed).lower()
    return fields


class SacrebleuResampling:
    """``confidence_mean/low/high/half_width`` and ``p_value``/``baseline_score``/``paired_test`` outputs."""

    name: str

    def resampled_score(self, totals: Mapping[str, Any], options: Any) -> float:
        """The corpus score of named totals (one resample's)."""
        raise NotImplementedError

    def needs_rows(self, options: Any) -> bool:
        return options.confidence or options.baseline_predictions is not None

    def rows_suffice(self, options: Any) -> bool:
        return options.baseline_predictions is None  # the paired test scores the baseline's texts

    def check_corpus_size(self, size: int, options: Any) -> None:
        baseline = options.baseline_predictions
        if baseline is not None and len(baseline) != size:
            raise ValueError(
                f"{self.name}: got {size} predictions but {len(baseline)} baseline_predictions; "
                f"the paired test needs both systems' outputs for the same inputs"
            )

    def extra_rows(self, batch: Any, options: Any) -> dict[str, Sequence[Sequence[Any]]]:
        baseline = options.baseline_predictions
        if baseline is None:
            return {}
        own = baseline[batch.start : batch.start + batch.size]
        return {"baseline": self.example_rows(batch.with_column("predictions", own), options)}  # type: ignore[attr-defined]

    def corpus_outputs(self, rows: Sequence[Sequence[Any]], extra: Mapping[str, Sequence[Sequence[Any]]],
                       totals: Mapping[str, Any] | None, options: Any) -> dict[str, Any]:
        schema = self.schema(options)  # type: ignore[attr-defined]

        def score(vector: Any) -> float:
            return self.resampled_score(schema.named(vector.tolist()), options)

        matrix = as_stats_matrix(rows)
        outputs: dict[str, Any] = {}
        if options.confidence:
            interval = options.interval(matrix, score)
            outputs.update(confidence_mean=interval.mean, confidence_low=interval.low,
                           confidence_high=interval.high, confidence_half_width=interval.half_width)
        if options.baseline_predictions is not None:
            test = paired_bootstrap_test if options.paired_test == "bs" else approximate_randomization_test
            outcome = test(as_stats_matrix(extra["baseline"]), matrix, score, n_samples=options.paired_samples,
                           seed=options.seed)
            outputs.update(p_value=outcome.p_value, baseline_score=outcome.baseline_score,
                           paired_test=options.paired_test)
        return outputs
