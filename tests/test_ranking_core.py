"""Ranking core: trec_eval's recip_rank, map, P@k, recall@k and ndcg_cut@k against pytrec_eval (trec_eval 9 in C).

The oracle is pytrec-eval-terrier 0.5.11 (``RelevanceEvaluator(qrels, measures, relevance_level).evaluate(run)``),
compared per query and for the mean (pytrec_eval's ``compute_aggregated_measure``) on generated runs and qrels
from fixed seeds: ties, scores that tie only in float32, infinities, signed zeros, graded and negative
relevance, queries with no relevant document, empty rankings, queries only in the run or only in the qrels,
empty qrels, rankings shorter and longer than the cut-offs, non-ASCII document ids. Both ways of counting
ranks (dense comparisons and one sort) are checked. Then hand-worked examples, exact shard merging, the TREC
file readers and bad input.

Every generated query keeps a grade of at least -1: when a query's highest grade is below -1, trec_eval 9
(form_res_rels.c: ``memset`` of ``max_rel + 1`` levels) writes out of bounds and pytrec_eval crashes the
process; we score such a query 0 everywhere (``test_grades_all_below_minus_one``).
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pytest

from metrics._core.core_ranking import (
    MEASURES,
    RankingOptions,
    pair_queries,
    ranking_columns,
    ranking_from_totals,
    ranking_per_query,
    ranking_rows,
    ranking_schema,
    ranking_totals,
    read_trec_qrels,
    read_trec_run,
)

try:
    import pytrec_eval
except ImportError:  # the oracle is a test-only dependency: the tests that need it skip, visibly
    pytrec_eval = None
oracle = pytest.mark.skipif(pytrec_eval is None, reason="pytrec-eval-terrier==0.5.11 is the oracle (pip install it)")

TOLERANCE = 1e-12
METRIC = "trec_eval"


def options(**given: Any) -> RankingOptions:
    return RankingOptions.resolve(METRIC, given)


def trec_names(cutoffs: tuple[int, ...]) -> list[str]:
    return ["recip_rank", "map", *(f"{m}_{k}" for m in ("P", "recall", "ndcg_cut") for k in cutoffs)]


# -- the oracle ---------------------------------------------------------------------------------------------


def pytrec_per_query(run: dict, qrels: dict, cutoffs: tuple[int, ...], level: int = 1) -> dict[str, dict]:
    joined = ",".join(map(str, cutoffs))
    # pytrec_eval takes Python floats and ints only (numpy float32 is neither); the values are the same.
    run = {qid: {doc: float(score) if isinstance(score, np.generic) else score for doc, score in ranking.items()}
           for qid, ranking in run.items()}
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, {"recip_rank", "map", f"P.{joined}", f"recall.{joined}", f"ndcg_cut.{joined}"}, relevance_level=level)
    return evaluator.evaluate(run)


def our_per_query(run: dict, qrels: dict, opts: RankingOptions, method: str | None = None) -> dict[str, dict]:
    paired = pair_queries(run, qrels)
    columns = ranking_columns(paired.runs, paired.qrels, opts.k, opts.relevance_level, opts.score_precision,
                              METRIC, method).columns()
    names = trec_names(opts.k)
    return {qid: {name: float(column[i]) for name, column in zip(names, columns)}
            for i, qid in enumerate(paired.query_ids)}


# -- generated cases ----------------------------------------------------------------------------------------

POOL = [f"d{i}" for i in range(160)] + ["a", "a0", "ab", "Z", "é", "dé", "d€", "日本", "d\u00ff", "d\U0001f600"]
SPECIAL = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, 1e39, -1e39, 3.4028235e38, 1e-46, 2.5, 1 + 1e-9, 1 + 2e-9]


def scores_of(rng: random.Random, count: int) -> list[Any]:
    style = rng.randrange(7)
    if style == 0:
        return [rng.choice((0.0, 0.5, 1.0, 2.0)) for _ in range(count)]        # many ties
    if style == 1:
        return [1.0 + rng.choice((0.0, 1e-12, 1e-9, 2e-9, 1e-7)) for _ in range(count)]  # ties only in float32
    if style == 2:
        return [rng.randint(-5, 5) for _ in range(count)]                       # integers
    if style == 3:
        return [rng.choice(SPECIAL) for _ in range(count)]                      # infinities, zeros, overflow
    if style == 4:
        return [7.25] * count                                                   # all equal
    if style == 5:
        return [np.float32(rng.random()) if rng.random() < 0.3 else rng.gauss(0, 1) for _ in range(count)]
    return [rng.random() for _ in range(count)]


def grades_of(rng: random.Random, count: int) -> list[int]:
    grades = [rng.choice((0, 0, 1, 1, 2, 3, -1, -2, -5)) for _ in range(count)]
    if grades and max(grades) < -1:  # trec_eval 9 crashes on such a query (module docstring)
        grades[0] = rng.choice((-1, 0, 1))
    return grades


def generated_case(seed: int, queries: int = 40) -> tuple[dict, dict]:
    rng = random.Random(seed)
    run: dict[str, dict[str, Any]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for query in range(queries):
        qid = f"q{query}"
        place = rng.random()
        if place > 0.07:  # else: only in the qrels
            length = rng.choice((0, 1, 2, 3, 5, 9, rng.randint(0, 30), rng.randint(0, 30), rng.randint(95, 170)))
            documents = rng.sample(POOL, min(length, len(POOL)))
            run[qid] = dict(zip(documents, scores_of(rng, len(documents))))
        if 0.07 < place < 0.14:
            continue  # only in the run
        if rng.random() < 0.04:
            qrels[qid] = {}  # empty judgements: pytrec_eval drops the query
            continue
        judged = rng.sample(POOL, rng.choice((1, 2, 4, rng.randint(1, 25), rng.randint(1, 120))))
        qrels[qid] = dict(zip(judged, grades_of(rng, len(judged))))
    return run, qrels


def compare(ours: dict[str, dict], theirs: dict[str, dict]) -> float:
    """The largest difference over every query and measure (the query sets must be equal)."""
    assert list(ours) == list(theirs), (sorted(set(ours) ^ set(theirs)))
    worst = 0.0
    for qid, values in theirs.items():
        assert ours[qid].keys() == values.keys()
        for name, value in values.items():
            worst = max(worst, abs(ours[qid][name] - value))
    return worst


CONFIGS = [((1, 3, 5, 10, 20, 100), 1), ((2, 7, 50), 2), ((1, 100, 150), 3), ((5, 10, 15, 20, 30, 100, 200), 1)]


def parity_check(seeds: range, method: str | None) -> int:
    queries = 0
    for seed in seeds:
        run, qrels = generated_case(seed)
        cutoffs, level = CONFIGS[seed % len(CONFIGS)]
        opts = options(k=cutoffs, relevance_level=level)
        theirs = pytrec_per_query(run, qrels, cutoffs, level)
        if not theirs:
            continue
        ours = our_per_query(run, qrels, opts, method)
        assert compare(ours, theirs) <= TOLERANCE, f"seed {seed}"
        paired = pair_queries(run, qrels)
        mean = ranking_from_totals(ranking_totals(paired.runs, paired.qrels, opts), opts)
        output_names = ["mrr", "map", *(f"{m}@{k}" for m in ("precision", "recall", "ndcg") for k in cutoffs)]
        for name, output in zip(trec_names(cutoffs), output_names):
            expected = pytrec_eval.compute_aggregated_measure(name, [values[name] for values in theirs.values()])
            assert abs(mean[output] - expected) <= TOLERANCE, (seed, name)
        assert mean["num_queries"] == len(theirs)
        # Every query of the run, each with its qrels or none: the unjudged ones count 0, the means are the same.
        aligned = ranking_totals(list(run.values()), [qrels.get(qid, {}) for qid in run], opts)
        assert ranking_from_totals(aligned, opts) == mean
        queries += len(theirs)
    return queries


@oracle
@pytest.mark.parametrize("method", [None, "dense", "sorted"])
def test_parity_with_pytrec_eval(method: str | None) -> None:
    assert parity_check(range(120), method) > 3000


@oracle
@pytest.mark.slow
@pytest.mark.parametrize("method", [None, "dense", "sorted"])
def test_parity_with_pytrec_eval_many(method: str | None) -> None:
    assert parity_check(range(1000, 3000), method) > 60_000


@oracle
def test_parity_is_bit_exact() -> None:
    """Sums run in trec_eval's order, so the values are the same floats, not merely close."""
    for seed in range(20):
        run, qrels = generated_case(seed)
        theirs = pytrec_per_query(run, qrels, (1, 3, 5, 10, 20, 100))
        assert compare(our_per_query(run, qrels, options()), theirs) == 0.0


