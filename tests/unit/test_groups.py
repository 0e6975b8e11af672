"""The consumer-group data type: PEL and consumers, scans, entries-read and lag.

Cases marked "redis-server 7.0.15" replay a session run against that server
(XINFO GROUPS, XPENDING) and expect what it replied.  ``read_new`` below plays
the part of XREADGROUP ``>``: walk the stream after ``last_id``, deliver each
entry, advance the group.
"""

from __future__ import annotations

from itertools import islice

import pytest

from tidelog.ids import MAX_ID, MIN_ID, StreamID
from tidelog.types import groups as groups_module
from tidelog.types.groups import (
    Consumer,
    ConsumerGroup,
    PendingEntry,
    clamp_entries_read,
    estimate_entries_read,
    range_has_tombstones,
)
from tidelog.types.stream import Stream

I = StreamID  # noqa: E741 - short for the many IDs below


def stream_of(*ms: int) -> Stream:
    s = Stream()
    for m in ms:
        s.append(I(m, 0), [b"f", b"v"], 100, 0)
    return s


def read_new(
    g: ConsumerGroup, s: Stream, consumer: Consumer | None, now: int, count: int = 0
) -> list[StreamID]:
    """XREADGROUP ``>`` (NOACK when ``consumer`` is None): the IDs delivered."""
    if g.last_id == MAX_ID:
        return []
    entries = s.range(g.last_id.incr(), MAX_ID)
    if count:
        entries = islice(entries, count)
    delivered = []
    for id, _ in list(entries):
        g.advance(id, s)
        if consumer is not None:
            g.deliver(id, consumer, now)
        delivered.append(id)
    g.check()
    return delivered


def group_with(*owners: bytes, now: int = 1000) -> ConsumerGroup:
    """A group whose entries 1-0, 2-0, ... were delivered to the given owners, 1 ms apart."""
    g = ConsumerGroup(b"g", MIN_ID)
    for n, name in enumerate(owners, start=1):
        c, _ = g.create_consumer(name, 0)
        g.deliver(I(n, 0), c, now + n)
        g.advance(I(n, 0), stream_of())
    g.check()
    return g


def ids(entries) -> list[int]:
    return [e.id.ms for e in entries]


# -- consumers ----------------------------------------------------------------


def test_new_group_is_empty():
    g = ConsumerGroup(b"g", I(5, 1))
    assert (g.name, g.last_id, g.entries_read) == (b"g", I(5, 1), -1)
    assert len(g.pel) == 0 and len(g.consumers) == 0
    assert ConsumerGroup(b"h", MIN_ID, 7).entries_read == 7
    assert g.summary() == (0, None, None, [])
    g.check()


def test_create_consumer_new_and_existing():
    g = ConsumerGroup(b"g", MIN_ID)
    c, created = g.create_consumer(b"alice", 100)
    assert created and (c.name, c.seen_time, c.active_time, len(c.pel)) == (b"alice", 100, -1, 0)
    again, created = g.create_consumer(b"alice", 200)
    assert again is c and not created
    assert c.seen_time == 100  # an existing consumer is returned unchanged
    assert g.consumer(b"alice") is c and g.consumer(b"bob") is None
    g.check()


def test_consumers_iterate_in_byte_order():
    g = ConsumerGroup(b"g", MIN_ID)
    for name in (b"zed", b"b", b"aaa", b"B", b"ab", b"a"):
        g.create_consumer(name, 0)
    assert list(g.consumers) == [b"B", b"a", b"aaa", b"ab", b"b", b"zed"]


def test_delete_consumer_counts_and_drops_its_entries():
    g = group_with(b"a", b"b", b"a", b"a", b"b")
    assert g.delete_consumer(b"a") == 3
    assert g.consumer(b"a") is None
    assert ids(g.pending_range(MIN_ID, MAX_ID)) == [2, 5]
    assert [t for t, _ in g._by_time] == [1002, 1005]
    g.check()
    assert g.delete_consumer(b"nobody") == 0
    assert g.delete_consumer(b"a") == 0
    g.create_consumer(b"idle", 0)
    assert g.delete_consumer(b"idle") == 0
    assert g.delete_consumer(b"b") == 2
    assert len(g.pel) == 0 and list(g.consumers) == []
    g.check()


