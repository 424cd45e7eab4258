"""chrF/chrF++ core: hand-computed cases, and parity with the oracle, sacreBLEU 2.6.0 (test-only).

Parity: per-example statistics must equal sacreBLEU's exactly (integers), corpus and sentence scores within
1e-9 (they are bit-identical in practice: the score arithmetic is sacreBLEU's, operation for operation).
Bootstrap intervals and paired tests run on our statistics through core_resample; sacreBLEU resamples in
float32 (see test_resampling_matches_sacrebleu for the tolerance).
"""

from __future__ import annotations

import math
import random
from collections import Counter
import warnings

import numpy as np
import pytest
from sacrebleu.metrics.chrf import CHRF
from sacrebleu.significance import PairedTest

from conftest import sentence_and_corpus_scores
from generated_text import padded_streams, random_corpus, random_text, similar_text
from metrics._core import core_chrf, core_chrf_counting, core_resample
from metrics._core.core_chrf import ChrfOptions

TOLERANCE = 1e-9


def oracle(predictions: list[str], references: list[list[str]], options: dict):
    """sacreBLEU's per-example statistics, sentence scores and corpus score (ragged references padded)."""
    metric = CHRF(**options)
    streams = padded_streams(references)
    statistics = metric._extract_corpus_statistics(predictions, streams)
    sentences = [metric._compute_score_from_stats(row).score for row in statistics]
    return statistics, sentences, metric.corpus_score(predictions, streams), metric


def ours(predictions: list[str], references: list[list[str]], options: dict):
    chrf_options = ChrfOptions(**options)
    rows = core_chrf.chrf_rows(predictions, references, chrf_options)
    schema = core_chrf.chrf_schema(chrf_options)
    sentences, corpus = sentence_and_corpus_scores(schema, rows, chrf_options.stats_signature(),
                                                   core_chrf.chrf_from_totals, chrf_options)
    return rows, sentences, corpus


def compare(predictions, references, options: dict, context: str = "") -> tuple[int, int]:
    """Assert parity; return (scores compared, scores bit-identical)."""
    their_rows, their_sentences, their_corpus, metric = oracle(predictions, references, options)
    our_rows, our_sentences, our_corpus = ours(predictions, references, options)
    assert [list(row[:-2]) for row in our_rows] == [list(row) for row in their_rows], context
    compared = identical = 0
    for index, (mine, theirs) in enumerate(zip([*our_sentences, our_corpus["score"]], [*their_sentences, their_corpus.score], strict=True)):
        assert abs(mine - theirs) <= TOLERANCE, f"{context} score {index}: {mine} vs {theirs}"
        compared += 1
        identical += mine == theirs
    assert our_corpus["signature"] == metric.get_signature().format(), context
    assert (our_corpus["char_order"], our_corpus["word_order"], our_corpus["beta"]) == (
        metric.char_order,
        metric.word_order,
        metric.beta,
    )
    return compared, identical


# --- hand-computed ------------------------------------------------------------------------------------------


def test_remove_punctuation_splits_one_mark_from_the_end_else_the_start() -> None:
    # sacreBLEU's chrF++ words (and its documented quirk: '(hi)' -> '(hi', ')').
    assert core_chrf.remove_punctuation("(hi) there, 'friend ... a .") == [
        "(hi", ")", "there", ",", "'", "friend", "..", ".", "a", "."
    ]


def test_match_statistics_by_hand() -> None:
    options = ChrfOptions(char_order=2)
    # hypothesis "abab": a2 b2 | ab2 ba1; reference "abba": a2 b2 | ab1 bb1 ba1
    row = core_chrf.chrf_rows(["ab ab"], [["ab ba"]], options)[0]
    assert row == (4, 4, 4, 3, 3, 2, 1, 1)
    # precision = recall = (4/4 + 2/3) / 2 = 5/6 at effective order 2; F2 = 5/6
    totals = core_chrf.chrf_schema(options).totals_of_rows([row], options.stats_signature())
    assert core_chrf.chrf_from_totals(totals, options)["score"] == pytest.approx(100 * 5 / 6, rel=1e-15)


