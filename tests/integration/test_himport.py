"""HIMPORT (Redis 8.10) from redis-py over real sockets, sync and asyncio,
RESP2 and RESP3: replies and errors on the wire, fieldsets that belong to
one connection and go with RESET and with the connection, MULTI, the
imported hashes coming back from the AOF after a restart, and reaching a
redis-server 7.0.15 replica and a Tidelog one.

Pages: https://redis.io/docs/latest/commands/himport/,
https://redis.io/docs/latest/commands/himport-prepare/,
https://redis.io/docs/latest/commands/himport-set/,
https://redis.io/docs/latest/commands/himport-discard/,
https://redis.io/docs/latest/commands/himport-discardall/; error texts and
the WRONGTYPE rule from Redis 8.10's own tests for the command."""

from __future__ import annotations

import asyncio
import socket

import pytest
import redis
import redis.asyncio

from tests.integration.test_replication import start_primary, start_replica, start_tidelog_replica
from tests.support.waits import wait_until
from tidelog.server.embed import EmbeddedServer


def himport(c, *args):
    """A raw HIMPORT: redis-py 8.1 sends it as it is (a fieldset prepared
    this way is not in its registry, so it never prepares one itself) and
    answers True for HIMPORT SET's +OK (the wire is checked byte for byte
    in test_the_replies_on_the_wire)."""
    return c.execute_command("HIMPORT", *args)


@pytest.mark.parametrize("protocol", [2, 3])
def test_replies_and_errors(tidelog, protocol):
    with redis.Redis(port=tidelog.port, protocol=protocol, single_connection_client=True) as c:
        assert himport(c, "PREPARE", "u", "name", "email", "age") == b"OK"
        assert himport(c, "SET", "user:1", "u", "alice", "alice@example.com", "30") is True
        assert c.hgetall("user:1") == {b"name": b"alice", b"email": b"alice@example.com",
                                       b"age": b"30"}
        assert c.hkeys("user:1") == [b"age", b"name", b"email"]  # Redis's order
        with pytest.raises(redis.ResponseError, match="^value count does not match fieldset "
                                                      "field count$"):
            himport(c, "SET", "user:2", "u", "bob")
        with pytest.raises(redis.ResponseError, match="^no such fieldset$"):
            himport(c, "SET", "user:2", "nope", "bob")
        with pytest.raises(redis.ResponseError, match="^duplicate field name in fieldset$"):
            himport(c, "PREPARE", "d", "a", "b", "a")
        with pytest.raises(redis.ResponseError, match=r"^wrong number of arguments for "
                                                      r"'himport\|set' command$"):
            himport(c, "SET", "k", "u")
        with pytest.raises(redis.ResponseError, match=r"^unknown subcommand 'help'. "
                                                      r"Try HIMPORT HELP.$"):
            himport(c, "help")
        c.set("str", "v")
        with pytest.raises(redis.ResponseError, match="^WRONGTYPE"):
            himport(c, "SET", "str", "nope", "1")
        assert c.get("str") == b"v"
        c.hset("user:1", "extra", "x")
        c.expire("user:1", 100)
        assert himport(c, "SET", "user:1", "u", "bob", "b@x", "31") is True
        assert c.hgetall("user:1") == {b"age": b"31", b"name": b"bob", b"email": b"b@x"}
        assert c.ttl("user:1") == -1
        assert himport(c, "DISCARD", "u") == 1
        assert himport(c, "DISCARD", "u") == 0
        himport(c, "PREPARE", "a", "x")
        himport(c, "PREPARE", "b", "y")
        assert himport(c, "DISCARDALL") == 2


@pytest.mark.parametrize("hello, ok, one", [(b"", b"+OK\r\n", b":1\r\n"),
                                             (b"HELLO 3\r\n", b"+OK\r\n", b":1\r\n")])
