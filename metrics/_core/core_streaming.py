"""evaluate's cache written and read back without losing an example: ``add``/``add_batch`` that survive a full
disk or an interrupt, and ``compute`` after them without materialising the cache, whose failure keeps the cache.

evaluate's ``EvaluationModule.compute`` reads every prediction and reference
written by ``add``/``add_batch`` into Python lists before calling ``_compute``;
a million pairs cost gigabytes. :func:`compute_from_cache` does what that
method does — finalise the writer, gather the files of all processes on
process 0, run under the module's seed, release the locks and delete the cache
files, process 0 last — but hands the cache to ``fold`` as an iterator of
batches of ``batch_size`` examples, so memory holds one batch at a time.

Nothing added is lost, where evaluate loses it all:

* **An error or an interrupt in** ``compute`` (an option the data cannot take, a
  metric that refuses the corpus, Ctrl-C): the cache files are kept (renamed out
  of evaluate's way, their locks released) with their example counts, and the
  next ``compute`` reads them first, then anything added since. Inputs given to
  that ``compute`` itself are not kept (the caller still has them; keeping them
  would count them twice on a retry).
* **A failed write** (a full disk, an interrupt during ``add_batch``): every
  batch is flushed to the file as it is added and the file's length after it
  remembered; a write that fails cuts the file back to the last complete batch
  and keeps it, so the batch that failed is not added and every batch before it
  is; the error names the cache folder and what to do. A folder that cannot be
  written is refused before anything is written.
* **A process that dies in distributed mode** (``num_process`` > 1): every
  process other than 0 writes, before it releases its file's lock, a marker
  beside the file that lists its files with their examples and bytes. Process 0
  refuses a file without one (the lock of a killed process is released without
  it) or whose files differ from it, naming the process, rather than score part
  of the corpus as if it were all; it waits for a process at most the module's
  ``timeout`` seconds, and then says which one it waited for.

A kept cache stays with its module object: it is deleted when the object is
(or when the interpreter exits).

It replicates private parts of evaluate, so it is used only with the evaluate
releases it was verified against (:data:`VERIFIED_EVALUATE_VERSIONS`; a test
fails when the installed evaluate's ``compute`` differs from the verified one);
with any other release :func:`streaming_verified` is false and callers use
evaluate's own ``compute``.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import signal
import threading
import uuid
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")
Columns = dict[str, list[Any]]
Mark = tuple[int, int]  # (bytes of the cache file after its last complete batch, examples in it)

VERIFIED_EVALUATE_VERSIONS = ("0.4.6",)
DEFAULT_STREAM_BATCH_SIZE = 10_000
# The examples read back at once by model metrics whose examples share texts (systems scored on the same sources
# and references): their own chunks bound the model's memory, and the larger batch lets a call embed each shared
# text once (16 WMT17 systems are 48,064 examples; in batches of 10,000, each batch embedded the references again).
SHARED_TEXTS_STREAM_BATCH_SIZE = 250_000
DONE_SUFFIX = ".done"
# evaluate's rendezvous error: "Expected to find locked file <folder>/<experiment>-<n>-<process>.arrow.lock ..."
_RENDEZVOUS_MISSING = re.compile(r"Expected to find locked file .*-\d+-(\d+)\.arrow\.lock")
WHOLE_FILE: Any = "whole file"  # compute_from_cache(added_until=...): every example of this process's file was added


class CacheReadError(OSError):
    """A cache file could not be read back as it was written (damaged, or cut short)."""


class IncompleteCacheError(RuntimeError):
    """In distributed mode, a process ended without finishing its cache file: no result is given."""


@dataclass
class CacheFile:
    """One finished Arrow stream of added examples, on disk (``path``) or in memory (``buffer``), holding
    ``examples`` rows; ``lock`` is the file lock held on it, if any."""

    examples: int
    path: str | None = None
    buffer: Any = None
    lock: Any = None
    label: str = "the cache"

    def release(self) -> None:
        lock, self.lock = self.lock, None
        if lock is not None:
            with contextlib.suppress(Exception):
                lock.release()


def streaming_verified() -> bool:
    """Whether the installed evaluate is a release :func:`compute_from_cache` was verified against."""
    import evaluate

    return evaluate.__version__ in VERIFIED_EVALUATE_VERSIONS


# -- what a module holds ------------------------------------------------------------------------------------------


def _kept(module: Any) -> list[CacheFile]:
    """The module's kept caches (examples of failed computes and failed writes), in the order they were added; the
    files are deleted when the module is."""
    kept = module.__dict__.get("_kept_caches")
    if kept is None:
        kept = module.__dict__.setdefault("_kept_caches", [])
        weakref.finalize(module, _discard, kept, os.getpid())
    return kept


def _discard(caches: list[CacheFile], owner_pid: int) -> None:
    if os.getpid() != owner_pid:  # a forked copy of the module: the files are its parent's
        return
    for cache in caches:
        if cache.path is not None:
            with contextlib.suppress(OSError):
                os.remove(cache.path)
        cache.release()
    caches.clear()


def holds_examples(module: Any) -> bool:
    """Whether examples were added (and kept) since the last ``compute`` that scored them."""
    return (getattr(module, "writer", None) is not None or getattr(module, "buf_writer", None) is not None
            or bool(module.__dict__.get("_kept_caches")))


def cache_mark(module: Any) -> Mark | None:
    """The file length and examples of this process's cache after its last complete batch (None: no batch)."""
    if getattr(module, "writer", None) is None:
        return None
    return module.__dict__.get("_cache_mark")