def test_repeated_ngrams_are_clipped_including_overlapping_ones() -> None:
    options = ChrfOptions(char_order=3)
    # "aaaa" vs "aaa": a 4|3 -> 3; aa 3|2 -> 2; aaa 2|1 -> 1 (occurrences of 'aa' overlap)
    assert core_chrf.chrf_rows(["aaaa"], [["aaa"]], options)[0][:9] == (4, 3, 3, 3, 2, 2, 2, 1, 1)
    # "abcabc" vs "abcxabc": 'abc' twice in both -> 2 (no overlap possible)
    row = core_chrf.chrf_rows(["abcabc"], [["abcxabc"]], options)[0]
    assert row[6:9] == (4, 5, 2)  # abc bca cab abc | abc bcx cxa xab abc: abc 2, bca 0, cab 0
    # 'aba' overlaps itself: "ababa" holds it twice
    assert core_chrf.chrf_rows(["ababa"], [["aba aba"]], options)[0][6:9] == (3, 4, 2)


def test_effective_order_and_epsilon_smoothing_by_hand() -> None:
    # hypothesis "ab", reference "abcd", 6 character orders: only orders 1-2 have hypothesis n-grams.
    row = core_chrf.chrf_rows(["ab"], [["abcd"]], ChrfOptions())[0][:-2]
    assert row == (2, 4, 2, 1, 3, 1, 0, 2, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0)
    # effective order 2: precision 1, recall (1/2 + 1/3) / 2 = 5/12, F2 = 5 * 5/12 / (4 + 5/12) = 25/53
    assert core_chrf.chrf_f_score(row, beta=2, eps_smoothing=False) == pytest.approx(100 * 25 / 53, rel=1e-15)
    # epsilon smoothing: F per order 5/9, 5/13, then 0, 0 (recall 0), then eps, eps (no n-grams on either side)
    expected = 100 * (5 / 9 + 5 / 13 + 2e-16) / 6
    assert core_chrf.chrf_f_score(row, beta=2, eps_smoothing=True) == pytest.approx(expected, rel=1e-15)
    # beta 1: plain F1 of the averaged precision and recall
    assert core_chrf.chrf_f_score(row, beta=1, eps_smoothing=False) == pytest.approx(
        100 * 2 * (5 / 12) / (1 + 5 / 12), rel=1e-15
    )


def test_empty_hypothesis_and_reference() -> None:
    options = ChrfOptions(char_order=2)
    assert core_chrf.chrf_rows([""], [["ab"]], options)[0] == (0, 2, 0, 0, 1, 0, 1, 1)
    assert core_chrf.chrf_rows(["ab"], [[""]], options)[0] == (0, 0, 0, 0, 0, 0, 1, 1)
    assert core_chrf.chrf_f_score([0, 0, 0, 0, 0, 0], beta=2, eps_smoothing=False) == 0.0


def test_signature_and_result_keys() -> None:
    options = ChrfOptions(word_order=2, lowercase=True, eps_smoothing=True, whitespace=True)
    rows = core_chrf.chrf_rows(["a b"], [["a b", "b a"]], options)
    totals = core_chrf.chrf_schema(options).totals_of_rows(rows, options.stats_signature())
    result = core_chrf.chrf_from_totals(totals, options, resampling={"bs": 1000, "seed": 12345})
    assert set(result) == {"score", "char_order", "word_order", "beta", "signature"}
    assert result["signature"] == "nrefs:2|bs:1000|seed:12345|case:lc|eff:no|nc:6|nw:2|space:yes|version:2.6.0"
    default = ChrfOptions()
    totals = core_chrf.chrf_schema(default).totals_of_rows(
        core_chrf.chrf_rows(["a", "b"], [["a"], ["b", "c"]], default), default.stats_signature()
    )
    assert core_chrf.chrf_from_totals(totals, default)["signature"] == (
        "nrefs:var|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0"
    )


