"""Differential tests for the hash commands against redis-server 7.0.15.

Most tests run over RESP2 and RESP3 (the ``d`` fixture).  Small hashes
(listpack-encoded) list their fields in insertion order on both servers, so
their replies are compared byte for byte.  Big hashes (hashtable-encoded)
list fields in each server's own hash order: those replies are compared as
sets (:func:`same_set`), a deliberate difference.  HRANDFIELD is random:
its shape and invariants are checked, and its replies compared exactly only
where Redis's is determined (errors, empty results, a count covering the
whole small hash).  HSCAN NOVALUES is Redis 7.4+
(https://redis.io/docs/latest/commands/hscan/): tested on Tidelog alone.
"""

from __future__ import annotations

import pytest

from tests.support.differ_tools import captured_effects, parse

pytestmark = pytest.mark.differential

LONG = "x" * 65


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def d(differ, request):
    if request.param == 3:
        differ.resp3()
    return differ


@pytest.fixture(autouse=True)
def default_hash_limits(differ):
    """Both servers at Redis's defaults before and after every test."""
    def reset():
        for client in (differ.ours, differ.theirs):
            assert client.call("CONFIG", "SET", "hash-max-listpack-entries", "512") == b"+OK\r\n"
            assert client.call("CONFIG", "SET", "hash-max-listpack-value", "64") == b"+OK\r\n"
    reset()
    yield
    reset()


def both(differ, *argv):
    """Run a command on both servers; the parsed replies (ours, theirs)."""
    return parse(differ.ours.call(*argv)), parse(differ.theirs.call(*argv))


def same_set(differ, *argv, pairs: bool = False) -> list:
    """Compare a reply whose elements (or field/value pairs) may come in any order."""
    ours, theirs = both(differ, *argv)
    if isinstance(ours, dict):  # RESP3 map
        ours, theirs = sorted(ours.items()), sorted(theirs.items())
    elif pairs:
        ours = sorted(zip(ours[0::2], ours[1::2]))
        theirs = sorted(zip(theirs[0::2], theirs[1::2]))
    else:
        ours, theirs = sorted(ours), sorted(theirs)
    assert ours == theirs, f"\ncommand: {argv!r}\ntidelog: {ours!r}\nredis:   {theirs!r}"
    return ours


def fill(differ, key, n, prefix="f"):
    """HSET n fields f0..f(n-1) with values v0.. on both servers."""
    args = []
    for i in range(n):
        args += [f"{prefix}{i}", f"v{i}"]
    for at in range(0, len(args), 200):
        differ.check("HSET", key, *args[at:at + 200])


# =====================================================================================
# Arity, WRONGTYPE
# =====================================================================================
def test_arity(d):
    d.check_all([
        ["HSET"], ["HSET", "h"], ["HSET", "h", "f"], ["HSET", "h", "f", "v", "g"],
        ["HMSET", "h", "f"], ["HMSET", "h", "f", "v", "g"], ["HSETNX", "h", "f"],
        ["HSETNX", "h", "f", "v", "x"], ["HGET", "h"], ["HGET", "h", "f", "x"], ["HMGET", "h"],
        ["HDEL", "h"], ["HEXISTS", "h"], ["HGETALL"], ["HGETALL", "h", "x"], ["HKEYS"],
        ["HVALS", "h", "x"], ["HLEN"], ["HLEN", "h", "x"], ["HSTRLEN", "h"], ["HINCRBY", "h", "f"],
        ["HINCRBYFLOAT", "h", "f"], ["HINCRBYFLOAT", "h", "f", "1", "2"], ["HRANDFIELD"],
        ["HSCAN", "h"], ["hset", "h", "f", "v", "g"],
    ])


