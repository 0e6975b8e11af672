"""Strings by part: APPEND, STRLEN, GETRANGE (and its old name SUBSTR),
SETRANGE, LCS.

APPEND and SETRANGE refuse to grow a string past ``proto-max-bulk-len``
(Redis's "string exceeds maximum allowed size"), except for the AOF being
replayed, which Redis obeys whatever it says.  Redis modifies the string in
place, which leaves it "raw" for OBJECT ENCODING; the string is replaced
here (``bytes`` are immutable), so the new value carries that mark
(:func:`.keys.mark_string_encoding`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...config import NOTIFY_STRING
from ...errors import (
    LCS_LEN_AND_IDX,
    LCS_NOT_STRINGS,
    LCS_TOO_BIG,
    OFFSET_OUT_OF_RANGE,
    STRING_TOO_LONG,
    SYNTAX,
    WRONGTYPE,
    CommandError,
)
from ...resp.replies import Map
from ..args import ArgReader, parse_int
from ..encoding import mark_string_encoding
from ..key_specs import ks
from ..lookup import lookup_read
from ..table import command

if TYPE_CHECKING:
    from ..contract import Ctx


def _string_at(ctx: Ctx, key: bytes, read: bool = False) -> bytes | None:
    value = lookup_read(ctx, key) if read else ctx.db.get(key)
    if value is None or type(value) is bytes:
        return value
    raise CommandError(WRONGTYPE)


def _check_length(ctx: Ctx, size: int, more: int) -> None:
    """Redis's checkStringLength: the result may not exceed proto-max-bulk-len."""
    if ctx.client.kind in ("aof", "master"):
        return
    if size + more > ctx.config["proto-max-bulk-len"]:
        raise CommandError(STRING_TOO_LONG)


def _store_modified(ctx: Ctx, key: bytes, value: bytes, created: bool) -> None:
    """Store a string changed in place (its TTL stays).  O(1)."""
    mark_string_encoding(value, b"raw")
    ctx.db.set(key, value, keep_ttl=True)
    ctx.modified(key)
    if created:
        ctx.ready(key)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_STRING, ctx.argv[0].lower(), key)  # append, setrange


@command("append", arity=3, flags="write denyoom fast", keys=(1, 1, 1), group="string",
         since="2.0.0",
         complexity=("O(1). The amortized time complexity is O(1) assuming the appended value "
                     "is small and the already present value is of any size, since the dynamic "
                     "string library used by Redis will double the free space available on every "
                     "reallocation."),
         summary="Append a value to a key",
         key_specs=[ks("RW insert", 1)])
def append(ctx: Ctx, argv: list[bytes]) -> object:
    """APPEND key value

    O(N) in the new length here (the string is copied)."""
    key, more = argv[1], argv[2]
    current = _string_at(ctx, key)
    if current is None:  # a new key, even for an empty value; encoded as SET would
        ctx.db.set(key, more)
        ctx.modified(key)
        ctx.ready(key)
        ctx.propagate_argv()
        ctx.notify(NOTIFY_STRING, b"append", key)
        return len(more)
    _check_length(ctx, len(current), len(more))
    value = current + more
    _store_modified(ctx, key, value, created=False)
    return len(value)


@command("strlen", arity=2, flags="readonly fast", keys=(1, 1, 1), group="string",
         since="2.2.0", complexity="O(1)", summary="Get the length of the value stored in a key",
         key_specs=[ks("RO", 1)])
def strlen(ctx: Ctx, argv: list[bytes]) -> object:
    """STRLEN key"""
    value = _string_at(ctx, argv[1], read=True)
    return 0 if value is None else len(value)


