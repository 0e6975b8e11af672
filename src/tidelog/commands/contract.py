"""The handlers' contract: what a command handler is given and may return.

A handler is ``handler(ctx: Ctx, argv: list[bytes]) -> Reply | Wait``:

* :class:`Ctx` -- the client, its database, the clock and config, and the
  place where the command records its effects (what goes to the AOF and to
  replicas) and the keys it made ready for blocked clients;
* a reply value (the types of :mod:`tidelog.resp.replies`: plain ``bytes``,
  ``int``, ``list``, ``None``, :class:`~tidelog.resp.replies.Map` ...), or
* :class:`Wait`: "block this client on these keys until ``retry`` answers".
  The engine parks the client and answers :data:`tidelog.engine.BLOCKED` to
  the server in its place.

The engine implements :class:`EngineAPI` (the services a handler may use)
and holds a :class:`Persistence` (what the durability layer offers to
commands).  This module sits below the engine: the engine imports the
command table and this contract, and no command module imports the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from ..resp.replies import NULL_ARRAY
from .effects import Effect as Effect  # (re-exported: the engine names it from here)

if TYPE_CHECKING:
    from ..clock import Clock
    from ..config import Config
    from ..keyspace import Database
    from ..slotstats import SlotStats
    from ..types.pubsub import PubSub

Reply = Any

# The dispatch of a client whose every command is checked first (not yet
# authenticated, or restricted by ACL): empty, and read-only.
NO_DISPATCH: Mapping[bytes, Any] = MappingProxyType({})

_new_object = object.__new__  # Ctx.new's allocation, without running an __init__


@dataclass
class Wait:
    """What a handler returns to block: wait on ``keys`` until ``retry`` answers.

    ``retry(ctx)`` is called each time one of the keys is ready; it returns
    the reply, or None to keep waiting.  ``timeout_ms`` 0 means forever;
    ``timeout_reply`` (or what ``on_timeout()`` answers, when given: WAIT's
    count of replicas at that moment) is sent when the time is up (and inside EXEC, where a
    command never blocks, at once).
    """

    keys: list[bytes]
    timeout_ms: int
    retry: Callable[[Ctx], Reply]
    timeout_reply: Reply = NULL_ARRAY
    on_timeout: Callable[[], Reply] | None = None

    def reply_at_timeout(self) -> Reply:
        return self.timeout_reply if self.on_timeout is None else self.on_timeout()


@dataclass(eq=False)
class ClientState:
    """Everything the engine knows of one connection."""

    id: int
    addr: str = ""
    laddr: str = ""
    fd: int = -1
    name: bytes = b""
    lib_name: bytes = b""
    lib_ver: bytes = b""
    protocol: int = 2
    db: int = 0
    created: float = 0.0           # monotonic seconds
    last_interaction: float = 0.0  # monotonic seconds
    last_command: str = "NULL"
    multi: list[list[bytes]] | None = None  # queued commands while in MULTI
    multi_error: bool = False               # a queued command was refused
    dirty_cas: bool = False                 # a watched key changed
    watched: set[tuple[int, bytes]] = field(default_factory=set)
    # the watched keys that were already expired when WATCHed: their removal
    # is no change, and EXEC does not fail for their being expired
    watched_expired: set[tuple[int, bytes]] = field(default_factory=set)
    blocked: Any = None                     # the engine's Waiter while blocked
    close_after_reply: bool = False
    send: Callable[[Reply], None] = lambda reply: None
    kind: str = "normal"      # "normal"; "aof" while the AOF replays; "replica"; "master" later
    no_evict: bool = False    # CLIENT NO-EVICT
    no_touch: bool = False    # CLIENT NO-TOUCH: lookups leave access times alone
    monitor: bool = False     # MONITOR: shown every command (engine.add_monitor)
    # CLIENT PAUSE: a command of this client is held back; the server's
    # callback that runs it (and what follows) once the pause ends.
    postponed: bool = False
    resume: Callable[[], None] | None = None
    # A parked command (a chunked MIGRATE) goes on outside the loop: its
    # move while it does (the client's further commands wait), else None.
    parked: Any = None
    # CLIENT REPLY: 0 replies go out; -1 none (OFF); n > 0 the next n are
    # dropped (SKIP: its own reply and the next command's).
    mute: int = 0
    # Pub/Sub: the client's subscriptions (a types.pubsub.Subscriptions),
    # None while it has none; kept by the Pub/Sub commands, RESET and close.
    pubsub: Any = None
    # AUTH: False until the client authenticates, when the default user
    # needs a password; the ACL user it runs as (None: the server's own
    # clients, which may run anything).
    authenticated: bool = True
    ever_authenticated: bool = True  # False until it first authenticates, when it must
    user: Any = None
    # The engine's dispatch cache when the client may run anything without
    # a check, else an empty one (Engine.refresh_access): the command path's
    # one lookup also decides whether a command is checked.
    dispatch: Mapping[bytes, Any] = field(default_factory=lambda: NO_DISPATCH)
    # WAIT: the replication offset right after this client's last write.
    woff: int = 0
    # CLIENT KILL: the server sets this to close the connection (None: cannot).
    kill: Callable[[], None] | None = None
    # Bytes of replies not yet written to the socket (CLIENT LIST's omem);
    # the server gives it.
    output_bytes: Callable[[], int] = lambda: 0
    # Bytes in the query buffer as CLIENT LIST's qbuf shows them: while
    # commands run, everything the read that brought them left buffered
    # (them included, as Redis trims its buffer after running them); the
    # server keeps it.
    query_bytes: int = 0
    # Cluster mode: ASKING's one-shot flag (0; 1 sent; 2 spent by the command
    # running, see engine.admission), READONLY's (reads served by a replica),
    # and the slot of the command running (-1: none; a script's commands are
    # held to it).
    cluster_asking: int = 0
    cluster_readonly: bool = False
    cluster_slot: int = -1
    # On the TLS port: under tls-cluster yes, a plain client is given the
    # nodes' plain ports (CLUSTER NODES/SLOTS, -MOVED, -ASK), as in Redis 7.0.
    tls: bool = False
    # CLIENT TRACKING: the client's options (a commands.tracking.ClientTracking),
    # None while tracking is off.
    tracking: Any = None
    # HIMPORT PREPARE: the connection's fieldsets (a types.fieldsets.Fieldsets),
    # None while it has none; dropped by RESET and when the connection ends.
    himport: Any = None


# INFO persistence's aof_* lines while no AOF runs (the engine's inert
# persistence and the durability layer's with appendonly no both show them).
AOF_OFF_INFO = (
    "aof_enabled:0",
    "aof_rewrite_in_progress:0",
    "aof_rewrite_scheduled:0",
    "aof_last_rewrite_time_sec:-1",
    "aof_current_rewrite_time_sec:-1",
    "aof_last_bgrewrite_status:ok",
    "aof_rewrites:0",
    "aof_last_write_status:ok",
)


class CommandInfo(Protocol):
    """What the engine reads of the executing command's table entry
    (:class:`tidelog.commands.table.CommandSpec` implements it)."""

    name: str

    @property
    def is_write(self) -> bool: ...


class Persistence(Protocol):
    """What the durability layer (snapshots, the AOF) offers to commands.

    The engine holds one (``engine.persistence``); without a durability
    layer attached it is the engine's inert default, which saves nothing.
    """

    def info_lines(self) -> list[str]:
        """INFO persistence's ``rdb_*`` and ``aof_*`` lines."""
        ...

    def set_appendonly(self, on: bool) -> None:
        """CONFIG SET appendonly: start or stop the AOF; OSError if it cannot start."""
        ...

    def shutdown_save(self, save: bool | None) -> bool:
        """SHUTDOWN's save (True: always, False: never, None: when save points
        exist); False when saving failed."""
        ...

    # The persistence commands' work (the handlers, in the command layer,
    # read the arguments; each raises CommandError with Redis's text).
    def save(self) -> None:
        """SAVE: the snapshot, written now."""
        ...

    def bgsave(self, schedule: bool, in_exec: bool) -> Any:
        """BGSAVE [SCHEDULE]: its status reply (started, or scheduled)."""
        ...

    def last_save(self) -> int:
        """LASTSAVE: the UNIX time of the last successful save."""
        ...

    def rewrite_aof(self) -> Any:
        """BGREWRITEAOF: its status reply (started, or scheduled)."""
        ...

    def reload(self, save: bool, flush: bool, merge: bool) -> None:
        """DEBUG RELOAD [NOSAVE] [NOFLUSH] [MERGE]: save, empty, load back."""
        ...

    def load_aof(self) -> None:
        """DEBUG LOADAOF: flush the AOF, empty the data, load the AOF again."""
        ...


