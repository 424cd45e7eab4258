"""The arithmetic of unbabel-comet's multitask models around the encoder: joined inputs, error spans decoded from
tag probabilities, and how CometKiwi and XCOMET combine their scores (``UnifiedMetric.predict_step``,
``XCOMETMetric.predict_step``, ``UnifiedMetric.decode``, ``Encoder.concat_sequences``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

# unbabel-comet's weights of the three inputs' tag probabilities (mt+src, mt+ref, mt+src+ref), and XCOMET's of
# the three inputs' regression scores and of the MQM score of the error spans in its final score
SPAN_WEIGHTS = (0.1667, 0.3333, 0.5)
XCOMET_SCORE_WEIGHTS = (0.12, 0.33, 0.33, 0.22)
# XCOMET's MQM weights of the error severities, and the cap of a sentence's penalty
MQM_PENALTIES = {"minor": 1, "major": 5, "critical": 10}
MQM_CAP = 25


def joined_ids(parts: Sequence[Sequence[int]], cls_id: int, sep_id: int, max_positions: int) -> list[int]:
    """One input of the tokenized segments (each ``<s> ... </s>``, padding removed): ``<s> a </s></s> b </s>...``,
    cut after ``max_positions`` tokens (unbabel-comet cuts without closing the sequence)."""
    joined = list(parts[0])
    for part in parts[1:]:
        joined = [cls_id, *joined[1:-1], sep_id, sep_id, *part[1:-1], sep_id]
    return joined[:max_positions]


def decode_spans(probabilities: torch.Tensor, token_ids: Sequence[int], offsets: Sequence[tuple[int, int]],
                 labels: Sequence[str], decode: Callable[[list[int]], str],
                 threshold: float | None = None) -> list[dict[str, Any]]:
    """The error spans of one translation from its tokens' tag probabilities ([tokens, labels], "O" first): runs
    of error tokens ("I-<severity>"), closed by an "O" token (a run still open at the end is dropped, as
    unbabel-comet drops it), each with its text, mean confidence, severity (its first token's) and character
    offsets. A token is an error where its most probable label is one or, with a ``threshold`` (unbabel-comet's
    ``set_decoding_threshold``), where its error labels' probabilities sum to more than the threshold: its label
    and confidence are then its most probable error label's."""
    confidence, best = probabilities.topk(1, dim=-1)
    if threshold is not None:
        error_confidence, error_best = probabilities[:, 1:].topk(1, dim=-1)
        is_error = probabilities[:, 1:].sum(dim=-1, keepdim=True) > threshold
        confidence = torch.where(is_error, error_confidence, probabilities[:, :1])
        best = torch.where(is_error, error_best + 1, torch.zeros_like(best))
    spans: list[dict[str, Any]] = []
    start: int | None = None
    for position, label_id in enumerate(best[:, 0].tolist()):
        label = labels[label_id]
        if label.startswith("I") and start is None:
            start = position
        elif label == "O" and start is not None:
            spans.append({
                "text": decode(list(token_ids[start:position])),
                "confidence": confidence[start:position, 0].mean().item(),
                "severity": labels[int(best[start, 0])].split("-")[1],
                "start": offsets[start][0],
                "end": offsets[position - 1][1],
            })
            start = None
    return spans


def mixed_probabilities(probabilities: Sequence[torch.Tensor]) -> torch.Tensor:
    """The tag probabilities of one translation from its three inputs (mt+src, mt+ref, mt+src+ref), weighted as
    unbabel-comet weighs them; one input's are its own."""
    if len(probabilities) == 1:
        return probabilities[0]
    weights = torch.tensor(SPAN_WEIGHTS)
    return torch.sum(torch.stack([part * weight for weight, part in zip(weights, probabilities, strict=True)]), dim=0)


def mqm_scores(spans: Sequence[Sequence[dict[str, Any]]]) -> torch.Tensor:
    """XCOMET's MQM score of each translation's error spans, in [0, 1]: 1 - min(25, penalties) / 25."""
    penalties = [min(sum(MQM_PENALTIES.get(span["severity"], 0) for span in sentence), MQM_CAP) for sentence in spans]
    return (torch.tensor(penalties) * -1 + MQM_CAP) / MQM_CAP


def unified_scores(scores: Sequence[torch.Tensor]) -> torch.Tensor:
    """A unified model's scores: the mean of the three inputs' scores, or the one input's."""
    return scores[0] if len(scores) == 1 else torch.stack(list(scores), dim=0).mean(dim=0)


def xcomet_scores(scores: Sequence[torch.Tensor], mqm: torch.Tensor, weights: Sequence[float]) -> torch.Tensor:
    """XCOMET's final scores: the regression scores capped at 1 and weighted, plus the weighted MQM score; with one
    input (no reference) its capped score carries the weights of all three."""
    capped = [torch.where(score > 1.0, 1.0, score) for score in scores]
    if len(capped) == 1:
        regression = capped[0] * sum(weights[:3])
    else:
        regression = torch.stack([score * weight for score, weight in zip(capped, weights[:3], strict=True)],
                                 dim=0).sum(dim=0)
    return regression + mqm.to(regression.device) * weights[3]
