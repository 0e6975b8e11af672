"""The generic key commands against redis-server 7.0.15, raw reply bytes:
DUMP/RESTORE (and payloads crossing between the two servers both ways),
COPY, MOVE, SWAPDB, RENAMENX, TOUCH, RANDOMKEY, EXPIRE's NX/XX/GT/LT,
EXPIRETIME, OBJECT, SORT/SORT_RO over sets, SCAN ... TYPE; WATCH against
COPY/MOVE/SWAPDB; and the AOF effects of these commands against 7.0.15's AOF."""

from __future__ import annotations

import pytest

from tests.support.differ_tools import _ports, captured_effects, read_aof_commands
from tests.support.rawclient import RawClient

pytestmark = pytest.mark.differential


def fill(differ) -> None:
    """One value of each type on main, the same on both servers."""
    differ.check_all([
        ["SET", "str", "hello"], ["SET", "int", "12345"], ["SET", "big", "x" * 100],
        ["SET", "neg", "-7"], ["SET", "long", "abcdefghij" * 30],
        ["HSET", "h", "a", "1", "b", "two"],
        ["HSET", "hbig", *[x for i in range(200) for x in (f"f{i}", f"v{i}")]],
        ["SADD", "si", "3", "1", "2"], ["SADD", "sl", "b", "a", "c"],
        ["SADD", "sbig", *[f"m{i}" for i in range(300)]],
        ["XADD", "x", "1-1", "f", "v"], ["XADD", "x", "2-1", "f", "w", "g", "z"],
        ["XGROUP", "CREATE", "x", "g", "0"],
        ["XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", "x", ">"],
        ["RPUSH", "l", "a", "12", "-3", "b" * 70],
        ["RPUSH", "lbig", *[f"element-{i}" * 3 for i in range(1500)]],
        ["ZADD", "z", "1", "one", "2.5", "two", "-3", "minus"],
        ["ZADD", "zbig", *[x for i in range(200) for x in (str(i * 0.25), f"m{i}")]],
    ])


KEYS = ["str", "int", "big", "neg", "long", "h", "hbig", "si", "sl", "sbig", "x",
        "l", "lbig", "z", "zbig"]


# -- DUMP / RESTORE --------------------------------------------------------------------
@pytest.mark.parametrize("compression", ["yes", "no"])
def test_dump_bytes_match(differ, compression):
    for client in (differ.ours, differ.theirs):
        assert client.call("CONFIG", "SET", "rdbcompression", compression) == b"+OK\r\n"
    try:
        fill(differ)
        # "big": Redis's LZF output is not ours byte for byte (both read each
        # other's, see below); "sl": 7.0 has no listpack sets (Redis 7.2+ does)
        for key in ["str", "int", "neg", "h", "si", "missing"] + (["big"] if compression == "no"
                                                                  else []):
            differ.check("DUMP", key)
    finally:
        for client in (differ.ours, differ.theirs):
            client.call("CONFIG", "SET", "rdbcompression", "yes")


def _bulk(reply: bytes) -> bytes:
    assert reply.startswith(b"$"), reply
    head, _, rest = reply.partition(b"\r\n")
    return rest[:int(head[1:])]


@pytest.mark.parametrize("direction", ["theirs-to-ours", "ours-to-theirs"])
def test_payloads_cross_both_ways(differ, direction):
    fill(differ)
    src, dst = ((differ.theirs, differ.ours) if direction == "theirs-to-ours"
                else (differ.ours, differ.theirs))
    for key in KEYS:
        payload = _bulk(src.call("DUMP", key))
        for client in (src, dst):  # the same payload restored on both
            assert client.call("RESTORE", key + "-copy", "0", payload) == b"+OK\r\n", key
    for key in KEYS:
        differ.check("TYPE", key + "-copy")
        # 7.0 has no listpack sets (it reads one as a hashtable) and calls every
        # list a quicklist
        if key not in ("sl", "si", "l"):
            differ.check("OBJECT", "ENCODING", key + "-copy")
    for key in ["str", "int", "big", "neg", "long"]:
        differ.check("GET", key + "-copy")
    for key in ["h", "hbig"]:
        differ.check("HLEN", key + "-copy")
        differ.check("HGET", key + "-copy", "f7")
        differ.check("HGET", key + "-copy", "b")
    for key in ["si", "sl", "sbig"]:
        differ.check("SCARD", key + "-copy")
        differ.check("SORT", key + "-copy", "ALPHA")
    differ.check("XRANGE", "x-copy", "-", "+")
    differ.check("XINFO", "GROUPS", "x-copy")
    differ.check("XPENDING", "x-copy", "g")
    for key in ["l", "lbig"]:
        differ.check("LRANGE", key + "-copy", "0", "-1")
    for key in ["z", "zbig"]:
        differ.check("ZRANGE", key + "-copy", "0", "-1", "WITHSCORES")


