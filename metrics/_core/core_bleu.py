"""BLEU as a pure function of per-example sufficient statistics.

Per example: hypothesis length, the chosen reference length, clipped n-gram
matches and hypothesis n-gram totals per order, and the number of references.
Three scoring functions read the summed statistics: :func:`sacrebleu_score`
(sacreBLEU 2.x arithmetic, smoothing methods and effective order),
:func:`bleu_score` (the arithmetic of tensorflow/nmt's ``compute_bleu``, which
evaluate's ``bleu`` module wraps) and :func:`pycocoevalcap_score` (the MS-COCO
caption scorer's ``BleuScorer``, which nlg-eval wraps). Each scores a corpus
(summed statistics) and a sentence (one example's statistics) alike, and the
statistics of order ``max_order`` hold those of every lower order, so BLEU-1 ..
BLEU-``max_order`` all come from one pass over the text.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .core_mt_signature import nrefs_label, sacrebleu_signature
from .core_mt_tokenizers import TOKENIZERS_VERSION, MtTokenizer, builtin_tokenizer_name, get_tokenizer, tokenize_13a
from .core_mt_tokenizers import tokenize_none
from .core_ngrams import NgramCounts, clipped_matches, max_ngram_counts, ngram_counts, ngram_totals
from .core_options import boolean, bound, function, integer, option, optional
from .core_process import MIB, bounded_cache, object_label
from .core_stats import StatField, StatsSchema
from .core_resources import TextBounds

# The default of ``max_text_chars`` for BLEU: what costs is tokens and distinct n-grams, and with one token per
# character (a character-level tokenizer, or CJK) a text of 10^6 characters takes about 3-6 s and 0.5-1 GB of n-gram
# counters (measured 2026-11-28 on the 2-core machine), so 2,000,000 characters is about 12 s and 2 GB at worst.
DEFAULT_BLEU_MAX_TEXT_CHARS = 2_000_000

ReferenceLength = Literal["closest", "shortest"]
REFERENCE_LENGTHS: tuple[str, ...] = ("closest", "shortest")

SmoothMethod = Literal["none", "floor", "add-k", "exp"]
# Defaults from Chen & Cherry (2014), as in sacreBLEU.
SMOOTH_DEFAULTS: dict[str, float | None] = {"none": None, "floor": 0.1, "add-k": 1, "exp": None}

# Bytes of references' n-gram counts kept per process (an estimate: the counter, its keys and the text).
REFERENCE_COUNTS_CACHE_BYTES = 128 * MIB

# sacreBLEU floors log(0) to this value.
_LOG_ZERO = -9999999999

# pycocoevalcap's BleuScorer adds `tiny` to every match count (so an order without a match gives a tiny positive
# precision rather than 0) and `small` to every n-gram total and to the reference length (no division by zero).
COCO_TINY = 1e-15
COCO_SMALL = 1e-9


def bleu_schema(metric: str, options: BleuOptions | SacreBleuOptions) -> StatsSchema:
    """The statistics of BLEU with n-grams up to ``options.max_order``."""
    max_order = options.max_order
    return StatsSchema(
        metric,
        (
            StatField("hyp_len"),
            StatField("ref_len"),
            *(StatField(f"match_{order}") for order in range(1, max_order + 1)),
            *(StatField(f"total_{order}") for order in range(1, max_order + 1)),
            StatField("min_refs", "min"),
            StatField("max_refs", "max"),
        ),
    )


def closest_reference_length(hypothesis_length: int, reference_lengths: Sequence[int]) -> int:
    """The reference length closest to the hypothesis length; the shorter one on ties (as sacreBLEU)."""
    return min(reference_lengths, key=lambda length: (abs(hypothesis_length - length), length))


ReferenceCounts = tuple[int, NgramCounts]


def reference_counts(reference: Sequence[str], max_order: int) -> ReferenceCounts:
    """(length, n-gram counts) of one tokenized reference."""
    return len(reference), ngram_counts(reference, max_order)


def statistics_from_counts(
    hypothesis: Sequence[str],
    references: Sequence[ReferenceCounts],
    *,
    max_order: int,
    reference_length: ReferenceLength,
) -> tuple[int, ...]:
    """Statistics of one example from its tokenized hypothesis and its references' counts (schema order)."""
    hypothesis_length = len(hypothesis)
    reference_lengths = [length for length, _ in references]
    if reference_length == "closest":
        chosen_length = closest_reference_length(hypothesis_length, reference_lengths)
    else:
        chosen_length = min(reference_lengths)
    merged = max_ngram_counts([counts for _, counts in references])
    matches = clipped_matches(ngram_counts(hypothesis, max_order), merged, max_order)
    count = len(references)
    return (hypothesis_length, chosen_length, *matches, *ngram_totals(hypothesis_length, max_order), count, count)


