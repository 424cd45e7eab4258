"""SARI (Xu et al. 2016, TACL) from per-example statistics, in three variants chosen by ``variant``.

``"paper"`` (the default) is the authors' ``SARI.py`` (github.com/cocoxu/simplification, with the authors'
2017 correction of the add-recall guard), which reproduces the paper's worked example (0.2683, 0.5890,
0.5072 for its OUTPUT-1..3): per example and per n-gram order 1..4, F1 of added n-grams, F1 of kept
n-grams and precision of deleted n-grams, each averaged over the orders; SARI is their mean, and the
corpus score the mean over examples. ``"evaluate"`` is evaluate's ``sari`` module (tensor2tensor's
variant of the same code), which differs in two places: a ratio with a zero denominator is 1 instead of
0 (keep precision and recall, delete precision, add precision and recall), and keep recall is a ratio of
sums instead of a mean of per-n-gram ratios. ``"easse"`` is EASSE's ``corpus_sari`` with its defaults:
n-gram counts are summed over the whole corpus before any ratio is taken, deletion is scored by F1, and
keep/delete use ratios of sums and the paper's Eq. 6 for correct deletions.

Texts are normalised as evaluate's module normalises them (EASSE does the same): lowercased
(``lowercase``), then tokenized with sacreBLEU's 13a tokenizer (``tokenizer``: ``"13a"``, ``"intl"``, or
``"none"`` for the text as given). The ``paper`` and ``evaluate`` variants then split on single spaces, as
both reference implementations do (so an empty text is one empty token, and with ``"none"`` runs of
spaces give empty tokens); ``easse`` splits on whitespace.

The n-gram counts of each example's source and references are cached per process (bounded in bytes,
``core_process.clear_caches`` empties it), so scoring several systems on one test set, or evaluating
every epoch of a training run, counts them once; a call whose examples would not fit is not stored.

Statistics of one example: ``paper``/``evaluate``: its add, keep, delete and SARI values (0..1, exact
float sums) and 1 example; ``easse``: its 36 integer n-gram counts and 1 example. Corpus totals of either
give the corpus score exactly, so shards merge exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .core_inputs import SOURCED_TEXT_PAIRS
from .core_mt_tokenizers import TOKENIZERS_VERSION, get_tokenizer
from .core_options import MetricOptions, boolean, choice, option
from .core_process import MIB, bounded_cache
from .core_sari_counts import COUNTS_VERSION, OrderCounts, easse_count_names, easse_counts, easse_scores
from .core_sari_counts import order_counts, references_counts, sentence_scores
from .core_stats import StatField, StatsSchema

SARI_VARIANTS: tuple[str, ...] = ("paper", "evaluate", "easse")
SARI_TOKENIZERS: tuple[str, ...] = ("13a", "intl", "none")
SARI_OUTPUTS: tuple[str, ...] = ("sari", "sari_add", "sari_keep", "sari_del")

# Fields of the sentence-level variants, in row order: sums of per-example values (0..1), and examples.
_SENTENCE_FIELDS = ("add", "keep", "del", "sari")

# Bytes of examples' source and reference n-gram counts kept per process (an estimate: texts, dict slots,
# n-gram tuples).
SOURCE_REFERENCE_CACHE_BYTES = 128 * MIB


@dataclass(frozen=True)
class SariOptions(MetricOptions):
    """SARI's options: which arithmetic (``variant``) and how texts are normalised (all change the statistics)."""

    metric_name = "sari"

    variant: str = option("paper", choice(*SARI_VARIANTS), stats=True)
    lowercase: bool = option(True, boolean, stats=True)
    tokenizer: str = option("13a", choice(*SARI_TOKENIZERS), stats=True)


def sari_schema(metric_name: str = "sari", options: SariOptions | None = None) -> StatsSchema:
    """The per-example statistics of ``options.variant``: ``paper``/``evaluate``: ``add``, ``keep``, ``del``,
    ``sari`` (exact float sums of per-example values in 0..1) and ``examples``; ``easse``: the 36 n-gram
    counts ``{add,keep,del}_{correct,sys,ref}_{1..4}`` and ``examples``."""
    options = options or SariOptions()
    if options.variant == "easse":
        fields = tuple(StatField(name) for name in easse_count_names())
    else:
        fields = tuple(StatField(name, "fsum") for name in _SENTENCE_FIELDS)
    return StatsSchema(metric_name, (*fields, StatField("examples")))


