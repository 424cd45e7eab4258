"""The command-line scorer (scripts/score.py): text files and JSONL, metrics chosen by the data they fit,
per-metric options, clear errors before any scoring. Results equal the modules' own `compute`. The first test and
the bad command lines run the script as its own process, as a user does; the others call its ``main`` in this
process (tests/score_cli.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import load_metric
from score_cli import score_in_a_process, score_in_this_process

PREDICTIONS = ["the cat sat on the mat", "a storm cut the power"]
REFERENCES = [["the cat sat on a mat", "a cat was on the mat"], ["a storm knocked out power", "the power went"]]


def run(*arguments: str, cwd: Path) -> subprocess.CompletedProcess:
    return score_in_this_process(arguments, cwd=cwd)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {"hyp": tmp_path / "hyp.txt", "ref1": tmp_path / "ref1.txt", "ref2": tmp_path / "ref2.txt",
             "jsonl": tmp_path / "data.jsonl"}
    paths["hyp"].write_text("\n".join(PREDICTIONS) + "\n", encoding="utf-8")
    paths["ref1"].write_text("\n".join(group[0] for group in REFERENCES) + "\n", encoding="utf-8")
    paths["ref2"].write_text("\n".join(group[1] for group in REFERENCES) + "\n", encoding="utf-8")
    paths["jsonl"].write_text("".join(json.dumps({"prediction": p, "references": r}) + "\n"
                                      for p, r in zip(PREDICTIONS, REFERENCES, strict=True)), encoding="utf-8")
    return paths


def test_text_files_with_two_references_and_an_option(files: dict[str, Path], tmp_path: Path) -> None:
    result = score_in_a_process(["-p", str(files["hyp"]), "-r", str(files["ref1"]), str(files["ref2"]), "-m",
                                 "sacrebleu", "rouge", "-o", "sacrebleu.tokenize=intl", "-o",
                                 'rouge.rouge_types=["rouge1"]', "--format", "json"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    assert output["sacrebleu"] == load_metric("sacrebleu").compute(predictions=PREDICTIONS, references=REFERENCES,
                                                                   tokenize="intl")
    assert output["rouge"] == load_metric("rouge").compute(predictions=PREDICTIONS, references=REFERENCES,
                                                           rouge_types=["rouge1"])


def test_jsonl_gives_the_same_result(files: dict[str, Path], tmp_path: Path) -> None:
    result = run("--jsonl", str(files["jsonl"]), "-m", "bleu", "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["bleu"] == load_metric("bleu").compute(predictions=PREDICTIONS,
                                                                            references=REFERENCES)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("-m", "nope"), "unknown metrics ['nope']"),
        (("-m", "bleu", "-o", "bleu.max_order"), "is not of the form metric.key=value"),
        (("-m", "bleu", "-o", "rouge.use_stemmer=true"), "names metric 'rouge', which is not in --metrics"),
        (("-m", "bleu", "--field", "references"), "is not of the form column=key"),
        (("-m", "bleu", "--field", "references=missing"), "needs the input columns ['references']"),
    ],
)
def test_bad_command_lines_stop_before_scoring(files: dict[str, Path], tmp_path: Path, arguments, message) -> None:
    result = score_in_a_process(["--jsonl", str(files["jsonl"]), *arguments], cwd=tmp_path)
    assert result.returncode != 0 and message in result.stderr, result.stderr


def test_files_of_different_lengths_are_refused(files: dict[str, Path], tmp_path: Path) -> None:
    files["ref2"].write_text("only one line\n", encoding="utf-8")
    result = run("-p", str(files["hyp"]), "-r", str(files["ref1"]), str(files["ref2"]), "-m", "bleu", cwd=tmp_path)
    assert result.returncode != 0 and "has 1 lines but" in result.stderr


@pytest.mark.parametrize(
    ("metrics", "records", "fields"),
    [
        (("accuracy", "f1", "matthews_correlation"),
         [{"pred": p, "gold": g} for p, g in zip([1, 0, 1, 1, 0, 1], [1, 0, 0, 1, 0, 0], strict=True)],
         ("predictions=pred", "references=gold")),
        (("seqeval",),
         [{"prediction": ["B-PER", "I-PER", "O"], "reference": ["B-PER", "I-PER", "O"]},
          {"prediction": ["O", "B-LOC", "O"], "reference": ["B-ORG", "O", "B-LOC"]}], ()),
        (("squad",),
         [{"prediction": {"id": "a", "prediction_text": "Denver Broncos"},
           "reference": {"id": "a", "answers": {"text": ["Denver Broncos"], "answer_start": [0]}}},
          {"prediction": {"id": "b", "prediction_text": "the moon"},
           "reference": {"id": "b", "answers": {"text": ["Moon", "the Sun"], "answer_start": [0, 0]}}}], ()),
    ],
)
def test_jsonl_labels_tags_and_answers(metrics, records, fields, tmp_path: Path) -> None:
    """Label, tag-sequence and SQuAD records score through JSONL (keys named with --field) as `compute` does."""
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    keys = dict(field.split("=") for field in fields)
    prediction_key, reference_key = keys.get("predictions", "prediction"), keys.get("references", "reference")
    result = run("--jsonl", str(path), "-m", *metrics, *(part for field in fields for part in ("--field", field)),
                 "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    for name in metrics:
        expected = load_metric(name).compute(predictions=[record[prediction_key] for record in records],
                                             references=[record[reference_key] for record in records])
        assert output[name] == json.loads(json.dumps(expected)), name


def test_jsonl_meta_evaluation_rows(tmp_path: Path) -> None:
    """Meta-evaluation rows (system, item, metric score, human score) score through JSONL with the default keys."""
    scores = {("A", 1): (0.7, 90), ("A", 2): (0.5, 60), ("B", 1): (0.4, 40), ("B", 2): (0.6, 70),
              ("C", 1): (0.1, 20), ("C", 2): (0.5, 20)}
    records = [{"system": system, "item": item, "prediction": prediction, "reference": reference}
               for (system, item), (prediction, reference) in scores.items()]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    result = run("--jsonl", str(path), "-m", "meta_evaluation", "-o", "meta_evaluation.grouping=none", "--format",
                 "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    expected = load_metric("meta_evaluation").compute(
        predictions=[r["prediction"] for r in records], references=[r["reference"] for r in records],
        systems=[r["system"] for r in records], items=[r["item"] for r in records], grouping="none")
    assert json.loads(result.stdout)["meta_evaluation"] == json.loads(json.dumps(expected))


def test_csv_rows_score_as_jsonl_does(tmp_path: Path) -> None:
    """A .csv with a header line gives the same columns as JSONL (numbers read as numbers): agreement ratings and
    meta-evaluation rows."""
    ratings = [("i1", "a", 1), ("i1", "b", 1), ("i2", "a", 2), ("i2", "b", 1), ("i3", "a", 2), ("i3", "b", 2)]
    path = tmp_path / "ratings.csv"
    path.write_text("item,annotator,label\n" + "".join(f"{i},{a},{label}\n" for i, a, label in ratings),
                    encoding="utf-8")
    result = run("--jsonl", str(path), "-m", "agreement", "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    expected = load_metric("agreement").compute(items=[r[0] for r in ratings], annotators=[r[1] for r in ratings],
                                                labels=[r[2] for r in ratings])
    assert json.loads(result.stdout)["agreement"] == json.loads(json.dumps(expected))
    rows = tmp_path / "rows.csv"
    rows.write_text("system,item,prediction,reference\nA,1,0.7,90\nA,2,0.5,60\nB,1,0.4,40\nB,2,0.6,70\n"
                    "C,1,0.1,20\nC,2,0.5,20\n", encoding="utf-8")
    result = run("--jsonl", str(rows), "-m", "meta_evaluation", "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    expected = load_metric("meta_evaluation").compute(
        systems=["A", "A", "B", "B", "C", "C"], items=[1, 2, 1, 2, 1, 2],
        predictions=[0.7, 0.5, 0.4, 0.6, 0.1, 0.5], references=[90, 60, 40, 70, 20, 20])
    assert json.loads(result.stdout)["meta_evaluation"] == json.loads(json.dumps(expected))
