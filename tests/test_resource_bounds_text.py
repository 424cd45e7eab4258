"""Issue 32, requirement 1, for the text metrics (bleu, sacrebleu, chrf, ter, meteor, rouge, rouge155, sari, squad,
squad_v2, exact_match, readability, coval): one text's size (``max_text_chars``), TER's shift search
(``max_pair_cells``) and resampling (``max_resample_work``) are refused from the inputs' sizes, before any work,
with a ``ValueError`` naming the input, its size and the option; at or below a bound the result is unchanged.

Expected values come from sacreBLEU 2.6 (TER) or from the unbounded call (a bound never changes a result).
"""

from __future__ import annotations

import random
import re
import string
from typing import Any

import pytest
import sacrebleu

from conftest import load_metric
from metrics._core import core_ter
from metrics._core.core_ter import TerOptions, ter_rows
from metrics._core.core_ter_tokenize import TercomTokenizer


def words(rng: random.Random, count: int) -> str:
    return " ".join("".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(2, 8)))
                    for _ in range(count))


# -- TER's shift search: max_pair_cells ----------------------------------------------------------------------------

def test_ter_refuses_a_long_pair_before_scoring_any(monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*args: Any) -> None:
        raise AssertionError("an example was scored before the batch was checked")

    monkeypatch.setattr(core_ter, "translation_edit_rate", never)
    core_ter.clear_caches()
    predictions = ["a b", "a " * 300]
    references = [["a b"], ["x y", "b " * 200]]
    with pytest.raises(ValueError) as refused:
        ter_rows(predictions, references, TerOptions(max_pair_cells=10_000), start=7)
    message = str(refused.value)
    assert message.startswith("ter: a prediction of 300 tokens against a reference of 200 tokens")
    assert "predictions[8] against references[8][1]" in message
    assert "60,000, more than max_pair_cells=10,000;" in message
    assert "split the texts into segments" in message and "raise max_pair_cells" in message
    assert "the default" not in message  # the user chose the bound


def test_ter_default_bound_is_named_as_the_default() -> None:
    with pytest.raises(ValueError, match=r"6,000,000, more than max_pair_cells=4,194,304, the default"):
        ter_rows(["a " * 3000], [["b " * 2000]], TerOptions())


@pytest.mark.parametrize("seed", range(4))
def test_ter_at_the_bound_equals_sacrebleu(seed: int) -> None:
    """A pair of exactly max_pair_cells tokens is scored, as sacreBLEU scores it; one more token is refused."""
    rng = random.Random(seed)
    prediction, reference = words(rng, 40), words(rng, 30)
    expected = sacrebleu.metrics.TER().sentence_score(prediction, [reference])
    (row,) = ter_rows([prediction], [[reference]], TerOptions(max_pair_cells=40 * 30))
    assert row[0] / row[1] * 100 == pytest.approx(expected.score, abs=1e-9)
    assert ter_rows([prediction], [[reference]], TerOptions()) == [row]
    with pytest.raises(ValueError, match="max_pair_cells=1,199"):
        ter_rows([prediction], [[reference]], TerOptions(max_pair_cells=40 * 30 - 1))


@pytest.mark.parametrize("flags", [{}, {"normalized": True}, {"normalized": True, "support_zh_ja_chars": True},
                                   {"ignore_punct": True}])
def test_ter_character_shortcut_never_undercounts_tokens(flags: dict[str, bool]) -> None:
    """The check skips tokenizing texts whose characters already show the pair within the bound: every text has
    at most 2 x characters + 1 tokens (here the worst cases of punctuation, CJK and entities)."""
    tokenizer = TercomTokenizer(normalized=flags.get("normalized", False), no_punct=flags.get("ignore_punct", False),
                                asian_support=flags.get("support_zh_ja_chars", False), case_sensitive=False)
    rng = random.Random(5)
    alphabet = string.punctuation + "ab1 \u4e00\u3042\u30a2\u3001\uff0c&quot;"
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert len(tokenizer.words(text)) <= core_ter._most_tokens(text)
        assert len(core_ter.reference_words(text, tokenizer)) <= core_ter._most_tokens(text)


def test_ter_metric_takes_the_option() -> None:
    ter = load_metric("ter")
    predictions, references = ["a b c d", "e f"], [["a b c e"], ["e f g"]]
    plain = ter.compute(predictions=predictions, references=references)
    assert ter.compute(predictions=predictions, references=references, max_pair_cells=16) == plain
    with pytest.raises(ValueError, match=r"ter: .*predictions\[0\] against references\[0\]\[0\].* 16, more than "
                                         r"max_pair_cells=15"):
        ter.compute(predictions=predictions, references=references, max_pair_cells=15)


# -- one text's size: max_text_chars, every text module --------------------------------------------------------------

