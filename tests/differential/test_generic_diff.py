"""Differential tests for the generic commands: connection, keyspace, server
and string commands, compared byte for byte with redis-server 7.0.15.

Most tests run twice, over RESP2 and RESP3 (the ``d`` fixture).  Replies
that list several keys come back in hash order, which differs between the
two servers; :func:`check_unordered` compares those as sorted lists.

Not compared here, by design (see the integration tests instead): CLIENT
LIST/INFO lines (addresses, ages), HELLO's client id (normalised), INFO
(sizes and times), COMMAND COUNT and the HELP texts that list subcommands
Tidelog does not have (CLIENT, MEMORY, DEBUG).
"""

from __future__ import annotations

import pytest

from tests.support.differ_tools import parse

pytestmark = pytest.mark.differential


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def d(differ, request):
    if request.param == 3:
        differ.resp3()
    return differ


@pytest.fixture
def with_stream(differ):
    """A stream key ``s`` on both servers (for WRONGTYPE paths)."""
    reply = differ.ours.call("XADD", "s", "1-1", "f", "v")
    if reply != b"$3\r\n1-1\r\n":
        pytest.skip(f"XADD is not available yet in Tidelog ({reply!r})")
    assert differ.theirs.call("XADD", "s", "1-1", "f", "v") == reply
    return "s"


def check_unordered(differ, *argv) -> list:
    """Compare a reply whose array elements (or, for SCAN, the key list) may
    come in any order."""
    ours, theirs = parse(differ.ours.call(*argv)), parse(differ.theirs.call(*argv))
    if argv[0].upper() == "SCAN":
        assert ours[0] == theirs[0] == b"0", (ours, theirs)
        ours, theirs = ours[1], theirs[1]
    assert sorted(ours) == sorted(theirs), f"\ncommand: {argv!r}\ntidelog: {ours!r}\nredis:   {theirs!r}"
    return ours


# =====================================================================================
# Unknown commands, arity
# =====================================================================================
def test_unknown_command_and_arity(d):
    d.check_all([
        ["NOSUCHCOMMAND"],
        ["NOSUCHCOMMAND", "a", "b"],
        ["nosuch", "x" * 200, "y"],
        ["GET"], ["GET", "a", "b"], ["SET", "a"], ["DEL"], ["EXISTS"], ["TYPE"],
        ["KEYS"], ["KEYS", "a", "b"], ["SCAN"], ["RENAME", "a"], ["RENAMENX", "a"],
        ["EXPIRE", "a"], ["PEXPIRE", "a"], ["EXPIREAT", "a"], ["PEXPIREAT", "a"],
        ["TTL"], ["PTTL", "a", "b"], ["EXPIRETIME"], ["PEXPIRETIME"], ["PERSIST"],
        ["DBSIZE", "x"], ["TIME", "x"], ["ECHO"], ["ECHO", "a", "b"], ["PING", "a", "b"],
        ["SELECT"], ["AUTH"], ["MGET"], ["INCR"], ["DECR", "a", "b"], ["INCRBY", "a"],
        ["DECRBY", "a"], ["UNLINK"], ["RESET", "x"],
    ])


def test_unknown_subcommands_and_container_arity(d):
    d.check_all([
        ["CLIENT"], ["CLIENT", "NOSUCH"], ["CLIENT", "ID", "x"], ["CLIENT", "SETNAME"],
        ["CLIENT", "GETNAME", "x"], ["CLIENT", "INFO", "x"], ["CLIENT", "KILL"],
        ["CLIENT", "UNBLOCK"], ["CLIENT", "NO-EVICT"], ["CLIENT", "SETNAME", "a", "b"],
        ["CONFIG"], ["CONFIG", "NOSUCH"], ["CONFIG", "GET"], ["CONFIG", "SET"],
        ["CONFIG", "SET", "hz"], ["CONFIG", "SET", "hz", "10", "timeout"],
        ["CONFIG", "RESETSTAT", "x"], ["CONFIG", "REWRITE", "x"], ["CONFIG", "HELP", "x"],
        ["COMMAND", "NOSUCH"], ["COMMAND", "COUNT", "x"], ["COMMAND", "GETKEYS"],
        ["COMMAND", "GETKEYS", "get"], ["COMMAND", "HELP", "x"],
        ["OBJECT"], ["OBJECT", "NOSUCH"], ["OBJECT", "ENCODING"],
        ["OBJECT", "ENCODING", "a", "b"], ["OBJECT", "HELP", "x"],
        ["MEMORY"], ["MEMORY", "NOSUCH"], ["MEMORY", "USAGE"],
        ["DEBUG"], ["DEBUG", "NOSUCH"], ["DEBUG", "OBJECT"], ["DEBUG", "OBJECT", "a", "b"],
    ])


# =====================================================================================
# Connection
# =====================================================================================
def test_ping_echo(d):
    d.check_all([["PING"], ["PING", "hello"], ["PING", ""], ["ECHO", "x"], ["ECHO", ""],
                 ["ECHO", "a\r\nb\x00c"], ["ping"], ["PiNg", "MiXeD"]])


