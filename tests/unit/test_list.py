"""The List type (invariants after every mutation, the OBJECT ENCODING rule),
a hypothesis state machine of the list commands against a Python list, the
timeout parser, blocking pops through the engine (FIFO, effects, MULTI,
timeouts), and persistence: RDB write/read (types 18, 14, 10, 1) and the
AOF rewrite's RPUSH batches."""

from __future__ import annotations

import struct

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from tests.support.engine_harness import Harness
from tidelog.commands.list.common import parse_timeout
from tidelog.engine import BLOCKED
from tidelog.errors import (
    TIMEOUT_NEGATIVE,
    TIMEOUT_NOT_FLOAT,
    TIMEOUT_OUT_OF_RANGE,
    WRONGTYPE,
    CommandError,
)
from tidelog.persistence import aof_rewrite, rdb
from tidelog.rdb import format as rdb_format
from tidelog.rdb import list as rdb_list
from tidelog.rdb.format import Reader, length_bytes, string_bytes
from tidelog.resp.replies import NULL_ARRAY
from tidelog.types import listpack
from tidelog.types.list import List, node_limits

VALUES = [b"", b"0", b"7", b"-1", b"128", b"-4096", b"01", b"+1", b"x", b"hello",
          b"9223372036854775807", b"9223372036854775808", b"v" * 64, b"w" * 300, b"z" * 5000]


# -- the type ---------------------------------------------------------------------------

def test_mutations_keep_the_invariants():
    lst = List([b"a", b"b"])
    lst.check(-2)
    lst.push([b"1", b"2", b"3"], True, -2)
    lst.check(-2)
    assert list(lst) == [b"3", b"2", b"1", b"a", b"b"]
    assert lst.pop(True, -2) == b"3"
    lst.check(-2)
    assert lst.pop_many(2, False, -2) == [b"b", b"a"]
    lst.check(-2)
    assert lst.insert(b"1", b"x", True, -2) == 3
    assert lst.insert(b"nope", b"x", True, -2) == -1
    lst.check(-2)
    assert lst.set(-1, b"y" * 100, -2) and not lst.set(3, b"q", -2)
    lst.check(-2)
    assert lst.remove(0, b"x", -2) == 1
    lst.check(-2)
    assert lst.trim(1, 1, -2) == 1
    lst.check(-2)
    assert list(lst) == [b"y" * 100]
    assert lst.trim(5, 1, -2) == 1 and len(lst) == 0
    lst.check(-2)


def test_range_and_positions():
    lst = List([b"%d" % i for i in range(10)] + [b"3"])
    assert lst.range(0, -1) == list(lst)
    assert lst.range(-3, -2) == [b"8", b"9"]
    assert lst.range(8, 100) == [b"8", b"9", b"3"]
    assert lst.range(5, 2) == [] and lst.range(20, 30) == []
    assert lst.positions(b"3", 1, 0, 0) == [3, 10]
    assert lst.positions(b"3", -1, 1, 0) == [10]
    assert lst.positions(b"3", 2, 0, 0) == [10]
    assert lst.positions(b"3", 1, 0, 3) == []


def test_encoding_follows_the_node_limit():
    """Listpack while the listpack bytes plus the pushed lengths fit one node
    (8 KB at fill -2; 16 elements at fill 16), quicklist after; back to a
    listpack below half the limit after removals (Redis 7.2)."""
    assert node_limits(-2) == (8192, float("inf"))
    assert node_limits(-9) == (65536, float("inf"))
    assert node_limits(16) == (8192, 16)
    lst = List()
    lst.push([b"x" * 1000] * 8, False, -2)
    assert lst.object_encoding() == b"listpack"
    lst.push([b"x" * 200], False, -2)
    assert lst.object_encoding() == b"quicklist"
    lst.check(-2)
    while lst.lp_bytes > 4096:
        assert lst.object_encoding() == b"quicklist"
        lst.pop(True, -2)
    assert lst.object_encoding() == b"listpack"
    counted = List([b"1"] * 16, fill=16)
    assert counted.object_encoding() == b"listpack"
    counted.push([b"2"], True, 16)
    assert counted.object_encoding() == b"quicklist"
    counted.pop_many(8, True, 16)
    assert counted.object_encoding() == b"quicklist"  # 9 > 16 / 2
    counted.pop(True, 16)
    assert counted.object_encoding() == b"listpack"


