"""TER core: hand-computed cases, and parity with the oracle, sacreBLEU 2.6.0's TER (test-only).

Parity: per-example statistics (fewest edits, average reference length) must equal sacreBLEU's exactly, and
sentence and corpus scores within 1e-9 (the corpus reference length is summed with ``fsum``, sacreBLEU's left
to right: with several references they may differ in the last bits). Cases: a WMT17 subset, and generated
corpora from fixed seeds with empty texts, several scripts, CJK and kana runs, 200+ token segments and
heavy block reorderings (shifts), under every option combination; the slow test runs all 16 WMT17 systems.
"""

from __future__ import annotations

import itertools
import math
import random

import pytest
from sacrebleu.metrics.ter import TER
from sacrebleu.utils import sum_of_lists

from conftest import sentence_and_corpus_scores
from generated_text import WORDS, edited_words, padded_streams, random_text, similar_text
from metrics._core import core_ter, core_ter_align
from metrics._core.core_ter import TerOptions
from metrics._core.core_ter_tokenize import TercomTokenizer

TOLERANCE = 1e-9
FLAGS = ("normalized", "ignore_punct", "support_zh_ja_chars", "case_sensitive")
SACREBLEU_NAMES = {"normalized": "normalized", "ignore_punct": "no_punct",
                   "support_zh_ja_chars": "asian_support", "case_sensitive": "case_sensitive"}
COMBINATIONS = [dict(zip(FLAGS, values, strict=True)) for values in itertools.product((False, True), repeat=4)]

# A small vocabulary (so words repeat and shifts have candidates), several scripts, kana and CJK runs.
SMALL_VOCABULARY = "the a of cat dog sat on mat and to in is was it Haus über 東京 我们 テスト ひらがな мир , . ' \" (".split()


def oracle(predictions: list[str], references: list[list[str]], options: dict):
    """sacreBLEU's per-example statistics, sentence scores, corpus score and signature (ragged references padded
    with None, as sacreBLEU takes them)."""
    metric = TER(**{SACREBLEU_NAMES[name]: value for name, value in options.items()})
    statistics = metric._extract_corpus_statistics(predictions, padded_streams(references))
    sentences = [metric._compute_score_from_stats(row).score for row in statistics]
    corpus = metric._aggregate_and_compute(statistics)
    return statistics, sentences, corpus, metric.get_signature().format()


def ours(predictions: list[str], references: list[list[str]], options: dict):
    ter_options = TerOptions(**options)
    rows = core_ter.ter_rows(predictions, references, ter_options)
    sentences, corpus = sentence_and_corpus_scores(core_ter.ter_schema(), rows, ter_options.stats_signature(),
                                                   core_ter.ter_from_totals, ter_options)
    return rows, sentences, corpus


def compare(predictions, references, options: dict, context: str = "") -> tuple[int, int]:
    """Assert parity; return (examples compared, scores compared)."""
    their_rows, their_sentences, their_corpus, their_signature = oracle(predictions, references, options)
    our_rows, our_sentences, our_corpus = ours(predictions, references, options)
    for index, (mine, theirs) in enumerate(zip(our_rows, their_rows, strict=True)):
        assert (mine[0], mine[1]) == (theirs[0], theirs[1]), f"{context} example {index}: {mine} vs {theirs}"
    scores = zip([*our_sentences, our_corpus["score"]], [*their_sentences, their_corpus.score], strict=True)
    for index, (mine, theirs) in enumerate(scores):
        assert abs(mine - theirs) <= TOLERANCE, f"{context} score {index}: {mine} vs {theirs}"
    assert our_corpus["num_edits"] == their_corpus.num_edits, context
    assert abs(our_corpus["ref_length"] - their_corpus.ref_length) <= TOLERANCE * max(1.0, their_corpus.ref_length)
    assert our_corpus["signature"] == their_signature, context
    return len(our_rows), len(our_sentences) + 1


# --- generated TER cases ------------------------------------------------------------------------------------


