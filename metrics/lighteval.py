"""lighteval metrics backed by our modules (lighteval 0.13's ``Metric`` classes, ``lighteval.metrics.utils``).

lighteval scores a task in two steps: each metric's sample-level function is called once per sample
(``compute(doc=..., model_response=...)`` of a ``SampleLevelComputation``, or ``prepare(...)`` of a
``Preparator``), and the metric's corpus-level function then gets the list of per-sample values (its stderr is
``mean_stderr`` for aggregations whose name holds "mean", else a bootstrap that resamples that list and calls the
aggregation again in a process pool). Two kinds of metric are made here, ready for
``LightevalTaskConfig(metrics=[...])``:

* :func:`corpus_metric` -- a ``CorpusLevelMetricGrouping``: each sample gives its per-example sufficient statistics
  (``example_stats``; or its inputs, for the modules that need every input at once: MAUVE, correlations,
  squad_v2's best threshold, ROUGE-1.5.5's intervals) and the aggregation calls the module once over them all
  (``compute_from_stats``, or ``compute``): exact corpus BLEU, chrF and TER with every gold as a reference.
  lighteval's own ``chrf``/``ter`` hand sacreBLEU each sample's golds as if they were reference streams, so they
  score only the first k generations (k golds per sample; with one gold, the first generation against every gold
  of the corpus); its ``bleu`` uses each sample's first gold and calls ``nltk.download`` each time it aggregates
  (its bootstrap stderr included). lighteval's bootstrap stderr of ours resamples statistics rows, not texts.
* :func:`sample_metric` -- a ``SampleLevelMetricGrouping``: the module scores each sample alone and the samples'
  scores are averaged, for the modules whose corpus score is that mean (ROUGE, METEOR, BERTScore without idf,
  BLEURT, COMET, exact match, SQuAD, ...); the others refuse, naming :func:`corpus_metric`.

In a custom task file::

    from evaluate_text_metrics.lighteval import corpus_metric, sample_metric

    TASKS_TABLE = [LightevalTaskConfig(name="my_mt", prompt_function=prompt, hf_repo="/data/my_mt", hf_subset="default",
                                       evaluation_splits=["test"], generation_size=64,
                                       metrics=[corpus_metric("sacrebleu"), corpus_metric("chrf"),
                                                corpus_metric("ter"), sample_metric("rouge")])]

A sample's inputs come from lighteval's ``Doc`` and ``ModelResponse`` (:func:`default_inputs`): the first
generation (``model_response.final_text[0]``) as the prediction and every gold (``doc.get_golds()``) as its
references; the source of COMET/SARI from ``doc.specific["source"]``. Pass ``inputs=`` (a function of the doc and
the response returning one example's columns) for anything else. lighteval itself is imported when a metric is
made, not when this module is imported.
"""

from __future__ import annotations

import math
import numbers
import pickle
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import load as _load

__all__ = ["HEADLINES", "LIGHTEVAL_NAMES", "MetricSample", "corpus_metric", "default_inputs", "mean", "output_name",
           "sample_metric"]

InputsOf = Callable[[Any, Any], Mapping[str, Any]]  # (doc, model_response) -> one example's columns, unbatched

