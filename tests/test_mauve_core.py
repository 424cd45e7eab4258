"""MAUVE's core pieces against plain definitions: KL, the divergence curve and its area, the frontier integral,
PCA, k-means on separable data, and the arithmetic of mauve-text 0.4.0 on the same histograms."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

from metrics._core.core_mauve import (QuantizeOptions, area_under_curve, auto_buckets, divergence_curve,
                                      frontier_integral, kl_divergence, mauve_from_counts, principal_projection,
                                      quantize, unit_rows)
from metrics._core.core_mauve_kmeans import cluster_sums, kmeans, kmeans_plus_plus, nearest_centroids


def plain_kl(p, q):
    total = 0.0
    for a, b in zip(p, q):
        if a > 0 and b == 0:
            return math.inf
        if a > 0:
            total += a * math.log(a / b)
    return total


def plain_frontier_integral(p, q):
    """The frontier integral from its definition, term by term (Liu et al. 2021, scaled by 2)."""
    total = 0.0
    for a, b in zip(p, q):
        if a == 0 and b == 0:
            continue
        if a == 0 or b == 0:
            total += (a + b) / 4
        elif abs(a - b) > 1e-8:
            total += (a + b) / 4 - a * b * (math.log(a) - math.log(b)) / (a - b) / 2
    return 2 * total


def random_histogram(rng, size, zeros=0):
    values = rng.random(size)
    values[rng.choice(size, zeros, replace=False)] = 0
    return values / values.sum()


def test_kl_matches_the_formula_and_is_infinite_off_the_support():
    rng = np.random.default_rng(1)
    for _ in range(50):
        p, q = random_histogram(rng, 7, zeros=2), random_histogram(rng, 7)
        assert kl_divergence(p, q) == pytest.approx(plain_kl(p, q), rel=1e-12)
    assert kl_divergence(np.array([0.5, 0.5]), np.array([1.0, 0.0])) == math.inf
    assert kl_divergence(np.array([1.0, 0.0]), np.array([0.5, 0.5])) == pytest.approx(math.log(2))


def test_divergence_curve_of_disjoint_histograms_by_hand():
    # P = (1, 0), Q = (0, 1): R_w = (w, 1 - w), KL(Q|R_w) = -log(1 - w), KL(P|R_w) = -log(w).
    p, q = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    curve = divergence_curve(p, q, 5, 2.0)
    weights = np.linspace(1e-6, 1 - 1e-6, 5)
    expected = [[1.0, 0.0], *[[(1 - w) ** 2, w ** 2] for w in weights], [0.0, 1.0]]
    np.testing.assert_allclose(curve, expected, rtol=1e-12, atol=1e-300)


def test_area_by_hand_and_of_identical_histograms():
    # The square's corner: (0, 1), (1, 1), (1, 0) encloses area 1; a straight line from (0, 1) to (1, 0) 1/2.
    assert area_under_curve(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])) == 1.0
    assert area_under_curve(np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])) == pytest.approx(0.5)
    counts = np.array([3, 3, 0, 5])
    assert mauve_from_counts(counts, counts)["mauve"] == pytest.approx(1.0, abs=1e-12)


def test_identical_histograms_give_one_where_mauve_text_gives_three_quarters():
    """The deliberate difference: mauve-text sorts the curve's tied points with argsort and, for identical
    two-bucket histograms (evaluate's 'hello world' example), integrates (0, 1) -> (1, 0) -> (1, 1)."""
    oracle = importlib.import_module("mauve.compute_mauve")
    from sklearn.metrics import auc

    counts = np.array([1, 1])
    p = counts / counts.sum()
    x, y = oracle.get_divergence_curve_for_multinomials(p, p, np.linspace(1e-6, 1 - 1e-6, 25), 5).T
    theirs = 0.5 * (auc(x[np.argsort(x)], y[np.argsort(x)]) + auc(y[np.argsort(y)], x[np.argsort(y)]))
    assert theirs == 0.75
    assert mauve_from_counts(counts, counts)["mauve"] == 1.0


def test_disjoint_histograms_give_mauve_near_zero_and_frontier_integral_one():
    result = mauve_from_counts(np.array([4, 0]), np.array([0, 4]))
    assert result["mauve"] < 0.01
    assert result["frontier_integral"] == pytest.approx(1.0)


def test_frontier_integral_matches_the_definition():
    rng = np.random.default_rng(2)
    for _ in range(50):
        p, q = random_histogram(rng, 9, zeros=2), random_histogram(rng, 9, zeros=3)
        assert frontier_integral(p, q) == pytest.approx(plain_frontier_integral(p, q), rel=1e-12, abs=1e-15)
    p = random_histogram(rng, 9)
    assert frontier_integral(p, p) == 0.0


def test_results_from_counts_equal_mauve_text_arithmetic():
    """On the same histograms every output equals mauve-text 0.4.0's functions (bar the tie rule above)."""
    oracle = importlib.import_module("mauve.compute_mauve")
    from sklearn.metrics import auc

    rng = np.random.default_rng(3)
    for _ in range(30):
        p_counts, q_counts = rng.integers(0, 20, 12), rng.integers(0, 20, 12)
        p_counts[0] += 1
        q_counts[0] += 1
        ours = mauve_from_counts(p_counts, q_counts, discretization_size=25, scaling_factor=5)
        p, q = p_counts / p_counts.sum(), q_counts / q_counts.sum()
        curve = oracle.get_divergence_curve_for_multinomials(p, q, np.linspace(1e-6, 1 - 1e-6, 25), 5)
        x, y = curve.T
        expected = 0.5 * (auc(x[np.argsort(x)], y[np.argsort(x)]) + auc(y[np.argsort(y)], x[np.argsort(y)]))
        np.testing.assert_array_equal(ours["divergence_curve"], curve)
        assert ours["mauve"] == pytest.approx(expected, rel=1e-12)
        assert ours["frontier_integral"] == pytest.approx(oracle.get_fronter_integral(p, q), rel=1e-12)
        np.testing.assert_array_equal(ours["p_hist"], p)


def test_auto_buckets_is_a_tenth_of_the_smaller_sample():
    assert auto_buckets(1000, 5000) == 100
    assert auto_buckets(3, 3) == 2
    assert auto_buckets(25, 40) == 2  # round(2.5) is 2, as Python rounds


def test_principal_projection_keeps_the_variance_asked_for():
    from sklearn.decomposition import PCA

    rng = np.random.default_rng(4)
    data = unit_rows(rng.normal(size=(300, 6)) * np.array([10, 5, 2, 1, 0.5, 0.1]))
    projected = principal_projection(data, 0.9)
    reference = PCA().fit(data)
    keep = int(np.argmax(np.cumsum(reference.explained_variance_ratio_) >= 0.9)) + 1
    assert projected.shape == (300, keep)
    np.testing.assert_allclose(np.abs(projected), np.abs(reference.transform(data)[:, :keep]), atol=1e-5)
    assert principal_projection(np.ones((5, 3)), 0.9).shape == (5, 1)  # no variance: one (zero) axis


def three_blobs(rng, size=60):
    centers = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    points = np.concatenate([center + rng.normal(scale=0.5, size=(size, 2)) for center in centers])
    return points, np.repeat(np.arange(3), size)


def test_kmeans_separates_separable_blobs():
    rng = np.random.default_rng(5)
    points, truth = three_blobs(rng)
    result = kmeans(points, 3, num_redo=3, max_iter=100, seed=0)
    for blob in range(3):
        assert len(set(result.labels[truth == blob])) == 1
    assert len(set(result.labels)) == 3
    expected = sum(((points[result.labels == c] - points[result.labels == c].mean(axis=0)) ** 2).sum()
                   for c in range(3))
    assert result.objective == pytest.approx(expected, rel=1e-5)


def test_kmeans_is_reproducible_and_keeps_the_best_restart():
    rng = np.random.default_rng(6)
    points = rng.normal(size=(400, 4)).astype(np.float32)
    first, again = kmeans(points, 12, num_redo=4, max_iter=200, seed=7), kmeans(points, 12, num_redo=4,
                                                                                 max_iter=200, seed=7)
    np.testing.assert_array_equal(first.labels, again.labels)
    single = [kmeans(points, 12, num_redo=1, max_iter=200, seed=7)]
    assert first.objective <= single[0].objective
    other = kmeans(points, 12, num_redo=4, max_iter=200, seed=8)
    assert not np.array_equal(first.labels, other.labels)


def test_kmeans_with_more_clusters_than_distinct_points():
    points = np.repeat(np.array([[0.0, 0.0], [1.0, 1.0]]), 5, axis=0)
    result = kmeans(points, 4, num_redo=2, max_iter=50, seed=0)
    assert len(set(result.labels[:5])) == 1 and len(set(result.labels[5:])) == 1
    assert result.objective == 0.0


def test_nearest_centroids_and_cluster_sums_by_brute_force():
    rng = np.random.default_rng(8)
    points, centroids = rng.normal(size=(50, 3)), rng.normal(size=(6, 3))
    labels, distances = nearest_centroids(points, centroids)
    brute = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=2)
    np.testing.assert_array_equal(labels, brute.argmin(axis=1))
    np.testing.assert_allclose(distances, brute.min(axis=1), rtol=1e-4, atol=1e-5)
    sums = cluster_sums(points, labels, 6)
    for cluster in range(6):
        np.testing.assert_allclose(sums[cluster], points[labels == cluster].sum(axis=0), atol=1e-12)


