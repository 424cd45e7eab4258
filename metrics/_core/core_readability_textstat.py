"""textstat 0.7.13's sentence, word and syllable counts, reproduced exactly (for ``textstat_compatible=True``).

What textstat 0.7.13 does for ``flesch_kincaid_grade(text)`` and ``flesch_reading_ease(text)`` (language
``en_US``, its default), file by file under ``textstat/backend/``:

- **words** (``selections/_list_words.py``, ``transformations/_remove_punctuation.py``,
  ``utils/constants.py``): every ASCII apostrophe not followed by ``t``, ``s``, ``d``, ``ve``, ``ll`` or ``re``
  is deleted (``re.sub(r"\\'(?![tsd]|ve|ll|re)", "", text)``), then every character that is neither a word
  character (``\\w``: Unicode letters, digits and ``_``), whitespace nor an apostrophe is deleted
  (``[^\\w\\s\\']``), and the text is split at whitespace (``str.split()``). So hyphens and full stops join
  their neighbours (``co-op`` -> ``coop``, ``3.14`` -> ``314``, ``U.S.`` -> ``US``), contractions stay one word
  (``don't``), PTB's ``-lrb-`` is the word ``lrb``, ``_`` alone is a word, and a token of punctuation or emoji
  only is none.
- **sentences** (``counts/_count_sentences.py``): 0 for the empty string; otherwise the matches of
  ``re.findall(r"\\b[^.!?]+[.!?]*", text)`` (a word boundary, a run without ``. ! ?``, the ``. ! ?`` after it),
  less those holding at most 2 words (as counted above), and at least 1. Every full stop ends a "sentence"
  (``U.S.``, ``3.14``, ``e.g.``), newlines do not, and short ones are dropped.
- **syllables** (``counts/_count_syllables.py``, ``utils/_get_cmudict.py``, ``utils/_get_pyphen.py``): the
  words as above, lowercased; a word in NLTK's CMU Pronouncing Dictionary (``nltk.corpus.cmudict.dict()``,
  cmudict 0.7a) counts the stress digits of its *first* pronunciation (``shh`` counts 0); any other word
  counts its pyphen ``en_US`` hyphenation points + 1 (``len(Pyphen(lang="en_US").positions(word)) + 1``).
- **formulas** (``metrics/_flesch_kincaid_grade.py``, ``metrics/_flesch_reading_ease.py``,
  ``metrics/_words_per_sentence.py``, ``metrics/_syllables_per_word.py``, ``utils/constants.py``):
  ``(0.39 * (words / sentences)) + (11.8 * (syllables / words)) - 15.59`` and
  ``206.835 - 1.015 * (words / sentences) - 84.6 * (syllables / words)``, but ``0.0`` when the text has no
  words or its syllables are 0.
- **rounding** (``textstat.py``, ``_legacy_round``): none by default since 0.7.6; ``set_rounding_points(n)``
  makes every result ``round(x, n)``. (Up to 0.7.5 results were rounded by default, Flesch reading ease to 2
  decimals and the grade to 1, halves away from zero.)

textstat finds cmudict with ``nltk.data.find("corpora/cmudict")`` and *downloads it* when it is missing; this
module never downloads: it reads the corpus where NLTK finds it and says how to install it otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .core_process import process_state

_NONCONTRACTION_APOSTROPHE = re.compile(r"\'(?![tsd]|ve|ll|re)")
_PUNCTUATION = re.compile(r"[^\w\s\']")
_SENTENCE = re.compile(r"\b[^.!?]+[.!?]*")
# textstat keeps a word of exactly the whitespace-separated tokens that hold a word character (it deletes all but
# word characters and apostrophes, and keeps only apostrophes before a letter). A text starting with three such tokens
# (possessive throughout: one pass, no backtracking):
_NO_WORD_TOKENS = r"\s*+(?:[^\w\s]++\s++)*+"
_WORD_TOKEN = r"[^\w\s]*+\w\S*+"
_THREE_WORDS = re.compile(rf"{_NO_WORD_TOKENS}{_WORD_TOKEN}{_NO_WORD_TOKENS}{_WORD_TOKEN}{_NO_WORD_TOKENS}[^\w\s]*+\w")

CMUDICT_HELP = (
    "textstat_compatible=True counts syllables as textstat 0.7.13 does, with NLTK's CMU Pronouncing Dictionary "
    "corpus (cmudict 0.7a, which textstat downloads on first use) and pyphen; install the corpus once with "
    "`python -m nltk.downloader cmudict` (or unzip NLTK's cmudict.zip into <a folder on NLTK_DATA>/corpora/); "
    "it is never downloaded at compute time"
)
PYPHEN_HELP = "textstat_compatible=True needs pyphen (textstat's hyphenation fallback): pip install pyphen"


class _CmudictNotFoundError(ValueError, LookupError):
    """NLTK's cmudict corpus (or pyphen) is not installed; the message says how to install it."""


