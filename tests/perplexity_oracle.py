"""The oracle for perplexity: evaluate's ``perplexity`` module (evaluate-metric/perplexity, evaluate 0.4),
reimplemented from its source, since the module itself is fetched from the Hub and cannot be installed offline.
Used by the tests and by ``scripts/bench_perplexity.py``."""

from __future__ import annotations

from typing import Any

import torch


def evaluate_perplexity(model: Any, tokenizer: Any, predictions: list[str], batch_size: int = 16,
                        add_start_token: bool = True, max_length: int | None = None,
                        device: str | torch.device = "cpu") -> dict[str, Any]:
    """evaluate's ``Perplexity._compute`` arithmetic: one padded tensor for all texts, a BOS column, masked
    cross-entropy per batch; the pad-token and start-token handling as its source has them (it sets the caller's
    tokenizer's pad token; its ``special_tokens_map_extended`` is gone in transformers 5: an AttributeError)."""
    if tokenizer.pad_token is None and batch_size > 1:
        existing = list(tokenizer.special_tokens_map_extended.values())
        assert len(existing) > 0, "If batch_size > 1, model must have at least one special token to use for padding."
        tokenizer.add_special_tokens({"pad_token": existing[0]})
    if add_start_token and max_length:
        assert tokenizer.bos_token is not None
        max_tokenized_len = max_length - 1
    else:
        max_tokenized_len = max_length
    encodings = tokenizer(predictions, add_special_tokens=False, padding=True,
                          truncation=bool(max_tokenized_len), max_length=max_tokenized_len, return_tensors="pt",
                          return_attention_mask=True).to(device)
    encoded_texts, attn_masks = encodings["input_ids"], encodings["attention_mask"]
    ppls = []
    loss_fct = torch.nn.CrossEntropyLoss(reduction="none")
    for start in range(0, len(encoded_texts), batch_size):
        encoded_batch = encoded_texts[start:start + batch_size]
        attn_mask = attn_masks[start:start + batch_size]
        if add_start_token:
            bos = torch.tensor([[tokenizer.bos_token_id]] * encoded_batch.size(dim=0)).to(device)
            encoded_batch = torch.cat([bos, encoded_batch], dim=1)
            attn_mask = torch.cat([torch.ones(bos.size(), dtype=torch.int64).to(device), attn_mask], dim=1)
        labels = encoded_batch
        with torch.no_grad():
            out_logits = model(encoded_batch, attention_mask=attn_mask).logits
        shift_logits = out_logits[..., :-1, :].contiguous()
        shift_labels = labels[..., 1:].contiguous()
        shift_mask = attn_mask[..., 1:].contiguous()
        ppls += torch.exp((loss_fct(shift_logits.transpose(1, 2), shift_labels) * shift_mask).sum(1)
                          / shift_mask.sum(1)).tolist()
    return {"perplexities": ppls, "mean_perplexity": sum(ppls) / len(ppls)}
