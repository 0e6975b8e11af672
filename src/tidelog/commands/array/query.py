"""ARSCAN, ARGREP and AROP: an array's elements walked, searched (EXACT,
MATCH, GLOB, RE predicates) and folded (SUM, MIN, MAX, AND, OR, XOR, MATCH,
USED) over a range of indexes.  They change nothing."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ... import errors
from ...errors import SYNTAX, WRONGTYPE, CommandError, wrong_arity
from ...glob import glob_match
from ...types import longdouble
from ...types.array import TAG_FLOAT, Array, canonical_int, value_tag
from ..args import ArgReader, parse_int
from ..key_specs import ks
from ..lookup import lookup_read
from ..table import command
from .common import GREP_MAX_PREDICATES, GREP_MAX_RE_LEN, I64_MAX, I64_MIN, parse_index, read_array

if TYPE_CHECKING:
    from ..contract import Ctx


# -- ARSCAN, ARGREP, AROP ----------------------------------------------------------------
def _positive_limit(arg: bytes) -> int:
    limit = parse_int(arg)
    if limit <= 0:
        raise CommandError(errors.ARRAY_LIMIT_NOT_POSITIVE)
    return limit


@command("arscan", arity=-4, flags="readonly", keys=(1, 1, 1), group="array", since="8.8.0",
         complexity="O(N) where N is the number of existing elements in the range",
         summary="Returns the existing elements in a range as index-value pairs.",
         key_specs=[ks("RO ACCESS", 1)])
def arscan(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARSCAN key start end [LIMIT count]

    O(log N + K) for the K values returned: holes cost nothing."""
    start = parse_index(argv[2])
    end = parse_index(argv[3])
    limit = None
    if len(argv) == 6:
        if argv[4].upper() != b"LIMIT":
            raise CommandError(SYNTAX)
        limit = _positive_limit(argv[5])
    elif len(argv) != 4:
        raise wrong_arity(argv[0])
    ar = read_array(ctx, argv[1])
    if ar is None:
        return []
    out = []
    for idx, value in ar.scan(start, end):
        out.append([idx, value])
        if limit is not None and len(out) == limit:
            break
    return out


_PREDICATES = (b"EXACT", b"MATCH", b"GLOB", b"RE")
_BACKREF = re.compile(rb"\\[1-9]")


# POSIX bracket classes (TRE has them, Python's re does not), as ranges.
_POSIX_CLASSES = {
    b"[:alpha:]": b"A-Za-z", b"[:digit:]": b"0-9", b"[:alnum:]": b"A-Za-z0-9",
    b"[:upper:]": b"A-Z", b"[:lower:]": b"a-z", b"[:space:]": b" \\t\\n\\r\\f\\v",
    b"[:xdigit:]": b"0-9A-Fa-f", b"[:punct:]": rb"!-/:-@\[-`{-~", b"[:blank:]": b" \\t",
    b"[:cntrl:]": b"\\x00-\\x1f\\x7f", b"[:print:]": b" -~", b"[:graph:]": b"!-~",
}


def _posix_to_python(pattern: bytes) -> bytes:
    for name, ranges in _POSIX_CLASSES.items():
        pattern = pattern.replace(name, ranges)
    return pattern


# Python's reasons for a bad expression, as TRE's regerror words them.
_TRE_MESSAGES = (
    ("missing ), unterminated subpattern", b"Missing ')'"),
    ("unbalanced parenthesis", b"Missing ')'"),
    ("unterminated character set", b"Missing ']'"),
    ("nothing to repeat", b"Invalid use of repetition operators"),
    ("multiple repeat", b"Invalid use of repetition operators"),
    ("bad character range", b"Invalid character range"),
    ("bad escape (end of pattern)", b"Trailing backslash"),
    ("min repeat greater than max repeat", b"Invalid contents of {}"),
    ("invalid group reference", b"Invalid back reference"),
)


def _tre_message(exc: Exception) -> bytes:
    text = str(exc)
    for python, tre in _TRE_MESSAGES:
        if text.startswith(python):
            return tre
    return b"Invalid regexp"


def _grep_bound(arg: bytes) -> int | str:
    if arg == b"-":
        return "start"
    if arg == b"+":
        return "end"
    return parse_index(arg)


def _lower(data: bytes) -> bytes:
    return data.lower()  # bytes.lower changes ASCII letters only, as Redis's does


