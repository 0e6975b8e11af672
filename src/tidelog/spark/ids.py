"""Stream IDs on the client side: ``(ms, seq)`` pairs, their text form, and ranges.

The connector speaks to the server only through Redis commands, so it keeps its
own small ID helpers rather than importing the server's.  An ID is a tuple
``(ms, seq)`` of two unsigned 64-bit integers; tuples compare as stream IDs do.
Ranges are inclusive at both ends, as XRANGE's are.  Every function is O(1).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

U64_MAX = (1 << 64) - 1
MIN_ID = (0, 0)
MAX_ID = (U64_MAX, U64_MAX)

StreamId = tuple[int, int]
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def parse_id(text: str | bytes, *, missing_seq: int = 0) -> StreamId:
    """``"1700000000000-5"`` -> ``(1700000000000, 5)``; ``"1700000000000"`` takes ``missing_seq``.

    ``-`` and ``+`` are the smallest and largest IDs, as in XRANGE.
    Raises ValueError for anything else.
    """
    if isinstance(text, bytes):
        text = text.decode("ascii")
    text = text.strip()
    if text == "-":
        return MIN_ID
    if text == "+":
        return MAX_ID
    ms_text, sep, seq_text = text.partition("-")
    if not ms_text.isdigit() or (sep and not seq_text.isdigit()):
        raise ValueError(f"not a stream ID: {text!r}")
    ms, seq = int(ms_text), int(seq_text) if sep else missing_seq
    if ms > U64_MAX or seq > U64_MAX:
        raise ValueError(f"stream ID out of range: {text!r}")
    return ms, seq


def format_id(sid: StreamId) -> str:
    """``(1700000000000, 5)`` -> ``"1700000000000-5"``."""
    return f"{sid[0]}-{sid[1]}"


def next_id(sid: StreamId) -> StreamId:
    """The smallest ID greater than ``sid`` (``sid`` itself at the maximum)."""
    ms, seq = sid
    if seq < U64_MAX:
        return ms, seq + 1
    if ms < U64_MAX:
        return ms + 1, 0
    return sid


def prev_id(sid: StreamId) -> StreamId:
    """The largest ID smaller than ``sid`` (``sid`` itself at 0-0)."""
    ms, seq = sid
    if seq > 0:
        return ms, seq - 1
    if ms > 0:
        return ms - 1, U64_MAX
    return sid


def id_of_time(value: datetime | int | str) -> int:
    """A time as Unix milliseconds: a datetime (naive means UTC), an int, or text.

    Text is an integer number of milliseconds or an ISO 8601 time.
    """
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return (value - _EPOCH) // timedelta(milliseconds=1)   # floor, exact
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if text.lstrip("-").isdigit():
        return int(text)
    return id_of_time(datetime.fromisoformat(text.replace("Z", "+00:00")))


def split_ms(lo: StreamId, hi: StreamId, parts: int) -> list[tuple[StreamId, StreamId]]:
    """Split the inclusive range ``[lo, hi]`` into at most ``parts`` inclusive ranges
    with boundaries on whole milliseconds, in order, together covering it exactly.
    """
    if lo > hi:
        return []
    width = hi[0] - lo[0] + 1
    parts = max(1, min(parts, width))
    ranges = []
    start = lo
    for i in range(1, parts):
        cut_ms = lo[0] + (width * i) // parts     # first ms of the next range
        if cut_ms <= start[0]:
            continue
        ranges.append((start, (cut_ms - 1, U64_MAX)))
        start = (cut_ms, 0)
    ranges.append((start, hi))
    return ranges
