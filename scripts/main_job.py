#!/usr/bin/env python3
"""The main job: score example predictions against their references with every metric and print a table.

By default it scores scripts/examples (six English sentences, two references
each, and the longer source sentences they simplify, for SARI), then MAUVE of
the six sentences against their first references, then a TREC run and qrels of
three queries with the ranking metrics; pass
--predictions/--references (or any scripts/score.py argument) to score other
files.
"""

from __future__ import annotations

import sys
from pathlib import Path

import score

EXAMPLES = Path(__file__).resolve().parent / "examples"


def main(argv: list[str]) -> int:
    examples = not any(argument in ("-p", "--predictions", "--jsonl", "--run") for argument in argv)
    if examples:
        argv = [
            "--predictions",
            str(EXAMPLES / "predictions.txt"),
            "--references",
            str(EXAMPLES / "references.txt"),
            str(EXAMPLES / "references-2.txt"),
            "--sources",
            str(EXAMPLES / "sources.txt"),
            *argv,
        ]
    print(f"Scoring with: {', '.join(score.available_metrics())}\n")
    status = score.main(argv)
    if examples and status == 0:
        print("\nMAUVE: the six predictions against their first references (a small sample: two clusters),"
              " featurized by the packaged MiniLM\n")
        status = score.main(["--predictions", str(EXAMPLES / "predictions.txt"), "--references",
                             str(EXAMPLES / "references.txt"), "-m", "mauve",
                             "-o", "mauve.featurize_model_name=all-MiniLM-L6-v2"])
    if examples and status == 0:
        print("\nRanking: a TREC run and qrels of three queries\n")
        status = score.main(["--run", str(EXAMPLES / "run.trec"), "--qrels", str(EXAMPLES / "qrels.trec")])
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