@pytest.mark.parametrize("kind", ["string", "stream"])
def test_wrongtype(d, kind):
    if kind == "string":
        d.check("SET", "k", "v")
    else:
        d.check("XADD", "k", "1-1", "f", "v")
    d.check_all([
        ["HSET", "k", "f", "v"], ["HMSET", "k", "f", "v"], ["HSETNX", "k", "f", "v"],
        ["HGET", "k", "f"], ["HMGET", "k", "f", "g"], ["HDEL", "k", "f"], ["HEXISTS", "k", "f"],
        ["HGETALL", "k"], ["HKEYS", "k"], ["HVALS", "k"], ["HLEN", "k"], ["HSTRLEN", "k", "f"],
        ["HINCRBY", "k", "f", "1"], ["HINCRBYFLOAT", "k", "f", "1.5"], ["HRANDFIELD", "k"],
        ["HRANDFIELD", "k", "2"], ["HRANDFIELD", "k", "-2", "WITHVALUES"], ["HSCAN", "k", "0"],
        ["HSET", "k", "f", "v", "g"],  # arity is checked before the type
        ["HINCRBY", "k", "f", "x"],  # the increment before the type
        ["HINCRBYFLOAT", "k", "f", "x"], ["HSCAN", "k", "x"],
        ["TYPE", "k"], ["GET", "k"],
    ])
    d.check("HSET", "h", "f", "v")
    d.check_all([["GET", "h"], ["XLEN", "h"], ["INCR", "h"], ["SET", "h", "s"], ["TYPE", "h"]])


# =====================================================================================
# The basic commands on small (listpack) hashes: exact replies
# =====================================================================================
def test_set_get_and_listing(d):
    d.check_all([
        ["HGETALL", "h"], ["HKEYS", "h"], ["HVALS", "h"], ["HLEN", "h"], ["HGET", "h", "f"],
        ["HMGET", "h", "a", "b"], ["HEXISTS", "h", "f"], ["HSTRLEN", "h", "f"],
        ["HSET", "h", "b", "2", "a", "1", "c", "3"], ["HSET", "h", "a", "10", "d", "4"],
        ["HSET", "h", "e", "5", "e", "6"], ["HGETALL", "h"], ["HKEYS", "h"], ["HVALS", "h"],
        ["HLEN", "h"], ["HGET", "h", "a"], ["HGET", "h", "zz"], ["HMGET", "h", "a", "zz", "e"],
        ["HEXISTS", "h", "c"], ["HEXISTS", "h", "zz"], ["HSTRLEN", "h", "a"],
        ["HSTRLEN", "h", "zz"], ["HMSET", "h", "b", "", "f", "-7"], ["HGETALL", "h"],
        ["HSETNX", "h", "a", "x"], ["HSETNX", "h", "g", "7"], ["HSETNX", "new", "f", "v"],
        ["HGETALL", "h"], ["HGETALL", "new"], ["OBJECT", "ENCODING", "h"], ["TYPE", "h"],
        ["HSET", "h", "", ""], ["HGET", "h", ""], ["HSET", "h", "n", "12345678901234567890"],
        ["HGET", "h", "n"], ["HSET", "h", "bin", "a\x00b\r\n"], ["HGETALL", "h"],
    ])


def test_hdel(d):
    d.check_all([
        ["HDEL", "h", "f"], ["HSET", "h", "a", "1", "b", "2", "c", "3"],
        ["HDEL", "h", "b", "zz", "b"], ["HGETALL", "h"], ["HSET", "h", "b", "9"], ["HKEYS", "h"],
        ["HDEL", "h", "a", "b", "c", "d"], ["EXISTS", "h"], ["HLEN", "h"], ["TYPE", "h"],
    ])


def test_hincrby(d):
    d.check_all([
        ["HINCRBY", "h", "f", "5"], ["HINCRBY", "h", "f", "-7"], ["HINCRBY", "h", "g", "0"],
        ["HGETALL", "h"], ["HINCRBY", "h", "f", "x"], ["HINCRBY", "h", "f", "1.5"],
        ["HINCRBY", "h", "f", "01"], ["HINCRBY", "h", "f", "9223372036854775808"],
        ["HSET", "h", "s", "abc", "sp", " 1", "z", "01"], ["HINCRBY", "h", "s", "1"],
        ["HINCRBY", "h", "sp", "1"], ["HINCRBY", "h", "z", "1"],
        ["HSET", "h", "m", "9223372036854775807"], ["HINCRBY", "h", "m", "1"],
        ["HINCRBY", "h", "m", "-1"], ["HSET", "h", "n", "-9223372036854775808"],
        ["HINCRBY", "h", "n", "-1"], ["HINCRBY", "h", "n", "9223372036854775807"],
        ["HINCRBY", "nokey", "f", "x"], ["EXISTS", "nokey"], ["HGETALL", "h"],
        ["OBJECT", "ENCODING", "h"],
    ])


