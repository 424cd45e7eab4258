#!/usr/bin/env python3
"""The main job: compare example systems in a report, then score example predictions with every metric.

By default it first compares three translation systems' outputs on 24 German-English news sentences
(scripts/examples/systems) with BLEU, chrF, TER, METEOR and BERTScore: intervals, paired tests against the
first system, buckets, the examples where two systems differ most and figures, written to
comparison-report/ (report.html and the other formats); then it scores scripts/examples (six English
sentences, two references each, and the longer source sentences they simplify, for SARI) with every metric,
MAUVE of the six sentences against their first references, a TREC run and qrels of three queries with
the ranking metrics, and (where ../shared/data is beside the project) the dialogue table of the USR Topical-Chat
annotations (dialogue-report/). Pass --predictions/--references (or any scripts/score.py argument) to score other files
with every metric instead.
"""

from __future__ import annotations

import sys
from pathlib import Path

import compare
import dialogue
import score

EXAMPLES = Path(__file__).resolve().parent / "examples"
SYSTEMS = EXAMPLES / "systems"
REPORT = Path(__file__).resolve().parent.parent / "comparison-report"
DIALOGUE = Path(__file__).resolve().parent.parent / "dialogue-report"
USR_TOPICAL_CHAT = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "usr" / "usr_topical_chat.json"


def comparison() -> int:
    """The comparison report of the example systems (the first is the baseline)."""
    print("Comparing three example systems (scripts/examples/systems) against the first\n")
    return compare.main(["-r", str(SYSTEMS / "references.en"), "--sources", str(SYSTEMS / "sources.de"),
                         "-s", *(str(SYSTEMS / f"{name}.en") for name in ("phrase-based", "transformer",
                                                                        "transformer-big")),
                         "-m", "sacrebleu", "chrf", "ter", "meteor", "bertscore", "--output", str(REPORT)])


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
    if examples and comparison() != 0:
        return 1
    print(f"\nScoring with: {', '.join(score.available_metrics())}\n(each metric whose inputs the data fills; comet "
          "and bleurt need a checkpoint that no package ships and run only with -o <metric>.checkpoint=PATH, usr "
          "with -o usr.models=PATH)\n")
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
    if examples and status == 0:
        status = dialogue_evaluation()
    return status


def dialogue_evaluation() -> int:
    """The dialogue table of the USR annotations (Topical-Chat) with BLEU-1..4, ROUGE and chrF, where the shared
    data is beside the project (it is not part of it)."""
    if not USR_TOPICAL_CHAT.is_file():
        print(f"\nDialogue evaluation: skipped, the USR annotations are not at {USR_TOPICAL_CHAT}")
        return 0
    print("\nDialogue evaluation: the USR Topical-Chat annotations (the ground truth as the references), turn- and "
          "system-level correlations with each quality and the annotators' agreement\n")
    return dialogue.main(["report", str(USR_TOPICAL_CHAT), "--reference-system", "Original Ground Truth",
                          "-m", "bleu", "rouge", "chrf", "-o", "bleu.orders=[1,2,3,4]", "--output", str(DIALOGUE)])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