# The outputs a metric reports when ``outputs`` is not given (lm_eval's headlines, plus the other scores of the
# multi-score modules).
HEADLINES: dict[str, tuple[str, ...]] = {
    "bertscore": ("precision", "recall", "f1"),
    "bleu": ("bleu",),
    "bleurt": ("mean_score",),
    "chrf": ("score",),
    "comet": ("mean_score",),
    "exact_match": ("exact_match",),
    "mauve": ("mauve",),
    "meteor": ("meteor",),
    "perplexity": ("corpus_perplexity",),
    "readability": ("flesch_kincaid_grade", "flesch_reading_ease"),
    "rouge": ("rouge1", "rouge2", "rougeL", "rougeLsum"),
    "rouge155": ("rouge1", "rouge2", "rougeL"),
    "sacrebleu": ("score",),
    "sari": ("sari",),
    "semantic_similarity": ("similarity",),
    "squad": ("exact_match", "f1"),
    "squad_v2": ("exact", "f1"),
    "ter": ("score",),
}
# Outputs for which lower is better (every other output: higher is better).
LOWER_IS_BETTER: dict[str, tuple[str, ...]] = {
    "ter": ("score", "num_edits"),
    "perplexity": ("mean_perplexity", "corpus_perplexity", "cross_entropy", "bits_per_token", "bits_per_byte", "nll"),
}
# The names lighteval 0.13's own metrics report (``lighteval.metrics.metrics.Metrics``): never given to ours.
LIGHTEVAL_NAMES = frozenset((
    "BERTScore-F", "BERTScore-P", "BERTScore-R", "acc", "avg@n", "bits_per_byte", "bleu", "bleu_1", "bleu_4", "bleurt",
    "byte_perplexity", "chrf", "chrf++", "edit_distance", "edit_similarity", "em", "extractive_match", "f1",
    "g-pass@k", "gpqa_pass@k", "latex-g-pass@k", "loglikelihood_f1", "longest_common_prefix_length", "maj@n",
    "math-g-pass@k", "mcc", "mf1", "mrr", "pass@k", "ppl", "recall", "rouge1", "rouge2", "rougeL", "rougeLsum",
    "simpleqa_judge", "summac", "summarization_compression", "summarization_coverage", "summarization_density",
    "ter", "truthfulqa_mc1", "truthfulqa_mc2", "word_perplexity",
))
# Per-example scores a one-example result gives as a list of one number (the modules' per-example outputs).
_PER_EXAMPLE_LISTS = {"bertscore": {"precision": "precision", "recall": "recall", "f1": "f1"},
                      "bleurt": {"mean_score": "scores"}, "comet": {"mean_score": "scores"},
                      "semantic_similarity": {"similarity": "similarities"}}

_TEXT_PAIRS = ("text pairs", "text pairs or token lists")
_SOURCED = ("sources, predictions and references", "sources and predictions, references optional")
_MODULES: dict[tuple[str, str | None], Any] = {}  # loaded modules, per process


def _module(metric: str, config_name: str | None) -> Any:
    key = (metric, config_name)
    if key not in _MODULES:
        _MODULES[key] = _load(metric, config_name)
    return _MODULES[key]


def output_name(metric: str, output: str) -> str:
    """The name lighteval reports for ``output`` of ``metric``: ``<metric>_<output>`` (``sacrebleu_score``,
    ``rouge_rouge1``, ``bertscore_f1``), or the metric's name for its eponymous output (``meteor``, ``sari``), unless
    that is the name of one of lighteval's own metrics (``bleu`` -> ``bleu_bleu``). lighteval keys a task's
    per-sample values by metric name, so two metrics of one name in a task would silently share (and mix) one
    list."""
    if output == metric and output not in LIGHTEVAL_NAMES:
        return output
    return f"{metric}_{output}"


def mean(values: Sequence[float]) -> float:
    """The mean of the samples' scores, summed with ``math.fsum`` (as our modules average examples); named so that
    lighteval computes its stderr as the standard error of a mean."""
    if not values:
        raise ValueError("evaluate_text_metrics.lighteval: no samples to average")
    return math.fsum(values) / len(values)


# -- samples ------------------------------------------------------------------------------------------------------


def _generation(metric: str, model_response: Any) -> str:
    texts = getattr(model_response, "final_text", None)
    if not texts:
        raise ValueError(f"{metric}: the model response holds no generated text; this metric scores generations "
                         f"(SamplingMethod.GENERATIVE)")
    return texts[0]


def _golds(metric: str, doc: Any) -> list[str]:
    golds = list(doc.get_golds())
    if not golds:
        raise ValueError(f"{metric}: the doc has no gold (doc.choices[doc.gold_index]); its references are its golds")
    return golds


def _source(metric: str, doc: Any) -> str:
    specific = getattr(doc, "specific", None) or {}
    if "source" not in specific:
        raise ValueError(f"{metric}: the source text of a sample comes from doc.specific['source'], which this doc "
                         f"lacks; set it in the task's prompt function or pass `inputs=`")
    return specific["source"]


