"""Seeded generators of awkward text for parity tests: random vocabulary, punctuation, digits, unicode
of several scripts, HTML entities, empty strings, repeated n-grams, newlines and trailing whitespace."""

from __future__ import annotations

import random
from collections.abc import Iterator

WORDS = (
    "the a cat dog sat on mat house Haus über Straße naïve café 東京 北京 我们 学生 日本語 テスト 한국어 "
    "서울 привет мир नमस्ते दुनिया สวัสดี مرحبا 3.14 1,000 2-3 10- -5 U.S. e.g. it's don't co-op "
    "&quot; &amp; &lt; &gt; <skipped> “quoted” ‘x’ — – … ¿ ¡ € $ % @ # 😀 👍🏽"
).split()
PUNCTUATION = list(".,;:!?\"'()[]{}<>-/\\|_*&^%$#@~`+=") + ["...", ",,", ".,", "--", " .", ". ,"]
SPACES = [" ", " ", " ", "  ", "\t", "\u00a0", "\u3000", "\n", "-\n"]


def random_text(rng: random.Random, max_tokens: int = 20) -> str:
    """One segment; sometimes empty, sometimes only punctuation, often with repeated n-grams."""
    roll = rng.random()
    if roll < 0.05:
        return ""
    if roll < 0.08:
        return "".join(rng.choice(PUNCTUATION) for _ in range(rng.randint(1, 6)))
    length = rng.randint(1, max_tokens)
    tokens = [rng.choice(WORDS) if rng.random() < 0.85 else rng.choice(PUNCTUATION) for _ in range(length)]
    if length > 4 and rng.random() < 0.3:
        start = rng.randrange(length - 3)
        tokens += tokens[start : start + 3]
    text = ""
    for token in tokens:
        glue = "" if rng.random() < 0.15 else rng.choice(SPACES)
        text += token + glue
    if rng.random() < 0.2:
        text = text.upper() if rng.random() < 0.5 else text.title()
    return text if rng.random() < 0.7 else text.strip()


def similar_text(rng: random.Random, source: str) -> str:
    """A noisy copy of ``source`` (shared n-grams make BLEU non-trivial)."""
    tokens = source.split()
    if not tokens or rng.random() < 0.1:
        return random_text(rng)
    return " ".join(edited_words(rng, tokens, WORDS, drop_below=0.1, substitute_below=0.1, insert_below=0.2))


def edited_words(rng: random.Random, words: list[str], vocabulary: list[str], *, drop_below: float,
                 substitute_below: float, insert_below: float) -> list[str]:
    """``words`` lightly edited: for each word a draw below ``drop_below`` drops it, below ``substitute_below``
    replaces it by a word of ``vocabulary``, below ``insert_below`` puts such a word before it."""
    edited = []
    for word in words:
        roll = rng.random()
        if roll < drop_below:
            continue
        if roll < substitute_below:
            edited.append(rng.choice(vocabulary))
        elif roll < insert_below:
            edited += [rng.choice(vocabulary), word]
        else:
            edited.append(word)
    return edited


def random_corpus(rng: random.Random, size: int, max_references: int = 4) -> tuple[list[str], list[list[str]]]:
    """Predictions and 1..max_references references each (ragged)."""
    predictions, references = [], []
    for _ in range(size):
        prediction = random_text(rng)
        predictions.append(prediction)
        references.append(
            [similar_text(rng, prediction) for _ in range(rng.randint(1, max_references))]
        )
    return predictions, references


def random_corpora(rng: random.Random, count: int, max_examples: int) -> Iterator[tuple[list[str], list[list[str]]]]:
    """``count`` corpora from :func:`random_corpus`, each of 1 to ``max_examples`` examples (drawn from ``rng``
    between the caller's own draws)."""
    for _ in range(count):
        yield random_corpus(rng, rng.randint(1, max_examples))


def padded_streams(references: list[list[str]]) -> list[list[str | None]]:
    """sacreBLEU's input layout: one stream per reference position, missing references as None."""
    width = max(len(example) for example in references)
    return [[example[i] if i < len(example) else None for example in references] for i in range(width)]
