"""The array type (Redis 8.8): a sparse map of index -> string value.

Indexes run from 0 to 2**64 - 2 (2**64 - 1 is reserved: the length, the
highest index plus one, must fit in 64 bits).  Holes cost nothing.  Besides
the values, an array keeps an *insert cursor* for ARINSERT and ARRING: the
last index they wrote (``insert_idx``), or ``None`` before the first write
or after ``ARSEEK key 0``.

Representation::

    values   {idx: bytes}            O(1) get / set / delete
    index    SortedList[idx]         ordered scans, first / last index
    slices   {idx >> bits: count}    populated slices (ARINFO's ``slices``)

The slice map mirrors how Redis cuts the index space into slices of
``array-slice-size`` (4096) positions; it only feeds ARINFO, which also
reports the size of Redis's slice directory.  That directory is modelled by
two numbers, replayed under Redis's documented growth rules: a flat table
of ``dir_alloc`` slice pointers (a power of two) while every slice id is
below 2048, then a "super-directory" of 2048-slice blocks (``sdir_cap``
entries, starting at 4 and doubling).  Nothing else depends on them.

Costs: get / set / delete O(log N) (the sorted index; the dict alone is
O(1)); range scans O(log N + K) for K populated positions visited; length
and count O(1).

:meth:`_check` asserts the invariants (the tests call it after every
mutation): the index holds exactly the dict's keys, every index is in range,
the slice counts add up, the cursor is in range.
"""

from __future__ import annotations

from collections.abc import Iterator

from sortedcontainers import SortedList

# The largest usable index (2**64 - 2) and the reserved one.
INDEX_MAX = (1 << 64) - 2
_U64_MAX = (1 << 64) - 1
SUPER_BLOCK_SLOTS = 2048  # slices per super-directory block
DEFAULT_SLICE_SIZE = 4096


DENSE = 0
SPARSE = 1
MIN_WINDOW = 8          # a dense slice's first window
_SLICE_HEADER = 32      # sizeof(arSlice) on 64-bit builds


def _next_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def _sparse_bytes(cap: int) -> int:
    offsets = 2 * cap
    return _SLICE_HEADER + offsets + (-offsets % 8) + 8 * cap


def _dense_new(rel: int, size: int) -> list[int]:
    offset = rel if rel + MIN_WINDOW <= size else size - MIN_WINDOW
    return [DENSE, offset, MIN_WINDOW]


def _dense_grow(state: list[int], rel: int, size: int) -> None:
    """Widen a dense slice's window to hold offset rel: doubling to the
    right, or to the next power of two on the left, as Redis does."""
    _, offset, window = state
    if rel >= offset + window:
        while rel >= offset + window and window < size:
            window <<= 1
        if window >= size:
            window, offset = size, 0
        elif offset + window > size:
            offset = size - window
    elif rel < offset:
        end = offset + window
        window = min(max(_next_pow2(end - rel), MIN_WINDOW), size)
        offset = max(end - window, 0)
        if window == size:
            offset = 0
    else:
        return
    state[1], state[2] = offset, window


