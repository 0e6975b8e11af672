"""Bitmap commands over real sockets with redis-py, sync and asyncio, RESP2
and RESP3: its setbit/getbit/bitcount/bitpos/bitop methods, its
``bitfield()`` helper (BitFieldOperation) and ``bitfield_ro()``; the
keyspace events the bit commands fire; and what they propagate, replayed
from the AOF after a crash (replicas: test_replication.py)."""

from __future__ import annotations

import asyncio

import pytest
import redis
import redis.asyncio

from tests.integration.test_strings import start

TIMEOUT = 5.0


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def client(tidelog, request):
    c = redis.Redis(port=tidelog.port, protocol=request.param)
    yield c
    c.close()


def test_setbit_getbit_bitcount_bitpos(client):
    assert client.setbit("k", 7, 1) == 0
    assert client.setbit("k", 7, 1) == 1
    assert client.get("k") == b"\x01"
    assert client.getbit("k", 7) == 1 and client.getbit("k", 6) == 0
    assert client.getbit("k", 1_000_000) == 0
    client.set("f", "foobar")
    assert client.bitcount("f") == 26
    assert client.bitcount("f", 1, 1) == 6
    assert client.bitcount("f", 5, 30, mode="BIT") == 17
    assert client.bitpos("f", 1) == 1
    assert client.bitpos("f", 0, 2, -1) == 16
    assert client.bitpos("f", 1, 7, 15, mode="bit") == 9
    assert client.bitpos("nope", 0) == 0 and client.bitpos("nope", 1) == -1
    with pytest.raises(redis.ResponseError, match="^bit offset is not an integer or out of range$"):
        client.setbit("k", -1, 1)
    with pytest.raises(redis.ResponseError, match="^bit is not an integer or out of range$"):
        client.execute_command("SETBIT", "k", 1, 2)  # (redis-py turns 2 into 1)
    with pytest.raises(redis.ResponseError, match="^The bit argument must be 1 or 0.$"):
        client.execute_command("BITPOS", "f", 2)
    client.xadd("s", {"f": "v"})
    with pytest.raises(redis.ResponseError, match="^WRONGTYPE"):
        client.getbit("s", 0)


def test_bitop_every_operation(client):
    """Including Redis 8.2's DIFF, DIFF1, ANDOR and ONE
    (https://redis.io/docs/latest/commands/bitop/)."""
    client.set("x", b"\xf0\x0f")
    client.set("y1", b"\xff")
    client.set("y2", b"\x0f\x0f\x0f")
    expected = {
        "AND": b"\x00\x00\x00", "OR": b"\xff\x0f\x0f", "XOR": b"\x00\x00\x0f",
        "DIFF": b"\x00\x00\x00",        # x and neither y
        "DIFF1": b"\x0f\x00\x0f",       # a y and not x
        "ANDOR": b"\xf0\x0f\x00",       # x and a y
        "ONE": b"\x00\x00\x0f",         # exactly one of the three
    }
    for op, want in expected.items():
        assert client.bitop(op, "r", "x", "y1", "y2") == 3, op
        assert client.get("r") == want, op
    assert client.bitop("NOT", "r", "x") == 2 and client.get("r") == b"\x0f\xf0"
    with pytest.raises(redis.ResponseError,
                       match="^BITOP DIFF1 must be called with at least two source keys.$"):
        client.bitop("diff1", "r", "x")
    with pytest.raises(redis.ResponseError, match="^BITOP NOT must be called with a single source key.$"):
        client.bitop("NOT", "r", "x", "y1")
    assert client.bitop("OR", "r", "nope") == 0
    assert client.exists("r") == 0


def test_bitfield_helper(client):
    """redis-py's BitFieldOperation: chained GET/SET/INCRBY/OVERFLOW, one command."""
    op = client.bitfield("bf")
    op.set("i8", 0, 100).incrby("i8", 0, 100).overflow("SAT").incrby("i8", 0, 100)
    op.overflow("FAIL").incrby("u2", 8, 5).get("u8", 0).get("i8", "#0")
    assert op.execute() == [0, -56, 44, None, 44, 44]
    default_sat = client.bitfield("bf", default_overflow="SAT")
    assert default_sat.incrby("u4", 100, 100).execute() == [15]
    old = int.from_bytes(client.get("bf").ljust(8, b"\0")[:8], "big") >> 1
    assert client.bitfield("bf").set("u63", 0, 2**63 - 1).get("i64", 0).execute() == [old, -2]
    assert client.bitfield_ro("bf", "u8", 0, items=[("i8", 0), ("u4", 4)]) == [255, -1, 15]
    with pytest.raises(redis.ResponseError, match="^Invalid bitfield type. Use something like i16 "
                                                  "u8. Note that u64 is not supported but i64 is.$"):
        client.bitfield("bf").get("u64", 0).execute()
    with pytest.raises(redis.ResponseError, match="^BITFIELD_RO only supports the GET subcommand$"):
        client.execute_command("BITFIELD_RO", "bf", "SET", "u8", "0", "1")
    with pytest.raises(redis.ResponseError, match="^Invalid OVERFLOW type specified$"):
        client.execute_command("BITFIELD", "bf", "OVERFLOW", "NOPE")


def test_object_encoding_after_bit_writes(client):
    client.set("k", "hello")
    assert client.object("encoding", "k") == b"embstr"
    client.setbit("k", 0, 0)  # no bit changes, the string is unshared all the same
    assert client.object("encoding", "k") == b"raw"
    client.set("n", "1234")
    client.bitfield("n").set("u8", 0, ord("5")).execute()
    assert (client.get("n"), client.object("encoding", "n")) == (b"5234", b"raw")
    client.set("a", "12")
    client.bitop("AND", "r", "a", "a")
    assert client.object("encoding", "r") == b"raw"


