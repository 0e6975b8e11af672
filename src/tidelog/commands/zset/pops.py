"""ZPOPMIN, ZPOPMAX, ZMPOP and the blocking BZPOPMIN, BZPOPMAX and BZMPOP.

Propagation (as redis-server 7.0.15 writes its AOF): ZPOPMIN and ZPOPMAX
propagate themselves; ZMPOP and BZMPOP as ``ZPOPMIN|ZPOPMAX key <number
popped>``; BZPOPMIN and BZPOPMAX as ``ZPOPMIN|ZPOPMAX key``.  The blocking
forms park the client with a :class:`~tidelog.commands.contract.Wait` (the
engine's blocked clients, served in the order they blocked when a key gets
data); inside MULTI they answer their timeout reply at once."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ...config import NOTIFY_ZSET
from ...errors import (
    MPOP_COUNT_POSITIVE,
    NUMKEYS_NOT_POSITIVE,
    POSITIVE_OUT_OF_RANGE,
    SYNTAX,
    TIMEOUT_NEGATIVE,
    TIMEOUT_NOT_FLOAT,
    CommandError,
)
from ...resp.replies import NULL_ARRAY
from ...types.zset import ZSet
from ..args import ArgReader, parse_int
from ..contract import Wait
from ..key_specs import ks
from ..table import command
from .common import emptied, parse_score, write_zset

if TYPE_CHECKING:
    from ..contract import Ctx




# -- ZPOPMIN, ZPOPMAX, ZMPOP --------------------------------------------------------------------
def _pop(ctx: Ctx, key: bytes, z: ZSet, count: int, highest: bool) -> list[tuple[bytes, float]]:
    popped = z.pop(count, highest)
    ctx.notify(NOTIFY_ZSET, b"zpopmax" if highest else b"zpopmin", key)
    emptied(ctx, key, z)
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
    z = write_zset(ctx, key)
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
         summary="Remove and return members with the lowest scores in a sorted set",
         key_specs=[ks("RW access delete", 1)])
def zpopmin(ctx: Ctx, argv: list[bytes]) -> object:
    """ZPOPMIN key [count]"""
    return _zpop(ctx, argv, False)


@command("zpopmax", arity=-2, flags="write fast", keys=(1, 1, 1), group="sorted_set",
         since="5.0.0",
         complexity="O(log(N)*M) with N being the number of elements in the sorted set, and M "
                    "being the number of elements popped.",
         summary="Remove and return members with the highest scores in a sorted set",
         key_specs=[ks("RW access delete", 1)])
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
    r = ArgReader(argv, start=where_at + 1)
    while r.more():
        if count == -1 and r.next_upper() == b"COUNT" and r.more():
            count = r.next_int(MPOP_COUNT_POSITIVE)
            if count < 1:
                raise CommandError(MPOP_COUNT_POSITIVE)
        else:
            raise CommandError(SYNTAX)
    return argv[numkeys_at + 1:where_at], where == b"MAX", max(count, 1)


def _mpop_first(ctx: Ctx, keys: list[bytes], highest: bool, count: int) -> object:
    """Pop from the first non-empty sorted set of ``keys``: ``[key, [[member,
    score], ...]]``, propagated as ZPOPMIN/ZPOPMAX key <popped count> (what
    Redis writes for ZMPOP and BZMPOP); None when every key is empty."""
    for key in keys:
        z = write_zset(ctx, key)
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
         summary="Remove and return members with scores in a sorted set",
         key_specs=[ks("RW access delete", 1, keynum=(0, 1, 1))])
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
        z = write_zset(ctx, key)
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
                 "sets, or block until one is available",
         key_specs=[ks("RW access delete", 1, -2)])
def bzpopmin(ctx: Ctx, argv: list[bytes]) -> object:
    """BZPOPMIN key [key ...] timeout"""
    return _bzpop(ctx, argv, False)


@command("bzpopmax", arity=-3, flags="write noscript blocking fast", keys=(1, -2, 1),
         group="sorted_set", since="5.0.0",
         complexity="O(log(N)) with N being the number of elements in the sorted set.",
         summary="Remove and return the member with the highest score from one or more sorted "
                 "sets, or block until one is available",
         key_specs=[ks("RW access delete", 1, -2)])
def bzpopmax(ctx: Ctx, argv: list[bytes]) -> object:
    """BZPOPMAX key [key ...] timeout"""
    return _bzpop(ctx, argv, True)


@command("bzmpop", arity=-5, flags="write blocking movablekeys", group="sorted_set",
         since="7.0.0",
         complexity="O(K) + O(M*log(N)) where K is the number of provided keys, N being the "
                    "number of elements in the sorted set, and M being the number of elements "
                    "popped.",
         summary="Remove and return members with scores in a sorted set or block until one "
                 "is available",
         key_specs=[ks("RW access delete", 2, keynum=(0, 1, 1))])
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
