"""Input kinds: the shapes of metric inputs, each with its columns, its evaluate features and its checks.

A metric declares one :class:`InputKind`. The kind validates and normalises
every batch before anything is written to evaluate's cache or scored, so bad
input fails at once with an error that names the metric, the argument and the
example; and it declares the ``datasets`` features evaluate writes the inputs
with. Kinds: :data:`TEXT_PAIRS` (predictions with one or several references),
:data:`TEXTS` (predictions alone), :data:`SOURCED_TEXT_PAIRS` (sources,
predictions and references), :data:`SOURCED_TEXTS` (sources and predictions, with references or without:
then each example's reference list is empty), :data:`LABELS` (class labels, or 0/1 label rows
for the ``multilabel`` configuration), :data:`NUMBER_PAIRS` (real-valued
predictions and references) and :data:`LABEL_SEQUENCES` (one sequence of
string tags per example, as for sequence labelling).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .core_checks import check_label_list, check_number_list, check_reference_lists, check_same_length
from .core_checks import check_tag_sequences, check_text_list

Columns = dict[str, list[Any]]
BatchCheck = Callable[[str, Mapping[str, Any], bool], Columns]


@dataclass(frozen=True)
class InputKind:
    """One shape of inputs: column names, their features (by evaluate config name), the batch check, and, where
    the checked columns are not already in the form of the features, what turns them into it (for evaluate's
    cache; the check accepts that form back); ``optional``: the columns a caller may leave out (the check fills
    them in)."""

    name: str
    columns: tuple[str, ...]
    make_features: Callable[[str], Any]
    check_batch: BatchCheck
    make_stored: Callable[[Columns], Columns] | None = None
    optional: tuple[str, ...] = ()

    def features(self, config_name: str = "default") -> Any:
        """evaluate's features for these inputs (a list of alternatives or one ``datasets.Features``)."""
        return self.make_features(config_name)

    def check(self, metric: str, given: Mapping[str, Any], *, allow_empty: bool = False) -> Columns:
        """Every column validated and normalised (lists; references as one list of strings per example)."""
        return self.check_batch(metric, given, allow_empty)

    def stored(self, columns: Columns) -> Columns:
        """Checked columns in the form of the features (what evaluate's cache and a ``datasets`` column hold)."""
        return columns if self.make_stored is None else self.make_stored(columns)

    def check_example(self, metric: str, given: Mapping[str, Any]) -> Columns:
        """One example (the values of ``add``) as a checked batch of one."""
        return self.check_batch(metric, {name: [given.get(name)] for name in self.columns}, False)

    def size(self, columns: Mapping[str, Any]) -> int:
        return len(columns[self.columns[0]])


def _string() -> Any:
    import datasets

    return datasets.Value("string", id="sequence")


def _text_pair_features(config_name: str) -> list[Any]:
    import datasets

    return [
        datasets.Features({"predictions": _string(), "references": datasets.Sequence(_string(), id="references")}),
        datasets.Features({"predictions": _string(), "references": _string()}),
    ]


def _check_text_pairs(metric: str, given: Mapping[str, Any], allow_empty: bool) -> Columns:
    predictions = check_text_list(metric, "predictions", given.get("predictions"), allow_empty=allow_empty)
    references = check_reference_lists(metric, given.get("references"), len(predictions))
    return {"predictions": predictions, "references": references}


TEXT_PAIRS = InputKind("text pairs", ("predictions", "references"), _text_pair_features, _check_text_pairs)


def _text_features(config_name: str) -> Any:
    import datasets

    return datasets.Features({"predictions": _string()})


def _check_texts(metric: str, given: Mapping[str, Any], allow_empty: bool) -> Columns:
    return {"predictions": check_text_list(metric, "predictions", given.get("predictions"), allow_empty=allow_empty)}


TEXTS = InputKind("texts", ("predictions",), _text_features, _check_texts)


def _sourced_features(config_name: str) -> list[Any]:
    import datasets

    return [
        datasets.Features({"sources": _string(), "predictions": _string(),
                           "references": datasets.Sequence(_string(), id="references")}),
        datasets.Features({"sources": _string(), "predictions": _string(), "references": _string()}),
    ]