def added_examples(module: Any) -> int:
    """Examples added to ``module`` and not yet scored (kept ones included)."""
    mark = cache_mark(module)
    return sum(cache.examples for cache in module.__dict__.get("_kept_caches", ())) + (mark[1] if mark else 0)


# -- writing --------------------------------------------------------------------------------------------------------


def add_to_cache(module: Any, metric: str, write: Callable[[], None], examples: int) -> None:
    """``write()`` (evaluate's ``add_batch`` of ``examples`` rows), flushed to the cache file; when it fails, the
    file is cut back to its last complete batch and kept, and an ``OSError`` names the folder."""
    new_file = module.writer is None
    if new_file and not module.keep_in_memory and not os.access(module.data_dir, os.W_OK | os.X_OK):
        refused = (PermissionError(errno.EACCES, "cannot be written") if os.path.isdir(module.data_dir)
                   else FileNotFoundError(errno.ENOENT, "no such folder"))
        raise _cache_error(metric, module, refused, examples)
    before = None if new_file else module.__dict__.get("_cache_mark")
    try:
        write()
        module._cache_mark = (_flush(module), (before[1] if before else 0) + examples)
    except BaseException as error:
        with interrupts_deferred():
            salvage_writer(module, before)
        if isinstance(error, OSError):
            raise _cache_error(metric, module, error, examples) from error
        missing = _RENDEZVOUS_MISSING.search(str(error)) if module.num_process > 1 else None
        if isinstance(error, ValueError) and missing is not None:  # evaluate's rendezvous waited for it in vain
            raise TimeoutError(
                f"{metric}: process {missing.group(1)} of {module.num_process} has not started adding examples after "
                f"{module.timeout} s (evaluate's rendezvous waits for every process's first add_batch); nothing was "
                f"added. Start every process, or load the module with a longer `timeout`"
            ) from error
        raise
    if new_file and module.num_process > 1 and module.cache_file_name is not None:
        with contextlib.suppress(FileNotFoundError):  # a marker left by an earlier run of this process
            os.remove(module.cache_file_name + DONE_SUFFIX)


def _flush(module: Any) -> int:
    if module.buf_writer is not None:
        return module.buf_writer.tell()
    stream = module.writer.stream
    stream.flush()
    return stream.tell()


def salvage_writer(module: Any, mark: Mark | None) -> None:
    """Close the module's writer after a failure, keeping the part of its cache that ``mark`` covers (nothing when
    None); the next ``add`` starts a new cache file."""
    writer, module.writer = module.writer, None
    path, lock = module.cache_file_name, module.filelock
    module.cache_file_name = module.filelock = module.selected_feature_format = None
    rendezvous = getattr(module, "rendez_vous_lock", None)
    if rendezvous is not None:  # distributed process 0 whose first write failed during evaluate's rendezvous
        with contextlib.suppress(Exception):
            rendezvous.release()
    if module.keep_in_memory:
        buffer, module.buf_writer = module.buf_writer, None
        if mark is not None and buffer is not None:
            _kept(module).append(CacheFile(mark[1], buffer=buffer.getvalue().slice(0, mark[0]), label="the cache"))
        return
    if writer is not None:
        with contextlib.suppress(Exception):  # its buffered bytes may not fit either: they are cut off below
            writer.stream.close()
    cache = CacheFile(mark[1] if mark else 0, path=path, lock=lock, label=f"the cache file {path}")
    if path is None or mark is None:
        if path is not None:
            with contextlib.suppress(OSError):
                os.remove(path)
        cache.release()
        return
    os.truncate(path, mark[0])
    _keep(module, cache)


