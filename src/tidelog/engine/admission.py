"""Admission: whether a command may run now, decided before it runs.

:func:`admit` is the one place that decides it: the ordered refusals Redis's
``processCommand`` makes before ``call`` (authentication and ACL, the
cluster's slot check to come, a replica's stale data, memory, the write
guards, RESP2's subscribed mode, MONITOR, CLIENT PAUSE, the MULTI queue),
and the ones a script's command meets (``scriptCall``), an EXEC's queued
command and a blocked command served again.  The helpers it needs (a
script's flags standing for its command's, a transaction's for EXEC's) are
here too.

# When admission is settled (the fast path's one rule)

A client's command may skip :func:`admit` only when admission is settled
for it: :func:`admission_settled`, ``client.dispatch is engine._dispatch``.
``refresh_access`` gives a client the engine's dispatch cache only when
nothing about the client itself can refuse a command (authenticated or no
password needed, a user without restrictions, no CLIENT TRACKING), and
:func:`~tidelog.engine.dispatch._resolve` puts a command in the cache only
when no guard in force could refuse it (no CLIENT PAUSE, MONITOR or
recording HOTKEYS session; no stale guard; no write under a write guard;
nothing that grows the data under maxmemory; no script runner under
either).  Every change to those conditions empties the cache or moves the
client off it.  So an entry found in ``client.dispatch`` (the fast path's
one lookup) means admission is settled for that client and that command,
but for the three per-call conditions the fast paths test themselves: no
MULTI open, no subscriptions, the arity.  A client not settled holds
``NO_DISPATCH``, an empty mapping: every one of its commands comes here.
Monitors, HOTKEYS and tracking need the call's own work too
(``call.CALL_NETWORK``); a settled client's command cannot have any of
them, which is why the fast paths call with ``call.CALL_FAST``.
"""
from __future__ import annotations

import logging
from collections.abc import Callable

from .. import errors
from ..acl.selectors import ACL_OK
from ..acl.users import denial_message
from ..commands import table
from ..commands.contract import ClientState, Reply
from ..errors import CommandError
from ..resp.replies import QUEUED, ErrorReply
from ..scripting.scripts import parse_shebang
from .base import EngineCore
from .entry import SCRIPT_RUNNERS, Entry
from .outcomes import ABORTED, POSTPONED, _Aborted
from .slot_router import SlotRouter

log = logging.getLogger("tidelog")


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


# What a RESP2 client with subscriptions may still send (Redis's subscribed mode).
_SUBSCRIBED_MODE = frozenset({"subscribe", "psubscribe", "ssubscribe", "unsubscribe",
                              "punsubscribe", "sunsubscribe", "ping", "quit", "reset"})


# ClientState.cluster_asking: ASKING sent (the next command may use an
# importing slot), then spent by that command, gone at the next one.
ASKING_SET = 1
ASKING_SPENT = 2


# How a command comes to admit(): which of the refusals apply.
FROM_NETWORK = 0  # a client's command: every refusal, in processCommand's order
FROM_SCRIPT = 1   # redis.call() in a script: scriptCall's refusals, Redis's script errors
FROM_EXEC = 2     # a command EXEC runs: the ACL again (the rules may have changed)
FROM_RETRY = 3    # a blocked command served again (Redis 7.2+): the ACL again


def admission_settled(self: EngineCore, client: ClientState) -> bool:
    """Whether the client's commands may skip :func:`admit`: the rule in
    this module's docstring.  O(1)."""
    return client.dispatch is self._dispatch


