"""metrics/_core/core_sari: SARI (Xu et al. 2016) in three variants, against three oracles.

Oracles (test-only, in this file):

- evaluate's ``metrics/sari/sari.py`` (huggingface/evaluate @ a7dd338; the file last changed in c447fc8,
  2022-09; Apache-2.0):
  ``SARIngram``, ``SARIsent``, ``normalize`` and ``_compute``'s averaging, copied below (evaluate loads the
  module from the Hub, which tests cannot reach); ``SARIsent``'s n-gram loop, which evaluate writes out for the
  source, the candidate and the references, stands once in ``_two_to_four_grams``. Its ``normalize`` calls sacreBLEU's 13a tokenizer;
  its sacremoses branches (``moses``, ``penn``), which the module never selects, are left out.
- the authors' ``SARI.py`` (github.com/cocoxu/simplification @ 3557046, with its author's correction of the
  add-recall guard, 5d554e8, 2017-10; GPL-3.0): transcribed independently below, operation for operation
  (the same ``Counter`` algebra on space-joined n-gram strings), not copied. (``modified-sari.py``, added in
  2023, changes the add score and is not an oracle here.)
- EASSE's ``easse/sari.py`` (github.com/feralvam/easse @ 6a4352e, the file last changed in 71eb563; GPL-3.0;
  not on PyPI):
  ``compute_ngram_stats`` and ``compute_macro_sari`` as ``corpus_sari`` calls them by default, transcribed
  independently below.

The core scores all examples of a call together (core_sari_tokens, core_sari_batch: texts tokenized as one
string, n-grams counted with numpy): section (h) checks that path against the one-example code of
core_sari_counts bit for bit, on every variant, normalisation and fallback.

Why the three disagree (pinned in the tests of the differences below): evaluate defines 0/0 = 1 where the
paper (footnote 3) and ``SARI.py`` define 0 (five ratios: keep precision and recall, delete precision, add
precision and recall) and takes keep recall as a ratio of sums instead of ``SARI.py``'s mean of per-n-gram
ratios (cocoxu/simplification#6); EASSE sums n-gram counts over the corpus before taking ratios, scores
deletion by F1 (``use_f1_for_deletion=True``), uses ratios of sums for keep and delete, and counts a
deletion as correct by the paper's Eq. 6 (``min``) where ``SARI.py`` subtracts the references' count.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter

import numpy as np
import pytest
import sacrebleu

from generated_text import random_text, similar_text
from metrics._core import core_sari_batch, core_sari_ids, core_sari_tokens
from metrics._core.core_mt_tokenizers import _isolate_marks, _tokenize_13a, _tokenize_intl
from metrics._core.core_process import clear_caches
from metrics._core.core_sari import SARI_VARIANTS, SariOptions, sari_example, sari_from_totals, sari_row_scores
from metrics._core.core_sari import sari_rows, sari_schema, sari_score, sari_tokenize, sari_tokenizer
from metrics._core.core_sari_counts import easse_counts, order_counts, references_counts, sentence_scores
from metrics._core.core_sari_tokens import chunk_tokens

TOLERANCE = 1e-12


# -- Oracle 1: evaluate's metrics/sari/sari.py, copied ------------------------------------------------------------
# Copyright 2020 The HuggingFace Datasets Authors and the current dataset script contributor.
# Licensed under the Apache License, Version 2.0 (http://www.apache.org/licenses/LICENSE-2.0).
# Source: https://github.com/huggingface/evaluate/blob/main/metrics/sari/sari.py (commit a7dd338). Unchanged
# except: `normalize` without its sacremoses branches, `_compute` as a plain function.


def SARIngram(sgrams, cgrams, rgramslist, numref):  # noqa: N802 - evaluate's name
    rgramsall = [rgram for rgrams in rgramslist for rgram in rgrams]
    rgramcounter = Counter(rgramsall)

    sgramcounter = Counter(sgrams)
    sgramcounter_rep = Counter()
    for sgram, scount in sgramcounter.items():
        sgramcounter_rep[sgram] = scount * numref

    cgramcounter = Counter(cgrams)
    cgramcounter_rep = Counter()
    for cgram, ccount in cgramcounter.items():
        cgramcounter_rep[cgram] = ccount * numref

    # KEEP
    keepgramcounter_rep = sgramcounter_rep & cgramcounter_rep
    keepgramcountergood_rep = keepgramcounter_rep & rgramcounter
    keepgramcounterall_rep = sgramcounter_rep & rgramcounter

    keeptmpscore1 = 0
    keeptmpscore2 = 0
    for keepgram in keepgramcountergood_rep:
        keeptmpscore1 += keepgramcountergood_rep[keepgram] / keepgramcounter_rep[keepgram]
        # Fix an alleged bug [2] in the keep score computation.
        # keeptmpscore2 += keepgramcountergood_rep[keepgram] / keepgramcounterall_rep[keepgram]
        keeptmpscore2 += keepgramcountergood_rep[keepgram]
    # Define 0/0=1 instead of 0 to give higher scores for predictions that match
    #      a target exactly.
    keepscore_precision = 1
    keepscore_recall = 1
    if len(keepgramcounter_rep) > 0:
        keepscore_precision = keeptmpscore1 / len(keepgramcounter_rep)
    if len(keepgramcounterall_rep) > 0:
        # Fix an alleged bug [2] in the keep score computation.
        # keepscore_recall = keeptmpscore2 / len(keepgramcounterall_rep)
        keepscore_recall = keeptmpscore2 / sum(keepgramcounterall_rep.values())
    keepscore = 0
    if keepscore_precision > 0 or keepscore_recall > 0:
        keepscore = 2 * keepscore_precision * keepscore_recall / (keepscore_precision + keepscore_recall)

    # DELETION
    delgramcounter_rep = sgramcounter_rep - cgramcounter_rep
    delgramcountergood_rep = delgramcounter_rep - rgramcounter
    delgramcounterall_rep = sgramcounter_rep - rgramcounter
    deltmpscore1 = 0
    deltmpscore2 = 0
    for delgram in delgramcountergood_rep:
        deltmpscore1 += delgramcountergood_rep[delgram] / delgramcounter_rep[delgram]
        deltmpscore2 += delgramcountergood_rep[delgram] / delgramcounterall_rep[delgram]
    # Define 0/0=1 instead of 0 to give higher scores for predictions that match
    # a target exactly.
    delscore_precision = 1
    if len(delgramcounter_rep) > 0:
        delscore_precision = deltmpscore1 / len(delgramcounter_rep)

    # ADDITION
    addgramcounter = set(cgramcounter) - set(sgramcounter)
    addgramcountergood = set(addgramcounter) & set(rgramcounter)
    addgramcounterall = set(rgramcounter) - set(sgramcounter)

    addtmpscore = 0
    for addgram in addgramcountergood:
        addtmpscore += 1

    # Define 0/0=1 instead of 0 to give higher scores for predictions that match
    # a target exactly.
    addscore_precision = 1
    addscore_recall = 1
    if len(addgramcounter) > 0:
        addscore_precision = addtmpscore / len(addgramcounter)
    if len(addgramcounterall) > 0:
        addscore_recall = addtmpscore / len(addgramcounterall)
    addscore = 0
    if addscore_precision > 0 or addscore_recall > 0:
        addscore = 2 * addscore_precision * addscore_recall / (addscore_precision + addscore_recall)

    return (keepscore, delscore_precision, addscore)


def _two_to_four_grams(one_grams):
    """evaluate's loop building the 2-, 3- and 4-grams of a token list (written once in SARIsent for the source,
    the candidate and each reference)."""
    two_grams, three_grams, four_grams = [], [], []
    for i in range(0, len(one_grams) - 1):
        if i < len(one_grams) - 1:
            two_grams.append(one_grams[i] + " " + one_grams[i + 1])
        if i < len(one_grams) - 2:
            three_grams.append(one_grams[i] + " " + one_grams[i + 1] + " " + one_grams[i + 2])
        if i < len(one_grams) - 3:
            four_grams.append(one_grams[i] + " " + one_grams[i + 1] + " " + one_grams[i + 2] + " " + one_grams[i + 3])
    return two_grams, three_grams, four_grams


def SARIsent(ssent, csent, rsents):  # noqa: N802 - evaluate's name
    numref = len(rsents)
    s1grams = ssent.split(" ")
    c1grams = csent.split(" ")
    r1gramslist = [rsent.split(" ") for rsent in rsents]
    source_grams = [s1grams, *_two_to_four_grams(s1grams)]
    candidate_grams = [c1grams, *_two_to_four_grams(c1grams)]
    reference_grams = [[r1grams, *_two_to_four_grams(r1grams)] for r1grams in r1gramslist]
    scores = [
        SARIngram(source_grams[n], candidate_grams[n], [grams[n] for grams in reference_grams], numref)
        for n in range(4)
    ]
    avgkeepscore = sum([score[0] for score in scores]) / 4
    avgdelscore = sum([score[1] for score in scores]) / 4
    avgaddscore = sum([score[2] for score in scores]) / 4
    finalscore = (avgkeepscore + avgdelscore + avgaddscore) / 3
    return finalscore


def normalize(sentence, lowercase: bool = True, tokenizer: str = "13a", return_str: bool = True):
    if lowercase:
        sentence = sentence.lower()

    if tokenizer in ["13a", "intl"]:
        normalized_sent = sacrebleu.metrics.bleu._get_tokenizer(tokenizer)()(sentence)
    else:
        normalized_sent = sentence

    if not return_str:
        normalized_sent = normalized_sent.split()

    return normalized_sent


def evaluate_compute(sources, predictions, references):
    """evaluate's ``Sari._compute``."""
    if not (len(sources) == len(predictions) == len(references)):
        raise ValueError("Sources length must match predictions and references lengths.")
    sari_score = 0
    for src, pred, refs in zip(sources, predictions, references):
        sari_score += SARIsent(normalize(src), normalize(pred), [normalize(sent) for sent in refs])
    sari_score = sari_score / len(predictions)
    return {"sari": 100 * sari_score}


