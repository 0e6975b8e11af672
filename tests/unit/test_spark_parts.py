"""The Spark connector's pure parts: IDs, range planning, filter narrowing, Arrow batches,
options.  No Spark session and no server (pyspark is imported for its types only)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed (tidelog[spark])")

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st
from pyspark.sql.datasource import (  # noqa: E402
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    LessThan,
    LessThanOrEqual,
)
from pyspark.sql.types import (  # noqa: E402
    BooleanType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from tidelog.spark.ids import (  # noqa: E402
    MAX_ID,
    MIN_ID,
    U64_MAX,
    format_id,
    id_of_time,
    next_id,
    parse_id,
    prev_id,
    split_ms,
)
from tidelog.spark.options import ReadOptions, WriteOptions  # noqa: E402
from tidelog.spark.reader import EMPTY, narrow, plan_ranges  # noqa: E402
from tidelog.spark.schema import BadValue, BatchBuilder, default_schema  # noqa: E402
from tidelog.spark.writer import text_of  # noqa: E402

ids = st.tuples(st.integers(0, U64_MAX), st.integers(0, U64_MAX))


# -- ids -------------------------------------------------------------------------------

def test_parse_and_format():
    assert parse_id("1700000000000-5") == (1700000000000, 5)
    assert parse_id(b"7") == (7, 0)
    assert parse_id("7", missing_seq=U64_MAX) == (7, U64_MAX)
    assert parse_id("-") == MIN_ID and parse_id("+") == MAX_ID
    for bad in ("", "x", "1-", "-1", "1-2-3", str(1 << 64)):
        with pytest.raises(ValueError):
            parse_id(bad)


@given(ids)
def test_next_and_prev_are_neighbours(sid):
    assert parse_id(format_id(sid)) == sid
    if sid != MAX_ID:
        assert next_id(sid) > sid and prev_id(next_id(sid)) == sid
    if sid != MIN_ID:
        assert prev_id(sid) < sid and next_id(prev_id(sid)) == sid


def test_id_of_time():
    assert id_of_time(1234) == 1234
    assert id_of_time("1234") == 1234
    assert id_of_time("1970-01-01T00:00:01.5Z") == 1500
    assert id_of_time(datetime(1970, 1, 1, 0, 0, 2, 999)) == 2000   # naive is UTC, floor
    assert id_of_time(datetime(2024, 1, 1, tzinfo=UTC)) == 1704067200000


@given(ids, ids, st.integers(1, 50))
def test_split_ms_covers_the_range_exactly_in_order(a, b, parts):
    lo, hi = min(a, b), max(a, b)
    ranges = split_ms(lo, hi, parts)
    assert 1 <= len(ranges) <= parts
    assert ranges[0][0] == lo and ranges[-1][1] == hi
    for (_, end), (start, _) in zip(ranges, ranges[1:]):
        assert next_id(end) == start            # adjacent, no gap, no overlap
    assert all(x <= y for x, y in ranges)


def test_plan_ranges_shares_partitions_by_span():
    bounds = {"a": ((0, 0), (999, 5)), "b": ((0, 0), (99, 0)), "empty": None}
    assert plan_ranges(bounds, None) == [[("a", (0, 0), (999, 5))], [("b", (0, 0), (99, 0))]]
    groups = plan_ranges(bounds, 6)
    assert len(groups) == 6
    per_key = {}
    for group in groups:
        (key, lo, hi), = group
        per_key.setdefault(key, []).append((lo, hi))
    assert len(per_key["a"]) > len(per_key["b"]) >= 1
    # more streams than partitions: streams share partitions, in key order
    many = {f"k{i:02}": ((1, 0), (2, 0)) for i in range(10)}
    groups = plan_ranges(many, 3)
    assert len(groups) == 3
    assert [r[0] for g in groups for r in g] == sorted(many)


# -- filter pushdown ---------------------------------------------------------------------

def test_narrow_on_ms_and_ts():
    lo, hi = MIN_ID, MAX_ID
    assert narrow(GreaterThanOrEqual(("ms",), 10), lo, hi, None) == ((10, 0), MAX_ID, None)
    assert narrow(GreaterThan(("ms",), 10), lo, hi, None) == ((11, 0), MAX_ID, None)
    assert narrow(LessThan(("ms",), 10), lo, hi, None) == (MIN_ID, (9, U64_MAX), None)
    assert narrow(LessThanOrEqual(("ms",), 10), lo, hi, None) == (MIN_ID, (10, U64_MAX), None)
    assert narrow(EqualTo(("ms",), 10), lo, hi, None) == ((10, 0), (10, U64_MAX), None)
    assert narrow(LessThan(("ms",), 0), lo, hi, None) == EMPTY + (None,)
    t = datetime(1970, 1, 1, 0, 0, 1, 500, tzinfo=UTC)   # 1000.5 ms
    assert narrow(GreaterThanOrEqual(("ts",), t), lo, hi, None)[0] == (1001, 0)
    assert narrow(LessThan(("ts",), t), lo, hi, None)[1] == (1000, U64_MAX)
    assert narrow(EqualTo(("ts",), t), lo, hi, None) == EMPTY + (None,)


def test_narrow_on_id_and_stream_and_what_it_leaves():
    assert narrow(EqualTo(("id",), "5-1"), MIN_ID, MAX_ID, None) == ((5, 1), (5, 1), None)
    assert narrow(EqualTo(("id",), "05-1"), MIN_ID, MAX_ID, None) is None   # not canonical
    assert narrow(GreaterThan(("id",), "5-1"), MIN_ID, MAX_ID, None) is None  # text order
    assert narrow(In(("stream",), ("b", "a")), MIN_ID, MAX_ID, None)[2] == ("a", "b")
    assert narrow(EqualTo(("stream",), "a"), MIN_ID, MAX_ID, ("b",))[2] == ()
    assert narrow(GreaterThan(("seq",), 1), MIN_ID, MAX_ID, None) is None


# -- Arrow batches ---------------------------------------------------------------------------

def test_default_batch():
    b = BatchBuilder(default_schema(), failfast=False)
    rows = b.build([("s", [(b"1-2", [b"a", b"1", b"b", b"x"]), (b"3-0", [])]),
                    ("t", [(b"4-0", [b"k", b"v"])])]).to_pylist()
    assert [(r["stream"], r["id"], r["ms"], r["seq"]) for r in rows] == \
        [("s", "1-2", 1, 2), ("s", "3-0", 3, 0), ("t", "4-0", 4, 0)]
    assert rows[0]["fields"] == [("a", "1"), ("b", "x")] and rows[1]["fields"] == []
    assert rows[0]["ts"] == datetime(1970, 1, 1, 0, 0, 0, 1000, tzinfo=UTC)
    binary = BatchBuilder(default_schema(binary_values=True), failfast=False)
    assert binary.build([("s", [(b"1-0", [b"a", b"\xff"])])]).to_pylist()[0]["fields"] == \
        [("a", b"\xff")]


def test_text_that_is_not_utf8_in_the_fields_map():
    page = [("s", [(b"1-0", [b"ok", b"fine", b"bad", b"\xff\xfe"]), (b"2-0", [b"\xff", b"v"])])]
    rows = BatchBuilder(default_schema(), failfast=False).build(page).to_pylist()
    assert rows[0]["fields"] == [("ok", "fine"), ("bad", None)]
    assert rows[1]["fields"] == [("\ufffd", "v")]
    with pytest.raises(BadValue, match=r"entry 2-0: a field name b'\\xff' is not UTF-8"):
        BatchBuilder(default_schema(), failfast=True).build(page)


SCHEMA = StructType([
    StructField("id", StringType()), StructField("n", LongType()),
    StructField("i", IntegerType()), StructField("x", DoubleType()),
    StructField("ok", BooleanType()), StructField("t", TimestampType()),
    StructField("d", DecimalType(6, 2)), StructField("s", StringType()),
])


def test_typed_batch_converts_and_nulls_bad_values():
    good = [b"n", b"-5", b"i", b"7", b"x", b"2.5", b"ok", b"true", b"t", b"1700000000000",
            b"d", b"12.345", b"s", b"text"]
    bad = [b"n", b"five", b"i", str(1 << 40).encode(), b"x", b"", b"ok", b"maybe",
           b"t", b"yesterday", b"d", b"123456789", b"s", b"\xff"]
    rows = BatchBuilder(SCHEMA, failfast=False).build(
        [("s", [(b"1-0", good), (b"2-0", bad), (b"3-0", [])])]).to_pylist()
    assert rows[0] == {"id": "1-0", "n": -5, "i": 7, "x": 2.5, "ok": True,
                       "t": datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC),
                       "d": Decimal("12.35"), "s": "text"}
    assert all(v is None for k, v in rows[1].items() if k != "id")
    assert all(v is None for k, v in rows[2].items() if k != "id")


def test_failfast_names_the_entry_and_field():
    with pytest.raises(BadValue, match=r"stream 's' entry 2-0: field 'n' value b'five'"):
        BatchBuilder(SCHEMA, failfast=True).build([("s", [(b"2-0", [b"n", b"five"])])])


# -- options and writes ----------------------------------------------------------------------------

def test_read_options():
    o = ReadOptions.parse({"stream": "a, b", "startingtimestamp": "1970-01-01T00:00:01Z",
                           "endingid": "5000", "numpartitions": "4", "mode": "failfast"})
    assert o.keys == ("a", "b") and o.num_partitions == 4 and o.failfast
    assert o.start == (1000, 0) and o.end == (5000, U64_MAX)
    for bad in ({}, {"stream": "a", "pattern": "x*"}, {"stream": "a", "numPartitions": "0"},
                {"stream": "a", "mode": "lenient"}, {"stream": "a", "startingId": "x"}):
        with pytest.raises(ValueError):
            ReadOptions.parse(bad)


def test_a_topic_option_reads_its_partition_keys():
    from tidelog.client.partitions import partition_keys

    o = ReadOptions.parse({"topic": "orders", "topicPartitions": "4"})
    assert o.keys == tuple(partition_keys("orders", 4)) and len(set(o.keys)) == 4
    for bad in ({"topic": "orders"}, {"topicPartitions": "4", "stream": "a"},
                {"topic": "orders", "topicPartitions": "4", "stream": "a"},
                {"topic": "orders", "topicPartitions": "4", "pattern": "o*"},
                {"topic": "a{b", "topicPartitions": "4"},
                {"topic": "orders", "topicPartitions": "0"}):
        with pytest.raises(ValueError):
            ReadOptions.parse(bad)


def test_archive_takes_a_topic_as_name_and_count():
    from tidelog.client.partitions import partition_keys
    from tidelog.spark.archive_job import _arguments

    args = _arguments(["--topic", "orders:4", "--older-than", "1d", "--to", "x"])
    assert args.topic_keys == tuple(partition_keys("orders", 4))
    for bad in ("orders", "orders:x", "a{b:4"):
        with pytest.raises(SystemExit):
            _arguments(["--topic", bad, "--older-than", "1d", "--to", "x"])


def test_write_options():
    o = WriteOptions.parse({"stream": "out", "maxlen": "10", "approximatetrim": "false"})
    assert o.key == "out" and o.max_len == 10 and not o.approximate_trim
    with pytest.raises(ValueError):
        WriteOptions.parse({"maxLen": "1", "minId": "5-0"})
    with pytest.raises(ValueError):
        WriteOptions.parse({"stream": "a,b"})


def test_values_become_text_as_spark_casts_them():
    assert text_of(True) == b"true" and text_of(3) == b"3" and text_of(2.5) == b"2.5"
    assert text_of(None) is None and text_of(b"\x00") == b"\x00"
    assert text_of(Decimal("1.50")) == b"1.50"
    assert text_of(datetime(2024, 1, 2, 3, 4, 5)) == b"2024-01-02T03:04:05"
    assert text_of(datetime(2024, 1, 2, tzinfo=UTC)) == b"2024-01-02T00:00:00+00:00"


# -- the reader's prefetching thread --------------------------------------------------------

def test_prefetched_keeps_order_and_raises_the_threads_error():
    from tidelog.spark.reader import prefetched
    assert list(prefetched(iter(range(100)))) == list(range(100))

    def failing():
        yield 1
        raise ConnectionError("server gone")
    got = []
    with pytest.raises(ConnectionError, match="server gone"):
        for item in prefetched(failing()):
            got.append(item)
    assert got == [1]


def test_closing_a_prefetched_iterator_stops_its_thread():
    import threading
    import time

    from tidelog.spark.reader import prefetched
    pulled = []

    def endless():
        n = 0
        while True:
            pulled.append(n)
            yield n
            n += 1
    it = prefetched(endless(), ahead=2)
    assert next(it) == 0
    it.close()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(
            t.name == "tidelog-prefetch" for t in threading.enumerate()):
        time.sleep(0.02)
    assert not any(t.name == "tidelog-prefetch" for t in threading.enumerate())
    assert len(pulled) <= 5      # it read at most a few items ahead, then stopped


# -- cluster planning ---------------------------------------------------------------------

@given(st.dictionaries(st.sampled_from([f"k{i}" for i in range(12)]),
                       st.sampled_from(["n1", "n2", "n3"]), min_size=1),
       st.integers(1, 20))
def test_plan_ranges_by_node_keeps_each_partition_on_one_node(node_of, partitions):
    bounds = {key: ((10 * i, 0), (10 * i + 500, 3)) for i, key in enumerate(sorted(node_of))}
    groups = plan_ranges(bounds, partitions, node_of)
    nodes = set(node_of.values())
    assert len(groups) == max(partitions, len(nodes))
    for group in groups:
        assert group and len({node_of[key] for key, _, _ in group}) == 1
    # every stream's [first, last] covered once, without gaps or overlaps
    for key, (first, last) in bounds.items():
        parts = sorted((lo, hi) for g in groups for k, lo, hi in g if k == key)
        assert parts[0][0] == first and parts[-1][1] == last
        for (_, hi), (lo, _) in zip(parts, parts[1:]):
            assert next_id(hi) == lo


def test_plan_ranges_by_node_shares_by_stream_count():
    node_of = {"a": "n1", "b": "n1", "c": "n1", "d": "n2"}
    bounds = {k: ((0, 0), (99, 0)) for k in node_of}
    groups = plan_ranges(bounds, 4, node_of)
    on = [node_of[g[0][0]] for g in groups]
    assert on.count("n1") == 3 and on.count("n2") == 1
    # one node: as without node_of
    same = {k: "n1" for k in node_of}
    assert plan_ranges(bounds, 3, same) == plan_ranges(bounds, 3)


def test_owners_by_slot_ranges():
    from tidelog.keyslot import key_slot
    from tidelog.spark.connection import Shard, owners

    shards = [Shard("h:1", (), ((0, 5460),)), Shard("h:2", ("h:5",), ((5461, 10922),)),
              Shard("h:3", (), ((10923, 16000),))]
    keys = [f"t:{{{i}}}" for i in range(40)] + ["x"]
    found = owners(shards, keys)
    for key in keys:
        slot = key_slot(key.encode())
        if slot > 16000:
            assert key not in found      # a slot no shard serves
        else:
            assert any(lo <= slot <= hi for lo, hi in found[key].slots)


def test_cluster_options():
    assert ReadOptions.parse({"stream": "a"}).cluster is None
    assert ReadOptions.parse({"stream": "a", "cluster": "auto"}).cluster is None
    assert ReadOptions.parse({"stream": "a", "cluster": "true"}).cluster is True
    assert ReadOptions.parse({"stream": "a", "cluster": "false"}).cluster is False
    assert ReadOptions.parse({"stream": "a", "readreplicas": "true"}).read_replicas is True
    assert WriteOptions.parse({"stream": "a", "cluster": "yes"}).cluster is True
    with pytest.raises(ValueError, match="'cluster'"):
        ReadOptions.parse({"stream": "a", "cluster": "maybe"})
