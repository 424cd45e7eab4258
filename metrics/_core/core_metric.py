"""The statistics-metric base: a metric supplies its options, statistics and score; the base does the rest.

A metric is ``class Name(StatsMetric, evaluate.Metric)`` with three class
attributes, :attr:`~StatsMetric.about` (its description, citation and links,
an :class:`About`), :attr:`~StatsMetric.inputs` (an
:class:`~core_inputs.InputKind`) and :attr:`~StatsMetric.statistics` (a
:class:`Statistics`: its frozen :class:`~core_options.MetricOptions` dataclass
and the three core functions below). The base calls them as three methods, which
a metric overrides instead where it needs more than its inputs' columns (then it
names ``options_class`` itself):

* ``schema(options)`` — the :class:`~core_stats.StatsSchema` of its per-example statistics;
* ``example_rows(batch, options)`` — one row of statistics per example of a :class:`Batch`, in schema order;
* ``score(totals, options)`` — the result from the corpus totals (named fields).

From these the base provides evaluate's ``_info`` and ``_compute``, ``compute`` (in memory
when given every input at once, otherwise reading evaluate's cache batch by
batch), ``add``/``add_batch`` (checked before anything is written),
``example_stats``/``reduce_stats``/``compute_from_stats`` for
``datasets.Dataset.map`` and sharded scoring, ``configure`` for
``evaluate.combine``, ``for_trainer`` and ``preprocess_logits_for_metrics`` for
``transformers.Trainer``, and one keyword signature for all of them, generated
from the options. Options are checked before any input is read or written.

Optional hooks, each with a default that fits most metrics:

==========================  =============================================================================
``signature(options)``      the statistics' signature (default: ``options.stats_options.stats_signature()``)
``batch_totals``            totals of a whole batch at once (vectorised), instead of summing rows
``aggregates``              whether the result holds the corpus score (default True)
``per_example_outputs``     whether the result holds per-example values (default False) ...
``per_example``             ... made from rows by this method
``needs_rows``              whether every example's row must be kept (resampling; default False) ...
``extra_rows``              ... with other row sets aligned with them (e.g. a baseline system's) ...
``rows_suffice``            ... whether the rows alone give those outputs (``compute_from_stats``; default True) ...
``corpus_outputs``          ... and the outputs computed from them at the end
``averages_examples``       whether each output is the mean of that output over the examples scored one at a
                            time (default False): clients that average per-example results, such as
                            lm-evaluation-harness's ``hf_evaluate`` route, then get the corpus result
``check_corpus_size``       options that must agree with the number of examples (checked before scoring)
``check_resources``         refuse a batch whose work exceeds a bound option before doing it (default: every
                            text's size against ``max_text_chars`` where the options have it; core_resources)
``needs_corpus``            whether scoring needs every input at once (e.g. idf weights; default False) ...
``score_corpus``            ... and the result computed from them
``provenance``              outputs that say how a result was computed (e.g. a hashcode), in every result
``watchers``                observers of every batch (e.g. corpus-wide warnings)
``missing_options``         the required options a set of given options lacks (default: ``required_options``)
==========================  =============================================================================
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import math
import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from .core_checks import warn_caller
from .core_clients import averaged_per_document_problem, bootstrap_refusal, bootstrappable, calling_client, is_number
from .core_clients import lm_eval_refusal, unresampled_column
from .core_inputs import Columns, InputKind
from .core_options import MetricOptions, input_parameters, keyword_parameters
from .core_process import clear_caches
from .core_resources import ResampleBounds, TextBounds, check_resample_work, check_text_sizes
from .core_stats import EXAMPLES_FIELD, StatField, StatsSchema
from .core_streaming import (
    DEFAULT_STREAM_BATCH_SIZE,
    SHARED_TEXTS_STREAM_BATCH_SIZE,
    add_to_cache,
    added_examples,
    cache_mark,
    compute_from_cache,
)
from .core_streaming import WHOLE_FILE, holds_examples, salvage_writer, streaming_verified
from .core_trainer import PredictionSource, TrainerTextMetrics, preprocess_logits_for_metrics

Rows = Sequence[Sequence[Any]]
_GUARDS_LOCK = threading.Lock()  # makes each module's own lock once
_EVALUATE_INPUTS = ("predictions", "references")


@dataclass(frozen=True)
class About:
    """What evaluate's ``MetricInfo`` says of a metric besides its features (which come from the input kind)."""

    description: str
    citation: str
    inputs_description: str
    homepage: str = ""
    codebase_urls: tuple[str, ...] = ()
    reference_urls: tuple[str, ...] = ()


