"""Every metric with per-example sufficient statistics, on two corpora of its input kind (real WMT17 and CNN/DM
texts for text metrics and SQuAD answers; seeded generated ones for labels, numbers and tag sequences, which
the shared data lacks): the statistics columns that datasets.Dataset.map writes reduce to exactly the one-shot
corpus result. Text metrics are mapped with 2
processes; model-based metrics (those that vendor the model loader) in-process (num_proc=None; datasets 5
starts a pool even for num_proc=1) on a subset, since forking a
process whose PyTorch thread pool is running can deadlock the child (map in-process, or one process per
device as in tests/test_distributed.py)."""

from __future__ import annotations

import gzip
import json
import math
import random
from typing import Any

import datasets
import pytest

from conftest import METRICS_DIR, SHARED_DATA, load_metric, metric_names

# MAUVE quantizes every feature at once (k-means) and offers no per-example statistics: its example_stats says so.
NO_STATISTICS = ("mauve",)
STATS_METRICS = [name for name in metric_names()
                 if hasattr(load_metric(name), "example_stats") and name not in NO_STATISTICS]


Corpus = dict[str, list[Any]]  # compute's input columns

# A correlation is one float computation over every pair: its statistics (the pairs, counted) are scored in
# sorted pair order, the one-shot compute in input order, so the two differ in the last bits (core_correlation).
SUMMATION_ORDER_TOLERANCE = {"pearsonr": 1e-12, "spearmanr": 1e-12}
# squad_v2's best no-answer threshold walks the questions in order, ties in input order (the official script's):
# mapped statistics are not enough, and compute_from_stats says so.
NEEDS_EVERY_EXAMPLE = {"squad_v2"}


@pytest.fixture(scope="module")
def text_corpora(wmt17, shared_data) -> dict[str, tuple[list[str], list[str], list[str]]]:
    """Two real corpora: (predictions, references, a second system's outputs on the same examples)."""
    references, systems = wmt17
    with gzip.open(shared_data / "cnndm-see2017" / "test.jsonl.gz", "rt", encoding="utf-8") as handle:
        records = [json.loads(line) for _, line in zip(range(2000), handle)]
    return {
        "wmt17 uedin-nmt": (systems["uedin-nmt.4722"], references, systems["online-B.0"]),
        "cnndm pointer-gen": ([r["pointer-gen"] for r in records], [r["reference"] for r in records],
                              [r["baseline"] for r in records]),
    }


def first_sentence(text: str) -> str:
    return text.split("\n")[0].split(" . ")[0]


def squad_corpus(predictions: list[str], references: list[str], others: list[str], v2: bool) -> Corpus:
    """Real answers: each prediction's first sentence against its reference's and the second system's first
    sentences as gold answers (SQuAD v2: every fifth question unanswerable, seeded no-answer probabilities)."""
    rng = random.Random(7)
    rows: Corpus = {"predictions": [], "references": []}
    for index, (prediction, reference, other) in enumerate(zip(predictions, references, others)):
        golds = [] if v2 and index % 5 == 0 else [first_sentence(reference), first_sentence(other)]
        answer = {"id": str(index), "prediction_text": first_sentence(prediction)}
        if v2:
            answer["no_answer_probability"] = rng.random()
        rows["predictions"].append(answer)
        rows["references"].append({"id": str(index), "answers": {"text": golds, "answer_start": [0] * len(golds)}})
    return rows


