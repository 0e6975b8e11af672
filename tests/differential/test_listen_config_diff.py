"""CONFIG SET port / bind / tls-port against redis-server 7.0.15: the
failures' texts, and the rollback of every value of a CONFIG SET whose port
cannot be listened on (Redis's introspection.tcl "CONFIG SET rollback on
apply error").  Neither server moves: the moves themselves are in
tests/integration/test_listen_config.py."""

from __future__ import annotations

import socket

import pytest


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
