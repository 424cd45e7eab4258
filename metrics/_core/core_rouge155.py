"""ROUGE with ROUGE-1.5.5's numbers (the Perl script that papers report through pyrouge), without Perl.

Measures, as ROUGE-1.5.5.pl defines them (``rouge_types`` names; the script's option in brackets):

* ``rouge1`` .. ``rouge9``: n-gram co-occurrence (``-n``);
* ``rougeL``: summary-level LCS: for every reference sentence, the union of its LCS with each prediction
  sentence, each token counted at most as often as it occurs in both summaries (always computed unless ``-x``);
* ``rougeW``: the same with the weighted LCS of weight ``w_weight`` (``-w 1.2``); note that ROUGE-1.5.5 raises
  the reference's and prediction's totals to the power ``w_weight`` a second time, which is kept;
* ``rougeS<d>`` / ``rougeSU<d>``: skip-bigrams with at most ``d`` words between the two words, without a
  limit when ``d`` is left out (``-2 d``, ``-2 -1`` for ROUGE-S*); ``SU`` adds unigrams (``-u``/``-U``) but,
  as the script does, not the last word of a summary.

Per example ROUGE-1.5.5 rounds recall and precision to 5 decimals, computes the F-measure
``P*R / ((1-alpha)*P + alpha*R)`` from the rounded values and rounds it too. Those rounded numbers are the
per-example statistics here, as integers in units of 1e-5, so they sum exactly in any order and across
shards; :func:`rouge155_from_totals` gives their plain means. The averages the script prints are bootstrap
means (``core_rouge155_bootstrap``), which need the per-example rows.

Several references: ``scoring_formula="A"`` (``-f A``, the default) adds hits and totals over the
references, the prediction counted once per reference; ``"B"`` (``-f B``) keeps the reference with the
highest recall (rounded to 5 decimals for n-grams and skip-bigrams, unrounded for L and W), the first on ties.

ROUGE-1.5.5 stops with a division by zero when ROUGE-W meets a reference without a token; here that
reference gets ROUGE-W recall 0 (and a warning says so).

Resources: ROUGE-L and ROUGE-W align every reference sentence with every prediction sentence, quadratic in time
(``core_rouge_bounds.lcs_cells``); skip-bigrams at any distance are quadratic in a text's length. Before any
scoring, :func:`check_rouge155_resources` refuses an example whose alignment exceeds ``max_lcs_cells``, and
:func:`core_rouge155_counts.skip_bigram_hits` a text with more than ``max_skip_bigrams`` skip-bigrams, with a
``ValueError`` naming the example or text, the sizes, the bound and the remedies.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Literal

import numpy as np

from .core_checks import check_list, check_names, warn_caller
from .core_options import boolean, bound, choice, integer, number, option, optional
from .core_rouge155_bootstrap import bootstrap_averages
from .core_rouge155_counts import MAX_SKIP_PAIRS, ngram_hits, skip_bigram_hits, skip_pair_count, text_offsets
from .core_rouge155_data import exception_table, smart_stopwords
from .core_rouge155_lcs import mark_union, sentence_hits
from .core_rouge155_text import Rouge155Tokenizer
from .core_rouge_bounds import lcs_cells
from .core_stats import StatField, StatsSchema
from .core_resources import TextBounds, ResampleBounds

METRIC = "rouge155"
ROUGE155_VERSION = "1.5.5"
ScoringFormula = Literal["A", "B"]
SCORING_FORMULAS = ("A", "B")
DEFAULT_ROUGE155_TYPES = ("rouge1", "rouge2", "rougeL")
PYROUGE_ROUGE155_TYPES = ("rouge1", "rouge2", "rouge3", "rouge4", "rougeL", "rougeW", "rougeS", "rougeSU")
MEASURES = ("recall", "precision", "fmeasure")  # schema order, as ROUGE-1.5.5 prints R, P, F
OUTPUT_MEASURES = ("fmeasure", "precision", "recall")  # result order: F under the bare name first
COUNTS = ("hits", "reference_total", "prediction_total")
VALID_ROUGE155_TYPES = (
    "rouge1 .. rouge9, rougeL (summary-level, union LCS over the newline-separated sentences), rougeW, "
    "rougeS, rougeSU (no skip limit: ROUGE-S*, ROUGE-SU*), rougeS<d>, rougeSU<d> (e.g. rougeSU4)"
)

_ROUGE_N = re.compile(r"rouge([1-9])$")
_ROUGE_S = re.compile(r"rougeS(U?)([0-9]*)$")
_SCALE = 100000


@dataclass(frozen=True)
class Rouge155Type:
    """A parsed measure: ``kind`` is 'n', 'L', 'W' or 'S'; ``skip`` -1 for no skip limit."""

    name: str
    kind: str
    n: int = 0
    skip: int = -1
    unigrams: bool = False


def parse_rouge155_type(name: str) -> Rouge155Type | None:
    """The :class:`Rouge155Type` named ``name``, or None for an unknown name."""
    if name in ("rougeL", "rougeW"):
        return Rouge155Type(name, name[-1])
    match = _ROUGE_N.match(name)
    if match:
        return Rouge155Type(name, "n", n=int(match.group(1)))
    match = _ROUGE_S.match(name)
    if match:
        skip = int(match.group(2)) if match.group(2) else -1
        return Rouge155Type(name, "S", skip=skip, unigrams=bool(match.group(1)))
    return None


def _rouge_types(metric: str, name: str, value: Any) -> tuple[str, ...]:
    """A non-empty list of distinct measure names (None: the default ones)."""
    if value is None:
        return DEFAULT_ROUGE155_TYPES
    names = check_names(
        metric, name, value, known=lambda entry: entry == "rougeLsum" or parse_rouge155_type(entry) is not None,
        valid=VALID_ROUGE155_TYPES, example="['rouge1', 'rougeL']",
    )
    if "rougeLsum" in names:
        raise ValueError(
            f"{metric}: unknown `{name}[{names.index('rougeLsum')}]` 'rougeLsum': ROUGE-1.5.5's rougeL is already the "
            "summary-level LCS over the newline-separated sentences (what rouge-score calls rougeLsum); pass 'rougeL'"
        )
    if len(set(names)) != len(names):
        raise ValueError(f"{metric}: `{name}` lists a measure twice: {list(names)}")
    return names


def _eval_ids(metric: str, name: str, value: Any) -> tuple[str, ...]:
    """One distinct id (a string or an integer) per example, as strings."""
    ids = check_list(metric, name, value, what="example ids (strings or integers)")
    for index, entry in enumerate(ids):
        if isinstance(entry, bool) or not isinstance(entry, (str, int)):
            raise TypeError(
                f"{metric}: `{name}[{index}]` must be a string or an integer, got {type(entry).__name__} ({entry!r:.60})"
            )
        if isinstance(entry, str) and (not entry or any(character.isspace() for character in entry)):
            raise ValueError(f"{metric}: `{name}[{index}]` must be a non-empty id without spaces, got {entry!r:.60}")
    texts = tuple(str(entry) for entry in ids)
    if len(set(texts)) != len(texts):
        repeated = next(entry for entry in texts if texts.count(entry) > 1)
        raise ValueError(
            f"{metric}: `{name}` holds {repeated!r} twice; ROUGE-1.5.5 merges examples with the same id, "
            "pass one distinct id per example"
        )
    return texts


MAX_BOOTSTRAP = 100_000
# The cells of one (prediction, reference) pair's sentence alignments (core_rouge_bounds.lcs_cells) above which
# ROUGE-L/W is refused: about a minute on a 2-core machine (ROUGE-L aligns 0.7-0.9e9 cells a second).
DEFAULT_MAX_LCS_CELLS = 1 << 35


@dataclass(frozen=True)
class Rouge155Options(TextBounds, ResampleBounds):
    """The keyword options of the ``rouge155`` metric: ROUGE-1.5.5.pl's options (its flag in brackets) and
    evaluate's ``use_aggregator``.

    Defaults are pyrouge's command (``-c 95 -r 1000 -a``, ``-m`` on: pyrouge always adds it) with evaluate's
    default measures. ``confidence`` (``-c``), ``n_bootstrap`` (``-r``; 0: no resampling, plain means only) and
    ``eval_ids`` (the ``<EVAL ID>`` of each example, which orders the resampling) shape only the averages, not
    the per-example statistics. ``max_lcs_cells`` and ``max_skip_bigrams`` bound the quadratic measures of one
    example (see the module text), and ``max_resample_work`` the bootstrap's work (``n_bootstrap`` x examples);
    they never change a result, only refuse.
    """

    metric_name = METRIC

    rouge_types: tuple[str, ...] = option(DEFAULT_ROUGE155_TYPES, _rouge_types, stats=True)
    use_aggregator: bool = option(True, boolean)
    use_stemmer: bool = option(True, boolean, stats=True)
    remove_stopwords: bool = option(False, boolean, stats=True)
    length_limit: int | None = option(None, optional(integer(minimum=1)), stats=True)
    byte_limit: int | None = option(None, optional(integer(minimum=1)), stats=True)
    scoring_formula: ScoringFormula = option("A", choice(*SCORING_FORMULAS), stats=True)
    alpha: float = option(0.5, number(minimum=0, maximum=1), stats=True)
    w_weight: float = option(1.2, number(minimum=0, exclusive=True), stats=True)
    confidence: float = option(95, number(minimum=0, maximum=100))
    n_bootstrap: int = option(1000, integer(minimum=0, maximum=MAX_BOOTSTRAP))
    eval_ids: tuple[str, ...] | None = option(None, optional(_eval_ids))
    max_lcs_cells: int = bound(DEFAULT_MAX_LCS_CELLS)
    max_skip_bigrams: int = bound(MAX_SKIP_PAIRS)

    def validate(self, metric: str) -> None:
        if self.length_limit is not None and self.byte_limit is not None:
            raise ValueError(
                f"{metric}: give `length_limit` (words, -l) or `byte_limit` (bytes, -b), not both "
                "(ROUGE-1.5.5 refuses both)"
            )
        # The lexical data is located and checked now, before any input is read.
        if self.use_stemmer:
            exception_table()
        if self.remove_stopwords:
            smart_stopwords()

    @property
    def parsed(self) -> tuple[Rouge155Type, ...]:
        return tuple(parse_rouge155_type(name) for name in self.rouge_types)  # type: ignore[misc]

    @property
    def resampled(self) -> bool:
        """Whether the corpus result holds ROUGE-1.5.5's printed (bootstrap) averages."""
        return self.use_aggregator and self.n_bootstrap > 0

    def stats_signature(self) -> str:
        limit = (
            f"l{self.length_limit}" if self.length_limit is not None
            else f"b{self.byte_limit}" if self.byte_limit is not None else "none"
        )
        weight = f"|w:{self.w_weight!r}" if "rougeW" in self.rouge_types else ""
        return (
            f"rouge155|v:{ROUGE155_VERSION}|types:{','.join(self.rouge_types)}|stem:{'yes' if self.use_stemmer else 'no'}"
            f"|stop:{'removed' if self.remove_stopwords else 'kept'}|limit:{limit}|f:{self.scoring_formula}"
            f"|alpha:{self.alpha!r}{weight}"
        )


