"""The network shell: asyncio (uvloop) connections around the engine.

One :class:`Connection` per client.  Bytes in go to the client's sans-IO
:class:`~.session.Session` (parser, pending commands, muting, HELLO's switch,
the busy-script mode), which runs the complete commands of a read and hands
back their replies in one buffer, written once.  The connection keeps the
transport, flow control, output buffer limits and closing; no command knows
about sockets.

* A protocol error replies ``-ERR Protocol error: ...`` and closes only that
  connection.
* While a client is blocked (``XREAD BLOCK``) its further pipelined commands
  wait in the parser; they run once the blocked command is answered.
* Back-pressure: when a client stops reading and our write buffer passes the
  transport's high-water mark, we stop reading from it until it drains.
* Output buffer limits (``client-output-buffer-limit``): after every write,
  a client whose replies not yet written (the transport's buffer plus what
  the write gate holds) pass its class's hard limit, or stay above its soft
  limit longer than the soft seconds, is closed at once, its pending output
  dropped, as Redis closes it.  The class: ``pubsub`` while the client has
  a subscription (RESP2 or RESP3, as Redis), ``slave`` for a replica's
  link, else ``normal``.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import selectors
import socket
from typing import Any

from .. import errors, tls
from ..commands.session.client import client_info_line
from ..config import Config
from ..engine import ClientState, Engine
from ..persistence.durability import attach
from ..resp import RequestParser, encode_into
from ..resp.replies import Push, RawReply
from .session import Session

log = logging.getLogger("tidelog")

# ``bind -addr``: these failures skip the address instead of stopping the start.
_OPTIONAL_BIND_ERRORS = frozenset({errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT,
                                   errno.EPROTONOSUPPORT, errno.ESOCKTNOSUPPORT})

_MAX_CLIENTS_REACHED = b"-" + errors.MAX_CLIENTS_REACHED + b"\r\n"

# Reply bytes a client that never authenticated (and must) may leave unread
# before it is closed (Redis's REPLY_BUFFER_SIZE_UNAUTHENTICATED_CLIENT).
UNAUTH_MAX_OUTPUT = 1024

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


class Connection(asyncio.Protocol):
    def __init__(self, server: Server) -> None:
        self.server = server
        self.engine = server.engine
        self.stats = server.engine.stats  # INFO's reads, writes and bytes, counted here
        self.transport: asyncio.Transport | None = None
        self.client: ClientState | None = None
        # The client's protocol state (parser, pending commands, muting):
        # set once the connection is accepted.
        self.session: Session | None = None
        self._closing = False
        self.tls = False  # on the TLS port
        # Pub/Sub messages waiting for the end of this loop turn (see _queue_push).
        self._outbox: bytearray | None = None
        # Output bytes the write gate holds back (not yet given to the transport).
        self._held = 0
        # Monotonic time the soft output limit was first passed; 0: not above it.
        self._soft_since = 0.0

    @property
    def closing(self) -> bool:
        return self._closing

    @closing.setter
    def closing(self, value: bool) -> None:
        self._closing = value
        if self.session is not None:
            self.session.closing = value

    # -- asyncio callbacks ---------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.tls = transport.get_extra_info("ssl_object") is not None
        config = self.engine.config
        if len(self.engine.clients) >= config["maxclients"]:
            self.engine.stats["rejected_connections"] += 1
            transport.write(_MAX_CLIENTS_REACHED)
            transport.close()
            self.closing = True
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
                    self.closing = True
                    return
            else:
                laddr = f"{self.server.unix_path}:0"
                addr = "/unixsocket:0" if not laddr else laddr
        self.client = self.engine.new_client(addr=addr, laddr=laddr, fd=fd)
        self.client.send = self._send_later
        self.client.kill = self.close  # CLIENT KILL
        self.client.output_bytes = self.output_bytes
        loop = asyncio.get_running_loop()
        self.client.resume = lambda: loop.call_soon(self._process)  # CLIENT UNPAUSE
        self.session = Session(self.engine, self.client, RequestParser(
            max_bulk_len=config["proto-max-bulk-len"],
            max_query_buffer=config["client-query-buffer-limit"],
        ))
        self.server.connections.add(self)

    def data_received(self, data: bytes) -> None:
        if self._closing:
            return
        self.stats["net_input_bytes"] += len(data)
        self.session.receive(data)  # type: ignore[union-attr]
        self._process()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closing = True
        self.server.connections.discard(self)
        if self.client is not None:
            self.engine.client_closed(self.client)

    def pause_writing(self) -> None:
        if self.transport is not None:
            self.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.transport is not None and not self.closing:
            self.transport.resume_reading()

    # -- commands --------------------------------------------------------------------
    def _process(self) -> None:
        """Run what the session holds (Session.run) and write its replies."""
        session = self.session
        assert session is not None and self.transport is not None
        session.run()
        self._flush_session()

    def _flush_session(self) -> None:
        session = self.session
        assert session is not None
        if session.aborted:
            self._abort()
            return
        out, close = session.drain()
        if out or close:
            self._write(out, close)

    def _process_busy(self) -> None:
        """A script runs past busy-reply-threshold (this runs inside its count
        hook): the session answers (Session.run_busy), written at once."""
        session = self.session
        assert session is not None
        session.run_busy()
        if session.aborted:
            self._abort()
            # The loop closes the socket only once the script ends:
            # the peer is told now, as Redis closes it at once.
            _shutdown(session.client.fd)
            return
        out, close = session.drain()
        if close and session.failed:
            self._write(out, close=True)
        elif out:
            self._write_now(out, close)

    def read_while_busy(self, fd: int) -> bool:
        """A script is busy: read what this client sent and answer it (from
        the script's count hook).  False when the connection is done."""
        try:
            data = os.read(fd, 65536)
        except (BlockingIOError, InterruptedError):
            return True
        except OSError:
            return False
        if not data:
            return False  # end of file: the loop sees it once the script ends
        self.stats["net_input_bytes"] += len(data)
        session = self.session
        assert session is not None
        session.receive(data)
        if session.failed:
            self._flush_session()
            return False
        self._process_busy()
        return not self.closing

    def _write(self, data: bytearray, close: bool = False) -> None:
        """Send replies, unless the write gate (the AOF with ``appendfsync
        always``) says they must wait until the writes of this loop turn
        are on disk: then they go out, in order, from its flush callback."""
        if close:
            self.closing = True  # read nothing more from this client
        if self._outbox is not None:  # messages queued before this reply go first
            data = self._outbox + data
            self._outbox = None
        gate = self.server.write_gate
        if gate is not None and gate.must_wait():
            self._held += len(data)

            def flushed() -> None:
                self._held -= len(data)
                self._write_now(data, close)

            gate.after_flush(flushed)
            if not close:
                self._check_output_limit()
        else:
            self._write_now(data, close)

    def _write_now(self, data: bytearray, close: bool) -> None:
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
        self.closing = True
        if self.transport is not None:
            self.transport.abort()  # what is pending is dropped, not sent

    def _send_later(self, reply: Any) -> None:
        """A reply for a command that was blocked (served, or timed out), or
        a Pub/Sub message."""
        session = self.session
        if self.closing or self.transport is None or self.client is None or session is None:
            return
        if session.take(reply):  # muted, or joins the replies of the commands running
            return
        if reply.__class__ is Push or reply.__class__ is RawReply and (
                self.client.kind == "replica" or self.client.monitor):
            # Messages, MONITOR lines, the replication stream: they unblock nothing.
            self._queue_push(reply)
            return
        session.deliver(reply)
        self._flush_session()
        if session.waiting:
            # Commands pipelined behind the blocked one can run now.
            asyncio.get_running_loop().call_soon(self._process)
        else:  # nothing behind it: only what _process would note, the interaction
            self.client.last_interaction = self.engine.clock.monotonic()

    def _queue_push(self, push: Push | RawReply) -> None:
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
                self._write(data)

    def _abort(self) -> None:
        """Close at once, as Redis frees a client: the replies of this read
        and any output not written yet are dropped, nothing more is read."""
        self.closing = True
        if self.session is not None:
            self.session.pending = []
        self._outbox = None
        if self.transport is not None:
            self.transport.abort()

    def close(self) -> None:
        if not self.closing:
            self.closing = True
            if self.transport is not None:
                self.transport.close()


def _shutdown(fd: int) -> None:
    """Shut a connected socket down at once, by its descriptor; whoever owns
    the descriptor still closes it."""
    try:
        sock = socket.socket(fileno=fd)
    except OSError:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        sock.detach()


class _Guest:
    """A connection accepted while a script is busy: served from the script's
    count hook (-BUSY, SCRIPT KILL ...) until the loop adopts it."""

    def __init__(self, server: Server, sock: socket.socket) -> None:
        self.server = server
        self.sock = sock
        sock.setblocking(False)
        config = server.config
        self.client = server.engine.new_client(fd=sock.fileno())
        self.session = Session(server.engine, self.client, RequestParser(
            max_bulk_len=config["proto-max-bulk-len"],
            max_query_buffer=config["client-query-buffer-limit"]))

    def read(self) -> bool:
        try:
            data = self.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return True
        except OSError:
            return False
        if not data:
            return False
        stats = self.server.engine.stats
        stats["net_input_bytes"] += len(data)
        session = self.session
        session.receive(data)
        if session.failed:  # a protocol error: closed without an answer
            return False
        session.run_busy()
        if session.aborted or session.failed:  # POST or Host: nothing answered, closed
            return False
        out, close = session.drain()
        try:
            sent = self.sock.send(out)
        except OSError:
            return False
        stats["net_output_bytes"] += sent
        return not close

    def close(self) -> None:
        self.server.engine.client_closed(self.client)
        self.sock.close()


def _bind_host(word: str) -> str:
    """A ``bind`` word's host: ``-`` (optional) dropped; ``*`` is every IPv4
    address and ``::*`` every IPv6 one, as in Redis."""
    host = word.lstrip("-")
    return "0.0.0.0" if host == "*" else "::" if host == "::*" else host


def _bind_sockets(words: tuple[str, ...], port: int, backlog: int,
                  listening: list[Any]) -> list[socket.socket]:
    """Listening sockets on ``port`` for each ``bind`` word (every address a
    name resolves to), bound now, non-blocking.  An address one of the
    ``listening`` sockets already serves gets a duplicate of it (the port
    stays open throughout).  An optional address (``-addr``) that is not
    available is skipped; any other failure closes what was made and raises
    OSError."""
    kept = {(sock.family, *sock.getsockname()[:2]): sock for sock in listening}
    socks: list[socket.socket] = []
    try:
        for word in words:
            try:
                infos = socket.getaddrinfo(_bind_host(word), port, type=socket.SOCK_STREAM,
                                           flags=socket.AI_PASSIVE)
            except socket.gaierror as exc:
                raise OSError(errno.EADDRNOTAVAIL, f"{word}: {exc.strerror}") from None
            seen = set()
            for family, kind, proto, _, address in infos:
                if (family, address) in seen:
                    continue
                seen.add((family, address))
                old = kept.get((family, *address[:2]))
                if old is not None:
                    socks.append(socket.socket(fileno=os.dup(old.fileno())))
                    continue
                sock = socket.socket(family, kind, proto)
                try:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                    if family == socket.AF_INET6:
                        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                    sock.bind(address)
                    sock.listen(backlog)
                    sock.setblocking(False)
                except OSError as exc:
                    sock.close()
                    if word.startswith("-") and exc.errno in _OPTIONAL_BIND_ERRORS:
                        log.warning("Skipping optional bind address %s: %s", word[1:],
                                    os.strerror(exc.errno or 0))
                        continue
                    raise
                socks.append(sock)
    except OSError:
        for sock in socks:
            sock.close()
        raise
    return socks


class ListenError(Exception):
    """An address could not be listened on; the text says which, and why."""


class Server:
    """Listening sockets, the connections, and the periodic cron."""

    def __init__(self, engine: Engine, any_free_port: bool = False) -> None:
        """``any_free_port``: with ``port 0``, listen on a free port chosen by
        the OS (embedding, tests) instead of not listening on TCP (Redis's
        meaning of ``port 0``)."""
        self.engine = engine
        self.any_free_port = any_free_port
        self.config: Config = engine.config
        self.connections: set[Connection] = set()
        self._servers: list[asyncio.AbstractServer] = []
        self._cron_task: asyncio.Task[None] | None = None
        self.stopped: asyncio.Event | None = None
        self.unix_path = ""
        self.ports: list[int] = []
        # Something with must_wait() / after_flush(fn) that holds replies
        # back until their writes are durable (the AOF), or None.
        self.write_gate: Any = None
        # The last Pub/Sub message encoded: (push, protocol, bytes).
        self.last_push: tuple[Any, int, bytes] = (None, 0, b"")
        self.loop: asyncio.AbstractEventLoop | None = None  # set by start
        # While a script is busy: what the count hook polls (the connections,
        # the listening sockets, the connections accepted meanwhile).
        self._busy_selector: selectors.BaseSelector | None = None
        self._guests: list[_Guest] = []
        self._listeners: list[socket.socket] = []
        self._tls_servers: list[asyncio.AbstractServer] = []
        # What the TCP and TLS listeners serve: their servers, the (bind words,
        # port) they were bound for, and the TLS context (CONFIG SET changes them).
        self._tcp_servers: list[asyncio.AbstractServer] = []
        # The listening sockets in force ("tcp", "tls"), served already or
        # about to be (a server is made for each on the loop), and a count
        # of changes: a server made for sockets since replaced is closed.
        self._listening: dict[str, list[Any]] = {"tcp": [], "tls": []}
        self._changes = {"tcp": 0, "tls": 0}
        self._tcp_at: tuple[tuple[str, ...], int] = ((), 0)
        self._tls_at: tuple[tuple[str, ...], int] = ((), 0)
        self._tls_context: Any = None

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.loop = loop
        self.stopped = asyncio.Event()
        self.engine.schedule = lambda delay, fn: loop.call_later(delay, fn)
        self.engine.shutdown_hook = self.request_stop
        self.engine.scripts.busy_poll = self._busy_poll
        self.engine.scripts.busy_end = self._busy_end
        # CONFIG SET appendonly starts the AOF on this loop; it gates replies.
        attach(self.engine).bind(loop, self._install_write_gate)
        self.engine.listen_hook = self.reconfigure
        port = self.config["port"]
        if port or self.any_free_port:
            for word in self.config["bind"].split():
                host = _bind_host(word)
                try:
                    srv = await loop.create_server(lambda: Connection(self), host, port,
                                                   reuse_address=True,
                                                   backlog=self.config["tcp-backlog"])
                except OSError as exc:
                    if word.startswith("-") and exc.errno in _OPTIONAL_BIND_ERRORS:
                        # "-addr": skipped where the address is not available (Redis)
                        log.warning("Skipping optional bind address %s: %s", host,
                                    os.strerror(exc.errno or 0))
                        continue
                    reason = os.strerror(exc.errno) if exc.errno else str(exc)
                    raise ListenError(f"Could not listen on {host}:{port} (tcp): {reason}; "
                                      "is another server running there? (--port, --bind)"
                                      ) from None
                self._servers.append(srv)
                self._tcp_servers.append(srv)
                for sock in srv.sockets:
                    self.ports.append(sock.getsockname()[1])
                if not port:  # bind every address on the port the OS gave the first
                    port = self.ports[0]
                    self.config.set("port", str(port), at_startup=True)
        self._tcp_at = (tuple(self.config["bind"].split()), self.config["port"])
        self._listening["tcp"] = [sock for srv in self._tcp_servers for sock in srv.sockets]
        tls_port = self.config["tls-port"]
        self._tls_at = (tuple(self.config["bind"].split()), tls_port)
        if tls_port:
            try:
                context = self._tls_context = tls.server_context(self.config)
            except tls.TlsError as exc:
                raise ListenError(str(exc)) from None
            for host in self.config["bind"].split():
                host = _bind_host(host)
                try:
                    srv = await loop.create_server(lambda: Connection(self), host, tls_port,
                                                   reuse_address=True,
                                                   backlog=self.config["tcp-backlog"],
                                                   ssl=context)
                except OSError as exc:
                    reason = os.strerror(exc.errno) if exc.errno else str(exc)
                    raise ListenError(f"Could not listen on {host}:{tls_port} (tls): {reason}"
                                      ) from None
                self._servers.append(srv)
                self._tls_servers.append(srv)
        self._listening["tls"] = [sock for srv in self._tls_servers for sock in srv.sockets]
        path = self.config["unixsocket"]
        if path:
            if os.path.exists(path):
                os.unlink(path)
            try:
                srv = await loop.create_unix_server(lambda: Connection(self), path)
            except OSError as exc:
                reason = os.strerror(exc.errno) if exc.errno else str(exc)
                raise ListenError(f"Could not listen on {path} (unix socket): {reason}") from None
            perm = self.config["unixsocketperm"]
            if perm:
                os.chmod(path, perm)
            self.unix_path = path
            self._servers.append(srv)
        self._cron_task = loop.create_task(self._cron())

    # -- CONFIG SET port / bind / tls-port / tls-* ---------------------------------------
    def reconfigure(self, what: str) -> bytes | None:
        """Make the listeners match the configuration CONFIG SET just changed
        (``what``: "port", "bind", "tls-port", or "tls" for the TLS files and
        options).  As Redis: the new sockets are bound before the old ones
        close, so on failure the server keeps listening where it was; returns
        the why for CONFIG SET's error then (and logs the cause), else None.
        A TLS option builds the context again (and checks the replica side's
        when ``tls-replication`` is on); the TLS listeners then take it over
        on the sockets they have."""
        words = tuple(self.config["bind"].split())
        port, tls_port = self.config["port"], self.config["tls-port"]
        context = self._tls_context
        if tls_port and (what == "tls" or context is None):
            try:
                context = tls.server_context(self.config)
            except tls.TlsError as exc:
                log.warning("Failed to configure TLS: %s", exc)
                return errors.CONFIG_TLS_FAILED
        if what == "tls" and self.config["tls-replication"]:
            try:
                tls.client_context(self.config)
            except tls.TlsError as exc:
                log.warning("Failed to configure TLS for replication: %s", exc)
                return errors.CONFIG_TLS_FAILED
        why = errors.CONFIG_BIND_FAILED if what == "bind" else errors.CONFIG_LISTEN_FAILED
        new_tcp = new_tls = None  # the sockets bound anew (None: the old ones stay)
        backlog = self.config["tcp-backlog"]
        try:
            if (words, port) != self._tcp_at:
                new_tcp = _bind_sockets(words, port, backlog, self._listening["tcp"]
                                        ) if port else []
            if (words, tls_port) != self._tls_at or (what == "tls" and tls_port):
                # (a new context: the same sockets, served under it)
                new_tls = _bind_sockets(words, tls_port, backlog, self._listening["tls"]
                                        ) if tls_port else []
        except OSError as exc:
            log.warning("Failed to listen on %s (%s): %s", " ".join(words) or "nothing",
                        what, os.strerror(exc.errno) if exc.errno else exc)
            for sock in new_tcp or ():
                sock.close()
            return why
        if new_tcp is not None:
            self._serve_on("tcp", new_tcp, None)
            self._tcp_at = (words, port)
            self.ports = [sock.getsockname()[1] for sock in new_tcp]
            if port:
                log.info("Listening on port %d (%s)", port, " ".join(words))
            else:
                log.info("No longer listening on TCP (port 0)")
        if new_tls is not None:
            self._tls_context = context if tls_port else None
            self._serve_on("tls", new_tls, context)
            self._tls_at = (words, tls_port)
        return None

    def _serve_on(self, kind: str, socks: list[socket.socket], context: Any) -> None:
        """Close the ``kind`` ("tcp" or "tls") listeners (connections stay)
        and serve ``socks`` instead (already listening: connections wait in
        their backlog until the loop takes them on)."""
        servers = self._tcp_servers if kind == "tcp" else self._tls_servers
        for srv in servers:
            srv.close()
            if srv in self._servers:
                self._servers.remove(srv)
        servers.clear()
        self._listening[kind] = list(socks)
        self._changes[kind] += 1
        change = self._changes[kind]
        assert self.loop is not None
        for sock in socks:
            task = self.loop.create_task(self.loop.create_server(
                lambda: Connection(self), sock=sock, ssl=context,
                backlog=self.config["tcp-backlog"]))
            task.add_done_callback(lambda t, kind=kind, change=change: self._served(t, kind, change))

    def _served(self, task: asyncio.Task[Any], kind: str, change: int) -> None:
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            log.warning("Could not serve a listening socket: %s", exc)
            return
        srv = task.result()
        if change != self._changes[kind]:  # replaced meanwhile (a socket kept was duplicated)
            srv.close()
            return
        (self._tcp_servers if kind == "tcp" else self._tls_servers).append(srv)
        self._servers.append(srv)

    # -- a busy script ------------------------------------------------------------------
    def _busy_poll(self, running: ClientState) -> None:
        """Called from a busy script's count hook: read every client that
        sent something and answer it (-BUSY, or SCRIPT KILL ...), accept new
        connections (served the same way, handed to the loop afterwards)."""
        sel = self._busy_selector
        if sel is None:
            sel = self._busy_selector = selectors.DefaultSelector()
            for conn in self.connections:
                client = conn.client
                if client is None or client is running or client.blocked is not None or \
                        conn.closing or client.fd < 0 or conn.tls:
                    continue  # (a TLS client's bytes need the loop's TLS layer: it waits)
                try:
                    sel.register(client.fd, selectors.EVENT_READ, conn)
                except (ValueError, OSError):
                    pass
            for srv in self._servers:
                if srv in self._tls_servers:
                    continue  # new TLS connections wait for the loop
                for listening in srv.sockets:
                    try:
                        dup = socket.socket(fileno=os.dup(listening.fileno()))
                        dup.setblocking(False)
                        sel.register(dup, selectors.EVENT_READ, dup)
                    except OSError:
                        continue
                    self._listeners.append(dup)
        for key, _ in sel.select(0):
            target = key.data
            if isinstance(target, Connection):
                if not target.read_while_busy(key.fd):
                    sel.unregister(key.fd)
            elif isinstance(target, _Guest):
                if not target.read():
                    sel.unregister(key.fd)
                    target.close()
                    self._guests.remove(target)
            else:
                try:
                    sock, _ = target.accept()
                except OSError:
                    continue
                if len(self.engine.clients) >= self.config["maxclients"]:
                    sock.close()
                    continue
                guest = _Guest(self, sock)
                self._guests.append(guest)
                sel.register(sock, selectors.EVENT_READ, guest)

    def _busy_end(self) -> None:
        """The busy script ended: stop polling; the connections accepted
        meanwhile join the loop."""
        if self._busy_selector is not None:
            self._busy_selector.close()
            self._busy_selector = None
        for dup in self._listeners:
            dup.close()
        self._listeners.clear()
        guests, self._guests = self._guests, []
        for guest in guests:
            if self.loop is not None:
                self.loop.create_task(self._adopt(guest))

    async def _adopt(self, guest: _Guest) -> None:
        self.engine.client_closed(guest.client)
        assert self.loop is not None
        try:
            _, conn = await self.loop.connect_accepted_socket(lambda: Connection(self), guest.sock)
        except OSError:
            guest.sock.close()
            return
        if isinstance(conn, Connection) and conn.client is not None and not conn.closing:
            # What it sent after its last full command.
            conn.session.parser = guest.session.parser  # type: ignore[union-attr]
            conn._process()

    @property
    def port(self) -> int:
        return self.ports[0] if self.ports else 0

    def _install_write_gate(self, writer: Any) -> None:
        """The AOF started (a writer) or stopped (None) at run time."""
        self.write_gate = writer

    async def _cron(self) -> None:
        while True:
            hz = max(1, min(500, self.config["hz"]))
            await asyncio.sleep(1 / hz)
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
            if client is not None and client.blocked is None and client.kind == "normal" \
                    and client.pubsub is None and now - client.last_interaction > timeout:
                conn.close()

    def request_stop(self) -> None:
        if self.stopped is not None:
            self.stopped.set()

    async def serve_until_stopped(self) -> None:
        assert self.stopped is not None
        await self.stopped.wait()
        await self.close()

    async def close(self) -> None:
        for srv in self._servers:
            srv.close()
        for conn in list(self.connections):
            conn.close()
        for srv in self._servers:
            await srv.wait_closed()
        if self._cron_task is not None:
            self._cron_task.cancel()
        if self.unix_path and os.path.exists(self.unix_path):
            os.unlink(self.unix_path)
