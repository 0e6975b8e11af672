"""The append-only file, in Redis 7's multi-part layout.

``<dir>/<appenddirname>/`` holds:

* ``<appendfilename>.manifest`` -- one line per file, ``file <name> seq <n>
  type <b|h|i>`` (base, history, incremental), in load order;
* one base file, ``<appendfilename>.<n>.base.aof`` (the dataset as commands)
  or ``.base.rdb`` (a snapshot, read by :mod:`tidelog.persistence.rdb`);
* incremental files ``<appendfilename>.<n>.incr.aof``: every write since,
  as RESP commands, with a ``SELECT`` whenever the database changes.

Writing.  :meth:`Aof.feed` is an engine effect listener: it only appends
to an in-memory buffer.  At the end of each event-loop turn :meth:`Aof.flush`
writes the buffer with one ``write`` and, with ``appendfsync always``, one
``fsync`` (group commit); the network layer holds back replies while
:meth:`Aof.must_wait` says so and sends them from the callbacks queued with
:meth:`Aof.after_flush`, so no client sees a reply to a write that is not
on disk.  ``everysec`` fsyncs from a background thread at most once a
second; ``no`` leaves it to the OS.

Rewriting (BGREWRITEAOF, or automatic past ``auto-aof-rewrite-*``): the
parent opens a new incremental file and records it in the manifest at
once, then forks; the child writes the dataset as commands (the forms of
``REFERENCE-streams.md`` §4.2) to a temporary file and exits; the parent
then renames it to the next base and atomically replaces the manifest
with that base plus the new incremental file, and deletes the old files.
A crash at any point leaves a manifest that loads.

At run time (:func:`set_appendonly`, called by CONFIG SET appendonly
through the engine's persistence, :mod:`tidelog.persistence.durability`):
``yes`` appends to an unlisted temporary incremental file while a rewrite
writes the base; the first rewrite then lists the base and that file (under
its real name) as the whole AOF.  ``no`` flushes, fsyncs and closes.

Loading: :func:`load` replays the base, then the incremental files, as a
client of kind ``"aof"`` (XADD and XTRIM obey the rewritten arguments).
A command cut short at the end of the last file is a crash during a write:
with ``aof-load-truncated yes`` the file is truncated to the last whole
command, with a warning; with ``no`` the start is refused.  Anything else
malformed stops the start with the file, the offset, and what to do.

``aof-use-rdb-preamble``: a rewrite writes its base as RDB when the RDB
writer (``persistence.rdb.write_file``) exists and the dataset holds nothing
RDB cannot encode (XNACK'd entries, IDMP state), as commands otherwise.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..ids import MAX_ID, MIN_ID, StreamID
from ..resp.replies import ErrorReply
from ..types.stream import Stream

if TYPE_CHECKING:
    from ..engine import Engine

log = logging.getLogger("tidelog")

BASE, HISTORY, INCR = "b", "h", "i"
LOAD_PROGRESS_CHECK = 10_000   # commands between looks at the clock while loading
LOAD_PROGRESS_SECONDS = 2.0    # a progress line at most this often on long loads


class AofLoadError(Exception):
    """The AOF cannot be loaded; the message says which file, where, and what to do."""


# =====================================================================================
# RESP
# =====================================================================================
def encode_command(argv: list[bytes]) -> bytes:
    """One command as a RESP array of bulk strings (the AOF's format)."""
    parts = [b"*%d\r\n" % len(argv)]
    for arg in argv:
        parts.append(b"$%d\r\n" % len(arg))
        parts.append(arg)
        parts.append(b"\r\n")
    return b"".join(parts)


class Truncated(Exception):
    """The data ends inside a command that started at ``offset``."""

    def __init__(self, offset: int) -> None:
        super().__init__(offset)
        self.offset = offset


class Corrupt(Exception):
    def __init__(self, offset: int, why: str) -> None:
        super().__init__(f"{why} at offset {offset}")
        self.offset = offset
        self.why = why


def _read_line(data: bytes, pos: int, start: int) -> tuple[bytes, int]:
    end = data.find(b"\r\n", pos)
    if end < 0:
        if data.find(b"\n", pos) >= 0:
            raise Corrupt(pos, "line not ended by CRLF")
        raise Truncated(start)
    return data[pos:end], end + 2


def _read_int(data: bytes, pos: int, start: int, prefix: int, what: str) -> tuple[int, int]:
    if pos >= len(data):
        raise Truncated(start)
    if data[pos] != prefix:
        raise Corrupt(pos, f"expected '{chr(prefix)}' ({what})")
    line, nxt = _read_line(data, pos + 1, start)
    if not line.isdigit() or len(line) > 19:
        raise Corrupt(pos, f"bad {what} {line[:20]!r}")
    return int(line), nxt


def iter_commands(data: bytes, pos: int = 0) -> Iterator[tuple[list[bytes], int, int]]:
    """``(argv, start, end)`` for each command of an AOF's bytes.

    ``#`` lines (Redis's annotations, e.g. ``#TS:``) are skipped.  Raises
    :class:`Truncated` when the data ends inside a command, :class:`Corrupt`
    when it is not RESP.  The loop is written out flat (no helper call per
    header line): loading a large AOF spends much of its time here."""
    size = len(data)
    find = data.find
    while pos < size:
        start = pos
        if data[pos] == 0x23:  # '#': an annotation line
            _, pos = _read_line(data, pos, start)
            continue
        nl = find(b"\r\n", pos)
        if data[pos] != 0x2A or nl < 0:
            argc, pos = _read_int(data, pos, start, 0x2A, "array length")  # raises
        else:
            line = data[pos + 1:nl]
            if not line.isdigit() or len(line) > 19:
                raise Corrupt(pos, f"bad array length {line[:20]!r}")
            argc, pos = int(line), nl + 2
        if argc < 1:
            raise Corrupt(start, "empty command")
        argv = []
        for _ in range(argc):
            nl = find(b"\r\n", pos)
            if pos >= size or data[pos] != 0x24 or nl < 0:
                length, pos = _read_int(data, pos, start, 0x24, "bulk length")  # raises
            else:
                line = data[pos + 1:nl]
                if not line.isdigit() or len(line) > 19:
                    raise Corrupt(pos, f"bad bulk length {line[:20]!r}")
                length, pos = int(line), nl + 2
            end = pos + length
            if end + 2 > size:
                raise Truncated(start)
            if data[end:end + 2] != b"\r\n":
                raise Corrupt(end, "bulk string not ended by CRLF")
            argv.append(data[pos:end])
            pos = end + 2
        yield argv, start, pos


# =====================================================================================
# The manifest
# =====================================================================================
@dataclass
class AofFile:
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


def _fsync_dir(path: str) -> None:
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
    _fsync_dir(os.path.dirname(path) or ".")


# =====================================================================================
# Rewrite: the dataset as commands
# =====================================================================================
def _id(id: StreamID) -> bytes:
    return b"%d-%d" % id


def stream_commands(key: bytes, s: Stream, idmp_defaults: tuple[int, int]) -> Iterator[list[bytes]]:
    """The commands that rebuild one stream (REFERENCE-streams §4.2)."""
    if s.length:
        for id, fv in s.range(MIN_ID, MAX_ID):
            yield [b"XADD", key, _id(id), *fv]
    else:
        # Creates the key, then empties it; XSETID below sets the real IDs.
        yield [b"XADD", key, b"MAXLEN", b"0", b"0-1", b"x", b"y"]
    yield [b"XSETID", key, _id(s.last_id), b"ENTRIESADDED", b"%d" % s.entries_added,
           b"MAXDELETEDID", _id(s.max_deleted_entry_id)]
    for group in s.groups.values():
        yield [b"XGROUP", b"CREATE", key, group.name, _id(group.last_id),
               b"ENTRIESREAD", b"%d" % group.entries_read]
        for consumer in group.consumers.values():
            if not consumer.pel:
                yield [b"XGROUP", b"CREATECONSUMER", key, group.name, consumer.name]
                continue
            for id, entry in consumer.pel.items():
                yield [b"XCLAIM", key, group.name, consumer.name, b"0", _id(id),
                       b"TIME", b"%d" % entry.delivery_time,
                       b"RETRYCOUNT", b"%d" % entry.delivery_count, b"JUSTID", b"FORCE"]
        # Unowned (XNACKed) entries, in release order.
        for id in group._nacked.values():
            entry = group.pel.get(id)
            if entry is not None:
                yield [b"XNACK", key, group.name, b"SILENT", b"IDS", b"1", _id(id),
                       b"RETRYCOUNT", b"%d" % entry.delivery_count, b"FORCE"]
    idmp = s.idmp
    if idmp is not None:
        if (idmp.duration, idmp.maxsize) != idmp_defaults:
            yield [b"XCFGSET", key, b"IDMP-DURATION", b"%d" % idmp.duration,
                   b"IDMP-MAXSIZE", b"%d" % idmp.maxsize]
        for pid, iid, id, _t in idmp.pairs():
            yield [b"XIDMPRECORD", key, pid, iid, _id(id)]


def dataset_commands(engine: Engine) -> Iterator[list[bytes]]:
    """The whole dataset as commands, database by database."""
    defaults = (engine.config["stream-idmp-duration"], engine.config["stream-idmp-maxsize"])
    now = engine.clock.now_ms()
    for db in engine.dbs:
        if not db.data:
            continue
        yield [b"SELECT", b"%d" % db.index]
        for key, value in list(db.data.items()):
            when = db.expires.get(key)
            if when is not None and when <= now:
                continue
            if isinstance(value, Stream):
                yield from stream_commands(key, value, defaults)
                if when is not None:
                    yield [b"PEXPIREAT", key, b"%d" % when]
            elif when is not None:
                yield [b"SET", key, value, b"PXAT", b"%d" % when]
            else:
                yield [b"SET", key, value]


def write_commands_file(engine: Engine, path: str) -> int:
    """Write the dataset as commands to ``path`` (fsynced); returns its size."""
    size = 0
    with open(path, "wb") as fh:
        batch: list[bytes] = []
        for argv in dataset_commands(engine):
            batch.append(encode_command(argv))
            if len(batch) >= 1024:
                data = b"".join(batch)
                fh.write(data)
                size += len(data)
                batch = []
        data = b"".join(batch)
        fh.write(data)
        size += len(data)
        fh.flush()
        os.fsync(fh.fileno())
    return size


def rdb_can_hold(engine: Engine) -> bool:
    """Can an RDB base keep everything?  Not unowned (XNACK'd) pending entries
    or IDMP state, which RDB 10-12 cannot encode.  Cost: O(streams + groups)."""
    for db in engine.dbs:
        for value in db.data.values():
            if isinstance(value, Stream):
                if value.idmp is not None and (value.idmp.producers or
                                               (value.idmp.duration, value.idmp.maxsize) !=
                                               (engine.config["stream-idmp-duration"],
                                                engine.config["stream-idmp-maxsize"])):
                    return False
                if any(group._nacked for group in value.groups.values()):
                    return False
    return True


def _rdb_module() -> Any:
    """The RDB engineer's module, or None while it does not exist."""
    try:
        from . import rdb  # type: ignore[attr-defined]
    except ImportError:
        return None
    return rdb


# =====================================================================================
# Loading
# =====================================================================================
class _Loader:
    def __init__(self, engine: Engine, truncated_ok: bool) -> None:
        self.engine = engine
        self.truncated_ok = truncated_ok
        self.client = engine.new_client(kind="aof")
        self.commands = 0
        self.errors = 0
        self.started = time.monotonic()
        self.last_report = self.started

    def replay_file(self, path: str, last: bool) -> None:
        with open(path, "rb") as fh:
            data = fh.read()
        if data.startswith(b"REDIS"):
            self.load_rdb(path)  # an RDB preamble (Redis 7 still reads these)
            return
        client, engine = self.client, self.engine
        client.db = 0
        multi_start = -1
        try:
            for argv, start, _end in iter_commands(data):
                name = argv[0].lower()
                if name == b"multi":
                    multi_start = start
                elif name == b"exec":
                    multi_start = -1
                reply = engine.execute(client, argv)
                if isinstance(reply, ErrorReply):
                    if reply.message.startswith(b"ERR unknown command"):
                        raise AofLoadError(
                            f"Unknown command '{argv[0].decode(errors='replace')}' reading the "
                            f"append only file {path} at offset {start}")
                    self.errors += 1
                    if self.errors <= 10:
                        log.warning("AOF %s offset %d: %r -> %s", os.path.basename(path), start,
                                    argv[:4], reply.message.decode(errors="replace"))
                self.commands += 1
                if not self.commands % LOAD_PROGRESS_CHECK:
                    now = time.monotonic()
                    if now - self.last_report >= LOAD_PROGRESS_SECONDS:
                        self.last_report = now
                        self.progress(path, start, len(data))
        except Truncated as exc:
            self.truncated(path, exc.offset if multi_start < 0 else multi_start, last, len(data))
        except Corrupt as exc:
            raise AofLoadError(
                f"Bad file format reading the append only file {path}: {exc.why} at offset "
                f"{exc.offset}. Make a backup of your AOF file, then use "
                f"./redis-check-aof --fix <filename.manifest>") from None
        else:
            if multi_start >= 0:  # a MULTI whose EXEC never made it to disk
                self.truncated(path, multi_start, last, len(data))
        client.multi = None
        client.multi_error = False

    def truncated(self, path: str, offset: int, last: bool, size: int) -> None:
        if not last or not self.truncated_ok:
            raise AofLoadError(
                f"Unexpected end of file reading the append only file {path} at offset "
                f"{offset} (of {size} bytes). You can: 1) make a backup of your AOF file, "
                f"then use ./redis-check-aof --fix <filename.manifest>; 2) alternatively set "
                f"'aof-load-truncated yes' in the configuration file and restart the server.")
        log.warning("!!! Warning: short read while loading the AOF file %s!!! "
                    "AOF %s is truncated at offset %d (of %d bytes): the last command was cut "
                    "short; truncating the file there.", path, path, offset, size)
        self.client.multi = None
        with open(path, "r+b") as fh:
            fh.truncate(offset)
            fh.flush()
            os.fsync(fh.fileno())
        log.warning("AOF loaded anyway because aof-load-truncated is enabled")

    def load_rdb(self, path: str) -> None:
        rdb = _rdb_module()
        if rdb is None or not hasattr(rdb, "load_file"):
            raise AofLoadError(
                f"The AOF base file {path} is an RDB file, and this build of Tidelog has no RDB "
                f"loader yet. Start redis-server on this directory, run BGREWRITEAOF with "
                f"'aof-use-rdb-preamble no', then start Tidelog on the result.")
        rdb.load_file(self.engine, path)

    def progress(self, path: str, offset: int, size: int) -> None:
        elapsed = max(time.monotonic() - self.started, 1e-6)
        keys = sum(len(db.data) for db in self.engine.dbs)
        log.info("Loading the AOF: %s %d%% (%d of %d bytes), %d commands, %d keys, "
                 "%.0f commands/s", os.path.basename(path), offset * 100 // max(size, 1),
                 offset, size, self.commands, keys, self.commands / elapsed)

    def close(self) -> None:
        self.engine.client_closed(self.client)


def aof_dir(config: Any) -> str:
    return os.path.join(config["dir"], config["appenddirname"])


def load(engine: Engine) -> bool:
    """Replay the AOF directory into the engine.  False if there is none.

    Raises :class:`AofLoadError` when it cannot be loaded."""
    config = engine.config
    directory = aof_dir(config)
    path = os.path.join(directory, config["appendfilename"] + ".manifest")
    if not os.path.exists(path):
        return False
    with open(path, encoding="utf-8") as fh:
        manifest = Manifest.parse(fh.read(), path)
    files = manifest.files()
    loader = _Loader(engine, config["aof-load-truncated"])
    try:
        for i, item in enumerate(files):
            file_path = os.path.join(directory, item.name)
            if not os.path.exists(file_path):
                if item.type == INCR and i == len(files) - 1:
                    continue  # opened in the manifest, never written to
                raise AofLoadError(f"The AOF file {file_path} listed in {path} doesn't exist")
            loader.replay_file(file_path, last=(i == len(files) - 1))
    finally:
        loader.close()
    elapsed = time.monotonic() - loader.started
    log.info("DB loaded from append only file: %.3f seconds (%d commands, %d keys, "
             "%.0f commands/s)", elapsed, loader.commands,
             sum(len(db.data) for db in engine.dbs), loader.commands / max(elapsed, 1e-6))
    if loader.errors:
        log.warning("%d commands of the AOF replied with an error (the first are logged above)",
                    loader.errors)
    return True


# =====================================================================================
# The writer
# =====================================================================================
class Aof:
    """The AOF of a running server (see the module docstring)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.config = engine.config
        self.dir = aof_dir(self.config)
        self.name = self.config["appendfilename"]
        self.manifest_path = os.path.join(self.dir, self.name + ".manifest")
        self.manifest = Manifest()
        self.buf = bytearray()
        self.db = -1             # database of the last SELECT written
        self.fd = -1
        self.incr_path = ""
        self.current_size = 0    # bytes of base + incrementals
        self.base_size = 0
        self.last_write_ok = True
        self.last_write_error = ""
        self._waiting: list[Callable[[], None]] = []
        self._flush_scheduled = False
        self._loop: Any = None
        self._timer: Any = None
        self._lock = threading.Lock()
        self._unsynced = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # rewrite state
        self.child_pid = -1
        self.rewrite_started = 0.0
        self.rewrite_scheduled = False
        self.last_rewrite_time = -1
        self.last_rewrite_ok = True
        self.rewrites = 0
        self._rewrite_tmp = ""
        self._rewrite_base: AofFile | None = None
        self._rewrite_done: list[Callable[[bool], None]] = []
        # CONFIG SET appendonly yes: writes go to an unlisted temporary
        # incremental file until the first rewrite installs its base.
        self._enabling: AofFile | None = None
        # Whether another child (a BGSAVE) runs: one fork at a time.
        # Durability wires it to its snapshots.
        self.other_child_active: Callable[[], bool] = lambda: False

    # -- starting and stopping ------------------------------------------------------
    def open(self) -> None:
        """Open the directory for appending (after :func:`load`): a new
        base from the dataset if there is none, then an incremental file."""
        self._read_dir()
        if self.manifest.base is None and not self.manifest.incrs:
            base = AofFile(f"{self.name}.1.base.aof", 1, BASE)
            self.base_size = write_commands_file(self.engine, os.path.join(self.dir, base.name))
            self.manifest.base = base
            log.info("Creating AOF base file %s on server start", base.name)
        if not self.manifest.incrs:
            self.manifest.incrs.append(AofFile(f"{self.name}.1.incr.aof", 1, INCR))
            write_atomically(self.manifest_path, self.manifest.text().encode())
            log.info("Creating AOF incr file %s on server start", self.manifest.incrs[-1].name)
        self._open_incr(self.manifest.incrs[-1])
        self.base_size = self._size(self.manifest.base)
        self.current_size = self.base_size + sum(self._size(i) for i in self.manifest.incrs)
        self._start_appending()

    def open_with_rewrite(self, done: Callable[[bool], None] | None = None) -> None:
        """CONFIG SET appendonly yes on a running server: append from now on to
        a temporary incremental file, and start a rewrite (scheduled if a BGSAVE
        runs) that writes the base from the dataset.  Until it finishes the
        manifest is left as it was, so a crash meanwhile loads what was there;
        when it finishes, the base and the temporary file (renamed to the next
        incremental file) replace every file listed before.  ``done(ok)`` is
        called when the rewrite ends.  Raises OSError."""
        self._read_dir()
        seq = max((i.seq for i in self.manifest.incrs), default=0) + 1
        self._enabling = AofFile(f"{self.name}.{seq}.incr.aof", seq, INCR)
        fd = os.open(self._enabling_path(), os.O_WRONLY | os.O_TRUNC | os.O_CREAT, 0o644)
        with self._lock:
            self.fd = fd
        self.incr_path = self._enabling_path()
        self.db = -1
        self.base_size = self.current_size = 0
        self._start_appending()
        if done is not None:
            self._rewrite_done.append(done)
        if self.other_child_active():
            self.rewrite_scheduled = True
        else:
            self.start_rewrite()

    def _enabling_path(self) -> str:
        return os.path.join(self.dir, f"temp-{self.name}.incr")

    def _read_dir(self) -> None:
        """Create the directory, remove files left by an unfinished rewrite,
        read the manifest if there is one."""
        os.makedirs(self.dir, exist_ok=True)
        for name in os.listdir(self.dir):
            if name.startswith("temp-rewriteaof-bg-") or name == f"temp-{self.name}.incr":
                os.unlink(os.path.join(self.dir, name))
        if os.path.exists(self.manifest_path):
            with open(self.manifest_path, encoding="utf-8") as fh:
                self.manifest = Manifest.parse(fh.read(), self.manifest_path)

    def _start_appending(self) -> None:
        self.engine.effect_listeners.append(self.feed)
        if self._thread is None:
            self._thread = threading.Thread(target=self._fsync_loop, name="aof-fsync",
                                            daemon=True)
            self._thread.start()

    def _size(self, item: AofFile | None) -> int:
        if item is None:
            return 0
        try:
            return os.path.getsize(os.path.join(self.dir, item.name))
        except OSError:
            return 0

    def _open_incr(self, item: AofFile) -> None:
        path = os.path.join(self.dir, item.name)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        with self._lock:
            old, self.fd = self.fd, fd
            self.incr_path = path
        if old >= 0:
            os.fsync(old)
            os.close(old)
        self.db = -1  # a new file starts with a SELECT

    def attach(self, loop: Any) -> None:
        """Run on this event loop: flush at the end of each turn, housekeeping timer."""
        self._loop = loop
        self._timer = loop.call_later(0.1, self._tick)

    def close(self) -> None:
        """Flush and fsync everything (SHUTDOWN, SIGTERM), stop the thread."""
        self.flush()
        if self.child_pid > 0:
            try:
                os.kill(self.child_pid, 9)
                os.waitpid(self.child_pid, 0)
            except OSError:
                pass
            self.child_pid = -1
            if self._rewrite_tmp and os.path.exists(self._rewrite_tmp):
                os.unlink(self._rewrite_tmp)
        self._stop.set()
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            fd, self.fd = self.fd, -1
        if fd >= 0:
            os.fsync(fd)
            os.close(fd)
        if self._enabling is not None:  # no base yet: nothing written here would load
            log.warning("The AOF was closed before its first rewrite finished")
            self._enabling = None
            try:
                os.unlink(self._enabling_path())
            except FileNotFoundError:
                pass
        if self.feed in self.engine.effect_listeners:
            self.engine.effect_listeners.remove(self.feed)

    # -- writing --------------------------------------------------------------------
    def feed(self, effects: list[tuple[int, list[bytes]]]) -> None:
        """Effect listener: append to the buffer; flushed at the end of the loop turn."""
        buf = self.buf
        for db, argv in effects:
            if db != self.db:
                buf += encode_command([b"SELECT", b"%d" % db])
                self.db = db
            buf += encode_command(argv)
        if not self._flush_scheduled and self._loop is not None:
            self._flush_scheduled = True
            self._loop.call_soon(self.flush)

    def must_wait(self) -> bool:
        """Must a reply sent now wait for the next flush (``appendfsync always``)?"""
        # Replies already held keep their order even if appendfsync changed since.
        return bool(self._waiting) or (bool(self.buf) and self.config["appendfsync"] == "always")

    def after_flush(self, fn: Callable[[], None]) -> None:
        self._waiting.append(fn)
        if not self._flush_scheduled and self._loop is not None:
            self._flush_scheduled = True
            self._loop.call_soon(self.flush)

    def flush(self) -> None:
        """Write the buffer (and fsync per policy), then release held replies."""
        self._flush_scheduled = False
        if self.buf and self.fd >= 0:
            data = bytes(self.buf)
            try:
                view = memoryview(data)
                while view:
                    n = os.write(self.fd, view)
                    view = view[n:]
                if self.config["appendfsync"] == "always":
                    os.fsync(self.fd)
                else:
                    self._unsynced = True
            except OSError as exc:
                # Keep the data; replies stay held and the next turn retries.
                if self.last_write_ok:
                    log.warning("Error writing to the AOF file: %s", exc)
                self.last_write_ok = False
                self.last_write_error = str(exc)
                if self._loop is not None:
                    self._timer_retry()
                return
            del self.buf[:len(data)]
            self.current_size += len(data)
            if not self.last_write_ok:
                log.warning("AOF write error looks solved, Redis can write again.")
            self.last_write_ok = True
        waiting, self._waiting = self._waiting, []
        for fn in waiting:
            fn()

    def _timer_retry(self) -> None:
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self._loop.call_later(0.1, self.flush)

    def _fsync_loop(self) -> None:
        """``appendfsync everysec``: fsync what was written, once a second."""
        while not self._stop.wait(1.0):
            if not self._unsynced or self.config["appendfsync"] != "everysec":
                continue
            with self._lock:
                fd = self.fd
                self._unsynced = False
                if fd >= 0:
                    try:
                        os.fsync(fd)
                    except OSError as exc:
                        log.warning("fsync of the AOF failed: %s", exc)

    # -- rewriting ------------------------------------------------------------------
    @property
    def rewriting(self) -> bool:
        return self.child_pid > 0

    def start_rewrite(self, done: Callable[[bool], None] | None = None) -> None:
        """BGREWRITEAOF: fork a child that writes the new base."""
        if self.rewriting:
            raise RuntimeError("Background append only file rewriting already in progress")
        self.flush()
        if self._enabling is None:
            # New writes go to a new incremental file, listed at once.
            next_incr = max((i.seq for i in self.manifest.incrs), default=0) + 1
            incr = AofFile(f"{self.name}.{next_incr}.incr.aof", next_incr, INCR)
            self.manifest.incrs.append(incr)
            write_atomically(self.manifest_path, self.manifest.text().encode())
            self._open_incr(incr)
        base_seq = (self.manifest.base.seq if self.manifest.base else 0) + 1
        rdb = _rdb_module() if self.config["aof-use-rdb-preamble"] else None
        as_rdb = rdb is not None and hasattr(rdb, "write_file")
        if as_rdb and not rdb_can_hold(self.engine):
            log.info("AOF rewrite: the dataset has XNACK'd entries or IDMP state, which RDB "
                     "cannot hold: writing the base as commands")
            as_rdb = False
        ext = "rdb" if as_rdb else "aof"
        self._rewrite_base = AofFile(f"{self.name}.{base_seq}.base.{ext}", base_seq, BASE)
        self.rewrite_started = time.monotonic()
        self.rewrite_scheduled = False
        tmp = os.path.join(self.dir, f"temp-rewriteaof-bg-{os.getpid()}.aof")
        self._rewrite_tmp = tmp
        pid = os.fork()
        if pid == 0:  # the child: write the dataset, nothing else
            code = 1
            try:
                if as_rdb:
                    rdb.write_file(self.engine, tmp)
                else:
                    write_commands_file(self.engine, tmp)
                code = 0
            finally:
                os._exit(code)
        self.child_pid = pid
        if done is not None:
            self._rewrite_done.append(done)
        log.info("Background append only file rewriting started by pid %d", pid)

    def wait_rewrite(self, timeout: float = 60.0) -> bool:
        """Block until the rewrite child exits and finish it (tests, DEBUG)."""
        deadline = time.monotonic() + timeout
        while self.rewriting and time.monotonic() < deadline:
            self._check_child()
            if self.rewriting:
                time.sleep(0.01)
        return self.last_rewrite_ok

    def _check_child(self) -> None:
        if self.child_pid <= 0:
            return
        pid, status = os.waitpid(self.child_pid, os.WNOHANG)
        if pid == 0:
            return
        self.child_pid = -1
        ok = os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        if ok:
            try:
                self._install_base()
            except OSError as exc:
                log.warning("Could not install the rewritten AOF: %s", exc)
                ok = False
        if not ok:
            log.warning("Background AOF rewrite terminated with error")
            if os.path.exists(self._rewrite_tmp):
                os.unlink(self._rewrite_tmp)
        else:
            log.info("Background AOF rewrite finished successfully")
        self.last_rewrite_ok = ok
        self.last_rewrite_time = int(round(time.monotonic() - self.rewrite_started))
        self.rewrites += 1
        done, self._rewrite_done = self._rewrite_done, []
        for fn in done:
            fn(ok)

    def _install_base(self) -> None:
        base = self._rewrite_base
        assert base is not None
        os.replace(self._rewrite_tmp, os.path.join(self.dir, base.name))
        old = self.manifest
        if self._enabling is not None:  # the first rewrite after CONFIG SET appendonly yes
            current, self._enabling = self._enabling, None
            path = os.path.join(self.dir, current.name)
            os.replace(self._enabling_path(), path)  # the open fd follows the file
            self.incr_path = path
            old.history += old.files()  # everything listed before goes
        else:
            current = old.incrs[-1]
        _fsync_dir(self.dir)
        self.manifest = Manifest(base=base, incrs=[current])
        write_atomically(self.manifest_path, self.manifest.text().encode())
        for item in ([old.base] if old.base else []) + old.incrs[:-1] + old.history:
            if item.name in (base.name, current.name):
                continue
            try:
                os.unlink(os.path.join(self.dir, item.name))
            except FileNotFoundError:
                pass
        self.base_size = self._size(base)
        self.current_size = self.base_size + self._size(current)

    def _tick(self) -> None:
        """Every 100 ms: reap the rewrite child, start an automatic rewrite."""
        try:
            self._check_child()
            if self.last_write_ok and self.buf:
                self.flush()
            if not self.rewriting and not self.other_child_active():
                pct = self.config["auto-aof-rewrite-percentage"]
                min_size = self.config["auto-aof-rewrite-min-size"]
                if self.rewrite_scheduled or (pct and self.current_size > min_size and
                                              self.current_size > self.base_size * (100 + pct) / 100):
                    if self.rewrite_scheduled:
                        log.info("Starting the scheduled AOF rewrite")
                    else:
                        log.info("Starting automatic rewriting of AOF on %d%% growth", pct)
                    self.start_rewrite()
        except Exception:  # a bug: keep serving, but say so
            log.exception("AOF housekeeping failed")
            self.engine.internal_errors += 1
        finally:
            if not self._stop.is_set() and self._loop is not None:
                self._timer = self._loop.call_later(0.1, self._tick)

    # -- INFO -----------------------------------------------------------------------
    def info_lines(self) -> list[str]:
        current = int(time.monotonic() - self.rewrite_started) if self.rewriting else -1
        return [
            "aof_enabled:1",
            f"aof_rewrite_in_progress:{int(self.rewriting)}",
            f"aof_rewrite_scheduled:{int(self.rewrite_scheduled)}",
            f"aof_last_rewrite_time_sec:{self.last_rewrite_time}",
            f"aof_current_rewrite_time_sec:{current}",
            f"aof_last_bgrewrite_status:{'ok' if self.last_rewrite_ok else 'err'}",
            f"aof_rewrites:{self.rewrites}",
            f"aof_last_write_status:{'ok' if self.last_write_ok else 'err'}",
            f"aof_current_size:{self.current_size}",
            f"aof_base_size:{self.base_size}",
            f"aof_buffer_length:{len(self.buf)}",
        ]


def set_appendonly(durability: Any, on: bool) -> None:
    """CONFIG SET appendonly on a running server, for the engine's
    :class:`~tidelog.persistence.durability.Durability` (its ``aof``, the
    event loop it runs on, and ``install_gate(writer)``, which makes
    ``writer``, or None, the server's write gate).

    ``yes`` while off: a writer that appends from now on, and a rewrite that
    writes the base from the dataset (:meth:`Aof.open_with_rewrite`); if that
    rewrite fails the AOF is turned off again, as Redis does.  ``no`` while on:
    flush and fsync, stop appending, close the files; the directory stays.
    Raises OSError when the AOF cannot be started."""
    engine = durability.engine
    current = durability.aof
    if on and current is None:
        writer = Aof(engine)

        def done(ok: bool) -> None:
            if not ok and durability.aof is writer:
                log.warning("The first AOF rewrite failed: turning the AOF off")
                writer.close()
                durability.aof = None
                engine.config.set("appendonly", "no")
                durability.install_gate(None)

        durability.aof = writer  # wired to the snapshots before it may fork
        try:
            writer.open_with_rewrite(done)
        except OSError:
            durability.aof = None
            writer.close()
            raise
        writer.attach(durability.loop)
        durability.install_gate(writer)
        log.info("AOF enabled: writing the base file in the background")
    elif not on and current is not None:
        current.close()
        durability.aof = None
        durability.install_gate(None)
        log.info("AOF disabled: the files are closed")


def reload(engine: Engine, aof: Aof) -> None:
    """DEBUG LOADAOF: flush the AOF, empty the dataset, load it again."""
    aof.flush()
    listeners = engine.effect_listeners
    saved = list(listeners)
    listeners[:] = []  # replaying must not append to the AOF again
    try:
        for db in engine.dbs:
            db.flush()
        load(engine)
    finally:
        listeners[:] = saved
