"""INCREX without sockets: the bounded arithmetic against a plain model
(hypothesis), then the command through the engine with a fake clock: replies,
refusals that leave the key and its TTL alone, SATURATE, the type limits,
every expiry option, errors, what goes to the AOF and replicas, and the
keyspace events.

Behaviour as https://redis.io/docs/latest/commands/increx/ describes it
(Redis 8.8): the reply is ``[new value, increment applied]``; a result past
LBOUND/UBOUND or the type limits is skipped with ``[current, 0]`` unless
SATURATE clamps it; the command goes out as the SET it amounts to."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.engine_harness import NOW, Harness
from tests.unit.test_notify import World
from tidelog.commands.args import INT64_MAX, INT64_MIN
from tidelog.commands.string.string_increx import step_float, step_int
from tidelog.errors import (
    INCREX_APPLIED_INFINITY,
    INCREX_APPLIED_OVERFLOW,
    INCREX_BOUNDS_CROSSED,
    INCREX_ENX_WITHOUT_EXPIRE,
    INCREX_INCREMENT_INFINITY,
    INCREX_INCREMENT_NOT_FLOAT,
    INCREX_INCREMENT_NOT_INTEGER,
    INCREX_VALUE_INFINITY,
    NOT_A_FLOAT,
    NOT_INTEGER,
    SYNTAX,
    WRONGTYPE,
    CommandError,
)
from tidelog.resp import encode
from tidelog.resp.replies import DoubleText
from tidelog.types import longdouble

# -- the arithmetic against a model -----------------------------------------------------
int64 = st.integers(INT64_MIN, INT64_MAX)
maybe_bound = st.none() | int64


def model_int(current, by, lower, upper, saturate):
    """The page's rule, on unbounded integers: in range, applied; outside,
    skipped, or with SATURATE clamped; an applied increment past int64 is an
    error (None here)."""
    lo = INT64_MIN if lower is None else lower
    hi = INT64_MAX if upper is None else upper
    want = current + by
    if lo <= want <= hi:
        new = want
    elif not saturate:
        return current, 0, False
    else:
        new = min(max(want, lo), hi)
    if not INT64_MIN <= new - current <= INT64_MAX:
        return None
    return new, new - current, True


@given(int64, int64, maybe_bound, maybe_bound, st.booleans())
def test_integer_steps_follow_the_model(current, by, lower, upper, saturate):
    if lower is not None and upper is not None and lower > upper:
        lower, upper = upper, lower
    want = model_int(current, by, lower, upper, saturate)
    if want is None:
        with pytest.raises(CommandError) as e:
            step_int(current, by, lower, upper, saturate)
        assert e.value.args[0] == INCREX_APPLIED_OVERFLOW
        return
    got = step_int(current, by, lower, upper, saturate)
    assert (got.value, got.applied, got.stored) == want
    assert got.value == current + got.applied
    assert INT64_MIN <= got.value <= INT64_MAX


small = st.builds(lambda n, k: Fraction(n, 2**k), st.integers(-10**6, 10**6), st.integers(0, 6))


@given(small, small, st.none() | small, st.none() | small, st.booleans())
def test_float_steps_follow_the_model(current, by, lower, upper, saturate):
    """Values a long double holds exactly (small dyadic fractions): the sum
    is exact, and the step is the model's, on rationals."""
    if lower is not None and upper is not None and lower > upper:
        lower, upper = upper, lower
    got = step_float(current, by, lower, upper, saturate)
    want = current + by
    lo = -longdouble.MAX if lower is None else lower
    hi = longdouble.MAX if upper is None else upper
    if lo <= want <= hi:
        assert (got.value, got.applied, got.stored) == (want, by, True)
    elif not saturate:
        assert (got.value, got.applied, got.stored) == (current, 0, False)
    else:
        new = min(max(want, lo), hi)
        assert (got.value, got.stored) == (new, True)
        assert got.applied == longdouble.round_to_format(new - current)


def test_float_limits():
    big = longdouble.MAX
    # past the finite long doubles: skipped, or clamped to LDBL_MAX
    assert step_float(big, big, None, None, False).stored is False
    sat = step_float(big, big, None, None, True)
    assert (sat.value, sat.applied) == (big, 0)
    # a clamp that moves by more than LDBL_MAX, or onto an infinite bound
    with pytest.raises(CommandError) as e:
        step_float(-big, big, big, None, True)
    assert e.value.args[0] == INCREX_APPLIED_INFINITY
    ten, one = Fraction(10), Fraction(1)
    with pytest.raises(CommandError):
        step_float(ten, one, -longdouble.INF, -longdouble.INF, True)
    assert step_float(ten, one, -longdouble.INF, -longdouble.INF, False).stored is False
    assert step_float(ten, one, None, longdouble.INF, False).value == 11


