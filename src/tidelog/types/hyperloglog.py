"""HyperLogLog in Redis's own string representation: pure data, no wire text.

An HLL is a plain string.  Both encodings start with a 16-byte header::

    +------+---+-------+------------------+
    | HYLL | E | 0 0 0 | cardinality (LE) |   E: 0 dense, 1 sparse
    +------+---+-------+------------------+
     0      4   5       8                16

The cardinality is the last count computed, little-endian; bit 7 of byte 15
set means "stale": the registers changed since (``invalidate``).

*Dense*: 16384 registers of 6 bits, packed from the least significant bit of
each byte up (register 0 is the low six bits of byte 0, register 1 the two
high bits of byte 0 and the low four of byte 1 ...), 12288 bytes, so a dense
HLL is exactly 12304 bytes long.

*Sparse*: run-length opcodes over the registers, in order::

    00xxxxxx            ZERO   xxxxxx+1 (1..64) registers at 0
    01xxxxxx yyyyyyyy   XZERO  (xxxxxx << 8 | yyyyyyyy)+1 (1..16384) at 0
    1vvvvvxx            VAL    xx+1 (1..4) registers at vvvvv+1 (1..32)

An empty HLL is the header and ``XZERO:16384``.  A register that must hold
more than 32, or a change that would make the string longer than
``hll-sparse-max-bytes``, turns it dense for good.

An element picks register ``h & 16383`` of its MurmurHash64A ``h`` (seed
0xadc83b19); the register keeps the longest run seen of ``1 +`` the trailing
zero bits of ``h >> 14`` (at most 51).  The count is Otmar Ertl's improved
estimator (arXiv:1702.01284) over the histogram of register values, as
Redis 5+ computes it, so counts agree with Redis's exactly.

The byte-level algorithms follow Redis's step for step, including the way
a sparse update splits an opcode and merges equal neighbours, so every
string is byte-identical to what Redis would hold.  Corrupt strings are
read as Redis reads them (the byte past the end of an XZERO cut short is
``past``/``tail``: Redis's string terminator, or what Redis wrote there;
see :func:`sparse_set`), and reported where Redis reports them: each
function says when it answers ``None``/``-1`` for "corrupt".

Interpreted Python pays per step, so whatever touches every register or
every opcode runs in C through bytes methods and big integers: byte
columns and ``translate`` tables for the 6-bit packing, a bytewise max by
guarded subtraction, ``bytes.count`` for the histogram, a regular
expression and tables for the sparse opcodes.  Costs are stated per
function; ``n`` is the string length.  MurmurHash64A is the hot spot of
PFADD: about 1-2 us for a short element.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from itertools import accumulate
from struct import Struct

MAGIC = b"HYLL"
P = 14
REGISTERS = 1 << P               # 16384
P_MASK = REGISTERS - 1
Q = 64 - P                       # hash bits left for the run: counts reach Q + 1 = 51
HEADER = 16
DENSE = 0
SPARSE = 1
DENSE_BYTES = REGISTERS * 6 // 8  # 12288
DENSE_SIZE = HEADER + DENSE_BYTES  # 12304
SPARSE_VAL_MAX = 32
SPARSE_VAL_MAX_LEN = 4
SPARSE_ZERO_MAX_LEN = 64
SPARSE_XZERO_MAX_LEN = 16384
SPARSE_MAX_BYTES = 3000          # hll-sparse-max-bytes' default
SEED = 0xADC83B19
ALPHA_INF = 0.721347520444481703680  # 0.5 / ln 2

_M = 0xC6A4A7935BD1E995
_MASK = 0xFFFFFFFFFFFFFFFF
_WORDS = [Struct("<%dQ" % i) for i in range(64)]

# The empty HLL PFADD and PFMERGE create: sparse, cached count 0 (valid).
EMPTY = MAGIC + bytes([SPARSE, 0, 0, 0]) + bytes(8) + b"\x7f\xff"


# -- the hash -------------------------------------------------------------------------
def murmurhash64a(data: bytes, seed: int = SEED) -> int:
    """MurmurHash64A (MurmurHash2, 64-bit), endian-neutral as Redis has it.

    O(len(data)): one multiply-xor round per 8 bytes, the words read with one
    ``struct`` call (about 1 us for elements up to 16 bytes)."""
    n = len(data)
    h = (seed ^ (n * _M)) & _MASK
    words = n >> 3
    if words:
        unpack = _WORDS[words].unpack_from if words < 64 else Struct("<%dQ" % words).unpack_from
        for k in unpack(data):
            k = (k * _M) & _MASK
            k ^= k >> 47
            h = ((h ^ ((k * _M) & _MASK)) * _M) & _MASK
    tail = n & 7
    if tail:
        h = ((h ^ int.from_bytes(data[n - tail:], "little")) * _M) & _MASK
    h ^= h >> 47
    h = (h * _M) & _MASK
    return h ^ (h >> 47)


def pattern(element: bytes) -> tuple[int, int]:
    """(register index, run length) of an element.  O(len(element))."""
    h = murmurhash64a(element)
    rest = (h >> P) | (1 << Q)
    return h & P_MASK, (rest & -rest).bit_length()


# -- header ---------------------------------------------------------------------------
def is_hll(value: bytes) -> bool:
    """Redis's check before any HLL command: magic, a known encoding, and a
    dense string of the exact size.  O(1)."""
    return (len(value) >= HEADER and value[:4] == MAGIC and value[4] <= SPARSE
            and (value[4] == SPARSE or len(value) == DENSE_SIZE))


def cached_count(value: bytes) -> int | None:
    """The cached cardinality, or None when marked stale.  O(1)."""
    if value[15] & 0x80:
        return None
    return int.from_bytes(value[8:16], "little")


def set_cached_count(buf: bytearray, count: int) -> None:
    """Store a count in the header (a count of 2**63 or more reads as stale,
    as in Redis).  O(1)."""
    buf[8:16] = (count & _MASK).to_bytes(8, "little")


def invalidate(buf: bytearray) -> None:
    """Mark the cached count stale.  O(1)."""
    buf[15] |= 0x80


# -- dense registers --------------------------------------------------------------------
def dense_get(buf: bytes | bytearray, index: int) -> int:
    """Register ``index`` of a dense HLL (the whole string).  O(1)."""
    bit = index * 6
    at = HEADER + (bit >> 3)
    shift = bit & 7
    if shift <= 2:
        return (buf[at] >> shift) & 63
    return ((buf[at] >> shift) | (buf[at + 1] << (8 - shift))) & 63


def dense_set(buf: bytearray, index: int, count: int) -> int:
    """Raise register ``index`` to ``count`` when lower: 1 if it changed,
    else 0.  O(1)."""
    bit = index * 6
    at = HEADER + (bit >> 3)
    shift = bit & 7
    if shift <= 2:
        old = (buf[at] >> shift) & 63
        if count <= old:
            return 0
        buf[at] = (buf[at] & ~(63 << shift) & 0xFF) | (count << shift)
        return 1
    old = ((buf[at] >> shift) | (buf[at + 1] << (8 - shift))) & 63
    if count <= old:
        return 0
    buf[at] = (buf[at] & ((1 << shift) - 1)) | ((count << shift) & 0xFF)
    buf[at + 1] = (buf[at + 1] & ~(63 >> (8 - shift)) & 0xFF) | (count >> (8 - shift))
    return 1


def _table(f) -> bytes:  # type: ignore[no-untyped-def]
    return bytes(f(b) for b in range(256))


_LOW6 = _table(lambda b: b & 63)
_HIGH2 = _table(lambda b: b >> 6)
_LOW4_UP2 = _table(lambda b: (b & 15) << 2)
_HIGH4 = _table(lambda b: b >> 4)
_LOW2_UP4 = _table(lambda b: (b & 3) << 4)
_HIGH6 = _table(lambda b: b >> 2)
_UP6 = _table(lambda b: (b & 3) << 6)
_DOWN2 = _table(lambda b: (b >> 2) & 15)
_UP4 = _table(lambda b: (b & 15) << 4)
_DOWN4 = _table(lambda b: (b >> 4) & 3)
_UP2 = _table(lambda b: (b & 63) << 2)


def _or_bytes(a: bytes, b: bytes) -> bytes:
    """Bytewise OR of two equal-length strings whose set bits do not overlap
    (an addition of two big integers: no carries).  O(len), in C."""
    return (int.from_bytes(a, "little") + int.from_bytes(b, "little")).to_bytes(len(a), "little")


def dense_registers(buf: bytes | bytearray) -> bytearray:
    """The 16384 registers of a dense HLL, one byte each, in order.

    O(16384) in C: bytes 0, 1, 2 of every 3 hold registers 0-3 of every 4,
    so four ``translate`` passes over the byte columns and one interleave."""
    body = bytes(buf[HEADER:DENSE_SIZE])
    b0, b1, b2 = body[0::3], body[1::3], body[2::3]
    out = bytearray(REGISTERS)
    out[0::4] = b0.translate(_LOW6)
    out[1::4] = _or_bytes(b0.translate(_HIGH2), b1.translate(_LOW4_UP2))
    out[2::4] = _or_bytes(b1.translate(_HIGH4), b2.translate(_LOW2_UP4))
    out[3::4] = b2.translate(_HIGH6)
    return out


def pack_registers(registers: bytes | bytearray) -> bytes:
    """The dense body (12288 bytes) of 16384 register bytes (each < 64).
    O(16384) in C; the inverse of :func:`dense_registers`."""
    regs = bytes(registers)
    r0, r1, r2, r3 = regs[0::4], regs[1::4], regs[2::4], regs[3::4]
    out = bytearray(DENSE_BYTES)
    out[0::3] = _or_bytes(r0.translate(_LOW6), r1.translate(_UP6))
    out[1::3] = _or_bytes(r1.translate(_DOWN2), r2.translate(_UP4))
    out[2::3] = _or_bytes(r2.translate(_DOWN4), r3.translate(_UP2))
    return bytes(out)


# -- sparse ----------------------------------------------------------------------------
def _byte(buf: bytes | bytearray, i: int, past: int = 0) -> int:
    return buf[i] if i < len(buf) else past


# The sparse string read in bulk.  Every byte outside 0x40-0x7f is a whole
# one-byte opcode (ZERO or VAL); scanning from an opcode boundary, the first
# byte in 0x40-0x7f starts an XZERO and the byte after it is its second
# byte, whatever its value.  So a regular expression finds the XZEROs (and
# nothing else) left to right, and the one-byte opcodes between them are
# handled by byte tables: their register counts (_SPAN) and the registers
# they stand for (_EXPAND).
_XZERO_OP = re.compile(rb"[\x40-\x7f][\x00-\xff]?")
_XZERO_SPLIT = re.compile(rb"([\x40-\x7f][\x00-\xff]?)")
_SPAN = _table(lambda b: (b & 63) + 1 if b < 0x40 else (b & 3) + 1 if b >= 0x80 else 0)
_EXPAND = [bytes((b & 63) + 1) if b < 0x40 else bytes([((b >> 2) & 31) + 1]) * ((b & 3) + 1)
           if b >= 0x80 else b"" for b in range(256)]


def _xzero_span(op: bytes, past: int = 0) -> int:
    return (((op[0] & 63) << 8) | (op[1] if len(op) > 1 else past)) + 1


def sparse_registers(buf: bytes | bytearray, past: int = 0) -> bytes | None:
    """The 16384 registers of a sparse HLL, one byte each, or None when its
    opcodes do not add up to exactly 16384 registers.

    Validity, here and so in :func:`sparse_to_dense`, :func:`merge_into`
    and :func:`histogram`, is what redis-server 7.0.15 as shipped (with its
    CVE-2025-32023 fix) answers: the runs must add up to 16384 exactly; an
    XZERO cut short at the end reads its missing byte as ``past``: the byte
    after the string in Redis's memory (see :func:`sparse_set`).  Redis
    7.0.15 without the fix let VALs past the 16384th register pass in
    merges and conversions.

    O(n) in C: the string is split at its XZEROs (a regular expression), the
    runs summed with a byte table before anything is expanded, then each
    opcode expanded by table lookup and joined."""
    pieces = _XZERO_SPLIT.split(bytes(buf[HEADER:]))
    total = 0
    for i, piece in enumerate(pieces):
        total += _xzero_span(piece, past) if i & 1 else sum(piece.translate(_SPAN))
    if total != REGISTERS:
        return None
    expand = _EXPAND.__getitem__
    return b"".join([bytes(_xzero_span(piece, past)) if i & 1 else b"".join(map(expand, piece))
                     for i, piece in enumerate(pieces)])


def sparse_to_dense(buf: bytes | bytearray, past: int = 0) -> bytearray | None:
    """The dense form of a sparse HLL (header copied, encoding changed), or
    None when the opcodes do not cover exactly 16384 registers
    (:func:`sparse_registers`).  O(n + 16384) in C."""
    registers = sparse_registers(buf, past)
    if registers is None:
        return None
    out = bytearray(buf[:HEADER])
    out[4] = DENSE
    out += pack_registers(registers)
    return out


_CHUNK = 128


def _locate(buf: bytes | bytearray, index: int, past: int = 0
            ) -> tuple[int, int, int, int] | None:
    """The sparse opcode covering register ``index``: (its position, its
    first register, its register count, the position of the opcode before
    it or -1), or None when the opcodes end first.

    The register counts per byte come from a table (0 for both bytes of an
    XZERO, whose counts are kept aside); whole chunks of 128 bytes are
    skipped with one C ``sum`` each, and only the chunk holding the register
    is walked byte by byte.  O(n) in C plus O(128) interpreted."""
    body = bytes(buf[HEADER:])
    n = len(body)
    spans: bytes | bytearray = body.translate(_SPAN)
    leads: dict[int, int] = {}
    for match in _XZERO_OP.finditer(body):
        leads[match.start()] = _xzero_span(match.group(), past)
    if leads:
        spans = bytearray(spans)
        for q in leads:
            if q + 1 < n:
                spans[q + 1] = 0
        lead_at = list(leads)
        lead_ends = [0, *accumulate(leads.values())]
    first = 0
    for start in range(0, n, _CHUNK):
        end = start + _CHUNK
        total = sum(spans[start:end])
        if leads:
            total += lead_ends[bisect_left(lead_at, end)] - lead_ends[bisect_left(lead_at, start)]
        if first + total > index:
            break
        first += total
    else:
        return None
    for at in range(start, min(end, n)):
        span = leads.get(at, 0) or spans[at]
        if first + span > index:
            break
        first += span
    prev = -1 if at == 0 else HEADER + (at - 2 if at - 2 in leads else at - 1)
    return HEADER + at, first, span, prev


def _val(value: int, run: int) -> int:
    return 0x80 | ((value - 1) << 2) | (run - 1)


def _zeros(run: int) -> bytes:
    if run > SPARSE_ZERO_MAX_LEN:
        run -= 1
        return bytes([0x40 | (run >> 8), run & 0xFF])
    return bytes([run - 1])


def sparse_set(buf: bytearray, index: int, count: int, max_bytes: int,
               cursor: list[int] | None = None, tail: list[int] | None = None) -> int:
    """Raise register ``index`` of a sparse HLL to ``count`` in place: 1 if
    it changed, 0 if not, -1 if the string is corrupt.  ``buf`` becomes
    dense (in place) when the value does not fit a VAL opcode or the string
    would outgrow ``max_bytes``.

    The opcode covering the register is found by walking from the start
    (O(n)), or from ``cursor`` (``[position, first register, previous
    position]``, left by the call before for a lower index: PFMERGE sets
    registers in order, which makes a merge O(n) rather than O(n^2)).  The
    opcode is split (ZERO/XZERO into zeros-VAL-zeros, VAL into VAL-VAL-VAL),
    then up to five opcodes from the one before are scanned to merge equal
    VAL neighbours, as Redis does.  O(n) for the byte moves.

    ``tail`` (``[byte]``, in and out) is the byte after the string in
    Redis's memory, which Redis reads as the second byte of an XZERO cut
    short at the end: 0 (its string terminator) unless an update of such
    an XZERO wrote past the end (Redis writes the split's last byte there),
    until the next change of length zeroes it again."""
    past = tail[0] if tail is not None else 0
    if count > SPARSE_VAL_MAX:
        return _promote(buf, index, count, past, tail)
    n = len(buf)
    if cursor is None:
        found = _locate(buf, index, past)
        if found is None:
            return -1
        p, first, span, prev = found
        oplen = 2 if 0x40 <= buf[p] < 0x80 else 1
    else:
        p, first, prev = cursor
        prev_prev = -1
        prev_span = 0
        span = 0
        oplen = 1
        while p < n:
            b = buf[p]
            if b < 0x40:
                span = (b & 63) + 1
                oplen = 1
            elif b >= 0x80:
                span = (b & 3) + 1
                oplen = 1
            else:
                span = (((b & 63) << 8) | _byte(buf, p + 1, past)) + 1
                oplen = 2
            if index < first + span:
                break
            prev_prev, prev, prev_span = prev, p, span
            p += oplen
            first += span
        if span == 0 or p >= n:
            return -1
        # Where the next (higher) index may resume: the opcode before this
        # one stays where it is and covers the same registers whatever the
        # update and the merge below do (the merge starts there).  When the
        # walk did not move, the merge may change the opcode the cursor is
        # on: a change then sends the cursor back to the start.
        if prev_span:
            cursor[0], cursor[1], cursor[2] = prev, first - prev_span, prev_prev
            cursor = None
    b = buf[p]
    if b >= 0x80:
        old = ((b >> 2) & 31) + 1
        if old >= count:
            return 0
        run = (b & 3) + 1
        if run == 1:
            buf[p] = _val(count, 1)
            _merge_neighbours(buf, prev, cursor, tail)
            return 1
        seq = bytearray()
        if index != first:
            seq.append(_val(old, index - first))
        seq.append(_val(count, 1))
        last = first + span - 1
        if index != last:
            seq.append(_val(old, last - index))
        oldlen = 1
    else:
        if b < 0x40 and span == 1:
            buf[p] = _val(count, 1)
            _merge_neighbours(buf, prev, cursor, tail)
            return 1
        seq = bytearray()
        if index != first:
            seq += _zeros(index - first)
        seq.append(_val(count, 1))
        last = first + span - 1
        if index != last:
            seq += _zeros(last - index)
        oldlen = oplen
    delta = len(seq) - oldlen
    if delta > 0 and n + delta > max_bytes:
        return _promote(buf, index, count, past, tail)
    buf[p:p + oldlen] = seq
    after = 0  # Redis ends the string with a 0 byte (sdsIncrLen) before writing seq
    if len(buf) > n + delta:
        # An XZERO cut short at the end: Redis writes seq's last byte past
        # the end of the string, where the next read of a cut XZERO finds it.
        after = seq[-1]
        del buf[n + delta:]
    if tail is not None:
        tail[0] = after
    _merge_neighbours(buf, prev, cursor, tail)
    return 1


def _merge_neighbours(buf: bytearray, prev: int, cursor: list[int] | None,
                      tail: list[int] | None) -> None:
    """Step 4 of Redis's sparse update: from the opcode before the changed
    one, up to five opcodes are looked at; two adjacent VALs of one value
    whose runs fit one VAL become one.  Then the count goes stale.  A
    ``cursor`` given (one the walk did not move) goes back to the start.
    A merge shortens the string, and Redis then zeroes the byte after it
    (``tail``)."""
    if cursor is not None:
        cursor[0], cursor[1], cursor[2] = HEADER, 0, -1
    p = prev if prev >= 0 else HEADER
    end = len(buf)
    scan = 5
    while p < end and scan:
        scan -= 1
        b = buf[p]
        if b < 0x80:
            p += 2 if b >= 0x40 else 1
            continue
        if p + 1 < end:
            c = buf[p + 1]
            if c >= 0x80 and (b & 0x7C) == (c & 0x7C):
                run = (b & 3) + (c & 3) + 2
                if run <= SPARSE_VAL_MAX_LEN:
                    buf[p + 1] = (c & 0xFC) | (run - 1)
                    del buf[p]
                    end -= 1
                    if tail is not None:
                        tail[0] = 0
                    continue
        p += 1
    buf[15] |= 0x80


def _promote(buf: bytearray, index: int, count: int, past: int,
             tail: list[int] | None) -> int:
    dense = sparse_to_dense(buf, past)
    if dense is None:
        return -1
    buf[:] = dense
    if tail is not None:
        tail[0] = 0
    return dense_set(buf, index, count)


# -- adding, merging, counting ------------------------------------------------------------
def add(buf: bytearray, element: bytes, max_bytes: int, tail: list[int] | None = None) -> int:
    """Add one element to the HLL in ``buf`` (in place): 1 if a register
    rose, 0 if not, -1 if the string is corrupt (or of no known encoding).
    Dense: O(1) after the hash; sparse: O(n)."""
    index, count = pattern(element)
    encoding = buf[4]
    if encoding == DENSE:
        return dense_set(buf, index, count)
    if encoding == SPARSE:
        return sparse_set(buf, index, count, max_bytes, None, tail)
    return -1


def merge_into(registers: bytearray, value: bytes, past: int = 0) -> bool:
    """registers[i] = max(registers[i], register i of ``value``) for a
    valid-looking HLL string (:func:`is_hll`).  False when a sparse string
    does not cover exactly 16384 registers.  O(n + 16384) in C."""
    other = dense_registers(value) if value[4] == DENSE else sparse_registers(value, past)
    if other is None:
        return False
    registers[:] = max_registers(registers, other)
    return True


_GUARD = int.from_bytes(b"\x80" * REGISTERS, "little")


def max_registers(a: bytes | bytearray, b: bytes | bytearray) -> bytes:
    """Bytewise max of two register arrays (values < 128), on big integers:
    each byte of ``(a | 0x80..) - b`` keeps its top bit exactly when a >= b,
    and no byte borrows from the next.  O(16384) in C."""
    x = int.from_bytes(a, "little")
    y = int.from_bytes(b, "little")
    keep_a = (((x | _GUARD) - y) & _GUARD) >> 7
    mask = keep_a * 0xFF
    return ((x & mask) | (y & ~mask)).to_bytes(REGISTERS, "little")


def raised(old: bytes | bytearray, new: bytes | bytearray) -> bytes:
    """A register array that is non-zero exactly where ``new`` is above
    ``old`` (both arrays of values < 128, ``new`` >= ``old`` bytewise): the
    bytewise XOR, on big integers.  O(16384) in C."""
    x = int.from_bytes(old, "little") ^ int.from_bytes(new, "little")
    return x.to_bytes(REGISTERS, "little")


def histogram(value: bytes | bytearray, past: int = 0) -> list[int] | None:
    """How many registers hold each value 0..63, or None for a sparse
    string that does not cover exactly 16384 registers.  O(n + 16384) in C."""
    registers = dense_registers(value) if value[4] == DENSE else sparse_registers(value, past)
    return None if registers is None else raw_histogram(registers)


def raw_histogram(registers: bytes | bytearray) -> list[int]:
    """The histogram of 16384 register bytes: one C ``count`` per value,
    stopping once every register is accounted for.  O(16384 * values seen)."""
    regs = bytes(registers)
    hist = [0] * 64
    left = REGISTERS
    for v in range(64):
        c = regs.count(v)
        hist[v] = c
        left -= c
        if not left:
            break
    return hist


def _sigma(x: float) -> float:
    if x == 1.0:
        return math.inf
    y = 1.0
    z = x
    while True:
        x *= x
        z_prev = z
        z += x * y
        y += y
        if z_prev == z:
            return z


def _tau(x: float) -> float:
    if x == 0.0 or x == 1.0:
        return 0.0
    y = 1.0
    z = 1.0 - x
    while True:
        x = math.sqrt(x)
        z_prev = z
        y *= 0.5
        t = 1.0 - x
        z -= t * t * y
        if z_prev == z:
            return z / 3


def estimate(hist: list[int]) -> int:
    """Ertl's improved estimator over a register histogram, in Redis's
    double arithmetic and order, rounded half away from zero; an unsigned
    64-bit result (2**63 when the sum is 0: llround of infinity).  Values
    above Q + 1 (possible only in a hand-made dense string) count for
    nothing, as in Redis.  O(Q)."""
    m = float(REGISTERS)
    z = m * _tau((m - hist[Q + 1]) / m)
    for j in range(Q, 0, -1):
        z += hist[j]
        z *= 0.5
    z += m * _sigma(hist[0] / m)
    if z == 0.0:
        return 1 << 63
    e = ALPHA_INF * m * m / z
    floor = math.floor(e)
    return int(floor) + (1 if e - floor >= 0.5 else 0)


def count(value: bytes | bytearray, past: int = 0) -> int | None:
    """The estimated cardinality of one HLL string (the cache ignored), or
    None if corrupt.  O(16384) in C for dense, O(n) for sparse."""
    hist = histogram(value, past)
    return None if hist is None else estimate(hist)


# -- debugging -------------------------------------------------------------------------
def decode_sparse(value: bytes, past: int = 0) -> bytes:
    """PFDEBUG DECODE's text: ``z:<run>``, ``Z:<run>``, ``v:<value>,<run>``
    per opcode, space-separated.  O(n)."""
    parts = []
    p = HEADER
    n = len(value)
    while p < n:
        b = value[p]
        if b < 0x40:
            parts.append(b"z:%d" % ((b & 63) + 1))
            p += 1
        elif b < 0x80:
            parts.append(b"Z:%d" % ((((b & 63) << 8) | _byte(value, p + 1, past)) + 1))
            p += 2
        else:
            parts.append(b"v:%d,%d" % (((b >> 2) & 31) + 1, (b & 3) + 1))
            p += 1
    return b" ".join(parts)
