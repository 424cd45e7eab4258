"""metrics/sacrebleu against sacreBLEU 2.x (the oracle): WMT17 systems, generated corpora, sentence level,
bootstrap confidence intervals, paired significance tests and signatures."""

from __future__ import annotations

import math
import random
import sys
import warnings

import pytest
import sacrebleu
from sacrebleu.metrics.bleu import BLEU
from sacrebleu.significance import PairedTest

from conftest import load_metric, wmt17_ragged
from generated_text import padded_streams, random_corpus
from metrics._core import core_bleu, core_mt_tokenizers

TOKENIZERS = ("13a", "intl", "zh", "char", "none")
SMOOTHING = (("none", None), ("floor", None), ("floor", 0.3), ("add-k", None), ("add-k", 2), ("exp", None))


def assert_same(ours: dict, theirs: sacrebleu.BLEUScore, context: str = "") -> None:
    assert ours["counts"] == theirs.counts, context
    assert ours["totals"] == theirs.totals, context
    assert (ours["sys_len"], ours["ref_len"]) == (theirs.sys_len, theirs.ref_len), context
    assert abs(ours["score"] - theirs.score) <= 1e-9, context
    assert abs(ours["bp"] - theirs.bp) <= 1e-12, context
    assert all(abs(a - b) <= 1e-9 for a, b in zip(ours["precisions"], theirs.precisions, strict=True)), context


# sacrebleu's char and zh tokenizers take a minute over all 16 systems: four of them in the default run, all 16
# under `-m slow`
SLOW_TOKENIZERS = ("zh", "char")
DEFAULT_SYSTEMS = 4


@pytest.mark.parametrize("tokenize, systems", [
    *((tokenize, None) for tokenize in TOKENIZERS if tokenize not in SLOW_TOKENIZERS),
    *((tokenize, DEFAULT_SYSTEMS) for tokenize in SLOW_TOKENIZERS),
    *(pytest.param(tokenize, None, marks=pytest.mark.slow) for tokenize in SLOW_TOKENIZERS)])
def test_wmt17_all_systems(tokenize: str, systems: int | None, wmt17) -> None:
    """The WMT17 en-de systems (all 16, or the first ``systems``), through evaluate.load, for every tokenizer."""
    references, outputs = wmt17
    metric = load_metric("sacrebleu")
    for name, hypotheses in list(outputs.items())[:systems]:
        ours = metric.compute(predictions=hypotheses, references=references, tokenize=tokenize)
        oracle = BLEU(tokenize=tokenize)
        theirs = oracle.corpus_score(hypotheses, [references])
        assert_same(ours, theirs, f"{name} tok={tokenize}")
        assert ours["signature"] == oracle.get_signature().format()


def test_wmt17_several_references_lowercase_and_smoothing(wmt17) -> None:
    """Other systems' outputs serve as extra (ragged) references on the real data. sacreBLEU counts once per
    casing (its counts do not depend on the smoothing) and smooths them with its own ``BLEU.compute_bleu``, the
    function its ``corpus_score`` ends in; ours scores every configuration from the texts."""
    hypotheses, ragged, streams = wmt17_ragged(wmt17)
    metric = load_metric("sacrebleu")
    for lowercase in (False, True):
        counter = BLEU(lowercase=lowercase)
        counted = counter.corpus_score(hypotheses, streams)
        for smooth_method, smooth_value in SMOOTHING:
            ours = metric.compute(predictions=hypotheses, references=ragged, smooth_method=smooth_method,
                                  smooth_value=smooth_value, lowercase=lowercase)
            oracle = BLEU(smooth_method=smooth_method, smooth_value=smooth_value, lowercase=lowercase)
            oracle.num_refs = counter.num_refs  # what sacreBLEU records while counting, for the signature's nrefs
            theirs = BLEU.compute_bleu(list(counted.counts), list(counted.totals), counted.sys_len,  # add-k adds
                                       counted.ref_len, smooth_method=smooth_method,  # to the lists it is given
                                       smooth_value=smooth_value)
            assert_same(ours, theirs, f"{smooth_method}/{smooth_value} lc={lowercase}")
            assert ours["signature"] == oracle.get_signature().format()
            assert "nrefs:var" in ours["signature"]


def _random_options(rng: random.Random, tokenizers: tuple[str, ...]) -> dict:
    """Random options under the names of sacreBLEU's BLEU class and our core's SacreBleuOptions."""
    smooth_method, smooth_value = rng.choice(SMOOTHING)
    return {
        "tokenize": rng.choice(tokenizers),
        "smooth_method": smooth_method,
        "smooth_value": smooth_value,
        "lowercase": rng.random() < 0.3,
        "effective_order": rng.random() < 0.5,
    }


