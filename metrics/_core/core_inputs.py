"""Eager input checks for evaluate modules that score predictions against references.

:class:`CheckedTextPairs` is a mixin placed before ``evaluate.Metric`` in a
metric's bases. It validates and normalises every batch before evaluate writes
it to its Arrow cache, so bad input fails at once with an error that names the
argument and the example, and references always reach ``_compute`` as one list
of strings per prediction (ragged lists allowed, ``None`` entries dropped).

It also lets options be bound once with ``configure`` (``evaluate.combine``
passes the same keyword arguments to every module, so per-metric options
cannot go through it), builds ``compute_metrics`` hooks for
``transformers.Trainer`` with ``for_trainer``, and keeps a module picklable
after ``compute``: evaluate keeps the released
file locks of the last computation, which cannot be pickled, and
``datasets.Dataset.map(..., num_proc=N)`` pickles any function that refers to
the module.
"""

from __future__ import annotations

import inspect
from typing import Any

from .core_checks import check_text_pairs
from .core_trainer import PredictionSource, TrainerTextMetrics, preprocess_logits_for_metrics


def text_pair_features() -> list[Any]:
    """evaluate features for string predictions with one reference string, or a list of them, per prediction.

    ``datasets`` is imported here, not at module level, so the rest of the core stays importable without it.
    """
    import datasets

    text = datasets.Value("string", id="sequence")
    return [
        datasets.Features({"predictions": text, "references": datasets.Sequence(text, id="references")}),
        datasets.Features({"predictions": text, "references": text}),
    ]


class CheckedTextPairs:
    """Validates ``predictions``/``references`` in ``add``, ``add_batch`` and ``compute``."""

    name: str
    filelocks: Any
    preprocess_logits_for_metrics = staticmethod(preprocess_logits_for_metrics)

    def _option_names(self) -> list[str]:
        parameters = inspect.signature(self._compute).parameters  # type: ignore[attr-defined]
        return [name for name in parameters if name not in ("predictions", "references")]

    def configure(self, **options: Any) -> Any:
        """Bind options for every later ``compute`` of this module (explicit ``compute`` arguments still win).

        Returns the module, so ``evaluate.combine([bleu.configure(max_order=2), rouge])`` works.
        """
        valid = self._option_names()
        unknown = sorted(set(options) - set(valid))
        if unknown:
            raise TypeError(f"{self.name}: unknown options {unknown}; valid options are {valid}")
        self._bound_options = {**getattr(self, "_bound_options", {}), **options}
        return self

    def compute(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> Any:
        """Score the given (or added) predictions against their references (evaluate appends the inputs)."""
        options = {**getattr(self, "_bound_options", {}), **kwargs}
        return super().compute(predictions=predictions, references=references, **options)  # type: ignore[misc]

    def for_trainer(
        self,
        tokenizer: Any,
        *others: Any,
        options: dict[str, dict[str, Any]] | None = None,
        predictions_from: PredictionSource = "generate",
        shift_labels: bool = False,
    ) -> TrainerTextMetrics:
        """A ``compute_metrics`` for ``transformers.Trainer`` scoring with this module and ``others``.

        Keys are prefixed with each module's name; ``options`` maps a module name to its keyword arguments.
        """
        modules = {}
        for module in (self, *others):
            if module.name in modules:
                raise ValueError(f"{self.name}: two metrics named {module.name!r}; use TrainerTextMetrics with prefixes")
            modules[module.name] = module
        return TrainerTextMetrics(
            tokenizer, modules, options=options, predictions_from=predictions_from, shift_labels=shift_labels
        )

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        if state.get("writer") is None:
            state["filelocks"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def add_batch(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> None:
        """Check and add a batch of predictions and references (evaluate appends the input description)."""
        predictions, references = check_text_pairs(self.name, predictions, references)
        super().add_batch(predictions=predictions, references=references, **kwargs)  # type: ignore[misc]

    def add(self, *, prediction: Any = None, reference: Any = None, **kwargs: Any) -> None:
        """Check and add one prediction and its reference(s) (evaluate appends the input description)."""
        (prediction,), (reference,) = check_text_pairs(self.name, [prediction], [reference])
        super().add(prediction=prediction, reference=reference, **kwargs)  # type: ignore[misc]
