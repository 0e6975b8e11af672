"""Sorted set commands against redis-server 7.0.15, raw reply bytes compared.

What cannot be compared byte for byte, and why:

* Scores: Redis 7.2+ replies doubles in the shortest round-trip form (7.2
  release notes; https://redis.io/docs/latest/develop/reference/protocol-spec/
  #doubles), 7.0.15 with ``%.17g``.  The compared tests use scores both spell
  alike (integers, halves, quarters, inf); ``test_scores_redis_8`` pins ours
  for the others with ``check_newer``.
* ZRANK/ZREVRANK WITHSCORE is Redis 7.2 (https://redis.io/docs/latest/
  commands/zrank/): pinned.  ZSCAN NOSCORES is Redis 8.0
  (https://redis.io/docs/latest/commands/zscan/): pinned.
* ZRANDMEMBER picks at random: compared where determined, else by size and
  membership.
"""

from __future__ import annotations

import pytest

from tests.support.differ_tools import (
    Pair,
    assert_effects_match_aof,
    captured_effects,
    parse,
    read_aof_commands,
    wait_blocked,
)
from tests.support.rawclient import RawClient

pytestmark = pytest.mark.differential


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def d(differ, request):
    for client in (differ.ours, differ.theirs):
        assert client.call("CONFIG", "SET", "zset-max-listpack-entries", "128") == b"+OK\r\n"
        assert client.call("CONFIG", "SET", "zset-max-listpack-value", "64") == b"+OK\r\n"
    if request.param == 3:
        differ.resp3()
    return differ


@pytest.fixture
def wrong(d):
    """Keys of every other type on both servers."""
    d.check("XADD", "st", "1-1", "f", "v")
    d.check("SET", "str", "x")
    d.check("HSET", "h", "f", "v")
    d.check("SADD", "set", "a")
    return ("st", "str", "h", "set")


def both(d, *argv) -> None:
    d.ours.call(*argv)
    d.theirs.call(*argv)


def fill(d, key="z", n=10):
    args = []
    for i in range(n):
        args += [str(i * 0.5 - 1), f"m{i}"]
    d.check("ZADD", key, *args)


# =====================================================================================
def test_arity(d):
    d.check_all([
        ["ZADD"], ["ZADD", "z"], ["ZADD", "z", "1"], ["ZREM", "z"], ["ZSCORE", "z"],
        ["ZSCORE", "z", "a", "b"], ["ZMSCORE", "z"], ["ZINCRBY", "z", "1"], ["ZCARD"],
        ["ZCARD", "a", "b"], ["ZCOUNT", "z", "1"], ["ZLEXCOUNT", "z", "-"], ["ZRANGE", "z", "0"],
        ["ZRANGESTORE", "d", "z", "0"], ["ZRANGEBYSCORE", "z", "0"], ["ZREVRANGEBYSCORE", "z"],
        ["ZRANGEBYLEX", "z", "-"], ["ZREVRANGEBYLEX", "z"], ["ZREVRANGE", "z", "0"],
        ["ZRANK", "z"], ["ZREVRANK", "z"], ["ZPOPMIN"], ["ZPOPMAX"], ["ZMPOP", "1", "z"],
        ["ZUNION", "1"], ["ZINTER", "1"], ["ZDIFF", "1"], ["ZUNIONSTORE", "d", "1"],
        ["ZINTERSTORE", "d", "1"], ["ZDIFFSTORE", "d", "1"], ["ZINTERCARD", "1"],
        ["ZREMRANGEBYSCORE", "z", "0"], ["ZREMRANGEBYRANK", "z", "0"],
        ["ZREMRANGEBYLEX", "z", "-"], ["ZRANDMEMBER"], ["ZSCAN", "z"],
    ])


def test_wrongtype(d, wrong):
    for key in wrong:
        d.check_all([
            ["ZADD", key, "1", "a"], ["ZADD", key, "XX", "1", "a"], ["ZADD", key, "x", "a"],
            ["ZINCRBY", key, "1", "a"], ["ZREM", key, "a"], ["ZSCORE", key, "a"],
            ["ZMSCORE", key, "a"], ["ZCARD", key], ["ZCOUNT", key, "-inf", "inf"],
            ["ZCOUNT", key, "x", "1"], ["ZLEXCOUNT", key, "-", "+"],
            ["ZRANGE", key, "0", "-1"], ["ZRANGE", key, "0", "x"],
            ["ZRANGESTORE", "dst", key, "0", "-1"], ["ZRANGESTORE", key, "nokey", "0", "-1"],
            ["ZRANGEBYSCORE", key, "0", "1"], ["ZREVRANGEBYSCORE", key, "1", "0"],
            ["ZRANGEBYLEX", key, "-", "+"], ["ZREVRANGEBYLEX", key, "+", "-"],
            ["ZREVRANGE", key, "0", "1"], ["ZRANK", key, "a"], ["ZREVRANK", key, "a"],
            ["ZPOPMIN", key], ["ZPOPMAX", key, "2"], ["ZPOPMIN", key, "-1"],
            ["ZMPOP", "2", "nokey", key, "MIN"], ["ZREMRANGEBYSCORE", key, "0", "1"],
            ["ZREMRANGEBYRANK", key, "0", "1"], ["ZREMRANGEBYLEX", key, "-", "+"],
            ["ZRANDMEMBER", key], ["ZRANDMEMBER", key, "2"], ["ZSCAN", key, "0"],
            ["ZINTERCARD", "1", key],
        ])
        if key != "set":  # a set is a valid source of the set operations
            d.check_all([
                ["ZUNION", "2", "nokey", key], ["ZINTER", "1", key], ["ZDIFF", "1", key],
                ["ZUNIONSTORE", "dst", "1", key], ["ZINTERSTORE", "dst", "1", key],
                ["ZDIFFSTORE", "dst", "1", key], ["ZUNION", "1", key, "BADOPT"],
            ])
    d.check_all([["TYPE", k] for k in wrong])


