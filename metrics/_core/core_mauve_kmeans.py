"""Seeded k-means for MAUVE's quantization: k-means++ starts, Lloyd iterations to a fixed point, restarts.

What mauve-text gets from ``faiss.Kmeans`` (``nredo`` restarts, the lowest
objective kept, ``niter`` iterations at most, then each point labelled with its
nearest final centroid), in plain numpy, seeded and reproducible:

* each restart ``r`` draws from its own generator, ``numpy.random.default_rng([seed, 1, r])``, so a restart
  does not depend on the others;
* starts are k-means++ (Arthur & Vassilvitskii 2007: each next centroid a point drawn with probability
  proportional to its squared distance to the nearest centroid so far) where faiss draws ``k`` points
  uniformly;
* Lloyd iterations stop once no label changes (a fixed point: faiss would go on to ``niter`` iterations
  without changing anything);
* an emptied cluster takes the point farthest from its centroid, when that point is not on its centroid;
* as faiss does, at most ``MAX_POINTS_PER_CENTROID`` points per cluster train the centroids (one seeded
  sample of the points for every restart when there are more); every point is labelled.

Distances are float32 (``|x|^2 - 2 x.c + |c|^2``, as faiss computes them), taken ``DISTANCE_BLOCK`` cells at a
time so that memory stays bounded; centroids are float64 means.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_POINTS_PER_CENTROID = 256
DISTANCE_BLOCK = 1 << 22  # distance cells (points x centroids) computed at once
# Random streams: numpy.random.default_rng([seed, stream, ...]) (core_mauve's PCA sample is stream 3).
RESTART_STREAM, SAMPLE_STREAM = 1, 2


@dataclass(frozen=True)
class KMeansResult:
    """Final centroids [k, d], each point's label [n], the objective (sum of squared distances) and the number of
    Lloyd iterations run by the kept restart."""

    centroids: np.ndarray
    labels: np.ndarray
    objective: float
    iterations: int


def nearest_centroids(points: np.ndarray, centroids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(label, squared distance) of each point's nearest centroid (the first one on ties)."""
    points32 = np.asarray(points, dtype=np.float32)
    centroids32 = np.asarray(centroids, dtype=np.float32)
    centroid_norms = np.einsum("kd,kd->k", centroids32, centroids32)
    labels = np.empty(len(points32), dtype=np.int64)
    distances = np.empty(len(points32), dtype=np.float32)
    rows = max(1, DISTANCE_BLOCK // max(1, len(centroids32)))
    for start in range(0, len(points32), rows):
        block = points32[start:start + rows]
        cells = centroid_norms[None, :] - 2.0 * (block @ centroids32.T)
        best = np.argmin(cells, axis=1)
        labels[start:start + rows] = best
        norms = np.einsum("nd,nd->n", block, block)
        distances[start:start + rows] = np.maximum(cells[np.arange(len(block)), best] + norms, 0.0)
    return labels, distances


def kmeans_plus_plus(points: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """``k`` starting centroids drawn by k-means++ (uniformly among the points once every point is on one)."""
    points = np.asarray(points, dtype=np.float64)
    n = len(points)
    chosen = [int(rng.integers(n))]
    closest = _squared_distances(points, points[chosen[0]])
    for _ in range(1, k):
        total = float(closest.sum())
        if total > 0:
            index = int(np.searchsorted(np.cumsum(closest), rng.random() * total, side="right"))
            index = min(index, n - 1)
        else:
            index = int(rng.integers(n))
        chosen.append(index)
        closest = np.minimum(closest, _squared_distances(points, points[index]))
    return points[chosen]


def _squared_distances(points: np.ndarray, center: np.ndarray) -> np.ndarray:
    difference = points - center
    return np.einsum("nd,nd->n", difference, difference)


def lloyd(points: np.ndarray, centroids: np.ndarray, max_iter: int) -> tuple[np.ndarray, int]:
    """Centroids (float64) after Lloyd iterations on float32 ``points`` from ``centroids``, until no label
    changes (at most ``max_iter`` iterations), and the number of iterations that moved them."""
    k = len(centroids)
    labels: np.ndarray | None = None
    for iteration in range(max_iter):
        new_labels, distances = nearest_centroids(points, centroids)
        if labels is not None and np.array_equal(new_labels, labels):
            return centroids, iteration
        labels = new_labels
        counts = np.bincount(labels, minlength=k)
        filled = counts > 0
        centroids = centroids.copy()
        centroids[filled] = cluster_sums(points, labels, k)[filled] / counts[filled, None]
        _refill_empty(points, centroids, ~filled, distances)
    return centroids, max_iter


def cluster_sums(points: np.ndarray, labels: np.ndarray, k: int) -> np.ndarray:
    """The float64 sum of each cluster's points [k, d] (sorted by label, then one reduction per cluster)."""
    order = np.argsort(labels, kind="stable")
    ordered = labels[order]
    present = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    sums = np.zeros((k, points.shape[1]), dtype=np.float64)
    sums[ordered[present]] = np.add.reduceat(points[order].astype(np.float64), present, axis=0)
    return sums


def _refill_empty(points: np.ndarray, centroids: np.ndarray, empty: np.ndarray, distances: np.ndarray) -> None:
    """Move each empty cluster's centroid onto the point farthest from its own centroid (in place)."""
    order = np.argsort(-distances, kind="stable")
    for cluster, index in zip(np.flatnonzero(empty), order, strict=False):
        if distances[index] <= 0:
            return
        centroids[cluster] = points[index]


def kmeans(points: np.ndarray, k: int, *, num_redo: int, max_iter: int, seed: int) -> KMeansResult:
    """The restart of lowest objective among ``num_redo`` seeded k-means runs on ``points`` [n, d]."""
    points = np.ascontiguousarray(points, dtype=np.float32)
    if not 1 <= k <= len(points):
        raise ValueError(f"k-means needs between 1 and {len(points)} clusters for {len(points)} points, got {k}")
    if num_redo < 1 or max_iter < 1:
        raise ValueError(f"k-means needs num_redo >= 1 and max_iter >= 1, got {num_redo} and {max_iter}")
    training = points
    if len(points) > k * MAX_POINTS_PER_CENTROID:  # one sample for every restart, so objectives compare
        sample = np.random.default_rng([seed, SAMPLE_STREAM]).choice(len(points), k * MAX_POINTS_PER_CENTROID,
                                                                     replace=False)
        training = points[np.sort(sample)]
    runs = [_one_run(training, k, max_iter, np.random.default_rng([seed, RESTART_STREAM, redo]))
            for redo in range(num_redo)]
    best = min(runs, key=lambda run: run.objective)  # the first of equal objectives
    labels, _ = nearest_centroids(points, best.centroids)
    return KMeansResult(best.centroids, labels, best.objective, best.iterations)


def _one_run(points: np.ndarray, k: int, max_iter: int, rng: np.random.Generator) -> KMeansResult:
    """One k-means run on ``points``: a k-means++ start, then Lloyd iterations."""
    centroids, iterations = lloyd(points, kmeans_plus_plus(points, k, rng), max_iter)
    _, distances = nearest_centroids(points, centroids)
    return KMeansResult(centroids, np.empty(0, dtype=np.int64), float(distances.astype(np.float64).sum()), iterations)
