"""Parking: a command that finishes later, its keys held meanwhile.

A chunked MIGRATE (:mod:`tidelog.commands.keys.migrate_chunked`) moves a big
stream over many event-loop turns.  Its handler validates, then calls
:meth:`Engine.park`: the keys it moves are *in flight* (``moving``), the
move goes to :attr:`Engine.mover` (the network layer's; the bare engine's
:class:`NoMover` cannot move anything, so the handler keeps to DUMP), and
the client gets :data:`~tidelog.engine.outcomes.PARKED`: its session answers
nothing and runs nothing more of its until :meth:`Engine.unpark` sends the
reply (``client.send``) once the move ended.

While a key is in flight:

* a write to it is refused in admission with ``-TRYAGAIN`` (errors.py), in
  cluster mode and outside it; the fast dispatch keeps no write command
  with keys meanwhile, so every such write comes to admission;
* reads are served from the source;
* it is neither expired by the cron nor deleted by lazy expiry
  (``Database.moving``; a key past its deadline reads as missing
  meanwhile), and expires on whichever node holds it after the move.
"""

from __future__ import annotations

from typing import Any

from .. import errors
from ..commands import table
from ..commands.contract import ClientState, Ctx, Reply
from ..commands.key_specs import command_key_positions
from .base import EngineCore
from .entry import Entry
from .outcomes import PARKED


class NoMover:
    """The bare engine's mover: it has no network, so nothing is parked."""

    available = False

    def start(self, move: Any) -> None:  # pragma: no cover - never called: not available
        raise RuntimeError("no mover in a bare engine")


def park(self: EngineCore, ctx: Ctx, keys: list[bytes], move: Any) -> Any:
    """Hold ``keys`` of the context's database in flight, start ``move``
    on the mover, and answer :data:`PARKED`.  O(keys)."""
    db = ctx.db
    for key in keys:
        db.moving.add(key)
        self.moving[(db.index, key)] = move
    self._forget_dispatch()  # writes with keys leave the fast dispatch meanwhile
    ctx.client.parked = move
    self.mover.start(move)
    return PARKED


def release(self: EngineCore, db_index: int, keys: list[bytes]) -> None:
    """The move of ``keys`` ended (done or failed): they are no longer in
    flight (writes and expiry apply again).  O(keys)."""
    db = self.dbs[db_index]
    for key in keys:
        db.moving.discard(key)
        self.moving.pop((db_index, key), None)


def unpark(self: EngineCore, ctx: Ctx, reply: Reply, error: bytes | None = None) -> None:
    """A parked command's end: its effects (``ctx``: the deletions of the
    moved keys) go out, blocked clients of the keys it changed are served,
    and the client is sent ``reply`` (``error``: an error reply instead,
    counted).  A client that closed meanwhile gets nothing.  O(1) beside
    the effects."""
    if ctx.changes or ctx.effects:
        self._finish(ctx)
    if self._ready and not self._executing:
        self.serve_ready()
    client = ctx.client
    client.parked = None
    if error is not None:
        reply = self._error(error)
    if client.id in self.clients:
        client.send(reply)


def moving_refusal(self: EngineCore, client: ClientState, entry: Entry,
                   argv: list[bytes]) -> bytes | None:
    """TRYAGAIN when ``argv`` writes a key in flight (EXEC: when one of
    its queued commands does), else None.  Only called while some key is
    in flight.  O(keys of the command)."""
    moving = self.dbs[client.db].moving
    if not moving:
        return None
    if entry.name == "exec":
        if client.multi is None:
            return None
        calls = [(table.lookup(queued), queued) for queued in client.multi]
    elif entry.is_write and entry.keyed:
        calls = [(entry.spec, argv)]
    else:
        return None
    for spec, call_argv in calls:
        if spec is None or "write" not in spec.flags:
            continue
        for at, _ in command_key_positions(spec, call_argv):
            if call_argv[at] in moving:
                return errors.TRYAGAIN
    return None

