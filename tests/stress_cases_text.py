"""Stress cases of the text metrics (see resource_stress.py): one text's characters for each module (refused
above ``max_text_chars``), the largest text under it (finishes), and each quadratic dimension (ROUGE-L cells,
ROUGE-S skip-bigrams, rouge155's LCS and skip-bigrams, TER's pair cells, CEAF's alignment) and METEOR's worst
case (one repeated word: its alignment is linear)."""

from __future__ import annotations

from resource_stress import RANDOM_TEXT, StressCase

# A prediction and one reference of about n characters each.
ONE_TEXT = RANDOM_TEXT + """
inputs = {"predictions": [text(n)], "references": [[text(n)]]}
"""
ONE_TEXT_SARI = RANDOM_TEXT + """
inputs = {"sources": [text(n)], "predictions": [text(n)], "references": [[text(n)]]}
"""
ONE_TEXT_EXACT_MATCH = RANDOM_TEXT + """
inputs = {"predictions": [text(n)], "references": [text(n)]}
"""
ONE_TEXT_READABILITY = RANDOM_TEXT + """
inputs = {"predictions": [text(n)]}
"""
# n random CJK characters a side, no spaces (one token per character for chrF and sacreBLEU's zh/char: every
# n-gram distinct, the most counting per character).
CJK = """
def cjk(size):
    return "".join(chr(0x4E00 + random.randrange(20000)) for _ in range(size))
inputs = {"predictions": [cjk(n)], "references": [[cjk(n)]]}
"""
# n characters a side of one-character CJK words separated by spaces (one token per two characters).
CJK_WORDS = """
def cjk(size):
    return " ".join(chr(0x4E00 + random.randrange(20000)) for _ in range(size // 2))
inputs = {"sources": [cjk(n)], "predictions": [cjk(n)], "references": [[cjk(n)]]}
"""
# One word of n letters: no sentence end, no space.
ONE_WORD_READABILITY = """
inputs = {"predictions": ["".join(random.choice(string.ascii_lowercase) for _ in range(n))]}
"""
ONE_TEXT_SQUAD = RANDOM_TEXT + """
inputs = {"predictions": [{"id": "q", "prediction_text": text(n)}],
          "references": [{"id": "q", "answers": {"text": [text(n)], "answer_start": [0]}}]}
"""
ONE_TEXT_SQUAD_V2 = RANDOM_TEXT + """
inputs = {"predictions": [{"id": "q", "prediction_text": text(n), "no_answer_probability": 0.0}],
          "references": [{"id": "q", "answers": {"text": [text(n)], "answer_start": [0]}}]}
"""
# One CoNLL line of n characters (its word), one mention.
ONE_TEXT_COVAL = """
inputs = {"predictions": [["#begin document (d);", "x" * n + "\\t(0)", "#end document"]],
          "references": [["#begin document (d);", "x\\t(0)", "#end document"]]}
"""
# A key of n/2 entities of two mentions and a response that chains them all into one component.
CEAF_CHAIN = """
mentions = [[index, index] for index in range(n)]
key = [mentions[2 * index:2 * index + 2] for index in range(n // 2)]
chain = [mentions[2 * index + 1:2 * index + 3] for index in range(n // 2 - 1)]
inputs = {"predictions": [chain], "references": [key]}
"""
# One word repeated: n tokens a side (METEOR's, NLTK's worst case; ours aligns in one pass).
REPEATED = """
inputs = {"predictions": [" ".join(["the"] * n)], "references": [[" ".join(["the"] * n)]]}
"""
# n tokens a side of a four-word vocabulary: TER's shift search finds many candidates.
FEW_WORDS = """
inputs = {"predictions": [" ".join(random.choice("abcd") for _ in range(n))],
          "references": [[" ".join(random.choice("abcd") for _ in range(n))]]}
"""
# n tokens a side, in one sentence, of random words.
TOKENS = RANDOM_TEXT + """
inputs = {"predictions": [" ".join(random.choice(words) for _ in range(n))],
          "references": [[" ".join(random.choice(words) for _ in range(n))]]}
"""

_TEXT = {"option": "max_text_chars", "small": 2_000, "small_bound": 1_000}
_TOO_LONG = 20_000_000

