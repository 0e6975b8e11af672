"""List commands against redis-server 7.0.15: the same commands to both
servers, raw reply bytes compared, over RESP2 and RESP3 (the ``d`` fixture).

OBJECT ENCODING is not compared: 7.0 always says ``quicklist``, Redis 7.2+
says ``listpack`` for small lists (tests/unit/test_list.py checks the
documented rule).  Blocking pops are compared with two clients: the
blocked one is a :class:`Pair`.  Known differences from 7.0 (Redis 7.2+
behaviour we follow) are asserted as such at the end.
"""

from __future__ import annotations

import pytest

from tests.support.differ_tools import (
    Pair,
    assert_effects_match_aof,
    captured_effects,
    wait_blocked,
)
from tests.support.rawclient import RawClient

pytestmark = pytest.mark.differential


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def d(differ, request):
    if request.param == 3:
        differ.resp3()
    return differ


def dump(d, *keys):
    for key in keys:
        d.check("LRANGE", key, 0, -1)
        d.check("LLEN", key)
        d.check("EXISTS", key)
        d.check("TYPE", key)


def wrong_types(d):
    d.check("SET", "str", "v")
    d.check("XADD", "stream", "1-1", "f", "v")


ALL_ON_KEY = [
    ["LPUSH", "{k}", "a"], ["RPUSH", "{k}", "a"], ["LPUSHX", "{k}", "a"], ["RPUSHX", "{k}", "a"],
    ["LPOP", "{k}"], ["RPOP", "{k}"], ["LPOP", "{k}", "2"], ["RPOP", "{k}", "0"], ["LLEN", "{k}"],
    ["LRANGE", "{k}", "0", "-1"], ["LINDEX", "{k}", "0"], ["LSET", "{k}", "0", "x"],
    ["LINSERT", "{k}", "BEFORE", "a", "b"], ["LREM", "{k}", "0", "a"], ["LTRIM", "{k}", "0", "1"],
    ["LPOS", "{k}", "a"], ["LPOS", "{k}", "a", "COUNT", "0"], ["LMOVE", "{k}", "l", "LEFT", "RIGHT"],
    ["LMOVE", "l", "{k}", "LEFT", "RIGHT"], ["RPOPLPUSH", "{k}", "l"], ["RPOPLPUSH", "l", "{k}"],
    ["LMPOP", "1", "{k}", "LEFT"], ["LMPOP", "2", "empty", "{k}", "RIGHT", "COUNT", "3"],
    ["BLPOP", "{k}", "0"], ["BRPOP", "empty", "{k}", "0"], ["BLMOVE", "{k}", "l", "LEFT", "LEFT", "0"],
    ["BLMOVE", "l", "{k}", "LEFT", "LEFT", "0"], ["BRPOPLPUSH", "{k}", "l", "0"],
    ["BRPOPLPUSH", "l", "{k}", "0"], ["BLMPOP", "0", "2", "empty", "{k}", "LEFT"],
]


def test_wrongtype_for_every_command(d):
    wrong_types(d)
    d.check("RPUSH", "l", "1", "2", "3")
    for key in ("str", "stream"):
        for argv in ALL_ON_KEY:
            d.check(*[a.replace("{k}", key) for a in argv])
    dump(d, "l", "str", "stream")


