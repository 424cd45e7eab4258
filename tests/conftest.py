"""Shared fixtures: offline environment, a socket guard, the repository's metric folders and the real data."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

# Offline before evaluate/datasets/transformers are imported anywhere; evaluate's module cache in a
# throw-away folder so tests never reuse modules loaded from another checkout. Worker processes that
# import this file again (spawned for distributed tests) inherit the folder through the environment.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_EVALUATE_OFFLINE"] = "1"
# pytest-xdist's workers share the machine's cores: each takes its share for torch's (OpenMP's) threads. With a
# thread per core in every worker, the model metrics' many short operations ran up to 16 times slower than alone.
if "PYTEST_XDIST_WORKER_COUNT" in os.environ:
    os.environ.setdefault("OMP_NUM_THREADS",
                          str(max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))))
# pytest-xdist's workers (named by PYTEST_XDIST_WORKER) each get their own metrics cache (evaluate's arrow files)
# and share the modules cache (evaluate copies a module under a file lock): the controller imports from it the
# warning classes of vendored modules that the workers' warnings name.
# The folder is removed at the end of the run by the process that made it (pytest_unconfigure).
_MADE_CACHE = "METRICS_TESTS_HF_CACHE" not in os.environ
if _MADE_CACHE:
    os.environ["METRICS_TESTS_HF_CACHE"] = tempfile.mkdtemp(prefix="metrics-tests-hf-")
_CACHE = Path(os.environ["METRICS_TESTS_HF_CACHE"])
# GGUF models converted once (core_lm_gguf) are kept in the run's folder, shared by the workers and the processes
# the tests start: nothing is written to the user's cache.
os.environ["EVALUATE_TEXT_METRICS_CACHE"] = str(_CACHE / "converted")
os.environ["HF_MODULES_CACHE"] = str(_CACHE / "modules")
os.environ["HF_METRICS_CACHE"] = str(_CACHE / "metrics" / os.environ.get("PYTEST_XDIST_WORKER", "main"))
if "PYTEST_XDIST_WORKER" not in os.environ and os.environ["HF_MODULES_CACHE"] not in sys.path:
    (_CACHE / "modules").mkdir(parents=True, exist_ok=True)  # a missing folder on sys.path is never looked at again
    sys.path.append(os.environ["HF_MODULES_CACHE"])

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
METRICS_DIR = ROOT / "metrics"
SHARED_DATA = ROOT.parent / "shared" / "data"

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


class NetworkBlocked(OSError):
    """Raised by the socket guard for any connection that leaves the machine."""


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_LOOPBACK = ("127.0.0.1", "::1", "localhost")


def _guard(allow_loopback: bool):
    def check(sock: socket.socket, address: object) -> None:
        if sock.family == getattr(socket, "AF_UNIX", None):
            return
        host = address[0] if isinstance(address, tuple) else address
        if allow_loopback and host in _LOOPBACK:
            return
        raise NetworkBlocked(f"network access is blocked in tests (attempted connection to {address!r})")

    def connect(sock: socket.socket, address: object) -> None:
        check(sock, address)
        return _real_connect(sock, address)

    def connect_ex(sock: socket.socket, address: object) -> int:
        check(sock, address)
        return _real_connect_ex(sock, address)

    return connect, connect_ex


@pytest.fixture(autouse=True)
def block_network(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fail any connection attempt (Unix sockets, and loopback for tests marked `loopback`, excepted)."""
    connect, connect_ex = _guard(allow_loopback=request.node.get_closest_marker("loopback") is not None)
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    yield


def metric_names() -> list[str]:
    """Every metric folder in metrics/ (folders starting with '_' hold the shared core)."""
    return sorted(
        path.name for path in METRICS_DIR.iterdir() if path.is_dir() and not path.name.startswith(("_", "."))
    )


_LOADED: dict[str, object] = {}


def model_config(name: str) -> str | None:
    """The config name the suite loads metric ``name`` with: for metrics whose model ships with no package (their
    `required_options`), a tiny model made for the tests; None for the others."""
    if name == "comet":
        from comet_checkpoint import tiny_comet_checkpoint

        return tiny_comet_checkpoint()
    if name == "bleurt":
        from bleurt_checkpoint import tiny_bleurt_checkpoint

        return tiny_bleurt_checkpoint()
    if name == "metricx":
        from metricx_checkpoint import tiny_metricx_checkpoint

        return tiny_metricx_checkpoint()
    if name == "usr":
        from usr_checkpoint import tiny_usr_models

        return tiny_usr_models()
    return None


