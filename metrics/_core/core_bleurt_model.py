"""The BLEURT regression model of bleurt-pytorch checkpoints, for inference, written on plain PyTorch.

bleurt-pytorch's ``BleurtForSequenceClassification`` is BERT with two changes: the embeddings (word + token type +
absolute position, then LayerNorm) may be narrower than the encoder (``embedding_size``), in which case a linear
``embedding_projection`` maps them to ``hidden_size`` before the first layer; and the head is a tanh pooler on the
first ([CLS]) token followed by a linear layer to one output, the score. The layers are post-LayerNorm BERT layers
(self-attention, dense, residual LayerNorm; feed-forward, dense, residual LayerNorm). Dropout is inactive at
inference and left out. Weights are read from the checkpoint's safetensors (or, for older checkpoints,
``pytorch_model.bin``, as the released BLEURT-20 holds, with ``torch.load(weights_only=True)``, which refuses any
pickled object but tensors and their containers) and checked key by key: a checkpoint missing a weight
or holding one this model does not use is rejected, never loaded in part.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from .core_encoder_rows import TokenRows
from .core_weights import read_state_dict

# Buffers bleurt-pytorch saves with the weights that carry no learned value (position ids 0..n-1).
_IGNORED_KEYS = ("bleurt.embeddings.position_ids", "bleurt.embeddings.token_type_ids")


@dataclass(frozen=True)
class BleurtConfig:
    """The fields of a bleurt-pytorch ``config.json`` that inference reads."""

    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    max_position_embeddings: int
    type_vocab_size: int
    layer_norm_eps: float
    hidden_act: str
    embedding_size: int | None
    pad_token_id: int

    @classmethod
    def from_dict(cls, config: Mapping[str, Any]) -> BleurtConfig:
        """The configuration, or a ValueError naming the first missing or ill-typed field."""
        values: dict[str, Any] = {}
        integers = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size")
        defaults = {"max_position_embeddings": 512, "type_vocab_size": 2, "pad_token_id": 0}
        for name in integers + tuple(defaults):
            value = config.get(name, defaults.get(name))
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"config.json field {name!r} must be a non-negative integer, got {value!r}")
            values[name] = value
        embedding_size = config.get("embedding_size")
        if embedding_size is not None and (isinstance(embedding_size, bool) or not isinstance(embedding_size, int)):
            raise ValueError(f"config.json field 'embedding_size' must be an integer or null, got {embedding_size!r}")
        eps = config.get("layer_norm_eps", 1e-12)
        if isinstance(eps, bool) or not isinstance(eps, (int, float)):
            raise ValueError(f"config.json field 'layer_norm_eps' must be a number, got {eps!r}")
        act = config.get("hidden_act", "gelu")
        if not isinstance(act, str):
            raise ValueError(f"config.json field 'hidden_act' must be a string, got {act!r}")
        if values["hidden_size"] == 0 or values["num_attention_heads"] == 0 or \
                values["hidden_size"] % values["num_attention_heads"]:
            raise ValueError(f"config.json: hidden_size {values['hidden_size']} is not a positive multiple of "
                             f"num_attention_heads {values['num_attention_heads']}")
        return cls(**values, layer_norm_eps=float(eps), hidden_act=act, embedding_size=embedding_size)

    @property
    def embedding_width(self) -> int:
        return self.embedding_size if self.embedding_size is not None else self.hidden_size


def _activation(name: str) -> Any:
    from transformers.activations import ACT2FN  # bleurt-pytorch's own table of activations

    if name not in ACT2FN:
        raise ValueError(f"config.json field 'hidden_act' {name!r} is not an activation transformers knows")
    return ACT2FN[name]


class BleurtIntermediate(nn.Module):
    """``activation(dense(x))``, named as BERT's block (``core_onednn`` runs a GELU inside the matrix multiply)."""

    def __init__(self, config: BleurtConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.intermediate_size)
        self.intermediate_act_fn = _activation(config.hidden_act)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.intermediate_act_fn(self.dense(hidden))


