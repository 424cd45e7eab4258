"""A model folder is data, never code: a folder whose config names its own classes (`auto_map`, a custom
`model_type`) is refused with a clear error by every module that loads a model by path, without asking on the
terminal and without running the folder's code (issue 32, defect 14: transformers asked "Do you wish to run the
custom code? [y/N]" and ran it on "y", because `trust_remote_code=False` was not passed).

The four modules run one after another in one fresh process (one import of evaluate, not four) whose standard input
answers "y" to every question, so a prompt would be answered and the code run: the marker file each module's own
folder's code writes on import must not appear. The folders have distinct names, so transformers' cache of remote
code could not hand one module the code another one imported."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import METRICS_DIR, ROOT

# (module, the option naming the model folder, inputs)
LOADERS = [
    ("perplexity", "model_id", {"predictions": ["a short text"]}),
    ("bertscore", "model_type", {"predictions": ["a cat"], "references": ["a cat"], "num_layers": 2}),
    ("semantic_similarity", "model_type", {"predictions": ["a cat"], "references": ["a cat"]}),
    ("mauve", "featurize_model_name", {"predictions": ["a cat", "a dog"], "references": ["a cow", "a pig"]}),
]

RUN = textwrap.dedent("""
    import json, sys
    import evaluate
    for name, option, folder, inputs, module_dir in json.loads(sys.argv[1]):
        module = evaluate.load(module_dir)
        try:
            module.compute(**inputs, **{option: folder})
        except (ValueError, TypeError) as error:
            print(json.dumps({"name": name, "error": type(error).__name__, "message": str(error)}), flush=True)
        else:
            print(json.dumps({"name": name, "error": None}), flush=True)
""")


def hostile_folder(root: Path, name: str) -> Path:
    """A model folder in transformers' layout whose classes are its own code, which writes the marker
    ``root/code-ran-<name>`` when run."""
    folder = root / f"custom-code-model-{name}"
    folder.mkdir()
    marker = root / f"code-ran-{name}"
    classes = {auto: f"evil.{auto}" for auto in ("AutoConfig", "AutoModel", "AutoModelForCausalLM", "AutoTokenizer")}
    (folder / "config.json").write_text(json.dumps({"model_type": "evil-model", "auto_map": classes,
                                                    "architectures": ["EvilModel"]}), encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps({"auto_map": {"AutoTokenizer": ["evil.AutoTokenizer",
                                                                                             None]}}),
                                                  encoding="utf-8")
    (folder / "evil.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def refusals(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict], str]:
    """(the folder holding the hostile folders and markers, each module's outcome by name, the process's output)."""
    root = tmp_path_factory.mktemp("untrusted")
    cases = [(name, option, str(hostile_folder(root, name)), inputs, str(METRICS_DIR / name))
             for name, option, inputs in LOADERS]
    environment = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1",
                   "HF_DATASETS_OFFLINE": "1", "HF_EVALUATE_CACHE": str(root / "evaluate"),
                   "HF_MODULES_CACHE": str(root / "modules"), "PATH": "/usr/bin:/bin", "HOME": str(root)}
    completed = subprocess.run([sys.executable, "-c", RUN, json.dumps(cases)], input="y\n" * 50,
                               capture_output=True, text=True, timeout=600, cwd=ROOT, env=environment)
    assert completed.returncode == 0, completed.stderr[-3000:]
    outcomes = [json.loads(line) for line in completed.stdout.splitlines() if line.startswith('{"name": ')]
    return root, {outcome["name"]: outcome for outcome in outcomes}, completed.stdout + completed.stderr


@pytest.mark.parametrize("name", [loader[0] for loader in LOADERS])
def test_a_folder_with_its_own_code_is_refused_without_running_it(name: str, refusals: tuple[Path, dict[str, dict], str]
                                                                   ) -> None:
    root, outcomes, output = refusals
    result = outcomes[name]
    assert not (root / f"code-ran-{name}").exists(), f"{name} ran the model folder's code"
    assert "Do you wish to run the custom code" not in output
    assert result["error"] == "ValueError", result
    assert result["message"].startswith(f"{name}: "), result["message"]
    assert "custom code" in result["message"] or "trust_remote_code" in result["message"], result["message"]
