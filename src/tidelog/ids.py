"""Stream entry IDs: ``<ms>-<seq>``, two unsigned 64-bit integers.

A :class:`StreamID` is a NamedTuple, so IDs compare, sort and hash as plain
tuples.  Parsing follows Redis's rules exactly, including its number syntax:
each part is read like C's ``strtoull`` (optional leading blanks and sign, the
whole string consumed, no overflow) after a first attempt as a canonical
signed integer, where a negative value is rejected.

Parsing raises :class:`InvalidStreamID`; the command layer turns that into
Redis's error text.  Nothing here knows about replies or clients.
"""

from __future__ import annotations

from typing import NamedTuple

try:
    import cython
except ImportError:  # the pure twin, without Cython installed
    from tidelog.kernels import PURE_CYTHON as cython

UINT64_MAX = (1 << 64) - 1
INT64_MAX = (1 << 63) - 1
_MAX_ID_TEXT = 127  # Redis refuses ID strings longer than this
_BLANKS = b" \t\n\v\f\r"


class InvalidStreamID(ValueError):
    """The text is not a valid stream ID for this use."""


class StreamID(NamedTuple):
    ms: int
    seq: int

    def __bytes__(self) -> bytes:
        # The pair is the tuple itself.  (Formatting in C gains nothing here:
        # the call of bytes() costs more than the formatting.)
        return b"%d-%d" % self

    def __str__(self) -> str:
        return f"{self.ms}-{self.seq}"

    def incr(self) -> StreamID:
        """The next ID; raises OverflowError past the maximum ID."""
        ms, seq = self
        if seq < UINT64_MAX:
            return _new_id(StreamID, (ms, seq + 1))
        if ms < UINT64_MAX:
            return _new_id(StreamID, (ms + 1, 0))
        raise OverflowError("stream ID overflow")

    def decr(self) -> StreamID:
        """The previous ID; raises OverflowError below 0-0."""
        ms, seq = self
        if seq > 0:
            return _new_id(StreamID, (ms, seq - 1))
        if ms > 0:
            return _new_id(StreamID, (ms - 1, UINT64_MAX))
        raise OverflowError("stream ID underflow")


MIN_ID = StreamID(0, 0)
MAX_ID = StreamID(UINT64_MAX, UINT64_MAX)
_new_id = tuple.__new__  # StreamID(ms, seq) without the NamedTuple __new__ call


@cython.cfunc
def _plain_id(text: bytes, missing_seq: object) -> object:
    """``<ms>`` or ``<ms>-<seq>`` of ASCII digits only, each part within
    uint64, as a StreamID; None for anything else (the general rules then
    decide, giving the same answer for these).  Digits alone are what
    ``string2ull`` accepts either way (``strtoull`` takes leading zeros)."""
    n: cython.Py_ssize_t = len(text)
    i: cython.Py_ssize_t = 0
    start: cython.Py_ssize_t
    c: cython.int
    ms: cython.ulonglong = 0
    seq: cython.ulonglong = 0
    cutoff: cython.ulonglong = 1844674407370955161  # UINT64_MAX // 10
    while i < n:
        c = text[i] - 0x30
        if c < 0 or c > 9:
            break
        if ms > cutoff or (ms == cutoff and c > 5):
            return None
        ms = ms * 10 + c
        i += 1
    if i == 0:
        return None
    if i == n:
        return _new_id(StreamID, (ms, missing_seq))
    if text[i] != 0x2D:  # '-'
        return None
    i += 1
    start = i
    while i < n:
        c = text[i] - 0x30
        if c < 0 or c > 9:
            return None
        if seq > cutoff or (seq == cutoff and c > 5):
            return None
        seq = seq * 10 + c
        i += 1
    if i == start:
        return None
    return _new_id(StreamID, (ms, seq))


def parse_u64(text: bytes) -> int | None:
    """Read an unsigned 64-bit number the way Redis's ``string2ull`` does.

    Returns None when the text is not acceptable.
    """
    # First try: a canonical signed 64-bit integer; negatives are refused.
    if text and (text.isdigit() or (text[:1] == b"-" and text[1:].isdigit())):
        digits = text[1:] if text[:1] == b"-" else text
        canonical = digits == b"0" or digits[:1] != b"0"
        if canonical and not (text[:1] == b"-" and digits == b"0"):
            value = int(text)
            if -INT64_MAX - 1 <= value <= INT64_MAX:
                return value if value >= 0 else None
    # Second try: strtoull semantics.
    body = text.lstrip(_BLANKS)
    negative = False
    if body[:1] in (b"+", b"-"):
        negative = body[:1] == b"-"
        body = body[1:]
    if not body or not body.isdigit():
        return None
    value = int(body)
    if value > UINT64_MAX:
        return None
    return (-value) & UINT64_MAX if negative else value


def parse_id(text: bytes, missing_seq: int = 0) -> StreamID:
    """Parse ``-``, ``+``, ``<ms>`` or ``<ms>-<seq>`` (Redis ``streamParseID``).

    ``missing_seq`` fills the sequence when only ``<ms>`` is given: 0 for the
    start of a range, UINT64_MAX for its end.
    """
    if len(text) > _MAX_ID_TEXT:
        raise InvalidStreamID(text)
    if cython.compiled:
        sid = _plain_id(text, missing_seq)
        if sid is not None:
            return sid
    if text == b"-":
        return MIN_ID
    if text == b"+":
        return MAX_ID
    ms_part, dash, seq_part = text.partition(b"-")
    ms = parse_u64(ms_part)
    if ms is None:
        raise InvalidStreamID(text)
    if not dash:
        return StreamID(ms, missing_seq)
    seq = parse_u64(seq_part)
    if seq is None:
        raise InvalidStreamID(text)
    return StreamID(ms, seq)


def parse_strict_id(text: bytes) -> tuple[StreamID, bool]:
    """Parse an ID given to XADD/XSETID-like commands: no ``-`` or ``+``.

    ``<ms>-*`` is accepted and returns ``(StreamID(ms, 0), False)``: the
    second value says whether the sequence was given.
    """
    if text in (b"-", b"+") or len(text) > _MAX_ID_TEXT:
        raise InvalidStreamID(text)
    if text.endswith(b"-*"):
        ms = parse_u64(text[:-2])
        if ms is None:
            raise InvalidStreamID(text)
        return StreamID(ms, 0), False
    return parse_id(text), True


@cython.locals(i=cython.Py_ssize_t, n=cython.Py_ssize_t)
def parse_plain_ids(texts: list) -> list | None:
    """Each of ``texts`` as :func:`parse_id` reads it (a missing sequence is
    0), when every one is a plain ``<ms>`` or ``<ms>-<seq>`` of ASCII digits
    within uint64; None as soon as one is not, for the caller to parse them
    one by one (the general rules then give the answer or the error).

    An XACK's IDs, as clients send them, in one call.
    """
    n = len(texts)
    out: list = []
    for i in range(n):
        text = texts[i]
        if type(text) is not bytes or len(text) > _MAX_ID_TEXT:
            return None
        sid = _plain_id(text, 0)
        if sid is None:
            return None
        out.append(sid)
    return out
