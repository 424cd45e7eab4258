"""MetricX's regression model: the released `MT5ForRegression` checkpoints read into transformers' mT5 stacks.

google-research/metricx's `MT5ForRegression` (metricx24/models.py, identical to metricx23/models.py) has the
modules of transformers' `MT5ForConditionalGeneration` (`shared`, `encoder`, `decoder`, `lm_head`) under the same
names; its forward (lines 105-186) encodes the input, runs the decoder one step from token 0, projects the step's
output with `lm_head` (rescaled by d_model^-0.5 first when the embeddings are tied) and returns the logit of token
250089 ("<extra_id_10>"), clipped to [0, 25]. Here the encoder and decoder are transformers' `MT5Model` and only
row 250089 of `lm_head` is kept, so the vocabulary-wide projection (a quarter of a billion multiply-adds per
example for the XL model, and its memory) is skipped.

Weights are read with safetensors or ``torch.load(weights_only=True)``, never by unpickling code: every file the
released checkpoints hold is accepted (see the metric card), a pickle that asks for anything beyond tensors is
refused by torch.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from torch import nn

SCORE_TOKEN = 250089  # metricx24/models.py line 183: `predictions = lm_logits[:, 0, 250089]`
SCORE_RANGE = (0.0, 25.0)  # line 186: `torch.clamp(predictions, 0, 25)`
DTYPES = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}
_SIZES = ("vocab_size", "d_model", "d_kv", "d_ff", "num_layers", "num_heads")
_EMBEDDING_ALIASES = ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight")


def check_config(config: Any) -> dict[str, Any]:
    """The checkpoint's config.json, checked to be an mT5 configuration with MetricX's score row; a ValueError
    saying what is wrong otherwise."""
    if not isinstance(config, dict):
        raise ValueError("its config.json does not hold a JSON object")
    if config.get("model_type") != "mt5":
        raise ValueError(f"its config.json has model_type {config.get('model_type')!r}, not 'mt5'")
    for name in _SIZES:
        value = config.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"config.json field {name!r} must be a positive integer, got {value!r}")
    if config["vocab_size"] <= SCORE_TOKEN:
        raise ValueError(f"its vocabulary of {config['vocab_size']} tokens has no score row {SCORE_TOKEN} (MetricX "
                         f"reads the logit of token {SCORE_TOKEN}, in mT5's vocabulary of 250112)")
    dtype = config.get("torch_dtype", config.get("dtype", "float32"))
    if dtype not in DTYPES:
        raise ValueError(f"config.json field 'torch_dtype' {dtype!r} is not one of {sorted(DTYPES)}")
    return config


def saved_precision(config: Mapping[str, Any]) -> str:
    """The precision the checkpoint was saved in ('fp32' or 'bf16' for the released ones), which the official code
    runs it in (`from_pretrained(..., torch_dtype="auto")`, metricx24/predict.py line 141)."""
    return DTYPES[config.get("torch_dtype", config.get("dtype", "float32"))]


class MetricxRegressor(nn.Module):
    """MetricX: padded input ids and their attention mask in, one score in [0, 25] per row out."""

    def __init__(self, stacks: nn.Module, row: torch.Tensor, scale: float) -> None:
        super().__init__()
        self.stacks = stacks
        self.register_buffer("row", row)
        self.scale = scale

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        start = torch.zeros((ids.shape[0], 1), dtype=torch.long, device=ids.device)  # models.py line 133
        output = self.stacks(input_ids=ids, attention_mask=mask, decoder_input_ids=start, use_cache=False)
        step = output.last_hidden_state[:, 0]
        if self.scale != 1.0:  # tied embeddings: models.py lines 174-178
            step = step * self.scale
        return torch.clamp(step @ self.row, *SCORE_RANGE)


def _transformers_config(config: Mapping[str, Any]) -> Any:
    from transformers import MT5Config

    known = {key: value for key, value in config.items()
             if key not in ("architectures", "_name_or_path", "transformers_version", "torch_dtype", "dtype")}
    return MT5Config(**known)


def build_regressor(config: Mapping[str, Any], state: dict[str, torch.Tensor], dtype: torch.dtype
                    ) -> MetricxRegressor:
    """The model with the checkpoint's weights in ``dtype``; a ValueError lists missing, unexpected or mis-shaped
    weights (e.g. those of another model)."""
    from transformers import MT5Model

    settings = _transformers_config(config)
    with torch.device("meta"):
        stacks = MT5Model(settings)
    stacks.encoder.embed_tokens = stacks.decoder.embed_tokens = stacks.shared  # one tensor, as the official model
    expected = {name: tuple(tensor.shape) for name, tensor in stacks.state_dict().items()}
    # from config.json itself: transformers 5's MT5Config forces tie_word_embeddings to True; 4.30's (the official
    # code's) read it, and the released checkpoints say false
    tied = bool(config.get("tie_word_embeddings", True))
    head = "shared.weight" if tied else "lm_head.weight"
    given = dict(state)
    for alias in _EMBEDDING_ALIASES:  # transformers 4.30 saved the shared embedding three times; later files once
        if "shared.weight" in given:
            given.setdefault(alias, given["shared.weight"])
    missing = sorted(set(expected) - set(given)) + ([head] if head not in given else [])
    unexpected = sorted(set(given) - set(expected) - {"lm_head.weight"})
    if missing or unexpected:
        parts = []
        if missing:
            parts.append(f"missing {len(missing)} weights (e.g. {missing[:3]})")
        if unexpected:
            parts.append(f"{len(unexpected)} weights an mT5 regression model does not have (e.g. {unexpected[:3]})")
        raise ValueError("the weights are not those of MetricX's MT5ForRegression: " + "; ".join(parts))
    expected[head] = expected["shared.weight"]
    for name, shape in expected.items():  # every shape before any copy (a small file can claim any size)
        if tuple(given[name].shape) != shape:
            raise ValueError(f"weight {name!r} has shape {tuple(given[name].shape)}, but config.json implies {shape}")
    row = given[head][SCORE_TOKEN].to(dtype=dtype, copy=True)
    stacks.load_state_dict({name: given[name].to(dtype) for name in expected if name != "lm_head.weight"},
                           strict=True, assign=True)
    scale = config["d_model"] ** -0.5 if tied else 1.0
    return MetricxRegressor(stacks, row, scale).eval()
