"""lm-evaluation-harness task functions: our metrics scored once over a task's whole corpus.

lm-evaluation-harness (lm-eval) scores a ``generate_until`` task in two steps: each metric function is called once
per document, as ``fn(references=[gold], predictions=[generation], **yaml_options)`` (falling back to
``fn([gold, generation])`` when that raises ``TypeError``), and the metric's ``aggregation`` then gets the list of
per-document values. Averaging per-document scores gives the corpus score only for metrics that are means of
their examples (ROUGE, METEOR, exact match), which is why our modules refuse lm-eval's ``hf_evaluate: true``
per-document call for the others. The pairs here follow lm-eval's own ``bleu``/``chrf``/``ter``: the per-document
function passes the document's ``(references, generation)`` item through, and the aggregation scores every item
with one ``compute`` of the module (loaded once per process). In a task folder::

    # utils.py
    from evaluate_text_metrics.lm_eval import sacrebleu, sacrebleu_corpus

    # task.yaml
    metric_list:
      - metric: !function utils.sacrebleu
        aggregation: !function utils.sacrebleu_corpus
        higher_is_better: true

For every module whose inputs a task's documents give (a target and a generated text), ``N``/``N_corpus`` is
ready-made: the headline output of :data:`READY_MADE`, e.g. ``sacrebleu`` gives ``score``; multi-output modules
also have one pair per output (``rouge1``, ``rouge2``, ``rougeL``, ``rougeLsum``, ``bertscore_precision``, ...).
:func:`corpus_metric` makes a pair for any output and options (``corpus_metric("chrf", word_order=2,
name="chrf++")``): options in the task's YAML would reach only the per-document call, never the aggregation, so
the per-document function refuses them.

References: a document's gold is a string or a list of strings (several references, ragged across documents).
lm-eval itself passes a list gold through only where the task's ``process_results`` builds the items
(:func:`document_results`); a ``doc_to_target`` that returns a list switches lm-eval to its multiple-target path,
which calls the metric once per target and keeps only ``1.0 if any value is truthy else 0.0`` per document, so no
corpus metric can be computed from it: the aggregation then refuses the numbers it gets.

lm-eval itself is never imported here.
"""

from __future__ import annotations

import functools
import math
import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from . import load

__all__ = ["READY_MADE", "CorpusMetric", "TaskFunction", "corpus_metric", "document_results", "task_function_names"]

# An item: what the per-document function returns and the aggregation scores, (references, generation) for text
# metrics (references a list of strings), (gold label, predicted label) for label metrics, (human text,
# generated text) for MAUVE.
Item = tuple[Any, Any]

# The input kinds (as our modules name them, ``module.inputs.name``) whose two columns a task's documents give.
TEXT_PAIRS = "text pairs"
TEXT_OR_TOKEN_PAIRS = "text pairs or token lists"
LABELS = "labels"
HUMAN_TEXTS = "generated and human texts"
INPUT_KINDS = (TEXT_PAIRS, TEXT_OR_TOKEN_PAIRS, LABELS, HUMAN_TEXTS)


@dataclass(frozen=True)
class Ready:
    """What is ready-made for one module: its input kind, the output its pair ``N``/``N_corpus`` gives, and the
    outputs that get a pair of their own."""

    kind: str
    headline: str
    outputs: tuple[str, ...] = ()


# Every module of the kinds above. Headlines: sacreBLEU/chrF/TER "score" (0-100, as lm-eval's own bleu/chrf/ter),
# evaluate's BLEU "bleu" (0-1), ROUGE "rougeL" (rouge-score's F-measure; rouge155: the F-measure the Perl script
# prints, rounded to 5 decimals), BERTScore the mean of the per-example F1, BLEURT "mean_score", the rest their
# one score.
READY_MADE: dict[str, Ready] = {
    "bertscore": Ready(TEXT_PAIRS, "f1", ("precision", "recall", "f1")),
    "bleu": Ready(TEXT_PAIRS, "bleu"),
    "bleurt": Ready(TEXT_PAIRS, "mean_score"),
    "chrf": Ready(TEXT_PAIRS, "score"),
    "exact_match": Ready(TEXT_PAIRS, "exact_match"),
    "meteor": Ready(TEXT_OR_TOKEN_PAIRS, "meteor"),
    "rouge": Ready(TEXT_PAIRS, "rougeL", ("rouge1", "rouge2", "rougeL", "rougeLsum")),
    "rouge155": Ready(TEXT_PAIRS, "rougeL", ("rouge1", "rouge2", "rougeL")),
    "sacrebleu": Ready(TEXT_PAIRS, "score"),
    "semantic_similarity": Ready(TEXT_PAIRS, "similarity"),
    "ter": Ready(TEXT_PAIRS, "score"),
    "accuracy": Ready(LABELS, "accuracy"),
    "f1": Ready(LABELS, "f1"),
    "precision": Ready(LABELS, "precision"),
    "recall": Ready(LABELS, "recall"),
    "matthews_correlation": Ready(LABELS, "matthews_correlation"),
    "mauve": Ready(HUMAN_TEXTS, "mauve"),
}