def test_hello(differ):
    differ.normalise(rb"\$2\r\nid\r\n:\d+\r\n", b"$2\r\nid\r\n:ID\r\n")
    # We report the Redis we follow (8.10.0), the oracle its own 7.0.15.
    differ.normalise(rb"\$7\r\nversion\r\n\$\d+\r\n[\d.]+\r\n", b"$7\r\nversion\r\n<V>\r\n")
    assert b"$6\r\n8.10.0\r\n" in differ.ours.call("HELLO", "2")
    differ.check_all([
        ["HELLO", "4"], ["HELLO", "1"], ["HELLO", "foo"], ["HELLO", "-1"], ["HELLO", "2.0"],
        ["HELLO", "2", "AUTH", "bob", "x"], ["HELLO", "2", "AUTH"],
        ["HELLO", "2", "AUTH", "default"], ["HELLO", "2", "SETNAME"],
        ["HELLO", "2", "SETNAME", "a b"], ["HELLO", "2", "FOO"],
        ["HELLO", "3", "AUTH", "DEFAULT", "pw"],
        ["HELLO", "4", "FOO"],  # the version is checked first
        ["HELLO", "2"], ["HELLO", "2", "AUTH", "default", "anything"],
        ["HELLO", "2", "SETNAME", "conn-a", "AUTH", "default", "x"], ["CLIENT", "GETNAME"],
        ["HELLO", "3"], ["HELLO"], ["PING"], ["GET", "nope"],
        ["HELLO", "2"], ["HELLO"], ["GET", "nope"],
    ])


def test_auth(d):
    d.check_all([["AUTH", "x"], ["AUTH", "default", "x"], ["AUTH", "default", ""],
                 ["AUTH", "bob", "x"], ["AUTH", "a", "b", "c"], ["AUTH", "Default", "x"]])


def test_select_and_isolation(d):
    d.check_all([
        ["SELECT", "16"], ["SELECT", "-1"], ["SELECT", "x"], ["SELECT", "1.5"],
        ["SELECT", "01"], ["SELECT", "9999999999999999999999"],
        ["SET", "k", "in-db0"], ["SELECT", "1"], ["GET", "k"], ["DBSIZE"],
        ["SET", "k", "in-db1"], ["SELECT", "15"], ["EXISTS", "k"], ["SELECT", "0"],
        ["GET", "k"], ["SELECT", "1"], ["GET", "k"], ["SELECT", "0"],
    ])


def test_client_name_and_errors(d):
    d.check_all([
        ["CLIENT", "GETNAME"], ["CLIENT", "SETNAME", "a b"], ["CLIENT", "SETNAME", "a\nb"],
        ["CLIENT", "SETNAME", "caf\xe9"], ["CLIENT", "SETNAME", "worker-1"],
        ["CLIENT", "GETNAME"], ["CLIENT", "SETNAME", ""], ["CLIENT", "GETNAME"],
        ["CLIENT", "LIST", "TYPE", "foo"], ["CLIENT", "LIST", "TYPE", "pubsub"],
        ["CLIENT", "LIST", "TYPE", "master"], ["CLIENT", "LIST", "TYPE", "replica"],
        ["CLIENT", "LIST", "TYPE", "slave"], ["CLIENT", "LIST", "ID", "x"],
        ["CLIENT", "LIST", "ID", "1", "x"], ["CLIENT", "LIST", "ID"],
        ["CLIENT", "LIST", "ID", "999999"], ["CLIENT", "LIST", "ID", "0"],
        ["CLIENT", "LIST", "foo"], ["CLIENT", "LIST", "TYPE", "normal", "ID", "1"],
        ["CLIENT", "NO-EVICT", "on"], ["CLIENT", "NO-EVICT", "OFF"],
        ["CLIENT", "NO-EVICT", "x"],
    ])


def test_client_kill_and_unblock_errors(d):
    d.check_all([
        ["CLIENT", "KILL", "1.2.3.4:5"], ["CLIENT", "KILL", "id"],
        ["CLIENT", "KILL", "ID", "999999"], ["CLIENT", "KILL", "ID", "x"],
        ["CLIENT", "KILL", "ID", "0"], ["CLIENT", "KILL", "ID", "-3"],
        ["CLIENT", "KILL", "ADDR", "1.2.3.4:5"], ["CLIENT", "KILL", "LADDR", "1.2.3.4:5"],
        ["CLIENT", "KILL", "SKIPME", "yes"], ["CLIENT", "KILL", "SKIPME", "foo"],
        ["CLIENT", "KILL", "foo", "bar"], ["CLIENT", "KILL", "TYPE", "foo"],
        ["CLIENT", "KILL", "TYPE", "master", "SKIPME", "no"],
        ["CLIENT", "KILL", "USER", "bob"],
        ["CLIENT", "KILL", "USER", "default", "SKIPME", "yes", "ID", "999999"],
        ["CLIENT", "KILL", "ID", "1", "ADDR"],
        ["CLIENT", "UNBLOCK", "999999"], ["CLIENT", "UNBLOCK", "x"],
        ["CLIENT", "UNBLOCK", "999999", "TIMEOUT"], ["CLIENT", "UNBLOCK", "999999", "error"],
        ["CLIENT", "UNBLOCK", "999999", "foo"], ["CLIENT", "UNBLOCK", "1.5"],
        # too many arguments: refused before the id is read
        ["CLIENT", "UNBLOCK", "999999", "TIMEOUT", "x"], ["client", "unblock", "x", "TIMEOUT", "x"],
    ])


