"""Faults (issue 32, defects 1-4 and 13): nothing added is lost by an error, an interrupt or a full disk; evaluate's
distributed mode with a killed process neither hangs nor returns part of the corpus as if it were all; a module object
shared by threads gives each caller its own result or refuses; an interrupted first METEOR compute leaves nothing half
imported (metrics/_core/core_streaming.py, core_metric.py, core_process.py)."""

from __future__ import annotations

import errno
import json
import multiprocessing
import os
import random
import signal
import sys
import threading
import time
import uuid
from pathlib import Path

import evaluate
import pytest

from conftest import METRICS_DIR, load_metric
from generated_text import random_corpus

PAIRS = (["the cat sat on the mat", "a storm cut the power", "he read the paper"],
         [["the cat sat on a mat"], ["a storm cut power"], ["he reads the paper"]])


def fresh(name: str, **kwargs):
    return evaluate.load(str(METRICS_DIR / name), experiment_id=uuid.uuid4().hex, **kwargs)


def core_module(module, core: str):
    import importlib

    return importlib.import_module(f"{type(module).__module__.rpartition('.')[0]}.{core}")


def leftover_files(module) -> list[str]:
    """Cache files of this module's experiment left in its folder."""
    return sorted(name for name in os.listdir(module.data_dir)
                  if name.startswith(module.experiment_id) and not name.endswith(".lock"))


# -- defect 1: a data-dependent error in compute() after add_batch ----------------------------------------------

THREE_ANNOTATORS = {"items": [0, 0, 0, 1, 1, 1, 2, 2, 2], "annotators": ["a", "b", "c"] * 3,
                    "labels": [1, 2, 1, 2, 2, 1, 1, 1, 1]}
ONE_LABEL = {"items": [0, 0, 1, 1], "annotators": ["a", "b"] * 2, "labels": [1, 1, 1, 1]}
STRING_LABELS = {"items": [0, 0, 1, 1, 2, 2], "annotators": ["a", "b"] * 3, "labels": ["x", "y", "x", "x", "y", "y"]}
CLASSES = {"predictions": [0, 1, 2, 1, 0, 2], "references": [0, 1, 2, 2, 0, 1]}
BINARY = {"predictions": [0, 1, 1, 0, 1], "references": [0, 1, 0, 1, 1]}
SCORES = {"predictions": [0.1, 0.5, 0.3, 0.9], "references": [10.0, 50.0, 90.0, 30.0], "systems": ["s"] * 4,
          "items": ["a", "b", "c", "d"]}
TEXTS = {"predictions": ["hello world", "goodnight moon", "the cat sat", "a dog ran"],
         "references": ["hello there", "general kenobi", "a cat sat", "the dog runs"]}

# (metric, inputs, options that the data cannot take, what the error says, corrected options)
DATA_ERRORS = [
    ("f1", CLASSES, {"average": "binary"}, "needs at most two classes", {"average": "macro"}),
    ("f1", BINARY, {"pos_label": 5}, "pos_label=5 is not a valid label", {"pos_label": 0}),
    ("recall", BINARY, {"pos_label": "a"}, "pos_label='a' is not a valid label", {"pos_label": 1}),
    ("agreement", THREE_ANNOTATORS, {"coefficients": ["cohen_kappa"]}, "Cohen's kappa is for two annotators",
     {"coefficients": ["fleiss_kappa"]}),
    ("agreement", ONE_LABEL, {}, "every rating it counts has the same label",
     {"coefficients": ["percent_agreement"]}),
    ("agreement", THREE_ANNOTATORS, {"value_domain": [1, 3]}, "value_domain", {"value_domain": [1, 2, 3]}),
    ("agreement", STRING_LABELS, {"weights": "linear", "coefficients": ["cohen_kappa"]}, "string labels have none",
     {"weights": "linear", "coefficients": ["cohen_kappa"], "value_domain": ["x", "y"]}),
    ("matthews_correlation", BINARY, {"sample_weight": [0, 0, 0, 0, 0]}, "every `sample_weight` is zero",
     {"sample_weight": [1, 2, 1, 1, 3]}),
    ("meta_evaluation", SCORES, {}, "needs at least 2 systems", {"level": "segment", "grouping": "system"}),
    ("mauve", TEXTS, {"num_buckets": 50, "featurize_model_name": "all-MiniLM-L6-v2"}, "`num_buckets` 50 is more than",
     {"num_buckets": 2, "featurize_model_name": "all-MiniLM-L6-v2"}),
]