def sari_tokenizer(options: SariOptions) -> Callable[[str], list[str]]:
    """The function from a text to the tokens SARI's n-grams are made of: lowercased (``lowercase``), tokenized
    (``tokenizer``), then split on single spaces (``paper``, ``evaluate``: an empty text is ``[""]``) or on
    whitespace (``easse``). Tokenizations are not cached: the counts made from them are."""
    lowercase = options.lowercase
    easse = options.variant == "easse"
    if options.tokenizer == "none":
        if easse:
            return (lambda text: text.lower().split()) if lowercase else str.split
        return (lambda text: text.lower().split(" ")) if lowercase else (lambda text: text.split(" "))
    tokenize = get_tokenizer(options.tokenizer).tokenize
    tokenize = getattr(tokenize, "__wrapped__", tokenize)

    def tokens_of(text: str) -> list[str]:
        tokens = tokenize(text.lower() if lowercase else text)
        return tokens if tokens or easse else [""]

    return tokens_of


def sari_tokenize(text: str, options: SariOptions) -> list[str]:
    """The tokens of one text (see :func:`sari_tokenizer`)."""
    return sari_tokenizer(options)(text)


# Estimated bytes of cached counts per character of source and reference text (about 4 n-grams per token,
# 150 bytes per counted n-gram, 5.5 characters per token), and per example.
_BYTES_PER_CHARACTER = 110
_BYTES_PER_EXAMPLE = 600


def _counts_size(key: tuple[Any, str, tuple[str, ...]], value: tuple[OrderCounts, OrderCounts]) -> int:
    entries = sum(map(len, value[0])) + sum(map(len, value[1]))
    return 2 * (len(key[1]) + sum(map(len, key[2]))) + _BYTES_PER_EXAMPLE + 150 * entries


# The n-gram counts of an example's source and references, keyed by how texts are tokenized and the texts:
# scoring several systems, or every evaluation of a training run, on the same test set counts them once.
_SOURCE_REFERENCE_COUNTS = bounded_cache(__file__, "simplification.sari_source_reference_counts",
                                         SOURCE_REFERENCE_CACHE_BYTES, _counts_size)


def _fits_in_cache(sources: Sequence[str], references: Sequence[Sequence[str]]) -> bool:
    """Whether the counts of these examples would fit in the cache. When they would not, storing them only
    evicts entries a later call could use and costs time (every cached n-gram is memory the process keeps
    and the garbage collector visits), so a corpus larger than the cache is scored without storing."""
    characters = sum(map(len, sources)) + sum(sum(map(len, example)) for example in references)
    estimate = _BYTES_PER_CHARACTER * characters + _BYTES_PER_EXAMPLE * len(sources)
    return estimate <= _SOURCE_REFERENCE_COUNTS.max_bytes


def _example_row(source: str, prediction: str, references: Sequence[str], options: SariOptions,
                 tokenize: Callable[[str], list[str]], tokenization: tuple[Any, ...], store: bool) -> tuple:
    key = (tokenization, source, tuple(references))
    entry = _SOURCE_REFERENCE_COUNTS._entries.get(key)
    if entry is not None:
        source_counts, reference_counts = entry[0]
    else:
        source_counts = order_counts(tokenize(source))
        reference_counts = references_counts([tokenize(reference) for reference in references])
        if store:
            _SOURCE_REFERENCE_COUNTS.store(key, (source_counts, reference_counts))
    prediction_counts = order_counts(tokenize(prediction))
    if options.variant == "easse":
        return (*easse_counts(source_counts, prediction_counts, reference_counts, len(references)), 1)
    scores = sentence_scores(source_counts, prediction_counts, reference_counts, len(references),
                             evaluate=options.variant == "evaluate")
    return (*scores, 1)