class _DefaultInputs:
    """A sample as one example of a module whose input kind is ``kind`` (picklable, unlike a closure)."""

    def __init__(self, metric: str, kind: str) -> None:
        if kind not in (*_TEXT_PAIRS, "texts", "generated and human texts", *_SOURCED):
            raise ValueError(f"{metric}: lighteval's docs give no inputs of kind {kind!r} by themselves; pass "
                             f"`inputs=`, a function of (doc, model_response) returning one example's inputs")
        self.metric = metric
        self.kind = kind

    def __call__(self, doc: Any, model_response: Any) -> dict[str, Any]:
        metric, kind = self.metric, self.kind
        given = {"predictions": _generation(metric, model_response)}
        if kind in _TEXT_PAIRS or kind in _SOURCED:
            given["references"] = _golds(metric, doc)
        elif kind == "generated and human texts":
            given["references"] = _golds(metric, doc)[0]
        if kind in _SOURCED:
            given["sources"] = _source(metric, doc)
        return given


def default_inputs(metric: str, kind: str) -> InputsOf:
    """How a sample becomes one example of a module whose input kind (``module.inputs.name``) is ``kind``: the
    first generation as the prediction; every gold as its references (MAUVE: the first gold as a human text);
    ``doc.specific["source"]`` as the source (COMET, SARI)."""
    return _DefaultInputs(metric, kind)


@dataclass
class MetricSample:
    """What a corpus metric keeps of one sample: its inputs (one example's columns) and, where the module's corpus
    score comes from per-example statistics, its statistics row. lighteval's details record it as a dict."""

    inputs: dict[str, Any]
    statistics: dict[str, Any] | None = None


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _number(metric: str, output: str, result: Mapping[str, Any], lists: Mapping[str, str] | None = None) -> Any:
    """``output`` of a result: a number, or the mean of a list of per-example numbers (the corpus score of the
    modules that give per-example scores, e.g. BERTScore; a one-example list's own number)."""
    key = output if output in result else (lists or {}).get(output, output)
    value = result.get(key)
    if isinstance(value, list) and value and all(_is_number(number) for number in value):
        value = value[0] if len(value) == 1 else math.fsum(value) / len(value)
    if _is_number(value):
        return value
    numeric = sorted(name for name, number in result.items() if _is_number(number))
    raise ValueError(f"{metric}: the result's output {output!r} is {type(value).__name__}, not a number; its numeric "
                     f"outputs are {numeric}")


