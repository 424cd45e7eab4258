"""usr: the official USR code's scores (MLM, DR x = c, DR x = f, the regression), its released inputs, and the paper's
correlations reproduced from its released sub-metric scores.

No trained USR model can be downloaded here, so parity is shown on tiny random RoBERTa models in the official
release's layout (tests/usr_checkpoint.py), scored by this module and by the official scoring steps transcribed
on transformers 2.2.0 (tests/usr_oracle_run.py in `.venv-usr`, see tests/learned_oracle.py). Data: the USR
annotation release (Topical-Chat and PersonaChat contexts, facts and responses, ../shared/data/usr), with edge cases
added; the paper's printed correlations come from its Table 3 (Topical-Chat, per quality) and Table 5 (Topical-Chat,
Overall Quality) (ACL 2020 version).
"""

from __future__ import annotations

import csv
import functools
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import METRICS_DIR, SHARED_DATA, load_metric
from learned_oracle import run_usr_oracle
from metrics._core import core_usr, core_usr_models
from score_cli import score_in_this_process
from usr_checkpoint import tiny_usr_models, write_usr_models

ORACLE = Path(__file__).with_name("usr_oracle_run.py")
USR_DATA = SHARED_DATA / "usr"
OFFICIAL = USR_DATA / "official-tc-scores"
# fp32 on the CPU; the differences are float summation order (oneDNN's linear layers and SDPA attention against
# transformers 2.2.0's matmuls, padding, batch composition, the loss's mean). Observed on the 675 examples: MLM (mean
# log-probabilities around -9) up to 2.9e-6, DR probabilities up to 4.4e-6 (the tiny models' wide weights give
# logits of tens), USR up to 1.6e-5 (USR multiplies an MLM difference by (0.660 + 0.404) / 0.391 = 2.72 and a DR
# one by (0.513 + 0.961) / 0.303 = 4.87).
MLM_TOLERANCE = 1e-5
DR_TOLERANCE = 1e-5
USR_TOLERANCE = 5e-5


@pytest.fixture(scope="module")
def usr():
    return load_metric("usr")  # bound to the suite's tiny models (conftest.model_config)


def _annotations(name: str) -> list[dict]:
    path = USR_DATA / name
    if not path.is_file():
        pytest.skip(f"USR annotations not found at {path}")
    return json.loads(path.read_text(encoding="utf-8"))


EDGE_CASES = [
    ("", "", ""),  # nothing at all: "_eos _go _eos"
    ("just one turn", "", "a reply"),
    ("first turn\nsecond turn\n\n  \n", "a fact", "a reply to the second turn"),
    ("Upper Case Turn", "A Fact With Capitals", "MIXED case Reply"),
    ("special <mask> tokens </s> in <s> text", "<pad> a fact<mask>", "reply<mask>with </s></s> tokens <unk>"),
    ("unicode: café naïve façade", "日本語のテキスト と 中文", "emoji 🙂👍🏽 and combining e\u0301 and ß"),
    ("non-breaking\u00a0space and\u2003em space", "tab\there", "zero\u200bwidth joiner\u200d!"),
    ('he said "hello" to me', 'the movie " incredibles ii " came out', 'i love "quotes" , don\'t you ?'),
    ("a " * 90, "b " * 90, "c " * 90),  # beyond MLM's 100 ids and DR's 128: truncated
    ("short", "the fact " * 80, "a long reply " * 30),  # DR: longest-first truncation of the fact first
    ("word " * 10, "fact", "reply " * 150),  # DR: the response is the longer one
    ("you", "", "ok ok ok ok"),
]


@functools.lru_cache(maxsize=1)
def parity_corpus() -> tuple[tuple[str, str, str], ...]:
    """Every USR annotation response (Topical-Chat 360, PersonaChat 300) with its context and fact, then the edge
    cases, then a repeated example (scored once)."""
    examples = [(record["context"], record["fact"], response["response"])
                for name in ("usr_topical_chat.json", "usr_percona_chat.json") for record in _annotations(name)
                for response in record["responses"]]
    return tuple(examples + EDGE_CASES + examples[:3])


