"""The IDMP state type (types/idmp.py) on its own: time is a number passed in.

Expected behaviour follows redis.io's pages, cited per test:
  XCFGSET:     https://redis.io/docs/latest/commands/xcfgset/
  Idempotency: https://redis.io/docs/latest/develop/data-types/streams/idempotency/
  XADD:        https://redis.io/docs/latest/commands/xadd/
and, where the pages are silent, the choices written down in types/idmp.py.
"""

from __future__ import annotations

import random

import pytest

from tidelog.ids import StreamID
from tidelog.types.idmp import IdmpState, auto_iid

T0 = 1_700_000_000_000
SEC = 1000


def sid(ms: int, seq: int = 0) -> StreamID:
    return StreamID(ms, seq)


def test_defaults_and_bounds():
    # xcfgset: "Valid range: 1-86,400 seconds. Default: 100 seconds." and
    # "Valid range: 1-10,000 entries. Default: 100 entries."
    state = IdmpState()
    assert (state.duration, state.maxsize) == (100, 100)
    IdmpState(1, 1).check()
    IdmpState(86400, 10000).check()
    for duration, maxsize in ((0, 100), (86401, 100), (100, 0), (100, 10001)):
        with pytest.raises(ValueError):
            IdmpState(duration, maxsize)
    with pytest.raises(ValueError):
        state.configure(duration=0)
    with pytest.raises(ValueError):
        state.configure(maxsize=10001)


def test_record_then_lookup_returns_the_original_id():
    # xadd: a repeat of (pid, iid) answers the ID of the original entry.
    state = IdmpState()
    assert state.lookup(b"p", b"i", T0) is None
    state.record(b"p", b"i", sid(T0), T0)
    assert state.lookup(b"p", b"i", T0 + 5) == sid(T0)
    assert state.seen(b"p", b"i", T0 + 5) == sid(T0)
    assert state.seen(b"p", b"other", T0 + 5) is None
    assert (state.iids_added, state.iids_duplicates) == (1, 1)
    state.check()


def test_producers_are_isolated():
    # idempotency page, "Producer isolation": the same iid under two pids is two pairs.
    state = IdmpState()
    state.record(b"producer-1", b"iid-1", sid(T0), T0)
    assert state.lookup(b"producer-2", b"iid-1", T0) is None
    state.record(b"producer-2", b"iid-1", sid(T0, 1), T0)
    assert state.lookup(b"producer-1", b"iid-1", T0) == sid(T0)
    assert state.lookup(b"producer-2", b"iid-1", T0) == sid(T0, 1)
    assert (state.pids_tracked, state.iids_tracked) == (2, 2)
    state.check()


def test_pair_expires_after_duration():
    # xcfgset: "Redis will not forget an idempotency ID before the duration
    # elapses"; expired: t <= now - duration (so alive for duration seconds).
    state = IdmpState(duration=1)
    state.record(b"p", b"i", sid(T0), T0)
    assert state.lookup(b"p", b"i", T0 + SEC - 1) == sid(T0)
    assert state.lookup(b"p", b"i", T0 + SEC) is None
    assert (state.pids_tracked, state.iids_tracked) == (0, 0)  # the lookup dropped it
    state.check()


def test_oldest_iid_is_evicted_past_maxsize():
    # xcfgset: "When the capacity is reached, the oldest idempotent IDs for
    # that producer are evicted regardless of remaining duration."
    state = IdmpState(duration=60, maxsize=3)
    for n in range(1, 5):
        state.record(b"p1", b"req-%d" % n, sid(T0 + n), T0 + n)
    assert state.lookup(b"p1", b"req-1", T0 + 10) is None
    assert [state.lookup(b"p1", b"req-%d" % n, T0 + 10) for n in (2, 3, 4)] == [
        sid(T0 + 2), sid(T0 + 3), sid(T0 + 4)]
    assert state.iids_tracked == 3 and state.iids_added == 4
    # Each producer has its own cap.
    state.record(b"p2", b"req-1", sid(T0 + 20), T0 + 20)
    assert state.iids_tracked == 4 and state.lookup(b"p1", b"req-2", T0 + 20) is not None
    state.check()


