"""WordNet 3.0 from its database files, read as NLTK's WordNet reader reads them, for METEOR's synonym stage.

METEOR (NLTK's ``meteor_score``) needs one thing from WordNet: for a word,
the set of lemma names of ``wordnet.synsets(word)`` over every part of speech.
:meth:`WordNet.synonym_names` gives exactly that set (without the names that
hold ``_``, which METEOR drops), with NLTK 3.10's rules:

- the word is lowercased; for each part of speech in NLTK's order (noun,
  verb, adjective, adverb) NLTK's ``morphy`` gives the base forms: the word
  itself and either its bases in that part of speech's exception list (when
  the word is listed there) or the results of the detachment rules applied
  once, keeping those forms that the index lists for that part of speech;
- the synsets are the index entry's synset offsets for each form; adjective
  satellites come in through the adjective index like any adjective synset;
- a synset's lemma names are the words of its line in ``data.<pos>``, with a
  trailing syntactic marker such as ``(a)``, ``(p)`` or ``(ip)`` removed.

The database files are read from NLTK's data folders (``corpora/wordnet`` or
``corpora/wordnet.zip`` under ``nltk.data.path``, what ``nltk.download
("wordnet")`` installs) or, failing that, from Debian's ``wordnet-base``
package (``/usr/share/wordnet``). Only ``index.*``, ``data.*`` and ``*.exc``
are read; NLTK's own reader also needs ``lexnames`` and ``index.sense``.

A database is loaded once per process and location (shared by every vendored
copy of this module, through ``core_process``); the synonym sets and synsets
read from it are kept in process-wide caches bounded in bytes, which
``core_process.clear_caches()`` empties.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import threading
import zipfile
from itertools import repeat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .core_process import MIB, bounded_cache, import_cleanly, process_state

# NLTK's POS_LIST: the parts of speech ``synsets(word)`` visits, in order.
PARTS_OF_SPEECH = ("n", "v", "a", "r")
_FILE_SUFFIX = {"a": "adj", "r": "adv", "n": "noun", "v": "verb"}
# NLTK's MORPHOLOGICAL_SUBSTITUTIONS: morphy's detachment rules (suffix, replacement) per part of speech.
DETACHMENT_RULES: dict[str, tuple[tuple[str, str], ...]] = {
    "n": (
        ("s", ""),
        ("ses", "s"),
        ("ves", "f"),
        ("xes", "x"),
        ("zes", "z"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("men", "man"),
        ("ies", "y"),
    ),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}
WORDNET_FILES = tuple(
    f"{kind}.{suffix}" for suffix in ("adj", "adv", "noun", "verb") for kind in ("index", "data")
) + tuple(f"{suffix}.exc" for suffix in ("adj", "adv", "noun", "verb"))
DEBIAN_WORDNET = Path("/usr/share/wordnet")
SUPPORTED_VERSION = "3.0"

INSTALL_HELP = (
    "install WordNet 3.0 one of two ways: with NLTK's downloader, "
    "`pip install nltk && python -m nltk.downloader wordnet` "
    "(or `python -c \"import nltk; nltk.download('wordnet')\"`), which puts it in ~/nltk_data; "
    "or, on Debian or Ubuntu, `apt-get install wordnet-base`, which puts it in /usr/share/wordnet"
)

# A synset line's lemma name with its syntactic marker, as NLTK splits it.
_SYNTACTIC_MARKER = re.compile(r"(.*?)(\([^()]*\))?$")
# The last letters of the detachment rules' suffixes: a form ending otherwise has no rule to apply.
_RULE_ENDINGS = {pos: frozenset(old[-1] for old, _ in rules) for pos, rules in DETACHMENT_RULES.items()}
_VERSION_LINE = re.compile(r"Word[nN]et (\d+\+?|\d+\.\d+) Copyright")
# Bytes of the process-wide caches: synonym sets by word, and lemma names by synset.
SYNONYM_CACHE_BYTES = 64 * MIB
SYNSET_CACHE_BYTES = 32 * MIB


class _WordNetNotFoundError(ValueError, LookupError):
    """No usable WordNet database was found; the message says how to install one."""


# One class for every vendored copy of this module: the loaded databases are shared by all copies, so an error
# raised while loading for one module must be the class any other copy's users catch.
WordNetNotFoundError: type[_WordNetNotFoundError] = process_state(
    __file__, "WordNetNotFoundError", lambda: _WordNetNotFoundError)
_WordNetNotFoundError.__name__ = _WordNetNotFoundError.__qualname__ = "WordNetNotFoundError"


@dataclass(frozen=True)
class WordNetLocation:
    """Where a WordNet database lies: a folder, or a zip file whose files are under ``member_prefix``."""

    path: str
    origin: str
    member_prefix: str = ""

    @property
    def is_zip(self) -> bool:
        return bool(self.member_prefix)

    def read(self, name: str) -> bytes:
        """The bytes of one database file."""
        if self.is_zip:
            with zipfile.ZipFile(self.path) as archive:
                return archive.read(self.member_prefix + name)
        return (Path(self.path) / name).read_bytes()

    def is_complete(self) -> bool:
        """True when every file METEOR reads is present."""
        try:
            if self.is_zip:
                with zipfile.ZipFile(self.path) as archive:
                    names = set(archive.namelist())
                return all(self.member_prefix + name in names for name in WORDNET_FILES)
            return all((Path(self.path) / name).is_file() for name in WORDNET_FILES)
        except (OSError, zipfile.BadZipFile):
            return False


def nltk_data_path() -> list[str | os.PathLike[str]]:
    """``nltk.data.path``: the imported module's list (a caller may have changed it) or, before NLTK is imported,
    the list ``nltk.data`` starts with, computed as it computes it on Unix without importing NLTK (1-2 s in a
    fresh process); empty without nltk."""
    loaded = sys.modules.get("nltk.data")
    if loaded is None and sys.platform == "win32":
        try:
            loaded = import_cleanly("nltk.data")  # undone if interrupted, so that the next call imports it afresh
        except ImportError:
            return []
    if loaded is not None:
        return list(loaded.path)
    if importlib.util.find_spec("nltk") is None:
        return []
    path: list[str | os.PathLike[str]] = [
        os.path.expanduser(entry) for entry in os.environ.get("NLTK_DATA", "").split(os.pathsep) if entry
    ]
    if "APPENGINE_RUNTIME" not in os.environ and os.path.expanduser("~/") != "~/":
        path.append(os.path.expanduser("~/nltk_data"))
    path += [
        os.path.join(sys.prefix, "nltk_data"),
        os.path.join(sys.prefix, "share", "nltk_data"),
        os.path.join(sys.prefix, "lib", "nltk_data"),
        "/usr/share/nltk_data",
        "/usr/local/share/nltk_data",
        "/usr/lib/nltk_data",
        "/usr/local/lib/nltk_data",
    ]
    return path


def nltk_data_locations() -> list[WordNetLocation]:
    """WordNet as NLTK's downloader installs it, in the order of ``nltk.data.path`` (empty without nltk)."""
    locations = []
    for entry in nltk_data_path():
        if not isinstance(entry, (str, os.PathLike)):
            continue
        corpora = Path(entry) / "corpora"
        locations.append(WordNetLocation(str(corpora / "wordnet"), "nltk"))
        locations.append(WordNetLocation(str(corpora / "wordnet.zip"), "nltk", "wordnet/"))
    return locations