def test_quit_and_reset(differ):
    differ.check_all([["RESET"], ["CLIENT", "SETNAME", "x"], ["SELECT", "3"], ["MULTI"],
                      ["RESET"], ["CLIENT", "GETNAME"], ["SET", "k", "1"], ["SELECT", "0"],
                      ["EXISTS", "k"]])
    assert differ.check("QUIT") == b"+OK\r\n"
    assert differ.ours.read_until_closed() == differ.theirs.read_until_closed() == b""


# =====================================================================================
# Keyspace
# =====================================================================================
def test_del_unlink_exists_type_dbsize(d, with_stream):
    d.check_all([
        ["SET", "a", "1"], ["SET", "b", "hello"], ["DBSIZE"],
        ["EXISTS", "a", "b", "c", "a"], ["EXISTS", "s"], ["EXISTS", "nope"],
        ["TYPE", "a"], ["TYPE", "s"], ["TYPE", "nope"],
        ["DEL", "a", "c", "a"], ["DEL", "a"], ["UNLINK", "b", "s", "zz"], ["DBSIZE"],
        ["TYPE", "s"], ["DEL", "nope"],
    ])


def test_keys_patterns(d):
    names = ["hello", "hallo", "hxllo", "heeeello", "hllo", "h[llo", "h*llo", "h\\llo",
             "a", "ab", "abc", "b", "x-y", "]", "^", "-", "A", "Hello"]
    for name in names:
        d.check("SET", name, "1")
    patterns = ["*", "h?llo", "h*llo", "h[ae]llo", "h[^e]llo", "h[a-b]llo", "h[b-a]llo",
                "h\\[llo", "h\\*llo", "h\\\\llo", "h[\\[]llo", "[", "[a", "a[", "ab[",
                "h[", "*[", "[]]", "[^]", "[a-]", "[a-]*", "\\", "a\\", "*\\", "***",
                "?", "??", "[]", "[^a]", "[-]", "[a-c]*", "[A-Z]*", "[!a]*", "*o", "*l*o",
                "h*", "nomatch", "", "[x-]y", "x[-]y", "h[^", "[\\]"]
    for pattern in patterns:
        check_unordered(d, "KEYS", pattern)


def test_scan_single_call_and_filters(d, with_stream):
    for key in ["k1", "k2", "other", "k3"]:
        d.check("SET", key, "v")
    check_unordered(d, "SCAN", "0")
    check_unordered(d, "SCAN", "0", "MATCH", "k*")
    check_unordered(d, "SCAN", "0", "MATCH", "*")
    check_unordered(d, "SCAN", "0", "TYPE", "string")
    check_unordered(d, "SCAN", "0", "TYPE", "STREAM")
    check_unordered(d, "SCAN", "0", "TYPE", "hash")
    check_unordered(d, "SCAN", "0", "MATCH", "k*", "COUNT", "100", "TYPE", "string")
    check_unordered(d, "SCAN", "0", "COUNT", "10", "COUNT", "20", "MATCH", "x*", "MATCH", "o*")
    check_unordered(d, "SCAN", "", "COUNT", "9223372036854775807")
    check_unordered(d, "SCAN", "+0")
    d.check_all([
        ["SCAN", "x"], ["SCAN", " 0"], ["SCAN", "0 "], ["SCAN", "5abc"], ["SCAN", "+"],
        ["SCAN", "-"], ["SCAN", "18446744073709551616"], ["SCAN", "0", "COUNT", "0"],
        ["SCAN", "0", "COUNT", "-1"], ["SCAN", "0", "COUNT", "x"],
        ["SCAN", "0", "COUNT", "9223372036854775808"], ["SCAN", "0", "MATCH"],
        ["SCAN", "0", "foo", "bar"], ["SCAN", "0", "TYPE"],
    ])


def test_scan_empty_database(d):
    d.check_all([["SCAN", "0"], ["SCAN", "0", "MATCH", "*", "COUNT", "5"]])


def test_rename(d, with_stream):
    d.check_all([
        ["SET", "a", "1"], ["PEXPIREAT", "a", "4000000000000"],
        ["RENAME", "a", "b"], ["EXISTS", "a"], ["GET", "b"], ["PEXPIRETIME", "b"],
        ["RENAME", "nope", "b"], ["RENAME", "nope", "nope"], ["RENAME", "b", "b"],
        ["RENAMENX", "b", "s"], ["RENAMENX", "b", "c"], ["RENAMENX", "nope", "c"],
        ["RENAMENX", "c", "c"], ["SET", "x", "old"], ["RENAME", "c", "x"], ["GET", "x"],
        ["PEXPIRETIME", "x"], ["RENAME", "s", "s2"], ["TYPE", "s2"], ["GET", "s2"],
    ])


