"""Stream commands: XADD, XLEN, XRANGE, XREVRANGE, XDEL, XDELEX, XTRIM, XSETID, XREAD.

Each handler parses its arguments into a small record (:class:`TrimArgs`,
:class:`XAddArgs`) in the order, and with the errors, of Redis 7.0's parser,
then calls the :class:`~tidelog.types.stream.Stream` API and returns a reply
value.  Argument errors come before key lookups (so a bad option on a string
key is a syntax error, not WRONGTYPE) except where Redis looks the key up
first (XDEL, XREAD); the tests pin each order against redis-server.
Arguments past the fixed ones are read with
:class:`~tidelog.commands.args.ArgReader`, except the commonest option
forms of XADD (``MAXLEN ~ n *``) and XRANGE (``COUNT n``), read by hand for
speed into the same values.  ``XADD key * field value ...``, the producers'
form, has its own short path (:func:`_xadd_auto`): no options to read.

Effects (REFERENCE §4.1): what goes to the AOF and to replicas is what the
command did, not what it was asked:

* XADD with ``*`` or ``<ms>-*`` propagates the ID it generated;
* ``MAXLEN ~ n`` becomes ``MAXLEN = <length after trimming>`` and
  ``MINID ~ id`` becomes ``MINID = <first ID left>`` (the ``~`` argument is
  replaced in place, LIMIT is kept as given; replicas ignore it).  Like
  Redis, "first ID left" counts an entry flagged deleted inside the first
  node (it is that node's master ID), and is the largest ID when no node is
  left;
* XTRIM, XDEL and XSETID go out verbatim (XTRIM ``~`` rewritten as above),
  and only when they changed something (XSETID always does);
* XADD ``IDMP``/``IDMPAUTO`` keeps the option in the effect (with the real
  ID), and a retry that added nothing propagates nothing: see ``idmp.py``.

Redis 8.2's reference policies (``KEEPREF | DELREF | ACKED``) on XADD and
XTRIM trimming, and XDELEX, keep their words in the effect: given the same
stream and groups (which the effects before them built), a replica does
the same thing.  Trimming with ACKED stops at the first entry some group
still needs (:func:`~tidelog.types.groups.referenced_by`), so the exact
``= <length>`` / ``= <first ID>`` an approximate trim is rewritten to makes
a replica remove exactly the entries the primary removed.  XDELEX goes out
verbatim whenever it changed the stream or a PEL (DELREF may change only
PELs).

Blocking: XREAD BLOCK resolves every ``$`` and ``+`` to a concrete ID when
it is called, then returns a :class:`~tidelog.commands.contract.Wait`.  The engine
retries it each time one of its keys is made ready (XADD does that); the
retry serves the key that became ready, and that key only, as Redis does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ... import errors
from ...config import NOTIFY_STREAM
from ...errors import CommandError
from ...ids import MAX_ID, MIN_ID, UINT64_MAX, InvalidStreamID, StreamID, parse_strict_id
from ...resp.replies import NULL_ARRAY, OK
from ...types.groups import clamp_entries_read, referenced_by
from ...types.stream import Stream
from ..args import ArgReader, parse_int
from ..contract import Ctx, Wait
from ..lookup import lookup_read_typed
from ..replies import SizeBudget, capped_count, entries_reply, last_valid_id, streams_reply
from ..table import command, runs
from .group_ops import drop_references
from .idmp import xadd_iid, xadd_record, xadd_retry
from .stream_args import (
    ACKED,
    DELREF,
    KEEPREF,
    REF_POLICIES,
    XREAD_BLOCKED_DEFAULT_COUNT,
    parse_read_options,
    parse_ref_ids,
    parse_strict_id_arg,
    range_end,
    range_start,
)

MAXLEN = b"MAXLEN"
MINID = b"MINID"

# Bounds of the default LIMIT of an approximate trim, 100 * node entries.
_APPROX_LIMIT_FALLBACK = 10_000
_APPROX_LIMIT_MAX = 1_000_000


# -- argument records and their parsers -------------------------------------------

@dataclass(slots=True)
class TrimArgs:
    """A trimming request, shared by XADD and XTRIM."""

    strategy: bytes = b""        # MAXLEN, MINID, or b"" when none was given
    maxlen: int = 0              # MAXLEN threshold
    minid: StreamID = MIN_ID     # MINID threshold
    approx: bool = False         # "~" given: remove whole nodes only
    limit: int = 0               # most entries to remove; 0 = no limit (resolved)
    threshold_pos: int = 0       # argv index of the threshold (rewritten for "~")
    policy: bytes = KEEPREF      # KEEPREF, DELREF or ACKED (Redis 8.2)


@dataclass(slots=True)
class XAddArgs:
    """XADD's options and ID (XTRIM uses ``trim`` only)."""

    trim: TrimArgs = field(default_factory=TrimArgs)
    nomkstream: bool = False
    id: StreamID | None = None   # None: "*", generate from the clock
    seq_given: bool = True       # False for "<ms>-*"
    id_pos: int = 0              # argv index of the ID; fields follow it
    idmp_pid: bytes | None = None  # IDMP/IDMPAUTO producer ID (commands/idmp.py)
    idmp_iid: bytes | None = None  # IDMP's idempotent ID; None with IDMPAUTO


