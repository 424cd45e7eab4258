"""The predictions a token-level model makes at the labelled positions, computed one example at a time outside
any Trainer: the independent side of the Trainer tests."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import torch


def labelled_argmax(model: Any, examples: Iterable[Mapping[str, Any]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """(argmax ids, label ids) of each example at its labelled positions (label != -100), unbatched."""
    model.eval()
    pairs = []
    with torch.no_grad():
        for example in examples:
            logits = model(input_ids=torch.tensor([example["input_ids"]])).logits[0]
            labels = np.array(example["labels"])
            keep = labels != -100
            pairs.append((logits.argmax(-1).numpy()[keep], labels[keep]))
    return pairs
