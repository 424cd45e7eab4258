"""Issue 32, requirements 1 and 3, for the table metrics: classification, ranking, correlation, seqeval,
meta-evaluation and agreement.

- ranking: ``max_cutoff_values`` (queries x cut-offs of a batch) refuses early, names the batch, the sizes and the
  option, and changes no result at or below the bound;
- meta_evaluation and agreement: ``max_resample_work`` counts the bootstrap's real work (resamples x rows or
  ratings x the coefficients' or levels' cost), refuses before any resample, also from merged statistics, and
  changes no result below the bound;
- the algorithms that were avoidably quadratic, now linear or n log^2 n, against plain implementations of their
  definitions: WMT's relative-ranking pairs (meta_evaluation), seqeval's sparse counts of non-entity tags and
  prefixes, the multi-label Matthews coefficient per column (scikit-learn's ``matthews_corrcoef``).
"""

from __future__ import annotations

import random
import time
from collections import Counter

import numpy as np
import pytest

from conftest import load_metric
from metrics._core import core_meta_pairs
from metrics._core.core_agreement import agreement_batch_totals, agreement_from_totals
from metrics._core.core_agreement_options import AgreementOptions
from metrics._core.core_classification import (
    MatthewsCorrelationOptions, _confusion_of_cells, _label_columns, _mcc, classification_batch_totals,
    matthews_correlation_from_totals, resolve_options,
)
from metrics._core.core_seqeval import SeqevalOptions, seqeval_batch_totals, seqeval_counts, seqeval_rows

RANKING = ("map", "mrr", "ndcg", "precision_at_k", "recall_at_k")


# -- ranking: queries x cut-offs ---------------------------------------------------------------------------------


def _queries(count: int) -> tuple[list[dict[str, float]], list[dict[str, int]]]:
    rng = random.Random(7)
    runs = [{f"d{j}": rng.random() for j in range(8)} for _ in range(count)]
    qrels = [{f"d{j}": rng.randint(0, 2) for j in range(0, 8, 2)} for _ in range(count)]
    return runs, qrels


@pytest.mark.parametrize("module", RANKING)
def test_ranking_refuses_queries_times_cutoffs_above_the_bound(module: str) -> None:
    metric = load_metric(module)
    runs, qrels = _queries(6)
    with pytest.raises(ValueError) as caught:
        metric.compute(predictions=runs, references=qrels, k=[1, 2, 3, 4, 5], max_cutoff_values=29)
    message = str(caught.value)
    assert message.startswith(f"{module}: predictions[0:6] holds 6 queries, each scored at 5 cut-offs")
    assert "queries x cut-offs: 30, more than max_cutoff_values=29;" in message
    assert "use fewer cut-offs" in message


@pytest.mark.parametrize("module", RANKING)
def test_ranking_at_the_bound_changes_nothing(module: str) -> None:
    metric = load_metric(module)
    runs, qrels = _queries(6)
    free = metric.compute(predictions=runs, references=qrels, k=[1, 2, 3, 4, 5], per_query=True)
    bounded = metric.compute(predictions=runs, references=qrels, k=[1, 2, 3, 4, 5], per_query=True,
                             max_cutoff_values=30)
    assert bounded == free


def test_ranking_bound_is_per_streamed_batch() -> None:
    metric = load_metric("ndcg")  # shared by the session: its batch size and kept examples are restored below
    metric.stream_batch_size = 4
    try:
        runs, qrels = _queries(10)
        whole = metric.compute(predictions=runs, references=qrels, k=[1, 3])
        metric.add_batch(predictions=runs, references=qrels)
        assert metric.compute(k=[1, 3], max_cutoff_values=8) == whole  # batches of 4 queries x 2 cut-offs
        metric.add_batch(predictions=runs, references=qrels)
        with pytest.raises(ValueError, match=r"predictions\[0:4\] holds 4 queries.*max_cutoff_values=7"):
            metric.compute(k=[1, 3], max_cutoff_values=7)
        assert metric.compute(k=[1, 3]) == whole  # the refused examples were kept, and are scored now
    finally:
        metric.stream_batch_size = type(metric).stream_batch_size


# -- meta_evaluation: the bootstrap's work, and WMT's relative-ranking pairs --------------------------------------


