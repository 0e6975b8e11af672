"""The cluster bus codec (tidelog.cluster.bus): round trips of every message
type, the exact length Redis 7.0.15 expects of each type, the frames it drops,
framing of a byte stream fed in any pieces, and decode on arbitrary bytes."""

import json
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tidelog.cluster import messages as m
from tidelog.cluster.bus import DEFAULT_MAX_FRAME, BusError, FrameReader, decode, encode, expected_length
from tidelog.cluster.messages import Extension, Gossip, Message, bitmap_of, slots_of

A = b"a" * 40
B = b"b" * 40
C = b"c" * 40


def gossip(name: bytes, i: int = 0) -> Gossip:
    return Gossip(name, 1700000000 + i, 1700000001 + i, b"127.0.0.1", 7000 + i, 17000 + i,
                  m.MASTER, 0)


def header(t: int, **kw) -> Message:
    base = dict(type=t, sender=A, current_epoch=7, config_epoch=3, offset=123456789,
                myslots=bitmap_of(range(0, 5461)), slaveof=None, myip=b"", port=7000, pport=0,
                cport=17000, flags=m.MYSELF | m.MASTER, state=m.STATE_OK, mflags=0)
    base.update(kw)
    return Message(**base)


def every_type() -> list[Message]:
    return [
        header(m.PING),
        header(m.PING, gossip=[gossip(B), gossip(C, 1)]),
        header(m.PONG, gossip=[gossip(B)], mflags=m.MF_EXT_DATA,
               extensions=[Extension(m.EXT_HOSTNAME, b"host-7102.example")]),
        header(m.MEET, myip=b"10.0.0.1", flags=m.MYSELF | m.SLAVE, slaveof=B),
        header(m.PING, mflags=m.MF_EXT_DATA, extensions=[
            Extension(m.EXT_HOSTNAME, b""),
            Extension(m.EXT_HUMAN_NODENAME, b"seven"),
            Extension(m.EXT_FORGOTTEN_NODE, C, 60),
            Extension(m.EXT_SHARDID, b"d" * 40),
            Extension(4, b"10.1.2.3\0\0\0\0\0\0\0\0"),
        ]),
        header(m.FAIL, about=B),
        header(m.PUBLISH, channel=b"ch", payload=b"hello"),
        header(m.PUBLISHSHARD, channel=b"", payload=b""),
        header(m.PUBLISH, channel=b"\0\xff" * 100, payload=bytes(range(256)) * 40),
        header(m.FAILOVER_AUTH_REQUEST, mflags=m.MF_FORCEACK),
        header(m.FAILOVER_AUTH_ACK),
        header(m.UPDATE, about=C, update_epoch=9, update_slots=bitmap_of([0, 1, 16383])),
        header(m.MFSTART, mflags=m.MF_PAUSED),
        header(m.MODULE, module_id=0x0102030405060708, module_type=3, payload=b"xyz"),
        header(77, payload=b"anything at all"),
    ]


@pytest.mark.parametrize("msg", every_type(), ids=lambda msg: str(msg.type))
def test_round_trip(msg):
    frame = encode(msg)
    assert len(frame) == expected_length(msg)
    assert frame[:4] == b"RCmb"
    assert struct.unpack_from(">I", frame, 4)[0] == len(frame)
    back = decode(frame)
    assert back == msg
    assert encode(back) == frame


def test_exact_lengths_per_type():
    # Redis 7.0.15, clusterProcessPacket: the total length each type must have.
    assert len(encode(header(m.PING))) == 2256
    assert len(encode(header(m.PONG, gossip=[gossip(B)] * 3))) == 2256 + 3 * 104
    assert len(encode(header(m.FAIL, about=B))) == 2296
    assert len(encode(header(m.PUBLISH, channel=b"ch", payload=b"hello"))) == 2271
    assert len(encode(header(m.PUBLISHSHARD, channel=b"ch", payload=b"hello"))) == 2271
    for t in (m.FAILOVER_AUTH_REQUEST, m.FAILOVER_AUTH_ACK, m.MFSTART):
        assert len(encode(header(t))) == 2256
    assert len(encode(header(m.UPDATE, about=B, update_slots=bitmap_of([5])))) == 4352
    assert len(encode(header(m.MODULE, payload=b"abcd"))) == 2269 + 4
    # Extensions: 8-byte head, data padded to 8; "host-7102.example" -> 32 (recorded from 7.0.15).
    ext = header(m.PING, extensions=[Extension(m.EXT_HOSTNAME, b"host-7102.example")])
    assert len(encode(ext)) == 2256 + 32
    assert len(encode(header(m.PING, extensions=[Extension(m.EXT_SHARDID, C)]))) == 2256 + 48
    assert len(encode(header(m.PING, extensions=[Extension(m.EXT_FORGOTTEN_NODE, C, 1)]))) == 2256 + 56


