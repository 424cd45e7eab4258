#!/usr/bin/env python3
"""Benchmark: trec_eval's ranking measures and TREC file readers, ours against pytrec_eval (and ranx where
installed), side by side in one run.

    python scripts/bench_ranking.py [--queries 20000] [--documents 100] [--judged 10] [--repeats 5]
                                    [--lines 10000000] [--floor-lines 1000000] [--no-memory] [--no-readers]
                                    [--readers-only]

Every implementation scores the same seeded corpus: each query ranks --documents documents (distinct scores, exact
in float32 so every library orders them alike) and has --judged judged documents (grades 0 to 3, some of them
never retrieved). Cut-offs 1, 3, 5, 10, 20, 100.

- modules: each ranking module's ``evaluate.load("./metrics/<name>").compute(predictions=runs, references=qrels,
  k=...)`` (one {doc: score} dict per query, input checks included) against pytrec_eval computing that module's
  measure (``map``, ``recip_rank``, ``ndcg_cut.k``, ``P.k``, ``recall.k``): ``RelevanceEvaluator(qrels,
  measure).evaluate(run)`` and its ``compute_aggregated_measure`` (a new evaluator each run, as a caller scores
  a new corpus). Each module runs in its own forked process (pytrec_eval has been seen to hang after some tens
  of evaluators with different measure sets in one process), ours and pytrec_eval interleaved.
- core: ``pair_queries`` + ``ranking_totals`` + ``ranking_from_totals`` from the {qid: {doc: score}} dicts,
  against pytrec_eval computing every measure, and ranx's ``evaluate`` on Qrels/Run built beforehand (building
  them from the dicts is timed once, separately; its numba functions are compiled by a first, untimed call).
- the limit of the modules: the input check alone (``RANKINGS.check``: one walk over every document id and
  value of the runs and qrels, and the look-ups of the judged documents in the runs) against pytrec_eval computing
  ``ndcg_cut``. No module's ``compute`` can be faster than its input check.
- readers: a --lines-line TREC run file and a --lines-line qrels file written to a temporary folder, read by
  ``read_trec_run`` / ``read_trec_qrels`` (a read-only mapping over arrays; each query's dict is made when asked
  for, so this times the parse, not dicts) and by pytrec_eval's ``parse_run`` / ``parse_qrel`` (over the open
  file, dicts), interleaved, and by ranx's ``Run.from_file`` / ``Qrels.from_file`` where installed; the results
  must be equal (the comparison makes our dicts, untimed).
- end to end: both files read and every measure's mean computed, ``read_trec_*`` + ``pair_queries`` (arrays, no
  dicts) + ``ranking_totals`` against pytrec_eval's ``parse_run`` + ``parse_qrel`` + ``evaluate``.
- the limit of dict readers: on a --floor-lines-line file, only making the objects of a dict reader's result (a
  document-id string and a float or int per line, one dict per query) from the file's fields already split in
  memory, against pytrec_eval's parse of that file. No reader that returns ``{qid: {docno: value}}`` can be
  faster than that.

Times are medians of --repeats runs, wall clock and this process's CPU time (less disturbed by other jobs on a
shared machine; the reader rows' CPU time leaves out waiting for the disk); ratio = theirs / ours (above 1: ours
is faster). Values are checked equal
within 1e-12 (means: pytrec_eval averages with ``np.mean``, ranx sums in another order; per-query values are
bit-identical, see tests/test_ranking_core.py). Peak memory: tracemalloc peak of one core run (Python and numpy
allocations only: pytrec_eval's C allocations are not seen).
"""

from __future__ import annotations

import gc
import multiprocessing
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

import project
from metrics._core.core_ranking import RankingOptions, pair_queries, ranking_from_totals, ranking_totals
from metrics._core.core_ranking import read_trec_qrels, read_trec_run

CUTOFFS = (1, 3, 5, 10, 20, 100)
TOLERANCE = 1e-12


