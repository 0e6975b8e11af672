"""The :class:`Engine` façade: its state, built in ``__init__``, and its
methods, bound from the modules of this package (see the package's
docstring for why they are functions of ``self`` bound here).
"""

from __future__ import annotations

import os
import weakref
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import commands, errors, eviction, heap  # noqa: F401  (importing commands registers them)
from ..acl.registry import Acl
from ..clock import Clock
from ..commands.contract import ClientState, Cluster, Effect, Persistence, Replication
from ..commands.keys.migrate_sockets import MigrateSockets
from ..commands.session.tracking import Tracker
from ..config import Config
from ..keyspace import Database
from ..lfu import Lfu
from ..scripting.scripts import Scripts
from ..slotstats import SlotStats
from ..types.latency import LatencyEvent, SlowlogEntry
from ..types.pubsub import PubSub
from . import (
    admission,
    blocking,
    call,
    clients,
    dispatch,
    effects,
    housekeeping,
    notify,
    operator,
    parking,
    slots,
    transactions,
)
from .base import NEVER_NS, EngineCore, Metrics, OperatorState
from .entry import Entry, Waiter
from .notify import _channel_match
from .services import NoCluster, NoPersistence, NoReplication
from .slot_router import SlotRouter

if TYPE_CHECKING:
    # The type checker holds Engine to EngineCore (the state and the methods
    # the modules share); at run time Engine is a plain class.
    _Core = EngineCore
else:
    _Core = object


