"""SUNIONCARD, SDIFFCARD (Redis 8.10) and AGGREGATE COUNT of ZUNION, ZINTER
and their STORE forms (Redis 8.8), through the engine.

Pages: https://redis.io/docs/latest/commands/sunioncard/,
https://redis.io/docs/latest/commands/sdiffcard/,
https://redis.io/docs/latest/commands/zunionstore/ (AGGREGATE COUNT: each
source adds its weight, 1 by default, for every member it holds)."""

from __future__ import annotations

import pytest

from tests.support.engine_harness import Harness


@pytest.fixture
def h():
    h = Harness()
    h.ok("SADD", "key1", "a", "b", "c")
    h.ok("SADD", "key2", "c", "d", "e")
    return h


def test_sunioncard_as_the_page_shows(h):
    assert h.ok("SUNIONCARD", 2, "key1", "key2") == 5
    assert h.ok("SUNIONCARD", 2, "key1", "key2", "LIMIT", 3) == 3
    assert h.ok("SUNIONCARD", 2, "key1", "key2", "LIMIT", 0) == 5
    assert h.ok("SUNIONCARD", 2, "key1", "key2", "LIMIT", 99) == 5
    assert h.ok("SUNIONCARD", 2, "key1", "key2", "APPROX", "LIMIT", 4) == 4
    assert h.ok("SUNIONCARD", 2, "key1", "key2", "LIMIT", 4, "approx") == 4
    assert h.ok("SUNIONCARD", 1, "nokey") == 0
    assert h.ok("SUNIONCARD", 3, "key1", "nokey", "key1") == 3


def test_sdiffcard_as_the_page_shows(h):
    assert h.ok("SDIFFCARD", 2, "key1", "key2") == 2
    assert h.ok("SDIFFCARD", 2, "key1", "key2", "LIMIT", 1) == 1
    assert h.ok("SDIFFCARD", 1, "key1") == 3
    assert h.ok("SDIFFCARD", 2, "key1", "key1") == 0
    assert h.ok("SDIFFCARD", 2, "nokey", "key1") == 0
    assert h.ok("SDIFFCARD", 2, "key1", "nokey") == 3


@pytest.mark.parametrize("name", ["SUNIONCARD", "SDIFFCARD"])
def test_card_errors_are_sintercards(h, name):
    for args in ((0, "k"), (-1, "k"), ("x", "k"), (3, "k"), (1, "k", "LIMIT", -1),
                 (1, "k", "LIMIT", "x"), (1, "k", "LIMIT"), (1, "k", "NOPE")):
        assert h.err(name, *args) == h.err("SINTERCARD", *args), args
    h.ok("SET", "str", "v")
    assert h.err(name, 2, "key1", "str") == (
        b"WRONGTYPE Operation against a key holding the wrong kind of value")
    assert h.err("SDIFFCARD", 1, "key1", "APPROX") == b"ERR syntax error"


def test_aggregate_count():
    h = Harness()
    h.ok("ZADD", "s1", 1, "foo", 1, "bar")
    h.ok("ZADD", "s2", 2, "foo", 2, "bar")
    h.ok("ZADD", "s3", 3, "foo")
    h.ok("SADD", "plain", "foo")  # a set's members score 1 (ignored by COUNT anyway)
    assert h.ok("ZUNIONSTORE", "out", 3, "s1", "s2", "s3", "AGGREGATE", "COUNT") == 2
    assert h.ok("ZRANGE", "out", 0, -1, "WITHSCORES") == [b"bar", 2.0, b"foo", 3.0]
    assert h.ok("ZUNION", 3, "s1", "s2", "s3", "WEIGHTS", 1, 2, 5, "AGGREGATE", "count",
                "WITHSCORES") == [b"bar", 3.0, b"foo", 8.0]
    assert h.ok("ZINTER", 3, "s1", "s3", "plain", "AGGREGATE", "COUNT", "WITHSCORES") == [
        b"foo", 3.0]
    assert h.ok("ZINTERSTORE", "o", 2, "s1", "s2", "WEIGHTS", "inf", "-inf",
                "AGGREGATE", "COUNT") == 2
    assert h.ok("ZRANGE", "o", 0, -1, "WITHSCORES") == [b"bar", 0.0, b"foo", 0.0]
    assert h.err("ZUNION", 1, "s1", "AGGREGATE", "AVG") == b"ERR syntax error"
    assert h.err("ZDIFF", 1, "s1", "AGGREGATE", "COUNT") == b"ERR syntax error"
