"""The stress suite's cases and how they run: one module's input grown along one dimension, scored in a
subprocess under an address-space limit and a time limit, must finish or be refused early with the module's
clear error naming the bound.

A case's ``build`` is Python source that defines ``inputs`` (the keyword inputs of ``compute``) from the integer
``n``; it runs in the child with ``random``, ``numpy as np`` and ``string`` imported. At full scale (``full``,
marked slow: one child per case, the module's default bounds) the outcome must be ``expect``; at small scale
(``small``, the default run: every case in one child) the bound option, where the case names one, is set to
``small_bound`` so that the same refusal shows in seconds. A refusal must be a ``ValueError`` naming ``option``,
raised within ``refusal_seconds`` of the call.

Cases are listed per family in ``stress_cases_*.py`` (``STRESS_CASES``); ``test_resource_stress.py`` collects them.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from typing import Any

from conftest import ROOT

GIB = 1 << 30

# Build source for cases: ``text(size)``, about ``size`` characters (at most ``size``) of random 2-8-letter words.
RANDOM_TEXT = """
words = ["".join(random.choice(string.ascii_lowercase) for _ in range(random.randint(2, 8))) for _ in range(5000)]
def text(size):
    out = []
    total = 0
    while total < size:
        word = random.choice(words)
        out.append(word)
        total += len(word) + 1
    return " ".join(out)[:size].strip()
"""


@dataclass(frozen=True)
class StressCase:
    """One module's input grown along one dimension, and the outcome the module must give."""

    module: str
    dimension: str
    build: str
    full: int
    small: int
    expect: str  # "finish" or "refuse"
    option: str | None = None
    small_bound: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    seconds: float = 120.0
    refusal_seconds: float = 10.0
    memory_gib: int = 6

    @property
    def id(self) -> str:
        return f"{self.module}-{self.dimension.replace(' ', '_')}"

    def scaled(self, scale: str) -> tuple[int, dict[str, Any]]:
        """(n, options) at ``scale`` ('small' or 'full')."""
        if scale == "full":
            return self.full, dict(self.options)
        options = dict(self.options)
        if self.option is not None and self.small_bound is not None:
            options[self.option] = self.small_bound
        return self.small, options


_CHILD = """
import json, random, string, sys, time
import numpy as np
sys.path.insert(0, "tests")
from conftest import load_metric

def run(module, build, n, options):
    random.seed(0)
    scope = {"n": n, "random": random, "np": np, "string": string}
    exec(build, scope)
    metric = load_metric(module)
    start = time.monotonic()
    try:
        result = metric.compute(**scope["inputs"], **options)
    except ValueError as error:
        return {"outcome": "refused", "message": str(error), "seconds": time.monotonic() - start}
    return {"outcome": "finished", "keys": sorted(result), "seconds": time.monotonic() - start}

for line in sys.stdin:
    module, build, n, options = json.loads(line)
    print(json.dumps(run(module, build, n, options)), flush=True)
"""


def run_cases(cases: list[tuple[StressCase, str]], timeout: float, memory: int) -> tuple[list[dict[str, Any]], str]:
    """The outcome of each (case, scale), run in order in one child process under an address-space limit of
    ``memory`` bytes and ``timeout`` seconds in all; outcomes after a crash or the timeout are missing."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    lines = []
    for case, scale in cases:
        n, options = case.scaled(scale)
        lines.append(json.dumps([case.module, textwrap.dedent(case.build), n, options]))
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD], cwd=ROOT, input="\n".join(lines) + "\n",
                              capture_output=True, text=True, timeout=timeout, preexec_fn=limit)
        output, errors = done.stdout, done.stderr + f"\n(exit status {done.returncode})"
    except subprocess.TimeoutExpired as expired:
        output = expired.stdout.decode() if isinstance(expired.stdout, bytes) else (expired.stdout or "")
        errors = f"no answer within {timeout} s"
    outcomes = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    return outcomes, errors


def check_outcome(case: StressCase, outcome: dict[str, Any] | None, errors: str, scale: str) -> None:
    """Assert that ``outcome`` is what ``case`` expects at ``scale``."""
    assert outcome is not None, f"{case.id} ({scale}) gave no outcome: {errors[-3000:]}"
    if case.expect == "refuse":
        assert outcome["outcome"] == "refused", f"{case.id} ({scale}) was not refused: {outcome}"
        assert case.option is not None and case.option in outcome["message"], outcome["message"]
        assert outcome["message"].startswith(f"{case.module}:"), outcome["message"]
        assert outcome["seconds"] < case.refusal_seconds, f"refused late: {outcome}"
    else:
        assert outcome["outcome"] == "finished", f"{case.id} ({scale}) did not finish: {outcome}"
        if scale == "full":
            assert outcome["seconds"] < case.seconds, f"{case.id} took {outcome['seconds']:.1f} s: {outcome}"
