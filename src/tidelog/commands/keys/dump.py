"""DUMP and RESTORE: one value in Redis's serialised form.

The payload is ``<RDB type byte><the value as an RDB snapshot writes it>
<2-byte little-endian RDB version><8-byte little-endian CRC-64 of everything
before it>`` (:func:`~tidelog.rdb.values.value_payload`; the snapshot
writer and DUMP share that encoder, so whatever value type plugs into
``VALUE_WRITERS`` / ``VALUE_READERS`` is dumped and restored with no code
here).  The encoding is a format below this layer (:mod:`tidelog.rdb`), so
DUMP and RESTORE are commands like the others, whatever else is attached.

RESTORE follows Redis: the options are read first (``REPLACE``, ``ABSTTL``,
``IDLETIME s``, ``FREQ f``; IDLETIME and FREQ exclude each other), then an
existing key is refused (``BUSYKEY``) unless REPLACE, then the TTL is read,
then the payload's footer (version above the newest we read, or a wrong
checksum: one error), then its value bytes.  A relative TTL is propagated
as the absolute deadline with ``ABSTTL``; a deadline already past restores
nothing (and, when REPLACE removed a key, propagates ``DEL``).
"""

from __future__ import annotations

from ... import errors
from ...errors import CommandError
from ...rdb import array as rdb_array
from ...rdb import values as rdb
from ...resp.replies import OK
from ...types.array import Array
from ..args import INT64_MAX, ArgReader, parse_int
from ..contract import Ctx, Reply
from ..key_specs import ND, ks
from ..lookup import lookup_read
from ..table import command


def _dump_version(ctx: Ctx) -> int:
    try:
        return int(ctx.config["rdb-version"])
    except KeyError:
        return rdb.DEFAULT_VERSION


@command("dump", arity=2, flags="readonly", keys=(1, 1, 1), group="generic", since="2.6.0",
         complexity="O(1) to access the key and additional O(N*M) to serialize it, where N is "
                    "the number of Redis objects composing the value and M their average size. "
                    "For small string values the time complexity is thus O(1)+O(1*M) where M is "
                    "small, so simply O(1).",
         summary="Return a serialized version of the value stored at the specified key.",
         tips=(ND,))
def dump(ctx: Ctx, argv: list[bytes]) -> Reply:
    """DUMP key"""
    value = lookup_read(ctx, argv[1])
    if value is None:
        return None
    return rdb.value_payload(value, version=_dump_version(ctx),
                             compress=bool(ctx.config["rdbcompression"]))


_RESTORE_COST = (
    "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, "
    "where N is the number of Redis objects composing the value and M their average size. For "
    "small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply "
    "O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting "
    "values into sorted sets is O(log(N)).")
"""RESTORE's and RESTORE-ASKING's complexity, as Redis's table words it."""


@command("restore", arity=-4, flags="write denyoom", keys=(1, 1, 1), group="generic",
         since="2.6.0", categories=("@dangerous",),
         complexity=_RESTORE_COST,
         summary="Create a key using the provided serialized value, previously obtained using "
                 "DUMP.",
         key_specs=[ks("OW update", 1)])
def restore(ctx: Ctx, argv: list[bytes]) -> Reply:
    """RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]"""
    key = argv[1]
    replace = absttl = False
    idle = freq = -1
    r = ArgReader(argv, start=4)
    while r.more():
        option = r.next_upper()
        if option == b"REPLACE":
            replace = True
        elif option == b"ABSTTL":
            absttl = True
        elif option == b"IDLETIME" and r.more() and freq == -1:
            idle = r.next_int()
            if idle < 0:
                raise CommandError(errors.INVALID_IDLETIME)
        elif option == b"FREQ" and r.more() and idle == -1:
            freq = r.next_int()
            if not 0 <= freq <= 255:
                raise CommandError(errors.INVALID_FREQ)
        else:
            raise CommandError(errors.SYNTAX)
    db = ctx.db
    if not replace and db.get(key) is not None:
        raise CommandError(errors.BUSYKEY)
    ttl = parse_int(argv[2])
    if ttl < 0:
        raise CommandError(errors.INVALID_TTL)
    try:
        value = rdb.value_from_payload(argv[3])
    except rdb.PayloadError as exc:
        raise CommandError(errors.DUMP_PAYLOAD_WRONG if exc.version_or_checksum
                           else errors.BAD_DATA_FORMAT) from None
    if type(value) is Array:
        value = rdb_array.with_settings(value, ctx.config)
    deleted = replace and db.delete(key)
    now = ctx.now_ms()
    if ttl and not absttl:
        ttl += now
        if ttl > INT64_MAX:  # wraps in Redis's 64-bit sum: a deadline long past
            ttl -= 1 << 64
    if ttl and ttl <= now:
        if deleted:
            ctx.modified(key)
            ctx.ready(key)
            ctx.effect([b"DEL", key])
        return OK
    db.set(key, value)
    if ttl:
        db.set_expire(key, ttl)
    ctx.modified(key)
    db.restore_marks(key, idle, freq)
    ctx.ready(key)
    if ttl and not absttl:
        ctx.effect([argv[0], key, b"%d" % ttl, *argv[3:], b"ABSTTL"])
    else:
        ctx.propagate_argv()
    if getattr(value, "idmp", None) is not None:
        ctx.engine.track_idmp(value.idmp)
    return OK


@command("restore-asking", arity=-4, flags="write denyoom asking", keys=(1, 1, 1),
         group="server", since="3.0.0", categories=("@keyspace", "@dangerous"),
         complexity=_RESTORE_COST,
         summary="An internal command for migrating keys in a cluster",
         key_specs=[ks("OW update", 1)])
def restore_asking(ctx: Ctx, argv: list[bytes]) -> object:
    """RESTORE-ASKING key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]

    RESTORE, served in a slot this node imports without ASKING.  Cost: as
    RESTORE's."""
    return restore(ctx, argv)
