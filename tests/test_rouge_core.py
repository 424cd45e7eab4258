"""ROUGE core helpers: hand-computed cases, Lin (2004)'s examples and independent brute-force implementations."""

from __future__ import annotations

import random
import tracemalloc
from collections import Counter
from itertools import combinations

import pytest

from metrics._core.core_lcs import lcs_indices, lcs_length, lcs_rows, match_masks, union_lcs_counts
from metrics._core.core_rouge import RougeOptions, parse_rouge_type, prf, rouge_rows, skip_bigram_counts
from metrics._core.core_rouge_tokenize import make_tokenizer, rouge_score_tokens, unicode_tokens
from metrics._core.core_sentence_split import newline_sentences, split_sentences


def dp_table(reference: list[str], candidate: list[str]) -> list[list[int]]:
    """Textbook quadratic LCS table (independent of the bit-parallel code)."""
    table = [[0] * (len(candidate) + 1) for _ in range(len(reference) + 1)]
    for i in range(1, len(reference) + 1):
        for j in range(1, len(candidate) + 1):
            if reference[i - 1] == candidate[j - 1]:
                table[i][j] = table[i - 1][j - 1] + 1
            else:
                table[i][j] = max(table[i - 1][j], table[i][j - 1])
    return table


def rows_for(reference: str, candidate: str) -> tuple[list[str], list[str], dict]:
    ref, cand = reference.split(), candidate.split()
    return ref, cand, match_masks(cand)


# --- LCS -------------------------------------------------------------------------------------------


def test_lcs_hand_computed() -> None:
    # "A B C B D A B" vs "B D C A B A": the classic CLRS example, LCS length 4 ("B C B A").
    ref, cand, masks = rows_for("A B C B D A B", "B D C A B A")
    assert lcs_length(ref, masks, len(cand)) == 4
    # Lin 2004 section 3.1: S1 "police killed the gunman", S2 "police kill the gunman" -> LCS 3.
    ref, cand, masks = rows_for("police killed the gunman", "police kill the gunman")
    assert lcs_length(ref, masks, len(cand)) == 3
    ref, cand, masks = rows_for("police killed the gunman", "the gunman kill police")
    assert lcs_length(ref, masks, len(cand)) == 2
    assert lcs_length([], masks, len(cand)) == 0
    assert lcs_length(["a"], {}, 0) == 0


def test_lcs_rows_are_the_dp_table() -> None:
    rng = random.Random(7)
    for _ in range(500):
        ref = [rng.choice("abcd") for _ in range(rng.randint(0, 12))]
        cand = [rng.choice("abcde") for _ in range(rng.randint(0, 70))]  # > 64 bits: several machine words
        table = dp_table(ref, cand)
        rows = lcs_rows(ref, match_masks(cand), len(cand))
        for i, row in enumerate(rows):
            assert [j - (row & ((1 << j) - 1)).bit_count() for j in range(len(cand) + 1)] == table[i]


def test_lcs_indices_hand_computed() -> None:
    # Lin 2004 section 3.2: r = w1 w2 w3 w4 w5, c1 = w1 w2 w6 w7 w8, c2 = w1 w3 w8 w9 w5.
    # LCS(r, c1) = w1 w2, LCS(r, c2) = w1 w3 w5; union = w1 w2 w3 w5 (4 of the 5 reference words).
    r = "w1 w2 w3 w4 w5".split()
    c1, c2 = "w1 w2 w6 w7 w8".split(), "w1 w3 w8 w9 w5".split()
    assert sorted(lcs_indices(r, c1, match_masks(c1))) == [0, 1]
    assert sorted(lcs_indices(r, c2, match_masks(c2))) == [0, 2, 4]
    assert union_lcs_counts(r, [(c1, match_masks(c1)), (c2, match_masks(c2))]) == {
        "w1": 1, "w2": 1, "w3": 1, "w5": 1
    }


def test_lcs_indices_follow_rouge_score_backtracking() -> None:
    """Among several LCSs, the same one as rouge-score's _backtrack_norec (oracle)."""
    from rouge_score import rouge_scorer
    rng = random.Random(11)
    for _ in range(3000):
        ref = [rng.choice("abc") for _ in range(rng.randint(1, 14))]
        cand = [rng.choice("abcd") for _ in range(rng.randint(1, 14))]
        assert sorted(lcs_indices(ref, cand, match_masks(cand))) == rouge_scorer.lcs_ind(ref, cand)


# --- Skip-bigrams ----------------------------------------------------------------------------------


