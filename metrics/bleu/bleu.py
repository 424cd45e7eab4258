"""BLEU: a drop-in for evaluate's `bleu` module, offline, with sufficient statistics."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import evaluate

from .core_checks import check_bool, check_int, check_text_pairs
from .core_inputs import CheckedTextPairs, text_pair_features
# core_inputs needs core_trainer; importing it here makes evaluate's loader copy it.
from .core_trainer import TrainerTextMetrics
from .core_mt_tokenizers import tokenize_13a
# core_bleu needs core_ngrams; importing it here makes evaluate's loader copy it.
from .core_ngrams import ngram_counts
from .core_stats import StatsSchema
from .core_streaming import StatsPlan, StreamedStatsCompute
from .core_bleu import BleuOptions, bleu_from_totals, bleu_rows, bleu_schema

_CITATION = """\
@inproceedings{papineni-etal-2002-bleu,
    title = "{B}leu: a Method for Automatic Evaluation of Machine Translation",
    author = "Papineni, Kishore and Roukos, Salim and Ward, Todd and Zhu, Wei-Jing",
    booktitle = "Proceedings of the 40th Annual Meeting of the Association for Computational Linguistics",
    year = "2002",
    pages = "311--318",
    url = "https://aclanthology.org/P02-1040",
}
@inproceedings{lin-och-2004-orange,
    title = "{ORANGE}: a Method for Evaluating Automatic Evaluation Metrics for Machine Translation",
    author = "Lin, Chin-Yew and Och, Franz Josef",
    booktitle = "{COLING} 2004",
    year = "2004",
    pages = "501--507",
    url = "https://aclanthology.org/C04-1072",
}
"""

_DESCRIPTION = """\
BLEU (Bilingual Evaluation Understudy) scores machine-translated text by the clipped n-gram precision of
the predictions against one or more references, combined over n = 1..max_order by a geometric mean and
multiplied by a brevity penalty. The corpus score is computed from statistics summed over all examples
(micro-average), not as a mean of sentence scores.