def test_restore_options_and_errors(differ):
    fill(differ)
    payload = _bulk(differ.check("DUMP", "str"))
    bad_crc = payload[:-1] + bytes([payload[-1] ^ 1])
    newer = payload[:-10] + b"\x63\x00" + payload[-8:]   # version 99, CRC now wrong too
    differ.check_all([
        ["RESTORE", "str", "0", payload],                    # BUSYKEY
        ["RESTORE", "new", "0", bad_crc],
        ["RESTORE", "new", "0", newer],
        ["RESTORE", "new", "0", b"short"],
        ["RESTORE", "new", "0", b"\x00\x03abc\x0a\x00" + b"\x00" * 8],  # CRC wrong
        ["RESTORE", "new", "-1", payload],
        ["RESTORE", "new", "abc", payload],
        ["RESTORE", "new", "0", payload, "BOGUS"],
        ["RESTORE", "new", "0", payload, "IDLETIME"],
        ["RESTORE", "new", "0", payload, "IDLETIME", "-1"],
        ["RESTORE", "new", "0", payload, "IDLETIME", "x"],
        ["RESTORE", "new", "0", payload, "FREQ", "256"],
        ["RESTORE", "new", "0", payload, "FREQ", "-1"],
        ["RESTORE", "new", "0", payload, "FREQ", "1", "IDLETIME", "3"],
        ["RESTORE", "new", "0", payload, "IDLETIME", "3", "FREQ", "1"],
        ["RESTORE", "str", "-1", payload],                   # BUSYKEY comes before the TTL
        ["RESTORE", "str", "0", bad_crc, "REPLACE"],
        ["RESTORE", "new"],
        ["RESTORE", "new", "0", payload, "IDLETIME", "1000"],
        ["OBJECT", "IDLETIME", "new"],
        ["GET", "new"],
        ["RESTORE", "str", "0", payload, "REPLACE", "ABSTTL"],
        ["RESTORE", "t1", "100000", payload], ["TTL", "t1"],
        ["RESTORE", "t2", "4102444800000", payload, "ABSTTL"], ["PEXPIRETIME", "t2"],
        ["RESTORE", "t3", "1", payload, "ABSTTL"], ["EXISTS", "t3"],      # past: nothing
        ["RESTORE", "str", "1", payload, "ABSTTL", "REPLACE"], ["EXISTS", "str"],
        ["DUMP", "h"], ["DUMP", "nothing"], ["DUMP"],
        # a relative TTL whose deadline passes 2**63 wraps: restored as long expired
        ["RESTORE", "huge", "9223372036854775807", payload], ["EXISTS", "huge"],
        ["RESTORE", "huge", "9223372036854775807", payload, "ABSTTL"], ["EXISTS", "huge"],
    ])
    # the value bytes do not parse: a good footer on garbage
    from tidelog.rdb.format import _U64, crc64
    body = b"\x00\xc3\x05" + b"\x0a\x00"
    differ.check("RESTORE", "bad", "0", body + _U64.pack(crc64(body)))
    body = b"\x63abc" + b"\x0a\x00"
    differ.check("RESTORE", "bad", "0", body + _U64.pack(crc64(body)))


