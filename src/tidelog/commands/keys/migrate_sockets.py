"""MIGRATE's connections to its targets, kept for the next MIGRATE.

As Redis does (https://redis.io/docs/latest/commands/migrate/), a
connection opened by MIGRATE stays open, one per ``host:port`` as the
command spelled them, so a reshard's hundreds of MIGRATEs to one node
connect once.  At most :data:`CACHE_ITEMS` are kept (a new one closes a
random one when full); one unused for more than :data:`CACHE_TTL_S`
seconds is closed by the engine's cron (:meth:`MigrateSockets.close_idle`).
Each remembers the database it last selected, so that ``SELECT`` is sent
only when MIGRATE's destination database differs (an error from the
target forgets it).  Any I/O error closes the connection: the handler then
retries once on a fresh one (see :mod:`.migrate`).

With ``tls-cluster yes`` the connection is TLS, made with the ``tls-*``
client settings as Redis's MIGRATE does: the server attaches how
(:attr:`MigrateSockets.tls_wrap`, the ``tls`` module being the network
layer's); a bare engine has none and cannot connect then.  Every step is
bounded by MIGRATE's timeout; nothing waits forever.  The engine owns one
:class:`MigrateSockets` (its cron closes the idle connections); the
command layer owns the code, which needs nothing above it.
"""

from __future__ import annotations

import random
import socket
from collections.abc import Callable
from typing import Any

from ... import errors
from ...errors import CommandError

CACHE_ITEMS = 64   # Redis's MIGRATE_SOCKET_CACHE_ITEMS
CACHE_TTL_S = 10   # Redis's MIGRATE_SOCKET_CACHE_TTL: idle seconds before the cron closes one


class Target:
    """One cached connection: the socket, the bytes read past the last reply
    line, the database last selected on it (-1: none yet, or not sure),
    when it was last used (monotonic seconds), and the chunk format version
    the target stages (``TIDELOG.STAGE HELLO``; 0: none; None: not asked yet,
    see :mod:`.migrate_chunked`)."""

    __slots__ = ("sock", "buf", "last_dbid", "last_use", "stage")

    def __init__(self, sock: socket.socket, now: float) -> None:
        self.sock = sock
        self.buf = b""
        self.last_dbid = -1
        self.last_use = now
        self.stage: int | None = None

    def send(self, data: bytes, timeout_s: float) -> None:
        """Write all of ``data`` within ``timeout_s`` (OSError otherwise). O(len(data))."""
        self.sock.settimeout(timeout_s)
        self.sock.sendall(data)

    def read_line(self) -> bytes:
        """The next reply line without its CRLF, each read within the
        timeout of the last :meth:`send`; OSError (TimeoutError for the
        timeout) when the target closes or stays silent.  O(line)."""
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionResetError("connection closed by the target")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def _atoi(arg: bytes) -> int:
    """The port as C's atoi reads it: leading digits (after a sign), else 0."""
    text = arg.strip()
    sign = -1 if text[:1] == b"-" else 1
    if text[:1] in (b"-", b"+"):
        text = text[1:]
    digits = b""
    for byte in text:
        if not 48 <= byte <= 57:
            break
        digits += bytes([byte])
    return sign * int(digits) if digits else 0


class MigrateSockets:
    """The cache: ``(host, port)`` as MIGRATE's arguments spelled them ->
    :class:`Target`.  ``connect`` opens a socket (tests may replace it)."""

    def __init__(self, connect: Callable[..., socket.socket] = socket.create_connection,
                 rng: random.Random | None = None) -> None:
        self.targets: dict[tuple[bytes, bytes], Target] = {}
        self.connect = connect
        self.rng = rng or random.Random()
        self.opened = 0  # connections opened so far (tests and benchmarks read it)
        # With tls-cluster yes: socket -> the same wrapped in TLS (OSError
        # when it cannot be); None until the server attaches it.
        self.tls_wrap: Callable[[socket.socket], socket.socket] | None = None

    def __len__(self) -> int:
        return len(self.targets)

    def get(self, host: bytes, port: bytes, timeout_s: float, now: float,
            config: Any) -> Target:
        """The cached connection to ``host:port``, else a new one (connected
        within ``timeout_s``, TLS with ``tls-cluster yes``).  Raises
        MIGRATE's connect error when the address cannot be reached that way,
        OSError when the target refuses (Redis's non-blocking connect sees
        a refusal only at the write, so it counts as a write error).
        O(1) when cached."""
        key = (host, port)
        target = self.targets.get(key)
        if target is not None:
            target.last_use = now
            return target
        if len(self.targets) >= CACHE_ITEMS:  # full: make room, as Redis, at random
            self.close(*self.rng.choice(list(self.targets)))
        name = host.decode("latin-1")
        number = _atoi(port)
        if not name or number < 0:  # no address to look up (Redis's resolver refuses them)
            raise CommandError(errors.MIGRATE_IOERR_CONNECT)
        try:
            sock = self.connect((name, number & 0xFFFF), timeout=timeout_s)
        except (socket.gaierror, TimeoutError):
            raise CommandError(errors.MIGRATE_IOERR_CONNECT) from None
        if config["tls-cluster"]:
            try:
                if self.tls_wrap is None:
                    raise OSError("no TLS here")
                sock = self.tls_wrap(sock)
            except OSError:
                sock.close()
                raise CommandError(errors.MIGRATE_IOERR_CONNECT) from None
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        self.opened += 1
        target = self.targets[key] = Target(sock, now)
        return target

    def close(self, host: bytes, port: bytes) -> None:
        """Close and forget the connection to ``host:port`` if there is one. O(1)."""
        target = self.targets.pop((host, port), None)
        if target is not None:
            target.close()

    def close_idle(self, now: float) -> int:
        """Close the connections unused for more than :data:`CACHE_TTL_S`
        seconds (the cron's part); how many were closed.  O(cached)."""
        idle = [key for key, target in self.targets.items()
                if now - target.last_use > CACHE_TTL_S]
        for key in idle:
            self.close(*key)
        return len(idle)

    def close_all(self) -> None:
        for key in list(self.targets):
            self.close(*key)