class BleurtOutput(nn.Module):
    """``LayerNorm(dense(x) + residual)``, named as BERT's block (``core_onednn`` sums inside the matrix multiply)."""

    def __init__(self, inputs: int, config: BleurtConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(inputs, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, hidden: torch.Tensor, input_tensor: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.dense(hidden) + input_tensor)


class BleurtSelfOutput(BleurtOutput):
    """The attention's output block: ``LayerNorm(dense(context) + residual)``."""


class BleurtLayer(nn.Module):
    """One post-LayerNorm BERT layer; query, key and value in one linear layer."""

    def __init__(self, config: BleurtConfig) -> None:
        super().__init__()
        hidden = config.hidden_size
        self.heads = config.num_attention_heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.attention_output = BleurtSelfOutput(hidden, config)
        self.intermediate = BleurtIntermediate(config)
        self.output = BleurtOutput(config.intermediate_size, config)

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor, rows: TokenRows) -> torch.Tensor:
        """``hidden``: [tokens, width], the real tokens of ``rows``; ``mask``: [B, 1, 1, T], 0 for tokens and the
        dtype's lowest value for padding, added to the scores."""
        batch, length, width = rows.batch, rows.length, hidden.shape[-1]
        size = width // self.heads
        qkv = rows.padded(self.qkv(hidden)).view(batch, length, 3, self.heads, size).permute(2, 0, 3, 1, 4)
        # bleurt-pytorch's arithmetic (scores scaled after the product, an additive mask, softmax, product):
        # PyTorch's fused attention on the CPU orders the sums differently and moves scores by about 1e-6.
        scores = torch.matmul(qkv[0], qkv[1].transpose(-1, -2)) / math.sqrt(size) + mask
        context = torch.matmul(torch.softmax(scores, dim=-1), qkv[2])
        hidden = self.attention_output(rows.packed(context.transpose(1, 2).reshape(batch, length, width)), hidden)
        return self.output(self.intermediate(hidden), hidden)


