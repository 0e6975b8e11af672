"""A connection without a socket, for unit tests of the network layer:
``connect(server)`` makes a :class:`~tidelog.server.connection.Connection` whose
transport keeps what is written (one entry per ``transport.write()``);
``cmd(...)`` is a request's bytes."""

from __future__ import annotations

from tidelog.server.connection import Connection
from tidelog.server.net import Server


class Transport:
    """What the connection writes, one entry per transport.write()."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.aborted = False  # abort(): closed at once, pending output dropped

    def get_extra_info(self, name: str) -> None:
        return None

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0  # everything written went out at once

    def close(self) -> None:
        pass

    def abort(self) -> None:
        self.aborted = True


def cmd(*argv: bytes) -> bytes:
    return b"*%d\r\n" % len(argv) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in argv)


def connect(server: Server) -> tuple[Connection, Transport]:
    conn, transport = Connection(server), Transport()
    conn.connection_made(transport)  # type: ignore[arg-type]
    return conn, transport
