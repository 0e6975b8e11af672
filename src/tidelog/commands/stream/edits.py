"""XDEL, XDELEX, XTRIM and XSETID: a stream changed other than by XADD.

Argument errors come before key lookups, except for XDEL, which looks the
key up first, as Redis does.  Effects (REFERENCE §4.1): XTRIM, XDEL and
XSETID go out verbatim (XTRIM ``~`` rewritten as ``trimming.py`` says), and
only when they changed something (XSETID always does).  XDELEX (Redis
8.2) goes out verbatim whenever it changed the stream or a PEL (DELREF may
change only PELs)."""

from __future__ import annotations

from typing import Any

from ... import errors
from ...config import NOTIFY_STREAM
from ...errors import CommandError
from ...ids import MIN_ID
from ...resp.replies import OK
from ...types.groups import clamp_entries_read, referenced_by
from ..args import ArgReader
from ..contract import Ctx
from ..effects import XDelEx, XTrim
from ..key_specs import ND, ks
from ..table import command
from .entries import last_valid_id
from .group_ops import drop_references
from .stream_args import ACKED, DELREF, parse_ref_ids, parse_strict_id_arg
from .trimming import exact_threshold, parse_add_or_trim, trim_stream


@command("xdel", arity=-3, flags="write fast", keys=(1, 1, 1), group="stream",
         since="5.0.0",
         complexity="O(1) for each single item to delete in the stream, regardless of "
                    "the stream size.",
         summary="Deletes entries from a stream, returning how many existed.",
         key_specs=[ks("RW delete", 1)])
def xdel(ctx: Ctx, argv: list[bytes]) -> Any:
    """XDEL key id [id ...]"""
    key = argv[1]
    stream = ctx.db.get_stream(key)
    if stream is None:
        return 0
    # Every ID is checked before any is deleted: no half-done command.
    r = ArgReader(argv, 2)
    ids = [parse_strict_id_arg(arg) for arg in r.take(r.remaining())]
    r.finish()
    deleted = 0
    for id in ids:
        if stream.delete(id):
            deleted += 1
    if deleted:
        ctx.modified(key, deleted)
        ctx.propagate_argv()
        ctx.notify(NOTIFY_STREAM, b"xdel", key)
    return deleted


@command("xdelex", arity=-5, flags="write fast", keys=(1, 1, 1), group="stream",
         since="8.2.0",
         complexity="O(1) for each single item to delete in the stream, regardless of "
                    "the stream size (O(G) with DELREF or ACKED, G consumer groups).",
         summary="Deletes entries from a stream, choosing what happens to consumer "
                 "groups' references to them.")
def xdelex(ctx: Ctx, argv: list[bytes]) -> Any:
    """XDELEX key [KEEPREF | DELREF | ACKED] IDS numids id [id ...]"""
    # Reply per ID: -1 no such entry, 1 deleted, 2 kept because a group still
    # needs it (ACKED).  DELREF drops the references even to an entry that is
    # gone already (the reply is then -1).  Propagated verbatim if anything
    # changed, PELs included.
    r = ArgReader(argv, 2)
    policy, ids = parse_ref_ids(r)
    r.finish()
    key = argv[1]
    stream = ctx.db.get_stream(key)
    if stream is None:
        return [-1] * len(ids)
    needed = referenced_by(stream.groups.values()) if policy == ACKED else None
    out = []
    deleted = dropped = 0
    for id in ids:
        if needed is not None and needed(id):
            out.append(2 if stream.get(id) is not None else -1)
            continue
        if stream.delete(id):
            deleted += 1
            out.append(1)
        else:
            out.append(-1)
        if policy == DELREF:
            dropped += drop_references(stream, id)
    if deleted:
        ctx.modified(key, deleted)
        ctx.notify(NOTIFY_STREAM, b"xdel", key)
    ctx.changed(dropped, key)  # PEL changes alone do not touch WATCH, as XACK
    if deleted or dropped:
        ctx.effect(XDelEx(argv, policy, ids))
    return out


@command("xtrim", arity=-4, flags="write", keys=(1, 1, 1), group="stream",
         since="5.0.0",
         complexity="O(N), with N being the number of evicted entries. Constant times "
                    "are very small however, since entries are organized in macro nodes "
                    "containing multiple entries that can be released with a single "
                    "deallocation.",
         summary="Deletes the oldest entries of a stream, returning how many went.",
         tips=(ND,),
         key_specs=[ks("RW delete", 1)])
def xtrim(ctx: Ctx, argv: list[bytes]) -> Any:
    """XTRIM key <MAXLEN | MINID> [= | ~] threshold [LIMIT count] [KEEPREF | DELREF | ACKED]"""
    trim = parse_add_or_trim(ctx, argv, xadd=False).trim
    key = argv[1]
    stream = ctx.db.get_stream(key)
    if stream is None:
        return 0
    removed = trim_stream(stream, trim)
    if removed:
        ctx.modified(key, removed)
        ctx.notify(NOTIFY_STREAM, b"xtrim", key)
        exact = exact_threshold(stream, trim) if trim.approx else argv[trim.threshold_pos]
        ctx.effect(XTrim(argv, trim.strategy, exact, trim.threshold_pos if trim.approx else 0,
                         argv[trim.limit_pos] if trim.limit_pos else None,
                         trim.policy if trim.policy_given else b""))
    return removed


@command("xsetid", arity=-3, flags="write denyoom fast", keys=(1, 1, 1), group="stream",
         since="5.0.0", complexity="O(1)",
         summary="Sets a stream's last ID, entries-added counter and largest deleted ID.")
def xsetid(ctx: Ctx, argv: list[bytes]) -> Any:
    """XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]"""
    r = ArgReader(argv, 2)
    new_last = parse_strict_id_arg(r.next_bytes())
    entries_added = -1
    max_deleted = MIN_ID
    while r.more():
        opt = r.next_upper()
        if opt == b"ENTRIESADDED" and r.more():
            entries_added = r.next_int()
            if entries_added < 0:
                raise CommandError(errors.XSETID_ENTRIES_ADDED_NEGATIVE)
        elif opt == b"MAXDELETEDID" and r.more():
            max_deleted = parse_strict_id_arg(r.next_bytes())
            if new_last < max_deleted:
                raise CommandError(errors.XSETID_BELOW_MAX_DELETED_ARG)
        else:
            raise CommandError(errors.SYNTAX)
    r.finish()

    key = argv[1]
    stream = ctx.db.get_stream(key)
    if stream is None:
        raise CommandError(errors.NO_SUCH_KEY)
    # Redis 7.4 refuses a last ID below the largest deleted ID (redis/redis
    # PR #11444; 7.0.15 accepts it).
    if new_last < stream.max_deleted_entry_id:
        raise CommandError(errors.XSETID_BELOW_CURRENT_MAX_DELETED)
    if stream.length > 0:
        if new_last < last_valid_id(stream):
            raise CommandError(errors.XSETID_BELOW_TOP)
        if entries_added != -1 and stream.length > entries_added:
            raise CommandError(errors.XSETID_ENTRIES_ADDED_TOO_SMALL)
    stream.last_id = new_last
    if entries_added != -1:
        stream.entries_added = entries_added
        # No group may have read more than was ever added (Redis 8.10,
        # redis/redis#15488: it made an RDB the server then refused).
        for group in stream.groups.values():
            group.entries_read = clamp_entries_read(group.entries_read, stream)
    if max_deleted != MIN_ID:
        stream.max_deleted_entry_id = max_deleted
    ctx.modified(key)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_STREAM, b"xsetid", key)
    return OK
