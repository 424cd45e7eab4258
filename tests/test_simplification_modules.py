"""The sari and readability modules through evaluate's loader: equal to their cores (tested against their
oracles in test_sari_core.py and test_readability_core.py), evaluate's published SARI example, exact shards
through Dataset.map statistics, per-text outputs, and the main job's example sources."""

from __future__ import annotations

import datasets
import pytest

from conftest import ROOT, load_metric, read_lines
from metrics._core.core_readability import ReadabilityOptions, readability_example_scores, readability_rows
from metrics._core.core_sari import SARI_VARIANTS, SariOptions, sari_score

EXAMPLES = ROOT / "scripts" / "examples"


@pytest.fixture(scope="module")
def examples() -> dict[str, list]:
    return {"sources": read_lines(EXAMPLES / "sources.txt"), "predictions": read_lines(EXAMPLES / "predictions.txt"),
            "references": [list(pair) for pair in zip(read_lines(EXAMPLES / "references.txt"),
                                                       read_lines(EXAMPLES / "references-2.txt"), strict=True)]}


def test_sari_published_example_of_evaluate() -> None:
    """evaluate's `sari` docstring: {'sari': 26.953601953601954} for this example (its arithmetic)."""
    sari = load_metric("sari")
    result = sari.compute(sources=["About 95 species are currently accepted."],
                          predictions=["About 95 you now get in."],
                          references=[["About 95 species are currently known.", "About 95 species are now accepted.",
                                       "95 species are now accepted."]], variant="evaluate")
    assert result["sari"] == pytest.approx(26.953601953601954, abs=1e-12)


@pytest.mark.parametrize("variant", SARI_VARIANTS)
def test_sari_module_equals_its_core_and_shards_merge(variant: str, examples: dict) -> None:
    sari = load_metric("sari")
    expected = sari_score(examples["sources"], examples["predictions"], examples["references"],
                          SariOptions(variant=variant))
    assert sari.compute(**examples, variant=variant) == expected
    stats = datasets.Dataset.from_dict(examples).map(
        lambda batch: sari.example_stats(batch["sources"], batch["predictions"], batch["references"],
                                         variant=variant),
        batched=True, batch_size=2, remove_columns=["sources", "predictions", "references"])
    assert sari.compute_from_stats(stats, variant=variant) == expected
    assert set(expected) == {"sari", "sari_add", "sari_keep", "sari_del"} and 0 <= expected["sari"] <= 100


def test_readability_module_equals_its_core_per_text_and_sharded(examples: dict) -> None:
    readability = load_metric("readability")
    texts = examples["predictions"] + ["", "..."]
    result = readability.compute(predictions=texts, per_text=True)
    per_text = readability_example_scores(readability_rows(texts, ReadabilityOptions()), ReadabilityOptions())
    assert result["per_text_flesch_kincaid_grade"] == [scores["flesch_kincaid_grade"] for scores in per_text]
    assert result["per_text_flesch_kincaid_grade"][-2:] == [None, None]  # no words: undefined, not 0 or NaN
    stats = datasets.Dataset.from_dict({"predictions": texts}).map(
        lambda batch: readability.example_stats(batch["predictions"]), batched=True, batch_size=3,
        remove_columns=["predictions"])
    sharded = readability.compute_from_stats(stats)
    assert sharded == {key: value for key, value in result.items() if not key.startswith("per_text_")}
    # the corpus is one long text: the formula on summed counts, worked from the counts themselves
    sentences, words, syllables = (sum(row[index] for row in readability_rows(texts, ReadabilityOptions()))
                                   for index in range(3))
    assert sharded["flesch_kincaid_grade"] == 0.39 * (words / sentences) + 11.8 * (syllables / words) - 15.59


def test_readability_of_a_corpus_without_words_is_an_error() -> None:
    with pytest.raises(ValueError, match="readability: no text holds a word"):
        load_metric("readability").compute(predictions=["", "!!"])
