"""Stream command handlers, driven through Engine.execute with a FakeClock.

No sockets: replies are reply values, effects are caught with a listener on
``engine.effect_listeners``, blocked clients get their late reply through
``client.send``.  The wire bytes are checked against redis-server by the
differential tests; here we check what only the engine can show (effects,
auto IDs against a controlled clock, blocking order, WATCH, dirty).
"""

from __future__ import annotations

import pytest

from tests.support.engine_harness import NOW, U64, Harness, b, entry
from tidelog import errors
from tidelog.commands.table import COMMANDS, CommandSpec
from tidelog.engine import BLOCKED
from tidelog.ids import MAX_ID, StreamID
from tidelog.resp.replies import NULL_ARRAY, OK, Map


@pytest.fixture
def h():
    return Harness()


# -- XADD: IDs --------------------------------------------------------------------

def test_auto_id_uses_the_clock_then_the_sequence(h):
    assert h("XADD", "s", "*", "f", "v") == b"%d-0" % NOW
    assert h("XADD", "s", "*", "f", "v") == b"%d-1" % NOW
    h.clock.advance(5)
    assert h("XADD", "s", "*", "f", "v") == b"%d-0" % (NOW + 5)


def test_auto_id_never_goes_back_when_the_clock_does(h):
    h.ok("XADD", "s", f"{NOW + 1000}-7", "f", "v")
    assert h("XADD", "s", "*", "f", "v") == b"%d-8" % (NOW + 1000)


def test_auto_id_moves_to_next_ms_when_the_sequence_is_full(h):
    h.ok("XADD", "s", f"{NOW}-{U64}", "f", "v")
    assert h("XADD", "s", "*", "f", "v") == b"%d-0" % (NOW + 1)


def test_ms_star_completes_the_sequence(h):
    assert h("XADD", "s", "5-*", "f", "v") == b"5-0"
    assert h("XADD", "s", "5-*", "f", "v") == b"5-1"
    assert h("XADD", "s", "7-*", "f", "v") == b"7-0"
    assert h.err("XADD", "s", "6-*", "f", "v") == errors.XADD_ID_TOO_SMALL
    assert h("XADD", "t", "0-*", "f", "v") == b"0-1"  # a new stream's last ID is 0-0


def test_ms_star_with_a_full_sequence_is_too_small(h):
    h.ok("XADD", "s", f"5-{U64}", "f", "v")
    assert h.err("XADD", "s", "5-*", "f", "v") == errors.XADD_ID_TOO_SMALL


def test_explicit_ids_must_grow(h):
    assert h("XADD", "s", "5", "f", "v") == b"5-0"
    assert h.err("XADD", "s", "5-0", "f", "v") == errors.XADD_ID_TOO_SMALL
    assert h.err("XADD", "s", "4-9", "f", "v") == errors.XADD_ID_TOO_SMALL
    assert h.err("XADD", "new", "0-0", "f", "v") == errors.XADD_ID_ZERO
    assert h.err("XADD", "new", "0", "f", "v") == errors.XADD_ID_ZERO
    assert b"new" not in h.engine.dbs[0].data  # refused before the key is created


def test_exhausted_stream(h):
    h.ok("XADD", "s", f"{U64}-{U64}", "f", "v")
    for id in ("*", f"{U64}-*", "1-1"):
        assert h.err("XADD", "s", id, "f", "v") == errors.XADD_ID_EXHAUSTED


def test_odd_fields_are_an_arity_error(h):
    arity = errors.wrong_arity(b"xadd").message
    assert h.err("XADD", "s", "1-1", "f", "v", "g") == arity
    assert h.err("XADD", "s", "MAXLEN", "5", "1-1", "f") == arity
    assert h.err("XADD", "s", "MAXLEN", "5", "NOMKSTREAM") == arity  # no ID at all
    assert h.engine.dbs[0].data == {}


def test_nomkstream(h):
    assert h("XADD", "s", "NOMKSTREAM", "1-1", "f", "v") is None
    assert h.engine.dbs[0].data == {}
    assert h.take_effects() == []
    h.ok("XADD", "s", "1-1", "f", "v")
    assert h("XADD", "s", "NOMKSTREAM", "2-1", "f", "v") == b"2-1"


def test_wrong_type(h):
    h.engine.dbs[0].data[b"str"] = b"x"
    for argv in (("XADD", "str", "1-1", "f", "v"), ("XLEN", "str"), ("XRANGE", "str", "-", "+"),
                 ("XREVRANGE", "str", "+", "-"), ("XDEL", "str", "1-1"),
                 ("XTRIM", "str", "MAXLEN", "0"), ("XSETID", "str", "1-1"),
                 ("XREAD", "STREAMS", "str", "0"), ("XADD", "str", "NOMKSTREAM", "1-1", "f", "v")):
        assert h.err(*argv) == errors.WRONGTYPE, argv
    # Argument errors are found before the key's type.
    assert h.err("XADD", "str", "0-0", "f", "v") == errors.XADD_ID_ZERO
    assert h.err("XTRIM", "str", "MAXLEN", "x") == errors.NOT_INTEGER
    assert h.err("XRANGE", "str", "x", "+") == errors.INVALID_STREAM_ID
    assert h.engine.dbs[0].data[b"str"] == b"x"