@oracle
def test_parity_large_uneven_rankings() -> None:
    """Rankings of very different lengths (the sort path) and many relevant documents per query."""
    rng = random.Random(5)
    run, qrels = {}, {}
    for query in range(60):
        length = rng.choice((1, 10, 400, 3000))
        run[f"q{query}"] = {f"d{i}": rng.choice((rng.random(), 0.5, float(rng.randint(0, 3)))) for i in range(length)}
        qrels[f"q{query}"] = {f"d{rng.randrange(3500)}": rng.randint(0, 4) for _ in range(rng.randint(1, 900))}
    for method in (None, "dense", "sorted"):
        assert compare(our_per_query(run, qrels, options(k=(1, 10, 1000)), method),
                       pytrec_per_query(run, qrels, (1, 10, 1000))) <= TOLERANCE


@oracle
def test_float64_precision_matches_pytrec_eval_on_float32_exact_scores() -> None:
    """trec_eval 10 holds scores as double: where every score is exact in float32 both precisions agree."""
    for seed in range(30):
        run, qrels = generated_case(seed)
        with np.errstate(over="ignore"):  # beyond float32: infinite, as trec_eval 9 reads them
            run = {qid: {doc: float(np.float32(score)) for doc, score in ranking.items()}
                   for qid, ranking in run.items()}
        theirs = pytrec_per_query(run, qrels, (1, 5, 10))
        for method in (None, "dense", "sorted"):
            ours = our_per_query(run, qrels, options(k=(1, 5, 10), score_precision="float64"), method)
            assert compare(ours, theirs) <= TOLERANCE