def _must_obey(ctx: Ctx) -> bool:
    """Commands from our primary or the AOF are applied, never refused."""
    return ctx.client.kind in ("master", "aof")


def approx_trim_limit(node_max_entries: int) -> int:
    """The LIMIT of ``~`` trimming when none is given: 100 nodes' worth."""
    limit = 100 * node_max_entries
    if limit <= 0:
        return _APPROX_LIMIT_FALLBACK
    return min(limit, _APPROX_LIMIT_MAX)


def _read_add_or_trim_options(ctx: Ctx, r: ArgReader, args: XAddArgs, xadd: bool) -> bool:
    """The option loop of :func:`parse_add_or_trim`, into ``args``; True if LIMIT was given."""
    trim = args.trim
    limit_given = False
    policy_given = False
    while r.more():
        opt = r.next_bytes()
        if xadd and opt == b"*":
            args.id_pos = r.pos - 1
            break
        upper = opt.upper()
        if upper in (MAXLEN, MINID) and r.more():
            if trim.strategy:
                raise CommandError(errors.MAXLEN_AND_MINID)
            trim.approx = False
            if r.remaining() >= 2:
                nxt = r.peek()
                if nxt == b"~":
                    trim.approx = True
                    r.next_bytes()
                elif nxt == b"=":
                    r.next_bytes()
            trim.threshold_pos = r.pos
            if upper == MAXLEN:
                trim.maxlen = r.next_int()
                if trim.maxlen < 0:
                    raise CommandError(errors.MAXLEN_NEGATIVE)
            else:
                trim.minid = parse_strict_id_arg(r.next_bytes())
            trim.strategy = upper
        elif upper == b"LIMIT" and r.more():
            trim.limit = r.next_int()
            if trim.limit < 0:
                raise CommandError(errors.LIMIT_NEGATIVE)
            limit_given = True
        elif xadd and upper == b"NOMKSTREAM":
            args.nomkstream = True
        elif upper in REF_POLICIES:
            if policy_given:  # one policy at most (as XDELEX and XACKDEL)
                raise CommandError(errors.SYNTAX)
            trim.policy = upper
            policy_given = True
        elif xadd and upper == b"IDMP" and r.remaining() >= 2:
            if args.idmp_pid is not None:
                raise CommandError(errors.IDMP_TWICE)
            args.idmp_pid, args.idmp_iid = r.take(2)
            if not args.idmp_pid:
                raise CommandError(errors.IDMP_EMPTY_PID)
            if not args.idmp_iid:
                raise CommandError(errors.IDMP_EMPTY_IID)
        elif xadd and upper == b"IDMPAUTO" and r.more():
            if args.idmp_pid is not None:
                raise CommandError(errors.IDMP_TWICE)
            args.idmp_pid = r.next_bytes()
            if not args.idmp_pid:
                raise CommandError(errors.IDMPAUTO_EMPTY_PID)
        elif xadd:
            try:
                id, args.seq_given = parse_strict_id(opt)
            except InvalidStreamID:
                raise CommandError(errors.INVALID_STREAM_ID) from None
            # IDMP needs "*"; our primary and the AOF send the ID it produced.
            if args.idmp_pid is not None and not _must_obey(ctx):
                raise CommandError(errors.IDMP_ONLY_WITH_AUTO_ID)
            args.id = id
            args.id_pos = r.pos - 1
            break
        else:
            raise CommandError(errors.SYNTAX)
    else:
        args.id_pos = r.pos  # XADD without an ID: the arity check refuses it
        r.finish()  # XTRIM: every argument is an option
    return limit_given


