"""Deleting entries and what happens to groups' references: XDELEX and XACKDEL,
KEEPREF | DELREF | ACKED on XADD and XTRIM (Redis 8.2), driven through
Engine.execute with a FakeClock.

redis-server 7.0.15 has none of these commands, so the authority is redis.io:
each test names the command page it follows, and the cases Redis's own test
suite pins (tests/unit/type/stream.tcl, stream-cgroups.tcl) are reproduced
where the page is silent.  Choices made where both are silent are listed in
docs/compatibility.md; the tests marked "choice" pin them.

Effects are checked the way the other unit tests do: caught from
``engine.effect_listeners`` and replayed into a fresh engine through an AOF
client, which must end in the same state.
"""

from __future__ import annotations

import pytest

import tidelog.commands  # noqa: F401  (registers the commands before the engine is built)
from tests.support.engine_harness import (
    GroupHarness,
    fill,
    ids,
    pel,
    read_all,
    state,
    two_groups_reading,
    xrange_ids,
)
from tidelog import errors
from tidelog.resp.replies import NULL_ARRAY


@pytest.fixture
def h():
    return GroupHarness()


# -- XDELEX ------------------------------------------------------------------------------
# https://redis.io/docs/latest/commands/xdelex/

def test_xdelex_doc_example_ids_not_in_the_stream(h):
    # The page's example: XDELEX ... KEEPREF on two IDs that do not exist.
    h.ok("XADD", "mystream", "1784722083515-0", "field1", "value1")
    h.ok("XADD", "mystream", "1784722083516-0", "field2", "value2")
    h.ok("XADD", "mystream", "1784722083517-0", "field3", "value3")
    assert h("XDELEX", "mystream", "KEEPREF", "IDS", "2",
             "1526919030474-55", "1526919030474-56") == [-1, -1]
    assert xrange_ids(h, "mystream") == [b"1784722083515-0", b"1784722083516-0",
                                         b"1784722083517-0"]


def test_xdelex_missing_key_and_keepref(h):
    # "-1 for each requested ID when the given key does not exist"
    assert h("XDELEX", "nokey", "IDS", "3", "1-0", "2-0", "3-0") == [-1, -1, -1]
    assert b"nokey" not in h.engine.dbs[0].data
    fill(h, 3)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    read_all(h, "c")
    h.take_effects()
    # KEEPREF (the default): deleted, the PEL reference stays (as XDEL)
    assert h("XDELEX", "s", "IDS", "2", "1-1", "1-1") == [1, -1]
    assert xrange_ids(h) == [b"2-1", b"3-1"]
    assert [p[0] for p in pel(h)] == [b"1-1", b"2-1", b"3-1"]
    assert h.take_effects() == [[b"XDELEX", b"s", b"IDS", b"2", b"1-1", b"1-1"]]
    assert h("XDELEX", "s", "KEEPREF", "IDS", "1", "9-9") == [-1]
    assert h.take_effects() == []  # nothing changed, nothing propagated


def test_xdelex_delref_cleans_every_group_even_for_gone_entries(h):
    # DELREF: "removes all references to these entries from all consumer
    # groups' PEL ... If an entry ID is not in the stream, but there are
    # dangling references, XDELEX with DELREF would still remove all those
    # references."
    two_groups_reading(h, 3)
    h.ok("XDEL", "s", "2-0")  # 2-0 is now a dangling reference in both groups
    h.take_effects()
    watcher = h.new_client()
    h.ok("WATCH", "s", client=watcher)
    assert h("XDELEX", "s", "DELREF", "IDS", "2", "1-0", "2-0") == [1, -1]
    assert xrange_ids(h) == [b"3-0"]
    for g in ("g1", "g2"):
        assert [p[0] for p in pel(h, g)] == [b"3-0"]
    assert h.take_effects() == [[b"XDELEX", b"s", b"DELREF", b"IDS", b"2", b"1-0", b"2-0"]]
    # only PELs change: still propagated (redis/redis#15569), WATCH untouched
    h.ok("XDEL", "s", "3-0")
    h.take_effects()
    h.ok("MULTI", client=watcher)
    assert h("EXEC", client=watcher) is NULL_ARRAY  # the XDEL touched it
    assert h("XDELEX", "s", "DELREF", "IDS", "1", "3-0") == [-1]
    assert pel(h, "g1") == [] and pel(h, "g2") == []
    assert h.take_effects() == [[b"XDELEX", b"s", b"DELREF", b"IDS", b"1", b"3-0"]]


