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
