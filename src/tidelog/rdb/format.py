"""RDB's low-level encoding: lengths, strings (integer and LZF forms), the
CRC-64 and a reader over a file's bytes.  Shared by the snapshot writer and
loader (:mod:`.rdb`), DUMP/RESTORE payloads and each value type's encoding.

Lengths: the top two bits of the first byte say 6-bit, 14-bit (big-endian),
0x80 + 32-bit BE, 0x81 + 64-bit BE; 0b11 marks an encoded *string*: 0xC0/0xC1/
0xC2 an int8/int16/int32 (little-endian) written in decimal, 0xC3 an LZF
block (compressed length, plain length, data).
"""

from __future__ import annotations

import struct
from typing import Any

from ..ids import StreamID

_M64 = (1 << 64) - 1
_ID = struct.Struct(">QQ")
_I64 = struct.Struct("<q")
_U64 = struct.Struct("<Q")


class RdbError(ValueError):
    """A file that is not a valid RDB snapshot; the text names the byte offset."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} (at byte offset {offset})")
        self.offset = offset


# =====================================================================================
# CRC-64 (Jones polynomial, reflected in and out, init 0, no final xor)
# =====================================================================================
_POLY_REFLECTED = 0x95AC9329AC4BC9B5  # 0xad93d23594c935a9 bit-reversed


def _make_table() -> list[int]:
    table = []
    for i in range(256):
        crc = i
        for _ in range(8):
            crc = (crc >> 1) ^ _POLY_REFLECTED if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _make_table()


def crc64_py(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """The CRC-64 in pure Python, continuing from ``crc``.  Slow: ~10 MB/s."""
    table = _TABLE
    for b in bytes(data):
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


_CRC: Any = None  # the C CRC-64 (anycrc), made on first use; False when it is not installed


def crc64(data: bytes | bytearray | memoryview) -> int:
    """CRC-64 as Redis computes it (``crc64(b"123456789") == 0xe9c6d914c4b8d9ca``).

    With ``anycrc`` (optional, imported on the first call rather than at
    start-up) at several GB/s, reading a memoryview in place; else in pure
    Python."""
    global _CRC
    if _CRC is None:
        try:
            import anycrc
        except ImportError:  # pragma: no cover - depends on the environment
            _CRC = False
        else:
            _CRC = anycrc.CRC(width=64, poly=0xAD93D23594C935A9, init=0, refin=True,
                              refout=True, xorout=0)
    return _CRC.calc(data) if _CRC else crc64_py(data)


# =====================================================================================
# LZF
# =====================================================================================
class LzfError(ValueError):
    pass


def lzf_decompress_py(src: bytes, out_len: int) -> bytes:
    """Decompress an LZF block that must expand to exactly ``out_len`` bytes.

    The format: a control byte ``c``; ``c < 32`` copies the next ``c + 1``
    bytes; otherwise ``len = c >> 5`` (7 means "add the next byte"), plus 2,
    bytes are copied from ``((c & 31) << 8) + next byte + 1`` bytes back in
    the output (the copy may overlap what it writes).
    """
    out = bytearray()
    i = 0
    n = len(src)
    while i < n:
        ctrl = src[i]
        i += 1
        if ctrl < 32:
            run = ctrl + 1
            if i + run > n:
                raise LzfError("literal run past the end of the input")
            out += src[i:i + run]
            i += run
            continue
        run = ctrl >> 5
        if run == 7:
            if i >= n:
                raise LzfError("truncated back reference")
            run += src[i]
            i += 1
        if i >= n:
            raise LzfError("truncated back reference")
        ref = len(out) - ((ctrl & 0x1F) << 8) - src[i] - 1
        i += 1
        run += 2
        if ref < 0:
            raise LzfError("back reference before the start of the output")
        if ref + run <= len(out):
            out += out[ref:ref + run]
        else:  # overlapping: byte by byte
            for k in range(run):
                out.append(out[ref + k])
        if len(out) > out_len:
            raise LzfError("output longer than announced")
    if len(out) != out_len:
        raise LzfError(f"expanded to {len(out)} bytes, announced {out_len}")
    return bytes(out)


try:  # optional C implementation
    import lzf as _lzf

    def lzf_decompress(src: bytes, out_len: int) -> bytes:
        try:
            out = _lzf.decompress(src, out_len)
        except ValueError:
            out = None
        if out is None or len(out) != out_len:
            raise LzfError(f"LZF data does not expand to the announced {out_len} bytes")
        return out

    def lzf_compress(data: bytes) -> bytes | None:
        """Compressed bytes, or None when that would not save at least 4 bytes."""
        return _lzf.compress(data, len(data) - 4) if len(data) > 4 else None
except ImportError:  # pragma: no cover - depends on the environment
    lzf_decompress = lzf_decompress_py

    def lzf_compress(data: bytes) -> bytes | None:
        return None


# =====================================================================================
# Lengths and strings
# =====================================================================================
def length_bytes(n: int) -> bytes:
    if n < 0x40:
        return bytes((n,))
    if n < 0x4000:
        return bytes((0x40 | (n >> 8), n & 0xFF))
    if n <= 0xFFFFFFFF:
        return b"\x80" + n.to_bytes(4, "big")
    return b"\x81" + (n & _M64).to_bytes(8, "big")


def _int_encoding(s: bytes) -> bytes | None:
    """The 0xC0/C1/C2 form of a canonical decimal fitting 32 bits, else None."""
    if not 0 < len(s) <= 11:
        return None
    digits = s[1:] if s[:1] == b"-" else s
    if not digits.isdigit() or (digits[:1] == b"0" and s != b"0") or s == b"-0":
        return None
    v = int(s)
    if -(1 << 7) <= v < (1 << 7):
        return b"\xc0" + v.to_bytes(1, "little", signed=True)
    if -(1 << 15) <= v < (1 << 15):
        return b"\xc1" + v.to_bytes(2, "little", signed=True)
    if -(1 << 31) <= v < (1 << 31):
        return b"\xc2" + v.to_bytes(4, "little", signed=True)
    return None


def string_bytes(s: bytes, compress: bool) -> bytes:
    if len(s) <= 11:
        encoded = _int_encoding(s)
        if encoded is not None:
            return encoded
    if compress and len(s) > 20:
        packed = lzf_compress(s)
        if packed:
            return b"\xc3" + length_bytes(len(packed)) + length_bytes(len(s)) + packed
    return length_bytes(len(s)) + s


class Reader:
    """A cursor over an RDB file's bytes (or a DUMP payload); every read checks
    the end and raises :class:`RdbError` naming the offset."""

    __slots__ = ("data", "pos", "end")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0
        self.end = len(data)

    def fail(self, message: str, offset: int | None = None) -> RdbError:
        return RdbError(message, self.pos if offset is None else offset)

    def raw(self, n: int) -> bytes:
        p = self.pos
        if p + n > self.end:
            raise self.fail(f"unexpected end of file reading {n} bytes")
        self.pos = p + n
        return self.data[p:p + n]

    def byte(self) -> int:
        p = self.pos
        if p >= self.end:
            raise self.fail("unexpected end of file")
        self.pos = p + 1
        return self.data[p]

    def length(self) -> int:
        at = self.pos
        b = self.byte()
        kind = b >> 6
        if kind == 0:
            return b
        if kind == 1:
            return ((b & 0x3F) << 8) | self.byte()
        if b == 0x80:
            return int.from_bytes(self.raw(4), "big")
        if b == 0x81:
            return int.from_bytes(self.raw(8), "big")
        raise self.fail(f"bad length encoding 0x{b:02x}", at)

    def int64(self) -> int:
        return _I64.unpack(self.raw(8))[0]

    def string(self) -> bytes:
        at = self.pos
        b = self.byte()
        if b < 0xC0:
            self.pos = at
            return self.raw(self.length())
        enc = b & 0x3F
        if enc == 0:
            return b"%d" % int.from_bytes(self.raw(1), "little", signed=True)
        if enc == 1:
            return b"%d" % int.from_bytes(self.raw(2), "little", signed=True)
        if enc == 2:
            return b"%d" % int.from_bytes(self.raw(4), "little", signed=True)
        if enc == 3:
            clen = self.length()
            ulen = self.length()
            packed = self.raw(clen)
            try:
                return lzf_decompress(packed, ulen)
            except LzfError as exc:
                raise self.fail(f"bad LZF string: {exc}", at) from None
        raise self.fail(f"unknown string encoding 0x{b:02x}", at)

    def stream_id(self) -> StreamID:
        ms, seq = _ID.unpack(self.raw(16))
        return StreamID(ms, seq)


# =====================================================================================
# Ziplists (RDB types 10, 12, 13 and the nodes of type 14)
# =====================================================================================
_I16 = struct.Struct("<h")
_I32 = struct.Struct("<i")


def ziplist_entries(blob: bytes) -> list[bytes]:
    """The elements of a ziplist (the encoding of small hashes, lists and
    sorted sets before Redis 7.0's listpacks), as byte strings; ValueError
    when it is malformed.  O(size)."""
    if len(blob) < 11 or blob[-1] != 0xFF:
        raise ValueError("truncated ziplist")
    total, _tail, count = struct.unpack_from("<IIH", blob, 0)
    if total != len(blob):
        raise ValueError(f"ziplist header says {total} bytes, blob has {len(blob)}")
    out: list[bytes] = []
    p = 10
    end = len(blob) - 1
    while p < end:
        p += 1 if blob[p] < 254 else 5  # prevlen
        enc = blob[p]
        kind = enc >> 6
        if kind == 0:
            n, p = enc & 0x3F, p + 1
        elif kind == 1:
            n, p = ((enc & 0x3F) << 8) | blob[p + 1], p + 2
        elif enc == 0x80:
            n, p = int.from_bytes(blob[p + 1:p + 5], "big"), p + 5
        else:
            p += 1
            if enc == 0xC0:
                value, p = _I16.unpack_from(blob, p)[0], p + 2
            elif enc == 0xD0:
                value, p = _I32.unpack_from(blob, p)[0], p + 4
            elif enc == 0xE0:
                value, p = _I64.unpack_from(blob, p)[0], p + 8
            elif enc == 0xF0:
                value, p = int.from_bytes(blob[p:p + 3], "little", signed=True), p + 3
            elif enc == 0xFE:
                value, p = int.from_bytes(blob[p:p + 1], "little", signed=True), p + 1
            elif 0xF1 <= enc <= 0xFD:
                value = (enc & 0x0F) - 1
            else:
                raise ValueError(f"bad ziplist encoding 0x{enc:02x}")
            out.append(b"%d" % value)
            continue
        if p + n > end:
            raise ValueError("ziplist string past the end")
        out.append(blob[p:p + n])
        p += n
    if p != end:
        raise ValueError("ziplist entry past the end")
    if count != 0xFFFF and count != len(out):
        raise ValueError(f"ziplist header says {count} entries, found {len(out)}")
    return out
