"""The `meteor` module (through evaluate's loader) against its oracle, NLTK 3.10's ``meteor_score``.

Expected values come from NLTK (``nltk.translate.meteor_score.meteor_score`` on
``word_tokenize(text, preserve_line=True)`` tokens, with an NLTK WordNet reader over the same Debian
WordNet 3.0 files), from evaluate's published example (0.6944) or from hand computations written out
below. The default run checks 100 CNN/DailyMail examples x 3 systems and 300 generated cases through the
module; ``-m slow`` checks 2,000 x 3 and 2,000 generated cases. Offline behaviour is checked in fresh
processes: sockets blocked, and no NLTK data directory at all.
"""

from __future__ import annotations

import importlib
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import METRICS_DIR, default_and_slow, metric_fixture
from cnndm_data import SYSTEMS, cnndm_or_skip
from meteor_oracle import (
    BAD_WEIGHTS,
    debian_wordnet_available,
    needs_wordnet,
    oracle_meteor,
    oracle_scores,
)

TOLERANCE = 1e-12


meteor = metric_fixture("meteor")


@pytest.fixture(scope="module")
def cnndm(shared_data: Path):
    """The first ``limit`` CNN/DailyMail test examples (See et al. 2017's three systems and the reference)."""
    return lambda limit: cnndm_or_skip(shared_data, limit)



def assert_parity(meteor, predictions, references, theirs, **options) -> None:
    """Per-example scores (example_stats) equal NLTK's; the corpus score is their mean."""
    ours = meteor.example_stats(predictions=predictions, references=references, **options)["meteor"]
    differences = [abs(a - b) for a, b in zip(ours, theirs, strict=True)]
    mismatches = sum(difference > TOLERANCE for difference in differences)
    assert mismatches == 0, f"{mismatches} of {len(theirs)} differ (max {max(differences)})"
    assert ours == theirs  # bit-identical in practice
    result = meteor.compute(predictions=predictions, references=references, **options)
    assert set(result) == {"meteor"}
    assert result["meteor"] == pytest.approx(sum(theirs) / len(theirs), abs=TOLERANCE)
    assert result["meteor"] == math.fsum(theirs) / len(theirs)


# Parity through the module.


@needs_wordnet
def test_evaluates_published_example(meteor) -> None:
    # evaluate's card and NLTK's docstring: 0.6944 with one reference and with three.
    prediction = ["It is a guide to action which ensures that the military always obeys the commands of the party"]
    references = [[
        "It is a guide to action that ensures that the military will forever heed Party commands",
        "It is the guiding principle which guarantees the military forces always being under the command of the Party",
        "It is the practical guide for the army always to heed the directions of the party",
    ]]
    assert round(meteor.compute(predictions=prediction, references=[references[0][0]])["meteor"], 4) == 0.6944
    assert round(meteor.compute(predictions=prediction, references=references)["meteor"], 4) == 0.6944


@needs_wordnet
@pytest.mark.parametrize("limit", default_and_slow((100,), (2000,)))
def test_cnndm_parity(meteor, cnndm, nltk_wordnet, limit: int) -> None:
    records = cnndm(limit)
    assert len(records) == limit
    references = [[record["reference"]] for record in records]
    for system in SYSTEMS:
        predictions = [record[system] for record in records]
        assert_parity(meteor, predictions, references, oracle_scores(predictions, references, nltk_wordnet))


@needs_wordnet
@pytest.mark.parametrize("count, seed", default_and_slow((300, 31), (2000, 37)))
def test_generated_parity(meteor, meteor_cases, nltk_wordnet, count: int, seed: int) -> None:
    """Synonym-rich texts from WordNet lemmas, inflections, repeats, empty strings, 1-4 ragged references."""
    cases = meteor_cases(count, seed)
    predictions, references = (list(column) for column in zip(*cases, strict=True))
    assert len({len(group) for group in references}) > 1  # ragged
    assert_parity(meteor, predictions, references, oracle_scores(predictions, references, nltk_wordnet))


@needs_wordnet
def test_other_weights_match_nltk(meteor, meteor_cases, nltk_wordnet) -> None:
    cases = meteor_cases(100, seed=41)
    predictions, references = (list(column) for column in zip(*cases, strict=True))
    weights = {"alpha": 0.75, "beta": 1.5, "gamma": 0.25}
    assert_parity(meteor, predictions, references, oracle_scores(predictions, references, nltk_wordnet, **weights),
                  **weights)


@needs_wordnet
def test_identical_texts_score_below_one(meteor, nltk_wordnet) -> None:
    # n identical words form one chunk of n matches: P = R = 1, penalty = 0.5 * (1 / n) ** 3, so the score is
    # 1 - 0.5 / n**3 (0.5 for one word, 0.99768... for six); empty texts score 0.
    texts = ["cat", "the cat", "the cat sat on the mat", ""]
    theirs = oracle_scores(texts, [[text] for text in texts], nltk_wordnet)
    assert theirs == [0.5, 1 - 0.5 / 8, 1 - 0.5 / 216, 0.0]
    assert_parity(meteor, texts, [[text] for text in texts], theirs)


