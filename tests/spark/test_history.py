"""read_history: archived Parquet and the live stream as one DataFrame, each entry once."""

from __future__ import annotations

import os
from datetime import UTC, datetime

import pytest

from tidelog.spark import archive, read_history
from tidelog.spark.manifest import stream_dir

DAY = 86_400_000
NOW = 1_700_000_000_000                 # 2023-11-14T22:13:20Z
CUT = NOW - 7 * DAY
KEY = "sensor:7"
COLUMNS = ["stream", "id", "ms", "seq", "ts", "fields"]


class Crash(Exception):
    """Stands for the process dying before a step."""


def add(client, key: str, ids: list[str]) -> None:
    for eid in ids:
        client.xadd(key, {"n": eid}, id=eid)


def ids_of(df) -> list[str]:
    return [row.id for row in df.collect()]


def test_history_spans_archive_and_stream(spark, target, tmp_path):
    client = target.client()
    old = [f"{NOW - 10 * DAY}-0", f"{NOW - 10 * DAY}-1", f"{NOW - 9 * DAY}-0",
           f"{CUT - 1}-0"]
    live = [f"{CUT}-0", f"{NOW - DAY}-0", f"{NOW - DAY}-1"]
    add(client, KEY, old + live)
    archive(spark, target.url, KEY, "7d", tmp_path, now_ms=NOW, progress=None)
    assert client.xlen(KEY) == len(live)

    everything = read_history(spark, target.url, KEY, tmp_path)
    assert everything.columns == COLUMNS                  # no "day"
    rows = everything.collect()
    assert [r.id for r in rows] == old + live             # ordered by ms, seq
    assert rows[1].fields == {"n": old[1]} and rows[1].stream == KEY
    assert everything.selectExpr("bool_and(unix_millis(ts) = ms)").first()[0]

    # [start, end): across the archive/stream boundary, in each accepted form
    start = datetime.fromtimestamp((NOW - 9 * DAY) / 1000, UTC)
    window = read_history(spark, target.url, KEY, tmp_path, start=start, end=NOW - DAY)
    assert ids_of(window) == [f"{NOW - 9 * DAY}-0", f"{CUT - 1}-0", f"{CUT}-0"]
    iso = datetime.fromtimestamp((CUT - 1) / 1000, UTC).isoformat()
    assert ids_of(read_history(spark, target.url, KEY, tmp_path, start=iso,
                               num_partitions=2)) == old[-1:] + live
    assert ids_of(read_history(spark, target.url, KEY, tmp_path,
                               end=NOW - 10 * DAY + 1)) == old[:2]


def test_history_counts_once_after_a_crash(spark, target, tmp_path):
    client = target.client()
    old = [f"{NOW - 10 * DAY}-0", f"{NOW - 8 * DAY}-0"]
    live = [f"{NOW - DAY}-0"]
    add(client, KEY, old + live)

    def crash_at(step):
        def before(name):
            if name == step:
                raise Crash(name)
        return before

    # files moved into place but not committed: not part of the archive
    with pytest.raises(Crash):
        archive(spark, target.url, KEY, "7d", tmp_path, now_ms=NOW, progress=None,
                before_step=crash_at("commit"))
    on_disk = [f for _, _, files in os.walk(stream_dir(tmp_path, KEY)) for f in files
               if f.endswith(".parquet")]
    assert on_disk
    assert ids_of(read_history(spark, target.url, KEY, tmp_path)) == old + live

    # committed but not trimmed: in the files and still in the stream
    with pytest.raises(Crash):
        archive(spark, target.url, KEY, "7d", tmp_path, now_ms=NOW, progress=None,
                before_step=crash_at("trim"))
    assert client.xlen(KEY) == 3
    assert ids_of(read_history(spark, target.url, KEY, tmp_path)) == old + live

    archive(spark, target.url, KEY, "7d", tmp_path, now_ms=NOW, progress=None)
    assert client.xlen(KEY) == 1
    assert ids_of(read_history(spark, target.url, KEY, tmp_path)) == old + live


def test_history_without_an_archive(spark, target, tmp_path):
    client = target.client()
    empty = read_history(spark, target.url, KEY, tmp_path / "none")
    assert empty.columns == COLUMNS and empty.count() == 0
    add(client, KEY, [f"{NOW}-0", f"{NOW}-1"])
    assert ids_of(read_history(spark, target.url, KEY, tmp_path / "none",
                               end=NOW + 1)) == [f"{NOW}-0", f"{NOW}-1"]
    assert read_history(spark, target.url, KEY, tmp_path, end=0).count() == 0
