"""TER (translation edit rate) as a pure function of per-example sufficient statistics, with sacreBLEU 2.x's numbers.

Per example: the fewest edits (insertions, deletions, substitutions, shifts)
over its references and the average length of its references, both as
sacreBLEU's ``TER`` extracts them after Tercom tokenization. The corpus score
is 100 x (summed edits) / (summed average reference lengths); a corpus whose
references are all empty scores 100 when it has edits, else 0. The average
reference lengths are floats and are summed with ``fsum`` (exactly rounded);
sacreBLEU sums them left to right, so with several references per example the
two sums (and scores) may differ in their last bits, never beyond 1e-12 relative.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .core_checks import check_bool
from .core_options import boolean, bound, option
from .core_process import MIB, bounded_cache
from .core_resample_options import BootstrapOptions, PairedTestOptions
from .core_stats import StatField, StatsSchema
from .core_mt_signature import nrefs_label, sacrebleu_signature
from .core_ter_align import TerReference, ter_reference, translation_edit_rate
from .core_ter_tokenize import TercomTokenizer
from .core_resources import TextBounds, refuse_above

METRIC = "ter"

# Tokenized references (and their lookup tables) kept per process.
REFERENCE_CACHE_BYTES = 64 * MIB
# Statistics of (prediction, references) pairs kept per process: systems scored against the same references
# often produce the same output for a segment, and resampling scores a baseline against the same references.
ROW_CACHE_BYTES = 16 * MIB
# The default of ``max_pair_cells``, the largest hypothesis x reference token product scored: the shift search
# computes up to 1,000 edit distances per pair (as sacreBLEU's), each bit-parallel over hypothesis x reference
# cells; a pair at this default takes up to about a minute (a hypothesis of 2,048 tokens made of a handful of
# words, reordered), and a larger one minutes to hours, in sacreBLEU too.
DEFAULT_MAX_PAIR_CELLS = 1 << 22
MAX_PAIR_CELLS = DEFAULT_MAX_PAIR_CELLS

_OPTION_NAMES = ("normalized", "ignore_punct", "support_zh_ja_chars", "case_sensitive")


@dataclass(frozen=True)
class TerOptions(PairedTestOptions, BootstrapOptions, TextBounds):
    """The keyword options of evaluate's ``ter`` (sacreBLEU's normalized, no_punct, asian_support,
    case_sensitive), sacreBLEU's resampling options, and ``sentence_scores``."""

    metric_name = METRIC

    normalized: bool = option(False, boolean, stats=True)
    ignore_punct: bool = option(False, boolean, stats=True)
    support_zh_ja_chars: bool = option(False, boolean, stats=True)
    case_sensitive: bool = option(False, boolean, stats=True)
    sentence_scores: bool = option(False, boolean)
    # the bound of one (prediction, reference) pair's shift search, in prediction x reference tokens; it never
    # changes a result, only refuses
    max_pair_cells: int = bound(DEFAULT_MAX_PAIR_CELLS)

    def __post_init__(self) -> None:
        for name in _OPTION_NAMES:
            check_bool(METRIC, name, getattr(self, name))

    @property
    def tokenizer(self) -> TercomTokenizer:
        return TercomTokenizer(normalized=self.normalized, no_punct=self.ignore_punct,
                               asian_support=self.support_zh_ja_chars, case_sensitive=self.case_sensitive)

    def stats_signature(self) -> str:
        """Identifies the options that the per-example statistics depend on (all four: the tokenization)."""
        return (
            f"ter|case:{'mixed' if self.case_sensitive else 'lc'}|norm:{_yes(self.normalized)}"
            f"|punct:{_yes(not self.ignore_punct)}|asian:{_yes(self.support_zh_ja_chars)}"
        )


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def ter_schema(metric: str = METRIC) -> StatsSchema:
    """The statistics of TER: fewest edits, average reference length, number of references."""
    return StatsSchema(
        metric,
        (
            StatField("num_edits"),
            StatField("ref_length", "fsum"),
            StatField("min_refs", "min"),
            StatField("max_refs", "max"),
        ),
    )


def _reference_size(key: tuple[str, TercomTokenizer], value: TerReference) -> int:
    return 2 * len(key[0]) + 400 + 220 * value.length


def _row_size(key: tuple[str, tuple[str, ...], TercomTokenizer], value: tuple[int, float]) -> int:
    return 2 * (len(key[0]) + sum(len(text) for text in key[1])) + 300 + 60 * len(key[1])


_REFERENCES = bounded_cache(__file__, "mt.ter_references", REFERENCE_CACHE_BYTES, _reference_size)
_ROWS = bounded_cache(__file__, "mt.ter_rows", ROW_CACHE_BYTES, _row_size)


def reference_words(text: str, tokenizer: TercomTokenizer) -> list[str]:
    """A reference's tokens as sacreBLEU's TER makes them: the reference is tokenized twice (once when the
    references are cached, once when their words are extracted), which changes a few texts' tokens."""
    return tokenizer.words(tokenizer(text.rstrip()))


def reference_of(text: str, tokenizer: TercomTokenizer) -> TerReference:
    """A tokenized reference and its lookup tables, cached per process by text and tokenizer options."""
    key = (text, tokenizer)
    return _REFERENCES.get(key, lambda: ter_reference(reference_words(text, tokenizer)))


