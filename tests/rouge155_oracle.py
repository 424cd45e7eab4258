"""The oracle for the ROUGE-1.5.5 mode: the Perl script ROUGE-1.5.5.pl itself, driven as pyrouge drives it.

Nothing of ROUGE-1.5.5 is part of this project. Point ``ROUGE155_HOME`` at a folder holding ``ROUGE-1.5.5.pl``
(for example ``tools/ROUGE-1.5.5`` of a repository that vendors it, such as quanvuong/pyrouge), or register it with
pyrouge (``~/.pyrouge/settings.ini``, ``home_dir``). Its data folder (``ROUGE155_DATA``, default ``<home>/data``)
must hold ``smart_common_words.txt`` and a ``WordNet-2.0.exc.db`` that the installed Berkeley DB can open: the
shipped one is a DB 1.85 file that Debian's libdb 5.3 cannot read (see ROUGE-1.5.5.md beside the project's data
for how it was rebuilt). Perl needs ``XML::DOM`` (Debian ``libxml-dom-perl``) and ``DB_File``.

:func:`run_rouge155` writes each summary as pyrouge 0.1.x writes it (``text.split("\\n")``, one SEE anchor per
sentence, UTF-8), a configuration with one ``<EVAL ID="i">`` per example (``i`` from 1, peer ``1``, models
``A``, ``B``, ... in the order given), runs the script with ``-d`` and parses the per-example ``Eval`` lines
and the ``Average_*`` lines.
"""

from __future__ import annotations

import configparser
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from metrics._core.core_rouge155 import MEASURES, output_key

PYROUGE_OPTIONS = ("-c", "95", "-2", "-1", "-U", "-r", "1000", "-n", "4", "-w", "1.2", "-a")
SCRIPT_NAME = "ROUGE-1.5.5.pl"
SOURCE = {
    "script": "ROUGE-1.5.5.pl (ROUGE 1.5.5, Chin-Yew Lin), md5 d5a9bde6135cfb21cc23ddf3e3d0c81d",
    "repository": "github.com/quanvuong/pyrouge, tools/ROUGE-1.5.5",
    "commit": "3b6c415",
    "data": "WordNet-2.0.exc.db rebuilt from the shipped WordNet-2.0-Exceptions/*.exc read in sorted order",
}

_AVERAGE = re.compile(r"^(\S+) (ROUGE-\S+) Average_([RPF]): ([0-9.]+) \((\d+(?:\.\d+)?)%-conf\.int\. ([0-9.]+) - ([0-9.]+)\)$")
_EVAL = re.compile(r"^(\S+) (ROUGE-\S+) Eval (\S+) R:(\S+) P:(\S+) F:(\S+)$")


@dataclass(frozen=True)
class Rouge155Install:
    """Where the Perl script and its data folder are."""

    home: Path
    data: Path

    @property
    def script(self) -> Path:
        return self.home / SCRIPT_NAME


@dataclass
class Rouge155Output:
    """Parsed output: per measure, the R/P/F strings of each example (in input order) and the averages."""

    per_example: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    averages: dict[str, dict[str, str]] = field(default_factory=dict)
    command: list[str] = field(default_factory=list)
    stdout: str = ""


def _pyrouge_home() -> Path | None:
    settings = Path.home() / ".pyrouge" / "settings.ini"
    if not settings.is_file():
        return None
    parser = configparser.ConfigParser()
    parser.read(settings)
    try:
        return Path(parser.get("pyrouge settings", "home_dir"))
    except (configparser.Error, KeyError):
        return None