def test_arity_and_syntax(d):
    for argv in (["LPUSH", "k"], ["RPUSH"], ["LPUSHX", "k"], ["LPOP"], ["RPOP", "k", "1", "2"],
                 ["LPOP", "k", "1", "2"], ["LLEN"], ["LLEN", "a", "b"], ["LRANGE", "k", "0"],
                 ["LINDEX", "k"], ["LSET", "k", "0"], ["LINSERT", "k", "BEFORE", "a"],
                 ["LREM", "k", "0"], ["LTRIM", "k", "0"], ["LPOS", "k"], ["LMOVE", "a", "b", "LEFT"],
                 ["RPOPLPUSH", "a"], ["LMPOP", "1", "k"], ["BLPOP", "k"], ["BRPOP", "k"],
                 ["BLMOVE", "a", "b", "LEFT", "LEFT"], ["BRPOPLPUSH", "a", "b"],
                 ["BLMPOP", "0", "1", "k"]):
        d.check(*argv)
    d.check("RPUSH", "k", "a", "b")
    for argv in (["LINSERT", "k", "MIDDLE", "a", "x"], ["LMOVE", "k", "k", "UP", "LEFT"],
                 ["LMOVE", "k", "k", "LEFT", "DOWN"], ["LMOVE", "k", "k", "left", "Right"],
                 ["LMOVE", "nokey", "k", "UP", "LEFT"],
                 ["BLMOVE", "k", "k", "LEF", "LEFT", "0"], ["BLMOVE", "k", "k", "LEFT", "LEFT", "x"],
                 ["BLMOVE", "k", "k", "X", "LEFT", "x"], ["BLMOVE", "k", "k", "LEFT", "LEFT", "-1"],
                 ["BRPOPLPUSH", "k", "k", "-1"], ["BRPOPLPUSH", "k", "k", "a"]):
        d.check(*argv)
    dump(d, "k")


def test_push_and_range(d):
    d.check("LPUSH", "l", "a", "b", "c")
    d.check("RPUSH", "l", "x", "y")
    d.check("LPUSHX", "l", "p")
    d.check("RPUSHX", "l", "q", "r")
    d.check("LPUSHX", "none", "p")
    d.check("RPUSHX", "none", "p", "q")
    d.check("RPUSH", "l", "", "12", "-5", "1" * 70, "x" * 5000)
    dump(d, "l", "none")
    for start, stop in [(0, 0), (0, 2), (-3, -1), (-100, 100), (5, 2), (100, 200), (-1, -2),
                        (2, -2), (0, -100), (-2**63, 2**63 - 1), (3, 3), (-1, -1)]:
        d.check("LRANGE", "l", start, stop)
        d.check("LRANGE", "none", start, stop)
    for bad in ("x", "1.5", "", " 1", "9223372036854775808"):
        d.check("LRANGE", "l", bad, "1")
        d.check("LRANGE", "l", "0", bad)
        d.check("LRANGE", "none", bad, "1")


def test_pops(d):
    d.check("RPUSH", "l", *"abcdefgh")
    d.check("LPOP", "l")
    d.check("RPOP", "l")
    d.check("LPOP", "l", "0")
    d.check("RPOP", "l", "0")
    d.check("LPOP", "l", "2")
    d.check("RPOP", "l", "1")
    d.check("RPOP", "l", "100")
    dump(d, "l")
    for argv in (["LPOP", "l"], ["RPOP", "l"], ["LPOP", "l", "0"], ["LPOP", "l", "3"],
                 ["RPOP", "l", "1"]):
        d.check(*argv)  # the key is gone
    d.check("RPUSH", "l", "a")
    for bad in ("-1", "x", "", "1.0", "9223372036854775808", "-9223372036854775808"):
        d.check("LPOP", "l", bad)
        d.check("RPOP", "missing", bad)
    d.check("LPOP", "l", "9223372036854775807")
    dump(d, "l")


def test_lindex_lset(d):
    d.check("RPUSH", "l", "a", "b", "c")
    for i in ("0", "2", "3", "-1", "-3", "-4", "100", "-9223372036854775808", "x", "1.0"):
        d.check("LINDEX", "l", i)
        d.check("LINDEX", "missing", i)
        d.check("LSET", "l", i, "new" + i)
        d.check("LSET", "missing", i, "v")
    d.check("LSET", "l", "1", "x" * 10000)
    dump(d, "l")


def test_linsert(d):
    d.check("RPUSH", "l", "a", "b", "a", "c")
    d.check("LINSERT", "l", "BEFORE", "a", "x")
    d.check("LINSERT", "l", "after", "a", "y")
    d.check("LINSERT", "l", "AFTER", "c", "z")
    d.check("LINSERT", "l", "BEFORE", "nope", "z")
    d.check("LINSERT", "missing", "BEFORE", "a", "z")
    d.check("LINSERT", "missing", "SIDEWAYS", "a", "z")
    dump(d, "l", "missing")


