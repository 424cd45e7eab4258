"""The README's "Use it in training and data pipelines" snippets run as written."""

from __future__ import annotations

import re

import pytest

from conftest import ROOT

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
