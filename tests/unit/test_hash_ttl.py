"""Hash field expiry (Redis 7.4's HEXPIRE family, 8.0's HGETEX/HSETEX).

redis-server 7.0.15 has none of these commands, so there is no differential
oracle: the replies follow the command pages and Redis's own test suite
(tests/unit/type/hash-field-expire.tcl), and a state machine checks the
engine against a plain model with a fake clock.

Pages:
  https://redis.io/docs/latest/commands/hexpire/
  https://redis.io/docs/latest/commands/hpexpire/
  https://redis.io/docs/latest/commands/hexpireat/
  https://redis.io/docs/latest/commands/hpexpireat/
  https://redis.io/docs/latest/commands/httl/
  https://redis.io/docs/latest/commands/hpttl/
  https://redis.io/docs/latest/commands/hexpiretime/
  https://redis.io/docs/latest/commands/hpexpiretime/
  https://redis.io/docs/latest/commands/hpersist/
  https://redis.io/docs/latest/commands/hgetex/
  https://redis.io/docs/latest/commands/hsetex/
"""

from __future__ import annotations

import struct

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from tests.support.engine_harness import NOW, Harness
from tidelog.persistence import rdb
from tidelog.persistence.aof_rewrite import hash_commands
from tidelog.rdb import hash as rdb_hash
from tidelog.rdb.format import Reader, length_bytes, string_bytes
from tidelog.resp.replies import Map
from tidelog.types import listpack
from tidelog.types.hash import Hash


def _fx(hv: Harness) -> list[list[bytes]]:
    """The effects since the last call, without the MULTI/EXEC the engine
    wraps around a command's several effects."""
    return [argv for argv in hv.take_effects() if argv not in ([b"MULTI"], [b"EXEC"])]


def _check(hv: Harness) -> None:
    """The invariants of every hash in db 0."""
    for key, value in hv.engine.dbs[0].data.items():
        if type(value) is Hash:
            assert len(value), key
            value.check()
            if value.ttl:
                known = hv.engine.dbs[0].field_keys.get(key)
                assert known is not None and known <= min(value.ttl.values()), key


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["set", "hset", "hincr", "persist", "del", "pop"]),
                          st.integers(0, 59), st.integers(0, 50)), max_size=200))
def test_hash_ttl_bookkeeping(ops):
    """The type alone: TTLs of present fields only, a heap entry for each,
    stale entries compacted, pop_expired in deadline order; check() after
    every mutation."""
    h = Hash({b"f%d" % i: b"v" for i in range(60)})
    model: dict[bytes, int] = {}
    for op, i, when in ops:
        field = b"f%d" % i
        if op == "set" and field in h:
            h.set_ttl(field, when)
            model[field] = when
        elif op in ("hset", "hincr"):
            h.set(field, b"1", keep_ttl=op == "hincr")
            if op == "hset":
                model.pop(field, None)
        elif op == "persist":
            assert h.persist(field) == (model.pop(field, None) is not None)
        elif op == "del":
            h.delete(field)
            model.pop(field, None)
        elif op == "pop":
            gone = h.pop_expired(when, budget=5)
            due = sorted((w, f) for f, w in model.items() if w <= when)[:5]
            assert sorted(gone) == sorted(f for _, f in due)
            for f in gone:
                del model[f]
        h.check()
        assert h.ttl == model
        assert h.next_deadline() == (min(model.values()) if model else None)


def test_hexpire_page_example():
    # https://redis.io/docs/latest/commands/hexpire/ (the example session)
    hv = Harness()
    assert hv("HEXPIRE", "no-key", 20, "NX", "FIELDS", 2, "field1", "field2") == [-2, -2]
    hv("HSET", "mykey", "field1", "hello", "field2", "world")
    assert hv("HEXPIRE", "mykey", 10, "FIELDS", 3, "field1", "field2", "field3") == [1, 1, -2]
    assert hv("HTTL", "mykey", "FIELDS", 2, "field1", "field2") == [10, 10]
    _check(hv)