def test_kmeans_plus_plus_picks_distinct_points_first():
    points = np.array([[0.0], [0.0], [5.0], [9.0]])
    starts = kmeans_plus_plus(points, 3, np.random.default_rng(0))
    assert sorted(starts[:, 0].tolist()) == [0.0, 5.0, 9.0]


def test_quantize_counts_each_side_and_depends_only_on_the_seed():
    rng = np.random.default_rng(9)
    p, q = rng.normal(size=(80, 5)), rng.normal(size=(60, 5)) + 1
    options = QuantizeOptions(num_buckets=8, seed=3)
    p_counts, q_counts = quantize(p, q, options)
    assert p_counts.sum() == 80 and q_counts.sum() == 60 and len(p_counts) == 8
    again = quantize(p, q, options)
    np.testing.assert_array_equal(p_counts, again[0])
    sampled = quantize(p, q, QuantizeOptions(num_buckets=8, seed=3, pca_max_data=50))
    assert sampled[0].sum() == 80


def test_quantize_does_not_depend_on_the_order_of_the_rows():
    rng = np.random.default_rng(10)
    p, q = rng.normal(size=(70, 4)), rng.normal(size=(50, 4)) + 0.5
    options = QuantizeOptions(num_buckets=7, seed=1)
    expected = quantize(p, q, options)
    shuffled = quantize(p[rng.permutation(70)], q[rng.permutation(50)], options)
    np.testing.assert_array_equal(shuffled[0], expected[0])
    np.testing.assert_array_equal(shuffled[1], expected[1])
