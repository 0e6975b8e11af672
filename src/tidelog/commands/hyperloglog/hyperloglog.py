"""HyperLogLog: PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST.

An HLL is a plain string in Redis's representation
(:mod:`tidelog.types.hyperloglog`), so GET, SET, DUMP and RESTORE move it
between Tidelog and Redis unchanged.  Every command checks the string
first: another type is the usual WRONGTYPE, a string that is no HLL is
``WRONGTYPE Key is not a valid HyperLogLog string value.``, and opcodes
that do not add up are ``INVALIDOBJ``.

What goes to the AOF and replicas is what Redis sends: PFADD when a
register rose (or the key was made), PFMERGE always, PFCOUNT of one key
when it stored a freshly computed count in the header (the string changed),
PFDEBUG GETREG/TODENSE when they made the string dense.

Redis rewrites the string in place after making it a "raw" string object
(OBJECT ENCODING answers ``raw`` afterwards even for a short HLL that SET
stored as ``embstr``); each command that does so marks the value here
(:func:`.keys.mark_string_encoding`).
"""

from __future__ import annotations

import math
import random
import re
from typing import TYPE_CHECKING, Any

from ...config import NOTIFY_STRING
from ...errors import (
    HLL_CORRUPT,
    HLL_NOT_VALID,
    PFDEBUG_NO_KEY,
    PFDEBUG_NOT_SPARSE,
    PFSELFTEST_DISAGREE,
    PFSELFTEST_ERROR,
    PFSELFTEST_NOT_SPARSE,
    PFSELFTEST_REGISTER,
    WRONGTYPE,
    CommandError,
    pfdebug_unknown_subcommand,
)
from ...resp.replies import OK, SimpleString
from ...types import hyperloglog as hll
from ..encoding import mark_string_encoding
from ..key_specs import ks
from ..lookup import lookup_read
from ..table import command

if TYPE_CHECKING:
    from ..contract import Ctx


_NONZERO = re.compile(rb"[^\x00]")


def _signed(count: int) -> int:
    """Redis replies the unsigned count as a signed 64-bit integer."""
    return count - (1 << 64) if count >= 1 << 63 else count


def _check(value: Any) -> bytes:
    """The HLL string at a key (Redis's isHLLObjectOrReply)."""
    if type(value) is not bytes:
        raise CommandError(WRONGTYPE)
    if not hll.is_hll(value):
        raise CommandError(HLL_NOT_VALID)
    return value


# The byte after a sparse string in Redis's memory (hll.sparse_set's
# ``tail``): 0 but after Redis updated an XZERO cut short at the end of a
# corrupt string, until the string is rewritten.  Kept here for the stored
# strings it is not 0 for (only such corrupt ones), at most TAILS_MAX.
TAILS_MAX = 1024
_tails: dict[int, tuple[bytes, int]] = {}


def _tail_of(value: bytes) -> int:
    entry = _tails.get(id(value))
    return entry[1] if entry is not None and entry[0] is value else 0


def _store(ctx: Ctx, key: bytes, value: bytes, tail: int = 0) -> None:
    """Put the rewritten string back (its TTL stays), a raw string."""
    mark_string_encoding(value, b"raw")
    ctx.db.set(key, value, keep_ttl=True)
    if tail:
        if len(_tails) >= TAILS_MAX:
            del _tails[next(iter(_tails))]
        _tails[id(value)] = (value, tail)


@command("pfadd", arity=-2, flags="write denyoom fast", keys=(1, 1, 1), group="hyperloglog",
         since="2.8.9", complexity="O(1) to add every element.",
         summary="Adds the specified elements to the specified HyperLogLog.",
         key_specs=[ks("RW insert", 1)])
def pfadd(ctx: Ctx, argv: list[bytes]) -> object:
    """PFADD key [element [element ...]]

    O(1) per element for a dense HLL after the hash (about 1 us), O(n) per
    element for a sparse one of n bytes (at most hll-sparse-max-bytes), and
    O(n) to copy the string once."""
    key = argv[1]
    value = ctx.db.get(key)
    if value is None:
        buf = bytearray(hll.EMPTY)
        updated = 1
        tail = [0]
    else:
        buf = bytearray(_check(value))
        mark_string_encoding(value, b"raw")
        updated = 0
        tail = [_tail_of(value)]
    max_bytes = ctx.config["hll-sparse-max-bytes"]
    add = hll.add
    for element in argv[2:]:
        changed = add(buf, element, max_bytes, tail)
        if changed < 0:
            if updated:  # what the elements before did stays, unpropagated (as in Redis)
                _store(ctx, key, bytes(buf), tail[0])
            raise CommandError(HLL_CORRUPT)
        updated += changed
    if not updated:
        return 0
    hll.invalidate(buf)
    _store(ctx, key, bytes(buf), tail[0])
    ctx.modified(key, updated)
    if value is None:
        ctx.ready(key)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_STRING, b"pfadd", key)
    return 1