def test_header_offsets():
    msg = header(m.PONG, port=0x1234, pport=0x2345, cport=0x3456, flags=0x0411,
                 current_epoch=0x0102030405060708, config_epoch=2, offset=3, myip=b"1.2.3.4",
                 slaveof=B, state=m.STATE_FAIL, mflags=m.MF_PAUSED,
                 gossip=[gossip(C)], extensions=[Extension(m.EXT_SHARDID, A)])
    f = encode(msg)
    assert f[8:10] == b"\0\1"                      # version
    assert f[10:12] == b"\x12\x34"                 # port
    assert f[12:14] == b"\0\1"                     # type PONG
    assert f[14:16] == b"\0\1"                     # one gossip entry
    assert f[16:24] == bytes(range(1, 9))          # currentEpoch, big-endian
    assert f[40:80] == A
    assert f[80:2128] == msg.myslots
    assert f[2128:2168] == B
    assert f[2168:2175] == b"1.2.3.4" and f[2175:2214] == bytes(39)
    assert f[2214:2216] == b"\0\1"                 # one extension
    assert f[2216:2246] == bytes(30)
    assert f[2246:2252] == b"\x23\x45\x34\x56\x04\x11"
    assert f[2252] == 1 and f[2253] == m.MF_PAUSED | m.MF_EXT_DATA and f[2254:2256] == b"\0\0"
    g = f[2256:2360]
    assert g[:40] == C and g[94:96] == struct.pack(">H", 7000) and g[102:104] == b"\0\0"
    assert f[2360:2368] == struct.pack(">IH2x", 48, m.EXT_SHARDID)
    assert f[2368:] == A


def test_slot_bitmap_is_lsb_first():
    f = encode(header(m.PING, myslots=bitmap_of([0, 9, 16383])))
    assert f[80] == 0b1 and f[81] == 0b10 and f[80 + 2047] == 0b10000000


def test_extensions_set_ext_data():
    f = encode(header(m.PING, extensions=[Extension(m.EXT_HOSTNAME, b"h")]))
    assert f[2253] & m.MF_EXT_DATA
    assert decode(f).extensions == [Extension(m.EXT_HOSTNAME, b"h")]


def with_u16(frame: bytes, at: int, value: int) -> bytes:
    return frame[:at] + struct.pack(">H", value) + frame[at + 2:]


def with_u32(frame: bytes, at: int, value: int) -> bytes:
    return frame[:at] + struct.pack(">I", value) + frame[at + 4:]


def test_dropped_frames():
    ping = encode(header(m.PING, gossip=[gossip(B)]))
    with pytest.raises(BusError):
        decode(ping[:2255])
    with pytest.raises(BusError):
        decode(b"RCmc" + ping[4:])                # signature
    with pytest.raises(BusError):
        decode(ping + b"\0")                      # totlen differs from the buffer
    with pytest.raises(BusError):
        decode(with_u16(ping, 8, 2))              # version 2
    with pytest.raises(BusError):
        decode(with_u16(ping, 14, 2))             # count says two entries, one present
    with pytest.raises(BusError):
        decode(with_u16(ping, 14, 0))             # trailing bytes
    fail = encode(header(m.FAIL, about=B))
    with pytest.raises(BusError):
        decode(with_u16(fail, 12, m.MFSTART))     # header-only type with a body
    pub = encode(header(m.PUBLISH, channel=b"ch", payload=b"hello"))
    with pytest.raises(BusError):
        decode(with_u32(pub, 2256, 3))            # channel_len off by one
    with pytest.raises(BusError):
        decode(with_u32(pub, 2260, 0xFFFFFFFF))   # no u32 wrap-around
    upd = encode(header(m.UPDATE, about=B, update_slots=bitmap_of([1])))
    with pytest.raises(BusError):
        decode(with_u32(upd[:-8], 4, 4344))
    mod = encode(header(m.MODULE, payload=b"abc"))
    with pytest.raises(BusError):
        decode(with_u32(mod, 2264, 4))


