"""MetricX through evaluate's loader against its oracle, the official google-research/metricx code.

The official `get_dataset` and `MT5ForRegression` run in their own environment (tests/metricx_oracle.py): they
build a tiny checkpoint of the released structure from a fixed seed and score one example at a time; expected
scores and token ids come only from them. The released file layouts are checked on the suite's tiny checkpoint
(tests/metricx_checkpoint.py), re-saved in each layout the Hugging Face repositories hold.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import torch

from metricx_oracle import build_and_score, official_repo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from metrics._core.core_metricx_inputs import (  # noqa: E402
    as_official_tokenizer, encode_inputs, model_input, token_batches,
)

# fp32: the official code runs each example alone through transformers 4.30's eager attention and the whole
# vocabulary's projection; this module pads length-sorted batches and projects on the score row only
TOLERANCE = 5e-5


@pytest.fixture(scope="module")
def metricx():
    """The module with no checkpoint bound (the suite's shared one has a tiny checkpoint as its config)."""
    import evaluate

    return evaluate.load(str(ROOT / "metrics" / "metricx"))


@pytest.fixture(scope="module")
def corpus(wmt17) -> dict[str, list[str]]:
    """160 examples: WMT17 system outputs, their references, other references as sources; then empty texts, a
    repeated example, literal special tokens, unicode, spaces, and texts longer than 1536 tokens."""
    references, systems = wmt17
    names = sorted(systems)
    sources, predictions, refs = [], [], []
    for index in range(140):
        sources.append(references[1000 + index])
        predictions.append(systems[names[index % len(names)]][index])
        refs.append(references[index])
    long_text = " ".join(references[200:400])
    extra = [
        ("", "", ""), (references[1], "", references[2]), ("", systems[names[0]][3], ""),
        (sources[0], predictions[0], refs[0]),  # the same as example 0
        ("Ein </s> Satz <pad> mit <unk> Sondertoken <extra_id_10>.", "A </s> sentence <pad>.", "Eine <s> Referenz."),
        ("Ünïcödé — „Anführungszeichen“ 東京 😀", "Unicode – \"quotes\" Tokio", "Ünïcödé 東京"),
        ("   führende und  doppelte   Leerzeichen ", "  spaces  ", "\tTab\nZeile"),
        (long_text, predictions[5], refs[5]), (sources[6], long_text, refs[6]), (sources[7], predictions[7], long_text),
    ]
    for source, prediction, reference in extra:
        sources.append(source)
        predictions.append(prediction)
        refs.append(reference)
    while len(predictions) < 160:
        index = len(predictions) + 500
        sources.append(references[index + 1000])
        predictions.append(systems[names[1]][index])
        refs.append(references[index])
    return {"sources": sources, "predictions": predictions, "references": refs}


REQUESTS = {  # name: (version, reference-based, max_input_length)
    "24": ("metricx-24", True, 1536),
    "24-qe": ("metricx-24", False, 1536),
    "23": ("metricx-23", True, 1024),
    "23-qe": ("metricx-23", False, 1024),
    "24-short": ("metricx-24", True, 40),
}


@pytest.fixture(scope="module")
def oracle(tmp_path_factory, wmt17, corpus) -> dict:
    """One oracle run: the official code builds the tiny checkpoint and scores the corpus in every mode."""
    references, _ = wmt17
    root = tmp_path_factory.mktemp("metricx")
    repo = official_repo()
    requests = [{"version": version, "max_input_length": length, "sources": corpus["sources"],
                 "hypotheses": corpus["predictions"], "references": corpus["references"] if with_reference else None}
                for version, with_reference, length in REQUESTS.values()]
    scored = build_and_score(root / "tiny-metricx", root / "mt5-tokenizer", references[:3000], repo, requests)
    return {"folder": root / "tiny-metricx", "tokenizer": root / "mt5-tokenizer",
            "results": dict(zip(REQUESTS, scored, strict=True))}


def _compute(metricx, oracle, corpus, name: str, **options) -> dict:
    version, with_reference, length = REQUESTS[name]
    given = {"sources": corpus["sources"], "predictions": corpus["predictions"]}
    if with_reference:
        given["references"] = corpus["references"]
    if length != 1536 and length != 1024:
        options["max_input_length"] = length
    return metricx.compute(**given, checkpoint=str(oracle["folder"]), tokenizer=str(oracle["tokenizer"]),
                           version=version, **options)


@pytest.mark.parametrize("name", list(REQUESTS))
def test_matches_the_official_code(metricx, oracle, corpus, name: str) -> None:
    expected = oracle["results"][name]
    # the official MT5ForRegression equals transformers' mT5 read as its forward reads it, on the official ids
    assert expected["official"] == expected["scores"] and expected["official_input_ids"] == expected["input_ids"]
    result = _compute(metricx, oracle, corpus, name)
    differences = [abs(a - b) for a, b in zip(result["scores"], expected["official"], strict=True)]
    print(f"metricx parity {name}: {len(differences)} examples, max abs difference {max(differences):.3g}",
          file=sys.stderr)
    assert max(differences) <= TOLERANCE
    assert result["examples"] == len(corpus["predictions"]) and result["version"] == REQUESTS[name][0]
    assert result["mean_score"] == pytest.approx(sum(result["scores"]) / len(result["scores"]), abs=1e-9)
    official = expected["official"]
    assert 0.0 in official and sum(0.0 < value < 25.0 for value in official) > len(official) // 3  # clipped, and not


@pytest.mark.parametrize("name", list(REQUESTS))
def test_inputs_are_the_official_token_ids(oracle, corpus, name: str) -> None:
    from transformers import AutoTokenizer

    version, with_reference, length = REQUESTS[name]
    tokenizer = as_official_tokenizer(AutoTokenizer.from_pretrained(str(oracle["tokenizer"])))
    references = corpus["references"] if with_reference else [None] * len(corpus["predictions"])
    texts = [model_input(version, *example)
             for example in zip(corpus["sources"], corpus["predictions"], references, strict=True)]
    ids = encode_inputs(tokenizer, texts, length)
    assert ids == oracle["results"][name]["official_input_ids"]
    assert max(map(len, ids)) == length - 1  # truncated, then the EOS dropped


def test_batching_does_not_change_scores(metricx, oracle, corpus) -> None:
    part = {column: values[100:] for column, values in corpus.items()}  # the special cases among them
    expected = oracle["results"]["24"]["official"][100:]
    for options in ({"batch_size": 1}, {"batch_size": 3, "max_batch_tokens": 200}, {"batch_size": 64}):
        scores = _compute(metricx, oracle, part, "24", **options)["scores"]
        assert max(abs(a - b) for a, b in zip(scores, expected, strict=True)) <= TOLERANCE


def test_model_inputs_are_the_official_strings() -> None:
    """metricx24/predict.py lines 83-100 and metricx23/predict.py lines 83-98, written out."""
    assert model_input("metricx-24", "S", "H", "R") == "source: S candidate: H reference: R"
    assert model_input("metricx-24", "S", "H", None) == "source: S candidate: H"
    assert model_input("metricx-23", "S", "H", "R") == "candidate: H reference: R"
    assert model_input("metricx-23", "S", "H", None) == "candidate: H source: S"
    assert model_input("metricx-24", "", "", "") == "source:  candidate:  reference: "


def test_token_batches_bound_rows_and_padded_tokens() -> None:
    # lengths sorted longest first: 9 (index 1), 7 (3), 5 (0), 5 (4), 2 (2); rows x longest <= 16, at most 3 rows
    assert token_batches([5, 9, 2, 7, 5], 3, 16) == [[1], [3, 0], [4, 2]]
    assert token_batches([5, 9, 2, 7, 5], 2, 1000) == [[1, 3], [0, 4], [2]]
    assert token_batches([30], 4, 10) == [[0]]  # one row longer than the bound is a batch of its own


# --- The released layouts, on the suite's tiny checkpoint ---------------------------------------------------------

SOURCES = ["Der Hund bellt laut.", "Ein Satz.", ""]
PREDICTIONS = ["The dog barks loudly.", "A sentence.", "Nothing"]
REFERENCES = ["The dog is barking loudly.", "One sentence.", ""]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    from metricx_checkpoint import tiny_metricx_checkpoint

    return Path(tiny_metricx_checkpoint())


def _copy_without_weights(tiny: Path, target: Path) -> Path:
    shutil.copytree(tiny, target, ignore=shutil.ignore_patterns("pytorch_model.bin"))
    return target


def _scores(metricx, folder: Path, **options) -> list[float]:
    return metricx.compute(sources=SOURCES, predictions=PREDICTIONS, references=REFERENCES, checkpoint=str(folder),
                           **options)["scores"]


def _write_shards(folder: Path, state: dict, suffix: str) -> None:
    """Two shards and their index, named as the Hub's files are."""
    from safetensors.torch import save_file

    names = sorted(state)
    halves = [names[: len(names) // 2], names[len(names) // 2:]]
    stem = "pytorch_model" if suffix == ".bin" else "model"
    weight_map = {}
    for number, part in enumerate(halves, start=1):
        shard = f"{stem}-{number:05d}-of-00002{suffix}"
        tensors = {name: state[name].clone() for name in part}
        if suffix == ".bin":
            torch.save(tensors, str(folder / shard))
        else:
            save_file(tensors, str(folder / shard))
        weight_map.update(dict.fromkeys(part, shard))
    index = "pytorch_model.bin.index.json" if suffix == ".bin" else "model.safetensors.index.json"
    (folder / index).write_text(json.dumps({"metadata": {"total_size": 0}, "weight_map": weight_map}),
                                encoding="utf-8")


def test_every_released_layout_gives_the_same_scores(metricx, tiny, tmp_path) -> None:
    from safetensors.torch import save_file

    expected = _scores(metricx, tiny)
    state = torch.load(str(tiny / "pytorch_model.bin"), weights_only=True)
    once = {name: tensor for name, tensor in state.items() if "embed_tokens" not in name}  # as the bot converted

    sharded_bin = _copy_without_weights(tiny, tmp_path / "sharded-bin")
    _write_shards(sharded_bin, state, ".bin")
    single_safetensors = _copy_without_weights(tiny, tmp_path / "safetensors")
    save_file({name: tensor.clone() for name, tensor in once.items()}, str(single_safetensors / "model.safetensors"))
    sharded_safetensors = _copy_without_weights(tiny, tmp_path / "sharded-safetensors")
    _write_shards(sharded_safetensors, once, ".safetensors")
    for folder in (sharded_bin, single_safetensors, sharded_safetensors):
        assert _scores(metricx, folder) == expected, folder.name


def test_a_bfloat16_checkpoint_runs_in_bfloat16(metricx, tiny, tmp_path) -> None:
    folder = _copy_without_weights(tiny, tmp_path / "bf16")
    state = torch.load(str(tiny / "pytorch_model.bin"), weights_only=True)
    torch.save({name: tensor.to(torch.bfloat16) for name, tensor in state.items()}, str(folder / "pytorch_model.bin"))
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    (folder / "config.json").write_text(json.dumps({**config, "torch_dtype": "bfloat16"}), encoding="utf-8")
    fp32 = _scores(metricx, tiny)
    native = _scores(metricx, folder)
    widened = _scores(metricx, folder, precision="fp32")
    assert native != widened  # bf16 arithmetic by default, as the official torch_dtype="auto"
    assert max(abs(a - b) for a, b in zip(native, fp32, strict=True)) < 1.0
    assert max(abs(a - b) for a, b in zip(widened, fp32, strict=True)) < 1.0


class Payload:
    """Not a tensor: a pickle holding it asks for code."""


def test_a_pickle_that_asks_for_code_is_refused(metricx, tiny, tmp_path) -> None:
    folder = _copy_without_weights(tiny, tmp_path / "code")
    state = torch.load(str(tiny / "pytorch_model.bin"), weights_only=True)
    torch.save({**state, "payload": Payload()}, str(folder / "pytorch_model.bin"))
    with pytest.raises(ValueError, match="could not load the MetricX checkpoint"):
        _scores(metricx, folder)


def _edited(tiny: Path, target: Path, *, config: dict | None = None, state_edit=None) -> Path:
    folder = _copy_without_weights(tiny, target)
    if config is not None:
        base = json.loads((tiny / "config.json").read_text(encoding="utf-8"))
        (folder / "config.json").write_text(json.dumps({**base, **config}), encoding="utf-8")
    state = torch.load(str(tiny / "pytorch_model.bin"), weights_only=True)
    torch.save(state_edit(state) if state_edit else state, str(folder / "pytorch_model.bin"))
    return folder


@pytest.mark.parametrize("case, message", [
    ("model_type", "model_type 'bert', not 'mt5'"),
    ("vocabulary", "has no score row 250089"),
    ("missing", "missing 1 weights"),
    ("extra", "does not have"),
    ("shape", "has shape"),
    ("no tokenizer", "hold no tokenizer"),
    ("no weights", "no weights file"),
    ("comet", "looks like a COMET checkpoint"),
])
def test_a_folder_that_is_not_a_metricx_checkpoint_is_refused(metricx, tiny, tmp_path, case, message) -> None:
    def drop(state):
        return {name: tensor for name, tensor in state.items() if name != "decoder.final_layer_norm.weight"}

    def extra(state):
        return {**state, "classifier.weight": torch.zeros(2)}

    def reshape(state):
        return {**state, "decoder.final_layer_norm.weight": torch.ones(3)}

    target = tmp_path / case.replace(" ", "-")
    folders = {
        "model_type": lambda: _edited(tiny, target, config={"model_type": "bert"}),
        "vocabulary": lambda: _edited(tiny, target, config={"vocab_size": 32000}),
        "missing": lambda: _edited(tiny, target, state_edit=drop),
        "extra": lambda: _edited(tiny, target, state_edit=extra),
        "shape": lambda: _edited(tiny, target, state_edit=reshape),
    }
    if case in folders:
        folder = folders[case]()
    else:
        folder = _edited(tiny, target)
        if case == "no tokenizer":
            (folder / "spiece.model").unlink()
        elif case == "no weights":
            (folder / "pytorch_model.bin").unlink()
        else:
            (folder / "config.json").unlink()
            (folder / "hparams.yaml").write_text("nr_frozen_epochs: 0.3\n", encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        _scores(metricx, folder)


def test_the_tokenizer_option_names_the_mt5_tokenizer(metricx, tiny, tmp_path) -> None:
    """The released checkpoints hold no tokenizer: `tokenizer` names google/mt5-xl's folder."""
    checkpoint = _edited(tiny, tmp_path / "released")
    tokenizer = tmp_path / "mt5-xl"
    tokenizer.mkdir()
    for name in ("spiece.model", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.move(str(checkpoint / name), str(tokenizer / name))
    assert _scores(metricx, checkpoint, tokenizer=str(tokenizer)) == _scores(metricx, tiny)
    with pytest.raises(ValueError, match="pass `tokenizer`"):
        _scores(metricx, checkpoint)
    with pytest.raises(ValueError, match="`tokenizer` .* holds no tokenizer files"):
        _scores(metricx, checkpoint, tokenizer=str(checkpoint))


def test_references_one_per_example_or_none(metricx, tiny) -> None:
    given = {"sources": SOURCES, "predictions": PREDICTIONS, "checkpoint": str(tiny)}
    with pytest.raises(ValueError, match="example 1 has 2 references"):
        metricx.compute(**given, references=[["a"], ["b", "c"], ["d"]])
    with pytest.raises(ValueError, match=r"`references\[1\]` holds no reference"):
        metricx.compute(**given, references=[["a"], [], ["d"]])
    nested = metricx.compute(**given, references=[[reference] for reference in REFERENCES])["scores"]
    assert nested == _scores(metricx, tiny)
