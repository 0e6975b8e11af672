"""The engine: executes one command for one client and says what happened.

``Engine.execute(client, argv)`` returns a reply value, or :data:`BLOCKED`
when the client now waits for data (``XREAD BLOCK``).  It owns the things
that are about commands rather than about any one command:

* the checks Redis makes before running a command (unknown name, arity), so
  handlers never repeat them;
* transactions: MULTI queues, EXEC runs the queue atomically, WATCH makes it
  fail when a watched key changed;
* blocking: a handler that must wait returns a
  :class:`~tidelog.commands.contract.Wait`; the engine parks the client (a
  :class:`Waiter`) on each key, FIFO per key, and ``execute`` answers
  :data:`BLOCKED`.  Commands never wake anybody:
  they mark keys ready (``Ctx.ready``), and after the command — or the whole
  EXEC — finishes, the engine serves the waiters of each ready key in the
  order they blocked;
* effects: what a write command changed, in Redis's propagation forms, goes
  to every listener in ``effect_listeners`` (the AOF and replicas, later),
  once per executed command or transaction.  Handlers declare their effects
  (``Ctx.propagate_argv``, ``Ctx.effect``, ``Ctx.no_propagation``); a write
  that changed data and declared nothing is counted in ``internal_errors``.

The handlers' side of the contract (:class:`Ctx`, :class:`Wait`,
:class:`ClientState`) is :mod:`tidelog.commands.contract`; the engine imports
the command table, never the other way.  Durability is not the engine's: it
holds a :class:`~tidelog.commands.contract.Persistence` (``persistence``),
which the durability layer replaces when it is attached.

The engine never touches sockets.  A client is a :class:`ClientState`; the
server gives each one a ``send`` callback for replies that arrive later
(a blocked client being served), and a scheduler for timeouts.
"""

from __future__ import annotations

import logging
import os
import time
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from sys import getrefcount
from typing import Any, cast

from . import commands, errors, eviction, heap  # noqa: F401  (importing commands registers them)
from .acl.registry import Acl
from .acl.selectors import ACL_OK, DENIED_AUTH, DENIED_CHANNEL, DENIED_CMD, DENIED_KEY
from .acl.users import User, denial_message
from .callstats import HIST_BUCKETS, CallStats, now_ns
from .clock import Clock
from .commands import table
from .commands.contract import (
    AOF_OFF_INFO,
    NO_DISPATCH,
    ClientState,
    Ctx,
    Effect,
    Persistence,
    Replication,
    Reply,
    Wait,
)
from .commands.effects import as_unit
from .commands.replies import repr_arg
from .commands.session.client import client_info_line
from .commands.session.tracking import Tracker
from .config import (
    NOTIFY_EVICTED,
    NOTIFY_EXPIRED,
    NOTIFY_GENERIC,
    NOTIFY_HASH,
    NOTIFY_KEYEVENT,
    NOTIFY_KEYSPACE,
    NOTIFY_NEW,
    NOTIFY_SUBKEY_ANY,
    NOTIFY_SUBKEYEVENT,
    NOTIFY_SUBKEYSPACE,
    NOTIFY_SUBKEYSPACEEVENT,
    NOTIFY_SUBKEYSPACEITEM,
    Config,
)
from .errors import CommandError, CountedError
from .glob import glob_match
from .keyspace import Database
from .lfu import Lfu
from .resp import encode
from .resp.replies import NULL_ARRAY, QUEUED, ErrorReply, Push, RawReply, Replies
from .scripting.scripts import Scripts, parse_shebang
from .types.latency import LatencyEvent, SlowlogEntry, slowlog_args
from .types.pubsub import PubSub

__all__ = ["ABORTED", "BLOCKED", "NOT_RUN", "POSTPONED", "repr_arg", "ClientState", "Ctx", "Engine",
           "Wait", "Waiter"]

log = logging.getLogger("tidelog")

# The commands that run a script or function: under maxmemory or a write
# guard their scripts' flags decide (Engine._execute_checked), so they leave
# the fast dispatch.
SCRIPT_RUNNERS = frozenset({"eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"})


def _channel_match(pattern: bytes, channel: bytes) -> bool:
    """Pub/Sub's pattern match: Redis's glob, which matches an empty name
    only with an empty pattern (KEYS and SCAN special-case ``*`` before
    calling it; Pub/Sub does not)."""
    return glob_match(pattern, channel) if channel else not pattern


class _Blocked:
    """What execute() answers when the client now waits for data."""

    def __repr__(self) -> str:
        return "BLOCKED"


BLOCKED = _Blocked()


class _Postponed:
    """What execute() answers when CLIENT PAUSE holds the command back: the
    connection keeps it (and what follows) until ``client.resume()``."""

    def __repr__(self) -> str:
        return "POSTPONED"


POSTPONED = _Postponed()


class _NotRun:
    """What execute_many() answers for the command it stopped at without
    running it: the caller runs that one through execute() (or a run)."""

    def __repr__(self) -> str:
        return "NOT_RUN"


NOT_RUN = _NotRun()


class _Aborted:
    """What execute() answers for a command after which the connection must
    close at once, nothing more of its read run nor answered (the cross
    protocol scripting guard: :meth:`Engine.cross_protocol`)."""

    def __repr__(self) -> str:
        return "ABORTED"


ABORTED = _Aborted()

# Cross protocol scripting: the command names an HTTP request's first line
# (``POST / HTTP/1.1``) and its ``Host:`` header become.  A client sending one
# is a browser (or a proxy) tricked into talking to us: Redis closes its
# connection before anything else it sent runs, whatever its authentication.
CROSS_PROTOCOL_NAMES = frozenset({b"post", b"host:"})
# The warning is logged at most once in this many seconds (as Redis: an
# attacker cannot flood the log).
CROSS_PROTOCOL_LOG_EVERY = 60.0
CROSS_PROTOCOL_WARNING = (
    "Possible SECURITY ATTACK detected. It looks like somebody is sending POST or Host: "
    "commands to Redis. This is likely due to an attacker attempting to use Cross Protocol "
    "Scripting to compromise your Redis instance. Connection aborted.")
# The clients a network connection serves (not the AOF loader's, nor the
# replica's link to its primary).
_NETWORK_KINDS = frozenset({"normal", "replica"})

# Most units of IDMP expiry work (iids dropped + producers visited) one cron
# call does; Engine.expire_idmp explains the sweep.
IDMP_EXPIRE_BUDGET = 1000

# Commands that run even while a MULTI is open (everything else is queued).
_MULTI_CONTROL = frozenset({"exec", "discard", "multi", "watch", "quit", "reset"})

# What a RESP2 client with subscriptions may still send (Redis's subscribed mode).
_SUBSCRIBED_MODE = frozenset({"subscribe", "psubscribe", "ssubscribe", "unsubscribe",
                              "punsubscribe", "sunsubscribe", "ping", "quit", "reset"})


# How many different error codes INFO errorstats tracks (as Redis: a client
# cannot grow the table without bound; later codes are not added).
ERRORSTATS_MAX = 128

# MONITOR: when a command is shown to monitors (Entry.monitor).  Admin
# commands and those flagged skip_monitor are not shown; scripts are shown
# before the commands they run (Redis 7's order), everything else after it ran.
MONITOR_SKIP, MONITOR_AFTER, MONITOR_BEFORE = 0, 1, 2
_MONITOR_BEFORE = frozenset({"eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"})

# What a monitor (a replica, to Redis) may not run: commands that read,
# write or may replicate.
_KEYSPACE_FLAGS = frozenset({"readonly", "write", "may_replicate"})
_MAY_REPLICATE = frozenset({"publish", "spublish", "eval", "evalsha", "fcall", "pfcount"})


# CONFIG SET's values Redis redacts (its sensitive options).
_SENSITIVE_CONFIG = frozenset({b"requirepass", b"masterauth", b"masteruser",
                               b"tls-key-file-pass", b"tls-client-key-file-pass"})


def monitor_args(argv: list[bytes]) -> list[bytes]:
    """The arguments MONITOR and SLOWLOG show: the credentials of AUTH,
    HELLO, ACL SETUSER and MIGRATE's AUTH/AUTH2, and CONFIG SET's sensitive
    values, redacted, as Redis does.  O(N) in the arguments for those
    commands, O(1) for the others."""
    name = argv[0].lower()
    if name == b"migrate":
        shown = list(argv)
        i = 6
        while i < len(argv):
            option = argv[i].upper()
            if option == b"KEYS":
                break
            count = 1 if option == b"AUTH" else 2 if option == b"AUTH2" else 0
            for j in range(i + 1, min(i + 1 + count, len(argv))):
                shown[j] = b"(redacted)"
            i += 1 + count
        return shown
    if name == b"config" and len(argv) > 3 and argv[1].lower() == b"set":
        shown = list(argv)
        for i in range(2, len(argv) - 1, 2):
            if argv[i].lower() in _SENSITIVE_CONFIG:
                shown[i + 1] = b"(redacted)"
        return shown
    if name == b"auth":
        return [argv[0]] + [b"(redacted)"] * (len(argv) - 1)
    if name == b"acl" and len(argv) > 2 and argv[1].lower() == b"setuser":
        return argv[:2] + [b"(redacted)"] * (len(argv) - 2)
    if name == b"hello":
        shown = list(argv)
        for i in range(2, len(argv) - 2):
            if argv[i].upper() == b"AUTH":
                shown[i + 1] = shown[i + 2] = b"(redacted)"
                break
        return shown
    return argv


# INFO stats' ACL counters, by the reason of the refusal.
_DENIED_STATS = {DENIED_AUTH: "acl_access_denied_auth", DENIED_CMD: "acl_access_denied_cmd",
                 DENIED_KEY: "acl_access_denied_key", DENIED_CHANNEL: "acl_access_denied_channel"}

# A duration no command reaches: the threshold while slowlog/latency are off.
NEVER_NS = 1 << 80

# Most raw command names (b"XADD", b"xadd", ...) the dispatch remembers; a
# client sending names in ever new letter cases cannot grow it further.
DISPATCH_CACHE_MAX = 1024
# maxmemory: keys evicted at most per check before a command (then -OOM).
EVICTIONS_PER_CHECK = 1000


