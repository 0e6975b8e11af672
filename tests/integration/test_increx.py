"""INCREX (Redis 8.8) from redis-py over real sockets, sync and asyncio,
RESP2 and RESP3: replies (integers; with BYFLOAT bulk strings in RESP2 and
doubles in RESP3), errors, TTLs; then what it propagates, replayed by
Debian's redis-server 7.0.15 (which has no INCREX) as a replica and from
Tidelog's AOF, reaching the same values and the same absolute deadlines.
Page: https://redis.io/docs/latest/commands/increx/."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import time

import pytest
import redis
import redis.asyncio

from tests.integration.test_replication import caught_up, start_primary, start_replica
from tests.support.redis_oracle import REDIS_SERVER, free_port, wait_for_port
from tidelog.server.embed import EmbeddedServer

needs_redis = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed")


@pytest.mark.parametrize("protocol", [2, 3])
def test_replies_and_errors(tidelog, protocol):
    with redis.Redis(port=tidelog.port, protocol=protocol) as c:
        assert c.execute_command("INCREX", "n") == [1, 1]
        assert c.increx("n", byint=4) == [5, 4]
        assert c.increx("n", byint=10, ubound=12) == [5, 0]
        assert c.increx("n", byint=10, ubound=12, saturate=True) == [12, 7]
        c.set("f", "1.5")
        got = c.execute_command("INCREX", "f", "BYFLOAT", "0.25", "LBOUND", 0, "UBOUND", 2)
        assert got == ([1.75, 0.25] if protocol == 3 else [b"1.75", b"0.25"])
        assert c.get("f") == b"1.75"
        got = c.execute_command("INCREX", "f", "BYFLOAT", "0.7", "UBOUND", 2, "SATURATE")
        assert got == ([2.0, 0.25] if protocol == 3 else [b"2", b"0.25"])
        assert c.increx("missing", byint=15, ubound=10) == [0, 0]
        assert c.exists("missing") == 0
        c.set("t", 10, ex=60)
        assert c.increx("t", byint=5, ubound=12, ex=600) == [10, 0]
        assert 0 < c.ttl("t") <= 60
        assert c.increx("t", byint=1, ex=600, enx=True) == [11, 1]
        assert 0 < c.ttl("t") <= 60
        assert c.increx("t", persist=True) == [12, 1]
        assert c.ttl("t") == -1
        assert c.increx("t", px=100_000) == [13, 1]
        assert 0 < c.pttl("t") <= 100_000
        for argv, message in (
                (["BYINT", 1, "BYFLOAT", 1], "^syntax error$"),
                (["EX", 10, "PX", 10], "^syntax error$"),
                (["ENX"], "^ENX flag requires an expiration$"),
                (["BYINT", "x"], "^Increment is not an integer or out of range$"),
                (["BYFLOAT", "inf"], "^BYFLOAT increment cannot be Infinity$"),
                (["LBOUND", 10, "UBOUND", 5], "^LBOUND can't be greater than UBOUND$"),
                (["EX", 0], "^invalid expire time in 'increx' command$")):
            with pytest.raises(redis.ResponseError, match=message):
                c.execute_command("INCREX", "n", *argv)
        c.rpush("l", "a")
        with pytest.raises(redis.ResponseError, match="^WRONGTYPE"):
            c.increx("l")
        assert c.get("n") == b"12"


@pytest.mark.parametrize("protocol, expected", [
    (2, b"*2\r\n$4\r\n1.75\r\n$4\r\n0.25\r\n*2\r\n:5\r\n:5\r\n*2\r\n$1\r\n0\r\n$1\r\n0\r\n"),
    (3, b"*2\r\n,1.75\r\n,0.25\r\n*2\r\n:5\r\n:5\r\n*2\r\n,0\r\n,0\r\n"),
])
def test_reply_types_on_the_wire(tidelog, protocol, expected):
    hello = b"HELLO 3\r\n" if protocol == 3 else b""
    with socket.create_connection(("127.0.0.1", tidelog.port), timeout=10) as s:
        s.sendall(hello + b"SET f 1.5\r\nINCREX f BYFLOAT 0.25\r\nINCREX i BYINT 5\r\n"
                          b"INCREX g BYFLOAT 1 UBOUND -1\r\nPING\r\n")
        got = b""
        while not got.endswith(b"+PONG\r\n"):
            got += s.recv(65536)  # the socket's timeout fails the test if PONG never comes
    assert got.endswith(b"+OK\r\n" + expected + b"+PONG\r\n")


def test_asyncio(tidelog):
    async def run():
        for protocol in (2, 3):
            c = redis.asyncio.Redis(port=tidelog.port, protocol=protocol)
            try:
                await c.delete("a")
                assert await c.increx("a", byint=3, ex=100) == [3, 3]
                assert 0 < await c.ttl("a") <= 100
                got = await c.increx("a", byfloat=0.5, ubound=3, saturate=True)
                assert [float(v) for v in got] == [3.0, 0.0]
                async with c.pipeline(transaction=True) as p:
                    p.increx("a", byint=-10, lbound=0)
                    p.increx("a", byint=-10, lbound=0, saturate=True)
                    assert await p.execute() == [[3, 0], [0, -3]]
            finally:
                await c.aclose()

    asyncio.run(run())


def load(c: redis.Redis) -> None:
    """Every propagated form: KEEPTTL, PXAT (EX/PX/EXAT/PXAT, ENX on a key
    without a TTL), plain SET (PERSIST), DEL (a past deadline), a saturated
    value, floats, and skipped steps that send nothing."""
    now_s = int(time.time())
    c.set("plain", 10)
    c.increx("plain", byint=5)
    c.increx("plain", byfloat=0.5)
    c.increx("ex", byint=2, ex=500)
    c.increx("px", px=400_000)
    c.increx("exat", exat=now_s + 300)
    c.increx("pxat", byfloat=1.25, pxat=now_s * 1000 + 200_000)
    c.set("enx", 1, ex=700)
    c.increx("enx", byint=1, ex=10, enx=True)
    c.set("enx2", 1)
    c.increx("enx2", byint=1, ex=10, enx=True)
    c.set("persist", 1, ex=700)
    c.increx("persist", persist=True)
    c.set("gone", 1)
    c.increx("gone", exat=1)
    c.set("sat", 50)
    c.increx("sat", byint=100, ubound=80, saturate=True)
    c.increx("sat", byint=100, ubound=80)
    c.set("ld", "0.1")
    c.increx("ld", byfloat="0.2")
    c.increx("ld", byfloat="1e-15")


KEYS = ("plain", "ex", "px", "exat", "pxat", "enx", "enx2", "persist", "gone", "sat", "ld")


def state(c: redis.Redis) -> dict:
    """Value and absolute deadline (ms) of each key: exact, since INCREX goes
    out with PXAT, not a relative time."""
    return {k: (c.get(k), c.execute_command("PEXPIRETIME", k)) for k in KEYS}


@needs_redis
def test_propagation_replayed_by_a_redis7_replica(processes, tmp_path):
    primary_srv = start_primary(processes, tmp_path)
    primary = primary_srv.client()
    _, replica = start_replica(processes, primary_srv.port)
    load(primary)
    assert caught_up(primary)
    want = state(primary)
    assert want["plain"] == ("15.5", -1) and want["sat"] == ("80", -1)
    assert want["gone"] == (None, -2) and want["persist"][1] == -1
    assert want["ld"][0] == "0.300000000000001"
    assert all(want[k][1] > 0 for k in ("ex", "px", "exat", "pxat", "enx", "enx2"))
    assert state(replica) == want


@needs_redis
def test_propagation_replayed_from_the_aof_by_redis7(processes, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    srv = processes.tidelog(["--port", str(port), "--dir", str(data), "--save", "",
                             "--appendonly", "yes", "--appendfsync", "always"], port=port)
    with redis.Redis(port=port, decode_responses=True) as c:
        load(c)
        want = state(c)
    assert srv.terminate() == 0  # a clean shutdown: everything on disk
    redis_port = free_port()
    processes.popen(
        [REDIS_SERVER, "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "yes", "--dir", str(data)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(redis_port)
    with redis.Redis(port=redis_port, decode_responses=True) as r:
        deadline = time.monotonic() + 20
        while r.info("persistence")["loading"]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert state(r) == want


def test_survives_a_restart_through_the_aof(tmp_path):
    options = dict(port=0, dir=str(tmp_path), save="", appendonly="yes", appendfsync="always")
    srv = EmbeddedServer(**options).start()
    try:
        with redis.Redis(port=srv.port, decode_responses=True) as c:
            load(c)
            want = state(c)
    finally:
        srv.stop()
    srv = EmbeddedServer(**options).start()
    try:
        with redis.Redis(port=srv.port, decode_responses=True) as c:
            assert state(c) == want
    finally:
        srv.stop()