def test_lrem(d):
    d.check("RPUSH", "l", *"abacabaxa")
    d.check("LREM", "l", "2", "a")
    d.check("LREM", "l", "-1", "a")
    d.check("LREM", "l", "0", "b")
    d.check("LREM", "l", "0", "nope")
    d.check("LREM", "l", "x", "a")
    d.check("LREM", "missing", "0", "a")
    dump(d, "l")
    d.check("LREM", "l", "0", "a")
    d.check("LREM", "l", "-100", "c")
    d.check("LREM", "l", "100", "x")
    dump(d, "l")


def test_ltrim(d):
    for start, stop in [(0, -1), (1, -2), (-3, -1), (5, 2), (0, 0), (-100, 100), (100, 200),
                        (2, 100), (-1, -1), (0, -100)]:
        d.check("DEL", "l")
        d.check("RPUSH", "l", *"abcdefg")
        d.check("LTRIM", "l", start, stop)
        dump(d, "l")
    d.check("LTRIM", "missing", "0", "1")
    d.check("LTRIM", "l", "x", "1")
    d.check("LTRIM", "missing", "0", "y")


def test_lpos(d):
    d.check("RPUSH", "l", *"abcabcaab")
    for opts in ([], ["RANK", "1"], ["RANK", "2"], ["RANK", "-1"], ["RANK", "-3"], ["RANK", "9"],
                 ["COUNT", "0"], ["COUNT", "2"], ["COUNT", "0", "RANK", "-2"],
                 ["MAXLEN", "3"], ["MAXLEN", "3", "RANK", "-1", "COUNT", "0"],
                 ["MAXLEN", "0"], ["RANK", "2", "COUNT", "1", "MAXLEN", "5"],
                 ["RANK", "0"], ["RANK", "x"], ["COUNT", "-1"], ["COUNT", "x"], ["MAXLEN", "-1"],
                 ["MAXLEN", "x"], ["RANK"], ["FOO", "1"], ["COUNT", "1", "COUNT", "0"],
                 ["RANK", "9223372036854775807"]):
        d.check("LPOS", "l", "a", *opts)
        d.check("LPOS", "l", "z", *opts)
        d.check("LPOS", "missing", "a", *opts)


def test_lmove_and_rpoplpush(d):
    d.check("RPUSH", "a", "1", "2", "3")
    for wf in ("LEFT", "RIGHT"):
        for wt in ("LEFT", "right"):
            d.check("LMOVE", "a", "b", wf, wt)
            dump(d, "a", "b")
    d.check("LMOVE", "b", "b", "LEFT", "RIGHT")  # rotate
    d.check("RPOPLPUSH", "b", "b")
    d.check("RPOPLPUSH", "a", "c")
    d.check("RPOPLPUSH", "a", "c")  # a is gone now
    d.check("LMOVE", "a", "c", "LEFT", "LEFT")
    d.check("RPUSH", "one", "x")
    d.check("LMOVE", "one", "one", "LEFT", "RIGHT")
    d.check("RPOPLPUSH", "one", "two")
    dump(d, "a", "b", "c", "one", "two")


def test_lmpop(d):
    d.check("RPUSH", "a", *"abcde")
    d.check("RPUSH", "b", "x")
    d.check("LMPOP", "2", "missing", "a", "LEFT")
    d.check("LMPOP", "2", "b", "a", "right", "COUNT", "3")
    d.check("LMPOP", "1", "a", "RIGHT", "COUNT", "10")
    d.check("LMPOP", "3", "a", "b", "c", "LEFT")
    for argv in (["0", "a", "LEFT"], ["-1", "a", "LEFT"], ["x", "a", "LEFT"], ["2", "a", "LEFT"],
                 ["1", "a", "MIDDLE"], ["1", "a", "LEFT", "COUNT", "0"],
                 ["1", "a", "LEFT", "COUNT", "-1"], ["1", "a", "LEFT", "COUNT"],
                 ["1", "a", "LEFT", "COUNT", "1", "COUNT", "1"], ["1", "a", "LEFT", "extra"],
                 ["9223372036854775807", "a", "LEFT"], ["9223372036854775808", "a", "LEFT"]):
        d.check("LMPOP", *argv)
        d.check("BLMPOP", "0", *argv)
    d.check("BLMPOP", "x", "1", "a", "LEFT")
    d.check("BLMPOP", "-1", "1", "a", "LEFT")
    d.check("BLMPOP", "x", "0", "a", "LEFT")
    d.check("RPUSH", "s", "1")
    d.check("SET", "str", "v")
    d.check("LMPOP", "2", "s", "str", "LEFT")   # the first list is popped
    d.check("LMPOP", "2", "s", "str", "LEFT")   # then the string answers WRONGTYPE
    dump(d, "a", "b", "s")


