"""WATCH and keys that expire, on an engine with a fake clock (no active
expiry runs unless a test calls it), as Redis 7.0's multi.c treats them:
a key watched while alive that expires makes EXEC fail; a key already
expired when watched is no change when it is removed (lazily, by FLUSHDB or
SWAPDB); FLUSHDB/FLUSHALL/SWAPDB touch only the watched keys they remove or
replace.  The same cases as Redis's tests/unit/multi.tcl."""

from __future__ import annotations

import pytest

from tests.support.engine_harness import Harness
from tidelog.resp.replies import NULL_ARRAY, SimpleString

PONG = SimpleString(b"PONG")


def exec_after_ping(h: Harness, client) -> object:
    h.ok("MULTI", client=client)
    h.ok("PING", client=client)
    return h.ok("EXEC", client=client)


@pytest.fixture
def h():
    return Harness()


def test_key_expiring_after_watch_fails_exec(h):
    c = h.new_client()
    h.ok("SET", "key", "1", "PX", "100")
    h.ok("WATCH", "key", client=c)
    h.clock.advance(101)
    h.ok("MULTI", client=c)
    h.ok("INCR", "key", client=c)
    assert h.ok("EXEC", client=c) is NULL_ARRAY
    assert h("GET", "key") is None


def test_key_expiring_after_watch_and_removed_lazily_fails_exec(h):
    c = h.new_client()
    h.ok("SET", "key", "1", "PX", "100")
    h.ok("WATCH", "key", client=c)
    h.clock.advance(101)
    assert h("EXISTS", "key") == 0
    assert exec_after_ping(h, c) is NULL_ARRAY


def test_stale_key_watched_does_not_fail_exec(h):
    c = h.new_client()
    h.ok("SET", "x", "foo", "PX", "1")
    h.clock.advance(2)
    h.ok("WATCH", "x", client=c)
    assert exec_after_ping(h, c) == [PONG]


@pytest.mark.parametrize("removal", [["EXISTS", "x"], ["FLUSHDB"], ["FLUSHALL"], ["DEL", "x"]])
def test_removing_a_stale_watched_key_is_no_change(h, removal):
    c = h.new_client()
    h.ok("SET", "x", "foo", "PX", "1")
    h.clock.advance(2)
    h.ok("WATCH", "x", client=c)
    h.ok(*removal)
    assert exec_after_ping(h, c) == [PONG]


def test_active_expiry_of_a_stale_watched_key_is_no_change(h):
    c = h.new_client()
    h.ok("SET", "x", "foo", "PX", "1")
    h.clock.advance(2)
    h.ok("WATCH", "x", client=c)
    assert h.engine.dbs[0].expire_cycle() == 1
    assert exec_after_ping(h, c) == [PONG]


def test_active_expiry_of_a_live_watched_key_fails_exec(h):
    c = h.new_client()
    h.ok("SET", "x", "foo", "PX", "1000")
    h.ok("WATCH", "x", client=c)
    h.clock.advance(1001)
    assert h.engine.dbs[0].expire_cycle() == 1
    assert exec_after_ping(h, c) is NULL_ARRAY


def test_set_over_a_stale_watched_key_fails_exec(h):
    c = h.new_client()
    h.ok("SET", "x", "foo", "PX", "1")
    h.clock.advance(2)
    h.ok("WATCH", "x", client=c)
    h.ok("SET", "x", "bar")
    assert exec_after_ping(h, c) is NULL_ARRAY


@pytest.mark.parametrize("flush", ["FLUSHDB", "FLUSHALL"])
def test_flush_does_not_touch_absent_watched_keys(h, flush):
    c = h.new_client()
    h.ok("SET", "other", "1")
    h.ok("WATCH", "x", client=c)
    h.ok(flush)
    assert exec_after_ping(h, c) == [PONG]


@pytest.mark.parametrize("flush", ["FLUSHDB", "FLUSHALL"])
def test_flush_touches_present_watched_keys(h, flush):
    c = h.new_client()
    h.ok("SET", "x", "30")
    h.ok("WATCH", "x", client=c)
    h.ok(flush)
    assert exec_after_ping(h, c) is NULL_ARRAY


def test_swapdb_stale_key_replaced_with_no_key(h):
    c = h.new_client(db=1)
    h.ok("SET", "x", "foo", "PX", "1", client=c)
    h.clock.advance(2)
    h.ok("WATCH", "x", client=c)
    h.ok("SWAPDB", "0", "1")
    assert exec_after_ping(h, c) == [PONG]


def test_swapdb_no_key_replaced_with_stale_key(h):
    c = h.new_client(db=1)
    h.ok("SET", "x", "foo", "PX", "1")
    h.clock.advance(2)
    h.ok("WATCH", "x", client=c)
    h.ok("SWAPDB", "0", "1")
    assert exec_after_ping(h, c) == [PONG]


def test_swapdb_stale_key_replaced_with_stale_key(h):
    c = h.new_client(db=1)
    h.ok("SET", "x", "foo", "PX", "1", client=c)
    h.ok("SET", "x", "bar", "PX", "1")
    h.clock.advance(2)
    h.ok("WATCH", "x", client=c)
    h.ok("SWAPDB", "0", "1")
    assert exec_after_ping(h, c) == [PONG]


def test_swapdb_live_key_replaced_fails_exec(h):
    c = h.new_client(db=1)
    h.ok("SET", "x", "foo", client=c)
    h.ok("WATCH", "x", client=c)
    h.ok("SWAPDB", "0", "1")
    assert exec_after_ping(h, c) is NULL_ARRAY


def test_unwatch_forgets_stale_marks(h):
    c = h.new_client()
    h.ok("SET", "x", "foo", "PX", "1")
    h.clock.advance(2)
    h.ok("WATCH", "x", client=c)
    assert c.watched_expired == {(0, b"x")}
    h.ok("UNWATCH", client=c)
    assert not c.watched_expired
