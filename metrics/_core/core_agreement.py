"""Inter-annotator agreement from (item, annotator, label) ratings: statistics, checks, coefficients, intervals.

The statistics of one rating are a count, ``{(item, annotator, label): 1}`` (a keyed field): they sum exactly in
any order, batching or sharding, and their totals are the corpus's ratings by item, so the ratings of one item
may arrive in different batches, ``datasets.Dataset.map`` shards or machines. Every coefficient is then computed
from the totals (:mod:`core_agreement_coefficients`), as are the bootstrap intervals, which resample the items
with two or more ratings (sorted by id, so a seed gives the same intervals for any input order or sharding) with
the shared core's draws (``core_resample.bootstrap_weights``, sacreBLEU's) and its percentile rule.

Cohen's kappa needs exactly two annotators, each rating every item; Fleiss' kappa the same number of ratings on
every item; alpha and percentage agreement ignore items with one rating (nothing to pair) and need at least one
item with two. A coefficient whose chance agreement is already perfect (every rating it counts has one label) is
0/0: an error for the corpus, a resample left out of the interval (with a warning) in the bootstrap. The
correlation-based coefficients (:mod:`core_agreement_correlation`) need numeric labels (Pearson) or ordered ones
(Spearman) and at least one annotator pair, or annotator, whose correlation is defined.

Resources: every coefficient is linear in the ratings (times the resamples), except ratio alpha, which compares the
distinct labels of each item pairwise and those of the whole corpus pairwise (once per resample), and the pairwise
correlations, which pair the annotators of each item. Before computing either, :func:`check_resources` refuses
with a ``ValueError`` when those pairs exceed ``max_label_pairs`` or ``max_annotator_pairs``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np

from .core_agreement_coefficients import ItemStatistics, alpha_pairs, cohen_kappa, fleiss_kappa, krippendorff_alpha
from .core_agreement_coefficients import percent_agreement
from .core_agreement_correlation import CORRELATIONS, COUNTS, CorrelationAgreement, correlation_agreement
from .core_agreement_options import DEFAULT_MAX_ANNOTATOR_PAIRS, DEFAULT_MAX_LABEL_PAIRS, AgreementOptions
from .core_agreement_table import RatingTable, rating_table
from .core_checks import warn_caller
from .core_resample import bootstrap_weights, percentile_interval
from .core_resources import DEFAULT_MAX_RESAMPLE_WORK, refuse_above
from .core_stats import EXAMPLES_FIELD, SIGNATURE_FIELD, StatField, StatsSchema

RATINGS = "ratings"
NAMES = {"krippendorff_alpha": "Krippendorff's alpha", "fleiss_kappa": "Fleiss' kappa",
         "cohen_kappa": "Cohen's kappa", "percent_agreement": "percentage agreement",
         "pairwise_spearman": "mean pairwise Spearman", "pairwise_pearson": "mean pairwise Pearson",
         "leave_one_out_spearman": "leave-one-out Spearman", "leave_one_out_pearson": "leave-one-out Pearson"}


def agreement_schema(metric: str) -> StatsSchema:
    """One keyed field: the count of each (item, annotator, label)."""
    return StatsSchema(metric, (StatField(RATINGS, "keyed"),))


def agreement_rows(columns: Mapping[str, Sequence[Any]]) -> list[tuple[dict[tuple[str, str, Any], int]]]:
    """One row per rating: ``{(item, annotator, label): 1}``."""
    return [({key: 1},) for key in zip(columns["items"], columns["annotators"], columns["labels"], strict=True)]


def agreement_batch_totals(columns: Mapping[str, Sequence[Any]], signature: str) -> dict[str, Any]:
    """The totals of a batch's rows, counted at once."""
    counts = Counter(zip(columns["items"], columns["annotators"], columns["labels"], strict=True))
    return {RATINGS: dict(counts), EXAMPLES_FIELD: len(columns["items"]), SIGNATURE_FIELD: signature}


# -- checks of what each coefficient needs ---------------------------------------------------------------------


def _needs_order(metric: str, table: RatingTable, what: str) -> None:
    if not table.ordered:
        raise ValueError(f"{metric}: {what} needs the order of the labels, and string labels have none; pass "
                         f"`value_domain`, the labels in order (e.g. ['low', 'mid', 'high'])")


