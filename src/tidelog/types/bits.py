"""Strings read as arrays of bits, Redis's way: bit 0 is the most
significant bit of the first byte, bit 8 the most significant of the second,
and so on; past the end of a string every bit reads as 0.

Pure functions over ``bytes`` (and ``bytearray`` for the in-place writes of
one BITFIELD call), used by the bitmap commands.  Work on many bits at a
time is done by CPython's big integers (``int.from_bytes``, ``&``, ``|``,
``^``, ``bit_count``, ``bit_length``) and ``bytes.translate``, which run
in C at a few nanoseconds a byte, never by a Python loop over bits or bytes.  Scans that may stop
early (:func:`first_bit`) read the string in chunks that grow from 64 bytes
to 1 MiB, so a bit found near the start costs little and a long scan holds
no integer bigger than a chunk.

The overflow rules of BITFIELD (:func:`signed_overflow`,
:func:`unsigned_overflow`) follow Redis's 64-bit C arithmetic, wrap-arounds
included: ``SET i63 0 -9223372036854775808`` under ``OVERFLOW SAT`` stores
the largest i63, as Redis does.
"""

from __future__ import annotations

_U64 = 1 << 64
_CHUNK_FIRST = 64
_CHUNK_MAX = 1 << 20

# BITOP's operations (Redis 8.2 added the last four).
OPERATIONS = (b"AND", b"OR", b"XOR", b"NOT", b"DIFF", b"DIFF1", b"ANDOR", b"ONE")

# Each byte's complement (BITOP NOT by bytes.translate, in C).
_COMPLEMENT = bytes(255 - i for i in range(256))

# BITFIELD's OVERFLOW behaviours.
WRAP, SAT, FAIL = 0, 1, 2


def wrap_i64(value: int) -> int:
    """``value`` as C's int64_t holds it after a wrapping operation.  O(1)."""
    return ((value + (1 << 63)) % _U64) - (1 << 63)


# -- single bits ---------------------------------------------------------------------
def get_bit(value: bytes, offset: int) -> int:
    """The bit at ``offset`` (0 past the end).  O(1)."""
    byte = offset >> 3
    if byte >= len(value):
        return 0
    return (value[byte] >> (7 - (offset & 7))) & 1


def set_bit(value: bytes, offset: int, on: int) -> tuple[bytes, int]:
    """``value`` with the bit at ``offset`` set to ``on`` (grown with zero
    bytes to reach it), and the bit's old value.  When neither the length
    nor the bit changes, ``value`` itself comes back.  O(N): one copy of the
    string (``bytes`` are immutable)."""
    byte = offset >> 3
    shift = 7 - (offset & 7)
    size = len(value)
    if byte < size:
        old = (value[byte] >> shift) & 1
        if old == on:
            return value, old
        view = memoryview(value)
        new = bytes(((value[byte] & ~(1 << shift)) | (on << shift),))
        return b"".join((view[:byte], new, view[byte + 1:])), old
    tail = bytearray(byte + 1 - size)
    tail[-1] = on << shift
    return value + tail, 0


# -- counting and searching ---------------------------------------------------------
def _window(value: bytes | memoryview, first: int, last: int) -> int:
    """Bits ``first``..``last`` (inclusive, within the string) as one
    integer, bit ``first`` its most significant.  O(last - first); the mask
    (a pass of its own) only when ``first`` is not at a byte's start, which
    :func:`first_bit` makes happen in its first, small chunk only."""
    skip, tail = first & 7, 7 - (last & 7)
    n = int.from_bytes(value[first >> 3:(last >> 3) + 1], "big")
    if tail:  # (each big-integer operation is a pass over the bits: only the needed ones)
        n >>= tail
    return n & ((1 << (last - first + 1)) - 1) if skip else n


def count_bits(value: bytes, first: int, last: int) -> int:
    """How many bits are set among bits ``first``..``last`` (inclusive;
    0 <= first, last < 8 * len(value); none when first > last).  O(N) in C:
    the whole bytes of the range through ``int.bit_count``, 1 MiB at a time,
    less the bits of the edge bytes outside the range."""
    if first > last:
        return 0
    lo, hi = first >> 3, last >> 3
    if hi - lo < _CHUNK_MAX:
        total = int.from_bytes(value[lo:hi + 1], "big").bit_count()
    else:
        view = memoryview(value)
        total = 0
        for start in range(lo, hi + 1, _CHUNK_MAX):
            total += int.from_bytes(view[start:min(hi + 1, start + _CHUNK_MAX)], "big").bit_count()
    total -= (value[lo] >> (8 - (first & 7))).bit_count()
    total -= (value[hi] & ((1 << (7 - (last & 7))) - 1)).bit_count()
    return total


def first_bit(value: bytes, bit: int, first: int, last: int) -> int:
    """The position of the first bit equal to ``bit`` among bits
    ``first``..``last`` (inclusive, within the string), or -1.  O(P) where P
    is how far the answer lies from ``first`` (chunks of 64 bytes doubling
    to 1 MiB; a search for 0 complements each chunk with ``bytes.translate``
    and looks for a 1), O(N) when there is none."""
    chunk = _CHUNK_FIRST
    view = memoryview(value)
    while first <= last:
        lo = first >> 3
        hi = min(last >> 3, lo + chunk - 1)
        end = min(last, hi * 8 + 7)
        raw = view[lo:hi + 1] if bit else bytes(view[lo:hi + 1]).translate(_COMPLEMENT)
        n = _window(raw, first - lo * 8, end - lo * 8)
        if n:
            return end + 1 - n.bit_length()
        first = end + 1
        chunk = min(chunk * 2, _CHUNK_MAX)
    return -1


