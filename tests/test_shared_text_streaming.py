"""Systems that share their references, added with ``add_batch`` as an evaluation loop adds them (more examples than
the core's default streamed batch of 10,000), then scored by ``compute()``: the model metrics that embed each distinct
text of a call once read them back from evaluate's cache in one batch, so each shared reference (and source) is
embedded once, not once per batch of 10,000. (``compute`` with the inputs themselves scores them in one batch in
any case.)"""

from __future__ import annotations

import sys

import pytest
from conftest import load_metric

SYSTEMS, SEGMENTS = 3, 3_500  # 10,500 examples in corpus order, system after system
SHARED = ("bertscore", "comet", "semantic_similarity")


WORDS = ("house", "car", "tree", "river", "city", "road", "table", "window", "garden", "school", "water", "light",
         "music", "paper", "money", "story", "night", "morning", "family", "friend", "street", "market", "doctor",
         "teacher", "animal", "flower", "mountain", "island", "forest", "village", "kitchen", "letter", "winter",
         "summer", "church", "bridge", "station", "hotel", "museum", "office", "palace", "theatre", "tower",
         "horse", "bird", "fish", "apple", "bread", "chair", "door", "floor", "glass", "green", "small", "large",
         "young", "old", "happy", "early", "late")  # 60 words


def systems_corpus(with_sources: bool) -> dict[str, list]:
    """Three systems' outputs of 3,500 segments, each segment's reference (and source) the same for every system;
    texts of two or three words, so that the model's work stays small."""
    segments = [f"{first} {second}" for first in WORDS for second in WORDS][:SEGMENTS]
    corpus: dict[str, list] = {
        "predictions": [f"{segment} {WORDS[system]}" for system in range(SYSTEMS) for segment in segments],
        "references": segments * SYSTEMS,
    }
    if with_sources:
        corpus["sources"] = [f"the {segment}" for segment in segments] * SYSTEMS
    return corpus


def vendored(metric, core: str):
    """The metric's own copy of the core module ``core`` (evaluate's loader imports each metric's copy apart)."""
    return sys.modules[f"{type(metric).__module__.rpartition('.')[0]}.{core}"]


@pytest.mark.parametrize("name", SHARED)
def test_added_systems_sharing_references_are_read_back_in_one_batch(name: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    metric = load_metric(name)
    corpus = systems_corpus(name == "comet")
    assert len(corpus["predictions"]) > 10_000
    sizes: list[int] = []
    example_rows = type(metric).example_rows

    def spy(self, batch, options):
        sizes.append(batch.size)
        return example_rows(self, batch, options)

    monkeypatch.setattr(type(metric), "example_rows", spy)
    embedded: list[str] = []
    if name == "comet":
        core = vendored(metric, "core_comet")
        embed = core._embed
        monkeypatch.setattr(core, "_embed", lambda loaded, ids, *rest: embedded.extend(map(str, ids))
                            or embed(loaded, ids, *rest))
    else:
        core = vendored(metric, "core_embed")
        encode = core.encode_texts
        monkeypatch.setattr(core, "encode_texts", lambda tokenizer, texts, *rest: embedded.extend(texts)
                            or encode(tokenizer, texts, *rest))
    for start in range(0, SYSTEMS * SEGMENTS, 1000):
        metric.add_batch(**{column: values[start:start + 1000] for column, values in corpus.items()})
    result = metric.compute()
    assert sizes == [SYSTEMS * SEGMENTS]
    scores = result.get("scores", result.get("similarities", result.get("f1")))
    assert len(scores) == SYSTEMS * SEGMENTS
    distinct = SEGMENTS * (2 if name == "comet" else 1) + SYSTEMS * SEGMENTS  # (sources,) references, predictions
    # COMET's chunk of 24,576 distinct texts holds them all; BERTScore's and semantic similarity's chunks of 2,048
    # and 4,096 predictions take each reference's three predictions together, so a reference is embedded again
    # only where a chunk's end falls among its predictions (at most once per chunk)
    chunks = 1 if name == "comet" else -(-SYSTEMS * SEGMENTS // (2048 if name == "bertscore" else 4096))
    # (in batches of 10,000 examples, the second, 500 of the third system's, embedded 500 references again)
    assert distinct <= len(embedded) <= distinct + chunks - 1
