"""METEOR core against its oracle, NLTK 3.10's ``nltk.translate.meteor_score`` (test-only WordNet from Debian's files).

Expected values come from NLTK (same token lists, same WordNet 3.0 database), from NLTK's and
evaluate's published example (0.6944), or from hand computations written out below. Per-example
scores must agree within 1e-12 (in practice they are bit-identical); alignments must be the same
pairs NLTK chooses. The default run checks 150 CNN/DailyMail examples x 3 systems and 400
generated cases; ``-m slow`` checks 2,000 x 3 and 2,000 generated cases.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from cnndm_data import SYSTEMS, cnndm_or_skip
from conftest import default_and_slow
from meteor_oracle import (
    BAD_WEIGHTS,
    DEBIAN_WORDNET,
    SKIP_REASON,
    NoSynonyms,
    debian_wordnet_available,
    needs_wordnet,
    oracle_meteor,
    oracle_tokens,
    oracle_scores,
)
from metrics._core import core_meteor, core_wordnet
from metrics._core.core_meteor import (
    MeteorOptions,
    align,
    meteor_from_totals,
    meteor_options,
    meteor_rows,
    meteor_schema,
    meteor_scores,
    prepare_references,
    single_meteor,
)
from metrics._core.core_meteor_align import fits
from metrics._core.core_meteor_inputs import check_meteor_inputs
from metrics._core.core_meteor_tokenize import (
    AFTER_PADDING,
    BEFORE_PADDING,
    CONTRACTIONS,
    nltk_tokenizer_tokens,
    nltk_word_tokens,
    porter_stem_uncached,
)
from metrics._core.core_wordnet import WordNetNotFoundError, load_wordnet

TOLERANCE = 1e-12


@pytest.fixture(scope="module")
def cnndm(shared_data: Path) -> list[dict]:
    return cnndm_or_skip(shared_data, 2000)


@pytest.fixture(scope="module")
def options() -> MeteorOptions:
    if not debian_wordnet_available():
        pytest.skip(SKIP_REASON)
    return MeteorOptions(wordnet=str(DEBIAN_WORDNET))


def compare(ours: list[float], theirs: list[float]) -> tuple[int, float, int]:
    """(mismatches beyond the tolerance, largest difference, bit-identical count)."""
    differences = [abs(a - b) for a, b in zip(ours, theirs, strict=True)]
    return sum(d > TOLERANCE for d in differences), max(differences, default=0.0), sum(
        a == b for a, b in zip(ours, theirs, strict=True)
    )



# Hand-computed cases.


@needs_wordnet
def test_identical_sentence_by_hand(options) -> None:
    # 6 words, all matched in one chunk: P = R = 1, Fmean = 1 / (0.9 + 0.1) = 1,
    # penalty = 0.5 * (1 / 6) ** 3 = 0.5 / 216.
    words = "the cat sat on the mat".split()
    assert single_meteor(words, words, options) == pytest.approx(1 - 0.5 / 216, abs=1e-15)
    assert align(words, words, options) == [(index, index) for index in range(6)]


@needs_wordnet
def test_stem_then_synonym_of_the_stem_by_hand(options) -> None:
    # "the" matches exactly, "cats"/"cat" by their stem "cat"; "ran" (stem "ran") and "runs" (stem "run")
    # match in the synonym stage: morphy maps "ran" to the verb "run" (verb.exc), whose synsets hold "run".
    hypothesis, reference = ["the", "cats", "ran"], ["The", "cat", "runs"]
    assert align(hypothesis, reference, options) == [(0, 0), (1, 1), (2, 2)]
    # m = 3 in one chunk: P = R = 1, penalty = 0.5 * (1 / 3) ** 3 = 0.5 / 27.
    assert single_meteor(hypothesis, reference, options) == pytest.approx(1 - 0.5 / 27, abs=1e-15)
    # Without synonyms m = 2 (one chunk): P = R = 2/3, Fmean = (4/9) / (0.9 * 2/3 + 0.1 * 2/3) = 2/3,
    # penalty = 0.5 * (1 / 2) ** 3 = 0.0625, score = 0.9375 * 2/3 = 0.625.
    exact_and_stem = MeteorOptions(synonyms=False)
    assert align(hypothesis, reference, exact_and_stem) == [(0, 0), (1, 1)]
    assert single_meteor(hypothesis, reference, exact_and_stem) == pytest.approx(0.625, abs=1e-15)


@needs_wordnet
def test_repeated_words_take_the_last_reference_position(options, nltk_wordnet) -> None:
    # Hypothesis positions are visited last to first and take the last free reference position:
    # hyp[2] 'a' -> ref[1], hyp[1] 'b' -> ref[2], hyp[0] 'a' -> ref[0]; in hypothesis order the pairs
    # (0,0) (1,2) (2,1) form 3 chunks: P = R = 1, penalty = 0.5 * (3/3) ** 3 = 0.5.
    hypothesis, reference = ["a", "b", "a"], ["a", "a", "b"]
    assert align(hypothesis, reference, options) == [(0, 0), (1, 2), (2, 1)]
    assert single_meteor(hypothesis, reference, options) == 0.5
    assert oracle_meteor([reference], hypothesis, nltk_wordnet) == 0.5


@needs_wordnet
def test_published_example(options) -> None:
    """NLTK's docstring example, also evaluate's card: 0.6944 (rounded), best of three references."""
    hypothesis = "It is a guide to action which ensures that the military always obeys the commands of the party"
    references = [
        "It is a guide to action that ensures that the military will forever heed Party commands",
        "It is the guiding principle which guarantees the military forces always being under the command of the Party",
        "It is the practical guide for the army always to heed the directions of the party",
    ]
    assert round(meteor_scores([hypothesis], [references], options)[0], 4) == 0.6944
    assert round(meteor_scores([hypothesis], [references[:1]], options)[0], 4) == 0.6944
    assert meteor_scores(["non matching hypothesis"], [["this is a cat"]], options) == [0.0]


@needs_wordnet
def test_empty_sides_score_zero(options) -> None:
    assert meteor_scores(["", "a b", ""], [[""], [""], ["a b"]], options) == [0.0, 0.0, 0.0]
    assert meteor_scores([[]], [[[]]], options) == [0.0]


# Alignment parity: the same (hypothesis, reference) pairs as NLTK's _enum_align_words.


def nltk_alignment(hypothesis: list[str], reference: list[str], wordnet) -> list[tuple[int, int]]:
    from nltk.translate.meteor_score import _enum_align_words, _generate_enums

    matches, _, _ = _enum_align_words(*_generate_enums(hypothesis, reference), wordnet=wordnet)
    return matches


@needs_wordnet
def test_alignment_pairs_match_nltk(options, nltk_wordnet, meteor_cases) -> None:
    checked = 0
    for prediction, references in meteor_cases(300, seed=11):
        hypothesis = oracle_tokens(prediction)
        for reference_text in references:
            reference = oracle_tokens(reference_text)
            assert align(hypothesis, reference, options) == nltk_alignment(hypothesis, reference, nltk_wordnet)
            checked += 1
    assert checked > 600


# CNN/DailyMail parity.


@needs_wordnet
@pytest.mark.parametrize("limit", default_and_slow((150,), (2000,)))
def test_cnndm_parity(cnndm, options, nltk_wordnet, limit: int) -> None:
    assert len(cnndm) >= limit
    references = [[record["reference"]] for record in cnndm[:limit]]
    prepared = prepare_references(references, options)
    for system in SYSTEMS:
        predictions = [record[system] for record in cnndm[:limit]]
        ours = meteor_scores(predictions, prepared, options)
        theirs = oracle_scores(predictions, references, nltk_wordnet)
        mismatches, worst, identical = compare(ours, theirs)
        assert mismatches == 0, f"{system}: {mismatches} of {limit} differ (max {worst})"
        assert identical == limit, f"{system}: {limit - identical} scores differ in the last bits (max {worst})"


# Generated cases: synonym-rich sentences from WordNet lemmas, inflected forms, repeats, empty strings,
# several references, capitals and punctuation.

COMMON = (
    "the a of and to in is was for on with he she it they said new year people time man woman child dog cat "
    "car house big small good bad fast run walk go come make take see know get give find think tell say"
).split()
PUNCTUATION = [",", ".", "!", "?", "'s", "n't", "--", ";", "(", ")", "''", "``", '"', "u.s.", "dr."]
SUFFIXES = ["s", "es", "ed", "ing", "er", "est", "ies", "ly"]


def exception_inflections() -> dict[str, list[str]]:
    """Base form -> inflected forms, from WordNet's exception lists (e.g. 'goose' -> ['geese'])."""
    inflections: dict[str, list[str]] = {}
    for suffix in ("noun", "verb", "adj", "adv"):
        for line in (DEBIAN_WORDNET / f"{suffix}.exc").read_text(encoding="utf-8").splitlines():
            form, *bases = line.split()
            for base in bases:
                inflections.setdefault(base, []).append(form)
    return inflections