def admit(self: EngineCore, client: ClientState, entry: Entry, argv: list[bytes],
          how: int = FROM_NETWORK, read_only: bool = False) -> Reply | None:
    """None when the resolved command may run now; else what the client
    gets instead: a refusal (an error reply, counted as a rejected call),
    :data:`POSTPONED` (CLIENT PAUSE holds it back) or QUEUED (MULTI).
    ``how`` says where the command comes from (FROM_*); ``read_only``: a
    script's command whose script may not write.  Cost: O(1) for a
    settled client, plus what a refusal's check reads (the user's rules,
    the heap's size under maxmemory, EXEC's queue under a guard)."""
    ops = self.ops
    if how == FROM_SCRIPT:
        spec = entry.spec
        if "noscript" in spec.flags and not self.disable_deny_scripts:
            return self._refused_in_script(entry, errors.SCRIPT_NOT_ALLOWED)
        denial = self._acl_refusal(client, spec, argv)
        if denial is not None:
            result, at = denial
            job = self.scripts.current  # ACL LOG describes the client running the script
            self.acl_denied(job.client if job is not None else client, result, spec, argv,
                            at, b"lua")
            return self._refused_in_script(entry, errors.ACL_SCRIPT_PREFIX + denial_message(
                result, client.user, spec, argv[at], False))
    elif client.dispatch is not self._dispatch:  # not settled (admission_settled): ACL
        if how == FROM_EXEC:
            # Refused, it is logged and answered in EXEC's array, and the
            # other queued commands run.
            denial = self._acl_refusal(client, entry.spec, argv)
            if denial is None:
                return None
            result, at = denial
            self.acl_denied(client, result, entry.spec, argv, at, b"multi")
            return self._error(errors.ACL_EXEC_CHANGED % errors.ACL_EXEC_REASONS[result])
        if not client.authenticated and not entry.no_auth and self.acl.auth_required():
            return self._reject(client, entry, errors.NOAUTH)
        denial = self._acl_refusal(client, entry.spec, argv)
        if denial is not None:
            result, at = denial
            self.acl_denied(client, result, entry.spec, argv, at,
                            b"multi" if client.multi is not None else b"toplevel")
            return self._reject(client, entry, b"NOPERM " + denial_message(
                result, client.user, entry.spec, argv[at], False))
    if how == FROM_EXEC or how == FROM_RETRY:
        return None
    # Cluster mode's slot check: after the ACL and before memory, as Redis's
    # processCommand orders them; not for the AOF loader nor the primary's
    # link (a script's commands: scriptCall's own, below).
    router = self.slot_router
    if router is not None and how == FROM_NETWORK and client.kind in _NETWORK_KINDS:
        redirect = self._slot_refusal(router, client, entry, argv)
        if redirect is not None:
            return redirect
    if self.moving:  # a key in flight (a chunked MIGRATE) takes no write: TRYAGAIN
        refusal = self.moving_refusal(client, entry, argv)
        if refusal is not None:
            if how == FROM_SCRIPT:
                return self._refused_in_script(entry, refusal)
            if entry.name == "exec":  # as a refused EXEC in cluster mode: discarded
                entry.rejected += 1
                client.multi = None
                client.multi_error = False
                self.unwatch_all(client)
                return self._error(refusal)
            return self._reject(client, entry, refusal)
    if how == FROM_SCRIPT:
        spec = entry.spec
        if read_only and entry.may_write:
            # what may replicate (PUBLISH, PFCOUNT) counts as a write, as in Redis
            return self._refused_in_script(entry, errors.SCRIPT_READ_ONLY)
        if spec.name in ("xread", "xreadgroup"):
            for arg in argv[1:]:
                word = arg.lower()
                if word == b"streams":
                    break
                if word == b"block":
                    return self._refused_in_script(
                        entry, errors.SCRIPT_BLOCK_OPTION % spec.name.encode())
        if entry.deny_oom and ops.maxmemory and not self._script_allows_oom() \
                and not self.fits_in_memory():
            return self._refused_in_script(entry, errors.OOM)
        if entry.is_write and ops.write_guard is not None:  # a read-only replica ...
            refusal = ops.write_guard(client)
            if refusal is not None:
                return self._refused_in_script(entry, refusal)
        if router is not None and entry.keyed:  # last, as Redis's scriptVerifyClusterState
            job = self.scripts.current
            caller = job.client if job is not None else client
            if caller.kind in _NETWORK_KINDS:
                script = job.script if job is not None else None
                cross_slot = script is None or (not script.shebang and not script.function) \
                    or b"allow-cross-slot-keys" in script.flags
                refusal = router.check_script_call(caller, spec, argv, self.dbs[client.db],
                                                   cross_slot)
                if refusal is not None:
                    return self._refused_in_script(entry, refusal)
        return None
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
    if ops.pause_mode is not None and not client.monitor and self._held(client, entry, argv):
        client.postponed = True
        ops.postponed.append(client)
        return POSTPONED
    if client.multi is not None:
        if entry.refused_in_multi:
            client.multi_error = True
            entry.rejected += 1
            return self._error(errors.NOT_IN_MULTI)
        if entry.queued_in_multi:
            client.multi.append(argv)
            return QUEUED
    return None


