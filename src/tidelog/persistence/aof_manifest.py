"""The AOF manifest: which files make up the AOF, in load order.

``<appendfilename>.manifest`` holds one line per file, ``file <name> seq <n>
type <b|h|i>`` (base, history, incremental).  It is replaced atomically
(:func:`write_atomically`: temporary file, fsync, rename, fsync of the
directory), so a crash leaves the old manifest or the new one.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any

from .aof_format import AofLoadError

log = logging.getLogger("tidelog")


BASE, HISTORY, INCR = "b", "h", "i"


def aof_dir(config: Any) -> str:
    """The directory that holds the manifest and its files (``appenddirname`` under ``dir``)."""
    return os.path.join(config["dir"], config["appenddirname"])


@dataclass
class AofFile:
    """One file of the AOF: its name, sequence number and type (b, h or i)."""

    name: str
    seq: int
    type: str


@dataclass
class Manifest:
    base: AofFile | None = None
    incrs: list[AofFile] = field(default_factory=list)
    history: list[AofFile] = field(default_factory=list)

    @classmethod
    def parse(cls, text: str, path: str = "manifest") -> Manifest:
        """Read ``file <name> seq <n> type <b|h|i>`` lines (any key order)."""
        manifest = cls()
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            words = line.split()
            if len(words) % 2:
                raise AofLoadError(f"Invalid AOF manifest file format: {path} line {number}")
            info = dict(zip(words[0::2], words[1::2]))
            try:
                item = AofFile(info["file"], int(info["seq"]), info["type"])
            except (KeyError, ValueError):
                raise AofLoadError(
                    f"Invalid AOF manifest file format: {path} line {number}") from None
            if item.type == BASE:
                if manifest.base is not None:
                    raise AofLoadError(f"Found duplicate base file information: {path}")
                manifest.base = item
            elif item.type == INCR:
                if manifest.incrs and item.seq <= manifest.incrs[-1].seq:
                    raise AofLoadError(f"Found a non-monotonic sequence number: {path}")
                manifest.incrs.append(item)
            elif item.type == HISTORY:
                manifest.history.append(item)
            else:
                raise AofLoadError(f"Unknown AOF file type '{item.type}': {path} line {number}")
        return manifest

    def text(self) -> str:
        lines = []
        for item in ([self.base] if self.base else []) + self.history + self.incrs:
            lines.append(f"file {item.name} seq {item.seq} type {item.type}\n")
        return "".join(lines)

    def files(self) -> list[AofFile]:
        """The files to load, in order."""
        return ([self.base] if self.base else []) + self.incrs


def fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path: str, data: bytes) -> None:
    """Replace ``path`` with ``data``: temp file, fsync, rename, fsync the dir."""
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    fsync_dir(os.path.dirname(path) or ".")


# =====================================================================================
# Rewrite: the dataset as commands
# =====================================================================================
