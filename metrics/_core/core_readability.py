"""Readability: the Flesch-Kincaid grade level and Flesch reading ease, per text and for a corpus, from counts.

The statistics of one text are three integers, ``sentences``, ``words`` and ``syllables``; a corpus is
scored from their sums, so shards merge exactly (the scores are *not* means of per-text scores: a corpus
is one long text)::

    flesch_kincaid_grade = (0.39 * (words / sentences)) + (11.8 * (syllables / words)) - 15.59
    flesch_reading_ease  = 206.835 - 1.015 * (words / sentences) - 84.6 * (syllables / words)

(Kincaid et al. 1975; Flesch 1948), evaluated in that order, as textstat does, and never rounded.

Default counting (``textstat_compatible=False``), with Flesch's and Kincaid's definitions in mind:

- a **word** is a whitespace-separated token holding at least one letter or digit of any script, so
  hyphenated words, contractions, numbers and abbreviations are one word each (``co-op``, ``don't``,
  ``1,000``, ``U.S.``), and a token of punctuation or symbols only (``--``, ``...``, an emoji) is none;
- a **sentence** is a piece of the text holding a word, pieces being cut by the project's rule-based splitter
  (``core_sentence_split.split_sentences``): at each newline (``newlines_end_sentences=True``; with False
  newlines are spaces, for hard-wrapped prose), and after ``. ! ? …`` followed by whitespace unless the full
  stop ends a known abbreviation, an initial or a word with an inner full stop (``Dr.``, ``J.``, ``U.S.``);
- **syllables** are counted by rule (``core_readability_syllables.english_syllables``), at least 1 a word.

So a text has sentences exactly when it has words. A text without words (empty, spaces, punctuation only)
has the counts (0, 0, 0): its own scores are undefined and are ``None`` (not 0.0, not NaN), and it changes
no corpus score (it adds nothing to the sums); a corpus without any word is an error.

``textstat_compatible=True`` counts as textstat 0.7.13 does (``core_readability_textstat``: its word
filter, its sentence regex, NLTK's cmudict then pyphen for syllables), so each text's scores equal
``textstat.flesch_kincaid_grade(text)`` and ``textstat.flesch_reading_ease(text)`` bit for bit, including
textstat's 0.0 for a text without words or syllables. It needs NLTK's cmudict corpus and pyphen installed.
The corpus score is the same formula on the summed counts (with textstat's 0.0 when no syllable was counted).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .core_checks import check_text_list
from .core_options import MetricOptions, boolean, option
from .core_readability_syllables import RULES_VERSION, WordMemo, clear_syllable_memos, syllables_by_rule
from .core_readability_textstat import pyphen_version, textstat_sentences, textstat_syllable_counter, textstat_word
from .core_sentence_split import split_sentences
from .core_stats import StatField, StatsSchema

METRIC = "readability"
FIELDS = ("sentences", "words", "syllables")
SCORES = ("flesch_kincaid_grade", "flesch_reading_ease")
"""The per-text score keys; the corpus result adds ``words_per_sentence`` and ``syllables_per_word``."""

_WORD_CHARACTER = re.compile(r"[^\W_]")  # a letter or a digit, of any script
# Where core_sentence_split may cut inside a line (a superset): after . ! ? ... (and closing quotes or brackets) followed
# by a space other than a newline, and at the CJK full stops. A text with none of them is split at its newlines only.
_MAY_CUT = re.compile("[.!?\u2026\u3002\uff01\uff1f](?:(?<=[\u3002\uff01\uff1f])|[\"'\u201d\u2019)\\]]*[^\\S\\n])")
_LINE_WITH_WORD = re.compile(r"([^\W_])[^\n]*")  # a line's first letter or digit (the group found), to its end
# A token's counts packed into one integer, WORD * words + syllables, so that a text's counts are one sum
# (a text's syllables stay below WORD: a token counts at most 3 syllables a character).
WORD = 1 << 40
_MEMO_LIMIT = 1 << 18  # distinct tokens whose packed counts are kept
Row = tuple[int, int, int]
_NO_WORDS: Row = (0, 0, 0)


@dataclass(frozen=True)
class ReadabilityOptions(MetricOptions):
    """How texts are counted (both options change the per-text statistics)."""

    metric_name = METRIC

    textstat_compatible: bool = option(False, boolean, stats=True)
    newlines_end_sentences: bool = option(True, boolean, stats=True)

    def validate(self, metric: str) -> None:
        if self.textstat_compatible and not self.newlines_end_sentences:
            raise ValueError(
                f"{metric}: newlines_end_sentences=False has no effect with textstat_compatible=True (textstat's "
                f"sentence rule reads newlines as spaces already); leave newlines_end_sentences at its default"
            )

    def stats_signature(self) -> str:
        if self.textstat_compatible:
            return f"{self.metric_name}|textstat_compatible:True|textstat:0.7.13|cmudict:nltk|pyphen:{pyphen_version()}"
        return (f"{self.metric_name}|textstat_compatible:False|newlines_end_sentences:{self.newlines_end_sentences}"
                f"|syllables:{RULES_VERSION}")


def readability_schema(metric_name: str = METRIC, options: ReadabilityOptions | None = None) -> StatsSchema:
    """``sentences``, ``words``, ``syllables``: integer counts of a text, summed over a corpus (the same fields
    for both ways of counting; the signature tells them apart)."""
    return StatsSchema(metric_name, tuple(StatField(name) for name in FIELDS))


def _check_options(options: Any) -> ReadabilityOptions:
    if not isinstance(options, ReadabilityOptions):
        raise TypeError(f"{METRIC}: `options` must be ReadabilityOptions, got {type(options).__name__}")
    return options


def readability_words(text: str) -> list[str]:
    """The default words of ``text``: whitespace-separated tokens holding a letter or a digit."""
    return [token for token in text.split() if _WORD_CHARACTER.search(token)]


def readability_sentences(text: str, newlines_end_sentences: bool = True) -> int:
    """The default sentence count: pieces of the project's splitter that hold a letter or a digit."""
    return _default_sentence_counter(newlines_end_sentences)(text)


