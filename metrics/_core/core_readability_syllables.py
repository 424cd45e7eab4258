"""English syllable counts by rule, for the readability formulas' default counting (no dictionary, no download).

:func:`english_syllables` counts the syllables of one word (a whitespace-separated token). The word is
lowercased and its accents are stripped (``ß``, ``æ``, ``œ``, ``ø`` and a few other letters are spelled out in
ASCII; a diaeresis after a vowel and a final ``é`` start a syllable: ``naïve``, ``café``); a final clitic is
dropped (``'s``, ``'ll``, ``'re``, ``'ve``, ``'d``, ``'m``, and ``n't``, which adds a syllable after a
consonant: ``couldn't`` 2, ``don't`` 1, PTB's lone ``n't`` 1), other apostrophes are dropped, and the word is cut
into its runs of the letters a-z (``co-op`` -> ``co`` + ``op``; ``U.S.`` -> ``u`` + ``s``); its count is the
sum of its runs' counts, and at least 1 (a number such as ``1,000``, a word of another script, counts 1).

A run's count is its number of vowel groups (``a e i o u y``; ``y`` is a consonant at the start of a run or
after a vowel when a vowel follows, as in ``yes``, ``player``), corrected by rules written for this module:

- a final silent ``e``, ``es`` or ``ed`` is not a syllable (``make``, ``makes``, ``walked``), except after a
  consonant + ``l``/``r`` (``table``, ``centre``, ``struggled``), ``es`` after a sibilant (``boxes``,
  ``pages``) and ``ed`` after ``t``/``d`` (``wanted``);
- vowel pairs that are two syllables add one (hiatus: ``media``, ``radio``, ``stadium``, ``video``,
  ``actual``, ``being``, ``quiet``, ``science``, ``european``, ``ryan`` ...), but not in ``-tion``, ``-cial``,
  ``-gious`` and after ``l``/``n`` inside a word, where the ``i`` is a glide (``million``, ``italian``);
- ``-ism``, final ``-thm``, word-initial ``mc``, ``-dn't``, ``-ire``, ``-ier``/``-iest`` after most consonants and
  a double consonant + ``ling`` add one (``realism``, ``rhythm``, ``mcilroy``, ``couldn't``, ``fire``,
  ``earlier``, ``struggling``);
- an ``e`` silent inside a word subtracts one: before ``-ly``, ``-ment``, ``-ness``, ``-ful``, ``-less``
  (``lonely``, ``movement``) and after a few common compound heads (``face``, ``home``, ``some``, ``time``
  ...: ``facebook``, ``someone``); so do ``-gue``/``-que`` (``league``, ``unique``) and ``every``+more;
- a run without vowels is read as letters when it has at most 4 (``bbc`` 3, ``tv`` 2, ``w`` 3), else 1;
- a handful of frequent words whose spelling misleads the rules are listed (``business`` 2, ``several`` 2,
  ``wednesday`` 2, ``mr`` 2, ...).

Measured against the CMU Pronouncing Dictionary (the first pronunciation of NLTK's cmudict 0.7a, what
textstat 0.7.13 reads) on the words of the CNN/DailyMail summaries of See et al. (2017) that the dictionary
holds, the rules give the dictionary's count for 99.0% of word occurrences (95.2% of distinct words; mean
difference -0.003 syllables a word), where pyphen's hyphenation points + 1 (textstat's fallback) give 90.2%
(74.0%; mean -0.104: hyphenation dictionaries leave out breaks near a word's ends, ``a-bout``, ``i-de-a``).
On every alphabetic word of cmudict (115,533, unweighted, mostly names) the rules agree on 93.4%, pyphen on
61.6%. ``scripts/compare_textstat.py`` measures it again.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

# Letters that NFKD does not take apart into an ASCII letter plus marks, and the apostrophe's variants.
_SPELLED_OUT = str.maketrans({"ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "đ": "d", "ð": "d", "þ": "th", "ł": "l",
                              "ı": "i", "ŀ": "l", "ĸ": "k", "ŋ": "ng", **dict.fromkeys("\u2019\u02bc\u2018`", "'")})
# A clitic ending a word (PTB's separate n't, 'll, 's too): n't after a consonant is a syllable of its own.
_CLITIC = re.compile(r"(?:(?<=[b-df-hj-np-tv-z])(n't)|n't|'(?:s|ll|re|ve|d|m|t))$")
_RUN = re.compile(r"[a-z]+")
_OWN_SYLLABLE = re.compile("(?<=[aeiouy])([aeiouy]\u0308)|(e\u0301)(?=s?(?:[^a-z\u0300-\u036f]|$))")
_VOWELS = frozenset("aeiouy")
# y is a consonant at the start of a run or after a vowel, when a vowel follows (yes, player, royal).
_Y_CONSONANT = re.compile(r"(?:^|(?<=[aeiou]))y(?=[aeiou])")
_VOWEL_GROUP = re.compile(r"[aeiouy]+")

# Final silent e / es / ed (checked on the run with consonant y's replaced by "_"), and their exceptions.
_SILENT_E = re.compile(r"[^aeiouy]e$")
_SYLLABIC_E = re.compile(r"[^aeiouylr][lr]e$")  # table, centre
_SILENT_ES = re.compile(r"[^aeiouy]es$")
_SYLLABIC_ES = re.compile(r"(?:[csxz]|[cs]h|g|[^aeiouylr][lr])es$")  # places, boxes, wishes, pages, tables
_SILENT_ED = re.compile(r"[^aeiouytd]ed$")
_SYLLABIC_ED = re.compile(r"[^aeiouylr][lr]ed$")  # struggled

# Each pattern found adds one syllable; each is written after a substring that it needs (a cheap test first). Each needs
# one of the vowel pairs of _MAY_ADD, or starts a run with mc, or ends it as _MAY_ADD says: a run with none of these
# needs no search.
_ADD = tuple((needed, re.compile(pattern)) for needed, pattern in (
    ("ia", r"(?:(?:^|[^ctsxglnh])ia|^[ln]ia)(?!ge)"),  # media, trial, india, via (not social, asia, italian, marriage)
    ("giant", r"giant"),
    ("iat", r"[ct]iat"),  # association, negotiate
    ("io", r"(?:(?:^|[^ctsxglnh])io|^[ln]io)(?!u)"),  # radio, period, champion, lion (not nation, million, fashion)
    ("iu", r"(?<!g)iu"),  # stadium, medium (not belgium)
    ("ii", r"ii"),  # hawaii
    ("eo", r"(?<![cgqp])eo(?!p)"),  # video, theory, leon (not people, george, leopard)
    ("ua", r"[^gq]ua"),  # actual, usual (not guard, quality)
    ("uo", r"[^gq]uo"),  # duo, fluorescent
    ("ue", r"[^gq]ue[lnt]"),  # cruel, fuel, influence, fluent
    ("ing", r"[aeiouy]ing(?:s|ly)?$"),  # being, going, trying
    ("ism", r"ism$"),  # realism
    ("mc", r"^mc"),  # mcilroy
    ("dn", r"dn'?t$"),  # couldnt
    ("iou", r"(?:^|[^ctsxg])iou(?!r)"),  # serious, various (not delicious, religious, behaviour)
    ("eou", r"[^g]eou"),  # spontaneous (not gorgeous)
    ("uou", r"uou"),  # continuous
    ("ire", r"(?<!sh)ire[ds]?$"),  # fire, tired, desire (cmudict's two syllables; not -shire)
    ("our", r"^h?ours?$"),  # our, hour
    ("iet", r"iet"),  # quiet, society, diet
    ("creat", r"^creat"),  # create, creation
    ("reac", r"^reac[tq]"),  # react, reaction
    ("ea", r"[rd]eas?$"),  # area, idea, korea
    ("ier", r"[^aeioumdh]ier(?:s)?$"),  # earlier, easier, carrier (not premier, soldier)
    ("iest", r"[^aeioumdh]iest$"),  # earliest
    ("thm", r"thms?$"),  # rhythm, algorithm
    ("eal", r"eal(?:ity|ism|ist)"),  # reality
    ("scien", r"(?<!con)scien"),  # science, scientist
    ("ien", r"[^ct]ien[ct]"),  # client, experience, audience (not patient, ancient)
    ("coa", r"^coa[dglx]"),  # coalition, coax
    ("eum", r"[^aeiou]eum"),  # museum
    ("ean", r"[aeiouy][^aeiouy]*[^aeiouyc]eans?$"),  # european, korean (not ocean, mean, clean)
    ("ling", r"(?P<double>[bdgptz])(?P=double)ling$"),  # struggling, battling, settling
    ("y", r"^[^aeiouy]+y[aeou]"),  # ryan, lyon
    ("yone", r"yone"),  # anyone, everyone
))
# Compound heads whose final e is silent before a consonant (facebook, homework, lifestyle, safety).
_HEADS = ("face", "base", "life", "space", "come", "home", "side", "time", "safe", "care", "lone", "whole", "stone",
          "wide", "fire", "state", "place", "game", "line")
# Each pattern found removes one syllable (never the last).
_SUBTRACT = tuple(re.compile(pattern) for pattern in (
    (r"[^aeiou]e(?:ly|ment|ness|ful|less)s?$"  # lonely, movement, careful
     rf"|^(?:{'|'.join(_HEADS)})(?=(?:[bcfghjklmpqtvwxz]|[sndr][^aeiouy])[a-z])"),
    r"[aeioun]gues?$",  # league, vague, tongue (not argue)
    r"ques?$",  # unique, technique
    r"^some(?!r)",  # someone, something
    r"^every.",  # everything (every alone is 3)
))
# A necessary condition of each _ADD pattern (one search, most runs fail it), and of each _SUBTRACT pattern (its ends).
_MAY_ADD = re.compile(r"[iy][aeiou]|[aeou]i|e[aou]|u[aeo]|oa|^mc|(?:ism|dnt|ire[ds]?|thms?|ling|^h?ours?)$")
_SUBTRACT_ENDS = (*(f"e{suffix}{plural}" for suffix in ("ly", "ment", "ness", "ful", "less") for plural in ("", "s")),
                  "gue", "gues", "que", "ques")
_SUBTRACT_STARTS = (*_HEADS, "some", "every")
_SILENT_ENDS = ("e", "es", "ed")
# Whether any pattern of _SUBTRACT is found at all (most runs match none: one search instead of one a pattern).
_ANY_SUBTRACT = re.compile("|".join(f"(?:{pattern.pattern})" for pattern in _SUBTRACT))
# Frequent words the rules get wrong (cmudict's first pronunciation).
_LISTED = {
    "mr": 2, "mrs": 2, "ms": 1, "dr": 2, "st": 1, "wednesday": 2, "business": 2, "businesses": 3, "several": 2,
    "interest": 2, "interests": 2, "interested": 3, "interesting": 3, "evening": 2, "evenings": 2,
    "chocolate": 2, "desperate": 2, "temperature": 3, "temperatures": 3,
}

MEMO_WORD_LENGTH = 64
RULES_VERSION = "rules-1"
"""Names this counter in statistics signatures; change it with any change of a count."""


def _letters_syllables(run: str) -> int:
    """Syllables of a run without vowels, read as letters (``bbc`` 3, ``w`` 3) when it has at most 4."""
    if len(run) > 4:
        return 1
    return sum(3 if letter == "w" else 1 for letter in run)


class WordMemo(dict):
    """``count(word)`` of each word looked up, computed once; the first ``limit`` distinct words of at most
    ``MEMO_WORD_LENGTH`` characters are kept (so that a memo kept for the process stays small)."""

    def __init__(self, count: Callable[[str], int], limit: int) -> None:
        super().__init__()
        self.count = count
        self.limit = limit

    def __missing__(self, word: str) -> int:
        value = self.count(word)
        if len(self) < self.limit and len(word) <= MEMO_WORD_LENGTH:
            self[word] = value
        return value


def _count_run(run: str) -> int:
    """:func:`run_syllables` without the memo."""
    listed = _LISTED.get(run)
    if listed is not None:
        return listed
    if _VOWELS.isdisjoint(run):
        return _letters_syllables(run)
    marked = _Y_CONSONANT.sub("_", run) if "y" in run else run
    count = len(_VOWEL_GROUP.findall(marked))
    if count > 1 and marked.endswith(_SILENT_ENDS):
        if _SILENT_E.search(marked):
            if not _SYLLABIC_E.search(marked):
                count -= 1
        elif _SILENT_ES.search(marked):
            if not _SYLLABIC_ES.search(marked):
                count -= 1
        elif _SILENT_ED.search(marked) and not _SYLLABIC_ED.search(marked):
            count -= 1
    if _MAY_ADD.search(marked):
        count += sum(1 for needed, pattern in _ADD if needed in marked and pattern.search(marked))
    if count > 1 and (marked.endswith(_SUBTRACT_ENDS) or marked.startswith(_SUBTRACT_STARTS)) and (
            _ANY_SUBTRACT.search(marked)):
        for pattern in _SUBTRACT:
            if count > 1 and pattern.search(marked):
                count -= 1
    return max(1, count)


def ascii_letters(word: str) -> str:
    """``word`` lowercased, accents stripped, a few letters spelled out in ASCII (apostrophes are kept, their variants
    ``’ ʼ ‘ ``` written ``'``)."""
    lowered = word.lower()
    if lowered.isascii():  # of the letters spelled out, only ` is ASCII
        return lowered.replace("`", "'")
    lowered = lowered.translate(_SPELLED_OUT)
    if lowered.isascii():
        return lowered
    decomposed = unicodedata.normalize("NFKD", lowered)
    # A diaeresis on a vowel after a vowel, and a final acute e, start a syllable of their own: cut the run
    # there (naïve, Zoë, café, résumé).
    decomposed = _OWN_SYLLABLE.sub(lambda found: "-" + found.group(), decomposed)
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def syllables_by_rule(word: str) -> int:
    """:func:`english_syllables` of ``word`` without the memo of words (runs are still memoised)."""
    if word.isascii() and word.isalpha():  # one run of the letters a-z, however cased (its callers memoise it)
        return _count_run(word.lower())
    letters = ascii_letters(word)
    extra = 0
    if "'" in letters:
        clitic = _CLITIC.search(letters)
        if clitic:  # 's 'll 're 've 'd 'm add nothing; n't adds a syllable after a consonant (couldn't, isn't)
            extra = int(clitic.group(1) is not None)
            letters = letters[:clitic.start()]
        letters = letters.replace("'", "")
    return max(1, extra + sum(map(_RUN_SYLLABLES.__getitem__, _RUN.findall(letters))))


_RUN_SYLLABLES = WordMemo(_count_run, 1 << 16)
_WORD_SYLLABLES = WordMemo(syllables_by_rule, 1 << 16)


def run_syllables(run: str) -> int:
    """Syllables of one run of the lowercase letters a-z (at least 1)."""
    return _RUN_SYLLABLES[run]


def english_syllables(word: str) -> int:
    """Syllables of one word (a whitespace-separated token) by the rules above: at least 1."""
    return _WORD_SYLLABLES[word]


def clear_syllable_memos() -> None:
    """Forget the counts of the runs and words seen so far (kept for the process: 65,536 of each at most)."""
    _RUN_SYLLABLES.clear()
    _WORD_SYLLABLES.clear()
