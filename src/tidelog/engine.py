"""The engine: executes one command for one client and says what happened.

``Engine.execute(client, argv)`` returns a reply value, or :data:`BLOCKED`
when the command is waiting for data (``XREAD BLOCK``).  It owns the things
that are about commands rather than about any one command:

* the checks Redis makes before running a command (unknown name, arity), so
  handlers never repeat them;
* transactions: MULTI queues, EXEC runs the queue atomically, WATCH makes it
  fail when a watched key changed;
* blocking: a handler that must wait returns a :class:`Blocked`; the engine
  parks the client on each key, FIFO per key.  Commands never wake anybody:
  they mark keys ready (``Ctx.ready``), and after the command — or the whole
  EXEC — finishes, the engine serves the waiters of each ready key in the
  order they blocked;
* effects: what a write command changed, in Redis's propagation forms, goes
  to every listener in ``effect_listeners`` (the AOF and replicas, later),
  once per executed command or transaction.

The engine never touches sockets.  A client is a :class:`ClientState`; the
server gives each one a ``send`` callback for replies that arrive later
(a blocked client being served), and a scheduler for timeouts.
"""

from __future__ import annotations

import logging
import os
import weakref
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from . import errors
from .clock import Clock
from .config import Config
from .errors import CommandError
from .keyspace import Database
from .resp.replies import NULL_ARRAY, ErrorReply

log = logging.getLogger("tidelog")

Reply = Any
Effect = list[bytes]


class _Blocked:
    """Returned by execute() when the client now waits for data."""

    def __repr__(self) -> str:
        return "BLOCKED"


BLOCKED = _Blocked()

# Most units of IDMP expiry work (iids dropped + producers visited) one cron
# call does; Engine.expire_idmp explains the sweep.
IDMP_EXPIRE_BUDGET = 1000

# Commands that run even while a MULTI is open (everything else is queued).
_MULTI_CONTROL = frozenset({"exec", "discard", "multi", "watch", "quit", "reset"})


@dataclass(eq=False)
class BlockedRequest:
    client: ClientState
    db: int
    blocked: Blocked
    argv: list[bytes]
    deadline: float = 0.0  # monotonic seconds; 0 = no timeout
    timer: Any = None  # the scheduler's handle, cancelled when served


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
    blocked: BlockedRequest | None = None
    close_after_reply: bool = False
    send: Callable[[Reply], None] = lambda reply: None
    kind: str = "normal"
    no_evict: bool = False    # CLIENT NO-EVICT
    no_touch: bool = False    # CLIENT NO-TOUCH: lookups leave access times alone
    # CLIENT KILL: the server sets this to close the connection (None: cannot).
    kill: Callable[[], None] | None = None


class Ctx:
    """What a handler sees: the engine, the client, the database, and a
    place to record effects.  One per executed command."""

    __slots__ = ("engine", "client", "db", "argv", "spec", "effects", "changes", "may_block",
                 "ready_key")

    def __init__(self, engine: Engine, client: ClientState, argv: list[bytes],
                 spec: table.CommandSpec | None, may_block: bool) -> None:
        self.engine = engine
        self.client = client
        self.db: Database = engine.dbs[client.db]
        self.argv = argv
        self.spec = spec
        self.effects: list[Effect] | None = None  # None: propagate argv if changed
        self.changes = 0
        self.may_block = may_block
        # When a blocked command is retried: the key whose readiness woke it
        # (Redis serves a blocked XREAD with that key only).
        self.ready_key: bytes | None = None

    @property
    def config(self) -> Config:
        return self.engine.config

    def now_ms(self) -> int:
        return self.engine.clock.now_ms()

    def modified(self, key: bytes, count: int = 1) -> None:
        """A key's value changed: WATCH fails, and the change counts."""
        self.db.touch(key)
        self.changes += count

    def ready(self, key: bytes) -> None:
        """A key got data (or went away): serve its blocked clients afterwards."""
        self.engine.signal_ready(self.db.index, key)

    def propagate(self, argv: Effect) -> None:
        """Record an effect explicitly (instead of the command's own argv)."""
        if self.effects is None:
            self.effects = []
        self.effects.append(argv)

    def no_propagation(self) -> None:
        """This command changed state but must not be propagated verbatim."""
        if self.effects is None:
            self.effects = []


