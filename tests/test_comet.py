"""comet: unbabel-comet checkpoints scored without pytorch-lightning, equal to unbabel-comet's own `predict`.

No trained COMET checkpoint can be downloaded here, so unbabel-comet 2.2.7 itself (in `.venv-oracles`, see
tests/learned_oracle.py) builds models on small randomly initialised encoders (configurations and tokenizers
made offline from WMT17 text), saves them in its own format (`hparams.yaml`, `checkpoints/model.ckpt`) and scores
with `load_from_checkpoint(...).predict(...)`; the module loads the same files. Estimators covered: a
reference-based regression model on XLM-R with sparsemax layer mixing and per-sentence layer norm, average
pooling; one on BERT (pooling layer, token types) with a single layer and max pooling; a reference-free (QE)
model on XLM-R-XL with "sparsemax_patch" (softmax, as unbabel-comet >= 2.2.4 reads it), CLS pooling and a sigmoid.

Data: WMT17 en-de system outputs and references (../shared/data). newstest2017's English sources are not in
../shared/data, so English sentences from the CNN/DailyMail summaries stand in as sources (the weights are random:
what matters is real text of realistic lengths in the source slot).
"""

from __future__ import annotations

import functools
import math
import shutil
from pathlib import Path

import pytest
import torch

from cnndm_data import cnndm_or_skip
from conftest import ROOT, SHARED_DATA, read_lines
from learned_oracle import run_oracle
from metrics._core import core_comet, core_comet_checkpoint, core_process

ORACLE = Path(__file__).with_name("comet_oracle_run.py")
TOLERANCE = 1e-6  # fp32; the observed differences are float summation order (padding, batch composition)

MODELS = {
    "da_xlmr": ("XLM-RoBERTa", "regression_metric",
                {"hidden_sizes": [48, 16], "layer_transformation": "sparsemax", "layer_norm": True, "pool": "avg"}),
    "da_bert": ("BERT", "regression_metric",
                {"hidden_sizes": [24], "layer": 1, "pool": "max", "activations": "Softplus"}),
    "qe_xl": ("XLM-RoBERTa-XL", "referenceless_regression_metric",
              {"hidden_sizes": [32, 8], "layer_transformation": "sparsemax_patch", "layer_norm": False,
               "pool": "cls", "final_activation": "sigmoid"}),
}


def wmt_corpus(count: int) -> dict[str, list]:
    """The first ``count`` (at most 300) of 300 WMT17 examples: a system's outputs, the reference, English
    sources; empty strings, a segment beyond the encoder's 510 positions and several references among them."""
    corpus = _wmt_corpus(300)
    return {key: values[:count] for key, values in corpus.items()}


@functools.lru_cache(maxsize=1)
def _wmt_corpus(count: int) -> dict[str, list]:
    data = SHARED_DATA / "wmt17-en-de"
    if not data.is_dir():
        pytest.skip(f"WMT17 data not found at {data}")
    references = read_lines(data / "newstest2017.ref.de")[:count]
    systems = sorted((data / "systems").glob("*.de"))
    predictions = read_lines(systems[0])[:count]
    second = read_lines(systems[1])[:count]
    sources = [record["reference"].split("\n")[0] for record in cnndm_or_skip(SHARED_DATA, count)]
    groups: list[list[str]] = [[reference] for reference in references]
    for index in range(0, count, 7):
        groups[index] = [references[index], second[index]]  # two references
    for index in range(3, count, 11):
        groups[index] = [references[index], second[index], predictions[index - 1]]  # three
    predictions[5], sources[9], groups[13] = "", "", [""]
    predictions[17] = " ".join(references[:40])  # far beyond 510 tokens: truncated
    # characters the tokenizer's NFKC normaliser rewrites (double prime, ligature, full-width letters)
    predictions[21] = "Trump räumt ″gewaltige Probleme″ ein – ﬁnanziell ＡＢＣ"
    sources[19] = predictions[17]
    return {"sources": sources, "predictions": predictions, "references": groups}


