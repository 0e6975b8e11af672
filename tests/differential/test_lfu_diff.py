"""The LFU policies' counter (OBJECT FREQ) and the per-key field it shares
with the LRU clock, against redis-server 7.0.15.

The counter only moves deterministically with ``lfu-log-factor 0`` (every
access increments it) and ``lfu-decay-time 0`` (nothing decays between two
commands that straddle a minute), so the exact comparisons run with both;
the defaults are compared as configuration only.  Every test puts the
policy and both options back (the servers are shared).

Redis 8.6's LRM policies (``allkeys-lrm``, ``volatile-lrm``) are newer than
7.0.15, which refuses them: https://redis.io/docs/latest/develop/reference/eviction/
"""

from __future__ import annotations

import re

import pytest

DEFAULTS = ("maxmemory-policy", "noeviction", "lfu-log-factor", "10", "lfu-decay-time", "1")


@pytest.fixture
def lfu(differ):
    """Both servers under allkeys-lfu, counting every access, never decaying."""
    yield _set_policy(differ, "allkeys-lfu", factor=0, decay=0)
    for client in (differ.ours, differ.theirs):
        assert client.call("CONFIG", "SET", *DEFAULTS) == b"+OK\r\n"


def _set_policy(differ, policy: str, factor: int = 0, decay: int = 0):
    for client in (differ.ours, differ.theirs):
        assert client.call("CONFIG", "SET", "maxmemory-policy", policy, "lfu-log-factor", factor,
                           "lfu-decay-time", decay) == b"+OK\r\n"
    return differ


def _lru_field(client, key: str) -> int:
    """DEBUG OBJECT's ``lru:``: the raw 24-bit field."""
    match = re.search(rb" lru:(\d+) ", client.call("DEBUG", "OBJECT", key))
    assert match, key
    return int(match.group(1))


def test_options_and_errors_without_an_lfu_policy(differ):
    differ.check_all([
        ["CONFIG", "GET", "lfu-log-factor"], ["CONFIG", "GET", "lfu-decay-time"],
        ["SET", "s", "v"], ["OBJECT", "FREQ", "s"], ["OBJECT", "FREQ", "missing"],
        ["CONFIG", "SET", "lfu-log-factor", "-1"], ["CONFIG", "SET", "lfu-decay-time", "x"],
        ["CONFIG", "SET", "lfu-decay-time", "2147483648"],
        ["CONFIG", "SET", "maxmemory-policy", "volatile-lru"], ["OBJECT", "FREQ", "s"],
    ])
    assert differ.check("CONFIG", "SET", "maxmemory-policy", "noeviction") == b"+OK\r\n"


def test_a_new_key_counts_from_five_and_idletime_is_refused(lfu):
    lfu.check_all([
        ["SET", "s", "v"], ["OBJECT", "FREQ", "s"], ["OBJECT", "IDLETIME", "s"],
        ["OBJECT", "IDLETIME", "missing"], ["OBJECT", "FREQ", "missing"],
        ["XADD", "x", "1-1", "f", "v"], ["OBJECT", "FREQ", "x"],
        ["CONFIG", "SET", "maxmemory-policy", "volatile-lfu"], ["OBJECT", "FREQ", "s"],
    ])
    assert lfu.check("OBJECT", "FREQ", "s") == b":5\r\n"


