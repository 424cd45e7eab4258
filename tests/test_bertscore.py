"""BERTScore through evaluate's loader: parity with bert-score 0.3.13 (the oracle) on WMT17 segments,
invariances, per-example statistics, offline model resolution, bad input."""

from __future__ import annotations

import math
import random
import shutil
import sys
import uuid
from pathlib import Path

import evaluate

import pytest
import torch

from bertscore_oracle import as_tensor, max_diff, oracle_scores, packaged_model_path
from conftest import METRICS_DIR, metric_fixture

SUBSET = 48  # pairs per parity check in the default run; the slow tests use all 3,004
TOLERANCE = 1e-6


@pytest.fixture(scope="module", autouse=True)
def few_threads():
    previous = torch.get_num_threads()
    torch.set_num_threads(min(2, previous))
    yield
    torch.set_num_threads(previous)


bertscore = metric_fixture("bertscore")


@pytest.fixture(scope="module")
def pairs(wmt17):
    references, systems = wmt17
    first, second = (systems[name][:SUBSET] for name in sorted(systems)[:2])
    return first, references[:SUBSET], second


# -- parity with the oracle ------------------------------------------------------------------------------------


@pytest.mark.parametrize("idf", [False, True])
@pytest.mark.parametrize("rescale", [False, True])
def test_parity_every_layer(bertscore, pairs, idf: bool, rescale: bool) -> None:
    hypotheses, references, _ = pairs
    theirs = oracle_scores(hypotheses, references, num_layers=6, idf=idf, rescale=rescale, all_layers=True)
    ours = as_tensor(bertscore.compute(predictions=hypotheses, references=references, idf=idf, all_layers=True,
                                       rescale_with_baseline=rescale))
    assert max_diff(ours, theirs) <= TOLERANCE


@pytest.mark.parametrize("layer", [1, 4, 6])
def test_parity_single_layer(bertscore, pairs, layer: int) -> None:
    hypotheses, references, _ = pairs
    theirs = oracle_scores(hypotheses, references, num_layers=layer, idf=True)
    ours = as_tensor(bertscore.compute(predictions=hypotheses, references=references, num_layers=layer, idf=True))
    assert max_diff(ours, theirs) <= TOLERANCE


@pytest.mark.parametrize("rescale", [False, True])
def test_parity_multi_reference(bertscore, pairs, rescale: bool) -> None:
    """Ragged references (one or two per prediction): each of P, R, F is the maximum over the references."""
    hypotheses, references, second = pairs
    groups = [[ref, other] if index % 3 else [ref] for index, (ref, other) in enumerate(zip(references, second))]
    theirs = oracle_scores(hypotheses, groups, num_layers=5, idf=True, rescale=rescale)
    ours = as_tensor(bertscore.compute(predictions=hypotheses, references=groups, num_layers=5, idf=True,
                                       rescale_with_baseline=rescale))
    assert max_diff(ours, theirs) <= TOLERANCE


def test_parity_generated_text(bertscore) -> None:
    """Random words, punctuation, unicode, repeated tokens, duplicates (seeded)."""
    rng = random.Random(7)
    vocabulary = ["the", "cat", "Haus", "über", "naïve", "東京", "?", "!!", "—", "data", "data", "x", "ß", "emoji🙂"]
    predictions = [" ".join(rng.choice(vocabulary) for _ in range(rng.randint(3, 25))) for _ in range(40)]
    references = [" ".join(rng.choice(vocabulary) for _ in range(rng.randint(3, 25))) for _ in range(40)]
    references[5] = predictions[5]
    predictions[7] = predictions[8]
    theirs = oracle_scores(predictions, references, num_layers=3, batch_size=1)
    ours = as_tensor(bertscore.compute(predictions=predictions, references=references))
    assert max_diff(ours, theirs) <= TOLERANCE


