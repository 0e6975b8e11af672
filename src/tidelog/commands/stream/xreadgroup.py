"""XREADGROUP: read as a consumer of a group, new entries or the consumer's history.

Effects (REFERENCE-streams §4.1): per entry added to (or re-assigned in)
the PEL, ``XCLAIM key group consumer 0 id TIME <ms> RETRYCOUNT <n> FORCE
JUSTID LASTID <group last ID>``; then, when the group's last ID moved,
``XGROUP SETID key group <last ID> ENTRIESREAD <n>`` (Redis 7.4+ sends it
after every read that moved the ID; 7.0 only with NOACK).  With NOACK a
consumer it created goes out as ``XGROUP CREATECONSUMER``, and so does one
created by a read that delivers nothing (a history read; Redis 8.8,
``#14963``).  A history read
(explicit ID) bumps delivery times and counts and propagates nothing (7.4+;
``#13251``).  ``>`` ... CLAIM (Redis 8.4): each claimed entry goes out as the
XCLAIM form (the time and count it now has), each claimed entry found gone
from the stream as XAUTOCLAIM's drop; then new entries as for any ``>`` read.

Blocking: ``>`` with BLOCK returns a :class:`~tidelog.commands.contract.Wait`
whose retry runs the read again, the way Redis 7.2+ re-executes a blocked
command: clients blocked on one group are served in the order they blocked,
and the first takes everything new, so each new entry reaches exactly one
of them; the others keep waiting.  When the key is deleted or becomes
another type, or the group is destroyed, the retry fails like a fresh call
would: ``NOGROUP ... in XREADGROUP with GROUP option`` (or WRONGTYPE).

Differences from redis-server 7.0.15, each deliberate (the differential
tests assert them): consumers' ``seen-time``/``active-time`` follow 7.2 (see
:mod:`.group_ops`); a blocked XREADGROUP whose group is destroyed gets 7.2's
``NOGROUP No such key 'k' or consumer group 'g' in XREADGROUP with GROUP
option`` (7.0.15: ``NOGROUP the consumer group this client was blocked on no
longer exists``); when its key is deleted it gets the same error (7.0.15:
``UNBLOCKED the stream key no longer exists``) and WRONGTYPE when the key now
holds another type.  A retry that finds nothing new keeps waiting, as 7.2+
does (7.0 answered with an empty list), and serves every key of the command
that has news (7.0 served only the key that woke it).  XGROUP SETID goes
out after every read that moved the group (7.4+), not only with NOACK (7.0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import errors
from ...config import NOTIFY_STREAM
from ...errors import CommandError
from ...ids import MAX_ID, UINT64_MAX, StreamID
from ...resp.replies import NULL_ARRAY
from ...types.groups import Consumer, ConsumerGroup
from ...types.stream import Stream
from ..contract import Ctx, Wait
from ..key_specs import ks
from ..lookup import lookup_read, lookup_read_typed
from ..table import command
from .entries import (
    SizeBudget,
    capped_count,
    entry_reply,
    last_valid_id,
    streams_reply,
)
from .group_ops import (
    claim,
    drop_gone,
    group_of,
    one_more,
    setid_effect,
    xclaim_effect,
)
from .stream_args import (
    XREAD_BLOCKED_DEFAULT_COUNT,
    ReadArgs,
    parse_read_options,
    parse_strict_id_arg,
)

# -- XREADGROUP -------------------------------------------------------------------------

@dataclass(slots=True)
class _Target:
    """One key of an XREADGROUP, resolved."""

    key: bytes
    stream: Stream
    group: ConsumerGroup
    after: StreamID | None  # history read after this ID; None: ">"


def _resolve_targets(ctx: Ctx, args: ReadArgs,
                     id_args: list[bytes] | None) -> list[_Target]:
    """Each key's stream and group, then its ID, key by key in order.

    ``id_args`` None re-resolves a blocked call (its IDs are all ``>``).
    """
    targets = []
    for n, key in enumerate(args.keys):
        stream = lookup_read_typed(ctx, key, Stream)
        group = group_of(stream, args.group)
        if group is None:
            raise errors.nogroup_xreadgroup(key, args.group)
        assert stream is not None
        after: StreamID | None = None
        if id_args is not None:
            arg = id_args[n]
            if arg == b"$":
                raise CommandError(errors.XREADGROUP_DOLLAR_ID)
            if arg != b">":
                after = parse_strict_id_arg(arg)
                if after == MAX_ID:  # Redis stores ">" as the maximum ID
                    after = None
        targets.append(_Target(key, stream, group, after))
    return targets


def _has_news(target: _Target) -> bool:
    """Whether a ``>`` read of this target delivers something.

    Cost: O(1).  The usual answer for a blocked reader woken after another
    consumer of its group took the new entries, "no", comes from the
    stream's last ID alone (no entry is decoded)."""
    stream = target.stream
    position = target.group.last_id
    if stream.length == 0 or stream.last_id <= position:
        return False  # nothing was ever added past the group's position
    return last_valid_id(stream) > position