def columns(examples) -> dict[str, list[str]]:
    return {"contexts": [e[0] for e in examples], "facts": [e[1] for e in examples],
            "predictions": [e[2] for e in examples]}


@functools.lru_cache(maxsize=4)
def oracle(examples: tuple[tuple[str, str, str], ...], lowercase: bool = True) -> dict:
    return run_usr_oracle(ORACLE, {"models": tiny_usr_models(), "examples": [list(e) for e in examples],
                                   "lowercase": lowercase})


def _assert_close(ours: list[float], theirs: list[float], tolerance: float, what: str) -> float:
    differences = [abs(a - b) for a, b in zip(ours, theirs, strict=True)]
    worst = max(range(len(differences)), key=differences.__getitem__)
    assert differences[worst] <= tolerance, f"{what}: example {worst} differs by {differences[worst]:.3g}"
    return differences[worst]


def test_scores_equal_the_official_code(usr) -> None:
    examples = parity_corpus()
    expected = oracle(examples)
    result = usr.compute(**columns(examples))
    for name, tolerance in (("mlm", MLM_TOLERANCE), ("dr_context", DR_TOLERANCE), ("dr_fact", DR_TOLERANCE),
                            ("usr", USR_TOLERANCE)):
        _assert_close(result[f"{name}_scores"], expected[name], tolerance, name)
        assert result[name] == pytest.approx(float(np.mean(expected[name])), abs=tolerance)
    assert result["examples"] == len(examples)


def test_token_ids_equal_the_official_tokenizer(usr) -> None:
    """The MLM texts' ids (before the 100-id window) are transformers 2.2.0's RobertaTokenizer's, id for id."""
    from metrics._core.core_usr_models import load_usr_model, locate_model

    examples = parity_corpus()
    expected = oracle(examples)["mlm_ids"]
    loaded = load_usr_model("usr", locate_model("usr", "mlm", None, tiny_usr_models()),
                            device=torch.device("cpu"), dtype=torch.float32)
    tokenizer = loaded.tokenizer
    for index, (context, fact, response) in enumerate(examples):
        text = core_usr.usr_texts(context, fact, response).mlm
        assert [tokenizer.cls_id, *tokenizer.ids(text), tokenizer.sep_id] == expected[index], (index, text)


def test_without_lowercasing_equal_the_official_code(usr) -> None:
    examples = tuple(EDGE_CASES)
    expected = oracle(examples, lowercase=False)
    result = usr.compute(**columns(examples), lowercase=False)
    for name, tolerance in (("mlm", MLM_TOLERANCE), ("dr_context", DR_TOLERANCE), ("dr_fact", DR_TOLERANCE),
                            ("usr", USR_TOLERANCE)):
        _assert_close(result[f"{name}_scores"], expected[name], tolerance, name)


def _released_rows(name: str) -> list[list[str]]:
    with open(OFFICIAL / name, encoding="utf-8-sig") as handle:  # as transformers 2.x's _read_tsv reads it
        return list(csv.reader(handle, delimiter="\t", quotechar=None))[1:]


