"""ROUGE tokenizers: rouge-score's default (ASCII, optional Porter stemming, cached) and a Unicode-aware one.

``rouge_score`` replicates ``rouge_score.tokenize.tokenize``: lowercase, every
run of characters other than ``[a-z0-9]`` becomes a separator, and with the
stemmer each token longer than three characters goes through nltk's
``PorterStemmer()`` (its default NLTK_EXTENSIONS mode, as rouge-score builds
it). Stems are cached per token in a process-wide cache bounded in bytes, so
each distinct word is stemmed once per process. Non-Latin text is reduced to nothing by this tokenizer, exactly as by
rouge-score.

``pycocoevalcap`` is pycocoevalcap's ``Rouge`` tokenization: ``text.split(" ")``,
case kept, nothing removed; runs of spaces give empty tokens and the empty text
is one empty token, exactly as there (nlg-eval strips each text first).

``unicode`` keeps every script: NFKC normalisation and case folding, words are
runs of letters, digits and combining marks, and characters of scripts written
without spaces (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar) are one
token each, with their combining marks. The stemmer applies to ASCII tokens
only, with rouge-score's length rule.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .core_process import MIB, bounded_cache, object_label

TOKENIZER_NAMES = ("rouge_score", "unicode", "pycocoevalcap")

_NON_ALPHANUMERIC = re.compile(r"[^a-z0-9]+")
_VALID_TOKEN = re.compile(r"^[a-z0-9]+$")
# Bytes of cached stems (an estimate: the word, its stem and the cache entry).
STEM_CACHE_BYTES = 32 * MIB

_STEMS = bounded_cache(__file__, "rouge.stems", STEM_CACHE_BYTES, lambda token, stem: 160 + 2 * len(token))
_stemmer: list[Any] = []


def _porter_stem(token: str) -> str:
    if not _stemmer:
        try:
            from nltk.stem import porter
        except ImportError as error:
            raise ImportError(
                "rouge: use_stemmer=True needs nltk's Porter stemmer (as rouge-score): pip install nltk"
            ) from error
        _stemmer.append(porter.PorterStemmer())
    return _stemmer[0].stem(token)


def _stem_uncached(token: str) -> str:
    stem = _porter_stem(token) if len(token) > 3 else token
    return stem if _VALID_TOKEN.match(stem) else ""


def stem_tokens(tokens: Sequence[str]) -> list[str]:
    """rouge-score's stemming step: Porter-stem tokens longer than 3 characters, drop tokens left invalid."""
    entries = _STEMS._entries
    try:
        stemmed = [entries[token][0] for token in tokens]
    except KeyError:
        find, store = entries.get, _STEMS.store
        stemmed = []
        for token in tokens:
            entry = find(token)
            stemmed.append(store(token, _stem_uncached(token)) if entry is None else entry[0])
    if "" in stemmed:
        return [stem for stem in stemmed if stem]
    return stemmed


def rouge_score_tokens(text: str) -> list[str]:
    """rouge-score's default tokenization without stemming."""
    return _NON_ALPHANUMERIC.sub(" ", text.lower()).split()


def rouge_score_stemmed_tokens(text: str) -> list[str]:
    """rouge-score's default tokenization with its Porter stemming."""
    return stem_tokens(_NON_ALPHANUMERIC.sub(" ", text.lower()).split())


_NO_SPACE_SCRIPTS = (
    "\u0e00-\u0e7f"  # Thai
    "\u0e80-\u0eff"  # Lao
    "\u1000-\u109f"  # Myanmar
    "\u1780-\u17ff"  # Khmer
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff\u31f0-\u31ff"  # Katakana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # Han
    "\U00020000-\U0003134f"  # Han, supplementary planes
)


def _char_class(ranges: list[tuple[int, int]]) -> str:
    return "".join(
        re.escape(chr(low)) if low == high else f"{re.escape(chr(low))}-{re.escape(chr(high))}" for low, high in ranges
    )


@lru_cache(maxsize=1)
def _unicode_token_pattern() -> re.Pattern[str]:
    marks: list[tuple[int, int]] = []
    for code in range(sys.maxunicode + 1):
        if unicodedata.category(chr(code)) in ("Mn", "Mc", "Me"):
            if marks and marks[-1][1] == code - 1:
                marks[-1] = (marks[-1][0], code)
            else:
                marks.append((code, code))
    mark_class = _char_class(marks)
    return re.compile(
        f"[{_NO_SPACE_SCRIPTS}][{mark_class}]*|(?:[^\\W_{_NO_SPACE_SCRIPTS}]|[{mark_class}])+"
    )


