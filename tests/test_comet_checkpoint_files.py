"""comet reads released unbabel-comet checkpoint files with `torch.load(weights_only=True)`: every entry a
pytorch-lightning checkpoint holds is accepted, and a file that pickles code is refused without running it.

A pytorch-lightning checkpoint (Lightning's "Contents of a checkpoint": epoch, global step, the state dict, the
optimizers' and learning-rate schedulers' states, the stateful callbacks' states, the loops' states, the
hyper-parameters) is built here in two ways: by unbabel-comet's own training set-up (comet-train's callbacks, one
step, pytorch-lightning 2.x, in `.venv-oracles`), and by hand with the entries older pytorch-lightning versions
wrote (callback states keyed by the callback's class before 1.5, the AMP scaler's state). Scores from each equal
those from the bare state dict.
"""

from __future__ import annotations

import shutil
import sys
import types
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest
import torch
import yaml

from comet_checkpoint import tiny_comet_checkpoint
from conftest import ROOT
from learned_oracle import run_oracle
from pickle_imports import pickle_imports

ORACLE = Path(__file__).with_name("comet_oracle_run.py")
INPUTS = {"sources": ["Das Haus ist klein.", "Es regnet."], "predictions": ["The house is small.", "It rains."],
          "references": ["The house is little.", "It is raining."]}


@pytest.fixture(scope="module")
def comet():
    import evaluate

    return evaluate.load(str(ROOT / "metrics" / "comet"))


@pytest.fixture()
def model_copy(tmp_path) -> Path:
    return Path(shutil.copytree(tiny_comet_checkpoint(), tmp_path / "model"))


def _fake_class(module: str, name: str) -> type:
    """A class pickled by reference as ``module.name`` (pickle imports the module and checks that it holds it)."""
    parts = module.split(".")
    for end in range(1, len(parts) + 1):
        sys.modules.setdefault(".".join(parts[:end]), types.ModuleType(".".join(parts[:end])))
    cls = type(name, (), {"__module__": module})
    setattr(sys.modules[module], name, cls)
    return cls


def lightning_1x_checkpoint(state: dict) -> dict:
    """A checkpoint with the entries pytorch-lightning 1.x wrote for a comet-train run (AdamW, a warm-up
    schedule, EarlyStopping and ModelCheckpoint states keyed by their classes as before 1.5, 16-bit AMP)."""
    names = {("pytorch_lightning.callbacks.model_checkpoint", "ModelCheckpoint"),
             ("pytorch_lightning.callbacks.early_stopping", "EarlyStopping")}
    classes = {name: _fake_class(module, name) for module, name in names}
    hparams = {"class_identifier": "regression_metric", "hidden_sizes": [8], "layer": "mix"}  # dict(model.hparams)
    score = torch.tensor(0.4751)
    return {
        "epoch": 3, "global_step": 12000, "pytorch-lightning_version": "1.3.8", "state_dict": state,
        "callbacks": {
            classes["EarlyStopping"]: {"wait_count": 0, "stopped_epoch": 0, "best_score": score, "patience": 1},
            classes["ModelCheckpoint"]: {"monitor": "val_kendall", "best_model_score": score,
                                         "best_model_path": "/checkpoints/epoch=3.ckpt", "current_score": score,
                                         "dirpath": "/checkpoints", "best_k_models": {"/checkpoints/x.ckpt": score},
                                         "kth_best_model_path": "", "kth_value": score, "last_model_path": ""},
            "LearningRateMonitor{'logging_interval': 'step'}": {},
        },
        "loops": {"fit_loop": {"state_dict": {}, "epoch_progress": {"total": {"ready": 4, "completed": 3}},
                               "epoch_loop.state_dict": {"_batches_that_stepped": 12000}}},
        "optimizer_states": [{"state": {0: {"step": torch.tensor(12.0), "exp_avg": torch.zeros(2)}},
                              "param_groups": [{"lr": 3e-05, "betas": (0.9, 0.999), "eps": 1e-08,
                                                "weight_decay": 0.01, "amsgrad": False, "foreach": None,
                                                "maximize": False, "params": [0]}]}],
        "lr_schedulers": [{"base_lrs": [3e-05], "last_epoch": 12000, "_step_count": 12001, "verbose": False,
                           "_get_lr_called_within_step": False, "_last_lr": [3e-05], "lr_lambdas": [{}]}],
        "native_amp_scaling_state": {"scale": 65536.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                                     "growth_interval": 2000, "_growth_tracker": 12},
        "hparams_name": "kwargs", "hyper_parameters": hparams,
    }