@needs_wordnet
def test_pre_tokenized_input_and_tokenizer_option(meteor, meteor_cases, nltk_wordnet) -> None:
    cases = meteor_cases(100, seed=43)
    predictions, references = (list(column) for column in zip(*cases, strict=True))
    split_scores = [
        oracle_meteor([reference.split() for reference in group], prediction.split(), nltk_wordnet)
        for prediction, group in zip(predictions, references)
    ]
    assert_parity(meteor, predictions, references, split_scores, tokenizer=str.split)

    class Whitespace:
        def tokenize(self, text: str) -> list[str]:
            return text.split()

        def signature(self) -> str:
            return "whitespace"

    assert_parity(meteor, predictions, references, split_scores, tokenizer=Whitespace())
    tokens = [prediction.split() for prediction in predictions]
    token_references = [[reference.split() for reference in group] for group in references]
    assert_parity(meteor, tokens, token_references, split_scores)


@needs_wordnet
def test_exact_and_stem_mode(meteor) -> None:
    # "the" exact, "cats"/"cat" by stem; "ran"/"runs" only as WordNet synonyms (both in the synsets of "run").
    # With synonyms: m = 3, one chunk, P = R = 1, score = 1 - 0.5 / 27. Without: m = 2, P = R = 2/3,
    # Fmean = 2/3, penalty = 0.5 * (1/2) ** 3 = 0.0625, score = 0.9375 * 2/3 = 0.625.
    given = {"predictions": ["the cats ran"], "references": ["The cat runs"]}
    assert meteor.compute(**given)["meteor"] == pytest.approx(1 - 0.5 / 27, abs=1e-15)
    assert meteor.compute(**given, synonyms=False)["meteor"] == pytest.approx(0.625, abs=1e-15)


# Statistics, sharding, bootstrap, streaming through evaluate's cache.


@needs_wordnet
def test_statistics_shards_and_bootstrap(meteor, meteor_cases, nltk_wordnet) -> None:
    from metrics._core.core_resample import as_stats_matrix, bootstrap_interval

    cases = meteor_cases(120, seed=47)
    predictions, references = (list(column) for column in zip(*cases, strict=True))
    theirs = oracle_scores(predictions, references, nltk_wordnet)
    stats = meteor.example_stats(predictions=predictions, references=references)
    assert stats["meteor"] == theirs and stats["count"] == [1] * 120
    whole = meteor.compute(predictions=predictions, references=references)
    assert meteor.compute_from_stats(stats) == whole
    shards = [
        meteor.reduce_stats(meteor.example_stats(predictions=predictions[start : start + 50],
                                                 references=references[start : start + 50]))
        for start in range(0, 120, 50)
    ]
    assert meteor.compute_from_stats(list(reversed(shards))) == whole
    with pytest.raises(ValueError, match="signature|options"):
        meteor.compute_from_stats(stats, synonyms=False)
    # Seeded bootstrap of the mean of NLTK's per-example scores, through the shared resampling core.
    result = meteor.compute(predictions=predictions, references=references, confidence=True, n_bootstrap=200,
                            seed=7)
    expected = bootstrap_interval(as_stats_matrix([[score, 1.0] for score in theirs]),
                                  lambda sums: float(sums[0] / sums[1]), n_samples=200, seed=7, level=0.95)
    assert (result["meteor_low"], result["meteor_high"]) == (expected.low, expected.high)
    assert result["meteor_low"] < result["meteor"] < result["meteor_high"]
    assert meteor.compute(predictions=predictions, references=references, confidence=True, n_bootstrap=200,
                          seed=7) == result


@needs_wordnet
def test_add_batch_then_compute(meteor, meteor_cases) -> None:
    cases = meteor_cases(60, seed=53)
    predictions, references = (list(column) for column in zip(*cases, strict=True))
    expected = meteor.compute(predictions=predictions, references=references)
    for start in range(0, 60, 25):
        meteor.add_batch(predictions=predictions[start : start + 25], references=references[start : start + 25])
    assert meteor.compute() == expected
    tokens = [prediction.split() for prediction in predictions]
    token_references = [[reference.split() for reference in group] for group in references]
    expected = meteor.compute(predictions=tokens, references=token_references)
    meteor.add_batch(predictions=tokens, references=token_references)
    assert meteor.compute() == expected


# Options and errors.


@pytest.mark.parametrize(
    ("argument", "value", "error"),
    [*BAD_WEIGHTS, ("synonyms", "no", TypeError), ("tokenizer", "nltk", TypeError), ("n_bootstrap", 1, ValueError)],
)
def test_bad_options_are_rejected(meteor, argument, value, error) -> None:
    with pytest.raises(error, match=f"meteor: `{argument}`"):
        meteor.compute(predictions=["a b"], references=["a b"], **{"synonyms": False, argument: value})


