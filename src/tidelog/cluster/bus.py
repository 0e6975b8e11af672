"""The cluster bus codec: :class:`~tidelog.cluster.messages.Message` records to bytes and back.

Pure functions, no I/O.  :func:`encode` writes a message as Redis 7.0
writes it (the fixed 2256-byte header, big-endian, then the body of the
type); :func:`decode` reads one whole frame and raises :class:`BusError`
exactly where Redis 7.0.15's ``clusterProcessPacket`` drops a packet: a
version other than 1, or a length that is not the exact length its type
and counts call for.  :class:`FrameReader` cuts a byte stream into frames
as ``clusterReadHandler`` does: the first 8 bytes carry the signature and
the total length, a bad signature or a length under the header's size ends
the link.

Layout (offsets inside the frame)::

    0 sig "RCmb" | 4 totlen u32 | 8 ver u16 | 10 port | 12 type | 14 count
    16 currentEpoch u64 | 24 configEpoch u64 | 32 offset u64 | 40 sender[40]
    80 myslots[2048] | 2128 slaveof[40] | 2168 myip[46] | 2214 extensions u16
    2216 unused[30] | 2246 pport | 2248 cport | 2250 flags | 2252 state u8
    2253 mflags[3] | 2256 body

PING, PONG and MEET carry ``count`` gossip entries of 104 bytes, then (when
``mflags[0]`` has EXT_DATA) ``extensions`` extensions, each ``length u32,
type u16, unused u16, data`` with ``length`` a multiple of 8 that counts
its own 8-byte head.
"""

from __future__ import annotations

import struct

from tidelog.cluster.messages import (
    EXT_FORGOTTEN_NODE,
    EXT_HOSTNAME,
    EXT_HUMAN_NODENAME,
    EXT_SHARDID,
    FAIL,
    FAILOVER_AUTH_ACK,
    FAILOVER_AUTH_REQUEST,
    GOSSIP_LEN,
    HEADER_LEN,
    MEET,
    MF_EXT_DATA,
    MFSTART,
    MODULE,
    NAME_LEN,
    NULL_NAME,
    PING,
    PONG,
    PROTOCOL_VERSION,
    PUBLISH,
    PUBLISHSHARD,
    SIGNATURE,
    UPDATE,
    UPDATE_LEN,
    Extension,
    Gossip,
    Message,
)

__all__ = [
    "DEFAULT_MAX_FRAME",
    "BusError",
    "FrameReader",
    "decode",
    "encode",
    "expected_length",
]


class BusError(Exception):
    """A frame to drop (from :func:`decode`) or a link to close (from :class:`FrameReader`)."""


_HEADER = struct.Struct(">4sIHHHHQQQ40s2048s40s46sH30xHHHBB2x")
_GOSSIP = struct.Struct(">40sII46sHHHH2x")
_EXT_HEAD = struct.Struct(">IH2x")
_PREFIX = struct.Struct(">4sI")
_PUBLISH_HEAD = struct.Struct(">II")
_UPDATE_BODY = struct.Struct(">Q40s2048s")
_MODULE_HEAD = struct.Struct("<Q")
"""``module_id`` travels in the sender's byte order (Redis does not swap it):
little-endian on every host we meet."""
_MODULE_REST = struct.Struct(">IB")
_FORGOTTEN_BODY = struct.Struct(">40sQ")
_NAME = struct.Struct("40s")
assert _HEADER.size == HEADER_LEN and _GOSSIP.size == GOSSIP_LEN

_GOSSIP_TYPES = frozenset((PING, PONG, MEET))
_HEADER_ONLY_TYPES = frozenset((FAILOVER_AUTH_REQUEST, FAILOVER_AUTH_ACK, MFSTART))
_PUBLISH_TYPES = frozenset((PUBLISH, PUBLISHSHARD))
_FAIL_LEN = HEADER_LEN + NAME_LEN
_PUBLISH_BASE = HEADER_LEN + 8
_MODULE_BASE = HEADER_LEN + 13

DEFAULT_MAX_FRAME = HEADER_LEN + 8 + 2 * 512 * 1024 * 1024
"""The largest frame a :class:`FrameReader` accepts by default: a PUBLISH
whose channel and message are both as long as a default ``proto-max-bulk-len``
(512 MiB) lets them be.  Redis itself sets no limit below the u32 total length."""


def _pad8(n: int) -> int:
    return (n + 7) & ~7


# ---------------------------------------------------------------------------
# Encoding


def _ext_bytes(ext: Extension) -> bytes:
    """One extension with its 8-byte head, padded to a multiple of 8."""
    t = ext.type
    if t == EXT_HOSTNAME or t == EXT_HUMAN_NODENAME:
        data = ext.value + b"\0"
    elif t == EXT_FORGOTTEN_NODE:
        data = _FORGOTTEN_BODY.pack(ext.value, ext.ttl)
    elif t == EXT_SHARDID:
        data = _NAME.pack(ext.value)
    else:
        data = ext.value
    size = _pad8(len(data))
    return _EXT_HEAD.pack(8 + size, t) + data.ljust(size, b"\0")


