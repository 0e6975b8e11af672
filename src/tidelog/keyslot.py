"""Key to hash slot, as Redis Cluster computes it.

``slot = CRC16(key') mod 16384`` where CRC16 is the XMODEM variant
(polynomial 0x1021, initial value 0, no reflection: ``b"123456789"`` gives
0x31C3) and ``key'`` is the hash tag: the bytes between the first ``{`` and
the first ``}`` after it when that span is not empty, else the whole key
(https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/,
"Hash tags").  ``binascii.crc_hqx`` is exactly that CRC, in C.
"""

from __future__ import annotations

from binascii import crc_hqx

SLOTS = 16384
"""The number of hash slots of a Redis Cluster."""


def key_slot(key: bytes) -> int:
    """The hash slot of ``key``. Cost: O(len(key))."""
    start = key.find(b"{")
    if start >= 0:
        end = key.find(b"}", start + 1)
        if end > start + 1:
            key = key[start + 1:end]
    return crc_hqx(key, 0) & 16383


def pattern_slot(pattern: bytes) -> int:
    """The one slot every key matching a glob ``pattern`` is in, or -1.

    A pattern pins a slot when it has a non-empty hash tag that holds no
    glob character and no ``\\`` escape before the tag closes (then
    every matching key has that tag), as Redis's ``patternHashSlot``.
    Cost: O(len(pattern)).
    """
    start = -1
    for i, c in enumerate(pattern):
        if c in b"*?[\\":
            return -1
        if c == 0x7B:  # {
            start = i
            break
    if start < 0:
        return -1
    end = pattern.find(b"}", start + 1)
    if end <= start + 1:
        return -1
    tag = pattern[start + 1:end]
    if any(c in b"*?[\\" for c in tag):
        return -1
    return crc_hqx(tag, 0) & 16383