# Long segments draw from a larger vocabulary (real text repeats few words far apart; sacreBLEU's search
# takes minutes on a 250-word segment of 30 distinct words).
LARGE_VOCABULARY = [*WORDS, *(f"w{index}" for index in range(400))]


def _words(rng: random.Random, length: int) -> list[str]:
    if length > 60:
        vocabulary = LARGE_VOCABULARY
    else:
        vocabulary = SMALL_VOCABULARY if rng.random() < 0.3 else WORDS
    return [rng.choice(vocabulary) for _ in range(length)]


def reordered(rng: random.Random, words: list[str], moves: int | None = None) -> list[str]:
    """``words`` cut into blocks of 1..12 of which some are swapped (some far), then lightly edited."""
    if not words:
        return []
    blocks, position = [], 0
    while position < len(words):
        size = rng.randint(1, 12)
        blocks.append(words[position : position + size])
        position += size
    for _ in range(rng.randint(1, max(1, min(len(blocks), 6))) if moves is None else moves):
        i, j = rng.randrange(len(blocks)), rng.randrange(len(blocks))
        blocks[i], blocks[j] = blocks[j], blocks[i]
    moved = [word for block in blocks for word in block]
    return edited_words(rng, moved, SMALL_VOCABULARY, drop_below=0.05, substitute_below=0.1, insert_below=0.13)


def ter_case(rng: random.Random, long_share: float = 0.006) -> tuple[str, list[str]]:
    """A prediction and 1..4 references: empty texts, mixed scripts, long (200+ token) and reordered segments,
    very unequal lengths (sacreBLEU's beam), and generic awkward text."""
    roll = rng.random()
    if roll < long_share:
        reference = _words(rng, rng.randint(200, 300))
        prediction = reordered(rng, reference, moves=rng.randint(1, 3))
        return " ".join(prediction), [" ".join(reference)]
    if roll < 0.4:
        prediction = random_text(rng)
        return prediction, [similar_text(rng, prediction) for _ in range(rng.randint(1, 4))]
    if roll < 0.45:  # one side much longer than the other: the beam's corners matter
        short = _words(rng, rng.randint(0, 30))
        long = short + _words(rng, rng.randint(60, 200))
        rng.shuffle(long)
        pair = [" ".join(short), " ".join(long)]
        rng.shuffle(pair)
        return pair[0], [pair[1]] + ([" ".join(_words(rng, rng.randint(0, 40)))] if rng.random() < 0.3 else [])
    reference = _words(rng, rng.randint(0, 20))
    references = [" ".join(reference)]
    references += [" ".join(reordered(rng, reference)) for _ in range(rng.randint(0, 2))]
    if rng.random() < 0.05:
        references.append("")
    prediction = " ".join(reordered(rng, reference)) if rng.random() < 0.95 else ""
    rng.shuffle(references)
    return prediction, references


def generated_corpora(seed: int, cases: int, size: int = 10):
    rng = random.Random(seed)
    for start in range(0, cases, size):
        options = rng.choice(COMBINATIONS)
        pairs = [ter_case(rng) for _ in range(size)]
        yield [pair[0] for pair in pairs], [pair[1] for pair in pairs], options, f"seed {seed} case {start}"


# --- hand-computed ------------------------------------------------------------------------------------------


def test_one_shift_and_one_substitution_by_hand() -> None:
    # "b c a d" -> "a b c e": shift "a" to the front (1 shift), then substitute d -> e (1): 2 edits / 4 words.
    rows = core_ter.ter_rows(["b c a d"], [["a b c e"]], TerOptions())
    assert rows == [(2, 4.0, 1, 1)]
    totals = core_ter.ter_schema().totals_of_rows(rows, TerOptions().stats_signature())
    result = core_ter.ter_from_totals(totals, TerOptions())
    assert result["score"] == 50.0 and result["num_edits"] == 2 and result["ref_length"] == 4.0


def test_best_reference_edits_and_average_reference_length() -> None:
    # edits: 4 against "x y z w" (3 substitutions, 1 insertion), 0 against "a b c"; the row keeps the fewest
    # edits (0) and the average reference length (4 + 3) / 2.
    rows = core_ter.ter_rows(["a b c"], [["x y z w", "a b c"]], TerOptions())
    assert rows == [(0, 3.5, 2, 2)]