@functools.lru_cache(maxsize=1)
def released() -> dict:
    """The released Topical-Chat sub-metric scores and inputs, each matched to its annotated response."""
    if not OFFICIAL.is_dir():
        pytest.skip(f"the official USR scores are not at {OFFICIAL}")
    lines = [line for line in (OFFICIAL / "undr_test.lm").read_text(encoding="utf-8").split("\n") if line]
    spaced = " ".join
    position = {}
    for index, line in enumerate(lines):
        turn, response = line.split(" _eos _go ")
        position[(spaced(turn.split()), spaced(response[:-len(" _eos")].split()))] = index
    scores = {name: json.loads((OFFICIAL / file).read_text(encoding="utf-8"))
              for name, file in (("mlm", "undr_mlm_roberta.scores"), ("dr_context", "both_dr.scores"),
                                 ("dr_fact", "fct_dr.scores"))}
    qualities = ("Understandable", "Natural", "Maintains Context", "Engaging", "Uses Knowledge", "Overall")
    human = {quality: [0.0] * len(lines) for quality in qualities}
    system = [""] * len(lines)
    annotated = [None] * len(lines)
    for record in _annotations("usr_topical_chat.json"):
        turn = spaced(core_usr.last_turn(record["context"]).split())
        for response in record["responses"]:
            if response["model"] == "Original Ground Truth":  # not scored: the paper leaves it out
                continue
            index = position.pop((turn, spaced(response["response"].split())))
            for quality in qualities:
                human[quality][index] = float(np.mean(response[quality]))
            system[index], annotated[index] = response["model"], (record["context"], response["response"])
    assert not position and len(lines) == 300
    return {"lines": lines, "scores": scores, "human": human, "system": system, "annotated": annotated,
            "both": _released_rows("both_dev.tsv"), "fct": _released_rows("fct_dev.tsv")}


def test_texts_equal_the_released_official_inputs() -> None:
    """For the 300 scored Topical-Chat responses, the module's MLM text and DR pairs are the released files' lines
    (examples/undr/test.lm, examples/both/dev.tsv, examples/fct/dev.tsv), csv quoting included; the DR fact is the
    released one (the annotation file's `fact` is the whole knowledge paragraph)."""
    data = released()
    quoted = 0
    for index, (context, response) in enumerate(data["annotated"]):
        first = data["fct"][index][3]
        fact = (first[1:-1].replace('""', '"') if first.startswith('"') else first)[:-len(" _eos")]
        texts = core_usr.usr_texts(context, fact, response)
        assert texts.mlm == data["lines"][index]
        assert texts.dr_context == tuple(data["both"][index][3:5])
        assert texts.dr_fact == tuple(data["fct"][index][3:5])
        quoted += any(text.startswith('"') for text in texts.dr_context)
    assert quoted == 57  # pairs where a text holds a double quote (the fact in 55, the response in 5)


def _usr_of_released(data: dict) -> list[float]:
    scores = data["scores"]
    return [core_usr.usr_regression(m, c, f)
            for m, c, f in zip(scores["mlm"], scores["dr_context"], scores["dr_fact"], strict=True)]


# The paper's Table 3 (Topical-Chat turn level, per quality: the best USR sub-metric and USR) and Table 5
# (Topical-Chat turn level, Overall Quality), as printed: (Spearman, Pearson). "Interesting" is the annotation
# file's "Engaging". The PDF cannot be opened here; public transcriptions agree with these values where they give
# them (sotaverified.org's USR entry: Topical-Chat "Spearman" 0.42 USR, 0.32 DR x = c, 0.31 MLM, 0.14 DR x = f,
# i.e. Table 5's first column; wizwand.com: Topical-Chat 0.4877 (Interesting, DR x = c) and Naturalness Pearson
# 0.337), and the abstract's turn-level 0.42.
PAPER_TURN_LEVEL = {
    ("Understandable", "mlm"): (0.3268, 0.3264), ("Understandable", "usr"): (0.3152, 0.2932),
    ("Natural", "mlm"): (0.3254, 0.3370), ("Natural", "usr"): (0.3037, 0.2763),
    ("Maintains Context", "dr_context"): (0.3650, 0.3391), ("Maintains Context", "usr"): (0.3769, 0.4160),
    ("Engaging", "dr_context"): (0.4877, 0.3533), ("Engaging", "usr"): (0.4645, 0.4555),
    ("Uses Knowledge", "dr_fact"): (0.4468, 0.2220), ("Uses Knowledge", "usr"): (0.3353, 0.3175),
    ("Overall", "mlm"): (0.3086, 0.3345), ("Overall", "dr_context"): (0.3245, 0.4068),
    ("Overall", "dr_fact"): (0.1419, 0.3221), ("Overall", "usr"): (0.4192, 0.4220),
}
ROUNDING = 5e-5 + 1e-12  # four printed decimals