class CaseGenerator:
    def __init__(self) -> None:
        self.wordnet = load_wordnet(DEBIAN_WORDNET)
        self.inflections = exception_inflections()
        lemmas = sorted(
            lemma
            for lemma in self.wordnet.index_lemmas()
            if lemma.isalpha() and len(lemma) <= 7 and len(self.wordnet.synonym_names(lemma)) >= 2
        )
        self.pool = lemmas + sorted(self.inflections)[:2000:4]

    def word(self, rng: random.Random, seed_word: str) -> list[str]:
        word = seed_word
        if rng.random() < 0.4:
            synonyms = sorted(self.wordnet.synonym_names(word))
            if synonyms:
                word = rng.choice(synonyms)
        roll = rng.random()
        if roll < 0.15 and word in self.inflections:
            word = rng.choice(self.inflections[word])
        elif roll < 0.35:
            word += rng.choice(SUFFIXES)
        roll = rng.random()
        if roll < 0.1:
            word = word.upper()
        elif roll < 0.2:
            word = word.title()
        words = [word]
        if rng.random() < 0.1:
            words.append(word)
        if rng.random() < 0.15:
            words.append(rng.choice(COMMON))
        if rng.random() < 0.08:
            words.append(rng.choice(PUNCTUATION))
        return words

    def text(self, rng: random.Random, seeds: list[str]) -> str:
        if rng.random() < 0.05:
            return rng.choice(["", " ", "."])
        words = [piece for seed in seeds for piece in self.word(rng, seed)]
        for _ in range(rng.randint(0, 2)):
            if len(words) > 1:
                position = rng.randrange(len(words) - 1)
                words[position], words[position + 1] = words[position + 1], words[position]
        text = " ".join(words)
        return text + rng.choice(["", "", ".", " .", "!"])

    def cases(self, count: int, seed: int) -> list[tuple[str, list[str]]]:
        rng = random.Random(seed)
        cases = []
        for _ in range(count):
            seeds = [rng.choice(self.pool if rng.random() < 0.7 else COMMON) for _ in range(rng.randint(0, 12))]
            prediction = self.text(rng, seeds)
            references = [self.text(rng, seeds) for _ in range(rng.choice([1, 1, 1, 2, 3, 4]))]
            cases.append((prediction, references))
        return cases


