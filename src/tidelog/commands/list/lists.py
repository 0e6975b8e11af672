"""Lists read and changed in place: LLEN, LRANGE, LINDEX, LPOS, LSET,
LINSERT, LREM and LTRIM.  The pushes, pops and moves are in the modules
beside this one.  A write goes out as it came, and only when it changed
something; a list emptied by LREM or LTRIM is deleted."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ... import errors
from ...config import NOTIFY_LIST
from ...errors import SYNTAX, CommandError
from ...resp.replies import OK
from ..args import INT64_MIN, ArgReader, parse_int
from ..key_specs import ks
from ..table import command
from .common import emptied, listpack_fill, parse_positive, read_list, write_list

if TYPE_CHECKING:
    from ..contract import Ctx


# -- reading -----------------------------------------------------------------------------

@command("llen", arity=2, flags="readonly fast", keys=(1, 1, 1), group="list", since="1.0.0",
         complexity="O(1)", summary="Returns the length of a list.",
         key_specs=[ks("RO", 1)])
def llen(ctx: Ctx, argv: list[bytes]) -> Any:
    """LLEN key"""
    lst = read_list(ctx, argv[1])
    return 0 if lst is None else len(lst)


@command("lrange", arity=4, flags="readonly", keys=(1, 1, 1), group="list", since="1.0.0",
         complexity="O(S+N) where S is the distance of start offset from HEAD for small lists, "
                    "from nearest end (HEAD or TAIL) for large lists; and N is the number of "
                    "elements in the specified range.",
         summary="Returns a range of elements from a list.",
         key_specs=[ks("RO access", 1)])
def lrange(ctx: Ctx, argv: list[bytes]) -> Any:
    """LRANGE key start stop"""
    start, stop = parse_int(argv[2]), parse_int(argv[3])
    lst = read_list(ctx, argv[1])
    return [] if lst is None else lst.range(start, stop)


@command("lindex", arity=3, flags="readonly", keys=(1, 1, 1), group="list", since="1.0.0",
         complexity="O(N) where N is the number of elements to traverse to get to the element "
                    "at index. This makes asking for the first or the last element of the list "
                    "O(1).",
         summary="Returns an element from a list by its index.",
         key_specs=[ks("RO access", 1)])
def lindex(ctx: Ctx, argv: list[bytes]) -> Any:
    """LINDEX key index"""
    lst = read_list(ctx, argv[1])
    if lst is None:
        return None
    return lst.index(parse_int(argv[2]))


@command("lpos", arity=-3, flags="readonly", keys=(1, 1, 1), group="list", since="6.0.6",
         complexity="O(N) where N is the number of elements in the list, for the average case. "
                    "When searching for elements near the head or the tail of the list, or "
                    "when the MAXLEN option is provided, the command may run in constant time.",
         summary="Returns the index of matching elements in a list.",
         key_specs=[ks("RO access", 1)])
def lpos(ctx: Ctx, argv: list[bytes]) -> Any:
    """LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]"""
    rank, count, maxlen = 1, -1, 0
    r = ArgReader(argv, 3)
    while r.more():
        opt = r.next_upper()
        if opt == b"RANK" and r.more():
            rank = r.next_int()
            if rank == INT64_MIN:  # Redis 7.2, redis/redis#12167
                raise CommandError(errors.LONG_OUT_OF_RANGE)
            if rank == 0:
                raise CommandError(errors.LPOS_RANK_ZERO)
        elif opt == b"COUNT" and r.more():
            count = parse_positive(r.next_bytes(), errors.LPOS_COUNT_NEGATIVE)
        elif opt == b"MAXLEN" and r.more():
            maxlen = parse_positive(r.next_bytes(), errors.LPOS_MAXLEN_NEGATIVE)
        else:
            raise CommandError(SYNTAX)
    lst = read_list(ctx, argv[1])
    if lst is None:
        return [] if count != -1 else None
    found = lst.positions(argv[2], rank, max(count, 0) if count != -1 else 1, maxlen)
    if count != -1:
        return found
    return found[0] if found else None


# -- changing in place -------------------------------------------------------------------

@command("lset", arity=4, flags="write denyoom", keys=(1, 1, 1), group="list", since="1.0.0",
         complexity="O(N) where N is the length of the list. Setting either the first or the "
                    "last element of the list is O(1).",
         summary="Sets the value of an element in a list by its index.",
         key_specs=[ks("RW update", 1)])
def lset(ctx: Ctx, argv: list[bytes]) -> Any:
    """LSET key index element"""
    lst = write_list(ctx, argv[1])
    if lst is None:
        raise CommandError(errors.NO_SUCH_KEY)
    index = parse_int(argv[2])
    if not lst.set(index, argv[3], listpack_fill(ctx)):
        raise CommandError(errors.LIST_INDEX_OUT_OF_RANGE)
    ctx.modified(argv[1])
    ctx.propagate_argv()
    ctx.notify(NOTIFY_LIST, b"lset", argv[1])
    return OK


@command("linsert", arity=5, flags="write denyoom", keys=(1, 1, 1), group="list",
         since="2.2.0",
         complexity="O(N) where N is the number of elements to traverse before seeing the "
                    "value pivot. This means that inserting somewhere on the left end on the "
                    "list (head) can be considered O(1) and inserting somewhere on the right end "
                    "(tail) is O(N).",
         summary="Inserts an element before or after another element in a list.",
         key_specs=[ks("RW insert", 1)])
def linsert(ctx: Ctx, argv: list[bytes]) -> Any:
    """LINSERT key <BEFORE | AFTER> pivot element"""
    where = argv[2].upper()
    if where not in (b"BEFORE", b"AFTER"):
        raise CommandError(SYNTAX)
    lst = write_list(ctx, argv[1])
    if lst is None:
        return 0
    length = lst.insert(argv[3], argv[4], where == b"BEFORE", listpack_fill(ctx))
    if length != -1:
        ctx.modified(argv[1])
        ctx.ready(argv[1])  # a BLMOVEM ... EXACTLY waiter may now have enough
        ctx.propagate_argv()
        ctx.notify(NOTIFY_LIST, b"linsert", argv[1])
    return length


@command("lrem", arity=4, flags="write", keys=(1, 1, 1), group="list", since="1.0.0",
         complexity="O(N+M) where N is the length of the list and M is the number of elements "
                    "removed.",
         summary="Removes elements from a list. Deletes the list if the last element was "
                 "removed.",
         key_specs=[ks("RW delete", 1)])
def lrem(ctx: Ctx, argv: list[bytes]) -> Any:
    """LREM key count element"""
    count = parse_int(argv[2])
    if count == INT64_MIN:  # Redis 8.0, redis/redis#12465
        raise CommandError(errors.LONG_OUT_OF_RANGE)
    lst = write_list(ctx, argv[1])
    if lst is None:
        return 0
    removed = lst.remove(count, argv[3], listpack_fill(ctx))
    if removed:
        ctx.modified(argv[1], removed)
        ctx.notify(NOTIFY_LIST, b"lrem", argv[1])
        emptied(ctx, argv[1], lst)
        ctx.propagate_argv()
    return removed


@command("ltrim", arity=4, flags="write", keys=(1, 1, 1), group="list", since="1.0.0",
         complexity="O(N) where N is the number of elements to be removed by the operation.",
         summary="Removes elements from both ends a list. Deletes the list if all elements "
                 "were trimmed.",
         key_specs=[ks("RW delete", 1)])
def ltrim(ctx: Ctx, argv: list[bytes]) -> Any:
    """LTRIM key start stop"""
    start, stop = parse_int(argv[2]), parse_int(argv[3])
    lst = write_list(ctx, argv[1])
    if lst is None:
        return OK
    removed = lst.trim(start, stop, listpack_fill(ctx))
    ctx.modified(argv[1], removed)  # WATCH fails even when nothing went, as in Redis
    ctx.notify(NOTIFY_LIST, b"ltrim", argv[1])  # also when nothing went, as in Redis
    if removed:
        emptied(ctx, argv[1], lst)
        ctx.propagate_argv()
    return OK