class _Scorer:
    """One module with its options, and how a sample becomes its inputs; shared by the outputs of one metric.
    Pickled (lighteval's bootstrap stderr runs the aggregation in a process pool) without the loaded module."""

    def __init__(self, metric: str, config_name: str | None, options: Mapping[str, Any], inputs: InputsOf | None,
                 statistics: bool | None) -> None:
        self.metric = metric
        self.config_name = config_name
        self.options = dict(options)
        module = self.module
        module.resolve_options(self.options)  # bad options fail when the metric is made
        self.name = module.name
        self.columns = tuple(module.inputs.columns)
        self.inputs_of = default_inputs(self.name, module.inputs.name) if inputs is None else inputs
        resolved = self.resolved
        exact = not module.needs_corpus(resolved) and (not module.needs_rows(resolved) or module.rows_suffice(resolved))
        if statistics and not exact:
            raise ValueError(f"{self.name}: its corpus result with these options is not a function of per-example "
                             f"statistics; make the metric with statistics=False (the aggregation then scores the "
                             f"samples' inputs with one `compute`)")
        self.statistics = exact if statistics is None else bool(statistics)
        self._memo: tuple[tuple[int, ...], list[Any], dict[str, Any]] | None = None

    @property
    def module(self) -> Any:
        return _module(self.metric, self.config_name)

    @property
    def resolved(self) -> Any:
        """The module's options object for :attr:`options`."""
        return self.module.resolve_options(self.options)

    def __getstate__(self) -> dict[str, Any]:
        # For lighteval's bootstrap pool, which needs the aggregation only: a user's `inputs` function that cannot
        # be pickled (a lambda) stays behind.
        state = dict(self.__dict__)
        state["_memo"] = None
        try:
            pickle.dumps(self.inputs_of)
        except Exception:  # noqa: BLE001 - any pickling failure
            state["inputs_of"] = None
        return state

    def __deepcopy__(self, memo: dict[int, Any]) -> _Scorer:
        return self  # lighteval deep-copies task configurations; a scorer is never changed after it is made

    def example(self, doc: Any, model_response: Any) -> dict[str, list[Any]]:
        """One sample's inputs as a batch of one example."""
        given = self.inputs_of(doc, model_response)
        if not isinstance(given, Mapping) or set(given) - set(self.columns):
            raise ValueError(f"{self.name}: `inputs` must return a dict of the module's inputs {list(self.columns)}, "
                             f"got {given!r}")
        return {name: [given[name]] for name in self.columns if name in given}

    def sample(self, doc: Any, model_response: Any) -> MetricSample:
        example = self.example(doc, model_response)
        if not self.statistics:
            return MetricSample(example)
        columns = self.module.example_stats(**example, **self.options)
        return MetricSample(example, {name: values[0] for name, values in columns.items()})

    def sample_result(self, doc: Any, model_response: Any) -> dict[str, Any]:
        return self.module.compute(**self.example(doc, model_response), **self.options)

    def corpus_result(self, items: Sequence[Any]) -> dict[str, Any]:
        """The module's result over every sample, from one call (kept for the metric's other outputs, which
        lighteval aggregates one by one over lists holding the same samples)."""
        key = tuple(map(id, items))
        if self._memo is not None and self._memo[0] == key:
            return self._memo[2]
        samples = [self._checked(item, index) for index, item in enumerate(items)]
        if not samples:
            raise ValueError(f"{self.name}: no samples to score (the aggregation got an empty list)")
        if self.statistics:
            result = self.module.compute_from_stats([sample.statistics for sample in samples], **self.options)
        else:
            columns = {name: [value for sample in samples for value in sample.inputs[name]]
                       for name in samples[0].inputs}
            result = self.module.compute(**columns, **self.options)
        self._memo = (key, list(items), result)
        return result

    def _checked(self, item: Any, index: int) -> MetricSample:
        if isinstance(item, Mapping) and "inputs" in item:  # a sample read back from lighteval's details
            item = MetricSample(dict(item["inputs"]), item.get("statistics"))
        if not isinstance(item, MetricSample) or (self.statistics and item.statistics is None):
            raise ValueError(f"{self.name}: sample {index} is {item!r}, not a sample made by this metric's "
                             f"sample-level function (evaluate_text_metrics.lighteval)")
        return item


# -- lighteval's classes, made when lighteval is first needed -------------------------------------------------------

_CLASS_NAMES = ("ModulePreparator", "ModuleSampleScores", "ModuleCorpusOutput")


