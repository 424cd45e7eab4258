"""CPU fp32 linear layers through oneDNN: same results as nn.Linear up to float addition order, used by the
loaded models, left alone on other precisions."""

from __future__ import annotations

import pytest
import torch

from metrics._core.core_models import clear_model_cache, load_model, resolve_model
from metrics._core.core_onednn import OneDnnLinear, onednn_linear_works, use_onednn_linears

pytestmark = pytest.mark.skipif(not onednn_linear_works(), reason="oneDNN linear operator unusable on this build")


def small_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 32, bias=False))


def test_replaced_layers_compute_what_nn_linear_computes() -> None:
    model = small_model()
    inputs = torch.randn(5, 11, 64)
    with torch.inference_mode():
        expected = model(inputs)
        assert use_onednn_linears(model, torch.device("cpu"), torch.float32) == 2
        actual = model(inputs)
    assert all(isinstance(layer, OneDnnLinear) for layer in (model[0], model[2]))
    assert model[2].bias is None
    # fp32 with 256-term dot products: only the order of additions differs
    assert torch.allclose(actual, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("device", "dtype"), [("cpu", torch.bfloat16), ("meta", torch.float32)])
def test_other_precisions_and_devices_are_left_alone(device: str, dtype: torch.dtype) -> None:
    model = small_model()
    assert use_onednn_linears(model, torch.device(device), dtype) == 0
    assert type(model[0]) is torch.nn.Linear


def test_loaded_cpu_models_use_onednn_in_fp32_only() -> None:
    source = resolve_model("bertscore", None)
    clear_model_cache()
    fp32 = load_model("bertscore", source, use_fast_tokenizer=False, device=torch.device("cpu"), dtype=torch.float32)
    bf16 = load_model("bertscore", source, use_fast_tokenizer=False, device=torch.device("cpu"), dtype=torch.bfloat16)
    layers = fp32.model.encoder.layer[0]
    assert isinstance(layers.intermediate.dense, OneDnnLinear)
    assert not any(type(module) is torch.nn.Linear for module in fp32.model.encoder.modules())
    assert type(bf16.model.encoder.layer[0].intermediate.dense) is torch.nn.Linear
    clear_model_cache()


@pytest.mark.parametrize("activation", ["silu", "gelu"])
def test_gated_feed_forward_blocks_run_fused_where_they_are_silu_ones(activation: str) -> None:
    """transformers' LlamaMLP, down(act(gate(x)) * up(x)): with SiLU its activation and product run inside
    oneDNN's matrix multiplies, with the same result up to float rounding; with another activation it is left as a
    block of oneDNN linear layers."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaMLP

    from metrics._core.core_onednn import OneDnnGatedMlp

    torch.manual_seed(0)
    config = LlamaConfig(hidden_size=48, intermediate_size=136, num_attention_heads=4, num_key_value_heads=4,
                         hidden_act=activation)
    model = torch.nn.Sequential(LlamaMLP(config))
    inputs = torch.randn(3, 9, 48)
    with torch.inference_mode():
        expected = model(inputs)
        assert use_onednn_linears(model, torch.device("cpu"), torch.float32) == 3
        actual = model(inputs)
    assert isinstance(model[0], OneDnnGatedMlp) == (activation == "silu")
    assert torch.allclose(actual, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("family", ["Bert", "XLMRoberta"])
def test_bert_family_blocks_run_fused(family: str) -> None:
    """BERT and XLM-R (COMET's encoder): the feed-forward GELU and the residual sums before the LayerNorms run
    inside oneDNN's matrix multiplies; the encoder's output is that of nn.Linear up to float rounding."""
    import transformers

    from metrics._core.core_onednn import OneDnnDenseGelu, OneDnnDenseResidualNorm

    torch.manual_seed(0)
    config = getattr(transformers, f"{family}Config")(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                                       intermediate_size=128, vocab_size=100)
    model = getattr(transformers, f"{family}Model")(config).eval()
    ids = torch.randint(5, 100, (3, 17))
    mask = torch.ones_like(ids)
    mask[0, 10:] = 0
    with torch.inference_mode():
        expected = model(input_ids=ids, attention_mask=mask).last_hidden_state
        use_onednn_linears(model, torch.device("cpu"), torch.float32)
        actual = model(input_ids=ids, attention_mask=mask).last_hidden_state
    kinds = [type(module) for module in model.modules()]
    assert kinds.count(OneDnnDenseGelu) == 2 and kinds.count(OneDnnDenseResidualNorm) == 4
    assert torch.allclose(actual, expected, rtol=1e-5, atol=1e-5)