def _compile_predicates(preds: list[tuple[bytes, bytes]], nocase: bool) -> list[Any]:
    """Each predicate as a test of one value (bytes -> bool)."""
    tests: list[Any] = []
    for kind, pattern in preds:
        if kind == b"EXACT":
            if nocase:
                low = _lower(pattern)
                tests.append(lambda v, p=low: _lower(v) == p)
            else:
                tests.append(lambda v, p=pattern: v == p)
        elif kind == b"MATCH":
            if nocase:
                low = _lower(pattern)
                tests.append(lambda v, p=low: p in _lower(v))
            else:
                tests.append(lambda v, p=pattern: p in v)
        elif kind == b"GLOB":
            tests.append(lambda v, p=pattern, n=nocase: glob_match(p, v, n))
        else:
            if not pattern:
                raise CommandError(errors.ARRAY_RE_EMPTY)
            try:
                regex = re.compile(_posix_to_python(pattern), re.IGNORECASE if nocase else 0)
            except (re.error, OverflowError, RecursionError) as exc:
                raise CommandError(errors.ARRAY_RE_INVALID % _tre_message(exc)) from None
            if _BACKREF.search(pattern):
                raise CommandError(errors.ARRAY_RE_BACKREFS)
            tests.append(lambda v, r=regex: r.search(v) is not None)
    return tests


@command("argrep", arity=-6, flags="readonly", keys=(1, 1, 1), group="array", since="8.8.0",
         complexity="O(P * C) where P is the number of visited positions in touched slices "
                    "and C is the cost of evaluating the predicates on one existing element.",
         summary="Searches array elements in a range using textual predicates.",
         key_specs=[ks("RO ACCESS", 1)])