class Engine:
    """All server state that is not sockets: databases, clients, blocking."""

    def __init__(self, config: Config | None = None, clock: Clock | None = None,
                 scheduler: Callable[[float, Callable[[], None]], Any] | None = None) -> None:
        from . import commands  # noqa: F401  (registers every command)

        self.config = config or Config()
        self.clock = clock or Clock()
        self.schedule = scheduler  # schedule(delay_s, fn) -> handle with .cancel()
        self.dbs = [Database(i, self.clock.now_ms) for i in range(self.config["databases"])]
        for db in self.dbs:
            db.on_expired = self._key_expired
        self.clients: dict[int, ClientState] = {}
        self._next_client_id = 1
        self.waiters: dict[tuple[int, bytes], deque[BlockedRequest]] = {}
        self._ready: dict[tuple[int, bytes], None] = {}
        # Each listener gets a list of (db index, argv) effects per command or
        # transaction; several effects of one command or transaction come
        # wrapped in MULTI/EXEC, as Redis propagates them.
        self.effect_listeners: list[Callable[[list[tuple[int, Effect]]], None]] = []
        self._tx_effects: list[tuple[int, Effect]] | None = None
        self.shutdown_hook: Callable[[], None] | None = None
        # CONFIG SET appendonly: starts (True) or stops the AOF; installed by
        # the server layer (raises OSError when the AOF cannot start).
        self.aof_switch: Callable[[bool], None] | None = None
        self.started = self.clock.monotonic()
        self.started_ms = self.clock.now_ms()
        self.run_id = os.urandom(20).hex()
        self.dirty = 0
        self.stats: dict[str, int] = {
            "total_commands_processed": 0, "total_connections_received": 0,
            "rejected_connections": 0, "keyspace_hits": 0, "keyspace_misses": 0,
            "expired_keys": 0, "total_error_replies": 0, "unexpected_error_replies": 0,
        }
        self.command_calls: dict[str, int] = {}
        self.internal_errors = 0  # bugs caught; tests assert this stays 0
        self.active_expire = True  # DEBUG SET-ACTIVE-EXPIRE 0 turns the cron's expiry off
        self._executing = False
        # Streams' IDMP states holding pairs, swept round-robin by the cron.
        # Weak references: a deleted stream's state just drops out.
        self._idmp_sweep: deque[weakref.ref] = deque()
        self._idmp_swept: weakref.WeakSet = weakref.WeakSet()

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
        self.clients.pop(client.id, None)

    # -- executing ------------------------------------------------------------------
    def execute(self, client: ClientState, argv: list[bytes]) -> Reply:
        """Run one command for a client: a reply, or BLOCKED."""
        client.last_interaction = self.clock.monotonic()
        try:
            spec = self._resolve(argv)
        except CommandError as exc:
            if client.multi is not None:
                client.multi_error = True
            return self._error(exc.message)
        client.last_command = spec.name
        if client.multi is not None and "no_multi" in spec.flags:
            client.multi_error = True
            return self._error(errors.NOT_IN_MULTI)
        if client.multi is not None and spec.name.partition("|")[0] not in _MULTI_CONTROL:
            client.multi.append(argv)
            return _QUEUED
        reply = self._call(client, spec, argv, may_block=True)
        if self._ready and not self._executing:
            self.serve_ready()
        return reply

    def _resolve(self, argv: list[bytes]) -> table.CommandSpec:
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
            raise errors.wrong_arity(spec.name.encode())
        return spec

    def _call(self, client: ClientState, spec: table.CommandSpec, argv: list[bytes],
              may_block: bool) -> Reply:
        """Run a resolved command; errors become error replies."""
        ctx = Ctx(self, client, argv, spec, may_block)
        self.stats["total_commands_processed"] += 1
        self.command_calls[spec.name] = self.command_calls.get(spec.name, 0) + 1
        ctx.db.no_touch = client.no_touch
        try:
            reply = spec.handler(ctx, argv)  # type: ignore[misc]
        except CommandError as exc:
            reply = self._error(exc.message)
        except Exception:
            log.exception("internal error running %r", argv[:8])
            self.internal_errors += 1
            self.stats["unexpected_error_replies"] += 1
            reply = self._error(errors.INTERNAL)
        finally:
            ctx.db.no_touch = False
        if isinstance(reply, Blocked):
            reply = self._block(ctx, reply)
        self._finish(ctx)
        return reply

    def _finish(self, ctx: Ctx) -> None:
        if ctx.changes:
            self.dirty += ctx.changes
        effects = ctx.effects
        if effects is None:
            effects = [ctx.argv] if ctx.changes and ctx.spec is not None and ctx.spec.is_write else []
        if effects:
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
        self.stats["total_error_replies"] += 1
        return ErrorReply(message)

    def _key_expired(self, db: Database, key: bytes) -> None:
        self.stats["expired_keys"] += 1
        self.signal_ready(db.index, key)
        self.emit([(db.index, [b"DEL", key])])

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
        try:
            for argv in queued:
                spec = self._resolve(argv)
                replies.append(self._call(client, spec, argv, may_block=False))
        finally:
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
    def _block(self, ctx: Ctx, blocked: Blocked) -> Reply:
        if not ctx.may_block:
            return blocked.timeout_reply
        request = BlockedRequest(ctx.client, ctx.db.index, blocked, ctx.argv)
        ctx.client.blocked = request
        for key in dict.fromkeys(blocked.keys):
            self.waiters.setdefault((ctx.db.index, key), deque()).append(request)
        if blocked.timeout_ms > 0 and self.schedule is not None:
            request.deadline = self.clock.monotonic() + blocked.timeout_ms / 1000
            request.timer = self.schedule(blocked.timeout_ms / 1000,
                                          lambda: self.timeout_blocked(request))
        return BLOCKED

    def _unblock(self, request: BlockedRequest) -> None:
        request.client.blocked = None
        if request.timer is not None:
            request.timer.cancel()
        for key in dict.fromkeys(request.blocked.keys):
            queue = self.waiters.get((request.db, key))
            if queue is not None:
                try:
                    queue.remove(request)
                except ValueError:
                    pass
                if not queue:
                    del self.waiters[(request.db, key)]

    def timeout_blocked(self, request: BlockedRequest) -> None:
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
            request.client.send(request.blocked.timeout_reply)

    def unblock_client(self, client: ClientState, reply: Reply) -> bool:
        """CLIENT UNBLOCK: answer a blocked client now."""
        request = client.blocked
        if request is None:
            return False
        self._unblock(request)
        client.send(reply)
        return True

    def signal_ready(self, db_index: int, key: bytes) -> None:
        if (db_index, key) in self.waiters:
            self._ready[(db_index, key)] = None

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
                    ctx = Ctx(self, client, request.argv, table.lookup(request.argv), False)
                    ctx.ready_key = db_key[1]
                    try:
                        reply = request.blocked.retry(ctx)
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


from .resp.replies import QUEUED as _QUEUED  # noqa: E402

# Last: importing the command table imports every command module (they name
# Ctx only in annotations, but a module importing this one first must find it
# complete).  Blocked is part of the handlers' contract, so it lives there.
from .commands import table  # noqa: E402
from .commands.table import Blocked  # noqa: E402
