"""examples/sensors end to end at a tiny size, on the session's Spark and a Tidelog server:
the Parquet averages, the alerts stream and the archive are checked against the
readings the producers added."""

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


def readme_spark_blocks() -> list[str]:
    """The Python blocks of README.md's "Spark pipeline" section, in order."""
    text = (EXAMPLE.parents[1] / "README.md").read_text()
    section = text.split("\n## Spark pipeline\n", 1)[1].split("\n## ", 1)[0]
    return [block.split("\n", 1)[1] for block in section.split("```")[1::2]
            if block.startswith("python\n")]


def test_readme_spark_snippets(example, spark, tidelog_target, tmp_path):
    """The README's batch read, batch write and archive/history blocks, run as written
    (the streaming block is the example's job, checked above)."""
    producer = importlib.import_module("producer")
    client = tidelog_target.client()
    producer.produce(client, "sensors", sensors=2, minutes=2, interval_s=30)
    blocks = readme_spark_blocks()
    assert len(blocks) == 4 and "readStream" in blocks[1]
    namespace = {"spark": spark}
    for i, code in enumerate(blocks):
        if i == 1:
            continue
        code = (code.replace("redis://127.0.0.1:6379/0", tidelog_target.url)
                .replace("/data/archive", str(tmp_path / "archive")))
        exec(compile(code, f"README.md, Spark block {i + 1}", "exec"), namespace)
    copied = [fields for _, fields in client.xrange("sensors-copy")]
    assert copied == [fields for _, fields in client.xrange("sensors")] and copied
    assert namespace["history"].count() == 0          # the README's month is long past
