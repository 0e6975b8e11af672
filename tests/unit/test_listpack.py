"""Listpack encoding, byte for byte, and the checks that reject malformed ones."""

from __future__ import annotations

import pytest

from tests.support import twins
from tidelog.types import listpack as lp
from tidelog.types.listpack import ListpackError

# Every test runs on both twins of the listpack kernel (compiled and pure).
_twin = twins.bind(globals(), "tidelog.types.listpack", ["ListpackError"], alias="lp")

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1


def element_bytes(value: bytes | int) -> bytes:
    return lp.encode(value)


# -- strings that are integers ---------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (b"0", 0),
        (b"1", 1),
        (b"-1", -1),
        (b"127", 127),
        (b"9223372036854775807", INT64_MAX),
        (b"-9223372036854775808", INT64_MIN),
        (b"12345678901234567", 12345678901234567),
    ],
)
def test_canonical_integers_are_recognised(text: bytes, value: int) -> None:
    assert lp.string_to_int(text) == value


@pytest.mark.parametrize(
    "text",
    [
        b"",
        b"-",
        b"01",
        b"00",
        b"+1",
        b"-0",
        b"-01",
        b" 1",
        b"1 ",
        b"1.0",
        b"1e3",
        b"0x10",
        b"9223372036854775808",  # int64 max + 1
        b"-9223372036854775809",  # int64 min - 1
        b"123456789012345678901",  # 21 characters
        b"\xd9\xa1",  # an Arabic-Indic digit is not a digit here
    ],
)
def test_non_canonical_integers_stay_strings(text: bytes) -> None:
    assert lp.string_to_int(text) is None
    element = lp.encode_string(text)
    value, end = lp.read(element, 0)
    assert value == text and isinstance(value, bytes)
    assert end == len(element)


# -- integer encodings -----------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "first_byte", "size"),
    [
        (0, 0x00, 1),
        (127, 0x7F, 1),
        (128, 0xC0, 2),
        (-1, 0xDF, 2),
        (4095, 0xCF, 2),
        (-4096, 0xD0, 2),
        (4096, 0xF1, 3),
        (-4097, 0xF1, 3),
        (32767, 0xF1, 3),
        (-32768, 0xF1, 3),
        (32768, 0xF2, 4),
        (-32769, 0xF2, 4),
        (8388607, 0xF2, 4),
        (-8388608, 0xF2, 4),
        (8388608, 0xF3, 5),
        (-8388609, 0xF3, 5),
        (2147483647, 0xF3, 5),
        (-2147483648, 0xF3, 5),
        (2147483648, 0xF4, 9),
        (-2147483649, 0xF4, 9),
        (INT64_MAX, 0xF4, 9),
        (INT64_MIN, 0xF4, 9),
    ],
)
def test_integer_widths_and_round_trip(value: int, first_byte: int, size: int) -> None:
    element = lp.encode_int(value)
    assert element[0] == first_byte
    assert len(element) == size + 1  # every integer element has a 1-byte backlen
    assert element[-1] == size
    assert lp.read(element, 0) == (value, len(element))
    assert lp.read_int(element, 0) == (value, len(element))
    assert lp.read_bytes(element, 0) == (b"%d" % value, len(element))
    assert lp.skip(element, 0) == len(element)
    # the text form of the number is stored the same way
    assert lp.encode_string(b"%d" % value) == element
    assert lp.unpack(lp.pack([value])) == [value]


def test_integers_outside_int64_are_refused() -> None:
    with pytest.raises(OverflowError):
        lp.encode_int(INT64_MAX + 1)
    with pytest.raises(OverflowError):
        lp.encode_int(INT64_MIN - 1)


def test_thirteen_bit_integers_by_hand() -> None:
    # 110xxxxx xxxxxxxx: 13-bit two's complement, high bits in the first byte
    assert lp.encode_int(128) == bytes([0xC0, 0x80, 2])
    assert lp.encode_int(-1) == bytes([0xDF, 0xFF, 2])
    assert lp.encode_int(-4096) == bytes([0xD0, 0x00, 2])
    assert lp.encode_int(4095) == bytes([0xCF, 0xFF, 2])


