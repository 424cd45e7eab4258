"""Scale-out on the engines users already run: Ray Data and Spark local mode, each with two worker processes.

The statistics of every example are computed in the engine's workers with ``example_stats`` (Ray Data's
``map_batches``, Spark's ``mapInPandas``/``mapInArrow``), and what the engine hands back (Ray's ``take_all()``
dicts, its pandas/Arrow blocks, Spark ``Row`` objects, ``toPandas()``, ``toArrow()``, per-partition
``reduce_stats`` records) goes straight into ``compute_from_stats``: the result equals one-process ``compute``
bit for bit (``==``) for a corpus metric (sacrebleu), keyed statistics (f1, macro-averaged: per-class counts),
a resampling option (chrF with ``confidence=True``, which needs every example's row in corpus order: Ray keeps
it with ``DataContext.execution_options.preserve_order = True``, Spark and Ray both by sorting on an index
column) and a model metric (bertscore with its packaged model, loaded once per worker process, not per batch).

BERTScore's per-example values depend in the last float32 bits on which texts share a model batch (padding
changes the order of the sums inside the model and the matching), so its bit-for-bit check runs with
``batch_size=1`` (no padding: each text's value is its own), and at the default batch size the values agree to
within float32 rounding (a slow test).

The README's recipes ("Where to use it"), as a user writes them, run here too.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from conftest import METRICS_DIR, load_metric
from readme_blocks import blocks_run_by

ray = pytest.importorskip("ray")
pyspark = pytest.importorskip("pyspark")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pyarrow as pa  # noqa: E402

PAIRS = 1000  # WMT17 pairs for the corpus and keyed metrics
RESAMPLED_PAIRS = 600  # chrF with confidence intervals (1,000 resamples of the rows)
MODEL_PAIRS = 48  # bertscore at batch_size=1 (one text per model call)
ACCEPTED = "statistics are columns"  # how the message listing the accepted forms begins

# The engines' own warnings: pyspark 4.3 says at each pandas conversion that it does not yet fully support pandas 3
# (what this project has); both call pandas APIs that pandas 3.1 deprecates; Ray Data's context reads its own
# deprecated settings when copied.
pytestmark = pytest.mark.filterwarnings(
    "ignore:PySpark does not yet fully support pandas:FutureWarning",
    "ignore::DeprecationWarning:ray.*",
    "ignore::DeprecationWarning:pyspark.*",
)


# -- data -------------------------------------------------------------------------------------------------------


def length_class(text: str) -> int:
    """A class label of a text: its length in words, in five buckets (labels drawn from real text)."""
    return min(len(text.split()) // 8, 4)


@pytest.fixture(scope="module")
def corpus(wmt17) -> pd.DataFrame:
    """WMT17 pairs (online-B's outputs and the reference) with their corpus index and length-class labels."""
    references, systems = wmt17
    hypotheses = systems["online-B.0"][:PAIRS]
    return pd.DataFrame({
        "index": np.arange(PAIRS, dtype=np.int64),
        "prediction": hypotheses,
        "reference": references[:PAIRS],
        "predicted_class": [length_class(text) for text in hypotheses],
        "gold_class": [length_class(text) for text in references[:PAIRS]],
    })


# What each case scores: (metric, options, input columns of the corpus, number of pairs)
CASES = {
    "sacrebleu": ("sacrebleu", {}, ("prediction", "reference"), PAIRS),
    "f1 macro": ("f1", {"average": "macro"}, ("predicted_class", "gold_class"), PAIRS),
    "chrf confidence": ("chrf", {"confidence": True}, ("prediction", "reference"), RESAMPLED_PAIRS),
}


def case_inputs(corpus: pd.DataFrame, case: str) -> tuple[str, dict[str, Any], pd.DataFrame]:
    """(metric name, options, a frame of index/predictions/references) of a case."""
    name, options, (predictions, references), size = CASES[case]
    frame = corpus.loc[: size - 1, ["index", predictions, references]]
    return name, options, frame.rename(columns={predictions: "predictions", references: "references"})


def one_process(name: str, options: dict[str, Any], frame: pd.DataFrame) -> dict[str, Any]:
    """The corpus result of one-process ``compute``."""
    return load_metric(name).compute(predictions=frame["predictions"].tolist(),
                                     references=frame["references"].tolist(), **options)


# -- what runs in the workers (pickled by value: see the engine fixtures) -----------------------------------------


def model_loads() -> int:
    """How many times this process has loaded a transformer model from disk: ``AutoModel.from_pretrained`` is
    wrapped with a counter the first time this runs in a process (before the metric loads its model)."""
    import transformers

    auto = transformers.AutoModel
    counter = auto.__dict__.get("_scale_out_counter")
    if counter is None:
        original = auto.from_pretrained

        def counter(*args: Any, **kwargs: Any) -> Any:
            counter.calls += 1
            return original(*args, **kwargs)

        counter.calls = 0
        auto.from_pretrained = counter
        auto._scale_out_counter = counter
    return counter.calls


def batch_stats(metric: Any, columns: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """``example_stats`` of a batch of columns (lists, NumPy arrays or pandas Series as the engine gives them),
    with the batch's corpus indices and the worker's process id."""
    stats = metric.example_stats(columns["predictions"], columns["references"], **options)
    size = len(columns["index"])
    return {**stats, "index": np.asarray(columns["index"]), "pid": np.full(size, os.getpid())}


def worker_stats(columns: dict[str, Any], name: str, options: dict[str, Any]) -> dict[str, Any]:
    """:func:`batch_stats` with the metric loaded here (evaluate_text_metrics is installed: every worker imports
    it; after the first time in a process, loading takes milliseconds)."""
    import evaluate_text_metrics

    return batch_stats(evaluate_text_metrics.load(name), columns, options)


def ray_stats(batch: dict[str, np.ndarray], name: str, options: dict[str, Any]) -> dict[str, Any]:
    """Ray Data tasks: a function of one batch."""
    return worker_stats(batch, name, options)


class RayBertscore:
    """A Ray Data actor: the metric (and, at its first batch, its model) loaded once in the actor's process."""

    def __init__(self, options: dict[str, Any]) -> None:
        import evaluate_text_metrics

        model_loads()  # count from here on
        self.metric = evaluate_text_metrics.load("bertscore")
        self.options = options

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, Any]:
        stats = self.metric.example_stats(batch["predictions"], batch["references"], **self.options)
        size = len(batch["index"])
        return {**stats, "index": batch["index"], "pid": np.full(size, os.getpid()),
                "batch": np.full(size, batch["index"][0]), "loads": np.full(size, model_loads())}


def spark_stats(frames: Iterator[pd.DataFrame], name: str, options: dict[str, Any]) -> Iterator[pd.DataFrame]:
    for frame in frames:
        yield pd.DataFrame(worker_stats(frame, name, options))


def spark_arrow_stats(batches: Iterator[pa.RecordBatch], name: str, options: dict[str, Any]
                      ) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        yield pa.RecordBatch.from_pydict(worker_stats(batch.to_pydict(), name, options))


def spark_bertscore(frames: Iterator[pd.DataFrame], options: dict[str, Any]) -> Iterator[pd.DataFrame]:
    """One Spark partition: the metric loaded per partition (cheap), its model once per Python worker process
    (Spark reuses its Python workers; loaded models are cached per process)."""
    import evaluate_text_metrics
    from pyspark import TaskContext

    model_loads()
    metric = evaluate_text_metrics.load("bertscore")
    partition = TaskContext.get().partitionId()
    for frame in frames:
        stats = metric.example_stats(frame["predictions"], frame["references"], **options)
        yield pd.DataFrame({**stats, "index": frame["index"].to_numpy(), "pid": os.getpid(), "batch": partition,
                            "loads": model_loads()})


def partition_totals(rows: Iterator[Any], name: str, options: dict[str, Any]) -> list[dict[str, Any]]:
    """``reduce_stats`` of one Spark partition's rows (one small record per partition)."""
    import evaluate_text_metrics

    return [evaluate_text_metrics.load(name).reduce_stats(list(rows), **options)]  # an empty one merges as nothing


# -- engines ------------------------------------------------------------------------------------------------------


@contextmanager
def pickled_by_value(cloudpickle: Any) -> Iterator[None]:
    """Workers do not import this test file (tests/ is not on their path): its functions travel by value."""
    module = sys.modules[__name__]
    cloudpickle.register_pickle_by_value(module)
    try:
        yield
    finally:
        cloudpickle.unregister_pickle_by_value(module)


@pytest.fixture(scope="module")
def ray_data() -> Iterator[Any]:
    """A local Ray cluster of 2 CPUs (2 worker processes run the tasks, or 2 actors), order preserved."""
    import ray.cloudpickle
    import ray.data

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.execution_options.preserve_order = True  # rows come back in the input's order (resampling needs it)
    context.wait_for_min_actors_s = 300  # both actors started before the first batch: each gets some of the blocks
    try:
        with pickled_by_value(ray.cloudpickle):
            yield ray
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    """One Spark session in local mode with 2 cores for the whole module (the JVM starts once)."""
    import pyspark.cloudpickle
    from pyspark.sql import SparkSession

    python = os.environ.get("PYSPARK_PYTHON")
    os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers run this environment's Python (default: python3)
    session = (SparkSession.builder.master("local[2]").appName("test_scale_out")
               .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
               .config("spark.sql.execution.arrow.pyspark.enabled", "true").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    try:
        with pickled_by_value(pyspark.cloudpickle):
            yield session
    finally:
        session.stop()
        if python is None:
            os.environ.pop("PYSPARK_PYTHON", None)
        else:
            os.environ["PYSPARK_PYTHON"] = python


def ray_dataset(frame: pd.DataFrame, blocks: int = 4) -> Any:
    """A Ray Dataset of ``frame`` in ``blocks`` blocks (made here: a repartition would need CPUs of its own while
    the actors hold both)."""
    import ray.data

    size = -(-len(frame) // blocks)
    return ray.data.from_pandas([frame.iloc[start:start + size] for start in range(0, len(frame), size)])


def two_actors() -> Any:
    import ray.data

    return ray.data.ActorPoolStrategy(size=2)


def spark_frame(session: Any, frame: pd.DataFrame, partitions: int = 4) -> Any:
    """A Spark DataFrame of ``frame``, shuffled into ``partitions`` (rows no longer in corpus order)."""
    return session.createDataFrame(frame).repartition(partitions)


def spark_schema(session: Any, name: str, options: dict[str, Any], frame: pd.DataFrame) -> Any:
    """The Spark schema of ``worker_stats`` output, read off one example computed here."""
    sample = worker_stats(frame.iloc[:1].to_dict("list"), name, options)
    return session.createDataFrame(pd.DataFrame(sample)).schema


def in_corpus_order(records: list[dict[str, Any]]) -> bool:
    return [record["index"] for record in records] == sorted(record["index"] for record in records)


# -- Ray Data ---------------------------------------------------------------------------------------------------


@pytest.mark.loopback
@pytest.mark.parametrize("case", list(CASES))
def test_ray_data_statistics_equal_one_process_compute(case: str, corpus, ray_data) -> None:
    """map_batches(example_stats) as Ray tasks on 2 CPUs; take_all(), to_pandas() and Arrow blocks each give ==
    compute (chrF's resampling included: preserve_order keeps the rows in corpus order). Tasks run in Ray's
    pooled worker processes, which this module's cases share; actors (a callable class) are what the README's
    recipe and the bertscore case use."""
    import ray

    name, options, frame = case_inputs(corpus, case)
    stats = ray_dataset(frame, blocks=8).map_batches(
        ray_stats, fn_kwargs={"name": name, "options": options}, batch_size=50,
    ).materialize()
    rows = stats.take_all()
    single = one_process(name, options, frame)
    metric = load_metric(name)
    assert os.getpid() not in {row["pid"] for row in rows}, "Ray's worker processes computed the statistics"
    assert in_corpus_order(rows)
    assert metric.compute_from_stats(rows, **options) == single
    assert metric.compute_from_stats(stats.to_pandas(), **options) == single
    assert metric.compute_from_stats(pa.concat_tables(ray.get(stats.to_arrow_refs())), **options) == single
    if not options.get("confidence"):  # totals of batches, reduced as they stream to the driver
        totals = [metric.reduce_stats(batch, **options) for batch in stats.iter_batches(batch_size=256)]
        assert metric.compute_from_stats(totals, **options) == single


@pytest.mark.slow
@pytest.mark.loopback
def test_ray_data_order_by_index_column_without_preserve_order(corpus, ray_data) -> None:
    """Without preserve_order, sorting on the index column restores corpus order for resampling options (Ray
    tasks: a function of each batch)."""
    import ray.data

    name, options, frame = case_inputs(corpus, "chrf confidence")
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = False
    try:
        stats = ray_dataset(frame, blocks=6).map_batches(ray_stats, fn_kwargs={"name": name, "options": options},
                                                         batch_size=50)
        rows = stats.sort("index").take_all()
    finally:
        context.execution_options.preserve_order = True
    assert in_corpus_order(rows)
    assert load_metric(name).compute_from_stats(rows, **options) == one_process(name, options, frame)


def test_resampling_needs_corpus_order(corpus) -> None:
    """Why the order matters: chrF's confidence interval from the same rows in another order is another interval
    (bootstrap draws example positions), while the score is the same."""
    name, options, frame = case_inputs(corpus, "chrf confidence")
    metric = load_metric(name)
    stats = pd.DataFrame(metric.example_stats(frame["predictions"].tolist(), frame["references"].tolist()))
    shuffled = stats.sample(frac=1.0, random_state=0)
    in_order, out_of_order = metric.compute_from_stats(stats, **options), metric.compute_from_stats(shuffled, **options)
    assert in_order == one_process(name, options, frame)
    assert out_of_order["score"] == in_order["score"]
    assert out_of_order["confidence_low"] != in_order["confidence_low"]


@pytest.mark.loopback
def test_ray_data_bertscore_actors_load_the_model_once_each(corpus, ray_data) -> None:
    """bertscore in 2 Ray actors (a callable class): each loads the packaged model once, for all its batches;
    the per-example scores and the means from compute_from_stats equal one-process compute bit for bit."""
    frame = corpus.loc[: MODEL_PAIRS - 1, ["index", "prediction", "reference"]].rename(
        columns={"prediction": "predictions", "reference": "references"})
    options = {"batch_size": 1}
    stats = ray_dataset(frame, blocks=6).map_batches(RayBertscore, fn_constructor_kwargs={"options": options},
                                                     compute=two_actors(), batch_size=8)
    rows = stats.take_all()
    assert_model_loaded_once_per_worker(rows)
    assert_bertscore_equal(rows, frame, options)


# -- Spark ------------------------------------------------------------------------------------------------------


@pytest.mark.loopback
@pytest.mark.parametrize("case", list(CASES))
def test_spark_statistics_equal_one_process_compute(case: str, corpus, spark) -> None:
    """mapInPandas(example_stats) on local[2]; collected Rows (sorted by index), toPandas(), toArrow() and
    per-partition reduce_stats records each give == compute."""
    name, options, frame = case_inputs(corpus, case)
    schema = spark_schema(spark, name, options, frame)
    mapped = spark_frame(spark, frame).mapInPandas(lambda frames: spark_stats(frames, name, options), schema).cache()
    stats = mapped.orderBy("index")  # corpus order, for the resampling options
    rows = stats.collect()
    single = one_process(name, options, frame)
    metric = load_metric(name)
    assert len({row["pid"] for row in rows}) >= 2, "two Python worker processes computed the statistics"
    assert in_corpus_order([row.asDict() for row in rows])
    assert metric.compute_from_stats(rows, **options) == single
    assert metric.compute_from_stats(stats.toPandas(), **options) == single
    assert metric.compute_from_stats(stats.toArrow(), **options) == single
    if not options.get("confidence"):
        totals = mapped.rdd.mapPartitions(lambda part: partition_totals(part, name, options)).collect()
        assert len(totals) == 4 and all(total["reduced_examples"] > 1 for total in totals)
        assert metric.compute_from_stats(totals, **options) == single
    mapped.unpersist()


@pytest.mark.loopback
def test_spark_map_in_arrow_and_the_order_it_needs(corpus, spark) -> None:
    """mapInArrow works the same; after a shuffle the collected rows are out of corpus order, which changes a
    resampled interval: orderBy("index") restores it."""
    name, options, frame = case_inputs(corpus, "chrf confidence")
    schema = spark_schema(spark, name, options, frame)
    stats = spark_frame(spark, frame).mapInArrow(lambda batches: spark_arrow_stats(batches, name, options), schema)
    shuffled, ordered = stats.collect(), stats.orderBy("index").collect()
    metric, single = load_metric(name), one_process(name, options, frame)
    assert not in_corpus_order([row.asDict() for row in shuffled])
    assert metric.compute_from_stats(shuffled, **options) != single
    assert metric.compute_from_stats(ordered, **options) == single


@pytest.mark.loopback
def test_spark_bertscore_loads_the_model_once_per_python_worker(corpus, spark) -> None:
    """bertscore per Spark partition (6 partitions on 2 cores): Spark reuses its Python workers and the model is
    cached per process, so each worker loads it once whatever the number of partitions it runs."""
    frame = corpus.loc[: MODEL_PAIRS - 1, ["index", "prediction", "reference"]].rename(
        columns={"prediction": "predictions", "reference": "references"})
    options = {"batch_size": 1}
    sample = load_metric("bertscore").example_stats(frame["predictions"][:1].tolist(),
                                                    frame["references"][:1].tolist(), **options)
    schema = spark.createDataFrame(pd.DataFrame({**sample, "index": [0], "pid": [0], "batch": [0], "loads": [0]})
                                   ).schema
    stats = spark_frame(spark, frame, partitions=6).mapInPandas(lambda frames: spark_bertscore(frames, options),
                                                                schema)
    rows = [row.asDict() for row in stats.orderBy("index").collect()]
    assert_model_loaded_once_per_worker(rows)
    assert_bertscore_equal(rows, frame, options)


def assert_model_loaded_once_per_worker(rows: list[dict[str, Any]]) -> None:
    """Every worker process loaded the model exactly once, and some process scored several batches with it."""
    batches_of: dict[int, set[int]] = defaultdict(set)
    loads_of: dict[int, set[int]] = defaultdict(set)
    for row in rows:
        batches_of[row["pid"]].add(row["batch"])
        loads_of[row["pid"]].add(row["loads"])
    assert len(batches_of) == 2, f"two worker processes ran the model, got {len(batches_of)}"
    assert all(loads == {1} for loads in loads_of.values()), f"model loads per process: {dict(loads_of)}"
    assert sum(len(batches) for batches in batches_of.values()) > len(batches_of)
    assert max(len(batches) for batches in batches_of.values()) >= 2


def assert_bertscore_equal(rows: list[dict[str, Any]], frame: pd.DataFrame, options: dict[str, Any]) -> None:
    metric = load_metric("bertscore")
    predictions, references = frame["predictions"].tolist(), frame["references"].tolist()
    single = metric.compute(predictions=predictions, references=references, **options)
    rows = sorted(rows, key=lambda row: row["index"])
    for key in ("precision", "recall", "f1"):
        assert [row[key] for row in rows] == single[key], key
    means = metric.compute_from_stats(rows, **options)
    assert means == metric.compute_from_stats(metric.example_stats(predictions, references, **options), **options)
    assert means["f1"] == math.fsum(single["f1"]) / len(single["f1"])
    assert means["hashcode"] == single["hashcode"]


# -- the forms compute_from_stats takes -------------------------------------------------------------------------


def engine_forms(metric: Any, predictions: list[Any], references: list[Any], options: dict[str, Any]
                 ) -> dict[str, Any]:
    """The statistics of a corpus in each form an engine hands back (built here, without a cluster)."""
    from pyspark.sql import Row

    columns = metric.example_stats(predictions, references, **options)
    records = [dict(zip(columns, values)) for values in zip(*columns.values())]
    frame = pd.DataFrame(columns)
    half = len(predictions) // 2
    return {
        "columns": columns,
        "pandas DataFrame": frame,
        "pyarrow Table": pa.table(columns),
        "Spark Rows": [Row(**record) for record in records],
        "Ray take_all() dicts": [{**record, "index": index} for index, record in enumerate(records)],
        "per-example example_stats, one call per sample": [
            metric.example_stats([prediction], [reference], **options)
            for prediction, reference in zip(predictions, references, strict=True)
        ],
        "NumPy arrays as columns": {name: np.asarray(values) for name, values in columns.items()},
        "column batches": [metric.example_stats(predictions[:half], references[:half], **options),
                           metric.example_stats(predictions[half:], references[half:], **options)],
    }


@pytest.mark.parametrize("case", list(CASES))
def test_compute_from_stats_takes_every_form_engines_hand_back(case: str, corpus) -> None:
    name, options, frame = case_inputs(corpus, case)
    frame = frame.iloc[:200]
    metric = load_metric(name)
    predictions, references = frame["predictions"].tolist(), frame["references"].tolist()
    single = metric.compute(predictions=predictions, references=references, **options)
    for form, stats in engine_forms(metric, predictions, references, options).items():
        assert metric.compute_from_stats(stats, **options) == single, form
    shards = [metric.reduce_stats(metric.example_stats(predictions[a:a + 70], references[a:a + 70], **options),
                                  **options) for a in range(0, len(predictions), 70)]
    if options.get("confidence"):
        with pytest.raises(ValueError, match="need every example's statistics"):
            metric.compute_from_stats(shards, **options)
    else:
        assert metric.compute_from_stats(shards, **options) == single


# Lists of pandas DataFrames / pyarrow Tables / RecordBatches: what Ray's iter_batches(batch_format="pandas" or
# "pyarrow"), ray.get(ds.to_pandas_refs()) / ray.get(ds.to_arrow_refs()) and pyarrow's Table.to_batches() give.
FRAME_LISTS = {
    "list of pandas DataFrames": lambda halves: [pd.DataFrame(half) for half in halves],
    "list of pyarrow Tables": lambda halves: [pa.table(half) for half in halves],
    "list of pyarrow RecordBatches": lambda halves: [pa.RecordBatch.from_pydict(half) for half in halves],
}


@pytest.mark.parametrize("form", list(FRAME_LISTS))
def test_compute_from_stats_takes_lists_of_frames(form: str, corpus) -> None:
    name, options, frame = case_inputs(corpus, "sacrebleu")
    metric = load_metric(name)
    predictions, references = frame["predictions"].tolist()[:100], frame["references"].tolist()[:100]
    halves = [metric.example_stats(predictions[:50], references[:50]),
              metric.example_stats(predictions[50:], references[50:])]
    assert metric.compute_from_stats(FRAME_LISTS[form](halves)) == metric.compute(predictions=predictions,
                                                                                    references=references)


@pytest.mark.loopback
def test_a_module_in_a_workers_closure_travels_as_what_loads_it(corpus, ray_data, spark) -> None:
    """A loaded module captured by a Ray task or a Spark function (pickled by value into another process) is loaded
    again there, with the options bound by ``configure``; empty Spark partitions reduce to totals that merge as
    nothing: the result equals one-process compute."""
    import evaluate_text_metrics

    chrf = evaluate_text_metrics.load("chrf").configure(word_order=2)
    frame = corpus.iloc[:120]
    predictions, references = frame["prediction"].tolist(), frame["reference"].tolist()
    expected = chrf.compute(predictions=predictions, references=references)
    assert expected["word_order"] == 2

    @ray.remote
    def shard_totals(shard_predictions: list[str], shard_references: list[str]) -> dict[str, Any]:
        return {"pid": os.getpid(), "totals": chrf.reduce_stats(chrf.example_stats(shard_predictions,
                                                                                    shard_references))}

    shards = ray.get([shard_totals.remote(predictions[a:a + 40], references[a:a + 40]) for a in (0, 40, 80)])
    assert {shard["pid"] for shard in shards}.isdisjoint({os.getpid()})
    assert chrf.compute_from_stats([shard["totals"] for shard in shards]) == expected

    def partition(rows: Iterator[tuple[str, str]]) -> list[dict[str, Any]]:
        rows = list(rows)
        return [chrf.reduce_stats(chrf.example_stats([p for p, _ in rows], [r for _, r in rows]) if rows else [])]

    pairs = list(zip(predictions[:5], references[:5], strict=True))
    totals = spark.sparkContext.parallelize(pairs, 8).mapPartitions(partition).collect()
    assert len(totals) == 8 and sum(total["reduced_examples"] == 0 for total in totals) == 3
    assert chrf.compute_from_stats(totals) == chrf.compute(predictions=predictions[:5], references=references[:5])


@pytest.mark.loopback
def test_ray_tasks_loading_the_module_merge_partitions_to_the_corpus_score(wmt17, ray_data) -> None:
    """Plain Ray tasks that load the module with evaluate.load and return each partition's totals: merged,
    they equal one-process compute on a whole WMT17 system (3,004 segments, uneven partitions)."""
    references, systems = wmt17
    predictions = systems["uedin-nmt.4722"]
    folder = str(METRICS_DIR / "sacrebleu")

    @ray.remote
    def partition_totals(part_predictions: list[str], part_references: list[str]) -> dict[str, Any]:
        import evaluate

        metric = evaluate.load(folder)
        return metric.reduce_stats(metric.example_stats(part_predictions, part_references))

    bounds = [0, 751, 1502, 2253, len(predictions)]
    totals = ray.get([partition_totals.remote(predictions[a:b], references[a:b]) for a, b in zip(bounds, bounds[1:])])
    metric = load_metric("sacrebleu")
    assert metric.compute_from_stats(totals) == metric.compute(predictions=predictions, references=references)


@pytest.mark.parametrize("stats", ["a string", 3, 2.5, None, b"bytes", [1, 2], ["a", "b"]],
                         ids=["str", "int", "float", "None", "bytes", "list of ints", "list of strings"])
def test_compute_from_stats_refuses_other_things_saying_what_it_takes(stats: Any) -> None:
    with pytest.raises(TypeError, match=ACCEPTED):
        load_metric("sacrebleu").compute_from_stats(stats)


@pytest.mark.loopback
def test_engine_datasets_passed_whole_are_refused_with_the_way_out(corpus, ray_data, spark) -> None:
    metric = load_metric("sacrebleu")
    with pytest.raises(TypeError, match=r"got a Ray Dataset; pass `\.take_all\(\)` or `\.to_pandas\(\)`"):
        metric.compute_from_stats(ray_dataset(corpus.iloc[:10]))
    with pytest.raises(TypeError, match=r"got a Spark DataFrame; pass its rows \(`\.collect\(\)`\)"):
        metric.compute_from_stats(spark.createDataFrame(corpus.iloc[:10]))


# -- slow: the default batch size of bertscore, and the recipes as written ----------------------------------------


@pytest.mark.slow
@pytest.mark.loopback
def test_ray_data_bertscore_default_batch_size_within_float32_rounding(wmt17, ray_data) -> None:
    """At bertscore's default batch size, which texts share a model batch changes values in the last float32
    bits: the engine's per-example values agree with one-process compute to 1e-6 (the card's parity bound)."""
    references, systems = wmt17
    frame = pd.DataFrame({"index": np.arange(300), "predictions": systems["KIT.4950"][:300],
                          "references": references[:300]})
    rows = ray_dataset(frame).map_batches(RayBertscore, fn_constructor_kwargs={"options": {}}, compute=two_actors(),
                                          batch_size=64).take_all()
    single = load_metric("bertscore").compute(predictions=frame["predictions"].tolist(),
                                              references=frame["references"].tolist())
    for key in ("precision", "recall", "f1"):
        assert [row[key] for row in rows] == pytest.approx(single[key], abs=1e-6, rel=0), key


def test_the_readme_has_a_recipe_per_engine() -> None:
    texts = blocks_run_by("test_scale_out.py")
    assert sum("ray.data" in text for text in texts) == 1 and sum("SparkSession" in text for text in texts) == 1


@pytest.mark.loopback
@pytest.mark.parametrize("index", range(len(blocks_run_by("test_scale_out.py"))))
def test_the_readmes_recipes_run_as_written(index: int, tmp_path) -> None:
    """Each README recipe in its own Python process (each starts and stops its own cluster), offline: it prints the
    score and True (equal to one-process compute)."""
    completed = subprocess.run([sys.executable, "-c", blocks_run_by("test_scale_out.py")[index]], cwd=tmp_path,
                               capture_output=True, text=True, timeout=600,
                               env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert completed.returncode == 0, completed.stderr[-3000:]
    score, equal = completed.stdout.strip().splitlines()[-1].split()
    assert float(score) > 0 and equal == "True"