def _same(result, expected) -> None:
    assert json.loads(json.dumps(dict(result), default=str)) == json.loads(json.dumps(dict(expected), default=str))


@pytest.mark.filterwarnings("ignore:meta_evaluation. segment level")  # one system: no pairs for WMT's tau
@pytest.mark.parametrize(("name", "inputs", "bad", "says", "good"), DATA_ERRORS,
                         ids=[f"{case[0]}-{'-'.join(map(str, case[2])) or 'defaults'}" for case in DATA_ERRORS])
def test_a_data_dependent_error_after_add_batch_loses_nothing(name, inputs, bad, says, good) -> None:
    module = fresh(name)
    half = len(next(iter(inputs.values()))) // 2
    module.add_batch(**{column: values[:half] for column, values in inputs.items()})
    module.add_batch(**{column: values[half:] for column, values in inputs.items()})
    with pytest.raises(ValueError, match=says) as raised:
        module.compute(**bad)
    assert any("example(s) added are kept" in note for note in getattr(raised.value, "__notes__", []))
    assert len(module) == len(next(iter(inputs.values())))
    _same(module.compute(**good), load_metric(name).compute(**inputs, **good))
    assert leftover_files(module) == [], "a successful compute deletes the kept cache"
    with pytest.raises(ValueError, match="nothing to score"):
        module.compute(**good)


def test_a_dropped_module_deletes_what_it_kept() -> None:
    import gc

    module = fresh("f1")
    module.add_batch(**CLASSES)
    with pytest.raises(ValueError):
        module.compute(average="binary")
    folder, kept = module.data_dir, leftover_files(module)
    assert len(kept) == 1 and "-kept-" in kept[0]
    del module
    gc.collect()
    assert not (Path(folder) / kept[0]).exists()


def test_spearmanr_one_example_then_another() -> None:
    """No option makes one example a correlation: the example stays, and one more makes it scorable."""
    module = fresh("spearmanr")
    module.add(prediction=1.0, reference=2.0)
    with pytest.raises(ValueError, match="at least 2 pairs"):
        module.compute()
    module.add_batch(predictions=[2.0, 3.5], references=[1.0, 4.0])
    assert module.compute() == load_metric("spearmanr").compute(predictions=[1.0, 2.0, 3.5],
                                                                references=[2.0, 1.0, 4.0])


def test_inputs_given_to_a_failing_compute_are_not_kept() -> None:
    """compute(inputs) after add_batch scores both; when it fails, only the added examples stay (a retry with the
    same inputs must not count them twice), whether the error comes from the data or from the corpus size."""
    module = fresh("f1")
    module.add_batch(predictions=[0, 1], references=[0, 1])
    with pytest.raises(ValueError, match="needs at most two classes"):
        module.compute(predictions=[2, 1], references=[2, 2], average="binary")
    assert len(module) == 2
    expected = load_metric("f1").compute(predictions=[0, 1, 2, 1], references=[0, 1, 2, 2], average="macro")
    assert module.compute(predictions=[2, 1], references=[2, 2], average="macro") == expected
    module = fresh("matthews_correlation")
    module.add_batch(predictions=[0, 1, 1], references=[0, 1, 0])
    with pytest.raises(ValueError, match="sample_weight"):
        module.compute(predictions=[1], references=[1], sample_weight=[1, 1, 1])
    assert len(module) == 3
    assert module.compute(predictions=[1], references=[1], sample_weight=[1, 2, 1, 1]) == load_metric(
        "matthews_correlation").compute(predictions=[0, 1, 1, 1], references=[0, 1, 0, 1], sample_weight=[1, 2, 1, 1])