def load_metric(name: str):
    """The metric folder ``metrics/<name>`` loaded through evaluate's real loader (cached per session); metrics
    that need a model that does not ship get the suite's tiny one (:func:`model_config`)."""
    if name not in _LOADED:
        import evaluate

        _LOADED[name] = evaluate.load(str(METRICS_DIR / name), model_config(name))
    return _LOADED[name]


def metric_fixture(name: str):
    """A module-scoped fixture of the metric folder ``name``, loaded once per test module: assign it to the
    fixture's name (``rouge = metric_fixture("rouge")``)."""

    @pytest.fixture(scope="module")
    def metric():
        return load_metric(name)

    return metric


def read_lines(path: Path) -> list[str]:
    """Lines of a text file without their newline (exactly as a one-segment-per-line file holds them)."""
    with open(path, encoding="utf-8", newline="\n") as handle:
        return [line[:-1] if line.endswith("\n") else line for line in handle]


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data not found at {SHARED_DATA} (../shared/data beside the project)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def wmt17(shared_data: Path) -> tuple[list[str], dict[str, list[str]]]:
    """WMT17 en-de newstest2017: (references, {system name: hypotheses})."""
    folder = shared_data / "wmt17-en-de"
    if not folder.is_dir():
        pytest.skip(f"WMT17 data not found at {folder}")
    references = read_lines(folder / "newstest2017.ref.de")
    systems = {path.stem: read_lines(path) for path in sorted((folder / "systems").glob("*.de"))}
    return references, systems


@pytest.fixture(scope="module")
def tokenizer():
    """The small tokenizer of the language-model tests, trained offline (``test_lm_core.train_tokenizer``)."""
    from test_lm_core import train_tokenizer

    return train_tokenizer()


@pytest.fixture(scope="module")
def llama(tokenizer):
    """A tiny randomly initialised Llama for that tokenizer (``test_lm_core.tiny_llama``)."""
    from test_lm_core import tiny_llama

    return tiny_llama(len(tokenizer))


@pytest.fixture(scope="module")
def meteor_cases():
    """``(count, seed) -> [(prediction, references)]``: synonym-rich generated METEOR cases
    (``test_meteor_core.CaseGenerator``); skips without Debian's WordNet."""
    from meteor_oracle import SKIP_REASON, debian_wordnet_available
    from test_meteor_core import CaseGenerator

    if not debian_wordnet_available():
        pytest.skip(SKIP_REASON)
    made = CaseGenerator()
    return lambda count, seed: made.cases(count, seed)


def sentence_and_corpus_scores(schema, rows, signature: str, from_totals, options) -> tuple[list[float], dict]:
    """Each row's own ``score`` and the corpus result, both from totals of statistics rows (as the base sums them)."""
    sentences = [from_totals(schema.totals_of_rows([row], signature), options)["score"] for row in rows]
    return sentences, from_totals(schema.totals_of_rows(rows, signature), options)


def default_and_slow(default: tuple, slow: tuple) -> list:
    """Parameters of a check run at a default size and, marked slow, at a larger one."""
    return [pytest.param(*default), pytest.param(*slow, marks=pytest.mark.slow)]


def wmt17_ragged(wmt17: tuple[list[str], dict[str, list[str]]], size: int | None = None):
    """KIT's WMT17 outputs with up to three references each (the reference, online-A's output, and uedin-nmt's
    output on two examples in three): (hypotheses, ragged reference lists per example, sacreBLEU's reference
    streams with ``None`` where a stream has no reference)."""
    references, systems = wmt17
    streams = [references[:size], systems["online-A.0"][:size],
               [line if index % 3 else None for index, line in enumerate(systems["uedin-nmt.4722"][:size])]]
    ragged = [[r for r in refs if r is not None] for refs in zip(*streams)]
    return systems["KIT.4950"][:size], ragged, streams


