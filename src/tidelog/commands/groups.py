"""Consumer-group commands: XGROUP, XREADGROUP, XACK, XACKDEL, XNACK, XPENDING, XCLAIM,
XAUTOCLAIM, XINFO.

Each handler checks its arguments, keys and groups in the order Redis 7.0
does (so the first error is Redis's first error; the differential tests pin
every order), then calls the :class:`~tidelog.types.groups.ConsumerGroup`
API and returns a reply value.  Nothing is changed before the last check has
passed, except where Redis itself changes state and then fails (it never
does here).

Effects (REFERENCE-streams §4.1).  What replicas and the AOF get is what
happened to the group, in forms that replay exactly:

* XREADGROUP ``>``: per entry added to (or re-assigned in) the PEL,
  ``XCLAIM key group consumer 0 id TIME <ms> RETRYCOUNT <n> FORCE JUSTID
  LASTID <group last ID>``; then, when the group's last ID moved,
  ``XGROUP SETID key group <last ID> ENTRIESREAD <n>`` (Redis 7.4+ sends it
  after every read that moved the ID; 7.0 only with NOACK).  With NOACK a
  consumer it created goes out as ``XGROUP CREATECONSUMER``.  A history
  read (explicit ID) bumps delivery times and counts and propagates nothing
  (7.4+; ``#13251``).
* XCLAIM / XAUTOCLAIM: per claimed entry the same XCLAIM form (XCLAIM
  passes the ID as the client typed it, XAUTOCLAIM as ``ms-seq``, as Redis
  does); an entry gone from the stream is dropped from the PEL and
  propagated as the XCLAIM of its old record, which a replica applies by
  dropping it too; a LASTID that only moved the group goes out as
  XGROUP SETID.  That XCLAIM form is idempotent: FORCE creates the record if
  missing, TIME and RETRYCOUNT set the time and count outright, JUSTID keeps
  the count as given, LASTID only ever moves the group forward, and an ID
  missing from the stream only removes a record.
* XACK and the XGROUP subcommands go out verbatim when they changed
  something, and so does XACKDEL (Redis 8.2).
* XREADGROUP ``>`` ... CLAIM (Redis 8.4): each claimed entry goes out as
  the XCLAIM form above (the time and count it now has), each claimed
  entry found gone from the stream as XAUTOCLAIM's drop; then new entries
  as for any ``>`` read.
* XNACK (Redis 8.8): per released entry ``XNACK key group <mode> IDS 1 <id>
  RETRYCOUNT <count> FORCE``, which sets the count outright and recreates
  the record if a replica lacks it, in release order (the NACK zone's
  order replays with it).  An unowned record dropped because its entry is
  gone goes out as ``XACK`` (it has no consumer an XCLAIM could name).

As in Redis, none of these commands invalidates a WATCH on the stream key
except XGROUP CREATE ... MKSTREAM when it creates the stream: they bump
``ctx.changes`` (the dirty counter) without ``ctx.modified``.

Blocking: XREADGROUP ``>`` with BLOCK returns a
:class:`~tidelog.commands.contract.Wait` whose retry runs the read again, the way
Redis 7.2+ re-executes a blocked command: clients blocked on one group are
served in the order they blocked, and the first takes everything new, so
each new entry reaches exactly one of them; the others keep waiting.  When
the key is deleted or becomes another type, or the group is destroyed, the
retry fails like a fresh call would: ``NOGROUP ... in XREADGROUP with GROUP
option`` (or WRONGTYPE).

Differences from redis-server 7.0.15, each deliberate (the differential
tests assert them):

1. Consumer times follow Redis 7.2: ``seen-time`` is the last attempted
   read or claim, ``active-time`` the last one that delivered or claimed
   something.  So XINFO CONSUMERS has 7.2's ``inactive`` field and XINFO
   STREAM FULL's consumers 7.2's ``active-time``.  Consumers are created
   where 7.0 creates them (a read that serves the key, a successful claim),
   not on every attempt as 7.2 does, so consumer lists stay 7.0's; an
   attempt by an existing consumer refreshes its ``seen-time`` (7.2).
2. A blocked XREADGROUP whose group is destroyed gets 7.2's ``NOGROUP No
   such key 'k' or consumer group 'g' in XREADGROUP with GROUP option``
   (7.0.15: ``NOGROUP the consumer group this client was blocked on no
   longer exists``); when its key is deleted it gets the same error (7.0.15:
   ``UNBLOCKED the stream key no longer exists``) and WRONGTYPE when the key
   now holds another type (7.0.15: the UNBLOCKED text).  A retry that finds
   nothing new (entries added and deleted again before it ran) keeps
   waiting, as 7.2+ does; 7.0 answered with an empty list.  A retry serves
   every key of the command that has news, as 7.2+'s re-execution does;
   7.0 served only the key that woke it.
3. XREADGROUP ``>`` always propagates XGROUP SETID after moving the group
   (7.4+), not only with NOACK (7.0).
4. XINFO STREAM ``radix-tree-nodes``: there is no radix tree here; the
   number is that of an ideal radix tree over the node keys (see
   :func:`radix_tree_nodes`), which has equalled Redis's in every sequence
   tried (appends, XDEL, XTRIM); the differential tests still normalise it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import errors
from ..errors import CommandError
from ..ids import MAX_ID, MIN_ID, UINT64_MAX, InvalidStreamID, StreamID, parse_id
from ..resp.replies import NULL_ARRAY, OK, Map
from ..types.groups import UNKNOWN, Consumer, ConsumerGroup, PendingEntry, referenced_by
from ..types.stream import Stream
from .args import INT64_MAX, parse_int
from .connection import help_reply
from .contract import Wait
from .idmp import info_fields as idmp_info_fields
from .streams import (
    ACKED,
    DELREF,
    XREAD_BLOCKED_DEFAULT_COUNT,
    _entries,
    _last_valid_id,
    _streams_reply,
    capped_count,
    drop_references,
    parse_interval_arg,
    parse_ref_ids,
    parse_strict_id_arg,
)
from .table import command

if TYPE_CHECKING:
    from .contract import Ctx

# XAUTOCLAIM scans at most COUNT * this many PEL entries per call.
XAUTOCLAIM_ATTEMPTS_FACTOR = 10
XAUTOCLAIM_DEFAULT_COUNT = 100
# Redis bounds COUNT so that COUNT * 16 bytes (one ID) still fits a long.
XAUTOCLAIM_MAX_COUNT = INT64_MAX // 16
XINFO_FULL_DEFAULT_COUNT = 10

_XGROUP_HELP = [
    "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
    "HELP",
    "    Prints this help.",
]

_XINFO_HELP = [
    "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
    "HELP",
    "    Prints this help.",
]


# -- shared helpers -------------------------------------------------------------------

def _parse_id_arg(arg: bytes) -> StreamID:
    """An ID where ``-`` and ``+`` are allowed (XGROUP SETID)."""
    try:
        return parse_id(arg)
    except InvalidStreamID:
        raise CommandError(errors.INVALID_STREAM_ID) from None


def _interval_start(arg: bytes) -> StreamID:
    """The low bound of a range (XPENDING, XAUTOCLAIM); ``(id`` is exclusive."""
    start, exclusive = parse_interval_arg(arg, 0)
    if exclusive:
        try:
            start = start.incr()
        except OverflowError:
            raise CommandError(errors.INVALID_START_INTERVAL) from None
    return start


def _interval_end(arg: bytes) -> StreamID:
    """The high bound of a range (XPENDING); ``(id`` is exclusive."""
    end, exclusive = parse_interval_arg(arg, (1 << 64) - 1)
    if exclusive:
        try:
            end = end.decr()
        except OverflowError:
            raise CommandError(errors.INVALID_END_INTERVAL) from None
    return end


def _group_of(stream: Stream | None, name: bytes) -> ConsumerGroup | None:
    return None if stream is None else stream.groups.get(name)


def _xclaim_effect(key: bytes, group: ConsumerGroup, id_arg: bytes,
                   entry: PendingEntry) -> list[bytes]:
    """The XCLAIM that recreates ``entry`` exactly on a replica (Redis's
    streamPropagateXCLAIM form, 14 arguments)."""
    owner = entry.consumer.name if entry.consumer is not None else b""
    return [b"XCLAIM", key, group.name, owner, b"0", id_arg,
            b"TIME", b"%d" % entry.delivery_time,
            b"RETRYCOUNT", b"%d" % entry.delivery_count,
            b"FORCE", b"JUSTID", b"LASTID", bytes(group.last_id)]


def _gone_effect(key: bytes, group: ConsumerGroup, id_arg: bytes,
                 entry: PendingEntry) -> list[bytes]:
    """What tells a replica to drop a pending entry whose stream entry is
    gone: the XCLAIM of its record (a replica drops it, finding no entry),
    or for an unowned (XNACKed) record, which has no consumer to name, an
    XACK (Redis 8.8 does the same)."""
    if entry.consumer is None:
        return [b"XACK", key, group.name, id_arg]
    return _xclaim_effect(key, group, id_arg, entry)


def _one_more(count: int) -> int:
    """A delivery count plus one, stopping at LLONG_MAX: XNACK FATAL sets that
    value, and a count above it could not be propagated (RESP integers are
    signed 64-bit)."""
    return count + 1 if count < INT64_MAX else INT64_MAX


def _setid_effect(key: bytes, group: ConsumerGroup) -> list[bytes]:
    """The group's position, for replicas: ``XGROUP SETID ... ENTRIESREAD``."""
    return [b"XGROUP", b"SETID", key, group.name, bytes(group.last_id),
            b"ENTRIESREAD", b"%d" % group.entries_read]


def _entry_reply(id: StreamID, fields: list[bytes]) -> list[Any]:
    return [bytes(id), fields]


# -- XGROUP -----------------------------------------------------------------------------

@command("xgroup", arity=-2, group="stream", since="5.0.0", complexity="Depends on subcommand.",
         summary="A container for consumer groups commands.", container=True)
def xgroup(ctx: Ctx, argv: list[bytes]) -> Any:
    """XGROUP subcommand [argument ...]"""


@dataclass(slots=True)
class _XGroupTarget:
    """What every XGROUP subcommand but HELP resolves first."""

    key: bytes
    stream: Stream | None
    group: ConsumerGroup | None
    mkstream: bool = False
    entries_read: int = UNKNOWN


def _xgroup_resolve(ctx: Ctx, argv: list[bytes], need_group: bool) -> _XGroupTarget:
    """Options, key, and group, in Redis's order.

    1. CREATE's MKSTREAM / ENTRIESREAD and SETID's ENTRIESREAD (argv[5:]),
       each error as met (an unknown word is a syntax error; too many
       arguments are refused by the subcommand, after these checks);
    2. the key's type (WRONGTYPE);
    3. unless MKSTREAM: the key must exist, and SETID, CREATECONSUMER and
       DELCONSUMER need the group.
    """
    sub = argv[1].lower()
    target = _XGroupTarget(argv[2], None, None)
    i = 5
    while i < len(argv):
        opt = argv[i].upper()
        if sub == b"create" and opt == b"MKSTREAM":
            target.mkstream = True
            i += 1
        elif opt == b"ENTRIESREAD" and i + 1 < len(argv):
            value = parse_int(argv[i + 1])
            if value < 0 and value != UNKNOWN:
                raise CommandError(errors.ENTRIESREAD_INVALID)
            target.entries_read = value
            i += 2
        else:
            raise errors.subcommand_syntax(argv[1], b"xgroup")
    target.stream = ctx.db.get_stream(target.key)
    if not target.mkstream:
        if target.stream is None:
            raise CommandError(errors.XGROUP_KEY_MISSING)
        target.group = target.stream.groups.get(argv[3])
        if need_group and target.group is None:
            raise errors.nogroup_for_key(argv[3], target.key)
    return target


@command("xgroup|create", arity=-5, flags="write denyoom", keys=(2, 2, 1), group="stream",
         since="5.0.0", complexity="O(1)",
         summary="Creates a consumer group, and the stream too with MKSTREAM.")
def xgroup_create(ctx: Ctx, argv: list[bytes]) -> Any:
    """XGROUP CREATE key group <id | $> [MKSTREAM] [ENTRIESREAD entries-read]"""
    target = _xgroup_resolve(ctx, argv, need_group=False)
    if len(argv) > 8:
        raise errors.subcommand_syntax(argv[1], b"xgroup")
    stream = target.stream
    if argv[4] == b"$":
        last_id = stream.last_id if stream is not None else MIN_ID
    else:
        last_id = parse_strict_id_arg(argv[4])
    if stream is None:  # MKSTREAM, now that nothing can fail
        stream = Stream()
        ctx.db.set(target.key, stream)
        ctx.modified(target.key)
    name = argv[3]
    if name in stream.groups:
        raise CommandError(errors.BUSYGROUP)
    stream.groups[name] = ConsumerGroup(name, last_id, target.entries_read)
    ctx.changes += 1  # propagated verbatim
    return OK


@command("xgroup|setid", arity=-5, flags="write", keys=(2, 2, 1), group="stream",
         since="5.0.0", complexity="O(1)",
         summary="Moves a consumer group's last delivered ID.")
def xgroup_setid(ctx: Ctx, argv: list[bytes]) -> Any:
    """XGROUP SETID key group <id | $> [ENTRIESREAD entries-read]"""
    target = _xgroup_resolve(ctx, argv, need_group=True)
    if len(argv) not in (5, 7):
        raise errors.subcommand_syntax(argv[1], b"xgroup")
    stream, group = target.stream, target.group
    assert stream is not None and group is not None
    new_id = stream.last_id if argv[4] == b"$" else _parse_id_arg(argv[4])
    entries_read = None if target.entries_read == UNKNOWN else target.entries_read
    group.set_id(new_id, entries_read, stream)
    ctx.changes += 1
    return OK


@command("xgroup|destroy", arity=4, flags="write", keys=(2, 2, 1), group="stream",
         since="5.0.0",
         complexity="O(N) where N is the number of entries in the group's pending entries list.",
         summary="Destroys a consumer group; blocked readers of it get an error.")
def xgroup_destroy(ctx: Ctx, argv: list[bytes]) -> Any:
    """XGROUP DESTROY key group"""
    target = _xgroup_resolve(ctx, argv, need_group=False)
    if target.group is None:
        return 0
    assert target.stream is not None
    del target.stream.groups[argv[3]]
    ctx.changes += 1
    ctx.ready(target.key)  # blocked XREADGROUP clients of the group fail now
    return 1


@command("xgroup|createconsumer", arity=5, flags="write denyoom", keys=(2, 2, 1),
         group="stream", since="6.2.0", complexity="O(1)",
         summary="Creates a consumer in a consumer group.")
def xgroup_createconsumer(ctx: Ctx, argv: list[bytes]) -> Any:
    """XGROUP CREATECONSUMER key group consumer"""
    group = _xgroup_resolve(ctx, argv, need_group=True).group
    assert group is not None
    _, created = group.create_consumer(argv[4], ctx.now_ms())
    if not created:
        return 0
    ctx.changes += 1
    return 1


@command("xgroup|delconsumer", arity=5, flags="write", keys=(2, 2, 1), group="stream",
         since="5.0.0",
         complexity="O(P log N) for the P entries the consumer had pending, N in the group.",
         summary="Deletes a consumer and its pending entries; returns how many it had.")
def xgroup_delconsumer(ctx: Ctx, argv: list[bytes]) -> Any:
    """XGROUP DELCONSUMER key group consumer"""
    group = _xgroup_resolve(ctx, argv, need_group=True).group
    assert group is not None
    if group.consumer(argv[4]) is None:
        return 0
    pending = group.delete_consumer(argv[4])
    ctx.changes += 1
    return pending


@command("xgroup|help", arity=2, flags="loading stale", group="stream", since="5.0.0",
         complexity="O(1)", summary="Shows the XGROUP subcommands.")
def xgroup_help(ctx: Ctx, argv: list[bytes]) -> Any:
    """XGROUP HELP"""
    return help_reply(_XGROUP_HELP)


# -- XREADGROUP -------------------------------------------------------------------------

@dataclass(slots=True)
class XReadGroupArgs:
    """XREADGROUP's options and keys (the IDs are resolved key by key)."""

    group: bytes = b""
    consumer: bytes = b""
    count: int = 0        # 0: no limit
    timeout: int = -1     # -1: no BLOCK; 0: forever
    noack: bool = False
    keys: list[bytes] = field(default_factory=list)
    claim: int = -1       # CLAIM min-idle-time (Redis 8.4); -1: no CLAIM
    maxcount: int = 0     # MAXCOUNT, entries in total (Redis 8.10); 0: no limit


def _parse_xreadgroup_options(argv: list[bytes]) -> tuple[XReadGroupArgs, int]:
    """Options up to STREAMS; returns them and the index of the first key."""
    args = XReadGroupArgs()
    group_given = False
    streams_pos = 0
    argc = len(argv)
    i = 1
    while i < argc:
        more = argc - 1 - i
        opt = argv[i].upper()
        if opt == b"BLOCK" and more:
            i += 1
            args.timeout = parse_int(argv[i], errors.TIMEOUT_NOT_INTEGER)
            if args.timeout < 0:
                raise CommandError(errors.TIMEOUT_NEGATIVE)
        elif opt == b"COUNT" and more:
            i += 1
            args.count = max(parse_int(argv[i]), 0)
        elif opt == b"MAXCOUNT" and more:
            i += 1
            args.maxcount = max(parse_int(argv[i]), 0)
        elif opt == b"CLAIM" and more:
            i += 1
            args.claim = parse_int(argv[i], errors.CLAIM_NOT_INTEGER)
            if args.claim < 0:
                raise CommandError(errors.CLAIM_NEGATIVE)
        elif opt == b"STREAMS" and more:
            streams_pos = i + 1
            if (argc - streams_pos) % 2:
                raise CommandError(errors.XREADGROUP_UNBALANCED)
            break
        elif opt == b"GROUP" and more >= 2:
            args.group, args.consumer = argv[i + 1], argv[i + 2]
            group_given = True
            i += 2
        elif opt == b"NOACK":
            args.noack = True
        else:
            raise CommandError(errors.SYNTAX)
        i += 1
    if not streams_pos:
        raise CommandError(errors.SYNTAX)
    if not group_given:
        raise CommandError(errors.XREADGROUP_MISSING_GROUP)
    return args, streams_pos


@dataclass(slots=True)
class _Target:
    """One key of an XREADGROUP, resolved."""

    key: bytes
    stream: Stream
    group: ConsumerGroup
    after: StreamID | None  # history read after this ID; None: ">"


def _resolve_targets(ctx: Ctx, args: XReadGroupArgs,
                     id_args: list[bytes] | None) -> list[_Target]:
    """Each key's stream and group, then its ID, key by key in order.

    ``id_args`` None re-resolves a blocked call (its IDs are all ``>``).
    """
    targets = []
    for n, key in enumerate(args.keys):
        stream = ctx.db.get_stream(key)
        group = _group_of(stream, args.group)
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
    """Whether a ``>`` read of this target delivers something."""
    stream = target.stream
    return stream.length > 0 and _last_valid_id(stream) > target.group.last_id


def _has_claimable(target: _Target, now: int, min_idle: int) -> bool:
    """Whether XREADGROUP ... CLAIM would claim something here: a pending
    entry it may take whose stream entry still exists.  Changes nothing.

    Cost: O(log N + d) for d claimable entries gone from the stream."""
    stream = target.stream
    for entry in target.group.claimable(now, min_idle):
        if stream.get(entry.id) is not None:
            return True
    return False


def _servable(target: _Target, args: XReadGroupArgs, now: int) -> bool:
    """Whether a ``>`` read of this target returns something."""
    if _has_news(target):
        return True
    return args.claim >= 0 and _has_claimable(target, now, args.claim)


def _serve(ctx: Ctx, args: XReadGroupArgs, targets: list[_Target],
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
    for target in targets:
        if args.maxcount and budget <= 0:
            break
        limit = capped_count(count, args.maxcount, budget)
        group = target.group
        serve = target.after is not None or _servable(target, args, now)
        if serve:
            consumer, created = group.create_consumer(args.consumer, now)
            if created:
                ctx.changes += 1
                if args.noack:
                    ctx.propagate([b"XGROUP", b"CREATECONSUMER", target.key, group.name,
                                   consumer.name])
        else:
            # Redis 7.0 creates the consumer only when it serves the key; an
            # attempt by an existing one still counts as seen (7.2).
            found = group.consumer(args.consumer)
            if found is not None:
                found.seen_time = now
            continue
        consumer.seen_time = now
        if target.after is not None:
            found = _read_history(target, consumer, limit, now)
        elif args.claim >= 0:
            found = _claim_idle(ctx, target, consumer, limit, now, args.claim)
            if not limit or len(found) < limit:
                left = limit - len(found) if limit else 0
                found += _deliver_new(ctx, args, target, consumer, left, now, claim_form=True)
        else:
            found = _deliver_new(ctx, args, target, consumer, limit, now)
        results.append((target.key, found))
        budget -= len(found)
    return results


def _read_history(target: _Target, consumer: Consumer, count: int, now: int) -> list[Any]:
    """The consumer's pending entries after ``target.after``, oldest first.

    Each one still in the stream counts as delivered again (time now, count
    + 1); one deleted from the stream comes back as ``[id, nil]``.
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
        if fields is None:
            out.append([bytes(entry.id), NULL_ARRAY])
        else:
            out.append(_entry_reply(entry.id, fields))
            group.touch_delivery(entry, now)
        if count and len(out) >= count:
            break
    return out


def _claim_idle(ctx: Ctx, target: _Target, consumer: Consumer, count: int, now: int,
                min_idle: int) -> list[Any]:
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
            ctx.propagate(_gone_effect(key, group, bytes(id), entry))
            group.ack(id)
            ctx.changes += 1
            continue
        idle = -1 if entry.consumer is None else max(now - entry.delivery_time, 0)
        before = entry.delivery_count
        entry = group.claim(id, consumer, now, _one_more(before))
        consumer.active_time = now
        out.append([bytes(id), fields, idle, before])
        ctx.propagate(_xclaim_effect(key, group, bytes(id), entry))
        ctx.changes += 1
    return out


def _deliver_new(ctx: Ctx, args: XReadGroupArgs, target: _Target, consumer: Consumer,
                 count: int, now: int, claim_form: bool = False) -> list[Any]:
    """Deliver entries beyond the group's last ID, recording their effects.

    ``claim_form`` (XREADGROUP ... CLAIM) adds the idle time and delivery
    count every entry then carries, 0 and 0 for a new entry.

    Cost: O(log N + M (log N + log P)) for M entries delivered.
    """
    stream, group, key = target.stream, target.group, target.key
    out: list[Any] = []
    moved = False
    for id, fields in stream.range(group.last_id.incr(), MAX_ID):
        moved = group.advance(id, stream) or moved
        out.append([bytes(id), fields, 0, 0] if claim_form else _entry_reply(id, fields))
        if not args.noack:
            entry = group.deliver(id, consumer, now)
            ctx.propagate(_xclaim_effect(key, group, bytes(id), entry))
        if count and len(out) >= count:
            break
    if moved:
        ctx.propagate(_setid_effect(key, group))
    if out:
        ctx.changes += 1
    return out


@command("xreadgroup", arity=-7, flags="write blocking movablekeys", keys=(0, 0, 0),
         group="stream", since="5.0.0",
         complexity="For each stream: O(M) for M entries returned, plus O(log N) per entry "
                    "added to the pending entries list. A blocked call costs the XADD that "
                    "serves it O(N) for N clients blocked on the stream.",
         summary="Reads new entries as a consumer of a group (or the consumer's pending "
                 "history), optionally blocking until there are some.")
def xreadgroup(ctx: Ctx, argv: list[bytes]) -> Any:
    """XREADGROUP GROUP group consumer [COUNT count] [MAXCOUNT maxcount] [BLOCK milliseconds] [CLAIM min-idle-time] [NOACK] STREAMS key [key ...] id [id ...]"""  # noqa: E501 (the syntax line, whole)
    args, streams_pos = _parse_xreadgroup_options(argv)
    nkeys = (len(argv) - streams_pos) // 2
    args.keys = argv[streams_pos:streams_pos + nkeys]
    targets = _resolve_targets(ctx, args, argv[streams_pos + nkeys:])
    results = _serve(ctx, args, targets, args.count)
    if results:
        return _streams_reply(ctx, results)
    if args.timeout < 0:
        return NULL_ARRAY

    # Every ID is ">" here (a history read is always served).
    served_count = args.count or XREAD_BLOCKED_DEFAULT_COUNT

    timer: list[Any] = []  # the pending CLAIM wake-up, if any

    def retry(woken: Ctx) -> Any:
        # Redis 7.2+ runs the command again: a key or group gone is an error now.
        again = _resolve_targets(woken, args, None)
        now = woken.now_ms()
        if not any(_servable(target, args, now) for target in again):
            _arm_claim_wakeup(woken, args, again, timer)
            return None
        _cancel(timer)
        return _streams_reply(woken, _serve(woken, args, again, served_count))

    if ctx.may_block:  # inside MULTI the command answers at once instead
        _arm_claim_wakeup(ctx, args, targets, timer)
    return Wait(list(dict.fromkeys(args.keys)), args.timeout, retry, NULL_ARRAY)


def _cancel(timer: list[Any]) -> None:
    if timer:
        timer.pop().cancel()


def _arm_claim_wakeup(ctx: Ctx, args: XReadGroupArgs, targets: list[_Target],
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


# -- XACK, XPENDING ---------------------------------------------------------------------

@command("xack", arity=-4, flags="write fast", keys=(1, 1, 1), group="stream",
         since="5.0.0", complexity="O(log N) for each ID, N the pending entries of the group.",
         summary="Acknowledges entries: removes them from the group's pending entries list.")
def xack(ctx: Ctx, argv: list[bytes]) -> Any:
    """XACK key group id [id ...]"""
    group = _group_of(ctx.db.get_stream(argv[1]), argv[2])
    if group is None:
        return 0  # before the IDs are even parsed, as Redis
    ids = [parse_strict_id_arg(arg) for arg in argv[3:]]  # all or nothing
    acked = sum(1 for id in ids if group.ack(id))
    ctx.changes += acked  # propagated verbatim when something was acked
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
    policy, ids = parse_ref_ids(argv, 3)
    key = argv[1]
    stream = ctx.db.get_stream(key)
    group = _group_of(stream, argv[2])
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
        ctx.changes += 1
        if needed is not None and needed(id):
            out.append(2)
            continue
        if stream.delete(id):
            deleted += 1
        if policy == DELREF:
            ctx.changes += drop_references(stream, id)
        out.append(1)
    if deleted:
        ctx.modified(key, deleted)
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
    argc = len(argv)
    i = 4
    while i < argc:
        more = argc - 1 - i
        opt = argv[i].upper()
        if opt == b"IDS" and id_args is None and more:
            numids = parse_int(argv[i + 1], errors.XNACK_IDS_NOT_POSITIVE)
            if numids < 1:
                raise CommandError(errors.XNACK_IDS_NOT_POSITIVE)
            first = i + 2
            if numids > argc - first:
                raise CommandError(errors.XNACK_IDS_MISMATCH)
            id_args = argv[first:first + numids]
            i = first + numids
            continue
        if opt == b"RETRYCOUNT" and more:
            retry_count = parse_int(argv[i + 1])
            if retry_count < 0:
                raise CommandError(errors.XNACK_RETRYCOUNT_NEGATIVE)
            i += 2
            continue
        if opt == b"FORCE":
            force = True
        else:
            raise errors.xnack_unrecognized(argv[i])
        i += 1
    if id_args is None:
        raise CommandError(errors.XNACK_NO_IDS)
    ids = [parse_strict_id_arg(arg) for arg in id_args]

    key, name = argv[1], argv[2]
    stream = ctx.db.get_stream(key)
    group = _group_of(stream, name)
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
        ctx.propagate([b"XNACK", key, name, mode, b"IDS", b"1", bytes(id),
                       b"RETRYCOUNT", b"%d" % count, b"FORCE"])
    if released:
        ctx.changes += released
        ctx.ready(key)  # blocked XREADGROUP ... CLAIM readers can take them now
    return released


@command("xpending", arity=-3, flags="readonly", keys=(1, 1, 1), group="stream",
         since="5.0.0",
         complexity="O(N) for N entries returned; O(C) for C consumers in the summary form.",
         summary="Shows the pending entries of a consumer group: a summary, or the entries "
                 "of a range.")
def xpending(ctx: Ctx, argv: list[bytes]) -> Any:
    """XPENDING key group [[IDLE min-idle-time] start end count [consumer]]"""
    argc = len(argv)
    if argc != 3 and not 6 <= argc <= 9:
        raise CommandError(errors.SYNTAX)
    min_idle = count = 0
    start, end = MIN_ID, MAX_ID
    consumer_name: bytes | None = None
    if argc >= 6:
        pos = 3
        if argv[3].upper() == b"IDLE":
            min_idle = parse_int(argv[4])
            if argc < 8:
                raise CommandError(errors.SYNTAX)
            pos = 5
        count = max(parse_int(argv[pos + 2]), 0)
        start = _interval_start(argv[pos])
        end = _interval_end(argv[pos + 1])
        if pos + 3 < argc:
            consumer_name = argv[pos + 3]  # anything after it is ignored, as Redis

    key, name = argv[1], argv[2]
    group = _group_of(ctx.db.get_stream(key), name)
    if group is None:
        raise errors.nogroup_key_or_group(key, name)

    if argc == 3:
        total, low, high, consumers = group.summary()
        if not total:
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


def _claiming_consumer(group: ConsumerGroup, name: bytes, now: int) -> Consumer | None:
    """The consumer XCLAIM/XAUTOCLAIM claims for, seen now, if it exists.

    Redis 7.0 creates it only when something is claimed (see
    :func:`_new_consumer`); 7.2 creates it up front.  We keep 7.0's consumer
    list and 7.2's meaning of ``seen-time``."""
    consumer = group.consumer(name)
    if consumer is not None:
        consumer.seen_time = now
    return consumer


def _new_consumer(ctx: Ctx, group: ConsumerGroup, name: bytes, now: int) -> Consumer:
    consumer, _ = group.create_consumer(name, now)
    ctx.changes += 1
    return consumer


@command("xclaim", arity=-6, flags="write fast", keys=(1, 1, 1), group="stream",
         since="5.0.0", complexity="O(log N) for each ID, N the pending entries of the group.",
         summary="Takes over pending entries of a group for a consumer, when idle long enough.")
def xclaim(ctx: Ctx, argv: list[bytes]) -> Any:
    """XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-time-milliseconds] [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID lastid]"""  # noqa: E501 (the syntax line, whole)
    key, name = argv[1], argv[2]
    stream = ctx.db.get_stream(key)
    group = _group_of(stream, name)
    if group is None:
        raise errors.nogroup_key_or_group(key, name)
    assert stream is not None
    min_idle = max(parse_int(argv[4], errors.XCLAIM_MIN_IDLE), 0)

    # IDs first; the first word that is no ID starts the options.
    ids: list[tuple[bytes, StreamID]] = []
    j = 5
    while j < len(argv):
        try:
            ids.append((argv[j], parse_strict_id_arg(argv[j])))
        except CommandError:
            break
        j += 1
    now = ctx.now_ms()
    opts = XClaimArgs()
    while j < len(argv):
        more = len(argv) - 1 - j
        opt = argv[j].upper()
        if opt == b"FORCE":
            opts.force = True
        elif opt == b"JUSTID":
            opts.justid = True
        elif opt == b"IDLE" and more:
            j += 1
            opts.delivery_time = now - parse_int(argv[j], errors.XCLAIM_IDLE)
        elif opt == b"TIME" and more:
            j += 1
            opts.delivery_time = parse_int(argv[j], errors.XCLAIM_TIME)
        elif opt == b"RETRYCOUNT" and more:
            j += 1
            opts.retry_count = parse_int(argv[j], errors.XCLAIM_RETRYCOUNT)
        elif opt == b"LASTID" and more:
            j += 1
            opts.last_id = parse_strict_id_arg(argv[j])
        else:
            raise errors.xclaim_unrecognized(argv[j])
        j += 1

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

    consumer = _claiming_consumer(group, argv[3], now)
    out: list[Any] = []
    for id_arg, id in ids:
        entry = group.pending(id)
        fields = stream.get(id)
        if fields is None:  # gone from the stream: drop it from the PEL too
            if entry is not None:
                ctx.propagate(_gone_effect(key, group, id_arg, entry))
                group.ack(id)
                setid_pending = False
                ctx.changes += 1
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
            count = _one_more(count)
        if consumer is None:
            consumer = _new_consumer(ctx, group, argv[3], now)
        entry = group.claim(id, consumer, delivery_time, count)
        consumer.active_time = now
        out.append(bytes(id) if opts.justid else _entry_reply(id, fields))
        ctx.propagate(_xclaim_effect(key, group, id_arg, entry))
        setid_pending = False
        ctx.changes += 1
    if setid_pending:  # LASTID moved the group and no XCLAIM carried it
        ctx.propagate(_setid_effect(key, group))
        ctx.changes += 1
    return out


@command("xautoclaim", arity=-6, flags="write fast", keys=(1, 1, 1), group="stream",
         since="6.2.0",
         complexity="O(1) if COUNT is small; at most COUNT * 10 pending entries are scanned.",
         summary="Takes over the pending entries of a group that are idle long enough, "
                 "scanning from a cursor.")
def xautoclaim(ctx: Ctx, argv: list[bytes]) -> Any:
    """XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]"""
    min_idle = max(parse_int(argv[4], errors.XAUTOCLAIM_MIN_IDLE), 0)
    start = _interval_start(argv[5])
    count = XAUTOCLAIM_DEFAULT_COUNT
    justid = False
    j = 6
    while j < len(argv):
        more = len(argv) - 1 - j
        opt = argv[j].upper()
        if opt == b"COUNT" and more:
            count = parse_int(argv[j + 1], errors.XAUTOCLAIM_COUNT)
            if not 1 <= count <= XAUTOCLAIM_MAX_COUNT:
                raise CommandError(errors.XAUTOCLAIM_COUNT)
            j += 1
        elif opt == b"JUSTID":
            justid = True
        else:
            raise CommandError(errors.SYNTAX)
        j += 1

    key, name = argv[1], argv[2]
    stream = ctx.db.get_stream(key)
    group = _group_of(stream, name)
    if group is None:
        raise errors.nogroup_key_or_group(key, name)
    assert stream is not None

    ctx.no_propagation()
    now = ctx.now_ms()
    consumer = _claiming_consumer(group, argv[3], now)
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
            ctx.propagate(_gone_effect(key, group, bytes(id), entry))
            group.ack(id)
            deleted.append(bytes(id))
            ctx.changes += 1
            count -= 1  # COUNT bounds the reply, deleted IDs included
            continue
        # An unowned (XNACKed) entry is claimable whatever min-idle-time says.
        if entry.consumer is not None and min_idle and now - entry.delivery_time < min_idle:
            continue
        if consumer is None:
            consumer = _new_consumer(ctx, group, argv[3], now)
        deliveries = entry.delivery_count if justid else _one_more(entry.delivery_count)
        entry = group.claim(id, consumer, now, deliveries)
        consumer.active_time = now
        claimed.append(bytes(id) if justid else _entry_reply(id, fields))
        ctx.propagate(_xclaim_effect(key, group, bytes(id), entry))
        ctx.changes += 1
        count -= 1
    # The cursor: the next pending ID not looked at, or 0-0 when none is left.
    following = next(scan, None)
    cursor = following.id if following is not None else MIN_ID
    return [bytes(cursor), claimed, deleted]


# -- XINFO ------------------------------------------------------------------------------

@command("xinfo", arity=-2, group="stream", since="5.0.0", complexity="Depends on subcommand.",
         summary="A container for stream introspection commands.", container=True)
def xinfo(ctx: Ctx, argv: list[bytes]) -> Any:
    """XINFO subcommand [argument ...]"""


def _xinfo_stream(ctx: Ctx, key: bytes) -> Stream:
    stream = ctx.db.get_stream(key)
    if stream is None:
        raise CommandError(errors.NO_SUCH_KEY)
    return stream


def radix_tree_nodes(stream: Stream) -> int:
    """XINFO's ``radix-tree-nodes``: the nodes of an ideal radix tree over the node keys.

    Redis keeps its node keys (16-byte big-endian IDs) in a radix tree and
    reports its node count.  We keep them in a sorted list, so we count the
    nodes a compressed radix tree over the same keys has: the root, every
    key, every prefix where keys branch, and every child of such a prefix.
    Equal to Redis's count in every sequence tried (appends, XDEL, XTRIM),
    but not proven equal after every possible history of removals.

    Cost: O(K) for K nodes (16 bytes each).
    """
    keys = [id.ms.to_bytes(8, "big") + id.seq.to_bytes(8, "big") for id, _ in stream.nodes()]
    found = {b""}
    found.update(keys)
    for a, b in zip(keys, keys[1:]):
        common = 0
        while a[common] == b[common]:
            common += 1
        found.add(a[:common])
        found.add(a[:common + 1])
        found.add(b[:common + 1])
    return len(found)


def _stream_head(ctx: Ctx, stream: Stream) -> list[tuple[bytes, Any]]:
    """The fields XINFO STREAM starts with, FULL or not (IDMP's from Redis 8.6)."""
    return [
        (b"length", stream.length),
        (b"radix-tree-keys", stream.node_count),
        (b"radix-tree-nodes", radix_tree_nodes(stream)),
        (b"last-generated-id", bytes(stream.last_id)),
        (b"max-deleted-entry-id", bytes(stream.max_deleted_entry_id)),
        (b"entries-added", stream.entries_added),
        (b"recorded-first-entry-id", bytes(stream.first_id)),
        *idmp_info_fields(ctx, stream),
    ]


def _entries_read(group: ConsumerGroup) -> int | None:
    return None if group.entries_read == UNKNOWN else group.entries_read


def _full_group(group: ConsumerGroup, stream: Stream, count: int) -> Map:
    """One group of XINFO STREAM FULL; ``count`` bounds each PEL shown (0: all)."""
    pending = []
    for entry in group.pending_range(MIN_ID, MAX_ID):
        if count and len(pending) >= count:
            break
        owner = entry.consumer.name if entry.consumer is not None else b""
        pending.append([bytes(entry.id), owner, entry.delivery_time, entry.delivery_count])
    consumers = []
    for consumer in group.consumers.values():
        own = []
        for entry in consumer.pel.values():
            if count and len(own) >= count:
                break
            own.append([bytes(entry.id), entry.delivery_time, entry.delivery_count])
        consumers.append(Map([
            (b"name", consumer.name),
            (b"seen-time", consumer.seen_time),
            (b"active-time", consumer.active_time),  # Redis 7.2
            (b"pel-count", len(consumer.pel)),
            (b"pending", own),
        ]))
    return Map([
        (b"name", group.name),
        (b"last-delivered-id", bytes(group.last_id)),
        (b"entries-read", _entries_read(group)),
        (b"lag", group.lag(stream)),
        (b"pel-count", len(group.pel)),
        (b"pending", pending),
        (b"consumers", consumers),
        (b"nacked-count", group.nacked_count),  # Redis 8.8
    ])


@command("xinfo|stream", arity=-3, flags="readonly", keys=(2, 2, 1), group="stream",
         since="5.0.0",
         complexity="O(log N) for the summary (plus the node count); FULL: O(E + G + P) "
                    "for the E entries, G groups and P pending entries shown.",
         summary="Shows a stream's counters, first and last entries, or (FULL) its "
                 "entries and groups.")
def xinfo_stream(ctx: Ctx, argv: list[bytes]) -> Any:
    """XINFO STREAM key [FULL [COUNT count]]"""
    stream = _xinfo_stream(ctx, argv[2])
    options = argv[3:]
    if not options:
        first = stream.first_entry()
        last = stream.last_entry()
        return Map(_stream_head(ctx, stream) + [
            (b"groups", len(stream.groups)),
            (b"first-entry", _entry_reply(*first) if first is not None else None),
            (b"last-entry", _entry_reply(*last) if last is not None else None),
        ])
    if len(options) not in (1, 3) or options[0].upper() != b"FULL":
        raise errors.subcommand_syntax(argv[1], b"xinfo")
    count = XINFO_FULL_DEFAULT_COUNT
    if len(options) == 3:
        if options[1].upper() != b"COUNT":
            raise errors.subcommand_syntax(argv[1], b"xinfo")
        count = parse_int(options[2])
        if count < 0:
            count = XINFO_FULL_DEFAULT_COUNT
    return Map(_stream_head(ctx, stream) + [
        (b"entries", _entries(stream, MIN_ID, MAX_ID, count)),
        (b"groups", [_full_group(group, stream, count)
                     for _, group in sorted(stream.groups.items())]),
    ])


@command("xinfo|groups", arity=3, flags="readonly", keys=(2, 2, 1), group="stream",
         since="5.0.0", complexity="O(G) for G groups.",
         summary="Shows the consumer groups of a stream.")
def xinfo_groups(ctx: Ctx, argv: list[bytes]) -> Any:
    """XINFO GROUPS key"""
    stream = _xinfo_stream(ctx, argv[2])
    return [
        Map([
            (b"name", group.name),
            (b"consumers", len(group.consumers)),
            (b"pending", len(group.pel)),
            (b"last-delivered-id", bytes(group.last_id)),
            (b"entries-read", _entries_read(group)),
            (b"lag", group.lag(stream)),
        ])
        for _, group in sorted(stream.groups.items())
    ]


@command("xinfo|consumers", arity=4, flags="readonly", keys=(2, 2, 1), group="stream",
         since="5.0.0", complexity="O(C) for C consumers.",
         summary="Shows the consumers of a group: pending entries, idle and inactive times.")
def xinfo_consumers(ctx: Ctx, argv: list[bytes]) -> Any:
    """XINFO CONSUMERS key group"""
    key, name = argv[2], argv[3]
    group = _xinfo_stream(ctx, key).groups.get(name)
    if group is None:
        raise errors.nogroup_for_key(name, key)
    now = ctx.now_ms()
    out = []
    for consumer in group.consumers.values():
        inactive = -1 if consumer.active_time == -1 else max(now - consumer.active_time, 0)
        out.append(Map([
            (b"name", consumer.name),
            (b"pending", len(consumer.pel)),
            (b"idle", max(now - consumer.seen_time, 0)),
            (b"inactive", inactive),  # Redis 7.2
        ]))
    return out


@command("xinfo|help", arity=2, flags="loading stale", group="stream", since="5.0.0",
         complexity="O(1)", summary="Shows the XINFO subcommands.")
def xinfo_help(ctx: Ctx, argv: list[bytes]) -> Any:
    """XINFO HELP"""
    return help_reply(_XINFO_HELP)
