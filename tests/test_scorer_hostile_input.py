"""Hostile and huge input to the command-line scorer (scripts/score.py) and the comparison report
(scripts/compare.py, scripts/comparison/), issue 32's rows 5, 6, 11 and 15-19: never a silent wrong number, a clear
message naming the file and line before any scoring, and every report format treating names and texts as data
(Markdown, CSV, LaTeX, figures), written whole or not at all, only inside the output folder."""

from __future__ import annotations

import csv
import io
import json
import os
import sys
import tracemalloc
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import ROOT, load_metric

if str(ROOT / "scripts") not in sys.path:
    sys.path.insert(0, str(ROOT / "scripts"))

import compare as compare_command  # noqa: E402
import score  # noqa: E402
from comparison import ComparisonError, ResamplingSettings, compare, from_columns, from_files, from_jsonl  # noqa: E402
from comparison import write_report  # noqa: E402
from comparison.files import DEFAULT_MAX_LINE_BYTES, InputFileError, csv_records, raw_lines, text_lines  # noqa: E402
from comparison.render import csv_cell, csv_document, latex_text, markdown_code, markdown_text  # noqa: E402

BOM = b"\xef\xbb\xbf"


def run_score(capsys: pytest.CaptureFixture[str], *arguments: str) -> dict:
    assert score.main([*arguments, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def write(path: Path, data: str | bytes) -> Path:
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


# -- row 5: CSV cells are text unless the column is numbers by its role ------------------------------------------


def test_csv_item_ids_01_and_1_are_two_items(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 32 row 5: `01` and `1` were both the number 1 (alpha -0.0889 over 3 items instead of 0.5333 over 4)."""
    ratings = [("01", "a", 1), ("01", "b", 1), ("1", "a", 2), ("1", "b", 2), ("2", "a", 1), ("2", "b", 2),
               ("3", "a", 2), ("3", "b", 2)]
    path = write(tmp_path / "ratings.csv", "item,annotator,label\n" + "".join(f"{i},{a},{x}\n" for i, a, x in ratings))
    result = run_score(capsys, "--jsonl", str(path), "-m", "agreement")["agreement"]
    expected = load_metric("agreement").compute(items=[r[0] for r in ratings], annotators=[r[1] for r in ratings],
                                                labels=[r[2] for r in ratings])
    assert result["num_items"] == 4 and result["krippendorff_alpha"] == pytest.approx(0.5333333333333333)
    assert result == json.loads(json.dumps(expected))


def test_csv_text_cells_that_look_like_numbers_stay_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`2020` in a text column is the text "2020" for a text metric (it was the int 2020, which chrF refused)."""
    path = write(tmp_path / "years.csv", "prediction,reference\n2020,2020\n1999,1998\n07,7\n")
    result = run_score(capsys, "--jsonl", str(path), "-m", "chrf")["chrf"]
    assert result == load_metric("chrf").compute(predictions=["2020", "1999", "07"], references=["2020", "1998", "7"])


def test_csv_number_columns_by_role() -> None:
    """Numbers only where every cell of a column is one (ints when all are integers), and only for a metric whose
    features take numbers there; ids and texts never."""
    assert score.CsvColumn(["1", " 2", "-3"], True).numbers == [1, 2, -3]
    assert score.CsvColumn(["1", "2.5", "1e3"], True).numbers == [1.0, 2.5, 1000.0]
    assert score.CsvColumn(["1", "two"], True).numbers is None
    assert score.CsvColumn(["1", ""], True).numbers is None
    assert score.CsvColumn(["1", "nan"], True).numbers is None and score.CsvColumn(["1_000"], True).numbers is None
    assert score.CsvColumn(["1", "2"], False).numbers is None and score.CsvColumn(["9" * 5000], True).numbers is None
    columns = {"predictions": score.CsvColumn(["1", "0"], True), "references": score.CsvColumn(["1", "1"], True)}
    assert score.metric_inputs(load_metric("accuracy"), columns) == {"predictions": [1, 0], "references": [1, 1]}
    assert score.metric_inputs(load_metric("chrf"), columns) == {"predictions": ["1", "0"], "references": ["1", "1"]}
    assert {"items", "annotators", "systems", "sources", "contexts", "facts"} <= score.TEXT_COLUMNS


# -- row 6: a byte-order mark is not part of the first segment, query or column ----------------------------------


def test_bom_text_files_score_as_without(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """chrF was 98.22 instead of 100 for identical files, one of them with a BOM."""
    text = "the cat sat on the mat\na storm cut the power\n"
    hypotheses, references = write(tmp_path / "h.txt", BOM + text.encode()), write(tmp_path / "r.txt", text)
    assert run_score(capsys, "-p", str(hypotheses), "-r", str(references), "-m", "chrf")["chrf"]["score"] == 100.0
    assert text_lines(hypotheses) == text.splitlines()
    data = from_files([references], [f"a={hypotheses}"])
    assert data.systems["a"][0] == "the cat sat on the mat"
    jsonl = write(tmp_path / "d.jsonl", BOM + b'{"reference": "x", "a": "x"}\n')
    assert from_jsonl(jsonl, ["a"]).references == [["x"]]


def test_bom_trec_files_keep_their_first_query(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The first query of a TREC run (or qrels) with a BOM was silently skipped (its id had the BOM glued on)."""
    from metrics._core.core_ranking_trec import read_trec_qrels, read_trec_run

    run = "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\nq2 Q0 d3 1 1.0 r\n"
    qrels = "q1 0 d1 1\nq2 0 d4 1\n"
    plain = {name: write(tmp_path / f"{name}.trec", text) for name, text in (("run", run), ("qrels", qrels))}
    marked = {name: write(tmp_path / f"{name}-bom.trec", BOM + text.encode())
              for name, text in (("run", run), ("qrels", qrels))}
    assert list(read_trec_run(marked["run"])) == ["q1", "q2"] and list(read_trec_qrels(marked["qrels"])) == ["q1", "q2"]
    expected = run_score(capsys, "--run", str(plain["run"]), "--qrels", str(plain["qrels"]), "-m", "mrr")
    assert expected["mrr"]["mrr"] == 0.5
    for run_file, qrels_file in ((marked["run"], plain["qrels"]), (plain["run"], marked["qrels"])):
        assert run_score(capsys, "--run", str(run_file), "--qrels", str(qrels_file), "-m", "mrr") == expected


# -- row 11: a bound on a line's length, checked before it is read whole ------------------------------------------


def test_a_line_over_the_bound_is_refused_naming_file_line_size_and_bound(tmp_path: Path) -> None:
    """One 58 MB line per side ran to a MemoryError at 4.2 GB; scaled down: a 5,000-byte line under a 1,000-byte
    bound, and the default bound at its edge."""
    hypotheses = write(tmp_path / "h.txt", "short\n" + "word " * 1000 + "\n")
    references = write(tmp_path / "r.txt", "short\nshort\n")
    with pytest.raises(SystemExit, match=r"h\.txt:2: the line is 5,000 bytes long, more than the bound of 1,000 "
                                         r"bytes.*--max-line-bytes"):
        score.main(["-p", str(hypotheses), "-r", str(references), "-m", "chrf", "--max-line-bytes", "1000"])
    with pytest.raises(SystemExit, match=r"--max-line-bytes must be a whole number of bytes, at least 0"):
        score.main(["-p", str(hypotheses), "-r", str(references), "-m", "chrf", "--max-line-bytes", "-1"])
    assert DEFAULT_MAX_LINE_BYTES == 1_000_000
    edge = write(tmp_path / "edge.txt", b"x" * DEFAULT_MAX_LINE_BYTES + b"\n" + b"y" * (DEFAULT_MAX_LINE_BYTES + 1))
    with pytest.raises(InputFileError, match=r"edge\.txt:2: the line is 1,000,001 bytes long"):
        text_lines(edge)
    assert len(text_lines(edge, 0)[1]) == DEFAULT_MAX_LINE_BYTES + 1, "0 lifts the bound"
    with pytest.raises(SystemExit, match=r"h\.txt:2: the line is 5,000 bytes long"):
        compare_command.main(["-r", str(references), "-s", str(hypotheses), "--max-line-bytes", "1000",
                              "--output", str(tmp_path / "out"), "--quiet"])


def test_an_overlong_line_is_measured_without_being_kept(tmp_path: Path) -> None:
    """A 40 MB file without a newline is refused with its size while the reader holds about one MB at a time."""
    path = tmp_path / "huge.txt"
    with open(path, "wb") as handle:
        for _ in range(40):
            handle.write(b"a" * 2**20)
    tracemalloc.start()
    try:
        with pytest.raises(InputFileError, match=r"huge\.txt:1: the line is 41,943,040 bytes long"):
            list(raw_lines(path, 1000))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20, peak


# -- row 19: files that are not what they should be: a message naming the file and line ---------------------------


@pytest.mark.parametrize(("name", "data", "message"), [
    ("bad.txt", b"fine\nbad \xff byte\n", r"bad\.txt:2: not UTF-8 text \(invalid start byte at byte 5 of the line\)"),
    ("deep.jsonl", b'{"prediction": "a", "reference": "a"}\n' + b"[" * 100_000 + b"\n",
     r"deep\.jsonl:2: the JSON nests too deeply"),
    ("list.jsonl", b'{"prediction": "a", "reference": "a"}\n[1, 2]\n', r"list\.jsonl:2 holds an array, not an object"),
    ("number.jsonl", b"3\n", r"number\.jsonl:1 holds a number, not an object"),
    ("broken.jsonl", b'{"prediction": "a"\n', r"broken\.jsonl:1 is not JSON"),
    ("digits.jsonl", b'{"prediction": ' + b"9" * 5000 + b"}\n", r"digits\.jsonl:1 is not JSON"),
    ("bad.csv", b"prediction,reference\na,b\n\xff,b\n", r"bad\.csv:3: not UTF-8 text"),
    ("fields.csv", b"prediction,reference\na,b,c\n", r"fields\.csv:2: 3 fields, but the header names 2 columns"),
    ("quote.csv", b'prediction,reference\n"a"b,c\n', r"quote\.csv:2: not valid CSV"),
    ("open.csv", b'prediction,reference\n"a,b\nc,d\n', r"open\.csv:3: not valid CSV \(unexpected end of data\)"),
    ("header.csv", b"prediction,prediction\na,b\n", r"header\.csv:1: the header line .* must name every column, each"),
    ("empty.csv", b"", r"empty\.csv: the CSV file is empty"),
])
def test_malformed_files_name_the_file_and_line(tmp_path: Path, name: str, data: bytes, message: str) -> None:
    path = write(tmp_path / name, data)
    arguments = ["--jsonl", str(path)] if name.endswith((".jsonl", ".csv")) else ["-p", str(path), "-r", str(path)]
    with pytest.raises(SystemExit, match=message):
        score.main([*arguments, "-m", "chrf"])
    if name.endswith(".jsonl"):
        with pytest.raises(ComparisonError, match=message):
            from_jsonl(path, ["prediction"], "reference")
    if name.endswith(".txt"):
        with pytest.raises(ComparisonError, match=message):
            from_files([path], [str(path)])


def test_csv_fields_over_csv_modules_default_limit_and_over_the_bound(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A 200,000-character field (over the csv module's 131,072) scores; a quoted field spread over lines that
    together pass the bound is refused naming the line."""
    long = "word " * 40_000
    path = write(tmp_path / "long.csv", f"prediction,reference\n{long},{long}\n")
    assert run_score(capsys, "--jsonl", str(path), "-m", "chrf")["chrf"]["score"] == 100.0
    spread = write(tmp_path / "spread.csv", 'prediction,reference\n"' + "abc\n" * 400 + '",x\n')
    with pytest.raises(SystemExit, match=r"spread\.csv:\d+: a field is longer than the bound of 1,000 bytes"):
        score.main(["--jsonl", str(spread), "-m", "chrf", "--max-line-bytes", "1000"])


def test_excel_bom_csv_reads_its_first_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Excel's UTF-8 CSV starts with a BOM: the first column was named '\\ufeffitem', and the message said the data
    'needs the input columns ['items']'."""
    text = "item,annotator,label\ni1,a,1\ni1,b,1\ni2,a,2\ni2,b,1\ni3,a,2\ni3,b,2\n"
    plain, excel = write(tmp_path / "plain.csv", text), write(tmp_path / "excel.csv", BOM + text.encode())
    assert [record for _, record in csv_records(excel)] == [record for _, record in csv_records(plain)]
    expected = run_score(capsys, "--jsonl", str(plain), "-m", "agreement")
    assert run_score(capsys, "--jsonl", str(excel), "-m", "agreement") == expected


def test_human_score_file_errors_name_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "human.txt", "0.5\nhigh\n")
    with pytest.raises(ComparisonError, match=r"human\.txt:2: 'high' is not a number"):
        compare_command.read_human_scores([f"a={path}"])


# -- rows 15-17: names and texts are data in every format --------------------------------------------------------

HOSTILE = {
    "base|line\n<script>alert(1)</script>": ["the cat sat on the mat", "a storm | cut\nthe power", "it rained"],
    "=HYPERLINK(\"http://x\",\"y\")": ["the cat sat on a mat", "<img src=x onerror=alert(1)>", "it rained all day"],
    "+1 [x](javascript:alert(1))": ["a cat sat on the mat", "the storm cut the power", "*rain* `all` day"],
    "sys$\\euro$": ["the cat sat", "a storm cut power &amp; light", "rain ~~all~~ day"],
    "-2": ["cat", "storm", "rain"], "@sum": ["the cat", "the storm", "the rain"], "\tx": ["a", "b", "c"],
    "[a]_b%#{}^~\\": ["the mat", "the power", "the day"],
}
REFERENCES = ["the cat sat on the mat", "a storm cut the power", "it rained all day"]


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory: pytest.TempPathFactory):
    report = compare(from_columns(REFERENCES, HOSTILE), ["chrf", "ter"],
                     settings=ResamplingSettings(n_samples=20, ar_samples=20), progress=False, examples=3)
    folder = tmp_path_factory.mktemp("hostile") / "report"
    write_report(report, folder)
    return report, folder


def test_markdown_keeps_its_cells_and_passes_no_html(hostile_report) -> None:
    """`|`, newlines and raw HTML in names and outputs shifted report.md's cells and passed HTML through (a renderer
    made `<script>` and `<img onerror>` elements)."""
    markdown_it = pytest.importorskip("markdown_it")
    report, folder = hostile_report
    text = (folder / "report.md").read_text(encoding="utf-8")
    page = markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(text)
    assert "<script" not in page and "<img src=x" not in page
    assert "<a " not in page and "<em>" not in page and "<del>" not in page
    assert page.count("<img ") == 4 and all(f'src="figures/{name}.png"' in page
                                            for name in ("intervals", "buckets-0", "buckets-1", "scatter"))
    first_table = page.split("<table>")[1]
    rows = first_table.split("<tbody>")[1].split("</tbody>")[0].split("<tr>")[1:]
    assert len(rows) == len(HOSTILE) and all(row.count("<td>") == 1 + 2 for row in rows)
    shown = [row.split("<td>")[1].split("</td>")[0] for row in rows]
    import html

    assert [html.unescape(cell) for cell in shown] == [name.replace("\n", " ").strip() for name in HOSTILE]
    assert markdown_text("a|b\nc<d>&e_f*g[h](i)`j`$k$~l~\\") == r"a\|b c\<d\>\&e\_f\*g\[h\](i)\`j\`\$k\$\~l\~\\"
    assert markdown_code("a`b") == "``a`b``" and markdown_code("x\ny") == "`x y`"


def test_csv_cells_never_start_a_formula(hostile_report) -> None:
    """System names starting with `=`, `+`, `-`, `@`, a tab were written unchanged into report.csv."""
    _, folder = hostile_report
    rows = list(csv.DictReader((folder / "report.csv").open(encoding="utf-8", newline="")))
    systems = {row["system"] for row in rows}
    assert systems == {csv_cell(name) for name in HOSTILE}
    texts = [cell for row in rows for cell in row.values() if not _is_number(cell)]
    assert texts and all(not cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in texts)
    assert "'=HYPERLINK(\"http://x\",\"y\")" in systems and "'-2" in systems and "'\tx" in systems
    assert csv_cell(-2.5) == -2.5 and csv_cell(" =1") == "' =1" and csv_cell("\uff1dSUM(A1)") == "'\uff1dSUM(A1)"
    assert csv_cell("plain") == "plain" and csv_cell("") == ""
    assert csv_document([{"=quality": "+x", "n": 3}]) == "'=quality,n\n'+x,3\n"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_dialogue_csv_is_neutralised_too() -> None:
    from comparison.dialogue import TableRow
    from comparison.dialogue_render import csv_text, markdown

    row = TableRow("metric", "bleu", "bleu", "BLEU", "turn", "pearson", "Pearson", 10, 2, {"=cmd|x": 0.5},
                   {"=cmd|x": 0.01})
    report = SimpleNamespace(table=[row], qualities=["=cmd|x"], systems=["@a", "b"], responses=10, notes=["<b>n</b>"],
                             signatures={}, options={})
    document = list(csv.reader(io.StringIO(csv_text(report))))
    assert document[0][-2:] == ["'=cmd|x", "'=cmd|x p-value"]
    text = markdown(report)
    assert "=cmd\\|x" in text and "<b>" not in text and "\\<b\\>n\\</b\\>" in text


def test_latex_escapes_every_special_character(hostile_report) -> None:
    _, folder = hostile_report
    tex = (folder / "report.tex").read_text(encoding="utf-8")
    assert "<script>" not in tex
    rows = [line for line in tex.splitlines() if line.endswith(r"\\")][1:]
    assert [row.split(" & ")[0] for row in rows] == [latex_text(name) for name in HOSTILE]
    assert latex_text("[a]_b%#{}^~\\<>|$&\n") == (r"{[}a{]}\_b\%\#\{\}\textasciicircum{}\textasciitilde{}"
                                                 r"\textbackslash{}\textless{}\textgreater{}\textbar{}\$\& ")


def test_figures_draw_names_with_dollars_as_plain_text(hostile_report) -> None:
    """`sys$\\euro$` made matplotlib's mathtext fail after all the scoring, and no report was written."""
    from comparison.plots import LABEL_CHARS, check_labels, plain

    _, folder = hostile_report
    svg = (folder / "figures" / "intervals.svg").read_text(encoding="utf-8")
    assert "sys$\\euro$" in svg and "<script>" not in svg
    check_labels(["sys$\\euro$", "$x^{$", "a$b", "\\$", "_hidden", "x" * 10_000])
    assert plain("a\nb$") == "a b\\$" and len(plain("x" * 500)) == LABEL_CHARS
    assert plain("_x", legend=True) == " _x"


def test_the_command_checks_names_before_scoring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from comparison import plots, statistics

    def no_scoring(*args, **kwargs):
        raise AssertionError("scoring started before the names were checked")

    def cannot_draw(texts):
        raise ValueError("the name 'x' cannot be drawn in the report's figures: boom")

    monkeypatch.setattr(statistics.MetricStatistics, "add_system", no_scoring)
    monkeypatch.setattr(plots, "check_labels", cannot_draw)
    reference = write(tmp_path / "ref.txt", "a b c\n")
    with pytest.raises(SystemExit, match=r"cannot be drawn in the report's figures"):
        compare_command.main(["-r", str(reference), "-s", f"x={reference}", "--output", str(tmp_path / "out")])


# -- row 18: the command's numbers and output folder, checked before any scoring ----------------------------------


@pytest.fixture
def no_scoring(monkeypatch: pytest.MonkeyPatch) -> None:
    from comparison import statistics

    def refuse(*args, **kwargs):
        raise AssertionError("scoring started before the command line was checked")

    monkeypatch.setattr(statistics.MetricStatistics, "add_system", refuse)


@pytest.mark.parametrize(("arguments", "message"), [
    (["--ar-samples", "1000000000"], r"--ar-samples\) must be a whole number from 0 \(no test\) to 1,000,000"),
    (["--bootstrap-samples", "0"], r"--bootstrap-samples\) must be a whole number from 1 to 100,000"),
    (["--bootstrap-samples", "100001"], r"--bootstrap-samples\) must be a whole number from 1 to 100,000"),
    (["--examples", "-3"], r"--examples must be from 0 to 1,000, got -3"),
    (["--seed", "-1"], r"the seed \(--seed\) must be a whole number >= 0"),
    (["--max-line-bytes", "-5"], r"--max-line-bytes must be a whole number of bytes"),
])
def test_bad_numbers_stop_before_scoring(tmp_path: Path, no_scoring, arguments, message) -> None:
    reference = write(tmp_path / "ref.txt", "a b c\nd e f\n")
    with pytest.raises(SystemExit, match=message):
        compare_command.main(["-r", str(reference), "-s", f"a={reference}", *arguments, "--output",
                              str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()


def test_api_checks_the_same_bounds() -> None:
    with pytest.raises(ComparisonError, match=r"--ar-samples"):
        ResamplingSettings(ar_samples=10**9)
    with pytest.raises(ComparisonError, match=r"level must be a number strictly between 0 and 1"):
        ResamplingSettings(level=1.5)
    with pytest.raises(ComparisonError, match=r"the number of examples \(--examples\) must be a whole number from 0"):
        compare(from_columns(["a"], {"x": ["a"]}), ["chrf"], examples=-3, progress=False)


def test_bad_output_folders_stop_before_scoring(tmp_path: Path, no_scoring) -> None:
    """`--output` naming an existing file (or a folder that cannot be written) failed with a traceback after all
    the scoring."""
    reference = write(tmp_path / "ref.txt", "a b c\nd e f\n")
    base = ["-r", str(reference), "-s", f"a={reference}", "--quiet", "--output"]
    existing = write(tmp_path / "report.html", "keep me")
    with pytest.raises(SystemExit, match=r"--output .*report\.html is an existing file, not a folder"):
        compare_command.main([*base, str(existing)])
    with pytest.raises(SystemExit, match=r"--output .* cannot be made: .*report\.html is a file, not a folder"):
        compare_command.main([*base, str(existing / "sub")])
    assert existing.read_text() == "keep me"
    folder = tmp_path / "out"
    (folder / "report.md").mkdir(parents=True)
    with pytest.raises(SystemExit, match=r"report\.md is a folder"):
        compare_command.main([*base, str(folder)])
    outside = write(tmp_path / "outside.txt", "outside")
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "report.csv").symlink_to(outside)
    with pytest.raises(SystemExit, match=r"report\.csv is a symbolic link"):
        compare_command.main([*base, str(linked)])
    assert outside.read_text() == "outside"
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        try:
            with pytest.raises(SystemExit, match=r"--output .*locked.* cannot be written"):
                compare_command.main([*base, str(locked / "report")])
        finally:
            locked.chmod(0o700)


def test_a_full_disk_leaves_no_truncated_file(hostile_report, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that fails (here every write goes to /dev/full: ENOSPC) raises a clear error naming the file and
    leaves neither a truncated report nor a temporary file."""
    if not Path("/dev/full").exists():
        pytest.skip("/dev/full is needed to simulate a full disk")
    from comparison import render

    report, _ = hostile_report
    real_fdopen = os.fdopen

    def full(handle, mode="r", *args, **kwargs):
        os.close(handle)
        return real_fdopen(os.open("/dev/full", os.O_WRONLY), mode, *args, **kwargs)

    monkeypatch.setattr(render.os, "fdopen", full)
    folder = tmp_path / "report"
    with pytest.raises(ComparisonError, match=r"could not write .*: No space left on device; nothing of it is left"):
        write_report(report, folder, ["md", "csv"])
    monkeypatch.undo()
    assert [path for path in folder.rglob("*") if path.is_file()] == []
    written = write_report(report, folder, ["md"])
    assert written == [folder / "report.md"] and (folder / "report.md").stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_files_stay_inside_the_output_folder(tmp_path: Path) -> None:
    from comparison.render import _inside

    assert _inside(tmp_path, "figures", "scatter.png") == tmp_path / "figures" / "scatter.png"
    for name in ("../x.png", "/etc/passwd", "a/b", "..", ".hidden"):
        with pytest.raises(ValueError, match="not a plain file name"):
            _inside(tmp_path, name)
