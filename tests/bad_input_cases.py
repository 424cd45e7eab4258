"""The classes of bad input, per input kind, and what each metric module answers to them.

`test_bad_input.py` runs every case against every metric folder (a new metric is covered by the cases of its
input kind; a new input kind without cases fails the test) and checks that the committed catalogue,
`tests/bad_input_catalogue.md`, is what the modules answer today. `scripts/write_bad_input_catalogue.py`
rewrites the catalogue.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from metrics._core.core_options import is_bound

CATALOGUE = Path(__file__).resolve().parent / "bad_input_catalogue.md"


@dataclass(frozen=True)
class Case:
    """One class of bad input: the inputs (by column) and options given to `compute`, and the argument the
    error must name."""

    key: str
    description: str
    inputs: dict[str, Any]
    options: dict[str, Any]
    names: str


def _text_cases(columns: tuple[str, ...]) -> list[Case]:
    def given(predictions: Any, references: Any = ("a", "b")) -> dict[str, Any]:
        values = {"predictions": predictions, "references": references, "sources": ["s"] * _length(predictions)}
        return {name: values[name] for name in columns}

    cases = [
        Case("empty", "an empty corpus", given([], []), {}, "predictions"),
        Case("none", "`predictions` is None", given(None), {}, "predictions"),
        Case("string", "one string instead of a list of strings", given("a b"), {}, "predictions"),
        Case("non-string", "a prediction that is not a string", given(["a", 3]), {}, "predictions[1]"),
        Case("none-item", "None among the predictions", given(["a", None]), {}, "predictions[1]"),
        Case("0-d-array", "a 0-d numpy array", given(np.array("a"), ["a"]), {}, "predictions"),
        Case("surrogate", "a lone surrogate (not Unicode text)", given(["a", "b\ud800"]), {}, "predictions[1]"),
    ]
    if "references" in columns:
        cases += [
            Case("lengths", "more predictions than references", given(["a", "b"], ["a"]), {}, "references"),
            Case("references-none", "`references` is None", given(["a", "b"], None), {}, "references"),
            Case("reference-bytes", "a reference that is not a string", given(["a"], [["a", b"b"]]), {},
                 "references[0][1]"),
            Case("no-reference", "an example with an empty list of references", given(["a", "b"], [["a"], []]),
                 {}, "references[1]"),
            Case("only-none", "an example whose references are all None", given(["a", "b"], [["a"], [None]]),
                 {}, "references[1]"),
            Case("reference-dict", "a reference given as a mapping", given(["a"], [{"text": "a"}]), {},
                 "references[0]"),
            Case("too-deep", "references nested one level too deep", given(["a"], [[["a"]]]), {}, "references[0][0]"),
        ]
    if "sources" in columns:
        cases.append(Case("sources-lengths", "fewer sources than predictions",
                          {**given(["a", "b"], ["a", "b"]), "sources": ["s"]}, {}, "sources"))
    return cases


def _length(values: Any) -> int:
    try:
        return len(values)
    except TypeError:
        return 1


def _pair_cases(good: tuple[Any, Any], items: list[tuple[str, str, Any, str]]) -> list[Case]:
    """The cases every kind of prediction/reference pairs shares, then the kind's own bad items: (key,
    description, predictions, the argument the error must name), with the good references."""
    predictions, references = good
    cases = [
        Case("empty", "an empty corpus", {"predictions": [], "references": []}, {}, "predictions"),
        Case("none", "`predictions` is None", {"predictions": None, "references": references}, {}, "predictions"),
        Case("lengths", "more predictions than references",
             {"predictions": predictions, "references": references[:1]}, {}, "references"),
        Case("references-none", "`references` is None", {"predictions": predictions, "references": None}, {},
             "references"),
    ]
    return cases + [Case(key, description, {"predictions": bad, "references": references}, {}, names)
                    for key, description, bad, names in items]


def _label_cases(columns: tuple[str, ...]) -> list[Case]:
    return _pair_cases(LABEL_PAIR, [
        ("string", "one string instead of a list of labels", "01", "predictions"),
        ("0-d-array", "a 0-d numpy array", np.array(1), "predictions"),
        ("mixed-types", "labels of mixed types (an int and a string)", [0, "1"], "predictions[1]"),
        ("float-label", "a label that is not an integer (1.5)", [0, 1.5], "predictions[1]"),
        ("none-item", "None among the labels", [0, None], "predictions[1]"),
        ("ragged-rows", "multi-label rows of different widths", [[0, 1], [1]], "predictions[1]"),
    ])


def _number_cases(columns: tuple[str, ...]) -> list[Case]:
    return _pair_cases(NUMBER_PAIR, [
        ("string", "one string instead of a list of numbers", "12", "predictions"),
        ("0-d-array", "a 0-d numpy array", np.array(1.0), "predictions"),
        ("non-number", "a value that is not a number", [1.0, "2"], "predictions[1]"),
        ("bool", "a bool among the numbers", [1.0, True], "predictions[1]"),
        ("nan", "a NaN among the numbers", [1.0, float("nan")], "predictions[1]"),
    ])


def _tag_sequence_cases(columns: tuple[str, ...]) -> list[Case]:
    return _pair_cases(TAG_PAIR, [
        ("string", "one string instead of a list of tag sequences", "O B-PER", "predictions"),
        ("flat", "one flat list of tags instead of a list of sequences", ["O", "B-PER"], "predictions[0]"),
        ("non-string-tag", "a tag that is not a string", [["O", 1], ["B-LOC"]], "predictions[0][1]"),
        ("tag-count", "a predicted sequence shorter than its gold sequence", [["O"], ["B-LOC"]], "predictions[0]"),
    ])


def _squad_cases(good: tuple[Any, Any]) -> list[Case]:
    return _pair_cases(good, [
        ("string", "one string instead of a list of prediction dicts", "Paris", "predictions"),
        ("text-only", "a prediction given as a plain string", ["Paris", good[0][1]], "predictions[0]"),
        ("missing-key", "a prediction without `prediction_text`", [{"id": "q1"}, good[0][1]], "predictions[0]"),
        ("non-string-answer", "a prediction text that is not a string",
         [{**good[0][0], "prediction_text": 3}, good[0][1]], "predictions[0]['prediction_text']"),
    ])


def _sample_cases(columns: tuple[str, ...]) -> list[Case]:
    """MAUVE's two samples (one flat list of texts each, as many of each) and its precomputed features."""
    predictions, references = SAMPLE_PAIR
    features = {"p_features": np.zeros((2, 3)), "q_features": np.zeros((2, 3))}
    return _pair_cases(SAMPLE_PAIR, [
        ("string", "one string instead of a list of texts", "a b", "predictions"),
        ("non-string", "a text that is not a string", ["a", 3], "predictions[1]"),
        ("none-item", "None among the texts", ["a", None], "predictions[1]"),
        ("0-d-array", "a 0-d numpy array", np.array("a"), "predictions"),
        ("surrogate", "a lone surrogate (not Unicode text)", ["a", "b\ud800"], "predictions[1]"),
    ]) + [
        Case("reference-list", "a human text given as a list of references (MAUVE's human sample is flat)",
             {"predictions": predictions, "references": [["a"], references[1]]}, {}, "references[0]"),
        Case("feature-widths", "features of different widths", {}, {**features, "q_features": np.zeros((2, 4))},
             "p_features"),
        Case("empty-features", "features with no rows", {}, {**features, "p_features": np.zeros((0, 3))},
             "p_features"),
        Case("nan-feature", "a NaN among the features", {}, {**features, "p_features": np.full((2, 3), np.nan)},
             "p_features[0]"),
        Case("unknown-model", "a featurizing model not available offline", _pair(SAMPLE_PAIR),
             {"featurize_model_name": "gpt2-large"}, "featurize_model_name"),
        Case("too-many-buckets", "more buckets than texts", _pair(SAMPLE_PAIR), {"num_buckets": 5}, "num_buckets"),
    ]


