"""Redis 8.2-8.10 stream features, driven through Engine.execute with a FakeClock.

XDELEX and XACKDEL (8.2), KEEPREF | DELREF | ACKED on XADD and XTRIM (8.2),
XREADGROUP ... CLAIM (8.4), XNACK (8.8), MAXCOUNT on XREAD and XREADGROUP
(8.10).  redis-server 7.0.15 has none of them, so the authority is redis.io:
each test names the command page it follows, and the cases Redis's own test
suite pins (tests/unit/type/stream.tcl, stream-cgroups.tcl) are reproduced
where the page is silent.  Choices made where both are silent are listed in
docs/compatibility.md; the tests marked "choice" pin them.

Effects are checked the way the other unit tests do: caught from
``engine.effect_listeners`` and replayed into a fresh engine through an AOF
client, which must end in the same state.
"""

from __future__ import annotations

import random

import pytest

import tidelog.commands  # noqa: F401  (registers the commands before the engine is built)
from tests.support.engine_harness import NOW, GroupHarness, b, entry, fill, ids, xclaim_effect
from tidelog import errors
from tidelog.engine import BLOCKED
from tidelog.ids import StreamID
from tidelog.resp.replies import NULL_ARRAY, ErrorReply

LLONG_MAX = 2**63 - 1


@pytest.fixture
def h():
    return GroupHarness()


def pel(h, group="g", key="s"):
    """``[(id, owner or None, delivery time, count)]`` in ID order."""
    g = h.group(group, key)
    return [(bytes(e.id), None if e.consumer is None else e.consumer.name, e.delivery_time,
             e.delivery_count) for e in g.pel.values()]


def xrange_ids(h, key="s"):
    return ids(h.ok("XRANGE", key, "-", "+"))


def read_all(h, consumer, group="g", key="s", count=None):
    extra = ["COUNT", count] if count else []
    return h.ok("XREADGROUP", "GROUP", group, consumer, *extra, "STREAMS", key, ">")


def state(h):
    """Everything the effects must rebuild: entries and every group's PEL,
    position, NACK zone order and consumers with something pending."""
    out = {}
    for key, value in sorted(h.engine.dbs[0].data.items()):
        if not hasattr(value, "groups"):
            continue
        value.check()
        groups = {}
        for name, group in sorted(value.groups.items()):
            group.check()
            nack_order = [bytes(e.id) for e in group.claimable(0, 1 << 62)
                          if e.consumer is None]
            groups[name] = (group.last_id, group.entries_read,
                            [(e.id, None if e.consumer is None else e.consumer.name,
                              e.delivery_count) for e in group.pel.values()],
                            nack_order)
        out[key] = (ids(h.ok("XRANGE", key, "-", "+")), value.length, groups)
    return out


def replay(h) -> GroupHarness:
    """A fresh engine fed everything ``h`` propagated, through an AOF client."""
    replica = GroupHarness()
    replica.clock.set_ms(h.clock.now_ms())
    aof = replica.new_client(kind="aof")
    for argv in h.take_effects():
        replica.ok(*argv, client=aof)
    return replica


def two_groups_reading(h, n=2):
    """Entries 1-0..n-0, groups g1 and g2 each having read all of them."""
    for i in range(1, n + 1):
        h.ok("XADD", "s", f"{i}-0", "f", "v")
    for g, c in (("g1", "c1"), ("g2", "c2")):
        h.ok("XGROUP", "CREATE", "s", g, "0")
        read_all(h, c, group=g)


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


# -- XNACK -------------------------------------------------------------------------------
# https://redis.io/docs/latest/commands/xnack/

def test_xnack_doc_example_fail(h):
    h.ok("XADD", "mystream", "1526569498055-0", "field", "value1")
    h.ok("XADD", "mystream", "1526569498056-0", "field", "value2")
    h.ok("XGROUP", "CREATE", "mystream", "mygroup", "0")
    read_all(h, "consumer1", group="mygroup", key="mystream")
    assert h("XNACK", "mystream", "mygroup", "FAIL", "IDS", "2",
             "1526569498055-0", "1526569498056-0") == 2
    # "After NACKing, the messages appear with empty consumer in XPENDING"
    assert h("XPENDING", "mystream", "mygroup", "-", "+", "10") == [
        [b"1526569498055-0", b"", -1, 1], [b"1526569498056-0", b"", -1, 1]]
    # nobody owns them: the summary lists no consumer
    assert h("XPENDING", "mystream", "mygroup") == [2, b"1526569498055-0", b"1526569498056-0", []]
    # the page's other examples: SILENT, FATAL, RETRYCOUNT
    assert h("XNACK", "mystream", "mygroup", "SILENT", "IDS", "1", "1526569498055-0") == 1
    assert pel(h, "mygroup", "mystream")[0][3] == 0
    assert h("XNACK", "mystream", "mygroup", "FATAL", "IDS", "1", "1526569498055-0") == 1
    assert pel(h, "mygroup", "mystream")[0][3] == LLONG_MAX
    assert h("XNACK", "mystream", "mygroup", "FAIL", "IDS", "1", "1526569498055-0",
             "RETRYCOUNT", "5") == 1
    assert pel(h, "mygroup", "mystream")[0][3] == 5


