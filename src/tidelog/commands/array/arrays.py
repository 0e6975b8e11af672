"""Arrays (Redis 8.8): ARGET, ARMGET, ARSET, ARMSET, ARDEL, ARDELRANGE, ARLEN,
ARCOUNT and ARGETRANGE.  The scans and folds, the insert cursor and ARINFO
are in the modules beside this one.

The value is :class:`~tidelog.types.array.Array`: a sparse map of indexes
(0 .. 2**64 - 2) to strings, with the insert cursor ARINSERT and ARRING
advance.  Every handler follows Redis's order of checks: the arguments
first (a bad index fails the whole command, before the key is looked at),
then the key's type.  An array emptied by ARDEL or ARDELRANGE is deleted
(``del`` follows the command's own event).

Propagation: every write propagates its own argv, as Redis does.  A write
that changed nothing (ARDEL of holes) propagates nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ... import errors
from ...errors import CommandError, wrong_arity
from ...types.array import INDEX_MAX
from ..key_specs import ks
from ..table import command
from .common import (
    MAX_REPLY_ITEMS,
    note_removed,
    note_written,
    parse_index,
    read_array,
    write_array,
    write_or_create_array,
)

if TYPE_CHECKING:
    from ..contract import Ctx


# -- ARGET, ARMGET, ARSET, ARMSET ---------------------------------------------------
@command("arget", arity=3, flags="readonly fast", keys=(1, 1, 1), group="array", since="8.8.0",
         complexity="O(1)", summary="Gets the value at an index in an array.",
         key_specs=[ks("RO ACCESS", 1)])
def arget(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARGET key index

    O(log N).  A hole or a missing key is a null."""
    ar = read_array(ctx, argv[1])
    idx = parse_index(argv[2])
    return None if ar is None else ar.get(idx)


@command("armget", arity=-3, flags="readonly fast", keys=(1, 1, 1), group="array",
         since="8.8.0", complexity="O(N) where N is the number of indices",
         summary="Gets the values at multiple indices in an array.",
         key_specs=[ks("RO ACCESS", 1)])
def armget(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARMGET key index [index ...]

    O(M log N) for M indexes; every index is checked first."""
    ar = read_array(ctx, argv[1])
    indexes = [parse_index(arg) for arg in argv[2:]]
    if ar is None:
        return [None] * len(indexes)
    get = ar.values.get
    return [get(idx) for idx in indexes]


@command("arset", arity=-4, flags="write denyoom fast", keys=(1, 1, 1), group="array",
         since="8.8.0", complexity="O(N) where N is the number of values",
         summary="Sets one or more contiguous values starting at an index in an array.",
         key_specs=[ks("RW UPDATE", 1)])
def arset(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARSET key index value [value ...]

    O(M log N) for M values.  The number of positions that were empty."""
    start = parse_index(argv[2])
    values = argv[3:]
    if start + len(values) - 1 > INDEX_MAX:
        raise CommandError(errors.ARRAY_INDEX_OVERFLOW)
    key = argv[1]
    ar = write_or_create_array(ctx, key)
    if len(values) > 1:
        ar.reserve(start, start + len(values) - 1)
    added = 0
    for offset, value in enumerate(values):
        added += ar.set(start + offset, value)
    note_written(ctx, key, b"arset", len(values))
    return added


@command("armset", arity=-4, flags="write denyoom fast", keys=(1, 1, 1), group="array",
         since="8.8.0", complexity="O(N) where N is the number of pairs",
         summary="Sets multiple index-value pairs in an array.",
         key_specs=[ks("RW UPDATE", 1)])
def armset(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARMSET key index value [index value ...]

    O(M log N) for M pairs.  The number of positions that were empty."""
    if len(argv) % 2:
        raise wrong_arity(argv[0])
    pairs = [(parse_index(argv[i]), argv[i + 1]) for i in range(2, len(argv), 2)]
    key = argv[1]
    ar = write_or_create_array(ctx, key)
    added = 0
    for idx, value in pairs:
        added += ar.set(idx, value)
    note_written(ctx, key, b"armset", len(pairs))
    return added


# -- ARDEL, ARDELRANGE ---------------------------------------------------------------
@command("ardel", arity=-3, flags="write fast", keys=(1, 1, 1), group="array", since="8.8.0",
         complexity="O(N) where N is the number of indices to delete",
         summary="Deletes elements at the specified indices in an array.",
         key_specs=[ks("RW DELETE", 1)])
def ardel(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARDEL key index [index ...]

    O(M log N) for M indexes.  The number of values removed."""
    indexes = [parse_index(arg) for arg in argv[2:]]
    key = argv[1]
    ar = write_array(ctx, key)
    if ar is None:
        return 0
    deleted = sum(ar.delete(idx) for idx in indexes)
    note_removed(ctx, key, ar, b"ardel", deleted)
    return deleted


@command("ardelrange", arity=-4, flags="write", keys=(1, 1, 1), group="array", since="8.8.0",
         complexity="Proportional to the number of existing elements in the ranges",
         summary="Deletes elements in one or more ranges.",
         key_specs=[ks("RW DELETE", 1)])
def ardelrange(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARDELRANGE key start end [start end ...]

    O(R log N + K) for R ranges and K values removed, whatever the span."""
    if len(argv) % 2:
        raise wrong_arity(argv[0])
    ranges = [(parse_index(argv[i]), parse_index(argv[i + 1])) for i in range(2, len(argv), 2)]
    key = argv[1]
    ar = write_array(ctx, key)
    if ar is None:
        return 0
    deleted = 0
    for a, b in ranges:
        deleted += ar.delete_range(min(a, b), max(a, b))
    note_removed(ctx, key, ar, b"ardelrange", deleted)
    return deleted


# -- ARLEN, ARCOUNT, ARGETRANGE -------------------------------------------------------
@command("arlen", arity=2, flags="readonly fast", keys=(1, 1, 1), group="array", since="8.8.0",
         complexity="O(1)", summary="Returns the length of an array (highest index plus one).",
         key_specs=[ks("RO", 1)])
def arlen(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARLEN key

    O(1): the highest index plus one, 0 for a missing key."""
    ar = read_array(ctx, argv[1])
    return 0 if ar is None else ar.length


@command("arcount", arity=2, flags="readonly fast", keys=(1, 1, 1), group="array",
         since="8.8.0", complexity="O(1)",
         summary="Returns the number of non-empty elements in an array.",
         key_specs=[ks("RO", 1)])
def arcount(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARCOUNT key

    O(1): the number of values, 0 for a missing key."""
    ar = read_array(ctx, argv[1])
    return 0 if ar is None else len(ar)


@command("argetrange", arity=4, flags="readonly", keys=(1, 1, 1), group="array",
         since="8.8.0", complexity="O(N) where N is the range length",
         summary="Gets values in a range of indices.",
         key_specs=[ks("RO ACCESS", 1)])
def argetrange(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARGETRANGE key start end

    O(L) for the L positions of the range (at most 1,000,000), holes as
    nulls, descending when start > end."""
    start = parse_index(argv[2])
    end = parse_index(argv[3])
    ar = read_array(ctx, argv[1])
    lo, hi = min(start, end), max(start, end)
    if hi - lo + 1 > MAX_REPLY_ITEMS:
        raise CommandError(errors.ARRAY_RANGE_TOO_BIG)
    if ar is None:
        return [None] * (hi - lo + 1)
    get = ar.values.get
    if start <= end:
        return [get(idx) for idx in range(lo, hi + 1)]
    return [get(idx) for idx in range(hi, lo - 1, -1)]
