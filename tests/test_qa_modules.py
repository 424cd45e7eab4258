"""exact_match, squad and squad_v2 through evaluate's loader vs their reference arithmetic, reproduced here.

* exact_match: evaluate's ``exact_match._compute`` (numpy string arrays, ``re.sub`` per pattern, ``np.char.lower``,
  ``np.char.translate``, ``np.mean``) transcribed below.
* squad: the official SQuAD v1.1 evaluation script's logic (normalize_answer, token-bag F1, max over the gold
  answers, sums over the questions), as evaluate's module calls it.
* squad_v2: the official SQuAD v2.0 evaluation script's logic as evaluate's module adapts it (answers as
  ``{"text": [...]}``; a question without answers has the gold answer ""; the no-answer threshold; the
  ``HasAns_``/``NoAns_`` breakdown; the best-threshold walk), with the no-answer probabilities rounded to float32 as
  evaluate's ``float32`` feature stores them.

Each is written from the published scripts, independently of metrics/_core; cases are generated from fixed seeds.
"""

from __future__ import annotations

import collections
import random
import re
import string
import struct
import warnings

import numpy as np
import pytest

from conftest import metric_fixture
from generated_text import random_text, similar_text

TOLERANCE = 1e-12


# -- exact_match: evaluate's module, transcribed -----------------------------------------------------------------


def exact_match_oracle(predictions, references, regexes_to_ignore=None, ignore_case=False,
                       ignore_punctuation=False, ignore_numbers=False):
    if regexes_to_ignore is not None:
        for s in regexes_to_ignore:
            predictions = np.array([re.sub(s, "", x) for x in predictions])
            references = np.array([re.sub(s, "", x) for x in references])
    else:
        predictions = np.asarray(predictions)
        references = np.asarray(references)
    if ignore_case:
        predictions = np.char.lower(predictions)
        references = np.char.lower(references)
    if ignore_punctuation:
        repl_table = string.punctuation.maketrans("", "", string.punctuation)
        predictions = np.char.translate(predictions, table=repl_table)
        references = np.char.translate(references, table=repl_table)
    if ignore_numbers:
        repl_table = string.digits.maketrans("", "", string.digits)
        predictions = np.char.translate(predictions, table=repl_table)
        references = np.char.translate(references, table=repl_table)
    score_list = predictions == references
    return {"exact_match": np.mean(score_list)}


REGEXES = ["the ", "yell", r"\d+", "[aeiou]", r"^\s+", r"\s+$", "(?i)cat", r"[.,!?]", "é", " "]


def _variant(rng: random.Random, text: str) -> str:
    """The same answer, or one differing in case, punctuation, digits, spacing or a regex-removable part."""
    roll = rng.random()
    if roll < 0.25:
        return text
    if roll < 0.4:
        return text.upper() if rng.random() < 0.5 else text.lower()
    if roll < 0.55:
        return text + rng.choice([".", "!", "?", ",", "'s", "..."])
    if roll < 0.65:
        return text + str(rng.randint(0, 999))
    if roll < 0.75:
        return "the " + text
    if roll < 0.85:
        return " " + text + " "
    return similar_text(rng, text) if rng.random() < 0.5 else random_text(rng, 6)


def exact_match_cases(seed: int, count: int):
    rng = random.Random(seed)
    for _ in range(count):
        size = rng.randint(1, 12)
        references = [random_text(rng, 6) for _ in range(size)]
        predictions = [_variant(rng, reference) for reference in references]
        options = {
            "regexes_to_ignore": rng.sample(REGEXES, rng.randint(1, 3)) if rng.random() < 0.5 else None,
            "ignore_case": rng.random() < 0.5,
            "ignore_punctuation": rng.random() < 0.5,
            "ignore_numbers": rng.random() < 0.5,
        }
        yield predictions, references, options


exact_match = metric_fixture("exact_match")


