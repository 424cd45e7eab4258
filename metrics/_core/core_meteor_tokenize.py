"""METEOR's text processing: NLTK's word tokenizer (without downloads) and NLTK's Porter stemmer.

The stemmer, :func:`porter_stem_uncached`, is NLTK's ``PorterStemmer().stem`` in its default
NLTK_EXTENSIONS mode, rule for rule, without NLTK's per-call method dispatch (a test compares the
two on every WordNet lemma and inflected form, the CNN/DailyMail vocabulary and random strings).

The tokenizer is NLTK's ``word_tokenize(text, preserve_line=True)``.

evaluate's ``meteor`` module tokenizes with ``nltk.word_tokenize(text)``, which
first splits the text into sentences with the Punkt model (``punkt_tab``, a
download) and then runs ``NLTKWordTokenizer`` on each sentence. Here the whole
text is one "sentence" (``preserve_line=True``): no download, same tokens
except around sentence-final periods inside a text. ``NLTKWordTokenizer``
splits a period off only at the end of the string it is given, so Punkt's
split gives ``['ran', '.', 'the']`` where this tokenizer keeps ``['ran.',
'the']``; a period already separated by a space (PTB-tokenized text such as
CNN/DailyMail) is a token either way.

NLTK 3.10 runs the tokenizer's rules through the third-party ``regex`` engine
under a timeout, several times slower than the standard engine. :func:`nltk_word_tokens`
applies the same rules, in the same order, with the standard ``re`` engine,
and skips a rule when the characters it needs are absent from the text. The
two engines agree on these patterns for every character whose ``\\s``, ``\\w``,
``\\d`` and case-insensitive-letter classes agree between them; a text holding
any other character (the separators U+001C..U+001F, which ``re`` but not
``regex`` counts as whitespace; combining marks and other characters whose
Unicode properties the engines see differently) is tokenized as NLTK's
``NLTKWordTokenizer`` does it, every rule on the ``regex`` engine (:func:`nltk_tokenizer_tokens`), without
importing NLTK (1-2 s in a fresh process). The rules below are NLTK 3.10's, in its order; a test
checks them against the installed NLTK.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

from .core_process import bounded_cache, import_cleanly, object_label, process_state

TOKENIZER_NAME = "nltk_word"

# NLTK 3.10's NLTKWordTokenizer rules in application order: (pattern, flags, replacement, triggers). A rule
# none of whose trigger strings occurs in the text cannot match and is skipped.
_STARTING_QUOTES = (
    ("([«“‘„]|[`]+)", re.U, r" \1 ", tuple("«“‘„`")),
    (r"^\"", 0, r"``", ('"',)),
    (r"(``)", 0, r" \1 ", ("``",)),
    (r"([ \(\[{<])(\"|\'{2})", 0, r"\1 `` ", ('"', "''")),
    (r"(?i)(?<!\w)(\')(?!(?:re|ve|ll|m|t|s|d|n)\b)(?=\w)", re.U, r"\1 ", ("'",)),
)
_PUNCTUATION = (
    (r'([^\.])(\.)([\]\)}>"\'' "»”’ " r"]*+)\s*$", re.U, r"\1 \2 \3 ", (".",)),
    (r"([:,])([^\d])", 0, r" \1 \2", (":", ",")),
    (r"([:,])$", 0, r" \1 ", (":", ",")),
    (r"\.{2,}", re.U, r" \g<0> ", ("..",)),
    (r"[;@#$%&]", 0, r" \g<0> ", tuple(";@#$%&")),
    (r"[\u2012-\u2015]", re.U, r" \g<0> ", tuple("\u2012\u2013\u2014\u2015")),
    (r'([^\.])(\.)([\]\)}>"\']*)\s*$', 0, r"\1 \2\3 ", (".",)),
    (r"[?!]", 0, r" \g<0> ", ("?", "!")),
    (r"([^'])' ", 0, r"\1 ' ", ("' ",)),
    (r"[*]", re.U, r" \g<0> ", ("*",)),
)
_PARENS_BRACKETS = (r"[\]\[\(\)\{\}\<\>]", 0, r" \g<0> ", tuple("][(){}<>"))
_DOUBLE_DASHES = (r"--", 0, r" -- ", ("--",))
_ENDING_QUOTES = (
    ("([»”’])", re.U, r" \1 ", tuple("»”’")),
    (r"''", 0, " '' ", ("''",)),
    (r'"', 0, " '' ", ('"',)),
    (r"\s+", 0, " ", ()),
    # The clitic rules' checks (below) look for the clitics themselves: the trigger is the quote they all hold.
    (r"([^' ])('[sS]|'[mM]|'[dD]|') ", 0, r"\1 \2 ", ("'",)),
    (r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ", 0, r"\1 \2 ", ("'",)),
)
# MacIntyre's contractions (NLTK compiles these with the standard ``re`` engine), with the lowercase
# text they need: a trigger only for ASCII texts, where lowercasing is exactly case-insensitive matching.
_CONTRACTIONS = (
    (r"(?i)\b(can)(?#X)(not)\b", "cannot"),
    (r"(?i)\b(d)(?#X)('ye)\b", "d'ye"),
    (r"(?i)\b(gim)(?#X)(me)\b", "gimme"),
    (r"(?i)\b(gon)(?#X)(na)\b", "gonna"),
    (r"(?i)\b(got)(?#X)(ta)\b", "gotta"),
    (r"(?i)\b(lem)(?#X)(me)\b", "lemme"),
    (r"(?i)\b(more)(?#X)('n)\b", "more'n"),
    (r"(?i)\b(wan)(?#X)(na)(?=\s)", "wanna"),
    (r"(?i) ('t)(?#X)(is)\b", "'tis"),
    (r"(?i) ('t)(?#X)(was)\b", "'twas"),
)

# Rules applied before the text is padded with spaces, and after.
BEFORE_PADDING = (*_STARTING_QUOTES, *_PUNCTUATION, _PARENS_BRACKETS, _DOUBLE_DASHES)
AFTER_PADDING = _ENDING_QUOTES
CONTRACTIONS = _CONTRACTIONS

# How a rule is applied: a plain substitution; once, searched from the character before the last period (the
# two final-period rules: nothing after the period they split off may be a period, so only the last one can
# match, once); as a split and join (the whitespace rule; same whitespace as NLTK's engine on the fast path); only
# when the text ends with ':' or ',' (before at most one final newline, where '$' also matches).
_SUB, _FINAL_PERIOD, _WHITESPACE, _AT_END = 0, 1, 2, 3
_MODES = {
    _PUNCTUATION[0][0]: _FINAL_PERIOD,
    _PUNCTUATION[6][0]: _FINAL_PERIOD,
    _ENDING_QUOTES[3][0]: _WHITESPACE,
    _PUNCTUATION[2][0]: _AT_END,
}

_ASCII_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _quotes(text: str) -> list[int]:
    positions = []
    position = text.find("'")
    while position >= 0:
        positions.append(position)
        position = text.find("'", position + 1)
    return positions


def _clitic_s_m_d(text: str) -> bool:
    """Necessary for ``([^' ])('[sS]|'[mM]|'[dD]|') ``: after a character other than ' or space, a quote
    followed by a space or by one of s, m, d (either case) and a space."""
    return any(
        position
        and text[position - 1] not in "' "
        and (text[position + 1 : position + 2] == " " or text[position + 1 : position + 3] in _CLITIC_SMD)
        for position in _quotes(text)
    )


_CLITIC_SMD = frozenset(("s ", "S ", "m ", "M ", "d ", "D "))
_CLITIC_LL_RE_VE = frozenset(("ll ", "LL ", "re ", "RE ", "ve ", "VE "))


def _clitic_ll_re_ve_nt(text: str) -> bool:
    """Necessary for ``([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ``."""
    for position in _quotes(text):
        if position and text[position - 1] not in "' " and text[position + 1 : position + 4] in _CLITIC_LL_RE_VE:
            return True
        if position >= 2 and text[position - 1 : position + 3] in ("n't ", "N'T ") and text[position - 2] not in "' ":
            return True
    return False


def _quote_before_space(text: str) -> bool:
    """Necessary for ``([^'])' ``: a quote followed by a space, after a character other than a quote."""
    return any(
        position and text[position - 1] != "'" and text[position + 1 : position + 2] == " "
        for position in _quotes(text)
    )


_CLITICS = ("re", "ve", "ll", "m", "t", "s", "d", "n")


def _opening_single_quote(text: str) -> bool:
    r"""Necessary for ``(?i)(?<!\w)(\')(?!(?:re|ve|ll|m|t|s|d|n)\b)(?=\w)`` on ASCII text: a quote after no
    word character, before one, and not before a clitic that ends a word.

    Other texts always run the rule (``\w`` beyond ASCII is the engine's business).
    """
    if not text.isascii():
        return True
    word = _ASCII_WORD
    for position in _quotes(text):
        if text[position + 1 : position + 2] not in word or (position and text[position - 1] in word):
            continue
        following = text[position + 1 : position + 3].lower()
        if not any(
            following.startswith(clitic) and text[position + 1 + len(clitic) : position + 2 + len(clitic)] not in word
            for clitic in _CLITICS
        ):
            return True
    return False


# Extra necessary conditions of some rules, checked after their triggers.
_CHECKS = {
    _STARTING_QUOTES[4][0]: _opening_single_quote,
    _PUNCTUATION[8][0]: _quote_before_space,
    _ENDING_QUOTES[4][0]: _clitic_s_m_d,
    _ENDING_QUOTES[5][0]: _clitic_ll_re_ve_nt,
}

# (pattern, replacement: a template, or for final-period rules a function of the match, triggers, mode, check)
_Compiled = tuple[Any, Any, tuple[str, ...], int, Callable[[str], bool] | None]


def _expander(template: str) -> Callable[[re.Match[str]], str]:
    """``match.expand(template)`` for a template of literal text and group references ``\\N``, parsed once
    (``Match.expand`` parses its template on every call)."""
    pieces = re.split(r"\\(\d)", template)
    layout = "".join(
        piece.replace("{", "{{").replace("}", "}}") if index % 2 == 0 else "{%d}" % (index // 2)
        for index, piece in enumerate(pieces)
    )
    groups = [int(group) for group in pieces[1::2]]

    def expand(match: re.Match[str]) -> str:
        return layout.format(*[match.group(group) or "" for group in groups])

    return expand


def _compile(rules: Sequence[tuple[str, int, str, tuple[str, ...]]]) -> tuple[_Compiled, ...]:
    compiled = []
    for pattern, flags, replacement, triggers in rules:
        mode = _MODES.get(pattern, _SUB)
        expansion: Any = _expander(replacement) if mode == _FINAL_PERIOD else replacement
        compiled.append((re.compile(pattern, flags), expansion, triggers, mode, _CHECKS.get(pattern)))
    return tuple(compiled)


try:
    _BEFORE = _compile(BEFORE_PADDING)
    _AFTER = _compile(AFTER_PADDING)
    _FAST_PATH = True
except re.error:  # possessive quantifiers need Python 3.11; older versions use NLTK's tokenizer for every text
    _BEFORE = _AFTER = ()
    _FAST_PATH = False
_CONTRACTION_PATTERNS = tuple((re.compile(pattern), needle) for pattern, needle in _CONTRACTIONS)
_SEPARATOR_CONTROLS = re.compile("[\x1c-\x1f]")

# Probes of the character properties the rules depend on: a character is safe for the ``re`` engine when
# every probe matches it in both engines or in neither.
_PROBES = (r"\s", r"\w", r"\d", *(f"(?i){letter}" for letter in "revlmtsdn"))


class _Engines:
    """Objects built on first use and shared by every copy of this module: the ``regex`` engine (NLTK's), the
    probe pairs (``re``, ``regex``) and NLTK's rules compiled with ``regex``."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.regex: Any = None
        self.imported = False
        self.probes: list[tuple[Any, Any]] | None = None
        self.rules: tuple[tuple[tuple[Any, str], ...], tuple[tuple[Any, str], ...]] | None = None

    def regex_engine(self) -> Any:
        """The ``regex`` module, or None when it is not installed (imported once)."""
        if not self.imported:
            with self.lock:
                if not self.imported:
                    try:  # undone if interrupted, so that the next call imports it afresh
                        self.regex = import_cleanly("regex")
                    except ImportError:
                        self.regex = None
                    self.imported = True
        return self.regex

    def probe_patterns(self) -> list[tuple[Any, Any]] | None:
        if self.probes is None:
            regex = self.regex_engine()
            if regex is None:
                return None
            self.probes = [(re.compile(probe), regex.compile(probe)) for probe in _PROBES]
        return self.probes

    def regex_rules(self) -> tuple[tuple[tuple[Any, str], ...], tuple[tuple[Any, str], ...]]:
        """NLTK's rules before and after padding, compiled with ``regex`` as ``nltk.redos.compile`` compiles them."""
        if self.rules is None:
            regex = self.regex_engine()
            if regex is None:
                raise ImportError(
                    "meteor: tokenizing this text needs the `regex` package (the engine NLTK's tokenizer runs on): "
                    "pip install regex"
                )
            self.rules = tuple(
                tuple((regex.compile(pattern, flags), replacement) for pattern, flags, replacement, _ in rules)
                for rules in (BEFORE_PADDING, AFTER_PADDING)
            )  # type: ignore[assignment]
        return self.rules  # type: ignore[return-value]


_ENGINES = process_state(__file__, "tokenizer engines", _Engines)
# Whether a character is safe for the ``re`` engine (a few hundred bytes per character met).
_SAFE_CHARACTERS = bounded_cache(__file__, "meteor.characters", 1 << 22, lambda character, safe: 240)


def _is_safe(character: str) -> bool:
    entry = _SAFE_CHARACTERS._entries.get(character)
    if entry is not None:
        return entry[0]
    probes = _ENGINES.probe_patterns()
    safe = probes is not None and all(
        (ours.fullmatch(character) is None) == (theirs.fullmatch(character) is None) for ours, theirs in probes
    )
    return _SAFE_CHARACTERS.store(character, safe)


def _fast_path_applies(text: str) -> bool:
    """True when the standard ``re`` engine gives exactly NLTK's result for ``text``."""
    if not _FAST_PATH or _SEPARATOR_CONTROLS.search(text) is not None:
        return False
    return text.isascii() or all(_is_safe(character) for character in set(text) if not character.isascii())


def _apply(text: str, rules: tuple[_Compiled, ...]) -> str:
    for pattern, replacement, triggers, mode, check in rules:
        for trigger in triggers:
            if trigger in text:
                break
        else:
            if triggers:
                continue
        if check is not None and not check(text):
            continue
        if mode == _SUB:
            text = pattern.sub(replacement, text)
        elif mode == _FINAL_PERIOD:
            match = pattern.search(text, max(text.rfind(".") - 1, 0))
            if match is not None:
                text = text[: match.start()] + replacement(match) + text[match.end() :]
        elif mode == _AT_END:
            if text[-1:] in (":", ",") or text[-2:] in (":\n", ",\n"):
                text = pattern.sub(replacement, text)
        else:
            words = text.split()
            text = " " + " ".join(words) + " " if words else " "
    return text


def nltk_tokenizer_tokens(text: str) -> list[str]:
    """Tokens as NLTK's ``NLTKWordTokenizer().tokenize(text)`` makes them: every rule in NLTK's order, on the
    ``regex`` engine NLTK compiles them with, and the contractions on ``re`` as NLTK's; NLTK is not imported."""
    before, after = _ENGINES.regex_rules()
    for pattern, replacement in before:
        text = pattern.sub(replacement, text)
    text = " " + text + " "
    for pattern, replacement in after:
        text = pattern.sub(replacement, text)
    for pattern, _ in _CONTRACTION_PATTERNS:
        text = pattern.sub(r" \1 \2 ", text)
    return text.split()


def nltk_word_tokens(text: str) -> list[str]:
    """``nltk.word_tokenize(text, preserve_line=True)``: NLTK's word tokenizer on the whole text."""
    if not _fast_path_applies(text):
        return nltk_tokenizer_tokens(text)
    text = _apply(" " + _apply(text, _BEFORE) + " ", _AFTER)
    if text.isascii():
        lowered = text.lower()
        for pattern, needle in _CONTRACTION_PATTERNS:
            if needle in lowered:
                text = pattern.sub(r" \1 \2 ", text)
    else:
        for pattern, _ in _CONTRACTION_PATTERNS:
            text = pattern.sub(r" \1 \2 ", text)
    return text.split()


def tokenizer_label(tokenizer: Callable[[str], Sequence[str]] | Any | None) -> str:
    """A tokenizer's name in statistics signatures: ``nltk_word`` for the default; ``custom:<signature>`` for an
    object with a ``signature()`` method; otherwise its name and a label of the object, so statistics made with
    it merge only with those made by the same object in this process."""
    if tokenizer is None or tokenizer is nltk_word_tokens:
        return TOKENIZER_NAME
    signature = getattr(tokenizer, "signature", None)
    if callable(signature):
        return f"custom:{signature()}"
    function = getattr(tokenizer, "tokenize", tokenizer)
    name = getattr(function, "__qualname__", type(function).__qualname__)
    return f"unverified:{name}:{object_label(tokenizer)}"


# NLTK's PorterStemmer in its default NLTK_EXTENSIONS mode (what METEOR uses), step for step.
# Consonant flags of a prefix are the prefix of the word's flags, so each step classifies the word
# once and measures prefixes by slicing.

_VOWELS = frozenset("aeiou")
_IRREGULAR_FORMS = {
    "sky": ("sky", "skies"),
    "die": ("dying",),
    "lie": ("lying",),
    "tie": ("tying",),
    "news": ("news",),
    "inning": ("innings", "inning"),
    "outing": ("outings", "outing"),
    "canning": ("cannings", "canning"),
    "howe": ("howe",),
    "proceed": ("proceed",),
    "exceed": ("exceed",),
    "succeed": ("succeed",),
}
_POOL = {form: stem for stem, forms in _IRREGULAR_FORMS.items() for form in forms}


_VOWEL_SHAPE = {character: "v" for character in "aeiou"}


def _shape(word: str) -> str:
    """'c' or 'v' per letter: a, e, i, o, u are vowels, y is one after a consonant, anything else a consonant."""
    if "y" not in word:
        return "".join([_VOWEL_SHAPE.get(character, "c") for character in word])
    shape = []
    previous_consonant = False
    for character in word:
        if character in _VOWELS:
            consonant = False
        elif character == "y":
            consonant = not previous_consonant
        else:
            consonant = True
        shape.append("c" if consonant else "v")
        previous_consonant = consonant
    return "".join(shape)


def _measure(shape: str, length: int) -> int:
    """Porter's m of the word's first ``length`` letters."""
    return shape[:length].count("vc")


def _ends_cvc(word: str, shape: str, length: int) -> bool:
    """Porter's *o (with NLTK's two-letter extension) for the word's first ``length`` letters."""
    if length >= 3:
        return shape[length - 3 : length] == "cvc" and word[length - 1] not in "wxy"
    return length == 2 and shape[:2] == "vc"


_Rule = tuple[str, str, Callable[[str, str, int], bool] | None]


def _apply_rules(word: str, rules: Sequence[_Rule], suffixes: tuple[str, ...] | None = None) -> str:
    """NLTK's ``_apply_rule_list``: the first rule whose suffix ends the word decides (``*d``: a double consonant).

    ``suffixes``, when given, are all the rules' suffixes: a word ending in none of them is returned at once.
    """
    if suffixes is not None and not word.endswith(suffixes):
        return word
    shape = ""
    for suffix, replacement, condition in rules:
        if suffix == "*d" and len(word) >= 2 and word[-1] == word[-2]:
            shape = shape or _shape(word)
            if shape[-1] == "c":
                stem = word[:-2]
                if condition is None or condition(word, shape, len(stem)):
                    return stem + replacement
                return word
        if word.endswith(suffix):
            length = len(word) - len(suffix)
            if condition is None:
                return word[:length] + replacement
            shape = shape or _shape(word)
            if condition(word, shape, length):
                return word[:length] + replacement
            return word
    return word


def _m_positive(word: str, shape: str, length: int) -> bool:
    return _measure(shape, length) > 0


def _m_above_1(word: str, shape: str, length: int) -> bool:
    return _measure(shape, length) > 1


_STEP1A = (("sses", "ss", None), ("ies", "i", None), ("ss", "ss", None), ("s", "", None))
_STEP2 = tuple(
    (suffix, replacement, _m_positive)
    for suffix, replacement in (
        ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"),
        ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"),
        ("ization", "ize"), ("ation", "ate"), ("ator", "ate"), ("alism", "al"), ("iveness", "ive"),
        ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
        ("fulli", "ful"),
    )
) + (("logi", "log", lambda word, shape, length: _measure(shape, len(word) - 3) > 0),)  # fmt: skip
_STEP3 = tuple(
    (suffix, replacement, _m_positive)
    for suffix, replacement in (
        ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""), ("ness", "")
    )
)
_STEP4 = tuple(
    (suffix, "", _m_above_1)
    for suffix in ("al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent")
) + (("ion", "", lambda word, shape, length: _measure(shape, length) > 1 and word[length - 1] in "st"),) + tuple(
    (suffix, "", _m_above_1) for suffix in ("ou", "ism", "ate", "iti", "ous", "ive", "ize")
)
_STEP5B = (("ll", "l", lambda word, shape, length: _measure(shape, len(word) - 1) > 1),)
_STEP1A_SUFFIXES, _STEP2_SUFFIXES, _STEP3_SUFFIXES, _STEP4_SUFFIXES, _STEP5B_SUFFIXES = (
    tuple(rule[0] for rule in rules) for rules in (_STEP1A, _STEP2, _STEP3, _STEP4, _STEP5B)
)


def _step1b(word: str) -> str:
    if word.endswith("ied"):
        return word[:-3] + ("ie" if len(word) == 4 else "i")
    if word.endswith("eed"):
        return word[:-1] if _measure(_shape(word), len(word) - 3) > 0 else word
    for suffix in ("ed", "ing"):
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            if "v" in _shape(stem):
                break
    else:
        return word
    last = stem[-1]
    return _apply_rules(
        stem,
        (
            ("at", "ate", None),
            ("bl", "ble", None),
            ("iz", "ize", None),
            ("*d", last, lambda word, shape, length: last not in "lsz"),
            ("", "e", lambda word, shape, length: _measure(shape, length) == 1 and _ends_cvc(word, shape, length)),
        ),
    )


def _step1c(word: str) -> str:
    if word.endswith("y") and len(word) > 2 and _shape(word)[-2] == "c":
        return word[:-1] + "i"
    return word


def _step2(word: str) -> str:
    if word.endswith("alli") and _measure(_shape(word), len(word) - 4) > 0:
        return _step2(word[:-4] + "al")
    return _apply_rules(word, _STEP2, _STEP2_SUFFIXES)


def _step5a(word: str) -> str:
    if word.endswith("e"):
        shape = _shape(word)
        length = len(word) - 1
        measure = _measure(shape, length)
        if measure > 1 or (measure == 1 and not _ends_cvc(word, shape, length)):
            return word[:-1]
    return word


def porter_stem_uncached(word: str) -> str:
    """``nltk.stem.porter.PorterStemmer().stem(word)`` (NLTK_EXTENSIONS mode), without NLTK."""
    stem = word.lower()
    if stem in _POOL:
        return _POOL[stem]
    if len(word) <= 2:
        return stem
    if stem.endswith("ies") and len(stem) == 4:
        stem = stem[:-3] + "ie"
    else:
        stem = _apply_rules(stem, _STEP1A, _STEP1A_SUFFIXES)
    stem = _step1b(stem)
    stem = _step1c(stem)
    stem = _step2(stem)
    stem = _apply_rules(stem, _STEP3, _STEP3_SUFFIXES)
    stem = _apply_rules(stem, _STEP4, _STEP4_SUFFIXES)
    stem = _step5a(stem)
    return _apply_rules(stem, _STEP5B, _STEP5B_SUFFIXES)