def test_expire_family(d):
    d.check_all([
        ["SET", "a", "1"],
        ["EXPIRE", "a", "x", "foo"], ["EXPIRE", "nope", "x"], ["EXPIRE", "nope", "10", "foo"],
        ["EXPIRE", "a", "10", "gt", "lt", "foo"], ["EXPIRE", "a", "1.5"],
        ["EXPIRE", "a", "50", "nx", "xx"], ["EXPIRE", "a", "50", "gt", "lt"],
        ["EXPIRE", "a", "50", "nx", "gt"], ["EXPIRE", "a", "50", "xx", "lt"],
        ["EXPIRE", "a", "50", "NX", "NX"], ["PERSIST", "a"],
        ["EXPIRE", "nope", "10"],
        ["EXPIRE", "a", "100", "xx"], ["EXPIRE", "a", "100", "gt"],
        ["EXPIRE", "a", "100", "lt"], ["TTL", "a"], ["EXPIRE", "a", "100", "nx"],
        ["EXPIRE", "a", "100", "xx"], ["EXPIRE", "a", "50", "gt"],
        ["EXPIRE", "a", "200", "gt"], ["EXPIRE", "a", "300", "lt"],
        ["EXPIRE", "a", "50", "lt"], ["TTL", "a"],
        ["EXPIRE", "a", "9223372036854775807"], ["EXPIRE", "a", "9223372036854775"],
        ["EXPIRE", "a", "-9223372036854775808"], ["EXPIRE", "a", "-9223372036854776"],
        ["PEXPIRE", "a", "9223372036854775807"],
        ["EXPIREAT", "a", "9223372036854775807"], ["EXPIREAT", "a", "9223372036854775"],
        ["PEXPIREAT", "a", "9223372036854775807"], ["PEXPIRETIME", "a"],
        ["EXPIRE", "a", "9223372036854"], ["TTL", "a"],
        ["EXPIREAT", "a", "4000000000"], ["EXPIRETIME", "a"], ["PEXPIRETIME", "a"],
        ["PEXPIREAT", "a", "4000000000123"], ["PEXPIRETIME", "a"], ["EXPIRETIME", "a"],
        ["PERSIST", "a"], ["PERSIST", "a"], ["PERSIST", "nope"], ["TTL", "a"], ["PTTL", "a"],
        ["EXPIRETIME", "a"], ["PEXPIRETIME", "a"], ["TTL", "nope"], ["PTTL", "nope"],
        ["EXPIRETIME", "nope"], ["PEXPIRETIME", "nope"],
        # deadlines in the past delete the key
        ["EXPIRE", "a", "0"], ["EXISTS", "a"], ["SET", "b", "1"], ["PEXPIRE", "b", "-5"],
        ["EXISTS", "b"], ["SET", "c", "1"], ["EXPIREAT", "c", "1"], ["GET", "c"],
        ["SET", "e", "1"], ["PEXPIREAT", "e", "1", "GT"], ["EXISTS", "e"],
        ["PEXPIREAT", "e", "1", "LT"], ["EXISTS", "e"], ["DBSIZE"],
    ])


def test_expire_on_stream(d, with_stream):
    d.check_all([["EXPIRE", "s", "100"], ["TTL", "s"], ["PERSIST", "s"], ["TTL", "s"],
                 ["PEXPIRE", "s", "0"], ["TYPE", "s"], ["XLEN", "s"]])


def test_object(d, with_stream):
    d.check_all([
        ["SET", "i", "123"], ["SET", "e", "hello"], ["SET", "r", "a" * 54],
        ["SET", "n", "12345678901234567890"], ["SET", "m", "-9223372036854775808"],
        ["SET", "big", "10000"], ["SET", "z", "0123"], ["SET", "b44", "b" * 44],
        ["SET", "b45", "b" * 45], ["SET", "neg", "-1"], ["SET", "sp", " 1"],
        ["SET", "nine", "9999"],
        *[["OBJECT", "ENCODING", k] for k in
          ["i", "e", "r", "n", "m", "big", "z", "b44", "b45", "neg", "sp", "s", "nope"]],
        *[["OBJECT", "REFCOUNT", k] for k in
          ["i", "e", "big", "nine", "neg", "s", "nope"]],
        ["OBJECT", "IDLETIME", "nope"], ["OBJECT", "FREQ", "nope"], ["OBJECT", "FREQ", "e"],
        ["OBJECT", "foo"], ["OBJECT", "HELP"], ["object", "help"],
        ["INCR", "e2"], ["OBJECT", "ENCODING", "e2"], ["OBJECT", "REFCOUNT", "e2"],
    ])


def test_object_idletime_fresh(differ):
    differ.check_all([["SET", "k", "v"], ["OBJECT", "IDLETIME", "k"]])


def test_memory_usage_strings(d):
    d.check_all([
        ["SET", "i", "123"], ["SET", "e", "hello"], ["SET", "r", "a" * 54],
        ["SET", "k" * 40, "v" * 40], ["SET", "mid", "x" * 200], ["SET", "big", "y" * 5000],
        ["SET", "n", "-9223372036854775808"],
        *[["MEMORY", "USAGE", k] for k in ["i", "e", "r", "k" * 40, "mid", "big", "n", "nope"]],
        ["MEMORY", "USAGE", "e", "SAMPLES", "5"], ["MEMORY", "USAGE", "e", "samples", "0"],
        ["MEMORY", "USAGE", "e", "SAMPLES", "x"], ["MEMORY", "USAGE", "e", "SAMPLES", "-1"],
        ["MEMORY", "USAGE", "e", "foo"], ["MEMORY", "USAGE", "e", "SAMPLES"],
        ["MEMORY", "USAGE", "nope", "SAMPLES", "x"],
    ])