def test_entries_keep_their_fields(h):
    h.ok("XADD", "s", "1-1", "a", "1", "b", "2")
    h.ok("XADD", "s", "1-2", "a", "3", "b", "4")
    h.ok("XADD", "s", "1-3", "c", "")
    assert h("XRANGE", "s", "-", "+") == [
        entry("1-1", "a", "1", "b", "2"), entry("1-2", "a", "3", "b", "4"), entry("1-3", "c", "")]


# -- XADD: options and trimming ----------------------------------------------------------

def test_option_errors(h):
    assert h.err("XADD", "s", "LIMIT", "5", "1-1", "f", "v") == errors.LIMIT_WITHOUT_STRATEGY
    assert h.err("XADD", "s", "MAXLEN", "5", "LIMIT", "5", "1-1", "f", "v") == \
        errors.LIMIT_WITHOUT_APPROX
    assert h.err("XADD", "s", "LIMIT", "0", "1-1", "f", "v") == errors.LIMIT_WITHOUT_APPROX
    assert h.err("XADD", "s", "MAXLEN", "1", "MINID", "1", "1-1", "f", "v") == \
        errors.MAXLEN_AND_MINID
    assert h.err("XADD", "s", "MAXLEN", "-1", "1-1", "f", "v") == errors.MAXLEN_NEGATIVE
    assert h.err("XADD", "s", "MAXLEN", "~", "1", "LIMIT", "-1", "1-1", "f", "v") == \
        errors.LIMIT_NEGATIVE
    assert h.err("XADD", "s", "MINID", "5-*", "1-1", "f", "v") == errors.INVALID_STREAM_ID
    assert h.err("XADD", "s", "MAXLEN", "~", "x", "1-1", "f", "v") == errors.NOT_INTEGER
    assert h.err("XADD", "s", "bogus", "f", "v") == errors.INVALID_STREAM_ID
    assert h.engine.dbs[0].data == {}


def test_options_in_any_order_before_the_id(h):
    h.ok("XADD", "s", "1-1", "f", "v")
    assert h("XADD", "s", "LIMIT", "5", "MAXLEN", "~", "1", "NOMKSTREAM", "2-1", "f", "v") == b"2-1"
    assert h("XADD", "s", "nomkstream", "maxlen", "=", "1", "3-1", "f", "v") == b"3-1"
    assert h("XLEN", "s") == 1


def test_exact_maxlen_and_minid():
    h = Harness(node_entries=2)
    for i in range(1, 6):
        h.ok("XADD", "s", f"{i}-1", "f", "v")
    assert h("XADD", "s", "MAXLEN", "3", "6-1", "f", "v") == b"6-1"
    assert [e[0] for e in h("XRANGE", "s", "-", "+")] == [b"4-1", b"5-1", b"6-1"]
    assert h("XADD", "s", "MINID", "=", "6", "7-1", "f", "v") == b"7-1"
    assert [e[0] for e in h("XRANGE", "s", "-", "+")] == [b"6-1", b"7-1"]
    h.stream()


def test_approximate_trim_removes_whole_nodes_and_propagates_exact():
    h = Harness(node_entries=2)
    for i in range(1, 8):
        h.ok("XADD", "s", f"{i}-1", "f", "v")
    h.take_effects()
    # nodes [1,2] [3,4] [5,6] [7,8]: keeping >= 3 removes two whole nodes
    assert h("XADD", "s", "MAXLEN", "~", "3", "8-1", "f", "v") == b"8-1"
    assert h("XLEN", "s") == 4
    assert h.take_effects() == [[b"XADD", b"s", b"MAXLEN", b"=", b"4", b"8-1", b"f", b"v"]]
    assert h("XTRIM", "s", "MINID", "~", "8") == 2
    assert h.take_effects() == [[b"XTRIM", b"s", b"MINID", b"=", b"7-1"]]


def test_minid_rewrite_counts_a_deleted_first_entry(h):
    """Redis rewrites MINID ~ to the first entry of the first node, deleted or not."""
    for i in (1, 2, 3):
        h.ok("XADD", "s", f"{i}-0", "f", "v")
    h.ok("XDEL", "s", "1-0")
    h.take_effects()
    h.ok("XADD", "s", "MINID", "~", "3", "6-0", "f", "v")
    assert h.take_effects() == [[b"XADD", b"s", b"MINID", b"=", b"1-0", b"6-0", b"f", b"v"]]


def test_minid_rewrite_of_an_emptied_stream_is_the_largest_id(h):
    h.ok("XADD", "s", "MINID", "~", "100", "5-0", "f", "v")
    assert h("XLEN", "s") == 0
    assert h.take_effects() == [[b"XADD", b"s", b"MINID", b"=", bytes(MAX_ID), b"5-0", b"f", b"v"]]
    assert h("XTRIM", "s", "MAXLEN", "0") == 0  # the key stays, empty