@needs_wordnet
@pytest.mark.parametrize("count, seed", default_and_slow((400, 2024), (2000, 7)))
def test_generated_parity(meteor_cases, options, nltk_wordnet, count: int, seed: int) -> None:
    cases = meteor_cases(count, seed)
    predictions, references = (list(column) for column in zip(*cases, strict=True))
    ours = meteor_scores(predictions, references, options)
    theirs = oracle_scores(predictions, references, nltk_wordnet)
    mismatches, worst, identical = compare(ours, theirs)
    assert mismatches == 0, f"{mismatches} of {count} differ (max {worst})"
    assert identical == count
    # The cases exercise the synonym stage: scores without it are lower for many of them.
    without = meteor_scores(predictions, references, MeteorOptions(synonyms=False))
    assert sum(a > b for a, b in zip(ours, without, strict=True)) > count // 20
    assert sum(score == 0.0 for score in ours) < count // 4


@needs_wordnet
@pytest.mark.parametrize("count, seed", default_and_slow((400, 2024), (2000, 7)))
def test_synonym_sets_match_nltk_on_generated_vocabulary(meteor_cases, nltk_wordnet, count: int, seed: int) -> None:
    """Our synonym sets equal NLTK's for every word of the generated cases and every word's Porter stem."""
    wordnet = load_wordnet(DEBIAN_WORDNET)
    words: set[str] = set()
    for prediction, references in meteor_cases(count, seed):
        for text in (prediction, *references):
            words.update(token.lower() for token in nltk_word_tokens(text))
    words |= {core_meteor.porter_stem(word) for word in words}

    def nltk_names(word: str) -> set[str]:
        return {lemma.name() for synset in nltk_wordnet.synsets(word) for lemma in synset.lemmas()}

    differing = [
        word for word in sorted(words) if wordnet.synonym_names(word) != {n for n in nltk_names(word) if "_" not in n}
    ]
    assert len(words) > count and differing == []