# -- COPY, MOVE, SWAPDB, RENAMENX, TOUCH, RANDOMKEY -------------------------------------
def test_copy(differ):
    fill(differ)
    for key in KEYS:
        differ.check("COPY", key, key + "-c")
        differ.check("TYPE", key + "-c")
        if key not in ("sl", "l"):  # 7.0 has no listpack sets, and every list is a quicklist
            differ.check("OBJECT", "ENCODING", key + "-c")
    differ.check_all([
        ["SADD", "si-c", "99"], ["SMEMBERS", "si"], ["SMEMBERS", "si-c"],   # independent
        ["HSET", "h-c", "a", "changed"], ["HGETALL", "h"], ["HGETALL", "h-c"],
        ["XADD", "x-c", "5-1", "f", "v"], ["XLEN", "x"], ["XLEN", "x-c"],
        ["XACK", "x-c", "g", "1-1"], ["XPENDING", "x", "g"], ["XPENDING", "x-c", "g"],
        ["COPY", "str", "int"], ["GET", "int"],
        ["COPY", "str", "int", "REPLACE"], ["GET", "int"],
        ["COPY", "str", "str"], ["COPY", "str", "str", "DB", "0"],
        ["COPY", "str", "str", "DB", "1"],
        ["COPY", "missing", "z"],
        ["COPY", "str", "z", "DB"], ["COPY", "str", "z", "DB", "16"], ["COPY", "str", "z", "DB", "-1"],
        ["COPY", "str", "z", "DB", "x"], ["COPY", "str", "z", "DB", "99999999999"],
        ["COPY", "str", "z", "BOGUS"], ["COPY", "str"],
        ["SET", "ttl", "v", "EX", "1000"], ["COPY", "ttl", "ttl2", "DB", "3"],
        ["SELECT", "3"], ["TTL", "ttl2"], ["GET", "ttl2"], ["GET", "str"], ["SELECT", "0"],
        ["COPY", "str", "ttl"], ["COPY", "str", "ttl", "REPLACE"], ["TTL", "ttl"],
        # a list (OBJECT ENCODING left out: 7.0 says quicklist for every list)
        ["RPUSH", "l", "a", "b", "c"], ["COPY", "l", "l-c"], ["RPUSH", "l-c", "d"],
        ["LRANGE", "l", "0", "-1"], ["LRANGE", "l-c", "0", "-1"], ["TYPE", "l-c"],
        ["SORT", "l", "ALPHA", "DESC", "STORE", "l-s"], ["LRANGE", "l-s", "0", "-1"],
        # a sorted set: copied, then sorted by score order (nosort) and by value
        ["ZADD", "z", "3", "c", "1", "a", "2", "10"], ["COPY", "z", "z-c"],
        ["ZADD", "z-c", "0", "new"], ["ZRANGE", "z", "0", "-1", "WITHSCORES"],
        ["ZRANGE", "z-c", "0", "-1", "WITHSCORES"], ["SORT", "z", "BY", "nosort"],
        ["SORT", "z", "BY", "nosort", "DESC", "LIMIT", "0", "2"], ["SORT", "z", "ALPHA"],
        ["SORT", "z", "BY", "nosort", "STORE", "z-s"], ["LRANGE", "z-s", "0", "-1"],
    ])


def test_move(differ):
    fill(differ)
    differ.normalise(rb":(?:9\d{4}|100000)\r\n", b":PTTL\r\n")  # the clocks of two reads
    differ.check_all([
        ["MOVE", "str", "1"], ["EXISTS", "str"], ["SELECT", "1"], ["GET", "str"], ["SELECT", "0"],
        ["MOVE", "str", "1"], ["MOVE", "int", "0"], ["MOVE", "int", "16"], ["MOVE", "int", "-1"],
        ["MOVE", "int", "x"], ["MOVE", "int", "99999999999"], ["MOVE", "int"],
        ["SET", "str", "again"], ["MOVE", "str", "1"], ["GET", "str"],
        ["SET", "t", "v", "PX", "100000"], ["MOVE", "t", "2"], ["SELECT", "2"],
        ["PTTL", "t"], ["SELECT", "0"], ["MOVE", "h", "2"], ["MOVE", "sl", "2"],
        ["SELECT", "2"], ["HGETALL", "h"], ["SORT", "sl", "ALPHA"],
    ])