def argrep(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARGREP key start end (EXACT string | MATCH string | GLOB pattern | RE pattern) ...
    [AND | OR] [LIMIT count] [WITHVALUES] [NOCASE]

    O(log N + K * C) for the K values visited in the range and C the cost
    of the predicates; LIMIT stops at that many matches."""
    start_bound = _grep_bound(argv[2])
    end_bound = _grep_bound(argv[3])
    preds: list[tuple[bytes, bytes]] = []
    limit = None
    withvalues = nocase = use_and = False
    r = ArgReader(argv, start=4)
    while r.more():
        token = r.next_upper()
        if token in _PREDICATES:
            if not r.more():
                raise CommandError(SYNTAX)
            if len(preds) >= GREP_MAX_PREDICATES:
                raise CommandError(errors.ARRAY_TOO_MANY_PREDICATES)
            pattern = r.next_bytes()
            if token == b"RE" and len(pattern) > GREP_MAX_RE_LEN:
                raise CommandError(errors.ARRAY_RE_TOO_LONG)
            preds.append((token, pattern))
        elif token == b"LIMIT":
            limit = _positive_limit(r.next_bytes())
        elif token == b"WITHVALUES":
            withvalues = True
        elif token == b"NOCASE":
            nocase = True
        elif token in (b"AND", b"OR"):
            use_and = token == b"AND"
        else:
            raise CommandError(SYNTAX)
    if not preds:
        raise CommandError(SYNTAX)
    tests = _compile_predicates(preds, nocase)
    ar = read_array(ctx, argv[1])
    if ar is None or not ar:
        return []
    top = ar.length - 1

    def resolve(bound: int | str) -> int:
        return 0 if bound == "start" else top if bound == "end" else bound  # type: ignore[return-value]

    out: list[Any] = []
    combine = all if use_and else any
    for idx, value in ar.scan(resolve(start_bound), resolve(end_bound)):
        if not combine(test(value) for test in tests):
            continue
        out.append([idx, value] if withvalues else idx)
        if limit is not None and len(out) == limit:
            break
    return out


_OPS = (b"SUM", b"MIN", b"MAX", b"AND", b"OR", b"XOR", b"MATCH", b"USED")


def _number(value: bytes) -> tuple[Fraction | float, int | None] | None:
    """A value as AROP reads it: (its long double, its int64 when it is
    one), or None when it is not a number."""
    ll = canonical_int(value)
    if ll is not None:
        return Fraction(ll), ll
    tag, inline = value_tag(value)
    if tag == TAG_FLOAT and inline is not None:  # the double, low two bits cleared
        return Fraction(inline), None
    ld = longdouble.parse(value)
    if ld is None:
        return None
    return ld, None


def format_ld_auto(value: Fraction | float) -> bytes:
    """A long double as Redis's ld2string(LD_STR_AUTO) prints it: C's
    ``%.17Lg`` (17 significant digits, trailing zeros dropped, an exponent
    below 1e-4 or from 1e17)."""
    if isinstance(value, float):  # infinite
        return b"inf" if value > 0 else b"-inf"
    if value == 0:
        return b"0"
    sign = "-" if value < 0 else ""
    v = abs(value)
    exp = _floor_log10(v)
    scaled = v / Fraction(10) ** (exp - 16) if exp >= 16 else v * Fraction(10) ** (16 - exp)
    digits = _round_half_even(scaled)
    if digits >= 10**17:  # rounding carried into one more digit
        exp += 1
        digits = _round_half_even(v / Fraction(10) ** (exp - 16) if exp >= 16
                                  else v * Fraction(10) ** (16 - exp))
    text = str(digits)
    if -4 <= exp < 17:
        if exp >= 0:
            whole, frac = text[:exp + 1], text[exp + 1:]
        else:
            whole, frac = "0", "0" * (-exp - 1) + text
        frac = frac.rstrip("0")
        return f"{sign}{whole}{'.' + frac if frac else ''}".encode()
    mantissa = text[0] + ("." + text[1:].rstrip("0") if text[1:].rstrip("0") else "")
    return f"{sign}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}".encode()


def _floor_log10(v: Fraction) -> int:
    exp = len(str(v.numerator)) - len(str(v.denominator))
    while Fraction(10) ** exp > v:
        exp -= 1
    while Fraction(10) ** (exp + 1) <= v:
        exp += 1
    return exp


def _round_half_even(v: Fraction) -> int:
    whole, rest = divmod(v.numerator, v.denominator)
    twice = 2 * rest
    if twice > v.denominator or (twice == v.denominator and whole % 2):
        whole += 1
    return whole


@command("arop", arity=-5, flags="readonly", keys=(1, 1, 1), group="array", since="8.8.0",
         complexity="O(N) where N is the number of existing elements in the range",
         summary="Aggregates the existing elements in a range.",
         key_specs=[ks("RO ACCESS", 1)])
def arop(ctx: Ctx, argv: list[bytes]) -> Any:
    """AROP key start end SUM|MIN|MAX|AND|OR|XOR|USED|MATCH value

    O(log N + K) for the K values in the range.  SUM, MIN and MAX skip
    values that are not numbers (null when none is); AND, OR and XOR take
    integers (floats truncated toward zero, skipped outside int64)."""
    start = parse_index(argv[2])
    end = parse_index(argv[3])
    op = argv[4].upper()
    if op not in _OPS:
        raise CommandError(errors.ARRAY_UNKNOWN_OP)
    if op == b"MATCH":
        if len(argv) != 6:
            raise CommandError(errors.ARRAY_MATCH_NEEDS_VALUE)
    elif len(argv) != 5:
        raise wrong_arity(argv[0])
    ar = lookup_read(ctx, argv[1])
    if ar is None:
        return 0 if op in (b"MATCH", b"USED") else None
    if type(ar) is not Array:
        raise CommandError(WRONGTYPE)
    scan = ar.scan(start, end)
    if op == b"USED":
        return sum(1 for _ in scan)
    if op == b"MATCH":
        target = argv[5]
        return sum(1 for _, value in scan if value == target)
    acc: Any = None
    for _, value in scan:
        parsed = _number(value)
        if parsed is None:
            continue
        num, ival = parsed
        if op in (b"AND", b"OR", b"XOR"):
            if ival is None:
                if isinstance(num, float) or not I64_MIN <= num <= I64_MAX:
                    continue
                ival = int(num)  # toward zero
            if acc is None:
                acc = ival
            elif op == b"AND":
                acc &= ival
            elif op == b"OR":
                acc |= ival
            else:
                acc ^= ival
        elif acc is None:
            acc = num
        elif op == b"SUM":
            total = longdouble.add(acc, num) if not isinstance(acc, float) \
                and not isinstance(num, float) else None
            acc = total if total is not None else acc + num
        elif op == b"MIN":
            acc = num if num < acc else acc
        else:
            acc = num if num > acc else acc
    if acc is None:
        return None
    if op in (b"AND", b"OR", b"XOR"):
        return acc
    return format_ld_auto(acc)
