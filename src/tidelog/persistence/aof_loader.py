"""Loading the AOF: the base, then the incremental files, as a client of kind ``"aof"``.

A command cut short at the end of the last file is a crash during a write:
with ``aof-load-truncated yes`` the file is truncated to the last whole
command, with a warning; with ``no`` the start is refused.  Anything else
malformed stops the start with the file, the offset, and what to do.  An
RDB base (``aof-use-rdb-preamble``) is read by :mod:`tidelog.persistence.rdb`.
"""

from __future__ import annotations

import gc
import logging
import os
import time
from typing import TYPE_CHECKING

from .. import kernels
from ..errors import UNKNOWN_COMMAND_PREFIX
from ..ids import InvalidStreamID, StreamID, parse_strict_id
from ..resp import parser as request_parser
from ..resp.replies import ErrorReply
from ..types.stream import Stream
from . import rdb
from .aof_format import (
    AofLoadError,
    Corrupt,
    Stretch,
    Truncated,
    iter_commands,
    iter_stretches,
)
from .aof_manifest import INCR, Manifest, aof_dir

if TYPE_CHECKING:
    from ..engine import Engine
    from .aof import Aof

log = logging.getLogger("tidelog")


LOAD_PROGRESS_CHECK = 10_000   # commands between looks at the clock while loading
LOAD_PROGRESS_SECONDS = 2.0    # a progress line at most this often on long loads
BATCH_MAX = 1024               # XADDs queued for one Stream.extend at most