def test_exact_match_parity(exact_match) -> None:
    checked = matches = 0
    for predictions, references, options in exact_match_cases(3, 1500):
        expected = exact_match_oracle(predictions, references, **options)["exact_match"]
        result = exact_match.compute(predictions=predictions, references=references, **options)
        assert list(result) == ["exact_match"]
        assert result["exact_match"] == expected, (predictions, references, options)
        checked += 1
        matches += 0 < expected < 1
    assert checked == 1500 and matches > 300  # many corpora with both matches and misses


def test_exact_match_docstring_values(exact_match) -> None:
    refs = ["the cat", "theater", "YELLING", "agent007"]
    preds = ["cat?", "theater", "yelling", "agent"]
    # the values evaluate's card gives for these calls
    assert exact_match.compute(references=refs, predictions=preds)["exact_match"] == 0.25
    assert exact_match.compute(references=refs, predictions=preds, regexes_to_ignore=["the ", "yell"],
                               ignore_case=True, ignore_punctuation=True)["exact_match"] == 0.5
    assert exact_match.compute(references=refs, predictions=preds, regexes_to_ignore=["the ", "yell", "YELL"],
                               ignore_case=True, ignore_punctuation=True)["exact_match"] == 0.75
    assert exact_match.compute(references=refs, predictions=preds, regexes_to_ignore=["the ", "yell", "YELL"],
                               ignore_case=True, ignore_punctuation=True, ignore_numbers=True)["exact_match"] == 1.0


def test_exact_match_several_references_and_shards(exact_match) -> None:
    assert exact_match.compute(predictions=["Paris", "4"], references=[["paris", "Paris"], ["four"]]) == \
        {"exact_match": 0.5}
    cases = list(exact_match_cases(9, 40))
    predictions = [p for case in cases for p in case[0]]
    references = [r for case in cases for r in case[1]]
    options = {"regexes_to_ignore": [r"\d+"], "ignore_case": True}
    one_shot = exact_match.compute(predictions=predictions, references=references, **options)
    shards = [exact_match.reduce_stats(exact_match.example_stats(predictions[i:i + 23], references[i:i + 23],
                                                                 **options), **options)
              for i in range(0, len(predictions), 23)]
    assert exact_match.compute_from_stats(shards, **options) == one_shot


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"regexes_to_ignore": "the "}, TypeError, "list of regular expressions"),
        ({"regexes_to_ignore": ["("]}, ValueError, "not a valid regular expression"),
        ({"regexes_to_ignore": [3]}, TypeError, r"regexes_to_ignore\[0\]"),
        ({"ignore_case": "yes"}, TypeError, "ignore_case"),
    ],
)
def test_exact_match_bad_options(exact_match, options, error, match) -> None:
    with pytest.raises(error, match=match):
        exact_match.compute(predictions=["a"], references=["a"], **options)


# -- SQuAD v1.1 and v2.0: the official scripts' logic ------------------------------------------------------------


def normalize_answer(s):
    """Lower text and remove punctuation, articles and extra whitespace (the official scripts' function)."""

    def remove_articles(text):
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    return white_space_fix(remove_articles(remove_punc(s.lower())))


def v1_f1_score(prediction, ground_truth):
    prediction_tokens = normalize_answer(prediction).split()
    ground_truth_tokens = normalize_answer(ground_truth).split()
    common = collections.Counter(prediction_tokens) & collections.Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)


def squad_v1_oracle(predictions, references):
    """evaluate's squad._compute on the official v1.1 compute_score."""
    pred_dict = {prediction["id"]: prediction["prediction_text"] for prediction in predictions}
    f1 = exact_match = total = 0
    for ref in references:
        total += 1
        if ref["id"] not in pred_dict:
            continue
        ground_truths = list(ref["answers"]["text"])
        prediction = pred_dict[ref["id"]]
        exact_match += max(normalize_answer(prediction) == normalize_answer(gt) for gt in ground_truths)
        f1 += max(v1_f1_score(prediction, gt) for gt in ground_truths)
    return {"exact_match": 100.0 * exact_match / total, "f1": 100.0 * f1 / total}