# -- hand-worked examples -----------------------------------------------------------------------------------


def single(run: dict, qrels: dict, **given: Any) -> dict[str, Any]:
    opts = options(**given)
    return ranking_from_totals(ranking_totals([run], [qrels], opts), opts)


def test_hand_worked_graded_query() -> None:
    # Ranking by score: d1 (grade 0), d2 (grade 2), d3 (not judged), d4 (grade 1); d9 (grade 3) not retrieved.
    # Relevant (grade >= 1): d2 at rank 2, d4 at rank 4, d9 never retrieved -> 3 relevant documents.
    result = single({"d1": 3.0, "d2": 2.0, "d3": 1.0, "d4": 0.5}, {"d1": 0, "d2": 2, "d4": 1, "d9": 3}, k=(1, 3, 5))
    assert result["mrr"] == 1 / 2                             # first relevant at rank 2
    assert result["map"] == (1 / 2 + 2 / 4) / 3               # precision at ranks 2 and 4, over 3 relevant
    assert result["precision@1"] == 0 / 1
    assert result["precision@3"] == 1 / 3
    assert result["precision@5"] == 2 / 5                     # 4 retrieved, still divided by 5
    assert result["recall@3"] == 1 / 3 and result["recall@5"] == 2 / 3
    dcg3 = 2 / math.log2(3)                                   # d2: gain 2 at rank 2
    dcg5 = dcg3 + 1 / math.log2(5)                            # d4: gain 1 at rank 4
    ideal1 = 3.0                                              # ideal order of the grades: 3, 2, 1
    ideal3 = 3.0 + 2 / math.log2(3) + 1 / math.log2(4)
    assert result["ndcg@1"] == 0 / ideal1
    assert result["ndcg@3"] == dcg3 / ideal3
    assert result["ndcg@5"] == dcg5 / ideal3                  # only 3 positive grades: the ideal stops growing
    assert result["num_queries"] == 1


def test_hand_worked_ties_break_by_document_id_descending() -> None:
    # Equal scores: trec_eval orders by document id descending (strcmp(p2, p1)): c, b, a.
    result = single({"a": 1.0, "b": 1.0, "c": 1.0}, {"a": 1}, k=(1, 3))
    assert result["mrr"] == 1 / 3 and result["map"] == (1 / 3) / 1
    assert result["precision@1"] == 0.0 and result["precision@3"] == 1 / 3
    # Within the ties "é" (U+00E9) > "z" > "Z" (code point order = UTF-8 byte order): é first.
    assert single({"Z": 2.0, "z": 2.0, "é": 2.0}, {"é": 1}, k=(1,))["mrr"] == 1.0
    assert single({"Z": 2.0, "z": 2.0, "é": 2.0}, {"Z": 1}, k=(1,))["mrr"] == 1 / 3


def test_hand_worked_float32_scores() -> None:
    # 1 + 1e-12 and 1.0 are the same float32: a tie, so b (> a) comes first and a is at rank 2.
    run, qrels = {"a": 1.0 + 1e-12, "b": 1.0}, {"a": 1}
    assert single(run, qrels, k=(1,))["mrr"] == 1 / 2
    assert single(run, qrels, k=(1,), score_precision="float64")["mrr"] == 1.0  # trec_eval 10: doubles
    # 1e39 and 1e300 both overflow float32 to +inf: tie again; -0.0 equals 0.0.
    assert single({"a": 1e39, "b": 1e300}, {"a": 1}, k=(1,))["mrr"] == 1 / 2
    assert single({"a": 0.0, "b": -0.0}, {"a": 1}, k=(1,))["mrr"] == 1 / 2