def _meta_rows(systems: int, items: int, seed: int = 0) -> dict[str, list]:
    rng = np.random.default_rng(seed)
    human = rng.normal(size=systems * items) * 30
    return {"predictions": (human + rng.normal(size=systems * items) * 30).tolist(), "references": human.tolist(),
            "systems": [f"s{i % systems}" for i in range(systems * items)],
            "items": [f"i{i // systems}" for i in range(systems * items)]}


@pytest.mark.parametrize(("options", "cost"), [({}, 7), ({"grouping": "none"}, 41), ({"level": "turn"}, 18),
                                               ({"level": "system"}, 1), ({"level": ["system", "turn"]}, 19)])
def test_meta_evaluation_refuses_the_bootstrap_by_its_work(options: dict, cost: int) -> None:
    metric = load_metric("meta_evaluation")
    rows = _meta_rows(4, 10)
    work = 50 * 40 * cost
    with pytest.raises(ValueError) as caught:
        metric.compute(**rows, confidence=True, n_bootstrap=50, max_resample_work=work - 1, **options)
    message = str(caught.value)
    assert message.startswith("meta_evaluation: the bootstrap interval (confidence=True) recomputes 1 metric-human "
                              "correlation(s) on 40 rows 50 times")
    assert f": {work:,}, more than max_resample_work={work - 1:,};" in message
    assert "lower n_bootstrap" in message
    free = metric.compute(**rows, confidence=True, n_bootstrap=50, **options)
    assert metric.compute(**rows, confidence=True, n_bootstrap=50, max_resample_work=work, **options) == free


def test_meta_evaluation_bootstrap_work_counts_every_correlation_and_merged_statistics() -> None:
    metric = load_metric("meta_evaluation")
    rows = _meta_rows(4, 10)
    others = {"other_metrics": {"m2": rows["predictions"][::-1]}, "qualities": {"Natural": rows["references"][::-1]}}
    work = 20 * 40 * 4 * 7  # 2 metrics x 2 human qualities, system (1) and segment by item (6)
    with pytest.raises(ValueError, match=f"recomputes 4 metric-human correlation.*: {work:,}, more than"):
        metric.compute(**rows, **others, confidence=True, n_bootstrap=20, max_resample_work=work - 1)
    stats = metric.example_stats(**rows, confidence=True, n_bootstrap=20)
    totals = metric.reduce_stats(stats, confidence=True, n_bootstrap=20)
    with pytest.raises(ValueError, match="max_resample_work=5,599"):
        metric.compute_from_stats(totals, confidence=True, n_bootstrap=20, max_resample_work=5_599)
    assert (metric.compute_from_stats(totals, confidence=True, n_bootstrap=20, max_resample_work=5_600)
            == metric.compute(**rows, confidence=True, n_bootstrap=20))


def _darr_definition(groups, metric, human, threshold):
    """WMT's relative-ranking pairs by their definition: every pair of rows of one group, one by one."""
    concordant, discordant = Counter(), Counter()
    rows = list(zip(groups.tolist(), metric.tolist(), human.tolist()))
    for a in range(len(rows)):
        for b in range(a + 1, len(rows)):
            (g, m1, h1), (g2, m2, h2) = rows[a], rows[b]
            if g != g2 or not abs(h1 - h2) > threshold:
                continue
            if (m1 > m2 and h1 > h2) or (m1 < m2 and h1 < h2):
                concordant[g] += 1
            else:
                discordant[g] += 1
    return concordant, discordant


@pytest.mark.parametrize("seed", range(12))
def test_relative_ranking_pairs_counted_without_listing_them(seed: int) -> None:
    rng = np.random.default_rng(seed)
    size, n_groups = int(rng.integers(2, 90)), int(rng.integers(1, 4))
    groups = rng.integers(0, n_groups, size)
    if seed % 3 == 0:  # ties everywhere
        metric, human, threshold = rng.integers(0, 4, size) * 1.0, rng.integers(0, 6, size) * 10.0, 10.0
    elif seed % 3 == 1:  # differences at the threshold, in float arithmetic (0.3 - 0.2 is not 0.1)
        metric = rng.integers(0, 3, size) * 0.1
        human, threshold = rng.choice([0.1, 0.2, 0.3, 0.30000000000000004, 0.7], size), 0.1
    else:
        metric, human, threshold = rng.normal(size=size), rng.normal(size=size) * 30, 25.0
    concordant, discordant = _darr_definition(groups, metric, human, threshold)
    expected = ([concordant[g] for g in range(n_groups)], [discordant[g] for g in range(n_groups)])
    for method in (core_meta_pairs._darr_counted, core_meta_pairs._darr_listed, core_meta_pairs.darr_counts):
        got = method(groups, n_groups, metric, human, threshold)
        assert (got[0].tolist(), got[1].tolist()) == expected