def reproduced_correlations(data: dict) -> dict[tuple[str, str], tuple[float, float]]:
    from scipy import stats

    metric = {**data["scores"], "usr": _usr_of_released(data)}
    return {(quality, name): (stats.spearmanr(metric[name], data["human"][quality])[0],
                              stats.pearsonr(metric[name], data["human"][quality])[0])
            for quality in data["human"] for name in metric}


def test_regression_reproduces_the_papers_turn_level_correlations() -> None:
    """The released sub-metric scores, combined by the module's regression, give the paper's printed correlations
    to the last printed digit: Table 3 as printed; Table 5 (Overall) with its two columns exchanged (the paper's
    "Spearman" column holds each Pearson correlation and the reverse, for all four rows)."""
    ours = reproduced_correlations(released())
    for (quality, name), (spearman, pearson) in PAPER_TURN_LEVEL.items():
        computed_spearman, computed_pearson = ours[quality, name]
        if quality == "Overall":
            computed_spearman, computed_pearson = computed_pearson, computed_spearman
        assert abs(computed_spearman - spearman) <= ROUNDING, (quality, name, computed_spearman, spearman)
        assert abs(computed_pearson - pearson) <= ROUNDING, (quality, name, computed_pearson, pearson)
    # and the labels as computed are not the printed Overall ones (the exchange is real, not a tie)
    assert abs(ours["Overall", "usr"][0] - PAPER_TURN_LEVEL["Overall", "usr"][0]) > 1e-3


def test_regression_reproduces_the_papers_system_level_spearman() -> None:
    """System level (the mean score of each of the five scored systems against its mean Overall Quality):
    Spearman 1.0 for USR, as printed (the abstract: "Topical-Chat (turn-level: 0.42, system-level: 1.0)")."""
    from scipy import stats

    data = released()
    usr = _usr_of_released(data)
    systems = sorted(set(data["system"]))
    means = [np.mean([u for u, s in zip(usr, data["system"]) if s == system]) for system in systems]
    overall = [np.mean([h for h, s in zip(data["human"]["Overall"], data["system"]) if s == system])
               for system in systems]
    assert len(systems) == 5
    assert stats.spearmanr(means, overall)[0] == pytest.approx(1.0, abs=1e-12)


def test_regression_is_the_released_constants() -> None:
    assert core_usr.usr_regression(-1.012293440649907, 0.8604811806918587, 0.8472124995904354) == pytest.approx(
        3.597475447630256, abs=1e-15)
    # one released response by hand: z-scores of its three sub-metric scores, weighted by regr.pkl's coefficients
    scores = released()["scores"]
    mlm, context, fact = scores["mlm"][0], scores["dr_context"][0], scores["dr_fact"][0]
    by_hand = ((0.6601100065238369 + 0.4035348605308456) * (mlm + 1.012293440649907) / 0.39053753419230813
               + (0.5132785702080678 + 0.9605336086924106) * (context - 0.8604811806918587) / 0.30259338627812254
               + 0.35642553823787765 * (fact - 0.8472124995904354) / 0.27987823011851076 + 3.597475447630256)
    assert core_usr.usr_regression(mlm, context, fact) == pytest.approx(by_hand, abs=1e-12)


