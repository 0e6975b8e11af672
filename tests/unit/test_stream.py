"""The stream data type: node bytes, the split rule, trimming, deletion, ranges.

Expected node bytes marked "redis-server 7.0.15" were read from that server's
DUMP of the same command sequence (RDB type 19, node blobs stored raw); the
others are derived by hand from the layout drawn in ``stream.py``.
"""

from __future__ import annotations

import hashlib
import random
from itertools import islice

import pytest

from tidelog.ids import MAX_ID, MIN_ID, UINT64_MAX, StreamID
from tidelog.types import listpack
from tidelog.types.stream import CorruptStream, Stream

I = StreamID  # noqa: E741 - short for the many IDs below
NODE_SIZES = [1, 2, 4, 100]


def entries(s: Stream, rev: bool = False) -> list[tuple[StreamID, list[bytes]]]:
    return list(s.range(MIN_ID, MAX_ID, rev=rev))


def build(n: int, max_entries: int = 100, max_bytes: int = 0, start: int = 1) -> Stream:
    s = Stream()
    for i in range(start, start + n):
        s.append(I(i, 0), [b"f", b"v%d" % i], max_entries, max_bytes)
    s.check()
    return s


def node_sizes(s: Stream) -> list[int]:
    """Entries (live + deleted) per node, read from the node bytes."""
    sizes = []
    for _, blob in s.nodes():
        elements = listpack.unpack(blob)
        sizes.append(elements[0] + elements[1])
    return sizes


def run(s: Stream, commands: list[tuple], max_entries: int = 100, max_bytes: int = 4096) -> None:
    for command, *args in commands:
        if command == "add":
            s.append(I(*args[0]), args[1], max_entries, max_bytes)
        elif command == "del":
            s.delete(I(*args[0]))
        elif command == "minid=":
            s.trim_minid(I(*args[0]), False, 0)
        s.check()


# -- node bytes ---------------------------------------------------------------------


BASIC = [
    ("add", (1, 1), [b"name", b"alice", b"age", b"30"]),
    ("add", (1, 2), [b"name", b"bob", b"age", b"31"]),
    ("add", (5, 0), [b"city", b"paris"]),
    ("add", (5, 1), [b"name", b"", b"age", b"-7"]),
    ("add", (6, 0), [b"name", b"x", b"age", b"9223372036854775807"]),
    ("del", (1, 2)),
]

# fmt: off
BASIC_NODE = bytes.fromhex(
    "75000000" "2500"  # 117 bytes, 37 elements
    # master entry: count 4, deleted 1, 2 fields "name" "age", terminator 0
    "0401" "0101" "0201" "846e616d6505" "8361676504" "0001"
    # 1-1: SAMEFIELDS, deltas 0 0, "alice" 30, lp-count 5
    "0201" "0001" "0001" "85616c69636506" "1e01" "0501"
    # 1-2: SAMEFIELDS|DELETED, deltas 0 1, "bob" 31, lp-count 5
    "0301" "0001" "0101" "83626f6204" "1f01" "0501"
    # 5-0: own fields, deltas 4 -1, 1 field "city" "paris", lp-count 3+1+2
    "0001" "0401" "dfff02" "0101" "846369747905" "85706172697306" "0601"
    # 5-1: SAMEFIELDS, deltas 4 0, "" -7, lp-count 5
    "0201" "0401" "0001" "8001" "dff902" "0501"
    # 6-0: SAMEFIELDS, deltas 5 -1, "x" int64 max, lp-count 5
    "0201" "0501" "dfff02" "817802" "f4ffffffffffffff7f09" "0501"
    "ff"
)
# fmt: on


def test_node_bytes_by_hand() -> None:  # also what redis-server 7.0.15 writes
    s = Stream()
    run(s, BASIC)
    assert list(s.nodes()) == [(I(1, 1), BASIC_NODE)]
    assert s.length == 4
    assert (s.first_id, s.last_id, s.max_deleted_entry_id, s.entries_added) == (
        I(1, 1),
        I(6, 0),
        I(1, 2),
        5,
    )
    assert entries(s) == [
        (I(1, 1), [b"name", b"alice", b"age", b"30"]),
        (I(5, 0), [b"city", b"paris"]),
        (I(5, 1), [b"name", b"", b"age", b"-7"]),
        (I(6, 0), [b"name", b"x", b"age", b"9223372036854775807"]),
    ]


