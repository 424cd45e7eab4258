#!/usr/bin/env python3
"""Benchmark: seqeval span F1, our module against the seqeval package (what evaluate's module calls), one run.

    python scripts/bench_seqeval.py [--sentences 100000] [--repeats 3]

Both sides score the same seeded CoNLL-like corpus (IOB2 tags of four entity types, sentences of 5 to 30
tokens, predictions with about 10% of the tags changed): seqeval as evaluate's ``seqeval`` module calls it
(``classification_report(output_dict=True)`` plus ``accuracy_score``), ours through
``evaluate.load("./metrics/seqeval").compute``, in the default (lenient) mode and in ``mode="strict"`` with
``scheme="IOB2"``. Results are checked equal (within 1e-12). Times are medians of --repeats runs; ratio =
seqeval / ours. Peak memory: tracemalloc peak of one run.
"""

from __future__ import annotations

import argparse
import random
import warnings
from typing import Any

import project

TYPES = ("PER", "LOC", "ORG", "MISC")


def corpus(sentences: int, seed: int = 13) -> tuple[list[list[str]], list[list[str]]]:
    """Seeded IOB2 references and predictions with about 10% of the tags changed."""
    rng = random.Random(seed)
    tags = ["O", *(f"{prefix}-{kind}" for kind in TYPES for prefix in ("B", "I"))]
    references, predictions = [], []
    for _ in range(sentences):
        sentence, inside = [], None
        for _ in range(rng.randint(5, 30)):
            roll = rng.random()
            if roll < 0.6:
                sentence.append("O")
                inside = None
            elif inside and roll < 0.8:
                sentence.append(f"I-{inside}")
            else:
                inside = rng.choice(TYPES)
                sentence.append(f"B-{inside}")
        references.append(sentence)
        predictions.append([tag if rng.random() > 0.1 else rng.choice(tags) for tag in sentence])
    return predictions, references


def seqeval_package(predictions: list[list[str]], references: list[list[str]], strict: bool) -> dict[str, Any]:
    """evaluate's seqeval module's computation, on the seqeval package."""
    from seqeval import metrics, scheme

    options = {"mode": "strict", "scheme": scheme.IOB2} if strict else {}
    report = metrics.classification_report(y_true=references, y_pred=predictions, output_dict=True, **options)
    report.pop("macro avg")
    report.pop("weighted avg")
    overall = report.pop("micro avg")
    scores: dict[str, Any] = {name: {"precision": score["precision"], "recall": score["recall"],
                                     "f1": score["f1-score"], "number": score["support"]}
                              for name, score in report.items()}
    scores.update(overall_precision=overall["precision"], overall_recall=overall["recall"],
                  overall_f1=overall["f1-score"],
                  overall_accuracy=metrics.accuracy_score(y_true=references, y_pred=predictions))
    return scores


def same(ours: Any, theirs: Any) -> bool:
    if isinstance(theirs, dict):
        return ours.keys() == theirs.keys() and all(same(ours[key], theirs[key]) for key in theirs)
    return ours == theirs or abs(float(ours) - float(theirs)) <= 1e-12


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    arguments = parser.parse_args()
    import evaluate

    module = evaluate.load(str(project.ROOT / "metrics" / "seqeval"))
    predictions, references = corpus(arguments.sentences)
    tokens = sum(map(len, references))
    print(f"{arguments.sentences:,} sentences, {tokens:,} tags; medians of {arguments.repeats} runs\n")
    print("| mode | seqeval 1.2.2 | ours | ratio | peak MiB seqeval / ours | equal |")
    print("|---|---|---|---|---|---|")
    all_equal = True
    for strict in (False, True):
        options = {"mode": "strict", "scheme": "IOB2"} if strict else {}

        def theirs_run() -> dict[str, Any]:
            return seqeval_package(predictions, references, strict)

        def ours_run() -> dict[str, Any]:
            return module.compute(predictions=predictions, references=references, **options)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs_time, theirs = project.timed(theirs_run, arguments.repeats)
            ours_time, ours = project.timed(ours_run, arguments.repeats)
            memory = (project.peak_mib(theirs_run), project.peak_mib(ours_run))
        equal = same(ours, theirs)
        all_equal &= equal
        print(f"| {'strict IOB2' if strict else 'lenient (default)'} | {theirs_time:.2f} s | {ours_time:.2f} s | "
              f"{theirs_time / ours_time:.1f}x | {memory[0]:,.0f} / {memory[1]:,.0f} | {equal} |")
    return 0 if all_equal else 1


if __name__ == "__main__":
    raise SystemExit(main())
