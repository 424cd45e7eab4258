"""Results shaped for the clients that consume them in their own way: evaluate's evaluator and
lm-evaluation-harness.

Two clients call a module's ``compute`` and then treat every output alike:

* ``evaluate.evaluator(...).compute(..., strategy="bootstrap")`` resamples the inputs and recomputes the
  result for each output key with ``scipy.stats.bootstrap``, which needs a number (or an array of numbers)
  per key: a signature string, a dict of per-type scores or a list of per-example scores breaks it. Under that
  strategy (only) a result keeps its numbers, nested dicts of numbers flattened to ``<outer>_<inner>`` keys,
  and leaves out strings and lists.
* lm-evaluation-harness's ``hf_evaluate: true`` route calls ``compute`` once per document and aggregates each
  output over the documents (usually with ``mean``). That is the corpus score only for metrics whose corpus
  result is the mean of their one-example results, with every output a number; any other metric refuses the
  call with a message naming the ready-made route (``evaluate_text_metrics.lm_eval``).

The client is recognised from the call stack: the first frame outside the metric, its core and evaluate's
module wrappers (``evaluate.module``: ``compute`` and ``combine``'s ``compute``).
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Mapping
from typing import Any, Literal

Client = Literal["evaluator bootstrap", "lm-eval per document"]

EVALUATOR_MODULE = "evaluate.evaluator.base"
# evaluate's Evaluator.compute_metric (its `strategy` argument) and the statistic it hands scipy's bootstrap
_EVALUATOR_COMPUTE = "compute_metric"
_EVALUATOR_STATISTIC = "args_metric"
_LM_EVAL_PREFIX = "lm_eval."
_LM_EVAL_PER_DOCUMENT = "process_results"
_PASSED_THROUGH = ("evaluate.module", "evaluate_modules.")


def calling_client(frame: Any = None) -> Client | None:
    """The client whose call this is, from the caller of ``frame`` (default: the caller's caller) outwards."""
    frame = sys._getframe(2) if frame is None else frame
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        function = frame.f_code.co_name
        if module == EVALUATOR_MODULE:
            if function == _EVALUATOR_STATISTIC or (
                function == _EVALUATOR_COMPUTE and frame.f_locals.get("strategy") == "bootstrap"
            ):
                return "evaluator bootstrap"
            return None
        if module.startswith(_LM_EVAL_PREFIX):
            return "lm-eval per document" if function == _LM_EVAL_PER_DOCUMENT else None
        if not (module.startswith(_PASSED_THROUGH) or module.rpartition(".")[2].startswith("core_")):
            return None
        frame = frame.f_back
    return None


def is_number(value: Any) -> bool:
    """A real number (bools and NumPy numbers included)."""
    return isinstance(value, numbers.Real)


def bootstrappable(result: Mapping[str, Any]) -> dict[str, Any]:
    """The outputs of a result that evaluate's bootstrap can resample: its numbers, and dicts of numbers flattened
    to ``<outer>_<inner>``; lists (per-example scores, histograms, whose lengths vary across resamples) and
    strings (signatures, model names) left out."""
    kept: dict[str, Any] = {}
    for key, value in result.items():
        if is_number(value):
            kept[key] = value
        elif isinstance(value, Mapping):
            kept.update((f"{key}_{inner}", number) for inner, number in value.items() if is_number(number))
    return kept


def unresampled_column(inputs: Mapping[str, Any]) -> str | None:
    """The first input column evaluate's bootstrap cannot resample example by example (None when there is none):
    one whose examples are lists (token lists, tag sequences, several references), which scipy turns into a 2-D
    array (resampling the inner lists' positions) or cannot turn into an array at all (ragged lengths)."""
    for name, values in inputs.items():
        if hasattr(values, "ndim"):  # an array: scipy resamples a 1-D one (object arrays of lists too) by example
            if values.ndim > 1:
                return name
            continue
        if isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__iter__"):
            continue
        # a list, or a sequence such as the evaluator's dataset columns
        if any(isinstance(value, (list, tuple)) or getattr(value, "ndim", 0) > 0 for value in values):
            return name
    return None


def bootstrap_refusal(metric: str, column: str) -> str:
    """The message refusing evaluate's bootstrap of a column whose examples are lists."""
    return (
        f"{metric}: evaluate's bootstrap (scipy.stats.bootstrap) cannot resample `{column}`, whose examples are lists "
        f"(token lists, tag sequences, several references): scipy makes a 2-D array of them and resamples the "
        f"positions inside each list, or fails on lists of different lengths. Pass such columns to "
        f"Evaluator.compute_metric as 1-D object arrays (`array = numpy.empty(len(values), dtype=object); "
        f"array[:] = values`), one reference per example to the task evaluators, or use the module's own interval "
        f"(`confidence=True`) where it has one"
    )


def averaged_per_document_problem(result: Mapping[str, Any], averages_examples: bool) -> str | None:
    """Why averaging this one-document result over documents does not give the corpus result (None when it
    does: the metric's corpus result is the mean of its one-example results, and every output is a number)."""
    if not averages_examples:
        return "its corpus score is not the mean of per-document scores"
    others = [key for key, value in result.items() if not is_number(value) or isinstance(value, bool)]
    if others:
        return f"its outputs {others} are not numbers"
    undefined = [key for key, value in result.items() if isinstance(value, float) and not math.isfinite(value)]
    return f"its outputs {undefined} are not finite" if undefined else None


# Input kinds whose columns lm-evaluation-harness's documents give (a target and a generated text per document):
# evaluate_text_metrics.lm_eval has ready-made task functions for the metrics of these kinds.
LM_EVAL_INPUT_KINDS = ("text pairs", "text pairs or token lists", "labels", "generated and human texts")


def lm_eval_refusal(metric: str, problem: str, input_kind: str) -> str:
    """The message refusing lm-evaluation-harness's per-document call of ``metric`` (of input kind ``input_kind``)."""
    refusal = (f"{metric}: lm-evaluation-harness's `hf_evaluate: true` route scores each document alone and "
               f"averages the results over documents, which here does not give this metric's result ({problem})")
    if input_kind not in LM_EVAL_INPUT_KINDS:
        return (f"{refusal}; its inputs ({input_kind}) are not the target and generated texts that route passes, so "
                f"score the task's saved outputs with the module itself")
    return (
        f"{refusal}. Use the ready-made task functions, which score the whole corpus at once: in the task folder's "
        f"utils.py `from evaluate_text_metrics.lm_eval import {metric}, {metric}_corpus`, and in the task's YAML "
        f"`metric: !function utils.{metric}` with `aggregation: !function utils.{metric}_corpus`"
    )