def oracle_samples(corpus: dict[str, list], with_references: bool) -> tuple[list[dict], list[int]]:
    """unbabel-comet's samples: one per (example, reference), and each example's number of samples."""
    samples, counts = [], []
    for source, prediction, group in zip(corpus["sources"], corpus["predictions"], corpus["references"]):
        if with_references:
            samples += [{"src": source, "mt": prediction, "ref": reference} for reference in group]
            counts.append(len(group))
        else:
            samples.append({"src": source, "mt": prediction})
            counts.append(1)
    return samples, counts


def first_references(count: int) -> dict[str, list]:
    """The first ``count`` examples of the test corpus with their first reference only."""
    corpus = wmt_corpus(count)
    return {**corpus, "references": [group[:1] for group in corpus["references"]]}


def per_example(values: list[float], counts: list[int], reduce=lambda group: sum(group) / len(group)) -> list[float]:
    result, offset = [], 0
    for count in counts:
        result.append(reduce(values[offset:offset + count]))
        offset += count
    return result


# Monte Carlo dropout: passes per example, the model, examples (one reference each; after the corpus's
# 510-token texts, which would make 100 passes slow)
MCD_PASSES, MCD_MODEL, MCD_EXAMPLES = 100, "da_xlmr", slice(22, 27)
MCD_COUNT = MCD_EXAMPLES.stop - MCD_EXAMPLES.start


def mc_dropout_corpus() -> dict[str, list]:
    return {key: values[MCD_EXAMPLES] for key, values in first_references(MCD_EXAMPLES.stop).items()}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[dict[str, Path], dict[str, list[float]], dict[str, list[float]]]:
    """The three models, built and saved by unbabel-comet, its per-sample scores of the test corpus with each
    (`predict` with its default batch size, 16), and its Monte Carlo dropout means and deviations (`predict(
    mc_dropout=MCD_PASSES)`) of the MCD_EXAMPLES with MCD_MODEL, in one run of the oracle (importing
    it takes seconds)."""
    folder = tmp_path_factory.mktemp("comet")
    data = SHARED_DATA / "wmt17-en-de"
    if not data.is_dir():
        pytest.skip(f"WMT17 data not found at {data}")
    texts = read_lines(data / "newstest2017.ref.de")[:1000]
    texts += [record["reference"] for record in cnndm_or_skip(SHARED_DATA, 300)]
    corpus = wmt_corpus(300)
    steps = []
    for family in ("XLM-RoBERTa", "XLM-RoBERTa-XL", "BERT"):
        steps.append({"action": "encoder", "folder": str(folder / f"encoder-{family}"), "encoder_model": family,
                      "texts": texts})
    for seed, (name, (family, identifier, hparams)) in enumerate(MODELS.items()):
        steps.append({"action": "build", "folder": str(folder / name), "encoder": str(folder / f"encoder-{family}"),
                      "class_identifier": identifier, "seed": seed,
                      "hparams": {"encoder_model": family, **hparams}})
    for name, (_, identifier, _) in MODELS.items():
        samples, _ = oracle_samples(corpus, identifier == "regression_metric")
        steps.append({"action": "predict", "checkpoint": str(folder / name / "checkpoints" / "model.ckpt"),
                      "sample_sets": [samples]})
    samples, _ = oracle_samples(mc_dropout_corpus(), True)
    steps.append({"action": "predict", "checkpoint": str(folder / MCD_MODEL / "checkpoints" / "model.ckpt"),
                  "sample_sets": [samples], "mc_dropout": MCD_PASSES, "seed": 0, "metadata": ["mcd_scores", "mcd_std"]})
    results = run_oracle(ORACLE, {"action": "steps", "steps": steps})[-len(MODELS) - 1:]
    return ({name: folder / name for name in MODELS},
            {name: result["results"][0]["scores"] for name, result in zip(MODELS, results)},
            results[-1]["results"][0]["metadata"])


@pytest.fixture(scope="module")
def checkpoints(built) -> dict[str, Path]:
    return built[0]


@pytest.fixture(scope="module")
def oracle_scores(built) -> dict[str, list[float]]:
    return built[1]


@pytest.fixture(scope="module")
def oracle_mc_dropout(built) -> dict[str, list[float]]:
    return built[2]


