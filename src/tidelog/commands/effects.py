"""Effects: what a write command hands to the AOF and to the replicas.

An effect is either a plain argv list (``[b"SET", key, value]``: most
commands) or a record, for the stream writes whose Redis 7.0 replication
forms may differ from what the AOF keeps: :class:`XAdd` (the producers'
XADD, a record that is also its argv list), :class:`XAddWithOptions`,
:class:`XTrim`, :class:`XAckDel`, :class:`XDelEx`.  A record holds what the
command did as fields (key, ID, fields, trimming, reference policy, IDMP)
beside the request it came from, so that

* its Redis 8 form (:meth:`EffectRecord.argv`: what the AOF keeps and
  Tidelog and Redis 8 replicas get) is the request with the ID it got and
  the exact trimming threshold put in place, byte for byte what the command
  propagated when effects were argv lists;
* its Redis 7.0 forms are built from the fields by
  :mod:`tidelog.replication.compat7`, without reading the request again.

Every consumer takes effects as ``(db index, effect)`` batches, one per
command or transaction (:meth:`~tidelog.engine.Engine.emit`).  The RESP
bytes of a batch are made once, whatever the number of listeners
(:func:`encoded`); a command or transaction with several effects goes out
wrapped in MULTI/EXEC (:func:`as_unit`).

This module sits below every command module, the contract included: it
imports no other part of ``commands``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..ids import StreamID

KEEPREF, DELREF, ACKED = b"KEEPREF", b"DELREF", b"ACKED"


class EffectRecord:
    """A typed effect: it knows its Redis 8 argv form."""

    __slots__ = ()

    def argv(self) -> list[bytes]:
        """The Redis 8 form: what the AOF keeps.  Cost: O(len(argv))."""
        raise NotImplementedError


Effect = list[bytes] | EffectRecord


class XAdd(list[bytes], EffectRecord):
    """``XADD key * field value ...`` as it added an entry: the producers' form.

    The record is its own Redis 8 form, the request with the ID it got in
    place (``XAdd(argv)`` then ``record[2] = id``), so consumers encode it as
    the argv it is, without a copy.  Measured under callgrind for a
    7-argument XADD: 1,662 instructions to build against 1,057 for
    ``list(argv)`` and the item assignment; a slotted record holding the
    request and the ID cost 1,142 to build but made every consumer copy the
    request to read its argv form (about 2,700 instructions more per
    pipelined XADD with the AOF on, against about 1,000 more this way).
    The options are class-level defaults (none), named as
    :class:`XAddWithOptions` names them.  Cost: O(len(argv)) to build, O(1)
    for :meth:`argv`.
    """

    __slots__ = ()

    id_pos: int = 2               # the index of the ID; the fields follow it
    nomkstream: bool = False
    policy: bytes = b""
    strategy: bytes = b""
    threshold: bytes = b""
    threshold_pos: int = 0
    limit: bytes | None = None
    idmp_pid: bytes | None = None
    idmp_iid: bytes | None = None

    @property
    def key(self) -> bytes:
        return self[1]

    @property
    def id(self) -> bytes:
        return self[2]

    @property
    def fields(self) -> list[bytes]:
        """The fields and values, in order.  Cost: O(F)."""
        return self[3:]

    def argv(self) -> list[bytes]:
        return self


class XAddWithOptions(EffectRecord):
    """XADD with options (NOMKSTREAM, a policy, trimming, IDMP) or an explicit ID.

    ``src`` is the request, ``id`` the ID the entry got, as propagated (an
    explicit ID as given).  Cost: O(1) to build, O(len(src)) for :meth:`argv`.
    """

    __slots__ = ("src", "id", "id_pos", "nomkstream", "policy", "strategy", "threshold",
                 "threshold_pos", "limit", "idmp_pid", "idmp_iid")

    def __init__(self, src: list[bytes], id: bytes, id_pos: int, nomkstream: bool,
                 policy: bytes, strategy: bytes, threshold: bytes, threshold_pos: int,
                 limit: bytes | None, idmp_pid: bytes | None,
                 idmp_iid: bytes | None) -> None:
        self.src = src
        self.id = id
        self.id_pos = id_pos                # the index of the ID in src; the fields follow it
        self.nomkstream = nomkstream
        self.policy = policy                # KEEPREF | DELREF | ACKED as given; b"": none given
        self.strategy = strategy            # MAXLEN | MINID; b"": no trimming
        self.threshold = threshold          # the exact threshold (what an approximate trim left)
        self.threshold_pos = threshold_pos  # index in src of a "~" threshold to make exact; 0: none
        self.limit = limit                  # LIMIT as given
        self.idmp_pid = idmp_pid            # IDMP / IDMPAUTO producer
        self.idmp_iid = idmp_iid            # IDMP's iid, or IDMPAUTO's digest of the entry

    @property
    def key(self) -> bytes:
        return self.src[1]

    @property
    def fields(self) -> list[bytes]:
        """The fields and values, in order.  Cost: O(F)."""
        return self.src[self.id_pos + 1:]

    def argv(self) -> list[bytes]:
        """The request with the ID and the exact threshold in place.  Cost: O(len(src))."""
        out = list(self.src)
        out[self.id_pos] = self.id
        pos = self.threshold_pos
        if pos:
            out[pos - 1] = b"="
            out[pos] = self.threshold
        return out


class XTrim(EffectRecord):
    """XTRIM as it removed entries: the exact threshold, LIMIT and policy as given.

    Cost: O(1) to build, O(len(src)) for :meth:`argv`."""

    __slots__ = ("src", "strategy", "threshold", "threshold_pos", "limit", "policy")

    def __init__(self, src: list[bytes], strategy: bytes, threshold: bytes,
                 threshold_pos: int, limit: bytes | None, policy: bytes) -> None:
        self.src, self.strategy, self.threshold = src, strategy, threshold
        self.threshold_pos, self.limit, self.policy = threshold_pos, limit, policy

    @property
    def key(self) -> bytes:
        return self.src[1]

    def argv(self) -> list[bytes]:
        """The request, with ``~ <threshold>`` made ``= <exact threshold>``."""
        pos = self.threshold_pos
        if not pos:
            return self.src
        out = list(self.src)
        out[pos - 1] = b"="
        out[pos] = self.threshold
        return out


class XAckDel(EffectRecord):
    """XACKDEL as it changed a group or the stream: the policy and the IDs asked for.

    The Redis 8 form is the request itself.  Cost: O(1) to build and for
    :meth:`argv` (the request, not a copy: consumers never change it)."""

    __slots__ = ("src", "group", "policy", "ids")

    def __init__(self, src: list[bytes], group: bytes, policy: bytes,
                 ids: list[StreamID]) -> None:
        self.src, self.group, self.policy, self.ids = src, group, policy, ids

    @property
    def key(self) -> bytes:
        return self.src[1]

    def argv(self) -> list[bytes]:
        return self.src


class XDelEx(EffectRecord):
    """XDELEX as it changed the stream or a PEL: the policy and the IDs asked for.

    The Redis 8 form is the request itself.  Cost: O(1) to build and for
    :meth:`argv`."""

    __slots__ = ("src", "policy", "ids")

    def __init__(self, src: list[bytes], policy: bytes, ids: list[StreamID]) -> None:
        self.src, self.policy, self.ids = src, policy, ids

    @property
    def key(self) -> bytes:
        return self.src[1]

    def argv(self) -> list[bytes]:
        return self.src


def argv_of(effect: Effect) -> list[bytes]:
    """The Redis 8 argv form of any effect.  Cost: O(1) for a list, else the record's."""
    return effect if isinstance(effect, list) else effect.argv()