def find_wordnet() -> WordNetLocation | None:
    """The first complete WordNet database: NLTK's data folders first, then Debian's ``wordnet-base``."""
    for location in (*nltk_data_locations(), WordNetLocation(str(DEBIAN_WORDNET), "debian")):
        if Path(location.path).exists() and location.is_complete():
            return location
    return None


def _searched_places() -> str:
    places = [location.path for location in nltk_data_locations() if not location.is_zip]
    return ", ".join([*places, str(DEBIAN_WORDNET)])


def _as_location(source: str | os.PathLike[str] | WordNetLocation | None) -> WordNetLocation:
    if isinstance(source, WordNetLocation):
        location = source
    elif source is not None:
        path = Path(source)
        if path.suffix == ".zip":
            location = WordNetLocation(str(path), "given", "wordnet/")
        else:
            location = WordNetLocation(str(path), "given")
    else:
        found = find_wordnet()
        if found is None:
            raise WordNetNotFoundError(
                "meteor: WordNet synonym matching needs the WordNet 3.0 database, which was not found "
                f"(looked in {_searched_places()}); {INSTALL_HELP}; "
                "or score without synonyms (exact and stem matches only) with synonyms=False"
            )
        return found
    if not location.is_complete():
        missing = ", ".join(WORDNET_FILES)
        raise WordNetNotFoundError(
            f"meteor: {location.path} is not a complete WordNet database (it needs {missing}); {INSTALL_HELP}"
        )
    return location


