"""examples/sensors end to end at a tiny size, on the session's Spark and a Tidelog server:
the Parquet averages, the alerts stream and the archive are checked against the
readings the producers added; a second produce or run on the same stream adds only
the readings that have come due since, and the smallest size explains its output."""

from __future__ import annotations

import importlib
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

from tidelog.spark.manifest import stream_dir

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sensors"
THRESHOLD = 25.0
WATERMARK_MS = 60_000
MINUTE_MS = 60_000


@pytest.fixture(scope="module")
def example():
    sys.path.insert(0, str(EXAMPLE))
    try:
        yield importlib.import_module("run")
    finally:
        sys.path.remove(str(EXAMPLE))


def expected_averages(readings) -> dict[tuple[int, str], tuple[float, float, int]]:
    """Per (minute start in ms, sensor): average, maximum and count, for the minutes
    the watermark (newest reading - 1 minute) has closed."""
    groups = defaultdict(list)
    for r in readings:
        groups[(r.ms - r.ms % 60_000, r.sensor_id)].append(r.temperature)
    watermark = max(r.ms for r in readings) - WATERMARK_MS
    return {key: (sum(t) / len(t), max(t), len(t)) for key, t in groups.items()
            if key[0] + 60_000 <= watermark}


def test_sensor_example_end_to_end(example, spark, tidelog_target, tmp_path):
    lines: list[str] = []
    end_ms = int(time.time() * 1000)
    summary = example.run(spark, tidelog_target.url, str(tmp_path), sensors=2, minutes=4,
                          interval_s=15, threshold=THRESHOLD, cut=end_ms - 120_000,
                          show=lines.append)
    readings = summary["readings"]
    assert len(readings) == 2 * 4 * 60 // 15
    assert summary["idempotent"] is True            # Tidelog has XADD IDMP
    assert summary["rows"] == {"averages": len(readings), "alerts": len(readings)}

    # Parquet: one row per closed (minute, sensor), with the averages of the readings.
    rows = spark.read.parquet(summary["averages"]).collect()
    got = {(int(r.minute.timestamp() * 1000), r.sensor_id):
           (r.avg_temperature, r.max_temperature, r.readings) for r in rows}
    want = expected_averages(readings)
    assert len(rows) == len(got) and want and got.keys() == want.keys()
    for key, (avg, top, count) in want.items():
        assert got[key] == (pytest.approx(avg, rel=1e-12), top, count), key

    # The alerts stream: each reading above the threshold exactly once, in order.
    client = tidelog_target.client()
    hot = [r for r in readings if r.temperature > THRESHOLD]
    assert 0 < len(hot) < len(readings)
    alerts = [fields for _, fields in client.xrange("alerts")]
    assert [a[b"reading-id"].decode() for a in alerts] == [r.id for r in hot]
    assert [(a[b"sensor-id"].decode(), float(a[b"temperature"])) for a in alerts] == \
        [(r.sensor_id, r.temperature) for r in hot]
    assert any("alerts" in line for line in lines)

    # The archive moved a prefix of the stream; archive + stream hold every reading once.
    left = [e[0].decode() for e in client.xrange("sensors")]
    ids = [r.id for r in readings]
    moved = summary["archived"]
    assert moved.rows == sum(r.ms < end_ms - 120_000 for r in readings) > 0
    assert (moved.first_id, moved.last_id) == (ids[0], ids[moved.rows - 1])
    assert left == ids[moved.rows:]
    files = spark.read.parquet(stream_dir(summary["archive"], "sensors")).select("id").collect()
    assert sorted(r.id for r in files) == sorted(ids[:moved.rows])
    assert summary["history_rows"] == len(readings)


def grid_rounds(lo: int, hi: int, step: int, sensors: int) -> list[int]:
    """The reading times a produce should add for the span (lo, hi]: each grid time once
    per sensor."""
    return [ms for ms in range(lo - lo % step + step, hi + 1, step) for _ in range(sensors)]


def test_produce_adds_only_the_readings_due_since_the_last_entry(example, tidelog_target):
    producer = importlib.import_module("producer")
    client = tidelog_target.client()

    def produce(end_ms: int):
        return producer.produce(client, "sensors", sensors=2, minutes=1, interval_s=10,
                                end_ms=end_ms)

    end = int(time.time() * 1000) // MINUTE_MS * MINUTE_MS
    first = produce(end)
    assert [r.ms for r in first] == grid_rounds(end - MINUTE_MS, end, 10_000, 2)
    assert [r.id for r in first] == [f"{r.ms}-{i % 2}" for i, r in enumerate(first)]
    assert [r.sensor_id for r in first[:2]] == ["1001", "1002"]

    assert produce(end) == []                         # nothing has come due since
    assert client.xlen("sensors") == len(first)

    later = produce(end + 25_000)                     # 25 s on: the rounds at +10 s, +20 s
    assert [r.ms for r in later] == grid_rounds(end, end + 25_000, 10_000, 2)
    assert [r.temperature for r in later] != [r.temperature for r in first[:len(later)]]
    assert produce(end + 25_000) == []

    # After a long pause only the last `minutes` are filled in, still on the same grid.
    resumed = produce(end + 10 * MINUTE_MS + 5_000)
    assert [r.ms for r in resumed] == grid_rounds(end + 9 * MINUTE_MS + 5_000,
                                                  end + 10 * MINUTE_MS + 5_000, 10_000, 2)
    everything = first + later + resumed
    assert [e[0].decode() for e in client.xrange("sensors")] == [r.id for r in everything]
    assert max(r.ms for r in everything) <= end + 10 * MINUTE_MS + 5_000