def test_hincrbyfloat(d):
    d.check_all([
        ["HINCRBYFLOAT", "h", "f", "10.5"], ["HINCRBYFLOAT", "h", "f", "0.1"],
        ["HINCRBYFLOAT", "h", "f", "-5.0e3"], ["HINCRBYFLOAT", "h", "g", "0.1"],
        ["HINCRBYFLOAT", "h", "g", "0.2"], ["HINCRBYFLOAT", "h", "i", "3"],
        ["HINCRBYFLOAT", "h", "i", "-3"], ["HINCRBYFLOAT", "h", "t", "-1e-30"],
        ["HINCRBYFLOAT", "h", "x", "0x1.8p1"], ["HINCRBYFLOAT", "h", "x", ".5"],
        ["HINCRBYFLOAT", "h", "x", "5."], ["HINCRBYFLOAT", "h", "x", "+3"],
        ["HINCRBYFLOAT", "h", "x", "1e-4950"], ["HINCRBYFLOAT", "h", "y", "1.5e4000"],
        ["HINCRBYFLOAT", "h", "y", "1e-30"], ["HINCRBYFLOAT", "h", "u", "123456789.123456789"],
        ["HINCRBYFLOAT", "h", "u", "7e15"], ["HINCRBYFLOAT", "h", "v", "1e-17"],
        ["HINCRBYFLOAT", "h", "v", "5e-18"],
        # errors
        ["HINCRBYFLOAT", "h", "f", "nan"], ["HINCRBYFLOAT", "h", "f", "inf"],
        ["HINCRBYFLOAT", "h", "f", "-infinity"], ["HINCRBYFLOAT", "h", "f", " 1"],
        ["HINCRBYFLOAT", "h", "f", "1 "], ["HINCRBYFLOAT", "h", "f", "1e"],
        ["HINCRBYFLOAT", "h", "f", ""], ["HINCRBYFLOAT", "h", "f", "."],
        ["HINCRBYFLOAT", "h", "f", "1e5000"], ["HINCRBYFLOAT", "h", "f", "1e-5000"],
        ["HINCRBYFLOAT", "h", "f", "0e-99999"], ["HINCRBYFLOAT", "h", "f", "abc"],
        ["HSET", "h", "s", "abc", "inf", "inf", "big", "1e4932"],
        ["HINCRBYFLOAT", "h", "s", "1"], ["HINCRBYFLOAT", "h", "inf", "1"],
        ["HINCRBYFLOAT", "h", "big", "1e4932"], ["HINCRBYFLOAT", "nokey", "f", "nan"],
        ["EXISTS", "nokey"], ["OBJECT", "ENCODING", "h"],
    ])
    same_set(d, "HGETALL", "h", pairs=True)  # a 4001-byte value made it a hashtable


def test_hincrbyfloat_propagates_hset(differ, tidelog):
    with captured_effects(tidelog) as captured:
        differ.check("HINCRBYFLOAT", "h", "f", "1.5")
        differ.check("HINCRBYFLOAT", "h", "f", "0.25")
        differ.check("HINCRBY", "h", "i", "2")
        differ.check("HDEL", "h", "nosuch")
        differ.check("HSETNX", "h", "f", "x")
        effects = tidelog.call(lambda: list(captured))
    assert effects == [[b"HSET", b"h", b"f", b"1.5"], [b"HSET", b"h", b"f", b"1.75"],
                       [b"HINCRBY", b"h", b"i", b"2"]]