def brute_force_skip_bigrams(tokens: list[str], max_skip: int | None) -> Counter:
    return Counter(
        (tokens[i], tokens[j])
        for i, j in combinations(range(len(tokens)), 2)
        if max_skip is None or j - i - 1 <= max_skip
    )


def brute_force_rouge_s(prediction: list[str], reference: list[str], max_skip: int | None, unigrams: bool):
    pred, ref = brute_force_skip_bigrams(prediction, max_skip), brute_force_skip_bigrams(reference, max_skip)
    hits = sum((pred & ref).values())
    pred_total, ref_total = sum(pred.values()), sum(ref.values())
    if unigrams:
        hits += sum((Counter(prediction) & Counter(reference)).values())
        pred_total += len(prediction)
        ref_total += len(reference)
    return prf(hits, pred_total, ref_total)


def whitespace_options(*types: str) -> RougeOptions:
    return RougeOptions(types, make_tokenizer(str.split, False))


@pytest.mark.parametrize(
    ("prediction", "expected"),
    [
        # Lin (2004), section 4: ROUGE-S of S2, S3, S4 against S1 (C(4,2) = 6 skip-bigrams each).
        ("police kill the gunman", 3 / 6),
        ("the gunman kill police", 1 / 6),
        ("the gunman police killed", 2 / 6),
    ],
)
def test_rouge_s_lin_2004(prediction: str, expected: float) -> None:
    (row,) = rouge_rows([prediction], [["police killed the gunman"]], whitespace_options("rougeS"))
    assert row[:3] == pytest.approx([expected, expected, expected], abs=1e-15)


def test_rouge_su_hand_computed() -> None:
    # S5 "gunman the killed police" vs S1: no skip-bigram in common (order reversed), 4 unigrams in common:
    # ROUGE-SU = 4 / (6 + 4) in precision and recall.
    options = whitespace_options("rougeS", "rougeSU")
    (row,) = rouge_rows(["gunman the killed police"], [["police killed the gunman"]], options)
    assert row[0:3] == [0.0, 0.0, 0.0]
    assert row[3:6] == pytest.approx([0.4, 0.4, 0.4], abs=1e-15)


def test_skip_distance_hand_computed() -> None:
    # "a b c d": with at most 0 words skipped only the bigrams ab, bc, cd; with 1: + ac, bd; unlimited: + ad.
    assert set(skip_bigram_counts("a b c d".split(), 0)) == {("a", "b"), ("b", "c"), ("c", "d")}
    assert len(skip_bigram_counts("a b c d".split(), 1)) == 5
    assert len(skip_bigram_counts("a b c d".split(), None)) == 6
    # rougeS0 against "a x b": prediction pairs ab, bc, cd; reference pairs ax, xb: no hit.
    # rougeS1: reference pairs ax, xb, ab; prediction pairs ab, bc, cd, ac, bd: hit ab -> P 1/5, R 1/3.
    (row,) = rouge_rows(["a b c d"], [["a x b"]], whitespace_options("rougeS0", "rougeS1"))
    assert row[0:3] == [0.0, 0.0, 0.0]
    assert row[3:5] == [1 / 5, 1 / 3]


def test_skip_bigrams_match_brute_force() -> None:
    rng = random.Random(2024)
    vocabulary = "a b c d e f".split()
    types = ("rougeS", "rougeSU", "rougeS0", "rougeS2", "rougeSU4", "rougeSU1")
    options = whitespace_options(*types)
    for _ in range(1500):
        prediction = [rng.choice(vocabulary) for _ in range(rng.randint(0, 12))]
        reference = [rng.choice(vocabulary) for _ in range(rng.randint(0, 12))]
        (row,) = rouge_rows([" ".join(prediction)], [[" ".join(reference)]], options)
        for position, name in enumerate(types):
            parsed = parse_rouge_type(name)
            expected = brute_force_rouge_s(prediction, reference, parsed.max_skip, parsed.with_unigrams)
            assert tuple(row[3 * position: 3 * position + 3]) == expected, (name, prediction, reference)


# --- Multi-reference pooled mode -------------------------------------------------------------------