# -- deliver, ack, claim, touch, release ----------------------------------------


def test_deliver_new_entry():
    g = ConsumerGroup(b"g", MIN_ID)
    c, _ = g.create_consumer(b"alice", 10)
    e = g.deliver(I(1, 0), c, 500)
    assert isinstance(e, PendingEntry)
    assert (e.id, e.delivery_time, e.delivery_count, e.consumer) == (I(1, 0), 500, 1, c)
    assert g.pel[I(1, 0)] is e and c.pel[I(1, 0)] is e and g.pending(I(1, 0)) is e
    assert c.active_time == 500 and c.seen_time == 10
    assert g.last_id == MIN_ID  # deliver does not move the group: advance does
    g.check()


def test_deliver_reassigns_a_pending_entry():
    # redis-server 7.0.15: alice reads 1..3 and re-reads her history twice
    # (count 3); XGROUP SETID g 1-0; bob reads 2-0 -> owner bob, count 1;
    # alice reads 3-0 again -> still alice, count 1.
    s = stream_of(1, 2, 3)
    g = ConsumerGroup(b"g", MIN_ID)
    alice, _ = g.create_consumer(b"alice", 0)
    bob, _ = g.create_consumer(b"bob", 0)
    assert read_new(g, s, alice, 100) == [I(1, 0), I(2, 0), I(3, 0)]
    for now in (110, 120):
        for e in list(g.consumer_pending_range(alice, MIN_ID, MAX_ID)):
            g.touch_delivery(e, now)
    assert [e.delivery_count for e in g.pending_range(MIN_ID, MAX_ID)] == [3, 3, 3]
    before = g.pending(I(2, 0))

    g.set_id(I(1, 0), None, s)
    assert read_new(g, s, bob, 400, count=1) == [I(2, 0)]
    e = g.pending(I(2, 0))
    assert e is before  # the same record moves
    assert (e.consumer, e.delivery_count, e.delivery_time) == (bob, 1, 400)
    assert list(alice.pel) == [I(1, 0), I(3, 0)] and list(bob.pel) == [I(2, 0)]
    assert bob.active_time == 400

    assert read_new(g, s, alice, 450, count=1) == [I(3, 0)]
    e = g.pending(I(3, 0))
    assert (e.consumer, e.delivery_count, e.delivery_time) == (alice, 1, 450)
    assert g.summary() == (3, I(1, 0), I(3, 0), [(b"alice", 2), (b"bob", 1)])


def test_deliver_takes_over_an_unowned_entry():
    g = group_with(b"a")
    g.release(I(1, 0))
    b, _ = g.create_consumer(b"b", 0)
    e = g.deliver(I(1, 0), b, 3000)
    assert (e.consumer, e.delivery_count, e.delivery_time) == (b, 1, 3000)
    g.check()


def test_deliver_and_claim_refuse_a_foreign_consumer():
    g = ConsumerGroup(b"g", MIN_ID)
    other = ConsumerGroup(b"h", MIN_ID)
    stranger, _ = other.create_consumer(b"x", 0)
    with pytest.raises(ValueError):
        g.deliver(I(1, 0), stranger, 0)
    g.create_consumer(b"x", 0)  # same name, different object
    with pytest.raises(ValueError):
        g.claim(I(1, 0), stranger, 0, 1)
    assert len(g.pel) == 0 and len(stranger.pel) == 0
    g.check()


