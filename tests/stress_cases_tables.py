"""Stress cases of the table metrics: classification, ranking, correlation, seqeval, meta-evaluation and agreement
(see resource_stress.py)."""

from __future__ import annotations

from resource_stress import StressCase

# n examples of 10 classes (numpy arrays: the fast path of the label check).
LABELS = """
rng = np.random.default_rng(0)
inputs = {"predictions": rng.integers(0, 10, n), "references": rng.integers(0, 10, n)}
"""

# n examples, about n distinct labels (a confusion of n classes: only the occurring cells are kept).
DISTINCT_LABELS = """
rng = np.random.default_rng(0)
references = np.arange(n)
inputs = {"predictions": np.where(rng.random(n) < 0.5, references, rng.integers(0, n, n)), "references": references,
          "average": "macro"}
"""

# n examples of about n distinct labels spread over 10**12 ids (not a dense table: the labels are sorted).
SPARSE_LABELS = """
rng = np.random.default_rng(0)
inputs = {"predictions": rng.integers(0, 10**12, n), "references": rng.integers(0, 10**12, n), "average": "macro"}
"""

# n examples of two numbers each.
NUMBERS = """
rng = np.random.default_rng(0)
references = rng.normal(size=n)
inputs = {"predictions": (references + rng.normal(size=n)).tolist(), "references": references.tolist()}
"""

# n queries of 10 documents (5 judged), each scored at 1,000 cut-offs: queries x cut-offs = 1,000 n.
QUERIES_AT_CUTOFFS = """
inputs = {"predictions": [{f"d{j}": float(10 - j) for j in range(10)} for _ in range(n)],
          "references": [{f"d{j}": j % 3 for j in range(0, 10, 2)} for _ in range(n)],
          "k": list(range(1, 1001))}
"""

# n queries of 20 documents (10 judged), the default cut-offs.
QUERIES = """
inputs = {"predictions": [{f"d{j}": random.random() for j in range(20)} for _ in range(n)],
          "references": [{f"d{j}": random.randint(0, 2) for j in range(0, 20, 2)} for _ in range(n)]}
"""

# One query ranking n documents (ties every 10 scores), n / 10 of them judged.
ONE_LONG_QUERY = """
inputs = {"predictions": [{f"d{j}": float(j // 10) for j in range(n)}],
          "references": [{f"d{j}": j % 3 for j in range(0, n, 10)}]}
"""

# n sentences of 10 tags, each sentence with a tag of its own that is no entity tag (n distinct such tags).
DISTINCT_TAGS = """
base = ["B-PER", "I-PER", "O", "B-LOC", "O", "O", "B-ORG", "I-ORG", "O"]
inputs = {"predictions": [base + [f"X{i}"] for i in range(n)], "references": [base + ["O"] for i in range(n)]}
"""

# n sentences in strict mode (scheme detected), each with an entity type of its own (n distinct types).
DISTINCT_TYPES = """
inputs = {"predictions": [["B-T%d" % i, "I-T%d" % i, "O", "B-PER"] for i in range(n)],
          "references": [["B-T%d" % i, "I-T%d" % i, "O", "O"] for i in range(n)], "mode": "strict"}
"""

# One item scored for n systems (WMT's relative-ranking pairs of one item: n (n - 1) / 2).
SYSTEMS_OF_ONE_ITEM = """
rng = np.random.default_rng(0)
human = rng.normal(size=n) * 30
inputs = {"predictions": (human + rng.normal(size=n) * 30).tolist(), "references": human.tolist(),
          "systems": [f"s{i}" for i in range(n)], "items": ["item"] * n, "level": "segment"}
"""

# n rows (10 systems x n / 10 items) with a bootstrap of 1,000 resamples.
META_BOOTSTRAP = """
rng = np.random.default_rng(0)
human = rng.normal(size=n) * 30
inputs = {"predictions": (human + rng.normal(size=n) * 30).tolist(), "references": human.tolist(),
          "systems": [f"s{i % 10}" for i in range(n)], "items": [f"i{i // 10}" for i in range(n)],
          "confidence": True, "n_bootstrap": 1000}
"""

# n ratings: 5 annotators per item, labels 0-4, optionally with a bootstrap of 1,000 resamples.
RATINGS = """
rng = np.random.default_rng(0)
inputs = {"items": [f"i{i // 5}" for i in range(n)], "annotators": [f"a{i % 5}" for i in range(n)],
          "labels": rng.integers(0, 5, n).tolist()}
"""
RATINGS_BOOTSTRAP = RATINGS + """
inputs.update(confidence=True, n_bootstrap=1000, coefficients=["krippendorff_alpha", "leave_one_out_spearman"])
"""

_RANKING = ("map", "mrr", "ndcg", "precision_at_k", "recall_at_k")

STRESS_CASES = [
    StressCase("accuracy", "examples", LABELS, full=20_000_000, small=1_000, expect="finish", seconds=60),
    StressCase("precision", "distinct labels", DISTINCT_LABELS, full=2_000_000, small=1_000, expect="finish",
               seconds=60),
    StressCase("recall", "distinct sparse labels", SPARSE_LABELS, full=1_000_000, small=1_000, expect="finish",
               seconds=60),
    StressCase("f1", "distinct labels", DISTINCT_LABELS, full=2_000_000, small=1_000, expect="finish", seconds=60),
    StressCase("matthews_correlation", "examples", LABELS, full=20_000_000, small=1_000, expect="finish", seconds=60),
    *(StressCase(module, "queries x cut-offs", QUERIES_AT_CUTOFFS, full=100_000, small=20, expect="refuse",
                 option="max_cutoff_values", small_bound=1_000) for module in _RANKING),
    StressCase("ndcg", "documents of one query", ONE_LONG_QUERY, full=2_000_000, small=1_000, expect="finish",
               seconds=60),
    StressCase("mrr", "queries", QUERIES, full=500_000, small=100, expect="finish", seconds=60),
    StressCase("pearsonr", "examples", NUMBERS, full=10_000_000, small=1_000, expect="finish", seconds=60),
    StressCase("spearmanr", "examples", NUMBERS, full=10_000_000, small=1_000, expect="finish", seconds=60),
    StressCase("seqeval", "distinct non-entity tags", DISTINCT_TAGS, full=300_000, small=1_000, expect="finish",
               seconds=60),
    StressCase("seqeval", "distinct entity types (strict)", DISTINCT_TYPES, full=300_000, small=1_000,
               expect="finish", seconds=60),
    StressCase("meta_evaluation", "systems of one item", SYSTEMS_OF_ONE_ITEM, full=1_000_000, small=1_000,
               expect="finish", seconds=60),
    StressCase("meta_evaluation", "bootstrap resamples x rows", META_BOOTSTRAP, full=1_000_000, small=1_000,
               expect="refuse", option="max_resample_work", small_bound=1_000),
    StressCase("agreement", "ratings", RATINGS, full=5_000_000, small=1_000, expect="finish", seconds=60),
    StressCase("agreement", "bootstrap resamples x ratings", RATINGS_BOOTSTRAP, full=1_000_000, small=1_000,
               expect="refuse", option="max_resample_work", small_bound=1_000),
]