def test_pooled_worked_example() -> None:
    """The issue's worked example: pooled ROUGE-1 recall 12/17, ROUGE-2 recall 4/15.

    By hand with the default tokenizer (lowercase): reference 1 "a fast brown dog jumps over a sleeping fox"
    matches brown, fox, jumps, over, dog (5 of 9 unigrams) and the bigram "jumps over" (1 of 8); reference 2
    "a quick brown dog jumps over the fox" matches quick, brown, fox, jumps, over, the, dog (7 of 8) and
    "quick brown", "jumps over", "over the" (3 of 7). Pooled: 12/17 and 4/15. Precision counts the 9 prediction
    unigrams once per reference: 12/18; bigrams 4/16.
    """
    prediction = "The quick brown fox jumps over the lazy dog"
    references = ["A fast brown dog jumps over a sleeping fox", "A quick brown dog jumps over the fox"]
    for tokenizer in (make_tokenizer(None, False), make_tokenizer(str.split, False)):
        options = RougeOptions(("rouge1", "rouge2"), tokenizer, multi_ref="pooled")
        (row,) = rouge_rows([prediction], [references], options)
        assert row[0:2] == [12 / 18, 12 / 17]
        assert row[3:5] == [4 / 16, 4 / 15]
    best = RougeOptions(("rouge1", "rouge2"), make_tokenizer(None, False), multi_ref="best")
    (row,) = rouge_rows([prediction], [references], best)
    assert row[0:2] == [7 / 9, 7 / 8]  # reference 2 has the higher F-measure for both orders
    assert row[3:5] == [3 / 8, 3 / 7]


# --- Tokenizers and sentence splitting --------------------------------------------------------------


def test_rouge_score_tokenizer_hand_computed() -> None:
    assert rouge_score_tokens("The Cat's hat, 2x!") == ["the", "cat", "s", "hat", "2x"]
    assert rouge_score_tokens("café ... Привет") == ["caf"]
    assert rouge_score_tokens("") == [] and rouge_score_tokens(" ,;! ") == []
    stemmed = make_tokenizer(None, True)
    assert stemmed("The running dogs ran") == ["the", "run", "dog", "ran"]


def test_unicode_tokenizer() -> None:
    assert unicode_tokens("Привет, мир!") == ["привет", "мир"]
    # Devanagari vowel signs and virama (combining marks) stay in the word.
    assert unicode_tokens("हिन्दी भाषा") == ["हिन्दी", "भाषा"]
    assert unicode_tokens("我爱北京") == ["我", "爱", "北", "京"]
    assert unicode_tokens("Café NAÏVE") == ["café", "naïve"]
    assert unicode_tokens("") == []
    options = RougeOptions(("rouge1",), make_tokenizer("unicode", False))
    (row,) = rouge_rows(["我爱北京"], [["我爱上海"]], options)
    assert row[:3] == [0.5, 0.5, 0.5]


def test_sentence_splitter() -> None:
    text = "Mr. Smith went to Washington. He met Dr. Jones! The U.S. is big.\nNew line here 你好。再见"
    assert split_sentences(text) == [
        "Mr. Smith went to Washington.",
        "He met Dr. Jones!",
        "The U.S. is big.",
        "New line here 你好。",
        "再见",
    ]
    assert split_sentences("") == []
    assert split_sentences("no end punctuation") == ["no end punctuation"]
    assert newline_sentences("a\n\nb\n ") == ["a", "b", " "]


def _rule_sentences(line: str) -> list[str]:
    """The splitter's rules written directly: sentence ends by a backtracking regex, the word before each found
    by a regex search from the start of the line (both quadratic, so only for short lines)."""
    import re

    from metrics._core.core_sentence_split import _ABBREVIATIONS, _CJK_END

    latin_end = re.compile(r"[.!?\u2026]+[\"'\u201d\u2019)\]]*(?=\s)")  # backtracking: short lines only
    cuts = set()
    for match in latin_end.finditer(line):
        end = match.start() + len(match.group(0).rstrip("\"'\u201d\u2019)]"))
        word = re.search(r"(\S+)$", line[:end])
        word = word.group(1) if word else ""
        stripped = word.rstrip(".").lstrip("\"'(\u201c\u2018[").lower()
        abbreviation = word.endswith(".") and (len(stripped) == 1 or "." in stripped or stripped in _ABBREVIATIONS)
        if not abbreviation:
            cuts.add(match.end())
    cuts.update(match.end() for match in _CJK_END.finditer(line))
    bounds = [0, *sorted(cuts), len(line)]
    return [piece.strip() for piece in (line[a:b] for a, b in zip(bounds, bounds[1:])) if piece.strip()]


def test_sentence_splitter_follows_its_rules_on_generated_lines() -> None:
    rng = random.Random(44)
    pieces = ["Mr.", "...", "?!", "u.s.", "e.g.,", "a.", "x", "word", "end.", "why?!", "(no.)", "\u201cdr.\u201d", "\u2026",
              "\u3002", "etc.)", ".", " ", "  ", "\u00a0", "\t", "\u2003", "B."]
    for _ in range(3000):
        line = "".join(rng.choice(pieces) + rng.choice(("", " ", " ")) for _ in range(rng.randint(0, 30)))
        assert split_sentences(line) == _rule_sentences(line), repr(line)


