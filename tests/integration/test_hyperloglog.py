"""HyperLogLog over real sockets with redis-py: sync and asyncio clients,
RESP2 and RESP3, keyspace events, transactions and WATCH, ACL's
@hyperloglog category, the command table's entries, and
``hll-sparse-max-bytes`` from a config file."""

from __future__ import annotations

import pytest
import redis
import redis.asyncio

from tests.support.redis_oracle import free_port

TIMEOUT = 5.0


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def client(tidelog, request):
    c = redis.Redis(port=tidelog.port, protocol=request.param)
    yield c
    c.config_set("hll-sparse-max-bytes", 3000)
    c.close()


def test_pfadd_pfcount_pfmerge(client):
    assert client.pfadd("a", "x", "y", "z") == 1
    assert client.pfadd("a", "x") == 0
    assert client.pfcount("a") == 3
    assert client.pfadd("b", *[f"e{i}" for i in range(100)]) == 1
    assert client.pfcount("b") == 100         # redis-server 7.0.15's answers, here and below
    assert client.pfcount("a", "b", "missing") == 103
    assert client.pfmerge("m", "a", "b") is True
    assert client.pfcount("m") == 103
    assert client.pfcount("missing") == 0
    assert client.type("m") == b"string"
    assert client.object("encoding", "m") == b"raw"
    value = client.get("a")
    assert value[:5] == b"HYLL\x01" and client.strlen("a") == len(value)


def test_the_header_carries_the_count(client):
    client.pfadd("h", "a", "b", "c")
    assert client.get("h")[15] & 0x80                  # stale after PFADD
    assert client.pfcount("h") == 3
    value = client.get("h")
    assert value[8:16] == (3).to_bytes(8, "little")    # stored, fresh
    client.set("copy", value)
    assert client.pfcount("copy") == 3
    client.set("liar", value[:8] + (77).to_bytes(8, "little") + value[16:])
    assert client.pfcount("liar") == 77                # the cache is trusted, as in Redis


def test_errors(client):
    client.rpush("list", "a")
    client.set("str", "not an hll")
    with pytest.raises(redis.ResponseError, match="^WRONGTYPE Operation against a key"):
        client.pfadd("list", "a")
    with pytest.raises(redis.ResponseError,
                       match=r"^WRONGTYPE Key is not a valid HyperLogLog string value\.$"):
        client.pfcount("str")
    client.set("bad", b"HYLL\x01\x00\x00\x00" + bytes(7) + b"\x80" + b"\x40\x00")
    with pytest.raises(redis.ResponseError, match="^INVALIDOBJ Corrupted HLL object detected$"):
        client.pfcount("bad")
    with pytest.raises(redis.ResponseError, match="^INVALIDOBJ Corrupted HLL object detected$"):
        client.pfmerge("dst", "bad")
    assert client.exists("dst") == 0
    with pytest.raises(redis.ResponseError, match="^The specified key does not exist$"):
        client.execute_command("PFDEBUG", "GETREG", "nokey")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'pfadd'"):
        client.execute_command("PFADD")


def test_pfdebug(client):
    client.pfadd("h", "a", "b", "c")
    assert client.execute_command("PFDEBUG", "ENCODING", "h") in (b"sparse", "sparse")
    assert client.execute_command("PFDEBUG", "DECODE", "h") == \
        b"Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603"
    assert client.execute_command("PFDEBUG", "TODENSE", "h") == 1
    assert client.execute_command("PFDEBUG", "TODENSE", "h") == 0
    assert client.strlen("h") == 12304
    registers = client.execute_command("PFDEBUG", "GETREG", "h")
    assert len(registers) == 16384
    assert {i: v for i, v in enumerate(registers) if v} == {8436: 1, 12711: 2, 15780: 1}
    with pytest.raises(redis.ResponseError, match="^HLL encoding is not sparse$"):
        client.execute_command("PFDEBUG", "DECODE", "h")


def test_promotion_follows_the_config(client):
    client.config_set("hll-sparse-max-bytes", 30)
    assert client.config_get("hll-sparse-max-bytes") == {"hll-sparse-max-bytes": "30"}
    client.pfadd("h", "a", "b")
    assert client.strlen("h") <= 30
    client.pfadd("h", *[f"x{i}" for i in range(10)])
    assert client.strlen("h") == 12304


def test_multi_exec_and_watch(client):
    client.pfadd("h", "a")
    pipe = client.pipeline(transaction=True)
    pipe.pfadd("h", "b").pfcount("h").pfmerge("m", "h").pfcount("m")
    assert pipe.execute() == [1, 2, True, 2]
    # PFCOUNT storing a fresh count changes the string: WATCH sees it
    client.pfadd("h", "c")
    other = redis.Redis(port=client.connection_pool.connection_kwargs["port"])
    with client.pipeline() as pipe:
        pipe.watch("h")
        assert other.pfcount("h") == 3
        pipe.multi()
        pipe.get("h")
        with pytest.raises(redis.WatchError):
            pipe.execute()
    # ... a cached answer does not
    with client.pipeline() as pipe:
        pipe.watch("h")
        assert other.pfcount("h") == 3
        pipe.multi()
        pipe.pfcount("h")
        assert pipe.execute() == [3]
    other.close()


