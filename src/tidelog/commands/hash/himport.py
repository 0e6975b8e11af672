"""HIMPORT (Redis 8.10): bulk hash import through per-connection fieldsets.

``HIMPORT PREPARE name field [field ...]`` names an ordered list of field
names on this connection; ``HIMPORT SET key name value [value ...]`` then
writes ``key`` as a hash of those fields, each with the value at its
position; ``HIMPORT DISCARD name`` and ``HIMPORT DISCARDALL`` drop them.
The fieldsets (:mod:`tidelog.types.fieldsets`) live on the client
(``ClientState.himport``): RESET and the end of the connection drop them,
SELECT does not, and each script call starts without any (Redis's script
client keeps none from one EVAL or FCALL to the next).  There is no
``HIMPORT HELP``: Redis 8.10 has none, so it is an unknown subcommand.

HIMPORT SET replaces the key as a whole (its old fields and its TTL go),
but only a hash: another type at the key is WRONGTYPE, checked before the
fieldset is looked up.  The new hash holds its fields in Redis's canonical
order (shorter names first), as HGETALL shows on Redis.  Redis stores such
a hash in an encoding of its own (``template-listpack``/``template-array``,
the field names shared between the keys of one fieldset); here it is an
ordinary hash, ``listpack`` or ``hashtable`` by the usual thresholds.

Keyspace events: HIMPORT SET is a ``hset`` of the hash class, with every
field as a subkey.  Propagation: Redis sends a ``RESTORE key 0 <payload>
REPLACE`` of its template encoding, which no earlier Redis can read; here
HIMPORT SET goes to the AOF and replicas as ``HSET key field value ...`` in
the hash's order, after a ``DEL key`` when the key existed (the two wrapped
in MULTI/EXEC), which any Redis replica and Tidelog's AOF loader apply.
PREPARE and the DISCARDs change no data and propagate nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...config import NOTIFY_HASH
from ...errors import (
    HIMPORT_DUPLICATE_FIELD,
    HIMPORT_NO_SUCH_FIELDSET,
    HIMPORT_VALUE_COUNT,
    CommandError,
)
from ...resp.replies import OK
from ...types.fieldsets import DuplicateField, Fieldsets
from ...types.hash import Hash
from ..key_specs import ks
from ..table import command

if TYPE_CHECKING:
    from ..contract import Ctx



@command("himport", arity=-2, group="hash", since="8.10.0", complexity="Depends on subcommand.",
         summary="A container for session-based hash import commands using fieldsets.",
         categories=("@hash",), container=True)
def himport(ctx: Ctx, argv: list[bytes]) -> object:
    """HIMPORT subcommand [argument ...]"""


@command("himport|prepare", arity=-4, flags="denyoom", group="hash", since="8.10.0",
         complexity="O(N*log(N)) where N is the number of fields.",
         summary="Defines a session-local fieldset that maps a name to a sorted set of field names.")
def himport_prepare(ctx: Ctx, argv: list[bytes]) -> object:
    """HIMPORT PREPARE fieldset-name field [field ...]

    O(N log N) for N fields.  A duplicate field is an error and leaves the
    name as it was."""
    fieldsets = ctx.client.himport
    if fieldsets is None:
        fieldsets = Fieldsets()
    try:
        fieldsets.prepare(argv[2], argv[3:])
    except DuplicateField:
        raise CommandError(HIMPORT_DUPLICATE_FIELD) from None
    ctx.client.himport = fieldsets
    return OK


@command("himport|set", arity=-5, flags="write denyoom", keys=(2, 2, 1), group="hash",
         since="8.10.0", complexity="O(N) where N is the number of fields in the fieldset.",
         summary="Creates a fieldset-based hash from values supplied in the order matching a "
                 "previously prepared fieldset.",
         key_specs=[ks("OW update", 2)])
def himport_set(ctx: Ctx, argv: list[bytes]) -> object:
    """HIMPORT SET key fieldset-name value [value ...]

    O(N) for the N fields of the fieldset (plus freeing the old value)."""
    key = argv[2]
    existed = ctx.db.get_typed(key, Hash) is not None  # WRONGTYPE first, as Redis
    fieldsets = ctx.client.himport
    fieldset = fieldsets.get(argv[3]) if fieldsets is not None else None
    if fieldset is None:
        raise CommandError(HIMPORT_NO_SUCH_FIELDSET)
    values = argv[4:]
    if len(values) != len(fieldset):
        raise CommandError(HIMPORT_VALUE_COUNT)
    pairs = fieldset.pairs(values)
    h = Hash(pairs)
    config = ctx.config
    longest = max(max(len(f) for f in pairs), max(len(v) for v in values))
    h.convert_if(config["hash-max-listpack-entries"], config["hash-max-listpack-value"], longest)
    ctx.db.set(key, h)  # a replaced key's TTL goes
    ctx.ready(key)
    ctx.modified(key)
    if existed:
        ctx.effect([b"DEL", key])
    effect = [b"HSET", key]
    for pair in pairs.items():
        effect += pair
    ctx.effect(effect)
    ctx.notify(NOTIFY_HASH, b"hset", key, list(fieldset.fields))
    return OK


@command("himport|discard", arity=3, group="hash", since="8.10.0",
         complexity="O(N) where N is the number of session-local fieldsets.",
         summary="Removes a single session-local fieldset by name.")
def himport_discard(ctx: Ctx, argv: list[bytes]) -> object:
    """HIMPORT DISCARD fieldset-name

    O(1): 1 when the fieldset was there, else 0."""
    fieldsets = ctx.client.himport
    if fieldsets is None or not fieldsets.discard(argv[2]):
        return 0
    if not fieldsets:
        ctx.client.himport = None
    return 1


@command("himport|discardall", arity=2, group="hash", since="8.10.0",
         complexity="O(N) where N is the number of session-local fieldsets.",
         summary="Removes all session-local fieldsets for the connection.")
def himport_discardall(ctx: Ctx, argv: list[bytes]) -> object:
    """HIMPORT DISCARDALL

    O(F) for the F fieldsets dropped: how many there were."""
    fieldsets = ctx.client.himport
    ctx.client.himport = None
    return 0 if fieldsets is None else fieldsets.discard_all()
