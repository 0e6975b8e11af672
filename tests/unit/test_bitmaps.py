"""The bit arithmetic of the bitmap commands (tidelog.types.bits), checked
against a plain model: a string as a Python list of bits, bit 0 the most
significant bit of the first byte; then the commands on an engine (no
sockets): what each propagates, and random writes and reads on a few keys
against that model."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from tests.support.engine_harness import Harness
from tidelog.commands.bitmap.bitmaps import clamp_range, parse_field_type
from tidelog.errors import BITFIELD_BAD_TYPE, CommandError
from tidelog.replication import compat7
from tidelog.types import bits as B

# -- the model ---------------------------------------------------------------------------


def to_bits(value: bytes) -> list[int]:
    return [(byte >> (7 - i)) & 1 for byte in value for i in range(8)]


def from_bits(bits: list[int]) -> bytes:
    assert len(bits) % 8 == 0
    return bytes(int("".join(map(str, bits[i:i + 8])), 2) for i in range(0, len(bits), 8))


def model_field(bits: list[int], offset: int, width: int) -> int:
    padded = bits + [0] * max(0, offset + width - len(bits))
    return int("".join(map(str, padded[offset:offset + width])), 2)


values = st.binary(max_size=40)


# -- single bits --------------------------------------------------------------------------
@given(value=values, offset=st.integers(0, 400))
def test_get_bit_is_the_models(value, offset):
    bits = to_bits(value)
    assert B.get_bit(value, offset) == (bits[offset] if offset < len(bits) else 0)


@given(value=values, offset=st.integers(0, 400), on=st.integers(0, 1))
def test_set_bit_is_the_models(value, offset, on):
    bits = to_bits(value)
    old = bits[offset] if offset < len(bits) else 0
    grown = bits + [0] * max(0, (offset // 8 + 1) * 8 - len(bits))
    grown[offset] = on
    new, got_old = B.set_bit(value, offset, on)
    assert (new, got_old) == (from_bits(grown), old)
    assert type(new) is bytes
    if old == on and offset < len(bits):
        assert new is value  # nothing changed: the same object, no copy


# -- counting and searching ---------------------------------------------------------------
@given(value=values, data=st.data())
def test_count_bits_is_the_models(value, data):
    bits = to_bits(value)
    if not bits:
        assert B.count_bits(value, 0, -1) == 0
        return
    first = data.draw(st.integers(0, len(bits) - 1))
    last = data.draw(st.integers(0, len(bits) - 1))
    assert B.count_bits(value, first, last) == sum(bits[first:last + 1])


@given(value=values, bit=st.integers(0, 1), data=st.data())
def test_first_bit_is_the_models(value, bit, data):
    bits = to_bits(value)
    if not bits:
        assert B.first_bit(value, bit, 0, -1) == -1
        return
    first = data.draw(st.integers(0, len(bits) - 1))
    last = data.draw(st.integers(0, len(bits) - 1))
    expected = next((i for i in range(first, last + 1) if bits[i] == bit), -1)
    assert B.first_bit(value, bit, first, last) == expected


def test_long_strings_cross_the_chunk_boundaries():
    """Counting reads 1 MiB at a time and searching 64 bytes doubling to
    1 MiB: bits right at and around the seams must be seen once."""
    size = 3 * (1 << 20) + 5
    rng = random.Random(3)
    marks = sorted({rng.randrange(size * 8) for _ in range(200)}
                   | {8 * (1 << 20) - 1, 8 * (1 << 20), 64 * 8 - 1, 64 * 8, 192 * 8, size * 8 - 1})
    buf = bytearray(size)
    for pos in marks:
        buf[pos >> 3] |= 0x80 >> (pos & 7)
    value = bytes(buf)
    assert B.count_bits(value, 0, size * 8 - 1) == len(marks)
    assert B.count_bits(value, 3, size * 8 - 3) == sum(1 for p in marks if 3 <= p <= size * 8 - 3)
    pos = -1
    for mark in marks:
        pos = B.first_bit(value, 1, pos + 1, size * 8 - 1)
        assert pos == mark
    assert B.first_bit(value, 1, marks[-1] + 1, size * 8 - 1) == -1
    ones = bytes(b ^ 0xFF for b in value)
    assert B.first_bit(ones, 0, 1, size * 8 - 1) == next(m for m in marks if m >= 1)
    assert B.first_bit(b"\xff" * size, 0, 0, size * 8 - 1) == -1


# -- BITOP ------------------------------------------------------------------------------------
def model_bitop(op: bytes, sources: list[bytes]) -> bytes:
    size = max((len(v) for v in sources), default=0)
    columns = [to_bits(v + bytes(size - len(v))) for v in sources]
    out = []
    for i in range(size * 8):
        col = [c[i] for c in columns]
        x, rest = col[0], col[1:]
        out.append({
            b"AND": int(all(col)), b"OR": int(any(col)), b"XOR": sum(col) % 2, b"NOT": 1 - x,
            # https://redis.io/docs/latest/commands/bitop/ (Redis 8.2)
            b"DIFF": int(x and not any(rest)), b"DIFF1": int(any(rest) and not x),
            b"ANDOR": int(x and any(rest)), b"ONE": int(sum(col) == 1),
        }[op])
    return from_bits(out)


@given(op=st.sampled_from(B.OPERATIONS), sources=st.lists(values, min_size=1, max_size=5))
def test_bit_operation_is_the_models(op, sources):
    if op == b"NOT":
        sources = sources[:1]
    assert B.bit_operation(op, sources) == model_bitop(op, sources)


def test_bit_operation_of_empty_sources_is_empty():
    assert B.bit_operation(b"OR", [b"", b""]) == b""
    assert B.bit_operation(b"NOT", [b""]) == b""


def test_the_redis_io_examples_of_bitop():
    """The worked examples of https://redis.io/docs/latest/commands/bitop/."""
    assert B.bit_operation(b"AND", [bytes([255]), bytes([85])]) == bytes([85])
    assert B.bit_operation(b"AND", [b"foobar", b"abcdef"]) == b"`bc`ab"