def test_xnack_modes_counts_and_consumers(h):
    # Redis's "XNACK SILENT mode delivery_count behavior" and friends
    fill(h, 3)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    read_all(h, "c1", count=2)
    read_all(h, "c2")
    h.ok("XCLAIM", "s", "g", "c1", "0", "1-1")   # count 2
    assert h("XNACK", "s", "g", "SILENT", "IDS", "3", "1-1", "9-9", "3-1") == 2
    assert pel(h) == [(b"1-1", None, 0, 1), (b"2-1", b"c1", NOW, 1), (b"3-1", None, 0, 0)]
    assert h("XNACK", "s", "g", "SILENT", "IDS", "1", "3-1") == 1   # clamped at 0
    assert pel(h)[2][3] == 0
    # consumers stay, with what they still own
    assert {n: c[b"pending"] for n, c in h.consumers().items()} == {b"c1": 1, b"c2": 0}
    assert h("XPENDING", "s", "g", "-", "+", "10", "c2") == []
    # duplicates count each time; an unowned entry re-NACKed counts too
    assert h("XNACK", "s", "g", "FAIL", "IDS", "2", "2-1", "2-1") == 2
    assert h("XNACK", "s", "g", "FATAL", "IDS", "1", "1-1") == 1
    assert pel(h)[0][3] == LLONG_MAX
    # RETRYCOUNT wins over every mode
    assert h("XNACK", "s", "g", "FATAL", "IDS", "1", "1-1", "RETRYCOUNT", "42") == 1
    assert pel(h)[0][3] == 42
    assert h("XNACK", "s", "g", "FAIL", "IDS", "1", "8-8") == 0
    # XPENDING IDLE: an unowned entry passes any min-idle (choice)
    assert [r[0] for r in h("XPENDING", "s", "g", "IDLE", "999999", "-", "+", "10")] == \
        [b"1-1", b"2-1", b"3-1"]


def test_xnack_force(h):
    # FORCE: "Creates new unowned PEL entries for IDs that are not already in
    # the group PEL. The entry must exist in the stream."  Count 0, or
    # RETRYCOUNT, or LLONG_MAX for FATAL.
    fill(h, 3)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    assert h("XNACK", "s", "g", "FAIL", "IDS", "1", "1-1", "FORCE") == 1
    assert h("XNACK", "s", "g", "FAIL", "IDS", "1", "9-9", "FORCE") == 0
    assert h("XNACK", "s", "g", "FATAL", "FORCE", "IDS", "1", "2-1") == 1
    assert h("XNACK", "s", "g", "SILENT", "RETRYCOUNT", "7", "IDS", "1", "3-1", "FORCE") == 1
    assert pel(h) == [(b"1-1", None, 0, 0), (b"2-1", None, 0, LLONG_MAX), (b"3-1", None, 0, 7)]
    assert h.group().last_id == StreamID(0, 0)  # FORCE does not move the group
    # on a pending entry FORCE changes nothing about the normal path
    assert h("XNACK", "s", "g", "FAIL", "IDS", "1", "1-1", "FORCE") == 1
    assert len(pel(h)) == 3
    assert h("XCLAIM", "s", "g", "c", "0", "1-1", "JUSTID") == [b"1-1"]
    h.ok("XDEL", "s", "2-1")
    h.ok("XACK", "s", "g", "2-1")
    assert h("XNACK", "s", "g", "FAIL", "IDS", "1", "2-1", "FORCE") == 0  # deleted entry