def _has_claimable(target: _Target, now: int, min_idle: int) -> bool:
    """Whether XREADGROUP ... CLAIM would claim something here: a pending
    entry it may take whose stream entry still exists.  Changes nothing.

    Cost: O(log N + d) for d claimable entries gone from the stream."""
    stream = target.stream
    for entry in target.group.claimable(now, min_idle):
        if stream.get(entry.id) is not None:
            return True
    return False


def _servable(target: _Target, args: ReadArgs, now: int) -> bool:
    """Whether a ``>`` read of this target returns something."""
    if _has_news(target):
        return True
    return args.claim >= 0 and _has_claimable(target, now, args.claim)


def _serve(ctx: Ctx, args: ReadArgs, targets: list[_Target],
           count: int) -> list[tuple[bytes, list[Any]]]:
    """Read every target: ``(key, entries)`` for each key served.

    A history target is always served (perhaps with no entries); a ``>``
    target only when the stream has entries beyond the group's last ID,
    or (CLAIM) pending entries to claim.  The consumer is created when its
    key is served, and seen now.  With MAXCOUNT the keys after the one that
    used up the total are not served at all.
    """
    ctx.no_propagation()  # the effects below replace the command
    now = ctx.now_ms()
    results = []
    budget = args.maxcount
    size = SizeBudget(args.maxsize) if args.maxsize else None
    for target in targets:
        if args.maxcount and budget <= 0:
            break
        lookup_read(ctx, target.key)  # looked up again to read it, as in Redis (hits, LFU)
        limit = capped_count(count, args.maxcount, budget)
        group = target.group
        serve = target.after is not None or _servable(target, args, now)
        if serve and size is not None:
            size.open_key(target.key)
            if size.spent():
                break  # MAXSIZE passed: this key and those after it are left out
        if serve:
            consumer, created = group.create_consumer(args.consumer, now)
            if created:
                ctx.changed(key=target.key)
                ctx.notify(NOTIFY_STREAM, b"xgroup-createconsumer", target.key)
                if args.noack:
                    ctx.effect([b"XGROUP", b"CREATECONSUMER", target.key, group.name,
                                   consumer.name])
        else:
            # Redis 7.0 creates the consumer only when it serves the key; an
            # attempt by an existing one still counts as seen (7.2).
            known = group.consumer(args.consumer)
            if known is not None:
                known.seen_time = now
            continue
        consumer.seen_time = now
        if target.after is not None:
            found = _read_history(target, consumer, limit, now, size)
        elif args.claim >= 0:
            found = _claim_idle(ctx, target, consumer, limit, now, args.claim, size)
            if (not limit or len(found) < limit) and (size is None or not size.spent()):
                left = limit - len(found) if limit else 0
                found += _deliver_new(ctx, args, target, consumer, left, now, size,
                                      claim_form=True)
        else:
            found = _deliver_new(ctx, args, target, consumer, limit, now, size)
        if created and not args.noack and not found:
            # Nothing delivered, so no XCLAIM makes the consumer on a replica:
            # Redis 8.8 sends its creation (redis/redis PR #14963).
            ctx.effect([b"XGROUP", b"CREATECONSUMER", target.key, group.name, consumer.name])
        results.append((target.key, found))
        budget -= len(found)
    return results