def bleu_statistics(
    hypothesis: Sequence[str],
    references: Sequence[Sequence[str]],
    *,
    max_order: int,
    reference_length: ReferenceLength,
) -> tuple[int, ...]:
    """Statistics of one tokenized example, in :func:`bleu_schema` order."""
    return statistics_from_counts(
        hypothesis,
        [reference_counts(reference, max_order) for reference in references],
        max_order=max_order,
        reference_length=reference_length,
    )


def _reference_counts_size(key: tuple[str, str, int], value: ReferenceCounts) -> int:
    return 2 * len(key[1]) + 300 + 120 * len(value[1])


_REFERENCE_COUNTS = bounded_cache(__file__, "mt.reference_counts", REFERENCE_COUNTS_CACHE_BYTES,
                                  _reference_counts_size)


def split_totals(totals: Mapping[str, Any], max_order: int) -> tuple[list[Any], list[Any], int, int]:
    """(matches per order, totals per order, hypothesis length, reference length) from named totals."""
    matches = [totals[f"match_{order}"] for order in range(1, max_order + 1)]
    counts = [totals[f"total_{order}"] for order in range(1, max_order + 1)]
    return matches, counts, int(totals["hyp_len"]), int(totals["ref_len"])


def _log_floored(value: float) -> float:
    return _LOG_ZERO if value == 0.0 else math.log(value)


def sacrebleu_score(
    matches: Sequence[Any],
    totals: Sequence[Any],
    sys_len: int,
    ref_len: int,
    *,
    smooth_method: SmoothMethod = "exp",
    smooth_value: float | None = None,
    effective_order: bool = False,
) -> dict[str, Any]:
    """sacreBLEU's BLEU (0-100) from summed statistics.

    Mirrors sacreBLEU 2.x exactly, including one quirk: with ``add-k`` the
    reported ``counts`` and ``totals`` include the added k for orders n > 1.
    """
    max_order = len(matches)
    counts = list(matches)
    total = list(totals)
    if smooth_value is None:
        smooth_value = SMOOTH_DEFAULTS[smooth_method]
    brevity_penalty = 1.0
    if sys_len < ref_len:
        brevity_penalty = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
    precisions = [0.0] * max_order
    result = {"counts": counts, "totals": total, "precisions": precisions, "bp": brevity_penalty}
    if not any(counts):
        return {"score": 0.0, **result, "sys_len": sys_len, "ref_len": ref_len}
    smooth_mteval = 1.0
    used_orders = max_order
    for order in range(1, max_order + 1):
        if smooth_method == "add-k" and order > 1:
            counts[order - 1] += smooth_value
            total[order - 1] += smooth_value
        if total[order - 1] == 0:
            break
        if effective_order:
            used_orders = order
        if counts[order - 1] == 0:
            if smooth_method == "exp":
                smooth_mteval *= 2
                precisions[order - 1] = 100.0 / (smooth_mteval * total[order - 1])
            elif smooth_method == "floor":
                precisions[order - 1] = 100.0 * smooth_value / total[order - 1]
        else:
            precisions[order - 1] = 100.0 * counts[order - 1] / total[order - 1]
    score = brevity_penalty * math.exp(sum([_log_floored(p) for p in precisions[:used_orders]]) / used_orders)
    return {"score": score, **result, "sys_len": sys_len, "ref_len": ref_len}