def parse_add_or_trim(ctx: Ctx, argv: list[bytes], xadd: bool) -> XAddArgs:
    """Parse XADD's arguments up to its ID, or all of XTRIM's.

    Options may come in any order (for XADD, before the ID).  A word that is
    no option is XADD's ID; for XTRIM it is a syntax error.  An option name
    in the last position is not an option (Redis's ``moreargs`` rule), so
    ``XADD k MAXLEN`` reads MAXLEN as the ID.  XADD's fields and values
    follow the ID (``id_pos``); XTRIM ends with its options.
    """
    args = XAddArgs()
    trim = args.trim
    if xadd and len(argv) > 5 and argv[5] == b"*" and argv[3] == b"~" \
            and argv[2].upper() == MAXLEN:
        # XADD key MAXLEN ~ count * ...: the capped stream, XADD's commonest
        # form with options, read by hand because the cursor's construction
        # and calls made this parse 34% slower (measured: 1.34 us hand-indexed
        # before, 1.80 us through ArgReader, 1.13 us here).  Every other form
        # goes through the reader, to the same record.
        trim.maxlen = parse_int(argv[4])
        if trim.maxlen < 0:
            raise CommandError(errors.MAXLEN_NEGATIVE)
        trim.strategy, trim.approx, trim.threshold_pos = MAXLEN, True, 4
        args.id_pos = 5
        limit_given = False
    else:
        limit_given = _read_add_or_trim_options(ctx, ArgReader(argv, 2), args, xadd)
    if trim.limit and not trim.strategy:
        raise CommandError(errors.LIMIT_WITHOUT_STRATEGY)
    if not xadd and not trim.strategy:
        raise CommandError(errors.XTRIM_WITHOUT_STRATEGY)
    if _must_obey(ctx):
        trim.limit = 0  # the threshold was rewritten to an exact one upstream
    elif limit_given:
        if not trim.approx:
            raise CommandError(errors.LIMIT_WITHOUT_APPROX)
    elif trim.approx:
        trim.limit = approx_trim_limit(ctx.config["stream-node-max-entries"])
    else:
        trim.limit = 0
    return args


# -- helpers ------------------------------------------------------------------------

def _trim(stream: Stream, trim: TrimArgs) -> int:
    """Trim as asked, applying the reference policy; returns how many entries went.

    ACKED stops at the first entry a group still needs; DELREF, when
    anything went, drops from every group's PEL each reference to an ID
    below the first entry left (every reference, if none is left): those
    entries are gone, trimmed now or deleted before.  With no groups the
    policy changes nothing.  Cost: as the Stream trim, plus for ACKED O(G)
    per entry examined and for DELREF O(log N + k) per group (k dropped).
    """
    keep = referenced_by(stream.groups.values()) if trim.policy == ACKED else None
    if trim.strategy == MAXLEN:
        removed = stream.trim_maxlen(trim.maxlen, trim.approx, trim.limit, keep)
    else:
        removed = stream.trim_minid(trim.minid, trim.approx, trim.limit, keep)
    if removed and trim.policy == DELREF and stream.groups:
        below = stream.first_id.decr() if stream.length else MAX_ID
        for group in stream.groups.values():
            group.drop_range(MIN_ID, below)
    return removed


def _rewrite_approx(argv: list[bytes], stream: Stream, trim: TrimArgs) -> list[bytes]:
    """argv with ``~ <threshold>`` replaced by ``= <what the trim left>``."""
    out = list(argv)
    out[trim.threshold_pos - 1] = b"="
    if trim.strategy == MAXLEN:
        out[trim.threshold_pos] = b"%d" % stream.length
    else:
        first_node = next(stream.nodes(), None)
        out[trim.threshold_pos] = bytes(first_node[0] if first_node else MAX_ID)
    return out


def _next_id(stream: Stream, args: XAddArgs, now_ms: int) -> StreamID:
    """The ID XADD adds: generated, completed (``<ms>-*``) or as given."""
    last = stream.last_id
    if args.id is None:
        new = StreamID(now_ms, 0) if now_ms > last.ms else last.incr()
    elif not args.seq_given and args.id.ms == last.ms:
        if last.seq == UINT64_MAX:
            raise CommandError(errors.XADD_ID_TOO_SMALL)
        new = StreamID(last.ms, last.seq + 1)
    else:
        new = args.id
    if new <= last:
        raise CommandError(errors.XADD_ID_TOO_SMALL)
    return new


# -- commands ---------------------------------------------------------------------

