"""One client's connection: the asyncio protocol around its session.

One :class:`Connection` per client.  Bytes in go to the client's sans-IO
:class:`~.session.Session` (parser, pending commands, muting, HELLO's switch,
the busy-script mode), which runs the complete commands of a read and hands
back their replies in one buffer, written once (:mod:`.output`: the write
gate, flow control, the outbox, output buffer limits).  The connection
keeps the transport and what happens when a client is accepted (maxclients,
protected mode, TCP options) and closed; no command knows about sockets.

* A protocol error replies ``-ERR Protocol error: ...`` and closes only that
  connection.
* While a client is blocked (``XREAD BLOCK``) its further pipelined commands
  wait in the parser; they run once the blocked command is answered.
* Closing: the session owns the flag (``Session.closing``); the connection
  reads it (``closing``) and sets it (``stop_reading``) when it closes
  (CLIENT KILL, output limits, the peer gone).
"""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any, cast

from .. import errors
from ..engine import ClientState
from ..resp import RequestParser
from ..resp.replies import Push, RawReply
from .output import ConnectionOutput, Host
from .session import Session

log = logging.getLogger("tidelog")

_MAX_CLIENTS_REACHED = b"-" + errors.MAX_CLIENTS_REACHED + b"\r\n"

_PROTECTED_MODE = b"-" + errors.PROTECTED_MODE + b"\r\n"


def _keepalive(sock: Any, interval: int) -> None:
    """``tcp-keepalive``: probes after ``interval`` idle seconds, then every
    interval/3 seconds, three of them, as Redis sets its sockets (0: off)."""
    if interval <= 0:
        return
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    if hasattr(socket, "TCP_KEEPIDLE"):  # Linux
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, interval)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, max(1, interval // 3))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, 3)


def _is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 and ::ffff:127.x.y.z, as Redis's connIsLocal."""
    return host.startswith("127.") or host == "::1" or host.startswith("::ffff:127.")


class Connection(ConnectionOutput, asyncio.Protocol):
    """One client: its transport and session, from accept to close (the
    writes: :class:`~.output.ConnectionOutput`)."""

    def __init__(self, server: Host) -> None:
        self.server = server
        self.engine = server.engine
        self.stats = server.engine.stats  # INFO's reads, writes and bytes, counted here
        self.transport: asyncio.Transport | None = None
        self.client: ClientState | None = None
        # The client's protocol state (parser, pending commands, muting, the
        # closing flag): set once the connection is accepted.
        self.session: Session | None = None
        self.tls = False  # on the TLS port
        self._outbox = None
        self._held = 0
        self._soft_since = 0.0

    # -- asyncio callbacks ---------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport = self.transport = cast(asyncio.Transport, transport)
        self.tls = transport.get_extra_info("ssl_object") is not None
        config = self.engine.config
        if len(self.engine.clients) >= config["maxclients"]:
            # (refused: no session, so ``closing`` reads true)
            self.engine.stats["rejected_connections"] += 1
            transport.write(_MAX_CLIENTS_REACHED)
            transport.close()
            return
        sock = transport.get_extra_info("socket")
        addr = laddr = ""
        fd = -1
        if sock is not None:
            fd = sock.fileno()
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                _keepalive(sock, config["tcp-keepalive"])
                peer, local = sock.getpeername(), sock.getsockname()
                addr, laddr = f"{peer[0]}:{peer[1]}", f"{local[0]}:{local[1]}"
                if config["protected-mode"] and self.engine.acl.default.nopass and \
                        not _is_loopback(peer[0]):
                    # No password for the default user: only loopback
                    # clients, as Redis in protected mode.
                    log.info("Refused a connection from %s: protected mode", addr)
                    transport.write(_PROTECTED_MODE)
                    transport.close()
                    return
            else:
                laddr = f"{self.server.listeners.unix_path}:0"
                addr = "/unixsocket:0" if not laddr else laddr
        self.client = self.engine.new_client(addr=addr, laddr=laddr, fd=fd)
        self.client.send = self._send_later
        self.client.tls = self.tls
        self.client.kill = self.close  # CLIENT KILL
        self.client.output_bytes = self.output_bytes
        loop = asyncio.get_running_loop()

        def resume() -> None:  # CLIENT UNPAUSE
            loop.call_soon(self.process)

        self.client.resume = resume
        self.session = Session(self.engine, self.client, RequestParser(
            max_bulk_len=config["proto-max-bulk-len"],
            max_query_buffer=config["client-query-buffer-limit"],
        ))
        self.server.connections.add(self)

    def data_received(self, data: bytes) -> None:
        session = self.session
        if session is None or session.closing:
            return
        self.stats["net_input_bytes"] += len(data)
        session.receive(data)
        self.process()

    def connection_lost(self, exc: Exception | None) -> None:
        self.stop_reading()
        self.server.connections.discard(self)
        if self.client is not None:
            self.engine.client_closed(self.client)

    # -- commands --------------------------------------------------------------------
    def process(self) -> None:
        """Run what the session holds (Session.run) and write its replies."""
        session = self.session
        assert session is not None and self.transport is not None
        session.run()
        self.flush()

    def flush(self) -> None:
        """Write what the session has ready (or drop the connection at once
        after a cross-protocol request)."""
        session = self.session
        assert session is not None
        if session.aborted:
            self.abort()
            return
        out, close = session.drain()
        if out or close:
            self.write(out, close)

    def _send_later(self, reply: Any) -> None:
        """A reply for a command that was blocked (served, or timed out), or
        a Pub/Sub message."""
        session = self.session
        if session is None or session.closing or self.transport is None or self.client is None:
            return
        if session.take(reply):  # muted, or joins the replies of the commands running
            return
        if reply.__class__ is Push or reply.__class__ is RawReply and (
                self.client.kind == "replica" or self.client.monitor):
            # Messages, MONITOR lines, the replication stream: they unblock nothing.
            self.queue_push(reply)
            return
        session.deliver(reply)
        self.flush()
        if session.waiting:
            # Commands pipelined behind the blocked one can run now.
            asyncio.get_running_loop().call_soon(self.process)
        else:  # nothing behind it: only what process would note, the interaction
            self.client.last_interaction = self.engine.clock.monotonic()

    # -- closing -----------------------------------------------------------------------
    def abort(self) -> None:
        """Close at once, as Redis frees a client: the replies of this read
        and any output not written yet are dropped, nothing more is read."""
        self.stop_reading()
        if self.session is not None:
            self.session.pending = []
        self._outbox = None
        if self.transport is not None:
            self.transport.abort()

    def close(self) -> None:
        if not self.closing:
            self.stop_reading()
            if self.transport is not None:
                self.transport.close()
