"""Client-side caching from redis-py over real sockets: RESP3 invalidation
pushes (sync and asyncio), RESP2 invalidations through a redirect client
subscribed to ``__redis__:invalidate``, BCAST prefixes, OPTIN/OPTOUT,
NOLOOP, and redis-py's own client-side cache (``cache_config``) serving a
GET from memory until another client's SET invalidates it.

Pushes are read the way redis-py reads them: its parser hands each
``invalidate`` push to the connection's invalidation handler while it reads
the reply of the next command (a PING here), so everything sent before that
reply has been seen by then."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis
import redis.asyncio
from redis._parsers import _RESP3Parser
from redis.cache import CacheConfig

from tests.support.redis_oracle import free_port

TIMEOUT = 5.0


class Tracked:
    """A RESP3 redis-py connection that records the invalidations it gets."""

    def __init__(self, port: int, **kwargs) -> None:
        self.conn = redis.Connection(port=port, protocol=3, socket_timeout=TIMEOUT, **kwargs)
        self.conn.connect()
        self.seen: list[list] = []
        self.conn._parser.set_invalidation_push_handler(self.seen.append)

    def call(self, *argv):
        self.conn.send_command(*argv)
        return self.conn.read_response()

    def invalidations(self) -> list:
        """The invalidated keys (or None: a flush) received before a PING's reply."""
        assert self.call("PING") in (b"PONG", "PONG")
        got, self.seen[:] = [push[1] for push in self.seen], []
        return got

    def close(self) -> None:
        self.conn.disconnect()


@pytest.fixture
def tracked(tidelog):
    opened: list[Tracked] = []

    def make(**kwargs) -> Tracked:
        t = Tracked(tidelog.port, **kwargs)
        opened.append(t)
        return t

    yield make
    for t in opened:
        t.close()


@pytest.mark.parametrize("parser", ["default", "python"])
def test_resp3_pushes(tidelog, r, tracked, parser):
    a = tracked(**({"parser_class": _RESP3Parser} if parser == "python" else {}))
    assert a.call("CLIENT", "TRACKING", "ON") == b"OK"
    assert a.call("GET", "k") is None
    assert a.call("HGETALL", "h") == {}
    r.set("k", "v")
    r.hset("h", "f", "v")
    r.set("k", "w")  # k left the table with the first change
    assert a.invalidations() == [[b"k"], [b"h"]]
    a.call("GET", "k")
    r.flushall()
    assert a.invalidations() == [None]
    info = a.call("CLIENT", "TRACKINGINFO")  # flags: a RESP3 set (redis-py reads a list)
    assert info == {b"flags": [b"on"], b"redirect": 0, b"prefixes": []}
    assert tidelog.engine.internal_errors == 0


def test_own_write_and_noloop(tidelog, tracked):
    a = tracked()
    a.call("CLIENT", "TRACKING", "ON")
    a.call("GET", "k")
    assert a.call("SET", "k", "1") == b"OK"
    assert a.invalidations() == [[b"k"]]
    b = tracked()
    b.call("CLIENT", "TRACKING", "ON", "NOLOOP")
    b.call("GET", "j")
    b.call("SET", "j", "1")
    assert b.invalidations() == []


def test_optin_optout(tidelog, r, tracked):
    a = tracked()
    a.call("CLIENT", "TRACKING", "ON", "OPTIN")
    a.call("GET", "x")
    a.call("CLIENT", "CACHING", "YES")
    a.call("GET", "y")
    b = tracked()
    b.call("CLIENT", "TRACKING", "ON", "OPTOUT")
    b.call("GET", "x")
    b.call("CLIENT", "CACHING", "NO")
    b.call("GET", "y")
    r.mset({"x": 1, "y": 1})
    assert a.invalidations() == [[b"y"]]
    assert b.invalidations() == [[b"x"]]
    with pytest.raises(redis.ResponseError, match="only valid when tracking is enabled in OPTOUT"):
        a.call("CLIENT", "CACHING", "NO")