def test_bad_options_are_rejected() -> None:
    with pytest.raises(TypeError, match="chrf: `char_order` must be an integer"):
        ChrfOptions(char_order=2.5)
    with pytest.raises(ValueError, match="chrf: `word_order` must be at least 0"):
        ChrfOptions(word_order=-1)
    with pytest.raises(ValueError, match="both 0"):
        ChrfOptions(char_order=0, word_order=0)
    with pytest.raises(TypeError, match="chrf: `lowercase` must be True or False"):
        ChrfOptions(lowercase="yes")
    with pytest.raises(ValueError, match="chrf: `beta` must be at least 0"):
        ChrfOptions(beta=-1)


def test_statistics_signature_separates_options_that_pick_the_reference() -> None:
    signatures = {
        ChrfOptions(**options).stats_signature()
        for options in ({}, {"beta": 3}, {"eps_smoothing": True}, {"lowercase": True}, {"whitespace": True},
                        {"char_order": 5}, {"word_order": 2})
    }
    assert len(signatures) == 7


def test_lowercase_and_whitespace_options_shape_the_statistics() -> None:
    text = "Der Hund"
    mixed = core_chrf.chrf_rows(["der hund"], [[text]], ChrfOptions())
    lower = core_chrf.chrf_rows(["der hund"], [[text]], ChrfOptions(lowercase=True))
    spaced = core_chrf.chrf_rows(["der hund"], [[text]], ChrfOptions(whitespace=True, lowercase=True))
    # character unigrams matched: "erhund" (5 of "derhund" vs "DerHund" mixed-case: d, H differ -> 5),
    # lowercased 7, with the space kept 8
    assert mixed[0][2] == 5 and lower[0][2] == 7 and spaced[0][2] == 8
    assert core_chrf.chrf_rows(["der hund"], [[text]], ChrfOptions()) == mixed


def test_shards_merge_to_the_one_shot_totals() -> None:
    rng = random.Random(3)
    predictions, references = random_corpus(rng, 60)
    options = ChrfOptions(word_order=2)
    schema = core_chrf.chrf_schema(options)
    rows = core_chrf.chrf_rows(predictions, references, options)
    signature = options.stats_signature()
    whole = schema.totals_of_rows(rows, signature)
    shards = [schema.totals_of_rows(rows[start : start + 7], signature) for start in range(0, len(rows), 7)]
    assert schema.merge(*shards) == whole
    assert core_chrf.chrf_from_totals(schema.merge(*shards), options) == core_chrf.chrf_from_totals(whole, options)


# --- parity: generated text ---------------------------------------------------------------------------------

OPTION_GRID = (
    {},
    {"word_order": 2},
    {"word_order": 1},
    {"char_order": 4},
    {"char_order": 1},
    {"beta": 1},
    {"beta": 3},
    {"lowercase": True},
    {"whitespace": True},
    {"eps_smoothing": True},
    {"word_order": 2, "eps_smoothing": True, "lowercase": True},
    {"char_order": 0, "word_order": 2},
    {"whitespace": True, "word_order": 2, "beta": 1},
)


def long_text(rng: random.Random) -> str:
    """A segment of 200-400 tokens (several generated segments joined)."""
    text = ""
    while len(text.split()) < 200:
        text += " " + random_text(rng, max_tokens=60)
    return text


def test_generated_corpora() -> None:
    """3,000 generated corpora: every script, empty strings, 1-4 ragged references, every option set."""
    rng = random.Random(17)
    compared = identical = 0
    for case in range(3000):
        predictions, references = random_corpus(rng, rng.randint(1, 5))
        if case % 50 == 0:
            # long segments: a long reference and an edited copy as hypothesis
            reference = long_text(rng)
            predictions.append(similar_text(rng, reference))
            references.append([reference, long_text(rng)])
        if case % 7 == 0:
            # duplicated references and a hypothesis equal to one of them: ties between references
            predictions.append(references[0][0])
            references.append([references[0][0], references[0][0], similar_text(rng, references[0][0])])
        options = OPTION_GRID[case % len(OPTION_GRID)]
        counts = compare(predictions, references, options, f"case {case} {options}")
        compared += counts[0]
        identical += counts[1]
    assert compared > 12000
    assert identical == compared, f"{compared - identical} of {compared} scores equal within 1e-9 but not bitwise"


