"""The Porter stemmer of ROUGE-1.5.5: Martin Porter's Perl "Release 1" with Chin-Yew Lin's change to step 4.

ROUGE-1.5.5.pl carries its own copy of Porter's reference Perl implementation. It is the original 1980
algorithm (no NLTK extensions: "they" stays "they", "died" becomes "di", "monday" becomes "mondai"), with one
edit dated 02/14/2004: in step 4 the suffixes ``-ment`` and ``-ent`` are tried after the other suffixes rather
than as alternatives of them, so ``-ement`` words are not cut twice by one rule. Every regular expression
below is the script's, with Perl's ``$``` (text before the match) written as ``word[:match.start()]``; both
engines take the leftmost match and try alternatives in order, so they select the same suffix.
"""

from __future__ import annotations

import re

_c = "[^aeiou]"  # consonant
_v = "[aeiouy]"  # vowel
_C = f"{_c}[^aeiouy]*"  # consonant sequence
_V = f"{_v}[aeiou]*"  # vowel sequence

_MGR0 = re.compile(f"^({_C})?{_V}{_C}")  # [C]VC... is m>0
_MEQ1 = re.compile(f"^({_C})?{_V}{_C}({_V})?$")  # [C]VC[V] is m=1
_MGR1 = re.compile(f"^({_C})?{_V}{_C}{_V}{_C}")  # [C]VCVC... is m>1
_VOWEL_IN_STEM = re.compile(f"^({_C})?{_v}")
_CVC = re.compile(f"^{_C}{_v}[^aeiouwxy]$")

_STEP1A_SSIES = re.compile(r"(ss|i)es$")
_STEP1A_S = re.compile(r"([^s])s$")
_STEP1B_EED = re.compile(r"eed$")
_STEP1B_ED_ING = re.compile(r"(ed|ing)$")
_STEP1B_ATBLIZ = re.compile(r"(at|bl|iz)$")
_STEP1B_DOUBLE = re.compile(r"([^aeiouylsz])\1$")
_STEP1C = re.compile(r"y$")
_STEP2 = re.compile(
    r"(ational|tional|enci|anci|izer|bli|alli|entli|eli|ousli|ization|ation|ator|alism|iveness|fulness|ousness"
    r"|aliti|iviti|biliti|logi)$"
)
_STEP3 = re.compile(r"(icate|ative|alize|iciti|ical|ful|ness)$")
_STEP4 = re.compile(r"(al|ance|ence|er|ic|able|ible|ant|ement|ou|ism|ate|iti|ous|ive|ize)$")
_STEP4_MENT = re.compile(r"ment$")
_STEP4_ENT = re.compile(r"ent$")
_STEP4_ION = re.compile(r"(s|t)(ion)$")
_STEP5_E = re.compile(r"e$")
_STEP5_LL = re.compile(r"ll$")

_STEP2_LIST = {
    "ational": "ate", "tional": "tion", "enci": "ence", "anci": "ance", "izer": "ize", "bli": "ble",
    "alli": "al", "entli": "ent", "eli": "e", "ousli": "ous", "ization": "ize", "ation": "ate",
    "ator": "ate", "alism": "al", "iveness": "ive", "fulness": "ful", "ousness": "ous", "aliti": "al",
    "iviti": "ive", "biliti": "ble", "logi": "log",
}
_STEP3_LIST = {"icate": "ic", "ative": "", "alize": "al", "iciti": "ic", "ical": "ic", "ful": "", "ness": ""}


def _replace_suffix(word: str, suffix: re.Pattern[str], measure: re.Pattern[str], replacements: dict[str, str]) -> str:
    """The word with the ``suffix`` it ends in replaced by its entry in ``replacements`` (removed when it has none)
    if the stem before the suffix matches ``measure``; else the word unchanged."""
    match = suffix.search(word)
    if match:
        stem = word[: match.start()]
        if measure.search(stem):
            return stem + replacements.get(match.group(), "")
    return word


def porter_stem(word: str) -> str:
    """ROUGE-1.5.5's ``stem``: the stem of a lowercase word (words shorter than 3 characters are returned)."""
    if len(word) < 3:
        return word
    initial_y = word[0] == "y"
    if initial_y:
        word = "Y" + word[1:]  # an initial y is a consonant: the patterns never treat Y as a vowel

    # Step 1a
    match = _STEP1A_SSIES.search(word)
    if match:
        word = word[: match.start()] + match.group(1)
    else:
        match = _STEP1A_S.search(word)
        if match:
            word = word[: match.start()] + match.group(1)

    # Step 1b
    match = _STEP1B_EED.search(word)
    if match:
        if _MGR0.search(word[: match.start()]):
            word = word[:-1]
    else:
        match = _STEP1B_ED_ING.search(word)
        if match:
            stem = word[: match.start()]
            if _VOWEL_IN_STEM.search(stem):
                word = stem
                if _STEP1B_ATBLIZ.search(word):
                    word += "e"
                elif _STEP1B_DOUBLE.search(word):
                    word = word[:-1]
                elif _CVC.search(word):
                    word += "e"

    # Step 1c
    match = _STEP1C.search(word)
    if match:
        stem = word[: match.start()]
        if _VOWEL_IN_STEM.search(stem):
            word = stem + "i"

    # Steps 2 and 3
    word = _replace_suffix(word, _STEP2, _MGR0, _STEP2_LIST)
    word = _replace_suffix(word, _STEP3, _MGR0, _STEP3_LIST)

    # Step 4 (Lin's 2004 change: -ment and -ent are tried on their own, after the other suffixes)
    word = _replace_suffix(word, _STEP4, _MGR1, {})
    word = _replace_suffix(word, _STEP4_MENT, _MGR1, {})
    match = _STEP4_ENT.search(word)
    if match:
        stem = word[: match.start()]
        if _MGR1.search(stem):
            word = stem
    else:
        match = _STEP4_ION.search(word)
        if match:
            stem = word[: match.start()] + match.group(1)
            if _MGR1.search(stem):
                word = stem

    # Step 5
    match = _STEP5_E.search(word)
    if match:
        stem = word[: match.start()]
        if _MGR1.search(stem) or (_MEQ1.search(stem) and not _CVC.search(stem)):
            word = stem
    if _STEP5_LL.search(word) and _MGR1.search(word):
        word = word[:-1]

    if initial_y:
        word = word[0].lower() + word[1:]
    return word
