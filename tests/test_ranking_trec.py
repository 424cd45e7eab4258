"""The TREC readers' arrays: ``read_trec_run`` / ``read_trec_qrels`` return a read-only mapping backed by arrays
(a whole-file parse where the file is regular), equal, in order and in print, to the ``{qid: {docno: value}}``
that the line-by-line reader builds, and to pytrec_eval's ``parse_run`` / ``parse_qrel`` where pytrec_eval reads
the file; and pairing such files gives the same per-query values as pairing the dicts, through the core and
through a module."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import numpy as np
import pytest

from conftest import load_metric
from metrics._core.core_ranking import RankingOptions, pair_queries, ranking_rows, ranking_totals
from metrics._core.core_ranking import read_trec_qrels, read_trec_run
from metrics._core.core_ranking_trec import _grade, _read_table, _score
from metrics._core import core_ranking_trec_parse
from metrics._core.core_ranking_trec_parse import parse_table
from test_ranking_core import oracle, pytrec_eval

RUN_LAYOUT = (6, False, "qid Q0 docno rank score tag", 4)
QRELS_LAYOUT = (4, True, "qid iter docno rel", 3)
IDS = ["d1", "d2", "doc-10", "é", "文書", "Ωmega", "x" * 30, "D1", "a#b", "z"]


def dict_run(path) -> dict:
    """The line-by-line reader's run (the reader as it was)."""
    return _read_table(path, *RUN_LAYOUT, _score)


def dict_qrels(path) -> dict:
    return _read_table(path, *QRELS_LAYOUT, _grade)


def files(tmp_path, seed: int, *, newline: str = "\n", separator: str = " ", extras: bool = False,
          interleave: bool = False) -> tuple:
    """A run and a qrels file of generated queries: tied scores, non-ASCII ids, queries only in one file;
    ``extras``: blank lines, comments and further fields; ``interleave``: a query's lines not all together."""
    rng = random.Random(seed)
    run_lines, qrels_lines = [], []
    for query in range(25):
        qid = f"q{query}" if query % 7 else f"запрос{query}"
        documents = rng.sample(IDS, rng.randint(1, len(IDS)))
        for rank, document in enumerate(documents, start=1):
            score = rng.choice((0.5, 1.0, 2.25, -3.0, round(rng.random(), 4), 1e-05, 12345678.9, 7))
            tail = " tag extra" if extras and rank % 3 == 0 else " tag"
            run_lines.append(separator.join([qid, "Q0", document, str(rank), str(score)]) + tail)
        for document in rng.sample(IDS, rng.randint(1, 5)):
            qrels_lines.append(separator.join([qid, "0", document, str(rng.choice((0, 1, 2, 3, -1, 1)))]))
    if interleave:
        run_lines = run_lines[1::2] + run_lines[0::2]
        qrels_lines = qrels_lines[1::2] + qrels_lines[0::2]
    if extras:
        run_lines[3:3] = ["", "# a comment", "   "]
        qrels_lines[2:2] = ["", "#q9 0 d1 1"]
    run_path, qrels_path = tmp_path / f"run{seed}.txt", tmp_path / f"qrels{seed}.txt"
    run_path.write_bytes((newline.join(run_lines) + newline).encode("utf-8"))
    qrels_path.write_bytes((newline.join(qrels_lines) + newline).encode("utf-8"))
    return run_path, qrels_path


def same_table(ours, reference: dict) -> None:
    """Equal, with the queries and each query's documents in the same order, and printed alike."""
    assert ours == reference and reference == ours
    assert len(ours) == len(reference) and list(ours) == list(reference)
    assert [list(ours[query].items()) for query in ours] == [list(judged.items()) for judged in reference.values()]
    assert repr(ours) == repr(reference)
    assert list(ours.keys()) == list(reference.keys()) and dict(ours.items()) == reference


CASES = {"regular": {}, "CRLF": {"newline": "\r\n"}, "tabs": {"separator": "\t"}, "extras": {"extras": True},
         "interleaved": {"interleave": True}, "all": {"newline": "\r\n", "extras": True, "interleave": True}}


