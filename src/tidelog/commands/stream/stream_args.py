"""Argument pieces the stream and consumer-group commands share.

One place for each: concrete IDs, range bounds (``-``, ``+``, ``(`` for
exclusive), the ``IDS numids id ...`` block with a reference policy (XDELEX,
XACKDEL; XNACK's IDS block), and the arguments of XREAD and XREADGROUP
(read with :class:`~tidelog.commands.args.ArgReader`, but for XREADGROUP's
commonest form).
Every parser raises Redis's error text (:mod:`tidelog.errors`) and checks
everything before the command changes anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ... import errors
from ...errors import CommandError
from ...ids import UINT64_MAX, InvalidStreamID, StreamID, parse_id
from ..args import ArgReader, parse_int

# Redis 8.2: what deleting or trimming entries does to consumer groups.
KEEPREF = b"KEEPREF"  # the default: PEL references stay (XDEL's behaviour)
DELREF = b"DELREF"    # references go from every group's PEL too
ACKED = b"ACKED"      # only entries no group still needs go
REF_POLICIES = (KEEPREF, DELREF, ACKED)

# A blocked XREAD / XREADGROUP without COUNT is served at most this many
# entries per key, so a client blocking with a low ID is not sent a huge
# backlog (Redis's XREAD_BLOCKED_DEFAULT_COUNT).
XREAD_BLOCKED_DEFAULT_COUNT = 1000


def _invalid_id() -> CommandError:
    return CommandError(errors.INVALID_STREAM_ID)


def parse_strict_id_arg(arg: bytes, missing_seq: int = 0) -> StreamID:
    """A concrete ID: ``<ms>`` or ``<ms>-<seq>``; not ``-``, ``+`` or ``<ms>-*``."""
    if arg == b"-" or arg == b"+":
        raise _invalid_id()
    try:
        return parse_id(arg, missing_seq)
    except InvalidStreamID:
        raise _invalid_id() from None


def parse_id_arg(arg: bytes) -> StreamID:
    """An ID where ``-`` and ``+`` are allowed (XGROUP SETID)."""
    try:
        return parse_id(arg)
    except InvalidStreamID:
        raise _invalid_id() from None


def parse_interval_arg(arg: bytes, missing_seq: int) -> tuple[StreamID, bool]:
    """A range bound: ``-``, ``+``, an ID, or ``(<id>`` (exclusive, strict)."""
    if len(arg) > 1 and arg[:1] == b"(":
        return parse_strict_id_arg(arg[1:], missing_seq), True
    try:
        return parse_id(arg, missing_seq), False
    except InvalidStreamID:
        raise _invalid_id() from None


def range_start(arg: bytes) -> StreamID:
    """The low bound of a range (XRANGE, XPENDING, XAUTOCLAIM); ``(id`` is exclusive."""
    start, exclusive = parse_interval_arg(arg, 0)
    if exclusive:
        try:
            start = start.incr()
        except OverflowError:
            raise CommandError(errors.INVALID_START_INTERVAL) from None
    return start


def range_end(arg: bytes) -> StreamID:
    """The high bound of a range (XRANGE, XPENDING); ``(id`` is exclusive."""
    end, exclusive = parse_interval_arg(arg, UINT64_MAX)
    if exclusive:
        try:
            end = end.decr()
        except OverflowError:
            raise CommandError(errors.INVALID_END_INTERVAL) from None
    return end


def read_ids_block(r: ArgReader, not_positive: bytes, mismatch: bytes) -> list[bytes]:
    """``numids id [id ...]`` after an ``IDS`` word: the ID arguments, unparsed.

    ``numids`` must be a positive integer (``not_positive`` otherwise) and at
    most the number of arguments left (``mismatch``: fewer IDs than that);
    more leaves words for the caller to refuse."""
    numids = r.next_int(not_positive)
    if numids < 1:
        raise CommandError(not_positive)
    if numids > r.remaining():
        raise CommandError(mismatch)
    return r.take(numids)


def parse_ref_ids(r: ArgReader) -> tuple[bytes, list[StreamID]]:
    """``[KEEPREF | DELREF | ACKED] IDS numids id [id ...]``: the reader's remaining arguments.

    XDELEX and XACKDEL (Redis 8.2).  The policy and the IDS block may come in
    either order; a second policy, a second IDS block, or any other word is
    a syntax error, and so is a missing IDS block.  Every ID is checked
    before anything is done.
    """
    policy: bytes | None = None
    id_args: list[bytes] | None = None
    while r.more():
        upper = r.next_upper()
        if upper == b"IDS" and id_args is None and r.more():
            id_args = read_ids_block(r, errors.IDS_NOT_POSITIVE, errors.IDS_MISMATCH)
        elif upper in REF_POLICIES and policy is None:
            policy = upper
        else:
            raise CommandError(errors.SYNTAX)
    if id_args is None:
        raise CommandError(errors.SYNTAX)
    return policy or KEEPREF, [parse_strict_id_arg(arg) for arg in id_args]


@dataclass(slots=True)
class ReadArgs:
    """XREAD's and XREADGROUP's arguments: the options, then the keys and their IDs."""

    count: int = 0         # COUNT per key; 0: no limit
    maxcount: int = 0      # MAXCOUNT, entries in total (Redis 8.10); 0: no limit
    maxsize: int = 0       # MAXSIZE, reply bytes, a soft cap (Redis 8.10); 0: no limit
    timeout: int = -1      # BLOCK ms; -1: no BLOCK, 0: forever
    group: bytes = b""     # XREADGROUP: GROUP group consumer
    consumer: bytes = b""
    noack: bool = False    # XREADGROUP: NOACK
    claim: int = -1        # XREADGROUP: CLAIM min-idle-time (Redis 8.4); -1: none
    keys: list[bytes] = field(default_factory=list)  # the keys after STREAMS
    ids: list[bytes] = field(default_factory=list)   # their IDs, unparsed, in key order


def _read_canonical(argv: list[bytes], args: ReadArgs, group: bool) -> bool:
    """``[GROUP group consumer] [COUNT n] [BLOCK ms] [NOACK] STREAMS key ... id ...``
    (GROUP and NOACK for XREADGROUP only), in the order clients send it
    (redis-py, go-redis...), read by hand into ``args``; False, with ``args``
    untouched, for any other form.

    Consumers send this on every read, and the cursor made its parse slower
    by half (XREADGROUP with COUNT and BLOCK: 1.52 us hand-indexed, 2.64 us
    through ArgReader; XREAD: 1.30 us, 2.13 us); the benchmark is
    bench/groups.py's consumer latency run (``XREADGROUP GROUP g c<i> COUNT
    10 BLOCK 1000 STREAMS s >`` in a loop).  The checks run in the cursor
    loop's order, so an error is the one the loop would raise.
    """
    argc = len(argv)
    if group:
        if argc < 7 or argv[1].upper() != b"GROUP":
            return False
        i = 4
    elif argc < 4:
        return False
    else:
        i = 1
    count = 0
    timeout = -1
    noack = False
    word = argv[i].upper()
    if word == b"COUNT" and i + 2 < argc:
        count = max(parse_int(argv[i + 1]), 0)
        i += 2
        word = argv[i].upper()
    if word == b"BLOCK" and i + 2 < argc:
        timeout = parse_int(argv[i + 1], errors.TIMEOUT_NOT_INTEGER)
        if timeout < 0:
            raise CommandError(errors.TIMEOUT_NEGATIVE)
        i += 2
        word = argv[i].upper()
    if group and word == b"NOACK" and i + 1 < argc:
        noack = True
        i += 1
        word = argv[i].upper()
    if word != b"STREAMS" or i + 1 >= argc:
        return False
    nkeys, odd = divmod(argc - i - 1, 2)
    if odd:
        raise CommandError(errors.XREADGROUP_UNBALANCED if group else errors.XREAD_UNBALANCED)
    if group:
        args.group, args.consumer = argv[2], argv[3]
    args.count, args.timeout, args.noack = count, timeout, noack
    args.keys, args.ids = argv[i + 1:i + 1 + nkeys], argv[i + 1 + nkeys:]
    return True


def parse_read_options(argv: list[bytes], group: bool) -> ReadArgs:
    """XREAD's (``group`` False) and XREADGROUP's (True) arguments.

    Options come in any order up to ``STREAMS``; an option name in the last
    position is not an option (a syntax error).  XREAD refuses XREADGROUP's
    options with Redis's texts.  Keys and IDs must balance.
    """
    args = ReadArgs()
    if _read_canonical(argv, args, group):
        return args
    group_given = streams_given = False
    r = ArgReader(argv, 1)
    while r.more():
        opt = r.next_upper()
        if opt == b"BLOCK" and r.more():
            args.timeout = r.next_int(errors.TIMEOUT_NOT_INTEGER)
            if args.timeout < 0:
                raise CommandError(errors.TIMEOUT_NEGATIVE)
        elif opt == b"COUNT" and r.more():
            args.count = max(r.next_int(), 0)
        elif opt == b"MAXCOUNT" and r.more():
            args.maxcount = r.next_int(errors.MAXCOUNT_NOT_POSITIVE)
            if args.maxcount <= 0:
                raise CommandError(errors.MAXCOUNT_NOT_POSITIVE)
        elif opt == b"MAXSIZE" and r.more():
            args.maxsize = r.next_int(errors.MAXSIZE_NOT_POSITIVE)
            if args.maxsize <= 0:
                raise CommandError(errors.MAXSIZE_NOT_POSITIVE)
        elif opt == b"STREAMS" and r.more():
            nkeys, odd = divmod(r.remaining(), 2)
            if odd:
                raise CommandError(errors.XREADGROUP_UNBALANCED if group
                                   else errors.XREAD_UNBALANCED)
            args.keys = r.take(nkeys)
            args.ids = r.take(nkeys)
            streams_given = True
            break
        elif opt == b"CLAIM" and r.more():
            if not group:
                raise CommandError(errors.XREAD_CLAIM_OPTION)
            args.claim = r.next_int(errors.CLAIM_NOT_INTEGER)
            if args.claim < 0:
                raise CommandError(errors.CLAIM_NEGATIVE)
        elif opt == b"GROUP" and r.remaining() >= 2:
            if not group:
                raise CommandError(errors.XREAD_GROUP_OPTION)
            args.group, args.consumer = r.take(2)
            group_given = True
        elif opt == b"NOACK":
            if not group:
                raise CommandError(errors.XREAD_NOACK_OPTION)
            args.noack = True
        else:
            raise CommandError(errors.SYNTAX)
    if not streams_given:
        raise CommandError(errors.SYNTAX)
    if group and not group_given:
        raise CommandError(errors.XREADGROUP_MISSING_GROUP)
    if args.maxcount and args.count > args.maxcount:
        raise CommandError(errors.MAXCOUNT_BELOW_COUNT)
    r.finish()
    return args
