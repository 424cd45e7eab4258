"""fp32 linear layers of a CPU model run through oneDNN instead of PyTorch's default BLAS.

On the CPU PyTorch multiplies fp32 matrices with MKL, which on non-Intel
processors takes far slower kernels than oneDNN (also bundled with PyTorch,
and already what it uses for bf16): on the 2-core AMD EPYC this project runs
on, oneDNN's linear layer reaches 404 GFLOP/s against MKL's 164. The results
differ from MKL's only in the order of float additions (about 1e-6 relative on
hidden states). Where the oneDNN operator is missing, or disagrees with
``torch.nn.functional.linear`` on a probe, models are left as they are.

The gated feed-forward blocks of Llama-style models, ``down(silu(gate(x)) * up(x))``, then run the activation and
the product inside oneDNN's matrix multiplies (two passes over the widest activations fewer per layer): oneDNN's
SiLU differs from PyTorch's by rounding only (about 1e-7 relative), and a block whose result on a probe differs
by more than that is left as it is. Likewise the BERT-family blocks (BERT, RoBERTa, XLM-R, and BLEURT's): the
feed-forward GELU runs inside its matrix multiply, and the residual sum before each LayerNorm inside the output one.

transformers' Llama decoder layers then run as one fused forward (the layer stays an instance of its transformers
class, so output capturing still finds it): the residual sums inside the attention output's and the feed-forward
output's matrix multiplies, the RMS norms and rotary embeddings with fewer passes over memory and no temporaries
beyond one, in transformers' order of float operations (the same bits). A model's final hidden states at one
position per sequence (:func:`final_states_at`, MAUVE's last-token features) run the last layer's queries,
attention output, feed-forward and final norm at those positions only (its keys and values at every one). Each
fused layer is checked on a probe against its transformers forward and left as it is where they differ.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Callable, Iterator
from typing import Any

import torch

_PROBE_TOLERANCE = 1e-4


class OneDnnLinear(torch.nn.Module):
    """An inference-only fp32 ``nn.Linear`` on the CPU whose weight is pre-packed for oneDNN."""

    def __init__(self, linear: torch.nn.Linear) -> None:
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.packed_weight = torch.ops.mkldnn._reorder_linear_weight(linear.weight.detach(), None)
        self.bias = None if linear.bias is None else linear.bias.detach()

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return torch.ops.mkldnn._linear_pointwise(inputs, self.packed_weight, self.bias, "none", [], "")

    def plus(self, inputs: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        """``self(inputs) + residual``, the sum done by oneDNN inside the matrix multiply."""
        return torch.ops.mkldnn._linear_pointwise.binary(inputs, residual, self.packed_weight, self.bias, "add")

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


# Feed-forward blocks computing down(silu(gate(x)) * up(x)) in transformers (class names).
_GATED_MLPS = ("LlamaMLP", "MistralMLP", "Qwen2MLP", "Qwen3MLP")
_SILU_CLASSES = ("SiLU", "SiLUActivation")  # PyTorch's and transformers' own
# transformers' BERT-family blocks, and core_bleurt_model's named alike: gelu(dense(x)), and
# LayerNorm(dense(x) + residual) (dropout off at inference).
_FAMILIES = ("Bert", "Roberta", "XLMRoberta", "Bleurt")
_DENSE_GELUS = tuple(f"{family}Intermediate" for family in _FAMILIES)
_DENSE_RESIDUAL_NORMS = tuple(f"{family}{part}" for family in _FAMILIES for part in ("SelfOutput", "Output"))
_FUSED_TOLERANCE = 1e-5


class OneDnnGatedMlp(torch.nn.Module):
    """``down(silu(gate(x)) * up(x))`` with the SiLU and the product applied by oneDNN inside the matrix multiplies."""

    def __init__(self, gate: OneDnnLinear, up: OneDnnLinear, down: OneDnnLinear) -> None:
        super().__init__()
        self.gate, self.up, self.down = gate, up, down

    def forward(self, inputs: torch.Tensor, residual: torch.Tensor | None = None) -> torch.Tensor:
        """The block's output, plus ``residual`` (summed inside the last matrix multiply) when given."""
        gated = torch.ops.mkldnn._linear_pointwise(inputs, self.gate.packed_weight, None, "swish", [], "")
        product = torch.ops.mkldnn._linear_pointwise.binary(inputs, gated, self.up.packed_weight, None, "mul")
        return self.down(product) if residual is None else self.down.plus(product, residual)