def test_limit_is_kept_in_the_rewrite():
    h = Harness(node_entries=2)
    for i in range(1, 7):
        h.ok("XADD", "s", f"{i}-1", "f", "v")
    h.take_effects()
    h.ok("XADD", "s", "MAXLEN", "~", "1", "LIMIT", "2", "7-1", "f", "v")
    assert h.take_effects() == [
        [b"XADD", b"s", b"MAXLEN", b"=", b"5", b"LIMIT", b"2", b"7-1", b"f", b"v"]]


def test_default_limit_of_approximate_trims():
    h = Harness(node_entries=1)  # the default LIMIT is then 100 entries
    h.ok("MULTI")
    for i in range(1, 251):
        h.ok("XADD", "s", f"{i}-1", "f", "v")
    h.ok("EXEC")
    assert h("XTRIM", "s", "MAXLEN", "~", "0") == 100
    assert h("XTRIM", "s", "MAXLEN", "~", "0", "LIMIT", "0") == 150  # LIMIT 0: unlimited


@pytest.mark.parametrize("node_entries,limit", [(1, 100), (100, 10_000), (0, 10_000),
                                                (20_000, 1_000_000)])
def test_default_limit_bounds(node_entries, limit):
    from tidelog.commands.stream.trimming import approx_trim_limit
    assert approx_trim_limit(node_entries) == limit


@pytest.mark.parametrize("kind", ["master", "aof"])
def test_master_and_aof_clients_ignore_limit(kind):
    h = Harness(node_entries=1)
    master = h.new_client(kind=kind)
    for i in range(1, 251):
        h.ok("XADD", "s", f"{i}-1", "f", "v", client=master)
    # LIMIT without ~ is accepted, and no LIMIT (given or default) stops the trim
    assert h("XTRIM", "s", "MAXLEN", "200", "LIMIT", "5", client=master) == 50
    assert h("XTRIM", "s", "MAXLEN", "~", "0", client=master) == 200
    assert h.err("XTRIM", "s", "LIMIT", "5", client=master) == errors.LIMIT_WITHOUT_STRATEGY


# -- effects, dirty, WATCH ----------------------------------------------------------

def test_xadd_propagates_the_generated_id(h):
    h.ok("XADD", "s", "*", "f", "v")
    h.ok("XADD", "s", "MAXLEN", "=", "5", "*", "f", "v")
    h.ok("XADD", "s", f"{NOW + 1}-*", "f", "v")
    h.ok("XADD", "s", f"{NOW + 2}-3", "f", "v")
    assert h.take_effects() == [
        [b"XADD", b"s", b"%d-0" % NOW, b"f", b"v"],
        [b"XADD", b"s", b"MAXLEN", b"=", b"5", b"%d-1" % NOW, b"f", b"v"],
        [b"XADD", b"s", b"%d-0" % (NOW + 1), b"f", b"v"],
        [b"XADD", b"s", b"%d-3" % (NOW + 2), b"f", b"v"],
    ]


def test_commands_that_change_nothing_propagate_nothing(h):
    h.ok("XADD", "s", "1-1", "f", "v")
    h.take_effects()
    dirty = h.engine.dirty
    assert h("XDEL", "s", "9-9") == 0
    assert h("XDEL", "nokey", "1-1") == 0
    assert h("XTRIM", "s", "MAXLEN", "5") == 0
    assert h("XTRIM", "s", "MAXLEN", "~", "1") == 0
    assert h("XTRIM", "nokey", "MAXLEN", "0") == 0
    assert h("XADD", "nokey", "NOMKSTREAM", "1-1", "f", "v") is None
    h("XADD", "s", "1-1", "f", "v")  # an error
    h("XLEN", "s"), h("XRANGE", "s", "-", "+"), h("XREAD", "STREAMS", "s", "0")
    assert h.take_effects() == []
    assert h.engine.dirty == dirty


def test_xdel_xtrim_xsetid_propagate_verbatim(h):
    for i in range(1, 5):
        h.ok("XADD", "s", f"{i}-1", "f", "v")
    h.take_effects()
    dirty = h.engine.dirty
    assert h("XDEL", "s", "1-1", "1-1", "9-9") == 1
    assert h("XTRIM", "s", "MAXLEN", "=", "2") == 1
    assert h("XTRIM", "s", "MINID", "4") == 1
    assert h("XSETID", "s", "9-9") == OK
    assert h("XSETID", "s", "9-9") == OK  # changes nothing, but Redis counts it
    assert h.take_effects() == [
        [b"XDEL", b"s", b"1-1", b"1-1", b"9-9"],
        [b"XTRIM", b"s", b"MAXLEN", b"=", b"2"],
        [b"XTRIM", b"s", b"MINID", b"4"],
        [b"XSETID", b"s", b"9-9"],
        [b"XSETID", b"s", b"9-9"],
    ]
    assert h.engine.dirty == dirty + 5


