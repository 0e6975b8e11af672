"""ZRANDMEMBER and ZSCAN: members sampled and walked.  ZRANDMEMBER changes
nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import LONG_OUT_OF_RANGE, SYNTAX, VALUE_OUT_OF_RANGE, CommandError
from ...glob import glob_match
from ...resp.doubles import format_double
from ..args import INT64_MAX, parse_int
from ..key_specs import ND, ks
from ..scan_args import parse_cursor, parse_scan_options
from ..table import command
from .common import pairs_reply, read_zset

if TYPE_CHECKING:
    from ..contract import Ctx




# -- ZRANDMEMBER ---------------------------------------------------------------------------------
@command("zrandmember", arity=-2, flags="readonly", keys=(1, 1, 1), group="sorted_set",
         since="6.2.0",
         complexity="O(N) where N is the number of members returned",
         summary="Get one or multiple random elements from a sorted set",
         tips=(ND,),
         key_specs=[ks("RO access", 1)])
def zrandmember(ctx: Ctx, argv: list[bytes]) -> object:
    """ZRANDMEMBER key [count [WITHSCORES]]"""
    if len(argv) == 2:
        z = read_zset(ctx, argv[1])
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
    z = read_zset(ctx, argv[1])
    if z is None or count == 0:
        return []
    if count < 0:
        pairs = z.random_with_repeats(-count)
    elif count >= len(z):
        pairs = z.items()
    else:
        pairs = z.random_distinct(count)
    return pairs_reply(ctx, pairs, withscores)


# -- ZSCAN ----------------------------------------------------------------------------------------
@command("zscan", arity=-3, flags="readonly", keys=(1, 1, 1), group="sorted_set",
         since="2.8.0",
         complexity="O(1) for every call. O(N) for a complete iteration, including enough "
                    "command calls for the cursor to return back to 0. N is the number of "
                    "elements inside the collection.",
         summary="Incrementally iterate sorted sets elements and associated scores",
         tips=(ND,),
         key_specs=[ks("RO access", 1)])
def zscan(ctx: Ctx, argv: list[bytes]) -> object:
    """ZSCAN key cursor [MATCH pattern] [COUNT count] [NOSCORES]"""
    cursor = parse_cursor(argv[2])
    z = read_zset(ctx, argv[1])
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
