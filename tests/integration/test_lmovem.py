"""LMOVEM and BLMOVEM (Redis 8.10) from redis-py over real sockets, sync and
asyncio, RESP2 and RESP3: replies, errors, a client blocked on EXACTLY served
once the source holds enough, a timeout, and the AOF bringing the moves back
after a restart.  Pages: https://redis.io/docs/latest/commands/lmovem/,
https://redis.io/docs/latest/commands/blmovem/."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest
import redis
import redis.asyncio

from tidelog.server.embed import EmbeddedServer


def _wait_blocked(srv, n: int) -> None:
    deadline = time.monotonic() + 10
    while srv.call(lambda: srv.engine.blocked_clients) != n:
        assert time.monotonic() < deadline, "the client did not block"
        time.sleep(0.01)


@pytest.mark.parametrize("protocol", [2, 3])
def test_lmovem_replies_and_errors(tidelog, protocol):
    with redis.Redis(port=tidelog.port, protocol=protocol) as c:
        c.rpush("src", 1, 2, 3, 4, 5)
        assert c.execute_command("LMOVEM", "src", "dst", "LEFT", "RIGHT") == [b"1"]
        assert c.execute_command("LMOVEM", "src", "dst", "LEFT", "LEFT", "COUNT", 2, "OBO") == [
            b"3", b"2"]
        assert c.execute_command("LMOVEM", "src", "dst", "RIGHT", "RIGHT", "EXACTLY", 3,
                                 "BULK") is None
        assert c.execute_command("LMOVEM", "src", "dst", "RIGHT", "RIGHT", "EXACTLY", 2,
                                 "BULK") == [b"4", b"5"]
        assert c.exists("src") == 0
        assert c.lrange("dst", 0, -1) == [b"3", b"2", b"1", b"4", b"5"]
        assert c.execute_command("LMOVEM", "src", "dst", "LEFT", "RIGHT") is None
        c.rpush("src", "a")
        with pytest.raises(redis.ResponseError, match="^count should be greater than 0$"):
            c.execute_command("LMOVEM", "src", "dst", "LEFT", "RIGHT", "COUNT", 0, "BULK")
        with pytest.raises(redis.ResponseError, match="^syntax error$"):
            c.execute_command("LMOVEM", "src", "dst", "LEFT", "RIGHT", "COUNT", 1)
        c.set("str", "v")
        with pytest.raises(redis.ResponseError, match="^WRONGTYPE"):
            c.execute_command("LMOVEM", "src", "str", "LEFT", "RIGHT", "COUNT", 1, "BULK")
        assert c.lrange("src", 0, -1) == [b"a"]


@pytest.mark.parametrize("protocol, null", [(2, b"*-1\r\n"), (3, b"_\r\n")])
def test_nothing_moved_is_a_null_array_on_the_wire(tidelog, protocol, null):
    hello = b"HELLO 3\r\n" if protocol == 3 else b""
    with socket.create_connection(("127.0.0.1", tidelog.port), timeout=10) as s:
        s.sendall(hello + b"LMOVEM nosuch dst LEFT RIGHT\r\nPING\r\n")
        got = b""
        while not got.endswith(b"+PONG\r\n"):
            got += s.recv(65536)  # the socket's timeout fails the test if PONG never comes
        assert got.endswith(null + b"+PONG\r\n")


@pytest.mark.parametrize("protocol", [2, 3])
def test_blmovem_exactly_waits_for_enough(tidelog, protocol):
    result = {}

    def blocked():
        with redis.Redis(port=tidelog.port, protocol=protocol) as other:
            result["moved"] = other.execute_command(
                "BLMOVEM", "src", "dst", "LEFT", "RIGHT", 0, "EXACTLY", 3, "BULK")

    worker = threading.Thread(target=blocked)
    worker.start()
    _wait_blocked(tidelog, 1)
    with redis.Redis(port=tidelog.port, protocol=protocol) as c:
        c.rpush("src", 1, 2)
        assert c.lrange("src", 0, -1) == [b"1", b"2"]
        assert tidelog.call(lambda: tidelog.engine.blocked_clients) == 1
        c.linsert("src", "AFTER", "2", "3")
        worker.join(10)
        assert result == {"moved": [b"1", b"2", b"3"]}
        assert c.lrange("dst", 0, -1) == [b"1", b"2", b"3"] and c.exists("src") == 0
        assert c.execute_command("BLMOVEM", "src", "dst", "LEFT", "RIGHT", 0.05, "EXACTLY", 1,
                                 "OBO") is None


def test_asyncio_blmovem_count(tidelog):
    async def run():
        waiter = redis.asyncio.Redis(port=tidelog.port, protocol=3)
        pusher = redis.asyncio.Redis(port=tidelog.port, protocol=2)
        try:
            task = asyncio.ensure_future(waiter.execute_command(
                "BLMOVEM", "src", "dst", "RIGHT", "LEFT", 0, "COUNT", 5, "OBO"))
            while tidelog.call(lambda: tidelog.engine.blocked_clients) != 1:
                await asyncio.sleep(0.01)
            await pusher.rpush("src", "a", "b")
            assert await asyncio.wait_for(task, 10) == [b"a", b"b"]
            assert await pusher.lrange("dst", 0, -1) == [b"a", b"b"]
            assert await pusher.execute_command("LMOVEM", "dst", "src", "LEFT", "RIGHT") == [b"a"]
        finally:
            await waiter.aclose()
            await pusher.aclose()

    asyncio.run(run())


def test_moves_survive_a_restart_through_the_aof(tmp_path):
    options = dict(port=0, dir=str(tmp_path), save="", appendonly="yes", appendfsync="always")
    srv = EmbeddedServer(**options).start()
    try:
        with redis.Redis(port=srv.port) as r:
            r.rpush("src", *range(10))
            r.execute_command("LMOVEM", "src", "a", "LEFT", "LEFT", "COUNT", 3, "OBO")
            r.execute_command("LMOVEM", "src", "b", "RIGHT", "LEFT", "EXACTLY", 2, "BULK")
            result = {}

            def blocked():
                with redis.Redis(port=srv.port) as other:
                    result["moved"] = other.execute_command(
                        "BLMOVEM", "q", "c", "LEFT", "RIGHT", 0, "EXACTLY", 2, "OBO")

            worker = threading.Thread(target=blocked)
            worker.start()
            _wait_blocked(srv, 1)
            r.rpush("q", "x")
            r.rpush("q", "y", "z")
            worker.join(10)
            assert result == {"moved": [b"x", b"y"]}
            before = {k: r.lrange(k, 0, -1) for k in ("src", "a", "b", "c", "q")}
    finally:
        srv.stop()
    srv = EmbeddedServer(**options).start()
    try:
        with redis.Redis(port=srv.port) as r:
            assert {k: r.lrange(k, 0, -1) for k in ("src", "a", "b", "c", "q")} == before
            assert before["a"] == [b"2", b"1", b"0"] and before["b"] == [b"8", b"9"]
    finally:
        srv.stop()
