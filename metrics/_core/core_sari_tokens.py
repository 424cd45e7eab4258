"""SARI's tokenization of many texts in one pass: the texts of a chunk of examples joined into one string with
a separator token before each text, lowercased and tokenized at once, then split into one list of tokens.

sacreBLEU's 13a tokenizer pads each segment with a space on both sides before its rules look at neighbouring
characters, and its other steps (``<skipped>``, ``-\\n``, entity replacements, lowercasing) never reach across
a space. So the tokens of ``" T ".join(texts)`` (``T`` a character absent from every text, untouched by every
rule, not whitespace) are the tokens of each text with a ``T`` token between them: one call instead of one
per text (``core_mt_tokenizers.spaced_13a``). The ``intl`` tokenizer does not pad segments (a mark
at a segment's end has no right neighbour), so its texts are tokenized one by one. ``none`` splits on single
spaces (``paper``, ``evaluate``) or on whitespace (``easse``); every separator has one space on each side, so
splitting on single spaces gives each text's own pieces, empty ones included.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain

from .core_mt_tokenizers import spaced_13a

# Separator candidates: not whitespace for str.split, not changed by str.lower, in no tokenizer rule; the first
# one that no text of a chunk holds is used.
_SEPARATORS = ("\x01", "\x02", "\x03", "\x04", "\x05", "\x06", "\x07", "\x08", "\x0e", "\x0f", "\x10", "\x11",
               "\x12", "\x13", "\x14", "\x15", "\x16", "\x17", "\x18", "\x19", "\x1a", "\x1b", "\x7f",
               "\ue000", "\ue001", "\ue002", "\ue003", "\ue004", "\ue005", "\ue006", "\ue007")


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