def test_the_replies_on_the_wire(tidelog, hello, ok, one):
    with socket.create_connection(("127.0.0.1", tidelog.port), timeout=10) as s:
        s.sendall(hello + b"HIMPORT PREPARE fs a b\r\nHIMPORT SET k fs 1 2\r\n"
                          b"HIMPORT SET k fs 1\r\nHIMPORT DISCARD fs\r\nHIMPORT DISCARDALL\r\n"
                          b"PING\r\n")
        got = b""
        while not got.endswith(b"+PONG\r\n"):
            got += s.recv(65536)  # the socket's timeout fails the test if PONG never comes
    assert got.endswith(ok + ok + b"-ERR value count does not match fieldset field count\r\n"
                        + one + b":0\r\n+PONG\r\n")


def test_fieldsets_belong_to_their_connection_and_go_with_reset(tidelog):
    with redis.Redis(port=tidelog.port, single_connection_client=True) as a, \
            redis.Redis(port=tidelog.port, single_connection_client=True) as b:
        himport(a, "PREPARE", "fs", "f1", "f2")
        with pytest.raises(redis.ResponseError, match="^no such fieldset$"):
            himport(b, "SET", "k", "fs", "1", "2")
        assert himport(a, "SET", "k", "fs", "1", "2") is True
        a.select(2)  # SELECT keeps them
        assert himport(a, "SET", "k", "fs", "3", "4") is True
        assert a.execute_command("RESET") == "RESET"
        with pytest.raises(redis.ResponseError, match="^no such fieldset$"):
            himport(a, "SET", "k", "fs", "1", "2")
        assert a.hmget("k", "f1", "f2") == [b"1", b"2"]  # RESET went back to db 0
        assert himport(a, "DISCARDALL") == 0


def test_a_closed_connection_takes_its_fieldsets(tidelog):
    def holding():
        return [c for c in tidelog.engine.clients.values() if c.himport is not None]

    with redis.Redis(port=tidelog.port, single_connection_client=True) as c:
        himport(c, "PREPARE", "fs", *[f"f{i}" for i in range(100)])
        held = tidelog.call(holding)
        assert len(held) == 1 and len(held[0].himport) == 1
    wait_until(lambda: held[0].id not in tidelog.call(lambda: set(tidelog.engine.clients)),
               timeout=10)
    assert held[0].himport is None
    assert tidelog.call(holding) == []


def test_fieldsets_count_in_the_clients_memory(tidelog):
    # Redis's "HIMPORT PREPARE state is accounted in client memory" (CLIENT INFO's tot-mem).
    with redis.Redis(port=tidelog.port, single_connection_client=True) as c:
        def tot_mem() -> int:
            return int(c.client_info()["tot-mem"])

        empty = tot_mem()
        for i in range(100):
            himport(c, "PREPARE", f"fieldset{i}", *[f"field_{i}_{f}" for f in range(64)])
        assert tot_mem() > empty + 100 * 64 * 10
        assert himport(c, "DISCARDALL") == 100
        assert tot_mem() == empty


def test_multi_and_pipelines(tidelog):
    with redis.Redis(port=tidelog.port, protocol=3) as c:
        pipe = c.pipeline(transaction=True)
        pipe.execute_command("HIMPORT", "PREPARE", "fs", "a", "b", "c")
        pipe.execute_command("HIMPORT", "SET", "k", "fs", "v1", "v2", "v3")
        pipe.execute_command("HIMPORT", "DISCARDALL")
        pipe.hgetall("k")
        assert pipe.execute() == [b"OK", b"OK", 1, {b"a": b"v1", b"b": b"v2", b"c": b"v3"}]


@pytest.mark.parametrize("protocol", [2, 3])
def test_asyncio(tidelog, protocol):
    async def run():
        a = redis.asyncio.Redis(port=tidelog.port, protocol=protocol, single_connection_client=True)
        b = redis.asyncio.Redis(port=tidelog.port, protocol=protocol, single_connection_client=True)
        try:
            assert await a.execute_command("HIMPORT", "PREPARE", "row", "id", "score") == b"OK"
            await asyncio.gather(*[
                a.execute_command("HIMPORT", "SET", f"r:{i}", "row", i, i * 10) for i in range(50)])
            assert await b.hgetall("r:7") == {b"id": b"7", b"score": b"70"}
            with pytest.raises(redis.ResponseError, match="^no such fieldset$"):
                await b.execute_command("HIMPORT", "SET", "r:x", "row", 1, 2)
            assert await a.execute_command("HIMPORT", "DISCARD", "row") == 1
        finally:
            await a.aclose()
            await b.aclose()

    asyncio.run(run())