class WordNet:
    """One WordNet database: its lemma index, exception lists and synset lemma names, read lazily."""

    def __init__(self, location: WordNetLocation) -> None:
        self.location = location
        self._index: dict[str, dict[str, str]] = {pos: {} for pos in PARTS_OF_SPEECH}
        # Files in NLTK's order (adj, adv, noun, verb): a lemma listed twice for one part of speech keeps the last.
        for suffix in ("adj", "adv", "noun", "verb"):
            for line in location.read(f"index.{suffix}").decode("utf-8").split("\n"):
                if not line or line[0] == " ":
                    continue
                lemma, pos, rest = line.split(None, 2)
                self._index.setdefault(pos, {})[lemma] = rest
        self._exceptions: dict[str, dict[str, list[str]]] = {}
        for pos in ("a", "r", "n", "v"):
            table: dict[str, list[str]] = {}
            for line in location.read(f"{_FILE_SUFFIX[pos]}.exc").decode("utf-8").split("\n"):
                terms = line.split()
                if terms:
                    table[terms[0]] = terms[1:]
            self._exceptions[pos] = table
        self._data = {pos: location.read(f"data.{_FILE_SUFFIX[pos]}") for pos in PARTS_OF_SPEECH}
        self.version = self._read_version()
        self._tables = tuple(
            (pos, self._index.get(pos, {}), self._exceptions[pos], DETACHMENT_RULES[pos], _RULE_ENDINGS[pos])
            for pos in PARTS_OF_SPEECH
        )
        # The prefix of this database's keys in the process-wide caches.
        self.key = f"{location.path}!{location.member_prefix}"

    def _read_version(self) -> str | None:
        header = self._data["a"][:4096].decode("utf-8", "replace")
        for line in header.split("\n"):
            match = _VERSION_LINE.search(line)
            if match is not None:
                return match.group(1)
        return None

    def index_lemmas(self, pos: str | None = None) -> Iterator[str]:
        """Every lemma of the index (of one part of speech, or of all, each once)."""
        if pos is not None:
            return iter(self._index.get(pos, {}))
        return iter(dict.fromkeys(lemma for table in self._index.values() for lemma in table))

    def exception_forms(self) -> Iterator[str]:
        """Every inflected form listed in the exception lists, each once."""
        return iter(dict.fromkeys(form for table in self._exceptions.values() for form in table))

    def offsets(self, lemma: str, pos: str) -> tuple[int, ...]:
        """The synset offsets that the index lists for ``lemma`` in part of speech ``pos``."""
        rest = self._index.get(pos, {}).get(lemma)
        return () if rest is None else _entry_offsets(rest)

    def morphy(self, form: str, pos: str) -> list[str]:
        """NLTK's ``_morphy(form, pos)``: the base forms of ``form`` that the index lists for ``pos``."""
        exceptions = self._exceptions[pos]
        if form in exceptions:
            candidates = [form, *exceptions[form]]
        elif form[-1:] in _RULE_ENDINGS[pos]:
            candidates = [form] + [form[: -len(old)] + new for old, new in DETACHMENT_RULES[pos] if form.endswith(old)]
        else:
            candidates = [form]
        listed = self._index.get(pos, {})
        return list(dict.fromkeys(candidate for candidate in candidates if candidate in listed))

    def synsets(self, word: str) -> list[tuple[str, int]]:
        """``(part of speech, offset)`` of NLTK's ``synsets(word)``, in its order (duplicates kept)."""
        word = word.lower()
        return [
            (pos, offset)
            for pos in PARTS_OF_SPEECH
            for form in self.morphy(word, pos)
            for offset in self.offsets(form, pos)
        ]

    def lemma_names(self, pos: str, offset: int) -> tuple[str, ...]:
        """The lemma names of the synset at ``offset`` in ``data.<pos>``, as NLTK's ``Synset.lemma_names()``
        (cached per process)."""
        key = (self.key, pos, offset)
        entry = _SYNSETS._entries.get(key)
        if entry is not None:
            return entry[0]
        return _SYNSETS.store(key, self._read_lemma_names(pos, offset))

    def _read_lemma_names(self, pos: str, offset: int) -> tuple[str, ...]:
        data = self._data[pos]
        end = data.find(b"\n", offset)
        if end < 0:
            end = len(data)
        gloss = data.find(b"|", offset, end)
        head = data[offset : gloss if gloss >= 0 else end].decode("utf-8")
        if head[:8] != f"{offset:08d}":
            raise ValueError(
                f"meteor: WordNet file data.{_FILE_SUFFIX[pos]} in {self.location.path} has no synset at byte "
                f"{offset}; the database is damaged or its index belongs to another version; {INSTALL_HELP}"
            )
        # offset, lexicographer file, synset type, word count (hex), then (word, lexical id) pairs.
        fields = head.split(None, 4)
        count = int(fields[3], 16)
        words = fields[4].split(None, 2 * count)[: 2 * count : 2]
        return tuple(
            [
                _SYNTACTIC_MARKER.match(word).group(1) if word.endswith(")") else word  # type: ignore[union-attr]
                for word in words
            ]
        )

    def synonym_names(self, word: str) -> frozenset[str]:
        """The lemma names without ``_`` over all synsets of ``word``: METEOR's synonyms (cached per process)."""
        key = (self.key, word)
        entry = _SYNONYMS._entries.get(key)
        if entry is not None:
            return entry[0]
        return _SYNONYMS.store(key, self._synonym_names(word))

    def synonym_sets(self, words: Sequence[str]) -> list[frozenset[str]]:
        """:meth:`synonym_names` of each word (one cache look-up pass for them all)."""
        found = list(map(_SYNONYMS._entries.get, zip(repeat(self.key), words)))
        return [entry[0] if entry is not None else self.synonym_names(word) for entry, word in zip(found, words)]

    def _synonym_names(self, word: str) -> frozenset[str]:
        # morphy's forms for every part of speech and the synsets' cached lemma names, inlined; a form met twice
        # adds nothing to the union.
        collected: set[str] = set()
        synsets = _SYNSETS._entries
        lowered = word.lower()
        for pos, listed, exceptions, rules, endings in self._tables:
            bases = exceptions.get(lowered)
            if bases is not None:
                forms = [lowered, *bases]
            elif lowered[-1:] in endings:
                forms = [lowered] + [lowered[: -len(old)] + new for old, new in rules if lowered.endswith(old)]
            else:
                forms = [lowered]
            for form in forms:
                rest = listed.get(form)
                if rest is not None:
                    for offset in _entry_offsets(rest):
                        key = (self.key, pos, offset)
                        entry = synsets.get(key)
                        collected.update(
                            entry[0] if entry is not None else _SYNSETS.store(key, self._read_lemma_names(pos, offset))
                        )
        return frozenset([name for name in collected if "_" not in name])


