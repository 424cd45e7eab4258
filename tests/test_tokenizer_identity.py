"""Custom tokenizers never give stale or silently merged statistics (bleu and rouge).

A cache keyed on a tokenizer object returned stale counts after the object's state changed, failed on
unhashable callables, and statistics made with two different lambdas merged because both were labelled
`<lambda>`. Now only tokenizers of known identity (built-in names, or objects with a `signature()` method)
are cached, and statistics made with a tokenizer of unknown identity merge only with statistics made with
the same object in the same process.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from conftest import load_metric

PREDICTIONS = ["the cat sat on the mat today", "a storm cut the power again"]
REFERENCES = [["the cat sat on the mat"], ["a storm cut power again"]]


class Switchable:
    """A stateful tokenizer: splits on spaces, or into characters after `characters = True`."""

    def __init__(self) -> None:
        self.characters = False

    def __call__(self, text: str) -> list[str]:
        return list(text.replace(" ", "")) if self.characters else text.split()


@dataclass
class Unhashable:
    """A dataclass instance (eq=True without frozen makes it unhashable)."""

    lowercase: bool = True

    def __call__(self, text: str) -> list[str]:
        return (text.lower() if self.lowercase else text).split()


class Named:
    """A tokenizer that says what it does."""

    def signature(self) -> str:
        return "whitespace-v1"

    def __call__(self, text: str) -> list[str]:
        return text.split()


def test_a_stateful_tokenizer_is_called_afresh() -> None:
    bleu = load_metric("bleu")
    tokenizer = Switchable()
    words = bleu.compute(predictions=PREDICTIONS, references=REFERENCES, tokenizer=tokenizer)
    tokenizer.characters = True
    characters = bleu.compute(predictions=PREDICTIONS, references=REFERENCES, tokenizer=tokenizer)
    # 7 + 6 words; without spaces the predictions have 3+3+3+2+3+3+5 = 22 and 1+5+3+3+5+5 = 22 characters,
    # the references 3+3+3+2+3+3 = 17 and 1+5+3+5+5 = 19
    assert words["translation_length"] == 13 and characters["translation_length"] == 44
    assert characters["reference_length"] == 17 + 19


def test_an_unhashable_tokenizer_works() -> None:
    result = load_metric("bleu").compute(predictions=PREDICTIONS, references=REFERENCES, tokenizer=Unhashable())
    assert result["translation_length"] == 13


def test_statistics_of_two_different_lambdas_do_not_merge() -> None:
    bleu = load_metric("bleu")
    first = bleu.example_stats(PREDICTIONS[:1], REFERENCES[:1], tokenizer=lambda text: text.split())
    second = bleu.example_stats(PREDICTIONS[1:], REFERENCES[1:], tokenizer=lambda text: list(text))
    with pytest.raises(ValueError, match="statistics computed with different options cannot be merged"):
        bleu.reduce_stats([*_records(first), *_records(second)])


def test_statistics_of_one_tokenizer_object_merge_and_score() -> None:
    bleu = load_metric("bleu")
    tokenizer = Unhashable()
    stats = [bleu.example_stats(PREDICTIONS[i : i + 1], REFERENCES[i : i + 1], tokenizer=tokenizer) for i in (0, 1)]
    merged = bleu.compute_from_stats([bleu.reduce_stats(part) for part in stats], tokenizer=tokenizer)
    assert merged == bleu.compute(predictions=PREDICTIONS, references=REFERENCES, tokenizer=tokenizer)
    with pytest.raises(ValueError, match="were computed with options"):
        bleu.compute_from_stats(stats[0], tokenizer=Unhashable())  # another object: identity unknown


def test_a_tokenizer_with_a_signature_is_known() -> None:
    bleu = load_metric("bleu")
    stats = bleu.example_stats(PREDICTIONS, REFERENCES, tokenizer=Named())
    assert stats["signature"][0] == "bleu|tok:whitespace-v1|order:4|reflen:closest"
    assert bleu.compute_from_stats(stats, tokenizer=Named()) == bleu.compute(
        predictions=PREDICTIONS, references=REFERENCES, tokenizer=Named()
    )


def test_rouge_labels_custom_tokenizers_by_identity() -> None:
    rouge = load_metric("rouge")
    first = rouge.example_stats(PREDICTIONS, REFERENCES, tokenizer=lambda text: text.split())
    second = rouge.example_stats(PREDICTIONS, REFERENCES, tokenizer=lambda text: text.split())
    assert first["signature"][0] != second["signature"][0]
    named = rouge.example_stats(PREDICTIONS, REFERENCES, tokenizer=Named())
    assert "tok:custom:whitespace-v1" in named["signature"][0]


def _records(columns: dict) -> list[dict]:
    return [dict(zip(columns, values, strict=True)) for values in zip(*columns.values(), strict=True)]