# Memory: each test process's peak resident set (its own and its children's high-water marks) after each test;
# a test that raises it past PEAK_RSS_LIMIT_MIB fails, and the terminal summary names the tests that set the
# highest peaks in each process (pytest-xdist's workers report theirs through the test reports). The limit is a
# quarter of the 24 GiB CI machine, so the suite's two worker processes together stay under half of it.
PEAK_RSS_LIMIT_MIB = int(os.environ.get("METRICS_TESTS_PEAK_RSS_MIB", "6144"))
_PEAKS: list[tuple[float, str, str]] = []  # (peak MiB, test process, test id)


@pytest.fixture(scope="session")
def nltk_wordnet(tmp_path_factory: pytest.TempPathFactory):
    """NLTK's WordNet reader over Debian's WordNet 3.0 files (METEOR's oracle); skips where they are absent."""
    from meteor_oracle import shared_nltk_wordnet

    return shared_nltk_wordnet(tmp_path_factory)


def _peak_rss_mib() -> float:
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024  # kilobytes on Linux


_PEAK_PROPERTY = "peak_rss_mib"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    before = _peak_rss_mib()
    yield
    after = _peak_rss_mib()
    if after > before:
        item.user_properties.append((_PEAK_PROPERTY, (after, os.environ.get("PYTEST_XDIST_WORKER", "main"))))
    if after > PEAK_RSS_LIMIT_MIB >= before:
        pytest.fail(f"peak resident memory rose to {after:,.0f} MiB during this test, over the "
                    f"{PEAK_RSS_LIMIT_MIB:,} MiB the suite allows (METRICS_TESTS_PEAK_RSS_MIB)")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call":
        _PEAKS.extend((peak, process, report.nodeid)
                      for name, (peak, process) in report.user_properties if name == _PEAK_PROPERTY)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    for process in sorted({process for _, process, _ in _PEAKS}):
        peaks = sorted(((peak, nodeid) for peak, owner, nodeid in _PEAKS if owner == process), reverse=True)
        terminalreporter.write_line(f"peak resident memory of test process {process}: {peaks[0][0]:,.0f} MiB; "
                                    "highest peaks set by:")
        for peak, nodeid in peaks[:5]:
            terminalreporter.write_line(f"  {peak:8,.0f} MiB  {nodeid}")


# Files of independent checks over every metric (test_properties.py: minutes of work in all): with `--dist loadfile`
# their tests are work units of their own, spread over the workers; every other file runs whole in one worker so
# that its module-scoped fixtures (models, corpora) load once.
SCHEDULED_BY_TEST = ("tests/test_properties.py",)


def _test_file(nodeid: str) -> str:
    """The file part of a test id ("tests/test_x.py::test_y[z]" -> "tests/test_x.py")."""
    return nodeid.split("::", 1)[0]


def pytest_unconfigure(config: pytest.Config) -> None:
    """The run's cache folder (evaluate's modules and arrow files, converted GGUF models) is removed by the process
    that made it, once every worker is done."""
    if _MADE_CACHE:
        shutil.rmtree(_CACHE, ignore_errors=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The property tests first, then the other files, those with more tests first.

    hypothesis also draws constants found in the code of the local modules a process has loaded (e.g. "[CLS]"
    from the BERTScore core), so a property's corpora would depend on the tests that ran before it in its
    process. Run first, after test_properties' fixture has loaded every metric, they draw the same corpora in
    every run, whichever worker runs them. The files' order is pytest-xdist's default (`--loadscope-reorder`):
    larger work units first."""
    tests_in_file = Counter(_test_file(item.nodeid) for item in items)
    items.sort(key=lambda item: (_test_file(item.nodeid) not in SCHEDULED_BY_TEST,
                                 -tests_in_file[_test_file(item.nodeid)]))


@pytest.hookimpl(optionalhook=True)  # the hook exists only where pytest-xdist is loaded
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """pytest-xdist's scheduler for `--dist loadfile`: files as work units except SCHEDULED_BY_TEST, in the order
    of the collection (pytest_collection_modifyitems)."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False

    class FileOrTestScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = _test_file(nodeid)
            return nodeid if path in SCHEDULED_BY_TEST else path

    return FileOrTestScheduling(config, log)