def test_object_encoding_through_commands():
    h = Harness()
    h.ok("RPUSH", "l", "a")
    assert h.ok("OBJECT", "ENCODING", "l") == b"listpack"
    h.ok("CONFIG", "SET", "list-max-listpack-size", "2")
    assert h.ok("CONFIG", "GET", "list-max-listpack-size").items == [(b"list-max-listpack-size", b"2")]
    h.ok("RPUSH", "l", "b", "c")
    assert h.ok("OBJECT", "ENCODING", "l") == b"quicklist"
    h.ok("RPUSH", "big", "x" * 9000)
    assert h.ok("OBJECT", "ENCODING", "big") == b"quicklist"


@pytest.mark.parametrize("command", [
    ["RPUSH", "lst", "{big}"], ["LINSERT", "lst", "AFTER", "b", "{big}"],
    ["LSET", "lst", "0", "{big}"], ["LMOVE", "src", "lst", "RIGHT", "RIGHT"]])
@pytest.mark.parametrize("fill, big", [(3, "x"), (-1, "x" * 5000)])
def test_conversion_to_quicklist_as_redis_tests_it(command, fill, big):
    """Redis's "List listpack -> quicklist encoding conversion" cases: at
    fill 3 a three-element list turns quicklist on any addition, LSET
    included (it counts as adding one); at fill -1 a 5000-byte element."""
    h = Harness()
    h.ok("CONFIG", "SET", "list-max-listpack-size", fill)
    h.ok("RPUSH", "lst", "a", "b", "c")
    h.ok("RPUSH", "src", big)
    assert h.ok("OBJECT", "ENCODING", "lst") == b"listpack"
    h.ok(*[a.replace("{big}", big) for a in command])
    assert h.ok("OBJECT", "ENCODING", "lst") == b"quicklist"


# -- a state machine against a Python list ------------------------------------------------

ELEMS = st.sampled_from([b"a", b"b", b"1", b"-2", b"x" * 70, b"y" * 3000])
INDEXES = st.integers(-8, 8)