def test_swapdb(differ):
    fill(differ)
    differ.check_all([
        ["SET", "t", "v", "EX", "500"],
        ["SWAPDB", "0", "1"], ["DBSIZE"], ["SELECT", "1"], ["DBSIZE"], ["TTL", "t"],
        ["SELECT", "0"], ["SWAPDB", "1", "0"], ["DBSIZE"], ["SWAPDB", "0", "0"], ["DBSIZE"],
        ["SWAPDB", "0", "16"], ["SWAPDB", "-1", "0"], ["SWAPDB", "x", "0"], ["SWAPDB", "0", "x"],
        ["SWAPDB", "99999999999", "0"], ["SWAPDB", "0", "99999999999"], ["SWAPDB", "0"],
        ["SWAPDB", "0", "3"], ["SET", "new", "1"], ["SWAPDB", "3", "0"], ["GET", "str"],
        ["SELECT", "3"], ["GET", "new"], ["SCAN", "0", "COUNT", "100"],
    ])


def test_renamenx_touch_randomkey(differ):
    differ.check_all([
        ["RANDOMKEY"], ["SET", "a", "1"], ["RANDOMKEY"], ["SET", "b", "2"],
        ["RENAMENX", "a", "b"], ["RENAMENX", "a", "c"], ["RENAMENX", "missing", "d"],
        ["RENAMENX", "c", "c"], ["GET", "c"], ["RENAMENX", "c"],
        ["TOUCH", "b", "c", "missing", "b"], ["TOUCH"], ["RANDOMKEY", "x"],
        ["DEL", "b"], ["RANDOMKEY"],
    ])


def test_expire_options(differ):
    differ.check_all([
        ["SET", "k", "v"],
        ["EXPIRE", "k", "100", "XX"], ["EXPIRE", "k", "100", "GT"], ["TTL", "k"],
        ["EXPIRE", "k", "100", "LT"], ["TTL", "k"],
        ["EXPIRE", "k", "200", "NX"], ["TTL", "k"],
        ["EXPIRE", "k", "50", "GT"], ["EXPIRE", "k", "300", "GT"], ["TTL", "k"],
        ["EXPIRE", "k", "400", "LT"], ["EXPIRE", "k", "30", "LT"], ["TTL", "k"],
        ["EXPIRE", "k", "30", "XX"], ["PEXPIRE", "k", "40000", "XX", "GT"], ["TTL", "k"],
        ["EXPIRE", "k", "30", "NX", "XX"], ["EXPIRE", "k", "30", "GT", "LT"],
        ["EXPIRE", "k", "30", "BOGUS"], ["EXPIRE", "k", "x", "NX"],
        ["EXPIREAT", "k", "4102444800", "GT"], ["EXPIRETIME", "k"], ["PEXPIRETIME", "k"],
        ["PEXPIREAT", "k", "4102444800001", "LT"], ["PEXPIRETIME", "k"],
        ["PEXPIREAT", "k", "4102444799999", "LT"], ["PEXPIRETIME", "k"],
        ["PERSIST", "k"], ["EXPIRETIME", "k"], ["EXPIRETIME", "missing"],
        ["EXPIRE", "missing", "10", "NX"],
        ["EXPIRE", "k", "-1", "GT"], ["EXISTS", "k"], ["EXPIRE", "k", "-1", "LT"], ["EXISTS", "k"],
    ])


def test_object_subcommands(differ):
    fill(differ)
    differ.check_all([
        ["OBJECT", "REFCOUNT", "int"], ["OBJECT", "REFCOUNT", "str"], ["OBJECT", "REFCOUNT", "h"],
        ["OBJECT", "REFCOUNT", "missing"], ["OBJECT", "IDLETIME", "str"],
        ["OBJECT", "FREQ", "str"], ["OBJECT", "FREQ", "missing"], ["OBJECT", "BOGUS", "x"],
        ["OBJECT", "ENCODING", "sbig"], ["OBJECT", "ENCODING", "x"],
    ])


def test_scan_type(differ):
    fill(differ)
    for kind in ["string", "hash", "set", "stream", "list", "zset", "none", "STRING"]:
        reply = differ.ours.call("SCAN", "0", "COUNT", "1000", "TYPE", kind)
        theirs = differ.theirs.call("SCAN", "0", "COUNT", "1000", "TYPE", kind)
        assert sorted(_scan_keys(reply)) == sorted(_scan_keys(theirs)), kind


