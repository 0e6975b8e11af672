"""The replication backlog: the newest bytes of the replication stream.

Offsets count every byte a primary ever fed to its replicas (SELECTs, PINGs
and GETACKs included).  The backlog holds the last ``histlen`` of them, at
most ``size``, in a ring; ``offset`` is the offset of the last byte fed
(INFO's ``master_repl_offset``) and ``first_byte_offset`` that of the oldest
held (``repl_backlog_first_byte_offset``).  A replica that asks to continue
from offset ``o`` (the next byte it needs) can be served iff
``first_byte_offset <= o <= offset + 1``.
"""

from __future__ import annotations


class Backlog:
    """A ring of ``size`` bytes after the stream offset ``offset``."""

    __slots__ = ("size", "offset", "histlen", "_ring", "_end")

    def __init__(self, size: int, offset: int = 0) -> None:
        if size < 1:
            raise ValueError("backlog size must be positive")
        self.size = size
        self.offset = offset      # offset of the last byte fed
        self.histlen = 0          # bytes held
        self._ring = bytearray(size)
        self._end = 0             # ring index where the next byte goes

    @property
    def first_byte_offset(self) -> int:
        return self.offset - self.histlen + 1

    def append(self, data: bytes | bytearray) -> None:
        """Feed bytes; the oldest fall out once ``size`` are held.
        Cost: O(min(len(data), size))."""
        n = len(data)
        self.offset += n
        size = self.size
        if n >= size:
            self._ring[:] = data[n - size:]
            self._end = 0
            self.histlen = size
            return
        end = self._end
        first = min(n, size - end)
        self._ring[end:end + first] = data[:first]
        if first < n:
            self._ring[:n - first] = data[first:]
        self._end = (end + n) % size
        self.histlen = min(size, self.histlen + n)

    def can_serve(self, start: int) -> bool:
        """Whether the bytes from offset ``start`` to the end are all held."""
        return self.first_byte_offset <= start <= self.offset + 1

    def read_from(self, start: int) -> bytes:
        """The bytes from offset ``start`` to the end (``can_serve(start)``
        must hold).  Cost: O(bytes returned)."""
        if not self.can_serve(start):
            raise ValueError(f"offset {start} is not in the backlog")
        count = self.offset + 1 - start
        begin = (self._end - count) % self.size
        if begin + count <= self.size:
            return bytes(self._ring[begin:begin + count])
        return bytes(self._ring[begin:]) + bytes(self._ring[:self._end])

    def resize(self, size: int) -> None:
        """CONFIG SET repl-backlog-size: keep the newest bytes that fit.
        Cost: O(size)."""
        if size < 1:
            raise ValueError("backlog size must be positive")
        keep = self.read_from(self.first_byte_offset)[-size:] if self.histlen else b""
        offset = self.offset
        self.size = size
        self._ring = bytearray(size)
        self._end = 0
        self.histlen = 0
        self.offset = offset - len(keep)
        self.append(keep)