@pytest.fixture(scope="module")
def comet():
    """The module with no checkpoint bound (the suite's shared one has a tiny checkpoint as its config)."""
    import evaluate

    return evaluate.load(str(ROOT / "metrics" / "comet"))


@pytest.mark.parametrize("name", list(MODELS))
def test_scores_equal_unbabel_comet(comet, checkpoints, oracle_scores, name) -> None:
    corpus = wmt_corpus(300)
    with_references = MODELS[name][1] == "regression_metric"
    _, counts = oracle_samples(corpus, with_references)
    inputs = corpus if with_references else {key: corpus[key] for key in ("sources", "predictions")}
    result = comet.compute(**inputs, checkpoint=str(checkpoints[name]), batch_size=32)
    expected = per_example(oracle_scores[name], counts)
    assert len(result["scores"]) == 300
    differences = [abs(ours - theirs) for ours, theirs in zip(result["scores"], expected)]
    assert max(differences) <= TOLERANCE, (name, max(differences))
    assert math.isclose(result["mean_score"], sum(expected) / len(expected), abs_tol=TOLERANCE)
    assert len(set(round(value, 6) for value in expected)) > 250  # the model tells examples apart
    if with_references:  # "max" over each example's references, from the same oracle samples
        best = comet.compute(**inputs, checkpoint=str(checkpoints[name]), reference_reduction="max")
        expected_best = per_example(oracle_scores[name], counts, max)
        assert max(abs(a - b) for a, b in zip(best["scores"], expected_best)) <= TOLERANCE


def test_checkpoint_as_config_name_and_as_ckpt_path(comet, checkpoints) -> None:
    corpus = wmt_corpus(20)
    import evaluate

    by_config = evaluate.load(str(ROOT / "metrics" / "comet"), config_name=str(checkpoints["da_xlmr"])).compute(**corpus)
    by_file = comet.compute(**corpus, checkpoint=str(checkpoints["da_xlmr"] / "checkpoints" / "model.ckpt"))
    assert by_config["scores"] == pytest.approx(by_file["scores"], abs=1e-7)
    assert by_config["model"] == str(checkpoints["da_xlmr"])


def test_batches_shards_and_order_give_the_same_scores(comet, checkpoints) -> None:
    corpus = wmt_corpus(60)
    checkpoint = str(checkpoints["da_xlmr"])
    whole = comet.compute(**corpus, checkpoint=checkpoint)
    for start in range(0, 60, 25):
        comet.add_batch(**{key: values[start:start + 25] for key, values in corpus.items()})
    streamed = comet.compute(checkpoint=checkpoint)
    assert streamed["scores"] == pytest.approx(whole["scores"], abs=1e-6)
    halves = [comet.example_stats(**{key: values[part] for key, values in corpus.items()}, checkpoint=checkpoint)
              for part in (slice(0, 30), slice(30, 60))]
    columns = {key: halves[0][key] + halves[1][key] for key in halves[0]}
    merged = comet.compute_from_stats(comet.reduce_stats(columns, checkpoint=checkpoint), checkpoint=checkpoint)
    assert merged["examples"] == 60
    assert merged["mean_score"] == pytest.approx(whole["mean_score"], abs=1e-7)
    reversed_scores = comet.compute(**{key: values[::-1] for key, values in corpus.items()}, checkpoint=checkpoint)
    assert reversed_scores["scores"][::-1] == pytest.approx(whole["scores"], abs=1e-6)


def test_text_chunks_bound_the_distinct_texts() -> None:
    sources, predictions = ["s", "s", "s", "t"], ["a", "b", "a", "c"]
    references = [["r"], ["r"], ["r", "a"], ["u"]]
    # no two examples share both their source and their references except 0 and 1, already together: corpus order.
    # Distinct texts as the examples come: {s, a, r}, then b (4), then none new (4), then t, c, u (7)
    assert list(core_comet.text_chunks(sources, predictions, references, 4)) == [[0, 1, 2], [3]]
    assert list(core_comet.text_chunks(sources, predictions, references, 7)) == [[0, 1, 2, 3]]
    # each example has three distinct texts, more than 2: each is a chunk alone
    assert list(core_comet.text_chunks(sources, predictions, references, 2)) == [[0], [1], [2], [3]]
    # by role, the reference "a" of example 2 is a fifth entry beside the translation "a": [0, 1], then example 2's
    # four entries, then example 3's three (4 + 3 > 4)
    assert list(core_comet.text_chunks(sources, predictions, references, 4, separate_roles=True)) == [
        [0, 1], [2], [3]]
    assert list(core_comet.text_chunks([], [], [], 4)) == []


