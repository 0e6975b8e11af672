"""Admission: whether a command may run now, decided before it runs.

The ordered refusals Redis's ``processCommand`` makes before ``call``:
authentication and ACL (-NOAUTH, -NOPERM, logged in ACL LOG), a replica's
stale data (-MASTERDOWN), memory (-OOM), the write guards (-READONLY,
-NOREPLICAS), RESP2's subscribed mode, MONITOR, CLIENT PAUSE and the MULTI
queue; and the helpers they need (a script's flags standing for its
command's, a transaction's flags standing for EXEC's).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from .. import errors
from ..commands import table
from ..commands.acl_users import (
    ACL_OK,
    denial_message,
)
from ..commands.contract import (
    ClientState,
    Reply,
)
from ..errors import CommandError
from ..resp.replies import ErrorReply
from ..scripting.scripts import parse_shebang
from .base import EngineCore
from .entry import Entry
from .outcomes import ABORTED, _Aborted

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


def _access(self: EngineCore, client: ClientState, entry: Entry, argv: list[bytes]) -> Reply | None:
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


def _acl_refusal(client: ClientState, spec: table.CommandSpec,
                 argv: list[bytes]) -> tuple[int, int] | None:
    """Why the client's user may not run ``argv`` (the reason and the
    argument at fault), or None when it may."""
    user = client.user
    if user is None or user.unrestricted:
        return None
    result, at = user.check(spec, argv)
    return None if result == ACL_OK else (result, at)


def _recheck(self: EngineCore, client: ClientState, entry: Entry, argv: list[bytes]) -> Reply | None:
    """EXEC: a queued command is checked again, as the user's rules may
    have changed since it was queued; refused, it is logged and answered
    in EXEC's array, and the others run."""
    denial = self._acl_refusal(client, entry.spec, argv)
    if denial is None:
        return None
    result, at = denial
    self.acl_denied(client, result, entry.spec, argv, at, b"multi")
    return self._error(errors.ACL_EXEC_CHANGED % errors.ACL_EXEC_REASONS[result])


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