def test_hand_worked_relevance_level_and_negative_grades() -> None:
    # Ranking c (grade -1), a (grade 1), b (grade 2). relevance_level=2: only b is relevant, at rank 3.
    result = single({"c": 3.0, "a": 2.0, "b": 1.0}, {"a": 1, "b": 2, "c": -1}, k=(3,), relevance_level=2)
    assert result["mrr"] == 1 / 3 and result["map"] == (1 / 3) / 1 and result["precision@3"] == 1 / 3
    # nDCG ignores relevance_level: gains 0 (c: negative), 1 at rank 2, 2 at rank 3; ideal 2, 1.
    assert result["ndcg@3"] == (1 / math.log2(3) + 2 / math.log2(4)) / (2 + 1 / math.log2(3))


def test_query_without_relevant_documents_counts_in_the_mean() -> None:
    # q1: relevant at rank 1 -> 1; q2: judged, nothing relevant -> 0. Mean over both: 1/2.
    opts = options(k=(1,))
    totals = ranking_totals([{"a": 1.0}, {"b": 1.0}], [{"a": 1}, {"b": 0, "c": -1}], opts)
    result = ranking_from_totals(totals, opts)
    assert result["mrr"] == 1 / 2 and result["ndcg@1"] == 1 / 2 and result["recall@1"] == 1 / 2
    assert result["num_queries"] == 2


def test_empty_ranking_scores_zero() -> None:
    rows = ranking_rows([{}], [{"a": 3}], options(k=(1, 5)))
    assert rows == [(0.0,) * (2 + 3 * 2) + (1,)]


def test_cutoffs_beyond_every_rank() -> None:
    """A cut-off past any rank (even beyond 64 bits) counts every retrieved document: P = 1 / k, recall and nDCG as
    at the last rank."""
    rows = ranking_rows([{"a": 2.0, "b": 1.0}], [{"b": 1}], options(k=(1, 2**70)))
    assert rows == [(0.5, 0.5, 0.0, 1 / 2**70, 0.0, 1.0, 0.0, 1 / math.log2(3), 1)]


def test_grades_all_below_minus_one() -> None:
    # trec_eval 9 crashes here (see the module docstring); nothing is relevant: every measure 0.
    rows = ranking_rows([{"a": 1.0, "b": 0.5}], [{"a": -2, "b": -3}], options(k=(1,)))
    assert rows == [(0.0,) * 5 + (1,)]


@oracle
def test_pairing_follows_trec_eval() -> None:
    run = {"q1": {"a": 1.0}, "q2": {"b": 1.0}, "q3": {"c": 1.0}, "q5": {}}
    qrels = {"q1": {"a": 1}, "q3": {}, "q4": {"d": 2}, "q5": {"e": 1}}
    paired = pair_queries(run, qrels)
    # q2 has no qrels, q3 empty qrels (pytrec_eval drops it), q4 is not in the run; q5 (empty ranking) counts.
    assert paired.query_ids == ["q1", "q5"]
    assert paired.runs == [{"a": 1.0}, {}] and paired.qrels == [{"a": 1}, {"e": 1}]
    complete = pair_queries(run, qrels, complete=True)  # trec_eval -c: q4 with an empty ranking
    assert complete.query_ids == ["q1", "q5", "q4"] and complete.runs[2] == {}
    assert list(pytrec_per_query(run, qrels, (1,))) == paired.query_ids


def test_per_query_outputs() -> None:
    opts = options(k=(1, 2))
    rows = ranking_rows([{"a": 2.0, "b": 1.0}, {"a": 1.0}], [{"b": 1}, {"z": 1}], opts)
    per_query = ranking_per_query(rows, opts)
    assert list(per_query) == ["mrr", "map", "precision@1", "precision@2", "recall@1", "recall@2", "ndcg@1", "ndcg@2"]
    assert per_query["mrr"] == [0.5, 0.0] and per_query["precision@2"] == [0.5, 0.0]
    unjudged = ranking_per_query(ranking_rows([{"a": 1.0}], [{}], opts), opts)
    assert unjudged["mrr"] == [None] and unjudged["ndcg@2"] == [None]