def test_wraparound_keeps_the_last_maxsize():
    # The Redis 8.6 test "XCFGSET IDMP-MAXSIZE wraparound keeps last 8 entries", on the type.
    state = IdmpState(duration=60, maxsize=8)
    for n in range(1, 101):
        state.record(b"p1", b"req-%d" % n, sid(T0 + n), T0 + n)
    now = T0 + 200
    assert all(state.lookup(b"p1", b"req-%d" % n, now) == sid(T0 + n) for n in range(93, 101))
    assert all(state.lookup(b"p1", b"req-%d" % n, now) is None for n in range(1, 93))
    state.check()


def test_configure_clears_maps_only_when_a_value_changes():
    # xcfgset / idempotency page: "Executing XCFGSET with different IDMP-DURATION
    # or IDMP-MAXSIZE values than the current values ... clears its IDMP map."
    state = IdmpState()
    state.record(b"p", b"a", sid(T0), T0)
    state.record(b"q", b"b", sid(T0, 1), T0)
    state.seen(b"p", b"a", T0)
    assert state.configure(duration=100, maxsize=100) is False
    assert state.iids_tracked == 2
    assert state.configure(duration=60) is True
    assert (state.duration, state.maxsize) == (60, 100)
    assert (state.pids_tracked, state.iids_tracked) == (0, 0)
    assert (state.iids_added, state.iids_duplicates) == (2, 1)  # lifetime counters stay
    assert state.configure(maxsize=5) is True and state.maxsize == 5
    state.check()


def test_rerecording_a_pair_replaces_it_as_newest():
    state = IdmpState(duration=10, maxsize=2)
    state.record(b"p", b"a", sid(T0), T0)
    state.record(b"p", b"b", sid(T0 + 1), T0 + 1)
    state.record(b"p", b"a", sid(T0 + 2), T0 + 2)  # a replayed XADD for a
    assert state.iids_tracked == 2 and state.iids_added == 3
    state.record(b"p", b"c", sid(T0 + 3), T0 + 3)  # evicts b, now the oldest
    assert state.lookup(b"p", b"b", T0 + 3) is None
    assert state.lookup(b"p", b"a", T0 + 3) == sid(T0 + 2)
    state.check()


def test_pair_time_is_the_entry_time_capped_by_now():
    # Redis ages a pair by its entry's ID; an ID ahead of the clock never
    # expired there (redis/redis#15836).  Ours: min(id.ms, now).
    state = IdmpState(duration=1)
    future = T0 + 10 * 365 * 24 * 3600 * SEC
    state.record(b"p", b"f", sid(future, 7), T0)
    assert state.lookup(b"p", b"f", T0 + SEC - 1) == sid(future, 7)
    assert state.lookup(b"p", b"f", T0 + SEC) is None  # expired on the clock, not the ID
    # A pair replayed long after its entry was added ages from the entry.
    state.record(b"p", b"old", sid(T0 - 5 * SEC), T0)
    assert state.lookup(b"p", b"old", T0) is None


def test_times_stay_ordered_when_the_clock_steps_back():
    state = IdmpState(duration=5)
    state.record(b"p", b"a", sid(T0), T0)
    state.record(b"p", b"b", sid(T0, 1), T0 - 3 * SEC)  # clock stepped back
    state.check()  # times within the producer never decrease
    assert [t for *_, t in state.pairs()] == [T0, T0]


def test_expire_sweeps_all_producers_and_drops_empty_ones():
    state = IdmpState(duration=1)
    state.record(b"a", b"1", sid(T0), T0)
    state.record(b"b", b"1", sid(T0 + 500), T0 + 500)
    state.record(b"b", b"2", sid(T0 + 2000), T0 + 600)  # t = min(id, now) = T0 + 600
    work = state.expire(T0 + 1500)
    assert work == 2 + 2  # two producers visited, two pairs dropped
    assert [(pid, iid) for pid, iid, *_ in state.pairs()] == [(b"b", b"2")]
    assert state.pids_tracked == 1
    state.check()


