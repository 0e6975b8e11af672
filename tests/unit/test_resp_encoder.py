"""The reply encoder: every reply type in RESP2 and RESP3, byte for byte,
and every output decoded back with hiredis to prove it is well-formed."""

from __future__ import annotations

import math

import hiredis
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import twins
from tidelog.resp import (
    NULL_ARRAY,
    OK,
    PONG,
    QUEUED,
    ErrorReply,
    Map,
    Push,
    RawReply,
    RequestParser,
    SetReply,
    SimpleString,
    Verbatim,
    encode,
    encode_all,
    encode_into,
)

# Every test runs on both twins of the encoder (compiled and pure).
_twin = twins.bind(globals(), "tidelog.resp.encoder", ["encode", "encode_all", "encode_into"])


class ReplyError(Exception):
    pass


END = b"+end-of-reply\r\n"


def decode(data: bytes):
    """``data`` must hold exactly one reply; return it as hiredis reads it.

    (``gets()`` returns False both for "no reply yet" and for RESP3 ``#f``,
    so a sentinel reply follows the data.)
    """
    reader = hiredis.Reader(protocolError=ValueError, replyError=ReplyError)
    reader.feed(data + END)
    reply = reader.gets()
    assert reader.gets() == b"end-of-reply", f"not exactly one reply: {data!r}"
    assert not reader.has_data()
    return reply


