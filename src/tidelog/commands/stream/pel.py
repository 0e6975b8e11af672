"""The pending entries lists: XACK, XACKDEL, XNACK, XPENDING, XCLAIM, XAUTOCLAIM.

Effects (REFERENCE-streams §4.1):

* XACK and XACKDEL (Redis 8.2) go out verbatim when they changed something
  (XACKDEL as an :class:`~tidelog.commands.effects.XAckDel` record, for its Redis 7.0 forms).
* XCLAIM / XAUTOCLAIM: per claimed entry the XCLAIM form of :mod:`.group_ops`
  (XCLAIM passes the ID as the client typed it, XAUTOCLAIM as ``ms-seq``,
  as Redis does); an entry gone from the stream is dropped from the PEL and
  propagated as the XCLAIM of its old record, which a replica applies by
  dropping it too; a LASTID that only moved the group goes out as XGROUP
  SETID.
* XNACK (Redis 8.8): per released entry ``XNACK key group <mode> IDS 1 <id>
  RETRYCOUNT <count> FORCE``, which sets the count outright and recreates
  the record if a replica lacks it, in release order (the NACK zone's order
  replays with it).  An unowned record dropped because its entry is gone
  goes out as ``XACK`` (it has no consumer an XCLAIM could name).

None of these invalidates a WATCH on the stream key, as in Redis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import errors
from ...errors import CommandError
from ...ids import MAX_ID, MIN_ID, StreamID, parse_plain_ids
from ...resp.replies import NULL_ARRAY
from ...types.groups import referenced_by
from ...types.stream import Stream
from ..args import INT64_MAX, ArgReader, parse_int
from ..contract import Ctx
from ..effects import XAckDel
from ..key_specs import ND, ks
from ..lookup import lookup_read_typed
from ..table import command
from .entries import (
    entry_reply,
)
from .group_ops import (
    claim,
    claiming_consumer,
    drop_gone,
    drop_references,
    group_of,
    new_consumer,
    one_more,
    setid_effect,
)
from .stream_args import (
    ACKED,
    DELREF,
    parse_ref_ids,
    parse_strict_id_arg,
    range_end,
    range_start,
    read_ids_block,
)

# XAUTOCLAIM scans at most COUNT * this many PEL entries per call.
XAUTOCLAIM_ATTEMPTS_FACTOR = 10
XAUTOCLAIM_DEFAULT_COUNT = 100
# Redis bounds COUNT so that COUNT * 16 bytes (one ID) still fits a long.
XAUTOCLAIM_MAX_COUNT = INT64_MAX // 16

# -- XACK, XPENDING ---------------------------------------------------------------------

@command("xack", arity=-4, flags="write fast", keys=(1, 1, 1), group="stream",
         since="5.0.0", complexity="O(log N) for each ID, N the pending entries of the group.",
         summary="Acknowledges entries: removes them from the group's pending entries list.")
def xack(ctx: Ctx, argv: list[bytes]) -> Any:
    """XACK key group id [id ...]"""
    group = group_of(lookup_read_typed(ctx, argv[1], Stream), argv[2])
    if group is None:
        return 0  # before the IDs are even parsed, as Redis
    ids = parse_plain_ids(argv[3:])  # the IDs as clients send them, in one call
    if ids is None:
        r = ArgReader(argv, 3)
        ids = [parse_strict_id_arg(arg) for arg in r.take(r.remaining())]  # all or nothing
        r.finish()
    acked = group.ack_all(ids)
    if acked:
        ctx.changed(acked, argv[1])
        ctx.propagate_argv()
    return acked


@command("xackdel", arity=-6, flags="write fast", keys=(1, 1, 1), group="stream",
         since="8.2.0",
         complexity="O(log N) for each ID processed (O(G) more with DELREF or ACKED, "
                    "G consumer groups).",
         summary="Acknowledges entries in a group and deletes them from the stream, "
                 "choosing what happens to other groups' references.")
def xackdel(ctx: Ctx, argv: list[bytes]) -> Any:
    """XACKDEL key group [KEEPREF | DELREF | ACKED] IDS numids id [id ...]"""
    # Reply per ID: -1 not pending in this group (or no such key or group:
    # then nothing happens), 1 acknowledged and deleted (or already gone from
    # the stream), 2 acknowledged but kept because a group still needs it
    # (ACKED).  Propagated verbatim when it changed anything.
    r = ArgReader(argv, 3)
    policy, ids = parse_ref_ids(r)
    r.finish()
    key = argv[1]
    stream = ctx.db.get_stream(key)
    group = group_of(stream, argv[2])
    if group is None:
        return [-1] * len(ids)
    assert stream is not None
    needed = referenced_by(stream.groups.values()) if policy == ACKED else None
    out = []
    deleted = 0
    for id in ids:
        if not group.ack(id):
            out.append(-1)
            continue
        ctx.changed(key=key)
        if needed is not None and needed(id):
            out.append(2)
            continue
        if stream.delete(id):
            deleted += 1
        if policy == DELREF:
            ctx.changed(drop_references(stream, id), key)
        out.append(1)
    if deleted:
        ctx.modified(key, deleted)
    if ctx.changes:
        ctx.effect(XAckDel(argv, argv[2], policy, ids))
    return out


XNACK_MODES = (b"SILENT", b"FAIL", b"FATAL")


def _nacked_count(mode: bytes, count: int) -> int:
    """The delivery count XNACK leaves: SILENT undoes one delivery (not below
    0), FAIL keeps it, FATAL marks the entry poisoned with LLONG_MAX."""
    if mode == b"SILENT":
        return max(count - 1, 0)
    if mode == b"FATAL":
        return INT64_MAX
    return count


@command("xnack", arity=-7, flags="write fast", keys=(1, 1, 1), group="stream",
         since="8.8.0", complexity="O(log N) for each ID processed.",
         summary="Releases pending entries of a group without acknowledging them, "
                 "for any consumer to claim at once.")
def xnack(ctx: Ctx, argv: list[bytes]) -> Any:
    """XNACK key group <SILENT | FAIL | FATAL> IDS numids id [id ...] [RETRYCOUNT count] [FORCE]"""
    # Each pending ID becomes unowned (consumer "", delivery time 0) at the
    # tail of the group's NACK zone, which XCLAIM, XAUTOCLAIM and XREADGROUP
    # CLAIM take first and whatever their min-idle-time.  RETRYCOUNT sets
    # the count outright; FORCE makes an unowned record for an ID that is in
    # the stream but not pending (count 0, LLONG_MAX for FATAL, or
    # RETRYCOUNT).  IDs neither pending nor forced are skipped.  Reply: how
    # many were released.  Effects: per released ID, the XNACK that recreates
    # it exactly (``... IDS 1 <id> RETRYCOUNT <count> FORCE``).
    mode = argv[3].upper()
    if mode not in XNACK_MODES:
        raise CommandError(errors.XNACK_BAD_MODE)
    retry_count = -1
    force = False
    id_args: list[bytes] | None = None
    r = ArgReader(argv, 4)
    while r.more():
        arg = r.next_bytes()
        opt = arg.upper()
        if opt == b"IDS" and id_args is None and r.more():
            id_args = read_ids_block(r, errors.XNACK_IDS_NOT_POSITIVE, errors.XNACK_IDS_MISMATCH)
        elif opt == b"RETRYCOUNT" and r.more():
            retry_count = r.next_int()
            if retry_count < 0:
                raise CommandError(errors.XNACK_RETRYCOUNT_NEGATIVE)
        elif opt == b"FORCE":
            force = True
        else:
            raise errors.xnack_unrecognized(arg)
    r.finish()
    if id_args is None:
        raise CommandError(errors.XNACK_NO_IDS)
    ids = [parse_strict_id_arg(arg) for arg in id_args]

    key, name = argv[1], argv[2]
    stream = ctx.db.get_stream(key)
    group = group_of(stream, name)
    if group is None:
        raise errors.nogroup_key_or_group(key, name)
    assert stream is not None
    ctx.no_propagation()  # the per-entry effects below replace the command
    released = 0
    for id in ids:
        entry = group.release(id)
        if entry is not None:
            count = _nacked_count(mode, entry.delivery_count)
        elif force and stream.get(id) is not None:
            count = _nacked_count(mode, 0)
            entry = group.add_unowned(id, count)
        else:
            continue
        if retry_count >= 0:
            count = retry_count
        entry.delivery_count = count
        released += 1
        ctx.effect([b"XNACK", key, name, mode, b"IDS", b"1", bytes(id),
                       b"RETRYCOUNT", b"%d" % count, b"FORCE"])
    if released:
        ctx.changed(released, key)
        ctx.ready(key)  # blocked XREADGROUP ... CLAIM readers can take them now
    return released


@command("xpending", arity=-3, flags="readonly", keys=(1, 1, 1), group="stream",
         since="5.0.0",
         complexity="O(N) for N entries returned; O(C) for C consumers in the summary form.",
         summary="Shows the pending entries of a consumer group: a summary, or the entries "
                 "of a range.",
         tips=(ND,))
def xpending(ctx: Ctx, argv: list[bytes]) -> Any:
    """XPENDING key group [[IDLE min-idle-time] start end count [consumer]]"""
    argc = len(argv)
    if argc != 3 and not 6 <= argc <= 9:
        raise CommandError(errors.SYNTAX)
    min_idle = count = 0
    start, end = MIN_ID, MAX_ID
    consumer_name: bytes | None = None
    r = ArgReader(argv, 3)
    if r.more():  # the extended form: at least start, end and count are there
        start_arg = r.next_bytes()
        if start_arg.upper() == b"IDLE":
            min_idle = r.next_int()
            if argc < 8:
                raise CommandError(errors.SYNTAX)
            start_arg = r.next_bytes()
        end_arg = r.next_bytes()
        count = max(r.next_int(), 0)  # before the bounds are checked, as Redis
        start = range_start(start_arg)
        end = range_end(end_arg)
        if r.more():
            consumer_name = r.next_bytes()
        # Anything after the consumer is ignored, as Redis does: no finish().

    key, name = argv[1], argv[2]
    group = group_of(lookup_read_typed(ctx, key, Stream), name)
    if group is None:
        raise errors.nogroup_key_or_group(key, name)

    if argc == 3:
        total, low, high, consumers = group.summary()
        if low is None or high is None:  # nothing pending
            return [0, None, None, NULL_ARRAY]
        return [total, bytes(low), bytes(high),
                [[cname, b"%d" % n] for cname, n in consumers]]

    if consumer_name is not None:
        consumer = group.consumer(consumer_name)
        if consumer is None:
            return []
        found = group.consumer_pending_range(consumer, start, end)
    else:
        found = group.pending_range(start, end)
    now = ctx.now_ms()
    out = []
    if count:
        for entry in found:
            if entry.consumer is None:
                # XNACKed (Redis 8.8): consumer "", idle -1, and it passes any
                # IDLE filter, being claimable whatever the min-idle-time.
                out.append([bytes(entry.id), b"", -1, entry.delivery_count])
            else:
                idle = now - entry.delivery_time
                if min_idle and idle < min_idle:
                    continue
                out.append([bytes(entry.id), entry.consumer.name, max(idle, 0),
                            entry.delivery_count])
            if len(out) >= count:
                break
    return out


# -- XCLAIM, XAUTOCLAIM -----------------------------------------------------------------

@dataclass(slots=True)
class XClaimArgs:
    """XCLAIM's options; -1 means "not given"."""

    delivery_time: int = -1
    retry_count: int = -1
    force: bool = False
    justid: bool = False
    last_id: StreamID = MIN_ID