def test_ack():
    g = group_with(b"a", b"b", b"a")
    a = g.consumer(b"a")
    e = g.pending(I(1, 0))
    assert g.ack(I(1, 0)) is True
    assert g.pending(I(1, 0)) is None and I(1, 0) not in a.pel
    assert e.consumer is None
    assert g.ack(I(1, 0)) is False
    assert g.ack(I(9, 0)) is False
    assert ids(g.pending_range(MIN_ID, MAX_ID)) == [2, 3]
    g.check()
    g.release(I(2, 0))
    assert g.ack(I(2, 0)) is True  # an unowned entry acks too
    assert ids(g.pending_range(MIN_ID, MAX_ID)) == [3]
    g.check()


def test_claim_moves_an_entry_and_sets_time_and_count():
    g = group_with(b"a", b"a")
    a = g.consumer(b"a")
    b, _ = g.create_consumer(b"b", 0)
    e = g.pending(I(1, 0))
    assert g.claim(I(1, 0), b, 5000, 7) is e
    assert (e.consumer, e.delivery_time, e.delivery_count) == (b, 5000, 7)
    assert list(a.pel) == [I(2, 0)] and list(b.pel) == [I(1, 0)]
    assert b.active_time == -1  # the command sets consumer times, not claim
    g.check()
    # to the same consumer: time and count only
    assert g.claim(I(1, 0), b, 10, 0) is e
    assert (e.consumer, e.delivery_time, e.delivery_count) == (b, 10, 0)
    assert [t for t, _ in g._by_time] == [10, 1002]
    g.check()


def test_claim_creates_a_missing_entry():  # XCLAIM FORCE
    g = ConsumerGroup(b"g", MIN_ID)
    c, _ = g.create_consumer(b"c", 0)
    e = g.claim(I(50, 3), c, 123, 4)
    assert (e.id, e.consumer, e.delivery_time, e.delivery_count) == (I(50, 3), c, 123, 4)
    assert g.pel[I(50, 3)] is e and c.pel[I(50, 3)] is e
    assert g.last_id == MIN_ID  # a pending ID above last_id is allowed
    g.check()


def test_claim_takes_over_an_unowned_entry():
    g = group_with(b"a")
    g.release(I(1, 0))
    b, _ = g.create_consumer(b"b", 0)
    g.claim(I(1, 0), b, 77, 2)
    assert g.pending(I(1, 0)).consumer is b and list(b.pel) == [I(1, 0)]
    g.check()


def test_touch_delivery():
    g = group_with(b"a", b"a")
    e = g.pending(I(1, 0))
    g.touch_delivery(e, 9000)
    assert (e.delivery_time, e.delivery_count) == (9000, 2)
    g.touch_delivery(e, 9500, increment=False)
    assert (e.delivery_time, e.delivery_count) == (9500, 2)
    assert ids(g.idle_first(10_000, 0)) == [2, 1]
    g.check()
    g.ack(I(1, 0))
    with pytest.raises(ValueError):
        g.touch_delivery(e, 1)
    g.check()


def test_release_makes_an_entry_unowned():
    g = group_with(b"a", b"b")
    a = g.consumer(b"a")
    e = g.release(I(1, 0))
    assert e is not None and e.consumer is None and e.delivery_time == 0
    assert e.delivery_count == 1
    assert len(a.pel) == 0 and g.pending(I(1, 0)) is e
    assert g.summary() == (2, I(1, 0), I(2, 0), [(b"b", 1)])
    assert g.release(I(9, 0)) is None
    g.check()
    assert g.delete_consumer(b"a") == 0  # unowned entries stay
    assert g.pending(I(1, 0)) is e
    assert g.release(I(2, 0), delivery_time=55).delivery_time == 55
    g.check()


# -- summary and scans ------------------------------------------------------------