def test_xnack_errors(h):
    # Redis's "XNACK argument and error validation"
    assert h.err("XNACK", "nokey", "grp", "SILENT", "IDS", "1", "1-0") == \
        errors.nogroup_key_or_group(b"nokey", b"grp").message
    fill(h, 2)
    assert h.err("XNACK", "s", "nogroup", "SILENT", "IDS", "1", "1-0") == \
        errors.nogroup_key_or_group(b"s", b"nogroup").message
    h.ok("SET", "str", "x")
    assert h.err("XNACK", "str", "grp", "FAIL", "IDS", "1", "1-0") == errors.WRONGTYPE
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    read_all(h, "c1")
    arity = errors.wrong_arity(b"xnack").message
    for argv in (["XNACK", "s", "g", "SILENT", "IDS", "1"],
                 ["XNACK", "s", "g", "FAIL", "RETRYCOUNT"]):
        assert h.err(*argv) == arity
    bad = {
        ("FAIL", "BADOPT", "IDS", "1", "1-1"): errors.xnack_unrecognized(b"BADOPT").message,
        ("FAIL", "IDS", "1", "1-1", "BADOPT"): errors.xnack_unrecognized(b"BADOPT").message,
        ("FAIL", "FORCE", "IDS", "1", "1-1", "BADOPT", "RETRYCOUNT", "5"):
            errors.xnack_unrecognized(b"BADOPT").message,
        ("BADMODE", "IDS", "1", "1-1"): errors.XNACK_BAD_MODE,
        ("FAIL", "FATAL", "IDS", "1", "1-1"): errors.xnack_unrecognized(b"FATAL").message,
        ("SILENT", "NOTIDS", "1", "1-1"): errors.xnack_unrecognized(b"NOTIDS").message,
        ("SILENT", "FORCE", "RETRYCOUNT", "5"): errors.XNACK_NO_IDS,
        ("SILENT", "IDS", "abc", "1-1"): errors.XNACK_IDS_NOT_POSITIVE,
        ("SILENT", "IDS", "0", "1-1"): errors.XNACK_IDS_NOT_POSITIVE,
        ("SILENT", "IDS", "-1", "1-1"): errors.XNACK_IDS_NOT_POSITIVE,
        ("SILENT", "IDS", "2", "1-1"): errors.XNACK_IDS_MISMATCH,
        ("FAIL", "IDS", "1", "not-a-valid-id"): errors.INVALID_STREAM_ID,
        ("FAIL", "IDS", "1", "1-1", "RETRYCOUNT", "abc"): errors.NOT_INTEGER,
        ("FAIL", "IDS", "1", "1-1", "RETRYCOUNT", "-1"): errors.XNACK_RETRYCOUNT_NEGATIVE,
        ("FAIL", "IDS", "1", "1-1", "RETRYCOUNT", "99999999999999999999"): errors.NOT_INTEGER,
        ("FAIL", "IDS", "1", "1-1", "RETRYCOUNT"): errors.xnack_unrecognized(b"RETRYCOUNT").message,
        ("FAIL", "IDS", "1", "1-1", "2-1"): errors.xnack_unrecognized(b"2-1").message,
    }
    for rest, message in bad.items():
        assert h.err("XNACK", "s", "g", *rest) == message, rest
    assert [p[1] for p in pel(h)] == [b"c1", b"c1"]  # nothing was released


def test_nacked_entries_are_claimable_whatever_min_idle(h):
    # "Released messages have their delivery time set to 0, making them
    # immediately claimable regardless of the min-idle-time parameter"
    fill(h, 3)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    read_all(h, "c1")
    h.ok("XNACK", "s", "g", "SILENT", "IDS", "1", "2-1")
    h.ok("XNACK", "s", "g", "FATAL", "IDS", "1", "3-1")
    far = str(NOW * 10)  # min-idle-time far beyond any real idle time
    assert h("XCLAIM", "s", "g", "c2", far, "1-1", "2-1") == [entry("2-1", "f", "2")]
    assert pel(h)[1] == (b"2-1", b"c2", NOW, 1)   # SILENT's 0, plus this delivery
    h.ok("XNACK", "s", "g", "FAIL", "IDS", "1", "2-1")
    assert h("XAUTOCLAIM", "s", "g", "c3", far, "0") == \
        [b"0-0", [entry("2-1", "f", "2"), entry("3-1", "f", "3")], []]
    # a FATAL entry's count stays at LLONG_MAX however often it is claimed
    assert pel(h)[2] == (b"3-1", b"c3", NOW, LLONG_MAX)
    h.ok("XCLAIM", "s", "g", "c3", "0", "3-1")
    assert pel(h)[2][3] == LLONG_MAX


