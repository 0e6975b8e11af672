"""Typed effects (commands/effects.py): the records XADD, XTRIM, XACKDEL and
XDELEX propagate, their Redis 8 argv forms, the encoding shared by the
listeners, and MULTI/EXEC wrapping.

The expected argv forms are what these commands propagated when effects
were argv lists (the request with the generated ID and the exact trimming
threshold in place, REFERENCE-streams §4.1): the AOF's bytes and what
Tidelog and Redis 8 replicas get do not change.  The Redis 7.0 forms are
tested in test_compat7.py.
"""

from __future__ import annotations

import shlex

import pytest

from tests.support.engine_harness import NOW, GroupHarness, Harness
from tidelog.commands.effects import (
    XAckDel,
    XAdd,
    XAddWithOptions,
    XDelEx,
    XTrim,
    argv_of,
    as_unit,
    encode_argv,
    encoded,
)
from tidelog.ids import StreamID
from tidelog.persistence.aof_format import encode_command
from tidelog.types.idmp import auto_iid


def _id(seq: int) -> str:
    return f"{NOW}-{seq}"


# (command, the effect argvs it propagates), run in order on one engine whose
# streams hold two entries per node (so "~" trims whole nodes of two).
XADD_XTRIM_TABLE = [
    ("XADD s * f v", [["XADD", "s", _id(0), "f", "v"]]),
    ("xadd s * f v a b", [["xadd", "s", _id(1), "f", "v", "a", "b"]]),
    ("XADD s MAXLEN ~ 2 * f v", [["XADD", "s", "MAXLEN", "=", "3", _id(2), "f", "v"]]),
    ("XADD s maxlen ~ 2 * f v", [["XADD", "s", "maxlen", "=", "2", _id(3), "f", "v"]]),
    ("XADD s MAXLEN = 3 * f v", [["XADD", "s", "MAXLEN", "=", "3", _id(4), "f", "v"]]),
    ("XADD s MAXLEN 3 * f v", [["XADD", "s", "MAXLEN", "3", _id(5), "f", "v"]]),
    ("XADD s MINID ~ 0 * f v", [["XADD", "s", "MINID", "=", _id(2), _id(6), "f", "v"]]),
    ("XADD s MINID 9 * f v", [["XADD", "s", "MINID", "9", _id(7), "f", "v"]]),
    ("XADD s MAXLEN ~ 2 LIMIT 5 * f v",
     [["XADD", "s", "MAXLEN", "=", "3", "LIMIT", "5", _id(8), "f", "v"]]),
    ("XADD s LIMIT 5 MAXLEN ~ 1 * f v",
     [["XADD", "s", "LIMIT", "5", "MAXLEN", "=", "2", _id(9), "f", "v"]]),
    ("XADD s NOMKSTREAM * f v", [["XADD", "s", "NOMKSTREAM", _id(10), "f", "v"]]),
    ("XADD nokey NOMKSTREAM * f v", []),
    ("XADD s KEEPREF * f v", [["XADD", "s", "KEEPREF", _id(11), "f", "v"]]),
    ("XADD s keepref MAXLEN ~ 4 * f v",
     [["XADD", "s", "keepref", "MAXLEN", "=", "5", _id(12), "f", "v"]]),
    ("XADD s MAXLEN = 2 NOMKSTREAM KEEPREF * f v",
     [["XADD", "s", "MAXLEN", "=", "2", "NOMKSTREAM", "KEEPREF", _id(13), "f", "v"]]),
    ("XADD s DELREF MAXLEN 10 * f v", [["XADD", "s", "DELREF", "MAXLEN", "10", _id(14), "f", "v"]]),
    ("XADD s ACKED MAXLEN = 10 * f v",
     [["XADD", "s", "ACKED", "MAXLEN", "=", "10", _id(15), "f", "v"]]),
    ("XADD s IDMP p i * f v", [["XADD", "s", "IDMP", "p", "i", _id(16), "f", "v"]]),
    ("XADD s IDMP p i * f v", []),  # a retry: nothing added, nothing propagated
    ("XADD s IDMPAUTO q * a 1", [["XADD", "s", "IDMPAUTO", "q", _id(17), "a", "1"]]),
    ("XADD s NOMKSTREAM IDMP p2 i2 MAXLEN ~ 100 * f v",
     [["XADD", "s", "NOMKSTREAM", "IDMP", "p2", "i2", "MAXLEN", "=", "7", _id(18), "f", "v"]]),
    ("XTRIM s MAXLEN 50", []),  # nothing removed
    ("XTRIM s MAXLEN ~ 2", [["XTRIM", "s", "MAXLEN", "=", "3"]]),
    ("XTRIM s MAXLEN = 3", []),
    ("XTRIM s MAXLEN = 2 KEEPREF", [["XTRIM", "s", "MAXLEN", "=", "2", "KEEPREF"]]),
    ("XTRIM s MAXLEN ~ 1 LIMIT 1000 keepref",
     [["XTRIM", "s", "MAXLEN", "=", "1", "LIMIT", "1000", "keepref"]]),
    ("XTRIM s MINID ~ 999999999999999",
     [["XTRIM", "s", "MINID", "=", "18446744073709551615-18446744073709551615"]]),
    # explicit IDs go out as given ("6", not "6-0"); "<ms>-*" gets its sequence
    ("XADD e 5-5 f v", [["XADD", "e", "5-5", "f", "v"]]),
    ("XADD e 6 f v", [["XADD", "e", "6", "f", "v"]]),
    ("XADD e 6-* f v", [["XADD", "e", "6-1", "f", "v"]]),
    ("XADD e MAXLEN = 2 7-1 f v", [["XADD", "e", "MAXLEN", "=", "2", "7-1", "f", "v"]]),
]