def corpus(queries: int, documents: int, judged: int, seed: int = 13) -> tuple[dict, dict]:
    """Seeded run ({qid: {doc: score}}) and graded qrels ({qid: {doc: grade}})."""
    rng = np.random.default_rng(seed)
    pool = documents + documents // 5
    permutations = np.argsort(rng.random((queries, documents)), axis=1)
    scores = (permutations + rng.random((queries, 1)) * 0.5).astype(np.float32).astype(np.float64).tolist()
    judged_documents = np.argsort(rng.random((queries, pool)), axis=1)[:, :judged].tolist()
    grades = rng.integers(0, 4, (queries, judged)).tolist()
    run, qrels = {}, {}
    for query in range(queries):
        qid = f"q{query}"
        run[qid] = dict(zip([f"d{query}-{doc}" for doc in range(documents)], scores[query]))
        qrels[qid] = {f"d{query}-{doc}": grade for doc, grade in zip(judged_documents[query], grades[query])}
    return run, qrels


def ours(run: dict, qrels: dict, options: RankingOptions) -> dict[str, Any]:
    paired = pair_queries(run, qrels)
    return ranking_from_totals(ranking_totals(paired.runs, paired.qrels, options), options)


PYTREC_NAMES = {"recip_rank": "mrr", "map": "map", **{f"{trec}_{k}": f"{name}@{k}" for k in CUTOFFS for trec, name in
                                                       (("P", "precision"), ("recall", "recall"), ("ndcg_cut", "ndcg"))}}
# Each module, the pytrec_eval measure it reports, and its output prefix.
MODULES = {"map": ("map", "map"), "mrr": ("recip_rank", "mrr"), "ndcg": ("ndcg_cut", "ndcg"),
           "precision_at_k": ("P", "precision"), "recall_at_k": ("recall", "recall")}
CUTOFF_MEASURES = {"ndcg_cut", "P", "recall"}


def pytrec(run: dict, qrels: dict, measures: tuple[str, ...] = ("recip_rank", "map", "P", "recall", "ndcg_cut")
           ) -> dict[str, Any]:
    """pytrec_eval's means of ``measures`` (cut-off measures at every cut-off), under our output names."""
    import pytrec_eval

    cutoffs = ",".join(map(str, CUTOFFS))
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, {f"{measure}.{cutoffs}" if measure in CUTOFF_MEASURES else measure for measure in measures})
    values = list(evaluator.evaluate(run).values())
    result = {ours_name: pytrec_eval.compute_aggregated_measure(name, [query[name] for query in values])
              for name, ours_name in PYTREC_NAMES.items() if name.rsplit("_", 1)[0] in measures or name in measures}
    result["num_queries"] = len(values)
    return result


RANX_METRICS = ["mrr", "map", *(f"{name}@{k}" for name in ("precision", "recall", "ndcg") for k in CUTOFFS)]


def ranx_evaluate(qrels: Any, run: Any) -> dict[str, Any]:
    import ranx

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's "unsafe cast from uint64 to int64" type-safety warnings
        return dict(ranx.evaluate(qrels, run, RANX_METRICS, save_results_in_run=False))


def differences(result: dict[str, Any], reference: dict[str, Any], names: list[str] = RANX_METRICS) -> float:
    return max(abs(float(result[name]) - float(reference[name])) for name in names)


class Times(NamedTuple):
    """Seconds of a run (or medians of runs): wall clock and this process's CPU time."""

    wall: float
    cpu: float


def once(run: Callable[[], Any]) -> tuple[Times, Any]:
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    result = run()
    return Times(time.perf_counter() - wall, time.process_time() - cpu), result


def medians(times: list[Times]) -> Times:
    return Times(statistics.median(each.wall for each in times), statistics.median(each.cpu for each in times))


def interleaved(first: Callable[[], Any], second: Callable[[], Any], repeats: int) -> tuple[Times, Any, Times, Any]:
    """Median times and last results of ``first`` and ``second``, run alternately ``repeats`` times each."""
    times: tuple[list[Times], list[Times]] = ([], [])
    results: list[Any] = [None, None]
    for _ in range(repeats):
        for index, run in enumerate((first, second)):
            results[index] = None  # the previous result is freed before the next run
            seconds, results[index] = once(run)
            times[index].append(seconds)
    return medians(times[0]), results[0], medians(times[1]), results[1]