def bleu_score(
    matches: Sequence[int],
    totals: Sequence[int],
    translation_length: int,
    reference_length: int,
    *,
    smooth: bool = False,
    smooth_unigrams: bool = False,
) -> dict[str, Any]:
    """BLEU (0-1) with the arithmetic of tensorflow/nmt's ``compute_bleu``.

    ``smooth`` adds one to the matches and totals of the orders n > 1 (Lin & Och
    2004, "BLEU+1"); ``smooth_unigrams`` extends that to unigrams, as
    ``compute_bleu`` (and so evaluate's ``bleu``) does.
    """
    max_order = len(matches)
    precisions = [0.0] * max_order
    for index in range(max_order):
        if smooth and (index > 0 or smooth_unigrams):
            precisions[index] = (matches[index] + 1.0) / (totals[index] + 1.0)
        elif totals[index] > 0:
            precisions[index] = float(matches[index]) / totals[index]
    if min(precisions) > 0:
        geometric_mean = math.exp(sum((1.0 / max_order) * math.log(p) for p in precisions))
    else:
        geometric_mean = 0.0
    if reference_length == 0 or translation_length == 0:
        ratio = 0.0
        brevity_penalty = 0.0
    else:
        ratio = float(translation_length) / reference_length
        brevity_penalty = 1.0 if ratio > 1.0 else math.exp(1 - 1.0 / ratio)
    return {
        "bleu": geometric_mean * brevity_penalty,
        "precisions": precisions,
        "brevity_penalty": brevity_penalty,
        "length_ratio": ratio,
        "translation_length": translation_length,
        "reference_length": reference_length,
    }


def pycocoevalcap_score(
    matches: Sequence[int], totals: Sequence[int], hypothesis_length: int, reference_length: int
) -> dict[str, Any]:
    """BLEU-1 .. BLEU-n (0-1) with the float operations of pycocoevalcap's ``BleuScorer.compute_score``.

    pycocoevalcap multiplies the orders' precisions ``(matches + tiny) / (totals + small)`` one after the other and
    takes the k-th root of the running product for BLEU-k; the brevity penalty ``exp(1 - 1/ratio)`` uses
    ``ratio = (hypothesis length + tiny) / (reference length + small)``, so it applies (barely: a factor of about
    ``1 - 1e-9 / length``) even when the lengths are equal, and an empty hypothesis scores 0. Its per-sentence
    scores are the same arithmetic on one example's statistics. Returns ``bleus`` (BLEU-k for k = 1..n), the
    precisions, the brevity penalty and that ratio.
    """
    max_order = len(matches)
    bleus = []
    precisions = []
    product = 1.0
    for index in range(max_order):
        precision = float(matches[index] + COCO_TINY) / (totals[index] + COCO_SMALL)
        precisions.append(precision)
        product *= precision
        bleus.append(product ** (1.0 / (index + 1)))
    ratio = (hypothesis_length + COCO_TINY) / (reference_length + COCO_SMALL)
    brevity_penalty = 1.0
    if ratio < 1:
        brevity_penalty = math.exp(1 - 1 / ratio)
        bleus = [value * brevity_penalty for value in bleus]
    return {
        "bleus": bleus,
        "precisions": precisions,
        "brevity_penalty": brevity_penalty,
        "length_ratio": ratio,
        "translation_length": hypothesis_length,
        "reference_length": reference_length,
    }


def bleu_signature(
    *,
    nrefs: int | str,
    lowercase: bool,
    effective_order: bool,
    tokenizer: str,
    smooth_method: str,
    smooth_value: float | None,
    resampling: Mapping[str, Any] | None = None,
) -> str:
    """sacreBLEU's BLEU signature; ``resampling`` holds the bootstrap/randomization fields (``bs``, ``ar``,
    ``seed``) when a confidence interval or a paired test was computed."""
    smooth = smooth_method
    default = SMOOTH_DEFAULTS[smooth_method]
    if default is not None:
        smooth += f"[{(default if smooth_value is None else smooth_value):.2f}]"
    fields = [
        ("case", "lc" if lowercase else "mixed"),
        ("eff", effective_order),
        ("tok", tokenizer),
        ("smooth", smooth),
    ]
    return sacrebleu_signature(nrefs=nrefs, fields=fields, resampling=resampling)