def _keep(module: Any, cache: CacheFile) -> None:
    """Keep a finished cache file for the next compute, under a name of its own (so that evaluate can start a new
    file under the usual name), its lock released."""
    if cache.path is not None:
        folder = os.path.dirname(cache.path)
        kept_path = os.path.join(folder, f"{getattr(module, 'experiment_id', 'cache')}-kept-{uuid.uuid4().hex}.arrow")
        try:
            os.replace(cache.path, kept_path)
        except OSError:
            pass  # kept where it is, under its lock
        else:
            cache.path = kept_path
            cache.label = f"the kept cache file {kept_path}"
            cache.release()
    _kept(module).append(cache)


def _cache_error(metric: str, module: Any, error: OSError, examples: int | None) -> OSError:
    """A clear error for a cache folder that took no more: ``examples`` of a batch not added (None: this process's
    cache could not be finished, in distributed mode)."""
    reason = os.strerror(error.errno) if error.errno else str(error)
    if error.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        remedy = "Free space there"
    elif error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        remedy = "Make the folder writable"
    elif error.errno == errno.ENOENT:
        remedy = "Create the folder"
    else:
        remedy = "Repair the folder"
    if examples is None:
        what = (f"process {module.process_id}'s cache file could not be finished, so process 0 gives no result; "
                f"run every process again")
    else:
        kept = added_examples(module)
        what = (f"the {examples} example(s) of this batch were not added, and "
                + (f"the {kept} example(s) added before are kept for the next compute" if kept
                   else "nothing was added before"))
    message = (
        f"{metric}: could not write to evaluate's cache folder {module.data_dir} ({reason}): {what}. {remedy}, or "
        f"load the module with `cache_dir=` a writable folder or with `keep_in_memory=True`"
        + (", and add the batch again" if examples is not None else "")
    )
    return type(error)(error.errno, message) if error.errno else OSError(message)


# -- computing ------------------------------------------------------------------------------------------------------


def compute_from_cache(module: Any, fold: Callable[[Iterator[Columns]], T], batch_size: int, *, metric: str = "",
                       added_until: Any = WHOLE_FILE) -> T | None:
    """Finalise ``module``'s cache and ``fold`` its batches (kept caches first); ``None`` on processes other
    than 0. ``added_until`` is the :func:`cache_mark` before inputs given to ``compute`` itself were written (None:
    the file holds only those): when ``fold`` fails, the cache is kept without them."""
    metric = metric or getattr(module, "name", "metric")
    kept = _kept(module)
    own: CacheFile | None = None
    try:
        with interrupts_deferred():
            own = _finish_own(module, metric)
            module.cache_file_name = None
            module.filelock = None
            module.selected_feature_format = None
    except BaseException:
        if own is not None:  # finished, then interrupted: kept for the next compute
            with interrupts_deferred():
                _keep_after_failure(module, kept, own, [], added_until)
        raise
    if module.process_id != 0:
        _mark_done(module, metric, own, kept)
        return None
    try:
        others = _gather(module, metric) if module.num_process > 1 else []
    except BaseException:
        if own is not None:  # the round is incomplete: its files stay where they are, and nothing is scored
            own.release()
        raise
    owned = [*([own] if own is not None else []), *others]
    module.file_paths = [cache.path for cache in owned]
    module.filelocks = [cache.lock for cache in owned]

    from evaluate import module as evaluate_module

    batches = cache_batches([*kept, *owned], module._feature_names(), batch_size)
    try:
        with evaluate_module.temp_seed(module.seed):
            result = fold(batches)
    except CacheReadError:
        batches.close()
        with interrupts_deferred():  # unreadable: left on disk for inspection, no longer the module's
            kept.clear()
            for cache in owned:
                cache.release()
        raise
    except BaseException as error:
        batches.close()
        with interrupts_deferred():
            _keep_after_failure(module, kept, own, others, added_until)
        if isinstance(error, Exception) and hasattr(error, "add_note"):
            error.add_note(f"{metric}: the {added_examples(module)} example(s) added are kept: call compute again "
                           f"(e.g. with other options) to score them")
        raise
    batches.close()
    with interrupts_deferred():
        # As evaluate does after scoring: release locks and delete the cache files, process 0 last.
        gathered = {id(cache) for cache in others}
        for cache in [*kept, *reversed(owned)]:
            if cache.path is not None:
                evaluate_module.logger.info(f"Removing {cache.path}")
                with contextlib.suppress(FileNotFoundError):
                    os.remove(cache.path)
                if id(cache) in gathered:
                    with contextlib.suppress(FileNotFoundError):
                        os.remove(cache.path + DONE_SUFFIX)
            cache.release()
        kept.clear()
        module.data = None
        module.buf_writer = None
        module.writer = None
    return result