# =====================================================================================
# RESP
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
        self.fast = 0  # commands applied by the fast path (see _fast_xadd)
        # (db, key, stream) of the last fast XADD; forgotten whenever the
        # engine runs a command, which could replace or delete that key.
        self.last_stream: tuple[int, bytes, Stream] | None = None
        # XADDs to that same stream queued after it (see _batch_xadd): their
        # IDs and field/value lists, and the ID the stream will end at.
        self.batch_ids: list[StreamID] = []
        self.batch_fvs: list[list[bytes]] = []
        self.batch_last: StreamID | None = None
        self.node_entries = engine.config["stream-node-max-entries"]
        self.node_bytes = engine.config["stream-node-max-bytes"]

    def replay_file(self, path: str, last: bool) -> None:
        with open(path, "rb") as fh:
            rdb_preamble = fh.read(5) == b"REDIS"
            if not rdb_preamble:
                fh.seek(0)
                data = fh.read()
        if rdb_preamble:
            self.load_rdb(path)  # an RDB preamble (Redis 7 still reads these); it reads the file
            return
        client, engine = self.client, self.engine
        client.db = 0
        multi_start = -1
        listeners = engine.effect_listeners
        # The request parser decodes faster than the plain walk only compiled.
        if kernels.is_compiled(request_parser):
            stretches = iter_stretches(data)
        else:
            stretches = (Stretch([argv], start, [start, end])
                         for argv, start, end in iter_commands(data))
        try:
            for stretch in stretches:
                argvs = stretch.argvs
                i = 0
                count = len(argvs)
                while i < count:
                    if self.last_stream is not None and client.multi is None and not listeners:
                        j = self._batch_run(argvs, i)
                        if j > i:
                            self.commands += j - i
                            i = j
                            continue
                    argv = argvs[i]
                    name = argv[0].lower()
                    if name == b"multi":
                        multi_start = stretch.start(i)
                    elif name == b"exec":
                        multi_start = -1
                    self._replay_one(argv, stretch, i, path, len(data))
                    i += 1
        except Truncated as exc:
            self.flush()
            self.truncated(path, exc.offset if multi_start < 0 else multi_start, last, len(data))
        except Corrupt as exc:
            self.flush()  # what came before the damage is applied, as one by one
            raise AofLoadError(
                f"Bad file format reading the append only file {path}: {exc.why} at offset "
                f"{exc.offset}. Make a backup of your AOF file, then use "
                f"./redis-check-aof --fix <filename.manifest>") from None
        else:
            self.flush()
            if multi_start >= 0:  # a MULTI whose EXEC never made it to disk
                self.truncated(path, multi_start, last, len(data))
        client.multi = None
        client.multi_error = False

    def _fast_xadd(self, argv: list[bytes]) -> bool:
        """Apply ``XADD key <ms>-<seq> field value ...`` (the form every XADD
        takes in the AOF) straight to the stream, with the engine's result:
        the entry appended, the key created, the write counted in ``dirty``
        and the command statistics.  False, having changed nothing, for any
        other form or any case the engine would refuse (the engine then
        runs it and gives its reply)."""
        n = len(argv)
        if n < 5 or not n & 1:
            return False
        text = argv[2]
        if not text or not 0x30 <= text[0] <= 0x39:  # an option, *, or not an ID
            return False
        try:
            new_id, seq_given = parse_strict_id(text)
        except InvalidStreamID:
            return False
        if not seq_given or (new_id[0] == 0 and new_id[1] == 0):
            return False
        engine = self.engine
        key = argv[1]
        index = self.client.db
        last = self.last_stream
        if last is not None and last[0] == index and last[1] == key:
            stream = last[2]  # the key the previous fast XADD wrote, unchanged since
            created = False
        else:
            db = engine.dbs[index]
            stream = db.get(key)
            created = stream is None
            if created:
                stream = Stream()
            elif type(stream) is not Stream:
                return False
        if new_id <= stream.last_id:
            return False
        if type(new_id) is not StreamID:
            new_id = StreamID(*new_id)
        stream.append(new_id, argv[3:], self.node_entries, self.node_bytes)
        if last is None or last[2] is not stream:
            if created:
                db.set(key, stream)
            else:
                db.touch(key)
            # A key with a TTL is looked up each time, so that it expires as
            # the engine would expire it.
            self.last_stream = None if key in db.expires else (index, key, stream)
        self.batch_last = new_id
        engine.count_loaded("xadd", 1)
        self.fast += 1
        return True

    def _replay_one(self, argv: list[bytes], stretch: Stretch, i: int, path: str,
                    size: int) -> None:
        """Command ``i`` of ``stretch`` (not one :meth:`_batch_run` took): by
        :meth:`_fast_xadd` when it can, else by the engine."""
        client, engine = self.client, self.engine
        name = argv[0].lower()
        if name == b"xadd" and client.multi is None and not engine.effect_listeners:
            self.flush()
            if self._fast_xadd(argv):
                self.commands += 1
                return
        self.flush()
        self.last_stream = None
        reply = engine.load_command(client, argv)
        if isinstance(reply, ErrorReply):
            if reply.message.startswith(UNKNOWN_COMMAND_PREFIX):
                raise AofLoadError(
                    f"Unknown command '{argv[0].decode(errors='replace')}' reading the "
                    f"append only file {path} at offset {stretch.start(i)}")
            self.errors += 1
            if self.errors <= 10:
                log.warning("AOF %s offset %d: %r -> %s", os.path.basename(path),
                            stretch.start(i), argv[:4], reply.message.decode(errors="replace"))
        self.commands += 1
        if not self.commands % LOAD_PROGRESS_CHECK:
            now = time.monotonic()
            if now - self.last_report >= LOAD_PROGRESS_SECONDS:
                self.last_report = now
                self.progress(path, stretch.start(i), size)

    def _batch_run(self, argvs: list[list[bytes]], i: int) -> int:
        """Queue for :meth:`flush` the run of commands ``argvs[i:j]`` that are
        each ``XADD key <ms>-<seq> field value ...`` to the stream the last
        fast XADD wrote (``last_stream``), in the same form and with the same
        checks as :meth:`_fast_xadd`, their IDs increasing above every one
        queued.  Returns ``j`` (``i``: nothing queued).

        Applied together, a run of XADDs costs one ``Stream.extend`` and one
        update of the counters instead of one of each per command; nothing
        else can see the stream before the flush, which comes before any
        other command runs."""
        db, key, _stream = self.last_stream  # type: ignore[misc]
        if self.client.db != db:
            return i
        prev = self.batch_last
        ids = self.batch_ids
        fvs = self.batch_fvs
        j = i
        stop = min(len(argvs), i + BATCH_MAX - len(ids))
        while j < stop:
            argv = argvs[j]
            n = len(argv)
            if n < 5 or not n & 1 or argv[1] != key or argv[0].lower() != b"xadd":
                break
            text = argv[2]
            if not text or not 0x30 <= text[0] <= 0x39:  # an option, *, or not an ID
                break
            try:
                new_id, seq_given = parse_strict_id(text)
            except InvalidStreamID:
                break
            if not seq_given or new_id <= prev:  # above the last: never 0-0
                break
            if type(new_id) is not StreamID:
                new_id = StreamID(*new_id)
            ids.append(new_id)
            fvs.append(argv[3:])
            prev = new_id
            j += 1
        self.batch_last = prev
        if len(ids) >= BATCH_MAX:
            self.flush()
        return j

    def flush(self) -> None:
        """Apply the queued XADDs to their stream, with the engine's counters."""
        ids = self.batch_ids
        if not ids:
            return
        self.last_stream[2].extend(  # type: ignore[index]
            ids, self.batch_fvs, self.node_entries, self.node_bytes)
        engine = self.engine
        engine.count_loaded("xadd", len(ids))
        self.fast += len(ids)
        ids.clear()  # the same lists: _batch_run holds them while it queues
        self.batch_fvs.clear()

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
        rdb.load_file(self.engine, path)

    def progress(self, path: str, offset: int, size: int) -> None:
        elapsed = max(time.monotonic() - self.started, 1e-6)
        keys = sum(len(db.data) for db in self.engine.dbs)
        log.info("Loading the AOF: %s %d%% (%d of %d bytes), %d commands, %d keys, "
                 "%.0f commands/s", os.path.basename(path), offset * 100 // max(size, 1),
                 offset, size, self.commands, keys, self.commands / elapsed)

    def close(self) -> None:
        self.engine.client_closed(self.client)


