"""The x87 long double emulation behind INCRBYFLOAT (tidelog.types.longdouble).

Redis's own results are checked against redis-server in
tests/differential/test_strings_diff.py; here: the format's limits, its
rounding, and the %.17Lf text on known values."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tidelog.types import longdouble as ld
from tidelog.types.longdouble import INF, add, format_human, parse, round_to_format

MAX_FINITE = (2**64 - 1) * Fraction(2) ** (16383 - 63)
MIN_SUBNORMAL = Fraction(1, 2**16445)


def incr(start: str, by: str) -> str:
    total = add(parse(start.encode()), parse(by.encode()))
    assert total is not None
    return format_human(total).decode()


@pytest.mark.parametrize(("start", "by", "expected"), [
    ("10.5", "0.1", "10.6"),          # the 64-bit mantissa hides 0.1's error at 17 digits
    ("0", "0.1", "0.1"),
    ("5.0e3", "2.0e2", "5200"),
    ("1", "1", "2"),
    ("-1", "1", "0"),
    ("0", "-0.000000000000000001", "0"),       # "-0.00000000000000000" -> "0"
    ("0", "-0.000000000000000005", "0"),       # the long double is just under 5e-18
    ("0", "-0.000000000000000006", "-0.00000000000000001"),
    ("0", "0.3", "0.3"),
    ("1.1", "2.2", "3.3"),
    ("0", "1e20", "100000000000000000000"),
    ("3.0e3", "-1.5e3", "1500"),
    ("0", "0x1p-1", "0.5"),
    ("17179869184", "1.5", "17179869185.5"),
])
def test_known_results(start, by, expected):
    assert incr(start, by) == expected


def test_format_rounds_the_17th_decimal_half_to_even():
    assert format_human(Fraction(5, 10**18)) == b"0"             # tie: 0 is even
    assert format_human(Fraction(15, 10**18)) == b"0.00000000000000002"
    assert format_human(Fraction(25, 10**18)) == b"0.00000000000000002"
    assert format_human(Fraction(-15, 10**18)) == b"-0.00000000000000002"
    assert format_human(Fraction(7, 2)) == b"3.5"
    assert format_human(Fraction(0)) == b"0"


def test_format_of_huge_values_has_every_digit():
    text = format_human(MAX_FINITE)
    assert len(text) == 4933 and text.startswith(b"11897314953572317650")
    assert ld._int_from_decimal(text) == MAX_FINITE


@pytest.mark.parametrize("text", [
    b"", b" 1", b"1 ", b"\t1", b"1e", b".", b"e5", b"+-1", b"0x", b"0x1p", b"nan", b"-NaN",
    b"nan(1)", b"infin", b"1\x00", b"\x00", b"1e5000", b"-1e5000", b"1e-5000", b"0x1p16384",
    b"0x1p-16446", b"1" * 5120, b"1,5", b"1_000",
])
def test_refused_texts(text):
    assert parse(text) is None


@pytest.mark.parametrize(("text", "value"), [
    (b"0", 0), (b"-0", 0), (b"+.5", Fraction(1, 2)), (b"5.", 5), (b"1e3", 1000),
    (b"1E+3", 1000), (b"0x10", 16), (b"0X1.8P1", 3), (b"0x.8", Fraction(1, 2)),
    (b"0e99999999999999999999", 0), (b"00012", 12),
])
def test_parsed_values(text, value):
    assert parse(text) == value


def test_the_longest_accepted_text():
    # 5119 digits (Python's int() takes at most 4300 at once) round to 64 bits
    value = ld._int_from_decimal(b"1" * 5119)
    assert value == int("1" * 4000) * 10**1119 + int("1" * 1119)
    assert parse(b"1" * 5119) is None  # 1.1e5118 is past the largest long double
    text = b"0." + b"1" * 5117
    assert parse(text) == round_to_format(Fraction(ld._int_from_decimal(b"1" * 5117), 10**5117))
    assert format_human(parse(text)) == b"0.11111111111111111"


def test_infinity_is_parsed_but_never_summed():
    assert parse(b"inf") == INF and parse(b"-Infinity") == -INF and parse(b"INF") == INF
    assert add(INF, Fraction(1)) is None
    assert add(Fraction(1), -INF) is None


def test_format_limits():
    assert round_to_format(MAX_FINITE) == MAX_FINITE
    # half an ulp above the largest finite value rounds to even: infinity
    ulp = Fraction(2) ** (16383 - 63)
    assert round_to_format(MAX_FINITE + ulp / 2) == INF
    assert round_to_format(MAX_FINITE + ulp / 2 - Fraction(1, 10**9)) == MAX_FINITE
    assert round_to_format(-MAX_FINITE * 2) == -INF
    assert add(MAX_FINITE, MAX_FINITE) is None
    assert add(MAX_FINITE, -MAX_FINITE) == 0
    # gradual underflow: the smallest subnormal, and ties to even below it
    assert round_to_format(MIN_SUBNORMAL) == MIN_SUBNORMAL
    assert round_to_format(MIN_SUBNORMAL / 2) == 0
    assert round_to_format(MIN_SUBNORMAL * 3 / 2) == 2 * MIN_SUBNORMAL
    assert parse(b"0x1p-16445") == MIN_SUBNORMAL
    assert parse(b"1e-4940") is not None


def test_64_bit_mantissa_rounding():
    one = Fraction(1)
    assert round_to_format(one + Fraction(1, 2**63)) == one + Fraction(1, 2**63)
    assert round_to_format(one + Fraction(1, 2**64)) == one               # tie to even
    assert round_to_format(one + Fraction(3, 2**64)) == one + Fraction(2, 2**63)
    assert round_to_format(Fraction(2**64 + 1)) == 2**64                  # tie to even
    assert round_to_format(Fraction(2**64 + 3)) == 2**64 + 4


@settings(max_examples=300)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_doubles_are_exact_long_doubles(x):
    assert round_to_format(Fraction(x)) == Fraction(x)
    assert parse(repr(x).encode()) == round_to_format(Fraction(repr(x)))


@settings(max_examples=300)
@given(st.integers(-(2**200), 2**200), st.integers(-300, 300))
def test_rounded_values_fit_the_format(mantissa, exponent):
    value = Fraction(mantissa) * Fraction(2) ** exponent
    rounded = round_to_format(value)
    assert rounded == round_to_format(rounded)         # idempotent
    if value:
        n = abs(rounded)
        e = n.numerator.bit_length() - n.denominator.bit_length()
        assert (n / Fraction(2) ** (e - 70)).denominator == 1   # at most 64 significant bits
        assert abs(rounded - value) <= abs(value) / 2**64


def test_chunked_decimal_conversions():
    n = 7 * 10**4500 + 123
    assert ld._decimal_text(n) == str(7) + "0" * 4497 + "123"
    assert ld._int_from_decimal(ld._decimal_text(n).encode()) == n