# Each command, then OBJECT FREQ of its key: which commands count as an
# access (a lookup that touches), and how often (XREAD, XREADGROUP and
# SET ... GET look their key up twice in Redis).
COUNTED = [
    ("s", ["SET", "s", "abc"]), ("s", ["GET", "s"]), ("s", ["SET", "s", "def"]),
    ("s", ["EXISTS", "s"]), ("s", ["TYPE", "s"]), ("s", ["TOUCH", "s"]), ("s", ["STRLEN", "s"]),
    ("s", ["APPEND", "s", "x"]), ("s", ["EXPIREAT", "s", "4102444800"]), ("s", ["TTL", "s"]),
    ("s", ["PTTL", "s"]), ("s", ["EXPIRETIME", "s"]), ("s", ["PERSIST", "s"]),
    ("s", ["MGET", "s", "s"]),
    ("s", ["GETRANGE", "s", "0", "1"]), ("s", ["SETRANGE", "s", "0", "y"]),
    ("s", ["OBJECT", "ENCODING", "s"]), ("s", ["DUMP", "s"]), ("s", ["MEMORY", "USAGE", "s"]),
    ("s2", ["RENAME", "s", "s2"]), ("s3", ["COPY", "s2", "s3"]), ("s2", ["COPY", "s2", "s3"]),
    ("x", ["XADD", "x", "1-1", "f", "v"]), ("x", ["XADD", "x", "2-1", "f", "v"]),
    ("x", ["XLEN", "x"]), ("x", ["XRANGE", "x", "-", "+"]), ("x", ["XREVRANGE", "x", "+", "-"]),
    ("x", ["XGROUP", "CREATE", "x", "g", "0"]), ("x", ["XACK", "x", "g", "1-1"]),
    ("x", ["XPENDING", "x", "g"]), ("x", ["XINFO", "STREAM", "x"]), ("x", ["XINFO", "GROUPS", "x"]),
    ("x", ["XTRIM", "x", "MAXLEN", "5"]), ("x", ["XDEL", "x", "9-9"]),
    ("x", ["XGROUP", "CREATECONSUMER", "x", "g", "c9"]), ("x", ["XGROUP", "SETID", "x", "g", "0"]),
    ("x", ["XREAD", "STREAMS", "x", "0"]), ("x", ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "x", ">"]),
    ("x", ["XCLAIM", "x", "g", "c2", "0", "2-1"]), ("x", ["XAUTOCLAIM", "x", "g", "c3", "0", "0"]),
    ("s3", ["SET", "s3", "v", "GET"]), ("s3", ["GETEX", "s3"]), ("s3", ["SETNX", "s3", "v"]),
    ("h", ["HINCRBY", "h", "n", "1"]), ("h", ["HDEL", "h", "n"]), ("l", ["LINDEX", "l", "0"]),
    ("l", ["LINSERT", "l", "BEFORE", "b", "c"]), ("z", ["ZINCRBY", "z", "1", "m"]),
    ("t", ["SCARD", "t"]), ("t", ["SRANDMEMBER", "t"]),
    ("h", ["HSET", "h", "f", "v"]), ("h", ["HGET", "h", "f"]), ("h", ["HGETALL", "h"]),
    ("h", ["HEXISTS", "h", "f"]), ("h", ["HLEN", "h"]),
    ("l", ["RPUSH", "l", "a", "b"]), ("l", ["LRANGE", "l", "0", "-1"]), ("l", ["LPOP", "l"]),
    ("z", ["ZADD", "z", "1", "m"]), ("z", ["ZSCORE", "z", "m"]), ("z", ["ZRANGE", "z", "0", "-1"]),
    ("t", ["SADD", "t", "m"]), ("t", ["SISMEMBER", "t", "m"]), ("t", ["SMEMBERS", "t"]),
]


def test_which_commands_count_an_access(lfu):
    for key, argv in COUNTED:
        if argv[0] in ("MEMORY", "TTL", "PTTL"):  # sizes differ by design; times move
            lfu.ours.call(*argv)
            lfu.theirs.call(*argv)
        else:
            lfu.check(*argv)
        lfu.check("OBJECT", "FREQ", key)