def _coref_cases(columns: tuple[str, ...]) -> list[Case]:
    predictions = COREF_PAIR[0]
    return _pair_cases(COREF_PAIR, [
        ("string", "one string instead of a list of documents", "(0)", "predictions"),
        ("document-string", "a document given as one string", ["(0)", predictions[1]], "predictions[0]"),
        ("bad-span", "a mention whose end precedes its start", [[[[3, 1]]], predictions[1]], "predictions[0][0][0]"),
        ("repeated-mention", "a mention in two entities", [[[[0, 0]], [[0, 0]]], predictions[1]],
         "predictions[0][1][0]"),
        ("unopened-mention", "CoNLL lines closing a mention never opened", [["d 0 0 w 1)"], predictions[1]],
         "predictions[0]"),
    ])


def _ranking_cases(columns: tuple[str, ...]) -> list[Case]:
    return _pair_cases(RANKING_PAIR, [
        ("string", "one string instead of a list of runs", "d1 d2", "predictions"),
        ("run-string", "a run given as a string", ["d1 d2", RANKING_PAIR[0][1]], "predictions[0]"),
        ("nan-score", "a NaN retrieval score", [{"d1": float("nan")}, RANKING_PAIR[0][1]], "predictions[0]['d1']"),
        ("huge-score", "a retrieval score beyond a float's range", [{"d1": 10**400}, RANKING_PAIR[0][1]],
         "predictions[0]['d1']"),
        ("duplicate-document", "a ranked list naming a document twice", [["d1", "d1"], RANKING_PAIR[0][1]],
         "predictions[0]"),
        ("non-string-document", "a document id that is not a string", [[1.5], RANKING_PAIR[0][1]],
         "predictions[0][0]"),
        ("unhashable-document", "a document id that is a list", [[["d1"]], RANKING_PAIR[0][1]],
         "predictions[0][0]"),
    ]) + [Case("float-grade", "a relevance grade that is not an integer",
               {"predictions": RANKING_PAIR[0], "references": [{"d1": 0.5}, RANKING_PAIR[1][1]]}, {},
               "references[0]['d1']")]


