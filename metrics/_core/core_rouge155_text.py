"""Text handling of ROUGE-1.5.5 as pyrouge feeds it: sentences, length limits, tokens, stopwords and ``-m`` stems.

What happens to a summary, step by step, when pyrouge 0.1.x runs ROUGE-1.5.5.pl on it:

1. pyrouge splits the text at ``"\\n"`` and writes each piece as one SEE anchor, UTF-8 encoded and not
   escaped. The script reads a sentence as the characters after the anchor up to the first ``<``: so a
   sentence is cut at its first ``<``, and one that is empty (or starts with ``<``) is not a sentence at all.
2. The script works on bytes: only ``A-Z`` are lowercased; ``-`` becomes `` - ``; every byte other than
   ``A-Za-z0-9-`` becomes a space, so each non-ASCII character separates words and never survives.
   A token is then a maximal run of ``[a-z0-9]`` (the lone ``-`` tokens are dropped because a kept token must
   start with ``[a-z0-9$]``).
3. Length limits (``-l`` words, ``-b`` bytes) cut the summary sentence by sentence *before* step 2. Words
   are counted with Perl's ``split(/\\s+/)`` on the raw sentence (ASCII whitespace only; a leading space
   yields an empty first field that counts as a word); bytes are UTF-8 bytes. The n-gram measures read the
   summary through ``readText``; ROUGE-L and ROUGE-W read it per sentence through ``readText_LCS``, whose
   byte limit never adds up the bytes already taken (every sentence shorter than the limit is kept, up to
   the first that is not, which is cut to the limit). Both are reproduced as written.
4. With ``-s`` tokens found in SMART's list are removed; with ``-m`` tokens longer than 3 characters become
   their WordNet 2.0 exception base form if they have one, else their ROUGE-1.5.5 Porter stem.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from .core_process import MIB, bounded_cache
from .core_rouge155_data import exception_table, smart_stopwords
from .core_rouge155_porter import porter_stem

_WORD = re.compile(r"[A-Za-z0-9]+")
_LOWER_WORD = re.compile(r"[a-z0-9]+")
_PERL_WHITESPACE = re.compile(r"[ \t\n\r\f\v]+")


def see_sentences(text: str) -> list[str]:
    """The sentences ROUGE-1.5.5 reads from pyrouge's SEE file of ``text`` (steps 1 above)."""
    sentences = []
    for piece in text.split("\n"):
        cut = piece.find("<")
        if cut >= 0:
            piece = piece[:cut]
        if piece:
            sentences.append(piece)
    return sentences


def perl_words(sentence: str) -> list[str]:
    """Perl's ``split(/\\s+/, $sentence)``: ASCII whitespace, a leading empty field kept, trailing ones dropped."""
    fields = _PERL_WHITESPACE.split(sentence)
    while fields and not fields[-1]:
        fields.pop()
    return fields


def as_bytes_text(sentence: str) -> str:
    """The sentence's UTF-8 bytes, one character per byte (what Perl's ``length``/``substr`` count)."""
    return sentence.encode("utf-8", "surrogatepass").decode("latin-1")


def word_limited_text(sentences: Sequence[str], limit: int) -> str:
    """``readText`` with ``-l limit``: the first ``limit`` words of the summary, as one text."""
    return _limited_text(((sentence, perl_words(sentence)) for sentence in sentences), limit, " ")


def byte_limited_text(sentences: Sequence[str], limit: int) -> str:
    """``readText`` with ``-b limit``: the first ``limit`` bytes of the summary (separating spaces not counted)."""
    return _limited_text(((sentence, sentence) for sentence in map(as_bytes_text, sentences)), limit, "")


def _limited_text(sentences: Iterable[tuple[str, Sequence[str]]], limit: int, joiner: str) -> str:
    """``readText``'s cut: each (sentence, its units) pair joins the text, space-separated, while the units taken
    stay under ``limit``; of the sentence that reaches it, only the first units (joined by ``joiner``) are kept."""
    text, taken = "", 0
    for sentence, units in sentences:
        if taken + len(units) < limit:
            text += f" {sentence}" if taken else sentence
            taken += len(units)
        else:
            if taken > 0:
                text += " "
            text += joiner.join(units[: limit - taken])
            break
    return text


def word_limited_sentences(sentences: Sequence[str], limit: int) -> list[str]:
    """``readText_LCS`` with ``-l limit``: whole sentences while they fit, then the cut one."""
    kept, taken = [], 0
    for sentence in sentences:
        words = perl_words(sentence)
        if taken + len(words) < limit:
            taken += len(words)
            kept.append(sentence)
        else:
            kept.append(" ".join(words[: limit - taken]))
            break
    return kept


def byte_limited_sentences(sentences: Sequence[str], limit: int) -> list[str]:
    """``readText_LCS`` with ``-b limit``, as written: each sentence is compared with the whole limit."""
    kept = []
    for sentence in map(as_bytes_text, sentences):
        if len(sentence) < limit:
            kept.append(sentence)
        else:
            kept.append(sentence[:limit])
            break
    return kept


