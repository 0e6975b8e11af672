"""Effects: what a write command changed, in Redis's propagation forms.

Each command's (or transaction's) effects go to every listener in
``effect_listeners`` (the AOF, replicas) as one unit; several effects of
one command go out wrapped in MULTI/EXEC.  ``dirty`` counts the changes.
"""

from __future__ import annotations

import logging

from ..commands.contract import (
    Ctx,
    Effect,
)
from .base import EngineCore

log = logging.getLogger("tidelog")


def _finish(self: EngineCore, ctx: Ctx) -> None:
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
        ctx.client.woff = self.replication.offset


def emit(self: EngineCore, effects: list[tuple[int, Effect]]) -> None:
    """Hand effects to the listeners; inside EXEC, gather them first so
    the transaction goes out as one MULTI ... EXEC unit."""
    if self._tx_effects is not None:
        self._tx_effects.extend(effects)
        return
    for listener in self.effect_listeners:
        listener(effects)
