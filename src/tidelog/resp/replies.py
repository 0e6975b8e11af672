"""Reply values: what command handlers return, before any bytes exist.

The encoder (:mod:`tidelog.resp.encoder`) turns these into RESP2 or RESP3.
Plain Python values stand for the common cases:

    bytes / str       bulk string          ($3\\r\\nfoo\\r\\n)
    int               integer              (:1\\r\\n)
    bool              RESP3 boolean; RESP2 integer 1 / 0
    float             RESP3 double;  RESP2 bulk string
    list / tuple      array
    None              null bulk: RESP2 ``$-1``, RESP3 ``_``

and the classes below stand for the rest.  Handlers never build bytes of the
protocol themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class SimpleString:
    """``+OK``: a status line; must not contain CR or LF."""

    text: bytes


@dataclass(frozen=True, slots=True)
class ErrorReply:
    """``-ERR ...``: the whole error line (prefix included) without ``-``."""

    message: bytes


class _NullArray:
    """A null array: RESP2 ``*-1``, RESP3 ``_`` (e.g. XREAD BLOCK timing out)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NULL_ARRAY"


NULL_ARRAY = _NullArray()


@dataclass(frozen=True, slots=True)
class Map:
    """RESP3 map ``%``; RESP2 a flat array ``k1 v1 k2 v2``.

    ``items`` is a sequence of (key, value) pairs, kept in order.
    """

    items: list[tuple[Any, Any]]


@dataclass(frozen=True, slots=True)
class SetReply:
    """RESP3 set ``~``; RESP2 an array."""

    items: list[Any]


@dataclass(frozen=True, slots=True)
class Verbatim:
    """RESP3 verbatim string ``=`` with a 3-letter format; RESP2 bulk string."""

    text: bytes
    fmt: bytes = b"txt"


@dataclass(frozen=True, slots=True)
class DoubleText:
    """RESP3 double ``,<text>`` with the digits given; RESP2 a bulk string of
    the same text.  For a number Redis prints itself (the ``long double``
    INCREX computes in, written as INCRBYFLOAT writes it), which no binary
    double's shortest form would reproduce."""

    text: bytes


@dataclass(frozen=True, slots=True)
class Push:
    """RESP3 push ``>``; RESP2 an array."""

    items: list[Any]


@dataclass(frozen=True, slots=True)
class Replies:
    """Several replies written one after another, for one command (SUBSCRIBE
    of several channels answers one confirmation per channel).  Not a
    protocol type: the network layer writes each of ``items`` as a reply of
    its own; nothing nests it inside another reply (EXEC writes it encoded,
    see the engine)."""

    items: list[Any]


class RawReply(bytes):
    """Bytes already encoded, the same in RESP2 and RESP3 (pre-built replies)."""

    __slots__ = ()


OK = SimpleString(b"OK")
QUEUED = SimpleString(b"QUEUED")
PONG = SimpleString(b"PONG")