def test_summary():
    # redis-server 7.0.15: consumers with nothing pending are left out;
    # the rest in name order.
    g = group_with(b"bob", b"alice", b"alice")
    g.create_consumer(b"aaa", 0)
    g.create_consumer(b"zed", 0)
    assert g.summary() == (3, I(1, 0), I(3, 0), [(b"alice", 2), (b"bob", 1)])
    g.ack(I(1, 0))
    assert g.summary() == (2, I(2, 0), I(3, 0), [(b"alice", 2)])
    g.ack(I(2, 0))
    g.ack(I(3, 0))
    assert g.summary() == (0, None, None, [])


def test_pending_range_is_inclusive_and_reversible():
    g = group_with(*[b"a", b"b"] * 10)
    assert ids(g.pending_range(I(3, 0), I(7, 0))) == [3, 4, 5, 6, 7]
    assert ids(g.pending_range(I(3, 0), I(7, 0), rev=True)) == [7, 6, 5, 4, 3]
    assert ids(g.pending_range(I(2, 1), I(6, 99))) == [3, 4, 5, 6]
    assert ids(g.pending_range(I(30, 0), MAX_ID)) == []
    assert ids(g.pending_range(I(7, 0), I(3, 0))) == []
    assert ids(islice(g.pending_range(MIN_ID, MAX_ID), 4)) == [1, 2, 3, 4]
    assert ids(islice(g.pending_range(MIN_ID, MAX_ID, rev=True), 4)) == [20, 19, 18, 17]
    b = g.consumer(b"b")
    assert ids(g.consumer_pending_range(b, I(3, 0), I(12, 0))) == [4, 6, 8, 10, 12]
    assert ids(g.consumer_pending_range(b, MIN_ID, I(9, 0), rev=True)) == [8, 6, 4, 2]


@pytest.mark.timeout(60)  # a re-seek that does not move on loops forever
@pytest.mark.parametrize("batch", [(1, 1), (2, 4), (16, 1024)])
def test_scans_cross_batches(monkeypatch, batch):
    monkeypatch.setattr(groups_module, "_FIRST_BATCH", batch[0])
    monkeypatch.setattr(groups_module, "_MAX_BATCH", batch[1])
    g = group_with(*[b"a", b"b", b"c"] * 100)
    everything = list(range(1, 301))
    assert ids(g.pending_range(MIN_ID, MAX_ID)) == everything
    assert ids(g.pending_range(MIN_ID, MAX_ID, rev=True)) == everything[::-1]
    assert ids(g.consumer_pending_range(g.consumer(b"b"), MIN_ID, MAX_ID)) == everything[1::3]
    assert ids(g.idle_first(5000, 0)) == everything


@pytest.mark.timeout(60)  # a re-seek that does not move on loops forever
@pytest.mark.parametrize("batch", [(1, 1), (2, 4), (16, 1024)])
def test_pending_range_survives_changes_while_iterating(monkeypatch, batch):
    # XAUTOCLAIM acks (deleted entries) and claims as it scans.
    monkeypatch.setattr(groups_module, "_FIRST_BATCH", batch[0])
    monkeypatch.setattr(groups_module, "_MAX_BATCH", batch[1])
    g = group_with(*[b"a"] * 60)
    z, _ = g.create_consumer(b"z", 0)
    seen = []
    for e in g.pending_range(MIN_ID, MAX_ID):
        seen.append(e.id.ms)
        n = e.id.ms
        if n % 3 == 0:
            g.ack(e.id)
        else:
            g.claim(e.id, z, 9999, 2)
        if n + 1 <= 60 and n % 10 == 0:
            g.ack(I(n + 1, 0))  # acked ahead of the scan: never yielded
    assert seen == [n for n in range(1, 61) if not (n % 10 == 1 and n > 1)]
    g.check()
    # reversed, with the consumer range, while entries change owner back
    a = g.consumer(b"a")
    back = []
    for e in g.consumer_pending_range(z, MIN_ID, MAX_ID, rev=True):
        back.append(e.id.ms)
        g.claim(e.id, a, 1, 1)
        prev = I(e.id.ms - 1, 0)
        if g.pending(prev) is not None:
            g.claim(prev, a, 1, 1)  # moved away before the scan gets there
    assert back == sorted(back, reverse=True) and len(z.pel) == 0
    g.check()