def test_expire_is_bounded_and_round_robin():
    state = IdmpState(duration=1, maxsize=100)
    for p in range(10):
        for n in range(50):
            state.record(b"p%d" % p, b"%d" % n, sid(T0 + n), T0 + n)
    now = T0 + 10 * SEC
    assert state.expire(now, budget=30) == 30  # p0 visited, 29 of its pairs dropped
    assert state.iids_tracked == 500 - 29
    assert next(iter(state.producers)) == b"p1"  # p0 went to the back
    calls = 1
    while state.pids_tracked:
        work = state.expire(now, budget=30)
        assert 0 < work <= 30
        calls += 1
        state.check()
    assert state.iids_tracked == 0
    assert calls <= (500 + 10 * 2) // 29 + 1  # no call wasted: every one used its budget


def test_auto_iid_is_order_insensitive_and_content_sensitive():
    # Redis 8.6 deduplicates IDMPAUTO regardless of field order (its test
    # "XADD IDMPAUTO deduplicates regardless of field order"); idempotency
    # page: "The same content produces the same iid."
    a = auto_iid([b"field1", b"a", b"field2", b"b", b"field3", b"c"])
    assert a == auto_iid([b"field2", b"b", b"field3", b"c", b"field1", b"a"])
    assert len(a) == 16
    assert a != auto_iid([b"field3", b"c", b"field1", b"x", b"field2", b"b"])
    assert auto_iid([b"field1", b"value"]) != auto_iid([b"field2", b"value"])
    assert auto_iid([b"f", b""]) != auto_iid([b"f", b"value"])
    # No ambiguity between pair boundaries, and repeated pairs count.
    assert auto_iid([b"ab", b"c"]) != auto_iid([b"a", b"bc"])
    assert auto_iid([b"f", b"v"]) != auto_iid([b"f", b"v", b"f", b"v"])


def test_auto_iid_is_a_fixed_function():
    # Replicas recompute IDMPAUTO's iid: the digest must never change.
    assert auto_iid([b"amount", b"100", b"currency", b"USD"]).hex() == \
        "8814f26081eb7f386364fc65867842bc"


def test_random_operations_keep_the_invariants():
    rng = random.Random(5)
    state = IdmpState(duration=3, maxsize=4)
    now = T0
    # The model: (pid, iid) -> (ID, time), and each pid's iids oldest first.
    model: dict[tuple[bytes, bytes], tuple[StreamID, int]] = {}
    order: dict[bytes, list[bytes]] = {}
    for _ in range(3000):
        now += rng.choice([0, 1, 10, 400, 1500])
        pid = b"p%d" % rng.randrange(3)
        iid = b"i%d" % rng.randrange(8)
        op = rng.random()
        cutoff = now - 3 * SEC
        if op < 0.5:
            ms = now + rng.choice([-5000, 0, 0, 5000])  # entry time: past, now, future
            state.record(pid, iid, sid(ms), now)
            lst = order.setdefault(pid, [])
            lst[:] = [i for i in lst if model[(pid, i)][1] > cutoff]
            if iid in lst:
                lst.remove(iid)
            t = min(ms, now)
            if lst:
                t = max(t, model[(pid, lst[-1])][1])
            lst.append(iid)
            model[(pid, iid)] = (sid(ms), t)
            while len(lst) > 4:
                lst.pop(0)
        elif op < 0.9:
            lst = order.get(pid, [])
            alive = [i for i in lst if model[(pid, i)][1] > cutoff]
            expect = model[(pid, iid)][0] if iid in alive else None
            assert state.lookup(pid, iid, now) == expect
        else:
            state.expire(now, budget=rng.choice([None, 1, 5]))
        state.check()

