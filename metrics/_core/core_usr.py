"""USR (Mehri & Eskenazi, ACL 2020): the inputs of its three sub-metrics and the official regression over them.

Everything here follows the official code, github.com/Shikib/usr at b1e50bb05f11d193cf9fde96e94d189ad84fc57d
(``examples/``):

* The texts. ``dstc9_eval.py`` (the "full USR metric" script) lowercases the response and writes it as
  ``_go <response> _eos`` (``tokenize``, lines 13-24); the context is the dialogue history's last turn followed by
  ``_eos`` (``prep_*``: ``e.strip().split("_eos ")[-1]`` of a history whose turns end in ``_eos``), and the fact
  ends in ``_eos``. MLM reads ``<turn> _eos _go <response> _eos`` with runs of whitespace made single spaces
  (``prep_mlm``, lines 27-31); DR with x = c reads the pair (``<turn> _eos <fact> _eos``, ``_go <response> _eos``)
  (``prep_both``, lines 33-45); DR with x = f reads (``<fact> _eos``, ``_go <response> _eos``) (``prep_uk``, lines
  47-61). The released inputs of the paper's Topical-Chat responses (``examples/undr/test.lm``,
  ``examples/both/dev.tsv``, ``examples/fct/dev.tsv``) have exactly these forms. The DR pairs travel through a TSV
  file written by Python's csv writer and read back without quote handling (transformers 2.x's
  ``DataProcessor._read_tsv``), so a text holding a double quote reaches the model wrapped in quotes with its own
  quotes doubled: 57 of the 300 released DR x = c inputs and 47 of the DR x = f inputs do (:func:`tsv_field`).
* The regression. ``regression.py``: each sub-metric is standardised with the means and standard deviations
  "calculated from USR paper" (lines 13-18), the five inputs being MLM twice (Understandable, Natural), DR with
  x = c twice (Maintains Context, Interesting) and DR with x = f (Uses Knowledge) (``scores``, lines 27-28), and
  the pickled scikit-learn 0.21.3 ``LinearRegression`` of ``regr.pkl`` predicts USR (line 21): its ``coef_`` and
  ``intercept_``, read from the pickle's float64 bytes, are the constants below.

The contexts are dialogue histories, turns separated by line breaks (as in the USR annotation release); USR
conditions on the last non-empty turn only, as the official preprocessing does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .core_checks import check_same_length, check_text_list
from .core_inputs import Columns, InputKind

# regression.py lines 13-18: (mean, standard deviation) of MLM, DR (x = c) and DR (x = f) scores
MLM_NORMALISATION = (-1.012293440649907, 0.39053753419230813)
DR_CONTEXT_NORMALISATION = (0.8604811806918587, 0.30259338627812254)
DR_FACT_NORMALISATION = (0.8472124995904354, 0.27987823011851076)
# regr.pkl (LinearRegression, scikit-learn 0.21.3): coef_ over (MLM, MLM, DR-c, DR-c, DR-f), and intercept_
REGRESSION_COEFFICIENTS = (0.6601100065238369, 0.4035348605308456, 0.5132785702080678, 0.9605336086924106,
                           0.35642553823787765)
REGRESSION_INTERCEPT = 3.597475447630256

# run_lm_finetuning.py line 347: the MLM sub-metric reads the last 100 token ids (special tokens included);
# train_understandable.py line 448: DR pairs are truncated to 128 ids (--max_seq_length default)
MLM_WINDOW = 100
DR_MAX_LENGTH = 128

SUBMETRICS = ("mlm", "dr_context", "dr_fact")
OUTPUTS = ("usr", *SUBMETRICS)


def usr_regression(mlm: float, dr_context: float, dr_fact: float) -> float:
    """USR of one response from its three sub-metric scores (regression.py ``predict_scores``)."""
    z_mlm = (mlm - MLM_NORMALISATION[0]) / MLM_NORMALISATION[1]
    z_context = (dr_context - DR_CONTEXT_NORMALISATION[0]) / DR_CONTEXT_NORMALISATION[1]
    z_fact = (dr_fact - DR_FACT_NORMALISATION[0]) / DR_FACT_NORMALISATION[1]
    c = REGRESSION_COEFFICIENTS
    return c[0] * z_mlm + c[1] * z_mlm + c[2] * z_context + c[3] * z_context + c[4] * z_fact + REGRESSION_INTERCEPT


def _spaced(text: str) -> str:
    return " ".join(text.split())


def last_turn(context: str) -> str:
    """The last non-empty line of a dialogue history (the history itself when it has one line)."""
    for line in reversed(context.splitlines()):
        if line.strip():
            return line
    return ""


@dataclass(frozen=True)
class UsrTexts:
    """What the three sub-metric models read for one example."""

    mlm: str
    dr_context: tuple[str, str]
    dr_fact: tuple[str, str]


def tsv_field(text: str) -> str:
    """``text`` as the official DR files deliver it to the model: written by Python's csv writer (which wraps a
    field holding a double quote, tab or line break in double quotes and doubles its quotes) and read back by
    transformers 2.x's ``DataProcessor._read_tsv`` with ``quotechar=None`` (which keeps those quotes)."""
    if any(character in text for character in '"\t\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def usr_texts(context: str, fact: str, response: str, *, lowercase: bool = True,
              tsv_quoting: bool = True) -> UsrTexts:
    """The official inputs of one (context, fact, response) example (see the module docstring); with
    ``tsv_quoting`` the DR texts as the official TSV files deliver them (:func:`tsv_field`)."""
    turn, fact, response = (_spaced(text) for text in (last_turn(context), fact, response))
    if lowercase:
        turn, fact, response = turn.lower(), fact.lower(), response.lower()
    turn_eos = f"{turn} _eos"
    said = f"_go {response} _eos"
    dr_context, dr_fact = (f"{turn_eos} {fact} _eos", said), (f"{fact} _eos", said)
    if tsv_quoting:
        dr_context = (tsv_field(dr_context[0]), tsv_field(said))
        dr_fact = (tsv_field(dr_fact[0]), tsv_field(said))
    return UsrTexts(mlm=_spaced(f"{turn_eos} {said}"), dr_context=dr_context, dr_fact=dr_fact)


def mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


# -- the input kind ------------------------------------------------------------------------------------------------


def _dialogue_features(config_name: str) -> Any:
    import datasets

    string = datasets.Value("string", id="sequence")
    return datasets.Features({"contexts": string, "facts": string, "predictions": string})


def _check_dialogue(metric: str, given: Mapping[str, Any], allow_empty: bool) -> Columns:
    predictions = check_text_list(metric, "predictions", given.get("predictions"), allow_empty=allow_empty)
    contexts = check_text_list(metric, "contexts", given.get("contexts"), allow_empty=True)
    facts = check_text_list(metric, "facts", given.get("facts"), allow_empty=True)
    check_same_length(metric, ("predictions", len(predictions)), ("contexts", len(contexts)), ("facts", len(facts)))
    return {"contexts": contexts, "facts": facts, "predictions": predictions}


# Dialogue responses (`predictions`) with the history each answers (`contexts`: turns separated by line breaks)
# and the knowledge it is grounded on (`facts`: a fact, or a persona; an empty string where there is none).
DIALOGUE_RESPONSES = InputKind("contexts, facts and responses", ("contexts", "facts", "predictions"),
                               _dialogue_features, _check_dialogue)