def test_blocking_pops_answer_at_once(d):
    d.check("RPUSH", "a", "1", "2", "3")
    d.check("RPUSH", "b", "x", "y")
    d.check("BLPOP", "missing", "a", "b", "0")
    d.check("BRPOP", "b", "a", "1.5")
    d.check("BLMPOP", "0", "2", "a", "b", "RIGHT", "COUNT", "5")
    d.check("BLMOVE", "b", "c", "RIGHT", "LEFT", "0")
    d.check("BRPOPLPUSH", "c", "d", "0.01")
    d.check("SET", "str", "v")
    d.check("BLPOP", "missing", "str", "d", "0")
    d.check("BLPOP", "d", "str", "0")
    dump(d, "a", "b", "c", "d")


TIMEOUTS = ["x", "", "1.5x", "-1", "-0.5", "-inf", "nan", " 1", "1 ", "1e5000", "0x", "1e",
            "--1", "+-1", "-1e30"]


def test_timeout_errors(d):
    for t in TIMEOUTS:
        d.check("BLPOP", "k", t)
        d.check("BRPOP", "k", "j", t)
        d.check("BLMOVE", "k", "j", "LEFT", "LEFT", t)
        d.check("BRPOPLPUSH", "k", "j", t)
        d.check("BLMPOP", t, "1", "k", "LEFT")


@pytest.mark.parametrize("timeout", ["0", "0.001", "1e-3", ".5", "1.", "+1", "0x10", "0x1p-3",
                                     "100", "1e-400", "9999999999999", "-0.0001"])
def test_valid_timeouts_in_multi(d, timeout):
    """In MULTI a blocking pop never blocks: each timeout form parses and
    answers nil at once."""
    d.check("MULTI")
    d.check("BLPOP", "k", timeout)
    d.check("BLMOVE", "k", "j", "LEFT", "LEFT", timeout)
    d.check("BRPOPLPUSH", "k", "j", timeout)
    d.check("BLMPOP", timeout, "1", "k", "LEFT")
    d.check("BRPOP", "k", timeout)
    d.check("EXEC")


def test_blocking_in_multi_with_data(d):
    d.check("MULTI")
    d.check("RPUSH", "k", "1", "2")
    d.check("BLPOP", "k", "0")
    d.check("BLMOVE", "k", "j", "LEFT", "LEFT", "0")
    d.check("BLPOP", "k", "0")
    d.check("BLMPOP", "0", "1", "j", "LEFT", "COUNT", "2")
    d.check("EXEC")
    dump(d, "k", "j")


def test_watch_sees_list_changes(d):
    d.check("RPUSH", "l", "a", "b")
    for change in (["LPUSH", "l", "x"], ["LPOP", "l"], ["LSET", "l", "0", "y"],
                   ["LTRIM", "l", "0", "-1"], ["LREM", "l", "0", "nope"],
                   ["LINSERT", "l", "BEFORE", "nope", "x"], ["RPOPLPUSH", "l", "m"]):
        d.check("WATCH", "l")
        d.check(*change)
        d.check("MULTI")
        d.check("LLEN", "l")
        d.check("EXEC")


# -- blocked clients ---------------------------------------------------------------------

def _both(pair):
    ours, theirs = pair.replies()
    assert ours == theirs, (ours, theirs)
    return ours