class Array:
    """A sparse array.  All costs are O(1) unless stated."""

    TYPE_NAME = b"array"  # what TYPE says

    __slots__ = ("values", "index", "insert_idx", "slice_size", "_bits", "slices",
                 "dir_alloc", "superdir", "sdir_cap", "blocks", "layout", "kmax", "kmin")

    def __init__(self, slice_size: int = DEFAULT_SLICE_SIZE, kmax: int = 10,
                 kmin: int = 5) -> None:
        self.values: dict[int, bytes] = {}
        self.index = SortedList()
        self.insert_idx: int | None = None
        self.slice_size = slice_size
        self._bits = slice_size.bit_length() - 1
        self.slices: dict[int, int] = {}   # slice id -> populated positions
        # Redis's slice directory, for ARINFO (see the module's text).
        self.dir_alloc = 0
        self.superdir = False
        self.sdir_cap = 0
        self.blocks: dict[int, int] = {}   # super-directory block -> populated slices
        # Each slice's encoding in Redis (ARINFO FULL): [DENSE, offset, window]
        # or [SPARSE, capacity], under array-sparse-kmax / -kmin.
        self.layout: dict[int, list[int]] = {}
        self.kmax = kmax
        self.kmin = kmin

    # -- queries ---------------------------------------------------------------
    def __len__(self) -> int:
        """The number of populated positions (ARCOUNT)."""
        return len(self.values)

    def __bool__(self) -> bool:
        return bool(self.values)

    @property
    def length(self) -> int:
        """The highest populated index plus one, 0 when empty (ARLEN)."""
        return self.index[-1] + 1 if self.values else 0

    def get(self, idx: int) -> bytes | None:
        return self.values.get(idx)

    def scan(self, start: int, end: int) -> Iterator[tuple[int, bytes]]:
        """The populated ``(index, value)`` pairs between start and end
        inclusive, descending when start > end.  A lazy iterator: the array
        must not change while it is used.  O(log N) to start, O(1) a pair."""
        values = self.values
        if start <= end:
            for idx in self.index.irange(start, end):
                yield idx, values[idx]
        else:
            for idx in self.index.irange(end, start, reverse=True):
                yield idx, values[idx]

    def items(self) -> Iterator[tuple[int, bytes]]:
        """Every populated pair in index order.  O(N)."""
        values = self.values
        for idx in self.index:
            yield idx, values[idx]

    def object_encoding(self) -> bytes:
        """OBJECT ENCODING: Redis has one encoding for arrays."""
        return b"sliced-array"

    def memory_usage(self) -> int:
        """An estimate of what Redis would use (bytes): its 80-byte header,
        the slice directory, per slice a header and a pointer-sized word a
        value, and the heap strings of values too long to sit in that word.
        O(N)."""
        size = 80 + 8 * self.directory_size + 2048 * 8 * self.super_dir_entries
        size += 32 * len(self.slices) + 10 * len(self.values)
        for value in self.values.values():
            if len(value) > 7 and value_tag(value)[0] == TAG_STRING:
                size += (len(value) + (2 if len(value) <= 32767 else 8) + 7) & ~7
        return size

    # -- mutations -------------------------------------------------------------
    def set(self, idx: int, value: bytes) -> bool:
        """Store value at idx (0 <= idx <= INDEX_MAX); True if the position
        was empty.  O(log N)."""
        values = self.values
        if idx in values:
            values[idx] = value
            return False
        sid = idx >> self._bits
        self._grow_directory(sid)
        self._layout_insert(sid, idx & (self.slice_size - 1))
        values[idx] = value
        self.index.add(idx)
        slices = self.slices
        n = slices.get(sid, 0)
        slices[sid] = n + 1
        if not n and self.superdir:
            block = sid // SUPER_BLOCK_SLOTS
            have = self.blocks.get(block, 0)
            if not have and len(self.blocks) >= self.sdir_cap:
                self.sdir_cap = self.sdir_cap * 2 if self.sdir_cap else 4
            self.blocks[block] = have + 1
        return True

    def reserve(self, lo: int, hi: int) -> None:
        """Before a bulk write of [lo, hi] (ARSET, ARINSERT of several values):
        Redis sizes its directory for the highest slice first."""
        self._grow_directory(hi >> self._bits)
        if not self.kmax:
            return
        size, bits = self.slice_size, self._bits
        for sid in range(lo >> bits, (hi >> bits) + 1):
            first = max(lo, sid << bits)
            last = min(hi, ((sid + 1) << bits) - 1)
            span = last - first + 1
            state = self.layout.get(sid)
            if state is None:
                if span > self.kmax:
                    self.layout[sid] = _dense_new(first & (size - 1), size)
                continue
            if state[0] == DENSE:
                continue
            if span > self.kmax:
                self._promote(sid)
                continue
            existing = sum(1 for _ in self.index.irange(first, last))
            if self.slices.get(sid, 0) + span - existing > self.kmax:
                self._promote(sid)

    def delete(self, idx: int) -> bool:
        """Remove idx; True if it was populated.  O(log N)."""
        if self.values.pop(idx, None) is None:
            return False
        self.index.remove(idx)
        sid = idx >> self._bits
        if self._slice_lost(sid):
            self._maybe_shrink()
        else:
            self._maybe_demote(sid)
        return True

    def delete_range(self, lo: int, hi: int) -> int:
        """Remove every populated index in [lo, hi]; the number removed.
        O(log N + K) for K removed."""
        index = self.index
        doomed = list(index.irange(lo, hi))
        if not doomed:
            self._maybe_shrink()
            return 0
        values = self.values
        if len(doomed) == len(index):
            index.clear()
        else:
            start = index.bisect_left(doomed[0])
            del index[start:start + len(doomed)]
        touched = set()
        for idx in doomed:
            del values[idx]
            sid = idx >> self._bits
            if not self._slice_lost(sid):
                touched.add(sid)
        for sid in touched:
            if sid in self.slices:
                self._maybe_demote(sid)
        self._maybe_shrink()
        return len(doomed)

    def copy(self) -> Array:
        """An independent copy (COPY), directory shape included.  O(N)."""
        dup = Array(self.slice_size, self.kmax, self.kmin)
        dup.layout = {sid: list(state) for sid, state in self.layout.items()}
        dup.values = dict(self.values)
        dup.index = SortedList(self.index)
        dup.insert_idx = self.insert_idx
        dup.slices = dict(self.slices)
        dup.dir_alloc = self.dir_alloc
        dup.superdir = self.superdir
        dup.sdir_cap = self.sdir_cap
        dup.blocks = dict(self.blocks)
        return dup

    def adopt(self, other: Array) -> None:
        """Take other's contents (ARRING's rebuild: the key keeps its
        value object, its TTL and its watchers).  O(1)."""
        for name in self.__slots__:
            setattr(self, name, getattr(other, name))

    # -- Redis's slice directory (ARINFO) ------------------------------------------
    def _grow_directory(self, sid: int) -> None:
        if not self.superdir and sid >= SUPER_BLOCK_SLOTS:
            self.superdir = True
            self.sdir_cap = 4
            self.blocks = {0: len(self.slices)} if self.slices else {}
            self.dir_alloc = 0
        if self.superdir or sid < self.dir_alloc:
            return
        alloc = self.dir_alloc or 1
        while alloc <= sid:
            alloc <<= 1
        self.dir_alloc = alloc

    def _slice_lost(self, sid: int) -> bool:
        """One position of slice sid emptied; True if the slice went away."""
        slices = self.slices
        n = slices[sid] - 1
        if n:
            slices[sid] = n
            return False
        del slices[sid]
        self.layout.pop(sid, None)
        if self.superdir:
            block = sid // SUPER_BLOCK_SLOTS
            left = self.blocks[block] - 1
            if left:
                self.blocks[block] = left
            else:
                del self.blocks[block]
        return True

    def _maybe_shrink(self) -> None:
        """The flat directory halves (to the least power of two above the
        highest populated slice) once that slice is below 90% of it."""
        if self.superdir or not self.values:
            return
        highest = self.index[-1] >> self._bits
        if highest >= self.dir_alloc * 9 // 10:
            return
        alloc = 1
        while alloc <= highest:
            alloc <<= 1
        if alloc < self.dir_alloc:
            self.dir_alloc = alloc

    # -- Redis's slice encodings (ARINFO FULL) -----------------------------------
    def _layout_insert(self, sid: int, rel: int) -> None:
        """A new position at offset rel of slice sid (not yet counted):
        create, grow or promote the slice as Redis's arSet does."""
        size = self.slice_size
        state = self.layout.get(sid)
        if state is None:
            state = [SPARSE, min(self.kmax, 4)] if self.kmax else _dense_new(rel, size)
            self.layout[sid] = state
        if state[0] == SPARSE:
            count = self.slices.get(sid, 0)
            if count >= self.kmax:
                state = self._promote(sid)
            else:
                if count >= state[1]:
                    state[1] = min(state[1] * 2, self.kmax)
                return
        _dense_grow(state, rel, size)

    def _promote(self, sid: int) -> list[int]:
        size = self.slice_size
        if not self.slices.get(sid):
            state = _dense_new(0, size)
        else:
            base = sid << self._bits
            offsets = list(self.index.irange(base, base + size - 1))
            low, high = offsets[0] - base, offsets[-1] - base
            window = max(_next_pow2(high - low + 1), MIN_WINDOW)
            offset = low
            if window >= size:
                window, offset = size, 0
            elif offset + window > size:
                offset = size - window
            state = [DENSE, offset, window]
        self.layout[sid] = state
        return state

    def _maybe_demote(self, sid: int) -> None:
        """After a removal from a slice still populated: a dense slice with
        few values left goes back to sparse when that saves memory."""
        state = self.layout[sid]
        count = self.slices[sid]
        kmin = self.kmin
        if state[0] != DENSE or not self.kmax or count > kmin or count > self.kmax:
            return
        window = state[2]
        if window == MIN_WINDOW or window < 4 * kmin:
            return
        if _SLICE_HEADER + 8 * window < _sparse_bytes(kmin) * 5 // 4:
            return
        self.layout[sid] = [SPARSE, kmin]

    def slice_stats(self) -> tuple[int, int, int, int, int]:
        """(dense slices, sparse slices, dense windows' total, values in
        dense slices, sparse capacities' total).  O(S)."""
        dense = sparse = windows = dense_count = caps = 0
        for sid, state in self.layout.items():
            if state[0] == DENSE:
                dense += 1
                windows += state[2]
                dense_count += self.slices[sid]
            else:
                sparse += 1
                caps += state[1]
        return dense, sparse, windows, dense_count, caps

    @property
    def directory_size(self) -> int:
        """ARINFO's ``directory-size``: the flat table's length, or the
        super-directory's capacity."""
        return self.sdir_cap if self.superdir else self.dir_alloc

    @property
    def super_dir_entries(self) -> int:
        return len(self.blocks) if self.superdir else 0

    # -- checks ------------------------------------------------------------------
    def _check(self) -> None:
        """Assert every invariant (tests call this after each mutation)."""
        values, index = self.values, self.index
        assert len(index) == len(values)
        assert list(index) == sorted(values)
        assert all(type(v) is bytes for v in values.values())
        if index:
            assert 0 <= index[0] and index[-1] <= INDEX_MAX
        counts: dict[int, int] = {}
        for idx in index:
            counts[idx >> self._bits] = counts.get(idx >> self._bits, 0) + 1
        assert counts == self.slices
        if self.superdir:
            blocks: dict[int, int] = {}
            for sid in self.slices:
                blocks[sid // SUPER_BLOCK_SLOTS] = blocks.get(sid // SUPER_BLOCK_SLOTS, 0) + 1
            assert blocks == self.blocks
            assert self.sdir_cap >= len(self.blocks)
        elif self.slices:
            assert max(self.slices) < self.dir_alloc
        assert self.insert_idx is None or 0 <= self.insert_idx <= INDEX_MAX
        assert set(self.layout) == set(self.slices)
        for sid, state in self.layout.items():
            base = sid << self._bits
            offsets = [i - base for i in index.irange(base, base + self.slice_size - 1)]
            if state[0] == DENSE:
                assert state[1] <= offsets[0] and offsets[-1] < state[1] + state[2]
                assert state[1] + state[2] <= self.slice_size
            else:
                assert len(offsets) <= state[1] <= max(self.kmax, self.kmin)


# -- how Redis stores a value (its RDB tags) ---------------------------------------
# Redis keeps each value in one tagged machine word when it can: an integer
# of at most 62 bits, a double whose two lowest bits are zero and that
# prints back as the very same bytes, a string of at most 7 bytes; anything
# else is a heap string.  Replies never show the difference (every form
# prints back byte for byte), but the RDB encoding does.
TAG_STRING = 0
TAG_INT = 1
TAG_FLOAT = 2
TAG_SMALL = 3
_INT62_MIN = -(1 << 61)
_INT62_MAX = (1 << 61) - 1


def canonical_int(s: bytes) -> int | None:
    """The value of a canonical signed 64-bit decimal (no sign on 0, no
    leading zeros, no spaces), else None."""
    n = len(s)
    if not 0 < n <= 20:
        return None
    digits = s[1:] if s[0] == 45 else s  # '-'
    if not digits or not digits.isdigit() or not digits.isascii():
        return None
    if digits[0] == 48 and (len(digits) > 1 or s[0] == 45):  # '0'
        return None
    value = int(s)
    if not -(1 << 63) <= value < 1 << 63:
        return None
    return value


def format_double(d: float) -> bytes:
    """A double as Redis's d2string prints it: an integral value within
    +-2**62 as an integer; otherwise the shortest digits that read back the
    same, laid out as its fpconv printer does (plain when the exponent is
    small, else ``d.ddde+XX``)."""
    if d == 0:
        return b"-0" if str(d)[0] == "-" else b"0"
    if d == int(d) and abs(d) <= (1 << 62):
        return b"%d" % int(d)
    text = repr(d)
    sign = "-" if text[0] == "-" else ""
    text = text.lstrip("-")
    mantissa, _, exp_text = text.partition("e")
    whole, _, frac = mantissa.partition(".")
    frac = "" if frac == "0" else frac
    digits = (whole + frac).lstrip("0") or "0"
    # value = digits * 10**k
    k = (int(exp_text) if exp_text else 0) - len(frac)
    if not exp_text and whole == "0":
        k = -len(frac)
    digits = digits.rstrip("0") if digits != "0" else digits
    k += len((whole + frac).lstrip("0")) - len(digits)
    n = len(digits)
    exp = abs(k + n - 1)
    if k >= 0 and exp < n + 7:
        return (sign + digits + "0" * k).encode()
    if k < 0 and (k > -7 or exp < 4):
        point = n + k
        if point > 0:
            return (sign + digits[:point] + "." + digits[point:]).encode()
        return (sign + "0." + "0" * -point + digits).encode()
    e = k + n - 1
    body = digits[0] + ("." + digits[1:] if n > 1 else "")
    return f"{sign}{body}e{'-' if e < 0 else '+'}{abs(e)}".encode()


def value_tag(value: bytes) -> tuple[int, int | float | None]:
    """The RDB tag Redis gives value, with the int or double it carries
    (None for the string tags)."""
    number = canonical_int(value)
    if number is not None and _INT62_MIN <= number <= _INT62_MAX:
        return TAG_INT, number
    d = _inline_double(value)
    if d is not None:
        return TAG_FLOAT, d
    return (TAG_SMALL if len(value) <= 7 else TAG_STRING), None


def _inline_double(s: bytes) -> float | None:
    """The double of s if Redis inlines it: digits with one '.', an
    optional leading '-', and the double (low two bits cleared) printing
    back as s, or as s without a trailing ``.0``."""
    body = s[1:] if s[:1] == b"-" else s
    if not body or body.count(b".") != 1 or not body.replace(b".", b"").isdigit() \
            or not body.isascii():
        return None
    import math
    import struct
    try:
        d = float(s)
    except ValueError:
        return None
    if math.isinf(d) or math.isnan(d):
        return None
    bits = struct.unpack("<Q", struct.pack("<d", d))[0] & ~3
    truncated = struct.unpack("<d", struct.pack("<Q", bits))[0]
    text = format_double(truncated)
    if text == s or text + b".0" == s:
        return truncated
    return None


def float_text(d: float) -> bytes:
    """How Redis prints an inlined double back: d2string, plus ``.0`` when
    that looks like an integer."""
    text = format_double(d)
    if b"." not in text and b"e" not in text and b"inf" not in text and b"nan" not in text:
        text += b".0"
    return text
