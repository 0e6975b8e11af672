"""The reply encoder: reply values in, RESP2 or RESP3 bytes out (sans-IO).

    encode(reply, proto) -> bytes
    encode_into(out: bytearray, reply, proto) -> None   # appends; many replies, one buffer
    encode_all(out: bytearray, replies, proto) -> None  # each reply of a list, appended

``proto`` is the connection's protocol, 2 or 3 (``HELLO``).  What each value
becomes (the types are in :mod:`tidelog.resp.replies`):

    value            RESP3                       RESP2
    bytes, str       $<len> bulk (str as UTF-8)  same
    bool             #t / #f                     :1 / :0
    int              :<n>  (beyond 64 bits: (<n> big number)    :<n>  (beyond: bulk)
    float            ,<shortest>                 bulk "<shortest>"
    DoubleText       ,<text>                     bulk <text>
    list, tuple      *<n> array                  same
    None             _                           $-1
    NULL_ARRAY       _                           *-1
    SimpleString     +<text>                     same
    ErrorReply       -<message>                  same
    Map              %<pairs>                    *<2*pairs>, flat
    SetReply         ~<n>                        *<n>
    Push             ><n>                        *<n>
    Verbatim         =<len>\\r\\n<fmt>:<text>      bulk <text>
    RawReply         written as it is            same

Floats follow Redis 8's ``addReplyDouble`` (:func:`tidelog.resp.doubles.
format_double`): the shortest digits that read back as the same double, laid
out as ``%.17g`` lays them out (so 1.1 is sent as ``1.1`` and 3.0 as ``3``;
Redis 7.0 sent ``1.1000000000000001``, Redis 7.2 switched to the shortest
form), ``inf``/``-inf``/``nan``.  Handlers that need another spelling return
bytes.

Error and status lines cannot carry CR or LF: as Redis does for errors,
each CR or LF is replaced by a space (for status lines too, so a handler
bug cannot break the framing).

Containers nest to any depth: the encoder walks them with an explicit stack,
not recursion.  Small headers and integers are pre-built, and the loop
tests for ``bytes`` first, so the common shapes (a list of bulk strings,
stream entries ``[id, [field, value, ...]]``) take the shortest path.
"""

from __future__ import annotations

from itertools import chain, islice
from typing import Any

try:
    import cython
except ImportError:  # the pure twin, without Cython installed
    from tidelog.kernels import PURE_CYTHON as cython

from .doubles import format_double
from .replies import (
    OK,
    PONG,
    DoubleText,
    ErrorReply,
    Map,
    Push,
    RawReply,
    SetReply,
    SimpleString,
    Verbatim,
    _NullArray,
)

__all__ = ["encode", "encode_all", "encode_into"]

CRLF = b"\r\n"
_SMALL = 1024  # headers pre-built for lengths below this
_INTS = 10000  # integer replies pre-built for 0 .. _INTS-1 (Redis shares the same range)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

_BULK_HEADER = [b"$%d\r\n" % n for n in range(_SMALL)]
_ARRAY_HEADER = [b"*%d\r\n" % n for n in range(_SMALL)]
_INT_REPLY = [b":%d\r\n" % n for n in range(_INTS)]

OK_REPLY = b"+OK\r\n"
QUEUED_REPLY = b"+QUEUED\r\n"
PONG_REPLY = b"+PONG\r\n"
ZERO_REPLY = b":0\r\n"
ONE_REPLY = b":1\r\n"
NULL_BULK_RESP2 = b"$-1\r\n"
NULL_ARRAY_RESP2 = b"*-1\r\n"
NULL_RESP3 = b"_\r\n"
EMPTY_ARRAY = b"*0\r\n"
TRUE_RESP3, FALSE_RESP3 = b"#t\r\n", b"#f\r\n"

# Status lines seen often, by text (bytes hash once; a dataclass hash does not).
_STATUS = {b"OK": OK_REPLY, b"QUEUED": QUEUED_REPLY, b"PONG": PONG_REPLY}

# Aggregate type markers: (RESP2, RESP3).
_SET_MARK = (b"*", b"~")
_PUSH_MARK = (b"*", b">")


def encode(reply: Any, proto: int) -> bytes:
    """``reply`` as RESP ``proto`` (2 or 3) bytes."""
    t = type(reply)
    if t is SimpleString and (proto == 2 or proto == 3):
        cached = _STATUS.get(reply.text)
        if cached is not None:
            return cached
    out = bytearray()
    encode_into(out, reply, proto)
    return bytes(out)


def encode_into(out: bytearray, reply: Any, proto: int) -> None:
    """Append ``reply`` as RESP ``proto`` (2 or 3) to ``out``.

    Raises TypeError for a value that is not a reply (``out`` may then hold
    part of the reply: discard it) and ValueError for an unknown ``proto``.
    """
    if proto != 3 and proto != 2:
        raise ValueError(f"unknown RESP protocol version {proto!r}")
    _encode_one(out, reply, proto)