def raw_tokens(text: str) -> list[str]:
    """Lowercased ``[a-z0-9]`` runs of a (limited) text: ROUGE-1.5.5's tokens before stopwords and stemming.

    Only ASCII letters are lowercased (``str.lower`` would turn, say, the Kelvin sign into ``k``)."""
    if text.isascii():
        return _LOWER_WORD.findall(text.lower())
    return [word.lower() for word in _WORD.findall(text)]


# Bytes of cached ``-m`` stems (an estimate: the word, its stem and the cache entry).
STEM_CACHE_BYTES = 32 * MIB
_STEMS = bounded_cache(__file__, "rouge155.stems", STEM_CACHE_BYTES, lambda token, stem: 160 + 2 * len(token))


def morph_stem(token: str, exceptions: dict[str, str]) -> str:
    """``MorphStem`` of ROUGE-1.5.5: tokens longer than 3 characters become their WordNet 2.0 exception base
    form if they have one, else their ROUGE-1.5.5 Porter stem."""
    if len(token) <= 3:
        return token
    stem = exceptions.get(token)
    return porter_stem(token) if stem is None else stem


class Rouge155Stemmer:
    """``MorphStem`` of ROUGE-1.5.5, with the release's exception table; stems are cached process-wide (in a
    cache bounded in bytes) unless another table is given."""

    def __init__(self, exceptions: dict[str, str] | None = None) -> None:
        self.cached = exceptions is None
        self.exceptions = exception_table() if exceptions is None else exceptions

    def __call__(self, token: str) -> str:
        if self.cached:
            return _STEMS.get(token, lambda: morph_stem(token, self.exceptions))
        return morph_stem(token, self.exceptions)


class TokenIds:
    """Numbers the tokens of a batch of texts as ROUGE-1.5.5 sees them: after stopword removal and stemming.

    ``ids(raw_tokens)`` maps lowercased ``[a-z0-9]`` runs to ids (equal ids for equal final tokens, stopwords
    dropped) with one dictionary look-up per token; ``tokens[id]`` is the final token. A numbering is working
    memory for one batch (its size follows the batch's vocabulary); stems are cached across batches by the
    stemmer.
    """

    def __init__(self, stemmer: Callable[[str], str] | None = None, stopwords: frozenset[str] | None = None) -> None:
        self.stemmer = stemmer
        self.stopwords = stopwords
        self.tokens: list[str] = []
        self._by_token: dict[str, int] = {}
        self._by_raw: dict[str, int] = {}

    def _add(self, raw: str) -> int:
        if self.stopwords is not None and raw in self.stopwords:
            number = -1
        else:
            token = self.stemmer(raw) if self.stemmer is not None else raw
            number = self._by_token.get(token, -1)
            if number < 0:
                number = len(self.tokens)
                self._by_token[token] = number
                self.tokens.append(token)
        self._by_raw[raw] = number
        return number

    def ids(self, raw_tokens: Sequence[str]) -> list[int]:
        by_raw = self._by_raw
        try:
            numbers = [by_raw[raw] for raw in raw_tokens]
        except KeyError:
            numbers = [by_raw[raw] if raw in by_raw else self._add(raw) for raw in raw_tokens]
        if self.stopwords is not None and -1 in numbers:
            return [number for number in numbers if number >= 0]
        return numbers


@dataclass(frozen=True)
class Rouge155Tokenizer:
    """Tokens of ROUGE-1.5.5 for one setting of ``-m``, ``-s``, ``-l`` and ``-b``."""

    use_stemmer: bool = False
    remove_stopwords: bool = False
    length_limit: int | None = None
    byte_limit: int | None = None

    def token_ids(self) -> TokenIds:
        """A fresh numbering of final tokens with this setting's stemming and stopwords (for one batch)."""
        return TokenIds(
            Rouge155Stemmer() if self.use_stemmer else None, smart_stopwords() if self.remove_stopwords else None
        )

    def summary(self, text: str, numbering: TokenIds, sentences: bool) -> tuple[list[int], list[list[int]]]:
        """Token ids the n-gram measures count and, when ``sentences``, per-sentence ids ROUGE-L/W align."""
        pieces = see_sentences(text)
        ids = numbering.ids
        if self.length_limit is None and self.byte_limit is None:
            if not sentences:
                return ids(raw_tokens(" ".join(pieces))), []
            per_sentence = [ids(raw_tokens(piece)) for piece in pieces]
            return [token for sentence in per_sentence for token in sentence], per_sentence
        if self.length_limit is not None:
            tokens = ids(raw_tokens(word_limited_text(pieces, self.length_limit)))
            lcs_pieces = word_limited_sentences(pieces, self.length_limit) if sentences else []
        else:
            tokens = ids(raw_tokens(byte_limited_text(pieces, self.byte_limit)))  # type: ignore[arg-type]
            lcs_pieces = byte_limited_sentences(pieces, self.byte_limit) if sentences else []  # type: ignore[arg-type]
        return tokens, [ids(raw_tokens(piece)) for piece in lcs_pieces]
