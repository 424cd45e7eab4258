"""Dialogue evaluation: every chosen metric's turn-level and system-level correlation with each human quality of
rated dialogue responses, and the annotators' agreement on each quality, as one table.

The input is one row per rated response (``read_jsonl``; or the USR release's JSON, ``read_usr_json``): its dialogue
context, fact, response, system, optional reference and ratings (quality -> one rating per annotator position).
Each metric scores the rows it can (reference-based metrics the rows with a reference, reference-free ones every
row); its per-example numbers come from the module's per-example statistics (``MetricStatistics.per_example``: each
example's statistics scored alone, which is BLEU's ``sentence_scores``, ROUGE's ``use_aggregator=False`` and USR's
``usr_scores``), and ``metrics/meta_evaluation`` correlates them with the mean human rating of each quality;
``metrics/agreement`` gives the annotators' agreement.

    from comparison.dialogue import dialogue_report, read_usr_json, with_reference_system
    rows = with_reference_system(read_usr_json(path), "Original Ground Truth")
    report = dialogue_report(rows, ["bleu", "rouge"])
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from comparison.data import ComparisonError
from comparison.statistics import Headline, MetricStatistics
from comparison.files import jsonl_records

# The input columns of a metric module that a dialogue row fills, and the row's attribute for each.
COLUMNS = {"predictions": "response", "references": "reference", "contexts": "context", "facts": "fact"}
# The numbers reported for metrics that the comparison's headlines do not name (there: every numeric output).
DIALOGUE_HEADLINES: dict[str, tuple[tuple[str, str, bool], ...]] = {
    "usr": (("usr", "USR", True), ("mlm", "USR MLM", True), ("dr_context", "USR DR-c", True),
            ("dr_fact", "USR DR-f", True)),
}
CORRELATIONS = ("pearson", "spearman")
LEVELS = ("turn", "system")
AGREEMENT = (("pairwise_spearman", "mean pairwise Spearman"), ("pairwise_pearson", "mean pairwise Pearson"),
             ("leave_one_out_spearman", "leave-one-out Spearman"), ("leave_one_out_pearson", "leave-one-out Pearson"),
             ("krippendorff_alpha", "Krippendorff's alpha"))
AGREEMENT_LABEL = "annotators"
ALPHA_LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _error(message: str) -> ComparisonError:
    return ComparisonError(f"dialogue: {message}")


# -- rows ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DialogueRow:
    """One rated response. ``ratings``: quality -> one rating per annotator position (the i-th rating of every
    response is position i's); ``annotators``: the annotators' ids in that order, when given; ``where``: the row's
    place in the input, for messages."""

    where: str
    item: str
    context: str
    fact: str
    response: str
    system: str
    reference: str | None
    ratings: dict[str, tuple[float, ...]]
    annotators: tuple[str, ...] | None = None

    def human(self, quality: str) -> float:
        """The mean of the annotators' ratings of ``quality``."""
        ratings = self.ratings[quality]
        return math.fsum(ratings) / len(ratings)

    def record(self) -> dict[str, Any]:
        """The row as a JSONL object (what ``read_jsonl`` reads back)."""
        record: dict[str, Any] = {"item": self.item, "context": self.context, "fact": self.fact,
                                  "response": self.response, "system": self.system}
        if self.reference is not None:
            record["reference"] = self.reference
        record["ratings"] = {quality: list(ratings) for quality, ratings in self.ratings.items()}
        if self.annotators is not None:
            record["annotators"] = list(self.annotators)
        return record


def _text(record: Mapping[str, Any], keys: Sequence[str], where: str, required: bool = True) -> str | None:
    key = next((key for key in keys if key in record), None)
    if key is None:
        if required:
            raise _error(f"{where} has no field {' or '.join(repr(key) for key in keys)}")
        return None
    value = record[key]
    if not isinstance(value, str):
        raise _error(f"{where}: {key!r} is a {type(value).__name__}, not a string")
    return value


def _rating(value: Any, where: str, quality: str, position: int) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _error(f"{where}: rating {position} of {quality!r} is {value!r}, not a finite number")
    return value


def row_from_record(record: Any, where: str) -> DialogueRow:
    """A checked row from one JSON object: ``context``, ``fact`` (default empty), ``response`` (or ``prediction``),
    ``system``, optional ``reference``, ``ratings`` ({quality: [rating per annotator]}), optional ``annotators``
    (ids, one per rating) and optional ``item`` (the context's id; default: the context text)."""
    if not isinstance(record, Mapping):
        raise _error(f"{where} is a {type(record).__name__}, not a JSON object")
    context = _text(record, ("context",), where)
    fact = _text(record, ("fact",), where, required=False) or ""
    response = _text(record, ("response", "prediction"), where)
    system = record.get("system")
    if isinstance(system, bool) or not isinstance(system, (str, int)):
        raise _error(f"{where}: 'system' must be a name (a string), not {system!r}")
    reference = record.get("reference")
    if reference is not None and not isinstance(reference, str):
        raise _error(f"{where}: 'reference' is a {type(reference).__name__}, not a string (or leave it out)")
    item = record.get("item", context)
    if isinstance(item, bool) or not isinstance(item, (str, int)):
        raise _error(f"{where}: 'item' must be a string or an integer, not {item!r}")
    ratings = record.get("ratings")
    if not isinstance(ratings, Mapping) or not ratings:
        raise _error(f"{where}: 'ratings' must be an object {{quality: [rating per annotator]}}, not {ratings!r}")
    checked = {}
    for quality, values in ratings.items():
        if not isinstance(values, (list, tuple)) or not values:
            raise _error(f"{where}: ratings of {quality!r} must be a non-empty list (one per annotator), not "
                         f"{values!r}")
        checked[str(quality)] = tuple(_rating(value, where, quality, index) for index, value in enumerate(values))
    annotators = record.get("annotators")
    if annotators is not None:
        if not isinstance(annotators, (list, tuple)) or not all(isinstance(a, (str, int)) for a in annotators):
            raise _error(f"{where}: 'annotators' must be a list of ids, not {annotators!r}")
        for quality, values in checked.items():
            if len(values) != len(annotators):
                raise _error(f"{where}: {len(values)} ratings of {quality!r} but {len(annotators)} annotators")
        annotators = tuple(str(annotator) for annotator in annotators)
        if len(set(annotators)) != len(annotators):
            raise _error(f"{where}: an annotator is named twice in {list(annotators)}")
    return DialogueRow(where, str(item), context, fact, response, str(system), reference, checked, annotators)


def read_jsonl(path: Path) -> list[DialogueRow]:
    """Rows from a JSONL file of rated responses (one object per line; ``row_from_record``)."""
    if not path.is_file():
        raise _error(f"{path} does not exist")
    try:
        records = jsonl_records(path)
    except ValueError as error:
        raise _error(str(error)) from None
    if not records:
        raise _error(f"{path} holds no records")
    return [row_from_record(record, f"{path}:{number}") for number, record in records]


def usr_rows(contexts: Any, name: str = "USR data") -> list[DialogueRow]:
    """Rows from the USR release's JSON (a list of contexts: ``context``, ``fact``, ``annotators``, ``responses``,
    each response a ``response``, its ``model`` and one list of ratings per quality in the order of ``annotators``).
    The context's position in the list is the item; the model is the system."""
    if not isinstance(contexts, list) or not contexts:
        raise _error(f"{name} must be a non-empty JSON list of contexts, as the USR release's files are")
    rows = []
    for index, context in enumerate(contexts):
        where = f"{name} context {index}"
        if not isinstance(context, Mapping) or not isinstance(context.get("responses"), list):
            raise _error(f"{where} has no list of 'responses'")
        if not context["responses"]:
            raise _error(f"{where} has no responses")
        for number, response in enumerate(context["responses"]):
            if not isinstance(response, Mapping):
                raise _error(f"{where} response {number} is not a JSON object")
            ratings = {key: value for key, value in response.items() if key not in ("response", "model")}
            record = {"item": index, "context": context.get("context"), "fact": context.get("fact", ""),
                      "response": response.get("response"), "system": response.get("model"), "ratings": ratings}
            if "annotators" in context:
                record["annotators"] = context["annotators"]
            rows.append(row_from_record(record, f"{where} response {number}"))
    return rows


def read_usr_json(path: Path) -> list[DialogueRow]:
    """Rows from a file of the USR release (``usr_topical_chat.json``, ``usr_percona_chat.json``)."""
    if not path.is_file():
        raise _error(f"{path} does not exist")
    try:
        contexts = json.loads(path.read_text(encoding="utf-8-sig"))  # a byte-order mark is not part of the JSON
    except UnicodeDecodeError as error:
        raise _error(f"{path} is not UTF-8 text: {error}") from None
    except (ValueError, RecursionError) as error:  # JSONDecodeError; nesting too deep for the parser
        raise _error(f"{path} is not JSON that can be read: {error}") from None
    return usr_rows(contexts, str(path))


def read_rows(path: Path) -> list[DialogueRow]:
    """A ``.json`` file as the USR release, anything else as JSONL rows."""
    return read_usr_json(path) if path.suffix.lower() == ".json" else read_jsonl(path)


def with_reference_system(rows: Sequence[DialogueRow], system: str) -> list[DialogueRow]:
    """Each context's response by ``system`` (e.g. USR's "Original Ground Truth") becomes the reference of the
    other responses to that context that have none; ``system``'s own responses get no reference (scored against
    themselves they would score perfectly), so reference-based metrics leave them out."""
    references = {}
    for row in rows:
        if row.system == system:
            if row.item in references:
                raise _error(f"{row.where}: a second response of the reference system {system!r} to one context")
            references[row.item] = row.response
    if not references:
        raise _error(f"the reference system {system!r} has no rows; the systems are "
                     f"{sorted({row.system for row in rows})}")
    return [replace(row, reference=None) if row.system == system else
            row if row.reference is not None else replace(row, reference=references.get(row.item)) for row in rows]


def select_systems(rows: Sequence[DialogueRow], systems: Sequence[str]) -> list[DialogueRow]:
    """The rows of ``systems`` only; each of them must have rows."""
    present = {row.system for row in rows}
    empty = [system for system in systems if system not in present]
    if empty:
        raise _error(f"the systems {empty} have no rows; the systems are {sorted(present)}")
    return [row for row in rows if row.system in set(systems)]


def write_jsonl(rows: Sequence[DialogueRow], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row.record(), ensure_ascii=False) + "\n")


