"""ZUNION, ZINTER, ZDIFF, their STORE forms, and ZINTERCARD: sorted sets (and
plain sets, scored 1) combined, with WEIGHTS and AGGREGATE."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ...errors import (
    LIMIT_CANT_BE_NEGATIVE,
    SYNTAX,
    WEIGHT_NOT_FLOAT,
    WRONGTYPE,
    CommandError,
    at_least_one_key,
)
from ...types.set import Set
from ...types.zset import ZSet
from ..args import ArgReader, parse_int
from ..key_specs import ks
from ..lookup import lookup_read
from ..table import command
from .common import pairs_reply, parse_score, store_result

if TYPE_CHECKING:
    from ..contract import Ctx




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
    r = ArgReader(argv, start=numkeys_at + 1 + numkeys)
    while r.more():
        option = r.next_upper()
        left = r.remaining()  # after the option
        if op != b"diff" and not card and left >= numkeys and option == b"WEIGHTS":
            weights = [parse_score(a, WEIGHT_NOT_FLOAT) for a in r.take(numkeys)]
        elif op != b"diff" and not card and left >= 1 and option == b"AGGREGATE":
            aggregate = r.next_upper()
            if aggregate not in (b"SUM", b"MIN", b"MAX", b"COUNT"):  # COUNT: Redis 8.8
                raise CommandError(SYNTAX)
        elif store is None and not card and option == b"WITHSCORES":
            withscores = True
        elif card and left >= 1 and option == b"LIMIT":
            limit = r.next_int(LIMIT_CANT_BE_NEGATIVE)
            if limit < 0:
                raise CommandError(LIMIT_CANT_BE_NEGATIVE)
        else:
            raise CommandError(SYNTAX)
    result = _compute(sources, weights, aggregate, op, limit if card else 0)
    if card:
        return len(result)
    pairs = sorted(((m, s) for m, s in result.items()), key=lambda p: (p[1], p[0]))
    if store is not None:
        return store_result(ctx, store, pairs)
    return pairs_reply(ctx, pairs, withscores)


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
    # COMMAND INFO's key specs (facts read from redis-server 7.0.15).
    specs = ([ks("OW update", 1), ks("RO access", 2, keynum=(0, 1, 1))] if store
             else [ks("RO access", 1, keynum=(0, 1, 1))])
    command(name, arity=arity, flags=flags, keys=keys, group="sorted_set", since=since,
            complexity=complexity, summary=summary, key_specs=specs)(handler)


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
         summary="Intersect multiple sorted sets and return the cardinality of the result",
         key_specs=[ks("RO access", 1, keynum=(0, 1, 1))])
def zintercard(ctx: Ctx, argv: list[bytes]) -> object:
    """ZINTERCARD numkeys key [key ...] [LIMIT limit]"""
    return _setop(ctx, argv, 1, b"inter", card=True)
