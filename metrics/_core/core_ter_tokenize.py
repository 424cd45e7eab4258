"""Tercom's normalisation and tokenization, as sacreBLEU 2.x's ``TercomTokenizer`` applies it before TER.

Every rule is sacreBLEU's, in its order and with its regular expressions
(including their quirks: the Hiragana/Katakana rules only fire on a whole
segment of such characters, and the "Enclosed CJK" range runs to U+3F22), so
the tokens are identical to sacreBLEU's for any text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ASIAN_PUNCT = r"([\u3001\u3002\u3008-\u3011\u3014-\u301f\uff61-\uff65\u30fb])"
_FULL_WIDTH_PUNCT = r"([\uff0e\uff0c\uff1f\uff1a\uff1b\uff01\uff02\uff08\uff09])"

# (pattern, replacement) in the order sacreBLEU applies them.
_GENERAL_AND_WESTERN_HEAD = [
    (re.compile(r"\n-"), ""),  # strip end-of-line hyphenation and join lines
    (re.compile(r"\n"), " "),
    (re.compile(r"&quot;"), '"'),
    (re.compile(r"&amp;"), "&"),
    (re.compile(r"&lt;"), "<"),
    (re.compile(r"&gt;"), ">"),
]
_GENERAL_AND_WESTERN_TAIL = [
    (re.compile(r"([{-~[-` -&(-+:-@/])"), r" \1 "),  # tokenize punctuation
    (re.compile(r"'s "), r" 's "),  # possessives
    (re.compile(r"'s$"), r" 's"),
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),  # period and comma unless preceded by a digit
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),  # period and comma unless followed by a digit
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),  # dash preceded by a digit
]
_ASIAN = [
    (re.compile(r"([\u4e00-\u9fff\u3400-\u4dbf])"), r" \1 "),  # CJK Unified Ideographs (and Extension A)
    (re.compile(r"([\u31c0-\u31ef\u2e80-\u2eff])"), r" \1 "),  # CJK Strokes, CJK Radicals Supplement
    (re.compile(r"([\u3300-\u33ff\uf900-\ufaff\ufe30-\ufe4f])"), r" \1 "),  # CJK compatibility blocks
    (re.compile(r"([\u3200-\u3f22])"), r" \1 "),  # Enclosed CJK Letters and Months (sacreBLEU's range)
    (re.compile(r"(^|^[\u3040-\u309f])([\u3040-\u309f]+)(?=$|^[\u3040-\u309f])"), r"\1 \2 "),  # Hiragana
    (re.compile(r"(^|^[\u30a0-\u30ff])([\u30a0-\u30ff]+)(?=$|^[\u30a0-\u30ff])"), r"\1 \2 "),  # Katakana
    (re.compile(r"(^|^[\u31f0-\u31ff])([\u31f0-\u31ff]+)(?=$|^[\u31f0-\u31ff])"), r"\1 \2 "),  # Katakana ext.
    (re.compile(_ASIAN_PUNCT), r" \1 "),
    (re.compile(_FULL_WIDTH_PUNCT), r" \1 "),
]
_PUNCT = re.compile(r"[\.,\?:;!\"\(\)]")
_ASIAN_PUNCT_REMOVAL = [re.compile(_ASIAN_PUNCT), re.compile(_FULL_WIDTH_PUNCT)]


def _apply(rules: list[tuple[re.Pattern[str], str]], text: str) -> str:
    for pattern, replacement in rules:
        text = pattern.sub(replacement, text)
    return text


def normalize_general_and_western(text: str) -> str:
    """Tercom's language-independent and Western normalisation: joined lines, XML entities, split punctuation."""
    text = _apply(_GENERAL_AND_WESTERN_HEAD, text)
    return _apply(_GENERAL_AND_WESTERN_TAIL, f" {text} ")


def normalize_asian(text: str) -> str:
    """Tercom's Asian normalisation: CJK ideographs and Asian punctuation split into single characters."""
    return _apply(_ASIAN, text)


def remove_punctuation(text: str, *, asian: bool) -> str:
    """Text without ``.,?:;!"()`` (and, with ``asian``, CJK and full-width punctuation)."""
    text = _PUNCT.sub("", text)
    if asian:
        for pattern in _ASIAN_PUNCT_REMOVAL:
            text = pattern.sub("", text)
    return text


@dataclass(frozen=True)
class TercomTokenizer:
    """sacreBLEU's ``TercomTokenizer`` with its four switches; calling it gives the space-joined tokens."""

    normalized: bool = False
    no_punct: bool = False
    asian_support: bool = False
    case_sensitive: bool = False

    def __call__(self, text: str) -> str:
        return tercom_tokenize(
            text,
            normalized=self.normalized,
            no_punct=self.no_punct,
            asian_support=self.asian_support,
            case_sensitive=self.case_sensitive,
        )

    def words(self, text: str) -> list[str]:
        """The tokens TER aligns: trailing whitespace stripped, tokenized, split on whitespace."""
        return self(text.rstrip()).split()


def tercom_tokenize(
    text: str,
    *,
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
) -> str:
    """Tercom-tokenized ``text``: tokens joined by single spaces (sacreBLEU's ``TercomTokenizer.__call__``)."""
    if not text:
        return ""
    if not case_sensitive:
        text = text.lower()
    if normalized:
        text = normalize_general_and_western(text)
        if asian_support:
            text = normalize_asian(text)
    if no_punct:
        text = remove_punctuation(text, asian=asian_support)
    return " ".join(text.split())
