"""Arrays (Redis 8.8): ARSET, ARMSET, ARGET, ARMGET, ARINSERT, ARRING, ARSCAN,
ARGREP, AROP, ARDEL, ARDELRANGE, ARCOUNT, ARLEN, ARNEXT, ARSEEK, ARLASTITEMS,
ARGETRANGE, ARINFO.

The value is :class:`~tidelog.types.array.Array`: a sparse map of indexes
(0 .. 2**64 - 2) to strings, with the insert cursor ARINSERT and ARRING
advance.  Every handler follows Redis's order of checks: the arguments
first (a bad index fails the whole command, before the key is looked at),
then the key's type.  An array emptied by ARDEL or ARDELRANGE is deleted
(``del`` follows the command's own event).

Propagation: every write propagates its own argv, as Redis does -- the
cursor is part of the value (it is in the RDB form), so ARINSERT and ARRING
replay to the same indexes on a replica or from the AOF.  A write that
changed nothing (ARDEL of holes, ARSEEK of a missing key) propagates nothing.

Indexes and lengths are unsigned 64-bit numbers: one above 2**63 - 1 (ARLEN
of an array reaching the last indexes) is encoded as a bulk string in RESP2
and a big number in RESP3, which clients read (hiredis refuses a larger
``:`` integer).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ... import errors
from ...config import NOTIFY_ARRAY, NOTIFY_GENERIC
from ...errors import SYNTAX, WRONGTYPE, CommandError, wrong_arity
from ...glob import glob_match
from ...resp.replies import Map
from ...types import longdouble
from ...types.array import _U64_MAX, INDEX_MAX, TAG_FLOAT, Array, canonical_int, value_tag
from ..args import parse_int
from ..key_specs import COMMAND_EXTRAS, KeySpec
from ..lookup import lookup_read
from ..table import command

if TYPE_CHECKING:
    from ..contract import Ctx

# ARGETRANGE's and ARLASTITEMS's fixed cap on a reply of positions.
MAX_REPLY_ITEMS = 1_000_000
GREP_MAX_PREDICATES = 250
GREP_MAX_RE_LEN = 2048

COMMAND_EXTRAS.update({
    name: ((), [KeySpec(tuple(flags.split()), 1, 0)]) for name, flags in (
        ("arset", "RW UPDATE"), ("armset", "RW UPDATE"), ("arget", "RO ACCESS"),
        ("armget", "RO ACCESS"), ("arinsert", "RW UPDATE"), ("arring", "RW UPDATE"),
        ("arscan", "RO ACCESS"), ("argrep", "RO ACCESS"), ("arop", "RO ACCESS"),
        ("ardel", "RW DELETE"), ("ardelrange", "RW DELETE"), ("arcount", "RO"),
        ("arlen", "RO"), ("arnext", "RO"), ("arseek", "RW UPDATE"),
        ("arlastitems", "RO ACCESS"), ("argetrange", "RO ACCESS"), ("arinfo", "RO"),
    )
})

_SPACE = b" \t\n\v\f\r"
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1


def parse_index(arg: bytes, allow_max: bool = False) -> int:
    """An array index as Redis reads it (string2ull: a canonical integer,
    else what C's strtoull takes whole -- leading blanks, a sign, leading
    zeros, a negative wrapping modulo 2**64); 2**64 - 1 only when
    ``allow_max`` (ARSEEK).  ``ERR invalid array index`` otherwise."""
    text = arg.split(b"\0", 1)[0]  # C reads up to the first NUL
    value = canonical_int(text)
    if value is None:
        value = _strtoull(text)
    if value is None or value < 0 or (value == _U64_MAX and not allow_max):
        raise CommandError(errors.ARRAY_INVALID_INDEX)
    return value


def _strtoull(s: bytes) -> int | None:
    body = s.lstrip(_SPACE)
    negative = body[:1] == b"-"
    if body[:1] in (b"-", b"+"):
        body = body[1:]
    if not body or not body.isdigit() or not body.isascii():
        return None
    value = int(body)
    if value > _U64_MAX:
        return None
    return (-value) % (1 << 64) if negative else value


def _read(ctx: Ctx, key: bytes) -> Array | None:
    value = lookup_read(ctx, key)
    if value is None or type(value) is Array:
        return value
    raise CommandError(WRONGTYPE)


def _write(ctx: Ctx, key: bytes) -> Array | None:
    return ctx.db.get_typed(key, Array)


def new_array(ctx: Ctx) -> Array:
    """An empty array with the slice settings in force (array-slice-size,
    array-sparse-kmax, array-sparse-kmin)."""
    config = ctx.config
    return Array(config["array-slice-size"], config["array-sparse-kmax"],
                 config["array-sparse-kmin"])


def _write_or_create(ctx: Ctx, key: bytes) -> Array:
    ar = ctx.db.get_typed(key, Array)
    if ar is None:
        ar = new_array(ctx)
        ctx.db.set(key, ar)
    return ar


def _written(ctx: Ctx, key: bytes, event: bytes, changes: int) -> None:
    ctx.modified(key, changes)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_ARRAY, event, key)


def _removed(ctx: Ctx, key: bytes, ar: Array, event: bytes, deleted: int) -> None:
    """After ARDEL / ARDELRANGE: the event, and the key goes with its last value."""
    if not deleted:
        return
    if not ar:
        ctx.db.delete(key)
    ctx.modified(key, deleted)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_ARRAY, event, key)
    if not ar:
        ctx.notify(NOTIFY_GENERIC, b"del", key)


# -- ARGET, ARMGET, ARSET, ARMSET ---------------------------------------------------
@command("arget", arity=3, flags="readonly fast", keys=(1, 1, 1), group="array", since="8.8.0",
         complexity="O(1)", summary="Gets the value at an index in an array.")
def arget(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARGET key index

    O(log N).  A hole or a missing key is a null."""
    ar = _read(ctx, argv[1])
    idx = parse_index(argv[2])
    return None if ar is None else ar.get(idx)