# -- BITFIELD integers ----------------------------------------------------------------------
@given(value=values, offset=st.integers(0, 400), width=st.integers(1, 64))
def test_read_field_is_the_models(value, offset, width):
    assert B.read_field(value, offset, width) == model_field(to_bits(value), offset, width)


@given(value=values, offset=st.integers(0, 300), width=st.integers(1, 64),
       new=st.integers(-(2**64), 2**64))
def test_write_field_is_the_models(value, offset, width, new):
    need = (offset + width - 1) // 8 + 1
    buf = bytearray(value + bytes(max(0, need - len(value))))
    bits = to_bits(bytes(buf))
    pattern = new % (1 << width)
    bits[offset:offset + width] = [int(c) for c in format(pattern, f"0{width}b")]
    B.write_field(buf, offset, width, new)
    assert bytes(buf) == from_bits(bits)


@given(width=st.integers(1, 64), raw=st.integers(0, 2**64 - 1))
def test_to_signed_is_twos_complement(width, raw):
    raw %= 1 << width
    expected = raw - (1 << width) if raw >= 1 << (width - 1) else raw
    assert B.to_signed(raw, width) == expected


@given(width=st.integers(1, 64), data=st.data(), mode=st.sampled_from([B.WRAP, B.SAT, B.FAIL]))
def test_signed_incrby_overflow_is_exact_arithmetic(width, data, mode):
    """For INCRBY (a value inside the type), Redis's 64-bit tests amount to
    exact arithmetic: the sum outside [min, max] overflows; WRAP is the sum
    modulo 2**width, SAT the bound passed."""
    top, bottom = (1 << (width - 1)) - 1, -(1 << (width - 1))
    old = data.draw(st.integers(bottom, top))
    incr = data.draw(st.integers(-(2**63), 2**63 - 1))
    total = old + incr
    direction = 1 if total > top else -1 if total < bottom else 0
    got = B.signed_overflow(old, incr, width, mode)
    assert got[0] == direction
    if direction and mode == B.SAT:
        assert got[1] == (top if direction > 0 else bottom)
    if direction and mode == B.WRAP:
        assert got[1] == B.to_signed(total % (1 << width), width)


@given(width=st.integers(1, 63), data=st.data(), mode=st.sampled_from([B.WRAP, B.SAT, B.FAIL]))
def test_unsigned_incrby_overflow_is_exact_arithmetic(width, data, mode):
    top = (1 << width) - 1
    old = data.draw(st.integers(0, top))
    incr = data.draw(st.integers(-(2**63), 2**63 - 1))
    total = old + incr
    direction = 1 if total > top else -1 if total < 0 else 0
    got = B.unsigned_overflow(old, incr, width, mode)
    assert got[0] == direction
    if direction and mode == B.SAT:
        assert got[1] == (top if direction > 0 else 0)
    if direction and mode == B.WRAP:
        assert got[1] == total % (1 << width)