def _needs_numbers(metric: str, table: RatingTable, level: str) -> None:
    if not table.numeric:
        raise TypeError(f"{metric}: {level} alpha needs numeric `labels`, got strings such as {table.values[0]!r:.40};"
                        f" use level_of_measurement='nominal', or 'ordinal' with `value_domain`")
    if level == "ratio" and table.values[0] < 0:
        raise ValueError(f"{metric}: ratio alpha needs labels of at least 0 (a ratio scale starts at an absolute "
                         f"zero), got {table.values[0]} in `labels`; use level_of_measurement='interval'")


_MINUTE = ", the default: about a minute's work on a 2-core machine"
# The bootstrap's work per resample and rating, in units of the closed-form coefficients' (nominal, interval and
# ratio alpha, Fleiss' and Cohen's kappa, percentage agreement: about 0.08 us a rating and resample): ordinal alpha
# recomputes mid-ranks (about 0.2 us), the correlations rank or sort every resample's rows (about 0.5 us).
RESAMPLE_COST = {"krippendorff_alpha": 1, "fleiss_kappa": 1, "cohen_kappa": 1, "percent_agreement": 1,
                 "pairwise_spearman": 6, "pairwise_pearson": 6, "leave_one_out_spearman": 6,
                 "leave_one_out_pearson": 6}


def resample_work(ratings: int, options: AgreementOptions) -> int:
    """The bootstrap's work: resamples x ratings x the coefficients' costs per rating (:data:`RESAMPLE_COST`)."""
    if not options.confidence:
        return 0
    costs = sum(3 if name == "krippendorff_alpha" and options.level_of_measurement == "ordinal" else
                RESAMPLE_COST[name] for name in options.coefficients)
    return options.n_bootstrap * ratings * costs


def check_resample_work(metric: str, ratings: int, options: AgreementOptions) -> None:
    """Refuse a bootstrap whose work (:func:`resample_work`) exceeds ``max_resample_work``, before any resample."""
    refuse_above(metric, work=f"the bootstrap interval (confidence=True) recomputes {len(options.coefficients)} "
                              f"coefficient(s) on {ratings:,} ratings {options.n_bootstrap:,} times; resamples x "
                              f"ratings x the coefficients' cost per rating (1 each, ordinal alpha 3, a correlation 6)",
                 amount=resample_work(ratings, options), option_name="max_resample_work",
                 bound=options.max_resample_work, default=DEFAULT_MAX_RESAMPLE_WORK,
                 remedy="lower n_bootstrap, ask for fewer coefficients, or score a sample of the items")


