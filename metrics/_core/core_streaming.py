"""evaluate's cache read back in batches: ``compute`` after ``add``/``add_batch`` without materialising it.

evaluate's ``EvaluationModule.compute`` reads every prediction and reference
written by ``add``/``add_batch`` into Python lists before calling ``_compute``;
a million pairs cost gigabytes. :func:`compute_from_cache` does what that
method does — finalise the writer, gather the files of all processes on
process 0, run under the module's seed, release the locks and delete the cache
files, process 0 last — but hands the cache to ``fold`` as an iterator of
batches of ``batch_size`` examples, so memory holds one batch at a time.

It replicates private parts of evaluate, so it is used only with the evaluate
releases it was verified against (:data:`VERIFIED_EVALUATE_VERSIONS`; a test
fails when the installed evaluate's ``compute`` differs from the verified one);
with any other release :func:`streaming_verified` is false and callers use
evaluate's own ``compute``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
Columns = dict[str, list[Any]]

VERIFIED_EVALUATE_VERSIONS = ("0.4.6",)
DEFAULT_STREAM_BATCH_SIZE = 10_000


def streaming_verified() -> bool:
    """Whether the installed evaluate is a release :func:`compute_from_cache` was verified against."""
    import evaluate

    return evaluate.__version__ in VERIFIED_EVALUATE_VERSIONS


def compute_from_cache(module: Any, fold: Callable[[Iterator[Columns]], T], batch_size: int) -> T | None:
    """Finalise ``module``'s cache and ``fold`` its batches; ``None`` on processes other than 0."""
    module._finalize()
    module.cache_file_name = None
    module.filelock = None
    module.selected_feature_format = None
    if module.process_id != 0:
        return None

    from evaluate import module as evaluate_module

    module.data.set_format(type=module.info.format)
    try:
        with evaluate_module.temp_seed(module.seed):
            return fold(cache_batches(module, module._feature_names(), batch_size))
    finally:
        # As evaluate does after scoring (here also when scoring failed, so no lock or file is left behind
        # for the next compute to wait on): release locks and delete the cache files, process 0 last.
        if module.buf_writer is not None:
            module.buf_writer = None
            del module.data
            module.data = None
        else:
            for filelock, file_path in reversed(list(zip(module.filelocks, module.file_paths))):
                evaluate_module.logger.info(f"Removing {file_path}")
                del module.data
                module.data = None
                del module.writer
                module.writer = None
                os.remove(file_path)
                filelock.release()


def cache_batches(module: Any, feature_names: Sequence[str], batch_size: int) -> Iterator[Columns]:
    """evaluate's gathered cache as Python batches of ``batch_size`` examples (the last shorter).

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


def _python_columns(table: Any, feature_names: Sequence[str]) -> Columns:
    return {name: table.column(name).to_pylist() for name in feature_names}
