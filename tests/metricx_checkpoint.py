"""A tiny MetricX checkpoint in the released layout (config.json of an `MT5ForRegression`, `pytorch_model.bin` with
every key transformers 4.30 saved), with an mT5-style tokenizer in the same folder, written without the official
code, for the tests that run every metric (properties, bad input, map scoring, the base's entry points): random
weights, mT5's full vocabulary size (so the score row 250089 exists), a sentencepiece model of the project's example
sentences. Parity with the official code is tests/test_metricx.py's business (its checkpoint is built by the
oracle)."""

from __future__ import annotations

import functools
import json
import shutil
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCORE_TOKEN = 250089
CONFIG = {
    "architectures": ["MT5ForRegression"], "d_ff": 16, "d_kv": 4, "d_model": 8, "decoder_start_token_id": 0,
    "dense_act_fn": "gelu_new", "dropout_rate": 0.1, "eos_token_id": 1, "feed_forward_proj": "gated-gelu",
    "initializer_factor": 1.0, "is_encoder_decoder": True, "is_gated_act": True, "layer_norm_epsilon": 1e-06,
    "model_type": "mt5", "num_decoder_layers": 1, "num_heads": 2, "num_layers": 2, "output_past": True,
    "pad_token_id": 0, "relative_attention_max_distance": 128, "relative_attention_num_buckets": 32,
    "tie_word_embeddings": False, "tokenizer_class": "T5Tokenizer", "torch_dtype": "float32",
    "transformers_version": "4.30.2", "use_cache": True, "vocab_size": 250112,
}


def tiny_state(seed: int = 0) -> dict:
    """Random weights under the released key names (transformers' mT5 names, read from a model on the meta device),
    the shared embedding saved three times (one tensor), `lm_head` included."""
    import torch
    from transformers import MT5Config, MT5ForConditionalGeneration

    settings = {key: value for key, value in CONFIG.items() if key not in ("architectures", "torch_dtype")}
    with torch.device("meta"):
        shapes = {name: tensor.shape for name, tensor in MT5ForConditionalGeneration(MT5Config(**settings))
                  .state_dict().items()}
    generator = torch.Generator().manual_seed(seed)
    state = {}
    for name, shape in shapes.items():
        if "layer_norm" in name:
            state[name] = 1.0 + 0.3 * torch.randn(shape, generator=generator)
        else:
            state[name] = torch.randn(shape, generator=generator) / (shape[-1] ** 0.5 if "embed" not in name and
                                                                      "shared" not in name else 1.0)
    state["encoder.embed_tokens.weight"] = state["decoder.embed_tokens.weight"] = state["shared.weight"]
    # scores of about 12, varying by about 1 between texts
    state["lm_head.weight"][SCORE_TOKEN] = torch.randn(CONFIG["d_model"], generator=generator) * 3.2
    return state


def write_tokenizer(folder: Path) -> None:
    """An mT5-style sentencepiece tokenizer (pad 0, eos 1, unk 2) of the example sentences, as google/mt5-xl's
    folder holds it (spiece.model and the slow tokenizer's configuration)."""
    import sentencepiece as spm

    text = "\n".join((ROOT / "scripts" / "examples" / name).read_text(encoding="utf-8")
                     for name in ("sources.txt", "predictions.txt", "references.txt", "references-2.txt"))
    work = Path(tempfile.mkdtemp(prefix="tiny-metricx-spm-"))
    (work / "train.txt").write_text(text, encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(work / "train.txt"), model_prefix=str(work / "spiece"), vocab_size=200, model_type="unigram",
        character_coverage=1.0, pad_id=0, eos_id=1, unk_id=2, bos_id=-1, num_threads=1, minloglevel=2,
        hard_vocab_limit=False,
    )
    shutil.copyfile(work / "spiece.model", folder / "spiece.model")
    special = {"eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"}
    (folder / "special_tokens_map.json").write_text(json.dumps(special), encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(
        json.dumps({**special, "extra_ids": 0, "additional_special_tokens": None, "tokenizer_class": "T5Tokenizer"}),
        encoding="utf-8")


@functools.lru_cache(maxsize=None)
def tiny_metricx_checkpoint() -> str:
    """The folder of the checkpoint (tokenizer included), made once per process."""
    import torch

    folder = Path(tempfile.mkdtemp(prefix="tiny-metricx-"))
    write_tokenizer(folder)
    (folder / "config.json").write_text(json.dumps(CONFIG, indent=2), encoding="utf-8")
    torch.save(tiny_state(), str(folder / "pytorch_model.bin"))
    return str(folder)