def test_extension_lengths_checked():
    ext = encode(header(m.PING, extensions=[Extension(m.EXT_HOSTNAME, b"host")]))
    assert len(ext) == 2256 + 16
    for bad in (0, 4, 9, 24):                     # zero, under 8, not a multiple of 8, past the end
        with pytest.raises(BusError):
            decode(with_u32(ext, 2256, bad))
    with pytest.raises(BusError):
        decode(with_u16(ext, 2214, 2))            # a second extension the frame does not hold
    # Without EXT_DATA the extensions are not walked: the length is header + gossip only.
    plain = ext[:2253] + b"\0" + ext[2254:]
    with pytest.raises(BusError):
        decode(plain)
    no_ext = bytearray(encode(header(m.PING)))
    no_ext[2214:2216] = b"\0\3"                   # count without EXT_DATA: ignored, as by Redis
    assert decode(bytes(no_ext)).extensions == []
    short = encode(header(m.PING, extensions=[Extension(9, b"x" * 8)]))
    for t in (m.EXT_SHARDID, m.EXT_FORGOTTEN_NODE):
        with pytest.raises(BusError):
            decode(with_u16(short, 2260, t))


def test_unknown_extension_kept_raw():
    f = encode(header(m.PING, extensions=[Extension(5, b"::1\0\0\0\0\0")]))
    back = decode(f)
    assert back.extensions == [Extension(5, b"::1\0\0\0\0\0")]
    assert encode(back) == f


def test_strings_stop_at_nul():
    f = bytearray(encode(header(m.PING, gossip=[gossip(B)])))
    f[2168:2168 + 12] = b"10.0.0.9\0zzz"
    f[2256 + 48:2256 + 48 + 11] = b"1.2.3.4\0abc"
    msg = decode(bytes(f))
    assert msg.myip == b"10.0.0.9" and msg.gossip[0].ip == b"1.2.3.4"
    assert decode(encode(header(m.PING))).slaveof is None


def test_module_id_native_order():
    f = encode(header(m.MODULE, module_id=1, payload=b""))
    assert f[2256:2264] == b"\1" + bytes(7)


# ---------------------------------------------------------------------------
# Framing


def stream() -> tuple[bytes, list[bytes]]:
    frames = [encode(msg) for msg in every_type()]
    return b"".join(frames), frames


def test_frame_reader_whole():
    data, frames = stream()
    r = FrameReader()
    assert r.feed(data) == frames
    assert r.pending == 0


def test_frame_reader_byte_at_a_time():
    data, frames = stream()
    r = FrameReader()
    out = []
    for i in range(len(data)):
        out += r.feed(data[i:i + 1])
    assert out == frames and r.pending == 0


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 5000), max_size=40))
def test_frame_reader_any_cuts(cuts):
    data, frames = stream()
    r = FrameReader()
    out, at = [], 0
    for c in cuts:
        out += r.feed(memoryview(data)[at:at + c])
        at += c
    out += r.feed(data[at:])
    assert out == frames


def test_frame_reader_closes():
    ping = encode(header(m.PING))
    with pytest.raises(BusError):
        FrameReader().feed(b"RCmX" + ping[4:])
    r = FrameReader()
    assert r.feed(b"RCmb\0\0\x08") == []          # 7 bytes: not judged yet
    with pytest.raises(BusError):
        r.feed(b"\xcf")                           # totlen 2255 < 2256
    with pytest.raises(BusError):
        FrameReader(max_frame=4096).feed(with_u32(ping, 4, 4097)[:8])
    assert FrameReader(max_frame=4096).feed(with_u32(ping, 4, 4096)[:8]) == []
    assert DEFAULT_MAX_FRAME >= 2264 + 2 * 512 * 1024 * 1024


# ---------------------------------------------------------------------------
# decode on arbitrary input: only BusError, never another exception


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=3000))
def test_decode_any_bytes(data):
    try:
        decode(data)
    except BusError:
        pass


def mutated(frame: bytes, edits: list[tuple[int, int]], cut: int) -> bytes:
    """``frame`` with bytes overwritten at ``edits``, then ``cut`` bytes cut
    off its end (negative) or zeros added (positive)."""
    out = bytearray(frame)
    for at, value in edits:
        out[at % len(out)] = value
    if cut < 0:
        del out[cut:]
    else:
        out += bytes(cut)
    return bytes(out)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(range(len(every_type()))),
       st.lists(st.tuples(st.integers(0, 5000), st.integers(0, 255)), min_size=1, max_size=6),
       st.integers(-16, 16))
def test_decode_mutated_frames(which, edits, cut):
    frame = mutated(encode(every_type()[which]), edits, cut)
    try:
        msg = decode(frame)
    except BusError:
        return
    assert encode(msg)[:4] == b"RCmb"