def _check_sourced(metric: str, given: Mapping[str, Any], allow_empty: bool) -> Columns:
    predictions = check_text_list(metric, "predictions", given.get("predictions"), allow_empty=allow_empty)
    references = check_reference_lists(metric, given.get("references"), len(predictions))
    sources = check_text_list(metric, "sources", given.get("sources"), allow_empty=True)
    check_same_length(metric, ("predictions", len(predictions)), ("sources", len(sources)))
    return {"sources": sources, "predictions": predictions, "references": references}


SOURCED_TEXT_PAIRS = InputKind(
    "sources, predictions and references", ("sources", "predictions", "references"), _sourced_features, _check_sourced
)


def _sourced_reference_list_features(config_name: str) -> Any:
    import datasets

    return datasets.Features({"sources": _string(), "predictions": _string(),
                              "references": datasets.Sequence(_string(), id="references")})


def _check_sourced_optional_references(metric: str, given: Mapping[str, Any], allow_empty: bool) -> Columns:
    if given.get("references") is not None:
        return _check_sourced(metric, given, allow_empty)
    predictions = check_text_list(metric, "predictions", given.get("predictions"), allow_empty=allow_empty)
    sources = check_text_list(metric, "sources", given.get("sources"), allow_empty=True)
    check_same_length(metric, ("predictions", len(predictions)), ("sources", len(sources)))
    return {"sources": sources, "predictions": predictions, "references": [[] for _ in predictions]}


SOURCED_TEXTS = InputKind(
    "sources and predictions, references optional", ("sources", "predictions", "references"),
    _sourced_reference_list_features, _check_sourced_optional_references, optional=("references",),
)


def _label_features(config_name: str) -> Any:
    import datasets

    label = datasets.Value("int32")
    if config_name == "multilabel":
        return datasets.Features({"predictions": datasets.Sequence(label), "references": datasets.Sequence(label)})
    return datasets.Features({"predictions": label, "references": label})


def _paired(check_values: Callable[..., list[Any]]) -> BatchCheck:
    """A batch check of predictions and references that are each one list checked by ``check_values``."""

    def check(metric: str, given: Mapping[str, Any], allow_empty: bool) -> Columns:
        predictions = check_values(metric, "predictions", given.get("predictions"), allow_empty=allow_empty)
        references = check_values(metric, "references", given.get("references"), allow_empty=allow_empty)
        check_same_length(metric, ("predictions", len(predictions)), ("references", len(references)))
        return {"predictions": predictions, "references": references}

    return check


LABELS = InputKind("labels", ("predictions", "references"), _label_features, _paired(check_label_list))


def _number_features(config_name: str) -> Any:
    import datasets

    return datasets.Features({"predictions": datasets.Value("float64"), "references": datasets.Value("float64")})


NUMBER_PAIRS = InputKind("number pairs", ("predictions", "references"), _number_features, _paired(check_number_list))


def _tag_features(config_name: str) -> Any:
    import datasets

    tags = datasets.Sequence(datasets.Value("string", id="label"), id="sequence")
    return datasets.Features({"predictions": tags, "references": tags})


def _check_tags(metric: str, given: Mapping[str, Any], allow_empty: bool) -> Columns:
    predictions = check_tag_sequences(metric, "predictions", given.get("predictions"), allow_empty=allow_empty)
    references = check_tag_sequences(metric, "references", given.get("references"), allow_empty=allow_empty)
    check_same_length(metric, ("predictions", len(predictions)), ("references", len(references)))
    for index, (predicted, gold) in enumerate(zip(predictions, references, strict=True)):
        if len(predicted) != len(gold):
            raise ValueError(
                f"{metric}: `predictions[{index}]` has {len(predicted)} tags but `references[{index}]` has "
                f"{len(gold)}; each sequence needs one predicted tag per gold tag"
            )
    return {"predictions": predictions, "references": references}


LABEL_SEQUENCES = InputKind("label sequences", ("predictions", "references"), _tag_features, _check_tags)

INPUT_KINDS = (TEXT_PAIRS, TEXTS, SOURCED_TEXT_PAIRS, SOURCED_TEXTS, LABELS, NUMBER_PAIRS, LABEL_SEQUENCES)
