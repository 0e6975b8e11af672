"""The replication stream's Redis 7.0 forms of 8.x stream effects, read
against the state after the command (see replication/compat7.py)."""

from __future__ import annotations

from tests.support.engine_harness import Harness
from tidelog.replication.compat7 import redis7_forms
from tidelog.types.idmp import auto_iid


def forms(h: Harness, *argv) -> list[list[bytes]]:
    h.take_effects()
    h.ok(*argv)
    out = []
    for effect in h.take_records():
        out += redis7_forms(h.engine.dbs[0], effect)
    return out


def stream_with_groups(h: Harness) -> None:
    for i in range(1, 6):
        h.ok("XADD", "s", f"{i}-0", "f", "v")
    h.ok("XGROUP", "CREATE", "s", "a", "0")
    h.ok("XGROUP", "CREATE", "s", "b", "0")
    h.ok("XREADGROUP", "GROUP", "a", "c", "STREAMS", "s", ">")
    h.ok("XREADGROUP", "GROUP", "b", "c", "COUNT", "2", "STREAMS", "s", ">")


def test_xackdel_becomes_xack_and_xdel_of_what_is_gone() -> None:
    h = Harness()
    stream_with_groups(h)
    assert forms(h, "XACKDEL", "s", "a", "IDS", "2", "1-0", "9-0") == [
        [b"XACK", b"s", b"a", b"1-0", b"9-0"], [b"XDEL", b"s", b"1-0", b"9-0"]]
    # ACKED: 2-0 is still pending in b and 3-0 not yet read by b: both stay.
    assert forms(h, "XACKDEL", "s", "a", "ACKED", "IDS", "2", "2-0", "3-0") == [
        [b"XACK", b"s", b"a", b"2-0", b"3-0"]]
    assert forms(h, "XACKDEL", "s", "a", "DELREF", "IDS", "1", "4-0") == [
        [b"XACK", b"s", b"a", b"4-0"], [b"XACK", b"s", b"b", b"4-0"],
        [b"XDEL", b"s", b"4-0"]]


def test_xdelex_with_delref_acks_in_every_group() -> None:
    h = Harness()
    stream_with_groups(h)
    assert forms(h, "XDELEX", "s", "DELREF", "IDS", "1", "2-0") == [
        [b"XACK", b"s", b"a", b"2-0"], [b"XACK", b"s", b"b", b"2-0"], [b"XDEL", b"s", b"2-0"]]
    assert forms(h, "XDELEX", "s", "IDS", "1", "5-0") == [[b"XDEL", b"s", b"5-0"]]


def test_xadd_loses_keepref_and_idmp_which_goes_as_xidmprecord() -> None:
    h = Harness()
    assert forms(h, "XADD", "s", "KEEPREF", "MAXLEN", "~", "10", "LIMIT", "5", "1-1", "f", "v") == [
        [b"XADD", b"s", b"MAXLEN", b"=", b"1", b"LIMIT", b"5", b"1-1", b"f", b"v"]]
    got = forms(h, "XADD", "s", "IDMP", "p", "i", "NOMKSTREAM", "*", "f", "v")
    entry_id = got[0][3]
    assert got == [[b"XADD", b"s", b"NOMKSTREAM", entry_id, b"f", b"v"],
                   [b"XIDMPRECORD", b"s", b"p", b"i", entry_id]]
    got = forms(h, "XADD", "s", "IDMPAUTO", "q", "*", "a", "1")
    assert got[1] == [b"XIDMPRECORD", b"s", b"q", auto_iid([b"a", b"1"]), got[0][2]]
    plain = forms(h, "XADD", "t", "5-5", "f", "v")
    assert plain == [[b"XADD", b"t", b"5-5", b"f", b"v"]]


def test_other_effects_go_as_they_are() -> None:
    h = Harness()
    assert forms(h, "SET", "k", "v") == [[b"SET", b"k", b"v"]]
    h.ok("XADD", "s", "1-1", "f", "v")
    assert forms(h, "XTRIM", "s", "MAXLEN", "=", "0", "KEEPREF") == [
        [b"XTRIM", b"s", b"MAXLEN", b"=", b"0"]]


def test_a_policy_after_the_ids_block_is_read_from_the_record() -> None:
    # XACKDEL and XDELEX take the policy before or after IDS; the rewrite
    # reads it from the record, so DELREF after the IDs acks in every group.
    h = Harness()
    stream_with_groups(h)
    assert forms(h, "XACKDEL", "s", "a", "IDS", "1", "1", "DELREF") == [
        [b"XACK", b"s", b"a", b"1-0"], [b"XACK", b"s", b"b", b"1-0"], [b"XDEL", b"s", b"1-0"]]
    assert forms(h, "XDELEX", "s", "IDS", "1", "2", "DELREF") == [
        [b"XACK", b"s", b"a", b"2-0"], [b"XACK", b"s", b"b", b"2-0"], [b"XDEL", b"s", b"2-0"]]


def test_xadd_and_xtrim_rewrites_put_the_options_in_one_order() -> None:
    # Built from the record's fields: NOMKSTREAM, a policy 7.0 cannot apply,
    # then the trimming with its exact threshold and LIMIT as given.
    h = Harness(node_entries=2)
    for i in range(1, 6):
        h.ok("XADD", "s", f"{i}-0", "f", "v")
    assert forms(h, "XADD", "s", "MAXLEN", "~", "2", "LIMIT", "7", "NOMKSTREAM", "keepref",
                 "9-0", "f", "v") == [
        [b"XADD", b"s", b"NOMKSTREAM", b"MAXLEN", b"=", b"2", b"LIMIT", b"7", b"9-0", b"f", b"v"]]
    for i in range(1, 6):
        h.ok("XADD", "t", f"{i}-0", "f", "v")
    assert forms(h, "XTRIM", "t", "KEEPREF", "MINID", "~", "4-0", "LIMIT", "100") == [
        [b"XTRIM", b"t", b"MINID", b"=", b"3-0", b"LIMIT", b"100"]]
    # without KEEPREF or IDMP the 7.0 form is the effect itself
    assert forms(h, "XADD", "s", "DELREF", "MAXLEN", "3", "10-0", "f", "v") == [
        [b"XADD", b"s", b"DELREF", b"MAXLEN", b"3", b"10-0", b"f", b"v"]]