def check_resources(metric: str, table: RatingTable, options: AgreementOptions) -> None:
    """Refuse the bootstrap, ratio alpha or a pairwise correlation whose work exceeds the options' bounds, before
    computing any (the bootstrap's here too, for results from merged statistics, which the base does not check)."""
    check_resample_work(metric, table.num_ratings, options)
    resamples = options.n_bootstrap if options.confidence else 0
    if "krippendorff_alpha" in options.coefficients and options.level_of_measurement == "ratio":
        within, labels = alpha_pairs(table, "ratio")
        pairs = within + labels * (1 + resamples)
        if pairs > options.max_label_pairs:
            again = f", once more for each of the {resamples:,} resamples" if resamples else ""
            raise ValueError(
                f"{metric}: ratio alpha compares {pairs:,} pairs of labels ({within:,} pairs of distinct labels within "
                f"items, and {labels:,} pairs of the {len(table.values):,} distinct labels{again}), more than "
                f"max_label_pairs={options.max_label_pairs:,}"
                f"{_MINUTE if options.max_label_pairs == DEFAULT_MAX_LABEL_PAIRS else ''}; round the labels (fewer "
                f"distinct values), use level_of_measurement='interval' (computed without pairs), "
                f"{'lower n_bootstrap, ' if resamples else ''}or raise max_label_pairs")
    pairwise = [name for name in options.coefficients if name.startswith("pairwise_")]
    if pairwise:
        sizes = [len(ratings) for ratings in table.ratings]
        pairs = sum(size * (size - 1) // 2 for size in sizes) * (1 + resamples)
        if pairs > options.max_annotator_pairs:
            again = f" (times {1 + resamples:,}: the corpus and each resample)" if resamples else ""
            raise ValueError(
                f"{metric}: {NAMES[pairwise[0]]} correlates the labels of every pair of annotators of each item: "
                f"{pairs:,} annotator pairs{again} for {len(table.annotators):,} annotators on {len(sizes):,} items "
                f"(up to {max(sizes):,} ratings an item), more than max_annotator_pairs="
                f"{options.max_annotator_pairs:,}"
                f"{_MINUTE if options.max_annotator_pairs == DEFAULT_MAX_ANNOTATOR_PAIRS else ''}; use a leave-one-out "
                f"coefficient (linear in the ratings), {'lower n_bootstrap, ' if resamples else ''}or raise "
                f"max_annotator_pairs")


def _alpha(metric: str, table: RatingTable, options: AgreementOptions) -> ItemStatistics:
    level = options.level_of_measurement
    if level == "ordinal":
        _needs_order(metric, table, "ordinal alpha")
    elif level != "nominal":
        _needs_numbers(metric, table, level)
    return krippendorff_alpha(table, level)


def _fleiss(metric: str, table: RatingTable, options: AgreementOptions) -> ItemStatistics:
    sizes: dict[int, str] = {}
    for item, ratings in zip(table.items, table.ratings, strict=True):
        sizes.setdefault(len(ratings), item)
    if len(sizes) > 1:
        (many, first), (other, second) = sorted(sizes.items())[-1], sorted(sizes.items())[0]
        raise ValueError(f"{metric}: Fleiss' kappa needs the same number of ratings on every item, but `items` has "
                         f"{many} ratings of item {first!r} and {other} of item {second!r}; leave 'fleiss_kappa' out "
                         f"of `coefficients` for incomplete data (Krippendorff's alpha takes it)")
    return fleiss_kappa(table, next(iter(sizes)))


def _cohen(metric: str, table: RatingTable, options: AgreementOptions) -> ItemStatistics:
    if len(table.annotators) != 2:
        shown = ", ".join(repr(annotator) for annotator in table.annotators[:5])
        raise ValueError(f"{metric}: Cohen's kappa is for two annotators, and `annotators` has "
                         f"{len(table.annotators)} ({shown}{', ...' if len(table.annotators) > 5 else ''}); use "
                         f"Fleiss' kappa or Krippendorff's alpha for more")
    for item, ratings in zip(table.items, table.ratings, strict=True):
        if len(ratings) != 2:
            absent = next(annotator for annotator in table.annotators if annotator not in ratings)
            raise ValueError(f"{metric}: Cohen's kappa needs both annotators' labels on every item, but item {item!r} "
                             f"of `items` has no rating by {absent!r}; leave 'cohen_kappa' out of `coefficients` "
                             f"for incomplete data (Krippendorff's alpha takes it)")
    if options.weights is not None:
        _needs_order(metric, table, f"Cohen's kappa with {options.weights} weights")
    return cohen_kappa(table, options.weights)


def _percent(metric: str, table: RatingTable, options: AgreementOptions) -> ItemStatistics:
    return percent_agreement(table)


def _correlation_numbers(metric: str, table: RatingTable, name: str) -> np.ndarray:
    """The labels as numbers for a correlation: their values (Pearson needs numeric labels), or for Spearman of
    string labels in a given order, their positions in ``value_domain``."""
    kind = CORRELATIONS[name][1]
    if table.numeric:
        return np.asarray(table.values, dtype=np.float64)
    if kind == "pearson":
        raise TypeError(f"{metric}: {NAMES[name]} needs numeric `labels`, got strings such as {table.values[0]!r:.40}; "
                        f"use a Spearman coefficient with `value_domain` (the labels in order), or numbers")
    _needs_order(metric, table, NAMES[name])
    return np.arange(len(table.values), dtype=np.float64)


def _correlation(metric: str, table: RatingTable, options: AgreementOptions, name: str) -> CorrelationAgreement:
    """A correlation coefficient's rows, after checking that some pair (or annotator) has a defined correlation; the
    ones left out for constant labels are named in a warning."""
    family, kind = CORRELATIONS[name]
    rows, groups = correlation_agreement(table, _correlation_numbers(metric, table, name), family, kind)
    values = rows.group_values()
    sizes = np.bincount(rows.groups, minlength=rows.n_groups)
    constant = [groups[index] for index in np.flatnonzero(np.isnan(values) & (sizes >= 2))]
    what = "annotator pair" if family == "pairwise" else "annotator"
    if np.isnan(values).all():
        needs = ("two annotators who rated two or more items in common" if family == "pairwise"
                 else "an annotator who rated two or more items that others rated too")
        held = f"; {len(constant)} {what}(s) had constant labels" if constant else ""
        raise ValueError(f"{metric}: {NAMES[name]} is undefined: it needs {needs}, with labels that vary (in "
                         f"`annotators` and `labels`){held}")
    if constant:
        shown = ", ".join("-".join(repr(part) for part in group) for group in constant[:3])
        more = ", ..." if len(constant) > 3 else ""
        warn_caller(f"{metric}: {NAMES[name]}: {len(constant)} {what}(s) ({shown}{more}) have constant labels on the "
                    f"items they share, so their correlation is undefined and left out of the mean")
    return rows


STATISTICS: dict[str, Callable[[str, RatingTable, AgreementOptions], ItemStatistics | CorrelationAgreement]] = {
    "krippendorff_alpha": _alpha, "fleiss_kappa": _fleiss, "cohen_kappa": _cohen, "percent_agreement": _percent,
    **{name: partial(_correlation, name=name) for name in CORRELATIONS},
}


# -- the result ---------------------------------------------------------------------------------------------------


_UNDEFINED_RESAMPLE = {False: "one label only", True: "no correlation that is defined"}


def _interval(metric: str, name: str, statistics: ItemStatistics | CorrelationAgreement,
              options: AgreementOptions) -> tuple[float, float]:
    """The percentile interval of the coefficient over bootstrap resamples of the items; resamples where it is
    undefined (one label; no defined correlation) are left out, with a warning."""
    scores = np.array([score for weights in bootstrap_weights(statistics.size, n_samples=options.n_bootstrap,
                                                              seed=options.seed)
                       for score in statistics.resampled_scores(weights)])
    defined = scores[~np.isnan(scores)]
    if not len(defined):
        raise ValueError(f"{metric}: {NAMES[name]} is undefined on every bootstrap resample of the items (each "
                         f"holds {_UNDEFINED_RESAMPLE[name in CORRELATIONS]}); the corpus is too small for an interval "
                         f"(confidence=False)")
    if len(defined) < len(scores):
        warn_caller(f"{metric}: {NAMES[name]} is undefined on {len(scores) - len(defined)} of {len(scores)} "
                    f"bootstrap resamples (they hold {_UNDEFINED_RESAMPLE[name in CORRELATIONS]}); the interval is of "
                    f"the other {len(defined)}")
    interval = percentile_interval(defined, level=options.confidence_level, seed=options.seed)
    return interval.low, interval.high


def agreement_from_totals(metric: str, totals: Mapping[str, Any], options: AgreementOptions) -> dict[str, Any]:
    """Each requested coefficient (with its interval when ``confidence``), and the counts of items, ratings and
    annotators, from the merged rating counts."""
    table = rating_table(metric, totals[RATINGS], options.value_domain)
    pairable = len(table.pairable())
    if not pairable:
        raise ValueError(f"{metric}: no item of `items` has two or more ratings, so there is no agreement to measure "
                         f"({len(table.items)} items, one rating each)")
    check_resources(metric, table, options)
    result: dict[str, Any] = {}
    counts: dict[str, int] = {}
    for name in options.coefficients:
        statistics = STATISTICS[name](metric, table, options)
        if isinstance(statistics, CorrelationAgreement):
            counts[COUNTS[CORRELATIONS[name][0]]] = int((~np.isnan(statistics.group_values())).sum())
        value = statistics.value()
        if math.isnan(value):
            labels = sorted({table.values[value] for position in table.pairable()
                             for value in table.ratings[position].values()})
            raise ValueError(f"{metric}: {NAMES[name]} is undefined: every rating it counts has the same label "
                             f"({labels[0]!r:.40} in `labels`), so chance agreement is perfect too (0/0); ask for "
                             f"'percent_agreement' alone")
        result[name] = value
        if options.confidence:
            result[f"{name}_low"], result[f"{name}_high"] = _interval(metric, name, statistics, options)
    result.update(num_items=len(table.items), num_ratings=table.num_ratings, num_annotators=len(table.annotators),
                  num_unpairable_items=len(table.items) - pairable, **counts)
    return result