def _score_row_cases(columns: tuple[str, ...]) -> list[Case]:
    """Meta-evaluation rows: a metric's and the humans' scores, with the system and item of each row."""
    def given(**changes: Any) -> dict[str, Any]:
        return {**SCORE_ROWS, **changes}

    return [
        Case("empty", "an empty corpus", {name: [] for name in SCORE_ROWS}, {}, "predictions"),
        Case("none", "`predictions` is None", given(predictions=None), {}, "predictions"),
        Case("lengths", "fewer human scores than metric scores", given(references=[1.0, 2.0, 3.0]), {},
             "references"),
        Case("string", "one string instead of a list of scores", given(predictions="0.5 0.7 0.2 0.9"), {},
             "predictions"),
        Case("non-number", "a score that is not a number", given(predictions=[0.5, "0.7", 0.2, 0.9]), {},
             "predictions[1]"),
        Case("nan", "a NaN human score", given(references=[1.0, float("nan"), 3.0, 4.0]), {}, "references[1]"),
        Case("bool", "a bool among the scores", given(predictions=[0.5, True, 0.2, 0.9]), {}, "predictions[1]"),
        Case("systems-none", "`systems` is None", given(systems=None), {}, "systems"),
        Case("float-system", "a system id that is a float", given(systems=["a", "b", 1.5, "b"]), {}, "systems[2]"),
        Case("list-item", "an item id that is a list", given(items=["x", ["x"], "y", "y"]), {}, "items[1]"),
        Case("items-lengths", "fewer items than rows", given(items=["x", "x"]), {}, "items"),
        Case("repeated-row", "two rows of one system on one item", given(items=["x", "x", "x", "y"]), {}, "rows 0 and 2"),
        Case("one-system", "a single system (no system-level correlation)", given(systems=["a"] * 4, items=["w", "x", "y", "z"]),
             {}, "systems"),
        Case("other-lengths", "another metric with fewer scores than rows", given(),
             {"other_metrics": {"bleu": [1.0, 2.0]}}, "other_metrics['bleu']"),
        Case("turn-one-row", "turn-level correlation of a single row",
             {"predictions": [0.5], "references": [60.0], "systems": ["a"], "items": ["x"]}, {"level": "turn"},
             "predictions"),
    ]


