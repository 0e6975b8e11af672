"""String commands on an engine with a fake clock: what each propagates
(Redis 7's rewrites: absolute expiry times, INCRBYFLOAT as SET ... KEEPTTL),
GETRANGE's Redis 8 rule, LCS's answer against a brute force, and random
operations against a dict of bytes."""

from __future__ import annotations

from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from tests.support.engine_harness import NOW, Harness
from tidelog.commands.string.string_ranges import lcs_matches, lcs_rows


def effects_of(h: Harness, *argv) -> list[list[bytes]]:
    h.take_effects()
    h(*argv)
    return h.take_effects()


def test_relative_expiries_propagate_absolute_times():
    h = Harness()
    at = str(NOW + 100_000).encode()
    assert effects_of(h, "SETEX", "k", "100", "v") == [[b"SET", b"k", b"v", b"PXAT", at]]
    assert effects_of(h, "PSETEX", "k", "100000", "v") == [[b"SET", b"k", b"v", b"PXAT", at]]
    assert effects_of(h, "SET", "k", "v", "EX", "100", "GET") == [
        [b"SET", b"k", b"v", b"PXAT", at]]
    assert effects_of(h, "SET", "k", "v", "EXAT", str(NOW // 1000 + 100)) == [
        [b"SET", b"k", b"v", b"PXAT", at]]
    assert effects_of(h, "SET", "k", "v", "PXAT", at) == [[b"SET", b"k", b"v", b"PXAT", at]]
    assert effects_of(h, "SET", "k", "v", "NX") == []         # nothing written
    assert effects_of(h, "SETEX", "k", "0", "v") == []        # refused


def test_getex_propagation():
    h = Harness()
    h("SET", "k", "v")
    assert effects_of(h, "GETEX", "k") == []
    assert effects_of(h, "GETEX", "k", "PERSIST") == []       # no TTL to remove
    assert effects_of(h, "GETEX", "k", "EX", "100") == [
        [b"PEXPIREAT", b"k", str(NOW + 100_000).encode()]]
    assert effects_of(h, "GETEX", "k", "PERSIST") == [[b"PERSIST", b"k"]]
    assert h("TTL", "k") == -1
    assert effects_of(h, "GETEX", "nope", "EX", "100") == []
    assert effects_of(h, "GETEX", "k", "PXAT", str(NOW - 1)) == [[b"DEL", b"k"]]
    assert h("EXISTS", "k") == 0


def test_getset_getdel_incrbyfloat_propagation():
    h = Harness()
    h("SET", "k", "v", "EX", "100")
    assert effects_of(h, "GETSET", "k", "w") == [[b"SET", b"k", b"w"]]
    assert h("TTL", "k") == -1
    assert effects_of(h, "GETDEL", "k") == [[b"DEL", b"k"]]
    assert effects_of(h, "GETDEL", "k") == []
    h("SET", "f", "10.5", "EX", "100")
    assert effects_of(h, "INCRBYFLOAT", "f", "0.1") == [[b"SET", b"f", b"10.6", b"KEEPTTL"]]
    assert h("TTL", "f") == 100
    assert effects_of(h, "INCRBYFLOAT", "f", "inf") == []


def test_partial_writes_propagate_only_changes():
    h = Harness()
    assert effects_of(h, "APPEND", "a", "") == [[b"APPEND", b"a", b""]]  # creates the key
    assert effects_of(h, "SETRANGE", "r", "5", "") == []
    assert effects_of(h, "SETRANGE", "r", "1", "x") == [[b"SETRANGE", b"r", b"1", b"x"]]
    assert effects_of(h, "SETRANGE", "r", "1", "") == []
    assert effects_of(h, "MSETNX", "r", "1", "z", "2") == []
    assert effects_of(h, "SETNX", "r", "1") == []
    assert effects_of(h, "MSET", "x", "1", "y", "2") == [[b"MSET", b"x", b"1", b"y", b"2"]]


def test_aof_replay_obeys_past_length_limits_and_deadlines():
    h = Harness()
    h.engine.config.set("proto-max-bulk-len", str(1024 * 1024))
    assert h.err("SETRANGE", "k", str(1024 * 1024), "x").startswith(b"ERR string exceeds")
    replay = h.new_client(kind="aof")
    assert h("SETRANGE", "k", str(1024 * 1024), "x", client=replay) == 1024 * 1024 + 1
    h("SET", "g", "v")
    assert h("GETEX", "g", "PXAT", str(NOW - 1), client=replay) == b"v"
    # replayed, a past deadline is stored as given (the key then expires as usual)
    assert h.engine.dbs[0].expires[b"g"] == NOW - 1


def test_getrange_follows_redis_8():
    """Redis 8 answers "" when the end, counted from the end, falls before
    the string; 7.0 answered the first byte
    (https://redis.io/docs/latest/commands/getrange/,
    https://github.com/redis/redis/pull/12272)."""
    h = Harness()
    h("SET", "k", "This is a string")
    assert h("GETRANGE", "k", "-200", "-100") == b""
    assert h("GETRANGE", "k", "0", "-500") == b""
    assert h("SUBSTR", "k", "0", "-17") == b""
    assert h("GETRANGE", "k", "0", "-16") == b"T"
    assert h("GETRANGE", "k", "-100", "-16") == b"T"
    assert h("GETRANGE", "k", "-1", "-3") == b""


def _table(a: bytes, b: bytes) -> list[list[int]]:
    """The textbook dynamic programme: table[i][j] = LCS length of a[:i], b[:j]."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i][j] = (table[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1]
                           else max(table[i - 1][j], table[i][j - 1]))
    return table


def _brute_lcs_length(a: bytes, b: bytes) -> int:
    for size in range(min(len(a), len(b)), 0, -1):
        subs = {bytes(c) for c in combinations(a, size)}
        if any(bytes(c) in subs for c in combinations(b, size)):
            return size
    return 0


@settings(max_examples=300)
@given(st.binary(max_size=7).map(lambda s: bytes(b"ab"[x % 2] for x in s)),
       st.binary(max_size=7).map(lambda s: bytes(b"abc"[x % 3] for x in s)))
def test_lcs_against_brute_force(a, b):
    length, rows = lcs_rows(a, b)
    common, runs = lcs_matches(a, b, rows)
    assert len(common) == length == _brute_lcs_length(a, b) == lcs_rows(a, b, keep=False)[0]
    # every row in bit form is the table's row: bit j clear where L[i][j+1] = L[i][j] + 1
    table = _table(a, b)
    for i, row in enumerate(rows):
        assert [table[i][j + 1] - table[i][j] for j in range(len(b))] == [
            1 - (row >> j & 1) for j in range(len(b))]
    # the runs, read back to front, spell the common subsequence
    assert b"".join(a[s:e + 1] for s, e, _, _ in reversed(runs)) == common
    assert b"".join(b[s:e + 1] for _, _, s, e in reversed(runs)) == common
    for a_start, a_end, b_start, b_end in runs:
        assert a_end - a_start == b_end - b_start >= 0


KEYS = st.sampled_from(["k1", "k2", "k3"])
VALUES = st.binary(max_size=6)


class StringMachine(RuleBasedStateMachine):
    """Random string commands against a dict of bytes."""

    def __init__(self) -> None:
        super().__init__()
        self.h = Harness()
        self.model: dict[str, bytes] = {}

    @rule(key=KEYS, value=VALUES)
    def set(self, key, value):
        self.h.ok("SET", key, value)
        self.model[key] = value

    @rule(key=KEYS, value=VALUES)
    def append(self, key, value):
        self.model[key] = self.model.get(key, b"") + value
        assert self.h("APPEND", key, value) == len(self.model[key])

    @rule(key=KEYS, offset=st.integers(0, 12), value=VALUES)
    def setrange(self, key, offset, value):
        old = self.model.get(key)
        if old is None and not value:
            assert self.h("SETRANGE", key, offset, value) == 0
            return
        old = old or b""
        if value:
            padded = old.ljust(offset, b"\0")
            self.model[key] = padded[:offset] + value + padded[offset + len(value):]
        assert self.h("SETRANGE", key, offset, value) == len(self.model[key])

    @rule(key=KEYS, start=st.integers(-10, 10), end=st.integers(-10, 10))
    def getrange(self, key, start, end):
        value = self.model.get(key, b"")
        n = len(value)
        s = start + n if start < 0 else start
        e = end + n if end < 0 else end
        expected = b"" if (start < 0 and end < 0 and start > end) or e < max(s, 0) \
            else value[max(s, 0):e + 1]
        assert self.h("GETRANGE", key, start, end) == expected

    @rule(key=KEYS)
    def getdel(self, key):
        assert self.h("GETDEL", key) == self.model.pop(key, None)

    @rule(pairs=st.lists(st.tuples(KEYS, VALUES), min_size=1, max_size=3), nx=st.booleans())
    def mset(self, pairs, nx):
        argv = [x for pair in pairs for x in pair]
        if nx:
            free = not any(k in self.model for k, _ in pairs)
            assert self.h("MSETNX", *argv) == int(free)
            if not free:
                return
        else:
            self.h.ok("MSET", *argv)
        self.model.update(pairs)

    @invariant()
    def agrees(self):
        for key in ("k1", "k2", "k3"):
            assert self.h("GET", key) == self.model.get(key)
            assert self.h("STRLEN", key) == len(self.model.get(key, b""))


StringMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=25,
                                           deadline=None)
TestStrings = StringMachine.TestCase
