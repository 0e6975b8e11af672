"""Consumer groups over real sockets, from redis-py (sync and asyncio, RESP2
and RESP3): the seed's consumer loop, many consumers sharing a group,
recovering a crashed consumer's entries, and blocked readers woken by
writes, by EXEC, and (with an error) by their group or key going away.

Timing: waits are on the engine's own state (``engine.blocked_clients``)
or on bounded loops; the only timed bounds are generous.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter

import pytest
import redis
import redis.asyncio

from tests.support.rawclient import RawClient, encode_command
from tests.support.waits import async_wait_blocked, wait_blocked, wait_until

pytestmark = pytest.mark.timeout(120)

NOGROUP = "NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option"


def ids_of(reply) -> list[bytes]:
    """The entry IDs of a redis-py XREADGROUP reply: RESP2 ``[[key, entries]]``,
    RESP3 ``{key: [entries]}``."""
    if not reply:
        return []
    if isinstance(reply, dict):
        return [id for batches in reply.values() for batch in batches for id, _ in batch]
    return [id for _, entries in reply for id, _ in entries]


# -- redis-py's own parsers accept our replies ------------------------------------------

@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_py_group_api(tidelog, protocol):
    r = redis.Redis(port=tidelog.port, protocol=protocol)
    try:
        ids = [r.xadd("s", {"n": i}) for i in range(5)]
        assert r.xgroup_create("s", "g", id="0") is True
        with pytest.raises(redis.ResponseError, match="BUSYGROUP"):
            r.xgroup_create("s", "g", id="0")
        got = r.xreadgroup("g", "alice", {"s": ">"}, count=3)
        assert ids_of(got) == ids[:3]
        assert r.xpending("s", "g") == {
            "pending": 3, "min": ids[0], "max": ids[2],
            "consumers": [{"name": b"alice", "pending": 3}]}
        rows = r.xpending_range("s", "g", "-", "+", 10)
        assert [row["message_id"] for row in rows] == ids[:3]
        assert all(row["consumer"] == b"alice" and row["times_delivered"] == 1 for row in rows)
        claimed = r.xclaim("s", "g", "bob", 0, [ids[0]])
        assert [id for id, _ in claimed] == [ids[0]]
        assert r.xclaim("s", "g", "bob", 0, [ids[1]], justid=True) == [ids[1]]
        cursor, entries, deleted = r.xautoclaim("s", "g", "carol", 0, "0-0", count=10)
        assert cursor == b"0-0" and [id for id, _ in entries] == ids[:3] and deleted == []
        assert r.xack("s", "g", *ids[:3]) == 3
        groups = r.xinfo_groups("s")
        assert [(g["name"], g["pending"], g["last-delivered-id"]) for g in groups] == \
            [(b"g", 0, ids[2])]
        consumers = r.xinfo_consumers("s", "g")
        assert sorted(c["name"] for c in consumers) == [b"alice", b"bob", b"carol"]
        assert all("inactive" in c and "idle" in c for c in consumers)
        info = r.xinfo_stream("s")
        assert info["length"] == 5 and info["groups"] == 1
        full = r.xinfo_stream("s", full=True)
        assert len(full["entries"]) == 5 and full["groups"][0]["name"] == b"g"
        assert r.xgroup_createconsumer("s", "g", "dave") == 1
        assert r.xgroup_delconsumer("s", "g", "dave") == 0
        assert r.xgroup_setid("s", "g", "0", entries_read=0) is True
        assert r.xgroup_destroy("s", "g") == 1
    finally:
        r.close()


# -- the seed's consumer loop -------------------------------------------------------------

def consume(client: redis.Redis, name: str, processed: list, stop: threading.Event,
            crash_after: int | None = None) -> None:
    """The seed's loop: history first (ID 0) until it is empty, then new
    entries with BLOCK; XACK each processed entry.  ``crash_after`` leaves
    without acknowledging once that many entries were read."""
    last_id = "0"
    seen = 0
    while not stop.is_set():
        reply = client.xreadgroup("g", name, {"s": last_id}, count=10, block=200)
        entries = [entry for _, stream_entries in (reply or []) for entry in stream_entries]
        if last_id == "0" and not entries:
            last_id = ">"   # history done: switch to new entries
            continue
        for id, _fields in entries:
            seen += 1
            if crash_after is not None and seen > crash_after:
                return      # crashed: the rest stays pending
            processed.append(id)
            client.xack("s", "g", id)


def test_seed_consumer_loop_survives_a_crash(tidelog):
    r = redis.Redis(port=tidelog.port)
    r.xgroup_create("s", "g", "$", mkstream=True)
    for i in range(30):
        r.xadd("s", {"n": i})
    processed: list[bytes] = []
    stop = threading.Event()
    consumer = redis.Redis(port=tidelog.port)
    try:
        consume(consumer, "worker", processed, stop, crash_after=12)
        assert len(processed) == 12
        assert r.xpending("s", "g")["pending"] > 0   # read, not acknowledged
        # Restart: the history (ID 0) gives back what was read and not
        # acknowledged, then ">" the rest; a producer adds more meanwhile.
        thread = threading.Thread(target=consume, args=(consumer, "worker", processed, stop))
        thread.start()
        for i in range(30, 60):
            r.xadd("s", {"n": i})
        wait_until(lambda: len(processed) >= 60)
        stop.set()
        thread.join(10)
        all_ids = [id for id, _ in r.xrange("s")]
        assert sorted(processed) == sorted(all_ids)     # each entry processed once
        assert r.xpending("s", "g")["pending"] == 0
    finally:
        stop.set()
        consumer.close()
        r.close()


def test_ten_consumers_share_a_group(tidelog):
    """Ten consumers on ten connections, a producer adding meanwhile: each
    entry is delivered to exactly one consumer, and none is lost."""
    r = redis.Redis(port=tidelog.port)
    r.xgroup_create("s", "g", "$", mkstream=True)
    total = 600
    delivered: dict[str, list[bytes]] = {f"c{n}": [] for n in range(10)}
    stop = threading.Event()

    def worker(name: str) -> None:
        client = redis.Redis(port=tidelog.port)
        try:
            while not stop.is_set():
                reply = client.xreadgroup("g", name, {"s": ">"}, count=7, block=100)
                for _, entries in reply or []:
                    for id, _ in entries:
                        delivered[name].append(id)
                        client.xack("s", "g", id)
        finally:
            client.close()

    threads = [threading.Thread(target=worker, args=(name,)) for name in delivered]
    for thread in threads:
        thread.start()
    try:
        pipe = r.pipeline(transaction=False)
        for i in range(total):
            pipe.xadd("s", {"n": i})
            if i % 50 == 49:
                pipe.execute()
        pipe.execute()
        wait_until(lambda: sum(map(len, delivered.values())) >= total, timeout=30)
    finally:
        stop.set()
        for thread in threads:
            thread.join(10)
    counts = Counter(id for ids in delivered.values() for id in ids)
    assert len(counts) == total and set(counts.values()) == {1}
    assert set(counts) == {id for id, _ in r.xrange("s")}
    assert r.xpending("s", "g")["pending"] == 0
    assert sum(1 for ids in delivered.values() if ids) > 1   # the work was shared
    r.close()


async def test_asyncio_consumers_share_a_group(tidelog):
    writer = redis.asyncio.Redis(port=tidelog.port, protocol=3)
    await writer.xgroup_create("s", "g", "$", mkstream=True)
    total = 300
    delivered: dict[str, list[bytes]] = {f"c{n}": [] for n in range(10)}
    done = asyncio.Event()

    async def worker(name: str) -> None:
        client = redis.asyncio.Redis(port=tidelog.port, protocol=3)
        try:
            while not done.is_set():
                reply = await client.xreadgroup("g", name, {"s": ">"}, count=5, block=100)
                for entries in (reply or {}).values():
                    for batch in entries:
                        for id, _ in batch:
                            delivered[name].append(id)
                            await client.xack("s", "g", id)
        finally:
            await client.aclose()

    tasks = [asyncio.create_task(worker(name)) for name in delivered]
    try:
        await async_wait_blocked(tidelog, 10)
        for i in range(total):
            await writer.xadd("s", {"n": i})
        deadline = time.monotonic() + 30
        while sum(map(len, delivered.values())) < total:
            assert time.monotonic() < deadline, "entries were lost"
            await asyncio.sleep(0.01)
    finally:
        done.set()
        await asyncio.wait_for(asyncio.gather(*tasks), 10)
    counts = Counter(id for ids in delivered.values() for id in ids)
    assert len(counts) == total and set(counts.values()) == {1}
    assert (await writer.xpending("s", "g"))["pending"] == 0
    await writer.aclose()


# -- recovering a crashed consumer ------------------------------------------------------------

def test_crashed_consumer_recovered_with_xautoclaim(tidelog):
    r = redis.Redis(port=tidelog.port)
    r.xgroup_create("s", "g", "$", mkstream=True)
    ids = [r.xadd("s", {"n": i}) for i in range(25)]
    crashed = redis.Redis(port=tidelog.port)
    assert len(crashed.xreadgroup("g", "crashed", {"s": ">"})[0][1]) == 25
    crashed.close()   # gone without acknowledging anything
    r.xdel("s", ids[3])  # one entry deleted meanwhile
    time.sleep(0.06)
    recovered, gone, cursor, calls = [], [], "0-0", 0
    while True:
        cursor, entries, deleted = r.xautoclaim("s", "g", "rescuer", 50, cursor, count=4)
        calls += 1
        recovered += [id for id, _ in entries]
        gone += deleted
        if cursor == b"0-0":
            break
    assert calls == 7
    assert gone == [ids[3]] and recovered == ids[:3] + ids[4:]
    assert r.xack("s", "g", *recovered) == 24
    assert r.xpending("s", "g")["pending"] == 0
    consumers = {c["name"]: c for c in r.xinfo_consumers("s", "g")}
    assert consumers[b"crashed"]["pending"] == 0 and consumers[b"rescuer"]["inactive"] >= 0
    r.close()


# -- blocked readers ----------------------------------------------------------------------------

class GroupReader(threading.Thread):
    """One blocking XREADGROUP on its own connection; reply or error in .result."""

    def __init__(self, port: int, consumer: str, **kwargs) -> None:
        super().__init__(daemon=True)
        self.client = redis.Redis(port=port)
        self.consumer, self.kwargs = consumer, kwargs
        self.result: object = None

    def run(self) -> None:
        try:
            self.result = self.client.xreadgroup("g", self.consumer, {"s": ">"}, **self.kwargs)
        except redis.ResponseError as exc:
            self.result = exc
        finally:
            self.client.close()


@pytest.mark.parametrize("wake", [("xgroup_destroy", "s", "g"), ("delete", "s"),
                                  ("unlink", "s"), ("flushall",)])
def test_blocked_reader_gets_nogroup_when_group_or_key_goes(tidelog, wake):
    r = redis.Redis(port=tidelog.port)
    r.xgroup_create("s", "g", "$", mkstream=True)
    reader = GroupReader(tidelog.port, "c", block=0)
    reader.start()
    try:
        wait_blocked(tidelog, 1)
        getattr(r, wake[0])(*wake[1:])
        reader.join(10)
        assert isinstance(reader.result, redis.ResponseError)
        assert str(reader.result) == NOGROUP
        assert tidelog.call(lambda: tidelog.engine.blocked_clients) == 0
    finally:
        r.close()


async def test_asyncio_blocked_reader_gets_nogroup_on_destroy(tidelog):
    reader = redis.asyncio.Redis(port=tidelog.port, protocol=3)
    writer = redis.asyncio.Redis(port=tidelog.port, protocol=3)
    try:
        await writer.xgroup_create("s", "g", "$", mkstream=True)
        task = asyncio.create_task(reader.xreadgroup("g", "c", {"s": ">"}, block=0))
        await async_wait_blocked(tidelog, 1)
        assert await writer.xgroup_destroy("s", "g") == 1
        with pytest.raises(redis.ResponseError, match="No such key 's' or consumer group 'g'"):
            await asyncio.wait_for(task, 10)
    finally:
        await reader.aclose()
        await writer.aclose()


def test_xadd_inside_multi_wakes_the_reader_after_exec(tidelog):
    r = redis.Redis(port=tidelog.port)
    r.xgroup_create("s", "g", "$", mkstream=True)
    reader = GroupReader(tidelog.port, "c", block=0)
    reader.start()
    raw = RawClient(tidelog.port)
    try:
        wait_blocked(tidelog, 1)
        assert raw.call("MULTI") == b"+OK\r\n"
        assert raw.call("XADD", "s", "1-1", "f", "v") == b"+QUEUED\r\n"
        assert raw.call("XADD", "s", "2-1", "f", "v") == b"+QUEUED\r\n"
        time.sleep(0.05)
        assert reader.result is None and tidelog.call(lambda: tidelog.engine.blocked_clients) == 1
        assert raw.call("EXEC") == b"*2\r\n$3\r\n1-1\r\n$3\r\n2-1\r\n"
        reader.join(10)
        assert [id for _, entries in reader.result for id, _ in entries] == [b"1-1", b"2-1"]
        assert r.xpending("s", "g")["consumers"] == [{"name": b"c", "pending": 2}]
    finally:
        raw.close()
        r.close()


def test_blocked_readers_of_one_group_each_get_new_entries_once(tidelog):
    r = redis.Redis(port=tidelog.port)
    r.xgroup_create("s", "g", "$", mkstream=True)
    readers = [GroupReader(tidelog.port, f"c{n}", block=0, count=1) for n in range(4)]
    for n, reader in enumerate(readers):
        reader.start()
        wait_blocked(tidelog, n + 1)
    try:
        pipe = r.pipeline(transaction=True)
        for i in range(1, 4):
            pipe.xadd("s", {"n": i}, id=f"{i}-1")
        pipe.execute()
        for reader in readers[:3]:
            reader.join(10)
        got = [[id for _, entries in reader.result for id, _ in entries] for reader in readers[:3]]
        assert got == [[b"1-1"], [b"2-1"], [b"3-1"]]   # FIFO, one each
        assert readers[3].is_alive()
        r.xadd("s", {"n": 4}, id="4-1")
        readers[3].join(10)
        assert [id for _, entries in readers[3].result for id, _ in entries] == [b"4-1"]
    finally:
        r.close()


def test_block_timeout_returns_nil(tidelog):
    r = redis.Redis(port=tidelog.port)
    r.xgroup_create("s", "g", "$", mkstream=True)
    started = time.monotonic()
    assert not r.xreadgroup("g", "c", {"s": ">"}, block=150)   # nil (redis-py: [])
    assert 0.15 <= time.monotonic() - started < 5
    raw = RawClient(tidelog.port)
    raw.send_raw(encode_command(["XREADGROUP", "GROUP", "g", "c", "BLOCK", "0",
                                 "STREAMS", "s", ">"]))
    wait_blocked(tidelog, 1)
    raw.close()   # a client that goes away stops waiting
    wait_blocked(tidelog, 0)
    r.close()
