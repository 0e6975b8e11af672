"""Batch and streaming writes with a real local Spark: rows become XADDs."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException

from tests.support.spark_data import checkpoint_state, fill


def entries(client, key: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """XRANGE with the field pairs as the server sent them (repeats and order kept)."""
    client.set_response_callback("XRANGE", lambda reply, **_: reply)
    raw = client.execute_command("XRANGE", key, "-", "+")
    return [(eid.decode(), [(fv[i].decode(), fv[i + 1].decode()) for i in range(0, len(fv), 2)])
            for eid, fv in raw]


def write(df, target, mode="append", **options):
    w = df.write.format("tidelog").option("url", target.url).mode(mode)
    for name, value in options.items():
        w = w.option(name, value)
    w.save()


def test_columns_become_fields(spark, target):
    df = spark.createDataFrame(
        [("s1", 21.5, True, 7, datetime(2024, 1, 2, 3, 4, 5)), ("s2", None, False, 8, None)],
        "sensor string, temp double, ok boolean, n long, at timestamp").coalesce(1)
    write(df, target, stream="out")
    got = entries(target.client(), "out")
    assert [fields for _, fields in got] == [
        [("sensor", "s1"), ("temp", "21.5"), ("ok", "true"), ("n", "7"), ("at", "2024-01-02T03:04:05+00:00")],
        [("sensor", "s2"), ("ok", "false"), ("n", "8")],
    ]


def test_a_read_written_back_with_its_ids_is_the_same_stream(spark, target):
    c = target.client()
    fill(c, "src", 1500)
    c.execute_command("XADD", "src", "99999999999-0", "dup", "1", "dup", "2")
    df = spark.read.format("tidelog").option("url", target.url).option("stream", "src") \
        .option("numPartitions", 1).load()
    write(df.drop("stream"), target, stream="copy", keepIds="true")
    assert entries(c, "copy") == entries(c, "src")
    # the rows' own stream column routes them when no stream option is given
    routed = df.where("fields['sensor'] is not null") \
        .selectExpr("concat('r-', fields['sensor']) as stream", "fields")
    write(routed, target)
    assert sum(c.xlen(f"r-s{i}") for i in range(7)) == 1500


def test_trimming_options(spark, target):
    df = spark.range(0, 500, 1, 1).selectExpr("cast(id as string) as n")
    write(df, target, stream="capped", maxLen=100, approximateTrim="false")
    c = target.client()
    assert c.xlen("capped") == 100
    assert entries(c, "capped")[-1][1] == [("n", "499")]


def test_bad_writes_are_refused_with_a_reason(spark, target):
    df = spark.range(3).selectExpr("cast(id as string) as n")
    with pytest.raises((PySparkException, Py4JJavaError), match="'stream'"):
        write(df, target)
    nulls = spark.createDataFrame([(None,)], "n string")
    with pytest.raises((PySparkException, Py4JJavaError), match="no non-null field"):
        write(nulls, target, stream="x")


def test_idempotent_batch_write_adds_nothing_twice(spark, target):
    df = spark.range(0, 1000, 1, 3).selectExpr("cast(id as string) as n")
    if target.kind == "redis":
        with pytest.raises((PySparkException, Py4JJavaError), match="IDMP"):
            write(df, target, stream="once", idempotent="true", producerId="job-1")
        pytest.skip("XADD IDMP needs Tidelog or Redis 8.6: redis-server 7.0 refuses it, as checked")
    c = target.client()
    write(df, target, stream="once", idempotent="true", producerId="job-1")
    write(df, target, stream="once", idempotent="true", producerId="job-1")
    assert c.xlen("once") == 1000
    assert sorted(int(f[0][1]) for _, f in entries(c, "once")) == list(range(1000))
    write(df, target, stream="once", idempotent="true", producerId="job-2")   # another job
    assert c.xlen("once") == 2000


def _replay_last_batch(spark, source_url: str, target, tmp_path: Path, idempotent: bool) -> int:
    """Copy stream ``in`` to ``out`` with a streaming query, then make Spark replay its last
    batch as after a crash between the sink's write and the commit; returns XLEN out."""
    ck = tmp_path / f"ck-{idempotent}"
    out = f"out-{idempotent}"

    def run():
        df = spark.readStream.format("tidelog").option("url", source_url).option("stream", "in") \
            .option("maxEntriesPerTrigger", 250).load()
        q = (df.select("fields").writeStream.format("tidelog").option("url", target.url)
             .option("stream", out).option("idempotent", str(idempotent).lower())
             .option("checkpointLocation", str(ck)).trigger(availableNow=True).start())
        assert q.awaitTermination(300)
        assert q.exception() is None, q.exception()
    run()
    _, committed = checkpoint_state(ck)
    (ck / "commits" / str(committed)).unlink()       # the sink wrote; the commit was lost
    crc = ck / "commits" / f".{committed}.crc"
    if crc.exists():
        crc.unlink()
    run()                                             # Spark runs that batch again
    return target.client().xlen(out)


def test_a_replayed_micro_batch_is_written_once_with_idempotent(spark, tidelog_target, tmp_path):
    fill(tidelog_target.client(), "in", 1000)
    assert _replay_last_batch(spark, tidelog_target.url, tidelog_target, tmp_path, True) == 1000
    # the control: without IDMP the replay writes the last batch twice
    assert _replay_last_batch(spark, tidelog_target.url, tidelog_target, tmp_path, False) == 1250