@needs_wordnet
def test_pairs_aligned_in_small_batches_score_as_nltk(meteor_cases, options, nltk_wordnet, monkeypatch) -> None:
    """Pairs are aligned in batches bounded in pairs and in words (a pair longer than the bound alone); every
    split gives NLTK's scores (a prediction's references may fall in different batches)."""
    cases = meteor_cases(120, seed=3)
    predictions, references = (list(column) for column in zip(*cases, strict=True))
    theirs = oracle_scores(predictions, references, nltk_wordnet)
    monkeypatch.setattr(core_meteor, "BATCH_PAIRS", 7)
    assert compare(meteor_scores(predictions, references, options), theirs)[2] == len(cases)
    monkeypatch.setattr(core_meteor, "BATCH_WORDS", 12)
    sizes = [(5, 4), (1, 2), (20, 0), (0, 1), (1, 1)]  # words of each pair's sides
    batches = core_meteor._batches([(("a",) * left, ("b",) * right) for left, right in sizes])
    assert [len(batch) for batch in batches] == [2, 1, 2]  # 9 + 3 = 12, then 20 alone, then 1 + 2
    assert compare(meteor_scores(predictions, references, options), theirs)[2] == len(cases)


def test_code_bound_by_hand() -> None:
    # Codes are (pair * vocabulary + key) * (longest + 1) + rank, below 2**62.
    assert fits(4096, 100_000, 1_000)  # 4.1e11 * 1001 = 4.1e14
    assert not fits(2**21, 2**21, 2**20)  # 2**42 * (2**20 + 1) > 2**62
    assert fits(2**21, 2**21, 2**20 - 2)  # 2**42 * (2**20 - 1) < 2**62


# Options: valid ranges, parity away from the defaults, exact + stem mode.


@needs_wordnet
@pytest.mark.parametrize(
    "weights",
    [
        {"alpha": 0.0, "beta": 3, "gamma": 0.5},
        {"alpha": 1.0, "beta": 3, "gamma": 0.5},
        {"alpha": 0.5, "beta": 0.0, "gamma": 1.0},
        {"alpha": 0.75, "beta": 1.5, "gamma": 0.0},
        {"alpha": 0.9, "beta": 3.0, "gamma": 0.5},
    ],
    ids=lambda weights: "-".join(f"{key}{value}" for key, value in weights.items()),
)
def test_parity_with_other_weights(meteor_cases, nltk_wordnet, weights) -> None:
    cases = meteor_cases(150, seed=5)
    predictions, references = (list(column) for column in zip(*cases, strict=True))
    ours = meteor_scores(predictions, references, MeteorOptions(wordnet=str(DEBIAN_WORDNET), **weights))
    theirs = oracle_scores(predictions, references, nltk_wordnet, **weights)
    assert compare(ours, theirs)[0] == 0


@pytest.mark.parametrize(("argument", "value", "error"), BAD_WEIGHTS)
def test_out_of_range_weights_are_rejected(argument, value, error) -> None:
    with pytest.raises(error, match=f"meteor: `{argument}`"):
        meteor_options(**{argument: value})


def test_bounds_of_the_ranges_are_accepted() -> None:
    for weights in ({"alpha": 0, "beta": 0, "gamma": 0}, {"alpha": 1, "beta": 100, "gamma": 1}):
        assert meteor_options(synonyms=False, **weights) == MeteorOptions(synonyms=False, **weights)


def test_other_options_are_checked() -> None:
    with pytest.raises(TypeError, match="meteor: `synonyms` must be"):
        meteor_options(synonyms="yes")
    with pytest.raises(TypeError, match="meteor: `wordnet` must be None"):
        meteor_options(wordnet=3)
    with pytest.raises(TypeError, match="unknown options"):
        meteor_options(synonym=False)


@needs_wordnet
def test_exact_and_stem_mode_matches_nltk_without_synonyms(meteor_cases, nltk_wordnet) -> None:
    cases = meteor_cases(300, seed=3)
    predictions, references = (list(column) for column in zip(*cases, strict=True))
    ours = meteor_scores(predictions, references, MeteorOptions(synonyms=False))
    theirs = oracle_scores(predictions, references, NoSynonyms())
    assert compare(ours, theirs)[0] == 0


def test_exact_and_stem_mode_needs_no_wordnet(monkeypatch, tmp_path) -> None:
    import nltk.data

    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    monkeypatch.setattr(core_wordnet, "DEBIAN_WORDNET", tmp_path / "absent")
    predictions, references = ["the cats sat on a mat"], [["the cat sits on the mat"]]
    with pytest.raises(WordNetNotFoundError, match="apt-get install wordnet-base"):
        meteor_scores(predictions, references, MeteorOptions())
    # Resolving the options (what the metric does before reading any input) reports it already.
    with pytest.raises(WordNetNotFoundError, match="apt-get install wordnet-base"):
        meteor_options()
    assert meteor_options(synonyms=False).synonyms is False
    # By hand: exact matches the (hyp 0 takes the *last* 'the' of the reference, position 4), on (3 -> 3) and
    # mat (5 -> 5); then the stems cat (hyp 1 'cats' -> ref 1 'cat'); 'sat' and 'sits' stem to 'sat' and 'sit'.
    # m = 4 of 6 words on each side: P = R = 2/3, Fmean = (4/9) / (0.9 * 2/3 + 0.1 * 2/3) = 2/3. In hypothesis
    # order the pairs (0,4) (1,1) (3,3) (5,5) are 4 chunks: penalty = 0.5 * (4/4) ** 3 = 0.5, score = 1/3.
    score = meteor_scores(predictions, references, MeteorOptions(synonyms=False))[0]
    assert score == pytest.approx(1 / 3, abs=1e-15)