def test_examples_added_after_a_failed_compute_follow_the_kept_ones() -> None:
    """Per-example outputs keep the order of addition across failed computes."""
    predictions, references = random_corpus(random.Random(5), 30)
    module = fresh("rouge")
    module.stream_batch_size = 4
    module.add_batch(predictions=predictions[:10], references=references[:10])
    Fail(module, "per_example", ValueError("the data cannot take it"), after=1)
    with pytest.raises(ValueError, match="cannot take it"):
        module.compute(use_aggregator=False)
    module.add_batch(predictions=predictions[10:20], references=references[10:20])
    Fail(module, "per_example", ValueError("nor this"), after=3)
    with pytest.raises(ValueError, match="nor this"):
        module.compute(use_aggregator=False)
    del module.per_example
    result = module.compute(predictions=predictions[20:], references=references[20:], use_aggregator=False)
    assert result == load_metric("rouge").compute(predictions=predictions, references=references,
                                                  use_aggregator=False)


# -- defect 3: an interrupted compute, a full or read-only cache folder ----------------------------------------


class Fail:
    """Replaces a method with one that raises ``error`` on its call number ``after + 1`` (an error that depends on
    the data, or KeyboardInterrupt as Ctrl-C there would)."""

    def __init__(self, target, name: str, error: BaseException, after: int = 0) -> None:
        self.original = getattr(target, name)
        self.calls = 0
        self.after = after
        self.error = error
        setattr(target, name, self)

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.calls == self.after + 1:
            raise self.error
        return self.original(*args, **kwargs)


@pytest.mark.parametrize("where", ["statistics", "second batch", "score"])
@pytest.mark.parametrize("keep_in_memory", [False, True], ids=["cache file", "in memory"])
@pytest.mark.parametrize("name", ["sacrebleu", "rouge"])
def test_an_interrupted_compute_leaves_the_module_usable(name: str, where: str, keep_in_memory: bool) -> None:
    predictions, references = random_corpus(random.Random(7), 40)
    module = fresh(name, keep_in_memory=keep_in_memory)
    module.stream_batch_size = 8
    for start in range(0, 40, 10):
        module.add_batch(predictions=predictions[start:start + 10], references=references[start:start + 10])
    if where == "score":
        Fail(module, "score", KeyboardInterrupt())
    else:
        Fail(module, "example_rows", KeyboardInterrupt(), after=0 if where == "statistics" else 1)
    with pytest.raises(KeyboardInterrupt):
        module.compute()
    module.__dict__.pop("score", None)
    module.__dict__.pop("example_rows", None)
    assert len(module) == 40
    expected = load_metric(name).compute(predictions=predictions, references=references)
    assert module.compute() == expected
    assert leftover_files(module) == []


