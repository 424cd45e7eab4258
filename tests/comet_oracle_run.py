"""unbabel-comet as the oracle of the comet module; runs in the oracle environment (tests/learned_oracle.py).

Payload actions (JSON on standard input, JSON result on the last line of standard output):
- ``encoder``: a randomly initialised encoder folder (config.json and a tokenizer trained offline on the given
  texts) for an encoder family ("XLM-RoBERTa", "XLM-RoBERTa-XL" or "BERT"), tiny unless ``hidden_size``,
  ``layers``, ``heads`` and ``intermediate_size`` say otherwise;
- ``build``: a COMET model of ``class_identifier`` on that encoder, its weights drawn from ``seed`` (the layer-mix
  weights too, so that every layer matters; a word tagger made confident, "O" favoured, so that error spans open
  and close; optionally the estimator's last bias set to ``final_bias``), saved as unbabel-comet saves it: ``checkpoints/model.ckpt`` and
  ``hparams.yaml``;
- ``predict``: unbabel-comet's ``load_from_checkpoint`` and ``predict`` on the samples: per-sample scores, the
  system score, the seconds ``predict`` took and the entries of its ``metadata`` named by ``metadata`` (e.g.
  XCOMET's ``error_spans``); optionally after ``set_decoding_threshold(decoding_threshold)``, and with
  ``predict(mc_dropout=mc_dropout)`` (metadata ``mcd_scores``, ``mcd_std``), torch seeded with ``seed``;
- ``callback_keyed_copy``: a model folder copied with its callback states keyed by a callback class (pytorch-lightning
  before 1.5);
- ``load``: whether unbabel-comet's ``load_from_checkpoint`` reads a checkpoint (and its error if not);
- ``train``: one training step of a regression model with ``comet-train``'s callbacks, and the checkpoint
  pytorch-lightning writes (its entries' names);
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
    heads = payload.get("heads", 4)
    inner = payload.get("intermediate_size") or 2 * size
    if family == "BERT":
        trainer = BertWordPieceTokenizer(lowercase=False)
        trainer.train_from_iterator(texts, vocab_size=800, show_progress=False)
        folder.mkdir(parents=True, exist_ok=True)
        trainer.save_model(str(folder))
        tokenizer = transformers.BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=False)
        config = transformers.BertConfig(vocab_size=len(tokenizer), hidden_size=size, num_hidden_layers=layers,
                                         num_attention_heads=heads, intermediate_size=inner,
                                         max_position_embeddings=payload.get("max_positions", 512))
    else:
        tokenizer = xlmr_tokenizer(texts, vocab_size=1000)
        config_class = transformers.XLMRobertaXLConfig if family == "XLM-RoBERTa-XL" else transformers.XLMRobertaConfig
        config = config_class(vocab_size=len(tokenizer), hidden_size=size, num_hidden_layers=layers,
                              num_attention_heads=heads, intermediate_size=inner,
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
        tagger = getattr(model, "hidden2tag", None)
        if tagger is not None:  # confident tags, "O" the likeliest, so that spans open and close
            tagger.weight.mul_(payload.get("tag_scale", 4.0))
            tagger.bias[0] += payload.get("tag_bias", 1.0)
        if "final_bias" in payload:  # XCOMET caps regression scores at 1: move some above it
            model.estimator.ff[-1].bias.fill_(payload["final_bias"])
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
    if payload.get("decoding_threshold") is not None:
        model.set_decoding_threshold(payload["decoding_threshold"])
    if "seed" in payload:
        torch.manual_seed(payload["seed"])
    results = []
    for samples in payload["sample_sets"]:
        start = time.perf_counter()
        output = model.predict(samples, batch_size=payload.get("batch_size", 16), gpus=0, progress_bar=False,
                               num_workers=0, mc_dropout=payload.get("mc_dropout", 0))
        seconds = time.perf_counter() - start
        metadata = dict(output.metadata) if "metadata" in output else {}
        results.append({"scores": list(output.scores), "system_score": output.system_score, "seconds": seconds,
                        "metadata": {key: metadata[key] for key in payload.get("metadata", []) if key in metadata}})
    return {"results": results}


def load(payload: dict[str, Any]) -> dict[str, Any]:
    """Whether unbabel-comet's own ``load_from_checkpoint`` reads the checkpoint (the error if not), with the
    versions of the libraries that decide how it unpickles the file."""
    import pytorch_lightning
    from comet import load_from_checkpoint

    versions = {"torch": torch.__version__, "pytorch_lightning": pytorch_lightning.__version__}
    try:
        load_from_checkpoint(payload["checkpoint"], local_files_only=True)
    except Exception as error:  # noqa: BLE001 - the refusal is the result
        return {"loaded": False, "error": f"{type(error).__name__}: {error}"[:3000], **versions}
    return {"loaded": True, **versions}


def callback_keyed_copy(payload: dict[str, Any]) -> dict[str, Any]:
    """A copy of a model folder whose checkpoint keys a callback's state by the callback's class, as
    pytorch-lightning before 1.5 wrote it (a pickled class reference)."""
    import shutil

    from pytorch_lightning.callbacks import EarlyStopping

    target = Path(shutil.copytree(payload["folder"], payload["target"]))
    file = target / "checkpoints" / "model.ckpt"
    content = torch.load(file, weights_only=True)
    torch.save({**content, "callbacks": {EarlyStopping: {"wait_count": 0, "patience": 1}}}, file)
    return {"checkpoint": str(file)}


def train(payload: dict[str, Any]) -> dict[str, Any]:
    """One training step of a regression model with unbabel-comet's own trainer set-up (``comet-train``'s
    callbacks: EarlyStopping, ModelCheckpoint, LearningRateMonitor), and the checkpoint pytorch-lightning writes:
    the structure of a checkpoint saved by training, non-tensor entries included."""
    import csv

    from comet.models import str2model
    from pytorch_lightning import Trainer
    from pytorch_lightning.callbacks import EarlyStopping, LearningRateMonitor, ModelCheckpoint
    from pytorch_lightning.loggers import CSVLogger

    folder = Path(payload["folder"])
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "data.csv"
    with data.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["src", "mt", "ref", "score"])
        for index, text in enumerate(payload["texts"]):
            writer.writerow([text, text[::-1], text, index % 3 / 2])
    torch.manual_seed(0)
    model = str2model["regression_metric"](pretrained_model=payload["encoder"], load_pretrained_weights=False,
                                           local_files_only=True, train_data=[str(data)],
                                           validation_data=[str(data)], batch_size=2, nr_frozen_epochs=0.0,
                                           hidden_sizes=[8], warmup_steps=1)
    callbacks = [EarlyStopping(monitor="train_loss", mode="min", patience=1),
                 ModelCheckpoint(dirpath=str(folder / "checkpoints"), filename="model", monitor="train_loss",
                                 mode="min", save_top_k=1),
                 LearningRateMonitor(logging_interval="step")]
    trainer = Trainer(max_steps=1, callbacks=callbacks, accelerator="cpu", logger=CSVLogger(str(folder)),
                      enable_progress_bar=False,
                      limit_val_batches=1, num_sanity_val_steps=0, enable_model_summary=False)
    trainer.fit(model)
    checkpoint = folder / "checkpoints" / "model.ckpt"
    if not checkpoint.is_file():
        trainer.save_checkpoint(str(checkpoint))
    content = torch.load(checkpoint, map_location="cpu", weights_only=False)
    return {"checkpoint": str(checkpoint), "keys": sorted(content),
            "callbacks": sorted(content.get("callbacks", {})), "hparams_type": type(content["hyper_parameters"]).__module__}


def steps(payload: dict[str, Any]) -> list[Any]:
    """Several actions in one process (unbabel-comet takes seconds to import)."""
    return [ACTIONS[step["action"]](step) for step in payload["steps"]]


ACTIONS = {"encoder": build_encoder, "build": build_model, "predict": predict, "load": load,
           "callback_keyed_copy": callback_keyed_copy, "train": train, "steps": steps}

if __name__ == "__main__":
    import logging
    import warnings

    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    request = json.loads(sys.stdin.read())
    print(json.dumps(ACTIONS[request["action"]](request)))