def test_writes_fail_watch_and_reads_do_not(h):
    h.ok("XADD", "s", "1-1", "f", "v")
    other = h.new_client()
    h.engine.watch(other, b"s")
    for argv in (("XRANGE", "s", "-", "+"), ("XLEN", "s"), ("XTRIM", "s", "MAXLEN", "5"),
                 ("XDEL", "s", "5-5")):
        h(*argv)
    assert not other.dirty_cas
    h.ok("XADD", "s", "2-1", "f", "v")
    assert other.dirty_cas


@pytest.mark.parametrize("argv", [("XDEL", "s", "1-1"), ("XTRIM", "s", "MAXLEN", "0"),
                                  ("XSETID", "s", "5-5"), ("XADD", "new", "1-1", "f", "v")])
def test_each_write_fails_watch(h, argv):
    h.ok("XADD", "s", "1-1", "f", "v")
    other = h.new_client()
    h.engine.watch(other, b(argv[1]))
    h.ok(*argv)
    assert other.dirty_cas


def test_transaction_effects_are_wrapped(h):
    h.ok("MULTI")
    h("XADD", "s", "*", "f", "v")
    h("XADD", "s", "MAXLEN", "~", "0", "*", "f", "v")
    assert h("EXEC") == [b"%d-0" % NOW, b"%d-1" % NOW]
    assert h.take_effects() == [
        [b"MULTI"],
        [b"XADD", b"s", b"%d-0" % NOW, b"f", b"v"],
        [b"XADD", b"s", b"MAXLEN", b"=", b"0", b"%d-1" % NOW, b"f", b"v"],
        [b"EXEC"],
    ]


# -- XRANGE / XREVRANGE -----------------------------------------------------------------

def fill(h, n, key="s"):
    for i in range(1, n + 1):
        h.ok("XADD", key, f"{i}-1", "i", i)


def ids(reply):
    return [e[0] for e in reply]


def test_ranges(h):
    fill(h, 5)
    assert ids(h("XRANGE", "s", "2", "4")) == [b"2-1", b"3-1", b"4-1"]
    assert ids(h("XRANGE", "s", "(2-1", "(4-1")) == [b"3-1"]
    assert ids(h("XRANGE", "s", "-", "+", "COUNT", "2")) == [b"1-1", b"2-1"]
    assert ids(h("XREVRANGE", "s", "+", "-", "COUNT", "2")) == [b"5-1", b"4-1"]
    assert ids(h("XREVRANGE", "s", "(5-1", "(1-1")) == [b"4-1", b"3-1", b"2-1"]
    # an incomplete exclusive bound: "(1" is after 1-0, "(5" before 5-<max>
    assert ids(h("XREVRANGE", "s", "(5", "(1")) == [b"5-1", b"4-1", b"3-1", b"2-1", b"1-1"]
    assert ids(h("XRANGE", "s", "(5", "+")) == [b"5-1"]  # (5 = after 5-0
    assert h("XRANGE", "s", "4", "2") == []
    assert h("XRANGE", "s", "-", "+", "COUNT", "0") is NULL_ARRAY
    assert h("XRANGE", "s", "-", "+", "COUNT", "-3") is NULL_ARRAY
    assert h("XRANGE", "nokey", "-", "+", "COUNT", "0") == []
    assert ids(h("XRANGE", "s", "-", "+", "COUNT", "1", "count", "3")) == [b"1-1", b"2-1", b"3-1"]


def test_range_errors(h):
    fill(h, 2)
    assert h.err("XRANGE", "s", "(-", "+") == errors.INVALID_STREAM_ID
    assert h.err("XRANGE", "s", "-", "(+") == errors.INVALID_STREAM_ID
    assert h.err("XRANGE", "s", "(1-*", "+") == errors.INVALID_STREAM_ID
    assert h.err("XRANGE", "s", f"({U64}-{U64}", "+") == errors.INVALID_START_INTERVAL
    assert h.err("XRANGE", "s", "-", "(0-0") == errors.INVALID_END_INTERVAL
    assert h.err("XREVRANGE", "s", "(0-0", "-") == errors.INVALID_END_INTERVAL
    assert h.err("XRANGE", "s", "-", "+", "COUNT") == errors.SYNTAX
    assert h.err("XRANGE", "s", "-", "+", "COUNT", "x") == errors.NOT_INTEGER


def test_count_bounds_the_work(h):
    """XRANGE ... COUNT n reads n entries from the stream (one read at
    once), XREVRANGE pulls n from its iterator: no more."""
    fill(h, 1000)
    stream = h.stream()
    pulled = []
    real_range, real_read_from = stream.range, stream.read_from

    def counting_range(start, end, rev=False):
        for item in real_range(start, end, rev):
            pulled.append(item[0])
            yield item

    def counting_read_from(start, count, end):
        ids, entries = real_read_from(start, count, end)
        pulled.extend(ids)
        return ids, entries

    stream.range = counting_range  # type: ignore[method-assign]
    stream.read_from = counting_read_from  # type: ignore[method-assign]
    assert len(h("XRANGE", "s", "-", "+", "COUNT", "3")) == 3
    assert len(h("XREVRANGE", "s", "+", "-", "COUNT", "2")) == 2
    assert len(pulled) == 5