@dataclass(frozen=True)
class DialogueData:
    """Checked rows: every row rates the same qualities, each quality with as many ratings in every row; one
    response per (system, context); at least two systems (system-level correlation needs them)."""

    rows: list[DialogueRow]
    qualities: list[str] = field(init=False)

    def __post_init__(self) -> None:
        rows = self.rows
        if not rows:
            raise _error("no rated responses")
        first = rows[0]
        qualities = list(first.ratings)
        for row in rows:
            missing = [quality for quality in qualities if quality not in row.ratings]
            if missing:
                raise _error(f"{row.where} has no ratings of {missing[0]!r}, which {first.where} has; every row "
                             "must rate the same qualities")
            stray = [quality for quality in row.ratings if quality not in first.ratings]
            if stray:
                raise _error(f"{row.where} rates {stray[0]!r}, which {first.where} does not; every row must rate "
                             "the same qualities")
            for quality in qualities:
                if len(row.ratings[quality]) != len(first.ratings[quality]):
                    raise _error(f"{row.where} has {len(row.ratings[quality])} ratings of {quality!r} but "
                                 f"{first.where} has {len(first.ratings[quality])}; every row needs one rating per "
                                 "annotator position")
        seen: dict[tuple[str, str], str] = {}
        for row in rows:
            key = (row.system, row.item)
            if key in seen:
                raise _error(f"{row.where}: system {row.system!r} answers the context of {seen[key]} again; give "
                             "one response per system and context (or distinct 'item' ids)")
            seen[key] = row.where
        if len(self.systems) < 2:
            raise _error(f"system-level correlation needs at least two systems; the rows have {self.systems}")
        object.__setattr__(self, "qualities", qualities)

    @property
    def systems(self) -> list[str]:
        return list(dict.fromkeys(row.system for row in self.rows))

    def human(self, indices: Sequence[int]) -> dict[str, list[float]]:
        """The mean rating of each quality of the rows at ``indices``."""
        return {quality: [self.rows[index].human(quality) for index in indices] for quality in self.qualities}