def generated_corpora(kind: str) -> dict[str, Corpus]:
    """Seeded corpora of 2,000 examples for the kinds no shared data holds: a balanced and a skewed one."""
    corpora = {}
    for label, skew in (("balanced", 0.5), ("skewed", 0.1)):
        rng = random.Random(f"{kind} {label}")
        if kind == "labels":  # binary, as precision/recall/f1's default average="binary" needs
            references = [int(rng.random() < skew) for _ in range(2000)]
            predictions = [r if rng.random() < 0.8 else 1 - r for r in references]
        elif kind == "number pairs":
            references = [rng.gauss(0, 1) if rng.random() > skew else float(rng.randint(-2, 2)) for _ in range(2000)]
            predictions = [r + rng.gauss(0, 1) for r in references]
        elif kind == "label sequences":
            tags = ("O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "I-MISC")
            references = [[rng.choice(tags) if rng.random() < skew + 0.2 else "O" for _ in range(rng.randint(1, 20))]
                          for _ in range(2000)]
            predictions = [[tag if rng.random() < 0.85 else rng.choice(tags) for tag in sentence]
                           for sentence in references]
        elif kind == "coreference documents":  # documents of 2-12 mentions in 1-5 entities per side
            predictions, references = [], []
            for _ in range(2000):
                starts = rng.sample(range(0, 60, 3), rng.randint(2, 12))
                mentions = [[start, start + rng.randint(0, 2)] for start in starts]
                for side in (predictions, references):
                    entities: list[list[list[int]]] = [[] for _ in range(rng.randint(1, 5))]
                    for mention in rng.sample(mentions, rng.randint(1, len(mentions))):
                        rng.choice(entities).append(mention)
                    side.append([entity for entity in entities if entity])
        elif kind == "rankings":  # runs of 30 documents, 0-8 judged with grades 0-3 (some queries unjudged)
            documents = [f"d{index}" for index in range(60)]
            predictions = [dict(zip(rng.sample(documents, 30), (rng.random() for _ in range(30))))
                           for _ in range(2000)]
            references = [dict(zip(rng.sample(documents, rng.randint(0, 8)), (rng.randint(0, 3) for _ in range(8))))
                          for _ in range(2000)]
        elif kind == "system and item scores":  # 20 systems on 100 items, DA-like human scores
            rows = [(system, item) for system in range(20) for item in range(100)]
            quality = {system: rng.gauss(60, 10 * skew + 5) for system in range(20)}
            references = [round(min(100.0, max(0.0, rng.gauss(quality[system], 20)))) for system, _ in rows]
            corpora[label] = {"predictions": [r / 100 + rng.gauss(0, 0.2) for r in references],
                              "references": references, "systems": [f"sys{system}" for system, _ in rows],
                              "items": [f"seg{item}" for _, item in rows]}
            continue
        elif kind == "ratings":  # 500 items, 5 annotators each rating 80%: the rows shuffled, so map's batches
            # (and its 2 processes) split items; labels 1-5 near each item's true grade
            cells = [(item, annotator) for item in range(500) for annotator in range(5) if rng.random() < 0.8]
            rng.shuffle(cells)
            grade = {item: rng.randint(1, 5) for item in range(500)}
            labels = [min(5, max(1, grade[item] + (rng.choice((-1, 1)) if rng.random() < skew + 0.2 else 0)))
                      for item, _ in cells]
            corpora[label] = {"items": [f"item{item}" for item, _ in cells],
                              "annotators": [f"annotator{annotator}" for _, annotator in cells], "labels": labels}
            continue
        else:
            raise KeyError(f"no map-scoring corpus for the input kind {kind!r}; add one to {__name__}")
        corpora[label] = {"predictions": predictions, "references": references}
    return corpora


def corpora_for(module: Any, text_corpora: dict) -> dict[str, Corpus]:
    """The corpora a module's input kind takes."""
    kind = module.inputs.name
    if kind in ("text pairs", "text pairs or token lists"):
        return {name: {"predictions": predictions, "references": [[reference] for reference in references]}
                for name, (predictions, references, _) in text_corpora.items()}
    if kind == "generated and human texts":  # two samples, paired only by position
        return {name: {"predictions": predictions, "references": references}
                for name, (predictions, references, _) in text_corpora.items()}
    if kind == "texts":
        return {name: {"predictions": predictions} for name, (predictions, _, _) in text_corpora.items()}
    if kind in ("sources, predictions and references", "sources and predictions, references optional"):
        # the second system's outputs stand in for sources
        return {name: {"sources": others, "predictions": predictions,
                       "references": [[reference] for reference in references]}
                for name, (predictions, references, others) in text_corpora.items()}
    if kind == "rankings":  # what the columns of a datasets.Dataset hold: the stored form
        return {name: module.inputs.stored(module.inputs.check(module.name, corpus))
                for name, corpus in generated_corpora(kind).items()}
    if kind == "contexts, facts and responses":  # the USR release's Topical-Chat responses
        records = json.loads((SHARED_DATA / "usr" / "usr_topical_chat.json").read_text(encoding="utf-8"))
        rows = [(record["context"], record["fact"], response["response"])
                for record in records for response in record["responses"]]
        return {"usr topical-chat": {"contexts": [row[0] for row in rows], "facts": [row[1] for row in rows],
                                     "predictions": [row[2] for row in rows]}}
    if kind in ("squad answers", "squad_v2 answers"):
        return {name: squad_corpus(*texts, v2=kind == "squad_v2 answers") for name, texts in text_corpora.items()}
    return generated_corpora(kind)


def test_every_corpus_metric_has_statistics() -> None:
    assert {"bleu", "sacrebleu", "rouge"} <= set(STATS_METRICS)


@pytest.mark.parametrize("name", NO_STATISTICS)
def test_metrics_without_statistics_say_so(name: str) -> None:
    with pytest.raises(ValueError, match=f"{name}: .*no per-example statistics"):
        load_metric(name).example_stats(predictions=["a text"], references=["another text"])


def uses_a_model(name: str) -> bool:
    return any((METRICS_DIR / name / f"{core}.py").is_file() for core in ("core_models", "core_lm_models"))


# Texts a model metric scores here (each a forward pass, twice: through map and through compute); perplexity's
# default model, SmolLM2-135M, costs about ten times all-MiniLM-L6-v2 per token
MODEL_CORPUS_SIZE = {"perplexity": 16}
# TER's shift search on 2,000 CNN/DailyMail summaries took a minute twice over (map and compute); the first 500
# examples of each corpus show the same reduction (the whole corpora run under `-m slow`).
TEXT_CORPUS_SIZE = {"ter": 500}


@pytest.mark.parametrize("name", STATS_METRICS)
def test_map_reduces_to_the_corpus_result(name: str, text_corpora) -> None:
    check_map_reduces_to_the_corpus_result(name, text_corpora, TEXT_CORPUS_SIZE.get(name))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TEXT_CORPUS_SIZE))
