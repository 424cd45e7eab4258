"""The dialogue evaluation (scripts/dialogue.py, scripts/comparison/dialogue.py): on the USR annotations, every
table value equals scipy's correlation of each module's own per-example scores with the mean ratings (turn level)
and of the per-system means (system level), the agreement rows equal scipy's pairwise and leave-one-out
correlations of the rating positions and the krippendorff package's alpha; the HTML, Markdown, CSV and JSON tables
agree; bad input stops before any scoring; the USR-JSON converter; USR itself on tiny models; the README's block."""

from __future__ import annotations

import csv
import html
import itertools
import json
import math
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from conftest import ROOT, load_metric

if str(ROOT / "scripts") not in sys.path:
    sys.path.insert(0, str(ROOT / "scripts"))

from comparison import ComparisonError  # noqa: E402
from comparison.dialogue import (  # noqa: E402
    DialogueMetric,
    dialogue_report,
    read_jsonl,
    read_usr_json,
    usr_rows,
    with_reference_system,
)
from comparison.dialogue_render import DIALOGUE_FORMATS, _pvalue  # noqa: E402

GROUND_TRUTH = "Original Ground Truth"
QUALITIES = ("Understandable", "Natural", "Maintains Context", "Engaging", "Uses Knowledge", "Overall")


@pytest.fixture(scope="module")
def topical_chat(shared_data: Path) -> Path:
    path = shared_data / "usr" / "usr_topical_chat.json"
    if not path.is_file():
        pytest.skip(f"USR annotations not found at {path}")
    return path


def oracle_rows(contexts: list[dict]) -> list[dict]:
    """Every response of the release as a plain dict, straight from the JSON: its context's position, model,
    text, the context's ground-truth response as reference (none for the ground truth itself) and ratings."""
    rows = []
    for index, context in enumerate(contexts):
        (truth,) = [r["response"] for r in context["responses"] if r["model"] == GROUND_TRUTH]
        for response in context["responses"]:
            rows.append({"item": index, "system": response["model"], "response": response["response"],
                         "context": context["context"], "fact": context["fact"],
                         "reference": None if response["model"] == GROUND_TRUTH else truth,
                         "ratings": {quality: response[quality] for quality in QUALITIES}})
    return rows


def correlations(scores: list[float], rows: list[dict]) -> dict[tuple[str, str, str], tuple[float, float]]:
    """(level, statistic, quality) -> (value, p-value): scipy on the per-response scores and mean ratings (turn),
    and on the per-system means of both (system)."""
    found = {}
    systems = list(dict.fromkeys(row["system"] for row in rows))
    for quality in QUALITIES:
        human = [float(np.mean(row["ratings"][quality])) for row in rows]
        system_scores = [np.mean([s for s, row in zip(scores, rows) if row["system"] == system]) for system in systems]
        system_human = [np.mean([h for h, row in zip(human, rows) if row["system"] == system]) for system in systems]
        for level, (x, y) in {"turn": (human, scores), "system": (system_human, system_scores)}.items():
            for name, function in (("pearson", stats.pearsonr), ("spearman", stats.spearmanr)):
                result = function(x, y)
                found[(level, name, quality)] = (float(result.statistic), float(result.pvalue))
    return found


def assert_rows_equal_oracle(report, label: str, scores: list[float], rows: list[dict]) -> None:
    expected = correlations(scores, rows)
    for (level, statistic, quality), (value, pvalue) in expected.items():
        row = report.row(label, level, statistic)
        assert row.responses == len(rows), label
        if math.isnan(value):  # a constant side: scipy's NaN is the module's documented 0.0, p-value 1.0
            assert (row.values[quality], row.pvalues[quality]) == (0.0, 1.0), (label, level, statistic, quality)
            continue
        assert row.values[quality] == pytest.approx(value, abs=1e-12), (label, level, statistic, quality)
        assert row.pvalues[quality] == pytest.approx(pvalue, rel=1e-9, abs=1e-300), (label, level, statistic, quality)


