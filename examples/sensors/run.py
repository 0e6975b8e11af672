"""The sensor scenario end to end: produce readings, run the Spark jobs, archive.

    .venv/bin/python examples/sensors/run.py                 # its own server, a temp dir
    .venv/bin/python examples/sensors/run.py --url redis://127.0.0.1:6379/0 --workdir out

1. producers add ``--minutes`` of readings of ``--sensors`` sensors to ``sensors``;
2. a streaming job writes per-minute averages per sensor to Parquet, another one
   writes the readings above ``--threshold`` to the stream ``alerts``;
3. ``tidelog.spark.archive`` (what ``tidelog-archive`` runs) moves the readings
   older than ``--archive-older-than`` to Parquet and trims them from the stream;
   ``tidelog.spark.read_history`` reads the archive and the stream as one.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

import redis

sys.path.insert(0, str(Path(__file__).resolve().parent))
from job import run_jobs  # noqa: E402
from producer import produce  # noqa: E402

from tidelog.spark import archive, local_session, read_history  # noqa: E402


def spark_session():
    """Spark on this machine (loopback only), the tidelog format registered."""
    return local_session("tidelog-sensors", "local[2]", {"spark.sql.shuffle.partitions": "2"})


def supports_idmp(r: redis.Redis) -> bool:
    """XADD ... IDMP: Tidelog and Redis 8.6+ have it (and XCFGSET with it)."""
    raw = redis.Redis(connection_pool=r.connection_pool)
    raw.set_response_callback("COMMAND", lambda reply, **_: reply)   # [None]: unknown
    reply = raw.execute_command("COMMAND", "INFO", "XCFGSET")
    return bool(reply) and reply[0] is not None


def run(spark, url: str, workdir: str, *, sensors: int = 4, minutes: int = 10,
        interval_s: int = 10, threshold: float = 30.0, older_than: str = "5m",
        seed: int = 7, idempotent: bool | None = None, cut: int | None = None,
        show=print) -> dict:
    """The whole scenario against the server at ``url``; returns what it did.

    ``idempotent`` None: write the alerts with XADD IDMP when the server has it.
    ``cut`` (Unix ms) archives the readings before it instead of ``older_than``."""
    r = redis.Redis.from_url(url)
    readings = produce(r, "sensors", sensors=sensors, minutes=minutes,
                       interval_s=interval_s, seed=seed)
    show(f"produced {len(readings)} readings of {sensors} sensors over {minutes} min "
         f"into 'sensors' ({readings[0].id} .. {readings[-1].id})")

    if idempotent is None:
        idempotent = supports_idmp(r)
    rows = run_jobs(spark, url, workdir, threshold=threshold, idempotent=idempotent)
    show(f"streaming jobs read {rows['averages']} rows (averages) and {rows['alerts']} "
         f"rows (alerts); checkpoints in {workdir}/checkpoints")

    averages = spark.read.parquet(f"{workdir}/averages").orderBy("minute", "sensor_id")
    rows_out = averages.collect()           # a few rows per sensor and minute
    show(f"{len(rows_out)} per-minute averages in {workdir}/averages "
         "(a minute is written once the watermark, newest reading - 1 min, passes it), e.g.:")
    for row in rows_out[:6]:
        show(f"  {row.minute:%H:%M} sensor {row.sensor_id}: avg {row.avg_temperature:.2f} "
             f"max {row.max_temperature:.2f} over {row.readings} readings")

    alerts = r.xrange("alerts")
    show(f"{len(alerts)} alerts (temperature > {threshold}) in 'alerts'"
         f"{' with XADD IDMP' if idempotent else ''}, e.g.:")
    for entry_id, fields in alerts[:3]:
        show(f"  {entry_id.decode()}: " + ", ".join(
            f"{k.decode()}={v.decode()}" for k, v in fields.items()))

    before = r.xlen("sensors")
    if cut is not None:
        older_than = None
    result = archive(spark, url, "sensors", older_than, f"{workdir}/archive", cut=cut,
                     progress=None)
    show(f"archive of readings older than {older_than or cut}: {result}; "
         f"'sensors' went from {before} to {r.xlen('sensors')} entries")
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
    p.add_argument("--archive-older-than", default="5m")
    p.add_argument("--no-idempotent", action="store_true",
                   help="write the alerts without XADD IDMP (at-least-once)")
    args = p.parse_args(argv)
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