def test_conditions_as_redis_tests():
    # hash-field-expire.tcl: the NX, XX, GT and LT cases
    hv = Harness()
    hv("HSET", "h", "f1", "v", "f2", "v", "f3", "v")
    assert hv("HPEXPIRE", "h", 1000, "NX", "FIELDS", 1, "f1") == [1]
    assert hv("HPEXPIRE", "h", 1000, "NX", "FIELDS", 2, "f1", "f2") == [0, 1]
    assert hv("HPEXPIRE", "h", 1000, "XX", "FIELDS", 2, "f1", "f3") == [1, 0]
    hv("DEL", "h")
    hv("HSET", "h", "f1", "v", "f2", "v")
    hv("HPEXPIRE", "h", 1000, "NX", "FIELDS", 1, "f1")
    hv("HPEXPIRE", "h", 2000, "NX", "FIELDS", 1, "f2")
    assert hv("HPEXPIRE", "h", 1500, "GT", "FIELDS", 2, "f1", "f2") == [1, 0]
    assert hv("HPEXPIRE", "h", 1200, "LT", "FIELDS", 2, "f1", "f2") == [1, 1]
    hv("HSET", "h", "f3", "v")  # no TTL: GT fails (infinite), LT succeeds
    assert hv("HPEXPIRE", "h", 5000, "GT", "FIELDS", 1, "f3") == [0]
    assert hv("HPEXPIRE", "h", 5000, "LT", "FIELDS", 1, "f3") == [1]
    _check(hv)


def test_past_time_deletes_and_condition_comes_first():
    # hash-field-expire.tcl "HPEXPIREAT - field not exists or TTL is in the past"
    hv = Harness()
    hv("HSET", "h", "f1", "v1", "f2", "v2", "f4", "v4")
    hv("HEXPIRE", "h", 1000, "NX", "FIELDS", 1, "f4")
    _fx(hv)
    assert hv("HPEXPIREAT", "h", NOW - 1000, "NX", "FIELDS", 4, "f1", "f2", "f3", "f4") == \
        [2, 2, -2, 0]
    assert hv("HEXISTS", "h", "f1") == 0
    assert _fx(hv) == [[b"HDEL", b"h", b"f1"], [b"HDEL", b"h", b"f2"]]
    assert hv("HEXPIRE", "h", 0, "FIELDS", 1, "f4") == [2]  # 0 is "now": deleted
    assert hv("EXISTS", "h") == 0  # the last field took the key with it
    _check(hv)