@pytest.mark.parametrize("case", CASES)
def test_readers_equal_the_dict_reader(tmp_path, case: str) -> None:
    for seed in range(4):
        run_path, qrels_path = files(tmp_path, seed, **CASES[case])
        # the whole-file parse reads every one of these files (none falls back to the line-by-line reader)
        assert parse_table(run_path, 6, False, 4, False) is not None
        assert parse_table(qrels_path, 4, True, 3, True) is not None
        same_table(read_trec_run(run_path), dict_run(run_path))
        same_table(read_trec_qrels(qrels_path), dict_qrels(qrels_path))


@pytest.mark.parametrize("case", ["regular", "all"])
def test_files_parsed_in_many_pieces_read_alike(tmp_path, monkeypatch, case: str) -> None:
    monkeypatch.setattr(core_ranking_trec_parse, "_CHUNK", 50)  # queries and blank lines across pieces
    for seed in range(3):
        run_path, qrels_path = files(tmp_path, seed, **CASES[case])
        assert parse_table(run_path, 6, False, 4, False) is not None
        same_table(read_trec_run(run_path), dict_run(run_path))
        same_table(read_trec_qrels(qrels_path), dict_qrels(qrels_path))
    duplicate = tmp_path / "duplicate.txt"
    duplicate.write_text("".join(f"q1 0 d{number} 1\n" for number in range(20)) + "q1 0 d3 2\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"duplicate\.txt:21: duplicate document 'd3' for query 'q1' \(first at "
                                         r"line 4\)"):
        read_trec_qrels(duplicate)


@oracle
def test_readers_equal_pytrec_eval_parse(tmp_path) -> None:
    for seed in range(3):
        run_path, qrels_path = files(tmp_path, seed)
        with open(run_path, encoding="utf-8") as run, open(qrels_path, encoding="utf-8") as qrels:
            assert read_trec_run(run_path) == pytrec_eval.parse_run(run)
            assert read_trec_qrels(qrels_path) == pytrec_eval.parse_qrel(qrels)


@pytest.mark.parametrize(("text", "kind"), [
    ("\ufeffq1 Q0 d1 1 0.5 t\n", "run"),  # a byte-order mark
    ("q1 Q0 d1 1 inf t\nq1 Q0 d2 2 -Infinity t\n", "run"),  # scores the whole-file parse leaves to float()
    ("q1 Q0 d1 1 1_000.5 t\n", "run"),
    ("q1 Q0 d1 1 0.5 t", "run"),  # no final line feed
    ("q1 Q0 d\u00a0x 1 0.5 t\n", "run"),  # a non-ASCII space splits the line
    ("q1 0 d1 99999999999999999999\n", "qrels"),  # beyond 64 bits, kept as read
    ("q1 0 d1 +3\nq1 0 d2 -0\nq1 0 d3 007\n", "qrels"),
    ("", "run"),
    ("# nothing\n\n", "qrels"),
])
def test_irregular_files_read_as_before(tmp_path, text: str, kind: str) -> None:
    path = tmp_path / f"{kind}.txt"
    path.write_text(text, encoding="utf-8")
    reader, reference = (read_trec_run, dict_run) if kind == "run" else (read_trec_qrels, dict_qrels)
    same_table(reader(path), reference(path))


def test_empty_files_pair_to_no_queries(tmp_path) -> None:
    run_path, qrels_path = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run_path.write_text("", encoding="utf-8")
    qrels_path.write_text("# nothing\n", encoding="utf-8")
    paired = pair_queries(read_trec_run(run_path), read_trec_qrels(qrels_path), complete=True)
    assert paired.query_ids == [] and paired.runs == [] and paired.qrels == []


def test_the_mapping_is_read_only_and_misses_raise_key_error(tmp_path) -> None:
    run_path, _ = files(tmp_path, 1)
    run = read_trec_run(run_path)
    with pytest.raises(KeyError):
        run["absent"]
    with pytest.raises(TypeError):
        run["q1"] = {}  # type: ignore[index]
    assert "q1" in run and "absent" not in run and run.get("absent") is None
    assert run["q1"] is run["q1"]
    paired = pair_queries(run, read_trec_qrels(tmp_path / "qrels1.txt"))
    with pytest.raises(ValueError, match="read-only"):  # the paired scores are a view of the table's
        paired.runs.values[0] = 0.0


@pytest.mark.parametrize("complete", [False, True])
def test_pairing_files_scores_as_pairing_dicts(tmp_path, complete: bool) -> None:
    opts = RankingOptions.resolve("trec_eval", {"k": (1, 3, 10)})
    for seed in range(4):
        run_path, qrels_path = files(tmp_path, seed, interleave=seed % 2 == 1)
        from_files = pair_queries(read_trec_run(run_path), read_trec_qrels(qrels_path), complete=complete)
        from_dicts = pair_queries(dict_run(run_path), dict_qrels(qrels_path), complete=complete)
        assert from_files.query_ids == from_dicts.query_ids
        assert list(map(dict, from_files.runs)) == from_dicts.runs
        assert list(map(dict, from_files.qrels)) == from_dicts.qrels
        scores_of_judged = [ranking.get(document, math.nan)
                            for ranking, judged in zip(from_dicts.runs, from_dicts.qrels) for document in judged]
        np.testing.assert_array_equal(from_files.qrels.found, scores_of_judged)  # NaN: not retrieved
        rows = ranking_rows(from_files.runs, from_files.qrels, opts, checked=True)
        assert rows == ranking_rows(from_dicts.runs, from_dicts.qrels, opts)
        assert ranking_totals(from_files.runs, from_files.qrels, opts, checked=True) == ranking_totals(
            from_dicts.runs, from_dicts.qrels, opts)


def test_a_module_scores_files_as_dicts(tmp_path) -> None:
    metric = load_metric("ndcg")
    run_path, qrels_path = files(tmp_path, 5)
    from_files = pair_queries(read_trec_run(run_path), read_trec_qrels(qrels_path))
    from_dicts = pair_queries(dict_run(run_path), dict_qrels(qrels_path))
    ours = metric.compute(predictions=from_files.runs, references=from_files.qrels, k=[1, 3, 10], per_query=True)
    assert ours == metric.compute(predictions=from_dicts.runs, references=from_dicts.qrels, k=[1, 3, 10],
                                  per_query=True)


def test_queries_read_from_files_refuse_edits_and_to_dict_feeds_pytrec_eval(tmp_path) -> None:
    """An edited query would silently not be scored (the modules score the arrays), so it is refused; plain dicts
    come from ``dict(...)`` or ``to_dict()``, which pytrec_eval (it needs a dict of dicts) takes."""
    run_path, qrels_path = files(tmp_path, 3)
    run, qrels = read_trec_run(run_path), read_trec_qrels(qrels_path)
    query = next(iter(run))
    for edit in (lambda judged: judged.__setitem__("d1", 1.0), lambda judged: judged.pop("d1", None),
                 lambda judged: judged.update({"d1": 1.0}), lambda judged: judged.clear()):
        with pytest.raises(TypeError, match="read-only"):
            edit(run[query])
    copied = dict(run[query])
    copied["new"] = 1.0
    assert "new" not in run[query] and run.to_dict() == dict_run(run_path)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels.to_dict(), {"ndcg"})
    assert evaluator.evaluate(run.to_dict()) == pytrec_eval.RelevanceEvaluator(dict_qrels(qrels_path), {"ndcg"}).evaluate(
        dict_run(run_path))