def repeated(run: Callable[[], Any], repeats: int) -> Times:
    """Median times of ``repeats`` runs."""
    return medians([once(run)[0] for _ in range(repeats)])


# The corpus, set before the forked processes start (they inherit it).
_CORPUS: dict[str, Any] = {}


def module_row(name: str, repeats: int) -> tuple[str, Times, Times, float, bool]:
    """(label, pytrec_eval seconds, our module's seconds, max difference, same query count), in a forked process."""
    import evaluate

    run, qrels = _CORPUS["run"], _CORPUS["qrels"]
    measure, prefix = MODULES[name]
    module = evaluate.load(str(project.ROOT / "metrics" / name))
    runs, judged = list(run.values()), [qrels[query] for query in run]
    mine, result, theirs, reference = interleaved(
        lambda: module.compute(predictions=runs, references=judged, k=list(CUTOFFS)),
        lambda: pytrec(run, qrels, (measure,)), repeats)
    names = [key for key in reference if key == prefix or key.startswith(prefix + "@")]
    return (f"{name} module vs pytrec_eval `{measure}`", theirs, mine, differences(result, reference, names),
            result["num_queries"] == reference["num_queries"])


def core_row(repeats: int) -> tuple[str, Times, Times, float, bool]:
    """The core against pytrec_eval computing every measure, in a forked process."""
    run, qrels = _CORPUS["run"], _CORPUS["qrels"]
    options = RankingOptions.resolve("trec_eval", {"k": CUTOFFS})
    mine, result, theirs, reference = interleaved(lambda: ours(run, qrels, options), lambda: pytrec(run, qrels),
                                                  repeats)
    _CORPUS["core_result"] = result
    return ("core vs pytrec_eval, every measure", theirs, mine, differences(result, reference),
            result["num_queries"] == reference["num_queries"])


def check_row(repeats: int) -> tuple[str, Times, Times, float, bool]:
    """The ranking modules' input check alone against pytrec_eval computing ``ndcg_cut``, in a forked process."""
    from metrics._core.core_ranking_inputs import RANKINGS

    run, qrels = _CORPUS["run"], _CORPUS["qrels"]
    given = {"predictions": list(run.values()), "references": [qrels[query] for query in run]}
    mine, _, theirs, _ = interleaved(lambda: RANKINGS.check("ndcg", given), lambda: pytrec(run, qrels, ("ndcg_cut",)),
                                     repeats)
    return "limit: the input check alone vs pytrec_eval `ndcg_cut`", theirs, mine, 0.0, True


def forked(function: Callable[..., Any], *arguments: Any) -> Any:
    """``function(*arguments)`` in a forked process of its own (a module-level function; small arguments)."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        return pool.submit(function, *arguments).result()


def ranx_rows(run: dict, qrels: dict, options: RankingOptions, repeats: int) -> list[tuple[Any, ...]]:
    """ranx's evaluate on prebuilt Qrels/Run against the core (and the one-off costs of building them)."""
    try:
        import ranx
    except ImportError as error:
        print(f"ranx not importable ({error}); install it with `pip install ranx`\n")
        return []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        build_time, (ranx_qrels, ranx_run) = once(lambda: (ranx.Qrels(qrels), ranx.Run(run)))
    compile_time, _ = once(lambda: ranx_evaluate(ranx_qrels, ranx_run))
    mine, result, theirs, reference = interleaved(lambda: ours(run, qrels, options),
                                                  lambda: ranx_evaluate(ranx_qrels, ranx_run), repeats)
    return [("core vs ranx evaluate (prebuilt Qrels/Run)", theirs, mine, differences(result, reference), True),
            ("ranx Qrels+Run from the dicts, once", build_time, None, None, None),
            ("ranx first evaluate (numba compile/load), once", compile_time, None, None, None)]


# -- the TREC readers ------------------------------------------------------------------------------------------