class Entry(CallStats):
    """One command as this engine runs it: what it needs of the table's spec
    (name, handler, arity, flags) read once, and its statistics (INFO
    commandstats, from :class:`~tidelog.callstats.CallStats`): calls, the
    time they took, and the calls that answered an error (failed) or were
    refused before running (rejected: arity, MULTI).  The dispatch maps raw
    name bytes to entries; each update is an attribute add, a call's is
    ``stop``."""

    __slots__ = ("spec", "name", "handler", "arity", "is_write", "allow_stale", "no_auth", "deny_oom",
                 "queued_in_multi", "refused_in_multi", "run",
                 "monitor", "keyspace", "fast", "skip_slowlog", "may_write")

    def __init__(self, spec: table.CommandSpec) -> None:
        # The statistics at zero.  INFO latencystats, LATENCY HISTOGRAM:
        # calls by the bit length of their duration in ns (types.latency);
        # counted even while latency-tracking is off (cheaper than a test),
        # shown only while on.
        CallStats.__init__(self)
        self.spec = spec
        self.name = spec.name
        self.handler = spec.handler
        self.arity = spec.arity
        self.is_write = spec.is_write
        self.allow_stale = "stale" in spec.flags  # served while a replica's link is down
        self.no_auth = "no_auth" in spec.flags    # runs before AUTH (AUTH, HELLO, QUIT ...)
        self.deny_oom = "denyoom" in spec.flags   # refused past maxmemory (it grows the data)
        self.refused_in_multi = "no_multi" in spec.flags
        self.queued_in_multi = spec.name.partition("|")[0] not in _MULTI_CONTROL
        self.run = spec.run
        base = spec.name.partition("|")[0]
        # scripts are shown before their commands, though flagged skip_monitor
        # (Redis's flag for them: it shows them itself, first)
        self.monitor = (MONITOR_BEFORE if base in _MONITOR_BEFORE
                        else MONITOR_SKIP if spec.flags & {"admin", "skip_monitor"}
                        else MONITOR_AFTER)
        # refused to monitors
        self.keyspace = bool(spec.flags & _KEYSPACE_FLAGS) or base in _MAY_REPLICATE
        self.fast = "fast" in spec.flags  # LATENCY: "fast-command" or "command"
        # CLIENT PAUSE WRITE holds these back (writes, and what may replicate)
        self.may_write = spec.is_write or base in _MAY_REPLICATE
        self.skip_slowlog = "skip_slowlog" in spec.flags


@dataclass(eq=False)
class Waiter:
    """A client parked on keys by a handler's :class:`Wait`."""

    client: ClientState
    db: int
    wait: Wait
    argv: list[bytes]
    entry: Entry  # the command, as resolved when it blocked
    deadline: float = 0.0  # monotonic seconds; 0 = no timeout
    timer: Any = None  # the scheduler's handle, cancelled when served


class NoPersistence:
    """The engine's persistence until a durability layer is attached: saves
    nothing, and INFO shows what a server that never saved shows."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def info_lines(self) -> list[str]:
        return [
            f"rdb_changes_since_last_save:{self.engine.dirty}",
            "rdb_bgsave_in_progress:0",
            f"rdb_last_save_time:{self.engine.started_ms // 1000}",
            "rdb_last_bgsave_status:ok",
            "rdb_last_bgsave_time_sec:-1",
            "rdb_current_bgsave_time_sec:-1",
            "rdb_saves:0",
            f"rdb_last_load_keys_expired:{self.engine.rdb_last_load[1]}",
            f"rdb_last_load_keys_loaded:{self.engine.rdb_last_load[0]}",
            *AOF_OFF_INFO,
        ]

    def set_appendonly(self, on: bool) -> None:
        """Nothing to start: the option is only recorded."""

    def shutdown_save(self, save: bool | None) -> bool:
        return True

    # The persistence commands: a bare engine (embedded, a unit test) has
    # nothing to write to until a durability layer is attached.
    def save(self) -> None:
        raise CommandError(errors.NO_PERSISTENCE)

    def bgsave(self, schedule: bool, in_exec: bool) -> Any:
        raise CommandError(errors.NO_PERSISTENCE)

    def last_save(self) -> int:
        return self.engine.started_ms // 1000

    def rewrite_aof(self) -> Any:
        raise CommandError(errors.NO_PERSISTENCE)

    def reload(self, save: bool, flush: bool, merge: bool) -> None:
        raise CommandError(errors.NO_PERSISTENCE)

    def load_aof(self) -> None:
        raise CommandError(errors.NO_PERSISTENCE)


class NoReplication:
    """The engine's replication until a primary is attached
    (:mod:`tidelog.replication`): no replica ever connected."""

    offset = 0
    is_replica = False

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.replid = os.urandom(20).hex()

    def change_replid(self) -> None:
        self.replid = os.urandom(20).hex()

    def acks_changed(self) -> None:
        pass

    def aof_switched(self, on: bool) -> None:
        pass

    def info_lines(self) -> list[str]:
        return [
            "role:master",
            "connected_slaves:0",
            "master_failover_state:no-failover",
            f"master_replid:{self.replid}",
            "master_replid2:0000000000000000000000000000000000000000",
            "master_repl_offset:0",
            "second_repl_offset:-1",
            "repl_backlog_active:0",
            f"repl_backlog_size:{self.engine.config['repl-backlog-size']}",
            "repl_backlog_first_byte_offset:0",
            "repl_backlog_histlen:0",
        ]

    def role(self) -> list[Any]:
        return [b"master", 0, []]

    def client_closed(self, client: ClientState) -> None:
        pass

    def resize_backlog(self, size: int) -> None:
        pass

    def replicate_only(self, db_index: int, argv: list[bytes]) -> None:
        pass

    def snapshot_aux(self) -> dict[bytes, bytes]:
        return {}

    def refresh_write_guard(self) -> None:
        pass

    def cron(self) -> None:
        pass

    # The replication commands: a bare engine (embedded, a unit test) has no
    # replication layer until one is attached.  What a server that never had
    # a replica answers, it answers; what needs the layer is refused.
    failover_running = False

    def replica_info(self, client: ClientState, *, listening_port: int | None = None,
                     ip: str | None = None, capa: bytes | None = None) -> None:
        raise CommandError(errors.NO_REPLICATION)

    def acked(self, client: ClientState, offset: int, aof_offset: int | None = None) -> None:
        pass  # not a replica: nothing to count

    def serve_sync(self, client: ClientState, replid: bytes, offset: bytes, *,
                   failover: bool = False, legacy_sync: bool = False) -> Any:
        raise CommandError(errors.NO_REPLICATION)

    def wait(self, woff: int, wanted: int, timeout_ms: int, may_block: bool) -> Any:
        raise CommandError(errors.NO_REPLICATION)

    def wait_aof(self, woff: int, numlocal: int, numreplicas: int, timeout_ms: int,
                 may_block: bool) -> Any:
        raise CommandError(errors.NO_REPLICATION)

    def replicaof(self, host: str | None, port: int, by: str) -> Any:
        raise CommandError(errors.NO_REPLICATION)

    def failover_command(self, host: str | None, port: int, timeout_ms: int,
                         force: bool) -> None:
        raise CommandError(errors.FAILOVER_NO_REPLICAS)

    def failover_abort(self) -> None:
        raise CommandError(errors.FAILOVER_NONE)


class Rate:
    """One of INFO's instantaneous metrics, as Redis computes them: every
    sample (at least 100 ms apart) is the counter's rate per second since
    the sample before, integer; the metric is the mean of the last 16."""

    SAMPLES = 16
    __slots__ = ("samples", "index", "last_ms", "last_value")

    def __init__(self) -> None:
        self.samples = [0] * self.SAMPLES
        self.index = 0
        self.last_ms = -1.0  # no sample yet
        self.last_value = 0

    def track(self, now_ms: float, value: int) -> None:
        if self.last_ms >= 0:
            elapsed = now_ms - self.last_ms
            self.samples[self.index] = int(max(0, value - self.last_value) * 1000 // elapsed) \
                if elapsed > 0 else 0
            self.index = (self.index + 1) % self.SAMPLES
        self.last_ms, self.last_value = now_ms, value

    def value(self) -> int:
        return sum(self.samples) // self.SAMPLES


class Metrics:
    """INFO stats' instantaneous metrics: commands per second and the
    network's bytes per second (clients', and the replication link's)."""

    PERIOD_MS = 100  # Redis samples them every 100 ms (serverCron)
    __slots__ = ("ops", "net_input", "net_output", "net_repl_input", "net_repl_output",
                 "sampled_ms")

    def __init__(self) -> None:
        self.ops, self.net_input, self.net_output = Rate(), Rate(), Rate()
        self.net_repl_input, self.net_repl_output = Rate(), Rate()
        self.sampled_ms = -1.0e9

    def sample(self, now_ms: float, processed: int, stats: dict[str, int]) -> None:
        """Take a sample of every metric (the cron, every PERIOD_MS).  O(1)."""
        self.sampled_ms = now_ms
        self.ops.track(now_ms, processed)
        self.net_input.track(now_ms, stats["net_input_bytes"])
        self.net_output.track(now_ms, stats["net_output_bytes"])
        self.net_repl_input.track(now_ms, stats["net_repl_input_bytes"])
        self.net_repl_output.track(now_ms, stats["net_repl_output_bytes"])


class OperatorState:
    """What the operator's commands keep: monitors, the slowlog, LATENCY's
    events and thresholds, CLIENT PAUSE.  One engine attribute, so the
    engine's own attribute loads stay fast (CPython specialises attribute
    access on instances with a small, shared set of keys)."""

    __slots__ = ("monitors", "slowlog", "slowlog_next_id", "latency_events",
                 "latency_threshold_ms", "slowlog_ns", "tracking", "pause_mode", "pause_end",
                 "postponed", "pause_timer", "bypass", "write_guard", "stale_guard",
                 "maxmemory", "hotkeys")

    def __init__(self) -> None:
        self.monitors: list[ClientState] = []       # MONITOR (empty: nothing to do)
        self.slowlog: deque[SlowlogEntry] = deque()  # newest first
        self.slowlog_next_id = 0
        self.latency_events: dict[str, LatencyEvent] = {}
        self.latency_threshold_ms = 0
        self.slowlog_ns = NEVER_NS
        self.tracking = True
        # CLIENT PAUSE: the mode ("all" or "write", None: no pause), its end
        # (monotonic seconds), the clients holding a postponed command (in
        # the order they came), its timer.
        self.pause_mode: str | None = None
        self.pause_end = 0.0
        self.postponed: list[ClientState] = []
        self.pause_timer: Any = None
        # While a pause or a monitor exists, the dispatch cache stays empty,
        # which sends every command through _execute_checked, where both
        # are handled: the fast path pays nothing.
        self.bypass = False
        # What may refuse clients' writes (Engine.set_write_guard): a
        # read-only replica, min-replicas-to-write; and every command not
        # flagged ``stale`` (set_stale_guard: a replica whose link is down
        # with replica-serve-stale-data no).
        self.write_guard: Callable[[ClientState], bytes | None] | None = None
        self.stale_guard: Callable[[ClientState], bytes | None] | None = None
        # maxmemory in bytes (0: no limit): past it, denyoom commands get -OOM.
        self.maxmemory = 0
        # The HOTKEYS session while it records (None: none records); like
        # a monitor, it keeps the dispatch cache empty.
        self.hotkeys: Any = None