def _lighteval_classes() -> dict[str, type]:
    """Subclasses of lighteval's ``Preparator``, ``SampleLevelComputation`` and ``CorpusLevelComputation``, made on
    first use and kept as attributes of this module (so pickle finds them)."""
    if all(name in globals() for name in _CLASS_NAMES):
        return {name: globals()[name] for name in _CLASS_NAMES}
    try:
        from lighteval.metrics.metrics_corpus import CorpusLevelComputation
        from lighteval.metrics.metrics_sample import SampleLevelComputation
        from lighteval.metrics.sample_preparator import Preparator
    except ImportError as error:
        raise ImportError(f"evaluate_text_metrics.lighteval needs lighteval (`pip install lighteval==0.13.0`): "
                          f"{error}") from error

    class ModulePreparator(Preparator):
        """Sample-level function of a corpus metric: the sample's statistics row (or inputs), once for every output."""

        def __init__(self, scorer: _Scorer, names: Sequence[str]) -> None:
            self.scorer = scorer
            self.names = tuple(names)

        def prepare(self, doc: Any, model_response: Any, **kwargs: Any) -> dict[str, MetricSample]:
            sample = self.scorer.sample(doc, model_response)
            return dict.fromkeys(self.names, sample)

        def __str__(self) -> str:
            return f"{type(self).__name__}({self.scorer.name}, options={self.scorer.options})"

    class ModuleSampleScores(SampleLevelComputation):
        """Sample-level function of a sample metric: the module's scores of the sample alone."""

        def __init__(self, scorer: _Scorer, outputs: Mapping[str, str]) -> None:
            self.scorer = scorer
            self.outputs = dict(outputs)  # lighteval name -> the module's output

        def compute(self, doc: Any, model_response: Any, **kwargs: Any) -> dict[str, Any]:
            result = self.scorer.sample_result(doc, model_response)
            lists = _PER_EXAMPLE_LISTS.get(self.scorer.name, {})
            return {name: _number(self.scorer.name, output, result, lists) for name, output in self.outputs.items()}

        def __str__(self) -> str:
            return f"{type(self).__name__}({self.scorer.name}, options={self.scorer.options})"

    class ModuleCorpusOutput(CorpusLevelComputation):
        """Corpus-level function of one output of a corpus metric: the module's result over every sample."""

        def __init__(self, scorer: _Scorer, output: str) -> None:
            self.scorer = scorer
            self.output = output

        def compute_corpus(self, items: Sequence[Any]) -> Any:
            return _number(self.scorer.name, self.output, self.scorer.corpus_result(items),
                           _PER_EXAMPLE_LISTS.get(self.scorer.name, {}))

        def __str__(self) -> str:
            return f"{type(self).__name__}({self.scorer.name}.{self.output}, options={self.scorer.options})"

    made = {"ModulePreparator": ModulePreparator, "ModuleSampleScores": ModuleSampleScores,
            "ModuleCorpusOutput": ModuleCorpusOutput}
    for name, cls in made.items():
        cls.__module__, cls.__qualname__ = __name__, name
        globals()[name] = cls
    return made


def __getattr__(name: str) -> Any:
    if name in _CLASS_NAMES:
        return _lighteval_classes()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# -- the metrics --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Plan:
    scorer: _Scorer
    outputs: dict[str, str] = field(default_factory=dict)  # lighteval name -> the module's output
    higher_is_better: dict[str, bool] = field(default_factory=dict)


def _plan(metric: str | Path, outputs: str | Sequence[str] | None, config_name: str | None,
          options: Mapping[str, Any] | None, inputs: InputsOf | None, statistics: bool | None,
          higher_is_better: bool | Mapping[str, bool] | None, names: Mapping[str, str] | None) -> _Plan:
    if not isinstance(metric, (str, Path)):
        raise TypeError(f"evaluate_text_metrics.lighteval: `metric` must be a metric name or folder, got "
                        f"{type(metric).__name__}")
    if options is not None and not isinstance(options, Mapping):
        raise TypeError(f"{metric}: `options` must be a dict of the module's options, got {type(options).__name__}")
    if inputs is not None and not callable(inputs):
        raise TypeError(f"{metric}: `inputs` must be a function of (doc, model_response), got {type(inputs).__name__}")
    scorer = _Scorer(str(metric), config_name, options or {}, inputs, statistics)
    name = scorer.name
    if outputs is None:
        if name not in HEADLINES:
            raise ValueError(f"{name}: name the outputs to report, e.g. outputs=[...] (no default for this metric)")
        outputs = HEADLINES[name]
    outputs = (outputs,) if isinstance(outputs, str) else tuple(outputs)
    if not outputs or not all(isinstance(output, str) and output for output in outputs):
        raise TypeError(f"{name}: `outputs` must name one or more of the module's outputs, got {outputs!r}")
    names = dict(names or {})
    unknown = set(names) - set(outputs)
    if unknown:
        raise ValueError(f"{name}: `names` renames outputs that are not reported: {sorted(unknown)}")
    reported = {names.get(output, output_name(name, output)): output for output in outputs}
    if len(reported) != len(outputs):
        raise ValueError(f"{name}: two outputs would be reported under one name; pass `names`")
    lower = LOWER_IS_BETTER.get(name, ())
    if isinstance(higher_is_better, Mapping):
        better = {shown: bool(higher_is_better.get(output, output not in lower)) for shown, output in reported.items()}
    elif higher_is_better is None:
        better = {shown: output not in lower for shown, output in reported.items()}
    else:
        better = dict.fromkeys(reported, bool(higher_is_better))
    return _Plan(scorer, reported, better)


