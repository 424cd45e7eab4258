"""A metric's keyword options, declared once as a frozen dataclass: defaults, checks, and what they affect.

Each field of a :class:`MetricOptions` subclass is one keyword option of the
metric, declared with :func:`option`: its default (evaluate's), the check that
validates and normalises a given value, and whether the per-example statistics
depend on it (``stats=True``: such options are named in the statistics'
signature, so statistics made with different values never merge). From that
one declaration come the keyword signature of the metric's entry points, the
rejection of unknown options, the checks run before any work, and the
statistics signature.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, TypeVar

from .core_checks import check_bool, check_choice, check_int, check_number, check_text_list

Check = Callable[[str, str, Any], Any]
O = TypeVar("O", bound="MetricOptions")

_CHECK = "check"
_STATS = "stats"
_BOUND = "bound"


def option(default: Any, check: Check | None = None, *, stats: bool = False) -> Any:
    """A dataclass field for one keyword option (``check(metric, name, value)`` returns the value to use)."""
    return dataclasses.field(default=default, metadata={_CHECK: check, _STATS: stats})


def bound(default: int) -> Any:
    """A dataclass field for a resource bound (``core_resources``): a positive int, the most of some work one
    example (or the corpus) may need before the metric refuses it; the card's Resource Bounds states it."""
    return dataclasses.field(default=default, metadata={_CHECK: integer(minimum=1), _STATS: False, _BOUND: True})


def is_bound(field: dataclasses.Field) -> bool:
    """Whether an options field is a resource bound (made by :func:`bound`)."""
    return bool(field.metadata.get(_BOUND))


def boolean(metric: str, name: str, value: Any) -> bool:
    """True or False."""
    return check_bool(metric, name, value)


def integer(*, minimum: int | None = None, maximum: int | None = None) -> Check:
    """An int (not a bool) in ``[minimum, maximum]``."""

    def check(metric: str, name: str, value: Any) -> int:
        check_int(metric, name, value, minimum=minimum)
        if maximum is not None and value > maximum:
            raise ValueError(f"{metric}: `{name}` must be at most {maximum}, got {value}")
        return value

    return check


def number(*, minimum: float | None = None, maximum: float | None = None, exclusive: bool = False) -> Check:
    """A finite real number (not a bool) within the bounds (strictly within them when ``exclusive``)."""

    def check(metric: str, name: str, value: Any) -> float:
        check_number(metric, name, value)
        if not math.isfinite(value):
            raise ValueError(f"{metric}: `{name}` must be finite, got {value}")
        if minimum is not None and maximum is not None and exclusive and not minimum < value < maximum:
            raise ValueError(f"{metric}: `{name}` must be between {minimum} and {maximum}, got {value}")
        if minimum is not None and (value < minimum or (exclusive and value == minimum)):
            bound = "greater than" if exclusive else "at least"
            raise ValueError(f"{metric}: `{name}` must be {bound} {minimum}, got {value}")
        if maximum is not None and (value > maximum or (exclusive and value == maximum)):
            bound = "less than" if exclusive else "at most"
            raise ValueError(f"{metric}: `{name}` must be {bound} {maximum}, got {value}")
        return value

    return check


def choice(*values: Any) -> Check:
    """One of ``values``."""

    def check(metric: str, name: str, value: Any) -> Any:
        return check_choice(metric, name, value, values)

    return check


def optional(inner: Check) -> Check:
    """None, or a value that passes ``inner``."""

    def check(metric: str, name: str, value: Any) -> Any:
        return None if value is None else inner(metric, name, value)

    return check


def string(what: str = "a string") -> Check:
    """A string (``what`` describes it in errors, e.g. 'a language code string')."""

    def check(metric: str, name: str, value: Any) -> str:
        if not isinstance(value, str):
            raise TypeError(f"{metric}: `{name}` must be {what}, got {type(value).__name__} ({value!r:.60})")
        return value

    return check


def function(metric: str, name: str, value: Any) -> Callable[..., Any]:
    """A callable."""
    if not callable(value):
        raise TypeError(f"{metric}: `{name}` must be a callable, got {type(value).__name__} ({value!r:.60})")
    return value


def texts(metric: str, name: str, value: Any) -> list[str]:
    """A non-empty list of strings."""
    return check_text_list(metric, name, value)


def anything(metric: str, name: str, value: Any) -> Any:
    """Any value (checked later, where its meaning is known)."""
    return value


class MetricOptions:
    """Base of a metric's frozen options dataclass (subclasses are ``@dataclass(frozen=True)``)."""

    metric_name: ClassVar[str] = "metric"

    @classmethod
    def option_fields(cls) -> tuple[dataclasses.Field, ...]:
        return dataclasses.fields(cls)  # type: ignore[arg-type]

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(field.name for field in cls.option_fields())

    @classmethod
    def resolve(cls: type[O], metric: str, given: Mapping[str, Any]) -> O:
        """Options from keyword arguments: unknown names and invalid values are errors raised here."""
        names = cls.names()
        unknown = [name for name in given if name not in names]
        if unknown:
            raise TypeError(f"{metric}: unknown options {unknown}; valid options are {list(names)}")
        values = {}
        for field in cls.option_fields():
            value = given.get(field.name, field.default)
            check = field.metadata.get(_CHECK)
            values[field.name] = check(metric, field.name, value) if check is not None else value
        resolved = cls(**values)
        resolved.validate(metric)
        return resolved

    def validate(self, metric: str) -> None:
        """Checks that involve several options (raise ``ValueError``); none by default."""

    @property
    def stats_options(self) -> Any:
        """The options the per-example statistics are computed under: these, or the core's options they hold."""
        return self

    def stats_fields(self) -> list[tuple[str, Any]]:
        """(name, value) of the options the per-example statistics depend on."""
        return [(field.name, getattr(self, field.name)) for field in self.option_fields() if field.metadata.get(_STATS)]

    def stats_signature(self) -> str:
        """Names the options the per-example statistics depend on; statistics with other signatures never merge."""
        return "|".join([self.metric_name, *(f"{name}:{value}" for name, value in self.stats_fields())])

    def replace(self: O, **changes: Any) -> O:
        """A copy with some options changed (not checked again)."""
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]


def keyword_parameters(options_class: type[MetricOptions]) -> list[inspect.Parameter]:
    """The options as keyword-only parameters with their defaults (for generated signatures): the options
    the class declares itself first, then those it inherits (e.g. resampling options)."""
    fields = options_class.option_fields()
    own = set(options_class.__dict__.get("__annotations__", {}))
    ordered = [field for field in fields if field.name in own] + [field for field in fields if field.name not in own]
    return [inspect.Parameter(field.name, inspect.Parameter.KEYWORD_ONLY, default=field.default) for field in ordered]


def input_parameters(columns: Sequence[str], kind: Any = inspect.Parameter.POSITIONAL_OR_KEYWORD,
                     default: Any = inspect.Parameter.empty) -> list[inspect.Parameter]:
    """The input columns as parameters."""
    return [inspect.Parameter(name, kind, default=default) for name in columns]
