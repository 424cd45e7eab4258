#!/usr/bin/env python3
"""Benchmark: accuracy, F1 and the Matthews correlation computed together, ours against scikit-learn, one run.

    python scripts/bench_classification.py [--size 1000000] [--repeats 5] [--inputs arrays,lists]

A user scoring a classifier calls scikit-learn three times (what evaluate's accuracy, f1 and
matthews_correlation modules do): ``accuracy_score``, ``f1_score`` and ``matthews_corrcoef``; for multi-label
input the MCC is evaluate's per-column loop of ``matthews_corrcoef`` and its mean. Ours counts one confusion
matrix (``classification_batch_totals``: one bincount pass) and reads the three results from it. Scenarios on
--size examples: binary, 5 classes, 100 classes, 100 classes with float sample weights, and 20-label multi-label
rows; inputs as numpy int arrays and as Python lists (what evaluate passes to its modules). Results are checked
identical (weighted: within 1e-12). Times are medians of --repeats runs; ratio = scikit-learn / ours; "floor" is
one bare ``numpy.bincount`` of precomputed cell codes (the memory-bound limit of a counting pass). Peak memory:
tracemalloc peak of one run (numpy allocations included).
"""

from __future__ import annotations

import argparse
import os
import platform
import warnings
from typing import Any

import numpy as np

import project  # the repository root on sys.path

from metrics._core import core_classification as cc  # noqa: E402


def scenarios(size: int, seed: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)

    def labels(classes: int) -> tuple[np.ndarray, np.ndarray]:
        references = rng.integers(0, classes, size)
        predictions = np.where(rng.random(size) < 0.7, references, rng.integers(0, classes, size))
        return references, predictions

    multilabel_references = rng.random((size, 20)) < 0.15
    noise = rng.random((size, 20)) < 0.05
    binary, few, many = labels(2), labels(5), labels(100)
    return [
        {"name": "binary", "data": binary, "average": "binary", "classes": 2},
        {"name": "5 classes", "data": few, "average": "macro", "classes": 5},
        {"name": "100 classes", "data": many, "average": "macro", "classes": 100},
        {"name": "100 classes, weighted", "data": many, "average": "macro", "classes": 100,
         "weights": rng.random(size) * 2},
        {"name": "multi-label, 20 labels", "data": (multilabel_references.astype(np.int64),
                                                    (multilabel_references ^ noise).astype(np.int64)),
         "average": "macro", "multilabel": True, "classes": 20},
    ]


def sklearn_side(references: Any, predictions: Any, average: str, multilabel: bool, weights: Any) -> tuple:
    from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef

    accuracy = float(accuracy_score(references, predictions, sample_weight=weights))
    f1 = float(f1_score(references, predictions, average=average, sample_weight=weights))
    if not multilabel:
        return accuracy, f1, float(matthews_corrcoef(references, predictions, sample_weight=weights))
    references, predictions = np.asarray(references), np.asarray(predictions)
    per_label = [matthews_corrcoef(predictions[:, i], references[:, i], sample_weight=weights)
                 for i in range(references.shape[1])]
    return accuracy, f1, float(np.mean(per_label))


def our_side(references: Any, predictions: Any, average: str, multilabel: bool, weights: Any) -> tuple:
    accuracy = cc.resolve_options(cc.AccuracyOptions, multilabel=multilabel)
    f1 = cc.resolve_options(cc.F1Options, average=average, multilabel=multilabel)
    mcc = cc.resolve_options(cc.MatthewsCorrelationOptions, average="macro" if multilabel else None,
                                multilabel=multilabel)
    totals = cc.classification_batch_totals(predictions, references, accuracy, sample_weight=weights)
    results = cc.classification_results(totals, [accuracy, f1, mcc])
    return results["accuracy"], results["f1"], float(results["matthews_correlation"])


_MODULES: dict[tuple[str, bool], Any] = {}


def module_side(references: Any, predictions: Any, average: str, multilabel: bool, weights: Any) -> tuple:
    """The three modules as a user calls them: evaluate.load, then compute on lists (inputs checked each time)."""
    import evaluate

    results = []
    for name, options in (("accuracy", {}), ("f1", {"average": average}),
                          ("matthews_correlation", {"average": "macro"} if multilabel else {})):
        if (name, multilabel) not in _MODULES:
            _MODULES[name, multilabel] = evaluate.load(str(project.ROOT / "metrics" / name),
                                                       "multilabel" if multilabel else None)
        result = _MODULES[name, multilabel].compute(predictions=predictions, references=references,
                                                    sample_weight=weights, **options)
        results.append(float(result[name]))
    return tuple(results)


def floor_seconds(references: np.ndarray, predictions: np.ndarray, classes: int, repeats: int) -> float:
    if references.ndim == 2:
        codes = (references * 2 + predictions + 4 * np.arange(references.shape[1])).reshape(-1)
        return project.timed(lambda: np.bincount(codes, minlength=4 * references.shape[1]), repeats)[0]
    codes = references * classes + predictions
    return project.timed(lambda: np.bincount(codes, minlength=classes * classes), repeats)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--inputs", default="arrays,lists,modules",
                        help="comma-separated: arrays, lists (the core), modules (evaluate.load, compute on lists)")
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args()
    import sklearn

    print(f"python {platform.python_version()}, numpy {np.__version__}, scikit-learn {sklearn.__version__}, "
          f"{os.cpu_count()} CPUs, {arguments.size:,} examples, median of {arguments.repeats}")
    header = (f"{'scenario':<26}{'inputs':<8}{'sklearn s':>10}{'ours s':>9}{'ratio':>8}{'floor s':>9}"
              f"{'sk MiB':>8}{'our MiB':>9}  result (accuracy, f1, mcc)")
    print(header)
    print("-" * len(header))
    warnings.simplefilter("ignore")
    for scenario in scenarios(arguments.size, arguments.seed):
        references, predictions = scenario["data"]
        weights = scenario.get("weights")
        multilabel = scenario.get("multilabel", False)
        floor = floor_seconds(references, predictions, scenario["classes"], arguments.repeats)
        for inputs in arguments.inputs.split(","):
            given = (references, predictions) if inputs == "arrays" else (references.tolist(), predictions.tolist())
            args = (*given, scenario["average"], multilabel, weights)
            ours_side = module_side if inputs == "modules" else our_side
            sklearn_seconds, theirs = project.timed(lambda: sklearn_side(*args), max(1, arguments.repeats // 2))
            our_seconds, ours = project.timed(lambda: ours_side(*args), arguments.repeats)
            if weights is None:
                assert ours == theirs, (scenario["name"], ours, theirs)
            else:
                assert all(abs(a - b) <= 1e-12 for a, b in zip(ours, theirs, strict=True)), (ours, theirs)
            sklearn_peak = project.peak_mib(lambda: sklearn_side(*args))
            our_peak = project.peak_mib(lambda: ours_side(*args))
            print(f"{scenario['name']:<26}{inputs:<8}{sklearn_seconds:>10.3f}{our_seconds:>9.4f}"
                  f"{sklearn_seconds / our_seconds:>7.1f}x{floor:>9.4f}{sklearn_peak:>8.0f}{our_peak:>9.0f}  "
                  f"{tuple(round(value, 6) for value in ours)}")


if __name__ == "__main__":
    main()
