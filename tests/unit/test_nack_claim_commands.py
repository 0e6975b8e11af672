"""Giving pending entries back and taking them: XNACK (Redis 8.8), XREADGROUP
... CLAIM (8.4), and MAXCOUNT on XREAD and XREADGROUP (8.10), driven through
Engine.execute with a FakeClock.

The authority (redis.io, then Redis's own tests, then the choices listed in
docs/compatibility.md) and the effect checks (replayed into a fresh engine
through an AOF client) are those of ``test_ref_policy_commands.py``.
"""

from __future__ import annotations

import random

import pytest

import tidelog.commands  # noqa: F401  (registers the commands before the engine is built)
from tests.support.engine_harness import (
    LLONG_MAX,
    NOW,
    GroupHarness,
    b,
    entry,
    fill,
    ids,
    pel,
    read_all,
    replay,
    state,
    xclaim_effect,
)
from tidelog import errors
from tidelog.engine import BLOCKED
from tidelog.ids import StreamID
from tidelog.resp.replies import NULL_ARRAY, ErrorReply


@pytest.fixture
def h():
    return GroupHarness()


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
    # A positive integer, at least COUNT (the texts predis's XREAD tests assert
    # against Redis 8.10: tests/Predis/Command/Redis/XREAD_NEW_Test.php).
    for bad in ("0", "-1", "x", "1.5"):
        assert h.err("XREAD", "MAXCOUNT", bad, "STREAMS", "s1", "0") == \
            errors.MAXCOUNT_NOT_POSITIVE
    assert h.err("XREAD", "COUNT", "2", "MAXCOUNT", "1", "STREAMS", "s1", "0") == \
        errors.MAXCOUNT_BELOW_COUNT
    assert h.err("XREAD", "MAXCOUNT", "1", "COUNT", "2", "STREAMS", "s1", "0") == \
        errors.MAXCOUNT_BELOW_COUNT  # options in any order
    assert h.err("XREADGROUP", "GROUP", "g", "c", "COUNT", "3", "MAXCOUNT", "2",
                 "STREAMS", "s1", ">") == errors.MAXCOUNT_BELOW_COUNT
    assert len(h.ok("XREAD", "COUNT", "0", "MAXCOUNT", "1", "STREAMS", "s1", "0")[0][1]) == 1


# -- MAXSIZE --------------------------------------------------------------------------------
# https://redis.io/docs/latest/commands/xread/ (Redis 8.10): a soft cap on the
# reply's bytes; the first entry is always returned; once passed, no more
# entries and no more keys.  The cases are predis's (XREAD_NEW_Test.php), run
# there against Redis 8.10.

def test_xread_maxsize(h):
    h.ok("XADD", "stream1", "1-0", "field", "value1")
    h.ok("XADD", "stream1", "2-0", "field", "value2")
    h.ok("XADD", "stream2", "1-0", "field", "value3")
    # the first entry even when it alone passes the budget; the rest left out
    assert h.ok("XREAD", "MAXSIZE", "1", "STREAMS", "stream1", "stream2", "0-0", "0-0") == [
        [b"stream1", [[b"1-0", [b"field", b"value1"]]]]]
    got = h.ok("XREAD", "MAXSIZE", "1048576", "STREAMS", "stream1", "stream2", "0-0", "0-0")
    assert [(k, ids(es)) for k, es in got] == [(b"stream1", [b"1-0", b"2-0"]),
                                               (b"stream2", [b"1-0"])]
    got = h.ok("XREAD", "MAXCOUNT", "2", "MAXSIZE", "1048576",
               "STREAMS", "stream1", "stream2", "0-0", "0-0")
    assert [(k, ids(es)) for k, es in got] == [(b"stream1", [b"1-0", b"2-0"])]
    # the budget counts bytes: each entry here is 40 bytes in RESP2, the key's
    # header (*2 $stream1 *2) 21, so 21 + 40 + 1 takes a second entry and 21 + 40
    # does not
    assert [ids(es) for _, es in h.ok("XREAD", "MAXSIZE", "62", "STREAMS", "stream1", "0")] \
        == [[b"1-0", b"2-0"]]
    assert [ids(es) for _, es in h.ok("XREAD", "MAXSIZE", "61", "STREAMS", "stream1", "0")] \
        == [[b"1-0"]]
    # an empty reply stays empty
    h.ok("XDEL", "stream2", "1-0")
    assert h("XREAD", "MAXCOUNT", "2", "MAXSIZE", "1024", "STREAMS", "stream2", "0-0") \
        is NULL_ARRAY
    for bad in ("0", "-5", "x"):
        assert h.err("XREAD", "MAXSIZE", bad, "STREAMS", "stream1", "0") == \
            errors.MAXSIZE_NOT_POSITIVE


def test_xreadgroup_maxsize_delivers_only_what_it_returns(h):
    for key in ("a", "b"):
        fill(h, 3, key=key)
        h.ok("XGROUP", "CREATE", key, "g", "0")
    got = h.ok("XREADGROUP", "GROUP", "g", "c", "MAXSIZE", "1", "STREAMS", "a", "b", ">", ">")
    assert [(k, ids(es)) for k, es in got] == [(b"a", [b"1-1"])]
    assert h.group("g", "a").last_id == StreamID(1, 1)
    assert len(h.group("g", "a").pel) == 1
    assert h.group("g", "b").consumer(b"c") is None  # b was not served
    # a history read: only the entries returned count as delivered again
    h.ok("XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", ">")
    before = {e.id: e.delivery_count for e in h.group("g", "a").pel.values()}
    got = h.ok("XREADGROUP", "GROUP", "g", "c", "MAXSIZE", "1", "STREAMS", "a", "0")
    assert [(k, ids(es)) for k, es in got] == [(b"a", [b"1-1"])]
    after = {e.id: e.delivery_count for e in h.group("g", "a").pel.values()}
    assert after == {**before, StreamID(1, 1): before[StreamID(1, 1)] + 1}


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
