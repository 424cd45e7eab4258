"""GGUF models kept converted on disk (metrics/_core/core_lm_gguf.py): the packaged SmolLM2 GGUF file, once
dequantized, is written as a float32 transformers folder, and a later load reads that folder instead of the file:
the same weights bit for bit, the same token ids, the same perplexities. Copies can be turned off, are named by
the file's bytes, are never half-read, and a cache that cannot be written costs a warning, not the result."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
import torch

from learned_oracle import ROOT, run_in
from metrics._core import core_lm_gguf
from metrics._core.core_lm_gguf import CACHE_VARIABLE, converted_folder, is_complete, keep_converted
from metrics._core.core_lm_models import packaged_lm_path

TEXTS = ["The cat sat on the mat.", "Hello world, this is a test. Äpfel, 日本語 and an emoji 🙂.",
         "  leading spaces\nand a second line\twith a tab", "x", "A longer sentence about the weather in Lisbon, "
         "where it rained for three days in a row before the sun came back."]
COPY_RUN = Path(__file__).with_name("lm_gguf_copy_run.py")


@pytest.fixture(scope="module")
def gguf_path() -> Path:
    try:
        return packaged_lm_path("perplexity")
    except ValueError as error:
        pytest.skip(str(error))


def test_the_converted_copy_loads_as_the_gguf_file_does(gguf_path: Path, tmp_path: Path) -> None:
    """Both loads run in a process of their own (tests/lm_gguf_copy_run.py): about 2 GiB at the peak."""
    result = run_in(ROOT / ".venv", COPY_RUN, {"cache": str(tmp_path), "texts": TEXTS}, timeout=600)
    copy, from_file, from_copy = result["copy"], result["from_file"], result["from_copy"]
    print(f"\nGGUF file {from_file['seconds']:.1f} s, converted copy {from_copy['seconds']:.1f} s")
    assert Path(copy["folder"]).parent == tmp_path / "gguf" and copy["complete"]
    assert set(copy["files"]) >= {"config.json", "model.safetensors", "tokenizer.json"}
    assert from_copy["name"] == from_file["name"] and from_copy["name"].startswith("SmolLM2-135M-Instruct.Q4_1.gguf")
    assert (from_copy["max_positions"], from_copy["split_head"]) == (from_file["max_positions"],
                                                                     from_file["split_head"])
    assert result["same_weight_names"] and result["differing_weights"] == []
    assert from_copy["ids"] == from_file["ids"]
    assert len(from_file["perplexities"]) == len(TEXTS)
    assert from_copy["perplexities"] == from_file["perplexities"]


def test_copies_are_named_by_the_files_bytes_and_can_be_turned_off(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "a.gguf", tmp_path / "b.gguf"
    first.write_bytes(b"GGUF one")
    second.write_bytes(b"GGUF two")
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path / "cache"))
    assert converted_folder(first).parent == tmp_path / "cache" / "gguf"
    assert converted_folder(first) != converted_folder(second)
    second.write_bytes(b"GGUF one")  # another path, the same bytes: the same copy
    assert converted_folder(first) == converted_folder(second)
    assert "transformers" in converted_folder(first).name and "gguf" in converted_folder(first).name
    monkeypatch.setenv(CACHE_VARIABLE, "none")
    assert converted_folder(first) is None and not is_complete(None)
    monkeypatch.delenv(CACHE_VARIABLE)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert converted_folder(first).parent == tmp_path / "home" / ".cache" / "evaluate_text_metrics" / "gguf"


def test_a_kept_copy_is_whole_or_absent(tokenizer, llama, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Written under a temporary name and renamed when complete; a complete copy is not written again; a model
    above the size bound is not kept; an unwritable cache warns and keeps nothing."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = tmp_path / "model.gguf"
    source.write_bytes(b"stand-in")
    folder = tmp_path / "cache" / "copy"
    assert keep_converted("perplexity", llama, tokenizer, folder, source)
    assert is_complete(folder) and [path.name for path in folder.parent.iterdir()] == ["copy"]
    reloaded = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype=torch.float32)
    assert all(torch.equal(value, reloaded.state_dict()[key]) for key, value in llama.state_dict().items())
    assert AutoTokenizer.from_pretrained(folder)("a cat")["input_ids"] == tokenizer("a cat")["input_ids"]
    written = (folder / "model.safetensors").stat().st_mtime_ns
    assert not keep_converted("perplexity", llama, tokenizer, folder, source)  # already complete
    assert (folder / "model.safetensors").stat().st_mtime_ns == written
    monkeypatch.setattr(core_lm_gguf, "MAX_KEPT_BYTES", 1000)
    assert not keep_converted("perplexity", llama, tokenizer, tmp_path / "cache" / "too-big", source)
    assert not (tmp_path / "cache" / "too-big").exists()
    monkeypatch.undo()
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder", encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert not keep_converted("perplexity", llama, tokenizer, blocked / "copy", source)
    assert any("could not keep the converted GGUF model" in str(warning.message) for warning in caught)