def _number_texts(seed: int, count: int) -> list[str]:
    """Decimal numbers in the forms TREC files hold them: signs, points anywhere or none, leading and trailing
    zeros, up to 10 digits each side, exponents."""
    rng = random.Random(seed)
    texts: list[str] = []
    while len(texts) < count:
        whole = "".join(rng.choice("0123456789") for _ in range(rng.choice((0, 1, 1, 2, 3, 8, 9, 10))))
        fraction = "".join(rng.choice("0123456789") for _ in range(rng.choice((0, 1, 4, 6, 8, 9, 10))))
        text = rng.choice(("", "", "-", "+")) + whole + rng.choice(("", ".", ".")) + fraction
        if rng.random() < 0.05:
            text += rng.choice(("e", "E")) + rng.choice(("", "-", "+")) + str(rng.randint(0, 30))
        try:
            float(text)
        except ValueError:
            continue
        texts.append(text)
    return texts


# Where the whole-file parse's integer arithmetic meets its limits: 8 digits each side, digits just below and
# above 2**53 (9007199254740992), signed zeros, a point at either end
EDGE_SCORES = ["90071992.54740991", "90071992.54740992", "90071992.54740993", "99999999.99999999", "12345678.9",
               "123456789.5", "0.000000001", "-0", "-0.0", "+0", "-.5", "+.5", "5.", "-5.", ".00000001", "00000000.5",
               "1e-05", "7", "-12345678", "0.1", "0.3", "2.675", "1.0000000000000002", "4.35", "0.15625"]
