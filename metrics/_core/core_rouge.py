"""ROUGE (Lin 2004) with rouge-score's numbers: ROUGE-N, ROUGE-L, ROUGE-Lsum, ROUGE-S and ROUGE-SU.

Every ROUGE type reduces a (prediction, reference) pair to three integers,
``hits``, ``prediction_total`` and ``reference_total``; precision is
``hits / max(prediction_total, 1)``, recall ``hits / max(reference_total, 1)``
and the F-measure their harmonic mean, computed with rouge-score's exact
float operations, so per-example scores are bit-identical to rouge-score's.

With several references, ``multi_ref="best"`` keeps, per ROUGE type, the
reference with the highest F-measure (the first one on ties), as rouge-score's
``score_multi`` does; ``multi_ref="pooled"`` is the classic Lin 2004 /
ROUGE-1.5.5 ``-f A`` form: hits and totals are summed over the references
(the prediction counted once per reference) before dividing;
``multi_ref="max"`` takes the highest precision and the highest recall over
the references separately (possibly from different references) and the
F-measure of those two, as pycocoevalcap's ``Rouge`` (the MS-COCO caption
scorer, which nlg-eval wraps) does.

The F-measure is F1 by default; ``beta`` gives F-beta, ``(1 + beta^2) P R /
(R + beta^2 P)`` with pycocoevalcap's float operations (0 when P or R is 0), so
``beta=1.2`` with ``multi_ref="max"`` and pycocoevalcap's tokens (split at
single spaces) is pycocoevalcap's ROUGE-L bit for bit.

The corpus score is macro-averaged: the mean over examples of the
per-example precision, recall and F-measure. Per-example statistics are those
three numbers per type plus an example count, summed with ``math.fsum``, so
sharded totals merge exactly in any order.

Resources: ROUGE-L and ROUGE-Lsum are quadratic in time (``core_rouge_bounds.lcs_cells``), ROUGE-S counts its
hits in time bounded by the texts' skip-bigrams or by their shared word types times their length
(``core_rouge_skips``), in bounded memory. Before any of that work, :func:`check_rouge_resources` refuses a
(prediction, reference) pair above ``max_lcs_cells`` or ``max_skip_bigram_work`` with a ``ValueError`` that names
the example, the sizes, the bound and the remedies; :func:`rouge_rows` checks every example first.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Literal

from .core_lcs import lcs_length, union_lcs_counts
from .core_ngrams import clipped_matches, ngram_counts
from .core_rouge_bounds import candidate_masks, lcs_cells
from .core_rouge_skips import skip_bigram_hits, skip_bigram_work, skip_pair_total, work_bound
from .core_rouge_tokenize import RougeTokenizer
from .core_sentence_split import newline_sentences, split_sentences
from .core_stats import StatField, StatsSchema

MultiRef = Literal["best", "pooled", "max"]
MULTI_REF_MODES = ("best", "pooled", "max")
DEFAULT_ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
VALID_ROUGE_TYPES = (
    "rouge1 .. rouge9, rougeL, rougeLsum, rougeS, rougeSU, rougeS<d>, rougeSU<d> "
    "(<d>: maximum number of words skipped between the two words of a skip-bigram, e.g. rougeSU4)"
)
MEASURES = ("precision", "recall", "fmeasure")

_ROUGE_N = re.compile(r"rouge([1-9])$")
_ROUGE_S = re.compile(r"rougeS(U?)([0-9]*)$")

# Bounds of one (prediction, reference) pair, about a minute each on a 2-core machine (the options' defaults):
# LCS cells (core_rouge_bounds.lcs_cells; rougeLsum aligns 1.5e9 a second, rougeL four times as many), and
# skip-bigram counting steps (core_rouge_skips; about 15 ns each).
DEFAULT_MAX_LCS_CELLS = 1 << 36
DEFAULT_MAX_SKIP_BIGRAM_WORK = 1 << 32
_MINUTE = ", the default: about a minute's work on a 2-core machine"
# Texts with at most this many skip-bigrams keep them as counts (reused for every reference).
_COUNTED_SKIP_PAIRS = 1 << 14


@dataclass(frozen=True)
class RougeType:
    """A parsed ROUGE type: ``kind`` is 'n', 'L', 'Lsum' or 'S'; ``n`` the n-gram order for 'n'."""

    name: str
    kind: str
    n: int = 0
    max_skip: int | None = None
    with_unigrams: bool = False


def parse_rouge_type(name: str) -> RougeType | None:
    """The :class:`RougeType` named ``name``, or None for an unknown name."""
    if name == "rougeL":
        return RougeType(name, "L")
    if name == "rougeLsum":
        return RougeType(name, "Lsum")
    match = _ROUGE_N.match(name)
    if match:
        return RougeType(name, "n", n=int(match.group(1)))
    match = _ROUGE_S.match(name)
    if match:
        skip = int(match.group(2)) if match.group(2) else None
        return RougeType(name, "S", max_skip=skip, with_unigrams=bool(match.group(1)))
    return None


def fmeasure(precision: float, recall: float) -> float:
    """rouge-score's F-measure (harmonic mean; 0 when both are 0)."""
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