def tokenized_rows(
    predictions: Sequence[str],
    references: Sequence[Sequence[str]],
    tokenize: Callable[[str], Sequence[str]],
    *,
    max_order: int,
    reference_length: ReferenceLength,
    identity: str | None,
) -> list[tuple[int, ...]]:
    """Per-example BLEU statistics of a corpus, each text tokenized with ``tokenize``.

    ``identity`` names what ``tokenize`` does (built-in tokenizer and case); with it, references' counts are
    cached per process, so scoring several systems, or every evaluation of a training run, against the same
    references counts them once. Tokenizers of unknown identity (``None``) are never cached: a cache could
    not tell a changed or different callable from the one it saw.
    """
    if identity is None:

        def counts_of(reference: str) -> ReferenceCounts:
            return reference_counts(tokenize(reference), max_order)

    else:
        find, store = _REFERENCE_COUNTS._entries.get, _REFERENCE_COUNTS.store

        def counts_of(reference: str) -> ReferenceCounts:
            key = (identity, reference, max_order)
            entry = find(key)
            if entry is None:
                return store(key, reference_counts(tokenize(reference), max_order))
            return entry[0]

    return [
        statistics_from_counts(
            tokenize(prediction),
            [counts_of(reference) for reference in example_references],
            max_order=max_order,
            reference_length=reference_length,
        )
        for prediction, example_references in zip(predictions, references, strict=True)
    ]


@dataclass(frozen=True)
class SacreBleuOptions:
    """Options of sacreBLEU's BLEU. Tokenizer, case and order determine the statistics; the rest the score."""

    tokenize: str = "13a"
    lowercase: bool = False
    smooth_method: SmoothMethod = "exp"
    smooth_value: float | None = None
    effective_order: bool = False
    max_order: int = 4

    @property
    def tokenizer(self) -> MtTokenizer:
        return get_tokenizer(self.tokenize)

    def stats_signature(self) -> str:
        """Identifies the options that the per-example statistics depend on."""
        case = "lc" if self.lowercase else "mixed"
        return f"sacrebleu|tok:{self.tokenizer.name}|case:{case}|order:{self.max_order}"

    def identity(self) -> str:
        """What the preprocessing does, for cache keys: tokenizer, tokenizers' version and case."""
        return f"{self.tokenizer.name}@{TOKENIZERS_VERSION}|lc:{self.lowercase}"

    def __call__(self, text: str) -> list[str]:
        return self.preprocess(text)

    def preprocess(self, text: str) -> list[str]:
        """sacreBLEU's segment preprocessing: optional lowercasing, trailing whitespace removal, tokenization."""
        if self.lowercase:
            text = text.lower()
        return self.tokenizer(text.rstrip())


def sacrebleu_rows(
    predictions: Sequence[str], references: Sequence[Sequence[str]], options: SacreBleuOptions
) -> list[tuple[int, ...]]:
    """Per-example statistics (in :func:`bleu_schema` order) exactly as sacreBLEU extracts them."""
    return tokenized_rows(
        predictions, references, options, max_order=options.max_order, reference_length="closest",
        identity=options.identity(),
    )


