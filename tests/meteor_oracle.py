"""The METEOR oracle for tests: NLTK 3.10's ``meteor_score`` with an NLTK WordNet built from Debian's files.

NLTK's WordNet reader needs a corpus folder ``corpora/wordnet`` on ``nltk.data.path`` holding the
database files plus ``lexnames`` and ``index.sense`` (NLTK's downloader installs it; Debian's
``wordnet-base`` and ``wordnet-sense-index`` packages ship everything but ``lexnames``). The
fixture copies Debian's files into a pytest temporary folder, writes ``lexnames`` (WordNet 3.0's
fixed list of lexicographer files) and builds the reader with ``nltk.data.path`` pointing there
only while it is built (NLTK 3.10's reader reads ``index.sense`` through ``nltk.data.path`` in
its constructor, and opens files only under ``nltk.data.path``: the four data files are opened
then and kept open by the reader). Tests pass the reader to ``meteor_score(..., wordnet=reader)`` explicitly, so
nothing global (``nltk.corpus.wordnet``, the user's ``nltk_data``) is touched.
"""

from __future__ import annotations

import math
import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest

DEBIAN_WORDNET = Path("/usr/share/wordnet")
DATABASE_FILES = (
    "index.noun",
    "index.verb",
    "index.adj",
    "index.adv",
    "data.noun",
    "data.verb",
    "data.adj",
    "data.adv",
    "noun.exc",
    "verb.exc",
    "adj.exc",
    "adv.exc",
)
SENSE_INDEX = "index.sense"
OPTIONAL_FILES = ("cntlist.rev",)

# WordNet 3.0's lexicographer files, numbered from 00 (``man 5 lexnames``), with their syntactic category.
LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body "
    "noun.cognition noun.communication noun.event noun.feeling noun.food noun.group noun.location "
    "noun.motive noun.object noun.person noun.phenomenon noun.plant noun.possession noun.process "
    "noun.quantity noun.relation noun.shape noun.state noun.substance noun.time verb.body verb.change "
    "verb.cognition verb.communication verb.competition verb.consumption verb.contact verb.creation "
    "verb.emotion verb.motion verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl"
).split()
_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}

# Weights outside NLTK's ranges (alpha and gamma in [0, 1], beta >= 0), non-numbers and NaN: (option, value, error).
BAD_WEIGHTS = [
    ("alpha", -0.01, ValueError), ("alpha", 1.01, ValueError), ("alpha", -0.1, ValueError), ("alpha", 1.5, ValueError),
    ("alpha", math.nan, ValueError), ("alpha", "0.9", TypeError), ("alpha", True, TypeError),
    ("beta", -1, ValueError), ("beta", math.inf, ValueError), ("beta", None, TypeError), ("beta", True, TypeError),
    ("gamma", -0.01, ValueError), ("gamma", -0.5, ValueError), ("gamma", 1.5, ValueError), ("gamma", 2, ValueError),
    ("gamma", math.nan, ValueError), ("gamma", None, TypeError),
]

SKIP_REASON = (
    "Debian's WordNet files are not installed (/usr/share/wordnet with index.sense): "
    "apt-get install wordnet-base wordnet-sense-index"
)


def debian_wordnet_available() -> bool:
    return all((DEBIAN_WORDNET / name).is_file() for name in (*DATABASE_FILES, SENSE_INDEX))


def lexnames_text() -> str:
    """The ``lexnames`` file: number, name and syntactic category of each lexicographer file."""
    return "".join(
        f"{number:02d}\t{name}\t{_CATEGORY[name.split('.')[0]]}\n" for number, name in enumerate(LEXNAMES)
    )


def build_nltk_corpus(data_root: Path) -> Path:
    """An NLTK data folder (``<data_root>/corpora/wordnet``) made from Debian's files; returns the corpus folder."""
    corpus = data_root / "corpora" / "wordnet"
    corpus.mkdir(parents=True, exist_ok=True)
    for name in (*DATABASE_FILES, SENSE_INDEX):
        shutil.copyfile(DEBIAN_WORDNET / name, corpus / name)
    for name in OPTIONAL_FILES:
        if (DEBIAN_WORDNET / name).is_file():
            shutil.copyfile(DEBIAN_WORDNET / name, corpus / name)
    (corpus / "lexnames").write_text(lexnames_text(), encoding="utf-8")
    return corpus


def nltk_wordnet_reader(data_root: Path) -> Any:
    """NLTK's own ``WordNetCorpusReader`` over the corpus built in ``data_root``."""
    import nltk.data
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    corpus = build_nltk_corpus(data_root)
    saved = list(nltk.data.path)
    nltk.data.path[:] = [str(data_root)]
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "The multilingual functions are not available")
            reader = WordNetCorpusReader(str(corpus), None)
        # NLTK 3.10 opens corpus files only under nltk.data.path: open the four data files now (the reader
        # keeps them open), so synset look-ups work after the path is restored.
        for pos in ("n", "v", "a", "r"):
            reader._data_file(pos)
        return reader
    finally:
        nltk.data.path[:] = saved


def shared_nltk_wordnet(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """NLTK's WordNet reader over Debian's WordNet 3.0 files (skips where absent); conftest's session fixture
    ``nltk_wordnet`` builds it once per test process."""
    if not debian_wordnet_available():
        pytest.skip(SKIP_REASON)
    return nltk_wordnet_reader(tmp_path_factory.mktemp("nltk_data"))


def oracle_tokens(text: str) -> list[str]:
    """``nltk.word_tokenize(text, preserve_line=True)``: NLTK's word tokenizer without the Punkt split."""
    import nltk

    return nltk.word_tokenize(text, preserve_line=True)


def oracle_meteor(
    references: list[list[str]],
    hypothesis: list[str],
    wordnet: Any,
    alpha: float = 0.9,
    beta: float = 3,
    gamma: float = 0.5,
) -> float:
    """NLTK's ``meteor_score`` on token lists with the given WordNet reader."""
    from nltk.translate.meteor_score import meteor_score

    return meteor_score(references, hypothesis, wordnet=wordnet, alpha=alpha, beta=beta, gamma=gamma)


def oracle_scores(predictions: list[str], references: list[list[str]], wordnet: Any, **weights: float) -> list[float]:
    """NLTK's meteor_score per example (best over the references), on NLTK's word tokens of each text."""
    return [
        oracle_meteor([oracle_tokens(reference) for reference in group], oracle_tokens(prediction), wordnet, **weights)
        for prediction, group in zip(predictions, references, strict=True)
    ]


needs_wordnet = pytest.mark.skipif(not debian_wordnet_available(), reason=SKIP_REASON)


class NoSynonyms:
    """A WordNet stand-in with no synsets: NLTK's METEOR then aligns by exact words and stems only."""

    @staticmethod
    def synsets(word: str) -> list[Any]:
        return []