def test_wrapping_deltas_match_redis() -> None:  # redis-server 7.0.15
    m = UINT64_MAX
    s = Stream()
    run(
        s,
        [
            ("add", (1, m), [b"f", b"v"]),
            ("add", (2, 0), [b"f", b"01"]),  # seq delta 0 - m wraps to +1
            ("add", (2**63 + 2, 3), [b"f", b"-0"]),  # ms delta above int64 max: negative
            ("add", (m, m), [b"f", b"+1"]),
        ],
    )
    assert list(s.nodes()) == [
        (
            I(1, m),
            bytes.fromhex(
                "4a0000001900040100010101816602000102010001000181760204010201010101018230310304"
                "010201f40100000000000080090401822d300304010201dffe020001822b31030401ff"
            ),
        )
    ]
    assert [e[0] for e in entries(s)] == [I(1, m), I(2, 0), I(2**63 + 2, 3), I(m, m)]
    assert [e[1][1] for e in entries(s)] == [b"v", b"01", b"-0", b"+1"]


def test_exact_minid_trim_keeps_an_empty_node_like_redis() -> None:  # redis-server 7.0.15
    s = Stream()
    run(
        s,
        [
            ("add", (1, 0), [b"a", b"1"]),
            ("add", (2, 0), [b"a", b"2"]),
            ("add", (3, 0), [b"a", b"3"]),
            ("del", (3, 0)),
            ("minid=", (3, 0)),
        ],
    )
    assert s.length == 0
    assert s.node_count == 1  # Redis's XINFO says radix-tree-keys 1
    assert (s.first_id, s.last_id, s.max_deleted_entry_id) == (MIN_ID, I(3, 0), I(3, 0))
    assert s.first_entry() is None and s.last_entry() is None
    run(s, [("add", (4, 0), [b"b", b"4"])])
    assert s.node_count == 1  # appended into the same node
    assert s.first_id == I(4, 0)
    assert list(s.nodes()) == [
        (
            I(1, 0),
            bytes.fromhex(
                "3f0000001b000101030101018161020001030100010001010104010301010100010201040103"
                "010201000103010401000103010001010181620204010601ff"
            ),
        )
    ]


def sha(blob: bytes) -> str:
    return hashlib.sha256(blob).hexdigest()


def test_two_byte_counters_match_redis() -> None:  # redis-server 7.0.15
    s = Stream()
    for i in range(1, 301):
        s.append(I(i, 0), [b"f", b"%d" % (i * 1000)], 0, 0)
    for i in range(1, 200, 3):
        assert s.delete(I(i, 0))
        s.check()
    [(key, blob)] = list(s.nodes())
    assert key == I(1, 0) and len(blob) == 4055
    assert sha(blob) == "bad1eef59af1c522ffe570aa8b6233868021ded6cad71319d8a19b568b90230c"


def test_byte_limit_splits_match_redis() -> None:  # redis-server 7.0.15
    s = Stream()
    for i in range(1, 41):
        s.append(I(i, 0), [b"f", b"x" * (i * 7 % 40)], 100, 100)
    s.check()
    keys = [k for k, _ in s.nodes()]
    assert keys == [I(k, 0) for k in (1, 4, 6, 10, 12, 15, 17, 20, 22, 25, 27, 29, 32, 34, 37, 39)]
    assert (
        sha(b"".join(blob for _, blob in s.nodes()))
        == "a8fc6d66cbfb81f0eda69555640b2c5eb6bd2fc8d08542e56d8e3508a7a5201d"
    )


def test_long_strings_match_redis() -> None:  # redis-server 7.0.15
    s = Stream()
    sizes = [63, 64, 125, 126, 4095, 4096, 16378, 16377]
    for i in range(4):
        a, b = b"abcdefgh"[2 * i : 2 * i + 2]
        fv = [b"f", bytes([a]) * sizes[2 * i], b"g", bytes([b]) * sizes[2 * i + 1]]
        s.append(I(i + 1, 0), fv, 100, 0)
        s.check()
    [(_, blob)] = list(s.nodes())
    assert len(blob) == 41415
    assert sha(blob) == "8dcf724b0b367dc048fec3758a71375f4e274744add14248bbdef59020559981"
    assert [len(v) for _, fv in entries(s) for v in fv[1::2]] == sizes


# -- the split rule -----------------------------------------------------------------


@pytest.mark.parametrize("size", NODE_SIZES)
def test_split_by_entries(size: int) -> None:
    s = build(250, max_entries=size)
    full, rest = divmod(250, size)
    assert s.node_count == full + (1 if rest else 0)
    assert node_sizes(s) == [size] * full + ([rest] if rest else [])
    assert [k for k, _ in s.nodes()] == [I(i, 0) for i in range(1, 251, size)]


def test_deleted_entries_count_towards_the_split() -> None:
    s = build(3, max_entries=4)
    s.delete(I(2, 0))
    s.append(I(4, 0), [b"f", b"v"], 4, 0)
    assert s.node_count == 1  # 3 live + 1 deleted
    s.append(I(5, 0), [b"f", b"v"], 4, 0)
    assert s.node_count == 2
    s.check()


