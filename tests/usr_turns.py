"""The USR annotation release (Mehri & Eskenazi 2020) in the shared data, as turn-level pairs for the overlap
metrics: every annotated response of a dialogue context with that context's original ground-truth response as
its reference, and the mean of its three Overall ratings."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

USR_FILES = {"topical_chat": Path("usr") / "usr_topical_chat.json", "persona_chat": Path("usr") / "usr_percona_chat.json"}
GROUND_TRUTH = "Original Ground Truth"


@dataclass(frozen=True)
class Turn:
    """One annotated response: its text, the context's ground-truth response, the model, the mean Overall."""

    context: int
    model: str
    response: str
    reference: str
    overall: float


def read_turns(data: Path, corpus: str) -> list[Turn]:
    """Every response of ``corpus`` ('topical_chat' or 'persona_chat'), ground truths included, in file order."""
    with open(data / USR_FILES[corpus], encoding="utf-8") as handle:
        contexts = json.load(handle)
    turns = []
    for index, context in enumerate(contexts):
        truths = [response["response"] for response in context["responses"] if response["model"] == GROUND_TRUTH]
        assert len(truths) == 1, f"context {index} has {len(truths)} ground-truth responses"
        for response in context["responses"]:
            ratings = response["Overall"]
            turns.append(Turn(index, response["model"], response["response"], truths[0], sum(ratings) / len(ratings)))
    return turns


def turns_or_skip(data: Path, corpus: str) -> list[Turn]:
    """:func:`read_turns`, skipping the calling test when the file is absent."""
    import pytest

    path = data / USR_FILES[corpus]
    if not path.is_file():
        pytest.skip(f"USR annotations not found at {path}")
    return read_turns(data, corpus)
