"""Property-based tests (hypothesis) run over every metric module.

For any input hypothesis can generate for a metric's input kind (text pairs: every Unicode category, control
and zero-width characters, right-to-left text, combining marks, empty strings, texts of 100,000 characters,
corpora of one to six examples with one to three references; other kinds: their profile's generator):

- every number in the result is finite and within the metric's documented range (NaN only on inputs for which
  the oracle gives NaN too, its profile's `undefined`, and then with a warning);
- the corpus result does not depend on the order of the examples (outputs defined by an order excepted);
- one-shot `compute`, per-example statistics reduced by `compute_from_stats`, shard totals merged in reverse
  order, and `add_batch` followed by a streamed `compute` all give the same result;
- `compute` twice, after `configure`, and through `evaluate.combine` (with `.add`) agree;
- predictions identical to their references get the metric's best score (where the metric has one).

The profile of each metric (ranges, maximum, tolerance, generators) is declared in PROFILES; a metric without a
profile fails `test_every_metric_has_a_profile`. Model metrics are compared within 1e-5 (batch composition
changes float summation order); statistics metrics exactly. The default run draws at most DEFAULT_RUN_EXAMPLES
corpora per property (fewer for a model metric, whose every example is forward passes: its `default_examples`);
the slow run (`-m slow`, ids ending in `-full`) draws each profile's full `examples`.
"""

from __future__ import annotations

import functools
import math
import random
import uuid
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import evaluate
import pytest
import hypothesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import METRICS_DIR, load_metric, metric_names, model_config

METRICS = metric_names()


DEFAULT_RUN_EXAMPLES = 100
Corpus = dict[str, list[Any]]  # compute's input columns, e.g. {"predictions": [...], "references": [...]}

# Characters hypothesis draws from: every category but lone surrogates (not Unicode text: test_bad_input covers
# them), plus the awkward ones named explicitly: zero-width and bidirectional controls, combining marks,
# right-to-left letters, a Thai letter, ideographic and no-break spaces, tab, carriage return, newline, NUL, ESC.
AWKWARD = "\u200b\u200c\u200d\ufeff\u202e\u2066\u0301\u0651\u05d0\u0627\u0e01\u3000\u00a0\t\r\n\x00\x1b"
characters = st.one_of(st.characters(exclude_categories=("Cs",)), st.sampled_from(AWKWARD))
short_text = st.text(characters, max_size=40)