# -- metrics ------------------------------------------------------------------------------------------------------


class DialogueMetric(MetricStatistics):
    """A metric module with its options, scoring the dialogue rows it can: reference-based metrics (input column
    ``references``) the rows with a reference, reference-free ones every row; checked before any scoring."""

    def __init__(self, name: str, module: Any, options: Mapping[str, Any], data: DialogueData) -> None:
        try:
            super().__init__(name, module, options)
        except ComparisonError as error:
            raise _error(str(error).removeprefix("compare: ")) from None
        columns = list(module.inputs.columns)
        unknown = [column for column in columns if column not in COLUMNS]
        if unknown:
            raise _error(f"{name} needs the input columns {unknown}, which dialogue rows do not have (they fill "
                         f"{sorted(COLUMNS)})")
        self.reference_based = "references" in columns
        self.indices = [index for index, row in enumerate(data.rows)
                        if not self.reference_based or row.reference is not None]
        if not self.indices:
            raise _error(f"{name} needs references and no response has one; give rows a 'reference', or name the "
                         "system whose responses are the references (--reference-system)")
        systems = {data.rows[index].system for index in self.indices}
        if len(systems) < 2:
            raise _error(f"{name} scores the responses of {sorted(systems)} only; system-level correlation needs "
                         "two systems")
        self.columns = {column: [getattr(data.rows[index], COLUMNS[column]) for index in self.indices]
                        for column in columns}

    def inputs(self, data: Any = None, system: Any = None) -> dict[str, Any]:
        return self.columns

    def check(self, data: Any = None) -> None:
        try:
            self.module.inputs.check(self.name, self.columns)
        except (TypeError, ValueError) as error:
            raise _error(str(error)) from None

    def _headlines(self, result: Mapping[str, Any]) -> list[Headline]:
        declared = DIALOGUE_HEADLINES.get(self.name)
        if declared is not None:
            return [Headline(self.name, key, label, higher) for key, label, higher in declared if key in result]
        headlines = super()._headlines(result)
        if self.name == "bleu":  # BLEU-k of `orders` (USR's Tables 5 and 6 report BLEU-1..4)
            orders = sorted(int(key[5:]) for key in result if key.startswith("bleu_") and key[5:].isdigit())
            headlines += [Headline("bleu", f"bleu_{order}", f"BLEU-{order}") for order in orders]
        return headlines