def get_tokens(s):
    if not s:
        return []
    return normalize_answer(s).split()


def compute_exact(a_gold, a_pred):
    return int(normalize_answer(a_gold) == normalize_answer(a_pred))


def compute_f1(a_gold, a_pred):
    gold_toks = get_tokens(a_gold)
    pred_toks = get_tokens(a_pred)
    common = collections.Counter(gold_toks) & collections.Counter(pred_toks)
    num_same = sum(common.values())
    if len(gold_toks) == 0 or len(pred_toks) == 0:
        return int(gold_toks == pred_toks)
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(pred_toks)
    recall = 1.0 * num_same / len(gold_toks)
    return (2 * precision * recall) / (precision + recall)


def _float32(value: float) -> float:
    return struct.unpack("f", struct.pack("f", value))[0]


def squad_v2_oracle(predictions, references, no_answer_threshold=1.0):
    """evaluate's squad_v2._compute on the official v2.0 functions (probabilities as evaluate's float32 cache)."""
    na_probs = {p["id"]: _float32(p["no_answer_probability"]) for p in predictions}
    preds = {p["id"]: p["prediction_text"] for p in predictions}
    qid_to_has_ans = {qa["id"]: bool(qa["answers"]["text"]) for qa in references}
    has_ans_qids = [k for k, v in qid_to_has_ans.items() if v]
    no_ans_qids = [k for k, v in qid_to_has_ans.items() if not v]
    exact_raw, f1_raw = {}, {}
    for qa in references:
        qid = qa["id"]
        gold_answers = [t for t in qa["answers"]["text"] if normalize_answer(t)] or [""]
        if qid not in preds:
            continue
        exact_raw[qid] = max(compute_exact(a, preds[qid]) for a in gold_answers)
        f1_raw[qid] = max(compute_f1(a, preds[qid]) for a in gold_answers)

    def apply_threshold(scores):
        return {qid: float(not qid_to_has_ans[qid]) if na_probs[qid] > no_answer_threshold else s
                for qid, s in scores.items()}

    exact_thresh, f1_thresh = apply_threshold(exact_raw), apply_threshold(f1_raw)

    def make_eval_dict(qid_list=None):
        if not qid_list:
            total = len(exact_thresh)
            return {"exact": 100.0 * sum(exact_thresh.values()) / total,
                    "f1": 100.0 * sum(f1_thresh.values()) / total, "total": total}
        total = len(qid_list)
        return {"exact": 100.0 * sum(exact_thresh[k] for k in qid_list) / total,
                "f1": 100.0 * sum(f1_thresh[k] for k in qid_list) / total, "total": total}

    out = make_eval_dict()
    if has_ans_qids:
        out.update({f"HasAns_{k}": v for k, v in make_eval_dict(has_ans_qids).items()})
    if no_ans_qids:
        out.update({f"NoAns_{k}": v for k, v in make_eval_dict(no_ans_qids).items()})

    def find_best_thresh(scores):
        num_no_ans = sum(1 for k in qid_to_has_ans if not qid_to_has_ans[k])
        cur_score = best_score = num_no_ans
        best_thresh = 0.0
        for qid in sorted(na_probs, key=lambda k: na_probs[k]):
            if qid not in scores:
                continue
            if qid_to_has_ans[qid]:
                diff = scores[qid]
            else:
                diff = -1 if preds[qid] else 0
            cur_score += diff
            if cur_score > best_score:
                best_score = cur_score
                best_thresh = na_probs[qid]
        return 100.0 * best_score / len(scores), best_thresh

    out["best_exact"], out["best_exact_thresh"] = find_best_thresh(exact_raw)
    out["best_f1"], out["best_f1_thresh"] = find_best_thresh(f1_raw)
    return out


PROBABILITIES = [0.0, 0.1, 0.25, 0.5, 0.5, 0.9, 1.0]