def fbeta(precision: float, recall: float, beta: float) -> float:
    """F-beta as pycocoevalcap's ``Rouge.calc_score`` computes it: ``((1 + beta**2) * P * R) / (R + beta**2 * P)``,
    0 when P or R is 0. With ``beta=1`` it is rouge-score's :func:`fmeasure`, which is used then."""
    if beta == 1:
        return fmeasure(precision, recall)
    if precision != 0 and recall != 0:
        weight = beta**2
        return ((1 + weight) * precision * recall) / float(recall + weight * precision)
    return 0.0


def prf(hits: int, prediction_total: int, reference_total: int, beta: float = 1.0) -> tuple[float, float, float]:
    """Precision, recall and F-measure (F-beta) from counts, with rouge-score's zero guards."""
    precision = hits / max(prediction_total, 1)
    recall = hits / max(reference_total, 1)
    return precision, recall, fbeta(precision, recall, beta)


def skip_bigram_counts(tokens: Sequence[Hashable], max_skip: int | None) -> Counter[tuple[Hashable, Hashable]]:
    """Counts of ordered word pairs (i < j) with at most ``max_skip`` words between them (None: any gap)."""
    length = len(tokens)
    if max_skip is None or max_skip >= length:
        return Counter(chain.from_iterable(zip(tokens[:-gap], tokens[gap:]) for gap in range(1, length)))
    return Counter(chain.from_iterable(zip(tokens[:-gap], tokens[gap:]) for gap in range(1, max_skip + 2)))


@dataclass(frozen=True)
class RougeOptions:
    """Options that define the per-example statistics."""

    rouge_types: tuple[str, ...]
    tokenizer: RougeTokenizer
    multi_ref: MultiRef = "best"
    split_summaries: bool = False
    beta: float = 1.0
    # resource bounds of one (prediction, reference) pair; they never change a result, only refuse
    max_lcs_cells: int = DEFAULT_MAX_LCS_CELLS
    max_skip_bigram_work: int = DEFAULT_MAX_SKIP_BIGRAM_WORK

    @property
    def parsed(self) -> tuple[RougeType, ...]:
        return tuple(parse_rouge_type(name) for name in self.rouge_types)  # type: ignore[misc]

    def stats_signature(self) -> str:
        split = "rules" if self.split_summaries else "newline"
        beta = "" if self.beta == 1 else f"|beta:{self.beta!r}"  # F1's signature is that of the releases before beta
        return (
            f"rouge|types:{','.join(self.rouge_types)}|tok:{self.tokenizer.name}|multi:{self.multi_ref}"
            f"|lsum-split:{split}{beta}"
        )


def rouge_schema(metric: str, options: RougeOptions) -> StatsSchema:
    """Per type of ``options.rouge_types``: fsum fields of the per-example precision, recall and F-measure; plus
    the example count."""
    fields = [StatField(f"{name}_{measure}", "fsum") for name in options.rouge_types for measure in MEASURES]
    fields.append(StatField("count", "sum"))
    return StatsSchema(metric, tuple(fields))


