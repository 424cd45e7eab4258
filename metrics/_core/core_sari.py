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

The examples of a call are scored together (``core_sari_batch``), about a million characters of text at a
time: their texts tokenized as one string, their n-grams counted with numpy sorts, each variant's arithmetic
done on whole arrays, the per-example values bit for bit those of the one-example code (``core_sari_counts``,
which scores calls of a few examples). No per-process cache: a first run is as fast as a repeated one.

Statistics of one example: ``paper``/``evaluate``: its add, keep, delete and SARI values (0..1, exact
float sums) and 1 example; ``easse``: its 36 integer n-gram counts and 1 example. Corpus totals of either
give the corpus score exactly, so shards merge exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .core_inputs import SOURCED_TEXT_PAIRS
from .core_mt_tokenizers import get_tokenizer
from .core_options import boolean, bound, choice, option
from .core_sari_batch import sari_batch_rows
from .core_sari_counts import easse_count_names, easse_scores
from .core_stats import StatField, StatsSchema
from .core_resources import TextBounds

SARI_VARIANTS: tuple[str, ...] = ("paper", "evaluate", "easse")
SARI_TOKENIZERS: tuple[str, ...] = ("13a", "intl", "none")
SARI_OUTPUTS: tuple[str, ...] = ("sari", "sari_add", "sari_keep", "sari_del")

# Fields of the sentence-level variants, in row order: sums of per-example values (0..1), and examples.
_SENTENCE_FIELDS = ("add", "keep", "del", "sari")
# The default of ``max_text_chars`` for SARI: a source, prediction and reference of 10^6 characters of one-character
# words take about 4 s and 0.5 GB (measured 2026-11-28 on the 2-core machine), so 5,000,000 is about 20 s and 3 GB.
DEFAULT_SARI_MAX_TEXT_CHARS = 5_000_000


@dataclass(frozen=True)
class SariOptions(TextBounds):
    """SARI's options: which arithmetic (``variant``) and how texts are normalised (all change the statistics)."""

    metric_name = "sari"

    variant: str = option("paper", choice(*SARI_VARIANTS), stats=True)
    lowercase: bool = option(True, boolean, stats=True)
    tokenizer: str = option("13a", choice(*SARI_TOKENIZERS), stats=True)
    max_text_chars: int = bound(DEFAULT_SARI_MAX_TEXT_CHARS)


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


def _raw_tokenizer(options: SariOptions) -> Callable[[str], list[str]]:
    """:func:`sari_tokenizer` without its empty-text rule (a tokenizer may give an empty text no tokens)."""
    lowercase = options.lowercase
    if options.tokenizer == "none":
        split = str.split if options.variant == "easse" else (lambda text: text.split(" "))
        return (lambda text: split(text.lower())) if lowercase else split
    tokenize = get_tokenizer(options.tokenizer).tokenize
    tokenize = getattr(tokenize, "__wrapped__", tokenize)
    return (lambda text: tokenize(text.lower())) if lowercase else tokenize


def sari_tokenizer(options: SariOptions) -> Callable[[str], list[str]]:
    """The function from a text to the tokens SARI's n-grams are made of: lowercased (``lowercase``), tokenized
    (``tokenizer``), then split on single spaces (``paper``, ``evaluate``: an empty text is ``[""]``) or on
    whitespace (``easse``). :func:`sari_rows` tokenizes many texts at once with the same result."""
    tokenize = _raw_tokenizer(options)
    if options.tokenizer == "none" or options.variant == "easse":  # split(" ") already gives "" its [""]
        return tokenize

    def tokens_of(text: str) -> list[str]:
        return tokenize(text) or [""]

    return tokens_of


def sari_tokenize(text: str, options: SariOptions) -> list[str]:
    """The tokens of one text (see :func:`sari_tokenizer`)."""
    return sari_tokenizer(options)(text)


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
    return sari_batch_rows(list(sources), list(predictions), list(references), variant=options.variant,
                           lowercase=options.lowercase, tokenizer=options.tokenizer,
                           tokenize=sari_tokenizer(options), raw_tokenize=_raw_tokenizer(options))


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