# -- the report ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TableRow:
    """One row of the table: a metric headline's correlation at one level (``section`` "metric": ``level`` "turn"
    or "system", ``statistic`` "pearson" or "spearman"), or one agreement coefficient of the annotators (``section``
    and ``level`` "agreement", ``statistic`` the agreement module's output key); a value (and a p-value) per
    quality."""

    section: str
    metric: str
    output: str
    label: str
    level: str
    statistic: str
    statistic_label: str
    responses: int
    systems: int
    values: dict[str, float]
    pvalues: dict[str, float] | None = None


@dataclass
class DialogueReport:
    qualities: list[str]
    systems: list[str]
    responses: int
    table: list[TableRow]
    notes: list[str]
    options: dict[str, dict[str, Any]]
    signatures: dict[str, str]
    reference_system: str | None = None

    def row(self, label: str, level: str, statistic: str) -> TableRow:
        """The row of a metric headline (its label, e.g. "BLEU-2"), a level and a correlation."""
        found = [row for row in self.table if (row.label, row.level, row.statistic) == (label, level, statistic)]
        if not found:
            raise KeyError(f"no row {label!r}, {level!r}, {statistic!r} in the table")
        return found[0]

    def agreement(self, coefficient: str) -> TableRow:
        """The row of an agreement coefficient (e.g. "pairwise_spearman")."""
        return self.row(AGREEMENT_LABEL, "agreement", coefficient)


def prepare(data: DialogueData, metrics: Sequence[str], options: Mapping[str, Mapping[str, Any]] | None = None
            ) -> list[DialogueMetric]:
    """The metric modules with their options, every input checked: every error of metric names, options and
    inputs is raised here, before any scoring."""
    import evaluate

    from comparison.report import METRICS_DIR, checked_metric_options

    if not metrics:
        raise _error("name at least one metric (-m)")
    options = checked_metric_options("dialogue", list(metrics), options)
    prepared = []
    for name in metrics:
        metric = DialogueMetric(name, evaluate.load(str(METRICS_DIR / name)), options.get(name, {}), data)
        metric.check()
        prepared.append(metric)
    return prepared