Same interface and, for single references, the same numbers as evaluate's `bleu`. With several references
the brevity penalty uses the reference length closest to each prediction, as BLEU's definition and sacreBLEU
do (evaluate's module uses the shortest); `evaluate_compatible=True` reproduces evaluate's numbers exactly.
"""

_KWARGS_DESCRIPTION = """
Computes BLEU of predictions against one or more references each.
Args:
    predictions (`list` of `str`): the translations to score.
    references (`list` of `str`, or `list` of `list` of `str`): one reference, or a list of references
        (any number, ragged; `None` entries are ignored), per prediction.
    tokenizer (callable `str -> list of str`): tokenization of predictions and references; defaults to
        mteval-v13a (`13a`), the WMT standard.
    max_order (`int`): maximum n-gram order, default 4.
    smooth (`bool`): add one to matches and totals of the orders n > 1 (Lin & Och 2004); default False.
    evaluate_compatible (`bool`): reproduce evaluate's `bleu` exactly: shortest reference length and add-one
        smoothing of every order including unigrams. Default False.
Returns:
    bleu (`float`): BLEU, 0 to 1.
    precisions (`list` of `float`): clipped n-gram precision per order.
    brevity_penalty (`float`): brevity penalty.
    length_ratio (`float`): translation length / reference length.
    translation_length (`int`): number of prediction tokens.
    reference_length (`int`): number of reference tokens (closest reference per prediction).
Examples:

    >>> import evaluate
    >>> bleu = evaluate.load("./metrics/bleu")
    >>> predictions = ["hello there general kenobi", "foo bar foobar"]
    >>> references = [["hello there general kenobi", "hello there!"], ["foo bar foobar"]]
    >>> results = bleu.compute(predictions=predictions, references=references)
    >>> print(results["bleu"])
    1.0

    With several references of different lengths, the closest one sets the brevity penalty:

    >>> results = bleu.compute(predictions=["the cat sat"], references=[["the cat sat", "the cat sat on the mat"]])
    >>> print(results["brevity_penalty"], results["reference_length"])
    1.0 3
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Bleu(CheckedTextPairs, StreamedStatsCompute, evaluate.Metric):
    """BLEU, evaluate-compatible; `compute` reduces the `add_batch` cache one batch at a time."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=text_pair_features(),
            codebase_urls=["https://github.com/tensorflow/nmt/blob/master/nmt/scripts/bleu.py"],
            reference_urls=["https://en.wikipedia.org/wiki/BLEU", "https://aclanthology.org/P02-1040"],
        )

    def _options(
        self, tokenizer: Callable[[str], Sequence[str]], max_order: int, smooth: bool, evaluate_compatible: bool
    ) -> BleuOptions:
        if not callable(tokenizer):
            raise TypeError(
                f"{self.name}: `tokenizer` must be a callable from a string to a list of tokens, "
                f"got {type(tokenizer).__name__}"
            )
        return BleuOptions(
            tokenizer=tokenizer,
            max_order=check_int(self.name, "max_order", max_order, minimum=1),
            smooth=check_bool(self.name, "smooth", smooth),
            evaluate_compatible=check_bool(self.name, "evaluate_compatible", evaluate_compatible),
        )

    def _schema(self, options: BleuOptions) -> StatsSchema:
        return bleu_schema(self.name, options.max_order)

    def _compute(
        self,
        predictions: list[str],
        references: list[list[str]],
        tokenizer: Callable[[str], Sequence[str]] = tokenize_13a,
        max_order: int = 4,
        smooth: bool = False,
        evaluate_compatible: bool = False,
    ) -> dict[str, Any]:
        options = self._options(tokenizer, max_order, smooth, evaluate_compatible)
        rows = bleu_rows(predictions, references, options)
        totals = self._schema(options).totals_of_rows(rows, options.stats_signature())
        return bleu_from_totals(totals, options)

    def _stats_plan(self, options: dict[str, Any]) -> StatsPlan:
        bleu_options = self._options(
            options["tokenizer"], options["max_order"], options["smooth"], options["evaluate_compatible"]
        )
        return StatsPlan(
            self._schema(bleu_options),
            bleu_options.stats_signature(),
            partial(bleu_rows, options=bleu_options),
            partial(bleu_from_totals, options=bleu_options),
        )

    def example_stats(
        self,
        predictions: list[str],
        references: list[Any],
        *,
        tokenizer: Callable[[str], Sequence[str]] = tokenize_13a,
        max_order: int = 4,
        evaluate_compatible: bool = False,
    ) -> dict[str, list[Any]]:
        """Per-example sufficient statistics as columns (for `datasets.Dataset.map(batched=True)`).

        Summed with :meth:`compute_from_stats`, they give exactly the corpus score of `compute`.
        """
        options = self._options(tokenizer, max_order, False, evaluate_compatible)
        predictions, references = check_text_pairs(self.name, predictions, references)
        rows = bleu_rows(predictions, references, options)
        return self._schema(options).columns(rows, options.stats_signature())

    def reduce_stats(self, stats: Any, *, max_order: int = 4) -> dict[str, Any]:
        """Totals of per-example statistics (one record of sums), e.g. one shard's; merge shards by passing a
        list of totals to :meth:`compute_from_stats`."""
        schema = bleu_schema(self.name, check_int(self.name, "max_order", max_order, minimum=1))
        return schema.totals(stats)

    def compute_from_stats(
        self,
        stats: Any,
        *,
        tokenizer: Callable[[str], Sequence[str]] = tokenize_13a,
        max_order: int = 4,
        smooth: bool = False,
        evaluate_compatible: bool = False,
    ) -> dict[str, Any]:
        """Corpus BLEU from per-example statistics (columns, records, a Dataset) or merged shard totals."""
        options = self._options(tokenizer, max_order, smooth, evaluate_compatible)
        totals = self._schema(options).totals(stats, expected_signature=options.stats_signature())
        return bleu_from_totals(totals, options)