def test_errors():
    hv = Harness()
    hv("HSET", "h", "f", "v")
    hv("SET", "s", "x")
    E = hv.err
    assert E("HEXPIRE", "s", 10, "FIELDS", 1, "f").startswith(b"WRONGTYPE")
    assert E("HEXPIRE", "h", "x", "FIELDS", 1, "f") == b"ERR value is not an integer or out of range"
    assert E("HEXPIRE", "h", -1, "FIELDS", 1, "f") == b"ERR invalid expire time, must be >= 0"
    assert E("HPEXPIRE", "h", 1 << 48, "FIELDS", 1, "f") == \
        b"ERR invalid expire time in 'hpexpire' command"
    assert E("HEXPIREAT", "h", 1 << 40, "FIELDS", 1, "f") == \
        b"ERR invalid expire time in 'hexpireat' command"
    assert E("HEXPIRE", "h", 10, "NX", "XX", "FIELDS", 1, "f") == \
        b"ERR Mandatory argument FIELDS is missing or not at the right position"
    assert E("HEXPIRE", "h", 10, "FIELDS", 0, "f") == \
        b"ERR Parameter `numFields` should be greater than 0"
    assert E("HEXPIRE", "h", 10, "FIELDS", 2, "f") == \
        b"ERR The `numfields` parameter must match the number of arguments"
    assert E("HEXPIRE", "h", 10, "FIELDS").startswith(b"ERR wrong number of arguments")
    for cmd in ("HTTL", "HPTTL", "HEXPIRETIME", "HPEXPIRETIME", "HPERSIST"):
        assert E(cmd, "h", "FIELDS", 0, "f") == b"ERR Number of fields must be a positive integer"
        assert E(cmd, "h", "FIELDS", 1, "f", "g") == \
            b"ERR The `numfields` parameter must match the number of arguments"
        assert E(cmd, "h", "FIELD", 1, "f") == \
            b"ERR Mandatory argument FIELDS is missing or not at the right position"
        assert E(cmd, "s", "FIELDS", 1, "f").startswith(b"WRONGTYPE")
    assert E("HSETEX", "h", "FNX", "FXX", "FIELDS", 1, "f", "v") == \
        b"ERR Only one of FXX or FNX arguments can be specified"
    assert E("HSETEX", "h", "EX", 1, "KEEPTTL", "FIELDS", 1, "f", "v") == \
        b"ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified"
    # HGETEX takes one option, right after the key (t_hash.c's hgetexCommand)
    assert E("HGETEX", "h", "EX", 1, "PERSIST", "FIELDS", 1, "f") == \
        b"ERR Mandatory argument FIELDS is missing or not at the right position"
    assert E("HGETEX", "h", "EX", -1, "FIELDS", 1, "f") == b"ERR invalid expire time, must be >= 0"
    # HSETEX parses its options before it looks at the key (hsetexParseArgs)
    assert E("HSETEX", "s", "FIELDS", 0, "f", "v") == b"ERR invalid number of fields"
    assert E("HSETEX", "s", "FIELDS", 2, "f", "v").startswith(b"ERR wrong number of arguments")
    assert E("HSETEX", "s", "NOPE", "FIELDS", 1, "f", "v") == b"ERR unknown argument: NOPE"
    assert E("HSETEX", "s", "FIELDS", 1, "f", "v").startswith(b"WRONGTYPE")
    assert _fx(hv) == [[b"HSET", b"h", b"f", b"v"], [b"SET", b"s", b"x"]]


