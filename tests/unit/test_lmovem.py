"""LMOVEM and BLMOVEM through the engine, no sockets: the OBO and BULK
orders for every pair of ends, COUNT and EXACTLY, errors, what goes to the
AOF and replicas, keyspace events, and the blocking form (EXACTLY stays
blocked until the source holds enough).

Behaviour as https://redis.io/docs/latest/commands/lmovem/ and
https://redis.io/docs/latest/commands/blmovem/ describe it (Redis 8.10)."""

from __future__ import annotations

import pytest

from tests.support.engine_harness import Harness
from tests.unit.test_notify import World
from tidelog.engine import BLOCKED
from tidelog.errors import MPOP_COUNT_POSITIVE, SYNTAX, TIMEOUT_NOT_FLOAT, WRONGTYPE
from tidelog.resp.replies import NULL_ARRAY


def listed(h, key):
    return h.ok("LRANGE", key, 0, -1)


def fresh(*values):
    h = Harness()
    h.ok("RPUSH", "src", *values)
    h.take_effects()
    return h


def test_without_the_block_it_is_lmove_with_an_array_reply():
    h = fresh("a", "b", "c")
    assert h.ok("LMOVEM", "src", "dst", "LEFT", "RIGHT") == [b"a"]
    assert listed(h, "dst") == [b"a"] and listed(h, "src") == [b"b", b"c"]
    assert h.take_effects() == [[b"LMOVEM", b"src", b"dst", b"LEFT", b"RIGHT"]]


@pytest.mark.parametrize("wherefrom, whereto, order, reply", [
    ("left", "left", "obo", [b"3", b"2", b"1"]),
    ("left", "left", "bulk", [b"1", b"2", b"3"]),
    ("left", "right", "obo", [b"1", b"2", b"3"]),
    ("left", "right", "bulk", [b"1", b"2", b"3"]),
    ("right", "right", "obo", [b"5", b"4", b"3"]),
    ("right", "right", "bulk", [b"3", b"4", b"5"]),
    ("right", "left", "obo", [b"3", b"4", b"5"]),
    ("right", "left", "bulk", [b"3", b"4", b"5"]),
])
def test_obo_and_bulk_orders(wherefrom, whereto, order, reply):
    """OBO pushes each element as popped; BULK keeps the source order.  The
    reply is the moved block as it sits in the destination."""
    h = fresh("1", "2", "3", "4", "5")
    h.ok("RPUSH", "dst", "x")
    assert h.ok("LMOVEM", "src", "dst", wherefrom, whereto, "count", 3, order) == reply
    if whereto == "left":
        assert listed(h, "dst") == [*reply, b"x"]
    else:
        assert listed(h, "dst") == [b"x", *reply]


def test_count_moves_what_there_is_and_deletes_the_source():
    h = fresh("a", "b")
    assert h.ok("LMOVEM", "src", "dst", "LEFT", "RIGHT", "COUNT", 100, "BULK") == [b"a", b"b"]
    assert h.ok("EXISTS", "src") == 0
    assert h.take_effects() == [[b"LMOVEM", b"src", b"dst", b"LEFT", b"RIGHT", b"COUNT", b"100",
                                 b"BULK"]]


def test_exactly_moves_all_or_nothing():
    h = fresh("1", "2", "3", "4")
    assert h.ok("LMOVEM", "src", "dst", "LEFT", "RIGHT", "EXACTLY", 3, "BULK") == [b"1", b"2", b"3"]
    h.take_effects()
    assert h.ok("LMOVEM", "src", "other", "LEFT", "RIGHT", "EXACTLY", 2, "BULK") is NULL_ARRAY
    assert listed(h, "src") == [b"4"] and h.ok("EXISTS", "other") == 0
    assert h.take_effects() == []


def test_missing_source_and_rotation():
    h = Harness()
    assert h.ok("LMOVEM", "src", "dst", "LEFT", "RIGHT") is NULL_ARRAY
    assert h.ok("LMOVEM", "src", "dst", "LEFT", "RIGHT", "COUNT", 5, "BULK") is NULL_ARRAY
    assert h.ok("EXISTS", "dst") == 0 and h.take_effects() == []
    h.ok("RPUSH", "k", "1", "2", "3", "4", "5")
    assert h.ok("LMOVEM", "k", "k", "LEFT", "RIGHT", "COUNT", 2, "BULK") == [b"1", b"2"]
    assert listed(h, "k") == [b"3", b"4", b"5", b"1", b"2"]
    assert h.ok("LMOVEM", "k", "k", "LEFT", "RIGHT", "COUNT", 9, "OBO") == [b"3", b"4", b"5", b"1",
                                                                            b"2"]
    assert listed(h, "k") == [b"3", b"4", b"5", b"1", b"2"]


@pytest.mark.parametrize("tail", [
    ("count", "0", "bulk"), ("exactly", "0", "bulk"), ("count", "-1", "bulk"),
    ("count", "a", "bulk"), ("exactly", "1.5", "obo"),
])
def test_count_must_be_positive(tail):
    h = fresh("a")
    assert h.err("LMOVEM", "src", "dst", "left", "right", *tail) == MPOP_COUNT_POSITIVE


