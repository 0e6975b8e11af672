"""CONFIG SET port / bind / tls-port at run time, over real sockets.

As Redis (7.0's config.c and 8.x alike): the new listening sockets are
bound before the old ones close; a port that cannot be listened on, or an
address that cannot be bound, fails CONFIG SET with Redis's text, every
value of that CONFIG SET goes back, and the server keeps listening where
it was.  Connections already open stay open whatever the listeners do.
The texts are checked against redis-server 7.0.15 in
tests/differential/test_listen_config_diff.py.
"""

from __future__ import annotations

import socket

import pytest
import redis

from tests.support.redis_oracle import free_port

LISTEN_FAILED = ("CONFIG SET failed (possibly related to argument 'port') - "
                 "Unable to listen on this port. Check server logs.")
BIND_FAILED = ("CONFIG SET failed (possibly related to argument 'bind') - "
               "Failed to bind to specified addresses.")
TLS_FAILED = ("CONFIG SET failed (possibly related to argument 'tls-port') - "
              "Unable to update TLS configuration. Check server logs.")


def refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    except ConnectionRefusedError:
        return True
    return False


@pytest.fixture
def busy_port():
    """A port something else listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        yield sock.getsockname()[1]


def test_config_set_port_moves_the_listener(embedded):
    srv = embedded(port=0)
    old = srv.port
    c = redis.Redis(port=old)
    new = free_port()
    assert c.config_set("port", new) is True
    assert c.ping() is True  # the connection that asked stays
    assert redis.Redis(port=new).ping() is True
    assert refused(old)
    assert c.config_get("port") == {"port": str(new)}
    assert c.info("server")["tcp_port"] == new
    assert c.config_set("port", new) is True  # the same value: nothing moves
    assert redis.Redis(port=new).ping() is True
    c.close()


def test_a_port_in_use_fails_and_rolls_every_value_back(embedded, busy_port):
    srv = embedded(port=0)
    c = redis.Redis(port=srv.port, decode_responses=True)
    maxmemory = c.config_get("maxmemory")["maxmemory"]
    with pytest.raises(redis.ResponseError) as info:
        c.config_set("maxmemory", "10000001", "port", str(busy_port),
                     "client-query-buffer-limit", "10m")
    assert str(info.value) == LISTEN_FAILED
    assert c.config_get("maxmemory")["maxmemory"] == maxmemory
    assert c.config_get("port")["port"] == str(srv.port)
    assert c.config_get("client-query-buffer-limit")["client-query-buffer-limit"] == "1073741824"
    assert redis.Redis(port=srv.port).ping() is True  # still listening where it was
    c.close()


def test_config_set_port_0_stops_listening_on_tcp(embedded):
    srv = embedded(port=0)
    port = srv.port
    c = redis.Redis(port=port)
    assert c.config_set("port", 0) is True
    assert refused(port)
    assert c.ping() is True
    c.close()


def test_config_set_bind(embedded):
    srv = embedded(port=0)
    c = redis.Redis(port=srv.port, decode_responses=True)
    with pytest.raises(redis.ResponseError) as info:
        c.config_set("bind", "999.999.999.999")
    assert str(info.value) == BIND_FAILED
    assert c.config_get("bind") == {"bind": "127.0.0.1"}
    assert redis.Redis(port=srv.port).ping() is True
    # an optional address added on the same port: 127.0.0.1 keeps its socket
    assert c.config_set("bind", "127.0.0.1 -::1") is True
    assert c.config_get("bind") == {"bind": "127.0.0.1 -::1"}
    assert redis.Redis(port=srv.port).ping() is True
    assert c.config_set("bind", "127.0.0.1") is True  # ::1 dropped, 127.0.0.1 kept
    assert redis.Redis(port=srv.port).ping() is True
    c.close()


def test_tls_port_without_a_certificate_fails(embedded):
    srv = embedded(port=0)
    c = redis.Redis(port=srv.port, decode_responses=True)
    with pytest.raises(redis.ResponseError) as info:
        c.config_set("tls-port", str(free_port()))
    assert str(info.value) == TLS_FAILED
    assert c.config_get("tls-port") == {"tls-port": "0"}
    # TLS options take a value as Redis's do (checked when TLS is in use)
    assert c.config_set("tls-auth-clients", "optional", "tls-replication", "no") is True
    assert c.config_get("tls-auth-clients") == {"tls-auth-clients": "optional"}
    c.close()


def test_unixsocket_stays_immutable(embedded):
    srv = embedded(port=0)
    c = redis.Redis(port=srv.port)
    with pytest.raises(redis.ResponseError, match="can't set immutable config"):
        c.config_set("unixsocket", "/tmp/never.sock")
    c.close()


def test_changes_in_one_pipeline_leave_only_the_last(embedded):
    """Two moves in one read (the first listener not served yet when the
    second comes): only the last port listens; a port kept across both
    keeps serving."""
    srv = embedded(port=0)
    old = srv.port
    c = redis.Redis(port=old)
    first, second = free_port(), free_port()
    pipe = c.pipeline(transaction=False)
    pipe.config_set("port", first)
    pipe.config_set("port", second)
    pipe.config_set("bind", "127.0.0.1 -::1")
    assert pipe.execute() == [True, True, True]
    assert redis.Redis(port=second).ping() is True
    assert refused(old) and refused(first)
    pipe.config_set("port", first)
    pipe.config_set("port", second)
    assert pipe.execute() == [True, True]
    assert redis.Redis(port=second).ping() is True
    assert refused(first)
    c.close()
