"""Calling: running a command for a client, once admitted.

:func:`call` is the one way a command runs (Redis's ``call(c, flags)``): the
handler's call, its statistics (INFO commandstats, latencystats), the slowlog
and LATENCY samples, a failure turned into its error reply, a
:class:`~tidelog.commands.contract.Wait` turned into blocking, the effects
handed on; and, as its flags say, monitors, tracking, HOTKEYS and serving
the clients whose keys became ready.  Every path comes here: a client's
command (``execute``, ``_execute_checked``), a command a script runs
(``script_command``), EXEC's queued commands, a blocked command served again
(``serve_ready``) and the AOF loader (``load_command``).

A run (consecutive pipelined calls a run handler takes together:
``execute_run``) is one :func:`call` with CALL_RUNS.  One loop is
:func:`call` written out, for speed, and lives here beside it:
``execute_many`` (the pipelined batch: ``call(..., CALL_FAST)`` per command;
its docstring names the benchmark).  It may only do what CALL_FAST says,
for settled clients (:mod:`tidelog.engine.admission`);
tests/unit/test_call_paths.py holds every path to the same replies,
effects and statistics.
"""

from __future__ import annotations

import logging
import time
from sys import getrefcount
from typing import Any

from .. import errors
from ..callstats import now_ns
from ..commands import table
from ..commands.contract import ClientState, Ctx, Reply, Wait
from ..errors import CommandError, CountedError
from ..resp.replies import ErrorReply, Replies
from ..slotstats import SlotStats, request_bytes
from .admission import _NETWORK_KINDS, CROSS_PROTOCOL_NAMES, FROM_SCRIPT
from .base import EngineCore
from .entry import MONITOR_AFTER, MONITOR_BEFORE, MONITOR_SKIP, SCRIPT_RUNNERS, Entry, Waiter
from .outcomes import BLOCKED, NOT_RUN, PARKED
from .slots import count_slot_call, shard_message_bytes

log = logging.getLogger("tidelog")


# What call() does besides running the command (its ``flags``).
CALL_BLOCK = 1 << 0      # a Wait parks the client (else it answers what a timeout would)
CALL_SERVE = 1 << 1      # then serve the clients waiting on keys made ready (not inside EXEC or a script)
CALL_MONITOR = 1 << 2    # shown to monitors (before or after it ran: Entry.monitor)
CALL_TRACK = 1 << 3      # a tracking client's own command: its reads remembered, its messages after its reply
CALL_HOTKEYS = 1 << 4    # measured by a recording HOTKEYS session
CALL_SCRIPT = 1 << 5     # run by a script: shown to monitors as "lua", its reads the script caller's
CALL_QUEUED = 1 << 6     # queued by MULTI, run by EXEC: a tracking client's reads remembered
CALL_RETRY = 1 << 7      # a blocked command served again: Wait.retry, not the handler
CALL_RUN = 1 << 8        # a run of calls, one run handler for them all (execute_run)

# Every call is counted (commandstats, latencystats) and timed (slowlog,
# LATENCY) but a blocked command's retry: Redis counted it when it ran.
#
# The fast paths: a settled client's command (admission.py) can meet no
# monitor, HOTKEYS session nor tracking, so these are all it needs.
CALL_FAST = CALL_BLOCK | CALL_SERVE
# A command of a client that is not settled, or that the fast dispatch
# does not hold.
CALL_NETWORK = CALL_FAST | CALL_MONITOR | CALL_TRACK | CALL_HOTKEYS
# EXEC's queued commands: each on its own, none blocks, waiters wait for
# the whole transaction.
CALL_EXEC = CALL_MONITOR | CALL_HOTKEYS | CALL_QUEUED
# redis.call(): as EXEC's, but monitors see it as the script's.
CALL_FROM_SCRIPT = CALL_SCRIPT
# A blocked command served again: no new call in commandstats (Redis
# counts the call when it first ran), only the slowlog, when served.
CALL_SERVED = CALL_RETRY | CALL_TRACK
# A run: a settled client's pipelined calls with a run handler (execute_run
# falls back to one by one when anything else would have to happen).
CALL_RUNS = CALL_RUN | CALL_SERVE
# (The AOF loader's commands: load_command.)

# How many different error codes INFO errorstats tracks (as Redis: a client
# cannot grow the table without bound; later codes are not added).
ERRORSTATS_MAX = 128