def test_keyspace_events(tidelog):
    r = redis.Redis(port=tidelog.port)
    r.config_set("notify-keyspace-events", "KEA")
    p = r.pubsub()
    try:
        p.psubscribe("__keyevent@0__:*")
        assert p.get_message(timeout=TIMEOUT)["type"] == "psubscribe"
        r.pfadd("h", "a")
        r.pfadd("h", "a")           # nothing changed: no event
        r.pfcount("h")              # no event
        r.pfmerge("m", "h")         # "pfadd", as Redis names it
        got = []
        r.set("marker", "1")
        while not got or got[-1][0] != b"__keyevent@0__:set":
            m = p.get_message(timeout=TIMEOUT, ignore_subscribe_messages=True)
            assert m is not None, got
            got.append((m["channel"], m["data"]))
        assert got == [(b"__keyevent@0__:pfadd", b"h"), (b"__keyevent@0__:pfadd", b"m"),
                       (b"__keyevent@0__:set", b"marker")]
    finally:
        p.close()
        r.config_set("notify-keyspace-events", "")
        r.close()


def test_acl_category_and_command_table(client):
    assert sorted(client.acl_cat("hyperloglog")) in (
        [b"pfadd", b"pfcount", b"pfdebug", b"pfmerge", b"pfselftest"],
        ["pfadd", "pfcount", "pfdebug", "pfmerge", "pfselftest"])
    client.acl_setuser("nohll", enabled=True, nopass=True, keys="*",
                       commands=["+@all", "-@hyperloglog"])
    try:
        limited = redis.Redis(port=client.connection_pool.connection_kwargs["port"],
                              username="nohll", password="x")
        with pytest.raises(redis.exceptions.NoPermissionError):
            limited.pfadd("h", "a")
        limited.set("k", "v")
        limited.close()
    finally:
        client.acl_deluser("nohll")


def test_command_docs(raw):
    docs = raw.call("COMMAND", "DOCS", "PFMERGE")
    assert docs.startswith(b"*2\r\n$7\r\npfmerge\r\n")
    for part in (b"Merge N different HyperLogLogs into a single one.", b"2.8.9",
                 b"$11\r\nhyperloglog\r\n"):
        assert part in docs


def test_pfselftest(client):
    assert client.execute_command("PFSELFTEST") in (True, b"OK", "OK")


@pytest.mark.parametrize("protocol", [2, 3])
async def test_asyncio(tidelog, protocol):
    r = redis.asyncio.Redis(port=tidelog.port, protocol=protocol)
    try:
        assert await r.pfadd("ah", *[f"e{i}" for i in range(1000)]) == 1
        assert await r.pfcount("ah") == 1008       # redis-server 7.0.15's answer
        assert await r.pfmerge("am", "ah") is True
        assert await r.pfcount("am", "ah") == await r.pfcount("ah")
        assert (await r.get("am"))[4] == (await r.get("ah"))[4]
    finally:
        await r.aclose()


def test_config_file_sets_the_limit(processes):
    port = free_port()
    conf = processes.workdir / "tidelog.conf"
    conf.write_text("hll-sparse-max-bytes 64\n")
    processes.tidelog([str(conf), "--port", str(port), "--dir", str(processes.workdir / "data"),
                       "--save", ""], port=port)
    with redis.Redis(port=port) as r:
        assert r.config_get("hll-sparse-max-bytes") == {"hll-sparse-max-bytes": "64"}
        r.pfadd("h", *[f"x{i}" for i in range(40)])
        assert r.strlen("h") == 12304


def test_client_pause_write_holds_pfcount(tidelog):
    """PFCOUNT may write the cached count and propagate it: CLIENT PAUSE
    WRITE holds it back, as Redis holds its commands that may replicate."""
    import threading

    from tests.support.waits import wait_until

    r = redis.Redis(port=tidelog.port)
    counter = redis.Redis(port=tidelog.port)
    results: list = []
    try:
        counter.ping()
        r.pfadd("h", "a", "b")
        assert r.client_pause(60_000, all=False)
        assert r.get("h") is not None                       # plain reads go on
        worker = threading.Thread(target=lambda: results.append(counter.pfcount("h")))
        worker.start()
        wait_until(lambda: any(c["flags"] == "b" for c in r.client_list()), timeout=10)
        held = [c for c in r.client_list() if c["flags"] == "b"]
        assert len(held) == 1 and held[0]["cmd"] == "pfcount" and results == []
        assert r.client_unpause()
        worker.join(10)
        assert results == [2]
    finally:
        r.client_unpause()
        r.close()
        counter.close()
