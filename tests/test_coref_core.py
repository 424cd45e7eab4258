"""metrics/_core/core_coref against the CoNLL-2012 reference scorer's published test cases, LEA's worked example,
and brute-force definitions of every measure on generated key/response pairs."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from coref_scorer_cases import CASES, COLUMNS
from metrics._core.core_coref import (
    FIELDS,
    CorefOptions,
    coref_rows,
    coref_schema,
    document_statistics,
    scores_from_totals,
)
from metrics._core.core_coref_inputs import entities_from_conll


def entities(name: str) -> list[list[tuple[int, int]]]:
    return [[tuple(mention) for mention in entity] for entity in entities_from_conll("coval", name, COLUMNS[name])]


@pytest.mark.parametrize(("case", "key", "response", "expected"), CASES, ids=[case[0] for case in CASES])
def test_reference_scorer_cases(case: str, key: str, response: str, expected: dict) -> None:
    scores = scores_from_totals(document_statistics(entities(key), entities(response)))
    for measure, values in expected.items():
        ours = [scores[f"{measure}/{part}"] for part in ("recall", "precision", "f1")]
        # published as exact fractions or rounded to 5 decimals
        assert ours == pytest.approx(values, abs=5.01e-6), (case, measure, ours, values)


def test_every_published_value_is_checked() -> None:
    assert len(CASES) == 36 and sum(len(expected) for *_, expected in CASES) == 91


def test_lea_worked_example_of_moosavi_and_strube_2016() -> None:
    """Section 4.2: key {a b c} {d e f g}, response {a b} {c d} {f g h i}. Recall (3 x 1/3 + 4 x 1/6) / (3 + 4);
    precision (2 x 1 + 2 x 0 + 4 x 1/6) / (2 + 2 + 4): each entity weighs its size times the share of its links
    (pairs) kept by the other side."""
    key = [["a", "b", "c"], ["d", "e", "f", "g"]]
    response = [["a", "b"], ["c", "d"], ["f", "g", "h", "i"]]
    scores = scores_from_totals(document_statistics(key, response))
    assert scores["lea/recall"] == pytest.approx((3 * 1 / 3 + 4 * 1 / 6) / 7)
    assert scores["lea/precision"] == pytest.approx((2 * 1 + 2 * 0 + 4 * 1 / 6) / 8)
    assert round(scores["lea/recall"], 2) == 0.24 and round(scores["lea/precision"], 2) == 0.33


# -- brute force ---------------------------------------------------------------------------------------------


def brute_force(key: list[list[str]], response: list[list[str]]) -> dict[str, float]:
    """Every measure from its definition, with no shared code: pairs enumerated, alignments tried one by one."""
    key_of = {m: i for i, e in enumerate(key) for m in e}
    response_of = {m: i for i, e in enumerate(response) for m in e}

    def ratio(a: float, b: float) -> float:
        return a / b if b else 0.0

    def f1(r: float, p: float) -> float:
        return 2 * r * p / (r + p) if r + p else 0.0

    def muc(a: list[list[str]], other_of: dict) -> tuple[int, int]:
        numerator = denominator = 0
        for entity in a:
            parts = {other_of[m] if m in other_of else ("alone", m) for m in entity}
            numerator += len(entity) - len(parts)
            denominator += len(entity) - 1
        return numerator, denominator

    def b3(a: list[list[str]], b: list[list[str]]) -> float:
        total = 0.0
        for entity in a:
            for mention in entity:
                other = next((e for e in b if mention in e), [])
                total += len(set(entity) & set(other)) / len(entity)
        return total

    def best_alignment(similarity) -> float:
        small, large = (key, response) if len(key) <= len(response) else (response, key)
        best = 0.0
        for chosen in itertools.permutations(range(len(large)), len(small)):
            pairs = [(small[i], large[j]) for i, j in enumerate(chosen)]
            best = max(best, sum(similarity(*pair) for pair in pairs))
        return best

    def lea(a: list[list[str]], b: list[list[str]], other_of: dict) -> float:
        total = 0.0
        for entity in a:
            if len(entity) == 1:
                m = entity[0]
                total += 1.0 if m in other_of and len(b[other_of[m]]) == 1 else 0.0
                continue
            links = list(itertools.combinations(entity, 2))
            kept = [(x, y) for x, y in links if x in other_of and y in other_of and other_of[x] == other_of[y]]
            total += len(entity) * len(kept) / len(links)
        return total

    def links(side: list[list[str]]) -> tuple[set, set]:
        mentions = [m for e in side for m in e]
        entity_of = {m: i for i, e in enumerate(side) for m in e}
        pairs = {frozenset(p) for p in itertools.combinations(mentions, 2)}
        coref = {p for p in pairs if len({entity_of[m] for m in p}) == 1}
        return coref, pairs - coref

    key_mentions, response_mentions = len(key_of), len(response_of)
    result = {}
    common = len(set(key_of) & set(response_of))
    result["mentions"] = (ratio(common, key_mentions), ratio(common, response_mentions))
    result["muc"] = (ratio(*muc(key, response_of)), ratio(*muc(response, key_of)))
    result["bcub"] = (ratio(b3(key, response), key_mentions), ratio(b3(response, key), response_mentions))
    ceafm = best_alignment(lambda a, b: len(set(a) & set(b)))
    result["ceafm"] = (ratio(ceafm, key_mentions), ratio(ceafm, response_mentions))
    ceafe = best_alignment(lambda a, b: 2 * len(set(a) & set(b)) / (len(a) + len(b)))
    result["ceafe"] = (ratio(ceafe, len(key)), ratio(ceafe, len(response)))
    result["lea"] = (ratio(lea(key, response, response_of), key_mentions),
                     ratio(lea(response, key, key_of), response_mentions))
    scores = {f"{name}/{part}": value for name, (r, p) in result.items()
              for part, value in (("recall", r), ("precision", p), ("f1", f1(r, p)))}
    (key_coref, key_non), (response_coref, response_non) = links(key), links(response)
    rc, pc = ratio(len(key_coref & response_coref), len(key_coref)), ratio(len(key_coref & response_coref), len(response_coref))
    rn, pn = ratio(len(key_non & response_non), len(key_non)), ratio(len(key_non & response_non), len(response_non))
    if not key_coref and not key_non:
        blanc = (0.0, 0.0, 0.0)
    elif not key_coref:
        blanc = (rn, pn, f1(rn, pn))
    elif not key_non:
        blanc = (rc, pc, f1(rc, pc))
    else:
        blanc = ((rc + rn) / 2, (pc + pn) / 2, (f1(rc, pc) + f1(rn, pn)) / 2)
    scores.update({"blanc/recall": blanc[0], "blanc/precision": blanc[1], "blanc/f1": blanc[2]})
    scores["conll_score"] = (scores["muc/f1"] + scores["bcub/f1"] + scores["ceafe/f1"]) / 3 * 100
    return scores


def random_entities(rng: random.Random, pool: list[str]) -> list[list[str]]:
    """Some mentions of the pool (shared with the other side or not) split into 0 to 5 entities."""
    chosen = rng.sample(pool, rng.randint(0, len(pool)))
    entities: list[list[str]] = [[] for _ in range(rng.randint(1, 5))]
    for mention in chosen:
        rng.choice(entities).append(mention)
    return [entity for entity in entities if entity]


def generated_pairs(count: int, seed: int) -> list[tuple[list[list[str]], list[list[str]]]]:
    rng = random.Random(seed)
    pool = [f"m{i}" for i in range(9)]
    return [(random_entities(rng, pool), random_entities(rng, pool)) for _ in range(count)]


def test_every_measure_equals_its_brute_force_definition() -> None:
    for index, (key, response) in enumerate(generated_pairs(3000, seed=7)):
        ours = scores_from_totals(document_statistics(key, response))
        expected = brute_force(key, response)
        assert ours.keys() == expected.keys()
        for name, value in expected.items():
            assert math.isclose(ours[name], value, rel_tol=1e-12, abs_tol=1e-12), (index, name, key, response)


def test_document_statistics_merge_exactly_in_any_order_and_sharding() -> None:
    pairs = generated_pairs(300, seed=11)
    options = CorefOptions()
    rows = coref_rows([[[(int(m[1:]), int(m[1:])) for m in e] for e in r] for _, r in pairs],
                      [[[(int(m[1:]), int(m[1:])) for m in e] for e in k] for k, _ in pairs], options)
    schema = coref_schema("coval")
    signature = options.stats_signature()
    whole = scores_from_totals(schema.totals_of_rows(rows, signature))
    shuffled = rows[:]
    random.Random(3).shuffle(shuffled)
    assert scores_from_totals(schema.totals_of_rows(shuffled, signature)) == whole
    shards = [schema.totals_of_rows(rows[i:i + 37], signature) for i in range(0, len(rows), 37)]
    merged = {name: sum(shard[name] for shard in shards) for name in FIELDS}
    exact = scores_from_totals(merged)
    assert all(math.isclose(exact[name], whole[name], rel_tol=1e-15) for name in whole)


def test_without_singletons_both_sides_lose_them() -> None:
    key, response = [[(0, 0)], [(1, 1), (2, 2)]], [[(0, 0)], [(1, 1)], [(2, 2)]]
    with_singletons = coref_rows([response], [key], CorefOptions())[0]
    without = coref_rows([response], [key], CorefOptions(keep_singletons=False))[0]
    named_with, named_without = dict(zip(FIELDS, with_singletons)), dict(zip(FIELDS, without))
    assert (named_with["key_mentions"], named_with["response_mentions"]) == (3, 3)
    assert (named_without["key_mentions"], named_without["response_mentions"]) == (2, 0)


@pytest.mark.parametrize(("column", "message"), [
    (["(0", "-", "1)"], r"line 3: entity 1 closes a mention that was never opened"),
    (["(0", "-"], r"ends with mentions of entities \['0'\] never closed"),
    (["(0)", "x(1)"], r"line 2: malformed coreference column 'x\(1\)'"),
])
def test_malformed_conll_lines_name_the_line(column: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        entities_from_conll("coval", "predictions[0]", [f"doc 0 {i} w {value}" for i, value in enumerate(column)])


def test_conll_reading_follows_the_reference_scorer() -> None:
    """Blank lines and document markers hold no token; one-token mentions, openings, closings; a span repeated
    (``(1(1 ... 1)1)``) is kept once."""
    lines = ["#begin document (d); part 000", "d 0 0 a (0", "d 0 1 b 0)|(1(1", "", "d 1 0 c (2)|1)1)",
             "d 1 1 . -", "#end document"]
    assert entities_from_conll("coval", "references[0]", lines) == [[[0, 1]], [[1, 2]], [[2, 2]]]