def rouge155_options(**given: Any) -> Rouge155Options:
    """Checked options from keyword arguments (errors name ``rouge155`` and the option)."""
    return Rouge155Options.resolve(METRIC, given)


def output_key(rouge_type: str, measure: str, suffix: str = "") -> str:
    """The result key of one measure: ``rouge1`` (F-measure), ``rouge1_precision``, ``rouge1_recall``, + suffix."""
    return f"{rouge_type}{suffix}" if measure == "fmeasure" else f"{rouge_type}_{measure}{suffix}"


def rouge155_schema(metric: str, options: Rouge155Options) -> StatsSchema:
    """Per type of ``options.rouge_types``: rounded recall, precision, F (``<type>_<measure>_e5``, units of 1e-5)
    and the counts; plus ``count``."""
    fields = []
    for name in options.rouge_types:
        fields.extend(StatField(f"{name}_{measure}_e5", "sum") for measure in MEASURES)
        reduction = "fsum" if name == "rougeW" else "sum"
        fields.extend(StatField(f"{name}_{count}", reduction) for count in COUNTS)
    fields.append(StatField("count", "sum"))
    return StatsSchema(metric, tuple(fields))


def rounded_e5(value: float) -> int:
    """``sprintf("%7.5f", value)`` read as an integer number of 1e-5."""
    return int(f"{value:.5f}".replace(".", ""))


