"""Differential tests for causes found by running Redis's own Tcl suite
(`make compat`) against Tidelog, compared byte for byte with redis-server
7.0.15.
"""

from __future__ import annotations

import pytest

from tests.support.differ_tools import parse
from tests.support.rawclient import RawClient, encode_command

pytestmark = pytest.mark.differential

ZIPLIST_ALIASES = {
    "list-max-ziplist-size": "list-max-listpack-size",
    "hash-max-ziplist-entries": "hash-max-listpack-entries",
    "hash-max-ziplist-value": "hash-max-listpack-value",
    "zset-max-ziplist-entries": "zset-max-listpack-entries",
    "zset-max-ziplist-value": "zset-max-listpack-value",
}
DEFAULTS = {"list-max-listpack-size": "-2", "hash-max-listpack-entries": "512",
            "hash-max-listpack-value": "64", "zset-max-listpack-entries": "128",
            "zset-max-listpack-value": "64"}


@pytest.fixture
def restore_listpack_limits(differ):
    yield differ
    for name, value in DEFAULTS.items():
        for client in (differ.ours, differ.theirs):
            assert client.call("CONFIG", "SET", name, value) == b"+OK\r\n"


def _as_map(reply: bytes) -> dict:
    flat = parse(reply)
    return dict(zip(flat[::2], flat[1::2]))


def test_ziplist_names_are_aliases(restore_listpack_limits):
    d = restore_listpack_limits
    for alias, name in ZIPLIST_ALIASES.items():
        d.check_all([
            ["CONFIG", "GET", alias], ["CONFIG", "GET", alias.upper()],
            ["CONFIG", "SET", alias, "17"], ["CONFIG", "GET", name], ["CONFIG", "GET", alias],
            ["CONFIG", "SET", alias, "x"], ["CONFIG", "SET", alias, "5", name, "6"],
            ["CONFIG", "SET", name, "9"], ["CONFIG", "GET", alias],
        ])
    # a pattern matches the old names as well as the new ones (in hash order)
    for pattern in ("*ziplist*", "list-max*", "zset-max-*"):
        ours = _as_map(d.ours.call("CONFIG", "GET", pattern))
        theirs = _as_map(d.theirs.call("CONFIG", "GET", pattern))
        assert ours == theirs, pattern
    assert len(_as_map(d.ours.call("CONFIG", "GET", "*ziplist*"))) == 5


def test_debug_quicklist_packed_threshold(differ):
    # accepted and checked as Redis checks it (Tidelog's lists have no plain nodes)
    differ.check_all([
        ["DEBUG", "QUICKLIST-PACKED-THRESHOLD", value]
        for value in ("1b", "1", "100", "1kb", "5gb", "abc", "-1", "4294967295", "4293918720",
                      "4293918721", "1.5", "0")
    ] + [["DEBUG", "quicklist-packed-threshold"], ["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1", "2"]])
    # a list pushed with a threshold of 1 byte reads back the same
    differ.check("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1b")
    differ.check("RPUSH", "l", "a" * 500, "b", "c" * 500)
    differ.check("LINSERT", "l", "AFTER", "b", "d" * 500)
    differ.check("LRANGE", "l", "0", "-1")
    differ.check("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0")


def _port(client) -> int:
    return client.sock.getpeername()[1]


def _both(differ, scenario) -> None:
    """Run ``scenario(port)`` (which returns a transcript of reply bytes) on
    both servers and compare."""
    ours = scenario(_port(differ.ours))
    theirs = scenario(_port(differ.theirs))
    assert ours == theirs, f"\ntidelog: {ours!r}\nredis:   {theirs!r}"