def test_map_reduces_whole_corpora_to_the_corpus_result(name: str, text_corpora) -> None:
    check_map_reduces_to_the_corpus_result(name, text_corpora, None)


def check_map_reduces_to_the_corpus_result(name: str, text_corpora, text_size: int | None) -> None:
    """Dataset.map of example_stats (two processes for text metrics), then compute_from_stats, equals compute on
    each corpus cut to ``text_size`` examples (model metrics: to their MODEL_CORPUS_SIZE)."""
    metric = load_metric(name)
    num_proc, size = (None, MODEL_CORPUS_SIZE.get(name, 64)) if uses_a_model(name) else (2, text_size)
    columns = metric.inputs.columns
    for corpus_name, corpus in corpora_for(metric, text_corpora).items():
        corpus = {column: values[:size] for column, values in corpus.items()}
        dataset = datasets.Dataset.from_dict(corpus)
        stats = dataset.map(
            lambda batch: metric.example_stats(**{column: batch[column] for column in columns}),
            batched=True,
            batch_size=300,
            num_proc=num_proc,
            remove_columns=list(columns),
        )
        assert len(stats) == len(corpus[columns[0]])
        if name in NEEDS_EVERY_EXAMPLE:
            with pytest.raises(ValueError, match="needs the inputs themselves, not only their statistics; use `compute`"):
                metric.compute_from_stats(stats)
            continue
        assert_same_corpus_result(metric.compute_from_stats(stats), metric.compute(**corpus), corpus_name,
                                  SUMMATION_ORDER_TOLERANCE.get(name, 0.0))


def assert_same_corpus_result(from_stats: dict, one_shot: dict, context: str, tolerance: float = 0.0) -> None:
    """Every output of compute_from_stats equals compute's (within ``tolerance``, relative, for floats); where
    compute returns per-example scores (model metrics), the statistics give their exact mean."""
    compared = 0
    for key, value in from_stats.items():
        if key not in one_shot:
            continue
        expected = one_shot[key]
        if isinstance(expected, list) and not isinstance(value, list):
            expected = math.fsum(expected) / len(expected)
        if tolerance and isinstance(value, float):
            assert math.isclose(value, expected, rel_tol=tolerance), f"{context}: {key}"
        else:
            assert value == expected, f"{context}: {key}"
        compared += 1
    assert compared, f"{context}: no output in common"


# Options that resample per-example statistics (sacreBLEU's intervals, the intervals of per-example means)
RESAMPLING = {"chrf": {"confidence": True, "n_bootstrap": 200}, "sacrebleu": {"confidence": True, "n_bootstrap": 200},
              "ter": {"confidence": True, "n_bootstrap": 200}, "meteor": {"confidence": True, "n_bootstrap": 200},
              "rouge": {"confidence": True, "n_bootstrap": 200}}


@pytest.mark.parametrize("name", sorted(RESAMPLING))
def test_resampling_options_score_per_example_rows_in_corpus_order(name: str, text_corpora) -> None:
    """Per-example statistics in corpus order (mapped in batches, or one record per example) give exactly what
    compute gives with resampling options; totals, which cannot be resampled, are refused."""
    metric = load_metric(name)
    options = RESAMPLING[name]
    predictions, references, _ = text_corpora["wmt17 uedin-nmt"]
    corpus = {"predictions": predictions[:300], "references": [[reference] for reference in references[:300]]}
    one_shot = metric.compute(**corpus, **options)
    assert any(key.endswith(("_low", "confidence_low")) for key in one_shot)
    stats = datasets.Dataset.from_dict(corpus).map(lambda batch: metric.example_stats(**batch, **options),
                                                   batched=True, batch_size=64, remove_columns=["predictions",
                                                                                                "references"])
    assert metric.compute_from_stats(stats, **options) == one_shot
    records = stats.to_list()
    assert metric.compute_from_stats(records, **options) == one_shot
    with pytest.raises(ValueError, match="need every example's statistics .* not totals of several examples"):
        metric.compute_from_stats([metric.reduce_stats(records[:150], **options),
                                   metric.reduce_stats(records[150:], **options)], **options)


def test_a_paired_test_from_statistics_is_refused_saying_why(text_corpora) -> None:
    metric = load_metric("chrf")
    predictions, references, baseline = text_corpora["wmt17 uedin-nmt"]
    stats = metric.example_stats(predictions[:20], [[reference] for reference in references[:20]])
    with pytest.raises(ValueError, match="needs the inputs themselves, not only their statistics; use `compute`"):
        metric.compute_from_stats(stats, baseline_predictions=baseline[:20])