class Engine(_Core):
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
        # The CLUSTER subcommands: cluster mode attaches its control.
        self.cluster: Cluster = NoCluster()
        # Cluster mode: the slot check (set_slot_router); None otherwise.
        self.slot_router: SlotRouter | None = None
        # Cluster mode's per-slot counters (CLUSTER SLOT-STATS), counted
        # while cluster-slot-stats-enabled is on (call._execute_checked).
        self.slot_stats = SlotStats(self.config["cluster-slot-stats-enabled"])
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
        # is told of which modified key (commands.session.tracking).
        self.tracking = Tracker(self)
        # MIGRATE's connections to its targets, kept for the next MIGRATE;
        # the cron closes the idle ones (commands.keys.migrate_sockets).
        self.migrate_sockets = MigrateSockets()
        # A chunked MIGRATE's moves: the network layer's mover (the bare
        # engine's moves nothing), and the keys in flight, (db, key) -> the
        # move (engine/parking.py).
        self.mover: Any = parking.NoMover()
        self.moving: dict[tuple[int, bytes], Any] = {}
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

    # -- statistics -----------------------------------------------------------------
    @property
    def command_calls(self) -> dict[str, int]:
        """Calls per command name (subcommands as ``container|sub``), in the
        order of first use; commands never called are left out."""
        return {name: entry.calls for name, entry in self._entries.items() if entry.calls}

    @property
    def total_commands_processed(self) -> int:
        return sum(entry.calls for entry in self._entries.values())

    @property
    def blocked_clients(self) -> int:
        """Clients waiting: blocked on keys, or holding a command CLIENT PAUSE
        postponed (Redis counts those as blocked too)."""
        return sum(1 for c in self.clients.values() if c.blocked is not None or c.postponed)


    # -- the methods, by module --------------------------------------------------

    # dispatch.py
    _forget_dispatch = dispatch._forget_dispatch
    run_key = dispatch.run_key
    apply_renames = dispatch.apply_renames
    _entry = dispatch._entry
    _resolve = dispatch._resolve

    # admission.py
    admission_settled = admission.admission_settled
    admit = admission.admit
    _acl_refusal = staticmethod(admission._acl_refusal)
    _held = admission._held
    _script_allows_oom = admission._script_allows_oom
    _script_reads_only = admission._script_reads_only
    _script_flags = admission._script_flags
    set_write_guard = admission.set_write_guard
    set_stale_guard = admission.set_stale_guard
    set_slot_router = slots.set_slot_router
    set_slot_stats = slots.set_slot_stats
    redirect_blocked = slots.redirect_blocked
    delete_slot_keys = slots.delete_slot_keys
    cross_protocol = admission.cross_protocol
    _queued_flags = admission._queued_flags
    _reject = admission._reject
    _slot_refusal = admission._slot_refusal
    _refused_in_script = admission._refused_in_script

    # call.py
    execute = call.execute
    execute_run = call.execute_run
    _execute_checked = call._execute_checked
    script_command = call.script_command
    load_command = call.load_command
    count_loaded = call.count_loaded
    _failed = call._failed
    _slow_call = call._slow_call
    execute_many = call.execute_many
    _error = call._error

    # effects.py
    _finish = effects._finish
    emit = effects.emit
    begin_unit = effects.begin_unit
    end_unit = effects.end_unit
    emit_unit = effects.emit_unit

    # transactions.py
    busy_reply = transactions.busy_reply
    _busy_text = transactions._busy_text
    exec_transaction = transactions.exec_transaction
    watch = transactions.watch
    _watched_key_expired = transactions._watched_key_expired
    unwatch_all = transactions.unwatch_all
    in_transaction = transactions.in_transaction

    # parking.py
    park = parking.park
    release = parking.release
    unpark = parking.unpark
    moving_refusal = parking.moving_refusal

    # blocking.py
    _block = blocking._block
    _unblock = blocking._unblock
    timeout_blocked = blocking.timeout_blocked
    unblock_client = blocking.unblock_client
    signal_ready = blocking.signal_ready
    signal_all_waited = blocking.signal_all_waited
    wake_later = blocking.wake_later
    serve_ready = blocking.serve_ready
    blocking_keys = blocking.blocking_keys
    blocked_with_timeout = blocking.blocked_with_timeout

    # clients.py
    _load_users = clients._load_users
    new_client = clients.new_client
    refresh_access = clients.refresh_access
    set_client_user = clients.set_client_user
    users_changed = clients.users_changed
    _subscriptions_allowed = clients._subscriptions_allowed
    disconnect = clients.disconnect
    acl_denied = clients.acl_denied
    client_closed = clients.client_closed
    drop_subscriptions = clients.drop_subscriptions
    watched_keys = clients.watched_keys

    # operator.py
    pause = operator.pause
    _schedule_unpause = operator._schedule_unpause
    _pause_timeout = operator._pause_timeout
    unpause = operator.unpause
    _bypass_dispatch = operator._bypass_dispatch
    hotkeys_changed = operator.hotkeys_changed
    _hotkeys_record = operator._hotkeys_record
    add_monitor = operator.add_monitor
    remove_monitor = operator.remove_monitor
    feed_monitors = operator.feed_monitors
    _monitor_line = operator._monitor_line
    refresh_thresholds = operator.refresh_thresholds
    slowlog_push = operator.slowlog_push
    latency_sample = operator.latency_sample
    command_stats = operator.command_stats
    latency_histograms = operator.latency_histograms
    reset_stats = operator.reset_stats

    # notify.py
    set_notify = notify.set_notify
    notify_keyspace = notify.notify_keyspace
    _notify_subkeys = notify._notify_subkeys
    _publish = notify._publish
    _key_new = notify._key_new
    _key_expired = notify._key_expired
    _fields_expired = notify._fields_expired

    # housekeeping.py
    fits_in_memory = housekeeping.fits_in_memory
    _evict = housekeeping._evict
    set_policy = housekeeping.set_policy
    set_maxmemory = housekeeping.set_maxmemory
    free_later = housekeeping.free_later
    lazy_free = housekeeping.lazy_free
    cron = housekeeping.cron
    track_idmp = housekeeping.track_idmp
    expire_idmp = housekeeping.expire_idmp
    drop_staged = housekeeping.drop_staged

    # Last: until here ``call`` names the module.
    call = call.call