def test_nacked_entries_in_history_reads_delconsumer_and_xinfo(h):
    fill(h, 4)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    read_all(h, "c1")
    h.ok("XNACK", "s", "g", "FAIL", "IDS", "2", "1-1", "3-1")
    # Redis's "XNACK XREADGROUP pending read excludes NACKed entries"
    got = h.ok("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", "0")
    assert ids(got[0][1]) == [b"2-1", b"4-1"]
    full = dict(h.ok("XINFO", "STREAM", "s", "FULL").items)
    group = dict(full[b"groups"][0].items)
    assert group[b"nacked-count"] == 2 and group[b"pel-count"] == 4
    assert list(group)[-1] == b"nacked-count"  # after consumers (redis/docs#2992)
    assert group[b"pending"][0] == [b"1-1", b"", 0, 1]
    # DELCONSUMER takes what the consumer owns, not the NACK zone
    assert h("XGROUP", "DELCONSUMER", "s", "g", "c1") == 2
    assert [p[0] for p in pel(h)] == [b"1-1", b"3-1"]
    h.ok("XACK", "s", "g", "1-1")
    group = dict(dict(h.ok("XINFO", "STREAM", "s", "FULL").items)[b"groups"][0].items)
    assert group[b"nacked-count"] == 1


def test_xnack_effects_and_claims_of_deleted_nacked_entries(h):
    fill(h, 3)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    read_all(h, "c1")
    h.take_effects()
    assert h("XNACK", "s", "g", "FAIL", "IDS", "2", "1-1", "3-1", "RETRYCOUNT", "4") == 2
    assert h.take_effects() == [
        [b"MULTI"],
        [b"XNACK", b"s", b"g", b"FAIL", b"IDS", b"1", b"1-1", b"RETRYCOUNT", b"4", b"FORCE"],
        [b"XNACK", b"s", b"g", b"FAIL", b"IDS", b"1", b"3-1", b"RETRYCOUNT", b"4", b"FORCE"],
        [b"EXEC"],
    ]
    h.ok("XDEL", "s", "1-1", "3-1")
    h.take_effects()
    # Redis's "XNACK XCLAIM/XAUTOCLAIM of deleted NACKed entries cleans PEL":
    # the drop of an unowned record goes out as XACK
    assert h("XCLAIM", "s", "g", "c2", "0", "1-1") == []
    assert h.take_effects() == [[b"XACK", b"s", b"g", b"1-1"]]
    assert h("XAUTOCLAIM", "s", "g", "c2", "0", "0") == \
        [b"0-0", [entry("2-1", "f", "2")], [b"3-1"]]
    effects = h.take_effects()
    assert effects[1] == xclaim_effect("2-1", "c2", NOW, 2, "3-1")
    assert effects[2] == [b"XACK", b"s", b"g", b"3-1"]
    assert pel(h) == [(b"2-1", b"c2", NOW, 2)]


def test_nack_zone_is_fifo_and_replays():
    # Redis's "XNACK re-NACK moves entry to end of NACK zone"
    h = GroupHarness()
    fill(h, 4)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    read_all(h, "c1")
    h.ok("XNACK", "s", "g", "FAIL", "IDS", "3", "3-1", "1-1", "2-1")
    h.ok("XNACK", "s", "g", "FAIL", "IDS", "1", "3-1")
    got = h.ok("XREADGROUP", "GROUP", "g", "c2", "COUNT", "3", "CLAIM", "5", "STREAMS", "s", ">")
    assert ids(got[0][1]) == [b"1-1", b"2-1", b"3-1"]
    # the same effects rebuild the same NACK zone order on a fresh engine
    h2 = GroupHarness()
    fill(h2, 4)
    h2.ok("XGROUP", "CREATE", "s", "g", "0")
    read_all(h2, "c1")
    h2.ok("XNACK", "s", "g", "FATAL", "IDS", "3", "2-1", "4-1", "1-1")
    h2.ok("XNACK", "s", "g", "SILENT", "IDS", "1", "2-1")
    replica = replay(h2)
    assert state(replica) == state(h2)
    assert [bytes(e.id) for e in replica.group().claimable(NOW, 0)][:3] == \
        [b"4-1", b"1-1", b"2-1"]