# -- the command ------------------------------------------------------------------------
def fresh(**values) -> Harness:
    h = Harness()
    for key, value in values.items():
        h.ok("SET", key, value)
    h.take_effects()
    return h


def texts(reply):
    assert all(type(r) is DoubleText for r in reply), reply
    return [r.text for r in reply]


def test_default_and_byint():
    h = fresh()
    assert h.ok("INCREX", "k") == [1, 1]
    assert h.ok("INCREX", "k") == [2, 1]
    assert h.ok("INCREX", "k", "BYINT", 5) == [7, 5]
    assert h.ok("INCREX", "k", "byint", -10) == [-3, -10]
    assert h.ok("INCREX", "k", "BYINT", 0) == [-3, 0]
    assert h.ok("GET", "k") == b"-3"
    assert h.ok("OBJECT", "ENCODING", "k") == b"int"


def test_byfloat_replies_in_long_double_text():
    h = fresh(k="1.5")
    assert texts(h.ok("INCREX", "k", "BYFLOAT", "0.25")) == [b"1.75", b"0.25"]
    assert texts(h.ok("INCREX", "k", "BYFLOAT", "1")) == [b"2.75", b"1"]
    h.ok("SET", "f", "0.1")
    assert texts(h.ok("INCREX", "f", "BYFLOAT", "0.2")) == [b"0.3", b"0.2"]
    assert h.ok("GET", "f") == b"0.3"
    assert h.ok("OBJECT", "ENCODING", "f") == b"embstr"
    # an integer value reads as a float; the result is written as INCRBYFLOAT writes it
    h.ok("SET", "i", "10")
    assert texts(h.ok("INCREX", "i", "BYFLOAT", "5")) == [b"15", b"5"]
    assert h.ok("OBJECT", "ENCODING", "i") == b"embstr"
    # no negative zero
    h.ok("DEL", "z")
    h.ok("INCREX", "z", "BYFLOAT", repr(1 / 41))
    h.ok("INCREX", "z", "BYFLOAT", repr(-1 / 41))
    assert h.ok("GET", "z") == b"0"


def test_double_text_on_the_wire():
    reply = [DoubleText(b"1.75"), DoubleText(b"0.25")]
    assert encode(reply, 2) == b"*2\r\n$4\r\n1.75\r\n$4\r\n0.25\r\n"
    assert encode(reply, 3) == b"*2\r\n,1.75\r\n,0.25\r\n"


def test_bounds_skip_by_default_and_saturate_on_request():
    h = fresh(k=10)
    assert h.ok("INCREX", "k", "BYINT", 10, "UBOUND", 15) == [10, 0]
    assert h.take_effects() == []
    assert h.ok("INCREX", "k", "BYINT", 10, "UBOUND", 15, "SATURATE") == [15, 5]
    assert h.ok("INCREX", "k", "BYINT", -20, "LBOUND", 5) == [15, 0]
    assert h.ok("INCREX", "k", "BYINT", -20, "LBOUND", 5, "SATURATE") == [5, -10]
    # exactly on a bound is inside
    assert h.ok("INCREX", "k", "BYINT", 5, "UBOUND", 10) == [10, 5]
    # a value already outside: skipped, or clamped (whatever the direction)
    h.ok("SET", "k", 50)
    assert h.ok("INCREX", "k", "BYINT", 5, "UBOUND", 30) == [50, 0]
    assert h.ok("INCREX", "k", "BYINT", -5, "UBOUND", 30, "SATURATE") == [30, -20]
    h.ok("SET", "k", 50)
    assert h.ok("INCREX", "k", "BYINT", -25, "UBOUND", 30) == [25, -25]
    # options in any order
    h.ok("SET", "k", 5)
    assert h.ok("INCREX", "k", "LBOUND", 0, "BYINT", 100, "UBOUND", 10, "SATURATE") == [10, 5]
    h.ok("SET", "f", "10")
    assert texts(h.ok("INCREX", "f", "BYFLOAT", "10.0", "UBOUND", "15.5")) == [b"10", b"0"]
    assert texts(h.ok("INCREX", "f", "BYFLOAT", "10", "UBOUND", "15.5", "SATURATE")) == [
        b"15.5", b"5.5"]
    assert texts(h.ok("INCREX", "f", "BYFLOAT", "-100", "LBOUND", "-5.5", "SATURATE")) == [
        b"-5.5", b"-21"]


