"""The MetricX oracle (run in `.venv-oracles`, which has transformers 4.57, on which the official code runs), reading a
JSON payload on standard input and printing JSON on its last line of output.

The official code is google-research/metricx (https://github.com/google-research/metricx, commit fc4978e):
`metricx24/predict.py`, `metricx23/predict.py` (inputs) and `metricx24/models.py` = `metricx23/models.py` (the model,
`MT5ForRegression`). Its `predict.py` runs on `datasets` (absent here), so the input preparation is transcribed below
with line references, and the model is transformers' `MT5ForConditionalGeneration` read as the official forward
reads it; with payload["official_repo"] (a checkout of that repository) and transformers 4.30.2, protobuf 3.20 and
datasets 2.13.1 (its requirements.txt; tests/metricx-oracle-requirements.txt), the official `get_dataset` and
`MT5ForRegression` run as well.

Actions (payload key "action"):

- "build": a tiny MetricX-style checkpoint in payload["folder"] (config.json with `"architectures":
  ["MT5ForRegression"]`, `"model_type": "mt5"` and mT5's vocabulary size 250112, so that the official score row
  250089 exists; weights in `pytorch_model.bin`, every key the released files hold, written with `torch.save` as
  transformers 4.30's `save_pretrained` wrote them), random weights from `torch.manual_seed(payload["seed"])`, the
  score row 250089 of `lm_head` scaled so that raw scores spread over about [-15, 15] (the clipping to [0, 25] then
  matters). The tokenizer goes to payload["tokenizer_folder"] as google/mt5-xl's is published (`spiece.model` and
  the slow `T5Tokenizer`'s configuration, no `tokenizer.json`): a sentencepiece unigram model trained here, offline,
  on payload["training_text"] (pad 0, eos 1, unk 2, as mT5's). Then, in the same run, each request of
  payload["score"] (a "score" payload without the folders) is scored on the saved files. Prints
  {"folder": ..., "scored": [score results]}.
- "time": the official code alone, timed (scripts/bench_metricx.py); prints {"scores": [...], "seconds": ...}.
- "score": the official scores of payload["sources"], ["hypotheses"], ["references"] (None for QE) for
  payload["version"] ("metricx-24" or "metricx-23") with payload["max_input_length"], one example at a time (the
  official README's `--batch_size 1`). Prints {"scores": [...], "input_ids": [...], "official": [...] or None,
  "official_input_ids": [...] or None}.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import torch

SCORE_ROW = 250089  # metricx24/models.py line 183: `predictions = lm_logits[:, 0, 250089]`


def build(payload: dict) -> dict:
    import sentencepiece as spm
    from transformers import MT5Config, MT5ForConditionalGeneration, T5Tokenizer

    folder, tokenizer_folder = Path(payload["folder"]), Path(payload["tokenizer_folder"])
    folder.mkdir(parents=True, exist_ok=True)
    work = folder.parent / (folder.name + "-work")
    work.mkdir(parents=True, exist_ok=True)
    spm.SentencePieceTrainer.train(
        input=payload["training_text"], model_prefix=str(work / "spiece"), vocab_size=payload.get("vocab_size", 800),
        model_type="unigram", character_coverage=1.0, pad_id=0, eos_id=1, unk_id=2, bos_id=-1,
        input_sentence_size=20000, shuffle_input_sentence=False, num_threads=1, minloglevel=2,
    )
    tokenizer = T5Tokenizer(vocab_file=str(work / "spiece.model"), extra_ids=0)
    tokenizer.save_pretrained(str(tokenizer_folder))
    for name in ("tokenizer.json", "added_tokens.json"):
        (tokenizer_folder / name).unlink(missing_ok=True)
    config = MT5Config(
        vocab_size=250112, d_model=16, d_kv=8, d_ff=24, num_layers=2, num_decoder_layers=2, num_heads=2,
        feed_forward_proj="gated-gelu", tie_word_embeddings=False, decoder_start_token_id=0, pad_token_id=0,
        eos_token_id=1, relative_attention_num_buckets=32, relative_attention_max_distance=128,
        tokenizer_class="T5Tokenizer",
    )
    config.architectures = ["MT5ForRegression"]
    torch.manual_seed(payload.get("seed", 0))
    model = MT5ForConditionalGeneration(config)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "layer_norm" in name:  # every weight matters
                parameter.add_(torch.randn_like(parameter) * 0.3)
        model.lm_head.weight[SCORE_ROW] = _spread_row(model, tokenizer, payload["training_text"])
    config.save_pretrained(str(folder))
    torch.save(model.state_dict(), str(folder / "pytorch_model.bin"))
    del model
    requests = payload.get("score", [])
    common = {"folder": str(folder), "tokenizer_folder": str(tokenizer_folder),
              "official_repo": payload.get("official_repo")}
    return {"folder": str(folder), "scored": [score({**common, **request}) for request in requests]}


def _spread_row(model, tokenizer, training_text: str) -> torch.Tensor:
    """A score row under which the raw scores of inputs made from the training lines have mean 5 and standard
    deviation 10: along the direction in which the decoder's output varies most, plus its mean direction."""
    lines = [line for line in Path(training_text).read_text(encoding="utf-8").splitlines() if line.strip()][:240]
    hidden = []
    for index in range(0, len(lines) - 2, 3):
        ids = torch.tensor([tokenizer(make_input("metricx-24", *lines[index:index + 3]))["input_ids"][:-1]])
        output = model(input_ids=ids, decoder_input_ids=torch.zeros((1, 1), dtype=torch.long),
                       output_hidden_states=True)
        hidden.append(output.decoder_hidden_states[-1][0, 0])
    states = torch.stack(hidden)
    mean = states.mean(dim=0)
    direction = torch.linalg.svd(states - mean, full_matrices=False).Vh[0]
    row = direction * (10.0 / float((states @ direction).std()))
    return row + mean * ((5.0 - float((states @ row).mean())) / float(mean @ mean))


