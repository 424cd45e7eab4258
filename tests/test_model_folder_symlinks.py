"""A model folder given by path is data: a symbolic link in it that points out of it is refused (issue 32,
requirement 5), by every module that loads a folder (comet and bleurt `checkpoint`, comet `encoder_path`,
perplexity `model_id`, bertscore and semantic_similarity `model_type`, mauve `featurize_model_name`), with a
ValueError naming the metric, the link and its target, before anything is read through the link.

Links that stay inside the folder are fine and score as the plain folder does; so is the Hugging Face cache's
layout, where a snapshot's files (``models--x/snapshots/<rev>/file``) are links to ``../../blobs/<sha>``: "the
folder" of a cache snapshot is the model's cache folder ``models--x``. A folder that is itself a link is fine.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import load_metric

from metrics._core.core_models import (
    check_folder_links, model_folder_root, offline_model_folder, packaged_model_path,
)

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
OUTSIDE_FILE = "/etc/passwd" if Path("/etc/passwd").is_file() else None


# ----- building folders ------------------------------------------------------------------------------------


def _link_or_copy(source: str, target: str) -> None:
    """A hard link (not a symbolic one: nothing to refuse) where the file system allows, else a copy."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def copy_folder(source: str | Path, target: Path) -> Path:
    shutil.copytree(source, target, copy_function=_link_or_copy)
    return target


def link_outside(folder: Path, relative: str, outside: Path) -> Path:
    """Move ``folder/relative`` (a file or a folder) to ``outside`` and leave a link to it in its place: the same
    bytes, so the only fault is the link. Returns the link."""
    path = folder / relative
    outside.mkdir(parents=True, exist_ok=True)
    moved = outside / path.name
    shutil.move(str(path), str(moved))
    path.symlink_to(moved)
    return path


def link_to(folder: Path, relative: str, target: str | Path) -> Path:
    path = folder / relative
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.symlink_to(target)
    return path


def link_inside(folder: Path, relative: str) -> Path:
    """Move ``folder/relative`` into ``folder/store/`` and leave a relative link to it in its place."""
    path = folder / relative
    store = folder / "store"
    store.mkdir(exist_ok=True)
    moved = store / relative.replace("/", "__")
    path.rename(moved)
    path.symlink_to(os.path.relpath(moved, path.parent))
    return path


def hf_cache_layout(source: str | Path, cache: Path, repo: str = "models--tests--model",
                    revision: str = "0123456789abcdef0123456789abcdef01234567") -> Path:
    """``source``'s files laid out as the Hugging Face cache does: ``<repo>/blobs/<sha256>``, the snapshot's files
    ``<repo>/snapshots/<revision>/<path>`` as relative links to them, ``<repo>/refs/main``. Returns the snapshot."""
    source = Path(source)
    folder = cache / repo
    blobs = folder / "blobs"
    blobs.mkdir(parents=True)
    snapshot = folder / "snapshots" / revision
    for file in sorted(path for path in source.rglob("*") if path.is_file()):
        blob = blobs / hashlib.sha256(file.read_bytes()).hexdigest()
        if not blob.exists():
            _link_or_copy(str(file), str(blob))
        link = snapshot / file.relative_to(source)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(revision, encoding="utf-8")
    return snapshot


def refusal(metric: str, link: Path, target: str | Path) -> str:
    """The pattern of the refusal of ``link`` (pointing at ``target``) by ``metric``."""
    return (rf"^{metric}: .*symbolic link {re.escape(repr(str(link)))} that points outside .*"
            rf"to {re.escape(repr(os.path.realpath(target)))}")


# ----- the shared check ------------------------------------------------------------------------------------


