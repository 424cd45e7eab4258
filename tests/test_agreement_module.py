"""metrics/agreement through evaluate's loader: the ratings of one item split across batches, shards and
`datasets.Dataset.map` give the one-shot result (intervals included), errors that only the merged ratings show,
the kinds of labels, the matrix helper on the loaded module, and the command-line scorer on JSONL."""

from __future__ import annotations

import doctest
import json
import random
import re
import uuid
from pathlib import Path
from typing import Any

import evaluate
import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from conftest import METRICS_DIR, ROOT, load_metric
from score_cli import score_in_this_process

Ratings = dict[str, list[Any]]


@pytest.fixture(scope="module")
def agreement():
    return load_metric("agreement")


def fresh() -> Any:
    return evaluate.load(str(METRICS_DIR / "agreement"), experiment_id=uuid.uuid4().hex)


def shuffled_ratings(seed: int, *, complete: bool) -> Ratings:
    """40 items rated 1-5 by annotators near each item's grade, rows in random order (so any split cuts items):
    two annotators rating every item (``complete``), or five rating 70% of the items each."""
    rng = random.Random(seed)
    annotators = 2 if complete else 5
    cells = [(item, annotator) for item in range(40) for annotator in range(annotators)
             if complete or rng.random() < 0.7]
    rng.shuffle(cells)
    grade = {item: rng.randint(1, 5) for item in range(40)}
    return {"items": [f"item {item}" for item, _ in cells], "annotators": [annotator for _, annotator in cells],
            "labels": [min(5, max(1, grade[item] + rng.choice((-1, 0, 0, 1)))) for item, _ in cells]}


def rows(ratings: Ratings, start: int, stop: int) -> Ratings:
    return {column: values[start:stop] for column, values in ratings.items()}


CASES = [
    (False, {"level_of_measurement": "ordinal"}),
    (False, {"level_of_measurement": "interval", "confidence": True, "n_bootstrap": 60}),
    (True, {"coefficients": ["cohen_kappa", "fleiss_kappa", "krippendorff_alpha", "percent_agreement"],
            "weights": "quadratic", "confidence": True, "n_bootstrap": 60}),
    (False, {"coefficients": ["pairwise_spearman", "pairwise_pearson", "leave_one_out_spearman",
                              "leave_one_out_pearson"], "confidence": True, "n_bootstrap": 60}),
]


@pytest.mark.parametrize(("complete", "options"), CASES)
def test_ratings_of_one_item_in_different_shards_and_batches(agreement, complete: bool, options: dict) -> None:
    ratings = shuffled_ratings(1, complete=complete)
    one_shot = agreement.compute(**ratings, **options)
    size = len(ratings["items"])
    shards = [agreement.reduce_stats(agreement.example_stats(**rows(ratings, start, start + 23), **options), **options)
              for start in range(0, size, 23)]
    assert agreement.compute_from_stats(shards[::-1], **options) == one_shot
    streamed = fresh()
    for start in range(0, size, 7):
        streamed.add_batch(**rows(ratings, start, start + 7))
    streamed.stream_batch_size = 5
    assert streamed.compute(**options) == one_shot
    reordered = {column: values[::-1] for column, values in ratings.items()}
    assert agreement.compute(**reordered, **options) == one_shot  # items are resampled in id order, not input order


def test_the_two_kappas_and_alpha_against_their_oracles_through_the_module(agreement) -> None:
    ratings = shuffled_ratings(2, complete=True)
    by_annotator = [{item: label for item, annotator, label in zip(*ratings.values(), strict=True) if annotator == a}
                    for a in (0, 1)]
    items = sorted(by_annotator[0])
    first, second = ([labels[item] for item in items] for labels in by_annotator)
    result = agreement.compute(**ratings, coefficients=["cohen_kappa", "krippendorff_alpha"], weights="linear",
                               level_of_measurement="ordinal")
    assert result["cohen_kappa"] == pytest.approx(cohen_kappa_score(first, second, weights="linear"), abs=1e-12)
    assert result["krippendorff_alpha"] == pytest.approx(
        krippendorff.alpha([first, second], level_of_measurement="ordinal"), abs=1e-12)


