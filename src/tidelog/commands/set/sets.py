"""Sets: SADD, SREM, SMEMBERS, SISMEMBER, SMISMEMBER, SCARD, SPOP, SRANDMEMBER,
SMOVE, SINTER, SINTERCARD, SUNION, SDIFF, the STORE forms and SSCAN.

The value is :class:`~tidelog.types.set.Set` (intset, listpack or hashtable,
as Redis 7.2+ encodes it; the limits come from ``set-max-intset-entries``,
``set-max-listpack-entries`` and ``set-max-listpack-value``).  Replies list
intset members in numeric order and listpack members in insertion order, as
Redis does; a hashtable's order is ours (Redis's is its hash order).

Propagation: SPOP is random, so it propagates what it did: ``SREM key
member ...`` (1024 members to a command), or ``DEL key`` when it took the
whole set.  SRANDMEMBER changes nothing.  Every other write propagates
itself (the result is determined by the data), and nothing when it changed
nothing.  A set emptied by a command is deleted, as in Redis.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...config import NOTIFY_GENERIC, NOTIFY_SET
from ...errors import (
    LIMIT_CANT_BE_NEGATIVE,
    LONG_OUT_OF_RANGE,
    NUMKEYS_NOT_POSITIVE,
    NUMKEYS_TOO_MANY,
    POSITIVE_OUT_OF_RANGE,
    SYNTAX,
    WRONGTYPE,
    CommandError,
)
from ...glob import glob_match
from ...resp.replies import SetReply
from ...types.set import Set, SetLimits
from ..args import INT64_MAX, ArgReader, parse_int
from ..key_specs import ND, ks
from ..lookup import lookup_read_typed
from ..scan_args import parse_cursor, parse_scan_options
from ..table import command

if TYPE_CHECKING:
    from ..contract import Ctx

# SPOP's SREM effects carry at most this many members each.
SPOP_PROPAGATION_BATCH = 1024



def limits(ctx: Ctx) -> SetLimits:
    config = ctx.config
    return SetLimits(config["set-max-intset-entries"], config["set-max-listpack-entries"],
                     config["set-max-listpack-value"])


def _read_set(ctx: Ctx, key: bytes) -> Set | None:
    """The set at key for a read (counted in keyspace hits/misses)."""
    return lookup_read_typed(ctx, key, Set)


def _write_set(ctx: Ctx, key: bytes) -> Set | None:
    return ctx.db.get_typed(key, Set)


def _emptied(ctx: Ctx, key: bytes, s: Set) -> None:
    """After a removal: a set left empty goes away."""
    if not len(s):
        ctx.db.delete(key)
        ctx.notify(NOTIFY_GENERIC, b"del", key)


# -- SADD, SREM ---------------------------------------------------------------------
@command("sadd", arity=-3, flags="write denyoom fast", keys=(1, 1, 1), group="set",
         since="1.0.0",
         complexity="O(1) for each element added, so O(N) to add N elements when the command "
                    "is called with multiple arguments.",
         summary="Add one or more members to a set",
         key_specs=[ks("RW insert", 1)])
def sadd(ctx: Ctx, argv: list[bytes]) -> object:
    """SADD key member [member ...]"""
    key = argv[1]
    lim = limits(ctx)
    s = _write_set(ctx, key)
    hint = len(argv) - 2
    if s is None:
        s = Set.for_first(argv[2], hint, lim)
        ctx.db.set(key, s)
        ctx.ready(key)
    else:
        s.prepare(hint, lim)
    added = s.add_many(argv[2:], lim)
    if added:
        ctx.modified(key, added)
        ctx.propagate_argv()
        ctx.notify(NOTIFY_SET, b"sadd", key)
    return added


@command("srem", arity=-3, flags="write fast", keys=(1, 1, 1), group="set", since="1.0.0",
         complexity="O(N) where N is the number of members to be removed.",
         summary="Remove one or more members from a set",
         key_specs=[ks("RW delete", 1)])
def srem(ctx: Ctx, argv: list[bytes]) -> object:
    """SREM key member [member ...]"""
    key = argv[1]
    s = _write_set(ctx, key)
    if s is None:
        return 0
    removed = 0
    for member in argv[2:]:
        if s.remove(member):
            removed += 1
            if not len(s):
                break
    if removed:
        ctx.notify(NOTIFY_SET, b"srem", key)
        _emptied(ctx, key, s)
        ctx.modified(key, removed)
        ctx.propagate_argv()
    return removed


# -- reads ----------------------------------------------------------------------------
@command("smembers", arity=2, flags="readonly", keys=(1, 1, 1), group="set", since="1.0.0",
         complexity="O(N) where N is the set cardinality.", summary="Get all the members in a set",
         tips=("nondeterministic_output_order",),
         key_specs=[ks("RO access", 1)])
def smembers(ctx: Ctx, argv: list[bytes]) -> object:
    """SMEMBERS key"""
    s = _read_set(ctx, argv[1])
    return SetReply([] if s is None else s.members())


@command("sismember", arity=3, flags="readonly fast", keys=(1, 1, 1), group="set",
         since="1.0.0", complexity="O(1)",
         summary="Determine if a given value is a member of a set",
         key_specs=[ks("RO", 1)])
def sismember(ctx: Ctx, argv: list[bytes]) -> object:
    """SISMEMBER key member"""
    s = _read_set(ctx, argv[1])
    return int(s is not None and argv[2] in s)


@command("smismember", arity=-3, flags="readonly fast", keys=(1, 1, 1), group="set",
         since="6.2.0", complexity="O(N) where N is the number of elements being checked for "
                                   "membership",
         summary="Returns the membership associated with the given elements for a set",
         key_specs=[ks("RO access", 1)])
def smismember(ctx: Ctx, argv: list[bytes]) -> object:
    """SMISMEMBER key member [member ...]"""
    s = _read_set(ctx, argv[1])
    if s is None:
        return [0] * (len(argv) - 2)
    return [int(m in s) for m in argv[2:]]


@command("scard", arity=2, flags="readonly fast", keys=(1, 1, 1), group="set", since="1.0.0",
         complexity="O(1)", summary="Get the number of members in a set",
         key_specs=[ks("RO", 1)])
def scard(ctx: Ctx, argv: list[bytes]) -> object:
    """SCARD key"""
    s = _read_set(ctx, argv[1])
    return 0 if s is None else len(s)


# -- SPOP, SRANDMEMBER ------------------------------------------------------------------
@command("spop", arity=-2, flags="write fast", keys=(1, 1, 1), group="set", since="1.0.0",
         complexity="Without the count argument O(1), otherwise O(N) where N is the value of "
                    "the passed count.",
         summary="Remove and return one or multiple random members from a set",
         tips=(ND,),
         key_specs=[ks("RW access delete", 1)])
def spop(ctx: Ctx, argv: list[bytes]) -> object:
    """SPOP key [count]"""
    if len(argv) > 3:
        raise CommandError(SYNTAX)
    key = argv[1]
    if len(argv) == 3:
        return _spop_count(ctx, key, argv[2])
    s = _write_set(ctx, key)
    if s is None:
        return None
    member = s.random_member()
    s.remove(member)
    ctx.notify(NOTIFY_SET, b"spop", key)
    _emptied(ctx, key, s)
    ctx.modified(key)
    ctx.effect([b"SREM", key, member])
    return member


def _spop_count(ctx: Ctx, key: bytes, arg: bytes) -> object:
    count = parse_int(arg, POSITIVE_OUT_OF_RANGE)
    if count < 0:
        raise CommandError(POSITIVE_OUT_OF_RANGE)
    s = _write_set(ctx, key)
    if s is None or count == 0:
        return SetReply([])
    if count >= len(s):  # the whole set: the key goes, propagated as DEL
        members = s.members()
        ctx.db.delete(key)
        ctx.modified(key, len(members))
        ctx.effect([b"DEL", key])
        ctx.notify(NOTIFY_SET, b"spop", key)
        ctx.notify(NOTIFY_GENERIC, b"del", key)
        return SetReply(members)
    popped = s.random_distinct(count)
    for member in popped:
        s.remove(member)
    ctx.modified(key, count)
    ctx.notify(NOTIFY_SET, b"spop", key)
    for at in range(0, count, SPOP_PROPAGATION_BATCH):
        ctx.effect([b"SREM", key, *popped[at:at + SPOP_PROPAGATION_BATCH]])
    return SetReply(popped)


@command("srandmember", arity=-2, flags="readonly", keys=(1, 1, 1), group="set",
         since="1.0.0",
         complexity="Without the count argument O(1), otherwise O(N) where N is the absolute "
                    "value of the passed count.",
         summary="Get one or multiple random members from a set",
         tips=(ND,),
         key_specs=[ks("RO access", 1)])
def srandmember(ctx: Ctx, argv: list[bytes]) -> object:
    """SRANDMEMBER key [count]"""
    if len(argv) > 3:
        raise CommandError(SYNTAX)
    if len(argv) == 2:
        s = _read_set(ctx, argv[1])
        return None if s is None else s.random_member()
    count = parse_int(argv[2])
    if count < -INT64_MAX:
        raise CommandError(LONG_OUT_OF_RANGE)
    s = _read_set(ctx, argv[1])
    if s is None or count == 0:
        return []
    if count < 0:  # repeats allowed
        return s.random_with_repeats(-count)
    if count >= len(s):
        return s.members()
    return s.random_distinct(count)


# -- SMOVE ------------------------------------------------------------------------------
@command("smove", arity=4, flags="write fast", keys=(1, 2, 1), group="set", since="1.0.0",
         complexity="O(1)", summary="Move a member from one set to another",
         key_specs=[ks("RW access delete", 1), ks("RW insert", 2)])
def smove(ctx: Ctx, argv: list[bytes]) -> object:
    """SMOVE source destination member"""
    src_key, dst_key, member = argv[1], argv[2], argv[3]
    db = ctx.db
    src = db.get(src_key)
    dst = db.get(dst_key)
    if src is None:
        return 0
    if type(src) is not Set or (dst is not None and type(dst) is not Set):
        raise CommandError(WRONGTYPE)
    if src is dst:
        return int(member in src)
    if not src.remove(member):
        return 0
    ctx.notify(NOTIFY_SET, b"srem", src_key)
    _emptied(ctx, src_key, src)
    ctx.modified(src_key)
    lim = limits(ctx)
    if dst is None:
        dst = Set.for_first(member, 1, lim)
        db.set(dst_key, dst)
        ctx.ready(dst_key)
    dst.add(member, lim)
    ctx.modified(dst_key)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_SET, b"sadd", dst_key)
    return 1


# -- SINTER, SUNION, SDIFF and their STORE forms ------------------------------------------
def _sets_of(ctx: Ctx, keys: list[bytes], write: bool = False) -> list[Set | None]:
    """The set at every key (None for a missing one); WRONGTYPE for any
    other type, every key checked before any work, as in Redis.  The STORE
    forms look up as writes (not counted in keyspace hits/misses)."""
    if write:
        return [_write_set(ctx, key) for key in keys]
    return [_read_set(ctx, key) for key in keys]


def _inter_members(sets: list[Set | None], limit: int = 0) -> list[bytes]:
    """Members of every set, in the smallest set's order (at most ``limit``;
    0: all).  O(N*M) for the smallest set's N members and M sets."""
    present = [s for s in sets if s is not None]
    if not present or len(present) < len(sets):
        return []
    ordered = sorted(present, key=len)
    first, others = ordered[0], ordered[1:]
    out = []
    for member in first.members():
        if all(member in other for other in others if other is not first):
            out.append(member)
            if limit and len(out) >= limit:
                break
    return out


