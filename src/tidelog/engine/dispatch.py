"""Dispatch: from a command's name to the :class:`Entry` that runs it.

The table lookup with Redis's errors (unknown command, subcommand, arity),
rename-command, and the cache of raw name bytes the fast path reads
(``Engine._dispatch``): only commands that need no admission check beyond
the client's own are put in it.  Runs (pipelined calls one handler takes
together) start from here too (``run_key``).
"""

from __future__ import annotations

from .. import errors
from ..commands import table
from .base import EngineCore
from .entry import SCRIPT_RUNNERS, Entry

# Most raw command names (b"XADD", b"xadd", ...) the dispatch remembers; a
# client sending names in ever new letter cases cannot grow it further.
DISPATCH_CACHE_MAX = 1024


def _forget_dispatch(self: EngineCore) -> None:
    """Empty the dispatch cache, so every command is resolved again under
    the guards now in force.  (The dict is the same object for the
    engine's life: unrestricted clients hold it as ``client.dispatch``.)"""
    self._dispatch.clear()
    self.runnable.clear()


# -- runs ---------------------------------------------------------------------
def run_key(self: EngineCore, argv: list[bytes]) -> tuple[Entry, bytes] | None:
    """What names the run ``argv`` can start or join: its command and key,
    when the command has a run handler (``table.runs``) and argv has the
    form it takes; else None.  Only for names in :attr:`runnable`."""
    entry = self._dispatch.get(argv[0])
    if entry is None:  # the cache is set aside (a pause, a monitor): no runs
        return None
    argc = len(argv)
    arity = entry.arity
    if argc != arity and (arity > 0 or argc < -arity):
        return None
    key = entry.run.key_of(argv)  # type: ignore[union-attr]
    return None if key is None else (entry, key)


def apply_renames(self: EngineCore, renames: list[tuple[str, str]]) -> None:
    """``rename-command old new`` (``""``: the command is gone), in order.
    Raises ValueError naming a command the table does not have."""
    for old, new in renames:
        current = old.encode()
        target = self.names.get(current, current)
        if target is None or target.decode() not in table.COMMANDS:
            raise ValueError(f"No such command in rename-command: {old}")
        self.names[current] = None
        if new:
            self.names[new.encode()] = target
    self._dispatch.clear()
    self.runnable.clear()


def _entry(self: EngineCore, spec: table.CommandSpec) -> Entry:
    entry = self._entries.get(spec.name)
    if entry is None:
        entry = self._entries[spec.name] = Entry(spec)
    return entry


def _resolve(self: EngineCore, argv: list[bytes]) -> Entry:
    """Find the command and check its arity, with Redis's errors."""
    raw_name = argv[0]  # what the dispatch caches the entry under
    if self.names:  # rename-command
        name = argv[0].lower()
        if name in self.names:
            real = self.names[name]
            if real is None:
                raise errors.unknown_command(argv[0], argv[1:])
            argv = [real, *argv[1:]]
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
    if not spec.subcommands and "|" not in spec.name and not self.ops.bypass and \
            len(self._dispatch) < DISPATCH_CACHE_MAX and \
            not (entry.is_write and self.ops.write_guard is not None) and \
            not (entry.deny_oom and self.ops.maxmemory) and self.ops.stale_guard is None and \
            not (entry.name in SCRIPT_RUNNERS and
                 (self.ops.maxmemory or self.ops.write_guard is not None)) and \
            not (entry.keyed and self.slot_router is not None and self.slot_stats.enabled) and \
            not (entry.is_write and entry.keyed and self.moving):
        self._dispatch[raw_name] = entry
        if entry.run is not None:
            self.runnable.add(raw_name)
    return entry
