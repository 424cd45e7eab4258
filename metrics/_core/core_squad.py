"""SQuAD v1.1 and v2.0 scores as the official evaluation scripts compute them, from per-example statistics.

Answers are normalised as the official scripts do (lowercase, remove ASCII
punctuation, remove the articles a/an/the as whole words, collapse
whitespace); exact match is equality of normalised texts and F1 the harmonic
mean of token precision and recall on normalised tokens, each maximised over
the gold answers. The per-question values are computed with the scripts'
own float operations, so they are bit-identical; corpus sums are exact
(``math.fsum``) where the scripts add in order (a difference of a few units
in the last place of a score).

Predictions are matched to references by question id among the examples
scored together (one ``compute`` call, or one batch of ``example_stats``): a
reference whose id has no prediction scores 0 in v1.1 (the official script
prints a message; a warning says so here) and is an error in v2.0 (evaluate's
module fails with ``KeyError``); predictions whose id no reference has are
ignored; with repeated prediction ids the last one counts.

v2.0 adds, per question, whether it has an answer, the no-answer probability
and the threshold rule (a question is predicted unanswerable when its
probability exceeds ``no_answer_threshold``), the ``HasAns_``/``NoAns_``
breakdown and the best thresholds, which the official script finds by walking
the questions in increasing probability (ties in prediction order) and keeps
at the first maximum; that walk needs every question's statistics in order.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .core_checks import warn_caller
from .core_options import number, option
from .core_stats import StatField, StatsSchema
from .core_resources import TextBounds

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """The official normalisation: lowercase, no punctuation, no articles, single spaces."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split())


def _f1_of_tokens(prediction_tokens: Sequence[str], gold_tokens: Sequence[str]) -> float:
    common = Counter(prediction_tokens) & Counter(gold_tokens)
    same = sum(common.values())
    if same == 0:
        return 0
    precision = 1.0 * same / len(prediction_tokens)
    recall = 1.0 * same / len(gold_tokens)
    return (2 * precision * recall) / (precision + recall)


def squad_v1_scores(prediction: str, answers: Sequence[str]) -> tuple[int, float]:
    """(exact match, F1) of one prediction against its gold answers, as SQuAD v1.1's script computes them."""
    normalized = normalize_answer(prediction)
    tokens = normalized.split()
    exact = 0
    f1 = 0.0
    for index, answer in enumerate(answers):
        gold = normalize_answer(answer)
        exact = max(exact, int(normalized == gold))
        score = _f1_of_tokens(tokens, gold.split())
        f1 = score if index == 0 else max(f1, score)
    return exact, float(f1)


def _v2_tokens(text: str) -> list[str]:
    return normalize_answer(text).split() if text else []


def squad_v2_scores(prediction: str, answers: Sequence[str]) -> tuple[int, float]:
    """(exact, F1) as SQuAD v2.0's script computes them: answers that normalise to nothing are dropped, and a
    question without answers has the single gold answer "" (only an empty prediction matches it)."""
    gold_answers = [answer for answer in answers if normalize_answer(answer)] or [""]
    normalized = normalize_answer(prediction)
    prediction_tokens = _v2_tokens(prediction)
    exact = max(int(normalize_answer(answer) == normalized) for answer in gold_answers)
    f1 = max(_v2_f1(_v2_tokens(answer), prediction_tokens) for answer in gold_answers)
    return exact, float(f1)


def _v2_f1(gold_tokens: list[str], prediction_tokens: list[str]) -> float:
    if not gold_tokens or not prediction_tokens:
        return int(gold_tokens == prediction_tokens)
    return _f1_of_tokens(prediction_tokens, gold_tokens)


# -- SQuAD v1.1 ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SquadOptions(TextBounds):
    """evaluate's ``squad`` has no options."""

    metric_name = "squad"


def squad_schema(metric: str = "squad", options: SquadOptions | None = None) -> StatsSchema:
    """``exact``/``f1``: per-question scores (0..1) summed; ``total``: questions; ``unanswered``: questions
    with no prediction of their id (scored 0). SQuAD v1.1 has no options."""
    return StatsSchema(metric, (StatField("exact"), StatField("f1", "fsum"), StatField("total"),
                                StatField("unanswered")))