@pytest.fixture(scope="module")
def usr_report(topical_chat: Path):
    rows = with_reference_system(read_usr_json(topical_chat), GROUND_TRUTH)
    return dialogue_report(rows, ["bleu", "rouge", "chrf"],
                           options={"bleu": {"sentence_scores": True, "orders": [1, 2]}},
                           reference_system=GROUND_TRUTH)


def test_table_equals_scipy_on_the_modules_per_example_scores(usr_report, topical_chat: Path) -> None:
    """Each metric's rows: scipy's Pearson and Spearman (values and p-values) of the module's own per-example
    output (BLEU's sentence_scores and sentence_bleu_k, ROUGE's use_aggregator=False lists, chrF's
    sentence_scores) against the mean of the three ratings, over the 300 non-ground-truth responses; system level
    over the 5 systems' means."""
    rows = [row for row in oracle_rows(json.loads(topical_chat.read_text(encoding="utf-8"))) if row["reference"]]
    assert len(rows) == 300
    columns = {"predictions": [row["response"] for row in rows], "references": [row["reference"] for row in rows]}
    bleu = load_metric("bleu").compute(**columns, sentence_scores=True, orders=[1, 2])
    rouge = load_metric("rouge").compute(**columns, use_aggregator=False)
    chrf = load_metric("chrf").compute(**columns, sentence_scores=True)
    expected = {"BLEU (evaluate)": bleu["sentence_scores"], "BLEU-1": bleu["sentence_bleu_1"],
                "BLEU-2": bleu["sentence_bleu_2"], "ROUGE-1": rouge["rouge1"], "ROUGE-2": rouge["rouge2"],
                "ROUGE-L": rouge["rougeL"], "ROUGE-Lsum": rouge["rougeLsum"], "chrF": chrf["sentence_scores"]}
    labels = list(dict.fromkeys(row.label for row in usr_report.table if row.section == "metric"))
    assert labels == list(expected)
    for label, scores in expected.items():
        assert_rows_equal_oracle(usr_report, label, scores, rows)
    assert usr_report.systems[0] == GROUND_TRUTH and usr_report.responses == 360
    assert {row.systems for row in usr_report.table if row.section == "metric"} == {5}
    assert usr_report.qualities == list(QUALITIES)
    assert any("'Original Ground Truth' is the reference" in note and "300 of 360" in note
               for note in usr_report.notes)


def test_agreement_rows_equal_scipy_and_krippendorff(usr_report, topical_chat: Path) -> None:
    """The agreement rows over all 360 responses, the rating positions as annotators: the mean over the three
    position pairs of scipy's Spearman (Pearson), each position against the mean of the other two, and the
    krippendorff package's ordinal alpha; the Spearman row is the agreement card's USR Table 1 column."""
    krippendorff = pytest.importorskip("krippendorff")
    rows = oracle_rows(json.loads(topical_chat.read_text(encoding="utf-8")))
    table_1 = {"Understandable": 0.510247, "Natural": 0.487142, "Maintains Context": 0.559921,
               "Engaging": 0.581093, "Uses Knowledge": 0.708977, "Overall": 0.718329}
    for quality in QUALITIES:
        matrix = np.array([row["ratings"][quality] for row in rows], dtype=float)  # responses x positions
        pairs = list(itertools.combinations(range(3), 2))
        others = [[j for j in range(3) if j != i] for i in range(3)]
        expected = {
            "pairwise_spearman": np.mean([stats.spearmanr(matrix[:, i], matrix[:, j]).statistic for i, j in pairs]),
            "pairwise_pearson": np.mean([stats.pearsonr(matrix[:, i], matrix[:, j]).statistic for i, j in pairs]),
            "leave_one_out_spearman": np.mean([stats.spearmanr(matrix[:, i], matrix[:, rest].mean(axis=1)).statistic
                                               for i, rest in enumerate(others)]),
            "leave_one_out_pearson": np.mean([stats.pearsonr(matrix[:, i], matrix[:, rest].mean(axis=1)).statistic
                                              for i, rest in enumerate(others)]),
            "krippendorff_alpha": krippendorff.alpha(reliability_data=matrix.T, level_of_measurement="ordinal"),
        }
        for coefficient, value in expected.items():
            row = usr_report.agreement(coefficient)
            assert (row.responses, row.systems, row.pvalues) == (360, 6, None)
            assert row.values[quality] == pytest.approx(value, abs=1e-12), (coefficient, quality)
        assert round(usr_report.agreement("pairwise_spearman").values[quality], 6) == table_1[quality]


