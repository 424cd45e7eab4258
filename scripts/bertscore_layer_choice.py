#!/usr/bin/env python3
"""Evidence for the default layer of the packaged model: per-layer correlation of sentence-level BERTScore F1
with sentence-level chrF on WMT17 en-de systems.

For each system (the first --systems in name order, or --names), the first --segments segments are scored
with BERTScore F1 at every layer of the packaged all-MiniLM-L6-v2 (no idf, no rescaling) and with sacreBLEU's
sentence chrF against the reference. Prints Pearson and Spearman correlations per layer and system, their
means, and the layer with the highest mean Pearson correlation.

    python scripts/bertscore_layer_choice.py [--systems 4] [--segments 1000] [--threads 2]
"""

from __future__ import annotations

import argparse

import numpy as np

from bertscore_common import packaged_model, wmt17


def ranks(values: np.ndarray) -> np.ndarray:
    """Average ranks (ties share their mean rank)."""
    order = values.argsort(kind="mergesort")
    ranked = np.empty(len(values))
    ranked[order] = np.arange(len(values))
    for value in np.unique(values):
        where = values == value
        if where.sum() > 1:
            ranked[where] = ranked[where].mean()
    return ranked


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.corrcoef(x, y)[0, 1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--systems", type=int, default=4)
    parser.add_argument("--names", nargs="*", default=None)
    parser.add_argument("--segments", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    import sacrebleu
    import torch

    from metrics._core.core_bertscore import uniform_weights
    from metrics._core.core_bertscore_run import score_corpus

    torch.set_num_threads(args.threads)
    references, systems = wmt17()
    names = args.names or sorted(systems)[: args.systems]
    references = references[: args.segments]
    loaded = packaged_model()
    tokenizer = loaded.tokenizer
    weights = uniform_weights((tokenizer.sep_token_id, tokenizer.cls_token_id))
    layers = loaded.num_hidden_layers + 1
    table = {}
    for name in names:
        hypotheses = systems[name][: args.segments]
        chrf = np.array([sacrebleu.sentence_chrf(h, [r]).score for h, r in zip(hypotheses, references, strict=True)])
        scores = score_corpus(loaded, hypotheses, [[r] for r in references], num_layers=layers - 1,
                              weights=weights, all_layers=True, batch_size=64)
        f1 = scores[..., 2].double().numpy()  # [layers, segments]
        table[name] = [(pearson(f1[layer], chrf), pearson(ranks(f1[layer]), ranks(chrf))) for layer in range(layers)]
    print(f"sentence-level correlation of BERTScore F1 (per layer) with chrF; {len(references)} segments per system")
    print("layer  " + "  ".join(f"{name[:18]:>18}" for name in names) + "   mean Pearson  mean Spearman")
    means = []
    for layer in range(layers):
        cells = "  ".join(f"{table[name][layer][0]:8.4f}/{table[name][layer][1]:.4f}" for name in names)
        mean_p = float(np.mean([table[name][layer][0] for name in names]))
        mean_s = float(np.mean([table[name][layer][1] for name in names]))
        means.append(mean_p)
        print(f"{layer:5d}  {cells}   {mean_p:12.4f}  {mean_s:13.4f}")
    print(f"best layer by mean Pearson: {int(np.argmax(means))}")


if __name__ == "__main__":
    main()
