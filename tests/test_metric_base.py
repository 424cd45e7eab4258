"""The statistics-metric base (metrics/_core/core_metric.py) as every module uses it: signatures generated from
the options, options checked before any input is read or written, evaluate's `combine`/`add` paths, compute in
memory when given its inputs, state shared by the vendored copies of the core, and the evaluate release the
streamed compute was verified against."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import inspect
import uuid
import warnings

import datasets
import evaluate
import numpy as np
import pytest
from evaluate.module import EvaluationModule

from bad_input_cases import good_inputs
from conftest import METRICS_DIR, load_metric, metric_names, model_config

METRICS = metric_names()
MODEL_METRICS = ("bertscore", "semantic_similarity")
PAIRS = (["the cat sat on the mat", "a storm cut the power"], [["the cat sat on a mat"], ["a storm cut power"]])


def fresh(name: str, **kwargs):
    """A module of its own (own experiment id), so tests that add examples do not share a cache file."""
    return evaluate.load(str(METRICS_DIR / name), model_config(name), experiment_id=uuid.uuid4().hex, **kwargs)


def core_module(module, core: str):
    """The copy of core module `core` that a loaded metric uses (each folder has its own copy)."""
    package = type(module).__module__.rpartition(".")[0]
    return importlib.import_module(f"{package}.{core}")


def inputs_of(module) -> dict:
    """Two valid examples of the module's input kind."""
    return good_inputs(module)


def one_at_a_time(inputs: dict) -> list[dict]:
    """The examples as `evaluate.combine(...).add` takes them (prediction=, reference=, other columns by name)."""
    singular = {"predictions": "prediction", "references": "reference"}
    size = len(next(iter(inputs.values())))
    return [{singular.get(column, column): values[index] for column, values in inputs.items()}
            for index in range(size)]


# -- one signature, generated from the options ------------------------------------------------------------------


@pytest.mark.parametrize("name", METRICS)
def test_signatures_are_generated_from_the_options(name: str) -> None:
    module = load_metric(name)
    fields = {field.name: field.default for field in dataclasses.fields(module.options_class)}
    for method in ("compute", "_compute", "example_stats", "reduce_stats", "compute_from_stats", "configure"):
        parameters = inspect.signature(getattr(module, method)).parameters
        options = {key: p.default for key, p in parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY
                   and key not in module.inputs.columns}
        assert options == fields, method
        assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()), method


DECLARED = ("bleu", "coval", "exact_match", "meteor", "readability", "rouge", "rouge155", "sacrebleu", "sari", "squad")


def test_the_metrics_with_core_statistics_declare_them() -> None:
    """Every metric whose statistics are its core family's functions declares them (and overrides none of the three
    methods the declaration supplies)."""
    declared = [name for name in METRICS if "statistics" in type(load_metric(name)).__dict__]
    assert declared == sorted(DECLARED)
    for name in declared:
        assert not {"schema", "example_rows", "score"} & set(type(load_metric(name)).__dict__), name


@pytest.mark.parametrize("name", DECLARED)
def test_declared_statistics_are_what_the_base_computes_with(name: str) -> None:
    """The options class is the statistics' (unless the metric names its own), and `example_stats` are the core
    function's rows on the input kind's columns and the options' `stats_options`, under their signature."""
    module = load_metric(name)
    statistics = type(module).statistics
    assert type(module).options_class is statistics.options
    inputs = inputs_of(module)
    columns = module.inputs.check(module.name, inputs)
    stats_options = module.resolve_options({}).stats_options
    rows = statistics.rows(*(columns[column] for column in module.inputs.columns), stats_options)
    expected = statistics.schema(module.name, stats_options).columns(rows, stats_options.stats_signature())
    assert module.example_stats(**inputs) == expected


