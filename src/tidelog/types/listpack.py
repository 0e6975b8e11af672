"""Redis listpacks, byte for byte.

A listpack is one flat byte string holding a sequence of elements, each an
integer or a byte string, readable in both directions::

    +---------+--------+-----------+-----------+-----+-----------+------+
    | total   | count  | element 1 | element 2 | ... | element n | 0xFF |
    | u32 LE  | u16 LE |           |           |     |           |      |
    +---------+--------+-----------+-----------+-----+-----------+------+

    count is the number of elements, or 65535 ("unknown") once it reaches 65535.

    element = | encoding + data | backlen |

``backlen`` is the size of ``encoding + data``, stored so that it can be read
from its last byte towards lower addresses: 7 bits a byte, most significant
group at the lowest address; every byte except that first one has 0x80 set,
meaning "another byte follows towards lower addresses".  It takes 1 byte for
sizes up to 127, then 2 below 16383, 3 below 2097151, 4 below 268435455,
else 5 (Redis's thresholds, kept exactly, including their off-by-one).

Encodings (first byte, then data)::

    0xxxxxxx                       integer 0..127
    10xxxxxx + data                string, length < 64
    110xxxxx xxxxxxxx              integer -4096..4095 (13-bit two's complement)
    1110xxxx xxxxxxxx + data       string, length < 4096 (high 4 bits first)
    0xF0 + u32 LE length + data    string, any longer length
    0xF1 + 2 bytes LE              int16
    0xF2 + 3 bytes LE              int24
    0xF3 + 4 bytes LE              int32
    0xF4 + 8 bytes LE              int64
    0xFF                           end of the listpack (no backlen)

A string that is a canonical int64 (see :func:`string_to_int`) is always
stored as an integer, in the smallest encoding that holds it; reading it back
gives the same text (:func:`read_bytes`).

Offsets everywhere are byte offsets into the listpack; ``p`` is the offset of
an element's first (encoding) byte.  Nothing here allocates more than the
values it returns, so the stream layer can walk a node element by element.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

try:
    import cython
except ImportError:  # the pure twin, without Cython installed
    from tidelog.kernels import PURE_CYTHON as cython

HEADER_SIZE = 6
EOF = 0xFF
NUMELE_UNKNOWN = 65535
INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1

_HEADER = struct.Struct("<IH")
_I16 = struct.Struct("<h")
_I32 = struct.Struct("<i")
_I64 = struct.Struct("<q")
_U32 = struct.Struct("<I")

# Small integers are by far the most common elements of a stream node (flags,
# deltas, counts); their whole encoded element (encoding byte + backlen 1) is
# precomputed.
_SMALL_INT_ELEMENT = [bytes((v, 1)) for v in range(128)]
_SMALL_INT_TEXT = [b"%d" % v for v in range(128)]
_STR6_HEAD = [bytes((0x80 | n,)) for n in range(64)]
_BACKLEN1 = [bytes((n,)) for n in range(128)]


class ListpackError(ValueError):
    """The bytes are not a well-formed listpack (or not the expected element)."""


# -- strings that are integers ---------------------------------------------------


def string_to_int(s: bytes) -> int | None:
    """The int64 that ``s`` spells canonically, else None.

    Canonical means: at most 20 characters, an optional ``-``, then ``0`` alone
    or a digit 1-9 followed by digits, and a value within int64.  ``"01"``,
    ``"+1"``, ``"-0"``, ``" 1"`` and ``"9223372036854775808"`` are not.
    """
    n = len(s)
    if n == 0 or n > 20:
        return None
    first = s[0]
    if 0x31 <= first <= 0x39:  # 1-9
        if n > 1 and not s.isdigit():
            return None
        value = int(s)
        return value if value <= INT64_MAX else None
    if first == 0x30:  # "0"
        return 0 if n == 1 else None
    if first == 0x2D and n > 1 and 0x31 <= s[1] <= 0x39 and s[1:].isdigit():  # "-"
        value = int(s)
        return value if value >= INT64_MIN else None
    return None


# -- encoding ------------------------------------------------------------------


def backlen(size: int) -> bytes:
    """The backlen bytes for an element whose encoding + data is ``size`` bytes."""
    if size <= 127:
        return bytes((size,))
    if size < 16383:
        return bytes((size >> 7, (size & 127) | 128))
    if size < 2097151:
        return bytes((size >> 14, ((size >> 7) & 127) | 128, (size & 127) | 128))
    if size < 268435455:
        return bytes(
            (
                size >> 21,
                ((size >> 14) & 127) | 128,
                ((size >> 7) & 127) | 128,
                (size & 127) | 128,
            )
        )
    return bytes(
        (
            size >> 28,
            ((size >> 21) & 127) | 128,
            ((size >> 14) & 127) | 128,
            ((size >> 7) & 127) | 128,
            (size & 127) | 128,
        )
    )


def backlen_size(size: int) -> int:
    """How many bytes :func:`backlen` takes for an element of ``size`` bytes."""
    if size <= 127:
        return 1
    if size < 16383:
        return 2
    if size < 2097151:
        return 3
    if size < 268435455:
        return 4
    return 5


def encode_int(value: int) -> bytes:
    """One whole element (encoding, data, backlen) holding the int64 ``value``."""
    if 0 <= value <= 127:
        return _SMALL_INT_ELEMENT[value]
    if -4096 <= value <= 4095:
        u = value & 0x1FFF
        return bytes((0xC0 | (u >> 8), u & 0xFF, 2))
    if -32768 <= value <= 32767:
        return b"\xf1" + _I16.pack(value) + b"\x03"
    if -8388608 <= value <= 8388607:
        return b"\xf2" + (value & 0xFFFFFF).to_bytes(3, "little") + b"\x04"
    if -2147483648 <= value <= 2147483647:
        return b"\xf3" + _I32.pack(value) + b"\x05"
    if INT64_MIN <= value <= INT64_MAX:
        return b"\xf4" + _I64.pack(value) + b"\x09"
    raise OverflowError(f"listpack integers are int64, got {value}")


@cython.cfunc
def _short_element(s: bytes, n: cython.Py_ssize_t) -> object:
    """The element of a string shorter than 64 bytes (compiled twin): the
    integer element when ``s`` is a canonical int64, else header, bytes,
    backlen written into one new bytes object."""
    p: cython.p_const_uchar = s
    i: cython.Py_ssize_t = 0
    c: cython.int
    value: cython.ulonglong = 0
    if n and n <= 20 and 0x2D <= p[0] <= 0x39:
        if p[0] == 0x2D:
            i = 1
        if i < n and 0x31 <= p[i] <= 0x39:  # no leading zero
            while i < n:
                c = p[i] - 0x30
                if c < 0 or c > 9:
                    break
                if value > 922337203685477580:  # would pass 2**63 - 1 (or 2**63)
                    break
                value = value * 10 + c
                i += 1
            if i == n:
                if p[0] != 0x2D and value <= 9223372036854775807:
                    return encode_int(value)
                if p[0] == 0x2D and value <= 9223372036854775808:
                    return encode_int(-cython.cast(cython.longlong, value - 1) - 1)
        elif n == 1 and p[0] == 0x30:
            return _SMALL_INT_ELEMENT[0]
    out: bytes = PyBytes_FromStringAndSize(cython.NULL, n + 2)  # type: ignore[name-defined]
    dst: cython.p_char = PyBytes_AS_STRING(out)  # type: ignore[name-defined]
    dst[0] = 0x80 | n
    memcpy(dst + 1, p, n)  # type: ignore[name-defined]
    dst[n + 1] = n + 1
    return out


def encode_string(s: bytes) -> bytes:
    """One whole element holding ``s``: as an integer when it is a canonical int64."""
    n = len(s)
    if cython.compiled:
        if n < 64 and type(s) is bytes:
            return _short_element(s, n)
    if n < 64:
        if n and n <= 20 and 0x2D <= s[0] <= 0x39:  # starts with '-' or a digit
            value = string_to_int(s)
            if value is not None:
                return encode_int(value)
        return _STR6_HEAD[n] + s + _BACKLEN1[n + 1]
    if n < 4096:
        return bytes((0xE0 | (n >> 8), n & 0xFF)) + s + backlen(n + 2)
    return b"\xf0" + _U32.pack(n) + s + backlen(n + 5)


def encode(value: bytes | int) -> bytes:
    """One whole element for an int (integer encoding) or bytes (see encode_string)."""
    if isinstance(value, int):
        return encode_int(value)
    return encode_string(value)


def header(total: int, count: int) -> bytes:
    """The 6-byte header for a listpack of ``total`` bytes and ``count`` elements."""
    return _HEADER.pack(total, min(count, NUMELE_UNKNOWN))


def pack(values: Iterable[bytes | int]) -> bytes:
    """A whole listpack holding ``values`` in order (Redis's ``lpAppend`` each)."""
    elements = [encode(v) for v in values]
    body = b"".join(elements)
    return header(HEADER_SIZE + len(body) + 1, len(elements)) + body + b"\xff"


def read_header(buf: bytes | bytearray) -> tuple[int, int]:
    """``(total bytes, element count or 65535)`` from the header."""
    if len(buf) < HEADER_SIZE + 1:
        raise ListpackError("listpack shorter than its header")
    total, count = _HEADER.unpack_from(buf, 0)
    return total, count


# -- decoding ------------------------------------------------------------------


def element_size(buf: bytes | bytearray, p: int) -> int:
    """Size of encoding + data of the element at ``p`` (without its backlen)."""
    b = buf[p]
    if b < 0x80:
        return 1
    if b < 0xC0:
        return 1 + (b & 0x3F)
    if b < 0xE0:
        return 2
    if b < 0xF0:
        return 2 + (((b & 0x0F) << 8) | buf[p + 1])
    if b == 0xF0:
        return 5 + _U32.unpack_from(buf, p + 1)[0]
    if b == 0xF1:
        return 3
    if b == 0xF2:
        return 4
    if b == 0xF3:
        return 5
    if b == 0xF4:
        return 9
    if b == EOF:
        raise ListpackError("read past the end of the listpack")
    raise ListpackError(f"invalid listpack encoding byte 0x{b:02x} at {p}")


def skip(buf: bytes | bytearray, p: int) -> int:
    """Offset of the element after the one at ``p``."""
    b = buf[p]
    if b < 0x80:
        return p + 2
    if b < 0xC0:
        return p + 2 + (b & 0x3F)
    if b < 0xE0:
        return p + 3
    size = element_size(buf, p)
    return p + size + backlen_size(size)


def read(buf: bytes | bytearray, p: int) -> tuple[int | bytes, int]:
    """``(value, offset of the next element)`` for the element at ``p``.

    Integers come back as int, strings as bytes.
    """
    b = buf[p]
    if b < 0x80:
        return b, p + 2
    if b < 0xC0:
        end = p + 1 + (b & 0x3F)
        return bytes(buf[p + 1 : end]), end + 1
    if b < 0xE0:
        v = ((b & 0x1F) << 8) | buf[p + 1]
        return (v - 8192 if v >= 4096 else v), p + 3
    if b < 0xF0:
        n = ((b & 0x0F) << 8) | buf[p + 1]
        end = p + 2 + n
        return bytes(buf[p + 2 : end]), end + (1 if n + 2 <= 127 else 2)
    if b == 0xF1:
        return _I16.unpack_from(buf, p + 1)[0], p + 4
    if b == 0xF2:
        v = buf[p + 1] | (buf[p + 2] << 8) | (buf[p + 3] << 16)
        return (v - (1 << 24) if v >= (1 << 23) else v), p + 5
    if b == 0xF3:
        return _I32.unpack_from(buf, p + 1)[0], p + 6
    if b == 0xF4:
        return _I64.unpack_from(buf, p + 1)[0], p + 10
    if b == 0xF0:
        n = _U32.unpack_from(buf, p + 1)[0]
        end = p + 5 + n
        if end >= len(buf):
            raise ListpackError("string element runs past the end of the listpack")
        return bytes(buf[p + 5 : end]), end + backlen_size(n + 5)
    if b == EOF:
        raise ListpackError("read past the end of the listpack")
    raise ListpackError(f"invalid listpack encoding byte 0x{b:02x} at {p}")


def read_bytes(buf: bytes | bytearray, p: int) -> tuple[bytes, int]:
    """Like :func:`read`, but integers come back as their decimal text."""
    b = buf[p]
    if b < 0x80:
        return _SMALL_INT_TEXT[b], p + 2
    if b < 0xC0:
        end = p + 1 + (b & 0x3F)
        return bytes(buf[p + 1 : end]), end + 1
    value, q = read(buf, p)
    if isinstance(value, int):
        return b"%d" % value, q
    return value, q


def read_int(buf: bytes | bytearray, p: int) -> tuple[int, int]:
    """Like :func:`read` for an element that must be an integer."""
    b = buf[p]
    if b < 0x80:
        return b, p + 2
    if 0xC0 <= b < 0xE0:
        v = ((b & 0x1F) << 8) | buf[p + 1]
        return (v - 8192 if v >= 4096 else v), p + 3
    value, q = read(buf, p)
    if not isinstance(value, int):
        raise ListpackError(f"expected an integer element at {p}")
    return value, q


def read_backlen(buf: bytes | bytearray, end: int) -> tuple[int, int]:
    """Decode the backlen whose last byte is at ``end - 1``.

    Returns ``(size, offset of the backlen's first byte)``.
    """
    value = 0
    shift = 0
    q = end - 1
    while True:
        if q < HEADER_SIZE or shift > 28:
            raise ListpackError("malformed backlen")
        b = buf[q]
        value |= (b & 127) << shift
        if not b & 128:
            return value, q
        shift += 7
        q -= 1


def prev(buf: bytes | bytearray, p: int) -> int:
    """Offset of the element that ends just before ``p`` (an element or the 0xFF)."""
    size, q = read_backlen(buf, p)
    start = q - size
    if start < HEADER_SIZE:
        raise ListpackError("backlen points before the first element")
    return start


def unpack(buf: bytes | bytearray, strict: bool = True) -> list[int | bytes]:
    """Every element of the listpack, after checking the whole structure.

    Checks the header's total and count, that each element and its backlen
    lie inside the buffer, that every backlen is exactly right, and the
    terminator.  With ``strict`` each element must also be encoded exactly as
    :func:`encode` would encode its value (smallest integer encoding, no
    integer-looking strings), which holds for every listpack Redis writes.
    Raises :class:`ListpackError`.  Cost: O(size).
    """
    total, count = read_header(buf)
    if total != len(buf):
        raise ListpackError(f"header says {total} bytes, buffer has {len(buf)}")
    if buf[-1] != EOF:
        raise ListpackError("listpack does not end with 0xFF")
    try:
        values = _unpack_elements(buf, strict)
    except (IndexError, struct.error) as exc:
        raise ListpackError(f"truncated listpack: {exc}") from None
    if count != min(len(values), NUMELE_UNKNOWN):
        raise ListpackError(f"header says {count} elements, found {len(values)}")
    return values


def _unpack_elements(buf: bytes | bytearray, strict: bool) -> list[int | bytes]:
    values: list[int | bytes] = []
    p = HEADER_SIZE
    last = len(buf) - 1
    while p < last:
        size = element_size(buf, p)
        blen = backlen_size(size)
        q = p + size + blen
        if q > last:
            raise ListpackError(f"element at {p} runs past the end")
        if bytes(buf[p + size : q]) != backlen(size):
            raise ListpackError(f"wrong backlen for the element at {p}")
        value, nxt = read(buf, p)
        if nxt != q:  # pragma: no cover - read() and element_size() disagree
            raise ListpackError(f"inconsistent element size at {p}")
        if strict and encode(value) != bytes(buf[p:q]):
            raise ListpackError(f"element at {p} is not canonically encoded")
        values.append(value)
        p = q
    if p != last:
        raise ListpackError("elements overrun the terminator")
    return values


# -- stream node entries ---------------------------------------------------------
#
# The per-entry work of a stream macro node (types/stream.py describes the
# layout): appending an entry to the tail node, and reading an entry's ID
# deltas and fields.  Plain interfaces (bytes/bytearray, ints, lists), so the
# stream layer does not know which twin runs.

_DELETED = 1
_SAMEFIELDS = 2


@cython.cfunc
@cython.inline
def _small_or_int(v: object) -> object:
    if type(v) is int and 0 <= v < 128:
        return _SMALL_INT_ELEMENT[v]
    return encode_int(v)


@cython.cfunc
@cython.locals(numele=cython.Py_ssize_t, total=cython.Py_ssize_t)
def _patch_header(lp: bytearray, count: cython.Py_ssize_t) -> None:
    """A stream entry of ``count`` elements was appended to ``lp``: write its
    new total size and element count (saturating at NUMELE_UNKNOWN) into the
    header."""
    numele = lp[4] | (lp[5] << 8)
    if numele != NUMELE_UNKNOWN:
        numele += count + 1
        if numele > NUMELE_UNKNOWN:
            numele = NUMELE_UNKNOWN
    total = len(lp)
    lp[0] = total & 0xFF
    lp[1] = (total >> 8) & 0xFF
    lp[2] = (total >> 16) & 0xFF
    lp[3] = (total >> 24) & 0xFF
    lp[4] = numele & 0xFF
    lp[5] = numele >> 8


@cython.cfunc
@cython.locals(n=cython.Py_ssize_t, i=cython.Py_ssize_t, m=cython.Py_ssize_t,
               count=cython.Py_ssize_t, room=cython.Py_ssize_t, rel=cython.Py_ssize_t,
               q=cython.Py_ssize_t, dst=cython.p_uchar, src=cython.p_const_uchar)
def _append_same_c(lp: bytearray, msd: object, seqd: object, fv: list) -> cython.Py_ssize_t:
    """:func:`append_stream_entry` of a SAMEFIELDS entry with deltas in 0..127
    and values shorter than 64 bytes (compiled twin): the entry is written
    straight into ``lp``, grown once.  -1, with ``lp`` untouched, for any
    other entry.  An integer-looking value is written as its integer element
    (never longer than the string's), any other as a short string."""
    n = len(fv)
    count = (n >> 1) + 3
    if count >= 128 or not (0 <= msd <= 127 and 0 <= seqd <= 127):
        return -1
    room = 9  # flags, ms delta, seq delta, lp-count (2 bytes each), the terminator
    i = 1
    while i < n:
        value = fv[i]
        if type(value) is not bytes or len(value) >= 64:
            return -1
        room += len(value) + 2
        i += 2
    rel = len(lp) - 1  # the terminator's offset: the entry starts there
    PyByteArray_Resize(lp, rel + room)  # type: ignore[name-defined]  # grown once; cut to the written size below
    dst = cython.cast(cython.p_uchar, PyByteArray_AS_STRING(lp))  # type: ignore[name-defined]
    q = rel
    dst[q] = _SAMEFIELDS
    dst[q + 1] = 1
    dst[q + 2] = msd
    dst[q + 3] = 1
    dst[q + 4] = seqd
    dst[q + 5] = 1
    q += 6
    i = 1
    while i < n:
        value = fv[i]
        src = value
        m = len(value)
        if m and m <= 20 and 0x2D <= src[0] <= 0x39:  # may be an integer: the Python path
            element = _short_element(value, m)
            memcpy(dst + q, PyBytes_AS_STRING(element), len(element))  # type: ignore[name-defined]
            q += len(element)
        else:
            dst[q] = 0x80 | m
            memcpy(dst + q + 1, src, m)  # type: ignore[name-defined]
            dst[q + m + 1] = m + 1
            q += m + 2
        i += 2
    dst[q] = count
    dst[q + 1] = 1
    dst[q + 2] = 0xFF
    q += 3
    PyByteArray_Resize(lp, q)  # type: ignore[name-defined]
    _patch_header(lp, count)
    return rel


@cython.locals(count=cython.Py_ssize_t, rel=cython.Py_ssize_t, n=cython.Py_ssize_t,
               i=cython.Py_ssize_t)
def append_stream_entry(lp: bytearray, msd: int, seqd: int, fv: list, same: cython.bint) -> int:
    """Append one stream entry to the node ``lp`` in place; return its offset.

    ``msd``/``seqd`` are the entry's ID deltas from the node's master ID (as
    int64), ``fv`` the flat ``[f1, v1, ...]``; with ``same`` the fields equal
    the master fields and only the values are written (SAMEFIELDS).  The
    entry replaces the terminator, which is written again after it, and the
    header's total and element count are patched.  Returns the offset of
    the entry's first element (where the terminator was).
    """
    n = len(fv)
    if cython.compiled and same and type(lp) is bytearray:
        rel = _append_same_c(lp, msd, seqd, fv)
        if rel >= 0:
            return rel
    if same:
        count = (n >> 1) + 3
        parts = [_SMALL_INT_ELEMENT[_SAMEFIELDS], _small_or_int(msd), _small_or_int(seqd)]
        i = 1
        while i < n:
            parts.append(encode_string(fv[i]))
            i += 2
    else:
        count = n + 4
        parts = [_SMALL_INT_ELEMENT[0], _small_or_int(msd), _small_or_int(seqd),
                 _small_or_int(n >> 1)]
        for x in fv:
            parts.append(encode_string(x))
    parts.append(_SMALL_INT_ELEMENT[count] if count < 128 else encode_int(count))
    parts.append(b"\xff")
    rel = len(lp) - 1
    lp[rel:] = b"".join(parts)
    _patch_header(lp, count)
    return rel


@cython.locals(b=cython.int)
def stream_entry_id(lp: bytes | bytearray, p: cython.Py_ssize_t, kms: int, kseq: int) -> tuple:
    """``(ms, seq)`` of the stream entry at ``p`` in a node whose master ID is
    ``kms-kseq``: its deltas added as uint64 (wrapping)."""
    b = lp[p + 2]
    if b < 0x80:  # small deltas: the common case
        ms = kms + b
        p += 4
    else:
        d, p = read_int(lp, p + 2)
        ms = kms + d
    b = lp[p]
    if b < 0x80:
        seq = kseq + b
    else:
        seq = kseq + read_int(lp, p)[0]
    if ms < 0 or ms > 0xFFFFFFFFFFFFFFFF:
        ms &= 0xFFFFFFFFFFFFFFFF
    if seq < 0 or seq > 0xFFFFFFFFFFFFFFFF:
        seq &= 0xFFFFFFFFFFFFFFFF
    return (ms, seq)


@cython.cfunc
@cython.inline
def _data(lp: object) -> cython.p_const_uchar:
    """The bytes of a ``bytes`` or ``bytearray`` (compiled twin only)."""
    if type(lp) is bytes:
        return cython.cast(cython.p_const_uchar, PyBytes_AS_STRING(lp))  # type: ignore[name-defined]
    return cython.cast(cython.p_const_uchar, PyByteArray_AS_STRING(lp))  # type: ignore[name-defined]


@cython.cfunc
@cython.locals(buf=cython.p_const_uchar, size=cython.Py_ssize_t, q=cython.Py_ssize_t,
               b=cython.int, n=cython.Py_ssize_t)
def _samefields_c(lp: object, p: cython.Py_ssize_t, fields: list) -> object:
    """The values of a SAMEFIELDS entry whose values start at ``p``, read
    through a C pointer (compiled twin); None when an element would reach
    past the buffer, for the Python path to handle."""
    buf = _data(lp)
    size = len(lp)
    out: list = []
    for field in fields:
        if p >= size:
            return None
        b = buf[p]
        if 0x80 <= b < 0xC0:  # short string: the common case
            n = b & 0x3F
            q = p + 1 + n
            if q >= size:
                return None
            value = PyBytes_FromStringAndSize(cython.cast(cython.p_char, buf + p + 1), n)  # type: ignore[name-defined]
            p = q + 1
        elif b < 0x80:  # small integer
            value = _SMALL_INT_TEXT[b]
            p += 2
        else:
            value, p = read_bytes(lp, p)
        out.append(field)
        out.append(value)
    return out


@cython.locals(q=cython.Py_ssize_t, b=cython.int, n=cython.Py_ssize_t, _i=cython.Py_ssize_t)
def stream_entry_fields(lp: bytes | bytearray, p: cython.Py_ssize_t, fields: list) -> list:
    """The ``[f1, v1, ...]`` of the stream entry at ``p`` (its flags element);
    ``fields`` are the node's master fields, for a SAMEFIELDS entry."""
    flags = lp[p]
    b = lp[p + 2]
    p = p + 4 if b < 0x80 else skip(lp, p + 2)
    b = lp[p]
    p = p + 2 if b < 0x80 else skip(lp, p)
    out: list = []
    if flags & _SAMEFIELDS:
        if cython.compiled and (type(lp) is bytes or type(lp) is bytearray):
            values = _samefields_c(lp, p, fields)
            if values is not None:
                return values
        for field in fields:
            b = lp[p]
            if 0x80 <= b < 0xC0:  # short string: the common case
                q = p + 1 + (b & 0x3F)
                value = bytes(lp[p + 1 : q])
                p = q + 1
            elif b < 0x80:  # small integer
                value = _SMALL_INT_TEXT[b]
                p += 2
            else:
                value, p = read_bytes(lp, p)
            out.append(field)
            out.append(value)
        return out
    n, p = read_int(lp, p)
    for _i in range(2 * n):
        value, p = read_bytes(lp, p)
        out.append(value)
    return out


@cython.cfunc
@cython.locals(n=cython.Py_ssize_t, i=cython.Py_ssize_t, j=cython.Py_ssize_t,
               v=cython.ulonglong, _part=cython.int)
def _id_text(ms: cython.ulonglong, seq: cython.ulonglong) -> bytes:
    """``b"<ms>-<seq>"`` written by hand (compiled twin only)."""
    text = cython.declare(cython.char[48])
    digits = cython.declare(cython.char[24])
    n = 0
    v = ms
    for _part in range(2):
        j = 0
        while True:
            digits[j] = 0x30 + v % 10
            v //= 10
            j += 1
            if v == 0:
                break
        for i in range(j - 1, -1, -1):
            text[n] = digits[i]
            n += 1
        text[n] = 0x2D  # '-'
        n += 1
        v = seq
    return PyBytes_FromStringAndSize(text, n - 1)  # type: ignore[name-defined]


@cython.locals(n=cython.Py_ssize_t, got=cython.Py_ssize_t, p=cython.Py_ssize_t,
               flags=cython.int, buf=cython.p_const_uchar, cms=cython.ulonglong,
               cseq=cython.ulonglong, kms_c=cython.ulonglong, kseq_c=cython.ulonglong)
def stream_live_entries(lp: bytes | bytearray, base: cython.Py_ssize_t, offs: object,
                        k: cython.Py_ssize_t, kms: int, kseq: int, fields: list,
                        limit: cython.Py_ssize_t, id_type: type, ids: list,
                        entries: list) -> cython.Py_ssize_t:
    """Read a node's live entries from its entry ``k`` on, at most ``limit``
    (0: all): for each, append ``id_type((ms, seq))`` to ``ids`` and
    ``[b"<ms>-<seq>", [f1, v1, ...]]`` to ``entries``; return how many.

    ``base`` and ``offs`` locate the entries (the offset of the first one,
    and each one's offset from it), ``kms``/``kseq`` is the node's master ID
    and ``fields`` its master fields, as :func:`stream_entry_id` and
    :func:`stream_entry_fields` take them.  Entries flagged deleted are
    skipped.  Cost: O(entries passed over), one call for a whole node.
    """
    n = len(offs)
    got = 0
    new_id = tuple.__new__
    if cython.compiled:
        kms_c = kms
        kseq_c = kseq
    while k < n:
        p = base + offs[k]
        k += 1
        if cython.compiled:
            # Both deltas small integers (the common case): the ID, its text
            # and a SAMEFIELDS entry's values in C (uint64 wrapping as Redis).
            buf = _data(lp)
            flags = buf[p]
            if flags & _DELETED:
                continue
            if buf[p + 2] < 0x80 and buf[p + 4] < 0x80:
                cms = kms_c + buf[p + 2]
                cseq = kseq_c + buf[p + 4]
                ids.append(new_id(id_type, (cms, cseq)))
                values = _samefields_c(lp, p + 6, fields) if flags & _SAMEFIELDS else None
                if values is None:
                    values = stream_entry_fields(lp, p, fields)
                entries.append([_id_text(cms, cseq), values])
                got += 1
                if got == limit:
                    break
                continue
        elif lp[p] & _DELETED:
            continue
        t = stream_entry_id(lp, p, kms, kseq)
        ids.append(new_id(id_type, t))
        entries.append([b"%d-%d" % t, stream_entry_fields(lp, p, fields)])
        got += 1
        if got == limit:
            break
    return got
