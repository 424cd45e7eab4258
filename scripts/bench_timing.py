"""Timing shared by the benchmarks: runs interleaved in rounds (medians of wall and CPU seconds), and one first run."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable

Timing = tuple[float, float, object]


def interleaved(
    runs: dict[str, tuple[Callable[[], object], Callable[[], None]]], repeats: int
) -> dict[str, Timing]:
    """Run every (function, preparation) in turn, ``repeats`` rounds; median wall and CPU seconds, last result."""
    walls: dict[str, list[float]] = {name: [] for name in runs}
    cpus: dict[str, list[float]] = {name: [] for name in runs}
    results: dict[str, object] = {}
    for _ in range(repeats):
        for name, (function, before) in runs.items():
            before()
            gc.collect()
            start, start_cpu = time.perf_counter(), time.process_time()
            results[name] = function()
            walls[name].append(time.perf_counter() - start)
            cpus[name].append(time.process_time() - start_cpu)
    return {name: (statistics.median(walls[name]), statistics.median(cpus[name]), results[name]) for name in runs}


def first_run(function: Callable[[], object], before: Callable[[], None] = lambda: None) -> Timing:
    """One run of ``function`` after ``before``: wall and CPU seconds, result."""
    before()
    gc.collect()
    start, start_cpu = time.perf_counter(), time.process_time()
    result = function()
    return time.perf_counter() - start, time.process_time() - start_cpu, result