def test_xdelex_acked_with_several_groups(h):
    # ACKED: "Only deletes entries that were read and acknowledged by all
    # consumer groups."  2: "not deleted and there are still existing references".
    fill(h, 4)
    h.ok("XGROUP", "CREATE", "s", "g1", "0")
    h.ok("XGROUP", "CREATE", "s", "g2", "0")
    read_all(h, "a", group="g1")               # g1: 1..4 pending
    read_all(h, "b", group="g2", count=2)      # g2: 1, 2 pending; 3, 4 not delivered
    h.ok("XACK", "s", "g1", "1-1", "2-1", "3-1")
    h.ok("XACK", "s", "g2", "1-1")
    assert h("XDELEX", "s", "ACKED", "IDS", "5", "1-1", "2-1", "3-1", "4-1", "8-1") == \
        [1, 2, 2, 2, -1]
    # 2-1: pending in g2; 3-1: g2 never got it; 4-1: pending in g1
    assert xrange_ids(h) == [b"2-1", b"3-1", b"4-1"]
    h.ok("XACK", "s", "g2", "2-1")
    assert h("XDELEX", "s", "ACKED", "IDS", "1", "2-1") == [1]


def test_xdelex_acked_without_groups_deletes(h):
    # choice: with no consumer group nothing references an entry, so ACKED
    # deletes (XTRIM's page: "If there are no consumer groups, these
    # arguments have no effect").
    fill(h, 2)
    assert h("XDELEX", "s", "ACKED", "IDS", "2", "1-1", "5-1") == [1, -1]
    assert xrange_ids(h) == [b"2-1"]


@pytest.mark.parametrize("cmd", [["XDELEX", "s"], ["XACKDEL", "s", "g"]])
def test_ids_block_errors(h, cmd):
    # Texts and cases as Redis's tests/unit/type/stream-cgroups.tcl
    # ("XACKDEL IDS parameter validation", "... KEEPREF/DELREF/ACKED parameter validation").
    fill(h, 1)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    for bad in ("abc", "0", "-5"):
        assert h.err(*cmd, "IDS", bad, "1-1") == errors.IDS_NOT_POSITIVE
    assert h.err(*cmd, "IDS", "3", "1-1", "2-2") == errors.IDS_MISMATCH
    assert h.err(*cmd, "IDS", "1", "1-1", "2-2") == errors.SYNTAX
    assert h.err(*cmd, "KEEPREF", "DELREF", "IDS", "1", "1-1") == errors.SYNTAX
    assert h.err(*cmd, "KEEPREF", "ACKED", "IDS", "1", "1-1") == errors.SYNTAX
    assert h.err(*cmd, "DELREF", "ACKED", "IDS", "1", "1-1") == errors.SYNTAX
    assert h.err(*cmd, "IDS", "1", "1-1", "IDS", "1", "1-1") == errors.SYNTAX
    assert h.err(*cmd, "BOGUS", "IDS", "1", "1-1") == errors.SYNTAX
    assert h.err(*cmd, "KEEPREF", "NOTIDS", "1", "1-1") == errors.SYNTAX
    assert h.err(*cmd, "IDS", "1", "not-an-id") == errors.INVALID_STREAM_ID
    # "The IDS block can be at any position in the command"
    assert h(*cmd, "IDS", "1", "7-7", "delref") == [-1]
    # the arity: XDELEX needs key IDS numids id, XACKDEL one more
    assert h.err(*cmd[:1], *cmd[1:-1] if cmd[0] == "XACKDEL" else [], "IDS", "1") == \
        errors.wrong_arity(cmd[0].lower().encode()).message
    h.ok("SET", "str", "x")
    assert h.err(cmd[0], "str", *cmd[2:], "IDS", "1", "1-1") == errors.WRONGTYPE


# -- XACKDEL ----------------------------------------------------------------------------
# https://redis.io/docs/latest/commands/xackdel/

