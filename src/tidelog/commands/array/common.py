"""What the array commands share: reply caps, their key specs, the index
argument, lookups, and the events and propagation of a write or a removal.

Indexes and lengths are unsigned 64-bit numbers: one above 2**63 - 1 (ARLEN
of an array reaching the last indexes) is encoded as a bulk string in RESP2
and a big number in RESP3, which clients read (hiredis refuses a larger
``:`` integer)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ... import errors
from ...config import NOTIFY_ARRAY, NOTIFY_GENERIC
from ...errors import CommandError
from ...types.array import _U64_MAX, Array, canonical_int
from ..lookup import lookup_read_typed

if TYPE_CHECKING:
    from ..contract import Ctx


# ARGETRANGE's and ARLASTITEMS's fixed cap on a reply of positions.
MAX_REPLY_ITEMS = 1_000_000
GREP_MAX_PREDICATES = 250
GREP_MAX_RE_LEN = 2048


_SPACE = b" \t\n\v\f\r"
I64_MIN = -(1 << 63)
I64_MAX = (1 << 63) - 1


def parse_index(arg: bytes, allow_max: bool = False) -> int:
    """An array index as Redis reads it (string2ull: a canonical integer,
    else what C's strtoull takes whole -- leading blanks, a sign, leading
    zeros, a negative wrapping modulo 2**64); 2**64 - 1 only when
    ``allow_max`` (ARSEEK).  ``ERR invalid array index`` otherwise."""
    text = arg.split(b"\0", 1)[0]  # C reads up to the first NUL
    value = canonical_int(text)
    if value is None:
        value = _strtoull(text)
    if value is None or value < 0 or (value == _U64_MAX and not allow_max):
        raise CommandError(errors.ARRAY_INVALID_INDEX)
    return value


def _strtoull(s: bytes) -> int | None:
    body = s.lstrip(_SPACE)
    negative = body[:1] == b"-"
    if body[:1] in (b"-", b"+"):
        body = body[1:]
    if not body or not body.isdigit() or not body.isascii():
        return None
    value = int(body)
    if value > _U64_MAX:
        return None
    return (-value) % (1 << 64) if negative else value


def read_array(ctx: Ctx, key: bytes) -> Array | None:
    return lookup_read_typed(ctx, key, Array)


def write_array(ctx: Ctx, key: bytes) -> Array | None:
    return ctx.db.get_typed(key, Array)


def new_array(ctx: Ctx) -> Array:
    """An empty array with the slice settings in force (array-slice-size,
    array-sparse-kmax, array-sparse-kmin)."""
    config = ctx.config
    return Array(config["array-slice-size"], config["array-sparse-kmax"],
                 config["array-sparse-kmin"])


def write_or_create_array(ctx: Ctx, key: bytes) -> Array:
    ar = ctx.db.get_typed(key, Array)
    if ar is None:
        ar = new_array(ctx)
        ctx.db.set(key, ar)
    return ar


def note_written(ctx: Ctx, key: bytes, event: bytes, changes: int) -> None:
    ctx.modified(key, changes)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_ARRAY, event, key)


def note_removed(ctx: Ctx, key: bytes, ar: Array, event: bytes, deleted: int) -> None:
    """After ARDEL / ARDELRANGE: the event, and the key goes with its last value."""
    if not deleted:
        return
    if not ar:
        ctx.db.delete(key)
    ctx.modified(key, deleted)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_ARRAY, event, key)
    if not ar:
        ctx.notify(NOTIFY_GENERIC, b"del", key)
