"""The engine's header: what its modules share.

:class:`EngineCore` declares the engine's state (built in
``core.Engine.__init__``) and the prototypes of its methods, as Redis's
``server.h`` does for its ``.c`` files: each module of this package writes
its methods as functions of ``self: EngineCore``, and the type checker holds
:class:`~tidelog.engine.core.Engine` to this protocol.  The operator's state
(:class:`OperatorState`) and INFO's rates (:class:`Rate`, :class:`Metrics`)
live here too, as plain records.
"""

from __future__ import annotations

import weakref
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..acl.registry import Acl
from ..acl.users import User
from ..clock import Clock
from ..commands import table
from ..commands.contract import (
    ClientState,
    Cluster,
    Ctx,
    Effect,
    EngineAPI,
    Persistence,
    Replication,
    Reply,
    Wait,
)
from ..commands.keys.migrate_sockets import MigrateSockets
from ..commands.session.tracking import Tracker
from ..config import Config
from ..keyspace import Database
from ..lfu import Lfu
from ..resp.replies import ErrorReply, RawReply
from ..scripting.scripts import Scripts
from ..slotstats import SlotStats
from ..types.latency import LatencyEvent, SlowlogEntry
from ..types.pubsub import PubSub
from .entry import Entry, Waiter
from .outcomes import _Aborted

if TYPE_CHECKING:
    from .slot_router import SlotRouter

# A duration no command reaches: the threshold while slowlog/latency are off.
NEVER_NS = 1 << 80


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


