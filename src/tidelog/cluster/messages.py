"""The cluster bus's messages as plain records, and the protocol's constants.

The bus is Redis Cluster's node-to-node protocol, version 1: every message
has a fixed 2256-byte header (big-endian integers, offsets pinned by Redis
since 7.0) followed by a body that depends on the type.  This module only
names things; :mod:`tidelog.cluster.bus` turns records into bytes and back.
Facts from Redis 7.0.15's ``cluster.h`` (read, not copied) and from packets
recorded from redis-server 7.0.15 and valkey-server 9.1.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

PROTOCOL_VERSION = 1
SIGNATURE = b"RCmb"
HEADER_LEN = 2256
"""Length of the fixed header, and the smallest valid message."""
GOSSIP_LEN = 104
"""Length of one gossip entry of PING, PONG and MEET."""
NAME_LEN = 40
"""A node id, 40 hex characters, no terminator."""
IP_LEN = 46
SLOT_BITMAP_LEN = 2048
"""16384 slots, one bit each: slot ``s`` is bit ``s & 7`` (LSB first) of byte ``s >> 3``."""
UPDATE_LEN = 4352
"""The length of an UPDATE message (the header and the largest body)."""
NULL_NAME = b"\0" * NAME_LEN

# Message types.
PING = 0
PONG = 1
MEET = 2
FAIL = 3
PUBLISH = 4
FAILOVER_AUTH_REQUEST = 5
FAILOVER_AUTH_ACK = 6
UPDATE = 7
MFSTART = 8
MODULE = 9
PUBLISHSHARD = 10
TYPE_NAMES = ("ping", "pong", "meet", "fail", "publish", "auth-req", "auth-ack", "update",
              "mfstart", "module", "publishshard")
"""The names CLUSTER INFO's ``cluster_stats_messages_<name>_sent`` lines use, by type."""

# Node flags, in the header (the sender's own) and in gossip entries (what
# the sender believes of that node: PFAIL and FAIL there are failure reports).
MASTER = 1
SLAVE = 2
PFAIL = 4
FAIL_FLAG = 8
MYSELF = 16
HANDSHAKE = 32
NOADDR = 64
MEET_FLAG = 128
MIGRATE_TO = 256
NOFAILOVER = 512
EXTENSIONS_SUPPORTED = 1024
"""Local only: the peer has set EXT_DATA, so it can read ping extensions."""
LIGHT_HDR_SUPPORTED = 2048
"""Valkey 8+ sets it (with 1024 and 4096) in its header and gossip flags: that
node takes PUBLISH in a light header.  Tidelog never sets it, so Valkey sends
it full headers; the state machine keeps only the bits it knows."""
LIGHT_HDR_MODULE_SUPPORTED = 4096
"""Valkey 8.1+: light headers for MODULE messages, and multi-meet."""

# mflags[0] of the header.
MF_PAUSED = 1
"""The sender is a master paused for a manual failover."""
MF_FORCEACK = 2
"""A FAILOVER_AUTH_REQUEST of a manual failover: vote even if the master is not failing."""
MF_EXT_DATA = 4
"""The sender reads ping extensions (and this message may carry some)."""

# Ping extension types (appended after the gossip section of PING/PONG/MEET).
EXT_HOSTNAME = 0
EXT_HUMAN_NODENAME = 1
EXT_FORGOTTEN_NODE = 2
EXT_SHARDID = 3

# Cluster state byte of the header.
STATE_OK = 0
STATE_FAIL = 1


@dataclass(slots=True)
class Gossip:
    """One gossip entry: what the sender knows of another node."""

    name: bytes
    ping_sent: int
    """Seconds (the sender's milliseconds / 1000), 0 when no ping is in flight."""
    pong_received: int
    """Seconds."""
    ip: bytes
    port: int
    cport: int
    flags: int
    pport: int = 0


@dataclass(slots=True)
class Extension:
    """One ping extension, decoded when its type is known.

    HOSTNAME, HUMAN_NODENAME: ``value`` is the string without its NUL
    padding.  SHARDID: ``value`` is the 40-byte shard id.  FORGOTTEN_NODE:
    ``value`` is the forgotten node's name and ``ttl`` the seconds to keep
    it out.  Any other type: ``value`` is the raw data (kept, never acted on).
    """

    type: int
    value: bytes
    ttl: int = 0


@dataclass(slots=True)
class Message:
    """One bus message: the header's fields, then the body of its type.

    Names follow Redis's ``clusterMsg``.  ``myslots`` is the 2048-byte
    bitmap as it travels.  ``slaveof`` is ``None`` for a master (all zero on
    the wire).  ``myip`` is ``b""`` when the sender announces none (then the
    receiver uses the socket's peer address).
    """

    type: int
    sender: bytes
    current_epoch: int = 0
    config_epoch: int = 0
    offset: int = 0
    myslots: bytes = bytes(SLOT_BITMAP_LEN)
    slaveof: bytes | None = None
    myip: bytes = b""
    port: int = 0
    pport: int = 0
    cport: int = 0
    flags: int = 0
    state: int = STATE_OK
    mflags: int = 0
    """``mflags[0]``: MF_PAUSED, MF_FORCEACK, MF_EXT_DATA."""
    # PING, PONG, MEET
    gossip: list[Gossip] = field(default_factory=list)
    extensions: list[Extension] = field(default_factory=list)
    # FAIL: the failing node; UPDATE: the node whose slots these are
    about: bytes = b""
    # PUBLISH, PUBLISHSHARD: channel and message; MODULE: the payload
    channel: bytes = b""
    payload: bytes = b""
    # UPDATE: that node's config epoch and slots
    update_epoch: int = 0
    update_slots: bytes = b""
    # MODULE
    module_id: int = 0
    module_type: int = 0


def slot_bit(bitmap: bytes | bytearray, slot: int) -> bool:
    """Whether ``slot`` is set in a slot bitmap. Cost: O(1)."""
    return bool(bitmap[slot >> 3] & (1 << (slot & 7)))


def bitmap_of(slots: Iterable[int]) -> bytes:
    """The 2048-byte bitmap of an iterable of slot numbers. Cost: O(len(slots) + 2048)."""
    out = bytearray(SLOT_BITMAP_LEN)
    for s in slots:
        out[s >> 3] |= 1 << (s & 7)
    return bytes(out)


def slots_of(bitmap: bytes | bytearray) -> list[int]:
    """The slot numbers set in a bitmap, ascending.  Cost: O(2048/8 + the
    slots set): 64 slots are looked at a time."""
    out = []
    data = bytes(bitmap)
    for start in range(0, len(data), 8):
        word = int.from_bytes(data[start:start + 8], "little")
        base = start << 3
        while word:
            low = word & -word
            out.append(base + low.bit_length() - 1)
            word ^= low
    return out
