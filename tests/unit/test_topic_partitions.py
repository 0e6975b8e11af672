"""The partition streams of a topic (tidelog.client.partitions): names that
never change, one partition in each of P equal slot ranges (so P = k*N puts
k on each of N primaries split as redis-cli splits them), and the CRC-32
routing of message keys.  Pure functions: no server."""

from __future__ import annotations

import struct
import subprocess
import sys
import zlib
from collections import Counter
from pathlib import Path

import pytest

from tidelog.client.partitions import (
    MAX_PARTITIONS,
    Partition,
    partition_for,
    partition_key,
    partition_keys,
    partition_tags,
    partitions,
    slot_range,
)
from tidelog.keyslot import SLOTS, key_slot

COUNTS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 31, 64, 100, 128, 256]


def test_the_names_are_pinned():
    """Renaming a partition would orphan its data: these names are a contract."""
    assert partition_keys("orders", 1) == ["orders:{0.0}"]
    assert partitions("orders", 3) == [
        Partition(0, "orders:{0.1}", 1598), Partition(1, "orders:{1.0}", 8495),
        Partition(2, "orders:{2.0}", 14463)]
    assert partition_keys("orders", 8) == [
        "orders:{0.1}", "orders:{1.43}", "orders:{2.43}", "orders:{3.1}", "orders:{4.42}",
        "orders:{5.1}", "orders:{6.1}", "orders:{7.42}"]
    assert partition_key("clicks", 5, 8) == "clicks:{5.1}"


@pytest.mark.parametrize("count", COUNTS)
def test_each_of_the_equal_ranges_holds_exactly_one_partition(count):
    ranges = [slot_range(i, count) for i in range(count)]
    assert ranges[0].start == 0 and ranges[-1].stop == SLOTS
    for left, right in zip(ranges, ranges[1:]):
        assert left.stop == right.start  # contiguous, no overlap
    assert max(len(r) for r in ranges) - min(len(r) for r in ranges) <= 1
    for p in partitions("t", count):
        assert p.slot == key_slot(p.key.encode())
        assert [i for i, r in enumerate(ranges) if p.slot in r] == [p.index]


def test_the_tags_are_the_first_that_fit():
    """Tag i is "<i>.<n>" with n the smallest whose slot is in range i."""
    for count in (3, 8, 16):
        for i, tag in enumerate(partition_tags(count)):
            prefix, n = tag.split(".")
            assert prefix == str(i)
            fits = [m for m in range(int(n) + 1)
                    if key_slot(f"x{{{i}.{m}}}".encode()) in slot_range(i, count)]
            assert fits == [int(n)]


def test_names_do_not_depend_on_anything_but_topic_count_and_index():
    partition_tags.cache_clear()
    first = partitions("orders", 16)
    partition_tags.cache_clear()
    assert partitions("orders", 16) == first
    assert [k.replace("orders:", "payments:") for k in partition_keys("orders", 16)] == \
        partition_keys("payments", 16)


def redis_cli_split(masters: int) -> list[range]:
    """The slot ranges ``redis-cli --cluster create`` gives ``masters``
    primaries (7.0, clusterManagerCommandCreate): a single-precision
    ``16384 / masters`` per node, each last slot rounded from a double
    cursor, the last primary up to 16383."""
    per_node = struct.unpack("f", struct.pack("f", SLOTS / masters))[0]
    out, first, cursor = [], 0, 0.0
    for j in range(masters):
        value = cursor + per_node - 1
        last = int(value + 0.5) if value >= 0 else -int(-value + 0.5)  # C's lround
        if last > SLOTS or j == masters - 1:
            last = SLOTS - 1
        last = max(last, first)
        out.append(range(first, last + 1))
        first = last + 1
        cursor += per_node
    return out


@pytest.mark.parametrize("masters", range(1, 65))
def test_the_ranges_are_redis_clis_split(masters):
    assert [slot_range(j, masters) for j in range(masters)] == redis_cli_split(masters)


@pytest.mark.parametrize("masters", [1, 2, 3, 4, 5, 6, 7, 10])
@pytest.mark.parametrize("per_master", [1, 2, 3, 4])
def test_k_partitions_per_primary(masters, per_master):
    """With primaries holding redis-cli's ranges, P = k*N puts k on each."""
    owned = Counter()
    for p in partitions("orders", masters * per_master):
        owner = [j for j in range(masters) if p.slot in slot_range(j, masters)]
        assert len(owner) == 1
        owned[owner[0]] += 1
    assert owned == dict.fromkeys(range(masters), per_master)


@pytest.mark.parametrize("masters", [2, 3, 5, 7])
@pytest.mark.parametrize("count", [4, 5, 8, 10, 16, 17])
def test_other_counts_spread_as_evenly_as_the_ranges_allow(masters, count):
    owned = Counter(next(j for j in range(masters) if p.slot in slot_range(j, masters))
                    for p in partitions("t", count))
    assert sum(owned.values()) == count
    assert max(owned.values()) - min(owned.get(j, 0) for j in range(masters)) <= 2


def test_message_keys_route_by_crc32():
    for key in ("user-1", "user-2", "", "ünïcode", "a" * 300):
        for count in (1, 3, 8, 100):
            expected = zlib.crc32(key.encode()) % count
            assert partition_for(key, count) == expected
            assert partition_for(key.encode(), count) == expected
    # Pinned: CRC-32's check value (IEEE 802.3) is 0xCBF43926, so producers
    # in any language agree.
    assert partition_for("123456789", 1000) == 0xCBF43926 % 1000 == 262
    assert partition_for("user-1", 8) == 4


def test_message_keys_spread_evenly():
    counts = Counter(partition_for(f"customer:{i}", 8) for i in range(8000))
    assert len(counts) == 8
    assert all(900 <= n <= 1100 for n in counts.values()), counts


@pytest.mark.parametrize("count", [0, -1, MAX_PARTITIONS + 1, 2.0, "3"])
def test_bad_counts(count):
    with pytest.raises(ValueError, match="number of partitions"):
        partitions("t", count)
    with pytest.raises(ValueError, match="number of partitions"):
        partition_for("k", count)


@pytest.mark.parametrize("topic", ["", "a{b", "stream:topic:{orders}", "x}", b"orders"])
def test_bad_topics(topic):
    """Braces would make the topic's own tag the hash tag of every partition."""
    with pytest.raises(ValueError):
        partitions(topic, 4)


def test_bad_indexes():
    with pytest.raises(ValueError, match="partition 4 of 4"):
        partition_key("t", 4, 4)
    with pytest.raises(ValueError, match="partition -1 of 4"):
        slot_range(-1, 4)


def test_importing_the_names_does_not_import_redis_py():
    src = Path(__file__).resolve().parents[2] / "src"
    code = ("import sys; import tidelog.client.partitions as p; p.partitions('t', 4); "
            "print('redis' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": str(src)}, timeout=60)
    assert out.stdout.strip() == "False"