def test_empty_texts() -> None:
    options = TerOptions()
    assert core_ter.ter_rows(["", "a b", ""], [[""], [""], ["a b c"]], options) == [
        (0, 0.0, 1, 1), (2, 0.0, 1, 1), (3, 3.0, 1, 1)
    ]
    assert core_ter.ter_score(0, 0) == 0.0 and core_ter.ter_score(2, 0) == 100.0


def test_references_are_tokenized_twice_as_sacrebleu_does() -> None:
    # sacreBLEU tokenizes a reference when caching references and again when extracting its words; with
    # normalisation this is not idempotent: "it's." -> "it's ." -> "it 's ."
    tokenizer = TercomTokenizer(normalized=True)
    assert tokenizer("it's.").split() == ["it's", "."]
    assert core_ter.reference_words("it's.", tokenizer) == ["it", "'s", "."]
    rows = core_ter.ter_rows(["it's."], [["it's."]], TerOptions(normalized=True))
    assert rows[0][:2] == (2, 3.0)
    compare(["it's."], [["it's."]], {"normalized": True})


def test_signature_and_options() -> None:
    totals = {"num_edits": 3, "ref_length": 10.0, "min_refs": 1, "max_refs": 2}
    assert core_ter.ter_from_totals(totals, TerOptions())["signature"] == (
        "nrefs:var|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.6.0"
    )
    options = TerOptions(normalized=True, ignore_punct=True, support_zh_ja_chars=True, case_sensitive=True)
    totals = {"num_edits": 3, "ref_length": 10.0, "min_refs": 1, "max_refs": 1}
    assert core_ter.ter_from_totals(totals, options)["signature"] == (
        "nrefs:1|case:mixed|tok:tercom|norm:yes|punct:no|asian:yes|version:2.6.0"
    )
    assert len({TerOptions(**combination).stats_signature() for combination in COMBINATIONS}) == 16
    with pytest.raises(TypeError, match="ter: `normalized` must be True or False"):
        TerOptions(normalized="yes")
    with pytest.raises(ValueError, match="no reference"):
        core_ter.ter_statistics(["a"], [])


def test_very_long_texts_get_a_score_or_a_clear_error() -> None:
    # 50,000 tokens against 5 (and the reverse): scored (in about a second); a pair beyond MAX_PAIR_CELLS
    # (sacreBLEU's search would take hours) is refused, naming the prediction.
    options = TerOptions()
    assert core_ter.ter_rows(["a b " * 25000], [["a b c d e"]], options)[0][:2] == (49998, 5.0)
    assert core_ter.ter_rows(["a b c d e"], [["a b " * 25000]], options)[0][:2] == (49998, 50000.0)
    with pytest.raises(ValueError, match=r"ter: a prediction of 3000 tokens .* too long .*predictions\[1\]"):
        core_ter.ter_rows(["a", "a " * 3000], [["a"], ["b " * 3000]], options)


def test_caches_never_serve_another_options_statistics() -> None:
    core_ter.clear_caches()
    lower = core_ter.ter_rows(["Der Hund"], [["der hund"]], TerOptions())
    mixed = core_ter.ter_rows(["Der Hund"], [["der hund"]], TerOptions(case_sensitive=True))
    assert lower[0][0] == 0 and mixed[0][0] == 2
    assert core_ter.ter_rows(["Der Hund"], [["der hund"]], TerOptions()) == lower


def test_shards_merge_to_the_one_shot_totals() -> None:
    rng = random.Random(3)
    pairs = [ter_case(rng) for _ in range(60)]
    options = TerOptions()
    rows = core_ter.ter_rows([pair[0] for pair in pairs], [pair[1] for pair in pairs], options)
    schema, signature = core_ter.ter_schema(), options.stats_signature()
    whole = schema.totals_of_rows(rows, signature)
    shards = [schema.totals_of_rows(rows[start : start + 7], signature) for start in range(0, len(rows), 7)]
    merged = schema.merge(*shards)
    assert merged["num_edits"] == whole["num_edits"] and math.isclose(merged["ref_length"], whole["ref_length"])


