"""Calling: running a resolved command for a client.

The handler's call, its statistics (INFO commandstats, latencystats), the
slowlog and LATENCY samples, a failure turned into its error reply, a
:class:`~tidelog.commands.contract.Wait` turned into blocking, the effects
handed on, monitors, tracking and HOTKEYS; the entry points the network
layer uses (``execute``, ``execute_many``, ``execute_run``) and the one
scripts use (``script_command``).
"""

from __future__ import annotations

import logging
from sys import getrefcount
from typing import Any

from .. import errors
from ..callstats import now_ns
from ..commands import table
from ..commands.acl_users import denial_message
from ..commands.contract import (
    ClientState,
    Ctx,
    Reply,
    Wait,
)
from ..errors import CommandError, CountedError
from ..resp.replies import QUEUED, ErrorReply, Replies
from .admission import _NETWORK_KINDS, _SUBSCRIBED_MODE, CROSS_PROTOCOL_NAMES
from .base import EngineCore
from .entry import MONITOR_AFTER, MONITOR_BEFORE, SCRIPT_RUNNERS, Entry
from .outcomes import BLOCKED, NOT_RUN, POSTPONED

log = logging.getLogger("tidelog")


# How many different error codes INFO errorstats tracks (as Redis: a client
# cannot grow the table without bound; later codes are not added).
ERRORSTATS_MAX = 128


# -- executing ------------------------------------------------------------------
def execute(self: EngineCore, client: ClientState, argv: list[bytes]) -> Reply:
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


def execute_many(self: EngineCore, client: ClientState, batch: list[list[bytes]], i: int,
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


def execute_run(self: EngineCore, client: ClientState, run: list[list[bytes]]) -> list[Reply]:
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


def _execute_checked(self: EngineCore, client: ClientState, argv: list[bytes]) -> Reply:
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


def _call_tracking(self: EngineCore, client: ClientState, entry: Entry, argv: list[bytes]) -> Reply:
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


def _call(self: EngineCore, client: ClientState, entry: Entry, argv: list[bytes],
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


def _call_monitored(self: EngineCore, client: ClientState, entry: Entry, argv: list[bytes],
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


def script_command(self: EngineCore, client: ClientState, argv: list[bytes],
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


def _refused_in_script(self: EngineCore, spec: Any, message: bytes) -> ErrorReply:
    """A script's command refused before it ran: counted as a rejected
    call of that command and in the error statistics, as Redis counts it
    (the script passing the error on does not count it again)."""
    self._entry(spec).rejected += 1
    return self._error(message)


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