def encode_all(out: bytearray, replies: list[Any], proto: int) -> None:
    """Append each of ``replies`` in turn, as :func:`encode_into` would: the
    replies of one read from a client, in one call.  O(total size)."""
    if proto != 3 and proto != 2:
        raise ValueError(f"unknown RESP protocol version {proto!r}")
    for reply in replies:
        _encode_one(out, reply, proto)


@cython.cfunc
def _encode_one(out: bytearray, reply: Any, proto: int) -> object:
    t = type(reply)
    # Scalars at the top need no stack.
    if t is bytes:
        if cython.compiled:
            _put_bulk(out, reply)
        else:
            n = len(reply)
            out += _BULK_HEADER[n] if n < _SMALL else b"$%d\r\n" % n
            out += reply
            out += CRLF
    elif t is SimpleString:
        # The shared OK and PONG first, by identity: the lookup by text
        # reads an attribute and a dict (about a third of encoding PONG).
        if reply is OK:
            line = OK_REPLY
        elif reply is PONG:
            line = PONG_REPLY
        else:
            status: dict[bytes, bytes] = _STATUS
            cached = status.get(reply.text)
            line = cached if cached is not None else _status_line(reply.text)
        if cython.compiled:
            _put_raw(out, line)
        else:
            out += line
    elif t is int:
        out += _INT_REPLY[reply] if 0 <= reply < _INTS else _integer(reply, proto)
    elif t is RawReply:
        out += reply
    else:
        _encode_nested(out, reply, proto)
    return None


def _encode_nested(out: bytearray, reply: Any, proto: int) -> None:
    """The general walk: containers are entered by pushing their iterator."""
    resp3 = proto == 3
    stack: list[Any] = []
    items: Any = iter((reply,))
    while True:
        for item in items:
            t = type(item)
            if t is bytes:
                if cython.compiled:
                    _put_bulk(out, item)
                else:
                    n = len(item)
                    out += _BULK_HEADER[n] if n < _SMALL else b"$%d\r\n" % n
                    out += item
                    out += CRLF
            elif t is list or t is tuple:
                n = len(item)
                # Leading bulk strings (a field list, an entry's ID) are written
                # here; the walk descends only from the first other element.
                if cython.compiled:
                    i = _put_array_head(out, item, n)
                else:
                    out += _ARRAY_HEADER[n] if n < _SMALL else b"*%d\r\n" % n
                    i = 0
                    while i < n and type(element := item[i]) is bytes:
                        m = len(element)
                        out += _BULK_HEADER[m] if m < _SMALL else b"$%d\r\n" % m
                        out += element
                        out += CRLF
                        i += 1
                if i < n:
                    stack.append(items)
                    items = iter(item) if i == 0 else islice(item, i, None)
                    break
            elif t is int:
                out += _INT_REPLY[item] if 0 <= item < _INTS else _integer(item, proto)
            else:
                children = _encode_other(out, item, resp3)
                if children is not None:
                    stack.append(items)
                    items = children
                    break
        else:
            if not stack:
                return
            items = stack.pop()


# -- the compiled twin's writers: one resize and memcpy per piece -------------------
# (The pure twin appends pre-built headers instead; these read the same.)


@cython.cfunc
@cython.inline
def _grow(out: bytearray, n: cython.Py_ssize_t) -> cython.p_char:
    """Make room for ``n`` more bytes at the end of ``out``; where they start."""
    size: cython.Py_ssize_t = PyByteArray_GET_SIZE(out)  # type: ignore[name-defined]
    PyByteArray_Resize(out, size + n)  # type: ignore[name-defined]
    return PyByteArray_AS_STRING(out) + size  # type: ignore[name-defined]


@cython.cfunc
@cython.inline
def _digits(dst: cython.p_char, n: cython.Py_ssize_t) -> cython.Py_ssize_t:
    """Write ``n`` (>= 0) in decimal at ``dst``; how many bytes."""
    tmp: cython.char[24]
    k: cython.Py_ssize_t = 0
    i: cython.Py_ssize_t
    while True:
        tmp[k] = 0x30 + n % 10
        n //= 10
        k += 1
        if n == 0:
            break
    for i in range(k):
        dst[i] = tmp[k - 1 - i]
    return k


@cython.cfunc
def _put_raw(out: bytearray, data: bytes) -> cython.int:
    """``data`` appended to ``out`` as it is."""
    n: cython.Py_ssize_t = PyBytes_GET_SIZE(data)  # type: ignore[name-defined]
    memcpy(_grow(out, n), PyBytes_AS_STRING(data), n)  # type: ignore[name-defined]
    return 0


@cython.cfunc
def _put_bulk(out: bytearray, item: bytes) -> cython.int:
    """``$<len>\\r\\n<item>\\r\\n`` appended to ``out``."""
    n: cython.Py_ssize_t = PyBytes_GET_SIZE(item)  # type: ignore[name-defined]
    head: cython.char[24]
    head[0] = 0x24  # '$'
    k: cython.Py_ssize_t = 1 + _digits(head + 1, n)
    head[k] = 0x0D
    head[k + 1] = 0x0A
    dst: cython.p_char = _grow(out, k + 2 + n + 2)
    memcpy(dst, head, k + 2)  # type: ignore[name-defined]
    memcpy(dst + k + 2, PyBytes_AS_STRING(item), n)  # type: ignore[name-defined]
    dst[k + 2 + n] = 0x0D
    dst[k + 3 + n] = 0x0A
    return 0