def _prf_e5(
    hits: float, reference_total: float, prediction_total: float, alpha: float, weight: float | None
) -> tuple[int, int, int]:
    """Rounded recall, precision and F-measure (units of 1e-5) as ROUGE-1.5.5 derives them from the counts."""
    if weight is None:
        recall = rounded_e5(hits / reference_total) if reference_total != 0 else 0
        precision = rounded_e5(hits / prediction_total) if prediction_total != 0 else 0
    else:
        inverse = 1 / weight
        recall = rounded_e5((hits / reference_total) ** inverse) if reference_total != 0 else 0
        precision = rounded_e5((hits / prediction_total) ** inverse) if prediction_total != 0 else 0
    r, p = recall / _SCALE, precision / _SCALE
    denominator = (1 - alpha) * p + alpha * r
    fmeasure = rounded_e5((p * r) / denominator) if denominator > 0 else 0
    return recall, precision, fmeasure


class _Summary:
    """One text as token ids: what the n-gram measures count, and per sentence what ROUGE-L/W align."""

    __slots__ = ("tokens", "sentences")

    def __init__(self, tokens: list[int], sentences: list[list[int]]) -> None:
        self.tokens = tokens
        self.sentences = sentences


def _flat(sequences: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences))
    flat = np.fromiter(chain.from_iterable(sequences), dtype=np.int64, count=int(lengths.sum()))
    return flat, text_offsets(lengths)