class BleurtRegressor(nn.Module):
    """BLEURT: token ids of (reference, candidate) pairs in, one score per pair out."""

    def __init__(self, config: BleurtConfig) -> None:
        super().__init__()
        width = config.embedding_width
        self.config = config
        self.word_embeddings = nn.Embedding(config.vocab_size, width)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, width)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, width)
        self.embedding_norm = nn.LayerNorm(width, eps=config.layer_norm_eps)
        self.projection = nn.Linear(width, config.hidden_size) if config.embedding_size is not None else None
        self.layers = nn.ModuleList(BleurtLayer(config) for _ in range(config.num_hidden_layers))
        self.pooler = nn.Linear(config.hidden_size, config.hidden_size)
        self.head = nn.Linear(config.hidden_size, 1)

    def forward(self, ids: torch.Tensor, types: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Scores [B] of a right-padded batch: ids, token types and attention mask (1 = token), all [B, T]."""
        rows = TokenRows(mask)
        positions = torch.arange(ids.shape[1], device=ids.device).expand_as(ids)
        hidden = (self.word_embeddings(rows.packed(ids)) + self.token_type_embeddings(rows.packed(types))
                  + self.position_embeddings(rows.packed(positions)))
        hidden = self.embedding_norm(hidden)
        if self.projection is not None:
            hidden = self.projection(hidden)
        # every query attends to its row's real tokens only (padding gets the lowest value, as transformers does)
        keys = (1.0 - mask[:, None, None, :].to(hidden.dtype)) * torch.finfo(hidden.dtype).min
        for layer in self.layers:
            hidden = layer(hidden, keys, rows)
        pooled = torch.tanh(self.pooler(hidden.index_select(0, rows.firsts)))
        return self.head(pooled)[:, 0]


def _expected_keys(config: BleurtConfig) -> dict[str, str]:
    """bleurt-pytorch's state-dict key of each of our parameters (query/key/value are fused separately)."""
    keys = {
        "word_embeddings.weight": "bleurt.embeddings.word_embeddings.weight",
        "position_embeddings.weight": "bleurt.embeddings.position_embeddings.weight",
        "token_type_embeddings.weight": "bleurt.embeddings.token_type_embeddings.weight",
        "embedding_norm.weight": "bleurt.embeddings.LayerNorm.weight",
        "embedding_norm.bias": "bleurt.embeddings.LayerNorm.bias",
        "pooler.weight": "bleurt.pooler.dense.weight",
        "pooler.bias": "bleurt.pooler.dense.bias",
        "head.weight": "classifier.weight",
        "head.bias": "classifier.bias",
    }
    if config.embedding_size is not None:
        keys["projection.weight"] = "bleurt.encoder.embedding_projection.weight"
        keys["projection.bias"] = "bleurt.encoder.embedding_projection.bias"
    for index in range(config.num_hidden_layers):
        theirs = f"bleurt.encoder.layer.{index}."
        ours = f"layers.{index}."
        for our, their in (("attention_output.dense", "attention.output.dense"),
                           ("attention_output.LayerNorm", "attention.output.LayerNorm"),
                           ("intermediate.dense", "intermediate.dense"), ("output.dense", "output.dense"),
                           ("output.LayerNorm", "output.LayerNorm")):
            for kind in ("weight", "bias"):
                keys[f"{ours}{our}.{kind}"] = f"{theirs}{their}.{kind}"
    return keys


def _fused_keys(index: int) -> list[str]:
    return [f"bleurt.encoder.layer.{index}.attention.self.{part}.{kind}"
            for kind in ("weight", "bias") for part in ("query", "key", "value")]


def read_renamed_state_dict(folder: Path) -> dict[str, torch.Tensor]:
    """Every tensor of the checkpoint's weight files, by name (TensorFlow-style LayerNorm gamma/beta renamed)."""
    renamed = {}
    for key, value in read_state_dict(folder).items():
        if key.endswith("LayerNorm.gamma"):
            key = key[: -len("gamma")] + "weight"
        elif key.endswith("LayerNorm.beta"):
            key = key[: -len("beta")] + "bias"
        renamed[key] = value
    return renamed


def build_regressor(config: BleurtConfig, state: Mapping[str, torch.Tensor]) -> BleurtRegressor:
    """The model with the checkpoint's weights; a ValueError lists missing, unexpected or mis-shaped weights."""
    model = BleurtRegressor(config)
    mapping = _expected_keys(config)
    fused = {index: _fused_keys(index) for index in range(config.num_hidden_layers)}
    wanted = set(mapping.values()) | {key for keys in fused.values() for key in keys}
    missing = sorted(wanted - set(state))
    unexpected = sorted(set(state) - wanted - set(_IGNORED_KEYS))
    if missing or unexpected:
        parts = []
        if missing:
            parts.append(f"missing {len(missing)} weights (e.g. {missing[:3]})")
        if unexpected:
            parts.append(f"{len(unexpected)} weights a BLEURT regression model does not have (e.g. {unexpected[:3]})")
        raise ValueError("the weights are not those of bleurt-pytorch's BleurtForSequenceClassification: "
                         + "; ".join(parts))
    expected_shapes = {name: tuple(tensor.shape) for name, tensor in model.state_dict().items()}
    # every weight's shape is checked before any is copied: a small file can hold views of any claimed size
    # (stride 0), which concatenating or converting would allocate in full
    wanted_shapes = {key: expected_shapes[name] for name, key in mapping.items()}
    for index, keys in fused.items():
        rows, *rest = expected_shapes[f"layers.{index}.qkv.weight"]
        wanted_shapes.update({key: (rows // 3, *rest) for key in keys[:3]})
        wanted_shapes.update({key: (expected_shapes[f"layers.{index}.qkv.bias"][0] // 3,) for key in keys[3:]})
    for key, shape in wanted_shapes.items():
        if tuple(state[key].shape) != shape:
            raise ValueError(f"weight {key!r} has shape {tuple(state[key].shape)}, but config.json implies {shape}")
    ours: dict[str, torch.Tensor] = {name: state[key] for name, key in mapping.items()}
    for index, keys in fused.items():
        ours[f"layers.{index}.qkv.weight"] = torch.cat([state[key] for key in keys[:3]], dim=0)
        ours[f"layers.{index}.qkv.bias"] = torch.cat([state[key] for key in keys[3:]], dim=0)
    model.load_state_dict({name: tensor.float() for name, tensor in ours.items()}, strict=True)
    return model.eval()
