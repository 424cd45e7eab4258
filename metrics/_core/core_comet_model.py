"""COMET's estimators as unbabel-comet 2.x computes them, rebuilt from a checkpoint on a transformers encoder.

A sentence embedding is the mix of the encoder's layers (unbabel-comet's ``LayerwiseAttention``: softmax or
sparsemax weights, optional per-sentence layer normalisation, times ``gamma``) or one layer, pooled over the
sentence's tokens (``avg``, ``max``, ``cls``, or ``default``: the last layer's first token). The estimator is
unbabel-comet's ``FeedForward`` on the features of the embeddings: (mt, ref, mt*ref, |mt-ref|, mt*src, |mt-src|)
for reference-based regression models, (mt, src, mt*src, |mt-src|) for reference-free ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from .core_encoder_rows import hidden_states

# unbabel-comet's encoder families (hparams `encoder_model`): transformers' model and tokenizer classes (the
# models built without their pooling layer, as unbabel-comet builds them).
ENCODERS: dict[str, tuple[str, str]] = {
    "XLM-RoBERTa": ("XLMRobertaModel", "XLMRobertaTokenizerFast"),
    "XLM-RoBERTa-XL": ("XLMRobertaXLModel", "XLMRobertaTokenizerFast"),
    "BERT": ("BertModel", "BertTokenizerFast"),
}
POOLINGS = ("avg", "max", "cls", "default")
_IGNORED_BUFFERS = ("position_ids", "token_type_ids", "dropout_mask", "dropout_fill")


def sparsemax(weights: torch.Tensor) -> torch.Tensor:
    """Sparsemax over the last dimension (Martins & Astudillo 2016), as entmax's ``sparsemax`` computes it."""
    shifted = weights - weights.max(dim=-1, keepdim=True).values
    ordered, _ = torch.sort(shifted, dim=-1, descending=True)
    cumulative = ordered.cumsum(-1) - 1
    ranks = torch.arange(1, weights.shape[-1] + 1, device=weights.device, dtype=weights.dtype)
    support = (ranks * ordered - cumulative) > 0
    size = support.sum(dim=-1, keepdim=True)
    threshold = cumulative.gather(-1, size - 1) / size.to(weights.dtype)
    return torch.clamp(shifted - threshold, min=0)


# the weight unbabel-comet gives a dropped layer before the softmax or sparsemax
_DROPPED_LAYER = -1e20


class LayerMix(nn.Module):
    """unbabel-comet's layer-wise attention: ``gamma * sum(w_k * layer_k)``. In training mode (Monte Carlo dropout)
    each layer is dropped with probability ``dropout`` before the weights are normalised, independently for each
    sentence (unbabel-comet draws one mask per encoder call, and encodes an example's source, translation and
    reference in separate calls: each text's draw is independent of the others' in its example either way)."""

    def __init__(self, num_layers: int, *, layer_norm: bool, transformation: str, dropout: float = 0.0) -> None:
        super().__init__()
        self.scalar_parameters = nn.ParameterList([nn.Parameter(torch.zeros(1)) for _ in range(num_layers)])
        self.gamma = nn.Parameter(torch.ones(1))
        self.layer_norm = layer_norm
        self.transformation = transformation
        self.dropout = dropout

    def forward(self, layers: tuple[torch.Tensor, ...], mask: torch.Tensor) -> torch.Tensor:
        weights = torch.cat(list(self.scalar_parameters))
        if self.training and self.dropout:
            kept = torch.rand(mask.shape[0], len(weights), device=weights.device) > self.dropout
            weights = torch.where(kept, weights, torch.full_like(weights, _DROPPED_LAYER))
        weights = sparsemax(weights) if self.transformation == "sparsemax" else torch.softmax(weights, dim=-1)
        if self.layer_norm:
            layers = tuple(_sentence_normalised(layer, mask) for layer in layers)
        parts = weights.split(1) if weights.dim() == 1 else [column.view(-1, 1, 1) for column in weights.unbind(1)]
        return self.gamma * sum(weight * layer for weight, layer in zip(parts, layers, strict=True))