# --- counting all pairs of a chunk at once -----------------------------------------------------------------


def test_random_alphabets_and_orders_against_sacrebleu() -> None:
    """Random texts over an alphabet with punctuation, whitespace kinds, astral and combining characters,
    random orders (up to 9 characters, 4 words) and options: statistics equal sacreBLEU's."""
    rng = random.Random(5)
    alphabet = "ab ab.,()'\"-x\t\n\u00a0\u3000\u00e9e\u0301\u4e00\U0001f600A"
    compared = 0
    for case in range(600):
        pairs = rng.randint(1, 6)
        predictions = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(pairs)]
        references = [["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))] for _ in range(pairs)]
        char_order, word_order = rng.choice([(6, 0), (6, 2), (1, 1), (9, 4), (2, 0), (3, 1)])
        options = {"char_order": char_order, "word_order": word_order, "lowercase": rng.random() < 0.5,
                   "whitespace": rng.random() < 0.5}
        compare(predictions, references, options, f"case {case} {options}")
        compared += pairs
    assert compared > 1800


def test_pairs_are_sorted_in_chunks_bounded_in_characters_and_pairs(monkeypatch) -> None:
    monkeypatch.setattr(core_chrf_counting, "MAX_CHUNK_CHARACTERS", 10)
    monkeypatch.setattr(core_chrf_counting, "MAX_CHUNK_PAIRS", 2)
    # pair sizes 4, 4, 0, 11: two pairs fill a chunk; the 11-character pair exceeds the budget alone
    chunks = core_chrf_counting.pair_chunks(["abc", "de", "", "fghijklmno"], ["x", "yz", "", "p"])
    assert chunks == [slice(0, 2), slice(2, 3), slice(3, 4)]
    predictions, references = random_corpus(random.Random(8), 40)
    options = ChrfOptions(word_order=2)
    chunked = core_chrf.chrf_rows(predictions, references, options)
    monkeypatch.undo()
    assert chunked == core_chrf.chrf_rows(predictions, references, options)


def test_key_words_by_hand() -> None:
    # WMT17 en-de: 3,004 pairs (12 bits), 113 characters + padding (7 bits), 6 orders: 12 + 42 + 1 = 55 bits
    assert core_chrf_counting.key_words(12, 7, 6) == [(55, 0, 6)]
    # 3,000 characters (12 bits) at 6 orders for 20 pairs (5 bits): 5 + 4 x 12 = 53 (a fifth symbol would make
    # 65), then 2 x 12 + 1 = 25
    assert core_chrf_counting.key_words(5, 12, 6) == [(53, 0, 4), (25, 4, 2)]
    # the whole of Unicode (21 bits), 2 pairs (1 bit): 1 + 3 x 21 = 64 fills a word, so the reference bit takes
    # a word of its own; at 9 orders the third word holds 3 x 21 + 1 = 64
    assert core_chrf_counting.key_words(1, 21, 3) == [(64, 0, 3), (1, 3, 0)]
    assert core_chrf_counting.key_words(1, 21, 9) == [(64, 0, 3), (63, 3, 3), (64, 6, 3)]


@pytest.mark.parametrize(("pairs", "alphabet_size", "max_order"), [(2, 4, 3), (2, 2**20, 3), (3, 2**20, 7), (5, 70, 9)])
def test_match_counts_equal_counting_by_hand(pairs: int, alphabet_size: int, max_order: int) -> None:
    """Symbol sequences over 4 ids, with ``alphabet_size`` only widening the keys (2 pairs at 21 bits: the
    reference bit takes a word of its own), against clipped counts of n-gram tuples."""
    rng = np.random.default_rng(pairs * max_order)
    for _ in range(50):
        lengths = rng.integers(0, 25, size=2 * pairs)
        symbols = rng.integers(1, 5, size=int(lengths.sum())).astype(np.uint64)
        texts = np.split(symbols.tolist(), np.cumsum(lengths)[:-1])
        expected = np.zeros((pairs, max_order), dtype=np.int64)
        for pair in range(pairs):
            hypothesis, reference = list(texts[pair]), list(texts[pairs + pair])
            for order in range(1, max_order + 1):
                grams = [Counter(tuple(text[i:i + order]) for i in range(len(text) - order + 1))
                         for text in (hypothesis, reference)]
                expected[pair, order - 1] = sum((grams[0] & grams[1]).values())
        got = core_chrf_counting.match_counts(symbols, lengths, alphabet_size, pairs, max_order)
        assert (got == expected).all()


@pytest.mark.parametrize("alphabet_size", [3000, 60000])
def test_large_alphabets_take_keys_of_several_words(alphabet_size: int) -> None:
    rng = random.Random(alphabet_size)
    characters = [chr(0x4E00 + index) for index in range(min(alphabet_size, 20000))]
    characters += [chr(0x20000 + index) for index in range(alphabet_size - len(characters))]
    half = len(characters) // 2
    predictions = ["".join(rng.choice(characters[: half + 50]) for _ in range(80)) for _ in range(20)]
    # references share part of the alphabet, and some copy a stretch of their hypothesis
    references = [["".join(rng.choice(characters[half - 50 :]) for _ in range(60)) + predictions[i][10:40]]
                  for i in range(20)]
    for options in ({}, {"word_order": 2, "char_order": 9}):
        compare(predictions, references, options, f"{alphabet_size} characters {options}")


# --- parity: WMT17 ------------------------------------------------------------------------------------------


def wmt_references(wmt17, ragged: bool) -> list[list[str]]:
    references, systems = wmt17
    if not ragged:
        return [[reference] for reference in references]
    # other systems' outputs as extra references, one of them on every third segment only (ragged)
    second = systems["online-A.0"]
    third = systems["uedin-nmt.4722"]
    return [
        [reference, extra] + ([other] if index % 3 == 0 else [])
        for index, (reference, extra, other) in enumerate(zip(references, second, third, strict=True))
    ]


@pytest.mark.parametrize("options", [{}, {"word_order": 2}, {"eps_smoothing": True, "beta": 3}, {"whitespace": True, "lowercase": True}], ids=str)
def test_wmt17_subset(wmt17, options: dict) -> None:
    """Two systems, the first 300 segments, single and ragged multiple references."""
    _, systems = wmt17
    for name in ("KIT.4950", "PROMT-Rule-based.4735"):
        for ragged in (False, True):
            references = wmt_references(wmt17, ragged)[:300]
            compare(systems[name][:300], references, options, f"{name} ragged={ragged}")


WMT_OPTIONS = OPTION_GRID[:11]


@pytest.mark.slow
@pytest.mark.parametrize("options", WMT_OPTIONS, ids=str)
def test_wmt17_all_systems(wmt17, options: dict) -> None:
    """All 16 systems, full test set: corpus score and all 3,004 sentence scores per system."""
    _, systems = wmt17
    references = wmt_references(wmt17, ragged=False)
    compared = identical = 0
    for name, hypotheses in systems.items():
        counts = compare(hypotheses, references, options, name)
        compared += counts[0]
        identical += counts[1]
    assert compared == 16 * 3005
    print(f"chrF {options}: {compared} scores, {identical} bit-identical")


@pytest.mark.slow
def test_wmt17_all_systems_ragged_references(wmt17) -> None:
    _, systems = wmt17
    references = wmt_references(wmt17, ragged=True)
    for options in ({}, {"word_order": 2}, {"eps_smoothing": True}):
        for name, hypotheses in systems.items():
            compare(hypotheses, references, options, f"{name} {options}")


# --- resampling ---------------------------------------------------------------------------------------------

# sacreBLEU resamples float32 statistics, so its bootstrap scores are computed in float32 (numpy float32
# scalars through the F-score): each carries a relative error of at most ~50 roundings of 2**-24 (3e-6),
# 3e-4 on the 0-100 scale. Means and percentile bounds move by no more than the largest such error.
# The sums themselves are exact (integers below 2**24). Approximate randomization sums int64 in both.
RESAMPLING_TOLERANCE = 5e-4


def stats_matrix(rows, options: ChrfOptions) -> np.ndarray:
    return core_resample.as_stats_matrix([row[: 3 * options.order] for row in rows])


def check_resampling(wmt17, pairs, n_bootstrap: int, n_trials: int, limit: int, option_sets) -> float:
    """Assert agreement with sacreBLEU's bootstrap and paired tests; return the largest score deviation."""
    _, all_systems = wmt17
    systems = {name: hypotheses[:limit] for name, hypotheses in all_systems.items()}
    references = wmt_references(wmt17, ragged=False)[:limit]
    plain = [reference for (reference,) in references]
    worst = 0.0
    for options in option_sets:
        chrf_options = ChrfOptions(**options)
        score = core_chrf.chrf_score_of_row(chrf_options)
        for baseline, system in pairs:
            baseline_stats = stats_matrix(core_chrf.chrf_rows(systems[baseline], references, chrf_options), chrf_options)
            system_stats = stats_matrix(core_chrf.chrf_rows(systems[system], references, chrf_options), chrf_options)
            theirs = CHRF(**options).corpus_score(systems[system], [plain], n_bootstrap=n_bootstrap)
            interval = core_resample.bootstrap_interval(system_stats, score, n_samples=n_bootstrap)
            worst = max(worst, abs(interval.mean - theirs._mean), abs(interval.half_width - theirs._ci))
            named = [(baseline, systems[baseline]), (system, systems[system])]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _, bs = PairedTest(named, {"chrF": CHRF(**options)}, [plain], test_type="bs", n_samples=n_bootstrap)()
                _, ar = PairedTest(named, {"chrF": CHRF(**options)}, [plain], test_type="ar", n_samples=n_trials)()
            (name,) = [key for key in bs if key != "System"]
            paired = core_resample.paired_bootstrap_test(baseline_stats, system_stats, score, n_samples=n_bootstrap)
            randomized = core_resample.approximate_randomization_test(
                baseline_stats, system_stats, score, n_samples=n_trials
            )
            # p-values count resampled differences above the observed one: float32 can move a difference that
            # lies within 3e-4 of it across; allow one such count in the paired bootstrap.
            assert abs(paired.p_value - bs[name][1].p_value) <= 1 / (n_bootstrap + 1) + 1e-12, (baseline, system)
            assert randomized.p_value == ar[name][1].p_value, (baseline, system)
            assert abs(paired.system_score - bs[name][1].score) <= TOLERANCE
            worst = max(worst, abs(bs[name][1].mean - interval.mean), abs(bs[name][1].ci - interval.half_width))
    assert worst <= RESAMPLING_TOLERANCE
    return worst


def test_resampling_matches_sacrebleu(wmt17) -> None:
    check_resampling(wmt17, [("online-A.0", "online-B.0")], n_bootstrap=200, n_trials=1000, limit=1000,
                     option_sets=[{}])


@pytest.mark.slow
def test_resampling_matches_sacrebleu_wmt17_pairs(wmt17) -> None:
    pairs = [("online-A.0", "online-B.0"), ("uedin-nmt.4722", "KIT.4950"), ("LMU-nmt-single.4893", "LMU-nmt-reranked.4934")]
    worst = check_resampling(wmt17, pairs, n_bootstrap=1000, n_trials=10000, limit=3004,
                             option_sets=[{}, {"word_order": 2}])
    print(f"chrF resampling: largest deviation from sacreBLEU's float32 bootstrap {worst:.2e}")


def test_score_of_row_equals_the_result_score() -> None:
    rng = random.Random(5)
    predictions, references = random_corpus(rng, 40)
    for options in (ChrfOptions(), ChrfOptions(word_order=2, eps_smoothing=True)):
        rows = core_chrf.chrf_rows(predictions, references, options)
        totals = core_chrf.chrf_schema(options).totals_of_rows(rows, options.stats_signature())
        summed = np.asarray(rows).sum(axis=0)
        assert core_chrf.chrf_score_of_row(options)(summed) == core_chrf.chrf_from_totals(totals, options)["score"]
        assert not math.isnan(core_chrf.chrf_score_of_row(options)(np.zeros(len(rows[0]), dtype=np.int64)))
