"""Checks shared by the sacreBLEU-family modules (chrf, ter): sentence scores, and bootstrap intervals and paired
tests against sacreBLEU's own on WMT17 systems."""

from __future__ import annotations

import warnings
from typing import Any

from sacrebleu.significance import PairedTest

TOLERANCE = 1e-9
RESAMPLING_TOLERANCE = 5e-4  # sacreBLEU resamples float32 statistics, our modules exact ones


def assert_sentence_scores_match(ours: dict[str, Any], oracle: Any, predictions: Any, references: Any) -> None:
    """``ours["sentence_scores"]`` within TOLERANCE of ``oracle.sentence_score`` (a fresh sacreBLEU CHRF or TER,
    whose sentence scoring keeps no state from corpus scoring) for every prediction."""
    expected = [oracle.sentence_score(prediction, refs).score
                for prediction, refs in zip(predictions, references, strict=True)]
    assert max(abs(a - b) for a, b in zip(ours["sentence_scores"], expected, strict=True)) <= TOLERANCE


def assert_resampling_matches_sacrebleu(metric: Any, oracle_class: type, wmt17: Any, size: int) -> None:
    """``metric``'s confidence interval (1,000 resamples, seed 12345) and its paired bootstrap and approximate
    randomization p-values against ``oracle_class()``'s (sacreBLEU's CHRF or TER) on the first ``size`` lines."""
    references, systems = wmt17
    plain = references[:size]
    baseline, system = systems["online-A.0"][:size], systems["online-B.0"][:size]
    oracle = oracle_class()
    theirs = oracle.corpus_score(system, [plain], n_bootstrap=1000)
    ours = metric.compute(predictions=system, references=plain, confidence=True)
    assert abs(ours["confidence_mean"] - theirs._mean) <= RESAMPLING_TOLERANCE
    assert abs(ours["confidence_half_width"] - theirs._ci) <= RESAMPLING_TOLERANCE
    assert ours["signature"] == oracle.get_signature().format()  # nrefs:1|bs:1000|seed:12345|...
    named = [("baseline", baseline), ("system", system)]
    for test_type, n_samples in (("bs", 1000), ("ar", 1000)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            signatures, results = PairedTest(named, {metric.name: oracle_class()}, [plain], test_type=test_type,
                                             n_samples=n_samples)()
        (name,) = [key for key in results if key != "System"]
        expected = results[name][1]
        ours = metric.compute(predictions=system, references=plain, baseline_predictions=baseline,
                              paired_test=test_type, n_samples=n_samples)
        # float32 in sacreBLEU can move one resampled difference across the observed one
        assert abs(ours["p_value"] - expected.p_value) <= 1 / (n_samples + 1) + 1e-12, test_type
        assert abs(ours["score"] - expected.score) <= TOLERANCE
        assert ours["signature"] == signatures[name].format()