class Replication(Protocol):
    """What replication offers to commands and to the engine (the engine
    holds one, ``engine.replication``; without a primary attached it is the
    engine's inert default: a primary that never had a replica)."""

    offset: int  # master_repl_offset
    replid: str  # master_replid

    def change_replid(self) -> None:
        """DEBUG CHANGE-REPL-ID: a new replication ID, and no previous one."""
        ...

    def acks_changed(self) -> None:
        """A replica acknowledged, or the local AOF synced: WAIT and
        WAITAOF count again."""
        ...

    def aof_switched(self, on: bool) -> None:
        """The AOF started or stopped (offsets must then move: WAITAOF)."""
        ...

    @property
    def is_replica(self) -> bool:
        """Following a primary (REPLICAOF host port)."""
        ...

    def info_lines(self) -> list[str]:
        """INFO replication."""
        ...

    def role(self) -> list[Any]:
        """ROLE's reply."""
        ...

    def client_closed(self, client: ClientState) -> None:
        """A connection went away (a replica's link, perhaps)."""
        ...

    def resize_backlog(self, size: int) -> None:
        """CONFIG SET repl-backlog-size."""
        ...

    def replicas_fed(self) -> int:
        """How many replicas the stream is sent to now (the online ones)."""
        ...

    def replicas_lacking(self, capa: bytes) -> int:
        """How many connected replicas did not announce ``capa`` (REPLCONF
        capa): TIDELOG.STAGE is not offered while one is connected."""
        ...

    def replicate_only(self, db_index: int, argv: list[bytes]) -> None:
        """Send a command to replicas but not to the AOF (PUBLISH, as Redis
        does, so subscribers of replicas get the messages too)."""
        ...

    def refresh_write_guard(self) -> None:
        """The options that refuse writes changed (replica-read-only,
        min-replicas-to-write, min-replicas-max-lag)."""
        ...

    def snapshot_aux(self) -> dict[bytes, bytes]:
        """AUX fields a snapshot taken now carries (where the replication
        stream stood, so a restarted replica can continue from there)."""
        ...

    # The replication commands' work (the handlers, in the command layer,
    # read the arguments; each raises CommandError with Redis's text).
    @property
    def failover_running(self) -> bool:
        """A FAILOVER is under way (in any of its states)."""
        ...

    def replica_info(self, client: ClientState, *, listening_port: int | None = None,
                     ip: str | None = None, capa: bytes | None = None) -> None:
        """REPLCONF listening-port / ip-address / capa."""
        ...

    def acked(self, client: ClientState, offset: int, aof_offset: int | None = None) -> None:
        """REPLCONF ACK offset [FACK aof-offset] (ignored from a non-replica)."""
        ...

    def serve_sync(self, client: ClientState, replid: bytes, offset: bytes, *,
                   failover: bool = False, legacy_sync: bool = False) -> Any:
        """PSYNC replid offset [FAILOVER], or SYNC (``legacy_sync``)."""
        ...

    def wait(self, woff: int, wanted: int, timeout_ms: int, may_block: bool) -> Any:
        """WAIT: a count, or a Wait on the replicas' acknowledgements."""
        ...

    def wait_aof(self, woff: int, numlocal: int, numreplicas: int, timeout_ms: int,
                 may_block: bool) -> Any:
        """WAITAOF: ``[local, replicas]``, or a Wait."""
        ...

    def replicaof(self, host: str | None, port: int, by: str) -> Any:
        """REPLICAOF host port (``host`` None: NO ONE): its reply."""
        ...

    def failover_command(self, host: str | None, port: int, timeout_ms: int,
                         force: bool) -> None:
        """FAILOVER [TO host port [FORCE]] [TIMEOUT ms]: checks, then starts."""
        ...

    def failover_abort(self) -> None:
        """FAILOVER ABORT."""
        ...

    def cron(self) -> None:
        """Periodic work: PINGs to replicas, timeouts, the backlog's TTL."""
        ...


