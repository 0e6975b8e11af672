"""Housekeeping: the work that is about no one command.

The cron (active expiry, IDMP expiry, tracking limits, metrics), maxmemory
(eviction and the policy's marks), and lazy free.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from typing import Any

from .. import eviction, heap
from ..config import NOTIFY_EVICTED
from ..keyspace import Database
from ..rdb.staging import StagedCopy, abort_argv, drop
from .base import EngineCore, Metrics

# Most units of IDMP expiry work (iids dropped + producers visited) one cron
# call does; Engine.expire_idmp explains the sweep.
IDMP_EXPIRE_BUDGET = 1000


# maxmemory: keys evicted at most per check before a command (then -OOM).
EVICTIONS_PER_CHECK = 1000


def fits_in_memory(self: EngineCore) -> bool:
    """Under maxmemory, after evicting keys if the policy evicts.
    Cost: 1-5 µs for the measure; each eviction as a DEL."""
    limit = self.ops.maxmemory
    if heap.used() <= limit:
        return True
    policy = self.config["maxmemory-policy"]
    if policy == "noeviction":
        return False
    samples = self.config["maxmemory-samples"]
    for _ in range(EVICTIONS_PER_CHECK):
        victim = eviction.choose(self.dbs, policy, samples)
        if victim is None:
            return False
        db, key = victim
        self._evict(db, key)
        if heap.used() <= limit:
            return True
    return heap.used() <= limit


def _evict(self: EngineCore, db: Database, key: bytes) -> None:
    """Delete one key for maxmemory, as Redis does: propagated as DEL,
    WATCH fails, blocked clients look again, an ``evicted`` event."""
    db.delete(key)
    db.touch(key)
    self.stats["evicted_keys"] += 1
    self.signal_ready(db.index, key)
    self.emit([(db.index, [b"DEL", key])])
    if self.notify_flags & NOTIFY_EVICTED:
        self.notify_keyspace(NOTIFY_EVICTED, b"evicted", key, db.index)


def set_policy(self: EngineCore) -> None:
    """maxmemory-policy, lfu-log-factor or lfu-decay-time changed: what
    lookups and writes mark on keys from now on (Database.track).  O(1)
    per database: keys keep their marks, read the new way."""
    policy = self.config["maxmemory-policy"]
    self.lfu.log_factor = self.config["lfu-log-factor"]
    self.lfu.decay_time = self.config["lfu-decay-time"]
    lfu = self.lfu if policy.endswith("-lfu") else None
    for db in self.dbs:
        db.track(lfu, policy.endswith("-lrm"))


def set_maxmemory(self: EngineCore, limit: int) -> None:
    """maxmemory (bytes, 0: none): while set, the commands that grow the
    data set are out of the fast dispatch and ask the heap first (keys are
    evicted before them), and are refused when it stays over.  Every
    command on the checked path (a tracking client's, a restricted
    user's) evicts first too, as Redis does before any command; the
    other reads keep the fast path, where measuring the heap (1-5 µs)
    would cost more than the read.
    As in Redis, keys are evicted at once when the data is over the new
    limit (as many as one check evicts)."""
    self.ops.maxmemory = limit
    self._forget_dispatch()
    if limit:
        self.fits_in_memory()


# -- lazy free ------------------------------------------------------------------
def free_later(self: EngineCore, value: Any) -> None:
    """A deleted value large enough to be worth it (UNLINK, DEL under
    lazyfree-lazy-user-del): dropped on a later turn of the event loop,
    after the reply is written, rather than while the command runs
    (Redis hands it to a thread; Python frees on one thread either way).
    Without an event loop (an engine alone) it is dropped at once."""
    if not self.lazyfree_pending and self.schedule is not None:
        self.schedule(0, self.lazy_free)
    self.lazyfree_pending.append(value)
    if self.schedule is None:
        self.lazy_free()


def lazy_free(self: EngineCore) -> None:
    """Drop the values free_later queued (the last references to them)."""
    pending, self.lazyfree_pending = self.lazyfree_pending, []
    freed = len(pending)
    pending.clear()
    self.lazyfreed_objects += freed


# -- housekeeping ---------------------------------------------------------------
def cron(self: EngineCore) -> None:
    """Periodic work (``hz`` times a second): active expiry, IDMP expiry.
    None of it while DEBUG PAUSE-CRON 1 holds it (as Redis's serverCron)."""
    if self.pause_cron:
        return
    timed = self.ops.latency_threshold_ms  # LATENCY's expire-cycle event
    started = time.monotonic_ns()
    for db in self.dbs:
        if self.ops.pause_mode is not None:  # expiry waits for the pause's end
            break
        if db.expires and self.active_expire:
            db.expire_cycle()
        if db.field_keys and self.active_expire:
            db.field_expire_cycle()
    spent = time.monotonic_ns() - started
    self.stats["expire_cycle_ns"] += spent  # INFO's expire_cycle_cpu_milliseconds
    if timed:
        self.latency_sample("expire-cycle", spent // 1_000_000)
    if self._idmp_sweep:
        self.expire_idmp()
    if self.tracking.clients:
        self.tracking.enforce_limit()
    if self.tracking.bcast_due:
        self.tracking.broadcast()
    hotkeys = self.ops.hotkeys
    if hotkeys is not None and hotkeys.expire(self.clock.now_ms()):  # HOTKEYS DURATION
        self.hotkeys_changed()
    self.replication.cron()
    # TIDELOG.STAGE copies idle too long.  Not while following a primary:
    # there the copies are the primary's, which goes on feeding them after a
    # link outage (a partial resync), or drops them itself; an orphaned one
    # goes once this server is promoted (or by a full resync's flush).
    if not self.replication.is_replica and any(db.staged for db in self.dbs):
        now = self.clock.monotonic()
        self.drop_staged(lambda copy: copy.deadline <= now)
    if self.migrate_sockets.targets:  # MIGRATE's connections idle too long
        self.migrate_sockets.close_idle(self.clock.monotonic())
    now_ms = self.clock.monotonic() * 1000
    if now_ms - self.metrics.sampled_ms >= Metrics.PERIOD_MS:
        self.metrics.sample(now_ms, self.total_commands_processed, self.stats)
    if self._ready:
        self.serve_ready()


def track_idmp(self: EngineCore, state: Any) -> None:
    """Have the cron sweep a stream's IDMP state (an ``IdmpState``) until it is empty."""
    if state not in self._idmp_swept:
        self._idmp_swept.add(state)
        self._idmp_sweep.append(weakref.ref(state))


def expire_idmp(self: EngineCore, budget: int = IDMP_EXPIRE_BUDGET) -> int:
    """Drop expired IDMP pairs, at most ``budget`` units of work (see
    ``IdmpState.expire``; each state visited costs one more).  States are
    visited round-robin, so every state is swept within a few calls
    however many there are; an emptied state leaves the sweep.  Commands
    expire what they touch themselves: this only bounds memory."""
    now = self.clock.now_ms()
    work = 0
    for _ in range(len(self._idmp_sweep)):
        if work >= budget:
            break
        ref = self._idmp_sweep.popleft()
        state = ref()
        if state is None:
            continue
        work += 1
        work += state.expire(now, budget - work)
        if state.producers:
            self._idmp_sweep.append(ref)
        else:
            self._idmp_swept.discard(state)
    return work


# -- staged copies (TIDELOG.STAGE) -------------------------------------------------------
def drop_staged(self: EngineCore, which: Callable[[StagedCopy], bool] | None = None) -> int:
    """Drop the staged copies ``which`` selects (all when None) in every
    database, each propagated as ``TIDELOG.STAGE ABORT <token>``: the idle
    deadline (the cron), the owner's connection closing, a replica's full
    resync starting, the end of an AOF load.  Returns how many.
    O(staged copies)."""
    dropped = 0
    for db in self.dbs:
        if db.staged:
            tokens = drop(db.staged, which)
            if tokens:
                dropped += len(tokens)
                self.emit([(db.index, abort_argv(token)) for token in tokens])
    return dropped
