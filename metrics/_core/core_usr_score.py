"""USR's sub-metric scores, batched: every masked variant of every distinct text in one length-sorted stream.

MLM (official ``run_lm_finetuning.py``: ``TextDataset`` lines 86-88, ``mask_tokens_understandable`` lines
167-175, ``evaluate`` lines 346-356): a text's token ids get RoBERTa's ``<s>``/``</s>``, only the last
:data:`~core_usr.MLM_WINDOW` ids are kept, and every position but the first and the last is masked in turn (one
copy of the text per position); the score is minus the masked-LM cross-entropy averaged over those positions,
i.e. the mean log-probability of each token with it alone masked. The official loop runs one text at a time (all its
masked copies in one batch) and computes the vocabulary's logits at every position of every copy; here the copies
of all distinct texts are cut into batches bounded in tokens, texts of similar length together, and the
vocabulary's logits are computed only at the masked position of each copy (the other positions' logits do not enter
the score). The scores are the same up to floating-point summation order.

DR (official ``train_understandable.py``: ``load_pred_examples`` lines 331-373 with transformers 2.x's
``glue_convert_examples_to_features``, ``predict`` lines 234-258): the pair is encoded ``<s> a </s></s> b </s>``,
truncated to :data:`~core_usr.DR_MAX_LENGTH` ids by removing the last token of the longer text one at a time (the
second on ties: transformers 2.x's ``longest_first``), and the score is the softmax probability of class 1 (the
true response). Distinct pairs are scored once, in length-sorted batches (the official code pads every pair to
128 ids and scores one pair at a time).

The encoder runs on packed sequences (:func:`encode_picked`): the sequences of a batch are laid end to end with no
padding, every linear layer multiplies all their tokens at once, attention runs per run of equal-length sequences
(no mask needed), and the last layer is computed only where the score reads it (the masked position of each MLM
copy, the ``<s>`` of each DR pair; the other positions' last-layer outputs enter no score): each layer is
``core_encoder_rows.encoder_layer``, whose blocks run as ``core_onednn`` fused them (on the CPU in fp32 the
feed-forward activation and the residual additions inside oneDNN's matrix multiplies). Position ids are
RoBERTa's ``2..n+1``, as transformers 2.x computed them for unpadded sequences (not from the ids, where a ``<pad>``
inside a text would shift them). On an accelerator's out-of-memory error a batch is split in halves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from .core_devices import run_halving
from .core_encoder_rows import encoder_layer, length_runs
from .core_usr import DR_MAX_LENGTH, MLM_WINDOW, usr_regression, usr_texts
from .core_usr_models import LoadedUsrModel

Progress = Callable[[int], None] | None


def mlm_ids(loaded: LoadedUsrModel, text: str) -> list[int]:
    """The ids the official MLM scores: ``<s> text </s>``, its last MLM_WINDOW ids."""
    tokenizer = loaded.tokenizer
    return [tokenizer.cls_id, *tokenizer.ids(text), tokenizer.sep_id][-MLM_WINDOW:]


def dr_ids(loaded: LoadedUsrModel, first: str, second: str) -> list[int]:
    """The ids the official DR scores: ``<s> a </s></s> b </s>``, truncated longest-first to DR_MAX_LENGTH."""
    tokenizer = loaded.tokenizer
    a, b = tokenizer.ids(first), tokenizer.ids(second)
    excess = len(a) + len(b) + 4 - DR_MAX_LENGTH
    if excess > 0:  # transformers 2.x truncate_sequences('longest_first'): the longer loses its last id; ties: b
        for _ in range(excess):
            if len(a) > len(b):
                a.pop()
            else:
                b.pop()
    return [tokenizer.cls_id, *a, tokenizer.sep_id, tokenizer.sep_id, *b, tokenizer.sep_id]


# oneDNN builds a kernel for each new shape (milliseconds each, and it keeps only the last 1,024): the packed tokens
# are padded to a multiple of PACKED_ROWS (by one more sequence of <pad> ids, attended to by nothing else) and the
# last layer's rows to a multiple of PICKED_ROWS, so that a run sees a few dozen shapes, not one per batch
PACKED_ROWS = 64
PICKED_ROWS = 16


def encode_picked(model: torch.nn.Module, ids: torch.Tensor, lengths: Sequence[int], picks: Sequence[int],
                  head: Callable[[torch.Tensor], torch.Tensor], pad_id: int) -> torch.Tensor:
    """``head`` of the last hidden state of RoBERTa (``model.roberta``) at position ``picks[s]`` of each sequence
    ``s``, the sequences' ids packed end to end in ``ids`` (``lengths`` tokens each, equal lengths next to each
    other for speed), each read alone: no padding between them and no attention across sequences."""
    roberta = model.roberta
    device = roberta.embeddings.word_embeddings.weight.device
    embeddings = roberta.embeddings
    runs = length_runs(lengths)
    extra = -sum(lengths) % PACKED_ROWS
    every = runs + [(1, extra)] if extra else runs
    if extra:
        ids = torch.cat([ids, torch.full((extra,), pad_id, dtype=ids.dtype, device=ids.device)])
    positions = torch.cat([torch.arange(2, length + 2).repeat(count) for count, length in every]).to(device)
    hidden = embeddings.word_embeddings(ids) + embeddings.token_type_embeddings.weight[0]
    hidden = embeddings.LayerNorm(hidden + embeddings.position_embeddings(positions))
    layers = roberta.encoder.layer
    for layer in layers[:-1]:
        hidden = encoder_layer(layer, hidden, every)
    starts = torch.tensor([0, *lengths[:-1]]).cumsum(0)
    picked = (starts + torch.tensor(list(picks))).tolist()
    picked += picked[-1:] * (-len(picked) % PICKED_ROWS)
    hidden = encoder_layer(layers[-1], hidden, runs, torch.tensor(picked, device=device))
    return head(hidden)[:len(lengths)]


def _batches(lengths: Sequence[int], batch_tokens: int) -> list[list[int]]:
    """Consecutive items cut into batches of at most ``batch_tokens`` tokens (a single item always fits)."""
    batches: list[list[int]] = []
    current: list[int] = []
    tokens = 0
    for index, length in enumerate(lengths):
        if current and tokens + length > batch_tokens:
            batches.append(current)
            current, tokens = [], 0
        current.append(index)
        tokens += length
    if current:
        batches.append(current)
    return batches


def mlm_scores(loaded: LoadedUsrModel, texts: Sequence[str], *, batch_tokens: int,
               progress: Progress = None) -> list[float]:
    """The MLM score of each text (computed once per distinct text)."""
    distinct = list(dict.fromkeys(texts))
    ids = [mlm_ids(loaded, text) for text in distinct]
    totals = _masked_log_likelihoods(loaded, ids, batch_tokens, progress)
    value = {text: totals[index] / max(len(ids[index]) - 2, 1) for index, text in enumerate(distinct)}
    for index, sequence in enumerate(ids):
        if len(sequence) <= 2:
            value[distinct[index]] = float("nan")  # the official mean over no masked token
    return [value[text] for text in texts]


def mlm_rows(ids: Sequence[Sequence[int]]) -> list[tuple[int, int]]:
    """Every (text, masked position) MLM scores: texts longest first, positions 1 to n - 2."""
    order = sorted(range(len(ids)), key=lambda index: (-len(ids[index]), index))
    return [(index, position) for index in order for position in range(1, len(ids[index]) - 1)]


def _masked_log_likelihoods(loaded: LoadedUsrModel, ids: Sequence[Sequence[int]], batch_tokens: int,
                            progress: Progress) -> list[float]:
    """Per text: the sum over its masked positions of log p(token | the text with that token masked)."""
    model, device, mask_id = loaded.model, loaded.device, loaded.tokenizer.mask_id
    totals = [0.0] * len(ids)
    tensors = [torch.tensor(sequence, dtype=torch.long) for sequence in ids]

    def run(rows: Sequence[tuple[int, int]]) -> list[float]:
        copies = []
        for index, position in rows:
            copy = tensors[index].clone()
            copy[position] = mask_id
            copies.append(copy)
        labels = torch.tensor([ids[index][position] for index, position in rows], device=device)
        with torch.inference_mode():
            logits = encode_picked(model, torch.cat(copies).to(device), [len(ids[index]) for index, _ in rows],
                                   [position for _, position in rows], model.lm_head, loaded.tokenizer.pad_id).float()
            values = torch.log_softmax(logits, dim=-1).gather(1, labels.unsqueeze(1)).squeeze(1)
        return values.tolist()

    rows = mlm_rows(ids)
    for batch in _batches([len(ids[index]) for index, _ in rows], batch_tokens):
        chosen = [rows[item] for item in batch]
        for (index, _), value in zip(chosen, run_halving(run, chosen, device), strict=True):
            totals[index] += value
        if progress is not None:
            progress(len(chosen))
    return totals


def dr_scores(loaded: LoadedUsrModel, pairs: Sequence[tuple[str, str]], *, batch_tokens: int,
              progress: Progress = None) -> list[float]:
    """P(true response) of each (x, response) pair (computed once per distinct pair)."""
    distinct = list(dict.fromkeys(pairs))
    ids = [dr_ids(loaded, first, second) for first, second in distinct]
    model, device = loaded.model, loaded.device
    probabilities = [0.0] * len(ids)

    def classify(hidden: torch.Tensor) -> torch.Tensor:  # the head reads the <s> of [sequences, length, width]
        return model.classifier(hidden.unsqueeze(1))

    def run(batch: Sequence[int]) -> list[float]:
        packed = torch.tensor([token for index in batch for token in ids[index]], dtype=torch.long, device=device)
        with torch.inference_mode():
            logits = encode_picked(model, packed, [len(ids[index]) for index in batch], [0] * len(batch), classify,
                                   loaded.tokenizer.pad_id).float()
            return torch.softmax(logits, dim=-1)[:, 1].tolist()

    order = sorted(range(len(ids)), key=lambda index: (-len(ids[index]), index))
    for batch in _batches([len(ids[index]) for index in order], batch_tokens):
        chosen = [order[item] for item in batch]
        for index, value in zip(chosen, run_halving(run, chosen, device), strict=True):
            probabilities[index] = value
        if progress is not None:
            progress(len(chosen))
    value_of = dict(zip(distinct, probabilities, strict=True))
    return [value_of[pair] for pair in pairs]


def usr_example_scores(models: Sequence[LoadedUsrModel], contexts: Sequence[str], facts: Sequence[str],
                       responses: Sequence[str], *, lowercase: bool, tsv_quoting: bool, batch_tokens: int,
                       progress: Progress = None) -> list[tuple[float, float, float, float]]:
    """(usr, mlm, dr_context, dr_fact) of each example, from the (MLM, DR x = c, DR x = f) models."""
    mlm_model, context_model, fact_model = models
    texts = [usr_texts(context, fact, response, lowercase=lowercase, tsv_quoting=tsv_quoting)
             for context, fact, response in zip(contexts, facts, responses, strict=True)]
    mlm = mlm_scores(mlm_model, [text.mlm for text in texts], batch_tokens=batch_tokens, progress=progress)
    context = dr_scores(context_model, [text.dr_context for text in texts], batch_tokens=batch_tokens,
                        progress=progress)
    fact = dr_scores(fact_model, [text.dr_fact for text in texts], batch_tokens=batch_tokens, progress=progress)
    return [(usr_regression(m, c, f), m, c, f) for m, c, f in zip(mlm, context, fact, strict=True)]
