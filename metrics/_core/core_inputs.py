"""Eager input checks for evaluate modules that score predictions against references.

:class:`CheckedTextPairs` is a mixin placed before ``evaluate.Metric`` in a
metric's bases. It validates and normalises every batch before evaluate writes
it to its Arrow cache, so bad input fails at once with an error that names the
argument and the example, and references always reach ``_compute`` as one list
of strings per prediction (ragged lists allowed, ``None`` entries dropped).

It also keeps a module picklable after ``compute``: evaluate keeps the released
file locks of the last computation, which cannot be pickled, and
``datasets.Dataset.map(..., num_proc=N)`` pickles any function that refers to
the module.
"""

from __future__ import annotations

from typing import Any

from .core_checks import check_text_pairs


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
