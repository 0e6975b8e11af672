"""Entry and Waiter: one command as this engine runs it (the table's spec
read once, with its statistics), and a client parked on keys by a handler's
:class:`~tidelog.commands.contract.Wait`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..callstats import CallStats
from ..commands import table
from ..commands.contract import ClientState, Wait
from ..commands.key_specs import key_specs

# The commands that run a script or function: under maxmemory or a write
# guard their scripts' flags decide (Engine._execute_checked), so they leave
# the fast dispatch.
SCRIPT_RUNNERS = frozenset({"eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"})


# Commands that run even while a MULTI is open (everything else is queued).
_MULTI_CONTROL = frozenset({"exec", "discard", "multi", "watch", "quit", "reset"})


# MONITOR: when a command is shown to monitors (Entry.monitor).  Admin
# commands and those flagged skip_monitor are not shown; scripts are shown
# before the commands they run (Redis 7's order), everything else after it ran.
MONITOR_SKIP, MONITOR_AFTER, MONITOR_BEFORE = 0, 1, 2


_MONITOR_BEFORE = frozenset({"eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"})


# What a monitor (a replica, to Redis) may not run: commands that read,
# write or may replicate.
_KEYSPACE_FLAGS = frozenset({"readonly", "write", "may_replicate"})


_MAY_REPLICATE = frozenset({"publish", "spublish", "eval", "evalsha", "fcall", "pfcount"})


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
                 "monitor", "keyspace", "fast", "skip_slowlog", "may_write", "keyed")

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
        # cluster mode checks its slot (Redis: key specs, a key finder, EXEC)
        self.keyed = bool(key_specs(spec)) or spec.key_finder is not None or \
            spec.name == "exec"


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
    ready_key: bytes = b""  # serve_ready: the key whose readiness it is served on
