"""Array commands on an in-process engine (no sockets): replies and errors
as t_array.c gives them (the pages at redis.io/commands/ar*/ describe each
reply), effects and keyspace events."""

from __future__ import annotations

import pytest

from tests.support.engine_harness import Harness
from tidelog.resp.replies import ErrorReply, Map

MAX = 2**64 - 2


def err(h: Harness, *argv) -> bytes:
    reply = h(*argv)
    assert isinstance(reply, ErrorReply), reply
    return reply.message


def effects_of(h: Harness, *argv) -> list[list[bytes]]:
    h.take_effects()
    h(*argv)
    return h.take_effects()


def test_set_get_len_count():
    # redis.io/docs/latest/develop/data-types/arrays/ (basic usage, length vs count)
    h = Harness()
    assert h("ARSET", "events:1", "0", "login", "click", "purchase") == 3
    assert h("ARGET", "events:1", "0") == b"login"
    assert h("ARGET", "events:1", "999") is None
    assert h("ARMSET", "metrics", "0", "10", "5", "20", "100", "30") == 3
    assert h("ARMGET", "metrics", "0", "5", "100", "999") == [b"10", b"20", b"30", None]
    assert h("ARSET", "sparse", "0", "a") == 1
    assert h("ARSET", "sparse", "1000000", "b") == 1
    assert h("ARLEN", "sparse") == 1000001
    assert h("ARCOUNT", "sparse") == 2
    assert h("ARSET", "sparse", "0", "again") == 0          # an overwrite fills nothing
    assert h("ARLEN", "nokey") == 0 and h("ARCOUNT", "nokey") == 0
    assert h("ARMGET", "nokey", "1", "2") == [None, None]
    assert h("TYPE", "sparse").text == b"array"
    assert h("OBJECT", "ENCODING", "sparse") == b"sliced-array"


def test_index_parsing():
    h = Harness()
    for bad in ("-1", "abc", "", "18446744073709551615", "18446744073709551616", "1.5"):
        assert err(h, "ARGET", "a", bad) == b"ERR invalid array index"
    h("ARSET", "a", "7", "x")
    # string2ull: what strtoull takes whole is an index too
    assert h("ARGET", "a", "007") == b"x"
    assert h("ARGET", "a", "+7") == b"x"
    assert h("ARGET", "a", " 7") == b"x" and h("ARGET", "a", "7\0junk") == b"x"
    assert err(h, "ARSEEK", "a", "-1\0") == b"ERR invalid array index"
    assert h("ARSET", "a", str(MAX), "last") == 1
    assert h("ARLEN", "a") == 18446744073709551615
    assert err(h, "ARSET", "a", str(MAX), "x", "y") == b"ERR array index overflow"
    # a bad index anywhere fails the whole command, before anything changes
    assert err(h, "ARMSET", "a", "1", "v", "-1", "w") == b"ERR invalid array index"
    assert h("ARGET", "a", "1") is None
    assert err(h, "ARMSET", "a", "1", "v", "2") == \
        b"ERR wrong number of arguments for 'armset' command"


def test_wrongtype_both_ways():
    h = Harness()
    h("SET", "s", "v")
    for argv in (("ARGET", "s", "0"), ("ARSET", "s", "0", "x"), ("ARLEN", "s"),
                 ("ARINSERT", "s", "x"), ("ARRING", "s", "3", "x"), ("ARSCAN", "s", "0", "9"),
                 ("ARINFO", "s"), ("AROP", "s", "0", "9", "SUM"), ("ARDEL", "s", "0")):
        assert err(h, *argv).startswith(b"WRONGTYPE"), argv
    h("ARSET", "a", "0", "x")
    for argv in (("GET", "a"), ("LPUSH", "a", "x"), ("HGET", "a", "f"), ("SADD", "a", "m"),
                 ("ZADD", "a", "1", "m"), ("XADD", "a", "*", "f", "v"), ("PFADD", "a", "x")):
        assert err(h, *argv).startswith(b"WRONGTYPE"), argv