@pytest.mark.parametrize("name", METRICS)
def test_unknown_options_fail_at_every_entry_point(name: str) -> None:
    module = load_metric(name)
    inputs = inputs_of(module)
    calls = [
        lambda: module.configure(no_such_option=1),
        lambda: module.compute(**inputs, no_such_option=1),
        lambda: module.example_stats(*inputs.values(), no_such_option=1),
        lambda: module.compute_from_stats([], no_such_option=1),
    ]
    for call in calls:
        with pytest.raises(TypeError, match=rf"^{name}.*no_such_option"):
            call()


# -- defect: evaluate.combine(...).add passes predictions=/references= -----------------------------------------


@pytest.mark.parametrize("name", METRICS)
def test_combine_add_one_example_at_a_time(name: str) -> None:
    combined = evaluate.combine([fresh(name)])
    inputs = inputs_of(load_metric(name))
    for example in one_at_a_time(inputs):
        combined.add(**example)
    expected = load_metric(name).compute(**inputs)
    result = combined.compute()
    assert result.keys() == expected.keys()
    for key, value in expected.items():
        if isinstance(value, str):
            assert result[key] == value, key
        elif isinstance(value, list) and value and isinstance(value[0], list):  # a matrix (e.g. a curve's points)
            np.testing.assert_allclose(np.asarray(result[key], dtype=float), np.asarray(value, dtype=float), atol=1e-6)
        else:
            assert result[key] == pytest.approx(value, abs=1e-6), key


# -- defect: options checked before evaluate's cache is touched ----------------------------------------------------


def _flag_option(module) -> str | None:
    return next((field.name for field in dataclasses.fields(module.options_class) if isinstance(field.default, bool)),
                None)


@pytest.mark.parametrize("name", METRICS)
def test_an_invalid_option_after_add_batch_loses_nothing(name: str) -> None:
    module = fresh(name)
    inputs = inputs_of(module)
    module.add_batch(**inputs)
    with pytest.raises(TypeError, match=rf"^{name}: .*no_such_option"):
        module.compute(no_such_option=1)
    flag = _flag_option(module)
    if flag is not None:
        with pytest.raises(TypeError, match=rf"^{name}: `{flag}` must be True or False"):
            module.compute(**{flag: "maybe"})
    assert module.compute() == load_metric(name).compute(**inputs)


def test_sacrebleu_invalid_tokenize_after_add_batch_loses_nothing() -> None:
    """The case reported: `compute(tokenize="13A")` after add_batch used to finalise the cache first."""
    module = fresh("sacrebleu")
    module.add_batch(predictions=PAIRS[0], references=PAIRS[1])
    with pytest.raises(ValueError, match="unknown `tokenize` '13A'"):
        module.compute(tokenize="13A")
    assert module.compute() == load_metric("sacrebleu").compute(predictions=PAIRS[0], references=PAIRS[1])


def test_configure_and_for_trainer_check_options_at_once() -> None:
    bleu = fresh("bleu")
    with pytest.raises(ValueError, match=r"^bleu: `max_order` must be at least 1, got -5"):
        bleu.configure(max_order=-5)
    result = bleu.compute(predictions=["a b c d e"], references=["a b c d e"])
    assert len(result["precisions"]) == 4  # max_order=-5 was not bound
    with pytest.raises(ValueError, match=r"^bleu: `max_order` must be at least 1"):
        bleu.for_trainer(tokenizer=None, options={"bleu": {"max_order": 0}})
    with pytest.raises(TypeError, match=r"^rouge: .*nope"):
        bleu.for_trainer(None, fresh("rouge"), options={"rouge": {"nope": 1}})


# -- defect: small input-shape problems ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", METRICS)
def test_zero_dimensional_array_is_a_clear_error(name: str) -> None:
    module = load_metric(name)
    column = "predictions" if "predictions" in module.inputs.columns else module.inputs.columns[0]
    inputs = {**inputs_of(module), column: np.array(0)}
    with pytest.raises(TypeError, match=rf"^{name}: `{column}` must be a list of .*, got a 0-d ndarray"):
        module.compute(**inputs)


