"""SARI's tokenization of many texts in one pass: the texts of a chunk of examples joined into one string with
a separator token before each text, lowercased and tokenized at once, then split into one list of tokens.

sacreBLEU's 13a tokenizer pads each segment with a space on both sides before its rules look at neighbouring
characters, and its other steps (``<skipped>``, ``-\\n``, entity replacements, lowercasing) never reach across
a space. So the tokens of ``" T ".join(texts)`` (``T`` a character absent from every text, untouched by every
rule, not whitespace) are the tokens of each text with a ``T`` token between them: one call instead of one
per text. The 13a rules are those of ``core_mt_tokenizers`` with two rewrites that give the same tokens
faster on a long string: its translation table (which maps every space to three spaces, one character at a
time) is one ``str.replace`` per padded character present, and its two period/comma rules are one pass that
isolates the marks they isolate (:func:`_isolate_marks`). The ``intl`` tokenizer does not pad segments (a mark
at a segment's end has no right neighbour), so its texts are tokenized one by one. ``none`` splits on single
spaces (``paper``, ``evaluate``) or on whitespace (``easse``); every separator has one space on each side, so
splitting on single spaces gives each text's own pieces, empty ones included.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from itertools import chain

from .core_mt_tokenizers import _13A_PADDED_CHARS

# Separator candidates: not whitespace for str.split, not changed by str.lower, in no tokenizer rule; the first
# one that no text of a chunk holds is used.
_SEPARATORS = ("\x01", "\x02", "\x03", "\x04", "\x05", "\x06", "\x07", "\x08", "\x0e", "\x0f", "\x10", "\x11",
               "\x12", "\x13", "\x14", "\x15", "\x16", "\x17", "\x18", "\x19", "\x1a", "\x1b", "\x7f",
               "\ue000", "\ue001", "\ue002", "\ue003", "\ue004", "\ue005", "\ue006", "\ue007")

# mteval-v13a's padded characters, but the space (padding a space with spaces changes no token).
_PADDED = tuple(char for char in _13A_PADDED_CHARS if char != " ")
# A dash after a digit (mteval-v13a's ``([0-9])(-)`` -> ``\1 \2 ``), found by its literal first character.
_DASH_AFTER_DIGIT = re.compile(r"-(?<=[0-9]-)")
# A period (comma) next to no other period or comma, with a non-digit on one side at least: isolated (see
# _isolate_marks); replaced with a literal, so the regex engine does all the work.
_SINGLE_PERIOD = re.compile(r"\.(?<![.,]\.)(?![.,])(?:(?<=[^0-9]\.)|(?=[^0-9]))")
_SINGLE_COMMA = re.compile(r",(?<![.,],)(?![.,])(?:(?<=[^0-9],)|(?=[^0-9]))")
_DIGITS = frozenset("0123456789")


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


def tokenize_13a_joined(line: str) -> list[str]:
    """``core_mt_tokenizers._tokenize_13a`` of ``line``, for a line whose segments are joined by separator
    tokens with a space on both sides (the result is each segment's tokens with the separators between)."""
    return spaced_13a(line).split()


def spaced_13a(line: str) -> str:
    """``line`` with spaces where mteval-v13a puts token boundaries (:func:`tokenize_13a_joined` splits it)."""
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = line.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    for char in _PADDED:
        if char in line:
            line = line.replace(char, f" {char} ")
    line = _isolate_marks(f" {line} ")
    if "-" in line:
        line = _DASH_AFTER_DIGIT.sub(" - ", line)
    return line


def chunk_tokens(
    sources: Sequence[str], predictions: Sequence[str], references: Sequence[Sequence[str]], *, lowercase: bool,
    tokenizer: str, whitespace: bool, tokenize: Callable[[str], list[str]],
) -> tuple[list[str], str] | None:
    """The tokens of a chunk of examples in one list, every text preceded by a separator token ``T``: ``[T,
    source tokens..., T, prediction tokens..., T, reference tokens..., T, next source tokens...]``, and ``T``
    (None when the texts hold every separator candidate).

    ``tokenizer`` is ``"13a"``, ``"intl"`` or ``"none"``; with ``"none"``, ``whitespace`` splits on whitespace
    instead of single spaces; ``tokenize`` is the one-text tokenizer, lowercasing included (used for
    ``intl``, whose texts are tokenized one by one). A text with no tokens keeps none (the caller decides what
    an empty text is)."""
    texts = sum(map(len, references)) + 2 * len(sources)
    for separator in _SEPARATORS:
        if tokenizer == "intl":
            if any(separator in text for text in chain(sources, predictions, chain.from_iterable(references))):
                continue
            tokens = []
            for source, prediction, example_references in zip(sources, predictions, references):
                tokens.append(separator)
                tokens += tokenize(source)
                tokens.append(separator)
                tokens += tokenize(prediction)
                for reference in example_references:
                    tokens.append(separator)
                    tokens += tokenize(reference)
            return tokens, separator
        # Every separator has one space on each side (so that splitting on single spaces gives each text's own
        # pieces, empty ones included) and starts its text.
        glue = f" {separator} "
        line = " ".join([f"{separator} " + glue.join((source, prediction, *example_references))
                         for source, prediction, example_references in zip(sources, predictions, references)])
        if line.count(separator) != texts:
            continue
        if lowercase:
            line = line.lower()
        if tokenizer == "13a":
            line = spaced_13a(line)
        return (line.split() if whitespace or tokenizer == "13a" else line.split(" ")), separator
    return None
