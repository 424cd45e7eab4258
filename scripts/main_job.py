#!/usr/bin/env python3
"""The main job: score example predictions against their references with every metric and print a table.

By default it scores scripts/examples (six English sentences, two references
each); pass --predictions/--references (or any scripts/score.py argument) to
score other files.
"""

from __future__ import annotations

import sys
from pathlib import Path

import score

EXAMPLES = Path(__file__).resolve().parent / "examples"


def main(argv: list[str]) -> int:
    if not any(argument in ("-p", "--predictions", "--jsonl") for argument in argv):
        argv = [
            "--predictions",
            str(EXAMPLES / "predictions.txt"),
            "--references",
            str(EXAMPLES / "references.txt"),
            str(EXAMPLES / "references-2.txt"),
            *argv,
        ]
    print(f"Scoring with: {', '.join(score.available_metrics())}\n")
    return score.main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
