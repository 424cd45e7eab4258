"""sacreBLEU's reproducibility signatures, shared by the sacreBLEU-family metrics (BLEU, chrF, TER).

A signature lists, in sacreBLEU 2.x's order: the number of references, the
resampling fields (``bs``, ``ar``, ``seed``) when a confidence interval or a
paired test was computed, the metric's own fields, and the sacreBLEU version
whose numbers the metric reproduces. Booleans print as ``yes``/``no``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# The reference every sacreBLEU-family module cites (Post 2018), after its own metric's.
# The sacreBLEU release whose numbers the sacreBLEU-family metrics reproduce (named in signatures).
SACREBLEU_VERSION = "2.6.0"

RESAMPLING_FIELDS = ("bs", "ar", "seed")


def sacrebleu_signature(
    *, nrefs: int | str, fields: Sequence[tuple[str, Any]], resampling: Mapping[str, Any] | None = None
) -> str:
    """``nrefs:..|[bs:..|ar:..|seed:..|]<fields>|version:2.6.0`` as sacreBLEU formats it."""
    resampling = resampling or {}
    pairs: list[tuple[str, Any]] = [("nrefs", nrefs)]
    pairs += [(key, resampling[key]) for key in RESAMPLING_FIELDS if resampling.get(key) is not None]
    pairs += list(fields)
    pairs.append(("version", SACREBLEU_VERSION))
    return "|".join(f"{key}:{_format(value)}" for key, value in pairs)


def _format(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def nrefs_label(min_refs: int, max_refs: int) -> int | str:
    """The ``nrefs`` field: the number of references, or 'var' when examples have different numbers."""
    return min_refs if min_refs == max_refs else "var"
