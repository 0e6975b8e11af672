"""Arrays over real sockets with redis-py's own array commands: sync and
asyncio clients, RESP2 and RESP3, keyspace events, DEBUG RELOAD, DUMP and
RESTORE, and the AOF of a server killed with SIGKILL.  Replies follow the
pages at redis.io/commands/ar*/ and the data-type page
redis.io/docs/latest/develop/data-types/arrays/ (no redis-server here has
arrays to compare with)."""

from __future__ import annotations

import asyncio

import pytest
import redis
import redis.asyncio
from redis.commands.core import ArrayAggregateOperations

from tests.support.redis_oracle import free_port

TIMEOUT = 5.0


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def client(tidelog, request):
    c = redis.Redis(port=tidelog.port, protocol=request.param)
    yield c
    c.config_set("notify-keyspace-events", "")
    c.close()


def test_basic_usage_from_the_data_type_page(client):
    assert client.arset("events:1", 0, "login", "click", "purchase") == 3
    assert client.arget("events:1", 0) == b"login"
    assert client.arget("events:1", 999) is None
    assert client.armset("metrics", {0: "10", 5: "20", 100: "30"}) == 3
    assert client.armget("metrics", 0, 5, 100, 999) == [b"10", b"20", b"30", None]
    assert client.arset("sparse", 0, "a") == 1
    assert client.arset("sparse", 1000000, "b") == 1
    assert client.arlen("sparse") == 1000001
    assert client.arcount("sparse") == 2
    assert client.type("sparse") == b"array"


def test_ranges_scans_and_aggregates(client):
    client.armset("a", {2: "two", 5: "5", 6: "1.5"})
    assert client.argetrange("a", 1, 3) == [None, b"two", None]
    assert client.arscan("a", 0, 100) == [[2, b"two"], [5, b"5"], [6, b"1.5"]]
    assert client.arscan("a", 100, 0, limit=1) == [[6, b"1.5"]]
    assert client.execute_command("ARGREP", "a", "-", "+", "GLOB", "t*") == [2]
    assert client.arop("a", 0, 100, ArrayAggregateOperations.SUM) == b"6.5"
    assert client.arop("a", 0, 100, ArrayAggregateOperations.USED) == 3
    assert client.ardelrange("a", (0, 5)) == 2
    assert client.arcount("a") == 1
    # a length above 2**63 - 1: a bulk string in RESP2, a big number in RESP3
    client.arset("big", 2**64 - 2, "x")
    assert int(client.arlen("big")) == 2**64 - 1


def test_ring_buffer_and_cursor(client):
    assert client.arring("r", 3, "a", "b", "c", "d") == 0
    assert client.arlastitems("r", 3) == [b"b", b"c", b"d"]
    assert client.arlastitems("r", 3, rev=True) == [b"d", b"c", b"b"]
    assert client.arinsert("q", "x", "y") == 1
    assert client.arnext("q") == 2
    assert client.arseek("q", 10) == 1
    assert client.arinsert("q", "z") == 10
    info = {k.decode() if isinstance(k, bytes) else k: v for k, v in client.arinfo("q").items()}
    assert info["count"] == 3 and info["len"] == 11 and info["next-insert-index"] == 11
    assert info["slice-size"] == 4096 and info["slices"] == 1
    full = {k.decode() if isinstance(k, bytes) else k: v
            for k, v in client.arinfo("q", full=True).items()}
    assert full["sparse-slices"] == 1 and float(full["avg-sparse-size"]) == 4.0
    assert float(full["avg-dense-fill"]) == 0.0


def test_errors_and_wrongtype(client):
    client.set("s", "v")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        client.arget("s", 0)
    client.arset("a", 0, "x")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        client.lpush("a", "x")
    with pytest.raises(redis.ResponseError, match="invalid array index"):
        client.execute_command("ARGET", "a", "-1")
    with pytest.raises(redis.ResponseError, match="no such key"):
        client.execute_command("ARINFO", "missing")


def test_keyspace_events(client, tidelog):
    client.config_set("notify-keyspace-events", "KEA")
    sub = redis.Redis(port=tidelog.port).pubsub()
    sub.psubscribe("__keyevent@0__:*")
    assert sub.get_message(timeout=TIMEOUT)["type"] == "psubscribe"
    client.arset("k", 0, "x")
    client.arinsert("k", "y")
    client.ardel("k", 0, 1)
    seen = []
    while len(seen) < 4:
        message = sub.get_message(timeout=TIMEOUT)
        assert message is not None, seen
        seen.append(message["channel"].split(b":")[-1])
    assert seen == [b"arset", b"arinsert", b"ardel", b"del"]
    sub.close()