# =====================================================================================
# Strings
# =====================================================================================
def test_get_set(d, with_stream):
    d.check_all([
        ["GET", "nope"], ["SET", "k", "v"], ["GET", "k"], ["SET", "k", "v2", "nx"],
        ["SET", "k", "v2", "xx"], ["GET", "k"], ["SET", "k", "v3", "get"],
        ["SET", "new", "v", "get"], ["SET", "k", "v4", "nx", "get"],
        ["SET", "k", "v4", "xx", "get"], ["SET", "absent", "v", "xx", "get"],
        ["SET", "absent", "v", "xx"], ["EXISTS", "absent"],
        ["SET", "k", "v", "ex", "10"], ["TTL", "k"], ["SET", "k", "v", "keepttl"], ["TTL", "k"],
        ["SET", "k", "v"], ["TTL", "k"], ["SET", "k", "v", "px", "100000"], ["TTL", "k"],
        ["SET", "k", "v", "exat", "4000000000"], ["EXPIRETIME", "k"],
        ["SET", "k", "v", "pxat", "4000000000123"], ["PEXPIRETIME", "k"],
        ["SET", "k", "v", "ex", "10", "keepttl"], ["SET", "k", "v", "keepttl", "ex", "10"],
        ["SET", "k", "v", "ex", "10", "px", "100"], ["SET", "k", "v", "exat", "10", "pxat", "1"],
        ["SET", "k", "v", "ex", "0"], ["SET", "k", "v", "ex", "-1"], ["SET", "k", "v", "px", "0"],
        ["SET", "k", "v", "ex", "x"], ["SET", "k", "v", "exat", "0"], ["SET", "k", "v", "pxat", "0"],
        ["SET", "k", "v", "px", "9223372036854775807"],
        ["SET", "k", "v", "ex", "9223372036854775"], ["SET", "k", "v", "ex", "9223372036854774"],
        ["SET", "k", "v", "exat", "9223372036854774"], ["PEXPIRETIME", "k"],
        ["SET", "k", "v", "pxat", "9223372036854775807"], ["PEXPIRETIME", "k"],
        ["SET", "k", "v", "nx", "xx"], ["SET", "k", "v", "xx", "nx"], ["SET", "k", "v", "foo"],
        ["SET", "k", "v", "ex"], ["SET", "k", "v", "ex", "10", "ex", "20"], ["TTL", "k"],
        ["SET", "k", "v", "NX", "NX"], ["SET", "k", "w", "GET", "GET"],
        ["SET", "k", "v", "exat", "1"], ["EXISTS", "k"],
        ["SET", "k", "v", "get", "ex", "x"],
        # strings against a stream
        ["GET", "s"], ["SET", "s", "x", "get"], ["SET", "s", "x", "nx"], ["TYPE", "s"],
        ["SET", "s", "x"], ["TYPE", "s"], ["GET", "s"],
    ])


def test_mget_incr(d, with_stream):
    d.check_all([
        ["SET", "a", "1"], ["MGET", "a", "nope", "s", "a"], ["INCR", "a"], ["INCR", "nope"],
        ["DECR", "nope"], ["INCRBY", "a", "10"], ["DECRBY", "a", "3"], ["INCRBY", "a", "x"],
        ["INCRBY", "a", "1.5"], ["INCR", "s"], ["SET", "t", "text"], ["INCR", "t"],
        ["SET", "f", "1.5"], ["INCR", "f"], ["SET", "sp", " 1"], ["INCR", "sp"],
        ["SET", "z", "01"], ["INCR", "z"], ["SET", "big", "9223372036854775807"],
        ["INCR", "big"], ["DECRBY", "big", "-1"], ["SET", "small", "-9223372036854775808"],
        ["DECR", "small"], ["INCRBY", "small", "-1"], ["DECRBY", "small", "-9223372036854775808"],
        ["DECRBY", "a", "-9223372036854775808"], ["INCRBY", "a", "9223372036854775808"],
        ["SET", "ttl", "5", "EX", "100"], ["INCR", "ttl"], ["TTL", "ttl"], ["GET", "ttl"],
    ])


# =====================================================================================
# Server
# =====================================================================================
def test_flush(d):
    d.check_all([
        ["SET", "a", "1"], ["SELECT", "1"], ["SET", "b", "1"], ["FLUSHDB", "x"],
        ["FLUSHDB", "async", "sync"], ["FLUSHDB", "ASYNC"], ["DBSIZE"], ["SELECT", "0"],
        ["DBSIZE"], ["FLUSHALL", "x"], ["FLUSHDB", "SYNC"], ["SET", "a", "1"],
        ["FLUSHALL", "sync"], ["DBSIZE"], ["FLUSHALL", "ASYNC"], ["FLUSHALL"], ["FLUSHDB"],
    ])


def test_time_shape(d):
    ours, theirs = parse(d.ours.call("TIME")), parse(d.theirs.call("TIME"))
    assert len(ours) == len(theirs) == 2
    assert all(x.isdigit() for x in ours)
    assert abs(int(ours[0]) - int(theirs[0])) <= 2