def write_trec_files(folder: Path, lines: int, documents: int, seed: int = 7) -> tuple[Path, Path]:
    """A run file and a qrels file of ``lines`` lines each (``documents`` lines a query), seeded."""
    rng = np.random.default_rng(seed)
    queries = -(-lines // documents)
    paths = folder / "run.txt", folder / "qrels.txt"
    with open(paths[0], "w", encoding="utf-8") as run, open(paths[1], "w", encoding="utf-8") as qrels:
        for query in range(queries):
            count = min(documents, lines - query * documents)
            scores = rng.random(count).round(6).tolist()
            grades = rng.integers(0, 4, count).tolist()
            run.write("".join(f"q{query} Q0 d{query}-{doc} {doc + 1} {score} tag\n"
                              for doc, score in enumerate(scores)))
            qrels.write("".join(f"q{query} 0 d{query}-{doc} {grade}\n" for doc, grade in enumerate(grades)))
    return paths


def pytrec_reader(parse: str) -> Callable[[Path], dict]:
    """pytrec_eval's ``parse_run`` or ``parse_qrel`` over the open file."""
    import pytrec_eval

    def read(path: Path) -> dict:
        with open(path, encoding="utf-8") as handle:
            return getattr(pytrec_eval, parse)(handle)

    return read


def ranx_reader(kind: str) -> Callable[[Path], Any] | None:
    """ranx's ``Run.from_file`` or ``Qrels.from_file`` (TREC format), None when ranx is not installed."""
    try:
        import ranx
    except ImportError:
        return None
    return lambda path: getattr(ranx, kind).from_file(str(path), kind="trec")


def result_objects(path: Path, value_field: int, number: type) -> Callable[[], dict]:
    """A function making only the objects of a reader's result from the file's fields, split beforehand: a fresh
    document-id string and a ``number`` per line, and one dict per query (``{qid: {docno: value}}``)."""
    with open(path, encoding="utf-8") as handle:
        rows = [line.split() for line in handle]
    queries, documents, values = ([row[field] for row in rows] for field in (0, 2, value_field))
    del rows
    bounds = [0, *(index for index in range(1, len(queries)) if queries[index] != queries[index - 1]), len(queries)]
    firsts = list(zip(bounds, bounds[1:]))

    def make() -> dict:
        copies, numbers = list(map(str.lower, documents)), list(map(number, values))  # str.lower: a new string
        return {queries[begin]: dict(zip(copies[begin:end], numbers[begin:end])) for begin, end in firsts}

    return make


def reader_floor_rows(lines: int, documents: int, repeats: int) -> list[tuple[Any, ...]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_ranking_") as folder:
        run_path, qrels_path = write_trec_files(Path(folder), lines, documents)
        for label, parse, path, value_field, number in (("run", "parse_run", run_path, 4, float),
                                                        ("qrels", "parse_qrel", qrels_path, 3, int)):
            make, theirs = result_objects(path, value_field, number), pytrec_reader(parse)
            floor, result, their_time, reference = interleaved(make, lambda: theirs(path), repeats)
            equal = result == reference
            rows.append((f"limit: {label} result objects alone vs pytrec_eval {parse}, {lines:,} lines", their_time,
                         floor, 0.0 if equal else float("inf"), equal))
    return rows


def reader_rows(lines: int, documents: int, repeats: int) -> list[tuple[Any, ...]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_ranking_") as folder:
        run_path, qrels_path = write_trec_files(Path(folder), lines, documents)
        for label, mine, parse, kind, path in (("run", read_trec_run, "parse_run", "Run", run_path),
                                               ("qrels", read_trec_qrels, "parse_qrel", "Qrels", qrels_path)):
            theirs = pytrec_reader(parse)
            my_time, result, their_time, reference = interleaved(lambda: mine(path), lambda: theirs(path), repeats)
            equal = result == reference
            rows.append((f"read_trec_{label} vs pytrec_eval {parse}, {lines:,} lines", their_time, my_time,
                         0.0 if equal else float("inf"), equal))
            del result, reference
            ranx_read = ranx_reader(kind)
            if ranx_read is not None:
                ranx_time = repeated(lambda: ranx_read(path), repeats)
                rows.append((f"read_trec_{label} vs ranx {kind}.from_file", ranx_time, my_time, 0.0, True))
        rows.append(end_to_end_row(run_path, qrels_path, lines, repeats))
    return rows


def end_to_end_row(run_path: Path, qrels_path: Path, lines: int, repeats: int) -> tuple[Any, ...]:
    """Both files read and every measure's mean computed: ``read_trec_run`` + ``read_trec_qrels`` +
    ``pair_queries`` + ``ranking_totals`` against pytrec_eval's ``parse_run`` + ``parse_qrel`` + ``evaluate``."""
    options = RankingOptions.resolve("trec_eval", {"k": CUTOFFS})
    parse_run, parse_qrels = pytrec_reader("parse_run"), pytrec_reader("parse_qrel")

    def mine() -> dict[str, Any]:
        paired = pair_queries(read_trec_run(run_path), read_trec_qrels(qrels_path))
        return ranking_from_totals(ranking_totals(paired.runs, paired.qrels, options, checked=True), options)

    my_time, result, their_time, reference = interleaved(
        mine, lambda: pytrec(parse_run(run_path), parse_qrels(qrels_path)), repeats)
    return (f"read + every measure vs pytrec_eval parse + evaluate, {lines:,}-line files", their_time, my_time,
            differences(result, reference), result["num_queries"] == reference["num_queries"])


def print_rows(rows: list[tuple[Any, ...]]) -> bool:
    print("| comparison | theirs seconds | ours seconds | ratio theirs/ours | theirs CPU seconds | ours CPU seconds | "
          "CPU ratio | max difference | equal |")
    print("|---|---|---|---|---|---|---|---|---|")
    all_equal = True
    for name, theirs, mine, difference, same_count in rows:
        if mine is None:
            print(f"| {name} | {theirs.wall:.2f} | | | {theirs.cpu:.2f} | | | | |")
            continue
        equal = difference <= TOLERANCE and same_count
        all_equal &= equal
        print(f"| {name} | {theirs.wall:.2f} | {mine.wall:.2f} | {theirs.wall / mine.wall:.2f}x | {theirs.cpu:.2f} | "
              f"{mine.cpu:.2f} | {theirs.cpu / mine.cpu:.2f}x | {difference:.1e} | {equal} |")
    return all_equal


def main() -> int:
    parser = project.bench_parser(__doc__, queries=20_000, documents=100, judged=10, repeats=5, lines=10_000_000,
                                  floor_lines=1_000_000)
    parser.add_argument("--no-memory", action="store_true", help="skip the (slow) tracemalloc runs")
    parser.add_argument("--no-readers", action="store_true", help="skip the TREC file readers")
    parser.add_argument("--readers-only", action="store_true", help="only the TREC file readers (and their limit)")
    arguments = parser.parse_args()
    rows = []
    if not arguments.readers_only:
        run, qrels = corpus(arguments.queries, arguments.documents, arguments.judged)
        _CORPUS.update(run=run, qrels=qrels)
        options = RankingOptions.resolve("trec_eval", {"k": CUTOFFS})
        print(f"{arguments.queries:,} queries x {arguments.documents} documents, {arguments.judged} judged per "
              f"query; medians of {arguments.repeats} runs, ours and theirs interleaved\n")
        rows += [forked(module_row, name, arguments.repeats) for name in MODULES]
        rows.append(forked(core_row, arguments.repeats))
        rows.append(forked(check_row, arguments.repeats))
        rows.extend(ranx_rows(run, qrels, options, arguments.repeats))
    if not arguments.no_readers:
        rows.extend(reader_rows(arguments.lines, arguments.documents, arguments.repeats))
        rows.extend(reader_floor_rows(arguments.floor_lines, arguments.documents, arguments.repeats))
    all_equal = print_rows(rows)
    if not arguments.no_memory and not arguments.readers_only:
        memory = (project.peak_mib(lambda: ours(run, qrels, options)), project.peak_mib(lambda: pytrec(run, qrels)))
        print(f"\npeak MiB (tracemalloc) core / pytrec_eval: {memory[0]:,.0f} / {memory[1]:,.0f}")
    return 0 if all_equal else 1


if __name__ == "__main__":
    raise SystemExit(main())
