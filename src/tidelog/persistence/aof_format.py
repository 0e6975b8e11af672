"""The AOF's file format: RESP commands, written and read back.

:func:`encode_command` writes one command as a RESP array of bulk strings;
:func:`iter_commands` reads them back with the offset after each, and tells
a command cut short at the end (:class:`Truncated`, a crash during a write)
from anything else malformed (:class:`Corrupt`, with the offset and why).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from itertools import accumulate, chain, repeat
from operator import add, sub
from typing import TYPE_CHECKING

from ..commands.effects import encode_argv
from ..resp.encoder import encode_into
from ..resp.parser import ProtocolError, RequestParser

if TYPE_CHECKING:
    pass

log = logging.getLogger("tidelog")


class AofLoadError(Exception):
    """The AOF cannot be loaded; the message says which file, where, and what to do."""


# One command as a RESP array of bulk strings (the AOF's format): the encoder
# of effects, which the AOF and the replication stream share.
encode_command = encode_argv


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
_FRAMED = [n + len(str(n)) + 5 for n in range(4096)]  # len("$<n>\r\n" + n bytes + "\r\n")
_HEADER = [len(str(n)) + 3 for n in range(4096)]  # len("*<n>\r\n")


def iter_commands_fast(data: bytes, pos: int = 0) -> Iterator[tuple[list[bytes], int, int]]:
    """:func:`iter_commands`, the same items and errors, mostly decoded by
    the request parser kernel (``resp/parser.py``, compiled when built):
    the commands of :func:`iter_stretches`, one by one."""
    for stretch in iter_stretches(data, pos):
        offsets = stretch.offsets()
        yield from zip(stretch.argvs, offsets, offsets[1:])


class Stretch:
    """The commands of one stretch of an AOF, and their offsets on demand.

    ``argvs`` holds the commands in file order; :meth:`start` gives the
    offset where command ``i`` starts.  The offsets of a checked stretch
    are worked out from the commands' sizes only when first asked for (a
    replay of plain XADDs never asks)."""

    __slots__ = ("argvs", "pos", "_offsets")

    def __init__(self, argvs: list[list[bytes]], pos: int, offsets: list[int] | None = None):
        self.argvs = argvs
        self.pos = pos  # where the first command starts
        self._offsets = offsets  # each command's start, then where the last one ends

    def start(self, i: int) -> int:
        return self.offsets()[i]

    def offsets(self) -> list[int]:
        """Where each command starts, then where the last one ends (the
        sizes of their canonical encodings, which the stretch was checked to
        be made of)."""
        if self._offsets is None:
            argvs = self.argvs
            argcs = list(map(len, argvs))
            try:
                framed = list(map(_FRAMED.__getitem__, map(len, chain.from_iterable(argvs))))
                heads = list(map(_HEADER.__getitem__, argcs))
            except IndexError:  # an argument of 4096 bytes or more, or as many arguments
                framed = [n + len(str(n)) + 5 for n in map(len, chain.from_iterable(argvs))]
                heads = [len(str(n)) + 3 for n in argcs]
            args_end = list(accumulate(framed))  # the arguments' bytes so far
            last_arg = map(sub, accumulate(argcs), repeat(1))  # each command's last argument
            heads[0] += self.pos
            offsets = [self.pos]
            offsets += map(add, accumulate(heads),  # pos + the headers so far ...
                           map(args_end.__getitem__, last_arg))  # ... + the arguments so far
            self._offsets = offsets
        return self._offsets


def iter_stretches(data: bytes, pos: int = 0) -> Iterator[Stretch]:
    """The commands of :func:`iter_commands`, the same commands, offsets and
    errors, a :class:`Stretch` at a time.

    The data goes to the request parser a stretch at a time: about
    ``FAST_CHUNK`` bytes, cut where a command seems to start (after the last
    CRLF ``*`` in the chunk).  A stretch's commands are used only when the
    stretch is, byte for byte, their canonical encoding (``*<n>``, then
    ``$<len>`` and the bytes of each argument, lengths without leading
    zeros, which the reply encoder kernel writes in one call): nothing
    skipped, nothing left over, no other spelling.  Otherwise (an
    annotation line, another encoding, damage, a cut inside a command, a
    torn end, a command longer than a chunk) :func:`iter_commands` walks
    that chunk, one command to a stretch, with its exact offsets and
    errors.
    """
    size = len(data)
    while pos < size:
        stop = min(pos + FAST_CHUNK, size)
        cut = stop if stop == size else data.rfind(b"\r\n*", pos, stop) + 2
        argvs = _checked_stretch(data, pos, cut) if cut > pos else None
        if argvs is not None:
            yield Stretch(argvs, pos)
            pos = cut
            continue
        for argv, start, end in iter_commands(data, pos):
            yield Stretch([argv], start, [start, end])
            pos = end
            if pos >= stop:
                break
        else:
            return


def _checked_stretch(data: bytes, pos: int, cut: int) -> list[list[bytes]] | None:
    """The commands of ``data[pos:cut]``, or None when the stretch is not
    exactly their canonical encoding (see :func:`iter_stretches`)."""
    stretch = data[pos:cut]
    parser = RequestParser(max_query_buffer=len(stretch) + 1)
    parser.feed(stretch)
    try:
        argvs = list(iter(parser.next_command, None))
    except (ProtocolError, TypeError):  # TypeError: a null bulk, not in an AOF
        return None
    if not argvs:
        return None
    encoded = bytearray()
    encode_into(encoded, argvs, 2)  # *<count>, then each command as an array of bulks
    if encoded[len(b"*%d\r\n" % len(argvs)):] != stretch:
        return None
    return argvs