class OneDnnDenseGelu(torch.nn.Module):
    """``gelu(dense(x))`` (BERT's intermediate block) with the GELU applied by oneDNN inside the matrix multiply;
    the block's parts keep their transformers names (``dense``, ``intermediate_act_fn``)."""

    def __init__(self, dense: OneDnnLinear, activation: torch.nn.Module) -> None:
        super().__init__()
        self.dense, self.intermediate_act_fn = dense, activation

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return torch.ops.mkldnn._linear_pointwise(hidden, self.dense.packed_weight, self.dense.bias, "gelu", [],
                                                  "none")


class OneDnnDenseResidualNorm(torch.nn.Module):
    """``norm(dense(x) + residual)`` (BERT's output blocks) with the sum done by oneDNN inside the matrix multiply;
    the parts keep their transformers names (``dense``, ``LayerNorm``)."""

    def __init__(self, dense: OneDnnLinear, norm: torch.nn.Module) -> None:
        super().__init__()
        self.dense, self.LayerNorm = dense, norm

    def forward(self, hidden: torch.Tensor, input_tensor: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.dense.plus(hidden, input_tensor))


def _fused_block(module: torch.nn.Module) -> torch.nn.Module | None:
    """The fused form of a known block whose linear layers are oneDNN ones (None for others)."""
    name = type(module).__name__
    if name in _GATED_MLPS:
        parts = [getattr(module, part, None) for part in ("gate_proj", "up_proj", "down_proj")]
        if (all(type(part) is OneDnnLinear for part in parts) and parts[0].bias is None and parts[1].bias is None
                and type(getattr(module, "act_fn", None)).__name__ in _SILU_CLASSES):
            return OneDnnGatedMlp(*parts)
    dense = getattr(module, "dense", None)
    if type(dense) is not OneDnnLinear:
        return None
    if name in _DENSE_GELUS and type(getattr(module, "intermediate_act_fn", None)).__name__ in ("GELUActivation",
                                                                                                 "GELU"):
        return OneDnnDenseGelu(dense, module.intermediate_act_fn)
    if name in _DENSE_RESIDUAL_NORMS and isinstance(getattr(module, "LayerNorm", None), torch.nn.LayerNorm):
        return OneDnnDenseResidualNorm(dense, module.LayerNorm)
    return None


def _close(actual: torch.Tensor, expected: torch.Tensor) -> bool:
    """Whether two results of a probe are the same up to float rounding."""
    scale = float(expected.abs().max()) + 1e-30
    return actual.shape == expected.shape and float((actual - expected).abs().max()) <= _FUSED_TOLERANCE * scale


def _agrees(module: torch.nn.Module, fused: torch.nn.Module) -> bool:
    """Whether ``fused`` gives ``module``'s result on a random probe, up to float rounding."""
    generator = torch.Generator().manual_seed(0)
    width = getattr(getattr(fused, "dense", None), "in_features", None) or fused.gate.in_features
    inputs = [torch.randn(2, 3, width, generator=generator)]
    if isinstance(fused, OneDnnDenseResidualNorm):
        inputs.append(torch.randn(2, 3, fused.dense.out_features, generator=generator))
    try:
        with torch.inference_mode():
            expected, actual = module(*inputs), fused(*inputs)
    except (AttributeError, RuntimeError, TypeError):
        return False
    return _close(actual, expected)


# transformers' Llama parts given fused forwards (class names), and the attention implementations whose mask the
# last layer's rows at given positions can be given (sdpa's: True where a query attends).
_LLAMA_LAYERS = ("LlamaDecoderLayer",)
_RMS_NORMS = ("LlamaRMSNorm",)
_ROW_ATTENTIONS = ("sdpa",)
_ATTENTION_PARTS = ("q_proj", "k_proj", "v_proj", "o_proj")
# The layer run at one position per sequence, and those positions, while final_states_at runs a model.
_ROWS: contextvars.ContextVar[tuple[torch.nn.Module, torch.Tensor] | None] = contextvars.ContextVar(
    "onednn_rows", default=None)


class OneDnnRmsNorm:
    """Mixin of transformers' ``LlamaRMSNorm``: in fp32 the same float operations in fewer passes over memory,
    with one temporary."""

    variance_epsilon: float
    weight: torch.Tensor

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        if hidden_states.dtype != torch.float32 or self.weight.dtype != torch.float32:
            return super().forward(hidden_states)  # type: ignore[misc]
        squares = hidden_states * hidden_states
        variance = squares.sum(-1, keepdim=True).div_(hidden_states.shape[-1])
        variance.add_(self.variance_epsilon).rsqrt_()
        return torch.mul(hidden_states, variance, out=squares).mul_(self.weight)


