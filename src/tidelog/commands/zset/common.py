"""What the sorted set commands share: the value's limits, scores and range
bounds read as Redis reads them, lookups, and the member/score replies.

Score arguments are read as C's strtod reads them: ZADD, ZINCRBY and
WEIGHTS strictly (the whole argument, no leading space, no overflow: "ERR
value is not a valid float"), range bounds as Redis reads them (up to a NUL
byte, leading space skipped, overflow to +-inf).  A sorted set emptied by a
command is deleted, as in Redis."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from ...config import NOTIFY_GENERIC, NOTIFY_ZSET
from ...errors import LEX_RANGE_INVALID, NOT_A_FLOAT, RANGE_NOT_FLOAT, CommandError
from ...types.zset import LexBound, ZSet, ZSetLimits
from ..lookup import lookup_read_typed

if TYPE_CHECKING:
    from ..contract import Ctx


def limits(ctx: Ctx) -> ZSetLimits:
    config = ctx.config
    return ZSetLimits(config["zset-max-listpack-entries"], config["zset-max-listpack-value"])


# -- scores and bounds -------------------------------------------------------------------
# What C's strtod reads: hex (tried first), decimal, inf/infinity, nan[(chars)].
_STRTOD = re.compile(
    rb"([+-]?)(?:(0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)"
    rb"|((?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
    rb"|([iI][nN][fF](?:[iI][nN][iI][tT][yY])?)"
    rb"|([nN][aA][nN](?:\([0-9A-Za-z_]*\))?))")
_C_SPACE = b" \t\n\v\f\r"


def _strtod(text: bytes) -> tuple[float, bool] | None:
    """The whole of ``text`` as strtod reads it: (value, out of range), or
    None when it is not all one number.  Out of range: overflow to +-inf, or
    a nonzero number that underflows to 0 (strtod's ERANGE cases Redis
    refuses)."""
    m = _STRTOD.fullmatch(text)
    if m is None:
        return None
    sign, hexa, dec, inf, nan = m.groups()
    negative = sign == b"-"
    if nan is not None:
        return math.nan, False
    if inf is not None:
        return (-math.inf if negative else math.inf), False
    if hexa is not None:
        mantissa = hexa[2:].split(b"p")[0].split(b"P")[0]
        try:
            value = float.fromhex(hexa.decode())
        except OverflowError:
            value = math.inf
    else:
        mantissa = dec.split(b"e")[0].split(b"E")[0]
        value = float(dec)
    out_of_range = math.isinf(value) or (value == 0 and mantissa.strip(b"0.") != b"")
    return (-value if negative else value), out_of_range


def parse_score(arg: bytes, error: bytes = NOT_A_FLOAT) -> float:
    """A score or weight argument, as Redis's getDoubleFromObject takes it."""
    if not arg or arg[0] in _C_SPACE:
        raise CommandError(error)
    parsed = _strtod(arg)
    if parsed is None or parsed[1] or math.isnan(parsed[0]):
        raise CommandError(error)
    return parsed[0]


def _range_score(arg: bytes) -> tuple[float, bool]:
    """One end of a score range: (value, exclusive).  Read as strtod reads it,
    up to a NUL byte; nothing at all reads as 0."""
    exclusive = arg[:1] == b"("
    text = arg[1:] if exclusive else arg
    text = text.split(b"\0", 1)[0]
    if not text:
        return 0.0, exclusive
    parsed = _strtod(text.lstrip(_C_SPACE))
    if parsed is None or math.isnan(parsed[0]):
        raise CommandError(RANGE_NOT_FLOAT)
    return parsed[0], exclusive


def score_range(min_arg: bytes, max_arg: bytes) -> tuple[float, bool, float, bool]:
    low, low_ex = _range_score(min_arg)
    high, high_ex = _range_score(max_arg)
    return low, low_ex, high, high_ex


def _lex_bound(arg: bytes) -> LexBound:
    if arg == b"-":
        return LexBound(None, True, -1)
    if arg == b"+":
        return LexBound(None, True, 1)
    if arg[:1] == b"[":
        return LexBound(arg[1:], True)
    if arg[:1] == b"(":
        return LexBound(arg[1:], False)
    raise CommandError(LEX_RANGE_INVALID)


def lex_range(min_arg: bytes, max_arg: bytes) -> tuple[LexBound, LexBound]:
    return _lex_bound(min_arg), _lex_bound(max_arg)


def score_positions(z: ZSet, rng: tuple[float, bool, float, bool]) -> tuple[int, int]:
    low, low_ex, high, high_ex = rng
    if low > high or (low == high and (low_ex or high_ex)):
        return 0, 0
    start = z.score_index(low, low_ex, upper=False)
    stop = z.score_index(high, high_ex, upper=True)
    return start, max(start, stop)


def lex_positions(z: ZSet, rng: tuple[LexBound, LexBound]) -> tuple[int, int]:
    low, high = rng
    if low.infinite > 0 or high.infinite < 0:
        return 0, 0
    if not low.infinite and not high.infinite:
        if low.value > high.value or (low.value == high.value  # type: ignore[operator]
                                      and not (low.inclusive and high.inclusive)):
            return 0, 0
    start = z.lex_index(low, upper=False)
    stop = z.lex_index(high, upper=True)
    return start, max(start, stop)


def rank_positions(n: int, start: int, end: int) -> tuple[int, int]:
    """Redis's rank range (negative from the end, clamped) as [start, stop)."""
    if start < 0:
        start += n
    if end < 0:
        end += n
    start = max(start, 0)
    if start > end or start >= n:
        return 0, 0
    return start, min(end, n - 1) + 1


# -- lookups ---------------------------------------------------------------------------
def read_zset(ctx: Ctx, key: bytes) -> ZSet | None:
    return lookup_read_typed(ctx, key, ZSet)


def write_zset(ctx: Ctx, key: bytes) -> ZSet | None:
    return ctx.db.get_typed(key, ZSet)


def emptied(ctx: Ctx, key: bytes, z: ZSet) -> None:
    if not len(z):
        ctx.db.delete(key)
        ctx.notify(NOTIFY_GENERIC, b"del", key)


def pairs_reply(ctx: Ctx, pairs: list[tuple[bytes, float]], withscores: bool) -> list[Any]:
    """Members, or with scores: flat in RESP2, [member, score] pairs in RESP3."""
    if not withscores:
        return [m for m, _ in pairs]
    if ctx.client.protocol >= 3:
        return [[m, s] for m, s in pairs]
    out: list[Any] = []
    for m, s in pairs:
        out.append(m)
        out.append(s)
    return out


def store_result(ctx: Ctx, dst: bytes, pairs: list[tuple[bytes, float]]) -> int:
    """Put a computed sorted set at ``dst`` (replacing any value and TTL), or
    delete ``dst`` when the result is empty."""
    if pairs:
        ctx.db.set(dst, ZSet.built(pairs, limits(ctx)))
        ctx.modified(dst)
        ctx.ready(dst)
        ctx.propagate_argv()
        ctx.notify(NOTIFY_ZSET, ctx.argv[0].lower(), dst)  # zunionstore, zrangestore ...
    elif ctx.db.delete(dst):
        ctx.modified(dst)
        ctx.ready(dst)
        ctx.propagate_argv()
        ctx.notify(NOTIFY_GENERIC, b"del", dst)
    return len(pairs)