def _rating_cases(columns: tuple[str, ...]) -> list[Case]:
    """Agreement ratings (item, annotator, label), and what each coefficient needs of them."""
    def given(**changes: Any) -> dict[str, Any]:
        return {**RATING_ROWS, **changes}

    three = given(items=["x", "x", "x", "y", "y", "y"], annotators=["a", "b", "c"] * 2)
    ragged = given(items=["x", "x", "x", "y", "y", "z"], annotators=["a", "b", "c", "a", "b", "a"])
    return [
        Case("empty", "an empty corpus", {name: [] for name in RATING_ROWS}, {}, "items"),
        Case("none", "`items` is None", given(items=None), {}, "items"),
        Case("lengths", "fewer labels than items", given(labels=[1, 1, 2]), {}, "labels"),
        Case("string", "one string instead of a list of labels", given(labels="112122"), {}, "labels"),
        Case("none-label", "None among the labels (a missing rating)", given(labels=[1, None, 2, 1, 2, 2]), {},
             "labels[1]"),
        Case("nan-label", "a NaN label", given(labels=[1, 1, float("nan"), 1, 2, 2]), {}, "labels[2]"),
        Case("bool-label", "a bool among the labels", given(labels=[1, True, 2, 1, 2, 2]), {}, "labels[1]"),
        Case("mixed-labels", "labels of mixed types (a number and a string)", given(labels=[1, "1", 2, 1, 2, 2]), {},
             "labels[1]"),
        Case("float-item", "an item id that is a float", given(items=["x", "x", 1.5, "y", "z", "z"]), {}, "items[2]"),
        Case("list-annotator", "an annotator id that is a list", given(annotators=["a", ["b"], "a", "b", "a", "b"]),
             {}, "annotators[1]"),
        Case("repeated-rating", "an annotator rating one item twice", given(annotators=["a", "a", "a", "b", "a", "b"]),
             {}, "rows 0 and 1"),
        Case("single-ratings", "every item rated once (nothing to pair)", given(items=["u", "v", "w", "x", "y", "z"]),
             {}, "items"),
        Case("one-label", "every rating the same label (alpha is 0/0)", given(labels=[2] * 6), {}, "labels"),
        Case("cohen-three", "Cohen's kappa of three annotators", three, {"coefficients": "cohen_kappa"}, "annotators"),
        Case("cohen-missing", "Cohen's kappa with a rating missing",
             {"items": ["x", "x", "y", "y", "z"], "annotators": ["a", "b", "a", "b", "a"], "labels": [1, 1, 2, 1, 2]},
             {"coefficients": "cohen_kappa"}, "items"),
        Case("fleiss-ragged", "Fleiss' kappa with different numbers of ratings per item", ragged,
             {"coefficients": "fleiss_kappa"}, "items"),
        Case("unknown-level", "an unknown level of measurement", given(), {"level_of_measurement": "circular"},
             "level_of_measurement"),
        Case("unknown-coefficient", "an unknown coefficient", given(), {"coefficients": ["scotts_pi"]},
             "coefficients[0]"),
        Case("interval-strings", "interval alpha of string labels", given(labels=["lo", "lo", "hi", "lo", "hi", "hi"]),
             {"level_of_measurement": "interval"}, "labels"),
        Case("ordinal-strings", "ordinal alpha of string labels without their order",
             given(labels=["lo", "lo", "hi", "lo", "hi", "hi"]), {"level_of_measurement": "ordinal"}, "value_domain"),
        Case("out-of-domain", "a label missing from `value_domain`", given(), {"value_domain": [1, 3]}, "value_domain"),
        Case("weights-alone", "Cohen's weights without Cohen's kappa", given(), {"weights": "linear"}, "weights"),
        Case("pearson-strings", "Pearson agreement of string labels",
             given(labels=["lo", "lo", "hi", "lo", "hi", "hi"]), {"coefficients": "pairwise_pearson"}, "labels"),
        Case("no-shared-items", "pairwise correlation where no two annotators share two items",
             given(annotators=["a", "b", "a", "c", "b", "c"], labels=[1, 2, 2, 3, 1, 3]),
             {"coefficients": "pairwise_spearman"}, "annotators"),
    ]