def test_wider_integers_by_hand() -> None:
    assert lp.encode_int(40000) == bytes([0xF2, 0x40, 0x9C, 0x00, 4])
    assert lp.encode_int(-40000) == bytes([0xF2, 0xC0, 0x63, 0xFF, 4])
    assert lp.encode_int(-4097) == bytes([0xF1, 0xFF, 0xEF, 3])
    assert lp.encode_int(1 << 31) == bytes([0xF4, 0, 0, 0, 0x80, 0, 0, 0, 0, 9])


# -- string encodings and backlens ------------------------------------------------


@pytest.mark.parametrize(
    ("n", "header_size", "backlen_size"),
    [
        (0, 1, 1),
        (1, 1, 1),
        (63, 1, 1),  # 6-bit length, element 64 bytes
        (64, 2, 1),  # 12-bit length
        (125, 2, 1),  # element 127 bytes: 1-byte backlen
        (126, 2, 2),  # element 128 bytes: 2-byte backlen
        (4095, 2, 2),
        (4096, 5, 2),  # 32-bit length
        (16377, 5, 2),  # element 16382 bytes
        (16378, 5, 3),  # element 16383 bytes: 3-byte backlen (Redis's threshold)
        (2097145, 5, 3),  # element 2097150 bytes
        (2097146, 5, 4),  # element 2097151 bytes: 4-byte backlen
    ],
)
def test_string_widths_and_round_trip(n: int, header_size: int, backlen_size: int) -> None:
    text = b"x" * n
    element = lp.encode_string(text)
    assert len(element) == header_size + n + backlen_size
    size = header_size + n
    assert lp.element_size(element, 0) == size
    assert lp.backlen_size(size) == backlen_size
    assert element[size:] == lp.backlen(size)
    assert lp.read(element, 0) == (text, len(element))
    assert lp.read_backlen(b"\0" * lp.HEADER_SIZE + element, lp.HEADER_SIZE + len(element)) == (
        size,
        lp.HEADER_SIZE + size,
    )
    packed = lp.pack([b"a", text, b"b"])
    assert lp.unpack(packed) == [b"a", text, b"b"]


def test_string_headers_by_hand() -> None:
    assert lp.encode_string(b"a") == b"\x81a\x02"
    assert lp.encode_string(b"") == b"\x80\x01"
    s200 = b"y" * 200
    # 1110xxxx xxxxxxxx: 200 = 0x0C8; element 202 bytes; backlen 202 = 1*128 + 74
    assert lp.encode_string(s200) == b"\xe0\xc8" + s200 + b"\x01\xca"
    s5000 = b"z" * 5000
    # 0xF0 + u32 LE; element 5005 bytes = 39*128 + 13
    assert lp.encode_string(s5000) == b"\xf0\x88\x13\x00\x00" + s5000 + bytes([39, 13 | 128])


@pytest.mark.parametrize(
    "size", [1, 127, 128, 16382, 16383, 2097150, 2097151, 268435454, 268435455, 1 << 30]
)
def test_backlen_round_trip(size: int) -> None:
    encoded = lp.backlen(size)
    assert len(encoded) == lp.backlen_size(size)
    # first byte (lowest address) has no continuation bit, the others have it
    assert encoded[0] & 0x80 == 0
    assert all(b & 0x80 for b in encoded[1:])
    buf = b"\0" * lp.HEADER_SIZE + encoded
    assert lp.read_backlen(buf, len(buf)) == (size, lp.HEADER_SIZE)


# -- whole listpacks ---------------------------------------------------------------


def test_small_listpack_by_hand() -> None:
    packed = lp.pack([b"a", 1, -1, b"128"])
    # fmt: off
    assert packed == bytes.fromhex(
        "12000000" "0400"  # 18 bytes, 4 elements
        "816102"  # "a"
        "0101"  # 1
        "dfff02"  # -1
        "c08002"  # "128", stored as an integer
        "ff"
    )
    # fmt: on
    assert lp.unpack(packed) == [b"a", 1, -1, 128]