def test_xackdel_doc_example(h):
    h.ok("XADD", "mystream", "1755870377536-0", "field1", "value1")
    h.ok("XADD", "mystream", "1755870387045-0", "field2", "value2")
    h.ok("XGROUP", "CREATE", "mystream", "mygroup", "0")
    read_all(h, "consumer1", group="mygroup", key="mystream", count=2)
    assert h("XPENDING", "mystream", "mygroup") == \
        [2, b"1755870377536-0", b"1755870387045-0", [[b"consumer1", b"2"]]]
    assert h("XACKDEL", "mystream", "mygroup", "KEEPREF", "IDS", "2",
             "1755870377536-0", "1755870387045-0") == [1, 1]
    assert h("XPENDING", "mystream", "mygroup") == [0, None, None, NULL_ARRAY]
    assert h("XRANGE", "mystream", "-", "+") == []


def test_xackdel_missing_key_or_group(h):
    # Redis's "XACKDEL should return empty array when key doesn't exist or
    # group doesn't exist": -1 per ID, and nothing happens.
    assert h("XACKDEL", "s", "g", "IDS", "2", "1-1", "2-2") == [-1, -1]
    h.ok("XADD", "s", "1-1", "f", "v")
    assert h("XACKDEL", "s", "g", "IDS", "2", "1-1", "2-2") == [-1, -1]
    assert xrange_ids(h) == [b"1-1"]


def test_xackdel_policies_with_two_groups(h):
    # The three Redis test cases: DELREF, ACKED, KEEPREF, each with two groups.
    two_groups_reading(h)
    assert h("XACKDEL", "s", "g1", "DELREF", "IDS", "2", "1-0", "2-0") == [1, 1]
    assert xrange_ids(h) == [] and pel(h, "g1") == [] and pel(h, "g2") == []
    assert h("XACKDEL", "s", "g2", "DELREF", "IDS", "2", "1-0", "2-0") == [-1, -1]

    h.ok("DEL", "s")
    two_groups_reading(h)
    assert h("XACKDEL", "s", "g1", "ACKED", "IDS", "2", "1-0", "2-0") == [2, 2]
    assert xrange_ids(h) == [b"1-0", b"2-0"]
    assert pel(h, "g1") == [] and len(pel(h, "g2")) == 2
    assert h("XACKDEL", "s", "g2", "ACKED", "IDS", "2", "1-0", "2-0") == [1, 1]
    assert xrange_ids(h) == [] and pel(h, "g2") == []

    h.ok("DEL", "s")
    two_groups_reading(h)
    assert h("XACKDEL", "s", "g1", "KEEPREF", "IDS", "2", "1-0", "2-0") == [1, 1]
    assert xrange_ids(h) == [] and len(pel(h, "g2")) == 2
    # acked in g2 although the entries are gone: 1 each
    assert h("XACKDEL", "s", "g2", "KEEPREF", "IDS", "2", "1-0", "2-0") == [1, 1]
    assert pel(h, "g2") == []


def test_xackdel_only_acts_on_what_this_group_has_pending(h):
    # -1 "if no such ID exists" for this group: not pending here means
    # nothing is acknowledged and nothing deleted.
    fill(h, 3)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    read_all(h, "c", count=1)
    h.take_effects()
    assert h("XACKDEL", "s", "g", "IDS", "2", "2-1", "1-1") == [-1, 1]
    assert xrange_ids(h) == [b"2-1", b"3-1"]
    assert h.take_effects() == [[b"XACKDEL", b"s", b"g", b"IDS", b"2", b"2-1", b"1-1"]]
    assert h("XACKDEL", "s", "g", "IDS", "1", "2-1") == [-1]
    assert h.take_effects() == []
    # ACKED: delivered and acked by the only group, but 2-1 was never delivered
    read_all(h, "c", count=1)
    h.ok("XGROUP", "CREATE", "s", "late", "$")
    assert h("XACKDEL", "s", "g", "ACKED", "IDS", "1", "2-1") == [1]
    h.ok("XGROUP", "SETID", "s", "late", "0")
    read_all(h, "c")  # g reads 3-1
    assert h("XACKDEL", "s", "g", "ACKED", "IDS", "1", "3-1") == [2]  # "late" has it pending


# -- KEEPREF | DELREF | ACKED on XADD and XTRIM -------------------------------------------
# https://redis.io/docs/latest/commands/xadd/ and https://redis.io/docs/latest/commands/xtrim/