@command("xadd", arity=-5, flags="write denyoom fast", keys=(1, 1, 1), group="stream",
         since="5.0.0",
         complexity="O(1) when adding a new entry, O(N) when trimming where N is the "
                    "number of entries evicted.",
         summary="Appends a new entry to a stream, creating the stream if needed.")
def xadd(ctx: Ctx, argv: list[bytes]) -> Any:
    """XADD key [NOMKSTREAM] [KEEPREF | DELREF | ACKED] [IDMPAUTO pid | IDMP pid iid] [<MAXLEN | MINID> [= | ~] threshold [LIMIT count]] <* | id> field value [field value ...]"""  # noqa: E501 (the syntax line, whole)
    if argv[2] == b"*":
        return _xadd_auto(ctx, argv)
    args = parse_add_or_trim(ctx, argv, xadd=True)
    fields_values = argv[args.id_pos + 1:]
    if len(fields_values) < 2 or len(fields_values) % 2:
        raise errors.wrong_arity(b"xadd")
    # 0-0 is refused before the key is looked up (and so never created).
    if args.id == MIN_ID and args.seq_given:
        raise CommandError(errors.XADD_ID_ZERO)

    key = argv[1]
    stream = ctx.db.get_stream(key)
    created = stream is None
    if stream is None:
        if args.nomkstream:
            return None
        stream = Stream()
    iid = xadd_iid(args.idmp_pid, args.idmp_iid, fields_values)
    if iid is not None:
        original = xadd_retry(ctx, key, stream, args.idmp_pid, iid)
        if original is not None:
            return bytes(original)  # a retry: nothing added, nothing propagated
    if stream.last_id == MAX_ID:
        raise CommandError(errors.XADD_ID_EXHAUSTED)
    new_id = _next_id(stream, args, ctx.now_ms())
    config = ctx.config
    stream.append(new_id, fields_values, config["stream-node-max-entries"],
                  config["stream-node-max-bytes"])
    if created:
        ctx.db.set(key, stream)
    if iid is not None:
        xadd_record(ctx, stream, args.idmp_pid, iid, new_id)  # before trimming

    effect = argv
    trim = args.trim
    trimmed = 0
    if trim.strategy:
        trimmed = _trim(stream, trim)
        if trim.approx:
            effect = _rewrite_approx(argv, stream, trim)
    id_bytes = bytes(new_id)  # formatted once: the reply and the effect
    if args.id is None or not args.seq_given:
        if effect is argv:
            effect = list(argv)
        effect[args.id_pos] = id_bytes
    ctx.modified(key)
    ctx.effect(effect)
    ctx.ready(key)
    if ctx.engine.notify_flags:
        ctx.notify(NOTIFY_STREAM, b"xadd", key)
        if trimmed:
            ctx.notify(NOTIFY_STREAM, b"xtrim", key)
    return id_bytes


def _xadd_auto(ctx: Ctx, argv: list[bytes]) -> Any:
    """``XADD key * field value [field value ...]``: no options, a generated ID.

    The form producers send, run without the option record: a run of one
    (:func:`_xadd_auto_run`).  Cost: O(F) for F fields."""
    reply = _xadd_auto_run(ctx, [argv])[0]
    if reply.__class__ is CommandError:
        raise reply
    return reply


def _xadd_auto_key(argv: list[bytes]) -> bytes | None:
    """The key of ``XADD key * ...`` (the form :func:`_xadd_auto` runs), else None."""
    return argv[1] if argv[2] == b"*" else None


