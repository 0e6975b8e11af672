"""A primary's side of replication: replicas, the stream fed to them, WAIT.

A replica connects as a client and says who it is (``REPLCONF
listening-port``, ``capa eof psync2``), then asks for the stream with
``PSYNC <replid> <offset>``.  When the replication ID is ours (or our
previous one, up to the offset where it ended) and the bytes from that
offset are still in the backlog, it gets ``+CONTINUE`` and those bytes;
otherwise a full sync: ``+FULLRESYNC <replid> <offset>`` and the snapshot
as one ``$<length>`` bulk.  From then on every effect the engine emits
(the commands the AOF gets, in forms a Redis 7.0 replica applies:
:mod:`.compat7`; a ``SELECT`` whenever the database changes) is appended
to the backlog and written to every replica; the
replica answers ``REPLCONF ACK <offset>`` every second and when asked with
``REPLCONF GETACK *``, which is what WAIT counts.

The snapshot is made in memory, in the event loop (the RDB writer of
:mod:`tidelog.persistence.rdb`), as RDB version 10 unless ``rdb-version``
says 11 (a Redis 7.0 replica reads 10 only).  While it is made nothing else
runs, so the offset it is taken at is exact without a fork; the cost is a
pause proportional to the data set (measured in docs/benchmarks.md).

FAILOVER (Redis 6.2+, https://redis.io/commands/failover) hands the primary
role to a replica without losing a write: writes are held back (the engine's
CLIENT PAUSE WRITE, for as long as the failover waits), the replicas'
``REPLCONF ACK`` offsets are watched until one (the ``TO`` one, if named)
has everything, and then this server follows it and
sends ``PSYNC <replid> <offset> FAILOVER``: the replica, seeing its own
history asked for, stops following us, becomes a primary and answers
``+CONTINUE``, which ends the failover here (the held writes then get
-READONLY).  ``TIMEOUT`` aborts a failover whose replica never caught up,
or with ``FORCE`` fails over anyway; an error reply to the PSYNC aborts it
too, and this server is a primary again.  :class:`Failover` holds the state.

Offsets and the backlog: :mod:`.backlog`.  Log lines follow Redis's wording
so operators' greps keep working.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any

from .. import errors
from ..commands.contract import ClientState, Ctx, Reply, Wait
from ..commands.effects import Effect, encoded
from ..errors import CommandError
from ..persistence import rdb
from ..persistence.aof_format import encode_command
from ..persistence.durability import attach as durability
from ..resp.replies import OK, RawReply, SimpleString
from .backlog import Backlog
from .compat7 import rewrite7
from .replica import Upstream

log = logging.getLogger("tidelog")

# WAIT's clients block on this name in their database; an ACK makes it
# ready so they count again.  (A key of that name would only cause a
# harmless extra count.)
ACK_KEY = b"\x00replication-acks"
NO_REPLY = RawReply(b"")
ALREADY_CONNECTED = SimpleString(b"OK Already connected to specified master")
NO_ID = "0" * 40


# A write pause longer than any failover (Redis pauses "forever" too).
FAILOVER_PAUSE_MS = 10**12


@dataclass(eq=False)
class Failover:
    """A FAILOVER under way (INFO's ``master_failover_state``)."""

    state: str                     # "waiting-for-sync" or "failover-in-progress"
    host: str | None               # the target: named by TO, or the first caught up
    port: int
    force: bool                    # at the deadline, fail over to the target anyway
    deadline: float | None         # monotonic seconds (TIMEOUT), else None
    prior_pause: tuple[str, float] | None  # a CLIENT PAUSE in force when it began

    def target(self) -> str:
        return f"{self.host}:{self.port}" if self.host is not None else "any replica"


@dataclass(eq=False)
class ReplicaLink:
    """One replica as the primary knows it."""

    client: ClientState
    listening_port: int = 0
    ip: str = ""
    capa: set[bytes] = field(default_factory=set)
    state: str = "online"
    ack_offset: int = 0
    aof_ack_offset: int = 0  # REPLCONF ACK ... FACK: what the replica's AOF holds (WAITAOF)
    ack_time: float = 0.0  # monotonic seconds of the last ACK (or of the sync)

    @property
    def name(self) -> str:
        """How Redis names a replica in its log: ip:listening-port."""
        return f"{self.ip}:{self.listening_port}"


class Primary:
    """The engine's replication once a replica has spoken to it."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.replid = engine.replication.replid  # what INFO showed before any replica
        self.replid2 = NO_ID
        self.second_offset = -1
        self.backlog: Backlog | None = None
        self._offset = 0  # master_repl_offset while there is no backlog
        self.links: dict[int, ReplicaLink] = {}
        # What a client said with REPLCONF before its PSYNC, by client id.
        self.handshake: dict[int, ReplicaLink] = {}
        self.seldb = -1  # the database the stream last SELECTed
        # Our own primary while we are a replica (REPLICAOF host port).
        self.upstream: Upstream | None = None
        self.failover: Failover | None = None
        self._ack_requested = False
        self._last_ping = engine.clock.monotonic()
        self._no_replicas_since = engine.clock.monotonic()

    # -- the stream ------------------------------------------------------------------
    @property
    def is_replica(self) -> bool:
        return self.upstream is not None

    @property
    def offset(self) -> int:
        return self.backlog.offset if self.backlog is not None else self._offset

    def on_effects(self, effects: list[tuple[int, Effect]]) -> None:
        """Effect listener: the engine's effects, into the stream, in forms
        a Redis 7.0 replica applies (the AOF's encoding where they are the
        same).  Not on a replica: its stream is its primary's, fed as it is
        applied."""
        if self.upstream is None:
            self._append(effects, len(self.engine.effect_listeners))

    def _append(self, effects: list[tuple[int, Effect]], listeners: int) -> None:
        """``effects`` into the stream; ``listeners`` read the same batch (:func:`encoded`)."""
        out = bytearray()
        dbs = self.engine.dbs
        for (db, effect), data in zip(effects, encoded(effects, listeners)):
            if db != self.seldb:
                out += encode_command([b"SELECT", b"%d" % db])
                self.seldb = db
            forms = rewrite7(dbs[db], effect)
            if forms is None:
                out += data
            else:
                for form in forms:
                    out += encode_command(form)
        self.feed(out)

    def replicate_only(self, db_index: int, argv: list[bytes]) -> None:
        """PUBLISH: to the replicas (not the AOF), in its place in the stream."""
        if self.backlog is not None and self.upstream is None:
            self._append([(db_index, argv)], 1)

    def feed(self, data: bytes | bytearray) -> None:
        """Append to the backlog and write to every replica.  Cost: O(len(data))
        plus one queued write per replica."""
        if self.backlog is None:
            return
        self.backlog.append(data)
        if self.links:
            chunk = RawReply(bytes(data))
            for link in self.links.values():
                link.client.send(chunk)

    def _create_backlog(self) -> None:
        """The first replica: a new history starts (a new replication ID, no
        second one), as Redis starts one when it creates its backlog."""
        self.replid = os.urandom(20).hex()
        self.replid2, self.second_offset = NO_ID, -1
        self.backlog = Backlog(self.engine.config["repl-backlog-size"], self._offset)
        self.engine.effect_listeners.append(self.on_effects)
        log.info("Replication backlog created, my new replication IDs are '%s' and '%s'",
                 self.replid, self.replid2)

    def _free_backlog(self) -> None:
        assert self.backlog is not None
        self._offset = self.backlog.offset
        self.backlog = None
        if self.on_effects in self.engine.effect_listeners:
            self.engine.effect_listeners.remove(self.on_effects)
        log.info("Replication backlog freed after %d seconds without connected replicas.",
                 self.engine.config["repl-backlog-ttl"])

    # -- becoming a replica, and a primary again ----------------------------------------
    def become_replica(self, host: str, port: int, by: str | None) -> None:
        """REPLICAOF host port: follow that primary.  Our own history (if
        any) is offered to it with PSYNC, so a demoted primary whose
        replica was promoted can continue with a partial resync.  ``by``:
        who asked, for the log (None: a failover, which logs its own)."""
        if self.upstream is not None:
            self.upstream.stop()
        elif self.backlog is not None:
            log.info("Before turning into a replica, using my own master parameters to "
                     "synthesize a cached master: I may be able to synchronize with the new "
                     "master with just a partial transfer.")
        engine = self.engine
        engine.active_expire = False  # the primary's DELs expire keys here
        engine.config.set("replicaof", f"{host} {port}", at_startup=True)
        self.upstream = Upstream(self, host, port)
        self.upstream.start()
        self.refresh_write_guard()
        if by is not None:
            log.info("REPLICAOF %s:%d enabled (user request from '%s')", host, port, by)

    def become_primary(self, by: str | None, why: str = "user request") -> None:
        """REPLICAOF NO ONE (or a failover's PSYNC): stop following; the
        history so far becomes our previous one (replid2), so our former
        siblings can PSYNC to us.  ``by``: who asked, for the log (None:
        no line)."""
        assert self.upstream is not None
        self.upstream.stop()
        self.upstream = None
        engine = self.engine
        engine.config.set("replicaof", "", at_startup=True)
        self.refresh_write_guard()
        engine.active_expire = True
        if self.backlog is not None:
            self.replid2, self.second_offset = self.replid, self.offset + 1
            self.replid = os.urandom(20).hex()
            log.info("Setting secondary replication ID to %s, valid up to offset: %d. "
                     "New replication ID is %s", self.replid2, self.second_offset, self.replid)
        self.seldb = -1
        if by is not None:
            log.info("MASTER MODE enabled (%s from '%s')", why, by)

    def refresh_write_guard(self) -> None:
        """Who may refuse clients' commands now: a read-only replica or a
        primary with min-replicas-to-write their writes (:meth:`_guard`); a
        replica whose link is down with replica-serve-stale-data no, all
        but the ``stale`` ones (-MASTERDOWN).  Called when a role, the link's
        state or one of those options changes."""
        config = self.engine.config
        read_only = self.upstream is not None and config["replica-read-only"]
        needs_replicas = self.upstream is None and config["min-replicas-to-write"] > 0 \
            and config["min-replicas-max-lag"] > 0  # Redis: both, or no check
        guard = self._guard if read_only or needs_replicas else None
        if guard != self.engine.ops.write_guard:
            self.engine.set_write_guard(guard)
        stale = self.upstream is not None and not self.upstream.link_up and \
            not config["replica-serve-stale-data"]
        stale_guard = self._stale_guard if stale else None
        if stale_guard != self.engine.ops.stale_guard:
            self.engine.set_stale_guard(stale_guard)

    def _stale_guard(self, client: ClientState) -> bytes | None:
        return errors.MASTER_DOWN if client.kind == "normal" else None

    def _guard(self, client: ClientState) -> bytes | None:
        if client.kind != "normal":  # our primary's stream, the AOF's replay
            return None
        if self.upstream is not None:
            return errors.READONLY_REPLICA
        if self.good_replicas() < self.engine.config["min-replicas-to-write"]:
            return errors.NO_GOOD_REPLICAS
        return None

    def good_replicas(self) -> int:
        """Replicas whose last ACK is at most min-replicas-max-lag seconds old.
        O(replicas)."""
        now = self.engine.clock.monotonic()
        max_lag = self.engine.config["min-replicas-max-lag"]
        return sum(1 for link in self.links.values() if now - link.ack_time <= max_lag)

    def new_history_from_snapshot(self, replid: str, offset: int) -> None:
        """A full sync from our primary: its history is ours from ``offset``."""
        if self.backlog is None:
            self.engine.effect_listeners.append(self.on_effects)
        self.backlog = Backlog(self.engine.config["repl-backlog-size"], offset)
        self.replid, self.replid2, self.second_offset = replid, NO_ID, -1

    def new_history_from_primary(self, replid: str) -> None:
        """+CONTINUE with another ID: our primary was promoted; the old ID
        stays valid (for our replicas) up to where it ended."""
        self.replid2, self.second_offset = self.replid, self.offset + 1
        self.replid = replid
        log.info("Master replication ID changed to %s", replid)

    def change_replid(self) -> None:
        self.replid = os.urandom(20).hex()
        self.replid2, self.second_offset = NO_ID, -1

    def drop_replicas(self) -> None:
        """Close every replica's link (our history was replaced)."""
        for link in list(self.links.values()):
            if link.client.kill is not None:
                link.client.kill()

    def snapshot_aux(self) -> dict[bytes, bytes]:
        """Where the stream stood when a snapshot is taken: a replica
        restarted from it asks its primary to continue from there (the
        data and the offset always agree: the stream is fed as each command
        is applied, and a snapshot is taken between two commands)."""
        if self.backlog is None:
            return {}
        return {b"repl-stream-db": b"%d" % max(self.seldb, 0), b"repl-id": self.replid.encode(),
                b"repl-offset": b"%d" % self.offset}

    def restore_history(self, aux: dict[bytes, bytes]) -> None:
        """At start-up, a replica's snapshot said where its stream stood:
        take that history up again (an empty backlog at that offset), so
        the first PSYNC asks to continue from there."""
        replid = aux.get(b"repl-id", b"").decode("latin-1")
        try:
            offset = int(aux.get(b"repl-offset", b""))
        except ValueError:
            return
        if len(replid) != 40 or offset < 0:
            return
        self.new_history_from_snapshot(replid, offset)
        log.info("Using the replication ID and offset of the snapshot (%s:%d) to try a "
                 "partial resynchronization", replid, offset)

    def resize_backlog(self, size: int) -> None:
        """CONFIG SET repl-backlog-size."""
        if self.backlog is not None:
            self.backlog.resize(size)

    def replicas_fed(self) -> int:
        """The online replicas (CLUSTER SLOT-STATS charges a write's stream
        bytes once per replica). O(1)."""
        return len(self.links)

    def replicas_lacking(self, capa: bytes) -> int:
        """The connected replicas (online, or between REPLCONF and PSYNC)
        that did not announce ``capa``.  O(replicas)."""
        return sum(1 for link in (*self.links.values(), *self.handshake.values())
                   if capa not in link.capa)

    # -- the handshake ---------------------------------------------------------------
    def link_for(self, client: ClientState) -> ReplicaLink:
        """The link record of a client that speaks REPLCONF or PSYNC."""
        link = self.links.get(client.id) or self.handshake.get(client.id)
        if link is None:
            link = ReplicaLink(client, ip=client.addr.rpartition(":")[0])
            self.handshake[client.id] = link
        return link

    def can_continue(self, replid: str, start: int) -> bool:
        """Redis's rule for a partial resync: our history, and every byte
        from ``start`` still in the backlog."""
        if self.backlog is None:
            return False
        if replid != self.replid and not (replid == self.replid2 and start <= self.second_offset):
            return False
        return self.backlog.can_serve(start)

    def psync(self, client: ClientState, replid: bytes, offset: bytes, *,
              legacy_sync: bool = False) -> RawReply:
        """PSYNC (or SYNC with ``legacy_sync``): the reply that starts the stream."""
        link = self.link_for(client)
        log.info("Replica %s asks for synchronization", link.name)
        wanted = replid.decode("latin-1")
        try:
            start = int(offset)
        except ValueError:
            start = -1
        if not legacy_sync and wanted != "?" and self.can_continue(wanted, start):
            assert self.backlog is not None
            data = self.backlog.read_from(start)
            self._go_online(link)
            self.engine.stats["sync_partial_ok"] += 1
            head = (b"+CONTINUE %s\r\n" % self.replid.encode() if b"psync2" in link.capa
                    else b"+CONTINUE\r\n")
            log.info("Partial resynchronization request from %s accepted. Sending %d bytes of "
                     "backlog starting from offset %d.", link.name, len(data), start)
            return RawReply(head + data)
        if not legacy_sync and wanted != "?":
            self.engine.stats["sync_partial_err"] += 1
            if self.backlog is None or (wanted != self.replid and wanted != self.replid2):
                log.info("Partial resynchronization not accepted: Replication ID mismatch "
                         "(Replica asked for '%s', my replication IDs are '%s' and '%s')",
                         wanted, self.replid, self.replid2)
            else:
                log.info("Unable to partial resync with replica %s for lack of backlog "
                         "(Replica request was: %d).", link.name, start)
        else:
            log.info("Full resync requested by replica %s", link.name)
        return self._full_sync(link, legacy_sync)

    def _full_sync(self, link: ReplicaLink, legacy_sync: bool) -> RawReply:
        if self.backlog is None:
            self._create_backlog()
        engine = self.engine
        if any(db.staged for db in engine.dbs):
            # The snapshot cannot carry TIDELOG.STAGE copies.  A primary drops
            # them (ABORT to the other replicas and the AOF, before the offset
            # the new replica starts at), so the sender's next APPEND fails and
            # its MIGRATE keeps the key.  A replica (a chain) cannot drop what
            # its primary goes on feeding: its replica tries again later, once
            # the copies committed or were dropped.  Either way no replica
            # misses the key.
            if self.upstream is not None:
                raise CommandError(errors.STAGE_NO_SYNC)
            engine.drop_staged()
        version = engine.config["rdb-version"]
        started = time.perf_counter()
        payload = rdb.dumps(engine.dbs, version=version,
                            compress=engine.config["rdbcompression"],
                            functions=[lib.code for lib in engine.scripts.libraries.values()])
        seconds = time.perf_counter() - started
        if payload[5:9] > b"%04d" % version:
            log.warning("The snapshot for replica %s is RDB version %s (hash field TTLs): "
                        "a Redis 7.0 replica cannot load it", link.name,
                        payload[5:9].decode())
        offset = self.offset
        self.engine.stats["sync_full"] += 1
        self.seldb = -1  # the stream after the snapshot starts with a SELECT
        self._go_online(link)
        log.info("Synchronization with replica %s succeeded (%d bytes of snapshot, "
                 "%d keys, made in %.3f s, offset %d)", link.name, len(payload),
                 sum(len(db.data) for db in engine.dbs), seconds, offset)
        head = b"" if legacy_sync else b"+FULLRESYNC %s %d\r\n" % (self.replid.encode(), offset)
        return RawReply(head + b"$%d\r\n" % len(payload) + payload)

    def _go_online(self, link: ReplicaLink) -> None:
        client = link.client
        self.handshake.pop(client.id, None)
        client.kind = "replica"
        link.state = "online"
        link.ack_time = self.engine.clock.monotonic()
        self.links[client.id] = link

    # -- acknowledgements and WAIT ------------------------------------------------------
    def acked(self, client: ClientState, offset: int, aof_offset: int | None = None) -> None:
        """REPLCONF ACK [FACK] from a replica: WAIT's clients count again."""
        link = self.links.get(client.id)
        if link is None:
            return
        link.ack_time = self.engine.clock.monotonic()
        changed = False
        if offset > link.ack_offset:
            link.ack_offset = offset
            changed = True
        if aof_offset is not None and aof_offset > link.aof_ack_offset:
            link.aof_ack_offset = aof_offset
            changed = True
        if changed:
            self.acks_changed()
            if self.failover is not None:
                self.check_failover()

    def acks_changed(self) -> None:
        engine = self.engine
        for db in range(len(engine.dbs)):
            if (db, ACK_KEY) in engine.waiters:
                engine.signal_ready(db, ACK_KEY)

    def count_aof_acked(self, offset: int) -> int:
        """Replicas whose AOF holds the stream up to ``offset``.  O(replicas)."""
        return sum(1 for link in self.links.values() if link.aof_ack_offset >= offset)

    def aof_switched(self, on: bool) -> None:
        """With the AOF on, offsets move even without replicas, so WAITAOF
        knows what a client's writes were (Redis keeps a backlog then too)."""
        if on and self.backlog is None:
            self._create_backlog()

    def count_acked(self, offset: int) -> int:
        """Replicas that acknowledged the stream up to ``offset``.  O(replicas)."""
        return sum(1 for link in self.links.values() if link.ack_offset >= offset)

    def request_acks(self) -> None:
        """Ask every replica for its offset (``REPLCONF GETACK *``), once per
        loop turn however many WAITs asked, as Redis does before sleeping."""
        if self._ack_requested:
            return
        self._ack_requested = True
        schedule = self.engine.schedule
        if schedule is None:
            self._send_getack()
        else:
            schedule(0, self._send_getack)

    def _send_getack(self) -> None:
        self._ack_requested = False
        if self.links:
            self.feed(encode_command([b"REPLCONF", b"GETACK", b"*"]))

    # -- FAILOVER ----------------------------------------------------------------------
    def find_replica(self, host: str, port: int) -> ReplicaLink | None:
        """The replica known as host:port (its address, its listening port),
        as FAILOVER TO names it.  O(replicas)."""
        host = host.lower()
        for link in self.links.values():
            if link.ip.lower() == host and link.listening_port == port:
                return link
        return None

    def start_failover(self, host: str | None, port: int, timeout_ms: int, force: bool) -> None:
        """FAILOVER, its checks passed: hold writes back and wait for a
        replica to catch up (:meth:`check_failover`)."""
        engine = self.engine
        now = engine.clock.monotonic()
        prior = None
        if engine.pause_mode is not None and engine.ops.pause_end > now:
            prior = (engine.pause_mode, engine.ops.pause_end)
        self.failover = Failover("waiting-for-sync", host, port, force,
                                 now + timeout_ms / 1000 if timeout_ms else None, prior)
        if host is not None:
            log.info("FAILOVER requested to %s:%d.", host, port)
        else:
            log.info("FAILOVER requested to any replica.")
        engine.pause(FAILOVER_PAUSE_MS, "write")
        self.check_failover()

    def check_failover(self) -> None:
        """While waiting: past the deadline, fail over anyway (FORCE) or
        give up; else, once the target (or any replica) acknowledged our
        whole stream, follow it.  O(replicas)."""
        failover = self.failover
        if failover is None or failover.state != "waiting-for-sync":
            return
        if failover.deadline is not None and self.engine.clock.monotonic() >= failover.deadline:
            if failover.force:
                log.info("FAILOVER to %s:%d time out exceeded, failing over.",
                         failover.host, failover.port)
                self._fail_over()
            else:
                self.abort_failover("Replica never caught up before timeout")
            return
        offset = self.offset
        if failover.host is not None:
            link = self.find_replica(failover.host, failover.port)
            if link is None or link.ack_offset != offset:
                return
        else:
            link = next((r for r in self.links.values() if r.ack_offset == offset), None)
            if link is None:
                return
            failover.host, failover.port = link.ip, link.listening_port
        log.info("Failover target %s:%d is synced, failing over.", failover.host, failover.port)
        self._fail_over()

    def _fail_over(self) -> None:
        """Follow the target: our PSYNC will carry FAILOVER (:mod:`.replica`)."""
        failover = self.failover
        assert failover is not None and failover.host is not None
        failover.state = "failover-in-progress"
        self.become_replica(failover.host, failover.port, None)

    @property
    def failing_over(self) -> bool:
        """Is our next PSYNC a failover's?"""
        return self.failover is not None and self.failover.state == "failover-in-progress"

    def failover_done(self) -> None:
        """The target took our PSYNC: it is the primary, we follow it."""
        log.info("FAILOVER to %s completed.", self.failover.target() if self.failover else "?")
        self._clear_failover()

    def abort_failover(self, why: str) -> None:
        """FAILOVER ABORT, a timeout, a refused PSYNC: a primary again, the
        held writes run."""
        failover = self.failover
        if failover is None:
            return
        log.info("FAILOVER to %s aborted: %s", failover.target(), why)
        if failover.state == "failover-in-progress":
            self.become_primary(None)
        self._clear_failover()

    def _clear_failover(self) -> None:
        failover, self.failover = self.failover, None
        engine = self.engine
        engine.unpause()
        if failover is not None and failover.prior_pause is not None:
            mode, end = failover.prior_pause
            left = end - engine.clock.monotonic()
            if left > 0:  # a CLIENT PAUSE that began before goes on to its end
                engine.pause(int(left * 1000) + 1, mode)

    # -- what the engine and INFO ask ------------------------------------------------------
    def client_closed(self, client: ClientState) -> None:
        self.handshake.pop(client.id, None)
        link = self.links.pop(client.id, None)
        if link is not None:
            log.info("Connection with replica %s lost.", link.name)
            if not self.links:
                self._no_replicas_since = self.engine.clock.monotonic()

    def cron(self) -> None:
        """PING the replicas every repl-ping-replica-period seconds (through
        the stream, so it counts in offsets, as Redis does); drop a replica
        silent for repl-timeout; free the backlog after repl-backlog-ttl
        seconds without replicas."""
        config = self.engine.config
        now = self.engine.clock.monotonic()
        if self.failover is not None:
            self.check_failover()
        if self.links:
            # A replica passes its primary's PINGs on instead of its own;
            # none while a failover waits (the offsets must stand still).
            if self.upstream is None and self.failover is None and \
                    now - self._last_ping >= config["repl-ping-replica-period"]:
                self._last_ping = now
                self.feed(encode_command([b"PING"]))
            timeout = config["repl-timeout"]
            for link in list(self.links.values()):
                if now - link.ack_time > timeout and link.client.kill is not None:
                    log.warning("Disconnecting timedout replica (streaming sync): %s", link.name)
                    link.client.kill()
        elif self.backlog is not None and self.upstream is None:  # a replica keeps its own
            ttl = config["repl-backlog-ttl"]
            if ttl and now - self._no_replicas_since > ttl:
                self._free_backlog()

    def info_lines(self) -> list[str]:
        now = self.engine.clock.monotonic()
        if self.upstream is not None:
            lines = ["role:slave", *self.upstream.info_lines()]
        else:
            lines = ["role:master"]
        lines.append(f"connected_slaves:{len(self.links)}")
        for i, link in enumerate(self.links.values()):
            lines.append(f"slave{i}:ip={link.ip},port={link.listening_port},state={link.state},"
                         f"offset={link.ack_offset},lag={int(now - link.ack_time)}")
        backlog = self.backlog
        lines += [
            f"master_failover_state:{self.failover.state if self.failover else 'no-failover'}",
            f"master_replid:{self.replid}",
            f"master_replid2:{self.replid2}",
            f"master_repl_offset:{self.offset}",
            f"second_repl_offset:{self.second_offset}",
            f"repl_backlog_active:{int(backlog is not None)}",
            f"repl_backlog_size:{self.engine.config['repl-backlog-size']}",
            f"repl_backlog_first_byte_offset:{backlog.first_byte_offset if backlog else 0}",
            f"repl_backlog_histlen:{backlog.histlen if backlog else 0}",
        ]
        return lines

    # -- the replication commands' work (their handlers: tidelog.commands.replication) ----
    def replica_info(self, client: ClientState, *, listening_port: int | None = None,
                     ip: str | None = None, capa: bytes | None = None) -> None:
        """REPLCONF listening-port / ip-address / capa: what a replica says of
        itself before its PSYNC.  O(1)."""
        link = self.link_for(client)
        if listening_port is not None:
            link.listening_port = listening_port
        if ip is not None:
            link.ip = ip
        if capa is not None:
            link.capa.add(capa)

    def serve_sync(self, client: ClientState, replid: bytes, offset: bytes, *,
                   failover: bool = False, legacy_sync: bool = False) -> Reply:
        """PSYNC replid offset [FAILOVER] (SYNC: ``legacy_sync``).  With
        FAILOVER (sent by a primary handing its role over), when the ID is
        ours, that is, our primary's: stop following it first.  A client that
        is a replica already is ignored, as Redis does; a replica whose own
        link is down refuses.  O(1) here; the sync itself: :meth:`psync`."""
        if client.kind != "replica" and failover:
            if self.upstream is None:
                raise CommandError(errors.PSYNC_FAILOVER_TO_PRIMARY)
            if replid.decode("latin-1") != self.replid:
                raise CommandError(errors.PSYNC_FAILOVER_REPLID)
            self.become_primary(f"id={client.id} addr={client.addr}", why="failover request")
        if client.kind == "replica":
            return NO_REPLY
        if self.failover is not None:
            raise CommandError(errors.NO_SYNC_FAILING_OVER)
        if self.upstream is not None and not self.upstream.link_up:
            raise CommandError(errors.NO_MASTER_LINK)
        return self.psync(client, replid, offset, legacy_sync=legacy_sync)

    def wait(self, woff: int, wanted: int, timeout_ms: int, may_block: bool) -> Reply:
        """WAIT: the replicas that acknowledged offset ``woff``, now when
        ``wanted`` did, else a :class:`Wait` on their acknowledgements
        (asked for with GETACK).  O(replicas)."""
        if self.is_replica:
            raise CommandError(errors.WAIT_ON_REPLICA)
        acked = self.count_acked(woff)
        if acked >= wanted:
            return acked

        def retry(retry_ctx: Ctx) -> Reply:
            n = self.count_acked(woff)
            return n if n >= wanted else None

        if may_block:  # inside EXEC a command never blocks: the count at once
            self.request_acks()
        return Wait([ACK_KEY], timeout_ms, retry, on_timeout=lambda: self.count_acked(woff))

    def wait_aof(self, woff: int, numlocal: int, numreplicas: int, timeout_ms: int,
                 may_block: bool) -> Reply:
        """WAITAOF: ``[local fsynced, replicas' AOFs]`` for offset ``woff``,
        now when enough are, else a :class:`Wait`.  O(replicas)."""
        aof = durability(self.engine).aof
        if numlocal and aof is None:
            raise CommandError(errors.WAITAOF_NO_AOF)

        def counts() -> list[int]:
            local = int(aof is not None and aof.fsynced_offset >= woff)
            return [local, self.count_aof_acked(woff)]

        now = counts()
        if now[0] >= numlocal and now[1] >= numreplicas:
            return now

        def retry(retry_ctx: Ctx) -> Reply:
            got = counts()
            return got if got[0] >= numlocal and got[1] >= numreplicas else None

        if may_block and numreplicas:
            self.request_acks()
        return Wait([ACK_KEY], timeout_ms, retry, on_timeout=counts)

    @property
    def failover_running(self) -> bool:
        """A FAILOVER is under way (in any of its states)."""
        return self.failover is not None

    def replicaof(self, host: str | None, port: int, by: str) -> Reply:
        """REPLICAOF host port (``host`` None: NO ONE).  O(1); the link
        connects afterwards."""
        if host is None:
            if self.upstream is not None:
                self.become_primary(by)
            return OK
        upstream = self.upstream
        if upstream is not None and upstream.host == host and upstream.port == port:
            return ALREADY_CONNECTED
        self.become_replica(host, port, by)
        return OK

    def failover_command(self, host: str | None, port: int, timeout_ms: int,
                         force: bool) -> None:
        """FAILOVER [TO host port [FORCE]] [TIMEOUT ms], its checks in Redis's
        order; the failover goes on after the reply.  O(replicas)."""
        if self.failover is not None:
            raise CommandError(errors.FAILOVER_IN_PROGRESS)
        if self.is_replica:
            raise CommandError(errors.FAILOVER_ON_REPLICA)
        if not self.links:
            raise CommandError(errors.FAILOVER_NO_REPLICAS)
        if force and (not timeout_ms or host is None):
            raise CommandError(errors.FAILOVER_FORCE_ARGS)
        if host is not None:
            link = self.find_replica(host, port)
            if link is None:
                raise CommandError(errors.FAILOVER_NOT_A_REPLICA)
            if link.state != "online":
                raise CommandError(errors.FAILOVER_TARGET_OFFLINE)
        self.start_failover(host, port, timeout_ms, force)

    def failover_abort(self) -> None:
        """FAILOVER ABORT.  O(1)."""
        if self.failover is None:
            raise CommandError(errors.FAILOVER_NONE)
        self.abort_failover("Failover manually aborted")

    def role(self) -> list[Any]:
        if self.upstream is not None:
            return self.upstream.role()
        return [b"master", self.offset,
                [[link.ip.encode(), b"%d" % link.listening_port, b"%d" % link.ack_offset]
                 for link in self.links.values()]]


def follow_configured(engine: Any, aux: dict[bytes, bytes] | None = None) -> None:
    """At start-up, after the data is loaded: the replication options of
    the configuration take effect; ``replicaof host port`` starts the link
    (continuing the loaded snapshot's stream when ``aux`` says where it
    stood)."""
    primary = attach(engine)
    primary.refresh_write_guard()  # min-replicas-to-write
    primary.aof_switched(engine.config["appendonly"])
    following = engine.config["replicaof"]
    if not following:
        return
    host, port = following.split()
    if aux:
        primary.restore_history(aux)
    primary.become_replica(host, int(port), "configuration")


async def stop_following(engine: Any, timeout: float = 5.0) -> None:
    """The server shuts down: a replica's link to its primary stops for good
    (``replicaof`` stays in the configuration), and its task is waited for,
    at most ``timeout`` seconds, so nothing reconnects after the server has
    stopped listening."""
    primary = engine.replication
    if isinstance(primary, Primary) and primary.upstream is not None:
        primary.upstream.stop()
        if not await primary.upstream.wait_stopped(timeout):
            log.warning("The link to the master did not stop in %.0f s", timeout)


def attach(engine: Any) -> Primary:
    """The engine's primary, made on first use (a replica's first REPLCONF)."""
    if not isinstance(engine.replication, Primary):
        engine.replication = Primary(engine)
    return engine.replication