def test_relative_ranking_pairs_of_many_systems_are_not_quadratic() -> None:
    rng = np.random.default_rng(3)
    size = 100_000  # one item: 5e9 pairs, hours when listed
    human = rng.normal(size=size) * 30
    start = time.monotonic()
    concordant, discordant = core_meta_pairs.darr_counts(np.zeros(size, dtype=np.int64), 1,
                                                         human + rng.normal(size=size) * 30, human, 25.0)
    assert time.monotonic() - start < 20
    assert 0 < int(concordant[0] + discordant[0]) < size * (size - 1) // 2


# -- agreement: the bootstrap's work -----------------------------------------------------------------------------


def _ratings(items: int, annotators: int) -> dict[str, list]:
    rng = np.random.default_rng(1)
    return {"items": [f"i{i // annotators}" for i in range(items * annotators)],
            "annotators": [f"a{i % annotators}" for i in range(items * annotators)],
            "labels": rng.integers(0, 4, items * annotators).tolist()}


@pytest.mark.parametrize(("options", "cost"), [({}, 2), ({"level_of_measurement": "ordinal"}, 4),
                                               ({"coefficients": ["leave_one_out_spearman"]}, 6),
                                               ({"coefficients": ["fleiss_kappa", "pairwise_pearson"]}, 7)])
def test_agreement_refuses_the_bootstrap_by_its_work(options: dict, cost: int) -> None:
    metric = load_metric("agreement")
    ratings = _ratings(12, 3)
    work = 30 * 36 * cost
    with pytest.raises(ValueError) as caught:
        metric.compute(**ratings, confidence=True, n_bootstrap=30, max_resample_work=work - 1, **options)
    message = str(caught.value)
    assert message.startswith("agreement: the bootstrap interval (confidence=True) recomputes")
    assert "on 36 ratings 30 times" in message and f": {work:,}, more than max_resample_work={work - 1:,};" in message
    free = metric.compute(**ratings, confidence=True, n_bootstrap=30, **options)
    assert metric.compute(**ratings, confidence=True, n_bootstrap=30, max_resample_work=work, **options) == free


def test_agreement_bootstrap_from_merged_statistics_is_checked() -> None:
    ratings = _ratings(12, 3)
    totals = agreement_batch_totals(ratings, "agreement")
    options = AgreementOptions.resolve("agreement", {"confidence": True, "n_bootstrap": 30,
                                                     "max_resample_work": 30 * 36 * 2 - 1})
    with pytest.raises(ValueError, match="on 36 ratings 30 times.*max_resample_work=2,159"):
        agreement_from_totals("agreement", totals, options)


# -- seqeval: sparse counts of tags and prefixes -----------------------------------------------------------------


def _tag_sequences(count: int, seed: int) -> tuple[list[list[str]], list[list[str]]]:
    rng = random.Random(seed)
    tags = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "E-LOC", "S-ORG", "X", "Y-1", "PER", "I-X", "-", "B"]
    references, predictions = [], []
    for _ in range(count):
        length = rng.randint(0, 8)
        references.append([rng.choice(tags) for _ in range(length)])
        predictions.append([rng.choice(tags) for _ in range(length)])
    return predictions, references


def _non_entity(tag: str) -> bool:
    return not (tag in ("O", "B", "I", "E", "S") or tag.startswith(("B-", "I-", "E-", "S-")))


@pytest.mark.parametrize("seed", range(5))
def test_seqeval_non_entity_tags_counted_sparsely(seed: int) -> None:
    predictions, references = _tag_sequences(60, seed)
    options = SeqevalOptions.resolve("seqeval", {})
    counts = seqeval_counts(predictions, references, options)
    rows = seqeval_rows(counts, options)
    for row, prediction, reference in zip(rows, predictions, references, strict=True):
        assert row[5] == dict(Counter(tag for tag in [*reference, *prediction] if _non_entity(tag)))
    totals = seqeval_batch_totals(counts, options, "s")
    assert totals["non_entity_tags"] == dict(Counter(tag for sequence in [*references, *predictions]
                                                     for tag in sequence if _non_entity(tag)))