def _getrange(ctx: Ctx, argv: list[bytes]) -> object:
    """Redis 8's GETRANGE: indexes clamped, an inverted range is empty.

    Redis 7 answered the first byte when the end, counted from the end, fell
    before the start of the string (``GETRANGE k 0 -100``); Redis 8 answers
    an empty string (https://github.com/redis/redis/pull/12272)."""
    start = parse_int(argv[2])
    end = parse_int(argv[3])
    value = _string_at(ctx, argv[1], read=True)
    if value is None:
        return b""
    size = len(value)
    if start < 0 and end < 0 and start > end:
        return b""
    if start < 0:
        start = max(0, size + start)
    if end < 0:
        end += size
    if start >= size or end < start:
        return b""
    end = min(end, size - 1)
    return value[start:end + 1]


@command("getrange", arity=4, flags="readonly", keys=(1, 1, 1), group="string",
         since="2.4.0",
         complexity=("O(N) where N is the length of the returned string. The complexity is "
                     "ultimately determined by the returned length, but because creating a "
                     "substring from an existing string is very cheap, it can be considered O(1) "
                     "for small strings."),
         summary="Get a substring of the string stored at a key")
def getrange(ctx: Ctx, argv: list[bytes]) -> object:
    """GETRANGE key start end"""
    return _getrange(ctx, argv)


@command("substr", arity=4, flags="readonly", keys=(1, 1, 1), group="string",
         since="1.0.0",
         complexity=("O(N) where N is the length of the returned string. The complexity is "
                     "ultimately determined by the returned length, but because creating a "
                     "substring from an existing string is very cheap, it can be considered O(1) "
                     "for small strings."),
         summary="Get a substring of the string stored at a key")
def substr(ctx: Ctx, argv: list[bytes]) -> object:
    """SUBSTR key start end"""
    return _getrange(ctx, argv)


@command("setrange", arity=4, flags="write denyoom", keys=(1, 1, 1), group="string",
         since="2.2.0",
         complexity=("O(1), not counting the time taken to copy the new string in place. "
                     "Usually, this string is very small so the amortized complexity is O(1). "
                     "Otherwise, complexity is O(M) with M being the length of the value "
                     "argument."),
         summary="Overwrite part of a string at key starting at the specified offset",
         key_specs=[ks("RW update", 1)])
def setrange(ctx: Ctx, argv: list[bytes]) -> object:
    """SETRANGE key offset value

    O(N) in the new length here (the string is copied)."""
    key, patch = argv[1], argv[3]
    offset = parse_int(argv[2])
    if offset < 0:
        raise CommandError(OFFSET_OUT_OF_RANGE)
    current = _string_at(ctx, key)
    if current is None:
        if not patch:
            return 0  # nothing to write: no key is made
        _check_length(ctx, offset, len(patch))
        value = bytes(offset) + patch
    else:
        if not patch:
            return len(current)
        _check_length(ctx, offset, len(patch))
        if offset > len(current):
            value = current + bytes(offset - len(current)) + patch
        else:
            value = current[:offset] + patch + current[offset + len(patch):]
    _store_modified(ctx, key, value, created=current is None)
    return len(value)


# -- LCS ------------------------------------------------------------------------------
# The dynamic programme's table, L[i][j] = the length of the longest common
# subsequence of a[:i] and b[:j], is kept one row per int: bit j of row i is
# 0 when L[i][j+1] = L[i][j] + 1 (Hyyro's bit-parallel form of the rows), so
# a row costs a few big-int operations on len(b) bits.
def _match_masks(b: bytes) -> dict[int, int]:
    masks: dict[int, int] = {}
    for j, byte in enumerate(b):
        masks[byte] = masks.get(byte, 0) | (1 << j)
    return masks


def lcs_rows(a: bytes, b: bytes, keep: bool = True) -> tuple[int, list[int]]:
    """The LCS length, and (with keep) every row of the table in bit form
    (rows[i] for a[:i]).  O(len(a) * len(b) / 30) time (CPython's big-int
    digits), O(len(a) * len(b) / 8) bytes with keep, O(len(b)) without."""
    full = (1 << len(b)) - 1
    masks = _match_masks(b)
    row = full
    rows = [row] if keep else []
    for byte in a:
        match = row & masks.get(byte, 0)
        row = ((row + match) | (row - match)) & full
        if keep:
            rows.append(row)
    return len(b) - row.bit_count(), rows