def test_ttl_readers_and_persist():
    hv = Harness()
    assert hv("HTTL", "nokey", "FIELDS", 1, "f") == [-2]
    hv("HSET", "h", "a", "1", "b", "2")
    hv("HPEXPIRE", "h", 1500, "FIELDS", 1, "a")
    assert hv("HTTL", "h", "FIELDS", 3, "a", "b", "c") == [2, -1, -2]  # rounded up
    assert hv("HPTTL", "h", "FIELDS", 1, "a") == [1500]
    assert hv("HEXPIRETIME", "h", "FIELDS", 1, "a") == [(NOW + 1500 + 999) // 1000]
    assert hv("HPEXPIRETIME", "h", "FIELDS", 2, "a", "b") == [NOW + 1500, -1]
    _fx(hv)
    assert hv("HPERSIST", "h", "FIELDS", 3, "a", "b", "c") == [1, -1, -2]
    assert _fx(hv) == [[b"HPERSIST", b"h", b"FIELDS", b"3", b"a", b"b", b"c"]]
    assert hv("HPERSIST", "h", "FIELDS", 1, "a") == [-1]
    assert _fx(hv) == []  # nothing changed, nothing propagated
    assert hv("OBJECT", "ENCODING", "h") == b"listpackex"  # stays, as in Redis
    _check(hv)


def test_propagated_as_hpexpireat_without_failed_fields():
    hv = Harness()
    hv("HSET", "h", "a", "1", "b", "2")
    hv("HEXPIRE", "h", 100, "FIELDS", 1, "b")
    _fx(hv)
    assert hv("HEXPIRE", "h", 10, "NX", "FIELDS", 3, "a", "b", "zz") == [1, 0, -2]
    assert _fx(hv) == [[b"HPEXPIREAT", b"h", b"%d" % (NOW + 10000), b"NX",
                                  b"FIELDS", b"1", b"a"]]
    assert hv("HEXPIRE", "h", 10, "NX", "FIELDS", 1, "a") == [0]
    assert _fx(hv) == []


def test_lazy_and_active_expiry():
    hv = Harness()
    hv("HSET", "h", "a", "1", "b", "2", "c", "3")
    hv("HPEXPIRE", "h", 100, "FIELDS", 2, "a", "b")
    _fx(hv)
    hv.clock.advance(100)
    # lazy: every read sees only live fields, and HLEN counts only those
    assert hv("HLEN", "h") == 1
    assert hv("HGETALL", "h") == Map([(b"c", b"3")])
    assert hv("HEXISTS", "h", "a") == 0 and hv("HGET", "h", "b") is None
    assert hv("HRANDFIELD", "h", -5) == [b"c"] * 5
    assert hv("HSCAN", "h", 0) == [b"0", [b"c", b"3"]]
    assert _fx(hv) == [[b"HDEL", b"h", b"a"], [b"HDEL", b"h", b"b"]]
    assert hv.engine.stats["expired_subkeys"] == 2
    # active: the cron removes due fields of untouched hashes, and the key
    # with its last field
    hv("HSET", "g", *[x for i in range(50) for x in (f"f{i}", "v")])
    hv("HPEXPIRE", "g", 10, "FIELDS", 50, *[f"f{i}" for i in range(50)])
    _fx(hv)
    hv.clock.advance(10)
    db = hv.engine.dbs[0]
    assert db.field_expire_cycle(budget=20) == 20  # bounded
    assert len(db.data[b"g"]) == 30
    _check(hv)
    hv.engine.cron()
    hv.engine.cron()
    assert b"g" not in db.data
    effects = _fx(hv)
    assert sorted(effects) == sorted([b"HDEL", b"g", b"f%d" % i] for i in range(50))
    _check(hv)


def test_writes_and_ttls():
    hv = Harness()
    hv("HSET", "h", "a", "1", "b", "2", "c", "x")
    hv("HEXPIRE", "h", 100, "FIELDS", 3, "a", "b", "c")
    hv("HSET", "h", "a", "9")                 # HSET removes the TTL
    hv("HINCRBY", "h", "b", 5)                # HINCRBY keeps it
    _fx(hv)
    hv("HINCRBYFLOAT", "h", "b", "0.5")       # so does HINCRBYFLOAT, and says so
    assert _fx(hv) == [[b"HSET", b"h", b"b", b"7.5"],
                                 [b"HPEXPIREAT", b"h", b"%d" % (NOW + 100000),
                                  b"FIELDS", b"1", b"b"]]
    assert hv("HTTL", "h", "FIELDS", 3, "a", "b", "c") == [-1, 100, 100]
    hv("HDEL", "h", "c")
    hv("HSET", "h", "c", "new")               # a re-created field has no TTL
    assert hv("HTTL", "h", "FIELDS", 1, "c") == [-1]
    assert hv("TYPE", "h").text == b"hash"
    hv("RENAME", "h", "h2")                   # RENAME keeps field TTLs
    assert hv("HTTL", "h2", "FIELDS", 1, "b") == [100]
    hv.clock.advance(100_000)
    hv.engine.cron()
    assert hv("HKEYS", "h2") == [b"a", b"c"]
    _check(hv)


def test_big_hash_encoding():
    hv = Harness()
    hv("HSET", "h", *[x for i in range(600) for x in (f"f{i}", "v")])
    hv("HEXPIRE", "h", 10, "FIELDS", 1, "f1")
    assert hv("OBJECT", "ENCODING", "h") == b"hashtable"
    hv("HSET", "s", "a", "1")
    hv("HEXPIRE", "s", 10, "FIELDS", 1, "a")
    assert hv("OBJECT", "ENCODING", "s") == b"listpackex"


def test_hgetex_and_hsetex():
    hv = Harness()
    hv("HSET", "h", "a", "1", "b", "2")
    _fx(hv)
    assert hv("HGETEX", "h", "PX", 500, "FIELDS", 3, "a", "b", "zz") == [b"1", b"2", None]
    # propagated with the command's own field list, as Redis rewrites it
    assert _fx(hv) == [[b"HPEXPIREAT", b"h", b"%d" % (NOW + 500), b"FIELDS", b"3",
                        b"a", b"b", b"zz"]]
    assert hv("HGETEX", "h", "PERSIST", "FIELDS", 1, "a") == [b"1"]
    assert hv("HPTTL", "h", "FIELDS", 2, "a", "b") == [-1, 500]
    assert hv("HGETEX", "h", "EXAT", 1, "FIELDS", 1, "a") == [b"1"]  # past: deleted
    assert hv("HEXISTS", "h", "a") == 0
    _fx(hv)
    assert hv("HSETEX", "h", "FNX", "EX", 10, "FIELDS", 2, "b", "x", "c", "y") == 0
    assert hv("HSETEX", "h", "FXX", "KEEPTTL", "FIELDS", 1, "b", "x") == 1
    assert hv("HPTTL", "h", "FIELDS", 1, "b") == [500]
    assert hv("HSETEX", "h", "FIELDS", 1, "b", "z") == 1   # no option: TTL removed
    assert hv("HPTTL", "h", "FIELDS", 1, "b") == [-1]
    assert hv("HSETEX", "h", "PX", 20, "FXX", "FIELDS", 1, "b", "w") == 1
    assert _fx(hv)[-1] == [b"HSETEX", b"h", b"PXAT", b"%d" % (NOW + 20), b"FXX", b"FIELDS",
                           b"1", b"b", b"w"]
    assert hv("HSETEX", "h", "EXAT", 1, "FIELDS", 2, "b", "1", "e", "2") == 1  # past: deleted
    assert _fx(hv) == [[b"HDEL", b"h", b"b"], [b"HDEL", b"h", b"e"]]
    assert hv("EXISTS", "h") == 0
    assert hv("HGETEX", "nokey", "EX", 1, "FIELDS", 1, "a") == [None]
    _check(hv)


# -- persistence ----------------------------------------------------------------------
def _replay(commands) -> Harness:
    hv = Harness()
    for argv in commands:
        hv.ok(*argv)
    return hv


def test_aof_rewrite_keeps_ttls():
    hv = Harness()
    hv("HSET", "h", *[x for i in range(200) for x in (f"f{i}", f"v{i}")])
    hv("HPEXPIRE", "h", 5000, "FIELDS", 100, *[f"f{i}" for i in range(100)])
    hv("HPEXPIRE", "h", 9000, "FIELDS", 1, "f150")
    h = hv.engine.dbs[0].data[b"h"]
    commands = list(hash_commands(b"h", h))
    assert commands[-1] == [b"HPEXPIREAT", b"h", b"%d" % (NOW + 9000), b"FIELDS", b"1", b"f150"]
    assert max(len(c) for c in commands) <= 2 + 128
    copy = _replay(commands).engine.dbs[0].data[b"h"]
    assert copy.map == h.map and copy.ttl == h.ttl
    copy.check()


def test_rdb_round_trip_type_24_and_version():
    hv = Harness(layers=True)
    hv("HSET", "plain", "a", "1")
    data = rdb.dumps(hv.engine.dbs, now_ms=NOW)
    assert data.startswith(b"REDIS0010")  # no field TTLs: still version 10
    hv("HSET", "small", "a", "1", "b", "2")
    hv("HPEXPIRE", "small", 700, "FIELDS", 1, "b")
    hv("HSET", "big", *[x for i in range(600) for x in (f"f{i}", "v")])
    hv("HPEXPIRE", "big", 800, "FIELDS", 2, "f3", "f4")
    stats = rdb.SaveStats()
    data = rdb.dumps(hv.engine.dbs, now_ms=NOW, stats=stats)
    assert data.startswith(b"REDIS0012") and stats.field_ttl_hashes == 2
    loaded = {k: v for k, v, _ in rdb.loads(data, now_ms=NOW).dbs[0]}
    assert loaded[b"small"].ttl == {b"b": NOW + 700}
    assert loaded[b"small"].object_encoding() == b"listpackex"
    assert loaded[b"big"].ttl == {b"f3": NOW + 800, b"f4": NOW + 800}
    assert loaded[b"big"].object_encoding() == b"hashtable"
    # a field already due is not loaded, and a hash of only such fields is skipped
    later = {k: v for k, v, _ in rdb.loads(data, now_ms=NOW + 750).dbs[0]}
    assert b"b" not in later[b"small"] and b"f3" in later[b"big"]
    hv("HSET", "gone", "x", "1")
    hv("HPEXPIRE", "gone", 1, "FIELDS", 1, "x")
    snap = rdb.loads(rdb.dumps(hv.engine.dbs, now_ms=NOW), now_ms=NOW + 5)
    assert b"gone" not in {k for k, _, _ in snap.dbs[0]}
    # DEBUG RELOAD keeps them
    hv.ok("DEBUG", "RELOAD")
    assert hv("HPTTL", "big", "FIELDS", 2, "f3", "f5") == [800, -1]
    _check(hv)


def test_type_24_layout_by_hand():
    # rdb.c's layout: min deadline (8 bytes LE), count, then per field
    # ttl (0 none, else deadline - min + 1), field, value
    blob = (struct.pack("<q", NOW + 1000) + length_bytes(2)
            + length_bytes(0) + string_bytes(b"keep", False) + string_bytes(b"v1", False)
            + length_bytes(101) + string_bytes(b"ttl", False) + string_bytes(b"v2", False))
    h = rdb_hash.read_hash_metadata(Reader(blob))
    assert h.map == {b"keep": b"v1", b"ttl": b"v2"} and h.ttl == {b"ttl": NOW + 1100}
    assert rdb_hash.write_hash_metadata(h, False)[8:] == (
        length_bytes(2) + length_bytes(0) + string_bytes(b"keep", False)
        + string_bytes(b"v1", False) + length_bytes(1) + string_bytes(b"ttl", False)
        + string_bytes(b"v2", False))


def test_type_25_blob_by_hand():
    # the listpack of (field, value, deadline) triplets, 0 for no TTL
    lp = listpack.pack([b"f1", b"v1", 0, b"f2", b"12", NOW + 5000])
    blob = struct.pack("<q", NOW + 5000) + string_bytes(lp, False)
    h = rdb_hash.READERS[25](Reader(blob))
    assert h.map == {b"f1": b"v1", b"f2": b"12"} and h.ttl == {b"f2": NOW + 5000}
    assert h.object_encoding() == b"listpackex"
    h.check()
    # inside a whole file
    body = (b"REDIS0012\xfe\x00\x19" + string_bytes(b"k", False) + blob + b"\xff")
    snap = rdb.loads(body + b"\x00" * 8, now_ms=NOW)
    ((key, value, _),) = snap.dbs[0]
    assert key == b"k" and value.ttl == {b"f2": NOW + 5000}


# -- the state machine ------------------------------------------------------------------
FIELDS = [b"a", b"b", b"c", b"d"]


class FieldTTLMachine(RuleBasedStateMachine):
    """The engine against a dict of field -> (value, deadline or None) with
    a fake clock: replies of every command, and the invariants, after each
    step."""

    @initialize()
    def setup(self) -> None:
        self.hv = Harness(layers=True)
        self.model: dict[bytes, tuple[bytes, int | None]] = {}

    def now(self) -> int:
        return self.hv.clock.now_ms()

    def live(self) -> dict[bytes, tuple[bytes, int | None]]:
        now = self.now()
        self.model = {f: (v, w) for f, (v, w) in self.model.items() if w is None or w > now}
        return self.model

    @rule(field=st.sampled_from(FIELDS), value=st.sampled_from([b"1", b"x"]))
    def hset(self, field, value) -> None:
        model = self.live()
        assert self.hv("HSET", "h", field, value) == int(field not in model)
        model[field] = (value, None)

    @rule(field=st.sampled_from(FIELDS))
    def hdel(self, field) -> None:
        model = self.live()
        assert self.hv("HDEL", "h", field) == int(field in model)
        model.pop(field, None)

    @rule(field=st.sampled_from(FIELDS))
    def hincrby(self, field) -> None:
        model = self.live()
        value, when = model.get(field, (b"0", None))
        if value == b"x":
            return
        assert self.hv("HINCRBY", "h", field, 1) == int(value) + 1
        model[field] = (b"%d" % (int(value) + 1), when)

    @rule(ms=st.integers(-5, 300), fields=st.lists(st.sampled_from(FIELDS), min_size=1,
                                                  max_size=3),
          cond=st.sampled_from([None, "NX", "XX", "GT", "LT"]))
    def hpexpire(self, ms, fields, cond) -> None:
        model = self.live()
        if ms < 0:
            assert self.hv.err("HPEXPIRE", "h", ms, "FIELDS", len(fields), *fields)
            return
        when = self.now() + ms
        expected = []
        for field in fields:
            if field not in model:
                expected.append(-2)
                continue
            value, current = model[field]
            if (cond == "NX" and current is not None or cond == "XX" and current is None
                    or cond == "GT" and (current is None or when <= current)
                    or cond == "LT" and current is not None and when >= current):
                expected.append(0)
            elif when <= self.now():
                expected.append(2)
                del model[field]
            else:
                expected.append(1)
                model[field] = (value, when)
        args = [cond] if cond else []
        assert self.hv("HPEXPIRE", "h", ms, *args, "FIELDS", len(fields), *fields) == expected

    @rule(field=st.sampled_from(FIELDS))
    def hpersist(self, field) -> None:
        model = self.live()
        expected = -2 if field not in model else (-1 if model[field][1] is None else 1)
        assert self.hv("HPERSIST", "h", "FIELDS", 1, field) == [expected]
        if expected == 1:
            model[field] = (model[field][0], None)

    @rule(ms=st.integers(1, 200))
    def advance(self, ms) -> None:
        self.hv.clock.advance(ms)

    @rule()
    def cron(self) -> None:
        self.hv.engine.cron()

    @rule()
    def reload(self) -> None:
        self.hv.ok("DEBUG", "RELOAD")  # an RDB round trip (type 24 when TTLs exist)

    @rule()
    def rewrite_and_replay(self) -> None:
        h = self.hv.engine.dbs[0].data.get(b"h")
        if h is None:
            return
        commands = list(hash_commands(b"h", h))
        self.hv.ok("DEL", "h")
        for argv in commands:
            self.hv.ok(*argv)

    @invariant()
    def agrees(self) -> None:
        if not hasattr(self, "hv"):
            return
        _check(self.hv)
        model = self.live()
        assert self.hv("HLEN", "h") == len(model)
        assert self.hv("HGETALL", "h") == Map([(f, v) for f, (v, _) in model.items()])
        now = self.now()
        assert self.hv("HPTTL", "h", "FIELDS", len(FIELDS), *FIELDS) == [
            -2 if f not in model else (-1 if model[f][1] is None else model[f][1] - now)
            for f in FIELDS]
        assert self.hv("EXISTS", "h") == int(bool(model))


FieldTTLMachine.TestCase.settings = settings(max_examples=300, stateful_step_count=40,
                                             deadline=None)
TestFieldTTLMachine = FieldTTLMachine.TestCase


def test_swapdb_carries_field_deadlines():
    """The active cycle finds a hash's due fields in the database it now sits
    in after SWAPDB (and none are left tracked in the other)."""
    hv = Harness()
    hv("HSET", "h", "a", "1", "b", "2")
    hv("HPEXPIRE", "h", 10, "FIELDS", 1, "a")
    hv.ok("SWAPDB", 0, 1)
    db0, db1 = hv.engine.dbs[0], hv.engine.dbs[1]
    assert b"h" in db1.data and not db0.field_keys and b"h" in db1.field_keys
    hv.clock.advance(10)
    assert db0.field_expire_cycle() == 0
    assert db1.field_expire_cycle() == 1
    assert list(db1.data[b"h"].map) == [b"b"]


def test_info_shows_expired_subkeys():
    hv = Harness()
    assert "expired_subkeys:0\r\n" in hv("INFO", "stats").text.decode()
    hv("HSET", "h", "a", "1", "b", "2")
    hv("HPEXPIRE", "h", 10, "FIELDS", 1, "a")
    hv.clock.advance(10)
    assert hv("HLEN", "h") == 1
    assert "expired_subkeys:1\r\n" in hv("INFO", "stats").text.decode()