def test_defaults_match_oracle_at_default_layer_and_return_plain_floats(bertscore, pairs) -> None:
    hypotheses, references, _ = pairs
    result = bertscore.compute(predictions=hypotheses[:20], references=references[:20])
    assert set(result) == {"precision", "recall", "f1", "hashcode"}
    assert all(type(value) is float for key in ("precision", "recall", "f1") for value in result[key])
    assert result["hashcode"].startswith("sentence-transformers/all-MiniLM-L6-v2_L3_no-idf_version=metrics-")
    theirs = oracle_scores(hypotheses[:20], references[:20], num_layers=3)
    assert max_diff(as_tensor(result), theirs) <= TOLERANCE


def test_bf16_on_the_cpu_is_close_to_the_fp32_oracle(bertscore, pairs) -> None:
    """bf16 keeps 8 bits of mantissa, so scores move by about 1e-3 (scripts/bench_bertscore.py measured 6e-4 on
    2,000 WMT17 pairs); they must stay close to the fp32 oracle yet really come from the bf16 model."""
    hypotheses, references, _ = pairs
    result = bertscore.compute(predictions=hypotheses, references=references, precision="bf16", device="cpu")
    assert result["hashcode"].endswith("_bf16")
    difference = max_diff(as_tensor(result), oracle_scores(hypotheses, references, num_layers=3))
    assert 0.0 < difference <= 5e-3


# -- invariances -----------------------------------------------------------------------------------------------


def test_batch_size_order_and_padding_invariance(bertscore, pairs) -> None:
    hypotheses, references, _ = pairs
    hypotheses, references = hypotheses[:40], references[:40]
    base = as_tensor(bertscore.compute(predictions=hypotheses, references=references, idf=False))
    for batch_size in (1, 7):
        other = as_tensor(bertscore.compute(predictions=hypotheses, references=references, batch_size=batch_size))
        assert max_diff(other, base) <= TOLERANCE
    order = list(range(len(hypotheses)))
    random.Random(3).shuffle(order)
    shuffled = as_tensor(bertscore.compute(predictions=[hypotheses[i] for i in order],
                                           references=[references[i] for i in order]))
    assert max_diff(shuffled[torch.tensor(order).argsort()], base) <= TOLERANCE
    # a very long text in the same batch pads every other text to its length
    long_text = " ".join(hypotheses) [:3000]
    padded = as_tensor(bertscore.compute(predictions=[*hypotheses, long_text], references=[*references, long_text]))
    assert max_diff(padded[:-1], base) <= TOLERANCE


def test_identity_is_one_and_reference_order_does_not_matter(bertscore, pairs) -> None:
    hypotheses, references, second = pairs
    same = bertscore.compute(predictions=hypotheses[:5], references=hypotheses[:5])
    assert all(value == pytest.approx(1.0, abs=1e-5) for value in same["f1"])
    forward = as_tensor(bertscore.compute(predictions=hypotheses[:10],
                                          references=[[r, s] for r, s in zip(references[:10], second[:10])]))
    backward = as_tensor(bertscore.compute(predictions=hypotheses[:10],
                                           references=[[s, r] for r, s in zip(references[:10], second[:10])]))
    assert max_diff(forward, backward) <= TOLERANCE


def test_empty_strings_score_zero(bertscore) -> None:
    result = bertscore.compute(predictions=["", "a house", "  "], references=["a house", "", "a house"])
    assert result["precision"] == [0.0, 0.0, 0.0]
    assert result["f1"] == [0.0, 0.0, 0.0]
    rescaled = bertscore.compute(predictions=[""], references=["a house"], rescale_with_baseline=True)
    assert rescaled["f1"][0] < 0 and not math.isnan(rescaled["f1"][0])