def _undefined(caught: Sequence[warnings.WarningMessage], keys: Mapping[str, str], label: str) -> list[str]:
    """meta_evaluation's warnings of undefined correlations (reported as 0.0) with the qualities' names, once each
    (those of ``references`` repeat the first quality's), re-issued and returned as notes."""
    names = {f"({key})": f"(quality {quality!r})" for quality, key in keys.items()}
    notes = []
    for warning in caught:
        text = str(warning.message)
        named = next((key for key in names if key in text), None)
        if named is None and issubclass(warning.category, UserWarning) and "undefined" in text:
            continue
        note = f"{label}: {text.replace(named, names[named]) if named else text}"
        warnings.warn(note, warning.category, stacklevel=3)
        notes.append(note)
    return notes


def metric_rows(metric: DialogueMetric, data: DialogueData, meta: Any) -> tuple[list[TableRow], list[str]]:
    """The metric's per-example numbers, then per headline the turn- and system-level correlations with every
    quality (one meta_evaluation call); lower-is-better headlines are negated, so positive means agreement. Also
    the notes of correlations that are undefined (a constant side: 0.0, as meta_evaluation reports them)."""
    metric.add_system(None, "rows")
    per_example = metric.per_example("rows")
    rows, notes = [], []
    for position, headline in enumerate(metric.headlines):
        values = per_example[:, position]
        kept = [index for index, value in zip(metric.indices, values) if not math.isnan(value)]
        scores = [float(value) for value in values if not math.isnan(value)]
        if len(kept) < 2:
            raise _error(f"{headline.label} is defined for {len(kept)} responses; correlation needs two")
        sign = 1.0 if headline.higher_is_better else -1.0
        human = data.human(kept)
        # meta_evaluation's quality names prefix its keys: positions, so that any quality name works
        keys = {quality: f"q{position}" for position, quality in enumerate(data.qualities)}
        systems = [data.rows[index].system for index in kept]
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = meta.compute(predictions=[sign * score for score in scores],
                                      references=human[data.qualities[0]],
                                      qualities={keys[quality]: values for quality, values in human.items()},
                                      systems=systems, items=[data.rows[index].item for index in kept],
                                      level=list(LEVELS))
        except ValueError as error:
            raise _error(f"{headline.label}: {error}") from None
        notes += _undefined(caught, keys, headline.label)
        for level in LEVELS:
            for statistic in CORRELATIONS:
                rows.append(TableRow(
                    "metric", metric.name, headline.key, headline.label, level, statistic, statistic.capitalize(),
                    len(kept), len(set(systems)),
                    {quality: float(result[f"{key}/{level}/{statistic}"]) for quality, key in keys.items()},
                    {quality: float(result[f"{key}/{level}/{statistic}_pvalue"]) for quality, key in keys.items()}))
    return rows, notes


def check_agreement_settings(data: DialogueData, by: str, alpha_level: str) -> None:
    if by not in ("position", "id"):
        raise _error(f"agreement is by 'position' or 'id', not {by!r}")
    if alpha_level not in ALPHA_LEVELS:
        raise _error(f"Krippendorff's alpha level must be one of {ALPHA_LEVELS}, not {alpha_level!r}")
    if by == "id":
        without = next((row for row in data.rows if row.annotators is None), None)
        if without is not None:
            raise _error(f"agreement by annotator id needs 'annotators' in every row; {without.where} has none")


