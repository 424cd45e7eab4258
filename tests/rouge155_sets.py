"""The option sets of the ROUGE-1.5.5 parity tests, shared by the tests and scripts/rouge155_golden.py."""

from __future__ import annotations

from metrics._core.core_rouge155 import PYROUGE_ROUGE155_TYPES, Rouge155Options

FIVE = ("rouge1", "rouge2", "rougeL", "rougeW", "rougeSU4")

# pyrouge's command (-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a), with its -m and without.
PYROUGE = Rouge155Options(rouge_types=PYROUGE_ROUGE155_TYPES, use_stemmer=True, n_bootstrap=1000)
PYROUGE_NO_STEM = Rouge155Options(rouge_types=PYROUGE_ROUGE155_TYPES, use_stemmer=False, n_bootstrap=1000)

# Extra settings on the full CNN/DailyMail test set (one resample: the per-example values do not depend on -r).
CNNDM_OPTION_SETS = {
    "stopwords": Rouge155Options(rouge_types=FIVE, remove_stopwords=True, n_bootstrap=1),
    "words75": Rouge155Options(rouge_types=FIVE, length_limit=75, n_bootstrap=1),
    "bytes275": Rouge155Options(rouge_types=FIVE, byte_limit=275, n_bootstrap=1),
    "two_refs_A": Rouge155Options(rouge_types=FIVE, scoring_formula="A", n_bootstrap=1),
    "two_refs_B": Rouge155Options(rouge_types=FIVE, scoring_formula="B", n_bootstrap=1),
}


def cnndm_inputs(records: list[dict], name: str, system: str = "pointer-gen-cov") -> tuple[list[str], list[list[str]]]:
    """Predictions and references of one CNN/DailyMail setting. The two-reference settings score pointer-gen
    against the reference and the baseline's output (real text with a second, different summary)."""
    if name.startswith("two_refs"):
        return [record["pointer-gen"] for record in records], [[record["reference"], record["baseline"]] for record in records]
    return [record[system] for record in records], [[record["reference"]] for record in records]


# Option sets of the generated cases (tests/golden/rouge155/generated.json).
GENERATED_OPTION_SETS = {
    "pyrouge_m": Rouge155Options(rouge_types=PYROUGE_ROUGE155_TYPES, n_bootstrap=1000),
    "pyrouge_no_m": Rouge155Options(rouge_types=PYROUGE_ROUGE155_TYPES, use_stemmer=False, n_bootstrap=1000),
    "stopwords": Rouge155Options(rouge_types=("rouge1", "rouge2", "rougeL", "rougeSU4"), remove_stopwords=True, n_bootstrap=100),
    "words20": Rouge155Options(rouge_types=FIVE, length_limit=20, n_bootstrap=100),
    "bytes100": Rouge155Options(rouge_types=FIVE, byte_limit=100, n_bootstrap=100),
    "best_B": Rouge155Options(rouge_types=FIVE, scoring_formula="B", n_bootstrap=100),
    "best_B_no_m_words30": Rouge155Options(
        rouge_types=("rouge1", "rouge2", "rougeL", "rougeW", "rougeS4", "rougeSU4"), scoring_formula="B",
        use_stemmer=False, length_limit=30, n_bootstrap=100,
    ),
    "alpha08_w15": Rouge155Options(rouge_types=("rouge1", "rougeL", "rougeW"), alpha=0.8, w_weight=1.5, n_bootstrap=100),
}
# Cases with empty references (ROUGE-1.5.5 dies on them in ROUGE-W, so no rougeW here).
EDGE_OPTION_SETS = {
    "edge_m": Rouge155Options(rouge_types=("rouge1", "rouge2", "rouge4", "rougeL", "rougeS", "rougeSU"), n_bootstrap=100),
    "edge_no_m_B": Rouge155Options(
        rouge_types=("rouge1", "rouge3", "rougeL", "rougeS0", "rougeSU0"), use_stemmer=False, scoring_formula="B",
        n_bootstrap=100,
    ),
}