class Engine:
    """All server state that is not sockets: databases, clients, blocking."""

    def __init__(self, config: Config | None = None, clock: Clock | None = None,
                 scheduler: Callable[[float, Callable[[], None]], Any] | None = None) -> None:
        self.config = config or Config()
        self.clock = clock or Clock()
        self.schedule = scheduler  # schedule(delay_s, fn) -> handle with .cancel()
        self.dbs = [Database(i, self.clock.now_ms) for i in range(self.config["databases"])]
        for db in self.dbs:
            db.on_expired = self._key_expired
            db.on_fields_expired = self._fields_expired
        self.clients: dict[int, ClientState] = {}
        self._next_client_id = 1
        # MONITOR, SLOWLOG, LATENCY, CLIENT PAUSE (OperatorState); the one
        # number the command path reads is the lower of the slowlog and
        # latency thresholds, in ns (refresh_thresholds).
        self.ops = OperatorState()
        self._watch_ns = NEVER_NS
        self.waiters: dict[tuple[int, bytes], deque[Waiter]] = {}
        # Pub/Sub subscriptions; a client's own are also its ``pubsub``.
        self.pubsub = PubSub(_channel_match)
        # Keyspace notifications (notify-keyspace-events): see set_notify.
        self.notify_flags = 0
        self.set_notify(self.config["notify-keyspace-events"])
        self._ready: dict[tuple[int, bytes], None] = {}
        # Each listener gets a list of (db index, argv) effects per command or
        # transaction; several effects of one command or transaction come
        # wrapped in MULTI/EXEC, as Redis propagates them.
        self.effect_listeners: list[Callable[[list[tuple[int, Effect]]], None]] = []
        self._tx_effects: list[tuple[int, Effect]] | None = None
        self.shutdown_hook: Callable[[], None] | None = None
        # CONFIG SET port, bind, tls-port or a tls-* option: the network layer
        # makes its listeners match ("port", "bind", "tls-port", "tls") and
        # returns None, or the why of the failure with nothing changed.
        self.listen_hook: Callable[[str], bytes | None] | None = None
        # Snapshots and the AOF: tidelog.persistence attaches its own.
        self.persistence: Persistence = NoPersistence(self)
        # Replicas: tidelog.replication attaches a primary when one connects.
        self.replication: Replication = NoReplication(self)
        self.started = self.clock.monotonic()
        self.started_ms = self.clock.now_ms()
        self.run_id = os.urandom(20).hex()
        self.dirty = 0
        self.stats: dict[str, int] = {
            "total_connections_received": 0,
            "rejected_connections": 0, "keyspace_hits": 0, "keyspace_misses": 0,
            "expired_keys": 0, "expired_subkeys": 0, "total_error_replies": 0,
            "unexpected_error_replies": 0, "client_output_buffer_limit_disconnections": 0,
            "acl_access_denied_auth": 0, "acl_access_denied_cmd": 0, "acl_access_denied_key": 0,
            "acl_access_denied_channel": 0, "evicted_keys": 0,
            # Replication (a primary's): full syncs, partial ones accepted and refused.
            "sync_full": 0, "sync_partial_ok": 0, "sync_partial_err": 0,
            # The bytes the network layer reads and writes: clients' (replicas'
            # reads included, as Redis counts them), and the replication link's
            # (what a replica reads of its primary, what a primary writes to
            # its replicas).
            "net_input_bytes": 0, "net_output_bytes": 0,
            "net_repl_input_bytes": 0, "net_repl_output_bytes": 0,
            # Clients closed for passing client-query-buffer-limit (Redis 7.4).
            "client_query_buffer_limit_disconnections": 0,
            # BGSAVE and BGREWRITEAOF children: how many, the last fork()'s time.
            "total_forks": 0, "latest_fork_usec": 0,
            "expire_cycle_ns": 0,  # time in the cron's active expiry
        }
        # INFO's instantaneous_* rates, sampled by the cron (Metrics.sample).
        self.metrics = Metrics()
        # The last RDB load (start-up, DEBUG RELOAD, a replica's full sync):
        # keys loaded, and keys skipped as already expired (INFO persistence).
        self.rdb_last_load = (0, 0)
        # ACL: the users (requirepass is the default user's password, ``user``
        # lines and the aclfile make the others), the ACL LOG.
        self.acl = Acl(allchannels_default=self.config["acl-pubsub-default"] == "allchannels",
                       log_max=self.config["acllog-max-len"])
        self._load_users()
        # INFO errorstats: error replies by code (the message's first word).
        self.error_counts: dict[str, int] = {}
        # Every command this engine has resolved, by table name (the order
        # of first use is INFO commandstats' order), and by raw name bytes.
        self._entries: dict[str, Entry] = {}
        self._dispatch: dict[bytes, Entry] = {}
        # The raw names in the dispatch whose command has a run handler
        # (see run_key): a connection checks a name here before gathering.
        self.runnable: set[bytes] = set()
        self.internal_errors = 0  # bugs caught; tests assert this stays 0
        # Lazy free (free_later): the values waiting to be dropped, and how
        # many were since CONFIG RESETSTAT (INFO memory's two lazyfree lines).
        self.lazyfree_pending: list[Any] = []
        self.lazyfreed_objects = 0
        # When the cross protocol warning was last logged (monotonic seconds).
        self._cross_protocol_logged: float | None = None
        self.active_expire = True  # DEBUG SET-ACTIVE-EXPIRE 0 turns the cron's expiry off
        self.pause_cron = False    # DEBUG PAUSE-CRON 1 skips the cron's work altogether
        # DEBUG SET-DISABLE-DENY-SCRIPTS 1: scripts may run the commands
        # flagged noscript (a testing aid, as in Redis)
        self.disable_deny_scripts = False
        self._executing = False
        # Streams' IDMP states holding pairs, swept round-robin by the cron.
        # Weak references: a deleted stream's state just drops out.
        self._idmp_sweep: deque[weakref.ref[Any]] = deque()
        self._idmp_swept: weakref.WeakSet[Any] = weakref.WeakSet()
        # Lua scripting: the script cache and the runner (EVAL, SCRIPT).
        self.scripts = Scripts(self)
        # Client-side caching (CLIENT TRACKING): the tracking table, and who
        # is told of which modified key (commands.tracking).
        self.tracking = Tracker(self)
        # HOTKEYS: the latest session, recording or stopped (a
        # commands.hotkeys.Session; None: none).  See hotkeys_changed.
        self.hotkeys: Any = None
        # rename-command: lower-case name -> the table's name it stands for
        # (None: a name that no longer exists); empty without renames.
        self.names: dict[bytes, bytes | None] = {}
        self.apply_renames(self.config.renames)
        self.refresh_thresholds()
        self.ops.maxmemory = self.config["maxmemory"]
        # The LFU options, shared by every database while an LFU policy is
        # in force (set_policy).
        self.lfu = Lfu()
        self.set_policy()

    def _load_users(self) -> None:
        """The users a server starts with: requirepass, the config file's
        ``user`` lines or the aclfile (not both).  Raises ValueError with
        Redis's reason when they cannot be loaded."""
        config = self.config
        if config["requirepass"]:
            self.acl.set_default_password(config["requirepass"].encode("utf-8", "surrogateescape"))
        if config["aclfile"] and config.users:
            raise ValueError(errors.ACL_FILE_AND_USERS)
        self.acl.load_config_users(config.users)
        if config["aclfile"]:
            try:
                with open(config["aclfile"], "rb") as f:
                    text = f.read()
            except OSError as exc:
                raise ValueError("Aborting Redis startup because of ACL errors: Error loading "
                                 "ACLs, opening file '%s': %s" % (config["aclfile"], exc.strerror)
                                 ) from None
            try:
                users = self.acl.parse_file(text, config["aclfile"].encode())
            except CommandError as exc:
                raise ValueError("Aborting Redis startup because of ACL errors: "
                                 + exc.message[4:].decode("utf-8", "replace")) from None
            self.acl.replace_users(users)

    # -- clients ------------------------------------------------------------------
    def new_client(self, **attrs: Any) -> ClientState:
        """A connection's client: the default user, authenticated when that
        user needs no password.  The server's own clients (``kind`` aof or
        master) have no user and may run anything, as Redis's."""
        now = self.clock.monotonic()
        client = ClientState(id=self._next_client_id, created=now, last_interaction=now, **attrs)
        if client.kind == "normal":
            client.user = self.acl.default
            client.authenticated = client.ever_authenticated = not self.acl.auth_required()
        self._next_client_id += 1
        self.clients[client.id] = client
        self.stats["total_connections_received"] += 1
        self.refresh_access(client)
        return client

    # -- ACL --------------------------------------------------------------------------
    def refresh_access(self, client: ClientState) -> None:
        """Which dispatch a client uses: the engine's cache when it may run
        anything (authenticated, or no password needed, and a user without
        restrictions), else an empty one, so that each of its commands is
        checked by :meth:`_access`; so is each command of a client that
        tracks keys (CLIENT TRACKING: :meth:`_call_tracking`).  Called
        whenever the client's user, the users or its tracking change."""
        user = client.user
        free = (client.authenticated or not self.acl.auth_required()) and \
            (user is None or user.unrestricted) and client.tracking is None
        client.dispatch = self._dispatch if free else NO_DISPATCH

    def set_client_user(self, client: ClientState, user: User | None) -> None:
        """AUTH / HELLO AUTH succeeded (``user``), or RESET (None: the default
        user, authenticated as at connect)."""
        if user is None:
            client.user = self.acl.default
            client.authenticated = not self.acl.auth_required()
        else:
            client.user = user
            client.authenticated = client.ever_authenticated = True
        self.refresh_access(client)

    def users_changed(self, current: ClientState | None, deleted: list[User] = (),  # type: ignore[assignment]
                      changed: list[User] = ()) -> None:  # type: ignore[assignment]
        """After ACL SETUSER, DELUSER, LOAD or requirepass: the clients of a
        deleted user are closed (``current``, the one running the command,
        after its reply), subscribers whose channels a changed user no
        longer allows too; every client's dispatch is chosen again."""
        gone = {id(u) for u in deleted}
        narrowed = {id(u) for u in changed}
        for client in list(self.clients.values()):
            user = client.user
            if user is not None and id(user) in gone:
                client.user, client.authenticated = self.acl.default, False
                self.disconnect(client, current)
            elif user is not None and id(user) in narrowed and client.pubsub is not None and \
                    not self._subscriptions_allowed(client, user):
                self.disconnect(client, current)
            self.refresh_access(client)

    def _subscriptions_allowed(self, client: ClientState, user: User) -> bool:
        channels, patterns, shard = client.pubsub.kinds
        return all(user.channel_allowed(c, False) for c in (*channels, *shard)) and \
            all(user.channel_allowed(p, True) for p in patterns)

    def disconnect(self, client: ClientState, current: ClientState | None) -> None:
        """Close a client: ``current`` (the one running the command) once its
        reply is written, any other now."""
        if client is current:
            client.close_after_reply = True
        elif client.kill is not None:
            client.kill()

    def _access(self, client: ClientState, entry: Entry, argv: list[bytes]) -> Reply | None:
        """-NOAUTH before authenticating (but for AUTH, HELLO and the other
        ``no_auth`` commands), -NOPERM when the user may not run this command
        on these keys and channels (logged in ACL LOG); None to go on."""
        if not client.authenticated and not entry.no_auth and self.acl.auth_required():
            return self._reject(client, entry, errors.NOAUTH)
        denial = self._acl_refusal(client, entry.spec, argv)
        if denial is None:
            return None
        result, at = denial
        self.acl_denied(client, result, entry.spec, argv, at,
                        b"multi" if client.multi is not None else b"toplevel")
        return self._reject(client, entry, b"NOPERM " + denial_message(
            result, client.user, entry.spec, argv[at], False))

    @staticmethod
    def _acl_refusal(client: ClientState, spec: table.CommandSpec,
                     argv: list[bytes]) -> tuple[int, int] | None:
        """Why the client's user may not run ``argv`` (the reason and the
        argument at fault), or None when it may."""
        user = client.user
        if user is None or user.unrestricted:
            return None
        result, at = user.check(spec, argv)
        return None if result == ACL_OK else (result, at)

    def _recheck(self, client: ClientState, entry: Entry, argv: list[bytes]) -> Reply | None:
        """EXEC: a queued command is checked again, as the user's rules may
        have changed since it was queued; refused, it is logged and answered
        in EXEC's array, and the others run."""
        denial = self._acl_refusal(client, entry.spec, argv)
        if denial is None:
            return None
        result, at = denial
        self.acl_denied(client, result, entry.spec, argv, at, b"multi")
        return self._error(errors.ACL_EXEC_CHANGED % errors.ACL_EXEC_REASONS[result])

    def acl_denied(self, client: ClientState, result: int, spec: table.CommandSpec | None,
                   argv: list[bytes], at: int, context: bytes,
                   username: bytes | None = None) -> None:
        """Log a refusal in ACL LOG (and count it in INFO stats): the
        command's name, or the key or channel at ``at``; an AUTH failure
        logs the command's name as sent and the user name tried."""
        user = client.user
        if result == DENIED_CMD and spec is not None:
            obj = spec.name.encode()
        elif result == DENIED_AUTH:
            obj = argv[0]
        else:
            obj = argv[at]
        if username is None:
            username = user.name if user is not None else b"default"
        self.stats[_DENIED_STATS[result]] += 1
        self.acl.add_log(result, context, obj, username,
                         client_info_line(self, client, argv), self.clock.now_ms())

    def client_closed(self, client: ClientState) -> None:
        """Forget a client: unblock it silently and drop its watches."""
        if client.blocked is not None:
            self._unblock(client.blocked)
        self.unwatch_all(client)
        self.drop_subscriptions(client)
        if client.tracking is not None:
            self.tracking.disable(client)
        self.replication.client_closed(client)
        self.remove_monitor(client)
        client.himport = None  # its HIMPORT fieldsets go with it
        if client.postponed:
            client.postponed = False
            self.ops.postponed.remove(client)
        self.clients.pop(client.id, None)

    def drop_subscriptions(self, client: ClientState) -> None:
        """Forget every Pub/Sub subscription of a client (RESET, close)."""
        if client.pubsub is not None:
            self.pubsub.drop(client)
            client.pubsub = None

    # -- keyspace notifications ----------------------------------------------------
    def set_notify(self, flags: int) -> None:
        """Take the notify-keyspace-events classes in force.  Nothing is
        published unless K, E or a subkey channel (S, T, I, V) says where to:
        the flags are then 0, so ``Ctx.notify`` costs one test."""
        where = NOTIFY_KEYSPACE | NOTIFY_KEYEVENT | NOTIFY_SUBKEY_ANY
        self.notify_flags = flags if flags & where else 0
        on_new = self._key_new if self.notify_flags & NOTIFY_NEW else None
        for db in self.dbs:
            db.on_new = on_new

    def notify_keyspace(self, cls: int, event: bytes, key: bytes, db_index: int,
                        subkeys: list[bytes] | None = None) -> None:
        """Publish one keyspace event (its class is on): to the key's
        ``__keyspace@<db>__`` channel (K), then to the event's
        ``__keyevent@<db>__`` channel (E), as Redis does; with the subkeys
        (hash fields) it touched, also to the subkey channels S, T, I, V."""
        flags = self.notify_flags
        if not flags & cls:
            return
        tables = self.pubsub.tables
        if not tables[0] and not tables[1]:  # no channel or pattern has a subscriber
            return
        if flags & NOTIFY_KEYSPACE:
            self._publish(b"__keyspace@%d__:%s" % (db_index, key), event)
        if flags & NOTIFY_KEYEVENT:
            self._publish(b"__keyevent@%d__:%s" % (db_index, event), key)
        if subkeys and flags & NOTIFY_SUBKEY_ANY:
            self._notify_subkeys(flags, event, key, db_index, subkeys)

    def _notify_subkeys(self, flags: int, event: bytes, key: bytes, db_index: int,
                        subkeys: list[bytes]) -> None:
        """Redis 8.8's subkey notifications: subkeys travel length-prefixed
        (``<len>:<subkey>``, comma-separated) so any bytes are safe.  An
        event with ``|`` skips the channels that use ``|`` as separator, a
        key with a newline the per-subkey channel.  O(subkeys)."""
        listed = b",".join(b"%d:%s" % (len(sub), sub) for sub in subkeys)
        plain_event = b"|" not in event
        if flags & NOTIFY_SUBKEYSPACE and plain_event:
            self._publish(b"__subkeyspace@%d__:%s" % (db_index, key), event + b"|" + listed)
        if flags & NOTIFY_SUBKEYEVENT:
            self._publish(b"__subkeyevent@%d__:%s" % (db_index, event),
                          b"%d:%s|%s" % (len(key), key, listed))
        if flags & NOTIFY_SUBKEYSPACEITEM and b"\n" not in key:
            for sub in subkeys:
                self._publish(b"__subkeyspaceitem@%d__:%s\n%s" % (db_index, key, sub), event)
        if flags & NOTIFY_SUBKEYSPACEEVENT and plain_event:
            self._publish(b"__subkeyspaceevent@%d__:%s|%s" % (db_index, event, key), listed)

    def _publish(self, channel: bytes, message: bytes) -> None:
        direct, by_pattern = self.pubsub.receivers(channel)
        if direct:
            push = Push([b"message", channel, message])
            for client in direct:
                client.send(push)
        for pattern, client in by_pattern:
            client.send(Push([b"pmessage", pattern, channel, message]))

    def _key_new(self, db: Database, key: bytes) -> None:
        self.notify_keyspace(NOTIFY_NEW, b"new", key, db.index)

    # -- the operator's state, as handlers read it ----------------------------------
    @property
    def monitors(self) -> list[ClientState]:
        return self.ops.monitors

    @property
    def slowlog(self) -> deque[SlowlogEntry]:
        return self.ops.slowlog

    @property
    def latency_events(self) -> dict[str, LatencyEvent]:
        return self.ops.latency_events

    @property
    def latency_threshold_ms(self) -> int:
        return self.ops.latency_threshold_ms

    @property
    def pause_mode(self) -> str | None:
        return self.ops.pause_mode

    # -- CLIENT PAUSE ---------------------------------------------------------------
    def pause(self, ms: int, mode: str) -> None:
        """CLIENT PAUSE: hold back the commands of clients ("all") or the
        writes ("write") for ``ms`` milliseconds.  A pause in force is
        extended, never shortened, and ALL wins over WRITE."""
        end = self.clock.monotonic() + ms / 1000
        if self.ops.pause_mode is None:
            self.ops.pause_mode, self.ops.pause_end = mode, end
            self._bypass_dispatch()
            for db in self.dbs:  # expiry is a write: it waits (both modes, as Redis)
                db.expiry_held = True
        else:
            if mode == "all":
                self.ops.pause_mode = "all"
            self.ops.pause_end = max(self.ops.pause_end, end)
        self._schedule_unpause()

    def _schedule_unpause(self) -> None:
        if self.ops.pause_timer is not None:
            self.ops.pause_timer.cancel()
            self.ops.pause_timer = None
        if self.schedule is not None:
            delay = max(0.0, self.ops.pause_end - self.clock.monotonic())
            self.ops.pause_timer = self.schedule(delay, self._pause_timeout)

    def _pause_timeout(self) -> None:
        self.ops.pause_timer = None
        if self.ops.pause_mode is None:
            return
        if self.clock.monotonic() < self.ops.pause_end:  # an early timer
            self._schedule_unpause()
        else:
            self.unpause()

    def unpause(self) -> None:
        """End the pause: the postponed clients run their commands, in the
        order they were held back."""
        if self.ops.pause_mode is None:
            return
        self.ops.pause_mode = None
        if self.ops.pause_timer is not None:
            self.ops.pause_timer.cancel()
            self.ops.pause_timer = None
        for db in self.dbs:
            db.expiry_held = False
        self._bypass_dispatch()
        held, self.ops.postponed = self.ops.postponed, []
        for client in held:
            client.postponed = False
            if client.resume is not None:
                client.resume()

    def _bypass_dispatch(self) -> None:
        """Keep the dispatch cache empty while a pause, a monitor or a
        recording HOTKEYS session exists (every command then takes
        _execute_checked); it fills again after."""
        self.ops.bypass = self.ops.pause_mode is not None or bool(self.ops.monitors) or \
            self.ops.hotkeys is not None
        if self.ops.bypass:
            self._forget_dispatch()

    def _held(self, client: ClientState, entry: Entry, argv: list[bytes]) -> bool:
        """Does the pause in force hold this command back?"""
        if self.ops.pause_mode == "all":
            return True
        if entry.may_write:
            return not self._script_reads_only(entry.name, argv)
        if entry.name == "exec" and client.multi:  # a transaction that writes
            for queued in client.multi:
                spec = table.lookup(queued)
                if spec is not None and self._entry(spec).may_write and \
                        not self._script_reads_only(spec.name, queued):
                    return True
        return False

    def _script_allows_oom(self) -> bool:
        """The running script or function is flagged allow-oom: its commands
        run whatever the memory in use, as in Redis."""
        job = self.scripts.current
        return job is not None and b"allow-oom" in job.script.flags

    def _script_reads_only(self, name: str, argv: list[bytes]) -> bool:
        """EVAL, EVALSHA or FCALL of a script or function flagged no-writes
        (a shebang's flags, a function's): as in Redis, CLIENT PAUSE WRITE
        lets it run.  O(1) but for EVAL's shebang line."""
        flags = self._script_flags(name, argv)
        return flags is not None and b"no-writes" in flags

    def _script_flags(self, name: str, argv: list[bytes]) -> frozenset[bytes] | None:
        """The flags of the script or function an EVAL, EVALSHA or FCALL (or
        their _RO forms) runs; None for a script without a shebang, one not
        found, or another command."""
        if len(argv) < 2:
            return None
        if name in ("eval", "eval_ro"):
            if not argv[1].startswith(b"#!"):
                return None
            try:
                return parse_shebang(argv[1])[1]
            except CommandError:
                return None
        if name in ("evalsha", "evalsha_ro"):
            script = self.scripts.cache.get(argv[1].lower())
            return script.flags if script is not None and script.shebang else None
        if name in ("fcall", "fcall_ro"):
            try:
                return self.scripts.function(argv[1]).flags
            except CommandError:
                return None
        return None

    # -- HOTKEYS --------------------------------------------------------------------
    def hotkeys_changed(self) -> None:
        """HOTKEYS started, stopped or dropped a session: while one records,
        every command takes the checked path, which measures it
        (:meth:`_hotkeys_record`); otherwise nothing is measured."""
        session = self.hotkeys
        self.ops.hotkeys = session if session is not None and session.active else None
        self._bypass_dispatch()

    def _hotkeys_record(self, session: Any, client: ClientState, entry: Entry,
                        argv: list[bytes], reply: Reply, started_ns: int) -> None:
        """Count one command for the recording HOTKEYS session: its time
        since ``started_ns`` and its bytes (a blocked or held command: its
        request's only).  Stops the session first when its DURATION is over.
        O(len(argv) + the reply's size)."""
        elapsed_us = (now_ns() - started_ns) // 1000
        if session.deadline_ms and session.expire(self.clock.now_ms()):
            self.hotkeys_changed()
            return
        if reply is BLOCKED or reply is POSTPONED or reply is ABORTED:
            reply = RawReply(b"")
        session.record(entry.spec, argv, elapsed_us, reply, client.protocol)

    # -- MONITOR --------------------------------------------------------------------
    def add_monitor(self, client: ClientState) -> None:
        """MONITOR: show this client every command run from now on."""
        if not client.monitor:
            client.monitor = True
            self.ops.monitors.append(client)
            self._bypass_dispatch()

    def remove_monitor(self, client: ClientState) -> None:
        """RESET, or the connection closed: stop showing it commands."""
        if client.monitor:
            client.monitor = False
            self.ops.monitors.remove(client)
            self._bypass_dispatch()

    def feed_monitors(self, client: ClientState | None, db_index: int, argv: list[bytes],
                      from_script: bool = False) -> None:
        """Show one command to every monitor, in Redis's MONITOR line format:
        ``+<unix time.usec> [<db> <addr>] "arg" ...``; ``lua`` in place of the
        address for a command a script ran (``from_script``)."""
        if self.ops.monitors:
            line = self._monitor_line(client, db_index, argv, from_script)
            for monitor in list(self.ops.monitors):
                monitor.send(line)

    def _monitor_line(self, client: ClientState | None, db_index: int, argv: list[bytes],
                      from_script: bool) -> RawReply:
        if from_script or client is None:
            where = "lua"
        elif client.addr.startswith("/"):  # a Unix socket: "unix:<path>"
            where = "unix:" + client.addr.rpartition(":")[0]
        else:
            where = client.addr
        sec, usec = divmod(time.time_ns() // 1000, 1_000_000)
        line = RawReply(b"+%d.%06d [%d %s] %s\r\n" % (
            sec, usec, db_index, where.encode(),
            b" ".join([repr_arg(a) for a in monitor_args(argv)])))
        return line

    # -- executing ------------------------------------------------------------------
    def execute(self, client: ClientState, argv: list[bytes]) -> Reply:
        """Run one command for a client: a reply, or BLOCKED.

        The common case costs one dict lookup on the raw name bytes and an
        arity check; unknown names, subcommands and MULTI take
        :meth:`_execute_checked`, and so does every command of a client
        that must be checked first (not authenticated, or a user with
        restrictions): its ``dispatch`` is empty (:meth:`refresh_access`)."""
        entry = client.dispatch.get(argv[0])
        if entry is not None and client.multi is None and client.pubsub is None:
            arity = entry.arity
            argc = len(argv)
            if argc == arity or (arity < 0 and argc >= -arity):
                client.last_command = entry.name
                reply = self._call(client, entry, argv, True)
                if self._ready and not self._executing:
                    self.serve_ready()
                return reply
        return self._execute_checked(client, argv)

    def execute_many(self, client: ClientState, batch: list[list[bytes]], i: int,
                     replies: list[Reply]) -> tuple[int, Reply]:
        """Run ``batch[i:]`` in order, each as :meth:`execute` would, while
        each takes the fast dispatch and its reply needs nothing of the
        network layer; their replies are appended to ``replies``.

        Returns ``(j, reply)``: with ``reply`` NOT_RUN, ``batch[j]`` was
        not run (``j == len(batch)``: all were) because it takes the
        checked path or a run (it has a run handler); else ``batch[j-1]``
        ran and ``reply`` is its reply, not appended, for the caller to look
        at as at what execute() returns: BLOCKED, or a reply after which the
        client is muted (CLIENT REPLY), speaks another protocol (HELLO),
        closes (QUIT, its own CLIENT KILL), is blocked, or that is several
        (``Replies``).  A connection closes during a command only that way,
        through ``close_after_reply``.

        Why not execute() per command: the loop is the per-command floor
        (PING), and two Python calls per command (execute, _call) were a
        sixth of it; so the body of :meth:`_call` is written out here.  The
        two must stay alike (the exceptions go through :meth:`_failed`).
        Cost: O(1) per command, with the handler's."""
        n = len(batch)
        proto = client.protocol
        spare: Ctx | None = None  # the context the loop's commands share (below)
        while i < n:
            argv = batch[i]
            entry = client.dispatch.get(argv[0])
            if entry is None or entry.run is not None or client.multi is not None or \
                    client.pubsub is not None or client.no_touch:
                return i, NOT_RUN
            arity = entry.arity
            argc = len(argv)
            if argc != arity and (arity > 0 or argc < -arity):
                return i, NOT_RUN
            i += 1
            client.last_command = entry.name
            # _call, written out (see above).
            started = now_ns()
            # One Ctx serves the loop's commands in turn, as long as nothing
            # kept it: a reference count of 3 (spare, ctx, getrefcount's
            # argument) says nobody else holds it; else a new one is made.
            # Making and freeing one were a fifth of a PING's instructions;
            # resetting what a command changes costs a third of that.
            ctx = spare
            if ctx is None or getrefcount(ctx) != 3:
                ctx = spare = Ctx.new(self, client, argv, entry, True)
            else:
                ctx.db = self.dbs[client.db]
                ctx.argv = argv
                ctx.spec = entry
                ctx.effects = None
                ctx.changes = 0
            try:
                reply = entry.handler(ctx, argv)
            except Exception as exc:
                reply = self._failed(entry, argv, exc)
            finally:
                elapsed = entry.stop(started)
            if elapsed >= self._watch_ns:
                self._slow_call(client, entry, argv, elapsed, reply)
            if reply.__class__ is Wait:
                reply = self._block(ctx, reply)
            if ctx.changes or ctx.effects:
                self._finish(ctx)
            if self._ready and not self._executing:
                self.serve_ready()
            if reply is BLOCKED or client.mute or client.protocol != proto or \
                    reply.__class__ is Replies or client.close_after_reply or \
                    client.blocked is not None:
                return i, reply
            replies.append(reply)
        return i, NOT_RUN

    def set_write_guard(self, guard: Callable[[ClientState], bytes | None] | None) -> None:
        """``guard(client)``: the error refusing a write command now, or None
        (a read-only replica's -READONLY, min-replicas-to-write's
        -NOREPLICAS).  While a guard is set, the fast dispatch holds no write
        command, so every write takes :meth:`_execute_checked`, which asks
        it: the check costs reads nothing, and nothing at all without a guard."""
        self.ops.write_guard = guard
        self._forget_dispatch()

    def fits_in_memory(self) -> bool:
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

    def _evict(self, db: Database, key: bytes) -> None:
        """Delete one key for maxmemory, as Redis does: propagated as DEL,
        WATCH fails, blocked clients look again, an ``evicted`` event."""
        db.delete(key)
        db.touch(key)
        self.stats["evicted_keys"] += 1
        self.signal_ready(db.index, key)
        self.emit([(db.index, [b"DEL", key])])
        if self.notify_flags & NOTIFY_EVICTED:
            self.notify_keyspace(NOTIFY_EVICTED, b"evicted", key, db.index)

    def set_policy(self) -> None:
        """maxmemory-policy, lfu-log-factor or lfu-decay-time changed: what
        lookups and writes mark on keys from now on (Database.track).  O(1)
        per database: keys keep their marks, read the new way."""
        policy = self.config["maxmemory-policy"]
        self.lfu.log_factor = self.config["lfu-log-factor"]
        self.lfu.decay_time = self.config["lfu-decay-time"]
        lfu = self.lfu if policy.endswith("-lfu") else None
        for db in self.dbs:
            db.track(lfu, policy.endswith("-lrm"))

    def set_maxmemory(self, limit: int) -> None:
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

    def set_stale_guard(self, guard: Callable[[ClientState], bytes | None] | None) -> None:
        """``guard(client)``: the error refusing any command not flagged
        ``stale`` now, or None (-MASTERDOWN).  While set, nothing is in the
        fast dispatch (it is set only while a replica's link is down)."""
        self.ops.stale_guard = guard
        self._forget_dispatch()

    def _forget_dispatch(self) -> None:
        """Empty the dispatch cache, so every command is resolved again under
        the guards now in force.  (The dict is the same object for the
        engine's life: unrestricted clients hold it as ``client.dispatch``.)"""
        self._dispatch.clear()
        self.runnable.clear()

    # -- runs ---------------------------------------------------------------------
    def run_key(self, argv: list[bytes]) -> tuple[Entry, bytes] | None:
        """What names the run ``argv`` can start or join: its command and key,
        when the command has a run handler (``table.runs``) and argv has the
        form it takes; else None.  Only for names in :attr:`runnable`."""
        entry = self._dispatch.get(argv[0])
        if entry is None:  # the cache is set aside (a pause, a monitor): no runs
            return None
        argc = len(argv)
        arity = entry.arity
        if argc != arity and (arity > 0 or argc < -arity):
            return None
        key = entry.run.key_of(argv)  # type: ignore[union-attr]
        return None if key is None else (entry, key)

    def execute_run(self, client: ClientState, run: list[list[bytes]]) -> list[Reply]:
        """Run consecutive pipelined calls that :meth:`run_key` gave one value
        for, answering a reply each, exactly as :meth:`execute` one by one
        would: the same data, replies, effects (one unit per call) and
        statistics.  One by one it is, when the client is in MULTI or has
        subscriptions (RESP2's subscribed mode refuses each), or anyone
        waits on a key (Redis serves blocked clients between two commands,
        so each call must be seen alone), or the client must be checked.
        Cost: one handler call for the
        run instead of one per call."""
        if len(run) == 1 or client.multi is not None or self.waiters or \
                client.pubsub is not None or self.ops.monitors or client.monitor or \
                client.dispatch is not self._dispatch:
            return [self.execute(client, argv) for argv in run]
        entry = self._dispatch[run[0][0]]
        client.last_command = entry.name
        entry.calls += len(run)
        started = now_ns()
        ctx = Ctx.new(self, client, run[0], entry, False)
        no_touch = client.no_touch
        if no_touch:
            ctx.db.no_touch = True
        try:
            results = entry.run.handler(ctx, run)  # type: ignore[union-attr]
        except Exception:
            log.exception("internal error running a run of %d %r", len(run), run[0][:8])
            self.internal_errors += 1
            self.stats["unexpected_error_replies"] += len(run)
            results = [CommandError(errors.INTERNAL)] * len(run)
        finally:
            if no_touch:
                ctx.db.no_touch = False
        replies = []
        for r in results:
            if isinstance(r, CommandError):
                entry.failed += 1
                r = self._error(r.message)
            replies.append(r)
        elapsed = now_ns() - started
        entry.ns += elapsed
        each = elapsed // len(run)  # what one call took, on average
        entry.hist[each.bit_length()] += len(run)
        if each >= self._watch_ns:
            for argv in run:
                self._slow_call(client, entry, argv, each, None)
        if ctx.changes:
            self.dirty += ctx.changes
        if ctx.effects and self.effect_listeners:
            index = ctx.db.index
            for effect in ctx.effects:  # one unit per call, as one by one
                self.emit([(index, effect)])
        if self._ready and not self._executing:
            self.serve_ready()
        return replies

    def _execute_checked(self, client: ClientState, argv: list[bytes]) -> Reply:
        try:
            entry = self._resolve(argv)
        except CommandError as exc:
            # POST and Host: are no commands, so this costs nothing on the
            # way of any real one.
            if argv[0].lower() in CROSS_PROTOCOL_NAMES and client.kind in _NETWORK_KINDS:
                return self.cross_protocol()
            if client.multi is not None:
                client.multi_error = True
            elif client.tracking is not None:
                # CLIENT CACHING covered this command, unless it is a CLIENT
                # subcommand (with the wrong argument count), as in Redis.
                spec = table.lookup(argv)
                if spec is None or not spec.name.startswith("client|"):
                    client.tracking.caching = False
            return self._error(exc.message)
        client.last_command = entry.name
        if client.dispatch is not self._dispatch:  # not authenticated, or restricted
            refusal = self._access(client, entry, argv)
            if refusal is not None:
                return refusal
        ops = self.ops
        allow_stale, deny_oom, is_write = entry.allow_stale, entry.deny_oom, entry.is_write
        if client.multi and entry.name == "exec" and (
                ops.stale_guard is not None or ops.maxmemory or ops.write_guard is not None):
            # EXEC is refused as its queued commands would be (Redis: the
            # transaction's flags), as EXECABORT
            allow_stale, deny_oom, is_write = self._queued_flags(client)
        elif entry.name in SCRIPT_RUNNERS and (
                ops.stale_guard is not None or ops.maxmemory or ops.write_guard is not None):
            # A shebang's or a function's flags stand for the command's own
            # (Redis's scriptFlagsToCmdFlags): no-writes makes it a read,
            # which may run past maxmemory; otherwise allow-oom and
            # allow-stale say.  A script without a shebang keeps EVAL's.
            flags = self._script_flags(entry.name, argv)
            if flags is not None:
                is_write = b"no-writes" not in flags
                deny_oom = is_write and b"allow-oom" not in flags
                allow_stale = b"allow-stale" in flags
        if ops.stale_guard is not None and not allow_stale:
            refusal = ops.stale_guard(client)
            if refusal is not None:
                return self._reject(client, entry, refusal)
        # As Redis, keys are evicted before any command that comes this way (a
        # read too, so a tracking client gets the evicted keys' invalidations
        # before its reply); only the commands that grow the data are refused
        # when that is not enough.
        if ops.maxmemory and client.kind == "normal" and not self.fits_in_memory() and \
                deny_oom:
            return self._reject(client, entry, errors.OOM)
        if self.tracking.clients:
            # tracking-table-max-keys lowered since the last check: as Redis,
            # keys are given up before the next command (queued in MULTI
            # too), their messages ahead of its reply.  (The fast dispatch
            # skips this; the cron does it for those commands.)
            self.tracking.enforce_limit()
        if is_write and ops.write_guard is not None:
            refusal = ops.write_guard(client)
            if refusal is not None:
                return self._reject(client, entry, refusal)
        if client.pubsub is not None and client.protocol == 2 and \
                entry.name.partition("|")[0] not in _SUBSCRIBED_MODE:
            if client.multi is not None:
                client.multi_error = True
            entry.rejected += 1
            return self._error(errors.pubsub_context(entry.name).message)
        if client.monitor and entry.keyspace:
            entry.rejected += 1
            return self._error(errors.REPLICA_KEYSPACE)
        if self.ops.pause_mode is not None and not client.monitor and self._held(client, entry, argv):
            client.postponed = True
            self.ops.postponed.append(client)
            return POSTPONED
        if client.multi is not None:
            if entry.refused_in_multi:
                client.multi_error = True
                entry.rejected += 1
                return self._error(errors.NOT_IN_MULTI)
            if entry.queued_in_multi:
                client.multi.append(argv)
                return QUEUED
        hotkeys = ops.hotkeys
        if hotkeys is not None:
            started = now_ns()
        if client.tracking is not None:
            reply = self._call_tracking(client, entry, argv)
        elif self.ops.monitors and entry.monitor:
            reply = self._call_monitored(client, entry, argv, True)
        else:
            reply = self._call(client, entry, argv, True)
        if hotkeys is not None and hotkeys.active:
            self._hotkeys_record(hotkeys, client, entry, argv, reply, started)
        if self._ready and not self._executing:
            self.serve_ready()
        return reply

    def _call_tracking(self, client: ClientState, entry: Entry, argv: list[bytes]) -> Reply:
        """A command of a client that tracks keys (CLIENT TRACKING): while it
        runs, the tracking knows it as the current client (NOLOOP, and its
        own invalidations wait); afterwards the keys it read are remembered
        and the messages for it follow its reply, as Redis orders them."""
        tracking = self.tracking
        # (Another client's command may run inside this one's, while a
        # script of that client is busy: its state is put back after.)
        outer, tracking.current = tracking.current, client
        outer_pending, tracking.pending = tracking.pending, []
        try:
            if self.ops.monitors and entry.monitor:
                reply = self._call_monitored(client, entry, argv, True)
            else:
                reply = self._call(client, entry, argv, True)
            tracking.remember(entry.spec, argv)
            tail = tracking.finish(client, entry.name)
        finally:
            tracking.current, tracking.pending = outer, outer_pending
        if tail:
            if reply is BLOCKED or reply is POSTPONED:
                for message in tail:
                    client.send(message)
            else:
                items = reply.items if reply.__class__ is Replies else [reply]
                reply = Replies([*items, *tail])
        return reply

    def cross_protocol(self) -> _Aborted:
        """A client sent ``POST`` or ``Host:`` (Redis's securityWarningCommand):
        log the warning, at most once in CROSS_PROTOCOL_LOG_EVERY seconds, and
        answer :data:`ABORTED`: the connection closes, dropping what it had
        not written of that read and running nothing more.  O(1)."""
        now = self.clock.monotonic()
        last = self._cross_protocol_logged
        if last is None or abs(now - last) > CROSS_PROTOCOL_LOG_EVERY:
            log.warning(CROSS_PROTOCOL_WARNING)
            self._cross_protocol_logged = now
        return ABORTED

    def apply_renames(self, renames: list[tuple[str, str]]) -> None:
        """``rename-command old new`` (``""``: the command is gone), in order.
        Raises ValueError naming a command the table does not have."""
        for old, new in renames:
            current = old.encode()
            target = self.names.get(current, current)
            if target is None or target.decode() not in table.COMMANDS:
                raise ValueError(f"No such command in rename-command: {old}")
            self.names[current] = None
            if new:
                self.names[new.encode()] = target
        self._dispatch.clear()
        self.runnable.clear()

    def _queued_flags(self, client: ClientState) -> tuple[bool, bool, bool]:
        """A transaction's (allow_stale, deny_oom, is_write): every queued
        command allowed on stale data, any denied on OOM, any a write.
        O(queued commands)."""
        allow_stale, deny_oom, is_write = True, False, False
        for argv in client.multi or ():
            try:
                queued = self._resolve(argv)
            except CommandError:
                continue
            allow_stale = allow_stale and queued.allow_stale
            deny_oom = deny_oom or queued.deny_oom
            is_write = is_write or queued.is_write
        return allow_stale, deny_oom, is_write

    def _reject(self, client: ClientState, entry: Entry, message: bytes) -> ErrorReply:
        """Refuse a command before it runs (-NOAUTH, -OOM, -READONLY ...), as
        Redis rejects one: counted as rejected, an open MULTI fails, and a
        refused EXEC discards the transaction as EXECABORT."""
        entry.rejected += 1
        if client.multi is not None:
            client.multi_error = True
        if entry.name == "exec":  # with or without a MULTI, as Redis answers it
            client.multi = None
            return self._error(errors.exec_aborted(message))
        return self._error(message)

    def _entry(self, spec: table.CommandSpec) -> Entry:
        entry = self._entries.get(spec.name)
        if entry is None:
            entry = self._entries[spec.name] = Entry(spec)
        return entry

    def _resolve(self, argv: list[bytes]) -> Entry:
        """Find the command and check its arity, with Redis's errors."""
        raw_name = argv[0]  # what the dispatch caches the entry under
        if self.names:  # rename-command
            name = argv[0].lower()
            if name in self.names:
                real = self.names[name]
                if real is None:
                    raise errors.unknown_command(argv[0], argv[1:])
                argv = [real, *argv[1:]]
        spec = table.lookup(argv)
        if spec is None:
            raise errors.unknown_command(argv[0], argv[1:])
        if spec.subcommands and spec.handler is None:
            if len(argv) < 2:
                raise errors.wrong_arity(spec.name.encode())
            raise errors.unknown_subcommand(argv[1], argv[0])
        argc = len(argv)
        if (spec.arity > 0 and argc != spec.arity) or argc < -spec.arity:
            self._entry(spec).rejected += 1
            raise errors.wrong_arity(spec.name.encode())
        entry = self._entry(spec)
        if not spec.subcommands and "|" not in spec.name and not self.ops.bypass and \
                len(self._dispatch) < DISPATCH_CACHE_MAX and \
                not (entry.is_write and self.ops.write_guard is not None) and \
                not (entry.deny_oom and self.ops.maxmemory) and self.ops.stale_guard is None and \
                not (entry.name in SCRIPT_RUNNERS and
                     (self.ops.maxmemory or self.ops.write_guard is not None)):
            self._dispatch[raw_name] = entry
            if entry.run is not None:
                self.runnable.add(raw_name)
        return entry

    def _call(self, client: ClientState, entry: Entry, argv: list[bytes],
              may_block: bool) -> Reply:
        """Run a resolved command; errors become error replies.  (Monitors
        are shown it by the callers: :meth:`_call_monitored`.)"""
        started = now_ns()
        ctx = Ctx.new(self, client, argv, entry, may_block)
        no_touch = client.no_touch
        if no_touch:
            ctx.db.no_touch = True
        try:
            reply = entry.handler(ctx, argv)  # type: ignore[misc]
        except Exception as exc:
            reply = self._failed(entry, argv, exc)
        finally:
            if no_touch:
                ctx.db.no_touch = False
            # Counted once it ran, as Redis does: INFO does not count itself,
            # and CONFIG RESETSTAT's own call survives the reset.  (The call,
            # its time and its histogram bucket, in C when compiled.)
            elapsed = entry.stop(started)
        if elapsed >= self._watch_ns:
            self._slow_call(client, entry, argv, elapsed, reply)
        if reply.__class__ is Wait:
            reply = self._block(ctx, reply)
        if ctx.changes or ctx.effects:
            self._finish(ctx)
        return reply

    def _failed(self, entry: Entry, argv: list[bytes], exc: Exception) -> ErrorReply:
        """A handler raised: a CommandError is its error reply; anything else
        is a bug, logged and answered ``-ERR internal error``.  Either way the
        call counts as failed."""
        entry.failed += 1
        if isinstance(exc, CountedError):  # counted where it arose
            return ErrorReply(exc.message)
        if isinstance(exc, CommandError):
            return self._error(exc.message)
        log.error("internal error running %r", argv[:8], exc_info=exc)
        self.internal_errors += 1
        self.stats["unexpected_error_replies"] += 1
        return self._error(errors.INTERNAL)

    def _call_monitored(self, client: ClientState, entry: Entry, argv: list[bytes],
                        may_block: bool) -> Reply:
        """:meth:`_call` while monitors exist: the command is shown to them
        after it ran (scripts: before, so their commands follow them)."""
        if entry.monitor == MONITOR_BEFORE:
            self.feed_monitors(client, client.db, argv)
        reply = self._call(client, entry, argv, may_block)
        if entry.monitor == MONITOR_AFTER:
            if client.monitor and not self._executing:
                # A monitor sees its own command after that command's reply
                # (none when the reply is its last: QUIT).
                line = self._monitor_line(client, client.db, argv, False)
                for monitor in list(self.ops.monitors):
                    if monitor is not client:
                        monitor.send(line)
                if not client.close_after_reply:
                    items = reply.items if reply.__class__ is Replies else [reply]
                    reply = Replies([*items, line])
            else:
                self.feed_monitors(client, client.db, argv)
        return reply

    # -- SLOWLOG, LATENCY -----------------------------------------------------------
    def refresh_thresholds(self) -> None:
        """Read the slowlog and latency options again (after CONFIG SET): the
        command path compares each duration with one cached number."""
        config = self.config
        slower = config["slowlog-log-slower-than"]
        self.ops.slowlog_ns = NEVER_NS if slower < 0 else slower * 1000
        self.ops.latency_threshold_ms = config["latency-monitor-threshold"]
        latency_ns = self.ops.latency_threshold_ms * 1_000_000 if self.ops.latency_threshold_ms else NEVER_NS
        self._watch_ns = min(self.ops.slowlog_ns, latency_ns)
        tracking = config["latency-tracking"]
        if tracking and not self.ops.tracking:  # turned on: from nothing, as Redis
            for entry in self._entries.values():
                entry.hist = [0] * HIST_BUCKETS
        self.ops.tracking = tracking
        max_len = config["slowlog-max-len"]
        while len(self.ops.slowlog) > max_len:
            self.ops.slowlog.pop()

    def _slow_call(self, client: ClientState, entry: Entry, argv: list[bytes],
                   elapsed_ns: int, reply: Reply) -> None:
        """A call at least as slow as a threshold: into the slowlog, and a
        LATENCY sample ("command" or "fast-command").  Not a command that
        now blocks (Redis records it when it is served)."""
        if reply.__class__ is Wait:
            return
        if elapsed_ns >= self.ops.slowlog_ns and not entry.skip_slowlog:
            self.slowlog_push(client, argv, elapsed_ns // 1000)
        threshold = self.ops.latency_threshold_ms
        if threshold and elapsed_ns >= threshold * 1_000_000:
            self.latency_sample("fast-command" if entry.fast else "command",
                                elapsed_ns // 1_000_000)

    def slowlog_push(self, client: ClientState | None, argv: list[bytes], micros: int) -> None:
        """Record one slow command, its arguments trimmed as Redis trims them."""
        max_len = self.config["slowlog-max-len"]
        if not max_len:
            return
        self.ops.slowlog.appendleft(SlowlogEntry(
            self.ops.slowlog_next_id, int(time.time()), micros, slowlog_args(monitor_args(argv)),
            client.addr.encode() if client is not None else b"",
            client.name if client is not None else b""))
        self.ops.slowlog_next_id += 1
        while len(self.ops.slowlog) > max_len:
            self.ops.slowlog.pop()

    def latency_sample(self, event: str, ms: int) -> None:
        """LATENCY: record ``ms`` for an event when it reaches
        latency-monitor-threshold (the caller may skip timing when it is 0)."""
        threshold = self.ops.latency_threshold_ms
        if not threshold or ms < threshold:
            return
        record = self.ops.latency_events.get(event)
        if record is None:
            record = self.ops.latency_events[event] = LatencyEvent()
        record.add(int(time.time()), ms)

    def script_command(self, client: ClientState, argv: list[bytes],
                       read_only: bool) -> tuple[Reply, bool]:
        """A command a script runs (redis.call): the normal path, with the
        refusals Redis makes inside scripts.  Returns the reply (an
        ErrorReply for errors) and whether the command was a write."""
        spec = table.lookup(argv)
        if spec is None or (spec.subcommands and spec.handler is None):
            return self._error(errors.SCRIPT_UNKNOWN_COMMAND), False
        argc = len(argv)
        if (spec.arity > 0 and argc != spec.arity) or argc < -spec.arity:
            return self._refused_in_script(spec, errors.SCRIPT_WRONG_ARITY), False
        if "noscript" in spec.flags and not self.disable_deny_scripts:
            return self._refused_in_script(spec, errors.SCRIPT_NOT_ALLOWED), False
        denial = self._acl_refusal(client, spec, argv)
        if denial is not None:
            result, at = denial
            job = self.scripts.current  # ACL LOG describes the client running the script
            self.acl_denied(job.client if job is not None else client, result, spec, argv,
                            at, b"lua")
            return self._refused_in_script(spec, errors.ACL_SCRIPT_PREFIX + denial_message(
                result, client.user, spec, argv[at], False)), False
        if read_only and self._entry(spec).may_write:
            # what may replicate (PUBLISH, PFCOUNT) counts as a write, as in Redis
            return self._refused_in_script(spec, errors.SCRIPT_READ_ONLY), False
        if spec.name in ("xread", "xreadgroup"):
            for arg in argv[1:]:
                word = arg.lower()
                if word == b"streams":
                    break
                if word == b"block":
                    return self._refused_in_script(
                        spec, errors.SCRIPT_BLOCK_OPTION % spec.name.encode()), False
        if "denyoom" in spec.flags and self.ops.maxmemory and not self._script_allows_oom() \
                and not self.fits_in_memory():
            return self._refused_in_script(spec, errors.OOM), False
        if spec.is_write and self.ops.write_guard is not None:  # a read-only replica ...
            refusal = self.ops.write_guard(client)
            if refusal is not None:
                return self._refused_in_script(spec, refusal), False
        entry = self._entry(spec)
        if self.ops.monitors:
            self.feed_monitors(client, client.db, argv, from_script=True)
        reply = self._call(client, entry, argv, may_block=False)
        if self.tracking.current is not None:  # the script's caller tracks keys
            self.tracking.remember(spec, argv)
        return reply, entry.is_write

    def _refused_in_script(self, spec: Any, message: bytes) -> ErrorReply:
        """A script's command refused before it ran: counted as a rejected
        call of that command and in the error statistics, as Redis counts it
        (the script passing the error on does not count it again)."""
        self._entry(spec).rejected += 1
        return self._error(message)

    # -- statistics -----------------------------------------------------------------
    @property
    def command_calls(self) -> dict[str, int]:
        """Calls per command name (subcommands as ``container|sub``), in the
        order of first use; commands never called are left out."""
        return {name: entry.calls for name, entry in self._entries.items() if entry.calls}

    def command_stats(self) -> list[tuple[str, int, int, int, int]]:
        """INFO commandstats: ``(name, calls, usec, rejected, failed)`` for each
        command called, refused or failed at least once, in the order of first
        use."""
        return [(name, e.calls, e.ns // 1000, e.rejected, e.failed)
                for name, e in self._entries.items() if e.calls or e.rejected or e.failed]

    def latency_histograms(self) -> list[tuple[str, int, list[int]]]:
        """``(name, calls, histogram)`` of each command with tracked calls, in
        the order of first use (INFO latencystats, LATENCY HISTOGRAM)."""
        if not self.ops.tracking:
            return []
        return [(name, sum(e.hist), e.hist) for name, e in self._entries.items() if any(e.hist)]

    @property
    def total_commands_processed(self) -> int:
        return sum(entry.calls for entry in self._entries.values())

    def count_calls(self, name: str, calls: int = 1) -> None:
        """Count calls made without the dispatcher (the AOF loader's fast path)."""
        self._entry(table.COMMANDS[name]).calls += calls

    def reset_stats(self) -> None:
        """CONFIG RESETSTAT: the counters of INFO stats and commandstats go to zero."""
        for name in self.stats:
            self.stats[name] = 0
        self.lazyfreed_objects = 0
        self.metrics = Metrics()
        for entry in self._entries.values():
            entry.calls = entry.ns = entry.failed = entry.rejected = 0
            entry.hist = [0] * HIST_BUCKETS
        self.error_counts.clear()

    # -- lazy free ------------------------------------------------------------------
    def free_later(self, value: Any) -> None:
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

    def lazy_free(self) -> None:
        """Drop the values free_later queued (the last references to them)."""
        pending, self.lazyfree_pending = self.lazyfree_pending, []
        freed = len(pending)
        pending.clear()
        self.lazyfreed_objects += freed

    def _finish(self, ctx: Ctx) -> None:
        if ctx.changes:
            self.dirty += ctx.changes
        effects = ctx.effects
        if effects is None:
            effects = []
            if ctx.changes and ctx.spec is not None and ctx.spec.is_write:
                # A handler that changed data must say what it propagates.
                # A bug: counted, and the argv goes out so no record is lost.
                log.error("%s changed data and declared no propagation", ctx.spec.name)
                self.internal_errors += 1
                effects = [ctx.argv]
        if effects and (self.effect_listeners or self._tx_effects is not None):
            batch = [(ctx.db.index, effect) for effect in effects]
            if len(batch) > 1 and self._tx_effects is None:
                # One command, several effects (XREADGROUP's XCLAIMs): Redis
                # wraps them in MULTI/EXEC so they apply atomically.
                batch = as_unit(batch)
            self.emit(batch)
            ctx.client.woff = self.replication.offset

    def emit(self, effects: list[tuple[int, Effect]]) -> None:
        """Hand effects to the listeners; inside EXEC, gather them first so
        the transaction goes out as one MULTI ... EXEC unit."""
        if self._tx_effects is not None:
            self._tx_effects.extend(effects)
            return
        for listener in self.effect_listeners:
            listener(effects)

    def _error(self, message: bytes) -> ErrorReply:
        """An error reply, counted (INFO stats and errorstats)."""
        self.stats["total_error_replies"] += 1
        code = message.split(b" ", 1)[0].decode("latin-1")
        counts = self.error_counts
        if code in counts:
            counts[code] += 1
        elif len(counts) < ERRORSTATS_MAX:
            counts[code] = 1
        return ErrorReply(message)

    def busy_reply(self, client: ClientState, name: bytes) -> ErrorReply:
        """What a command gets while a script runs past busy-reply-threshold:
        -BUSY; an open MULTI then fails, and EXEC discards it as EXECABORT
        (Redis refuses it like any other command)."""
        if client.multi is not None:
            client.multi_error = True
        if name == b"exec":
            client.multi = None
            client.multi_error = False
            self.unwatch_all(client)
            return self._error(errors.exec_aborted(self._busy_text()))
        return self._error(self._busy_text())

    def _busy_text(self) -> bytes:
        """-BUSY names the KILL that stops what runs: FUNCTION KILL for a function."""
        job = self.scripts.busy
        return errors.BUSY_FUNCTION if job is not None and job.script.function else errors.BUSY

    def _key_expired(self, db: Database, key: bytes) -> None:
        self.stats["expired_keys"] += 1
        if self.tracking.table.prefixes:  # BCAST: an expiry is no client's change (NOLOOP)
            self.tracking.table.modified(key, None)
        self.signal_ready(db.index, key)
        self.emit([(db.index, [b"DEL", key])])
        if self.notify_flags & NOTIFY_EXPIRED:
            self.notify_keyspace(NOTIFY_EXPIRED, b"expired", key, db.index)

    def _fields_expired(self, db: Database, key: bytes, fields: list[bytes]) -> None:
        """Hash fields expired (lazily or actively): propagated as one
        ``HDEL key field`` each, as Redis does."""
        self.stats["expired_subkeys"] += len(fields)
        self.emit([(db.index, [b"HDEL", key, field]) for field in fields])
        if self.notify_flags:
            # Redis 7.4: one hexpired per batch, and del when the hash went.
            self.notify_keyspace(NOTIFY_HASH, b"hexpired", key, db.index, fields)
            if key not in db.data:
                self.notify_keyspace(NOTIFY_GENERIC, b"del", key, db.index)

    # -- transactions ---------------------------------------------------------------
    def exec_transaction(self, ctx: Ctx) -> Reply:
        """Run a client's queued commands; called by the EXEC handler."""
        client = ctx.client
        queued = client.multi or []
        failed = client.multi_error
        dirty = client.dirty_cas or self._watched_key_expired(client)
        client.multi, client.multi_error = None, False
        self.unwatch_all(client)
        if failed:
            raise CommandError(errors.EXECABORT)
        if dirty:
            return NULL_ARRAY
        replies = []
        self._executing = True
        self._tx_effects = []
        # What the client is sent meanwhile (a message it publishes to
        # itself) goes inside EXEC's array, before the reply of the command
        # that sent it, as Redis writes it.
        inbox: list[Reply] = []
        send, client.send = client.send, inbox.append
        try:
            for argv in queued:
                entry = self._resolve(argv)
                if client.dispatch is not self._dispatch:
                    refusal = self._recheck(client, entry, argv)
                    if refusal is not None:
                        replies.append(refusal)
                        continue
                hotkeys = self.ops.hotkeys
                if hotkeys is not None:
                    started = now_ns()
                if self.ops.monitors and entry.monitor:
                    reply = self._call_monitored(client, entry, argv, False)
                else:
                    reply = self._call(client, entry, argv, False)
                if hotkeys is not None and hotkeys.active:  # each queued command on its own
                    self._hotkeys_record(hotkeys, client, entry, argv, reply, started)
                if client.tracking is not None:  # (perhaps turned on by this EXEC)
                    self.tracking.remember(entry.spec, argv, client)
                if inbox or reply.__class__ is Replies:
                    # Several replies for one command (SUBSCRIBE a b, or a
                    # message and PUBLISH's count): Redis writes them all
                    # inside EXEC's array, whose length counts commands; so
                    # does this, pre-encoded.
                    inbox += reply.items if reply.__class__ is Replies else [reply]
                    reply = RawReply(b"".join(encode(r, client.protocol) for r in inbox))
                    inbox.clear()
                replies.append(reply)
        finally:
            client.send = send
            self._executing = False
            effects, self._tx_effects = self._tx_effects, None
        ctx.no_propagation()  # the queued commands' effects go out below
        effects = as_unit(effects)
        if effects:
            self.emit(effects)
            client.woff = self.replication.offset
        return replies

    def watch(self, client: ClientState, key: bytes) -> None:
        if (client.db, key) not in client.watched:
            client.watched.add((client.db, key))
            self.dbs[client.db].watch(key, client)

    def _watched_key_expired(self, client: ClientState) -> bool:
        """A key watched while alive has expired since (not yet removed): EXEC
        fails, as in Redis.  O(watched keys)."""
        stale = client.watched_expired
        return any((index, key) not in stale and self.dbs[index].is_expired(key)
                   for index, key in client.watched)

    def unwatch_all(self, client: ClientState) -> None:
        for db_index, key in client.watched:
            self.dbs[db_index].unwatch(key, client)
        client.watched.clear()
        client.watched_expired.clear()
        client.dirty_cas = False

    # -- blocking -------------------------------------------------------------------
    def _block(self, ctx: Ctx, wait: Wait) -> Reply:
        if not ctx.may_block:
            return wait.reply_at_timeout()
        # A command that may block was resolved by this engine: its spec is an Entry.
        request = Waiter(ctx.client, ctx.db.index, wait, ctx.argv, cast(Entry, ctx.spec))
        ctx.client.blocked = request
        for key in dict.fromkeys(wait.keys):
            self.waiters.setdefault((ctx.db.index, key), deque()).append(request)
        if wait.timeout_ms > 0 and self.schedule is not None:
            request.deadline = self.clock.monotonic() + wait.timeout_ms / 1000
            request.timer = self.schedule(wait.timeout_ms / 1000,
                                          lambda: self.timeout_blocked(request))
        return BLOCKED

    def _unblock(self, request: Waiter) -> None:
        request.client.blocked = None
        if request.timer is not None:
            request.timer.cancel()
        for key in dict.fromkeys(request.wait.keys):
            queue = self.waiters.get((request.db, key))
            if queue is not None:
                try:
                    queue.remove(request)
                except ValueError:
                    pass
                if not queue:
                    del self.waiters[(request.db, key)]

    def timeout_blocked(self, request: Waiter) -> None:
        """The scheduler says a blocked request's time is up.

        Event-loop timers may fire a little early (their clock is read once
        per loop turn); a timeout is never answered before its deadline."""
        if request.client.blocked is request:
            remaining = request.deadline - self.clock.monotonic()
            if remaining > 0 and self.schedule is not None:
                request.timer = self.schedule(remaining, lambda: self.timeout_blocked(request))
                return
            request.timer = None
            self._unblock(request)
            request.client.send(request.wait.reply_at_timeout())

    def unblock_client(self, client: ClientState, reply: Reply = None) -> bool:
        """CLIENT UNBLOCK: answer a blocked client now, with ``reply`` or (None)
        what its command answers when its time is up.  False if not blocked."""
        request = client.blocked
        if request is None:
            return False
        self._unblock(request)
        client.send(request.wait.reply_at_timeout() if reply is None else reply)
        return True

    def signal_ready(self, db_index: int, key: bytes) -> None:
        if (db_index, key) in self.waiters:
            self._ready[(db_index, key)] = None

    def signal_all_waited(self, db_index: int | None = None) -> None:
        """Make every key some client waits on ready (in one database, or
        all): their values changed wholesale (FLUSHDB, DEBUG RELOAD)."""
        for waited_db, key in list(self.waiters):
            if db_index is None or waited_db == db_index:
                self._ready[(waited_db, key)] = None

    def wake_later(self, delay_s: float, db_index: int, keys: list[bytes]) -> Any:
        """Serve the clients blocked on ``keys`` after ``delay_s`` seconds, as
        if the keys had been made ready then.  Returns the timer (with
        ``cancel()``), or None when the engine has no scheduler."""
        if self.schedule is None:
            return None

        def wake() -> None:
            for key in keys:
                self.signal_ready(db_index, key)
            if not self._executing:
                self.serve_ready()

        return self.schedule(delay_s, wake)

    def in_transaction(self) -> bool:
        """Whether an EXEC is running its queued commands now."""
        return self._executing

    def serve_ready(self) -> None:
        """Serve clients blocked on ready keys, FIFO per key, until none is
        ready (serving one client may make other keys ready).  A client
        that is checked (:meth:`refresh_access`) is checked again first."""
        while self._ready:
            ready, self._ready = self._ready, {}
            for db_key in ready:
                queue = self.waiters.get(db_key)
                if not queue:
                    continue
                for request in list(queue):
                    if request.client.blocked is not request:
                        continue
                    client = request.client
                    entry = request.entry
                    if client.dispatch is not self._dispatch:
                        # Redis (7.2+) runs a blocked command again when its
                        # key is ready, checks included: a user whose rules
                        # changed meanwhile is refused (and logged).
                        refusal = self._access(client, entry, request.argv)
                        if refusal is not None:
                            self._unblock(request)
                            client.send(refusal)
                            continue
                    saved_db, client.db = client.db, request.db
                    ctx = Ctx.new(self, client, request.argv, entry, False)
                    ctx.ready_key = db_key[1]
                    tracking = self.tracking if client.tracking is not None else None
                    if tracking is not None:  # as a command of its own (_call_tracking)
                        outer, tracking.current = tracking.current, client
                    started = time.monotonic_ns()
                    try:
                        reply = request.wait.retry(ctx)
                    except CommandError as exc:  # (its key went: -NOGROUP ...)
                        entry.failed += 1  # a failed call, as Redis 7.2+ counts it
                        reply = self._error(exc.message)
                    finally:
                        client.db = saved_db
                        if tracking is not None:
                            tracking.current = outer
                    if reply is None:
                        continue
                    self._unblock(request)
                    self._finish(ctx)
                    elapsed_ns = time.monotonic_ns() - started
                    if elapsed_ns >= self.ops.slowlog_ns and not entry.skip_slowlog:
                        # served: into the slowlog now, as the command it was
                        # (Redis logs a blocked command when it is served)
                        self.slowlog_push(client, request.argv, elapsed_ns // 1000)
                    if tracking is not None:
                        reply = self._tracked_retry(client, entry, request.argv, reply)
                    client.send(reply)

    def _tracked_retry(self, client: ClientState, entry: Entry, argv: list[bytes],
                       reply: Reply) -> Reply:
        """A blocked command of a tracking client was served: as Redis 7.2+
        runs it again, its keys are remembered (a read) and the messages
        for it follow its reply."""
        tracking = self.tracking
        outer, tracking.current = tracking.current, client
        try:
            tracking.remember(entry.spec, argv)
            tail = tracking.finish(client, entry.name)
        finally:
            tracking.current = outer
        return Replies([reply, *tail]) if tail else reply

    # -- housekeeping ---------------------------------------------------------------
    def cron(self) -> None:
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
        now_ms = self.clock.monotonic() * 1000
        if now_ms - self.metrics.sampled_ms >= Metrics.PERIOD_MS:
            self.metrics.sample(now_ms, self.total_commands_processed, self.stats)
        if self._ready:
            self.serve_ready()

    def track_idmp(self, state: Any) -> None:
        """Have the cron sweep a stream's IDMP state (an ``IdmpState``) until it is empty."""
        if state not in self._idmp_swept:
            self._idmp_swept.add(state)
            self._idmp_sweep.append(weakref.ref(state))

    def expire_idmp(self, budget: int = IDMP_EXPIRE_BUDGET) -> int:
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

    @property
    def blocked_clients(self) -> int:
        """Clients waiting: blocked on keys, or holding a command CLIENT PAUSE
        postponed (Redis counts those as blocked too)."""
        return sum(1 for c in self.clients.values() if c.blocked is not None or c.postponed)

    def blocking_keys(self) -> tuple[int, int]:
        """INFO's total_blocking_keys and total_blocking_keys_on_nokey: the
        keys blocked clients wait on, and those of them an XREADGROUP waits
        on (the key's deletion answers it, as Redis's unblock_on_nokey).
        O(waiters)."""
        on_nokey = sum(1 for queue in self.waiters.values()
                       if any(w.entry.name == "xreadgroup" for w in queue))
        return len(self.waiters), on_nokey

    def watched_keys(self) -> tuple[int, int]:
        """INFO's watching_clients and total_watched_keys (each database's
        distinct watched keys).  O(clients + databases)."""
        watching = sum(1 for c in self.clients.values() if c.watched)
        return watching, sum(len(db.watchers) for db in self.dbs)

    def blocked_with_timeout(self) -> int:
        """Blocked clients whose wait has a timeout (INFO's timeout table)."""
        return sum(1 for c in self.clients.values()
                   if c.blocked is not None and c.blocked.wait.timeout_ms > 0)