def _dialogue_cases(columns: tuple[str, ...]) -> list[Case]:
    """Responses with the history and the fact each answers: three text columns of one length."""
    def given(**changes: Any) -> dict[str, Any]:
        return {**DIALOGUE_GOOD, **changes}

    return [
        Case("empty", "an empty corpus", {name: [] for name in DIALOGUE_GOOD}, {}, "predictions"),
        Case("none", "`predictions` is None", given(predictions=None), {}, "predictions"),
        Case("string", "one string instead of a list of responses", given(predictions="hi there"), {}, "predictions"),
        Case("non-string", "a response that is not a string", given(predictions=["a", 3]), {}, "predictions[1]"),
        Case("surrogate", "a lone surrogate in a response", given(predictions=["a", "b\ud800"]), {},
             "predictions[1]"),
        Case("context-without-response", "a context without a response (more contexts than responses)",
             given(predictions=["a"], facts=[""]), {}, "contexts"),
        Case("facts-lengths", "fewer facts than responses", given(facts=[""]), {}, "facts"),
        Case("contexts-none", "`contexts` is None", given(contexts=None), {}, "contexts"),
        Case("none-context", "None among the contexts", given(contexts=["hi", None]), {}, "contexts[1]"),
        Case("list-context", "a context given as a list of turns", given(contexts=["hi", ["a", "b"]]), {},
             "contexts[1]"),
        Case("facts-none", "`facts` is None", given(facts=None), {}, "facts"),
        Case("bytes-fact", "a fact that is not a string", given(facts=["", b"x"]), {}, "facts[1]"),
    ]


LABEL_PAIR = ([0, 1], [0, 1])
RANKING_PAIR = ([{"d1": 0.9, "d2": 0.5}, ["d3", "d4"]], [{"d1": 1}, {"d4": 2, "d5": 1}])
NUMBER_PAIR = ([0.5, 1.5], [1.0, 2.0])
TAG_PAIR = ([["O", "B-PER"], ["B-LOC"]], [["O", "B-PER"], ["B-LOC"]])
SQUAD_PAIR = (
    [{"id": "q1", "prediction_text": "Paris"}, {"id": "q2", "prediction_text": "1889"}],
    [{"id": "q1", "answers": {"text": ["Paris"], "answer_start": [0]}},
     {"id": "q2", "answers": {"text": ["1889"], "answer_start": [5]}}],
)
SQUAD_V2_PAIR = ([{**prediction, "no_answer_probability": 0.0} for prediction in SQUAD_PAIR[0]], SQUAD_PAIR[1])
COREF_PAIR = ([[[[0, 1], [3, 4]]], [[[0, 0]], [[2, 2], [5, 6]]]], [[[[0, 1]], [[3, 4]]], [[[0, 0], [2, 2]]]])
SAMPLE_PAIR = (["the cat sat on the mat", "a storm cut the power"], ["the cat sat on a mat", "a storm cut power"])
SCORE_ROWS = {"predictions": [0.5, 0.7, 0.2, 0.9], "references": [60.0, 85.0, 20.0, 95.0],
              "systems": ["a", "b", "a", "b"], "items": ["x", "x", "y", "y"]}
RATING_ROWS = {"items": ["x", "x", "y", "y", "z", "z"], "annotators": ["a", "b", "a", "b", "a", "b"],
               "labels": [1, 1, 2, 1, 2, 2]}
DIALOGUE_GOOD = {"contexts": ["hi ! how are you ?\ni am fine , and you ?", "do you like movies ?"],
                 "facts": ["", "the force awakens came out in 2015"],
                 "predictions": ["i am good , thanks .", "yes , i saw the force awakens ."]}
TEXT_GOOD = {"predictions": ["the cat sat on the mat", "a storm cut the power"],
             "references": ["the cat sat on a mat", "a storm cut power"],
             "sources": ["le chat est assis", "une tempête a coupé le courant"]}


@dataclass(frozen=True)
class KindCases:
    """The bad-input cases of an input kind, and good inputs of that kind (to which the option cases are given)."""

    cases: Callable[[tuple[str, ...]], list[Case]]
    good: dict[str, Any]


def _pair(good: tuple[Any, Any]) -> dict[str, Any]:
    return {"predictions": good[0], "references": good[1]}


