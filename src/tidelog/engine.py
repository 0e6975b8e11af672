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
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from time import perf_counter_ns
from typing import Any

from . import commands, errors  # noqa: F401  (importing commands registers them)
from .clock import Clock
from .commands import table
from .commands.contract import AOF_OFF_INFO, ClientState, Ctx, Effect, Persistence, Reply, Wait
from .commands.keys import glob_match
from .config import Config
from .errors import CommandError
from .keyspace import Database
from .resp import encode
from .resp.replies import NULL_ARRAY, QUEUED, ErrorReply, RawReply, Replies
from .scripting.scripts import Scripts
from .types.pubsub import PubSub

__all__ = ["BLOCKED", "ClientState", "Ctx", "Engine", "Wait", "Waiter"]

log = logging.getLogger("tidelog")


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

# Most raw command names (b"XADD", b"xadd", ...) the dispatch remembers; a
# client sending names in ever new letter cases cannot grow it further.
DISPATCH_CACHE_MAX = 1024


class Entry:
    """One command as this engine runs it: what it needs of the table's spec
    (name, handler, arity, flags) read once, and its statistics (INFO
    commandstats): calls, the time they took, and the calls that answered
    an error (failed) or were refused before running (rejected: arity,
    MULTI).  The dispatch maps raw name bytes to entries; each update is an
    attribute add."""

    __slots__ = ("name", "handler", "arity", "is_write", "queued_in_multi",
                 "refused_in_multi", "run", "calls", "ns", "failed", "rejected")

    def __init__(self, spec: table.CommandSpec) -> None:
        self.name = spec.name
        self.handler = spec.handler
        self.arity = spec.arity
        self.is_write = spec.is_write
        self.refused_in_multi = "no_multi" in spec.flags
        self.queued_in_multi = spec.name.partition("|")[0] not in _MULTI_CONTROL
        self.run = spec.run
        self.calls = 0
        self.ns = 0          # time spent in the handler, nanoseconds
        self.failed = 0
        self.rejected = 0