def _built(members: list[bytes], lim: SetLimits) -> Set:
    """A set built by adding ``members`` in order to an empty intset, as
    Redis builds a computed set (its encoding follows from those adds)."""
    result = Set()
    result.add_many(members, lim)
    return result


def _union(sets: list[Set | None], lim: SetLimits) -> Set:
    result = Set()
    for s in sets:
        if s is not None:
            result.add_many(s.members(), lim)
    return result


def _diff(sets: list[Set | None], lim: SetLimits) -> Set:
    first = sets[0]
    if first is None:
        return Set()
    others = [s for s in sets[1:] if s is not None]
    if any(s is first for s in others):
        return Set()
    return _built([m for m in first.members() if not any(m in s for s in others)], lim)


def _store(ctx: Ctx, dst_key: bytes, result: Set) -> int:
    """Put a computed set at ``dst_key`` (replacing any value and its TTL),
    or delete ``dst_key`` when it is empty."""
    n = len(result)
    if n:
        ctx.db.set(dst_key, result)
        ctx.modified(dst_key)
        ctx.ready(dst_key)
        ctx.propagate_argv()
        ctx.notify(NOTIFY_SET, ctx.argv[0].lower(), dst_key)  # sinterstore ...
    elif ctx.db.delete(dst_key):
        ctx.modified(dst_key)
        ctx.ready(dst_key)
        ctx.propagate_argv()
        ctx.notify(NOTIFY_GENERIC, b"del", dst_key)
    return n