@runs("xadd", _xadd_auto_key)
def _xadd_auto_run(ctx: Ctx, run: list[list[bytes]]) -> list[Any]:
    """A producer's pipelined burst: consecutive ``XADD key * field value ...``
    on one key, each exactly as :func:`_xadd_auto` would run it (the same
    checks in the same order, one reply or error each, one effect each),
    with the key looked up, the clock and the node limits read once.
    Cost: O(F) per call for F fields."""
    key = run[0][1]
    db = ctx.db
    wrongtype = None
    try:
        stream = db.get_stream(key)
    except CommandError as exc:
        stream, wrongtype = None, exc
    config = ctx.config
    max_entries = config["stream-node-max-entries"]
    max_bytes = config["stream-node-max-bytes"]
    now_ms = ctx.now_ms()
    propagating = ctx.propagating
    replies: list[Any] = []
    ids: list[StreamID] = []
    fvs: list[list[bytes]] = []
    last = stream.last_id if stream is not None else MIN_ID
    for argv in run:
        if not len(argv) & 1:
            replies.append(errors.wrong_arity(b"xadd"))
        elif wrongtype is not None:
            replies.append(wrongtype)
        elif last == MAX_ID:
            replies.append(CommandError(errors.XADD_ID_EXHAUSTED))
        else:
            last = StreamID(now_ms, 0) if now_ms > last[0] else last.incr()
            ids.append(last)
            fvs.append(argv[3:])
            id_bytes = b"%d-%d" % last
            replies.append(id_bytes)
            if propagating:
                effect = list(argv)
                effect[2] = id_bytes
                ctx.effect(effect)
    if ids:
        if stream is None:
            stream = Stream()
            db.set(key, stream)
        if len(ids) == 1:  # a single XADD: append's checks cost less than extend's
            stream.append(ids[0], fvs[0], max_entries, max_bytes)
        else:
            stream.extend(ids, fvs, max_entries, max_bytes)
        ctx.modified(key, len(ids))
        ctx.ready(key)
        if ctx.engine.notify_flags:
            for _ in ids:
                ctx.notify(NOTIFY_STREAM, b"xadd", key)
    ctx.no_propagation()  # the effects above, one per call that added
    return replies


@command("xlen", arity=2, flags="readonly fast", keys=(1, 1, 1), group="stream",
         since="5.0.0", complexity="O(1)",
         summary="Returns the number of entries in a stream.")
def xlen(ctx: Ctx, argv: list[bytes]) -> Any:
    """XLEN key"""
    stream = lookup_read_typed(ctx, argv[1], Stream)
    return 0 if stream is None else stream.length


def _xrange_generic(ctx: Ctx, argv: list[bytes], rev: bool) -> Any:
    """XRANGE and XREVRANGE: the same, with the bounds swapped."""
    low_arg, high_arg = (argv[3], argv[2]) if rev else (argv[2], argv[3])
    start = range_start(low_arg)
    end = range_end(high_arg)

    count = -1  # no COUNT
    argc = len(argv)
    if argc == 6 and argv[4].upper() == b"COUNT":
        # XRANGE key start end COUNT n, the paging form, read by hand because
        # the cursor made this handler 40% slower before the stream is even
        # read (measured on a missing key: 0.89 us hand-indexed, 1.25 us
        # through ArgReader, 0.84 us here).  Any other option list goes
        # through the reader; with none, there is nothing to read.
        count = max(parse_int(argv[5]), 0)
    elif argc > 4:
        r = ArgReader(argv, 4)
        while r.more():
            if r.next_upper() == b"COUNT" and r.more():
                count = max(r.next_int(), 0)
            else:
                raise CommandError(errors.SYNTAX)
        r.finish()

    stream = lookup_read_typed(ctx, argv[1], Stream)
    if stream is None:
        return []
    if count == 0:
        return NULL_ARRAY  # Redis 7.0 answers COUNT 0 (or negative) with a null array
    return entries_reply(stream, start, end, max(count, 0), rev)


@command("xrange", arity=-4, flags="readonly", keys=(1, 1, 1), group="stream",
         since="5.0.0",
         complexity="O(N) with N being the number of elements being returned. If N is "
                    "constant (e.g. always asking for the first 10 elements with COUNT), "
                    "you can consider it O(1).",
         summary="Returns the entries of a stream within a range of IDs.")
def xrange(ctx: Ctx, argv: list[bytes]) -> Any:
    """XRANGE key start end [COUNT count]"""
    return _xrange_generic(ctx, argv, rev=False)


@command("xrevrange", arity=-4, flags="readonly", keys=(1, 1, 1), group="stream",
         since="5.0.0",
         complexity="O(N) with N being the number of elements returned. If N is "
                    "constant (e.g. always asking for the first 10 elements with COUNT), "
                    "you can consider it O(1).",
         summary="Returns the entries of a stream within a range of IDs, newest first.")
def xrevrange(ctx: Ctx, argv: list[bytes]) -> Any:
    """XREVRANGE key end start [COUNT count]"""
    return _xrange_generic(ctx, argv, rev=True)


@command("xdel", arity=-3, flags="write fast", keys=(1, 1, 1), group="stream",
         since="5.0.0",
         complexity="O(1) for each single item to delete in the stream, regardless of "
                    "the stream size.",
         summary="Deletes entries from a stream, returning how many existed.")
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
        ctx.propagate_argv()
    return out


