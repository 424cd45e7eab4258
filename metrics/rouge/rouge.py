"""ROUGE: a drop-in for evaluate's `rouge` module, offline, with rouge-score's per-example numbers and extras."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import evaluate

from .core_checks import check_bool, check_bootstrap, check_choice, check_int, check_text_pairs
from .core_inputs import CheckedTextPairs, text_pair_features
# core_inputs needs core_trainer; importing it here makes evaluate's loader copy it.
from .core_trainer import TrainerTextMetrics
from .core_stats import StatsSchema
from .core_streaming import StatsPlan, StreamedStatsCompute
from .core_ngrams import ngram_counts
from .core_lcs import lcs_length
from .core_resample import DEFAULT_SEED, as_stats_matrix, bootstrap_interval
from .core_rouge_tokenize import TOKENIZER_NAMES, RougeTokenizer, make_tokenizer
from .core_sentence_split import split_sentences
from .core_rouge import DEFAULT_ROUGE_TYPES, MULTI_REF_MODES, VALID_ROUGE_TYPES, RougeOptions, parse_rouge_type
from .core_rouge import rouge_from_totals, rouge_rows, rouge_schema

_CITATION = """\
@inproceedings{lin-2004-rouge,
    title = "{ROUGE}: A Package for Automatic Evaluation of Summaries",
    author = "Lin, Chin-Yew",
    booktitle = "Text Summarization Branches Out",
    month = jul,
    year = "2004",
    address = "Barcelona, Spain",
    publisher = "Association for Computational Linguistics",
    url = "https://www.aclweb.org/anthology/W04-1013",
    pages = "74--81",
}
"""

_DESCRIPTION = """\
ROUGE (Recall-Oriented Understudy for Gisting Evaluation) compares a predicted summary with one or more
references by overlapping n-grams (ROUGE-N), longest common subsequence (ROUGE-L, and its summary-level,
sentence-union form ROUGE-Lsum) and skip-bigrams (ROUGE-S, ROUGE-SU).