def test_batches_order_and_shards_give_the_same_scores(usr) -> None:
    examples = parity_corpus()[:24] + tuple(EDGE_CASES)
    one = usr.compute(**columns(examples))
    small = usr.compute(**columns(examples), batch_tokens=300)
    reversed_ = usr.compute(**columns(examples[::-1]))
    for name in core_usr.OUTPUTS:
        assert small[f"{name}_scores"] == pytest.approx(one[f"{name}_scores"], abs=USR_TOLERANCE / 4)
        assert reversed_[f"{name}_scores"][::-1] == pytest.approx(one[f"{name}_scores"], abs=USR_TOLERANCE / 4)
    half = len(examples) // 2
    shards = [usr.reduce_stats(usr.example_stats(**columns(part))) for part in (examples[:half], examples[half:])]
    merged = usr.compute_from_stats(shards)
    for name in core_usr.OUTPUTS:
        assert merged[name] == pytest.approx(one[name], abs=USR_TOLERANCE / 4)
    assert merged["mlm_model"] == one["mlm_model"]


def test_models_as_folders_safetensors_and_legacy_files(usr, tmp_path) -> None:
    """The models named one by one, re-saved as safetensors, and in torch's legacy (pre-1.6) file format as 2019's
    transformers saved them: the same scores."""
    folder = Path(tiny_usr_models())
    examples = EDGE_CASES
    expected = usr.compute(**columns(examples))
    named = usr.compute(**columns(examples), models=None, mlm_model=str(folder / "roberta_ft"),
                        dr_context_model=str(folder / "ctx"), dr_fact_model=str(folder / "uk"))
    assert named["usr_scores"] == expected["usr_scores"]
    assert named["dr_fact_model"] == str(folder / "uk")
    legacy = tmp_path / "legacy"
    shutil.copytree(folder, legacy)
    for role in ("roberta_ft", "ctx", "uk"):
        state = torch.load(legacy / role / "pytorch_model.bin", weights_only=True)
        torch.save(state, legacy / role / "pytorch_model.bin", _use_new_zipfile_serialization=False)
    assert usr.compute(**columns(examples), models=str(legacy))["usr_scores"] == expected["usr_scores"]
    saved = tmp_path / "safetensors"
    write_usr_models(saved, safetensors=True)  # the same seed, so the same weights
    assert (saved / "ctx" / "model.safetensors").is_file()
    again = usr.compute(**columns(examples), models=str(saved))["usr_scores"]
    assert again == pytest.approx(expected["usr_scores"], abs=1e-12)


def test_models_loaded_once_per_process(usr) -> None:
    core_usr_models.clear_usr_cache()
    usr.compute(**columns(EDGE_CASES[:2]))
    loaded = dict(core_usr_models._LOADED.models)
    usr.compute(**columns(EDGE_CASES[2:4]))
    assert len(loaded) == 3 and all(core_usr_models._LOADED.models[key] is value for key, value in loaded.items())


def test_bf16_stays_close_to_fp32(usr) -> None:
    examples = parity_corpus()[:60]
    fp32 = usr.compute(**columns(examples))
    bf16 = usr.compute(**columns(examples), precision="bf16")
    spread = np.std(fp32["usr_scores"])
    assert np.max(np.abs(np.array(bf16["usr_scores"]) - fp32["usr_scores"])) < 0.25 * spread
    with pytest.raises(ValueError, match="fp16"):
        usr.compute(**columns(examples[:1]), precision="fp16", device="cpu")


def test_without_models_the_error_says_what_each_is_and_where_they_come_from() -> None:
    import evaluate

    bare = evaluate.load(str(METRICS_DIR / "usr"))
    with pytest.raises(ValueError) as error:
        bare.compute(**columns(EDGE_CASES[:1]))
    message = str(error.value)
    for needed in ("mlm_model", "dr_context_model", "dr_fact_model", "roberta_ft", "ctx/", "uk/", "masked language",
                   "dialog-retrieval", "github.com/Shikib/usr", "nothing is downloaded"):
        assert needed in message
    with pytest.raises(ValueError, match="dr_fact_model"):  # two of three named: the third is asked for
        folder = Path(tiny_usr_models())
        bare.compute(**columns(EDGE_CASES[:1]), mlm_model=str(folder / "roberta_ft"),
                     dr_context_model=str(folder / "ctx"))


