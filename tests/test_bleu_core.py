"""Hand-computed checks of the BLEU core helpers: n-grams, clipping, reference length, scores, statistics."""

from __future__ import annotations

import math

import pytest

from metrics._core import core_bleu, core_mt_signature, core_ngrams, core_stats


def test_ngram_counts_by_hand() -> None:
    counts = core_ngrams.ngram_counts(["a", "b", "a", "b"], 3)
    assert counts == {("a",): 2, ("b",): 2, ("a", "b"): 2, ("b", "a"): 1, ("a", "b", "a"): 1, ("b", "a", "b"): 1}


def test_clipped_matches_by_hand() -> None:
    # hypothesis "the the the the", reference "the cat the": unigram "the" clipped to 2;
    # bigram "the the" (3 in the hypothesis) absent from the reference.
    hypothesis = core_ngrams.ngram_counts("the the the the".split(), 2)
    reference = core_ngrams.ngram_counts("the cat the".split(), 2)
    assert core_ngrams.clipped_matches(hypothesis, reference, 2) == [2, 0]


def test_max_ngram_counts_takes_the_maximum_over_references() -> None:
    first = core_ngrams.ngram_counts("a a b".split(), 1)
    second = core_ngrams.ngram_counts("a b b b".split(), 1)
    assert core_ngrams.max_ngram_counts([first, second]) == {("a",): 2, ("b",): 3}


def test_closest_reference_length_prefers_the_shorter_on_ties() -> None:
    assert core_bleu.closest_reference_length(5, [3, 7, 9]) == 3
    assert core_bleu.closest_reference_length(5, [6, 4]) == 4
    assert core_bleu.closest_reference_length(5, [8, 6]) == 6


def test_statistics_by_hand() -> None:
    # hypothesis: "the cat sat on the mat" (6 tokens); references of 2 and 7 tokens.
    # closest length: |6-7| = 1 < |6-2| = 4 -> 7; shortest -> 2.
    hypothesis = "the cat sat on the mat".split()
    references = ["the cat".split(), "a cat sat on the red mat".split()]
    row = core_bleu.bleu_statistics(hypothesis, references, max_order=2, reference_length="closest")
    # unigrams: the(2 vs max 1) -> 1, cat 1, sat 1, on 1, mat 1 -> 5; bigrams: "the cat", "cat sat", "sat on",
    # "on the" match, "the mat" does not ("red mat") -> 4
    assert row == (6, 7, 5, 4, 6, 5, 2, 2)
    shortest = core_bleu.bleu_statistics(hypothesis, references, max_order=2, reference_length="shortest")
    assert shortest[1] == 2


def test_sacrebleu_score_by_hand() -> None:
    # counts 3/4, 1/3, 0/2, 0/1, sys_len 4 < ref_len 5: bp = exp(1 - 5/4).
    bp = math.exp(1 - 5 / 4)
    none = core_bleu.sacrebleu_score([3, 1, 0, 0], [4, 3, 2, 1], 4, 5, smooth_method="none")
    assert none["score"] == pytest.approx(bp * math.exp((math.log(75) + math.log(100 / 3) - 2 * 9999999999) / 4))
    # exp smoothing: zero-match orders get 100 / (2^k * total): 100/(2*2), 100/(4*1).
    expected = bp * math.exp((math.log(75) + math.log(100 / 3) + math.log(25) + math.log(25)) / 4)
    exp = core_bleu.sacrebleu_score([3, 1, 0, 0], [4, 3, 2, 1], 4, 5, smooth_method="exp")
    assert exp["score"] == pytest.approx(expected, rel=1e-15)
    # floor 0.1: 100 * 0.1 / total.
    expected = bp * math.exp((math.log(75) + math.log(100 / 3) + math.log(5) + math.log(10)) / 4)
    floor = core_bleu.sacrebleu_score([3, 1, 0, 0], [4, 3, 2, 1], 4, 5, smooth_method="floor")
    assert floor["score"] == pytest.approx(expected, rel=1e-15)
    # add-k (k=1) on orders n > 1: 2/4, 1/3, 1/2; the reported counts include the k (as sacreBLEU's).
    expected = bp * math.exp((math.log(75) + math.log(50) + math.log(100 / 3) + math.log(50)) / 4)
    add_k = core_bleu.sacrebleu_score([3, 1, 0, 0], [4, 3, 2, 1], 4, 5, smooth_method="add-k")
    assert add_k["score"] == pytest.approx(expected, rel=1e-15)
    assert add_k["counts"] == [3, 2, 1, 1] and add_k["totals"] == [4, 4, 3, 2]


def test_sacrebleu_effective_order_ignores_orders_longer_than_the_hypothesis() -> None:
    # a 2-token hypothesis matching exactly: orders 3 and 4 have no n-grams; effective order 2 -> 100.
    result = core_bleu.sacrebleu_score([2, 1, 0, 0], [2, 1, 0, 0], 2, 2, smooth_method="none", effective_order=True)
    assert result["score"] == pytest.approx(100.0)
    plain = core_bleu.sacrebleu_score([2, 1, 0, 0], [2, 1, 0, 0], 2, 2, smooth_method="none")
    assert plain["score"] < 1e-100


