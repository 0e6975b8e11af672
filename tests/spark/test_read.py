"""Batch reads with a real local Spark against tidelog-server and redis-server."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException

from tests.support.spark_data import fill


def xrange_rows(client, key: str) -> list[tuple]:
    return [(key, eid.decode(), {k.decode(): v.decode() for k, v in fields.items()})
            for eid, fields in client.xrange(key)]


def load(spark, target, **options):
    reader = spark.read.format("tidelog").option("url", target.url)
    for name, value in options.items():
        reader = reader.option(name, value)
    return reader.load()


def rows_of(df) -> list[tuple]:
    return [(r["stream"], r["id"], dict(r["fields"])) for r in df.orderBy("stream", "ms", "seq").collect()]


@pytest.mark.parametrize("partitions", [None, 1, 2, 5])
def test_batch_read_equals_xrange(spark, target, partitions):
    c = target.client()
    fill(c, "a", 2500, seed=1)
    fill(c, "b", 300, seed=2, start_ms=5_000_000)
    options = {"stream": "a,b", "pageSize": 128}
    if partitions is not None:
        options["numPartitions"] = partitions
    df = load(spark, target, **options)
    assert df.rdd.getNumPartitions() == (2 if partitions is None else partitions)
    assert rows_of(df) == xrange_rows(c, "a") + xrange_rows(c, "b")
    one = df.where("stream = 'a'").select("id", "ms", "seq", "ts").orderBy("ms", "seq").first()
    first_id = c.xrange("a", count=1)[0][0].decode()
    ms, seq = map(int, first_id.split("-"))
    assert (one["id"], one["ms"], one["seq"]) == (first_id, ms, seq)
    assert one["ts"] == datetime.fromtimestamp(ms / 1000, UTC).replace(tzinfo=None)


def test_rows_within_a_partition_come_in_id_order(spark, target):
    fill(target.client(), "a", 3000)
    df = load(spark, target, stream="a", numPartitions=3, pageSize=100)
    for part in df.select("ms", "seq").rdd.glom().collect():
        keys = [(r.ms, r.seq) for r in part]
        assert keys == sorted(keys)


def test_pattern_ranges_and_empty_reads(spark, target):
    c = target.client()
    fill(c, "sensor:1", 200, seed=3)
    fill(c, "sensor:2", 200, seed=4)
    c.set("sensor:not-a-stream", "x")
    c.xadd("other", {"f": "v"})
    df = load(spark, target, pattern="sensor:*", numPartitions=3)
    assert {r.stream for r in df.select("stream").distinct().collect()} == {"sensor:1", "sensor:2"}
    assert df.count() == 400
    ids = [e[0].decode() for e in c.xrange("sensor:1")]
    middle = load(spark, target, stream="sensor:1", startingId=ids[10], endingId=ids[20])
    assert [r.id for r in middle.orderBy("ms", "seq").collect()] == ids[10:21]
    assert load(spark, target, stream="missing").count() == 0
    assert load(spark, target, pattern="nothing:*").count() == 0
    since = int(ids[100].split("-")[0])
    later = load(spark, target, stream="sensor:1", startingTimestamp=str(since))
    assert later.count() == sum(1 for i in ids if int(i.split("-")[0]) >= since)


def test_typed_schema_reads_fields_with_conversions(spark, target):
    c = target.client()
    c.xadd("m", {"sensor-id": "a", "temperature": "21.5", "ok": "true",
                 "at": "2024-05-01T10:00:00Z"}, id="1-0")
    c.xadd("m", {"sensor-id": "b", "temperature": "hot", "ok": "nope"}, id="2-0")
    c.xadd("m", {"sensor-id": "c"}, id="3-0")
    schema = "id string, `sensor-id` string, temperature double, ok boolean, at timestamp, ms long"
    df = spark.read.format("tidelog").schema(schema).option("url", target.url) \
        .option("stream", "m").load()
    rows = [r.asDict() for r in df.orderBy("ms").collect()]
    assert rows == [
        {"id": "1-0", "sensor-id": "a", "temperature": 21.5, "ok": True,
         "at": datetime(2024, 5, 1, 10, 0), "ms": 1},
        {"id": "2-0", "sensor-id": "b", "temperature": None, "ok": None, "at": None, "ms": 2},
        {"id": "3-0", "sensor-id": "c", "temperature": None, "ok": None, "at": None, "ms": 3},
    ]
    strict = spark.read.format("tidelog").schema(schema).option("url", target.url) \
        .option("stream", "m").option("mode", "FAILFAST").load()
    with pytest.raises((PySparkException, Py4JJavaError), match="entry 2-0: field 'temperature'"):
        strict.collect()


def test_binary_values(spark, target):
    target.client().xadd("bin", {"raw": b"\x00\xff\xfe"}, id="1-0")
    row = load(spark, target, stream="bin", binaryValues="true").first()
    assert row["fields"] == {"raw": bytearray(b"\x00\xff\xfe")}


def test_filters_on_time_are_pushed_into_the_range(spark, target):
    """Entries outside the filtered range hold values that fail a FAILFAST read: the
    query succeeds only if the filter narrowed the XRANGEs so they are never read."""
    c = target.client()
    pipe = c.pipeline(transaction=False)
    for ms in range(1000, 3000):
        good = 1500 <= ms < 1600
        pipe.xadd("p", {"v": str(ms) if good else "not a number"}, id=f"{ms}-0")
    pipe.execute()
    def typed(**extra):
        reader = spark.read.format("tidelog").schema("ms long, seq long, ts timestamp, v long") \
            .option("url", target.url).option("stream", "p").option("mode", "FAILFAST")
        for name, value in extra.items():
            reader = reader.option(name, value)
        return reader.load()
    df = typed(numPartitions=3)
    got = df.where("ms >= 1500 and ms < 1600").agg({"v": "sum", "*": "count"}).first()
    assert (got["count(1)"], got["sum(v)"]) == (100, sum(range(1500, 1600)))
    by_ts = df.where("ts >= timestamp'1970-01-01 00:00:01.5' and ts < timestamp'1970-01-01 00:00:01.6'")
    assert by_ts.count() == 100
    one = df.where("ms = 1550").select("v").collect()
    assert [r.v for r in one] == [1550]
    plan = df.where("ms >= 1500 and ms < 1600")._jdf.queryExecution().executedPlan().toString()
    assert "1500" not in plan           # handled by the source, not re-checked by Spark
    with pytest.raises((PySparkException, Py4JJavaError), match="not a valid bigint"):
        typed(pushFilters="false").where("ms >= 1500 and ms < 1600").count()


def test_filters_on_stream_choose_the_keys(spark, target):
    c = target.client()
    for key in ("k1", "k2", "k3"):
        c.xadd(key, {"k": key}, id="1-0")
    c.set("k4", "not a stream")  # reading it would fail with WRONGTYPE
    df = load(spark, target, stream="k1,k2,k3,k4")
    assert sorted(r.stream for r in df.where("stream in ('k1', 'k3')").collect()) == ["k1", "k3"]