# -- Oracle 2: the authors' SARI.py, transcribed ------------------------------------------------------------------


def _space_ngrams(tokens: list[str], order: int) -> list[str]:
    """SARI.py's n-grams: ``order`` consecutive tokens joined by single spaces, left to right."""
    return [" ".join(tokens[start : start + order]) for start in range(len(tokens) - order + 1)]


def authors_sari_ngram(sgrams, cgrams, rgramslist, numref):
    """``SARI.py``'s ``SARIngram``: (keep F1, delete precision, add F1) of one order; 0/0 is 0."""
    rgramcounter = Counter(gram for rgrams in rgramslist for gram in rgrams)
    sgramcounter_rep = Counter({gram: count * numref for gram, count in Counter(sgrams).items()})
    cgramcounter_rep = Counter({gram: count * numref for gram, count in Counter(cgrams).items()})

    keep = sgramcounter_rep & cgramcounter_rep
    keep_good = keep & rgramcounter
    keep_all = sgramcounter_rep & rgramcounter
    keep_precision_sum = sum(keep_good[gram] / keep[gram] for gram in keep_good)
    keep_recall_sum = sum(keep_good[gram] / keep_all[gram] for gram in keep_good)
    keep_precision = keep_precision_sum / len(keep) if len(keep) > 0 else 0
    keep_recall = keep_recall_sum / len(keep_all) if len(keep_all) > 0 else 0
    keep_f1 = 0
    if keep_precision > 0 or keep_recall > 0:
        keep_f1 = 2 * keep_precision * keep_recall / (keep_precision + keep_recall)

    deleted = sgramcounter_rep - cgramcounter_rep
    deleted_good = deleted - rgramcounter
    delete_precision = (sum(deleted_good[gram] / deleted[gram] for gram in deleted_good) / len(deleted)
                        if len(deleted) > 0 else 0)

    added = set(cgramcounter_rep) - set(sgramcounter_rep)
    added_good = added & set(rgramcounter)
    added_all = set(rgramcounter) - set(sgramcounter_rep)
    add_precision = len(added_good) / len(added) if len(added) > 0 else 0
    add_recall = len(added_good) / len(added_all) if len(added_all) > 0 else 0
    add_f1 = 0
    if add_precision > 0 or add_recall > 0:
        add_f1 = 2 * add_precision * add_recall / (add_precision + add_recall)
    return keep_f1, delete_precision, add_f1