@pytest.mark.parametrize("name", ("bleu", "sacrebleu", "rouge"))
def test_an_empty_add_batch_after_data_adds_nothing(name: str) -> None:
    module = fresh(name)
    module.add_batch(predictions=PAIRS[0], references=PAIRS[1])
    module.add_batch(predictions=[], references=[])
    assert module.compute() == load_metric(name).compute(predictions=PAIRS[0], references=PAIRS[1])


def test_warnings_point_at_the_callers_line() -> None:
    predictions = [f"sentence {index} ." for index in range(100)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_metric("sacrebleu").compute(predictions=predictions, references=predictions)
        module = fresh("sacrebleu")
        module.add_batch(predictions=predictions, references=predictions)
        module.compute()
    periods = [warning for warning in caught if "tokenized period" in str(warning.message)]
    assert len(periods) == 2 and {warning.filename for warning in periods} == {__file__}


# -- defect: compute given its inputs writes nothing to disk ---------------------------------------------------------


@pytest.mark.parametrize("name", METRICS)
def test_compute_with_inputs_does_not_touch_evaluates_cache(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_writer(*args, **kwargs):
        raise AssertionError("evaluate's Arrow cache was written")

    module = fresh(name)
    inputs = inputs_of(module)
    expected = load_metric(name).compute(**inputs)
    monkeypatch.setattr(datasets.arrow_writer.ArrowWriter, "__init__", no_writer)
    assert module.compute(**inputs) == expected
    assert module.writer is None and module.data is None


@pytest.mark.parametrize("name", ("bleu", "rouge"))
def test_compute_after_add_batch_still_uses_evaluates_cache(name: str) -> None:
    """Inputs given to compute after add_batch are appended to the added ones, as in evaluate."""
    module = fresh(name)
    module.add_batch(predictions=PAIRS[0][:1], references=PAIRS[1][:1])
    assert module.compute(predictions=PAIRS[0][1:], references=PAIRS[1][1:]) == load_metric(name).compute(
        predictions=PAIRS[0], references=PAIRS[1]
    )


# -- process-wide state shared by the vendored copies -----------------------------------------------------------------


def test_two_metrics_load_the_shared_model_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import transformers

    bertscore, similarity = fresh("bertscore"), fresh("semantic_similarity")
    core_module(bertscore, "core_models").clear_model_cache()
    loads = []
    original = transformers.AutoModel.from_pretrained

    def counting(*args, **kwargs):
        loads.append(args[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(transformers.AutoModel, "from_pretrained", counting)
    assert core_module(bertscore, "core_models") is not core_module(similarity, "core_models")
    bertscore.compute(predictions=PAIRS[0], references=PAIRS[1])
    similarity.compute(predictions=PAIRS[0], references=PAIRS[1])
    bertscore.compute(predictions=PAIRS[0], references=PAIRS[1])
    assert len(loads) == 1


def test_tokenizations_are_shared_by_bleu_and_sacrebleu() -> None:
    bleu, sacrebleu = fresh("bleu"), fresh("sacrebleu")
    process = core_module(bleu, "core_process")
    process.clear_caches()
    texts = [f"segment {index} of a shared corpus, tokenized once." for index in range(50)]
    bleu.compute(predictions=texts, references=texts)
    entries = process.cache_usage()["mt.tokens.13a"][0]
    assert entries == 50
    sacrebleu.compute(predictions=texts, references=texts)
    assert core_module(sacrebleu, "core_process").cache_usage()["mt.tokens.13a"][0] == entries


# -- the evaluate release the streamed compute replicates ------------------------------------------------------------

# sha256 of the source of the EvaluationModule methods that core_streaming.compute_from_cache replicates or relies
# on, in evaluate 0.4.6 (the release it was verified against). When this test fails, evaluate changed under the
# streamed compute: compare the new methods with metrics/_core/core_streaming.py, re-run
# tests/test_streamed_compute.py, then update VERIFIED_EVALUATE_VERSIONS there and the hash here.
_REPLICATED = ("compute", "add_batch", "add", "_finalize", "_init_writer", "_get_all_cache_files", "_create_cache_file")
_VERIFIED_SOURCE_SHA256 = {"0.4.6": "d1e4bc0634f470e45e74e8b1d3afa901d9f61934c05b29fca3b17bc34cc4a4c3"}


def evaluate_source_hash() -> str:
    source = "".join(inspect.getsource(getattr(EvaluationModule, name)) for name in _REPLICATED)
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def test_streamed_compute_is_used_only_with_the_evaluate_it_was_verified_against() -> None:
    streaming = core_module(load_metric("bleu"), "core_streaming")
    assert set(streaming.VERIFIED_EVALUATE_VERSIONS) == set(_VERIFIED_SOURCE_SHA256)
    if evaluate.__version__ in _VERIFIED_SOURCE_SHA256:
        assert evaluate_source_hash() == _VERIFIED_SOURCE_SHA256[evaluate.__version__], (
            "evaluate's compute changed under the streamed compute; see the comment above"
        )
        assert streaming.streaming_verified()
    else:
        assert not streaming.streaming_verified()


def test_other_evaluate_releases_fall_back_to_evaluates_compute(monkeypatch: pytest.MonkeyPatch) -> None:
    module = fresh("rouge")
    monkeypatch.setattr(core_module(module, "core_streaming"), "VERIFIED_EVALUATE_VERSIONS", ())
    module.add_batch(predictions=PAIRS[0], references=PAIRS[1])
    with pytest.warns(UserWarning, match="not a release the text metrics' streamed compute was verified against"):
        result = module.compute(rouge_types=["rouge1", "rougeL"])
    assert result == load_metric("rouge").compute(predictions=PAIRS[0], references=PAIRS[1],
                                                  rouge_types=["rouge1", "rougeL"])


_UNPICKLE_AND_COMPUTE = """
import json, pickle, sys
cases = pickle.loads(sys.stdin.buffer.read())
print(json.dumps([[type(module).__name__, module.config_name, module.compute(**inputs)] for module, inputs in cases]))
"""


def test_a_module_pickles_as_what_loads_it_again(tmp_path) -> None:
    """Unpickled in a process that never loaded it (its own evaluate module cache), a module is loaded again from its
    script with its configuration (a config name, a checkpoint as comet's config) and the options bound with
    `configure`: it computes what the original computes."""
    import json
    import os
    import pickle
    import subprocess
    import sys

    chrf = evaluate.load(str(METRICS_DIR / "chrf")).configure(word_order=2)
    f1 = evaluate.load(str(METRICS_DIR / "f1"), "multilabel")
    comet = evaluate.load(str(METRICS_DIR / "comet"), model_config("comet"))
    cases = [(chrf, {"predictions": ["a b c d"], "references": [["a b d c"]]}),
             (f1, {"predictions": [[0, 1], [1, 1]], "references": [[0, 1], [1, 0]], "average": "micro"}),
             (comet, good_inputs(comet))]
    environment = {**os.environ, "HF_MODULES_CACHE": str(tmp_path / "modules"), "PYTHONWARNINGS": "ignore"}
    done = subprocess.run([sys.executable, "-c", _UNPICKLE_AND_COMPUTE], input=pickle.dumps(cases), cwd=tmp_path,
                          capture_output=True, env=environment, timeout=600, check=False)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    unpickled = json.loads(done.stdout.decode().strip().splitlines()[-1])
    for (module, inputs), (class_name, config_name, result) in zip(cases, unpickled, strict=True):
        assert class_name == type(module).__name__ and config_name == module.config_name
        expected = json.loads(json.dumps(module.compute(**inputs)))
        if class_name == "Comet":  # a model: float32 sums in another process may differ in the last bits
            assert result["scores"] == pytest.approx(expected["scores"], abs=1e-6)
            assert {**result, "scores": None, "mean_score": None} == {**expected, "scores": None, "mean_score": None}
        else:
            assert result == expected
    assert unpickled[0][2]["word_order"] == 2
