"""RoBERTa's byte-level BPE exactly as the official USR code applies it (transformers 2.x's slow tokenizer).

The official scoring scripts (github.com/Shikib/usr, ``examples/run_lm_finetuning.py`` and
``examples/train_understandable.py``) tokenize with the ``RobertaTokenizer`` of their transformers snapshot (equal,
in everything used here, to transformers 2.2.0): ``tokenize`` first splits the text on the special tokens (``<s>``,
``</s>``, ``<unk>``, ``<pad>``, ``<mask>`` and any added tokens), strips every other piece of surrounding whitespace
and drops empty pieces, then applies GPT-2's pre-tokenization regex and the BPE merges to each piece (no prefix
space); ``convert_tokens_to_ids`` maps a token missing from ``vocab.json`` to ``<unk>``. This module does the same
from a model folder's ``vocab.json`` and ``merges.txt`` with the ``tokenizers`` library's BPE (whose byte-level
pre-tokenizer uses GPT-2's regex), so no slow tokenizer or old transformers is needed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# transformers 2.x RobertaTokenizer's special tokens (tokenization_roberta.py), overridden by special_tokens_map.json
SPECIAL_TOKENS = {"bos_token": "<s>", "eos_token": "</s>", "sep_token": "</s>", "cls_token": "<s>",
                  "unk_token": "<unk>", "pad_token": "<pad>", "mask_token": "<mask>"}
TOKENIZER_FILES = ("vocab.json", "merges.txt")


class UsrTokenizer:
    """Token ids of texts as transformers 2.x's ``RobertaTokenizer`` gives them (``tokenize`` then
    ``convert_tokens_to_ids``), and the ids of its special tokens."""

    def __init__(self, folder: Path) -> None:
        from tokenizers import Tokenizer, models, pre_tokenizers

        vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
        special = dict(SPECIAL_TOKENS)
        special_file = folder / "special_tokens_map.json"
        if special_file.is_file():
            for key, value in json.loads(special_file.read_text(encoding="utf-8")).items():
                if key in special:
                    special[key] = value["content"] if isinstance(value, dict) else str(value)
        added_file = folder / "added_tokens.json"
        added = json.loads(added_file.read_text(encoding="utf-8")) if added_file.is_file() else {}
        self.vocab: dict[str, int] = {**vocab, **{token: int(index) for token, index in added.items()}}
        unk = special["unk_token"]
        missing = [token for token in dict.fromkeys(special.values()) if token not in self.vocab]
        if missing:
            raise ValueError(f"the tokenizer's vocabulary has no {', '.join(map(repr, missing))}")
        self.unk_id = self.vocab[unk]
        self.cls_id, self.sep_id = self.vocab[special["cls_token"]], self.vocab[special["sep_token"]]
        self.pad_id, self.mask_id = self.vocab[special["pad_token"]], self.vocab[special["mask_token"]]
        # a symbol missing from vocab.json becomes <unk>, as the slow tokenizer's convert_tokens_to_ids maps it
        bpe = models.BPE.from_file(str(folder / "vocab.json"), str(folder / "merges.txt"), unk_token=unk)
        self._bpe = Tokenizer(bpe)
        self._bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        # the pieces the slow tokenizer never passes to BPE: added tokens, then the special tokens; longest first
        unsplit = sorted(set(added) | set(special.values()), key=lambda token: (-len(token), token))
        self._split = re.compile("(" + "|".join(re.escape(token) for token in unsplit) + ")")
        self._unsplit = set(unsplit)

    def ids(self, text: str) -> list[int]:
        """``convert_tokens_to_ids(tokenize(text))`` of transformers 2.x's RobertaTokenizer."""
        result: list[int] = []
        for piece in self._split.split(text):
            if piece in self._unsplit:
                result.append(self.vocab[piece])
                continue
            piece = piece.strip()
            if piece:
                result.extend(self._bpe.encode(piece, add_special_tokens=False).ids)
        return result

    def many(self, texts: Sequence[str]) -> list[list[int]]:
        return [self.ids(text) for text in texts]


def tokenizer_folder_problem(folder: Path) -> str | None:
    """What a model folder lacks to be tokenized as the official code does, or None."""
    missing = [name for name in TOKENIZER_FILES if not (folder / name).is_file()]
    if missing:
        return (f"has no {' or '.join(missing)} (RoBERTa's byte-level BPE files, which the official models share "
                f"with roberta-base: copy roberta-base's vocab.json and merges.txt into it)")
    return None


def load_tokenizer(folder: Path) -> Any:
    return UsrTokenizer(folder)