def test_set_overflow_follows_redis_64_bit_arithmetic():
    """SET checks its value with increment 0, in Redis's wrapping C
    arithmetic (checked against redis-server 7.0.15 in the differential
    tests): an i63 below its minimum saturates to the maximum, and a negative
    value for an unsigned type is a huge uint64, so it saturates high."""
    assert B.signed_overflow(-(2**63), 0, 63, B.SAT) == (1, 2**62 - 1)
    assert B.signed_overflow(-(2**62) - 1, 0, 63, B.SAT) == (1, 2**62 - 1)
    assert B.signed_overflow(-(2**62) - 1, 0, 62, B.SAT) == (-1, -(2**61))
    assert B.signed_overflow(-(2**63), 0, 63, B.WRAP) == (1, 0)
    assert B.signed_overflow(200, 0, 8, B.SAT) == (1, 127)
    assert B.signed_overflow(-200, 0, 8, B.WRAP) == (-1, 56)
    assert B.unsigned_overflow((-5) % 2**64, 0, 8, B.SAT) == (1, 255)
    assert B.unsigned_overflow((-5) % 2**64, 0, 8, B.WRAP) == (1, 251)
    assert B.unsigned_overflow(300, 0, 8, B.FAIL) == (1, 0)
    assert B.signed_overflow(2**63 - 1, 0, 64, B.SAT) == (0, 0)


def test_wrap_i64():
    assert B.wrap_i64(2**63) == -(2**63)
    assert B.wrap_i64(2**64) == 0
    assert B.wrap_i64(-(2**63) - 1) == 2**63 - 1
    assert B.wrap_i64(12) == 12


# -- argument rules ---------------------------------------------------------------------
@pytest.mark.parametrize("arg, expected", [
    (b"i1", (True, 1)), (b"i64", (True, 64)), (b"u1", (False, 1)), (b"u63", (False, 63)),
])
def test_field_types(arg, expected):
    assert parse_field_type(arg) == expected


@pytest.mark.parametrize("arg", [b"u64", b"i65", b"i0", b"u0", b"I8", b"U8", b"i", b"",
                                 b"i08", b"i-1", b"x8", b"i 8"])
def test_bad_field_types(arg):
    with pytest.raises(CommandError) as err:
        parse_field_type(arg)
    assert err.value.message == BITFIELD_BAD_TYPE


@pytest.mark.parametrize("start, end, size, expected", [
    (0, -1, 3, (0, 2)), (-2, -1, 3, (1, 2)), (-100, 100, 3, (0, 2)),
    (0, -100, 3, (0, 0)),    # an end before the string is its first unit, as in Redis
    (5, 10, 3, (5, 2)),      # past the end: empty (start > end)
    (2, 1, 3, (2, 1)), (-1, -1, 1, (0, 0)),
])
def test_clamp_range_is_redis_index_rule(start, end, size, expected):
    assert clamp_range(start, end, size) == expected


# -- the commands on an engine: what they propagate, and a model of keys -----------------
def effects_of(h: Harness, *argv) -> list[list[bytes]]:
    h.take_effects()
    h(*argv)
    return h.take_effects()


def test_what_each_bit_command_propagates():
    """Redis's rules: the argv as sent when something changed, nothing
    otherwise (a SETBIT or BITFIELD that changes no bit and grows nothing,
    a BITFIELD of GETs, a BITOP with nothing to store or delete); a BITFIELD
    that grew the string while OVERFLOW FAIL refused every write propagates
    (redis/redis#15699)."""
    h = Harness()
    setbit = [b"SETBIT", b"k", b"3", b"1"]
    assert effects_of(h, *setbit) == [setbit]
    assert effects_of(h, *setbit) == []
    assert effects_of(h, "SETBIT", "k", "2", "0") == []
    assert effects_of(h, "SETBIT", "k", "20", "0") == [[b"SETBIT", b"k", b"20", b"0"]]  # grew
    assert effects_of(h, "GETBIT", "k", "3") == []
    assert effects_of(h, "BITFIELD", "k", "GET", "u8", "0", "OVERFLOW", "SAT") == []
    field = [b"BITFIELD", b"k", b"SET", b"u8", b"0", b"17", b"GET", b"u4", b"0"]
    assert effects_of(h, *field) == [field]
    assert effects_of(h, *field) == []              # the value it has: nothing changed
    fail = [b"BITFIELD", b"n", b"OVERFLOW", b"FAIL", b"INCRBY", b"u2", b"0", b"9"]
    assert effects_of(h, *fail) == [fail]            # refused, but "n" was made
    assert effects_of(h, *fail) == []
    bitop = [b"BITOP", b"ONE", b"d", b"k", b"n"]
    assert effects_of(h, *bitop) == [bitop]
    assert effects_of(h, "BITOP", "AND", "d", "nope") == [[b"BITOP", b"AND", b"d", b"nope"]]  # del
    assert effects_of(h, "BITOP", "AND", "d", "nope") == []
    assert effects_of(h, "BITFIELD", "k", "GET", "u99", "0") == []  # an error


