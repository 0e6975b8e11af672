"""Effects: what a write command changed, in Redis's propagation forms.

Each command's (or transaction's) effects go to every listener in
``effect_listeners`` (the AOF, replicas) as one unit; several effects of
one command go out wrapped in MULTI/EXEC.  ``dirty`` counts the changes.
"""

from __future__ import annotations

import logging

from ..commands.contract import ClientState, Ctx, Effect
from ..commands.effects import as_unit
from .base import EngineCore

log = logging.getLogger("tidelog")

__all__ = ["as_unit"]  # (the one wrapping, commands.effects', used here and by callers)


def _finish(self: EngineCore, ctx: Ctx) -> None:
    """After a call: its changes counted in ``dirty``, its effects handed
    on (a write that changed data and declared none is a bug, counted)."""
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
        if self._tx_effects is None:
            # One command, several effects (XREADGROUP's XCLAIMs): Redis
            # wraps them in MULTI/EXEC so they apply atomically.
            batch = as_unit(batch)
        self.emit(batch)
        ctx.client.woff = self.replication.offset


def emit(self: EngineCore, effects: list[tuple[int, Effect]]) -> None:
    """Hand effects to the listeners; inside EXEC, gather them first so
    the transaction goes out as one MULTI ... EXEC unit."""
    if self._tx_effects is not None:
        self._tx_effects.extend(effects)
        return
    for listener in self.effect_listeners:
        listener(effects)


def begin_unit(self: EngineCore) -> tuple[bool, bool]:
    """An EXEC or a script starts: the effects of the commands it runs are
    gathered, to go out as one unit (unless an enclosing one gathers them
    already: a script run by EXEC), and no blocked client is served until
    it ends (:meth:`in_transaction`).  Returns what :func:`end_unit` needs."""
    owned = self._tx_effects is None
    if owned:
        self._tx_effects = []
    executing, self._executing = self._executing, True
    return owned, executing


def end_unit(self: EngineCore, began: tuple[bool, bool]) -> list[tuple[int, Effect]] | None:
    """The EXEC or script :func:`begin_unit` began has ended: the effects
    it gathered (None when an enclosing unit gathers them), for
    :func:`emit_unit`."""
    owned, self._executing = began
    if not owned:
        return None
    effects, self._tx_effects = self._tx_effects, None
    return effects


def emit_unit(self: EngineCore, effects: list[tuple[int, Effect]],
              client: ClientState | None = None) -> None:
    """Hand a unit's effects on, several wrapped in MULTI ... EXEC; the
    client that ran it (EXEC's) then waits for the replicas up to here
    (WAIT's offset)."""
    if effects:
        self.emit(as_unit(effects))
        if client is not None:
            client.woff = self.replication.offset
