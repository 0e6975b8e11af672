"""The Set type: encodings and their one-way conversions, invariants after
every mutation, random members, SSCAN's guarantee, the RDB encodings and the
AOF rewrite.

The listpack set encoding is Redis 7.2+'s, which 7.0.15 (the differential
oracle) lacks, so its rules are checked here against Redis's documentation:
https://redis.io/commands/object-encoding/ ("Sets can be encoded as ...
listpack, Redis >= 7.2, a space-efficient encoding used for small sets"),
with the limits of redis/redis commit 4e472a1a7 (the 7.2 change: "by default
up to 128 elements, max 64 bytes per element, new config
set-max-listpack-entries and set-max-listpack-value ... Possible conversions
when elements are added: intset -> listpack, listpack -> hashtable, intset
-> hashtable.  No conversion happens when elements are deleted").
"""

from __future__ import annotations

import random

import pytest

from tidelog.persistence.aof_rewrite import set_commands
from tidelog.rdb import set as rdb_set
from tidelog.rdb.format import RdbError, Reader
from tidelog.types import listpack
from tidelog.types.set import DEFAULT_LIMITS, HASHTABLE, INTSET, LISTPACK, Set, SetLimits, as_int64


def build(members, limits=DEFAULT_LIMITS) -> Set:
    s = Set()
    for m in members:
        s.add(m, limits)
        s.check(limits)
    return s


def b(*values) -> list[bytes]:
    return [str(v).encode() for v in values]


# -- integers as an intset holds them -------------------------------------------------
@pytest.mark.parametrize("text,value", [
    (b"0", 0), (b"-1", -1), (b"17", 17), (b"9223372036854775807", 2**63 - 1),
    (b"-9223372036854775808", -(2**63)),
])
def test_canonical_integers(text, value):
    assert as_int64(text) == value


@pytest.mark.parametrize("text", [
    b"", b"-", b"-0", b"01", b"+1", b" 1", b"1 ", b"1.0", b"9223372036854775808",
    b"-9223372036854775809", b"0x1", b"\xd9\xa1", b"00",
])
def test_not_intset_integers(text):
    assert as_int64(text) is None


# -- encodings ------------------------------------------------------------------------
def test_intset_keeps_numeric_order():
    s = build(b(5, -3, 100, 0, 5))
    assert s.object_encoding() == INTSET
    assert s.members() == b(-3, 0, 5, 100)
    assert b"5" in s and b"05" not in s and b"x" not in s


def test_intset_to_listpack_keeps_order_then_appends():
    s = build(b(3, 1, 2) + [b"a", b"0", b"b"])
    assert s.object_encoding() == LISTPACK
    assert s.members() == [b"1", b"2", b"3", b"a", b"0", b"b"]
    s.remove(b"2")
    s.check()
    assert s.members() == [b"1", b"3", b"a", b"0", b"b"]


def test_intset_overflow_goes_to_hashtable():
    s = build(b(*range(512)))
    assert s.object_encoding() == INTSET
    s.add(b"512")
    s.check()
    assert s.object_encoding() == HASHTABLE and len(s) == 513


def test_big_intset_plus_a_string_is_a_hashtable():
    s = build(b(*range(128)))
    s.add(b"a")                                     # 129 members: past the listpack limit
    assert s.object_encoding() == HASHTABLE
    s = build(b(*range(127)))
    s.add(b"a")
    assert s.object_encoding() == LISTPACK


def test_listpack_limits():
    s = build([b"a"] + b(*range(127)))
    assert s.object_encoding() == LISTPACK and len(s) == 128
    s.add(b"a")                                     # present: nothing changes
    assert s.object_encoding() == LISTPACK
    s.add(b"b")
    s.check()
    assert s.object_encoding() == HASHTABLE
    s = build([b"x" * 64])
    assert s.object_encoding() == LISTPACK
    s.add(b"y" * 65)
    assert s.object_encoding() == HASHTABLE