def ter_statistics(hypothesis: Sequence[str], references: Sequence[TerReference]) -> tuple[int, float]:
    """(fewest edits over the references, average reference length) of one tokenized example."""
    if not references:
        raise ValueError(f"{METRIC}: an example has no reference; every prediction needs at least one")
    words = list(hypothesis)
    best = None
    total_length = 0
    for reference in references:
        edits = translation_edit_rate(words, reference)[0]
        total_length += reference.length
        if best is None or edits < best:
            best = edits
    return best, total_length / len(references)  # type: ignore[return-value]


def _most_tokens(text: str) -> int:
    """An upper bound of a text's Tercom tokens from its characters alone (every token holds at least one
    character of the text, and normalization at most doubles a text)."""
    return 2 * len(text) + 1


def check_pair_cells(prediction: str, references: Sequence[str], tokenizer: TercomTokenizer, bound: int,
                     index: int) -> None:
    """Refuse an example (``predictions[index]``) one of whose (prediction, reference) pairs has more prediction x
    reference tokens than ``bound`` (``max_pair_cells``): the shift search's work grows with that product. Texts
    are tokenized for the check only where their characters do not already show the pair within the bound."""
    most = _most_tokens(prediction)
    if most * max(map(_most_tokens, references), default=0) <= bound:
        return
    length = len(tokenizer.words(prediction))
    for number, text in enumerate(references):
        if length * _most_tokens(text) <= bound:
            continue
        reference_length = len(reference_words(text, tokenizer))
        refuse_above(
            METRIC,
            work=f"a prediction of {length} tokens against a reference of {reference_length} tokens is too long "
                 f"for TER's quadratic shift search (predictions[{index}] against references[{index}][{number}]); "
                 f"prediction x reference tokens",
            amount=length * reference_length, option_name="max_pair_cells", bound=bound,
            default=DEFAULT_MAX_PAIR_CELLS, remedy="split the texts into segments scored as separate examples")


def example_statistics(prediction: str, references: Sequence[str], tokenizer: TercomTokenizer) -> tuple[int, float]:
    """(fewest edits, average reference length) of one example's texts, cached per process."""
    key = (prediction, tuple(references), tokenizer)
    return _ROWS.get(
        key,
        lambda: ter_statistics(tokenizer.words(prediction), [reference_of(text, tokenizer) for text in references]),
    )


def ter_rows(
    predictions: Sequence[str], references: Sequence[Sequence[str]], options: TerOptions, start: int = 0
) -> list[tuple[int, float, int, int]]:
    """Per-example statistics in :func:`ter_schema` order, exactly as sacreBLEU extracts them. Every example of the
    batch is checked against ``max_pair_cells`` before any is scored."""
    tokenizer = options.tokenizer
    for index, (prediction, example_references) in enumerate(zip(predictions, references, strict=True)):
        check_pair_cells(prediction, example_references, tokenizer, options.max_pair_cells, start + index)
    rows = []
    for index, (prediction, example_references) in enumerate(zip(predictions, references, strict=True)):
        count = len(example_references)
        try:
            statistics = example_statistics(prediction, example_references, tokenizer)
        except ValueError as error:
            raise ValueError(f"{error} (predictions[{start + index}])") from None
        rows.append((*statistics, count, count))
    return rows


def ter_score(num_edits: float, ref_length: float) -> float:
    """TER (0-100 and beyond) of summed statistics, as sacreBLEU computes it."""
    if ref_length > 0:
        score = num_edits / ref_length
    elif num_edits > 0:
        score = 1.0  # empty references and a non-empty hypothesis
    else:
        score = 0.0  # both empty
    return 100 * score


def ter_signature(nrefs: int | str, options: TerOptions, resampling: Mapping[str, Any] | None = None) -> str:
    """sacreBLEU's TER signature, e.g. ``nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.6.0``."""
    fields = [
        ("case", "mixed" if options.case_sensitive else "lc"),
        ("tok", "tercom"),
        ("norm", options.normalized),
        ("punct", not options.ignore_punct),
        ("asian", options.support_zh_ja_chars),
    ]
    return sacrebleu_signature(nrefs=nrefs, fields=fields, resampling=resampling)


def ter_from_totals(
    totals: Mapping[str, Any], options: TerOptions, *, resampling: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """evaluate's ``ter`` result (score, num_edits, ref_length) and sacreBLEU's signature."""
    num_edits = int(totals["num_edits"])
    ref_length = float(totals["ref_length"])
    return {
        "score": ter_score(num_edits, ref_length),
        "num_edits": num_edits,
        "ref_length": ref_length,
        "signature": ter_signature(nrefs_label(totals["min_refs"], totals["max_refs"]), options, resampling),
    }


def ter_score_of_row(options: TerOptions) -> Callable[[Sequence[Any]], float]:
    """A function from one row of (summed) statistics in schema order to TER, for resampling."""

    def score(row: Sequence[Any]) -> float:
        return ter_score(float(row[0]), float(row[1]))

    return score


def clear_caches() -> None:
    """Forget every tokenized reference and cached example statistics (as a fresh process)."""
    _REFERENCES.clear()
    _ROWS.clear()