def test_client_reply_off_keeps_resp3_pushes(differ):
    # Redis's pubsub.tcl "PubSub messages with CLIENT REPLY OFF": in RESP3 the
    # subscribe confirmations and the messages are pushes, sent all the same
    def scenario(port):
        sub, pub = RawClient(port), RawClient(port)
        try:
            out = [sub.call("HELLO", "3")[:1]]
            sub.send_raw(encode_command(["CLIENT", "REPLY", "OFF"]))
            out.append(sub.call("SUBSCRIBE", "channel"))
            out.append(sub.call("PSUBSCRIBE", "ch*"))
            sub.send_raw(encode_command(["CLIENT", "REPLY", "OFF"]))
            out.append(pub.call("PUBLISH", "channel", "hello"))
            out += [sub.read_reply(), sub.read_reply()]
            sub.send_raw(encode_command(["CLIENT", "REPLY", "OFF"]))
            out.append(sub.call("UNSUBSCRIBE", "channel"))
            out.append(sub.call("PUNSUBSCRIBE", "ch*"))
            # a RESP3 command's own reply stays silent: PING's, then SKIP's
            sub.send_raw(encode_command(["PING"]))
            sub.send_raw(encode_command(["CLIENT", "REPLY", "SKIP"]))
            sub.send_raw(encode_command(["SUBSCRIBE", "x"]))  # a push: sent
            sub.send_raw(encode_command(["CLIENT", "REPLY", "ON"]))
            out += [sub.read_reply(), sub.read_reply()]
            return out
        finally:
            sub.close()
            pub.close()

    _both(differ, scenario)


def test_client_reply_off_resp2_keeps_pubsub(differ):
    # Redis's pubsub.tcl keyspace notification tests: in RESP2 too, Pub/Sub
    # confirmations and messages go out under CLIENT REPLY OFF / SKIP
    def scenario(port):
        sub, pub = RawClient(port), RawClient(port)
        try:
            out = [pub.call("CONFIG", "SET", "notify-keyspace-events", "KA")]
            sub.send_raw(encode_command(["CLIENT", "REPLY", "OFF"]))
            out.append(sub.call("PSUBSCRIBE", "*"))
            out.append(pub.call("SET", "foo", "bar"))
            out.append(sub.read_reply())
            out.append(sub.call("PUNSUBSCRIBE", "*"))
            sub.send_raw(encode_command(["CLIENT", "REPLY", "SKIP"]))
            out.append(sub.call("SUBSCRIBE", "ch"))
            out.append(pub.call("PUBLISH", "ch", "hello"))
            out.append(sub.read_reply())
            out.append(pub.call("CONFIG", "SET", "notify-keyspace-events", ""))
            return out
        finally:
            sub.close()
            pub.close()

    _both(differ, scenario)


@pytest.fixture
def short_busy_threshold(differ):
    for client in (differ.ours, differ.theirs):
        assert client.call("CONFIG", "SET", "lua-time-limit", "10") == b"+OK\r\n"
    yield differ
    for client in (differ.ours, differ.theirs):
        assert client.call("CONFIG", "SET", "lua-time-limit", "5000") == b"+OK\r\n"


@pytest.mark.parametrize("queued", [True, False], ids=["queued-then-busy", "just-exec"])
def test_exec_while_a_script_is_busy(short_busy_threshold, queued):
    # Redis's multi.tcl "EXEC and script timeout": EXEC refused with -BUSY is
    # an EXECABORT that ends the transaction; none of it ran
    def scenario(port):
        looping, tx, admin = RawClient(port), RawClient(port), RawClient(port)
        try:
            out = [admin.call("SET", "xx", "1"), tx.call("MULTI"), tx.call("INCR", "xx")]
            looping.send_raw(encode_command(["EVAL", "while true do end", "0"]))
            for _ in range(1000):  # until the script is past the threshold
                if admin.call("PING").startswith(b"-BUSY"):
                    break
            else:
                raise AssertionError("the script never became busy")
            if queued:
                out.append(tx.call("INCR", "xx"))
            out.append(tx.call("EXEC"))
            out.append(admin.call("SCRIPT", "KILL"))
            out.append(looping.read_reply()[:16])
            out += [admin.call("GET", "xx"), tx.call("PING", "asdf"), tx.call("EXEC")]
            return out
        finally:
            for client in (looping, tx, admin):
                client.close()

    _both(short_busy_threshold, scenario)