def _functional(options: dict) -> dict:
    """The same options under the names of sacreBLEU's corpus_bleu/sentence_bleu (and of our module)."""
    keywords = {key: value for key, value in options.items() if key != "effective_order"}
    return {**keywords, "use_effective_order": options["effective_order"]}


def _ours(predictions, references, options: dict) -> dict:
    core_options = core_bleu.SacreBleuOptions(**options)
    rows = core_bleu.sacrebleu_rows(predictions, references, core_options)
    totals = core_bleu.bleu_schema("sacrebleu", core_options).totals_of_rows(rows, core_options.stats_signature())
    return core_bleu.sacrebleu_from_totals(totals, core_options)


def release_sacrebleu_tokenizers() -> None:
    """Let go of the oracle's tokenizer objects: sacreBLEU caches each tokenizer class's ``__call__`` with
    ``functools.lru_cache``, which keeps every instance alive, and each MeCab tokenizer holds its own tagger
    (about 2 MiB here); 3,000 cases of new BLEU objects reached 6.1 GiB of resident memory before this."""
    for name, module in list(sys.modules.items()):
        if name.startswith("sacrebleu.tokenizers."):
            for value in vars(module).values():
                if isinstance(value, type) and hasattr(vars(value).get("__call__"), "cache_clear"):
                    value.__call__.cache_clear()


def test_generated_corpora_corpus_and_sentence_level() -> None:
    """1,000 generated corpora (unicode, punctuation, empty strings, 1-4 ragged references, every option)."""
    _check_generated_corpora(random.Random(7), 1000)


@pytest.mark.slow
def test_more_generated_corpora_corpus_and_sentence_level() -> None:
    """3,000 more generated corpora, drawn from another seed."""
    _check_generated_corpora(random.Random(17), 3000)


def _check_generated_corpora(rng: random.Random, count: int) -> None:
    """Corpus and sentence BLEU of `count` generated corpora equal sacreBLEU's, signatures included."""
    tokenizers = TOKENIZERS + tuple(name for name in ("ja-mecab", "ko-mecab") if core_mt_tokenizers.mecab_available(name))
    cases = 0
    for case in range(count):
        predictions, references = random_corpus(rng, rng.randint(1, 6))
        options = _random_options(rng, tokenizers)
        oracle = BLEU(**options)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = oracle.corpus_score(predictions, padded_streams(references))
        ours = _ours(predictions, references, options)
        assert_same(ours, theirs, f"case {case}: {options}")
        assert ours["signature"] == oracle.get_signature().format()
        sentence = {**options, "effective_order": True}
        for prediction, example_references in zip(predictions, references, strict=True):
            theirs = sacrebleu.sentence_bleu(prediction, example_references, **_functional(sentence))
            assert_same(_ours([prediction], [example_references], sentence), theirs, f"case {case} sentence")
        release_sacrebleu_tokenizers()
        cases += 1
    assert cases == count


def test_generated_corpora_through_the_module() -> None:
    rng = random.Random(11)
    metric = load_metric("sacrebleu")
    for case in range(100):
        predictions, references = random_corpus(rng, rng.randint(1, 8))
        options = _random_options(rng, TOKENIZERS)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = sacrebleu.corpus_bleu(predictions, padded_streams(references), **_functional(options))
        ours = metric.compute(
            predictions=predictions, references=references, **_functional(options), sentence_scores=True
        )
        assert_same(ours, theirs, f"case {case}")
        expected = [
            sacrebleu.sentence_bleu(prediction, example_references, **_functional(options)).score
            for prediction, example_references in zip(predictions, references, strict=True)
        ]
        assert ours["sentence_scores"] == pytest.approx(expected, abs=1e-9)


def test_sentence_scores_use_sacrebleus_sentence_defaults(wmt17) -> None:
    references, systems = wmt17
    hypotheses = systems["online-B.0"][:500]
    result = load_metric("sacrebleu").compute(
        predictions=hypotheses, references=references[:500], sentence_scores=True
    )
    expected = [sacrebleu.sentence_bleu(h, [r]).score for h, r in zip(hypotheses, references[:500], strict=True)]
    assert result["sentence_scores"] == pytest.approx(expected, abs=1e-9)
    # effective order: a short exact match scores 100, not ~0
    short = load_metric("sacrebleu").compute(predictions=["Ja ."], references=["Ja ."], sentence_scores=True)
    assert short["sentence_scores"] == [pytest.approx(100.0)]


