"""Streaming reads with a real local Spark: offsets, limits, restarts, SIGKILL, groups."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.spark_data import checkpoint_state, fill


def stream(spark, target, **options):
    reader = spark.readStream.format("tidelog").option("url", target.url)
    for name, value in options.items():
        reader = reader.option(name, value)
    return reader.load()


def run_available_now(df, checkpoint: Path, out: Path):
    """Process everything available into Parquet; returns the rows of each batch."""
    q = (df.select("stream", "id", "ms", "seq").writeStream.format("parquet")
         .option("checkpointLocation", str(checkpoint)).option("path", str(out))
         .trigger(availableNow=True).start())
    assert q.awaitTermination(300), "the AvailableNow query did not finish"
    assert q.exception() is None, q.exception()
    return [p["numInputRows"] for p in q.recentProgress if p["numInputRows"]]


def sink_ids(spark, out: Path) -> list[tuple[str, str]]:
    return [(r.stream, r.id) for r in spark.read.parquet(str(out)).collect()]


def stream_ids(client, key: str) -> list[tuple[str, str]]:
    return [(key, e[0].decode()) for e in client.xrange(key)]


def test_available_now_with_a_limit_then_a_restart_reads_each_entry_once(spark, target, tmp_path):
    c = target.client()
    fill(c, "s", 1000)
    df = stream(spark, target, stream="s", maxEntriesPerTrigger=300, numPartitions=2)
    batches = run_available_now(df, tmp_path / "ck", tmp_path / "out")
    assert batches == [300, 300, 300, 100]
    fill(c, "s", 450, seed=9, start_ms=10**12)
    assert run_available_now(df, tmp_path / "ck", tmp_path / "out") == [300, 150]
    got = sink_ids(spark, tmp_path / "out")
    assert sorted(got) == sorted(stream_ids(c, "s")) and len(got) == 1450
    # the offsets in the checkpoint are {key: last ID}
    planned, _ = checkpoint_state(tmp_path / "ck")
    last_offsets = tmp_path / "ck" / "offsets" / str(planned)
    assert json.loads(last_offsets.read_text().splitlines()[-1]) == \
        {"s": c.xrevrange("s", count=1)[0][0].decode()}


def test_stopped_query_resumes_where_its_checkpoint_says(spark, target, tmp_path):
    c = target.client()
    fill(c, "s", 600)
    df = stream(spark, target, stream="s", maxEntriesPerTrigger=100)
    q = (df.select("stream", "id").writeStream.format("parquet")
         .option("checkpointLocation", str(tmp_path / "ck")).option("path", str(tmp_path / "out"))
         .trigger(processingTime="100 milliseconds").start())
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len([p for p in q.recentProgress if p["numInputRows"]]) < 2:
        time.sleep(0.1)
    q.stop()
    fill(c, "s", 200, seed=5, start_ms=10**12)
    run_available_now(df, tmp_path / "ck", tmp_path / "out")
    got = sink_ids(spark, tmp_path / "out")
    assert sorted(got) == sorted(stream_ids(c, "s")) and len(got) == 800


def test_starting_offsets_latest_and_json(spark, target, tmp_path):
    c = target.client()
    fill(c, "a", 50)
    fill(c, "b", 50, seed=2)
    ids_a = [e[0].decode() for e in c.xrange("a")]
    latest = stream(spark, target, stream="a,b", startingOffsets="latest")
    assert run_available_now(latest, tmp_path / "ck1", tmp_path / "o1") == []
    given = stream(spark, target, stream="a,b",
                   startingOffsets=json.dumps({"a": ids_a[39], "b": "$"}))
    run_available_now(given, tmp_path / "ck2", tmp_path / "o2")
    assert sorted(sink_ids(spark, tmp_path / "o2")) == [("a", i) for i in sorted(ids_a[40:])]
    c.xadd("b", {"new": "1"}, id="99999999999999-0")
    run_available_now(latest, tmp_path / "ck1", tmp_path / "o1")
    assert sink_ids(spark, tmp_path / "o1") == [("b", "99999999999999-0")]
    with pytest.raises(Exception, match="startingOffsets"):
        run_available_now(stream(spark, target, stream="a", startingOffsets="soon"),
                          tmp_path / "ck3", tmp_path / "o3")


def test_pattern_streams_read_every_matching_key(spark, target, tmp_path):
    c = target.client()
    fill(c, "dev:1", 120)
    fill(c, "dev:2", 80, seed=2)
    c.set("dev:3", "a string, not a stream")
    df = stream(spark, target, pattern="dev:*", numPartitions=3)
    run_available_now(df, tmp_path / "ck", tmp_path / "out")
    assert sorted(sink_ids(spark, tmp_path / "out")) == \
        sorted(stream_ids(c, "dev:1") + stream_ids(c, "dev:2"))


def test_a_limit_is_shared_between_streams(spark, target, tmp_path):
    c = target.client()
    fill(c, "a", 500)
    fill(c, "b", 40, seed=3)
    fill(c, "c", 500, seed=4)
    df = stream(spark, target, stream="a,b,c", maxEntriesPerTrigger=300)
    q = (df.select("stream", "id").writeStream.format("memory").queryName("fair")
         .trigger(availableNow=True).start())
    q.awaitTermination(300)
    first = q.recentProgress[0]
    assert first["numInputRows"] == 300
    offsets = json.loads(first["sources"][0]["endOffset"])
    ids = {k: [e[0].decode() for e in c.xrange(k)] for k in "abc"}
    read = {k: ids[k].index(offsets[k]) + 1 for k in "abc"}
    assert read["b"] == 40 and read["a"] >= 100 and read["c"] >= 100, read
    assert spark.sql("select count(*) n, count(distinct stream, id) d from fair").first() == (1040, 1040)


def test_group_follows_the_committed_offset(spark, target, tmp_path):
    c = target.client()
    fill(c, "s", 1000)
    ids = [e[0].decode() for e in c.xrange("s")]
    df = stream(spark, target, stream="s", group="spark-job", maxEntriesPerTrigger=300)
    assert run_available_now(df, tmp_path / "ck", tmp_path / "out") == [300, 300, 300, 100]

    def group():
        (info,) = c.xinfo_groups("s")
        return info["last-delivered-id"].decode(), info["lag"], info["entries-read"]
    # Spark looked for more data after the last batch was committed: the group is
    # at the end, its lag and entries-read exact
    assert group() == (ids[999], 0, 1000)
    fill(c, "s", 10, seed=8, start_ms=10**12)
    assert group()[1] == 10
    fresh = stream(spark, target, stream="s", group="spark-job")
    run_available_now(fresh, tmp_path / "ck2", tmp_path / "out2")
    assert len(sink_ids(spark, tmp_path / "out2")) == 10


def test_acked_trimming_keeps_what_the_job_has_not_committed(spark, tidelog_target, tmp_path):
    c = tidelog_target.client()
    fill(c, "s", 1000)
    df = stream(spark, tidelog_target, stream="s", group="archive", maxEntriesPerTrigger=300)
    run_available_now(df, tmp_path / "ck", tmp_path / "out")
    fill(c, "s", 10, seed=8, start_ms=10**12)   # not processed yet
    c.execute_command("XTRIM", "s", "MAXLEN", "0", "ACKED")
    assert [e[0].decode() for e in c.xrange("s")] == \
        [e[0].decode() for e in c.xrange("s", min="1000000000000-0")]
    assert c.xlen("s") == 10


@pytest.mark.slow
def test_driver_killed_mid_batch_resumes_with_each_entry_once(spark, tidelog_target, processes,
                                                              tmp_path):
    target = tidelog_target
    c = target.client()
    fill(c, "s", 3000)
    ck, out = tmp_path / "ck", tmp_path / "out"
    env = dict(os.environ)
    job = [sys.executable, str(Path(__file__).with_name("stream_job.py")), target.url, "s",
           str(ck), str(out)]
    with open(tmp_path / "driver.log", "wb") as log:
        proc = processes.popen(job + ["run"], env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 180
        killed_mid_batch = False
        while time.monotonic() < deadline and proc.poll() is None:
            planned, committed = checkpoint_state(ck)
            if committed >= 2 and planned > committed:
                proc.send_signal(signal.SIGKILL)
                killed_mid_batch = True
                break
            time.sleep(0.005)
        assert killed_mid_batch, (tmp_path / "driver.log").read_text(errors="replace")[-3000:]
        proc.wait(30)
        planned, committed = checkpoint_state(ck)
        assert planned == committed + 1     # the batch in flight was planned, not committed
        fill(c, "s", 500, seed=11, start_ms=10**12)
        subprocess.run(job + ["once"], env=env, stdout=log, stderr=subprocess.STDOUT,
                       timeout=300, check=True)
    got = sink_ids(spark, out)
    assert len(got) == 3500 and sorted(got) == sorted(stream_ids(c, "s"))