def test_node_limits_are_read_on_each_append() -> None:
    s = build(10, max_entries=100)
    s.append(I(11, 0), [b"f", b"v"], 5, 0)  # tail already holds 10 >= 5
    s.append(I(12, 0), [b"f", b"v"], 100, 0)
    assert node_sizes(s) == [10, 2]
    s.check()


def test_split_by_bytes_boundary() -> None:
    s = build(1)
    tail_bytes = len(next(s.nodes())[1])
    fv = [b"f", b"12345"]
    added = len(b"f") + len(b"12345")
    s.append(I(2, 0), fv, 0, tail_bytes + added + 1)  # below the limit: same node
    assert s.node_count == 1
    tail_bytes = len(next(s.nodes())[1])
    s.append(I(3, 0), fv, 0, tail_bytes + added)  # reaches the limit: new node
    assert s.node_count == 2
    s.check()


@pytest.mark.parametrize("max_bytes", [0, -1, (1 << 30) + 1, 1 << 40])
def test_byte_limit_zero_or_huge_means_one_gib(max_bytes: int) -> None:
    s = Stream()
    for i in range(1, 21):
        s.append(I(i, 0), [b"f", b"x" * 10000], 0, max_bytes)
    assert s.node_count == 1
    s.check()


def test_a_single_entry_can_exceed_the_byte_limit() -> None:
    s = Stream()
    s.append(I(1, 0), [b"f", b"x" * 500], 0, 100)
    s.append(I(2, 0), [b"f", b"x" * 500], 0, 100)
    assert s.node_count == 2
    s.check()


def _same_streams(a: Stream, b: Stream) -> None:
    a.check()
    b.check()
    assert list(a.nodes()) == list(b.nodes())
    assert (a.length, a.first_id, a.last_id, a.entries_added, a.max_deleted_entry_id) == (
        b.length, b.first_id, b.last_id, b.entries_added, b.max_deleted_entry_id)
    assert entries(a) == entries(b)


@pytest.mark.parametrize(("max_entries", "max_bytes"),
                         [(1, 0), (2, 0), (4, 0), (100, 0), (0, 0), (100, 60), (0, 300)])
@pytest.mark.parametrize("seed", [1, 2])
def test_extend_equals_appends_one_by_one(max_entries: int, max_bytes: int, seed: int) -> None:
    rng = random.Random(seed)
    one, many = Stream(), Stream()
    ms, seq = 1, 0
    for round_ in range(12):
        ids, fvs = [], []
        for _ in range(rng.choice([0, 1, 2, 5, 40, 200])):
            ms, seq = (ms, seq + 1) if rng.random() < 0.5 else (ms + rng.randrange(1, 3000), 0)
            fields = [b"f", b"%d" % ms, b"g", b"y" * rng.randrange(0, 50)]
            if rng.random() < 0.2:
                fields = [b"other", b"x" * rng.randrange(0, 200)]
            ids.append(I(ms, seq))
            fvs.append(fields)
        for id, fv in zip(ids, fvs):
            one.append(id, fv, max_entries, max_bytes)
        many.extend(ids, fvs, max_entries, max_bytes)
        _same_streams(one, many)
        if round_ % 3 == 1 and one.length > 3:  # deletions and trims between the runs
            victim = entries(one)[rng.randrange(one.length)][0]
            assert one.delete(victim) and many.delete(victim)
            if round_ % 2:
                one.trim_maxlen(one.length - 2, False, 0)
                many.trim_maxlen(many.length - 2, False, 0)
            _same_streams(one, many)


def test_extend_checks_everything_first() -> None:
    s = build(3)
    before = list(s.nodes())
    for ids, fvs in (
        ([I(4, 0), I(4, 0)], [[b"f", b"v"], [b"f", b"v"]]),  # not increasing
        ([I(3, 0)], [[b"f", b"v"]]),  # not above last_id
        ([I(5, 0), I(6, 0)], [[b"f", b"v"], [b"f"]]),  # not pairs
        ([(7, 0)], [[b"f", b"v"]]),  # not a StreamID
        ([I(8, 0)], []),  # lengths differ
    ):
        with pytest.raises(ValueError):
            s.extend(ids, fvs, 100, 0)
        assert list(s.nodes()) == before and s.last_id == I(3, 0) and s.length == 3
    s.extend([], [], 100, 0)
    assert list(s.nodes()) == before
    empty = Stream()
    empty.extend([I(1, 1), I(1, 2)], [[b"a", b"1"], [b"a", b"2"]], 100, 0)
    assert empty.first_id == I(1, 1) and empty.entries_added == 2
    empty.check()
    # onto a tail adopted from a snapshot (immutable bytes, not indexed yet)
    loaded = [Stream.from_nodes(list(build(5, max_entries=4).nodes()), 5, I(5, 0))
              for _ in range(2)]
    ids = [I(i, 0) for i in range(6, 12)]
    fvs = [[b"f", b"v%d" % i] for i in range(6, 12)]
    for id, fv in zip(ids, fvs):
        loaded[0].append(id, fv, 4, 0)
    loaded[1].extend(ids, fvs, 4, 0)
    _same_streams(*loaded)