# -- BITOP ------------------------------------------------------------------------------
def bit_operation(op: bytes, values: list[bytes]) -> bytes:
    """BITOP ``op`` (one of :data:`OPERATIONS`, upper case) over ``values``,
    each zero-padded to the longest; the result has that length.

    AND, OR, XOR: every value combined; NOT: the complement of the one
    value; DIFF: bits of the first value set in none of the others; DIFF1:
    bits set in one of the others but not in the first; ANDOR: bits of the
    first value set in one of the others too; ONE: bits set in exactly one
    value.  O(N * K) for K values of at most N bytes, in C (big integers)."""
    size = max((len(v) for v in values), default=0)
    if not size:
        return b""

    def num(v: bytes) -> int:  # right-padded to ``size`` bytes
        n = int.from_bytes(v, "big")
        return n << (8 * (size - len(v))) if len(v) < size else n

    if op == b"NOT":
        return values[0].translate(_COMPLEMENT)
    if op in (b"DIFF", b"DIFF1", b"ANDOR"):
        others = 0
        for v in values[1:]:
            others |= num(v)
        x = num(values[0])
        both = x & others
        if op == b"DIFF":
            result = x ^ both          # x and none of the others
        elif op == b"DIFF1":
            result = others ^ both     # one of the others and not x
        else:
            result = both
    elif op == b"ONE":
        odd = many = 0
        for v in values:
            n = num(v)
            many |= odd & n            # seen before: seen twice at least
            odd ^= n
        result = odd ^ (odd & many)    # seen an odd number of times, and not twice
    else:
        result = num(values[0])
        for v in values[1:]:
            if op == b"AND":
                result &= num(v)
            elif op == b"OR":
                result |= num(v)
            else:
                result ^= num(v)
    return result.to_bytes(size, "big")


# -- BITFIELD integers -----------------------------------------------------------------
def read_field(value: bytes | bytearray, offset: int, bits: int) -> int:
    """The ``bits``-bit unsigned integer at bit ``offset`` (bits past the
    end read as 0).  O(bits)."""
    lo = offset >> 3
    hi = (offset + bits - 1) >> 3
    raw = value[lo:hi + 1]
    n = int.from_bytes(raw, "big") << (8 * (hi + 1 - lo - len(raw)))
    n >>= 7 - ((offset + bits - 1) & 7)
    return n & ((1 << bits) - 1)


def write_field(buf: bytearray, offset: int, bits: int, value: int) -> None:
    """Store the low ``bits`` bits of ``value`` (two's complement for a
    negative one) at bit ``offset`` of ``buf``, which must reach it.  O(bits)."""
    lo = offset >> 3
    hi = (offset + bits - 1) >> 3
    shift = 7 - ((offset + bits - 1) & 7)
    width = 8 * (hi + 1 - lo)
    mask = ((1 << bits) - 1) << shift
    n = int.from_bytes(buf[lo:hi + 1], "big")
    n = (n & ~mask) | ((value << shift) & mask)
    buf[lo:hi + 1] = n.to_bytes(width // 8, "big")


def to_signed(raw: int, bits: int) -> int:
    """A ``bits``-bit two's complement pattern as a signed integer.  O(1)."""
    return raw - (1 << bits) if raw >> (bits - 1) else raw


def signed_overflow(value: int, incr: int, bits: int, mode: int) -> tuple[int, int]:
    """Whether ``value + incr`` leaves the range of a signed ``bits``-bit
    integer (1 above, -1 below, 0 inside), and what WRAP or SAT then make of
    it (0 for FAIL).  ``value`` and ``incr`` are int64 values; the tests are
    Redis's, in 64-bit wrapping arithmetic (checkSignedBitfieldOverflow).  O(1)."""
    top = (1 << 63) - 1 if bits == 64 else (1 << (bits - 1)) - 1
    bottom = -top - 1
    max_incr = wrap_i64(top - value)
    min_incr = wrap_i64(bottom - value)
    if (value > top or (bits != 64 and incr > max_incr)
            or (value >= 0 and incr > 0 and incr > max_incr)):
        direction = 1
    elif (value < bottom or (bits != 64 and incr < min_incr)
          or (value < 0 and incr < 0 and incr < min_incr)):
        direction = -1
    else:
        return 0, 0
    if mode == SAT:
        return direction, top if direction > 0 else bottom
    if mode == WRAP:
        return direction, to_signed((value + incr) & ((1 << bits) - 1), bits)
    return direction, 0


def unsigned_overflow(value: int, incr: int, bits: int, mode: int) -> tuple[int, int]:
    """As :func:`signed_overflow` for an unsigned ``bits``-bit integer
    (``value`` a uint64, ``incr`` an int64; checkUnsignedBitfieldOverflow:
    a negative SET value is a huge uint64, so SAT makes it the maximum).  O(1)."""
    top = (1 << bits) - 1
    max_incr = wrap_i64(top - value)
    min_incr = wrap_i64(-value)
    if value > top or (incr > 0 and incr > max_incr):
        direction = 1
    elif incr < 0 and incr < min_incr:
        direction = -1
    else:
        return 0, 0
    if mode == SAT:
        return direction, top if direction > 0 else 0
    if mode == WRAP:
        return direction, (value + incr) & top
    return direction, 0