@command("armget", arity=-3, flags="readonly fast", keys=(1, 1, 1), group="array",
         since="8.8.0", complexity="O(N) where N is the number of indices",
         summary="Gets the values at multiple indices in an array.")
def armget(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARMGET key index [index ...]

    O(M log N) for M indexes; every index is checked first."""
    ar = _read(ctx, argv[1])
    indexes = [parse_index(arg) for arg in argv[2:]]
    if ar is None:
        return [None] * len(indexes)
    get = ar.values.get
    return [get(idx) for idx in indexes]


@command("arset", arity=-4, flags="write denyoom fast", keys=(1, 1, 1), group="array",
         since="8.8.0", complexity="O(N) where N is the number of values",
         summary="Sets one or more contiguous values starting at an index in an array.")
def arset(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARSET key index value [value ...]

    O(M log N) for M values.  The number of positions that were empty."""
    start = parse_index(argv[2])
    values = argv[3:]
    if start + len(values) - 1 > INDEX_MAX:
        raise CommandError(errors.ARRAY_INDEX_OVERFLOW)
    key = argv[1]
    ar = _write_or_create(ctx, key)
    if len(values) > 1:
        ar.reserve(start, start + len(values) - 1)
    added = 0
    for offset, value in enumerate(values):
        added += ar.set(start + offset, value)
    _written(ctx, key, b"arset", len(values))
    return added


@command("armset", arity=-4, flags="write denyoom fast", keys=(1, 1, 1), group="array",
         since="8.8.0", complexity="O(N) where N is the number of pairs",
         summary="Sets multiple index-value pairs in an array.")
def armset(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARMSET key index value [index value ...]

    O(M log N) for M pairs.  The number of positions that were empty."""
    if len(argv) % 2:
        raise wrong_arity(argv[0])
    pairs = [(parse_index(argv[i]), argv[i + 1]) for i in range(2, len(argv), 2)]
    key = argv[1]
    ar = _write_or_create(ctx, key)
    added = 0
    for idx, value in pairs:
        added += ar.set(idx, value)
    _written(ctx, key, b"armset", len(pairs))
    return added


# -- ARDEL, ARDELRANGE ---------------------------------------------------------------
@command("ardel", arity=-3, flags="write fast", keys=(1, 1, 1), group="array", since="8.8.0",
         complexity="O(N) where N is the number of indices to delete",
         summary="Deletes elements at the specified indices in an array.")
def ardel(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARDEL key index [index ...]

    O(M log N) for M indexes.  The number of values removed."""
    indexes = [parse_index(arg) for arg in argv[2:]]
    key = argv[1]
    ar = _write(ctx, key)
    if ar is None:
        return 0
    deleted = sum(ar.delete(idx) for idx in indexes)
    _removed(ctx, key, ar, b"ardel", deleted)
    return deleted


@command("ardelrange", arity=-4, flags="write", keys=(1, 1, 1), group="array", since="8.8.0",
         complexity="Proportional to the number of existing elements in the ranges",
         summary="Deletes elements in one or more ranges.")
def ardelrange(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARDELRANGE key start end [start end ...]

    O(R log N + K) for R ranges and K values removed, whatever the span."""
    if len(argv) % 2:
        raise wrong_arity(argv[0])
    ranges = [(parse_index(argv[i]), parse_index(argv[i + 1])) for i in range(2, len(argv), 2)]
    key = argv[1]
    ar = _write(ctx, key)
    if ar is None:
        return 0
    deleted = 0
    for a, b in ranges:
        deleted += ar.delete_range(min(a, b), max(a, b))
    _removed(ctx, key, ar, b"ardelrange", deleted)
    return deleted


# -- ARLEN, ARCOUNT, ARGETRANGE -------------------------------------------------------
@command("arlen", arity=2, flags="readonly fast", keys=(1, 1, 1), group="array", since="8.8.0",
         complexity="O(1)", summary="Returns the length of an array (highest index plus one).")
def arlen(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARLEN key

    O(1): the highest index plus one, 0 for a missing key."""
    ar = _read(ctx, argv[1])
    return 0 if ar is None else ar.length


@command("arcount", arity=2, flags="readonly fast", keys=(1, 1, 1), group="array",
         since="8.8.0", complexity="O(1)",
         summary="Returns the number of non-empty elements in an array.")
def arcount(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARCOUNT key

    O(1): the number of values, 0 for a missing key."""
    ar = _read(ctx, argv[1])
    return 0 if ar is None else len(ar)


@command("argetrange", arity=4, flags="readonly", keys=(1, 1, 1), group="array",
         since="8.8.0", complexity="O(N) where N is the range length",
         summary="Gets values in a range of indices.")
def argetrange(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARGETRANGE key start end

    O(L) for the L positions of the range (at most 1,000,000), holes as
    nulls, descending when start > end."""
    start = parse_index(argv[2])
    end = parse_index(argv[3])
    ar = _read(ctx, argv[1])
    lo, hi = min(start, end), max(start, end)
    if hi - lo + 1 > MAX_REPLY_ITEMS:
        raise CommandError(errors.ARRAY_RANGE_TOO_BIG)
    if ar is None:
        return [None] * (hi - lo + 1)
    get = ar.values.get
    if start <= end:
        return [get(idx) for idx in range(lo, hi + 1)]
    return [get(idx) for idx in range(hi, lo - 1, -1)]


# -- ARSCAN, ARGREP, AROP ----------------------------------------------------------------
def _positive_limit(arg: bytes) -> int:
    limit = parse_int(arg)
    if limit <= 0:
        raise CommandError(errors.ARRAY_LIMIT_NOT_POSITIVE)
    return limit


@command("arscan", arity=-4, flags="readonly", keys=(1, 1, 1), group="array", since="8.8.0",
         complexity="O(N) where N is the number of existing elements in the range",
         summary="Returns the existing elements in a range as index-value pairs.")
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
    ar = _read(ctx, argv[1])
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
         summary="Searches array elements in a range using textual predicates.")
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
    i, n = 4, len(argv)
    while i < n:
        token = argv[i].upper()
        if token in _PREDICATES:
            if i + 1 >= n:
                raise CommandError(SYNTAX)
            if len(preds) >= GREP_MAX_PREDICATES:
                raise CommandError(errors.ARRAY_TOO_MANY_PREDICATES)
            if token == b"RE" and len(argv[i + 1]) > GREP_MAX_RE_LEN:
                raise CommandError(errors.ARRAY_RE_TOO_LONG)
            preds.append((token, argv[i + 1]))
            i += 2
        elif token == b"LIMIT":
            if i + 1 >= n:
                raise CommandError(SYNTAX)
            limit = _positive_limit(argv[i + 1])
            i += 2
        elif token == b"WITHVALUES":
            withvalues = True
            i += 1
        elif token == b"NOCASE":
            nocase = True
            i += 1
        elif token in (b"AND", b"OR"):
            use_and = token == b"AND"
            i += 1
        else:
            raise CommandError(SYNTAX)
    if not preds:
        raise CommandError(SYNTAX)
    tests = _compile_predicates(preds, nocase)
    ar = _read(ctx, argv[1])
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
    if tag == TAG_FLOAT:  # Redis holds it as the double, low two bits cleared
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
         summary="Aggregates the existing elements in a range.")
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
                if isinstance(num, float) or not _I64_MIN <= num <= _I64_MAX:
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


# -- ARINSERT, ARRING, ARNEXT, ARSEEK, ARLASTITEMS -------------------------------------
@command("arinsert", arity=-3, flags="write denyoom fast", keys=(1, 1, 1), group="array",
         since="8.8.0", complexity="O(N) where N is the number of values",
         summary="Appends values at the array insert cursor.")
def arinsert(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARINSERT key value [value ...]

    O(M log N) for M values; the index of the last one written."""
    key = argv[1]
    ar = _write(ctx, key)
    values = argv[2:]
    cursor = ar.insert_idx if ar is not None else None
    if cursor is None:
        start = 0
    elif cursor >= INDEX_MAX:
        raise CommandError(errors.ARRAY_INSERT_OVERFLOW)
    else:
        start = cursor + 1
    last = start + len(values) - 1
    if last > INDEX_MAX:
        raise CommandError(errors.ARRAY_INSERT_OVERFLOW)
    if ar is None:
        ar = _write_or_create(ctx, key)
    if len(values) > 1:
        ar.reserve(start, last)
    for offset, value in enumerate(values):
        ar.set(start + offset, value)
    ar.insert_idx = last
    _written(ctx, key, b"arinsert", len(values))
    return last


def _ring_rework(ar: Array, old_span: int, keep: int, fresh: Array) -> Array:
    """A fresh array holding the newest contiguous run (at most ``keep``)
    of the ring's positions, oldest at 0; the walk back from the cursor
    stops at the first hole."""
    anchor = old_span - 1 if ar.insert_idx is None else ar.insert_idx % old_span
    get = ar.values.get
    kept: list[bytes] = []
    src = anchor
    while len(kept) < keep:
        value = get(src)
        if value is None:
            break
        kept.append(value)
        src = old_span - 1 if src == 0 else src - 1
    for dst, value in enumerate(reversed(kept)):
        fresh.set(dst, value)
    if kept:
        fresh.insert_idx = len(kept) - 1
    return fresh


@command("arring", arity=-4, flags="write denyoom", keys=(1, 1, 1), group="array",
         since="8.8.0",
         complexity="O(M) where M is the number of values, O(N+M) when the ring is resized",
         summary="Writes values into a ring buffer of the given size.")
def arring(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARRING key size value [value ...]

    O(M log N) for M values; O((N + M) log N) when a change of size
    rebuilds the ring.  The index of the last value written."""
    size = parse_int(argv[2], errors.ARRAY_INVALID_SIZE)
    if size <= 0:
        raise CommandError(errors.ARRAY_SIZE_NOT_POSITIVE)
    key = argv[1]
    ar = _write_or_create(ctx, key)
    old_span = ar.length
    keep = 0
    if old_span:
        if size < old_span:
            keep = size
        elif size > old_span and ar.insert_idx is not None and ar.insert_idx + 1 < old_span:
            keep = old_span
    if keep:
        ar.adopt(_ring_rework(ar, old_span, keep, new_array(ctx)))
    cursor = 0
    for value in argv[3:]:
        cursor = 0 if ar.insert_idx is None else ar.insert_idx + 1
        if cursor >= size:
            cursor %= size
        ar.set(cursor, value)
        ar.insert_idx = cursor
    _written(ctx, key, b"arring", len(argv) - 3)
    return cursor


@command("arnext", arity=2, flags="readonly fast", keys=(1, 1, 1), group="array",
         since="8.8.0", complexity="O(1)",
         summary="Returns the next index ARINSERT / ARRING would use.")
def arnext(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARNEXT key

    O(1): 0 for a missing key or a reset cursor, null when the index
    space is used up."""
    ar = _read(ctx, argv[1])
    if ar is None or ar.insert_idx is None:
        return 0
    if ar.insert_idx == INDEX_MAX:
        return None
    return ar.insert_idx + 1


@command("arseek", arity=3, flags="write fast", keys=(1, 1, 1), group="array", since="8.8.0",
         complexity="O(1)", summary="Sets the ARINSERT / ARRING cursor to a specific index.")
def arseek(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARSEEK key index

    O(1): 1 when the cursor moved, 0 for a missing key.  Index 2**64 - 1
    is taken: it leaves the cursor exhausted."""
    idx = parse_index(argv[2], allow_max=True)
    key = argv[1]
    ar = _write(ctx, key)
    if ar is None:
        return 0
    ar.insert_idx = None if idx == 0 else idx - 1
    _written(ctx, key, b"arseek", 1)
    return 1


@command("arlastitems", arity=-3, flags="readonly", keys=(1, 1, 1), group="array",
         since="8.8.0", complexity="O(N) where N is the number of requested items",
         summary="Returns the most recent positions written by ARINSERT / ARRING.")
def arlastitems(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARLASTITEMS key count [REV]

    O(C) for the C positions walked back from the cursor (wrapping at the
    length), holes as nulls; oldest first, newest first with REV."""
    count = parse_int(argv[2], errors.ARRAY_INVALID_COUNT)
    if count <= 0:
        return []
    rev = False
    if len(argv) == 4:
        if argv[3].upper() != b"REV":
            raise CommandError(SYNTAX)
        rev = True
    elif len(argv) != 3:
        raise wrong_arity(argv[0])
    ar = _read(ctx, argv[1])
    if ar is None:
        return []
    length = ar.length
    wanted = min(count, length)
    if wanted > len(ar) and wanted > MAX_REPLY_ITEMS:
        raise CommandError(errors.ARRAY_COUNT_TOO_BIG)
    if not wanted:
        return []
    cursor = ar.insert_idx
    anchor = length - 1 if cursor is None or cursor >= length else cursor
    get = ar.values.get
    out = []
    idx = anchor
    for _ in range(wanted):
        out.append(get(idx))
        idx = length - 1 if idx == 0 else idx - 1
    if not rev:
        out.reverse()
    return out


# -- ARINFO -----------------------------------------------------------------------------
@command("arinfo", arity=-2, flags="readonly", keys=(1, 1, 1), group="array", since="8.8.0",
         complexity="O(1), or O(N) with FULL where N is the number of slices",
         summary="Returns information about an array.")
def arinfo(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARINFO key [FULL]

    O(1); O(S) with FULL for S slices.  A missing key is an error."""
    full = False
    if len(argv) > 2:
        if len(argv) == 3 and argv[2].lower() == b"full":
            full = True
        else:
            raise CommandError(SYNTAX)
    ar = lookup_read(ctx, argv[1])
    if ar is None:
        raise CommandError(errors.ARRAY_NO_SUCH_KEY)
    if type(ar) is not Array:
        raise CommandError(WRONGTYPE)
    cursor = ar.insert_idx
    items: list[tuple[bytes, Any]] = [
        (b"count", len(ar)),
        (b"len", ar.length),
        (b"next-insert-index",
         0 if cursor is None or cursor == INDEX_MAX else cursor + 1),
        (b"slices", len(ar.slices)),
        (b"directory-size", ar.directory_size),
        (b"super-dir-entries", ar.super_dir_entries),
        (b"slice-size", ar.slice_size),
    ]
    if full:
        items += _slice_stats(ar)
    return Map(items)


def _slice_stats(ar: Array) -> list[tuple[bytes, Any]]:
    """ARINFO FULL's per-encoding figures, from the model of Redis's slice
    encodings the array keeps (types/array.py)."""
    dense, sparse, windows, dense_count, caps = ar.slice_stats()
    return [
        (b"dense-slices", dense),
        (b"sparse-slices", sparse),
        (b"avg-dense-size", windows / dense if dense else 0.0),
        (b"avg-dense-fill", dense_count / windows if windows else 0.0),
        (b"avg-sparse-size", caps / sparse if sparse else 0.0),
    ]
