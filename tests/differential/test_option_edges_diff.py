"""The options of the commands whose option loops read through the argument
cursor, at their edges, compared byte for byte with redis-server 7.0.15:
an option as the last argument without its value, a bad number, a repeated
or unknown option, options in odd orders.  (FAILOVER's edges are in
test_failover_diff.py; HSETEX, ARGREP and HOTKEYS, newer than 7.0, in their
own unit and integration tests.)"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.differential

LCS = [
    ["LCS", "a", "b", "MINMATCHLEN"], ["LCS", "a", "b", "MINMATCHLEN", "x"],
    ["LCS", "a", "b", "MINMATCHLEN", "-3"], ["LCS", "a", "b", "IDX", "MINMATCHLEN", "2"],
    ["LCS", "a", "b", "IDX", "MINMATCHLEN", "2", "WITHMATCHLEN"], ["LCS", "a", "b", "LEN", "IDX"],
    ["LCS", "a", "b", "idx", "withmatchlen"], ["LCS", "a", "b", "NOPE"], ["LCS", "a", "b", "LEN"],
    ["LCS", "a", "b", "MINMATCHLEN", "1", "MINMATCHLEN", "3", "IDX"],
]

RESTORE_SORT_COPY = [
    ["RESTORE", "r", "0", "x", "IDLETIME"], ["RESTORE", "r", "0", "x", "FREQ"],
    ["RESTORE", "r", "0", "x", "IDLETIME", "-1"], ["RESTORE", "r", "0", "x", "FREQ", "256"],
    ["RESTORE", "r", "0", "x", "IDLETIME", "1", "FREQ", "1"], ["RESTORE", "r", "0", "x", "FREQ", "x"],
    ["RESTORE", "r", "0", "x", "NOPE"], ["RESTORE", "l", "0", "x", "ABSTTL"],
    ["SORT", "l", "LIMIT", "0"], ["SORT", "l", "LIMIT", "x", "1"], ["SORT", "l", "LIMIT", "0", "1"],
    ["SORT", "l", "LIMIT", "1", "-1", "DESC"], ["SORT", "l", "BY"], ["SORT", "l", "GET"],
    ["SORT", "l", "STORE"], ["SORT", "l", "GET", "#", "GET", "nosort"], ["SORT", "l", "BY", "nosort"],
    ["SORT", "l", "ALPHA", "ASC", "DESC"], ["SORT", "l", "NOPE"], ["SORT_RO", "l", "STORE", "d"],
    ["SORT", "l", "STORE", "d"], ["LRANGE", "d", "0", "-1"],
    ["COPY", "l", "c", "DB"], ["COPY", "l", "c", "DB", "x"], ["COPY", "l", "c", "DB", "99"],
    ["COPY", "l", "c", "REPLACE", "NOPE"], ["COPY", "l", "c", "DB", "0", "REPLACE"],
    ["COPY", "l", "l", "DB", "0"], ["COPY", "l", "c"],
]

MIGRATE = [
    ["MIGRATE", "127.0.0.1", "1", "k", "0", "10", "AUTH"],
    ["MIGRATE", "127.0.0.1", "1", "k", "0", "10", "AUTH2", "u"],
    ["MIGRATE", "127.0.0.1", "1", "k", "0", "10", "NOPE"],
    ["MIGRATE", "127.0.0.1", "1", "k", "0", "10", "KEYS", "a"],
    ["MIGRATE", "127.0.0.1", "1", "", "0", "10", "COPY", "REPLACE", "KEYS"],
    ["MIGRATE", "127.0.0.1", "1", "", "0", "10", "KEYS", "nokey1", "nokey2"],
    ["MIGRATE", "127.0.0.1", "1", "", "0", "10", "AUTH", "p", "KEYS", "nokey"],
]

ZSETS = [
    ["ZRANGE", "z", "0", "-1", "LIMIT", "0"], ["ZRANGE", "z", "0", "-1", "LIMIT", "x", "1"],
    ["ZRANGE", "z", "(1", "+inf", "BYSCORE", "LIMIT", "1", "1", "WITHSCORES"],
    ["ZRANGE", "z", "0", "-1", "LIMIT", "0", "1"], ["ZRANGE", "z", "0", "-1", "REV", "REV"],
    ["ZRANGE", "z", "[a", "[z", "BYLEX", "WITHSCORES"], ["ZRANGE", "z", "0", "-1", "BYSCORE", "BYLEX"],
    ["ZRANGESTORE", "d", "z", "0", "-1", "WITHSCORES"], ["ZRANGESTORE", "d", "z", "0", "-1", "REV"],
    ["ZREVRANGEBYSCORE", "z", "+inf", "-inf", "LIMIT", "0", "1", "WITHSCORES"],
    ["ZMPOP", "1", "z", "MIN", "COUNT"], ["ZMPOP", "1", "z", "MIN", "COUNT", "0"],
    ["ZMPOP", "1", "z", "MIN", "COUNT", "1", "COUNT", "1"], ["ZMPOP", "1", "z", "MAX", "NOPE"],
    ["ZMPOP", "1", "z", "MAX", "COUNT", "2"],
    ["ZUNION", "2", "z", "y", "WEIGHTS", "1"], ["ZUNION", "2", "z", "y", "WEIGHTS", "1", "x"],
    ["ZUNION", "2", "z", "y", "WEIGHTS", "2", "3", "WITHSCORES"], ["ZUNION", "2", "z", "y", "AGGREGATE"],
    ["ZUNION", "2", "z", "y", "AGGREGATE", "nope"], ["ZUNION", "2", "z", "y", "AGGREGATE", "max",
                                                       "WITHSCORES"],
    ["ZINTERSTORE", "d", "2", "z", "y", "WITHSCORES"], ["ZDIFF", "2", "z", "y", "WEIGHTS", "1", "1"],
    ["ZINTERCARD", "2", "z", "y", "LIMIT"], ["ZINTERCARD", "2", "z", "y", "LIMIT", "-1"],
    ["ZINTERCARD", "2", "z", "y", "LIMIT", "1"], ["ZINTERCARD", "2", "z", "y", "WITHSCORES"],
]

BITFIELD = [
    ["BITFIELD", "bf", "GET", "u8"], ["BITFIELD", "bf", "SET", "u8", "0"],
    ["BITFIELD", "bf", "OVERFLOW"], ["BITFIELD", "bf", "OVERFLOW", "nope", "GET", "u8", "0"],
    ["BITFIELD", "bf", "OVERFLOW", "SAT", "INCRBY", "u8", "0", "300", "GET", "u8", "0"],
    ["BITFIELD", "bf", "SET", "x8", "0", "1"], ["BITFIELD", "bf", "INCRBY", "i8", "0", "x"],
    ["BITFIELD", "bf", "NOPE"], ["BITFIELD_RO", "bf", "GET", "u8", "0", "GET", "i4"],
]

FUNCTIONS = [
    ["FUNCTION", "LIST", "LIBRARYNAME"], ["FUNCTION", "LIST", "WITHCODE", "WITHCODE"],
    ["FUNCTION", "LIST", "LIBRARYNAME", "a", "LIBRARYNAME", "b"], ["FUNCTION", "LIST", "nope"],
    ["FUNCTION", "LIST", "withcode", "libraryname", "*"],
    ["FUNCTION", "LOAD", "nope", "#!lua name=x\nredis.register_function('f', function() end)"],
    ["FUNCTION", "LOAD", "REPLACE", "nope", "#!lua name=x\nredis.register_function('f', "
     "function() end)"],
]

TRACKING = [
    ["CLIENT", "TRACKING", "on", "REDIRECT"], ["CLIENT", "TRACKING", "on", "REDIRECT", "x"],
    ["CLIENT", "TRACKING", "on", "REDIRECT", "999999"], ["CLIENT", "TRACKING", "on", "PREFIX"],
    ["CLIENT", "TRACKING", "on", "PREFIX", "a"], ["CLIENT", "TRACKING", "on", "BCAST", "OPTIN"],
    ["CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"], ["CLIENT", "TRACKING", "on", "NOPE"],
    ["CLIENT", "TRACKING", "off", "NOLOOP"],
]


@pytest.fixture
def d(differ):
    differ.check("RPUSH", "l", "3", "1", "2")
    differ.check("SET", "a", "ohmytext")
    differ.check("SET", "b", "mynewtext")
    differ.check("ZADD", "z", "1", "a", "2", "b", "3", "c")
    differ.check("ZADD", "y", "5", "b", "6", "d")
    return differ


@pytest.mark.parametrize("group", [LCS, RESTORE_SORT_COPY, MIGRATE, ZSETS, BITFIELD, FUNCTIONS,
                                   TRACKING],
                         ids=["lcs", "restore-sort-copy", "migrate", "zsets", "bitfield",
                              "functions", "tracking"])
def test_option_edges_match_redis(d, group):
    d.check_all(group)
