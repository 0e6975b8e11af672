"""The output side of a connection: writing replies, and what a client may
leave unread.

:class:`ConnectionOutput` is the base class of
:class:`~.connection.Connection` (a base, not a member, so writing a read's
replies costs no extra call or attribute hop on the hot path).  It holds:

* The write gate: with the AOF's ``appendfsync always``, replies wait until
  the writes of this loop turn are on disk, then go out, in order, from the
  gate's flush callback.
* Flow control: when a client stops reading and our write buffer passes the
  transport's high-water mark, we stop reading from it until it drains.
* The outbox: Pub/Sub messages, MONITOR lines and the replication stream are
  held until the end of the loop turn and written at once, before any reply
  written later.
* Output buffer limits (``client-output-buffer-limit``): after every write,
  a client whose replies not yet written (the transport's buffer plus what
  the write gate holds) pass its class's hard limit, or stay above its soft
  limit longer than the soft seconds, is closed at once, its pending output
  dropped, as Redis closes it.  The class: ``pubsub`` while the client has
  a subscription (RESP2 or RESP3, as Redis), ``slave`` for a replica's
  link, else ``normal``.  A client that never authenticated (and must) may
  leave only 1 KiB unread.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Protocol

from ..commands.session.client import client_info_line
from ..config import Config
from ..engine import ClientState, Engine
from ..resp import encode_into
from ..resp.replies import Push, RawReply
from .session import Session

if TYPE_CHECKING:
    from .listeners import Listeners

log = logging.getLogger("tidelog")

# Reply bytes a client that never authenticated (and must) may leave unread
# before it is closed (Redis's REPLY_BUFFER_SIZE_UNAUTHENTICATED_CLIENT).
UNAUTH_MAX_OUTPUT = 1024


class Host(Protocol):
    """What a connection and the busy loop use of their server
    (:class:`~.net.Server`, which imports them: declared here, the imports
    point one way)."""

    engine: Engine
    config: Config
    connections: set[Any]  # the Connections accepted and not lost yet
    listeners: Listeners
    loop: asyncio.AbstractEventLoop | None
    # Something with must_wait() / after_flush(fn) that holds replies back
    # until their writes are durable (the AOF), or None.
    write_gate: Any
    # The last Pub/Sub message encoded: (push, protocol, bytes).
    last_push: tuple[Any, int, bytes]


class ConnectionOutput:
    """Writes for one connection: the write gate, flow control, the outbox
    and the output buffer limits.  The connection sets the attributes
    declared here."""

    server: Host
    engine: Engine
    stats: Any  # the engine's counters: INFO's bytes written, counted here
    transport: asyncio.Transport | None
    client: ClientState | None
    session: Session | None
    # Pub/Sub messages waiting for the end of this loop turn (see queue_push).
    _outbox: bytearray | None
    # Output bytes the write gate holds back (not yet given to the transport).
    _held: int
    # Monotonic time the soft output limit was first passed; 0: not above it.
    _soft_since: float

    # -- the closing flag ----------------------------------------------------------------
    @property
    def closing(self) -> bool:
        """Nothing more is read or run from this client: its session says so
        (Session.closing is the one flag), or it never had one (refused when
        accepted, or not accepted yet)."""
        session = self.session
        return session is None or session.closing

    def stop_reading(self) -> None:
        """Read and run nothing more from this client (sets Session.closing)."""
        if self.session is not None:
            self.session.closing = True

    # -- flow control (asyncio's callbacks) ----------------------------------------------
    def pause_writing(self) -> None:
        if self.transport is not None:
            self.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.transport is not None and not self.closing:
            self.transport.resume_reading()

    # -- writing -------------------------------------------------------------------------
    def write(self, data: bytearray, close: bool = False) -> None:
        """Send replies, unless the write gate (the AOF with ``appendfsync
        always``) says they must wait until the writes of this loop turn
        are on disk: then they go out, in order, from its flush callback."""
        if close:
            self.stop_reading()
        if self._outbox is not None:  # messages queued before this reply go first
            data = self._outbox + data
            self._outbox = None
        gate = self.server.write_gate
        if gate is not None and gate.must_wait():
            self._held += len(data)

            def flushed() -> None:
                self._held -= len(data)
                self.write_now(data, close)

            gate.after_flush(flushed)
            if not close:
                self._check_output_limit()
        else:
            self.write_now(data, close)

    def write_now(self, data: bytearray, close: bool) -> None:
        """Hand ``data`` to the transport now (and close it after, if asked)."""
        transport = self.transport
        if transport is not None and not transport.is_closing():
            transport.write(data)
            if self.client is not None and self.client.kind == "replica":
                self.stats["net_repl_output_bytes"] += len(data)
            else:
                self.stats["net_output_bytes"] += len(data)
            if close:
                transport.close()
            elif self._held or transport.get_write_buffer_size():
                self._check_output_limit()
            else:
                self._soft_since = 0.0
        elif close and transport is not None:
            transport.close()

    def queue_push(self, push: Push | RawReply) -> None:
        """A Pub/Sub message, or a piece of the replication stream.  PUBLISH
        hands one Push to every receiver (a primary one chunk to every replica): it is
        encoded once per protocol (the server keeps the last encoding), and
        held until the end of this loop turn, so a pipelined burst of
        messages reaches each subscriber in one write, not one system call
        per message (Redis too writes a client's buffer once per turn)."""
        protocol = self.client.protocol  # type: ignore[union-attr]
        last = self.server.last_push
        if last[0] is push and last[1] == protocol:
            data = last[2]
        else:
            out = bytearray()
            encode_into(out, push, protocol)
            data = bytes(out)
            self.server.last_push = (push, protocol, data)
        if self._outbox is None:
            self._outbox = bytearray(data)
            asyncio.get_running_loop().call_soon(self._flush_outbox)
        else:
            self._outbox += data

    def _flush_outbox(self) -> None:
        data = self._outbox
        if data is not None:
            self._outbox = None
            if not self.closing:
                self.write(data)

    # -- output buffer limits ------------------------------------------------------------
    def output_bytes(self) -> int:
        """Reply bytes not written to the socket yet: the transport's buffer
        and what the write gate holds (CLIENT LIST's omem)."""
        transport = self.transport
        if transport is None or transport.is_closing():
            return self._held
        return self._held + transport.get_write_buffer_size()

    def _check_output_limit(self) -> None:
        """Close the client if its pending output passes its class's limit
        (Redis's rules: at or above the hard limit, or at or above the soft
        limit for more than the soft seconds), or passes 1 KiB while it has
        never authenticated and must (Redis 7.4.3+, CVE-2025-21605)."""
        client = self.client
        if client is None or self.closing:
            return
        if not client.ever_authenticated and self.engine.acl.auth_required() and \
                self.output_bytes() > UNAUTH_MAX_OUTPUT:
            self._output_limit_reached(client)
            return
        limits = self.engine.config["client-output-buffer-limit"]
        kind = "slave" if client.kind == "replica" else \
            "pubsub" if client.pubsub is not None else "normal"
        limit = limits[kind]
        if not limit.hard and not limit.soft:
            return
        used = self.output_bytes()
        over = bool(limit.hard) and used >= limit.hard
        if not over and limit.soft and used >= limit.soft:
            now = self.engine.clock.monotonic()
            if not self._soft_since:
                self._soft_since = now
            elif now - self._soft_since > limit.soft_seconds:
                over = True
        elif not over:
            self._soft_since = 0.0
        if over:
            self._output_limit_reached(client)

    def _output_limit_reached(self, client: ClientState) -> None:
        log.warning("Client %s scheduled to be closed ASAP for overcoming of output "
                    "buffer limits.",
                    client_info_line(self.engine, client).decode("utf-8", "replace"))
        self.engine.stats["client_output_buffer_limit_disconnections"] += 1
        self.stop_reading()
        if self.transport is not None:
            self.transport.abort()  # what is pending is dropped, not sent
