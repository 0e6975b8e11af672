"""CONFIG SET port / bind / tls-port against redis-server 7.0.15: the
failures' texts, and the rollback of every value of a CONFIG SET whose port
cannot be listened on (Redis's introspection.tcl "CONFIG SET rollback on
apply error").  Neither server moves: the moves themselves are in
tests/integration/test_listen_config.py."""

from __future__ import annotations

import re
import socket

import pytest

from tests.support.rawclient import RawClient


@pytest.fixture
def busy_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        yield sock.getsockname()[1]


def test_listen_failures_and_rollback(differ, busy_port):
    differ.check("CONFIG", "SET", "port", busy_port)
    differ.check("CONFIG", "SET", "maxmemory", "10000001", "port", busy_port,
                 "client-query-buffer-limit", "10m")
    differ.check("CONFIG", "GET", "maxmemory")
    differ.check("CONFIG", "GET", "client-query-buffer-limit")
    differ.check("CONFIG", "SET", "bind", "999.999.999.999")
    differ.check("CONFIG", "SET", "bind", "127.0.0.1 999.999.999.999")
    differ.check("CONFIG", "GET", "bind")
    differ.check("CONFIG", "SET", "unixsocket", "/tmp/never.sock")
    differ.check("PING")


def test_tls_port_without_tls_configured(differ):
    # redis-server without TLS support and Tidelog without a certificate
    # answer alike, and both keep tls-port 0
    differ.check("CONFIG", "SET", "tls-port", "1")
    differ.check("CONFIG", "GET", "tls-port")


def test_the_same_port_and_bind_again(differ):
    port_reply = differ.ours.call("CONFIG", "GET", "port")
    port = port_reply.split(b"\r\n")[-2]
    assert differ.ours.call("CONFIG", "SET", "port", port) == b"+OK\r\n"
    differ.check("CONFIG", "SET", "bind", "127.0.0.1")
    differ.check("PING")


def _field(line: bytes, name: bytes) -> bytes:
    return re.search(rb" " + name + rb"=(\S*)", line).group(1)


def test_client_list_qbuf_counts_the_command_running(differ):
    """qbuf while CLIENT LIST / CLIENT INFO runs: the bytes of the read that
    brought it, the command itself included (26 for ``CLIENT LIST``), as
    Redis shows (introspection.tcl's CLIENT LIST and CLIENT INFO tests);
    with a pipeline in one write, the whole of it."""
    for argv in (["CLIENT", "LIST"], ["CLIENT", "INFO"], ["client", "info"]):
        ours, theirs = differ.ours.call(*argv), differ.theirs.call(*argv)
        assert _field(ours, b"qbuf") == _field(theirs, b"qbuf") == b"26"
    pipeline = [["PING"], ["CLIENT", "INFO"], ["ECHO", "x" * 100]]
    ours, theirs = differ.ours.pipeline(pipeline), differ.theirs.pipeline(pipeline)
    assert _field(ours[1], b"qbuf") == _field(theirs[1], b"qbuf") == b"162"
    # another client's line: nothing buffered between its commands
    other = RawClient(differ.ours.sock.getpeername()[1])
    assert other.call("PING") == b"+PONG\r\n"
    lines = [line for line in differ.ours.call("CLIENT", "LIST").split(b"\n") if b"id=" in line]
    assert sorted(_field(line, b"qbuf") for line in lines) == [b"0", b"26"]
    other.close()
