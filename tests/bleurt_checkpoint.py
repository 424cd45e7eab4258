"""A tiny BLEURT checkpoint in bleurt-pytorch's layout (config.json, model.safetensors, a wordpiece vocab.txt),
written without bleurt-pytorch, for the tests that run every metric (properties, bad input, map scoring, the
base's entry points): random weights, an embedding projection, a vocabulary of the project's example sentences.
Parity with bleurt-pytorch itself is tests/test_bleurt.py's business (its checkpoints are built by it)."""

from __future__ import annotations

import functools
import json
import re
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = {"model_type": "bleurt", "hidden_size": 16, "embedding_size": 8, "num_hidden_layers": 2,
          "num_attention_heads": 2, "intermediate_size": 32, "max_position_embeddings": 512, "type_vocab_size": 2,
          "hidden_act": "gelu", "layer_norm_eps": 1e-12, "pad_token_id": 0}


@functools.lru_cache(maxsize=None)
def tiny_bleurt_checkpoint() -> str:
    """The folder of the checkpoint, made once per process."""
    import torch
    from safetensors.torch import save_file

    folder = Path(tempfile.mkdtemp(prefix="tiny-bleurt-"))
    words = sorted({word for path in (ROOT / "scripts" / "examples" / "systems").iterdir()
                    for word in re.findall(r"\w+|[^\w\s]", path.read_text(encoding="utf-8"))})
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]
    (folder / "vocab.txt").write_text("\n".join(vocabulary) + "\n", encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": False}), encoding="utf-8")
    config = {**CONFIG, "vocab_size": len(vocabulary)}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    hidden, width, inner = config["hidden_size"], config["embedding_size"], config["intermediate_size"]
    shapes = {"bleurt.embeddings.word_embeddings.weight": (len(vocabulary), width),
              "bleurt.embeddings.position_embeddings.weight": (config["max_position_embeddings"], width),
              "bleurt.embeddings.token_type_embeddings.weight": (2, width),
              "bleurt.embeddings.LayerNorm.weight": (width,), "bleurt.embeddings.LayerNorm.bias": (width,),
              "bleurt.encoder.embedding_projection.weight": (hidden, width),
              "bleurt.encoder.embedding_projection.bias": (hidden,),
              "bleurt.pooler.dense.weight": (hidden, hidden), "bleurt.pooler.dense.bias": (hidden,),
              "classifier.weight": (1, hidden), "classifier.bias": (1,)}
    for index in range(config["num_hidden_layers"]):
        layer = f"bleurt.encoder.layer.{index}."
        for part in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            shapes |= {f"{layer}{part}.weight": (hidden, hidden), f"{layer}{part}.bias": (hidden,)}
        shapes |= {f"{layer}intermediate.dense.weight": (inner, hidden), f"{layer}intermediate.dense.bias": (inner,),
                   f"{layer}output.dense.weight": (hidden, inner), f"{layer}output.dense.bias": (hidden,)}
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes |= {f"{layer}{norm}.weight": (hidden,), f"{layer}{norm}.bias": (hidden,)}
    generator = torch.Generator().manual_seed(0)
    state = {name: (torch.ones(shape) if name.endswith("LayerNorm.weight") else
                    torch.randn(shape, generator=generator) * 0.2) for name, shape in shapes.items()}
    save_file(state, str(folder / "model.safetensors"))
    return str(folder)
