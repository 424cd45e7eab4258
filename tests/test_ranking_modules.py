"""The five ranking modules (mrr, map, precision_at_k, recall_at_k, ndcg) through evaluate's loader, against
pytrec_eval (trec_eval 9) on generated runs and qrels: every measure per query and as means, through
``compute``, ``add_batch`` + ``compute`` (evaluate's cache) and ``datasets.Dataset.map`` statistics merged by
``compute_from_stats``; the three input forms; what each module reports; the TREC files through the
command-line scorer."""

from __future__ import annotations

import math
from collections import OrderedDict

import pytest

from conftest import load_metric
from score_cli import score_in_this_process
from test_ranking_core import generated_case, oracle, pytrec_per_query

MODULES = {"mrr": ("recip_rank", False), "map": ("map", False), "precision_at_k": ("P", True),
           "recall_at_k": ("recall", True), "ndcg": ("ndcg_cut", True)}
OUTPUT_PREFIX = {"mrr": "mrr", "map": "map", "precision_at_k": "precision", "recall_at_k": "recall", "ndcg": "ndcg"}
CUTOFFS = (1, 3, 10)


def aligned(run: dict, qrels: dict) -> tuple[list[str], list[dict], list[dict]]:
    """The queries trec_eval scores (in both, with judgements), as aligned columns."""
    queries = sorted(query for query in run if qrels.get(query))
    return queries, [run[query] for query in queries], [qrels[query] for query in queries]


def expected(name: str, theirs: dict[str, dict], queries: list[str]) -> dict[str, list[float]]:
    measure, cut = MODULES[name]
    prefix = OUTPUT_PREFIX[name]
    if not cut:
        return {prefix: [theirs[query][measure] for query in queries]}
    return {f"{prefix}@{k}": [theirs[query][f"{measure}_{k}"] for query in queries] for k in CUTOFFS}


@oracle
@pytest.mark.parametrize("name", MODULES)
def test_module_equals_pytrec_eval(name: str) -> None:
    metric = load_metric(name)
    for seed in range(6):
        run, qrels = generated_case(1000 + seed)
        queries, runs, judgements = aligned(run, qrels)
        theirs = expected(name, pytrec_per_query(run, qrels, CUTOFFS), queries)
        ours = metric.compute(predictions=runs, references=judgements, k=list(CUTOFFS), per_query=True)
        assert ours["num_queries"] == len(queries)
        for key, values in theirs.items():
            assert ours[f"per_query_{key}"] == values, (seed, key)  # bit-identical
            assert ours[key] == pytest.approx(sum(values) / len(values), abs=1e-12), (seed, key)
        assert set(ours) == {"num_queries", *theirs, *(f"per_query_{key}" for key in theirs)}


@oracle
def test_cache_and_map_statistics_give_the_same_result() -> None:
    import datasets

    metric = load_metric("ndcg")
    run, qrels = generated_case(77)
    _, runs, judgements = aligned(run, qrels)
    one_shot = metric.compute(predictions=runs, references=judgements, k=list(CUTOFFS))
    for start in range(0, len(runs), 7):
        metric.add_batch(predictions=runs[start:start + 7], references=judgements[start:start + 7])
    assert metric.compute(k=list(CUTOFFS)) == one_shot
    stored = metric.inputs.stored(metric.inputs.check("ndcg", {"predictions": runs, "references": judgements}))
    stats = datasets.Dataset.from_dict(stored).map(
        lambda batch: metric.example_stats(batch["predictions"], batch["references"], k=list(CUTOFFS)),
        batched=True, batch_size=5, remove_columns=["predictions", "references"])
    assert metric.compute_from_stats(stats, k=list(CUTOFFS)) == one_shot


def test_each_module_keeps_only_its_own_statistics() -> None:
    """A module's per-query statistics are its measure's values (one per cut-off for a cut-off measure) and the
    query count: d1 retrieved at rank 2 of 2, one relevant document of two judged."""
    runs, qrels = [{"d0": 2.0, "d1": 1.0}, {"d5": 1.0}], [{"d1": 1, "d9": 0}, {}]
    expected = {"mrr": {"recip_rank": [0.5, 0.0]}, "map": {"map": [0.5, 0.0]},
                "precision_at_k": {"P_1": [0.0, 0.0], "P_3": [1 / 3, 0.0], "P_10": [0.1, 0.0]},
                "recall_at_k": {"recall_1": [0.0, 0.0], "recall_3": [1.0, 0.0], "recall_10": [1.0, 0.0]},
                "ndcg": {"ndcg_cut_1": [0.0, 0.0], "ndcg_cut_3": [1 / math.log2(3), 0.0],
                         "ndcg_cut_10": [1 / math.log2(3), 0.0]}}
    for name, values in expected.items():
        stats = load_metric(name).example_stats(predictions=runs, references=qrels, k=list(CUTOFFS))
        signature = stats.pop("signature")
        assert stats == {**values, "queries": [1, 0]} and len(signature) == 2, name


def test_input_forms_agree() -> None:
    """A score mapping, a ranked list and the normalised form give the same ranking (list: scores n..1)."""
    metric = load_metric("map")
    forms = [{"d3": 3.0, "d1": 2.0, "d2": 1.0}, ["d3", "d1", "d2"], {"ids": ["d3", "d1", "d2"], "scores": [3, 2, 1]}]
    qrels = [{"d1": 1, "d2": 0, "d9": 2}, ["d1", "d9"], {"ids": ["d1", "d9"], "grades": [1, 1]}]
    results = {metric.compute(predictions=[run], references=[judged])["map"] for run in forms for judged in qrels}
    assert results == {(1 / 2) / 2}  # d1 at rank 2 (precision 1/2); d9 never retrieved; two relevant