def test_idle_first_order_and_threshold():
    g = ConsumerGroup(b"g", MIN_ID)
    c, _ = g.create_consumer(b"c", 0)
    for ms, t in [(1, 500), (2, 300), (3, 300), (4, 900), (5, 100), (6, 700)]:
        g.deliver(I(ms, 0), c, t)
    # longest idle first; equal delivery times in ID order
    assert ids(g.idle_first(1000, 0)) == [5, 2, 3, 1, 6, 4]
    # idle >= min_idle: at now 1000 and min 500, delivery_time <= 500 qualifies
    assert ids(g.idle_first(1000, 500)) == [5, 2, 3, 1]
    assert ids(g.idle_first(1000, 901)) == []
    assert ids(g.idle_first(1000, 900)) == [5]
    assert ids(islice(g.idle_first(1000, 0), 2)) == [5, 2]
    g.release(I(4, 0))
    assert ids(g.idle_first(1000, 0)) == [4, 5, 2, 3, 1, 6]  # unowned at time 0 first


@pytest.mark.timeout(60)  # a re-seek that does not move on loops forever
@pytest.mark.parametrize("batch", [(1, 1), (2, 4), (16, 1024)])
def test_idle_first_yields_each_entry_once_while_claiming(monkeypatch, batch):
    # XREADGROUP CLAIM 0: claiming re-times the entry to now, which still
    # qualifies; it must not come round again.
    monkeypatch.setattr(groups_module, "_FIRST_BATCH", batch[0])
    monkeypatch.setattr(groups_module, "_MAX_BATCH", batch[1])
    g = group_with(*[b"a"] * 40)
    b, _ = g.create_consumer(b"b", 0)
    got = []
    for e in g.idle_first(5000, 0):
        got.append(e.id.ms)
        g.claim(e.id, b, 5000, e.delivery_count + 1)
        if e.id.ms == 10:
            g.ack(I(11, 0))
            g.touch_delivery(g.pending(I(12, 0)), 5000)  # re-timed ahead of the scan
    assert got == [n for n in range(1, 41) if n not in (11, 12)] + [12]
    assert len(got) == len(set(got))
    g.check()


# -- check() fails on corruption ------------------------------------------------


def test_check_catches_a_stale_time_index():
    g = group_with(b"a", b"b")
    g.pending(I(1, 0)).delivery_time = 5  # bypassing the group
    with pytest.raises(AssertionError, match="time index"):
        g.check()


def test_check_catches_an_owner_mismatch():
    g = group_with(b"a", b"b")
    g.pending(I(1, 0)).consumer = g.consumer(b"b")
    with pytest.raises(AssertionError):
        g.check()


def test_check_catches_a_record_missing_from_its_consumer():
    g = group_with(b"a", b"b")
    del g.consumer(b"a").pel[I(1, 0)]
    with pytest.raises(AssertionError):
        g.check()


def test_check_catches_an_orphan_in_a_consumer_pel():
    g = group_with(b"a")
    a = g.consumer(b"a")
    a.pel[I(7, 0)] = PendingEntry(I(7, 0), 0, 1, a)
    with pytest.raises(AssertionError):
        g.check()


def test_check_catches_two_owners():
    g = group_with(b"a", b"b")
    g.consumer(b"b").pel[I(1, 0)] = g.pending(I(1, 0))
    with pytest.raises(AssertionError):
        g.check()


def test_check_catches_bad_entries_read():
    g = group_with(b"a")
    g.entries_read = -2
    with pytest.raises(AssertionError, match="entries_read"):
        g.check()


# -- tombstones and the entries-read estimate ------------------------------------


