#!/usr/bin/env python3
"""Benchmark: trec_eval's ranking measures, our core against pytrec_eval and ranx, side by side in one run.

    python scripts/bench_ranking.py [--queries 100000] [--documents 100] [--judged 10] [--repeats 3]

All three score the same seeded corpus: each query ranks --documents documents (distinct scores, exact in
float32 so every library orders them alike) and has --judged judged documents (grades 0 to 3, some of them
never retrieved). Measures: MRR, MAP, and precision, recall and nDCG at 1, 3, 5, 10, 20, 100.

- ours (core): ``pair_queries`` + ``ranking_totals`` + ``ranking_from_totals`` from the {qid: {doc: score}} dicts.
- ours (module): ``evaluate.load("./metrics/ndcg").compute(predictions=runs, references=qrels, k=...)`` with one
  {doc: score} dict per query (input checks included; it computes every measure and reports nDCG), compared on
  nDCG at every cut-off.
- pytrec_eval: ``RelevanceEvaluator(qrels, measures).evaluate(run)`` from the same dicts, then its own
  ``compute_aggregated_measure`` (``np.mean``) per measure.
- ranx: ``evaluate(Qrels, Run, metrics)`` on Qrels/Run built beforehand (untimed there: building them from the
  dicts is timed once, separately, and is by far ranx's largest cost); its numba functions are compiled by a
  first, untimed call.

Times are medians of --repeats runs; ratio = theirs / ours (above 1: ours is faster), for the core and for the
module. Values are checked equal within 1e-12 (ranx sums in another order). Peak memory: tracemalloc peak of one run (Python and numpy
allocations only: pytrec_eval's C allocations are not seen).
"""

from __future__ import annotations

import gc
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import project
from metrics._core.core_ranking import RankingOptions, pair_queries, ranking_from_totals, ranking_totals

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


def pytrec(run: dict, qrels: dict) -> dict[str, Any]:
    import pytrec_eval

    cutoffs = ",".join(map(str, CUTOFFS))
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, {"recip_rank", "map", f"P.{cutoffs}", f"recall.{cutoffs}", f"ndcg_cut.{cutoffs}"})
    per_query = evaluator.evaluate(run)
    values = list(per_query.values())
    result = {ours_name: pytrec_eval.compute_aggregated_measure(name, [query[name] for query in values])
              for name, ours_name in PYTREC_NAMES.items()}
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


def module_scorer(run: dict, qrels: dict) -> Callable[[], dict[str, Any]]:
    """The ndcg module's compute on one run and qrels per query (the queries of the run, in its order)."""
    import evaluate

    module = evaluate.load(str(project.ROOT / "metrics" / "ndcg"))
    runs, judged = list(run.values()), [qrels[query] for query in run]
    return lambda: module.compute(predictions=runs, references=judged, k=list(CUTOFFS))


def once(run: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    start = time.perf_counter()
    result = run()
    return time.perf_counter() - start, result


def main() -> int:
    parser = project.bench_parser(__doc__, queries=100_000, documents=100, judged=10, repeats=3)
    parser.add_argument("--no-memory", action="store_true", help="skip the (slow) tracemalloc runs")
    arguments = parser.parse_args()
    run, qrels = corpus(arguments.queries, arguments.documents, arguments.judged)
    options = RankingOptions.resolve("trec_eval", {"k": CUTOFFS})
    print(f"{arguments.queries:,} queries x {arguments.documents} documents, {arguments.judged} judged per query; "
          f"medians of {arguments.repeats} runs\n")

    ours_time, ours_result = project.timed(lambda: ours(run, qrels, options), arguments.repeats)
    module_time, module_result = project.timed(module_scorer(run, qrels), arguments.repeats)
    pytrec_time, pytrec_result = project.timed(lambda: pytrec(run, qrels), arguments.repeats)
    ndcg_names = [f"ndcg@{k}" for k in CUTOFFS]
    rows = [("pytrec_eval (pytrec-eval-terrier)", pytrec_time, differences(ours_result, pytrec_result),
             pytrec_result["num_queries"] == ours_result["num_queries"]),
            ("ndcg module vs pytrec_eval", pytrec_time, differences(module_result, pytrec_result, ndcg_names),
             pytrec_result["num_queries"] == module_result["num_queries"])]
    try:
        import ranx
    except ImportError as error:
        ranx = None
        print(f"ranx not importable ({error}); install it with `pip install ranx`\n")
    if ranx is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            build_time, (ranx_qrels, ranx_run) = once(lambda: (ranx.Qrels(qrels), ranx.Run(run)))
        compile_time, _ = once(lambda: ranx_evaluate(ranx_qrels, ranx_run))
        ranx_time, ranx_result = project.timed(lambda: ranx_evaluate(ranx_qrels, ranx_run), arguments.repeats)
        rows.append(("ranx evaluate (prebuilt Qrels/Run)", ranx_time, differences(ours_result, ranx_result), True))
        rows.append(("ndcg module vs ranx evaluate", ranx_time, differences(module_result, ranx_result, ndcg_names),
                     True))
        rows.append(("ranx Qrels+Run from the dicts, once", build_time, None, None))
        rows.append(("ranx first evaluate (numba compile/load), once", compile_time, None, None))

    print("| implementation | seconds | ours seconds (core or module) | ratio theirs/ours | max difference | equal |")
    print("|---|---|---|---|---|---|")
    all_equal = True
    for name, seconds, difference, same_count in rows:
        if difference is None:
            print(f"| {name} | {seconds:.2f} | | | | |")
            continue
        equal = difference <= TOLERANCE and same_count
        all_equal &= equal
        mine = module_time if name.startswith("ndcg module") else ours_time
        print(f"| {name} | {seconds:.2f} | {mine:.2f} | {seconds / mine:.2f}x | {difference:.1e} | {equal} |")
    print(f"\nours: {', '.join(f'{name}={ours_result[name]:.4f}' for name in ('mrr', 'map', 'ndcg@10'))}, "
          f"num_queries={ours_result['num_queries']:,}")
    if not arguments.no_memory:
        memory = (project.peak_mib(lambda: ours(run, qrels, options)), project.peak_mib(lambda: pytrec(run, qrels)))
        print(f"peak MiB (tracemalloc) ours / pytrec_eval: {memory[0]:,.0f} / {memory[1]:,.0f}")
    return 0 if all_equal else 1


if __name__ == "__main__":
    raise SystemExit(main())
