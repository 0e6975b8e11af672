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

The stream writes come as typed effects
(:mod:`tidelog.commands.effects`): each rewrite is built from the record's
fields, dispatched on its type (:func:`rewrite7`), and no argv is read
again.  Each rewrite reads the state *after* the command ran (the stream is fed as
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
from collections.abc import Callable
from typing import Any

from ..commands.effects import (
    ACKED,
    DELREF,
    KEEPREF,
    Effect,
    EffectRecord,
    XAckDel,
    XAddWithOptions,
    XDelEx,
    XTrim,
)
from ..ids import StreamID
from ..types.stream import Stream

log = logging.getLogger("tidelog")

_NO_7_0_FORM = {b"XNACK", b"XCFGSET", b"XIDMPRECORD"}
_BITOP_8_2 = {b"DIFF", b"DIFF1", b"ANDOR", b"ONE"}  # BITOP's Redis 8.2 operations
_warned: set[bytes] = set()


def _warn_once(what: bytes) -> None:
    if what not in _warned:
        _warned.add(what)
        log.warning("Replication: %s has no Redis 7.0 form; a Redis 7.0 replica skips it "
                    "(Tidelog and Redis 8 replicas apply it)", what.decode("latin-1"))


def rewrite7(db: Any, effect: Effect) -> list[list[bytes]] | None:
    """The commands to send for ``effect`` (applied to ``db``, a keyspace
    Database), or None when its Redis 8 form is sent as it is (its
    encoding is then the AOF's, made once).  Cost: O(1) for a plain argv
    (its name is looked at, for the warnings) and for XADD without
    options; O(ids + groups) for XACKDEL and XDELEX; O(len(argv)) for an
    XADD or XTRIM whose form changes."""
    if isinstance(effect, list):  # XAdd too: the producers' form is the same in 7.0
        name = effect[0].upper()
        if name in _NO_7_0_FORM:
            _warn_once(name)
        elif name == b"BITOP" and effect[1].upper() in _BITOP_8_2:
            _warn_once(b"BITOP " + effect[1].upper())
        return None
    return _REWRITES[effect.__class__](db, effect)


def redis7_forms(db: Any, effect: Effect) -> list[list[bytes]]:
    """``effect`` as the commands a Redis 7.0 replica applies (see
    :func:`rewrite7`); ``[argv]`` when it needs no rewrite."""
    forms = rewrite7(db, effect)
    if forms is None:
        return [effect if isinstance(effect, list) else effect.argv()]
    return forms


def _xadd(db: Any, effect: EffectRecord) -> list[list[bytes]] | None:
    """XADD without IDMP/IDMPAUTO (their state then goes as XIDMPRECORD) and
    without the default KEEPREF; DELREF and ACKED trimming have no 7.0 form."""
    assert isinstance(effect, XAddWithOptions)
    policy = effect.policy
    if policy in (DELREF, ACKED):
        _warn_once(b"XADD " + policy)
    if effect.idmp_pid is None and policy != KEEPREF:
        return None  # nothing to drop
    out = [effect.src[0], effect.key]
    if effect.nomkstream:
        out.append(b"NOMKSTREAM")
    if policy in (DELREF, ACKED):
        out.append(policy)
    if effect.strategy:
        out += [effect.strategy, b"=", effect.threshold]
        if effect.limit is not None:
            out += [b"LIMIT", effect.limit]
    out.append(effect.id)
    out += effect.fields
    if effect.idmp_pid is None:
        return [out]
    assert effect.idmp_iid is not None
    _warn_once(b"XIDMPRECORD")  # the IDMP state
    return [out, [b"XIDMPRECORD", effect.key, effect.idmp_pid, effect.idmp_iid, effect.id]]


def _xtrim(db: Any, effect: EffectRecord) -> list[list[bytes]] | None:
    """XTRIM without the default KEEPREF; DELREF and ACKED have no 7.0 form."""
    assert isinstance(effect, XTrim)
    policy = effect.policy
    if policy in (DELREF, ACKED):
        _warn_once(b"XTRIM " + policy)
    if policy != KEEPREF:
        return None
    out = [effect.src[0], effect.key, effect.strategy, b"=", effect.threshold]
    if effect.limit is not None:
        out += [b"LIMIT", effect.limit]
    return [out]


def _xackdel(db: Any, effect: EffectRecord) -> list[list[bytes]]:
    """XACK in the group, then what XDELEX's rewrite sends."""
    assert isinstance(effect, XAckDel)
    ids = [bytes(id) for id in effect.ids]
    return [[b"XACK", effect.key, effect.group, *ids],
            *_deletions(db, effect.key, effect.policy, effect.ids, ids, skip_group=effect.group)]


def _xdelex(db: Any, effect: EffectRecord) -> list[list[bytes]]:
    """(DELREF) XACK in every group, then XDEL of the IDs now gone."""
    assert isinstance(effect, XDelEx)
    return _deletions(db, effect.key, effect.policy, effect.ids,
                      [bytes(id) for id in effect.ids], skip_group=None)


def _deletions(db: Any, key: bytes, policy: bytes, ids: list[StreamID], raw: list[bytes],
               skip_group: bytes | None) -> list[list[bytes]]:
    stream = db.data.get(key)
    out: list[list[bytes]] = []
    if isinstance(stream, Stream):
        if policy == DELREF:
            out += [[b"XACK", key, name, *raw] for name in stream.groups if name != skip_group]
        gone = [text for id, text in zip(ids, raw) if stream.get(id) is None]
    else:
        gone = list(raw)
    if gone:
        out.append([b"XDEL", key, *gone])
    return out


# The record types whose Redis 7.0 forms differ, and their rewrites.
_REWRITES: dict[type, Callable[[Any, EffectRecord], list[list[bytes]] | None]] = {
    XAddWithOptions: _xadd,
    XTrim: _xtrim,
    XAckDel: _xackdel,
    XDelEx: _xdelex,
}
