"""unbabel-comet's multitask models (``unified_metric``: CometKiwi; ``xcomet_metric``: XCOMET) rebuilt from a
checkpoint on a transformers encoder, in evaluation mode.

The translation and its source and/or reference are joined into one input (``<s> mt </s></s> src </s></s> ref
</s>`` for XLM-R). The segment score is unbabel-comet's ``FeedForward`` on the first token of the layer mix (or of
one layer); a model trained with word-level tags (all XCOMET models) also gives, for every token, the softmax of a
linear tagger over one layer: the probabilities of "O" and of each error severity ("I-minor", "I-major", ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from .core_comet_model import FeedForward, LayerMix, build_encoder, feed_forward, load_state, state_part
from .core_encoder_rows import hidden_states

# XCOMET's error severities (fixed by unbabel-comet's XCOMETMetric)
XCOMET_SEVERITIES = ("minor", "major", "critical")
# saved weights that only training reads: the word-level loss's class weights (`cross_entropy_weights`)
_TRAINING_ONLY = ("wordloss.", "sentloss.")
# the encoder families whose joined input unbabel-comet builds as <s> A </s></s> B </s> (separator of two tokens)
JOINED_ENCODERS = ("XLM-RoBERTa", "XLM-RoBERTa-XL")


@dataclass(frozen=True)
class UnifiedSettings:
    """What a multitask model's hyper-parameters say about inference."""

    xcomet: bool
    encoder_model: str
    segments: tuple[str, ...]
    sent_layer: str | int
    word_layer: int | None
    labels: tuple[str, ...]
    layer_norm: bool
    transformation: str
    activations: str
    final_activation: str | None

    @classmethod
    def from_hparams(cls, identifier: str, hparams: dict[str, Any]) -> UnifiedSettings:
        xcomet = identifier == "xcomet_metric"
        encoder = hparams.get("encoder_model", "XLM-RoBERTa-XL" if xcomet else "XLM-RoBERTa")
        if encoder not in JOINED_ENCODERS:
            raise ValueError(f"encoder_model {encoder!r} is not supported for {identifier}; supported: "
                             f"{', '.join(JOINED_ENCODERS)}")
        word_level = xcomet or bool(hparams.get("word_level_training", False))
        severities = XCOMET_SEVERITIES if xcomet else tuple(hparams.get("error_labels", ("minor", "major")))
        segments = ("src", "ref") if xcomet else tuple(
            segment for segment in hparams.get("input_segments", ("mt", "src", "ref")) if segment != "mt")
        transformation = hparams.get("layer_transformation", "sparsemax")
        return cls(
            xcomet, encoder, segments, hparams.get("sent_layer", hparams.get("layer", "mix")),
            int(hparams.get("word_layer", 36 if xcomet else 24)) if word_level else None,
            ("O", *(f"I-{label}" for label in severities)) if word_level else (),
            bool(hparams.get("layer_norm", not xcomet)),
            "sparsemax" if transformation == "sparsemax" else "softmax",  # as in core_comet_model
            hparams.get("activations", "Tanh"), hparams.get("final_activation"))

    @property
    def word_level(self) -> bool:
        return self.word_layer is not None


class UnifiedModel(nn.Module):
    """Segment scores and per-token tag probabilities of joined inputs."""

    def __init__(self, encoder: nn.Module, settings: UnifiedSettings, estimator: FeedForward) -> None:
        super().__init__()
        self.encoder = encoder
        self.settings = settings
        self.estimator = estimator
        num_layers = encoder.config.num_hidden_layers + 1
        self.layerwise_attention = (LayerMix(num_layers, layer_norm=settings.layer_norm,
                                             transformation=settings.transformation)
                                    if settings.sent_layer == "mix" else None)
        for name, layer in (("sent_layer", settings.sent_layer), ("word_layer", settings.word_layer)):
            if layer is not None and layer != "mix" and not (isinstance(layer, int) and 0 <= layer < num_layers):
                raise ValueError(f"{name} {layer!r} is not one of the encoder's {num_layers} layers")
        hidden = encoder.config.hidden_size
        self.hidden2tag = nn.Linear(hidden, len(settings.labels)) if settings.word_level else None

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """[B] float32 scores and [B, T, labels] float32 tag probabilities (None without word-level tags)."""
        layers = tuple(layer.float() for layer in hidden_states(self.encoder, ids, mask))
        if self.layerwise_attention is not None:
            embeddings = self.layerwise_attention(layers, mask)
        else:
            embeddings = layers[self.settings.sent_layer]
        scores = self.estimator(embeddings[:, 0, :]).view(-1)
        if self.hidden2tag is None:
            return scores, None
        return scores, torch.softmax(self.hidden2tag(layers[self.settings.word_layer]), dim=2)


def build_unified(state: dict[str, torch.Tensor], identifier: str, hparams: dict[str, Any],
                  encoder_folder: Path) -> tuple[UnifiedModel, Any]:
    """The multitask model of a checkpoint's ``state`` and hyper-parameters, and its tokenizer."""
    settings = UnifiedSettings.from_hparams(identifier, hparams)
    encoder, tokenizer = build_encoder(settings.encoder_model, encoder_folder)
    estimator = feed_forward(state_part(state, "estimator.ff."), settings.activations, settings.final_activation)
    model = UnifiedModel(encoder, settings, estimator)
    load_state(model, {key: value for key, value in state.items() if not key.startswith(_TRAINING_ONLY)})
    return model.eval(), tokenizer