def test_a_skipped_step_does_not_create_the_key():
    h = fresh()
    assert h.ok("INCREX", "k", "BYINT", 15, "UBOUND", 10) == [0, 0]
    assert texts(h.ok("INCREX", "k", "BYFLOAT", "-0.5", "UBOUND", "-1.5")) == [b"0", b"0"]
    assert h.ok("EXISTS", "k") == 0
    assert h.take_effects() == []
    assert h.ok("INCREX", "k", "LBOUND", 5, "SATURATE") == [5, 5]
    assert h.ok("GET", "k") == b"5"


def test_int64_limits():
    h = fresh(k=INT64_MAX - 1)
    h.ok("PEXPIRE", "k", 60_000)
    h.take_effects()
    assert h.ok("INCREX", "k", "BYINT", 2) == [INT64_MAX - 1, 0]
    assert h.ok("PTTL", "k") == 60_000
    assert h.ok("INCREX", "k", "BYINT", 2, "SATURATE") == [INT64_MAX, 1]
    h.ok("SET", "k", -9223372036854775800)
    assert h.ok("INCREX", "k", "BYINT", -9223372036854775800, "SATURATE") == [INT64_MIN, -8]
    h.ok("SET", "k", 9223372036854775800)
    assert h.err("INCREX", "k", "BYINT", 1, "SATURATE", "UBOUND", INT64_MIN) == \
        INCREX_APPLIED_OVERFLOW
    assert h.ok("GET", "k") == b"9223372036854775800"


def test_errors():
    h = fresh(k=1, s="hello", inf="inf")
    h.ok("RPUSH", "l", "a")
    for argv in (["FOO"], ["BYINT", 1, "FOO"], ["BYINT", 1, "BYFLOAT", "1.5"],
                 ["BYFLOAT", "1.5", "BYINT", 1], ["BYINT", 1, "BYINT", 2],
                 ["LBOUND", 0, "LBOUND", 1], ["UBOUND", 9, "UBOUND", 8],
                 ["SATURATE", "SATURATE"], ["EX", 10, "PX", 5000], ["EX", 10, "EX", 20],
                 ["EX", 10, "PERSIST"], ["PERSIST", "EX", 10], ["PERSIST", "PERSIST"],
                 ["PERSIST", "ENX"], ["ENX", "PERSIST"], ["ENX", "ENX", "EX", 10],
                 ["BYINT"], ["LBOUND"], ["EX"]):
        assert h.err("INCREX", "k", *argv) == SYNTAX, argv
    assert h.err("INCREX", "k", "ENX") == INCREX_ENX_WITHOUT_EXPIRE
    assert h.err("INCREX", "k", "BYINT", 1, "ENX") == INCREX_ENX_WITHOUT_EXPIRE
    assert h.err("INCREX", "k", "BYINT", "abc") == INCREX_INCREMENT_NOT_INTEGER
    assert h.err("INCREX", "k", "BYINT", "1.5") == INCREX_INCREMENT_NOT_INTEGER
    assert h.err("INCREX", "k", "BYFLOAT", "abc") == INCREX_INCREMENT_NOT_FLOAT
    assert h.err("INCREX", "k", "BYFLOAT", "nan") == INCREX_INCREMENT_NOT_FLOAT
    assert h.err("INCREX", "k", "BYFLOAT", "1e99999") == INCREX_INCREMENT_NOT_FLOAT
    assert h.err("INCREX", "k", "BYFLOAT", "+inf") == INCREX_INCREMENT_INFINITY
    assert h.err("INCREX", "k", "BYFLOAT", "-inf") == INCREX_INCREMENT_INFINITY
    assert h.err("INCREX", "k", "UBOUND", "12.5") == b"ERR UBOUND is not an integer or out of range"
    assert h.err("INCREX", "k", "LBOUND", "abc") == b"ERR LBOUND is not an integer or out of range"
    assert h.err("INCREX", "k", "BYFLOAT", 1, "UBOUND", "abc") == b"ERR UBOUND is not a valid float"
    assert h.err("INCREX", "k", "BYFLOAT", 1, "LBOUND", "x") == b"ERR LBOUND is not a valid float"
    assert h.err("INCREX", "k", "BYINT", 1, "LBOUND", 10, "UBOUND", 5) == INCREX_BOUNDS_CROSSED
    assert h.err("INCREX", "k", "BYFLOAT", "0.5", "LBOUND", "10.5", "UBOUND", "1.5") == \
        INCREX_BOUNDS_CROSSED
    for argv in (["EX", 0], ["PX", 0], ["EX", -1], ["EXAT", 0], ["PXAT", -5]):
        assert h.err("INCREX", "k", *argv) == b"ERR invalid expire time in 'increx' command"
    assert h.err("INCREX", "k", "EX", "ten") == NOT_INTEGER
    assert h.err("INCREX", "l") == WRONGTYPE
    assert h.err("INCREX", "l", "BYFLOAT", "1.5") == WRONGTYPE
    assert h.err("INCREX", "s", "BYINT", 1) == NOT_INTEGER
    assert h.err("INCREX", "s", "BYFLOAT", "1.5") == NOT_A_FLOAT
    assert h.err("INCREX", "inf", "BYFLOAT", "1") == INCREX_VALUE_INFINITY
    assert h.err("INCREX", "inf") == NOT_INTEGER
    assert h.err("INCREX") == b"ERR wrong number of arguments for 'increx' command"
    assert h.ok("GET", "k") == b"1" and h.ok("GET", "inf") == b"inf"
    assert h.take_effects() == [[b"RPUSH", b"l", b"a"]]