# -- check() after every mutation -----------------------------------------------------


@pytest.mark.parametrize("size", NODE_SIZES)
@pytest.mark.parametrize("seed", [1, 2])
def test_check_after_every_mutation(size: int, seed: int) -> None:
    rng = random.Random(seed)
    s = Stream()
    model: list[tuple[StreamID, list[bytes]]] = []
    ms = seq = 0
    fieldsets = [[b"f"], [b"a", b"b"], [b"f", b"g", b"h"], [b"17"]]
    fields = fieldsets[0]
    for step in range(400):
        r = rng.random()
        if r < 0.6:
            if rng.random() < 0.3:
                ms += rng.randint(1, 1000)
                seq = rng.choice([0, 0, 5, UINT64_MAX - 2])
            else:
                seq += 1
            if seq > UINT64_MAX:
                ms, seq = ms + 1, 0
            if rng.random() < 0.2:
                fields = rng.choice(fieldsets)
            fv = [x for f in fields for x in (f, b"%d" % rng.randint(-5000, 5000))]
            s.append(I(ms, seq), fv, size, rng.choice([0, 4096, 60]))
            model.append((I(ms, seq), fv))
        elif r < 0.8 and model:
            victim = rng.choice(model)[0]
            assert s.delete(victim)
            assert not s.delete(victim)
            model = [e for e in model if e[0] != victim]
        elif r < 0.9:
            maxlen = rng.randint(0, len(model) + 1)
            removed = s.trim_maxlen(maxlen, False, 0)
            assert removed == max(0, len(model) - maxlen)
            model = model[removed:]
        else:
            approx = rng.random() < 0.5
            minid = rng.choice(model)[0] if model else I(ms, seq)
            removed = s.trim_minid(minid, approx, rng.choice([0, 3]) if approx else 0)
            if not approx:
                assert all(e[0] >= minid for e in model[removed:])
            model = model[removed:]
        s.check()
        if step % 20 == 0:
            assert entries(s) == model
            assert entries(s, rev=True) == model[::-1]
    assert entries(s) == model


def test_counter_encodings_grow_and_shrink() -> None:
    s = Stream()
    for i in range(1, 4200):
        s.append(I(i, 0), [b"f", b"v"], 0, 0)
        if i in (127, 128, 129, 4095, 4096, 4097):
            s.check()
    for i in (5, 6, 7):
        s.delete(I(i, 0))
    s.check()
    for i in range(8, 4100):  # live count falls through 4096 and 128
        s.delete(I(i, 0))
    s.check()
    assert s.length == 104 and s.node_count == 1
    first_five = [e[0].ms for e in islice(s.range(MIN_ID, MAX_ID), 5)]
    assert first_five == [1, 2, 3, 4, 4100]


# -- deletion -------------------------------------------------------------------------


def test_delete_then_range_skips() -> None:
    s = build(10, max_entries=4)
    assert s.delete(I(3, 0))
    assert s.delete(I(6, 0))
    assert not s.delete(I(6, 0))  # already deleted
    assert not s.delete(I(11, 0))  # never there
    assert not s.delete(I(0, 5))  # before the first node
    assert not s.delete(I(3, 1))  # between entries
    s.check()
    ids = [e[0].ms for e in entries(s)]
    assert ids == [1, 2, 4, 5, 7, 8, 9, 10]
    assert [e[0].ms for e in entries(s, rev=True)] == ids[::-1]
    assert s.get(I(3, 0)) is None
    assert s.get(I(4, 0)) == [b"f", b"v4"]
    assert s.length == 8 and s.max_deleted_entry_id == I(6, 0)
    s.delete(I(2, 0))
    assert s.max_deleted_entry_id == I(6, 0)  # only raised


def test_deleting_every_entry_of_a_node_removes_it() -> None:
    s = build(12, max_entries=4)
    for i in (5, 7, 6):
        s.delete(I(i, 0))
        s.check()
    assert s.node_count == 3
    s.delete(I(8, 0))
    s.check()
    assert s.node_count == 2
    assert [k for k, _ in s.nodes()] == [I(1, 0), I(9, 0)]
    assert [e[0].ms for e in entries(s)] == [1, 2, 3, 4, 9, 10, 11, 12]


def test_deleting_the_first_entry_moves_first_id() -> None:
    s = build(6, max_entries=2)
    s.delete(I(1, 0))
    assert s.first_id == I(2, 0)
    s.delete(I(3, 0))
    assert s.first_id == I(2, 0)
    s.delete(I(2, 0))
    assert s.first_id == I(4, 0)
    for i in (4, 5, 6):
        s.delete(I(i, 0))
    assert s.length == 0 and s.node_count == 0
    assert (s.first_id, s.last_id, s.max_deleted_entry_id, s.entries_added) == (
        MIN_ID,
        I(6, 0),
        I(6, 0),
        6,
    )
    s.check()
    s.append(I(7, 0), [b"f", b"v"], 2, 0)
    assert s.first_id == I(7, 0)
    s.check()