@pytest.mark.parametrize("args", [
    ("left", "right", "count", "2"),
    ("left", "right", "count", "2", "obo", "extra"),
    ("left", "right", "bad", "2", "obo"),
    ("left", "right", "count", "2", "badorder"),
    ("badwhere", "right", "count", "2", "obo"),
    ("left", "badwhere", "count", "2", "obo"),
    ("left", "right", "obo"),
])
def test_syntax_errors(args):
    h = fresh("a", "b", "c")
    assert h.err("LMOVEM", "src", "dst", *args) == SYNTAX
    assert listed(h, "src") == [b"a", b"b", b"c"]


def test_arity():
    h = Harness()
    assert h.err("LMOVEM", "src", "dst", "left") == (
        b"ERR wrong number of arguments for 'lmovem' command")
    assert h.err("BLMOVEM", "src", "dst", "left", "right") == (
        b"ERR wrong number of arguments for 'blmovem' command")


def test_wrong_types_move_nothing():
    h = Harness()
    h.ok("SET", "s", "foo")
    assert h.err("LMOVEM", "s", "d", "left", "right") == WRONGTYPE
    h.ok("RPUSH", "l", "a", "b")
    h.ok("SET", "d", "foo")
    assert h.err("LMOVEM", "l", "d", "left", "right", "count", 2, "bulk") == WRONGTYPE
    assert listed(h, "l") == [b"a", b"b"]


def test_events_one_pop_and_one_push_per_command():
    world = World()
    world.run("RPUSH", "src", "1", "2", "3")
    world.events()
    world.run("LMOVEM", "src", "dst", "LEFT", "RIGHT", "COUNT", "2", "BULK")
    assert world.events() == [(b"rpush", b"dst"), (b"lpop", b"src")]
    world.run("LMOVEM", "src", "dst", "RIGHT", "LEFT", "COUNT", "5", "OBO")
    assert world.events() == [(b"lpush", b"dst"), (b"rpop", b"src"), (b"del", b"src")]
    world.run("LMOVEM", "src", "dst", "RIGHT", "LEFT", "COUNT", "5", "OBO")
    assert world.events() == []


# -- BLMOVEM ----------------------------------------------------------------------------

def test_blmovem_at_once_propagates_as_lmovem_exactly():
    h = fresh("1", "2", "3", "4")
    assert h.ok("BLMOVEM", "src", "dst", "left", "right", 0, "count", 2, "bulk") == [b"1", b"2"]
    assert h.ok("BLMOVEM", "src", "dst", "right", "left", 0, "count", 5, "obo") == [b"3", b"4"]
    assert h.take_effects() == [
        [b"LMOVEM", b"src", b"dst", b"left", b"right", b"EXACTLY", b"2", b"BULK"],
        [b"LMOVEM", b"src", b"dst", b"right", b"left", b"EXACTLY", b"2", b"OBO"]]


def test_blmovem_count_is_served_by_the_first_push():
    h = Harness()
    a = h.new_client()
    assert h("BLMOVEM", "src", "dst", "left", "right", 0, "count", 5, "bulk", client=a) is BLOCKED
    h.ok("RPUSH", "src", "a", "b")
    assert a.inbox == [[b"a", b"b"]]
    assert listed(h, "dst") == [b"a", b"b"]
    assert h.take_effects()[-1] == [b"LMOVEM", b"src", b"dst", b"left", b"right", b"EXACTLY", b"2",
                                    b"BULK"]
    assert h.engine.blocked_clients == 0


def test_blmovem_exactly_waits_for_enough():
    h = Harness()
    a = h.new_client()
    assert h("BLMOVEM", "src", "dst", "left", "right", 0, "exactly", 3, "bulk", client=a) is BLOCKED
    h.ok("RPUSH", "src", "1", "2")
    assert a.inbox == [] and h.engine.blocked_clients == 1
    assert listed(h, "src") == [b"1", b"2"] and h.ok("EXISTS", "dst") == 0
    h.ok("RPUSH", "src", "3")
    assert a.inbox == [[b"1", b"2", b"3"]]
    assert h.ok("EXISTS", "src") == 0 and h.engine.blocked_clients == 0


@pytest.mark.parametrize("grow", [
    ("LINSERT", "src", "BEFORE", "1", "0"),
    ("LMOVE", "feed", "src", "LEFT", "LEFT"),
    ("SORT", "feed", "STORE", "src"),
])
def test_blmovem_exactly_is_woken_by_other_writes(grow):
    h = Harness()
    h.ok("RPUSH", "src", "1", "2")
    h.ok("RPUSH", "feed", "0", "5", "4")
    a = h.new_client()
    assert h("BLMOVEM", "src", "dst", "left", "right", 0, "exactly", 3, "bulk", client=a) is BLOCKED
    h.ok(*grow)
    assert len(a.inbox) == 1 and len(a.inbox[0]) == 3
    assert listed(h, "dst") == a.inbox[0] and h.engine.blocked_clients == 0


def test_blmovem_in_multi_does_not_block():
    h = Harness()
    h.ok("MULTI")
    h.ok("BLMOVEM", "src", "dst", "left", "right", 0, "exactly", 3, "bulk")
    assert h.ok("EXEC") == [NULL_ARRAY]
    assert h.engine.blocked_clients == 0


def test_blmovem_errors():
    h = Harness()
    assert h.err("BLMOVEM", "src", "dst", "left", "right", "x") == TIMEOUT_NOT_FLOAT
    assert h.err("BLMOVEM", "src", "dst", "left", "right", 0, "count", 0, "bulk") == MPOP_COUNT_POSITIVE
    assert h.err("BLMOVEM", "src", "dst", "left", "right", 0, "count", 1) == SYNTAX
