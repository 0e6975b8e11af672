"""Consumer-group command handlers, driven through Engine.execute with a FakeClock.

No sockets: replies are reply values, effects are caught with a listener on
``engine.effect_listeners``, blocked clients get their late reply through
``client.send``.  The wire bytes are checked against redis-server by the
differential tests; here we check what only a controlled clock and the
engine can show: idle and delivery times and counts, seen and active
times, lag, the effects and their replay, blocking order and wake-ups,
WATCH and the dirty counter.
"""

from __future__ import annotations

import random

import pytest

import tidelog.commands  # noqa: F401  (registers the commands before the engine is built)
from tests.support.engine_harness import (
    NOW,
    GroupHarness,
    b,
    entry,
    fill,
    ids,
    pel,
    setid_effect,
    xclaim_effect,
)
from tidelog import errors
from tidelog.engine import BLOCKED
from tidelog.ids import StreamID
from tidelog.resp.replies import NULL_ARRAY, OK, ErrorReply, Map

HOUR = 3_600_000


@pytest.fixture
def h():
    return GroupHarness()


# -- XGROUP ---------------------------------------------------------------------------

def test_create_setid_destroy(h):
    assert h.err("XGROUP", "CREATE", "s", "g", "$") == errors.XGROUP_KEY_MISSING
    assert h("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM") == OK
    assert h.err("XGROUP", "CREATE", "s", "g", "0") == errors.BUSYGROUP
    fill(h, 3)
    assert h("XGROUP", "CREATE", "s", "h", "$", "ENTRIESREAD", "3") == OK
    assert h.group("h").last_id == StreamID(3, 1) and h.group("h").entries_read == 3
    assert h("XGROUP", "SETID", "s", "g", "2-1") == OK
    assert h.group().last_id == StreamID(2, 1) and h.group().entries_read == -1
    assert h("XGROUP", "SETID", "s", "g", "+", "ENTRIESREAD", "0") == OK
    assert h.group().last_id == StreamID(2**64 - 1, 2**64 - 1)
    assert h("XGROUP", "DESTROY", "s", "g") == 1
    assert h("XGROUP", "DESTROY", "s", "g") == 0
    assert list(h.stream().groups) == [b"h"]
    assert h.take_effects() == [
        [b"XGROUP", b"CREATE", b"s", b"g", b"$", b"MKSTREAM"],
        *[[b"XADD", b"s", b"%d-1" % i, b"f", b"%d" % i] for i in (1, 2, 3)],
        [b"XGROUP", b"CREATE", b"s", b"h", b"$", b"ENTRIESREAD", b"3"],
        [b"XGROUP", b"SETID", b"s", b"g", b"2-1"],
        [b"XGROUP", b"SETID", b"s", b"g", b"+", b"ENTRIESREAD", b"0"],
        [b"XGROUP", b"DESTROY", b"s", b"g"],
    ]


def test_consumers_create_and_delete(h):
    fill(h, 3)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    assert h("XGROUP", "CREATECONSUMER", "s", "g", "c") == 1
    assert h("XGROUP", "CREATECONSUMER", "s", "g", "c") == 0
    h.ok("XREADGROUP", "GROUP", "g", "d", "COUNT", "2", "STREAMS", "s", ">")
    h.take_effects()
    assert h("XGROUP", "DELCONSUMER", "s", "g", "d") == 2
    assert h("XGROUP", "DELCONSUMER", "s", "g", "d") == 0
    assert len(h.group().pel) == 0 and list(h.group().consumers) == [b"c"]
    assert h.take_effects() == [[b"XGROUP", b"DELCONSUMER", b"s", b"g", b"d"]]


def test_group_commands_do_not_touch_watch_except_mkstream(h):
    fill(h, 2)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    watcher = h.new_client()
    for argv in (["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"],
                 ["XACK", "s", "g", "1-1"], ["XCLAIM", "s", "g", "d", "0", "2-1"],
                 ["XAUTOCLAIM", "s", "g", "e", "0", "0"], ["XGROUP", "SETID", "s", "g", "0"],
                 ["XGROUP", "CREATECONSUMER", "s", "g", "x"], ["XGROUP", "DESTROY", "s", "g"],
                 ["XGROUP", "CREATE", "s", "g", "0"]):
        h.ok("WATCH", "s", client=watcher)
        dirty = h.engine.dirty
        h.ok(*argv)
        assert h.engine.dirty > dirty, argv  # it did count as a change
        h.ok("MULTI", client=watcher)
        h.ok("PING", client=watcher)
        assert h("EXEC", client=watcher) is not NULL_ARRAY, argv
    h.ok("WATCH", "n", client=watcher)
    h.ok("XGROUP", "CREATE", "n", "g", "$", "MKSTREAM")
    h.ok("MULTI", client=watcher)
    assert h("EXEC", client=watcher) is NULL_ARRAY


