"""The options of inter-annotator agreement: which coefficients, their parameters, and the item bootstrap.

``coefficients`` names the coefficients computed (any of :data:`COEFFICIENTS`; default Krippendorff's alpha and
percentage agreement, the two defined for any ratings with missing data; the correlation-based ones of dialogue
papers, mean pairwise and leave-one-out Spearman or Pearson, on request); ``level_of_measurement`` is alpha's
(nominal, ordinal, interval, ratio; default nominal, where the ``krippendorff`` package's default is interval);
``weights`` is Cohen's kappa's (None, "linear", "quadratic", as scikit-learn's ``cohen_kappa_score``);
``value_domain`` lists every possible label in order (krippendorff's ``value_domain``; scikit-learn's ``labels``
for weighted kappa). The bootstrap options (``confidence``, ``n_bootstrap``, ``confidence_level``, ``seed``) are
sacreBLEU's, shared with the other metrics. ``max_label_pairs`` and ``max_annotator_pairs`` bound the two
quadratic computations (ratio alpha's pairs of distinct labels; the pairwise correlations' pairs of annotators
within items), each about a minute's work on a 2-core machine by default: above them the coefficient is refused
before it is computed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from .core_agreement_inputs import Label, check_labels
from .core_checks import check_names
from .core_options import bound, choice, option, optional
from .core_resample_options import BootstrapOptions

COEFFICIENTS = ("krippendorff_alpha", "fleiss_kappa", "cohen_kappa", "percent_agreement", "pairwise_spearman",
                "pairwise_pearson", "leave_one_out_spearman", "leave_one_out_pearson")
DEFAULT_COEFFICIENTS = ("krippendorff_alpha", "percent_agreement")
LEVELS = ("nominal", "ordinal", "interval", "ratio")
WEIGHTS = ("linear", "quadratic")
# Ratio alpha compares about 20 million pairs of labels a second; the pairwise correlations about 250,000
# annotator pairs (and take about 150 bytes each).
DEFAULT_MAX_LABEL_PAIRS = 1 << 30
DEFAULT_MAX_ANNOTATOR_PAIRS = 1 << 23


def check_coefficients(metric: str, name: str, value: Any) -> tuple[str, ...]:
    """One coefficient name or a list of them, each once, in the order given."""
    names = check_names(metric, name, [value] if isinstance(value, str) else value, known=COEFFICIENTS.__contains__,
                        valid=", ".join(repr(known) for known in COEFFICIENTS),
                        example='["krippendorff_alpha", "cohen_kappa"]')
    return tuple(dict.fromkeys(names))


def check_value_domain(metric: str, name: str, value: Any) -> tuple[Label, ...]:
    """Every possible label once, in order: all strings or all numbers."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) and not hasattr(value, "tolist"):
        raise TypeError(f"{metric}: `{name}` must be a list of labels in order, got {type(value).__name__} "
                        f"({value!r:.60})")
    labels = check_labels(metric, name, value.tolist() if hasattr(value, "tolist") else list(value))
    if len(labels) < 2:
        raise ValueError(f"{metric}: `{name}` lists {len(labels)} label(s); agreement needs at least 2 possible labels")
    first: dict[Label, int] = {}
    for index, label in enumerate(labels):
        if first.setdefault(label, index) != index:
            raise ValueError(f"{metric}: `{name}[{index}]` repeats `{name}[{first[label]}]` ({label!r:.60}); "
                             f"list every label once")
    return tuple(labels)


@dataclass(frozen=True)
class AgreementOptions(BootstrapOptions):
    """The agreement coefficients to compute and their parameters; an item bootstrap on request."""

    metric_name: ClassVar[str] = "agreement"
    coefficients: tuple[str, ...] = option(DEFAULT_COEFFICIENTS, check_coefficients)
    level_of_measurement: str = option("nominal", choice(*LEVELS))
    weights: str | None = option(None, optional(choice(*WEIGHTS)))
    value_domain: tuple[Label, ...] | None = option(None, optional(check_value_domain))
    max_label_pairs: int = bound(DEFAULT_MAX_LABEL_PAIRS)
    max_annotator_pairs: int = bound(DEFAULT_MAX_ANNOTATOR_PAIRS)

    def validate(self, metric: str) -> None:
        if self.weights is not None and "cohen_kappa" not in self.coefficients:
            raise ValueError(f"{metric}: `weights` applies to Cohen's kappa only; add 'cohen_kappa' to "
                             f"`coefficients` (or leave `weights` out)")
