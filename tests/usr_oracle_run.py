"""The official USR scoring, run in `.venv-usr` (transformers 2.2.0, whose RoBERTa models, tokenizers, GLUE QQP
processor and feature conversion are those of the official repository's transformers snapshot).

The official scripts (github.com/Shikib/usr at b1e50bb05f11d193cf9fde96e94d189ad84fc57d, `examples/`) are not an
installable package and cannot be fetched by the tests, so their scoring steps are transcribed here, step for step,
on top of transformers 2.2.0's own classes and functions (which do the tokenization, truncation, padding and
models):

* input files, `dstc9_eval.py` lines 13-61: `tokenize` (lowercase, runs of whitespace made single spaces,
  `_go ... _eos`; the spaCy tokenization before it is left out: the tests' texts are already tokenized, and the
  marker removal `replace("_go", "").replace("_eos", "")` too, which this module does not do), the history's last
  turn `e.strip().split("_eos ")[-1]`, `prep_mlm` (the MLM file), `prep_both` and `prep_uk` (the DR `dev.tsv` files,
  written with Python's csv writer, a duplicate first row that the reader skips);
* MLM, `run_lm_finetuning.py`: `TextDataset` (lines 78-88, the inference branch: one example per line,
  `tokenize`, `convert_tokens_to_ids`, `build_inputs_with_special_tokens`), `mask_tokens_understandable` (lines
  167-175; `.cuda()` dropped), `evaluate` (lines 332-357: batch size 1, `batch[:, -100:]`,
  `model(inputs, masked_lm_labels=labels)`, score `-lm_loss.mean().item()`);
* DR, `train_understandable.py`: `load_pred_examples` (lines 331-373: the QQP processor's dev examples,
  `glue_convert_examples_to_features` with max_length 128, the pad token's id, label list ["0", "1"]) and
  `predict` (lines 209-265: batch size 1, `token_type_ids` None for RoBERTa, softmax of the logits' class 1);
* USR, `regression.py` lines 8-28: the normalisation constants and `regr.pkl`'s coefficients and intercept
  (scikit-learn 0.21.3 `LinearRegression.predict`: X @ coef_ + intercept_).

Payload (JSON on standard input): {"models": folder with roberta_ft/, ctx/ and uk/, "examples": [[context, fact,
response], ...], "lowercase": bool}. Prints {"mlm": [...], "dr_context": [...], "dr_fact": [...], "usr": [...],
"mlm_ids": [[...], ...] (the ids of each MLM example, before the 100-id cut)}.
"""

from __future__ import annotations

import csv
import json
import logging
import os
import sys
import tempfile

import numpy as np
import torch
from torch.utils.data import DataLoader, SequentialSampler, TensorDataset

logging.disable(logging.WARNING)

from transformers import RobertaForMaskedLM, RobertaForSequenceClassification, RobertaTokenizer  # noqa: E402
from transformers import glue_convert_examples_to_features, glue_processors  # noqa: E402

NORMALISATION = [(-1.012293440649907, 0.39053753419230813), (-1.012293440649907, 0.39053753419230813),
                 (0.8604811806918587, 0.30259338627812254), (0.8604811806918587, 0.30259338627812254),
                 (0.8472124995904354, 0.27987823011851076)]
COEFFICIENTS = np.array([0.6601100065238369, 0.4035348605308456, 0.5132785702080678, 0.9605336086924106,
                         0.35642553823787765])
INTERCEPT = 3.597475447630256


def official_tokenize(data, lowercase):
    """dstc9_eval.py `tokenize` (lines 13-24) without spaCy and without the marker removal."""
    new_data = []
    for s in data:
        s = s.strip()
        tokenized = " ".join((s.lower() if lowercase else s).split())
        new_data.append("_go " + tokenized + " _eos")
    return new_data


def input_files(examples, lowercase, folder):
    """dstc9_eval.py prep_mlm, prep_both, prep_uk (lines 27-61) from the history, fact and response of each example."""
    outputs = official_tokenize([response for _, _, response in examples], lowercase)
    case = (lambda text: text.lower()) if lowercase else (lambda text: text)
    # the Topical-Chat source file: one history per line, each turn followed by _eos
    source_lines = [" _eos ".join(case(" ".join(turn.split())) for turn in context.splitlines() if turn.strip())
                    + " _eos" for context, _, _ in examples]
    valid_src = [e.strip().split("_eos ")[-1] for e in source_lines]
    valid_fct = [case(" ".join(fact.split())).strip() for _, fact, _ in examples]
    output_lines = [s + " " + r + "\n" for s, r in zip(valid_src, outputs)]
    with open(os.path.join(folder, "undr.lm"), "w") as handle:
        handle.writelines([" ".join(e.split()) + "\n" for e in output_lines])
    for name, contexts in (("both", [s + " " + f + " _eos" for s, f in zip(valid_src, valid_fct)]),
                           ("fct", [f + " _eos" for f in valid_fct])):
        rows = [(0, 1, 2, c, o, 0) for c, o in zip(contexts, outputs)]
        rows = [rows[0]] + rows
        os.makedirs(os.path.join(folder, name), exist_ok=True)
        with open(os.path.join(folder, name, "dev.tsv"), "w") as handle:
            csv.writer(handle, delimiter="\t").writerows(rows)