@command("sinter", arity=-2, flags="readonly", keys=(1, -1, 1), group="set", since="1.0.0",
         complexity="O(N*M) worst case where N is the cardinality of the smallest set and M is "
                    "the number of sets.",
         summary="Intersect multiple sets",
         tips=("nondeterministic_output_order",),
         key_specs=[ks("RO access", 1, -1)])
def sinter(ctx: Ctx, argv: list[bytes]) -> object:
    """SINTER key [key ...]"""
    return SetReply(_inter_members(_sets_of(ctx, argv[1:])))


@command("sinterstore", arity=-3, flags="write denyoom", keys=(1, -1, 1), group="set",
         since="1.0.0",
         complexity="O(N*M) worst case where N is the cardinality of the smallest set and M is "
                    "the number of sets.",
         summary="Intersect multiple sets and store the resulting set in a key",
         key_specs=[ks("RW update", 1), ks("RO access", 2, -1)])
def sinterstore(ctx: Ctx, argv: list[bytes]) -> object:
    """SINTERSTORE destination key [key ...]"""
    sets = _sets_of(ctx, argv[2:], write=True)
    return _store(ctx, argv[1], _built(_inter_members(sets), limits(ctx)))


@command("sintercard", arity=-3, flags="readonly movablekeys", group="set", since="7.0.0",
         complexity="O(N*M) worst case where N is the cardinality of the smallest set and M is "
                    "the number of sets.",
         summary="Intersect multiple sets and return the cardinality of the result",
         key_specs=[ks("RO access", 1, keynum=(0, 1, 1))])