@pytest.mark.parametrize("node_entries", [1, 2, 4, 100])
def test_ranges_after_deletes_at_node_sizes(node_entries):
    h = Harness(node_entries=node_entries)
    fill(h, 30)
    model = [b"%d-1" % i for i in range(1, 31)]
    for i in (1, 2, 7, 8, 9, 15, 30):
        assert h("XDEL", "s", f"{i}-1") == 1
        model.remove(b"%d-1" % i)
    h.stream()
    assert ids(h("XRANGE", "s", "-", "+")) == model
    assert ids(h("XREVRANGE", "s", "+", "-")) == model[::-1]
    assert ids(h("XRANGE", "s", "(6-1", "+", "COUNT", "3")) == [b"10-1", b"11-1", b"12-1"]
    assert ids(h("XREVRANGE", "s", "(16-1", "-", "COUNT", "2")) == [b"14-1", b"13-1"]


# -- XDEL, XLEN, XSETID -----------------------------------------------------------------------

def test_xdel(h):
    fill(h, 3)
    assert h("XDEL", "nokey", "bad-id") == 0  # the key is looked up first
    assert h.err("XDEL", "s", "1-1", "bad") == errors.INVALID_STREAM_ID
    assert h("XLEN", "s") == 3  # nothing deleted when one ID is bad
    assert h.err("XDEL", "s", "-") == errors.INVALID_STREAM_ID
    assert h("XDEL", "s", "1", "2-1", "2-1") == 1  # "1" is 1-0
    assert h("XLEN", "s") == 2
    stream = h.stream()
    assert stream.max_deleted_entry_id == StreamID(2, 1)


def test_xsetid(h):
    fill(h, 3)
    h.ok("XDEL", "s", "3-1")
    # Below the largest deleted ID (3-1): refused since Redis 7.4 (PR #11444).
    assert h.err("XSETID", "s", "2-5") == errors.XSETID_BELOW_CURRENT_MAX_DELETED
    assert h("XSETID", "s", "3-1") == OK
    fill(h, 3, key="t")
    assert h.err("XSETID", "t", "2-0") == errors.XSETID_BELOW_TOP
    assert h("XSETID", "t", "3-5") == OK  # above the last entry
    assert h.err("XSETID", "s", "3-2", "ENTRIESADDED", "1") == errors.XSETID_ENTRIES_ADDED_TOO_SMALL
    assert h.err("XSETID", "s", "3-2", "ENTRIESADDED", "-1") == errors.XSETID_ENTRIES_ADDED_NEGATIVE
    assert h.err("XSETID", "s", "3-2", "MAXDELETEDID", "3-3") == errors.XSETID_BELOW_MAX_DELETED_ARG
    assert h.err("XSETID", "s", "3-2", "MAXDELETEDID") == errors.SYNTAX
    assert h.err("XSETID", "s", "5-*") == errors.INVALID_STREAM_ID
    assert h.err("XSETID", "nokey", "1-1") == errors.NO_SUCH_KEY
    assert h.err("XSETID", "nokey", "1-1", "ENTRIESADDED", "-1") == \
        errors.XSETID_ENTRIES_ADDED_NEGATIVE
    assert h("XSETID", "s", "10-0", "ENTRIESADDED", "50", "MAXDELETEDID", "9-9") == OK
    stream = h.stream()
    assert (stream.last_id, stream.entries_added, stream.max_deleted_entry_id) == (
        StreamID(10, 0), 50, StreamID(9, 9))
    assert h.err("XADD", "s", "10-0", "f", "v") == errors.XADD_ID_TOO_SMALL
    assert h("XADD", "s", "10-*", "f", "v") == b"10-1"


def test_xsetid_checks_the_largest_deleted_id(h):
    """Redis 7.4 (redis/redis PR #11444): the new last ID may not go below the
    stream's largest deleted ID (7.0.15 accepted ``XSETID s 1-5`` here, and then
    ``XADD s 1-6`` re-created an ID the stream had deleted)."""
    fill(h, 2)
    h.ok("XDEL", "s", "2-1")
    assert h.err("XSETID", "s", "1-5") == errors.XSETID_BELOW_CURRENT_MAX_DELETED
    assert h.err("XADD", "s", "1-6", "f", "v") == errors.XADD_ID_TOO_SMALL
    assert h("XSETID", "s", "2-1") == OK  # equal is fine