# =====================================================================================
# Encodings
# =====================================================================================
def test_encoding_by_entries(d):
    fill(d, "h", 512)
    d.check("OBJECT", "ENCODING", "h")
    d.check("HSET", "h", "one-more", "v")
    d.check("OBJECT", "ENCODING", "h")
    d.check("HDEL", "h", "one-more", "f0", "f1")
    d.check("OBJECT", "ENCODING", "h")  # stays a hashtable
    fill(d, "big", 700)
    d.check("OBJECT", "ENCODING", "big")


def test_encoding_by_value_length(d):
    d.check_all([
        ["HSET", "a", "f", "x" * 64], ["OBJECT", "ENCODING", "a"],
        ["HSET", "b", "f", LONG], ["OBJECT", "ENCODING", "b"],
        ["HSET", "c", LONG, "v"], ["OBJECT", "ENCODING", "c"],
        ["HSETNX", "d", "f", LONG], ["OBJECT", "ENCODING", "d"],
        ["HSET", "e", "f", "1"], ["HINCRBY", "e", LONG, "1"], ["OBJECT", "ENCODING", "e"],
        ["HSET", "g", "f", "1"], ["HINCRBYFLOAT", "g", "f", "1e300"], ["OBJECT", "ENCODING", "g"],
        ["HSET", "i", "f", "1"], ["HSETNX", "i", "f", LONG], ["OBJECT", "ENCODING", "i"],
        ["HDEL", "b", "f"], ["HSET", "b", "f", "v"], ["OBJECT", "ENCODING", "b"],
    ])


def test_encoding_follows_config_set(d):
    d.check_all([
        ["CONFIG", "GET", "hash-max-listpack-entries"], ["CONFIG", "GET", "hash-max-listpack-value"],
        ["CONFIG", "SET", "hash-max-listpack-entries", "2"],
        ["CONFIG", "SET", "hash-max-listpack-value", "4"],
        ["HSET", "h", "a", "1", "b", "2"], ["OBJECT", "ENCODING", "h"],
        ["HSET", "h", "c", "3"], ["OBJECT", "ENCODING", "h"],
        ["HSET", "v", "a", "12345"], ["OBJECT", "ENCODING", "v"],
        ["HSET", "w", "a", "1234"], ["OBJECT", "ENCODING", "w"],
        ["CONFIG", "SET", "hash-max-listpack-entries", "0"],
        ["HSET", "z", "a", "1"], ["OBJECT", "ENCODING", "z"],
        ["OBJECT", "ENCODING", "w"],  # CONFIG SET converts nothing already there
        ["CONFIG", "SET", "hash-max-listpack-entries", "-1"],
        ["CONFIG", "SET", "hash-max-listpack-entries", "x"],
        ["CONFIG", "SET", "hash-max-listpack-entries", "1kb"],
        ["CONFIG", "SET", "hash-max-listpack-value", "-1"],
        ["CONFIG", "SET", "hash-max-listpack-value", "1kb"],
        ["CONFIG", "GET", "hash-max-listpack-value"],
    ])
    same_set(d, "CONFIG", "GET", "hash-max-listpack-*", pairs=True)


def test_big_hash_replies_as_sets(d):
    fill(d, "h", 600)
    d.check("HLEN", "h")
    same_set(d, "HGETALL", "h", pairs=True)
    same_set(d, "HKEYS", "h")
    same_set(d, "HVALS", "h")
    d.check_all([["HGET", "h", "f150"], ["HMGET", "h", "f1", "f199", "nope"],
                 ["HEXISTS", "h", "f7"], ["HSTRLEN", "h", "f123"], ["HINCRBY", "h", "n", "3"],
                 ["HDEL", "h", "f0", "f1", "zz"], ["HLEN", "h"]])
    same_set(d, "HKEYS", "h")