def test_smallest_run_explains_its_output(example, spark, tidelog_target, tmp_path):
    """One sensor over two minutes, placed so that the watermark stops short of the
    first minute's end: no minute closes, and the output says why instead of showing
    an empty table; the default archive cut (the older half) still moves readings."""
    lines: list[str] = []
    end = int(time.time() * 1000) // MINUTE_MS * MINUTE_MS - 10_000   # hh:mm:50
    summary = example.run(spark, tidelog_target.url, str(tmp_path), sensors=1, minutes=2,
                          end_ms=end, show=lines.append)
    readings = summary["readings"]
    assert [r.ms for r in readings] == grid_rounds(end - 2 * MINUTE_MS, end, 10_000, 1)
    assert readings[0].ms % MINUTE_MS == 0             # the watermark, end - 1 min, is
    assert example.read_averages(spark, summary["averages"]) == []   # 10 s short of it

    text = "\n".join(lines)
    assert "no per-minute averages yet" in text
    assert "watermark (the newest reading's time less one minute" in text
    assert "--minutes 3 or more" in text
    assert "per-minute averages in" not in text and "per-minute average in" not in text
    assert not any(" sensor 1001: avg" in line for line in lines)   # no table rows

    moved = summary["archived"]
    assert moved.rows == sum(r.ms < end - MINUTE_MS for r in readings) == 5
    archive_line = next(line for line in lines if line.startswith("archive of readings"))
    assert archive_line.startswith(
        "archive of readings older than 1m (the older half of the 2 min span): archived 5 ")
    assert summary["history_rows"] == len(readings)


def test_rerun_on_the_same_workdir_carries_on(example, spark, tidelog_target, tmp_path):
    """Run, run again at once, run again on the clock: the later runs add only the
    readings due since (none the first time, never one in the future), the jobs go on
    from their checkpoints, and archive plus stream hold every reading once."""
    client = tidelog_target.client()
    options = dict(sensors=2, minutes=2, interval_s=10, threshold=THRESHOLD)
    end = int(time.time() * 1000) // 10_000 * 10_000

    def run(end_ms, lines):
        return example.run(spark, tidelog_target.url, str(tmp_path), end_ms=end_ms,
                           show=lines.append, **options)

    first = run(end, [])
    assert [r.ms for r in first["readings"]] == grid_rounds(end - 2 * MINUTE_MS, end,
                                                            10_000, 2)

    lines: list[str] = []
    again = run(end, lines)                            # nothing has come due
    assert again["readings"] == [] and again["rows"] == {"averages": 0, "alerts": 0}
    assert lines[0].startswith("no new readings: 'sensors' already holds every reading")
    assert lines[1].startswith("streaming jobs carried on from their checkpoints")
    assert any(line.startswith("archive of readings") and "nothing to move" in line
               for line in lines)
    assert again["history_rows"] == len(first["readings"])

    lines = []
    started = int(time.time() * 1000)
    later = run(None, lines)                           # the clock: what came due since
    finished = int(time.time() * 1000)
    new = later["readings"]
    due = grid_rounds(end, started, 10_000, 2)
    assert [r.ms for r in new][:len(due)] == due
    assert all(end < r.ms <= finished and r.ms % 10_000 == 0 for r in new)
    assert later["rows"] == {"averages": len(new), "alerts": len(new)}

    everything = first["readings"] + new
    assert later["history_rows"] == len(everything)
    history = read_history_ids(spark, tidelog_target.url, later["archive"])
    assert history == [r.id for r in everything]

    hot = [r.id for r in everything if r.temperature > THRESHOLD]
    assert [f[b"reading-id"].decode() for _, f in client.xrange("alerts")] == hot

    rows = spark.read.parquet(later["averages"]).collect()
    got = {(int(r.minute.timestamp() * 1000), r.sensor_id): r.readings for r in rows}
    want = {key: count for key, (_, _, count) in expected_averages(everything).items()}
    assert len(rows) == len(got) and got == want


def read_history_ids(spark, url: str, path: str) -> list[str]:
    from tidelog.spark import read_history

    return [r.id for r in read_history(spark, url, "sensors", path).select("id").collect()]
