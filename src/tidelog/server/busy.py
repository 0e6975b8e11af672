"""Serving clients while a script is busy.

A script (EVAL, FCALL) that runs past ``busy-reply-threshold`` holds the
event loop.  As Redis does from its script timeout hook, the script's count
hook then calls :meth:`BusyLoop.poll`, which serves the other clients from a
selector of its own: each gets ``-BUSY``, except Redis's ``allow_busy``
commands (SCRIPT KILL, FUNCTION KILL, SHUTDOWN NOSAVE, AUTH, HELLO ...),
through the same :class:`~.session.Session` as always
(:meth:`Session.run_busy`).  Connections accepted meanwhile are served the
same way (:class:`_Guest`) and handed to the loop when the script ends
(:meth:`BusyLoop.end`).  TLS clients wait: their bytes need the loop's TLS
layer.
"""

from __future__ import annotations

import os
import selectors
import socket

from ..engine import ClientState
from ..resp import RequestParser
from .connection import Connection
from .output import Host
from .session import Session


class BusyLoop:
    """The selector a busy script's count hook polls: the connections, the
    listening sockets, and the connections accepted meanwhile."""

    def __init__(self, server: Host) -> None:
        self.server = server
        self._selector: selectors.BaseSelector | None = None
        self._guests: list[_Guest] = []
        self._listeners: list[socket.socket] = []

    def poll(self, running: ClientState) -> None:
        """Called from a busy script's count hook: read every client that
        sent something and answer it (-BUSY, or SCRIPT KILL ...), accept new
        connections (served the same way, handed to the loop afterwards)."""
        server = self.server
        sel = self._selector
        if sel is None:
            sel = self._selector = selectors.DefaultSelector()
            for conn in server.connections:
                client = conn.client
                if client is None or client is running or client.blocked is not None or \
                        conn.closing or client.fd < 0 or conn.tls:
                    continue  # (a TLS client's bytes need the loop's TLS layer: it waits)
                try:
                    sel.register(client.fd, selectors.EVENT_READ, conn)
                except (ValueError, OSError):
                    pass
            for listening in server.listeners.plain_sockets():  # new TLS connections wait
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
                if not _read(target, key.fd):
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
                if len(server.engine.clients) >= server.config["maxclients"]:
                    sock.close()
                    continue
                guest = _Guest(server, sock)
                self._guests.append(guest)
                sel.register(sock, selectors.EVENT_READ, guest)

    def end(self) -> None:
        """The busy script ended: stop polling; the connections accepted
        meanwhile join the loop."""
        if self._selector is not None:
            self._selector.close()
            self._selector = None
        for dup in self._listeners:
            dup.close()
        self._listeners.clear()
        guests, self._guests = self._guests, []
        loop = self.server.loop
        for guest in guests:
            if loop is not None:
                loop.create_task(self._adopt(guest))

    async def _adopt(self, guest: _Guest) -> None:
        server = self.server
        server.engine.client_closed(guest.client)
        assert server.loop is not None
        try:
            _, conn = await server.loop.connect_accepted_socket(lambda: Connection(server),
                                                                guest.sock)
        except OSError:
            guest.sock.close()
            return
        if isinstance(conn, Connection) and conn.client is not None and not conn.closing:
            # What it sent after its last full command.
            conn.session.parser = guest.session.parser  # type: ignore[union-attr]
            conn.process()


def _read(conn: Connection, fd: int) -> bool:
    """Read what a connected client sent and answer it.  False when the
    connection is done."""
    try:
        data = os.read(fd, 65536)
    except (BlockingIOError, InterruptedError):
        return True
    except OSError:
        return False
    if not data:
        return False  # end of file: the loop sees it once the script ends
    conn.stats["net_input_bytes"] += len(data)
    session = conn.session
    assert session is not None
    session.receive(data)
    if session.failed:
        conn.flush()
        return False
    session.run_busy()
    if session.aborted:
        conn.abort()
        # The loop closes the socket only once the script ends:
        # the peer is told now, as Redis closes it at once.
        _shutdown(session.client.fd)
        return False
    out, close = session.drain()
    if close and session.failed:
        conn.write(out, close=True)
    elif out:
        conn.write_now(out, close)
    return not conn.closing


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

    def __init__(self, server: Host, sock: socket.socket) -> None:
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