def corpus_metric(metric: str | Path, outputs: str | Sequence[str] | None = None, *, config_name: str | None = None,
                  options: Mapping[str, Any] | None = None, inputs: InputsOf | None = None,
                  statistics: bool | None = None, higher_is_better: bool | Mapping[str, bool] | None = None,
                  names: Mapping[str, str] | None = None) -> Any:
    """A lighteval ``CorpusLevelMetricGrouping`` reporting ``outputs`` (default :data:`HEADLINES`) of module
    ``metric`` (a name of :func:`evaluate_text_metrics.names` or a metric folder) loaded with ``config_name`` and
    computed with ``options`` (checked now): each sample gives a :class:`MetricSample` and the aggregation calls
    the module once over all of them (``compute_from_stats`` on the samples' statistics rows where the result is a
    function of them, else ``compute`` on their inputs; ``statistics`` forces one or the other). Reported names:
    :func:`output_name`, or ``names`` (output -> name); ``higher_is_better``: a bool, a dict by output, or the
    default (lower is better for TER and perplexity)."""
    classes = _lighteval_classes()  # first: says what to install where lighteval is missing
    from lighteval.metrics.utils.metric_utils import CorpusLevelMetricGrouping
    from lighteval.tasks.requests import SamplingMethod

    plan = _plan(metric, outputs, config_name, options, inputs, statistics, higher_is_better, names)
    shown = list(plan.outputs)
    return CorpusLevelMetricGrouping(
        metric_name=shown,
        higher_is_better=plan.higher_is_better,
        category=SamplingMethod.GENERATIVE,
        sample_level_fn=classes["ModulePreparator"](plan.scorer, shown),
        corpus_level_fn={name: classes["ModuleCorpusOutput"](plan.scorer, output)
                         for name, output in plan.outputs.items()},
    )


def sample_metric(metric: str | Path, outputs: str | Sequence[str] | None = None, *, config_name: str | None = None,
                  options: Mapping[str, Any] | None = None, inputs: InputsOf | None = None,
                  higher_is_better: bool | Mapping[str, bool] | None = None,
                  names: Mapping[str, str] | None = None) -> Any:
    """A lighteval ``SampleLevelMetricGrouping`` reporting ``outputs`` of module ``metric``: the module scores each
    sample alone and lighteval averages the scores (:func:`mean`). Only for modules whose corpus result with these
    options is the mean of their one-example results (or which give per-example scores); the others (BLEU, chrF,
    TER, ...) refuse, naming :func:`corpus_metric`."""
    classes = _lighteval_classes()  # first: says what to install where lighteval is missing
    from lighteval.metrics.utils.metric_utils import SampleLevelMetricGrouping
    from lighteval.tasks.requests import SamplingMethod

    plan = _plan(metric, outputs, config_name, options, inputs, None, higher_is_better, names)
    scorer, module, resolved = plan.scorer, plan.scorer.module, plan.scorer.resolved
    per_example = module.per_example_outputs(resolved) and not module.aggregates(resolved)
    if module.needs_corpus(resolved) or not (module.averages_examples(resolved) or per_example):
        raise ValueError(f"{scorer.name}: its corpus result is not the mean of its one-sample results, so lighteval's "
                         f"average of per-sample scores would not be this metric; use corpus_metric({scorer.name!r}) "
                         f"(one call of the module over every sample)")
    shown = list(plan.outputs)
    return SampleLevelMetricGrouping(
        metric_name=shown,
        higher_is_better=plan.higher_is_better,
        category=SamplingMethod.GENERATIVE,
        sample_level_fn=classes["ModuleSampleScores"](scorer, plan.outputs),
        corpus_level_fn=dict.fromkeys(shown, mean),
    )
