"""Full-size parity with bert-score 0.3.13: all 3,004 WMT17 newstest2017 pairs of three systems, fp32 CPU.

Run with `pytest -m slow tests/test_bertscore_slow.py -s` (about nine minutes on two CPU cores); each test
prints its maximum absolute difference.
"""

from __future__ import annotations

import pytest
import torch

from bertscore_oracle import as_tensor, max_diff, oracle_scores, parity, rescaled_tolerance
from conftest import load_metric

pytestmark = pytest.mark.slow
SYSTEMS = ("KIT.4950", "online-B.0", "uedin-nmt.4722")
TOLERANCE = 1e-6
PAIRS_PER_ORACLE_CALL = 500  # bert-score holds all of a call's embeddings: 3,004 pairs x 7 layers took 5 GiB


def tolerance(rescale: bool) -> float:
    return rescaled_tolerance(TOLERANCE) if rescale else TOLERANCE


@pytest.fixture(scope="module", autouse=True)
def threads():
    torch.set_num_threads(2)


@pytest.mark.parametrize("system", SYSTEMS)
@pytest.mark.parametrize(("idf", "rescale"), [(False, False), (True, True)])
def test_full_parity_every_layer(wmt17, system: str, idf: bool, rescale: bool) -> None:
    references, systems = wmt17
    hypotheses = systems[system]
    assert len(hypotheses) == len(references) == 3004
    theirs = oracle_scores(hypotheses, references, num_layers=6, idf=idf, rescale=rescale, all_layers=True,
                           pairs_per_call=PAIRS_PER_ORACLE_CALL)
    ours = as_tensor(load_metric("bertscore").compute(predictions=hypotheses, references=references, idf=idf,
                                                      rescale_with_baseline=rescale, all_layers=True))
    per_layer = [max_diff(ours[layer], theirs[layer]) for layer in range(ours.shape[0])]
    raw, rechecked, final = parity(ours, theirs, hypotheses, references, tolerance(rescale), num_layers=6,
                                   idf=idf, rescale=rescale, all_layers=True, idf_sents=references if idf else None)
    print(f"\n{system} idf={idf} rescale={rescale}: 3004 pairs x 7 layers, max abs diff {raw:.3g} "
          f"(per layer {[f'{d:.2g}' for d in per_layer]}); {rechecked} pairs re-checked unpadded, "
          f"then max abs diff {final:.3g}")
    assert final <= tolerance(rescale)


@pytest.mark.parametrize(("idf", "rescale"), [(True, False), (False, True)])
def test_full_parity_crossed_options(wmt17, idf: bool, rescale: bool) -> None:
    references, systems = wmt17
    hypotheses = systems[SYSTEMS[0]]
    theirs = oracle_scores(hypotheses, references, num_layers=3, idf=idf, rescale=rescale)
    ours = as_tensor(load_metric("bertscore").compute(predictions=hypotheses, references=references, idf=idf,
                                                      rescale_with_baseline=rescale, num_layers=3))
    raw, rechecked, final = parity(ours, theirs, hypotheses, references, tolerance(rescale), num_layers=3,
                                   idf=idf, rescale=rescale, idf_sents=references if idf else None)
    print(f"\n{SYSTEMS[0]} layer 3 idf={idf} rescale={rescale}: 3004 pairs, max abs diff {raw:.3g}; "
          f"{rechecked} pairs re-checked unpadded, then {final:.3g}")
    assert final <= tolerance(rescale)


def test_full_parity_multi_reference(wmt17) -> None:
    """Two references per segment (the reference and another system's output), idf from both, rescaled."""
    references, systems = wmt17
    hypotheses = systems[SYSTEMS[1]]
    groups = [[reference, other] for reference, other in zip(references, systems[SYSTEMS[2]], strict=True)]
    theirs = oracle_scores(hypotheses, groups, num_layers=3, idf=True, rescale=True)
    ours = as_tensor(load_metric("bertscore").compute(predictions=hypotheses, references=groups, idf=True,
                                                      rescale_with_baseline=True))
    flat = [reference for group in groups for reference in group]
    raw, rechecked, final = parity(ours, theirs, hypotheses, groups, tolerance(True), num_layers=3, idf=True,
                                   rescale=True, idf_sents=flat)
    print(f"\n{SYSTEMS[1]} vs 2 references, layer 3, idf, rescaled: 3004 pairs, max abs diff {raw:.3g}; "
          f"{rechecked} pairs re-checked unpadded, then {final:.3g}")
    assert final <= tolerance(True)
