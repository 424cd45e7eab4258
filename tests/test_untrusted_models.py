"""A model folder is data, never code: a folder whose config names its own classes (`auto_map`, a custom
`model_type`) is refused with a clear error by every module that loads a model by path, without asking on the
terminal and without running the folder's code (issue 32, defect 14: transformers asked "Do you wish to run the
custom code? [y/N]" and ran it on "y", because `trust_remote_code=False` was not passed).

Each module runs in a fresh process whose standard input answers "y", so a prompt would be answered and the code
run: the marker file the folder's code writes on import must not appear."""

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
    name, option, folder, inputs = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    module = evaluate.load(sys.argv[5])
    try:
        module.compute(**inputs, **{option: folder})
    except (ValueError, TypeError) as error:
        print(json.dumps({"error": type(error).__name__, "message": str(error)}))
    else:
        print(json.dumps({"error": None}))
""")


def hostile_folder(root: Path) -> Path:
    """A model folder in transformers' layout whose classes are its own code, which writes a marker when run."""
    folder = root / "custom-code-model"
    folder.mkdir()
    marker = root / "code-ran"
    classes = {name: f"evil.{name}" for name in ("AutoConfig", "AutoModel", "AutoModelForCausalLM",
                                                 "AutoTokenizer")}
    (folder / "config.json").write_text(json.dumps({"model_type": "evil-model", "auto_map": classes,
                                                    "architectures": ["EvilModel"]}), encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps({"auto_map": {"AutoTokenizer": ["evil.AutoTokenizer",
                                                                                             None]}}),
                                                  encoding="utf-8")
    (folder / "evil.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize(("name", "option", "inputs"), LOADERS, ids=[loader[0] for loader in LOADERS])
def test_a_folder_with_its_own_code_is_refused_without_running_it(name: str, option: str, inputs: dict,
                                                                   tmp_path: Path) -> None:
    folder = hostile_folder(tmp_path)
    environment = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1",
                   "HF_DATASETS_OFFLINE": "1", "HF_EVALUATE_CACHE": str(tmp_path / "evaluate"),
                   "HF_MODULES_CACHE": str(tmp_path / "modules"), "PATH": "/usr/bin:/bin",
                   "HOME": str(tmp_path)}
    completed = subprocess.run(
        [sys.executable, "-c", RUN, name, option, str(folder), json.dumps(inputs), str(METRICS_DIR / name)],
        input="y\ny\ny\n", capture_output=True, text=True, timeout=300, cwd=ROOT, env=environment)
    assert completed.returncode == 0, completed.stderr[-3000:]
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    assert not (tmp_path / "code-ran").exists(), f"{name} ran the model folder's code"
    assert "Do you wish to run the custom code" not in completed.stdout + completed.stderr
    assert result["error"] == "ValueError", result
    assert result["message"].startswith(f"{name}: "), result["message"]
    assert "custom code" in result["message"] or "trust_remote_code" in result["message"], result["message"]
