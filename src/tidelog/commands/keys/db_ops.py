"""Keyspace commands that move values between keys and databases: COPY,
MOVE, SWAPDB, and TOUCH and RANDOMKEY.

COPY duplicates a value with the type's own ``copy()`` (every value type has
one; strings are immutable ``bytes`` and are shared).  MOVE and COPY ... DB
write into another database: they touch the key there (its WATCHers fail)
and make it ready for the clients blocked on it there.  SWAPDB exchanges the
contents of two databases (``Database.swap_contents``); the clients stay
where they were, as in Redis: a WATCHed key that exists in either database
fails the transaction, and every key clients wait on in either database is
made ready, so they re-check against the new contents.
"""

from __future__ import annotations

import copy as copy_module
import random
from typing import TYPE_CHECKING, Any

from ...config import NOTIFY_GENERIC, NOTIFY_NEW
from ...errors import (
    COPY_DB_CLUSTER,
    INVALID_DB_INDEX,
    INVALID_FIRST_DB,
    INVALID_SECOND_DB,
    MOVE_CLUSTER,
    NOT_INTEGER,
    SAME_OBJECT,
    SWAPDB_CLUSTER,
    SYNTAX,
    CommandError,
    value_out_of_range_between,
)
from ...resp.replies import OK
from ..args import ArgReader, parse_int
from ..key_specs import ALL_SHARDS, ND, ks
from ..lookup import lookup_read
from ..table import command

if TYPE_CHECKING:
    from ...keyspace import Database
    from ..contract import Ctx

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


def parse_c_int(arg: bytes, error: bytes | None = None) -> int:
    """A C ``int`` argument read as Redis reads one: a 64-bit integer, then
    its range; ``error`` replaces both messages when given."""
    value = parse_int(arg, error or NOT_INTEGER)
    if not _INT_MIN <= value <= _INT_MAX:
        if error is not None:
            raise CommandError(error)
        raise value_out_of_range_between(_INT_MIN, _INT_MAX)
    return value


def _db(ctx: Ctx, index: int) -> Database:
    dbs = ctx.engine.dbs
    if not 0 <= index < len(dbs):
        raise CommandError(INVALID_DB_INDEX)
    return dbs[index]


def _ready_in(ctx: Ctx, db: Database, key: bytes) -> None:
    """``ctx.ready`` for a key of another database."""
    if ctx.engine.waiters:
        ctx.engine.signal_ready(db.index, key)


def copy_value(value: Any) -> Any:
    """An independent copy of any value: strings are immutable (shared);
    every other type has ``copy()`` (a type without one, deepcopy)."""
    if type(value) is bytes:
        return value
    own = getattr(value, "copy", None)
    return own() if own is not None else copy_module.deepcopy(value)


# -- COPY ------------------------------------------------------------------------------
@command("copy", arity=-3, flags="write denyoom", keys=(1, 2, 1), group="generic",
         since="6.2.0",
         complexity="O(N) worst case for collections, where N is the number of nested items. "
                    "O(1) for string values.",
         summary="Copy a key",
         key_specs=[ks("RO access", 1), ks("OW update", 2)])
def copy(ctx: Ctx, argv: list[bytes]) -> object:
    """COPY source destination [DB destination-db] [REPLACE]"""
    src, dst = argv[1], argv[2]
    target = ctx.db
    replace = False
    r = ArgReader(argv, start=3)
    while r.more():
        option = r.next_upper()
        if option == b"REPLACE":
            replace = True
        elif option == b"DB" and r.more():
            target = _db(ctx, parse_c_int(r.next_bytes()))
        else:
            raise CommandError(SYNTAX)
    if (ctx.db.index != 0 or target.index != 0) and ctx.engine.config["cluster-enabled"]:
        raise CommandError(COPY_DB_CLUSTER)
    if target is ctx.db and src == dst:
        raise CommandError(SAME_OBJECT)
    value = lookup_read(ctx, src)
    if value is None:
        return 0
    when = ctx.db.expires.get(src)
    replaced = target.get(dst) is not None
    if replaced and not replace:
        return 0
    duplicate = copy_value(value)
    if replaced:  # a new value: under LFU its counter starts afresh
        target.access.pop(dst, None)
    target.set(dst, duplicate)
    if replaced:  # Redis deletes the old value and adds the copy: a new key
        ctx.engine.notify_keyspace(NOTIFY_NEW, b"new", dst, target.index)
    if when is not None:
        target.set_expire(dst, when)
    target.touch(dst)
    ctx.changed()
    _ready_in(ctx, target, dst)
    ctx.engine.notify_keyspace(NOTIFY_GENERIC, b"copy_to", dst, target.index)
    if getattr(duplicate, "idmp", None) is not None:
        ctx.engine.track_idmp(duplicate.idmp)
    ctx.propagate_argv()
    return 1


