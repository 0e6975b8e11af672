"""Differential tests of argument reading: missing, extra, repeated and
conflicting options of the generic commands, each compared byte for byte
with redis-server 7.0.15 (which error wins when several apply, too).

Every case starts from empty servers holding one string ``k``.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.differential

CASES = [
    ["SET", "k", "v"], ["SET", "k", "v", "NX"], ["SET", "k", "v", "XX", "GET"],
    ["SET", "k", "v", "EX"], ["SET", "k", "v", "EX", "x"], ["SET", "k", "v", "EX", "x", "FOO"],
    ["SET", "k", "v", "EX", "10", "PX", "5"], ["SET", "k", "v", "KEEPTTL", "EX", "1"],
    ["SET", "k", "v", "NX", "XX"], ["SET", "k", "v", "EX", "0"], ["SET", "k", "v", "PX", "-1"],
    ["SET", "k", "v", "GET", "GET"], ["SET", "k", "v", "NX", "NX"],
    ["SET", "k", "v", "EXAT", "9999999999999999"],
    ["SET", "k", "v", "PXAT", "abc", "NX", "XX"], ["SET", "k", "v", "FOO"], ["SET", "k", "v", "KEEPTTL"],
    ["EXPIRE", "k", "100", "NX", "XX"], ["EXPIRE", "k", "x", "FOO"], ["EXPIRE", "k", "x", "NX"],
    ["EXPIRE", "k", "100", "GT", "LT"], ["EXPIRE", "k", "100", "XX", "GT"], ["PEXPIRE", "k", "100", "nx"],
    ["EXPIRE", "k", "100", "nx"], ["TTL", "k"], ["EXPIREAT", "k", "99999999999", "gt", "foo"],
    ["SCAN", "0", "COUNT"], ["SCAN", "0", "COUNT", "0"], ["SCAN", "0", "COUNT", "x"], ["SCAN", "x"],
    ["SCAN", "0", "MATCH", "zz*", "COUNT", "5", "TYPE", "string"], ["SCAN", "0", "FOO", "bar"],
    ["MGET", "k", "nokey"], ["DEL", "nokey", "nokey2"], ["EXISTS", "k", "k", "x"],
    ["AUTH", "a", "b", "c"], ["AUTH", "a"], ["AUTH", "nouser", "b"], ["AUTH", "default", "x"],
    ["HELLO", "2", "AUTH"], ["HELLO", "2", "AUTH", "a"], ["HELLO", "2", "SETNAME"], ["HELLO", "x"],
    ["HELLO", "4"], ["HELLO", "2", "FOO"],
    ["CLIENT", "LIST", "TYPE", "normal", "x"], ["CLIENT", "LIST", "ID"], ["CLIENT", "LIST", "TYPE"],
    ["CLIENT", "LIST", "TYPE", "foo"], ["CLIENT", "LIST", "ID", "x"], ["CLIENT", "LIST", "ID", "0"],
    ["CLIENT", "LIST", "ID", "999999", "x"], ["CLIENT", "LIST", "FOO"],
    ["CLIENT", "LIST", "ID", "999999", "888888"],
    ["CLIENT", "KILL", "ID"], ["CLIENT", "KILL", "ID", "1", "SKIPME"],
    ["CLIENT", "KILL", "ID", "x", "SKIPME"],
    ["CLIENT", "KILL", "ID", "0"], ["CLIENT", "KILL", "ID", "99999", "SKIPME", "maybe"],
    ["CLIENT", "KILL", "TYPE", "foo", "ID", "1"], ["CLIENT", "KILL", "FOO", "bar"],
    ["CLIENT", "KILL", "USER", "nobody"], ["CLIENT", "KILL", "ADDR", "1.2.3.4:5", "LADDR", "1.2.3.4:6"],
    ["CLIENT", "KILL", "1.2.3.4:5"],
    ["CLIENT", "UNBLOCK", "1", "TIMEOUT", "x"], ["CLIENT", "UNBLOCK", "abc", "TIMEOUT", "x"],
    ["client", "unblock", "1", "TIMEOUT", "x"],
    ["CLIENT", "UNBLOCK", "1", "FOO"], ["CLIENT", "UNBLOCK", "x"], ["CLIENT", "UNBLOCK", "99999", "error"],
    ["CLIENT", "UNBLOCK", "99999"],
    ["COMMAND", "FOO"], ["COMMAND", "FOO", "bar"], ["COMMAND", "LIST", "FILTERBY"],
    ["COMMAND", "LIST", "FILTERBY", "PATTERN"], ["COMMAND", "LIST", "FILTERBY", "PATTERN", "x", "y"],
    ["COMMAND", "LIST", "FOO", "PATTERN", "x"], ["COMMAND", "LIST", "FILTERBY", "FOO", "x"],
    ["COMMAND", "LIST", "FILTERBY", "PATTERN", "nomatch*"], ["COMMAND", "LIST", "FILTERBY", "MODULE", "x"],
    ["COMMAND", "INFO", "get", "nosuch"], ["COMMAND", "DOCS", "nosuch"],
    ["COMMAND", "GETKEYS", "GET", "k"], ["COMMAND", "GETKEYS", "nosuch", "k"],
    ["COMMAND", "GETKEYSANDFLAGS", "SET", "k", "v", "GET"], ["COMMAND", "GETKEYSANDFLAGS", "SET", "k", "v"],
    ["CONFIG", "SET", "a"], ["CONFIG", "SET", "hz", "10", "timeout"], ["CONFIG", "SET", "hz", "x"],
    ["CONFIG", "SET", "nosuch", "1", "hz"], ["CONFIG", "GET", "hz", "nosuch"],
    ["MEMORY", "USAGE", "k", "SAMPLES"], ["MEMORY", "USAGE", "k", "SAMPLES", "x"],
    ["MEMORY", "USAGE", "k", "SAMPLES", "-1"], ["MEMORY", "USAGE", "k", "FOO"],
    ["MEMORY", "USAGE", "k", "SAMPLES", "0", "SAMPLES", "5"],
    ["MEMORY", "USAGE", "nokey", "SAMPLES", "5", "x"],
    ["FLUSHALL", "x"], ["FLUSHDB", "sync", "x"], ["FLUSHDB", "async"], ["FLUSHALL", "SYNC"],
    ["SHUTDOWN", "FOO"], ["SHUTDOWN", "ABORT"], ["SHUTDOWN", "NOSAVE", "SAVE"], ["SHUTDOWN", "ABORT", "NOW"],
    ["BGSAVE", "x"], ["BGSAVE", "SCHEDULE", "x"],
    ["DEBUG", "RELOAD", "FOO"],
    ["WATCH", "a", "b"], ["UNWATCH"],
    ["PING", "a", "b"], ["PING", "a"], ["PING"],
]


@pytest.mark.parametrize("argv", CASES, ids=[" ".join(c)[:60] for c in CASES])
def test_arguments(differ, argv):
    differ.check("SET", "k", "v")
    differ.check(*argv)