def test_lightning_1x_checkpoint_entries_are_read_and_score_the_same(comet, model_copy) -> None:
    file = model_copy / "checkpoints" / "model.ckpt"
    bare = comet.compute(**INPUTS, checkpoint=str(model_copy))
    state = torch.load(file, weights_only=True)["state_dict"]
    modules = set(sys.modules)
    try:
        torch.save(lightning_1x_checkpoint(state), file)
    finally:
        for name in set(sys.modules) - modules:
            del sys.modules[name]
    import metrics._core.core_comet as core_comet

    core_comet.clear_comet_cache()
    assert comet.compute(**INPUTS, checkpoint=str(model_copy))["scores"] == bare["scores"]


# The pickle imports the Hub's scanner lists for Unbabel/wmt22-comet-da's checkpoints/model.ckpt, and the same four
# for wmt20-comet-da, wmt20-comet-qe-da and eamt22-cometinho-da:
# https://huggingface.co/Unbabel/wmt22-comet-da/tree/main/checkpoints
RELEASED_PICKLE_IMPORTS = {"collections.OrderedDict", "torch._utils._rebuild_tensor_v2", "torch.FloatStorage",
                           "torch.LongStorage"}


def released_checkpoint(state: dict[str, torch.Tensor], hparams: dict[str, Any]) -> dict[str, Any]:
    """A checkpoint of the structure the released COMET files have (the evidence is in the card's "Released
    checkpoint files"): what pytorch-lightning's ``dump_checkpoint`` writes under comet-train's
    ``ModelCheckpoint(save_weights_only=True)`` (Unbabel/COMET configs/model_checkpoint.yaml): no optimizer,
    scheduler or callback states; the version wmt22-comet-da's file reports (Unbabel/COMET#136); the state dict an
    ``OrderedDict`` holding, besides the parameters, the buffers the released files keep: XLM-R's int64
    ``position_ids`` (the key unbabel-comet reports as not in its model, Unbabel/COMET#136) and the layer mix's
    ``dropout_mask``/``dropout_fill`` (which eole's COMET converter skips); the hyper-parameters a plain dict."""
    layers = sum(name.startswith("layerwise_attention.scalar_parameters.") for name in state)
    released = OrderedDict(state)
    released["encoder.model.embeddings.position_ids"] = torch.arange(514).unsqueeze(0)
    released["layerwise_attention.dropout_mask"] = torch.zeros(layers)
    released["layerwise_attention.dropout_fill"] = torch.full((layers,), -1e20)
    return {"epoch": 1, "global_step": 9374, "pytorch-lightning_version": "1.8.3.post1", "state_dict": released,
            "loops": {"fit_loop": {"state_dict": {}, "epoch_progress": {"total": {"ready": 2, "completed": 1}}}},
            "hparams_name": "kwargs", "hyper_parameters": hparams}


def test_released_file_structure_is_read_and_scores_the_same(comet, model_copy) -> None:
    """Issue 34.3: a file with exactly the released files' pickle imports and entries reads as the bare state
    dict (the extra buffers ignored) and gives the same scores."""
    file = model_copy / "checkpoints" / "model.ckpt"
    bare = comet.compute(**INPUTS, checkpoint=str(model_copy))
    state = torch.load(file, weights_only=True)["state_dict"]
    hparams = yaml.safe_load((model_copy / "hparams.yaml").read_text())
    torch.save(released_checkpoint(state, hparams), file)
    assert pickle_imports(file) == RELEASED_PICKLE_IMPORTS
    import metrics._core.core_comet as core_comet

    core_comet.clear_comet_cache()
    assert comet.compute(**INPUTS, checkpoint=str(model_copy))["scores"] == bare["scores"]


