"""Idempotent production (Redis 8.6/8.8): XCFGSET, XIDMPRECORD, and the IDMP
parts of XADD and XINFO STREAM.

``XADD key ... IDMP pid iid * ...`` (or ``IDMPAUTO pid``, the iid then being
a digest of the entry, :func:`~tidelog.types.idmp.auto_iid`) adds the entry
and remembers ``(pid, iid) -> ID`` in the stream's
:class:`~tidelog.types.idmp.IdmpState`; while that pair is remembered, the
same XADD adds nothing and answers the original ID, even if that entry has
been deleted since (redis.io's XADD page, redis/docs#2923).  XADD's parsing
lives in ``streams.py``; it calls :func:`xadd_retry` before adding and
:func:`xadd_record` after.

Effects (REFERENCE-streams §4.1):

* a new entry goes out as the XADD itself with ``*`` replaced by the ID it
  got, the IDMP or IDMPAUTO option kept.  Replayed by our primary or the AOF
  (``ctx.client.kind`` "master" or "aof"), XADD accepts IDMP with an explicit
  ID - as Redis does for those clients - and always adds the entry and
  records the pair, replacing any pair it still holds (a replica sweeps on
  its own clock, so it may still hold a pair its primary let expire).  One
  effect, so the pair is recorded before the XADD's own trimming runs, and
  IDMPAUTO is recomputed by whoever replays it, with the same digest;
* a retry propagates nothing: the stream did not change.  It counts in
  ``iids-duplicates`` and, as Redis does since redis/redis#14858, marks the
  key modified (WATCH fails, ``dirty`` grows).  A replica's or a reloaded
  AOF's ``iids-duplicates`` therefore does not follow the primary's;
* XCFGSET goes out verbatim when it changed the stream's settings (or gave
  the stream its IDMP state); XIDMPRECORD when it recorded a pair.

Expiry happens in two places: every command that reads a producer's pairs
drops that producer's expired ones first, and XINFO STREAM drops all of the
stream's, so replies never depend on the sweep; the engine's cron sweeps
every state that holds pairs, with a work budget per call
(:meth:`~tidelog.engine.Engine.expire_idmp`), so idle producers' pairs go
too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ... import errors
from ...errors import CommandError
from ...ids import InvalidStreamID, StreamID, parse_id
from ...resp.replies import OK
from ...types.idmp import (
    DURATION_MAX,
    DURATION_MIN,
    MAXSIZE_MAX,
    MAXSIZE_MIN,
    IdmpState,
    auto_iid,
)
from ...types.stream import Stream
from ..args import ArgReader
from ..table import command

if TYPE_CHECKING:
    from ..contract import Ctx

IDMP_DURATION = b"IDMP-DURATION"
IDMP_MAXSIZE = b"IDMP-MAXSIZE"


def _replayed(ctx: Ctx) -> bool:
    """Commands from our primary or the AOF are applied, never refused."""
    return ctx.client.kind in ("master", "aof")


def state_of(ctx: Ctx, stream: Stream) -> IdmpState:
    """The stream's IDMP state, made now with the server's defaults if it has none.

    A stream takes ``stream-idmp-duration`` and ``stream-idmp-maxsize`` when
    it first uses IDMP (Redis takes them when the stream is created).
    """
    state = stream.idmp
    if state is None:
        config = ctx.config
        state = stream.idmp = IdmpState(config["stream-idmp-duration"],
                                         config["stream-idmp-maxsize"])
    return state


def _record(ctx: Ctx, stream: Stream, pid: bytes, iid: bytes, id: StreamID) -> None:
    state = state_of(ctx, stream)
    state.record(pid, iid, id, ctx.now_ms())
    ctx.engine.track_idmp(state)


# -- XADD ... IDMP pid iid | IDMPAUTO pid ---------------------------------------------

def xadd_iid(pid: bytes | None, iid: bytes | None, fields_values: list[bytes]) -> bytes | None:
    """The iid of an XADD: IDMP's as given, IDMPAUTO's computed; None without IDMP."""
    if pid is None:
        return None
    return iid if iid is not None else auto_iid(fields_values)


def xadd_retry(ctx: Ctx, key: bytes, stream: Stream, pid: bytes, iid: bytes) -> StreamID | None:
    """The ID ``(pid, iid)`` added before, when this XADD is a retry; else None.

    A retry is counted in ``iids-duplicates``, marks the key modified and
    propagates nothing.  Replays (primary, AOF) are never retries.
    Cost: O(1) amortised.
    """
    state = stream.idmp
    if state is None or _replayed(ctx):
        return None
    original = state.seen(pid, iid, ctx.now_ms())
    if original is not None:
        ctx.modified(key)
        ctx.no_propagation()
    return original


def xadd_record(ctx: Ctx, stream: Stream, pid: bytes, iid: bytes, id: StreamID) -> None:
    """Remember that ``(pid, iid)`` added entry ``id``.  Cost: O(1) amortised."""
    _record(ctx, stream, pid, iid, id)


# -- XINFO STREAM --------------------------------------------------------------------

def info_fields(ctx: Ctx, stream: Stream) -> list[tuple[bytes, Any]]:
    """XINFO STREAM's IDMP fields (Redis 8.6), which follow ``recorded-first-entry-id``.

    Expired pairs are dropped first, so the counts are exact.  A stream that
    never used IDMP shows the server's current defaults and zeros, as Redis
    8.6 shows its defaults.  Cost: O(P) for P producers, plus the pairs dropped.
    """
    state = stream.idmp
    if state is None:
        config = ctx.config
        duration, maxsize = config["stream-idmp-duration"], config["stream-idmp-maxsize"]
        pids = iids = added = duplicates = 0
    else:
        state.expire(ctx.now_ms())
        duration, maxsize = state.duration, state.maxsize
        pids, iids = state.pids_tracked, state.iids_tracked
        added, duplicates = state.iids_added, state.iids_duplicates
    return [
        (b"idmp-duration", duration),
        (b"idmp-maxsize", maxsize),
        (b"pids-tracked", pids),
        (b"iids-tracked", iids),
        (b"iids-added", added),
        (b"iids-duplicates", duplicates),
    ]


# -- commands --------------------------------------------------------------------------

@command("xcfgset", arity=-2, flags="write fast", keys=(1, 1, 1), group="stream",
         since="8.6.0",
         complexity="O(1); O(N) when a changed setting clears the N idempotent IDs held.",
         summary="Sets a stream's IDMP settings: how long, and how many idempotent IDs "
                 "per producer, it remembers.")
def xcfgset(ctx: Ctx, argv: list[bytes]) -> Any:
    """XCFGSET key [IDMP-DURATION duration] [IDMP-MAXSIZE maxsize]"""
    duration = maxsize = None
    r = ArgReader(argv, 2)
    while r.more():
        opt = r.next_upper()
        if not r.more() or opt not in (IDMP_DURATION, IDMP_MAXSIZE):
            raise CommandError(errors.SYNTAX)
        value = r.next_int()
        if opt == IDMP_DURATION:
            if not DURATION_MIN <= value <= DURATION_MAX:
                raise CommandError(errors.XCFGSET_DURATION_RANGE)
            duration = value
        else:
            if not MAXSIZE_MIN <= value <= MAXSIZE_MAX:
                raise CommandError(errors.XCFGSET_MAXSIZE_RANGE)
            maxsize = value
    r.finish()
    if duration is None and maxsize is None:
        raise CommandError(errors.XCFGSET_NO_PARAMETER)

    key = argv[1]
    stream = ctx.db.get_stream(key)
    if stream is None:
        raise CommandError(errors.NO_SUCH_KEY)
    created = stream.idmp is None
    # A changed setting clears every producer's pairs; the same values keep them.
    if state_of(ctx, stream).configure(duration, maxsize) or created:
        ctx.modified(key)
        ctx.propagate_argv()
    return OK


@command("xidmprecord", arity=5, flags="write denyoom fast", keys=(1, 1, 1), group="stream",
         since="8.8.0", complexity="O(1)",
         summary="Records that a producer ID and idempotent ID pair added a stream entry "
                 "(internal: replays IDMP state).")
def xidmprecord(ctx: Ctx, argv: list[bytes]) -> Any:
    """XIDMPRECORD key pid iid stream-id"""
    key, pid, iid = argv[1], argv[2], argv[3]
    if not pid:
        raise CommandError(errors.XIDMPRECORD_EMPTY_PID)
    if not iid:
        raise CommandError(errors.XIDMPRECORD_EMPTY_IID)
    if argv[4] in (b"-", b"+"):
        raise CommandError(errors.INVALID_STREAM_ID)
    try:
        id = parse_id(argv[4])
    except InvalidStreamID:
        raise CommandError(errors.INVALID_STREAM_ID) from None
    stream = ctx.db.get_stream(key)
    if stream is None:
        raise CommandError(errors.NO_SUCH_KEY)
    replayed = _replayed(ctx)
    # From the primary or the AOF, a pair whose entry is gone is still
    # recorded: XADD remembers pairs of entries deleted since.
    if not replayed and next(stream.range(id, id), None) is None:
        raise CommandError(errors.XIDMPRECORD_NO_ENTRY)
    held = stream.idmp.lookup(pid, iid, ctx.now_ms()) if stream.idmp is not None else None
    if held == id:
        return OK  # already recorded: nothing to do
    if held is not None and not replayed:
        raise CommandError(errors.XIDMPRECORD_CONFLICT)
    _record(ctx, stream, pid, iid, id)
    ctx.modified(key)
    ctx.propagate_argv()
    return OK
