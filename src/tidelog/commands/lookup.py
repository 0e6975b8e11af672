"""Key lookups for the command families: a read that counts keyspace hits and
misses (INFO stats) and reports a ``keymiss`` event, its typed form
(WRONGTYPE for another type), and the ``key [key ...]`` argument list."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from ..config import NOTIFY_KEY_MISS
from ..errors import WRONGTYPE, CommandError

if TYPE_CHECKING:
    from .contract import Ctx

T = TypeVar("T")


# -- lookups that count keyspace hits and misses (INFO stats) -------------------------


def lookup_read(ctx: Ctx, key: bytes, touch: bool = True, notify: bool = True) -> Any:
    """The live value at key (None if missing), counted in keyspace_hits/misses;
    a miss is a ``keymiss`` event (unless ``notify`` is False, as OBJECT's)."""
    value = ctx.db.get(key) if touch else ctx.db.peek(key)
    if value is not None:
        ctx.engine.stats["keyspace_hits"] += 1
    else:
        ctx.engine.stats["keyspace_misses"] += 1
        if notify:
            ctx.notify(NOTIFY_KEY_MISS, b"keymiss", key)
    return value


def lookup_read_typed(ctx: Ctx, key: bytes, cls: type[T]) -> T | None:
    """:func:`lookup_read` of a value of type ``cls``: None if missing,
    WRONGTYPE for another type.  O(1)."""
    value = lookup_read(ctx, key)
    if value is None or type(value) is cls:
        return value
    raise CommandError(WRONGTYPE)


def key_arguments(argv: list[bytes]) -> list[bytes]:
    """``key [key ...]``: every argument after the command name (the table's
    arity asks for one at least; nothing can be left over, so no cursor: a
    slice costs a fifth of one)."""
    return argv[1:]