Same interface and the same per-example numbers as evaluate's `rouge`, which wraps Google's rouge-score, computed
offline and several times faster (bit-parallel LCS, cached stemming). The corpus score is the mean of the
per-example scores (macro-average), deterministic; evaluate's module reports the median of 1,000 unseeded
bootstrap means instead, which differs slightly from run to run. Extras: precision and recall, any rougeN
(N = 1..9), ROUGE-S/SU with a maximum skip distance, a pooled multi-reference mode (Lin 2004), seeded bootstrap
confidence intervals, rule-based sentence splitting for ROUGE-Lsum, a Unicode-aware tokenizer and per-example
sufficient statistics for exact sharded scoring.
"""

_KWARGS_DESCRIPTION = """
Computes ROUGE of predictions against one or more references each.
Args:
    predictions (`list` of `str`): the summaries to score.
    references (`list` of `str`, or `list` of `list` of `str`): one reference, or a list of references (any
        number, ragged; `None` entries are ignored), per prediction.
    rouge_types (`list` of `str`): the types to compute, default ['rouge1', 'rouge2', 'rougeL', 'rougeLsum'].
        Valid: 'rouge1' .. 'rouge9' (n-gram overlap), 'rougeL' (longest common subsequence), 'rougeLsum'
        (summary-level union LCS over sentences, which are the lines of the text), 'rougeS' / 'rougeSU'
        (skip-bigrams, SU adds unigrams) and 'rougeS<d>' / 'rougeSU<d>' with at most d words skipped, e.g.
        'rougeSU4'.
    use_aggregator (`bool`): return the corpus score (mean over examples) if True (default), else one score
        per example in a list.
    use_stemmer (`bool`): Porter-stem tokens longer than 3 characters, as rouge-score does. Default False.
    tokenizer: None or 'rouge_score' (default: rouge-score's tokenizer, lowercase `[a-z0-9]` words only),
        'unicode' (words of any script, one token per Chinese/Japanese/Thai character), or a callable from a
        string to a list of tokens (as in evaluate's module; the stemmer is then not applied).
    return_precision_recall (`bool`): also return `<type>_precision` and `<type>_recall`. Default False.
    multi_ref (`str`): with several references, 'best' (default: the reference with the highest F-measure
        per type, rouge-score's `score_multi`) or 'pooled' (Lin 2004: hits and counts summed over references).
    split_summaries (`bool`): for rougeLsum, also split lines into sentences with a rule-based splitter
        (nothing downloaded). Default False: sentences are the lines, as in rouge-score.
    confidence (`bool`): add `<type>_low` and `<type>_high`, a seeded bootstrap confidence interval of the
        mean F-measure. Default False.
    n_bootstrap (`int`): bootstrap resamples, default 1000.
    confidence_level (`float`): default 0.95.
    seed (`int` or None): bootstrap seed, default 12345 (None: not reproducible).
Returns:
    <type> (`float`, or `list` of `float` when use_aggregator=False): F-measure per requested type, 0 to 1.
    <type>_precision, <type>_recall: with return_precision_recall=True.
    <type>_low, <type>_high: with confidence=True.
Examples:

    >>> import evaluate
    >>> rouge = evaluate.load("./metrics/rouge")
    >>> predictions = ["hello there", "general kenobi"]
    >>> references = ["hello there", "general kenobi"]
    >>> results = rouge.compute(predictions=predictions, references=references)
    >>> print(results)
    {'rouge1': 1.0, 'rouge2': 1.0, 'rougeL': 1.0, 'rougeLsum': 1.0}

    Per-example scores, with precision and recall:

    >>> results = rouge.compute(predictions=["the cat sat on the mat"], references=["the cat lay on the mat"],
    ...                         rouge_types=["rouge1", "rouge2"], use_aggregator=False, return_precision_recall=True)
    >>> print(results["rouge1"], results["rouge2_precision"], results["rouge2_recall"])
    [0.8333333333333334] [0.6] [0.6]

    Pooled multiple references (Lin 2004): 12 of the 17 reference unigrams are matched:

    >>> results = rouge.compute(predictions=["The quick brown fox jumps over the lazy dog"],
    ...                         references=[["A fast brown dog jumps over a sleeping fox",
    ...                                      "A quick brown dog jumps over the fox"]],
    ...                         rouge_types=["rouge1", "rouge2"], multi_ref="pooled", return_precision_recall=True)
    >>> print(round(results["rouge1_recall"] * 17, 6), round(results["rouge2_recall"] * 15, 6))
    12.0 4.0

    Non-Latin text scores 0 with rouge-score's tokenizer; the Unicode tokenizer keeps it:

    >>> rouge.compute(predictions=["Привет мир"], references=["привет мир"], rouge_types=["rouge1"])
    {'rouge1': 0.0}
    >>> rouge.compute(predictions=["Привет мир"], references=["привет мир"], rouge_types=["rouge1"],
    ...               tokenizer="unicode")
    {'rouge1': 1.0}
"""


class _SentenceBreaks:
    """ROUGE-Lsum on text without newlines is ROUGE-L: warns, after the last batch, when no prediction or
    reference contains a newline but some text has several sentences."""

    def __init__(self, metric: str, options: RougeOptions) -> None:
        self.metric = metric
        self.active = "rougeLsum" in options.rouge_types and not options.split_summaries
        self.newline = False
        self.several_sentences = False

    def see(self, predictions: Sequence[str], references: Sequence[Sequence[str]]) -> None:
        if not self.active or self.newline:
            return
        texts = [*predictions, *(reference for group in references for reference in group)]
        if any("\n" in text for text in texts):
            self.newline = True
        elif not self.several_sentences:
            self.several_sentences = any(len(split_sentences(text)) > 1 for text in texts)

    def close(self) -> None:
        if self.active and not self.newline and self.several_sentences:
            warnings.warn(
                f"{self.metric}: rougeLsum splits sentences at newlines, and no prediction or reference contains "
                f"one, so rougeLsum equals rougeL here; put each sentence on its own line or pass "
                f"split_summaries=True to split sentences with the built-in rule-based splitter",
                stacklevel=6,  # the caller of `compute`
            )


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Rouge(CheckedTextPairs, StreamedStatsCompute, evaluate.Metric):
    """ROUGE, evaluate-compatible; `compute` reduces the `add_batch` cache one batch at a time (the bootstrap
    confidence interval reads every example at once)."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=text_pair_features(),
            codebase_urls=["https://github.com/google-research/google-research/tree/master/rouge"],
            reference_urls=[
                "https://en.wikipedia.org/wiki/ROUGE_(metric)",
                "https://aclanthology.org/W04-1013",
            ],
        )

    def _rouge_types(self, rouge_types: Any) -> tuple[str, ...]:
        if rouge_types is None:
            return DEFAULT_ROUGE_TYPES
        if isinstance(rouge_types, str) or not isinstance(rouge_types, (list, tuple)):
            raise TypeError(
                f"{self.name}: `rouge_types` must be a list of strings such as ['rouge1', 'rougeL'], "
                f"got {type(rouge_types).__name__} ({rouge_types!r:.60})"
            )
        if not rouge_types:
            raise ValueError(f"{self.name}: `rouge_types` is empty; valid types are {VALID_ROUGE_TYPES}")
        for index, name in enumerate(rouge_types):
            if not isinstance(name, str) or parse_rouge_type(name) is None:
                raise ValueError(
                    f"{self.name}: unknown rouge type {name!r} at `rouge_types[{index}]`; "
                    f"valid types are {VALID_ROUGE_TYPES}"
                )
        return tuple(dict.fromkeys(rouge_types))

    def _tokenizer(self, tokenizer: Any, use_stemmer: bool) -> RougeTokenizer:
        if isinstance(tokenizer, str):
            check_choice(self.name, "tokenizer", tokenizer, TOKENIZER_NAMES)
        elif tokenizer is not None and not callable(getattr(tokenizer, "tokenize", tokenizer)):
            raise TypeError(
                f"{self.name}: `tokenizer` must be None, one of {TOKENIZER_NAMES}, a callable from a string to "
                f"a list of tokens or an object with a `tokenize` method; got {type(tokenizer).__name__}"
            )
        elif tokenizer is not None and use_stemmer:
            warnings.warn(
                f"{self.name}: `use_stemmer` is ignored with a custom `tokenizer` (as in rouge-score); "
                f"stem inside your tokenizer",
                stacklevel=3,
            )
        return make_tokenizer(tokenizer, use_stemmer)

    def _options(
        self, rouge_types: Any, use_stemmer: bool, tokenizer: Any, multi_ref: str, split_summaries: bool
    ) -> RougeOptions:
        return RougeOptions(
            rouge_types=self._rouge_types(rouge_types),
            tokenizer=self._tokenizer(tokenizer, check_bool(self.name, "use_stemmer", use_stemmer)),
            multi_ref=check_choice(self.name, "multi_ref", multi_ref, MULTI_REF_MODES),
            split_summaries=check_bool(self.name, "split_summaries", split_summaries),
        )

    def _compute(
        self,
        predictions: list[str],
        references: list[list[str]],
        rouge_types: list[str] | None = None,
        use_aggregator: bool = True,
        use_stemmer: bool = False,
        tokenizer: str | Callable[[str], Sequence[str]] | None = None,
        return_precision_recall: bool = False,
        multi_ref: str = "best",
        split_summaries: bool = False,
        confidence: bool = False,
        n_bootstrap: int = 1000,
        confidence_level: float = 0.95,
        seed: int | None = DEFAULT_SEED,
    ) -> dict[str, Any]:
        options = self._options(rouge_types, use_stemmer, tokenizer, multi_ref, split_summaries)
        use_aggregator = check_bool(self.name, "use_aggregator", use_aggregator)
        return_precision_recall = check_bool(self.name, "return_precision_recall", return_precision_recall)
        if check_bool(self.name, "confidence", confidence) and not use_aggregator:
            raise ValueError(f"{self.name}: `confidence=True` needs `use_aggregator=True` (an interval of the mean)")
        breaks = _SentenceBreaks(self.name, options)
        breaks.see(predictions, references)
        breaks.close()
        rows = rouge_rows(predictions, references, options)
        names = options.rouge_types
        if not use_aggregator:
            return self._per_example(rows, names, return_precision_recall)
        totals = rouge_schema(self.name, names).totals_of_rows(rows, options.stats_signature())
        result = self._shape(rouge_from_totals(totals, names), names, return_precision_recall)
        if confidence:
            result.update(self._confidence(rows, names, n_bootstrap, confidence_level, seed))
        return result

    def _stats_plan(self, options: dict[str, Any]) -> StatsPlan | None:
        if options["confidence"] is not False:
            return None  # the bootstrap resamples every example's statistics at once: evaluate's path
        rouge_options = self._options(
            options["rouge_types"],
            options["use_stemmer"],
            options["tokenizer"],
            options["multi_ref"],
            options["split_summaries"],
        )
        use_aggregator = check_bool(self.name, "use_aggregator", options["use_aggregator"])
        return_precision_recall = check_bool(
            self.name, "return_precision_recall", options["return_precision_recall"]
        )
        names = rouge_options.rouge_types

        def score(totals: dict[str, Any]) -> dict[str, Any]:
            return self._shape(rouge_from_totals(totals, names), names, return_precision_recall)

        def per_example(rows: Sequence[Sequence[Any]]) -> dict[str, list[Any]]:
            return self._per_example(rows, names, return_precision_recall)

        return StatsPlan(
            rouge_schema(self.name, names),
            rouge_options.stats_signature(),
            partial(rouge_rows, options=rouge_options),
            score if use_aggregator else None,
            per_example=None if use_aggregator else per_example,
            watchers=(_SentenceBreaks(self.name, rouge_options),),
        )

    @staticmethod
    def _shape(means: dict[str, float], names: Sequence[str], return_precision_recall: bool) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for name in names:
            result[name] = means[f"{name}_fmeasure"]
        if return_precision_recall:
            for name in names:
                result[f"{name}_precision"] = means[f"{name}_precision"]
                result[f"{name}_recall"] = means[f"{name}_recall"]
        return result

    @staticmethod
    def _per_example(
        rows: Sequence[Sequence[Any]], names: Sequence[str], return_precision_recall: bool
    ) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for position, name in enumerate(names):
            result[name] = [row[3 * position + 2] for row in rows]
        if return_precision_recall:
            for position, name in enumerate(names):
                result[f"{name}_precision"] = [row[3 * position] for row in rows]
                result[f"{name}_recall"] = [row[3 * position + 1] for row in rows]
        return result

    def _confidence(
        self, rows: list[list[Any]], names: Sequence[str], n_bootstrap: int, confidence_level: float, seed: Any
    ) -> dict[str, float]:
        check_bootstrap(self.name, n_bootstrap, confidence_level)
        if seed is not None:
            check_int(self.name, "seed", seed, minimum=0)
        matrix = as_stats_matrix([[float(value) for value in row] for row in rows])
        result = {}
        for position, name in enumerate(names):
            column = 3 * position + 2

            def mean_f(totals: Any, column: int = column) -> float:
                return float(totals[column] / totals[-1])

            interval = bootstrap_interval(matrix, mean_f, n_samples=n_bootstrap, seed=seed, level=confidence_level)
            result[f"{name}_low"] = interval.low
            result[f"{name}_high"] = interval.high
        return result

    def example_stats(
        self,
        predictions: list[str],
        references: list[Any],
        *,
        rouge_types: list[str] | None = None,
        use_stemmer: bool = False,
        tokenizer: str | Callable[[str], Sequence[str]] | None = None,
        multi_ref: str = "best",
        split_summaries: bool = False,
    ) -> dict[str, list[Any]]:
        """Per-example sufficient statistics as columns (for `datasets.Dataset.map(batched=True)`).

        Reduced with :meth:`compute_from_stats`, they give exactly the aggregated result of `compute`.
        """
        options = self._options(rouge_types, use_stemmer, tokenizer, multi_ref, split_summaries)
        predictions, references = check_text_pairs(self.name, predictions, references)
        rows = rouge_rows(predictions, references, options)
        return rouge_schema(self.name, options.rouge_types).columns(rows, options.stats_signature())

    def reduce_stats(self, stats: Any, *, rouge_types: list[str] | None = None) -> dict[str, Any]:
        """Totals of per-example statistics (one record, float sums kept exact), e.g. one shard's; merge
        shards by passing a list of totals to :meth:`compute_from_stats`."""
        return rouge_schema(self.name, self._rouge_types(rouge_types)).totals(stats)

    def compute_from_stats(
        self,
        stats: Any,
        *,
        rouge_types: list[str] | None = None,
        use_stemmer: bool = False,
        tokenizer: str | Callable[[str], Sequence[str]] | None = None,
        multi_ref: str = "best",
        split_summaries: bool = False,
        return_precision_recall: bool = False,
    ) -> dict[str, Any]:
        """Aggregated ROUGE from per-example statistics (columns, records, a Dataset) or merged shard totals."""
        options = self._options(rouge_types, use_stemmer, tokenizer, multi_ref, split_summaries)
        schema: StatsSchema = rouge_schema(self.name, options.rouge_types)
        totals = schema.totals(stats, expected_signature=options.stats_signature())
        means = rouge_from_totals(totals, options.rouge_types)
        return_precision_recall = check_bool(self.name, "return_precision_recall", return_precision_recall)
        return self._shape(means, options.rouge_types, return_precision_recall)