def test_debug_digest_shapes(differ):
    # the digests themselves are Tidelog's own; the reply shapes are Redis's
    differ.check_all([
        ["DEBUG", "DIGEST"], ["DEBUG", "DIGEST-VALUE"], ["DEBUG", "DIGEST-VALUE", "nokey"],
        ["DEBUG", "DIGEST-VALUE", "a", "b"], ["DEBUG", "DIGEST", "x"],
    ])
    for client in (differ.ours, differ.theirs):
        client.call("SET", "k", "v")
        digest = client.call("DEBUG", "DIGEST")
        assert digest.startswith(b"+") and len(digest) == 43 and digest != b"+" + b"0" * 40 + b"\r\n"
        values = parse(client.call("DEBUG", "DIGEST-VALUE", "k", "nokey"))
        zeros = b"+" + b"0" * 40  # simple strings, as parse shows them
        assert len(values[0]) == 41 and values[0] != zeros and values[1] == zeros


@pytest.mark.parametrize("build", [
    [["RPUSH", "{k}a", "1", "2", "x" * 100]],
    [["SADD", "{k}a", "1", "2", "3"]],
    [["SADD", "{k}a", "a", "b", "c" * 100]],
    [["HSET", "{k}a", "f", "v", "g", "w"]],
    [["ZADD", "{k}a", "1", "a", "2.5", "b"]],
    [["XADD", "{k}a", "1-1", "f", "v"], ["XGROUP", "CREATE", "{k}a", "g", "0"]],
    [["SET", "{k}a", "12345"]],
])
def test_debug_digest_follows_contents(differ, build):
    # as in Redis's keyspace.tcl (COPY) and aofrw.tcl (reload): a copy digests
    # the same; a change digests differently; DEBUG DIGEST ignores key order
    for client in (differ.ours, differ.theirs):
        for argv in build:
            client.call(*argv)
        before = client.call("DEBUG", "DIGEST")
        assert client.call("COPY", "{k}a", "{k}b") == b":1\r\n"
        a, b = parse(client.call("DEBUG", "DIGEST-VALUE", "{k}a", "{k}b"))
        assert a == b
        assert client.call("DEBUG", "DIGEST") != before
        assert client.call("DEL", "{k}b") == b":1\r\n"
        assert client.call("DEBUG", "DIGEST") == before
        client.call("RENAME", "{k}a", "{k}c")
        assert parse(client.call("DEBUG", "DIGEST-VALUE", "{k}c")) == [a]
        assert client.call("DEBUG", "DIGEST") != before
        client.call("FLUSHALL")


@pytest.mark.parametrize("script", [
    "return _G",
    "local a = {}; setmetatable(a,{__index=function() foo() end}) return a",
    "local a = {}; setmetatable(a,{__index=function() redis.call('set', 'x', '1') end}) return a",
    "local a = {1, 2}; setmetatable(a,{__index=function() return {err='no'} end}) return a",
    "local a = {}; setmetatable(a,{__index={ok='fake'}}) return a",
])
def test_script_reply_tables_are_read_raw(differ, script):
    # Redis's scripting.tcl: a metatable is not consulted when a reply is built
    differ.check("EVAL", script, "0")
    differ.check("GET", "x")


def test_script_returning_a_table_that_holds_itself(differ):
    # nested arrays down to Lua's stack limit, then the error; the connection
    # stays in step (Redis's scripting.tcl "Script return recursive object")
    script = "local a = {}; local b = {a}; a[1] = b; return a"
    ours = differ.check("EVAL", script, "0")
    assert ours.endswith(b"*1\r\n-ERR reached lua stack limit\r\n")
    differ.check("PING")