@st.composite
def plausible_frames(draw) -> bytes:
    """A header that passes the framing checks (signature, version, total length
    equal to the buffer) over a body of any bytes: decode's length rules get the work."""
    t = draw(st.integers(0, 12))
    body = draw(st.binary(max_size=600))
    count = draw(st.integers(0, 6))
    exts = draw(st.integers(0, 4))
    mflags = draw(st.sampled_from([0, m.MF_EXT_DATA, 0xFF]))
    if t in (m.PING, m.PONG, m.MEET) and draw(st.booleans()):
        body = bytes(104 * count) + body          # the gossip section the count calls for
    f = bytearray(encode(header(t)))[:2256]
    struct.pack_into(">I", f, 4, 2256 + len(body))
    struct.pack_into(">H", f, 14, count)
    struct.pack_into(">H", f, 2214, exts)
    f[2253] = mflags
    return bytes(f) + body


@settings(max_examples=500, deadline=None)
@given(plausible_frames())
def test_decode_plausible_frames(frame):
    try:
        msg = decode(frame)
    except BusError:
        return
    # Outside PING/PONG/MEET (whose padding and string tails are not kept) every
    # byte of an accepted frame is kept, but for the gossip and extension counts
    # that only those types use (Redis ignores them elsewhere; encode writes 0).
    if msg.type not in (m.PING, m.PONG, m.MEET):
        def unused_counts_cleared(f: bytes) -> bytes:
            return f[:14] + bytes(2) + f[16:2214] + bytes(2) + f[2216:]
        assert encode(msg) == unused_counts_cleared(frame)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=3000), max_size=6))
def test_frame_reader_any_bytes(chunks):
    r = FrameReader(max_frame=1 << 20)
    try:
        for chunk in chunks:
            for frame in r.feed(chunk):
                assert frame[:4] == b"RCmb" and len(frame) >= 2256
    except BusError:
        pass


# ---------------------------------------------------------------------------
# Real frames recorded from redis-server 7.0.15 and valkey-server 9.1
# (scripts/capture_cluster_bus.py; tests/data/cluster/README.md)

DATA = Path(__file__).resolve().parents[1] / "data" / "cluster"
MANIFEST = json.loads((DATA / "manifest.json").read_text())
RECORDED = [(e, (DATA / e["file"]).read_bytes()) for e in MANIFEST]


def test_recordings_present():
    impls = {e["impl"] for e in MANIFEST}
    assert impls == {"redis", "valkey"}
    for impl in impls:
        types = {e["type"] for e in MANIFEST if e["impl"] == impl}
        assert {m.MEET, m.PING, m.PUBLISH, m.UPDATE, m.FAIL, m.PUBLISHSHARD,
                m.FAILOVER_AUTH_REQUEST, m.FAILOVER_AUTH_ACK} <= types
    assert sorted(p.name for p in DATA.glob("*.bin")) == sorted(e["file"] for e in MANIFEST)