def test_configured_limits():
    lim = SetLimits(2, 3, 5)
    s = build(b(1, 2), lim)
    assert s.object_encoding() == INTSET
    s.add(b"3", lim)
    assert s.object_encoding() == HASHTABLE
    s = build([b"1", b"xxxxx", b"y"], lim)
    assert s.object_encoding() == LISTPACK
    s.add(b"zz", lim)
    assert s.object_encoding() == HASHTABLE
    s = build([b"xxxxx"], lim)
    s.add(b"xxxxxx", lim)
    assert s.object_encoding() == HASHTABLE
    # an intset whose longest number is longer than the listpack value limit
    s = build([b"123456"], lim)
    s.add(b"a", lim)
    assert s.object_encoding() == HASHTABLE


def test_no_conversion_back():
    s = build(b(*range(600)))
    for i in range(599):
        s.remove(str(i).encode())
        s.check()
    assert s.object_encoding() == HASHTABLE and s.members() == [b"599"]
    s = build([b"a"] * 1 + [b"x" * 100])
    s.remove(b"x" * 100)
    assert s.object_encoding() == HASHTABLE


def test_creation_follows_the_size_hint():
    # Redis 7.2+ creates SADD's set for its member count (duplicates included).
    assert Set.for_first(b"1", 512, DEFAULT_LIMITS).object_encoding() == INTSET
    assert Set.for_first(b"1", 513, DEFAULT_LIMITS).object_encoding() == HASHTABLE
    assert Set.for_first(b"a", 128, DEFAULT_LIMITS).object_encoding() == LISTPACK
    assert Set.for_first(b"a", 129, DEFAULT_LIMITS).object_encoding() == HASHTABLE
    assert Set.for_first(b"1", 200, SetLimits(100, 300, 64)).object_encoding() == LISTPACK
    s = build([b"a"])
    s.prepare(128, DEFAULT_LIMITS)
    assert s.object_encoding() == LISTPACK
    s.prepare(129, DEFAULT_LIMITS)
    assert s.object_encoding() == HASHTABLE


# -- random members, SSCAN ---------------------------------------------------------------
@pytest.mark.parametrize("members", [b(*range(10)), [b"a"] + b(*range(9)),
                                     [b"m%d" % i for i in range(300)]])
def test_random_members(members):
    s = build(members)
    rng = random.Random(7)
    assert s.random_member(rng) in members
    picked = s.random_distinct(len(members) - 1, rng)
    assert len(set(picked)) == len(members) - 1 and set(picked) <= set(members)
    repeats = s.random_with_repeats(50, rng)
    assert len(repeats) == 50 and set(repeats) <= set(members)


def test_sscan_small_encodings_answer_whole():
    assert build(b(3, 1)).scan(12345, 1) == (0, [b"1", b"3"])
    assert build([b"a", b"b"]).scan(0, 1) == (0, [b"a", b"b"])


def test_sscan_hashtable_returns_every_member_present_throughout():
    rng = random.Random(3)
    for _ in range(20):
        s = build([b"k%d" % i for i in range(400)])
        stable = {b"k%d" % i for i in range(0, 400, 3)}
        seen: list[bytes] = []
        cursor, calls, added = 0, 0, 0
        while True:
            cursor, found = s.scan(cursor, rng.randint(1, 40))
            seen += found
            calls += 1
            for _ in range(rng.randint(0, 10)):   # churn between calls
                victim = s.random_member(rng)
                if victim not in stable:
                    s.remove(victim)
                s.add(b"new%d" % added)
                added += 1
            s.check()
            if cursor == 0:
                break
        assert stable <= set(seen)
        assert calls < 400


