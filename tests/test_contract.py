"""The contract every metric folder keeps: it loads alone and offline, its script follows evaluate's
loader rules, its docstring examples pass, its card has the required sections, its core copies are in sync."""

from __future__ import annotations

import dataclasses
import doctest
import importlib
import inspect
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import METRICS_DIR, ROOT, load_metric, metric_names
from metrics._core.core_options import is_bound
from offline import PRELUDE

METRICS = metric_names()
CARD_SECTIONS = (
    "## Metric Description",
    "## How to Use",
    "### Inputs",
    "### Output Values",
    "### Examples",
    "## Oracle and Parity Evidence",
    "## Differences from evaluate's Module",
    "## Resource Bounds",
    "## Limitations and Bias",
    "## Citation",
)


def class_name(folder: str) -> str:
    return "".join(part.capitalize() for part in folder.split("_"))


def test_there_are_metrics() -> None:
    assert {"bleu", "sacrebleu"} <= set(METRICS)


def test_core_copies_in_sync() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "sync_core.py"), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_sync_check_detects_drift(tmp_path: Path) -> None:
    """The check mode fails when a vendored copy is edited by hand."""
    copy = _copy_for_sync(tmp_path)
    vendored = next((copy / "metrics" / METRICS[0]).glob("core_*.py"))
    vendored.write_text(vendored.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    result = _sync_check(copy)
    assert result.returncode == 1
    assert vendored.name in result.stderr


def _copy_for_sync(tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "metrics", copy / "metrics", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "scripts", copy / "scripts", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(ROOT / "pyproject.toml", copy / "pyproject.toml")  # its generated package blocks are checked too
    return copy


def _sync_check(copy: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(copy / "scripts" / "sync_core.py"), "--check"], capture_output=True, text=True
    )


def test_sync_check_refuses_an_import_across_families(tmp_path: Path) -> None:
    """A ROUGE core module importing a model-loading module breaks the family rule."""
    copy = _copy_for_sync(tmp_path)
    module = copy / "metrics" / "_core" / "core_rouge.py"
    module.write_text(module.read_text(encoding="utf-8") + "from .core_models import load_model\n", encoding="utf-8")
    result = _sync_check(copy)
    assert result.returncode == 1
    assert "a 'rouge' module imports .core_models of family 'neural'" in result.stderr


def test_a_family_may_import_the_families_it_declares_in_uses(tmp_path: Path) -> None:
    """simplification declares `uses = ["mt"]` (SARI is defined on 13a tokens): its modules may import mt
    modules; without the declaration the same import is refused."""
    copy = _copy_for_sync(tmp_path)
    assert _sync_check(copy).returncode == 0
    families = copy / "metrics" / "_core" / "families.toml"
    families.write_text(families.read_text(encoding="utf-8").replace('uses = ["mt"]\n', ""), encoding="utf-8")
    result = _sync_check(copy)
    assert result.returncode == 1
    assert "a 'simplification' module imports .core_mt_tokenizers of family 'mt'" in result.stderr


def test_sync_check_refuses_a_core_module_in_no_family(tmp_path: Path) -> None:
    copy = _copy_for_sync(tmp_path)
    (copy / "metrics" / "_core" / "core_orphan_thing.py").write_text('"""An orphan."""\n', encoding="utf-8")
    result = _sync_check(copy)
    assert result.returncode == 1 and "core_orphan_thing.py is in no family" in result.stderr


def test_sync_check_detects_a_stale_generated_import_block(tmp_path: Path) -> None:
    copy = _copy_for_sync(tmp_path)
    script = copy / "metrics" / "bleu" / "bleu.py"
    lines = script.read_text(encoding="utf-8").splitlines(keepends=True)
    script.write_text("".join(line for line in lines if "import __name__ as _core_ngrams" not in line), encoding="utf-8")
    result = _sync_check(copy)
    assert result.returncode == 1 and "bleu.py: its generated import block or card texts are stale" in result.stderr


def test_sync_check_detects_a_citation_that_differs_from_the_card(tmp_path: Path) -> None:
    """The script's _CITATION is generated from its card: editing the card's BibTeX makes the script stale, and
    writing brings the new text into the script, where evaluate's MetricInfo reads it."""
    copy = _copy_for_sync(tmp_path)
    card = copy / "metrics" / "bleu" / "README.md"
    card.write_text(card.read_text(encoding="utf-8").replace('pages = "311--318"', 'pages = "311--319"'),
                    encoding="utf-8")
    result = _sync_check(copy)
    assert result.returncode == 1 and "bleu.py: its generated import block or card texts are stale" in result.stderr
    written = subprocess.run([sys.executable, str(copy / "scripts" / "sync_core.py")], capture_output=True, text=True)
    assert written.returncode == 0, written.stderr
    script = (copy / "metrics" / "bleu" / "bleu.py").read_text(encoding="utf-8")
    assert 'pages = "311--319"' in script and 'pages = "311--318"' not in script
    assert _sync_check(copy).returncode == 0


def test_sync_check_refuses_a_hand_written_citation(tmp_path: Path) -> None:
    copy = _copy_for_sync(tmp_path)
    script = copy / "metrics" / "bleu" / "bleu.py"
    script.write_text(script.read_text(encoding="utf-8") + '\n_CITATION = "mine"\n_DESCRIPTION = "mine"\n',
                      encoding="utf-8")
    result = _sync_check(copy)
    assert result.returncode == 1
    for name in ("_CITATION", "_DESCRIPTION"):
        assert f"{name} is generated from the card (README.md); remove the script's own" in result.stderr


def test_the_scripts_texts_follow_the_card(tmp_path: Path) -> None:
    """Editing a card's Inputs or Further References makes the script stale; writing brings the new text into
    evaluate's ``inputs_description`` and links."""
    copy = _copy_for_sync(tmp_path)
    card = copy / "metrics" / "bleu" / "README.md"
    text = card.read_text(encoding="utf-8")
    text = text.replace("### Output Values\n", "- **extra_note**: a line added to the card.\n\n### Output Values\n")
    card.write_text(text + "- Homepage: https://example.org/bleu\n", encoding="utf-8")
    assert "card texts are stale" in _sync_check(copy).stderr
    written = subprocess.run([sys.executable, str(copy / "scripts" / "sync_core.py")], capture_output=True, text=True)
    assert written.returncode == 0, written.stderr
    script = (copy / "metrics" / "bleu" / "bleu.py").read_text(encoding="utf-8")
    assert "    extra_note: a line added to the card.\nReturns:\n" in script
    assert 'homepage="https://example.org/bleu",' in script
    assert _sync_check(copy).returncode == 0


@pytest.mark.parametrize(("edit", "problem"), [
    (lambda card: card.replace("### Examples\n", "### Usage Examples\n"), "the card needs the sections Examples"),
    (lambda card: card.replace(">>> ", "").replace("... ", ""), "needs a ```python block of doctests"),
    (lambda card: card + "- See also: https://example.org\n", "Further References holds only"),
    (lambda card: card.replace("## Metric Description\n", '## Metric Description\n\nA """ quote.\n'),
     "Metric Description section may not contain three double quotes"),
])
def test_sync_check_refuses_a_card_it_cannot_read(tmp_path: Path, edit: Any, problem: str) -> None:
    copy = _copy_for_sync(tmp_path)
    card = copy / "metrics" / "bleu" / "README.md"
    card.write_text(edit(card.read_text(encoding="utf-8")), encoding="utf-8")
    result = _sync_check(copy)
    assert result.returncode == 1 and "metrics/bleu/README.md: " in result.stderr and problem in result.stderr


@pytest.mark.parametrize("name", METRICS)
def test_citation_is_the_cards(name: str) -> None:
    """evaluate's ``citation`` of each module is the BibTeX of its card's Citation section, character for
    character (backslashes included)."""
    card = (METRICS_DIR / name / "README.md").read_text(encoding="utf-8")
    section = card.split("\n## Citation\n", 1)[1].split("\n## ", 1)[0]
    expected = section.split("```bibtex\n", 1)[1].split("```", 1)[0] if "```bibtex" in section else ""
    assert load_metric(name).citation == expected


@pytest.mark.parametrize("name", METRICS)
def test_every_keyword_is_documented_in_the_card(name: str) -> None:
    """The card's Inputs (evaluate's inputs description) name, in bold, every keyword ``compute`` takes."""
    card = (METRICS_DIR / name / "README.md").read_text(encoding="utf-8")
    inputs = card.split("\n### Inputs\n", 1)[1].split("\n### ", 1)[0]
    keywords = [key for key in inspect.signature(type(load_metric(name))._compute).parameters if key != "self"]
    assert [key for key in keywords if f"**{key}**" not in inputs] == []
    assert "Args:\n" in load_metric(name).inputs_description


@pytest.mark.parametrize("name", METRICS)
def test_every_bound_is_stated_in_the_cards_resource_bounds(name: str) -> None:
    """Each resource bound option (``core_options.bound``, issue 32's resource contract) is named in the card's
    Resource Bounds."""
    card = (METRICS_DIR / name / "README.md").read_text(encoding="utf-8")
    bounds = card.split("\n## Resource Bounds\n", 1)[1].split("\n## ", 1)[0]
    options = type(load_metric(name)).options_class
    declared = [field.name for field in dataclasses.fields(options) if is_bound(field)]
    assert [option for option in declared if f"`{option}`" not in bounds and f"**{option}**" not in bounds] == []


@pytest.mark.parametrize("name", METRICS)
def test_generated_block_imports_exactly_what_the_scripts_imports_need(name: str) -> None:
    """Every core module a script's own imports need, directly or not, is imported (the loader copies only
    those), and nothing else is vendored."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        sync_core = importlib.import_module("sync_core")
    finally:
        sys.path.pop(0)
    source = (METRICS_DIR / name / f"{name}.py").read_text(encoding="utf-8")
    imported = {module for _, module, _ in sync_core.relative_imports(source) if module.startswith("core_")}
    assert imported == sync_core.dependency_closure(imported)
    assert imported == {path.stem for path in (METRICS_DIR / name).glob("core_*.py")}


_ISOLATED_LOADS = PRELUDE + """
import json, sys, traceback
import evaluate
for folder in sys.argv[1:]:
    try:
        print("LOADED", json.dumps([folder, type(evaluate.load(folder)).__name__]), flush=True)
    except Exception:
        print("LOADED", json.dumps([folder, traceback.format_exc()[-3000:]]), flush=True)
"""


@pytest.fixture(scope="module")
def loaded_alone(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """What evaluate.load gives for each metric folder copied alone into an empty directory of its own, in a
    fresh process (one for all folders: starting Python and evaluate 34 times cost minutes) with HF_HUB_OFFLINE=1,
    an empty module cache and every network socket blocked: the class name, or the error."""
    root = tmp_path_factory.mktemp("alone")
    folders = []
    for name in METRICS:
        shutil.copytree(METRICS_DIR / name, root / name / name, ignore=shutil.ignore_patterns("__pycache__"))
        folders.append(str(root / name / name))
    environment = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(root),
        "HF_HOME": str(root / "hf"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    result = subprocess.run([sys.executable, "-c", _ISOLATED_LOADS, *folders], cwd=root, env=environment,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    outcomes = [json.loads(line[len("LOADED "):]) for line in result.stdout.splitlines() if line.startswith("LOADED ")]
    return {Path(folder).name: outcome for folder, outcome in outcomes}


@pytest.mark.parametrize("name", METRICS)
def test_folder_loads_alone_offline(name: str, loaded_alone: dict[str, str]) -> None:
    """Copied alone into an empty directory, the folder loads with evaluate.load, offline, sockets blocked."""
    assert loaded_alone[name] == class_name(name)


@pytest.mark.parametrize("name", METRICS)
def test_script_follows_loader_rules(name: str) -> None:
    module = load_metric(name)
    assert type(module).__name__ == class_name(name)
    compute = inspect.signature(type(module)._compute)
    assert all(p.kind is not inspect.Parameter.VAR_KEYWORD for p in compute.parameters.values()), (
        f"{name}._compute takes **kwargs; unknown options must fail"
    )
    assert (METRICS_DIR / name / "requirements.txt").is_file()
    source = (METRICS_DIR / name / f"{name}.py").read_text(encoding="utf-8")
    assert not re.search(r"^from evaluate import", source, re.MULTILINE), (
        "import evaluate, not names from it: the loader takes the first Metric subclass it finds"
    )


@pytest.mark.parametrize("name", METRICS)
def test_unknown_option_is_rejected(name: str) -> None:
    module = load_metric(name)
    with pytest.raises(TypeError, match="no_such_option"):
        module.compute(predictions=["a b c"], references=[["a b c"]], no_such_option=1)


@pytest.mark.parametrize("name", METRICS)
def test_docstring_examples(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    module = load_metric(name)
    script = importlib.import_module(type(module).__module__)
    text = script._KWARGS_DESCRIPTION
    assert ">>>" in text, f"{name} has no docstring example"
    parser = doctest.DocTestParser()
    test = parser.get_doctest(text, {}, f"{name}._KWARGS_DESCRIPTION", None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0 and runner.tries > 0


@pytest.mark.parametrize("name", METRICS)
def test_metric_card(name: str) -> None:
    card = (METRICS_DIR / name / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\n"), "the card starts with YAML front matter like evaluate's cards"
    front_matter = card.split("---\n")[1]
    for key in ("title:", "tags:", "description:"):
        assert key in front_matter
    missing = [section for section in CARD_SECTIONS if section not in card]
    assert not missing, f"{name}/README.md lacks {missing}"


def test_card_bold_is_dropped_in_the_docstring_but_code_spans_are_kept() -> None:
    """A default written `2**30` in a card stays 2**30 in evaluate's inputs description (it once became 230)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        metric_card = importlib.import_module("metric_card")
    finally:
        sys.path.pop(0)
    assert metric_card.as_docstring("- **max_x** (`int`, default `2**30`): a **bound**.") == \
        "    max_x (`int`, default `2**30`): a bound.\n"