class Batch(Mapping[str, list[Any]]):
    """One batch of checked inputs: its columns, and the corpus index of its first example."""

    __slots__ = ("columns", "start", "size")

    def __init__(self, columns: Columns, start: int = 0) -> None:
        self.columns = columns
        self.start = start
        self.size = len(next(iter(columns.values()))) if columns else 0

    def __getitem__(self, name: str) -> list[Any]:
        return self.columns[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.columns)

    def __len__(self) -> int:
        return len(self.columns)

    def with_column(self, name: str, values: list[Any]) -> Batch:
        """The same examples with column ``name`` replaced."""
        return Batch({**self.columns, name: values}, self.start)


@dataclass(frozen=True)
class Statistics:
    """A metric's per-example statistics as its core family computes them, under one options class:
    ``schema(metric, stats_options)``, ``rows(*columns, stats_options)`` (the input kind's columns in order, one
    row per example in schema order) and ``score(totals, options)`` (the result from corpus totals), where
    ``stats_options`` are the options' :attr:`~core_options.MetricOptions.stats_options` (the options themselves,
    or the core's options they hold) and the score takes every option."""

    options: type[MetricOptions]
    schema: Callable[[str, Any], StatsSchema]
    rows: Callable[..., Rows]
    score: Callable[[Mapping[str, Any], Any], dict[str, Any]]


class BatchWatcher(Protocol):
    """Sees every batch (e.g. to warn about the corpus as a whole) and concludes after the last one."""

    def see(self, batch: Batch) -> None: ...

    def close(self) -> None: ...