def _sentence_normalised(layer: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """A layer normalised by the mean and variance of each sentence's unmasked values (unbabel-comet's order of
    operations)."""
    broadcast = mask.float().unsqueeze(-1)
    batch, _, width = layer.size()
    count = mask.float().sum(1) * width
    masked = layer * broadcast
    mean = (masked.view(batch, -1).sum(1) / count).view(batch, 1, 1)
    variance = (((masked - mean) * broadcast) ** 2).view(batch, -1).sum(1) / count
    return (layer - mean) / torch.sqrt(variance + 1e-12).view(batch, 1, 1)


class FeedForward(nn.Module):
    """unbabel-comet's ``FeedForward`` (its layers under ``ff``)."""

    def __init__(self, layers: nn.Sequential) -> None:
        super().__init__()
        self.ff = layers

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.ff(features)


def feed_forward(state: dict[str, torch.Tensor], activation: str, final_activation: str | None,
                 dropout: float = 0.0) -> FeedForward:
    """unbabel-comet's ``FeedForward`` with the layer sizes of the weights in ``state``, its hidden layers' dropout
    ``dropout`` (active in training mode only)."""
    linear_indices = sorted(int(key.split(".")[0]) for key in state if key.endswith(".weight"))
    modules: list[nn.Module] = []
    for position, index in enumerate(linear_indices):
        while len(modules) < index:
            modules.append(nn.Dropout(dropout))
        weight = state[f"{index}.weight"]
        modules.append(nn.Linear(weight.shape[1], weight.shape[0]))
        if position < len(linear_indices) - 1:
            modules.append(_activation(activation))
    if final_activation is not None:
        modules.append(_activation(final_activation))
    return FeedForward(nn.Sequential(*modules))


def _dropout(value: Any) -> float:
    """The ``dropout`` hyper-parameter, a probability."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise ValueError(f"dropout {value!r} is not a probability in [0, 1)")
    return float(value)


def _activation(name: str) -> nn.Module:
    if not isinstance(name, str) or not hasattr(nn, name.title()):
        raise ValueError(f"{name!r} is not an activation of torch.nn")
    return getattr(nn, name.title())()


@dataclass(frozen=True)
class EstimatorSettings:
    """What unbabel-comet's hyper-parameters say about inference."""

    encoder_model: str
    layer: str | int
    pool: str
    layer_norm: bool
    transformation: str
    activations: str
    final_activation: str | None
    dropout: float

    @classmethod
    def from_hparams(cls, hparams: dict[str, Any]) -> EstimatorSettings:
        encoder = hparams.get("encoder_model", "XLM-RoBERTa")
        if encoder not in ENCODERS:
            raise ValueError(f"encoder_model {encoder!r} is not supported; supported: {', '.join(ENCODERS)} "
                             f"(unbabel-comet's MiniLM and RemBERT encoders are not)")
        pool = hparams.get("pool", "avg")
        if pool not in POOLINGS:
            raise ValueError(f"pool {pool!r} is not one of unbabel-comet's {', '.join(POOLINGS)}")
        transformation = hparams.get("layer_transformation", "softmax")
        # unbabel-comet >= 2.2.4 reads "sparsemax_patch" as softmax (its issue 244); only "sparsemax" is sparsemax.
        return cls(encoder, hparams.get("layer", "mix"), pool, bool(hparams.get("layer_norm", True)),
                   "sparsemax" if transformation == "sparsemax" else "softmax", hparams.get("activations", "Tanh"),
                   hparams.get("final_activation"), _dropout(hparams.get("dropout", 0.1)))


class CometEstimator(nn.Module):
    """Sentence embeddings from the encoder, and scores from embeddings."""

    def __init__(self, encoder: nn.Module, settings: EstimatorSettings, estimator: FeedForward, pad_id: int,
                 references: bool) -> None:
        super().__init__()
        self.encoder = encoder
        self.settings = settings
        self.estimator = estimator
        self.pad_id = pad_id
        self.references = references
        num_layers = encoder.config.num_hidden_layers + 1
        self.layerwise_attention = (LayerMix(num_layers, layer_norm=settings.layer_norm,
                                             transformation=settings.transformation, dropout=settings.dropout)
                                    if settings.layer == "mix" else None)
        if self.layerwise_attention is None and not (isinstance(settings.layer, int) and 0 <= settings.layer < num_layers):
            raise ValueError(f"layer {settings.layer!r} is neither 'mix' nor one of the encoder's {num_layers} layers")

    def sentence_embeddings(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """[B, D] float32 sentence embeddings of a padded batch."""
        layers = tuple(layer.float() for layer in hidden_states(self.encoder, ids, mask))
        if self.settings.pool == "default":
            return layers[-1][:, 0, :]
        if self.layerwise_attention is not None:
            embeddings = self.layerwise_attention(layers, mask)
        else:
            embeddings = layers[self.settings.layer]
        if self.settings.pool == "cls":
            return embeddings[:, 0, :]
        padding = ids.eq(self.pad_id).unsqueeze(-1)
        if self.settings.pool == "max":
            return embeddings.masked_fill(padding, float("-inf")).max(dim=1)[0]
        total = embeddings.masked_fill(padding, 0.0).sum(1)
        return total / mask.unsqueeze(-1).expand(embeddings.size()).float().sum(1)

    def scores(self, source: torch.Tensor, translation: torch.Tensor, reference: torch.Tensor | None) -> torch.Tensor:
        """The estimator's score of each row of (source, translation[, reference]) embeddings."""
        source_features = (translation * source, torch.abs(translation - source))
        if self.references:
            features = (translation, reference, translation * reference, torch.abs(translation - reference),
                        *source_features)
        else:
            features = (translation, source, *source_features)
        return self.estimator(torch.cat(features, dim=1)).view(-1)


def build_estimator(state: dict[str, torch.Tensor], hparams: dict[str, Any], encoder_folder: Path,
                    references: bool) -> tuple[CometEstimator, Any]:
    """The model of a checkpoint's ``state`` and hyper-parameters, and its tokenizer (from ``encoder_folder``)."""
    settings = EstimatorSettings.from_hparams(hparams)
    encoder, tokenizer = build_encoder(settings.encoder_model, encoder_folder)
    estimator = feed_forward(state_part(state, "estimator.ff."), settings.activations, settings.final_activation,
                             settings.dropout)
    model = CometEstimator(encoder, settings, estimator, tokenizer.pad_token_id, references)
    load_state(model, state)
    return model.eval(), tokenizer


def build_encoder(encoder_model: str, folder: Path) -> tuple[nn.Module, Any]:
    """An encoder of unbabel-comet's family ``encoder_model`` configured from ``folder`` (random weights, without
    its pooling layer), and its tokenizer."""
    import transformers

    model_name, tokenizer_name = ENCODERS[encoder_model]
    model_class = getattr(transformers, model_name)
    config = model_class.config_class.from_pretrained(str(folder), local_files_only=True)
    return model_class(config, add_pooling_layer=False), _tokenizer(folder, tokenizer_name)


def _tokenizer(folder: Path, class_name: str) -> Any:
    """The encoder's tokenizer as unbabel-comet's fast tokenizer runs it: a folder's tokenizer.json taken whole
    (transformers 5's XLM-R and BERT classes rebuild the pipeline and drop its normaliser, e.g. NFKC, which changes
    the ids of some texts), else the named class from the vocabulary files."""
    import transformers

    if (folder / "tokenizer.json").is_file():
        return transformers.PreTrainedTokenizerFast.from_pretrained(str(folder), local_files_only=True)
    return getattr(transformers, class_name).from_pretrained(str(folder), local_files_only=True)


def state_part(state: dict[str, torch.Tensor], prefix: str) -> dict[str, torch.Tensor]:
    """The entries of ``state`` under ``prefix``, the prefix removed."""
    return {key[len(prefix):]: value for key, value in state.items() if key.startswith(prefix)}


def load_state(model: nn.Module, state: dict[str, torch.Tensor]) -> None:
    """``state`` (unbabel-comet's names: the encoder's under ``encoder.model.``) into ``model``, every weight used
    and every parameter set."""
    renamed = {("encoder." + key[len("encoder.model."):] if key.startswith("encoder.model.") else key): value
               for key, value in state.items()}
    renamed = {key: value for key, value in renamed.items() if not key.endswith(_IGNORED_BUFFERS)}
    try:
        missing, unexpected = model.load_state_dict(renamed, strict=False)
    except RuntimeError as error:  # shapes that do not fit the encoder's configuration
        raise ValueError(f"the checkpoint's weights do not fit its encoder's configuration: {error}") from error
    missing = [key for key in missing if not key.endswith(_IGNORED_BUFFERS)]
    if missing or unexpected:
        raise ValueError(f"the checkpoint's weights do not fit the architecture its hparams.yaml describes: "
                         f"missing {missing[:5]}{'...' if len(missing) > 5 else ''}, unexpected "
                         f"{unexpected[:5]}{'...' if len(unexpected) > 5 else ''}")
