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


def test_bleurt_blocks_run_fused_on_the_real_tokens_only() -> None:
    """BLEURT's blocks (named as BERT's) run fused alike, and its linear layers read the real tokens of a padded
    batch only: each pair scores in a batch what it scores alone, and what the unfused model gives."""
    import copy

    from metrics._core.core_bleurt_model import BleurtConfig, BleurtRegressor
    from metrics._core.core_onednn import OneDnnDenseGelu, OneDnnDenseResidualNorm

    torch.manual_seed(0)
    config = BleurtConfig.from_dict({"vocab_size": 100, "hidden_size": 64, "num_hidden_layers": 2,
                                     "num_attention_heads": 4, "intermediate_size": 128, "embedding_size": 32})
    unfused = BleurtRegressor(config).eval()
    fused = copy.deepcopy(unfused)
    use_onednn_linears(fused, torch.device("cpu"), torch.float32)
    kinds = [type(module) for module in fused.modules()]
    assert kinds.count(OneDnnDenseGelu) == 2 and kinds.count(OneDnnDenseResidualNorm) == 4
    lengths = [17, 10, 4]
    ids = torch.randint(5, 100, (3, 17)) * (torch.arange(17) < torch.tensor(lengths)[:, None])
    mask = (ids > 0).long()
    types = (torch.arange(17) >= 3).long() * mask
    rows_read: list[int] = []
    fused.layers[0].qkv.register_forward_hook(lambda module, inputs, output: rows_read.append(len(inputs[0])))
    with torch.inference_mode():
        batched = fused(ids, types, mask)
        alone = torch.cat([fused(ids[i:i + 1, :n], types[i:i + 1, :n], mask[i:i + 1, :n])
                           for i, n in enumerate(lengths)])
        expected = unfused(ids, types, mask)
    assert rows_read[0] == sum(lengths)  # 31 token rows, not 3 x 17
    assert torch.allclose(batched, alone, rtol=1e-5, atol=1e-6)
    assert torch.allclose(batched, expected, rtol=1e-5, atol=1e-6)


def tiny_llama(activation: str = "silu") -> torch.nn.Module:
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(hidden_size=64, intermediate_size=96, num_attention_heads=4, num_key_value_heads=2,
                         num_hidden_layers=3, vocab_size=100, hidden_act=activation, attn_implementation="sdpa")
    return LlamaForCausalLM(config).eval()


def test_llama_layers_run_fused_with_transformers_float_operations() -> None:
    """Llama's decoder layers, RMS norms and rotary embeddings: the fused forwards give the bits of transformers'
    own forwards on the same (oneDNN) linear layers, the model's output equals nn.Linear's up to float rounding,
    the layers stay instances of transformers' class (hidden states are still captured) and generation with a
    cache of past keys and values is unchanged."""
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRMSNorm, apply_rotary_pos_emb

    from metrics._core.core_onednn import OneDnnLlamaLayer, OneDnnRmsNorm, _rotated

    model = tiny_llama()
    ids = torch.randint(0, 100, (3, 12))
    with torch.inference_mode():
        expected = model.model(input_ids=ids).last_hidden_state
        generated = model.generate(ids[:1], max_new_tokens=4, do_sample=False)
        use_onednn_linears(model, torch.device("cpu"), torch.float32)
        actual = model.model(input_ids=ids).last_hidden_state
        assert torch.equal(model.generate(ids[:1], max_new_tokens=4, do_sample=False), generated)
        captured = model(input_ids=ids, output_hidden_states=True).hidden_states
        hidden = torch.randn(3, 12, 64)
        angles = torch.randn(1, 12, 8).repeat(1, 1, 2)
        cos, sin = angles.cos(), angles.sin()
        for layer in model.model.layers:
            assert isinstance(layer, OneDnnLlamaLayer) and isinstance(layer, LlamaDecoderLayer)
            assert torch.equal(layer(hidden, position_embeddings=(cos, sin)),
                               LlamaDecoderLayer.forward(layer, hidden, position_embeddings=(cos, sin)))
        norm = model.model.norm
        assert isinstance(norm, OneDnnRmsNorm) and torch.equal(norm(hidden), LlamaRMSNorm.forward(norm, hidden))
        queries, keys = torch.randn(3, 12, 4, 16), torch.randn(3, 12, 2, 16)
        rotated = apply_rotary_pos_emb(queries.transpose(1, 2), keys.transpose(1, 2), cos, sin)
        assert torch.equal(_rotated(queries, cos, sin).transpose(1, 2), rotated[0])
        assert torch.equal(_rotated(keys, cos, sin).transpose(1, 2), rotated[1])
    assert torch.allclose(actual, expected, rtol=1e-5, atol=1e-5)
    assert len(captured) == 4 and torch.equal(captured[-1], actual)


def test_final_states_at_one_position_per_sequence() -> None:
    """The last layer run at one position per sequence gives the full forward's final states there, fused or
    not (a gated feed-forward block with GELU is left unfused, and so is its layer)."""
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer

    from metrics._core.core_onednn import OneDnnLlamaLayer, final_states_at

    ids = torch.randint(0, 100, (4, 10))
    positions = torch.tensor([9, 0, 3, 6])
    for activation, fused in (("silu", True), ("gelu", False)):
        model = tiny_llama(activation)
        use_onednn_linears(model, torch.device("cpu"), torch.float32)
        with torch.inference_mode():
            full = model.model(input_ids=ids).last_hidden_state[torch.arange(4), positions]
            rows = final_states_at(model.model, ids, positions)
        assert isinstance(model.model.layers[-1], OneDnnLlamaLayer) == fused
        assert isinstance(model.model.layers[-1], LlamaDecoderLayer)
        assert rows.shape == (4, 64) and torch.allclose(rows, full, rtol=1e-5, atol=1e-6)
