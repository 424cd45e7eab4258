"""Tiny USR models in the official release's layout, written without the official code: a folder holding
``roberta_ft/`` (a RoBERTa masked LM), ``ctx/`` and ``uk/`` (two-class RoBERTa sequence classifiers), each as
transformers 2.x saved them (``config.json``, ``pytorch_model.bin`` with 2.x's key names: the masked LM's
``lm_head.bias`` and no decoder bias), with a byte-level BPE ``vocab.json``/``merges.txt`` trained offline on the
project's example sentences and dialogue markers. Random weights (a wide initialisation, so that scores differ
from text to text). Used by the tests that run every metric (tests/conftest.py ``model_config``) and by the USR
parity tests, whose oracle (transformers 2.2.0, tests/usr_oracle_run.py) loads the same files.

``roberta_base_shaped`` makes the benchmark's models (scripts/bench_usr.py): RoBERTa-base's shapes (12 layers of
768, 12 heads, a 50,265-token vocabulary) with random weights, and a byte-level BPE trained on the texts to be scored
(so that they split into about as many tokens as RoBERTa's own BPE gives English dialogue: about 1.2 per word),
grown to 50,265 entries with fillers.
"""

from __future__ import annotations

import functools
import json
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SPECIAL_TOKENS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
# what the official models read besides text: the turn and response markers
MARKER_LINES = ["hi there ! _eos _go hello , how are you ? _eos", "i like movies _eos _go me too ! _eos"] * 20


def example_texts() -> list[str]:
    return [line for path in sorted((ROOT / "scripts" / "examples" / "systems").iterdir())
            for line in path.read_text(encoding="utf-8").splitlines()] + MARKER_LINES


def write_tokenizer(folder: Path, texts: list[str], vocab_size: int, pad_to: int | None = None) -> int:
    """vocab.json and merges.txt of a byte-level BPE trained on ``texts`` (special tokens first, RoBERTa's ids);
    with ``pad_to``, filler entries (never produced) grow the vocabulary to that size. Returns its size."""
    from tokenizers import ByteLevelBPETokenizer

    trainer = ByteLevelBPETokenizer()
    trainer.train_from_iterator(texts, vocab_size=vocab_size, min_frequency=2, special_tokens=SPECIAL_TOKENS,
                                show_progress=False)
    folder.mkdir(parents=True, exist_ok=True)
    trainer.save_model(str(folder))
    vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    if pad_to is not None:
        for index in range(len(vocab), pad_to):
            vocab[f"<filler{index}>"] = index
        (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    return len(vocab)


def _config(vocab_size: int, size: str) -> Any:
    import transformers

    shapes = {"tiny": dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
                           initializer_range=0.5),
              "base": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
                           initializer_range=0.02)}[size]
    return transformers.RobertaConfig(vocab_size=vocab_size, max_position_embeddings=514, type_vocab_size=1,
                                      pad_token_id=1, bos_token_id=0, eos_token_id=2, layer_norm_eps=1e-5, **shapes)


def _save_2x(model: Any, config: Any, folder: Path, tokenizer_folder: Path, safetensors: bool) -> None:
    """A transformers-2.x-style model folder: 2.x's state dict keys, config.json, the tokenizer files."""
    import torch

    state = {key: value.detach().clone().contiguous() for key, value in model.state_dict().items()
             if key != "lm_head.decoder.bias" and not key.endswith("position_ids")}
    folder.mkdir(parents=True, exist_ok=True)
    if safetensors:
        from safetensors.torch import save_file

        save_file(state, str(folder / "model.safetensors"))
    else:
        torch.save(state, folder / "pytorch_model.bin")
    settings = {key: value for key, value in config.to_dict().items()
                if key not in ("architectures", "transformers_version", "dtype", "torch_dtype")}
    (folder / "config.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    for name in ("vocab.json", "merges.txt"):
        (folder / name).write_bytes((tokenizer_folder / name).read_bytes())


def write_usr_models(folder: Path, *, size: str = "tiny", seed: int = 0, safetensors: bool = False,
                     tokenizer_texts: list[str] | None = None) -> Path:
    """``folder`` with roberta_ft/, ctx/ and uk/ (the official layout) of random models of ``size`` ("tiny" or
    "base"); the BPE is trained on the project's example sentences, or on ``tokenizer_texts`` (a vocabulary of up
    to 50,265 entries then, RoBERTa-base's)."""
    import torch
    import transformers

    tokenizer_folder = folder / "tokenizer"
    texts = example_texts() if tokenizer_texts is None else [*tokenizer_texts, *MARKER_LINES]
    merges_size = 400 if tokenizer_texts is None else 50265
    if size == "base":
        vocab_size = write_tokenizer(tokenizer_folder, texts, merges_size, pad_to=50265)
    else:
        vocab_size = write_tokenizer(tokenizer_folder, texts, 300 if tokenizer_texts is None else merges_size)
    config = _config(vocab_size, size)
    torch.manual_seed(seed)
    mlm = transformers.RobertaForMaskedLM(config)
    with torch.no_grad():  # transformers 2.x's head adds `lm_head.bias` after the decoder: make it matter
        mlm.lm_head.bias.normal_(0.0, 1.0 if size == "tiny" else 0.02)
        mlm.lm_head.decoder.bias.copy_(mlm.lm_head.bias)
    _save_2x(mlm, config, folder / "roberta_ft", tokenizer_folder, safetensors)
    classifier_config = transformers.RobertaConfig(**{**config.to_dict(), "num_labels": 2})
    for offset, name in enumerate(("ctx", "uk"), start=1):
        torch.manual_seed(seed + offset)
        _save_2x(transformers.RobertaForSequenceClassification(classifier_config), classifier_config,
                 folder / name, tokenizer_folder, safetensors)
    return folder


@functools.lru_cache(maxsize=None)
def tiny_usr_models(safetensors: bool = False) -> str:
    """The folder of tiny random USR models in the official layout, made once per process."""
    folder = Path(tempfile.mkdtemp(prefix="tiny-usr-"))
    return str(write_usr_models(folder, safetensors=safetensors))


def roberta_base_shaped(folder: Path, texts: list[str], *, seed: int = 0) -> Path:
    """``folder`` with RoBERTa-base-shaped random USR models (roberta_ft/, ctx/, uk/) whose BPE is trained on
    ``texts``; kept when it already holds them (a stamp file names the texts' hash and the seed)."""
    import hashlib

    stamp = hashlib.sha256(json.dumps([seed, texts]).encode("utf-8")).hexdigest()
    if (folder / "stamp").is_file() and (folder / "stamp").read_text(encoding="utf-8") == stamp:
        return folder
    write_usr_models(folder, size="base", seed=seed, tokenizer_texts=texts)
    (folder / "stamp").write_text(stamp, encoding="utf-8")
    return folder