# =====================================================================================
# HRANDFIELD
# =====================================================================================
def test_hrandfield_exact_cases(d):
    d.check_all([
        ["HRANDFIELD", "nokey"], ["HRANDFIELD", "nokey", "3"], ["HRANDFIELD", "nokey", "-3"],
        ["HRANDFIELD", "nokey", "3", "WITHVALUES"], ["HRANDFIELD", "nokey", "x"],
        ["HRANDFIELD", "nokey", "1", "x"], ["HRANDFIELD", "nokey", "1", "WITHVALUES", "x"],
        ["HSET", "h", "a", "1", "b", "2", "c", "3"],
        ["HRANDFIELD", "h", "0"], ["HRANDFIELD", "h", "0", "WITHVALUES"],
        ["HRANDFIELD", "h", "3"], ["HRANDFIELD", "h", "100", "withvalues"],
        ["HRANDFIELD", "h", "x"], ["HRANDFIELD", "h", "1.5"], ["HRANDFIELD", "h", "1", "BAD"],
        ["HRANDFIELD", "h", "-9223372036854775808"],
        ["HRANDFIELD", "h", "9223372036854775808"],
        ["HRANDFIELD", "h", "4611686018427387904", "WITHVALUES"],
        ["HRANDFIELD", "h", "-4611686018427387904", "WITHVALUES"],
        ["HRANDFIELD", "h", "-9223372036854775807", "WITHVALUES"],
        ["HSET", "one", "f", "v"], ["HRANDFIELD", "one"], ["HRANDFIELD", "one", "-3"],
        ["HRANDFIELD", "one", "-2", "WITHVALUES"],
    ])


@pytest.mark.parametrize("size", [5, 600])
def test_hrandfield_shapes(d, size):
    fill(d, "h", size)
    fields = {f"f{i}".encode(): f"v{i}".encode() for i in range(size)}
    for _ in range(5):
        ours, theirs = both(d, "HRANDFIELD", "h")
        assert ours in fields and theirs in fields
    for count in (1, 3, size - 1, size, size + 5):
        ours, theirs = both(d, "HRANDFIELD", "h", count)
        assert len(ours) == len(theirs) == min(count, size)
        assert len(set(ours)) == len(ours) and set(ours) <= set(fields)
    for count in (1, 3, size + 5):
        ours, theirs = both(d, "HRANDFIELD", "h", -count)
        assert len(ours) == len(theirs) == count
        assert set(ours) <= set(fields)
    resp3 = d.ours.call("HGETALL", "h").startswith(b"%")
    for count in (3, -7):
        ours, theirs = both(d, "HRANDFIELD", "h", count, "WITHVALUES")
        for reply in (ours, theirs):
            if resp3:
                pairs = reply
                assert all(isinstance(p, list) and len(p) == 2 for p in pairs)
            else:
                assert len(reply) % 2 == 0
                pairs = list(zip(reply[0::2], reply[1::2]))
            assert len(pairs) == abs(count)
            assert all(fields[f] == v for f, v in pairs)


def test_hrandfield_resp3_pairs(differ):
    differ.resp3()
    differ.check("HSET", "h", "a", "1")
    assert differ.check("HRANDFIELD", "h", "-2", "WITHVALUES") == (
        b"*2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n")
    assert differ.check("HRANDFIELD", "h", "1", "WITHVALUES") == b"*1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"
    assert differ.check("HGETALL", "h") == b"%1\r\n$1\r\na\r\n$1\r\n1\r\n"
    assert differ.check("HGETALL", "nokey") == b"%0\r\n"


# =====================================================================================
# HSCAN
# =====================================================================================
def test_hscan_small_exact(d):
    d.check_all([
        ["HSCAN", "nokey", "0"], ["HSCAN", "nokey", "0", "COUNT", "0"],
        ["HSCAN", "nokey", "x"], ["HSET", "h", "b", "1", "a", "2", "ab", "3", "c", "4"],
        ["HSCAN", "h", "0"], ["HSCAN", "h", "0", "COUNT", "1"], ["HSCAN", "h", "123"],
        ["HSCAN", "h", "0", "MATCH", "a*"], ["HSCAN", "h", "0", "match", "*"],
        ["HSCAN", "h", "0", "MATCH", "z*", "COUNT", "100"],
        ["HSCAN", "h", "0", "COUNT", "0"], ["HSCAN", "h", "0", "COUNT", "-1"],
        ["HSCAN", "h", "0", "COUNT", "x"], ["HSCAN", "h", "0", "COUNT"],
        ["HSCAN", "h", "0", "MATCH"], ["HSCAN", "h", "0", "TYPE", "string"],
        ["HSCAN", "h", "0", "BOGUS", "1"], ["HSCAN", "h", "-1"], ["HSCAN", "h", " 1"],
        ["HSCAN", "h", "18446744073709551616"],
    ])