# "[CLS]" and "[SEP]" written in a text are the tokenizer's special tokens, which weigh 0; with idf, a token that
# every reference holds weighs log((N + 1) / (N + 1)) = 0 ("house" below). A text whose tokens all weigh 0 has
# bert-score's 0/0 as its weighted mean: NaN (found by the property tests).
@pytest.mark.parametrize(("idf", "predictions", "references", "undefined"), [
    (False, ["0", "[SEP]", "a house", "[CLS] [SEP]"], ["[CLS]", "a house", "a house", "a house"], "0, 1, 3"),
    (True, ["house", "a house", "[CLS]"], ["the house", "a house", "house"], "0, 2"),
])
def test_texts_without_a_weighted_token_are_nan_as_in_bert_score_and_warned(
    bertscore, idf: bool, predictions: list[str], references: list[str], undefined: str
) -> None:
    theirs = oracle_scores(predictions, references, num_layers=3, idf=idf)
    with pytest.warns(UserWarning, match=rf"no weighted token .* as in bert-score.*\(indices {undefined}\)"):
        ours = as_tensor(bertscore.compute(predictions=predictions, references=references, idf=idf))
    assert torch.equal(ours.isnan(), theirs.isnan())
    assert sorted({row for row, _ in theirs.isnan().nonzero().tolist()}) == [int(i) for i in undefined.split(", ")]
    assert max_diff(ours.nan_to_num(), theirs.nan_to_num()) <= TOLERANCE


def test_weighted_texts_are_not_warned_about(bertscore, recwarn: pytest.WarningsRecorder) -> None:
    bertscore.compute(predictions=["a house", ""], references=["the house", "a house"])
    assert not [warning for warning in recwarn if "no weighted token" in str(warning.message)]

# -- per-example statistics and sharding -----------------------------------------------------------------------


def test_example_stats_and_sharded_means(bertscore, pairs) -> None:
    hypotheses, references, _ = pairs
    hypotheses, references = hypotheses[:30], references[:30]
    result = bertscore.compute(predictions=hypotheses, references=references)
    first = bertscore.example_stats(hypotheses[:12], references[:12])
    second = bertscore.example_stats(hypotheses[12:], references[12:])
    assert first["f1"] == pytest.approx(result["f1"][:12], abs=TOLERANCE)
    merged = bertscore.compute_from_stats([
        bertscore_totals(bertscore, first), bertscore_totals(bertscore, second)
    ])
    assert merged["examples"] == 30
    assert merged["f1"] == pytest.approx(math.fsum(first["f1"] + second["f1"]) / 30, abs=1e-15)
    assert merged["f1"] == pytest.approx(math.fsum(result["f1"]) / 30, abs=TOLERANCE)
    assert merged["precision"] == pytest.approx(math.fsum(result["precision"]) / 30, abs=TOLERANCE)
    with pytest.raises(ValueError, match="different options|computed with options"):
        bertscore.compute_from_stats(first, idf=True)


def bertscore_totals(bertscore, columns):
    script = sys.modules[type(bertscore).__module__]
    return script._SCHEMA.totals(columns)


# -- models: offline resolution and the process-wide cache -----------------------------------------------------


def test_model_stays_loaded_across_calls(bertscore, monkeypatch: pytest.MonkeyPatch) -> None:
    bertscore.compute(predictions=["a"], references=["b"])
    import transformers

    def no_reload(*args, **kwargs):
        raise AssertionError("the model was loaded again")

    monkeypatch.setattr(transformers.AutoModel, "from_pretrained", no_reload)
    bertscore.compute(predictions=["a house"], references=["the house"])


def test_local_folder_as_model_type(bertscore, tmp_path: Path) -> None:
    folder = tmp_path / "my-model"
    shutil.copytree(packaged_model_path(), folder)
    ours = bertscore.compute(predictions=["a small house"], references=["a big house"], model_type=str(folder),
                             num_layers=3)
    default = bertscore.compute(predictions=["a small house"], references=["a big house"])
    assert ours["f1"] == default["f1"]
    assert ours["hashcode"].startswith(f"{folder}_L3_")
    with pytest.raises(ValueError, match="no default layer"):
        bertscore.compute(predictions=["a"], references=["b"], model_type=str(folder))