def test_dump_restore_and_debug_reload(client):
    client.arinsert("a", "1", "2.5", "short", "a longer value")
    client.arset("a", 4096 * 3, "far")
    payload = client.dump("a")
    assert payload[0] == 28 and payload[-10:-8] == b"\x0f\x00"   # type 28, RDB 15
    client.restore("b", 0, payload)
    assert client.arscan("b", 0, 2**64 - 2) == client.arscan("a", 0, 2**64 - 2)
    assert client.arnext("b") == 4
    assert client.execute_command("DEBUG", "RELOAD") in (b"OK", "OK", True)
    assert client.arscan("a", 0, 2**64 - 2) == [[0, b"1"], [1, b"2.5"], [2, b"short"],
                                               [3, b"a longer value"], [12288, b"far"]]
    assert client.arnext("a") == 4


def test_asyncio_client(tidelog):
    async def main():
        for protocol in (2, 3):
            c = redis.asyncio.Redis(port=tidelog.port, protocol=protocol)
            await c.delete("aa")
            assert await c.arset("aa", 0, "x", "y") == 2
            assert await c.argetrange("aa", 0, 2) == [b"x", b"y", None]
            assert await c.arring("aa", 2, "z") == 0
            assert await c.arlastitems("aa", 2) == [b"y", b"z"]
            await c.aclose()
    asyncio.run(main())


def test_aof_after_sigkill(processes):
    port = free_port()
    args = ["--port", str(port), "--dir", str(processes.workdir / "data"),
            "--appendonly", "yes", "--appendfsync", "always"]
    proc = processes.tidelog(args, port=port)
    with redis.Redis(port=port) as r:
        r.arset("a", 0, "x", "y")
        r.arinsert("a", "z")
        r.arring("ring", 2, "p", "q", "s")
        r.arseek("ring", 7)
        r.ardel("a", 0)
        want = (r.arscan("a", 0, 100), r.arnext("a"), r.arscan("ring", 0, 100), r.arnext("ring"))
    proc.sigkill()
    proc = processes.tidelog(args, port=port)
    with redis.Redis(port=port) as r:
        assert (r.arscan("a", 0, 100), r.arnext("a"), r.arscan("ring", 0, 100),
                r.arnext("ring")) == want
        assert r.bgrewriteaof()
        for _ in range(100):
            if r.info("persistence")["aof_rewrite_in_progress"] == 0:
                break
            import time
            time.sleep(0.05)
    proc.sigkill()
    proc = processes.tidelog(args, port=port)
    with redis.Redis(port=port) as r:
        assert (r.arscan("a", 0, 100), r.arnext("a"), r.arscan("ring", 0, 100),
                r.arnext("ring")) == want


def _array_state(c: redis.Redis) -> dict:
    return {key: (c.arscan(key, 0, 2**64 - 2), c.arnext(key)) for key in sorted(c.keys("ar:*"))}


def test_replica_gets_the_snapshot_and_the_commands(processes, tmp_path):
    from tests.support.waits import wait_until
    primary_port, replica_port = free_port(), free_port()
    (tmp_path / "p").mkdir()
    (tmp_path / "r").mkdir()
    primary_srv = processes.tidelog(["--port", str(primary_port), "--dir", str(tmp_path / "p"),
                                     "--save", ""], port=primary_port)
    primary = primary_srv.client()
    primary.arinsert("ar:q", "a", "b", "1.5", "12")     # before the sync: in the snapshot
    primary.arring("ar:r", 3, "x", "y", "z", "w")
    replica_srv = processes.tidelog(["--port", str(replica_port), "--dir", str(tmp_path / "r"),
                                     "--save", "", "--replicaof", "127.0.0.1",
                                     str(primary_port)], port=replica_port)
    replica = replica_srv.client()
    wait_until(lambda: replica.info("replication")["master_link_status"] == "up", timeout=30)
    primary.arinsert("ar:q", "c")                       # after: the commands themselves
    primary.arring("ar:r", 2, "v")
    primary.arseek("ar:q", 100)
    primary.ardelrange("ar:q", (0, 1))
    primary.set("sync-marker", "1")
    assert primary.wait(1, 10_000) == 1
    assert _array_state(replica) == _array_state(primary)