# One class for every vendored copy of this module (the loaded dictionary is shared by all copies).
CmudictNotFoundError: type[_CmudictNotFoundError] = process_state(
    __file__, "CmudictNotFoundError", lambda: _CmudictNotFoundError)
_CmudictNotFoundError.__name__ = _CmudictNotFoundError.__qualname__ = "CmudictNotFoundError"


def textstat_words(text: str) -> list[str]:
    """textstat's ``list_words(text)`` with its defaults: the words that its counts and formulas use."""
    return _PUNCTUATION.sub("", _NONCONTRACTION_APOSTROPHE.sub("", text)).split()


def textstat_word(token: str) -> str:
    """textstat's word of one whitespace-separated token of a text, ``""`` where it keeps none.

    Its filter only deletes characters, never a space, and an apostrophe's look-ahead sees letters of its own token
    or a space, so ``textstat_words(text)`` is the non-empty ``textstat_word(token)`` of ``text.split()``."""
    return _PUNCTUATION.sub("", _NONCONTRACTION_APOSTROPHE.sub("", token))


def textstat_sentences(text: str) -> int:
    """textstat's ``count_sentences(text)``."""
    if not text:
        return 0
    pieces = _SENTENCE.findall(text)
    if len(pieces) < 2:
        return 1
    return max(1, sum(map(bool, map(_THREE_WORDS.match, pieces))))  # pieces of at most 2 words are ignored


def _import_pyphen() -> Any:
    try:
        import pyphen
    except ImportError:
        raise CmudictNotFoundError(f"readability: {PYPHEN_HELP}") from None
    return pyphen


def pyphen_version() -> str:
    """The installed pyphen's version (its ``en_US`` dictionary decides the counts of words cmudict lacks)."""
    return str(getattr(_import_pyphen(), "__version__", "unknown"))


def nltk_cmudict_found() -> bool:
    """Whether NLTK's cmudict corpus is on NLTK's data path, as a folder or as the zip left unextracted (where NLTK's
    corpus loader also looks); nothing is downloaded. NLTK must be installed."""
    import nltk

    for resource in ("corpora/cmudict", "corpora/cmudict.zip/cmudict/"):
        try:
            nltk.data.find(resource)
            return True
        except LookupError:
            continue
    return False


def _load_cmudict_syllables() -> dict[str, int]:
    """{word: stress digits of its first pronunciation} from NLTK's cmudict corpus, never downloading it."""
    try:
        import nltk
    except ImportError:
        raise CmudictNotFoundError(f"readability: nltk is not installed (pip install nltk); {CMUDICT_HELP}") from None
    if not nltk_cmudict_found():
        raise CmudictNotFoundError(
            f"readability: NLTK's cmudict corpus was not found (NLTK looked in {list(nltk.data.path)}); {CMUDICT_HELP}"
        )
    from nltk.corpus import cmudict

    # The entries behind nltk.corpus.cmudict.dict() (textstat's call), in file order: a word's first
    # pronunciation is its first entry.
    syllables: dict[str, int] = {}
    for word, phones in cmudict.entries():
        if word not in syllables:
            syllables[word] = sum(1 for phone in phones if phone[-1].isdigit())
    return syllables


def _load_pyphen() -> Any:
    return _import_pyphen().Pyphen(lang="en_US")


def textstat_syllable_counter() -> Callable[[str], int]:
    """textstat's syllables of one lowercased word: cmudict's first pronunciation, else pyphen points + 1.

    Loads NLTK's cmudict (once per process) and pyphen's ``en_US`` dictionary; raises
    :class:`CmudictNotFoundError` saying what to install when either is missing.
    """
    cmudict = process_state(__file__, "cmudict_syllables", _load_cmudict_syllables)
    hyphenator = process_state(__file__, "pyphen_en_US", _load_pyphen)
    memo = process_state(__file__, "pyphen_memo", dict)

    def syllables(word: str) -> int:
        count = cmudict.get(word)
        if count is not None:
            return count
        count = memo.get(word)
        if count is None:
            count = len(hyphenator.positions(word)) + 1
            if len(memo) < 1 << 18:
                memo[word] = count
        return count

    return syllables