def _inputs(module: str, prediction: str, reference: str) -> dict[str, Any]:
    if module == "sari":
        return {"sources": [reference], "predictions": [prediction], "references": [[reference]]}
    if module in ("squad", "squad_v2"):
        entry: dict[str, Any] = {"id": "q", "prediction_text": prediction}
        if module == "squad_v2":
            entry["no_answer_probability"] = 0.0
        return {"predictions": [entry], "references": [{"id": "q", "answers": {"text": [reference],
                                                                               "answer_start": [0]}}]}
    if module == "exact_match":
        return {"predictions": [prediction], "references": [reference]}
    if module == "readability":
        return {"predictions": [prediction]}
    return {"predictions": [prediction], "references": [[reference]]}


TEXT_MODULES = ["bleu", "sacrebleu", "chrf", "ter", "meteor", "rouge", "rouge155", "sari", "squad", "squad_v2",
                "exact_match", "readability"]
_OPTIONS: dict[str, dict[str, Any]] = {"rouge155": {"n_bootstrap": 0}, "rouge": {"rouge_types": ["rouge1", "rougeL"]}}


@pytest.mark.parametrize("module", TEXT_MODULES)
def test_one_text_above_max_text_chars_is_refused(module: str) -> None:
    metric = load_metric(module)
    prediction, reference = "the cat sat on the mat. " * 4, "the cat is on the mat. " * 3
    inputs = _inputs(module, prediction.strip(), reference.strip())
    options = _OPTIONS.get(module, {})
    longest = len(prediction.strip())
    plain = metric.compute(**inputs, **options)
    assert metric.compute(**inputs, **options, max_text_chars=longest) == plain
    with pytest.raises(ValueError) as refused:
        metric.compute(**inputs, **options, max_text_chars=longest - 1)
    message = str(refused.value)
    assert message.startswith(f"{module}: the characters of predictions[0]"), message
    assert f": {longest}, more than max_text_chars={longest - 1};" in message
    assert "split it into segments" in message


# -- resampling: max_resample_work -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("module", "options"), [
    ("sacrebleu", {"confidence": True, "n_bootstrap": 10}),
    ("chrf", {"confidence": True, "n_bootstrap": 10}),
    ("ter", {"confidence": True, "n_bootstrap": 10}),
    ("meteor", {"confidence": True, "n_bootstrap": 10}),
    ("sacrebleu", {"baseline_predictions": ["a b c", "d e"], "paired_test": "ar", "n_samples": 10}),
    ("chrf", {"baseline_predictions": ["a b c", "d e"], "paired_test": "bs", "n_samples": 10}),
])
def test_resampling_above_max_resample_work_is_refused(module: str, options: dict[str, Any]) -> None:
    metric = load_metric(module)
    inputs = {"predictions": ["a b c", "d e f"], "references": [["a b c"], ["d e"]]}
    plain = metric.compute(**inputs, **options)
    assert metric.compute(**inputs, **options, max_resample_work=20) == plain
    with pytest.raises(ValueError, match=re.escape("2 examples 10 times; resamples x examples: 20, more than "
                                                   "max_resample_work=19;")):
        metric.compute(**inputs, **options, max_resample_work=19)


def test_rouge155_bootstrap_above_max_resample_work_is_refused() -> None:
    rouge155 = load_metric("rouge155")
    inputs = {"predictions": ["a b c", "d e f", "g h"], "references": ["a b c", "d e", "g"]}
    plain = rouge155.compute(**inputs, n_bootstrap=10)
    assert rouge155.compute(**inputs, n_bootstrap=10, max_resample_work=30) == plain
    assert rouge155.compute(**inputs, n_bootstrap=0, max_resample_work=1)  # no bootstrap, nothing to bound
    with pytest.raises(ValueError, match=re.escape("rouge155: the bootstrap of the printed averages rescores the "
                                                   "corpus of 3 examples 10 times; resamples x examples: 30, more "
                                                   "than max_resample_work=29;")):
        rouge155.compute(**inputs, n_bootstrap=10, max_resample_work=29)


def test_mecab_gives_a_clear_error_on_a_text_too_long_for_it() -> None:
    """MeCab's parse returns nothing for a text too long for its lattice (10^6 random kanji; sacreBLEU then fails
    with an AttributeError): a ValueError says so and names the remedy."""
    from metrics._core.core_mt_tokenizers import get_tokenizer, mecab_available

    if not mecab_available("ja-mecab"):
        pytest.skip("MeCab and ipadic are not installed")
    rng = random.Random(0)
    text = "".join(chr(0x4E00 + rng.randrange(2000)) for _ in range(1_000_000))
    with pytest.raises(ValueError, match=r"'ja-mecab' tokenizer could not segment a text of 1,000,000 characters "
                                         r"\(MeCab: too long sentence\.\); split it into segments"):
        get_tokenizer("ja-mecab")(text)