class _Text:
    """A text's tokens and the derived counts every requested type needs, computed once (the LCS masks and
    skip-bigram counts when first asked for)."""

    __slots__ = ("tokens", "ngrams", "_masks", "sentences", "sentence_masks", "sentence_counts", "_skips")

    def __init__(self, text: str, plan: _Plan, *, is_prediction: bool) -> None:
        tokenizer = plan.tokenizer
        self.sentences: list[Sequence[Hashable]] = []
        if plan.lsum:
            self.sentences = [tokenizer(sentence) for sentence in plan.sentence_splitter(text)]
        if plan.lsum and tokenizer.splits_at_lines and not plan.split_summaries:
            self.tokens: Sequence[Hashable] = list(chain.from_iterable(self.sentences))
        else:
            self.tokens = tokenizer(text) if plan.needs_tokens else []
        self.ngrams = ngram_counts(self.tokens, plan.max_n) if plan.max_n else None
        self._masks: Any = None
        if plan.lsum and is_prediction:
            self.sentence_masks = [(sentence, candidate_masks(sentence)) for sentence in self.sentences]
            self.sentence_counts = Counter(chain.from_iterable(self.sentences))
        else:
            self.sentence_masks = None
            self.sentence_counts = None
        self._skips: dict[int | None, Counter[tuple[Hashable, Hashable]]] = {}

    @property
    def masks(self) -> Any:
        """The LCS match masks of the tokens (this text as the bit-vector side of an alignment)."""
        if self._masks is None:
            self._masks = candidate_masks(self.tokens)
        return self._masks

    def skips(self, max_skip: int | None) -> Counter[tuple[Hashable, Hashable]] | None:
        """The skip-bigram counts of a short text (None for a long one: its hits are counted per pair)."""
        if skip_pair_total(len(self.tokens), max_skip) > _COUNTED_SKIP_PAIRS:
            return None
        counts = self._skips.get(max_skip)
        if counts is None:
            counts = self._skips[max_skip] = skip_bigram_counts(self.tokens, max_skip)
        return counts


@dataclass(frozen=True)
class _Plan:
    tokenizer: RougeTokenizer
    types: tuple[RougeType, ...]
    max_n: int
    lcs: bool
    lsum: bool
    needs_tokens: bool
    split_summaries: bool
    sentence_splitter: Callable[[str], list[str]]


def _plan(options: RougeOptions) -> _Plan:
    types = options.parsed
    kinds = {rouge_type.kind for rouge_type in types}
    max_n = max([rouge_type.n for rouge_type in types if rouge_type.kind == "n"], default=0)
    if any(rouge_type.kind == "S" and rouge_type.with_unigrams for rouge_type in types):
        max_n = max(max_n, 1)
    return _Plan(
        tokenizer=options.tokenizer,
        types=types,
        max_n=max_n,
        lcs="L" in kinds,
        lsum="Lsum" in kinds,
        needs_tokens=bool(kinds - {"Lsum"}),
        split_summaries=options.split_summaries,
        sentence_splitter=split_sentences if options.split_summaries else newline_sentences,
    )


def _summary_level_hits(reference: _Text, prediction: _Text) -> tuple[int, int, int]:
    """ROUGE-Lsum counts: union-LCS hits without double counting (ROUGE-1.5.5), as rouge-score computes them."""
    reference_total = sum(map(len, reference.sentences))
    prediction_total = sum(map(len, prediction.sentences))
    if not reference_total or not prediction_total:
        return 0, prediction_total, reference_total
    union: Counter[Hashable] = Counter()
    candidates = prediction.sentence_masks
    for sentence in reference.sentences:
        union.update(union_lcs_counts(sentence, candidates))  # type: ignore[arg-type]
    available = prediction.sentence_counts
    hits = sum(min(count, available[token]) for token, count in union.items())  # type: ignore[index]
    return hits, prediction_total, reference_total


def _skip_hits(
    reference: _Text, prediction: _Text, rouge_type: RougeType, unigram_hits: int
) -> tuple[int, int, int]:
    max_skip = rouge_type.max_skip
    predicted, referenced = prediction.skips(max_skip), reference.skips(max_skip)
    if predicted is not None and referenced is not None:
        get = referenced.get
        hits = sum(min(count, get(pair, 0)) for pair, count in predicted.items())
    else:
        hits = skip_bigram_hits(prediction.tokens, reference.tokens, max_skip)
    prediction_total = skip_pair_total(len(prediction.tokens), max_skip)
    reference_total = skip_pair_total(len(reference.tokens), max_skip)
    if rouge_type.with_unigrams:
        hits += unigram_hits
        prediction_total += len(prediction.tokens)
        reference_total += len(reference.tokens)
    return hits, prediction_total, reference_total


def _lcs_refusal(rouge_type: RougeType, where: str, sizes: str, cells: int, bound: int) -> ValueError:
    what = ("aligns every reference sentence with every prediction sentence (their LCS tables and walks back)"
            if rouge_type.kind == "Lsum" else "fills their LCS table")
    split = "put fewer sentences on more examples" if rouge_type.kind == "Lsum" else "split the texts"
    return ValueError(
        f"rouge: {rouge_type.name} of {where} ({sizes}) {what}: {cells:,} cells, more than max_lcs_cells="
        f"{bound:,}{_MINUTE if bound == DEFAULT_MAX_LCS_CELLS else ''} (the LCS is quadratic in the texts' lengths). "
        f"Score shorter texts ({split}), leave {rouge_type.name} out, or raise max_lcs_cells"
    )