def sintercard(ctx: Ctx, argv: list[bytes]) -> object:
    """SINTERCARD numkeys key [key ...] [LIMIT limit]"""
    numkeys = parse_int(argv[1], NUMKEYS_NOT_POSITIVE)
    if numkeys < 1:
        raise CommandError(NUMKEYS_NOT_POSITIVE)
    if numkeys > len(argv) - 2:
        raise CommandError(NUMKEYS_TOO_MANY)
    keys = argv[2:2 + numkeys]
    r = ArgReader(argv, 2 + numkeys)
    limit = 0
    while r.more():
        if r.next_upper() == b"LIMIT" and r.more():
            limit = r.next_int(LIMIT_CANT_BE_NEGATIVE)
            if limit < 0:
                raise CommandError(LIMIT_CANT_BE_NEGATIVE)
        else:
            raise CommandError(SYNTAX)
    return len(_inter_members(_sets_of(ctx, keys), limit))


def _card_args(argv: list[bytes], approx_allowed: bool) -> tuple[list[bytes], int]:
    """``numkeys key [key ...]`` then LIMIT (and APPROX where allowed), read
    as SINTERCARD reads them: the keys and the limit (0: none)."""
    numkeys = parse_int(argv[1], NUMKEYS_NOT_POSITIVE)
    if numkeys < 1:
        raise CommandError(NUMKEYS_NOT_POSITIVE)
    if numkeys > len(argv) - 2:
        raise CommandError(NUMKEYS_TOO_MANY)
    r = ArgReader(argv, 2 + numkeys)
    limit = 0
    while r.more():
        option = r.next_upper()
        if option == b"LIMIT" and r.more():
            limit = r.next_int(LIMIT_CANT_BE_NEGATIVE)
            if limit < 0:
                raise CommandError(LIMIT_CANT_BE_NEGATIVE)
        elif option == b"APPROX" and approx_allowed:
            pass  # an exact count is within any estimate's error
        else:
            raise CommandError(SYNTAX)
    return argv[2:2 + numkeys], limit


@command("sunioncard", arity=-3, flags="readonly movablekeys", group="set", since="8.10.0",
         complexity="O(N) where N is the total number of elements in all given sets.",
         summary="Returns the number of members of the union of multiple sets.",
         key_specs=[ks("RO access", 1, keynum=(0, 1, 1))])
def sunioncard(ctx: Ctx, argv: list[bytes]) -> object:
    """SUNIONCARD numkeys key [key ...] [APPROX] [LIMIT limit]

    https://redis.io/docs/latest/commands/sunioncard/ -- APPROX is accepted
    and the count stays exact.  Cost: O(N) for the N members of all the
    sets (less when LIMIT is reached)."""
    keys, limit = _card_args(argv, approx_allowed=True)
    sets = [s for s in _sets_of(ctx, keys) if s is not None]
    if not sets:
        return 0
    seen: set[bytes] = set(sets[0].members())
    if limit and len(seen) >= limit:
        return limit
    for s in sets[1:]:
        for member in s.members():
            if member not in seen:
                seen.add(member)
                if limit and len(seen) >= limit:
                    return limit
    return len(seen)


