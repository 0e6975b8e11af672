"""Stream commands: XADD, XLEN, XRANGE and XREVRANGE.  XDEL, XDELEX, XTRIM and
XSETID are in ``edits.py``, XREAD in ``xread.py``, the consumer groups in
the modules beside them.

Each handler parses its arguments (XADD's into :class:`XAddArgs`, see
``trimming.py``), then calls the :class:`~tidelog.types.stream.Stream` API
and returns a reply value.  Argument errors come before key lookups (so a
bad option on a string key is a syntax error, not WRONGTYPE); the tests pin
each order against redis-server.  XRANGE's commonest option form (``COUNT
n``) is read by hand for speed.  ``XADD key * field value ...``, the
producers' form, has its own short path (:func:`_xadd_auto`): no options to
read.

Effects (REFERENCE §4.1): what goes to the AOF and to replicas is what the
command did, not what it was asked, as a typed record (``commands/effects.py``,
whose Redis 8 form is this): XADD with ``*`` or ``<ms>-*``
propagates the ID it generated, its trimming as ``trimming.py`` says; XADD
``IDMP``/``IDMPAUTO`` keeps the option in the effect (with the real ID),
and a retry that added nothing propagates nothing: see ``idmp.py``.  XADD's
reference policy (``KEEPREF | DELREF | ACKED``) keeps its word in the
effect: given the same stream and groups, a replica does the same thing."""

from __future__ import annotations

from typing import Any

from ... import errors
from ...config import NOTIFY_STREAM
from ...errors import CommandError
from ...ids import MAX_ID, MIN_ID, StreamID
from ...resp.replies import NULL_ARRAY
from ...types.stream import Stream
from ..args import ArgReader, parse_int
from ..contract import Ctx
from ..effects import XAdd, XAddWithOptions
from ..key_specs import ND, ks
from ..lookup import lookup_read_typed
from ..table import command, runs
from .entries import entries_reply
from .idmp import xadd_iid, xadd_record, xadd_retry
from .stream_args import range_end, range_start
from .trimming import exact_threshold, next_id, parse_add_or_trim, trim_stream

# -- commands ---------------------------------------------------------------------

@command("xadd", arity=-5, flags="write denyoom fast", keys=(1, 1, 1), group="stream",
         since="5.0.0",
         complexity="O(1) when adding a new entry, O(N) when trimming where N is the "
                    "number of entries evicted.",
         summary="Appends a new entry to a stream, creating the stream if needed.",
         tips=(ND,),
         key_specs=[ks("RW update", 1,
                       notes="UPDATE instead of INSERT because of the optional trimming feature")])
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
    pid = args.idmp_pid
    iid = xadd_iid(pid, args.idmp_iid, fields_values)  # None without a pid
    if iid is not None and pid is not None:
        original = xadd_retry(ctx, key, stream, pid, iid)
        if original is not None:
            return bytes(original)  # a retry: nothing added, nothing propagated
    if stream.last_id == MAX_ID:
        raise CommandError(errors.XADD_ID_EXHAUSTED)
    new_id = next_id(stream, args, ctx.now_ms())
    config = ctx.config
    stream.append(new_id, fields_values, config["stream-node-max-entries"],
                  config["stream-node-max-bytes"])
    if created:
        ctx.db.set(key, stream)
    if iid is not None and pid is not None:
        xadd_record(ctx, stream, pid, iid, new_id)  # before trimming

    trim = args.trim
    trimmed = 0
    if trim.strategy:
        trimmed = trim_stream(stream, trim)
    id_bytes = bytes(new_id)  # formatted once: the reply and the effect
    ctx.modified(key)
    if ctx.propagating:  # the record only for listeners (the AOF, replicas)
        threshold = b""
        if trim.strategy:
            threshold = exact_threshold(stream, trim) if trim.approx else argv[trim.threshold_pos]
        ctx.effect(XAddWithOptions(
            argv, id_bytes if args.id is None or not args.seq_given else argv[args.id_pos],
            args.id_pos, args.nomkstream, trim.policy if trim.policy_given else b"",
            trim.strategy, threshold, trim.threshold_pos if trim.approx else 0,
            argv[trim.limit_pos] if trim.limit_pos else None, pid, iid))
    else:
        ctx.no_propagation()
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
                effect = XAdd(argv)  # the record is its argv form (see XAdd)
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
         summary="Returns the number of entries in a stream.",
         key_specs=[ks("RO", 1)])
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