@cython.cfunc
def _put_array_head(out: bytearray, item: Any, n: cython.Py_ssize_t) -> cython.Py_ssize_t:
    """``*<n>\\r\\n`` and the leading bulk strings of ``item`` (a list or
    tuple of ``n``); how many elements were written."""
    head: cython.char[24]
    head[0] = 0x2A  # '*'
    k: cython.Py_ssize_t = 1 + _digits(head + 1, n)
    head[k] = 0x0D
    head[k + 1] = 0x0A
    memcpy(_grow(out, k + 2), head, k + 2)  # type: ignore[name-defined]
    i: cython.Py_ssize_t = 0
    while i < n:
        element = item[i]
        if type(element) is not bytes:
            break
        _put_bulk(out, element)
        i += 1
    return i


def _encode_other(out: bytearray, item: Any, resp3: bool) -> Any:
    """Write a value other than bytes, list, tuple or int.

    For an aggregate, writes its header and returns an iterator over its
    elements (the caller encodes them); otherwise returns None.
    """
    t = type(item)
    if t is SimpleString:
        out += _STATUS.get(item.text) or _status_line(item.text)
    elif item is None:
        out += NULL_RESP3 if resp3 else NULL_BULK_RESP2
    elif t is str:
        data = item.encode()
        out += b"$%d\r\n" % len(data)
        out += data
        out += CRLF
    elif t is RawReply:
        out += item
    elif t is ErrorReply:
        out += b"-"
        out += _one_line(item.message)
        out += CRLF
    elif t is bool:  # before int: bool is an int
        if resp3:
            out += TRUE_RESP3 if item else FALSE_RESP3
        else:
            out += ONE_REPLY if item else ZERO_REPLY
    elif t is float:
        text = format_double(item)
        if resp3:
            out += b","
            out += text
            out += CRLF
        else:
            out += b"$%d\r\n%s\r\n" % (len(text), text)
    elif t is Map:
        pairs = item.items
        if isinstance(pairs, dict):
            pairs = pairs.items()
        n = len(pairs)
        out += b"%%%d\r\n" % n if resp3 else b"*%d\r\n" % (2 * n)
        if n:
            return chain.from_iterable(pairs)
    elif t is SetReply or t is Push:
        elements = item.items
        n = len(elements)
        out += (_SET_MARK if t is SetReply else _PUSH_MARK)[resp3]
        out += b"%d\r\n" % n
        if n:
            return iter(elements)
    elif t is Verbatim:
        text = item.text.encode() if isinstance(item.text, str) else item.text
        if resp3:
            fmt = item.fmt.encode() if isinstance(item.fmt, str) else item.fmt
            if len(fmt) != 3:
                raise ValueError(f"verbatim format must be 3 bytes, not {fmt!r}")
            out += b"=%d\r\n" % (len(text) + 4)
            out += fmt
            out += b":"
        else:
            out += b"$%d\r\n" % len(text)
        out += text
        out += CRLF
    elif t is _NullArray:
        out += NULL_RESP3 if resp3 else NULL_ARRAY_RESP2
    elif t is DoubleText:
        text = item.text
        if resp3:
            out += b","
            out += text
            out += CRLF
        else:
            out += b"$%d\r\n%s\r\n" % (len(text), text)
    # Subclasses and other buffer types, slowest.
    elif isinstance(item, RawReply):
        out += item
    elif isinstance(item, (bytes, bytearray, memoryview)):
        data = bytes(item)
        out += b"$%d\r\n" % len(data)
        out += data
        out += CRLF
    elif isinstance(item, int):  # (bool cannot be subclassed)
        out += _integer(int(item), 3 if resp3 else 2)
    elif isinstance(item, float):
        return _encode_other(out, float(item), resp3)
    elif isinstance(item, str):
        return _encode_other(out, str(item), resp3)
    elif isinstance(item, (list, tuple)):
        out += b"*%d\r\n" % len(item)
        if item:
            return iter(item)
    else:
        raise TypeError(f"cannot encode {type(item).__name__!r} as a RESP reply: {item!r}")
    return None


def _integer(n: int, proto: int) -> bytes:
    if _INT64_MIN <= n <= _INT64_MAX:
        return b":%d\r\n" % n
    # Beyond 64 bits, as Redis's addReplyBigNum: RESP3 big number, RESP2 bulk.
    text = b"%d" % n
    if proto == 3:
        return b"(" + text + CRLF
    return b"$%d\r\n%s\r\n" % (len(text), text)


def _status_line(text: bytes) -> bytes:
    return b"+" + _one_line(text) + CRLF


def _one_line(text: bytes | str) -> bytes:
    """``text`` with each CR and LF replaced by a space (as Redis's addReplyError)."""
    if isinstance(text, str):
        text = text.encode()
    if b"\r" in text or b"\n" in text:
        text = text.replace(b"\r", b" ").replace(b"\n", b" ")
    return text

