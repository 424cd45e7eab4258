"""MAUVE from features: quantization (PCA, k-means), the divergence frontier, its area, the frontier integral.

The steps are mauve-text 0.4.0's ``compute_mauve`` given ``p_features`` and
``q_features`` (Pillutla et al., NeurIPS 2021; JMLR 2023):

1. the features of Q then P (each side's rows in a canonical order), each row scaled to unit L2 norm, centred, and
   projected on the fewest principal components that explain ``kmeans_explained_var`` of their variance (the
   principal axes fitted on all rows, or on a seeded sample of ``pca_max_data`` rows);
2. k-means with ``num_buckets`` clusters (:mod:`core_mauve_kmeans`) on the projected rows; P's and Q's
   histograms over the clusters (normalised counts; MAUVE* uses the counts plus 1/2, Krichevsky-Trofimov);
3. the divergence curve: for mixture weights ``w`` evenly spaced in [1e-6, 1 - 1e-6],
   ``R_w = w P + (1 - w) Q`` and the point ``(exp(-c KL(Q | R_w)), exp(-c KL(P | R_w)))``, with
   ``c = mauve_scaling_factor``, between the extreme points (1, 0) and (0, 1);
4. MAUVE, the area under that curve (the mean of the trapezoid areas with the points sorted by x and by y),
   and the frontier integral (closed form, Liu et al. 2021).

Randomness (PCA's sample, k-means) comes only from ``seed``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .core_mauve_kmeans import MAX_POINTS_PER_CENTROID, kmeans
from .core_resources import refuse_above

MIXTURE_EPSILON = 1e-6
# Training points x buckets x feature width of one Lloyd iteration: about 4,000 texts a side of 576-wide features
# (SmolLM2's) with the automatic 400 buckets, about a minute on a 2-core CPU (card: Resource Bounds).
DEFAULT_MAX_KMEANS_WORK = 2_000_000_000
PCA_SAMPLE_STREAM = 3  # numpy.random.default_rng([seed, 3]) draws the PCA's rows (core_mauve_kmeans: 1 and 2)


@dataclass(frozen=True)
class QuantizeOptions:
    """The options of step 1 and 2 (mauve-text's names and defaults)."""

    num_buckets: int
    pca_max_data: int = -1
    kmeans_explained_var: float = 0.9
    kmeans_num_redo: int = 5
    kmeans_max_iter: int = 500
    seed: int = 25


def auto_buckets(p_size: int, q_size: int) -> int:
    """mauve-text's ``num_buckets='auto'``: a tenth of the smaller sample, at least 2."""
    return max(2, int(round(min(p_size, q_size) / 10)))


def kmeans_work(points: int, buckets: int, width: int) -> int:
    """The distance work of one Lloyd iteration (and of the k-means++ start, and of each restart's final
    assignment): the points k-means trains on (at most ``MAX_POINTS_PER_CENTROID`` per bucket) x buckets x
    dimensions (the features' width: PCA keeps at most that many)."""
    return min(points, buckets * MAX_POINTS_PER_CENTROID) * buckets * width


def check_kmeans_work(metric: str, p_size: int, q_size: int, buckets: int, width: int, bound: int) -> None:
    """Refuse a quantization whose k-means iteration would exceed ``max_kmeans_work`` (before any feature is
    computed: ``width`` is the given features' or the featurizer's)."""
    refuse_above(metric, work=f"k-means of the {p_size:,} + {q_size:,} texts of P and Q into {buckets:,} buckets of "
                              f"{width}-dimensional features; training points x buckets x dimensions per iteration",
                 amount=kmeans_work(p_size + q_size, buckets, width), option_name="max_kmeans_work", bound=bound,
                 default=DEFAULT_MAX_KMEANS_WORK,
                 remedy="score a sample of the texts, set fewer `num_buckets` (the automatic count is a tenth of the "
                        "texts, so the work grows with the square of the texts), or lower `kmeans_explained_var` "
                        "with features of fewer dimensions")


def unit_rows(features: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (all-zero rows stay zero), float64."""
    features = np.asarray(features, dtype=np.float64)
    norms = np.linalg.norm(features, axis=1, keepdims=True)
    return features / np.where(norms == 0, 1.0, norms)


def principal_projection(data: np.ndarray, explained_var: float, fit_rows: np.ndarray | None = None) -> np.ndarray:
    """``data`` centred and projected on the fewest principal axes whose explained variance ratio reaches
    ``explained_var`` (axes and mean from ``data[fit_rows]``, or all rows), as float32.

    The axes are the eigenvectors of the covariance matrix (sign and order of axes do not change k-means).
    With no variance at all, one axis is kept, as mauve-text ends up doing.
    """
    fit = data if fit_rows is None else data[fit_rows]
    mean = fit.mean(axis=0)
    centred = fit - mean
    eigenvalues, eigenvectors = np.linalg.eigh(centred.T @ centred)
    eigenvalues = np.clip(eigenvalues[::-1], 0.0, None)[:min(fit.shape)]
    eigenvectors = eigenvectors[:, ::-1]
    total = eigenvalues.sum()
    keep = 1
    if total > 0:
        keep = int(np.argmax(np.cumsum(eigenvalues / total) >= explained_var)) + 1
    return ((data - mean) @ eigenvectors[:, :keep]).astype(np.float32)


def canonical_order(features: np.ndarray) -> np.ndarray:
    """The rows sorted by their bytes: the same rows in any order give the same array (so MAUVE does not depend
    on the order of the texts; mauve-text's does, through k-means's random draws)."""
    rows = np.ascontiguousarray(features, dtype=np.float64)
    keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
    return rows[np.argsort(keys, kind="stable")]


def quantize(p_features: np.ndarray, q_features: np.ndarray, options: QuantizeOptions) -> tuple[np.ndarray, np.ndarray]:
    """The cluster counts of P and of Q (int64 arrays of length ``num_buckets``), whatever the order of the rows."""
    data = unit_rows(np.vstack([canonical_order(q_features), canonical_order(p_features)]))
    fit_rows = None
    if 0 < options.pca_max_data < len(data):
        rng = np.random.default_rng([options.seed, PCA_SAMPLE_STREAM])
        fit_rows = np.sort(rng.choice(len(data), options.pca_max_data, replace=False))
    projected = principal_projection(data, options.kmeans_explained_var, fit_rows)
    labels = kmeans(projected, options.num_buckets, num_redo=options.kmeans_num_redo,
                    max_iter=options.kmeans_max_iter, seed=options.seed).labels
    q_size = len(q_features)
    return (np.bincount(labels[q_size:], minlength=options.num_buckets),
            np.bincount(labels[:q_size], minlength=options.num_buckets))


def kl_divergence(p: np.ndarray, q: np.ndarray) -> float:
    """KL(p | q) in nats for discrete distributions: inf when p has mass where q has none."""
    if np.any((p != 0) & (q == 0)):
        return math.inf
    support = (p != 0) & (q != 0)
    return float(np.sum(p[support] * np.log(p[support] / q[support])))


def divergence_curve(p: np.ndarray, q: np.ndarray, discretization_size: int, scaling_factor: float) -> np.ndarray:
    """The [discretization_size + 2, 2] points ``exp(-c (KL(Q | R_w), KL(P | R_w)))``, extremes first and last."""
    weights = np.linspace(MIXTURE_EPSILON, 1 - MIXTURE_EPSILON, discretization_size)
    points = [[0.0, math.inf]]
    for w in np.sort(weights):
        mixture = w * p + (1 - w) * q
        points.append([kl_divergence(q, mixture), kl_divergence(p, mixture)])
    points.append([math.inf, 0.0])
    return np.exp(-scaling_factor * np.asarray(points))


def area_under_curve(curve: np.ndarray) -> float:
    """MAUVE: the mean of the trapezoid areas under the curve's points sorted by x and sorted by y.

    Points of equal x are taken in order of decreasing y (and of equal y, of decreasing x), the order along the
    curve. mauve-text leaves ties to ``numpy.argsort``, which for identical histograms (every inner point at
    (1, 1)) may put the extreme point (1, 0) before them and give 0.75 instead of 1; without ties the two agree.
    """
    x, y = curve.T
    by_x, by_y = np.lexsort((-y, x)), np.lexsort((-x, y))
    return float(0.5 * (np.trapezoid(y[by_x], x[by_x]) + np.trapezoid(x[by_y], y[by_y])))


def frontier_integral(p: np.ndarray, q: np.ndarray, scaling_factor: float = 2.0) -> float:
    """The frontier integral of two discrete distributions (0 for equal ones, at most 1)."""
    both = (p > 0) & (q > 0) & (np.abs(p - q) > 1e-8)
    one = (p > 0) != (q > 0)
    a, b = p[both], q[both]
    mixed = 0.25 * (a + b) - 0.5 * a * b * (np.log(a) - np.log(b)) / (a - b)
    return float(scaling_factor * (math.fsum(mixed) + math.fsum((p[one] + q[one]) / 4)))


def mauve_from_counts(p_counts: np.ndarray, q_counts: np.ndarray, *, discretization_size: int = 25,
                      scaling_factor: float = 5.0) -> dict[str, Any]:
    """mauve-text's result from the cluster counts of P and Q: MAUVE, the frontier integral, both with
    Krichevsky-Trofimov smoothing (``*_star``), the histograms and the divergence curve."""
    p_hist, q_hist = p_counts / p_counts.sum(), q_counts / q_counts.sum()
    p_smooth, q_smooth = (p_counts + 0.5) / (p_counts + 0.5).sum(), (q_counts + 0.5) / (q_counts + 0.5).sum()
    curve = divergence_curve(p_hist, q_hist, discretization_size, scaling_factor)
    smooth_curve = divergence_curve(p_smooth, q_smooth, discretization_size, scaling_factor)
    return {
        "mauve": area_under_curve(curve),
        "frontier_integral": frontier_integral(p_hist, q_hist),
        "mauve_star": area_under_curve(smooth_curve),
        "frontier_integral_star": frontier_integral(p_smooth, q_smooth),
        "p_hist": p_hist,
        "q_hist": q_hist,
        "divergence_curve": curve,
        "num_buckets": len(p_counts),
    }


def mauve_from_features(p_features: np.ndarray, q_features: np.ndarray, options: QuantizeOptions, *,
                        discretization_size: int = 25, scaling_factor: float = 5.0) -> dict[str, Any]:
    """MAUVE of P against Q from their features ([n_p, d] and [n_q, d])."""
    p_counts, q_counts = quantize(p_features, q_features, options)
    return mauve_from_counts(p_counts, q_counts, discretization_size=discretization_size,
                             scaling_factor=scaling_factor)


class MauveResult(dict):
    """The result as a dict that also reads as attributes (``out.mauve``, as mauve-text's namespace reads)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None
