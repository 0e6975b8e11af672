"""tidelog.client.topic without a server: XREADGROUP replies in every shape
redis-py's own reply callbacks give them (RESP2 and RESP3 wire, legacy and
unified shapes, bytes or str), a topic's key routing, and a consumer's
partitions."""

from __future__ import annotations

import pytest
import redis
from redis._parsers import helpers

from tidelog.client.partitions import partition_for
from tidelog.client.topic import Message, Topic, _stream_replies

RESP2_WIRE = [[b"orders:{1.0}", [[b"1-0", [b"item", b"book"]], [b"1-1", [b"item", b"ink"]]]],
              [b"orders:{2.0}", [[b"2-0", [b"item", b"pen"]]]]]
RESP3_WIRE = {b"orders:{1.0}": [[b"1-0", [b"item", b"book"]], [b"1-1", [b"item", b"ink"]]],
              b"orders:{2.0}": [[b"2-0", [b"item", b"pen"]]]}
EXPECTED = [(b"orders:{1.0}", [(b"1-0", {b"item": b"book"}), (b"1-1", {b"item": b"ink"})]),
            (b"orders:{2.0}", [(b"2-0", {b"item": b"pen"})])]


@pytest.mark.parametrize("parse,wire", [
    (helpers.parse_xread, RESP2_WIRE),
    (helpers.parse_xread_resp3, RESP3_WIRE),
    (helpers.parse_xread_unified, RESP2_WIRE),
    (helpers.parse_xread_unified, RESP3_WIRE),
    (helpers.parse_xread_resp3_to_resp2_legacy, RESP3_WIRE),
], ids=["resp2", "resp3", "unified-resp2", "unified-resp3", "resp3-as-resp2"])
def test_every_reply_shape(parse, wire):
    got = _stream_replies(parse(wire))
    assert [(stream, list(entries)) for stream, entries in got] == EXPECTED


@pytest.mark.parametrize("parse", [helpers.parse_xread, helpers.parse_xread_resp3,
                                   helpers.parse_xread_unified,
                                   helpers.parse_xread_resp3_to_resp2_legacy])
def test_nothing_read(parse):
    """A timed-out BLOCK is a nil reply; a pass with nothing new, empty entries."""
    assert _stream_replies(parse(None)) == []
    empty = {b"orders:{1.0}": []} if parse is not helpers.parse_xread else [[b"orders:{1.0}", []]]
    assert [entries for _, entries in _stream_replies(parse(empty))] == [[]]


def topic(count: int = 6) -> Topic:
    # A client that is never connected: these tests send no command.
    return Topic(redis.Redis(port=1), "orders", count)


def test_keys_route_by_crc32_and_keyless_messages_go_round_robin():
    t = topic()
    assert [t.partition_for(f"customer:{i}") for i in range(50)] == [
        partition_for(f"customer:{i}", 6) for i in range(50)]
    first = t.partition_for(None)
    assert [t.partition_for(None) for _ in range(12)] == [(first + 1 + i) % 6 for i in range(12)]


def test_stream_names_map_back_to_partitions_as_str_or_bytes():
    t = topic()
    for p in t.partitions:
        assert t.index_of(p.key) == t.index_of(p.key.encode()) == p.index
    with pytest.raises(KeyError):
        t.index_of("orders:{0}")


def test_a_consumers_partitions():
    t = topic()
    assert t.consumer("g", "c").keys == t.keys
    assert t.consumer("g", "c", partitions=[4, 1, 4]).keys == [t.keys[1], t.keys[4]]
    for bad in ([6], [-1]):
        with pytest.raises(ValueError, match="has no partition"):
            t.consumer("g", "c", partitions=bad)
    with pytest.raises(ValueError, match="at least one partition"):
        t.consumer("g", "c", partitions=[])


def test_messages_carry_partition_and_key():
    t = topic()
    consumer = t.consumer("g", "c")
    wire = [[t.keys[3].encode(), [[b"5-0", [b"a", b"1"]]]]]
    assert consumer._messages(helpers.parse_xread(wire)) == [
        Message(3, t.keys[3], b"5-0", {b"a": b"1"})]


def test_maxlen_per_topic_and_per_call():
    t = Topic(redis.Redis(port=1), "orders", 2, maxlen=1000)
    assert t._xadd_args(None, None) == {"maxlen": 1000, "approximate": True}
    assert t._xadd_args(5, False) == {"maxlen": 5, "approximate": False}
    assert topic()._xadd_args(None, None) == {}