def encode(msg: Message) -> bytes:
    """The frame of ``msg``: header, then the body of its type.

    PING/PONG/MEET: the gossip entries, then the extensions (``mflags[0]``
    gets EXT_DATA when there are any, as a receiver walks them only then).
    An unknown type carries ``msg.payload`` as its body, as decoded.
    Cost: O(length of the frame).
    """
    t = msg.type
    mflags = msg.mflags
    count = 0
    ext_count = 0
    body: bytes | bytearray
    if t in _GOSSIP_TYPES:
        gossip = msg.gossip
        count = len(gossip)
        body = bytearray(GOSSIP_LEN * count)
        pack_into = _GOSSIP.pack_into
        at = 0
        for g in gossip:
            pack_into(body, at, g.name, g.ping_sent, g.pong_received, g.ip, g.port, g.cport,
                      g.flags, g.pport)
            at += GOSSIP_LEN
        if msg.extensions:
            ext_count = len(msg.extensions)
            mflags |= MF_EXT_DATA
            for ext in msg.extensions:
                body += _ext_bytes(ext)
    elif t == FAIL:
        body = _NAME.pack(msg.about)
    elif t in _PUBLISH_TYPES:
        body = _PUBLISH_HEAD.pack(len(msg.channel), len(msg.payload)) + msg.channel + msg.payload
    elif t == UPDATE:
        body = _UPDATE_BODY.pack(msg.update_epoch, msg.about, msg.update_slots)
    elif t == MODULE:
        body = (_MODULE_HEAD.pack(msg.module_id)
                + _MODULE_REST.pack(len(msg.payload), msg.module_type) + msg.payload)
    elif t in _HEADER_ONLY_TYPES:
        body = b""
    else:
        body = msg.payload
    header = _HEADER.pack(
        SIGNATURE, HEADER_LEN + len(body), PROTOCOL_VERSION, msg.port, t, count,
        msg.current_epoch, msg.config_epoch, msg.offset, msg.sender, msg.myslots,
        msg.slaveof or NULL_NAME, msg.myip, ext_count, msg.pport, msg.cport, msg.flags,
        msg.state, mflags)
    return header + body


# ---------------------------------------------------------------------------
# Decoding


def _cstr(raw: bytes) -> bytes:
    """``raw`` up to its first NUL (all of it when there is none)."""
    end = raw.find(b"\0")
    return raw if end < 0 else raw[:end]


def _decode_ext(t: int, data: bytes) -> Extension:
    if t == EXT_HOSTNAME or t == EXT_HUMAN_NODENAME:
        return Extension(t, _cstr(data))
    if t == EXT_FORGOTTEN_NODE:
        if len(data) < _FORGOTTEN_BODY.size:
            raise BusError("forgotten-node extension too short")
        name, ttl = _FORGOTTEN_BODY.unpack_from(data)
        return Extension(t, name, ttl)
    if t == EXT_SHARDID:
        if len(data) < NAME_LEN:
            raise BusError("shard-id extension too short")
        return Extension(t, data[:NAME_LEN])
    return Extension(t, data)