def test_a_pickled_callable_is_refused_and_never_run(comet, model_copy, tmp_path) -> None:
    witness = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (Path.touch, (witness,))

    file = model_copy / "checkpoints" / "model.ckpt"
    content = torch.load(file, weights_only=True)
    torch.save({**content, "callbacks": {"x": Payload()}}, file)
    with pytest.raises(ValueError, match=r"could not read .* safely \(weights only\)"):
        comet.compute(**INPUTS, checkpoint=str(model_copy))
    assert not witness.exists()


@pytest.fixture(scope="module")
def oracle_files(tmp_path_factory) -> dict[str, Any]:
    """In one run of unbabel-comet: a checkpoint written by its training (one step), one built and saved by it, a
    copy of that one with a callback state keyed by the callback's class, and whether its own
    `load_from_checkpoint` reads the last two."""
    folder = tmp_path_factory.mktemp("oracle-files")
    texts = [f"Sentence number {index} with some words." for index in range(8)]
    encoder = str(folder / "encoder")
    _, trained, _, legacy, plain_load, legacy_load = run_oracle(ORACLE, {"action": "steps", "steps": [
        {"action": "encoder", "folder": encoder, "encoder_model": "XLM-RoBERTa", "texts": texts * 20},
        {"action": "train", "folder": str(folder / "trained"), "encoder": encoder, "texts": texts},
        {"action": "build", "folder": str(folder / "built"), "encoder": encoder,
         "class_identifier": "regression_metric", "seed": 0, "hparams": {"hidden_sizes": [8]}},
        {"action": "callback_keyed_copy", "folder": str(folder / "built"), "target": str(folder / "legacy")},
        {"action": "load", "checkpoint": str(folder / "built" / "checkpoints" / "model.ckpt")},
        {"action": "load", "checkpoint": str(folder / "legacy" / "checkpoints" / "model.ckpt")}]})
    return {"trained": trained, "legacy": legacy, "plain_load": plain_load, "legacy_load": legacy_load}


def test_checkpoint_written_by_comet_train_is_read(comet, oracle_files) -> None:
    """unbabel-comet's training writes the checkpoint (pytorch-lightning 2.x: loops, callbacks' states keyed by
    strings, optimizer states, hparams_name)."""
    built = oracle_files["trained"]
    assert {"loops", "callbacks", "optimizer_states", "lr_schedulers", "hparams_name"} <= set(built["keys"])
    folder = Path(built["checkpoint"]).parent.parent
    hparams = torch.load(built["checkpoint"], weights_only=True)["hyper_parameters"]
    import yaml

    (folder / "hparams.yaml").write_text(yaml.safe_dump(dict(hparams)))
    result = comet.compute(**INPUTS, checkpoint=str(folder))
    assert len(result["scores"]) == 2


def test_unbabel_comet_itself_reads_checkpoints_weights_only(comet, oracle_files) -> None:
    """Why every released file that unbabel-comet loads today is one this module reads. unbabel-comet 2.2.7 allows
    pytorch-lightning 2.x, which pip resolves to 2.6 (2.6.6 in `.venv-oracles`); from 2.6 pytorch-lightning leaves
    `weights_only` to torch (True from torch 2.6) and allows no extra globals. So unbabel-comet's own
    `load_from_checkpoint` refuses what torch's weights-only unpickler refuses (here a callback state keyed by the
    callback's class, as pytorch-lightning before 1.5 wrote it), and a released file it loads holds only tensors,
    containers, strings and numbers, all of which this module reads. This module reads the class-keyed file too."""
    plain, refused = oracle_files["plain_load"], oracle_files["legacy_load"]
    assert plain["loaded"], plain
    assert plain["pytorch_lightning"].startswith("2.6") and int(plain["torch"].split(".")[1]) >= 6
    assert not refused["loaded"]
    assert "Weights only load failed" in refused["error"]
    assert "pytorch_lightning.callbacks.early_stopping.EarlyStopping" in refused["error"]
    legacy = Path(oracle_files["legacy"]["checkpoint"]).parent.parent
    assert len(comet.compute(**INPUTS, checkpoint=str(legacy))["scores"]) == 2
