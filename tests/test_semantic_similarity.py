"""Semantic similarity through evaluate's loader, against independent computations: mean pooling written here
with transformers directly, and sentence-transformers when it is installed."""

from __future__ import annotations

import math
import random

import pytest
import torch

from bertscore_oracle import packaged_model_path
from conftest import metric_fixture

TOLERANCE = 1e-6


similarity = metric_fixture("semantic_similarity")


@pytest.fixture(scope="module")
def texts(wmt17):
    references, systems = wmt17
    return systems[sorted(systems)[2]][:48], references[:48]


def manual_embeddings(texts: list[str]) -> torch.Tensor:
    """Mean pooling over every token (special tokens included) of the last layer, then L2 normalisation,
    one text at a time (no padding), truncation at the model's max_seq_length 256."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(packaged_model_path())
    model = AutoModel.from_pretrained(packaged_model_path()).eval()
    vectors = []
    with torch.no_grad():
        for text in texts:
            encoded = tokenizer(text.strip(), return_tensors="pt", truncation=True, max_length=256)
            hidden = model(**encoded).last_hidden_state[0]
            vectors.append(torch.nn.functional.normalize(hidden.mean(dim=0), dim=-1))
    return torch.stack(vectors)


def test_matches_manual_mean_pooling(similarity, texts) -> None:
    hypotheses, references = texts
    result = similarity.compute(predictions=hypotheses, references=references)
    expected = (manual_embeddings(hypotheses) * manual_embeddings(references)).sum(dim=-1)
    assert max(abs(a - b) for a, b in zip(result["similarities"], expected.tolist(), strict=True)) <= TOLERANCE
    assert result["similarity"] == pytest.approx(math.fsum(result["similarities"]) / len(hypotheses), abs=1e-12)
    assert type(result["similarity"]) is float and all(type(v) is float for v in result["similarities"])


def test_matches_sentence_transformers(similarity, texts) -> None:
    import sentence_transformers
    hypotheses, references = texts
    model = sentence_transformers.SentenceTransformer(packaged_model_path(), device="cpu")
    a = torch.tensor(model.encode(hypotheses[:16], convert_to_numpy=True))
    b = torch.tensor(model.encode(references[:16], convert_to_numpy=True))
    expected = torch.nn.functional.cosine_similarity(a, b, dim=-1)
    result = similarity.compute(predictions=hypotheses[:16], references=references[:16])
    assert max(abs(x - y) for x, y in zip(result["similarities"], expected.tolist(), strict=True)) <= 1e-5


def test_systems_sharing_references_in_chunks_match_manual_pooling(similarity, texts) -> None:
    """Two systems against the same references, in chunks of 4 predictions (the predictions of each reference taken
    together): each pair's similarity, back in the corpus's order, is the manual mean pooling's."""
    import sys

    hypotheses, references = texts
    predictions, groups = hypotheses[:6] + references[6:12], references[:6] * 2
    package = type(similarity).__module__.rsplit(".", 1)[0]
    core, models = sys.modules[f"{package}.core_sentence"], sys.modules[f"{package}.core_models"]
    source = models.resolve_model("semantic_similarity", None)
    loaded = models.load_model("semantic_similarity", source, use_fast_tokenizer=False, device=torch.device("cpu"),
                               dtype=torch.float32)
    mode, max_length = core.pooling_config(source.path)
    chunked = core.pair_similarities(loaded, predictions, [[reference] for reference in groups], mode=mode,
                                     max_length=max_length, chunk_size=4)
    expected = (manual_embeddings(predictions) * manual_embeddings(groups)).sum(dim=-1)
    assert max(abs(a - b) for a, b in zip(chunked.tolist(), expected.tolist(), strict=True)) <= TOLERANCE
    result = similarity.compute(predictions=predictions, references=groups)["similarities"]
    assert result == pytest.approx(expected.tolist(), abs=TOLERANCE)


def test_multi_reference_takes_the_best(similarity, texts) -> None:
    hypotheses, references = texts
    single = similarity.compute(predictions=hypotheses[:6], references=references[:6])["similarities"]
    other = similarity.compute(predictions=hypotheses[:6], references=hypotheses[6:12])["similarities"]
    both = similarity.compute(predictions=hypotheses[:6],
                              references=[[r, o] for r, o in zip(references[:6], hypotheses[6:12])])["similarities"]
    assert both == pytest.approx([max(s, o) for s, o in zip(single, other)], abs=TOLERANCE)


def test_invariant_to_batch_size_and_order(similarity, texts) -> None:
    hypotheses, references = texts
    base = similarity.compute(predictions=hypotheses, references=references)["similarities"]
    small = similarity.compute(predictions=hypotheses, references=references, batch_size=3)["similarities"]
    assert small == pytest.approx(base, abs=TOLERANCE)
    order = list(range(len(hypotheses)))
    random.Random(5).shuffle(order)
    shuffled = similarity.compute(predictions=[hypotheses[i] for i in order],
                                  references=[references[i] for i in order])["similarities"]
    assert [shuffled[order.index(i)] for i in range(len(order))] == pytest.approx(base, abs=TOLERANCE)


def test_example_stats_and_sharded_mean(similarity, texts) -> None:
    hypotheses, references = texts
    full = similarity.compute(predictions=hypotheses[:20], references=references[:20])
    first = similarity.example_stats(hypotheses[:8], references[:8])
    second = similarity.example_stats(hypotheses[8:20], references[8:20])
    columns = {key: first[key] + second[key] for key in first}
    merged = similarity.compute_from_stats(columns)
    assert merged["examples"] == 20
    assert merged["similarity"] == pytest.approx(full["similarity"], abs=1e-7)


def test_identity_and_empty_strings(similarity) -> None:
    result = similarity.compute(predictions=["a red house", ""], references=["a red house", ""])
    assert result["similarities"] == pytest.approx([1.0, 1.0], abs=1e-5)


def test_model_not_available_offline(similarity) -> None:
    with pytest.raises(ValueError, match="is not available offline"):
        similarity.compute(predictions=["a"], references=["b"], model_type="no-such-org/no-such-model")