def test_sentence_splitter_is_linear_in_full_stops() -> None:
    """100,000 characters of initials (33,334 sentence-end candidates) or of full stops: one pass over the line,
    not one search from its start per full stop nor a backtracking match per mark (each took minutes)."""
    line = "a. " * 33_334
    assert split_sentences(line) == [line.strip()]  # every full stop closes an initial
    assert len(split_sentences("ab. " * 25_000)) == 25_000
    # runs of sentence-final marks with no space after them: no backtracking over the run from each mark
    for unit in (".", "?!", ".)"):
        assert split_sentences(unit * (100_000 // len(unit))) == [unit * (100_000 // len(unit))]


@pytest.mark.parametrize(
    ("prediction", "expected"),
    [
        # Lin (2004), section 3.1, with S1 "police killed the gunman" as the reference: S2 shares the LCS
        # "police the gunman" (3/4 = 0.75), S3 only "the gunman" (2/4 = 0.5).
        ("police kill the gunman", 0.75),
        ("the gunman kill police", 0.5),
    ],
)
def test_rouge_l_lin_2004(prediction: str, expected: float) -> None:
    (row,) = rouge_rows([prediction], [["police killed the gunman"]], whitespace_options("rougeL"))
    assert row[:3] == [expected, expected, expected]


def test_rouge_lsum_lin_2004_union_example() -> None:
    # Lin (2004), section 3.2: reference sentence w1..w5, candidate sentences c1, c2 (see above): the union LCS
    # has 4 words; 5 reference words and 10 candidate words: recall 4/5, precision 4/10.
    options = whitespace_options("rougeLsum")
    (row,) = rouge_rows(["w1 w2 w6 w7 w8\nw1 w3 w8 w9 w5"], [["w1 w2 w3 w4 w5"]], options)
    assert row[:2] == [4 / 10, 4 / 5]


def test_checkpointed_walk_finds_the_same_lcs_positions() -> None:
    """Long texts are walked back from checkpoint rows; the positions equal those of the full table's walk."""
    rng = random.Random(41)
    for _ in range(2000):
        vocabulary = [f"w{index}" for index in range(rng.randint(2, 30))]
        reference = [rng.choice(vocabulary) for _ in range(rng.randint(0, 60))]
        candidate = [rng.choice(vocabulary) for _ in range(rng.randint(0, 60))]
        masks = match_masks(candidate)
        assert lcs_indices(reference, candidate, masks, full_table_cells=0) == lcs_indices(
            reference, candidate, masks, full_table_cells=1 << 62
        )


def test_lcs_walk_memory_grows_with_the_square_root_of_the_reference() -> None:
    """20,000 x 20,000 tokens: the full table holds 20,001 rows of 20,000 bits (50 MB); the checkpointed walk
    about 2 x 142 rows (0.7 MB) plus the candidate's match masks (30 words x 2.5 KB)."""
    rng = random.Random(42)
    vocabulary = [f"w{index}" for index in range(30)]
    reference = [rng.choice(vocabulary) for _ in range(20_000)]
    candidate = [rng.choice(vocabulary) for _ in range(20_000)]
    masks = match_masks(candidate)
    peaks = {}
    for label, cells in (("checkpoints", None), ("full table", 1 << 62)):
        tracemalloc.start()
        try:
            found = lcs_indices(reference, candidate, masks, **({} if cells is None else {"full_table_cells": cells}))
            peaks[label] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        peaks[label + " positions"] = found
    assert peaks["checkpoints positions"] == peaks["full table positions"]
    assert peaks["full table"] > 50_000_000 and peaks["checkpoints"] < 3_000_000, peaks


def test_sparse_masks_of_long_candidates_give_the_dense_results() -> None:
    """Candidates from 4,096 tokens keep masks only for frequent tokens; lengths and positions are unchanged."""
    rng = random.Random(43)
    for size in (4096, 6000):
        vocabulary = [f"w{index}" for index in range(rng.choice((20, 3000)))]
        reference = [rng.choice(vocabulary) for _ in range(size)]
        candidate = [rng.choice(vocabulary) for _ in range(size)]
        sparse = match_masks(candidate)
        dense: dict[str, int] = {}
        for position, token in enumerate(candidate):
            dense[token] = dense.get(token, 0) | (1 << position)
        assert type(sparse).__name__ == "SparseMasks"
        assert lcs_length(reference, sparse, size) == lcs_length(reference, dense, size)
        assert lcs_indices(reference, candidate, sparse) == lcs_indices(reference, candidate, dense)
