"""BERT-family encoders on the real tokens only (core_encoder_rows): transformers' hidden states at every real
token, the linear layers fed no padding, other models run as they are."""

from __future__ import annotations

import pytest
import torch
import transformers

from metrics._core.core_embed import token_states
from metrics._core.core_encoder_rows import hidden_states, packs
from metrics._core.core_onednn import onednn_linear_works, use_onednn_linears

FAMILIES = ("Bert", "Roberta", "XLMRoberta")
PAD = 1


def encoder(family: str, attention: str, onednn: bool) -> torch.nn.Module:
    torch.manual_seed(0)
    config = getattr(transformers, f"{family}Config")(vocab_size=100, hidden_size=64, num_hidden_layers=3,
                                                      num_attention_heads=4, intermediate_size=128, pad_token_id=PAD)
    model = getattr(transformers, f"{family}Model")(config, add_pooling_layer=False).eval()
    model.config._attn_implementation = attention
    if onednn:
        use_onednn_linears(model, torch.device("cpu"), torch.float32)
    return model


def padded_batch() -> tuple[torch.Tensor, torch.Tensor]:
    """Three sequences of 9, 5 and 2 tokens, right-padded."""
    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(3, 100, (3, 9), generator=generator)
    mask = torch.ones(3, 9, dtype=torch.long)
    mask[1, 5:] = 0
    mask[2, 2:] = 0
    return ids.masked_fill(mask == 0, PAD), mask


def transformers_states(model: torch.nn.Module, ids: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, ...]:
    with torch.inference_mode():
        return model(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("attention", ["sdpa", "eager"])
@pytest.mark.parametrize("onednn", [False, pytest.param(True, marks=pytest.mark.skipif(
    not onednn_linear_works(), reason="oneDNN linear operator unusable on this build"))])
def test_real_tokens_get_transformers_hidden_states(family: str, attention: str, onednn: bool) -> None:
    model = encoder(family, attention, onednn)
    ids, mask = padded_batch()
    expected = transformers_states(model, ids, mask)
    assert packs(model)
    with torch.inference_mode():
        actual = hidden_states(model, ids, mask)
    assert len(actual) == len(expected) == 4
    real = mask.bool()
    for ours, theirs in zip(actual, expected, strict=True):
        assert ours.shape == theirs.shape
        # the same matrix multiplies on fewer rows: equal up to the order of float additions
        assert torch.allclose(ours[real], theirs[real], rtol=1e-5, atol=1e-6)
        assert not ours[~real].any()  # the padding is zeros, never read by a caller


def test_linear_layers_read_the_real_tokens_only() -> None:
    model = encoder("XLMRoberta", "sdpa", onednn=False)
    ids, mask = padded_batch()
    rows = []
    model.encoder.layer[0].attention.self.query.register_forward_hook(
        lambda module, inputs, output: rows.append(inputs[0].shape[0]))
    model.encoder.layer[2].output.dense.register_forward_hook(
        lambda module, inputs, output: rows.append(inputs[0].shape[0]))
    with torch.inference_mode():
        hidden_states(model, ids, mask)
    assert rows == [9 + 5 + 2, 9 + 5 + 2]  # not 3 x 9


@pytest.mark.parametrize("layer", [0, 2, None])
def test_token_states_are_each_sequence_s_real_tokens_in_order(layer: int | None) -> None:
    model = encoder("Bert", "sdpa", onednn=False)
    ids, mask = padded_batch()
    expected = transformers_states(model, ids, mask)
    states = token_states(model, ids, mask, layer=layer, truncated=None)
    wanted = torch.stack(expected, dim=2) if layer is None else expected[layer]
    assert states.shape[0] == 16
    assert torch.allclose(states, torch.cat([wanted[0, :9], wanted[1, :5], wanted[2, :2]]), rtol=1e-5, atol=1e-6)


def test_other_encoders_run_as_they_are() -> None:
    torch.manual_seed(0)
    config = transformers.XLMRobertaXLConfig(vocab_size=100, hidden_size=64, num_hidden_layers=2,
                                             num_attention_heads=4, intermediate_size=128, pad_token_id=PAD)
    model = transformers.XLMRobertaXLModel(config, add_pooling_layer=False).eval()  # pre-LayerNorm layers
    ids, mask = padded_batch()
    assert not packs(model)
    with torch.inference_mode():
        actual = hidden_states(model, ids, mask)
    for ours, theirs in zip(actual, transformers_states(model, ids, mask), strict=True):
        assert torch.equal(ours, theirs)
    decoder = encoder("Bert", "sdpa", onednn=False)
    decoder.config.is_decoder = True
    assert not packs(decoder)
    training = encoder("Bert", "sdpa", onednn=False).train()
    assert not packs(training)
    elsewhere = encoder("Bert", "sdpa", onednn=False).to("meta")  # any device but the CPU: as transformers runs it
    assert packs(encoder("Bert", "sdpa", onednn=False)) and not packs(elsewhere)