@pytest.mark.parametrize(("entry", "frame"), RECORDED, ids=[e["file"] for e in MANIFEST])
def test_recorded_frame(entry, frame):
    msg = decode(frame)
    assert encode(msg) == frame                   # byte for byte, unused bytes included
    assert msg.type == entry["type"]
    assert msg.sender.decode() == entry["myid"]
    assert msg.port == entry["port"] and msg.cport == entry["cport"] == entry["port"] + 10000
    replica = entry["node"] == "d"                # D is A's replica
    role = m.SLAVE if replica else m.MASTER
    assert msg.flags & (m.MYSELF | m.MASTER | m.SLAVE) == m.MYSELF | role
    assert not msg.flags & (m.PFAIL | m.FAIL_FLAG | m.HANDSHAKE)
    assert msg.slaveof == (entry["peers"]["a"].encode() if replica else None)
    assert msg.myip == b""
    assert msg.state in (m.STATE_OK, m.STATE_FAIL)  # FAIL in a node's first frames
    lo_hi = entry["slots"]
    assert slots_of(msg.myslots) == (list(range(lo_hi[0], lo_hi[1] + 1)) if lo_hi else [])
    # A replica sends its master's slots and config epoch.
    assert {"a": [0, 8191], "b": [8192, 16383], "c": [], "d": [0, 8191]}[entry["node"]] == lo_hi
    if entry["node"] in ("a", "d"):
        assert msg.config_epoch == 5                # CLUSTER SET-CONFIG-EPOCH 5 on A before meeting
    assert msg.current_epoch >= msg.config_epoch
    peers = {entry["peers"][k]: entry["peer_ports"][k] for k in entry["peers"]}
    peers[entry["probe"]] = entry["probe_port"]
    for g in msg.gossip:
        name = g.name.decode()
        assert name in peers and name != entry["myid"]
        assert g.port == peers[name] and g.cport == g.port + 10000 and g.ip == b"127.0.0.1"
        assert g.flags & (m.MASTER | m.SLAVE)
        if name != entry["peers"]["c"]:             # C is killed: PFAIL and FAIL reports about it
            assert not g.flags & (m.PFAIL | m.FAIL_FLAG)
    # A master that has had a replica carries MIGRATE_TO (a target for replica migration).
    migrate_to = m.MIGRATE_TO if entry["node"] == "a" else 0
    ext_types = [e.type for e in msg.extensions]
    assert len(set(ext_types)) == len(ext_types)
    for ext in msg.extensions:
        if ext.type == m.EXT_HOSTNAME:
            assert ext.value == entry["hostname"].encode() != b""
        elif ext.type == m.EXT_HUMAN_NODENAME:
            assert ext.value == b"alpha"
        elif ext.type == m.EXT_SHARDID:
            assert len(ext.value) == 40 and all(c in b"0123456789abcdef" for c in ext.value)
        elif ext.type == m.EXT_FORGOTTEN_NODE:
            assert ext.value.decode() == entry["peers"]["c"] and 0 < ext.ttl <= 60
        else:
            raise AssertionError(f"extension type {ext.type}")
    if entry["impl"] == "redis":
        # 7.0 sends the hostname extension, and EXT_DATA, exactly when it has a hostname.
        has_ext = msg.type in (m.PING, m.PONG, m.MEET) and entry["node"] == "a"
        assert ext_types == ([m.EXT_HOSTNAME] if has_ext else [])
        assert bool(msg.mflags & m.MF_EXT_DATA) == has_ext
        assert msg.flags & ~migrate_to == m.MYSELF | role
    else:
        # Valkey 9.1 advertises extensions and light headers in its flags, header and gossip.
        valkey_bits = m.EXTENSIONS_SUPPORTED | m.LIGHT_HDR_SUPPORTED | m.LIGHT_HDR_MODULE_SUPPORTED
        assert msg.flags & ~migrate_to == m.MYSELF | role | valkey_bits
        assert all(g.flags & valkey_bits == valkey_bits for g in msg.gossip)
        if msg.type in (m.PING, m.PONG, m.MEET):
            assert msg.mflags & m.MF_EXT_DATA        # Valkey always sets it
    if msg.type == m.PUBLISH:
        assert (msg.channel, msg.payload) == (b"ch", b"hello") and len(frame) == 2271
    if msg.type == m.PUBLISHSHARD:              # to A's shard: the probe played A's replica
        assert (msg.channel, msg.payload) == (entry["shard_channel"].encode(), b"hello")
        assert entry["node"] == "a"
    if msg.type in (m.FAILOVER_AUTH_REQUEST, m.FAILOVER_AUTH_ACK, m.MFSTART):
        assert len(frame) == 2256
    if msg.type == m.FAILOVER_AUTH_REQUEST:     # CLUSTER FAILOVER FORCE on D
        assert entry["node"] == "d" and msg.mflags & m.MF_FORCEACK
    if msg.type == m.FAILOVER_AUTH_ACK:         # B's vote for the probe's request
        assert entry["node"] == "b"
    if msg.type == m.FAIL:
        assert msg.about.decode() == entry["peers"]["c"]
    if msg.type == m.UPDATE:
        # The probe claimed slot 0 with config epoch 0; A holds it at epoch 5.
        assert msg.about.decode() == entry["peers"]["a"] and msg.update_epoch == 5
        assert slots_of(msg.update_slots) == list(range(0, 8192))


def test_recorded_stream_byte_at_a_time():
    data = b"".join(frame for _, frame in RECORDED)
    r = FrameReader()
    out = []
    for i in range(len(data)):
        out += r.feed(data[i:i + 1])
    assert out == [frame for _, frame in RECORDED]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(range(len(RECORDED))),
       st.lists(st.tuples(st.integers(0, 5000), st.integers(0, 255)), min_size=1, max_size=8),
       st.integers(-64, 64))
def test_decode_mutated_recordings(which, edits, cut):
    frame = mutated(RECORDED[which][1], edits, cut)
    try:
        decode(frame)
    except BusError:
        pass
    try:
        FrameReader().feed(bytes(frame))
    except BusError:
        pass