KINDS: dict[str, KindCases] = {
    "text pairs": KindCases(_text_cases, TEXT_GOOD),
    "texts": KindCases(_text_cases, TEXT_GOOD),
    "sources, predictions and references": KindCases(_text_cases, TEXT_GOOD),
    "text pairs or token lists": KindCases(_text_cases, TEXT_GOOD),
    "sources and predictions, references optional": KindCases(
        lambda columns: [case for case in _text_cases(columns) if case.key != "references-none"], TEXT_GOOD),
    "labels": KindCases(_label_cases, _pair(LABEL_PAIR)),
    "number pairs": KindCases(_number_cases, _pair(NUMBER_PAIR)),
    "label sequences": KindCases(_tag_sequence_cases, _pair(TAG_PAIR)),
    "squad answers": KindCases(lambda columns: _squad_cases(SQUAD_PAIR), _pair(SQUAD_PAIR)),
    "squad_v2 answers": KindCases(lambda columns: _squad_cases(SQUAD_V2_PAIR), _pair(SQUAD_V2_PAIR)),
    "rankings": KindCases(_ranking_cases, _pair(RANKING_PAIR)),
    "generated and human texts": KindCases(_sample_cases, _pair(SAMPLE_PAIR)),
    "coreference documents": KindCases(_coref_cases, _pair(COREF_PAIR)),
    "ratings": KindCases(_rating_cases, RATING_ROWS),
    "system and item scores": KindCases(_score_row_cases, SCORE_ROWS),
    "contexts, facts and responses": KindCases(_dialogue_cases, DIALOGUE_GOOD),
}