def test_xsetid_entries_added_clamps_entries_read(h):
    """Redis 8.10 (redis/redis#15488, PR #15489): lowering entries-added
    lowers every group's entries-read with it, so no lag goes negative."""
    fill(h, 10)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    h.ok("XGROUP", "CREATE", "s", "unknown", "$")
    h("XREADGROUP", "GROUP", "g", "c", "COUNT", "10", "STREAMS", "s", ">")
    h.ok("XTRIM", "s", "MAXLEN", "2")
    assert h("XSETID", "s", "10-1", "ENTRIESADDED", "2") == OK
    groups = h.stream().groups
    assert groups[b"g"].entries_read == 2 and groups[b"g"].lag(h.stream()) == 0
    assert groups[b"unknown"].entries_read == -1  # unknown stays unknown


# -- XREAD ------------------------------------------------------------------------------

def test_xread_sync(h):
    fill(h, 3)
    fill(h, 1, key="t")
    assert h("XREAD", "STREAMS", "s", "t", "1-1", "$") == [
        [b"s", [entry("2-1", "i", 2), entry("3-1", "i", 3)]]]
    assert h("XREAD", "COUNT", "1", "STREAMS", "s", "t", "0", "0") == [
        [b"s", [entry("1-1", "i", 1)]], [b"t", [entry("1-1", "i", 1)]]]
    assert h("XREAD", "STREAMS", "s", "3-1") is NULL_ARRAY
    assert h("XREAD", "STREAMS", "nokey", "$") is NULL_ARRAY
    assert h("XREAD", "COUNT", "-1", "STREAMS", "s", "0") == h("XREAD", "STREAMS", "s", "0")


def test_xread_resp3_is_a_map(h):
    fill(h, 1)
    h.client.protocol = 3
    assert h("XREAD", "STREAMS", "s", "s", "0", "0") == Map(
        [(b"s", [entry("1-1", "i", 1)]), (b"s", [entry("1-1", "i", 1)])])


def test_xread_plus_reads_the_last_entry(h):
    fill(h, 3)
    assert h("XREAD", "STREAMS", "s", "nokey", "+", "+") == [[b"s", [entry("3-1", "i", 3)]]]
    h.ok("XDEL", "s", "3-1")  # Redis 7.4.2+: the last live entry, not last_id
    assert h("XREAD", "STREAMS", "s", "+") == [[b"s", [entry("2-1", "i", 2)]]]
    h.ok("XTRIM", "s", "MAXLEN", "0")
    assert h("XREAD", "STREAMS", "s", "+") is NULL_ARRAY


def test_xread_errors(h):
    fill(h, 1)
    h.engine.dbs[0].data[b"str"] = b"x"
    assert h.err("XREAD", "STREAMS", "s", "t", "0") == errors.XREAD_UNBALANCED
    assert h.err("XREAD", "FOO", "STREAMS", "s", "0") == errors.SYNTAX
    assert h.err("XREAD", "COUNT", "1", "BLOCK", "1") == errors.SYNTAX  # no STREAMS
    assert h.err("XREAD", "BLOCK", "x", "STREAMS", "s", "0") == errors.TIMEOUT_NOT_INTEGER
    assert h.err("XREAD", "BLOCK", "-1", "STREAMS", "s", "0") == errors.TIMEOUT_NEGATIVE
    assert h.err("XREAD", "COUNT", "x", "STREAMS", "s", "0") == errors.NOT_INTEGER
    assert h.err("XREAD", "GROUP", "g", "c", "STREAMS", "s", "0") == errors.XREAD_GROUP_OPTION
    assert h.err("XREAD", "NOACK", "STREAMS", "s", "0") == errors.XREAD_NOACK_OPTION
    assert h.err("XREAD", "STREAMS", "s", ">") == errors.XREAD_GT_ID
    assert h.err("XREAD", "STREAMS", "s", "-") == errors.INVALID_STREAM_ID
    assert h.err("XREAD", "STREAMS", "s", "1-*") == errors.INVALID_STREAM_ID
    # keys in order, each key's type before its ID
    assert h.err("XREAD", "STREAMS", "str", "s", "0", "bad") == errors.WRONGTYPE
    assert h.err("XREAD", "STREAMS", "s", "str", "bad", "0") == errors.INVALID_STREAM_ID


def read_block(h, client, *rest):
    reply = h("XREAD", *rest, client=client)
    assert reply is BLOCKED
    assert client.blocked is not None
    return client


def test_block_is_served_by_a_later_xadd(h):
    reader = h.new_client()
    read_block(h, reader, "BLOCK", "0", "STREAMS", "s", "$")
    assert reader.inbox == []
    assert h("XADD", "s", "1-1", "f", "v") == b"1-1"
    assert reader.inbox == [[[b"s", [entry("1-1", "f", "v")]]]]
    assert reader.blocked is None and h.engine.blocked_clients == 0


def test_block_dollar_is_resolved_when_blocking(h):
    fill(h, 2)
    reader = h.new_client()
    read_block(h, reader, "BLOCK", "0", "STREAMS", "s", "$")
    h.ok("XADD", "s", "3-1", "a", "b")
    h.ok("XADD", "s", "4-1", "c", "d")
    assert reader.inbox == [[[b"s", [entry("3-1", "a", "b")]]]]


