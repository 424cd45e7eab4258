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
by more than that is left as it is. Likewise the BERT-family blocks (BERT, RoBERTa, XLM-R): the feed-forward
GELU runs inside its matrix multiply, and the residual sum before each LayerNorm inside the output one.
"""

from __future__ import annotations

import functools
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

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


# Feed-forward blocks computing down(silu(gate(x)) * up(x)) in transformers (class names).
_GATED_MLPS = ("LlamaMLP", "MistralMLP", "Qwen2MLP", "Qwen3MLP")
_SILU_CLASSES = ("SiLU", "SiLUActivation")  # PyTorch's and transformers' own
# transformers' BERT-family blocks: gelu(dense(x)), and LayerNorm(dense(x) + residual) (dropout off at inference).
_FAMILIES = ("Bert", "Roberta", "XLMRoberta")
_DENSE_GELUS = tuple(f"{family}Intermediate" for family in _FAMILIES)
_DENSE_RESIDUAL_NORMS = tuple(f"{family}{part}" for family in _FAMILIES for part in ("SelfOutput", "Output"))
_FUSED_TOLERANCE = 1e-5


class OneDnnGatedMlp(torch.nn.Module):
    """``down(silu(gate(x)) * up(x))`` with the SiLU and the product applied by oneDNN inside the matrix multiplies."""

    def __init__(self, gate: OneDnnLinear, up: OneDnnLinear, down: OneDnnLinear) -> None:
        super().__init__()
        self.gate, self.up, self.down = gate, up, down

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        gated = torch.ops.mkldnn._linear_pointwise(inputs, self.gate.packed_weight, None, "swish", [], "")
        product = torch.ops.mkldnn._linear_pointwise.binary(inputs, gated, self.up.packed_weight, None, "mul")
        return self.down(product)


class OneDnnDenseGelu(torch.nn.Module):
    """``gelu(dense(x))`` (BERT's intermediate block) with the GELU applied by oneDNN inside the matrix multiply;
    the block's parts keep their transformers names (``dense``, ``intermediate_act_fn``) for code that walks the
    layers itself (usr's packed encoder)."""

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
        summed = torch.ops.mkldnn._linear_pointwise.binary(hidden, input_tensor, self.dense.packed_weight,
                                                           self.dense.bias, "add")
        return self.LayerNorm(summed)


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
    scale = float(expected.abs().max()) + 1e-30
    return actual.shape == expected.shape and float((actual - expected).abs().max()) <= _FUSED_TOLERANCE * scale


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
    :class:`OneDnnDenseResidualNorm`) where these agree on a probe; returns how many linear layers were replaced
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
    return replaced