def test_zadd_basics(d):
    d.check_all([
        ["ZADD", "z", "1", "a", "2", "b", "3", "c"], ["ZRANGE", "z", "0", "-1", "WITHSCORES"],
        ["ZADD", "z", "1", "a"], ["ZADD", "z", "5", "a"], ["ZADD", "z", "CH", "5", "a", "6", "b"],
        ["ZADD", "z", "CH", "5", "a", "6", "b", "7", "x"],
        ["ZADD", "z", "NX", "10", "a", "10", "y"], ["ZADD", "z", "XX", "11", "a", "11", "q"],
        ["ZADD", "z", "XX", "CH", "12", "a", "11", "q"],
        ["ZADD", "z", "GT", "CH", "1", "a", "100", "b"], ["ZADD", "z", "LT", "CH", "1", "a"],
        ["ZADD", "z", "GT", "LT", "1", "a"], ["ZADD", "z", "NX", "XX", "1", "a"],
        ["ZADD", "z", "NX", "GT", "1", "a"], ["ZADD", "z", "NX", "LT", "1", "a"],
        ["ZADD", "z", "XX", "GT", "200", "b"], ["ZADD", "z", "INCR", "1", "a", "2", "b"],
        ["ZADD", "z", "INCR", "2.5", "a"], ["ZADD", "z", "INCR", "NX", "2.5", "a"],
        ["ZADD", "z", "INCR", "XX", "2.5", "nope"], ["ZADD", "z", "INCR", "GT", "-1", "a"],
        ["ZADD", "z", "INCR", "LT", "-1", "a"], ["ZADD", "z", "INCR", "NX", "4", "new"],
        ["ZADD", "z", "1"], ["ZADD", "z", "1", "a", "2"], ["ZADD", "z", "x", "a"],
        ["ZADD", "z", "1", "a", "nan", "b"], ["ZADD", "z", "NaN", "b"],
        ["ZADD", "z", "BOGUS", "1", "a"], ["ZADD", "z", "CH"], ["ZADD", "z", "XX", "NX"],
        ["ZRANGE", "z", "0", "-1", "WITHSCORES"],
        ["ZADD", "nokey", "XX", "1", "a"], ["EXISTS", "nokey"],
        ["ZADD", "nokey", "XX", "INCR", "1", "a"], ["EXISTS", "nokey"],
        ["ZADD", "z", "inf", "i", "-inf", "j", "+inf", "k", "-Infinity", "l"],
        ["ZRANGE", "z", "0", "-1", "WITHSCORES"],
        ["ZADD", "z", "INCR", "-inf", "i"], ["ZINCRBY", "z", "+inf", "j"], ["ZSCORE", "z", "i"],
        ["ZINCRBY", "z", "1", "newm"], ["ZINCRBY", "z", "x", "a"], ["ZINCRBY", "z", "nan", "a"],
        ["ZINCRBY", "fresh", "1.5", "m"], ["ZINCRBY", "fresh", "1", "m"],
    ])


def test_score_parsing(d):
    for text in ["1", "+1", "-1", " 1", "1 ", "", "0x10", "0x1p3", "0x", "1e3", "1E-2", "1e",
                 ".5", "5.", ".", "1e400", "-1e400", "1e-400", "0e-400", "inf", "-inf",
                 "INFINITY", "infinit", "nan", "-nan", "1\x00", "1_0", "0.25", "-0",
                 "1.5e+2", "\t2"]:
        d.check("ZADD", "p", text, "m")
        d.check("ZSCORE", "p", "m")
        d.check("ZCOUNT", "p", text, "+inf")
        d.check("ZCOUNT", "p", "(" + text, "+inf")
        d.check("ZRANGEBYSCORE", "p", "-inf", text)


def test_reads(d):
    fill(d)
    d.check_all([
        ["ZCARD", "z"], ["ZCARD", "nokey"], ["ZSCORE", "z", "m3"], ["ZSCORE", "z", "x"],
        ["ZSCORE", "nokey", "x"], ["ZMSCORE", "z", "m1", "x", "m9"], ["ZMSCORE", "nokey", "a"],
        ["ZRANK", "z", "m0"], ["ZRANK", "z", "m9"], ["ZRANK", "z", "x"], ["ZRANK", "nokey", "x"],
        ["ZREVRANK", "z", "m0"], ["ZREVRANK", "z", "m4"], ["ZREVRANK", "z", "x"],
        ["ZCOUNT", "z", "-inf", "+inf"], ["ZCOUNT", "z", "0", "1"], ["ZCOUNT", "z", "(0", "(1"],
        ["ZCOUNT", "z", "1", "0"], ["ZCOUNT", "z", "(1", "1"], ["ZCOUNT", "z", "x", "1"],
        ["ZCOUNT", "z", "((1", "2"], ["ZCOUNT", "nokey", "0", "1"], ["ZCOUNT", "z", "(", "3"],
    ])


