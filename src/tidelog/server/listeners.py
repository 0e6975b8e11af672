"""The listening sockets: TCP (``bind``, ``port``), TLS (``tls-port``) and
the Unix socket (``unixsocket``), bound at start and rebound by CONFIG SET.

:class:`Listeners` binds every address at start (an optional ``-addr`` that
is not available is skipped; any other failure stops the start with a
:class:`ListenError` that says which address and why).  CONFIG SET port,
bind, tls-port or a TLS option calls :meth:`Listeners.reconfigure` (the
engine's ``listen_hook``): as Redis, the new sockets are bound before the old
ones close, so on failure the server keeps listening where it was.  The
listeners only accept; what serves a connection is the factory they are
given (:class:`~.connection.Connection`).
"""

from __future__ import annotations

import asyncio
import errno
import functools
import logging
import os
import socket
from collections.abc import Callable
from typing import Any

from .. import errors, tls
from ..config import Config

log = logging.getLogger("tidelog")

# ``bind -addr``: these failures skip the address instead of stopping the start.
_OPTIONAL_BIND_ERRORS = frozenset({errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT,
                                   errno.EPROTONOSUPPORT, errno.ESOCKTNOSUPPORT})


class ListenError(Exception):
    """An address could not be listened on; the text says which, and why."""


class Listeners:
    """The server's listening sockets and the asyncio servers accepting on them."""

    def __init__(self, config: Config, factory: Callable[[], asyncio.Protocol],
                 any_free_port: bool = False) -> None:
        """``factory`` makes the protocol of each connection accepted;
        ``any_free_port``: with ``port 0``, listen on a free port chosen by
        the OS (embedding, tests) instead of not listening on TCP (Redis's
        meaning of ``port 0``)."""
        self.config = config
        self.factory = factory
        self.any_free_port = any_free_port
        self.loop: asyncio.AbstractEventLoop | None = None  # set by start
        self.unix_path = ""
        self.ports: list[int] = []
        # Every server accepting (TCP, TLS, the Unix socket).
        self.servers: list[asyncio.Server] = []
        # What the TCP and TLS listeners serve: their servers, the (bind words,
        # port) they were bound for, and the TLS context (CONFIG SET changes them).
        self._tcp_servers: list[asyncio.Server] = []
        self._tls_servers: list[asyncio.Server] = []
        # The listening sockets in force ("tcp", "tls"), served already or
        # about to be (a server is made for each on the loop), and a count
        # of changes: a server made for sockets since replaced is closed.
        self._listening: dict[str, list[Any]] = {"tcp": [], "tls": []}
        self._changes = {"tcp": 0, "tls": 0}
        self._tcp_at: tuple[tuple[str, ...], int] = ((), 0)
        self._tls_at: tuple[tuple[str, ...], int] = ((), 0)
        self._tls_context: Any = None

    @property
    def port(self) -> int:
        """The TCP port listened on (0: none)."""
        return self.ports[0] if self.ports else 0

    def plain_sockets(self) -> list[socket.socket]:
        """The listening sockets that need no TLS (TCP and the Unix socket)."""
        return [sock for srv in self.servers if srv not in self._tls_servers
                for sock in srv.sockets]

    async def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Listen where the configuration says (ListenError if it cannot)."""
        self.loop = loop
        config = self.config
        port = config["port"]
        if port or self.any_free_port:
            for word in config["bind"].split():
                host = _bind_host(word)
                try:
                    srv = await loop.create_server(self.factory, host, port,
                                                   reuse_address=True,
                                                   backlog=config["tcp-backlog"])
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
                self.servers.append(srv)
                self._tcp_servers.append(srv)
                for sock in srv.sockets:
                    self.ports.append(sock.getsockname()[1])
                if not port:  # bind every address on the port the OS gave the first
                    port = self.ports[0]
                    config.set("port", str(port), at_startup=True)
        self._tcp_at = (tuple(config["bind"].split()), config["port"])
        self._listening["tcp"] = [sock for srv in self._tcp_servers for sock in srv.sockets]
        tls_port = config["tls-port"]
        self._tls_at = (tuple(config["bind"].split()), tls_port)
        if tls_port:
            try:
                context = self._tls_context = tls.server_context(config)
            except tls.TlsError as exc:
                raise ListenError(str(exc)) from None
            for host in config["bind"].split():
                host = _bind_host(host)
                try:
                    srv = await loop.create_server(self.factory, host, tls_port,
                                                   reuse_address=True,
                                                   backlog=config["tcp-backlog"],
                                                   ssl=context)
                except OSError as exc:
                    reason = os.strerror(exc.errno) if exc.errno else str(exc)
                    raise ListenError(f"Could not listen on {host}:{tls_port} (tls): {reason}"
                                      ) from None
                self.servers.append(srv)
                self._tls_servers.append(srv)
        self._listening["tls"] = [sock for srv in self._tls_servers for sock in srv.sockets]
        path = config["unixsocket"]
        if path:
            if os.path.exists(path):
                os.unlink(path)
            try:
                srv = await loop.create_unix_server(self.factory, path)
            except OSError as exc:
                reason = os.strerror(exc.errno) if exc.errno else str(exc)
                raise ListenError(f"Could not listen on {path} (unix socket): {reason}") from None
            perm = config["unixsocketperm"]
            if perm:
                os.chmod(path, perm)
            self.unix_path = path
            self.servers.append(srv)

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
            if srv in self.servers:
                self.servers.remove(srv)
        servers.clear()
        self._listening[kind] = list(socks)
        self._changes[kind] += 1
        change = self._changes[kind]
        assert self.loop is not None
        for sock in socks:
            task = self.loop.create_task(self.loop.create_server(
                self.factory, sock=sock, ssl=context, backlog=self.config["tcp-backlog"]))
            task.add_done_callback(functools.partial(self._served, kind=kind, change=change))

    def _served(self, task: asyncio.Task[asyncio.Server], *, kind: str, change: int) -> None:
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
        self.servers.append(srv)

    # -- stopping ------------------------------------------------------------------------
    def close(self) -> None:
        """Stop accepting (the connections stay)."""
        for srv in self.servers:
            srv.close()

    async def wait_closed(self) -> None:
        """Once closed: wait for the servers, and remove the Unix socket's file."""
        for srv in self.servers:
            await srv.wait_closed()
        if self.unix_path and os.path.exists(self.unix_path):
            os.unlink(self.unix_path)


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
