"""Sorted sets: ZADD, ZINCRBY, ZREM, ZSCORE, ZMSCORE, ZCARD, ZCOUNT, ZLEXCOUNT,
ZRANK, ZREVRANK, the ZRANGE family and ZRANGESTORE, ZPOPMIN, ZPOPMAX, ZMPOP,
the blocking BZPOPMIN, BZPOPMAX and BZMPOP, ZUNION, ZINTER, ZDIFF and their
STORE forms, ZINTERCARD, ZREMRANGEBYSCORE, ZREMRANGEBYRANK, ZREMRANGEBYLEX,
ZRANDMEMBER and ZSCAN.

The value is :class:`~tidelog.types.zset.ZSet` (listpack or skiplist by
``zset-max-listpack-entries`` and ``zset-max-listpack-value``).  Scores are
doubles; replies send them as the encoder sends every float (Redis 8's
shortest round-trip form).  Score arguments are read as C's strtod reads
them: ZADD, ZINCRBY and WEIGHTS strictly (the whole argument, no leading
space, no overflow: "ERR value is not a valid float"), range bounds as Redis
reads them (up to a NUL byte, leading space skipped, overflow to +-inf).

Propagation (as redis-server 7.0.15 writes its AOF): ZPOPMIN and ZPOPMAX
propagate themselves; ZMPOP and BZMPOP as ``ZPOPMIN|ZPOPMAX key <number
popped>``; BZPOPMIN and BZPOPMAX as ``ZPOPMIN|ZPOPMAX key``.  The blocking
forms park the client with a :class:`~tidelog.commands.contract.Wait` (the
engine's blocked clients, served in the order they blocked when a key gets
data); inside MULTI they answer their timeout reply at once.  ZRANDMEMBER
changes nothing.  Every other write propagates itself, and nothing when it
changed nothing.  A sorted set emptied by a command is
deleted, as in Redis.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from ...config import NOTIFY_GENERIC, NOTIFY_ZSET
from ...errors import (
    LEX_RANGE_INVALID,
    LIMIT_CANT_BE_NEGATIVE,
    LIMIT_RANK,
    LONG_OUT_OF_RANGE,
    MPOP_COUNT_POSITIVE,
    NOT_A_FLOAT,
    NUMKEYS_NOT_POSITIVE,
    POSITIVE_OUT_OF_RANGE,
    RANGE_NOT_FLOAT,
    SCORE_NAN,
    SYNTAX,
    TIMEOUT_NEGATIVE,
    TIMEOUT_NOT_FLOAT,
    VALUE_OUT_OF_RANGE,
    WEIGHT_NOT_FLOAT,
    WITHSCORES_BYLEX,
    WRONGTYPE,
    ZADD_GT_LT_NX,
    ZADD_INCR_PAIRS,
    ZADD_XX_NX,
    CommandError,
    at_least_one_key,
)
from ...glob import glob_match
from ...resp.doubles import format_double
from ...resp.replies import NULL_ARRAY
from ...types.set import Set
from ...types.zset import LexBound, ZSet, ZSetLimits
from ..args import INT64_MAX, parse_int
from ..contract import Wait
from ..key_specs import COMMAND_EXTRAS, KeySpec
from ..lookup import lookup_read
from ..scan_args import parse_cursor, parse_scan_options
from ..table import command

if TYPE_CHECKING:
    from ..contract import Ctx

def _ks(flags: str, begin: int, lastkey: int = 0,
        keynum: tuple[int, int, int] | None = None) -> KeySpec:
    return KeySpec(tuple(flags.split()), begin, lastkey, keynum=keynum)


# COMMAND INFO's tips and key specs (facts read from redis-server 7.0.15).
_ND = "nondeterministic_output"
COMMAND_EXTRAS.update({
    "zadd": ((), [_ks("RW update", 1)]),
    "zincrby": ((), [_ks("RW access update", 1)]),
    "zrem": ((), [_ks("RW delete", 1)]),
    "zscore": ((), [_ks("RO access", 1)]),
    "zmscore": ((), [_ks("RO access", 1)]),
    "zcard": ((), [_ks("RO", 1)]),
    "zcount": ((), [_ks("RO access", 1)]),
    "zlexcount": ((), [_ks("RO access", 1)]),
    "zrank": ((), [_ks("RO access", 1)]),
    "zrevrank": ((), [_ks("RO access", 1)]),
    "zrange": ((), [_ks("RO access", 1)]),
    "zrangestore": ((), [_ks("OW update", 1), _ks("RO access", 2)]),
    "zrangebyscore": ((), [_ks("RO access", 1)]),
    "zrevrangebyscore": ((), [_ks("RO access", 1)]),
    "zrangebylex": ((), [_ks("RO access", 1)]),
    "zrevrangebylex": ((), [_ks("RO access", 1)]),
    "zrevrange": ((), [_ks("RO access", 1)]),
    "zpopmin": ((), [_ks("RW access delete", 1)]),
    "zpopmax": ((), [_ks("RW access delete", 1)]),
    "zmpop": ((), [_ks("RW access delete", 1, keynum=(0, 1, 1))]),
    "bzpopmin": ((), [_ks("RW access delete", 1, -2)]),
    "bzpopmax": ((), [_ks("RW access delete", 1, -2)]),
    "bzmpop": ((), [_ks("RW access delete", 2, keynum=(0, 1, 1))]),
    "zunion": ((), [_ks("RO access", 1, keynum=(0, 1, 1))]),
    "zinter": ((), [_ks("RO access", 1, keynum=(0, 1, 1))]),
    "zdiff": ((), [_ks("RO access", 1, keynum=(0, 1, 1))]),
    "zunionstore": ((), [_ks("OW update", 1), _ks("RO access", 2, keynum=(0, 1, 1))]),
    "zinterstore": ((), [_ks("OW update", 1), _ks("RO access", 2, keynum=(0, 1, 1))]),
    "zdiffstore": ((), [_ks("OW update", 1), _ks("RO access", 2, keynum=(0, 1, 1))]),
    "zintercard": ((), [_ks("RO access", 1, keynum=(0, 1, 1))]),
    "zremrangebyscore": ((), [_ks("RW delete", 1)]),
    "zremrangebyrank": ((), [_ks("RW delete", 1)]),
    "zremrangebylex": ((), [_ks("RW delete", 1)]),
    "zrandmember": ((_ND,), [_ks("RO access", 1)]),
    "zscan": ((_ND,), [_ks("RO access", 1)]),
})


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


def _score_range(min_arg: bytes, max_arg: bytes) -> tuple[float, bool, float, bool]:
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


def _lex_range(min_arg: bytes, max_arg: bytes) -> tuple[LexBound, LexBound]:
    return _lex_bound(min_arg), _lex_bound(max_arg)


def _score_positions(z: ZSet, rng: tuple[float, bool, float, bool]) -> tuple[int, int]:
    low, low_ex, high, high_ex = rng
    if low > high or (low == high and (low_ex or high_ex)):
        return 0, 0
    start = z.score_index(low, low_ex, upper=False)
    stop = z.score_index(high, high_ex, upper=True)
    return start, max(start, stop)


def _lex_positions(z: ZSet, rng: tuple[LexBound, LexBound]) -> tuple[int, int]:
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


def _rank_positions(n: int, start: int, end: int) -> tuple[int, int]:
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
def _read_zset(ctx: Ctx, key: bytes) -> ZSet | None:
    value = lookup_read(ctx, key)
    if value is None or type(value) is ZSet:
        return value
    raise CommandError(WRONGTYPE)


def _write_zset(ctx: Ctx, key: bytes) -> ZSet | None:
    return ctx.db.get_typed(key, ZSet)


def _emptied(ctx: Ctx, key: bytes, z: ZSet) -> None:
    if not len(z):
        ctx.db.delete(key)
        ctx.notify(NOTIFY_GENERIC, b"del", key)


def _pairs_reply(ctx: Ctx, pairs: list[tuple[bytes, float]], withscores: bool) -> list[Any]:
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


# -- ZADD, ZINCRBY ------------------------------------------------------------------------
@command("zadd", arity=-4, flags="write denyoom fast", keys=(1, 1, 1), group="sorted_set",
         since="1.2.0",
         complexity="O(log(N)) for each item added, where N is the number of elements in the "
                    "sorted set.",
         summary="Add one or more members to a sorted set, or update its score if it already "
                 "exists")
def zadd(ctx: Ctx, argv: list[bytes]) -> object:
    """ZADD key [NX | XX] [GT | LT] [CH] [INCR] score member [score member ...]"""
    nx = xx = gt = lt = ch = incr = False
    at = 2
    while at < len(argv):
        option = argv[at].upper()
        if option == b"NX":
            nx = True
        elif option == b"XX":
            xx = True
        elif option == b"GT":
            gt = True
        elif option == b"LT":
            lt = True
        elif option == b"CH":
            ch = True
        elif option == b"INCR":
            incr = True
        else:
            break
        at += 1
    rest = len(argv) - at
    if rest == 0 or rest % 2:
        raise CommandError(SYNTAX)
    if nx and xx:
        raise CommandError(ZADD_XX_NX)
    if (gt and nx) or (lt and nx) or (gt and lt):
        raise CommandError(ZADD_GT_LT_NX)
    if incr and rest > 2:
        raise CommandError(ZADD_INCR_PAIRS)
    pairs = [(argv[i + 1], parse_score(argv[i])) for i in range(at, len(argv), 2)]
    return add_pairs(ctx, argv[1], pairs, nx, xx, gt, lt, ch, incr)


def add_pairs(ctx: Ctx, key: bytes, pairs: list[tuple[bytes, float]], nx: bool, xx: bool,
          gt: bool, lt: bool, ch: bool, incr: bool) -> object:
    z = _write_zset(ctx, key)
    if z is None:
        if xx:
            return None if incr else 0
        lim = limits(ctx)
        z = ZSet.for_add(pairs[0][0], lim)
        ctx.db.set(key, z)
        ctx.ready(key)
        created = True
    else:
        lim = limits(ctx)
        created = False
    added = updated = 0
    result: float | None = None
    for member, score in pairs:
        old = z.score(member)
        if old is None:
            if xx:
                continue
            if incr:
                result = score
            z.add(member, score, lim)
            added += 1
            continue
        if nx:
            continue
        if incr:
            score = old + score
            if math.isnan(score):
                if created and not len(z):
                    ctx.db.delete(key)
                raise CommandError(SCORE_NAN)
        if (gt and score <= old) or (lt and score >= old):
            continue
        result = score
        if score != old:
            z.add(member, score, lim)
            updated += 1
    if added or updated:
        ctx.modified(key, added + updated)
        ctx.propagate_argv()
        ctx.notify(NOTIFY_ZSET, b"zincr" if incr else b"zadd", key)
    elif created and not len(z):  # pragma: no cover - a new key always gets a member
        ctx.db.delete(key)
    if incr:
        return result
    return added + updated if ch else added


@command("zincrby", arity=4, flags="write denyoom fast", keys=(1, 1, 1), group="sorted_set",
         since="1.2.0",
         complexity="O(log(N)) where N is the number of elements in the sorted set.",
         summary="Increment the score of a member in a sorted set")
def zincrby(ctx: Ctx, argv: list[bytes]) -> object:
    """ZINCRBY key increment member"""
    increment = parse_score(argv[2])
    return add_pairs(ctx, argv[1], [(argv[3], increment)], False, False, False, False, False, True)


@command("zrem", arity=-3, flags="write fast", keys=(1, 1, 1), group="sorted_set",
         since="1.2.0",
         complexity="O(M*log(N)) with N being the number of elements in the sorted set and M "
                    "the number of elements to be removed.",
         summary="Remove one or more members from a sorted set")
def zrem(ctx: Ctx, argv: list[bytes]) -> object:
    """ZREM key member [member ...]"""
    key = argv[1]
    z = _write_zset(ctx, key)
    if z is None:
        return 0
    removed = 0
    for member in argv[2:]:
        if z.remove(member):
            removed += 1
            if not len(z):
                break
    if removed:
        ctx.notify(NOTIFY_ZSET, b"zrem", key)
        _emptied(ctx, key, z)
        ctx.modified(key, removed)
        ctx.propagate_argv()
    return removed


# -- single reads ---------------------------------------------------------------------------
@command("zscore", arity=3, flags="readonly fast", keys=(1, 1, 1), group="sorted_set",
         since="1.2.0", complexity="O(1)",
         summary="Get the score associated with the given member in a sorted set")
def zscore(ctx: Ctx, argv: list[bytes]) -> object:
    """ZSCORE key member"""
    z = _read_zset(ctx, argv[1])
    return None if z is None else z.score(argv[2])


@command("zmscore", arity=-3, flags="readonly fast", keys=(1, 1, 1), group="sorted_set",
         since="6.2.0",
         complexity="O(N) where N is the number of members being requested.",
         summary="Get the score associated with the given members in a sorted set")
def zmscore(ctx: Ctx, argv: list[bytes]) -> object:
    """ZMSCORE key member [member ...]"""
    z = _read_zset(ctx, argv[1])
    if z is None:
        return [None] * (len(argv) - 2)
    return [z.score(m) for m in argv[2:]]


@command("zcard", arity=2, flags="readonly fast", keys=(1, 1, 1), group="sorted_set",
         since="1.2.0", complexity="O(1)",
         summary="Get the number of members in a sorted set")
def zcard(ctx: Ctx, argv: list[bytes]) -> object:
    """ZCARD key"""
    z = _read_zset(ctx, argv[1])
    return 0 if z is None else len(z)


@command("zcount", arity=4, flags="readonly fast", keys=(1, 1, 1), group="sorted_set",
         since="2.0.0",
         complexity="O(log(N)) with N being the number of elements in the sorted set.",
         summary="Count the members in a sorted set with scores within the given values")
def zcount(ctx: Ctx, argv: list[bytes]) -> object:
    """ZCOUNT key min max"""
    rng = _score_range(argv[2], argv[3])
    z = _read_zset(ctx, argv[1])
    if z is None:
        return 0
    start, stop = _score_positions(z, rng)
    return stop - start


@command("zlexcount", arity=4, flags="readonly fast", keys=(1, 1, 1), group="sorted_set",
         since="2.8.9",
         complexity="O(log(N)) with N being the number of elements in the sorted set.",
         summary="Count the number of members in a sorted set between a given lexicographical "
                 "range")
def zlexcount(ctx: Ctx, argv: list[bytes]) -> object:
    """ZLEXCOUNT key min max"""
    rng = _lex_range(argv[2], argv[3])
    z = _read_zset(ctx, argv[1])
    if z is None:
        return 0
    start, stop = _lex_positions(z, rng)
    return stop - start


def _zrank(ctx: Ctx, argv: list[bytes], reverse: bool) -> object:
    withscore = False
    if len(argv) > 4:
        raise CommandError(SYNTAX)
    if len(argv) == 4:
        if argv[3].upper() != b"WITHSCORE":
            raise CommandError(SYNTAX)
        withscore = True
    z = _read_zset(ctx, argv[1])
    rank = None if z is None else z.rank(argv[2])
    if rank is None:
        return NULL_ARRAY if withscore else None
    if reverse:
        rank = len(z) - 1 - rank  # type: ignore[arg-type]
    if withscore:
        return [rank, z.score(argv[2])]  # type: ignore[union-attr]
    return rank


@command("zrank", arity=-3, flags="readonly fast", keys=(1, 1, 1), group="sorted_set",
         since="2.0.0",
         complexity="O(log(N))",
         summary="Determine the index of a member in a sorted set")
def zrank(ctx: Ctx, argv: list[bytes]) -> object:
    """ZRANK key member [WITHSCORE]"""
    # WITHSCORE: Redis 7.2 (https://redis.io/docs/latest/commands/zrank/).
    return _zrank(ctx, argv, False)


@command("zrevrank", arity=-3, flags="readonly fast", keys=(1, 1, 1), group="sorted_set",
         since="2.0.0",
         complexity="O(log(N))",
         summary="Determine the index of a member in a sorted set, with scores ordered from "
                 "high to low")
def zrevrank(ctx: Ctx, argv: list[bytes]) -> object:
    """ZREVRANK key member [WITHSCORE]"""
    return _zrank(ctx, argv, True)


# -- the ZRANGE family ---------------------------------------------------------------------
_RANK, _SCORE, _LEX = 0, 1, 2


def _zrange(ctx: Ctx, argv: list[bytes], first: int, kind: int | None,
            reverse: bool | None, store: bytes | None = None) -> object:
    """Every form of ZRANGE: ``first`` is the source key's index; ``kind``
    and ``reverse`` are fixed by the old commands (None: options may say)."""
    withscores = False
    offset, count = 0, -1
    limit_given = False
    j = first + 3
    while j < len(argv):
        option = argv[j].upper()
        left = len(argv) - j - 1
        if store is None and option == b"WITHSCORES":
            withscores = True
        elif option == b"LIMIT" and left >= 2:
            offset = parse_int(argv[j + 1])
            count = parse_int(argv[j + 2])
            limit_given = True
            j += 2
        elif reverse is None and option == b"REV":
            reverse = True
        elif kind is None and option == b"BYLEX":
            kind = _LEX
        elif kind is None and option == b"BYSCORE":
            kind = _SCORE
        else:
            raise CommandError(SYNTAX)
        j += 1
    if reverse is None:
        reverse = False
    if kind is None:
        kind = _RANK
    if limit_given and count != -1 and kind == _RANK:
        raise CommandError(LIMIT_RANK)
    if withscores and kind == _LEX:
        raise CommandError(WITHSCORES_BYLEX)
    low_arg, high_arg = argv[first + 1], argv[first + 2]
    if reverse and kind != _RANK:
        low_arg, high_arg = high_arg, low_arg
    if kind == _RANK:
        start, end = parse_int(low_arg), parse_int(high_arg)
    elif kind == _SCORE:
        score_rng = _score_range(low_arg, high_arg)
    else:
        lex_rng = _lex_range(low_arg, high_arg)
    key = argv[first]
    z = _write_zset(ctx, key) if store is not None else _read_zset(ctx, key)
    pairs: list[tuple[bytes, float]] = []
    if z is not None:
        n = len(z)
        if kind == _RANK:
            lo, hi = _rank_positions(n, start, end)
            if reverse:
                lo, hi = n - hi, n - lo
        elif kind == _SCORE:
            lo, hi = _score_positions(z, score_rng)
        else:
            lo, hi = _lex_positions(z, lex_rng)
        if kind != _RANK:
            if offset < 0 or count == 0:
                lo = hi
            elif reverse:
                hi = max(lo, hi - offset)
                if count > 0:
                    lo = max(lo, hi - count)
            else:
                lo = min(hi, lo + offset)
                if count > 0:
                    hi = min(hi, lo + count)
        pairs = z.slice(lo, hi, reverse)
    if store is not None:
        return _store(ctx, store, pairs)
    return _pairs_reply(ctx, pairs, withscores)


def _store(ctx: Ctx, dst: bytes, pairs: list[tuple[bytes, float]]) -> int:
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


_RANGE_COMPLEXITY = ("O(log(N)+M) with N being the number of elements in the sorted set and M "
                     "the number of elements returned.")


@command("zrange", arity=-4, flags="readonly", keys=(1, 1, 1), group="sorted_set",
         since="1.2.0", complexity=_RANGE_COMPLEXITY,
         summary="Return a range of members in a sorted set")
def zrange(ctx: Ctx, argv: list[bytes]) -> object:
    """ZRANGE key start stop [BYSCORE | BYLEX] [REV] [LIMIT offset count] [WITHSCORES]"""
    return _zrange(ctx, argv, 1, None, None)


@command("zrangestore", arity=-5, flags="write denyoom", keys=(1, 2, 1), group="sorted_set",
         since="6.2.0",
         complexity="O(log(N)+M) with N being the number of elements in the sorted set and M "
                    "the number of elements stored into the destination key.",
         summary="Store a range of members from sorted set into another key")
def zrangestore(ctx: Ctx, argv: list[bytes]) -> object:
    """ZRANGESTORE dst src min max [BYSCORE | BYLEX] [REV] [LIMIT offset count]"""
    return _zrange(ctx, argv, 2, None, None, store=argv[1])


@command("zrangebyscore", arity=-4, flags="readonly", keys=(1, 1, 1), group="sorted_set",
         since="1.0.5", complexity=_RANGE_COMPLEXITY,
         summary="Return a range of members in a sorted set, by score")
def zrangebyscore(ctx: Ctx, argv: list[bytes]) -> object:
    """ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count]"""
    return _zrange(ctx, argv, 1, _SCORE, False)


@command("zrevrangebyscore", arity=-4, flags="readonly", keys=(1, 1, 1), group="sorted_set",
         since="2.2.0", complexity=_RANGE_COMPLEXITY,
         summary="Return a range of members in a sorted set, by score, with scores ordered "
                 "from high to low")
def zrevrangebyscore(ctx: Ctx, argv: list[bytes]) -> object:
    """ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT offset count]"""
    return _zrange(ctx, argv, 1, _SCORE, True)


@command("zrangebylex", arity=-4, flags="readonly", keys=(1, 1, 1), group="sorted_set",
         since="2.8.9", complexity=_RANGE_COMPLEXITY,
         summary="Return a range of members in a sorted set, by lexicographical range")
def zrangebylex(ctx: Ctx, argv: list[bytes]) -> object:
    """ZRANGEBYLEX key min max [LIMIT offset count]"""
    return _zrange(ctx, argv, 1, _LEX, False)


@command("zrevrangebylex", arity=-4, flags="readonly", keys=(1, 1, 1), group="sorted_set",
         since="2.8.9", complexity=_RANGE_COMPLEXITY,
         summary="Return a range of members in a sorted set, by lexicographical range, ordered "
                 "from higher to lower strings.")
def zrevrangebylex(ctx: Ctx, argv: list[bytes]) -> object:
    """ZREVRANGEBYLEX key max min [LIMIT offset count]"""
    return _zrange(ctx, argv, 1, _LEX, True)


@command("zrevrange", arity=-4, flags="readonly", keys=(1, 1, 1), group="sorted_set",
         since="1.2.0", complexity=_RANGE_COMPLEXITY,
         summary="Return a range of members in a sorted set, by index, with scores ordered "
                 "from high to low")
def zrevrange(ctx: Ctx, argv: list[bytes]) -> object:
    """ZREVRANGE key start stop [WITHSCORES]"""
    return _zrange(ctx, argv, 1, _RANK, True)


# -- ZREMRANGEBY* ------------------------------------------------------------------------------
def _remove_range(ctx: Ctx, key: bytes, z: ZSet | None, lo: int, hi: int) -> int:
    if z is None or lo >= hi:
        return 0
    removed = len(z.remove_positions(lo, hi))
    ctx.notify(NOTIFY_ZSET, ctx.argv[0].lower(), key)  # zremrangebyscore ...
    _emptied(ctx, key, z)
    ctx.modified(key, removed)
    ctx.propagate_argv()
    return removed


@command("zremrangebyscore", arity=4, flags="write", keys=(1, 1, 1), group="sorted_set",
         since="1.2.0",
         complexity="O(log(N)+M) with N being the number of elements in the sorted set and M "
                    "the number of elements removed by the operation.",
         summary="Remove all members in a sorted set within the given scores")
def zremrangebyscore(ctx: Ctx, argv: list[bytes]) -> object:
    """ZREMRANGEBYSCORE key min max"""
    rng = _score_range(argv[2], argv[3])
    z = _write_zset(ctx, argv[1])
    lo, hi = _score_positions(z, rng) if z is not None else (0, 0)
    return _remove_range(ctx, argv[1], z, lo, hi)


@command("zremrangebyrank", arity=4, flags="write", keys=(1, 1, 1), group="sorted_set",
         since="2.0.0",
         complexity="O(log(N)+M) with N being the number of elements in the sorted set and M "
                    "the number of elements removed by the operation.",
         summary="Remove all members in a sorted set within the given indexes")
def zremrangebyrank(ctx: Ctx, argv: list[bytes]) -> object:
    """ZREMRANGEBYRANK key start stop"""
    start, end = parse_int(argv[2]), parse_int(argv[3])
    z = _write_zset(ctx, argv[1])
    lo, hi = _rank_positions(len(z), start, end) if z is not None else (0, 0)
    return _remove_range(ctx, argv[1], z, lo, hi)


@command("zremrangebylex", arity=4, flags="write", keys=(1, 1, 1), group="sorted_set",
         since="2.8.9",
         complexity="O(log(N)+M) with N being the number of elements in the sorted set and M "
                    "the number of elements removed by the operation.",
         summary="Remove all members in a sorted set between the given lexicographical range")
def zremrangebylex(ctx: Ctx, argv: list[bytes]) -> object:
    """ZREMRANGEBYLEX key min max"""
    rng = _lex_range(argv[2], argv[3])
    z = _write_zset(ctx, argv[1])
    lo, hi = _lex_positions(z, rng) if z is not None else (0, 0)
    return _remove_range(ctx, argv[1], z, lo, hi)


# -- ZPOPMIN, ZPOPMAX, ZMPOP --------------------------------------------------------------------
def _pop(ctx: Ctx, key: bytes, z: ZSet, count: int, highest: bool) -> list[tuple[bytes, float]]:
    popped = z.pop(count, highest)
    ctx.notify(NOTIFY_ZSET, b"zpopmax" if highest else b"zpopmin", key)
    _emptied(ctx, key, z)
    ctx.modified(key, len(popped))
    return popped


def _zpop(ctx: Ctx, argv: list[bytes], highest: bool) -> object:
    if len(argv) > 3:
        raise CommandError(SYNTAX)
    count = 1
    if len(argv) == 3:
        count = parse_int(argv[2], POSITIVE_OUT_OF_RANGE)
        if count < 0:
            raise CommandError(POSITIVE_OUT_OF_RANGE)
    key = argv[1]
    z = _write_zset(ctx, key)
    if z is None or count == 0:
        return []
    popped = _pop(ctx, key, z, count, highest)
    ctx.propagate_argv()
    if ctx.client.protocol >= 3 and len(argv) == 3:  # RESP3 with a count: [member, score] pairs
        return [[m, s] for m, s in popped]
    return [x for pair in popped for x in pair]


@command("zpopmin", arity=-2, flags="write fast", keys=(1, 1, 1), group="sorted_set",
         since="5.0.0",
         complexity="O(log(N)*M) with N being the number of elements in the sorted set, and M "
                    "being the number of elements popped.",
         summary="Remove and return members with the lowest scores in a sorted set")
def zpopmin(ctx: Ctx, argv: list[bytes]) -> object:
    """ZPOPMIN key [count]"""
    return _zpop(ctx, argv, False)


@command("zpopmax", arity=-2, flags="write fast", keys=(1, 1, 1), group="sorted_set",
         since="5.0.0",
         complexity="O(log(N)*M) with N being the number of elements in the sorted set, and M "
                    "being the number of elements popped.",
         summary="Remove and return members with the highest scores in a sorted set")
def zpopmax(ctx: Ctx, argv: list[bytes]) -> object:
    """ZPOPMAX key [count]"""
    return _zpop(ctx, argv, True)


def _mpop_args(argv: list[bytes], numkeys_at: int) -> tuple[list[bytes], bool, int]:
    """ZMPOP's and BZMPOP's ``numkeys key [key ...] MIN | MAX [COUNT count]``:
    (keys, highest, count)."""
    numkeys = parse_int(argv[numkeys_at], NUMKEYS_NOT_POSITIVE)
    if numkeys < 1:
        raise CommandError(NUMKEYS_NOT_POSITIVE)
    where_at = numkeys_at + 1 + numkeys
    if where_at >= len(argv):
        raise CommandError(SYNTAX)
    where = argv[where_at].upper()
    if where not in (b"MIN", b"MAX"):
        raise CommandError(SYNTAX)
    count = -1
    j = where_at + 1
    while j < len(argv):
        if count == -1 and argv[j].upper() == b"COUNT" and j + 1 < len(argv):
            count = parse_int(argv[j + 1], MPOP_COUNT_POSITIVE)
            if count < 1:
                raise CommandError(MPOP_COUNT_POSITIVE)
            j += 2
        else:
            raise CommandError(SYNTAX)
    return argv[numkeys_at + 1:where_at], where == b"MAX", max(count, 1)


def _mpop_first(ctx: Ctx, keys: list[bytes], highest: bool, count: int) -> object:
    """Pop from the first non-empty sorted set of ``keys``: ``[key, [[member,
    score], ...]]``, propagated as ZPOPMIN/ZPOPMAX key <popped count> (what
    Redis writes for ZMPOP and BZMPOP); None when every key is empty."""
    for key in keys:
        z = _write_zset(ctx, key)
        if z is None:
            continue
        popped = _pop(ctx, key, z, count, highest)
        ctx.effect([b"ZPOPMAX" if highest else b"ZPOPMIN", key, b"%d" % len(popped)])
        return [key, [[m, s] for m, s in popped]]
    return None


@command("zmpop", arity=-4, flags="write movablekeys", group="sorted_set", since="7.0.0",
         complexity="O(K) + O(M*log(N)) where K is the number of provided keys, N being the "
                    "number of elements in the sorted set, and M being the number of elements "
                    "popped.",
         summary="Remove and return members with scores in a sorted set")
def zmpop(ctx: Ctx, argv: list[bytes]) -> object:
    """ZMPOP numkeys key [key ...] MIN | MAX [COUNT count]"""
    keys, highest, count = _mpop_args(argv, 1)
    reply = _mpop_first(ctx, keys, highest, count)
    return NULL_ARRAY if reply is None else reply


# -- BZPOPMIN, BZPOPMAX, BZMPOP (the engine's blocked clients: a Wait) ----------------------
def _parse_timeout(arg: bytes) -> int:
    """A blocking timeout in seconds (a double) as milliseconds; 0: forever."""
    seconds = parse_score(arg, TIMEOUT_NOT_FLOAT)
    ms = int(seconds * 1000) if math.isfinite(seconds) else (-1 if seconds < 0 else 0)
    if ms < 0:
        raise CommandError(TIMEOUT_NEGATIVE)
    return ms


def _bzpop_one(ctx: Ctx, keys: list[bytes], highest: bool) -> object:
    """[key, member, score] from the first non-empty key (propagated as
    ZPOPMIN/ZPOPMAX key, as Redis writes BZPOPMIN/BZPOPMAX), or None."""
    for key in keys:
        z = _write_zset(ctx, key)
        if z is None:
            continue
        ((member, score),) = _pop(ctx, key, z, 1, highest)
        ctx.effect([b"ZPOPMAX" if highest else b"ZPOPMIN", key])
        return [key, member, score]
    return None


def _retry_keys(woken: Ctx, keys: list[bytes]) -> list[bytes]:
    """The keys a woken client looks at: the ready one, if of our type."""
    if woken.ready_key is None:
        return keys
    return [woken.ready_key] if type(woken.db.get(woken.ready_key)) is ZSet else []


def _bzpop(ctx: Ctx, argv: list[bytes], highest: bool) -> object:
    timeout = _parse_timeout(argv[-1])
    keys = argv[1:-1]
    reply = _bzpop_one(ctx, keys, highest)
    if reply is not None:
        return reply

    def retry(woken: Ctx) -> object:
        return _bzpop_one(woken, _retry_keys(woken, keys), highest)

    return Wait(list(keys), timeout, retry, NULL_ARRAY)


@command("bzpopmin", arity=-3, flags="write noscript blocking fast", keys=(1, -2, 1),
         group="sorted_set", since="5.0.0",
         complexity="O(log(N)) with N being the number of elements in the sorted set.",
         summary="Remove and return the member with the lowest score from one or more sorted "
                 "sets, or block until one is available")
def bzpopmin(ctx: Ctx, argv: list[bytes]) -> object:
    """BZPOPMIN key [key ...] timeout"""
    return _bzpop(ctx, argv, False)


@command("bzpopmax", arity=-3, flags="write noscript blocking fast", keys=(1, -2, 1),
         group="sorted_set", since="5.0.0",
         complexity="O(log(N)) with N being the number of elements in the sorted set.",
         summary="Remove and return the member with the highest score from one or more sorted "
                 "sets, or block until one is available")
def bzpopmax(ctx: Ctx, argv: list[bytes]) -> object:
    """BZPOPMAX key [key ...] timeout"""
    return _bzpop(ctx, argv, True)


@command("bzmpop", arity=-5, flags="write blocking movablekeys", group="sorted_set",
         since="7.0.0",
         complexity="O(K) + O(M*log(N)) where K is the number of provided keys, N being the "
                    "number of elements in the sorted set, and M being the number of elements "
                    "popped.",
         summary="Remove and return members with scores in a sorted set or block until one "
                 "is available")
def bzmpop(ctx: Ctx, argv: list[bytes]) -> object:
    """BZMPOP timeout numkeys key [key ...] MIN | MAX [COUNT count]"""
    timeout = _parse_timeout(argv[1])
    keys, highest, count = _mpop_args(argv, 2)
    reply = _mpop_first(ctx, keys, highest, count)
    if reply is not None:
        return reply

    def retry(woken: Ctx) -> object:
        return _mpop_first(woken, _retry_keys(woken, keys), highest, count)

    return Wait(list(keys), timeout, retry, NULL_ARRAY)


# -- ZUNION, ZINTER, ZDIFF, their STORE forms, ZINTERCARD ------------------------------------------
def _source_items(value: object) -> dict[bytes, float]:
    if type(value) is ZSet:
        return {m: s for m, s in value.items()}
    return dict.fromkeys(value.members(), 1.0)  # type: ignore[attr-defined]


def _setop(ctx: Ctx, argv: list[bytes], numkeys_at: int, op: bytes,
           store: bytes | None = None, card: bool = False) -> object:
    """ZUNION/ZINTER/ZDIFF[STORE] and ZINTERCARD: the sources are sorted sets
    or sets (a set member scores 1)."""
    name = argv[0].lower()
    numkeys = parse_int(argv[numkeys_at])
    if numkeys < 1:
        raise at_least_one_key(name)
    if numkeys > len(argv) - numkeys_at - 1:
        raise CommandError(SYNTAX)
    keys = argv[numkeys_at + 1:numkeys_at + 1 + numkeys]
    sources = []
    for key in keys:
        value = ctx.db.get(key) if store is not None else lookup_read(ctx, key)
        if value is not None and type(value) is not ZSet and type(value) is not Set:
            raise CommandError(WRONGTYPE)
        sources.append(value)
    weights = [1.0] * numkeys
    aggregate = b"SUM"
    withscores = False
    limit = 0
    j = numkeys_at + 1 + numkeys
    while j < len(argv):
        option = argv[j].upper()
        left = len(argv) - j
        if op != b"diff" and not card and left >= numkeys + 1 and option == b"WEIGHTS":
            weights = [parse_score(a, WEIGHT_NOT_FLOAT) for a in argv[j + 1:j + 1 + numkeys]]
            j += 1 + numkeys
        elif op != b"diff" and not card and left >= 2 and option == b"AGGREGATE":
            aggregate = argv[j + 1].upper()
            if aggregate not in (b"SUM", b"MIN", b"MAX", b"COUNT"):  # COUNT: Redis 8.8
                raise CommandError(SYNTAX)
            j += 2
        elif store is None and not card and option == b"WITHSCORES":
            withscores = True
            j += 1
        elif card and left >= 2 and option == b"LIMIT":
            limit = parse_int(argv[j + 1], LIMIT_CANT_BE_NEGATIVE)
            if limit < 0:
                raise CommandError(LIMIT_CANT_BE_NEGATIVE)
            j += 2
        else:
            raise CommandError(SYNTAX)
    result = _compute(sources, weights, aggregate, op, limit if card else 0)
    if card:
        return len(result)
    pairs = sorted(((m, s) for m, s in result.items()), key=lambda p: (p[1], p[0]))
    if store is not None:
        return _store(ctx, store, pairs)
    return _pairs_reply(ctx, pairs, withscores)


def _combine(a: float, b: float, aggregate: bytes) -> float:
    if aggregate == b"SUM" or aggregate == b"COUNT":
        total = a + b
        return 0.0 if math.isnan(total) else total
    return min(a, b) if aggregate == b"MIN" else max(a, b)


def _weighted_score(score: float, weight: float) -> float:
    value = score * weight
    return 0.0 if math.isnan(value) else value


def _counted(score: float, weight: float) -> float:
    """AGGREGATE COUNT (Redis 8.8, https://redis.io/docs/latest/commands/zunionstore/):
    the score is ignored, each source adds its weight (1 by default)."""
    return weight


def _compute(sources: list[Any], weights: list[float], aggregate: bytes, op: bytes,
             limit: int) -> dict[bytes, float]:
    """member -> score of the operation's result (for ZINTERCARD, stops at
    ``limit`` members when it is not 0).  O(total size)."""
    out: dict[bytes, float] = {}
    weigh = _counted if aggregate == b"COUNT" else _weighted_score
    if op == b"union":
        for value, weight in zip(sources, weights):
            if value is None:
                continue
            for member, score in _source_items(value).items():
                score = weigh(score, weight)
                old = out.get(member)
                out[member] = score if old is None else _combine(old, score, aggregate)
        return out
    if op == b"diff":
        first = sources[0]
        if first is None:
            return out
        others = [v for v in sources[1:] if v is not None]
        for member, score in _source_items(first).items():
            if not any(member in other for other in others):
                out[member] = score
        return out
    # inter
    if any(v is None for v in sources):
        return out
    maps = [(_source_items(v), w) for v, w in zip(sources, weights)]
    order = sorted(range(len(maps)), key=lambda i: len(maps[i][0]))
    smallest, smallest_weight = maps[order[0]]
    for member, score in smallest.items():
        total = weigh(score, smallest_weight)
        for i in order[1:]:
            other, weight = maps[i]
            s = other.get(member)
            if s is None:
                break
            total = _combine(total, weigh(s, weight), aggregate)
        else:
            out[member] = total
            if limit and len(out) >= limit:
                break
    return out


def _setop_command(name: str, op: bytes, store: bool, summary: str, syntax: str) -> None:
    arity = -4 if store else -3
    flags = "write denyoom movablekeys" if store else "readonly movablekeys"

    def handler(ctx: Ctx, argv: list[bytes]) -> object:
        if store:
            return _setop(ctx, argv, 2, op, store=argv[1])
        return _setop(ctx, argv, 1, op)

    handler.__doc__ = syntax
    handler.__name__ = name
    keys = (1, 1, 1) if store else (0, 0, 0)
    since = {"zunion": "6.2.0", "zinter": "6.2.0", "zdiff": "6.2.0", "zdiffstore": "6.2.0",
             "zunionstore": "2.0.0", "zinterstore": "2.0.0"}[name]
    complexity = {
        b"union": "O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, "
                  "and M being the number of elements in the resulting sorted set.",
        b"inter": "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K "
                  "being the number of input sorted sets and M being the number of elements in "
                  "the resulting sorted set.",
        b"diff": "O(L + (N-K)log(N)) worst case where L is the total number of elements in all "
                 "the sets, N is the size of the first set, and K is the size of the result "
                 "set.",
    }[op]
    command(name, arity=arity, flags=flags, keys=keys, group="sorted_set", since=since,
            complexity=complexity, summary=summary)(handler)


_setop_command("zunion", b"union", False, "Add multiple sorted sets",
               "ZUNION numkeys key [key ...] [WEIGHTS weight [weight ...]] "
               "[AGGREGATE SUM | MIN | MAX | COUNT] [WITHSCORES]")
_setop_command("zunionstore", b"union", True,
               "Add multiple sorted sets and store the resulting sorted set in a new key",
               "ZUNIONSTORE destination numkeys key [key ...] [WEIGHTS weight [weight ...]] "
               "[AGGREGATE SUM | MIN | MAX | COUNT]")
_setop_command("zinter", b"inter", False, "Intersect multiple sorted sets",
               "ZINTER numkeys key [key ...] [WEIGHTS weight [weight ...]] "
               "[AGGREGATE SUM | MIN | MAX | COUNT] [WITHSCORES]")
_setop_command("zinterstore", b"inter", True,
               "Intersect multiple sorted sets and store the resulting sorted set in a new key",
               "ZINTERSTORE destination numkeys key [key ...] [WEIGHTS weight [weight ...]] "
               "[AGGREGATE SUM | MIN | MAX | COUNT]")
_setop_command("zdiff", b"diff", False, "Subtract multiple sorted sets",
               "ZDIFF numkeys key [key ...] [WITHSCORES]")
_setop_command("zdiffstore", b"diff", True,
               "Subtract multiple sorted sets and store the resulting sorted set in a new key",
               "ZDIFFSTORE destination numkeys key [key ...]")


@command("zintercard", arity=-3, flags="readonly movablekeys", group="sorted_set",
         since="7.0.0",
         complexity="O(N*K) worst case with N being the smallest input sorted set, K being the "
                    "number of input sorted sets.",
         summary="Intersect multiple sorted sets and return the cardinality of the result")
def zintercard(ctx: Ctx, argv: list[bytes]) -> object:
    """ZINTERCARD numkeys key [key ...] [LIMIT limit]"""
    return _setop(ctx, argv, 1, b"inter", card=True)


# -- ZRANDMEMBER ---------------------------------------------------------------------------------
@command("zrandmember", arity=-2, flags="readonly", keys=(1, 1, 1), group="sorted_set",
         since="6.2.0",
         complexity="O(N) where N is the number of members returned",
         summary="Get one or multiple random elements from a sorted set")
def zrandmember(ctx: Ctx, argv: list[bytes]) -> object:
    """ZRANDMEMBER key [count [WITHSCORES]]"""
    if len(argv) == 2:
        z = _read_zset(ctx, argv[1])
        if z is None:
            return None
        return z.random_with_repeats(1)[0][0]
    count = parse_int(argv[2])
    if count < -INT64_MAX:
        raise CommandError(LONG_OUT_OF_RANGE)
    withscores = False
    if len(argv) > 4 or (len(argv) == 4 and argv[3].upper() != b"WITHSCORES"):
        raise CommandError(SYNTAX)
    if len(argv) == 4:
        withscores = True
        if count < -(INT64_MAX // 2) or count > INT64_MAX // 2:
            raise CommandError(VALUE_OUT_OF_RANGE)
    z = _read_zset(ctx, argv[1])
    if z is None or count == 0:
        return []
    if count < 0:
        pairs = z.random_with_repeats(-count)
    elif count >= len(z):
        pairs = z.items()
    else:
        pairs = z.random_distinct(count)
    return _pairs_reply(ctx, pairs, withscores)


# -- ZSCAN ----------------------------------------------------------------------------------------
@command("zscan", arity=-3, flags="readonly", keys=(1, 1, 1), group="sorted_set",
         since="2.8.0",
         complexity="O(1) for every call. O(N) for a complete iteration, including enough "
                    "command calls for the cursor to return back to 0. N is the number of "
                    "elements inside the collection.",
         summary="Incrementally iterate sorted sets elements and associated scores")
def zscan(ctx: Ctx, argv: list[bytes]) -> object:
    """ZSCAN key cursor [MATCH pattern] [COUNT count] [NOSCORES]"""
    cursor = parse_cursor(argv[2])
    z = _read_zset(ctx, argv[1])
    if z is None:
        return [b"0", []]
    # NOSCORES: Redis 8.0 (https://redis.io/docs/latest/commands/zscan/)
    opts = parse_scan_options(argv, 3, keys_only_word=b"NOSCORES")
    pattern, noscores = opts.pattern, opts.keys_only
    cursor, found = z.scan(cursor, opts.count)
    out: list[bytes] = []
    for member, score in found:
        if pattern is not None and not glob_match(pattern, member):
            continue
        out.append(member)
        if not noscores:
            out.append(format_double(score))
    return [b"%d" % cursor, out]