def authors_sari_components(ssent: str, csent: str, rsents: list[str]) -> tuple[float, float, float, float]:
    """``SARI.py``'s ``SARIsent`` (lowercase, split on single spaces, orders 1-4), with its averaged
    components: (add, keep, delete, SARI) in 0..1."""
    numref = len(rsents)
    source = ssent.lower().split(" ")
    candidate = csent.lower().split(" ")
    references = [rsent.lower().split(" ") for rsent in rsents]
    scores = [
        authors_sari_ngram(_space_ngrams(source, order), _space_ngrams(candidate, order),
                           [_space_ngrams(reference, order) for reference in references], numref)
        for order in (1, 2, 3, 4)
    ]
    keep = sum([score[0] for score in scores]) / 4
    delete = sum([score[1] for score in scores]) / 4
    add = sum([score[2] for score in scores]) / 4
    return add, keep, delete, (keep + delete + add) / 3


def authors_sari_sentence(ssent: str, csent: str, rsents: list[str]) -> float:
    """``SARI.py``'s ``SARIsent`` (0..1)."""
    return authors_sari_components(ssent, csent, rsents)[3]


# -- Oracle 3: EASSE's corpus_sari, transcribed ------------------------------------------------------------------


def _easse_ngrams(sentence: str) -> list[Counter]:
    """EASSE's ``extract_ngrams``: n-grams of the whitespace-split tokens, orders 1-4, joined by spaces."""
    tokens = sentence.split()
    return [Counter(_space_ngrams(tokens, order)) for order in (1, 2, 3, 4)] if tokens else [Counter()] * 4


def _times(counter: Counter, factor: int) -> Counter:
    return Counter({gram: count * factor for gram, count in counter.items()})


def easse_corpus_components(orig_sents, sys_sents, refs_per_example, *, normalized: bool = False):
    """EASSE's ``get_corpus_sari_operation_scores`` with its defaults (lowercase, 13a, macro-averaged,
    F1 for deletion) and ``corpus_sari``: (add, keep, delete, SARI) in 0..100. ``refs_per_example`` holds
    one list of references per example (EASSE takes the transpose)."""
    if not normalized:
        orig_sents = [normalize(sentence) for sentence in orig_sents]
        sys_sents = [normalize(sentence) for sentence in sys_sents]
        refs_per_example = [[normalize(sentence) for sentence in refs] for refs in refs_per_example]
    stats = {name: [0] * 4 for name in ("add_c", "add_s", "add_r", "keep_c", "keep_s", "keep_r",
                                        "del_c", "del_s", "del_r")}
    for orig, system, refs in zip(orig_sents, sys_sents, refs_per_example, strict=True):
        orig_ngrams = _easse_ngrams(orig)
        sys_ngrams = _easse_ngrams(system)
        refs_ngrams = [Counter() for _ in range(4)]
        for ref in refs:
            for n, counts in enumerate(_easse_ngrams(ref)):
                refs_ngrams[n] += counts
        num_refs = len(refs)
        for n in range(4):
            sys_not_orig = set(sys_ngrams[n]) - set(orig_ngrams[n])
            stats["add_s"][n] += len(sys_not_orig)
            stats["add_r"][n] += len(set(refs_ngrams[n]) - set(orig_ngrams[n]))
            stats["add_c"][n] += len(sys_not_orig & set(refs_ngrams[n]))
            orig_rep, sys_rep = _times(orig_ngrams[n], num_refs), _times(sys_ngrams[n], num_refs)
            orig_and_sys = orig_rep & sys_rep
            orig_and_ref = orig_rep & refs_ngrams[n]
            stats["keep_s"][n] += sum(orig_and_sys.values())
            stats["keep_r"][n] += sum(orig_and_ref.values())
            stats["keep_c"][n] += sum((orig_and_sys & orig_and_ref).values())
            orig_not_sys = orig_rep - sys_rep
            orig_not_ref = orig_rep - refs_ngrams[n]
            stats["del_s"][n] += sum(orig_not_sys.values())
            stats["del_r"][n] += sum(orig_not_ref.values())
            stats["del_c"][n] += sum((orig_not_sys & orig_not_ref).values())

    def f1(correct, sys_total, ref_total):
        precision = correct / sys_total if sys_total > 0 else 0.0
        recall = correct / ref_total if ref_total > 0 else 0.0
        return 2 * precision * recall / (precision + recall) if precision > 0 and recall > 0 else 0.0

    scores = []
    for operation in ("add", "keep", "del"):
        score = 0.0
        for n in range(4):
            score += f1(stats[f"{operation}_c"][n], stats[f"{operation}_s"][n], stats[f"{operation}_r"][n]) / 4
        scores.append(100.0 * score)
    add, keep, delete = scores
    return add, keep, delete, (add + keep + delete) / 3


# -- Generated cases -----------------------------------------------------------------------------------------------


def generated_cases(seed: int, count: int) -> list[tuple[str, str, list[str]]]:
    """(source, prediction, 1-8 references): edits of a random source (unicode, punctuation, entities, repeated
    n-grams, odd whitespace), some predictions unchanged, empty or unrelated, some references the source."""
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        source = random_text(rng)
        roll = rng.random()
        if roll < 0.1:
            prediction = source
        elif roll < 0.14:
            prediction = ""
        elif roll < 0.24:
            prediction = random_text(rng)
        else:
            prediction = similar_text(rng, source)
        references = [source if rng.random() < 0.08 else similar_text(rng, source)
                      for _ in range(rng.randint(1, 8))]
        cases.append((source, prediction, references))
    return cases


def columns(cases):
    return [case[0] for case in cases], [case[1] for case in cases], [case[2] for case in cases]


@pytest.fixture(scope="module")
def cases() -> list[tuple[str, str, list[str]]]:
    return generated_cases(2016, 3000)


def sentence_values(cases, options: SariOptions) -> list[float]:
    """Our per-example SARI values (0..1), read from the statistics rows."""
    position = sari_schema("sari", options).position("sari")
    return [row[position] for row in sari_rows(*columns(cases), options)]


def mismatches(ours: list[float], theirs: list[float]) -> tuple[int, float]:
    differences = [abs(a - b) for a, b in zip(ours, theirs, strict=True)]
    return sum(difference > TOLERANCE for difference in differences), max(differences)


# -- (a) the paper's worked example, evaluate's documented example, small cases worked by hand -------------------

PAPER_SOURCE = "About 95 species are currently accepted ."
PAPER_REFERENCES = ["About 95 species are currently known .", "About 95 species are now accepted .",
                    "95 species are now accepted ."]