def _recall_score(hits: int, model: int) -> float:
    """ROUGE-1.5.5's n-gram and skip-bigram recall for -f B: rounded to 5 decimals, 0 without reference grams."""
    return float(f"{hits / model:.5f}") if model else 0.0


class _Units:
    """The (prediction, reference) pairs of a chunk of examples, in example then reference order."""

    def __init__(self, summaries: list[tuple[_Summary, list[_Summary]]]) -> None:
        self.texts: list[_Summary] = [prediction for prediction, _ in summaries]
        peer_text, model_text = [], []
        for example, (_, group) in enumerate(summaries):
            for reference in group:
                peer_text.append(example)
                model_text.append(len(self.texts))
                self.texts.append(reference)
        self.peer_text = np.array(peer_text, dtype=np.int64)
        self.model_text = np.array(model_text, dtype=np.int64)
        self.peer_lengths = [len(self.texts[text].tokens) for text in peer_text]
        self.model_lengths = [len(self.texts[text].tokens) for text in model_text]


def _ngram_counts(units: _Units, types: Sequence[Rouge155Type], counts: dict) -> None:
    max_n = max((rouge_type.n for rouge_type in types if rouge_type.kind == "n"), default=0)
    if not max_n:
        return
    flat, starts = _flat([text.tokens for text in units.texts])
    hits = ngram_hits(flat, starts, units.peer_text, units.model_text, max_n).tolist()
    for rouge_type in types:
        if rouge_type.kind == "n":
            n = rouge_type.n
            per_unit = []
            for hit, model_length, peer_length in zip(hits[n - 1], units.model_lengths, units.peer_lengths, strict=True):
                model = max(model_length - n + 1, 0)
                per_unit.append((hit, model, max(peer_length - n + 1, 0), _recall_score(hit, model)))
            counts[rouge_type.name] = per_unit


