"""Redis 8.4's string additions: SET's IFEQ/IFNE/IFDEQ/IFDNE, DELEX and DIGEST.

redis-server 7.0 (the differential oracle) has none of them, so these follow
redis.io's pages: https://redis.io/docs/latest/commands/set/ ,
https://redis.io/docs/latest/commands/delex/ and
https://redis.io/docs/latest/commands/digest/ ; and a model for SET's
conditions."""

from __future__ import annotations

import pytest
import xxhash
from hypothesis import given
from hypothesis import strategies as st

from tests.support.engine_harness import NOW, Harness
from tidelog.errors import SYNTAX, WRONGTYPE
from tidelog.resp.replies import OK


def effects_of(h: Harness, *argv) -> list[list[bytes]]:
    h.take_effects()
    h(*argv)
    return h.take_effects()


def test_xxh3_64_known_vectors():
    # XXH3-64 (seed 0) of the empty input, from xxHash's own test vectors.
    assert xxhash.xxh3_64_hexdigest(b"") == "2d06800538d394c2"
    assert xxhash.xxh3_64_intdigest(b"") == 0x2D06800538D394C2


def test_digest():
    # https://redis.io/docs/latest/commands/digest/ : 16 hex digits, nil for no key.
    h = Harness()
    assert h("DIGEST", "nope") is None
    h("SET", "k", "")
    assert h("DIGEST", "k") == b"2d06800538d394c2"
    h("SET", "k", "Hello world")
    d = h("DIGEST", "k")
    assert len(d) == 16 and d == d.lower() and int(d, 16) == xxhash.xxh3_64_intdigest(b"Hello world")
    h("RPUSH", "l", "x")
    assert h.err("DIGEST", "l") == WRONGTYPE
    assert effects_of(h, "DIGEST", "k") == []


def test_set_conditions_on_values():
    # https://redis.io/docs/latest/commands/set/ : IFEQ does not create, IFNE does.
    h = Harness()
    assert h("SET", "k", "v", "IFEQ", "x") is None
    assert h("EXISTS", "k") == 0
    assert h("SET", "k", "v", "IFNE", "x") == OK
    assert h("SET", "k", "w", "IFNE", "v") is None
    assert h("SET", "k", "w", "IFEQ", "v") == OK
    assert h("GET", "k") == b"w"
    assert h("SET", "k", "W", "ifeq", "W") is None              # case-sensitive values
    assert h("SET", "n", "v", "IFDEQ", "0000000000000000") is None
    assert h("SET", "n", "v", "IFDNE", "0000000000000000") == OK


def test_set_conditions_on_digests_compare_case_insensitively():
    h = Harness()
    h("SET", "k", "v")
    d = h("DIGEST", "k")
    assert h("SET", "k", "w", "IFDNE", d.upper()) is None
    assert h("SET", "k", "w", "IFDEQ", d.upper()) == OK
    assert h("SET", "k", "x", "IFDEQ", d) is None
    assert h("SET", "k", "x", "IFDNE", d) == OK


def test_set_condition_with_get_returns_the_old_value_either_way():
    h = Harness()
    h("SET", "k", "v")
    assert h("SET", "k", "w", "IFEQ", "nope", "GET") == b"v"
    assert h("GET", "k") == b"v"
    assert h("SET", "k", "w", "IFEQ", "v", "GET") == b"v"
    assert h("GET", "k") == b"w"
    assert h("SET", "m", "w", "IFNE", "v", "GET") is None
    assert h("GET", "m") == b"w"


def test_set_condition_errors():
    h = Harness()
    for extra in (["NX", "IFEQ", "a"], ["IFEQ", "a", "XX"], ["IFEQ", "a", "IFNE", "b"],
                  ["IFDEQ", "a", "IFDNE", "b"], ["IFEQ"]):
        assert h.err("SET", "k", "v", *extra) == SYNTAX
    h("RPUSH", "l", "x")
    for cond in ("IFEQ", "IFNE", "IFDEQ", "IFDNE"):
        assert h.err("SET", "l", "v", cond, "x") == WRONGTYPE
        assert h.err("SET", "l", "v", cond, "x", "GET") == WRONGTYPE
    assert h("LLEN", "l") == 1


def test_set_condition_with_expiry():
    h = Harness()
    h("SET", "k", "v", "EX", "50")
    assert h("SET", "k", "w", "IFEQ", "v", "KEEPTTL") == OK
    assert h("PTTL", "k") == 50_000
    assert h("SET", "k", "x", "IFEQ", "w", "PX", "1000") == OK
    assert h("PTTL", "k") == 1000
    assert h("SET", "k", "y", "IFEQ", "x") == OK
    assert h("TTL", "k") == -1


def test_set_condition_propagates_the_plain_set():
    h = Harness()
    at = str(NOW + 100_000).encode()
    assert effects_of(h, "SET", "k", "v", "IFEQ", "x") == []
    assert effects_of(h, "SET", "k", "v", "IFNE", "x", "GET") == [[b"SET", b"k", b"v"]]
    assert effects_of(h, "SET", "k", "w", "IFEQ", "v", "EX", "100") == [
        [b"SET", b"k", b"w", b"PXAT", at]]
    assert effects_of(h, "SET", "k", "x", "IFNE", "v", "KEEPTTL") == [
        [b"SET", b"k", b"x", b"KEEPTTL"]]
    assert effects_of(h, "SET", "k", "y", "IFDEQ", "0000000000000000") == []