class Cluster(Protocol):
    """What cluster mode offers to the CLUSTER handlers (the engine holds one,
    ``engine.cluster``: :class:`tidelog.cluster.control.Control` in cluster
    mode, else the engine's default, which answers every call with
    errors.CLUSTER_DISABLED).  The handlers read the arguments; each method
    raises CommandError with Redis's text.  A node is named by its id as the
    client gave it."""

    def require(self) -> None:
        """Nothing in cluster mode; CLUSTER_DISABLED otherwise (every handler
        calls it first, before reading its arguments, as Redis checks)."""
        ...

    def add_slots(self, ctx: Ctx, ranges: Iterable[tuple[int, int]], delete: bool) -> None:
        """ADDSLOTS / DELSLOTS (``delete``) and their RANGE forms: each range
        checked as it comes (``ranges`` may raise the argument errors
        between two), then all applied."""
        ...

    def flush_slots(self, ctx: Ctx) -> None: ...

    def check_setslot(self) -> None:
        """SETSLOT's first check: this node is a master."""
        ...

    def set_slot(self, ctx: Ctx, slot: int, action: bytes, node_id: bytes | None) -> None:
        """SETSLOT slot MIGRATING|IMPORTING|NODE id / STABLE (``action`` upper case)."""
        ...

    def meet(self, ctx: Ctx, ip: bytes, port: int, cport: int, port_arg: bytes) -> None: ...
    def forget(self, ctx: Ctx, node_id: bytes) -> None: ...
    def replicate(self, ctx: Ctx, node_id: bytes) -> None: ...
    def replicas(self, ctx: Ctx, node_id: bytes) -> list[bytes]: ...
    def count_failure_reports(self, ctx: Ctx, node_id: bytes) -> int: ...

    def failover(self, ctx: Ctx, mode: str) -> None:
        """FAILOVER ``""`` | ``"force"`` | ``"takeover"``."""
        ...

    def set_config_epoch(self, ctx: Ctx, epoch: int) -> None: ...
    def reset(self, ctx: Ctx, hard: bool) -> None: ...

    def bump_epoch(self, ctx: Ctx) -> bytes:
        """BUMPEPOCH's status text: ``BUMPED n`` or ``STILL n``."""
        ...

    def save_config(self, ctx: Ctx) -> None: ...
    def info(self, ctx: Ctx) -> bytes: ...
    def nodes(self, ctx: Ctx) -> bytes: ...
    def slots(self, ctx: Ctx) -> list[Any]: ...
    def shards(self, ctx: Ctx) -> list[Any]: ...
    def links(self, ctx: Ctx) -> list[Any]: ...
    def myid(self) -> bytes: ...
    def myshardid(self) -> bytes: ...
    def count_keys_in_slot(self, ctx: Ctx, slot: int) -> int: ...

    def shard_slots(self) -> list[int]:
        """The slots this node's shard serves (its own, or its master's for
        a replica), ascending: those CLUSTER SLOT-STATS reports."""
        ...

    def keys_in_slot(self, ctx: Ctx, slot: int, count: int) -> list[bytes]: ...

    def propagate_publish(self, channel: bytes, message: bytes, shard: bool) -> bool:
        """PUBLISH (SPUBLISH: ``shard``) in cluster mode goes to the other
        nodes over the bus, and True comes back; outside it, False (the
        message then goes down the replication stream)."""
        ...