def test_text_chunks_take_each_segments_systems_together() -> None:
    """Three systems (p, q, v) on two segments (sources s1, s2; references r1, r2), in corpus order system by
    system. Taken in corpus order, chunks of at most five texts would be {s1, p1, r1}, {s2, p2, r2}, {s1, q1, r1},
    ...: six chunks, 18 texts. Taken segment by segment: {s1, r1, p1, q1, v1} and {s2, r2, p2, q2, v2}, 10 texts,
    each source and reference once."""
    sources = ["s1", "s2"] * 3
    predictions = ["p1", "p2", "q1", "q2", "v1", "v2"]
    references = [["r1"], ["r2"]] * 3
    assert list(core_comet.text_chunks(sources, predictions, references, 5)) == [[0, 2, 4], [1, 3, 5]]
    # four texts a chunk: segment 1's fifth text (v1) opens the next chunk, which then has no room for segment 2
    assert list(core_comet.text_chunks(sources, predictions, references, 4)) == [[0, 2], [4], [1, 3], [5]]
    # a shared source with different references is a different segment; so is a different source
    assert list(core_comet.text_chunks(["s", "s", "t", "s"], ["a", "b", "c", "d"], [["r"], ["x"], ["r"], ["r"]],
                                       4)) == [[0, 3], [1], [2]]


def test_chunks_of_distinct_texts_keep_unbabel_comets_scores(checkpoints, oracle_scores) -> None:
    """The corpus scored in chunks of at most 40 distinct texts (examples with several references among them)
    keeps unbabel-comet's scores of it, scored in one piece; so does the corpus followed by itself reversed (a
    second system equal to the first, whose examples each chunk takes next to the first's)."""
    corpus = wmt_corpus(300)
    columns = (corpus["sources"], corpus["predictions"], corpus["references"])
    assert len(list(core_comet.text_chunks(*columns, 40))) > 20
    located = core_comet_checkpoint.locate_checkpoint("comet", str(checkpoints["da_xlmr"]))
    loaded = core_comet.load_comet("comet", located, core_comet.encoder_folder("comet", located, None),
                                   device=torch.device("cpu"), dtype=torch.float32)
    results = core_comet.comet_scores(loaded, *columns, batch_size=16, chunk_texts=40)
    expected = per_example(oracle_scores["da_xlmr"], oracle_samples(corpus, True)[1])
    assert max(abs(result.score - value) for result, value in zip(results, expected, strict=True)) <= TOLERANCE
    doubled = tuple(column + column[::-1] for column in columns)
    chunks = list(core_comet.text_chunks(*doubled, 40))
    # an example's copy adds no text, so no chunk ends between them
    chunk_of = {index: number for number, chunk in enumerate(chunks) for index in chunk}
    assert len(chunks) > 20 and all(chunk_of[index] == chunk_of[599 - index] for index in range(300))
    results = core_comet.comet_scores(loaded, *doubled, batch_size=16, chunk_texts=40)
    expected = expected + expected[::-1]
    assert max(abs(result.score - value) for result, value in zip(results, expected, strict=True)) <= TOLERANCE


def test_model_loaded_once_per_process(comet, checkpoints) -> None:
    registry = core_process._registry().state
    loaded = [value for key, value in registry.items() if key.endswith("loaded COMET models")]
    corpus = wmt_corpus(5)
    comet.compute(**corpus, checkpoint=str(checkpoints["da_xlmr"]))
    loaded = [value for key, value in registry.items() if key.endswith("loaded COMET models")]
    assert len(loaded) == 1
    before = dict(loaded[0].models)
    comet.compute(**corpus, checkpoint=str(checkpoints["da_xlmr"]))
    import evaluate

    evaluate.load(str(ROOT / "metrics" / "comet")).compute(**corpus, checkpoint=str(checkpoints["da_xlmr"]))
    assert loaded[0].models == before and len(before) >= 1


