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

With ``appendonly no`` BGREWRITEAOF still rewrites, as Redis 7 does: an
``Aof`` made with ``enabled=False`` (:meth:`Aof.open_for_rewrite`) appends
nothing and opens no incremental file; its rewrite leaves a manifest that
lists the new base alone, and deletes every file listed before.

``aof-use-rdb-preamble``: a rewrite writes its base as RDB
(``persistence.rdb.write_file``) when the dataset holds nothing RDB cannot
encode (XNACK'd entries, IDMP state), as commands otherwise.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..clock import next_beat
from ..commands.effects import Effect, encoded
from . import rdb
from .aof_format import encode_command
from .aof_manifest import BASE, INCR, AofFile, Manifest, aof_dir, fsync_dir, write_atomically
from .aof_rewrite import rdb_can_hold, write_commands_file
from .snapshot import forked

TICK_S = 0.1
"""The AOF housekeeping timer's period (reap the rewrite child, start a rewrite)."""

if TYPE_CHECKING:
    from ..engine import Engine

log = logging.getLogger("tidelog")


class Aof:
    """The AOF of a running server (see the module docstring)."""

    def __init__(self, engine: Engine, enabled: bool = True) -> None:
        self.engine = engine
        # False: ``appendonly no``, only BGREWRITEAOF (see the module docstring).
        self.enabled = enabled
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
        # WAITAOF: the replication offset of the last write given to the
        # file, and of the last one known to be on disk (fsynced; with
        # ``appendfsync no``, written).
        self.written_offset = 0
        self.fsynced_offset = 0
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

    def open_for_rewrite(self) -> None:
        """``appendonly no``: read the directory (created if missing) for a
        rewrite that only replaces the base; nothing is appended."""
        self._read_dir()

    def inherit(self, other: Aof) -> None:
        """Carry INFO's rewrite counters over from the AOF (on or off) this
        one follows: Redis keeps them for the server's life."""
        self.rewrites = other.rewrites
        self.last_rewrite_ok = other.last_rewrite_ok
        self.last_rewrite_time = other.last_rewrite_time

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
        self._timer = loop.call_at(next_beat(loop.time(), TICK_S), self._tick)

    def close(self) -> None:
        """Flush and fsync everything (SHUTDOWN, SIGTERM), stop the thread."""
        self.flush()
        self.rewrite_scheduled = False
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
    def feed(self, effects: list[tuple[int, Effect]]) -> None:
        """Effect listener: append to the buffer (each effect's Redis 8 form,
        encoded once for every listener); flushed at the end of the loop turn."""
        buf = self.buf
        listeners = len(self.engine.effect_listeners)
        if listeners > 1:  # the replication stream reads the same bytes
            for (db, _), data in zip(effects, encoded(effects, listeners)):
                if db != self.db:
                    buf += encode_command([b"SELECT", b"%d" % db])
                    self.db = db
                buf += data
        else:
            for db, effect in effects:
                if db != self.db:
                    buf += encode_command([b"SELECT", b"%d" % db])
                    self.db = db
                buf += encode_command(effect if isinstance(effect, list) else effect.argv())
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
            timed = self.engine.latency_threshold_ms  # LATENCY: time only when it listens
            try:
                started = time.monotonic_ns() if timed else 0
                view = memoryview(data)
                while view:
                    n = os.write(self.fd, view)
                    view = view[n:]
                if timed:
                    written = time.monotonic_ns()
                    self.engine.latency_sample("aof-write", (written - started) // 1_000_000)
                offset = self.engine.replication.offset  # what this write covers
                policy = self.config["appendfsync"]
                if policy == "always":
                    os.fsync(self.fd)
                    if timed:
                        self.engine.latency_sample(
                            "aof-fsync-always", (time.monotonic_ns() - written) // 1_000_000)
                    self._synced(offset)
                elif policy == "no":
                    self._synced(offset)  # as Redis: written counts as synced
                else:
                    with self._lock:
                        self.written_offset = offset
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
                target = self.written_offset
                if fd < 0:
                    continue
                try:
                    os.fsync(fd)
                except OSError as exc:
                    log.warning("fsync of the AOF failed: %s", exc)
                    continue
            if self._loop is not None:
                self._loop.call_soon_threadsafe(self._synced, target)

    def _synced(self, offset: int) -> None:
        """The writes up to replication offset ``offset`` are on disk:
        WAITAOF's clients count again (on the loop thread)."""
        if offset > self.fsynced_offset:
            self.fsynced_offset = offset
            self.engine.replication.acks_changed()

    # -- rewriting ------------------------------------------------------------------
    @property
    def rewriting(self) -> bool:
        return self.child_pid > 0

    def start_rewrite(self, done: Callable[[bool], None] | None = None) -> None:
        """BGREWRITEAOF: fork a child that writes the new base."""
        if self.rewriting:
            raise RuntimeError("Background append only file rewriting already in progress")
        self.flush()
        if self.enabled and self._enabling is None:
            # New writes go to a new incremental file, listed at once.
            next_incr = max((i.seq for i in self.manifest.incrs), default=0) + 1
            incr = AofFile(f"{self.name}.{next_incr}.incr.aof", next_incr, INCR)
            self.manifest.incrs.append(incr)
            write_atomically(self.manifest_path, self.manifest.text().encode())
            self._open_incr(incr)
        base_seq = (self.manifest.base.seq if self.manifest.base else 0) + 1
        as_rdb = bool(self.config["aof-use-rdb-preamble"])
        if as_rdb and not rdb_can_hold(self.engine):
            log.info("AOF rewrite: the dataset has XNACK'd entries, IDMP state or staged "
                     "copies (TIDELOG.STAGE), which RDB cannot hold: writing the base as "
                     "commands")
            as_rdb = False
        ext = "rdb" if as_rdb else "aof"
        self._rewrite_base = AofFile(f"{self.name}.{base_seq}.base.{ext}", base_seq, BASE)
        self.rewrite_started = time.monotonic()
        self.rewrite_scheduled = False
        tmp = os.path.join(self.dir, f"temp-rewriteaof-bg-{os.getpid()}.aof")
        self._rewrite_tmp = tmp
        started = time.perf_counter_ns()
        pid = os.fork()
        if pid:
            forked(self.engine, started)
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
        if not self.enabled:  # appendonly no: the base alone, every older file goes
            fsync_dir(self.dir)
            self.manifest = Manifest(base=base)
            write_atomically(self.manifest_path, self.manifest.text().encode())
            for item in ([old.base] if old.base else []) + old.incrs + old.history:
                if item.name != base.name:
                    try:
                        os.unlink(os.path.join(self.dir, item.name))
                    except FileNotFoundError:
                        pass
            self.base_size = self.current_size = self._size(base)
            return
        if self._enabling is not None:  # the first rewrite after CONFIG SET appendonly yes
            current, self._enabling = self._enabling, None
            path = os.path.join(self.dir, current.name)
            os.replace(self._enabling_path(), path)  # the open fd follows the file
            self.incr_path = path
            old.history += old.files()  # everything listed before goes
        else:
            current = old.incrs[-1]
        fsync_dir(self.dir)
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
                # appendonly no: only a scheduled BGREWRITEAOF, no growth rewrite
                pct = self.config["auto-aof-rewrite-percentage"] if self.enabled else 0
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
                self._timer = self._loop.call_at(next_beat(self._loop.time(), TICK_S), self._tick)

    # -- INFO -----------------------------------------------------------------------
    def info_lines(self, enabled: bool | None = None) -> list[str]:
        """INFO persistence's AOF lines; ``enabled=False``: as after
        CONFIG SET appendonly no (the counters, not the sizes)."""
        if enabled is None:
            enabled = self.enabled
        current = int(time.monotonic() - self.rewrite_started) if self.rewriting else -1
        lines = [
            f"aof_enabled:{int(enabled)}",
            f"aof_rewrite_in_progress:{int(self.rewriting)}",
            f"aof_rewrite_scheduled:{int(self.rewrite_scheduled)}",
            f"aof_last_rewrite_time_sec:{self.last_rewrite_time}",
            f"aof_current_rewrite_time_sec:{current}",
            f"aof_last_bgrewrite_status:{'ok' if self.last_rewrite_ok else 'err'}",
            f"aof_rewrites:{self.rewrites}",
            f"aof_last_write_status:{'ok' if self.last_write_ok else 'err'}",
        ]
        if enabled:
            lines += [
                f"aof_current_size:{self.current_size}",
                f"aof_base_size:{self.base_size}",
                f"aof_buffer_length:{len(self.buf)}",
            ]
        return lines