def test_del_and_delrange_remove_the_key_when_empty():
    h = Harness()
    h("ARSET", "a", "0", "a", "b", "c", "d")
    assert h("ARDEL", "a", "1", "1", "50") == 1
    assert h("ARDELRANGE", "a", "3", "2") == 2               # either order
    assert h("ARDELRANGE", "a", "10", "0", "1000", "2000") == 1
    assert h("EXISTS", "a") == 0
    assert h("ARDEL", "a", "0") == 0 and h("ARDELRANGE", "a", "0", "9") == 0
    assert err(h, "ARDEL", "a", "x") == b"ERR invalid array index"   # checked before the key


def test_getrange_scan_grep():
    h = Harness()
    h("ARMSET", "a", "2", "two", "5", "five", "6", "six")
    assert h("ARGETRANGE", "a", "1", "3") == [None, b"two", None]
    assert h("ARGETRANGE", "a", "6", "5") == [b"six", b"five"]
    assert h("ARGETRANGE", "nokey", "0", "1") == [None, None]
    assert err(h, "ARGETRANGE", "a", "0", "1000000") == \
        b"ERR range exceeds maximum of 1000000 items"
    assert h("ARSCAN", "a", "0", str(MAX)) == [[2, b"two"], [5, b"five"], [6, b"six"]]
    assert h("ARSCAN", "a", str(MAX), "0", "LIMIT", "2") == [[6, b"six"], [5, b"five"]]
    assert err(h, "ARSCAN", "a", "0", "9", "LIMIT", "0") == b"ERR LIMIT must be positive"
    assert err(h, "ARSCAN", "a", "0", "9", "COUNT", "2") == b"ERR syntax error"
    assert err(h, "ARSCAN", "a", "0", "9", "LIMIT") == \
        b"ERR wrong number of arguments for 'arscan' command"
    assert h("ARGREP", "a", "-", "+", "MATCH", "i") == [5, 6]
    assert h("ARGREP", "a", "-", "+", "GLOB", "t*", "GLOB", "*x", "WITHVALUES") == \
        [[2, b"two"], [6, b"six"]]
    assert h("ARGREP", "a", "-", "+", "MATCH", "I", "AND", "EXACT", "SIX", "NOCASE") == [6]
    assert h("ARGREP", "a", "+", "-", "RE", "^f|^s", "LIMIT", "1") == [6]
    assert err(h, "ARGREP", "a", "-", "+", "LIMIT", "2") == b"ERR syntax error"
    assert err(h, "ARGREP", "a", "-", "+", "RE", "") == b"ERR regular expression is empty"
    assert err(h, "ARGREP", "a", "-", "+", "RE", "(a)\\1") == \
        b"ERR regular expression backreferences are not supported"
    assert err(h, "ARGREP", "a", "-", "+", "RE", "x" * 2049) == \
        b"ERR regular expression is too long, maximum is 2048 bytes"
    assert err(h, "ARGREP", "a", "-", "+", *["EXACT", "x"] * 251) == \
        b"ERR too many predicates, maximum is 250"
    assert h("ARGREP", "nokey", "-", "+", "EXACT", "x") == []
    assert err(h, "ARGREP", "a", "-", "+", "RE", "(") == b"ERR invalid regular expression: Missing ')'"
    assert err(h, "ARGREP", "a", "-", "+", "RE", "\\x{1") .startswith(b"ERR invalid regular expression")
    h("ARMSET", "p", "0", "ab12", "1", "a b", "2", "x!")
    assert h("ARGREP", "p", "-", "+", "RE", "[[:digit:]]{2}") == [0]     # POSIX classes
    assert h("ARGREP", "p", "-", "+", "RE", "[[:space:]]|[[:punct:]]") == [1, 2]


