"""unbabel-comet as the oracle of the comet module; runs in the oracle environment (tests/learned_oracle.py).

Payload actions (JSON on standard input, JSON result on the last line of standard output):
- ``encoder``: a tiny randomly initialised encoder folder (config.json and a tokenizer trained offline on the
  given texts) for an encoder family ("XLM-RoBERTa", "XLM-RoBERTa-XL" or "BERT");
- ``build``: a COMET model of ``class_identifier`` on that encoder, its weights drawn from ``seed`` (the layer-mix
  weights too, so that every layer matters), saved as unbabel-comet saves it: ``checkpoints/model.ckpt`` and
  ``hparams.yaml``;
- ``predict``: unbabel-comet's ``load_from_checkpoint`` and ``predict`` on the samples: per-sample scores, the
  system score and the seconds ``predict`` took;
- ``steps``: several of these in one process.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import torch


def build_encoder(payload: dict[str, Any]) -> dict[str, Any]:
    import transformers
    from tokenizers import BertWordPieceTokenizer

    from comet_checkpoint import xlmr_tokenizer  # this folder is on sys.path: the script's own

    folder = Path(payload["folder"])
    family = payload["encoder_model"]
    texts = payload["texts"]
    size = payload.get("hidden_size", 32)
    layers = payload.get("layers", 2)
    if family == "BERT":
        trainer = BertWordPieceTokenizer(lowercase=False)
        trainer.train_from_iterator(texts, vocab_size=800, show_progress=False)
        folder.mkdir(parents=True, exist_ok=True)
        trainer.save_model(str(folder))
        tokenizer = transformers.BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=False)
        config = transformers.BertConfig(vocab_size=len(tokenizer), hidden_size=size, num_hidden_layers=layers,
                                         num_attention_heads=4, intermediate_size=2 * size,
                                         max_position_embeddings=payload.get("max_positions", 512))
    else:
        tokenizer = xlmr_tokenizer(texts, vocab_size=1000)
        config_class = transformers.XLMRobertaXLConfig if family == "XLM-RoBERTa-XL" else transformers.XLMRobertaConfig
        config = config_class(vocab_size=len(tokenizer), hidden_size=size, num_hidden_layers=layers,
                              num_attention_heads=4, intermediate_size=2 * size,
                              max_position_embeddings=payload.get("max_positions", 514), pad_token_id=1,
                              bos_token_id=0, eos_token_id=2, type_vocab_size=1)
    tokenizer.save_pretrained(folder)
    config.save_pretrained(folder)
    return {"folder": str(folder), "vocab": len(tokenizer)}


def build_model(payload: dict[str, Any]) -> dict[str, Any]:
    import pytorch_lightning
    import yaml
    from comet.models import str2model

    torch.manual_seed(payload["seed"])
    model_class = str2model[payload["class_identifier"]]
    hparams = dict(payload.get("hparams", {}))
    model = model_class(pretrained_model=payload["encoder"], load_pretrained_weights=False, local_files_only=True,
                        **hparams)
    with torch.no_grad():
        for parameter in model.encoder.parameters():  # BERT-style init is too small to tell layers apart
            parameter.add_(torch.randn_like(parameter) * 0.05)
        if model.layerwise_attention is not None:
            for parameter in model.layerwise_attention.scalar_parameters:
                parameter.normal_()
            model.layerwise_attention.gamma.fill_(1.3)
    folder = Path(payload["folder"])
    (folder / "checkpoints").mkdir(parents=True, exist_ok=True)
    hyper = dict(model.hparams)
    torch.save({"state_dict": model.state_dict(), "hyper_parameters": hyper, "epoch": 0, "global_step": 0,
                "pytorch-lightning_version": pytorch_lightning.__version__}, folder / "checkpoints" / "model.ckpt")
    (folder / "hparams.yaml").write_text(yaml.safe_dump(hyper))
    return {"folder": str(folder), "hparams": hyper}


def predict(payload: dict[str, Any]) -> dict[str, Any]:
    from comet import load_from_checkpoint

    model = load_from_checkpoint(payload["checkpoint"], local_files_only=True)
    torch.set_num_threads(payload.get("threads", torch.get_num_threads()))
    results = []
    for samples in payload["sample_sets"]:
        start = time.perf_counter()
        output = model.predict(samples, batch_size=payload.get("batch_size", 16), gpus=0, progress_bar=False,
                               num_workers=0)
        results.append({"scores": list(output.scores), "system_score": output.system_score,
                        "seconds": time.perf_counter() - start})
    return {"results": results}


def steps(payload: dict[str, Any]) -> list[Any]:
    """Several actions in one process (unbabel-comet takes seconds to import)."""
    return [ACTIONS[step["action"]](step) for step in payload["steps"]]


ACTIONS = {"encoder": build_encoder, "build": build_model, "predict": predict, "steps": steps}

if __name__ == "__main__":
    import logging
    import warnings

    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    request = json.loads(sys.stdin.read())
    print(json.dumps(ACTIONS[request["action"]](request)))