def _rotated(states: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """transformers' rotary embedding (``apply_rotary_pos_emb``) of [batch, length, heads, head size] states, with
    cos and sin of [batch or 1, length, head size]: the same float operations, one temporary."""
    half = states.shape[-1] // 2
    cos, sin = cos.unsqueeze(2), sin.unsqueeze(2)
    turned = torch.empty_like(states)  # rotate_half(states) * sin, without rotate_half's copies
    torch.mul(states[..., half:], sin[..., :half].neg(), out=turned[..., :half])
    torch.mul(states[..., :half], sin[..., half:], out=turned[..., half:])
    return torch.mul(states, cos).add_(turned)


class OneDnnLlamaLayer:
    """Mixin of transformers' ``LlamaDecoderLayer`` whose linear layers are oneDNN ones and whose feed-forward
    block is a :class:`OneDnnGatedMlp`: the residual sums inside the matrix multiplies, rotary embeddings and norms
    in fewer passes. Inside :func:`final_states_at` the model's last layer gives [batch, 1, width]: its output at
    one position per sequence. Runs with a cache of past keys and values, or in training, are transformers'."""

    self_attn: Any
    mlp: OneDnnGatedMlp
    input_layernorm: torch.nn.Module
    post_attention_layernorm: torch.nn.Module
    training: bool
    attention_functions: Any
    eager_attention: Any

    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor | None = None,
                position_ids: torch.Tensor | None = None, past_key_values: Any = None, use_cache: bool | None = False,
                position_embeddings: tuple[torch.Tensor, torch.Tensor] | None = None, **kwargs: Any
                ) -> torch.Tensor:
        if past_key_values is not None or position_embeddings is None or self.training:
            return super().forward(  # type: ignore[misc]
                hidden_states, attention_mask=attention_mask, position_ids=position_ids,
                past_key_values=past_key_values, use_cache=use_cache, position_embeddings=position_embeddings,
                **kwargs)
        attention = self.self_attn
        batch, length, _ = hidden_states.shape
        normed = self.input_layernorm(hidden_states)
        cos, sin = position_embeddings
        keys = _rotated(attention.k_proj(normed).view(batch, length, -1, attention.head_dim), cos, sin)
        values = attention.v_proj(normed).view(batch, length, -1, attention.head_dim)
        rows = _ROWS.get()
        if rows is not None and rows[0] is self:
            at, positions = torch.arange(batch, device=hidden_states.device), rows[1]
            hidden_states, normed = hidden_states[at, positions, None], normed[at, positions, None]
            cos, sin = (part.expand(batch, -1, -1)[at, positions, None] for part in (cos, sin))
            attention_mask = (torch.arange(length, device=positions.device) <= positions[:, None]).view(
                batch, 1, 1, length)
            length = 1
        queries = _rotated(attention.q_proj(normed).view(batch, length, -1, attention.head_dim), cos, sin)
        attend = self.attention_functions.get_interface(attention.config._attn_implementation, self.eager_attention)
        attended, _ = attend(attention, queries.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2),
                             attention_mask, dropout=0.0, scaling=attention.scaling, **kwargs)
        hidden_states = attention.o_proj.plus(attended.reshape(batch, length, -1), hidden_states)
        return self.mlp(self.post_attention_layernorm(hidden_states), hidden_states)


@functools.cache
def _mixed_class(mixin: type, base: type) -> type:
    """``base`` with ``mixin``'s forward: instances stay instances of ``base`` (transformers' output capturing
    finds the layers by class)."""
    namespace: dict[str, Any] = {"__module__": __name__}
    if mixin is OneDnnLlamaLayer:
        from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
        from transformers.models.llama.modeling_llama import eager_attention_forward

        namespace.update(attention_functions=ALL_ATTENTION_FUNCTIONS,
                         eager_attention=staticmethod(eager_attention_forward))
    return type(f"{mixin.__name__}{base.__name__}", (mixin, base), namespace)


@contextlib.contextmanager
def _rows_of(layer: torch.nn.Module, positions: torch.Tensor) -> Iterator[None]:
    """Within the block, ``layer`` (a :class:`OneDnnLlamaLayer`) runs at ``positions[i]`` of sequence i only."""
    token = _ROWS.set((layer, positions))
    try:
        yield
    finally:
        _ROWS.reset(token)


def _adopt(module: torch.nn.Module, mixin: type, probe: Callable[[], list[torch.Tensor]],
           expected: Callable[[list[torch.Tensor]], list[torch.Tensor]] = lambda results: results) -> None:
    """Give ``module`` ``mixin``'s forward where ``probe`` (run on ``module``) gives after it, up to float rounding,
    ``expected`` of what it gave before."""
    original = type(module)
    try:
        with torch.inference_mode():
            wanted = expected(probe())
            module.__class__ = _mixed_class(mixin, original)
            results = probe()
    except (AttributeError, RuntimeError, TypeError):
        results = []
    if len(results) != len(wanted) or not all(map(_close, results, wanted)):
        module.__class__ = original