def sacrebleu_from_totals(
    totals: Mapping[str, Any], options: SacreBleuOptions, *, resampling: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """sacreBLEU's corpus BLEU from named totals, with its signature (naming ``resampling`` when given)."""
    result = _sacrebleu_of_totals(totals, options)
    result["signature"] = bleu_signature(
        nrefs=nrefs_label(totals["min_refs"], totals["max_refs"]),
        lowercase=options.lowercase,
        effective_order=options.effective_order,
        tokenizer=options.tokenizer.name,
        smooth_method=options.smooth_method,
        smooth_value=options.smooth_value,
        resampling=resampling,
    )
    return result


def sacrebleu_corpus_score(totals: Mapping[str, Any], options: SacreBleuOptions) -> float:
    """sacreBLEU's corpus BLEU (0-100) of named totals, without the signature (for resampling)."""
    return _sacrebleu_of_totals(totals, options)["score"]


def _sacrebleu_of_totals(totals: Mapping[str, Any], options: SacreBleuOptions) -> dict[str, Any]:
    """:func:`sacrebleu_score` of named totals with the options' smoothing and effective order."""
    return sacrebleu_score(*split_totals(totals, options.max_order), smooth_method=options.smooth_method,
                           smooth_value=options.smooth_value, effective_order=options.effective_order)


def tokenizer_identity(tokenizer: Callable[[str], Sequence[str]]) -> str | None:
    """What a tokenizer does, when that is known: a built-in tokenizer's name (with the tokenizers' version)
    or the tokenizer's own ``signature()``; ``None`` for any other callable."""
    name = builtin_tokenizer_name(tokenizer)
    if name is not None:
        return f"{name}@{TOKENIZERS_VERSION}"
    signature = getattr(tokenizer, "signature", None)
    if callable(signature):
        return f"custom:{signature()}"
    return None


def tokenizer_label(tokenizer: Callable[[str], Sequence[str]]) -> str:
    """A tokenizer's name in statistics signatures. A callable of unknown identity is labelled by its name
    and a label of the object, so its statistics merge only with statistics made with the same object in this
    process."""
    name = builtin_tokenizer_name(tokenizer)
    if name is not None:
        return name
    signature = getattr(tokenizer, "signature", None)
    if callable(signature):
        return str(signature())
    qualname = getattr(tokenizer, "__qualname__", type(tokenizer).__qualname__)
    return f"unverified:{qualname}:{object_label(tokenizer)}"


def check_orders(metric: str, name: str, value: Any) -> tuple[int, ...] | None:
    """None, or a non-empty list of BLEU orders (integers of at least 1), returned sorted without repeats."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise TypeError(f"{metric}: `{name}` must be a list of BLEU orders such as [1, 2, 3, 4], got "
                        f"{type(value).__name__} ({value!r:.60})")
    if not value:
        raise ValueError(f"{metric}: `{name}` is empty; list the BLEU orders to report, such as [1, 2, 3, 4]")
    for index, order in enumerate(value):
        if isinstance(order, bool) or not isinstance(order, int):
            raise TypeError(f"{metric}: `{name}[{index}]` must be an integer, got {type(order).__name__} "
                            f"({order!r:.60})")
        if order < 1:
            raise ValueError(f"{metric}: `{name}[{index}]` must be at least 1, got {order}")
    return tuple(sorted(set(value)))


@dataclass(frozen=True)
class BleuOptions(TextBounds):
    """Options of evaluate's ``bleu``: any tokenizer callable, n-gram order, smoothing; and the extras.

    ``evaluate_compatible`` reproduces evaluate's numbers: shortest reference
    length and add-one smoothing of every order including unigrams.
    ``pycocoevalcap_compatible`` reproduces pycocoevalcap's (and so nlg-eval's)
    ``Bleu``: whitespace tokens unless a ``tokenizer`` is given, the closest
    reference length, its tiny/small epsilons instead of smoothing. ``orders``
    adds BLEU-k for each listed k (from the same statistics), and
    ``sentence_scores`` every example's own score. A tokenizer with a
    ``signature()`` method (a string naming what it does) is treated as known:
    its tokenizations are cached and its statistics merge across processes; any
    other callable is called afresh every time.
    """

    metric_name = "bleu"

    # None: mteval-v13a (evaluate's default), or whitespace splitting with `pycocoevalcap_compatible`.
    tokenizer: Callable[[str], Sequence[str]] | None = option(None, optional(function), stats=True)
    max_text_chars: int = bound(DEFAULT_BLEU_MAX_TEXT_CHARS)
    max_order: int = option(4, integer(minimum=1), stats=True)
    smooth: bool = option(False, boolean)
    evaluate_compatible: bool = option(False, boolean, stats=True)
    pycocoevalcap_compatible: bool = option(False, boolean)
    orders: tuple[int, ...] | None = option(None, check_orders)
    sentence_scores: bool = option(False, boolean)

    def validate(self, metric: str) -> None:
        if self.evaluate_compatible and self.pycocoevalcap_compatible:
            raise ValueError(f"{metric}: `evaluate_compatible` and `pycocoevalcap_compatible` are two different "
                             f"arithmetics; pass at most one of them")
        if self.pycocoevalcap_compatible and self.smooth:
            raise ValueError(f"{metric}: `smooth=True` with `pycocoevalcap_compatible=True`: pycocoevalcap does not "
                             f"smooth (its tiny/small epsilons keep every precision positive); drop `smooth`")
        if self.orders is not None and self.orders[-1] > self.max_order:
            raise ValueError(f"{metric}: `orders` asks for BLEU-{self.orders[-1]} but `max_order` is "
                             f"{self.max_order}; list orders up to `max_order` or raise `max_order`")

    @property
    def tokenize_function(self) -> Callable[[str], Sequence[str]]:
        """The tokenizer in use: the given one, or the mode's default."""
        if self.tokenizer is not None:
            return self.tokenizer
        return tokenize_none if self.pycocoevalcap_compatible else tokenize_13a

    @property
    def reference_length(self) -> ReferenceLength:
        return "shortest" if self.evaluate_compatible else "closest"

    def stats_signature(self) -> str:
        """Identifies the options that the per-example statistics depend on."""
        return (f"bleu|tok:{tokenizer_label(self.tokenize_function)}|order:{self.max_order}"
                f"|reflen:{self.reference_length}")

    def __call__(self, text: str) -> Sequence[str]:
        return self.tokenize(text)

    def tokenize(self, text: str) -> Sequence[str]:
        """Tokens of ``text``; a tokenizer that returns a string instead of tokens is an error."""
        tokens = self.tokenize_function(text)
        if isinstance(tokens, str) or not isinstance(tokens, Sequence):
            raise TypeError(
                f"bleu: `tokenizer` must return a list of tokens, got {type(tokens).__name__} for {text[:40]!r}; "
                f"wrap a string-returning tokenizer as `lambda text: tok(text).split()`"
            )
        return tokens