@command("xclaim", arity=-6, flags="write fast", keys=(1, 1, 1), group="stream",
         since="5.0.0", complexity="O(log N) for each ID, N the pending entries of the group.",
         summary="Takes over pending entries of a group for a consumer, when idle long enough.",
         tips=(ND,))
def xclaim(ctx: Ctx, argv: list[bytes]) -> Any:
    """XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-time-milliseconds] [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID lastid]"""  # noqa: E501 (the syntax line, whole)
    key, name = argv[1], argv[2]
    stream = lookup_read_typed(ctx, key, Stream)  # a read lookup, as Redis's (keymiss)
    group = group_of(stream, name)
    if group is None:
        raise errors.nogroup_key_or_group(key, name)
    assert stream is not None
    min_idle = max(parse_int(argv[4], errors.XCLAIM_MIN_IDLE), 0)

    # IDs first; the first word that is no ID starts the options.
    r = ArgReader(argv, 5)
    ids: list[tuple[bytes, StreamID]] = []
    while (arg := r.peek()) is not None:
        try:
            ids.append((arg, parse_strict_id_arg(arg)))
        except CommandError:
            break
        r.next_bytes()
    now = ctx.now_ms()
    opts = XClaimArgs()
    while r.more():
        arg = r.next_bytes()
        opt = arg.upper()
        if opt == b"FORCE":
            opts.force = True
        elif opt == b"JUSTID":
            opts.justid = True
        elif opt == b"IDLE" and r.more():
            opts.delivery_time = now - r.next_int(errors.XCLAIM_IDLE)
        elif opt == b"TIME" and r.more():
            opts.delivery_time = r.next_int(errors.XCLAIM_TIME)
        elif opt == b"RETRYCOUNT" and r.more():
            opts.retry_count = r.next_int(errors.XCLAIM_RETRYCOUNT)
        elif opt == b"LASTID" and r.more():
            opts.last_id = parse_strict_id_arg(r.next_bytes())
        else:
            raise errors.xclaim_unrecognized(arg)
    r.finish()

    ctx.no_propagation()
    setid_pending = False
    if opts.last_id > group.last_id:
        group.last_id = opts.last_id
        setid_pending = True
    # A time in the future or before the epoch is taken as now (clients
    # compute IDLE from their own clocks); none given also means now.
    delivery_time = opts.delivery_time
    if delivery_time < 0 or delivery_time > now:
        delivery_time = now

    consumer = claiming_consumer(group, argv[3], now)
    out: list[Any] = []
    for id_arg, id in ids:
        entry = group.pending(id)
        fields = stream.get(id)
        if fields is None:  # gone from the stream: drop it from the PEL too
            if entry is not None:
                drop_gone(ctx, key, group, id_arg, entry)
                setid_pending = False
            continue
        if entry is None:
            if not opts.force:
                continue
            count = 1  # a record made by FORCE starts at one delivery
        else:
            if entry.consumer is not None and min_idle and now - entry.delivery_time < min_idle:
                continue
            count = entry.delivery_count
        if opts.retry_count >= 0:
            count = opts.retry_count
        elif not opts.justid:
            count = one_more(count)
        if consumer is None:
            consumer = new_consumer(ctx, group, argv[3], now)
        claim(ctx, key, group, consumer, id, id_arg, delivery_time, count, now)
        out.append(bytes(id) if opts.justid else entry_reply(id, fields))
        setid_pending = False
    if setid_pending:  # LASTID moved the group and no XCLAIM carried it
        ctx.effect(setid_effect(key, group))
        ctx.changed(key=key)
    return out