def squad_cases(seed: int, count: int, *, v2: bool):
    """Corpora of questions with 1-4 gold answers (v2: some with none), predictions near a gold answer or not,
    empty predictions, prediction order shuffled, tied and random no-answer probabilities."""
    rng = random.Random(seed)
    for case in range(count):
        predictions, references = [], []
        for index in range(rng.randint(1, 10)):
            identifier = f"q{case}-{index}" if rng.random() < 0.9 else str(rng.randint(0, 10**9))
            if any(reference["id"] == identifier for reference in references):
                identifier += "x"
            unanswerable = v2 and rng.random() < 0.35
            texts = [] if unanswerable else [random_text(rng, 8) for _ in range(rng.randint(1, 4))]
            if texts and rng.random() < 0.3:
                texts.append(rng.choice(["the", "a", "", "...", "The An"]))  # normalises to nothing
            reference = {"id": identifier, "answers": {"text": texts, "answer_start": [rng.randint(0, 500) for _ in texts]}}
            roll = rng.random()
            if roll < 0.15 or not texts:
                text = "" if rng.random() < 0.6 else random_text(rng, 5)
            elif roll < 0.5:
                text = _variant(rng, rng.choice(texts))
            else:
                text = similar_text(rng, rng.choice(texts))
            prediction = {"id": identifier, "prediction_text": text}
            if v2:
                prediction["no_answer_probability"] = (rng.choice(PROBABILITIES) if rng.random() < 0.5
                                                       else rng.random())
            predictions.append(prediction)
            references.append(reference)
        if rng.random() < 0.5:
            rng.shuffle(predictions)
        yield predictions, references


def _close(ours: dict, theirs: dict) -> bool:
    return list(ours) == list(theirs) and all(
        type(ours[key]) is type(theirs[key]) and abs(ours[key] - theirs[key]) <= TOLERANCE for key in theirs)


squad = metric_fixture("squad")


squad_v2 = metric_fixture("squad_v2")


def test_squad_parity(squad) -> None:
    checked = 0
    for predictions, references in squad_cases(5, 1500, v2=False):
        expected = squad_v1_oracle(predictions, references)
        result = squad.compute(predictions=predictions, references=references)
        assert _close(result, expected), (predictions, references, result, expected)
        checked += 1
    assert checked == 1500


@pytest.mark.parametrize("threshold", [1.0, 0.5, 0.0, 0.3])
def test_squad_v2_parity(squad_v2, threshold) -> None:
    checked = with_both = 0
    for predictions, references in squad_cases(6 + int(threshold * 10), 400, v2=True):
        expected = squad_v2_oracle(predictions, references, no_answer_threshold=threshold)
        result = squad_v2.compute(predictions=predictions, references=references, no_answer_threshold=threshold)
        assert _close(result, expected), (predictions, references, threshold, result, expected)
        checked += 1
        with_both += "HasAns_total" in expected and "NoAns_total" in expected
    assert checked == 400 and with_both > 150


def test_squad_v2_threshold_on_float32_probabilities(squad_v2) -> None:
    # 0.1 is stored as float32 0.10000000149..., which exceeds the threshold 0.1 (a float64), as in evaluate
    predictions = [{"id": "a", "prediction_text": "x", "no_answer_probability": 0.1}]
    references = [{"id": "a", "answers": {"text": ["x"], "answer_start": [0]}}]
    result = squad_v2.compute(predictions=predictions, references=references, no_answer_threshold=0.1)
    assert result == squad_v2_oracle(predictions, references, no_answer_threshold=0.1)
    assert result["exact"] == 0.0 and result["best_f1_thresh"] == _float32(0.1)


def test_squad_v2_shards_and_batches(squad_v2) -> None:
    cases = list(squad_cases(77, 30, v2=True))
    predictions = [p for case in cases for p in case[0]]
    references = [r for case in cases for r in case[1]]
    one_shot = squad_v2.compute(predictions=predictions, references=references)
    assert _close(one_shot, squad_v2_oracle(predictions, references))
    for start in range(0, len(predictions), 40):
        end = start + 40
        ids = {reference["id"] for reference in references[start:end]}
        squad_v2.add_batch(predictions=[p for p in predictions if p["id"] in ids], references=references[start:end])
    assert squad_v2.compute() == one_shot
    # the threshold-free part merges from statistics; the best thresholds need every question (compute)
    with pytest.raises(ValueError, match="needs the inputs themselves"):
        squad_v2.compute_from_stats(squad_v2.example_stats(predictions, references))


