"""BLEURT's input: a (reference, candidate) pair as token ids, exactly as bleurt-pytorch's tokenizers make it.

bleurt-pytorch's ``BleurtTokenizer`` is, for the BLEURT-20 checkpoints (a ``spm.model`` file), its
``BleurtSPTokenizer``: transformers 4's slow ``DebertaV2Tokenizer``, which splits the text on its special tokens
([CLS], [SEP], [PAD], [MASK], [UNK], written literally), lower-cases the rest when ``do_lower_case`` is set, and
encodes each remaining piece with sentencepiece. transformers 5 replaced that tokenizer by a converted one, so it is
reproduced here on the sentencepiece library itself. For the older checkpoints (a BERT wordpiece ``vocab.txt`` /
``tokenizer.json``) it is ``BertTokenizerFast``, which transformers 5 still has.

A pair is ``[CLS] reference [SEP] candidate [SEP]`` with token types 0 up to the first [SEP] and 1 after. Each
text is tokenized once, so references shared by many candidates cost one tokenization. A pair longer than the
model's positions is truncated as transformers' ``truncation='longest_first'`` does (tokens are taken from the end
of the longer text until both fit); bleurt-pytorch's README call does not truncate and fails on such pairs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SPECIAL_TOKENS = ("[CLS]", "[SEP]", "[PAD]", "[MASK]", "[UNK]")
SENTENCEPIECE_FILE = "spm.model"
WORDPIECE_FILES = ("tokenizer.json", "vocab.txt")


def tokenizer_kind(folder: Path) -> str | None:
    """'wordpiece' or 'sentencepiece' by the files present (bleurt-pytorch tries the wordpiece tokenizer first), or
    None when the folder has no tokenizer files."""
    if any((folder / name).is_file() for name in WORDPIECE_FILES):
        return "wordpiece"
    if (folder / SENTENCEPIECE_FILE).is_file():
        return "sentencepiece"
    return None


def _tokenizer_config(folder: Path) -> dict[str, Any]:
    path = folder / "tokenizer_config.json"
    if not path.is_file():
        return {}
    config = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(config, dict):
        raise ValueError("tokenizer_config.json does not hold a JSON object")
    return config


class SentencePieceTexts:
    """bleurt-pytorch's ``BleurtSPTokenizer`` (transformers 4's slow ``DebertaV2Tokenizer``) for one text."""

    def __init__(self, folder: Path) -> None:
        try:
            import sentencepiece
        except ImportError as error:
            raise ValueError("BLEURT-20 checkpoints (spm.model) need the package 'sentencepiece' "
                             "(`pip install sentencepiece`)") from error
        config = _tokenizer_config(folder)
        if config.get("split_by_punct"):
            raise ValueError("tokenizer_config.json sets split_by_punct, which this module does not implement")
        self.lower = bool(config.get("do_lower_case", False))
        self.processor = sentencepiece.SentencePieceProcessor()
        self.processor.Load(str(folder / SENTENCEPIECE_FILE))
        self.special_ids = self._special_ids(config)
        names = sorted(self.special_ids, key=len, reverse=True)
        self._split = re.compile("(" + "|".join(re.escape(name) for name in names) + ")")
        self.cls_id, self.sep_id = self.special_ids["[CLS]"], self.special_ids["[SEP]"]
        self.pad_id = self.special_ids.get("[PAD]", 0)

    def _special_ids(self, config: dict[str, Any]) -> dict[str, int]:
        """The ids of the special tokens: those the saved tokenizer recorded (added_tokens_decoder), else the
        sentencepiece vocabulary's."""
        names = {config.get(key) for key in ("cls_token", "sep_token", "pad_token", "mask_token", "unk_token")}
        names = {name for name in names if isinstance(name, str)} | set(SPECIAL_TOKENS)
        recorded = {}
        for index, entry in (config.get("added_tokens_decoder") or {}).items():
            content = entry.get("content") if isinstance(entry, dict) else None
            if isinstance(content, str):
                recorded[content] = int(index)
        ids: dict[str, int] = {}
        unknown = self.processor.unk_id()
        for name in names:
            if name in recorded:
                ids[name] = recorded[name]
                continue
            piece = self.processor.PieceToId(name)
            if piece != unknown or self.processor.IdToPiece(piece) == name:
                ids[name] = piece
        for name in ("[CLS]", "[SEP]"):
            if name not in ids:
                raise ValueError(f"the sentencepiece model has no {name} token")
        for name, index in recorded.items():  # other added tokens split the text too
            ids.setdefault(name, index)
        return ids

    def __call__(self, text: str) -> list[int]:
        ids: list[int] = []
        for part in self._split.split(text):
            if not part:
                continue
            if part in self.special_ids:
                ids.append(self.special_ids[part])
                continue
            pieces = self.processor.encode(part.lower() if self.lower else part, out_type=str)
            ids.extend(self.processor.PieceToId(piece) for piece in pieces)
        return ids