def test_expiry_options_and_their_propagation():
    h = fresh(k=10)
    at = str(NOW + 100_000).encode()
    assert h.ok("INCREX", "k", "BYINT", 1, "EX", 100) == [11, 1]
    assert h.ok("PTTL", "k") == 100_000
    assert h.ok("INCREX", "k", "PX", 50_000) == [12, 1]
    assert h.ok("PTTL", "k") == 50_000
    assert h.ok("INCREX", "k", "EXAT", NOW // 1000 + 100) == [13, 1]
    assert h.ok("INCREX", "k", "PXAT", NOW + 100_000) == [14, 1]
    assert h.ok("PTTL", "k") == 100_000
    # no option: the TTL stays
    assert h.ok("INCREX", "k", "BYFLOAT", "0.5") == [DoubleText(b"14.5"), DoubleText(b"0.5")]
    assert h.ok("PTTL", "k") == 100_000
    # ENX: the key has a TTL, so it keeps it
    assert h.ok("INCREX", "k", "BYFLOAT", "0.5", "EX", 10, "ENX") == [
        DoubleText(b"15"), DoubleText(b"0.5")]
    assert h.ok("PTTL", "k") == 100_000
    assert h.take_effects() == [
        [b"SET", b"k", b"11", b"PXAT", at],
        [b"SET", b"k", b"12", b"PXAT", str(NOW + 50_000).encode()],
        [b"SET", b"k", b"13", b"PXAT", at],
        [b"SET", b"k", b"14", b"PXAT", at],
        [b"SET", b"k", b"14.5", b"KEEPTTL"],
        [b"SET", b"k", b"15", b"KEEPTTL"],
    ]


def test_persist_and_enx():
    h = fresh(k=5)
    h.ok("EXPIRE", "k", 1000)
    h.take_effects()
    assert h.ok("INCREX", "k", "BYINT", 1, "PERSIST") == [6, 1]
    assert h.ok("TTL", "k") == -1
    assert h.ok("INCREX", "k", "BYINT", 1, "PERSIST") == [7, 1]  # none to remove
    assert h.ok("INCREX", "k", "BYINT", 1, "EX", 100, "ENX") == [8, 1]  # none: ENX sets it
    assert h.ok("TTL", "k") == 100
    assert h.ok("INCREX", "n", "BYINT", 5, "EX", 100, "ENX") == [5, 5]
    assert h.ok("TTL", "n") == 100
    assert h.take_effects() == [
        [b"SET", b"k", b"6"], [b"SET", b"k", b"7"],
        [b"SET", b"k", b"8", b"PXAT", str(NOW + 100_000).encode()],
        [b"SET", b"n", b"5", b"PXAT", str(NOW + 100_000).encode()],
    ]


def test_a_skipped_step_leaves_the_ttl():
    h = fresh(k=10)
    assert h.ok("INCREX", "k", "BYINT", 100, "UBOUND", 15, "EX", 100) == [10, 0]
    assert h.ok("TTL", "k") == -1
    h.ok("EXPIRE", "k", 500)
    assert h.ok("INCREX", "k", "BYINT", 100, "UBOUND", 15, "PERSIST") == [10, 0]
    assert h.ok("TTL", "k") == 500
    assert h.ok("INCREX", "k", "BYINT", 100, "UBOUND", 15, "SATURATE", "EX", 200) == [15, 5]
    assert h.ok("TTL", "k") == 200


def test_a_deadline_already_past_deletes_the_key():
    h = fresh(k=10)
    assert h.ok("INCREX", "k", "BYINT", 1, "EXAT", 1) == [11, 1]
    assert h.ok("EXISTS", "k") == 0
    h.ok("SET", "k", 10)
    h.take_effects()
    assert h.ok("INCREX", "k", "PXAT", 1) == [11, 1]
    assert h.ok("EXISTS", "k") == 0
    assert h.take_effects() == [[b"DEL", b"k"]]
    # a missing key is not created, and nothing goes out
    assert h.ok("INCREX", "k", "EXAT", 1) == [1, 1]
    assert h.ok("EXISTS", "k") == 0
    assert h.take_effects() == []
    # ENX on a key with a TTL: the past deadline is not applied
    h.ok("SET", "k", 10, "EX", 500)
    h.take_effects()
    assert h.ok("INCREX", "k", "BYINT", 1, "EXAT", 1, "ENX") == [11, 1]
    assert h.ok("GET", "k") == b"11" and h.ok("TTL", "k") == 500
    assert h.take_effects() == [[b"SET", b"k", b"11", b"KEEPTTL"]]


def test_saturated_value_is_what_goes_out():
    h = fresh(k=50, f=10)
    h.ok("INCREX", "k", "BYINT", 100, "UBOUND", 80, "SATURATE")
    h.ok("INCREX", "f", "BYFLOAT", 100, "UBOUND", "42.5", "SATURATE")
    h.ok("INCREX", "new", "BYINT", 7)
    assert h.take_effects() == [[b"SET", b"k", b"80", b"KEEPTTL"],
                                [b"SET", b"f", b"42.5", b"KEEPTTL"],
                                [b"SET", b"new", b"7", b"KEEPTTL"]]


def test_keyspace_events():
    w = World()
    w.run("INCREX", "k", "BYINT", "5")
    assert w.events() == [(b"incrby", b"k")]
    w.run("INCREX", "k", "BYFLOAT", "0.5")
    assert w.events() == [(b"incrbyfloat", b"k")]
    w.run("SET", "k", "10", "EX", "100")
    w.events()
    w.run("INCREX", "k", "BYINT", "1", "PERSIST")
    assert w.events() == [(b"incrby", b"k"), (b"persist", b"k")]
    w.run("INCREX", "k", "PERSIST")
    assert w.events() == [(b"incrby", b"k")]
    w.run("INCREX", "k", "BYINT", "1", "EX", "100")
    assert w.events() == [(b"incrby", b"k"), (b"expire", b"k")]
    w.run("INCREX", "k", "BYINT", "1", "EX", "200", "ENX")
    assert w.events() == [(b"incrby", b"k")]
    w.run("INCREX", "k", "BYINT", "1", "UBOUND", "0")  # skipped: nothing
    assert w.events() == []
    w.run("SET", "k", "10")
    w.events()
    w.run("INCREX", "k", "BYINT", "1", "EXAT", "1")
    assert w.events() == [(b"del", b"k")]


def test_command_info():
    h = fresh()
    info = h.ok("COMMAND", "INFO", "increx")[0]
    assert info[:6] == [b"increx", -2, info[2], 1, 1, 1]
    assert {f.text for f in info[2].items} == {b"write", b"denyoom", b"fast"}
    assert [c.text for c in info[6].items] == [b"@write", b"@string", b"@fast"]


def test_from_a_script_in_both_protocols():
    """A script sees BYFLOAT's numbers as strings (RESP2) or doubles (RESP3,
    after redis.setresp(3)), as it sees any reply of those types."""
    h = fresh(f="1.5")
    script = "return redis.call('INCREX', KEYS[1], 'BYFLOAT', '0.25')"
    assert h.ok("EVAL", script, 1, "f") == [b"1.75", b"0.25"]
    script3 = ("redis.setresp(3); local r = redis.call('INCREX', KEYS[1], 'BYFLOAT', '0.25');"
               " return {r[1]['double'] * 100, r[2]['double'] * 100}")
    assert h.ok("EVAL", script3, 1, "f") == [200, 25]
    assert h.ok("EVAL", "return redis.call('INCREX', KEYS[1], 'BYINT', 3)", 1, "i") == [3, 3]
    assert h.take_effects()[-1] == [b"SET", b"i", b"3", b"KEEPTTL"]


def test_acl_category():
    h = fresh()
    assert b"increx" in h.ok("ACL", "CAT", "string")
    assert b"increx" in h.ok("ACL", "CAT", "fast")