class ListCommands(RuleBasedStateMachine):
    """Random list commands on one key (and a second for moves) through the
    engine, checked against Python lists; List.check() after every step."""

    @initialize(fill=st.sampled_from([-2, -1, 1, 3, 0]))
    def setup(self, fill):
        self.h = Harness()
        self.fill = fill
        self.h.ok("CONFIG", "SET", "list-max-listpack-size", str(fill))
        self.model: dict[bytes, list[bytes]] = {b"k": [], b"m": []}

    def _key(self, second: bool) -> bytes:
        return b"m" if second else b"k"

    @rule(second=st.booleans(), left=st.booleans(), values=st.lists(ELEMS, min_size=1, max_size=6))
    def push(self, second, left, values):
        key = self._key(second)
        reply = self.h.ok("LPUSH" if left else "RPUSH", key, *values)
        if left:
            self.model[key][:0] = values[::-1]
        else:
            self.model[key].extend(values)
        assert reply == len(self.model[key])

    @rule(left=st.booleans(), count=st.one_of(st.none(), st.integers(0, 5)))
    def pop(self, left, count):
        m = self.model[b"k"]
        args = [] if count is None else [count]
        reply = self.h.ok("LPOP" if left else "RPOP", "k", *args)
        if not m:
            assert reply == (None if count is None else NULL_ARRAY)
            return
        n = 1 if count is None else count
        taken = [m.pop(0 if left else -1) for _ in range(min(n, len(m)))]
        assert reply == (taken[0] if count is None else taken)

    @rule(start=INDEXES, stop=INDEXES)
    def lrange_and_ltrim(self, start, stop):
        m = self.model[b"k"]
        n = len(m)
        lo = max(start + n if start < 0 else start, 0)
        hi = min(stop + n if stop < 0 else stop, n - 1)
        expected = m[lo:hi + 1] if lo <= hi else []
        assert self.h.ok("LRANGE", "k", start, stop) == expected

    @rule(start=INDEXES, stop=INDEXES)
    def ltrim(self, start, stop):
        m = self.model[b"k"]
        n = len(m)
        lo = max(start + n if start < 0 else start, 0)
        hi = min(stop + n if stop < 0 else stop, n - 1)
        self.h.ok("LTRIM", "k", start, stop)
        self.model[b"k"] = m[lo:hi + 1] if lo <= hi else []

    @rule(index=INDEXES, value=ELEMS)
    def lset_lindex(self, index, value):
        m = self.model[b"k"]
        inside = -len(m) <= index < len(m)
        assert self.h("LINDEX", "k", index) == (m[index] if inside else None)
        reply = self.h("LSET", "k", index, value)
        if inside:
            m[index] = value
        else:
            assert reply.message in (b"ERR index out of range", b"ERR no such key")

    @rule(count=st.integers(-3, 3), value=ELEMS)
    def lrem(self, count, value):
        m = self.model[b"k"]
        limit = abs(count) or len(m)
        order = range(len(m)) if count >= 0 else range(len(m) - 1, -1, -1)
        drop = [i for i in order if m[i] == value][:limit]
        assert self.h.ok("LREM", "k", count, value) == len(drop)
        self.model[b"k"] = [v for i, v in enumerate(m) if i not in set(drop)]

    @rule(before=st.booleans(), pivot=ELEMS, value=ELEMS)
    def linsert(self, before, pivot, value):
        m = self.model[b"k"]
        reply = self.h.ok("LINSERT", "k", "BEFORE" if before else "AFTER", pivot, value)
        if not m:
            assert reply == 0
        elif pivot not in m:
            assert reply == -1
        else:
            i = m.index(pivot)
            m.insert(i if before else i + 1, value)
            assert reply == len(m)

    @rule(src=st.booleans(), dst=st.booleans(), wf=st.booleans(), wt=st.booleans())
    def lmove(self, src, dst, wf, wt):
        s, d = self._key(src), self._key(dst)
        reply = self.h.ok("LMOVE", s, d, "LEFT" if wf else "RIGHT", "LEFT" if wt else "RIGHT")
        if not self.model[s]:
            assert reply is None
            return
        value = self.model[s].pop(0 if wf else -1)
        if wt:
            self.model[d].insert(0, value)
        else:
            self.model[d].append(value)
        assert reply == value

    @rule(value=ELEMS, rank=st.sampled_from([1, 2, -1, -2]), count=st.integers(0, 3),
          maxlen=st.integers(0, 6))
    def lpos(self, value, rank, count, maxlen):
        m = self.model[b"k"]
        n = len(m)
        order = list(range(n)) if rank > 0 else list(range(n - 1, -1, -1))
        if maxlen:
            order = order[:maxlen]
        hits = [i for i in order if m[i] == value][abs(rank) - 1:]
        if count:
            hits = hits[:count]
        assert self.h.ok("LPOS", "k", value, "RANK", rank, "COUNT", count, "MAXLEN", maxlen) == hits

    @invariant()
    def matches(self):
        if not hasattr(self, "h"):
            return
        for key, m in self.model.items():
            value = self.h.engine.dbs[0].data.get(key)
            if not m:
                assert value is None
                continue
            assert isinstance(value, List)
            value.check(self.fill)
            assert list(value) == m
            assert self.h.ok("LLEN", key) == len(m)
        assert self.h.engine.internal_errors == 0


ListCommands.TestCase.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
TestListCommands = ListCommands.TestCase


# -- timeouts ---------------------------------------------------------------------------

