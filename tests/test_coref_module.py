"""The coval module through evaluate.load: CoNLL lines and entity lists give the same scores as the core, options,
Dataset-style add_batch, bad input."""

from __future__ import annotations

import pytest

from conftest import metric_fixture
from coref_scorer_cases import CASES, COLUMNS
from metrics._core.core_coref import document_statistics, scores_from_totals
from metrics._core.core_coref_inputs import entities_from_conll

coval = metric_fixture("coval")


def lines(name: str) -> list[str]:
    """A file's coreference column as CoNLL lines (document, part, position, word, column)."""
    return [f"doc 0 {index} w {column}" for index, column in enumerate(COLUMNS[name])]


def test_corpus_of_the_reference_cases_in_both_forms(coval) -> None:
    keys, responses = [lines(key) for _, key, _, _ in CASES], [lines(response) for _, _, response, _ in CASES]
    from_lines = coval.compute(predictions=responses, references=keys)
    as_entities = [[entities_from_conll("t", "x", document) for document in side] for side in (responses, keys)]
    assert coval.compute(predictions=as_entities[0], references=as_entities[1]) == from_lines
    # the corpus micro-average: numerators and denominators summed over the 36 documents, then divided
    statistics = [document_statistics([[tuple(m) for m in e] for e in key], [[tuple(m) for m in e] for e in response])
                  for response, key in zip(*as_entities, strict=True)]
    summed = {name: sum(document[name] for document in statistics) for name in statistics[0]}
    expected = scores_from_totals(summed)
    assert from_lines.keys() == expected.keys()
    assert all(from_lines[name] == pytest.approx(expected[name], rel=1e-12) for name in expected)


def test_published_case_through_the_module(coval) -> None:
    case, key, response, expected = next(case for case in CASES if case[0] == "A2")
    result = coval.compute(predictions=[lines(response)], references=[lines(key)])
    assert [result["muc/recall"], result["muc/precision"], result["muc/f1"]] == pytest.approx(expected["muc"])
    assert result["bcub/f1"] == pytest.approx(14 / 25)


def test_add_batch_equals_compute(coval) -> None:
    module = coval
    keys, responses = [lines(key) for _, key, _, _ in CASES[:10]], [lines(response) for _, _, response, _ in CASES[:10]]
    module.add_batch(predictions=responses[:4], references=keys[:4])
    module.add_batch(predictions=responses[4:], references=keys[4:])
    assert module.compute() == coval.compute(predictions=responses, references=keys)


def test_keep_singletons_false_removes_them(coval) -> None:
    key, response = [[[0, 0]], [[1, 1], [2, 2]]], [[[0, 0]], [[1, 1], [2, 2]]]
    assert coval.compute(predictions=[response], references=[key])["mentions/recall"] == 1.0
    result = coval.compute(predictions=[response], references=[key], keep_singletons=False)
    assert result["muc/f1"] == 1.0 and result["bcub/recall"] == 1.0


@pytest.mark.parametrize("option", ["NP_only", "min_span", "remove_nested"])
def test_parse_based_options_are_refused_clearly(coval, option: str) -> None:
    with pytest.raises(ValueError, match=f"`{option}=True` is not supported"):
        coval.compute(predictions=[[[[0, 0]]]], references=[[[[0, 0]]]], **{option: True})


@pytest.mark.parametrize(("predictions", "error", "message"), [
    ([[[[0, 0]], [[0, 0]]]], ValueError, r"`predictions\[0\]\[1\]\[0\]` \[0, 0\] is also a mention of entity 0"),
    ([[[[3, 1]]]], ValueError, r"`predictions\[0\]\[0\]\[0\]` is the span \[3, 1\]"),
    ([[[["a", "b"]]]], TypeError, r"`predictions\[0\]\[0\]\[0\]` must be a mention \[start, end\]"),
    (["(0)"], TypeError, r"`predictions\[0\]` must be a document"),
    ([["d 0 0 w (0", "d 0 1 w 1)"]], ValueError, r"`predictions\[0\]` line 2: entity 1 closes"),
])
def test_bad_documents_name_the_place(coval, predictions, error, message) -> None:
    with pytest.raises(error, match=message):
        coval.compute(predictions=predictions, references=[[[[0, 0]]]])