PAPER_OUTPUTS = ["About 95 you now get in .", "About 95 species are now agreed .",
                 "About 95 species are currently agreed ."]


def test_paper_worked_example():
    # Xu et al. 2016, section 3.1: "The corresponding SARI scores of these three toy outputs are 0.2683,
    # 0.5890, 0.5072". The default (the authors' SARI.py) gives exactly these; the full-precision values are
    # SARI.py's output (also EASSE's former sentence_sari test values).
    expected = [26.82782411698074, 58.89995423074248, 50.71608864657479]
    for output, paper, value in zip(PAPER_OUTPUTS, (26.83, 58.90, 50.72), expected, strict=True):
        score = sari_example(PAPER_SOURCE, output, PAPER_REFERENCES)["sari"]
        assert round(score, 2) == paper
        assert score == pytest.approx(value, abs=TOLERANCE)
        assert score == pytest.approx(100 * authors_sari_sentence(PAPER_SOURCE, output, PAPER_REFERENCES),
                                      abs=TOLERANCE)


def test_paper_worked_example_in_every_variant():
    # evaluate's module card and docstring: {'sari': 26.953601953601954} for OUTPUT-1 (with "accepted." the
    # 13a tokenizer splits the period off, so the inputs are the same). The others: evaluate's module
    # (transcribed above) and EASSE's sari.py run on these inputs.
    expected = {
        "evaluate": [26.953601953601954, 61.709656084656075, 50.88681849551415],
        "easse": [31.350246975246976, 63.23743386243387, 46.729309338004993],
    }
    for variant, values in expected.items():
        options = SariOptions(variant=variant)
        for output, value in zip(PAPER_OUTPUTS, values, strict=True):
            assert sari_example(PAPER_SOURCE, output, PAPER_REFERENCES, options)["sari"] == pytest.approx(
                value, abs=TOLERANCE)
    documented = sari_score([PAPER_SOURCE.replace(" .", ".")], [PAPER_OUTPUTS[0].replace(" .", ".")],
                            [[reference.replace(" .", ".") for reference in PAPER_REFERENCES]],
                            SariOptions(variant="evaluate"))
    assert documented["sari"] == pytest.approx(26.953601953601954, abs=TOLERANCE)
    assert evaluate_compute([PAPER_SOURCE], [PAPER_OUTPUTS[1]], [PAPER_REFERENCES])["sari"] == pytest.approx(
        61.709656084656075, abs=TOLERANCE)


def test_hand_worked_issue_6_example():
    # cocoxu/simplification#6: source "a b", output "b", references "a b" and "a"; numref R = 2.
    # Counts are multiplied by R for source and output: S = {a: 2, b: 2}, C = {b: 2}; references summed:
    # Rc = {a: 2, b: 1}.
    # Unigrams. keep: kept K = {b: min(2, 2) = 2}; correct = min(2, Rc[b] = 1) = 1; precision = (1/2)/|K| = 1/2.
    #   kept by the references: {a: min(2, 2) = 2, b: min(2, 1) = 1}.
    #   SARI.py recall = mean over those n-grams of correct/kept-by-references = (0/2 + 1/1) / 2 = 1/2,
    #   F1 = 1/2. evaluate recall = sum(correct) / sum(kept-by-references) = 1 / 3, F1 = (2 * 1/2 * 1/3) / (5/6)
    #   = 2/5. delete: deleted {a: 2}; correct = 2 - Rc[a] = 0 -> precision 0/1 = 0. add: nothing added and
    #   nothing new in the references: precision and recall are 0/0.
    # Bigrams. S = {a b: 2}, C = {}, Rc = {a b: 1}. keep: nothing kept (precision 0/0); kept by the
    #   references {a b: 1}, none correct: recall 0/1 = 0. delete: {a b: 2}, correct 2 - 1 = 1: 1/2.
    #   add: 0/0 and 0/0.
    # Trigrams and 4-grams: no n-grams at all; every ratio is 0/0.
    # SARI.py (0/0 = 0): keep (1/2 + 0 + 0 + 0) / 4 = 1/8; delete (0 + 1/2 + 0 + 0) / 4 = 1/8; add 0;
    #   SARI = (1/8 + 1/8 + 0) / 3 = 1/12.
    # evaluate (0/0 = 1): keep (2/5 + F1(1, 0) = 0 + 1 + 1) / 4 = 3/5; delete (0 + 1/2 + 1 + 1) / 4 = 5/8;
    #   add (1 + 1 + 1 + 1) / 4 = 1; SARI = (3/5 + 5/8 + 1) / 3 = 89/120.
    # EASSE, corpus counts (R-weighted sums), macro over orders, F1 for delete:
    #   keep unigrams: correct 1, system 2, references 2 + 1 = 3: P 1/2, R 1/3, F1 2/5; bigrams: F1 0 -> 2/5 / 4.
    #   delete unigrams: system {a: 2}, references {a: 2 - 2 = 0, b: 2 - 1 = 1} -> 1, correct
    #   min(2, 0) -> 0: F1 0; bigrams: system 2, references 2 - 1 = 1, correct min(2, 1) = 1: P 1/2, R 1,
    #   F1 2/3 -> (2/3) / 4 = 1/6. add: 0. SARI = (0 + 10 + 100/6) / 3 = 80/9.
    source, prediction, references = "a b", "b", ["a b", "a"]
    expected = {
        "paper": {"sari": 100 / 12, "sari_add": 0.0, "sari_keep": 12.5, "sari_del": 12.5},
        "evaluate": {"sari": 100 * 89 / 120, "sari_add": 100.0, "sari_keep": 60.0, "sari_del": 62.5},
        "easse": {"sari": 80 / 9, "sari_add": 0.0, "sari_keep": 10.0, "sari_del": 100 / 6},
    }
    for variant, values in expected.items():
        scores = sari_example(source, prediction, references, SariOptions(variant=variant))
        assert scores == pytest.approx(values, abs=TOLERANCE), variant
    assert authors_sari_sentence(source, prediction, references) == pytest.approx(1 / 12, abs=TOLERANCE)
    assert SARIsent(source, prediction, references) == pytest.approx(89 / 120, abs=TOLERANCE)
    assert easse_corpus_components([source], [prediction], [references])[3] == pytest.approx(80 / 9, abs=TOLERANCE)


# -- (e) where the variants differ, pinned -------------------------------------------------------------------------