def test_imported_hashes_come_back_from_the_aof(tmp_path):
    options = dict(port=0, dir=str(tmp_path), save="", appendonly="yes", appendfsync="always")
    srv = EmbeddedServer(**options).start()
    try:
        with redis.Redis(port=srv.port, single_connection_client=True) as r:
            r.hset("replaced", mapping={"stale": "x", "b": "old"})
            r.expire("replaced", 1000)
            himport(r, "PREPARE", "fs", "b", "aa", "c")
            himport(r, "SET", "new", "fs", "1", "2", "3")
            himport(r, "SET", "replaced", "fs", "4", "5", "6")
            r.execute_command("MULTI")
            himport(r, "SET", "in-multi", "fs", "7", "8", "9")
            r.execute_command("EXEC")
            before = {k: list(r.hgetall(k).items()) for k in ("new", "replaced", "in-multi")}
            assert before["replaced"] == [(b"b", b"4"), (b"c", b"6"), (b"aa", b"5")]
    finally:
        srv.stop()
    assert srv.engine.internal_errors == 0
    srv = EmbeddedServer(**options).start()
    try:
        with redis.Redis(port=srv.port) as r:
            assert {k: list(r.hgetall(k).items()) for k in before} == before
            assert r.ttl("replaced") == -1
            assert sorted(r.keys()) == [b"in-multi", b"new", b"replaced"]
    finally:
        srv.stop()


def test_imported_hashes_reach_a_redis_and_a_tidelog_replica(processes, tmp_path):
    primary_srv = start_primary(processes, tmp_path)
    _, redis_replica = start_replica(processes, primary_srv.port)
    _, tidelog_replica = start_tidelog_replica(processes, tmp_path, primary_srv.port)
    with redis.Redis(port=primary_srv.port, decode_responses=True,
                     single_connection_client=True) as primary:
        primary.hset("h:old", mapping={"stale": "1", "name": "x"})
        primary.expire("h:old", 1000)
        himport(primary, "PREPARE", "users", "name", "email", "age")
        for i in range(20):
            himport(primary, "SET", f"h:{i}", "users", f"n{i}", f"e{i}@x", i)
        himport(primary, "SET", "h:old", "users", "new", "new@x", 99)
        primary.set("sync-marker", 1)
        assert primary.wait(2, 10_000) == 2
        keys = sorted(primary.keys("h:*"))
        for replica in (redis_replica, tidelog_replica):
            assert sorted(replica.keys("h:*")) == keys
            for key in keys:
                # the same fields in the same order on both
                assert list(replica.hgetall(key).items()) == list(primary.hgetall(key).items())
            assert replica.ttl("h:old") == -1
        assert primary.hgetall("h:old") == {"age": "99", "name": "new", "email": "new@x"}


@pytest.mark.filterwarnings("ignore:Call to experimental method himport")
@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_py_himport_api(tidelog, protocol):
    """redis-py 8.1's own HIMPORT methods, which prepare lazily on each
    pooled connection and re-prepare after a RESET dropped the fieldset."""
    with redis.Redis(port=tidelog.port, protocol=protocol) as c:
        assert c.himport_prepare("users", ["name", "email", "age"]) is True
        for i in range(5):
            assert c.himport_set(f"u:{i}", "users", [f"n{i}", f"e{i}@x", str(i)]) is True
        assert c.hgetall("u:3") == {b"name": b"n3", b"email": b"e3@x", b"age": b"3"}
        assert c.himport_discard("users") == 1

    async def run():
        a = redis.asyncio.Redis(port=tidelog.port, protocol=protocol, single_connection_client=True)
        try:
            assert await a.himport_prepare("rows", ["id", "v"]) is True
            assert await a.himport_set("row:1", "rows", ["1", "x"]) is True
            await a.execute_command("HIMPORT", "DISCARDALL")  # behind the client's back
            assert await a.himport_set("row:2", "rows", ["2", "y"]) is True  # re-prepared
            assert await a.hgetall("row:2") == {b"id": b"2", b"v": b"y"}
        finally:
            await a.aclose()

    asyncio.run(run())