def _skip_counts(units: _Units, types: Sequence[Rouge155Type], counts: dict, max_pairs: int) -> None:
    skip_types = [rouge_type for rouge_type in types if rouge_type.kind == "S"]
    if not skip_types:
        return
    flat, starts = _flat([text.tokens for text in units.texts])
    prefix_hits: list[int] = []
    if any(rouge_type.unigrams for rouge_type in skip_types):
        prefix_flat, prefix_starts = _flat([text.tokens[:-1] for text in units.texts])
        prefix_hits = ngram_hits(prefix_flat, prefix_starts, units.peer_text, units.model_text, 1)[0].tolist()
    pair_hits: dict[int, list[int]] = {}
    for rouge_type in skip_types:
        skip = rouge_type.skip
        if skip not in pair_hits:
            pair_hits[skip] = skip_bigram_hits(flat, starts, units.peer_text, units.model_text, skip,
                                               max_pairs=max_pairs).tolist()
        per_unit = []
        for unit, hit in enumerate(pair_hits[skip]):
            model_length, peer_length = units.model_lengths[unit], units.peer_lengths[unit]
            model, peer = skip_pair_count(model_length, skip), skip_pair_count(peer_length, skip)
            if rouge_type.unigrams:
                hit += prefix_hits[unit]
                model += max(model_length - 1, 0)
                peer += max(peer_length - 1, 0)
            per_unit.append((hit, model, peer, _recall_score(hit, model)))
        counts[rouge_type.name] = per_unit


# Sentence pairs aligned in one call of mark_union (its working arrays grow with them).
_PAIR_CHUNK = 1 << 18