@command("pfcount", arity=-2, flags="readonly", keys=(1, -1, 1),
         group="hyperloglog", since="2.8.9",
         complexity=("O(1) with a very small average constant time when called with a single "
                     "key. O(N) with N being the number of keys, and much bigger constant times, "
                     "when called with multiple keys."),
         summary=("Return the approximated cardinality of the set(s) observed by the "
                  "HyperLogLog at key(s)."),
         key_specs=[ks("RW access", 1, -1, notes="RW because it may change the internal representation "
                                                  "of the key, and propagate to replicas")])
def pfcount(ctx: Ctx, argv: list[bytes]) -> object:
    """PFCOUNT key [key ...]

    One key: O(1) with the cached count; else the count is computed
    (O(16384) in C for dense, O(n) for sparse), stored in the header and
    propagated.  Several keys: the union's count, nothing stored; O(16384)
    per key.  Like Redis, the table flags it "readonly" only, and the
    engine treats it as one that may replicate (CLIENT PAUSE WRITE holds it
    back; Redis's hidden ``may_replicate`` flag)."""
    if len(argv) > 2:
        registers = bytearray(hll.REGISTERS)
        for key in argv[1:]:
            value = lookup_read(ctx, key)
            if value is None:
                continue
            if not hll.merge_into(registers, _check(value), _tail_of(value)):
                raise CommandError(HLL_CORRUPT)
        return _signed(hll.estimate(hll.raw_histogram(registers)))
    key = argv[1]
    value = lookup_read(ctx, key)
    if value is None:
        return 0
    _check(value)
    mark_string_encoding(value, b"raw")
    cached = hll.cached_count(value)
    if cached is not None:
        return cached
    tail = _tail_of(value)
    card = hll.count(value, tail)
    if card is None:
        raise CommandError(HLL_CORRUPT)
    buf = bytearray(value)
    hll.set_cached_count(buf, card)
    _store(ctx, key, bytes(buf), tail)
    ctx.modified(key)
    ctx.propagate_argv()
    return _signed(card)


@command("pfmerge", arity=-2, flags="write denyoom", keys=(1, -1, 1), group="hyperloglog",
         since="2.8.9", complexity="O(N) to merge N HyperLogLogs, but with high constant times.",
         summary="Merge N different HyperLogLogs into a single one.",
         key_specs=[ks("RW access insert", 1), ks("RO access", 2, -1)])
def pfmerge(ctx: Ctx, argv: list[bytes]) -> object:
    """PFMERGE destkey [sourcekey [sourcekey ...]]

    O(16384) in C per key for the register maxima; writing them to a dense
    destination is O(16384) in C, to a sparse one O(n + registers set)
    (each set resumes where the last one was)."""
    registers = bytearray(hll.REGISTERS)
    use_dense = False
    for key in argv[1:]:  # the destination is merged too
        value = lookup_read(ctx, key)
        if value is None:
            continue
        if _check(value)[4] == hll.DENSE:
            use_dense = True
        if not hll.merge_into(registers, value, _tail_of(value)):
            raise CommandError(HLL_CORRUPT)
    dest = argv[1]
    current = ctx.db.get(dest)
    buf = bytearray(hll.EMPTY if current is None else current)
    tail = [0]
    if current is not None:
        mark_string_encoding(current, b"raw")
        tail[0] = _tail_of(current)
    if use_dense and buf[4] == hll.SPARSE:
        dense = hll.sparse_to_dense(buf, tail[0])
        if dense is None:
            raise CommandError(HLL_CORRUPT)
        buf = dense
    if buf[4] == hll.SPARSE:
        # Redis sets every non-zero maximum in turn; where the destination
        # holds it already the set changes nothing, so only the registers
        # that rise are visited (the destination was one of the merged keys).
        own = hll.sparse_registers(buf, tail[0]) if current is not None else None
        rising = registers if own is None else hll.raised(own, registers)
        max_bytes = ctx.config["hll-sparse-max-bytes"]
        cursor = [hll.HEADER, 0, -1]
        sparse_set = hll.sparse_set
        for match in _NONZERO.finditer(rising):
            j = match.start()
            sparse_set(buf, j, registers[j], max_bytes, cursor, tail)
            if buf[4] == hll.DENSE:  # promoted: every register ends at the maximum
                break
    if buf[4] == hll.DENSE:
        buf[hll.HEADER:] = hll.pack_registers(registers)
    hll.invalidate(buf)
    _store(ctx, dest, bytes(buf), tail[0] if buf[4] == hll.SPARSE else 0)
    ctx.modified(dest)
    if current is None:
        ctx.ready(dest)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_STRING, b"pfadd", dest)  # Redis names a merge "pfadd" too
    return OK


