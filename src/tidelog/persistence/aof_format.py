"""The AOF's file format: RESP commands, written and read back.

:func:`encode_command` writes one command as a RESP array of bulk strings;
:func:`iter_commands` reads them back with the offset after each, and tells
a command cut short at the end (:class:`Truncated`, a crash during a write)
from anything else malformed (:class:`Corrupt`, with the offset and why).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..resp.parser import ProtocolError, RequestParser

if TYPE_CHECKING:
    pass

log = logging.getLogger("tidelog")


class AofLoadError(Exception):
    """The AOF cannot be loaded; the message says which file, where, and what to do."""


def encode_command(argv: list[bytes]) -> bytes:
    """One command as a RESP array of bulk strings (the AOF's format)."""
    parts = [b"*%d\r\n" % len(argv)]
    for arg in argv:
        parts.append(b"$%d\r\n" % len(arg))
        parts.append(arg)
        parts.append(b"\r\n")
    return b"".join(parts)


class Truncated(Exception):
    """The data ends inside a command that started at ``offset``."""

    def __init__(self, offset: int) -> None:
        super().__init__(offset)
        self.offset = offset


class Corrupt(Exception):
    def __init__(self, offset: int, why: str) -> None:
        super().__init__(f"{why} at offset {offset}")
        self.offset = offset
        self.why = why


def _read_line(data: bytes, pos: int, start: int) -> tuple[bytes, int]:
    end = data.find(b"\r\n", pos)
    if end < 0:
        if data.find(b"\n", pos) >= 0:
            raise Corrupt(pos, "line not ended by CRLF")
        raise Truncated(start)
    return data[pos:end], end + 2


def _read_int(data: bytes, pos: int, start: int, prefix: int, what: str) -> tuple[int, int]:
    if pos >= len(data):
        raise Truncated(start)
    if data[pos] != prefix:
        raise Corrupt(pos, f"expected '{chr(prefix)}' ({what})")
    line, nxt = _read_line(data, pos + 1, start)
    if not line.isdigit() or len(line) > 19:
        raise Corrupt(pos, f"bad {what} {line[:20]!r}")
    return int(line), nxt


def iter_commands(data: bytes, pos: int = 0) -> Iterator[tuple[list[bytes], int, int]]:
    """``(argv, start, end)`` for each command of an AOF's bytes.

    ``#`` lines (Redis's annotations, e.g. ``#TS:``) are skipped.  Raises
    :class:`Truncated` when the data ends inside a command, :class:`Corrupt`
    when it is not RESP.  The loop is written out flat (no helper call per
    header line): loading a large AOF spends much of its time here."""
    size = len(data)
    find = data.find
    while pos < size:
        start = pos
        if data[pos] == 0x23:  # '#': an annotation line
            _, pos = _read_line(data, pos, start)
            continue
        nl = find(b"\r\n", pos)
        if data[pos] != 0x2A or nl < 0:
            argc, pos = _read_int(data, pos, start, 0x2A, "array length")  # raises
        else:
            line = data[pos + 1:nl]
            if not line.isdigit() or len(line) > 19:
                raise Corrupt(pos, f"bad array length {line[:20]!r}")
            argc, pos = int(line), nl + 2
        if argc < 1:
            raise Corrupt(start, "empty command")
        argv = []
        for _ in range(argc):
            nl = find(b"\r\n", pos)
            if pos >= size or data[pos] != 0x24 or nl < 0:
                length, pos = _read_int(data, pos, start, 0x24, "bulk length")  # raises
            else:
                line = data[pos + 1:nl]
                if not line.isdigit() or len(line) > 19:
                    raise Corrupt(pos, f"bad bulk length {line[:20]!r}")
                length, pos = int(line), nl + 2
            end = pos + length
            if end + 2 > size:
                raise Truncated(start)
            if data[end:end + 2] != b"\r\n":
                raise Corrupt(end, "bulk string not ended by CRLF")
            argv.append(data[pos:end])
            pos = end + 2
        yield argv, start, pos



FAST_CHUNK = 1 << 20  # bytes handed to the request parser at a time
_BULK_FRAMING = [len(str(n)) + 5 for n in range(4096)]  # len("$<n>\r\n" + "\r\n")


def iter_commands_fast(data: bytes, pos: int = 0) -> Iterator[tuple[list[bytes], int, int]]:
    """:func:`iter_commands`, the same items and errors, mostly decoded by
    the request parser kernel (``resp/parser.py``, compiled when built).

    The data goes to the parser a chunk at a time.  A chunk's commands are
    used only once they check out: each starts with ``*`` and ends with
    CRLF at the offsets their canonical encoding (``*<n>``, ``$<len>``
    without leading zeros) gives, and the bytes up to the last one's end
    parse again into exactly as many commands with nothing left over (any
    other encoding is longer, so the sizes would not add up).  Otherwise
    (an annotation line, another encoding, damage, the end of the data, a
    command longer than a chunk) :func:`iter_commands` walks that stretch,
    with its exact offsets and errors.
    """
    size = len(data)
    while pos < size:
        stop = min(pos + FAST_CHUNK, size)
        chunk = data[pos:stop]
        parser = RequestParser(max_query_buffer=len(chunk) + 1)
        parser.feed(chunk)
        items: list[tuple[list[bytes], int, int]] = []
        off = pos
        ok = True
        try:
            while True:
                argv = parser.next_command()
                if argv is None:
                    break
                if data[off] != 0x2A:
                    ok = False
                    break
                sizes = list(map(len, argv))
                try:  # $<len>\r\n...\r\n around each argument, from a table
                    framing = sum(map(_BULK_FRAMING.__getitem__, sizes))
                except IndexError:
                    framing = sum(len(str(n)) + 5 for n in sizes)
                end = off + 3 + len(str(len(argv))) + sum(sizes) + framing
                if data[end - 2:end] != b"\r\n":
                    ok = False
                    break
                items.append((argv, off, end))
                off = end
        except (ProtocolError, TypeError):  # TypeError: a null bulk, not in an AOF
            ok = False
        if ok and items and _whole(data[pos:off], len(items)):
            yield from items
            pos = off
            continue
        for item in iter_commands(data, pos):
            yield item
            pos = item[2]
            if pos >= stop:
                break
        else:
            return


def _whole(stretch: bytes, count: int) -> bool:
    """Does ``stretch`` parse into exactly ``count`` commands, with no byte left?"""
    parser = RequestParser(max_query_buffer=len(stretch) + 1)
    parser.feed(stretch)
    try:
        while count and parser.next_command() is not None:
            count -= 1
        return count == 0 and parser.next_command() is None and parser.buffered == 0
    except ProtocolError:
        return False
