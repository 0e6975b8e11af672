"""The engine's persistence: snapshots and the AOF behind one declared interface.

The engine holds a :class:`~tidelog.commands.contract.Persistence`
(``engine.persistence``): what commands may ask of durability (INFO's lines,
CONFIG SET appendonly, SHUTDOWN's save).  :func:`attach` replaces the
engine's inert default with a :class:`Durability`, which owns

* ``snapshots`` -- the :class:`~tidelog.persistence.snapshot.Snapshotter`
  (SAVE, BGSAVE, save points);
* ``aof`` -- the running :class:`~tidelog.persistence.aof.Aof`, or None
  with ``appendonly no``;
* with ``appendonly no``, an ``Aof`` that only rewrites (:meth:`Durability.rewriter`,
  made by the first BGREWRITEAOF), which keeps INFO's rewrite counters;

and wires the two so that only one child forks at a time.  The server
attaches it at start (``tidelog-server``, the embedded server); a bare
engine (a unit test) gets one from :func:`attach`.  The persistence
commands (SAVE, BGSAVE, LASTSAVE, BGREWRITEAOF, DEBUG RELOAD / LOADAOF) are
in the command layer with the others: they read their arguments there and
ask for the work through the interface (:meth:`Durability.save` ...).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import errors
from ..commands.contract import AOF_OFF_INFO
from ..errors import CommandError
from ..resp.replies import SimpleString
from . import aof as aof_module
from . import aof_loader, aof_switch, rdb
from .snapshot import Snapshotter

if TYPE_CHECKING:
    from ..engine import Engine

log = logging.getLogger("tidelog")

REWRITE_STARTED = SimpleString(b"Background append only file rewriting started")
REWRITE_SCHEDULED = SimpleString(b"Background append only file rewriting scheduled")
BGSAVE_STARTED = SimpleString(b"Background saving started")
BGSAVE_SCHEDULED = SimpleString(b"Background saving scheduled")

class Durability:
    """Snapshots and the AOF of one engine (the engine's ``persistence``)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._snapshots: Any = None
        self._aof: Any = None
        # appendonly no: the Aof that only rewrites (BGREWRITEAOF), or None;
        # last: the latest of either, whose rewrite counters the next one keeps.
        self._offline: Any = None
        self._last: Any = None
        self.loop: Any = None  # the event loop the AOF's timers run on
        # Makes a writer (or None) the server's write gate: replies wait for
        # the AOF.  The server installs it; without a server there is none.
        self.install_gate: Callable[[Any], None] = lambda writer: None
        self.snapshots = Snapshotter(engine)

    # One child at a time: each side asks the other whether it has one.
    @property
    def snapshots(self) -> Snapshotter:
        return self._snapshots

    @snapshots.setter
    def snapshots(self, snapshots: Snapshotter) -> None:
        self._snapshots = snapshots
        snapshots.other_child_active = self._aof_rewriting

    @property
    def aof(self) -> aof_module.Aof | None:
        return self._aof

    @aof.setter
    def aof(self, writer: aof_module.Aof | None) -> None:
        if writer is not None:
            if self._offline is not None:  # its rewrite stops, as Redis's on enabling
                self._offline.close()
                self._offline = None
            if self._last is not None and self._last is not writer:
                writer.inherit(self._last)
            writer.other_child_active = self._bgsave_running
            self._last = writer
        self._aof = writer

    def rewriter(self) -> aof_module.Aof:
        """What BGREWRITEAOF rewrites: the running AOF, or with ``appendonly
        no`` one that only writes a new base (made on first use).  Raises
        OSError when the directory cannot be made or read."""
        if self._aof is not None:
            return self._aof
        if self._offline is None:
            offline = aof_module.Aof(self.engine, enabled=False)
            offline.open_for_rewrite()
            if self._last is not None:
                offline.inherit(self._last)
            offline.other_child_active = self._bgsave_running
            if self.loop is not None:
                offline.attach(self.loop)
            self._offline = self._last = offline
        return self._offline

    def _aof_rewriting(self) -> bool:
        return any(w is not None and bool(w.rewriting) for w in (self._aof, self._offline))

    def _bgsave_running(self) -> bool:
        return bool(self._snapshots.in_progress)

    # -- the Persistence interface ------------------------------------------------------
    def info_lines(self) -> list[str]:
        if self._aof is not None:
            aof_lines = self._aof.info_lines()
        elif self._last is not None:  # off: the rewrite counters stay
            aof_lines = self._last.info_lines(enabled=False)
        else:
            aof_lines = list(AOF_OFF_INFO)
        return self._snapshots.info_lines() + aof_lines

    def set_appendonly(self, on: bool) -> None:
        if self.loop is None:  # no server: the option is only recorded
            return
        aof_switch.set_appendonly(self, on)

    def shutdown_save(self, save: bool | None) -> bool:
        return self._snapshots.shutdown_save(save)

    def save(self) -> None:
        """SAVE: O(N) in the data set."""
        snap = self._snapshots
        if snap.in_progress:
            raise CommandError(errors.BGSAVE_IN_PROGRESS)
        if not snap.save():
            raise CommandError(errors.SAVE_FAILED)

    def bgsave(self, schedule: bool, in_exec: bool) -> SimpleString:
        """BGSAVE: forks the child, or schedules it (inside EXEC, or while
        the AOF's rewrite child runs and SCHEDULE was given).  O(1)."""
        snap = self._snapshots
        if snap.in_progress:
            raise CommandError(errors.BGSAVE_IN_PROGRESS)
        if snap.other_child_active() or in_exec:
            # Inside EXEC, or while the AOF rewrite child runs: the cron forks later.
            if not (schedule or in_exec):
                raise CommandError(errors.BGSAVE_CHILD_ACTIVE)
            snap.scheduled = True
            return BGSAVE_SCHEDULED
        if not snap.bgsave():
            raise CommandError(errors.SAVE_FAILED)
        return BGSAVE_STARTED

    def last_save(self) -> int:
        return int(self._snapshots.last_save)

    def rewrite_aof(self) -> SimpleString:
        """BGREWRITEAOF: the rewrite of the running AOF, or with ``appendonly
        no`` a new base alone; scheduled while a BGSAVE child runs.  O(1)."""
        try:
            writer = self.rewriter()
        except OSError as exc:
            raise errors.rewrite_failed(str(exc)) from None
        if writer.rewriting:
            raise CommandError(errors.REWRITE_IN_PROGRESS)
        if writer.other_child_active():  # a BGSAVE runs: the AOF's timer starts it afterwards
            writer.rewrite_scheduled = True
            return REWRITE_SCHEDULED
        try:
            writer.start_rewrite()
        except OSError as exc:
            raise errors.rewrite_failed(str(exc)) from None
        return REWRITE_STARTED

    def reload(self, save: bool, flush: bool, merge: bool) -> None:
        """DEBUG RELOAD: save the snapshot (unless not ``save``), empty every
        database (unless not ``flush``), load it back.  O(N)."""
        if save and not self._snapshots.save():
            raise CommandError(errors.DEBUG_RELOAD_SAVE_FAILED)
        try:
            rdb.load_file(self.engine, flush=flush, merge=merge)
        except (OSError, rdb.RdbError) as exc:
            log.warning("DEBUG RELOAD: %s", exc)
            raise CommandError(errors.DEBUG_RELOAD_LOAD_FAILED) from None
        log.info("DB reloaded by DEBUG RELOAD")

    def load_aof(self) -> None:
        """DEBUG LOADAOF: the running AOF flushed and loaded again (with
        ``appendonly no``, the AOF directory's files, if any).  O(N)."""
        engine = self.engine
        try:
            if self._aof is not None:
                aof_loader.reload(engine, self._aof)
            else:
                for db in engine.dbs:
                    db.flush()
                engine.tracking.flushed()
                aof_loader.load(engine)
        except aof_loader.AofLoadError as exc:
            raise errors.aof_load_failed(str(exc)) from None

    # -- the server's side ----------------------------------------------------------------
    def bind(self, loop: asyncio.AbstractEventLoop,
             install_gate: Callable[[Any], None]) -> None:
        """The server runs: timers go on ``loop``, the AOF gates replies."""
        self.loop = loop
        self.install_gate = install_gate

    def close(self) -> None:
        """At exit: flush, fsync and close the AOF if one runs; stop the
        rewrite of ``appendonly no`` if one runs."""
        if self._aof is not None:
            self._aof.close()
        if self._offline is not None:
            self._offline.close()


def attach(engine: Engine) -> Durability:
    """The engine's :class:`Durability`, made and attached on first use (the
    snapshot timer starts when an event loop is running)."""
    found = engine.persistence
    if isinstance(found, Durability):
        return found
    durability = Durability(engine)
    engine.persistence = durability
    durability.snapshots.start_cron()
    return durability


def snapshotter(engine: Engine) -> Snapshotter:
    """The engine's :class:`~tidelog.persistence.snapshot.Snapshotter`."""
    return attach(engine).snapshots


def load_at_startup(engine: Engine) -> rdb.LoadInfo | None:
    """Load ``<dir>/<dbfilename>`` if it exists (``appendonly no``), logging what
    was loaded; what was loaded, or None.  Raises
    :class:`~tidelog.persistence.rdb.RdbError` or OSError."""
    path = rdb.default_path(engine.config)
    if not os.path.exists(path):
        return None
    info = rdb.load_file(engine, path)
    rate = info.bytes / info.seconds / 1e6 if info.seconds > 0 else 0.0
    log.info("DB loaded from disk: %.3f seconds (%d keys, %d expired keys skipped, "
             "RDB version %d, %d bytes, %.1f MB/s)", info.seconds, info.keys,
             info.expired_skipped, info.version, info.bytes, rate)
    snapshotter(engine).last_save = int(time.time())
    return info