def test_range_has_tombstones():
    s = stream_of(1, 2, 3, 4, 5)
    assert not range_has_tombstones(s)  # nothing ever deleted
    s.delete(I(3, 0))
    assert range_has_tombstones(s)
    assert range_has_tombstones(s, I(3, 0), None)
    assert range_has_tombstones(s, I(2, 0), I(3, 0))
    assert range_has_tombstones(s, None, I(3, 0))
    assert not range_has_tombstones(s, I(3, 1), None)
    assert not range_has_tombstones(s, None, I(2, 99))
    s.delete(I(1, 0))  # max deleted 3-0, still >= first (2-0)
    assert range_has_tombstones(s, I(3, 0), I(3, 0))
    s.delete(I(2, 0))  # first is 4-0 now: the largest tombstone is behind it
    assert range_has_tombstones(s)  # Redis 8 (PR #13338); 7.0 ignored it here
    assert not range_has_tombstones(s, I(4, 0), None)
    for id in (I(4, 0), I(5, 0)):
        s.delete(id)
    assert s.length == 0 and not range_has_tombstones(s)  # empty stream


def test_trim_leaves_no_tombstone_mark():
    # redis-server 7.0.15: XTRIM leaves max-deleted-entry-id at 0-0.
    s = stream_of(1, 2, 3, 4, 5)
    s.trim_maxlen(3, approx=False, limit=0)
    assert s.max_deleted_entry_id == MIN_ID and s.first_id == I(3, 0)
    assert not range_has_tombstones(s)


def test_estimate_entries_read():
    empty = Stream()
    assert estimate_entries_read(empty, I(5, 0)) == 0  # never had entries
    s = stream_of(2, 3, 4, 5)
    assert estimate_entries_read(s, I(5, 0)) == 4  # the last ID
    assert estimate_entries_read(s, I(6, 0)) == -1  # beyond it
    assert estimate_entries_read(s, I(1, 0)) == 0  # before the first: added - length
    assert estimate_entries_read(s, I(2, 0)) == 1  # the first: added - length + 1
    assert estimate_entries_read(s, I(3, 0)) == -1  # in the middle: unknown
    s.trim_maxlen(2, approx=False, limit=0)  # 4-0, 5-0 left, 4 ever added
    assert estimate_entries_read(s, I(1, 0)) == 2
    assert estimate_entries_read(s, I(3, 9)) == 2
    assert estimate_entries_read(s, I(4, 0)) == 3
    s.delete(I(4, 0))  # tombstone 4-0 >= first? first is 5-0 now: no
    assert estimate_entries_read(s, I(4, 0)) == 3
    assert estimate_entries_read(s, I(5, 0)) == 4
    t = stream_of(1, 2, 3)
    t.delete(I(2, 0))  # a tombstone after the first entry
    assert estimate_entries_read(t, I(1, 0)) == -1
    assert estimate_entries_read(t, I(0, 5)) == -1
    assert estimate_entries_read(t, I(3, 0)) == 3  # the last ID still answers
    t.delete(I(1, 0))
    t.delete(I(3, 0))  # empty: any ID up to last_id has read everything
    assert estimate_entries_read(t, I(0, 1)) == 3
    assert estimate_entries_read(t, I(3, 0)) == 3
    assert estimate_entries_read(t, I(3, 1)) == -1


# -- lag and entries-read: sessions replayed from redis-server 7.0.15, with the --
# -- Redis 8 answers where redis/redis PRs #13338, #13473, #13958 and #14259   --
# -- changed them (each such step says so)                                     --


def state(g: ConsumerGroup, s: Stream) -> tuple[int, int | None]:
    return g.entries_read, g.lag(s)


