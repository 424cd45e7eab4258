"""Sentence splitting for ROUGE-Lsum without downloads.

rouge-score splits summaries at newlines (or with nltk's punkt model, which
must be downloaded). :func:`split_sentences` splits at newlines and, inside a
line, after sentence-final punctuation (``.``, ``!``, ``?``, ``…``, with any
closing quotes or brackets) followed by whitespace, unless the word before the
full stop is a known abbreviation, a single letter (an initial) or contains an
inner full stop (``u.s.``, ``e.g.``); and after the CJK full stops ``。！？``.
Splits fall only at whitespace or right after punctuation, so no word is cut.
It is a simple rule-based splitter, not a trained one: see the card.
"""

from __future__ import annotations

import bisect
import re

_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof sr jr st vs etc inc ltd co corp no gen gov sen rep rev capt col lt sgt maj fig al approx "
    "jan feb mar apr jun jul aug sep sept oct nov dec mt ft est dept univ".split()
)
# Possessive, and never starting inside a run of sentence-final marks: a run of n marks not followed by a space
# costs n steps, not n**2 (no match can start inside a run where none started at its first mark).
_LATIN_END = re.compile(r"(?<![.!?\u2026])[.!?\u2026]++[\"'\u201d\u2019)\]]*+(?=\s)")
_CJK_END = re.compile(r"[\u3002\uff01\uff1f]+[\u300d\u300f\u201d\u2019\uff09]*")
_WORD = re.compile(r"\S+")


def _is_abbreviation(line: str, end: int, words: list[tuple[int, int]]) -> bool:
    """True when the full stop ending at ``end`` closes an abbreviation or an initial, not a sentence;
    ``words`` are the line's maximal non-space runs (start, end), in order."""
    index = bisect.bisect_right(words, (end - 1, len(line) + 1)) - 1
    if index < 0 or words[index][1] < end:  # the character before `end` is a space
        return False
    word = line[words[index][0]:end]
    if not word.endswith("."):
        return False
    word = word.rstrip(".").lstrip("\"'(\u201c\u2018[").lower()
    return len(word) == 1 or "." in word or word in _ABBREVIATIONS


def _split_line(line: str) -> list[str]:
    cuts = []
    words: list[tuple[int, int]] | None = None  # found once per line: a line may hold thousands of full stops
    for match in _LATIN_END.finditer(line):
        if words is None:
            words = [word.span() for word in _WORD.finditer(line)]
        punctuation_end = match.start() + len(match.group(0).rstrip("\"'\u201d\u2019)]"))
        if not _is_abbreviation(line, punctuation_end, words):
            cuts.append(match.end())
    cuts.extend(match.end() for match in _CJK_END.finditer(line))
    pieces = []
    start = 0
    for cut in sorted(set(cuts)):
        pieces.append(line[start:cut])
        start = cut
    pieces.append(line[start:])
    return [piece.strip() for piece in pieces if piece.strip()]


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``: split at newlines, then after sentence-final punctuation (rules above)."""
    sentences = []
    for line in text.split("\n"):
        sentences.extend(_split_line(line))
    return sentences


def newline_sentences(text: str) -> list[str]:
    """rouge-score's default ROUGE-Lsum split: lines, empty lines dropped (whitespace-only lines kept)."""
    return [line for line in text.split("\n") if line]