def test_blocked_clients_are_served_in_fifo_order(h):
    readers = [h.new_client() for _ in range(3)]
    order = []
    for n, reader in enumerate(readers):
        reader.send = lambda reply, n=n: order.append((n, reply))
        read_block(h, reader, "BLOCK", "0", "STREAMS", "s", "$")
    h.ok("XADD", "s", "1-1", "f", "v")
    assert [n for n, _ in order] == [0, 1, 2]
    assert all(reply == [[b"s", [entry("1-1", "f", "v")]]] for _, reply in order)


def test_only_the_key_that_got_data_wakes(h):
    on_a, on_b = h.new_client(), h.new_client()
    read_block(h, on_a, "BLOCK", "0", "STREAMS", "a", "$")
    read_block(h, on_b, "BLOCK", "0", "STREAMS", "b", "$")
    h.ok("XADD", "b", "1-1", "f", "v")
    assert on_a.inbox == [] and on_a.blocked is not None
    assert on_b.inbox == [[[b"b", [entry("1-1", "f", "v")]]]]


def test_served_with_the_key_that_became_ready_first(h):
    """Blocked on a and b; EXEC adds to b then a: the reply names b only."""
    reader = h.new_client()
    read_block(h, reader, "BLOCK", "0", "STREAMS", "a", "b", "$", "$")
    h.ok("MULTI")
    h("XADD", "b", "1-1", "f", "v")
    h("XADD", "a", "1-1", "f", "v")
    assert reader.inbox == []  # nothing is served before EXEC completes
    h.ok("EXEC")
    assert reader.inbox == [[[b"b", [entry("1-1", "f", "v")]]]]


def test_block_served_with_an_empty_list_when_new_entries_are_gone(h):
    """Redis serves as soon as last_id passed the reader's ID (XADD then XDEL in EXEC)."""
    fill(h, 1)
    reader = h.new_client()
    read_block(h, reader, "BLOCK", "0", "STREAMS", "s", "$")
    h.ok("MULTI")
    h("XADD", "s", "2-1", "f", "v")
    h("XDEL", "s", "2-1")
    h.ok("EXEC")
    assert reader.inbox == [[[b"s", []]]]


def test_block_default_count_is_1000(h):
    reader = h.new_client()
    read_block(h, reader, "BLOCK", "0", "STREAMS", "s", "0")
    h.ok("MULTI")
    for i in range(1, 1201):
        h("XADD", "s", f"{i}-1", "f", "v")
    h.ok("EXEC")
    [[key, entries]] = reader.inbox[0]
    assert key == b"s" and len(entries) == 1000


def test_block_with_count(h):
    reader = h.new_client()
    read_block(h, reader, "COUNT", "2", "BLOCK", "0", "STREAMS", "s", "0")
    h.ok("MULTI")
    fill(h, 5)
    h.ok("EXEC")
    assert ids(reader.inbox[0][0][1]) == [b"1-1", b"2-1"]


def test_block_resp3(h):
    reader = h.new_client(protocol=3)
    read_block(h, reader, "BLOCK", "0", "STREAMS", "s", "$")
    h.ok("XADD", "s", "1-1", "f", "v")
    assert reader.inbox == [Map([(b"s", [entry("1-1", "f", "v")])])]


def test_block_times_out_with_a_null_array(h):
    reader = read_block(h, h.new_client(), "BLOCK", "50", "STREAMS", "s", "$")
    h.engine.timeout_blocked(reader.blocked)
    assert reader.inbox == [NULL_ARRAY]
    assert h.engine.blocked_clients == 0 and h.engine.waiters == {}


def test_block_plus_on_a_missing_key_waits_like_zero(h):
    reader = read_block(h, h.new_client(), "BLOCK", "0", "STREAMS", "s", "+")
    h.ok("XADD", "s", "0-1", "f", "v")
    assert reader.inbox == [[[b"s", [entry("0-1", "f", "v")]]]]


def test_block_on_data_already_there_does_not_block(h):
    fill(h, 1)
    reader = h.new_client()
    assert h("XREAD", "BLOCK", "0", "STREAMS", "s", "+", client=reader) == [
        [b"s", [entry("1-1", "i", 1)]]]
    assert reader.blocked is None


def test_block_on_a_key_named_twice_waits_after_the_first_id(h):
    h.ok("XADD", "s", "5-1", "f", "v")
    first = read_block(h, h.new_client(), "BLOCK", "0", "STREAMS", "s", "s", "$", "9-0")
    second = read_block(h, h.new_client(), "BLOCK", "0", "STREAMS", "s", "s", "9-0", "$")
    h.ok("XADD", "s", "6-1", "f", "v")
    assert first.inbox == [[[b"s", [entry("6-1", "f", "v")]]]]
    assert second.inbox == []
    h.ok("XADD", "s", "9-1", "f", "v")
    assert second.inbox == [[[b"s", [entry("9-1", "f", "v")]]]]