# Inputs: texts, pre-tokenized lists, a tokenizer callable, prepared references.


@needs_wordnet
def test_pre_tokenized_input_matches_nltk(meteor_cases, options, nltk_wordnet) -> None:
    cases = meteor_cases(200, seed=17)
    predictions = [oracle_tokens(prediction) for prediction, _ in cases]
    references = [[oracle_tokens(reference) for reference in group] for _, group in cases]
    ours = meteor_scores(*check_meteor_inputs(predictions, references), options)
    theirs = [oracle_meteor(group, prediction, nltk_wordnet) for prediction, group in zip(predictions, references)]
    assert compare(ours, theirs)[0] == 0
    # One non-empty tokenized reference per prediction may be given without the extra list level.
    kept = [index for index, group in enumerate(references) if group[0]]
    assert len(kept) > 150
    normalised = check_meteor_inputs([predictions[index] for index in kept], [references[index][0] for index in kept])
    assert normalised[1] == [[references[index][0]] for index in kept]


@needs_wordnet
def test_tokenizer_callable(meteor_cases, options, nltk_wordnet) -> None:
    cases = meteor_cases(200, seed=19)
    predictions, references = (list(column) for column in zip(*cases, strict=True))
    ours = meteor_scores(predictions, references, MeteorOptions(wordnet=str(DEBIAN_WORDNET), tokenizer=str.split))
    theirs = [
        oracle_meteor([reference.split() for reference in group], prediction.split(), nltk_wordnet)
        for prediction, group in zip(predictions, references)
    ]
    assert compare(ours, theirs)[0] == 0
    with pytest.raises(TypeError, match="must return a list of tokens"):
        meteor_scores(["a b"], [["a b"]], MeteorOptions(synonyms=False, tokenizer=str.upper))
    with pytest.raises(TypeError, match="`tokenizer` must be None .NLTK.s word tokenizer., a callable"):
        meteor_options(synonyms=False, tokenizer="nltk")
    with pytest.raises(TypeError, match="`tokenizer` must return strings"):
        meteor_scores(["a b"], [["a b"]], MeteorOptions(synonyms=False, tokenizer=lambda text: [1, 2]))

    class WithTokenize:
        def tokenize(self, text: str) -> list[str]:
            return text.split()

    with_method = MeteorOptions(wordnet=str(DEBIAN_WORDNET), tokenizer=WithTokenize())
    assert meteor_scores(predictions[:50], references[:50], with_method) == ours[:50]


def test_tokenizers_with_the_same_name_are_not_confused() -> None:
    """The text cache is keyed by the tokenizer object: two lambdas are two tokenizers."""
    first = MeteorOptions(synonyms=False, tokenizer=lambda text: text.split())
    second = MeteorOptions(synonyms=False, tokenizer=lambda text: list(text.replace(" ", "")))
    assert meteor_scores(["ab"], [["a b"]], first) == [0.0]
    assert meteor_scores(["ab"], [["a b"]], second)[0] > 0.9


@needs_wordnet
def test_prepared_references_give_the_same_scores(cnndm, options) -> None:
    records = cnndm[:100]
    references = [[record["reference"]] for record in records]
    prepared = prepare_references(references, options)
    for system in SYSTEMS:
        predictions = [record[system] for record in records]
        assert meteor_scores(predictions, prepared, options) == meteor_scores(predictions, references, options)
    with pytest.raises(ValueError, match="prepared with the tokenizer"):
        meteor_scores([records[0]["baseline"]], prepare_references(references[:1], options), MeteorOptions(
            wordnet=str(DEBIAN_WORDNET), tokenizer=str.split
        ))