def test_zrange_forms(d):
    fill(d, n=12)
    d.check("ZADD", "z", "2", "m6b", "2", "m6a")
    for args in [
        ["0", "-1"], ["0", "-1", "WITHSCORES"], ["2", "5"], ["-3", "-1"], ["5", "2"],
        ["-100", "100"], ["20", "30"], ["0", "0"], ["x", "1"], ["0", "-1", "REV"],
        ["0", "2", "REV", "WITHSCORES"], ["0", "-1", "LIMIT", "0", "2"],
        ["0", "-1", "LIMIT", "0", "-1"], ["(0", "2", "BYSCORE"], ["0", "(2", "BYSCORE", "WITHSCORES"],
        ["-inf", "+inf", "BYSCORE", "LIMIT", "2", "3"], ["-inf", "+inf", "BYSCORE", "LIMIT", "-1", "3"],
        ["-inf", "+inf", "BYSCORE", "LIMIT", "2", "-5"], ["-inf", "+inf", "BYSCORE", "LIMIT", "2", "0"],
        ["+inf", "-inf", "BYSCORE", "REV", "LIMIT", "1", "4", "WITHSCORES"],
        ["2", "0", "BYSCORE", "REV"], ["0", "2", "BYSCORE", "REV"],
        ["-", "+", "BYLEX"], ["+", "-", "BYLEX", "REV", "LIMIT", "1", "2"],
        ["-", "+", "BYLEX", "WITHSCORES"], ["a", "+", "BYLEX"], ["0", "1", "BYSCORE", "BYLEX"],
        ["0", "1", "REV", "REV"], ["0", "1", "LIMIT", "1"], ["0", "1", "LIMIT", "x", "1"],
        ["x", "y", "BYSCORE"], ["0", "1", "BOGUS"], ["0", "1", "BYSCORE", "LIMIT", "1", "2", "3"],
    ]:
        d.check("ZRANGE", "z", *args)
        d.check("ZRANGE", "nokey", *args)
    d.check_all([
        ["ZRANGEBYSCORE", "z", "0", "2", "WITHSCORES", "LIMIT", "1", "2"],
        ["ZRANGEBYSCORE", "z", "0", "2", "BYSCORE"], ["ZRANGEBYSCORE", "z", "0", "2", "REV"],
        ["ZREVRANGEBYSCORE", "z", "2", "0", "WITHSCORES"], ["ZREVRANGEBYSCORE", "z", "0", "2"],
        ["ZRANGEBYLEX", "z", "-", "+", "LIMIT", "0", "3"], ["ZRANGEBYLEX", "z", "-", "+", "WITHSCORES"],
        ["ZRANGEBYLEX", "z", "m", "+"], ["ZREVRANGEBYLEX", "z", "+", "m3"],
        ["ZREVRANGE", "z", "0", "3", "WITHSCORES"], ["ZREVRANGE", "z", "0", "3", "LIMIT", "0", "1"],
        ["ZREVRANGE", "z", "0", "3", "REV"],
        ["ZLEXCOUNT", "z", "-", "+"], ["ZLEXCOUNT", "z", "x", "+"], ["ZLEXCOUNT", "z", "+", "-"],
        ["ZLEXCOUNT", "nokey", "-", "+"], ["ZLEXCOUNT", "nokey", "-", "x"],
    ])


def test_lex_same_scores(d):
    d.check("ZADD", "l", *[x for c in "abcdefgh" for x in ("0", c * 2)], "0", "", "0", "a")
    for lo, hi in [("-", "+"), ("[a", "[c"), ("(a", "(cc"), ("[", "+"), ("(", "+"), ("-", "["),
                   ("[b", "[a"), ("[bb", "(bb"), ("-", "-"), ("+", "+"), ("[z", "+")]:
        d.check("ZRANGEBYLEX", "l", lo, hi)
        d.check("ZREVRANGEBYLEX", "l", hi, lo)
        d.check("ZLEXCOUNT", "l", lo, hi)
    d.check("ZREMRANGEBYLEX", "l", "[b", "(dd")
    d.check("ZRANGE", "l", "0", "-1")
    d.check("ZREMRANGEBYLEX", "l", "-", "+")
    d.check("EXISTS", "l")