@command("pfdebug", arity=3, flags="write denyoom admin", keys=(2, 2, 1), group="hyperloglog",
         since="2.8.9", complexity="N/A",
         summary="Internal commands for debugging HyperLogLog values",
         key_specs=[ks("RW access", 2)])
def pfdebug(ctx: Ctx, argv: list[bytes]) -> object:
    """PFDEBUG subcommand key

    GETREG (the 16384 registers; a sparse HLL is made dense first), DECODE
    (a sparse HLL's opcodes as text), ENCODING (dense or sparse), TODENSE
    (1 if it made the HLL dense).  O(16384) or O(n)."""
    sub, key = argv[1], argv[2]
    value = ctx.db.get(key)
    if value is None:
        raise CommandError(PFDEBUG_NO_KEY)
    _check(value)
    mark_string_encoding(value, b"raw")
    name = sub.lower()
    if name in (b"getreg", b"todense"):
        converted = False
        if value[4] == hll.SPARSE:
            dense = hll.sparse_to_dense(value, _tail_of(value))
            if dense is None:
                raise CommandError(HLL_CORRUPT)
            value = bytes(dense)
            mark_string_encoding(value, b"raw")
            # Redis changes the string without signalling the key (WATCH
            # holds), and counts and propagates the change.
            ctx.db.data[key] = value
            ctx.changed()
            ctx.propagate_argv()
            converted = True
        if name == b"todense":
            return 1 if converted else 0
        return list(hll.dense_registers(value))
    if name == b"decode":
        if value[4] != hll.SPARSE:
            raise CommandError(PFDEBUG_NOT_SPARSE)
        return hll.decode_sparse(value, _tail_of(value))
    if name == b"encoding":
        return SimpleString(b"dense" if value[4] == hll.DENSE else b"sparse")
    raise pfdebug_unknown_subcommand(sub)


# PFSELFTEST's sizes: Redis checks 1000 rounds of register writes and
# counts up to 10,000,000 elements; interpreted Python takes about a second
# for 10 rounds and counts up to 100,000, which tests the same code paths.
SELFTEST_ROUNDS = 10
SELFTEST_MAX_ELEMENTS = 100_000


def selftest(max_bytes: int, rng: random.Random) -> bytes | None:
    """The failure PFSELFTEST reports, or None: registers written (packed)
    read back one by one; then elements ``j ^ seed`` (8 bytes,
    little-endian) added to a dense and a sparse HLL, which must stay
    sparse while small, agree, and be within six standard errors at
    1, 10, 100 ... elements.  O(SELFTEST_MAX_ELEMENTS)."""
    for _ in range(SELFTEST_ROUNDS):
        wanted = rng.randbytes(hll.REGISTERS).translate(bytes(b & 63 for b in range(256)))
        dense = hll.MAGIC + bytes(12) + hll.pack_registers(wanted)
        for i in range(hll.REGISTERS):
            got = hll.dense_get(dense, i)
            if got != wanted[i]:
                return PFSELFTEST_REGISTER % (i, wanted[i], got)
    dense_buf = bytearray(hll.DENSE_SIZE)
    dense_buf[:4] = hll.MAGIC
    sparse_buf = bytearray(hll.EMPTY)
    relerr = 1.04 / math.sqrt(hll.REGISTERS)
    checkpoint = 1
    seed = rng.getrandbits(64)
    for j in range(1, SELFTEST_MAX_ELEMENTS + 1):
        element = (j ^ seed).to_bytes(8, "little")
        index, count = hll.pattern(element)
        hll.dense_set(dense_buf, index, count)
        hll.add(sparse_buf, element, max_bytes)
        if j != checkpoint:
            continue
        if j < max_bytes // 2 and sparse_buf[4] != hll.SPARSE:
            return PFSELFTEST_NOT_SPARSE
        estimated = hll.count(dense_buf)
        if estimated != hll.count(sparse_buf):
            return PFSELFTEST_DISAGREE
        assert estimated is not None
        abserr = abs(checkpoint - estimated)
        maxerr = 1 if j == 10 else math.ceil(relerr * 6 * checkpoint)
        if abserr > maxerr:
            return PFSELFTEST_ERROR % (checkpoint, abserr)
        checkpoint *= 10
    return None


@command("pfselftest", arity=1, flags="admin", group="hyperloglog", since="2.8.9",
         complexity="N/A", summary="An internal command for testing HyperLogLog values")
def pfselftest(ctx: Ctx, argv: list[bytes]) -> object:
    """PFSELFTEST

    O(SELFTEST_MAX_ELEMENTS): about a second (see :func:`selftest`)."""
    failure = selftest(ctx.config["hll-sparse-max-bytes"], random.Random())
    if failure is not None:
        raise CommandError(failure)
    return OK
