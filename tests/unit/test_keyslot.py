"""Key to slot: the CRC16 (XMODEM) and the hash-tag rule, checked against
known slots and against redis-py's own implementation (an independent one)."""

from hypothesis import given
from hypothesis import strategies as st
from redis.crc import key_slot as redis_py_key_slot

from tidelog.cluster.messages import bitmap_of, slot_bit, slots_of
from tidelog.keyslot import SLOTS, key_slot, pattern_slot


def test_known_slots():
    # Values from the cluster specification and redis-cli CLUSTER KEYSLOT.
    assert key_slot(b"123456789") == 0x31C3
    assert key_slot(b"foo") == 12182
    assert key_slot(b"{user1000}.following") == key_slot(b"user1000")
    assert key_slot(b"foo{}{bar}") == key_slot(b"foo{}{bar}")  # empty tag: the whole key
    assert key_slot(b"foo{}{bar}") != key_slot(b"bar")
    assert key_slot(b"foo{{bar}}zap") == key_slot(b"{bar")
    assert key_slot(b"foo{bar}{zap}") == key_slot(b"bar")


@given(st.binary(max_size=40) | st.from_regex(rb"\A[a-z{}]{0,12}\Z"))
def test_same_as_redis_py(key):
    assert key_slot(key) == redis_py_key_slot(key)
    assert 0 <= key_slot(key) < SLOTS


def test_pattern_slot():
    assert pattern_slot(b"{user1000}*") == key_slot(b"user1000")
    assert pattern_slot(b"a{tag}?x") == key_slot(b"tag")
    assert pattern_slot(b"*{tag}") == -1
    assert pattern_slot(b"{t*g}x") == -1
    assert pattern_slot(b"{}x") == -1
    assert pattern_slot(b"plain") == -1
    assert pattern_slot(b"a\\{b}") == -1


@given(st.sets(st.integers(0, SLOTS - 1)))
def test_bitmap_round_trip(slots):
    bitmap = bitmap_of(slots)
    assert slots_of(bitmap) == sorted(slots)
    assert all(slot_bit(bitmap, s) for s in slots)
    # LSB first: slot 0 is bit 0 of byte 0, slot 9 bit 1 of byte 1.
    assert bitmap_of([0, 9])[:2] == b"\x01\x02"