def test_block_in_multi_answers_nil_at_once(h):
    fill(h, 1)
    h.ok("MULTI")
    h("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    h("XREAD", "BLOCK", "0", "STREAMS", "s", "0")
    assert h("EXEC") == [NULL_ARRAY, [[b"s", [entry("1-1", "i", 1)]]]]
    assert h.engine.blocked_clients == 0


def test_xadd_in_multi_wakes_after_exec(h):
    reader = read_block(h, h.new_client(), "BLOCK", "0", "STREAMS", "s", "$")
    h.ok("MULTI")
    h("XADD", "s", "1-1", "f", "v")
    assert reader.inbox == []
    h.ok("EXEC")
    assert reader.inbox == [[[b"s", [entry("1-1", "f", "v")]]]]


def test_block_keeps_waiting_through_wrong_types_and_lower_ids(h):
    fill(h, 2)
    reader = read_block(h, h.new_client(), "BLOCK", "0", "STREAMS", "s", "$")
    h.ok("MULTI")
    h("XTRIM", "s", "MAXLEN", "0")
    h.ok("EXEC")
    db = h.engine.dbs[0]
    db.delete(b"s")
    db.set(b"s", b"now a string")
    h.engine.signal_ready(0, b"s")
    h.engine.serve_ready()
    assert reader.inbox == [] and reader.blocked is not None
    db.delete(b"s")
    h.ok("XADD", "s", "1-1", "f", "v")  # below the ID it waits after (2-1)
    assert reader.inbox == []
    h.ok("XADD", "s", "3-1", "f", "v")
    assert reader.inbox == [[[b"s", [entry("3-1", "f", "v")]]]]
    assert h.engine.internal_errors == 0


def test_a_write_that_declares_no_propagation_is_an_internal_error(h, monkeypatch):
    def forgetful(ctx, argv):
        """FORGETFUL key"""
        ctx.db.set(argv[1], b"v")
        ctx.modified(argv[1])  # and no propagate_argv(), effect() or no_propagation()
        return OK

    spec = CommandSpec(name="forgetful", handler=forgetful, arity=2,
                       flags=frozenset({"write"}), first_key=1, last_key=1, key_step=1)
    monkeypatch.setitem(COMMANDS, "forgetful", spec)
    assert h.ok("FORGETFUL", "k") == OK
    assert h.engine.internal_errors == 1
    assert h.take_effects() == [[b"FORGETFUL", b"k"]]  # nothing lost meanwhile
    h.engine.internal_errors = 0


def test_every_write_declares_what_it_propagates(h):
    h.ok("XADD", "s", "1-1", "f", "v")
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    h.ok("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    h.ok("XACK", "s", "g", "1-1")
    h.ok("XDEL", "s", "1-1")
    h.ok("SET", "k", "1")
    h.ok("INCR", "k")
    h.ok("EXPIRE", "k", "100")
    h.ok("PERSIST", "k")
    h.ok("RENAME", "k", "k2")
    h.ok("DEL", "k2")
    assert h.engine.internal_errors == 0
    assert len(h.take_effects()) == 14  # XREADGROUP: MULTI, XCLAIM, SETID, EXEC


def test_closing_a_blocked_client_cleans_up(h):
    reader = read_block(h, h.new_client(), "BLOCK", "0", "STREAMS", "s", "t", "$", "$")
    assert h.engine.blocked_clients == 1
    h.engine.client_closed(reader)
    assert h.engine.blocked_clients == 0 and h.engine.waiters == {}
    h.ok("XADD", "s", "1-1", "f", "v")
    assert reader.inbox == []


def test_blocked_reads_are_not_propagated(h):
    reader = read_block(h, h.new_client(), "BLOCK", "0", "STREAMS", "s", "$")
    h.ok("XADD", "s", "1-1", "f", "v")
    assert reader.inbox
    assert h.take_effects() == [[b"XADD", b"s", b"1-1", b"f", b"v"]]


# -- the command table ------------------------------------------------------------------

@pytest.mark.parametrize("name,arity,flags", [
    ("xadd", -5, {"write", "denyoom", "fast"}),
    ("xlen", 2, {"readonly", "fast"}),
    ("xrange", -4, {"readonly"}),
    ("xrevrange", -4, {"readonly"}),
    ("xdel", -3, {"write", "fast"}),
    ("xtrim", -4, {"write"}),
    ("xsetid", -3, {"write", "denyoom", "fast"}),
    ("xread", -4, {"readonly", "blocking", "movablekeys"}),
])
def test_command_table(name, arity, flags):
    from tidelog.commands.table import COMMANDS
    spec = COMMANDS[name]
    assert (spec.arity, set(spec.flags)) == (arity, flags)
    assert spec.handler.__doc__.startswith(name.upper() + " ")
    assert spec.complexity and spec.group == "stream"
