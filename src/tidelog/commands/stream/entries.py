"""The stream replies: entries, XREAD's and XREADGROUP's per-key shape,
COUNT within MAXCOUNT, and the MAXSIZE byte budget (Redis 8.10)."""

from __future__ import annotations

from itertools import islice
from typing import Any

from ...ids import MIN_ID, StreamID
from ...resp.replies import Map
from ...types.stream import Stream
from ..contract import Ctx


def entry_reply(id: StreamID, fields: list[bytes]) -> list[Any]:
    """One entry: ``[id, [f, v, ...]]``."""
    return [bytes(id), fields]


def entries_reply(stream: Stream, start: StreamID, end: StreamID, count: int,
                  rev: bool = False) -> list[list[Any]]:
    """``[[id, [f, v, ...]], ...]``; count 0 means all.  Cost: O(log N + M)."""
    if not rev:  # oldest first: each node decoded by one kernel call
        return stream.read_from(start, count, end)[1]
    found = stream.range(start, end, rev)
    if count > 0:
        found = islice(found, count)
    return [[bytes(id), fields] for id, fields in found]


def streams_reply(ctx: Ctx, results: list[tuple[bytes, list[Any]]]) -> Any:
    """XREAD's and XREADGROUP's reply: RESP2 ``[[key, entries], ...]``, RESP3 a map."""
    if ctx.client.protocol >= 3:
        return Map(results)
    return [[key, entries] for key, entries in results]


def capped_count(count: int, maxcount: int, budget: int) -> int:
    """The entries one key may return: COUNT (per key; 0 = no limit) within
    what MAXCOUNT (the total, Redis 8.10; 0 = no limit) leaves, ``budget``."""
    if not maxcount:
        return count
    return min(count, budget) if count else budget


def last_valid_id(stream: Stream) -> StreamID:
    """The ID of the newest live entry; 0-0 for an empty stream."""
    last = stream.last_live_id()
    return last if last is not None else MIN_ID


def _bulk_size(value: bytes) -> int:
    return len(value) + len(str(len(value))) + 5  # $<len>\r\n<value>\r\n


class SizeBudget:
    """MAXSIZE on XREAD and XREADGROUP (Redis 8.10): a soft cap on the reply's
    bytes across every key.  Entries are taken while the budget is not yet
    passed, so the entry that passes it is still returned (and the first one
    always is); after that no more entries and no more keys.  Bytes are
    counted in RESP2's form: each served key's ``*2 $key *n`` and each entry's
    ``*2 $id *2k $f $v ...`` (the outer array's header is not counted).
    Cost: O(fields) per entry admitted."""

    __slots__ = ("left", "taken")

    def __init__(self, maxsize: int) -> None:
        self.left = maxsize
        self.taken = 0

    def spent(self) -> bool:
        """Whether the budget is passed (no further key is served)."""
        return self.left <= 0 and self.taken > 0

    def open_key(self, key: bytes) -> None:
        """Charge a served key's header (its entry count taken as one digit)."""
        self.left -= 8 + _bulk_size(key)

    def admit(self, id_bytes: bytes, fields: list[bytes]) -> bool:
        """Whether one more entry fits; charges it when it does."""
        if self.left <= 0 and self.taken > 0:
            return False
        size = 4 + _bulk_size(id_bytes) + len(str(len(fields))) + 3
        for value in fields:
            size += _bulk_size(value)
        self.left -= size
        self.taken += 1
        return True

    def fit(self, entries: list[list[Any]]) -> int:
        """How many of ``entries`` (``[id, fields, ...]`` replies, in order)
        fit, the first ones; charges them."""
        k = 0
        for entry in entries:
            if not self.admit(entry[0], entry[1]):
                break
            k += 1
        return k