def test_schema_and_output_names() -> None:
    opts = options(k=(10, 1))
    assert opts.k == (1, 10)
    schema = ranking_schema(METRIC, opts)
    assert schema.names == ("recip_rank", "map", "P_1", "P_10", "recall_1", "recall_10", "ndcg_cut_1",
                            "ndcg_cut_10", "queries")
    result = single({"a": 1.0}, {"a": 1}, k=(10, 1))
    assert list(result) == ["mrr", "map", "precision@1", "precision@10", "recall@1", "recall@10", "ndcg@1",
                            "ndcg@10", "num_queries"]
    assert options().k == (1, 3, 5, 10, 20, 100) and options().relevance_level == 1
    assert options().score_precision == "float32"
    assert options(k=10).k == (10,)


# -- statistics: rows, totals, shards -----------------------------------------------------------------------


def test_totals_rows_and_shards_agree_exactly() -> None:
    run, qrels = generated_case(77, queries=300)
    paired = pair_queries(run, qrels)
    opts = options()
    schema = ranking_schema(METRIC, opts)
    signature = opts.stats_signature()
    rows = ranking_rows(paired.runs, paired.qrels, opts)
    one_shot = ranking_totals(paired.runs, paired.qrels, opts)
    assert schema.totals_of_rows(rows, signature) == one_shot
    assert schema.totals([schema.record(row, signature) for row in rows]) == one_shot
    bounds = [0, 1, 37, 120, 121, len(rows)]
    shards = [ranking_totals(paired.runs[a:b], paired.qrels[a:b], opts) for a, b in zip(bounds, bounds[1:])]
    merged = schema.merge(*reversed(shards))
    assert merged == one_shot
    assert ranking_from_totals(merged, opts) == ranking_from_totals(one_shot, opts)


@pytest.mark.parametrize("measures", [("mrr",), ("map",), ("precision",), ("recall",), ("ndcg",),
                                      ("mrr", "ndcg"), ("precision", "recall", "ndcg")])
def test_options_with_fewer_measures_compute_and_keep_only_those(measures: tuple[str, ...]) -> None:
    """Options naming fewer measures (a module's: the one it reports) give those measures' statistics, rows, totals
    and outputs, each equal to the one computed with every measure."""
    from dataclasses import dataclass

    run, qrels = generated_case(31, queries=120)
    paired = pair_queries(run, qrels)
    given = {"k": (1, 5, 100), "relevance_level": 2}
    every = options(**given)
    fewer = dataclass(frozen=True)(type("Fewer", (RankingOptions,), {"measures": measures})).resolve(METRIC, given)
    assert every.measures == MEASURES and fewer.measures == measures
    schema, every_schema = ranking_schema(METRIC, fewer), ranking_schema(METRIC, every)
    cut = {"mrr": ["recip_rank"], "map": ["map"], **{name: [f"{trec}_{k}" for k in (1, 5, 100)] for name, trec in
                                                        (("precision", "P"), ("recall", "recall"), ("ndcg", "ndcg_cut"))}}
    assert schema.names == (*(field for name in MEASURES if name in measures for field in cut[name]), "queries")
    rows, every_rows = ranking_rows(paired.runs, paired.qrels, fewer), ranking_rows(paired.runs, paired.qrels, every)
    kept = [every_schema.position(name) for name in schema.names]
    assert rows == [tuple(row[position] for position in kept) for row in every_rows]
    totals, every_totals = (ranking_totals(paired.runs, paired.qrels, chosen) for chosen in (fewer, every))
    assert all(totals[name] == every_totals[name] for name in totals if name != "__signature__")
    result, every_result = ranking_from_totals(totals, fewer), ranking_from_totals(every_totals, every)
    assert result == {name: value for name, value in every_result.items()
                      if name == "num_queries" or name.split("@")[0] in measures}


def test_statistics_with_other_options_never_merge() -> None:
    schema = ranking_schema(METRIC, options(k=(1,)))
    first = ranking_totals([{"a": 1.0}], [{"a": 1}], options(k=(1,)))
    second = ranking_totals([{"a": 1.0}], [{"a": 1}], options(k=(1,), relevance_level=2))
    with pytest.raises(ValueError, match="different options"):
        schema.merge(first, second)


