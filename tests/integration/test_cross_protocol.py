"""Cross protocol scripting against a real tidelog-server: an HTTP POST
closes its connection and sets nothing, the warning Redis logs is in the log
file once however many attacks a minute brings, and the other clients keep
being served; a script running past busy-reply-threshold does not stop the
guard either (Redis checks POST/Host: before it answers -BUSY)."""

from __future__ import annotations

import socket
import threading

import redis

from tests.support.rawclient import RawClient
from tests.support.redis_oracle import free_port
from tidelog.engine import CROSS_PROTOCOL_WARNING

HTTP_POST = (b"POST / HTTP/1.1\r\nHost: 127.0.0.1:6379\r\nContent-Type: text/plain\r\n"
             b"Content-Length: 13\r\n\r\nSET pwned 1\r\n")


def until_closed(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        got = b""
        try:
            while chunk := sock.recv(65536):
                got += chunk
        except ConnectionResetError:
            pass
        return got


def test_logged_once_and_the_others_are_served(processes, tmp_path) -> None:
    port = free_port()
    logfile = tmp_path / "tidelog.log"
    srv = processes.tidelog(["--port", str(port), "--save", "", "--dir", str(tmp_path),
                             "--logfile", str(logfile)], port=port)
    with srv.client() as r:
        r.set("kept", "1")
        assert until_closed(port, HTTP_POST) == b""
        assert until_closed(port, b"Host: evil.example\r\nSET pwned 1\r\n") == b""
        assert r.exists("pwned") == 0
        assert r.get("kept") == "1"  # a client connected before: still served
        with srv.client() as fresh:
            assert fresh.ping()  # and new ones are accepted
        lines = [line for line in logfile.read_text().splitlines()
                 if CROSS_PROTOCOL_WARNING in line]
        assert len(lines) == 1, lines
    assert srv.terminate() == 0


def test_while_a_script_is_busy(embedded) -> None:
    srv = embedded(port=0, save="", busy_reply_threshold=50)
    port = srv.port
    done: list[object] = []
    early = RawClient(port)  # connected before the script: served by its count hook
    assert early.call("PING") == b"+PONG\r\n"

    def spin() -> None:
        with redis.Redis(port=port, socket_timeout=60) as r:
            try:
                done.append(r.eval("while true do end", 0))
            except redis.ResponseError as exc:
                done.append(exc)

    thread = threading.Thread(target=spin)
    thread.start()
    try:
        with redis.Redis(port=port, socket_timeout=30) as other:
            while True:  # until the script is past the threshold
                try:
                    other.ping()
                except redis.BusyLoadingError:
                    raise
                except redis.ResponseError as exc:
                    assert str(exc).startswith("BUSY")
                    break
            assert until_closed(port, HTTP_POST) == b""  # accepted while busy
            early.send_raw(HTTP_POST)
            assert early.read_until_closed() == b""
            assert other.script_kill()
    finally:
        thread.join(60)
        early.close()
    assert isinstance(done[0], redis.ResponseError)
    with redis.Redis(port=port, socket_timeout=30) as r:
        assert r.exists("pwned") == 0
