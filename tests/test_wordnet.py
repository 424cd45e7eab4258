"""Our WordNet reader against NLTK 3.10's own ``WordNetCorpusReader`` over the same WordNet 3.0 files.

For every word checked, the set METEOR uses (lemma names without ``_`` over ``synsets(word)``), the
synsets' offsets in NLTK's order and ``morphy``'s base forms per part of speech must be identical.
The default run checks a spread sample of the index, the exception lists, the vocabulary (words and
their Porter stems) of 200 CNN/DailyMail examples and hand-picked awkward words; the slow run checks
every index entry, every inflected form of the exception lists and the vocabulary of 2,000 examples.
"""

from __future__ import annotations

import gzip
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from meteor_oracle import DEBIAN_WORDNET, SKIP_REASON, debian_wordnet_available, lexnames_text
from metrics._core import core_wordnet
from metrics._core.core_meteor import porter_stem
from metrics._core.core_meteor_tokenize import nltk_word_tokens
from metrics._core.core_wordnet import (
    PARTS_OF_SPEECH,
    WORDNET_FILES,
    WordNet,
    WordNetLocation,
    WordNetNotFoundError,
    find_wordnet,
    load_wordnet,
)

pytestmark = pytest.mark.skipif(not debian_wordnet_available(), reason=SKIP_REASON)

AWKWARD_WORDS = [
    "", "a", "I", "Dogs", "DOGS", "geese", "ran", "better", "best", "worse", "oxen", "men", "women", "mice",
    "axes", "bases", "wolves", "churches", "boxes", "running", "ate", "eaten", "hardest", "happier",
    "galore", "elect", "proof", "big", "ice cream", "ice_cream", "u.s.", "us", "u.s", "e.g.", "st.",
    "don't", "n't", "'s", "well-known", "hand-held", "car", "automobile", "happi", "gener", "connect",
    "café", "naïve", "\u0130stanbul", "straße", "1", "42", "3.14", "the", "be", "is", "was", "are",
    "have", "has", "do", "does", "go", "goes", "went", "gone", "take", "took", "make", "get", "got",
    "abaci", "aardwolves", "ataxies", "busses", "actresses", "bluer", "ashes", "fishes", "teeth",
]  # fmt: skip


def nltk_synonyms(reader, word: str) -> set[str]:
    """What NLTK's METEOR takes from WordNet for ``word`` (before adding the word itself)."""
    return {lemma.name() for synset in reader.synsets(word) for lemma in synset.lemmas() if "_" not in lemma.name()}


def differences(ours: WordNet, reader, words) -> list[str]:
    problems = []
    for word in words:
        if ours.synonym_names(word) != nltk_synonyms(reader, word):
            problems.append(f"{word!r}: synonyms {sorted(ours.synonym_names(word) ^ nltk_synonyms(reader, word))}")
        if [offset for _, offset in ours.synsets(word)] != [synset.offset() for synset in reader.synsets(word)]:
            problems.append(f"{word!r}: synset offsets differ")
        lowered = word.lower()
        for pos in PARTS_OF_SPEECH:
            if ours.morphy(lowered, pos) != reader._morphy(lowered, pos):
                ours_forms, their_forms = ours.morphy(lowered, pos), reader._morphy(lowered, pos)
                problems.append(f"{word!r}: morphy({pos}) {ours_forms} vs {their_forms}")
    return problems


@pytest.fixture(scope="module")
def ours() -> WordNet:
    return load_wordnet(DEBIAN_WORDNET)


def cnndm_vocabulary(shared_data: Path, limit: int) -> list[str]:
    """Lowercased words of the first ``limit`` CNN/DailyMail examples (all systems) and their Porter stems."""
    path = shared_data / "cnndm-see2017" / "test.jsonl.gz"
    if not path.is_file():
        pytest.skip(f"CNN/DailyMail summaries not found at {path}")
    words: dict[str, None] = {}
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            if number >= limit:
                break
            record = json.loads(line)
            for field in ("reference", "baseline", "pointer-gen", "pointer-gen-cov"):
                for token in nltk_word_tokens(record[field]):
                    words[token.lower()] = None
    for word in list(words):
        words[porter_stem(word)] = None
    return list(words)


def test_awkward_words(ours, nltk_wordnet) -> None:
    assert differences(ours, nltk_wordnet, AWKWARD_WORDS) == []


def test_index_and_exception_sample(ours, nltk_wordnet) -> None:
    """Every 60th index entry (about 2,500) and every 6th exception-list form (about 1,000)."""
    lemmas = list(ours.index_lemmas())
    forms = list(ours.exception_forms())
    assert len(lemmas) == 147306 and len(forms) == 5940
    sample = lemmas[::60] + forms[::6]
    assert differences(ours, nltk_wordnet, sample) == []


def test_cnndm_vocabulary_sample(ours, nltk_wordnet, shared_data) -> None:
    """The words and stems of 200 CNN/DailyMail examples: what METEOR looks up on real text."""
    vocabulary = cnndm_vocabulary(shared_data, 200)
    assert len(vocabulary) > 5000
    assert differences(ours, nltk_wordnet, vocabulary) == []


@pytest.mark.slow
def test_every_index_entry_and_exception_form(ours, nltk_wordnet) -> None:
    words = list(dict.fromkeys([*ours.index_lemmas(), *ours.exception_forms()]))
    assert len(words) > 150000
    problems = differences(ours, nltk_wordnet, words)
    assert problems == [], f"{len(problems)} of {len(words)} words differ: {problems[:10]}"