def _scan_keys(reply: bytes) -> list[bytes]:
    lines = reply.split(b"\r\n")
    return [line for line in lines[4:] if line and not line.startswith((b"$", b"*"))]


# -- SORT, SORT_RO -------------------------------------------------------------------------
def test_sort(differ):
    differ.check_all([
        ["SADD", "n", "3", "10", "-2", "7", "1"], ["SADD", "w", "b", "a", "C", "10", "9"],
        ["SADD", "f", "1.5", "-0.5", "1e3", " 2", "0x10", "inf", "-inf", "", "0"],
        ["MSET", "w_b", "3", "w_a", "1", "w_C", "2", "w_10", "x", "w_9", "0"],
        ["HSET", "hw_b", "k", "2", "n", "x"], ["HSET", "hw_a", "k", "3"],
        ["SORT", "n"], ["SORT", "n", "DESC"], ["SORT", "n", "ALPHA"], ["SORT", "n", "ALPHA", "DESC"],
        ["SORT", "n", "LIMIT", "1", "2"], ["SORT", "n", "LIMIT", "-5", "2"],
        ["SORT", "n", "LIMIT", "3", "-1"], ["SORT", "n", "LIMIT", "10", "2"],
        ["SORT", "n", "LIMIT", "0", "0"], ["SORT", "n", "LIMIT", "1"], ["SORT", "n", "LIMIT", "a", "1"],
        ["SORT", "w"], ["SORT", "w", "ALPHA"], ["SORT", "w", "ALPHA", "DESC", "LIMIT", "1", "3"],
        ["SORT", "f"], ["SORT", "f", "DESC"],
        ["SORT", "w", "BY", "w_*"], ["SORT", "w", "BY", "w_*", "ALPHA"],
        ["SORT", "w", "BY", "w_*", "GET", "#", "GET", "w_*", "GET", "hw_*->k", "GET", "nokey"],
        ["SORT", "w", "BY", "hw_*->k", "ALPHA", "GET", "hw_*->n"],
        ["SORT", "n", "BY", "nosort"], ["SORT", "n", "BY", "nosort", "DESC"],
        ["SORT", "n", "BY", "nosort", "LIMIT", "1", "2", "GET", "#"],
        ["SORT", "missing"], ["SORT", "missing", "STORE", "dst"], ["EXISTS", "dst"],
        ["SORT", "w_a"], ["SORT", "hw_a"], ["SORT", "w_a", "BOGUS"], ["SORT", "n", "BOGUS"],
        ["SORT", "n", "GET"], ["SORT", "n", "BY"], ["SORT", "n", "STORE"],
        ["SORT_RO", "n"], ["SORT_RO", "n", "STORE", "x"], ["SORT_RO", "w", "BY", "w_*", "GET", "#"],
        ["SORT_RO", "missing"], ["SORT_RO", "w_a"], ["SORT"], ["SORT_RO"],
        ["SADD", "emptysrc", "x"], ["SREM", "emptysrc", "x"],
        ["SET", "dst", "v"], ["SORT", "missing", "STORE", "dst"], ["EXISTS", "dst"],
    ])


def test_sort_not_a_number(differ):
    differ.check_all([
        ["SADD", "s", "1", "abc"], ["SORT", "s"], ["SORT", "s", "ALPHA"],
        ["SADD", "t", "1", "2"], ["SET", "k_1", "nan"], ["SORT", "t", "BY", "k_*"],
        ["SET", "k_1", "1e400"], ["SORT", "t", "BY", "k_*"],
        ["SET", "k_1", "5 "], ["SORT", "t", "BY", "k_*"],
        ["SET", "k_1", "-3"], ["SORT", "t", "BY", "k_*"],
    ])