# (reply, RESP2 bytes, RESP3 bytes)
CASES = [
    (b"foo", b"$3\r\nfoo\r\n", b"$3\r\nfoo\r\n"),
    (b"", b"$0\r\n\r\n", b"$0\r\n\r\n"),
    (b"a\r\nb", b"$4\r\na\r\nb\r\n", b"$4\r\na\r\nb\r\n"),
    ("h\xe9", b"$3\r\nh\xc3\xa9\r\n", b"$3\r\nh\xc3\xa9\r\n"),
    (bytearray(b"ba"), b"$2\r\nba\r\n", b"$2\r\nba\r\n"),
    (memoryview(b"mv"), b"$2\r\nmv\r\n", b"$2\r\nmv\r\n"),
    (0, b":0\r\n", b":0\r\n"),
    (1, b":1\r\n", b":1\r\n"),
    (-1, b":-1\r\n", b":-1\r\n"),
    (9999, b":9999\r\n", b":9999\r\n"),
    (10000, b":10000\r\n", b":10000\r\n"),
    (2**63 - 1, b":9223372036854775807\r\n", b":9223372036854775807\r\n"),
    (-(2**63), b":-9223372036854775808\r\n", b":-9223372036854775808\r\n"),
    (2**64, b"$20\r\n18446744073709551616\r\n", b"(18446744073709551616\r\n"),
    (True, b":1\r\n", b"#t\r\n"),
    (False, b":0\r\n", b"#f\r\n"),
    # Floats as Redis 8's addReplyDouble: the shortest round-trip digits in
    # "%.17g"'s layout (Redis 7.2 release notes: "reply with the shortest
    # representation of doubles"; 7.0.15 sent 1.1 as 1.1000000000000001).
    (1.5, b"$3\r\n1.5\r\n", b",1.5\r\n"),
    (3.0, b"$1\r\n3\r\n", b",3\r\n"),
    (1.1, b"$3\r\n1.1\r\n", b",1.1\r\n"),
    (1e16, b"$17\r\n10000000000000000\r\n", b",10000000000000000\r\n"),
    (1e20, b"$5\r\n1e+20\r\n", b",1e+20\r\n"),
    (1e-7, b"$5\r\n1e-07\r\n", b",1e-07\r\n"),
    (float("inf"), b"$3\r\ninf\r\n", b",inf\r\n"),
    (float("-inf"), b"$4\r\n-inf\r\n", b",-inf\r\n"),
    (None, b"$-1\r\n", b"_\r\n"),
    (NULL_ARRAY, b"*-1\r\n", b"_\r\n"),
    ([], b"*0\r\n", b"*0\r\n"),
    ((), b"*0\r\n", b"*0\r\n"),
    ([b"a", 1], b"*2\r\n$1\r\na\r\n:1\r\n", b"*2\r\n$1\r\na\r\n:1\r\n"),
    ((b"a", None), b"*2\r\n$1\r\na\r\n$-1\r\n", b"*2\r\n$1\r\na\r\n_\r\n"),
    (OK, b"+OK\r\n", b"+OK\r\n"),
    (QUEUED, b"+QUEUED\r\n", b"+QUEUED\r\n"),
    (PONG, b"+PONG\r\n", b"+PONG\r\n"),
    (SimpleString(b"FULLRESYNC x 0"), b"+FULLRESYNC x 0\r\n", b"+FULLRESYNC x 0\r\n"),
    (SimpleString(b"a\r\nb"), b"+a  b\r\n", b"+a  b\r\n"),
    (ErrorReply(b"ERR syntax error"), b"-ERR syntax error\r\n", b"-ERR syntax error\r\n"),
    (ErrorReply(b"ERR bad\r\nline\r"), b"-ERR bad  line \r\n", b"-ERR bad  line \r\n"),
    (
        Map([(b"k", 1), (b"l", [b"x"])]),
        b"*4\r\n$1\r\nk\r\n:1\r\n$1\r\nl\r\n*1\r\n$1\r\nx\r\n",
        b"%2\r\n$1\r\nk\r\n:1\r\n$1\r\nl\r\n*1\r\n$1\r\nx\r\n",
    ),
    (Map([]), b"*0\r\n", b"%0\r\n"),
    (Map({b"k": b"v"}), b"*2\r\n$1\r\nk\r\n$1\r\nv\r\n", b"%1\r\n$1\r\nk\r\n$1\r\nv\r\n"),
    (SetReply([b"a", b"b"]), b"*2\r\n$1\r\na\r\n$1\r\nb\r\n", b"~2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    (SetReply([]), b"*0\r\n", b"~0\r\n"),
    (
        Push([b"message", b"ch", b"hi"]),
        b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n",
        b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n",
    ),
    (Verbatim(b"hello"), b"$5\r\nhello\r\n", b"=9\r\ntxt:hello\r\n"),
    (Verbatim(b"# x\r\n", b"mkd"), b"$5\r\n# x\r\n\r\n", b"=9\r\nmkd:# x\r\n\r\n"),
    (RawReply(b"+RAW\r\n"), b"+RAW\r\n", b"+RAW\r\n"),
    ([RawReply(b":5\r\n"), b"x"], b"*2\r\n:5\r\n$1\r\nx\r\n", b"*2\r\n:5\r\n$1\r\nx\r\n"),
]


@pytest.mark.parametrize("reply, resp2, resp3", CASES)
def test_encode(reply, resp2, resp3):
    assert encode(reply, 2) == resp2
    assert encode(reply, 3) == resp3
    for proto, expected in ((2, resp2), (3, resp3)):
        out = bytearray(b"prefix")
        encode_into(out, reply, proto)
        assert out == b"prefix" + expected
        # ... and the same inside an array, through the general walk.
        assert encode([reply], proto) == b"*1\r\n" + expected


@pytest.mark.parametrize("reply, resp2, resp3", CASES)
def test_hiredis_reads_it_back(reply, resp2, resp3):
    decode(resp2)
    decode(resp3)


def test_decoded_values():
    assert decode(encode([b"a", [1, [None]]], 2)) == [b"a", [1, [None]]]
    assert decode(encode(True, 3)) is True
    assert decode(encode(1.5, 3)) == 1.5
    assert math.isnan(decode(encode(float("nan"), 3)))
    assert decode(encode(float("nan"), 2)) == b"nan"
    assert decode(encode(Map([(b"k", b"v")]), 3)) == {b"k": b"v"}
    assert decode(encode(SetReply([b"a"]), 3)) == [b"a"]  # hiredis reads sets as lists
    assert decode(encode(Verbatim(b"hi"), 3)) == b"hi"
    assert decode(encode(2**64, 3)) == b"18446744073709551616"  # hiredis: big numbers as bytes
    assert decode(encode(SimpleString(b"OK"), 3)) == b"OK"
    error = decode(encode(ErrorReply(b"ERR x"), 2))  # hiredis returns errors, not raises
    assert isinstance(error, ReplyError) and str(error) == "ERR x"


def test_stream_entries():
    entries = [[b"1-%d" % i, [b"field", b"value %d" % i, b"n", b"%d" % i]] for i in range(50)]
    reply = [[b"stream", entries]]  # XREAD
    for proto in (2, 3):
        assert decode(encode(reply, proto)) == reply
    assert decode(encode(Map([(b"stream", entries)]), 3)) == {b"stream": entries}


def test_large_values_and_counts():
    big = b"x" * 100_000
    many = [b"%d" % i for i in range(5000)]
    ints = list(range(-5, 20_000, 7))
    for proto in (2, 3):
        assert decode(encode(big, proto)) == big
        assert decode(encode(many, proto)) == many
        assert decode(encode(ints, proto)) == ints
        assert decode(encode(SetReply(many), proto)) == many
        assert decode(encode(Push(many), proto)) == many
        assert decode(encode(Map([(m, m) for m in many]), proto)) == (
            {m: m for m in many} if proto == 3 else [x for m in many for x in (m, m)]
        )


def test_deep_nesting():
    reply: list = [b"bottom"]
    for _ in range(10_000):  # far beyond the recursion limit
        reply = [reply, 1]
    out = encode(reply, 3)
    assert out.startswith(b"*2\r\n" * 10_000 + b"*1\r\n$6\r\nbottom\r\n:1\r\n")
    assert out.count(b":1\r\n") == 10_000


def test_many_replies_in_one_buffer():
    out = bytearray()
    for reply in (OK, b"v", 3, None, [b"a"], ErrorReply(b"ERR e")):
        encode_into(out, reply, 2)
    assert out == b"+OK\r\n$1\r\nv\r\n:3\r\n$-1\r\n*1\r\n$1\r\na\r\n-ERR e\r\n"
    every = bytearray(b"kept:")
    encode_all(every, [OK, b"v", 3, None, [b"a"], ErrorReply(b"ERR e")], 2)
    assert every == b"kept:" + out


def test_subclasses():
    import enum

    class Level(enum.IntEnum):
        HIGH = 12345

    class Name(str):
        pass

    class Raw(RawReply):
        pass

    class Real(float):
        pass

    class Row(list):
        pass

    assert encode(Level.HIGH, 2) == b":12345\r\n"
    assert encode([Name("ab")], 2) == b"*1\r\n$2\r\nab\r\n"
    assert encode([Raw(b":1\r\n"), Real(0.5), Row([b"a"]), Row()], 3) == (
        b"*4\r\n:1\r\n,0.5\r\n*1\r\n$1\r\na\r\n*0\r\n"
    )
    assert encode(ErrorReply("ERR text\n"), 2) == b"-ERR text \r\n"  # str tolerated


def test_errors():
    with pytest.raises(TypeError):
        encode(object(), 2)
    with pytest.raises(TypeError):
        encode([b"a", {1, 2}], 3)
    with pytest.raises(ValueError):
        encode(b"x", 4)
    with pytest.raises(ValueError):
        encode(OK, 1)
    with pytest.raises(ValueError):
        encode(Verbatim(b"x", b"markdown"), 3)
    with pytest.raises(ValueError):
        encode_all(bytearray(), [OK], 4)
    with pytest.raises(TypeError):
        encode_all(bytearray(), [OK, object()], 2)


# -- random replies --------------------------------------------------------------
scalars = st.one_of(
    st.binary(max_size=30),
    st.text(max_size=10),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.booleans(),
    st.floats(allow_nan=False),
    st.none(),
    st.just(NULL_ARRAY),
    st.builds(SimpleString, st.binary(max_size=10)),
    st.builds(ErrorReply, st.binary(max_size=20)),
    st.builds(Verbatim, st.binary(max_size=20)),
)
replies = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.lists(inner, max_size=5).map(tuple),
        st.lists(st.tuples(st.binary(max_size=5), inner), max_size=4).map(Map),
        st.lists(st.binary(max_size=5), max_size=4).map(SetReply),
        st.lists(inner, max_size=4).map(Push),
    ),
    max_leaves=30,
)


@given(replies, st.sampled_from([2, 3]))
@settings(max_examples=500, deadline=None)
def test_random_replies_are_well_formed(reply, proto):
    data = encode(reply, proto)
    out = bytearray()
    encode_into(out, reply, proto)
    assert out == data
    decode(data)
    every = bytearray()
    encode_all(every, [reply, SimpleString(b"between"), reply], proto)
    assert every == data + b"+between\r\n" + data


@given(st.lists(st.lists(st.binary(max_size=30), min_size=1, max_size=6), max_size=10))
@settings(max_examples=200, deadline=None)
def test_arrays_of_bulks_parse_as_requests(commands):
    # An array of bulk strings is exactly a request: what a client (or a
    # replica link) sends; our own parser must read our own output.
    parser = RequestParser()
    for argv in commands:
        parser.feed(encode(argv, 2))
    assert [parser.next_command() for _ in commands] == commands
    assert parser.next_command() is None


@given(replies, st.sampled_from([2, 3]))
def test_the_twins_encode_alike(reply, proto):
    pure = twins.pure("tidelog.resp.encoder")
    assert encode(reply, proto) == pure.encode(reply, proto)