GRADES = ["0", "-0", "+3", "007", "-1", "12345678", "-12345678", "123456789", "+99999999", "4", "-", "+", "1-"]


def _fast_read(texts: list[str], read: Callable) -> tuple[np.ndarray, np.ndarray]:
    """(values, whether read) of one of the whole-file parse's integer-arithmetic readers alone, before any
    fallback: ``read(words, column, starts, lengths)``."""
    parse = core_ranking_trec_parse
    data = np.frombuffer("".join(f"q 0 d {text}\n" for text in texts).encode(), dtype=np.uint8)
    starts, ends = parse._spaced_fields(data, 4)(3)
    words = parse._words_of(data, 64)
    return read(words, parse._column(words, starts, ends), starts, ends - starts)


READERS = {"scores": lambda words, column, starts, lengths: core_ranking_trec_parse._scores(words, column, starts,
                                                                                            lengths),
           "short scores": lambda words, column, starts, lengths: core_ranking_trec_parse._short_scores(column,
                                                                                                        lengths),
           "grades": lambda words, column, starts, lengths: core_ranking_trec_parse._grades(column, lengths)}


@pytest.mark.parametrize("reader", ["scores", "short scores"])
def test_integer_arithmetic_reads_numbers_bit_for_bit_as_float(reader: str) -> None:
    """Numbers of at most 8 digits each side of the point (short scores: at most 8 bytes in all), their digits
    below 2**53, are read with integer arithmetic, exactly as ``float`` reads them (-0.0 included); the others are
    left to the fallback."""
    texts = EDGE_SCORES + _number_texts(11, 3000)
    if reader == "short scores":
        texts = [text for text in texts if len(text) <= 8]
    scores, read = _fast_read(texts, READERS[reader])
    for text, score, fast in zip(texts, scores.tolist(), read.tolist()):
        mantissa = text.lstrip("+-")
        whole, _, fraction = mantissa.partition(".")
        expected = ("e" not in mantissa.lower() and len(whole) <= 8 and len(fraction) <= 8
                    and int(whole + fraction.ljust(8, "0") or "0") < 2 ** 53)
        assert fast == expected, text
        if fast:
            assert score.hex() == float(text).hex(), text


def test_integer_arithmetic_reads_grades_as_int() -> None:
    grades = GRADES + [str(random.Random(index).randint(-10 ** 10, 10 ** 10)) for index in range(500)]
    values, read = _fast_read(grades, READERS["grades"])
    for text, value, fast in zip(grades, values.tolist(), read.tolist()):
        digits = text[1:] if text[:1] in "+-" else text
        assert fast == (len(text) <= 8 and digits.isdigit()), text
        if fast:
            assert value == int(text), text


def test_scores_and_grades_read_as_float_and_int(tmp_path) -> None:
    """Through the readers, the integer arithmetic and its fallback together: values as ``float`` / ``int`` read
    them, to the bit."""
    scores = EDGE_SCORES + _number_texts(12, 3000)
    run_path = tmp_path / "run.txt"
    run_path.write_text("".join(f"q{index // 50} Q0 d{index} 1 {score} t\n" for index, score in enumerate(scores)),
                        encoding="utf-8")
    assert parse_table(run_path, 6, False, 4, False) is not None
    read = [value for judged in read_trec_run(run_path).values() for value in judged.values()]
    assert [value.hex() for value in read] == [float(score).hex() for score in scores]
    grades = GRADES[:-3] + [str(random.Random(index).randint(-10 ** 12, 10 ** 12)) for index in range(500)]
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text("".join(f"q{index // 50} 0 d{index} {grade}\n" for index, grade in enumerate(grades)),
                          encoding="utf-8")
    assert parse_table(qrels_path, 4, True, 3, True) is not None
    read = [value for judged in read_trec_qrels(qrels_path).values() for value in judged.values()]
    assert read == [int(grade) for grade in grades] and all(type(value) is int for value in read)