def test_input_checks() -> None:
    with pytest.raises(TypeError, match="pass all predictions as strings or all as lists of tokens"):
        check_meteor_inputs([["a"], "b"], [["a"], ["b"]])
    with pytest.raises(ValueError, match=r"`references\[0\]` is empty"):
        check_meteor_inputs([["a"]], [[]])
    with pytest.raises(TypeError, match=r"`predictions\[0\]\[1\]` must be a token"):
        check_meteor_inputs([["a", 1]], [["a"]])
    with pytest.raises(ValueError, match="2 predictions but 1 references"):
        check_meteor_inputs([["a"], ["b"]], [["a"]])
    with pytest.raises(TypeError, match="single string"):
        check_meteor_inputs("a b", ["a b"])
    assert check_meteor_inputs(["a b"], ["a c"]) == (["a b"], [["a c"]])
    with pytest.raises(TypeError, match=r"`references\[0\]` must be a non-empty list"):
        meteor_scores(["a b"], ["a b"], MeteorOptions(synonyms=False))  # not normalised: one string per prediction
    assert check_meteor_inputs([["a"]], [[["a"], ["b", "c"]]]) == ([["a"]], [[["a"], ["b", "c"]]])


# Statistics: macro average of per-example scores, exact under sharding.


@needs_wordnet
def test_statistics_give_the_mean_of_the_oracle_scores(meteor_cases, options, nltk_wordnet) -> None:
    cases = meteor_cases(300, seed=23)
    predictions, references = (list(column) for column in zip(*cases, strict=True))
    schema = meteor_schema()
    assert schema.names == ("meteor", "count")
    signature = options.stats_signature()
    rows = meteor_rows(predictions, references, options)
    totals = schema.totals_of_rows(rows, signature)
    theirs = oracle_scores(predictions, references, nltk_wordnet)
    assert meteor_from_totals(totals, options) == {"meteor": math.fsum(theirs) / len(theirs)}
    assert totals["count"] == 300
    shards = [schema.totals_of_rows(rows[start : start + 70], signature) for start in range(0, 300, 70)]
    assert schema.merge(*reversed(shards))["meteor"] == totals["meteor"]
    assert [row[0] for row in rows] == meteor_scores(predictions, references, options)


def test_signature_names_the_options() -> None:
    signature = MeteorOptions().stats_signature()
    assert signature == "meteor|alpha:0.9|beta:3.0|gamma:0.5|tok:nltk_word|match:exact+stem+wordnet3.0|case:lower"
    assert MeteorOptions(beta=3).stats_signature() == MeteorOptions(beta=3.0).stats_signature()
    assert "match:exact+stem|" in MeteorOptions(synonyms=False).stats_signature()
    # A callable of unknown behaviour is named with a label of the object: its statistics merge only with
    # those made by the same object; an object with a signature() is named by it.
    split_signature = MeteorOptions(tokenizer=str.split).stats_signature()
    assert "|tok:unverified:str.split:" in split_signature
    assert split_signature == MeteorOptions(tokenizer=str.split).stats_signature()
    first, second = (lambda text: text.split()), (lambda text: text.split())
    assert MeteorOptions(tokenizer=first).stats_signature() != MeteorOptions(tokenizer=second).stats_signature()

    class Named:
        def tokenize(self, text: str) -> list[str]:
            return text.split()

        def signature(self) -> str:
            return "whitespace-v1"

    assert "|tok:custom:whitespace-v1|" in MeteorOptions(tokenizer=Named()).stats_signature()
    with pytest.raises(ValueError, match="no examples"):
        meteor_from_totals({"meteor": 0.0, "count": 0}, MeteorOptions())


# Tokenization: NLTK's word_tokenize(preserve_line=True), and what Punkt would change.


def test_rules_are_nltks() -> None:
    from nltk.tokenize.destructive import NLTKWordTokenizer as Tokenizer

    theirs = [
        *Tokenizer.STARTING_QUOTES,
        *Tokenizer.PUNCTUATION,
        Tokenizer.PARENS_BRACKETS,
        Tokenizer.DOUBLE_DASHES,
    ]
    assert [(rule[0], rule[2]) for rule in BEFORE_PADDING] == [(pattern.pattern, sub) for pattern, sub in theirs]
    assert [(rule[0], rule[2]) for rule in AFTER_PADDING] == [
        (pattern.pattern, sub) for pattern, sub in Tokenizer.ENDING_QUOTES
    ]
    assert [rule[0] for rule in CONTRACTIONS] == [
        pattern.pattern for pattern in (*Tokenizer.CONTRACTIONS2, *Tokenizer.CONTRACTIONS3)
    ]


FIELDS = ("reference", *SYSTEMS)


@pytest.fixture(scope="module")
def cnndm_tokens(cnndm) -> list[dict[str, list[str]]]:
    """Our tokens of every text of the 2,000 examples."""
    return [{field: nltk_word_tokens(record[field]) for field in FIELDS} for record in cnndm]


