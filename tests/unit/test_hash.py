"""The hash type, its persistence and its commands, without a network.

* :class:`Hash` checked (``Hash.check``) after every mutation, and a
  hypothesis machine against a plain dict (contents, order, the one-way
  encoding, HSCAN's guarantee under changes);
* the long double arithmetic of HINCRBYFLOAT (``types/longdouble.py``) on
  texts whose Redis replies were read from redis-server 7.0.15;
* RDB: both written encodings read back; ziplist (13) and zipmap (9) blobs
  built by hand; the AOF rewrite's batches replayed through the engine;
* the commands' effects (what reaches the AOF and replicas).
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from tests.support.engine_harness import Harness
from tidelog.persistence import rdb
from tidelog.persistence.aof_rewrite import hash_commands
from tidelog.rdb import hash as rdb_hash
from tidelog.rdb.format import Reader, string_bytes
from tidelog.types import listpack, longdouble
from tidelog.types.hash import Hash


# =====================================================================================
# The type
# =====================================================================================
def test_order_and_encoding():
    h = Hash()
    assert h.object_encoding() == b"listpack" and h.TYPE_NAME == b"hash"
    for f in (b"b", b"a", b"c"):
        assert h.set(f, f + b"!")
        h.convert_if(3, 4, 2)
        h.check(3, 4)
    assert not h.set(b"a", b"new")           # an existing field keeps its place
    assert h.fields() == [b"b", b"a", b"c"]
    assert h.flat() == [b"b", b"b!", b"a", b"new", b"c", b"c!"]
    assert h.delete(b"a") and not h.delete(b"a")
    h.set(b"a", b"1")
    assert h.fields() == [b"b", b"c", b"a"]
    h.set(b"d", b"1")
    h.convert_if(3, 4)
    assert h.object_encoding() == b"hashtable"
    h.delete(b"d")
    h.delete(b"a")
    h.convert_if(3, 4)
    assert h.object_encoding() == b"hashtable"  # for good
    h.check()


def test_long_value_converts():
    h = Hash()
    h.set(b"f", b"x" * 65)
    h.convert_if(512, 64, 65)
    assert h.big
    assert Hash({b"f": b"x" * 64}).fits_listpack(512, 64)
    assert not Hash({b"f": b"x" * 65}).fits_listpack(512, 64)


def test_listpack_scan_is_one_call():
    h = Hash({b"a": b"1", b"b": b"2"})
    assert h.scan(12345, 1) == (0, [b"a", b"b"])


def _full_scan(h: Hash, count: int, between=None) -> set[bytes]:
    seen: set[bytes] = set()
    cursor, calls = 0, 0
    while True:
        cursor, fields = h.scan(cursor, count)
        seen.update(fields)
        calls += 1
        if between is not None:
            between(calls)
        h.check()
        if cursor == 0:
            return seen


def test_big_scan_sees_every_field_across_resizes():
    h = Hash({b"k%d" % i: b"v" for i in range(1000)}, big=True)
    assert _full_scan(h, 10) == set(h.map)
    stable = set(h.map)

    def churn(call: int) -> None:  # grow a lot, then shrink, while scanning
        if call < 20:
            for i in range(200):
                h.set(b"new%d-%d" % (call, i), b"v")
        else:
            for f in [f for f in h.fields() if f.startswith(b"new")][:300]:
                h.delete(f)

    assert stable <= _full_scan(h, 7, churn)


class HashMachine(RuleBasedStateMachine):
    """Hash vs a dict: same contents and order; the encoding as Redis's rule
    says (one way); an HSCAN started at any point returns every field that
    stays from its first call to its last."""

    @initialize(max_entries=st.sampled_from([0, 2, 8, 512]), max_value=st.sampled_from([0, 3, 64]))
    def setup(self, max_entries: int, max_value: int) -> None:
        self.h = Hash()
        self.model: dict[bytes, bytes] = {}
        self.big = False
        self.limits = (max_entries, max_value)
        self.scan_cursor: int | None = None
        self.scan_stable: set[bytes] = set()
        self.scan_seen: set[bytes] = set()

    fields = st.binary(max_size=5) | st.sampled_from([b"f%d" % i for i in range(40)])

    @rule(field=fields, value=st.binary(max_size=6))
    def set(self, field: bytes, value: bytes) -> None:
        new = field not in self.model
        assert self.h.set(field, value) == new
        self.h.convert_if(*self.limits, max(len(field), len(value)))
        self.model[field] = value
        if len(self.model) > self.limits[0] or max(len(field), len(value)) > self.limits[1]:
            self.big = True

    @rule(field=fields)
    def delete(self, field: bytes) -> None:
        assert self.h.delete(field) == (field in self.model)
        self.model.pop(field, None)
        self.scan_stable.discard(field)

    @rule(n=st.integers(1, 60))
    def bulk(self, n: int) -> None:
        for i in range(n):
            self.set(b"bulk%d" % i, b"v")

    @rule(count=st.integers(1, 5))
    def scan_step(self, count: int) -> None:
        if self.scan_cursor is None:
            self.scan_cursor = 0
            self.scan_stable = set(self.model)
            self.scan_seen = set()
        self.scan_cursor, found = self.h.scan(self.scan_cursor, count)
        assert set(found) <= set(self.model)
        self.scan_seen.update(found)
        if self.scan_cursor == 0:
            assert self.scan_stable <= self.scan_seen
            self.scan_cursor = None

    @rule(count=st.integers(-5, 5))
    def random(self, count: int) -> None:
        pairs = self.h.random_items(abs(count), count > 0)
        if count > 0:
            assert len(pairs) == min(count, len(self.model)) and len(set(pairs)) == len(pairs)
        else:
            assert len(pairs) == (abs(count) if self.model else 0)
        assert all(self.model[f] == v for f, v in pairs)

    @invariant()
    def agrees(self) -> None:
        if not hasattr(self, "h"):
            return
        self.h.check()
        assert self.h.items() == list(self.model.items())
        assert self.h.big == self.big
        assert len(self.h) == len(self.model)


TestHashMachine = HashMachine.TestCase
TestHashMachine.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)


# =====================================================================================
# HINCRBYFLOAT's arithmetic (expected texts from redis-server 7.0.15)
# =====================================================================================
def _incr(current: bytes, by: bytes) -> bytes:
    return longdouble.format_human(longdouble.add(longdouble.parse(current), longdouble.parse(by)))


@pytest.mark.parametrize("current, by, expected", [
    (b"0", b"0.1", b"0.1"), (b"0.1", b"0.2", b"0.3"), (b"10.5", b"0.1", b"10.6"),
    (b"5000", b"-5000", b"0"), (b"0", b"-1e-30", b"0"), (b"3", b"0x1.8p1", b"6"),
    (b"3", b".5", b"3.5"), (b"3.5", b"5.", b"8.5"), (b"8.5", b"+3", b"11.5"),
    (b"7000000000000000", b"123456789.123456789", b"7000000123456789.12353515625"),
    (b"1e-17", b"5e-18", b"0.00000000000000002"), (b"0", b"1.5", b"1.5"),
])
def test_incr_texts(current, by, expected):
    assert _incr(current, by) == expected


def test_incr_huge_and_tiny():
    text = _incr(b"1", b"1e300")
    assert text.startswith(b"10000000000000000000089973240795591938705") and len(text) == 301
    assert len(_incr(b"0", b"1.5e4000")) == 4001
    assert _incr(b"2", b"1e-4950") == b"2"


@pytest.mark.parametrize("text", [
    b"", b" 1", b"1 ", b"1e", b".", b"abc", b"nan", b"NaN(12)", b"1e5000", b"-1e5000",
    b"1e-5000", b"0x", b"0x1p", b"x" * 6000, b"1" * 5120,
])
def test_refused_texts(text):
    assert longdouble.parse(text) is None


def test_accepted_texts():
    assert longdouble.parse(b"inf") == longdouble.INF
    assert longdouble.parse(b"-Infinity") == -longdouble.INF
    assert longdouble.parse(b"0e-99999") == 0           # an exact zero (1e-99999 is refused)
    assert longdouble.parse(b"1\x00junk") is None       # redis-server 7.0.15 refuses it
    assert longdouble.parse(b"0x10") == 16
    assert longdouble.parse(b"1e-4950") > 0             # a subnormal, kept


def test_rounding_to_64_bits():
    one = Fraction(1)
    assert longdouble.round_to_format(one + Fraction(1, 2**64)) == one  # a tie: to even
    assert longdouble.round_to_format(one + Fraction(3, 2**65)) == one + Fraction(1, 2**63)
    assert longdouble.round_to_format(Fraction(2) ** 16384) == longdouble.INF
    assert longdouble.format_human(Fraction(-1, 10**20)) == b"0"


# =====================================================================================
# RDB and the AOF rewrite
# =====================================================================================
def _roundtrip(h: Hash) -> Hash:
    rdbtype, payload = rdb_hash.write_hash(h, True)
    value = rdb_hash.READERS[rdbtype](Reader(payload))
    value.check()
    return value


def test_rdb_both_encodings():
    small = Hash({b"b": b"1", b"a": b"-5", b"big": b"99999999999999999999", b"": b"x" * 64})
    rdbtype, _ = rdb_hash.write_hash(small, False)
    assert rdbtype == 16
    back = _roundtrip(small)
    assert back.items() == small.items() and not back.big
    big = Hash({b"f%d" % i: b"v" * (i % 70) for i in range(600)}, big=True)
    assert rdb_hash.write_hash(big, True)[0] == 4
    back = _roundtrip(big)
    assert back.map == big.map and back.big
    shrunk = Hash({b"a": b"1"}, big=True)  # loads as a listpack, as in Redis
    assert not _roundtrip(shrunk).big


def test_rdb_whole_snapshot():
    harness = Harness()
    harness.ok("HSET", "h", "a", "1", "b", "2")
    snap = rdb.loads(rdb.dumps(harness.engine.dbs))
    (key, value, expire), = snap.dbs[0]
    assert key == b"h" and value.items() == [(b"a", b"1"), (b"b", b"2")] and expire is None


def _ziplist(values: list[bytes | int]) -> bytes:
    body = b""
    prev = 0
    for v in values:
        if isinstance(v, int):
            if 0 <= v <= 12:
                entry = bytes((0xF1 + v,))
            else:
                entry = b"\xc0" + v.to_bytes(2, "little", signed=True)
        else:
            entry = bytes((len(v),)) + v
        entry = bytes((prev,)) + entry
        body += entry
        prev = len(entry)
    total = 10 + len(body) + 1
    return total.to_bytes(4, "little") + (0).to_bytes(4, "little") + \
        len(values).to_bytes(2, "little") + body + b"\xff"


def test_rdb_ziplist_and_zipmap():
    blob = _ziplist([b"name", b"tidelog", b"n", 7, b"m", -300])
    value = rdb_hash.read_hash_ziplist(Reader(string_bytes(blob, False)))
    assert value.items() == [(b"name", b"tidelog"), (b"n", b"7"), (b"m", b"-300")]
    zipmap = b"\x02" + b"\x01a" + b"\x03\x00xyz" + b"\x02bb" + b"\x01\x02q!!" + b"\xff"
    value = rdb_hash.read_hash_zipmap(Reader(string_bytes(zipmap, False)))
    assert value.items() == [(b"a", b"xyz"), (b"bb", b"q")]


def test_rdb_listpack_with_integers():
    blob = listpack.pack([b"f", 12, b"g", b"-7"])
    value = rdb_hash.read_hash_listpack(Reader(string_bytes(blob, False)))
    assert value.items() == [(b"f", b"12"), (b"g", b"-7")]


def test_aof_rewrite_batches_and_replays():
    big = Hash({b"f%d" % i: b"v%d" % i for i in range(150)}, big=True)
    commands = list(hash_commands(b"k", big))
    assert [len(c) for c in commands] == [2 + 128, 2 + 128, 2 + 44]
    harness = Harness()
    for argv in commands:
        harness.ok(*argv)
    assert harness.engine.dbs[0].data[b"k"].map == big.map


# =====================================================================================
# Commands: effects and key removal
# =====================================================================================
def test_effects():
    h = Harness()
    h.ok("HSET", "k", "a", "1", "b", "2")
    h.ok("HSETNX", "k", "a", "x")
    h.ok("HDEL", "k", "zz")
    h.ok("HINCRBYFLOAT", "k", "a", "0.5")
    h.ok("HINCRBY", "k", "b", "3")
    assert h.take_effects() == [[b"HSET", b"k", b"a", b"1", b"b", b"2"],
                                [b"HSET", b"k", b"a", b"1.5"], [b"HINCRBY", b"k", b"b", b"3"]]
    h.ok("HDEL", "k", "a", "b")
    assert b"k" not in h.engine.dbs[0].data
    assert h.take_effects() == [[b"HDEL", b"k", b"a", b"b"]]
    assert h.err("HINCRBY", "k", "f", "x") == b"ERR value is not an integer or out of range"
    assert b"k" not in h.engine.dbs[0].data and h.take_effects() == []


def test_config_defaults_are_redis_defaults():
    """redis-server 7.0.15 (and redis.conf) say 512 and 64."""
    from tidelog.config import Config
    config = Config()
    assert config["hash-max-listpack-entries"] == 512
    assert config["hash-max-listpack-value"] == 64


def test_hgetdel_redis_8():
    """HGETDEL (Redis 8.0, https://redis.io/docs/latest/commands/hgetdel/):
    the values (nil for missing fields), the fields deleted, propagated as
    HDEL; the key goes with its last field."""
    h = Harness()
    assert h.ok("HGETDEL", "nokey", "FIELDS", "2", "a", "b") == [None, None]
    h.ok("HSET", "k", "a", "1", "b", "2", "c", "3")
    h.take_effects()
    assert h.ok("HGETDEL", "k", "fields", "3", "a", "zz", "a") == [b"1", None, None]
    assert h.take_effects() == [[b"HDEL", b"k", b"a", b"zz", b"a"]]
    assert h.ok("HGETDEL", "k", "FIELDS", "1", "zz") == [None]
    assert h.take_effects() == []
    assert h.ok("HGETDEL", "k", "FIELDS", "2", "b", "c") == [b"2", b"3"]
    assert b"k" not in h.engine.dbs[0].data
    h.ok("HSET", "k", "a", "1")
    assert h.err("HGETDEL", "k", "FIELD", "1", "a") == \
        b"ERR Mandatory argument FIELDS is missing or not at the right position"
    for bad in ("0", "-1", "x"):
        assert h.err("HGETDEL", "k", "FIELDS", bad, "a") == \
            b"ERR Number of fields must be a positive integer"
    assert h.err("HGETDEL", "k", "FIELDS", "2", "a") == \
        b"ERR The `numfields` parameter must match the number of arguments"
    assert h.err("HGETDEL", "k", "FIELDS") == b"ERR wrong number of arguments for 'hgetdel' command"
    h.ok("SET", "s", "v")
    assert h.err("HGETDEL", "s", "NOPE", "1", "a").startswith(b"WRONGTYPE")