def predictions_by_id(predictions: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """The prediction of each id (the last one where an id repeats, as the official scripts' dicts keep)."""
    return {prediction["id"]: prediction for prediction in predictions}


def squad_rows(predictions: Sequence[Mapping[str, Any]], references: Sequence[Mapping[str, Any]],
               options: SquadOptions | None = None) -> list[tuple]:
    """One row per reference (checked records, see ``core_squad_inputs``): (exact, f1, 1, unanswered)."""
    by_id = predictions_by_id(predictions)
    rows = []
    for reference in references:
        prediction = by_id.get(reference["id"])
        if prediction is None:
            rows.append((0, 0.0, 1, 1))
            continue
        exact, f1 = squad_v1_scores(prediction["prediction_text"], reference["answers"]["text"])
        rows.append((exact, f1, 1, 0))
    return rows


def squad_from_totals(totals: Mapping[str, Any], options: SquadOptions | None = None) -> dict[str, float]:
    """evaluate's ``squad`` result: ``exact_match`` and ``f1``, 0 to 100."""
    total = totals["total"]
    if not total:
        raise ValueError("squad: no questions to score; the score of an empty corpus is undefined")
    return {"exact_match": 100.0 * totals["exact"] / total, "f1": 100.0 * totals["f1"] / total}


# -- SQuAD v2.0 ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SquadV2Options(TextBounds):
    """evaluate's ``squad_v2`` options."""

    metric_name = "squad_v2"

    no_answer_threshold: float = option(1.0, number(), stats=True)


_V2_GROUPS = ("", "has_ans_", "no_ans_")
_V2_FIELDS = (
    *(StatField(name) for name in ("total", "exact")), StatField("f1", "fsum"),
    *(StatField(name) for name in ("has_ans_total", "has_ans_exact")), StatField("has_ans_f1", "fsum"),
    *(StatField(name) for name in ("no_ans_total", "no_ans_exact")), StatField("no_ans_f1", "fsum"),
    # what the best-threshold walk needs of each question (kept per example; their totals are not used)
    StatField("raw_exact"), StatField("raw_f1", "fsum"), StatField("nonempty_predictions"),
    StatField("no_answer_probability", "max"), StatField("prediction_index", "max"),
)


def squad_v2_schema(metric: str = "squad_v2") -> StatsSchema:
    """Per question: ``exact``/``f1`` after the no-answer threshold, also split by ``has_ans_``/``no_ans_``; the
    raw scores, whether the prediction is non-empty, its no-answer probability and its position among the
    predictions (for the best-threshold walk)."""
    return StatsSchema(metric, _V2_FIELDS)


def squad_v2_rows(predictions: Sequence[Mapping[str, Any]], references: Sequence[Mapping[str, Any]],
                  options: SquadV2Options, start: int = 0, metric: str = "squad_v2") -> list[tuple]:
    """One row per reference in schema order; ``start`` is the corpus index of the first prediction."""
    position = {}
    for index, prediction in enumerate(predictions):
        position.setdefault(prediction["id"], index)
    by_id = predictions_by_id(predictions)
    seen: dict[str, int] = {}
    rows = []
    threshold = options.no_answer_threshold
    for index, reference in enumerate(references):
        identifier = reference["id"]
        if identifier in seen and not same_question(reference, references[seen[identifier]]):
            raise ValueError(
                f"{metric}: `references[{start + index}]` repeats the id {identifier!r} of "
                f"`references[{start + seen[identifier]}]` with other answers; an id names one question (the "
                f"official script keeps only the last question of an id)"
            )
        seen.setdefault(identifier, index)
        prediction = by_id.get(identifier)
        if prediction is None:
            raise ValueError(
                f"{metric}: `references[{start + index}]` (id {identifier!r}) has no prediction with its id among "
                f"the predictions scored with it; every question needs one (evaluate's module fails with KeyError)"
            )
        answers = reference["answers"]["text"]
        has_answer = bool(answers)
        exact, f1 = squad_v2_scores(prediction["prediction_text"], answers)
        probability = prediction["no_answer_probability"]
        if probability > threshold:
            exact_after = int(not has_answer)
            f1_after = float(not has_answer)
        else:
            exact_after, f1_after = exact, f1
        split = ((1, exact_after, f1_after, 0, 0, 0.0) if has_answer else (0, 0, 0.0, 1, exact_after, f1_after))
        rows.append((1, exact_after, f1_after, *split, exact, f1, int(bool(prediction["prediction_text"])),
                     probability, start + position[identifier]))
    return rows


def same_question(reference: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    """Whether two references are one question repeated (same id and answers), as a bootstrap resample repeats
    it: each occurrence is then scored, where the official script keeps one."""
    return reference["id"] == other["id"] and list(reference["answers"]["text"]) == list(other["answers"]["text"])


def squad_v2_from_totals(totals: Mapping[str, Any], options: SquadV2Options | None = None) -> dict[str, Any]:
    """evaluate's ``squad_v2`` result without the best thresholds: ``exact``, ``f1``, ``total`` and the
    ``HasAns_``/``NoAns_`` breakdown where there are such questions (scores 0 to 100)."""
    result: dict[str, Any] = {}
    for group, prefix in zip(_V2_GROUPS, ("", "HasAns_", "NoAns_"), strict=True):
        total = totals[f"{group}total"]
        if not total:
            if not group:
                raise ValueError("squad_v2: no questions to score; the score of an empty corpus is undefined")
            continue
        result[f"{prefix}exact"] = 100.0 * totals[f"{group}exact"] / total
        result[f"{prefix}f1"] = 100.0 * totals[f"{group}f1"] / total
        result[f"{prefix}total"] = total
    return result


def squad_v2_best_thresholds(rows: Sequence[Sequence[Any]], schema: StatsSchema | None = None) -> dict[str, float]:
    """``best_exact``, ``best_exact_thresh``, ``best_f1``, ``best_f1_thresh``: the official walk over the
    questions in increasing no-answer probability (ties in prediction order), adding in that order."""
    schema = schema or squad_v2_schema()
    column = {name: schema.position(name) for name in
              ("has_ans_total", "raw_exact", "raw_f1", "nonempty_predictions", "no_answer_probability",
               "prediction_index")}
    has_answer_at, probability_at, index_at = (column["has_ans_total"], column["no_answer_probability"],
                                               column["prediction_index"])
    ordered = sorted(rows, key=lambda row: (row[probability_at], row[index_at]))
    unanswerable = sum(1 for row in rows if not row[has_answer_at])
    result = {}
    for name, score_at in (("exact", column["raw_exact"]), ("f1", column["raw_f1"])):
        current: float = unanswerable
        best: float = current
        threshold = 0.0
        for row in ordered:
            if row[has_answer_at]:
                current += row[score_at]
            else:
                current += -1 if row[column["nonempty_predictions"]] else 0
            if current > best:
                best = current
                threshold = row[probability_at]
        result[f"best_{name}"] = 100.0 * best / len(rows)
        result[f"best_{name}_thresh"] = threshold
    return {key: result[key] for key in ("best_exact", "best_exact_thresh", "best_f1", "best_f1_thresh")}


class SquadIdWatcher:
    """Sees every batch of a computation: warns once about references without a prediction (v1.1) and
    predictions without a reference, and refuses a prediction scored in another batch than its reference (or,
    with ``unique_references``, a question id repeated across batches with other answers)."""

    def __init__(self, metric: str, unique_references: bool = False) -> None:
        self.metric = metric
        self.unique_references = unique_references
        self.references_seen: dict[str, Mapping[str, Any]] = {}
        self.unanswered: dict[str, None] = {}
        self.unused: dict[str, None] = {}
        self.questions = 0

    def see(self, batch: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
        prediction_ids = {prediction["id"] for prediction in batch["predictions"]}
        reference_ids = [reference["id"] for reference in batch["references"]]
        self.questions += len(reference_ids)
        if self.unique_references:
            for reference in batch["references"]:
                earlier = self.references_seen.setdefault(reference["id"], reference)
                if not same_question(reference, earlier):
                    raise ValueError(f"{self.metric}: the question id {reference['id']!r} is repeated with other "
                                     f"answers; an id names one question (the official script keeps only the last "
                                     f"question of an id)")
        for identifier in reference_ids:
            if identifier not in prediction_ids:
                self.unanswered[identifier] = None
        for identifier in prediction_ids.difference(reference_ids):
            self.unused[identifier] = None

    def close(self) -> None:
        crossed = [identifier for identifier in self.unanswered if identifier in self.unused]
        if crossed:
            raise ValueError(
                f"{self.metric}: the prediction for the question id {crossed[0]!r} was scored in another batch than "
                f"its reference ({len(crossed)} such ids); add each prediction with its reference, or pass every "
                f"input to one `compute` call"
            )
        parts = []
        if self.unanswered:
            parts.append(f"{len(self.unanswered)} of {self.questions} questions have no prediction with their id "
                         f"(e.g. {next(iter(self.unanswered))!r}) and score 0, as in the official script")
        if self.unused:
            parts.append(f"{len(self.unused)} predictions have an id that no reference has (e.g. "
                         f"{next(iter(self.unused))!r}); they are ignored")
        if parts:
            warn_caller(f"{self.metric}: " + "; ".join(parts))