def _slot_refusal(self: EngineCore, router: SlotRouter, client: ClientState, entry: Entry,
                  argv: list[bytes]) -> ErrorReply | None:
    """The redirection or refusal of a client's command in cluster mode
    (-MOVED, -ASK, -CROSSSLOT, -TRYAGAIN, -CLUSTERDOWN), or None.  A refused
    EXEC discards its transaction and answers the error itself (not
    EXECABORT), as Redis does.  ASKING's flag is spent by the command that
    follows it (in a transaction: by EXEC).  Cost: O(1) for a command without
    keys, else the router's (O(keys))."""
    asking = client.cluster_asking
    if asking == ASKING_SPENT:  # by the previous command: gone now
        client.cluster_asking = asking = 0
        self.refresh_access(client)
    refusal = None
    if entry.keyed:
        write = None
        if entry.name in SCRIPT_RUNNERS:  # a shebang's flags say (scriptFlagsToCmdFlags)
            flags = self._script_flags(entry.name, argv)
            if flags is not None:
                write = b"no-writes" not in flags
        refusal = router.check(client, entry.spec, argv, self.dbs[client.db], write)
    if asking == ASKING_SET and entry.name not in ("asking", "multi") and \
            (client.multi is None or entry.name == "exec"):
        # this command spends it; it lasts while it runs (a script's
        # commands see it, as in Redis)
        client.cluster_asking = ASKING_SPENT
    if refusal is None:
        return None
    entry.rejected += 1
    if entry.name == "exec":
        client.multi = None
        client.multi_error = False
        self.unwatch_all(client)
        return self._error(refusal)
    if client.multi is not None:
        client.multi_error = True
    return self._error(refusal)


def _acl_refusal(client: ClientState, spec: table.CommandSpec,
                 argv: list[bytes]) -> tuple[int, int] | None:
    """Why the client's user may not run ``argv`` (the reason and the
    argument at fault), or None when it may."""
    user = client.user
    if user is None or user.unrestricted:
        return None
    result, at = user.check(spec, argv)
    return None if result == ACL_OK else (result, at)


def _held(self: EngineCore, client: ClientState, entry: Entry, argv: list[bytes]) -> bool:
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


def _script_allows_oom(self: EngineCore) -> bool:
    """The running script or function is flagged allow-oom: its commands
    run whatever the memory in use, as in Redis."""
    job = self.scripts.current
    return job is not None and b"allow-oom" in job.script.flags


def _script_reads_only(self: EngineCore, name: str, argv: list[bytes]) -> bool:
    """EVAL, EVALSHA or FCALL of a script or function flagged no-writes
    (a shebang's flags, a function's): as in Redis, CLIENT PAUSE WRITE
    lets it run.  O(1) but for EVAL's shebang line."""
    flags = self._script_flags(name, argv)
    return flags is not None and b"no-writes" in flags


def _script_flags(self: EngineCore, name: str, argv: list[bytes]) -> frozenset[bytes] | None:
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


def set_write_guard(self: EngineCore, guard: Callable[[ClientState], bytes | None] | None) -> None:
    """``guard(client)``: the error refusing a write command now, or None
    (a read-only replica's -READONLY, min-replicas-to-write's
    -NOREPLICAS).  While a guard is set, the fast dispatch holds no write
    command, so every write takes :meth:`_execute_checked`, which asks
    it: the check costs reads nothing, and nothing at all without a guard."""
    self.ops.write_guard = guard
    self._forget_dispatch()


def set_stale_guard(self: EngineCore, guard: Callable[[ClientState], bytes | None] | None) -> None:
    """``guard(client)``: the error refusing any command not flagged
    ``stale`` now, or None (-MASTERDOWN).  While set, nothing is in the
    fast dispatch (it is set only while a replica's link is down)."""
    self.ops.stale_guard = guard
    self._forget_dispatch()


def cross_protocol(self: EngineCore) -> _Aborted:
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


def _queued_flags(self: EngineCore, client: ClientState) -> tuple[bool, bool, bool]:
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


def _reject(self: EngineCore, client: ClientState, entry: Entry, message: bytes) -> ErrorReply:
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


def _refused_in_script(self: EngineCore, entry: Entry, message: bytes) -> ErrorReply:
    """A script's command refused before it ran: counted as a rejected
    call of that command and in the error statistics, as Redis counts it
    (the script passing the error on does not count it again)."""
    entry.rejected += 1
    return self._error(message)