def test_bad_tokens_are_rejected(meteor) -> None:
    with pytest.raises(TypeError, match=r"`predictions\[1\]`"):
        meteor.compute(predictions=[["a"], "b"], references=[["a"], ["b"]], synonyms=False)
    with pytest.raises(TypeError, match=r"`predictions\[0\]\[1\]`"):
        meteor.compute(predictions=[["a", 1]], references=[["a"]], synonyms=False)
    with pytest.raises(TypeError, match="must return a list of tokens"):
        meteor.compute(predictions=["a b"], references=["a b"], synonyms=False, tokenizer=str.upper)


def _vendored(meteor, module: str):
    package = type(meteor).__module__.rsplit(".", 1)[0]
    return importlib.import_module(f"{package}.{module}")


def test_missing_wordnet_is_a_clear_error_and_exact_stem_mode_works(meteor, monkeypatch, tmp_path) -> None:
    import nltk.data

    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    monkeypatch.setattr(_vendored(meteor, "core_wordnet"), "DEBIAN_WORDNET", tmp_path / "absent")
    given = {"predictions": ["the cats sat on a mat"], "references": ["the cat sits on the mat"]}
    with pytest.raises(ValueError, match=r"apt-get install wordnet-base.*synonyms=False") as raised:
        meteor.compute(**given)
    assert "nltk.download('wordnet')" in str(raised.value) and str(tmp_path) in str(raised.value)
    # By hand: the (hyp 0 -> ref 4, the last 'the'), on (3 -> 3), mat (5 -> 5), cats/cat by stem (1 -> 1):
    # m = 4 of 6 on each side, P = R = Fmean = 2/3; 4 chunks, penalty 0.5 * (4/4) ** 3 = 0.5: score 1/3.
    assert meteor.compute(**given, synonyms=False)["meteor"] == pytest.approx(1 / 3, abs=1e-15)


# Offline: fresh processes.

_OFFLINE_SCRIPT = r"""
import json, os, socket, sys

def blocked(*args, **kwargs):
    raise AssertionError("network access attempted")

socket.socket.connect = blocked
socket.socket.connect_ex = blocked
socket.create_connection = blocked
import nltk, nltk.data
nltk.download = blocked
nltk.data.path[:] = [sys.argv[2]]  # an empty folder: no NLTK data directory at all
import evaluate
meteor = evaluate.load(sys.argv[1])
results = {
    "published": meteor.compute(
        predictions=["It is a guide to action which ensures that the military always obeys the commands of the party"],
        references=["It is a guide to action that ensures that the military will forever heed Party commands"],
    )["meteor"],
    "synonyms": meteor.compute(predictions=["the cats ran"], references=["The cat runs"])["meteor"],
    "exact_stem": meteor.compute(predictions=["the cats ran"], references=["The cat runs"], synonyms=False)["meteor"],
    "nltk_data": [str(path) for path in nltk.data.path],
}
print(json.dumps(results))
"""


@needs_wordnet
def test_offline_fresh_process_without_nltk_data(tmp_path) -> None:
    """Loaded from a copy of the folder in a fresh process with every socket blocked, nltk.download replaced by
    an error, NLTK_DATA and nltk.data.path pointing at an empty folder and an empty HF cache: scores with
    WordNet synonyms from Debian's files (/usr/share/wordnet). Any NLTK resource lookup (punkt_tab, wordnet,
    omw-1.4) would fail there, and a download would raise."""
    shutil.copytree(METRICS_DIR / "meteor", tmp_path / "meteor", ignore=shutil.ignore_patterns("__pycache__"))
    empty = tmp_path / "nltk_data"
    empty.mkdir()
    environment = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "NLTK_DATA": str(empty),
        "HF_HOME": str(tmp_path / "hf"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }
    completed = subprocess.run(
        [sys.executable, "-c", _OFFLINE_SCRIPT, str(tmp_path / "meteor"), str(empty)],
        cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    results = json.loads(completed.stdout.strip().splitlines()[-1])
    assert round(results["published"], 4) == 0.6944
    assert results["synonyms"] == pytest.approx(1 - 0.5 / 27, abs=1e-15)
    assert results["exact_stem"] == pytest.approx(0.625, abs=1e-15)
    assert results["nltk_data"] == [str(empty)] and not any(empty.iterdir())


def test_network_guard_in_process(meteor, monkeypatch) -> None:
    """Computing (with the module already loaded) opens no connection: any attempt raises."""
    import socket

    def blocked(*args, **kwargs):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", blocked)
    monkeypatch.setattr(socket.socket, "connect_ex", blocked)
    monkeypatch.setattr(socket, "create_connection", blocked)
    import nltk

    monkeypatch.setattr(nltk, "download", blocked)
    result = meteor.compute(predictions=["the cats sat"], references=[["a cat sits", "the cat sat"]], synonyms=False)
    assert 0 < result["meteor"] <= 1
    if debian_wordnet_available():
        assert meteor.compute(predictions=["the cats ran"], references=["The cat runs"])["meteor"] > 0.98
