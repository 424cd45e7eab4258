"""Coreference scores of predicted (response) against gold (key) entities, as the CoNLL-2012 reference scorer
v8.01 (Pradhan et al. 2014) and coval (Moosavi & Strube 2016) define them.

A document's entities are lists of mentions (``(start, end)`` token spans); a mention belongs to at most one
entity per side. Every measure is a ratio of sums over documents (the scorers' micro-average), so each document
gives numerators and denominators that merge exactly across shards:

- mentions: mentions found in both / key mentions (recall), / response mentions (precision);
- MUC (Vilain et al. 1995): per key entity ``|k| - partitions of k by the response`` over ``|k| - 1`` (mentions
  the response lacks are partitions of their own); precision the same with the sides swapped;
- B-cubed (Bagga & Baldwin 1998): ``sum |k & r|^2 / |k|`` over the key mentions; precision swapped;
- CEAF (Luo 2005) on the optimal one-to-one alignment of key and response entities: CEAF-m with ``|k & r|``
  over the mentions of each side, CEAF-e with ``2 |k & r| / (|k| + |r|)`` over the entities of each side;
- LEA (Moosavi & Strube 2016): each key entity weighs its size times the share of its links (mention pairs)
  that the response keeps (a singleton: 1 when the response has it as a singleton); precision swapped;
- BLANC (Recasens & Hovy 2011; Luo et al. 2014 for predicted mentions): coreference links (pairs within an
  entity) and non-coreference links (pairs across entities) of each side; recall, precision and F1 of each link
  type averaged, or of the only type the key has (the reference scorer's ``ComputeBLANCFromCounts``).

The CoNLL score is the mean F1 of MUC, B-cubed and CEAF-e, times 100 (coval's ``conll_score``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .core_options import MetricOptions, boolean, bound, option
from .core_stats import StatField, StatsSchema

Mention = Hashable
Entities = Sequence[Sequence[Mention]]

MEASURES = ("mentions", "muc", "bcub", "ceafm", "ceafe", "lea", "blanc")
# CEAF's alignment of a document's largest connected group of entities, in steps (``ceaf_work``): about a minute on
# a 2-core machine (the sparse solver takes 1-6 ns a step).
DEFAULT_MAX_CEAF_WORK = 1 << 33
_MINUTE = ", the default: about a minute's work on a 2-core machine"
CONLL_MEASURES = ("muc", "bcub", "ceafe")
_RATIOS = {  # measure -> (recall numerator, recall denominator, precision numerator, precision denominator)
    "mentions": ("common_mentions", "key_mentions", "common_mentions", "response_mentions"),
    "muc": ("muc_recall_num", "muc_recall_den", "muc_precision_num", "muc_precision_den"),
    "bcub": ("bcub_recall_num", "key_mentions", "bcub_precision_num", "response_mentions"),
    "ceafm": ("ceafm_similarity", "key_mentions", "ceafm_similarity", "response_mentions"),
    "ceafe": ("ceafe_similarity", "key_entities", "ceafe_similarity", "response_entities"),
    "lea": ("lea_recall_num", "key_mentions", "lea_precision_num", "response_mentions"),
}
_BLANC = ("coref_common", "coref_key", "coref_response", "noncoref_common", "noncoref_key", "noncoref_response")
_FLOAT_FIELDS = ("bcub_recall_num", "bcub_precision_num", "ceafe_similarity", "lea_recall_num", "lea_precision_num")
FIELDS = tuple(dict.fromkeys(
    [name for ratio in _RATIOS.values() for name in ratio] + ["key_entities", "response_entities", *_BLANC]
))


@dataclass(frozen=True)
class CorefOptions(MetricOptions):
    """evaluate's ``coval`` options. ``NP_only``, ``min_span`` and ``remove_nested`` need the parse trees and the
    nesting rules of coval's reader, which are not implemented: True is an error that says so. ``max_ceaf_work``
    bounds CEAF's alignment of one document (:func:`ceaf_work`); a document above it is refused before any is
    scored."""

    metric_name = "coval"

    keep_singletons: bool = option(True, boolean, stats=True)
    max_ceaf_work: int = bound(DEFAULT_MAX_CEAF_WORK)
    NP_only: bool = option(False, boolean)  # noqa: N815 - evaluate's name
    min_span: bool = option(False, boolean)
    remove_nested: bool = option(False, boolean)

    def validate(self, metric: str) -> None:
        for name in ("NP_only", "min_span", "remove_nested"):
            if getattr(self, name):
                raise ValueError(f"{metric}: `{name}=True` is not supported: it needs coval's parse-tree reading "
                                 f"(NP_only, min_span) or nested-mention removal, which this module does not "
                                 f"implement; score the mentions as given (False)")


def coref_schema(metric: str, options: CorefOptions | None = None) -> StatsSchema:
    """The per-document statistics: integer counts, and float numerators summed exactly (``fsum``), the same
    under every option."""
    return StatsSchema(metric, tuple(StatField(name, "fsum" if name in _FLOAT_FIELDS else "sum") for name in FIELDS))


def _pairs(size: int) -> int:
    return size * (size - 1) // 2


def _entity_of(entities: Entities) -> dict[Mention, int]:
    return {mention: index for index, entity in enumerate(entities) for mention in entity}


def _lea(entities: Entities, overlaps: Mapping[tuple[int, int], int], other_sizes: Sequence[int],
         other_entity_of: Mapping[Mention, int], key_side: bool) -> float:
    """LEA's numerator for ``entities`` against the other side (``overlaps`` keyed (key, response) entity)."""
    kept_links: Counter[int] = Counter()
    for (key, response), shared in overlaps.items():
        kept_links[key if key_side else response] += _pairs(shared)
    total = []
    for index, entity in enumerate(entities):
        if len(entity) == 1:
            other = other_entity_of.get(entity[0])
            total.append(1.0 if other is not None and other_sizes[other] == 1 else 0.0)
        else:
            total.append(len(entity) * kept_links[index] / _pairs(len(entity)))
    return math.fsum(total)