def text_dataset(tokenizer, file_path):
    """run_lm_finetuning.py TextDataset.__init__, the inference branch (lines 78-88)."""
    examples = []
    with open(file_path, encoding="utf-8") as f:
        text = f.read()
    for line in text.split("\n")[:-1]:
        tokenized_line = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(line))
        examples.append(tokenizer.build_inputs_with_special_tokens(tokenized_line))
    return examples


def mask_tokens_understandable(inputs, tokenizer):
    """run_lm_finetuning.py lines 167-175 (on the CPU)."""
    inputs = inputs.repeat(inputs.size(1) - 2, 1)
    labels = inputs.clone() * 0 - 1
    masked_indices = torch.arange(inputs.size(1))[1:-1]
    for i in range(inputs.size(1) - 2):
        labels[i, masked_indices[i]] = inputs[i, masked_indices[i]]
        inputs[i, masked_indices[i]] = tokenizer.convert_tokens_to_ids(tokenizer.mask_token)
    return inputs, labels


def mlm_scores(model_folder, file_path):
    """run_lm_finetuning.py evaluate (lines 332-357), per_gpu_eval_batch_size=1."""
    tokenizer = RobertaTokenizer.from_pretrained(model_folder)
    model = RobertaForMaskedLM.from_pretrained(model_folder)
    model.eval()
    examples = text_dataset(tokenizer, file_path)
    scores = []
    for example in examples:
        batch = torch.tensor(example).unsqueeze(0)
        inputs, labels = mask_tokens_understandable(batch[:, -100:], tokenizer)
        with torch.no_grad():
            outputs = model(inputs, masked_lm_labels=labels)
            lm_loss = outputs[0]
            scores.append(-lm_loss.mean().item())
    return scores, examples


def dr_scores(model_folder, data_dir):
    """train_understandable.py load_pred_examples (lines 331-373) and predict (lines 209-265)."""
    tokenizer = RobertaTokenizer.from_pretrained(model_folder, do_lower_case=False)
    model = RobertaForSequenceClassification.from_pretrained(model_folder)
    processor = glue_processors["qqp"]()
    label_list = processor.get_labels()
    examples = processor.get_dev_examples(data_dir)
    features = glue_convert_examples_to_features(
        examples, tokenizer, label_list=label_list, max_length=128, output_mode="classification",
        pad_on_left=False, pad_token=tokenizer.convert_tokens_to_ids([tokenizer.pad_token])[0],
        pad_token_segment_id=0)
    dataset = TensorDataset(torch.tensor([f.input_ids for f in features], dtype=torch.long),
                            torch.tensor([f.attention_mask for f in features], dtype=torch.long),
                            torch.tensor([f.token_type_ids for f in features], dtype=torch.long),
                            torch.tensor([f.label for f in features], dtype=torch.long))
    loader = DataLoader(dataset, sampler=SequentialSampler(dataset), batch_size=1)
    preds = None
    for batch in loader:
        model.eval()
        with torch.no_grad():
            inputs = {"input_ids": batch[0], "attention_mask": batch[1], "labels": batch[3], "token_type_ids": None}
            logits = model(**inputs)[1]
        preds = logits.detach().cpu().numpy() if preds is None else np.append(preds, logits.detach().cpu().numpy(),
                                                                               axis=0)
    return torch.softmax(torch.Tensor(preds.tolist()), dim=-1)[:, 1].tolist()


def predict_scores(metrics):
    """regression.py predict_scores (lines 8-22) with regr.pkl's LinearRegression."""
    n_metrics = [(np.array(m) - mean) / std for m, (mean, std) in zip(metrics, NORMALISATION)]
    pred = np.stack(n_metrics, axis=1)
    return (pred @ COEFFICIENTS + INTERCEPT).tolist()


def main() -> None:
    payload = json.loads(sys.stdin.read())
    models, examples, lowercase = payload["models"], payload["examples"], payload.get("lowercase", True)
    torch.set_num_threads(int(payload.get("threads", 1)))
    with tempfile.TemporaryDirectory() as folder:
        input_files(examples, lowercase, folder)
        mlm, ids = mlm_scores(os.path.join(models, "roberta_ft"), os.path.join(folder, "undr.lm"))
        context = dr_scores(os.path.join(models, "ctx"), os.path.join(folder, "both") + "/")
        fact = dr_scores(os.path.join(models, "uk"), os.path.join(folder, "fct") + "/")
    usr = predict_scores([mlm, mlm, context, context, fact])
    print(json.dumps({"mlm": mlm, "dr_context": context, "dr_fact": fact, "usr": usr, "mlm_ids": ids}))


if __name__ == "__main__":
    main()