@pytest.mark.parametrize("text", ["1.2.3", "--5", "5-", "+", "-.", ".", "1e", "e5", "0x10", "1_0"])
def test_a_score_that_is_not_a_number_is_read_line_by_line(tmp_path, text: str) -> None:
    path = tmp_path / "run.txt"
    path.write_text(f"q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 {text} t\n", encoding="utf-8")
    assert parse_table(path, 6, False, 4, False) is None
    try:
        expected = float(text)
    except ValueError:
        with pytest.raises(ValueError, match=r"run\.txt:2: the score \(fifth field\)"):
            read_trec_run(path)
    else:
        assert read_trec_run(path)["q1"]["d2"] == expected


def test_document_hashes_alike_are_told_apart_exactly(tmp_path, monkeypatch) -> None:
    """Every document id hashed alike (so every pair of a query's documents looks alike until compared): no false
    duplicate, a true one still found, and pairing still finds each judged document's score."""
    monkeypatch.setattr(core_ranking_trec_parse, "_hashes", lambda words: np.zeros(len(words), dtype=np.uint64))
    for seed in range(3):
        run_path, qrels_path = files(tmp_path, seed, interleave=seed == 1)
        same_table(read_trec_run(run_path), dict_run(run_path))
        same_table(read_trec_qrels(qrels_path), dict_qrels(qrels_path))
        from_files = pair_queries(read_trec_run(run_path), read_trec_qrels(qrels_path), complete=True)
        from_dicts = pair_queries(dict_run(run_path), dict_qrels(qrels_path), complete=True)
        np.testing.assert_array_equal(from_files.qrels.found, [
            ranking.get(document, math.nan) for ranking, judged in zip(from_dicts.runs, from_dicts.qrels)
            for document in judged])
    duplicate = tmp_path / "duplicate.txt"
    duplicate.write_text("q1 0 d1 1\nq1 0 d2 1\nq2 0 d1 0\nq1 0 d3 1\nq1 0 d2 0\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"duplicate\.txt:5: duplicate document 'd2' for query 'q1' \(first at "
                                         r"line 2\)"):
        read_trec_qrels(duplicate)


def test_pairing_files_whose_queries_differ(tmp_path) -> None:
    """Queries of the run without judgements, judged queries the run lacks, and the two files in other orders:
    each judged document's score found in its own query's run."""
    run_path, qrels_path = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run_path.write_text("".join(f"q{query} Q0 d{document} {document} {document / 8} t\n" for query in (3, 1, 4, 5, 9)
                                for document in range(query + 1)), encoding="utf-8")
    qrels_path.write_text("".join(f"q{query} 0 d{document} {document % 3}\n" for query in (9, 2, 4, 1, 6)
                                  for document in range(0, 2 * query, 2)), encoding="utf-8")
    for complete in (False, True):
        from_files = pair_queries(read_trec_run(run_path), read_trec_qrels(qrels_path), complete=complete)
        from_dicts = pair_queries(dict_run(run_path), dict_qrels(qrels_path), complete=complete)
        assert from_files.query_ids == from_dicts.query_ids == ["q1", "q4", "q9"] + ["q2", "q6"] * complete
        assert list(map(dict, from_files.runs)) == from_dicts.runs
        np.testing.assert_array_equal(from_files.runs.values, [score for ranking in from_dicts.runs
                                                               for score in ranking.values()])
        np.testing.assert_array_equal(from_files.qrels.found, [
            ranking.get(document, math.nan) for ranking, judged in zip(from_dicts.runs, from_dicts.qrels)
            for document in judged])