def test_bcast_prefixes(tidelog, r, tracked):
    a = tracked()
    a.call("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "user:", "PREFIX", "cart:")
    with r.pipeline(transaction=False) as pipe:  # one event-loop turn: one message per prefix
        pipe.set("user:2", 1).set("other", 1).set("user:1", 1).set("cart:9", 1)
        pipe.execute()
    assert a.invalidations() == [[b"cart:9"], [b"user:1", b"user:2"]]
    deadline = time.monotonic() + TIMEOUT  # earlier tests' connections leave asynchronously
    while r.info("clients")["tracking_clients"] != 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    info = r.info("everything")
    assert info["tracking_clients"] == 1 and info["tracking_total_prefixes"] == 2
    with pytest.raises(redis.ResponseError, match="overlaps with an existing prefix 'user:'"):
        a.call("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "user:1")


def test_resp2_redirect_to_a_subscriber(tidelog, r):
    sink = r.pubsub()
    sink.subscribe("__redis__:invalidate")
    assert sink.get_message(timeout=TIMEOUT)["type"] == "subscribe"
    sink_id = max(int(c["id"]) for c in r.client_list(_type="pubsub"))  # the newest subscriber
    tracker = redis.Redis(port=tidelog.port, protocol=2, single_connection_client=True)
    try:
        assert tracker.client_tracking_on(clientid=int(sink_id)) == b"OK"
        assert tracker.client_getredir() == int(sink_id)
        tracker.get("k")
        r.set("k", "v")
        message = sink.get_message(timeout=TIMEOUT)
        assert message == {"type": "message", "pattern": None, "channel": b"__redis__:invalidate",
                           "data": [b"k"]}
        r.flushdb()
        message = sink.get_message(timeout=TIMEOUT)
        assert message["channel"] == b"__redis__:invalidate" and message["data"] is None
        assert b"t" in tracker.client_info()["flags"].encode()
    finally:
        tracker.close()
        sink.close()


def test_asyncio_resp3_pushes(tidelog):
    async def main() -> list:
        seen: list = []
        a = redis.asyncio.Redis(port=tidelog.port, protocol=3, single_connection_client=True)
        w = redis.asyncio.Redis(port=tidelog.port)
        try:
            await a.initialize()
            a.connection._parser.set_invalidation_push_handler(seen.append)
            await a.execute_command("CLIENT", "TRACKING", "ON")
            await a.get("k")
            await w.set("k", "v")
            await a.ping()
            return [push[1] for push in seen]
        finally:
            await a.aclose()
            await w.aclose()

    assert asyncio.run(main()) == [[b"k"]]


def test_redis_py_client_side_cache(tidelog, r):
    """redis-py's cache (its CacheProxyConnection turns tracking on): the
    second GET is served from memory (the server counts one GET); after
    another client's SET, the invalidation push drops the entry and the
    next GET reads the new value.  The push reaches the cached connection's
    socket in the server's next loop turn, which may come after the writer
    has its reply: the GET is retried until it sees the new value."""
    cached = redis.Redis(port=tidelog.port, protocol=3, cache_config=CacheConfig())
    try:
        r.set("ck", "v1")
        r.config_resetstat()
        assert cached.get("ck") == b"v1"
        assert cached.get("ck") == b"v1"
        assert r.info("commandstats")["cmdstat_get"]["calls"] == 1
        assert cached.get_cache().size == 1
        r.set("ck", "v2")
        deadline = time.monotonic() + TIMEOUT
        value = cached.get("ck")
        while value != b"v2" and time.monotonic() < deadline:
            time.sleep(0.01)
            value = cached.get("ck")
        assert value == b"v2"
        assert r.info("commandstats")["cmdstat_get"]["calls"] == 2
    finally:
        cached.close()
    assert tidelog.engine.internal_errors == 0


def test_asyncio_resp2_redirect(tidelog):
    async def main() -> dict:
        w = redis.asyncio.Redis(port=tidelog.port, protocol=2)  # (redis-py 8's default: 3)
        sink = w.pubsub()
        tracker = redis.asyncio.Redis(port=tidelog.port, protocol=2, single_connection_client=True)
        try:
            await sink.subscribe("__redis__:invalidate")
            assert (await sink.get_message(timeout=TIMEOUT))["type"] == "subscribe"
            sink_id = max(int(c["id"]) for c in await w.client_list(_type="pubsub"))
            await tracker.client_tracking_on(clientid=int(sink_id))
            await tracker.get("ak")
            await w.set("ak", "v")
            return await sink.get_message(timeout=TIMEOUT)
        finally:
            await sink.aclose()
            await tracker.aclose()
            await w.aclose()

    assert asyncio.run(main()) == {"type": "message", "pattern": None,
                                   "channel": b"__redis__:invalidate", "data": [b"ak"]}


@pytest.fixture
def own_server(processes, tmp_path):
    """A server of its own: the test below sets maxmemory."""
    port = free_port()
    return processes.tidelog(["--port", str(port), "--dir", str(tmp_path), "--save", ""],
                             port=port)


def test_eviction_before_a_read_comes_before_its_reply(own_server):
    # Redis evicts before every command, a read too (its processCommand), and
    # the evicted keys' invalidations reach the client running the command
    # before that command's reply (Redis's own tracking test does the same).
    c = own_server.client()
    t = Tracked(own_server.port)
    try:
        assert t.call("CLIENT", "TRACKING", "ON") in (b"OK", "OK")
        c.config_set("maxmemory-policy", "volatile-random")
        c.config_set("maxmemory", c.info("memory")["used_memory"] + 1024 * 1024)
        t.call("SETEX", "volatile-key", 10000, "x")
        t.call("GET", "volatile-key")
        t.call("SETBIT", "big-key", 32_000_000, 0)  # 4 MB: over the limit now
        assert t.seen == []
        assert t.call("GETBIT", "big-key", 0) == 0
        # The invalidation was parsed while reading GETBIT's reply: it came first.
        assert [push[1] for push in t.seen] == [[b"volatile-key"]]
        assert c.info("stats")["evicted_keys"] == 1
        assert c.exists("volatile-key") == 0
    finally:
        t.close()
        c.config_set("maxmemory", 0)
