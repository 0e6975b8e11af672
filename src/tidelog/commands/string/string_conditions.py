"""Redis 8.4's compare-and-delete and digest: DELEX and DIGEST.  SET's own
IFEQ/IFNE/IFDEQ/IFDNE are in :mod:`.strings`; the conditions and the digest
both use are in :mod:`.string_digest`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...config import NOTIFY_GENERIC
from ...errors import SYNTAX, WRONGTYPE, CommandError
from ..key_specs import ks
from ..lookup import lookup_read
from ..table import command
from .string_digest import CONDITIONS, condition_holds, digest_of

if TYPE_CHECKING:
    from ..contract import Ctx


def _read_string(ctx: Ctx, key: bytes) -> bytes | None:
    value = lookup_read(ctx, key)
    if value is None or type(value) is bytes:
        return value
    raise CommandError(WRONGTYPE)


@command("delex", arity=-2, flags="write fast", keys=(1, 1, 1), group="string",
         since="8.4.0",
         complexity="O(1) for IFEQ/IFNE, O(N) for IFDEQ/IFDNE where N is the length of the string value.",
         summary="Conditionally removes the specified key based on value or hash digest comparison.",
         key_specs=[ks("RW delete", 1)])
def delex(ctx: Ctx, argv: list[bytes]) -> object:
    """DELEX key [IFEQ ifeq-value | IFNE ifne-value | IFDEQ ifdeq-digest | IFDNE ifdne-digest]

    Without a condition, DEL of one key (of any type); with one, the key must
    hold a string.  Goes out as ``DEL key`` when it deletes."""
    key = argv[1]
    db = ctx.db
    if len(argv) == 2:
        if db.get(key) is None:
            return 0
    else:
        option = argv[2].upper()
        if len(argv) != 4 or option not in CONDITIONS:
            raise CommandError(SYNTAX)
        current = _read_string(ctx, key)
        if current is None or not condition_holds(current, option, argv[3]):
            return 0
    db.delete(key)
    ctx.modified(key)
    ctx.ready(key)
    ctx.effect([b"DEL", key])
    ctx.notify(NOTIFY_GENERIC, b"del", key)
    return 1


@command("digest", arity=2, flags="readonly fast", keys=(1, 1, 1), group="string",
         since="8.4.0", complexity="O(N) where N is the length of the string value.",
         summary="Returns the XXH3 hash of a string value.",
         key_specs=[ks("RO", 1)])
def digest(ctx: Ctx, argv: list[bytes]) -> object:
    """DIGEST key

    The XXH3-64 hash of the string as 16 lower-case hex digits; nil for no key."""
    value = _read_string(ctx, argv[1])
    return None if value is None else digest_of(value)