# -- XREADGROUP ... CLAIM -------------------------------------------------------------------
# https://redis.io/docs/latest/commands/xreadgroup/ ("The CLAIM option")

def claim(h, consumer, min_idle, *opts, key="s", group="g"):
    return h.ok("XREADGROUP", "GROUP", group, consumer, *opts, "CLAIM", min_idle,
                "STREAMS", key, ">")


def test_claim_min_idle_time_errors(h):
    fill(h, 2)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    read_all(h, "c1", count=1)
    base = ["XREADGROUP", "GROUP", "g", "c1"]
    for bad in ("test", "5.5", "10e", "+10", "-0", "10/2"):
        assert h.err(*base, "CLAIM", bad, "STREAMS", "s", ">") == errors.CLAIM_NOT_INTEGER
    for bad in ("-10", "-42"):
        assert h.err(*base, "CLAIM", bad, "STREAMS", "s", ">") == errors.CLAIM_NEGATIVE
    # the next word is taken as the value, as Redis's "different position" test
    assert h.err(*base, "CLAIM", "STREAMS", "s", ">") == errors.CLAIM_NOT_INTEGER
    assert h.err("XREADGROUP", "CLAIM", "GROUP", "g", "c1", "STREAMS", "s", ">") == \
        errors.CLAIM_NOT_INTEGER
    assert h.err("XREADGROUP", "GROUP", "g", "CLAIM", "50", "c1", "STREAMS", "s", ">") == \
        errors.SYNTAX
    assert h.err("XREAD", "COUNT", "2", "CLAIM", "10", "STREAMS", "s", "0-0") == \
        errors.XREAD_CLAIM_OPTION


def test_claim_four_element_replies_and_order(h):
    # "Idle pending entries are reported first, then incoming entries";
    # "ordered by idle time (longer first)"; four elements each: id, fields,
    # ms since last delivery, times previously delivered (0, 0 for new ones).
    fill(h, 6)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    read_all(h, "c1", count=1)             # 1-1 at NOW
    h.clock.advance(100)
    read_all(h, "c2", count=2)             # 2-1, 3-1 at NOW+100
    h.clock.advance(100)
    h.ok("XCLAIM", "s", "g", "c2", "0", "3-1", "IDLE", "500")   # 3-1 idle longest, count 2
    h.clock.advance(50)
    h.take_effects()
    got = claim(h, "c3", "200")
    assert got == [[b"s", [
        [b"3-1", [b"f", b"3"], 550, 2],
        [b"1-1", [b"f", b"1"], 250, 1],
        [b"4-1", [b"f", b"4"], 0, 0],
        [b"5-1", [b"f", b"5"], 0, 0],
        [b"6-1", [b"f", b"6"], 0, 0],
    ]]]
    # 2-1 (idle 150) stays with c2; the claimed ones count one more delivery
    t = NOW + 250
    assert pel(h) == [(b"1-1", b"c3", t, 2), (b"2-1", b"c2", NOW + 100, 1),
                      (b"3-1", b"c3", t, 3), (b"4-1", b"c3", t, 1), (b"5-1", b"c3", t, 1),
                      (b"6-1", b"c3", t, 1)]
    effects = h.take_effects()
    assert effects[:3] == [[b"MULTI"], xclaim_effect("3-1", "c3", t, 3, "3-1"),
                           xclaim_effect("1-1", "c3", t, 2, "3-1")]
    # a history read ignores CLAIM: two elements, the consumer's own entries
    got = h.ok("XREADGROUP", "GROUP", "g", "c2", "CLAIM", "0", "STREAMS", "s", "0")
    assert got == [[b"s", [entry("2-1", "f", "2")]]]


def test_claim_count_takes_idle_entries_first(h):
    # The page's example, scaled down: 2 idle pending entries and 20 incoming;
    # COUNT 10 gives the 2 idle ones and 8 incoming ones.
    fill(h, 22)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    read_all(h, "c1", count=2)
    h.clock.advance(1000)
    got = claim(h, "c2", "500", "COUNT", "10")[0][1]
    assert ids(got) == [b"%d-1" % i for i in range(1, 11)]
    assert [e[3] for e in got] == [1, 1] + [0] * 8
    assert claim(h, "c2", "500", "COUNT", "10")[0][1][0][0] == b"11-1"
    # COUNT smaller than the idle entries: only claims
    h.clock.advance(1000)
    got = claim(h, "c3", "500", "COUNT", "1")[0][1]
    assert got == [[b"1-1", [b"f", b"1"], 1000, 2]]