# -- invariants under random mutation ------------------------------------------------------
def test_invariants_after_every_mutation():
    rng = random.Random(11)
    pool = b(*range(-5, 140)) + [b"s%d" % i for i in range(40)] + [b"x" * 70, b"", b"-0"]
    for lim in (DEFAULT_LIMITS, SetLimits(4, 6, 3), SetLimits(0, 0, 0)):
        for _ in range(30):
            s, model = Set(), set()
            order = []
            for _ in range(200):
                m = rng.choice(pool)
                if rng.random() < 0.6:
                    assert s.add(m, lim) == (m not in model)
                    if m not in model:
                        order.append(m)
                    model.add(m)
                else:
                    assert s.remove(m) == (m in model)
                    model.discard(m)
                    if m in order:
                        order.remove(m)
                s.check(lim)
                assert len(s) == len(model) and set(s.members()) == model
                if s.object_encoding() == INTSET:
                    assert s.members() == sorted(s.members(), key=int)
                    assert len(s) <= lim.intset_entries
                elif s.object_encoding() == LISTPACK:
                    assert len(s) <= lim.listpack_entries
                    assert all(len(x) <= lim.listpack_value for x in s.members())


# -- RDB ---------------------------------------------------------------------------------
def roundtrip(s: Set) -> Set:
    rdbtype, payload = rdb_set.write_set(s, compress=True)
    reader = Reader(payload)
    readers = {2: rdb_set.read_set, 11: rdb_set.read_intset, 20: rdb_set.read_set_listpack}
    loaded = readers[rdbtype](reader)
    assert reader.pos == len(payload)
    return loaded


@pytest.mark.parametrize("members,rdbtype,encoding", [
    (b(1, 2, 3), 11, INTSET),
    (b(-40000, 5), 11, INTSET),                        # 4-byte width
    (b(2**40, -1), 11, INTSET),                        # 8-byte width
    ([b"a", b"1", b"zz"], 2, LISTPACK),
    ([b"m%d" % i for i in range(300)], 2, HASHTABLE),
    (b(*range(1000)), 2, HASHTABLE),
])
def test_rdb_roundtrip(members, rdbtype, encoding):
    s = build(members)
    assert rdb_set.write_set(s, False)[0] == rdbtype
    loaded = roundtrip(s)
    loaded.check()
    assert loaded.object_encoding() == encoding
    assert sorted(loaded.members()) == sorted(s.members())


def test_intset_blob_layout():
    assert rdb_set.intset_blob([1, 2]) == (b"\x02\x00\x00\x00\x02\x00\x00\x00"
                                           b"\x01\x00\x02\x00")


def test_read_set_listpack():
    blob = listpack.pack([b"a", 7, b"bb", -3])
    s = rdb_set.read_set_listpack(Reader(bytes([len(blob)]) + blob))
    assert s.object_encoding() == LISTPACK
    assert s.members() == [b"a", b"7", b"bb", b"-3"]
    big = listpack.pack([b"m%d" % i for i in range(200)])
    payload = bytes((0x40 | len(big) >> 8, len(big) & 0xFF)) + big
    assert rdb_set.read_set_listpack(Reader(payload)).object_encoding() == HASHTABLE


@pytest.mark.parametrize("payload", [
    b"\x00",                                              # empty plain set
    b"\x02\x01a\x01a",                                    # duplicate member
    b"\x0c\x02\x00\x00\x00\x02\x00\x00\x00\x02\x00\x01\x00",  # intset out of order
    b"\x0c\x03\x00\x00\x00\x02\x00\x00\x00\x02\x00\x01\x00",  # bad width
])
def test_bad_rdb_sets_are_refused(payload):
    reader = {0x00: rdb_set.read_set, 0x02: rdb_set.read_set}.get(payload[0], rdb_set.read_intset)
    with pytest.raises(RdbError):
        reader(Reader(payload))


# -- AOF rewrite ----------------------------------------------------------------------------
def test_rewrite_batches_64_members():
    s = build([b"m%d" % i for i in range(150)])
    commands = list(set_commands(b"k", s))
    assert [len(c) - 2 for c in commands] == [64, 64, 22]
    assert all(c[:2] == [b"SADD", b"k"] for c in commands)
    replayed = Set()
    for c in commands:
        replayed.add_many(c[2:])
    assert sorted(replayed.members()) == sorted(s.members())