@pytest.mark.slow
def test_cnndm_vocabulary_2000(ours, nltk_wordnet, shared_data) -> None:
    vocabulary = cnndm_vocabulary(shared_data, 2000)
    problems = differences(ours, nltk_wordnet, vocabulary)
    assert problems == [], f"{len(problems)} of {len(vocabulary)} words differ: {problems[:10]}"


def test_lemma_names_strip_syntactic_markers(ours) -> None:
    """data.adj writes some adjectives with a marker, e.g. ``galore(ip)``; NLTK's lemma name drops it."""
    names = set().union(*(ours.lemma_names(pos, offset) for pos, offset in ours.synsets("galore")))
    assert "galore" in names and not any("(" in name for name in names)


def test_satellite_adjectives_are_found_through_the_adjective_index(ours, nltk_wordnet) -> None:
    satellites = [synset for synset in nltk_wordnet.synsets("big") if synset.pos() == "s"]
    assert satellites, "'big' has satellite senses in WordNet 3.0"
    assert {offset for pos, offset in ours.synsets("big") if pos == "a"} >= {synset.offset() for synset in satellites}


def test_version_and_location(ours) -> None:
    assert ours.version == "3.0"
    assert ours.location.path == str(DEBIAN_WORDNET)


# Finding WordNet: NLTK's data folders first, then Debian's; a clear error when there is none.


@pytest.fixture()
def no_nltk_data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    import nltk.data

    empty = tmp_path / "empty_nltk_data"
    empty.mkdir()
    monkeypatch.setattr(nltk.data, "path", [str(empty)])
    return empty


def test_debian_files_are_found_without_nltk_data(no_nltk_data) -> None:
    location = find_wordnet()
    assert location is not None and location.origin == "debian" and location.path == str(DEBIAN_WORDNET)


def test_missing_wordnet_error_says_how_to_install(no_nltk_data, monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(core_wordnet, "DEBIAN_WORDNET", tmp_path / "no-such-folder")
    assert find_wordnet() is None
    with pytest.raises(WordNetNotFoundError) as caught:
        load_wordnet()
    message = str(caught.value)
    assert "nltk.downloader wordnet" in message and "nltk.download('wordnet')" in message
    assert "apt-get install wordnet-base" in message
    assert "synonyms=False" in message and str(no_nltk_data) in message


def nltk_style_folder(root: Path) -> Path:
    corpus = root / "corpora" / "wordnet"
    corpus.mkdir(parents=True)
    for name in WORDNET_FILES:
        shutil.copyfile(DEBIAN_WORDNET / name, corpus / name)
    (corpus / "lexnames").write_text(lexnames_text())
    return corpus


def test_nltk_data_folder_comes_first(monkeypatch, tmp_path, ours) -> None:
    import nltk.data

    corpus = nltk_style_folder(tmp_path / "nltk_data")
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path / "elsewhere"), str(tmp_path / "nltk_data")])
    location = find_wordnet()
    assert location == WordNetLocation(str(corpus), "nltk")
    found = load_wordnet()
    assert found.location == location
    for word in ("dogs", "ran", "car", "big"):
        assert found.synonym_names(word) == ours.synonym_names(word)


def test_nltk_zip_is_read(monkeypatch, tmp_path, ours) -> None:
    """``nltk.download('wordnet')`` may leave ``corpora/wordnet.zip`` with the files under ``wordnet/``."""
    import nltk.data

    corpora = tmp_path / "nltk_data" / "corpora"
    corpora.mkdir(parents=True)
    with zipfile.ZipFile(corpora / "wordnet.zip", "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in WORDNET_FILES:
            archive.write(DEBIAN_WORDNET / name, f"wordnet/{name}")
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path / "nltk_data")])
    location = find_wordnet()
    assert location == WordNetLocation(str(corpora / "wordnet.zip"), "nltk", "wordnet/")
    found = load_wordnet()
    for word in ("dogs", "geese", "better", "happier"):
        assert found.synonym_names(word) == ours.synonym_names(word)


def test_incomplete_folder_is_refused(tmp_path) -> None:
    (tmp_path / "index.noun").write_text("")
    with pytest.raises(WordNetNotFoundError, match="not a complete WordNet database"):
        load_wordnet(tmp_path)


def test_other_versions_are_refused(tmp_path) -> None:
    folder = tmp_path / "wordnet"
    folder.mkdir()
    for name in WORDNET_FILES:
        shutil.copyfile(DEBIAN_WORDNET / name, folder / name)
    data = (folder / "data.adj").read_bytes()
    assert b"WordNet 3.0 Copyright" in data
    (folder / "data.adj").write_bytes(data.replace(b"WordNet 3.0 Copyright", b"WordNet 3.1 Copyright", 1))
    with pytest.raises(WordNetNotFoundError, match="version '3.1'"):
        load_wordnet(folder)


def test_every_copy_raises_the_same_error_class(tmp_path) -> None:
    """The loaded databases are shared by every vendored copy of core_wordnet, so whichever copy loads one, the
    error it raises is the class every copy exports (it failed when the meteor module had loaded first)."""
    import sys

    from conftest import load_metric

    meteor = load_metric("meteor")
    vendored = sys.modules[type(meteor).__module__.rpartition(".")[0] + ".core_wordnet"]
    assert vendored is not core_wordnet
    assert vendored.WordNetNotFoundError is core_wordnet.WordNetNotFoundError
    with pytest.raises(WordNetNotFoundError, match="not a complete WordNet database"):
        vendored.load_wordnet(tmp_path)