def test_claim_noack_applies_to_new_entries_only(h):
    # "When used together with CLAIM, NOACK does not apply for retrieved
    # pending entries."  (Redis's "XREADGROUP CLAIM with NOACK and pending messages")
    fill(h, 2)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    read_all(h, "c1", count=1)
    h.clock.advance(100)
    got = claim(h, "c1", "50", "NOACK")[0][1]
    assert [(e[0], e[3]) for e in got] == [(b"1-1", 1), (b"2-1", 0)]
    assert pel(h) == [(b"1-1", b"c1", NOW + 100, 2)]
    h.clock.advance(100)
    assert ids(claim(h, "c1", "50", "NOACK")[0][1]) == [b"1-1"]


def test_claim_with_nothing_to_claim_or_read(h):
    fill(h, 1)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    read_all(h, "c1")
    # not idle long enough, nothing new: nil, as without CLAIM
    assert claim(h, "c2", "100") is NULL_ARRAY
    # a huge min-idle-time takes only the new entries
    h.ok("XADD", "s", "2-1", "f", "v")
    assert claim(h, "c2", "9223372036854775807") == [[b"s", [[b"2-1", [b"f", b"v"], 0, 0]]]]
    # Redis's "XREADGROUP CLAIM when pending messages get trimmed": nothing to
    # return; the dangling records go (choice: as XAUTOCLAIM does)
    h.clock.advance(1000)
    h.ok("XTRIM", "s", "MAXLEN", "0")
    h.take_effects()
    assert claim(h, "c2", "50") is NULL_ARRAY
    assert len(pel(h)) == 2 and h.take_effects() == []   # not served: nothing done
    h.ok("XADD", "s", "3-1", "f", "v")
    h.take_effects()
    assert claim(h, "c3", "50") == [[b"s", [[b"3-1", [b"f", b"v"], 0, 0]]]]
    assert [p[0] for p in pel(h)] == [b"3-1"]
    effects = h.take_effects()
    assert effects[1] == xclaim_effect("1-1", "c1", NOW, 1, "2-1")
    assert effects[2] == xclaim_effect("2-1", "c2", NOW, 1, "2-1")


def test_claim_after_setid_back_reports_both(h):
    # Redis's "XREADGROUP CLAIM after XGROUP SETID moves before pending messages"
    fill(h, 2)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    read_all(h, "c1")
    claim(h, "c2", "0")
    h.ok("XGROUP", "SETID", "s", "g", "0")
    h.clock.advance(100)
    got = claim(h, "c2", "50")[0][1]
    assert [(e[0], e[3]) for e in got] == [(b"1-1", 2), (b"2-1", 2), (b"1-1", 0), (b"2-1", 0)]
    h.clock.advance(100)
    got = claim(h, "c2", "50")[0][1]
    assert [(e[0], e[3]) for e in got] == [(b"1-1", 1), (b"2-1", 1)]


def test_claim_several_streams(h):
    # Redis's "XREADGROUP CLAIM with multiple streams"
    for key, start in (("a", 1), ("b", 3), ("c", 5)):
        fill(h, 2, key=key, start=start)
        h.ok("XGROUP", "CREATE", key, "g", "0")
    h.ok("XREADGROUP", "GROUP", "g", "c1", "COUNT", "1", "STREAMS", "a", "b", "c", ">", ">", ">")
    h.clock.advance(100)
    got = h.ok("XREADGROUP", "GROUP", "g", "c1", "CLAIM", "50",
               "STREAMS", "a", "b", "c", ">", ">", ">")
    assert [(k, [(e[0], e[3]) for e in es]) for k, es in got] == [
        (b"a", [(b"1-1", 1), (b"2-1", 0)]), (b"b", [(b"3-1", 1), (b"4-1", 0)]),
        (b"c", [(b"5-1", 1), (b"6-1", 0)])]