# -- bad input of BERTScore's own options (the shared input classes: test_bad_input.py) ------------------------


@pytest.mark.parametrize("layer", [7, -1])
def test_unknown_layer(bertscore, layer: int) -> None:
    with pytest.raises(ValueError, match=f"unknown layer `num_layers`={layer}.*layers 0..6"):
        bertscore.compute(predictions=["a"], references=["b"], num_layers=layer)


def test_missing_baseline_for_the_model(bertscore, tmp_path: Path) -> None:
    folder = tmp_path / "other-model"
    shutil.copytree(packaged_model_path(), folder)
    with pytest.raises(ValueError, match="no rescale baseline for model .*other-model.*baseline_path"):
        bertscore.compute(predictions=["a"], references=["b"], model_type=str(folder), num_layers=6,
                          rescale_with_baseline=True)
    with pytest.raises(ValueError, match="`baseline_path` .* does not exist"):
        bertscore.compute(predictions=["a"], references=["b"], rescale_with_baseline=True,
                          baseline_path=str(tmp_path / "missing.tsv"))


BASELINE_HEADER = "LAYER,P,R,F\n"


@pytest.mark.parametrize(
    ("rows", "options", "message"),
    [
        # 4 rows (layers 0..3) cannot rescale all 7 layers of the 6-layer model
        ("0,0.3,0.3,0.3\n1,0.4,0.4,0.4\n2,0.5,0.5,0.5\n3,0.5,0.5,0.5\n", {"all_layers": True},
         r"the baseline has rows for 4 layers but rescaling needs all 7 layers \(0..6\)"),
        ("0,0.3,0.3,0.3\n1,0.4,0.4,0.4\n", {"num_layers": 3}, r"has rows for 2 layers but rescaling needs layer 3"),
        ("0,0.3,0.3,0.3\n1,0.4,1.0,0.4\n", {"num_layers": 1}, r"has R=1.0 for layer 1; baselines must be finite"),
        ("0,0.3,0.3,0.3\n1,nan,0.4,0.4\n", {"num_layers": 1}, r"has P=nan for layer 1; baselines must be finite"),
        ("0,0.3,0.3\n", {"num_layers": 0}, r"row of layer 0 has 2 values, not 3"),
    ],
)
def test_a_bad_baseline_file_is_refused_before_scoring(bertscore, tmp_path: Path, rows: str, options, message) -> None:
    path = tmp_path / "baseline.tsv"
    path.write_text(BASELINE_HEADER + rows, encoding="utf-8")
    module = evaluate.load(str(METRICS_DIR / "bertscore"), experiment_id=uuid.uuid4().hex)
    module.add_batch(predictions=["a"], references=["b"])
    with pytest.raises(ValueError, match=message):
        module.compute(rescale_with_baseline=True, baseline_path=str(path), **options)
    assert module.compute()["f1"] == bertscore.compute(predictions=["a"], references=["b"])["f1"]  # nothing lost


def test_a_directory_as_baseline_path(bertscore, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="`baseline_path` .* is a directory; pass the baseline file"):
        bertscore.compute(predictions=["a"], references=["b"], rescale_with_baseline=True, baseline_path=str(tmp_path))


def test_model_not_available_offline(bertscore) -> None:
    with pytest.raises(ValueError, match="'no-such-org/no-such-model' is not available offline"):
        bertscore.compute(predictions=["a"], references=["b"], model_type="no-such-org/no-such-model")


def test_bad_option_values(bertscore) -> None:
    with pytest.raises(TypeError, match="`idf` must be True or False"):
        bertscore.compute(predictions=["a"], references=["b"], idf="yes")
    with pytest.raises(ValueError, match="`batch_size` must be at least 1"):
        bertscore.compute(predictions=["a"], references=["b"], batch_size=0)
    with pytest.raises(ValueError, match="unknown `precision`"):
        bertscore.compute(predictions=["a"], references=["b"], precision="fp8")


