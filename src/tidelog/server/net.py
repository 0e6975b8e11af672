"""The network shell: the server that listens, serves connections and runs
the periodic cron, on an asyncio (uvloop) loop.

:class:`Server` puts the pieces together, one concept a module:

* :mod:`.listeners`: the listening sockets (TCP, TLS, the Unix socket),
  bound at start and rebound by CONFIG SET;
* :mod:`.connection`: one asyncio protocol per client around its sans-IO
  :mod:`.session` (bytes in, the commands run, the replies out);
* :mod:`.output`: a connection's writes (the write gate, flow control, the
  outbox, output buffer limits);
* :mod:`.busy`: serving clients from a busy script's count hook;
* :mod:`.mover`: a chunked MIGRATE's moves, one task each.

The server itself keeps the set of connections, the write gate (the AOF
with ``appendfsync always``), the last Pub/Sub message encoded, the cron
(``hz`` times a second: the engine's housekeeping and the ``timeout`` of
idle clients) and stopping.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any

from .. import tls
from ..clock import next_beat
from ..config import Config
from ..engine import Engine
from ..persistence.durability import attach
from .busy import BusyLoop
from .connection import Connection
from .listeners import ListenError, Listeners
from .mover import Mover

__all__ = ["Connection", "ListenError", "Server"]

log = logging.getLogger("tidelog")


class Server:
    """Listening sockets, the connections, and the periodic cron."""

    def __init__(self, engine: Engine, any_free_port: bool = False) -> None:
        """``any_free_port``: with ``port 0``, listen on a free port chosen by
        the OS (embedding, tests) instead of not listening on TCP (Redis's
        meaning of ``port 0``)."""
        self.engine = engine
        self.config: Config = engine.config
        self.connections: set[Connection] = set()
        self.listeners = Listeners(self.config, lambda: Connection(self), any_free_port)
        # While a script is busy: what its count hook polls.
        self.busy = BusyLoop(self)
        self.mover = Mover(self.config)
        self._cron_task: asyncio.Task[None] | None = None
        self.stopped: asyncio.Event | None = None
        # Something with must_wait() / after_flush(fn) that holds replies
        # back until their writes are durable (the AOF), or None.
        self.write_gate: Any = None
        # The last Pub/Sub message encoded: (push, protocol, bytes).
        self.last_push: tuple[Any, int, bytes] = (None, 0, b"")
        self.loop: asyncio.AbstractEventLoop | None = None  # set by start

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.loop = loop
        self.stopped = asyncio.Event()
        self.engine.schedule = lambda delay, fn: loop.call_later(delay, fn)
        self.engine.shutdown_hook = self.request_stop
        self.engine.scripts.busy_poll = self.busy.poll
        self.engine.scripts.busy_end = self.busy.end
        # CONFIG SET appendonly starts the AOF on this loop; it gates replies.
        attach(self.engine).bind(loop, self._install_write_gate)
        self.engine.listen_hook = self.listeners.reconfigure
        self.engine.migrate_sockets.tls_wrap = self._migrate_tls
        self.engine.mover = self.mover  # a chunked MIGRATE's moves (server/mover.py)
        await self.listeners.start(loop)
        self._cron_task = loop.create_task(self._cron())

    @property
    def port(self) -> int:
        return self.listeners.port

    def _install_write_gate(self, writer: Any) -> None:
        """The AOF started (a writer) or stopped (None) at run time."""
        self.write_gate = writer

    async def _cron(self) -> None:
        while True:
            hz = max(1, min(500, self.config["hz"]))
            loop = asyncio.get_running_loop()
            await asyncio.sleep(next_beat(loop.time(), 1 / hz) - loop.time())
            try:
                self.engine.cron()
                self._close_idle_clients()
            except Exception:  # a bug: keep serving, but say so
                log.exception("cron failed")
                self.engine.internal_errors += 1

    def _close_idle_clients(self) -> None:
        timeout = self.config["timeout"]
        if not timeout:
            return
        now = self.engine.clock.monotonic()
        for conn in list(self.connections):
            client = conn.client
            if client is not None and client.blocked is None and client.parked is None \
                    and client.kind == "normal" \
                    and client.pubsub is None and now - client.last_interaction > timeout:
                conn.close()

    def request_stop(self) -> None:
        if self.stopped is not None:
            self.stopped.set()

    async def serve_until_stopped(self) -> None:
        assert self.stopped is not None
        await self.stopped.wait()
        await self.close()

    def _migrate_tls(self, sock: socket.socket) -> socket.socket:
        """MIGRATE's connection with ``tls-cluster yes``: TLS with the
        ``tls-*`` client settings (the handshake within the socket's
        timeout); OSError when it cannot be made."""
        try:
            context = tls.client_context(self.config)
        except tls.TlsError as exc:
            raise OSError(str(exc)) from None
        return context.wrap_socket(sock)

    async def close(self) -> None:
        self.engine.migrate_sockets.close_all()
        for task in list(self.mover.tasks):
            task.cancel()
        self.listeners.close()
        for conn in list(self.connections):
            conn.close()
        await self.listeners.wait_closed()
        if self._cron_task is not None:
            self._cron_task.cancel()