def _folder_name(name: str) -> str:
    """A name for a folder inside evaluate's cache that stands for ``name`` (a model name or a path)."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[-80:] or "model"
    return f"{slug}-{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"


class StatsMetric:
    """Base of statistics metrics; place it before ``evaluate.Metric`` in the bases."""

    about: ClassVar[About]
    inputs: ClassVar[InputKind]
    statistics: ClassVar[Statistics]
    options_class: ClassVar[type[MetricOptions]]  # the statistics' options unless a metric names its own
    trainer_metrics_class: ClassVar[type] = TrainerTextMetrics
    # Options without which `compute` cannot run (e.g. a model checkpoint that no package ships): tools that run
    # every metric that fits the data leave such a metric out unless these are given.
    required_options: ClassVar[tuple[str, ...]] = ()
    # The option that `evaluate.load(path, config_name)` sets, for metrics whose configurations are models (as
    # evaluate's comet and bleurt take the checkpoint's name as the config name); None: configurations are not.
    config_option: ClassVar[str | None] = None
    # Whether a call embeds each distinct text of its examples once, so that examples sharing texts (systems scored
    # on the same sources and references) are best scored in one call: such a metric reads added examples back
    # SHARED_TEXTS_STREAM_BATCH_SIZE at a time (its own chunks bound the model's memory), and the comparison report
    # scores all its systems in one call.
    shares_texts: ClassVar[bool] = False
    stream_batch_size: int = DEFAULT_STREAM_BATCH_SIZE
    preprocess_logits_for_metrics = staticmethod(preprocess_logits_for_metrics)

    name: str
    _signatures: ClassVar[dict[str, inspect.Signature]] = {}

    # -- what a metric supplies ---------------------------------------------------------------------------

    def _info(self) -> Any:
        """evaluate's module information: :attr:`about` and the input kind's features for the configuration."""
        import evaluate

        about = self.about
        return evaluate.MetricInfo(
            description=about.description,
            citation=about.citation,
            inputs_description=about.inputs_description,
            homepage=about.homepage,
            features=self.inputs.features(getattr(self, "config_name", "default")),
            codebase_urls=list(about.codebase_urls),
            reference_urls=list(about.reference_urls),
        )

    def schema(self, options: Any) -> StatsSchema:
        """The statistics of one example."""
        return self.statistics.schema(self.name, options.stats_options)

    def example_rows(self, batch: Batch, options: Any) -> Rows:
        """One row of statistics per example of ``batch``, in schema order."""
        return self.statistics.rows(*(batch[column] for column in self.inputs.columns), options.stats_options)

    def score(self, totals: Mapping[str, Any], options: Any) -> dict[str, Any]:
        """The result from corpus totals."""
        return self.statistics.score(totals, options)

    # -- optional hooks (see the module docstring) ---------------------------------------------------------

    def signature(self, options: Any) -> str:
        return options.stats_options.stats_signature()

    def batch_totals(self, batch: Batch, options: Any) -> dict[str, Any] | None:
        return None

    def aggregates(self, options: Any) -> bool:
        return True

    def per_example_outputs(self, options: Any) -> bool:
        return False

    def per_example(self, rows: Rows, options: Any) -> dict[str, list[Any]]:
        return {}

    def needs_rows(self, options: Any) -> bool:
        return False

    def extra_rows(self, batch: Batch, options: Any) -> dict[str, Rows]:
        return {}

    def rows_suffice(self, options: Any) -> bool:
        return True

    def averages_examples(self, options: Any) -> bool:
        return False

    def corpus_outputs(self, rows: Rows, extra: Mapping[str, Rows], totals: Mapping[str, Any] | None,
                       options: Any) -> dict[str, Any]:
        return {}

    def check_corpus_size(self, size: int, options: Any) -> None:
        return None

    def check_resources(self, columns: Columns, options: Any, start: int = 0) -> None:
        """Refuse a batch (its first example is the corpus's ``start``-th) whose work would exceed a bound of
        the options, before any of it is done."""
        if isinstance(options, TextBounds):
            default = type(options).__dataclass_fields__["max_text_chars"].default
            check_text_sizes(self.name, columns, options.max_text_chars, start, default)

    def _check_corpus(self, size: int, options: Any) -> None:
        """The checks of a corpus of ``size`` examples before scoring: the options' own, then resampling's work."""
        self.check_corpus_size(size, options)
        if isinstance(options, ResampleBounds):
            for what, resamples in options.resampling_runs():
                check_resample_work(self.name, size, resamples, what, options.max_resample_work)

    def needs_corpus(self, options: Any) -> bool:
        return False

    def score_corpus(self, columns: Columns, options: Any) -> dict[str, Any]:
        raise NotImplementedError

    def provenance(self, options: Any) -> dict[str, Any]:
        return {}

    def missing_options(self, given: Mapping[str, Any]) -> list[str]:
        """The :attr:`required_options` that the options ``given`` lack (tools that run every metric the data fits
        leave the metric out, or stop, until they are given); a metric whose required options have alternatives
        (e.g. one folder of models or each model's own folder) says which to give."""
        return [option for option in self.required_options if option not in given]

    def watchers(self, options: Any) -> Sequence[BatchWatcher]:
        return ()

    # -- generated signatures ------------------------------------------------------------------------------

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "about" in cls.__dict__:  # evaluate's add_start_docstrings(description, inputs_description)
            cls.__doc__ = cls.about.description + cls.about.inputs_description + (cls.__doc__ or "")
        if "statistics" in cls.__dict__ and "options_class" not in cls.__dict__:
            cls.options_class = cls.statistics.options
        if cls.__dict__.get("shares_texts") and "stream_batch_size" not in cls.__dict__:
            cls.stream_batch_size = SHARED_TEXTS_STREAM_BATCH_SIZE
        declares = "options_class" in cls.__dict__ or "inputs" in cls.__dict__
        if not declares or not hasattr(cls, "options_class") or not hasattr(cls, "inputs"):
            return  # nothing new to sign, or an intermediate base that leaves the options to its subclasses
        columns = cls.inputs.columns
        options = keyword_parameters(cls.options_class)
        self_parameter = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        stats_parameter = [inspect.Parameter("stats", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        cls._signatures = {
            "_compute": inspect.Signature(self_parameter + input_parameters(columns) + options),
            "compute": inspect.Signature(
                self_parameter + input_parameters(columns, inspect.Parameter.KEYWORD_ONLY, None) + options
            ),
            "example_stats": inspect.Signature(self_parameter + input_parameters(columns) + options),
            "reduce_stats": inspect.Signature(self_parameter + stats_parameter + options),
            "compute_from_stats": inspect.Signature(self_parameter + stats_parameter + options),
            "configure": inspect.Signature(self_parameter + options),
        }
        for method_name, signature in cls._signatures.items():
            if method_name in cls.__dict__ or method_name == "compute":  # compute: see __init__
                continue
            method = _with_signature(getattr(StatsMetric, method_name), signature)
            setattr(cls, method_name, method)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.config_option is not None and self.config_name != "default":
            self._bound_options = {self.config_option: self.config_name, **getattr(self, "_bound_options", {})}
            # evaluate joins the config name to its cache folder: a path there would put its files in the model's
            # folder (an absolute path replaces the cache root), so the folder is named by a slug of the name.
            self.config_name = _folder_name(self.config_name)
        # evaluate copies `compute` per instance (with its docstring, not its attributes): sign the copy.
        compute = getattr(self, "compute", None)
        if hasattr(compute, "__func__") and "compute" in self._signatures:
            compute.__func__.__signature__ = self._signatures["compute"]

    # -- options --------------------------------------------------------------------------------------------

    def resolve_options(self, given: Mapping[str, Any]) -> Any:
        """The options object for keyword arguments (after those bound by ``configure``); errors raised here."""
        return self.options_class.resolve(self.name, {**getattr(self, "_bound_options", {}), **given})

    def configure(self, **options: Any) -> Any:
        """Bind options for every later call of this module (explicit arguments still win); checked now.

        Returns the module, so ``evaluate.combine([bleu.configure(max_order=2), rouge])`` works.
        """
        self.resolve_options(options)
        self._bound_options = {**getattr(self, "_bound_options", {}), **options}
        return self

    # -- evaluate's entry points ----------------------------------------------------------------------------

    def _split_inputs(self, given: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """(inputs, options) of keyword arguments; evaluate's ``predictions``/``references`` parameters left at
        None are dropped for input kinds without them (e.g. texts alone)."""
        columns = self.inputs.columns
        inputs = {name: given[name] for name in columns if name in given}
        options = {
            name: value for name, value in given.items()
            if name not in columns and not (name in _EVALUATE_INPUTS and value is None)
        }
        return inputs, options

    def add_batch(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> None:
        """Check a batch of inputs, then add it to evaluate's cache (an empty batch adds nothing)."""
        given = {"predictions": predictions, "references": references, **kwargs}
        self._reject_unknown_inputs(given)
        columns = self.inputs.check(self.name, given, allow_empty=True)
        size = self.inputs.size(columns)
        if size:
            self._add_to_cache(self.inputs.stored(columns))

    def add(self, *, prediction: Any = None, reference: Any = None, **kwargs: Any) -> None:
        """Check one example, then add it (``predictions=``/``references=``, as ``evaluate.combine`` passes
        them, are accepted too)."""
        given = {"predictions": prediction, "references": reference, **kwargs}
        self._reject_unknown_inputs(given)
        columns = self.inputs.check_example(self.name, given)
        self._add_to_cache(self.inputs.stored(columns))

    def _add_to_cache(self, stored: Mapping[str, Any]) -> None:
        """Write checked, stored-form columns to evaluate's cache: flushed, and kept up to the last complete batch
        when the write fails (``core_streaming.add_to_cache``)."""
        rows = len(next(iter(stored.values()))) if stored else 0
        with self._owned_cache():
            add_to_cache(self, self.name, lambda: super(StatsMetric, self).add_batch(**stored), rows)

    def __len__(self) -> int:
        """Examples added and not yet scored (those kept after a failed compute included)."""
        return added_examples(self)

    @contextlib.contextmanager
    def _owned_cache(self) -> Iterator[None]:
        """Run the block as the only user of this module's added examples: calls from several threads wait for each
        other, and a thread may not add to, or compute, examples that another live thread added and has not yet
        scored (one module object accumulates one stream of examples)."""
        guard = self.__dict__.get("_cache_guard")
        if guard is None:
            with _GUARDS_LOCK:
                guard = self.__dict__.setdefault("_cache_guard", threading.RLock())
        me = threading.current_thread()
        with guard:
            owner = self.__dict__.get("_cache_owner")
            if owner is not None and owner is not me and owner.is_alive() and holds_examples(self):
                raise RuntimeError(
                    f"{self.name}: this module object holds {added_examples(self)} example(s) added by another "
                    f"thread ({owner.name}) and not yet scored; one module object accumulates one stream of examples, "
                    f"so it is not shared by threads that add examples: load a module in each thread "
                    f"(`evaluate.load(...)`), or compute in the thread that added them"
                )
            self._cache_owner = me
            yield

    def _reject_unknown_inputs(self, given: Mapping[str, Any]) -> None:
        unknown = [name for name in given if name not in self.inputs.columns and given[name] is not None]
        if unknown:
            raise ValueError(
                f"{self.name}: unknown inputs {unknown}; the inputs are {list(self.inputs.columns)} "
                f"(options go to `compute` or `configure`)"
            )

    def compute(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> dict[str, Any] | None:
        """Score the given inputs, or those added with ``add``/``add_batch``; ``None`` on processes other than 0.

        When it fails after ``add``/``add_batch`` (an error the data reveals, Ctrl-C), the added examples stay for the
        next ``compute``; a module object holding examples that another live thread added refuses other threads
        (``core_streaming``, :meth:`_owned_cache`).

        Under evaluate's evaluator with ``strategy="bootstrap"`` the result holds only what its bootstrap can
        resample; lm-evaluation-harness's per-document calls are refused where averaging them is not the
        metric's result (``core_clients``)."""
        client = calling_client()
        averages = False
        if client == "evaluator bootstrap":
            inputs, _ = self._split_inputs({"predictions": predictions, "references": references, **kwargs})
            column = unresampled_column(inputs)
            if column is not None:
                raise ValueError(bootstrap_refusal(self.name, column))
        if client == "lm-eval per document":
            _, option_arguments = self._split_inputs({"predictions": predictions, "references": references, **kwargs})
            averages = self.averages_examples(self.resolve_options(option_arguments))
            if not averages:
                self._refuse_per_document("its corpus result is not the mean of per-document results")
        try:
            result = self._compute_given(predictions=predictions, references=references, **kwargs)
        except TypeError as error:
            if client != "lm-eval per document":
                raise
            # lm-eval retries a call that raises TypeError as fn([gold, result]), which hides this message
            raise ValueError(str(error)) from error
        if result is None or client is None:
            return result
        if client == "evaluator bootstrap":
            return self._bootstrappable(result, kwargs)
        problem = averaged_per_document_problem(result, averages)
        if problem is not None:
            self._refuse_per_document(problem)
        return result

    def _bootstrappable(self, result: dict[str, Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """What evaluate's bootstrap can resample of a result: its numbers; a metric that gives per-example scores
        instead of a corpus score (bertscore, rouge with ``use_aggregator=False``) gives their means."""
        _, option_arguments = self._split_inputs(kwargs)
        options = self.resolve_options(option_arguments)
        if not self.aggregates(options) and self.per_example_outputs(options):
            for key in self.per_example([], options):
                values = result.get(key)
                if isinstance(values, list) and values and all(is_number(value) for value in values):
                    result[key] = math.fsum(values) / len(values)
        return bootstrappable(result)

    def _refuse_per_document(self, problem: str) -> None:
        raise ValueError(lm_eval_refusal(self.name, problem, self.inputs.name))

    def _compute_given(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> dict[str, Any] | None:
        given = {"predictions": predictions, "references": references, **kwargs}
        inputs, option_arguments = self._split_inputs(given)
        options = self.resolve_options(option_arguments)
        module: Any = self
        given_any = any(value is not None for value in inputs.values())
        with self._owned_cache():
            nothing_added = not holds_examples(module)
            if not given_any and nothing_added and module.num_process == 1:
                columns = ", ".join(f"`{column}`" for column in self.inputs.columns)
                raise ValueError(f"{self.name}: nothing to score: pass {columns} to compute, or add examples with "
                                 f"add/add_batch first")
            if not (given_any and nothing_added and module.num_process == 1):
                return self._compute_added(inputs, given_any, options, option_arguments)
        # In memory, outside the lock: nothing of this module's state is read or written.
        columns = self.inputs.check(self.name, inputs)
        self._check_corpus(self.inputs.size(columns), options)
        from evaluate import module as evaluate_module

        with evaluate_module.temp_seed(module.seed):
            return self._result([columns], options)

    def _compute_added(self, inputs: Mapping[str, Any], given_any: bool, options: Any,
                       option_arguments: Mapping[str, Any]) -> dict[str, Any] | None:
        """``compute`` of the examples added (and of inputs given to it as well), read from evaluate's cache."""
        module: Any = self
        if not streaming_verified():
            if not getattr(self, "_warned_unverified", False):
                _warn_unverified_evaluate()
                self._warned_unverified = True
            import evaluate

            bound = {**getattr(self, "_bound_options", {}), **option_arguments}
            return evaluate.EvaluationModule.compute(module, **{**inputs, **bound})
        missing = [name for name in self.inputs.columns if name not in inputs]
        if missing and given_any:
            raise ValueError(f"Evaluation module inputs are missing: {missing}. "
                             f"All required inputs are {list(self.inputs.columns)}")
        added_until = cache_mark(module) if given_any and module.num_process == 1 else WHOLE_FILE
        if given_any:
            self.add_batch(**inputs)
        if module.num_process == 1:
            try:
                self._check_corpus(added_examples(module), options)
            except BaseException:
                if given_any:  # not added: the caller still has them
                    salvage_writer(module, added_until)
                raise
        batch_size = _check_batch_size(self.name, self.stream_batch_size)
        return compute_from_cache(module, lambda batches: self._result(self._checked(batches), options), batch_size,
                                  metric=self.name, added_until=added_until)

    def _compute(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """evaluate's scoring hook (used by evaluate's own ``compute``): inputs as lists, then options."""
        bound = self._bind("_compute", args, kwargs)
        inputs, option_arguments = self._split_inputs(bound)
        options = self.options_class.resolve(self.name, option_arguments)
        columns = self.inputs.check(self.name, inputs)
        self._check_corpus(self.inputs.size(columns), options)
        return self._result([columns], options)

    def _checked(self, batches: Iterable[Mapping[str, Any]]) -> Iterator[Columns]:
        for batch in batches:
            yield self.inputs.check(self.name, batch, allow_empty=True)

    def _result(self, batches: Iterable[Columns], options: Any) -> dict[str, Any]:
        if self.needs_corpus(options):
            columns: Columns = {name: [] for name in self.inputs.columns}
            for batch in batches:
                self.check_resources(batch, options, len(columns[self.inputs.columns[0]]))
                for name in columns:
                    columns[name].extend(batch[name])
            if not columns[self.inputs.columns[0]]:
                raise ValueError(f"{self.name}: no examples to score; the score of an empty corpus is undefined")
            return {**self.score_corpus(columns, options), **self.provenance(options)}
        fold = _Fold(self, options)
        for batch in batches:
            fold.add(batch)
        return fold.result()

    # -- statistics for datasets.map and shards --------------------------------------------------------------

    def example_stats(self, *args: Any, **kwargs: Any) -> dict[str, list[Any]]:
        """Per-example sufficient statistics as columns (for ``datasets.Dataset.map(batched=True)``).

        Reduced by :meth:`compute_from_stats` (in any batching, order or number of shards), they give
        exactly the corpus score of ``compute``.
        """
        bound = self._bind("example_stats", args, kwargs)
        inputs, option_arguments = self._split_inputs(bound)
        options = self.resolve_options(option_arguments)
        columns = self.inputs.check(self.name, inputs)
        self.check_resources(columns, options)
        rows = self.example_rows(Batch(columns), options)
        return self.schema(options).columns(rows, self.signature(options))

    def reduce_stats(self, stats: Any, **kwargs: Any) -> dict[str, Any]:
        """Totals of per-example statistics (one small record; float sums kept exact), e.g. one shard's;
        merge shards by passing a list of totals to :meth:`compute_from_stats`. A shard of no example (an engine's
        empty partition) gives totals that merge as nothing."""
        options = self.resolve_options(self._bind("reduce_stats", (stats,), kwargs, drop=("stats",)))
        return self.schema(options).totals(stats, empty_signature=self.signature(options))

    def compute_from_stats(self, stats: Any, **kwargs: Any) -> dict[str, Any]:
        """The corpus result from per-example statistics (columns, records, column batches, a Dataset, a pandas
        DataFrame, a pyarrow Table, Spark Rows) or merged shard totals, checked against the options' signature.

        Options that resample (intervals, tests) need every example's row in corpus order: per-example
        statistics give them, totals cannot."""
        options = self.resolve_options(self._bind("compute_from_stats", (stats,), kwargs, drop=("stats",)))
        schema, signature = self.schema(options), self.signature(options)
        if not self.needs_rows(options):
            totals = schema.totals(stats, expected_signature=signature)
            return {**self.score(totals, options), **self.provenance(options)}
        if not self.rows_suffice(options):
            raise ValueError(f"{self.name}: this result needs the inputs themselves, not only their statistics; "
                             f"use `compute` for it")
        rows = schema.rows(stats, expected_signature=signature)
        self._check_corpus(len(rows), options)
        totals = schema.totals_of_rows(rows, signature)
        return {**self.score(totals, options), **self.corpus_outputs(rows, {}, totals, options),
                **self.provenance(options)}

    def _bind(self, method: str, args: Sequence[Any], kwargs: Mapping[str, Any],
              drop: Sequence[str] = ()) -> dict[str, Any]:
        signature = self._signatures[method]
        try:
            bound = signature.bind(self, *args, **kwargs)
        except TypeError as error:
            raise TypeError(f"{self.name}.{method}: {error}") from None
        arguments = {name: value for name, value in bound.arguments.items() if name != "self" and name not in drop}
        return arguments

    # -- transformers.Trainer ----------------------------------------------------------------------------------

    def for_trainer(
        self,
        tokenizer: Any,
        *others: Any,
        options: dict[str, dict[str, Any]] | None = None,
        predictions_from: PredictionSource = "generate",
        shift_labels: bool = False,
    ) -> Any:
        """A ``compute_metrics`` for ``transformers.Trainer`` scoring with this module and ``others``.

        Keys are prefixed with each module's name; ``options`` maps a module name to its keyword arguments,
        which are checked now, not at the first evaluation.
        """
        modules: dict[str, Any] = {}
        for module in (self, *others):
            if module.name in modules:
                raise ValueError(f"{self.name}: two metrics named {module.name!r}; use {self.trainer_metrics_class.__name__} "
                                 f"with prefixes")
            modules[module.name] = module
        for name, module_options in (options or {}).items():
            if name in modules and hasattr(modules[name], "resolve_options"):
                modules[name].resolve_options(module_options)
        return self.trainer_metrics_class(
            tokenizer, modules, options=options, predictions_from=predictions_from, shift_labels=shift_labels
        )

    # -- caches and pickling ------------------------------------------------------------------------------------

    @staticmethod
    def clear_caches() -> None:
        """Empty the process-wide caches of tokenized text and reference statistics (models stay loaded)."""
        clear_caches()

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as what loads it again: ``evaluate.load`` of its script and configuration, then the options bound
        with ``configure``. Its class lives in evaluate's module cache, which another process has not imported (Ray
        and Spark workers, ``datasets.Dataset.map(num_proc=N)``, multiprocessing): the script is loaded there from
        the same place, so it must be reachable from that process (one machine, or a shared file system; on a
        cluster, load the metric in the worker). Examples added with ``add_batch`` stay behind."""
        import evaluate

        bound = dict(getattr(self, "_bound_options", {}))
        config = bound.get(self.config_option, self.config_name) if self.config_option else self.config_name
        script = sys.modules[type(self).__module__].__file__
        return evaluate.load, (script, None if config == "default" else config), {"_bound_options": bound}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


class UseAggregator:
    """Mixed into a statistics metric with evaluate's ``use_aggregator`` option: the corpus score when it is True,
    per-example scores (from :meth:`~StatsMetric.per_example`) when it is False."""

    def aggregates(self, options: Any) -> bool:
        return options.use_aggregator

    def per_example_outputs(self, options: Any) -> bool:
        return not options.use_aggregator


class MeanOfExampleScores(StatsMetric):
    """Base of metrics whose corpus score is the mean of one score per example (model scores such as COMET,
    BLEURT, sentence similarity): each example's statistics are its score and a count of one, the result holds the
    mean (under :attr:`mean_key`), the number of examples and the per-example scores (under :attr:`scores_key`).
    A subclass supplies :meth:`example_scores`."""

    mean_key: ClassVar[str] = "mean_score"
    scores_key: ClassVar[str] = "scores"

    def example_scores(self, batch: Batch, options: Any) -> list[float]:
        """One score per example of the batch, in order."""
        raise NotImplementedError

    def schema(self, options: Any) -> StatsSchema:
        return StatsSchema(self.name, (StatField(self.mean_key, "fsum"), StatField("examples")))

    def example_rows(self, batch: Batch, options: Any) -> list[tuple[float, int]]:
        return [(value, 1) for value in self.example_scores(batch, options)]

    def score(self, totals: Mapping[str, Any], options: Any) -> dict[str, Any]:
        return {self.mean_key: totals[self.mean_key] / totals["examples"], "examples": totals["examples"]}

    def per_example_outputs(self, options: Any) -> bool:
        return True

    def averages_examples(self, options: Any) -> bool:
        return True

    def per_example(self, rows: Sequence[Sequence[Any]], options: Any) -> dict[str, list[float]]:
        return {self.scores_key: [row[0] for row in rows]}


@contextlib.contextmanager
def progress_bar(shown: bool, description: str, unit: str, total: int | None = None
                 ) -> Iterator[Callable[[int], Any] | None]:
    """A tqdm progress bar's ``update`` while the block runs (None when not ``shown``), closed afterwards."""
    if not shown:
        yield None
        return
    from tqdm.auto import tqdm

    bar = tqdm(total=total, desc=description, unit=unit)
    try:
        yield bar.update
    finally:
        bar.close()


class _Fold:
    """The result of one ``compute``, built up batch by batch."""

    def __init__(self, metric: StatsMetric, options: Any) -> None:
        self.metric = metric
        self.options = options
        self.schema = metric.schema(options)
        self.signature = metric.signature(options)
        self.aggregate = metric.aggregates(options)
        self.per_example = metric.per_example_outputs(options)
        self.keep_rows = metric.needs_rows(options)
        self.watchers = tuple(metric.watchers(options))
        self.totals: dict[str, Any] | None = None
        self.columns: dict[str, list[Any]] = {}
        self.rows: list[Sequence[Any]] = []
        self.extra: dict[str, list[Sequence[Any]]] = {}
        self.size = 0

    def add(self, columns: Columns) -> None:
        batch = Batch(columns, self.size)
        if not batch.size:
            return
        metric, options = self.metric, self.options
        metric.check_resources(columns, options, self.size)
        self.size += batch.size
        for watcher in self.watchers:
            watcher.see(batch)
        partial = None
        if self.aggregate and not (self.per_example or self.keep_rows):
            partial = metric.batch_totals(batch, options)
        if partial is None:
            rows = metric.example_rows(batch, options)
            if self.aggregate:
                partial = self.schema.totals_of_rows(rows, self.signature)
            if self.per_example:
                for name, values in metric.per_example(rows, options).items():
                    self.columns.setdefault(name, []).extend(values)
            if self.keep_rows:
                self.rows.extend(rows)
                for name, extra in metric.extra_rows(batch, options).items():
                    self.extra.setdefault(name, []).extend(extra)
        if partial is not None:
            partial.setdefault(EXAMPLES_FIELD, batch.size)
            self.totals = partial if self.totals is None else self.schema.merge(self.totals, partial)

    def result(self) -> dict[str, Any]:
        for watcher in self.watchers:
            watcher.close()
        if not self.size:
            raise ValueError(f"{self.metric.name}: no examples to score; the score of an empty corpus is undefined")
        result: dict[str, Any] = {}
        if self.aggregate:
            result.update(self.metric.score(self.totals, self.options))  # type: ignore[arg-type]
        result.update(self.columns)
        if self.keep_rows:
            result.update(self.metric.corpus_outputs(self.rows, self.extra, self.totals, self.options))
        result.update(self.metric.provenance(self.options))
        return result


def _with_signature(function: Callable[..., Any], signature: inspect.Signature) -> Callable[..., Any]:
    @functools.wraps(function)
    def method(*args: Any, **kwargs: Any) -> Any:
        return function(*args, **kwargs)

    method.__signature__ = signature  # type: ignore[attr-defined]
    return method


def _check_batch_size(metric: str, size: Any) -> int:
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"{metric}: `stream_batch_size` must be a positive integer, got {size!r}")
    return size


def _warn_unverified_evaluate() -> None:
    import evaluate

    warn_caller(
        f"evaluate {evaluate.__version__} is not a release the text metrics' streamed compute was verified "
        f"against; compute() after add_batch uses evaluate's own compute, which holds every added example in memory"
    )