# --- the alignment against sacreBLEU's own functions ---------------------------------------------------------


def test_beam_edit_distance_and_trace_equal_sacrebleu() -> None:
    from sacrebleu.metrics.lib_ter import BeamEditDistance

    rng = random.Random(11)
    for _ in range(300):
        reference = _words(rng, rng.randint(1, 80))
        hypothesis = reordered(rng, reference) if rng.random() < 0.7 else _words(rng, rng.randint(0, 200))
        distance, trace = BeamEditDistance(reference)(hypothesis)
        assert core_ter_align.beam_edit_distance(hypothesis, reference) == (distance, trace)


def test_full_matrix_alignment_equals_the_beam_when_within_the_slack() -> None:
    # The bit-parallel full matrix is used only when its distance is below the beam's slack; then the
    # alignment must be the beam trace's.
    rng = random.Random(12)
    checked = 0
    for _ in range(300):
        reference = core_ter_align.ter_reference(_words(rng, rng.randint(1, 120)))
        hypothesis = reordered(rng, list(reference.words))
        state = core_ter_align._Hypothesis(hypothesis, reference)
        distance, trace = core_ter_align.beam_edit_distance(hypothesis, reference.words)
        assert state.distance() == distance
        flipped = trace.translate(str.maketrans("id", "di"))
        from sacrebleu.metrics.lib_ter import trace_to_alignment

        align, reference_errors, hypothesis_errors = trace_to_alignment(flipped)
        expected = ([align[j] for j in range(reference.length)], reference_errors, hypothesis_errors)
        assert state.alignment() == expected
        checked += state.exact
    assert checked > 200


# --- parity -------------------------------------------------------------------------------------------------


def test_parity_on_generated_cases() -> None:
    examples = scores = 0
    for predictions, references, options, context in generated_corpora(seed=2026, cases=1000):
        counted = compare(predictions, references, options, context)
        examples += counted[0]
        scores += counted[1]
    assert examples == 1000


def test_sentence_score_api_matches() -> None:
    rng = random.Random(5)
    for _ in range(40):
        prediction, references = ter_case(rng)
        options = rng.choice(COMBINATIONS)
        metric = TER(**{SACREBLEU_NAMES[name]: value for name, value in options.items()})
        expected = metric.sentence_score(prediction, references)
        _, sentences, corpus = ours([prediction], [references], options)
        assert abs(sentences[0] - expected.score) <= TOLERANCE
        assert corpus["num_edits"] == expected.num_edits


def test_parity_on_a_wmt17_subset(wmt17) -> None:
    references, systems = wmt17
    for name in list(systems)[:2]:
        for options in ({}, {"normalized": True, "ignore_punct": True, "case_sensitive": True}):
            compare(systems[name][:300], [[line] for line in references[:300]], options, name)


def test_statistics_equal_sacrebleu_sums() -> None:
    rng = random.Random(9)
    pairs = [ter_case(rng) for _ in range(30)]
    predictions, references = [pair[0] for pair in pairs], [pair[1] for pair in pairs]
    statistics, _, corpus, _ = oracle(predictions, references, {})
    assert sum_of_lists(statistics)[0] == corpus.num_edits


@pytest.mark.slow
def test_parity_on_all_wmt17_systems_and_many_generated_cases(wmt17) -> None:
    references, systems = wmt17
    examples = 0
    for options in COMBINATIONS:
        for name, hypotheses in systems.items():
            # every system in full with the default options; the first 100 segments under the other 15
            size = len(hypotheses) if options == COMBINATIONS[0] else 100
            compare(hypotheses[:size], [[line] for line in references[:size]], options, f"{name} {options}")
            examples += size
    generated = 0
    for predictions, references_, options, context in generated_corpora(seed=7, cases=3000):
        generated += compare(predictions, references_, options, context)[0]
    print(f"\nTER parity: {examples} WMT17 examples, {generated} generated examples, 0 mismatches")
