"""Bitmaps: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO.

They work on plain strings (no type of their own): bit 0 is the most
significant bit of the first byte, and a string reads as zero bits past its
end.  The bit arithmetic is in :mod:`tidelog.types.bits`; this module parses
arguments, applies Redis's range rules and does the bookkeeping of writes.

Writes follow Redis 8:

* SETBIT and BITFIELD count a change, fire ``setbit`` and propagate their
  argv only when a bit changed or the string grew (redis/redis#9403); a
  BITFIELD whose every write failed under ``OVERFLOW FAIL`` but which made
  or grew the string counts as a write too (redis/redis#15699), so replicas
  and the AOF see the string Redis keeps.  A BITFIELD of GETs only is a read:
  nothing propagates.
* BITOP stores its result as SET would (the TTL goes; ``set`` event) and
  deletes the destination when every source is empty or missing (``del``).
* The string a bit command leaves is "raw" for OBJECT ENCODING, as Redis
  unshares it before writing, even when no bit changed (a 1-byte string
  cannot carry the mark: see :func:`.keys.mark_string_encoding`).

Offsets are bounded as Redis bounds them: a bit offset whose byte lies at or
past ``proto-max-bulk-len`` is refused, except for the AOF being replayed
and a primary's stream, which Redis obeys whatever they say.

``bytes`` are immutable, so a write copies the string: O(N) for an N-byte
string, where Redis edits it in place in O(1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...config import NOTIFY_GENERIC, NOTIFY_STRING
from ...errors import (
    BIT_OFFSET_INVALID,
    BIT_VALUE_INVALID,
    BITFIELD_BAD_OVERFLOW,
    BITFIELD_BAD_TYPE,
    BITFIELD_RO_GET_ONLY,
    BITOP_NOT_ONE_KEY,
    BITOP_TWO_KEYS,
    BITPOS_BIT_INVALID,
    SYNTAX,
    WRONGTYPE,
    CommandError,
)
from ...types import bits as B
from ..args import ArgReader, parse_int
from ..encoding import mark_string_encoding
from ..key_specs import ks
from ..lookup import lookup_read
from ..table import command

if TYPE_CHECKING:
    from ..contract import Ctx




def _obeyed(ctx: Ctx) -> bool:
    """The AOF being replayed and a primary's stream are not checked (Redis's mustObeyClient)."""
    return ctx.client.kind in ("aof", "master")


def parse_bit_offset(ctx: Ctx, arg: bytes, field_bits: int = 0) -> int:
    """A bit offset (Redis's getBitOffsetFromArgument): a signed 64-bit
    integer, not negative, whose byte is below ``proto-max-bulk-len``.  With
    ``field_bits`` (BITFIELD), ``#n`` means ``n * field_bits``, multiplied in
    64-bit wrapping arithmetic as Redis does (``#4611686018427387904`` of a
    u4 is offset 0).  O(1)."""
    hashed = field_bits > 0 and arg[:1] == b"#"
    offset = parse_int(arg[1:] if hashed else arg, BIT_OFFSET_INVALID)
    if hashed:
        offset = B.wrap_i64(offset * field_bits)
    if offset < 0 or (not _obeyed(ctx) and offset >> 3 >= ctx.config["proto-max-bulk-len"]):
        raise CommandError(BIT_OFFSET_INVALID)
    return offset


def _string_for_write(ctx: Ctx, key: bytes) -> bytes | None:
    """The string at key looked up for a write (no hit/miss counted), None if missing."""
    value = ctx.db.get(key)
    if value is None or type(value) is bytes:
        return value
    raise CommandError(WRONGTYPE)


def _string_for_read(ctx: Ctx, key: bytes) -> bytes | None:
    value = lookup_read(ctx, key)
    if value is None or type(value) is bytes:
        return value
    raise CommandError(WRONGTYPE)


def _store_bits(ctx: Ctx, key: bytes, value: bytes, created: bool, changes: int) -> None:
    """Store a string a bit command changed (its TTL stays), count
    ``changes``, fire ``setbit`` and propagate the command.  O(1)."""
    mark_string_encoding(value, b"raw")
    ctx.db.set(key, value, keep_ttl=True)
    ctx.modified(key, changes)
    if created:
        ctx.ready(key)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_STRING, b"setbit", key)


# -- SETBIT, GETBIT ------------------------------------------------------------------
@command("setbit", arity=4, flags="write denyoom", keys=(1, 1, 1), group="bitmap",
         since="2.2.0", complexity="O(1)",
         summary="Sets or clears the bit at offset in the string value stored at key",
         key_specs=[ks("RW access update", 1)])
def setbit(ctx: Ctx, argv: list[bytes]) -> object:
    """SETBIT key offset value

    Answers the bit's old value.  O(1) when nothing changes, O(N) otherwise
    (the N-byte string is copied)."""
    key = argv[1]
    offset = parse_bit_offset(ctx, argv[2])
    on = parse_int(argv[3], BIT_VALUE_INVALID)
    if on & ~1:
        raise CommandError(BIT_VALUE_INVALID)
    current = _string_for_write(ctx, key)
    new, old = B.set_bit(current or b"", offset, on)
    if current is None or new is not current:
        _store_bits(ctx, key, new, created=current is None, changes=1)
    else:
        mark_string_encoding(current, b"raw")  # Redis unshares it all the same
    return old


@command("getbit", arity=3, flags="readonly fast", keys=(1, 1, 1), group="bitmap",
         since="2.2.0", complexity="O(1)",
         summary="Returns the bit value at offset in the string value stored at key",
         key_specs=[ks("RO access", 1)])
def getbit(ctx: Ctx, argv: list[bytes]) -> object:
    """GETBIT key offset

    O(1)."""
    offset = parse_bit_offset(ctx, argv[2])
    value = _string_for_read(ctx, argv[1])
    return 0 if value is None else B.get_bit(value, offset)


# -- BITCOUNT, BITPOS ------------------------------------------------------------------
def _unit(arg: bytes) -> bool:
    """``BIT`` (True) or ``BYTE`` (False), any case; else a syntax error."""
    word = arg.upper()
    if word == b"BIT":
        return True
    if word == b"BYTE":
        return False
    raise CommandError(SYNTAX)


def clamp_range(start: int, end: int, size: int) -> tuple[int, int]:
    """Redis's range rule for BITCOUNT and BITPOS over ``size`` units (bytes
    or bits): negative indexes count from the end, then both are clamped to
    the string (an end before the start of the string becomes 0).  The
    range is empty when start > end.  O(1)."""
    if start < 0:
        start += size
    if end < 0:
        end += size
    start = max(start, 0)
    end = min(max(end, 0), size - 1)
    return start, end


@command("bitcount", arity=-2, flags="readonly", keys=(1, 1, 1), group="bitmap",
         since="2.6.0", complexity="O(N)", summary="Count set bits in a string",
         key_specs=[ks("RO access", 1)])
def bitcount(ctx: Ctx, argv: list[bytes]) -> object:
    """BITCOUNT key [start end [BYTE | BIT]]

    O(N) in the bytes of the range, in C (``int.bit_count`` over chunks of
    at most 1 MiB).  The arguments are checked before the key is looked up
    (Redis 7.2, redis/redis#12394 and #11734)."""
    argc = len(argv)
    if argc == 2:
        value = _string_for_read(ctx, argv[1])
        return 0 if value is None else B.count_bits(value, 0, len(value) * 8 - 1)
    if argc not in (4, 5):
        raise CommandError(SYNTAX)
    start = parse_int(argv[2])
    end = parse_int(argv[3])
    in_bits = argc == 5 and _unit(argv[4])
    value = _string_for_read(ctx, argv[1])
    if value is None:
        return 0
    if start < 0 and end < 0 and start > end:
        return 0
    size = len(value) * 8 if in_bits else len(value)
    start, end = clamp_range(start, end, size)
    if start > end:
        return 0
    if in_bits:
        return B.count_bits(value, start, end)
    return B.count_bits(value, start * 8, end * 8 + 7)


@command("bitpos", arity=-3, flags="readonly", keys=(1, 1, 1), group="bitmap",
         since="2.8.7", complexity="O(N)", summary="Find first bit set or clear in a string",
         key_specs=[ks("RO access", 1)])
def bitpos(ctx: Ctx, argv: list[bytes]) -> object:
    """BITPOS key bit [start [end [BYTE | BIT]]]

    A missing key is all zeros: 0 for a clear bit, -1 for a set one.  Without
    an end, a clear bit not found in the range is the first bit past the
    string; with one, -1.  O(P) where P is how far the answer lies from the
    start (O(N) when there is none)."""
    argc = len(argv)
    bit = parse_int(argv[2])
    if bit not in (0, 1):
        raise CommandError(BITPOS_BIT_INVALID)
    if argc > 6:
        raise CommandError(SYNTAX)
    in_bits = end_given = False
    start = end = 0
    if argc >= 4:
        start = parse_int(argv[3])
        if argc == 6:
            in_bits = _unit(argv[5])
        if argc >= 5:
            end = parse_int(argv[4])
            end_given = True
    value = _string_for_read(ctx, argv[1])
    if value is None:
        return -1 if bit else 0
    size = len(value)
    if argc == 3:
        start, end = 0, size - 1
    else:
        if not end_given:
            end = size * 8 + 7 if in_bits else size - 1
        if in_bits:
            size *= 8
        start, end = clamp_range(start, end, size)
    if start > end:
        return -1
    first, last = (start, end) if in_bits else (start * 8, end * 8 + 7)
    pos = B.first_bit(value, bit, first, last)
    if pos < 0 and bit == 0 and not end_given:
        return last + 1  # the string reads as zeros past its end
    return pos


# -- BITOP ------------------------------------------------------------------------------
@command("bitop", arity=-4, flags="write denyoom", keys=(2, -1, 1), group="bitmap",
         since="2.6.0", complexity="O(N)", summary="Perform bitwise operations between strings",
         key_specs=[ks("OW update", 2), ks("RO access", 3, -1)])
def bitop(ctx: Ctx, argv: list[bytes]) -> object:
    """BITOP <AND | OR | XOR | NOT | DIFF | DIFF1 | ANDOR | ONE> destkey key [key ...]

    Answers the length of the result, the longest source's.  DIFF, DIFF1,
    ANDOR and ONE are Redis 8.2's (https://redis.io/docs/latest/commands/bitop/);
    the first three need two sources at least.  O(N * K) for K sources of
    at most N bytes, in C (big-integer operations)."""
    op = argv[1].upper()
    if op not in B.OPERATIONS:
        raise CommandError(SYNTAX)
    if op == b"NOT" and len(argv) != 4:
        raise CommandError(BITOP_NOT_ONE_KEY)
    if op in (b"DIFF", b"DIFF1", b"ANDOR") and len(argv) < 5:
        raise CommandError(BITOP_TWO_KEYS % op)
    dest = argv[2]
    sources = [_string_for_read(ctx, key) or b"" for key in argv[3:]]
    result = B.bit_operation(op, sources)
    if result:
        mark_string_encoding(result, b"raw")  # a new string object, never encoded
        ctx.db.set(dest, result)
        ctx.modified(dest)
        ctx.ready(dest)  # a stream replaced by a string: its blocked readers fail
        ctx.propagate_argv()
        ctx.notify(NOTIFY_STRING, b"set", dest)
    elif ctx.db.delete(dest):
        ctx.modified(dest)
        ctx.ready(dest)
        ctx.propagate_argv()
        ctx.notify(NOTIFY_GENERIC, b"del", dest)
    return len(result)


# -- BITFIELD, BITFIELD_RO -------------------------------------------------------------
_GET, _SET, _INCRBY = 0, 1, 2
_OVERFLOWS = {b"WRAP": B.WRAP, b"SAT": B.SAT, b"FAIL": B.FAIL}


@dataclass(slots=True)
class FieldOp:
    """One GET, SET or INCRBY of a BITFIELD call."""

    opcode: int
    signed: bool
    bits: int
    offset: int
    value: int      # SET's value, INCRBY's increment (0 for GET)
    overflow: int   # the OVERFLOW in force (types.bits.WRAP, SAT or FAIL)


def parse_field_type(arg: bytes) -> tuple[bool, int]:
    """``i<bits>`` (1..64) or ``u<bits>`` (1..63): (signed, bits).  O(1)."""
    sign = arg[:1]
    if sign not in (b"i", b"u"):
        raise CommandError(BITFIELD_BAD_TYPE)
    width = parse_int(arg[1:], BITFIELD_BAD_TYPE)
    signed = sign == b"i"
    if width < 1 or width > (64 if signed else 63):
        raise CommandError(BITFIELD_BAD_TYPE)
    return signed, width


def parse_bitfield(ctx: Ctx, argv: list[bytes]) -> list[FieldOp]:
    """BITFIELD's operations after the key, in order, each with the OVERFLOW
    in force where it appears.  Errors as Redis finds them, left to right.  O(argc)."""
    ops: list[FieldOp] = []
    overflow = B.WRAP
    r = ArgReader(argv, start=2)
    while r.more():
        name = r.next_upper()
        left = r.remaining()
        if name == b"GET" and left >= 2:
            opcode = _GET
        elif name == b"SET" and left >= 3:
            opcode = _SET
        elif name == b"INCRBY" and left >= 3:
            opcode = _INCRBY
        elif name == b"OVERFLOW" and left >= 1:
            mode = _OVERFLOWS.get(r.next_upper())
            if mode is None:
                raise CommandError(BITFIELD_BAD_OVERFLOW)
            overflow = mode
            continue
        else:
            raise CommandError(SYNTAX)
        signed, width = parse_field_type(r.next_bytes())
        offset = parse_bit_offset(ctx, r.next_bytes(), width)
        value = 0 if opcode == _GET else r.next_int()
        ops.append(FieldOp(opcode, signed, width, offset, value, overflow))
    return ops


def _apply(buf: bytearray, op: FieldOp) -> tuple[int | None, bool]:
    """Run one SET or INCRBY on ``buf``: (the reply, whether the field's
    value changed); the reply is None when OVERFLOW FAIL refused it.  O(bits)."""
    raw = B.read_field(buf, op.offset, op.bits)
    if op.signed:
        old = B.to_signed(raw, op.bits)
        if op.opcode == _INCRBY:
            overflow, limit = B.signed_overflow(old, op.value, op.bits, op.overflow)
            new = limit if overflow else old + op.value
            reply = new
        else:
            overflow, limit = B.signed_overflow(op.value, 0, op.bits, op.overflow)
            new = limit if overflow else op.value
            reply = old
    else:
        old = raw
        if op.opcode == _INCRBY:
            overflow, limit = B.unsigned_overflow(old, op.value, op.bits, op.overflow)
            new = limit if overflow else old + op.value
            reply = new
        else:
            value = op.value % (1 << 64)  # Redis reads the value as a uint64
            overflow, limit = B.unsigned_overflow(value, 0, op.bits, op.overflow)
            new = limit if overflow else value
            reply = old
    if overflow and op.overflow == B.FAIL:
        return None, False
    B.write_field(buf, op.offset, op.bits, new)
    return reply, new != old


def _bitfield(ctx: Ctx, argv: list[bytes], read_only: bool) -> object:
    ops = parse_bitfield(ctx, argv)
    key = argv[1]
    writes = [op for op in ops if op.opcode != _GET]
    if not writes:
        value = _string_for_read(ctx, key)
        data = value or b""
        return [B.to_signed(B.read_field(data, op.offset, op.bits), op.bits) if op.signed
                else B.read_field(data, op.offset, op.bits) for op in ops]
    if read_only:
        raise CommandError(BITFIELD_RO_GET_ONLY)
    current = _string_for_write(ctx, key)
    buf = bytearray(current or b"")
    need = (max(op.offset + op.bits - 1 for op in writes) >> 3) + 1
    grown = need > len(buf)
    if grown:
        buf.extend(bytes(need - len(buf)))
    replies: list[int | None] = []
    changes = 0
    for op in ops:
        if op.opcode == _GET:
            raw = B.read_field(buf, op.offset, op.bits)
            replies.append(B.to_signed(raw, op.bits) if op.signed else raw)
            continue
        reply, changed = _apply(buf, op)
        replies.append(reply)
        if reply is not None and (grown or changed):
            changes += 1
    if changes or grown:
        _store_bits(ctx, key, bytes(buf), created=current is None, changes=max(changes, 1))
    elif current is not None:
        mark_string_encoding(current, b"raw")  # Redis unshares it all the same
    return replies


@command("bitfield", arity=-2, flags="write denyoom", keys=(1, 1, 1), group="bitmap",
         since="3.2.0", complexity="O(1) for each subcommand specified",
         summary="Perform arbitrary bitfield integer operations on strings",
         key_specs=[ks("RW access update variable_flags", 1,
                       notes="This command allows both access and modification of the key")])
def bitfield(ctx: Ctx, argv: list[bytes]) -> object:
    """BITFIELD key [GET encoding offset | [OVERFLOW <WRAP | SAT | FAIL>] <SET encoding offset value | INCRBY encoding offset increment> [GET encoding offset | [OVERFLOW <WRAP | SAT | FAIL>] <SET encoding offset value | INCRBY encoding offset increment> ...]]

    Answers one integer per GET, SET (the old value) and INCRBY (the new
    one); nil for a write OVERFLOW FAIL refused.  O(K) for K operations
    when only reading, O(N + K) with a write (the N-byte string is copied)."""  # noqa: E501 (the syntax line, whole)
    return _bitfield(ctx, argv, read_only=False)


@command("bitfield_ro", arity=-2, flags="readonly fast", keys=(1, 1, 1), group="bitmap",
         since="6.0.0", complexity="O(1) for each subcommand specified",
         summary="Perform arbitrary bitfield integer operations on strings. Read-only variant "
                 "of BITFIELD",
         key_specs=[ks("RO access", 1)])
def bitfield_ro(ctx: Ctx, argv: list[bytes]) -> object:
    """BITFIELD_RO key [GET encoding offset [GET encoding offset ...]]

    O(K) for K GETs."""
    return _bitfield(ctx, argv, read_only=True)
