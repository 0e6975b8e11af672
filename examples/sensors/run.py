"""The sensor scenario end to end: produce readings, run the Spark jobs, archive.

    .venv/bin/python examples/sensors/run.py                 # its own server, a temp dir
    .venv/bin/python examples/sensors/run.py --url redis://127.0.0.1:6379/0 --workdir out

1. producers add ``--minutes`` of readings of ``--sensors`` sensors to ``sensors``
   (run again on the same stream: only the readings that have come due since);
2. a streaming job writes per-minute averages per sensor to Parquet, another one
   writes the readings above ``--threshold`` to the stream ``alerts``;
3. ``tidelog.spark.archive`` (what ``tidelog-archive`` runs) moves the readings
   older than ``--archive-older-than`` (default: half of ``--minutes``) to Parquet
   and trims them from the stream; ``tidelog.spark.read_history`` reads the
   archive and the stream as one.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path

import redis

sys.path.insert(0, str(Path(__file__).resolve().parent))
from job import AVERAGES, run_jobs  # noqa: E402
from producer import produce  # noqa: E402

from tidelog.spark import archive, local_session, read_history  # noqa: E402

WATERMARK_MS = 60_000           # the averages job's watermark delay, "1 minute" in job.py
SHOWN = 6                       # at most this many example rows per table


def spark_session():
    """Spark on this machine (loopback only), the tidelog format registered."""
    return local_session("tidelog-sensors", "local[2]", {"spark.sql.shuffle.partitions": "2"})


def supports_idmp(r: redis.Redis) -> bool:
    """XADD ... IDMP: Tidelog and Redis 8.6+ have it (and XCFGSET with it)."""
    raw = redis.Redis(connection_pool=r.connection_pool)
    raw.set_response_callback("COMMAND", lambda reply, **_: reply)   # [None]: unknown
    reply = raw.execute_command("COMMAND", "INFO", "XCFGSET")
    return bool(reply) and reply[0] is not None


def clock(ms: int) -> str:
    """A time of day in the local zone, as PySpark hands back the ``minute`` column."""
    return datetime.fromtimestamp(ms / 1000).strftime("%H:%M:%S")


def end_of(r: redis.Redis, stream: str, newest: bool = True) -> int | None:
    """The time (ms) of the newest (or oldest) entry of ``stream``; None when empty."""
    found = (r.xrevrange(stream, "+", "-", count=1) if newest
             else r.xrange(stream, "-", "+", count=1))
    return int(found[0][0].split(b"-")[0]) if found else None


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def half_of(minutes: int) -> str:
    """The default archive age, half the span produced, as a duration ``archive`` takes."""
    seconds = minutes * 30
    return f"{seconds // 60}m" if seconds % 60 == 0 else f"{seconds}s"


def read_averages(spark, path: str) -> list:
    """The rows the averages job has written, by minute and sensor (none before its first
    batch has run)."""
    if not os.path.isdir(path):
        return []
    return spark.read.schema(AVERAGES).parquet(path).orderBy("minute", "sensor_id").collect()


def run(spark, url: str, workdir: str, *, sensors: int = 4, minutes: int = 10,
        interval_s: int = 10, threshold: float = 30.0, older_than: str | None = None,
        seed: int = 7, idempotent: bool | None = None, cut: int | None = None,
        end_ms: int | None = None, show=print) -> dict:
    """The whole scenario against the server at ``url``; returns what it did.

    ``idempotent`` None: write the alerts with XADD IDMP when the server has it.
    ``older_than`` None: archive the older half of the ``minutes`` produced (``5m``
    of 10), counted from the same moment as the readings; a duration such as ``"5m"``
    counts from the clock when the archive runs.  ``cut`` (Unix ms) archives the
    readings before it instead.  ``end_ms`` (Unix ms, default now): the readings go
    up to that moment, and the archive's ages count from it."""
    r = redis.Redis.from_url(url)
    pinned = end_ms is not None
    end_ms = int(time.time() * 1000) if end_ms is None else end_ms
    held = end_of(r, "sensors")                # None: a first run on this stream
    readings = produce(r, "sensors", sensors=sensors, minutes=minutes,
                       interval_s=interval_s, seed=seed, end_ms=end_ms)
    what = f"{plural(len(readings), 'reading')} of {plural(sensors, 'sensor')}"
    if readings and held is None:
        show(f"produced {what}, one every {interval_s} s over the last {minutes} min, "
             f"into 'sensors' ({readings[0].id} .. {readings[-1].id})")
    elif readings:
        show(f"produced {what}, one every {interval_s} s from "
             f"{clock(readings[0].ms)} to {clock(readings[-1].ms)}, into 'sensors' "
             f"({readings[0].id} .. {readings[-1].id}); it held readings up to "
             f"{clock(held)} from an earlier run")
    elif held is not None:
        due = (held // (interval_s * 1000) + 1) * interval_s * 1000
        show(f"no new readings: 'sensors' already holds every reading due by now (the "
             f"newest is from {clock(held)}, the next one is due at {clock(due)})")
    else:
        show(f"no readings: {minutes} min at one reading every {interval_s} s holds none")

    if idempotent is None:
        idempotent = supports_idmp(r)
    resumed = os.path.isdir(f"{workdir}/checkpoints")
    rows = run_jobs(spark, url, workdir, threshold=threshold, idempotent=idempotent)
    if resumed:
        show(f"streaming jobs carried on from their checkpoints in {workdir}/checkpoints: "
             f"{rows['averages']} new rows (averages) and {rows['alerts']} new rows (alerts)")
    else:
        show(f"streaming jobs read {rows['averages']} rows (averages) and {rows['alerts']} "
             f"rows (alerts); checkpoints in {workdir}/checkpoints")

    newest = end_of(r, "sensors")
    averages = read_averages(spark, f"{workdir}/averages")
    now = "" if newest is None else f", now {clock(newest - WATERMARK_MS)}"
    rule = (f"a minute is written once the watermark (the newest reading's time less "
            f"one minute{now}) has passed its end")
    if averages:
        # The newest few minutes, whole minutes where they fit in the sample.
        recent = sorted({row.minute for row in averages})[-max(1, SHOWN // max(1, sensors)):]
        shown = [row for row in averages if row.minute >= recent[0]][:SHOWN]
        first, last = f"{averages[0].minute:%H:%M}", f"{averages[-1].minute:%H:%M}"
        show(f"{plural(len(averages), 'per-minute average')} in {workdir}/averages, "
             f"{first if first == last else f'{first} .. {last}'}; {rule}. The newest:")
        for row in shown:
            show(f"  {row.minute:%H:%M} sensor {row.sensor_id}: avg {row.avg_temperature:.2f} "
                 f"max {row.max_temperature:.2f} over {plural(row.readings, 'reading')}")
    elif newest is None:
        show("no per-minute averages: there are no readings")
    else:
        first_end = (end_of(r, "sensors", newest=False) // 60_000 + 1) * 60_000
        enough = 2 + -(-interval_s // 60)       # a whole minute, then one for the watermark
        show(f"no per-minute averages yet: {rule}, and it has not passed the end of the "
             f"first minute of readings in 'sensors' ({clock(first_end)}) yet; produce "
             f"more minutes (--minutes {enough} or more) to see averages, or run again "
             f"later with the same --workdir")

    alerts = r.xrange("alerts")
    if alerts:
        show(f"{plural(len(alerts), 'alert')} (temperature > {threshold}) in 'alerts'"
             f"{' with XADD IDMP' if idempotent else ''}, e.g.:")
        for entry_id, fields in alerts[:3]:
            show(f"  {entry_id.decode()}: " + ", ".join(
                f"{k.decode()}={v.decode()}" for k, v in fields.items()))
    else:
        show(f"no alerts in 'alerts': no reading so far is above {threshold}")

    now_ms = None                              # an explicit age counts from the clock
    if cut is not None:
        older_than, what = None, f"before the cut {cut}"
    elif older_than is None:
        older_than, now_ms = half_of(minutes), end_ms
        what = f"older than {older_than} (the older half of the {minutes} min span)"
    else:
        what = f"older than {older_than}"
        now_ms = end_ms if pinned else None
    before = r.xlen("sensors")
    result = archive(spark, url, "sensors", older_than, f"{workdir}/archive", cut=cut,
                     now_ms=now_ms, progress=None)
    if result.rows:
        show(f"archive of readings {what}: {result}; 'sensors' went from {before} to "
             f"{r.xlen('sensors')} entries")
    else:
        oldest = end_of(r, "sensors", newest=False)
        due = int(result.cut.split("-")[0])
        show(f"archive of readings {what}: nothing to move, " + (
            "'sensors' is empty" if oldest is None else
            f"no reading is from before {clock(due)} (the oldest in 'sensors' is from "
            f"{clock(oldest)}); 'sensors' keeps its {before} entries"))
    total = read_history(spark, url, "sensors", f"{workdir}/archive").count()
    show(f"read_history: {total} readings in the archive and the stream together")
    return {"readings": readings, "rows": rows, "idempotent": idempotent,
            "averages": f"{workdir}/averages", "archive": f"{workdir}/archive",
            "archived": result, "history_rows": total}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", help="a running server (default: start one on a free port)")
    p.add_argument("--workdir", help="Parquet, checkpoints and archive (default: a new temp dir)")
    p.add_argument("--sensors", type=int, default=4)
    p.add_argument("--minutes", type=int, default=10, help="how far back the readings go")
    p.add_argument("--interval", type=int, default=10, help="seconds between readings")
    p.add_argument("--threshold", type=float, default=30.0, help="alert above this")
    p.add_argument("--archive-older-than", metavar="AGE",
                   help="archive the readings older than this (30s, 5m, 2h, 7d; "
                        "default: half of --minutes)")
    p.add_argument("--no-idempotent", action="store_true",
                   help="write the alerts without XADD IDMP (at-least-once)")
    args = p.parse_args(argv)
    if args.interval <= 0:
        p.error("--interval must be positive")
    workdir = args.workdir or tempfile.mkdtemp(prefix="tidelog-sensors-")
    with ExitStack() as stack:
        url = args.url
        if url is None:
            from tidelog.server.embed import EmbeddedServer
            data = os.path.join(workdir, "server")     # its AOF: a re-run carries on
            os.makedirs(data, exist_ok=True)
            srv = stack.enter_context(EmbeddedServer(port=0, save="", appendonly="yes",
                                                     dir=data))
            url = f"redis://127.0.0.1:{srv.port}/0"
            print(f"started an embedded tidelog-server at {url}")
        spark = spark_session()
        stack.callback(spark.stop)
        run(spark, url, workdir, sensors=args.sensors, minutes=args.minutes,
            interval_s=args.interval, threshold=args.threshold,
            older_than=args.archive_older_than,
            idempotent=False if args.no_idempotent else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