def make_input(version: str, source: str, hypothesis: str, reference: str | None) -> str:
    """The model input as the official `_make_input` builds it."""
    if version == "metricx-24":
        if reference is None:  # metricx24/predict.py lines 84-90 (is_qe)
            return "source: " + source + " candidate: " + hypothesis
        return "source: " + source + " candidate: " + hypothesis + " reference: " + reference  # lines 92-99
    if reference is None:  # metricx23/predict.py lines 84-90 (is_qe)
        return "candidate: " + hypothesis + " source: " + source
    return "candidate: " + hypothesis + " reference: " + reference  # lines 92-97


def input_ids(tokenizer, text: str, max_input_length: int) -> list[int]:
    """metricx24/predict.py lines 102-113 (metricx23/predict.py 100-111): tokenized with truncation, then the
    last token (the EOS) removed."""
    encoded = tokenizer(text, max_length=max_input_length, truncation=True, padding=False)
    return encoded["input_ids"][:-1]


def _official_inputs(repo: str, payload: dict, tokenizer) -> list[list[int]]:
    """The token ids of the official `get_dataset` (predict.py lines 64-125) on the payload's examples."""
    import tempfile

    _on_path(repo)
    predict = importlib.import_module(("metricx24" if payload["version"] == "metricx-24" else "metricx23") + ".predict")
    qe = payload.get("references") is None
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "input.jsonl"
        with open(path, "w", encoding="utf-8") as handle:
            for index, (source, hypothesis) in enumerate(zip(payload["sources"], payload["hypotheses"], strict=True)):
                example = {"source": source, "hypothesis": hypothesis}
                if not qe:
                    example["reference"] = payload["references"][index]
                handle.write(json.dumps(example) + "\n")
        dataset = predict.get_dataset(str(path), tokenizer, payload["max_input_length"], "cpu", qe)["test"]
        return [row["input_ids"].tolist() for row in dataset]


def _official_scores(repo: str, folder: str, ids: list[list[int]]) -> list[float]:
    """The official `MT5ForRegression` (metricx24/models.py), loaded as predict.py lines 141-146 load it, on each
    example alone."""
    models = importlib.import_module("metricx24.models")
    model = models.MT5ForRegression.from_pretrained(folder, torch_dtype="auto").eval()
    scores = []
    with torch.no_grad():
        for row in ids:
            tensor = torch.tensor([row])
            scores.append(float(model(input_ids=tensor, attention_mask=torch.ones_like(tensor)).predictions[0]))
    return scores


