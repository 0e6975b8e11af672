"""The ZRANGE family: ZRANGE (BYSCORE, BYLEX, REV, LIMIT), ZRANGESTORE, the
older ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX and
ZREVRANGE, and ZREMRANGEBYSCORE, ZREMRANGEBYRANK and ZREMRANGEBYLEX."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...config import NOTIFY_ZSET
from ...errors import LIMIT_RANK, SYNTAX, WITHSCORES_BYLEX, CommandError
from ...types.zset import ZSet
from ..args import ArgReader, parse_int
from ..key_specs import ks
from ..table import command
from .common import (
    emptied,
    lex_positions,
    lex_range,
    pairs_reply,
    rank_positions,
    read_zset,
    score_positions,
    score_range,
    store_result,
    write_zset,
)

if TYPE_CHECKING:
    from ..contract import Ctx




# -- the ZRANGE family ---------------------------------------------------------------------
_RANK, _SCORE, _LEX = 0, 1, 2


def _zrange(ctx: Ctx, argv: list[bytes], first: int, kind: int | None,
            reverse: bool | None, store: bytes | None = None) -> object:
    """Every form of ZRANGE: ``first`` is the source key's index; ``kind``
    and ``reverse`` are fixed by the old commands (None: options may say)."""
    withscores = False
    offset, count = 0, -1
    limit_given = False
    r = ArgReader(argv, start=first + 3)
    while r.more():
        option = r.next_upper()
        if store is None and option == b"WITHSCORES":
            withscores = True
        elif option == b"LIMIT" and r.remaining() >= 2:
            offset = r.next_int()
            count = r.next_int()
            limit_given = True
        elif reverse is None and option == b"REV":
            reverse = True
        elif kind is None and option == b"BYLEX":
            kind = _LEX
        elif kind is None and option == b"BYSCORE":
            kind = _SCORE
        else:
            raise CommandError(SYNTAX)
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
        score_rng = score_range(low_arg, high_arg)
    else:
        lex_rng = lex_range(low_arg, high_arg)
    key = argv[first]
    z = write_zset(ctx, key) if store is not None else read_zset(ctx, key)
    pairs: list[tuple[bytes, float]] = []
    if z is not None:
        n = len(z)
        if kind == _RANK:
            lo, hi = rank_positions(n, start, end)
            if reverse:
                lo, hi = n - hi, n - lo
        elif kind == _SCORE:
            lo, hi = score_positions(z, score_rng)
        else:
            lo, hi = lex_positions(z, lex_rng)
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
        return store_result(ctx, store, pairs)
    return pairs_reply(ctx, pairs, withscores)


_RANGE_COMPLEXITY = ("O(log(N)+M) with N being the number of elements in the sorted set and M "
                     "the number of elements returned.")


@command("zrange", arity=-4, flags="readonly", keys=(1, 1, 1), group="sorted_set",
         since="1.2.0", complexity=_RANGE_COMPLEXITY,
         summary="Return a range of members in a sorted set",
         key_specs=[ks("RO access", 1)])
def zrange(ctx: Ctx, argv: list[bytes]) -> object:
    """ZRANGE key start stop [BYSCORE | BYLEX] [REV] [LIMIT offset count] [WITHSCORES]"""
    return _zrange(ctx, argv, 1, None, None)


@command("zrangestore", arity=-5, flags="write denyoom", keys=(1, 2, 1), group="sorted_set",
         since="6.2.0",
         complexity="O(log(N)+M) with N being the number of elements in the sorted set and M "
                    "the number of elements stored into the destination key.",
         summary="Store a range of members from sorted set into another key",
         key_specs=[ks("OW update", 1), ks("RO access", 2)])
def zrangestore(ctx: Ctx, argv: list[bytes]) -> object:
    """ZRANGESTORE dst src min max [BYSCORE | BYLEX] [REV] [LIMIT offset count]"""
    return _zrange(ctx, argv, 2, None, None, store=argv[1])


@command("zrangebyscore", arity=-4, flags="readonly", keys=(1, 1, 1), group="sorted_set",
         since="1.0.5", complexity=_RANGE_COMPLEXITY,
         summary="Return a range of members in a sorted set, by score",
         key_specs=[ks("RO access", 1)])
def zrangebyscore(ctx: Ctx, argv: list[bytes]) -> object:
    """ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count]"""
    return _zrange(ctx, argv, 1, _SCORE, False)


@command("zrevrangebyscore", arity=-4, flags="readonly", keys=(1, 1, 1), group="sorted_set",
         since="2.2.0", complexity=_RANGE_COMPLEXITY,
         summary="Return a range of members in a sorted set, by score, with scores ordered "
                 "from high to low",
         key_specs=[ks("RO access", 1)])
def zrevrangebyscore(ctx: Ctx, argv: list[bytes]) -> object:
    """ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT offset count]"""
    return _zrange(ctx, argv, 1, _SCORE, True)


@command("zrangebylex", arity=-4, flags="readonly", keys=(1, 1, 1), group="sorted_set",
         since="2.8.9", complexity=_RANGE_COMPLEXITY,
         summary="Return a range of members in a sorted set, by lexicographical range",
         key_specs=[ks("RO access", 1)])
def zrangebylex(ctx: Ctx, argv: list[bytes]) -> object:
    """ZRANGEBYLEX key min max [LIMIT offset count]"""
    return _zrange(ctx, argv, 1, _LEX, False)


@command("zrevrangebylex", arity=-4, flags="readonly", keys=(1, 1, 1), group="sorted_set",
         since="2.8.9", complexity=_RANGE_COMPLEXITY,
         summary="Return a range of members in a sorted set, by lexicographical range, ordered "
                 "from higher to lower strings.",
         key_specs=[ks("RO access", 1)])
def zrevrangebylex(ctx: Ctx, argv: list[bytes]) -> object:
    """ZREVRANGEBYLEX key max min [LIMIT offset count]"""
    return _zrange(ctx, argv, 1, _LEX, True)


@command("zrevrange", arity=-4, flags="readonly", keys=(1, 1, 1), group="sorted_set",
         since="1.2.0", complexity=_RANGE_COMPLEXITY,
         summary="Return a range of members in a sorted set, by index, with scores ordered "
                 "from high to low",
         key_specs=[ks("RO access", 1)])
def zrevrange(ctx: Ctx, argv: list[bytes]) -> object:
    """ZREVRANGE key start stop [WITHSCORES]"""
    return _zrange(ctx, argv, 1, _RANK, True)


# -- ZREMRANGEBY* ------------------------------------------------------------------------------
def _remove_range(ctx: Ctx, key: bytes, z: ZSet | None, lo: int, hi: int) -> int:
    if z is None or lo >= hi:
        return 0
    removed = len(z.remove_positions(lo, hi))
    ctx.notify(NOTIFY_ZSET, ctx.argv[0].lower(), key)  # zremrangebyscore ...
    emptied(ctx, key, z)
    ctx.modified(key, removed)
    ctx.propagate_argv()
    return removed


@command("zremrangebyscore", arity=4, flags="write", keys=(1, 1, 1), group="sorted_set",
         since="1.2.0",
         complexity="O(log(N)+M) with N being the number of elements in the sorted set and M "
                    "the number of elements removed by the operation.",
         summary="Remove all members in a sorted set within the given scores",
         key_specs=[ks("RW delete", 1)])
def zremrangebyscore(ctx: Ctx, argv: list[bytes]) -> object:
    """ZREMRANGEBYSCORE key min max"""
    rng = score_range(argv[2], argv[3])
    z = write_zset(ctx, argv[1])
    lo, hi = score_positions(z, rng) if z is not None else (0, 0)
    return _remove_range(ctx, argv[1], z, lo, hi)


@command("zremrangebyrank", arity=4, flags="write", keys=(1, 1, 1), group="sorted_set",
         since="2.0.0",
         complexity="O(log(N)+M) with N being the number of elements in the sorted set and M "
                    "the number of elements removed by the operation.",
         summary="Remove all members in a sorted set within the given indexes",
         key_specs=[ks("RW delete", 1)])
def zremrangebyrank(ctx: Ctx, argv: list[bytes]) -> object:
    """ZREMRANGEBYRANK key start stop"""
    start, end = parse_int(argv[2]), parse_int(argv[3])
    z = write_zset(ctx, argv[1])
    lo, hi = rank_positions(len(z), start, end) if z is not None else (0, 0)
    return _remove_range(ctx, argv[1], z, lo, hi)


@command("zremrangebylex", arity=4, flags="write", keys=(1, 1, 1), group="sorted_set",
         since="2.8.9",
         complexity="O(log(N)+M) with N being the number of elements in the sorted set and M "
                    "the number of elements removed by the operation.",
         summary="Remove all members in a sorted set between the given lexicographical range",
         key_specs=[ks("RW delete", 1)])
def zremrangebylex(ctx: Ctx, argv: list[bytes]) -> object:
    """ZREMRANGEBYLEX key min max"""
    rng = lex_range(argv[2], argv[3])
    z = write_zset(ctx, argv[1])
    lo, hi = lex_positions(z, rng) if z is not None else (0, 0)
    return _remove_range(ctx, argv[1], z, lo, hi)
