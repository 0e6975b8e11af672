"""The array type (types/array.py) against a plain dict model: every
operation, then ``_check()``; the RDB tags and the double printer; the RDB
form round trip (rdb/array.py)."""

from __future__ import annotations

import struct

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from tidelog.rdb import values as rdb
from tidelog.rdb.array import read_array, write_array
from tidelog.rdb.format import Reader
from tidelog.types.array import (
    INDEX_MAX,
    TAG_FLOAT,
    TAG_INT,
    TAG_SMALL,
    TAG_STRING,
    Array,
    float_text,
    format_double,
    value_tag,
)

# Small slices so that slice and directory bookkeeping is exercised.
SLICE = 256
indexes = st.one_of(st.integers(0, 3000), st.integers(INDEX_MAX - 5, INDEX_MAX),
                    st.integers(0, INDEX_MAX))
values = st.binary(max_size=12)


class ArrayMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.ar = Array(SLICE)
        self.model: dict[int, bytes] = {}

    @rule(idx=indexes, value=values)
    def set(self, idx, value):
        assert self.ar.set(idx, value) == (idx not in self.model)
        self.model[idx] = value

    @rule(start=st.integers(0, 3000), n=st.integers(2, 30))
    def bulk_set(self, start, n):
        """ARSET / ARINSERT of several values: the slices are sized first."""
        self.ar.reserve(start, start + n - 1)
        for idx in range(start, start + n):
            assert self.ar.set(idx, b"v") == (idx not in self.model)
            self.model[idx] = b"v"

    @rule(idx=indexes)
    def delete(self, idx):
        assert self.ar.delete(idx) == (idx in self.model)
        self.model.pop(idx, None)

    @rule(a=indexes, b=indexes)
    def delete_range(self, a, b):
        lo, hi = min(a, b), max(a, b)
        doomed = [i for i in self.model if lo <= i <= hi]
        assert self.ar.delete_range(lo, hi) == len(doomed)
        for i in doomed:
            del self.model[i]

    @rule(a=indexes, b=indexes)
    def scan(self, a, b):
        lo, hi = min(a, b), max(a, b)
        want = sorted((i, v) for i, v in self.model.items() if lo <= i <= hi)
        if a > b:
            want.reverse()
        assert list(self.ar.scan(a, b)) == want

    @rule()
    def copy_and_roundtrip(self):
        dup = self.ar.copy()
        dup._check()
        assert dict(dup.items()) == self.model
        if self.model:
            _, blob = write_array(self.ar, compress=False)
            back = read_array(Reader(blob), SLICE)
            assert dict(back.items()) == self.model

    @invariant()
    def matches(self):
        self.ar._check()
        assert len(self.ar) == len(self.model)
        assert self.ar.length == (max(self.model) + 1 if self.model else 0)
        assert dict(self.ar.items()) == self.model


TestArrayMachine = ArrayMachine.TestCase
TestArrayMachine.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)


class SmallKmaxMachine(ArrayMachine):
    """The same with array-sparse-kmax 3 and -kmin 2: slices change encoding often."""

    def __init__(self) -> None:
        super().__init__()
        self.ar = Array(SLICE, kmax=3, kmin=2)


TestSmallKmaxMachine = SmallKmaxMachine.TestCase
TestSmallKmaxMachine.settings = settings(max_examples=40, stateful_step_count=40, deadline=None)


def test_directory_model_follows_redis_growth():
    ar = Array(4096)
    ar.set(0, b"a")
    assert (ar.directory_size, ar.super_dir_entries, len(ar.slices)) == (1, 0, 1)
    ar.set(4096 * 5, b"b")                     # slice 5: the table grows to 8
    assert ar.directory_size == 8
    ar.delete(4096 * 5)                        # highest slice 0 < 90% of 8: shrinks to 1
    assert ar.directory_size == 1
    ar.set(4096 * 2048, b"c")                  # slice 2048: the super-directory
    assert (ar.directory_size, ar.super_dir_entries) == (4, 2)
    for block in range(2, 6):
        ar.set(4096 * 2048 * block, b"d")
    assert (ar.directory_size, ar.super_dir_entries) == (8, 6)
    ar._check()