class RateView(Protocol):
    """One instantaneous metric (the engine's Rate)."""

    def value(self) -> int: ...


class MetricsView(Protocol):
    """INFO stats' instantaneous metrics (the engine's Metrics), read-only."""

    @property
    def ops(self) -> RateView: ...
    @property
    def net_input(self) -> RateView: ...
    @property
    def net_output(self) -> RateView: ...
    @property
    def net_repl_input(self) -> RateView: ...
    @property
    def net_repl_output(self) -> RateView: ...


class EngineAPI(Protocol):
    """The engine as handlers see it (:class:`tidelog.engine.Engine` implements it)."""

    config: Config
    clock: Clock
    dbs: list[Database]
    clients: dict[int, ClientState]
    persistence: Persistence
    replication: Replication
    cluster: Cluster
    slot_stats: SlotStats
    stats: dict[str, int]
    dirty: int
    run_id: str
    started: float
    started_ms: int
    active_expire: bool
    pause_cron: bool
    shutdown_hook: Callable[[], None] | None
    # CONFIG SET port/bind/tls-*: the network layer's (Engine.listen_hook)
    listen_hook: Callable[[str], bytes | None] | None
    lazyfree_pending: list[Any]  # values free_later queued
    lazyfreed_objects: int

    def free_later(self, value: Any) -> None: ...
    def emit(self, effects: list[tuple[int, Effect]]) -> None: ...
    effect_listeners: list[Callable[[list[tuple[int, Effect]]], None]]
    # (db index, key) -> the clients blocked on it; empty when nobody waits.
    waiters: dict[tuple[int, bytes], Any]
    pubsub: PubSub
    # The notify-keyspace-events classes in force; 0 when nothing is published.
    notify_flags: int

    def notify_keyspace(self, cls: int, event: bytes, key: bytes, db_index: int,
                        subkeys: list[bytes] | None = None) -> None: ...
    @property
    def monitors(self) -> list[ClientState]: ...
    @property
    def slowlog(self) -> Any: ...  # deque of types.latency.SlowlogEntry, newest first
    @property
    def latency_events(self) -> dict[str, Any]: ...  # event -> types.latency.LatencyEvent
    @property
    def latency_threshold_ms(self) -> int: ...
    @property
    def pause_mode(self) -> str | None: ...

    # Lua scripting: the script cache, the function libraries, the runner
    # (a tidelog.scripting.scripts.Scripts).
    scripts: Any
    # ACL: the users and the log (a tidelog.acl.registry.Acl).
    acl: Any
    # Client-side caching: the tracking table and its delivery (a
    # tidelog.commands.tracking.Tracker); the server's timer (None: none).
    tracking: Any
    # MIGRATE's cached connections (a tidelog.commands.keys.migrate_sockets.MigrateSockets).
    migrate_sockets: Any
    # A chunked MIGRATE's mover (the network layer's; ``available`` False
    # in a bare engine) and the keys in flight, (db, key) -> the move.
    mover: Any
    moving: dict[tuple[int, bytes], Any]

    def park(self, ctx: Ctx, keys: list[bytes], move: Any) -> Any:
        """Hold ``keys`` in flight, start ``move`` on the mover: PARKED."""
        ...

    def release(self, db_index: int, keys: list[bytes]) -> None:
        """The move of ``keys`` ended: they are no longer in flight."""
        ...

    def unpark(self, ctx: Ctx, reply: Reply, error: bytes | None = None) -> None:
        """A parked command's end: its effects out, its reply sent."""
        ...
    schedule: Callable[[float, Callable[[], None]], Any] | None
    # HOTKEYS: the latest session, recording or stopped (a
    # tidelog.commands.hotkeys.Session; None: none); hotkeys_changed() after
    # setting it, starting or stopping it.
    hotkeys: Any

    def hotkeys_changed(self) -> None: ...

    def refresh_access(self, client: ClientState) -> None: ...

    def set_client_user(self, client: ClientState, user: Any) -> None: ...
    def users_changed(self, current: ClientState | None, deleted: list[Any] = ...,
                      changed: list[Any] = ...) -> None: ...
    def acl_denied(self, client: ClientState, result: int, spec: Any, argv: list[bytes],
                   at: int, context: bytes, username: bytes | None = None) -> None: ...

    def signal_ready(self, db_index: int, key: bytes) -> None: ...
    def signal_all_waited(self, db_index: int | None = None) -> None: ...
    def wake_later(self, delay_s: float, db_index: int, keys: list[bytes]) -> Any: ...
    def in_transaction(self) -> bool: ...
    def exec_transaction(self, ctx: Ctx) -> Reply: ...
    def watch(self, client: ClientState, key: bytes) -> None: ...
    def unwatch_all(self, client: ClientState) -> None: ...
    def drop_subscriptions(self, client: ClientState) -> None: ...
    def unblock_client(self, client: ClientState, reply: Reply = None) -> bool: ...
    def blocked_with_timeout(self) -> int: ...
    def track_idmp(self, state: Any) -> None: ...
    def pause(self, ms: int, mode: str) -> None: ...
    def unpause(self) -> None: ...
    def add_monitor(self, client: ClientState) -> None: ...
    def remove_monitor(self, client: ClientState) -> None: ...
    def feed_monitors(self, client: ClientState | None, db_index: int, argv: list[bytes],
                      from_script: bool = False) -> None: ...

    def reset_stats(self) -> None: ...
    def set_write_guard(self, guard: Callable[[ClientState], bytes | None] | None) -> None: ...
    def set_stale_guard(self, guard: Callable[[ClientState], bytes | None] | None) -> None: ...
    def set_maxmemory(self, limit: int) -> None: ...
    def refresh_thresholds(self) -> None: ...
    def set_slot_stats(self, enabled: bool) -> None: ...
    def latency_sample(self, event: str, ms: int) -> None: ...
    def latency_histograms(self) -> list[tuple[str, int, list[int]]]: ...
    # INFO and CONFIG SET read and set these too.
    error_counts: dict[str, int]  # INFO errorstats: error code -> replies
    @property
    def metrics(self) -> MetricsView: ...
    def command_stats(self) -> list[tuple[str, int, int, int, int]]: ...
    def watched_keys(self) -> tuple[int, int]: ...
    def blocking_keys(self) -> tuple[int, int]: ...
    def set_notify(self, flags: int) -> None: ...
    def set_policy(self) -> None: ...
    disable_deny_scripts: bool  # DEBUG SET-DISABLE-DENY-SCRIPTS: scripts may run noscript commands

    @property
    def blocked_clients(self) -> int: ...

    @property
    def command_calls(self) -> dict[str, int]: ...

    @property
    def total_commands_processed(self) -> int: ...