def test_arop():
    h = Harness()
    h("ARSET", "n", "0", "1.5", "2", "abc", "-3", "", "7")
    assert h("AROP", "n", "0", "100", "SUM") == b"7.5"
    assert h("AROP", "n", "0", "100", "MIN") == b"-3"
    assert h("AROP", "n", "0", "100", "MAX") == b"7"
    assert h("AROP", "n", "0", "100", "AND") == 1 & 2 & -3 & 7
    assert h("AROP", "n", "0", "100", "OR") == 1 | 2 | -3 | 7
    assert h("AROP", "n", "100", "0", "XOR") == 1 ^ 2 ^ -3 ^ 7
    assert h("AROP", "n", "0", "100", "USED") == 6
    assert h("AROP", "n", "0", "100", "MATCH", "abc") == 1
    assert h("AROP", "n", "2", "2", "SUM") is None                 # nothing numeric
    assert h("AROP", "nokey", "0", "1", "SUM") is None
    assert h("AROP", "nokey", "0", "1", "USED") == 0
    h("ARSET", "f", "0", "0.1", "0.2")
    assert h("AROP", "f", "0", "1", "SUM") == b"0.3"                # long double, %.17Lg
    assert err(h, "AROP", "n", "0", "1", "AVG") == b"ERR unknown operation"
    assert err(h, "AROP", "n", "0", "1", "MATCH") == b"ERR MATCH requires a value argument"
    assert err(h, "AROP", "n", "0", "1", "SUM", "x") == \
        b"ERR wrong number of arguments for 'arop' command"


def test_insert_next_seek_lastitems():
    h = Harness()
    assert h("ARNEXT", "q") == 0
    assert h("ARINSERT", "q", "a", "b", "c") == 2
    assert h("ARNEXT", "q") == 3
    assert h("ARLASTITEMS", "q", "2") == [b"b", b"c"]
    assert h("ARLASTITEMS", "q", "10", "REV") == [b"c", b"b", b"a"]
    assert h("ARLASTITEMS", "q", "0") == [] and h("ARLASTITEMS", "q", "-5", "BAD") == []
    assert err(h, "ARLASTITEMS", "q", "x") == b"ERR invalid COUNT"
    assert err(h, "ARLASTITEMS", "q", "1", "BAD") == b"ERR syntax error"
    assert h("ARSEEK", "q", "10") == 1
    assert h("ARINSERT", "q", "k") == 10
    assert h("ARSEEK", "nokey", "5") == 0 and h("EXISTS", "nokey") == 0
    assert h("ARSEEK", "q", "18446744073709551615") == 1
    assert h("ARNEXT", "q") is None
    assert err(h, "ARINSERT", "q", "x") == b"ERR insert index overflow"
    assert h("ARSEEK", "q", "0") == 1 and h("ARNEXT", "q") == 0
    info = dict(h("ARINFO", "q").items)
    assert info[b"count"] == 4 and info[b"len"] == 11 and info[b"next-insert-index"] == 0
    assert err(h, "ARINFO", "nokey") == b"ERR no such key"
    assert err(h, "ARINFO", "q", "BRIEF") == b"ERR syntax error"
    assert isinstance(h("ARINFO", "q", "FULL"), Map)


def test_ring():
    h = Harness()
    assert h("ARRING", "r", "3", "a", "b", "c", "d") == 0
    assert h("ARGETRANGE", "r", "0", "2") == [b"d", b"b", b"c"]
    assert h("ARLASTITEMS", "r", "3") == [b"b", b"c", b"d"]
    # shrink: keep the newest two, oldest at 0
    assert h("ARRING", "r", "2", "e") == 0
    assert h("ARGETRANGE", "r", "0", "1") == [b"e", b"d"]
    assert h("ARLASTITEMS", "r", "2") == [b"d", b"e"]
    # grow after a wrap: repacked, then new capacity used
    assert h("ARRING", "r", "4", "f") == 2
    assert h("ARLASTITEMS", "r", "3") == [b"d", b"e", b"f"]
    assert err(h, "ARRING", "r", "0", "x") == b"ERR size must be positive"
    assert err(h, "ARRING", "r", "x", "x") == b"ERR invalid size"


def test_effects_are_the_commands_themselves():
    h = Harness()
    for argv in (("ARSET", "a", "0", "x"), ("ARMSET", "a", "5", "y"), ("ARINSERT", "a", "z"),
                 ("ARRING", "a", "2", "w"), ("ARSEEK", "a", "3"), ("ARDEL", "a", "0"),
                 ("ARDELRANGE", "a", "0", "100")):
        assert effects_of(h, *argv) == [[x.encode() for x in argv]], argv
    assert effects_of(h, "ARDEL", "a", "0") == []
    assert effects_of(h, "ARSEEK", "a", "1") == []          # the key is gone
    assert effects_of(h, "ARGET", "a", "0") == []