def test_config_get_set(d):
    d.check_all([
        ["CONFIG", "GET", "nope"], ["CONFIG", "GET", "stream-node-max-entries"],
        ["CONFIG", "GET", "STREAM-NODE-MAX-ENTRIES"], ["CONFIG", "GET", "hz"],
        ["CONFIG", "GET", "maxclients"], ["CONFIG", "GET", "timeout"],
        ["CONFIG", "GET", "databases"], ["CONFIG", "GET", "proto-max-bulk-len"],
        ["CONFIG", "GET", "client-query-buffer-limit"], ["CONFIG", "GET", "tcp-keepalive"],
        ["CONFIG", "GET", "loglevel"], ["CONFIG", "GET", "unixsocket"],
        ["CONFIG", "GET", "logfile"], ["CONFIG", "GET", "daemonize"],
        ["CONFIG", "GET", "hz", "HZ", "h?"],
        ["CONFIG", "GET", "stream-node-max-e*"], ["CONFIG", "GET", "proto-*"],
        ["CONFIG", "GET", "tcp-keepal[a-z]ve"], ["CONFIG", "GET", "TCP-KEEPAL[A-Z]VE"],
        ["CONFIG", "SET", "nope", "1"], ["CONFIG", "SET", "hz", "10", "nope", "1"],
        ["CONFIG", "SET", "hz", "x"], ["CONFIG", "SET", "HZ", "x"],
        ["CONFIG", "SET", "hz", "10", "hz", "11"], ["CONFIG", "SET", "hz", "10", "HZ", "11"],
        ["CONFIG", "SET", "hz", "5", "stream-node-max-entries", "x"], ["CONFIG", "GET", "hz"],
        ["CONFIG", "SET", "daemonize", "yes"], ["CONFIG", "SET", "DATABASES", "3"],
        ["CONFIG", "SET", "databases", "3", "nope", "1"],
        ["CONFIG", "SET", "maxclients", "0"], ["CONFIG", "SET", "maxclients", "4294967296"],
        # (loglevel's bad values: Redis 7.2+ adds "nothing" to the choices, see
        # tests/unit/test_config.py)
        ["CONFIG", "SET", "loglevel", "WARNING"],
        ["CONFIG", "GET", "loglevel"], ["CONFIG", "SET", "loglevel", "notice"],
        ["CONFIG", "SET", "protected-mode", "maybe"], ["CONFIG", "SET", "protected-mode", "1"],
        ["CONFIG", "SET", "protected-mode", "YES"], ["CONFIG", "GET", "protected-mode"],
        ["CONFIG", "SET", "timeout", "-1"], ["CONFIG", "SET", "timeout", "1k"],
        ["CONFIG", "SET", "timeout", "+5"], ["CONFIG", "SET", "timeout", " 5"],
        ["CONFIG", "SET", "timeout", "05"], ["CONFIG", "SET", "timeout", ""],
        ["CONFIG", "SET", "timeout", "2147483648"], ["CONFIG", "GET", "timeout"],
        ["CONFIG", "SET", "hz", "0"], ["CONFIG", "GET", "hz"], ["CONFIG", "SET", "hz", "600"],
        ["CONFIG", "GET", "hz"], ["CONFIG", "SET", "hz", "10"],
        ["CONFIG", "SET", "stream-node-max-entries", "-1"],
        ["CONFIG", "SET", "stream-node-max-entries", "1k"],
        ["CONFIG", "SET", "stream-node-max-entries", "9223372036854775808"],
    ])


@pytest.mark.parametrize("value", [
    "1k", "1kb", "1K", "1KB", "1m", "1mb", "1g", "1gb", "5mB", "1b", "05", "", "kb", "0",
    "1x", "-1", "+5", " 5", "1.5k", "5t", "99999999999999999999", "9223372036854775808",
    "9223372036854775807",
])
def test_config_memory_units(differ, value):
    differ.check("CONFIG", "SET", "stream-node-max-bytes", value)
    differ.check("CONFIG", "GET", "stream-node-max-bytes")
    differ.check("CONFIG", "SET", "proto-max-bulk-len", value)
    differ.check("CONFIG", "GET", "proto-max-bulk-len")
    differ.check("CONFIG", "SET", "proto-max-bulk-len", "512mb")


def test_config_set_is_atomic(differ):
    differ.check_all([
        ["CONFIG", "SET", "hz", "20", "timeout", "x"], ["CONFIG", "GET", "hz"],
        ["CONFIG", "SET", "hz", "20", "timeout", "7"], ["CONFIG", "GET", "hz"],
        ["CONFIG", "GET", "timeout"], ["CONFIG", "SET", "hz", "10", "timeout", "0"],
    ])


def test_config_misc(d):
    d.check_all([["CONFIG", "REWRITE"], ["CONFIG", "RESETSTAT"], ["CONFIG", "HELP"],
                 ["config", "help"]])