class WordPieceTexts:
    """bleurt-pytorch's ``BleurtTokenizerFast`` (a ``BertTokenizerFast``) for one text."""

    def __init__(self, folder: Path) -> None:
        from transformers import BertTokenizerFast

        config = _tokenizer_config(folder)
        options: dict[str, Any] = {"local_files_only": True}
        if "do_lower_case" in config:
            options["do_lower_case"] = bool(config["do_lower_case"])
        self.tokenizer = BertTokenizerFast.from_pretrained(str(folder), **options)
        self.cls_id, self.sep_id = self.tokenizer.cls_token_id, self.tokenizer.sep_token_id
        self.pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        if self.cls_id is None or self.sep_id is None:
            raise ValueError("the wordpiece tokenizer has no [CLS] or [SEP] token")
        if self.tokenizer.unk_token not in self.tokenizer.backend_tokenizer.get_vocab(with_added_tokens=False):
            # the fast tokenizer adds it as a special token, but its WordPiece model fails on the first unknown word
            raise ValueError(f"the wordpiece vocabulary (vocab.txt) has no {self.tokenizer.unk_token} token, which "
                             f"every word outside the vocabulary becomes")

    def __call__(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def many(self, texts: Sequence[str]) -> list[list[int]]:
        return [list(ids) for ids in self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]]


def load_texts_tokenizer(folder: Path) -> SentencePieceTexts | WordPieceTexts:
    kind = tokenizer_kind(folder)
    if kind == "wordpiece":
        return WordPieceTexts(folder)
    if kind == "sentencepiece":
        return SentencePieceTexts(folder)
    raise ValueError(f"no tokenizer files ({SENTENCEPIECE_FILE}, or {' / '.join(WORDPIECE_FILES)})")


def tokenize_texts(tokenizer: SentencePieceTexts | WordPieceTexts, texts: Sequence[str]) -> list[list[int]]:
    """Token ids (no special tokens added) of each text."""
    if isinstance(tokenizer, WordPieceTexts):
        return tokenizer.many(texts) if texts else []
    return [tokenizer(text) for text in texts]


def pair_ids(tokenizer: SentencePieceTexts | WordPieceTexts, reference: Sequence[int], candidate: Sequence[int],
             max_length: int) -> tuple[list[int], int]:
    """(ids of ``[CLS] reference [SEP] candidate [SEP]``, number of type-0 tokens), truncated 'longest_first' to
    ``max_length`` tokens as transformers 4 truncates a pair."""
    remove = len(reference) + len(candidate) + 3 - max_length
    if remove > 0:
        first = min(abs(len(candidate) - len(reference)), remove)
        second = remove - first
        if len(reference) > len(candidate):
            from_reference, from_candidate = first + second // 2, second - second // 2
        else:
            from_reference, from_candidate = second // 2, first + second - second // 2
        reference = reference[:len(reference) - from_reference]
        candidate = candidate[:len(candidate) - from_candidate]
    ids = [tokenizer.cls_id, *reference, tokenizer.sep_id, *candidate, tokenizer.sep_id]
    return ids, len(reference) + 2