def agreement_rows(data: DialogueData, agreement: Any, by: str = "position", alpha_level: str = "ordinal"
                   ) -> tuple[list[TableRow], list[str]]:
    """Each agreement coefficient per quality over every response: annotators are the rating positions (``by``
    "position", USR's Table 1) or the annotators' ids (``by`` "id", from the rows' ``annotators``). A coefficient
    the agreement module finds undefined (e.g. alpha when every rating is the same) is NaN, with a note why."""
    check_agreement_settings(data, by, alpha_level)
    values: dict[str, dict[str, float]] = {name: {} for name, _ in AGREEMENT}
    undefined = []
    for quality in data.qualities:
        items, annotators, labels = [], [], []
        for index, row in enumerate(data.rows):
            ratings = row.ratings[quality]
            items += [index] * len(ratings)
            annotators += list(row.annotators) if by == "id" else list(range(1, len(ratings) + 1))
            labels += list(ratings)
        ratings = {"items": items, "annotators": annotators, "labels": labels, "level_of_measurement": alpha_level}
        try:
            result = agreement.compute(**ratings, coefficients=[name for name, _ in AGREEMENT])
        except ValueError:  # one coefficient at a time, to tell which are undefined
            result = {}
            for name, label in AGREEMENT:
                try:
                    result[name] = agreement.compute(**ratings, coefficients=name)[name]
                except ValueError as error:
                    result[name] = math.nan
                    undefined.append(f"{label} of {quality!r} is undefined (n/a): {error}")
        for name, _ in AGREEMENT:
            values[name][quality] = float(result[name])
    by_what = "rating position" if by == "position" else "annotator id"
    return [TableRow("agreement", "agreement", name, AGREEMENT_LABEL, "agreement", name,
                     label + (f" ({alpha_level})" if name == "krippendorff_alpha" else "") + f", by {by_what}",
                     len(data.rows), len(data.systems), values[name]) for name, label in AGREEMENT], undefined


def _notes(data: DialogueData, metrics: Sequence[DialogueMetric], reference_system: str | None, by: str,
           alpha_level: str) -> list[str]:
    notes = [
        "Human score of a response: the mean of its annotators' ratings of each quality.",
        "Turn level: Pearson and Spearman correlation (scipy's, by metrics/meta_evaluation) of every scored "
        "response's metric score with its human score; p-values two-sided, treating responses as independent.",
        "System level: each system's mean metric score over its scored responses against its mean human score, "
        "correlated across systems (a corpus metric such as BLEU enters as the mean of its per-response scores).",
    ]
    based = [metric.name for metric in metrics if metric.reference_based]
    free = [metric.name for metric in metrics if not metric.reference_based]
    scored = {len(metric.indices) for metric in metrics if metric.reference_based}
    if based:
        rule = (f"Reference-based metrics ({', '.join(based)}) score the responses with a reference "
                f"({', '.join(str(count) for count in sorted(scored))} of {len(data.rows)})")
        if reference_system is not None:
            rule += (f"; each context's response by {reference_system!r} is the reference of the other responses to "
                     "that context, and the reference system's own responses have none, so these metrics leave them "
                     "out")
        notes.append(rule + ".")
    if free:
        notes.append(f"Reference-free metrics ({', '.join(free)}) score every response ({len(data.rows)}).")
    if any(not headline.higher_is_better for metric in metrics for headline in metric.headlines):
        notes.append("Lower-is-better metrics are negated, so a positive correlation always means agreement.")
    notes.append(
        f"Agreement: per quality over all {len(data.rows)} responses (metrics/agreement), the annotators being "
        + ("the rating positions (the i-th rating of every response), as USR's Table 1" if by == "position" else
           "the annotators' ids") + "; mean pairwise and leave-one-out correlations, and Krippendorff's alpha at the "
        f"{alpha_level} level.")
    return notes


def dialogue_report(rows: Sequence[DialogueRow], metrics: Sequence[str], *,
                    options: Mapping[str, Mapping[str, Any]] | None = None, reference_system: str | None = None,
                    agreement_by: str = "position", alpha_level: str = "ordinal") -> DialogueReport:
    """The table of ``rows`` (already given their references, e.g. by ``with_reference_system``; pass its system
    as ``reference_system`` to have the rule stated) for ``metrics`` (names of metrics/ folders) with ``options``
    (metric -> keyword arguments)."""
    import evaluate

    from comparison.report import METRICS_DIR

    data = DialogueData(list(rows))
    check_agreement_settings(data, agreement_by, alpha_level)
    prepared = prepare(data, metrics, options)
    meta = evaluate.load(str(METRICS_DIR / "meta_evaluation"))
    table, undefined = [], []
    for metric in prepared:
        correlations, notes = metric_rows(metric, data, meta)
        table += correlations
        undefined += notes
    agreement, notes = agreement_rows(data, evaluate.load(str(METRICS_DIR / "agreement")), agreement_by,
                                      alpha_level)
    return DialogueReport(data.qualities, data.systems, len(data.rows), table + agreement,
                          _notes(data, prepared, reference_system, agreement_by, alpha_level) + undefined + notes,
                          {metric.name: metric.given for metric in prepared},
                          {metric.name: metric.signature for metric in prepared}, reference_system)