@pytest.mark.parametrize("call", [
    "unpack({1,2,3}, -2, 2147483647)", "unpack({1,2,3}, 0, 2147483647)",
    "unpack({1,2,3}, -2147483648, -2)", "unpack({1,2,3}, -1, -2)", "unpack({1,2,3}, 1, -1)",
    "unpack({1,2,3}, 1, 9000)", "unpack({1,2,3}, 1, 7000)", "unpack({1,2,3})",
    "unpack({1,2,3}, 1.5, 2.7)", "unpack({1,2,3}, '2')", "unpack({1,2,3}, 'x')", "unpack()",
    "unpack({1,2,3}, 2, '3')", "unpack({1,2,3}, -1, 5)",
    "#{unpack({}, 1, 7997)}", "#{unpack({}, 1, 7998)}", "#{unpack({}, 1, 7997, 'x')}",
    "#{unpack((function() local a = {} for i = 1, 7999 do a[i] = 1 end return a end)())}",
    "#{unpack((function() local a = {} for i = 1, 8000 do a[i] = 1 end return a end)())}",
    "#{unpack((function() local a = {} for i = 1, 7999 do a[i] = 1 end return a end)(), 1)}",
])
def test_script_unpack_ranges(differ, call):
    # Redis's scripting.tcl "Test table unpack with invalid indexes": a huge
    # range is an error, never a crash
    reply = differ.check("EVAL", f"return {{{call}}}", "0")
    if reply.startswith(b"-"):  # the error names the script's SHA: same on both
        assert b"script: " in reply
    differ.check("PING")


def test_function_names_are_case_insensitive(differ):
    # Redis's functions.tcl "test function case insensitive"; library names are not
    lib1 = "#!lua name=lib1\nredis.register_function('test', function() return 1 end)"
    lib2 = "#!lua name=lib2\nredis.register_function('TEST', function() return 2 end)"
    lib3 = "#!lua name=LIB1\nredis.register_function('other', function() return 3 end)"
    try:
        differ.check_all([
            ["FUNCTION", "LOAD", lib1], ["FCALL", "TEST", "0"], ["FCALL", "TeSt", "0"],
            ["FCALL_RO", "TEST", "0"], ["FUNCTION", "LOAD", lib2], ["FUNCTION", "LOAD", lib3],
            ["FCALL", "OTHER", "0"], ["FUNCTION", "DELETE", "lib1"], ["FCALL", "test", "0"],
            ["FUNCTION", "LOAD", lib2], ["FCALL", "test", "0"],
        ])
    finally:
        for client in (differ.ours, differ.theirs):
            client.call("FUNCTION", "FLUSH")


def test_exec_refused_as_its_queued_writes_would_be(differ):
    # Redis's multi.tcl "exec with write commands and state change": a write
    # queued before min-replicas-to-write took effect makes EXEC an EXECABORT
    def scenario(port):
        tx, admin = RawClient(port), RawClient(port)
        try:
            out = [admin.call("SET", "xx", "1"), tx.call("MULTI"), tx.call("INCR", "xx")]
            out.append(admin.call("CONFIG", "SET", "min-replicas-to-write", "2"))
            out += [tx.call("EXEC"), admin.call("GET", "xx")]
            # a read-only transaction still runs
            out += [tx.call("MULTI"), tx.call("GET", "xx"), tx.call("EXEC")]
            out.append(tx.call("INCR", "xx"))
            return out
        finally:
            admin.call("CONFIG", "SET", "min-replicas-to-write", "0")
            tx.close()
            admin.close()

    _both(differ, scenario)


