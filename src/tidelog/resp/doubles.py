"""Doubles as Redis 8 spells them in replies (``addReplyDouble``) and in
stored text (its ``d2string``): the shortest decimal digits that read back
as the same double (Redis 7.2+ uses fpconv_dtoa, a Grisu shortest form),
laid out as C's ``"%.17g"`` lays them out: plain notation while the decimal
exponent X of the first digit is in -4 <= X < 17, else ``d[.ddd]e±XX`` with
at least two exponent digits; no trailing zeros, no trailing point;
``inf``, ``-inf``, ``nan``, and ``-0`` for negative zero.

So 1.1 is ``1.1`` (Redis 7.0's plain "%.17g" gave ``1.1000000000000001``),
1e16 is ``10000000000000000`` (Python's repr says ``1e+16``) and 1e-5 is
``1e-05``.  Python's ``repr`` gives the shortest digits; only the layout is
redone here.  O(17).
"""

from __future__ import annotations

__all__ = ["format_double"]

_INF, _NINF = float("inf"), float("-inf")
_EXACT = 2.0 ** 53  # below this an integral double's shortest digits are all its digits


def format_double(x: float) -> bytes:
    """``x`` as Redis 8 replies it (see the module docstring)."""
    if x != x:
        return b"nan"
    if x == _INF:
        return b"inf"
    if x == _NINF:
        return b"-inf"
    if x.is_integer() and -_EXACT < x < _EXACT:  # every digit is needed
        if x == 0:
            return b"-0" if str(x)[0] == "-" else b"0"
        return b"%d" % x
    text = repr(x)
    negative = text[0] == "-"
    if negative:
        text = text[1:]
    mantissa, _, exp_text = text.partition("e")
    exponent = int(exp_text) if exp_text else 0
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    # the first significant digit's decimal exponent
    if whole.strip("0"):
        first = len(whole.lstrip("0")) - 1 + exponent
    else:
        first = -(len(frac) - len(frac.lstrip("0"))) - 1 + exponent
    digits = digits.rstrip("0") or "0"
    if first < -4 or first >= 17:
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        out = "%se%s%02d" % (body, "-" if first < 0 else "+", abs(first))
    elif first < 0:
        out = "0." + "0" * (-first - 1) + digits
    elif len(digits) > first + 1:
        out = digits[:first + 1] + "." + digits[first + 1:]
    else:
        out = digits + "0" * (first + 1 - len(digits))
    return ("-" + out if negative else out).encode()