def test_empty_listpack() -> None:
    packed = lp.pack([])
    assert packed == b"\x07\x00\x00\x00\x00\x00\xff"
    assert lp.unpack(packed) == []


def test_forward_and_backward_walks_agree() -> None:
    values: list[bytes | int] = [
        b"",
        b"a" * 63,
        b"b" * 64,
        b"c" * 126,
        b"d" * 5000,
        0,
        127,
        128,
        -4096,
        40000,
        -(1 << 40),
        INT64_MIN,
        b"01",
    ]
    packed = lp.pack(values)
    starts = []
    p = lp.HEADER_SIZE
    while packed[p] != lp.EOF:
        starts.append(p)
        p = lp.skip(packed, p)
    assert len(starts) == len(values)
    back = []
    q = len(packed) - 1
    while q > lp.HEADER_SIZE:
        q = lp.prev(packed, q)
        back.append(q)
    assert back[::-1] == starts
    assert [lp.read(packed, s)[0] for s in starts] == values


def test_element_count_saturates_at_65535() -> None:
    packed = lp.pack([1] * 65534)
    assert lp.read_header(packed)[1] == 65534
    packed = lp.pack([1] * 65535)
    assert lp.read_header(packed)[1] == 65535
    packed = lp.pack([1] * 70000)
    assert lp.read_header(packed) == (6 + 2 * 70000 + 1, 65535)
    assert len(lp.unpack(packed)) == 70000


# -- corruption ---------------------------------------------------------------------


def good() -> bytearray:
    return bytearray(lp.pack([b"abc", 5, b"d" * 200]))


def test_unpack_accepts_the_good_one() -> None:
    assert lp.unpack(bytes(good())) == [b"abc", 5, b"d" * 200]


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda b: b.__setitem__(0, b[0] + 1),  # wrong total
        lambda b: b.__setitem__(4, 2),  # wrong element count
        lambda b: b.__setitem__(-1, 0),  # no terminator
        lambda b: b.__setitem__(10, 3),  # backlen of "abc" says 3, it is 4
        lambda b: b.__setitem__(11, 0xF5),  # invalid encoding byte
        lambda b: b.__setitem__(14, 0xE0),  # length of the 200-byte string changed
        lambda b: b.__setitem__(12, 2),  # backlen of the integer 5 says 2
    ],
)
def test_unpack_rejects_corruption(corrupt) -> None:
    buf = good()
    corrupt(buf)
    with pytest.raises(ListpackError):
        lp.unpack(bytes(buf))


def test_unpack_rejects_truncation() -> None:
    buf = bytes(good())
    for cut in range(1, len(buf) - 1):
        short = buf[:cut] + b"\xff"
        with pytest.raises(ListpackError):
            lp.unpack(lp.header(len(short), 3) + short[6:])


def test_strict_unpack_rejects_non_canonical_elements() -> None:
    # 5 as an int16, and "7" as a string: valid listpack, not what Redis writes
    body = b"\xf1\x05\x00\x03" + b"\x817\x02"
    packed = lp.header(6 + len(body) + 1, 2) + body + b"\xff"
    assert lp.unpack(packed, strict=False) == [5, b"7"]
    with pytest.raises(ListpackError):
        lp.unpack(packed)


# -- the twins agree ---------------------------------------------------------------

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_texts = st.one_of(
    st.binary(max_size=70),
    st.integers(-(2**64), 2**64).map(lambda v: b"%d" % v),
    st.from_regex(rb"\A-?0*[0-9]{0,21}\Z"),
)


@given(_texts)
def test_the_twins_encode_strings_alike(text):
    pure = twins.pure("tidelog.types.listpack")
    element = lp.encode_string(text)
    assert element == pure.encode_string(text)
    assert lp.read_bytes(element, 0)[0] == text == pure.read_bytes(element, 0)[0]


# -- stream node entries ---------------------------------------------------------------


def _entry_offset(buf: bytes | bytearray, index: int) -> int:
    p = lp.HEADER_SIZE
    for _ in range(index):
        p = lp.skip(buf, p)
    return p