@pytest.mark.parametrize("seed", range(5))
def test_seqeval_strict_prefixes_counted_sparsely(seed: int) -> None:
    rng = random.Random(seed)
    tags = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "E-LOC", "S-ORG", "U-MISC", "L-MISC"]
    references = [[rng.choice(tags) for _ in range(rng.randint(0, 7))] for _ in range(50)]
    predictions = [[rng.choice(tags) for _ in sequence] for sequence in references]
    options = SeqevalOptions.resolve("seqeval", {"mode": "strict"})
    counts = seqeval_counts(predictions, references, options)
    rows = seqeval_rows(counts, options)
    allowed = {"IOB2": "IOB", "IOE2": "IOE", "IOBES": "IOBES", "BILOU": "BILOU"}
    for row, prediction, reference in zip(rows, predictions, references, strict=True):
        assert row[6] == dict(Counter(tag[0] for tag in reference))
        assert row[7] == dict(Counter((scheme, tag[0]) for scheme, letters in allowed.items()
                                      for tag in prediction if tag[0] not in letters))
    totals = seqeval_batch_totals(counts, options, "s")
    assert totals["reference_prefixes"] == dict(Counter(tag[0] for sequence in references for tag in sequence))


def test_seqeval_many_distinct_tags_are_linear() -> None:
    count = 20_000  # a dense count per tag and sentence: 20,000 x 20,000 int64, 3.2 GB
    predictions = [["B-PER", "I-PER", f"X{i}"] for i in range(count)]
    references = [["B-PER", "I-PER", "O"] for _ in range(count)]
    metric = load_metric("seqeval")
    start = time.monotonic()
    with pytest.warns(UserWarning, match="20000 tags seem not to be NE tags"):
        result = metric.compute(predictions=predictions, references=references)
    assert time.monotonic() - start < 20
    assert result["PER"]["f1"] == 1.0 and result["overall_accuracy"] == 2 / 3


# -- the multi-label Matthews coefficient ------------------------------------------------------------------------


def test_multilabel_matthews_per_column_is_scikit_learns() -> None:
    from sklearn.metrics import matthews_corrcoef

    rng = np.random.default_rng(5)
    predictions, references = rng.integers(0, 2, (300, 400)), rng.integers(0, 2, (300, 400))
    references[:, 7] = 1  # a constant column: 0.0
    options = resolve_options(MatthewsCorrelationOptions, multilabel=True)
    totals = classification_batch_totals(predictions, references, options)
    per_column = matthews_correlation_from_totals(totals, options)["matthews_correlation"]
    expected = [matthews_corrcoef(references[:, column], predictions[:, column]) for column in range(400)]
    assert per_column == pytest.approx(expected, abs=1e-12)
    columns = _label_columns("matthews_correlation", totals)
    assert per_column == [_mcc(_confusion_of_cells("m", *columns.column_cells(column))) for column in range(400)]
    weighted = resolve_options(MatthewsCorrelationOptions, multilabel=True, sample_weight=rng.random(300) * 3)
    totals = classification_batch_totals(predictions, references, weighted, sample_weight=weighted.sample_weight)
    columns = _label_columns("matthews_correlation", totals)
    assert (matthews_correlation_from_totals(totals, weighted)["matthews_correlation"]
            == [_mcc(_confusion_of_cells("m", *columns.column_cells(column))) for column in range(400)])


def test_multilabel_matthews_of_many_columns_is_linear() -> None:
    rng = np.random.default_rng(6)
    predictions, references = rng.integers(0, 2, (50, 20_000)), rng.integers(0, 2, (50, 20_000))
    options = resolve_options(MatthewsCorrelationOptions, multilabel=True)
    totals = classification_batch_totals(predictions, references, options)
    start = time.monotonic()
    values = matthews_correlation_from_totals(totals, options)["matthews_correlation"]
    assert time.monotonic() - start < 15  # one scan of the cells per column: 20,000 x 80,000, minutes
    assert len(values) == 20_000