@pytest.mark.parametrize("text, ms", [
    (b"0", 0), (b"1", 1000), (b"0.001", 1), (b"0.0001", 1), (b"1.5", 1500), (b".5", 500),
    (b"1.", 1000), (b"+2", 2000), (b"1e3", 1_000_000), (b"0x10", 16000), (b"0x1p-3", 125),
    (b"-0.0001", 0), (b"1e-400", 1), (b"9999999999999", 9_999_999_999_999_000)])
def test_timeouts_parse(text, ms):
    assert parse_timeout(text) == ms


@pytest.mark.parametrize("text, error", [
    (b"x", TIMEOUT_NOT_FLOAT), (b"", TIMEOUT_NOT_FLOAT), (b" 1", TIMEOUT_NOT_FLOAT),
    (b"nan", TIMEOUT_NOT_FLOAT), (b"1e5000", TIMEOUT_NOT_FLOAT), (b"0x", TIMEOUT_NOT_FLOAT),
    (b"-1", TIMEOUT_NEGATIVE), (b"-inf", TIMEOUT_NEGATIVE), (b"-1e30", TIMEOUT_NEGATIVE),
    (b"inf", TIMEOUT_OUT_OF_RANGE), (b"1e30", TIMEOUT_OUT_OF_RANGE),
    (b"9223372036854776", TIMEOUT_OUT_OF_RANGE), (b"1e4000", TIMEOUT_OUT_OF_RANGE)])
def test_timeout_errors(text, error):
    with pytest.raises(CommandError) as exc:
        parse_timeout(text)
    assert exc.value.message == error


def test_timeout_deadline_overflow_is_out_of_range():
    """Redis 7.2 (redis/redis#11338): the deadline, now plus the timeout,
    must fit a long long too."""
    now = 1_700_000_000_000
    assert parse_timeout(b"9223370336854775", now) == 9223370336854775000
    with pytest.raises(CommandError) as exc:
        parse_timeout(b"9223370336854776", now)
    assert exc.value.message == TIMEOUT_OUT_OF_RANGE


# -- blocking through the engine ------------------------------------------------------------

def test_blocked_clients_are_served_fifo_with_effects():
    h = Harness()
    a, b, c = h.new_client(), h.new_client(), h.new_client()
    assert h("BLPOP", "q", "0", client=a) is BLOCKED
    assert h("BRPOP", "x", "q", "0", client=b) is BLOCKED
    assert h("BLMPOP", "0", "1", "q", "LEFT", "COUNT", "5", client=c) is BLOCKED
    h.take_effects()
    assert h.ok("RPUSH", "q", "1", "2", "3", "4") == 4
    assert a.inbox == [[b"q", b"1"]]
    assert b.inbox == [[b"q", b"4"]]
    assert c.inbox == [[b"q", [b"2", b"3"]]]
    assert h.take_effects() == [[b"RPUSH", b"q", b"1", b"2", b"3", b"4"], [b"LPOP", b"q"],
                                [b"RPOP", b"q"], [b"LPOP", b"q", b"2"]]
    assert h.engine.waiters == {} and b"q" not in h.engine.dbs[0].data
    assert h.engine.internal_errors == 0


def test_blmove_chain_and_wrong_type_stays_blocked():
    h = Harness()
    a, b = h.new_client(), h.new_client()
    assert h("BLMOVE", "src", "mid", "LEFT", "RIGHT", "0", client=a) is BLOCKED
    assert h("BRPOPLPUSH", "mid", "dst", "0", client=b) is BLOCKED
    h.ok("SET", "src", "v")  # another type: still blocked
    assert a.inbox == [] and h.engine.blocked_clients == 2
    h.ok("DEL", "src")
    h.take_effects()
    h.ok("LPUSH", "src", "e")
    assert a.inbox == [b"e"] and b.inbox == [b"e"]
    assert h.take_effects() == [[b"LPUSH", b"src", b"e"], [b"LMOVE", b"src", b"mid", b"LEFT", b"RIGHT"],
                                [b"RPOPLPUSH", b"mid", b"dst"]]
    assert h.ok("LRANGE", "dst", 0, -1) == [b"e"]