def test_exec_on_a_stale_replica(differ):
    # Redis's multi.tcl "exec with read commands and stale replica state
    # change": REPLICAOF to port 0 is accepted, and a queued read is then
    # refused on stale data (EXECABORT ... MASTERDOWN)
    def scenario(port):
        tx, admin = RawClient(port), RawClient(port)
        try:
            out = [admin.call("CONFIG", "SET", "replica-serve-stale-data", "no"),
                   admin.call("SET", "xx", "1"), tx.call("MULTI"), tx.call("GET", "xx"),
                   admin.call("REPLICAOF", "localhsot", "0")]
            out += [tx.call("EXEC"), admin.call("REPLICAOF", "no", "one")]
            out += [admin.call("REPLICAOF", "localhsot", "-1"),
                    admin.call("REPLICAOF", "localhsot", "65536"),
                    admin.call("REPLICAOF", "localhsot", "x")]
            return out
        finally:
            admin.call("REPLICAOF", "no", "one")
            admin.call("CONFIG", "SET", "replica-serve-stale-data", "yes")
            tx.close()
            admin.close()

    _both(differ, scenario)


def test_config_set_maxmemory_evicts_at_once(differ):
    # Redis's pubsub.tcl "Keyspace notifications: evicted events"
    def scenario(port):
        sub, admin = RawClient(port), RawClient(port)
        try:
            out = [admin.call("CONFIG", "SET", "notify-keyspace-events", "Ee"),
                   admin.call("CONFIG", "SET", "maxmemory-policy", "allkeys-lru"),
                   sub.call("PSUBSCRIBE", "*"), admin.call("SET", "foo", "bar"),
                   admin.call("CONFIG", "SET", "maxmemory", "1"), sub.read_reply()]
            out += [admin.call("CONFIG", "SET", "maxmemory", "0"), admin.call("EXISTS", "foo")]
            return out
        finally:
            admin.call("CONFIG", "SET", "maxmemory", "0")
            admin.call("CONFIG", "SET", "maxmemory-policy", "noeviction")
            admin.call("CONFIG", "SET", "notify-keyspace-events", "")
            sub.close()
            admin.close()

    _both(differ, scenario)


@pytest.mark.parametrize("resp", [2, 3])
def test_debug_protocol(differ, resp):
    # Redis's protocol.tcl "test big number parsing" and the RESP3 type tests
    if resp == 3:
        differ.resp3()
    for kind in ("string", "integer", "double", "bignum", "null", "array", "set", "map",
                 "attrib", "push", "verbatim", "true", "false", "nosuch", "STRING"):
        differ.check("DEBUG", "PROTOCOL", kind)
    differ.check("PING")


def test_function_argument_errors(differ):
    # Redis's functions.tcl "test function restore/wrong argument" and
    # "function list ... multiple times"
    differ.check_all([
        ["FUNCTION", "FLUSH", "bad_arg"], ["FUNCTION", "FLUSH", "sync", "extra_arg"],
        ["FUNCTION", "RESTORE"], ["FUNCTION", "RESTORE", "a", "b", "c", "d"],
        ["FUNCTION", "LIST", "WITHCODE", "withcode"],
        ["FUNCTION", "LIST", "LIBRARYNAME", "a", "libraryname", "b"],
        ["FUNCTION", "LIST", "LIBRARYNAME"], ["FUNCTION", "LIST", "bad"],
        ["FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", "x"],
    ])


@pytest.mark.parametrize("body", [
    "redis.register_function('f1')",
    "return math.random()",
    "local s = string.len('x')\nredis.register_function('f1', function() return 1 end)",
    "local s = type('x')\nredis.register_function('f1', function() return 1 end)",
    "redis.register_function('f1', function() return string.len('abc') end)",
])
def test_function_load_sees_only_redis(differ, body):
    # Redis's functions.tcl "math.random from function load", "registration
    # with only name": while a library loads, its code sees only redis
    try:
        differ.check("FUNCTION", "LOAD", "#!lua name=lib2\n" + body)
        differ.check("FCALL", "f1", "0")
    finally:
        for client in (differ.ours, differ.theirs):
            client.call("FUNCTION", "FLUSH")