def test_copy_rename_dump_restore():
    h = Harness()
    h("ARINSERT", "a", "x", "y")
    h("ARSET", "a", "100", "1.5")
    assert h("COPY", "a", "b") == 1
    h("ARSET", "a", "0", "changed")
    assert h("ARGET", "b", "0") == b"x" and h("ARNEXT", "b") == 2
    payload = h("DUMP", "b")
    assert payload[0] == 28 and payload[-10:-8] == b"\x0f\x00"
    h("RESTORE", "c", "0", payload)
    assert h("ARSCAN", "c", "0", "1000") == [[0, b"x"], [1, b"y"], [100, b"1.5"]]
    assert h("ARNEXT", "c") == 2
    h("RENAME", "c", "d")
    assert h("ARCOUNT", "d") == 3 and h("EXISTS", "c") == 0
    assert h("MEMORY", "USAGE", "d") > 0
    assert b"encoding:sliced-array serializedlength:" in h("DEBUG", "OBJECT", "d").text
    assert h("SCAN", "0", "TYPE", "array") == [b"0", [b"a", b"b", b"d"]] or \
        sorted(h("SCAN", "0", "TYPE", "array")[1]) == [b"a", b"b", b"d"]
    assert h("MOVE", "d", "1") == 1


@pytest.mark.parametrize("argv,arity", [
    (("ARGET", "a"), "arget"), (("ARSET", "a", "0"), "arset"), (("ARINFO",), "arinfo"),
    (("ARGREP", "a", "0", "1", "EXACT"), "argrep"), (("AROP", "a", "0", "1"), "arop"),
])
def test_arity(argv, arity):
    h = Harness()
    assert err(h, *argv) == b"ERR wrong number of arguments for '%s' command" % arity.encode()


def _full(h: Harness, key: str) -> dict[bytes, object]:
    return dict(h("ARINFO", key, "FULL").items)


def test_arinfo_full_follows_promotion_and_demotion():
    # the behaviours Redis's own array tests check (dense window growth,
    # sparse -> dense past array-sparse-kmax, dense -> sparse below -kmin)
    h = Harness()
    for i in range(100):
        h("ARSET", "d", str(i), f"val{i}")
    info = _full(h, "d")
    assert info[b"dense-slices"] == 1 and info[b"avg-dense-size"] == 128.0
    h("ARSET", "l", "500", "anchor")
    for i in range(499, 399, -1):
        h("ARSET", "l", str(i), "v")
    assert _full(h, "l")[b"dense-slices"] == 1 and _full(h, "l")[b"avg-dense-size"] >= 128
    for i in range(5):
        h("ARSET", "p", str(i * 200), "x")
    info = _full(h, "p")
    assert (info[b"dense-slices"], info[b"sparse-slices"], info[b"avg-sparse-size"]) == (0, 1, 8.0)
    for i in range(5, 20):
        h("ARSET", "p", str(i * 200), "x")
    info = _full(h, "p")
    assert (info[b"dense-slices"], info[b"sparse-slices"]) == (1, 0)
    for i in range(50):
        h("ARSET", "m", str(i), "x")
    for i in range(3, 50):
        h("ARDEL", "m", str(i))
    info = _full(h, "m")
    assert (info[b"dense-slices"], info[b"sparse-slices"], info[b"avg-sparse-size"]) == (0, 1, 5.0)
    # a bulk ARSET of more than kmax values in one slice makes it dense at
    # once; across two slices, six values each stay sparse
    h("ARSET", "b", "4090", *["v"] * 12)
    info = _full(h, "b")
    assert (info[b"dense-slices"], info[b"sparse-slices"], info[b"slices"]) == (0, 2, 2)
    h("ARSET", "b2", "3", *["v"] * 12)
    info = _full(h, "b2")
    assert (info[b"dense-slices"], info[b"avg-dense-size"], info[b"avg-dense-fill"]) == \
        (1, 8.0 * 2, 12 / 16)
    for i in range(20):
        h("ARSET", "w", str(2100 + i * 100), "x")
    assert _full(h, "w")[b"avg-dense-size"] <= 4096


