"""The replication backlog against a plain model: every byte ever fed, and
the offsets Redis reports (INFO replication, PSYNC acceptance)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tidelog.replication.backlog import Backlog


def test_a_new_backlog_starts_after_the_offset_it_is_given() -> None:
    b = Backlog(16, offset=100)
    assert (b.offset, b.histlen, b.first_byte_offset) == (100, 0, 101)
    assert b.can_serve(101) and not b.can_serve(100) and not b.can_serve(102)
    assert b.read_from(101) == b""


def test_wrap_around_keeps_the_newest_bytes() -> None:
    b = Backlog(8)
    b.append(b"abcde")
    b.append(b"fghij")  # wraps: holds cdefghij
    assert (b.offset, b.histlen, b.first_byte_offset) == (10, 8, 3)
    assert b.read_from(3) == b"cdefghij"
    assert b.read_from(9) == b"ij"
    assert b.read_from(11) == b""
    assert not b.can_serve(2)
    with pytest.raises(ValueError):
        b.read_from(2)


def test_a_chunk_larger_than_the_ring_keeps_its_tail() -> None:
    b = Backlog(4)
    b.append(b"0123456789")
    assert b.read_from(b.first_byte_offset) == b"6789"
    assert b.first_byte_offset == 7


@settings(max_examples=200, deadline=None)
@given(size=st.integers(1, 40),
       ops=st.lists(st.one_of(st.binary(max_size=60), st.integers(1, 40)), max_size=30))
def test_backlog_matches_a_model(size: int, ops: list) -> None:
    b = Backlog(size, offset=7)
    stream = b""
    held, histlen = size, 0
    for op in ops:
        if isinstance(op, bytes):
            b.append(op)
            stream += op
            histlen = min(held, histlen + len(op))
        else:
            b.resize(op)
            held = op
            histlen = min(histlen, held)  # bytes a shrink dropped stay dropped
        assert b.offset == 7 + len(stream)
        assert (b.size, b.histlen) == (held, histlen)
        assert b.first_byte_offset == b.offset - histlen + 1
        for start in range(b.first_byte_offset, b.offset + 2):
            assert b.read_from(start) == stream[start - 8:]