def load(engine: Engine) -> bool:
    """Replay the AOF directory into the engine.  False if there is none.

    Raises :class:`AofLoadError` when it cannot be loaded.  The cyclic
    garbage collector is paused meanwhile, as for an RDB load: a replay
    makes many objects that live on (nodes, their field lists) and next to
    no cyclic garbage, and the collector's passes over them cost about a
    tenth of the time."""
    config = engine.config
    directory = aof_dir(config)
    path = os.path.join(directory, config["appendfilename"] + ".manifest")
    if not os.path.exists(path):
        return False
    with open(path, encoding="utf-8") as fh:
        manifest = Manifest.parse(fh.read(), path)
    files = manifest.files()
    loader = _Loader(engine, config["aof-load-truncated"])
    gc_enabled = gc.isenabled()
    gc.disable()
    try:
        for i, item in enumerate(files):
            file_path = os.path.join(directory, item.name)
            if not os.path.exists(file_path):
                if item.type == INCR and i == len(files) - 1:
                    continue  # opened in the manifest, never written to
                raise AofLoadError(f"The AOF file {file_path} listed in {path} doesn't exist")
            loader.replay_file(file_path, last=(i == len(files) - 1))
        # TIDELOG.STAGE copies whose move never ended (the server stopped
        # mid-move): nobody will append to them again.
        engine.drop_staged()
    finally:
        if gc_enabled:
            gc.enable()
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

def reload(engine: Engine, aof: Aof) -> None:
    """DEBUG LOADAOF: flush the AOF, empty the dataset, load it again."""
    aof.flush()
    listeners = engine.effect_listeners
    saved = list(listeners)
    listeners[:] = []  # replaying must not append to the AOF again
    try:
        for db in engine.dbs:
            db.flush()
        engine.tracking.flushed()
        load(engine)
    finally:
        listeners[:] = saved