def test_deleting_the_tail_node_then_appending() -> None:
    s = build(5, max_entries=4)
    s.delete(I(5, 0))
    assert s.node_count == 1
    s.append(I(6, 0), [b"f", b"v"], 4, 0)  # sealed node is full: a new one
    assert [k for k, _ in s.nodes()] == [I(1, 0), I(6, 0)]
    s.check()


# -- trimming -------------------------------------------------------------------------


def test_approximate_maxlen_removes_whole_nodes() -> None:
    s = build(250)
    assert s.trim_maxlen(10, approx=True, limit=10000) == 200
    assert s.length == 50 and s.node_count == 1
    assert s.first_id == I(201, 0)
    assert s.trim_maxlen(10, approx=True, limit=10000) == 0
    s.check()


def test_exact_maxlen() -> None:
    s = build(250)
    assert s.trim_maxlen(10, approx=False, limit=0) == 240
    assert s.length == 10 and s.node_count == 1
    assert [e[0].ms for e in entries(s)] == list(range(241, 251))
    assert s.first_id == I(241, 0)
    assert s.max_deleted_entry_id == MIN_ID  # trimming does not raise it
    assert node_sizes(s) == [50]  # 40 flagged deleted in the last node
    s.check()


def test_exact_maxlen_stops_inside_the_first_node_it_cannot_remove() -> None:
    s = build(10, max_entries=4)  # nodes 1-4, 5-8, 9-10
    assert s.trim_maxlen(5, approx=False, limit=0) == 5
    assert [k for k, _ in s.nodes()] == [I(5, 0), I(9, 0)]
    assert [e[0].ms for e in entries(s)] == [6, 7, 8, 9, 10]
    s.check()


def test_maxlen_zero_removes_everything() -> None:
    s = build(25, max_entries=4)
    assert s.trim_maxlen(0, approx=True, limit=0) == 25
    assert s.length == 0 and s.node_count == 0 and s.first_id == MIN_ID
    assert s.last_id == I(25, 0)
    s.check()


def test_trim_limit() -> None:
    s = build(250)
    assert s.trim_maxlen(0, approx=True, limit=99) == 0  # the first node alone exceeds it
    assert s.trim_maxlen(0, approx=True, limit=150) == 100
    s.check()
    assert s.length == 150
    assert s.trim_maxlen(0, approx=True, limit=200) == 150  # 100 + 50 <= 200
    assert s.length == 0
    s.check()


def test_trim_limit_counts_live_entries_only() -> None:
    s = build(8, max_entries=4)
    s.delete(I(1, 0))
    s.delete(I(2, 0))
    assert s.trim_maxlen(0, approx=True, limit=2) == 2  # node 1 has 2 live entries
    assert s.node_count == 1
    s.check()


def test_approximate_minid() -> None:
    s = build(250)
    assert s.trim_minid(I(150, 0), approx=True, limit=0) == 100
    assert s.first_id == I(101, 0)
    assert s.trim_minid(I(201, 0), approx=True, limit=0) == 100
    assert s.trim_minid(I(201, 0), approx=True, limit=0) == 0  # node 201.. ends at 250
    assert s.length == 50
    s.check()


def test_exact_minid() -> None:
    s = build(250)
    assert s.trim_minid(I(150, 0), approx=False, limit=0) == 149
    assert s.first_id == I(150, 0)
    assert [e[0].ms for e in islice(entries(s), 3)] == [150, 151, 152]
    assert s.trim_minid(I(100, 0), approx=False, limit=0) == 0
    assert s.trim_minid(I(1000, 0), approx=False, limit=0) == 101
    assert s.length == 0 and s.node_count == 0
    s.check()


def test_minid_uses_the_last_entry_even_when_deleted() -> None:
    s = build(8, max_entries=4)
    s.delete(I(4, 0))  # node 1-4's last entry is deleted, still 4-0
    assert s.trim_minid(I(4, 0), approx=True, limit=0) == 0
    assert s.trim_minid(I(4, 1), approx=True, limit=0) == 3
    assert s.node_count == 1
    s.check()


def test_trimming_an_empty_stream() -> None:
    s = Stream()
    assert s.trim_maxlen(0, False, 0) == 0
    assert s.trim_minid(MAX_ID, True, 0) == 0
    s.check()


# -- ranges ---------------------------------------------------------------------------