class EngineCore(EngineAPI, Protocol):
    """The engine as its own modules see it: its state, then its methods by
    module (each documented where it is written).  A handler sees less:
    :class:`~tidelog.commands.contract.EngineAPI`."""

    # The state every module reads (built in core.Engine.__init__).
    config: Config
    clock: Clock
    schedule: Callable[[float, Callable[[], None]], Any] | None
    dbs: list[Database]
    clients: dict[int, ClientState]
    _next_client_id: int
    ops: OperatorState
    _watch_ns: int
    waiters: dict[tuple[int, bytes], deque[Waiter]]
    pubsub: PubSub
    notify_flags: int
    _ready: dict[tuple[int, bytes], None]
    effect_listeners: list[Callable[[list[tuple[int, Effect]]], None]]
    _tx_effects: list[tuple[int, Effect]] | None
    shutdown_hook: Callable[[], None] | None
    listen_hook: Callable[[str], bytes | None] | None
    persistence: Persistence
    slot_router: SlotRouter | None
    slot_stats: SlotStats
    replication: Replication
    cluster: Cluster
    started: float
    started_ms: int
    run_id: str
    dirty: int
    stats: dict[str, int]
    metrics: Metrics
    rdb_last_load: tuple[int, int]
    acl: Acl
    error_counts: dict[str, int]
    _entries: dict[str, Entry]
    _dispatch: dict[bytes, Entry]
    runnable: set[bytes]
    internal_errors: int
    lazyfree_pending: list[Any]
    lazyfreed_objects: int
    _cross_protocol_logged: float | None
    active_expire: bool
    pause_cron: bool
    disable_deny_scripts: bool
    _executing: bool
    _idmp_sweep: deque[weakref.ref[Any]]
    _idmp_swept: weakref.WeakSet[Any]
    scripts: Scripts
    tracking: Tracker
    migrate_sockets: MigrateSockets
    hotkeys: Any
    names: dict[bytes, bytes | None]
    lfu: Lfu

    @property
    def total_commands_processed(self) -> int: ...

    # dispatch.py
    def _forget_dispatch(self) -> None: ...
    def run_key(self, argv: list[bytes]) -> tuple[Entry, bytes] | None: ...
    def apply_renames(self, renames: list[tuple[str, str]]) -> None: ...
    def _entry(self, spec: table.CommandSpec) -> Entry: ...
    def _resolve(self, argv: list[bytes]) -> Entry: ...

    # admission.py
    def admission_settled(self, client: ClientState) -> bool: ...
    def admit(self, client: ClientState, entry: Entry, argv: list[bytes],
              how: int = ..., read_only: bool = False) -> Reply | None: ...
    @staticmethod
    def _acl_refusal(client: ClientState, spec: table.CommandSpec,
                     argv: list[bytes]) -> tuple[int, int] | None: ...
    def _held(self, client: ClientState, entry: Entry, argv: list[bytes]) -> bool: ...
    def _script_allows_oom(self) -> bool: ...
    def _script_reads_only(self, name: str, argv: list[bytes]) -> bool: ...
    def _script_flags(self, name: str, argv: list[bytes]) -> frozenset[bytes] | None: ...
    def set_write_guard(self, guard: Callable[[ClientState], bytes | None] | None) -> None: ...
    def set_stale_guard(self, guard: Callable[[ClientState], bytes | None] | None) -> None: ...
    def set_slot_router(self, router: SlotRouter | None) -> None: ...
    def set_slot_stats(self, enabled: bool) -> None: ...
    def redirect_blocked(self) -> int: ...
    def delete_slot_keys(self, slot: int) -> int: ...
    def cross_protocol(self) -> _Aborted: ...
    def _queued_flags(self, client: ClientState) -> tuple[bool, bool, bool]: ...
    def _reject(self, client: ClientState, entry: Entry, message: bytes) -> ErrorReply: ...
    def _slot_refusal(self, router: SlotRouter, client: ClientState, entry: Entry,
                      argv: list[bytes]) -> ErrorReply | None: ...
    def _refused_in_script(self, entry: Entry, message: bytes) -> ErrorReply: ...

    # call.py
    def execute(self, client: ClientState, argv: list[bytes]) -> Reply: ...
    def execute_run(self, client: ClientState, run: list[list[bytes]]) -> list[Reply]: ...
    def _execute_checked(self, client: ClientState, argv: list[bytes]) -> Reply: ...
    def script_command(self, client: ClientState, argv: list[bytes],
                       read_only: bool) -> tuple[Reply, bool]: ...
    def load_command(self, client: ClientState, argv: list[bytes]) -> Reply: ...
    def count_loaded(self, name: str, calls: int) -> None: ...
    def call(self, client: ClientState, entry: Entry, argv: list[bytes], flags: int,
             waiter: Waiter | None = None, run: list[list[bytes]] | None = None) -> Reply: ...
    def _failed(self, entry: Entry, argv: list[bytes], exc: Exception) -> ErrorReply: ...
    def _slow_call(self, client: ClientState, entry: Entry, argv: list[bytes],
                   elapsed_ns: int, reply: Reply) -> None: ...
    def execute_many(self, client: ClientState, batch: list[list[bytes]], i: int,
                     replies: list[Reply]) -> tuple[int, Reply]: ...
    def _error(self, message: bytes) -> ErrorReply: ...

    # effects.py
    def _finish(self, ctx: Ctx) -> None: ...
    def emit(self, effects: list[tuple[int, Effect]]) -> None: ...
    def begin_unit(self) -> tuple[bool, bool]: ...
    def end_unit(self, began: tuple[bool, bool]) -> list[tuple[int, Effect]] | None: ...
    def emit_unit(self, effects: list[tuple[int, Effect]],
                  client: ClientState | None = None) -> None: ...

    # transactions.py
    def busy_reply(self, client: ClientState, name: bytes) -> ErrorReply: ...
    def _busy_text(self) -> bytes: ...
    def exec_transaction(self, ctx: Ctx) -> Reply: ...
    def watch(self, client: ClientState, key: bytes) -> None: ...
    def _watched_key_expired(self, client: ClientState) -> bool: ...
    def unwatch_all(self, client: ClientState) -> None: ...
    def in_transaction(self) -> bool: ...

    # blocking.py
    def _block(self, ctx: Ctx, wait: Wait) -> Reply: ...
    def _unblock(self, request: Waiter) -> None: ...
    def timeout_blocked(self, request: Waiter) -> None: ...
    def unblock_client(self, client: ClientState, reply: Reply = None) -> bool: ...
    def signal_ready(self, db_index: int, key: bytes) -> None: ...
    def signal_all_waited(self, db_index: int | None = None) -> None: ...
    def wake_later(self, delay_s: float, db_index: int, keys: list[bytes]) -> Any: ...
    def serve_ready(self) -> None: ...
    def blocking_keys(self) -> tuple[int, int]: ...
    def blocked_with_timeout(self) -> int: ...

    # clients.py
    def _load_users(self) -> None: ...
    def new_client(self, **attrs: Any) -> ClientState: ...
    def refresh_access(self, client: ClientState) -> None: ...
    def set_client_user(self, client: ClientState, user: User | None) -> None: ...
    def users_changed(self, current: ClientState | None, deleted: list[User] = ...,
                      changed: list[User] = ...) -> None: ...
    def _subscriptions_allowed(self, client: ClientState, user: User) -> bool: ...
    def disconnect(self, client: ClientState, current: ClientState | None) -> None: ...
    def acl_denied(self, client: ClientState, result: int, spec: table.CommandSpec | None,
                   argv: list[bytes], at: int, context: bytes,
                   username: bytes | None = None) -> None: ...
    def client_closed(self, client: ClientState) -> None: ...
    def drop_subscriptions(self, client: ClientState) -> None: ...
    def watched_keys(self) -> tuple[int, int]: ...

    # operator.py
    def pause(self, ms: int, mode: str) -> None: ...
    def _schedule_unpause(self) -> None: ...
    def _pause_timeout(self) -> None: ...
    def unpause(self) -> None: ...
    def _bypass_dispatch(self) -> None: ...
    def hotkeys_changed(self) -> None: ...
    def _hotkeys_record(self, session: Any, client: ClientState, entry: Entry,
                        argv: list[bytes], reply: Reply, started_ns: int) -> None: ...
    def add_monitor(self, client: ClientState) -> None: ...
    def remove_monitor(self, client: ClientState) -> None: ...
    def feed_monitors(self, client: ClientState | None, db_index: int, argv: list[bytes],
                      from_script: bool = False) -> None: ...
    def _monitor_line(self, client: ClientState | None, db_index: int, argv: list[bytes],
                      from_script: bool) -> RawReply: ...
    def refresh_thresholds(self) -> None: ...
    def slowlog_push(self, client: ClientState | None, argv: list[bytes], micros: int) -> None: ...
    def latency_sample(self, event: str, ms: int) -> None: ...
    def command_stats(self) -> list[tuple[str, int, int, int, int]]: ...
    def latency_histograms(self) -> list[tuple[str, int, list[int]]]: ...
    def reset_stats(self) -> None: ...

    # notify.py
    def set_notify(self, flags: int) -> None: ...
    def notify_keyspace(self, cls: int, event: bytes, key: bytes, db_index: int,
                        subkeys: list[bytes] | None = None) -> None: ...
    def _notify_subkeys(self, flags: int, event: bytes, key: bytes, db_index: int,
                        subkeys: list[bytes]) -> None: ...
    def _publish(self, channel: bytes, message: bytes) -> None: ...
    def _key_new(self, db: Database, key: bytes) -> None: ...
    def _key_expired(self, db: Database, key: bytes) -> None: ...
    def _fields_expired(self, db: Database, key: bytes, fields: list[bytes]) -> None: ...

    # housekeeping.py
    def fits_in_memory(self) -> bool: ...
    def _evict(self, db: Database, key: bytes) -> None: ...
    def set_policy(self) -> None: ...
    def set_maxmemory(self, limit: int) -> None: ...
    def free_later(self, value: Any) -> None: ...
    def lazy_free(self) -> None: ...
    def cron(self) -> None: ...
    def track_idmp(self, state: Any) -> None: ...
    def expire_idmp(self, budget: int = ...) -> int: ...
    def drop_staged(self, which: Callable[[Any], bool] | None = ...) -> int: ...