@pytest.fixture()
def plain(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    (folder / "sub").mkdir(parents=True)
    (folder / "config.json").write_text("{}", encoding="utf-8")
    (folder / "weights.bin").write_bytes(b"weights")
    (folder / "sub" / "vocab.txt").write_text("a\nb\n", encoding="utf-8")
    return folder


def test_a_plain_folder_and_links_inside_it_are_accepted(plain: Path, tmp_path: Path) -> None:
    assert check_folder_links("m", plain) == plain.resolve()
    link_inside(plain, "weights.bin")
    (plain / "sub-again").symlink_to("sub")  # a linked folder inside
    (plain / "sub" / "up").symlink_to("..")  # a cycle: followed once, never forever
    (plain / "chain").symlink_to("weights.bin")  # a link to a link inside
    (plain / "dangling").symlink_to("missing-but-inside")
    assert check_folder_links("m", plain) == plain.resolve()
    alias = tmp_path / "alias"  # the folder itself a link: resolved first
    alias.symlink_to(plain)
    assert check_folder_links("m", alias) == plain.resolve()
    assert model_folder_root(alias) == plain.resolve()


@pytest.mark.parametrize("kind", ["file elsewhere", "/etc/passwd", "folder outside", "dangling", "chain",
                                  "nested", "via linked folder", "parent"])
def test_a_link_out_of_the_folder_is_refused_naming_it(plain: Path, tmp_path: Path, kind: str) -> None:
    outside = tmp_path / "elsewhere"
    if kind == "file elsewhere":
        link, target = link_outside(plain, "weights.bin", outside), outside / "weights.bin"
    elif kind == "/etc/passwd":
        if OUTSIDE_FILE is None:
            pytest.skip("no /etc/passwd")
        link, target = link_to(plain, "config.json", OUTSIDE_FILE), OUTSIDE_FILE
    elif kind == "folder outside":
        link, target = link_outside(plain, "sub", outside), outside / "sub"
    elif kind == "dangling":
        link, target = link_to(plain, "extra.bin", outside / "missing.bin"), outside / "missing.bin"
    elif kind == "chain":  # inside -> inside -> outside: the end of the chain counts, whichever link comes first
        link_to(plain, "weights.bin", "second")
        link, target = link_to(plain, "second", outside / "third"), outside / "third"
    elif kind == "nested":
        link, target = link_outside(plain, "sub/vocab.txt", outside), outside / "vocab.txt"
    elif kind == "via linked folder":  # a linked folder inside, holding a link out
        (plain / "sub" / "out").symlink_to(tmp_path)
        link_to(plain, "alias", "sub")
        link, target = plain / "sub" / "out", tmp_path
    else:
        link, target = link_to(plain, "up", ".."), tmp_path
    with pytest.raises(ValueError) as raised:
        check_folder_links("somemetric", plain)
    message = str(raised.value)
    assert message.startswith("somemetric: "), message
    assert repr(os.path.realpath(target)) in message, message
    if kind == "chain":
        assert repr(str(link)) in message or repr(str(plain / "weights.bin")) in message, message
    elif kind == "via linked folder":
        assert "out'" in message, message
    else:
        assert repr(str(link)) in message, message


def test_the_hugging_face_cache_layout_is_accepted(plain: Path, tmp_path: Path) -> None:
    snapshot = hf_cache_layout(plain, tmp_path / "hub")
    assert (snapshot / "weights.bin").is_symlink()
    assert model_folder_root(snapshot) == (tmp_path / "hub" / "models--tests--model").resolve()
    assert model_folder_root(snapshot / "sub") == (tmp_path / "hub" / "models--tests--model").resolve()
    assert check_folder_links("m", snapshot) == snapshot.resolve()
    # ... but a blob that leads out of the model's cache folder is refused, as is a link to another model's blobs
    blob = Path(os.path.realpath(snapshot / "weights.bin"))
    blob.unlink()
    blob.symlink_to(OUTSIDE_FILE or tmp_path)
    with pytest.raises(ValueError, match=r"^m: .*weights\.bin' that points outside the model's cache folder"):
        check_folder_links("m", snapshot)


def test_a_cached_model_name_is_checked_too(plain: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    snapshot = hf_cache_layout(plain, tmp_path / "hub")
    found = offline_model_folder("m", "model_type", "tests/model", kinds="a local folder", otherwise="pass one")
    assert found.resolve() == snapshot.resolve()
    link_to(snapshot, "sub/vocab.txt", OUTSIDE_FILE or tmp_path)
    with pytest.raises(ValueError, match=r"^m: `model_type` folder .*vocab\.txt' that points outside"):
        offline_model_folder("m", "model_type", "tests/model", kinds="a local folder", otherwise="pass one")


def test_a_non_model_folder_is_not_walked(tmp_path: Path) -> None:
    """A folder without config.json is refused as before (not a model), whatever links it holds."""
    (tmp_path / "out").symlink_to(OUTSIDE_FILE or "/")
    with pytest.raises(ValueError, match="has no config.json; it is not a model"):
        offline_model_folder("m", "model_type", tmp_path, kinds="a local folder", otherwise="pass one")


# ----- every module that loads a folder --------------------------------------------------------------------


@dataclass
class Loader:
    metric: str
    option: str
    inputs: dict[str, Any]
    folder: Callable[[Path], Path]  # a fresh plain copy of the module's model folder under the given path
    files: tuple[str, ...]  # files of the folder to link (the first one for the inside and outside cases)
    scores: Callable[[Any], Any]
    extra: dict[str, Any]


def _comet_folder(root: Path) -> Path:
    from comet_checkpoint import tiny_comet_checkpoint

    return copy_folder(tiny_comet_checkpoint(), root / "comet-model")


def _bleurt_folder(root: Path) -> Path:
    from bleurt_checkpoint import tiny_bleurt_checkpoint

    return copy_folder(tiny_bleurt_checkpoint(), root / "bleurt-checkpoint")


def _metricx_folder(root: Path) -> Path:
    from metricx_checkpoint import tiny_metricx_checkpoint

    return copy_folder(tiny_metricx_checkpoint(), root / "metricx-checkpoint")


def _minilm_folder(root: Path) -> Path:
    return copy_folder(packaged_model_path("tests"), root / "minilm")


_GPT2: dict[str, Path] = {}


def _gpt2_folder(root: Path) -> Path:
    """A tiny random GPT-2 with a byte-level BPE tokenizer (saved once per session, copied per test)."""
    if "folder" not in _GPT2:
        import tempfile

        from test_lm_core import tiny_gpt2, train_tokenizer

        tokenizer = train_tokenizer()
        model = tiny_gpt2(len(tokenizer))
        folder = Path(tempfile.mkdtemp(prefix="tiny-gpt2-")) / "gpt2"
        model.save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        _GPT2["folder"] = folder
    return copy_folder(_GPT2["folder"], root / "gpt2")


TEXTS = ["the cat sat on the mat", "a dog ran under the house quickly"]
REFERENCES = ["the cat sat on a mat", "the dog ran into the house"]
LOADERS = {
    "comet": Loader("comet", "checkpoint",
                    {"sources": TEXTS, "predictions": TEXTS, "references": REFERENCES}, _comet_folder,
                    ("checkpoints/model.ckpt", "hparams.yaml"), lambda result: result["scores"], {}),
    "bleurt": Loader("bleurt", "checkpoint", {"predictions": TEXTS, "references": REFERENCES}, _bleurt_folder,
                     ("model.safetensors", "config.json", "vocab.txt"), lambda result: result["scores"], {}),
    "metricx": Loader("metricx", "checkpoint", {"sources": TEXTS, "predictions": TEXTS, "references": REFERENCES},
                      _metricx_folder, ("pytorch_model.bin", "config.json", "spiece.model"),
                      lambda result: result["scores"], {}),
    "perplexity": Loader("perplexity", "model_id", {"predictions": TEXTS}, _gpt2_folder,
                         ("model.safetensors", "config.json", "tokenizer.json"),
                         lambda result: result["perplexities"], {}),
    "bertscore": Loader("bertscore", "model_type", {"predictions": TEXTS, "references": REFERENCES},
                        _minilm_folder, ("model.safetensors", "config.json", "vocab.txt"),
                        lambda result: result["f1"], {"num_layers": 3}),
    "semantic_similarity": Loader("semantic_similarity", "model_type",
                                  {"predictions": TEXTS, "references": REFERENCES}, _minilm_folder,
                                  ("model.safetensors", "config.json", "tokenizer.json"),
                                  lambda result: result["similarities"], {}),
    "mauve": Loader("mauve", "featurize_model_name",
                    {"predictions": ["hello world", "goodnight moon"], "references": ["hello there", "general kenobi"]},
                    _minilm_folder, ("model.safetensors", "config.json", "tokenizer.json"),
                    lambda result: (result["mauve"], list(result["p_hist"]), list(result["q_hist"])),
                    {"device_id": -1}),
}


def score(loader: Loader, folder: Path) -> Any:
    module = load_metric(loader.metric)
    return loader.scores(module.compute(**loader.inputs, **loader.extra, **{loader.option: str(folder)}))


def refuse(loader: Loader, folder: Path, link: Path, target: str | Path) -> None:
    module = load_metric(loader.metric)
    with pytest.raises(ValueError, match=refusal(loader.metric, link, target)):
        module.compute(**loader.inputs, **loader.extra, **{loader.option: str(folder)})


@pytest.mark.parametrize("name", list(LOADERS))
def test_a_link_out_of_a_model_folder_is_refused(name: str, tmp_path: Path) -> None:
    loader = LOADERS[name]
    for index, relative in enumerate(loader.files):  # each file a link to the same bytes outside: refused
        folder = loader.folder(tmp_path / f"copy{index}")
        outside = tmp_path / f"elsewhere{index}"
        refuse(loader, folder, link_outside(folder, relative, outside), outside / Path(relative).name)
    if OUTSIDE_FILE is not None:  # a file the folder has no business with, in place of one read first
        folder = loader.folder(tmp_path / "passwd")
        relative = loader.files[1]
        refuse(loader, folder, link_to(folder, relative, OUTSIDE_FILE), OUTSIDE_FILE)


@pytest.mark.parametrize("name", list(LOADERS))
def test_links_inside_and_the_cache_layout_score_as_the_plain_folder(name: str, tmp_path: Path) -> None:
    loader = LOADERS[name]
    plain = loader.folder(tmp_path / "plain")
    expected = score(loader, plain)
    inside = loader.folder(tmp_path / "inside")
    for relative in loader.files:
        link_inside(inside, relative)
    assert score(loader, inside) == expected
    alias = tmp_path / "alias"  # the folder itself a link
    alias.symlink_to(plain)
    assert score(loader, alias) == expected
    snapshot = hf_cache_layout(plain, tmp_path / "hub", repo=f"models--tests--{name}")
    assert score(loader, snapshot) == expected


def test_comet_checkpoint_folder_outside_and_its_encoder_folder(tmp_path: Path) -> None:
    """A COMET folder's `checkpoints` folder linked elsewhere; the checkpoint named by its model.ckpt; the
    encoder's folder (`encoder_path`), a model folder too."""
    loader = LOADERS["comet"]
    folder = _comet_folder(tmp_path / "folder-out")
    outside = tmp_path / "elsewhere"
    link = link_outside(folder, "checkpoints", outside)
    refuse(loader, folder, link, outside / "checkpoints")
    module = load_metric("comet")
    with pytest.raises(ValueError, match=refusal("comet", link, outside / "checkpoints")):
        module.compute(**loader.inputs, checkpoint=str(folder / "checkpoints" / "model.ckpt"))

    import yaml

    plain = _comet_folder(tmp_path / "plain")
    encoder = yaml.safe_load((plain / "hparams.yaml").read_text(encoding="utf-8"))["pretrained_model"]
    expected = module.compute(**loader.inputs, checkpoint=str(plain), encoder_path=encoder)["scores"]
    copied = copy_folder(encoder, tmp_path / "encoder")
    link_inside(copied, "tokenizer.json")
    assert module.compute(**loader.inputs, checkpoint=str(plain), encoder_path=str(copied))["scores"] == expected
    outside = tmp_path / "encoder-elsewhere"
    link = link_outside(copied, "config.json", outside)
    with pytest.raises(ValueError, match=refusal("comet", link, outside / "config.json")) as raised:
        module.compute(**loader.inputs, checkpoint=str(plain), encoder_path=str(copied))
    assert "`encoder_path` folder" in str(raised.value)