def lcs_matches(a: bytes, b: bytes, rows: list[int]
                ) -> tuple[bytes, list[tuple[int, int, int, int]]]:
    """The common subsequence Redis reports, and its matching runs as
    ``(a_start, a_end, b_start, b_end)``, from the ends of the strings back.

    Walks the table back from the end: on equal bytes both move back (one
    run grows while the matches are adjacent); otherwise it steps back in
    ``a`` when that keeps the longer subsequence, else in ``b`` (the tie
    choice fixes which of several equal answers is given, as in Redis).
    Stepping back in ``b`` keeps the length exactly when bit j-1 of row i is
    set, so each step reads one bit.  O((len(a) + len(b)) * len(b) / 30)."""
    i, j = len(a), len(b)
    out = bytearray()
    runs: list[tuple[int, int, int, int]] = []
    run: list[int] | None = None          # [a_start, a_end, b_start, b_end]
    while i > 0 and j > 0:
        if a[i - 1] == b[j - 1]:
            out.append(a[i - 1])
            i -= 1
            j -= 1
            if run is None:
                run = [i, i, j, j]
            else:                          # adjacent to the run: extend it backwards
                run[0], run[2] = i, j
            if i == 0 or j == 0:
                runs.append((run[0], run[1], run[2], run[3]))
                run = None
        else:
            if (rows[i] >> (j - 1)) & 1:
                j -= 1
            else:
                i -= 1
            if run is not None:
                runs.append((run[0], run[1], run[2], run[3]))
                run = None
    out.reverse()
    return bytes(out), runs


@command("lcs", arity=-3, flags="readonly", keys=(1, 2, 1), group="string", since="7.0.0",
         complexity="O(N*M) where N and M are the lengths of s1 and s2, respectively",
         summary="Find longest common substring",
         key_specs=[ks("RO access", 1, 1)])
def lcs(ctx: Ctx, argv: list[bytes]) -> object:
    """LCS key1 key2 [LEN] [IDX] [MINMATCHLEN min-match-len] [WITHMATCHLEN]

    O(N*M/30) time and N*M/8 bytes (the table in bit form; LEN keeps one
    row).  As in Redis, N*M is bounded: 4 bytes a cell within proto-max-bulk-len."""
    a = lookup_read(ctx, argv[1])
    b = lookup_read(ctx, argv[2])
    if (a is not None and type(a) is not bytes) or (b is not None and type(b) is not bytes):
        raise CommandError(LCS_NOT_STRINGS)
    a = a or b""
    b = b or b""
    want_idx = want_len = with_len = False
    min_len = 0
    r = ArgReader(argv, start=3)
    while r.more():
        option = r.next_upper()
        if option == b"IDX":
            want_idx = True
        elif option == b"LEN":
            want_len = True
        elif option == b"WITHMATCHLEN":
            with_len = True
        elif option == b"MINMATCHLEN" and r.more():
            min_len = max(0, r.next_int())
        else:
            raise CommandError(SYNTAX)
    if want_idx and want_len:
        raise CommandError(LCS_LEN_AND_IDX)
    # Redis refuses when its table (4 bytes a cell) would pass proto-max-bulk-len.
    if (len(a) + 1) * (len(b) + 1) * 4 > ctx.config["proto-max-bulk-len"]:
        raise CommandError(LCS_TOO_BIG)
    length, rows = lcs_rows(a, b, keep=not want_len)
    if want_len:
        return length
    common, runs = lcs_matches(a, b, rows)
    if not want_idx:
        return common
    matches: list[list[object]] = []
    for a_start, a_end, b_start, b_end in runs:
        run_len = a_end - a_start + 1
        if min_len and run_len < min_len:
            continue
        match: list[object] = [[a_start, a_end], [b_start, b_end]]
        if with_len:
            match.append(run_len)
        matches.append(match)
    return Map([(b"matches", matches), (b"len", length)])