def _default_token(token: str) -> int:
    """A token's packed counts by default: a word and its syllables when it holds a letter or a digit, else 0."""
    return WORD + syllables_by_rule(token) if token.isalpha() or _WORD_CHARACTER.search(token) else 0


# The default packed counts of the tokens seen (they depend on the token alone), kept for the process.
_DEFAULT_TOKENS = WordMemo(_default_token, _MEMO_LIMIT)


def clear_readability_memos() -> None:
    """Forget the default counts of the tokens, words and runs of letters seen so far."""
    _DEFAULT_TOKENS.clear()
    clear_syllable_memos()


def _textstat_token(syllables_of: Callable[[str], int]) -> Callable[[str], int]:
    """A token's packed counts as textstat counts them: its word (if any) and that word's syllables, lowercased."""
    def packed(token: str) -> int:
        word = textstat_word(token)
        return WORD + syllables_of(word.lower()) if word else 0

    return packed


def _default_sentence_counter(newlines_end_sentences: bool) -> Callable[[str], int]:
    """The default sentence count of a text (:func:`readability_sentences`), ``newlines_end_sentences`` bound."""
    may_cut, lines_with_word = _MAY_CUT.search, _LINE_WITH_WORD.findall

    def sentences(text: str) -> int:
        if not newlines_end_sentences:
            text = text.replace("\n", " ")
        if may_cut(text) is None:  # the splitter's pieces are the text's lines
            return len(lines_with_word(text))
        # the splitter cuts each line apart: only the lines where it may cut inside need it
        return sum(len(lines_with_word(line)) if may_cut(line) is None else
                   sum(1 for piece in split_sentences(line) if _WORD_CHARACTER.search(piece))
                   for line in text.split("\n"))

    return sentences


def _rows_counter(options: ReadabilityOptions) -> Callable[[Sequence[str]], list[Row]]:
    """The counts of each text under ``options`` (loads textstat's dictionaries once for textstat_compatible)."""
    if options.textstat_compatible:
        memo = WordMemo(_textstat_token(textstat_syllable_counter()), _MEMO_LIMIT)
        sentences_of: Callable[[str], int] = textstat_sentences
    else:
        memo = _DEFAULT_TOKENS
        sentences_of = _default_sentence_counter(options.newlines_end_sentences)
    packed_of = memo.__getitem__

    def rows(texts: Sequence[str]) -> list[Row]:
        # textstat counts 1 sentence in any non-empty text; without words we count 0 (its scores are 0.0 anyway),
        # so that summed counts hold no sentence without words
        return [(sentences_of(text), *divmod(packed, WORD)) if packed else _NO_WORDS  # type: ignore[misc]
                for text, packed in zip(texts, [sum(map(packed_of, text.split())) for text in texts])]

    return rows


def readability_counts(text: str, options: ReadabilityOptions) -> Row:
    """(sentences, words, syllables) of one text (``text`` is not checked: see :func:`readability_rows`)."""
    return _rows_counter(_check_options(options))((text,))[0]


def readability_rows(texts: Sequence[str], options: ReadabilityOptions, *, validate: bool = True) -> list[Row]:
    """One row (sentences, words, syllables) per text; ``texts`` is a list of strings (it may be empty). With
    ``validate`` (the default) the texts are checked first (skip only for texts the ``TEXTS`` input kind checked).
    A text is split at whitespace once; each distinct token's word and syllable counts are found once (by default
    once a process: :func:`clear_readability_memos` forgets them; with ``textstat_compatible``, once a call)."""
    options = _check_options(options)
    if validate:
        texts = check_text_list(METRIC, "texts", texts, allow_empty=True)
    return _rows_counter(options)(texts)