_INTEGER = re.compile(r"\s*[+-]?[0-9]+\s*")
_CALL = "lm-eval passes one document per call: references=[gold], predictions=[generation]"


@functools.cache
def _module(metric: str) -> Any:
    """Our module ``metric``, loaded once per process (lm-eval aggregates on one process)."""
    return load(metric)


def output_name(metric: str, output: str) -> str:
    """The name lm-eval displays for ``output`` of ``metric``: the output's own name where it already starts with
    the metric's (``rouge1``), else ``<metric>_<output>`` (``bertscore_f1``)."""
    return output if output.startswith(metric) else f"{metric}_{output}"


# -- items --------------------------------------------------------------------------------------------------------


def _is_integer(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _text(name: str, what: str, value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name}: the {what} of {where} must be a string, got {type(value).__name__} ({value!r})")
    return value


def _label(name: str, what: str, value: Any, where: str) -> int:
    """An integer label; lm-eval turns a document's integer gold into a string for ``generate_until`` tasks, so a
    string holding an integer (spaces around it allowed) is taken as that integer."""
    if _is_integer(value):
        return int(value)
    if isinstance(value, str) and _INTEGER.fullmatch(value):
        return int(value)
    raise TypeError(
        f"{name}: the {what} of {where} must be an integer label (or a string holding one), got "
        f"{type(value).__name__} ({value!r}); map generations to class indices first, e.g. with a regex filter in "
        f"the task's filter_list or in the task's process_results"
    )


def _references(name: str, gold: Any, where: str) -> list[str]:
    """A document's references: one string, or a non-empty list of strings (several references)."""
    if isinstance(gold, str):
        return [gold]
    if isinstance(gold, (list, tuple)) and gold:
        return [_text(name, f"reference {index}", reference, where) for index, reference in enumerate(gold)]
    raise TypeError(f"{name}: the gold of {where} must be a string or a non-empty list of strings (several "
                    f"references), got {type(gold).__name__} ({gold!r})")


def make_item(name: str, kind: str, gold: Any, prediction: Any, where: str) -> Item:
    """The checked item of one document for a module of input kind ``kind``."""
    if kind in (TEXT_PAIRS, TEXT_OR_TOKEN_PAIRS):
        return _references(name, gold, where), _text(name, "generation", prediction, where)
    if kind == LABELS:
        return _label(name, "gold", gold, where), _label(name, "prediction", prediction, where)
    if kind == HUMAN_TEXTS:
        return _text(name, "human text (gold)", gold, where), _text(name, "generation", prediction, where)
    raise ValueError(f"{name}: lm-eval's documents give no inputs of kind {kind!r}; the kinds are {INPUT_KINDS}")


def _one(name: str, argument: str, value: Any) -> Any:
    """The one value of an argument lm-eval gives as a one-element list."""
    if not isinstance(value, (list, tuple)) or len(value) != 1:
        size = f"{len(value)} values" if isinstance(value, (list, tuple)) else type(value).__name__
        raise ValueError(f"{name}: `{argument}` must be a list holding one document's value, got {size}; {_CALL} "
                         f"(several references are one value: references=[[reference_1, reference_2]])")
    return value[0]


def _corpus_pair(name: str, item: Any, index: int) -> tuple[Any, Any]:
    """The (gold, prediction) of the ``index``-th value an aggregation gets."""
    if isinstance(item, numbers.Number):
        raise ValueError(
            f"{name}: document {index} has the value {item!r} instead of this metric's (references, generation) "
            f"item. lm-eval gives numbers when the task's doc_to_target returns a list (its multiple-target path "
            f"scores each target alone and keeps only 1.0 if any was truthy, else 0.0) or when the aggregation is "
            f"paired with another metric function. For several references per document, build the items in the "
            f"task's process_results (evaluate_text_metrics.lm_eval.document_results) and name the metric there"
        )
    if not isinstance(item, (list, tuple)) or len(item) != 2:
        raise ValueError(f"{name}: document {index} has the value {item!r}; an aggregation of "
                         f"evaluate_text_metrics.lm_eval expects (gold, generation) items, as its metric function "
                         f"{name!r} returns them")
    return item[0], item[1]


# -- outputs ------------------------------------------------------------------------------------------------------


def _number_of(name: str, output: str, result: Mapping[str, Any]) -> float:
    """``output`` of a module's result as one float: a number, or the mean of per-example numbers (BERTScore)."""
    if output not in result:
        numeric = [key for key, value in result.items() if _is_number(value) or _are_numbers(value)]
        raise ValueError(f"{name}: the result has no output {output!r}; its numeric outputs are {numeric}")
    value = result[output]
    if _is_number(value):
        return float(value)
    if _are_numbers(value):
        return math.fsum(value) / len(value)
    raise ValueError(f"{name}: the output {output!r} is {type(value).__name__}, not a number or a list of numbers; "
                     f"choose another output")


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _are_numbers(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(_is_number(number) for number in value)


# -- the pairs ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CorpusMetric:
    """One output of one module with fixed options, scored over a task's corpus: :meth:`document` is lm-eval's
    per-document metric function, :meth:`corpus` its aggregation; :attr:`name` is what lm-eval displays."""

    metric: str
    output: str
    name: str
    kind: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def document(self, *items: Any, references: Any = None, predictions: Any = None, **options: Any) -> Item:
        """The document's checked ``(gold, generation)`` item, from lm-eval's call ``references=[gold],
        predictions=[generation]`` or its fallback ``([gold, generation])``."""
        if options:
            # A ValueError: lm-eval retries a call that raises TypeError without the options, which would drop them.
            raise ValueError(
                f"{self.name}: got the options {sorted(options)} for each document (from the task's YAML metric "
                f"entry); lm-eval passes them to the per-document call only, never to the aggregation. Make the "
                f"pair with its options in the task's utils.py instead: `my_metric, my_metric_corpus = "
                f"corpus_metric({self.metric!r}, {', '.join(f'{key}=...' for key in sorted(options))}, "
                f"name='my_metric')` from evaluate_text_metrics.lm_eval"
            )
        if items:
            if len(items) != 1 or references is not None or predictions is not None:
                raise TypeError(f"{self.name}: pass `references=` and `predictions=` (or one [gold, generation] "
                                f"item); {_CALL}")
            gold, prediction = _corpus_pair(self.name, items[0], 0)
        else:
            gold, prediction = _one(self.name, "references", references), _one(self.name, "predictions", predictions)
        return make_item(self.name, self.kind, gold, prediction, "this document")

    def corpus(self, items: Sequence[Any]) -> float:
        """The module's output over every document's item, from one ``compute``."""
        if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
            raise TypeError(f"{self.name}: the aggregation takes the list of per-document items, got "
                            f"{type(items).__name__}")
        if not items:
            raise ValueError(f"{self.name}: no documents to score (the aggregation got an empty list)")
        checked = [make_item(self.name, self.kind, *_corpus_pair(self.name, item, index), f"document {index}")
                   for index, item in enumerate(items)]
        result = _module(self.metric).compute(predictions=[prediction for _, prediction in checked],
                                              references=[gold for gold, _ in checked], **self.options)
        return _number_of(self.name, self.output, result)

    def functions(self) -> tuple[TaskFunction, TaskFunction]:
        """The (metric function, aggregation) pair for a task's YAML."""
        return TaskFunction(self, "document"), TaskFunction(self, "corpus")


class TaskFunction:
    """A callable for a task's YAML (``!function utils.<name>``): a :class:`CorpusMetric`'s per-document function
    (``__name__`` is the metric name lm-eval displays) or its aggregation (``<name>_corpus``). Its repr is what
    lm-eval logs in the task's configuration."""

    def __init__(self, metric: CorpusMetric, role: Literal["document", "corpus"]) -> None:
        self.metric = metric
        self.role = role
        self.__name__ = self.__qualname__ = metric.name if role == "document" else f"{metric.name}_corpus"
        what = "per-document metric function" if role == "document" else "aggregation"
        self.__doc__ = f"lm-eval {what} of {metric.metric}'s {metric.output!r}: {getattr(CorpusMetric, role).__doc__}"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.metric, self.role)(*args, **kwargs)

    def __repr__(self) -> str:
        return f"{self.metric!r}.{self.role}"


def _ready(metric: str) -> Ready:
    if not isinstance(metric, str):
        raise TypeError(f"evaluate_text_metrics.lm_eval: a metric name must be a string, got {type(metric).__name__}")
    if metric not in READY_MADE:
        raise ValueError(f"evaluate_text_metrics.lm_eval: no task functions for {metric!r}; lm-eval's documents give "
                         f"the inputs of {', '.join(READY_MADE)}")
    return READY_MADE[metric]


def corpus_metric(metric: str, output: str | None = None, *, name: str | None = None,
                  **options: Any) -> tuple[TaskFunction, TaskFunction]:
    """The (metric function, aggregation) pair of ``output`` (default: the module's headline, :data:`READY_MADE`)
    of module ``metric`` computed with ``options`` (checked now, which loads the module), displayed by lm-eval as
    ``name`` (default: ``metric`` for the headline, else :func:`output_name`). Examples: ``corpus_metric("chrf",
    word_order=2, name="chrf++")``, ``corpus_metric("bleurt", checkpoint="/models/BLEURT-20")``,
    ``corpus_metric("rouge", "rouge2", use_stemmer=True)``. The output is checked when the aggregation runs: a
    number, or the mean of a per-example list (BERTScore's ``precision``/``recall``/``f1``)."""
    ready = _ready(metric)
    output = ready.headline if output is None else output
    if not isinstance(output, str) or not output:
        raise TypeError(f"{metric}: `output` must be the name of one of the module's outputs, got {output!r}")
    name = (metric if output == ready.headline else output_name(metric, output)) if name is None else name
    if not isinstance(name, str) or not name.strip():
        raise TypeError(f"{metric}: `name` (what lm-eval displays) must be a non-empty string, got {name!r}")
    if options:
        _module(metric).resolve_options(options)
    return CorpusMetric(metric, output, name, ready.kind, dict(options)).functions()


def document_results(references: str | Callable[[Mapping[str, Any]], Any], *functions: TaskFunction
                     ) -> Callable[[Mapping[str, Any], Sequence[Any]], dict[str, Item]]:
    """A task's ``process_results`` giving each of ``functions`` (per-document functions from here) the document's
    references: the field ``references`` of the document (a string or a list of strings), or what a function of
    the document returns. This is how several references per document reach the aggregations; in the task's YAML
    each metric is then named by its string (``metric: sacrebleu``) with ``aggregation: !function
    utils.sacrebleu_corpus``."""
    if not functions or not all(isinstance(function, TaskFunction) and function.role == "document"
                                for function in functions):
        raise TypeError("document_results: pass the per-document functions of evaluate_text_metrics.lm_eval "
                        "(e.g. sacrebleu, chrf) after the references field")
    if not (isinstance(references, str) or callable(references)):
        raise TypeError(f"document_results: `references` must be a document field's name or a function of the "
                        f"document, got {type(references).__name__}")

    def process_results(doc: Mapping[str, Any], results: Sequence[Any]) -> dict[str, Item]:
        gold = doc[references] if isinstance(references, str) else references(doc)
        return {function.__name__: function(references=[gold], predictions=[results[0]]) for function in functions}

    return process_results


def _ready_made() -> dict[str, tuple[str, str]]:
    """The ready-made pairs' names, each with its (module, output): ``N`` for the headline of module ``N``, then
    one name per output listed in :data:`READY_MADE` (:func:`output_name`)."""
    made: dict[str, tuple[str, str]] = {}
    for metric, ready in READY_MADE.items():
        made[metric] = (metric, ready.headline)
        made.update((output_name(metric, output), (metric, output)) for output in ready.outputs)
    return made


def task_function_names() -> list[str]:
    """The module-level names of the ready-made pairs: ``N`` and ``N_corpus`` for every name of :func:`_ready_made`."""
    return [each for name in _ready_made() for each in (name, f"{name}_corpus")]


def _ready_made_pairs() -> dict[str, TaskFunction]:
    """Every ready-made function by its module-level name (no module is loaded)."""
    pairs: dict[str, TaskFunction] = {}
    for name, (metric, output) in _ready_made().items():
        pairs[name], pairs[f"{name}_corpus"] = CorpusMetric(metric, output, name, READY_MADE[metric].kind).functions()
    return pairs


globals().update(_ready_made_pairs())
__all__ += task_function_names()
