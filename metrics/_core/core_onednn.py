"""fp32 linear layers of a CPU model run through oneDNN instead of PyTorch's default BLAS.

On the CPU PyTorch multiplies fp32 matrices with MKL, which on non-Intel
processors takes far slower kernels than oneDNN (also bundled with PyTorch,
and already what it uses for bf16): on the 2-core AMD EPYC this project runs
on, oneDNN's linear layer reaches 404 GFLOP/s against MKL's 164. The results
differ from MKL's only in the order of float additions (about 1e-6 relative on
hidden states). Where the oneDNN operator is missing, or disagrees with
``torch.nn.functional.linear`` on a probe, models are left as they are.
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
    """Replace, in place, every fp32 ``nn.Linear`` of a CPU ``model`` by a :class:`OneDnnLinear`; returns how
    many were replaced (0 on other devices or precisions, or where oneDNN is unusable)."""
    if device.type != "cpu" or dtype != torch.float32 or not onednn_linear_works():
        return 0
    replaced = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if type(child) is torch.nn.Linear and child.weight.dtype == torch.float32:
                setattr(parent, name, OneDnnLinear(child))
                replaced += 1
    return replaced
