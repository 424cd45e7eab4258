"""The rouge module through evaluate's loader: output shape, bad input, sufficient statistics, bootstrap, warnings."""

from __future__ import annotations

import math
import random
import warnings

import pytest

from conftest import metric_fixture

PREDICTIONS = ["the cat sat on the mat", "a dog barked\nthen it ran away", "", "hello world"]
REFERENCES = [["the cat lay on the mat"], ["the dog barked loudly\nand ran off", "a dog barked"], ["empty"], ["hi"]]


rouge = metric_fixture("rouge")


def test_default_output_shape_and_types(rouge) -> None:
    result = rouge.compute(predictions=PREDICTIONS, references=REFERENCES)
    assert list(result) == ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    assert all(type(value) is float for value in result.values())
    per_example = rouge.compute(predictions=PREDICTIONS, references=REFERENCES, use_aggregator=False)
    assert list(per_example) == ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    for name, values in per_example.items():
        assert isinstance(values, list) and len(values) == len(PREDICTIONS)
        assert all(type(value) is float for value in values)
        assert result[name] == math.fsum(values) / len(values)


def test_hand_computed_example(rouge) -> None:
    # "the cat sat on the mat" vs "the cat lay on the mat": 5 of 6 unigrams (P = R = 5/6), bigrams the-cat,
    # on-the, the-mat: 3 of 5; LCS "the cat on the mat" = 5.
    result = rouge.compute(
        predictions=["the cat sat on the mat"], references=["the cat lay on the mat"], use_aggregator=False
    )
    assert result == {"rouge1": [5 / 6], "rouge2": [3 / 5], "rougeL": [5 / 6], "rougeLsum": [5 / 6]}


def test_string_and_single_list_references_agree(rouge) -> None:
    flat = rouge.compute(predictions=["a b c", "d e"], references=["a b d", "d e f"], use_aggregator=False)
    nested = rouge.compute(predictions=["a b c", "d e"], references=[["a b d"], ["d e f"]], use_aggregator=False)
    assert flat == nested


def test_precision_recall_keys(rouge) -> None:
    result = rouge.compute(
        predictions=["a b c d"], references=["a b"], rouge_types=["rouge1"], return_precision_recall=True
    )
    assert result == {"rouge1": 2 * 0.5 * 1.0 / 1.5, "rouge1_precision": 0.5, "rouge1_recall": 1.0}


def test_sharded_statistics_merge_exactly(rouge) -> None:
    rng = random.Random(5)
    words = "alpha beta gamma delta epsilon zeta".split()
    predictions = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 15))) for _ in range(300)]
    references = [[" ".join(rng.choice(words) for _ in range(rng.randint(1, 15)))] for _ in range(300)]
    options = dict(rouge_types=["rouge1", "rouge2", "rougeL", "rougeSU4"], use_stemmer=True)
    whole = rouge.compute(predictions=predictions, references=references, return_precision_recall=True, **options)
    shards = [
        rouge.example_stats(predictions[start:start + 70], references[start:start + 70], **options)
        for start in range(0, 300, 70)
    ]
    schema_totals = [rouge.compute_from_stats(shard, return_precision_recall=True, **options) for shard in shards]
    assert len(schema_totals) == 5
    merged = {key: sum((shard[key] for shard in shards), []) for key in shards[0]}
    assert rouge.compute_from_stats(merged, return_precision_recall=True, **options) == whole
    records = [dict(zip(merged, values)) for values in zip(*merged.values())]
    rng.shuffle(records)
    assert rouge.compute_from_stats(records, return_precision_recall=True, **options) == whole
    with pytest.raises(ValueError, match="options"):
        rouge.compute_from_stats(merged, rouge_types=["rouge1", "rouge2", "rougeL", "rougeSU4"], use_stemmer=False)


def test_bootstrap_is_seeded(rouge) -> None:
    kwargs = dict(predictions=PREDICTIONS, references=REFERENCES, rouge_types=["rouge1"], confidence=True)
    first = rouge.compute(seed=3, **kwargs)
    assert first == rouge.compute(seed=3, **kwargs)
    assert first["rouge1_low"] <= first["rouge1"] <= first["rouge1_high"]
    with pytest.raises(ValueError, match="use_aggregator"):
        rouge.compute(use_aggregator=False, **kwargs)