def test_stream_entries_append_and_read_back() -> None:
    # A node whose master fields are a, b and whose first entry is 0-0 from the master ID.
    elements: list = [1, 0, 2, b"a", b"b", 0, 2, 0, 0, b"1", b"x", 5]
    buf = bytearray(lp.pack(elements))
    first = _entry_offset(buf, 6)
    end = len(buf) - 1
    at = lp.append_stream_entry(buf, 3, 200, [b"a", b"v", b"b", b"-7"], True)
    assert at == end
    elements += [2, 3, 200, b"v", -7, 5]
    long = b"long" * 40
    at2 = lp.append_stream_entry(buf, 5000, -1, [b"c", long], False)
    elements += [0, 5000, -1, 1, b"c", long, 6]
    assert bytes(buf) == lp.pack(elements)
    fields = [b"a", b"b"]
    assert lp.stream_entry_id(buf, first, 10, 20) == (10, 20)
    assert lp.stream_entry_fields(buf, first, fields) == [b"a", b"1", b"b", b"x"]
    assert lp.stream_entry_id(buf, at, 10, 20) == (13, 220)
    assert lp.stream_entry_fields(buf, at, fields) == [b"a", b"v", b"b", b"-7"]
    assert lp.stream_entry_id(buf, at2, 10, 20) == (5010, 19)
    assert lp.stream_entry_id(buf, at2, 10, 0) == (5010, (1 << 64) - 1)  # uint64 wrap
    assert lp.stream_entry_fields(buf, at2, fields) == [b"c", long]


def test_stream_append_saturates_the_element_count() -> None:
    buf = bytearray(lp.pack([1, 0, 1, b"f", 0, 2, 0, 0, b"v", 4]))
    buf[4:6] = (65533).to_bytes(2, "little")   # the header's element count
    lp.append_stream_entry(buf, 1, 0, [b"f", b"w"], True)
    assert lp.read_header(buf) == (len(buf), 65535)
    lp.append_stream_entry(buf, 2, 0, [b"f", b"w"], True)
    assert lp.read_header(buf) == (len(buf), 65535)


_fvs = st.lists(st.tuples(_texts, _texts), min_size=1, max_size=4).map(
    lambda pairs: [x for pair in pairs for x in pair])


@given(st.lists(st.tuples(st.integers(-(2**63), 2**63 - 1), st.integers(-(2**63), 2**63 - 1),
                          _fvs, st.booleans()), max_size=6))
def test_the_twins_append_and_read_stream_entries_alike(entries):
    pure = twins.pure("tidelog.types.listpack")
    master = [b"f"]
    a = bytearray(lp.pack([1, 0, 1, b"f", 0, 2, 0, 0, b"v", 4]))
    b_ = bytearray(a)
    for msd, seqd, fv, same in entries:
        fv = master + fv[1:2] if same else fv
        at = lp.append_stream_entry(a, msd, seqd, fv, same)
        assert pure.append_stream_entry(b_, msd, seqd, fv, same) == at
        assert a == b_
        assert lp.stream_entry_id(a, at, 5, 7) == pure.stream_entry_id(a, at, 5, 7) == (
            (5 + msd) % 2**64, (7 + seqd) % 2**64)
        expected = [b"%d" % v if isinstance(v, int) else v
                    for v in lp.unpack(lp.pack(fv))]  # integer-looking text reads back as is
        assert lp.stream_entry_fields(a, at, master) == pure.stream_entry_fields(a, at, master)
        assert lp.stream_entry_fields(a, at, master) == expected
    lp.unpack(a)


_short_values = st.one_of(
    st.binary(max_size=66),
    st.integers(-(2**64), 2**64).map(lambda v: b"%d" % v),
    st.from_regex(rb"\A-?0*[0-9]{0,21}(\.[0-9]{1,3})?\Z"),
)


@given(st.lists(st.tuples(st.integers(-3, 130), st.integers(-3, 130),
                          st.lists(_short_values, min_size=1, max_size=3)), max_size=140))
