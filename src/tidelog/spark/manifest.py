"""Where the archive keeps a stream's Parquet files, and the manifest that says which count.

Layout, under the archive's path (a local or mounted filesystem)::

    <stream key, escaped>/                      see escape_key()
        _tidelog_manifest.json                  the committed runs (the only truth)
        day=YYYY-MM-DD/part-<run>-NNNNN.*.parquet
        _staging-<run>/                         a run's output until it is moved
        _tidelog_lock                           held (flock) while a run works

A data file belongs to the archive if and only if the manifest lists it; the
archive job (:mod:`.archive_job`) writes it, the history read
(:mod:`.history`) reads it.
"""

from __future__ import annotations

import json
import os
import string
from dataclasses import asdict, dataclass, field

from .ids import StreamId, parse_id

MANIFEST = "_tidelog_manifest.json"
LOCK = "_tidelog_lock"
STAGING_PREFIX = "_staging-"
DAY_PREFIX = "day="
MANIFEST_FORMAT = "tidelog-archive/1"
DAY_MS = 86_400_000

_SAFE = frozenset(string.ascii_letters + string.digits + "-_")


class ArchiveError(RuntimeError):
    """The archive cannot go on: a failed check, a busy lock, an unusable manifest."""


# -- layout -----------------------------------------------------------------------------

def escape_key(key: str) -> str:
    """A stream key as one directory name: letters, digits, ``-`` and ``_`` stay,
    every other UTF-8 byte becomes ``%XX`` (so does a leading ``_``, which Spark
    and Hadoop treat as hidden).  Injective, so two keys never share a directory.
    """
    if not key:
        raise ValueError("the stream key is empty")
    out = []
    for i, byte in enumerate(key.encode("utf-8")):
        char = chr(byte)
        if char in _SAFE and not (i == 0 and char == "_"):
            out.append(char)
        else:
            out.append(f"%{byte:02X}")
    return "".join(out)


def stream_dir(path: str | os.PathLike, stream: str) -> str:
    """The directory holding ``stream``'s archive under ``path``."""
    return os.path.join(os.fspath(path), escape_key(stream))


def day_of_file(relative: str) -> str | None:
    """``"day=2024-05-01/part-....parquet"`` -> ``"2024-05-01"`` (None: not a data file)."""
    head, sep, _ = relative.partition("/")
    return head[len(DAY_PREFIX):] if sep and head.startswith(DAY_PREFIX) else None


# -- the manifest ------------------------------------------------------------------------

@dataclass
class ArchivedRun:
    """One committed run: the inclusive ID range it archived and the files that hold it."""

    run_id: str
    first_id: str
    last_id: str
    rows: int
    files: list[str]             # relative to the stream directory, "day=.../part-..."
    bytes: int
    cut: str                     # entries below this ID were due
    created: str                 # ISO 8601, UTC
    trimmed: bool = False        # the XTRIM after the commit is known to be done

    @classmethod
    def from_json(cls, data: dict) -> ArchivedRun:
        return cls(**{name: data[name] for name in cls.__dataclass_fields__ if name in data})


@dataclass
class Manifest:
    """The runs committed for one stream, oldest first.  Loading and saving cost
    O(runs + files); saving is atomic (temporary file, fsync, rename, fsync dir).
    """

    stream: str
    runs: list[ArchivedRun] = field(default_factory=list)

    @classmethod
    def load(cls, directory: str, stream: str) -> Manifest:
        """The manifest in ``directory``; an empty one when there is none yet."""
        try:
            with open(os.path.join(directory, MANIFEST), encoding="utf-8") as f:
                data = json.load(f)
        except FileNotFoundError:
            return cls(stream)
        if data.get("format") != MANIFEST_FORMAT:
            raise ArchiveError(f"{directory}: unknown manifest format {data.get('format')!r}")
        if data.get("stream") != stream:
            raise ArchiveError(f"{directory}: the manifest is for stream "
                               f"{data.get('stream')!r}, not {stream!r}")
        return cls(stream, [ArchivedRun.from_json(r) for r in data.get("runs", [])])

    def save(self, directory: str) -> None:
        """Replace the manifest in ``directory`` with this one, durably."""
        data = {"format": MANIFEST_FORMAT, "stream": self.stream,
                "runs": [asdict(run) for run in self.runs]}
        final = os.path.join(directory, MANIFEST)
        temp = final + ".tmp"
        with open(temp, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, final)
        fsync_dir(directory)

    @property
    def last_id(self) -> StreamId | None:
        """The largest ID archived so far (None: nothing archived)."""
        return max((parse_id(r.last_id) for r in self.runs), default=None)

    def files(self) -> set[str]:
        """Every data file the archive holds, relative to the stream directory."""
        return {f for run in self.runs for f in run.files}


def fsync_dir(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
