"""Pearson's and Spearman's correlations on the statistics-metric base.

A metric script is ``class Pearsonr(CorrelationMetric, evaluate.Metric)``
declaring :attr:`about`, ``inputs = NUMBER_PAIRS`` and its options class. The
corpus is scored at once, in input order (scipy's arithmetic on scipy's
order); per-example statistics are the (reference, prediction) pairs, so
shards merge exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .core_correlation import SCORES, correlation_from_totals, correlation_rows, correlation_schema
from .core_inputs import Columns
from .core_metric import Batch, StatsMetric
from .core_stats import StatsSchema


SCIPY_CITATION = """\
@article{2020SciPy-NMeth,
  author  = {Virtanen, Pauli and Gommers, Ralf and Oliphant, Travis E. and Haberland, Matt and Reddy, Tyler and
             Cournapeau, David and Burovski, Evgeni and Peterson, Pearu and Weckesser, Warren and Bright, Jonathan
             and {van der Walt}, Stéfan J. and Brett, Matthew and Wilson, Joshua and Millman, K. Jarrod and
             Mayorov, Nikolay and Nelson, Andrew R. J. and Jones, Eric and Kern, Robert and Larson, Eric and
             Carey, C J and Polat, İlhan and Feng, Yu and Moore, Eric W. and {VanderPlas}, Jake and
             Laxalde, Denis and Perktold, Josef and Cimrman, Robert and Henriksen, Ian and Quintero, E. A. and
             Harris, Charles R. and Archibald, Anne M. and Ribeiro, Antônio H. and Pedregosa, Fabian and
             {van Mulbregt}, Paul and {SciPy 1.0 Contributors}},
  title   = {{SciPy} 1.0: Fundamental Algorithms for Scientific Computing in Python},
  journal = {Nature Methods},
  year    = {2020},
  volume  = {17},
  pages   = {261--272},
  doi     = {10.1038/s41592-019-0686-2},
}
"""


# The arguments both correlation modules document (the scripts' _KWARGS_DESCRIPTION starts with these).
NUMBER_ARGS = """
Args:
    predictions (`list` of `float`): predicted values.
    references (`list` of `float`): ground truth values, one per prediction.
    return_pvalue (`bool`): also return the p-value; default False.
    alternative (`str`): the alternative hypothesis of the p-value: "two-sided" (default), "less", "greater".
"""


class CorrelationMetric(StatsMetric):
    """pearsonr and spearmanr: the script declares ``about``, ``inputs`` and ``options_class``."""

    def needs_corpus(self, options: Any) -> bool:
        return True

    def score_corpus(self, columns: Columns, options: Any) -> dict[str, Any]:
        return SCORES[options.metric_name](columns["predictions"], columns["references"], options)

    def schema(self, options: Any) -> StatsSchema:
        return correlation_schema(self.name)

    def example_rows(self, batch: Batch, options: Any) -> list[tuple[Any, ...]]:
        return correlation_rows(batch["predictions"], batch["references"], self.name)

    def score(self, totals: Mapping[str, Any], options: Any) -> dict[str, Any]:
        return correlation_from_totals(totals, options)