class Ctx:
    """What a handler sees: the engine, the client, the database, and a
    place to record effects.  One per executed command.

    A handler declares what it propagates (to the AOF and to replicas):

    * :meth:`propagate_argv` -- its own argv, as it came;
    * :meth:`effect` -- a rewritten form (``XADD *`` with the ID it made,
      ``XREADGROUP`` as the ``XCLAIM`` of each delivered entry ...), once
      per effect;
    * :meth:`no_propagation` -- nothing (a retry that added nothing; the
      per-entry effects of XCLAIM are then recorded with :meth:`effect`).

    Nothing is inferred: a write command that counted a change
    (:meth:`modified` or :meth:`changed`) and declared none of these is a bug
    the engine logs and counts in ``internal_errors``.
    """

    __slots__ = ("engine", "client", "db", "argv", "spec", "effects", "changes", "may_block",
                 "ready_key")

    engine: EngineAPI
    client: ClientState
    db: Database
    argv: list[bytes]
    spec: CommandInfo | None
    effects: list[Effect] | None  # None: nothing declared yet
    changes: int
    may_block: bool
    # When a blocked command is retried: the key whose readiness woke it
    # (Redis serves a blocked XREAD with that key only).
    ready_key: bytes | None

    @staticmethod
    def new(engine: EngineAPI, client: ClientState, argv: list[bytes],
            spec: CommandInfo | None, may_block: bool) -> Ctx:
        """The context of one command (made with this, not ``Ctx(...)``).

        Why not ``__init__``: on Python 3.11 calling a class enters its
        ``__init__`` from C in a frame of its own, while this function is
        called inline by the interpreter; a Ctx is made per command (but in
        Engine.execute_many's loop), and this way costs about 30 ns of 235."""
        ctx = _new_object(Ctx)
        ctx.engine = engine
        ctx.client = client
        ctx.db = engine.dbs[client.db]
        ctx.argv = argv
        ctx.spec = spec
        ctx.effects = None
        ctx.changes = 0
        ctx.may_block = may_block
        ctx.ready_key = None
        return ctx

    @property
    def config(self) -> Config:
        return self.engine.config

    def now_ms(self) -> int:
        return self.engine.clock.now_ms()

    def modified(self, key: bytes, count: int = 1) -> None:
        """A key's value changed: WATCH fails, and the change counts."""
        self.db.touch(key)
        self.changes += count

    def changed(self, count: int = 1, key: bytes | None = None) -> None:
        """Data changed without touching a key's WATCH (consumer-group
        state, PELs, a flush that touches keys itself): the change counts
        toward save points and the propagation check.  With ``key`` (the
        stream whose groups changed), a change also counts as a write of
        the key for an LRM policy (Database.written), as in Redis 8.6."""
        self.changes += count
        if key is not None and count:
            self.db.written(key)

    def notify(self, cls: int, event: bytes, key: bytes,
               subkeys: list[bytes] | None = None) -> None:
        """A keyspace event of class ``cls`` (``config.NOTIFY_*``) happened to
        key: published to ``__keyspace@<db>__:<key>`` and/or
        ``__keyevent@<db>__:<event>`` when the class is on.  One attribute
        test while notifications are off; call in Redis's order, after the
        change.  ``subkeys``: the hash fields it touched, for the subkey
        channels (Redis 8.8)."""
        if self.engine.notify_flags & cls:
            self.engine.notify_keyspace(cls, event, key, self.db.index, subkeys)

    def ready(self, key: bytes) -> None:
        """A key got data (or went away): serve its blocked clients afterwards."""
        engine = self.engine
        if engine.waiters:  # nobody blocked anywhere: nothing to signal
            engine.signal_ready(self.db.index, key)

    @property
    def propagating(self) -> bool:
        """Whether anything listens to effects (the AOF, replicas).  A handler
        that declared its propagation (:meth:`no_propagation` first) may skip
        building per-entry effects nobody would read."""
        return bool(self.engine.effect_listeners)

    def propagate_argv(self) -> None:
        """Propagate the command's own argv, as it came."""
        self.effect(self.argv)

    def effect(self, argv: Effect) -> None:
        """Propagate ``argv``, a rewritten form of the command or a typed
        record of what it did (:mod:`.effects`); one per call, in order."""
        if self.effects is None:
            self.effects = [argv]
        else:
            self.effects.append(argv)

    def no_propagation(self) -> None:
        """Propagate nothing but the effects recorded with :meth:`effect`, if any."""
        if self.effects is None:
            self.effects = []