def test_unchanged_copy_of_the_source():
    # Source and output "a b c d e", one reference "a b c d f" (R = 1).
    # keep, per order: precision = kept correctly / kept, recall = 1 (every n-gram the reference keeps is
    #   kept): unigrams 4/5 -> F1 8/9; bigrams 3/4 -> 6/7; trigrams 2/3 -> 4/5; 4-grams 1/2 -> 2/3;
    #   keep = (8/9 + 6/7 + 4/5 + 2/3) / 4 = 253/315 in every variant.
    # delete: nothing deleted, precision 0/0: 0 (paper, EASSE: no deletion, F1 0) but 1 in evaluate.
    # add: nothing added (precision 0/0), the reference adds one n-gram per order (recall 0/1 = 0): F1 0.
    # SARI: paper = EASSE = (253/315) / 3 = 253/945; evaluate = (253/315 + 1) / 3 = 568/945. An output that
    # changes nothing gains a third of the scale in evaluate (easse#98: "favoured models that made little
    # to no change").
    source, references = "a b c d e", ["a b c d f"]
    assert sari_example(source, source, references)["sari"] == pytest.approx(100 * 253 / 945, abs=TOLERANCE)
    assert sari_example(source, source, references, SariOptions(variant="easse"))["sari"] == pytest.approx(
        100 * 253 / 945, abs=TOLERANCE)
    evaluate_scores = sari_example(source, source, references, SariOptions(variant="evaluate"))
    assert evaluate_scores == pytest.approx(
        {"sari": 100 * 568 / 945, "sari_add": 0.0, "sari_keep": 100 * 253 / 315, "sari_del": 100.0}, abs=TOLERANCE)


def test_partial_deletion_of_a_repeated_word():
    # Source "the cat saw the dog", output and reference "cat saw the dog" (R = 1): one of two "the" deleted,
    # as the reference does. Unigram "the": S = 2, C = 1, Rc = 1.
    # SARI.py/evaluate count a deletion correct by subtraction: deleted R(S - C) = 1 minus the references'
    #   count 1 = 0, so unigram delete precision is 0/1; the paper's Eq. 6 (EASSE) takes
    #   min(R(S - C), RS - Rc) = min(1, 1) = 1: correct.
    # Orders 2-4 delete one n-gram each ("the cat", "the cat saw", "the cat saw the"), absent from the
    #   reference: precision 1. keep: everything kept is in the reference and vice versa: F1 1 per order.
    #   add: nothing added, nothing new in the reference (0/0 everywhere).
    # paper: keep 1, delete (0 + 1 + 1 + 1) / 4 = 3/4, add 0 -> SARI 7/12.
    # evaluate: keep 1, delete 3/4, add 1 (0/0 = 1) -> SARI 11/12.
    # EASSE: delete F1 1 at every order (unigrams: correct 1, system 1, references 2 - 1 = 1), keep 1,
    #   add 0 -> SARI 2/3.
    source, output = "the cat saw the dog", "cat saw the dog"
    expected = {
        "paper": {"sari": 100 * 7 / 12, "sari_add": 0.0, "sari_keep": 100.0, "sari_del": 75.0},
        "evaluate": {"sari": 100 * 11 / 12, "sari_add": 100.0, "sari_keep": 100.0, "sari_del": 75.0},
        "easse": {"sari": 200 / 3, "sari_add": 0.0, "sari_keep": 100.0, "sari_del": 100.0},
    }
    for variant, values in expected.items():
        assert sari_example(source, output, [output], SariOptions(variant=variant)) == pytest.approx(
            values, abs=TOLERANCE), variant


def test_keep_recall_ratio_of_sums_versus_mean_of_ratios():
    # Isolates evaluate's "fix" of keep recall (cocoxu/simplification#6) from its 0/0 rule: with enough text
    # that no ratio is 0/0, evaluate and SARI.py still differ when references keep n-grams unevenly.
    # Source "a b c d e f g", output "a b c d x y z"; references "a b c d e f g" (keeps everything) and
    # "a b c d q" (keeps only "a b c d"). R = 2.
    # Unigrams: kept-by-references counts: a-d: min(2, 2) = 2 each, e-g: min(2, 1) = 1 each; the output keeps
    #   a-d, each correct 2. SARI.py recall = mean(2/2 x4, 0/1 x3) = 4/7; evaluate = (2 x 4) / (2 x 4 + 1 x 3)
    #   = 8/11. Precision 1 in both: F1 8/11 vs 16/19.
    source, output, references = "a b c d e f g", "a b c d x y z", ["a b c d e f g", "a b c d q"]
    paper = sari_example(source, output, references)
    evaluate = sari_example(source, output, references, SariOptions(variant="evaluate"))
    assert paper["sari_keep"] < evaluate["sari_keep"]
    assert paper["sari_add"] == evaluate["sari_add"] and paper["sari_del"] == evaluate["sari_del"]
    # Unigram F1: paper 2PR/(P+R) with P = 1, R = 4/7 -> 8/11; evaluate R = 8/11 -> 16/19. Bigrams (a b, b c, c d
    # kept by both references: 2 each; d e, e f, f g by one: 1 each): recall 3/6 vs 6/9, F1 2/3 vs 4/5.
    # Trigrams (a b c, b c d: 2; c d e, d e f, e f g: 1): recall 2/5 vs 4/7, F1 4/7 vs 8/11.
    # 4-grams (a b c d: 2; b c d e, c d e f, d e f g: 1): recall 1/4 vs 2/5, F1 2/5 vs 4/7.
    assert paper["sari_keep"] == pytest.approx(100 * (8 / 11 + 2 / 3 + 4 / 7 + 2 / 5) / 4, abs=TOLERANCE)
    assert evaluate["sari_keep"] == pytest.approx(100 * (16 / 19 + 4 / 5 + 8 / 11 + 4 / 7) / 4, abs=TOLERANCE)