def _skip_refusal(rouge_type: RougeType, where: str, sizes: str, work: int, bound: int) -> ValueError:
    limit = ("" if rouge_type.max_skip is not None
             else ", or use a skip limit such as rougeS4 (at most n * (d + 1) pairs)")
    return ValueError(
        f"rouge: {rouge_type.name} of {where} ({sizes}) needs {work:,} steps to count the matching skip-bigrams (their"
        f" skip-bigrams, or the word types the texts share times their lengths), more than max_skip_bigram_work="
        f"{bound:,}{_MINUTE if bound == DEFAULT_MAX_SKIP_BIGRAM_WORK else ''}. Score shorter texts{limit}, leave "
        f"{rouge_type.name} out, or raise max_skip_bigram_work"
    )


def _check_pair(reference: _Text, prediction: _Text, options: RougeOptions, where: str) -> None:
    """Refuse a pair whose ROUGE-L/Lsum cells or ROUGE-S counting exceed the options' bounds."""
    m, n = len(reference.tokens), len(prediction.tokens)
    for rouge_type in options.parsed:
        if rouge_type.kind == "L":
            cells = lcs_cells(m, n)
            if cells > options.max_lcs_cells:
                raise _lcs_refusal(rouge_type, where, f"{n:,} and {m:,} tokens", cells, options.max_lcs_cells)
        elif rouge_type.kind == "Lsum":
            m_sum, n_sum = sum(map(len, reference.sentences)), sum(map(len, prediction.sentences))
            cells = lcs_cells(m_sum, n_sum, len(reference.sentences), len(prediction.sentences))
            if cells > options.max_lcs_cells:
                sizes = (f"{n_sum:,} tokens in {len(prediction.sentences):,} sentences and {m_sum:,} tokens in "
                         f"{len(reference.sentences):,} sentences")
                raise _lcs_refusal(rouge_type, where, sizes, cells, options.max_lcs_cells)
        elif rouge_type.kind == "S":
            bound = options.max_skip_bigram_work
            if work_bound(n, m, rouge_type.max_skip) > bound:
                work = skip_bigram_work(prediction.tokens, reference.tokens, rouge_type.max_skip)
                if work > bound:
                    raise _skip_refusal(rouge_type, where, f"{n:,} and {m:,} tokens", work, bound)


def _token_bound(tokenizer: RougeTokenizer, text: str) -> int | None:
    """At most how many tokens the built-in tokenizers make of ``text`` (None for a custom tokenizer)."""
    name = tokenizer.name
    if name.startswith("rouge_score"):
        return (len(text) + 1) // 2  # runs of [a-z0-9] between other characters
    if name == "pycocoevalcap":
        return len(text) + 1
    if name.startswith("unicode"):
        return 18 * len(text)  # NFKC expands a character to at most 18
    return None


def _may_exceed(prediction: str, reference: str, options: RougeOptions, tokenizer: RougeTokenizer) -> bool:
    """Whether the pair might exceed a bound, from the texts' lengths alone (True when unknown)."""
    n, m = _token_bound(tokenizer, prediction), _token_bound(tokenizer, reference)
    if n is None or m is None:
        return True
    for rouge_type in options.parsed:
        if rouge_type.kind == "L" and lcs_cells(m, n) > options.max_lcs_cells:
            return True
        if rouge_type.kind == "Lsum":
            rows = 2 * len(reference) + 1 if options.split_summaries else reference.count("\n") + 1
            columns = 2 * len(prediction) + 1 if options.split_summaries else prediction.count("\n") + 1
            if lcs_cells(m, n, rows, columns) > options.max_lcs_cells:
                return True
        if rouge_type.kind == "S" and work_bound(n, m, rouge_type.max_skip) > options.max_skip_bigram_work:
            return True
    return False