def test_tokens_match_nltk_on_cnndm_500(cnndm, cnndm_tokens) -> None:
    for record, tokens in zip(cnndm[:500], cnndm_tokens[:500]):
        assert [tokens[field] for field in FIELDS] == [oracle_tokens(record[field]) for field in FIELDS]


@pytest.mark.slow
def test_tokens_match_nltk_on_cnndm_2000(cnndm, cnndm_tokens) -> None:
    assert len(cnndm_tokens) == 2000
    for record, tokens in zip(cnndm, cnndm_tokens):
        assert [tokens[field] for field in FIELDS] == [oracle_tokens(record[field]) for field in FIELDS]


def test_tokens_match_nltk_on_awkward_text() -> None:
    """Seeded strings of quotes, contractions, periods, dashes, unicode quotes, combining marks, digits of
    recent Unicode versions and the separators U+001C..U+001F (the last three go to NLTK's own tokenizer)."""
    rng = random.Random(99)
    alphabet = list(
        "abcxyz ABC'\"`.,:;!?()[]{}<>-*&%$#@«»“”‘’„\u2012\u2013\u2014\u2015\u00a0\u3000\t\n\r\x0b\x0c"
        "\x1c\x1d\x85éñ\u0301\u00b2\u0663\U00010d40ſKİı"
    ) + ["can", "not", "gonna", "wanna", "'tis", "'twas", "n't", "'ll", "'S", "d'ye", "more'n", "...", "--", "''"]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(5000)]
    assert [nltk_word_tokens(text) for text in texts] == [oracle_tokens(text) for text in texts]
    assert nltk_tokenizer_tokens("a\x1cb. c") == oracle_tokens("a\x1cb. c")
    endings = ["a,", "a:", "a,\n", "a:\n", "a,\n\n", "a, ", "a.\n", "a. )", "a.)\n", "a..", "'a'", "a' ", "\"a\"\n"]
    assert [nltk_word_tokens(text) for text in endings] == [oracle_tokens(text) for text in endings]


def test_tokens_match_nltk_on_quote_heavy_text() -> None:
    """Seeded strings dense in quotes and clitics ('s, n't, 'll, ...), which the fast path's quote checks skip."""
    rng = random.Random(3)
    alphabet = list("'' smdlrvetnSMDLRVETN_1a.\n\"`x") + ["n't", "N'T", "'ll", "'re", "'ve", "'s", "'S", "'d", "'t"]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14))) for _ in range(20000)]
    assert [nltk_word_tokens(text) for text in texts] == [oracle_tokens(text) for text in texts]


def test_sentence_final_periods_inside_a_text() -> None:
    """What evaluate's Punkt step changes, on hand-made examples.

    ``word_tokenize(text)`` splits ``text`` into sentences with Punkt and tokenizes each; the word
    tokenizer splits a period off only at the end of the string it gets, so Punkt's split turns every
    sentence-final period into a token of its own. Without Punkt (ours) a period glued to the last word
    of an inner sentence stays on it; the last sentence's period is split off either way.
    """
    from nltk.tokenize.destructive import NLTKWordTokenizer

    text = "The cat sat. The dog ran."
    assert nltk_word_tokens(text) == ["The", "cat", "sat.", "The", "dog", "ran", "."]
    punkt_sentences = ["The cat sat.", "The dog ran."]  # Punkt's split of this text
    punkt_tokens = [token for sentence in punkt_sentences for token in NLTKWordTokenizer().tokenize(sentence)]
    assert punkt_tokens == ["The", "cat", "sat", ".", "The", "dog", "ran", "."]
    # A period already separated by a space (PTB-tokenized text, as CNN/DailyMail) is a token either way.
    assert nltk_word_tokens("the cat sat .\nthe dog ran .") == ["the", "cat", "sat", ".", "the", "dog", "ran", "."]
    # Question and exclamation marks are split everywhere, with or without Punkt.
    assert nltk_word_tokens("Really? Yes! Fine.") == ["Really", "?", "Yes", "!", "Fine", "."]


def split_inner_periods(tokens: list[str]) -> list[str]:
    """Every word with a glued final period that is not the text's last token, split as Punkt would if it
    ended a sentence there (an upper bound: Punkt's English model knows abbreviations such as u.s. or dr.)."""
    split = []
    for position, token in enumerate(tokens):
        if position < len(tokens) - 1 and len(token) > 1 and token.endswith(".") and token[-2] != ".":
            split += [token[:-1], "."]
        else:
            split.append(token)
    return split


