"""The generic key commands on an engine with a fake clock: COPY's deep
copies (each value type's ``copy()``), DUMP/RESTORE round trips through the
persistence layer's one encoder, SWAPDB's expiry and WATCH bookkeeping,
RANDOMKEY, SORT's hook for ordered types and STORE, the strtod SORT uses,
and random COPY/MOVE/SWAPDB/RENAME/DEL runs against a model of dicts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from tests.support.engine_harness import NOW, Harness
from tidelog.commands.keys.sort import strtod_whole
from tidelog.rdb import values as rdb
from tidelog.types.hash import Hash
from tidelog.types.set import Set


def effects_of(h: Harness, *argv) -> list[list[bytes]]:
    h.take_effects()
    h(*argv)
    return h.take_effects()


# -- copy() -------------------------------------------------------------------------------
@pytest.mark.parametrize("members", [["1", "2", "3"], ["a", "b"], [f"m{i}" for i in range(300)]])
def test_set_copy_is_independent(members):
    h = Harness()
    h.ok("SADD", "s", *members)
    assert h("COPY", "s", "c") == 1
    original, copied = h.engine.dbs[0].data[b"s"], h.engine.dbs[0].data[b"c"]
    assert copied is not original
    assert copied.members() == original.members()
    assert copied.object_encoding() == original.object_encoding()
    h.ok("SADD", "c", "new")
    h.ok("SREM", "c", members[0])
    assert sorted(original.members()) == sorted(m.encode() for m in members)
    assert b"new" in copied and members[0].encode() not in copied


def test_hash_copy_is_independent():
    h = Harness()
    h.ok("HSET", "h", "a", "1", "b", "2")
    h.ok("COPY", "h", "c")
    h.ok("HSET", "c", "a", "changed", "z", "9")
    assert h("HGETALL", "h").items == [(b"a", b"1"), (b"b", b"2")]
    assert h("HGETALL", "c").items == [(b"a", b"changed"), (b"b", b"2"), (b"z", b"9")]
    assert isinstance(h.engine.dbs[0].data[b"c"], Hash)


def test_stream_copy_is_independent():
    h = Harness(node_entries=2)
    for i in range(1, 6):
        h.ok("XADD", "s", f"{i}-1", "f", str(i))
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    h.ok("XREADGROUP", "GROUP", "g", "alice", "COUNT", "3", "STREAMS", "s", ">")
    assert h("COPY", "s", "c", "DB", "1") == 1
    h.ok("SELECT", "1")
    h.ok("XACK", "c", "g", "1-1", "2-1")
    h.ok("XADD", "c", "9-1", "f", "v")
    h.ok("XDEL", "c", "3-1")
    h.ok("XGROUP", "CREATECONSUMER", "c", "g", "bob")
    copied = h.engine.dbs[1].data[b"c"]
    copied.check()
    h.ok("SELECT", "0")
    original = h.stream("s")
    assert original.length == 5 and h("XPENDING", "s", "g")[0] == 3
    assert [dict(c.items)[b"name"] for c in h("XINFO", "CONSUMERS", "s", "g")] == [b"alice"]
    assert copied.length == 5 and len(copied.groups[b"g"].pel) == 1


# -- DUMP / RESTORE -----------------------------------------------------------------------
members = st.lists(st.one_of(st.integers(-2**63, 2**63 - 1).map(lambda i: str(i).encode()),
                             st.binary(max_size=70)), min_size=1, max_size=200, unique=True)


@settings(max_examples=40, deadline=None)
@given(members=members, compress=st.booleans())
def test_set_payload_round_trip(members, compress):
    h = Harness()
    h.ok("SADD", "s", *members)
    value = h.engine.dbs[0].data[b"s"]
    back = rdb.value_from_payload(rdb.value_payload(value, compress=compress))
    assert isinstance(back, Set)
    assert sorted(back.members()) == sorted(members)


@settings(max_examples=40, deadline=None)
@given(pairs=st.dictionaries(st.binary(max_size=30), st.binary(max_size=100), min_size=1,
                             max_size=200),
       text=st.binary(max_size=300))
def test_hash_and_string_payload_round_trip(pairs, text):
    h = Harness()
    h.ok("HSET", "h", *[x for kv in pairs.items() for x in kv])
    back = rdb.value_from_payload(rdb.value_payload(h.engine.dbs[0].data[b"h"]))
    assert back.map == pairs
    assert rdb.value_from_payload(rdb.value_payload(text)) == text


def test_dump_restore_through_commands():
    h = Harness()
    h.ok("XADD", "s", "1-1", "f", "v")
    h.ok("XGROUP", "CREATE", "s", "g", "0")
    payload = h("DUMP", "s")
    assert payload.endswith(rdb.value_payload(h.stream("s"))[-10:])  # same bytes, same CRC
    assert h("RESTORE", "s", "0", payload) .message.startswith(b"BUSYKEY")
    h.ok("RESTORE", "t", "0", payload, "IDLETIME", "100")
    assert h("OBJECT", "IDLETIME", "t") == 100
    assert dict(h("XINFO", "GROUPS", "t")[0].items)[b"name"] == b"g"
    # a relative TTL goes out absolute, with ABSTTL
    assert effects_of(h, "RESTORE", "u", "5000", payload) == [
        [b"RESTORE", b"u", str(NOW + 5000).encode(), payload, b"ABSTTL"]]
    assert h("PTTL", "u") == 5000
    # a deadline past: nothing restored; with REPLACE of a key, a DEL goes out
    assert effects_of(h, "RESTORE", "v", "1", payload, "ABSTTL") == []
    assert h("EXISTS", "v") == 0
    assert effects_of(h, "RESTORE", "u", "1", payload, "ABSTTL", "REPLACE") == [[b"DEL", b"u"]]
    assert h("EXISTS", "u") == 0


def test_payload_newer_than_we_read_is_refused():
    body = b"\x00\x03abc" + (rdb.MAX_READ_VERSION + 1).to_bytes(2, "little")
    payload = body + rdb._U64.pack(rdb.crc64(body))
    with pytest.raises(rdb.PayloadError) as info:
        rdb.value_from_payload(payload)
    assert info.value.version_or_checksum


# -- SWAPDB ---------------------------------------------------------------------------------
def test_swapdb_moves_deadlines_and_keeps_watchers():
    h = Harness()
    h.ok("SET", "k", "v", "PX", "1000")
    watcher = h.new_client()
    h.ok("WATCH", "k", client=watcher)
    h.ok("SWAPDB", "0", "1")
    db0, db1 = h.engine.dbs[0], h.engine.dbs[1]
    assert b"k" in db0.watchers and watcher.dirty_cas
    assert db1.index == 1 and db0.index == 0
    h.clock.advance(2000)
    assert db1.expire_cycle() == 1
    assert len(db1) == 0


def test_swapdb_same_index_propagates_and_changes_nothing():
    h = Harness()
    h.ok("SET", "k", "v")
    assert effects_of(h, "SWAPDB", "3", "3") == [[b"SWAPDB", b"3", b"3"]]
    assert h("GET", "k") == b"v"


# -- RANDOMKEY ------------------------------------------------------------------------------
def test_randomkey():
    h = Harness()
    assert h("RANDOMKEY") is None
    for i in range(200):
        h.ok("SET", f"k{i}", "v")
    seen = {h("RANDOMKEY") for _ in range(300)}
    assert len(seen) > 50 and all(key.startswith(b"k") for key in seen)
    for i in range(199):
        h.ok("DEL", f"k{i}")
    assert h("RANDOMKEY") == b"k199"
    h.ok("PEXPIRE", "k199", "10")
    h.clock.advance(20)
    assert h("RANDOMKEY") is None


# -- SORT over lists, and STORE --------------------------------------------------------------
def test_sort_of_a_list_and_store():
    h = Harness()
    h.ok("RPUSH", "l", "3", "1", "2", "10")
    assert h("SORT", "l") == [b"1", b"2", b"3", b"10"]
    assert h("SORT", "l", "BY", "nosort") == [b"3", b"1", b"2", b"10"]
    assert h("SORT", "l", "BY", "nosort", "DESC", "LIMIT", "0", "2") == [b"10", b"2"]
    assert h("SORT", "l", "ALPHA", "DESC") == [b"3", b"2", b"10", b"1"]
    assert effects_of(h, "SORT", "l", "STORE", "dst", "GET", "#", "GET", "nothing_*") == [
        [b"SORT", b"l", b"STORE", b"dst", b"GET", b"#", b"GET", b"nothing_*"]]
    assert h("LRANGE", "dst", "0", "-1") == [b"1", b"", b"2", b"", b"3", b"", b"10", b""]
    assert h("TYPE", "dst").text == b"list"
    h.ok("SADD", "s", "b", "a")
    assert h("SORT", "s", "BY", "nosort", "STORE", "dst") == 2   # forced ALPHA
    assert h("LRANGE", "dst", "0", "-1") == [b"a", b"b"]



@pytest.mark.parametrize("text,value", [
    (b"", 0.0), (b"  ", 0.0), (b"1", 1.0), (b" -2.5", -2.5), (b"1e3", 1000.0),
    (b"0x10", 16.0), (b"inf", float("inf")), (b"-Infinity", float("-inf")), (b".5", 0.5),
    (b"5.", 5.0), (b"1e-300", 1e-300),
    (b"1e400", None), (b"1e-400", None), (b"nan", None), (b"1 ", None), (b"abc", None),
    (b"1_0", None), (b"0x", None), (b"+", None), (b"1e", None),
])
def test_strtod_whole(text, value):
    assert strtod_whole(text) == value


# -- random key moves against a model -----------------------------------------------------
KEYS = st.sampled_from([b"a", b"b", b"c"])
DBS = st.integers(0, 2)


class KeyMoves(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.h = Harness()
        self.model: list[dict[bytes, object]] = [{}, {}, {}]
        self.db = 0

    def _value(self, db: int, key: bytes):
        value = self.h.engine.dbs[db].data.get(key)
        if value is None or type(value) is bytes:
            return value
        return frozenset(value.members())

    @rule(db=DBS)
    def select(self, db):
        self.h.ok("SELECT", db)
        self.db = db

    @rule(key=KEYS, value=st.binary(max_size=3))
    def set_string(self, key, value):
        self.h.ok("SET", key, value)
        self.model[self.db][key] = value

    @rule(key=KEYS, members=st.lists(st.sampled_from([b"1", b"x", b"y"]), min_size=1))
    def sadd(self, key, members):
        current = self.model[self.db].get(key)
        if current is not None and type(current) is bytes:
            return
        self.h.ok("SADD", key, *members)
        self.model[self.db][key] = (current or frozenset()) | frozenset(members)

    @rule(src=KEYS, dst=KEYS, db=DBS, replace=st.booleans())
    def copy(self, src, dst, db, replace):
        argv = ["COPY", src, dst, "DB", db] + (["REPLACE"] if replace else [])
        reply = self.h(*argv)
        here, there = self.model[self.db], self.model[db]
        if db == self.db and src == dst:
            assert reply.message.startswith(b"ERR source")
            return
        expect = int(src in here and (replace or dst not in there))
        assert reply == expect
        if expect:
            there[dst] = here[src]

    @rule(key=KEYS, db=DBS)
    def move(self, key, db):
        reply = self.h("MOVE", key, db)
        if db == self.db:
            assert reply.message.startswith(b"ERR source")
            return
        here, there = self.model[self.db], self.model[db]
        expect = int(key in here and key not in there)
        assert reply == expect
        if expect:
            there[key] = here.pop(key)

    @rule(a=DBS, b=DBS)
    def swapdb(self, a, b):
        self.h.ok("SWAPDB", a, b)
        self.model[a], self.model[b] = self.model[b], self.model[a]

    @rule(src=KEYS, dst=KEYS)
    def rename(self, src, dst):
        reply = self.h("RENAME", src, dst)
        here = self.model[self.db]
        if src not in here:
            assert reply.message == b"ERR no such key"
            return
        here[dst] = here.pop(src)

    @rule(key=KEYS)
    def delete(self, key):
        assert self.h("DEL", key) == int(self.model[self.db].pop(key, None) is not None)

    @invariant()
    def same(self):
        for db, model in enumerate(self.model):
            data = self.h.engine.dbs[db].data
            assert set(data) == set(model)
            for key, value in model.items():
                assert self._value(db, key) == value
            assert len(self.h.engine.dbs[db].key_index) == len(data)


TestKeyMoves = KeyMoves.TestCase
TestKeyMoves.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)


def test_touch_sets_the_access_time_even_under_no_touch():
    h = Harness()
    h.ok("SET", "k", "v")
    h.clock.advance(10_000)
    h.ok("CLIENT", "NO-TOUCH", "ON")
    h.ok("GET", "k")
    assert h("OBJECT", "IDLETIME", "k") == 10
    assert h("TOUCH", "k", "missing") == 1
    assert h("OBJECT", "IDLETIME", "k") == 0


def test_dump_restore_of_a_hash_with_field_ttls():
    """Field TTLs exist only from RDB 12 on (Redis 7.4): such a payload says
    version 12 whatever rdb-version is, and RESTORE brings the TTLs back."""
    h = Harness()
    h.ok("HSET", "h", "f", "v", "g", "w")
    assert h("HPEXPIRE", "h", "100000", "FIELDS", "1", "f") == [1]
    payload = h("DUMP", "h")
    assert payload[-10:-8] == (12).to_bytes(2, "little")
    h.ok("RESTORE", "h2", "0", payload)
    assert h("HPTTL", "h2", "FIELDS", "2", "f", "g") == [100000, -1]
    assert h("HGETALL", "h2").items == [(b"f", b"v"), (b"g", b"w")]
    h.ok("HSET", "plain", "a", "1")
    assert h("DUMP", "plain")[-10:-8] == (10).to_bytes(2, "little")
