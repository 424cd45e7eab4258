"""The BLEURT oracle: bleurt-pytorch 0.0.1 (run in `.venv-oracles`, which has transformers<5), reading a JSON payload
on standard input and printing JSON on its last line of output.

Actions (payload key "action"):

- "build": write a tiny BLEURT-20-style checkpoint to payload["folder"] with bleurt-pytorch's own `save_pretrained`:
  a `BleurtConfig` with small sizes (hidden 32, embedding_size 16 so the embedding projection is used, 2 layers,
  4 heads, 512 positions; no projection for the wordpiece kind, like the older checkpoints), weights from
  `torch.manual_seed(payload["seed"])` (the default initialisation with initializer_range 0.2, then the LayerNorms
  and biases perturbed and the pooler and head rescaled so that every parameter matters and scores are of order
  1), and a `BleurtSPTokenizer` on a sentencepiece unigram model trained here, offline, on payload["training_text"]
  (a file of lines). With payload["wordpiece"], the tokenizer is instead a `BleurtTokenizerFast` (BERT wordpiece,
  lower-cased) on a vocab.txt built from that text, like the older BLEURT checkpoints. Then, in the same run, each
  request of payload["score"] (a list of "score" payloads without "folder") is scored on the saved folder, loaded
  back. payload["sizes"] (optional) overrides the model's sizes (e.g. BLEURT-20's: hidden_size, num_hidden_layers,
  num_attention_heads, intermediate_size, embedding_size) for benchmarks of a realistic architecture with random
  weights. Prints {"folder": ..., "scored": [score results]}.
- "score": load payload["folder"] with `BleurtForSequenceClassification` and `BleurtTokenizer` and score the
  pairs payload["references"][i], payload["candidates"][i] as bleurt-pytorch's README does, payload["batch_size"]
  pairs at a time in the given order: `tokenizer(references, candidates, padding='longest', return_tensors='pt')`,
  `model(**inputs).logits.flatten().tolist()` under `model.eval()` and `torch.no_grad()`. With
  payload["max_length"], the tokenizer is also given `truncation=True, max_length=...`. Prints {"scores": [...],
  "seconds": time spent scoring (tokenization and model, not loading)}.
"""

from __future__ import annotations

import collections
import json
import sys
import time
from pathlib import Path

import torch

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def build(payload: dict) -> dict:
    from bleurt_pytorch import BleurtConfig, BleurtForSequenceClassification

    folder = Path(payload["folder"])
    folder.mkdir(parents=True, exist_ok=True)
    work = folder.parent / (folder.name + "-work")
    work.mkdir(parents=True, exist_ok=True)
    text = Path(payload["training_text"])
    if payload.get("wordpiece"):
        from bleurt_pytorch.bleurt.tokenization_bleurt_fast import BleurtTokenizerFast

        counts = collections.Counter()
        for line in text.read_text(encoding="utf-8").splitlines():
            for word in line.lower().split():
                counts.update([word.strip(".,;:!?\"'()")])
        pieces = sorted({c for word in counts for c in word if c})
        vocab = SPECIAL + pieces + ["##" + c for c in pieces]
        vocab += [word for word, _ in counts.most_common(800) if word and word not in vocab]
        for mark in ".,;:!?\"'()-":
            if mark not in vocab:
                vocab.append(mark)
        (work / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
        tokenizer = BleurtTokenizerFast(vocab_file=str(work / "vocab.txt"), do_lower_case=True)
    else:
        import sentencepiece as spm

        from bleurt_pytorch.bleurt.tokenization_bleurt_sp import BleurtSPTokenizer

        spm.SentencePieceTrainer.train(
            input=str(text), model_prefix=str(work / "spm"), vocab_size=payload.get("vocab_size", 1000),
            model_type="unigram", character_coverage=1.0, pad_id=0, unk_id=1, bos_id=-1, eos_id=-1,
            unk_piece="[UNK]", pad_piece="[PAD]", user_defined_symbols=["[CLS]", "[SEP]", "[MASK]"],
            input_sentence_size=20000, shuffle_input_sentence=False, seed_sentencepiece_size=20000,
            num_threads=1, minloglevel=2,
        )
        tokenizer = BleurtSPTokenizer(vocab_file=str(work / "spm.model"), do_lower_case=False)
    config = BleurtConfig(
        vocab_size=len(tokenizer), embedding_size=None if payload.get("wordpiece") else 16, hidden_size=32,
        num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, max_position_embeddings=512,
        pad_token_id=tokenizer.pad_token_id,
        initializer_range=0.2,  # larger than BERT's 0.02, so that scores depend visibly on every token
    )
    for name, value in payload.get("sizes", {}).items():
        setattr(config, name, value)
    torch.manual_seed(payload.get("seed", 0))
    model = BleurtForSequenceClassification(config)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "LayerNorm" in name or (name.endswith("bias") and "pooler" not in name and "classifier" not in name):
                parameter.add_(torch.randn_like(parameter) * 0.3)
        model.bleurt.pooler.dense.weight.normal_(0.0, 0.3)
        model.bleurt.pooler.dense.bias.zero_()
        model.classifier.weight.normal_(0.0, 0.2)  # scores of order 1 that vary between pairs, like BLEURT-20's
        model.classifier.bias.fill_(0.5)
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    del model, tokenizer
    scored = [score({**request, "folder": str(folder)}) for request in payload.get("score", [])]
    return {"folder": str(folder), "vocab_size": config.vocab_size, "scored": scored}


def score(payload: dict) -> dict:
    from bleurt_pytorch import BleurtForSequenceClassification, BleurtTokenizer

    torch.set_num_threads(payload.get("threads", torch.get_num_threads()))
    model = BleurtForSequenceClassification.from_pretrained(payload["folder"])
    tokenizer = BleurtTokenizer.from_pretrained(payload["folder"])
    references, candidates = payload["references"], payload["candidates"]
    batch_size = payload.get("batch_size", 16)
    options = {"padding": "longest", "return_tensors": "pt"}
    if payload.get("max_length"):
        options.update(truncation=True, max_length=payload["max_length"])
    model.eval()
    scores: list[float] = []
    start = time.perf_counter()
    with torch.no_grad():
        for begin in range(0, len(references), batch_size):
            inputs = tokenizer(references[begin:begin + batch_size], candidates[begin:begin + batch_size], **options)
            scores.extend(model(**inputs).logits.flatten().tolist())
    seconds = time.perf_counter() - start
    return {"scores": scores, "seconds": seconds, "tokenizer": type(tokenizer).__name__}


def main() -> None:
    payload = json.loads(sys.stdin.read())
    action = {"build": build, "score": score}[payload["action"]]
    print(json.dumps(action(payload)))


if __name__ == "__main__":
    main()