# -- the entry points -------------------------------------------------------------
def execute(self: EngineCore, client: ClientState, argv: list[bytes]) -> Reply:
    """Run one command for a client: a reply, or BLOCKED.

    The common case costs one dict lookup on the raw name bytes and an
    arity check: an entry found in the client's dispatch means admission
    is settled for it (the rule: :mod:`tidelog.engine.admission`), so
    :func:`call` runs it with CALL_FAST.  Unknown names, subcommands, MULTI,
    subscriptions and every command of a client that is not settled take
    :meth:`_execute_checked`.  In cluster mode a command with keys found
    there takes the slot check first (the one step of admission that
    depends on the call's own arguments: admission.py)."""
    entry = client.dispatch.get(argv[0])
    if entry is not None and client.multi is None and client.pubsub is None:
        arity = entry.arity
        argc = len(argv)
        if argc == arity or (arity < 0 and argc >= -arity):
            client.last_command = entry.name
            if entry.keyed:
                router = self.slot_router
                if router is not None and client.kind in _NETWORK_KINDS:
                    refusal = self._slot_refusal(router, client, entry, argv)
                    if refusal is not None:
                        return refusal
            return self.call(client, entry, argv, CALL_FAST)
    return self._execute_checked(client, argv)


def execute_run(self: EngineCore, client: ClientState, run: list[list[bytes]]) -> list[Reply]:
    """Run consecutive pipelined calls that :meth:`run_key` gave one value
    for, answering a reply each, exactly as :meth:`execute` one by one
    would: the same data, replies, effects (one unit per call) and
    statistics.  One by one it is, when the client is in MULTI or has
    subscriptions (RESP2's subscribed mode refuses each), or anyone
    waits on a key (Redis serves blocked clients between two commands,
    so each call must be seen alone), or the client is not settled
    (admission.py).  Otherwise one :func:`call` with CALL_RUNS runs them
    all.  In cluster mode the run's key (one for all its calls) takes the
    slot check once; refused, the calls go one by one, each refused as it
    would be.  Cost: one handler call for the run instead of one per call."""
    if len(run) == 1 or client.multi is not None or self.waiters or \
            client.pubsub is not None or self.ops.monitors or client.monitor or \
            not self.admission_settled(client):
        return [self.execute(client, argv) for argv in run]
    entry = self._dispatch[run[0][0]]
    router = self.slot_router
    if router is not None and client.kind in _NETWORK_KINDS and \
            router.check(client, entry.spec, run[0], self.dbs[client.db]) is not None:
        return [self.execute(client, argv) for argv in run]
    client.last_command = entry.name
    replies: list[Reply] = self.call(client, entry, run[0], CALL_RUNS, run=run)
    return replies


def _execute_checked(self: EngineCore, client: ClientState, argv: list[bytes]) -> Reply:
    """:meth:`execute` for what the fast dispatch does not settle: the
    command is resolved (Redis's errors for unknown names and arity), then
    admitted (:func:`~tidelog.engine.admission.admit`), then called."""
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
    stats = self.slot_stats
    router = self.slot_router
    if stats.enabled and entry.keyed and router is not None:
        client.cluster_slot = -1  # the slot check notes the command's slot
        refusal = self.admit(client, entry, argv)
        if client.kind == "master" and refusal is None and client.multi is None:
            # a replica applying its primary's stream: the slot of the
            # command's keys (served here or not), its request and time counted
            router.check(client, entry.spec, argv, self.dbs[client.db])
            slot = client.cluster_slot
            if slot >= 0:
                started = now_ns()
                reply = _network_call(self, client, entry, argv)
                stats.cpu_ns[slot] += now_ns() - started
                stats.net_in[slot] += request_bytes(argv)
                return reply
        slot = client.cluster_slot
        if slot >= 0:
            return _counted_call(self, client, entry, argv, refusal, stats, slot)
    else:
        refusal = self.admit(client, entry, argv)
    if refusal is not None:
        return refusal
    return _network_call(self, client, entry, argv)


def _network_call(self: EngineCore, client: ClientState, entry: Entry, argv: list[bytes]) -> Reply:
    """An admitted client's command that the fast dispatch did not take."""
    ops = self.ops
    if ops.monitors or ops.hotkeys is not None or client.tracking is not None:
        return self.call(client, entry, argv, CALL_NETWORK)
    return self.call(client, entry, argv, CALL_FAST)  # nobody to tell: CALL_NETWORK's work is none


# CLUSTER SLOT-STATS: the size of MULTI's request.
_MULTI_BYTES = request_bytes([b"MULTI"])