# Options of one metric, each case given with good inputs: (key, description, options, the argument the error names).
METRIC_OPTION_CASES: dict[str, list[tuple[str, str, dict[str, Any], str]]] = {
    "bleu": [
        ("orders-not-a-list", "`orders` given as one integer", {"orders": 4}, "orders"),
        ("orders-zero", "an order of 0 in `orders`", {"orders": [0, 1]}, "orders[0]"),
        ("orders-above-max-order", "an order above `max_order` in `orders`", {"orders": [1, 5]}, "orders"),
        ("sentence-scores-not-bool", "`sentence_scores` given as a string", {"sentence_scores": "yes"},
         "sentence_scores"),
        ("two-arithmetics", "evaluate's and pycocoevalcap's arithmetic at once",
         {"evaluate_compatible": True, "pycocoevalcap_compatible": True}, "pycocoevalcap_compatible"),
        ("pycocoevalcap-smooth", "smoothing with pycocoevalcap's arithmetic (it has its own epsilons)",
         {"pycocoevalcap_compatible": True, "smooth": True}, "smooth"),
    ],
    "meta_evaluation": [
        ("unknown-level", "an unknown level", {"level": "turns"}, "level"),
        ("level-list", "a list of levels with an unknown one", {"level": ["turn", "items"]}, "level[1]"),
        ("quality-lengths", "another human quality with fewer scores than rows", {"qualities": {"Natural": [1.0, 2.0]}},
         "qualities['Natural']"),
        ("quality-name", "a human quality named like a level", {"qualities": {"turn": [1.0, 2.0, 3.0, 4.0]}},
         "qualities"),
        ("quality-and-metric", "one name for another metric and a human quality",
         {"qualities": {"x": [1.0, 2.0, 3.0, 4.0]}, "other_metrics": {"x": [1.0, 2.0, 3.0, 4.0]}}, "qualities"),
    ],
    "agreement": [
        ("label-pairs-bound", "ratio alpha above its bound of label pairs (`max_label_pairs`)",
         {"level_of_measurement": "ratio", "max_label_pairs": 2}, "max_label_pairs"),
        ("annotator-pairs-bound", "pairwise correlation above its bound of annotator pairs (`max_annotator_pairs`)",
         {"coefficients": "pairwise_spearman", "max_annotator_pairs": 1}, "max_annotator_pairs"),
    ],
    "coval": [
        ("ceaf-bound", "CEAF's alignment above its bound (`max_ceaf_work`)", {"max_ceaf_work": 1}, "max_ceaf_work"),
    ],
    "rouge155": [
        ("resample-bound", "a bootstrap above its bound of work (`max_resample_work`)", {"max_resample_work": 1},
         "max_resample_work"),
        ("lcs-bound", "ROUGE-L above its bound of LCS cells (`max_lcs_cells`)", {"max_lcs_cells": 4}, "max_lcs_cells"),
        ("skip-bigram-bound", "ROUGE-S above its bound of skip-bigrams (`max_skip_bigrams`)",
         {"rouge_types": ["rougeS"], "max_skip_bigrams": 1}, "max_skip_bigrams"),
    ],
    "metricx": [
        ("missing-checkpoint", "a checkpoint folder that does not exist", {"checkpoint": "/nonexistent/metricx"},
         "checkpoint"),
        ("missing-tokenizer", "a tokenizer folder that does not exist", {"tokenizer": "/nonexistent/mt5-xl"},
         "tokenizer"),
        ("unknown-version", "an unknown MetricX version", {"version": "metricx-25"}, "version"),
        ("unknown-precision", "an unknown precision", {"precision": "int8"}, "precision"),
        ("short-input", "an input length too short to hold a token and the EOS", {"max_input_length": 1},
         "max_input_length"),
    ],
    "usr": [
        ("missing-models", "a `models` folder that does not exist", {"models": "/nonexistent/usr-models"}, "models"),
        ("missing-checkpoint", "a folder that holds no model (the three models' parent)", {"mlm_model": "{models}"}, "mlm_model"),
        ("wrong-kind", "a dialog-retrieval classifier where the masked LM belongs", {"mlm_model": "{models}/ctx"},
         "mlm_model"),
        ("masked-lm-as-dr", "the masked LM where a dialog-retrieval classifier belongs",
         {"dr_fact_model": "{models}/roberta_ft"}, "dr_fact_model"),
        ("unknown-precision", "an unknown precision", {"precision": "int8"}, "precision"),
        ("small-batch", "a token budget below one sequence", {"batch_tokens": 16}, "batch_tokens"),
    ],
    "rouge": [
        ("beta-zero", "an F-measure weight `beta` of 0", {"beta": 0}, "beta"),
        ("beta-string", "`beta` given as a string", {"beta": "1.2"}, "beta"),
        ("unknown-multi-ref", "an unknown `multi_ref`", {"multi_ref": "mean"}, "multi_ref"),
        ("pycocoevalcap-beta", "another `beta` with pycocoevalcap_compatible (its beta is 1.2)",
         {"pycocoevalcap_compatible": True, "beta": 1.0}, "beta"),
        ("pycocoevalcap-multi-ref", "another `multi_ref` with pycocoevalcap_compatible (its is 'max')",
         {"pycocoevalcap_compatible": True, "multi_ref": "best"}, "multi_ref"),
        ("pycocoevalcap-stemmer", "stemming with pycocoevalcap_compatible",
         {"pycocoevalcap_compatible": True, "use_stemmer": True}, "use_stemmer"),
        ("pycocoevalcap-tokens-stemmer", "stemming pycocoevalcap's tokens",
         {"tokenizer": "pycocoevalcap", "use_stemmer": True}, "use_stemmer"),
        ("lcs-bound", "ROUGE-L above its bound of LCS cells (`max_lcs_cells`)", {"max_lcs_cells": 4},
         "max_lcs_cells"),
        ("skip-bigram-bound", "ROUGE-S above its bound of skip-bigram work (`max_skip_bigram_work`)",
         {"rouge_types": ["rougeS"], "max_skip_bigram_work": 2}, "max_skip_bigram_work"),
    ],
}


def _holds_text(value: Any) -> bool:
    if isinstance(value, str):
        return len(value) > 1
    if isinstance(value, dict):
        return any(map(_holds_text, value.values()))
    return isinstance(value, (list, tuple)) and any(map(_holds_text, value))


def _option_cases(options_class: type, good: dict[str, Any], bounds_with_cases: set[str]) -> list[Case]:
    """An unknown option, a flag given as a string (for options classes that have a flag), and work above each
    resource bound the metric's own cases do not exercise (with the bound set to 1)."""
    flags = [field.name for field in dataclasses.fields(options_class) if isinstance(field.default, bool)]
    cases = [Case("unknown-option", "an unknown option", {}, {"no_such_option": 1}, "no_such_option")]
    if flags:
        cases.append(Case("flag-not-bool", f"a flag given as a string (`{flags[0]}`)", {}, {flags[0]: "yes"},
                          flags[0]))
    for field in dataclasses.fields(options_class):
        if not is_bound(field) or field.name in bounds_with_cases:
            continue
        if field.name == "max_text_chars":
            if _holds_text(good):
                cases.append(Case("text-bound", "a text longer than its bound (`max_text_chars`)", {},
                                  {"max_text_chars": 1}, "max_text_chars"))
        elif field.name == "max_resample_work":
            if isinstance(getattr(options_class, "confidence", None), bool):  # rouge155's is a percentage
                cases.append(Case("resample-bound", "a bootstrap interval above its bound of work "
                                  "(`max_resample_work`)", {}, {"confidence": True, "max_resample_work": 1},
                                  "max_resample_work"))
        else:
            cases.append(Case(f"{field.name}-bound", f"work above its bound (`{field.name}`)", {},
                              {field.name: 1}, field.name))
    return cases