def _asyncio_bit_commands():
    async def main(port: int) -> None:
        for protocol in (2, 3):
            r = redis.asyncio.Redis(port=port, protocol=protocol)
            try:
                await r.delete("ak", "ar")
                assert await r.setbit("ak", 100, 1) == 0
                assert await r.bitcount("ak") == 1
                assert await r.bitpos("ak", 1) == 100
                assert await r.bitop("ONE", "ar", "ak", "nope") == 13
                assert await r.getbit("ar", 100) == 1
                bf = r.bitfield("ak", default_overflow="WRAP")
                assert await bf.incrby("u8", 0, 300).get("u8", 0).execute() == [44, 44]
                assert await r.bitfield_ro("ak", "u8", 0) == [44]
            finally:
                await r.aclose()
    return main


def test_asyncio(tidelog):
    asyncio.run(_asyncio_bit_commands()(tidelog.port))


# -- keyspace events --------------------------------------------------------------------
@pytest.fixture
def notifying(tidelog):
    r = redis.Redis(port=tidelog.port)
    r.config_set("notify-keyspace-events", "KEA")
    yield tidelog
    r.config_set("notify-keyspace-events", "")
    r.close()


def _events(pubsub, count: int) -> list[tuple[bytes, bytes]]:
    got = []
    while len(got) < count:
        message = pubsub.get_message(timeout=TIMEOUT, ignore_subscribe_messages=True)
        assert message is not None, f"only {got!r} came"
        got.append((message["channel"].split(b":", 1)[1], message["data"]))
    return got


@pytest.mark.parametrize("protocol", [2, 3])
def test_keyspace_events(notifying, protocol):
    """setbit when a bit changed or the string grew (never for a SETBIT that
    changes nothing, redis/redis#9403); BITFIELD fires setbit once for its
    writes, nothing for GETs only, and setbit for a string it grew even when
    OVERFLOW FAIL refused every write (redis/redis#15699); BITOP fires set,
    or del when the result is empty and the destination existed."""
    r = redis.Redis(port=notifying.port, protocol=protocol)
    p = r.pubsub()
    try:
        p.psubscribe("__keyevent@0__:*")
        assert p.get_message(timeout=TIMEOUT)["type"] == "psubscribe"
        r.setbit("k", 3, 1)
        r.setbit("k", 3, 1)             # nothing changes: no event
        r.setbit("k", 2, 0)             # nothing changes: no event
        r.bitfield("k").get("u8", 0).execute()
        r.bitfield("k").set("u8", 0, 1).set("u8", 8, 2).execute()
        r.bitfield("k").set("u8", 0, 1).execute()   # the same value: no event
        r.bitfield("n").overflow("FAIL").set("u2", 0, 9).execute()  # refused, but made "n"
        r.bitop("OR", "d", "k")
        r.bitop("AND", "d", "nope")
        r.bitop("AND", "d", "nope")     # nothing to delete: no event
        r.getbit("missing", 0)
        # (KEA leaves out the keymiss and new classes)
        assert _events(p, 5) == [(b"setbit", b"k"), (b"setbit", b"k"), (b"setbit", b"n"),
                                 (b"set", b"d"), (b"del", b"d")]
        assert p.get_message(timeout=0.05) is None
    finally:
        p.close()
        r.close()


# -- the AOF --------------------------------------------------------------------------------
def test_bit_commands_survive_the_aof(processes):
    """Every bit write goes to the AOF as Redis propagates it and replays to
    the same strings; a BITFIELD of GETs, and a SETBIT or BITFIELD SET that
    changes nothing, write nothing to it."""
    proc, port = start(processes, "--appendonly", "yes", "--appendfsync", "always")
    with redis.Redis(port=port) as r:
        r.setbit("b", 100, 1)
        r.setbit("b", 3, 1)
        r.set("t", "abc", ex=1000)
        r.setbit("t", 30, 1)
        r.bitfield("f").set("i5", 3, -7).overflow("SAT").incrby("u4", 20, 99).execute()
        r.bitfield("g").overflow("FAIL").set("u2", 40, 9).execute()   # refused; "g" made
        r.set("x", b"\xf0\x0f")
        r.set("y", b"\xff")
        for op in ("AND", "OR", "XOR", "DIFF", "DIFF1", "ANDOR", "ONE"):
            r.bitop(op, f"r:{op}", "x", "y", "b")
        r.bitop("NOT", "r:NOT", "x")
        r.set("gone", "v")
        r.bitop("AND", "gone", "nope")
        size = r.info("persistence")["aof_current_size"]
        r.setbit("b", 3, 1)                        # changes nothing
        r.bitfield("b").get("u8", 0).execute()     # reads only
        r.bitfield("b").set("u8", 0, 16).execute()  # the value it has
        assert r.info("persistence")["aof_current_size"] == size
        before = {key: (r.get(key), r.ttl(key)) for key in r.keys()}
    proc.sigkill()
    proc, port = start(processes, "--appendonly", "yes")
    with redis.Redis(port=port) as r:
        after = {key: (r.get(key), r.ttl(key)) for key in r.keys()}
        assert after.keys() == before.keys()
        assert b"gone" not in after and b"g" in after
        for key, (value, ttl) in before.items():
            assert after[key][0] == value, key
            assert (ttl == -1) == (after[key][1] == -1), key
        assert after[b"r:DIFF1"][0] == b"\x0f\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x08"