def pycocoevalcap_tokens(text: str) -> list[str]:
    """pycocoevalcap's ROUGE-L tokens: the text split at every single space."""
    return text.split(" ")


def unicode_tokens(text: str) -> list[str]:
    """Unicode-aware tokens: words of any script, one token per character of scripts without spaces."""
    return _unicode_token_pattern().findall(unicodedata.normalize("NFKC", text).casefold())


def unicode_stemmed_tokens(text: str) -> list[str]:
    """Unicode-aware tokens, ASCII ones stemmed as rouge-score stems."""
    return [stem_tokens((token,))[0] if token.isascii() else token for token in unicode_tokens(text)]


@dataclass(frozen=True)
class RougeTokenizer:
    """A tokenizer with a name for signatures.

    ``splits_at_lines`` is true when the tokens of a text are exactly the
    tokens of its sentences one after another (for texts split at whitespace
    or punctuation), so ROUGE-Lsum's per-sentence tokens can be reused.
    """

    name: str
    function: Callable[[str], Sequence[str]]
    splits_at_lines: bool

    def __call__(self, text: str) -> Sequence[str]:
        tokens = self.function(text)
        return tokens if isinstance(tokens, list) else list(tokens)


def make_tokenizer(tokenizer: str | Callable[[str], Sequence[str]] | Any | None, use_stemmer: bool) -> RougeTokenizer:
    """The tokenizer for a ``tokenizer`` argument: a name, a callable, an object with ``tokenize``, or None."""
    if tokenizer is None or tokenizer == "rouge_score":
        if use_stemmer:
            return RougeTokenizer("rouge_score+stem", rouge_score_stemmed_tokens, True)
        return RougeTokenizer("rouge_score", rouge_score_tokens, True)
    if tokenizer == "unicode":
        if use_stemmer:
            return RougeTokenizer("unicode+stem", unicode_stemmed_tokens, True)
        return RougeTokenizer("unicode", unicode_tokens, True)
    if tokenizer == "pycocoevalcap":
        if use_stemmer:
            raise ValueError("the 'pycocoevalcap' tokenizer does not stem (as pycocoevalcap); drop use_stemmer")
        # a newline is part of a token here, so a text's tokens are not its lines' tokens one after another
        return RougeTokenizer("pycocoevalcap", pycocoevalcap_tokens, False)
    if isinstance(tokenizer, str):
        raise ValueError(f"unknown tokenizer name {tokenizer!r}")
    function = getattr(tokenizer, "tokenize", tokenizer)
    if not callable(function):
        raise TypeError("tokenizer must be a name, a callable or an object with a tokenize method")
    return RougeTokenizer(custom_tokenizer_label(tokenizer, function), _checked_tokens(function), False)


def _checked_tokens(function: Callable[[str], Any]) -> Callable[[str], list[str]]:
    """``function`` whose result must be a list (or another iterable, not a string) of string tokens."""
    def tokens(text: str) -> list[str]:
        result = function(text)
        if isinstance(result, (str, bytes)) or not isinstance(result, Iterable):
            raise TypeError(f"rouge: the custom `tokenizer` returned {type(result).__name__} ({result!r:.60}) for "
                            f"the text {text!r:.60}; it must return a list of tokens (strings)")
        result = list(result)
        for token in result:
            if not isinstance(token, str):
                raise TypeError(f"rouge: the custom `tokenizer` returned a token of type {type(token).__name__} "
                                f"({token!r:.60}) for the text {text!r:.60}; tokens must be strings")
        return result

    return tokens


def custom_tokenizer_label(tokenizer: Any, function: Callable[..., Any]) -> str:
    """A custom tokenizer's name in statistics signatures: its own ``signature()`` when it has one; otherwise
    its name and a label of the object, so its statistics merge only with those made by the same object in this
    process."""
    signature = getattr(tokenizer, "signature", None)
    if callable(signature):
        return f"custom:{signature()}"
    name = getattr(function, "__qualname__", type(function).__qualname__)
    return f"unverified:{name}:{object_label(tokenizer)}"