def _kind_cases(module: Any) -> KindCases:
    kind = module.inputs
    if kind.name not in KINDS:
        raise KeyError(f"no bad-input cases for the input kind {kind.name!r}; add them to tests/bad_input_cases.py")
    return KINDS[kind.name]


def good_inputs(module: Any) -> dict[str, Any]:
    """Two valid examples of the module's input kind, by column."""
    return {name: _kind_cases(module).good[name] for name in module.inputs.columns}


def cases_for(module: Any) -> list[Case]:
    """Every case for a loaded metric module (its input kind's, then the option cases)."""
    good = good_inputs(module)
    own = [Case(key, description, {}, _bound(module, options), names)
           for key, description, options, names in METRIC_OPTION_CASES.get(module.name, [])]
    return [*_kind_cases(module).cases(module.inputs.columns),
            *(dataclasses.replace(case, inputs=good) for case in [*_option_cases(module.options_class, good, {case.names for case in own}), *own])]


def _model_folder(module: Any) -> str | None:
    """The model folder the suite binds the module to (its config option, tests/conftest.py ``model_config``)."""
    return getattr(module, "_bound_options", {}).get(module.config_option) if module.config_option else None


def _bound(module: Any, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with "{models}" in a string value replaced by :func:`_model_folder`."""
    return {name: value.replace("{models}", _model_folder(module)) if isinstance(value, str) and "{models}" in value
            else value for name, value in options.items()}


def answer(module: Any, case: Case) -> tuple[str, str]:
    """(exception type, message) that `compute` raises for the case, or ('no error', ''); the suite's temporary
    model folder is written as <models> in the message."""
    try:
        module.compute(**case.inputs, **case.options)
    except (TypeError, ValueError) as error:
        folder = _model_folder(module)
        return type(error).__name__, str(error).replace(folder, "<models>") if folder else str(error)
    return "no error", ""


def bounds_of(module: Any) -> list[tuple[str, str, int]]:
    """(metric, option, default) of each resource bound the module's options declare."""
    return [(module.name, field.name, field.default) for field in dataclasses.fields(module.options_class)
            if is_bound(field)]


def render(rows: list[tuple[str, Case, str, str]], bounds: list[tuple[str, str, int]]) -> str:
    """The catalogue: the table of resource bounds, then one table per metric, a row per case."""
    lines = [
        "# Bad input: what every metric module answers",
        "",
        "Generated by `scripts/write_bad_input_catalogue.py` from `tests/bad_input_cases.py`; "
        "`tests/test_bad_input.py` fails when it is stale. Each case is passed to `compute`; every module raises "
        "before reading or writing anything, naming itself, the argument and, for one example, its index.",
        "",
        "## Resource bounds",
        "",
        "Each is an option of `compute`; work above it is refused before it is done (the cases below set each "
        "bound to 1). The module's card, section Resource Bounds, says what it counts, why the default, and "
        "what the work costs below it; `tests/test_resource_stress.py` runs each module at full scale under "
        "memory and time limits.",
        "",
        "| module | bound | default |",
        "|---|---|---|",
        *(f"| {metric} | `{option}` | {default:,} |" for metric, option, default in bounds),
    ]
    current = None
    for metric, case, error, message in rows:
        if metric != current:
            lines += ["", f"## {metric}", "", "| case | error | message |", "|---|---|---|"]
            current = metric
        lines.append(f"| {case.description} | `{error}` | {message.replace('|', '&#124;')} |")
    return "\n".join(lines) + "\n"
