"""The globals a torch.save file's pickle names: what the Hugging Face Hub's pickle scanner lists as a file's
"Detected Pickle imports", for tests that build files of a released checkpoint's exact structure."""

from __future__ import annotations

import pickletools
import zipfile
from pathlib import Path


def pickle_imports(path: Path) -> set[str]:
    """The globals named by the GLOBAL opcodes of a torch.save file's data.pkl, as ``module.name``."""
    with zipfile.ZipFile(path) as archive:
        data = archive.read(next(name for name in archive.namelist() if name.endswith("data.pkl")))
    return {arg.replace(" ", ".") for opcode, arg, _ in pickletools.genops(data) if opcode.name == "GLOBAL"}