def _read_history(target: _Target, consumer: Consumer, count: int, now: int,
                  size: SizeBudget | None) -> list[Any]:
    """The consumer's pending entries after ``target.after``, oldest first.

    Each one still in the stream counts as delivered again (time now, count
    + 1); one deleted from the stream comes back as ``[id, nil]``.  An entry
    MAXSIZE leaves out is not touched.
    Cost: O(log P + M log N) for M entries returned.
    """
    assert target.after is not None
    out: list[Any] = []
    try:
        start = target.after.incr()
    except OverflowError:
        return out
    stream, group = target.stream, target.group
    for entry in group.consumer_pending_range(consumer, start, MAX_ID):
        fields = stream.get(entry.id)
        id_bytes = bytes(entry.id)
        if size is not None and not size.admit(id_bytes, fields or []):
            break
        if fields is None:
            out.append([id_bytes, NULL_ARRAY])
        else:
            out.append(entry_reply(entry.id, fields))
            group.touch_delivery(entry, now)
        if count and len(out) >= count:
            break
    return out


def _claim_idle(ctx: Ctx, target: _Target, consumer: Consumer, count: int, now: int,
                min_idle: int, size: SizeBudget | None) -> list[Any]:
    """XREADGROUP ... CLAIM's first phase (Redis 8.4): take pending entries.

    In :meth:`~tidelog.types.groups.ConsumerGroup.claimable` order (the NACK
    zone, then longest idle first), each is given to ``consumer`` as XCLAIM
    would (time now, one more delivery) and reported as ``[id, fields,
    ms since its last delivery, deliveries before this one]``; an unowned
    (XNACKed) entry reports -1 ms, as XPENDING does.  NOACK does not apply
    to these.  An entry gone from the stream is dropped from the PEL, as
    XAUTOCLAIM does, and not counted.  Effects: XAUTOCLAIM's.

    Cost: O(log N + M (log N + log P)) for M entries looked at.
    """
    stream, group, key = target.stream, target.group, target.key
    out: list[Any] = []
    for entry in group.claimable(now, min_idle):
        if count and len(out) >= count:
            break
        id = entry.id
        fields = stream.get(id)
        if fields is None:
            drop_gone(ctx, key, group, bytes(id), entry)
            continue
        if size is not None and not size.admit(bytes(id), fields):
            break  # MAXSIZE passed: left pending as it was
        idle = -1 if entry.consumer is None else max(now - entry.delivery_time, 0)
        before = entry.delivery_count
        claim(ctx, key, group, consumer, id, bytes(id), now, one_more(before), now)
        out.append([bytes(id), fields, idle, before])
    return out


def _deliver_new(ctx: Ctx, args: ReadArgs, target: _Target, consumer: Consumer,
                 count: int, now: int, size: SizeBudget | None,
                 claim_form: bool = False) -> list[Any]:
    """Deliver entries beyond the group's last ID, recording their effects.

    ``claim_form`` (XREADGROUP ... CLAIM) adds the idle time and delivery
    count every entry then carries, 0 and 0 for a new entry.

    The entries are read in one step and, with no listener to send a
    per-entry XCLAIM to, the group takes the whole batch at once
    (:meth:`~tidelog.types.groups.ConsumerGroup.advance_all`, then
    :meth:`~tidelog.types.groups.ConsumerGroup.deliver_new`); with one, entry
    by entry, each XCLAIM naming the group's last ID as it is after that
    entry.

    Cost: O(log N + M) for M entries delivered (O(M log P) when an ID was
    already pending, after XGROUP SETID back).
    """
    stream, group, key = target.stream, target.group, target.key
    ids, out = stream.read_from(group.last_id.incr(), count)
    if size is not None:  # entries MAXSIZE leaves out are not delivered
        k = size.fit(out)
        ids, out = ids[:k], out[:k]
    if not ids:
        return out
    if claim_form:
        out = [[id_bytes, fields, 0, 0] for id_bytes, fields in out]
    if ctx.propagating:
        moved = False
        for id, reply in zip(ids, out):
            moved = group.advance(id, stream) or moved
            if not args.noack:
                entry = group.deliver(id, consumer, now)
                ctx.effect(xclaim_effect(key, group, reply[0], entry))
    else:  # no listener: no XCLAIM effect per entry
        moved = group.advance_all(ids, stream)
        if not args.noack:
            group.deliver_new(ids, consumer, now)
    if moved:
        ctx.effect(setid_effect(key, group))
    ctx.changed(key=key)
    return out


