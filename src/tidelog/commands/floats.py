"""Redis's float counters: INCRBYFLOAT and HINCRBYFLOAT arithmetic and text.

Redis reads both operands with C's ``strtold`` into a ``long double`` (on
x86-64 the 80-bit extended format: a 64-bit significand, exponents down to
subnormals at 2**-16445), adds them in that precision and prints the sum
with ``%.17Lf``, trailing zeros (and a trailing point) stripped, ``-0`` shown
as ``0``.  Python's float has 53 bits, so the sums would differ in the last
digits; here every value is an exact :class:`~fractions.Fraction` rounded to
the 80-bit format after each step (round half to even, as the FPU does), and
printed exactly, so the text is Redis's byte for byte.

Public helpers (shared by the hash and the string commands):

* :func:`parse_long_double` -- Redis's ``string2ld``: None when Redis
  refuses the text, ``INF``/``-INF`` for the infinities it accepts;
* :func:`add` -- the rounded sum (``INF``/``-INF`` on overflow);
* :func:`format_long_double` -- ``%.17Lf``, human form.

Costs: O(L) in the text's length for parsing (exact big-number arithmetic
on at most ~5000 digits), O(1) in practice for the sum and the text of
ordinary values; values near the format's limits (10**4932) cost more,
bounded by the digits printed.
"""

from __future__ import annotations

import re
from fractions import Fraction

INF = float("inf")
MAX_CHARS = 5 * 1024  # Redis's MAX_LONG_DOUBLE_CHARS: longer texts are refused

_MANT_BITS = 64
_MIN_EXP = -16382                      # smallest normal exponent
_TINY_EXP = _MIN_EXP - _MANT_BITS + 1  # -16445: the subnormal quantum
_OVERFLOW = Fraction(2) ** 16384       # the first value past the largest finite one

LongDouble = Fraction | float  # a float only for +-INF

_DECIMAL = re.compile(rb"([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?")
_HEX = re.compile(rb"([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?(?:[pP]([+-]?\d+))?")
_SPECIAL = re.compile(rb"([+-]?)(inf|infinity|nan(?:\([0-9A-Za-z_]*\))?)", re.IGNORECASE)
_SPACE = b" \t\n\v\f\r"


def _pow2(e: int) -> Fraction:
    return Fraction(1 << e) if e >= 0 else Fraction(1, 1 << -e)


def round_ld(x: Fraction) -> LongDouble:
    """``x`` rounded to the nearest 80-bit long double (ties to even);
    ``INF``/``-INF`` past the largest finite value.  O(size of x)."""
    if x == 0:
        return Fraction(0)
    negative = x < 0
    a = -x if negative else x
    n, d = a.numerator, a.denominator
    e = n.bit_length() - d.bit_length()
    if (n << max(0, -e)) < (d << max(0, e)):
        e -= 1                               # now 2**e <= a < 2**(e+1)
    q = max(e - _MANT_BITS + 1, _TINY_EXP)   # the quantum's exponent
    num, den = (n, d << q) if q >= 0 else (n << -q, d)
    m, r = divmod(num, den)
    if 2 * r > den or (2 * r == den and m & 1):
        m += 1
    result = m * _pow2(q)
    if result >= _OVERFLOW:
        return -INF if negative else INF
    return -result if negative else result


def parse_long_double(text: bytes) -> LongDouble | None:
    """Redis's ``string2ld``: the value of ``text`` as ``strtold`` reads it,
    or None when Redis refuses it (empty, longer than 5119 bytes, leading
    white space, anything left after the number, NaN, an overflow, or an
    underflow to zero).  Hex floats and ``inf``/``infinity`` are accepted,
    as by ``strtold``; the C string ends at the first NUL byte."""
    if not text or len(text) >= MAX_CHARS or text[0] in _SPACE:
        return None
    nul = text.find(b"\0")
    if nul >= 0:
        text = text[:nul]
        if not text:
            return Fraction(0)  # strtold read nothing and stopped at the NUL
    m = _SPECIAL.fullmatch(text)
    if m:
        if m.group(2)[:1] in b"nN":
            return None
        return -INF if m.group(1) == b"-" else INF
    m = _HEX.fullmatch(text)
    if m and (m.group(2) or m.group(3)):
        sign, whole, frac, exp = m.groups()
        frac = frac or b""
        mantissa = int((whole + frac).decode(), 16)
        exponent = int(exp or b"0") - 4 * len(frac)
        exact = _scaled(mantissa, exponent, 2)
    else:
        m = _DECIMAL.fullmatch(text)
        if not m or not (m.group(2) or m.group(3)):
            return None
        sign, whole, frac, exp = m.groups()
        frac = frac or b""
        mantissa = _decimal_int(whole + frac)
        exponent = int(exp or b"0") - len(frac)
        exact = _scaled(mantissa, exponent, 10)
    if exact is None:   # far past the format's range
        return None
    value = round_ld(exact)
    if isinstance(value, float) or (value == 0 and mantissa != 0):
        return None     # ERANGE: overflow, or an underflow to zero
    return -value if sign == b"-" else value


def _decimal_int(digits: bytes) -> int:
    """A run of decimal digits as an int, in pieces (Python refuses to read
    more than 4300 digits at once; a 5119-byte text may hold more)."""
    value = 0
    for at in range(0, len(digits), 1000):
        piece = digits[at:at + 1000]
        value = value * 10 ** len(piece) + int(piece)
    return value


def _decimal_text(n: int) -> str:
    """A non-negative int in decimal, in pieces (see :func:`_decimal_int`)."""
    if n < 10 ** 1000:
        return str(n)
    high, low = divmod(n, 10 ** 1000)
    return _decimal_text(high) + str(low).zfill(1000)


def _scaled(mantissa: int, exponent: int, base: int) -> Fraction | None:
    """``mantissa * base**exponent`` exactly; None when it is certainly
    beyond the long double range (overflow, or under half the smallest
    subnormal), which keeps huge exponents from being computed."""
    if mantissa == 0:
        return Fraction(0)
    magnitude = mantissa.bit_length() + exponent * (3.3219 if base == 10 else 1)
    if magnitude > 16400 or magnitude < -16500:
        return None
    if exponent >= 0:
        return Fraction(mantissa * base ** exponent)
    return Fraction(mantissa, base ** -exponent)


def add(a: LongDouble, b: LongDouble) -> LongDouble:
    """``a + b`` in long double precision.  Infinities follow IEEE rules
    (inf + -inf is NaN, returned as float nan)."""
    if isinstance(a, float):
        return a + b if isinstance(b, float) else a
    if isinstance(b, float):
        return b
    return round_ld(a + b)


def is_finite(x: LongDouble) -> bool:
    return not isinstance(x, float)


def format_long_double(x: Fraction) -> bytes:
    """``%.17Lf`` of a finite value, trailing zeros and point stripped,
    ``-0`` as ``0`` (Redis's ``ld2string`` in human mode)."""
    negative = x < 0
    scaled = round(abs(x) * 10 ** 17)  # exact, ties to even as glibc's printf
    whole, frac = divmod(scaled, 10 ** 17)
    text = f"{_decimal_text(whole)}.{frac:017d}".rstrip("0").rstrip(".")
    if negative and text != "0":
        text = "-" + text
    return text.encode()
