"""comet with unbabel-comet's multitask models, CometKiwi (`unified_metric`) and XCOMET (`xcomet_metric`): scores and
error spans equal to unbabel-comet 2.2.7's own `predict`.

As in tests/test_comet.py, unbabel-comet itself (in `.venv-oracles`) builds the models on small randomly
initialised encoders, saves them in its own format and scores with `load_from_checkpoint(...).predict(...)`; the
module loads the same files. Models covered: a CometKiwi-style reference-free model (`input_segments` mt, src;
XLM-R, sparsemax layer mix with layer norm); a unified model reading source and reference with word-level tags
(three inputs per sample, scores averaged, tag probabilities weighted); XCOMET on an XLM-R-XL-shaped encoder
(scores capped at 1 and combined with the MQM score of its error spans), with references and without (its QE
mode). The taggers' weights are made confident (see tests/comet_oracle_run.py) so that spans open and close.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from conftest import ROOT, SHARED_DATA, read_lines
from learned_oracle import run_oracle
from test_comet import oracle_samples, wmt_corpus

from metrics._core.core_comet_spans import decode_spans, joined_ids, mqm_scores, xcomet_scores

ORACLE = Path(__file__).with_name("comet_oracle_run.py")
TOLERANCE = 1e-6  # fp32, as for the regression models
COUNT = 120

MODELS = {
    "kiwi": ("XLM-RoBERTa", "unified_metric",
             {"input_segments": ["mt", "src"], "sent_layer": "mix", "layer_transformation": "sparsemax",
              "layer_norm": True, "hidden_sizes": [48, 16], "word_level_training": False}, {}),
    "unified_tags": ("XLM-RoBERTa", "unified_metric",
                     {"input_segments": ["mt", "src", "ref"], "sent_layer": 1, "word_layer": 2,
                      "hidden_sizes": [24], "word_level_training": True, "error_labels": ["minor", "major"]}, {}),
    "xcomet": ("XLM-RoBERTa-XL", "xcomet_metric",
               {"word_layer": 1, "hidden_sizes": [32, 16], "layer_transformation": "softmax"},
               {"final_bias": 0.857, "tag_bias": 0.0, "tag_scale": 30.0}),  # some scores above the cap of 1
}
# the cases scored: (model, with references)
CASES = [("kiwi", False), ("unified_tags", True), ("unified_tags", False), ("xcomet", True), ("xcomet", False)]
# unbabel-comet's `set_decoding_threshold` on the models that tag words: (model, with references, threshold)
THRESHOLDS = (0.15, 0.6)
THRESHOLD_CASES = [(name, refs, threshold) for name, refs in (("unified_tags", True), ("xcomet", True), ("xcomet", False))
                   for threshold in THRESHOLDS]


def single_reference_corpus(count: int) -> dict[str, list]:
    """The test corpus of tests/test_comet.py with its first reference only (word-level models take one)."""
    corpus = wmt_corpus(count)
    return {**corpus, "references": [group[:1] for group in corpus["references"]]}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[dict[str, Path], dict[tuple, dict]]:
    """The models, built and saved by unbabel-comet, and its predictions (scores and error spans) of each case and
    threshold case."""
    folder = tmp_path_factory.mktemp("comet-unified")
    data = SHARED_DATA / "wmt17-en-de"
    if not data.is_dir():
        pytest.skip(f"WMT17 data not found at {data}")
    from cnndm_data import cnndm_or_skip

    texts = read_lines(data / "newstest2017.ref.de")[:1000]
    texts += [record["reference"] for record in cnndm_or_skip(SHARED_DATA, 300)]
    corpus = single_reference_corpus(COUNT)
    steps = [{"action": "encoder", "folder": str(folder / f"encoder-{family}"), "encoder_model": family,
              "texts": texts, "layers": 3} for family in ("XLM-RoBERTa", "XLM-RoBERTa-XL")]
    for seed, (name, (family, identifier, hparams, extra)) in enumerate(MODELS.items()):
        steps.append({"action": "build", "folder": str(folder / name), "encoder": str(folder / f"encoder-{family}"),
                      "class_identifier": identifier, "seed": 10 + seed, **extra,
                      "hparams": {"encoder_model": family, **hparams}})
    cases = [(name, with_references, None) for name, with_references in CASES] + THRESHOLD_CASES
    for name, with_references, threshold in cases:
        samples, _ = oracle_samples(corpus, with_references)
        steps.append({"action": "predict", "checkpoint": str(folder / name / "checkpoints" / "model.ckpt"),
                      "sample_sets": [samples], "metadata": ["error_spans"], "decoding_threshold": threshold})
    results = run_oracle(ORACLE, {"action": "steps", "steps": steps})[-len(cases):]
    predictions = {case[:2] if case[2] is None else case: result["results"][0] for case, result in zip(cases, results)}
    return {name: folder / name for name in MODELS}, predictions


@pytest.fixture(scope="module")
def comet():
    import evaluate

    return evaluate.load(str(ROOT / "metrics" / "comet"))


@pytest.mark.parametrize("case", CASES, ids=[f"{name}-{'ref' if refs else 'qe'}" for name, refs in CASES])
def test_scores_and_spans_equal_unbabel_comet(comet, built, case) -> None:
    checkpoints, predictions = built
    name, with_references = case
    corpus = single_reference_corpus(COUNT)
    inputs = corpus if with_references else {key: corpus[key] for key in ("sources", "predictions")}
    result = comet.compute(**inputs, checkpoint=str(checkpoints[name]), batch_size=32)
    expected = predictions[case]
    differences = [abs(ours - theirs) for ours, theirs in zip(result["scores"], expected["scores"], strict=True)]
    assert max(differences) <= TOLERANCE, (case, max(differences))
    assert math.isclose(result["mean_score"], expected["system_score"], abs_tol=TOLERANCE)
    assert len(set(round(value, 6) for value in expected["scores"])) > COUNT // 2  # the model tells examples apart
    if "error_spans" not in expected["metadata"]:
        assert "error_spans" not in result
        return
    theirs = expected["metadata"]["error_spans"]
    assert sum(map(len, theirs)) > COUNT // 2  # spans are there to compare
    for ours_spans, their_spans in zip(result["error_spans"], theirs, strict=True):
        assert_same_spans(ours_spans, their_spans)


@pytest.mark.parametrize("case", THRESHOLD_CASES,
                         ids=[f"{name}-{'ref' if refs else 'qe'}-{threshold}" for name, refs, threshold in THRESHOLD_CASES])
def test_decoding_threshold_equals_unbabel_comet(comet, built, case) -> None:
    """`decoding_threshold` as unbabel-comet's `set_decoding_threshold`: a token is an error where its error labels'
    probabilities sum to more than the threshold; spans (and XCOMET's scores, through its MQM part) as its own."""
    checkpoints, predictions = built
    name, with_references, threshold = case
    corpus = single_reference_corpus(COUNT)
    inputs = corpus if with_references else {key: corpus[key] for key in ("sources", "predictions")}
    result = comet.compute(**inputs, checkpoint=str(checkpoints[name]), batch_size=32, decoding_threshold=threshold)
    expected = predictions[case]
    assert max(abs(a - b) for a, b in zip(result["scores"], expected["scores"], strict=True)) <= TOLERANCE
    for ours_spans, their_spans in zip(result["error_spans"], expected["metadata"]["error_spans"], strict=True):
        assert_same_spans(ours_spans, their_spans)
    assert expected["metadata"]["error_spans"] != predictions[case[:2]]["metadata"]["error_spans"]  # it mattered


def test_decoding_threshold_is_checked(comet, built, tmp_path) -> None:
    checkpoints, _ = built
    inputs = {"sources": ["a"], "predictions": ["b"]}
    for bad in (0, 1, 1.5, -0.2, float("nan")):
        with pytest.raises(ValueError, match=r"`decoding_threshold` (must be between 0 and 1|is NaN)"):
            comet.compute(**inputs, checkpoint=str(checkpoints["xcomet"]), decoding_threshold=bad)
    with pytest.raises(ValueError, match=r"`decoding_threshold` chooses the error tags of error spans; model .* tags "
                                         r"no words"):
        comet.compute(**inputs, checkpoint=str(checkpoints["kiwi"]), decoding_threshold=0.5)
    # statistics made under another threshold never merge
    stats = comet.example_stats(**inputs, references=["c"], checkpoint=str(checkpoints["xcomet"]),
                                decoding_threshold=0.3)
    with pytest.raises(ValueError, match=r"computed with options"):
        comet.compute_from_stats(stats, checkpoint=str(checkpoints["xcomet"]))


def test_error_spans_in_example_stats_equal_compute(comet, built) -> None:
    """`example_stats` carries each example's error spans (a JSON string: `json.loads` gives compute's list) beside
    the statistics; `datasets.Dataset.map` stores them even where a first batch has no span at all."""
    import json

    import datasets

    checkpoints, _ = built
    checkpoint = str(checkpoints["xcomet"])
    corpus = single_reference_corpus(40)
    expected = comet.compute(**corpus, checkpoint=checkpoint, decoding_threshold=0.6)
    stats = comet.example_stats(**corpus, checkpoint=checkpoint, decoding_threshold=0.6)
    assert [json.loads(value) for value in stats["error_spans"]] == expected["error_spans"]
    assert sum(map(len, expected["error_spans"])) > 0
    # an example without spans first: the column's first batch (of one) holds only an empty list
    order = sorted(range(40), key=lambda index: len(expected["error_spans"][index]) > 0)
    assert not expected["error_spans"][order[0]]
    rows = datasets.Dataset.from_dict({"sources": [corpus["sources"][index] for index in order],
                                       "predictions": [corpus["predictions"][index] for index in order],
                                       "references": [corpus["references"][index][0] for index in order]})
    mapped = rows.map(lambda batch: comet.example_stats(**batch, checkpoint=checkpoint, decoding_threshold=0.6),
                      batched=True, batch_size=1)
    for value, index in zip(mapped["error_spans"], order, strict=True):  # scored one at a time: the last bits differ
        assert_same_spans(json.loads(value), expected["error_spans"][index])
    merged = comet.compute_from_stats(mapped, checkpoint=checkpoint, decoding_threshold=0.6)
    assert merged["mean_score"] == pytest.approx(expected["mean_score"], abs=TOLERANCE)


def test_unified_models_refuse_mc_dropout(comet, built) -> None:
    checkpoints, _ = built
    for name in ("kiwi", "xcomet"):
        with pytest.raises(ValueError, match=r"`mc_dropout` is for regression models .* does not implement Monte "
                                             r"Carlo dropout either"):
            comet.compute(sources=["a"], predictions=["b"], checkpoint=str(checkpoints[name]), mc_dropout=4)


def assert_same_spans(ours: list[dict], theirs: list[dict]) -> None:
    """Spans identical (texts, positions, severities), confidences within the tolerance."""
    assert [{**span, "confidence": None} for span in ours] == [{**span, "confidence": None} for span in theirs]
    assert [span["confidence"] for span in ours] == pytest.approx([span["confidence"] for span in theirs],
                                                                  abs=TOLERANCE)


def test_bf16_stays_close_to_fp32(comet, built) -> None:
    """A CometKiwi-style model's bf16 encoder (the layer mix and estimator in fp32): within 2e-3 of fp32 (observed
    9e-4 on scores near -0.29; this random model's scores span only about 2e-3, so bf16 does not keep their order)."""
    checkpoints, _ = built
    corpus = single_reference_corpus(30)
    inputs = {key: corpus[key] for key in ("sources", "predictions")}
    fp32 = comet.compute(**inputs, checkpoint=str(checkpoints["kiwi"]))["scores"]
    bf16 = comet.compute(**inputs, checkpoint=str(checkpoints["kiwi"]), precision="bf16")["scores"]
    assert max(abs(a - b) for a, b in zip(fp32, bf16)) < 2e-3
    assert fp32 != bf16  # bf16 did run


def test_word_level_models_take_one_reference_per_example(comet, built) -> None:
    checkpoints, _ = built
    with pytest.raises(ValueError, match=r"error spans of one \(translation, reference\) pair; example 0 has 2"):
        comet.compute(sources=["a"], predictions=["b"], references=[["c", "d"]], checkpoint=str(checkpoints["xcomet"]))
    with pytest.raises(ValueError, match=r"reference-free \(QE\) model; it takes no `references`"):
        comet.compute(sources=["a"], predictions=["b"], references=["c"], checkpoint=str(checkpoints["kiwi"]))


# --- the arithmetic around the encoder, by hand -----------------------------------------------------------------


def test_joined_input_is_xlmr_pairs_cut_at_the_positions() -> None:
    # <s>=0, </s>=2: unbabel-comet's concat_sequences of "<s> 5 6 </s>", "<s> 7 </s>", "<s> 8 9 </s>"
    assert joined_ids([[0, 5, 6, 2], [0, 7, 2], [0, 8, 9, 2]], 0, 2, 512) == [0, 5, 6, 2, 2, 7, 2, 2, 8, 9, 2]
    assert joined_ids([[0, 5, 6, 2], [0, 7, 2]], 0, 2, 5) == [0, 5, 6, 2, 2]  # cut, not closed again


def test_spans_close_on_o_and_an_open_span_is_dropped() -> None:
    import torch

    labels = ("O", "I-minor", "I-major")
    # tokens: <s> a b c d </s>; b, c tagged (major then minor: the span keeps its first severity), d alone at
    # the end is tagged and never closed
    probabilities = torch.tensor([[0.9, 0.05, 0.05], [0.8, 0.1, 0.1], [0.2, 0.2, 0.6], [0.3, 0.5, 0.2],
                                  [0.7, 0.2, 0.1], [0.1, 0.8, 0.1]])
    offsets = [(0, 0), (0, 1), (2, 4), (4, 6), (7, 8), (0, 0)]
    spans = decode_spans(probabilities, [0, 10, 11, 12, 13, 2], offsets, labels, lambda ids: "|".join(map(str, ids)))
    assert spans == [{"text": "11|12", "confidence": pytest.approx((0.6 + 0.5) / 2), "severity": "major",
                      "start": 2, "end": 6}]


def test_xcomet_score_combination_by_hand() -> None:
    import torch

    # two majors and a critical: penalty 20 -> MQM (25 - 20) / 25 = 0.2; five criticals: capped at 25 -> 0
    spans = [[{"severity": "major"}, {"severity": "major"}, {"severity": "critical"}], [{"severity": "critical"}] * 5]
    mqm = mqm_scores(spans)
    assert mqm.tolist() == pytest.approx([0.2, 0.0])
    weights = (0.12, 0.33, 0.33, 0.22)
    # three inputs: 0.12 * 0.5 + 0.33 * min(1.4, 1) + 0.33 * 0.9 + 0.22 * 0.2
    three = xcomet_scores([torch.tensor([0.5]), torch.tensor([1.4]), torch.tensor([0.9])], mqm[:1], weights)
    assert three.item() == pytest.approx(0.06 + 0.33 + 0.297 + 0.044, abs=1e-6)
    # one input (no reference): min(score, 1) * 0.78 + 0.22 * MQM
    one = xcomet_scores([torch.tensor([1.7])], mqm[1:], weights)
    assert one.item() == pytest.approx(0.78, abs=1e-6)


# --- the command-line scorer and the comparison report -----------------------------------------------------------


def test_command_line_scorer_gives_xcomet_spans(comet, built, tmp_path) -> None:
    import json

    from score_cli import score_in_this_process

    checkpoints, _ = built
    corpus = single_reference_corpus(12)
    files = {}
    for column in ("sources", "predictions"):
        files[column] = tmp_path / f"{column}.txt"
        files[column].write_text("\n".join(corpus[column]) + "\n", encoding="utf-8")
    files["references"] = tmp_path / "references.txt"
    files["references"].write_text("\n".join(group[0] for group in corpus["references"]) + "\n", encoding="utf-8")
    command = ["-p", str(files["predictions"]), "-r", str(files["references"]), "-s", str(files["sources"]),
               "-m", "comet", "-o", f"comet.checkpoint={checkpoints['xcomet']}"]
    scored = score_in_this_process([*command, "--format", "json"])
    assert scored.returncode == 0, scored.stderr
    expected = comet.compute(**corpus, checkpoint=str(checkpoints["xcomet"]))
    output = json.loads(scored.stdout)["comet"]
    assert output["scores"] == pytest.approx(expected["scores"], abs=1e-6)
    for ours, theirs in zip(output["error_spans"], expected["error_spans"], strict=True):
        assert_same_spans(ours, theirs)
    table = score_in_this_process(command)
    count = sum(map(len, expected["error_spans"]))
    assert table.returncode == 0 and f"{count} in 12 examples" in table.stdout
    # without -r the scorer runs the model reference-free (QE), as compute does without references
    without_references = [part for part in command if part not in ("-r", str(files["references"]))]
    scored = score_in_this_process([*without_references, "--format", "json"])
    assert scored.returncode == 0, scored.stderr
    expected = comet.compute(sources=corpus["sources"], predictions=corpus["predictions"],
                             checkpoint=str(checkpoints["xcomet"]))
    assert json.loads(scored.stdout)["comet"]["scores"] == pytest.approx(expected["scores"], abs=1e-6)


def test_comparison_report_shows_xcomet_spans_of_contrasting_examples(comet, built, tmp_path) -> None:
    import json
    import sys

    if str(ROOT / "scripts") not in sys.path:
        sys.path.insert(0, str(ROOT / "scripts"))
    from comparison import ResamplingSettings, compare, from_columns, write_report

    checkpoints, _ = built
    corpus = single_reference_corpus(30)
    references = [group[0] for group in corpus["references"]]
    systems = {"first": corpus["predictions"], "second": wmt_corpus(31)["predictions"][1:]}
    data = from_columns(references, systems, sources=corpus["sources"])
    report = compare(data, ["comet"], options={"comet": {"checkpoint": str(checkpoints["xcomet"])}},
                     settings=ResamplingSettings(n_samples=50, ar_samples=50), examples=3, progress=False)
    assert report.examples
    for system, outputs in systems.items():
        expected = comet.compute(sources=corpus["sources"], predictions=outputs, references=references,
                                 checkpoint=str(checkpoints["xcomet"]))
        for example in report.examples:
            assert_same_spans(example.annotations[system]["COMET error spans"], expected["error_spans"][example.index])
    written = write_report(report, tmp_path / "report", ["md", "json"])
    markdown = next(path for path in written if path.suffix == ".md").read_text(encoding="utf-8")
    assert "COMET error spans" in markdown
    document = json.loads(next(path for path in written if path.suffix == ".json").read_text(encoding="utf-8"))
    assert "annotations" in document["contrasting_examples"][0]