def test_claim_effects_replay_to_the_same_state():
    rng = random.Random(7)
    h = GroupHarness(node_entries=4)
    h.ok("XGROUP", "CREATE", "s", "g", "0", "MKSTREAM")
    h.ok("XGROUP", "CREATE", "s", "g2", "0")
    n = 1
    for _ in range(300):
        h.clock.advance(rng.randint(0, 40))
        op = rng.randrange(9)
        c = rng.choice(["a", "b", "c"])
        some = f"{rng.randint(1, n)}-1"
        if op < 3:
            h.ok("XADD", "s", f"{n}-1", "f", "v")
            n += 1
        elif op == 3:
            h.ok("XREADGROUP", "GROUP", rng.choice(["g", "g2"]), c, "COUNT", rng.randint(1, 4),
                 "CLAIM", rng.choice(["0", "30", "100"]),
                 *(["NOACK"] if rng.random() < 0.2 else []), "STREAMS", "s", ">")
        elif op == 4:
            h.ok("XNACK", "s", "g", rng.choice(["SILENT", "FAIL", "FATAL"]), "IDS", "2",
                 some, f"{rng.randint(1, n)}-1", *(["FORCE"] if rng.random() < 0.3 else []))
        elif op == 5:
            h.ok("XACKDEL", "s", rng.choice(["g", "g2"]),
                 rng.choice(["KEEPREF", "DELREF", "ACKED"]), "IDS", "1", some)
        elif op == 6:
            h.ok("XTRIM", "s", "MAXLEN", rng.choice(["~", "="]), rng.randint(0, 8),
                 rng.choice(["KEEPREF", "DELREF", "ACKED"]))
        elif op == 7:
            h.ok("XDELEX", "s", rng.choice(["KEEPREF", "DELREF", "ACKED"]), "IDS", "1", some)
        else:
            h.ok("XAUTOCLAIM", "s", "g", c, rng.choice(["0", "50"]), "0", "COUNT", 3)
    assert state(replay(h)) == state(h)


def test_blocked_claim_reader_wakes_on_xnack_and_new_entries(h):
    # Redis's "XNACK XREADGROUP BLOCK CLAIM wakes up on NACKed entries" and
    # "XREADGROUP CLAIM BLOCK wakes on new message before min-idle-time reached"
    fill(h, 2)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    read_all(h, "c1")
    reader = h.new_client()
    assert h("XREADGROUP", "GROUP", "g", "c2", "BLOCK", "5000", "CLAIM", "1000",
             "STREAMS", "s", ">", client=reader) is BLOCKED
    h.ok("XNACK", "s", "g", "FAIL", "IDS", "2", "1-1", "2-1")
    assert reader.inbox == [[[b"s", [[b"1-1", [b"f", b"1"], -1, 1],
                                     [b"2-1", [b"f", b"2"], -1, 1]]]]]
    assert h("XREADGROUP", "GROUP", "g", "c3", "BLOCK", "0", "CLAIM", "1000",
             "STREAMS", "s", ">", client=reader) is BLOCKED
    h.ok("XADD", "s", "3-1", "f", "v")
    assert reader.inbox[-1] == [[b"s", [[b"3-1", [b"f", b"v"], 0, 0]]]]


def test_blocked_claim_reader_wakes_when_an_entry_gets_idle_enough():
    # "the CLAIM min-idle-time condition may become true for some pending
    # entries during the BLOCK milliseconds period"
    timers = []

    class Timer:
        def __init__(self, delay, fn):
            self.delay, self.fn, self.cancelled = delay, fn, False
            timers.append(self)

        def cancel(self):
            self.cancelled = True

    h = GroupHarness()
    h.engine.schedule = Timer
    fill(h, 1)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    read_all(h, "c1")
    h.clock.advance(200)
    reader = h.new_client()
    assert h("XREADGROUP", "GROUP", "g", "c2", "BLOCK", "0", "CLAIM", "1000",
             "STREAMS", "s", ">", client=reader) is BLOCKED
    wake = [t for t in timers if not t.cancelled]
    assert len(wake) == 1 and wake[0].delay == pytest.approx(0.8)
    h.clock.advance(800)
    wake[0].fn()
    assert reader.inbox == [[[b"s", [[b"1-1", [b"f", b"1"], 1000, 1]]]]]
    assert pel(h) == [(b"1-1", b"c2", NOW + 1000, 2)]
    # inside MULTI nothing blocks, so nothing is armed
    count = len(timers)
    h.ok("MULTI")
    h.ok("XREADGROUP", "GROUP", "g", "c3", "BLOCK", "0", "CLAIM", "5000", "STREAMS", "s", ">")
    assert h("EXEC") == [NULL_ARRAY] and len(timers) == count


# -- MAXCOUNT --------------------------------------------------------------------------------
# https://redis.io/docs/latest/commands/xread/ and .../xreadgroup/: "The maximum
# number of entries to return in total across all streams"; COUNT stays per stream.