# -- WATCH / MULTI --------------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    # (setup, the key watched in db 0, commands of the other client, expect aborted)
    ([["SET", "a", "1"]], "b", [["COPY", "a", "b"]], True),
    ([["SET", "a", "1"], ["SET", "b", "2"]], "b", [["COPY", "a", "b"]], False),
    ([["SET", "a", "1"]], "a", [["COPY", "a", "b"]], False),
    ([["SET", "a", "1"]], "a", [["MOVE", "a", "1"]], True),
    ([["SET", "a", "1"]], "a", [["SELECT", "1"], ["SET", "x", "1"],
                             ["COPY", "x", "a", "DB", "0", "REPLACE"]], True),
    ([["SET", "a", "1"]], "a", [["SELECT", "1"], ["SET", "a", "1"], ["MOVE", "a", "0"]], False),
    ([["SELECT", "1"], ["SET", "a", "1"], ["SELECT", "0"]], "a",
     [["SELECT", "1"], ["MOVE", "a", "0"]], True),
    ([["SET", "a", "1"]], "a", [["SWAPDB", "0", "1"]], True),
    ([["SELECT", "1"], ["SET", "a", "1"], ["SELECT", "0"]], "a", [["SWAPDB", "0", "1"]], True),
    ([["SET", "other", "1"]], "a", [["SWAPDB", "0", "1"]], False),
    ([["SET", "a", "1"]], "a", [["SWAPDB", "2", "3"]], False),
    ([["SET", "a", "1"]], "a", [["RESTORE", "a", "0", "DUMPED", "REPLACE"]], True),
])
def test_watch_sees_key_commands(differ, case):
    setup, watched, acts, aborted = case
    replies = []
    for port_client, port in zip((differ.ours, differ.theirs), _ports(differ)):
        other = RawClient(port)
        try:
            for argv in setup:
                port_client.call(*argv)
            exists = port_client.call("EXISTS", "a") == b":1\r\n"
            payload = _bulk(port_client.call("DUMP", "a")) if exists else b""
            port_client.call("SELECT", "0")
            assert port_client.call("WATCH", watched) == b"+OK\r\n"
            for argv in acts:
                argv = [payload if arg == "DUMPED" else arg for arg in argv]
                other.call(*argv)
            port_client.call("MULTI")
            port_client.call("PING")
            replies.append(port_client.call("EXEC"))
        finally:
            other.close()
    assert replies[0] == replies[1]
    assert (replies[0] == b"*-1\r\n") == aborted, replies


# -- AOF effects ----------------------------------------------------------------------------
EFFECT_SCRIPT = [
    ["SET", "a", "1"], ["SADD", "s", "3", "1", "2"],
    ["COPY", "a", "b"], ["COPY", "a", "b"], ["COPY", "a", "b", "REPLACE"],
    ["COPY", "missing", "c"], ["COPY", "a", "c", "DB", "2"],
    ["MOVE", "b", "3"], ["MOVE", "b", "3"], ["MOVE", "missing", "3"],
    ["SWAPDB", "2", "3"], ["SWAPDB", "1", "1"],
    ["TOUCH", "a"], ["RANDOMKEY"],
    ["SORT", "s"], ["SORT", "missing", "STORE", "x"],
    ["SET", "x", "1"], ["SORT", "missing", "STORE", "x"],
    ["RESTORE", "r", "0", "PAYLOAD"], ["RESTORE", "r", "0", "PAYLOAD"],
    ["RESTORE", "r", "0", "PAYLOAD", "REPLACE"],
    ["RESTORE", "r2", "0", "PAYLOAD", "ABSTTL", "IDLETIME", "5"],
    ["RESTORE", "r3", "4102444800000", "PAYLOAD", "ABSTTL"],
    ["RESTORE", "r", "1", "PAYLOAD", "ABSTTL", "REPLACE"],      # past with REPLACE: DEL
    ["RESTORE", "r", "1", "PAYLOAD", "ABSTTL"],                 # past: nothing
    ["EXPIREAT", "a", "4102444800", "NX"], ["EXPIREAT", "a", "4102444800", "NX"],
    ["EXPIRE", "a", "-1", "GT"], ["EXPIRE", "a", "-1", "LT"],
    ["MULTI"], ["COPY", "s", "s2"], ["MOVE", "s2", "4"], ["EXEC"],
]


