"""ARINSERT, ARRING, ARNEXT, ARSEEK and ARLASTITEMS: the insert cursor.

ARINSERT and ARRING write at the cursor and advance it; the cursor is part
of the value (it is in the RDB form), so both propagate their own argv and
replay to the same indexes on a replica or from the AOF.  ARSEEK of a
missing key propagates nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ... import errors
from ...errors import SYNTAX, CommandError, wrong_arity
from ...types.array import INDEX_MAX, Array
from ..args import parse_int
from ..key_specs import ks
from ..table import command
from .common import (
    MAX_REPLY_ITEMS,
    new_array,
    note_written,
    parse_index,
    read_array,
    write_array,
    write_or_create_array,
)

if TYPE_CHECKING:
    from ..contract import Ctx


# -- ARINSERT, ARRING, ARNEXT, ARSEEK, ARLASTITEMS -------------------------------------
@command("arinsert", arity=-3, flags="write denyoom fast", keys=(1, 1, 1), group="array",
         since="8.8.0", complexity="O(N) where N is the number of values",
         summary="Appends values at the array insert cursor.",
         key_specs=[ks("RW UPDATE", 1)])
def arinsert(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARINSERT key value [value ...]

    O(M log N) for M values; the index of the last one written."""
    key = argv[1]
    ar = write_array(ctx, key)
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
        ar = write_or_create_array(ctx, key)
    if len(values) > 1:
        ar.reserve(start, last)
    for offset, value in enumerate(values):
        ar.set(start + offset, value)
    ar.insert_idx = last
    note_written(ctx, key, b"arinsert", len(values))
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
         summary="Writes values into a ring buffer of the given size.",
         key_specs=[ks("RW UPDATE", 1)])
def arring(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARRING key size value [value ...]

    O(M log N) for M values; O((N + M) log N) when a change of size
    rebuilds the ring.  The index of the last value written."""
    size = parse_int(argv[2], errors.ARRAY_INVALID_SIZE)
    if size <= 0:
        raise CommandError(errors.ARRAY_SIZE_NOT_POSITIVE)
    key = argv[1]
    ar = write_or_create_array(ctx, key)
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
    note_written(ctx, key, b"arring", len(argv) - 3)
    return cursor


@command("arnext", arity=2, flags="readonly fast", keys=(1, 1, 1), group="array",
         since="8.8.0", complexity="O(1)",
         summary="Returns the next index ARINSERT / ARRING would use.",
         key_specs=[ks("RO", 1)])
def arnext(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARNEXT key

    O(1): 0 for a missing key or a reset cursor, null when the index
    space is used up."""
    ar = read_array(ctx, argv[1])
    if ar is None or ar.insert_idx is None:
        return 0
    if ar.insert_idx == INDEX_MAX:
        return None
    return ar.insert_idx + 1


@command("arseek", arity=3, flags="write fast", keys=(1, 1, 1), group="array", since="8.8.0",
         complexity="O(1)", summary="Sets the ARINSERT / ARRING cursor to a specific index.",
         key_specs=[ks("RW UPDATE", 1)])
def arseek(ctx: Ctx, argv: list[bytes]) -> Any:
    """ARSEEK key index

    O(1): 1 when the cursor moved, 0 for a missing key.  Index 2**64 - 1
    is taken: it leaves the cursor exhausted."""
    idx = parse_index(argv[2], allow_max=True)
    key = argv[1]
    ar = write_array(ctx, key)
    if ar is None:
        return 0
    ar.insert_idx = None if idx == 0 else idx - 1
    note_written(ctx, key, b"arseek", 1)
    return 1


@command("arlastitems", arity=-3, flags="readonly", keys=(1, 1, 1), group="array",
         since="8.8.0", complexity="O(N) where N is the number of requested items",
         summary="Returns the most recent positions written by ARINSERT / ARRING.",
         key_specs=[ks("RO ACCESS", 1)])
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
    ar = read_array(ctx, argv[1])
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