@pytest.mark.parametrize("kind", ["function", "script"])
def test_kill_stops_only_its_own_kind(short_busy_threshold, kind):
    # Redis's functions.tcl "script kill not working on function", "function
    # kill not working on eval": -BUSY names the KILL that works
    lib = ("#!lua name=test\nredis.register_function('test', "
           "function() local a = 1 while true do a = a + 1 end end)")

    def scenario(port):
        looping, admin = RawClient(port), RawClient(port)
        try:
            out = [admin.call("FUNCTION", "LOAD", "REPLACE", lib)]
            if kind == "function":
                looping.send_raw(encode_command(["FCALL", "test", "0"]))
                wrong, right = ["SCRIPT", "KILL"], ["FUNCTION", "KILL"]
            else:
                looping.send_raw(encode_command(["EVAL", "local a = 1 while true do a = a + 1 end", "0"]))
                wrong, right = ["FUNCTION", "KILL"], ["SCRIPT", "KILL"]
            for _ in range(1000):  # until the script is past the threshold
                reply = admin.call("PING")
                if reply.startswith(b"-BUSY"):
                    break
            else:
                raise AssertionError("never busy")
            out += [reply, admin.call(*wrong), admin.call("MULTI"), admin.call("EXEC")]
            out += [admin.call(*right), looping.read_reply(), admin.call("PING")]
            return out
        finally:
            admin.call("FUNCTION", "FLUSH")
            looping.close()
            admin.close()

    _both(short_busy_threshold, scenario)


@pytest.mark.parametrize("header", [
    '#!lua name="foo"', "#!lua name='bar'", '#!lua name="ba', '#!lua  name=sp  ',
    '#!lua name="a b"', '#!"lua" name=q',
])
def test_function_library_header_quotes(differ, header):
    # Redis's functions.tcl "function test name with quotes": the header is
    # split as Redis splits arguments
    try:
        differ.check("FUNCTION", "LOAD", header + "\nredis.register_function('foo', function() return 1 end)")
    finally:
        for client in (differ.ours, differ.theirs):
            client.call("FUNCTION", "FLUSH")


def test_register_function_outside_load(differ):
    # Redis's functions.tcl "malicious access test"
    lib = ("#!lua name=lib1\nlocal lib = redis\n"
           "lib.register_function('f2', function()\n"
           "  lib.register_function('f1', function() return 1 end)\nend)")
    try:
        differ.check_all([["FUNCTION", "LOAD", lib], ["FCALL", "f2", "0"], ["FCALL", "f1", "0"]])
    finally:
        for client in (differ.ours, differ.theirs):
            client.call("FUNCTION", "FLUSH")


@pytest.mark.parametrize("pattern", [
    "*?" * 999, "*?" * 1000, "*?" * 1001, "*?" * 1000 + "*", "*?" * 1001 + "*",
    "*a" * 1000, "*a" * 1001, "**?" * 1001,
])
def test_keys_with_deeply_nested_stars(differ, pattern):
    # Redis's keyspace.tcl "Regression for pattern matching very long nested
    # loops": past 1,000 stars a pattern matches nothing
    differ.check("SET", "a" * 2500, "1")
    differ.check("KEYS", pattern)


def test_latency_histogram_of_a_container(differ):
    # Redis's latency-monitor.tcl "LATENCY HISTOGRAM sub commands": CLIENT
    # stands for its subcommands that were called (one here: order is Redis's
    # hash order)
    differ.normalise(rb"(histogram_usec\r\n%)\d+\r\n(?::\d+\r\n:\d+\r\n)+", rb"\1N\r\n<buckets>")
    differ.resp3()
    differ.check("CONFIG", "RESETSTAT")
    differ.check("CLIENT", "GETNAME")
    differ.check("LATENCY", "HISTOGRAM", "client")
    differ.check("LATENCY", "HISTOGRAM", "client|getname")
    differ.check("LATENCY", "HISTOGRAM", "client|id")
