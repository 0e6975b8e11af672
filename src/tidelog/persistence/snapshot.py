"""When snapshots are taken: SAVE, BGSAVE (a forked child), save points, shutdown.

One :class:`Snapshotter` per engine (``Durability.snapshots``, see
:mod:`tidelog.persistence.durability`) keeps what INFO persistence reports
about RDB files and runs the background save:

* BGSAVE forks; the child writes ``temp-<pid>.rdb`` in ``dir``, fsyncs and
  renames it over ``<dir>/<dbfilename>`` and exits 0 (1 on error) without
  running any clean-up of the parent's (``os._exit``).  The parent keeps
  serving; a timer on the event loop (``hz`` times a second) reaps the child
  with ``waitpid(pid, WNOHANG)`` -- that pid only, so other children (the
  AOF rewrite) are left to their owners -- and records the outcome.
* Save points (``save <seconds> <changes> ...``): the same timer starts a
  BGSAVE when, for some point, at least ``changes`` writes happened
  (``engine.dirty``) and ``seconds`` passed since the last successful save;
  after a failed BGSAVE it waits 5 s before trying again, as Redis does.
  Only a server that called :meth:`Snapshotter.start_cron` with
  ``autosave=True`` (``tidelog-server``) saves on its own; an embedded
  server saves when told to.
* ``engine.dirty`` counts writes since the last save: a successful SAVE
  sets it to 0; a successful BGSAVE subtracts what it was at the fork.

``stop-writes-on-bgsave-error`` is not implemented: writes are accepted
after a failed BGSAVE (INFO shows ``rdb_last_bgsave_status:err``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..clock import next_beat
from ..config import save_points
from . import rdb

if TYPE_CHECKING:
    from ..engine import Engine

log = logging.getLogger("tidelog")

BGSAVE_RETRY_DELAY = 5.0  # seconds after a failed BGSAVE before a save point retries


def forked(engine: Any, started_ns: int) -> None:
    """A BGSAVE or BGREWRITEAOF child was forked (in the parent): INFO stats'
    total_forks and latest_fork_usec (the fork() call's time, as Redis's)."""
    engine.stats["total_forks"] += 1
    engine.stats["latest_fork_usec"] = (time.perf_counter_ns() - started_ns) // 1000


class Snapshotter:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.last_save = engine.started_ms // 1000   # Unix seconds (LASTSAVE)
        self.saves = 0                               # rdb_saves
        self.child_pid: int | None = None
        self.child_started = 0.0                     # monotonic
        self.dirty_at_fork = 0
        self.last_bgsave_ok = True
        self.last_bgsave_try = 0.0                   # monotonic
        self.last_bgsave_seconds = -1
        self.scheduled = False                       # BGSAVE SCHEDULE / inside EXEC
        self.autosave = False
        self.shutdown_handled = False                # SHUTDOWN already decided about saving
        self._timer: Any = None
        # Whether another child (the AOF rewrite) runs: one fork at a time.
        # Durability wires it to its AOF.
        self.other_child_active: Callable[[], bool] = lambda: False

    # -- foreground -------------------------------------------------------------------
    def save(self) -> bool:
        """SAVE: write the snapshot now, blocking.  False (logged) on failure."""
        start = time.monotonic()
        try:
            rdb.write_file(self.engine)
        except OSError as exc:
            log.warning("Failed saving the DB: %s", exc)
            return False
        self._saved()
        log.info("DB saved on disk (%.3f s)", time.monotonic() - start)
        return True

    def _saved(self) -> None:
        self.engine.dirty = 0
        self.last_save = int(time.time())
        self.saves += 1

    # -- background -------------------------------------------------------------------
    @property
    def in_progress(self) -> bool:
        self.poll()
        return self.child_pid is not None

    def bgsave(self) -> bool:
        """Fork a child that writes the snapshot.  False if the fork failed."""
        self.last_bgsave_try = time.monotonic()
        started = time.perf_counter_ns()
        try:
            pid = os.fork()
        except OSError as exc:
            self.last_bgsave_ok = False
            log.warning("Can't save in background: fork: %s", exc)
            return False
        if pid:
            forked(self.engine, started)
        if pid == 0:  # the child
            code = 1
            try:
                rdb.write_file(self.engine)
                code = 0
            except BaseException:  # noqa: BLE001 - the exit code says it
                pass
            os._exit(code)
        self.child_pid = pid
        self.child_started = time.monotonic()
        self.dirty_at_fork = self.engine.dirty
        self.scheduled = False
        log.info("Background saving started by pid %d", pid)
        return True

    def poll(self) -> None:
        """Reap the BGSAVE child if it has finished, and record how it went."""
        pid = self.child_pid
        if pid is None:
            return
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done, status = pid, 1 << 8
        if done == 0:
            return
        self.child_pid = None
        self.last_bgsave_seconds = int(time.monotonic() - self.child_started)
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
            self.engine.dirty = max(0, self.engine.dirty - self.dirty_at_fork)
            self.last_save = int(time.time())
            self.saves += 1
            self.last_bgsave_ok = True
            log.info("Background saving terminated with success")
        else:
            self.last_bgsave_ok = False
            log.warning("Background saving error (child status %d)", status)
            self._remove_temp(pid)

    def kill_child(self) -> None:
        """Stop a running BGSAVE (shutdown, FLUSHALL-like resets)."""
        pid = self.child_pid
        if pid is None:
            return
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        self.child_pid = None
        self._remove_temp(pid)
        log.info("Killed the background saving child %d", pid)

    def _remove_temp(self, pid: int) -> None:
        try:
            os.unlink(os.path.join(self.engine.config["dir"], f"temp-{pid}.rdb"))
        except OSError:
            pass

    # -- the periodic check -----------------------------------------------------------
    def cron(self) -> None:
        """Reap the child; start a scheduled BGSAVE or one a save point asks for."""
        self.poll()
        if self.child_pid is not None or self.other_child_active():
            return
        if self.scheduled:
            self.bgsave()
            return
        if not self.autosave:
            return
        dirty = self.engine.dirty
        if not dirty:
            return
        now = time.time()
        retry_ok = self.last_bgsave_ok or time.monotonic() - self.last_bgsave_try > BGSAVE_RETRY_DELAY
        for seconds, changes in save_points(self.engine.config["save"]):
            if dirty >= changes and now - self.last_save > seconds and retry_ok:
                log.info("%d changes in %d seconds. Saving...", changes, seconds)
                self.bgsave()
                return

    def start_cron(self, loop: asyncio.AbstractEventLoop | None = None,
                   autosave: bool = False) -> None:
        """Run :meth:`cron` ``hz`` times a second on the event loop."""
        self.autosave = self.autosave or autosave
        if self._timer is not None:
            return
        if loop is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return  # no loop (unit tests): poll() happens on INFO/LASTSAVE/BGSAVE
        config = self.engine.config

        def tick() -> None:
            try:
                self.cron()
            except Exception:  # a bug: keep serving, but say so
                log.exception("snapshot cron failed")
                self.engine.internal_errors += 1
            self._timer = loop.call_at(next_beat(loop.time(), 1 / max(1, min(500, config["hz"]))),
                                       tick)

        self._timer = loop.call_later(0, tick)

    def info_lines(self) -> list[str]:
        """The rdb_* lines of INFO persistence."""
        running = self.in_progress
        current = int(time.monotonic() - self.child_started) if running else -1
        return [
            f"rdb_changes_since_last_save:{self.engine.dirty}",
            f"rdb_bgsave_in_progress:{int(running)}",
            f"rdb_last_save_time:{self.last_save}",
            f"rdb_last_bgsave_status:{'ok' if self.last_bgsave_ok else 'err'}",
            f"rdb_last_bgsave_time_sec:{self.last_bgsave_seconds}",
            f"rdb_current_bgsave_time_sec:{current}",
            f"rdb_saves:{self.saves}",
            f"rdb_last_load_keys_expired:{self.engine.rdb_last_load[1]}",  # Redis 7.0
            f"rdb_last_load_keys_loaded:{self.engine.rdb_last_load[0]}",
        ]

    # -- shutdown ---------------------------------------------------------------------
    def shutdown_save(self, save: bool | None) -> bool:
        """Save before exiting, as SHUTDOWN does: ``save`` True (SAVE), False
        (NOSAVE) or None (only if save points are configured).  A running
        BGSAVE is killed first.  False if a needed save failed."""
        self.shutdown_handled = True
        self.kill_child()
        if save is None:
            save = bool(save_points(self.engine.config["save"]))
        if not save:
            return True
        log.info("Saving the final RDB snapshot before exiting.")
        return self.save()