def test_squad_shards(squad) -> None:
    cases = list(squad_cases(78, 30, v2=False))
    predictions = [p for case in cases for p in case[0]]
    references = [r for case in cases for r in case[1]]
    one_shot = squad.compute(predictions=predictions, references=references)
    by_id = {p["id"]: p for p in predictions}
    shards = []
    for start in range(0, len(references), 25):
        chunk = references[start:start + 25]
        stats = squad.example_stats([by_id[r["id"]] for r in chunk], chunk)
        shards.append(squad.reduce_stats(stats))
    assert squad.compute_from_stats(shards) == one_shot


def test_squad_unanswered_question_scores_zero_with_one_warning(squad) -> None:
    predictions = [{"id": "a", "prediction_text": "Paris"}, {"id": "zzz", "prediction_text": "x"}]
    references = [{"id": "a", "answers": {"text": ["Paris"], "answer_start": [0]}},
                  {"id": "b", "answers": {"text": ["Rome"], "answer_start": [0]}}]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = squad.compute(predictions=predictions, references=references)
    assert result == squad_v1_oracle(predictions, references) == {"exact_match": 50.0, "f1": 50.0}
    assert len(caught) == 1 and "'b'" in str(caught[0].message)


def test_answers_as_list_of_dicts(squad) -> None:
    predictions = [{"id": "a", "prediction_text": "the Paris"}]
    as_dict = [{"id": "a", "answers": {"text": ["Paris", "Rome"], "answer_start": [0, 5]}}]
    as_list = [{"id": "a", "answers": [{"text": "Paris", "answer_start": 0}, {"text": "Rome", "answer_start": 5}]}]
    assert squad.compute(predictions=predictions, references=as_dict) == \
        squad.compute(predictions=predictions, references=as_list) == {"exact_match": 100.0, "f1": 100.0}


@pytest.mark.parametrize(
    ("predictions", "references", "error", "match"),
    [
        ([{"id": "a"}], [{"id": "a", "answers": {"text": ["x"]}}], ValueError, "prediction_text"),
        (["x"], [{"id": "a", "answers": {"text": ["x"]}}], TypeError, r"predictions\[0\]"),
        ([{"id": "a", "prediction_text": 3}], [{"id": "a", "answers": {"text": ["x"]}}], TypeError, "prediction_text"),
        ([{"id": "a", "prediction_text": "x"}], [{"id": "a", "answers": {"text": "x"}}], TypeError, "list of answer"),
        ([{"id": "a", "prediction_text": "x"}], [{"id": "a", "answers": {"text": []}}], ValueError, "squad_v2"),
        ([{"id": "a", "prediction_text": "x"}], [{"id": "a"}], ValueError, "answers"),
        ([{"id": "a", "prediction_text": "x"}], [], ValueError, ""),
    ],
)
def test_squad_bad_input(squad, predictions, references, error, match) -> None:
    with pytest.raises(error, match=match):
        squad.compute(predictions=predictions, references=references)