def test_punkt_difference_on_cnndm_is_bounded(cnndm_tokens) -> None:
    """On 2,000 CNN/DailyMail examples (PTB-tokenized, so inner sentence periods already stand alone), 544
    of 8,000 texts hold a word with a glued period before their end ('u.s.' 344 times, 'dr.', 'jr.',
    'u.n.', 'a.m.', 'st.', ...). Splitting all of them, the most Punkt could do, moves each system's mean
    METEOR by less than 5e-4 (single examples by up to 0.1)."""
    options = MeteorOptions(synonyms=False)
    texts = [tokens[field] for tokens in cnndm_tokens for field in FIELDS]
    affected = sum(split_inner_periods(tokens) != tokens for tokens in texts)
    assert (len(texts), affected) == (8000, 544)
    references = [[tokens["reference"]] for tokens in cnndm_tokens]
    split_references = [[split_inner_periods(group[0])] for group in references]
    for system in SYSTEMS:
        predictions = [tokens[system] for tokens in cnndm_tokens]
        ours = meteor_scores(predictions, references, options)
        punkt_bound = meteor_scores([split_inner_periods(tokens) for tokens in predictions], split_references, options)
        shift = abs(math.fsum(ours) - math.fsum(punkt_bound)) / len(ours)
        assert shift < 5e-4, f"{system}: mean moves by {shift}"
        assert max(abs(a - b) for a, b in zip(ours, punkt_bound, strict=True)) < 0.15


# Porter stemmer: NLTK's PorterStemmer().stem, reimplemented.


def porter_words(rng: random.Random, count: int) -> list[str]:
    """Random strings over letters that exercise the consonant/vowel rules (y runs), suffixes and odd characters."""
    letters = "aeiouybcdlstzgnmrwx"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(1, 12))) for _ in range(count)]
    odd = "yay*dİSsEDINGIES'-.1é"
    words += ["".join(rng.choice(odd) for _ in range(rng.randint(1, 8))) for _ in range(count // 5)]
    edge_cases = "a*d ba*d yyyy y yy ied eed ing ed dying SKIES Dying ies xies ll controll ALLI radicalli analogi logi"
    return words + edge_cases.split() + ["generously", "happiness"]


def check_porter(words: list[str]) -> None:
    from nltk.stem.porter import PorterStemmer

    stemmer = PorterStemmer()
    assert [word for word in words if porter_stem_uncached(word) != stemmer.stem(word)] == []


@needs_wordnet
def test_porter_stems_match_nltk_on_wordnet_sample_and_random_words() -> None:
    wordnet = load_wordnet(DEBIAN_WORDNET)
    words = [*list(wordnet.index_lemmas())[::6], *wordnet.exception_forms(), *porter_words(random.Random(8), 10000)]
    assert len(words) > 40000
    check_porter(words)


@pytest.mark.slow
@needs_wordnet
def test_porter_stems_match_nltk_on_every_wordnet_lemma_and_400k_random_words() -> None:
    wordnet = load_wordnet(DEBIAN_WORDNET)
    words = [*wordnet.index_lemmas(), *wordnet.exception_forms(), *porter_words(random.Random(9), 400000)]
    assert len(words) > 600000
    check_porter(words)


def test_porter_stems_match_nltk_on_cnndm(cnndm_tokens) -> None:
    words = {token.lower() for tokens in cnndm_tokens for field in FIELDS for token in tokens[field]}
    assert len(words) > 20000
    check_porter(sorted(words))


def test_caches_are_process_wide_bounded_in_bytes_and_cleared() -> None:
    from metrics._core import core_process

    options = MeteorOptions(synonyms=False)
    meteor_scores(["the cats sat"], [["a cat sits"]], options)
    usage = core_process.cache_usage()
    for name in ("meteor.texts", "meteor.stems"):
        entries, size, limit = usage[name]
        assert entries > 0 and 0 < size <= limit <= 256 << 20
    # With a small limit, many long texts keep the cache within it (entries evicted, scores unchanged).
    rng = random.Random(3)
    texts = [" ".join(rng.choice("abcdefgh") * rng.randint(1, 9) for _ in range(300)) for _ in range(200)]
    expected = meteor_scores(texts, [[text[::-1]] for text in texts], options)
    core_process.set_cache_limit("meteor.texts", 1 << 18)
    try:
        core_process.clear_caches()
        assert meteor_scores(texts, [[text[::-1]] for text in texts], options) == expected
        entries, size, limit = core_process.cache_usage()["meteor.texts"]
        assert size <= limit == 1 << 18 and 0 < entries < 400
    finally:
        core_process.set_cache_limit("meteor.texts", core_meteor.TEXT_CACHE_BYTES)
    core_process.clear_caches()
    assert core_process.cache_usage()["meteor.texts"][:2] == (0, 0)
    assert core_process.cache_usage()["meteor.stems"][:2] == (0, 0)