@pytest.mark.parametrize("size", NODE_SIZES)
def test_range_bounds(size: int) -> None:
    s = Stream()
    ids = [I(ms, seq) for ms in range(1, 11) for seq in range(3)]
    for i, id in enumerate(ids):
        s.append(id, [b"n", b"%d" % i], size, 0)
    for start, end in [
        (MIN_ID, MAX_ID),
        (I(3, 0), I(3, UINT64_MAX)),
        (I(3, 1), I(7, 1)),
        (I(2, 5), I(4, 0)),
        (I(0, 0), I(0, 9)),
        (I(11, 0), MAX_ID),
        (I(5, 2), I(5, 2)),
        (I(5, 3), I(5, 3)),
    ]:
        expect = [id for id in ids if start <= id <= end]
        assert [e[0] for e in s.range(start, end)] == expect
        assert [e[0] for e in s.range(start, end, rev=True)] == expect[::-1]
    assert list(s.range(I(5, 0), I(4, 0))) == []
    assert list(s.range(I(5, 0), I(4, 0), rev=True)) == []


def test_range_on_an_empty_stream() -> None:
    s = Stream()
    assert list(s.range(MIN_ID, MAX_ID)) == []
    assert list(s.range(MIN_ID, MAX_ID, rev=True)) == []
    assert s.get(I(1, 0)) is None
    assert s.first_entry() is None and s.last_entry() is None


def test_first_and_last_entries_skip_deleted_ones() -> None:
    s = build(9, max_entries=4)
    for i in (1, 2, 9, 8):
        s.delete(I(i, 0))
    assert s.first_entry() == (I(3, 0), [b"f", b"v3"])
    assert s.last_entry() == (I(7, 0), [b"f", b"v7"])


def test_range_is_lazy_and_seeks_by_bisect() -> None:
    source = build(2000, max_entries=10)
    loaded = Stream.from_nodes(source.nodes(), source.length, source.last_id, source.first_id)
    assert all(node.offs is None for node in loaded._nodes)  # adopted, not decoded
    taken = list(islice(loaded.range(I(1234, 0), MAX_ID), 5))
    assert [e[0].ms for e in taken] == [1234, 1235, 1236, 1237, 1238]
    indexed = [node.key for node in loaded._nodes if node.offs is not None]
    assert indexed == [I(1231, 0)]  # only the node holding the entries was decoded
    taken = list(islice(loaded.range(MIN_ID, I(777, 0), rev=True), 3))
    assert [e[0].ms for e in taken] == [777, 776, 775]
    assert len([n for n in loaded._nodes if n.offs is not None]) == 2


def test_range_sees_appends_and_deletes_while_suspended() -> None:
    s = build(6, max_entries=4)
    it = s.range(MIN_ID, MAX_ID)
    assert next(it)[0] == I(1, 0)
    s.delete(I(2, 0))
    s.delete(I(5, 0))
    s.append(I(7, 0), [b"f", b"v7"], 4, 0)
    assert [e[0].ms for e in it] == [3, 4, 6, 7]


def test_entries_with_their_own_fields() -> None:
    s = Stream()
    s.append(I(1, 0), [b"a", b"1"], 100, 0)
    s.append(I(2, 0), [b"a", b"1", b"a", b"2"], 100, 0)  # duplicate fields kept
    s.append(I(3, 0), [b"b", b"1"], 100, 0)
    s.append(I(4, 0), [b"a", b"x"], 100, 0)
    s.append(I(5, 0), [], 100, 0)
    s.check()
    assert entries(s) == [
        (I(1, 0), [b"a", b"1"]),
        (I(2, 0), [b"a", b"1", b"a", b"2"]),
        (I(3, 0), [b"b", b"1"]),
        (I(4, 0), [b"a", b"x"]),
        (I(5, 0), []),
    ]


# -- snapshots --------------------------------------------------------------------------


def same_stream(a: Stream, b: Stream) -> None:
    assert list(a.nodes()) == list(b.nodes())
    assert (a.length, a.last_id, a.first_id, a.max_deleted_entry_id, a.entries_added) == (
        b.length,
        b.last_id,
        b.first_id,
        b.max_deleted_entry_id,
        b.entries_added,
    )
    assert entries(a) == entries(b)
    assert entries(a, rev=True) == entries(b, rev=True)


@pytest.mark.parametrize("size", NODE_SIZES)
def test_from_nodes_round_trip(size: int) -> None:
    s = build(50, max_entries=size)
    for i in range(1, 50, 7):
        s.delete(I(i, 0))
    s.trim_maxlen(30, False, 0)
    copy = Stream.from_nodes(
        s.nodes(), s.length, s.last_id, s.first_id, s.max_deleted_entry_id, s.entries_added
    )
    copy.check()
    same_stream(copy, s)
    for target in (s, copy):  # both go on the same way
        target.append(I(60, 0), [b"f", b"v60"], size, 0)
        target.delete(I(45, 0))
        target.trim_maxlen(20, True, 0)
        target.check()
    same_stream(copy, s)