def test_xadd_maxlen_acked_follows_redis_test(h):
    # Redis's "XADD with MAXLEN option and ACKED option" (tests/unit/type/stream.tcl)
    for i in range(1, 6):
        h.ok("XADD", "s", f"{i}-0", "f", "v")
    h.ok("XGROUP", "CREATE", "s", "mygroup", "0")
    h.ok("XADD", "s", "MAXLEN", "=", "1", "ACKED", "6-0", "f", "v")
    assert h("XLEN", "s") == 6  # nothing delivered yet: everything kept
    read_all(h, "consumer1", group="mygroup", count=1)
    h.ok("XACK", "s", "mygroup", "1-0")
    h.ok("XADD", "s", "MAXLEN", "=", "1", "ACKED", "7-0", "f", "v")
    assert h("XLEN", "s") == 6  # 1-0 went; 2-0 was never delivered
    got = read_all(h, "consumer1", group="mygroup")
    h.ok("XACK", "s", "mygroup", *ids(got[0][1]))
    h.ok("XADD", "s", "MAXLEN", "=", "1", "ACKED", "*", "f", "v")
    assert h("XLEN", "s") == 1


def test_xadd_maxlen_delref_follows_redis_test(h):
    # Redis's "XADD with MAXLEN option and DELREF option"
    for i in range(1, 6):
        h.ok("XADD", "s", f"{i}-0", "f", "v")
    h.ok("XGROUP", "CREATE", "s", "mygroup", "0")
    read_all(h, "consumer1", group="mygroup", count=1)
    h.ok("XADD", "s", "MAXLEN", "=", "1", "DELREF", "*", "f", "v")
    assert h("XLEN", "s") == 1
    assert h("XPENDING", "s", "mygroup")[0] == 0


def test_trim_keepref_is_the_default_and_no_groups_no_effect(h):
    fill(h, 5)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    read_all(h, "c")
    assert h("XTRIM", "s", "MAXLEN", "2", "KEEPREF") == 3
    assert len(pel(h)) == 5  # references kept, as before 8.2
    h.ok("DEL", "s")
    fill(h, 5)
    # "If there are no consumer groups, these arguments have no effect."
    assert h("XTRIM", "s", "MAXLEN", "2", "ACKED") == 3
    assert h("XTRIM", "s", "MINID", "5", "DELREF") == 1
    assert xrange_ids(h) == [b"5-1"]


def test_trim_delref_cleans_every_groups_pel(h):
    fill(h, 6)
    for g, c in (("g1", "a"), ("g2", "b")):
        h.ok("XGROUP", "CREATE", "s", g, "0")
        read_all(h, c, group=g)
    h.ok("XDEL", "s", "3-1")  # a dangling reference below the cut goes too
    assert h("XTRIM", "s", "MINID", "5-1", "DELREF") == 3
    for g in ("g1", "g2"):
        assert [p[0] for p in pel(h, g)] == [b"5-1", b"6-1"]
    # nothing trimmed: nothing dropped
    assert h("XTRIM", "s", "MAXLEN", "10", "DELREF") == 0
    assert len(pel(h, "g1")) == 2


def test_trim_acked_with_several_groups_stops_at_the_first_needed_entry(h):
    # choice: trimming stops at the first entry some group still needs, so
    # what is left is always a suffix of the stream ("trimming will still
    # stop at the limit").
    fill(h, 6)
    h.ok("XGROUP", "CREATE", "s", "g1", "0")
    h.ok("XGROUP", "CREATE", "s", "g2", "0")
    read_all(h, "a", group="g1")
    read_all(h, "b", group="g2", count=4)
    h.ok("XACK", "s", "g1", "1-1", "2-1", "4-1", "5-1", "6-1")   # 3-1 pending in g1
    h.ok("XACK", "s", "g2", "1-1", "2-1", "3-1", "4-1")          # 5-1, 6-1 undelivered
    assert h("XTRIM", "s", "MAXLEN", "0", "ACKED") == 2
    assert xrange_ids(h) == [b"3-1", b"4-1", b"5-1", b"6-1"]
    h.ok("XACK", "s", "g1", "3-1")
    assert h("XTRIM", "s", "MAXLEN", "0", "ACKED") == 2   # stops at 5-1 (g2 never read it)
    assert h("XTRIM", "s", "MAXLEN", "3", "ACKED") == 0   # and never past the limit
    read_all(h, "b", group="g2")
    h.ok("XACK", "s", "g2", "5-1")
    assert h("XTRIM", "s", "MINID", "9", "ACKED") == 1    # 6-1 is pending in g2
    assert xrange_ids(h) == [b"6-1"]