def test_command_info(d):
    names = [
        "get", "set", "mget", "incr", "decr", "incrby", "decrby", "del", "unlink", "exists",
        "type", "keys", "scan", "rename", "renamenx", "expire", "pexpire", "expireat",
        "pexpireat", "ttl", "pttl", "expiretime", "pexpiretime", "persist", "dbsize",
        "flushdb", "flushall", "time", "info", "ping", "echo", "hello", "auth", "select",
        "quit", "reset", "debug", "shutdown", "client|list", "client|id", "client|kill",
        "client|unblock", "client|setname", "client|getname", "client|info",
        "client|no-evict", "client|help", "config|get", "config|set", "config|resetstat",
        "config|rewrite", "config|help", "command|info", "command|docs", "command|count",
        "command|list", "command|getkeys", "command|getkeysandflags", "command|help",
        "object|encoding", "object|refcount", "object|idletime", "object|freq",
        "object|help", "memory|usage", "memory|help", "xadd", "xlen", "xrange", "xread",
    ]
    for name in names:
        d.check("COMMAND", "INFO", name)
    d.check_all([["COMMAND", "INFO", "nope"], ["COMMAND", "INFO", "GET", "nope", "Set"],
                 ["COMMAND", "INFO", "client|nope"], ["COMMAND", "INFO", "get|x"]])


def test_command_docs(d):
    # Commands whose docs have no argument list: the whole reply is comparable.
    for name in ["dbsize", "time", "quit", "reset", "client|id", "client|getname",
                 "client|info", "client|help", "command|count", "command|help",
                 "command|getkeys", "command|getkeysandflags", "config|resetstat",
                 "config|rewrite", "config|help", "object|help", "memory|help"]:
        d.check("COMMAND", "DOCS", name)
    d.check_all([["COMMAND", "DOCS", "nope"], ["COMMAND", "DOCS", "nope", "client|nope"],
                 ["COMMAND", "DOCS", "DBSIZE", "nope", "time"]])


def test_command_getkeys_and_list(d):
    d.check_all([
        ["COMMAND", "GETKEYS", "get", "a"], ["COMMAND", "GETKEYS", "nope", "a"],
        ["COMMAND", "GETKEYS", "set", "a", "b"], ["COMMAND", "GETKEYS", "echo", "a"],
        ["COMMAND", "GETKEYS", "get", "a", "b"], ["COMMAND", "GETKEYS", "rename", "a", "b"],
        ["COMMAND", "GETKEYS", "del", "a", "b", "c"], ["COMMAND", "GETKEYS", "client", "list"],
        ["COMMAND", "GETKEYS", "client", "foo"], ["COMMAND", "GETKEYS", "object", "encoding", "k"],
        ["COMMAND", "GETKEYS", "memory", "usage", "k", "samples", "5"],
        ["COMMAND", "GETKEYS", "xread", "count", "1", "streams", "a", "b", "0", "0"],
        ["COMMAND", "GETKEYS", "xread", "streams", "a", "b", "0", "0"],
        ["COMMAND", "GETKEYS", "xadd", "s", "*", "f", "v"], ["COMMAND", "GETKEYS", "GET", "a"],
        ["COMMAND", "GETKEYSANDFLAGS", "rename", "a", "b"],
        ["COMMAND", "GETKEYSANDFLAGS", "set", "a", "b"],
        ["COMMAND", "GETKEYSANDFLAGS", "del", "a", "b"],
        ["COMMAND", "GETKEYSANDFLAGS", "echo", "a"],
        ["COMMAND", "LIST", "FILTERBY", "foo", "bar"], ["COMMAND", "LIST", "FILTERBY", "PATTERN"],
        ["COMMAND", "LIST", "FILTERBY", "MODULE", "foo"], ["COMMAND", "LIST", "foo"],
        ["COMMAND", "LIST", "FILTERBY", "PATTERN", "nomatch*"],
        ["COMMAND", "HELP"],
    ])
    check_unordered(d, "COMMAND", "LIST", "FILTERBY", "PATTERN", "CLIENT|[gs]etname")
    check_unordered(d, "COMMAND", "LIST", "FILTERBY", "PATTERN", "[ep]*expire*")  # not 7.4's HEXPIRE family
    check_unordered(d, "COMMAND", "LIST", "FILTERBY", "PATTERN", "config*")
    # Tidelog has fewer commands: what it lists must be a subset of Redis's list.
    ours = parse(d.ours.call("COMMAND", "LIST", "FILTERBY", "ACLCAT", "keyspace"))
    theirs = parse(d.theirs.call("COMMAND", "LIST", "FILTERBY", "ACLCAT", "keyspace"))
    assert b"del" in ours and set(ours) <= set(theirs), set(ours) - set(theirs)


def test_info_selection(differ):
    def headers(reply: bytes) -> list[bytes]:
        return [line for line in parse(reply).split(b"\r\n") if line.startswith(b"#")]

    for sections in [[], ["default"], ["all"], ["everything"], ["server", "clients"],
                     ["CLIENTS", "server"], ["keyspace"], ["commandstats"], ["cpu"],
                     ["default", "commandstats"], ["nope"], ["server", "nope"]]:
        ours = differ.ours.call("INFO", *sections)
        theirs = differ.theirs.call("INFO", *sections)
        assert headers(ours) == headers(theirs), sections
    differ.check("INFO", "nope")
    differ.resp3()
    differ.check("INFO", "nope")


def test_info_keyspace(d):
    d.check_all([["INFO", "keyspace"], ["SET", "a", "1"], ["SET", "b", "2"],
                 ["SELECT", "3"], ["SET", "c", "3"], ["SELECT", "0"], ["INFO", "keyspace"]])


