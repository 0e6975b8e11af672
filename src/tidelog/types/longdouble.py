"""The x87 80-bit ``long double`` that Redis's INCRBYFLOAT computes in,
emulated exactly with rationals.

Redis parses both operands with ``strtold``, adds them in ``long double``
(64-bit mantissa, 15-bit exponent, round to nearest, ties to even, gradual
underflow) and prints the sum with ``%.17Lf`` before dropping trailing zeros.
Floats of Python have 53 bits, so the arithmetic here is on
:class:`fractions.Fraction` values, rounded to the 80-bit format after
parsing and after the addition:

* :func:`parse` -- what Redis's ``string2ld`` accepts, as the exact value of
  the long double ``strtold`` returns (``None``: not a valid float);
* :func:`add` -- the rounded sum (``None``: infinite or NaN);
* :func:`format_human` -- the ``%.17Lf`` text without trailing zeros.

Infinity is the float ``inf`` (``strtold`` accepts ``inf``; any sum with it
is refused).  Costs: O(d^2) in the number of digits, at most a few thousand
(the largest long double has 4933 integer digits).
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

MANTISSA_BITS = 64                 # x87 extended: explicit 64-bit significand
MIN_EXP = -16382                   # exponent of the smallest normal number (2**MIN_EXP)
MAX_EXP = 16383                    # numbers below 2**(MAX_EXP + 1) are finite
MAX_CHARS = 5 * 1024               # Redis refuses longer strings (MAX_LONG_DOUBLE_CHARS)
HUMAN_DIGITS = 17                  # %.17Lf

INF = float("inf")
ZERO = Fraction(0)
# The largest finite long double (LDBL_MAX): 64 one bits at the top exponent.
MAX = Fraction(((1 << MANTISSA_BITS) - 1) << (MAX_EXP + 1 - MANTISSA_BITS))
LongDouble = Fraction | float      # a finite value, or +-inf

_DECIMAL = re.compile(rb"([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?")
_HEX = re.compile(rb"([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?(?:[pP]([+-]?\d+))?")
_INF = re.compile(rb"([+-]?)(?:inf|infinity)", re.IGNORECASE)
# Beyond these powers a value is surely infinite or zero in the 80-bit format.
_DECIMAL_EXP_LIMIT = 5000
_BINARY_EXP_LIMIT = 16600


def round_to_format(value: Fraction) -> LongDouble:
    """The long double nearest ``value`` (ties to even); +-inf on overflow.
    Integer arithmetic on the numerator and denominator: O(d^2) in digits."""
    num, den = value.numerator, value.denominator
    if num == 0:
        return ZERO
    negative = num < 0
    num = -num if negative else num
    # e with 2**e <= num/den < 2**(e+1)
    e = num.bit_length() - den.bit_length()
    if (num << -e if e < 0 else num) < (den << e if e > 0 else den):
        e -= 1
    shift = max(e, MIN_EXP) - (MANTISSA_BITS - 1)   # the quantum is 2**shift
    if shift >= 0:
        units, rest = divmod(num, den << shift)
        twice_rest, whole = rest << 1, den << shift
    else:
        units, rest = divmod(num << -shift, den)
        twice_rest, whole = rest << 1, den
    if twice_rest > whole or (twice_rest == whole and units & 1):
        units += 1                                   # to nearest, ties to even
    if units.bit_length() + shift > MAX_EXP + 1:
        return -INF if negative else INF
    if negative:
        units = -units
    return Fraction(units << shift) if shift >= 0 else Fraction(units, 1 << -shift)


@lru_cache(maxsize=512)
def _pow2(e: int) -> Fraction:
    return Fraction(2**e) if e >= 0 else Fraction(1, 2**-e)


def parse(text: bytes) -> LongDouble | None:
    """The long double ``strtold`` makes of ``text``, or None when Redis
    refuses it: empty, too long, leading space, trailing garbage (a NUL
    byte included), NaN, or
    out of range (a finite number too large, or a non-zero one too small)."""
    if not text or len(text) >= MAX_CHARS:
        return None
    if b"\0" in text:
        return None                 # strtold would stop at it: not the whole string
    m = _INF.fullmatch(text)
    if m is not None:
        return -INF if m.group(1) == b"-" else INF
    m = _HEX.fullmatch(text)
    if m is not None:
        return _from_parts(m, 16)
    m = _DECIMAL.fullmatch(text)
    if m is not None:
        return _from_parts(m, 10)
    return None


def _from_parts(m: re.Match[bytes], base: int) -> LongDouble | None:
    sign, whole, frac, exp = m.group(1), m.group(2), m.group(3) or b"", m.group(4)
    if not whole and not frac:
        return None              # no digit: "." or "0x." (strtold stops before it)
    digits = (whole + frac).lstrip(b"0")
    exponent = int(exp) if exp is not None else 0
    if not digits:
        return Fraction(0)       # zero whatever the exponent (no range error)
    mantissa = int(digits, 16) if base == 16 else _int_from_decimal(digits)
    if base == 10:
        scale = exponent - len(frac)
        magnitude = scale + len(digits)      # value is about 10**magnitude
        if magnitude > _DECIMAL_EXP_LIMIT:
            return None
        if magnitude < -_DECIMAL_EXP_LIMIT:
            return None
        exact = mantissa * (Fraction(10) ** scale)
    else:
        scale = exponent - 4 * len(frac)
        magnitude = scale + 4 * len(digits)
        if magnitude > _BINARY_EXP_LIMIT or magnitude < -_BINARY_EXP_LIMIT:
            return None
        exact = mantissa * _pow2(scale)
    value = round_to_format(exact)
    if value == 0 or value in (INF, -INF):
        return None              # ERANGE with zero or HUGE_VALL: refused
    return -value if sign == b"-" else value


def add(a: LongDouble, b: LongDouble) -> Fraction | None:
    """``a + b`` rounded to the format; None when infinite or NaN."""
    if isinstance(a, float) or isinstance(b, float):
        return None
    total = round_to_format(a + b)
    if isinstance(total, float):
        return None
    return total


def format_human(value: Fraction) -> bytes:
    """``%.17Lf`` of ``value`` (rounded to 17 decimals, ties to even), trailing
    zeros and a bare point dropped, ``-0`` written ``0``."""
    scaled = value * 10**HUMAN_DIGITS
    units = round(abs(scaled))          # ties to even, as glibc's printf
    whole, frac = divmod(units, 10**HUMAN_DIGITS)
    text = f"{_decimal_text(whole)}.{frac:0{HUMAN_DIGITS}d}".rstrip("0").rstrip(".")
    if value < 0 and text != "0":
        text = "-" + text
    return text.encode()


# Python refuses int <-> decimal text conversions past 4300 digits (a guard
# against quadratic costs); a long double has up to 4933 integer digits and
# its text up to 5119, so both conversions go by chunks.
_CHUNK = 4000
_CHUNK_POWER = 10**_CHUNK


def _int_from_decimal(digits: bytes) -> int:
    value = 0
    for i in range(0, len(digits), _CHUNK):
        chunk = digits[i:i + _CHUNK]
        value = value * 10**len(chunk) + int(chunk)
    return value


def _decimal_text(n: int) -> str:
    if n < _CHUNK_POWER:
        return str(n)
    high, low = divmod(n, _CHUNK_POWER)
    return _decimal_text(high) + str(low).zfill(_CHUNK)