def test_corpus_average_versus_corpus_counts():
    # evaluate and SARI.py average sentence-level scores; EASSE pools n-gram counts first, so a long sentence
    # weighs more and no per-sentence 0/0 arises. Two examples: the paper's OUTPUT-2 and the issue #6 case.
    sources, outputs, references = [PAPER_SOURCE, "a b"], [PAPER_OUTPUTS[1], "b"], [PAPER_REFERENCES, ["a b", "a"]]
    paper = sari_score(sources, outputs, references)["sari"]
    assert paper == pytest.approx((58.89995423074248 + 100 / 12) / 2, abs=TOLERANCE)
    easse = sari_score(sources, outputs, references, SariOptions(variant="easse"))
    assert easse == pytest.approx(dict(zip(("sari_add", "sari_keep", "sari_del", "sari"),
                                           easse_corpus_components(sources, outputs, references))), abs=TOLERANCE)
    assert easse["sari"] != pytest.approx((63.23743386243387 + 80 / 9) / 2, abs=1e-3)


# -- (b) evaluate's module, (c) the authors' SARI.py, (d) EASSE: generated cases ------------------------------------


def test_evaluate_variant_matches_evaluate_module(cases):
    options = SariOptions(variant="evaluate")
    theirs = [SARIsent(normalize(source), normalize(prediction), [normalize(reference) for reference in refs])
              for source, prediction, refs in cases]
    count, largest = mismatches(sentence_values(cases, options), theirs)
    assert count == 0, f"{count} of {len(cases)} examples differ by more than {TOLERANCE} (max {largest})"
    assert sari_score(*columns(cases), options)["sari"] == pytest.approx(
        evaluate_compute(*columns(cases))["sari"], abs=TOLERANCE)


def test_paper_variant_matches_authors_code(cases):
    # On evaluate's normalisation (lowercase, 13a), our default.
    theirs = [authors_sari_components(normalize(source), normalize(prediction),
                                      [normalize(reference) for reference in refs])
              for source, prediction, refs in cases]
    rows = sari_rows(*columns(cases), SariOptions())
    for position in range(4):
        count, largest = mismatches([row[position] for row in rows], [values[position] for values in theirs])
        assert count == 0, f"statistic {position}: {count} examples differ (max {largest})"
    # On the raw texts as SARI.py reads them (lowercase, split on single spaces): tokenizer="none".
    theirs = [authors_sari_sentence(source, prediction, refs) for source, prediction, refs in cases]
    count, largest = mismatches(sentence_values(cases, SariOptions(tokenizer="none")), theirs)
    assert count == 0, f"{count} examples differ (max {largest})"


def test_easse_variant_matches_easse(cases):
    rng = random.Random(6)
    options = SariOptions(variant="easse")
    for _ in range(40):
        corpus = rng.sample(cases, rng.randint(1, 40))
        ours = sari_score(*columns(corpus), options)
        theirs = dict(zip(("sari_add", "sari_keep", "sari_del", "sari"), easse_corpus_components(*columns(corpus))))
        assert ours == pytest.approx(theirs, abs=TOLERANCE)
    ours = sari_score(*columns(cases), options)
    assert ours == pytest.approx(dict(zip(("sari_add", "sari_keep", "sari_del", "sari"),
                                          easse_corpus_components(*columns(cases)))), abs=TOLERANCE)


def test_per_example_scores_are_sentence_scores(cases):
    for variant in SARI_VARIANTS:
        options = SariOptions(variant=variant)
        sample = cases[:60]
        rows = sari_rows(*columns(sample), options)
        for row, case in zip(rows, sample, strict=True):
            assert sari_row_scores(row, options) == sari_example(*case, options)
            assert sari_row_scores(row, options) == pytest.approx(sari_score([case[0]], [case[1]], [case[2]], options),
                                                                  abs=TOLERANCE)
    options = SariOptions(variant="easse")
    for case in cases[:60]:
        theirs = dict(zip(("sari_add", "sari_keep", "sari_del", "sari"), easse_corpus_components(*columns([case]))))
        assert sari_example(*case, options) == pytest.approx(theirs, abs=TOLERANCE)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_parity_many_cases(seed):
    cases = generated_cases(seed, 10_000)
    theirs = [SARIsent(normalize(s), normalize(p), [normalize(r) for r in refs]) for s, p, refs in cases]
    assert mismatches(sentence_values(cases, SariOptions(variant="evaluate")), theirs)[0] == 0
    theirs = [authors_sari_sentence(normalize(s), normalize(p), [normalize(r) for r in refs]) for s, p, refs in cases]
    assert mismatches(sentence_values(cases, SariOptions()), theirs)[0] == 0
    theirs = [authors_sari_sentence(s, p, refs) for s, p, refs in cases]
    assert mismatches(sentence_values(cases, SariOptions(tokenizer="none")), theirs)[0] == 0
    ours = sari_score(*columns(cases), SariOptions(variant="easse"))
    assert ours == pytest.approx(dict(zip(("sari_add", "sari_keep", "sari_del", "sari"),
                                          easse_corpus_components(*columns(cases)))), abs=TOLERANCE)


def test_normalisation_options(cases):
    # lowercase=False keeps case; tokenizer="intl" is sacreBLEU's intl tokenizer, as evaluate's normalize.
    sample = cases[:300]
    for lowercase, tokenizer in ((False, "13a"), (True, "intl"), (False, "none")):
        options = SariOptions(variant="evaluate", lowercase=lowercase, tokenizer=tokenizer)
        theirs = [SARIsent(*(normalize(text, lowercase, tokenizer) for text in (source, prediction)),
                           [normalize(reference, lowercase, tokenizer) for reference in refs])
                  for source, prediction, refs in sample]
        assert mismatches(sentence_values(sample, options), theirs)[0] == 0, (lowercase, tokenizer)
    assert sari_tokenize("", SariOptions()) == [""]
    assert sari_tokenize("", SariOptions(variant="easse")) == []
    assert sari_tokenize("A  b", SariOptions(tokenizer="none")) == ["a", "", "b"]
    assert sari_tokenize("A  b", SariOptions(tokenizer="none", variant="easse")) == ["a", "b"]


# -- (f) shards merge exactly ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", SARI_VARIANTS)
def test_shards_merge_exactly(cases, variant):
    options = SariOptions(variant=variant)
    schema = sari_schema("sari", options)
    signature = options.stats_signature()
    rows = sari_rows(*columns(cases), options)
    whole = schema.totals_of_rows(rows, signature)
    rng = random.Random(5)
    cuts = sorted(rng.sample(range(1, len(rows)), 7))
    shards = [rows[start:end] for start, end in zip([0, *cuts], [*cuts, len(rows)])]
    shard_totals = [schema.totals_of_rows(shard, signature) for shard in shards]
    rng.shuffle(shard_totals)
    merged = schema.merge(*shard_totals)
    assert merged == whole
    assert sari_from_totals(merged, options) == sari_from_totals(whole, options)
    records = [schema.record(row, signature) for row in rows]
    assert schema.totals(records) == whole
    result = sari_from_totals(whole, options)
    assert set(result) == {"sari", "sari_add", "sari_keep", "sari_del"}
    assert all(math.isfinite(value) and 0 <= value <= 100 for value in result.values())