@dataclass(eq=False)
class Waiter:
    """A client parked on keys by a handler's :class:`Wait`."""

    client: ClientState
    db: int
    wait: Wait
    argv: list[bytes]
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
            *AOF_OFF_INFO,
        ]

    def set_appendonly(self, on: bool) -> None:
        """Nothing to start: the option is only recorded."""

    def shutdown_save(self, save: bool | None) -> bool:
        return True


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
        self.waiters: dict[tuple[int, bytes], deque[Waiter]] = {}
        # Pub/Sub subscriptions; a client's own are also its ``pubsub``.
        self.pubsub = PubSub(_channel_match)
        self._ready: dict[tuple[int, bytes], None] = {}
        # Each listener gets a list of (db index, argv) effects per command or
        # transaction; several effects of one command or transaction come
        # wrapped in MULTI/EXEC, as Redis propagates them.
        self.effect_listeners: list[Callable[[list[tuple[int, Effect]]], None]] = []
        self._tx_effects: list[tuple[int, Effect]] | None = None
        self.shutdown_hook: Callable[[], None] | None = None
        # Snapshots and the AOF: tidelog.persistence attaches its own.
        self.persistence: Persistence = NoPersistence(self)
        self.started = self.clock.monotonic()
        self.started_ms = self.clock.now_ms()
        self.run_id = os.urandom(20).hex()
        self.dirty = 0
        self.stats: dict[str, int] = {
            "total_connections_received": 0,
            "rejected_connections": 0, "keyspace_hits": 0, "keyspace_misses": 0,
            "expired_keys": 0, "expired_subkeys": 0, "total_error_replies": 0,
            "unexpected_error_replies": 0,
        }
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
        self.active_expire = True  # DEBUG SET-ACTIVE-EXPIRE 0 turns the cron's expiry off
        self._executing = False
        # Streams' IDMP states holding pairs, swept round-robin by the cron.
        # Weak references: a deleted stream's state just drops out.
        self._idmp_sweep: deque[weakref.ref] = deque()
        self._idmp_swept: weakref.WeakSet = weakref.WeakSet()
        # Lua scripting: the script cache and the runner (EVAL, SCRIPT).
        self.scripts = Scripts(self)

    # -- clients ------------------------------------------------------------------
    def new_client(self, **attrs: Any) -> ClientState:
        now = self.clock.monotonic()
        client = ClientState(id=self._next_client_id, created=now, last_interaction=now, **attrs)
        self._next_client_id += 1
        self.clients[client.id] = client
        self.stats["total_connections_received"] += 1
        return client

    def client_closed(self, client: ClientState) -> None:
        """Forget a client: unblock it silently and drop its watches."""
        if client.blocked is not None:
            self._unblock(client.blocked)
        self.unwatch_all(client)
        self.drop_subscriptions(client)
        self.clients.pop(client.id, None)

    def drop_subscriptions(self, client: ClientState) -> None:
        """Forget every Pub/Sub subscription of a client (RESET, close)."""
        if client.pubsub is not None:
            self.pubsub.drop(client)
            client.pubsub = None

    # -- executing ------------------------------------------------------------------
    def execute(self, client: ClientState, argv: list[bytes]) -> Reply:
        """Run one command for a client: a reply, or BLOCKED.

        The common case costs one dict lookup on the raw name bytes and an
        arity check; unknown names, subcommands and MULTI take
        :meth:`_execute_checked`."""
        entry = self._dispatch.get(argv[0])
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

    # -- runs ---------------------------------------------------------------------
    def run_key(self, argv: list[bytes]) -> tuple[Entry, bytes] | None:
        """What names the run ``argv`` can start or join: its command and key,
        when the command has a run handler (``table.runs``) and argv has the
        form it takes; else None.  Only for names in :attr:`runnable`."""
        entry = self._dispatch[argv[0]]
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
        so each call must be seen alone).  Cost: one handler call for the
        run instead of one per call."""
        if len(run) == 1 or client.multi is not None or self.waiters or client.pubsub is not None:
            return [self.execute(client, argv) for argv in run]
        entry = self._dispatch[run[0][0]]
        client.last_command = entry.name
        entry.calls += len(run)
        started = perf_counter_ns()
        ctx = Ctx(self, client, run[0], entry, False)
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
        entry.ns += perf_counter_ns() - started
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
            if client.multi is not None:
                client.multi_error = True
            return self._error(exc.message)
        client.last_command = entry.name
        if client.pubsub is not None and client.protocol == 2 and \
                entry.name.partition("|")[0] not in _SUBSCRIBED_MODE:
            if client.multi is not None:
                client.multi_error = True
            entry.rejected += 1
            return self._error(errors.pubsub_context(entry.name).message)
        if client.multi is not None:
            if entry.refused_in_multi:
                client.multi_error = True
                entry.rejected += 1
                return self._error(errors.NOT_IN_MULTI)
            if entry.queued_in_multi:
                client.multi.append(argv)
                return QUEUED
        reply = self._call(client, entry, argv, may_block=True)
        if self._ready and not self._executing:
            self.serve_ready()
        return reply

    def _entry(self, spec: table.CommandSpec) -> Entry:
        entry = self._entries.get(spec.name)
        if entry is None:
            entry = self._entries[spec.name] = Entry(spec)
        return entry

    def _resolve(self, argv: list[bytes]) -> Entry:
        """Find the command and check its arity, with Redis's errors."""
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
        if not spec.subcommands and "|" not in spec.name and \
                len(self._dispatch) < DISPATCH_CACHE_MAX:
            self._dispatch[argv[0]] = entry
            if entry.run is not None:
                self.runnable.add(argv[0])
        return entry

    def _call(self, client: ClientState, entry: Entry, argv: list[bytes],
              may_block: bool) -> Reply:
        """Run a resolved command; errors become error replies."""
        started = perf_counter_ns()
        ctx = Ctx(self, client, argv, entry, may_block)
        no_touch = client.no_touch
        if no_touch:
            ctx.db.no_touch = True
        try:
            reply = entry.handler(ctx, argv)  # type: ignore[misc]
        except CommandError as exc:
            entry.failed += 1
            reply = self._error(exc.message)
        except Exception:
            log.exception("internal error running %r", argv[:8])
            self.internal_errors += 1
            self.stats["unexpected_error_replies"] += 1
            entry.failed += 1
            reply = self._error(errors.INTERNAL)
        finally:
            if no_touch:
                ctx.db.no_touch = False
            # Counted once it ran, as Redis does: INFO does not count itself,
            # and CONFIG RESETSTAT's own call survives the reset.
            entry.calls += 1
            entry.ns += perf_counter_ns() - started
        if reply.__class__ is Wait:
            reply = self._block(ctx, reply)
        if ctx.changes or ctx.effects:
            self._finish(ctx)
        return reply

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
            return self._error(errors.SCRIPT_WRONG_ARITY), False
        if "noscript" in spec.flags:
            return self._error(errors.SCRIPT_NOT_ALLOWED), False
        if read_only and spec.is_write:
            return self._error(errors.SCRIPT_READ_ONLY), False
        if spec.name in ("xread", "xreadgroup"):
            for arg in argv[1:]:
                word = arg.lower()
                if word == b"streams":
                    break
                if word == b"block":
                    return self._error(errors.SCRIPT_BLOCK_OPTION % spec.name.encode()), False
        entry = self._entry(spec)
        return self._call(client, entry, argv, may_block=False), entry.is_write

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
        for entry in self._entries.values():
            entry.calls = entry.ns = entry.failed = entry.rejected = 0
        self.error_counts.clear()

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
                batch = [(ctx.db.index, [b"MULTI"]), *batch, (ctx.db.index, [b"EXEC"])]
            self.emit(batch)

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

    def busy_reply(self) -> ErrorReply:
        """What a command gets while a script runs past busy-reply-threshold."""
        return self._error(errors.BUSY)

    def _key_expired(self, db: Database, key: bytes) -> None:
        self.stats["expired_keys"] += 1
        self.signal_ready(db.index, key)
        self.emit([(db.index, [b"DEL", key])])

    def _fields_expired(self, db: Database, key: bytes, fields: list[bytes]) -> None:
        """Hash fields expired (lazily or actively): propagated as one
        ``HDEL key field`` each, as Redis does."""
        self.stats["expired_subkeys"] += len(fields)
        self.emit([(db.index, [b"HDEL", key, field]) for field in fields])

    # -- transactions ---------------------------------------------------------------
    def exec_transaction(self, ctx: Ctx) -> Reply:
        """Run a client's queued commands; called by the EXEC handler."""
        client = ctx.client
        queued = client.multi or []
        failed = client.multi_error
        dirty = client.dirty_cas
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
                reply = self._call(client, entry, argv, may_block=False)
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
        if len(effects) > 1:
            first_db = effects[0][0]
            effects = [(first_db, [b"MULTI"]), *effects, (effects[-1][0], [b"EXEC"])]
        if effects:
            self.emit(effects)
        return replies

    def watch(self, client: ClientState, key: bytes) -> None:
        if (client.db, key) not in client.watched:
            client.watched.add((client.db, key))
            self.dbs[client.db].watch(key, client)

    def unwatch_all(self, client: ClientState) -> None:
        for db_index, key in client.watched:
            self.dbs[db_index].unwatch(key, client)
        client.watched.clear()
        client.dirty_cas = False

    # -- blocking -------------------------------------------------------------------
    def _block(self, ctx: Ctx, wait: Wait) -> Reply:
        if not ctx.may_block:
            return wait.timeout_reply
        request = Waiter(ctx.client, ctx.db.index, wait, ctx.argv)
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
            request.client.send(request.wait.timeout_reply)

    def unblock_client(self, client: ClientState, reply: Reply = None) -> bool:
        """CLIENT UNBLOCK: answer a blocked client now, with ``reply`` or (None)
        what its command answers when its time is up.  False if not blocked."""
        request = client.blocked
        if request is None:
            return False
        self._unblock(request)
        client.send(request.wait.timeout_reply if reply is None else reply)
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
        ready (serving one client may make other keys ready)."""
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
                    saved_db, client.db = client.db, request.db
                    ctx = Ctx(self, client, request.argv, self._resolve(request.argv), False)
                    ctx.ready_key = db_key[1]
                    try:
                        reply = request.wait.retry(ctx)
                    except CommandError as exc:
                        reply = self._error(exc.message)
                    finally:
                        client.db = saved_db
                    if reply is None:
                        continue
                    self._unblock(request)
                    self._finish(ctx)
                    client.send(reply)

    # -- housekeeping ---------------------------------------------------------------
    def cron(self) -> None:
        """Periodic work (``hz`` times a second): active expiry, IDMP expiry."""
        for db in self.dbs:
            if db.expires and self.active_expire:
                db.expire_cycle()
            if db.field_keys and self.active_expire:
                db.field_expire_cycle()
        if self._idmp_sweep:
            self.expire_idmp()
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
        return sum(1 for c in self.clients.values() if c.blocked is not None)

    def blocked_with_timeout(self) -> int:
        """Blocked clients whose wait has a timeout (INFO's timeout table)."""
        return sum(1 for c in self.clients.values()
                   if c.blocked is not None and c.blocked.wait.timeout_ms > 0)
