"""format_double: Redis 8's spelling of doubles (shortest round-trip digits
in "%.17g"'s layout; Redis 7.2 release notes, "reply with the shortest
representation of doubles")."""

import math
import random
import struct
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tidelog.resp.doubles import format_double


@pytest.mark.parametrize("value, text", [
    (0.0, b"0"), (-0.0, b"-0"), (1.0, b"1"), (-3.0, b"-3"), (1.5, b"1.5"), (0.25, b"0.25"),
    (1.1, b"1.1"), (0.1, b"0.1"), (0.3, b"0.3"), (1 / 3, b"0.3333333333333333"),
    (1e-4, b"0.0001"), (1e-5, b"1e-05"), (1.5e-7, b"1.5e-07"), (5e-324, b"5e-324"),
    (1e15, b"1000000000000000"), (1e16, b"10000000000000000"),
    (12345678901234568.0, b"12345678901234568"), (1e17, b"1e+17"), (1.5e17, b"1.5e+17"),
    (1e20, b"1e+20"), (1.7976931348623157e308, b"1.7976931348623157e+308"),
    (2.0 ** 53, b"9007199254740992"), (2.0 ** 53 + 2, b"9007199254740994"),
    (99278811491724110.0, b"99278811491724110"), (123.456, b"123.456"),
    (float("inf"), b"inf"), (float("-inf"), b"-inf"), (float("nan"), b"nan"),
])
def test_examples(value, text):
    assert format_double(value) == text


def _digits(text: str) -> str:
    return text.lstrip("-").split("e")[0].replace(".", "").strip("0")


def _check(x: float) -> None:
    ours = format_double(x).decode()
    assert float(ours) == x
    assert _digits(ours) == _digits(repr(x))  # the digits: shortest, as repr's
    # The layout is "%.17g"'s for the value those digits spell (whose decimal
    # exponent may be one above the 17-digit form's: 1e-06, not 9.99...e-07).
    d = Decimal(repr(x))
    exponent = d.adjusted()
    assert ("e" in ours) == (exponent < -4 or exponent >= 17)
    if "e" in ours:
        mantissa = _plain(d.scaleb(-exponent))
        assert ours == "%se%+03d" % (mantissa, exponent)
    else:
        assert ours == _plain(d)


def _plain(d: Decimal) -> str:
    text = format(d, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


@settings(max_examples=2000, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_layout_and_digits(x):
    if x != 0:
        _check(x)


def test_many_values():
    rng = random.Random(12)
    for _ in range(20000):
        x = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if math.isfinite(x) and x:
            _check(x)
        y = rng.uniform(-1, 1) * 10.0 ** rng.randint(-25, 25)
        if y:
            _check(y)
    for e in range(-30, 30):  # every layout boundary
        for x in (10.0 ** e, 10.0 ** e * 1.5, 10.0 ** e - 10.0 ** (e - 15)):
            _check(x)
            _check(-x)