def test_every_form_is_checked_into_dicts_and_the_stored_form_reads_back() -> None:
    """Runs become {doc: float} and qrels {doc: int} dicts whatever their form, checked in whole columns (a batch
    of plain dicts and lists) or document by document (a batch holding any other mapping); evaluate's cache holds
    the stored form ({"ids", "scores"} / {"ids", "grades"}), which the check reads back to the same dicts."""
    import numpy as np

    metric = load_metric("map")
    run = {"d3": 3.0, "d1": 2.0, "d2": 1.0}
    runs = [dict(run), ["d3", "d1", "d2"], {"ids": ["d3", "d1", "d2"], "scores": [3, 2, 1]}, {"d3": 3, "d1": 2, "d2": 1},
            OrderedDict(run), {"d3": np.float32(3.0), "d1": np.float64(2.0), "d2": 1}]
    judged = {"d1": 1, "d9": 2}
    qrels = [dict(judged), {"ids": ["d1", "d9"], "grades": [1, 2]}, OrderedDict(judged), {"d1": np.int64(1), "d9": 2},
             dict(judged), dict(judged)]
    batches = [{"predictions": [given], "references": [grades]} for given, grades in zip(runs, qrels)]
    batches.append({"predictions": runs, "references": qrels})
    for batch in batches:
        checked = metric.inputs.check("map", batch)
        assert checked["predictions"] == [run] * len(batch["predictions"])
        assert checked["references"] == [judged] * len(batch["references"])
        assert {type(score) for checked_run in checked["predictions"] for score in checked_run.values()} == {float}
        assert {type(grade) for grades in checked["references"] for grade in grades.values()} == {int}
        stored = metric.inputs.stored(checked)
        assert stored["predictions"][0] == {"ids": ["d3", "d1", "d2"], "scores": [3.0, 2.0, 1.0]}
        assert metric.inputs.check("map", stored) == checked


def test_unjudged_queries_are_skipped_and_an_all_unjudged_corpus_is_an_error() -> None:
    metric = load_metric("mrr")
    result = metric.compute(predictions=[["a", "b"], ["c"]], references=[{"b": 1}, {}], per_query=True)
    assert result == {"mrr": 0.5, "num_queries": 1, "per_query_mrr": [0.5, None]}
    with pytest.raises(ValueError, match="mrr: no queries with both a ranking and relevance judgements"):
        metric.compute(predictions=[["a"]], references=[{}])


def test_ties_and_float32_scores_follow_trec_eval() -> None:
    """Equal scores rank by document id descending ("b" before "a"); 1 and 1 + 1e-12 are equal in float32."""
    metric = load_metric("mrr")
    assert metric.compute(predictions=[{"a": 1.0, "b": 1.0}], references=[{"a": 1}])["mrr"] == 0.5
    assert metric.compute(predictions=[{"a": 1.0 + 1e-12, "b": 1.0}], references=[{"a": 1}])["mrr"] == 0.5
    assert metric.compute(predictions=[{"a": 1.0 + 1e-12, "b": 1.0}], references=[{"a": 1}],
                          score_precision="float64")["mrr"] == 1.0


def test_bad_options_name_the_module() -> None:
    metric = load_metric("precision_at_k")
    with pytest.raises(ValueError, match="precision_at_k: .*k"):
        metric.compute(predictions=[["a"]], references=[["a"]], k=[0])
    with pytest.raises(ValueError, match="precision_at_k: .*relevance_level"):
        metric.compute(predictions=[["a"]], references=[["a"]], relevance_level=0)


def test_trec_files_through_the_command_line_scorer(tmp_path) -> None:
    run = tmp_path / "run.trec"
    qrels = tmp_path / "qrels.trec"
    run.write_text("q1 Q0 d1 1 0.9 sys\nq1 Q0 d2 2 0.8 sys\nq2 Q0 d5 1 0.7 sys\nq3 Q0 d1 1 0.5 sys\n",
                   encoding="utf-8")
    qrels.write_text("q1 0 d2 1\nq2 0 d5 2\nq2 0 d6 1\nq4 0 d1 1\n", encoding="utf-8")
    result = score_in_this_process(["--run", str(run), "--qrels", str(qrels), "-m", "mrr", "recall_at_k", "-o",
                                    "recall_at_k.k=[1]", "--format", "json"])
    assert result.returncode == 0, result.stderr
    import json

    scores = json.loads(result.stdout)
    # q3 has no judgements and q4 no ranking: trec_eval scores q1 (first relevant at rank 2) and q2 (rank 1)
    assert scores["mrr"] == {"mrr": 0.75, "num_queries": 2}
    assert scores["recall_at_k"] == {"recall@1": (0 + 1 / 2) / 2, "num_queries": 2}
    qrels.write_text("q1 0 d2\n", encoding="utf-8")
    broken = score_in_this_process(["--run", str(run), "--qrels", str(qrels), "-m", "mrr"])
    assert broken.returncode != 0 and f"{qrels}:1" in broken.stderr