def test_lag_reads_then_xdel_ahead():
    s = stream_of(1, 2, 3, 4, 5)
    g = ConsumerGroup(b"g", MIN_ID)
    c, _ = g.create_consumer(b"c", 0)
    assert state(g, s) == (-1, 5)  # 0-0 before the first entry: estimate 0
    read_new(g, s, c, 1, count=2)
    assert state(g, s) == (2, 3)  # estimate at 1-0, then counted
    s.delete(I(4, 0))
    assert state(g, s) == (2, None)  # tombstone after last_id
    assert read_new(g, s, c, 2, count=1) == [I(3, 0)]
    assert state(g, s) == (-1, None)  # re-estimated at 3-0: unknown
    assert read_new(g, s, c, 3, count=1) == [I(5, 0)]
    assert state(g, s) == (5, 0)  # estimated at the last ID


def test_lag_create_and_setid():
    s = stream_of(1, 2, 3, 4, 5)
    g = ConsumerGroup(b"g", s.last_id)  # XGROUP CREATE s g $
    assert state(g, s) == (-1, 0)
    g2 = ConsumerGroup(b"g2", I(3, 0))
    assert state(g2, s) == (-1, None)
    g.set_id(I(2, 0), None, s)
    assert state(g, s) == (-1, None)
    g.set_id(I(2, 0), 2, s)
    assert state(g, s) == (2, 3)
    g.set_id(I(2, 0), 100, s)
    # Clamped to entries-added (Redis 8.2.2, #14259); 7.0: (100, -95).
    assert state(g, s) == (5, 0)
    g3 = ConsumerGroup(b"g3", MIN_ID, clamp_entries_read(7, s))  # CREATE ... ENTRIESREAD 7
    # Clamped; and a group behind the first entry lags by the length (#13473).
    assert state(g3, s) == (5, 5)
    s.trim_maxlen(3, approx=False, limit=0)
    # g and g3 are behind the first entry now: all 3 left are new to them (#13473).
    assert [state(x, s) for x in (g, g2, g3)] == [(5, 3), (-1, 2), (5, 3)]
    s.trim_minid(I(5, 0), approx=False, limit=0)
    assert [state(x, s) for x in (g, g2, g3)] == [(5, 1), (-1, 1), (5, 1)]


def test_lag_of_a_stream_that_never_had_entries():
    s = Stream()  # XGROUP CREATE e g 5-0 MKSTREAM [ENTRIESREAD 3]
    assert state(ConsumerGroup(b"g", I(5, 0)), s) == (-1, 0)
    # ENTRIESREAD 3 is clamped to the 0 entries added (#14259).
    assert state(ConsumerGroup(b"g2", I(5, 0), clamp_entries_read(3, s)), s) == (0, 0)


def test_lag_estimates_after_xdel():
    s = stream_of(1, 2, 3)
    groups = {
        name: ConsumerGroup(name, id)
        for name, id in [
            (b"eq", I(3, 0)), (b"first", I(1, 0)), (b"hi", I(9, 0)),
            (b"lo", I(0, 5)), (b"mid", I(2, 0)),
        ]
    }

    def lags():
        return {name.decode(): g.lag(s) for name, g in groups.items()}

    assert lags() == {"eq": 0, "first": 2, "hi": None, "lo": 3, "mid": None}
    s.delete(I(2, 0))
    assert lags() == {"eq": 0, "first": None, "hi": None, "lo": None, "mid": None}
    s.delete(I(1, 0))  # the largest tombstone (2-0) is now behind the first entry
    assert lags() == {"eq": 0, "first": 1, "hi": None, "lo": 1, "mid": 1}
    s.delete(I(3, 0))  # empty
    assert (s.length, s.first_id, s.max_deleted_entry_id) == (0, MIN_ID, I(3, 0))
    # An empty stream lags 0 for every group (Redis 8; 7.0: nil for "hi").
    assert lags() == {"eq": 0, "first": 0, "hi": 0, "lo": 0, "mid": 0}