def run_table(h: Harness, table) -> None:
    for command, expected in table:
        h(*shlex.split(command))
        assert h.take_effects() == [[a.encode() for a in argv] for argv in expected], command


def test_xadd_and_xtrim_argv_forms_are_what_they_propagated_as_argv_lists() -> None:
    run_table(Harness(node_entries=2), XADD_XTRIM_TABLE)


GROUP_TABLE = [
    ("XACKDEL g a IDS 2 1-0 9-0", [["XACKDEL", "g", "a", "IDS", "2", "1-0", "9-0"]]),
    ("XACKDEL g a ACKED IDS 2 2-0 4-0", [["XACKDEL", "g", "a", "ACKED", "IDS", "2", "2-0", "4-0"]]),
    ("XACKDEL g a IDS 1 5 DELREF", [["XACKDEL", "g", "a", "IDS", "1", "5", "DELREF"]]),
    ("XACKDEL g a DELREF IDS 1 6-0", [["XACKDEL", "g", "a", "DELREF", "IDS", "1", "6-0"]]),
    ("XACKDEL g a IDS 1 6-0", []),  # no longer pending: nothing changed
    ("XDELEX g IDS 1 7-0", [["XDELEX", "g", "IDS", "1", "7-0"]]),
    ("XDELEX g DELREF IDS 2 2-0 8", [["XDELEX", "g", "DELREF", "IDS", "2", "2-0", "8"]]),
    ("XDELEX g ACKED IDS 1 3-0", []),  # b still needs 3-0
    ("XTRIM g MAXLEN 0 ACKED", []),
    ("XTRIM g MAXLEN 0 DELREF", [["XTRIM", "g", "MAXLEN", "0", "DELREF"]]),
]


def two_groups(h: Harness) -> None:
    for i in range(1, 9):
        h.ok("XADD", "g", f"{i}-0", "f", "v")
    h.ok("XGROUP", "CREATE", "g", "a", "0")
    h.ok("XGROUP", "CREATE", "g", "b", "0")
    h.ok("XREADGROUP", "GROUP", "a", "c", "STREAMS", "g", ">")
    h.ok("XREADGROUP", "GROUP", "b", "c", "COUNT", "3", "STREAMS", "g", ">")
    h.take_effects()


def test_xackdel_xdelex_argv_forms_are_the_requests() -> None:
    h = GroupHarness(node_entries=2)
    two_groups(h)
    run_table(h, GROUP_TABLE)


def test_the_records_hold_what_the_command_did() -> None:
    h = GroupHarness(node_entries=2)
    h.ok("XADD", "s", "*", "f", "v", "g", "w")
    h.ok("XADD", "s", "NOMKSTREAM", "IDMPAUTO", "p", "MAXLEN", "~", "1", "LIMIT", "9", "*", "f", "v")
    h.ok("XADD", "t", "KEEPREF", "MINID", "0-1", "7-*", "a", "b")
    plain, options, minid = h.take_records()

    assert plain.__class__ is XAdd  # the producers' form: two slots
    assert (plain.key, plain.id, plain.fields) == (b"s", _id(0).encode(), [b"f", b"v", b"g", b"w"])
    assert (plain.strategy, plain.policy, plain.idmp_pid, plain.nomkstream) == (b"", b"", None, False)

    assert isinstance(options, XAddWithOptions)
    assert (options.key, options.id, options.fields) == (b"s", _id(1).encode(), [b"f", b"v"])
    assert options.nomkstream and options.policy == b""
    assert (options.strategy, options.threshold, options.limit) == (b"MAXLEN", b"2", b"9")
    assert (options.idmp_pid, options.idmp_iid) == (b"p", auto_iid([b"f", b"v"]))

    assert isinstance(minid, XAddWithOptions)
    assert (minid.id, minid.policy, minid.strategy, minid.threshold, minid.limit) == (
        b"7-0", b"KEEPREF", b"MINID", b"0-1", None)

    h.ok("XTRIM", "s", "MAXLEN", "~", "0", "LIMIT", "100", "ACKED")
    (trim,) = h.take_records()
    assert isinstance(trim, XTrim)
    assert (trim.key, trim.strategy, trim.threshold, trim.limit, trim.policy) == (
        b"s", b"MAXLEN", b"0", b"100", b"ACKED")

    two_groups(h)
    h.ok("XACKDEL", "g", "a", "IDS", "2", "1", "2-0", "DELREF")
    h.ok("XDELEX", "g", "IDS", "1", "3-0")
    ackdel, delex = h.take_records()
    assert isinstance(ackdel, XAckDel)
    assert (ackdel.key, ackdel.group, ackdel.policy, ackdel.ids) == (
        b"g", b"a", b"DELREF", [StreamID(1, 0), StreamID(2, 0)])
    assert isinstance(delex, XDelEx)
    assert (delex.key, delex.policy, delex.ids) == (b"g", b"KEEPREF", [StreamID(3, 0)])