def test_debug(d):
    d.check_all([
        ["DEBUG", "foo"], ["DEBUG", "OBJECT", "nope"], ["DEBUG", "SLEEP", "0"],
        ["DEBUG", "SLEEP", "x"], ["DEBUG", "SLEEP", "0.01"], ["DEBUG", "SET-ACTIVE-EXPIRE", "0"],
        ["DEBUG", "SET-ACTIVE-EXPIRE", "1"], ["DEBUG", "SET-ACTIVE-EXPIRE", "x"],
        ["DEBUG", "SET-ACTIVE-EXPIRE", "1"], ["DEBUG", "CHANGE-REPL-ID"],
        ["DEBUG", "CHANGE-REPL-ID", "x"],
    ])


def test_debug_object_strings(differ):
    differ.normalise(rb"Value at:0x[0-9a-f]+ ", b"Value at:ADDR ")
    differ.normalise(rb" lru:\d+ lru_seconds_idle:\d+", b" lru:N lru_seconds_idle:N")
    differ.check_all([
        ["SET", "i", "123"], ["SET", "e", "hello"], ["SET", "n", "70000"], ["SET", "m", "-200"],
        ["DEBUG", "OBJECT", "i"], ["DEBUG", "OBJECT", "e"], ["DEBUG", "OBJECT", "n"],
        ["DEBUG", "OBJECT", "m"],
    ])


def test_shutdown_errors(d):
    d.check_all([["SHUTDOWN", "ABORT"], ["SHUTDOWN", "foo"], ["SHUTDOWN", "NOSAVE", "SAVE"],
                 ["SHUTDOWN", "ABORT", "NOSAVE"], ["SHUTDOWN", "abort", "now"]])


# =====================================================================================
# Transactions around the generic commands
# =====================================================================================
def test_multi_exec_with_generic_commands(d):
    d.check_all([
        ["SET", "k", "1"], ["WATCH", "k"], ["EXPIRE", "k", "100"], ["MULTI"], ["GET", "k"],
        ["EXEC"],
        ["WATCH", "k"], ["PERSIST", "k"], ["MULTI"], ["GET", "k"], ["EXEC"],
        ["WATCH", "k"], ["PERSIST", "k"], ["MULTI"], ["GET", "k"], ["EXEC"],
        ["WATCH", "k"], ["RENAME", "k", "k2"], ["MULTI"], ["GET", "k2"], ["EXEC"],
        ["WATCH", "k2"], ["FLUSHDB"], ["MULTI"], ["PING"], ["EXEC"],
        ["MULTI"], ["SET", "a"], ["SET", "a", "1"], ["EXEC"], ["EXISTS", "a"],
        ["MULTI"], ["SHUTDOWN"], ["EXEC"],
        ["MULTI"], ["SET", "x", "1"], ["INCR", "x"], ["EXPIRE", "x", "100"], ["TTL", "x"],
        ["SET", "x", "2", "GET"], ["OBJECT", "ENCODING", "x"], ["EXEC"],
        ["MULTI"], ["SELECT", "1"], ["SET", "y", "1"], ["EXEC"], ["DBSIZE"], ["SELECT", "0"],
        ["DBSIZE"],
    ])


def _info_stats(client, section: str) -> dict[str, dict[str, str]]:
    """INFO commandstats/errorstats as {name: {field: value}}, usec left out."""
    raw = client.call("INFO", section)
    text = raw.split(b"\r\n", 1)[1].decode()
    out = {}
    for line in text.split("\r\n"):
        if ":" not in line:
            continue
        name, _, fields = line.partition(":")
        values = dict(f.split("=", 1) for f in fields.split(","))
        for timed in ("usec", "usec_per_call"):
            values.pop(timed, None)
        out[name] = values
    return out


def test_commandstats_and_errorstats(differ):
    """Calls, rejected and failed calls per command, and errors by code, as
    redis-server counts them (the times themselves differ, so not compared;
    usec_per_call is checked to be usec / calls)."""
    d = differ
    d.check("CONFIG", "RESETSTAT")
    d.check_all([
        ["SET", "k", "v"], ["GET", "k"], ["GET"], ["SET", "k", "v", "XX", "NX"], ["INCR", "k"],
        ["NOSUCH", "x"], ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"],
        ["XADD", "k", "1-1", "f", "v"], ["XADD", "s", "1-1", "f", "v"], ["XLEN", "s"],
        ["MULTI"], ["MULTI"], ["EXEC"], ["HSET", "h", "f", "v"], ["HGET", "k", "f"],
        ["XGROUP", "CREATE", "s", "g", "$"], ["XGROUP", "CREATE", "s", "g", "$"],
    ])
    for section in ("commandstats", "errorstats"):
        assert _info_stats(d.ours, section) == _info_stats(d.theirs, section), section
    raw = d.ours.call("INFO", "commandstats").decode()
    for line in raw.split("\r\n")[1:]:
        if line.startswith("cmdstat_"):
            fields = dict(f.split("=", 1) for f in line.split(":", 1)[1].split(","))
            calls, usec = int(fields["calls"]), int(fields["usec"])
            assert fields["usec_per_call"] == f"{usec / calls if calls else 0:.2f}", line