def test_rows_are_one_per_query_in_order() -> None:
    opts = options(k=(1,))
    rows = ranking_rows([{"a": 1.0}, {"a": 1.0, "b": 2.0}, {}], [{"a": 1}, {"a": 1}, {"a": 1}], opts)
    assert [row[0] for row in rows] == [1.0, 0.5, 0.0] and [row[-1] for row in rows] == [1, 1, 1]
    assert ranking_rows([], [], opts) == []
    # A query without judgements (empty qrels) is skipped by trec_eval: zeros, and a count of 0.
    rows = ranking_rows([{"a": 1.0}, {"a": 1.0}], [{"a": 1}, {}], opts)
    assert rows[1] == (0.0,) * 5 + (0,)
    schema = ranking_schema(METRIC, opts)
    totals = schema.totals_of_rows(rows, opts.stats_signature())
    assert totals == ranking_totals([{"a": 1.0}, {"a": 1.0}], [{"a": 1}, {}], opts)
    assert ranking_from_totals(totals, opts)["mrr"] == 1.0 and ranking_from_totals(totals, opts)["num_queries"] == 1
    with pytest.raises(ValueError, match="no queries with both a ranking and relevance judgements"):
        ranking_from_totals(ranking_totals([{"a": 1.0}], [{}], opts), opts)


# -- TREC files ---------------------------------------------------------------------------------------------


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@oracle
def test_readers_and_parity_through_files(tmp_path) -> None:
    run, qrels = generated_case(3, queries=60)
    run_lines = ["# a comment", ""]
    for qid, ranking in run.items():
        for rank, (doc, score) in enumerate(ranking.items(), start=1):
            run_lines.append(f"{qid}\tQ0  {doc} {rank} {float(score)!r} tag extra-field")
    qrels_lines = [f"{qid} 0 {doc} {grade}" for qid, judged in qrels.items() for doc, grade in judged.items()]
    run_path = write(tmp_path, "run.txt", "\n".join(run_lines))  # no final newline
    qrels_path = write(tmp_path, "qrels.txt", "\n".join(qrels_lines) + "\n\n")
    read_run, read_qrels = read_trec_run(run_path), read_trec_qrels(qrels_path)
    assert read_run == {qid: {doc: float(score) for doc, score in r.items()} for qid, r in run.items() if r}
    assert read_qrels == {qid: judged for qid, judged in qrels.items() if judged}
    theirs = pytrec_per_query(read_run, read_qrels, (1, 10))
    assert compare(our_per_query(read_run, read_qrels, options(k=(1, 10))), theirs) <= TOLERANCE


