"""Streamed ``compute`` for statistics metrics: evaluate's cache is reduced one batch at a time.

evaluate's ``Metric.compute`` reads every prediction and reference written by
``add``/``add_batch`` into Python lists before calling ``_compute``; a million
pairs cost gigabytes. A metric that mixes in :class:`StreamedStatsCompute`
(before ``evaluate.Metric``, after ``CheckedTextPairs``) and implements
``_stats_plan`` instead has its cache read in batches of ``stream_batch_size``
examples, each reduced to exact running totals of its sufficient statistics,
so memory holds one batch of text at a time. Everything else is evaluate's
``compute``: missing-input errors, adding the inputs passed to ``compute``,
gathering the files of all processes on process 0, the seed, and the release
of locks and cache files. Options whose result needs every example at once
make ``_stats_plan`` return ``None``, and ``compute`` then reads the cache
into lists and calls ``_compute`` as evaluate does.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from .core_checks import check_int
from .core_stats import StatsSchema

Rows = Sequence[Sequence[Any]]
DEFAULT_STREAM_BATCH_SIZE = 10_000


class BatchWatcher(Protocol):
    """Looks at every batch of inputs (e.g. to warn about the corpus as a whole) and concludes at the end."""

    def see(self, predictions: Sequence[str], references: Sequence[Sequence[str]]) -> None: ...

    def close(self) -> None: ...


class StatsPlan:
    """The result of one ``compute``, built up from batches of checked text pairs.

    ``rows_of`` gives per-example statistics rows in ``schema`` order. ``score``
    turns the corpus totals into the result (``None`` when the result is only
    per-example values); ``per_example`` turns rows into per-example output
    columns, concatenated over batches and added to the result.
    """

    def __init__(
        self,
        schema: StatsSchema,
        signature: str,
        rows_of: Callable[[Sequence[str], Sequence[Sequence[str]]], Rows],
        score: Callable[[dict[str, Any]], dict[str, Any]] | None,
        *,
        per_example: Callable[[Rows], dict[str, list[Any]]] | None = None,
        watchers: Sequence[BatchWatcher] = (),
    ) -> None:
        self.schema = schema
        self.signature = signature
        self.rows_of = rows_of
        self.score = score
        self.per_example = per_example
        self.watchers = tuple(watchers)
        self._totals: dict[str, Any] | None = None
        self._columns: dict[str, list[Any]] = per_example([]) if per_example is not None else {}

    def add(self, predictions: Sequence[str], references: Sequence[Sequence[str]]) -> None:
        """Fold one batch into the running totals (and per-example columns)."""
        for watcher in self.watchers:
            watcher.see(predictions, references)
        rows = self.rows_of(predictions, references)
        if self.score is not None and rows:
            partial = self.schema.totals_of_rows(rows, self.signature)
            self._totals = partial if self._totals is None else self.schema.merge(self._totals, partial)
        if self.per_example is not None:
            for name, values in self.per_example(rows).items():
                self._columns[name].extend(values)

    def result(self) -> dict[str, Any]:
        """The result of every batch added so far (an empty corpus has no score: ``ValueError``)."""
        for watcher in self.watchers:
            watcher.close()
        result: dict[str, Any] = {}
        if self.score is not None:
            totals = self._totals if self._totals is not None else self.schema.totals_of_rows([], self.signature)
            result.update(self.score(totals))
        result.update(self._columns)
        return result


class StreamedStatsCompute:
    """Mixin replacing evaluate's ``compute`` with one that reduces the cache batch by batch.

    The metric implements ``_stats_plan(options)``: ``options`` are the keyword
    arguments of ``_compute`` (defaults filled in); it returns a
    :class:`StatsPlan`, or ``None`` when those options need every example at once.
    """

    stream_batch_size: int = DEFAULT_STREAM_BATCH_SIZE

    def _stats_plan(self, options: dict[str, Any]) -> StatsPlan | None:
        raise NotImplementedError

    def compute(self, *, predictions: Any = None, references: Any = None, **kwargs: Any) -> dict[str, Any] | None:
        """Score the given (or added) predictions against their references; ``None`` on processes other than 0."""
        module: Any = self
        feature_names = module._feature_names()
        all_kwargs = {"predictions": predictions, "references": references, **kwargs}
        if predictions is None and references is None:
            all_kwargs.update({name: None for name in feature_names if name not in all_kwargs})
        else:
            missing_inputs = [name for name in feature_names if name not in all_kwargs]
            if missing_inputs:
                raise ValueError(
                    f"Evaluation module inputs are missing: {missing_inputs}. "
                    f"All required inputs are {list(feature_names)}"
                )
        inputs = {name: all_kwargs[name] for name in feature_names}
        compute_kwargs = {key: value for key, value in kwargs.items() if key not in feature_names}

        if any(value is not None for value in inputs.values()):
            module.add_batch(**inputs)
        module._finalize()

        module.cache_file_name = None
        module.filelock = None
        module.selected_feature_format = None
        if module.process_id != 0:
            return None

        from evaluate import module as evaluate_module

        module.data.set_format(type=module.info.format)
        with evaluate_module.temp_seed(module.seed):
            output = self._reduce_cache(feature_names, compute_kwargs)
        if module.buf_writer is not None:
            module.buf_writer = None
            del module.data
            module.data = None
        else:
            # As evaluate does: release locks and delete the cache files, process 0 last.
            for filelock, file_path in reversed(list(zip(module.filelocks, module.file_paths))):
                evaluate_module.logger.info(f"Removing {file_path}")
                del module.data
                module.data = None
                del module.writer
                module.writer = None
                os.remove(file_path)
                filelock.release()
        return output

    def _reduce_cache(self, feature_names: Sequence[str], compute_kwargs: dict[str, Any]) -> dict[str, Any]:
        module: Any = self
        try:
            bound = inspect.signature(module._compute).bind(**{name: None for name in feature_names}, **compute_kwargs)
        except TypeError as error:  # worded as Python words a call of `_compute` with these arguments
            raise TypeError(f"{module._compute.__qualname__}() {error}") from None
        bound.apply_defaults()
        options = {name: value for name, value in bound.arguments.items() if name not in feature_names}
        plan = self._stats_plan(options)
        if plan is None:
            inputs = {name: module.data[name][:] for name in feature_names}
            return module._compute(**inputs, **compute_kwargs)
        batch_size = check_int(module.name, "stream_batch_size", self.stream_batch_size, minimum=1)
        for batch in _cache_batches(module, feature_names, batch_size):
            plan.add(batch["predictions"], batch["references"])
        return plan.result()


def _cache_batches(module: Any, feature_names: Sequence[str], batch_size: int) -> Iterator[dict[str, list[Any]]]:
    """evaluate's gathered cache (``module.data``) as Python batches of ``batch_size`` examples (the last shorter).

    Cache files are read record batch by record batch rather than through ``module.data``, which maps them
    into memory: every page read through the map would stay in the process's resident memory until the
    whole cache had been mapped in.
    """
    if module.keep_in_memory or module.info.format is not None:
        yield from module.data.iter(batch_size=batch_size)
        return
    import pyarrow as pa

    pending: list[Any] = []
    rows = 0
    for record_batch in _record_batches(module.file_paths):
        start = 0
        while start < record_batch.num_rows:
            part = record_batch.slice(start, batch_size - rows)
            start += part.num_rows
            pending.append(part)
            rows += part.num_rows
            if rows == batch_size:
                yield _python_columns(pa.Table.from_batches(pending), feature_names)
                pending, rows = [], 0
    if pending:
        yield _python_columns(pa.Table.from_batches(pending), feature_names)


def _record_batches(paths: Sequence[str]) -> Iterator[Any]:
    import pyarrow as pa

    for path in paths:
        with pa.OSFile(path) as source:
            yield from pa.ipc.open_stream(source)


def _python_columns(table: Any, feature_names: Sequence[str]) -> dict[str, list[Any]]:
    return {name: table.column(name).to_pylist() for name in feature_names}
