"""What happens when a connection is accepted.  Protected mode: with no
password (the default user has none), clients from outside the loopback
interface get Redis's -DENIED text and are closed; loopback clients, and any
client with protected-mode no, are served.  tcp-keepalive: the socket's
keep-alive probes, as Redis sets them."""

from __future__ import annotations

import asyncio
import socket

import pytest

import tidelog.commands  # noqa: F401  (registers the commands)
from tidelog import errors
from tidelog.config import Config
from tidelog.engine import Engine
from tidelog.server.connection import Connection
from tidelog.server.net import Server


class FakeSocket:
    def __init__(self, peer: str, family=socket.AF_INET) -> None:
        self.family = family
        self.peer = peer

    def setsockopt(self, *args) -> None:
        pass

    def getpeername(self):
        return (self.peer, 40000)

    def getsockname(self):
        return ("0.0.0.0", 6379)

    def fileno(self) -> int:
        return -1


class Transport:
    def __init__(self, sock: FakeSocket) -> None:
        self.sock = sock
        self.writes: list[bytes] = []
        self.closed = False

    def get_extra_info(self, name: str):
        return self.sock if name == "socket" else None

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    def get_write_buffer_size(self) -> int:
        return 0

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True


def connect(peer: str, protected: bool = True, family=socket.AF_INET):
    config = Config()
    config.set("protected-mode", "yes" if protected else "no")
    engine = Engine(config)
    conn, transport = Connection(Server(engine)), Transport(FakeSocket(peer, family))
    conn.connection_made(transport)  # type: ignore[arg-type]
    return engine, conn, transport


@pytest.mark.parametrize("peer", ["192.0.2.9", "10.1.2.3", "2001:db8::1", "::ffff:10.0.0.1"])
async def test_outside_clients_are_denied(peer: str) -> None:
    family = socket.AF_INET6 if ":" in peer else socket.AF_INET
    engine, conn, transport = connect(peer, family=family)
    assert transport.writes == [b"-" + errors.PROTECTED_MODE + b"\r\n"]
    assert transport.closed and conn.client is None and not engine.clients


@pytest.mark.parametrize("peer", ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"])
async def test_loopback_clients_are_served(peer: str) -> None:
    family = socket.AF_INET6 if ":" in peer else socket.AF_INET
    engine, conn, transport = connect(peer, family=family)
    assert transport.writes == [] and not transport.closed and conn.client is not None


async def test_protected_mode_no_serves_everybody() -> None:
    _, conn, transport = connect("192.0.2.9", protected=False)
    assert transport.writes == [] and not transport.closed and conn.client is not None


async def test_tcp_keepalive_is_set_on_client_sockets() -> None:
    config = Config()
    config.set("port", "0", at_startup=True)
    config.set("tcp-keepalive", "60")
    server = Server(Engine(config), any_free_port=True)
    await server.start()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"PING\r\n")
        assert await reader.readline() == b"+PONG\r\n"
        conn = next(iter(server.connections))
        sock = conn.transport.get_extra_info("socket")
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
        if hasattr(socket, "TCP_KEEPIDLE"):
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) == 60
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL) == 20
        writer.close()
    finally:
        await server.close()


async def test_with_a_password_outside_clients_connect_and_must_authenticate() -> None:
    config = Config()
    config.set("requirepass", "pw")
    engine = Engine(config)
    conn, transport = Connection(Server(engine)), Transport(FakeSocket("192.0.2.9"))
    conn.connection_made(transport)  # type: ignore[arg-type]
    assert transport.writes == [] and conn.client is not None
    conn.data_received(b"PING\r\nAUTH pw\r\nPING\r\n")
    assert transport.writes == [b"-NOAUTH Authentication required.\r\n+OK\r\n+PONG\r\n"]
