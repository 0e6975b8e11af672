"""Keyspace commands: DEL, UNLINK, EXISTS, TYPE, KEYS, SCAN, RENAME and RENAMENX.

They work on any value type.  DEL and UNLINK free large values lazily
(:func:`lazyfree_effort`).  :func:`glob_match` is Redis's ``stringmatchlen``
pattern language, used by KEYS, SCAN MATCH and CONFIG GET."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...config import NOTIFY_GENERIC
from ...errors import NO_SUCH_KEY, CommandError
from ...glob import glob_match
from ...keyspace import type_name
from ...resp.replies import OK, SimpleString
from ..key_specs import ALL_SHARDS, ND, ks
from ..lookup import key_arguments, lookup_read
from ..scan_args import parse_cursor, parse_scan_options
from ..table import command

if TYPE_CHECKING:
    from ..contract import Ctx


# Redis's LAZYFREE_THRESHOLD: a value of more allocations than this (by
# lazyfree_effort's estimate) is freed lazily; smaller ones at once.
LAZYFREE_THRESHOLD = 64


def lazyfree_effort(value: Any) -> int:
    """Redis's estimate of the allocations freeing a value costs: one for a
    string or a compact (listpack, intset) value, the elements of a hash
    table or skiplist, a quicklist's nodes (taken as 128 elements each),
    and for a stream its nodes plus, per consumer group, one and the first
    group's PEL size.  O(1) (O(G) for a stream's G groups)."""
    if type(value) is bytes:
        return 1
    encoding = value.object_encoding()
    if encoding in (b"hashtable", b"skiplist"):
        return len(value)
    if encoding == b"quicklist":
        return len(value) // 128 + 1
    if encoding == b"stream":
        effort: int = value.node_count
        if value.groups:
            first = next(iter(value.groups.values()))
            effort += len(value.groups) * (1 + len(first.pel))
        return effort
    return 1


def _delete_keys(ctx: Ctx, keys: list[bytes], lazy: bool = False) -> int:
    deleted = 0
    for key in keys:
        value = ctx.db.peek(key) if lazy else None
        if ctx.db.delete(key):
            if value is not None and lazyfree_effort(value) > LAZYFREE_THRESHOLD:
                ctx.engine.free_later(value)
            ctx.modified(key)
            ctx.ready(key)
            ctx.notify(NOTIFY_GENERIC, b"del", key)
            deleted += 1
    if deleted:
        ctx.propagate_argv()
    return deleted


@command("del", arity=-2, flags="write", keys=(1, -1, 1), group="generic", since="1.0.0",
         complexity="O(N) where N is the number of keys that will be removed. When a key to "
                    "remove holds a value other than a string, the individual complexity for this "
                    "key is O(M) where M is the number of elements in the list, set, sorted set or "
                    "hash. Removing a single key that holds a string value is O(1).",
         summary="Delete a key",
         tips=("request_policy:multi_shard", "response_policy:agg_sum"),
         key_specs=[ks("RM delete", 1, -1)])
def del_(ctx: Ctx, argv: list[bytes]) -> object:
    """DEL key [key ...]"""
    return _delete_keys(ctx, key_arguments(argv), ctx.config["lazyfree-lazy-user-del"])


@command("unlink", arity=-2, flags="write fast", keys=(1, -1, 1), group="generic",
         since="4.0.0",
         complexity="O(1) for each key removed regardless of its size. Then the command does "
                    "O(N) work in a different thread in order to reclaim memory, where N is the "
                    "number of allocations the deleted objects where composed of.",
         summary="Delete a key asynchronously in another thread. Otherwise it is just as DEL, "
                 "but non blocking.",
         tips=("request_policy:multi_shard", "response_policy:agg_sum"),
         key_specs=[ks("RM delete", 1, -1)])
def unlink(ctx: Ctx, argv: list[bytes]) -> object:
    """UNLINK key [key ...]"""
    # A large value is freed after the reply (Engine.free_later), not in
    # another thread: the client does not wait for it.
    return _delete_keys(ctx, key_arguments(argv), lazy=True)


@command("exists", arity=-2, flags="readonly fast", keys=(1, -1, 1), group="generic",
         since="1.0.0", complexity="O(N) where N is the number of keys to check.",
         summary="Determine if a key exists",
         tips=("request_policy:multi_shard", "response_policy:agg_sum"),
         key_specs=[ks("RO", 1, -1)])
def exists(ctx: Ctx, argv: list[bytes]) -> object:
    """EXISTS key [key ...]"""
    return sum(1 for key in key_arguments(argv) if lookup_read(ctx, key, touch=False) is not None)


@command("type", arity=2, flags="readonly fast", keys=(1, 1, 1), group="generic",
         since="1.0.0", complexity="O(1)", summary="Determine the type stored at key",
         key_specs=[ks("RO", 1)])
def type_(ctx: Ctx, argv: list[bytes]) -> object:
    """TYPE key"""
    value = lookup_read(ctx, argv[1], touch=False)
    return SimpleString(b"none" if value is None else type_name(value))


# -- KEYS, SCAN -------------------------------------------------------------------
@command("keys", arity=2, flags="readonly", group="generic", since="1.0.0",
         categories=("@dangerous",),
         complexity="O(N) with N being the number of keys in the database, under the "
                    "assumption that the key names in the database and the given pattern have "
                    "limited length.",
         summary="Find all keys matching the given pattern",
         tips=(ALL_SHARDS, "nondeterministic_output_order"))
def keys(ctx: Ctx, argv: list[bytes]) -> object:
    """KEYS pattern"""
    pattern = argv[1]
    return [key for key in ctx.db.keys() if glob_match(pattern, key)]


@command("scan", arity=-2, flags="readonly", group="generic", since="2.8.0",
         complexity="O(1) for every call, O(COUNT) keys looked at (at most 10*COUNT buckets). "
                    "O(N) for a complete iteration, including enough command calls for the cursor "
                    "to return back to 0. N is the number of elements inside the collection.",
         summary="Incrementally iterate the keys space",
         tips=(ND, "request_policy:special"))
def scan(ctx: Ctx, argv: list[bytes]) -> object:
    """SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]"""
    cursor = parse_cursor(argv[1])
    opts = parse_scan_options(argv, 2, type_option=True)
    count, pattern, type_filter = opts.count, opts.pattern, opts.type_filter
    db = ctx.db
    cursor, found = db.scan(cursor, count)
    keys = []
    for key in found:
        value = db.peek(key)  # expires the key if due
        if value is None:
            continue
        if pattern is not None and not glob_match(pattern, key):
            continue
        if type_filter is not None and type_name(value) != type_filter:
            continue
        keys.append(key)
    return [str(cursor).encode(), keys]


# -- RENAME -----------------------------------------------------------------------
def _rename(ctx: Ctx, argv: list[bytes], nx: bool) -> object:
    src, dst = argv[1], argv[2]
    db = ctx.db
    if db.get(src) is None:
        raise CommandError(NO_SUCH_KEY)
    if src == dst:
        return 0 if nx else OK
    if db.get(dst) is not None:
        if nx:
            return 0
    db.rename(src, dst)
    ctx.modified(src)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_GENERIC, b"rename_from", src)
    ctx.notify(NOTIFY_GENERIC, b"rename_to", dst)
    ctx.db.touch(dst)
    ctx.ready(src)
    ctx.ready(dst)
    return 1 if nx else OK


@command("rename", arity=3, flags="write", keys=(1, 2, 1), group="generic", since="1.0.0",
         complexity="O(1)", summary="Rename a key",
         key_specs=[ks("RW access delete", 1), ks("OW update", 2)])
def rename(ctx: Ctx, argv: list[bytes]) -> object:
    """RENAME key newkey"""
    return _rename(ctx, argv, nx=False)


@command("renamenx", arity=3, flags="write fast", keys=(1, 2, 1), group="generic",
         since="1.0.0", complexity="O(1)", summary="Rename a key, only if the new key does not exist",
         key_specs=[ks("RW access delete", 1), ks("OW insert", 2)])
def renamenx(ctx: Ctx, argv: list[bytes]) -> object:
    """RENAMENX key newkey"""
    return _rename(ctx, argv, nx=True)