def test_streaming_in_chunks_gives_the_same_scores(bertscore, pairs) -> None:
    """Memory is bounded by the chunk of texts embedded at a time; the chunk size does not change the scores."""
    hypotheses, references, second = pairs
    groups = [[r, s] if i % 2 else [r] for i, (r, s) in enumerate(zip(references[:20], second[:20]))]
    package = type(bertscore).__module__.rsplit(".", 1)[0]
    run = sys.modules[f"{package}.core_bertscore_run"]
    models = sys.modules[f"{package}.core_models"]
    loaded = models.load_model("bertscore", models.resolve_model("bertscore", None), use_fast_tokenizer=False,
                               device=torch.device("cpu"), dtype=torch.float32)
    weights = run.token_weights(loaded, groups, True)
    whole = run.score_corpus(loaded, hypotheses[:20], groups, num_layers=3, weights=weights)
    chunked = run.score_corpus(loaded, hypotheses[:20], groups, num_layers=3, weights=weights, chunk_size=3)
    assert max_diff(chunked, whole) <= TOLERANCE


def test_comparison_report_scores_the_systems_in_one_call(bertscore, pairs, monkeypatch) -> None:
    """The report's BERTScore of two systems comes from one call (each reference embedded once; per system would
    raise here); each system's F1 is its own `compute`'s within the parity tolerance, and bert-score's."""
    first, references, second = pairs
    scripts = str(Path(METRICS_DIR).parent / "scripts")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)
    from comparison import ResamplingSettings, compare, from_columns, statistics

    def one_system_at_a_time(*args, **kwargs):
        raise AssertionError("bertscore scored one system at a time")

    monkeypatch.setattr(statistics.MetricStatistics, "add_system", one_system_at_a_time)
    systems = {"first": first[:12], "second": second[:12]}
    report = compare(from_columns(references[:12], systems), ["bertscore"],
                     settings=ResamplingSettings(n_samples=50, ar_samples=50), progress=False)
    (headline,) = report.headlines
    for system, outputs in systems.items():
        ours = bertscore.compute(predictions=outputs, references=references[:12])["f1"]  # per example
        theirs = oracle_scores(outputs, references[:12], num_layers=3)  # the packaged model's default layer
        assert report.cell(headline, system).score == pytest.approx(math.fsum(ours) / len(ours), abs=TOLERANCE)
        assert report.cell(headline, system).score == pytest.approx(float(theirs[:, 2].mean()), abs=TOLERANCE)


def test_systems_sharing_references_in_chunks_keep_bert_scores(bertscore, pairs) -> None:
    """Two systems against the same references, scored in chunks of 4 predictions: the chunks take the predictions
    of each reference together (each reference embedded once per chunk), and the scores come back in the corpus's
    order, bert-score's scores of each pair."""
    first, references, second = pairs
    hypotheses, groups = first[:10] + second[:10], references[:10] * 2
    theirs = oracle_scores(hypotheses, groups, num_layers=3, idf=True)
    ours = as_tensor(bertscore.compute(predictions=hypotheses, references=groups, num_layers=3, idf=True))
    assert max_diff(ours, theirs) <= TOLERANCE
    package = type(bertscore).__module__.rsplit(".", 1)[0]
    run = sys.modules[f"{package}.core_bertscore_run"]
    models = sys.modules[f"{package}.core_models"]
    loaded = models.load_model("bertscore", models.resolve_model("bertscore", None), use_fast_tokenizer=False,
                               device=torch.device("cpu"), dtype=torch.float32)
    weights = run.token_weights(loaded, [[reference] for reference in groups], True)
    chunked = run.score_corpus(loaded, hypotheses, [[reference] for reference in groups], num_layers=3,
                               weights=weights, chunk_size=4)
    assert max_diff(chunked, theirs) <= TOLERANCE