def test_effects_match_redis_aof(tidelog, aof_oracle):
    theirs = RawClient(aof_oracle.port)
    ours = RawClient(tidelog.port)
    try:
        for client in (ours, theirs):
            assert client.call("FLUSHALL") == b"+OK\r\n"
        ours.call("SET", "p", "payload-value")
        payload = _bulk(ours.call("DUMP", "p"))
        ours.call("DEL", "p")
        before = len(read_aof_commands(aof_oracle.dir))
        with captured_effects(tidelog) as captured:
            for argv in EFFECT_SCRIPT:
                argv = [payload if arg == "PAYLOAD" else arg for arg in argv]
                got_ours, got_theirs = ours.call(*argv), theirs.call(*argv)
                if argv[0] != "RANDOMKEY":
                    assert got_ours == got_theirs, argv
            written = [argv for argv in read_aof_commands(aof_oracle.dir)[before:]
                       if argv[0].upper() != b"SELECT"]
            got = tidelog.call(lambda: list(captured))
        assert len(got) == len(written)
        for mine, redis_argv in zip(got, written):
            assert mine == redis_argv
    finally:
        ours.close()
        theirs.close()


@pytest.mark.parametrize("name", ["copy", "move", "swapdb", "touch", "randomkey", "sort",
                                  "sort_ro", "dump", "restore", "renamenx"])
def test_command_info(differ, name):
    differ.check("COMMAND", "INFO", name)


@pytest.mark.parametrize("argv", [
    ["SORT", "k"], ["SORT", "k", "STORE", "d"], ["SORT", "k", "GET", "STORE", "STORE", "d2"],
    ["SORT", "k", "LIMIT", "STORE", "STORE", "STORE", "d3"], ["SORT_RO", "k", "BY", "x"],
    ["COPY", "a", "b"], ["MOVE", "a", "1"], ["TOUCH", "a", "b"], ["RESTORE", "k", "0", "p"],
    ["DUMP", "k"], ["SWAPDB", "0", "1"], ["RANDOMKEY"],
])
def test_command_getkeys(differ, argv):
    differ.check("COMMAND", "GETKEYS", *argv)
    differ.check("COMMAND", "GETKEYSANDFLAGS", *argv)


def _with_footer(body: bytes, version: int) -> bytes:
    from tidelog.rdb.format import _U64, crc64
    data = body + version.to_bytes(2, "little")
    return data + _U64.pack(crc64(data))


def test_restore_payload_versions_and_leftovers(differ):
    differ.check("RESTORE", "v10", "0", _with_footer(b"\x00\x03abc", 10))
    differ.check("GET", "v10")
    differ.check("RESTORE", "v9", "0", _with_footer(b"\x00\x03abc", 9))
    # bytes left after the value: ignored
    differ.check("RESTORE", "left", "0", _with_footer(b"\x00\x03abcdef", 10))
    # newer than any RDB version we read: refused as Redis refuses one newer than its own
    differ.check("RESTORE", "v99", "0", _with_footer(b"\x00\x03abc", 99))
    differ.check("RESTORE", "v16", "0", _with_footer(b"\x00\x03abc", 16))


def test_restore_reads_rdb_11_and_12_payloads(differ):
    """Redis 7.2 writes RDB 11 payloads, 7.4 RDB 12 (redis.io/docs/latest/commands/restore/:
    a payload is refused only when its version is newer than the server's); 7.0.15 reads
    up to 10, Redis 8.10 up to 15."""
    for version in (11, 12, 13, 14, 15):  # 14: Redis 8.8 (arrays), 15: 8.10
        payload = _with_footer(b"\x00\x03abc", version)
        differ.check_newer("RESTORE", f"v{version}", "0", payload, ours=b"+OK\r\n")


def test_swapdb_serves_blocked_clients(differ, tidelog):
    from tests.support.differ_tools import Pair, wait_blocked
    waiting = Pair(differ)
    try:
        differ.check("SELECT", "1")
        differ.check("XADD", "s", "5-1", "f", "v")
        differ.check("SELECT", "0")
        waiting.send("XREAD", "BLOCK", "0", "STREAMS", "s", "0-0")
        wait_blocked(differ, tidelog, 1)
        differ.check("SWAPDB", "0", "1")
        ours, theirs = waiting.replies()
        assert ours == theirs
        assert b"5-1" in ours
    finally:
        waiting.close()


