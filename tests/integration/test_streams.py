"""Stream commands over real sockets, from redis-py (sync and asyncio, RESP2
and RESP3): long pipelines, and blocking reads woken by other connections.

Timing: the only timed assertions are "no earlier than the timeout" and a
generous upper bound; everything else waits on the engine's own state
(``engine.blocked_clients``, read through ``tidelog.call``).
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
import redis
import redis.asyncio

from tests.support.rawclient import RawClient, encode_command
from tests.support.waits import async_wait_blocked, blocked, wait_blocked, wait_until
from tidelog.commands.effects import argv_of

pytestmark = pytest.mark.timeout(120)


class Reader(threading.Thread):
    """Runs one blocking XREAD on its own connection; the reply lands in .result."""

    def __init__(self, port: int, streams: dict, protocol: int = 2, **kwargs) -> None:
        super().__init__(daemon=True)
        self.client = redis.Redis(port=port, protocol=protocol)
        self.streams, self.kwargs = streams, kwargs
        self.result = None
        self.elapsed = 0.0

    def run(self) -> None:
        started = time.monotonic()
        self.result = self.client.xread(self.streams, **self.kwargs)
        self.elapsed = time.monotonic() - started

    def finish(self, timeout: float = 10.0):
        self.join(timeout)
        assert not self.is_alive(), "the reader is still blocked"
        self.client.close()
        return self.result


# -- pipelines -----------------------------------------------------------------

@pytest.mark.parametrize("node_entries", [1, 4, 100])
def test_pipeline_of_thousands_of_xadds(tidelog, r, node_entries):
    r.config_set("stream-node-max-entries", node_entries)
    n = 5000
    pipe = r.pipeline(transaction=False)
    for i in range(1, n + 1):
        pipe.xadd("s", {"i": str(i), "even": str(i % 2 == 0)}, id=f"{i // 10 + 1}-{i % 10}")
    ids = pipe.execute()
    assert ids == [f"{i // 10 + 1}-{i % 10}".encode() for i in range(1, n + 1)]
    assert r.xlen("s") == n

    everything = r.xrange("s")
    assert [entry_id for entry_id, _ in everything] == ids
    assert everything[1233][1] == {b"i": b"1234", b"even": b"True"}
    assert r.xrevrange("s") == everything[::-1]

    # paging with exclusive starts visits every entry once
    seen, start = [], "-"
    while page := r.xrange("s", min=start, count=333):
        seen.extend(page)
        start = "(" + page[-1][0].decode()
    assert seen == everything

    assert r.xrange("s", min="100", max="101") == everything[989:1009]  # i = 990..1009
    assert r.xread({"s": ids[-2]}) == [[b"s", [everything[-1]]]]
    assert r.xtrim("s", maxlen=10, approximate=False) == n - 10
    assert r.xrange("s") == everything[-10:]


def test_pipeline_of_auto_ids(tidelog, r):
    pipe = r.pipeline(transaction=False)
    for i in range(3000):
        pipe.xadd("s", {"i": i}, maxlen=1000, approximate=True)
    ids = pipe.execute()
    parsed = [tuple(map(int, entry_id.split(b"-"))) for entry_id in ids]
    assert parsed == sorted(parsed) and len(set(parsed)) == 3000
    assert 1000 <= r.xlen("s") < 1100
    assert r.xrevrange("s", count=1)[0][0] == ids[-1]


async def test_asyncio_resp3_pipeline(tidelog):
    client = redis.asyncio.Redis(port=tidelog.port, protocol=3)
    try:
        pipe = client.pipeline(transaction=False)
        for i in range(1, 2001):
            pipe.xadd("s", {"f": i}, id=f"{i}-1")
        await pipe.execute()
        assert await client.xlen("s") == 2000
        entries = await client.xrange("s", min="1990", count=5)
        assert [e[0] for e in entries] == [b"1990-1", b"1991-1", b"1992-1", b"1993-1", b"1994-1"]
        assert await client.xread({"s": "1999-1", "nokey": "0"}) == {
            b"s": [[(b"2000-1", {b"f": b"2000"})]]}
        assert await client.xread({"s": "2000-1"}) == {}
        # a MULTI around XADDs: replies come back in the EXEC array
        tx = client.pipeline(transaction=True)
        tx.xadd("t", {"a": "b"}, id="1-1")
        tx.xadd("t", {"a": "c"}, id="1-*")
        tx.xlen("t")
        assert await tx.execute() == [b"1-1", b"1-2", 2]
    finally:
        await client.aclose()


# -- blocking --------------------------------------------------------------------

def test_block_woken_by_another_connection(tidelog, r):
    r.xadd("s", {"old": "1"}, id="1-1")
    reader = Reader(tidelog.port, {"s": "$"}, block=0)
    reader.start()
    wait_blocked(tidelog, 1)
    r.xadd("s", {"new": "2"}, id="2-1")
    assert reader.finish() == [[b"s", [(b"2-1", {b"new": b"2"})]]]
    assert blocked(tidelog) == 0


def test_block_resp3(tidelog, r):
    reader = Reader(tidelog.port, {"a": "$", "s": "$"}, protocol=3, block=5000, count=1)
    reader.start()
    wait_blocked(tidelog, 1)
    r.xadd("s", {"f": "v"}, id="1-1")
    assert reader.finish() == {b"s": [[(b"1-1", {b"f": b"v"})]]}


def test_fifo_order_of_blocked_clients(tidelog, r):
    """Each reader gets the entry, served in the order they blocked."""
    served: list[int] = []

    def spy_on_sends() -> None:
        for client in tidelog.engine.clients.values():
            if client.blocked is not None and not getattr(client, "spied", False):
                original = client.send
                client.send = lambda reply, c=client, f=original: (served.append(c.id), f(reply))
                client.spied = True

    readers, reader_ids = [], []
    for n in range(4):
        reader = Reader(tidelog.port, {"s": "$"}, block=0)
        reader_ids.append(reader.client.client_id())
        reader.start()
        wait_blocked(tidelog, n + 1)
        readers.append(reader)
    tidelog.call(spy_on_sends)
    r.xadd("s", {"f": "v"}, id="5-5")
    for reader in readers:
        assert reader.finish() == [[b"s", [(b"5-5", {b"f": b"v"})]]]
    assert tidelog.call(lambda: list(served)) == reader_ids


def test_only_the_key_that_got_data_wakes(tidelog, r):
    on_a = Reader(tidelog.port, {"a": "$"}, block=0)
    on_b = Reader(tidelog.port, {"b": "$"}, block=0)
    on_a.start()
    on_b.start()
    wait_blocked(tidelog, 2)
    r.xadd("b", {"f": "v"}, id="1-1")
    assert on_b.finish() == [[b"b", [(b"1-1", {b"f": b"v"})]]]
    time.sleep(0.1)
    assert on_a.is_alive() and blocked(tidelog) == 1
    r.xadd("a", {"g": "w"}, id="1-1")
    assert on_a.finish() == [[b"a", [(b"1-1", {b"g": b"w"})]]]


@pytest.mark.parametrize("protocol", [2, 3])
def test_block_timeout_is_honoured(tidelog, protocol):
    reader = Reader(tidelog.port, {"s": "$"}, protocol=protocol, block=300)
    reader.start()
    result = reader.finish(timeout=10)
    assert result == ([] if protocol == 2 else {})  # redis-py's reading of the null array
    assert 0.3 <= reader.elapsed < 5.0
    assert blocked(tidelog) == 0


def test_block_timeout_raw_reply(tidelog, raw):
    started = time.monotonic()
    assert raw.call("XREAD", "BLOCK", "150", "STREAMS", "s", "$") == b"*-1\r\n"
    assert time.monotonic() - started >= 0.15
    assert raw.call("HELLO", "3").startswith(b"%")
    assert raw.call("XREAD", "BLOCK", "50", "STREAMS", "s", "$") == b"_\r\n"


def test_xadd_in_multi_wakes_only_after_exec(tidelog):
    reader = Reader(tidelog.port, {"s": "$"}, block=0)
    reader.start()
    wait_blocked(tidelog, 1)
    with RawClient(tidelog.port) as writer:
        assert writer.call("MULTI") == b"+OK\r\n"
        assert writer.call("XADD", "s", "1-1", "f", "v") == b"+QUEUED\r\n"
        assert writer.call("XADD", "s", "2-1", "f", "w") == b"+QUEUED\r\n"
        time.sleep(0.1)
        assert reader.is_alive() and blocked(tidelog) == 1
        assert writer.call("EXEC") == b"*2\r\n$3\r\n1-1\r\n$3\r\n2-1\r\n"
    assert reader.finish() == [[b"s", [(b"1-1", {b"f": b"v"}), (b"2-1", {b"f": b"w"})]]]


def test_blocked_client_disconnecting_is_cleaned_up(tidelog, r):
    raw = RawClient(tidelog.port)
    raw.send_raw(encode_command(["XREAD", "BLOCK", "0", "STREAMS", "s", "t", "$", "$"]))
    wait_blocked(tidelog, 1)
    raw.close()
    wait_until(lambda: blocked(tidelog) == 0)
    assert tidelog.call(lambda: dict(tidelog.engine.waiters)) == {}
    assert r.xadd("s", {"f": "v"}, id="1-1") == b"1-1"  # nobody left to serve
    assert tidelog.engine.internal_errors == 0


def test_block_zero_waits_until_data(tidelog, r):
    reader = Reader(tidelog.port, {"s": "0"}, block=0)
    reader.start()
    wait_blocked(tidelog, 1)
    time.sleep(0.5)
    assert reader.is_alive()
    r.xadd("s", {"f": "v"}, id="1-1")
    assert reader.finish() == [[b"s", [(b"1-1", {b"f": b"v"})]]]


def test_block_inside_multi_replies_nil_at_once(tidelog, r):
    pipe = r.pipeline(transaction=True)
    pipe.xread({"s": "$"}, block=0)
    pipe.xadd("s", {"f": "v"}, id="1-1")
    pipe.xread({"s": "0"}, block=0)
    assert pipe.execute() == [[], b"1-1", [[b"s", [(b"1-1", {b"f": b"v"})]]]]
    assert blocked(tidelog) == 0


def test_pipelined_commands_behind_a_blocked_read_wait_for_it(tidelog, r):
    with RawClient(tidelog.port) as raw:
        raw.send_raw(encode_command(["XREAD", "BLOCK", "0", "STREAMS", "s", "$"])
                     + encode_command(["XLEN", "s"]))
        wait_blocked(tidelog, 1)
        r.xadd("s", {"f": "v"}, id="1-1")
        assert raw.read_reply(5).startswith(b"*1\r\n*2\r\n$1\r\ns\r\n")
        assert raw.read_reply(5) == b":1\r\n"


def test_a_burst_and_a_second_block_behind_a_blocked_read(tidelog, r):
    """Commands parsed behind a blocked one (a burst of XADDs, another
    blocking read, more commands) run in order once it is answered."""
    burst = [encode_command(["XADD", "s", "*", "n", str(i)]) for i in range(5)]
    with RawClient(tidelog.port) as raw:
        raw.send_raw(encode_command(["XREAD", "BLOCK", "0", "STREAMS", "s", "$"])
                     + b"".join(burst)
                     + encode_command(["XREAD", "BLOCK", "0", "STREAMS", "t", "$"])
                     + encode_command(["XLEN", "s"]) + b"".join(burst))
        wait_blocked(tidelog, 1)
        r.xadd("s", {"f": "v"}, id="1-1")
        assert raw.read_reply(5).startswith(b"*1\r\n*2\r\n$1\r\ns\r\n")
        ids = [raw.read_reply(5) for _ in range(5)]
        assert all(reply.startswith(b"$") for reply in ids)
        wait_blocked(tidelog, 1)
        r.xadd("t", {"f": "v"}, id="1-1")
        assert raw.read_reply(5).startswith(b"*1\r\n*2\r\n$1\r\nt\r\n")
        assert raw.read_reply(5) == b":6\r\n"
        ids += [raw.read_reply(5) for _ in range(5)]
        assert r.xlen("s") == 11 and len(set(ids)) == 10


# -- asyncio ---------------------------------------------------------------------

async def test_asyncio_blocked_readers_are_woken_in_order(tidelog):
    readers = [redis.asyncio.Redis(port=tidelog.port, protocol=3) for _ in range(3)]
    writer = redis.asyncio.Redis(port=tidelog.port, protocol=3)
    try:
        tasks = []
        for n, reader in enumerate(readers):
            tasks.append(asyncio.create_task(reader.xread({"s": "$", "other": "$"}, block=0)))
            await async_wait_blocked(tidelog, n + 1)
        assert await writer.xadd("s", {"f": "v"}, id="1-1") == b"1-1"
        results = await asyncio.wait_for(asyncio.gather(*tasks), 10)
        assert results == [{b"s": [[(b"1-1", {b"f": b"v"})]]}] * 3
        assert blocked(tidelog) == 0
    finally:
        for client in (*readers, writer):
            await client.aclose()


async def test_asyncio_timeout_and_wake(tidelog):
    reader = redis.asyncio.Redis(port=tidelog.port)
    writer = redis.asyncio.Redis(port=tidelog.port)
    try:
        started = time.monotonic()
        assert await reader.xread({"s": "$"}, block=200) == []
        assert 0.2 <= time.monotonic() - started < 5.0
        task = asyncio.create_task(reader.xread({"s": "$"}, block=10_000, count=1))
        await async_wait_blocked(tidelog, 1)
        await writer.xadd("s", {"a": "1"}, id="1-1")
        assert await asyncio.wait_for(task, 10) == [[b"s", [(b"1-1", {b"a": b"1"})]]]
    finally:
        await reader.aclose()
        await writer.aclose()


# -- effects over the wire ---------------------------------------------------------

def test_effects_over_the_wire(tidelog, r):
    captured = []

    def listen(effects):
        captured.extend(argv_of(effect) for _, effect in effects)

    tidelog.call(lambda: tidelog.engine.effect_listeners.append(listen))
    try:
        new_id = r.xadd("s", {"f": "v"})
        r.xadd("s", {"f": "v"}, id="99999999999999-1", maxlen=0, approximate=True)
        r.xdel("s", "1-1")
        r.xtrim("s", maxlen=5)
        effects = tidelog.call(lambda: list(captured))
    finally:
        tidelog.call(lambda: tidelog.engine.effect_listeners.remove(listen))
    assert effects == [
        [b"XADD", b"s", new_id, b"f", b"v"],
        [b"XADD", b"s", b"MAXLEN", b"=", b"0", b"99999999999999-1", b"f", b"v"],
    ]