def test_rouge_lsum_warning_without_newlines(rouge) -> None:
    with pytest.warns(UserWarning, match="split_summaries=True"):
        rouge.compute(predictions=["the cat sat. it was happy."], references=["a cat sat. then it left."])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rouge.compute(predictions=["the cat sat.\nit was happy."], references=["a cat sat.\nthen it left."])
        rouge.compute(predictions=["the cat sat"], references=["a cat sat"])
        split = rouge.compute(
            predictions=["the cat sat. it was happy."], references=["a cat sat. then it left."], split_summaries=True
        )
    lines = rouge.compute(predictions=["the cat sat.\nit was happy."], references=["a cat sat.\nthen it left."])
    assert split["rougeLsum"] == lines["rougeLsum"]


def test_custom_tokenizer_like_evaluate(rouge) -> None:
    result = rouge.compute(predictions=["A B c"], references=["a b c"], rouge_types=["rouge1"], tokenizer=str.split)
    assert result == {"rouge1": 1 / 3}
    with pytest.warns(UserWarning, match="use_stemmer"):
        rouge.compute(predictions=["a"], references=["a"], tokenizer=str.split, use_stemmer=True)


@pytest.mark.parametrize(("tokenizer", "message"), [
    (lambda text: None, r"returned NoneType \(None\) for the text 'a b'; it must return a list of tokens"),
    (lambda text: 3, r"returned int \(3\) for the text 'a b'"),
    (lambda text: text, r"returned str \('a b'\)"),  # would be read as one token per character
    (lambda text: ["a", 3], r"returned a token of type int \(3\) for the text 'a b'; tokens must be strings"),
])
def test_a_custom_tokenizer_that_returns_no_tokens_is_a_clear_error(rouge, tokenizer, message) -> None:
    """Issue 32, defect 20: `tokenizer=lambda s: None` raised `'NoneType' object is not iterable`."""
    with pytest.raises(TypeError, match="^rouge: the custom `tokenizer` " + message):
        rouge.compute(predictions=["a b"], references=["a c"], tokenizer=tokenizer)


# --- Bad input of ROUGE's own options (the input classes every text-pair metric shares: test_bad_input.py) -------


@pytest.mark.parametrize(("options", "error", "message"), [
    ({"rouge_types": ["rouge1", "rouge10"]}, ValueError,
     r"unknown `rouge_types\[1\]` 'rouge10'.*rouge1 \.\. rouge9, rougeL, rougeLsum"),  # the valid ones are listed
    ({"rouge_types": "rouge1"}, TypeError, "rouge_types"),
    ({"tokenizer": "spacy"}, ValueError, "tokenizer.*'rouge_score', 'unicode'"),
    ({"multi_ref": "average"}, ValueError, "multi_ref.*'best', 'pooled'"),
    ({"use_stemmer": "yes"}, TypeError, "use_stemmer"),
])
def test_bad_option_values(rouge, options: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        rouge.compute(predictions=["a"], references=["a"], **options)


def test_example_stats_with_datasets_map(rouge) -> None:
    import datasets
    dataset = datasets.Dataset.from_dict({"prediction": PREDICTIONS, "reference": REFERENCES})
    stats = dataset.map(
        lambda batch: rouge.example_stats(batch["prediction"], batch["reference"], use_stemmer=True),
        batched=True,
        batch_size=3,
        remove_columns=["prediction", "reference"],
    )
    expected = rouge.compute(predictions=PREDICTIONS, references=REFERENCES, use_stemmer=True)
    assert rouge.compute_from_stats(stats, use_stemmer=True) == expected


def test_custom_tokenizer_may_return_any_iterable(rouge) -> None:
    result = rouge.compute(
        predictions=["a b"],
        references=["a b"],
        rouge_types=["rouge2", "rougeL"],
        tokenizer=lambda text: iter(text.split()),
    )
    assert result == {"rouge2": 1.0, "rougeL": 1.0}


def test_shard_totals_merge_to_the_one_shot_mean(rouge) -> None:
    """Shard totals (float sums with their residuals) merge, in any order, to the bits of the one-shot mean."""
    import random as random_module

    rng = random_module.Random(8)
    words = "the cat sat on a mat dog ran far away under big red sun".split()
    predictions = [" ".join(rng.choices(words, k=rng.randint(1, 12))) for _ in range(500)]
    references = [[" ".join(rng.choices(words, k=rng.randint(1, 12)))] for _ in range(500)]
    whole = rouge.compute(predictions=predictions, references=references, return_precision_recall=True)
    cuts = [0, 13, 250, 251, 499, 500]
    totals = [
        rouge.reduce_stats(rouge.example_stats(predictions[a:b], references[a:b])) for a, b in zip(cuts, cuts[1:])
    ]
    for order in (totals, totals[::-1], totals[2:] + totals[:2]):
        assert rouge.compute_from_stats(order, return_precision_recall=True) == whole