@command("xreadgroup", arity=-7, flags="write blocking movablekeys", keys=(0, 0, 0),
         group="stream", since="5.0.0",
         complexity="For each stream: O(M) for M entries returned, plus O(log N) per entry "
                    "added to the pending entries list. A blocked call costs the XADD that "
                    "serves it O(N) for N clients blocked on the stream.",
         summary="Reads new entries as a consumer of a group (or the consumer's pending "
                 "history), optionally blocking until there are some.",
         key_specs=[ks("RO access", "STREAMS", -1, limit=2, startfrom=4)])
def xreadgroup(ctx: Ctx, argv: list[bytes]) -> Any:
    """XREADGROUP GROUP group consumer [COUNT count] [MAXCOUNT maxcount] [MAXSIZE maxsize] [BLOCK milliseconds] [CLAIM min-idle-time] [NOACK] STREAMS key [key ...] id [id ...]"""  # noqa: E501 (the syntax line, whole)
    args = parse_read_options(argv, group=True)
    targets = _resolve_targets(ctx, args, args.ids)
    results = _serve(ctx, args, targets, args.count)
    if results:
        return streams_reply(ctx, results)
    if args.timeout < 0:
        return NULL_ARRAY

    # Every ID is ">" here (a history read is always served).
    served_count = args.count or XREAD_BLOCKED_DEFAULT_COUNT

    timer: list[Any] = []  # the pending CLAIM wake-up, if any

    def retry(woken: Ctx) -> Any:
        # Redis 7.2+ runs the command again: a key or group gone is an error now.
        again = _resolve_targets(woken, args, None)
        if args.claim < 0:
            # The usual wake of a reader of a busy group: another consumer
            # took what came, so nothing here has news (no clock, no timer).
            for target in again:
                if _has_news(target):
                    return streams_reply(woken, _serve(woken, args, again, served_count))
            return None
        now = woken.now_ms()
        if not any(_servable(target, args, now) for target in again):
            _arm_claim_wakeup(woken, args, again, timer)
            return None
        _cancel(timer)
        return streams_reply(woken, _serve(woken, args, again, served_count))

    if ctx.may_block:  # inside MULTI the command answers at once instead
        _arm_claim_wakeup(ctx, args, targets, timer)
    return Wait(list(dict.fromkeys(args.keys)), args.timeout, retry, NULL_ARRAY)


def _cancel(timer: list[Any]) -> None:
    if timer:
        timer.pop().cancel()


def _arm_claim_wakeup(ctx: Ctx, args: ReadArgs, targets: list[_Target],
                      timer: list[Any]) -> None:
    """For a blocked XREADGROUP ... CLAIM: retry it when the next pending entry
    becomes idle enough to claim (Redis 8.4: "the CLAIM min-idle-time
    condition may become true ... during the BLOCK period").

    The wake-up marks the command's keys ready, so the engine retries every
    client blocked on them (a retry that finds nothing re-arms).  Needs the
    engine's scheduler (the server has one; bare engines in tests may not).
    Cost: O(G log N + d) for the targets' groups, d pending entries whose
    stream entries are gone.
    """
    _cancel(timer)
    if args.claim < 0:
        return
    now = ctx.now_ms()
    due: int | None = None
    for target in targets:
        for entry in target.group.idle_first(UINT64_MAX, 0):  # oldest delivery first
            if entry.consumer is None or target.stream.get(entry.id) is None:
                continue  # claimable already (unless gone), or gone: not a reason to wake
            at = entry.delivery_time + args.claim
            due = at if due is None else min(due, at)
            break
    if due is None:
        return
    handle = ctx.engine.wake_later(max(due - now, 1) / 1000, ctx.db.index,
                                   list(dict.fromkeys(args.keys)))
    if handle is not None:
        timer.append(handle)