def _markdown_rows(text: str) -> list[list[str]]:
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines[1:]]


def _html_rows(text: str) -> list[list[str]]:
    body = text.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [[html.unescape(re.sub(r'</span><span class="detail">', " ", cell)).replace("<span class=\"score\">", "")
             .replace("</span>", "") for cell in re.findall(r"<td>(.*?)</td>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", body)]


def test_the_command_writes_one_table_in_every_format(topical_chat: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI on the release's JSON: the CSV's full-precision values are the JSON's, and the Markdown and HTML
    cells show them (4 decimals) with their p-values; the CSV of stdout is the file's."""
    from dialogue import main

    arguments = ["report", str(topical_chat), "--reference-system", GROUND_TRUTH, "-m", "bleu", "chrf",
                 "-o", "bleu.smooth=true"]
    assert main([*arguments, "--output", str(tmp_path)]) == 0
    assert "written: " in capsys.readouterr().out
    files = {name: (tmp_path / f"dialogue.{name}").read_text(encoding="utf-8") for name in DIALOGUE_FORMATS}
    records = list(csv.DictReader(files["csv"].splitlines()))
    document = json.loads(files["json"])
    markdown_rows, html_rows = _markdown_rows(files["md"]), _html_rows(files["html"])
    assert len(records) == len(document["table"]) == len(markdown_rows) == len(html_rows) == 2 * 4 + 5
    assert document["qualities"] == list(QUALITIES) and document["options"] == {"bleu": {"smooth": True}, "chrf": {}}
    for record, row, shown, page in zip(records, document["table"], markdown_rows, html_rows):
        first = [row["label"], row["level"], row["statistic_label"], str(row["responses"]), str(row["systems"])]
        assert shown[:5] == first and page[:5] == first
        for position, quality in enumerate(QUALITIES):
            value = float(record[quality])
            assert value == row["values"][quality]
            text = f"{value:.4f}"
            if row["pvalues"] is not None:
                assert float(record[f"{quality} p-value"]) == row["pvalues"][quality]
                text += f" (p={_pvalue(row['pvalues'][quality])})"
            else:
                assert record[f"{quality} p-value"] == ""
            assert shown[5 + position] == text
            assert page[5 + position] == text.replace(" (p=", " p=").removesuffix(")") if row["pvalues"] else text
    assert main([*arguments, "--formats", "csv"]) == 0
    assert capsys.readouterr().out == files["csv"]


def synthetic_records(contexts: int = 4, systems: tuple[str, ...] = ("a", "b", "c")) -> list[dict]:
    rng = np.random.default_rng(7)
    words = "the cat sat on a mat with my dog today".split()
    records = []
    for item in range(contexts):
        for system in systems:
            records.append({"context": f"hello {item}\nhow are you ?", "fact": "cats sit", "system": system,
                            "response": " ".join(rng.choice(words, 6)), "reference": " ".join(rng.choice(words, 6)),
                            "ratings": {"Natural": [int(v) for v in rng.integers(1, 4, 3)],
                                        "Overall": [int(v) for v in rng.integers(1, 6, 3)]}})
    return records


def write_records(path: Path, records: list) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def test_html_escapes_every_text(tmp_path: Path) -> None:
    records = synthetic_records(systems=("<b>one</b>", "two & three"))
    for record in records:
        record["ratings"] = {"<script>x</script>": record["ratings"]["Natural"], "A|B": record["ratings"]["Overall"]}
    rows = read_jsonl(write_records(tmp_path / "rows.jsonl", records))
    report = dialogue_report(rows, ["bleu"], options={"bleu": {"smooth": True}})
    from comparison.dialogue_render import html_page, markdown

    page = html_page(report)
    assert "<script>" not in page and "&lt;script&gt;x&lt;/script&gt;" in page
    assert "<b>one</b>" not in page and "&lt;b&gt;one&lt;/b&gt;" in page and "two &amp; three" in page
    header = [line for line in markdown(report).splitlines() if line.startswith("| metric")][0]
    assert "A\\|B" in header and len(_markdown_rows(markdown(report))[0]) == 5 + 2


def test_an_undefined_agreement_is_not_available_with_a_note(tmp_path: Path) -> None:
    """A quality every annotator rated alike has no agreement coefficient: n/a in the table (null in the JSON),
    with a note saying why, and the other quality's values as usual."""
    from comparison.dialogue_render import json_text, markdown

    records = synthetic_records()
    for record in records:
        record["ratings"]["Natural"] = [3, 3, 3]
    with pytest.warns(UserWarning) as caught:
        report = dialogue_report(read_jsonl(write_records(tmp_path / "rows.jsonl", records)), ["bleu"],
                                 options={"bleu": {"smooth": True}})
    # the correlations with a constant quality: meta_evaluation's 0.0, with the quality named in a warning and a note
    undefined = ("BLEU (evaluate): meta_evaluation: turn level: every row has the same human score "
                 "(quality 'Natural'), so the correlations are undefined (p-values 1.0); reported as 0.0")
    assert undefined in [str(warning.message) for warning in caught] and undefined in report.notes
    assert report.row("BLEU (evaluate)", "turn", "pearson").values["Natural"] == 0.0
    assert not any("(q0)" in note or "(q1)" in note for note in report.notes)
    alpha = report.agreement("krippendorff_alpha")
    assert math.isnan(alpha.values["Natural"]) and not math.isnan(alpha.values["Overall"])
    assert any(note.startswith("Krippendorff's alpha of 'Natural' is undefined (n/a): ") for note in report.notes)
    assert "| n/a |" in markdown(report)
    assert json.loads(json_text(report))["table"][-1]["values"]["Natural"] is None


def test_bad_input_stops_before_any_scoring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            topical_chat: Path) -> None:
    from dialogue import main

    def no_scoring(*args, **kwargs):
        raise AssertionError("scored before the error")

    monkeypatch.setattr(DialogueMetric, "add_system", no_scoring)
    good = synthetic_records()

    def changed(index: int, **fields) -> list[dict]:
        records = [json.loads(json.dumps(record)) for record in good]
        for key, value in fields.items():
            if value is None:
                records[index].pop(key)
            else:
                records[index][key] = value
        return records

    cases = {
        "unequal": (changed(5, ratings={"Natural": [1, 2], "Overall": [1, 2, 3]}),
                    r"rows.jsonl:6 has 2 ratings of 'Natural' but .*rows.jsonl:1 has 3"),
        "missing quality": (changed(2, ratings={"Overall": [1, 2, 3]}), r"rows.jsonl:3 has no ratings of 'Natural'"),
        "extra quality": (changed(2, ratings={"Natural": [1, 2, 3], "Overall": [1, 2, 3], "Fun": [1, 1, 1]}),
                          r"rows.jsonl:3 rates 'Fun', which .* does not"),
        "text rating": (changed(1, ratings={"Natural": [1, "2", 3], "Overall": [1, 2, 3]}),
                        r"rows.jsonl:2: rating 1 of 'Natural' is '2', not a finite number"),
        "null rating": (changed(1, ratings={"Natural": [1, 2, None], "Overall": [1, 2, 3]}), r"is None, not a finite"),
        "boolean rating": (changed(1, ratings={"Natural": [True, 2, 1], "Overall": [1, 2, 3]}), r"is True, not a"),
        "no ratings": (changed(0, ratings=None), r"rows.jsonl:1: 'ratings' must be an object"),
        "no response": (changed(0, response=None), r"rows.jsonl:1 has no field 'response' or 'prediction'"),
        "no system": (changed(0, system=None), r"rows.jsonl:1: 'system' must be a name"),
        "twice": (changed(1, system="a"), r"rows.jsonl:2: system 'a' answers the context of .*rows.jsonl:1 again"),
        "one system": ([dict(record, system="a", item=n) for n, record in enumerate(good)],
                       r"needs at least two systems"),
        "not an object": ([*good, [1, 2]], r"rows.jsonl:13 holds an array, not an object"),
        "annotator twice": (changed(0, annotators=["x", "y", "x"]), r"rows.jsonl:1: an annotator is named twice"),
        "annotators short": (changed(0, annotators=["x", "y"]), r"rows.jsonl:1: 3 ratings of 'Natural' but 2 annot"),
    }
    for name, (records, message) in cases.items():
        path = write_records(tmp_path / "rows.jsonl", records)
        with pytest.raises(ComparisonError, match=message):
            dialogue_report(read_jsonl(path), ["bleu"])
        with pytest.raises(SystemExit, match=message):
            main(["report", str(path), "-m", "bleu"])
    path = write_records(tmp_path / "rows.jsonl", good)
    metric_cases = {
        ("blue",): r"unknown metrics \['blue'\]",
        ("usr",): r"usr needs `-o usr.models=...`",
        ("sari",): r"sari needs the input columns \['sources'\], which dialogue rows do not have",
    }
    for metrics, message in metric_cases.items():
        with pytest.raises(SystemExit, match=message):
            main(["report", str(path), "-m", *metrics])
    without = write_records(tmp_path / "free.jsonl", [dict(record, reference=None) for record in good])
    with pytest.raises(SystemExit, match=r"bleu needs references and no response has one.*--reference-system"):
        main(["report", str(without), "-m", "bleu"])
    with pytest.raises(SystemExit, match=r"the reference system 'nobody' has no rows; the systems are \['a', 'b'"):
        main(["report", str(path), "-m", "bleu", "--reference-system", "nobody"])
    with pytest.raises(SystemExit, match=r"the systems \['d'\] have no rows"):
        main(["report", str(path), "-m", "bleu", "--systems", "a", "d"])
    with pytest.raises(SystemExit, match=r"needs 'annotators' in every row; .*rows.jsonl:1 has none"):
        main(["report", str(path), "-m", "bleu", "--agreement-by", "id"])
    with pytest.raises(SystemExit, match=r"option 'chrf.order=2' names metric 'chrf', which is not in --metrics"):
        main(["report", str(path), "-m", "bleu", "-o", "chrf.order=2"])
    contexts = json.loads(topical_chat.read_text(encoding="utf-8"))[:3]
    contexts[1]["responses"] = []
    usr_json = tmp_path / "usr.json"
    usr_json.write_text(json.dumps(contexts), encoding="utf-8")
    with pytest.raises(SystemExit, match=r"usr.json context 1 has no responses"):
        main(["report", str(usr_json), "-m", "bleu"])
    with pytest.raises(SystemExit, match=r"usr.json context 1 has no responses"):
        main(["usr-to-jsonl", str(usr_json), str(tmp_path / "out.jsonl")])
    with pytest.raises(ComparisonError, match=r"USR data must be a non-empty JSON list"):
        usr_rows({"context": "x"})


def test_usr_json_converter(topical_chat: Path, tmp_path: Path) -> None:
    """usr-to-jsonl writes one row per response with the ground truth as the others' reference (and none for
    itself); read back, the rows and the report equal those read from the release directly."""
    from dialogue import main

    out = tmp_path / "tc.jsonl"
    assert main(["usr-to-jsonl", str(topical_chat), str(out), "--reference-system", GROUND_TRUTH]) == 0
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    contexts = json.loads(topical_chat.read_text(encoding="utf-8"))
    expected = oracle_rows(contexts)
    assert len(written) == len(expected) == 360
    for record, row in zip(written, expected):
        assert record.get("reference") == row["reference"]
        assert (record["system"], record["response"], record["context"], record["fact"], record["ratings"]) == (
            row["system"], row["response"], row["context"], row["fact"], row["ratings"])
        assert record["annotators"] == contexts[row["item"]]["annotators"] and record["item"] == str(row["item"])
    direct = with_reference_system(read_usr_json(topical_chat), GROUND_TRUTH)
    converted = read_jsonl(out)
    assert [(r.item, r.system, r.response, r.reference, r.ratings, r.annotators) for r in converted] == [
        (r.item, r.system, r.response, r.reference, r.ratings, r.annotators) for r in direct]
    options = {"bleu": {"smooth": True}}
    first, second = (dialogue_report(rows, ["bleu"], options=options, agreement_by="id")
                     for rows in (direct, converted))
    assert [(row.label, row.level, row.statistic, row.values, row.pvalues) for row in first.table] == [
        (row.label, row.level, row.statistic, row.values, row.pvalues) for row in second.table]
    assert first.agreement("pairwise_spearman").statistic_label == "mean pairwise Spearman, by annotator id"


def test_usr_on_tiny_models_scores_every_response(topical_chat: Path, tmp_path: Path) -> None:
    """USR (reference-free) scores all 18 responses of three contexts, BLEU (reference-based) the 15 with a
    reference; each row equals scipy on the module's own usr_scores / sentence_scores."""
    from usr_checkpoint import tiny_usr_models

    models = tiny_usr_models()
    contexts = json.loads(topical_chat.read_text(encoding="utf-8"))[:3]
    usr_json = tmp_path / "three.json"
    usr_json.write_text(json.dumps(contexts), encoding="utf-8")
    rows = with_reference_system(read_usr_json(usr_json), GROUND_TRUTH)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant quality over 18 responses: the documented 0.0 with a warning
        report = dialogue_report(rows, ["usr", "bleu"], options={"usr": {"models": models}, "bleu": {"smooth": True}},
                                 reference_system=GROUND_TRUTH)
    everything = oracle_rows(contexts)
    scored = [row for row in everything if row["reference"]]
    usr = load_metric("usr").compute(contexts=[row["context"] for row in everything],
                                     facts=[row["fact"] for row in everything],
                                     predictions=[row["response"] for row in everything], models=models)
    bleu = load_metric("bleu").compute(predictions=[row["response"] for row in scored],
                                       references=[row["reference"] for row in scored], smooth=True,
                                       sentence_scores=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy's warning for the same constant quality
        for label, key in (("USR", "usr_scores"), ("USR MLM", "mlm_scores"), ("USR DR-c", "dr_context_scores"),
                           ("USR DR-f", "dr_fact_scores")):
            assert_rows_equal_oracle(report, label, usr[key], everything)
        assert_rows_equal_oracle(report, "BLEU (evaluate)", bleu["sentence_scores"], scored)
    assert report.row("USR", "system", "pearson").systems == 6
    assert report.row("BLEU (evaluate)", "turn", "spearman").systems == 5
    assert any("Reference-free metrics (usr) score every response (18)" in note for note in report.notes)


def test_readme_dialogue_block_runs(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                    usr_report, topical_chat: Path) -> None:
    """The README's "Dialogue evaluation" Python block, run as written from the repository root: it prints the
    values the oracle-checked report holds."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    if "## Dialogue evaluation" not in readme:
        pytest.skip("README.md has no 'Dialogue evaluation' section yet")
    section = readme.split("## Dialogue evaluation", 1)[1].split("\n## ", 1)[0]
    blocks = [block for block in re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
              if block.startswith("# run by tests/test_dialogue_report.py")]
    assert blocks
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "path", list(sys.path))
    for index, code in enumerate(blocks):
        exec(compile(code, f"README.md dialogue block {index}", "exec"), {})  # noqa: S102
    printed = [float(line) for line in capsys.readouterr().out.split()]
    rows = with_reference_system(read_usr_json(topical_chat), GROUND_TRUTH)
    report = dialogue_report(rows, ["bleu", "rouge"], options={"bleu": {"orders": [1, 2, 3, 4]}})
    assert printed == [report.row("BLEU-2", "turn", "spearman").values["Overall"],
                       report.row("ROUGE-L", "system", "pearson").values["Engaging"],
                       usr_report.agreement("pairwise_spearman").values["Overall"]]