def test_advance_sees_a_tombstone_behind_the_new_id():
    # Redis 8 tests for tombstones from the group's old position on, so a
    # deleted entry between it and the delivered ID makes the counter an
    # estimate (PR #13338).  7.0.15 counted on: (3, 2), then (4, 1), a lag
    # of 1 with nothing left to read.
    s = stream_of(1, 2, 3, 4, 5)
    g = ConsumerGroup(b"g", MIN_ID)
    c, _ = g.create_consumer(b"c", 0)
    read_new(g, s, c, 1, count=2)
    s.delete(I(3, 0))
    assert state(g, s) == (2, None)
    assert read_new(g, s, c, 2, count=1) == [I(4, 0)]
    assert state(g, s) == (-1, None)
    assert read_new(g, s, c, 3, count=1) == [I(5, 0)]
    assert state(g, s) == (5, 0)


def test_lag_counts_tombstones_behind_the_first_entry():
    # redis/redis#13337 case 1: 7.0.15 reports lag 2 at the end, Redis 8
    # (PR #13338, #13473) the 1 entry left.
    s = Stream()
    g = ConsumerGroup(b"g", s.last_id)  # XGROUP CREATE p g $ MKSTREAM
    c, _ = g.create_consumer(b"alice", 0)
    s.append(I(0, 1), [b"n", b"a"], 100, 0)
    s.append(I(0, 2), [b"n", b"b"], 100, 0)
    read_new(g, s, c, 1)
    s.append(I(0, 3), [b"n", b"c"], 100, 0)
    s.append(I(0, 4), [b"n", b"d"], 100, 0)
    assert state(g, s) == (2, 2)
    s.delete(I(0, 1))
    s.delete(I(0, 2))
    assert state(g, s) == (2, 2)
    s.delete(I(0, 3))
    assert state(g, s) == (2, 1)


def test_lag_after_xtrim_past_the_group():
    # redis/redis#13957 (the expected answers there; Redis 8 with PRs #13473
    # and #13958).  7.0.15: (1, 4) after the trim, (2, 3) after the read.
    s = stream_of(1, 2, 3, 4, 5)
    g = ConsumerGroup(b"g1", MIN_ID)
    c, _ = g.create_consumer(b"c", 0)
    read_new(g, s, c, 1, count=1)
    assert state(g, s) == (1, 4)
    s.trim_maxlen(1, approx=False, limit=0)
    assert state(g, s) == (1, 1)
    assert read_new(g, s, c, 2, count=1) == [I(5, 0)]
    assert state(g, s) == (5, 0)


def test_noack_reads_advance_without_pending_entries():
    s = stream_of(1, 2, 3)
    g = ConsumerGroup(b"g", MIN_ID)
    assert read_new(g, s, None, 1) == [I(1, 0), I(2, 0), I(3, 0)]
    assert (g.last_id, len(g.pel)) == (I(3, 0), 0)
    assert state(g, s) == (3, 0)


def test_advance_ignores_ids_at_or_below_last_id():
    s = stream_of(1, 2, 3)
    g = ConsumerGroup(b"g", I(2, 0), 2)
    assert g.advance(I(2, 0), s) is False
    assert g.advance(I(1, 0), s) is False
    assert (g.last_id, g.entries_read) == (I(2, 0), 2)
    assert g.advance(I(3, 0), s) is True
    assert (g.last_id, g.entries_read) == (I(3, 0), 3)


def test_advance_on_a_stream_without_entries_keeps_entries_read():
    s = Stream()  # entries_added 0: Redis leaves an unknown count alone
    g = ConsumerGroup(b"g", MIN_ID)
    g.advance(I(1, 0), s)
    assert (g.last_id, g.entries_read) == (I(1, 0), -1)


def test_set_id_none_means_unknown():
    s = stream_of(1)
    g = ConsumerGroup(b"g", MIN_ID, 1)
    g.set_id(I(1, 0), None, s)
    assert (g.last_id, g.entries_read) == (I(1, 0), -1)
    g.set_id(MIN_ID, 0, s)
    assert (g.last_id, g.entries_read) == (MIN_ID, 0)
    assert g.lag(s) == 1