def test_value_tags_follow_redis_inline_encoding():
    assert value_tag(b"12345678901") == (TAG_INT, 12345678901)
    assert value_tag(b"-5") == (TAG_INT, -5)
    assert value_tag(b"2305843009213693951") == (TAG_INT, (1 << 61) - 1)   # 62 bits
    assert value_tag(b"2305843009213693952")[0] == TAG_STRING                 # 63 bits
    assert value_tag(b"007")[0] == TAG_SMALL                                  # not canonical
    assert value_tag(b"1.5") == (TAG_FLOAT, 1.5)
    assert value_tag(b"1.0") == (TAG_FLOAT, 1.0)
    assert value_tag(b"-0.0")[0] == TAG_FLOAT
    assert value_tag(b"1.50")[0] == TAG_SMALL          # prints back as 1.5
    assert value_tag(b"0.1")[0] == TAG_SMALL           # low bits cleared: not 0.1 any more
    assert value_tag(b"1e5")[0] == TAG_SMALL           # exponents are not inlined
    assert value_tag(b"abcdefg")[0] == TAG_SMALL
    assert value_tag(b"abcdefgh")[0] == TAG_STRING
    assert value_tag(b"")[0] == TAG_SMALL


def test_double_printer():
    assert format_double(3.0) == b"3" and float_text(3.0) == b"3.0"
    assert format_double(-0.0) == b"-0" and float_text(-0.0) == b"-0.0"
    assert format_double(1e-5) == b"0.00001"
    assert format_double(1e-7) == b"1e-7"
    assert format_double(0.00012345) == b"1.2345e-4"
    assert format_double(2.0 ** 70) == b"1180591620717411300000"


def test_rdb_form_bytes():
    ar = Array()
    ar.set(0, b"7")
    ar.set(1, b"2.5")
    ar.set(300, b"hi")
    ar.set(70000, b"a longer string")
    ar.insert_idx = 1
    rdbtype, blob = write_array(ar, compress=False)
    assert rdbtype == 28
    assert blob == (b"\x04" + b"\x01\x01"
                    + b"\x00\x01" + struct.pack("<q", 7)
                    + b"\x01\x02" + struct.pack("<d", 2.5)
                    + b"\x41\x2c\x03\x02hi"
                    + b"\x80\x00\x01\x11\x70\x00\x0fa longer string")
    back = read_array(Reader(blob))
    assert dict(back.items()) == dict(ar.items()) and back.insert_idx == 1


def test_dump_payload_is_rdb_15():
    ar = Array()
    ar.set(5, b"x")
    payload = rdb.value_payload(ar, version=10)
    assert payload[0] == 28
    assert payload[-10:-8] == b"\x0f\x00"
    restored = rdb.value_from_payload(payload)
    assert dict(restored.items()) == {5: b"x"} and restored.insert_idx is None


def test_aof_rewrite_form():
    from tidelog.persistence.aof_rewrite import array_commands
    ar = Array()
    for i in range(70):
        ar.set(i * 3, b"v%d" % i)
    cmds = list(array_commands(b"k", ar))
    assert [c[0] for c in cmds] == [b"ARMSET", b"ARMSET"]
    assert len(cmds[0]) == 2 + 128 and cmds[0][2:4] == [b"0", b"v0"]
    assert cmds[1][-2:] == [b"207", b"v69"]
    ar.insert_idx = 5
    assert list(array_commands(b"k", ar))[-1] == [b"ARSEEK", b"k", b"6"]
    ar.insert_idx = INDEX_MAX                     # exhausted: ARSEEK 2**64 - 1 restores it
    assert list(array_commands(b"k", ar))[-1] == [b"ARSEEK", b"k", b"18446744073709551615"]