def test_an_interrupt_while_finishing_the_cache_file_loses_nothing() -> None:
    module = fresh("sacrebleu")
    module.add_batch(predictions=PAIRS[0], references=PAIRS[1])
    Fail(module.writer, "finalize", KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        module.compute()
    assert module.compute() == load_metric("sacrebleu").compute(predictions=PAIRS[0], references=PAIRS[1])


class FailingStream:
    """Makes the cache file's stream write part of the next write, then fail (a full disk, or Ctrl-C mid-write)."""

    def __init__(self, module, error: BaseException) -> None:
        self.stream = module.writer.stream
        self.write = self.stream.write
        self.error = error
        self.stream.write = self

    def __call__(self, data) -> int:
        view = memoryview(data)
        self.write(view[: max(1, len(view) // 2)])
        self.stream.flush()
        del self.stream.write
        raise self.error


@pytest.mark.parametrize("error", [OSError(errno.ENOSPC, "No space left on device"), KeyboardInterrupt()],
                         ids=["full disk", "interrupt"])
def test_a_failed_write_keeps_every_batch_before_it(error: BaseException) -> None:
    predictions, references = random_corpus(random.Random(8), 30)
    module = fresh("sacrebleu")
    module.add_batch(predictions=predictions[:10], references=references[:10])
    module.add_batch(predictions=predictions[10:20], references=references[10:20])
    FailingStream(module, error)
    expected_error = OSError if isinstance(error, OSError) else KeyboardInterrupt
    with pytest.raises(expected_error) as raised:
        module.add_batch(predictions=predictions[20:], references=references[20:])
    if isinstance(error, OSError):
        message = str(raised.value)
        assert raised.value.errno == errno.ENOSPC
        assert module.data_dir in message and "No space left on device" in message
        assert "the 10 example(s) of this batch were not added" in message and "Free space there" in message
        assert "the 20 example(s) added before are kept" in message and "keep_in_memory=True" in message
    assert len(module) == 20
    module.add_batch(predictions=predictions[20:], references=references[20:])  # the disk has room again
    assert module.compute() == load_metric("sacrebleu").compute(predictions=predictions, references=references)
    assert leftover_files(module) == []


def test_a_full_disk_on_the_first_batch_leaves_in_memory_compute_working(monkeypatch: pytest.MonkeyPatch) -> None:
    """evaluate's module failed every later compute (`I/O operation on closed file`) after a full disk."""
    module = fresh("sacrebleu")
    original = evaluate.EvaluationModule.add_batch

    def full_disk(self, **batch):
        original(self, **batch)
        FailingStream(self, OSError(errno.ENOSPC, "No space left on device"))
        self.writer.stream.write(b"x" * 10)

    monkeypatch.setattr(evaluate.EvaluationModule, "add_batch", full_disk)
    with pytest.raises(OSError, match=r"could not write to evaluate's cache folder .*the 3 example\(s\) of this batch "
                                      r"were not added, and nothing was added before"):
        module.add_batch(predictions=PAIRS[0], references=PAIRS[1])
    monkeypatch.undo()
    assert len(module) == 0 and leftover_files(module) == []
    expected = load_metric("sacrebleu").compute(predictions=PAIRS[0], references=PAIRS[1])
    assert module.compute(predictions=PAIRS[0], references=PAIRS[1]) == expected
    module.add_batch(predictions=PAIRS[0], references=PAIRS[1])
    assert module.compute() == expected


def test_a_full_disk_when_finishing_the_file_still_scores_everything() -> None:
    module = fresh("sacrebleu")
    module.add_batch(predictions=PAIRS[0], references=PAIRS[1])
    writer = module.writer

    def full_disk():
        writer.stream.write(b"\xff" * 3)  # a part of the end-of-stream marker, then no room
        raise OSError(errno.ENOSPC, "No space left on device")

    writer.finalize = full_disk
    assert module.compute() == load_metric("sacrebleu").compute(predictions=PAIRS[0], references=PAIRS[1])
    assert leftover_files(module) == []


def test_a_read_only_cache_folder_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    folder = tmp_path / "read-only"
    module = evaluate.load(str(METRICS_DIR / "sacrebleu"), cache_dir=str(folder))
    module.add_batch(predictions=PAIRS[0][:2], references=PAIRS[1][:2])
    module.compute()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: False if str(path) == module.data_dir
                        else real_access(path, mode, **kw))
    with pytest.raises(PermissionError, match=rf"could not write to evaluate's cache folder {module.data_dir} "
                                              rf"\(Permission denied\): the 3 example\(s\) of this batch were not "
                                              rf"added, and nothing was added before\. Make the folder writable"):
        module.add_batch(predictions=PAIRS[0], references=PAIRS[1])
    monkeypatch.undo()
    # the folder's lock cannot be created (what a read-only folder does to a user other than root)
    from evaluate import module as evaluate_module

    def no_lock(path, *args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", path)

    monkeypatch.setattr(evaluate_module, "FileLock", no_lock)
    with pytest.raises(PermissionError, match=rf"folder {module.data_dir} \(Permission denied\): the 3 example"):
        module.add_batch(predictions=PAIRS[0], references=PAIRS[1])
    monkeypatch.undo()
    assert len(module) == 0
    assert module.compute(predictions=PAIRS[0], references=PAIRS[1]) == load_metric("sacrebleu").compute(
        predictions=PAIRS[0], references=PAIRS[1])


READ_ONLY_RUN = """
import os, sys
import evaluate
module = evaluate.load(sys.argv[1], cache_dir=sys.argv[2])
os.chmod(module.data_dir, 0o555)
try:
    module.add_batch(predictions=["a cat"], references=["a cat"])
except PermissionError as error:
    print("refused:", error)
else:
    print("accepted")
os.chmod(module.data_dir, 0o755)
print("score:", module.compute(predictions=["the cat sat on the mat"], references=["the cat sat on the mat"])["score"])
"""


def test_a_really_read_only_cache_folder(tmp_path: Path) -> None:
    """A real read-only folder. Root writes to any folder, so under root the process runs without the capabilities
    that override file permissions (util-linux's setpriv drops them from its bounding set)."""
    import shutil
    import subprocess

    command = [sys.executable, "-c", READ_ONLY_RUN, str(METRICS_DIR / "sacrebleu"), str(tmp_path / "cache")]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        assert setpriv, "util-linux's setpriv is needed to test a read-only folder as root"
        command = [setpriv, "--bounding-set=-dac_override,-dac_read_search", *command]
    environment = {**os.environ, "HF_EVALUATE_CACHE": str(tmp_path / "evaluate"),
                   "HF_MODULES_CACHE": str(tmp_path / "modules"), "HF_DATASETS_CACHE": str(tmp_path / "datasets")}
    completed = subprocess.run(command, capture_output=True, text=True, timeout=300, env=environment, cwd=tmp_path)
    assert completed.returncode == 0, completed.stderr[-3000:]
    lines = completed.stdout.splitlines()
    assert lines[0].startswith("refused: ") and f"cache folder {tmp_path / 'cache'}" in lines[0], completed.stdout
    assert float(lines[1].split()[1]) == pytest.approx(100.0), completed.stdout


def test_a_damaged_cache_file_is_an_error_naming_it_not_a_partial_score() -> None:
    module = fresh("sacrebleu")
    module.add_batch(predictions=PAIRS[0], references=PAIRS[1])
    path, writer = module.cache_file_name, module.writer
    finalize = writer.finalize

    def finalize_then_damage():
        done = finalize()
        os.truncate(path, os.path.getsize(path) - 30)  # the last record batch cut short
        return done

    writer.finalize = finalize_then_damage
    with pytest.raises(OSError, match=f"the cache file {path} could not be read back"):
        module.compute()
    with pytest.raises(ValueError, match="nothing to score"):
        module.compute()
    os.remove(path)


# -- defect 4: one module object, several threads -----------------------------------------------------------------


def _corpus(worker: int) -> tuple[list[str], list[list[str]]]:
    return random_corpus(random.Random(100 + worker), 40)


@pytest.mark.parametrize("round_", range(3))
def test_threads_sharing_a_module_get_their_own_result_or_a_clear_refusal(round_: int) -> None:
    module = fresh("sacrebleu")
    barrier = threading.Barrier(4)
    outcomes: dict[int, object] = {}

    def work(worker: int) -> None:
        predictions, references = _corpus(worker)
        barrier.wait()
        try:
            for start in range(0, 40, 5):
                module.add_batch(predictions=predictions[start:start + 5], references=references[start:start + 5])
                time.sleep(0.001)
            outcomes[worker] = module.compute()
        except RuntimeError as error:
            outcomes[worker] = error

    threads = [threading.Thread(target=work, args=(worker,)) for worker in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    reference = load_metric("sacrebleu")
    scored = 0
    for worker in range(4):
        outcome = outcomes[worker]
        if isinstance(outcome, RuntimeError):
            assert "added by another thread" in str(outcome) and "load a module in each thread" in str(outcome)
            continue
        scored += 1
        predictions, references = _corpus(worker)
        assert outcome == reference.compute(predictions=predictions, references=references), worker
    assert scored >= 1
    assert len(module) == 0, "every example added was scored by the thread that added it"
    assert module.compute(predictions=PAIRS[0], references=PAIRS[1]) == reference.compute(predictions=PAIRS[0],
                                                                                          references=PAIRS[1])


def test_threads_computing_given_inputs_at_once_get_their_own_results() -> None:
    module = fresh("sacrebleu")
    results: dict[int, object] = {}
    barrier = threading.Barrier(4)

    def work(worker: int) -> None:
        predictions, references = _corpus(worker)
        barrier.wait()
        results[worker] = [module.compute(predictions=predictions, references=references) for _ in range(3)]

    threads = [threading.Thread(target=work, args=(worker,)) for worker in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    for worker in range(4):
        expected = load_metric("sacrebleu").compute(predictions=_corpus(worker)[0], references=_corpus(worker)[1])
        assert results[worker] == [expected] * 3


def test_examples_added_by_a_thread_that_ended_can_be_scored_by_another() -> None:
    module = fresh("sacrebleu")
    thread = threading.Thread(target=module.add_batch, kwargs={"predictions": PAIRS[0], "references": PAIRS[1]})
    thread.start()
    thread.join()
    assert module.compute() == load_metric("sacrebleu").compute(predictions=PAIRS[0], references=PAIRS[1])


# -- defect 2: distributed mode with a process killed -------------------------------------------------------------

WORLD = 2


def _rank(rank: int, behaviour: str, cache_dir: str, experiment: str, out: str, go) -> None:
    import evaluate as evaluate_in_process

    if rank == 1 and behaviour == "never starts":
        return
    predictions, references = random_corpus(random.Random(40 + rank), 300)
    try:
        module = evaluate_in_process.load(str(METRICS_DIR / "sacrebleu"), num_process=WORLD, process_id=rank,
                                          experiment_id=experiment, cache_dir=cache_dir,
                                          timeout=5 if behaviour == "never starts" else 100)
        # a first batch larger than a file buffer: evaluate's module had written it, and scored it as if it were all
        module.add_batch(predictions=predictions[:200], references=references[:200])  # evaluate's rendezvous
        module.timeout = 8  # how long process 0 waits for the others' files
        if rank == 1 and behaviour == "killed after its first batch":
            module.writer.stream.flush()  # the batch on disk, as a large one is: evaluate's module scored it alone
            os.kill(os.getpid(), signal.SIGKILL)
        module.add_batch(predictions=predictions[200:], references=references[200:])
        if rank == 1 and behaviour == "killed mid-write":
            with open(module.cache_file_name, "ab") as handle:  # a record batch begun, then the process dies
                handle.write(b"\xff\xff\xff\xff\xf0\x00\x00\x00\x10\x00")
            os.kill(os.getpid(), signal.SIGKILL)
        if rank == 1 and behaviour == "hangs":
            time.sleep(60)
        if rank == 0:
            go.wait(60)
        outcome = {"result": module.compute()}
    except Exception as error:  # noqa: BLE001 - the outcome is the test's subject
        outcome = {"error": type(error).__name__, "message": str(error)}
    Path(out, f"{rank}.json").write_text(json.dumps(outcome), encoding="utf-8")


def _process_context():
    """Processes forked from a server that imported evaluate once (spawning imports it in every process: seconds)."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["evaluate", "test_faults"])
    return context


@pytest.mark.parametrize("behaviour", ["completes", "killed after its first batch", "killed mid-write", "hangs",
                                       "never starts"])
def test_a_killed_process_in_distributed_mode_is_named_not_scored_around(behaviour: str, tmp_path: Path) -> None:
    """Process 1 of 2 killed (SIGKILL) after its first batch or in the middle of writing one: process 0 says so at
    once instead of scoring process 0's examples alone (evaluate's module did) or failing to read the file; a process
    that never computes or never starts: process 0 says which after the module's timeout, instead of waiting."""
    context = _process_context()
    go = context.Event()
    experiment = f"faults-{uuid.uuid4().hex[:8]}"
    processes = [context.Process(target=_rank, args=(rank, behaviour, str(tmp_path / "cache"), experiment,
                                                     str(tmp_path), go)) for rank in range(WORLD)]
    for process in processes:
        process.start()
    started = time.monotonic()
    if behaviour.startswith("killed"):
        processes[1].join(timeout=120)
        assert processes[1].exitcode == -signal.SIGKILL
    go.set()
    processes[0].join(timeout=120)
    elapsed = time.monotonic() - started
    for process in processes:
        if process.is_alive():
            process.kill()
            process.join()
    assert processes[0].exitcode == 0
    outcome = json.loads((tmp_path / "0.json").read_text(encoding="utf-8"))
    if behaviour == "completes":
        assert json.loads((tmp_path / "1.json").read_text(encoding="utf-8")) == {"result": None}
        corpora = [random_corpus(random.Random(40 + rank), 300) for rank in range(WORLD)]
        expected = load_metric("sacrebleu").compute(predictions=[p for c in corpora for p in c[0]],
                                                    references=[r for c in corpora for r in c[1]])
        assert outcome == {"result": json.loads(json.dumps(expected))}
        assert [name for name in os.listdir(tmp_path / "cache" / "sacrebleu" / "default")
                if not name.endswith(".lock")] == [], "files and markers removed"
        return
    assert "result" not in outcome, "no partial result"
    assert "process 1 of 2" in outcome["message"]
    if behaviour == "hangs":
        assert outcome["error"] == "TimeoutError" and "after 8 s" in outcome["message"]
    elif behaviour == "never starts":
        assert outcome["error"] == "TimeoutError" and "has not started adding examples after 5 s" in outcome["message"]
    else:
        assert outcome["error"] == "IncompleteCacheError" and "no result is given" in outcome["message"]
        assert elapsed < 100, "the killed process is seen at once, not after evaluate's timeout"


# -- defect 13: Ctrl-C in the first METEOR compute of a process ----------------------------------------------------

class _InterruptImport:
    """An import hook that raises KeyboardInterrupt when module ``target`` is first imported (Ctrl-C there)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.fired = False

    def find_spec(self, name, path, target=None):
        if name == self.target and not self.fired:
            self.fired = True
            raise KeyboardInterrupt
        return None


METEOR_INPUTS = {"predictions": ["the cat\x1csat on the mat"], "references": [["a cat was sitting on the mat"]]}


def _meteor_after_an_interrupt(target: str, out: str) -> None:
    """In a process that has not imported nltk: interrupt the user's own `import nltk` at ``target``, then compute
    METEOR twice with new module objects."""
    assert not any(name == "nltk" or name.startswith("nltk.") for name in sys.modules), "nltk imported already"
    hook = _InterruptImport(target)
    sys.meta_path.insert(0, hook)
    folder = str(METRICS_DIR / "meteor")
    try:
        import nltk  # noqa: F401
    except KeyboardInterrupt:
        pass
    outcomes = []
    for _ in range(2):
        try:
            outcomes.append({"result": evaluate.load(folder).compute(**METEOR_INPUTS)})
        except Exception as error:  # noqa: BLE001 - the outcome is the test's subject
            outcomes.append({"error": f"{type(error).__name__}: {error}"})
    Path(out).write_text(json.dumps({"fired": hook.fired, "outcomes": outcomes}), encoding="utf-8")


def test_an_interrupted_import_of_nltk_leaves_meteor_working(tmp_path) -> None:
    """evaluate's METEOR and ours failed every later call with "partially initialized module 'nltk'" after an
    interrupted import of nltk (here the user's own `import nltk`, before METEOR's first compute)."""
    target = "nltk.corpus"
    try:
        expected = {"result": load_metric("meteor").compute(**METEOR_INPUTS)}
    except Exception as error:  # no WordNet here: the same clear error, not a half-imported nltk
        expected = {"error": f"{type(error).__name__}: {error}"}
    process = _process_context().Process(target=_meteor_after_an_interrupt,
                                         args=(target, str(tmp_path / "out.json")))
    process.start()
    process.join(timeout=300)
    assert process.exitcode == 0
    answer = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert answer == {"fired": True, "outcomes": [expected, expected]}


def _meteor_imports(out: str) -> None:
    folder = str(METRICS_DIR / "meteor")
    outcomes = []
    for options in ({}, {"synonyms": False}):
        try:
            outcomes.append(evaluate.load(folder).compute(**METEOR_INPUTS, **options)["meteor"])
        except Exception as error:  # noqa: BLE001 - no WordNet here: the error is not this test's subject
            outcomes.append(f"{type(error).__name__}: {error}")
    nltk_modules = sorted(name for name in sys.modules if name == "nltk" or name.startswith("nltk."))
    Path(out).write_text(json.dumps({"outcomes": outcomes, "nltk": nltk_modules}), encoding="utf-8")


def test_meteor_imports_no_nltk_so_an_interrupt_cannot_leave_it_half_imported(tmp_path) -> None:
    """Row 13 of issue 32 was an interrupted import of NLTK in METEOR's first compute (to find WordNet's folders, or
    to tokenize a text whose characters `re` and NLTK's `regex` classify differently, as METEOR_INPUTS' \\x1c):
    METEOR now does neither through NLTK, so nothing of NLTK is imported, with or without synonyms."""
    process = _process_context().Process(target=_meteor_imports, args=(str(tmp_path / "out.json"),))
    process.start()
    process.join(timeout=300)
    assert process.exitcode == 0
    answer = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert answer["nltk"] == [], answer
    assert len(answer["outcomes"]) == 2