@command("xtrim", arity=-4, flags="write", keys=(1, 1, 1), group="stream",
         since="5.0.0",
         complexity="O(N), with N being the number of evicted entries. Constant times "
                    "are very small however, since entries are organized in macro nodes "
                    "containing multiple entries that can be released with a single "
                    "deallocation.",
         summary="Deletes the oldest entries of a stream, returning how many went.")
def xtrim(ctx: Ctx, argv: list[bytes]) -> Any:
    """XTRIM key <MAXLEN | MINID> [= | ~] threshold [LIMIT count] [KEEPREF | DELREF | ACKED]"""
    trim = parse_add_or_trim(ctx, argv, xadd=False).trim
    key = argv[1]
    stream = ctx.db.get_stream(key)
    if stream is None:
        return 0
    removed = _trim(stream, trim)
    if removed:
        ctx.modified(key, removed)
        ctx.notify(NOTIFY_STREAM, b"xtrim", key)
        if trim.approx:
            ctx.effect(_rewrite_approx(argv, stream, trim))
        else:
            ctx.propagate_argv()
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


@command("xread", arity=-4, flags="readonly blocking movablekeys", keys=(0, 0, 0),
         group="stream", since="5.0.0",
         complexity="For each stream mentioned: O(M) with M being the number of elements "
                    "returned. If M is constant (e.g. always asking for the first 10 "
                    "elements with COUNT), you can consider it O(1). On the other side "
                    "when XREAD blocks, XADD will pay the O(N) time in order to serve the "
                    "N clients blocked on the stream getting new data.",
         summary="Returns entries from one or more streams with IDs above the ones given, "
                 "optionally blocking until there are some.")
def xread(ctx: Ctx, argv: list[bytes]) -> Any:
    """XREAD [COUNT count] [MAXCOUNT maxcount] [MAXSIZE maxsize] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]"""  # noqa: E501 (the syntax line, whole)
    opts = parse_read_options(argv, group=False)
    timeout, count, maxcount, keys = opts.timeout, opts.count, opts.maxcount, opts.keys
    # The ID after which each stream is read; keys are checked in order, each
    # key's type before its ID.
    after: list[StreamID] = []
    for key, id_arg in zip(keys, opts.ids):
        stream = lookup_read_typed(ctx, key, Stream)  # and again below: twice, as in Redis
        if id_arg == b"$":
            after.append(stream.last_id if stream is not None else MIN_ID)
        elif id_arg == b"+":
            # Redis 7.4: just the last entry (an empty stream reads like "$").
            if stream is None:
                after.append(MIN_ID)
            elif stream.length:
                after.append(last_valid_id(stream).decr())
            else:
                after.append(stream.last_id)
        elif id_arg == b">":
            raise CommandError(errors.XREAD_GT_ID)
        else:
            after.append(parse_strict_id_arg(id_arg))

    results = []
    budget = maxcount
    size = SizeBudget(opts.maxsize) if opts.maxsize else None
    for key, gt in zip(keys, after):
        if maxcount and budget <= 0:
            break  # MAXCOUNT reached: the keys after it are not served
        stream = lookup_read_typed(ctx, key, Stream)
        if stream is not None and last_valid_id(stream) > gt:
            found = entries_reply(stream, gt.incr(), MAX_ID, capped_count(count, maxcount, budget))
            if size is not None:
                size.open_key(key)
                found = found[:size.fit(found)]
                if not found:
                    break  # MAXSIZE passed: this key and those after it are left out
            results.append((key, found))
            budget -= len(found)
    if results:
        return streams_reply(ctx, results)
    if timeout < 0:
        return NULL_ARRAY

    # Block.  A key named twice waits for the first ID given for it.
    waits: dict[bytes, StreamID] = {}
    for key, gt in zip(keys, after):
        waits.setdefault(key, gt)
    served_count = capped_count(count or XREAD_BLOCKED_DEFAULT_COUNT, maxcount, maxcount)

    def retry(woken: Ctx) -> Any:
        ready = [woken.ready_key] if woken.ready_key is not None else list(waits)
        for key in ready:
            gt = waits.get(key)
            stream = woken.db.get(key)
            # Served as soon as the stream's last ID moved past ours, even if
            # the entries after it are gone again (an empty list, as Redis).
            if gt is not None and type(stream) is Stream and stream.last_id > gt:
                found = entries_reply(stream, gt.incr(), MAX_ID, served_count)
                if opts.maxsize:
                    found = found[:SizeBudget(opts.maxsize).fit(found)]
                return streams_reply(woken, [(key, found)])
        return None

    return Wait(list(waits), timeout, retry, NULL_ARRAY)
