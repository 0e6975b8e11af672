"""CONFIG SET appendonly on a running server: turning the AOF on and off."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from .aof import Aof

if TYPE_CHECKING:
    pass

log = logging.getLogger("tidelog")


def set_appendonly(durability: Any, on: bool) -> None:
    """CONFIG SET appendonly on a running server, for the engine's
    :class:`~tidelog.persistence.durability.Durability` (its ``aof``, the
    event loop it runs on, and ``install_gate(writer)``, which makes
    ``writer``, or None, the server's write gate).

    ``yes`` while off: a writer that appends from now on, and a rewrite that
    writes the base from the dataset (:meth:`Aof.open_with_rewrite`); if that
    rewrite fails the AOF is turned off again, as Redis does.  ``no`` while on:
    flush and fsync, stop appending, close the files; the directory stays.
    Raises OSError when the AOF cannot be started."""
    engine = durability.engine
    current = durability.aof
    if on and current is None:
        writer = Aof(engine)

        def done(ok: bool) -> None:
            if not ok and durability.aof is writer:
                log.warning("The first AOF rewrite failed: turning the AOF off")
                writer.close()
                durability.aof = None
                engine.config.set("appendonly", "no")
                durability.install_gate(None)

        durability.aof = writer  # wired to the snapshots before it may fork
        try:
            writer.open_with_rewrite(done)
        except OSError:
            durability.aof = None
            writer.close()
            raise
        writer.attach(durability.loop)
        durability.install_gate(writer)
        log.info("AOF enabled: writing the base file in the background")
    elif not on and current is not None:
        current.close()
        durability.aof = None
        durability.install_gate(None)
        log.info("AOF disabled: the files are closed")
