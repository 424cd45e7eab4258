"""Semantic similarity: cosine similarity of sentence embeddings of predictions and references, offline."""

from __future__ import annotations

import math
from typing import Any

import evaluate

from .core_checks import check_bool, check_int, check_text_pairs
from .core_inputs import CheckedTextPairs, text_pair_features
# core_inputs needs core_trainer; importing it here makes evaluate's loader copy it.
from .core_trainer import TrainerTextMetrics
from .core_stats import StatField, StatsSchema
from .core_devices import PRECISIONS, select_device, select_dtype
# core_models needs core_onednn; importing it here makes evaluate's loader copy it.
from .core_onednn import use_onednn_linears
from .core_models import load_model, resolve_model
from .core_embed import embed_texts
from .core_sentence import pair_similarities, pooling_config

_CITATION = """\
@inproceedings{reimers-gurevych-2019-sentence,
    title = "Sentence-{BERT}: Sentence Embeddings using {S}iamese {BERT}-Networks",
    author = "Reimers, Nils and Gurevych, Iryna",
    booktitle = "Proceedings of the 2019 Conference on Empirical Methods in Natural Language Processing",
    year = "2019",
    url = "https://arxiv.org/abs/1908.10084",
}
"""

_DESCRIPTION = """\
Semantic similarity embeds each prediction and reference as one vector (the pooling the model was trained with:
mean pooling for the packaged all-MiniLM-L6-v2) and reports their cosine similarity per example and the mean.
With several references, an example's similarity is the highest over its references. Offline; shares the model
loader, cache and batched embedding with the `bertscore` module.
"""

_KWARGS_DESCRIPTION = """
Cosine similarity of sentence embeddings of predictions and references.

Args:
    predictions (`list` of `str`): the texts to score.
    references (`list` of `str`, or `list` of `list` of `str`): one reference, or a list of references (ragged
        allowed, `None` entries ignored), per prediction.
    model_type (`str`): a local sentence-embedding model folder or a Hugging Face model name already in the
        local cache; default None: the packaged all-MiniLM-L6-v2. Pooling follows the folder's
        `1_Pooling/config.json` (mean pooling when there is none).
    device (`str`): 'cpu', 'cuda', 'cuda:N', 'mps'; default None picks CUDA, then MPS, then the CPU.
    batch_size (`int`): texts per model batch, default 64.
    precision (`str`): 'fp32' (default), 'bf16' or 'fp16' (GPU only).
    verbose (`bool`): show a progress bar. Default False.
Returns:
    similarity (`float`): mean cosine similarity over the examples, -1 to 1.
    similarities (`list` of `float`): cosine similarity per example.
    model (`str`): the model used.
Examples:

    >>> import evaluate
    >>> similarity = evaluate.load("./metrics/semantic_similarity")
    >>> results = similarity.compute(predictions=["A man is eating food.", "A cat sleeps."],
    ...                              references=["A man is eating a meal.", "The stock market fell."])
    >>> print([round(value, 2) for value in results["similarities"]])
    [0.93, 0.04]
    >>> print(round(results["similarity"], 3))
    0.483
"""

_SCHEMA = StatsSchema("semantic_similarity", (StatField("similarity", "fsum"), StatField("examples")))


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class SemanticSimilarity(CheckedTextPairs, evaluate.Metric):
    """Sentence-embedding cosine similarity, evaluate-compatible."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            homepage="https://www.sbert.net",
            inputs_description=_KWARGS_DESCRIPTION,
            features=text_pair_features(),
            reference_urls=["https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2"],
        )

    def _signature(self, name: str, precision: str) -> str:
        return f"{name}|pool:config|{precision}"

    def _similarities(self, predictions: list[str], references: list[list[str]], model_type: Any, device: Any,
                      batch_size: Any, precision: Any, verbose: bool) -> tuple[list[float], str]:
        check_int(self.name, "batch_size", batch_size, minimum=1)
        check_bool(self.name, "verbose", verbose)
        source = resolve_model(self.name, model_type)
        chosen = select_device(self.name, device)
        loaded = load_model(self.name, source, use_fast_tokenizer=False, device=chosen,
                            dtype=select_dtype(self.name, precision, chosen))
        mode, max_length = pooling_config(source.path)
        bar = None
        if verbose:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(predictions), desc=self.name, unit="example")
        try:
            scores = pair_similarities(loaded, predictions, references, mode=mode, max_length=max_length,
                                       batch_size=batch_size, progress=None if bar is None else bar.update)
        finally:
            if bar is not None:
                bar.close()
        return scores.tolist(), self._signature(source.name, precision)

    def _compute(
        self,
        predictions: list[str],
        references: list[list[str]],
        model_type: str | None = None,
        device: str | None = None,
        batch_size: int = 64,
        precision: str = "fp32",
        verbose: bool = False,
    ) -> dict[str, Any]:
        similarities, signature = self._similarities(predictions, references, model_type, device, batch_size,
                                                     precision, verbose)
        return {
            "similarity": math.fsum(similarities) / len(similarities),
            "similarities": similarities,
            "model": signature.split("|")[0],
        }

    def example_stats(self, predictions: list[str], references: list[Any], *, model_type: str | None = None,
                      device: str | None = None, batch_size: int = 64, precision: str = "fp32"
                      ) -> dict[str, list[Any]]:
        """Per-example similarity as columns (for `datasets.Dataset.map(batched=True)`); the mean of any
        number of batches or shards comes from :meth:`compute_from_stats`."""
        predictions, references = check_text_pairs(self.name, predictions, references)
        similarities, signature = self._similarities(predictions, references, model_type, device, batch_size,
                                                     precision, False)
        return _SCHEMA.columns([(value, 1) for value in similarities], signature)

    def compute_from_stats(self, stats: Any, *, model_type: str | None = None, precision: str = "fp32"
                           ) -> dict[str, Any]:
        """Mean similarity from per-example columns, records, a Dataset, or merged shard totals."""
        if precision not in PRECISIONS:
            raise ValueError(f"{self.name}: unknown `precision` {precision!r}; valid values are {list(PRECISIONS)}")
        source = resolve_model(self.name, model_type)
        totals = _SCHEMA.totals(stats, expected_signature=self._signature(source.name, precision))
        return {"similarity": totals["similarity"] / totals["examples"], "examples": totals["examples"],
                "model": source.name}