def test_string_labels_in_order(agreement) -> None:
    """Ordinal alpha and weighted kappa of words take their order from `value_domain` (scikit-learn's `labels`)."""
    order = ["low", "mid", "high", "top"]
    ratings = shuffled_ratings(3, complete=True)
    words = {**ratings, "labels": [order[label - 2] if label > 1 else "low" for label in ratings["labels"]]}
    with pytest.raises(ValueError, match=r"^agreement: Cohen's kappa with linear weights needs the order"):
        agreement.compute(**words, coefficients="cohen_kappa", weights="linear")
    result = agreement.compute(**words, coefficients=["cohen_kappa", "krippendorff_alpha"], weights="linear",
                               level_of_measurement="ordinal", value_domain=order)
    by_item = {}
    for item, annotator, label in zip(*words.values(), strict=True):
        by_item.setdefault(item, {})[annotator] = label
    first, second = ([by_item[item][a] for item in sorted(by_item)] for a in (0, 1))
    assert result["cohen_kappa"] == pytest.approx(cohen_kappa_score(first, second, weights="linear", labels=order),
                                                  abs=1e-12)
    assert result["krippendorff_alpha"] == pytest.approx(
        krippendorff.alpha(np.array([first, second]), level_of_measurement="ordinal", value_domain=order), abs=1e-12)


def test_integer_and_float_labels_are_one_label(agreement) -> None:
    ratings = shuffled_ratings(4, complete=False)
    as_floats = {**ratings, "labels": [float(label) for label in ratings["labels"]]}
    assert agreement.compute(**as_floats) == agreement.compute(**ratings)


def test_a_rating_repeated_in_another_shard_is_an_error(agreement) -> None:
    first = agreement.reduce_stats(agreement.example_stats(items=["x", "x"], annotators=["a", "b"], labels=[1, 2]))
    again = agreement.reduce_stats(agreement.example_stats(items=["x", "y"], annotators=["a", "b"], labels=[2, 2]))
    with pytest.raises(ValueError, match=r"^agreement: annotator 'a' rated item 'x' more than once"):
        agreement.compute_from_stats([first, again])


def test_labels_of_two_kinds_in_different_shards_or_batches_are_an_error(agreement) -> None:
    numbers = agreement.example_stats(items=["x", "x"], annotators=["a", "b"], labels=[1, 2])
    words = agreement.example_stats(items=["y", "y"], annotators=["a", "b"], labels=["p", "q"])
    with pytest.raises(TypeError, match=r"^agreement: `labels` mix strings and numbers across batches or shards"):
        agreement.compute_from_stats([agreement.reduce_stats(numbers), agreement.reduce_stats(words)])
    streamed = fresh()
    streamed.add_batch(items=["x", "x"], annotators=["a", "b"], labels=[1, 2])
    with pytest.raises(TypeError, match=r"^agreement: `labels` of this batch are strings \('p'\) but the batches"):
        streamed.add_batch(items=["y", "y"], annotators=["a", "b"], labels=["p", "q"])
    assert streamed.compute() == agreement.compute(items=["x", "x"], annotators=["a", "b"], labels=[1, 2])


def test_ratings_from_matrix_on_the_loaded_module(agreement) -> None:
    """A DataFrame of items x annotators with a missing rating (the README's example)."""
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame({"ann": ["pos", "neg", "pos"], "bob": ["pos", "neg", "neg"], "cem": [None, None, "neg"]},
                             index=["s1", "s2", "s3"])
    ratings = agreement.ratings_from_matrix(frame)
    assert ratings["items"] == ["s1", "s1", "s2", "s2", "s3", "s3", "s3"]
    # 7 values (3 pos, 4 neg); item s3 (pos, neg, neg) pairs pos-neg twice with weight 1 * 2 / 2: alpha = 1 - 6 * 2 / 24
    assert agreement.compute(**ratings)["krippendorff_alpha"] == pytest.approx(0.5, abs=1e-15)


def test_jsonl_on_the_command_line(agreement, tmp_path: Path) -> None:
    ratings = shuffled_ratings(5, complete=False)
    path = tmp_path / "ratings.jsonl"
    path.write_text("".join(json.dumps({"item": item, "annotator": annotator, "label": label}) + "\n"
                            for item, annotator, label in zip(*ratings.values(), strict=True)), encoding="utf-8")
    result = score_in_this_process(["--jsonl", str(path), "-m", "agreement", "-o",
                                    "agreement.level_of_measurement=interval", "--format", "json"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    expected = agreement.compute(**ratings, level_of_measurement="interval")
    assert json.loads(result.stdout)["agreement"] == json.loads(json.dumps(expected))


def test_the_cards_examples_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The metric card's Python examples pass as doctests (they load ./metrics/agreement from the repository)."""
    monkeypatch.chdir(ROOT)
    card = (METRICS_DIR / "agreement" / "README.md").read_text(encoding="utf-8")
    code = "\n".join(re.findall(r"```python\n(.*?)```", card, flags=re.DOTALL))
    test = doctest.DocTestParser().get_doctest(code, {}, "agreement/README.md", None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0 and runner.tries >= 5