def test_ring_rebuilds():
    # the ring behaviours of redis.io/commands/arring/ (a change of size keeps the
    # newest contiguous run, oldest at 0; ARSEEK 0 is honoured on a grow)
    h = Harness()
    for i in range(5):
        h("ARRING", "r", "3", f"ring{i}")
    assert h("ARSEEK", "r", "0") == 1
    h("ARRING", "r", "8", "grown")
    assert h("ARGETRANGE", "r", "0", "2") == [b"grown", b"ring4", b"ring2"]
    assert h("ARNEXT", "r") == 1
    for i in range(5):
        h("ARRING", "m", "3", f"ring{i}")
    h("ARSET", "m", "100", "outside")
    h("ARRING", "m", "3", "ring5")
    assert h("ARCOUNT", "m") == 3 and h("ARGET", "m", "100") is None
    assert h("ARGET", "m", "0") == b"ring5"
    for i in range(5):
        h("ARRING", "s", "5", f"v{i}")
    h("ARDEL", "s", "3")
    h("ARRING", "s", "3", "new")                  # the walk back stops at the hole
    assert h("ARGETRANGE", "s", "0", "2") == [b"v4", b"new", None]
    for i in range(8):
        h("ARRING", "g", "5", f"v{i}")
    h("ARDEL", "g", "1")
    h("ARRING", "g", "8", "grown")
    assert h("ARGETRANGE", "g", "0", "2") == [b"v7", b"grown", None]
    for i in range(20):
        h("ARSET", "t", str(i), f"val{i}")
    h("ARSEEK", "t", "16")
    assert h("ARRING", "t", "10", "wrap") == 0
    assert h("ARCOUNT", "t") == 10 and h("ARGET", "t", "1") == b"val7"


def test_array_settings():
    h = Harness()
    assert h("CONFIG", "GET", "array-*") == Map([(b"array-slice-size", b"4096"),
                                                 (b"array-sparse-kmin", b"5"),
                                                 (b"array-sparse-kmax", b"10")])
    assert b"power of two" in err(h, "CONFIG", "SET", "array-slice-size", "5000")
    h("CONFIG", "SET", "array-slice-size", "256")
    h("ARSET", "a", "300", "x")
    info = dict(h("ARINFO", "a").items)
    assert info[b"slice-size"] == 256 and info[b"directory-size"] == 2
    h("CONFIG", "SET", "array-sparse-kmax", "2")
    h("ARSET", "b", "0", "x")
    h("ARSET", "b", "5", "x")
    h("ARSET", "b", "9", "x")                      # a third value: past kmax
    assert dict(h("ARINFO", "b", "FULL").items)[b"dense-slices"] == 1
    h("DEBUG", "RELOAD")                           # loaded under the settings in force
    assert dict(h("ARINFO", "a").items)[b"slice-size"] == 256
    assert dict(h("ARINFO", "b", "FULL").items)[b"dense-slices"] == 1
    h("RESTORE", "c", "0", h("DUMP", "a"))
    assert dict(h("ARINFO", "c").items)[b"slice-size"] == 256


def test_ranges_across_super_directory_blocks():
    h = Harness()
    for idx in ("100", "8388608", "12000000", "16777200", "16777216", "20000000"):
        h("ARSET", "a", idx, "v" + idx)
    info = dict(h("ARINFO", "a").items)
    assert (info[b"super-dir-entries"], info[b"directory-size"], info[b"slices"]) == (3, 4, 6)
    assert h("ARDELRANGE", "a", "8388608", "18000000") == 4
    assert h("ARSCAN", "a", "20000000", "0") == [[20000000, b"v20000000"], [100, b"v100"]]
    info = dict(h("ARINFO", "a").items)
    assert (info[b"super-dir-entries"], info[b"directory-size"], info[b"slices"]) == (2, 4, 2)
    assert h("ARDELRANGE", "a", "5", "12", "8", "15") == 0
    assert h("AROP", "a", "0", "30000000", "USED") == 2