def test_bf16_stays_close_to_fp32(comet, checkpoints) -> None:
    corpus = wmt_corpus(30)
    fp32 = comet.compute(**corpus, checkpoint=str(checkpoints["da_xlmr"]))
    bf16 = comet.compute(**corpus, checkpoint=str(checkpoints["da_xlmr"]), precision="bf16")
    spread = max(fp32["scores"]) - min(fp32["scores"])
    assert max(abs(a - b) for a, b in zip(fp32["scores"], bf16["scores"])) < 0.1 * spread


# --- Monte Carlo dropout --------------------------------------------------------------------------------------


def loaded_models() -> dict[tuple[str, ...], object]:
    """The process's loaded COMET models, by key (the last part says whether the copy is for MC dropout)."""
    registry = core_process._registry().state
    (loaded,) = [value for key, value in registry.items() if key.endswith("loaded COMET models")]
    return loaded.models


def test_mc_dropout_agrees_with_unbabel_comet_in_distribution(comet, checkpoints, oracle_mc_dropout) -> None:
    """Dropout masks are random, so the comparison with unbabel-comet's `predict(mc_dropout=100)` is statistical.

    Each example's MC dropout mean is the mean of 100 independent passes, here and in the oracle; if both draw
    from the same distribution, their difference has mean 0 and standard error sqrt((s_ours^2 + s_theirs^2) / 100)
    (each mean's variance is the pass variance over 100), and by the central limit theorem difference / error is
    close to a standard normal. With 5 examples compared, a bound of 5 standard errors is exceeded by chance with
    probability below 5 * 5.7e-7 (Bonferroni), about 3e-6. The deviations: for normal passes the log of a sample
    deviation of 100 has a standard deviation of about 1 / sqrt(2 * 99) = 0.071, so the log ratio of two has
    0.1; a bound of 0.75 per example is 7.5 of those (room for heavier tails than the normal's), and the
    geometric mean ratio over the 5 examples stays within exp(+-0.3), 3 of those even were the examples fully
    correlated. Without dropout (or with dropout that never reaches the score) the deviations are 0 and fail the
    ratio bound; the means alone would not tell (for this model dropout moves an example's mean by less than 5
    standard errors, so the deterministic scores would pass that bound too)."""
    corpus = mc_dropout_corpus()
    checkpoint = str(checkpoints[MCD_MODEL])
    deterministic = comet.compute(**corpus, checkpoint=checkpoint)
    torch.manual_seed(0)
    result = comet.compute(**corpus, checkpoint=checkpoint, mc_dropout=MCD_PASSES)
    assert result["scores"] == deterministic["scores"]  # the scores stay those of the model in evaluation mode
    assert result["mean_score"] == deterministic["mean_score"]
    ours_mean, ours_std = result["mcd_scores"], result["mcd_std"]
    theirs_mean, theirs_std = oracle_mc_dropout["mcd_scores"], oracle_mc_dropout["mcd_std"]
    assert len(ours_mean) == len(ours_std) == len(theirs_mean) == MCD_COUNT
    assert min(ours_std) > 0 and min(theirs_std) > 0
    errors = [math.sqrt((a ** 2 + b ** 2) / MCD_PASSES) for a, b in zip(ours_std, theirs_std)]
    standardised = [abs(a - b) / error for a, b, error in zip(ours_mean, theirs_mean, errors)]
    assert max(standardised) < 5, max(standardised)
    log_ratios = [math.log(a / b) for a, b in zip(ours_std, theirs_std)]
    assert max(map(abs, log_ratios)) < 0.75, max(map(abs, log_ratios))
    assert abs(sum(log_ratios) / MCD_COUNT) < 0.3


