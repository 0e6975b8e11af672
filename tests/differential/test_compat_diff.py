"""Differential tests for causes found by running Redis's own Tcl suite
(`make compat`) against Tidelog, compared byte for byte with redis-server
7.0.15.
"""

from __future__ import annotations

import pytest

from tests.support.differ_tools import parse

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