def _entry_offsets(rest: str) -> tuple[int, ...]:
    """The synset offsets of an index line after its lemma and part of speech."""
    fields = rest.split()
    count, pointers = int(fields[0]), int(fields[1])
    return tuple([int(field) for field in fields[4 + pointers : 4 + pointers + count]])


def _synonyms_size(key: tuple[str, str], names: frozenset[str]) -> int:
    """Estimated bytes of a cached synonym set: the entry, the word and the set with its names (names shared
    with cached synsets are counted again: an upper bound)."""
    return 240 + sys.getsizeof(key[1]) + sys.getsizeof(names) + sum(map(sys.getsizeof, names))


def _synset_size(key: tuple[str, str, int], names: tuple[str, ...]) -> int:
    """Estimated bytes of a synset's cached lemma names: the entry, its key and the tuple of names."""
    return 280 + sys.getsizeof(names) + sum(map(sys.getsizeof, names))


_SYNONYMS = bounded_cache(__file__, "meteor.synonyms", SYNONYM_CACHE_BYTES, _synonyms_size)
_SYNSETS = bounded_cache(__file__, "meteor.synsets", SYNSET_CACHE_BYTES, _synset_size)


@dataclass
class _LoadedWordNets:
    """The databases loaded in this process, by location (one object shared by every copy of this module)."""

    databases: dict[WordNetLocation, WordNet] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, location: WordNetLocation) -> WordNet:
        with self.lock:
            wordnet = self.databases.get(location)
            if wordnet is None:
                wordnet = WordNet(location)
                if wordnet.version != SUPPORTED_VERSION:
                    raise WordNetNotFoundError(
                        f"meteor: the WordNet database at {location.path} is version {wordnet.version!r}, not "
                        f"{SUPPORTED_VERSION} (the version NLTK's METEOR uses); {INSTALL_HELP}"
                    )
                self.databases[location] = wordnet
            return wordnet


_LOADED = process_state(__file__, "loaded wordnets", _LoadedWordNets)


def load_wordnet(source: str | os.PathLike[str] | WordNetLocation | None = None) -> WordNet:
    """WordNet 3.0 from ``source`` (a folder, NLTK's ``wordnet.zip``) or, by default, from :func:`find_wordnet`.

    Raises :class:`WordNetNotFoundError`, saying how to install it, when there is none. Each database is
    loaded once per process and location; the default location is looked for on every call (a few file
    checks), so a database installed meanwhile is found.
    """
    return _LOADED.get(_as_location(source))


def wordnet_available() -> bool:
    """True when :func:`load_wordnet` finds a database without being told where."""
    return find_wordnet() is not None