def _finish_own(module: Any, metric: str) -> CacheFile | None:
    """This process's cache finished (evaluate's ``writer.finalize()``) as a :class:`CacheFile`, its lock held;
    None when nothing was added since the last compute. A failure keeps what was added."""
    writer = module.writer
    if writer is None:
        return None
    mark = module.__dict__.get("_cache_mark")
    try:
        writer.finalize()
    except BaseException as error:
        with interrupts_deferred():
            salvage_writer(module, mark)  # every added batch was flushed: all of them are kept
        if not isinstance(error, OSError) or module.num_process > 1:
            if isinstance(error, OSError):
                raise _cache_error(metric, module, error, None) from error
            raise
        return None
    module.writer = None
    examples = getattr(writer, "_num_examples", None)  # what the writer wrote (the mark counts what we added)
    if not isinstance(examples, int):
        examples = mark[1] if mark else 0
    if module.keep_in_memory:
        buffer, module.buf_writer = module.buf_writer, None
        return CacheFile(examples, buffer=buffer.getvalue(), label="the cache")
    if module.num_process > 1:
        label = f"the cache file {module.cache_file_name} of process {module.process_id} of {module.num_process}"
    else:
        label = f"the cache file {module.cache_file_name}"
    return CacheFile(examples, path=module.cache_file_name, lock=module.filelock, label=label)


def _keep_after_failure(module: Any, kept: list[CacheFile], own: CacheFile | None, others: list[CacheFile],
                        added_until: Any) -> None:
    if own is not None and added_until is not WHOLE_FILE:  # drop the inputs given to compute itself
        if added_until is None:
            if own.path is not None:
                with contextlib.suppress(OSError):
                    os.remove(own.path)
            own.release()
            own = None
        elif own.buffer is not None:
            own.buffer, own.examples = own.buffer.slice(0, added_until[0]), added_until[1]
        else:
            os.truncate(own.path, added_until[0])
            own.examples = added_until[1]
    for cache in [*([own] if own is not None else []), *others]:
        if any(cache is other for other in others) and cache.path is not None:
            with contextlib.suppress(FileNotFoundError):
                os.remove(cache.path + DONE_SUFFIX)
        _keep(module, cache)
    module.writer = None
    module.buf_writer = None
    module.data = None


# -- distributed mode ---------------------------------------------------------------------------------------------


def _mark_done(module: Any, metric: str, own: CacheFile | None, kept: list[CacheFile]) -> None:
    """On a process other than 0: say beside its file which files it finished (so process 0 can tell it from a
    process that was killed), then release the file's lock for process 0."""
    if own is None:
        return
    files = [cache for cache in [*kept, own] if cache.path is not None]
    try:
        marker = own.path + DONE_SUFFIX
        record = [{"file": os.path.basename(cache.path), "examples": cache.examples,
                   "bytes": os.path.getsize(cache.path)} for cache in files]  # in the folder of the marker
        temporary = f"{marker}.{uuid.uuid4().hex}"
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(record, handle)
        os.replace(temporary, marker)
    except OSError as error:
        raise _cache_error(metric, module, error, None) from error
    finally:
        own.release()
    for cache in kept:  # process 0 reads and deletes them now
        cache.release()
    kept.clear()