def test_statistics_of_different_variants_do_not_merge(cases):
    paper, evaluate = SariOptions(), SariOptions(variant="evaluate")
    schema = sari_schema("sari", paper)
    first = schema.totals_of_rows(sari_rows(*columns(cases[:5]), paper), paper.stats_signature())
    second = schema.totals_of_rows(sari_rows(*columns(cases[5:10]), evaluate), evaluate.stats_signature())
    with pytest.raises(ValueError, match="different options"):
        schema.merge(first, second)


def test_repeated_calls_give_the_same_scores(cases):
    sample = cases[:200]
    for variant in SARI_VARIANTS:
        options = SariOptions(variant=variant)
        clear_caches()
        cold = sari_rows(*columns(sample), options)
        warm = sari_rows(*columns(sample), options)
        assert cold == warm
    # The variants tokenize apart: "A  b" is ["a", "", "b"] for SARI.py, ["a", "b"] for EASSE.
    assert sari_example("A  b", "a b", ["a b"], SariOptions(tokenizer="none"))["sari"] != sari_example(
        "A  b", "a b", ["a b"], SariOptions(tokenizer="none", variant="easse"))["sari"]


# -- (g) bad input --------------------------------------------------------------------------------------------------


def test_bad_input():
    with pytest.raises(ValueError, match="3 predictions but 2 sources"):
        sari_rows(["a", "b"], ["a", "b", "c"], [["a"], ["b"], ["c"]])
    with pytest.raises(ValueError, match="2 predictions but 1 references"):
        sari_rows(["a", "b"], ["a", "b"], [["a"]])
    with pytest.raises(TypeError, match="`sources` is None"):
        sari_rows(None, ["a"], [["a"]])
    with pytest.raises(TypeError, match=r"`predictions\[1\]` must be a string, got int"):
        sari_rows(["a", "b"], ["a", 5], [["a"], ["b"]])
    with pytest.raises(TypeError, match=r"`sources\[0\]` must be a string"):
        sari_rows([None], ["a"], [["a"]])
    with pytest.raises(TypeError, match=r"`references\[1\]\[1\]` must be a string or None"):
        sari_rows(["a", "b"], ["a", "b"], [["a"], ["b", 3.0]])
    with pytest.raises(ValueError, match=r"`references\[0\]` holds no reference"):
        sari_rows(["a"], ["a"], [[]])
    with pytest.raises(ValueError, match="empty"):
        sari_rows([], [], [])
    with pytest.raises(TypeError, match="single string"):
        sari_rows("a b", ["a"], [["a"]])
    with pytest.raises(ValueError, match="no examples"):
        sari_from_totals({"examples": 0, "sari": 0.0, "add": 0.0, "keep": 0.0, "del": 0.0})
    with pytest.raises(ValueError, match="valid values are 'paper', 'evaluate', 'easse'"):
        SariOptions.resolve("sari", {"variant": "tensor2tensor"})
    with pytest.raises(ValueError, match="`tokenizer`"):
        SariOptions.resolve("sari", {"tokenizer": "moses"})
    with pytest.raises(TypeError, match="`lowercase`"):
        SariOptions.resolve("sari", {"lowercase": "yes"})
    with pytest.raises(TypeError, match="unknown options"):
        SariOptions.resolve("sari", {"evaluate_compatible": True})


def test_valid_edge_input():
    # Empty strings, unicode, a reference given as one string, None marking a missing reference.
    # "" is one empty token for SARI.py (split on " "): a kept unigram; no n-grams of higher orders.
    assert sari_example("", "", [""]) == pytest.approx(
        {"sari": 100 / 12, "sari_add": 0.0, "sari_keep": 25.0, "sari_del": 0.0}, abs=TOLERANCE)
    assert sari_example("東京 über", "東京", "東京") == sari_example("東京 über", "東京", ["東京", None])
    for variant in SARI_VARIANTS:
        scores = sari_example("", "", [""], SariOptions(variant=variant))
        assert all(math.isfinite(value) for value in scores.values())


# -- (h) the batch path: texts tokenized together, n-grams counted with numpy -------------------------------------


def one_example_rows(cases, options: SariOptions) -> list[tuple]:
    """The rows of the one-example code (core_sari_counts, n-gram by n-gram with dicts), per example."""
    tokenize = sari_tokenizer(options)
    rows = []
    for source, prediction, references in cases:
        counts = (order_counts(tokenize(source)), order_counts(tokenize(prediction)),
                  references_counts([tokenize(reference) for reference in references]))
        if options.variant == "easse":
            rows.append((*easse_counts(*counts, len(references)), 1))
        else:
            rows.append((*sentence_scores(*counts, len(references), evaluate=options.variant == "evaluate"), 1))
    return rows


NORMALISATIONS = ((True, "13a"), (False, "13a"), (True, "intl"), (True, "none"), (False, "none"))
MARK_TEXTS = ["a.,5", "5.,5", "x..5", "1...2", ",.,.", "3.14, 2.71.", "e.g. U.S.", "a,b", ".5", "5.", "...",
              "&amp;. 5-3 - 4-", "ΑΣ. Σ", "İ.", "a-\nb <skipped>", "\t.\u00a0,"]


