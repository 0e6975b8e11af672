"""The operator's commands from redis-py over real sockets: MONITOR,
SLOWLOG, CLIENT PAUSE (sync and asyncio)."""

from __future__ import annotations

import time

import redis

from tests.support.rawclient import RawClient, encode_command


def test_monitor_with_redis_py(tidelog, r):
    worker = redis.Redis(port=tidelog.port, protocol=2)
    try:
        worker.ping()  # connected (its CLIENT SETINFO calls done) before monitoring
        with r.monitor() as m:
            worker.set("greeting", "hello world")
            pipe = worker.pipeline(transaction=False)
            for i in range(5):  # one pipelined run: each call is shown
                pipe.xadd("s", {"n": i}, id=f"{i + 1}-0")
            pipe.execute()
            worker.get("greeting")
            seen = [m.next_command() for _ in range(7)]
        commands = [s["command"] for s in seen]
        assert commands[0] == "SET greeting hello world"
        assert commands[1:6] == [f"XADD s {i + 1}-0 n {i}" for i in range(5)]
        assert commands[6] == "GET greeting"
        assert all(s["db"] == 0 and s["client_type"] == "tcp" for s in seen)
    finally:
        worker.close()


def test_monitor_sees_pipelined_runs_per_call(tidelog):
    """Engine.execute_run takes a pipelined burst as one; a monitor still
    sees one line per call, in order."""
    with RawClient(tidelog.port) as watcher, RawClient(tidelog.port) as worker:
        assert watcher.call("MONITOR") == b"+OK\r\n"
        burst = [["XADD", "s", "*", "f", str(i)] for i in range(50)]
        worker.send_raw(b"".join(encode_command(c) for c in burst))
        for _ in burst:
            assert worker.read_reply(timeout=5).startswith(b"$")
        lines = [watcher.read_reply(timeout=5) for _ in burst]
        assert [line.rsplit(b" ", 1)[1] for line in lines] == \
            [b'"%d"\r\n' % i for i in range(50)]
    deadline = time.monotonic() + 10  # the server sees the close a moment later
    while tidelog.engine.monitors and time.monotonic() < deadline:
        time.sleep(0.01)
    assert tidelog.engine.monitors == []


def test_slowlog_with_redis_py(r):
    r.config_set("slowlog-log-slower-than", 0)
    try:
        r.slowlog_reset()
        r.client_setname("ops")
        r.set("k", "v" * 200)
        entries = r.slowlog_get(3)
        assert [e["command"] for e in entries][:2] == [
            b"SET k " + b"v" * 128 + b"... (72 more bytes)", b"CLIENT SETNAME ops"]
        assert entries[0]["client_name"] == b"ops"
        assert entries[0]["id"] > entries[1]["id"]
        assert r.slowlog_len() >= 3
    finally:
        r.config_set("slowlog-log-slower-than", 10000)


def test_latency_events_from_slow_commands(tidelog, r):
    """A command at or over latency-monitor-threshold is a LATENCY sample
    (DEBUG SLEEP: a command, not a fast one)."""
    r.config_set("latency-monitor-threshold", 5)
    try:
        r.latency_reset()
        r.execute_command("DEBUG", "SLEEP", "0.02")
        r.ping()
        latest = r.latency_latest()
        assert [row[0] for row in latest] == [b"command"]
        assert latest[0][2] >= 5 and latest[0][3] == latest[0][2]
        assert len(r.latency_history("command")) == 1
        assert r.execute_command("LATENCY", "GRAPH", "command").startswith(b"command - high")
        assert b"1. command: 1 latency spikes" in r.execute_command("LATENCY", "DOCTOR")
    finally:
        r.config_set("latency-monitor-threshold", 0)


def _wait_for(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_client_pause_write_holds_writes_in_order(tidelog, r):
    import threading

    writer = redis.Redis(port=tidelog.port, protocol=2)
    results: list = []
    try:
        writer.ping()
        r.set("k", "0")
        assert r.client_pause(60_000, all=False)  # WRITE: long, ended by UNPAUSE
        assert r.get("k") == b"0"  # reads go on
        worker = threading.Thread(target=lambda: results.append(
            writer.pipeline(transaction=False).set("k", "1").incr("k").get("k").execute()))
        worker.start()
        assert _wait_for(lambda: any(c["flags"] == "b" for c in r.client_list()))
        held = [c for c in r.client_list() if c["flags"] == "b"]
        assert len(held) == 1 and held[0]["cmd"] == "set"
        assert r.get("k") == b"0" and results == []
        assert r.client_unpause()
        worker.join(10)
        assert results == [[True, 2, b"2"]]
    finally:
        r.client_unpause()
        writer.close()


async def test_client_pause_all_asyncio(tidelog):
    """A pause ALL holds every client's commands (the pausing one's too)
    until it ends; they then run in the order they came."""
    import asyncio

    import redis.asyncio as aioredis

    admin = aioredis.Redis(port=tidelog.port, protocol=3)
    other = aioredis.Redis(port=tidelog.port, protocol=3)
    try:
        await other.ping()
        await admin.client_pause(200)  # ALL, ends by itself
        first = asyncio.create_task(other.rpush("order", "other"))
        await asyncio.sleep(0)
        second = asyncio.create_task(admin.rpush("order", "admin"))
        await asyncio.wait_for(asyncio.gather(first, second), 10)
        assert tidelog.engine.pause_mode is None
        assert set(await admin.lrange("order", 0, -1)) == {b"other", b"admin"}
    finally:
        await admin.aclose()
        await other.aclose()