def test_trim_acked_approximate_is_node_granular():
    # Redis's "XTRIM with approx and ACKED" (redis/redis#14623): with two
    # entries a node, the acked first node goes and the unacked second stays.
    h = GroupHarness(node_entries=2)
    for i in range(1, 5):
        h.ok("XADD", "s", f"{i}-0", "f", "v")
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    read_all(h, "c")
    h.ok("XACK", "s", "g", "1-0", "2-0")
    assert h("XTRIM", "s", "MINID", "~", "5-0", "ACKED") == 2
    assert xrange_ids(h) == [b"3-0", b"4-0"]
    # choice: "~" removes whole nodes only, so a node holding one needed
    # entry stays whole even where an exact trim would take the rest
    h.ok("DEL", "s")
    for i in range(1, 7):
        h.ok("XADD", "s", f"{i}-0", "f", "v")
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    read_all(h, "c")
    h.ok("XACK", "s", "g", "1-0", "2-0", "3-0", "5-0", "6-0")   # 4-0 pending
    assert h("XTRIM", "s", "MAXLEN", "~", "0", "ACKED") == 2
    assert xrange_ids(h) == [b"3-0", b"4-0", b"5-0", b"6-0"]
    assert h("XTRIM", "s", "MAXLEN", "0", "ACKED") == 1          # exact: 3-0 goes too
    assert xrange_ids(h) == [b"4-0", b"5-0", b"6-0"]


def test_trim_policy_parsing(h):
    fill(h, 3)
    for argv in (["XTRIM", "s", "MAXLEN", "1", "KEEPREF", "ACKED"],
                 ["XTRIM", "s", "DELREF", "MAXLEN", "1", "DELREF"],
                 ["XADD", "s", "ACKED", "KEEPREF", "*", "f", "v"]):
        assert h.err(*argv) == errors.SYNTAX, argv
    assert h.err("XTRIM", "s", "ACKED", "x") == errors.SYNTAX
    # order-tolerant, case-insensitive; XADD takes a policy without trimming
    assert h("XTRIM", "s", "acked", "MAXLEN", "=", "2") == 1
    assert h("XADD", "s", "NOMKSTREAM", "delref", "9-9", "f", "v") == b"9-9"
    assert h("XADD", "t", "NOMKSTREAM", "KEEPREF", "*", "f", "v") is None


def test_trim_policy_effects_replay_exactly():
    h = GroupHarness(node_entries=3)
    fill(h, 12)
    h.ok("XGROUP", "CREATE", "s", "g1", "0")
    h.ok("XGROUP", "CREATE", "s", "g2", "0")
    read_all(h, "a", group="g1", count=10)
    read_all(h, "b", group="g2", count=8)
    h.ok("XACK", "s", "g1", *[f"{i}-1" for i in range(1, 8)])
    h.ok("XACK", "s", "g2", *[f"{i}-1" for i in range(1, 8)])
    h.take_effects()
    assert h("XTRIM", "s", "MAXLEN", "~", "1", "ACKED") == 6
    assert h("XADD", "s", "MINID", "~", "11", "DELREF", "13-1", "f", "v") == b"13-1"
    effects = h.take_effects()
    first = bytes(next(h.stream().nodes())[0])  # "~" becomes "=" and the first node's ID
    assert effects == [
        [b"XTRIM", b"s", b"MAXLEN", b"=", b"6", b"ACKED"],
        [b"XADD", b"s", b"MINID", b"=", first, b"DELREF", b"13-1", b"f", b"v"],
    ]
    assert first == b"10-1" and h("XLEN", "s") == 4
    assert [p[0] for p in pel(h, "g1")] == [b"10-1"] and pel(h, "g2") == []
    source = GroupHarness(node_entries=3)
    fill(source, 12)
    source.ok("XGROUP", "CREATE", "s", "g1", "0")
    source.ok("XGROUP", "CREATE", "s", "g2", "0")
    read_all(source, "a", group="g1", count=10)
    read_all(source, "b", group="g2", count=8)
    source.ok("XACK", "s", "g1", *[f"{i}-1" for i in range(1, 8)])
    source.ok("XACK", "s", "g2", *[f"{i}-1" for i in range(1, 8)])
    aof = source.new_client(kind="aof")
    for argv in effects:
        source.ok(*argv, client=aof)
    assert state(source) == state(h)