@pytest.mark.parametrize(
    ("predictions", "references", "options", "error", "match"),
    [
        ([{"id": "a", "prediction_text": "x"}], [{"id": "a", "answers": {"text": []}}], {}, ValueError,
         "no_answer_probability"),
        ([{"id": "a", "prediction_text": "x", "no_answer_probability": "0.5"}], [{"id": "a", "answers": {"text": []}}],
         {}, TypeError, "no_answer_probability"),
        ([{"id": "a", "prediction_text": "x", "no_answer_probability": float("nan")}],
         [{"id": "a", "answers": {"text": []}}], {}, ValueError, "finite"),
        ([{"id": "b", "prediction_text": "x", "no_answer_probability": 0.1}], [{"id": "a", "answers": {"text": []}}],
         {}, ValueError, "no prediction"),
        ([{"id": "a", "prediction_text": "x", "no_answer_probability": 0.1}] * 2,
         [{"id": "a", "answers": {"text": []}}, {"id": "a", "answers": {"text": ["x"]}}], {}, ValueError,
         "'a' .*with other answers"),
        ([{"id": "a", "prediction_text": "x", "no_answer_probability": 0.1}], [{"id": "a", "answers": {"text": []}}],
         {"no_answer_threshold": "high"}, TypeError, "no_answer_threshold"),
    ],
)
def test_squad_v2_bad_input(squad_v2, predictions, references, options, error, match) -> None:
    with pytest.raises(error, match=match):
        squad_v2.compute(predictions=predictions, references=references, **options)


@pytest.mark.slow
def test_qa_parity_many_cases(exact_match, squad, squad_v2) -> None:
    checked = 0
    for predictions, references, options in exact_match_cases(1003, 10000):
        expected = exact_match_oracle(predictions, references, **options)["exact_match"]
        assert exact_match.compute(predictions=predictions, references=references, **options)["exact_match"] == expected
        checked += 1
    for predictions, references in squad_cases(1005, 10000, v2=False):
        assert _close(squad.compute(predictions=predictions, references=references),
                      squad_v1_oracle(predictions, references))
        checked += 1
    for threshold in (1.0, 0.5, 0.2):
        for predictions, references in squad_cases(1006 + int(threshold * 10), 4000, v2=True):
            assert _close(squad_v2.compute(predictions=predictions, references=references, no_answer_threshold=threshold),
                          squad_v2_oracle(predictions, references, no_answer_threshold=threshold))
            checked += 1
    print(f"qa parity: {checked} corpora, 0 mismatches")


def test_squad_v2_counts_a_question_repeated_whole_once_per_occurrence(squad_v2) -> None:
    """A bootstrap resample repeats questions whole (evaluate's evaluator with strategy="bootstrap"): each occurrence
    counts, as SQuAD v1.1 counts repeated questions. Worked by hand: a (answerable, answered right, probability 0.1)
    twice and b (unanswerable, answered "x", probability 0.2) once: exact 2/3; HasAns 2/2, NoAns 0/1. The best
    threshold walk (official order: increasing probability) starts from 1 (b's unanswered point), adds a, a (3), then
    loses b's (2): best 3/3 at a's probability, which evaluate's cache keeps as a float32."""
    a_prediction = {"id": "a", "prediction_text": "Denver Broncos", "no_answer_probability": 0.1}
    b_prediction = {"id": "b", "prediction_text": "x", "no_answer_probability": 0.2}
    a_reference = {"id": "a", "answers": {"text": ["Denver Broncos"], "answer_start": [0]}}
    b_reference = {"id": "b", "answers": {"text": [], "answer_start": []}}
    result = squad_v2.compute(predictions=[a_prediction, a_prediction, b_prediction],
                              references=[a_reference, a_reference, b_reference])
    assert result["exact"] == 100.0 * 2 / 3 and result["total"] == 3
    assert (result["HasAns_exact"], result["HasAns_total"], result["NoAns_exact"], result["NoAns_total"]) == (
        100.0, 2, 0.0, 1)
    assert result["best_exact"] == 100.0 and result["best_exact_thresh"] == _float32(0.1)
    # the same question added in two batches counts twice too; with other answers it is refused
    squad_v2.add_batch(predictions=[a_prediction, b_prediction], references=[a_reference, b_reference])
    squad_v2.add_batch(predictions=[a_prediction], references=[a_reference])
    assert squad_v2.compute() == result
    other = {"id": "a", "answers": {"text": ["Broncos"], "answer_start": [7]}}
    with pytest.raises(ValueError, match="'a' is repeated with other answers"):
        squad_v2.compute(predictions=[a_prediction, a_prediction], references=[a_reference, other])
