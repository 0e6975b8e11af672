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
attaches it at start (``tidelog-server``, the embedded server); the
persistence commands (:mod:`tidelog.persistence.commands`) attach it on
first use, so a bare engine in a unit test gets one when it needs one.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..commands.contract import AOF_OFF_INFO
from . import aof as aof_module
from . import aof_switch, rdb
from .snapshot import Snapshotter

if TYPE_CHECKING:
    from ..engine import Engine

log = logging.getLogger("tidelog")

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