def _counted_call(self: EngineCore, client: ClientState, entry: Entry, argv: list[bytes],
                  refusal: Reply | None, stats: SlotStats, slot: int) -> Reply:
    """A client's command of one slot while CLUSTER SLOT-STATS counts
    (cluster-slot-stats-enabled), as Valkey 9.1 counts it: its time, its
    request's and reply's bytes (:func:`~tidelog.engine.slots.count_slot_call`)
    and the bytes it adds to the replication stream, once per replica; a
    refused command only its request's bytes; a command that blocks its
    time now, its bytes when it is served (none at a timeout); a script
    (EVAL, FCALL ...) only its reply's bytes; a command queued in MULTI its
    request (not +QUEUED), and EXEC also MULTI's request.  Cost: O(argc),
    plus encoding a reply that is not a bulk string nor an integer."""
    if refusal is not None:
        stats.net_in[slot] += request_bytes(argv)
        return refusal
    replication = self.replication
    offset = replication.offset
    started = now_ns()
    reply = _network_call(self, client, entry, argv)
    fed = replication.offset - offset
    if fed > 0:  # the replication stream's bytes, to each replica
        stats.net_out[slot] += fed * replication.replicas_fed()
    script = entry.name in SCRIPT_RUNNERS
    if not script:
        stats.cpu_ns[slot] += now_ns() - started
    if entry.name == "exec":
        stats.net_in[slot] += _MULTI_BYTES  # the transaction's MULTI, charged with its EXEC
    if reply is not BLOCKED and reply is not PARKED and not client.mute:
        count_slot_call(stats, slot, None if script else argv, reply, client.protocol)
        if entry.name == "spublish" and reply.__class__ is int and reply:
            # the message each subscriber here was sent
            stats.net_out[slot] += reply * shard_message_bytes(argv[1], argv[2])
    return reply


def script_command(self: EngineCore, client: ClientState, argv: list[bytes],
                   read_only: bool) -> tuple[Reply, bool]:
    """A command a script runs (redis.call): resolved and admitted with
    the errors Redis gives inside scripts, then called.  Returns the reply
    (an ErrorReply for errors) and whether the command was a write."""
    spec = table.lookup(argv)
    if spec is None or (spec.subcommands and spec.handler is None):
        return self._error(errors.SCRIPT_UNKNOWN_COMMAND), False
    entry = self._entry(spec)
    argc = len(argv)
    if (spec.arity > 0 and argc != spec.arity) or argc < -spec.arity:
        return self._refused_in_script(entry, errors.SCRIPT_WRONG_ARITY), False
    refusal = self.admit(client, entry, argv, FROM_SCRIPT, read_only)
    if refusal is not None:
        return refusal, False
    return self.call(client, entry, argv, CALL_FROM_SCRIPT), entry.is_write


def load_command(self: EngineCore, client: ClientState, argv: list[bytes]) -> Reply:
    """A command read from the AOF, run for the loader's client: as a
    client's (:meth:`execute`): the loader's client has no user and is not
    held to maxmemory, so admission is settled for it but for MULTI, which
    queues as a client's.  Its effects and ``dirty`` count as any command's."""
    return self.execute(client, argv)


def count_loaded(self: EngineCore, name: str, calls: int) -> None:
    """The AOF loader applied ``calls`` commands ``name`` itself (its batched
    XADDs): counted as :func:`call` would count them (``dirty`` and the
    command's calls), nothing else of a call applying to them (no effects
    while loading, no waiters, no monitors).  O(1)."""
    self.dirty += calls
    self._entry(table.COMMANDS[name]).calls += calls