def encode_argv(argv: list[bytes]) -> bytes:
    """One command as a RESP array of bulk strings (the AOF's and the
    replication stream's format).  Cost: O(total length)."""
    parts = [b"*%d\r\n" % len(argv)]
    for arg in argv:
        parts.append(b"$%d\r\n" % len(arg))
        parts.append(arg)
        parts.append(b"\r\n")
    return b"".join(parts)


class _Shared:
    """The encodings of the last batch, kept for the listeners still to read it."""

    __slots__ = ("batch", "parts", "readers")

    def __init__(self) -> None:
        self.batch: object = None
        self.parts: list[bytes] = []
        self.readers = 0


_shared = _Shared()


def encoded(batch: list[tuple[int, Effect]], listeners: int) -> list[bytes]:
    """The RESP bytes of each effect of ``batch`` (Redis 8 forms), made once.

    ``listeners`` is how many listeners will ask for this batch (the
    engine's ``effect_listeners``): with more than one, the first call
    encodes and keeps the result, the others take it, and the last lets it
    go, so nothing large stays alive between commands.  Cost: O(total
    length) for the first call, O(1) for the others.
    """
    shared = _shared
    if batch is shared.batch:
        parts = shared.parts
        shared.readers -= 1
        if shared.readers <= 0:
            shared.batch, shared.parts = None, []
        return parts
    if len(batch) == 1:  # one command's one effect: the common case
        effect = batch[0][1]
        parts = [encode_argv(effect if isinstance(effect, list) else effect.argv())]
    else:
        parts = [encode_argv(effect if isinstance(effect, list) else effect.argv())
                 for _, effect in batch]
    if listeners > 1:
        shared.batch, shared.parts, shared.readers = batch, parts, listeners - 1
    return parts


def as_unit(batch: list[tuple[int, Effect]]) -> list[tuple[int, Effect]]:
    """``batch`` as one unit: wrapped in MULTI ... EXEC when it holds more
    than one effect (a transaction, a script, XREADGROUP's XCLAIMs), as
    Redis propagates them.  Cost: O(len(batch))."""
    if len(batch) <= 1:
        return batch
    return [(batch[0][0], [b"MULTI"]), *batch, (batch[-1][0], [b"EXEC"])]
