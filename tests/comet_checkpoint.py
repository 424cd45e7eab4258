"""A tiny COMET checkpoint in unbabel-comet's layout, written without unbabel-comet, for the tests that run every
metric (properties, bad input, map scoring, the base's entry points): random weights on a 2-layer XLM-R encoder
whose tokenizer is trained on the project's example sentences. Parity with unbabel-comet itself is
tests/test_comet.py's business (its checkpoints are built by unbabel-comet)."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def xlmr_tokenizer(texts: list[str], vocab_size: int) -> object:
    """An XLM-R-style fast tokenizer (unigram pieces, <s> A </s> </s> B </s>) trained on ``texts``; also used by
    tests/comet_oracle_run.py in the oracle environment (transformers 4), so only what both versions take."""
    import transformers
    from tokenizers import SentencePieceUnigramTokenizer
    from tokenizers.processors import TemplateProcessing

    trainer = SentencePieceUnigramTokenizer()
    trainer.train_from_iterator(texts, vocab_size=vocab_size, special_tokens=["<s>", "<pad>", "</s>", "<unk>"],
                                unk_token="<unk>", show_progress=False)
    trainer.add_special_tokens(["<mask>"])
    trainer.post_processor = TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
                                                special_tokens=[("<s>", 0), ("</s>", 2)])
    return transformers.XLMRobertaTokenizerFast(
        tokenizer_object=trainer._tokenizer, bos_token="<s>", eos_token="</s>", sep_token="</s>", cls_token="<s>",
        unk_token="<unk>", pad_token="<pad>", mask_token="<mask>", model_max_length=512)


@functools.lru_cache(maxsize=None)
def tiny_comet_checkpoint() -> str:
    """The folder of a reference-based COMET model (layer mix with layer norm, average pooling), made once."""
    import torch
    import transformers
    import yaml

    folder = Path(tempfile.mkdtemp(prefix="tiny-comet-"))
    texts = [line for path in sorted((ROOT / "scripts" / "examples" / "systems").iterdir())
             for line in path.read_text(encoding="utf-8").splitlines()]
    tokenizer = xlmr_tokenizer(texts, vocab_size=300)
    config = transformers.XLMRobertaConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=2,
                                           num_attention_heads=2, intermediate_size=32, max_position_embeddings=514,
                                           pad_token_id=1, bos_token_id=0, eos_token_id=2, type_vocab_size=1)
    encoder_folder = folder / "encoder"
    tokenizer.save_pretrained(encoder_folder)
    config.save_pretrained(encoder_folder)
    generator = torch.Generator().manual_seed(0)
    encoder = transformers.XLMRobertaModel(config, add_pooling_layer=False)
    state = {f"encoder.model.{key}": value for key, value in encoder.state_dict().items()}
    state |= {f"layerwise_attention.scalar_parameters.{index}": torch.randn(1, generator=generator)
              for index in range(config.num_hidden_layers + 1)}
    state["layerwise_attention.gamma"] = torch.ones(1)
    state |= {"estimator.ff.0.weight": torch.randn(8, 6 * 16, generator=generator) * 0.1,
              "estimator.ff.0.bias": torch.zeros(8),
              "estimator.ff.3.weight": torch.randn(1, 8, generator=generator), "estimator.ff.3.bias": torch.zeros(1)}
    model = folder / "model"
    (model / "checkpoints").mkdir(parents=True)
    torch.save({"state_dict": state}, model / "checkpoints" / "model.ckpt")
    hparams = {"class_identifier": "regression_metric", "encoder_model": "XLM-RoBERTa",
               "pretrained_model": str(encoder_folder), "layer": "mix", "layer_norm": True,
               "layer_transformation": "softmax", "pool": "avg", "hidden_sizes": [8], "activations": "Tanh",
               "final_activation": None}
    (model / "hparams.yaml").write_text(yaml.safe_dump(hparams), encoding="utf-8")
    return str(model)