def _protobuf_schema() -> None:
    """The sentencepiece model schema for transformers' slow-to-fast tokenizer conversion, where sentencepiece's own
    `sentencepiece_model_pb2` needs a newer protobuf than the environment's: transformers' copy of the same schema
    (`transformers.utils.sentencepiece_model_pb2_new`) stands in for it; the conversion is unchanged. (transformers
    4.30 reads its own copy and needs none.)"""
    try:
        from transformers.utils import sentencepiece_model_pb2_new
    except ImportError:
        return
    sys.modules["sentencepiece.sentencepiece_model_pb2"] = sentencepiece_model_pb2_new


def timed_official(payload: dict) -> dict:
    """The official code alone, timed (for scripts/bench_metricx.py): its `get_dataset` and `MT5ForRegression` one
    example at a time, after loading. Prints {"scores": [...], "seconds": ...}."""
    from transformers import AutoTokenizer

    _protobuf_schema()
    tokenizer = AutoTokenizer.from_pretrained(payload["tokenizer_folder"])
    _on_path(payload["official_repo"])
    models = importlib.import_module("metricx24.models")
    model = models.MT5ForRegression.from_pretrained(payload["folder"], torch_dtype="auto").eval()
    start = time.perf_counter()
    ids = _official_inputs(payload["official_repo"], payload, tokenizer)
    scores = []
    with torch.no_grad():
        for row in ids:
            tensor = torch.tensor([row])
            scores.append(float(model(input_ids=tensor, attention_mask=torch.ones_like(tensor)).predictions[0]))
    return {"scores": scores, "seconds": time.perf_counter() - start}


def _on_path(repo: str) -> bool:
    if repo not in sys.path:
        sys.path.insert(0, repo)
    return True


def score(payload: dict) -> dict:
    from transformers import AutoTokenizer, MT5ForConditionalGeneration

    _protobuf_schema()
    tokenizer = AutoTokenizer.from_pretrained(payload["tokenizer_folder"])  # predict.py line 139
    references = payload.get("references") or [None] * len(payload["hypotheses"])
    ids = [input_ids(tokenizer, make_input(payload["version"], source, hypothesis, reference),
                     payload["max_input_length"])
           for source, hypothesis, reference in zip(payload["sources"], payload["hypotheses"], references,
                                                    strict=True)]
    # transformers' class, read as metricx24/models.py lines 105-186 read theirs: the encoder, one decoder step from
    # token 0, the logit of row 250089, clipped to [0, 25]
    model = MT5ForConditionalGeneration.from_pretrained(payload["folder"], torch_dtype="auto").eval()
    scores = []
    with torch.no_grad():
        for row in ids:
            tensor = torch.tensor([row])
            logits = model(input_ids=tensor, attention_mask=torch.ones_like(tensor),
                           decoder_input_ids=torch.zeros((1, 1), dtype=torch.long)).logits
            scores.append(float(torch.clamp(logits[:, 0, SCORE_ROW], 0, 25)[0]))
    result = {"scores": scores, "input_ids": ids, "official": None, "official_input_ids": None}
    if payload.get("official_repo"):
        result["official_input_ids"] = _official_inputs(payload["official_repo"], payload, tokenizer)
        result["official"] = _official_scores(payload["official_repo"], payload["folder"],
                                              result["official_input_ids"])
    return result


def main() -> None:
    import tempfile

    payload = json.loads(sys.stdin.read())
    # the official get_dataset caches through datasets: its own cache, never the user's
    os.environ["HF_DATASETS_CACHE"] = tempfile.mkdtemp(prefix="metricx-oracle-datasets-")
    torch.set_num_threads(payload.get("threads", 1))  # tiny models: threads only contend
    action = {"build": build, "score": score, "time": timed_official}[payload["action"]]
    print(json.dumps(action(payload)))


if __name__ == "__main__":
    main()
