"""Seeded summary pairs that exercise what ROUGE-1.5.5 does to text, for parity tests against the Perl script.

Sentences are separated by ``"\\n"`` (as pyrouge expects), with empty and whitespace-only lines, ``<`` inside
sentences (ROUGE-1.5.5 cuts a sentence there), hyphens, digits, ``$``, HTML entities, tabs, carriage returns,
non-breaking and ideographic spaces, non-ASCII words of several scripts, capitals, SMART stopwords, words from
the WordNet exception lists (said, children, better, is) and words where ROUGE-1.5.5's Porter stemmer differs
from NLTK's (they, died, monday); predictions are noisy copies of a reference, so n-grams, LCS runs and
skip-bigrams overlap; each prediction has 1 to 4 references.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping
from typing import Any

from generated_text import PUNCTUATION, WORDS

ENGLISH = (
    "the a an of to in and is was were are be been said says say found finds children child men women better best "
    "well good went gone ran running runs they them their died dies dying monday tuesday news new police killed "
    "kill killing gunman gunmen agreement agreements replacement relational conditional generalization hopeful "
    "happiness caresses ponies ties caress cats feed agreed plastered bled motoring sing conflated troubled sized "
    "hopping tanned falling hissing fizzed failing filing happy sky electrical formative triplicate hopefulness "
    "adjustable defensible irritant communism activate angularity homologous effective bowdlerize probate rate "
    "cease controlling rolling generously axes data mice geese feet teeth testes oxen analyses crises wolves "
    "reuters ap also however therefore whereas obama israel iran deal nuclear u.s. president minister"
).split()
ODD = [
    "co-op", "well-known", "--", "-", "e-mail", "$5", "$", "3.14", "1,000", "2-3", "10-", "-5", "&amp;", "&lt;b&gt;",
    "<unk>", "a<b", "x>y", "[UNK]", "it's", "don't", "n't", "``", "''", "CAFÉ", "Ärger", "naïve", "İstanbul",
    "\u212a", "東京", "привет", "😀", "—", "…", "ﬁne", "ＡＢＣ", "MONDAY", "Said", "THEY",
]
SPACES = [" "] * 12 + ["  ", "\t", "\u00a0", "\u3000", "\r", " \x0b ", " \x0c "]


def _word(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.65:
        return rng.choice(ENGLISH)
    if roll < 0.8:
        return rng.choice(WORDS)
    if roll < 0.93:
        return rng.choice(ODD)
    return rng.choice(PUNCTUATION)


def _sentence(rng: random.Random, words: int) -> str:
    text = ""
    for index in range(words):
        text += _word(rng) + ("" if index == words - 1 else rng.choice(SPACES))
    if rng.random() < 0.1:
        text = " " + text
    return text


def reference_text(rng: random.Random, *, first_word: bool) -> str:
    """A summary of 1 to 4 sentences; with ``first_word`` it starts with a plain word (a token survives)."""
    sentences = [_sentence(rng, rng.randint(1, 18)) for _ in range(rng.randint(1, 4))]
    if rng.random() < 0.15:
        sentences.insert(rng.randrange(len(sentences) + 1), rng.choice(["", " ", "...", "<p>", "\t"]))
    if first_word:
        sentences[0] = rng.choice(ENGLISH) + " " + sentences[0]
    text = "\n".join(sentences)
    if rng.random() < 0.1:
        text += "\n"
    return text


def noisy_copy(rng: random.Random, source: str) -> str:
    """A prediction: the source with words dropped, replaced, swapped, recased and sentences merged or split."""
    lines = []
    for line in source.split("\n"):
        words = line.split(" ")
        edited: list[str] = []
        for word in words:
            roll = rng.random()
            if roll < 0.12:
                continue
            if roll < 0.22:
                edited.append(_word(rng))
            elif roll < 0.27:
                edited.append(word.upper())
            else:
                edited.append(word)
            if rng.random() < 0.05:
                edited.append(_word(rng))
        if len(edited) > 3 and rng.random() < 0.3:
            i = rng.randrange(len(edited) - 1)
            edited[i], edited[i + 1] = edited[i + 1], edited[i]
        lines.append(" ".join(edited))
    if len(lines) > 1 and rng.random() < 0.2:
        lines[0:2] = [lines[0] + " " + lines[1]]
    if rng.random() < 0.2:
        lines.append(_sentence(rng, rng.randint(1, 10)))
    return "\n".join(lines)


def generated_cases(
    seed: int, count: int, *, tokens_in_references: bool = True, max_references: int = 4
) -> tuple[list[str], list[list[str]]]:
    """``count`` predictions with 1..``max_references`` references each.

    With ``tokens_in_references`` every reference keeps at least one token under any ``-l``/``-b`` limit of at
    least a word or 40 bytes (ROUGE-1.5.5 dies on a reference without tokens when it computes ROUGE-W);
    without it some references and predictions are empty, punctuation-only or cut to nothing by ``<``.
    """
    rng = random.Random(seed)
    predictions, references = [], []
    for _ in range(count):
        group = [reference_text(rng, first_word=tokens_in_references) for _ in range(rng.randint(1, max_references))]
        if not tokens_in_references and rng.random() < 0.2:
            group[rng.randrange(len(group))] = rng.choice(["", " ", "<b>", "...", "\n", "-- !", "é"])
        prediction = noisy_copy(rng, rng.choice(group))
        roll = rng.random()
        if roll < 0.03:
            prediction = ""
        elif roll < 0.06:
            prediction = rng.choice(["...", "<x>", "\n\n", " - ", "東京"])
        elif roll < 0.1:
            prediction = rng.choice(group)
        predictions.append(prediction)
        references.append(group)
    return predictions, references


def spec_cases(spec: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The cases a golden file's ``cases`` entry describes (its ``seed``, ``count`` and ``tokens_in_references``)."""
    return generated_cases(spec["seed"], spec["count"], tokens_in_references=spec["tokens_in_references"])


def cases_digest(predictions: list[str], references: list[list[str]]) -> str:
    """The SHA-256 of the inputs that a golden file records beside its cases."""
    return hashlib.sha256(json.dumps([predictions, references], ensure_ascii=False).encode("utf-8")).hexdigest()