# -- XREADGROUP -------------------------------------------------------------------------

def test_new_entries_go_to_the_pel_with_effects(h):
    fill(h, 3)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    h.take_effects()
    reply = h("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s", ">")
    assert reply == [[b"s", [entry("1-1", "f", "1"), entry("2-1", "f", "2")]]]
    group = h.group()
    assert group.last_id == StreamID(2, 1) and group.entries_read == 2
    assert [(e.id, e.consumer.name, e.delivery_time, e.delivery_count)
            for e in group.pel.values()] == [(StreamID(1, 1), b"c", NOW, 1),
                                             (StreamID(2, 1), b"c", NOW, 1)]
    assert h.take_effects() == [
        [b"MULTI"],
        xclaim_effect("1-1", "c", NOW, 1, "1-1"),
        xclaim_effect("2-1", "c", NOW, 1, "2-1"),
        setid_effect("2-1", 2),
        [b"EXEC"],
    ]
    assert h("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">") == \
        [[b"s", [entry("3-1", "f", "3")]]]
    assert h("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">") is NULL_ARRAY
    h.take_effects()
    assert h("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">") is NULL_ARRAY
    assert h.take_effects() == []


def test_noack_reads_propagate_consumer_and_position(h):
    fill(h, 2)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    h.take_effects()
    h.ok("XREADGROUP", "GROUP", "g", "c", "NOACK", "STREAMS", "s", ">")
    assert len(h.group().pel) == 0
    assert h.take_effects() == [
        [b"MULTI"],
        [b"XGROUP", b"CREATECONSUMER", b"s", b"g", b"c"],
        setid_effect("2-1", 2),
        [b"EXEC"],
    ]
    assert h.group().consumer(b"c").active_time == -1  # nothing entered the PEL


def test_history_reads_bump_deliveries_and_propagate_nothing(h):
    fill(h, 4)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    h.ok("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    h.ok("XDEL", "s", "2-1")
    h.take_effects()
    h.clock.advance(500)
    dirty = h.engine.dirty
    reply = h("XREADGROUP", "GROUP", "g", "c", "COUNT", "3", "STREAMS", "s", "0")
    assert reply == [[b"s", [entry("1-1", "f", "1"), [b"2-1", NULL_ARRAY], entry("3-1", "f", "3")]]]
    counts = {e.id.ms: (e.delivery_count, e.delivery_time) for e in h.group().pel.values()}
    assert counts == {1: (2, NOW + 500), 2: (1, NOW), 3: (2, NOW + 500), 4: (1, NOW)}
    assert h.take_effects() == [] and h.engine.dirty == dirty
    # BLOCK and NOACK are ignored: served at once, still pending
    assert h("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "NOACK", "STREAMS", "s", "3-1") == \
        [[b"s", [entry("4-1", "f", "4")]]]
    assert len(h.group().pel) == 4
    # another consumer has no history; reading it creates the consumer, and
    # with no XCLAIM to make it on a replica, its creation is propagated
    # (Redis 8.8, redis/redis PR #14963)
    h.take_effects()
    assert h("XREADGROUP", "GROUP", "g", "d", "STREAMS", "s", "0") == [[b"s", []]]
    assert b"d" in h.group().consumers
    assert h.take_effects() == [[b"XGROUP", b"CREATECONSUMER", b"s", b"g", b"d"]]
    assert h("XREADGROUP", "GROUP", "g", "d", "STREAMS", "s", "0") == [[b"s", []]]
    assert h.take_effects() == []  # only when it was created


def test_consumer_seen_and_active_times(h):
    fill(h, 1)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    h.ok("XGROUP", "CREATECONSUMER", "s", "g", "c")
    h.clock.advance(100)
    assert h.consumers()[b"c"] == {b"name": b"c", b"pending": 0, b"idle": 100, b"inactive": -1}
    h.ok("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")   # seen and active
    h.clock.advance(40)
    h.ok("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")   # seen only (nothing new)
    h.clock.advance(10)
    info = h.consumers()[b"c"]
    assert (info[b"idle"], info[b"inactive"], info[b"pending"]) == (10, 50, 1)
    h.ok("XCLAIM", "s", "g", "c", str(HOUR), "1-1")             # attempted, not claimed
    h.clock.advance(5)
    info = h.consumers()[b"c"]
    assert (info[b"idle"], info[b"inactive"]) == (5, 55)
    h.ok("XAUTOCLAIM", "s", "g", "c", "0", "0")                  # claimed
    h.clock.advance(1)
    info = h.consumers()[b"c"]
    assert (info[b"idle"], info[b"inactive"]) == (1, 1)
    full = h.ok("XINFO", "STREAM", "s", "FULL")
    [group] = dict(full.items)[b"groups"]
    [consumer] = dict(group.items)[b"consumers"]
    assert dict(consumer.items)[b"seen-time"] == NOW + 155
    assert dict(consumer.items)[b"active-time"] == NOW + 155


def test_attempts_create_consumers_only_where_redis_7_0_does(h):
    fill(h, 1)
    h.ok("XGROUP", "CREATE", "s", "g", "$")
    h.ok("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")   # nothing new
    h.ok("XCLAIM", "s", "g", "b", "0", "1-1")                    # nothing pending
    h.ok("XAUTOCLAIM", "s", "g", "c", "0", "0")
    assert list(h.group().consumers) == []
    h.ok("XREADGROUP", "GROUP", "g", "d", "STREAMS", "s", "0")   # history: served
    assert list(h.group().consumers) == [b"d"]


def test_several_keys_and_errors_change_nothing(h):
    fill(h, 2, key="a")
    fill(h, 2, key="b", start=10)
    h.ok("XGROUP", "CREATE", "a", "g", "0")
    h.ok("XGROUP", "CREATE", "b", "g", "$")
    h.take_effects()
    assert h.err("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "nokey", ">", ">") == \
        errors.nogroup_xreadgroup(b"nokey", b"g").message
    assert h.err("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", ">", "$") == \
        errors.XREADGROUP_DOLLAR_ID
    assert h.take_effects() == [] and list(h.group(key="a").consumers) == []
    reply = h("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", ">", ">")
    assert reply == [[b"a", [entry("1-1", "f", "1"), entry("2-1", "f", "2")]]]
    h.client.protocol = 3
    h.ok("XADD", "b", "20-1", "f", "v")
    assert h("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", "0", ">") == \
        Map([(b"a", [entry("1-1", "f", "1"), entry("2-1", "f", "2")]),
             (b"b", [entry("20-1", "f", "v")])])


def test_setid_back_redelivers_to_the_new_reader(h):
    fill(h, 2)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    h.ok("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    h.ok("XCLAIM", "s", "g", "a", "0", "1-1", "RETRYCOUNT", "5")
    h.ok("XGROUP", "SETID", "s", "g", "0")
    h.clock.advance(7)
    h.ok("XREADGROUP", "GROUP", "g", "b", "COUNT", "1", "STREAMS", "s", ">")
    entry_1 = h.group().pending(StreamID(1, 1))
    assert (entry_1.consumer.name, entry_1.delivery_count, entry_1.delivery_time) == \
        (b"b", 1, NOW + 7)
    assert list(h.group().consumer(b"a").pel) == [StreamID(2, 1)]


# -- XACK, XPENDING ---------------------------------------------------------------------

def test_xack_and_xpending(h):
    fill(h, 5)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    h.ok("XREADGROUP", "GROUP", "g", "a", "COUNT", "3", "STREAMS", "s", ">")
    h.clock.advance(1000)
    h.ok("XREADGROUP", "GROUP", "g", "b", "STREAMS", "s", ">")
    h.clock.advance(500)
    assert h("XPENDING", "s", "g") == [5, b"1-1", b"5-1", [[b"a", b"3"], [b"b", b"2"]]]
    assert h("XPENDING", "s", "g", "-", "+", "10") == [
        [b"1-1", b"a", 1500, 1], [b"2-1", b"a", 1500, 1], [b"3-1", b"a", 1500, 1],
        [b"4-1", b"b", 500, 1], [b"5-1", b"b", 500, 1]]
    assert h("XPENDING", "s", "g", "IDLE", "1000", "-", "+", "10") == [
        [b"1-1", b"a", 1500, 1], [b"2-1", b"a", 1500, 1], [b"3-1", b"a", 1500, 1]]
    assert h("XPENDING", "s", "g", "IDLE", "501", "(1-1", "+", "1", "a") == [[b"2-1", b"a", 1500, 1]]
    assert h("XPENDING", "s", "g", "-", "(4-1", "10", "b") == []
    h.take_effects()
    assert h("XACK", "s", "g", "1-1", "4-1", "4-1", "9-9") == 2
    assert h("XACK", "s", "g", "1-1") == 0
    assert h("XACK", "nokey", "g", "bad") == 0
    assert h.take_effects() == [[b"XACK", b"s", b"g", b"1-1", b"4-1", b"4-1", b"9-9"]]
    assert h("XPENDING", "s", "g") == [3, b"2-1", b"5-1", [[b"a", b"2"], [b"b", b"1"]]]
    h.ok("XACK", "s", "g", "2-1", "3-1", "5-1")
    assert h("XPENDING", "s", "g") == [0, None, None, NULL_ARRAY]


# -- XCLAIM ------------------------------------------------------------------------------

def test_xclaim_idle_time_count_and_force(h):
    fill(h, 4)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    h.ok("XREADGROUP", "GROUP", "g", "a", "COUNT", "2", "STREAMS", "s", ">")
    h.clock.advance(1000)
    h.take_effects()
    assert h("XCLAIM", "s", "g", "b", "1001", "1-1") == []             # not idle enough
    assert h("XCLAIM", "s", "g", "b", "1000", "1-1") == [entry("1-1", "f", "1")]
    e1 = h.group().pending(StreamID(1, 1))
    assert (e1.consumer.name, e1.delivery_time, e1.delivery_count) == (b"b", NOW + 1000, 2)
    assert h("XCLAIM", "s", "g", "b", "0", "2-1", "IDLE", "300", "JUSTID") == [b"2-1"]
    e2 = h.group().pending(StreamID(2, 1))
    assert (e2.delivery_time, e2.delivery_count) == (NOW + 700, 1)      # JUSTID: no +1
    assert h("XCLAIM", "s", "g", "c", "0", "2-1", "TIME", str(NOW + 5), "RETRYCOUNT", "9") == \
        [entry("2-1", "f", "2")]
    assert (e2.consumer.name, e2.delivery_time, e2.delivery_count) == (b"c", NOW + 5, 9)
    assert h("XCLAIM", "s", "g", "c", "0", "3-1") == []                  # not pending
    assert h("XCLAIM", "s", "g", "c", "0", "3-1", "FORCE") == [entry("3-1", "f", "3")]
    assert h.group().pending(StreamID(3, 1)).delivery_count == 2         # 1, then claimed
    assert h("XCLAIM", "s", "g", "c", "0", "4", "FORCE", "JUSTID") == []  # 4-0: not an entry
    assert h.take_effects() == [
        xclaim_effect("1-1", "b", NOW + 1000, 2, "2-1"),
        xclaim_effect("2-1", "b", NOW + 700, 1, "2-1"),
        xclaim_effect("2-1", "c", NOW + 5, 9, "2-1"),
        xclaim_effect("3-1", "c", NOW + 1000, 2, "2-1"),
    ]


def test_xclaim_bad_delivery_times_mean_now(h):
    fill(h, 1)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    h.ok("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    h.clock.advance(50)
    for option in (["TIME", str(NOW + 10_000)], ["TIME", "-5"], ["IDLE", "-100"],
                   ["IDLE", str(NOW + 99)]):
        h.ok("XCLAIM", "s", "g", "a", "0", "1-1", *option)
        assert h.group().pending(StreamID(1, 1)).delivery_time == NOW + 50, option


def test_xclaim_deleted_entries_leave_the_pel(h):
    fill(h, 3)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    h.ok("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    h.ok("XDEL", "s", "2-1")
    h.take_effects()
    assert h("XCLAIM", "s", "g", "b", "0", "2-1", "3-1", "JUSTID") == [b"3-1"]
    assert list(h.group().pel) == [StreamID(1, 1), StreamID(3, 1)]
    assert h.take_effects() == [
        [b"MULTI"],
        xclaim_effect("2-1", "a", NOW, 1, "3-1"),   # the old record: a replica drops it too
        xclaim_effect("3-1", "b", NOW, 1, "3-1"),
        [b"EXEC"],
    ]


def test_xclaim_lastid(h):
    fill(h, 2)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    h.take_effects()
    h.ok("XCLAIM", "s", "g", "a", "0", "9-9", "LASTID", "1-1")
    assert h.group().last_id == StreamID(1, 1)
    assert h.take_effects() == [setid_effect("1-1", -1)]
    h.ok("XCLAIM", "s", "g", "a", "0", "2-1", "FORCE", "LASTID", "2-1", "JUSTID")
    assert h.take_effects() == [xclaim_effect("2-1", "a", NOW, 1, "2-1")]  # carries LASTID
    h.ok("XCLAIM", "s", "g", "a", "0", "9-9", "LASTID", "0-5")              # never backwards
    assert h.group().last_id == StreamID(2, 1) and h.take_effects() == []


# -- XAUTOCLAIM --------------------------------------------------------------------------

def test_xautoclaim_cursor_count_and_deleted(h):
    fill(h, 6)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    h.ok("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    h.clock.advance(100)
    h.ok("XCLAIM", "s", "g", "a", "0", "2-1", "5-1", "JUSTID")   # fresh again
    h.ok("XDEL", "s", "3-1")
    h.clock.advance(50)
    h.take_effects()
    reply = h("XAUTOCLAIM", "s", "g", "b", "100", "0", "COUNT", "2")
    assert reply == [b"4-1", [entry("1-1", "f", "1")], [b"3-1"]]   # 2-1 skipped, 3-1 dropped
    assert h.take_effects() == [
        [b"MULTI"],
        xclaim_effect("1-1", "b", NOW + 150, 2, "6-1"),
        xclaim_effect("3-1", "a", NOW, 1, "6-1"),
        [b"EXEC"],
    ]
    assert h("XAUTOCLAIM", "s", "g", "b", "100", "4-1", "JUSTID") == [b"0-0", [b"4-1", b"6-1"], []]
    e4 = h.group().pending(StreamID(4, 1))
    assert (e4.consumer.name, e4.delivery_count, e4.delivery_time) == (b"b", 1, NOW + 150)
    assert h.group().pending(StreamID(1, 1)).delivery_count == 2


def test_xautoclaim_scans_at_most_ten_times_count(h):
    fill(h, 40)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    h.ok("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    h.ok("XCLAIM", "s", "g", "a", "0", "15-1", "35-1", "IDLE", "5000", "JUSTID")
    # COUNT 1: 10 entries looked at per call, so 15-1 is found on the second call
    assert h("XAUTOCLAIM", "s", "g", "b", "1000", "0", "COUNT", "1", "JUSTID") == [b"11-1", [], []]
    assert h("XAUTOCLAIM", "s", "g", "b", "1000", "11-1", "COUNT", "1", "JUSTID") == \
        [b"16-1", [b"15-1"], []]
    assert h("XAUTOCLAIM", "s", "g", "b", "1000", "16-1", "COUNT", "2", "JUSTID") == \
        [b"36-1", [b"35-1"], []]
    assert h("XAUTOCLAIM", "s", "g", "b", "1000", "36-1", "COUNT", "2", "JUSTID") == \
        [b"0-0", [], []]


def test_xautoclaim_count_limits(h):
    fill(h, 1)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    big = (2**63 - 1) // 16
    assert h("XAUTOCLAIM", "s", "g", "b", "0", "0", "COUNT", str(big)) == [b"0-0", [], []]
    assert h.err("XAUTOCLAIM", "s", "g", "b", "0", "0", "COUNT", str(big + 1)) == \
        errors.XAUTOCLAIM_COUNT


# -- lag ---------------------------------------------------------------------------------

def test_lag_after_xdel_xtrim_and_setid(h):
    fill(h, 5)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    info = h.info_groups()[b"g"]
    assert (info[b"entries-read"], info[b"lag"]) == (None, 5)
    h.ok("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s", ">")
    info = h.info_groups()[b"g"]
    assert (info[b"entries-read"], info[b"lag"]) == (2, 3)
    h.ok("XDEL", "s", "4-1")                      # a tombstone after last-delivered: unknown
    assert h.info_groups()[b"g"][b"lag"] is None
    h.ok("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    info = h.info_groups()[b"g"]
    assert (info[b"entries-read"], info[b"lag"]) == (5, 0)
    h.ok("XTRIM", "s", "MAXLEN", "0")
    assert h.info_groups()[b"g"][b"lag"] == 0
    fill(h, 2, start=10)
    assert h.info_groups()[b"g"][b"lag"] == 2
    h.ok("XGROUP", "SETID", "s", "g", "10-1", "ENTRIESREAD", "6")
    info = h.info_groups()[b"g"]
    assert (info[b"last-delivered-id"], info[b"entries-read"], info[b"lag"]) == (b"10-1", 6, 1)
    h.ok("XGROUP", "SETID", "s", "g", "$")
    info = h.info_groups()[b"g"]
    assert (info[b"entries-read"], info[b"lag"]) == (None, 0)


def test_xinfo_stream(h):
    h.ok("XGROUP", "CREATE", "e", "g", "$", "MKSTREAM")
    info = dict(h.ok("XINFO", "STREAM", "e").items)
    assert info == {b"length": 0, b"radix-tree-keys": 0, b"radix-tree-nodes": 1,
                    b"last-generated-id": b"0-0", b"max-deleted-entry-id": b"0-0",
                    b"entries-added": 0, b"recorded-first-entry-id": b"0-0", b"groups": 1,
                    b"first-entry": None, b"last-entry": None,
                    # Redis 8.6's IDMP fields (tests/unit/test_idmp_commands.py)
                    b"idmp-duration": 100, b"idmp-maxsize": 100, b"pids-tracked": 0,
                    b"iids-tracked": 0, b"iids-added": 0, b"iids-duplicates": 0}
    fill(h, 12)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    h.ok("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    full = dict(h.ok("XINFO", "STREAM", "s", "FULL", "COUNT", "3").items)
    assert ids(full[b"entries"]) == [b"1-1", b"2-1", b"3-1"]
    [group] = full[b"groups"]
    group = dict(group.items)
    assert group[b"pel-count"] == 12 and len(group[b"pending"]) == 3
    [consumer] = group[b"consumers"]
    consumer = dict(consumer.items)
    assert consumer[b"pel-count"] == 12 and len(consumer[b"pending"]) == 3
    assert consumer[b"pending"][0] == [b"1-1", NOW, 1]
    full = dict(h.ok("XINFO", "STREAM", "s", "FULL", "COUNT", "0").items)
    assert len(full[b"entries"]) == 12
    full = dict(h.ok("XINFO", "STREAM", "s", "FULL").items)
    assert len(full[b"entries"]) == 10


# -- blocking ------------------------------------------------------------------------------

def test_blocked_consumers_are_served_fifo_one_entry_each(h):
    h.ok("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    readers = [h.new_client() for _ in range(3)]
    for n, reader in enumerate(readers):
        assert h("XREADGROUP", "GROUP", "g", f"c{n}", "COUNT", "1", "BLOCK", "0",
                 "STREAMS", "s", ">", client=reader) is BLOCKED
    h.take_effects()
    h.ok("MULTI")
    h.ok("XADD", "s", "1-1", "f", "v")
    h.ok("XADD", "s", "2-1", "f", "v")
    h.ok("EXEC")
    assert readers[0].inbox == [[[b"s", [entry("1-1", "f", "v")]]]]
    assert readers[1].inbox == [[[b"s", [entry("2-1", "f", "v")]]]]
    assert readers[2].inbox == [] and readers[2].blocked is not None
    assert h.take_effects() == [
        [b"MULTI"], [b"XADD", b"s", b"1-1", b"f", b"v"], [b"XADD", b"s", b"2-1", b"f", b"v"],
        [b"EXEC"],
        [b"MULTI"], xclaim_effect("1-1", "c0", NOW, 1, "1-1"), setid_effect("1-1", 1), [b"EXEC"],
        [b"MULTI"], xclaim_effect("2-1", "c1", NOW, 1, "2-1"), setid_effect("2-1", 2), [b"EXEC"],
    ]
    h.ok("XADD", "s", "3-1", "f", "v")
    assert readers[2].inbox == [[[b"s", [entry("3-1", "f", "v")]]]]
    assert {e.consumer.name for e in h.group().pel.values()} == {b"c0", b"c1", b"c2"}


def test_blocked_consumer_waits_on_when_nothing_is_left(h):
    h.ok("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    reader = h.new_client()
    assert h("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">",
             client=reader) is BLOCKED
    h.ok("MULTI")
    h.ok("XADD", "s", "1-1", "f", "v")
    h.ok("XDEL", "s", "1-1")
    h.ok("EXEC")
    assert reader.inbox == [] and reader.blocked is not None
    h.ok("XGROUP", "SETID", "s", "g", "0")   # SETID wakes nobody (as Redis)
    assert reader.inbox == []
    h.ok("XADD", "s", "2-1", "f", "v")
    assert reader.inbox == [[[b"s", [entry("2-1", "f", "v")]]]]


@pytest.mark.parametrize("wake", [
    ["XGROUP", "DESTROY", "s", "g"], ["DEL", "s"], ["UNLINK", "s"], ["FLUSHALL"], ["FLUSHDB"],
    ["RENAME", "s", "t"], ["SET", "s", "x"], ["EXPIRE", "s", "0"],
])
def test_blocked_consumer_gets_an_error_when_its_group_goes(h, wake):
    h.ok("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    reader = h.new_client()
    assert h("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">",
             client=reader) is BLOCKED
    h.ok(*wake)
    expect = errors.WRONGTYPE if wake[0] == "SET" else \
        errors.nogroup_xreadgroup(b"s", b"g").message
    assert reader.inbox == [ErrorReply(expect)]
    assert reader.blocked is None and h.engine.waiters == {}


def test_blocked_consumer_on_two_keys_fails_for_either(h):
    for key in ("a", "b"):
        h.ok("XGROUP", "CREATE", key, "g", "$", "MKSTREAM")
    reader = h.new_client()
    h("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "a", "b", ">", ">", client=reader)
    h.ok("XGROUP", "DESTROY", "b", "g")
    assert reader.inbox == [ErrorReply(errors.nogroup_xreadgroup(b"b", b"g").message)]


def test_blocked_consumer_times_out_and_multi_does_not_block(h):
    h.ok("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    reader = h.new_client()
    assert h("XREADGROUP", "GROUP", "g", "c", "BLOCK", "100", "STREAMS", "s", ">",
             client=reader) is BLOCKED
    h.engine.timeout_blocked(reader.blocked)
    assert reader.inbox == [NULL_ARRAY]
    h.ok("MULTI")
    h.ok("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
    h.ok("XADD", "s", "1-1", "f", "v")
    h.ok("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
    assert h("EXEC") == [NULL_ARRAY, b"1-1", [[b"s", [entry("1-1", "f", "v")]]]]


def test_blocked_noack_consumer_propagates_its_creation_when_served(h):
    h.ok("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    reader = h.new_client()
    h("XREADGROUP", "GROUP", "g", "c", "NOACK", "BLOCK", "0", "STREAMS", "s", ">", client=reader)
    h.take_effects()
    h.ok("XADD", "s", "1-1", "f", "v")
    assert reader.inbox == [[[b"s", [entry("1-1", "f", "v")]]]]
    assert h.take_effects() == [
        [b"XADD", b"s", b"1-1", b"f", b"v"],
        [b"MULTI"], [b"XGROUP", b"CREATECONSUMER", b"s", b"g", b"c"], setid_effect("1-1", 1),
        [b"EXEC"],
    ]


# -- replaying the effects -----------------------------------------------------------------

def _pel_state(h: GroupHarness, key="s"):
    stream = h.engine.dbs[0].data.get(b(key))
    if stream is None:
        return None
    out = {}
    for name, group in stream.groups.items():
        group.check()
        out[name] = (group.last_id, group.entries_read,
                     [(e.id, e.consumer.name, e.delivery_time, e.delivery_count)
                      for e in group.pel.values()],
                     sorted(c.name for c in group.consumers.values() if c.pel))
    return out


@pytest.mark.parametrize("seed", range(5))
def test_effects_replay_to_the_same_groups_twice_over(seed):
    """What the AOF and replicas get rebuilds the same PELs and positions, and
    applying the XCLAIM effects a second time changes nothing."""
    rng = random.Random(seed)
    source = GroupHarness(node_entries=rng.choice([1, 4, 100]))
    source.ok("XGROUP", "CREATE", "s", "g", "0", "MKSTREAM")
    next_ms = 1
    for _ in range(250):
        source.clock.advance(rng.randint(0, 50))
        consumer = rng.choice(["a", "b", "c"])
        op = rng.randrange(10)
        some = f"{rng.randint(1, next_ms + 1)}-1"
        if op < 3:
            source.ok("XADD", "s", f"{next_ms}-1", "f", "v")
            next_ms += 1
        elif op == 3:
            source.ok("XREADGROUP", "GROUP", "g", consumer, "COUNT", rng.randint(1, 3),
                      *(["NOACK"] if rng.random() < 0.2 else []), "STREAMS", "s", ">")
        elif op == 4:
            source.ok("XREADGROUP", "GROUP", "g", consumer, "STREAMS", "s", "0")
        elif op == 5:
            source.ok("XACK", "s", "g", some)
        elif op == 6:
            source.ok("XCLAIM", "s", "g", consumer, rng.choice(["0", "100"]), some,
                      *rng.choice([[], ["JUSTID"], ["FORCE"], ["LASTID", some]]))
        elif op == 7:
            source.ok("XAUTOCLAIM", "s", "g", consumer, rng.choice(["0", "100"]), "0",
                      "COUNT", rng.randint(1, 3))
        elif op == 8:
            source.ok("XDEL", "s", some)
        elif rng.random() < 0.5:
            source.ok("XGROUP", "SETID", "s", "g", rng.choice(["0", some]))
        else:
            source.ok("XGROUP", "DELCONSUMER", "s", "g", consumer)
    effects = source.take_effects()

    def replay(twice: bool) -> GroupHarness:
        replica = GroupHarness()
        replica.clock.set_ms(source.clock.now_ms())
        aof = replica.new_client(kind="aof")
        for argv in effects:
            replica.ok(*argv, client=aof)
            if twice and argv[0] == b"XCLAIM":
                replica.ok(*argv, client=aof)
        return replica

    once = replay(twice=False)
    # History reads bump delivery counts and times without propagating (as
    # Redis 7.4+): compare everything but those.
    want, got = _pel_state(source), _pel_state(once)
    assert want.keys() == got.keys()
    for name in want:
        w_last, w_read, w_pel, w_owners = want[name]
        g_last, g_read, g_pel, g_owners = got[name]
        assert (w_last, w_read, w_owners) == (g_last, g_read, g_owners)
        assert [(id, owner) for id, owner, _, _ in w_pel] == \
            [(id, owner) for id, owner, _, _ in g_pel]
    # Each XCLAIM effect applied twice in a row ends where once does.
    assert _pel_state(replay(twice=True)) == got


def test_replayed_effects_match_exactly_without_history_reads(h):
    fill(h, 6)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    h.ok("XREADGROUP", "GROUP", "g", "a", "COUNT", "3", "STREAMS", "s", ">")
    h.clock.advance(10)
    h.ok("XREADGROUP", "GROUP", "g", "b", "NOACK", "COUNT", "1", "STREAMS", "s", ">")
    h.ok("XREADGROUP", "GROUP", "g", "b", "STREAMS", "s", ">")
    h.clock.advance(10)
    h.ok("XCLAIM", "s", "g", "c", "5", "1-1", "2-1", "RETRYCOUNT", "4")
    h.ok("XDEL", "s", "3-1")
    h.ok("XAUTOCLAIM", "s", "g", "b", "0", "0", "COUNT", "2")
    h.ok("XACK", "s", "g", "5-1")
    effects = h.take_effects()
    replica = GroupHarness()
    replica.clock.set_ms(h.clock.now_ms())  # XCLAIM takes a TIME in its future as now
    aof = replica.new_client(kind="aof")
    for argv in effects:
        replica.ok(*argv, client=aof)
    assert _pel_state(replica) == _pel_state(h)


# -- the bulk paths: the same with and without a listener ---------------------------

@pytest.mark.parametrize("seed", range(12))
def test_bulk_delivery_and_ack_match_the_per_entry_paths(seed):
    # With no listener XREADGROUP > takes the batch into the group in bulk and
    # XACK removes runs in bulk; with one (the AOF, a replica) both go entry by
    # entry.  Any sequence must give the same replies, PEL, times and counts,
    # position and XINFO either way.  Tombstones, SETID back, claims, NOACK and
    # unordered or repeated acks take the fallbacks.
    rng = random.Random(seed)
    bulk = GroupHarness(node_entries=rng.choice([1, 3, 100]))
    each = GroupHarness(node_entries=bulk.engine.config["stream-node-max-entries"])
    bulk.engine.effect_listeners.clear()
    delivered: dict[bytes, list[bytes]] = {}
    seq = 0

    def both(*argv):
        got = bulk(*argv)
        assert got == each(*argv), argv
        return got

    for i in range(30):
        seq += 1
        both("XADD", "s", f"{seq}-0", "f", f"{i}")
    both("XGROUP", "CREATE", "s", "g", "0")
    for _ in range(120):
        op = rng.choice(["add", "read", "read", "ack", "ack", "del", "setid", "claim", "tick"])
        if op == "add":
            for _ in range(rng.randrange(1, 6)):
                seq += rng.choice([1, 1, 200])
                both("XADD", "s", f"{seq}-{rng.randrange(3)}", "f", "v")
        elif op == "read":
            c = rng.choice(["a", "b", "c"])
            extra = ["NOACK"] if rng.random() < 0.1 else []
            got = both("XREADGROUP", "GROUP", "g", c, "COUNT", rng.choice([1, 5, 20]), *extra,
                       "STREAMS", "s", ">")
            if got is not NULL_ARRAY and not extra:
                delivered.setdefault(c, []).extend(ids(got[0][1]))
        elif op == "ack" and delivered:
            mine = delivered[rng.choice(sorted(delivered))]
            shape = rng.choice(["front", "run", "any"])
            if shape == "front":
                chosen = mine[:rng.randrange(1, 30)]
            elif shape == "run":
                at = rng.randrange(len(mine) or 1)
                chosen = mine[at:at + rng.randrange(1, 10)]
            else:
                chosen = rng.sample(mine, min(len(mine), 4)) + mine[:1]
            if chosen:
                both("XACK", "s", "g", *chosen)
        elif op == "del":
            for id in ids(both("XRANGE", "s", "-", "+"))[:: rng.choice([3, 7])][:2]:
                both("XDEL", "s", id)
        elif op == "setid":
            both("XGROUP", "SETID", "s", "g", rng.choice(["0", f"{seq // 2}-0"]),
                 *(["ENTRIESREAD", "3"] if rng.random() < 0.5 else []))
        elif op == "claim" and delivered:
            mine = delivered[rng.choice(sorted(delivered))]
            if mine:
                both("XCLAIM", "s", "g", rng.choice(["a", "b", "c"]), "0",
                     rng.choice(mine))
        else:
            ms = rng.choice([0, 1, 50])
            bulk.clock.advance(ms)
            each.clock.advance(ms)
        assert pel(bulk) == pel(each)
        bulk.group().check()
    assert both("XINFO", "STREAM", "s", "FULL") is not None
    assert both("XPENDING", "s", "g") is not None
    assert bulk.info_groups() == each.info_groups()