def _gather(module: Any, metric: str) -> list[CacheFile]:
    """On process 0: the finished files of every other process, each lock held; waits for each at most the module's
    ``timeout``, and refuses a process that ended without finishing its file."""
    from datasets.utils.filelock import FileLock, Timeout

    gathered: list[CacheFile] = []
    try:
        for process in range(1, module.num_process):
            path = os.path.join(module.data_dir, f"{module.experiment_id}-{module.num_process}-{process}.arrow")
            where = f"process {process} of {module.num_process}"
            lock = FileLock(path + ".lock")
            try:
                lock.acquire(timeout=module.timeout)
            except Timeout:
                raise TimeoutError(
                    f"{metric}: {where} has not finished adding its examples after {module.timeout} s (its cache file "
                    f"{path} is still being written); no result. Call compute on every process, or load the module "
                    f"with a longer `timeout`"
                ) from None
            holder = CacheFile(0, lock=lock)
            gathered.append(holder)
            files = _read_marker(path)
            if files is None:
                raise IncompleteCacheError(
                    f"{metric}: {where} ended without finishing its examples (its cache file {path} has no "
                    f"'{DONE_SUFFIX}' marker: the process was killed or failed before its compute); no result is "
                    f"given rather than the score of part of the corpus. Run every process again"
                )
            paths = [os.path.join(module.data_dir, entry["file"]) for entry in files]
            for entry, file in zip(files, paths):
                size = os.path.getsize(file) if os.path.exists(file) else -1
                if size != entry["bytes"]:
                    raise IncompleteCacheError(
                        f"{metric}: the cache file {file} of {where} holds {max(size, 0)} bytes, not the "
                        f"{entry['bytes']} it wrote; no result is given rather than the score of part of the corpus. "
                        f"Run every process again"
                    )
            gathered.pop()
            for index, (entry, file) in enumerate(zip(files, paths)):
                gathered.append(CacheFile(entry["examples"], path=file, label=f"the cache file {file} of {where}",
                                          lock=lock if index == len(files) - 1 else None))
    except BaseException:
        for cache in gathered:
            cache.release()
        raise
    return gathered


def _read_marker(path: str) -> list[dict[str, Any]] | None:
    try:
        with open(path + DONE_SUFFIX, encoding="utf-8") as handle:
            files = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(files, list) or not files or not all(
            isinstance(entry, dict) and {"file", "examples", "bytes"} <= set(entry)
            and os.path.basename(str(entry["file"])) == entry["file"] for entry in files):
        return None
    return files


# -- reading --------------------------------------------------------------------------------------------------------


def cache_batches(sources: Sequence[CacheFile], feature_names: Sequence[str], batch_size: int
                  ) -> Iterator[Columns]:
    """The cache files, in order, as Python batches of ``batch_size`` examples (the last shorter).

    Files are read record batch by record batch rather than through evaluate's ``module.data``, which maps them
    into memory: every page read through the map would stay in the process's resident memory until the whole
    cache had been mapped in.
    """
    import pyarrow as pa

    pending: list[Any] = []
    rows = 0
    for source in sources:
        for record_batch in _record_batches(source):
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


def _record_batches(source: CacheFile) -> Iterator[Any]:
    """The record batches of one cache, checked against the number of examples written to it."""
    import pyarrow as pa

    count = 0
    try:
        with (pa.BufferReader(source.buffer) if source.buffer is not None else pa.OSFile(source.path)) as stream:
            for record_batch in pa.ipc.open_stream(stream):
                count += record_batch.num_rows
                yield record_batch
    except (OSError, pa.ArrowException) as error:
        raise CacheReadError(f"{source.label} could not be read back ({error}); it is left as it is") from error
    if count != source.examples:
        raise CacheReadError(f"{source.label} holds {count} examples, not the {source.examples} written to it; "
                             f"it is left as it is")


def _python_columns(table: Any, feature_names: Sequence[str]) -> Columns:
    return {name: table.column(name).to_pylist() for name in feature_names}


# -- interrupts -----------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold back Ctrl-C (SIGINT) while the block runs — a few file renames and attribute changes that must not be
    left half done — and raise it after; in the main thread with Python's default handler only."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda number, frame: received.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            raise KeyboardInterrupt