@command("xautoclaim", arity=-6, flags="write fast", keys=(1, 1, 1), group="stream",
         since="6.2.0",
         complexity="O(1) if COUNT is small; at most COUNT * 10 pending entries are scanned.",
         summary="Takes over the pending entries of a group that are idle long enough, "
                 "scanning from a cursor.",
         tips=(ND,),
         key_specs=[ks("RW delete", 1)])
def xautoclaim(ctx: Ctx, argv: list[bytes]) -> Any:
    """XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]"""
    min_idle = max(parse_int(argv[4], errors.XAUTOCLAIM_MIN_IDLE), 0)
    start = range_start(argv[5])
    count = XAUTOCLAIM_DEFAULT_COUNT
    justid = False
    r = ArgReader(argv, 6)
    while r.more():
        opt = r.next_upper()
        if opt == b"COUNT" and r.more():
            count = r.next_int(errors.XAUTOCLAIM_COUNT)
            if not 1 <= count <= XAUTOCLAIM_MAX_COUNT:
                raise CommandError(errors.XAUTOCLAIM_COUNT)
        elif opt == b"JUSTID":
            justid = True
        else:
            raise CommandError(errors.SYNTAX)
    r.finish()

    key, name = argv[1], argv[2]
    stream = lookup_read_typed(ctx, key, Stream)  # a read lookup, as Redis's (keymiss)
    group = group_of(stream, name)
    if group is None:
        raise errors.nogroup_key_or_group(key, name)
    assert stream is not None

    ctx.no_propagation()
    now = ctx.now_ms()
    consumer = claiming_consumer(group, argv[3], now)
    claimed: list[Any] = []
    deleted: list[bytes] = []
    attempts = count * XAUTOCLAIM_ATTEMPTS_FACTOR
    scan = group.pending_range(start, MAX_ID)
    while attempts and count:
        attempts -= 1
        entry = next(scan, None)
        if entry is None:
            break
        id = entry.id
        fields = stream.get(id)
        if fields is None:  # gone from the stream: drop it from the PEL too
            drop_gone(ctx, key, group, bytes(id), entry)
            deleted.append(bytes(id))
            count -= 1  # COUNT bounds the reply, deleted IDs included
            continue
        # An unowned (XNACKed) entry is claimable whatever min-idle-time says.
        if entry.consumer is not None and min_idle and now - entry.delivery_time < min_idle:
            continue
        if consumer is None:
            consumer = new_consumer(ctx, group, argv[3], now)
        deliveries = entry.delivery_count if justid else one_more(entry.delivery_count)
        claim(ctx, key, group, consumer, id, bytes(id), now, deliveries, now)
        claimed.append(bytes(id) if justid else entry_reply(id, fields))
        count -= 1
    # The cursor: the next pending ID not looked at, or 0-0 when none is left.
    following = next(scan, None)
    cursor = following.id if following is not None else MIN_ID
    return [bytes(cursor), claimed, deleted]