def test_delex():
    # https://redis.io/docs/latest/commands/delex/
    h = Harness()
    assert h("DELEX", "k") == 0
    h("SET", "k", "v")
    assert h("DELEX", "k", "IFEQ", "w") == 0
    assert h("DELEX", "k", "IFNE", "v") == 0
    assert h("DELEX", "k", "IFDNE", h("DIGEST", "k")) == 0
    assert effects_of(h, "DELEX", "k", "IFEQ", "v") == [[b"DEL", b"k"]]
    assert h("EXISTS", "k") == 0
    assert h("DELEX", "k", "IFNE", "v") == 0                   # no key: nothing to delete
    h("SET", "k", "v")
    assert h("DELEX", "k", "IFDEQ", h("DIGEST", "k").upper()) == 1
    h("RPUSH", "l", "x")
    assert h.err("DELEX", "l", "IFEQ", "x") == WRONGTYPE
    assert effects_of(h, "DELEX", "l") == [[b"DEL", b"l"]]     # no condition: DEL of any type
    assert effects_of(h, "DELEX", "l") == []
    for extra in (["IFEQ"], ["IFEQ", "a", "b"], ["NX", "a"]):
        assert h.err("DELEX", "k", *extra) == SYNTAX


_OPS = st.tuples(st.sampled_from(["IFEQ", "IFNE", "IFDEQ", "IFDNE"]),
                 st.sampled_from([b"a", b"b", b""]), st.sampled_from([b"a", b"b", b""]),
                 st.booleans(), st.booleans())


@pytest.mark.timeout(120)
@given(st.lists(_OPS, max_size=30))
def test_set_conditions_against_a_model(ops):
    h = Harness()
    model: bytes | None = None
    for cond, new, match, as_digest, with_get in ops:
        arg = xxhash.xxh3_64_hexdigest(match).encode() if cond.startswith("IFD") else match
        if as_digest and cond.startswith("IFD"):
            arg = arg.upper()
        argv = ["SET", "k", new, cond, arg] + (["GET"] if with_get else [])
        if model is None:
            holds = cond in ("IFNE", "IFDNE")
        else:
            holds = (model == match) == (cond in ("IFEQ", "IFDEQ"))
        expected = model if with_get else (OK if holds else None)
        assert h(*argv) == expected
        if holds:
            model = new
        assert h("GET", "k") == model


def test_msetex():
    # https://redis.io/docs/latest/commands/msetex/
    h = Harness()
    assert h("MSETEX", "2", "a", "1", "b", "2", "EX", "5") == 1
    assert h("PTTL", "a") == 5000 and h("PTTL", "b") == 5000
    assert h("MSETEX", "1", "a", "x", "KEEPTTL") == 1
    assert h("GET", "a") == b"x" and h("PTTL", "a") == 5000
    assert h("MSETEX", "1", "a", "y") == 1
    assert h("TTL", "a") == -1                                  # no option: the TTL goes
    assert h("MSETEX", "2", "a", "1", "new", "2", "NX", "PX", "100") == 0
    assert h("EXISTS", "new") == 0
    assert h("MSETEX", "2", "a", "1", "new", "2", "XX") == 0
    assert h("MSETEX", "2", "a", "1", "b", "2", "PX", "100", "XX") == 1  # options in any order
    assert h("MSETEX", "2", "n1", "1", "n2", "2", "NX") == 1


def test_msetex_errors():
    # The texts of Redis's tests/unit/type/string.tcl ("MSETEX - error cases").
    h = Harness()
    assert h.err("MSETEX", "k", "v", "EX", "10") == b"ERR invalid numkeys value"
    assert h.err("MSETEX", "0", "k", "v") == b"ERR invalid numkeys value"
    assert h.err("MSETEX", "2147483648", "k", "v", "EX", "10") == b"ERR invalid numkeys value"
    assert h.err("MSETEX", "2147483647", "k", "v", "EX", "10") == b"ERR wrong number of key-value pairs"
    assert h.err("MSETEX", "2", "k", "v", "k2") == b"ERR wrong number of key-value pairs"
    for extra in (["bad"], ["NX", "XX"], ["EX", "10", "PX", "5000"], ["KEEPTTL", "EX", "10"],
                  ["EX"]):
        assert h.err("MSETEX", "1", "k", "v", *extra) == SYNTAX
    assert h.err("MSETEX", "1", "k", "v", "EX", "0") == b"ERR invalid expire time in 'msetex' command"
    assert h("EXISTS", "k") == 0


def test_msetex_propagates_absolute_times():
    h = Harness()
    at = str(NOW + 100_000).encode()
    assert effects_of(h, "MSETEX", "2", "a", "1", "b", "2", "NX", "EX", "100") == [
        [b"MSETEX", b"2", b"a", b"1", b"b", b"2", b"PXAT", at]]
    assert effects_of(h, "MSETEX", "1", "a", "3", "XX", "KEEPTTL") == [
        [b"MSETEX", b"1", b"a", b"3", b"KEEPTTL"]]
    assert effects_of(h, "MSETEX", "1", "a", "4") == [[b"MSETEX", b"1", b"a", b"4"]]
    assert effects_of(h, "MSETEX", "1", "a", "5", "NX") == []