def test_bootstrap_confidence_interval_matches_sacrebleu(wmt17) -> None:
    references, systems = wmt17
    hypotheses = systems["online-B.0"]
    oracle = BLEU()
    theirs = oracle.corpus_score(hypotheses, [references], n_bootstrap=1000)
    ours = load_metric("sacrebleu").compute(predictions=hypotheses, references=references, confidence=True)
    # identical resamples (same seed and draws); sacreBLEU sums float32 statistics, we sum exact integers
    assert ours["confidence_mean"] == pytest.approx(theirs._mean, abs=1e-5)
    assert ours["confidence_half_width"] == pytest.approx(theirs._ci, abs=1e-5)
    assert ours["confidence_low"] < ours["score"] < ours["confidence_high"]
    assert ours["signature"] == oracle.get_signature().format()
    again = load_metric("sacrebleu").compute(predictions=hypotheses, references=references, confidence=True)
    assert again["confidence_low"] == ours["confidence_low"], "seeded: the interval is reproducible"


PAIRS = (
    ("online-B.0", "uedin-nmt.4722"),
    ("KIT.4950", "LIUM-NMT.4900"),
    ("LMU-nmt-single.4893", "LMU-nmt-reranked.4934"),
    ("online-A.0", "C-3MA.4959"),
)


@pytest.mark.parametrize(("test_type", "n_samples"), [("bs", 1000), ("ar", 2000)])
def test_paired_tests_match_sacrebleu_on_wmt17(test_type: str, n_samples: int, wmt17) -> None:
    references, systems = wmt17
    metric = load_metric("sacrebleu")
    for baseline, system in PAIRS:
        paired = PairedTest(
            [(baseline, systems[baseline]), (system, systems[system])],
            {"BLEU": BLEU()},
            [references],
            test_type=test_type,
            n_samples=n_samples,
        )
        signatures, results = paired()
        theirs = results["BLEU"][1]
        ours = metric.compute(
            predictions=systems[system],
            references=references,
            baseline_predictions=systems[baseline],
            paired_test=test_type,
            n_samples=n_samples,
        )
        noise = 2 * math.sqrt(max(theirs.p_value * (1 - theirs.p_value), 1e-4) / n_samples)
        assert abs(ours["p_value"] - theirs.p_value) <= noise, (baseline, system)
        assert ours["score"] == pytest.approx(theirs.score, abs=1e-9)
        assert ours["signature"] == signatures["BLEU"].format()


def test_trg_lang_picks_the_tokenizer() -> None:
    metric = load_metric("sacrebleu")
    chinese = metric.compute(predictions=["我们是学生。"], references=["我们都是学生。"], trg_lang="zh")
    assert "tok:zh" in chinese["signature"]
    assert chinese["score"] == pytest.approx(
        sacrebleu.corpus_bleu(["我们是学生。"], [["我们都是学生。"]], tokenize="zh").score, abs=1e-9
    )
    english = metric.compute(predictions=["a b c d"], references=["a b c d"], trg_lang="en")
    assert "tok:13a" in english["signature"]
    with pytest.warns(UserWarning, match="sacreBLEU uses 'zh'"):
        metric.compute(predictions=["我们"], references=["我们"], trg_lang="zh", tokenize="13a")


def test_japanese_without_mecab_falls_back_to_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    metric = load_metric("sacrebleu")
    vendored = __import__(type(metric).__module__.rsplit(".", 1)[0] + ".core_mt_tokenizers", fromlist=["x"])
    monkeypatch.setattr(vendored, "mecab_available", lambda name: False)
    with pytest.warns(UserWarning, match="character-level"):
        result = metric.compute(predictions=["私は学生です"], references=["私は学生でした"], trg_lang="ja")
    assert "tok:char" in result["signature"]
    assert result["score"] == pytest.approx(
        sacrebleu.corpus_bleu(["私は学生です"], [["私は学生でした"]], tokenize="char").score, abs=1e-9
    )


def test_tokenized_input_warning_and_force() -> None:
    metric = load_metric("sacrebleu")
    predictions = [f"sentence number {i} ." for i in range(100)]
    with pytest.warns(UserWarning, match="tokenized period"):
        metric.compute(predictions=predictions, references=predictions)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        metric.compute(predictions=predictions, references=predictions, force=True)