def test_wrong_kind_of_model_is_refused(usr, tmp_path) -> None:
    folder = Path(tiny_usr_models())
    with pytest.raises(ValueError, match="mlm_model.*holds a RoBERTa sequence classifier"):
        usr.compute(**columns(EDGE_CASES[:1]), mlm_model=str(folder / "ctx"))
    with pytest.raises(ValueError, match="dr_fact_model.*holds a RoBERTa masked language model"):
        usr.compute(**columns(EDGE_CASES[:1]), dr_fact_model=str(folder / "roberta_ft"))
    no_vocab = tmp_path / "no_vocab"
    shutil.copytree(folder / "uk", no_vocab)
    (no_vocab / "merges.txt").unlink()
    with pytest.raises(ValueError, match="merges.txt"):
        usr.compute(**columns(EDGE_CASES[:1]), dr_fact_model=str(no_vocab))
    with pytest.raises(ValueError, match="has no uk/"):
        partial = tmp_path / "partial"
        shutil.copytree(folder / "roberta_ft", partial / "roberta_ft")
        shutil.copytree(folder / "ctx", partial / "ctx")
        usr.compute(**columns(EDGE_CASES[:1]), models=str(partial))
    with pytest.raises(ValueError, match="not a folder"):
        usr.compute(**columns(EDGE_CASES[:1]), models=str(tmp_path / "nowhere"))
    three = tmp_path / "three"
    shutil.copytree(folder / "ctx", three)
    state = torch.load(three / "pytorch_model.bin", weights_only=True)
    state["classifier.out_proj.weight"] = torch.zeros(3, state["classifier.out_proj.weight"].shape[1])
    state["classifier.out_proj.bias"] = torch.zeros(3)
    torch.save(state, three / "pytorch_model.bin")
    with pytest.raises(ValueError, match="two"):
        usr.compute(**columns(EDGE_CASES[:1]), dr_context_model=str(three))


def test_unequal_columns_are_refused(usr) -> None:
    with pytest.raises(ValueError, match="contexts"):
        usr.compute(contexts=["a"], facts=["b", "c"], predictions=["d", "e"])
    with pytest.raises(TypeError, match=r"facts\[1\]"):
        usr.compute(contexts=["a", "b"], facts=["b", None], predictions=["d", "e"])


def test_command_line_scorer_needs_the_models_and_then_scores(usr, tmp_path) -> None:
    data = tmp_path / "dialogues.jsonl"
    examples = EDGE_CASES[:4]
    data.write_text("".join(json.dumps({"context": c, "fact": f, "prediction": r}) + "\n" for c, f, r in examples),
                    encoding="utf-8")
    command = ["--jsonl", str(data), "-m", "usr"]
    refused = score_in_this_process(command)
    assert refused.returncode != 0 and "-o usr.models=..." in refused.stderr
    folder = Path(tiny_usr_models())
    scored = score_in_this_process(command + ["-o", f"usr.models={folder}", "--format", "json"])
    assert scored.returncode == 0, scored.stderr
    result = json.loads(scored.stdout)["usr"]
    assert result["usr"] == pytest.approx(usr.compute(**columns(examples))["usr"], abs=1e-9)
    each = [f"usr.{option}={folder / sub}" for option, sub in
            (("mlm_model", "roberta_ft"), ("dr_context_model", "ctx"), ("dr_fact_model", "uk"))]
    by_folder = score_in_this_process(command + [part for pair in each for part in ("-o", pair)] + ["--format", "json"])
    assert by_folder.returncode == 0, by_folder.stderr
    assert json.loads(by_folder.stdout)["usr"]["usr"] == pytest.approx(result["usr"], abs=1e-12)