def long_text(length: int = 100_000) -> st.SearchStrategy[str]:
    """A text of about ``length`` characters: one to five characters repeated."""
    return st.text(characters, min_size=1, max_size=5).map(lambda unit: unit * (length // len(unit)))


@st.composite
def text(draw: Any, long_texts: int = 50, long_length: int = 100_000) -> str:
    """Mostly short texts; one in 50 is empty and one in ``long_texts`` has about ``long_length`` characters."""
    roll = draw(st.integers(0, long_texts - 1))
    return draw(long_text(long_length) if roll == 0 else st.just("") if roll % 50 == 1 else short_text)


def sentences(word: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Sentences of 4 to 12 words, some from a small English vocabulary so that n-grams repeat."""
    return st.lists(st.sampled_from(("the", "cat", "sat", "on", "a", "mat", "storm", "power")) | word,
                    min_size=4, max_size=12).map(" ".join)


any_word = st.text(st.characters(categories=("Lu", "Ll", "Nd")), min_size=1, max_size=8).map(str.lower)
ascii_word = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8)


@st.composite
def text_pairs(draw: Any, long_texts: int = 50, long_length: int = 100_000) -> Corpus:
    """One to six predictions with one to three references each (long texts of about ``long_length`` characters)."""
    text_strategy = text(long_texts, long_length)
    size = draw(st.integers(1, 6))
    predictions = [draw(text_strategy) for _ in range(size)]
    references = [[draw(text_strategy) for _ in range(draw(st.integers(1, 3)))] for _ in range(size)]
    return {"predictions": predictions, "references": references}


@st.composite
def text_samples(draw: Any, long_texts: int = 50) -> Corpus:
    """MAUVE's two samples: one to six model texts and as many human texts, one flat list each."""
    text_strategy = text(long_texts)
    size = draw(st.integers(1, 6))
    return {"predictions": [draw(text_strategy) for _ in range(size)],
            "references": [draw(text_strategy) for _ in range(size)]}


@st.composite
def coref_document(draw: Any) -> list[list[list[int]]]:
    """Up to 8 distinct mentions [start, end] split into entities."""
    starts = draw(st.lists(st.integers(0, 40), max_size=8, unique=True))
    mentions = [[start * 3, start * 3 + draw(st.integers(0, 2))] for start in starts]
    entities: list[list[list[int]]] = [[] for _ in range(draw(st.integers(1, 4)))]
    for mention in mentions:
        entities[draw(st.integers(0, len(entities) - 1))].append(mention)
    return [entity for entity in entities if entity]


@st.composite
def coref_pairs(draw: Any, long_texts: int = 50) -> Corpus:
    """One to six documents of predicted and gold entities."""
    size = draw(st.integers(1, 6))
    return {"predictions": [draw(coref_document()) for _ in range(size)],
            "references": [draw(coref_document()) for _ in range(size)]}


def identical_coref_pairs() -> st.SearchStrategy[Corpus]:
    return st.lists(coref_document().filter(bool), min_size=1, max_size=5).map(
        lambda documents: {"predictions": documents, "references": documents})


RATING_LABELS = (0, 1, 2, 3.5)


def _has_two_pairable_labels(corpus: Corpus) -> bool:
    """Some item has two ratings, and the items with two or more hold two labels (alpha is otherwise 0/0)."""
    counts: dict[Any, int] = {}
    for item in corpus["items"]:
        counts[item] = counts.get(item, 0) + 1
    pairable = {label for item, label in zip(corpus["items"], corpus["labels"], strict=True) if counts[item] > 1}
    return len(pairable) > 1


@st.composite
def rating_rows(draw: Any, long_texts: int = 50) -> Corpus:
    """Agreement ratings: 1 to 6 items (string or integer ids), 2 to 4 annotators, ratings missing at random (items
    with a single rating included), ordinal labels with ties."""
    n_items, n_annotators = draw(st.integers(1, 6)), draw(st.integers(2, 4))
    cells = [(item if item % 2 else f"item {item}", f"annotator {annotator}")
             for item in range(n_items) for annotator in range(n_annotators) if draw(st.integers(0, 3))]
    labels = [draw(st.sampled_from(RATING_LABELS)) for _ in cells]
    return {"items": [item for item, _ in cells], "annotators": [annotator for _, annotator in cells],
            "labels": labels}


def identical_rating_rows() -> st.SearchStrategy[Corpus]:
    """Every annotator gives each item the same label; two labels at least."""
    def rows(labels: list[float]) -> Corpus:
        cells = [(item, annotator) for item in range(len(labels)) for annotator in range(2 + item % 3)]
        return {"items": [item for item, _ in cells], "annotators": [annotator for _, annotator in cells],
                "labels": [labels[item] for item, _ in cells]}

    return st.lists(st.sampled_from(RATING_LABELS), min_size=2, max_size=6).filter(lambda ls: len(set(ls)) > 1).map(rows)


def identical_text_pairs(word: st.SearchStrategy[str] = any_word) -> st.SearchStrategy[Corpus]:
    return st.lists(sentences(word), min_size=1, max_size=5).map(
        lambda texts: {"predictions": texts, "references": texts}
    )


@st.composite
def label_pairs(draw: Any, long_texts: int = 50, classes: int = 4) -> Corpus:
    """1 to 40 examples of class labels 0..classes-1 (some classes missing, sometimes a single class)."""
    size = draw(st.integers(1, 40))
    labels = st.lists(st.integers(0, classes - 1), min_size=size, max_size=size)
    return {"predictions": draw(labels), "references": draw(labels)}


def identical_label_pairs(classes: int = 4) -> st.SearchStrategy[Corpus]:
    """Identical predictions and references holding at least two classes."""
    return st.lists(st.integers(0, classes - 1), min_size=2, max_size=40).filter(lambda labels: len(set(labels)) > 1).map(
        lambda labels: {"predictions": labels, "references": labels})


@st.composite
def number_pairs(draw: Any, long_texts: int = 50) -> Corpus:
    """3 to 40 pairs of finite numbers with ties and wide magnitudes; neither side constant (a correlation of a
    constant is undefined, which the correlation modules' own tests cover)."""
    size = draw(st.integers(3, 40))
    value = st.one_of(st.integers(-5, 5).map(float), st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False))
    column = st.lists(value, min_size=size, max_size=size).filter(lambda values: len(set(values)) > 1)
    return {"predictions": draw(column), "references": draw(column)}


def identical_number_pairs() -> st.SearchStrategy[Corpus]:
    return st.lists(st.integers(-100, 100).map(float), min_size=3, max_size=40).filter(
        lambda values: len(set(values)) > 1).map(lambda values: {"predictions": values, "references": values})


@st.composite
def score_rows(draw: Any, long_texts: int = 50) -> Corpus:
    """Meta-evaluation rows: 2 to 4 systems on 1 to 4 items (every system on item 0, others possibly missing),
    metric and human scores with ties (constant sides included: reported as 0.0 with a warning)."""
    n_systems, n_items = draw(st.integers(2, 4)), draw(st.integers(1, 4))
    score = st.one_of(st.integers(0, 4).map(float), st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False))
    rows = [(system, item) for system in range(n_systems) for item in range(n_items)
            if item == 0 or draw(st.booleans())]
    return {"predictions": [draw(score) for _ in rows], "references": [draw(score) * 25 for _ in rows],
            "systems": [f"s{system}" for system, _ in rows], "items": [item for _, item in rows]}


def identical_score_rows() -> st.SearchStrategy[Corpus]:
    """Metric scores equal to the human scores, distinct for every row and ordered by system (so system means
    differ and every item's systems are ordered)."""
    def rows(shape: tuple[int, int]) -> Corpus:
        n_systems, n_items = shape
        scores = [100.0 * system + item for system in range(n_systems) for item in range(n_items)]
        return {"predictions": scores, "references": scores,
                "systems": [f"s{system}" for system in range(n_systems) for _ in range(n_items)],
                "items": [f"i{item}" for _ in range(n_systems) for item in range(n_items)]}

    return st.tuples(st.integers(2, 5), st.integers(1, 5)).map(rows)


TAGS = ("O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "I-MISC")


@st.composite
def tag_sequence_pairs(draw: Any, long_texts: int = 50) -> Corpus:
    """1 to 8 sentences of 0 to 12 IOB2 tags (ill-formed sequences included: an I- after O)."""
    lengths = draw(st.lists(st.integers(0, 12), min_size=1, max_size=8).filter(any))  # a corpus without tags: an error
    tags = st.sampled_from(TAGS)
    return {
        "predictions": [draw(st.lists(tags, min_size=n, max_size=n)) for n in lengths],
        "references": [draw(st.lists(tags, min_size=n, max_size=n)) for n in lengths],
    }


def identical_tag_sequences() -> st.SearchStrategy[Corpus]:
    """Identical sequences holding at least one entity."""
    sequence = st.lists(st.sampled_from(TAGS), min_size=1, max_size=12)
    return st.lists(sequence, min_size=1, max_size=8).filter(
        lambda sequences: any(tag != "O" for tags in sequences for tag in tags)).map(
        lambda sequences: {"predictions": sequences, "references": sequences})


@st.composite
def squad_pairs(draw: Any, long_texts: int = 50, with_probability: bool = False) -> Corpus:
    """1 to 6 questions with 1 to 3 gold answers each (squad_v2: possibly none) and one prediction each."""
    size = draw(st.integers(1, 6))
    answer = text(long_texts)
    predictions, references = [], []
    for index in range(size):
        prediction = {"id": f"q{index}", "prediction_text": draw(answer)}
        if with_probability:
            prediction["no_answer_probability"] = draw(st.floats(0, 1))
        golds = [draw(answer) for _ in range(draw(st.integers(0 if with_probability else 1, 3)))]
        predictions.append(prediction)
        references.append({"id": f"q{index}", "answers": {"text": golds, "answer_start": [0] * len(golds)}})
    return {"predictions": predictions, "references": references}


def identical_squad_pairs(with_probability: bool = False) -> st.SearchStrategy[Corpus]:
    def records(answers: list[str]) -> Corpus:
        extra = {"no_answer_probability": 0.0} if with_probability else {}
        return {"predictions": [{"id": f"q{i}", "prediction_text": a, **extra} for i, a in enumerate(answers)],
                "references": [{"id": f"q{i}", "answers": {"text": [a], "answer_start": [0]}}
                               for i, a in enumerate(answers)]}

    # SQuAD v1.1's F1 of two answers that normalise to nothing (articles, punctuation) is 0 (v2.0 makes it 1)
    content_word = ascii_word.filter(lambda word: word not in ("a", "an", "the"))
    return st.lists(st.lists(content_word, min_size=1, max_size=6).map(" ".join), min_size=1, max_size=5).map(records)


@st.composite
def single_reference_pairs(draw: Any, long_texts: int = 50) -> Corpus:
    """One to six predictions with one reference string each."""
    size = draw(st.integers(1, 6))
    return {"predictions": [draw(text(long_texts)) for _ in range(size)],
            "references": [draw(text(long_texts)) for _ in range(size)]}


@st.composite
def non_empty_texts(draw: Any, long_texts: int = 50, long_length: int = 100_000) -> Corpus:
    """One to six texts alone (no references), none empty."""
    size = draw(st.integers(1, 6))
    return {"predictions": [draw(text(long_texts, long_length).filter(bool)) for _ in range(size)]}


@st.composite
def sourced_text_pairs(draw: Any, long_texts: int = 50) -> Corpus:
    """Text pairs (one to three references each) with a source text per example."""
    corpus = draw(text_pairs(long_texts))
    return {"sources": [draw(text(long_texts)) for _ in corpus["predictions"]], **corpus}


@st.composite
def sourced_single_reference_pairs(draw: Any, long_texts: int = 50) -> Corpus:
    """One to six predictions with one reference string and a source text each (MetricX takes one reference)."""
    corpus = draw(single_reference_pairs(long_texts))
    return {"sources": [draw(text(long_texts)) for _ in corpus["predictions"]], **corpus}


@st.composite
def dialogues(draw: Any, long_texts: int = 50) -> Corpus:
    """One to six responses, each with a dialogue history (turns joined by line breaks, empty turns included) and
    a fact (possibly empty)."""
    text_strategy = text(long_texts, long_length=5_000)
    size = draw(st.integers(1, 6))
    contexts = ["\n".join(draw(st.lists(text_strategy, min_size=1, max_size=4))) for _ in range(size)]
    return {"contexts": contexts, "facts": [draw(text_strategy) for _ in range(size)],
            "predictions": [draw(text_strategy) for _ in range(size)]}


@st.composite
def texts_with_a_word(draw: Any, long_texts: int = 50) -> Corpus:
    """One to six texts (empty ones and texts without words included), at least one holding a word (a corpus
    without any word has no readability: an error, covered in test_simplification_modules)."""
    texts = draw(st.lists(text(long_texts, long_length=20_000), min_size=1, max_size=6))
    return {"predictions": texts + [draw(sentences(any_word))]}


documents = st.sampled_from([f"d{index}" for index in range(12)] + ["é", "日本"])
scores = st.one_of(st.integers(-3, 3).map(float), st.floats(allow_nan=False), st.just(1.0 + 1e-12))


@st.composite
def rankings(draw: Any, long_texts: int = 50) -> Corpus:
    """1 to 8 queries: a run (score mapping or ranked list, ties and infinities included) and qrels (grades -1..3;
    some queries unjudged), at least one query judged."""
    size = draw(st.integers(1, 8))
    runs: list[Any] = []
    for _ in range(size):
        ranked = draw(st.lists(documents, unique=True, max_size=10))
        runs.append(ranked if draw(st.booleans()) else {doc: draw(scores) for doc in ranked})
    judged = st.dictionaries(documents, st.integers(-1, 3), max_size=6)
    qrels = [draw(judged) for _ in range(size)]
    qrels[draw(st.integers(0, size - 1))] = draw(st.dictionaries(documents, st.integers(-1, 3), min_size=1,
                                                                 max_size=6))
    return {"predictions": runs, "references": qrels}


def tiny_language_model() -> dict[str, Any]:
    """perplexity's options for a tiny randomly initialised Llama and its trained tokenizer (test_lm_core's)."""
    from test_lm_core import tiny_llama, train_tokenizer

    tokenizer = train_tokenizer()
    # the tiny model's 64-token windows are cheap: its 100,000-character texts are far under a minute's work, which
    # max_forward_tokens measures for the packaged 135M-parameter model
    return {"model_id": tiny_llama(len(tokenizer)), "tokenizer": tokenizer, "batch_size": 16,
            "max_forward_tokens": 1 << 24}


@dataclass(frozen=True)
class Profile:
    """What a metric promises: value ranges by output key, its best values on identical inputs, comparison
    tolerance, and the inputs hypothesis generates for it."""

    ranges: Mapping[str, tuple[float, float]]
    identity: Mapping[str, float]
    tolerance: float = 0.0
    options: Mapping[str, Any] = field(default_factory=dict)
    identity_options: Mapping[str, Any] = field(default_factory=dict)
    examples: int = 250  # per property; five properties per metric
    # corpora per property in the default run (the full `examples` run with the slow tests)
    default_examples: int = DEFAULT_RUN_EXAMPLES
    # for the property that scores each corpus four times through different entry points (compute twice, a
    # configured module, combine.add): the entry points, not the inputs, are what it varies
    entry_point_examples: int | None = None
    long_texts: int = 50  # one text in this many is long (about 100,000 characters unless the corpora say less)
    corpora: Callable[[int], st.SearchStrategy[Corpus]] = text_pairs
    identical: st.SearchStrategy[Corpus] = field(default_factory=identical_text_pairs)
    averaged: tuple[str, ...] = ()  # per-example lists whose mean is the corpus value (others are left out)
    statistics: bool = True  # False: the result needs every example (e.g. a threshold search), not sums
    order_dependent: tuple[str, ...] = ()  # outputs that depend on the order of the examples by definition
    # corpora whose result the oracle itself defines as NaN (e.g. bert-score's 0/0): NaN is then allowed in the
    # result, and a warning must say so
    undefined: Callable[[Corpus], bool] | None = None
    # corpora a past run found a defect with: each property checks them first, in every run (hypothesis `example`)
    regressions: tuple[Corpus, ...] = ()


@functools.cache
def bertscore_special_token_ids() -> tuple[Any, frozenset[int]]:
    """The packaged model's tokenizer and the ids bert-score weighs 0 without idf ([CLS], [SEP])."""
    from transformers import AutoTokenizer

    from bertscore_oracle import packaged_model_path

    tokenizer = AutoTokenizer.from_pretrained(packaged_model_path())
    return tokenizer, frozenset((tokenizer.cls_token_id, tokenizer.sep_token_id))


def has_unweighted_text(corpus: Corpus) -> bool:
    """Some prediction or reference is, once tokenized and truncated, only [CLS]/[SEP] tokens (at least one): its
    weighted mean is bert-score's 0/0."""
    tokenizer, zero_weight = bertscore_special_token_ids()
    texts = corpus["predictions"] + [text for group in corpus["references"] for text in group]
    for text in texts:
        tokens = tokenizer(text, truncation=True)["input_ids"][1:-1]
        if tokens and set(tokens) <= zero_weight:
            return True
    return False


PROFILES: dict[str, Profile] = {
    "bleu": Profile({"bleu": (0, 1), "precisions": (0, 1), "brevity_penalty": (0, 1)}, {"bleu": 1.0}),
    "sacrebleu": Profile({"score": (0, 100), "precisions": (0, 100), "bp": (0, 1)}, {"score": 100.0}),
    "rouge": Profile(
        {name: (0, 1) for name in ("rouge1", "rouge2", "rougeL", "rougeLsum")},
        {name: 1.0 for name in ("rouge1", "rouge2", "rougeL", "rougeLsum")},
        identity_options={"tokenizer": "unicode"},  # rouge-score's tokenizer drops non-Latin words: no maximum
    ),
    # The plain means (no bootstrap: the script's resampling follows the order of the examples by design);
    # ROUGE-1.5.5 drops non-ASCII bytes, so only ASCII sentences reach the maximum.
    "rouge155": Profile(
        {f"{name}{measure}_mean": (0, 1) for name in ("rouge1", "rouge2", "rougeL")
         for measure in ("", "_precision", "_recall")},
        {f"{name}_mean": 1.0 for name in ("rouge1", "rouge2", "rougeL")},
        options={"n_bootstrap": 0},
        identical=identical_text_pairs(ascii_word),
    ),
    # A long text costs a model a forward pass of its maximum length: fewer of them
    "bertscore": Profile(
        {"precision": (-1, 1), "recall": (-1, 1), "f1": (-1, 1)}, {"f1": 1.0}, tolerance=1e-5, examples=200,
        default_examples=50, long_texts=500, averaged=("precision", "recall", "f1"), entry_point_examples=50,
        undefined=has_unweighted_text,
        regressions=({"predictions": ["0" * 100_000], "references": [["[CLS]" * 20_000]]},  # NaN != NaN in CI
                     {"predictions": ["[SEP]", "a [CLS]"], "references": [["[CLS]", "a"], ["b"]]}),
    ),
    "semantic_similarity": Profile(
        {"similarity": (-1, 1), "similarities": (-1, 1)}, {"similarity": 1.0}, tolerance=1e-5, examples=200,
        default_examples=50, long_texts=500, entry_point_examples=50,
    ),
    "chrf": Profile({"score": (0, 100)}, {"score": 100.0}),
    # TER counts edits per reference word: above 100 when a prediction is longer than its reference. A long text
    # costs its beam-searched alignment (quadratic in words within the beam): fewer of them, and of at most 4,096
    # characters (2,048 words), the longest pair it scores (MAX_PAIR_CELLS; a longer one is refused with a clear
    # error, test_ter_core's test_very_long_texts_get_a_score_or_a_clear_error)
    "ter": Profile({"score": (0, math.inf), "num_edits": (0, math.inf), "ref_length": (0, math.inf)},
                   {"score": 0.0, "num_edits": 0.0}, long_texts=500,
                   corpora=lambda long_texts: text_pairs(long_texts, long_length=4096)),
    # METEOR's fragmentation penalty keeps identical texts below 1 (1 - gamma / matches^3): its maximum, 1, is
    # checked with the penalty off (gamma=0)
    "meteor": Profile({"meteor": (0, 1)}, {"meteor": 1.0}, identity_options={"gamma": 0.0}, long_texts=500),

    # A tiny random causal LM (built offline, as in test_lm_core) keeps 1,000 examples fast. Its windows are 64
    # tokens, so a long text of 5,000 characters is already about a hundred windows (100,000 characters would be
    # thousands, each long text seconds). Texts are never empty (an empty text has no token to score: NaN by
    # design, covered in test_perplexity)
    "perplexity": Profile(
        {"mean_perplexity": (1, math.inf), "corpus_perplexity": (1, math.inf), "perplexities": (1, math.inf),
         "cross_entropy": (0, math.inf), "bits_per_token": (0, math.inf), "bits_per_byte": (0, math.inf),
         "cross_entropies": (0, math.inf), "bits_per_token_per_text": (0, math.inf),
         "bits_per_byte_per_text": (0, math.inf)},
        {}, tolerance=1e-5, options=tiny_language_model(), examples=250, default_examples=60, long_texts=50,
        entry_point_examples=60,
        corpora=lambda long_texts: non_empty_texts(long_texts, long_length=5_000),
    ),
    **{name: Profile({name: (0, 1)}, {name: 1.0}, corpora=lambda long_texts: label_pairs(long_texts, classes=2),
                     identical=identical_label_pairs(classes=2))
       for name in ("accuracy", "precision", "recall", "f1")},
    "matthews_correlation": Profile({"matthews_correlation": (-1, 1)}, {"matthews_correlation": 1.0},
                                    corpora=label_pairs, identical=identical_label_pairs()),
    # a correlation is a float computation over the whole corpus (as scipy's): another order rounds the last bit
    **{name: Profile({name: (-1, 1)}, {name: 1.0}, tolerance=1e-12, corpora=number_pairs,
                     identical=identical_number_pairs(), statistics=False)
       for name in ("pearsonr", "spearmanr")},
    "exact_match": Profile({"exact_match": (0, 1)}, {"exact_match": 1.0}, corpora=single_reference_pairs),
    "squad": Profile({"exact_match": (0, 100), "f1": (0, 100)}, {"exact_match": 100.0, "f1": 100.0},
                     corpora=squad_pairs, identical=identical_squad_pairs()),
    "squad_v2": Profile(
        {key: (0, 100) for key in ("exact", "f1", "HasAns_exact", "HasAns_f1", "NoAns_exact", "NoAns_f1",
                                   "best_exact", "best_f1")} | {"best_exact_thresh": (0, 1), "best_f1_thresh": (0, 1)},
        {"exact": 100.0, "f1": 100.0, "best_exact": 100.0, "best_f1": 100.0},
        corpora=lambda long_texts: squad_pairs(long_texts, with_probability=True),
        identical=identical_squad_pairs(with_probability=True), statistics=False,
        # the official script walks questions by no-answer probability, ties in input order, and keeps the
        # first best prefix: with tied probabilities the best scores and thresholds follow the input order
        order_dependent=("best_exact", "best_exact_thresh", "best_f1", "best_f1_thresh"),
    ),
    "sari": Profile({key: (0, 100) for key in ("sari", "sari_add", "sari_keep", "sari_del")}, {},
                    corpora=sourced_text_pairs),
    # the suite's tiny random COMET checkpoint (tests/comet_checkpoint.py, bound as the config): scores are
    # unbounded regression outputs; batch composition moves the last bits (1e-5)
    "comet": Profile({"mean_score": (-math.inf, math.inf), "scores": (-math.inf, math.inf)}, {}, tolerance=1e-5,
                     corpora=sourced_text_pairs, averaged=("scores",), examples=60, entry_point_examples=30),
    # the suite's tiny random BLEURT checkpoint (tests/bleurt_checkpoint.py, bound as the config)
    "bleurt": Profile({"mean_score": (-math.inf, math.inf), "scores": (-math.inf, math.inf)}, {}, tolerance=1e-5,
                      averaged=("scores",), examples=60, entry_point_examples=30),
    # the suite's tiny random MetricX checkpoint (tests/metricx_checkpoint.py, bound as the config): error scores
    # clipped to [0, 25]; batch composition moves the last bits
    "metricx": Profile({"mean_score": (0, 25), "scores": (0, 25)}, {}, tolerance=1e-5,
                       corpora=sourced_single_reference_pairs, averaged=("scores",), examples=60,
                       entry_point_examples=30),
    # the suite's tiny random USR models (tests/usr_checkpoint.py, bound as the config): MLM is a mean
    # log-probability, DR scores probabilities, USR their unbounded regression; batch composition moves the last bits
    "usr": Profile({"usr": (-math.inf, math.inf), "mlm": (-math.inf, 0), "dr_context": (0, 1), "dr_fact": (0, 1),
                    "usr_scores": (-math.inf, math.inf), "mlm_scores": (-math.inf, 0), "dr_context_scores": (0, 1),
                    "dr_fact_scores": (0, 1)}, {}, tolerance=1e-5, corpora=dialogues,
                   averaged=("usr_scores", "mlm_scores", "dr_context_scores", "dr_fact_scores"), examples=60,
                   entry_point_examples=30),
    "readability": Profile({"flesch_kincaid_grade": (-3.41, math.inf), "flesch_reading_ease": (-math.inf, 121.23),
                            "words_per_sentence": (1, math.inf), "syllables_per_word": (1, math.inf)}, {},
                           corpora=texts_with_a_word),
    **{name: Profile({"mrr": (0, 1), "map": (0, 1), "num_queries": (1, math.inf),
                      **{f"{measure}@{k}": (0, 1) for measure in ("precision", "recall", "ndcg")
                         for k in (1, 3, 5, 10, 20, 100)}}, {}, corpora=rankings)
       for name in ("mrr", "map", "precision_at_k", "recall_at_k", "ndcg")},
    "seqeval": Profile({f"overall_{key}": (0, 1) for key in ("precision", "recall", "f1", "accuracy")},
                       {"overall_f1": 1.0, "overall_accuracy": 1.0}, corpora=tag_sequence_pairs,
                       identical=identical_tag_sequences()),
    # MiniLM keeps it fast (the default SmolLM2 takes about 20 s to load and featurizes ten times slower);
    # MAUVE needs every feature at once: no statistics
    "mauve": Profile(
        {"mauve": (0, 1), "frontier_integral": (0, 1), "mauve_star": (0, 1), "frontier_integral_star": (0, 1),
         "p_hist": (0, 1), "q_hist": (0, 1), "divergence_curve": (0, 1)},
        {"mauve": 1.0, "frontier_integral": 0.0}, tolerance=1e-5,
        options={"featurize_model_name": "all-MiniLM-L6-v2", "device_id": -1}, examples=40, default_examples=20,
        entry_point_examples=20,
        long_texts=500, corpora=text_samples, statistics=False,
    ),
    # every key a correlation (-1..1), an accuracy or p-value (0..1) or a count; identical scores rank alike (every
    # level: system, segment and turn)
    "meta_evaluation": Profile(
        {**{key: (-1, 1) for key in ("system/pearson", "system/spearman", "system/kendall", "segment/kendall_b",
                                     "segment/kendall_c", "segment/kendall_like", "turn/pearson", "turn/spearman")},
         **{key: (0, 1) for key in ("system/pairwise_accuracy", "segment/pairwise_accuracy", "system/pearson_pvalue",
                                    "system/spearman_pvalue", "system/kendall_pvalue", "turn/pearson_pvalue",
                                    "turn/spearman_pvalue")},
         **{key: (0, math.inf) for key in ("num_systems", "num_items", "num_segments", "segment/kendall_groups",
                                           "segment/accuracy_groups", "segment/darr_pairs")}},
        {key: 1.0 for key in ("system/pearson", "system/spearman", "system/kendall", "system/pairwise_accuracy",
                              "segment/pairwise_accuracy", "turn/pearson")},
        options={"level": ["system", "segment", "turn"]}, corpora=score_rows, identical=identical_score_rows(),
    ),
    # ordinal alpha on ratings with missing data (the statistics are rating counts: an item's ratings may be split
    # across batches and shards); kappas and alpha are at most 1 (lower bounds depend on the data); every
    # annotator giving an item the same label is perfect agreement
    "agreement": Profile(
        {"krippendorff_alpha": (-math.inf, 1), "percent_agreement": (0, 1),
         **{key: (0, math.inf) for key in ("num_items", "num_ratings", "num_annotators", "num_unpairable_items")}},
        {"krippendorff_alpha": 1.0, "percent_agreement": 1.0}, options={"level_of_measurement": "ordinal"},
        corpora=lambda long_texts: rating_rows(long_texts).filter(_has_two_pairable_labels),
        identical=identical_rating_rows(),
    ),
    # identical entities: every mention and entity found (MUC and BLANC have no links to find in all-singleton
    # documents, so their best value is not promised)
    "coval": Profile(
        {**{f"{measure}/{part}": (0, 1) for measure in ("mentions", "muc", "bcub", "ceafm", "ceafe", "lea", "blanc")
            for part in ("recall", "precision", "f1")}, "conll_score": (0, 100)},
        {f"{measure}/f1": 1.0 for measure in ("mentions", "bcub", "ceafm", "ceafe", "lea")},
        tolerance=1e-12, corpora=coref_pairs, identical=identical_coref_pairs(),
    ),
}


def size_of(corpus: Corpus) -> int:
    return len(next(iter(corpus.values())))


def select(corpus: Corpus, indices: Sequence[int]) -> Corpus:
    return {column: [values[i] for i in indices] for column, values in corpus.items()}


def example(corpus: Corpus, index: int) -> dict[str, Any]:
    """One example as `evaluate.combine(...).add` takes it (prediction=, reference=, other columns by name)."""
    singular = {"predictions": "prediction", "references": "reference"}
    return {singular.get(column, column): values[index] for column, values in corpus.items()}


def metric_cases(names: Sequence[str]) -> list[Any]:
    """(name, bounded) for each metric: twice where `default_examples` bounds the default run, bounded and in
    full as a slow test (id ``<name>-full``)."""
    cases = []
    for name in names:
        if name in PROFILES and PROFILES[name].default_examples < PROFILES[name].examples:
            cases += [pytest.param(name, True, id=name),
                      pytest.param(name, False, id=f"{name}-full", marks=pytest.mark.slow)]
        else:
            cases.append(pytest.param(name, False, id=name))
    return cases


def property_settings(name: str, bounded: bool, examples: int | None = None) -> settings:
    """hypothesis's settings: the profile's corpora count (or ``examples``), at most `default_examples` when
    ``bounded``."""
    profile = PROFILES[name]
    count = examples or profile.examples
    return settings(
        max_examples=min(count, profile.default_examples) if bounded else count,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )


def with_regressions(profile: Profile, *fixed: Any) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """hypothesis `example`s of the profile's regression corpora (the property's other arguments ``fixed``)."""
    def decorate(check: Callable[..., None]) -> Callable[..., None]:
        for corpus in profile.regressions:
            check = hypothesis.example(corpus, *fixed)(check)
        return check

    return decorate


@pytest.fixture(scope="module", autouse=True)
def every_metric_loaded() -> None:
    """Every metric loaded before the first property: the constants hypothesis draws from the loaded local modules'
    code (see conftest's pytest_collection_modifyitems) are then those of every metric, whichever runs first."""
    for name in METRICS:
        load_metric(name)


def numbers(value: Any) -> list[float]:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, Mapping):
        return [number for item in value.values() for number in numbers(item)]
    if isinstance(value, Sequence):
        return [number for item in value for number in numbers(item)]
    return []


def assert_close(ours: Any, theirs: Any, tolerance: float, context: str) -> None:
    if isinstance(ours, Mapping):
        assert ours.keys() == theirs.keys(), context
        for key in ours:
            assert_close(ours[key], theirs[key], tolerance, f"{context}[{key}]")
    elif isinstance(ours, (list, tuple)):
        assert len(ours) == len(theirs), context
        for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            assert_close(a, b, tolerance, f"{context}[{index}]")
    elif isinstance(ours, float) and math.isnan(ours):  # NaN agrees only with NaN
        assert isinstance(theirs, float) and math.isnan(theirs), f"{context}: {ours} != {theirs}"
    elif isinstance(ours, float) and tolerance:
        assert math.isclose(ours, theirs, abs_tol=tolerance), f"{context}: {ours} != {theirs}"
    else:
        assert ours == theirs, f"{context}: {ours!r} != {theirs!r}"


def aggregate(profile: Profile, result: Mapping[str, Any]) -> dict[str, Any]:
    """The corpus-level part of a result: per-example lists become their means (``averaged``) or are left out."""
    return {key: math.fsum(value) / len(value) if key in profile.averaged else value
            for key, value in result.items() if key in profile.averaged or not isinstance(value, list)}


def order_free(profile: Profile, result: Mapping[str, Any]) -> dict[str, Any]:
    """The corpus-level outputs that must not depend on the order of the examples."""
    return {key: value for key, value in aggregate(profile, result).items() if key not in profile.order_dependent}


def test_every_metric_has_a_profile() -> None:
    assert set(METRICS) <= set(PROFILES), f"add a property profile for {sorted(set(METRICS) - set(PROFILES))}"


@pytest.mark.parametrize(("name", "bounded"), metric_cases(METRICS))
def test_results_are_finite_and_in_range(name: str, bounded: bool) -> None:
    profile, metric = PROFILES[name], load_metric(name)

    @property_settings(name, bounded)
    @with_regressions(profile)
    @given(profile.corpora(profile.long_texts))
    def check(corpus: Corpus) -> None:
        undefined = profile.undefined is not None and profile.undefined(corpus)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = metric.compute(**corpus, **profile.options)
        values = numbers(result)
        assert all(math.isfinite(number) or (undefined and math.isnan(number)) for number in values), result
        if any(math.isnan(number) for number in values):
            assert any("NaN" in str(warning.message) for warning in caught), f"NaN without a warning: {result}"
        for key, (low, high) in profile.ranges.items():  # keys a result may leave out (no such examples)
            for number in numbers(result.get(key)):
                assert math.isnan(number) or low - 1e-6 <= number <= high + 1e-6, (key, number)

    check()


@pytest.mark.parametrize(("name", "bounded"), metric_cases(METRICS))
def test_order_of_examples_does_not_matter(name: str, bounded: bool) -> None:
    profile, metric = PROFILES[name], load_metric(name)

    @property_settings(name, bounded)
    @with_regressions(profile, random.Random(0))
    @given(profile.corpora(profile.long_texts), st.randoms(use_true_random=False))
    def check(corpus: Corpus, rng: Any) -> None:
        order = list(range(size_of(corpus)))
        rng.shuffle(order)
        first = metric.compute(**corpus, **profile.options)
        shuffled = metric.compute(**select(corpus, order), **profile.options)
        assert_close(order_free(profile, shuffled), order_free(profile, first), profile.tolerance, name)

    check()


@pytest.mark.parametrize(("name", "bounded"), metric_cases(METRICS))
def test_statistics_shards_and_streaming_equal_one_shot(name: str, bounded: bool) -> None:
    profile, metric = PROFILES[name], load_metric(name)
    streamed = evaluate.load(str(METRICS_DIR / name), model_config(name), experiment_id=uuid.uuid4().hex)

    @property_settings(name, bounded)
    @with_regressions(profile, 1)
    @given(profile.corpora(profile.long_texts), st.integers(1, 5))
    def check(corpus: Corpus, split: int) -> None:
        one_shot = metric.compute(**corpus, **profile.options)
        size = size_of(corpus)
        split = min(split, size)
        for start in range(0, size, split):
            streamed.add_batch(**select(corpus, range(start, min(start + split, size))))
        streamed.stream_batch_size = 2
        assert_close(streamed.compute(**profile.options), one_shot, profile.tolerance, f"{name}: streamed")
        if not profile.statistics:
            return
        stats = metric.example_stats(**corpus, **profile.options)
        from_stats = metric.compute_from_stats(stats, **profile.options)
        shards = [metric.reduce_stats(metric.example_stats(**select(corpus, range(a, b)), **profile.options),
                                      **profile.options)
                  for a, b in ((0, split), (split, size)) if a < b]
        merged = metric.compute_from_stats(shards[::-1], **profile.options)
        # a model metric's shard statistics come from other batches (float summation order): its tolerance
        assert_close(merged, from_stats, profile.tolerance, f"{name}: merged shards")
        expected = aggregate(profile, one_shot)
        for key in expected.keys() & from_stats.keys():
            assert_close(from_stats[key], expected[key], profile.tolerance, f"{name}: compute_from_stats {key}")

    check()


@pytest.mark.parametrize(("name", "bounded"), metric_cases(METRICS))
def test_repeated_configured_and_combined_computes_agree(name: str, bounded: bool) -> None:
    profile, metric = PROFILES[name], load_metric(name)
    configured = evaluate.load(str(METRICS_DIR / name), model_config(name), experiment_id=uuid.uuid4().hex).configure(**profile.options)

    @property_settings(name, bounded, profile.entry_point_examples)
    @with_regressions(profile)
    @given(profile.corpora(profile.long_texts))
    def check(corpus: Corpus) -> None:
        first = metric.compute(**corpus, **profile.options)
        assert_close(metric.compute(**corpus, **profile.options), first, 0.0, "twice")
        assert_close(configured.compute(**corpus), first, 0.0, "configured")
        combined = evaluate.combine([configured])
        for index in range(size_of(corpus)):
            combined.add(**example(corpus, index))
        assert_close(combined.compute(), first, profile.tolerance, "combine.add")

    check()


@pytest.mark.parametrize(("name", "bounded"),
                         metric_cases([name for name in METRICS if name in PROFILES and PROFILES[name].identity]))
def test_identical_inputs_get_the_best_score(name: str, bounded: bool) -> None:
    profile, metric = PROFILES[name], load_metric(name)

    @property_settings(name, bounded)
    @given(profile.identical)
    def check(corpus: Corpus) -> None:
        result = metric.compute(**corpus, **{**profile.options, **profile.identity_options})
        for key, maximum in profile.identity.items():
            for number in numbers(result[key]):
                assert math.isclose(number, maximum, abs_tol=max(profile.tolerance, 1e-12)), (key, number, corpus)

    check()