def flesch_kincaid_grade(sentences: int, words: int, syllables: int) -> float:
    """``(0.39 * (words / sentences)) + (11.8 * (syllables / words)) - 15.59`` (``words`` and ``sentences`` > 0)."""
    return (0.39 * (words / sentences)) + (11.8 * (syllables / words)) - 15.59


def flesch_reading_ease(sentences: int, words: int, syllables: int) -> float:
    """``206.835 - 1.015 * (words / sentences) - 84.6 * (syllables / words)`` (``words`` and ``sentences`` > 0)."""
    return 206.835 - 1.015 * (words / sentences) - 84.6 * (syllables / words)


def _count(metric: str, where: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            import numpy

            if isinstance(value, numpy.integer):
                value = int(value)
        except ImportError:
            pass
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{metric}: {where} `{name}` must be a non-negative integer, got {type(value).__name__} "
                        f"({value!r:.60})")
    if value < 0:
        raise ValueError(f"{metric}: {where} `{name}` must be a non-negative integer, got {value}")
    return value


def _checked_counts(metric: str, where: str, sentences: Any, words: Any, syllables: Any) -> Row:
    counts = tuple(_count(metric, where, name, value) for name, value in zip(FIELDS, (sentences, words, syllables)))
    sentences, words, _ = counts
    if words and not sentences:
        raise ValueError(f"{metric}: {where} has {words} words but no sentence; these are not readability "
                         f"statistics (every text with words has at least one sentence)")
    return counts  # type: ignore[return-value]


def _checked_row(row: Any) -> Row:
    """``row`` checked as (sentences, words, syllables) (a tuple of three ``int`` counts, as rows are made, at once)."""
    if type(row) is tuple and len(row) == len(FIELDS):
        sentences, words, syllables = row
        if type(sentences) is int and type(words) is int and type(syllables) is int and min(row) >= 0 and (
                sentences or not words):
            return row
    if isinstance(row, (str, bytes)) or not isinstance(row, Sequence) or len(row) != len(FIELDS):
        raise TypeError(f"{METRIC}: a row must be (sentences, words, syllables), got {row!r:.80}")
    return _checked_counts(METRIC, "the row", *row)


def _scores(row: Row, textstat_compatible: bool) -> dict[str, float | None]:
    sentences, words, syllables = row
    if textstat_compatible and (not words or not syllables):
        return dict.fromkeys(SCORES, 0.0)  # textstat's guard
    if not words:
        return dict.fromkeys(SCORES, None)
    return {"flesch_kincaid_grade": flesch_kincaid_grade(sentences, words, syllables),
            "flesch_reading_ease": flesch_reading_ease(sentences, words, syllables)}


def readability_text_scores(row: Sequence[int], options: ReadabilityOptions) -> dict[str, float | None]:
    """One text's ``flesch_kincaid_grade`` and ``flesch_reading_ease`` from its row.

    A text without words scores ``None`` for both (the formulas divide by the word count); with
    ``textstat_compatible=True`` it scores textstat's ``0.0``, as does a text whose syllables count 0.
    """
    return _scores(_checked_row(row), _check_options(options).textstat_compatible)


def readability_example_scores(rows: Iterable[Sequence[int]],
                               options: ReadabilityOptions) -> list[dict[str, float | None]]:
    """:func:`readability_text_scores` of each row."""
    textstat_compatible = _check_options(options).textstat_compatible
    return [_scores(_checked_row(row), textstat_compatible) for row in rows]


def readability_from_totals(totals: Mapping[str, Any], options: ReadabilityOptions) -> dict[str, float]:
    """The corpus's ``flesch_kincaid_grade``, ``flesch_reading_ease``, ``words_per_sentence`` and
    ``syllables_per_word`` from summed counts; a corpus without words is an error (``ValueError``)."""
    options = _check_options(options)
    if not isinstance(totals, Mapping):
        raise TypeError(f"{METRIC}: `totals` must be a mapping of {list(FIELDS)} to counts, got "
                        f"{type(totals).__name__}")
    missing = [name for name in FIELDS if name not in totals]
    if missing:
        raise ValueError(f"{METRIC}: `totals` lacks {missing}; expected the fields {list(FIELDS)}")
    row = _checked_counts(METRIC, "`totals`", *(totals[name] for name in FIELDS))
    sentences, words, syllables = row
    if not words:
        raise ValueError(
            f"{METRIC}: no text holds a word ({sentences} sentences, 0 words), so the Flesch-Kincaid grade and "
            f"the Flesch reading ease are undefined (they divide by the number of words)"
        )
    result: dict[str, float] = _scores(row, options.textstat_compatible)  # type: ignore[assignment]
    result["words_per_sentence"] = words / sentences
    result["syllables_per_word"] = syllables / words
    return result