def test_hscan_big_full_iteration(d):
    fill(d, "h", 1000)
    for client in (d.ours, d.theirs):
        seen: dict[bytes, bytes] = {}
        cursor, calls = b"0", 0
        while True:
            reply = parse(client.call("HSCAN", "h", cursor, "COUNT", "20"))
            cursor, flat = reply
            seen.update(zip(flat[0::2], flat[1::2]))
            calls += 1
            if cursor == b"0":
                break
        assert calls > 1
        assert seen == {f"f{i}".encode(): f"v{i}".encode() for i in range(1000)}
    ours, theirs = both(d, "HSCAN", "h", "0", "MATCH", "f1?", "COUNT", "1000")
    assert sorted(ours[1]) == sorted(theirs[1])


def test_hscan_novalues_redis_7_4(differ):
    """HSCAN ... NOVALUES (Redis 7.4+, https://redis.io/docs/latest/commands/hscan/):
    only fields.  On Tidelog alone: 7.0 does not have it."""
    differ.ours.call("HSET", "h", "a", "1", "b", "2")
    assert parse(differ.ours.call("HSCAN", "h", "0", "NOVALUES")) == [b"0", [b"a", b"b"]]
    assert parse(differ.ours.call("HSCAN", "h", "0", "MATCH", "b", "NOVALUES")) == [b"0", [b"b"]]
    differ.ours.call("HSET", "big", *[f"f{i // 2}" if i % 2 == 0 else "v" for i in range(1200)])
    seen, cursor = [], b"0"
    while True:
        cursor, fields = parse(differ.ours.call("HSCAN", "big", cursor, "NOVALUES", "COUNT", "50"))
        seen += fields
        if cursor == b"0":
            break
    assert sorted(set(seen)) == sorted(f"f{i}".encode() for i in range(600))


# =====================================================================================
# Keyspace integration
# =====================================================================================
def test_keyspace(d):
    d.check_all([
        ["HSET", "h", "a", "1"], ["TYPE", "h"], ["SCAN", "0", "TYPE", "hash"],
        ["EXPIRE", "h", "100"], ["HSET", "h", "b", "2"], ["TTL", "h"],  # HSET keeps the TTL
        ["HDEL", "h", "a", "b"], ["TTL", "h"], ["RENAME", "nokey", "x"],
        ["HSET", "h", "a", "1"], ["RENAME", "h", "h2"], ["HGETALL", "h2"], ["DEL", "h2"],
        ["COMMAND", "INFO", "hset", "hsetnx", "hget", "hmget", "hmset", "hdel", "hexists",
         "hgetall", "hkeys", "hvals", "hlen", "hstrlen", "hincrby", "hincrbyfloat",
         "hrandfield", "hscan"],
    ])


def test_memory_and_debug_do_not_fail(differ):
    fill(differ, "h", 3)
    fill(differ, "big", 600)
    for key in ("h", "big"):
        assert int(parse(differ.ours.call("MEMORY", "USAGE", key))[1:]) > 0
        assert differ.ours.call("DEBUG", "OBJECT", key).startswith(b"+Value at:")


def test_multi_exec(d):
    d.check_all([["MULTI"], ["HSET", "h", "a", "1"], ["HINCRBY", "h", "a", "x"],
                 ["HINCRBYFLOAT", "h", "a", "2.5"], ["HGETALL", "h"], ["EXEC"]])