# -- MOVE ------------------------------------------------------------------------------
@command("move", arity=3, flags="write fast", keys=(1, 1, 1), group="generic", since="1.0.0",
         complexity="O(1)", summary="Move a key to another database",
         key_specs=[ks("RW access update", 1)])
def move(ctx: Ctx, argv: list[bytes]) -> object:
    """MOVE key db"""
    if ctx.engine.config["cluster-enabled"]:
        raise CommandError(MOVE_CLUSTER)
    key = argv[1]
    target = _db(ctx, parse_c_int(argv[2]))
    source = ctx.db
    if target is source:
        raise CommandError(SAME_OBJECT)
    value = source.get(key)
    if value is None:
        return 0
    when = source.expires.get(key)
    if target.get(key) is not None:
        return 0
    marks = source.access.get(key)
    target.set(key, value)
    if target.lfu is not None and marks is not None:
        target.access[key] = marks  # the LFU counter moves with the value, as in Redis
    if when is not None:
        target.set_expire(key, when)
    source.delete(key)
    ctx.modified(key)
    target.touch(key)
    ctx.ready(key)
    _ready_in(ctx, target, key)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_GENERIC, b"move_from", key)
    ctx.engine.notify_keyspace(NOTIFY_GENERIC, b"move_to", key, target.index)
    return 1


# -- SWAPDB ----------------------------------------------------------------------------
@command("swapdb", arity=3, flags="write fast", group="server", since="4.0.0",
         categories=("@keyspace", "@dangerous"),
         complexity="O(N) where N is the count of clients watching or blocking on keys from "
                    "both databases.",
         summary="Swaps two Redis databases")
def swapdb(ctx: Ctx, argv: list[bytes]) -> object:
    """SWAPDB index1 index2"""
    if ctx.engine.config["cluster-enabled"]:
        raise CommandError(SWAPDB_CLUSTER)
    first = parse_c_int(argv[1], INVALID_FIRST_DB)
    second = parse_c_int(argv[2], INVALID_SECOND_DB)
    dbs = ctx.engine.dbs
    if not (0 <= first < len(dbs) and 0 <= second < len(dbs)):
        raise CommandError(INVALID_DB_INDEX)
    ctx.changed()
    ctx.propagate_argv()
    if first == second:
        return OK
    a, b = dbs[first], dbs[second]
    held = [(db, key, key in db.data) for db in (a, b) for key in db.watchers]
    a.swap_contents(b)
    for db, key, existed in held:
        db.touch_replaced(key, existed)
    if ctx.engine.waiters:
        ctx.engine.signal_all_waited(first)
        ctx.engine.signal_all_waited(second)
    return OK


# -- TOUCH, RANDOMKEY --------------------------------------------------------------------
@command("touch", arity=-2, flags="readonly fast", keys=(1, -1, 1), group="generic",
         since="3.2.1", complexity="O(N) where N is the number of keys that will be touched.",
         summary="Alters the last access time of a key(s). Returns the number of existing keys "
                 "specified.",
         tips=("request_policy:multi_shard", "response_policy:agg_sum"),
         key_specs=[ks("RO", 1, -1)])
def touch(ctx: Ctx, argv: list[bytes]) -> object:
    """TOUCH key [key ...]

    Sets the access time even for a CLIENT NO-TOUCH client, as Redis 7.2+
    does (redis.io/docs/latest/commands/client-no-touch/: "unless the
    command is TOUCH")."""
    found = 0
    for key in argv[1:]:
        if lookup_read(ctx, key) is not None:
            if ctx.db.no_touch:
                ctx.db.accessed(key)
            found += 1
    return found


_RANDOM_TRIES = 32


@command("randomkey", arity=1, flags="readonly", group="generic", since="1.0.0",
         complexity="O(1)", summary="Return a random key from the keyspace",
         tips=(ALL_SHARDS, ND))
def randomkey(ctx: Ctx, argv: list[bytes]) -> object:
    """RANDOMKEY

    A random bucket of the key index, then a random key in it: O(1)
    expected (the index keeps 1 to 8 keys a bucket on average); after
    ``_RANDOM_TRIES`` empty or expired picks, one pass over the keys."""
    db = ctx.db
    index = db.key_index
    for _ in range(_RANDOM_TRIES):
        if not db.data:
            return None
        bucket = index.buckets.get(random.randrange(index.size))
        if bucket:
            key = random.choice(tuple(bucket))
            if db.peek(key) is not None:
                return key
    live = list(db.keys())
    return random.choice(live) if live else None