def test_blocking_pop_in_multi_and_wrongtype():
    h = Harness()
    h.ok("MULTI")
    h.ok("BLPOP", "q", "0")
    h.ok("BLMOVE", "q", "r", "LEFT", "LEFT", "0")
    assert h.ok("EXEC") == [NULL_ARRAY, None]
    h.ok("SET", "s", "v")
    assert h.err("BLPOP", "q", "s", "0") == WRONGTYPE
    assert h.engine.blocked_clients == 0


def test_served_client_gets_wrongtype_from_an_earlier_key():
    """Redis 7.2 runs the served command again: a key before the woken one
    that now holds a string answers WRONGTYPE."""
    h = Harness()
    a = h.new_client()
    assert h("BLPOP", "first", "second", "0", client=a) is BLOCKED
    h.ok("MULTI")
    h.ok("SET", "first", "v")
    h.ok("RPUSH", "second", "x")
    h.ok("EXEC")
    assert [r.message for r in a.inbox] == [WRONGTYPE]
    assert h.ok("LLEN", "second") == 1


# -- persistence ----------------------------------------------------------------------------

def _dbs_with(*lists):
    h = Harness()
    for i, values in enumerate(lists):
        h.ok("RPUSH", f"l{i}", *values)
    return h.engine.dbs


@pytest.mark.parametrize("compress", [True, False])
def test_rdb_round_trip(compress):
    lists = [[b"a"], VALUES, [b"%d" % i for i in range(3000)], [b"q" * 20000, b"r"]]
    snap = rdb.loads(rdb.dumps(_dbs_with(*lists), compress=compress))
    loaded = {k: v for k, v, _ in snap.dbs[0]}
    for i, values in enumerate(lists):
        value = loaded[b"l%d" % i]
        value.check(-2)
        assert list(value) == values


def test_rdb_nodes_are_listpacks_of_8k():
    lst = List([b"x" * 100] * 500)
    rdbtype, payload = rdb_list.write_list(lst, False)
    assert rdbtype == 18
    r = Reader(payload)
    nodes = r.length()
    assert nodes > 1
    for _ in range(nodes):
        assert r.length() == 2
        assert len(r.string()) <= 8192


def _ziplist(values: list[bytes]) -> bytes:
    """A ziplist of strings and small ints, as Redis 6 wrote them."""
    body = b""
    prev = 0
    for v in values:
        if v.isdigit() and int(v) <= 12:
            entry = bytes([prev, 0xF1 + int(v)])
        elif v.lstrip(b"-").isdigit() and -32768 <= int(v) < 32768 and not (0 <= int(v) <= 12):
            entry = bytes([prev, 0xC0]) + struct.pack("<h", int(v))
        elif len(v) < 64:
            entry = bytes([prev, len(v)]) + v
        else:
            entry = bytes([prev, 0x40 | (len(v) >> 8), len(v) & 0xFF]) + v
        assert len(entry) < 254
        prev = len(entry)
        body += entry
    total = 10 + len(body) + 1
    return struct.pack("<IIH", total, 10, len(values)) + body + b"\xff"


def test_rdb_reads_old_list_types():
    values = [b"a", b"7", b"-300", b"hello", b"y" * 100]
    zl = _ziplist(values)
    assert rdb_format.ziplist_entries(zl) == values
    quick = length_bytes(2) + string_bytes(zl, False) + string_bytes(_ziplist([b"z"]), True)
    assert list(rdb_list.read_quicklist(Reader(quick))) == values + [b"z"]
    assert list(rdb_list.read_ziplist(Reader(string_bytes(zl, False)))) == values
    plain = length_bytes(2) + string_bytes(b"p", False) + string_bytes(b"42", False)
    assert list(rdb_list.read_plain(Reader(plain))) == [b"p", b"42"]
    packed = length_bytes(2) + length_bytes(1) + string_bytes(b"plain" * 10, False) + \
        length_bytes(2) + string_bytes(listpack.pack([b"a", 5]), False)
    assert list(rdb_list.read_quicklist_2(Reader(packed))) == [b"plain" * 10, b"a", b"5"]