def test_move_and_copy_serve_blocked_clients(differ, tidelog):
    from tests.support.differ_tools import Pair, wait_blocked
    waiting = Pair(differ)
    try:
        waiting.call("SELECT", "2")
        waiting.send("XREAD", "BLOCK", "0", "STREAMS", "moved", "copied", "0-0", "0-0")
        wait_blocked(differ, tidelog, 1)
        differ.check("XADD", "moved", "1-1", "f", "v")
        differ.check("MOVE", "moved", "2")
        ours, theirs = waiting.replies()
        assert ours == theirs and b"1-1" in ours
        waiting.send("XREAD", "BLOCK", "0", "STREAMS", "copied", "0-0")
        wait_blocked(differ, tidelog, 1)
        differ.check("XADD", "src", "2-1", "f", "v")
        differ.check("COPY", "src", "copied", "DB", "2")
        ours, theirs = waiting.replies()
        assert ours == theirs and b"2-1" in ours
    finally:
        waiting.close()


def test_restore_relative_ttl_propagates_absolute(tidelog, aof_oracle):
    """RESTORE key <ms> ... goes to the AOF as the deadline with ABSTTL, as 7.0.15 writes it."""
    theirs = RawClient(aof_oracle.port)
    ours = RawClient(tidelog.port)
    try:
        for client in (ours, theirs):
            assert client.call("FLUSHALL") == b"+OK\r\n"
        payload = _with_footer(b"\x00\x03abc", 10)
        before = len(read_aof_commands(aof_oracle.dir))
        with captured_effects(tidelog) as captured:
            for client in (ours, theirs):
                assert client.call("RESTORE", "k", "100000", payload, "REPLACE") == b"+OK\r\n"
            written = [argv for argv in read_aof_commands(aof_oracle.dir)[before:]
                       if argv[0].upper() != b"SELECT"]
            got = tidelog.call(lambda: list(captured))
        assert len(got) == len(written) == 1
        mine, redis_argv = got[0], written[0]
        assert abs(int(mine[2]) - int(redis_argv[2])) < 60_000
        mine[2] = redis_argv[2] = b"T"
        assert mine == redis_argv
        assert mine[-1] == b"ABSTTL"
    finally:
        ours.close()
        theirs.close()


@pytest.mark.parametrize("node_entries", [1, 100])
def test_dump_of_a_stream_without_groups_is_byte_identical(differ, node_entries):
    differ.reset(node_entries=node_entries)
    # uncompressed: Redis's LZF output is not ours byte for byte
    for client in (differ.ours, differ.theirs):
        assert client.call("CONFIG", "SET", "rdbcompression", "no") == b"+OK\r\n"
    try:
        _dump_streams(differ)
    finally:
        for client in (differ.ours, differ.theirs):
            client.call("CONFIG", "SET", "rdbcompression", "yes")


def _dump_streams(differ):
    for i in range(1, 8):
        differ.check("XADD", "x", f"{i}-1", "f", str(i), "g", "x" * i)
    differ.check("XDEL", "x", "3-1")
    differ.check("DUMP", "x")
    differ.check("XADD", "e", "MAXLEN", "0", "1-1", "f", "v")   # an empty stream
    differ.check("DUMP", "e")


def test_sort_resp3_and_more_edges(differ):
    differ.resp3()
    differ.check_all([
        ["SADD", "s", "2", "1", "3"], ["SORT", "s"], ["SORT", "s", "GET", "#", "GET", "k_*"],
        ["SORT_RO", "s", "LIMIT", "0", "1"], ["SORT", "missing"],
        ["SET", "k_2", "x"], ["SORT", "s", "BY", "k_*", "ALPHA", "GET", "k_*"],
        ["HSET", "h_1", "f", "9"], ["SORT", "s", "BY", "h_*->f", "GET", "h_*->f", "GET", "h_*->g"],
        ["SORT", "s", "BY", "h_*->f", "DESC"],
        ["SORT", "s", "GET", "h_*->"], ["SORT", "s", "GET", "*"], ["SORT", "s", "GET", "k_*->f"],
        ["SORT", "s", "ASC", "DESC"], ["SORT", "s", "DESC", "ASC"], ["SORT", "s", "alpha", "limit", "1", "5"],
        ["DUMP", "s"], ["RESTORE", "s", "0", "x"], ["OBJECT", "FREQ", "s"],
    ])