def bleu_rows(
    predictions: Sequence[str], references: Sequence[Sequence[str]], options: BleuOptions
) -> list[tuple[int, ...]]:
    """Per-example statistics (in :func:`bleu_schema` order) for evaluate's ``bleu``."""
    return tokenized_rows(
        predictions,
        references,
        options,
        max_order=options.max_order,
        reference_length=options.reference_length,
        identity=tokenizer_identity(options.tokenize_function),
    )


def bleu_from_totals(totals: Mapping[str, Any], options: BleuOptions) -> dict[str, Any]:
    """evaluate's ``bleu`` result from named totals (a corpus's, or one example's for its sentence score), with
    ``bleu_<k>`` for each of ``options.orders``: BLEU-k from the first k orders of the same totals, equal to the
    ``bleu`` of ``max_order=k``."""
    matches, counts, hypothesis_length, reference_length = split_totals(totals, options.max_order)
    if options.pycocoevalcap_compatible:
        scored = pycocoevalcap_score(matches, counts, hypothesis_length, reference_length)
        bleus = scored.pop("bleus")
        result = {"bleu": bleus[-1], **scored}
        for order in options.orders or ():
            result[f"bleu_{order}"] = bleus[order - 1]
        return result
    result = bleu_score(matches, counts, hypothesis_length, reference_length, smooth=options.smooth,
                        smooth_unigrams=options.evaluate_compatible)
    for order in options.orders or ():
        result[f"bleu_{order}"] = bleu_score(matches[:order], counts[:order], hypothesis_length, reference_length,
                                             smooth=options.smooth,
                                             smooth_unigrams=options.evaluate_compatible)["bleu"]
    return result


def bleu_sentence_scores(examples: Sequence[Mapping[str, Any]], options: BleuOptions) -> dict[str, list[float]]:
    """Each example's own BLEU from its named statistics (the corpus arithmetic on one example):
    ``sentence_scores`` (BLEU-``max_order``), and ``sentence_bleu_<k>`` for each of ``options.orders``."""
    results = [bleu_from_totals(example, options) for example in examples]
    scores = {"sentence_scores": [result["bleu"] for result in results]}
    for order in options.orders or ():
        scores[f"sentence_bleu_{order}"] = [result[f"bleu_{order}"] for result in results]
    return scores