def test_mc_dropout_runs_n_passes_in_training_mode(comet, checkpoints) -> None:
    corpus = first_references(6)
    checkpoint = str(checkpoints[MCD_MODEL])
    first = comet.compute(**corpus, checkpoint=checkpoint, mc_dropout=2)
    file = str((checkpoints[MCD_MODEL] / "checkpoints" / "model.ckpt").resolve())
    (key,) = [key for key in loaded_models() if key[0] == file and key[-1] == "mc-dropout"]
    model = loaded_models()[key].model
    assert model.training and all(module.training for module in model.modules())
    calls = []
    hook = model.estimator.register_forward_hook(lambda *_: calls.append(1))  # once per pass (under 4096 rows)
    try:
        result = comet.compute(**corpus, checkpoint=checkpoint, mc_dropout=7)
    finally:
        hook.remove()
    assert len(calls) == 7 and len(result["mcd_scores"]) == 6
    stats = comet.example_stats(**corpus, checkpoint=checkpoint, mc_dropout=3)
    assert len(stats["mcd_scores"]) == len(stats["mcd_std"]) == 6 and min(stats["mcd_std"]) > 0
    assert stats["mean_score"] == pytest.approx(first["scores"], abs=1e-6)


def test_mc_dropout_without_dropout_gives_the_deterministic_scores(comet, checkpoints, tmp_path) -> None:
    """A copy of the model with every dropout probability 0 (the estimator's, the layer mix's, the encoder's): its
    passes in training mode are the model in evaluation mode (nothing else changes in training mode)."""
    import json

    import yaml

    encoder = Path(shutil.copytree(checkpoints[MCD_MODEL].parent / "encoder-XLM-RoBERTa", tmp_path / "encoder"))
    config = json.loads((encoder / "config.json").read_text())
    config.update(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    (encoder / "config.json").write_text(json.dumps(config))
    model = copy_model(checkpoints[MCD_MODEL], tmp_path / "model")
    content = torch.load(model / "checkpoints" / "model.ckpt", weights_only=True)
    content["hyper_parameters"].update(dropout=0.0, pretrained_model=str(encoder))
    torch.save(content, model / "checkpoints" / "model.ckpt")
    hparams = yaml.safe_load((model / "hparams.yaml").read_text())
    (model / "hparams.yaml").write_text(yaml.safe_dump({**hparams, "dropout": 0.0, "pretrained_model": str(encoder)}))
    corpus = first_references(12)
    result = comet.compute(**corpus, checkpoint=str(model), mc_dropout=3)
    assert result["mcd_scores"] == pytest.approx(result["scores"], abs=1e-6)
    assert max(result["mcd_std"]) < 1e-6


def test_mc_dropout_passes_are_checked(comet, checkpoints) -> None:
    inputs = {"sources": ["a"], "predictions": ["b"], "references": ["c"], "checkpoint": str(checkpoints[MCD_MODEL])}
    with pytest.raises(ValueError, match=r"`mc_dropout` must be 0 \(off\) or at least 2 passes"):
        comet.compute(**inputs, mc_dropout=1)
    for bad in (-1, 2.5, True, "4"):
        with pytest.raises((TypeError, ValueError), match=r"`mc_dropout`"):
            comet.compute(**inputs, mc_dropout=bad)


# --- bad input -----------------------------------------------------------------------------------------------


def copy_model(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


def test_no_checkpoint_names_the_expected_layout(comet) -> None:
    with pytest.raises(ValueError, match=r"no COMET checkpoint given.*hparams\.yaml.*checkpoints/model\.ckpt"):
        comet.compute(sources=["a"], predictions=["b"], references=["c"])


def test_missing_and_incomplete_folders(comet, tmp_path, checkpoints) -> None:
    with pytest.raises(ValueError, match=r"neither a local path nor a model in the local Hugging Face cache"):
        comet.compute(sources=["a"], predictions=["b"], references=["c"], checkpoint=str(tmp_path / "absent"))
    broken = copy_model(checkpoints["da_xlmr"], tmp_path / "no-hparams")
    (broken / "hparams.yaml").unlink()
    with pytest.raises(ValueError, match=r"is not a COMET checkpoint: .*hparams\.yaml missing"):
        comet.compute(sources=["a"], predictions=["b"], references=["c"], checkpoint=str(broken))


def test_other_architectures_are_refused(comet, tmp_path, checkpoints) -> None:
    ranking = copy_model(checkpoints["da_xlmr"], tmp_path / "ranking")
    (ranking / "hparams.yaml").write_text("class_identifier: ranking_metric\n")
    with pytest.raises(ValueError, match=r"'ranking_metric' model; .*CometKiwi, XCOMET\), not ranking models"):
        comet.compute(sources=["a"], predictions=["b"], checkpoint=str(ranking))
    # hparams.yaml says BERT, the weights are XLM-R's
    mismatched = copy_model(checkpoints["da_xlmr"], tmp_path / "mismatched")
    text = (mismatched / "hparams.yaml").read_text().replace("encoder_model: XLM-RoBERTa", "encoder_model: BERT")
    text = text.replace(str(checkpoints["da_xlmr"].parent / "encoder-XLM-RoBERTa"),
                        str(checkpoints["da_xlmr"].parent / "encoder-BERT"))
    (mismatched / "hparams.yaml").write_text(text)
    torch_file = mismatched / "checkpoints" / "model.ckpt"
    content = torch.load(torch_file, weights_only=True)
    content.pop("hyper_parameters")
    torch.save(content, torch_file)
    with pytest.raises(ValueError, match=r"do not fit"):
        comet.compute(sources=["a"], predictions=["b"], references=["c"], checkpoint=str(mismatched))
    # bytes that are no checkpoint, a text file (unpickling it raised a bare IndexError: issue 32, defect 20) and an
    # empty file
    for name, content in (("garbage", b"not a checkpoint"), ("text", b"this is not a checkpoint\n"), ("empty", b"")):
        garbage = copy_model(checkpoints["da_xlmr"], tmp_path / name)
        (garbage / "checkpoints" / "model.ckpt").write_bytes(content)
        with pytest.raises(ValueError, match=r"^comet: could not read .* safely"):
            comet.compute(sources=["a"], predictions=["b"], references=["c"], checkpoint=str(garbage))
    # a checkpoint that pickles arbitrary objects is refused, never unpickled
    unsafe = copy_model(checkpoints["da_xlmr"], tmp_path / "unsafe")
    torch.save({"state_dict": {}, "callback": Path("x")}, unsafe / "checkpoints" / "model.ckpt")
    with pytest.raises(ValueError, match=r"could not read .* safely"):
        comet.compute(sources=["a"], predictions=["b"], references=["c"], checkpoint=str(unsafe))


def test_references_must_match_the_model_kind(comet, checkpoints) -> None:
    with pytest.raises(ValueError, match=r"reference-free \(QE\) model; it takes no `references`"):
        comet.compute(sources=["a"], predictions=["b"], references=["c"], checkpoint=str(checkpoints["qe_xl"]))
    with pytest.raises(ValueError, match=r"reference-based; `references` are required \(example 0 has none\)"):
        comet.compute(sources=["a"], predictions=["b"], checkpoint=str(checkpoints["da_xlmr"]))


def test_encoder_must_be_available_offline(comet, tmp_path, checkpoints) -> None:
    moved = copy_model(checkpoints["da_xlmr"], tmp_path / "elsewhere")
    (moved / "hparams.yaml").write_text((moved / "hparams.yaml").read_text().replace(
        str(checkpoints["da_xlmr"].parent / "encoder-XLM-RoBERTa"), "xlm-roberta-large"))
    content = torch.load(moved / "checkpoints" / "model.ckpt", weights_only=True)
    content["hyper_parameters"]["pretrained_model"] = "xlm-roberta-large"
    torch.save(content, moved / "checkpoints" / "model.ckpt")
    with pytest.raises(ValueError, match=r"'xlm-roberta-large' is not available offline.*pass `encoder_path`"):
        comet.compute(sources=["a"], predictions=["b"], references=["c"], checkpoint=str(moved))
    result = comet.compute(sources=["a"], predictions=["b"], references=["c"], checkpoint=str(moved),
                           encoder_path=str(checkpoints["da_xlmr"].parent / "encoder-XLM-RoBERTa"))
    assert len(result["scores"]) == 1


def test_bad_inputs(comet, checkpoints) -> None:
    checkpoint = str(checkpoints["da_xlmr"])
    with pytest.raises(ValueError, match=r"predictions.*sources"):
        comet.compute(sources=["a", "b"], predictions=["b"], references=["c"], checkpoint=checkpoint)
    with pytest.raises(TypeError, match=r"sources"):
        comet.compute(sources=[None], predictions=["b"], references=["c"], checkpoint=checkpoint)
    with pytest.raises(ValueError, match=r"`gpus` must be a non-negative integer"):
        comet.compute(sources=["a"], predictions=["b"], references=["c"], checkpoint=checkpoint, gpus=-1)
    with pytest.raises(ValueError, match=r"reference_reduction"):
        comet.compute(sources=["a"], predictions=["b"], references=["c"], checkpoint=checkpoint,
                      reference_reduction="median")


# --- the command-line scorer and the comparison report ---------------------------------------------------------


def test_command_line_scorer_needs_a_checkpoint_and_then_scores(comet, checkpoints, tmp_path) -> None:
    import json

    from score_cli import score_in_this_process

    corpus = wmt_corpus(12)
    files = {}
    for column in ("sources", "predictions"):
        files[column] = tmp_path / f"{column}.txt"
        files[column].write_text("\n".join(corpus[column]) + "\n", encoding="utf-8")
    files["references"] = tmp_path / "references.txt"
    files["references"].write_text("\n".join(group[0] for group in corpus["references"]) + "\n", encoding="utf-8")
    base = ["-p", str(files["predictions"]), "-r", str(files["references"]), "-s", str(files["sources"])]
    refused = score_in_this_process([*base, "-m", "comet"])
    assert refused.returncode != 0 and "comet cannot score this data: needs `-o comet.checkpoint=...`" in refused.stderr
    left_out = score_in_this_process([*base, "-m", "sacrebleu", "--format", "json"])
    assert left_out.returncode == 0 and "comet" not in json.loads(left_out.stdout)
    scored = score_in_this_process([*base, "-m", "comet", "-o", f"comet.checkpoint={checkpoints['da_xlmr']}",
                                    "--format", "json"])
    assert scored.returncode == 0, scored.stderr
    expected = comet.compute(sources=corpus["sources"], predictions=corpus["predictions"],
                                            references=[group[0] for group in corpus["references"]],
                                            checkpoint=str(checkpoints["da_xlmr"]))
    assert json.loads(scored.stdout)["comet"]["scores"] == pytest.approx(expected["scores"], abs=1e-6)


def test_comparison_report_with_a_checkpoint(comet, checkpoints, monkeypatch) -> None:
    """The report scores both systems in one call (sources and references embedded once; per system would raise
    here), and each system's COMET equals its own `compute` within the fp32 tolerance (the texts are embedded in
    other batches)."""
    import sys

    if str(ROOT / "scripts") not in sys.path:
        sys.path.insert(0, str(ROOT / "scripts"))
    from comparison import ComparisonError, ResamplingSettings, compare, from_columns, statistics

    def one_system_at_a_time(*args, **kwargs):
        raise AssertionError("comet scored one system at a time")

    monkeypatch.setattr(statistics.MetricStatistics, "add_system", one_system_at_a_time)

    corpus = wmt_corpus(40)
    references = [group[0] for group in corpus["references"]]
    systems = {"first": corpus["predictions"], "second": [group[-1] for group in corpus["references"]]}
    data = from_columns(references, systems, sources=corpus["sources"])
    with pytest.raises(ComparisonError, match=r"comet needs `-o comet.checkpoint=...`"):
        compare(data, ["comet"], progress=False)
    report = compare(data, ["comet"], options={"comet": {"checkpoint": str(checkpoints["da_xlmr"])}},
                     settings=ResamplingSettings(n_samples=100, ar_samples=100), progress=False)
    for system, outputs in systems.items():
        expected = comet.compute(sources=corpus["sources"], predictions=outputs, references=references,
                                 checkpoint=str(checkpoints["da_xlmr"]))
        (headline,) = report.headlines
        assert headline.key == "mean_score"
        assert report.cell(headline, system).score == pytest.approx(expected["mean_score"], abs=1e-6)