def test_offsets_past_the_limit_are_obeyed_from_the_aof():
    """Redis checks a bit offset against proto-max-bulk-len for clients, not
    for the AOF being replayed (mustObeyClient)."""
    h = Harness()
    h.engine.config.set("proto-max-bulk-len", "1mb")
    far = str(8 * 1024 * 1024 + 7)
    assert h.err("SETBIT", "k", far, "1") == b"ERR bit offset is not an integer or out of range"
    h.client.kind = "aof"
    assert h("SETBIT", "k", far, "1") == 0
    assert h("STRLEN", "k") == 1024 * 1024 + 1


class BitmapKeys(RuleBasedStateMachine):
    """Random bit writes and reads on a few keys against a model: each key a
    list of bits (whole bytes), BITFIELD integers read and written bit by bit."""

    KEYS = ("a", "b", "c")

    def __init__(self) -> None:
        super().__init__()
        self.h = Harness()
        self.model: dict[str, list[int]] = {}

    def bits(self, key: str) -> list[int]:
        return self.model.get(key, [])

    def grow(self, key: str, upto_bit: int) -> list[int]:
        bits = self.model.setdefault(key, [])
        need = (upto_bit // 8 + 1) * 8
        bits.extend([0] * max(0, need - len(bits)))
        return bits

    @rule(key=st.sampled_from(KEYS), offset=st.integers(0, 200), on=st.integers(0, 1))
    def setbit(self, key, offset, on):
        old = self.bits(key)[offset] if offset < len(self.bits(key)) else 0
        assert self.h("SETBIT", key, offset, on) == old
        self.grow(key, offset)[offset] = on

    @rule(key=st.sampled_from(KEYS), offset=st.integers(0, 250))
    def getbit(self, key, offset):
        bits = self.bits(key)
        assert self.h("GETBIT", key, offset) == (bits[offset] if offset < len(bits) else 0)

    @rule(key=st.sampled_from(KEYS), width=st.integers(1, 63), offset=st.integers(0, 150),
          incr=st.integers(-(2**40), 2**40))
    def bitfield_incrby_wrap(self, key, width, offset, incr):
        old = model_field(self.bits(key), offset, width)
        new = (old + incr) % (1 << width)
        assert self.h("BITFIELD", key, "INCRBY", f"u{width}", offset, incr, "GET",
                      f"i{width}", offset) == [new, B.to_signed(new, width)]
        bits = self.grow(key, offset + width - 1)
        bits[offset:offset + width] = [int(c) for c in format(new, f"0{width}b")]

    @rule(dest=st.sampled_from(KEYS), op=st.sampled_from(B.OPERATIONS),
          sources=st.lists(st.sampled_from((*KEYS, "none")), min_size=2, max_size=3))
    def bitop(self, dest, op, sources):
        if op == b"NOT":
            sources = sources[:1]
        values = [from_bits(self.bits(k)) for k in sources]
        expected = model_bitop(op, values)
        assert self.h("BITOP", op, dest, *sources) == len(expected)
        if expected:
            self.model[dest] = to_bits(expected)
        else:
            self.model.pop(dest, None)

    @invariant()
    def strings_and_counts_match(self):
        for key in self.KEYS:
            value = self.h("GET", key)
            assert value == (from_bits(self.model[key]) if key in self.model else None)
            assert self.h("BITCOUNT", key) == sum(self.bits(key))
            first_one = next((i for i, x in enumerate(self.bits(key)) if x), -1)
            assert self.h("BITPOS", key, 1) == first_one


TestBitmapKeys = BitmapKeys.TestCase
TestBitmapKeys.settings = settings(max_examples=60, stateful_step_count=25, deadline=None)


def test_bitop_82_operations_have_no_redis_70_form(caplog):
    """Sent to replicas as they are (Redis 8 and Tidelog replicas apply
    them), logged once each as something a Redis 7.0 replica skips."""
    h = Harness()
    compat7._warned.discard(b"BITOP DIFF")  # (once per process)
    with caplog.at_level("WARNING", logger="tidelog"):
        for argv in ([b"BITOP", b"diff", b"d", b"a", b"b"], [b"BITOP", b"DIFF", b"d", b"a", b"c"],
                     [b"BITOP", b"AND", b"d", b"a"], [b"SETBIT", b"k", b"1", b"1"]):
            assert compat7.redis7_forms(h.engine.dbs[0], argv) == [argv]
    assert [r.getMessage() for r in caplog.records if "BITOP" in r.getMessage()] == [
        "Replication: BITOP DIFF has no Redis 7.0 form; a Redis 7.0 replica skips it "
        "(Tidelog and Redis 8 replicas apply it)"]