def test_zrangestore(d):
    fill(d)
    d.check_all([
        ["ZRANGESTORE", "dst", "z", "0", "3"], ["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
        ["ZRANGESTORE", "dst", "z", "0", "1", "BYSCORE", "LIMIT", "1", "5"],
        ["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
        ["ZRANGESTORE", "dst", "z", "[m5", "+", "BYLEX", "REV"],
        ["ZRANGESTORE", "dst", "z", "+", "[m5", "BYLEX", "REV"], ["ZRANGE", "dst", "0", "-1"],
        ["ZRANGESTORE", "dst", "z", "0", "1", "WITHSCORES"],
        ["ZRANGESTORE", "dst", "z", "5", "1"], ["EXISTS", "dst"],
        ["SET", "dst", "x"], ["ZRANGESTORE", "dst", "nokey", "0", "-1"], ["EXISTS", "dst"],
        ["ZRANGESTORE", "z", "z", "0", "2"], ["ZRANGE", "z", "0", "-1"],
    ])


def test_zrem_and_removals(d):
    fill(d, n=20)
    d.check_all([
        ["ZREM", "z", "m1", "x", "m1", "m2"], ["ZREM", "nokey", "a"],
        ["ZREMRANGEBYSCORE", "z", "(0", "1"], ["ZREMRANGEBYSCORE", "z", "x", "1"],
        ["ZREMRANGEBYSCORE", "nokey", "0", "1"], ["ZREMRANGEBYSCORE", "z", "5", "1"],
        ["ZREMRANGEBYRANK", "z", "0", "1"], ["ZREMRANGEBYRANK", "z", "-2", "-1"],
        ["ZREMRANGEBYRANK", "z", "5", "2"], ["ZREMRANGEBYRANK", "z", "x", "2"],
        ["ZREMRANGEBYRANK", "nokey", "0", "1"], ["ZREMRANGEBYLEX", "z", "x", "+"],
        ["ZRANGE", "z", "0", "-1", "WITHSCORES"], ["ZREMRANGEBYRANK", "z", "0", "-1"],
        ["EXISTS", "z"], ["ZADD", "y", "1", "a"], ["ZREM", "y", "a"], ["EXISTS", "y"],
    ])


def test_pops(d):
    fill(d)
    d.check_all([
        ["ZPOPMIN", "z"], ["ZPOPMAX", "z"], ["ZPOPMIN", "z", "2"], ["ZPOPMAX", "z", "2"],
        ["ZPOPMIN", "z", "0"], ["ZPOPMIN", "z", "-1"], ["ZPOPMIN", "z", "x"],
        ["ZPOPMIN", "z", "1", "2"], ["ZPOPMIN", "nokey"], ["ZPOPMIN", "nokey", "3"],
        ["ZPOPMAX", "z", "100"], ["EXISTS", "z"],
    ])
    fill(d)
    fill(d, "y", 3)
    d.check_all([
        ["ZMPOP", "2", "nokey", "z", "MIN"], ["ZMPOP", "2", "nokey", "z", "MAX", "COUNT", "3"],
        ["ZMPOP", "1", "y", "MIN", "COUNT", "10"], ["EXISTS", "y"],
        ["ZMPOP", "1", "nokey", "MIN"], ["ZMPOP", "0", "z", "MIN"], ["ZMPOP", "-1", "z", "MIN"],
        ["ZMPOP", "x", "z", "MIN"], ["ZMPOP", "3", "z", "MIN"], ["ZMPOP", "1", "z", "BAD"],
        ["ZMPOP", "1", "z", "MIN", "COUNT"], ["ZMPOP", "1", "z", "MIN", "COUNT", "0"],
        ["ZMPOP", "1", "z", "MIN", "COUNT", "-1"], ["ZMPOP", "1", "z", "MIN", "COUNT", "x"],
        ["ZMPOP", "1", "z", "MIN", "COUNT", "1", "COUNT", "1"], ["ZMPOP", "1", "z", "MIN", "X"],
    ])


def test_setops(d):
    d.check("ZADD", "a", "1", "x", "2", "y", "3", "z")
    d.check("ZADD", "b", "4", "y", "5", "z", "6", "w")
    d.check("SADD", "s", "x", "w", "v")
    for cmd in ("ZUNION", "ZINTER", "ZDIFF"):
        for tail in [["2", "a", "b"], ["3", "a", "b", "s"], ["2", "a", "nokey"],
                     ["1", "nokey"], ["2", "a", "b", "WITHSCORES"],
                     ["2", "a", "b", "WEIGHTS", "2", "0.5", "WITHSCORES"],
                     ["2", "a", "b", "WEIGHTS", "inf", "0", "WITHSCORES"],
                     ["2", "a", "b", "WEIGHTS", "1"], ["2", "a", "b", "WEIGHTS", "1", "x"],
                     ["2", "a", "b", "AGGREGATE", "MIN", "WITHSCORES"],
                     ["2", "a", "b", "AGGREGATE", "max", "WITHSCORES"],
                     ["2", "a", "b", "AGGREGATE", "avg"], ["2", "a", "b", "AGGREGATE"],
                     ["0", "a"], ["-1", "a"], ["x", "a"], ["3", "a", "b"], ["2", "a", "a", "WITHSCORES"],
                     ["3", "s", "a", "b", "WITHSCORES"], ["2", "a", "b", "BOGUS"]]:
            d.check(cmd, *tail)
            d.check(cmd + "STORE", "dst", *[t for t in tail if t != "WITHSCORES"])
            d.check("ZRANGE", "dst", "0", "-1", "WITHSCORES")
            d.check(cmd + "STORE", "dst", *tail)
    d.check_all([
        ["ZADD", "n", "inf", "x", "-inf", "y"], ["ZADD", "m", "-inf", "x", "inf", "y"],
        ["ZUNION", "2", "n", "m", "WITHSCORES"], ["ZINTER", "2", "n", "m", "WITHSCORES"],
        ["ZINTERCARD", "2", "a", "b"], ["ZINTERCARD", "2", "a", "b", "LIMIT", "1"],
        ["ZINTERCARD", "2", "a", "b", "LIMIT", "0"], ["ZINTERCARD", "2", "a", "b", "LIMIT", "-1"],
        ["ZINTERCARD", "2", "a", "s"], ["ZINTERCARD", "0", "a"], ["ZINTERCARD", "3", "a", "b"],
        ["ZINTERCARD", "2", "a", "b", "WITHSCORES"], ["ZINTERCARD", "1", "nokey"],
        ["ZUNIONSTORE", "a", "2", "a", "b"], ["ZRANGE", "a", "0", "-1", "WITHSCORES"],
        ["SET", "dst", "v"], ["ZINTERSTORE", "dst", "1", "nokey"], ["EXISTS", "dst"],
    ])


def test_zrandmember(d):
    fill(d, n=5)
    d.check_all([
        ["ZRANDMEMBER", "nokey"], ["ZRANDMEMBER", "nokey", "3"], ["ZRANDMEMBER", "z", "0"],
        ["ZRANDMEMBER", "z", "x"], ["ZRANDMEMBER", "z", "1", "BAD"],
        ["ZRANDMEMBER", "z", "1", "WITHSCORES", "x"], ["ZRANDMEMBER", "nokey", "1", "WITHSCORES"],
        ["ZRANDMEMBER", "z", "-9223372036854775808"],
        ["ZRANDMEMBER", "z", "9223372036854775807", "WITHSCORES"],
        ["ZRANDMEMBER", "z", "-9223372036854775807", "WITHSCORES"],
    ])
    for args in [["5"], ["10"], ["10", "WITHSCORES"]]:
        # the whole set, in any order: the same lines
        ours, theirs = d.ours.call("ZRANDMEMBER", "z", *args), d.theirs.call("ZRANDMEMBER", "z", *args)
        assert sorted(ours.split(b"\r\n")) == sorted(theirs.split(b"\r\n"))
    members = {f"m{i}".encode() for i in range(5)}
    for args in [[], ["3"], ["-20"], ["-3", "WITHSCORES"]]:
        if args[1:] and d.ours.call("ZSCORE", "z", "m0").startswith(b","):
            continue  # (the test's parser reads RESP2)
        for client in (d.ours, d.theirs):
            got = parse(client.call("ZRANDMEMBER", "z", *args))
            if not args:
                assert got in members
                continue
            count = abs(int(args[0]))
            flat = got
            if len(args) == 2:
                flat = [p[0] for p in got] if isinstance(got[0], list) else got[0::2]
            assert len(flat) == count and set(flat) <= members
            if int(args[0]) > 0:
                assert len(set(flat)) == count


def test_zscan(d):
    fill(d, n=5)
    d.check_all([
        ["ZSCAN", "z", "0"], ["ZSCAN", "z", "0", "MATCH", "m[12]"], ["ZSCAN", "z", "0", "COUNT", "1"],
        ["ZSCAN", "z", "0", "COUNT", "0"], ["ZSCAN", "z", "0", "COUNT"], ["ZSCAN", "z", "x"],
        ["ZSCAN", "z", "0", "BAD", "1"], ["ZSCAN", "nokey", "0"], ["ZSCAN", "nokey", "0", "BAD"],
    ])
    d.check_newer("ZSCAN", "z", "0", "NOSCORES", ours=b"*2\r\n$1\r\n0\r\n*5\r\n$2\r\nm0\r\n"
                  b"$2\r\nm1\r\n$2\r\nm2\r\n$2\r\nm3\r\n$2\r\nm4\r\n")


def test_scores_redis_8(d):
    # Redis 7.2+ replies the shortest round-trip form (7.2 release notes; see
    # the module docstring); 7.0.15 used %.17g.
    d.check("ZADD", "f", "1.1", "a", "0.1", "b", "1e-5", "c")
    proto3 = d.ours.call("HELLO", "3").startswith(b"%") if False else None  # noqa: F841
    zs = d.check_newer("ZSCORE", "f", "a", ours=d.ours.call("ZSCORE", "f", "a"))
    assert b"1.1000000000000001" in zs
    assert d.ours.call("ZSCORE", "f", "a") in (b"$3\r\n1.1\r\n", b",1.1\r\n")
    assert d.ours.call("ZSCORE", "f", "c") in (b"$5\r\n1e-05\r\n", b",1e-05\r\n")
    assert d.ours.call("ZINCRBY", "f", "0.2", "b") in (b"$19\r\n0.30000000000000004\r\n",
                                                        b",0.30000000000000004\r\n")
    assert d.ours.call("ZSCAN", "f", "0") == (
        b"*2\r\n$1\r\n0\r\n*6\r\n$1\r\nc\r\n$5\r\n1e-05\r\n$1\r\nb\r\n"
        b"$19\r\n0.30000000000000004\r\n$1\r\na\r\n$3\r\n1.1\r\n")


def test_zrank_withscore_redis_7_2(d):
    # https://redis.io/docs/latest/commands/zrank/ : WITHSCORE (7.2) replies
    # [rank, score], a null (array) when there is no such member.
    d.check("ZADD", "z", "1.5", "a", "2", "b")
    resp3 = d.ours.call("ZSCORE", "z", "a").startswith(b",")
    score = b",1.5\r\n" if resp3 else b"$3\r\n1.5\r\n"
    d.check_newer("ZRANK", "z", "a", "WITHSCORE", ours=b"*2\r\n:0\r\n" + score)
    d.check_newer("ZREVRANK", "z", "a", "WITHSCORE", ours=b"*2\r\n:1\r\n" + score)
    d.check_newer("ZRANK", "z", "a", "BAD", ours=b"-ERR syntax error\r\n")  # 7.0: arity 3
    d.check_newer("ZRANK", "z", "a", "WITHSCORE", "x", ours=b"-ERR syntax error\r\n")
    nil = b"_\r\n" if resp3 else b"*-1\r\n"
    assert d.ours.call("ZRANK", "z", "x", "WITHSCORE") == nil
    assert d.ours.call("ZRANK", "nokey", "x", "WITHSCORE") == nil


def test_encodings(d):
    for client in (d.ours, d.theirs):
        client.call("CONFIG", "SET", "zset-max-listpack-entries", "4")
        client.call("CONFIG", "SET", "zset-max-listpack-value", "8")
    d.check_all([
        ["ZADD", "a", "1", "a", "2", "b", "3", "c", "4", "d"], ["OBJECT", "ENCODING", "a"],
        ["ZADD", "a", "-0", "e"], ["OBJECT", "ENCODING", "a"], ["ZSCORE", "a", "e"],
        ["ZADD", "z0", "-0", "x"], ["ZSCORE", "z0", "x"], ["ZADD", "z0", "-0", "y", "1", "z"],
        ["ZRANGE", "z0", "0", "-1", "WITHSCORES"], ["ZADD", "z1", "-0", "123456789"],
        ["ZSCORE", "z1", "123456789"], ["ZUNIONSTORE", "z2", "1", "z1"], ["ZSCORE", "z2", "123456789"],
        ["ZADD", "a", "-0", "a"], ["ZSCORE", "a", "a"], ["ZADD", "a", "-0", "a"], ["ZSCORE", "a", "a"],
        ["ZREM", "a", "a", "b", "c"],
        ["OBJECT", "ENCODING", "a"],
        ["ZADD", "b", "1", "123456789"], ["OBJECT", "ENCODING", "b"],
        ["ZADD", "c", "1", "x", "1", "x", "1", "x", "1", "x", "1", "x"], ["OBJECT", "ENCODING", "c"],
        ["ZADD", "e", "1", "x"], ["ZADD", "e", "1", "123456789"], ["OBJECT", "ENCODING", "e"],
        ["ZUNIONSTORE", "u", "1", "a"], ["OBJECT", "ENCODING", "u"],
        ["ZRANGESTORE", "r", "a", "0", "0"], ["OBJECT", "ENCODING", "r"],
        ["ZINCRBY", "i", "1", "123456789"], ["OBJECT", "ENCODING", "i"],
        ["CONFIG", "SET", "zset-max-listpack-entries", "0"], ["ZADD", "g", "1", "x"],
        ["OBJECT", "ENCODING", "g"], ["CONFIG", "GET", "zset-max-listpack-value"],
        ["CONFIG", "GET", "zset-max-listpack-entries"],
        ["CONFIG", "SET", "zset-max-listpack-value", "x"],
    ])
    for client in (d.ours, d.theirs):
        client.call("CONFIG", "SET", "zset-max-listpack-entries", "128")
        client.call("CONFIG", "SET", "zset-max-listpack-value", "64")


def test_big_skiplist(d):
    args = []
    for i in range(300):
        args += [str((i * 37) % 101), f"member:{i:04d}"]
    d.check("ZADD", "big", *args)
    d.check_all([
        ["OBJECT", "ENCODING", "big"], ["ZCARD", "big"], ["ZRANGE", "big", "100", "120", "WITHSCORES"],
        ["ZRANGE", "big", "(10", "20", "BYSCORE", "LIMIT", "5", "10"],
        ["ZREVRANGE", "big", "0", "9"], ["ZRANK", "big", "member:0150"],
        ["ZCOUNT", "big", "(50", "+inf"], ["ZPOPMIN", "big", "3"], ["ZPOPMAX", "big", "3"],
        ["ZREMRANGEBYSCORE", "big", "10", "(20"], ["ZCARD", "big"],
        ["ZUNIONSTORE", "u", "1", "big", "WEIGHTS", "2"], ["ZRANGE", "u", "0", "5", "WITHSCORES"],
    ])


# -- effects: what we propagate against Redis's AOF ---------------------------------------------
EFFECT_SCRIPT = [
    ["ZADD", "a", "1", "x", "2", "y", "3", "z", "4", "w", "5", "v"], ["ZADD", "a", "1", "x"],
    ["ZADD", "a", "NX", "9", "x"], ["ZADD", "a", "INCR", "2", "x"], ["ZINCRBY", "a", "1", "q"],
    ["ZREM", "a", "nothere"], ["ZREM", "a", "q"],
    ["ZPOPMIN", "a"], ["ZPOPMAX", "a", "2"], ["ZPOPMIN", "nokey", "3"], ["ZPOPMIN", "a", "0"],
    ["ZMPOP", "1", "a", "MIN", "COUNT", "5"],            # pops 2: ZPOPMIN a 2
    ["ZADD", "b", "1", "x", "2", "y", "3", "z"], ["ZMPOP", "2", "nokey", "b", "MAX"],
    ["ZMPOP", "1", "nokey", "MIN"],
    ["ZUNIONSTORE", "u", "1", "b"], ["ZINTERSTORE", "u", "2", "b", "nokey"],
    ["ZINTERSTORE", "u", "2", "b", "nokey"], ["ZDIFFSTORE", "u2", "1", "b"],
    ["ZRANGESTORE", "r", "b", "0", "0"], ["ZRANGESTORE", "r", "nokey", "0", "0"],
    ["ZRANGESTORE", "r", "nokey", "0", "0"],
    ["ZREMRANGEBYSCORE", "b", "5", "6"], ["ZREMRANGEBYSCORE", "b", "1", "1"],
    ["ZREMRANGEBYRANK", "b", "0", "0"], ["ZREMRANGEBYLEX", "b", "-", "+"],
    ["ZRANGE", "u2", "0", "-1"], ["ZSCAN", "u2", "0"],
]


def test_effects_match_redis_aof(tidelog, aof_oracle):
    """ZPOPMIN/ZPOPMAX go out as sent; ZMPOP as ZPOPMIN/ZPOPMAX key <popped
    count> (what 7.0.15 writes to its AOF); a write that changes nothing,
    nothing."""
    assert_effects_match_aof(tidelog, aof_oracle, EFFECT_SCRIPT)


ZSET_COMMANDS = [
    "bzpopmin", "bzpopmax", "bzmpop", "zadd", "zincrby", "zrem", "zscore", "zmscore", "zcard",
    "zcount", "zlexcount",
    "zrange", "zrangestore", "zrangebyscore", "zrevrangebyscore", "zrangebylex", "zrevrangebylex",
    "zrevrange", "zpopmin", "zpopmax", "zmpop", "zunion", "zinter", "zdiff", "zunionstore",
    "zinterstore", "zdiffstore", "zintercard", "zremrangebyscore", "zremrangebyrank",
    "zremrangebylex", "zrandmember", "zscan",
]


@pytest.mark.parametrize("name", ZSET_COMMANDS)
def test_command_info(differ, name):
    differ.check("COMMAND", "INFO", name)


def test_command_info_zrank_redis_7_2(differ):
    # ZRANK/ZREVRANK take WITHSCORE since 7.2 (https://redis.io/docs/latest/commands/zrank/):
    # arity -3, one more history entry; the rest as 7.0.15.
    for name in ("zrank", "zrevrank"):
        ours = differ.ours.call("COMMAND", "INFO", name)
        assert b":-3\r\n" in ours


def test_command_getkeys(differ):
    differ.check_all([
        ["COMMAND", "GETKEYS", "zadd", "k", "1", "m"],
        ["COMMAND", "GETKEYS", "zrangestore", "d", "s", "0", "1"],
        ["COMMAND", "GETKEYS", "zunionstore", "d", "2", "a", "b", "WEIGHTS", "1", "2"],
        ["COMMAND", "GETKEYS", "zunion", "2", "a", "b"],
        ["COMMAND", "GETKEYS", "zdiff", "1", "a"],
        ["COMMAND", "GETKEYS", "zintercard", "2", "a", "b", "LIMIT", "1"],
        ["COMMAND", "GETKEYS", "zmpop", "2", "a", "b", "MIN"],
        ["COMMAND", "GETKEYSANDFLAGS", "zinterstore", "d", "2", "a", "b"],
        ["COMMAND", "GETKEYSANDFLAGS", "zmpop", "1", "a", "MAX", "COUNT", "2"],
    ])


@pytest.mark.parametrize("seed", range(4))
def test_random_commands(d, seed):
    """Random commands over a few keys, scores in quarters (spelled alike by
    7.0.15 and 8.x), at listpack limits that force conversions."""
    import random
    rng = random.Random(seed)
    entries = rng.choice([2, 8, 128])
    for client in (d.ours, d.theirs):
        assert client.call("CONFIG", "SET", "zset-max-listpack-entries", entries) == b"+OK\r\n"
    keys = ["a", "b", "c"]

    def score():
        return rng.choice([str(rng.randint(-8, 8) / 4), "inf", "-inf"])

    def member():
        return rng.choice(["x", "y", "zz", "", "m1", "m2", "m3", "long" * 20])

    for _ in range(300):
        k = rng.choice(keys)
        op = rng.randrange(14)
        if op < 3:
            flags = rng.sample(["NX", "XX", "GT", "LT", "CH"], rng.randint(0, 2))
            argv = ["ZADD", k, *flags, *[x for _ in range(rng.randint(1, 4))
                                         for x in (score(), member())]]
        elif op == 3:
            argv = ["ZREM", k, *[member() for _ in range(rng.randint(1, 3))]]
        elif op == 4:
            argv = ["ZINCRBY", k, score(), member()]
        elif op == 5:
            argv = [rng.choice(["ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"]), k, "2",
                    *rng.sample(keys, 2)]
        elif op == 6:
            argv = ["ZRANGE", k, "0", "-1", "WITHSCORES"]
        elif op == 7:
            argv = ["ZRANGEBYSCORE", k, rng.choice(["-inf", "(0", "1"]), rng.choice(["+inf", "(1"]),
                    "WITHSCORES", "LIMIT", str(rng.randint(0, 2)), str(rng.randint(-1, 3))]
        elif op == 8:
            argv = [rng.choice(["ZPOPMIN", "ZPOPMAX"]), k, str(rng.randint(1, 3))]
        elif op == 9:
            argv = ["ZREMRANGEBYRANK", k, str(rng.randint(-3, 1)), str(rng.randint(-2, 2))]
        elif op == 10:
            argv = ["ZRANK", k, member()]
        elif op == 11:
            argv = ["ZMPOP", "2", *rng.sample(keys, 2), rng.choice(["MIN", "MAX"]), "COUNT", "2"]
        elif op == 12:
            argv = ["ZRANGESTORE", k, rng.choice(keys), "1", "-1"]
        else:
            argv = ["ZSCAN", k, "0", "COUNT", "1000"]
        if argv[0] == "ZSCAN":  # a skiplist's ZSCAN comes in Redis's hash order
            ours, theirs = parse(d.ours.call(*argv)), parse(d.theirs.call(*argv))
            assert ours[0] == theirs[0] == b"0"
            assert sorted(zip(ours[1][0::2], ours[1][1::2])) == sorted(
                zip(theirs[1][0::2], theirs[1][1::2]))
            continue
        d.check(*argv)
        for key in keys:
            d.check("OBJECT", "ENCODING", key)


# -- blocking pops --------------------------------------------------------------------------------
def test_blocking_errors_and_immediate(d):
    fill(d, "z", 4)
    d.check("SET", "str", "x")
    d.check_all([
        ["BZPOPMIN", "z"], ["BZPOPMIN", "z", "x"], ["BZPOPMIN", "z", "-1"], ["BZPOPMIN", "z", "nan"],
        ["BZPOPMIN", "str", "0"], ["BZPOPMIN", "nokey", "str", "0"],
        ["BZPOPMIN", "nokey", "z", "0"], ["BZPOPMAX", "z", "nokey", "0.5"], ["BZPOPMAX", "z", "1"],
        ["BZMPOP", "0", "1", "z"], ["BZMPOP", "x", "1", "z", "MIN"], ["BZMPOP", "-1", "1", "z", "MIN"],
        ["BZMPOP", "0", "0", "z", "MIN"], ["BZMPOP", "0", "1", "z", "BAD"],
        ["BZMPOP", "0", "1", "str", "MIN"], ["BZMPOP", "0", "2", "nokey", "z", "MAX", "COUNT", "5"],
        ["EXISTS", "z"],
        # inside MULTI a blocking command answers at once with its timeout reply
        ["MULTI"], ["BZPOPMIN", "nokey", "0"], ["BZMPOP", "0", "1", "nokey", "MIN"], ["EXEC"],
        ["BZPOPMIN", "nokey", "0.01"], ["BZMPOP", "0.01", "1", "nokey", "MIN"],
    ])


def test_blocked_clients_served_in_order(d, tidelog):
    waiters = [Pair(d) for _ in range(3)]
    try:
        waiters[0].send("BZPOPMIN", "k1", "k2", "0")
        wait_blocked(d, tidelog, 1)
        waiters[1].send("BZPOPMAX", "k2", "0")
        wait_blocked(d, tidelog, 2)
        waiters[2].send("BZMPOP", "0", "2", "k2", "k1", "MAX", "COUNT", "2")
        wait_blocked(d, tidelog, 3)
        d.check("ZADD", "k2", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e")
        for w in waiters:
            ours, theirs = w.replies()
            assert ours == theirs
        d.check("ZRANGE", "k2", "0", "-1", "WITHSCORES")
        # a value of another type at the key: still waiting
        waiters[0].send("BZPOPMIN", "k3", "0")
        wait_blocked(d, tidelog, 1)
        d.check("SET", "k3", "x")
        d.check("DEL", "k3")
        d.check("ZADD", "k3", "7", "m")
        ours, theirs = waiters[0].replies()
        assert ours == theirs
    finally:
        for w in waiters:
            w.close()


def test_blocking_effects_match_redis_aof(tidelog, aof_oracle):
    """BZPOPMIN/BZPOPMAX go out as ZPOPMIN/ZPOPMAX key, BZMPOP as ZPOPMIN/ZPOPMAX
    key <popped count>, served at once or after blocking."""
    theirs = RawClient(aof_oracle.port)
    ours = RawClient(tidelog.port)
    try:
        for client in (ours, theirs):
            assert client.call("FLUSHALL") == b"+OK\r\n"
        before = len(read_aof_commands(aof_oracle.dir))
        with captured_effects(tidelog) as captured:
            for argv in [["ZADD", "a", "1", "x", "2", "y", "3", "z"], ["BZPOPMIN", "a", "0"],
                         ["BZPOPMAX", "nokey", "a", "0"], ["BZMPOP", "0", "1", "a", "MIN", "COUNT", "9"],
                         ["ZADD", "b", "1", "x"], ["BZMPOP", "0", "1", "b", "MAX"]]:
                assert ours.call(*argv) == theirs.call(*argv), argv
            written = [argv for argv in read_aof_commands(aof_oracle.dir)[before:]
                       if argv[0].upper() != b"SELECT"]
            got = tidelog.call(lambda: list(captured))
        assert got == written
    finally:
        ours.close()
        theirs.close()
