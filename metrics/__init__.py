"""Offline, evaluate-compatible text-evaluation metrics: one self-contained ``evaluate`` module folder per metric.

Installed with pip, this package (``evaluate_text_metrics``) holds every metric folder of the repository's
``metrics/``; each folder stays what it is in the repository, loadable by ``evaluate.load(path)`` and copyable
alone. The functions here find a folder by name and load it::

    import evaluate_text_metrics

    sacrebleu = evaluate_text_metrics.load("sacrebleu")          # evaluate.load(<installed folder>)
    folder = evaluate_text_metrics.path("sacrebleu")             # the folder itself, e.g. for evaluate.load(str(folder))
    evaluate_text_metrics.names()                                # every metric

The same from a shell: ``python -m evaluate_text_metrics list | path NAME | space NAME ...`` (see ``__main__``).
Adapters for the clients people run metrics through live beside them: ``lm_eval`` (lm-evaluation-harness task
functions), ``lighteval`` (lighteval metrics) and ``hub`` (Hugging Face Space folders).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

__all__ = ["FOLDER", "load", "names", "path", "script"]

FOLDER = Path(__file__).resolve().parent
# a sibling module imported as evaluate's loader sees it (column 0, `from .name import ...`)
_SIBLING_IMPORT = re.compile(r"^from\s+\.([A-Za-z_][A-Za-z0-9_]*)\s+import\b", re.MULTILINE)


def names() -> list[str]:
    """The names of every metric folder, sorted."""
    return sorted(entry.name for entry in FOLDER.iterdir() if (entry / f"{entry.name}.py").is_file())


def path(name: str) -> Path:
    """The folder of metric ``name``: what ``evaluate.load`` takes (as a string)."""
    if not isinstance(name, str):
        raise TypeError(f"evaluate_text_metrics: a metric name must be a string, got {type(name).__name__}")
    folder = FOLDER / name
    if name.startswith(("_", ".")) or "/" in name or "\\" in name or not (folder / f"{name}.py").is_file():
        raise ValueError(f"evaluate_text_metrics: no metric named {name!r}; the metrics are {', '.join(names())}")
    return folder


def script(folder: str | Path) -> Path:
    """The metric script of a metric folder, whatever the folder is called (``evaluate.load`` looks for
    ``<folder>/<folder name>.py``; a folder renamed, e.g. a Space's checkout, holds its script under the old
    name): the one Python file there that no other file of the folder imports, besides its vendored core modules
    and a Space's ``app.py``."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"evaluate_text_metrics: {str(folder)!r} is not a folder")
    own = folder / f"{folder.name}.py"
    if own.is_file():
        return own
    modules = {entry.stem: entry for entry in sorted(folder.glob("*.py"))
               if not entry.name.startswith("core_") and entry.name != "app.py"}
    imported = {name for entry in modules.values()
                for name in _SIBLING_IMPORT.findall(entry.read_text(encoding="utf-8"))}
    candidates = [entry for name, entry in modules.items() if name not in imported]
    if len(candidates) != 1:
        found = ", ".join(entry.name for entry in candidates) or "none"
        raise ValueError(f"evaluate_text_metrics: {str(folder)!r} should hold one metric script (a Python file no "
                         f"other file there imports, besides core_*.py and app.py); found {found}")
    return candidates[0]


def load(name: str | Path, config_name: str | None = None, **load_options: Any) -> Any:
    """``evaluate.load`` of metric ``name`` (a name from :func:`names`, or a metric folder's path, renamed or
    not); ``config_name`` and ``load_options`` go to ``evaluate.load`` (e.g. ``num_process``/``process_id``)."""
    import evaluate

    named = isinstance(name, str) and not name.startswith(".") and "/" not in name and "\\" not in name
    return evaluate.load(str(script(path(name) if named else name)), config_name, **load_options)