def find_rouge155() -> tuple[Rouge155Install | None, str]:
    """The installed oracle, or None and the reason it cannot be used."""
    home_text = os.environ.get("ROUGE155_HOME")
    home = Path(home_text) if home_text else _pyrouge_home()
    if home is None:
        return None, (
            "ROUGE-1.5.5.pl not configured: set ROUGE155_HOME to the folder holding ROUGE-1.5.5.pl "
            "(or register it with pyrouge_set_rouge_path)"
        )
    data = Path(os.environ.get("ROUGE155_DATA", home / "data"))
    install = Rouge155Install(home, data)
    if not install.script.is_file():
        return None, f"{install.script} not found"
    if shutil.which("perl") is None:
        return None, "perl is not installed"
    for needed in ("smart_common_words.txt", "WordNet-2.0.exc.db"):
        if not (data / needed).is_file():
            return None, f"{data / needed} not found"
    probe = subprocess.run(
        [
            "perl", "-MXML::DOM", "-MDB_File", "-e",
            'tie %d,"DB_File",$ARGV[0],O_RDONLY,0440,$DB_HASH or die "cannot open $ARGV[0]\\n"; '
            'exists $d{"said"} or die "no entry for said in $ARGV[0]\\n";',
            str(data / "WordNet-2.0.exc.db"),
        ],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        return None, f"the Perl oracle cannot run: {probe.stderr.strip()[:300]}"
    return install, ""


def see_html(text: str) -> str:
    """pyrouge 0.1.x's ``Rouge155.convert_text_to_rouge_format`` (one anchor per ``\\n``-separated sentence)."""
    sentences = text.split("\n")
    elements = "\n".join(
        f'<a name="{i}">[{i}]</a> <a href="#{i}" id={i}>{sentence}</a>' for i, sentence in enumerate(sentences, 1)
    )
    return f'<html>\n<head>\n<title>dummy title</title>\n</head>\n<body bgcolor="white">\n{elements}\n</body>\n</html>'


def _write(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)


def write_inputs(folder: Path, predictions: list[str], references: list[list[str]]) -> Path:
    """SEE files and a pyrouge-style configuration under ``folder``; returns the configuration's path."""
    system_dir, model_dir = folder / "system", folder / "model"
    system_dir.mkdir()
    model_dir.mkdir()
    evals = []
    for index, (prediction, group) in enumerate(zip(predictions, references, strict=True), 1):
        _write(system_dir / f"{index}.html", see_html(prediction))
        models = []
        for position, reference in enumerate(group):
            name = f"{index}.{position:03d}.html"
            _write(model_dir / name, see_html(reference))
            models.append(f'<M ID="{chr(65 + position)}">{name}</M>')
        evals.append(
            f'<EVAL ID="{index}">\n<MODEL-ROOT>{model_dir}</MODEL-ROOT>\n<PEER-ROOT>{system_dir}</PEER-ROOT>\n'
            f'<INPUT-FORMAT TYPE="SEE">\n</INPUT-FORMAT>\n<PEERS>\n<P ID="1">{index}.html</P>\n</PEERS>\n'
            f"<MODELS>\n{''.join(models)}\n</MODELS>\n</EVAL>\n"
        )
    config = folder / "config.xml"
    _write(config, '<ROUGE-EVAL version="1.55">' + "".join(evals) + "</ROUGE-EVAL>")
    return config


def parse_output(stdout: str, count: int) -> Rouge155Output:
    output = Rouge155Output(stdout=stdout)
    for line in stdout.splitlines():
        match = _EVAL.match(line)
        if match:
            measure, test_id = match.group(2), match.group(3)
            rows = output.per_example.setdefault(measure, [("", "", "")] * count)
            index = int(test_id.split(".")[0]) - 1
            rows[index] = (match.group(4), match.group(5), match.group(6))
            continue
        match = _AVERAGE.match(line)
        if match:
            measure, which = match.group(2), match.group(3)
            entry = output.averages.setdefault(measure, {})
            entry[which] = match.group(4)
            entry[f"{which}_low"] = match.group(6)
            entry[f"{which}_high"] = match.group(7)
    return output


def cache_key(predictions: list[str], references: list[list[str]], options: tuple[str, ...] | list[str]) -> str:
    """SHA-256 of the options and the texts: the name of a cached output of the script."""
    payload = json.dumps([list(options), predictions, references], ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(payload).hexdigest()


def run_rouge155(
    predictions: list[str],
    references: list[list[str]],
    options: tuple[str, ...] | list[str] = PYROUGE_OPTIONS,
    *,
    install: Rouge155Install | None = None,
    workdir: Path | None = None,
) -> Rouge155Output:
    """Run ROUGE-1.5.5.pl on the pairs with ``options`` (plus ``-e <data> -d``); parse what it prints.

    When ``ROUGE155_CACHE`` names a folder, the script's output is kept there under :func:`cache_key` and
    read back instead of running the script again (full CNN/DailyMail runs take minutes each).
    Raises ``RuntimeError`` with the script's message when it fails (it dies, for example, on a division by
    zero in ROUGE-W when a reference has no token)."""
    cache = Path(os.environ["ROUGE155_CACHE"]) if os.environ.get("ROUGE155_CACHE") else None
    command = ["perl", SCRIPT_NAME, "-e", "<data>", *options, "-d", "<config.xml>"]
    if cache is not None:
        cached = cache / f"{cache_key(predictions, references, options)}.stdout"
        if cached.is_file():
            output = parse_output(cached.read_text(encoding="utf-8"), len(predictions))
            output.command = command
            return output
    if install is None:
        install, reason = find_rouge155()
        if install is None:
            raise RuntimeError(reason)
    with tempfile.TemporaryDirectory(prefix="rouge155-", dir=workdir) as temp:
        config = write_inputs(Path(temp), predictions, references)
        command = ["perl", str(install.script), "-e", str(install.data), *options, "-d", str(config)]
        completed = subprocess.run(command, capture_output=True, text=True, cwd=temp)
    if completed.returncode != 0:
        raise RuntimeError(f"ROUGE-1.5.5.pl failed ({completed.returncode}): {completed.stderr.strip()[-500:]}")
    output = parse_output(completed.stdout, len(predictions))
    output.command = command
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        cached.write_text(completed.stdout, encoding="utf-8")
    return output


def perl_measure(name: str, w_weight: float = 1.2) -> str:
    """The script's name for one of our ``rouge_types`` (``rougeSU`` -> ``ROUGE-SU*``)."""
    if name == "rougeL":
        return "ROUGE-L"
    if name == "rougeW":
        return f"ROUGE-W-{w_weight:g}"
    match = re.fullmatch(r"rouge(\d)", name)
    if match:
        return f"ROUGE-{match.group(1)}"
    match = re.fullmatch(r"rougeS(U?)(\d*)", name)
    if match:
        return f"ROUGE-S{match.group(1)}{match.group(2) or '*'}"
    raise ValueError(name)


def perl_mismatches(
    output: Rouge155Output, columns: Mapping[str, Sequence[int]], averages: Mapping[str, float], options
) -> tuple[list[tuple], int]:
    """Every printed per-example R/P/F and every printed average and interval end that ours (``columns`` of
    ``rouge155_schema``, in units of 1e-5, and ``rouge155_averages``) does not equal to the printed digit, and
    how many values were compared."""
    mismatches, compared = [], 0
    for name in options.rouge_types:
        measure = perl_measure(name, options.w_weight)
        for index, printed in enumerate(output.per_example[measure]):
            ours = tuple(f"{columns[f'{name}_{m}_e5'][index] / 100000:.5f}" for m in MEASURES)
            compared += 3
            if ours != printed:
                mismatches.append((name, index, ours, printed))
        for m, letter in zip(MEASURES, "RPF", strict=True):
            for suffix in ("", "_low", "_high"):
                compared += 1
                if f"{averages[output_key(name, m, suffix)]:.5f}" != output.averages[measure][letter + suffix]:
                    mismatches.append((name, f"Average_{letter}{suffix}", averages[output_key(name, m, suffix)]))
    return mismatches, compared


def perl_options(options, *, n_bootstrap: int | None = None, confidence: float | None = None) -> list[str]:
    """ROUGE-1.5.5.pl's command-line options for a ``Rouge155Options`` (one skip distance per run)."""
    types = list(options.rouge_types)
    flags = ["-a", "-c", f"{confidence if confidence is not None else options.confidence:g}"]
    flags += ["-r", str(n_bootstrap if n_bootstrap is not None else options.n_bootstrap)]
    orders = [int(name[5:]) for name in types if re.fullmatch(r"rouge\d", name)]
    if orders:
        flags += ["-n", str(max(orders))]
    if "rougeL" not in types:
        flags.append("-x")
    if "rougeW" in types:
        flags += ["-w", f"{options.w_weight:g}"]
    skips = {re.fullmatch(r"rougeSU?(\d*)", name).group(1) for name in types if name.startswith("rougeS")}
    if len(skips) > 1:
        raise ValueError(f"one skip distance per run, got {sorted(skips)}")
    if skips:
        (skip,) = skips
        flags += ["-2", skip or "-1"]
        plain = any(re.fullmatch(r"rougeS\d*", name) for name in types)
        unigram = any(re.fullmatch(r"rougeSU\d*", name) for name in types)
        if unigram:
            flags.append("-U" if plain else "-u")
    if options.use_stemmer:
        flags.append("-m")
    if options.remove_stopwords:
        flags.append("-s")
    if options.length_limit is not None:
        flags += ["-l", str(options.length_limit)]
    if options.byte_limit is not None:
        flags += ["-b", str(options.byte_limit)]
    flags += ["-f", options.scoring_formula, "-p", f"{options.alpha:g}"]
    return flags