@command("sdiffcard", arity=-3, flags="readonly movablekeys", group="set", since="8.10.0",
         complexity="O(N) where N is the total number of elements in all given sets.",
         summary="Returns the number of members of the difference between the first set and "
                 "all successive sets.",
         key_specs=[ks("RO access", 1, keynum=(0, 1, 1))])
def sdiffcard(ctx: Ctx, argv: list[bytes]) -> object:
    """SDIFFCARD numkeys key [key ...] [LIMIT limit]

    https://redis.io/docs/latest/commands/sdiffcard/.  Cost: O(N*M) for the
    first set's N members and M other sets (less when LIMIT is reached)."""
    keys, limit = _card_args(argv, approx_allowed=False)
    sets = _sets_of(ctx, keys)
    first = sets[0]
    if first is None:
        return 0
    others = [s for s in sets[1:] if s is not None]
    if any(s is first for s in others):
        return 0
    count = 0
    for member in first.members():
        if not any(member in s for s in others):
            count += 1
            if count == limit:
                break
    return count


@command("sunion", arity=-2, flags="readonly", keys=(1, -1, 1), group="set", since="1.0.0",
         complexity="O(N) where N is the total number of elements in all given sets.",
         summary="Add multiple sets",
         tips=("nondeterministic_output_order",),
         key_specs=[ks("RO access", 1, -1)])
def sunion(ctx: Ctx, argv: list[bytes]) -> object:
    """SUNION key [key ...]"""
    return SetReply(_union(_sets_of(ctx, argv[1:]), limits(ctx)).members())


@command("sunionstore", arity=-3, flags="write denyoom", keys=(1, -1, 1), group="set",
         since="1.0.0",
         complexity="O(N) where N is the total number of elements in all given sets.",
         summary="Add multiple sets and store the resulting set in a key",
         key_specs=[ks("OW update", 1), ks("RO access", 2, -1)])
def sunionstore(ctx: Ctx, argv: list[bytes]) -> object:
    """SUNIONSTORE destination key [key ...]"""
    return _store(ctx, argv[1], _union(_sets_of(ctx, argv[2:], write=True), limits(ctx)))


@command("sdiff", arity=-2, flags="readonly", keys=(1, -1, 1), group="set", since="1.0.0",
         complexity="O(N) where N is the total number of elements in all given sets.",
         summary="Subtract multiple sets",
         tips=("nondeterministic_output_order",),
         key_specs=[ks("RO access", 1, -1)])
def sdiff(ctx: Ctx, argv: list[bytes]) -> object:
    """SDIFF key [key ...]"""
    return SetReply(_diff(_sets_of(ctx, argv[1:]), limits(ctx)).members())


@command("sdiffstore", arity=-3, flags="write denyoom", keys=(1, -1, 1), group="set",
         since="1.0.0",
         complexity="O(N) where N is the total number of elements in all given sets.",
         summary="Subtract multiple sets and store the resulting set in a key",
         key_specs=[ks("OW update", 1), ks("RO access", 2, -1)])
def sdiffstore(ctx: Ctx, argv: list[bytes]) -> object:
    """SDIFFSTORE destination key [key ...]"""
    return _store(ctx, argv[1], _diff(_sets_of(ctx, argv[2:], write=True), limits(ctx)))


# -- SSCAN ------------------------------------------------------------------------------
@command("sscan", arity=-3, flags="readonly", keys=(1, 1, 1), group="set", since="2.8.0",
         complexity="O(1) for every call. O(N) for a complete iteration, including enough "
                    "command calls for the cursor to return back to 0. N is the number of "
                    "elements inside the collection.",
         summary="Incrementally iterate Set elements",
         tips=(ND,),
         key_specs=[ks("RO access", 1)])
def sscan(ctx: Ctx, argv: list[bytes]) -> object:
    """SSCAN key cursor [MATCH pattern] [COUNT count]"""
    cursor = parse_cursor(argv[2])
    s = _read_set(ctx, argv[1])
    if s is None:
        return [b"0", []]
    opts = parse_scan_options(argv, 3)
    pattern = opts.pattern
    cursor, found = s.scan(cursor, opts.count)
    if pattern is not None:
        found = [m for m in found if glob_match(pattern, m)]
    return [str(cursor).encode(), found]
