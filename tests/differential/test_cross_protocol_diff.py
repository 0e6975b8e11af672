"""Cross protocol scripting, raw bytes to Tidelog and to redis-server: an
HTTP request (what a web page can make a browser send to 127.0.0.1:6379)
closes the connection at its ``POST`` line or ``Host:`` header, before the
body's commands run; both servers answer nothing of that read and keep
serving everyone else."""

from __future__ import annotations

import socket

import pytest

from tests.support.processes import RedisServer
from tests.support.rawclient import RawClient
from tidelog.server.embed import EmbeddedServer

BODY = b"SET pwned 1\r\n"
HTTP_POST = (b"POST / HTTP/1.1\r\n"
             b"Host: 127.0.0.1:6379\r\n"
             b"User-Agent: Mozilla/5.0 (X11; Linux x86_64)\r\n"
             b"sec-ch-ua: \"Chromium\";v=\"118\"\r\n"
             b"Content-Type: text/plain\r\n"
             b"Content-Length: %d\r\n"
             b"\r\n" % len(BODY)) + BODY


def until_closed(port: int, data: bytes, timeout: float = 10.0) -> bytes:
    """Send ``data`` on a new connection; what came back before the server
    closed it (a reset counts as closed).  Fails if it stays open."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        got = b""
        try:
            while chunk := sock.recv(65536):
                got += chunk
        except ConnectionResetError:
            pass
        except TimeoutError:
            pytest.fail(f"the connection to {port} stayed open; got {got!r}")
        return got


def both_close(differ, tidelog, oracle_server, data: bytes) -> None:
    assert until_closed(tidelog.port, data) == b""
    assert until_closed(oracle_server.port, data) == b""


def test_an_http_post_sets_nothing(differ, tidelog, oracle_server) -> None:
    both_close(differ, tidelog, oracle_server, HTTP_POST)
    assert differ.check("EXISTS", "pwned") == b":0\r\n"
    assert differ.check("PING") == b"+PONG\r\n"  # the server serves its other clients


def test_a_host_header_line(differ, tidelog, oracle_server) -> None:
    both_close(differ, tidelog, oracle_server, b"Host: 127.0.0.1:6379\r\n" + BODY)
    both_close(differ, tidelog, oracle_server, b"hOsT: x\r\nSET pwned 1\r\n")
    assert differ.check("EXISTS", "pwned") == b":0\r\n"


def test_multibulk_and_lower_case(differ, tidelog, oracle_server) -> None:
    both_close(differ, tidelog, oracle_server,
               b"*1\r\n$4\r\npost\r\n*3\r\n$3\r\nSET\r\n$5\r\npwned\r\n$1\r\n1\r\n")
    both_close(differ, tidelog, oracle_server, b"*2\r\n$5\r\nHost:\r\n$1\r\nx\r\n" + BODY)
    assert differ.check("EXISTS", "pwned") == b":0\r\n"


def test_what_ran_before_stays_but_its_replies_are_dropped(differ, tidelog,
                                                            oracle_server) -> None:
    both_close(differ, tidelog, oracle_server,
               b"SET before 1\r\nPING\r\nMULTI\r\nPOST / HTTP/1.0\r\nSET after 1\r\n")
    assert differ.check("MGET", "before", "after") == b"*2\r\n$1\r\n1\r\n$-1\r\n"


def test_subscribed_clients_too(differ, tidelog, oracle_server) -> None:
    both_close(differ, tidelog, oracle_server, b"SUBSCRIBE c\r\nPOST /\r\n")
    both_close(differ, tidelog, oracle_server, b"HELLO 3\r\nSUBSCRIBE c\r\nHost: x\r\n")


def test_an_earlier_read_is_answered(tidelog, oracle_server) -> None:
    for port in (tidelog.port, oracle_server.port):
        with RawClient(port) as c:
            assert c.call("PING") == b"+PONG\r\n"
            c.send_raw(b"Host: x\r\n")
            assert c.read_until_closed() == b""


@pytest.mark.parametrize("line", [b"Host:x", b"poster", b"host", b"GET / HTTP/1.1"])
def test_near_misses_are_ordinary_commands(differ, line: bytes) -> None:
    """Only the names ``post`` and ``host:`` themselves close."""
    for c in (differ.ours, differ.theirs):
        c.send_raw(line + b"\r\n")
    ours, theirs = differ.ours.read_reply(), differ.theirs.read_reply()
    assert ours == theirs and ours.startswith(b"-ERR ")
    differ.check("PING")


def test_before_authentication(tmp_path, oracle_server) -> None:
    """With a password set, POST closes before -NOAUTH would be answered."""
    redis_srv = RedisServer("--requirepass", "pw")
    ours = EmbeddedServer(port=0, save="", dir=str(tmp_path), requirepass="pw").start()
    try:
        for port in (ours.port, redis_srv.port):
            assert until_closed(port, HTTP_POST) == b""
            with RawClient(port) as c:
                assert c.call("PING").startswith(b"-NOAUTH")
                assert c.call("AUTH", "pw") == b"+OK\r\n"
                assert c.call("EXISTS", "pwned") == b":0\r\n"
    finally:
        ours.stop()
        redis_srv.stop()