def test_from_nodes_defaults_for_old_snapshots() -> None:
    s = build(10, max_entries=4)
    s.delete(I(1, 0))
    copy = Stream.from_nodes(s.nodes(), s.length, s.last_id)
    assert copy.first_id == I(2, 0)
    assert copy.entries_added == 9 and copy.max_deleted_entry_id == MIN_ID
    copy.check()
    empty = Stream.from_nodes([], 0, I(5, 0))
    assert (empty.length, empty.first_id, empty.last_id) == (0, MIN_ID, I(5, 0))
    empty.check()


def test_nodes_are_bytes_snapshots() -> None:
    s = build(3)
    [(_, before)] = list(s.nodes())
    assert type(before) is bytes
    s.append(I(4, 0), [b"f", b"v"], 100, 0)
    assert next(s.nodes())[1] != before  # the snapshot did not change under us


def corrupt_variants() -> list[tuple[str, list[tuple[StreamID, bytes]], int, StreamID]]:
    s = build(8, max_entries=4)
    nodes = list(s.nodes())
    (k1, b1), (k2, b2) = nodes
    variants = [
        ("length", nodes, 7, s.last_id),
        ("order", [(k2, b2), (k1, b1)], 8, s.last_id),
        ("last id", nodes, 8, I(7, 0)),
        ("total", [(k1, b1[:-1]), (k2, b2)], 8, s.last_id),
        ("terminator", [(k1, b1[:-1] + b"\x00"), (k2, b2)], 8, s.last_id),
        ("empty", [(k1, listpack.pack([]))], 0, s.last_id),
        ("no entries", [(k1, listpack.pack([0, 0, 1, b"f", 0]))], 0, s.last_id),
    ]
    return variants


@pytest.mark.parametrize(
    "name", ["length", "order", "last id", "total", "terminator", "empty", "no entries"]
)
def test_from_nodes_rejects_cheaply_detectable_damage(name: str) -> None:
    [(_, nodes, length, last_id)] = [v for v in corrupt_variants() if v[0] == name]
    with pytest.raises(CorruptStream):
        Stream.from_nodes(nodes, length, last_id)


def test_damage_inside_a_node_is_found_when_the_node_is_first_used() -> None:
    s = build(8, max_entries=4)
    (k1, b1), (k2, b2) = list(s.nodes())
    elements = listpack.unpack(b1)
    elements[0] = 3  # master count says 3 live entries, there are 4
    damaged = listpack.pack(elements)
    copy = Stream.from_nodes([(k1, damaged), (k2, b2)], 7, s.last_id, I(1, 0))
    with pytest.raises(CorruptStream):
        list(copy.range(MIN_ID, MAX_ID))
    with pytest.raises(AssertionError):
        copy.check()


def test_check_detects_tampering() -> None:
    s = build(8, max_entries=4)
    s.check()
    s.length += 1
    with pytest.raises(AssertionError):
        s.check()
    s.length -= 1
    s.first_id = I(2, 0)
    with pytest.raises(AssertionError):
        s.check()
    s.first_id = I(1, 0)
    node = s._nodes[0]
    good = node.lp
    bad = bytearray(good)
    bad[node.base + node.offs[1]] |= 1  # flag an entry without fixing the counters
    node.lp = bytes(bad)
    with pytest.raises(AssertionError):
        s.check()
    node.lp = good
    s.check()


# -- misc -------------------------------------------------------------------------------


def test_append_refuses_bad_input() -> None:
    s = build(2)
    with pytest.raises(ValueError):
        s.append(I(2, 0), [b"f", b"v"], 100, 0)
    with pytest.raises(ValueError):
        s.append(I(1, 5), [b"f", b"v"], 100, 0)
    with pytest.raises(ValueError):
        s.append(I(3, 0), [b"f"], 100, 0)
    assert s.length == 2 and s.last_id == I(2, 0)
    s.check()


def test_append_accepts_tuples() -> None:
    s = Stream()
    s.append((1, 2), (b"f", b"v"), 100, 0)  # type: ignore[arg-type]
    s.append((1, 3), (b"f", b"w"), 100, 0)  # type: ignore[arg-type]
    s.check()
    assert entries(s) == [(I(1, 2), [b"f", b"v"]), (I(1, 3), [b"f", b"w"])]
    assert node_sizes(s) == [2]


def test_setters_are_plain_attributes() -> None:
    s = build(3)
    s.last_id = I(100, 0)
    s.entries_added = 50
    s.max_deleted_entry_id = I(2, 0)
    s.check()
    s.append(I(101, 0), [b"f", b"v"], 100, 0)
    assert s.entries_added == 51
    assert s.groups == {}


def test_memory_usage_grows_with_the_stream() -> None:
    small = build(10).memory_usage()
    large = build(1000).memory_usage()
    assert 0 < small < large
    assert large > sum(len(b) for _, b in build(1000).nodes())