@pytest.mark.parametrize("proto", [2, 3])
def test_blpop_served_fifo_after_the_push(differ, tidelog, proto):
    pairs = [Pair(differ) for _ in range(3)]
    try:
        for p in pairs:
            if proto == 3:
                p.call("HELLO", "3")
        pairs[0].send("BLPOP", "q", "0")
        wait_blocked(differ, tidelog, 1)
        pairs[1].send("BRPOP", "other", "q", "0")
        wait_blocked(differ, tidelog, 2)
        pairs[2].send("BLMPOP", "0", "2", "q", "other", "LEFT", "COUNT", "5")
        wait_blocked(differ, tidelog, 3)
        differ.check("RPUSH", "q", "a", "b", "c", "d")  # replies 4: the pops come after
        assert _both(pairs[0]) is not None
        _both(pairs[1])
        _both(pairs[2])
        dump(differ, "q")
        wait_blocked(differ, tidelog, 0)
    finally:
        for p in pairs:
            p.close()


def test_blocked_timeout_reply(differ, tidelog):
    pair = Pair(differ)
    try:
        for argv in (["BLPOP", "q", "0.05"], ["BLMOVE", "q", "r", "LEFT", "LEFT", "0.05"],
                     ["BRPOPLPUSH", "q", "r", "0.05"], ["BLMPOP", "0.05", "1", "q", "LEFT"]):
            pair.send(*argv)
            _both(pair)
        pair.call("HELLO", "3")
        for argv in (["BRPOP", "q", "0.05"], ["BLMOVE", "q", "r", "LEFT", "LEFT", "0.05"],
                     ["BLMPOP", "0.05", "1", "q", "LEFT"]):
            pair.send(*argv)
            _both(pair)
    finally:
        pair.close()


def test_served_by_exec_and_by_lmove_chain(differ, tidelog):
    a, b, c = Pair(differ), Pair(differ), Pair(differ)
    try:
        a.send("BLMOVE", "src", "mid", "LEFT", "RIGHT", "0")
        wait_blocked(differ, tidelog, 1)
        b.send("BRPOPLPUSH", "mid", "dst", "0")
        wait_blocked(differ, tidelog, 2)
        c.send("BLPOP", "dst", "0")
        wait_blocked(differ, tidelog, 3)
        differ.check("MULTI")
        differ.check("RPUSH", "src", "x", "y")
        differ.check("LLEN", "src")
        differ.check("EXEC")
        _both(a)
        _both(b)
        _both(c)
        dump(differ, "src", "mid", "dst")
    finally:
        for p in (a, b, c):
            p.close()


def test_blocked_on_a_key_that_becomes_another_type(differ, tidelog):
    """A string or stream at the key leaves the list waiter blocked; a
    stream reader and a list popper may wait on one key."""
    pop, read = Pair(differ), Pair(differ)
    try:
        pop.send("BLPOP", "k", "0")
        wait_blocked(differ, tidelog, 1)
        read.send("XREAD", "BLOCK", "0", "STREAMS", "k", "$")
        wait_blocked(differ, tidelog, 2)
        differ.check("SET", "k", "v")
        differ.check("DEL", "k")
        differ.check("XADD", "k", "1-1", "f", "v")
        _both(read)
        wait_blocked(differ, tidelog, 1)
        differ.check("DEL", "k")
        differ.check("LPUSH", "k", "x")
        _both(pop)
        dump(differ, "k")
    finally:
        pop.close()
        read.close()


def test_blocked_push_then_pop_in_one_transaction(differ, tidelog):
    """The list is empty again when EXEC ends: the waiter stays blocked."""
    pair = Pair(differ)
    try:
        pair.send("BRPOP", "k", "0")
        wait_blocked(differ, tidelog, 1)
        differ.check("MULTI")
        differ.check("LPUSH", "k", "x")
        differ.check("LPOP", "k")
        differ.check("EXEC")
        wait_blocked(differ, tidelog, 1)
        differ.check("RPUSH", "k", "y", "z")
        _both(pair)
        dump(differ, "k")
    finally:
        pair.close()


