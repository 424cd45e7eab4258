"""The README's "Use it in training and data pipelines" snippets run as written."""

from __future__ import annotations

import dataclasses
import re

import pytest

from conftest import ROOT, load_metric, metric_names
from metrics._core.core_options import is_bound

SECTION = "## Use it in training and data pipelines"


def snippets() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split(SECTION, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)


def test_the_section_has_snippets() -> None:
    assert len(snippets()) >= 4


def test_snippets_run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    for index, code in enumerate(snippets()):
        exec(compile(code, f"README.md snippet {index}", "exec"), namespace)  # noqa: S102
    printed = capsys.readouterr().out
    assert "sacrebleu_score" in printed
    # the similarity-benchmark snippet: its correlation is scipy's over the same scores
    from scipy import stats

    gold = [judgement for _, _, judgement in namespace["pairs"]]
    similarities = namespace["scores"]["similarities"]
    expected = stats.spearmanr(gold, similarities).statistic
    assert namespace["spearmanr"].compute(predictions=similarities, references=gold)["spearmanr"] == pytest.approx(
        expected, abs=1e-12)
    assert f"'spearmanr': {expected!r}" in printed or f"'spearmanr': {float(expected)!r}" in printed


# -- "Where to use it" --------------------------------------------------------------------------------------------


def test_every_where_to_use_it_block_says_where_it_runs() -> None:
    """Each Python block names the test file that runs it (which exists and reads it) or what it needs."""
    from readme_blocks import NEEDS, RUN_BY, blocks, blocks_run_by

    python = blocks()
    assert len(python) >= 7
    for block in python:
        first = block.splitlines()[0]
        assert first.startswith((RUN_BY, NEEDS)), first
        if first.startswith(RUN_BY):
            test_file = first[len(RUN_BY):].split()[0]
            source = (ROOT / "tests" / test_file).read_text(encoding="utf-8")
            assert f'blocks_run_by("{test_file}"' in source, f"{test_file} does not run its README block"
    assert blocks_run_by("test_scale_out.py") and blocks_run_by("test_lm_eval.py") and blocks_run_by(
        "test_lighteval.py")


def test_where_to_use_it_blocks_run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """This file's blocks run as written; the blocks that need the Hub or the reader's model compile."""
    from readme_blocks import NEEDS, blocks, blocks_run_by

    monkeypatch.chdir(ROOT)
    ran = blocks_run_by("test_readme.py")
    assert len(ran) >= 2
    for index, code in enumerate(ran):
        exec(compile(code, f"README.md Where-to-use-it block {index}", "exec"), {})  # noqa: S102
    printed = capsys.readouterr().out.splitlines()
    import evaluate_text_metrics

    sacrebleu = evaluate_text_metrics.load("sacrebleu")
    expected = sacrebleu.compute(predictions=["the cat sat on the mat"], references=[["the cat sat on a mat"]])
    # the block prints the first name and how many metrics the package holds: one per metric folder
    assert printed[0] == str(expected["score"]) and printed[1] == f"sacrebleu {len(metric_names())}"
    assert printed[2].startswith("{'confidence_interval': (") and "'score': " in printed[2]
    for code in blocks():
        if code.startswith(NEEDS):
            compile(code, "README.md", "exec")


def test_the_reliability_section_lists_every_resource_bound() -> None:
    """Issue 32: the README's Reliability section names each module's resource bounds (``core_options.bound``)."""
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## Reliability\n", 1)[1].split("\n## ", 1)[0]
    missing = sorted({f"{name}: {field.name}" for name in metric_names()
                      for field in dataclasses.fields(load_metric(name).options_class)
                      if is_bound(field) and f"`{field.name}`" not in section})
    assert missing == []