def test_bleu_score_by_hand() -> None:
    # evaluate/nmt arithmetic: precisions 3/4, 1/3, 1/2, 1/1 -> geometric mean; ratio 4/5 -> bp exp(1 - 5/4).
    result = core_bleu.bleu_score([3, 1, 1, 1], [4, 3, 2, 1], 4, 5)
    geometric = (3 / 4 * 1 / 3 * 1 / 2 * 1) ** 0.25
    assert result["bleu"] == pytest.approx(geometric * math.exp(1 - 5 / 4), rel=1e-14)
    assert result["length_ratio"] == 0.8
    # smoothing: Lin & Och add one to orders n > 1; evaluate's smoothing adds one to unigrams as well.
    smoothed = core_bleu.bleu_score([3, 1, 0, 0], [4, 3, 2, 1], 4, 5, smooth=True)
    assert smoothed["precisions"] == [0.75, 2 / 4, 1 / 3, 1 / 2]
    evaluate_style = core_bleu.bleu_score([3, 1, 0, 0], [4, 3, 2, 1], 4, 5, smooth=True, smooth_unigrams=True)
    assert evaluate_style["precisions"] == [4 / 5, 2 / 4, 1 / 3, 1 / 2]


def test_empty_translation_scores_zero_without_dividing_by_zero() -> None:
    result = core_bleu.bleu_score([0, 0, 0, 0], [0, 0, 0, 0], 0, 5)
    assert (result["bleu"], result["brevity_penalty"], result["length_ratio"]) == (0.0, 0.0, 0.0)
    assert core_bleu.sacrebleu_score([0, 0, 0, 0], [0, 0, 0, 0], 0, 5)["score"] == 0.0


def test_signature_format() -> None:
    signature = core_bleu.bleu_signature(
        nrefs=2, lowercase=True, effective_order=False, tokenizer="intl", smooth_method="floor", smooth_value=None
    )
    assert signature == f"nrefs:2|case:lc|eff:no|tok:intl|smooth:floor[0.10]|version:{core_mt_signature.SACREBLEU_VERSION}"


def test_totals_merge_and_refuse_mixed_options() -> None:
    schema = core_bleu.bleu_schema("bleu", core_bleu.BleuOptions(max_order=1))
    first = schema.totals_of_rows([(3, 4, 2, 3, 1, 1), (2, 2, 2, 2, 2, 2)], "sig-a")
    second = schema.totals_of_rows([(1, 1, 1, 1, 3, 3)], "sig-a")
    merged = schema.merge(first, second)
    assert merged == {
        "hyp_len": 6, "ref_len": 7, "match_1": 5, "total_1": 6, "min_refs": 1, "max_refs": 3, "reduced_examples": 3,
        "signature": "sig-a",
    }
    with pytest.raises(ValueError, match="different options"):
        schema.merge(first, schema.totals_of_rows([(1, 1, 1, 1, 1, 1)], "sig-b"))
    with pytest.raises(ValueError, match="lack the fields"):
        schema.totals({"hyp_len": [1], "signature": ["sig-a"]})
    with pytest.raises(ValueError, match="empty corpus"):
        schema.totals([])


def test_stats_field_reductions() -> None:
    schema = core_stats.StatsSchema("m", (core_stats.StatField("f", "fsum"), core_stats.StatField("n")))
    records = [schema.record((0.1, 1), "s") for _ in range(10)]
    totals = schema.totals(records)
    assert (totals["f"], totals["n"], totals["signature"]) == (1.0, 10, "s")
    # the double nearest 0.1 is slightly above 0.1: ten of them exceed 1.0 by exactly the residual
    from fractions import Fraction

    assert sum(map(Fraction, totals["f__residual"])) == 10 * Fraction(0.1) - 1


def test_float_totals_of_shards_merge_to_the_same_bits_as_one_fsum() -> None:
    """Rounded shard sums would lose bits: fsum([1e16, 1.0]) + fsum([1.0]) rounds twice; the residuals keep them."""
    import random as random_module

    schema = core_stats.StatsSchema("m", (core_stats.StatField("f", "fsum"),))
    values = [1e16, 1.0, 1.0, -1e16, 0.1, 0.2, 0.3, 1e-300, 3.0e15, 0.7]
    rng = random_module.Random(1)
    values += [rng.uniform(-1, 1) * 10 ** rng.randint(-20, 16) for _ in range(2000)]
    one_shot = math.fsum(values)
    records = [schema.record((value,), "s") for value in values]
    for _ in range(20):
        rng.shuffle(records)
        cuts = sorted(rng.sample(range(1, len(records)), 7))
        shards = [records[a:b] for a, b in zip([0, *cuts], [*cuts, len(records)])]
        shard_totals = [schema.totals(shard) for shard in shards]
        assert schema.totals(shard_totals)["f"] == one_shot
        assert schema.merge(schema.merge(*shard_totals[:3]), schema.merge(*shard_totals[3:]))["f"] == one_shot
    naive = sum(math.fsum(record["f"] for record in shard) for shard in shards)
    assert naive != one_shot, "the data must be one where rounded shard sums lose bits"