def _components(overlaps: Mapping[tuple[int, int], int],
                keys: int) -> list[tuple[list[int], list[int], list[tuple[int, int, int]]]]:
    """The connected components of the bipartite graph of key and response entities that share a mention: (key
    entities, response entities, each sorted; their (key, response, shared mentions) entries). Entities that share
    no mention are in none."""
    parent: dict[int, int] = {}

    def find(node: int) -> int:
        root = parent.setdefault(node, node)
        while parent[root] != root:
            root = parent[root]
        while parent[node] != root:
            parent[node], node = root, parent[node]
        return root

    for key, response in overlaps:
        first, second = find(key), find(keys + response)
        if first != second:
            parent[max(first, second)] = min(first, second)
    groups: dict[int, tuple[set[int], set[int], list[tuple[int, int, int]]]] = {}
    for (key, response), count in overlaps.items():
        group = groups.setdefault(find(key), (set(), set(), []))
        group[0].add(key)
        group[1].add(response)
        group[2].append((key, response, count))
    return [(sorted(key_set), sorted(response_set), entries) for key_set, response_set, entries in groups.values()]


# Components whose dense block has up to this many cells are solved densely (scipy's linear_sum_assignment);
# larger ones on their sparse graph (scipy's LAPJVsp).
DENSE_BLOCK_CELLS = 1 << 24
# Added to every edge of the sparse problem: LAPJVsp needs non-zero weights (the edges that leave an entity
# unaligned weigh 0 before), and with near-zero ones it can run for minutes. Every alignment has the same number of
# edges, so the shift changes no choice beyond the rounding of the weights plus 1 (similarities are at most 1, or
# whole numbers of mentions, which stay exact).
_SHIFT = 1.0