def test_nodes_with_the_same_fields_share_one_list() -> None:
    # A node keeps its master fields; a stream of same-shaped entries keeps
    # one list of them, not one per node (nor the first command's argument
    # objects of each node alive).
    s = build(10, max_entries=2)
    s.append(I(20, 0), [b"g", b"v"], 2, 0)  # another shape: a node of its own
    s.append(I(21, 0), [b"g", b"w"], 2, 0)
    s.check()
    fields = [node.fields for node in s._nodes]
    assert fields[0] == [b"f"] and all(f is fields[0] for f in fields[:5])
    assert fields[5] == [b"g"] and fields[5] is not fields[0]
    shared = s.memory_usage()
    for node in s._nodes:  # what it would count with a list per node
        node.fields = list(node.fields)
    assert s.memory_usage() > shared
    assert entries(s)[-2:] == [(I(20, 0), [b"g", b"v"]), (I(21, 0), [b"g", b"w"])]


def test_range_survives_trims_and_node_removal_while_suspended() -> None:
    s = build(12, max_entries=4)  # nodes 1-4, 5-8, 9-12
    it = s.range(MIN_ID, MAX_ID)
    assert next(it)[0] == I(1, 0)
    s.trim_maxlen(10, False, 0)  # flags 1 and 2
    for i in (5, 6, 7):
        s.delete(I(i, 0))
    assert next(it)[0] == I(3, 0)
    s.delete(I(8, 0))  # node 5-8 goes
    s.trim_maxlen(3, True, 0)  # node 1-4 goes
    assert [e[0].ms for e in it] == [9, 10, 11, 12]
    s.check()

    s = build(12, max_entries=4)
    back = s.range(MIN_ID, MAX_ID, rev=True)
    assert next(back)[0] == I(12, 0)
    s.delete(I(11, 0))
    for i in (9, 10, 12):  # node 9-12 goes while the iterator is inside it
        s.delete(I(i, 0))
    s.delete(I(7, 0))
    assert [e[0].ms for e in back] == [8, 6, 5, 4, 3, 2, 1]


@pytest.mark.parametrize("size", NODE_SIZES)
@pytest.mark.parametrize("seed", range(4))
def test_read_from_is_range_at_once(size: int, seed: int) -> None:
    # Stream.read_from (one kernel call per node) against range(start, MAX_ID):
    # deleted entries, gaps of every delta width, other fields, any start, any count.
    rng = random.Random(seed)
    s = Stream()
    ms = 1
    for i in range(120):
        ms += rng.choice([0, 1, 1, 300, 2**33])
        fv = [b"f", b"%d" % i] if rng.random() < 0.8 else [b"a", b"x" * rng.randrange(90)]
        s.append(I(ms, i), fv, size, 0)
    for id, _ in list(s.range(MIN_ID, MAX_ID)):
        if rng.random() < 0.3:
            s.delete(id)
    s.check()
    every = entries(s)
    starts = [MIN_ID, MAX_ID] + [id for id, _ in every[::7]] + [I(id.ms, id.seq + 1)
                                                              for id, _ in every[::11]]
    for start in starts:
        for count in (0, 1, 2, 5, 100, 1000):
            expect = list(s.range(start, MAX_ID))
            if count:
                expect = expect[:count]
            ids, got = s.read_from(start, count)
            assert ids == [id for id, _ in expect]
            assert got == [[bytes(id), fields] for id, fields in expect]
        # With an end bound too (XRANGE start end): any end, inside a node,
        # between nodes, before the start.
        for end in starts[::2] + [I(id.ms, max(id.seq - 1, 0)) for id, _ in every[::13]]:
            for count in (0, 1, 3, 1000):
                expect = list(s.range(start, end))
                if count:
                    expect = expect[:count]
                ids, got = s.read_from(start, count, end)
                assert ids == [id for id, _ in expect], (start, end, count)
                assert got == [[bytes(id), fields] for id, fields in expect]
    assert Stream().read_from(MIN_ID, 10) == ([], [])
    assert Stream().read_from(MAX_ID, 0, MIN_ID) == ([], [])


def test_read_from_at_the_top_of_the_id_space() -> None:
    # Twenty-digit parts, and small deltas from a master ID at the very top.
    s = Stream()
    top = UINT64_MAX
    added = [I(top - 1, top - 2), I(top - 1, top), I(top, 0), I(top, 1), I(top, top)]
    for id in added:
        s.append(id, [b"f", b"v"], 100, 0)
    ids, got = s.read_from(MIN_ID, 0)
    assert ids == added
    assert [text for text, _ in got] == [b"%d-%d" % id for id in added]
    assert s.read_from(I(top, 1), 1) == ([I(top, 1)], [[b"%d-1" % top, [b"f", b"v"]]])