def test_client_unblock(differ, tidelog):
    pair = Pair(differ)
    try:
        ids = pair.call("CLIENT", "ID")
        pair.send("BLPOP", "k", "0")
        wait_blocked(differ, tidelog, 1)
        ours = RawClient(differ.ours.sock.getpeername()[1])
        theirs = RawClient(differ.theirs.sock.getpeername()[1])
        try:
            assert ours.call("CLIENT", "UNBLOCK", ids[0][1:-2]) == b":1\r\n"
            assert theirs.call("CLIENT", "UNBLOCK", ids[1][1:-2]) == b":1\r\n"
        finally:
            ours.close()
            theirs.close()
        _both(pair)
    finally:
        pair.close()


# -- effects: what we propagate against Redis's AOF -------------------------------------------

EFFECT_SCRIPT = [
    ["RPUSH", "l", "a", "b", "c", "d", "e", "f"], ["LPUSH", "l", "z"], ["LPUSHX", "none", "x"],
    ["RPUSHX", "l", "y"], ["LPOP", "l"], ["RPOP", "l", "2"], ["LPOP", "l", "0"], ["LPOP", "none"],
    ["LSET", "l", "0", "A"], ["LINSERT", "l", "BEFORE", "nope", "x"],
    ["LINSERT", "l", "AFTER", "A", "x"], ["LREM", "l", "0", "nope"], ["LREM", "l", "1", "x"],
    ["LTRIM", "l", "0", "-1"], ["LTRIM", "l", "0", "2"], ["LMOVE", "l", "m", "left", "RIGHT"],
    ["RPOPLPUSH", "l", "m"], ["RPOPLPUSH", "none", "m"], ["LMPOP", "2", "none", "m", "RIGHT", "COUNT", "9"],
    ["RPUSH", "q", "1", "2", "3"], ["BLPOP", "none", "q", "0"], ["BRPOP", "q", "0"],
    ["BLMOVE", "q", "r", "Left", "right", "0"], ["RPUSH", "q", "4", "5"],
    ["BRPOPLPUSH", "q", "r", "0"], ["BLMPOP", "0", "1", "r", "LEFT", "COUNT", "10"],
    ["LMPOP", "1", "q", "left"], ["LLEN", "q"], ["LRANGE", "l", "0", "-1"],
    ["MULTI"], ["RPUSH", "t", "1"], ["BLPOP", "t", "0"], ["BLPOP", "t", "0"], ["EXEC"],
]


def test_effects_match_redis_aof(tidelog, aof_oracle):
    assert_effects_match_aof(tidelog, aof_oracle, EFFECT_SCRIPT)


def test_served_pops_propagate_their_non_blocking_forms(differ, tidelog):
    """Served blocked clients: BLPOP -> LPOP key, BRPOP -> RPOP key, BLMPOP ->
    LPOP key n, BLMOVE -> LMOVE, BRPOPLPUSH -> RPOPLPUSH (as redis-server
    7.0 writes them to its AOF; checked there by test_effects_match_redis_aof
    for the pops that answer at once)."""
    pairs = [Pair(differ) for _ in range(5)]
    try:
        with captured_effects(tidelog) as captured:
            sends = [("BLPOP", "a", "0"), ("BRPOP", "b", "a", "0"),
                     ("BLMPOP", "0", "1", "a", "RIGHT", "COUNT", "2"),
                     ("BLMOVE", "a", "x", "right", "Left", "0"), ("BRPOPLPUSH", "a", "y", "0")]
            for n, (pair, argv) in enumerate(zip(pairs, sends)):
                pair.send(*argv)
                wait_blocked(differ, tidelog, n + 1)
            differ.check("RPUSH", "a", *"123456")
            for pair in pairs:
                _both(pair)
            got = tidelog.call(lambda: list(captured))
        assert got == [
            [b"RPUSH", b"a", *[c.encode() for c in "123456"]],
            [b"LPOP", b"a"], [b"RPOP", b"a"], [b"RPOP", b"a", b"2"],
            [b"LMOVE", b"a", b"x", b"right", b"Left"], [b"RPOPLPUSH", b"a", b"y"],
        ]
    finally:
        for pair in pairs:
            pair.close()