# -- call -------------------------------------------------------------------------
def call(self: EngineCore, client: ClientState, entry: Entry, argv: list[bytes], flags: int,
         waiter: Waiter | None = None, run: list[list[bytes]] | None = None) -> Reply:
    """Run an admitted command for a client; ``flags`` (CALL_*) say what
    else is done.  Returns its reply (an error reply when it failed),
    BLOCKED when it now waits, or with CALL_RETRY (``waiter``: the blocked
    request served again) None when it still waits; with CALL_RUN (``run``:
    the calls a run handler takes together) a list, a reply per call.

    In order: HOTKEYS starts measuring; a tracking client becomes the
    tracking's current one; monitors are shown a script before it runs;
    the handler runs (CALL_RETRY: ``Wait.retry``), its failure becomes an
    error reply, the call is counted and timed (slowlog, LATENCY), a Wait
    blocks the client, its effects go out and ``dirty`` grows; monitors are
    shown the command; a tracking client's reads are remembered and its
    messages follow the reply; HOTKEYS records it; waiters of ready keys
    are served.  Cost: O(1) beside the handler's; each flag's work only
    while its listener exists."""
    if flags == CALL_FAST:  # the command, counted, and what follows it: nothing else to ask
        started = now_ns()
        ctx = Ctx.new(self, client, argv, entry, True)
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
        if self._ready and not self._executing:
            self.serve_ready()
        return reply
    if flags & CALL_RUN:
        # A run (``run``: consecutive pipelined calls one run handler takes
        # together, run[0] being ``argv``): answers a reply each, and counts
        # and propagates each call as if it ran alone.
        assert run is not None and entry.run is not None
        entry.calls += len(run)
        started = now_ns()
        ctx = Ctx.new(self, client, run[0], entry, False)
        no_touch = client.no_touch
        if no_touch:
            ctx.db.no_touch = True
        try:
            results = entry.run.handler(ctx, run)
        except Exception:
            log.exception("internal error running a run of %d %r", len(run), run[0][:8])
            self.internal_errors += 1
            self.stats["unexpected_error_replies"] += len(run)
            results = [CommandError(errors.INTERNAL)] * len(run)
        finally:
            if no_touch:
                ctx.db.no_touch = False
        replies: list[Reply] = []
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
            for one in run:
                self._slow_call(client, entry, one, each, None)
        if ctx.changes:
            self.dirty += ctx.changes
        if ctx.effects and self.effect_listeners:
            index = ctx.db.index
            for effect in ctx.effects:  # one unit per call, as one by one
                self.emit([(index, effect)])
        if flags & CALL_SERVE and self._ready and not self._executing:
            self.serve_ready()
        return replies
    ops = self.ops
    hotkeys = ops.hotkeys if flags & CALL_HOTKEYS else None
    if hotkeys is not None:
        hot_started = now_ns()
    tracking = self.tracking if flags & CALL_TRACK and client.tracking is not None else None
    if tracking is not None:
        # (Another client's command may run inside this one's, while a
        # script of that client is busy: its state is put back after.)
        outer, tracking.current = tracking.current, client
        if not flags & CALL_RETRY:
            outer_pending, tracking.pending = tracking.pending, []
    tail: list[Any] = []
    try:
        monitor = entry.monitor if flags & CALL_MONITOR and ops.monitors else MONITOR_SKIP
        if monitor == MONITOR_BEFORE:
            self.feed_monitors(client, client.db, argv)
        if flags & CALL_SCRIPT and ops.monitors:
            self.feed_monitors(client, client.db, argv, from_script=True)
        if flags & CALL_RETRY:
            # The blocked command again, on the key made ready (Redis 7.2+
            # runs it again): None while it must still wait.
            assert waiter is not None
            saved_db, client.db = client.db, waiter.db
            ctx = Ctx.new(self, client, argv, entry, False)
            ctx.ready_key = waiter.ready_key
            started = time.monotonic_ns()
            try:
                reply = waiter.wait.retry(ctx)
            except CommandError as exc:  # (its key went: -NOGROUP ...)
                entry.failed += 1  # a failed call, as Redis 7.2+ counts it
                reply = self._error(exc.message)
            finally:
                client.db = saved_db
                if tracking is not None:
                    tracking.current = outer
            if reply is None:
                return None
            self._unblock(waiter)
            self._finish(ctx)
            elapsed_ns = time.monotonic_ns() - started
            if elapsed_ns >= ops.slowlog_ns and not entry.skip_slowlog:
                # served: into the slowlog now, as the command it was
                # (Redis logs a blocked command when it is served)
                self.slowlog_push(client, argv, elapsed_ns // 1000)
            if tracking is not None:
                # its keys are remembered (a read) and the messages for it
                # follow its reply
                outer, tracking.current = tracking.current, client
                tracking.remember(entry.spec, argv)
                tail = tracking.finish(client, entry.name)
                return Replies([reply, *tail]) if tail else reply
            return reply
        started = now_ns()
        ctx = Ctx.new(self, client, argv, entry, bool(flags & CALL_BLOCK))
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
            elapsed = entry.stop(started)
        if elapsed >= self._watch_ns:
            self._slow_call(client, entry, argv, elapsed, reply)
        if reply.__class__ is Wait:
            reply = self._block(ctx, reply)
        if ctx.changes or ctx.effects:
            self._finish(ctx)
        if monitor == MONITOR_AFTER:
            if client.monitor and not self._executing:
                # A monitor sees its own command after that command's reply
                # (none when the reply is its last: QUIT).
                line = self._monitor_line(client, client.db, argv, False)
                for other in list(ops.monitors):
                    if other is not client:
                        other.send(line)
                if not client.close_after_reply:
                    items = reply.items if reply.__class__ is Replies else [reply]
                    reply = Replies([*items, line])
            else:
                self.feed_monitors(client, client.db, argv)
        if tracking is not None:
            tracking.remember(entry.spec, argv)
            tail = tracking.finish(client, entry.name)
    finally:
        if tracking is not None:
            if flags & CALL_RETRY:
                tracking.current = outer
            else:
                tracking.current, tracking.pending = outer, outer_pending
    if tail:
        if reply is BLOCKED or reply is PARKED:
            for message in tail:
                client.send(message)
        else:
            items = reply.items if reply.__class__ is Replies else [reply]
            reply = Replies([*items, *tail])
    if flags & CALL_SCRIPT and self.tracking.current is not None:
        self.tracking.remember(entry.spec, argv)  # the script's caller tracks keys
    if flags & CALL_QUEUED and client.tracking is not None:  # (perhaps turned on by this EXEC)
        self.tracking.remember(entry.spec, argv, client)
    if hotkeys is not None and hotkeys.active:
        self._hotkeys_record(hotkeys, client, entry, argv, reply, hot_started)
    if flags & CALL_SERVE and self._ready and not self._executing:
        self.serve_ready()
    return reply


def _failed(self: EngineCore, entry: Entry, argv: list[bytes], exc: Exception) -> ErrorReply:
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


def _slow_call(self: EngineCore, client: ClientState, entry: Entry, argv: list[bytes],
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



# -- the written-out loop (see the module's docstring) -------------------------
def execute_many(self: EngineCore, client: ClientState, batch: list[list[bytes]], i: int,
                 replies: list[Reply]) -> tuple[int, Reply]:
    """Run ``batch[i:]`` in order, each as :meth:`execute` would, while
    each takes the fast dispatch and its reply needs nothing of the
    network layer; their replies are appended to ``replies``.

    Returns ``(j, reply)``: with ``reply`` NOT_RUN, ``batch[j]`` was
    not run (``j == len(batch)``: all were) because it takes the
    checked path or a run (it has a run handler); else ``batch[j-1]``
    ran and ``reply`` is its reply, not appended, for the caller to look
    at as at what execute() returns: BLOCKED, PARKED, or a reply after which the
    client is muted (CLIENT REPLY), speaks another protocol (HELLO),
    closes (QUIT, its own CLIENT KILL), is blocked, or that is several
    (``Replies``).  A connection closes during a command only that way,
    through ``close_after_reply``.

    This is :func:`call` with CALL_FAST written out, one loop for the
    batch, and the fast dispatch's rule of :meth:`execute` (admission
    settled: :mod:`tidelog.engine.admission`) for each command.  Why not
    execute() per command: the loop is the per-command floor (bench/run.py's
    ``ping-p128-c1``), and two Python calls per command (execute, call) were
    a sixth of it.  The two must stay alike (the exceptions go through
    :meth:`_failed`); tests/unit/test_call_paths.py runs every command of
    the table both ways.  Cost: O(1) per command, with the handler's."""
    n = len(batch)
    proto = client.protocol
    cluster = self.slot_router is not None  # a command with keys takes execute()'s slot check
    spare: Ctx | None = None  # the context the loop's commands share (below)
    while i < n:
        argv = batch[i]
        entry = client.dispatch.get(argv[0])
        if entry is None or entry.run is not None or client.multi is not None or \
                client.pubsub is not None or client.no_touch or (cluster and entry.keyed):
            return i, NOT_RUN
        arity = entry.arity
        argc = len(argv)
        if argc != arity and (arity > 0 or argc < -arity):
            return i, NOT_RUN
        i += 1
        client.last_command = entry.name
        # call(client, entry, argv, CALL_FAST), written out (see above).
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
                client.blocked is not None or reply is PARKED:
            return i, reply
        replies.append(reply)
    return i, NOT_RUN


def _error(self: EngineCore, message: bytes) -> ErrorReply:
    """An error reply, counted (INFO stats and errorstats)."""
    self.stats["total_error_replies"] += 1
    code = message.split(b" ", 1)[0].decode("latin-1")
    counts = self.error_counts
    if code in counts:
        counts[code] += 1
    elif len(counts) < ERRORSTATS_MAX:
        counts[code] = 1
    return ErrorReply(message)