def test_joined_tokenization_equals_one_text_at_a_time(cases):
    texts = [text for case in cases for text in (case[0], case[1], *case[2])] + MARK_TEXTS
    rng = random.Random(11)
    texts += ["".join(rng.choice("a5.,.,- &;<>\nΣ") for _ in range(rng.randint(0, 12))) for _ in range(3000)]
    sources, predictions, references = texts[0::3], texts[1::3], [[text] for text in texts[2::3]]
    sources, predictions = sources[:len(references)], predictions[:len(references)]
    for lowercase, tokenizer in NORMALISATIONS:
        for whitespace in (False, True):
            if whitespace and tokenizer != "none":
                continue

            def one(text: str) -> list[str]:
                text = text.lower() if lowercase else text
                if tokenizer == "13a":
                    return _tokenize_13a(text)
                if tokenizer == "intl":
                    return _tokenize_intl(text)
                return text.split() if whitespace else text.split(" ")

            tokens, separator = chunk_tokens(sources, predictions, references, lowercase=lowercase,
                                             tokenizer=tokenizer, whitespace=whitespace, tokenize=one)
            expected = []
            for source, prediction, (reference,) in zip(sources, predictions, references):
                for text in (source, prediction, reference):
                    expected += [separator, *one(text)]
            assert tokens == expected, (lowercase, tokenizer, whitespace)
    assert _tokenize_13a(" \x01 ".join(MARK_TEXTS)) == [
        token for index, text in enumerate(MARK_TEXTS) for token in ([] if not index else ["\x01"]) + _tokenize_13a(text)]


def test_isolate_marks_is_mtevals_period_and_comma_rules():
    # mteval-v13a's ([^0-9])([\.,]) -> \1 \2 then ([\.,])([^0-9]) -> " \1 \2" (sacreBLEU's Tokenizer13a regexes,
    # matched left to right without overlap: runs of marks consume each other), against the one-pass rewrite;
    # lines unpadded as well.
    rng = random.Random(3)
    for _ in range(30_000):
        text = "".join(rng.choice("a5.,., ") for _ in range(rng.randint(0, 14)))
        for line in (text, f" {text} "):
            after = re.sub(r"([^0-9])([\.,])", r"\1 \2 ", line)
            expected = re.sub(r"([\.,])([^0-9])", r" \1 \2", after).split()
            assert _isolate_marks(line).split() == expected, line


def test_batch_rows_are_the_one_example_code(cases):
    # Bit for bit: counts, the source-ordered float sums, ratios and means.
    for variant in SARI_VARIANTS:
        for lowercase, tokenizer in NORMALISATIONS:
            options = SariOptions(variant=variant, lowercase=lowercase, tokenizer=tokenizer)
            assert sari_rows(*columns(cases), options) == one_example_rows(cases, options), (variant, tokenizer)


@pytest.mark.parametrize("settings", [
    {"MAX_CHUNK_CHARACTERS": 3000, "SORT_BUCKET_EXAMPLES": 3},  # many chunks and sort buckets
    {"MAX_CHUNK_CHARACTERS": 500, "SMALL_CHUNK_CHARACTERS": 0},  # chunks of one or two examples
    {"KEY_BITS": 40},  # ids dense per block of examples
    {"KEY_BITS": 34},  # smaller blocks
    {"KEY_BITS": 30, "MAX_PRESENCE_CELLS": 0},  # ids per example (no presence table)
    {"KEY_BITS": 26},  # runs of examples that fit, the one-example code for the others
    {"SEQUENTIAL_SUM": False},  # the means over orders by Python's sum, as on Python >= 3.12
])
def test_batch_paths_give_the_same_rows(cases, monkeypatch, settings):
    for name, value in settings.items():
        monkeypatch.setattr(core_sari_ids if name == "MAX_PRESENCE_CELLS" else core_sari_batch, name, value)
    sample = cases[:600]
    for variant in SARI_VARIANTS:
        options = SariOptions(variant=variant)
        assert sari_rows(*columns(sample), options) == one_example_rows(sample, options), variant


def test_texts_holding_separator_characters(cases, monkeypatch):
    # The first candidates occur in the texts: the next free one separates them. When a chunk's texts hold
    # every candidate, its examples are scored one at a time.
    monkeypatch.setattr(core_sari_batch, "SMALL_CHUNK_CHARACTERS", 0)
    sample = [(f"\x01{source}", prediction.replace(" ", "\x02 "), [f"{reference}\x03" for reference in references])
              for source, prediction, references in cases[:50]]
    every = "".join(core_sari_tokens._SEPARATORS)
    last = [(f"{every} a b", "a b", [every]), ("a b c", "a", ["a b", "c"])]
    for variant in SARI_VARIANTS:
        for tokenizer in ("13a", "intl", "none"):
            options = SariOptions(variant=variant, tokenizer=tokenizer)
            assert sari_rows(*columns(sample), options) == one_example_rows(sample, options)
            assert sari_rows(*columns(last), options) == one_example_rows(last, options)


def test_small_calls_take_the_one_example_code(cases, monkeypatch):
    # A few examples are scored by the one-example code; forced through numpy they give the same rows.
    for size in (1, 2, 5):
        sample = cases[:size]
        for variant in SARI_VARIANTS:
            options = SariOptions(variant=variant)
            expected = one_example_rows(sample, options)
            assert sari_rows(*columns(sample), options) == expected
            with monkeypatch.context() as patch:
                patch.setattr(core_sari_batch, "SMALL_CHUNK_CHARACTERS", 0)
                assert sari_rows(*columns(sample), options) == expected


def test_example_too_large_for_a_key():
    # 9,000 distinct tokens in the source (14 bits each) and its length (14 bits): 4 x 14 + 14 > 64 bits.
    source = " ".join(f"w{index}" for index in range(9_000))
    sample = [(source, " ".join(f"w{index}" for index in range(0, 9_000, 3)), [source[:20_000], "w1 w2 w3"]),
              ("a b c d", "a b", ["a b c"])]
    for variant in SARI_VARIANTS:
        options = SariOptions(variant=variant)
        assert sari_rows(*columns(sample), options) == one_example_rows(sample, options)


def test_sort_within_examples(monkeypatch):
    # Each example's keys sorted on their own, whatever the mix of lengths (long tails, empty examples, keys
    # equal to the padding) and bucket sizes.
    rng = np.random.default_rng(1)
    for trial in range(200):
        monkeypatch.setattr(core_sari_batch, "SORT_BUCKET_EXAMPLES", int(rng.integers(1, 8)))
        counts = rng.integers(0, 3000 if trial % 7 == 0 else 40, rng.integers(1, 60))
        bounds = np.concatenate(([0], np.cumsum(counts)))
        keys = rng.integers(0, 2**63, bounds[-1], dtype=np.int64).astype(np.uint64)
        keys[::3] = np.iinfo(np.uint64).max
        expected = np.concatenate([np.sort(keys[begin:end]) for begin, end in zip(bounds[:-1], bounds[1:])])
        core_sari_batch._sort_within_examples(keys, bounds)
        assert (keys == expected).all()
