"""The replication stream in forms a Redis 7.0 replica applies.

The engine's effects are Redis 8.x commands (what the AOF keeps).  A Redis
7.0 replica skips a command it does not know, and with the default
``propagation-error-behavior ignore`` its data silently drifts, so the
primary rewrites the 8.x-only forms into 7.0 commands that leave the same
state, on every replica (Tidelog's apply the rewritten forms to the same
result):

==============================================  ==========================================
effect (Redis 8.2+)                             sent to replicas
==============================================  ==========================================
``XACKDEL key group [policy] IDS n id...``      ``XACK key group id...``, for DELREF also
                                                ``XACK key <other group> id...`` per group,
                                                then ``XDEL key <ids now gone>``
``XDELEX key [policy] IDS n id...``             (DELREF) ``XACK key <group> id...`` per
                                                group, then ``XDEL key <ids now gone>``
``XADD key ... KEEPREF ...`` / ``XTRIM ... KEEPREF``   the same without the (default) word
``XADD key ... IDMP pid iid id ...``            ``XADD key ... id ...`` then
                                                ``XIDMPRECORD key pid iid id``
``XADD key ... IDMPAUTO pid id ...``            ``XADD key ... id ...`` then
                                                ``XIDMPRECORD key pid <digest> id``
==============================================  ==========================================

Each rewrite reads the state *after* the command ran (the stream is fed as
each command or transaction completes): ``<ids now gone>`` are the IDs
asked for that the stream no longer holds (an XDEL of an ID that never
existed changes nothing, so the rewrite is exact whatever the policy).

What 7.0 cannot express is sent as it is and logged once per server:
XNACK (Redis 8.8), trimming with DELREF or ACKED, XCFGSET, the IDMP
state (XIDMPRECORD is Tidelog's; a Redis replica skips it), and BITOP's
Redis 8.2 operations (DIFF, DIFF1, ANDOR, ONE: no 7.0 command gives their
result whatever follows in a transaction).
docs/compatibility.md lists them.
"""

from __future__ import annotations

import logging
from typing import Any

from ..commands.stream.stream_args import REF_POLICIES
from ..ids import InvalidStreamID, parse_id
from ..types.idmp import auto_iid
from ..types.stream import Stream

log = logging.getLogger("tidelog")

KEEPREF, DELREF = b"KEEPREF", b"DELREF"
_NO_7_0_FORM = {b"XNACK", b"XCFGSET", b"XIDMPRECORD"}
_BITOP_8_2 = {b"DIFF", b"DIFF1", b"ANDOR", b"ONE"}  # BITOP's Redis 8.2 operations
_warned: set[bytes] = set()


def _warn_once(what: bytes) -> None:
    if what not in _warned:
        _warned.add(what)
        log.warning("Replication: %s has no Redis 7.0 form; a Redis 7.0 replica skips it "
                    "(Tidelog and Redis 8 replicas apply it)", what.decode("latin-1"))


def redis7_forms(db: Any, argv: list[bytes]) -> list[list[bytes]]:
    """``argv`` (an effect applied to ``db``, a keyspace Database) as the
    commands to send; ``[argv]`` when it needs no rewrite.  Cost: O(1) for
    other commands; O(ids + groups) for the stream ones rewritten."""
    name = argv[0].upper()
    if not name.startswith(b"X"):
        if name == b"BITOP" and argv[1].upper() in _BITOP_8_2:
            _warn_once(b"BITOP " + argv[1].upper())
        return [argv]
    if name == b"XACKDEL":
        policy, ids = _policy_and_ids(argv, 3)
        key, group = argv[1], argv[2]
        return [[b"XACK", key, group, *ids],
                *_deletions(db, key, policy, ids, skip_group=group)]
    if name == b"XDELEX":
        policy, ids = _policy_and_ids(argv, 2)
        return _deletions(db, argv[1], policy, ids, skip_group=None)
    if name == b"XADD":
        return _xadd(argv)
    if name == b"XTRIM":
        return [_without_keepref(argv, 2, b"XTRIM")]
    if name in _NO_7_0_FORM:
        _warn_once(name)
    return [argv]


def _policy_and_ids(argv: list[bytes], at: int) -> tuple[bytes, list[bytes]]:
    """``[KEEPREF | DELREF | ACKED] IDS n id...`` from ``argv[at]`` (an
    effect: already checked by the command that produced it)."""
    policy = KEEPREF
    if argv[at].upper() in REF_POLICIES:
        policy = argv[at].upper()
        at += 1
    count = int(argv[at + 1])
    return policy, argv[at + 2:at + 2 + count]


def _deletions(db: Any, key: bytes, policy: bytes, ids: list[bytes],
               skip_group: bytes | None) -> list[list[bytes]]:
    stream = db.data.get(key)
    out: list[list[bytes]] = []
    if isinstance(stream, Stream):
        if policy == DELREF:
            out += [[b"XACK", key, name, *ids] for name in stream.groups if name != skip_group]
        gone = [raw for raw in ids if not _holds(stream, raw)]
    else:
        gone = list(ids)
    if gone:
        out.append([b"XDEL", key, *gone])
    return out


def _holds(stream: Stream, raw: bytes) -> bool:
    try:
        return stream.get(parse_id(raw)) is not None
    except InvalidStreamID:
        return False


def _xadd(argv: list[bytes]) -> list[list[bytes]]:
    """XADD without IDMP/IDMPAUTO (their state then goes as XIDMPRECORD) and
    without the default KEEPREF."""
    out = [argv[0], argv[1]]
    pid = iid = None
    auto = False
    i = 2
    n = len(argv)
    while i < n:
        word = argv[i].upper()
        if word == b"IDMP" and i + 2 < n:
            pid, iid = argv[i + 1], argv[i + 2]
            i += 3
        elif word == b"IDMPAUTO" and i + 1 < n:
            pid, auto = argv[i + 1], True
            i += 2
        elif word == KEEPREF:
            i += 1
        elif word in REF_POLICIES:  # DELREF / ACKED trimming: no 7.0 form
            _warn_once(b"XADD " + word)
            out.append(argv[i])
            i += 1
        elif word in (b"NOMKSTREAM",):
            out.append(argv[i])
            i += 1
        elif word in (b"MAXLEN", b"MINID"):
            j = i + 1
            if argv[j] in (b"=", b"~"):
                j += 1
            j += 1  # the threshold
            if j + 1 < n and argv[j].upper() == b"LIMIT":
                j += 2
            out += argv[i:j]
            i = j
        else:
            break  # the ID: the entry follows
    if pid is None and len(out) == i:
        return [argv]  # nothing dropped
    entry = argv[i:]
    out += entry
    if pid is None:
        return [out]
    if auto:
        iid = auto_iid(entry[1:])
    assert iid is not None
    _warn_once(b"XIDMPRECORD")  # the IDMP state
    return [out, [b"XIDMPRECORD", argv[1], pid, iid, entry[0]]]


def _without_keepref(argv: list[bytes], start: int, name: bytes) -> list[bytes]:
    kept = [a for a in argv[start:] if a.upper() != KEEPREF]
    for word in (DELREF, b"ACKED"):
        if any(a.upper() == word for a in argv[start:]):
            _warn_once(name + b" " + word)
    if len(kept) == len(argv) - start:
        return argv
    return [*argv[:start], *kept]