def _fuse_llama(module: torch.nn.Module) -> None:
    """Give a Llama RMS norm or decoder layer (of fused parts) its fused forward where it agrees on a probe."""
    name = type(module).__name__
    generator = torch.Generator().manual_seed(0)
    if name in _RMS_NORMS:
        hidden = torch.randn(2, 3, module.weight.shape[-1], generator=generator)
        _adopt(module, OneDnnRmsNorm, lambda: [module(hidden)])
        return
    attention = getattr(module, "self_attn", None)
    if (name not in _LLAMA_LAYERS or type(getattr(module, "mlp", None)) is not OneDnnGatedMlp
            or not all(type(getattr(attention, part, None)) is OneDnnLinear for part in _ATTENTION_PARTS)):
        return
    hidden = torch.randn(2, 6, attention.o_proj.out_features, generator=generator)
    angles = torch.randn(1, 6, attention.head_dim // 2, generator=generator).repeat(1, 1, 2)
    embeddings = angles.cos(), angles.sin()
    positions = torch.tensor([5, 2])
    rows = attention.config._attn_implementation in _ROW_ATTENTIONS

    def probe() -> list[torch.Tensor]:
        results = [module(hidden, position_embeddings=embeddings)]
        if rows:
            with _rows_of(module, positions):
                results.append(module(hidden, position_embeddings=embeddings)[:, 0])
        return results

    def expected(results: list[torch.Tensor]) -> list[torch.Tensor]:  # the original ignores the positions
        return [results[0], results[0][torch.arange(2), positions]] if rows else results

    _adopt(module, OneDnnLlamaLayer, probe, expected)


def final_states_at(base: Any, input_ids: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """[batch, width]: the final hidden states (after the final norm) that the transformers model body ``base``
    gives at ``positions[i]`` of each sequence ``input_ids[i]``. Where the last layer is a fused Llama one with
    sdpa attention, that layer's queries and everything after them run at those positions only."""
    layers = getattr(base, "layers", None)
    last = layers[-1] if isinstance(layers, torch.nn.ModuleList) and len(layers) else None
    if (isinstance(last, OneDnnLlamaLayer) and len(layers) == base.config.num_hidden_layers
            and base.config._attn_implementation in _ROW_ATTENTIONS):
        with _rows_of(last, positions):
            return base(input_ids=input_ids, use_cache=False)[0][:, 0]
    hidden = base(input_ids=input_ids, use_cache=False)[0]
    return hidden[torch.arange(len(positions), device=hidden.device), positions]


@functools.cache
def onednn_linear_works() -> bool:
    """True when oneDNN's linear operator exists here and agrees with ``torch.nn.functional.linear``."""
    if not torch.backends.mkldnn.is_available():
        return False
    try:
        generator = torch.Generator().manual_seed(0)
        probe = torch.nn.Linear(48, 80)
        with torch.no_grad():
            probe.weight.copy_(torch.randn(80, 48, generator=generator))
            probe.bias.copy_(torch.randn(80, generator=generator))
        inputs = torch.randn(3, 7, 48, generator=generator)
        with torch.inference_mode():
            expected = probe(inputs)
            actual = OneDnnLinear(probe)(inputs)
    except (AttributeError, RuntimeError):
        return False
    scale = float(expected.abs().max())
    return actual.shape == expected.shape and float((actual - expected).abs().max()) <= _PROBE_TOLERANCE * scale


def use_onednn_linears(model: Any, device: torch.device, dtype: torch.dtype) -> int:
    """Replace, in place, every fp32 ``nn.Linear`` of a CPU ``model`` by a :class:`OneDnnLinear`, and the known
    blocks around them by their fused forms (:class:`OneDnnGatedMlp`, :class:`OneDnnDenseGelu`,
    :class:`OneDnnDenseResidualNorm`; Llama's norms and decoder layers by :class:`OneDnnRmsNorm` and
    :class:`OneDnnLlamaLayer` ones) where these agree on a probe; returns how many linear layers were replaced
    (0 on other devices or precisions, or where oneDNN is unusable)."""
    if device.type != "cpu" or dtype != torch.float32 or not onednn_linear_works():
        return 0
    replaced = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if type(child) is torch.nn.Linear and child.weight.dtype == torch.float32:
                setattr(parent, name, OneDnnLinear(child))
                replaced += 1
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            fused = _fused_block(child)
            if fused is not None and _agrees(child, fused):
                setattr(parent, name, fused)
    for module in list(model.modules()):
        _fuse_llama(module)
    return replaced