def test_xread_maxcount_across_several_keys(h):
    for key in ("s1", "s2", "s3"):
        fill(h, 3, key=key)
    got = h.ok("XREAD", "COUNT", "2", "MAXCOUNT", "3", "STREAMS", "s1", "s2", "s3", "0", "0", "0")
    assert [(k, ids(es)) for k, es in got] == [(b"s1", [b"1-1", b"2-1"]), (b"s2", [b"1-1"])]
    got = h.ok("XREAD", "MAXCOUNT", "5", "STREAMS", "s1", "s2", "s3", "0", "0", "0")
    assert [(k, len(es)) for k, es in got] == [(b"s1", 3), (b"s2", 2)]
    got = h.ok("XREAD", "MAXCOUNT", "100", "COUNT", "1", "STREAMS", "s1", "s2", "0", "0")
    assert [(k, len(es)) for k, es in got] == [(b"s1", 1), (b"s2", 1)]
    # a key with nothing new does not use the budget
    got = h.ok("XREAD", "MAXCOUNT", "2", "STREAMS", "s1", "s2", "3-1", "2-1")
    assert [(k, ids(es)) for k, es in got] == [(b"s2", [b"3-1"])]
    # choice: 0 or a negative MAXCOUNT is no limit, as for COUNT
    assert len(h.ok("XREAD", "MAXCOUNT", "0", "STREAMS", "s1", "0")[0][1]) == 3
    assert h.err("XREAD", "MAXCOUNT", "x", "STREAMS", "s1", "0") == errors.NOT_INTEGER
    # choice: MAXSIZE is not implemented (its unit is undocumented): a syntax error
    assert h.err("XREAD", "MAXSIZE", "100", "STREAMS", "s1", "0") == errors.SYNTAX


def test_xread_maxcount_when_blocked(h):
    reader = h.new_client()
    h.ok("XADD", "s", "1-1", "f", "v")
    assert h("XREAD", "MAXCOUNT", "2", "BLOCK", "0", "STREAMS", "s", "$", client=reader) is BLOCKED
    h.ok("MULTI")
    for i in range(2, 6):
        h.ok("XADD", "s", f"{i}-1", "f", "v")
    h.ok("EXEC")
    assert [ids(es) for _, es in reader.inbox[0]] == [[b"2-1", b"3-1"]]


def test_xreadgroup_maxcount(h):
    for key in ("a", "b"):
        fill(h, 3, key=key)
        h.ok("XGROUP", "CREATE", key, "g", "0")
    got = h.ok("XREADGROUP", "GROUP", "g", "c", "MAXCOUNT", "4", "STREAMS", "a", "b", ">", ">")
    assert [(k, ids(es)) for k, es in got] == [(b"a", [b"1-1", b"2-1", b"3-1"]), (b"b", [b"1-1"])]
    assert h.group("g", "b").last_id == StreamID(1, 1)   # only what was delivered
    # history reads count too
    got = h.ok("XREADGROUP", "GROUP", "g", "c", "MAXCOUNT", "2", "STREAMS", "a", "b", "0", "0")
    assert [(k, len(es)) for k, es in got] == [(b"a", 2)]
    # and with CLAIM the claimed entries use the budget first (the history
    # read above counted as a delivery of a's 1-1 and 2-1)
    h.clock.advance(100)
    got = h.ok("XREADGROUP", "GROUP", "g", "d", "MAXCOUNT", "5", "CLAIM", "50",
               "STREAMS", "a", "b", ">", ">")
    assert [(k, [(e[0], e[3]) for e in es]) for k, es in got] == [
        (b"a", [(b"1-1", 2), (b"2-1", 2), (b"3-1", 1)]),
        (b"b", [(b"1-1", 1), (b"2-1", 0)])]


def test_errors_change_nothing(h):
    fill(h, 2)
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    read_all(h, "c")
    before = state(h)
    h.take_effects()
    for argv in (["XNACK", "s", "g", "FAIL", "IDS", "2", "1-1", "bad"],
                 ["XACKDEL", "s", "g", "IDS", "2", "1-1", "bad"],
                 ["XDELEX", "s", "DELREF", "IDS", "2", "1-1", "bad"],
                 ["XTRIM", "s", "MAXLEN", "0", "DELREF", "ACKED"]):
        assert isinstance(h(*argv), ErrorReply), argv
    assert state(h) == before and h.take_effects() == []
    assert b(1) == b"1"