# -- Redis 7.2+ behaviour (redis-server 7.0 differs) ------------------------------------------

def test_served_client_pops_the_first_nonempty_key(differ, tidelog):
    """Redis 7.2 runs a served blocking command again (the "blocked clients
    are reprocessed" change of 7.2, https://raw.githubusercontent.com/redis/redis/7.2/00-RELEASENOTES):
    woken by ``b``, ``BLPOP a b`` pops from ``a`` when a transaction filled
    both; redis-server 7.0 pops from the key that woke it."""
    pair = Pair(differ)
    try:
        pair.send("BLPOP", "a", "b", "0")
        wait_blocked(differ, tidelog, 1)
        differ.check("MULTI")
        differ.check("RPUSH", "b", "from-b")
        differ.check("RPUSH", "a", "from-a")
        differ.check("EXEC")
        ours, theirs = pair.replies()
        assert ours == b"*2\r\n$1\r\na\r\n$6\r\nfrom-a\r\n"
        assert theirs == b"*2\r\n$1\r\nb\r\n$6\r\nfrom-b\r\n"
    finally:
        pair.close()


def test_llong_min_rank_and_count_are_refused(differ):
    """LPOS RANK and LREM's count refuse -2**63 (Redis 7.2, redis/redis#12167;
    Redis 8.0, redis/redis#12465); 7.0 reads them as -1 and 0."""
    differ.check("RPUSH", "l", "a", "b", "a")
    out_of_range = (b"-ERR value is out of range, value must between -9223372036854775807 and "
                    b"9223372036854775807\r\n")
    for argv in (["LPOS", "l", "a", "RANK", "-9223372036854775808"],
                 ["LREM", "l", "-9223372036854775808", "a"]):
        assert differ.ours.call(*argv) == out_of_range
        assert differ.theirs.call(*argv) != out_of_range
    differ.check("DEL", "l")  # 7.0's LREM removed every "a"
    differ.check("RPUSH", "l", "a", "b", "a")
    differ.check("LPOS", "l", "a", "RANK", "-9223372036854775807")
    differ.check("LREM", "l", "-9223372036854775807", "a")
    dump(differ, "l")


@pytest.mark.parametrize("timeout", ["inf", "1e30", "1e4000", "9223372036854776"])
def test_timeouts_past_llong_max_are_out_of_range(differ, timeout):
    """Redis 7.2 (redis/redis#11338) answers "timeout is out of range" for a
    timeout whose milliseconds pass 2**63 - 1; 7.0 calls it negative."""
    for argv in (["BLPOP", "k", timeout], ["BLMPOP", timeout, "1", "k", "LEFT"],
                 ["BLMOVE", "k", "j", "LEFT", "LEFT", timeout]):
        assert differ.ours.call(*argv) == b"-ERR timeout is out of range\r\n"
        assert differ.theirs.call(*argv) == b"-ERR timeout is negative\r\n"


LIST_COMMANDS = ["lpush", "rpush", "lpushx", "rpushx", "lpop", "rpop", "llen", "lrange", "lindex",
                 "lset", "linsert", "lrem", "ltrim", "lpos", "lmove", "rpoplpush", "lmpop",
                 "blpop", "brpop", "blmove", "brpoplpush", "blmpop"]


@pytest.mark.parametrize("name", LIST_COMMANDS)
def test_command_info(d, name):
    d.check("COMMAND", "INFO", name)


@pytest.mark.parametrize("argv", [
    ["LMPOP", "2", "a", "b", "LEFT"], ["BLMPOP", "0", "3", "a", "b", "c", "RIGHT", "COUNT", "2"],
    ["BLPOP", "a", "b", "0"], ["LMOVE", "a", "b", "LEFT", "RIGHT"], ["RPOPLPUSH", "a", "b"],
    ["LPUSH", "a", "x", "y"], ["LRANGE", "a", "0", "1"]])
def test_command_getkeys(differ, argv):
    differ.check("COMMAND", "GETKEYS", *argv)
    differ.check("COMMAND", "GETKEYSANDFLAGS", *argv)