def test_the_twins_append_small_samefields_entries_alike(entries):
    # The compiled twin writes SAMEFIELDS entries with small deltas and short
    # values straight into the node (the XADD hot path); long runs cross the
    # header's one-byte counts.
    pure = twins.pure("tidelog.types.listpack")
    master = [b"f", b"g", b"h"]
    a = bytearray(lp.pack([1, 0, 3, b"f", b"g", b"h", 0, 2, 0, 0, b"u", b"v", b"w", 6]))
    b_ = bytearray(a)
    for msd, seqd, values in entries:
        fv = [x for pair in zip(master, values) for x in pair]
        fields = master[:len(values)]
        at = lp.append_stream_entry(a, msd, seqd, fv, True)
        assert pure.append_stream_entry(b_, msd, seqd, fv, True) == at
        assert a == b_
        assert lp.stream_entry_fields(a, at, fields) == pure.stream_entry_fields(b_, at, fields)
    assert lp.read_header(a) == pure.read_header(b_) == (len(a), lp.read_header(a)[1])
    lp.unpack(a)


def test_the_twins_read_cut_entries_alike() -> None:
    pure = twins.pure("tidelog.types.listpack")
    buf = bytearray(lp.pack([1, 0, 2, b"a", b"b", 0, 2, 0, 0, b"1", b"x", 5]))
    at = lp.append_stream_entry(buf, 1, 0, [b"a", b"value", b"b", b"w" * 70], True)

    def outcome(module, data):
        try:
            return module.stream_entry_fields(data, at, [b"a", b"b"])
        except Exception as exc:  # noqa: BLE001 - the twins must fail alike
            return type(exc)

    for cut in range(at + 4, len(buf) + 1):
        for data in (bytes(buf[:cut]), bytearray(buf[:cut])):
            assert outcome(lp, data) == outcome(pure, data), cut


def _node_stream(ops, size: int):
    """A stream from (ms gap, different fields?, delete?, seq) steps, nodes of ``size``."""
    from tidelog.ids import StreamID
    from tidelog.types.stream import Stream

    s = Stream()
    ms = 0
    added = []
    for gap, other, _, seq in ops:
        ms += gap  # the sequence may fall: negative and wide sequence deltas
        fv = [b"g", b"%d" % ms, b"h", b"x" * (gap % 70)] if other else [b"f", b"v%d" % ms]
        s.append(StreamID(ms, seq), fv, size, 0)
        added.append(StreamID(ms, seq))
    for id, (_, _, gone, _) in zip(added, ops):
        if gone and s.length > 1:
            s.delete(id)
    return s


@given(st.lists(st.tuples(st.sampled_from([1, 2, 200, 70000, 2**40]), st.booleans(),
                          st.booleans(), st.sampled_from([0, 3, 127, 128, 2**64 - 1])),
                min_size=1, max_size=30),
       st.sampled_from([1, 2, 4, 100]), st.integers(min_value=0, max_value=5),
       st.integers(min_value=0, max_value=3))
def test_stream_live_entries_reads_a_node_as_range_does(ops, size, k, limit):
    # Every twin: one call per node gives the IDs, their text and the fields
    # that the entry-by-entry reading gives, skipping deleted entries, from
    # entry k on and at most `limit` of them.
    from tidelog.ids import StreamID

    s = _node_stream(ops, size)
    for node in s._nodes:
        if node.offs is None:
            s._index(node)
        expect = []
        for j in range(k, len(node.offs)):
            p = node.base + node.offs[j]
            if node.lp[p] & 1:
                continue
            t = lp.stream_entry_id(node.lp, p, *node.key)
            expect.append((StreamID(*t), [b"%d-%d" % t, lp.stream_entry_fields(
                node.lp, p, node.fields)]))
        if limit:
            expect = expect[:limit]
        ids: list = [b"before"]
        entries: list = [b"before"]
        got = lp.stream_live_entries(node.lp, node.base, node.offs, k, node.key[0],
                                     node.key[1], node.fields, limit, StreamID, ids, entries)
        assert got == len(expect)
        assert ids[1:] == [id for id, _ in expect]
        assert all(type(id) is StreamID for id in ids[1:])
        assert entries[1:] == [entry for _, entry in expect]
