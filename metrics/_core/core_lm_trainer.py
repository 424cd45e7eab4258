"""Perplexity inside ``transformers.Trainer``: logits reduced to per-token NLL on the device, then summed.

Pass :func:`preprocess_logits_for_metrics` to the Trainer: each evaluation
batch's logits ([batch, length, vocabulary]) become the NLL of each labelled
token ([batch, length], float32), computed on the device one sequence at a
time, so the Trainer gathers and keeps batch x length numbers instead of batch
x length x vocabulary logits. Position t holds the NLL of ``labels[t]``
predicted from the logits at t - 1 (the causal shift), and -100 where there is
no label (``labels == -100``, the first position, and the Trainer's own padding,
which is also -100: an NLL is never negative, so the two cannot be confused).
:class:`PerplexityFromNll` is the matching ``compute_metrics``.

Trainer's ``eval_loss`` is the mean over batches of each batch's mean token
loss (weighted by sequences, not tokens); ``exp(eval_loss)`` equals the
perplexity here only when every batch has the same number of labelled tokens.
"""

from __future__ import annotations

import math
from typing import Any

import torch

IGNORE_INDEX = -100
LN2 = math.log(2.0)


def token_nll(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """[batch, length] float32 NLL of ``labels[:, t]`` under ``logits[:, t - 1]``; -100 where not labelled."""
    if isinstance(logits, (tuple, list)):
        logits = logits[0]
    if logits.dim() != 3 or labels.shape != logits.shape[:2]:
        raise ValueError(
            f"perplexity: logits must be [batch, length, vocabulary] and labels [batch, length] with the same "
            f"batch and length, got {tuple(logits.shape)} and {tuple(labels.shape)}"
        )
    out = torch.full(labels.shape, float(IGNORE_INDEX), dtype=torch.float32, device=logits.device)
    targets = labels[:, 1:].to(logits.device)
    for row in range(logits.shape[0]):  # one sequence at a time: at most length x vocabulary floats extra
        nll = torch.nn.functional.cross_entropy(
            logits[row, :-1].float(), targets[row], ignore_index=IGNORE_INDEX, reduction="none"
        )
        out[row, 1:] = torch.where(targets[row] == IGNORE_INDEX, torch.full_like(nll, float(IGNORE_INDEX)), nll)
    return out


def preprocess_logits_for_metrics(logits: Any, labels: Any) -> torch.Tensor:
    """For ``Trainer(preprocess_logits_for_metrics=...)``: per-token NLL instead of logits."""
    with torch.no_grad():
        return token_nll(logits, labels)


def nll_totals(nll: Any) -> dict[str, Any]:
    """Summed NLL, scored tokens, per-sequence perplexities of an array of per-token NLLs (-100: none)."""
    import numpy as np

    if isinstance(nll, (tuple, list)):
        nll = nll[0]
    if hasattr(nll, "detach"):
        nll = nll.detach().float().cpu().numpy()
    array = np.asarray(nll, dtype=np.float64)
    if array.ndim != 2:
        raise ValueError(f"perplexity: expected per-token NLLs of shape [examples, length] (pass "
                         f"preprocess_logits_for_metrics to the Trainer), got shape {array.shape}")
    scored = array != IGNORE_INDEX
    if np.isnan(array).any():
        raise ValueError("perplexity: the per-token NLLs hold NaN (the model's logits were not finite)")
    if (array[scored] < 0).any():
        raise ValueError("perplexity: negative per-token NLLs; predictions are not the output of "
                         "preprocess_logits_for_metrics")
    per_row_nll = [math.fsum(row[mask].tolist()) for row, mask in zip(array, scored, strict=True)]
    per_row_tokens = scored.sum(axis=1).tolist()
    return {"nll": math.fsum(per_row_nll), "tokens": int(sum(per_row_tokens)),
            "perplexities": [math.exp(n / t) for n, t in zip(per_row_nll, per_row_tokens, strict=True) if t]}


class PerplexityFromNll:
    """A ``compute_metrics`` for causal LMs: perplexity and cross-entropy from per-token NLLs.

    Returns ``perplexity`` (exp of total NLL over total labelled tokens), ``mean_perplexity`` (mean over
    sequences with a labelled token), ``cross_entropy`` (nats per token), ``bits_per_token`` and ``tokens``.
    """

    def __call__(self, eval_prediction: Any) -> dict[str, float]:
        predictions = eval_prediction.predictions if hasattr(eval_prediction, "predictions") else eval_prediction[0]
        totals = nll_totals(predictions)
        if totals["tokens"] == 0:
            raise ValueError("perplexity: no labelled token in the evaluation set; perplexity is undefined")
        cross_entropy = totals["nll"] / totals["tokens"]
        return {
            "perplexity": math.exp(cross_entropy),
            "mean_perplexity": math.fsum(totals["perplexities"]) / len(totals["perplexities"]),
            "cross_entropy": cross_entropy,
            "bits_per_token": cross_entropy / LN2,
            "tokens": float(totals["tokens"]),
        }