def test_the_counter_saturates_and_restore_sets_it(lfu):
    lfu.check("SET", "s", "v")
    for _ in range(260):
        lfu.ours.call("GET", "s")
        lfu.theirs.call("GET", "s")
    assert lfu.check("OBJECT", "FREQ", "s") == b":255\r\n"
    payload = lfu.ours.call("DUMP", "s").split(b"\r\n", 1)[1][:-2]
    lfu.check_all([
        ["RESTORE", "r1", "0", payload, "FREQ", "100"], ["OBJECT", "FREQ", "r1"],
        ["RESTORE", "r2", "0", payload, "IDLETIME", "100"], ["OBJECT", "FREQ", "r2"],
        ["RESTORE", "r1", "0", payload, "REPLACE"], ["OBJECT", "FREQ", "r1"],
    ])
    _set_policy(lfu, "noeviction")
    lfu.check_all([["RESTORE", "r3", "0", payload, "FREQ", "7"], ["OBJECT", "FREQ", "r3"]])


def test_a_policy_switch_reads_the_field_the_new_way(differ):
    """Redis converts nothing when the policy changes: a key last used under
    LRU shows its LRU clock's low byte as the counter (undecayed here), and
    after a switch back its LFU word as the clock."""
    differ.check("SET", "a", "v")
    fields = [_lru_field(client, "a") for client in (differ.ours, differ.theirs)]
    try:
        _set_policy(differ, "allkeys-lfu")
        for client, field in zip((differ.ours, differ.theirs), fields):
            assert client.call("OBJECT", "FREQ", "a") == b":%d\r\n" % (field & 255)
            assert _lru_field(client, "a") == field  # nothing converted
            client.call("GET", "a")  # now an LFU word: this minute, the counter plus one
            word = _lru_field(client, "a")
            assert word & 255 == min(255, (field & 255) + 1)
        differ.check("SET", "fresh", "v")
        words = [_lru_field(client, "fresh") for client in (differ.ours, differ.theirs)]
        assert [w & 255 for w in words] == [5, 5]
        _set_policy(differ, "allkeys-lru")
        for client, word in zip((differ.ours, differ.theirs), words):
            assert _lru_field(client, "fresh") == word  # read as a clock from now on
        differ.check("GET", "fresh")
        differ.check("OBJECT", "FREQ", "fresh")
    finally:
        for client in (differ.ours, differ.theirs):
            assert client.call("CONFIG", "SET", *DEFAULTS) == b"+OK\r\n"


def test_lrm_policies_are_newer(differ):
    """Redis 8.6 added them; 7.0.15 lists the eight older names only."""
    theirs = differ.check_newer("CONFIG", "SET", "maxmemory-policy", "allkeys-lrm", ours=b"+OK\r\n")
    assert b"must be one of the following: volatile-lru, volatile-lfu," in theirs
    differ.check_newer(
        "CONFIG", "SET", "maxmemory-policy", "nonsense",
        ours=b"-ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - "
             b"argument(s) must be one of the following: volatile-lru, volatile-lfu, "
             b"volatile-random, volatile-ttl, volatile-lrm, allkeys-lru, allkeys-lfu, "
             b"allkeys-random, allkeys-lrm, noeviction\r\n")
    assert differ.ours.call("CONFIG", "GET", "maxmemory-policy").endswith(b"allkeys-lrm\r\n")
    assert differ.ours.call("CONFIG", "SET", "maxmemory-policy", "noeviction") == b"+OK\r\n"


def test_stream_reads_look_their_key_up_twice(differ):
    """The second lookup shows in keyspace_hits as well as in the counter."""
    differ.check_all([["XADD", "s", "1-1", "f", "v"], ["XGROUP", "CREATE", "s", "g", "0"]])
    for argv in (["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"],
                 ["XREAD", "STREAMS", "s", "0"], ["SET", "s2", "v", "GET"]):
        hits = []
        for client in (differ.ours, differ.theirs):
            assert client.call("CONFIG", "RESETSTAT") == b"+OK\r\n"
            client.call(*argv)
            info = client.call("INFO", "stats")
            hits.append(re.search(rb"keyspace_hits:(\d+)\r\nkeyspace_misses:(\d+)", info).groups())
        assert hits[0] == hits[1], argv
