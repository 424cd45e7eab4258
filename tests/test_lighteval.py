"""evaluate_text_metrics.lighteval: our modules as lighteval 0.13 metrics, end to end in lighteval's Pipeline.

lighteval (nltk 3.9.1) lives in `.venv-clients` only; tests/lighteval_clients_run.py runs its Pipeline there on a
local custom task (German-to-English, two references per sample, local JSONL) with a local causal LM, our metrics
(corpus: sacreBLEU, chrF, chrF++, TER, BLEU, COMET on the suite's tiny checkpoint; sample: ROUGE, METEOR) and
lighteval's own chrf/ter/bleu beside them. The default run uses a tiny random Llama over a word-level vocabulary
(seconds); the slow run the packaged SmolLM2-135M-Instruct converted from its GGUF.

Asserted: our corpus scores equal our module called directly on the pipeline's generations and sacreBLEU's corpus
scores (bit for bit); sample metrics equal the modules' corpus means; lighteval's bootstrap stderr resamples our
statistics rows exactly; what lighteval's own chrF/TER/BLEU compute (pinned as found); the adapter imports without
lighteval (this environment has none).
"""

from __future__ import annotations

import importlib
import math
import sys
from pathlib import Path
from typing import Any

import pytest

from learned_oracle import CLIENTS_VENV, run_in_clients

SCRIPT = Path(__file__).with_name("lighteval_clients_run.py")
# the tiny COMET's per-sample statistics come from one-example batches, the direct compute batches all samples:
# float32 sums in another order (as in tests/test_comet.py)
COMET_TOLERANCE = 1e-6
# likewise the encoders of BERTScore and semantic similarity (float32, one sample per batch vs all at once)
ENCODER_TOLERANCE = 1e-6


def test_the_adapter_imports_without_lighteval() -> None:
    adapter = importlib.import_module("evaluate_text_metrics.lighteval")
    assert adapter.output_name("sacrebleu", "score") == "sacrebleu_score"
    assert adapter.output_name("meteor", "meteor") == "meteor"
    assert adapter.output_name("bleu", "bleu") == "bleu_bleu"  # lighteval's own metric is called "bleu"
    assert adapter.mean([0.1, 0.2, 0.3]) == math.fsum([0.1, 0.2, 0.3]) / 3
    if importlib.util.find_spec("lighteval") is None:
        assert "lighteval" not in sys.modules
        with pytest.raises(ImportError, match=r"needs lighteval \(`pip install lighteval==0.13.0`\)"):
            adapter.corpus_metric("sacrebleu")


def run(tmp_path_factory: pytest.TempPathFactory, **payload: Any) -> dict[str, Any]:
    if not (CLIENTS_VENV / "bin" / "python").is_file():
        pytest.skip(f"the environment {CLIENTS_VENV} is missing: run `bash scripts/setup-env tests`")
    work = tmp_path_factory.mktemp(f"lighteval-{payload['model']}")
    return run_in_clients(SCRIPT, {"work": str(work), **payload}, timeout=1800)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> dict[str, Any]:
    return run(tmp_path_factory, model="tiny", docs=12, generation_size=16, bootstrap_iters=20)


def assert_pipeline_run(out: dict[str, Any], docs: int) -> None:
    results, direct, oracle = out["results"], out["direct"], out["oracle"]
    assert not out["imported_lighteval_with_adapter"], "importing the adapter imported lighteval"
    assert len(out["generations"]) == docs and all(len(gold) == 2 for gold in out["golds"])
    assert sorted(map(tuple, (row["references"] for row in out["rows"]))) == sorted(map(tuple, out["golds"]))
    # corpus metrics: our module's corpus score of the generations, and sacreBLEU's
    assert results["sacrebleu_score"] == direct["sacrebleu"]["score"] == oracle["bleu"]
    assert results["chrf_score"] == direct["chrf"]["score"] == oracle["chrf"]
    assert results["chrf++_score"] == direct["chrf++"]["score"] == oracle["chrf++"]
    assert results["ter_score"] == direct["ter"]["score"] == oracle["ter"]
    assert results["bleu_bleu"] == direct["bleu"]["bleu"]
    assert results["comet_mean_score"] == pytest.approx(direct["comet"]["mean_score"], abs=COMET_TOLERANCE)
    # sample metrics: lighteval's mean of per-sample scores is the modules' corpus score (a mean of examples)
    assert results["rouge_rouge1"] == direct["rouge"]["rouge1"]
    assert results["rouge_rougeL"] == direct["rouge"]["rougeL"]
    assert results["meteor"] == direct["meteor"]["meteor"]
    # lighteval's own chrF/TER score only the first two generations (two golds per sample); its BLEU the first gold
    assert results["chrf"] == oracle["lighteval_chrf"] != oracle["chrf"]
    assert results["ter"] == oracle["lighteval_ter"] != oracle["ter"]
    assert results["bleu"] == oracle["lighteval_bleu"]
    # stderr: lighteval's bootstrap over our samples (mean_stderr for the sample metrics)
    for name in ("sacrebleu_score", "chrf_score", "ter_score", "comet_mean_score", "rouge_rouge1", "meteor"):
        assert math.isfinite(results[f"{name}_stderr"]) and results[f"{name}_stderr"] >= 0, name
    for resample in out["resampled"]:  # pickled aggregation on resampled statistics rows = sacreBLEU on the texts
        assert resample["ours"] == resample["sacrebleu"]
    assert out["sample_kinds"]["sacrebleu_score"] == "MetricSample"
    assert out["sample_kinds"]["rouge_rouge1"] == "float"
    assert any(path.endswith(".parquet") for path in out["saved"]), "lighteval saved no details"


