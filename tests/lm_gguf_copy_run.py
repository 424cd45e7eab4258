"""Loads the packaged SmolLM2 GGUF model twice in this process, from the file and then from the converted copy it
leaves in the cache folder the payload names (the GGUF reader made to fail on the second load), and
prints as JSON what test_lm_gguf compares (run by ``learned_oracle.run_in``: the payload
``{"cache": folder, "texts": [...]}`` on standard input): where the copy is, what each load gives (names, token ids,
perplexities) and the weights that differ. Run as its own process, so that the two SmolLM2 models and the GGUF
dequantization (about 2 GiB at the peak) do not stack on the memory a test worker already holds.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch

from metrics._core.core_lm_gguf import CACHE_VARIABLE, converted_folder, is_complete
from metrics._core.core_lm_models import clear_lm_cache, load_lm, packaged_lm_path
from metrics._core.core_lm_perplexity import PerplexityOptions, perplexity_rows


def load_summary(texts: list[str]) -> tuple[dict, dict]:
    """The default model's load time, name, limits, token ids and perplexities; and its weights."""
    start = time.perf_counter()
    loaded = load_lm("perplexity", None, device="cpu")
    seconds = time.perf_counter() - start
    summary = {"seconds": seconds, "name": loaded.name, "max_positions": loaded.max_positions,
               "split_head": loaded.split_head,
               "ids": [loaded.tokenizer(text)["input_ids"] for text in texts],
               "perplexities": perplexity_rows(texts, PerplexityOptions(), lm=loaded)}
    return summary, loaded.model.state_dict()


def main(cache: str, texts: list[str]) -> dict:
    import gguf

    os.environ[CACHE_VARIABLE] = cache
    clear_lm_cache()
    from_file, file_weights = load_summary(texts)
    folder = converted_folder(packaged_lm_path("perplexity"))
    copy = {"folder": str(folder), "complete": is_complete(folder), "files": sorted(p.name for p in folder.iterdir())}
    clear_lm_cache()

    def not_read(*args, **kwargs):
        raise AssertionError("the GGUF file was read again")

    gguf.GGUFReader = not_read
    from_copy, copy_weights = load_summary(texts)
    differing = sorted(key for key in file_weights.keys() & copy_weights.keys()
                       if not torch.equal(file_weights[key], copy_weights[key]))
    return {"copy": copy, "from_file": from_file, "from_copy": from_copy, "differing_weights": differing,
            "same_weight_names": file_weights.keys() == copy_weights.keys()}


if __name__ == "__main__":
    payload = json.load(sys.stdin)
    print(json.dumps(main(payload["cache"], payload["texts"])))