def test_a_pipelined_run_of_xadds_propagates_one_record_per_call() -> None:
    h = Harness()
    h.ok("XADD", "t", "*", "f", "v")  # the raw name XADD is known to the dispatch from here on
    h.take_records()
    run = [[b"XADD", b"s", b"*", b"n", b"%d" % i] for i in range(3)]
    assert h.engine.execute_run(h.client, run) == [_id(i).encode() for i in range(3)]
    records = h.take_records()
    assert [r.__class__ for r in records] == [XAdd] * 3
    assert [argv_of(r) for r in records] == [
        [b"XADD", b"s", _id(i).encode(), b"n", b"%d" % i] for i in range(3)]
    assert all(argv_of(r) is r for r in records)  # each its own argv form
    assert [argv[2] for argv in run] == [b"*"] * 3  # the requests left as they came


def test_transactions_and_scripts_wrap_records_in_multi_exec() -> None:
    h = Harness()
    h.ok("MULTI")
    h.ok("XADD", "m", "*", "f", "v")
    h.ok("XADD", "m", "MAXLEN", "~", "0", "*", "f", "v")
    h.ok("EXEC")
    assert h.take_effects() == [
        [b"MULTI"], [b"XADD", b"m", _id(0).encode(), b"f", b"v"],
        [b"XADD", b"m", b"MAXLEN", b"=", b"0", _id(1).encode(), b"f", b"v"], [b"EXEC"]]
    h.ok("EVAL", "redis.call('XADD', KEYS[1], '*', 'x', 'y'); "
                 "return redis.call('XADD', KEYS[1], 'KEEPREF', '*', 'x', 'z')", "1", "ev")
    assert h.take_effects() == [
        [b"MULTI"], [b"XADD", b"ev", _id(0).encode(), b"x", b"y"],
        [b"XADD", b"ev", b"KEEPREF", _id(1).encode(), b"x", b"z"], [b"EXEC"]]


def test_argv_of_and_the_encoder() -> None:
    plain = [b"SET", b"k", b"v"]
    assert argv_of(plain) is plain
    record = XAdd([b"XADD", b"s", b"*", b"f", b"v"])
    record[2] = b"1-1"
    assert argv_of(record) is record == [b"XADD", b"s", b"1-1", b"f", b"v"]
    assert (record.key, record.id, record.fields) == (b"s", b"1-1", [b"f", b"v"])
    options = XAddWithOptions([b"XADD", b"s", b"MAXLEN", b"~", b"9", b"*", b"f", b"v"], b"1-2", 5,
                              False, b"", b"MAXLEN", b"7", 4, None, None, None)
    assert argv_of(options) == [b"XADD", b"s", b"MAXLEN", b"=", b"7", b"1-2", b"f", b"v"]
    assert options.src[3:6] == [b"~", b"9", b"*"]  # the request is left as it came
    assert encode_argv([b"SET", b"k", b""]) == b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n"
    assert encode_command is encode_argv  # the AOF's encoder is the effects' one


def test_encoded_once_for_every_listener() -> None:
    record = XAdd([b"XADD", b"s", b"1-1", b"f", b"v"])
    batch = [(0, [b"SET", b"k", b"v"]), (0, record)]
    first = encoded(batch, 2)
    assert first == [encode_argv([b"SET", b"k", b"v"]), encode_argv(argv_of(record))]
    assert encoded(batch, 2) is first  # the second listener takes the same bytes
    again = encoded(batch, 2)  # ... and the last one let them go: made anew
    assert again == first and again is not first
    other = [(0, [b"PING"])]
    assert encoded(other, 1) == [b"*1\r\n$4\r\nPING\r\n"]
    assert encoded(other, 1) is not encoded(other, 1)  # one listener: nothing kept


def test_a_listener_that_does_not_read_leaves_nothing_wrong() -> None:
    first = [(0, [b"SET", b"a", b"1"])]
    kept = encoded(first, 3)  # two more listeners were expected, none read
    second = [(0, [b"SET", b"b", b"2"])]
    assert encoded(second, 2) == [encode_argv([b"SET", b"b", b"2"])]
    assert encoded(second, 2) == [encode_argv([b"SET", b"b", b"2"])]
    assert encoded(first, 3) == kept  # not served from another batch's bytes


@pytest.mark.parametrize("size", [0, 1, 2, 3])
def test_as_unit_wraps_more_than_one_effect(size) -> None:
    batch = [(db, [b"INCR", b"k%d" % db]) for db in range(size)]
    wrapped = as_unit(batch)
    if size <= 1:
        assert wrapped is batch
    else:
        assert wrapped == [(0, [b"MULTI"]), *batch, (size - 1, [b"EXEC"])]