def test_aof_rewrite_batches_64_and_replays():
    h = Harness()
    values = [b"%d" % i for i in range(150)] + [b"x" * 100]
    h.ok("RPUSH", "l", *values)
    commands = list(aof_rewrite.dataset_commands(h.engine))
    pushes = [c for c in commands if c[0] == b"RPUSH"]
    assert [len(c) - 2 for c in pushes] == [64, 64, 23]
    replay = Harness()
    for argv in commands:
        replay.ok(*argv)
    assert replay.ok("LRANGE", "l", 0, -1) == values


# -- blocked clients against a model ----------------------------------------------------------

class BlockingPops(RuleBasedStateMachine):
    """Clients blocking on lists ``a``/``b``, served by pushes (alone or in
    a transaction), against a model of Redis 7.2's rules: waiters on a ready
    key are served in the order they blocked, each popping from the first
    of its keys that has elements."""

    CLIENTS = 4

    @initialize()
    def setup(self):
        self.h = Harness()
        self.clients = [self.h.new_client() for _ in range(self.CLIENTS)]
        self.lists: dict[bytes, list[bytes]] = {b"a": [], b"b": []}
        self.waiting: list[tuple[int, list[bytes], bool]] = []  # in blocking order
        self.expected: list[list] = [[] for _ in range(self.CLIENTS)]
        self.counter = 0

    def _pop_first(self, keys, left):
        for key in keys:
            if self.lists[key]:
                return [key, self.lists[key].pop(0 if left else -1)]
        return None

    def _serve(self, ready: list[bytes]):
        for key in dict.fromkeys(ready):
            for entry in list(self.waiting):
                n, keys, left = entry
                if key in keys and self.lists[key] and entry in self.waiting:
                    self.waiting.remove(entry)
                    self.expected[n].append(self._pop_first(keys, left))

    @rule(n=st.integers(0, CLIENTS - 1), keys=st.sampled_from([[b"a"], [b"b"], [b"a", b"b"],
                                                                [b"b", b"a"]]),
          left=st.booleans())
    def block(self, n, keys, left):
        if any(w[0] == n for w in self.waiting):
            return
        reply = self.h("BLPOP" if left else "BRPOP", *keys, 0, client=self.clients[n])
        now = self._pop_first(keys, left)
        if now is None:
            assert reply is BLOCKED
            self.waiting.append((n, keys, left))
        else:
            assert reply == now

    def _values(self, k):
        self.counter += k
        return [b"v%d" % i for i in range(self.counter - k, self.counter)]

    @rule(key=st.sampled_from([b"a", b"b"]), k=st.integers(1, 3), left=st.booleans())
    def push(self, key, k, left):
        values = self._values(k)
        reply = self.h.ok("LPUSH" if left else "RPUSH", key, *values)
        if left:
            self.lists[key][:0] = values[::-1]
        else:
            self.lists[key].extend(values)
        assert reply == len(self.lists[key])  # counted before any waiter pops
        self._serve([key])

    @rule(first=st.sampled_from([b"a", b"b"]), k=st.integers(1, 2))
    def push_both_in_multi(self, first, k):
        second = b"b" if first == b"a" else b"a"
        self.h.ok("MULTI")
        for key in (first, second):
            self.h.ok("RPUSH", key, *self._values(k))
        self.h.ok("EXEC")
        self.counter -= 2 * k
        for key in (first, second):
            self.lists[key].extend(self._values(k))
        self._serve([first, second])

    @invariant()
    def agrees(self):
        if not hasattr(self, "h"):
            return
        for n, client in enumerate(self.clients):
            assert client.inbox == self.expected[n]
        for key, values in self.lists.items():
            assert self.h.ok("LRANGE", key, 0, -1) == values
        assert self.h.engine.blocked_clients == len(self.waiting)
        assert self.h.engine.internal_errors == 0


BlockingPops.TestCase.settings = settings(max_examples=150, stateful_step_count=30, deadline=None)
TestBlockingPops = BlockingPops.TestCase