@pytest.mark.parametrize(("text", "message"), [
    ("q1 Q0 d1 1 0.5 tag\nq1 Q0 d2 2 0.4\n", r"run\.txt:2: malformed line: expected at least 6 fields"),
    ("q1 Q0 d1 1 high tag\n", r"run\.txt:1: the score \(fifth field\) 'high' is not a number"),
    ("\n# c\nq1 Q0 d1 1 nan tag\n", r"run\.txt:3: the score \(fifth field\) is NaN"),
    ("q1 Q0 d1 1 0.5 t\nq2 Q0 d1 1 0.5 t\nq1 Q0 d1 3 0.2 t\n", r"run\.txt:3: duplicate document 'd1' for query 'q1' "
                                                              r"\(first at line 1\)"),
])
def test_run_reader_errors(tmp_path, text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        read_trec_run(write(tmp_path, "run.txt", text))


@pytest.mark.parametrize(("text", "message"), [
    ("q1 0 d1 1\nq1 0 d2\n", r"qrels\.txt:2: malformed line: expected exactly 4 fields"),
    ("q1 0 d1 1 extra\n", r"qrels\.txt:1: malformed line: expected exactly 4 fields"),
    ("q1 0 d1 1.0\n", r"qrels\.txt:1: the relevance grade \(fourth field\) '1.0' is not an integer"),
    ("q1 0 d1 1\n\nq1 0 d1 2\n", r"qrels\.txt:3: duplicate document 'd1' for query 'q1' \(first at line 1\)"),
])
def test_qrels_reader_errors(tmp_path, text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        read_trec_qrels(write(tmp_path, "qrels.txt", text))


def test_reader_rejects_bytes_that_are_not_utf8(tmp_path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_bytes(b"q1 0 d1 1\nq1 0 d\xff 1\n")
    with pytest.raises(ValueError, match=r"qrels\.txt:2: not UTF-8"):
        read_trec_qrels(path)


# -- bad input ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("runs", "qrels", "error", "message"), [
    (None, [], TypeError, r"`runs` is None"),
    ({"q1": {"a": 1.0}}, [{"a": 1}], TypeError, r"`runs` must be a list with one mapping per query.*pair_queries"),
    ([{"a": 1.0}], {"q1": {"a": 1}}, TypeError, r"`qrels` must be a list with one mapping per query"),
    ([{}, {}, {}, [("a", 1.0)]], [{}] * 4, TypeError, r"`runs\[3\]` must be a mapping of document id -> score"),
    ([{}, None], [{}] * 2, TypeError, r"`runs\[1\]` must be a mapping"),
    ([{"a": 1.0}], [{"a": 1}, {"b": 1}], ValueError, r"got 1 runs but 2 qrels"),
    ([{"a": 1.0}, {"a": 1.0, "b": "0.5"}], [{}] * 2, TypeError, r"`runs\[1\]\['b'\]` must be a number.*str"),
    ([{"a": True}], [{}], TypeError, r"`runs\[0\]\['a'\]` must be a number.*bool"),
    ([{"a": None}], [{}], TypeError, r"`runs\[0\]\['a'\]` must be a number.*NoneType"),
    ([{}, {"a": 1.0, "b": math.nan}], [{}] * 2, ValueError, r"`runs\[1\]\['b'\]` is NaN"),
    ([{"a": 1.0}, {"a": 10**400}], [{}] * 2, ValueError, r"`runs\[1\]\['a'\]` .* cannot be a score"),
    ([{"a": 1.0, 7: 2.0}], [{}], TypeError, r"`runs\[0\]` has the document id 7 of type int"),
    ([{"a": 1.0}], [{"a": 1.0}], TypeError, r"`qrels\[0\]\['a'\]` must be an integer relevance grade.*float"),
    ([{"a": 1.0}], [{"a": True}], TypeError, r"`qrels\[0\]\['a'\]` must be an integer.*bool"),
    ([{}, {}], [{}, {"a": "1"}], TypeError, r"`qrels\[1\]\['a'\]` must be an integer"),
    ([{"a": 1.0}], [{"a": 2**70}], ValueError, r"`qrels\[0\]\['a'\]` = 1180591620717411303424 is out of range"),
    ([{"a": 1.0}], [{("a",): 1}], TypeError, r"`qrels\[0\]` has the document id \('a',\) of type tuple"),
])
def test_bad_input(runs: Any, qrels: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        ranking_rows(runs, qrels, options())


def test_numpy_numbers_are_accepted() -> None:
    rows = ranking_rows([{"a": np.float32(2.0), "b": np.int64(1)}], [{"b": np.int32(2)}], options(k=(1,)))
    assert rows[0][0] == 0.5


@pytest.mark.parametrize(("given", "error", "message"), [
    ({"k": 0}, ValueError, r"`k\[0\]` must be at least 1"),
    ({"k": []}, ValueError, r"`k` is empty"),
    ({"k": "10"}, TypeError, r"`k` must be a cut-off or a list of cut-offs"),
    ({"k": [5, 5]}, ValueError, r"`k` repeats a cut-off"),
    ({"k": [1, True]}, TypeError, r"`k\[1\]` must be a positive integer"),
    ({"k": [1.5]}, TypeError, r"`k\[0\]` must be a positive integer"),
    ({"relevance_level": 0}, ValueError, r"`relevance_level` must be at least 1"),
    ({"relevance_level": 1.0}, TypeError, r"`relevance_level` must be an integer"),
    ({"score_precision": "half"}, ValueError, r"unknown `score_precision` 'half'"),
    ({"cutoffs": [1]}, TypeError, r"unknown options \['cutoffs'\]"),
])
def test_bad_options(given: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        options(**given)


def test_empty_corpus_is_an_error() -> None:
    opts = options()
    with pytest.raises(ValueError, match="no queries to score"):
        ranking_totals([], [], opts)
    with pytest.raises(ValueError, match="no queries with both a ranking and relevance judgements"):
        ranking_from_totals({"queries": 0}, opts)


@pytest.mark.parametrize(("run", "qrels", "error", "message"), [
    ([{"a": 1.0}], {}, TypeError, r"`run` must be a mapping of query id"),
    ({"q1": {"a": 1.0}}, {"q1": [("a", 1)]}, TypeError, r"`qrels\['q1'\]` must be a mapping"),
    ({1: {"a": 1.0}}, {}, TypeError, r"`run` has the query id 1 of type int"),
])
def test_pairing_bad_input(run: Any, qrels: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        pair_queries(run, qrels)


def test_checked_columns_carry_their_values() -> None:
    """The input check hands its flat scores and grades to the scorer (``Flattened``); they are the values read
    again from the dicts, and the totals are the same either way."""
    from metrics._core.core_ranking_checks import Flattened
    from metrics._core.core_ranking_inputs import check_qrels, check_runs

    runs = check_runs("m", [{"a": 2, "b": 0.5}, ["x", "y"], {"ids": ["c"], "scores": [-math.inf]}])
    qrels = check_qrels("m", [{"a": 1, "b": 0}, ["y"], {"ids": ["c"], "grades": [3]}])
    assert isinstance(runs, Flattened) and isinstance(qrels, Flattened)
    assert runs.values.tolist() == [2.0, 0.5, 2.0, 1.0, -math.inf] == [v for run in runs for v in run.values()]
    assert qrels.values.tolist() == [1, 0, 1, 3] and qrels.values.dtype == np.int64
    assert all(type(v) is float for run in runs for v in run.values())
    opts = options(k=(1, 2))
    assert ranking_totals(runs, qrels, opts, checked=True) == ranking_totals(list(runs), list(qrels), opts)
    assert not isinstance(check_qrels("m", [{"a": 2**64}]), Flattened)  # beyond int64: the scorer names it
    with pytest.raises(ValueError, match="out of range"):
        ranking_totals(runs[:1], check_qrels("m", [{"a": 2**64}]), opts, checked=True)
    with pytest.raises(ValueError, match="NaN"):
        check_runs("m", [{"a": math.nan}])


def test_runs_and_qrels_checked_together_find_each_judged_score() -> None:
    """Plain runs and qrels are checked together, a block of queries at a time, and the qrels carry each judged
    document's score in its run (NaN where the run lacks it), read while both were in the cache."""
    from metrics._core.core_ranking_checks import Flattened
    from metrics._core.core_ranking_inputs import RANKINGS

    checked = RANKINGS.check("m", {"predictions": [{"a": 2, "b": 0.5}, ["x", "y"], {}],
                                   "references": [{"b": 1, "c": 0}, {"ids": ["y", "x"], "grades": [2, -1]}, {}]})
    runs, qrels = checked["predictions"], checked["references"]
    assert isinstance(runs, Flattened) and isinstance(qrels, Flattened)
    assert runs.values.tolist() == [2.0, 0.5, 2.0, 1.0] and runs[0] == {"a": 2.0, "b": 0.5}
    assert qrels.values.tolist() == [1, 0, 2, -1] and qrels.ids == ["b", "c", "y", "x"]
    assert np.array_equal(qrels.found, [0.5, math.nan, 1.0, 2.0], equal_nan=True)
    # Anything the whole-column passes do not take goes through the separate checks, as before.
    checked = RANKINGS.check("m", {"predictions": [{"a": np.float32(1.5)}], "references": [{"a": 1}]})
    assert checked["references"].found is None and checked["predictions"][0] == {"a": 1.5}
    with pytest.raises(ValueError, match="NaN"):
        RANKINGS.check("m", {"predictions": [{"a": math.nan}], "references": [{"a": 1}]})


@oracle
def test_parity_when_checked_together(monkeypatch) -> None:
    """Scores found by the joint check (blocks of about 20 run documents here, so that blocks end anywhere and a
    query longer than a block is a block of its own) rank as pytrec_eval ranks: ties by document id, float32 ties,
    integers, empty runs and qrels, non-ASCII ids."""
    from metrics._core import core_ranking_inputs
    from metrics._core.core_ranking_inputs import RANKINGS

    monkeypatch.setattr(core_ranking_inputs, "_BLOCK_DOCUMENTS", 20)
    together = 0
    for seed in range(40):
        run, qrels = generated_case(seed)
        if seed % 4:  # numpy scores go through the separate checks; Python's float takes the joint one
            run = {qid: {doc: float(score) if isinstance(score, np.generic) else score
                         for doc, score in ranking.items()} for qid, ranking in run.items()}
        cutoffs, level = CONFIGS[seed % len(CONFIGS)]
        opts = options(k=cutoffs, relevance_level=level)
        theirs = pytrec_per_query(run, qrels, cutoffs, level)
        paired = pair_queries(run, qrels)
        checked = RANKINGS.check(METRIC, {"predictions": paired.runs, "references": paired.qrels})
        together += checked["references"].found is not None
        columns = ranking_columns(checked["predictions"], checked["references"], opts.k, opts.relevance_level,
                                  opts.score_precision, METRIC, checked=True).columns()
        ours = {qid: {name: float(column[i]) for name, column in zip(trec_names(opts.k), columns)}
                for i, qid in enumerate(paired.query_ids)}
        assert compare(ours, theirs) <= TOLERANCE, f"seed {seed}"
    assert together == 30