STRESS_CASES = [
    StressCase("bleu", "characters of one text", ONE_TEXT, full=_TOO_LONG, expect="refuse", **_TEXT),
    StressCase("bleu", "largest text", ONE_TEXT, full=2_000_000, small=2_000, expect="finish", seconds=60),
    StressCase("sacrebleu", "characters of one text", ONE_TEXT, full=_TOO_LONG, expect="refuse", **_TEXT),
    StressCase("sacrebleu", "largest text, a token per character", CJK, full=2_000_000, small=2_000, expect="finish",
               options={"tokenize": "zh"}, seconds=60),
    StressCase("chrf", "characters of one text", ONE_TEXT, full=_TOO_LONG, expect="refuse", **_TEXT),
    StressCase("chrf", "largest text, all n-grams distinct", CJK, full=10_000_000, small=2_000, expect="finish",
               seconds=120),
    StressCase("ter", "characters of one text", ONE_TEXT, full=_TOO_LONG, expect="refuse", **_TEXT),
    StressCase("ter", "pair cells", TOKENS, full=3_000, small=300, expect="refuse", option="max_pair_cells",
               small_bound=10_000),
    StressCase("ter", "pair cells at the bound", FEW_WORDS, full=2_048, small=100, expect="finish", seconds=120),
    StressCase("meteor", "characters of one text", ONE_TEXT, full=_TOO_LONG, expect="refuse", **_TEXT),
    StressCase("meteor", "one repeated word", REPEATED, full=2_000_000, small=20_000, expect="finish", seconds=120),
    StressCase("rouge", "characters of one text", ONE_TEXT, full=_TOO_LONG, expect="refuse", **_TEXT),
    StressCase("rouge", "rougeL cells", TOKENS, full=1_000_000, small=2_000, expect="refuse",
               option="max_lcs_cells", small_bound=1_000_000, options={"rouge_types": ["rougeL"]}),
    StressCase("rouge", "rougeS skip-bigrams", TOKENS, full=1_000_000, small=2_000, expect="refuse",
               option="max_skip_bigram_work", small_bound=1_000_000, options={"rouge_types": ["rougeS"]}),
    StressCase("rouge155", "characters of one text", ONE_TEXT, full=_TOO_LONG, expect="refuse",
               options={"n_bootstrap": 0}, **_TEXT),
    StressCase("rouge155", "LCS cells", TOKENS, full=1_000_000, small=2_000, expect="refuse", option="max_lcs_cells",
               small_bound=1_000_000, options={"rouge_types": ["rougeL"], "n_bootstrap": 0}),
    StressCase("rouge155", "skip-bigrams", TOKENS, full=1_000_000, small=2_000, expect="refuse",
               option="max_skip_bigrams", small_bound=1_000_000, options={"rouge_types": ["rougeS"], "n_bootstrap": 0}),
    StressCase("sari", "characters of one text", ONE_TEXT_SARI, full=_TOO_LONG, expect="refuse", **_TEXT),
    StressCase("sari", "largest text, one-character words", CJK_WORDS, full=5_000_000, small=2_000, expect="finish",
               seconds=90),
    StressCase("squad", "characters of one text", ONE_TEXT_SQUAD, full=_TOO_LONG, expect="refuse", **_TEXT),
    StressCase("squad_v2", "characters of one text", ONE_TEXT_SQUAD_V2, full=_TOO_LONG, expect="refuse", **_TEXT),
    StressCase("exact_match", "characters of one text", ONE_TEXT_EXACT_MATCH, full=_TOO_LONG, expect="refuse",
               **_TEXT),
    StressCase("readability", "characters of one text", ONE_TEXT_READABILITY, full=_TOO_LONG, expect="refuse",
               **_TEXT),
    StressCase("readability", "one word, no sentence end", ONE_WORD_READABILITY, full=10_000_000, small=2_000,
               expect="finish", seconds=120),
    # coval reads CoNLL lines into mention spans before any bound is checked (linear in the lines' characters):
    # a line of 10^7 characters is read and scored
    StressCase("coval", "characters of one line", ONE_TEXT_COVAL, full=10_000_000, small=2_000, expect="finish",
               seconds=60),
    StressCase("coval", "CEAF work", CEAF_CHAIN, full=200_000, small=4_000, expect="refuse", option="max_ceaf_work",
               small_bound=1_000_000),
]