def sari_rows(sources: Sequence[str], predictions: Sequence[str], references: Sequence[Sequence[str]],
              options: SariOptions | None = None, *, validate: bool = True) -> list[tuple]:
    """One row of statistics per example, in the order of :func:`sari_schema`.

    ``references`` holds one list of reference strings per example (or one string); ``None`` entries in a
    list mark missing references and are dropped, so an example's number of references is that of its
    strings. With ``validate`` (the default) the inputs are checked first: a ``TypeError``/``ValueError``
    names the argument and, for one bad example, its index (skip only for inputs already checked by
    ``core_inputs.SOURCED_TEXT_PAIRS``).
    """
    options = options or SariOptions()
    if validate:
        columns = SOURCED_TEXT_PAIRS.check(
            options.metric_name, {"sources": sources, "predictions": predictions, "references": references}
        )
        sources, predictions, references = columns["sources"], columns["predictions"], columns["references"]
    tokenization = (COUNTS_VERSION, TOKENIZERS_VERSION, options.lowercase, options.tokenizer,
                    options.variant == "easse")
    store = _fits_in_cache(sources, references)
    tokenize = sari_tokenizer(options)
    return [_example_row(source, prediction, example_references, options, tokenize, tokenization, store)
            for source, prediction, example_references in zip(sources, predictions, references, strict=True)]


def sari_from_totals(totals: Mapping[str, Any], options: SariOptions | None = None) -> dict[str, float]:
    """``sari`` (0..100) and its components ``sari_add`` (F1 of additions), ``sari_keep`` (F1 of kept
    n-grams) and ``sari_del`` (precision of deletions; EASSE: F1) from corpus totals.

    ``paper``/``evaluate``: means over the examples of the per-example values, times 100 (evaluate's
    ``sari``). ``easse``: EASSE's ``corpus_sari`` and ``get_corpus_sari_operation_scores`` of the summed
    counts."""
    options = options or SariOptions()
    examples = totals["examples"]
    if not examples:
        raise ValueError(f"{options.metric_name}: no examples to score; the score of an empty corpus is undefined")
    if options.variant == "easse":
        add, keep, delete, sari = easse_scores([totals[name] for name in easse_count_names()])
        return {"sari": sari, "sari_add": add, "sari_keep": keep, "sari_del": delete}
    means = {name: 100 * (totals[name] / examples) for name in _SENTENCE_FIELDS}
    return {"sari": means["sari"], "sari_add": means["add"], "sari_keep": means["keep"], "sari_del": means["del"]}


def sari_row_scores(row: Sequence[Any], options: SariOptions | None = None) -> dict[str, float]:
    """The scores of one example (0..100, the keys of :func:`sari_from_totals`) from its row of statistics:
    its sentence-level SARI; for ``easse``, EASSE's ``corpus_sari`` of that example alone."""
    options = options or SariOptions()
    schema = sari_schema(options.metric_name, options)
    values = schema.named(row)
    if options.variant == "easse":
        return sari_from_totals(values, options)
    return {output: 100 * values[field] for output, field in zip(SARI_OUTPUTS, ("sari", *_SENTENCE_FIELDS[:3]))}


def sari_example(source: str, prediction: str, references: Sequence[str] | str,
                 options: SariOptions | None = None) -> dict[str, float]:
    """The scores of one example (see :func:`sari_row_scores`); inputs are checked as by :func:`sari_rows`."""
    options = options or SariOptions()
    (row,) = sari_rows([source], [prediction], [references], options)
    return sari_row_scores(row, options)


def sari_score(sources: Sequence[str], predictions: Sequence[str], references: Sequence[Sequence[str]],
               options: SariOptions | None = None) -> dict[str, float]:
    """The corpus scores in one call: :func:`sari_from_totals` of the totals of :func:`sari_rows`."""
    options = options or SariOptions()
    schema = sari_schema(options.metric_name, options)
    rows = sari_rows(sources, predictions, references, options)
    return sari_from_totals(schema.totals_of_rows(rows, options.stats_signature()), options)