def test_pipeline_with_a_tiny_model(tiny) -> None:
    assert_pipeline_run(tiny, docs=12)
    assert tiny["oracle"]["bleu"] > 0 and tiny["direct"]["rouge"]["rouge1"] > 0, "generations share no word"
    assert len(set(tiny["generations"])) == len(tiny["generations"])


def test_other_shapes_through_lightevals_metric_machinery(tiny) -> None:
    """lighteval's apply_metric and corpus aggregations on the pipeline's docs and responses: BERTScore (per-example
    scores: the corpus value is their mean, as a corpus or a sample metric), semantic similarity and exact match
    (sample metrics), ROUGE's other outputs from statistics, sacreBLEU from texts (statistics=False)."""
    machinery, direct = tiny["by_machinery"], tiny["direct_more"]
    f1 = direct["bertscore"]["f1"]
    assert machinery["bertscore_f1"] == pytest.approx(math.fsum(f1) / len(f1), abs=ENCODER_TOLERANCE)
    assert machinery["bertscore_f1_per_sample"] == pytest.approx(math.fsum(f1) / len(f1), abs=ENCODER_TOLERANCE)
    for output in ("precision", "recall"):
        values = direct["bertscore"][output]
        assert machinery[f"bertscore_{output}"] == pytest.approx(math.fsum(values) / len(values), abs=ENCODER_TOLERANCE)
    assert machinery["semantic_similarity_similarity"] == pytest.approx(direct["semantic_similarity"]["similarity"],
                                                                         abs=ENCODER_TOLERANCE)
    assert machinery["exact_match"] == direct["exact_match"]["exact_match"]
    assert machinery["rouge_rouge2"] == tiny["direct"]["rouge"]["rouge2"]
    assert machinery["rouge_rougeLsum"] == tiny["direct"]["rouge"]["rougeLsum"]
    assert machinery["sacrebleu_from_texts"] == tiny["oracle"]["bleu"]


def test_adapter_refusals_and_choices(tiny) -> None:
    checks = tiny["checks"]
    assert checks["sample_sacrebleu"].startswith("ValueError: sacrebleu: its corpus result is not the mean of its "
                                                 "one-sample results")
    assert "use corpus_metric('sacrebleu')" in checks["sample_sacrebleu"]
    assert checks["statistics_mauve"].startswith("ValueError: mauve: its corpus result with these options is not a "
                                                 "function of per-example statistics")
    assert checks["bad_option"].startswith("ValueError: sacrebleu: unknown `tokenize` 'nope'")
    assert "pass `inputs=`" in checks["labels_without_inputs"]
    assert checks["no_default_outputs"] == ("ValueError: accuracy: name the outputs to report, e.g. outputs=[...] "
                                            "(no default for this metric)")
    assert "pass `inputs=`" in checks["squad_v2_without_inputs"]
    assert checks["lambda_inputs_pickled"] == "dropped"  # a lambda stays behind when the pool pickles the scorer
    # statistics where the corpus result is a function of them; inputs (one compute) where it needs them all
    assert checks["statistics"] == {"sacrebleu": True, "rouge": True, "rouge155": True, "squad_v2": False,
                                    "mauve": False}


@pytest.mark.slow
def test_pipeline_with_smollm2(tmp_path_factory) -> None:
    """The packaged SmolLM2-135M-Instruct (GGUF dequantized to a transformers folder, about 30 s), real generations."""
    out = run(tmp_path_factory, model="smollm2", docs=12, generation_size=32, bootstrap_iters=100)
    assert_pipeline_run(out, docs=12)


_README_TASK = """
import json
import sys

payload = json.loads(sys.stdin.read())
namespace = {}
exec(compile(payload["code"], "README.md", "exec"), namespace)
(task,) = namespace["TASKS_TABLE"]
doc = namespace["prompt"]({"de": "Hallo Welt", "references": ["Hello world", "Hi world"]}, "wmt_de_en")
print(json.dumps({"task": task.name, "metrics": [metric.metric_name for metric in task.metrics],
                  "golds": list(doc.get_golds()), "query": doc.query}))
"""


def test_the_readmes_custom_task_file_runs_as_written(tmp_path: Path) -> None:
    """The README's custom task file, executed in lighteval's environment: its task holds our metrics under the
    names lighteval reports, and its prompt makes every reference a gold."""
    from readme_blocks import blocks_run_by

    (code,) = blocks_run_by("test_lighteval.py")
    script = tmp_path / "readme_custom_task.py"
    script.write_text(_README_TASK, encoding="utf-8")
    out = run_in_clients(script, {"code": code})
    assert out["task"] == "wmt_de_en"
    assert out["metrics"] == [["sacrebleu_score"], ["chrf_score"], ["ter_score"],
                              ["rouge_rouge1", "rouge_rouge2", "rouge_rougeL", "rouge_rougeLsum"]]
    assert out["golds"] == ["Hello world", "Hi world"] and out["query"].endswith("German: Hallo Welt\nEnglish:")
