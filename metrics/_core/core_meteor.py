"""METEOR as NLTK computes it (``nltk.translate.meteor_score``, NLTK 3.10), with per-example statistics.

For one hypothesis and one reference (token lists, lowercased), words are
aligned in three stages, each on the words the earlier stages left:

1. exact: hypothesis positions from last to first, each taking the last
   remaining reference position holding the same word;
2. Porter stem: the same on the words' stems (NLTK's ``PorterStemmer()``, reimplemented in
   :mod:`core_meteor_tokenize`);
3. WordNet synonym: hypothesis positions from last to first, each taking the
   last remaining reference position whose *stem* is the hypothesis word's
   stem or one of its WordNet synonyms (NLTK looks synonyms up for the
   stems left by stage 2, not for the words; see :mod:`core_wordnet`).

With ``m`` aligned pairs, ``P = m / len(hypothesis)``, ``R = m / len(reference)``
and ``chunks`` the number of runs of pairs adjacent in both texts (pairs taken
in hypothesis order), the score is ``(1 - gamma * (chunks / m) ** beta) *
P * R / (alpha * P + (1 - alpha) * R)``, with NLTK's float operations in NLTK's
order; an empty side or no match scores 0. Several references: the best score.

The corpus score is macro-averaged, the mean of the per-example scores, as
evaluate's ``meteor`` module reports it. Per-example statistics are the score
(an ``fsum`` field) and a count.

Valid options follow from the formula. ``alpha`` weighs precision against
recall in a weighted harmonic mean, so it lies in [0, 1]: outside, the
denominator ``alpha * P + (1 - alpha) * R`` can be zero or negative while words
match (NLTK then returns 0 or a score outside [0, 1]). The fragmentation
``chunks / m`` lies in (0, 1], so ``beta >= 0`` keeps ``(chunks / m) ** beta``
in (0, 1] and growing with fragmentation (a negative ``beta`` penalises the
*less* fragmented alignment more, without bound). ``gamma`` is the largest
penalty: in [0, 1] the score stays in [0, Fmean]; above 1 it goes negative,
below 0 it rewards fragmentation and can exceed 1. All three must be finite.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .core_checks import check_number
from .core_options import boolean, option, optional
from .core_process import MIB, bounded_cache
from .core_resample_options import BootstrapOptions
from .core_stats import StatField, StatsSchema
from .core_meteor_align import PairAlignment, align_pairs
from .core_meteor_tokenize import nltk_word_tokens, porter_stem_uncached, tokenizer_label
from .core_wordnet import WordNet, load_wordnet
from .core_resources import TextBounds

METRIC = "meteor"
# Bytes of the process-wide caches: Porter stems by word, and prepared texts (lowercased words) by text.
STEM_CACHE_BYTES = 32 * MIB
TEXT_CACHE_BYTES = 128 * MIB
# Pairs aligned together, and their words (both sides): enough to spread numpy's per-call cost, few enough to
# bound the batch's arrays (a dozen 8-byte numbers a word).
BATCH_PAIRS = 4096
BATCH_WORDS = 1 << 18
# A text's lowercased words.
Words = tuple[str, ...]


def _weight(name: str, *, maximum: float | None, meaning: str) -> Callable[[str, str, Any], float]:
    """A check for a finite real number in ``[0, maximum]`` (no upper bound when ``maximum`` is None)."""

    def check(metric: str, argument: str, value: Any) -> float:
        check_number(metric, argument, value)
        if not math.isfinite(value):
            raise ValueError(f"{metric}: `{argument}` must be a finite number, got {value}")
        if value < 0 or (maximum is not None and value > maximum):
            bounds = f"between 0 and {maximum:g}" if maximum is not None else "at least 0"
            raise ValueError(f"{metric}: `{argument}` must be {bounds} ({meaning}), got {value}")
        return value

    check.__name__ = f"check_{name}"
    return check


def _tokenizer(metric: str, argument: str, value: Any) -> Any:
    if value is not None and not callable(getattr(value, "tokenize", value)):
        raise TypeError(
            f"{metric}: `{argument}` must be None (NLTK's word tokenizer), a callable from a text to a list of tokens "
            f"or an object with such a `tokenize` method, got {type(value).__name__} ({value!r:.60})"
        )
    return value


def _wordnet_source(metric: str, argument: str, value: Any) -> str:
    import os

    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(
            f"{metric}: `{argument}` must be None (find WordNet 3.0) or the path of a WordNet 3.0 database folder "
            f"(or of NLTK's wordnet.zip), got {type(value).__name__} ({value!r:.60})"
        )
    return os.fspath(value)


@dataclass(frozen=True)
class MeteorOptions(BootstrapOptions, TextBounds):
    """evaluate's ``meteor`` options (same names and defaults) and ours.

    ``alpha``, ``beta``, ``gamma``: NLTK's parameters (see the module docstring for their ranges).
    ``synonyms=False`` aligns by exact words and Porter stems only (no WordNet needed). ``tokenizer``
    turns a text into tokens; None is NLTK's ``word_tokenize`` without the Punkt sentence split (see
    :mod:`core_meteor_tokenize`). ``wordnet`` is a WordNet 3.0 folder (or NLTK's ``wordnet.zip``); None
    finds it in NLTK's data folders or Debian's. With synonyms, WordNet is loaded when the options are
    resolved, so a missing database is reported before any input is read. The bootstrap options
    (``confidence``, ``n_bootstrap``, ``confidence_level``, ``seed``) give a confidence interval of the mean.
    """

    metric_name = METRIC

    alpha: float = option(0.9, _weight("alpha", maximum=1, meaning="the weight of precision against recall in a "
                                                                    "weighted harmonic mean"), stats=True)
    beta: float = option(3, _weight("beta", maximum=None, meaning="the exponent of the fragmentation penalty"),
                         stats=True)
    gamma: float = option(0.5, _weight("gamma", maximum=1, meaning="the largest fragmentation penalty"), stats=True)
    synonyms: bool = option(True, boolean, stats=True)
    tokenizer: Callable[[str], Sequence[str]] | Any | None = option(None, _tokenizer, stats=True)
    wordnet: str | None = option(None, optional(_wordnet_source))

    def validate(self, metric: str) -> None:
        if self.synonyms:
            load_wordnet(self.wordnet)  # a missing or damaged database is reported now, saying how to install it

    def stats_signature(self) -> str:
        """Identifies the options the per-example statistics depend on."""
        stages = "exact+stem+wordnet3.0" if self.synonyms else "exact+stem"
        return (
            f"meteor|alpha:{float(self.alpha)!r}|beta:{float(self.beta)!r}|gamma:{float(self.gamma)!r}"
            f"|tok:{tokenizer_label(self.tokenizer)}|match:{stages}|case:lower"
        )

    def tokenize(self, text: str) -> list[str]:
        """Tokens of ``text``; a tokenizer returning something other than a list of strings is an error."""
        if self.tokenizer is None:
            return nltk_word_tokens(text)
        tokens = getattr(self.tokenizer, "tokenize", self.tokenizer)(text)
        if isinstance(tokens, str) or not isinstance(tokens, Sequence):
            raise TypeError(
                f"{METRIC}: `tokenizer` must return a list of tokens, got {type(tokens).__name__} for {text[:40]!r}; "
                f"wrap a string-returning tokenizer as `lambda text: tok(text).split()`"
            )
        for token in tokens:
            if not isinstance(token, str):
                raise TypeError(
                    f"{METRIC}: `tokenizer` must return strings, got a {type(token).__name__} ({token!r:.40}) "
                    f"for {text[:40]!r}"
                )
        return list(tokens)


def meteor_options(**given: Any) -> MeteorOptions:
    """Options from keyword arguments, checked as the metric checks them (and WordNet loaded when needed)."""
    return MeteorOptions.resolve(METRIC, given)


def clear_meteor_caches(*, words: bool = True) -> None:
    """Empty METEOR's process-wide caches: prepared texts and, with ``words``, stems, synonym sets and synsets
    (``core_process.clear_caches()`` empties them and every other metric's)."""
    from .core_wordnet import _SYNONYMS, _SYNSETS

    _TEXTS.clear()
    if words:
        _STEMS.clear()
        _SYNONYMS.clear()
        _SYNSETS.clear()


def meteor_schema(metric: str = METRIC, options: MeteorOptions | None = None) -> StatsSchema:
    """Per example: the METEOR score (summed with ``fsum``) and a count, under every option."""
    return StatsSchema(metric, (StatField("meteor", "fsum"), StatField("count", "sum")))


def porter_stem(word: str) -> str:
    """NLTK's ``PorterStemmer().stem(word)`` (NLTK_EXTENSIONS mode, as METEOR uses it), cached per process."""
    entry = _STEMS._entries.get(word)
    if entry is not None:
        return entry[0]
    return _STEMS.store(word, porter_stem_uncached(word))


def porter_stems(words: Sequence[str]) -> list[str]:
    """:func:`porter_stem` of each word (one cache look-up pass for them all)."""
    found = list(map(_STEMS._entries.get, words))
    return [entry[0] if entry is not None else porter_stem(word) for entry, word in zip(found, words)]


def _stem_size(word: str, stem: str) -> int:
    """Estimated bytes of a cached stem: the entry (its tuple, node and slot), the word and the stem."""
    return 220 + sys.getsizeof(word) + sys.getsizeof(stem)


def _words(tokens: Sequence[str]) -> Words:
    """A text's lowercased words (a tuple: once the garbage collector has seen it, it is untracked, so cached texts
    cost its full collections nothing)."""
    return tuple([token.lower() for token in tokens])


def _text_size(key: Any, words: Words) -> int:
    """Estimated bytes of a cached text: the entry, its key (a text, or a tuple holding a tokenizer's name and a
    text, or the tokens) and its words (per word: a tuple slot and the word object, up to 4 bytes a character)."""
    characters = sum(map(len, words))
    if isinstance(key, str):
        key_size = sys.getsizeof(key)
    elif key[0] == "tokens":
        key_size = 64 + sys.getsizeof(key[1]) + sum([sys.getsizeof(token) for token in key[1]])
    else:
        key_size = 64 + sys.getsizeof(key[0]) + sys.getsizeof(key[1])
    if key_size < 4 * characters + 200 or not (isinstance(key, str) and key.isascii()):
        characters *= 4  # up to 4 bytes a character
    return 300 + key_size + 2 * (60 * len(words) + characters)


_STEMS = bounded_cache(__file__, "meteor.stems", STEM_CACHE_BYTES, _stem_size)
_TEXTS = bounded_cache(__file__, "meteor.texts", TEXT_CACHE_BYTES, _text_size)


def _text_preparer(options: MeteorOptions) -> Callable[[str | Sequence[str]], Words]:
    """A function from a text (tokenized with the options' tokenizer) or a token list to its prepared words.

    Prepared texts are cached per process for tokenizers of known identity (NLTK's, or an object with a
    ``signature()``) and for token lists; a tokenizer of unknown identity tokenizes every time (it may
    change its behaviour between calls).
    """
    tokenizer = options.tokenizer
    if tokenizer is None:
        namespace: str | None = ""
    elif callable(getattr(tokenizer, "signature", None)):
        namespace = tokenizer_label(tokenizer)
    else:
        namespace = None
    entries = _TEXTS._entries
    find, touch, store = entries.get, entries.move_to_end, _TEXTS.store
    tokenize = options.tokenize

    def prepare(item: str | Sequence[str]) -> Words:
        if isinstance(item, str):
            if namespace is None:
                return _words(tokenize(item))
            key: Any = item if not namespace else (namespace, item)
        else:
            key = ("tokens", tuple(item))
        entry = find(key)
        if entry is None:
            return store(key, _words(tokenize(item) if isinstance(item, str) else item))
        try:
            touch(key)
        except KeyError:  # evicted by another thread meanwhile
            pass
        return entry[0]

    return prepare


def _formula(
    translation_length: int, reference_length: int, chunk_count: int, matches_count: int, options: MeteorOptions
) -> float:
    """NLTK's ``single_meteor_score`` from the counts, operation for operation (0 for an empty side or no match)."""
    if not translation_length or not reference_length or not matches_count:
        return 0.0
    alpha = options.alpha
    precision = float(matches_count) / translation_length
    recall = float(matches_count) / reference_length
    fmean = (precision * recall) / (alpha * precision + (1 - alpha) * recall)
    frag_frac = float(chunk_count) / matches_count
    penalty = options.gamma * frag_frac**options.beta
    return (1 - penalty) * fmean


def _aligned(pairs: Sequence[tuple[Words, Words]], wordnet: WordNet | None) -> PairAlignment:
    """The alignment of every (hypothesis, reference) pair of one batch (:func:`_batches`)."""
    slots: dict[int, int] = {}
    texts: list[Words] = []
    sides: tuple[list[int], list[int]] = ([], [])
    for pair in pairs:
        for text, side in zip(pair, sides):
            slot = slots.get(id(text))
            if slot is None:
                slot = slots[id(text)] = len(texts)
                texts.append(text)
            side.append(slot)
    return align_pairs(texts, *sides, porter_stems, None if wordnet is None else wordnet.synonym_sets)


def _batches(pairs: Sequence[tuple[Words, Words]]) -> list[Sequence[tuple[Words, Words]]]:
    """``pairs`` in consecutive batches of at most ``BATCH_PAIRS`` pairs and ``BATCH_WORDS`` words (or one pair
    longer than that): bounded arrays, and codes that fit in 64 bits for any pair of fewer than 2**29 words."""
    batches: list[Sequence[tuple[Words, Words]]] = []
    start = 0
    while start < len(pairs):
        end, words = start + 1, len(pairs[start][0]) + len(pairs[start][1])
        while end < len(pairs) and end - start < BATCH_PAIRS:
            words += len(pairs[end][0]) + len(pairs[end][1])
            if words > BATCH_WORDS:
                break
            end += 1
        batches.append(pairs[start:end])
        start = end
    return batches


def _pair_scores(
    pairs: Sequence[tuple[Words, Words]], options: MeteorOptions, wordnet: WordNet | None
) -> list[float]:
    """NLTK's ``single_meteor_score`` of each (hypothesis, reference) pair of lowercased words."""
    scores: list[float] = []
    for batch in _batches(pairs):
        chunks, matches = _aligned(batch, wordnet).chunks_and_matches()
        scores += [
            _formula(len(hypothesis), len(reference), chunk_count, matches_count, options)
            for (hypothesis, reference), chunk_count, matches_count in zip(batch, chunks, matches, strict=True)
        ]
    return scores


def _wordnet_for(options: MeteorOptions) -> WordNet | None:
    """The WordNet of the synonym stage, or None without it."""
    return load_wordnet(options.wordnet) if options.synonyms else None


def align(
    hypothesis: Sequence[str], reference: Sequence[str], options: MeteorOptions | None = None
) -> list[tuple[int, int]]:
    """NLTK's alignment of two token lists: (hypothesis position, reference position) pairs in hypothesis order."""
    options = options or MeteorOptions()
    return _aligned([(_words(hypothesis), _words(reference))], _wordnet_for(options)).pairs(0)


def single_meteor(hypothesis: Sequence[str], reference: Sequence[str], options: MeteorOptions | None = None) -> float:
    """NLTK's ``single_meteor_score(reference, hypothesis)`` on token lists (note our argument order)."""
    options = options or MeteorOptions()
    return _pair_scores([(_words(hypothesis), _words(reference))], options, _wordnet_for(options))[0]


class PreparedReferences:
    """References tokenized and lowercased once, to score several systems against them."""

    __slots__ = ("tokenizer", "texts")

    def __init__(self, texts: list[list[Words]], tokenizer: Callable[[str], Sequence[str]] | None) -> None:
        self.texts = texts
        self.tokenizer = tokenizer

    def __len__(self) -> int:
        return len(self.texts)


def prepare_references(
    references: Sequence[Sequence[str | Sequence[str]]], options: MeteorOptions
) -> PreparedReferences:
    """References (normalised as by ``core_meteor_inputs.check_meteor_inputs``) prepared once for several ``meteor_rows`` calls."""
    prepare = _text_preparer(options)
    texts = [[prepare(reference) for reference in group] for group in references]
    return PreparedReferences(texts, options.tokenizer)


def meteor_scores(
    predictions: Sequence[str | Sequence[str]],
    references: Sequence[Sequence[str | Sequence[str]]] | PreparedReferences,
    options: MeteorOptions,
) -> list[float]:
    """Per-example METEOR: NLTK's ``meteor_score`` (best over references) of each prediction.

    Inputs as ``core_meteor_inputs.check_meteor_inputs`` returns them: one prediction (a text or a token list) and a
    list of references per example, or references prepared by :func:`prepare_references`.
    """
    prepare = _text_preparer(options)
    owners: list[int] = []
    pairs: list[tuple[Words, Words]] = []
    for index, (prediction, group) in enumerate(
        zip(predictions, _references_for(references, options, prepare), strict=True)
    ):
        hypothesis = prepare(prediction)
        for reference in group:
            owners.append(index)
            pairs.append((hypothesis, reference))
    best: list[float | None] = [None] * len(predictions)
    for index, score in zip(owners, _pair_scores(pairs, options, _wordnet_for(options)), strict=True):
        previous = best[index]
        if previous is None or score > previous:
            best[index] = score
    return best  # type: ignore[return-value]


def _references_for(
    references: Sequence[Sequence[str | Sequence[str]]] | PreparedReferences,
    options: MeteorOptions,
    prepare: Callable[[str | Sequence[str]], Words],
) -> Sequence[Sequence[Words]]:
    if not isinstance(references, PreparedReferences):
        for index, group in enumerate(references):
            if isinstance(group, str) or not group:
                raise TypeError(
                    f"{METRIC}: `references[{index}]` must be a non-empty list of references "
                    f"(got {type(group).__name__} {group!r:.40}); normalise inputs with core_meteor_inputs.check_meteor_inputs"
                )
        return [[prepare(reference) for reference in group] for group in references]
    if references.tokenizer is not options.tokenizer:
        raise ValueError(
            f"{METRIC}: the references were prepared with the tokenizer {tokenizer_label(references.tokenizer)}, "
            f"the predictions use {tokenizer_label(options.tokenizer)}; prepare them with the same options"
        )
    return references.texts


def meteor_rows(
    predictions: Sequence[str | Sequence[str]],
    references: Sequence[Sequence[str | Sequence[str]]] | PreparedReferences,
    options: MeteorOptions,
) -> list[tuple[float, int]]:
    """Per-example rows in :func:`meteor_schema` order: (score, 1), for inputs as :func:`meteor_scores` takes them."""
    return [(score, 1) for score in meteor_scores(predictions, references, options)]


def meteor_from_totals(totals: Mapping[str, Any], options: MeteorOptions) -> dict[str, float]:
    """evaluate's ``meteor`` result from named totals: the mean per-example score."""
    count = totals["count"]
    if not count:
        raise ValueError(f"{METRIC}: no examples; the mean score of an empty corpus is undefined")
    return {"meteor": totals["meteor"] / count}
