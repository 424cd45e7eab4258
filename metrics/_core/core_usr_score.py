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
true response). Distinct pairs are scored once, in length-sorted batches padded to their own longest (the official
code pads every pair to 128).

Position ids are RoBERTa's ``2..n+1`` given explicitly, as transformers 2.x computed them (not from the ids, where a
``<pad>`` inside a text would shift them). On an accelerator's out-of-memory error a batch is split in halves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from .core_devices import run_halving
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


def _positions(length: int, rows: int, device: torch.device) -> torch.Tensor:
    return torch.arange(2, length + 2, device=device).unsqueeze(0).expand(rows, length)


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


def _mlm_rows(ids: Sequence[Sequence[int]], batch_tokens: int) -> list[list[tuple[int, int]]]:
    """Batches of (text, masked position) rows: texts longest first, at most ``batch_tokens`` padded tokens each
    (a single row always fits)."""
    order = sorted(range(len(ids)), key=lambda index: (-len(ids[index]), index))
    batches: list[list[tuple[int, int]]] = []
    current: list[tuple[int, int]] = []
    width = 0
    for index in order:
        for position in range(1, len(ids[index]) - 1):
            width = width or len(ids[index])
            if current and (len(current) + 1) * width > batch_tokens:
                batches.append(current)
                current, width = [], len(ids[index])
            current.append((index, position))
    if current:
        batches.append(current)
    return batches


def _masked_log_likelihoods(loaded: LoadedUsrModel, ids: Sequence[Sequence[int]], batch_tokens: int,
                            progress: Progress) -> list[float]:
    """Per text: the sum over its masked positions of log p(token | the text with that token masked)."""
    model, device, tokenizer = loaded.model, loaded.device, loaded.tokenizer
    totals = [0.0] * len(ids)

    def run(rows: Sequence[tuple[int, int]]) -> list[float]:
        width = max(len(ids[index]) for index, _ in rows)
        batch = torch.full((len(rows), width), tokenizer.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for row, (index, _) in enumerate(rows):
            batch[row, :len(ids[index])] = torch.tensor(ids[index], dtype=torch.long)
            mask[row, :len(ids[index])] = 1
        rows_index = torch.arange(len(rows))
        positions = torch.tensor([position for _, position in rows], dtype=torch.long)
        labels = batch[rows_index, positions].clone()
        batch[rows_index, positions] = tokenizer.mask_id
        with torch.inference_mode():
            hidden = model.roberta(input_ids=batch.to(device), attention_mask=mask.to(device),
                                   position_ids=_positions(width, len(rows), device))[0]
            masked = hidden[rows_index.to(device), positions.to(device)]
            logits = model.lm_head(masked).float()
            values = torch.log_softmax(logits, dim=-1).gather(1, labels.to(device).unsqueeze(1)).squeeze(1)
        return values.tolist()

    for rows in _mlm_rows(ids, batch_tokens):
        for (index, _), value in zip(rows, run_halving(run, rows, device), strict=True):
            totals[index] += value
        if progress is not None:
            progress(len(rows))
    return totals


def dr_scores(loaded: LoadedUsrModel, pairs: Sequence[tuple[str, str]], *, batch_tokens: int,
              progress: Progress = None) -> list[float]:
    """P(true response) of each (x, response) pair (computed once per distinct pair)."""
    distinct = list(dict.fromkeys(pairs))
    ids = [dr_ids(loaded, first, second) for first, second in distinct]
    model, device, pad_id = loaded.model, loaded.device, loaded.tokenizer.pad_id
    probabilities = [0.0] * len(ids)

    def run(batch: Sequence[int]) -> list[float]:
        width = max(len(ids[index]) for index in batch)
        tokens = torch.full((len(batch), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for row, index in enumerate(batch):
            tokens[row, :len(ids[index])] = torch.tensor(ids[index], dtype=torch.long)
            mask[row, :len(ids[index])] = 1
        with torch.inference_mode():
            logits = model(input_ids=tokens.to(device), attention_mask=mask.to(device),
                           position_ids=_positions(width, len(batch), device)).logits.float()
            return torch.softmax(logits, dim=-1)[:, 1].tolist()

    order = sorted(range(len(ids)), key=lambda index: (-len(ids[index]), index))
    start = 0
    while start < len(order):
        width = len(ids[order[start]])
        count = max(1, batch_tokens // width)
        batch = order[start:start + count]
        for index, value in zip(batch, run_halving(run, batch, device), strict=True):
            probabilities[index] = value
        if progress is not None:
            progress(len(batch))
        start += count
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