def _sentence_pairs(units: _Units, first: np.ndarray, lengths: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(model sentences, peer sentences) of every pair of non-empty sentences of every unit, at most about
    ``_PAIR_CHUNK`` pairs at a time (marks are OR-ed per model token, so any grouping gives the same marks)."""
    models: list[np.ndarray] = []
    peers: list[np.ndarray] = []
    pending = 0
    for peer, model in zip(units.peer_text.tolist(), units.model_text.tolist(), strict=True):
        peer_sentences = first[peer] + np.flatnonzero(lengths[first[peer] : first[peer + 1]])
        model_sentences = first[model] + np.flatnonzero(lengths[first[model] : first[model + 1]])
        if not len(peer_sentences):
            continue
        rows = max(1, _PAIR_CHUNK // len(peer_sentences))
        for start in range(0, len(model_sentences), rows):
            block = model_sentences[start : start + rows]
            models.append(np.repeat(block, len(peer_sentences)))
            peers.append(np.tile(peer_sentences, len(block)))
            pending += len(block) * len(peer_sentences)
            if pending >= _PAIR_CHUNK:
                yield np.concatenate(models), np.concatenate(peers)
                models, peers, pending = [], [], 0
    if pending:
        yield np.concatenate(models), np.concatenate(peers)


def _lcs_counts(units: _Units, weight: float | None) -> list[tuple[float, float, float, float]]:
    """Per unit (hits, reference total, prediction total, -f B score) of ROUGE-L (weight None) or ROUGE-W."""
    sentences = [sentence for text in units.texts for sentence in text.sentences]
    flat, starts = _flat(sentences)
    lengths = np.diff(starts)
    first = text_offsets(np.array([len(text.sentences) for text in units.texts], dtype=np.int64))
    flags = np.zeros(len(flat), dtype=bool)
    for model_sentences, peer_sentences in _sentence_pairs(units, first, lengths):
        flags |= mark_union(flat, starts, lengths, model_sentences, peer_sentences, 1.0 if weight is None else weight)
    marked = flags.tolist()
    results = []
    for peer, model in zip(units.peer_text.tolist(), units.model_text.tolist(), strict=True):
        prediction, reference = units.texts[peer], units.texts[model]
        model_counts = Counter(reference.tokens)
        peer_counts = Counter(prediction.tokens)
        hits: float = 0
        base: float = 0
        for offset, sentence in enumerate(reference.sentences):
            base += len(sentence) if weight is None else float(len(sentence)) ** weight
            if sentence:
                start = int(starts[first[model] + offset])
                hits = sentence_hits(
                    sentence, marked[start : start + len(sentence)], model_counts, peer_counts, weight, hits
                )
        if weight is None:
            results.append((hits, base, len(prediction.tokens), hits / base if base > 0 else 0.0))
        else:
            score = (hits / base) ** (1 / weight) if base != 0 else 0.0
            results.append((hits, float(base) ** weight, float(len(prediction.tokens)) ** weight, score))
    return results


def _lcs_refusal(name: str, example: int, reference: int, prediction: _Summary, model: _Summary, cells: int,
                 bound: int) -> ValueError:
    peer_sentences = sum(1 for sentence in prediction.sentences if sentence)
    model_sentences = sum(1 for sentence in model.sentences if sentence)
    minute = ", the default: about a minute's work on a 2-core machine" if bound == DEFAULT_MAX_LCS_CELLS else ""
    return ValueError(
        f"{METRIC}: {name} of predictions[{example}] ({len(prediction.tokens):,} tokens in {peer_sentences:,} "
        f"sentence(s)) and references[{example}][{reference}] ({len(model.tokens):,} tokens in {model_sentences:,} "
        f"sentence(s)) aligns every reference sentence with every prediction sentence: {cells:,} cells, more than "
        f"max_lcs_cells={bound:,}{minute} (the alignment is quadratic in the texts' lengths). Score shorter texts, "
        f"leave {name} out, or raise max_lcs_cells"
    )


def _skip_refusal(name: str, where: str, tokens: int, pairs: int, bound: int, unlimited: bool) -> ValueError:
    return ValueError(
        f"{METRIC}: a text of {tokens:,} tokens has {pairs:,} skip-bigrams{' at any distance' if unlimited else ''} "
        f"({name} of {where}), more than max_skip_bigrams={bound:,} (counting them is quadratic in the length, as "
        f"in ROUGE-1.5.5.pl); use a skip limit such as rougeSU4, leave rougeS/rougeSU out for such texts, or raise "
        f"max_skip_bigrams"
    )


def _summary_cells(prediction: _Summary, model: _Summary) -> int:
    peer = [len(sentence) for sentence in prediction.sentences if sentence]
    reference = [len(sentence) for sentence in model.sentences if sentence]
    return lcs_cells(sum(reference), sum(peer), len(reference), len(peer))


def check_rouge155_resources(
    predictions: Sequence[str], references: Sequence[Sequence[str]], options: Rouge155Options
) -> None:
    """Refuse, before any scoring, an example whose ROUGE-L/W alignment exceeds ``max_lcs_cells`` or whose texts
    have more skip-bigrams than ``max_skip_bigrams``. Only texts whose length in characters could exceed a bound
    are tokenized for it."""
    aligned = [name for name in options.rouge_types if name in ("rougeL", "rougeW")]
    skips = [rouge_type for rouge_type in options.parsed if rouge_type.kind == "S"]
    if not aligned and not skips:
        return
    tokenizer = Rouge155Tokenizer(
        options.use_stemmer, options.remove_stopwords, options.length_limit, options.byte_limit
    )

    def tokens_at_most(text: str) -> int:
        return (len(text) + 1) // 2  # runs of [a-z0-9] between other characters

    def skip_pairs(length: int) -> int:
        return max(skip_pair_count(length, rouge_type.skip) for rouge_type in skips) if skips else 0

    for example, (prediction_text, group) in enumerate(zip(predictions, references, strict=True)):
        summaries: dict[str, _Summary] = {}

        def summary(text: str) -> _Summary:
            if text not in summaries:
                summaries[text] = _Summary(*tokenizer.summary(text, tokenizer.token_ids(), True))
            return summaries[text]

        n = tokens_at_most(prediction_text)
        for position, reference_text in enumerate(group):
            m = tokens_at_most(reference_text)
            rows, columns = reference_text.count("\n") + 1, prediction_text.count("\n") + 1
            if aligned and lcs_cells(m, n, rows, columns) > options.max_lcs_cells:
                cells = _summary_cells(summary(prediction_text), summary(reference_text))
                if cells > options.max_lcs_cells:
                    raise _lcs_refusal(aligned[0], example, position, summary(prediction_text),
                                       summary(reference_text), cells, options.max_lcs_cells)
            if skips and skip_pairs(max(n, m)) > options.max_skip_bigrams:
                lengths = {f"predictions[{example}]": len(summary(prediction_text).tokens),
                           f"references[{example}][{position}]": len(summary(reference_text).tokens)}
                where, length = max(lengths.items(), key=lambda item: item[1])
                if min(lengths.values()) >= 2 and skip_pairs(length) > options.max_skip_bigrams:
                    worst = max(skips, key=lambda rouge_type: skip_pair_count(length, rouge_type.skip))
                    raise _skip_refusal(worst.name, where, length, skip_pairs(length), options.max_skip_bigrams,
                                        worst.skip < 0)


_CHUNK_EXAMPLES = 8192


def rouge155_rows(
    predictions: Sequence[str], references: Sequence[Sequence[str]], options: Rouge155Options
) -> list[tuple[Any, ...]]:
    """Per-example rows in :func:`rouge155_schema` order (check inputs and options before calling); every example
    is first checked against the options' resource bounds (:func:`check_rouge155_resources`)."""
    check_rouge155_resources(predictions, references, options)
    tokenizer = Rouge155Tokenizer(
        options.use_stemmer, options.remove_stopwords, options.length_limit, options.byte_limit
    )
    sentences = any(rouge_type.kind in ("L", "W") for rouge_type in options.parsed)
    rows: list[tuple[Any, ...]] = []
    for start in range(0, len(predictions), _CHUNK_EXAMPLES):
        chunk = slice(start, start + _CHUNK_EXAMPLES)
        numbering = tokenizer.token_ids()
        summaries = [
            (
                _Summary(*tokenizer.summary(prediction, numbering, sentences)),
                [_Summary(*tokenizer.summary(reference, numbering, sentences)) for reference in group],
            )
            for prediction, group in zip(predictions[chunk], references[chunk], strict=True)
        ]
        rows.extend(_rows_of(summaries, options))
    return rows


def _rows_of(summaries: list[tuple[_Summary, list[_Summary]]], options: Rouge155Options) -> list[tuple[Any, ...]]:
    types = options.parsed
    if "rougeW" in options.rouge_types:
        empty = sum(1 for _, group in summaries for reference in group if not reference.tokens)
        if empty:
            warn_caller(
                f"{METRIC}: {empty} reference(s) have no token; ROUGE-1.5.5.pl stops with 'Illegal division by "
                "zero' on them when computing ROUGE-W (-w); here their ROUGE-W recall is 0"
            )
    units = _Units(summaries)
    counts: dict[str, list[tuple[float, float, float, float]]] = {}
    _ngram_counts(units, types, counts)
    _skip_counts(units, types, counts, options.max_skip_bigrams)
    if "rougeL" in options.rouge_types:
        counts["rougeL"] = _lcs_counts(units, None)
    if "rougeW" in options.rouge_types:
        counts["rougeW"] = _lcs_counts(units, options.w_weight)
    best = options.scoring_formula == "B"
    alpha = options.alpha
    rows = []
    unit = 0
    for _, group in summaries:
        units_of_example = range(unit, unit + len(group))
        unit += len(group)
        row: list[Any] = []
        for rouge_type in types:
            per_unit = counts[rouge_type.name]
            if best:
                chosen, best_score = per_unit[units_of_example[0]], -1.0
                for index in units_of_example:
                    if per_unit[index][3] > best_score:
                        chosen, best_score = per_unit[index], per_unit[index][3]
                hits, model, peer = chosen[0], chosen[1], chosen[2]
            else:
                hits = model = peer = 0
                for index in units_of_example:
                    hits += per_unit[index][0]
                    model += per_unit[index][1]
                    peer += per_unit[index][2]
            weight = options.w_weight if rouge_type.kind == "W" else None
            row.extend(_prf_e5(hits, model, peer, alpha, weight))
            row.extend((hits, model, peer))
        row.append(1)
        rows.append(tuple(row))
    return rows


def rouge155_from_totals(totals: Mapping[str, Any], options: Rouge155Options) -> dict[str, float]:
    """Plain means over the examples of the per-example (5-decimal) F-measure, precision and recall.

    Keys ``<type>_mean``, ``<type>_precision_mean``, ``<type>_recall_mean``: exact means of the per-example
    values ROUGE-1.5.5 prints with ``-d``, from totals (so from shards in any order). They are *not* the
    ``Average`` lines the script prints, which are bootstrap means of the same values (:func:`rouge155_averages`)
    and differ in the last digits.
    """
    count = totals["count"]
    return {
        output_key(name, measure, "_mean"): totals[f"{name}_{measure}_e5"] / (count * _SCALE)
        for name in options.rouge_types
        for measure in OUTPUT_MEASURES
    }


def rouge155_example_scores(record: Mapping[str, Any], options: Rouge155Options) -> dict[str, float]:
    """One example's F-measure, precision and recall (5-decimal numbers, as ``-d`` prints them) from its record."""
    return {
        output_key(name, measure): record[f"{name}_{measure}_e5"] / _SCALE
        for name in options.rouge_types
        for measure in OUTPUT_MEASURES
    }


def rouge155_per_example(columns: Mapping[str, Sequence[int]], options: Rouge155Options) -> dict[str, list[float]]:
    """Per-example F-measure, precision and recall lists (keys as :func:`rouge155_example_scores`)."""
    return {
        output_key(name, measure): [value / _SCALE for value in columns[f"{name}_{measure}_e5"]]
        for name in options.rouge_types
        for measure in OUTPUT_MEASURES
    }


def rouge155_averages(
    columns: Mapping[str, Sequence[int]],
    options: Rouge155Options,
    *,
    eval_ids: Sequence[str] | None = None,
    peer_id: str = "1",
) -> dict[str, float]:
    """The ``Average_F/P/R`` lines ROUGE-1.5.5 prints, with their confidence intervals, from per-example columns.

    Keys ``<type>`` (Average_F, the bootstrap mean, as printed), ``<type>_low``/``<type>_high`` (its interval),
    then the same for ``<type>_precision`` and ``<type>_recall``. ``columns`` maps field names to per-example
    values (``StatsSchema.columns`` of the rows, or a ``datasets`` column table) in input order; the examples are
    resampled in the order the script sorts their ids (``eval_ids``, default ``options.eval_ids`` or pyrouge's
    1, 2, ...), which decides which examples each resample draws.
    """
    names = [f"{name}_{measure}_e5" for name in options.rouge_types for measure in OUTPUT_MEASURES]
    averages = bootstrap_averages(
        columns, names, n_samples=options.n_bootstrap, confidence=options.confidence,
        eval_ids=options.eval_ids if eval_ids is None else eval_ids, peer_id=peer_id,
    )
    result: dict[str, float] = {}
    for name in options.rouge_types:
        for measure in OUTPUT_MEASURES:
            average = averages[f"{name}_{measure}_e5"]
            result[output_key(name, measure)] = average.mean
            result[output_key(name, measure, "_low")] = average.low
            result[output_key(name, measure, "_high")] = average.high
    return result
