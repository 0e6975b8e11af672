"""Stream ID parsing and formatting (``tidelog.ids``), on both twins of the
kernel; and the two twins give the same answer to any input."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support import twins
from tidelog import ids
from tidelog.ids import (
    MAX_ID,
    MIN_ID,
    UINT64_MAX,
    InvalidStreamID,
    StreamID,
    parse_id,
    parse_strict_id,
    parse_u64,
)

_NAMES = ["InvalidStreamID", "StreamID", "parse_id", "parse_strict_id", "parse_u64",
          "MAX_ID", "MIN_ID"]
_twin = twins.bind(globals(), "tidelog.ids", _NAMES, alias="ids")


@pytest.mark.parametrize("text, value", [
    (b"0", 0), (b"42", 42), (b"18446744073709551615", UINT64_MAX),
    (b"9223372036854775807", 2**63 - 1), (b"9223372036854775808", 2**63),
    (b"007", 7), (b"+5", 5), (b" 5", 5), (b"\t\n 12", 12), (b"-01", UINT64_MAX),
    (b"-0", 0), (b"000000000042", 42),
    (b"", None), (b"-1", None), (b"-", None), (b"+", None), (b"5 ", None), (b"1a", None),
    (b"18446744073709551616", None), (b"0x10", None), (b"\xd9\xa3", None), (b"--1", None),
])
def test_parse_u64(text, value):
    assert parse_u64(text) == value


def test_parse_id_forms():
    assert parse_id(b"-") == MIN_ID == StreamID(0, 0)
    assert parse_id(b"+") == MAX_ID == StreamID(UINT64_MAX, UINT64_MAX)
    assert parse_id(b"5") == (5, 0)
    assert parse_id(b"5", UINT64_MAX) == (5, UINT64_MAX)
    assert parse_id(b"5-3") == (5, 3)
    for bad in (b"", b"a", b"5-", b"-5", b"5-x", b"5-3-1", b"1" * 128, b"1-" + b"0" * 126):
        with pytest.raises(InvalidStreamID):
            parse_id(bad)
    assert parse_id(b"1-" + b"0" * 125) == (1, 0)  # 127 bytes: still accepted


def test_parse_strict():
    assert parse_strict_id(b"7-*") == (StreamID(7, 0), False)
    assert parse_strict_id(b"7-1") == (StreamID(7, 1), True)
    assert parse_strict_id(b"7") == (StreamID(7, 0), True)
    for bad in (b"-", b"+", b"x-*", b"-*"):
        with pytest.raises(InvalidStreamID):
            parse_strict_id(bad)


def test_stream_id_format_and_steps():
    sid = StreamID(1732000000000, 17)
    assert bytes(sid) == b"1732000000000-17"
    assert str(sid) == "1732000000000-17"
    assert bytes(MAX_ID) == b"18446744073709551615-18446744073709551615"
    assert sid.incr() == (1732000000000, 18) and sid.decr() == (1732000000000, 16)
    assert StreamID(1, UINT64_MAX).incr() == (2, 0)
    assert StreamID(2, 0).decr() == (1, UINT64_MAX)
    with pytest.raises(OverflowError):
        MAX_ID.incr()
    with pytest.raises(OverflowError):
        MIN_ID.decr()
    assert isinstance(sid, tuple) and sid == (1732000000000, 17) and hash(sid) == hash((1732000000000, 17))
    assert sorted([StreamID(2, 0), StreamID(1, 5)]) == [(1, 5), (2, 0)]


# -- the twins agree -------------------------------------------------------------

_id_text = st.one_of(
    st.binary(max_size=30),
    st.from_regex(rb"\A[ +\-]?[0-9]{0,21}(-[ +\-]?[0-9*]{0,21})?\Z"),
    st.builds(lambda a, b: b"%d-%d" % (a, b), st.integers(0, 2**64 + 5), st.integers(-3, 2**64 + 5)),
)


def _outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except (ValueError, OverflowError) as exc:  # each twin has its InvalidStreamID
        return (type(exc).__name__, None)


@given(_id_text, st.sampled_from([0, UINT64_MAX]))
def test_the_twins_parse_alike(text, missing):
    pure = twins.pure("tidelog.ids")
    assert _outcome(ids.parse_u64, text) == _outcome(pure.parse_u64, text)
    assert _outcome(ids.parse_id, text, missing) == _outcome(pure.parse_id, text, missing)
    assert _outcome(ids.parse_strict_id, text) == _outcome(pure.parse_strict_id, text)


@given(st.integers(0, UINT64_MAX), st.integers(0, UINT64_MAX))
def test_the_twins_format_alike(ms, seq):
    pure = twins.pure("tidelog.ids")
    assert bytes(ids.StreamID(ms, seq)) == bytes(pure.StreamID(ms, seq)) == b"%d-%d" % (ms, seq)
    assert _outcome(lambda: ids.StreamID(ms, seq).incr()) == _outcome(lambda: pure.StreamID(ms, seq).incr())


@given(st.lists(st.one_of(_id_text, st.builds(lambda n: b"0" * n + b"1-2",
                                              st.integers(120, 130))), max_size=6))
def test_plain_ids_parse_at_once_or_not_at_all(texts):
    # Every twin: parse_plain_ids gives what parse_id gives for each text, when
    # it answers; it leaves to the caller (None) every text it does not take,
    # and takes every plain <ms> / <ms>-<seq> within uint64 and 127 bytes.
    got = ids.parse_plain_ids(texts)
    plain = all(len(t) <= 127 and _is_plain(t) for t in texts)
    if got is None:
        assert not plain
    else:
        assert plain
        assert got == [ids.parse_id(t) for t in texts]
        assert all(type(id) is ids.StreamID for id in got)


def _is_plain(text: bytes) -> bool:
    ms, dash, seq = text.partition(b"-")
    parts = [ms, seq] if dash else [ms]
    return all(p and p.isdigit() and p.isascii() and int(p) <= UINT64_MAX for p in parts)