def decode(frame: bytes | bytearray | memoryview) -> Message:
    """The message in one whole frame.

    Raises :class:`BusError` for a frame Redis 7.0.15 drops: shorter than
    the header, a bad signature, a total length other than the frame's,
    a version other than 1, or a length that is not the exact length of its
    type (PING/PONG/MEET: header + gossip + the extensions, walked only when
    ``mflags[0]`` has EXT_DATA, each a multiple of 8 long, at least 8, inside
    the frame).  An unknown type decodes with its header only; its body is
    kept in ``payload``.  Stricter than Redis 7.0.15 in one corner no sender
    reaches: Redis reads an extension's length into 16 bits and lets a length
    of 0 through; here all 32 bits count and 0 is dropped.  A FORGOTTEN_NODE
    or SHARDID extension too short for its data is dropped too (7.0.15 does not
    know those types).  The header's gossip and extension counts of other types
    are ignored, as by Redis.  Cost: O(length of the frame).
    """
    frame = bytes(frame)
    size = len(frame)
    if size < HEADER_LEN:
        raise BusError("frame shorter than the header")
    (sig, totlen, ver, port, t, count, current_epoch, config_epoch, offset, sender, myslots,
     slaveof, myip, ext_count, pport, cport, flags, state, mflags) = _HEADER.unpack_from(frame)
    if sig != SIGNATURE:
        raise BusError("bad signature")
    if totlen != size:
        raise BusError("total length differs from the frame's")
    if ver != PROTOCOL_VERSION:
        raise BusError(f"protocol version {ver}")
    msg = Message(t, sender, current_epoch, config_epoch, offset, myslots,
                  None if slaveof == NULL_NAME else slaveof, _cstr(myip), port, pport, cport,
                  flags, state, mflags)
    if t in _GOSSIP_TYPES:
        at = HEADER_LEN + GOSSIP_LEN * count
        if at > size:
            raise BusError("gossip section longer than the frame")
        unpack_from = _GOSSIP.unpack_from
        gossip = msg.gossip
        for pos in range(HEADER_LEN, at, GOSSIP_LEN):
            name, ping_sent, pong_received, ip, gport, gcport, gflags, gpport = unpack_from(
                frame, pos)
            gossip.append(Gossip(name, ping_sent, pong_received, _cstr(ip), gport, gcport,
                                 gflags, gpport))
        if mflags & MF_EXT_DATA:
            exts = msg.extensions
            for _ in range(ext_count):
                if at + 8 > size:
                    raise BusError("extension past the end of the frame")
                length, etype = _EXT_HEAD.unpack_from(frame, at)
                if length % 8 or length < 8 or at + length > size:
                    raise BusError(f"extension of length {length}")
                exts.append(_decode_ext(etype, frame[at + 8:at + length]))
                at += length
        if at != size:
            raise BusError(f"{size} bytes for a message of {at}")
    elif t == FAIL:
        if size != _FAIL_LEN:
            raise BusError(f"FAIL of {size} bytes")
        msg.about = frame[HEADER_LEN:]
    elif t in _PUBLISH_TYPES:
        if size < _PUBLISH_BASE:
            raise BusError(f"PUBLISH of {size} bytes")
        channel_len, message_len = _PUBLISH_HEAD.unpack_from(frame, HEADER_LEN)
        if size != _PUBLISH_BASE + channel_len + message_len:
            raise BusError(f"PUBLISH of {size} bytes")
        msg.channel = frame[_PUBLISH_BASE:_PUBLISH_BASE + channel_len]
        msg.payload = frame[_PUBLISH_BASE + channel_len:]
    elif t == UPDATE:
        if size != UPDATE_LEN:
            raise BusError(f"UPDATE of {size} bytes")
        msg.update_epoch, msg.about, msg.update_slots = _UPDATE_BODY.unpack_from(frame, HEADER_LEN)
    elif t == MODULE:
        if size < _MODULE_BASE:
            raise BusError(f"MODULE of {size} bytes")
        (msg.module_id,) = _MODULE_HEAD.unpack_from(frame, HEADER_LEN)
        length, msg.module_type = _MODULE_REST.unpack_from(frame, HEADER_LEN + 8)
        if size != _MODULE_BASE + length:
            raise BusError(f"MODULE of {size} bytes")
        msg.payload = frame[_MODULE_BASE:]
    elif t in _HEADER_ONLY_TYPES:
        if size != HEADER_LEN:
            raise BusError(f"header-only message of {size} bytes")
    else:
        msg.payload = frame[HEADER_LEN:]
    return msg


def expected_length(msg: Message) -> int:
    """The total length :func:`encode` gives ``msg``, the one a receiver checks.

    Cost: O(gossip + extensions).
    """
    t = msg.type
    if t in _GOSSIP_TYPES:
        return (HEADER_LEN + GOSSIP_LEN * len(msg.gossip)
                + sum(len(_ext_bytes(e)) for e in msg.extensions))
    if t == FAIL:
        return _FAIL_LEN
    if t in _PUBLISH_TYPES:
        return _PUBLISH_BASE + len(msg.channel) + len(msg.payload)
    if t == UPDATE:
        return UPDATE_LEN
    if t == MODULE:
        return _MODULE_BASE + len(msg.payload)
    if t in _HEADER_ONLY_TYPES:
        return HEADER_LEN
    return HEADER_LEN + len(msg.payload)


# ---------------------------------------------------------------------------
# Framing


class FrameReader:
    """Cuts a bus link's byte stream into whole frames.

    ``feed`` takes whatever the socket gave and returns the frames it
    completed, in order; any tail waits for the next call.  As soon as the
    first 8 bytes of a frame are in, the signature must be ``RCmb`` and the
    total length between the header's size and ``max_frame``, else
    :class:`BusError` (the link is to be closed; the reader is then spent).
    Cost: O(len(data)) per call, amortised.
    """

    __slots__ = ("_buf", "_need", "max_frame")

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        self.max_frame = max_frame
        self._buf = bytearray()
        self._need = 0
        """Total length of the frame being read, 0 until its first 8 bytes are in."""

    def feed(self, data: bytes | bytearray | memoryview) -> list[bytes]:
        buf = self._buf
        buf += data
        frames: list[bytes] = []
        start = 0
        end = len(buf)
        while True:
            need = self._need
            if not need:
                if end - start < 8:
                    break
                sig, need = _PREFIX.unpack_from(buf, start)
                if sig != SIGNATURE:
                    raise BusError("bad signature")
                if need < HEADER_LEN:
                    raise BusError(f"frame of {need} bytes, under the header's {HEADER_LEN}")
                if need > self.max_frame:
                    raise BusError(f"frame of {need} bytes, over the limit of {self.max_frame}")
                self._need = need
            if end - start < need:
                break
            frames.append(bytes(buf[start:start + need]))
            start += need
            self._need = 0
        if start:
            del buf[:start]
        return frames

    @property
    def pending(self) -> int:
        """Bytes held for a frame not yet complete."""
        return len(self._buf)