def _dense_assignment(similarity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from scipy.optimize import linear_sum_assignment

    return linear_sum_assignment(similarity, maximize=True)


def _sparse_assignment(rows: np.ndarray, columns: np.ndarray, weights: np.ndarray, keys: int,
                       responses: int) -> tuple[np.ndarray, np.ndarray]:
    """A maximum-weight alignment of the sparse graph (edges rows x columns with positive weights), as (row, column)
    pairs: LAPJVsp on the graph with an unaligned partner for every entity (key i may take column ``responses +
    i``, response j row ``keys + j``, and those partners pair along the graph's edges), whose perfect matchings are
    the alignments of the graph, every weight plus ``_SHIFT``."""
    from scipy.sparse import coo_array
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching

    size = keys + responses
    key_range, response_range = np.arange(keys), np.arange(responses)
    all_rows = np.concatenate((rows, key_range, keys + response_range, keys + columns))
    all_columns = np.concatenate((columns, responses + key_range, response_range, responses + rows))
    all_weights = np.concatenate((weights + _SHIFT, np.full(size + len(rows), _SHIFT)))
    graph = coo_array((all_weights, (all_rows, all_columns)), shape=(size, size)).tocsr()
    matched_rows, matched_columns = min_weight_full_bipartite_matching(graph, maximize=True)
    real = (matched_rows < keys) & (matched_columns < responses)
    return matched_rows[real], matched_columns[real]


def _component_work(keys: int, responses: int, edges: int) -> int:
    """The steps of aligning one component: its dense block's cells, or for a large one (solved on its sparse
    graph) its entities times its edges."""
    cells = keys * responses
    return cells if cells <= DENSE_BLOCK_CELLS else (keys + responses) * edges


def _overlaps(key: Entities, response: Entities) -> tuple[dict[Mention, int], dict[Mention, int], Counter]:
    key_of, response_of = _entity_of(key), _entity_of(response)
    overlaps = Counter((index, response_of[mention]) for mention, index in key_of.items() if mention in response_of)
    return key_of, response_of, overlaps


def ceaf_work(key: Entities, response: Entities) -> tuple[int, int, int, int]:
    """The costliest connected component CEAF aligns in a document: (steps, key entities, response entities, pairs
    of entities sharing mentions)."""
    _, _, overlaps = _overlaps(key, response)
    costliest = (0, 0, 0, 0)
    for key_entities, response_entities, entries in _components(overlaps, len(key)):
        work = _component_work(len(key_entities), len(response_entities), len(entries))
        if work > costliest[0]:
            costliest = (work, len(key_entities), len(response_entities), len(entries))
    return costliest


def _ceaf(overlaps: Mapping[tuple[int, int], int], key_sizes: Sequence[int],
          response_sizes: Sequence[int]) -> tuple[int, float]:
    """The optimal alignments' total similarity for CEAF-m (shared mentions) and CEAF-e (phi4).

    Only entities that share a mention have a similarity above 0, so the optimal one-to-one alignment of all the
    entities is the union of the optimal alignments within each connected component of the graph of shared
    mentions (pairing entities of different components, or leaving entities out, adds 0): each component is solved
    on its own, as a dense block when small, on its sparse graph otherwise; the matrix of every key entity against
    every response entity is never made.
    """
    mention_similarity = 0
    phi4_values: list[float] = []
    for key_entities, response_entities, entries in _components(overlaps, len(key_sizes)):
        key_index = {entity: row for row, entity in enumerate(key_entities)}
        response_index = {entity: column for column, entity in enumerate(response_entities)}
        rows = np.fromiter((key_index[key] for key, _, _ in entries), dtype=np.int64, count=len(entries))
        columns = np.fromiter((response_index[response] for _, response, _ in entries), dtype=np.int64,
                              count=len(entries))
        shared = np.fromiter((count for _, _, count in entries), dtype=np.float64, count=len(entries))
        key_sizes_here = np.asarray([key_sizes[entity] for entity in key_entities], dtype=float)
        response_sizes_here = np.asarray([response_sizes[entity] for entity in response_entities], dtype=float)
        phi4 = 2 * shared / (key_sizes_here[rows] + response_sizes_here[columns])
        shape = (len(key_entities), len(response_entities))
        for weights, mentions in ((shared, True), (phi4, False)):
            if len(entries) == 1:  # two entities that share mentions with no other
                values = weights
            elif shape[0] * shape[1] <= DENSE_BLOCK_CELLS:  # dense, as the reference scorers solve their matrix
                block = np.zeros(shape)
                block[rows, columns] = weights
                chosen_rows, chosen_columns = _dense_assignment(block)
                values = block[chosen_rows, chosen_columns]
            else:
                lookup = {(row, column): weight for row, column, weight in zip(rows.tolist(), columns.tolist(),
                                                                              weights.tolist(), strict=True)}
                chosen_rows, chosen_columns = _sparse_assignment(rows, columns, weights, *shape)
                values = np.array([lookup[pair] for pair in zip(chosen_rows.tolist(), chosen_columns.tolist(),
                                                                 strict=True)])
            if mentions:
                mention_similarity += int(round(values.sum()))
            else:
                phi4_values.extend(values.tolist())
    return mention_similarity, math.fsum(phi4_values)


def document_statistics(key: Entities, response: Entities) -> dict[str, float]:
    """Every measure's numerators and denominators for one document."""
    key_of, response_of, overlaps = _overlaps(key, response)
    key_sizes, response_sizes = [len(entity) for entity in key], [len(entity) for entity in response]
    common = sum(overlaps.values())
    muc_recall = sum(len(entity) - len({response_of.get(mention, ("absent", mention)) for mention in entity})
                     for entity in key)
    muc_precision = sum(len(entity) - len({key_of.get(mention, ("absent", mention)) for mention in entity})
                        for entity in response)
    ceafm, ceafe = _ceaf(overlaps, key_sizes, response_sizes)
    common_in_key = Counter(index for index, _ in overlaps.elements())
    common_in_response = Counter(index for _, index in overlaps.elements())
    coref_common = sum(_pairs(count) for count in overlaps.values())
    noncoref_common = (_pairs(common) - sum(_pairs(count) for count in common_in_key.values())
                       - sum(_pairs(count) for count in common_in_response.values()) + coref_common)
    coref_key, coref_response = sum(map(_pairs, key_sizes)), sum(map(_pairs, response_sizes))
    return {
        "common_mentions": common,
        "key_mentions": len(key_of),
        "response_mentions": len(response_of),
        "muc_recall_num": muc_recall,
        "muc_recall_den": sum(max(size - 1, 0) for size in key_sizes),
        "muc_precision_num": muc_precision,
        "muc_precision_den": sum(max(size - 1, 0) for size in response_sizes),
        "bcub_recall_num": math.fsum(count * count / key_sizes[k] for (k, _), count in overlaps.items()),
        "bcub_precision_num": math.fsum(count * count / response_sizes[r] for (_, r), count in overlaps.items()),
        "ceafm_similarity": ceafm,
        "ceafe_similarity": ceafe,
        "key_entities": len(key),
        "response_entities": len(response),
        "lea_recall_num": _lea(key, overlaps, response_sizes, response_of, key_side=True),
        "lea_precision_num": _lea(response, overlaps, key_sizes, key_of, key_side=False),
        "coref_common": coref_common,
        "coref_key": coref_key,
        "coref_response": coref_response,
        "noncoref_common": noncoref_common,
        "noncoref_key": _pairs(len(key_of)) - coref_key,
        "noncoref_response": _pairs(len(response_of)) - coref_response,
    }


def _ratio(numerator: float, denominator: float) -> float:
    return 0.0 if denominator == 0 else numerator / denominator


def _f1(recall: float, precision: float) -> float:
    return 0.0 if recall + precision == 0 else 2 * recall * precision / (recall + precision)


def blanc_from_counts(totals: Mapping[str, Any]) -> tuple[float, float, float]:
    """BLANC's (recall, precision, F1) from link counts (the reference scorer's ``ComputeBLANCFromCounts``)."""
    coref = (_ratio(totals["coref_common"], totals["coref_key"]),
             _ratio(totals["coref_common"], totals["coref_response"]))
    noncoref = (_ratio(totals["noncoref_common"], totals["noncoref_key"]),
                _ratio(totals["noncoref_common"], totals["noncoref_response"]))
    if totals["coref_key"] == 0 and totals["noncoref_key"] == 0:
        return 0.0, 0.0, 0.0
    if totals["coref_key"] == 0:
        return noncoref[0], noncoref[1], _f1(*noncoref)
    if totals["noncoref_key"] == 0:
        return coref[0], coref[1], _f1(*coref)
    return (coref[0] + noncoref[0]) / 2, (coref[1] + noncoref[1]) / 2, (_f1(*coref) + _f1(*noncoref)) / 2


def scores_from_totals(totals: Mapping[str, Any], options: CorefOptions | None = None) -> dict[str, float]:
    """``<measure>/recall``, ``/precision``, ``/f1`` for every measure, and ``conll_score`` (0-100); the options
    do not change them (they act on the statistics)."""
    result: dict[str, float] = {}
    for measure, (recall_num, recall_den, precision_num, precision_den) in _RATIOS.items():
        recall = _ratio(float(totals[recall_num]), float(totals[recall_den]))
        precision = _ratio(float(totals[precision_num]), float(totals[precision_den]))
        result.update({f"{measure}/recall": recall, f"{measure}/precision": precision,
                       f"{measure}/f1": _f1(recall, precision)})
    recall, precision, f1 = blanc_from_counts(totals)
    result.update({"blanc/recall": recall, "blanc/precision": precision, "blanc/f1": f1})
    result["conll_score"] = sum(result[f"{measure}/f1"] for measure in CONLL_MEASURES) / 3 * 100
    return result


def _hashable(entities: Entities) -> list[list[Mention]]:
    return [[tuple(mention) if isinstance(mention, list) else mention for mention in entity] for entity in entities]


def _documents(predictions: Sequence[Entities], references: Sequence[Entities],
               options: CorefOptions) -> list[tuple[list[list[Mention]], list[list[Mention]]]]:
    """(key, response) of every document, hashable, without singleton entities on both sides when
    ``keep_singletons`` is False (coval's reader)."""
    documents = []
    for response, key in zip(predictions, references, strict=True):
        key, response = _hashable(key), _hashable(response)
        if not options.keep_singletons:
            key, response = [e for e in key if len(e) > 1], [e for e in response if len(e) > 1]
        documents.append((key, response))
    return documents


def check_coref_resources(metric: str, documents: Sequence[tuple[Entities, Entities]], options: CorefOptions) -> None:
    """Refuse a document whose CEAF alignment exceeds ``max_ceaf_work``, before scoring any."""
    for index, (key, response) in enumerate(documents):
        work, keys, responses, edges = ceaf_work(key, response)
        if work > options.max_ceaf_work:
            raise ValueError(
                f"{metric}: CEAF aligns the entities of document {index} (predictions[{index}] against "
                f"references[{index}]) that share mentions, and its largest connected group has {keys:,} key and "
                f"{responses:,} response entities linked by {edges:,} pairs that share mentions: {work:,} steps, "
                f"more than max_ceaf_work={options.max_ceaf_work:,}"
                f"{_MINUTE if options.max_ceaf_work == DEFAULT_MAX_CEAF_WORK else ''}. Score the document in parts "
                f"(fewer entities a document), or raise max_ceaf_work"
            )


def coref_rows(predictions: Sequence[Entities], references: Sequence[Entities],
               options: CorefOptions) -> list[tuple[float, ...]]:
    """One row of :data:`FIELDS` per document (predictions are the response, references the key); without
    singleton entities on both sides when ``keep_singletons`` is False (coval's reader). Every document's CEAF
    alignment is checked against ``max_ceaf_work`` first."""
    documents = _documents(predictions, references, options)
    check_coref_resources(options.metric_name, documents, options)
    rows = []
    for key, response in documents:
        statistics = document_statistics(key, response)
        rows.append(tuple(statistics[name] for name in FIELDS))
    return rows