def check_rouge_resources(
    predictions: Sequence[str], references: Sequence[Sequence[str]], options: RougeOptions
) -> None:
    """Refuse, before any scoring, an example whose ROUGE-L/Lsum alignment or ROUGE-S counting exceeds the bounds
    (``max_lcs_cells``, ``max_skip_bigram_work``); a ``ValueError`` names it. Pairs that the texts' lengths clear
    are not tokenized (nor are any with a custom tokenizer: :func:`rouge_rows` checks those before their work)."""
    kinds = {rouge_type.kind for rouge_type in options.parsed}
    if not kinds & {"L", "Lsum", "S"}:
        return
    plan = _plan(options)
    custom = _token_bound(options.tokenizer, "") is None
    for example, (prediction_text, reference_texts) in enumerate(zip(predictions, references, strict=True)):
        prediction = None
        for position, reference_text in enumerate(reference_texts):
            if custom or not _may_exceed(prediction_text, reference_text, options, options.tokenizer):
                continue
            prediction = prediction or _Text(prediction_text, plan, is_prediction=False)
            _check_pair(_Text(reference_text, plan, is_prediction=False), prediction, options,
                        f"predictions[{example}] and references[{example}][{position}]")


def _pair_counts(reference: _Text, prediction: _Text, plan: _Plan) -> list[tuple[int, int, int]]:
    """(hits, prediction_total, reference_total) of each requested type for one pair."""
    matches = (
        clipped_matches(prediction.ngrams, reference.ngrams, plan.max_n) if plan.max_n else []  # type: ignore[arg-type]
    )
    counts = []
    for rouge_type in plan.types:
        if rouge_type.kind == "n":
            n = rouge_type.n
            counts.append(
                (matches[n - 1], max(len(prediction.tokens) - n + 1, 0), max(len(reference.tokens) - n + 1, 0))
            )
        elif rouge_type.kind == "L":
            # the LCS length is symmetric: the bit vectors run over the shorter text
            if len(prediction.tokens) <= len(reference.tokens):
                hits = lcs_length(reference.tokens, prediction.masks, len(prediction.tokens))
            else:
                hits = lcs_length(prediction.tokens, reference.masks, len(reference.tokens))
            counts.append((hits, len(prediction.tokens), len(reference.tokens)))
        elif rouge_type.kind == "Lsum":
            counts.append(_summary_level_hits(reference, prediction))
        else:
            counts.append(_skip_hits(reference, prediction, rouge_type, matches[0] if matches else 0))
    return counts


def rouge_rows(
    predictions: Sequence[str], references: Sequence[Sequence[str]], options: RougeOptions
) -> list[list[Any]]:
    """Per-example rows in schema order: (precision, recall, F) per type, then the count 1."""
    check_rouge_resources(predictions, references, options)
    plan = _plan(options)
    custom = _token_bound(options.tokenizer, "") is None
    multi_ref, beta = options.multi_ref, options.beta
    rows = []
    for example, (prediction_text, reference_texts) in enumerate(zip(predictions, references, strict=True)):
        prediction = _Text(prediction_text, plan, is_prediction=True)
        texts = [_Text(reference_text, plan, is_prediction=False) for reference_text in reference_texts]
        if custom:  # tokens of a custom tokenizer are known only now: check before the work
            for position, reference in enumerate(texts):
                _check_pair(reference, prediction, options, f"predictions[{example}] and "
                            f"references[{example}][{position}]")
        per_reference = [_pair_counts(reference, prediction, plan) for reference in texts]
        row: list[Any] = []
        for position in range(len(plan.types)):
            if multi_ref == "pooled":
                row.extend(
                    prf(
                        sum(counts[position][0] for counts in per_reference),
                        sum(counts[position][1] for counts in per_reference),
                        sum(counts[position][2] for counts in per_reference),
                        beta,
                    )
                )
            elif multi_ref == "max":
                scores = [prf(*counts[position], beta) for counts in per_reference]
                precision = max(score[0] for score in scores)
                recall = max(score[1] for score in scores)
                row.extend((precision, recall, fbeta(precision, recall, beta)))
            else:
                best = None
                for counts in per_reference:
                    scores = prf(*counts[position], beta)
                    if best is None or scores[2] > best[2]:
                        best = scores
                row.extend(best)  # type: ignore[arg-type]
        row.append(1)
        rows.append(row)
    return rows


def rouge_from_totals(totals: dict[str, Any], rouge_types: Sequence[str]) -> dict[str, float]:
    """Mean precision, recall and F-measure per type, keyed ``<type>_<measure>``."""
    count = totals["count"]
    return {
        f"{name}_{measure}": totals[f"{name}_{measure}"] / count for name in rouge_types for measure in MEASURES
    }
