#!/usr/bin/env python3
"""Benchmark of the ``tidelog`` Spark data source against Tidelog and redis-server.

    .venv/bin/python bench/spark.py                      # full size: 1,000,000 entries (~12 min)
    .venv/bin/python bench/spark.py --entries 100000 --write-rows 100000 --stream-seconds 10
    .venv/bin/python bench/spark.py --only tidelog --phases read,breakdown

One run starts both servers (tidelog-server and redis-server, no persistence,
each on a free loopback port in a fresh temporary directory, as bench/run.py
does) and one local[2] SparkSession, then measures on both servers in turn:

read       a stream of --entries entries (``sensor s042 temp 21.5``, explicit IDs,
           ten per millisecond), loaded by pipelined XADDs from a raw socket, is
           read by ``spark.read.format("tidelog")`` with numPartitions 1, 2 and 4
           into the ``noop`` sink (``df.write.format("noop")``: every row is built
           and handed to Spark, nothing is stored); rows/s, and ``count()`` once;
write      ``spark.range`` rows (two columns, sensor and temp) written by
           ``df.write.format("tidelog")`` (one XADD per row): rows/s;
stream     a producer process XADDs at a fixed rate for a fixed time, each entry
           carrying its send time; a streaming query reads the stream with a
           processingTime trigger and a ``foreachBatch`` sink collects each
           micro-batch on the driver and takes ``time.time_ns()``: latency
           percentiles of arrival - send, the first micro-batches excluded;
breakdown  outside Spark, one partition's ``read_batches`` taken apart: XRANGE
           pages through redis-py and hiredis, hiredis's parse alone, Arrow
           building alone (``--profile`` adds a cProfile of the whole call).

The order alternates between the servers (Redis, Tidelog, Redis, ...) so slow
drifts in background load hit both.  Every load loop is bounded in count and
in time, and every Spark action is cancelled if it overruns --timeout.

Prints markdown tables on stdout (progress on stderr) and writes the raw
results as JSON (default: bench/results/<date>-spark.json).  See the "Spark
data source" section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import datetime as dt
import hashlib
import io
import json
import os
import pstats
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

# Run as a script (python bench/spark.py): this folder is on sys.path.
import servers
from servers import loadavg, log, scrub

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SERVER_NAMES = {"redis": "Redis", "tidelog": "Tidelog"}
PHASES = ("read", "write", "stream", "breakdown")

READ_KEY = "bench:spark:read"
WRITE_KEY = "bench:spark:write"
WARM_KEY = "bench:spark:warm"
STREAM_KEY = "bench:spark:live"
ID_BASE_MS = 1_700_000_000_000   # first ID of the read stream; ten entries per millisecond
PER_MS = 10
LOAD_BATCH = 10_000              # XADDs per write of the loader (two batches in flight)


# -- CPU accounting -------------------------------------------------------------------

def _proc_table() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, CPU seconds incl. reaped children) for every process."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            f = servers._stat_fields(int(entry))
            if f:
                ticks = int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])
                table[int(entry)] = (int(f[1]), ticks / servers.CLK_TCK)
    return table


def client_cpu_seconds(exclude: set[int]) -> float:
    """CPU seconds of this process and its descendants (the Spark JVM and its Python
    workers, the producer), leaving out the server processes' subtrees."""
    table = _proc_table()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0.0, [os.getpid()]
    while todo:
        pid = todo.pop()
        if pid in exclude:
            continue
        total += table.get(pid, (0, 0.0))[1]
        todo.extend(children.get(pid, []))
    return total


class Meter:
    """Wall time, server CPU, client (Spark) CPU and the rest of the machine over a block."""

    def __init__(self, bench: Bench, target: Target):
        self.bench, self.target = bench, target

    def __enter__(self) -> Meter:
        self.server_pids = {t.server.pid for t in self.bench.targets if t.server.alive()}
        self.busy0 = servers.machine_busy_seconds()
        self.srv0 = self.target.server.cpu_seconds()
        self.cli0 = client_cpu_seconds(self.server_pids)
        self.t0 = time.monotonic()
        return self

    def __exit__(self, *exc) -> None:
        self.wall = time.monotonic() - self.t0
        self.server_cpu = (self.target.server.cpu_seconds() - self.srv0
                           if self.target.server.alive() else None)
        self.client_cpu = client_cpu_seconds(self.server_pids) - self.cli0
        busy1 = servers.machine_busy_seconds()
        self.other = None
        if None not in (self.busy0, busy1, self.server_cpu):
            rest = (busy1 - self.busy0) - self.server_cpu - self.client_cpu
            self.other = max(0.0, rest) / (self.wall * servers.NCPU) if self.wall > 0 else None

    def record(self, **extra) -> dict:
        return {"wall_s": round(self.wall, 4),
                "server_cpu_s": None if self.server_cpu is None else round(self.server_cpu, 3),
                "spark_cpu_s": round(self.client_cpu, 3),
                "other_cpu_share": None if self.other is None else round(self.other, 3),
                **extra}


# -- servers and the raw-socket loader ---------------------------------------------

class Target:
    def __init__(self, name: str, server: servers.Server):
        self.name = name
        self.server = server
        self.url = ""

    def redis(self):
        import redis
        return redis.Redis(host="127.0.0.1", port=self.server.port, socket_timeout=120)


def _bulk(value: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(value), value)


def read_entry(i: int) -> bytes:
    """``XADD <key> <id> sensor sNNN temp T`` for entry ``i`` of the read stream
    (the key is prefixed by the caller)."""
    eid = b"%d-%d" % (ID_BASE_MS + i // PER_MS, i % PER_MS)
    return (_bulk(eid) + b"$6\r\nsensor\r\n" + _bulk(b"s%03d" % (i % 100))
            + b"$4\r\ntemp\r\n" + _bulk(b"%.1f" % (15 + (i % 200) / 10)))


def load_stream(port: int, key: str, n: int, timeout: float) -> dict:
    """XADD entries 0 .. n-1 with explicit IDs, LOAD_BATCH per write and the next
    batch sent before the replies of the last one are read.  Bounded by ``n`` and
    ``timeout``; returns the count of replies and of error replies."""
    import hiredis
    deadline = time.monotonic() + timeout
    head = b"*7\r\n$4\r\nXADD\r\n" + _bulk(key.encode())
    reader = hiredis.Reader()
    done = {"replies": 0, "errors": 0, "first_error": None}
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def drain(count: int) -> None:
            while count:
                reply = reader.gets()
                if reply is False:
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"loading did not finish within {timeout:.0f}s")
                    chunk = s.recv(1 << 20)
                    if not chunk:
                        raise ConnectionError("server closed the connection")
                    reader.feed(chunk)
                    continue
                if isinstance(reply, Exception):
                    done["errors"] += 1
                    done["first_error"] = done["first_error"] or str(reply)
                done["replies"] += 1
                count -= 1

        in_flight = 0
        for lo in range(0, n, LOAD_BATCH):
            if time.monotonic() > deadline:
                raise TimeoutError(f"loading did not finish within {timeout:.0f}s")
            hi = min(n, lo + LOAD_BATCH)
            s.sendall(b"".join([head + read_entry(i) for i in range(lo, hi)]))
            drain(in_flight)
            in_flight = hi - lo
        drain(in_flight)
    return done


# -- the producer of the streaming test (a separate process) -----------------------

def produce(port: int, key: str, rate: float, seconds: float) -> dict:
    """Open loop: message i is due at start + i / rate and sent then, as
    ``XADD key * t <time.time_ns()> n <i>``; a thread reads the replies."""
    import hiredis
    total = int(rate * seconds)
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    stats = {"replies": 0, "errors": 0}

    def replies():
        reader = hiredis.Reader()
        while stats["replies"] < total:
            try:
                chunk = s.recv(1 << 16)
            except OSError:
                return
            if not chunk:
                return
            reader.feed(chunk)
            while (reply := reader.gets()) is not False:
                stats["replies"] += 1
                if isinstance(reply, Exception):
                    stats["errors"] += 1

    th = threading.Thread(target=replies, daemon=True)
    th.start()
    head = b"*7\r\n$4\r\nXADD\r\n" + _bulk(key.encode()) + b"$1\r\n*\r\n$1\r\nt\r\n"
    late = []
    start = time.monotonic()
    hard_stop = start + seconds + 10
    sent = 0
    for i in range(total):
        due = start + i / rate
        now = time.monotonic()
        if now > hard_stop:
            break
        if due > now:
            time.sleep(due - now)
        late.append(time.monotonic() - due)
        s.sendall(head + _bulk(b"%d" % time.time_ns()) + b"$1\r\nn\r\n" + _bulk(b"%d" % i))
        sent += 1
    th.join(timeout=10)
    s.close()
    late.sort()
    return {"sent": sent, "replies": stats["replies"], "errors": stats["errors"],
            "seconds": round(time.monotonic() - start, 3),
            "late_p99_ms": round(1e3 * late[int(0.99 * (len(late) - 1))], 3) if late else None,
            "late_max_ms": round(1e3 * late[-1], 3) if late else None}


# -- the benchmark ------------------------------------------------------------------

def pct(values: list[float], q: float) -> float | None:
    """The q-quantile (0..1) by linear interpolation; None when empty."""
    if not values:
        return None
    v = sorted(values)
    x = q * (len(v) - 1)
    lo = int(x)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (x - lo)


class Bench:
    def __init__(self, args, targets: list[Target]):
        self.args = args
        self.targets = targets
        self.spark = None
        self.results: dict = {t.name: {} for t in targets}

    # -- Spark ------------------------------------------------------------------------
    def start_spark(self) -> None:
        os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
        os.environ["PYSPARK_PYTHON"] = sys.executable
        os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
        src = str(REPO / "src")
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (src, os.environ.get("PYTHONPATH", "")) if p)
        if src not in sys.path:
            sys.path.insert(0, src)
        from tidelog.spark import local_session
        self.spark = local_session("tidelog-bench", "local[2]",
                                   {"spark.sql.shuffle.partitions": "2"})

    @contextlib.contextmanager
    def watchdog(self, what: str, timeout: float | None = None):
        """Cancel every Spark job if the block overruns the timeout."""
        timeout = timeout or self.args.timeout
        fired = threading.Event()

        def cancel():
            fired.set()
            log(f"  {what}: over {timeout:.0f}s, cancelling the Spark jobs")
            self.spark.sparkContext.cancelAllJobs()

        timer = threading.Timer(timeout, cancel)
        timer.daemon = True
        timer.start()
        try:
            yield
        except Exception as exc:
            if fired.is_set():
                raise TimeoutError(f"{what} did not finish within {timeout:.0f}s") from exc
            raise
        finally:
            timer.cancel()

    def reader(self, t: Target, key: str, parts: int | None, **options):
        r = (self.spark.read.format("tidelog").option("url", t.url).option("stream", key))
        if parts is not None:
            r = r.option("numPartitions", parts)
        for k, v in options.items():
            r = r.option(k, v)
        return r.load()

    def guarded(self, t: Target, phase: str, fn) -> None:
        """Run one phase on one server; record a failure instead of raising."""
        try:
            fn(t)
        except Exception as exc:  # noqa: BLE001 - one failed phase must not stop the run
            err = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"
            self.results[t.name].setdefault("errors", {})[phase] = err
            self.results[t.name].setdefault("tracebacks", {})[phase] = traceback.format_exc()
            log(f"  {t.name:8s} {phase}: FAILED {err}")

    def ok(self, t: Target, phase: str) -> bool:
        return t.server.alive() and phase not in self.results[t.name].get("errors", {})

    # -- load ---------------------------------------------------------------------------
    def load(self, t: Target) -> None:
        n = self.args.entries
        c = t.redis()
        c.delete(READ_KEY)
        with Meter(self, t) as m:
            done = load_stream(t.server.port, READ_KEY, n, self.args.load_timeout)
        xlen = c.xlen(READ_KEY)
        rec = m.record(entries=n, xlen=xlen, **done)
        rec["rss_bytes"] = t.server.rss_bytes()
        self.results[t.name]["load"] = rec
        log(f"  {t.name:8s} loaded {n:,} entries in {m.wall:.2f} s "
            f"(server CPU {m.server_cpu:.2f} s), XLEN {xlen:,}"
            + (f", {done['errors']} error replies: {done['first_error']}" if done["errors"] else ""))
        if xlen != n or done["errors"]:
            raise RuntimeError(f"the read stream holds {xlen} entries, not {n}")

    # -- read ---------------------------------------------------------------------------
    def warm_read(self, t: Target) -> None:
        """Untimed: start the Python workers and warm the JIT on a tenth of the stream."""
        end = ID_BASE_MS + max(1, self.args.entries // PER_MS // 10)
        df = self.reader(t, READ_KEY, 2, endingId=str(end))
        with self.watchdog(f"{t.name} warm-up read"):
            df.write.format("noop").mode("overwrite").save()

    def read_once(self, t: Target, parts: int) -> None:
        df = self.reader(t, READ_KEY, parts)
        with self.watchdog(f"{t.name} read numPartitions={parts}"), Meter(self, t) as m:
            df.write.format("noop").mode("overwrite").save()
        rec = m.record(rows_per_s=self.args.entries / m.wall)
        self.results[t.name].setdefault("read", {}).setdefault(str(parts), []).append(rec)
        log(f"  {t.name:8s} read numPartitions={parts}: {rec['rows_per_s']:>10,.0f} rows/s "
            f"({m.wall:.2f} s; server CPU {m.server_cpu:.2f} s, Spark CPU "
            f"{m.client_cpu:.2f} s, other processes {fmt_pct(m.other)})")

    def count_once(self, t: Target) -> None:
        parts = max(self.args.partitions)
        df = self.reader(t, READ_KEY, parts)
        with self.watchdog(f"{t.name} count"), Meter(self, t) as m:
            n = df.count()
        rec = m.record(rows=n, partitions=parts, rows_per_s=n / m.wall)
        self.results[t.name]["count"] = rec
        log(f"  {t.name:8s} count() numPartitions={parts}: {n:,} rows in {m.wall:.2f} s")
        if n != self.args.entries:
            raise RuntimeError(f"count() gave {n}, not {self.args.entries}")

    # -- write --------------------------------------------------------------------------
    def write_df(self, n: int):
        return (self.spark.range(0, n, 1, numPartitions=self.args.write_partitions)
                .selectExpr("format_string('s%03d', id % 100) AS sensor",
                            "CAST(15 + (id % 200) / 10.0 AS DOUBLE) AS temp"))

    def save(self, t: Target, df, key: str) -> None:
        (df.write.format("tidelog").option("url", t.url).option("stream", key)
         .mode("append").save())

    def warm_write(self, t: Target) -> None:
        c = t.redis()
        c.delete(WARM_KEY)
        with self.watchdog(f"{t.name} warm-up write"):
            self.save(t, self.write_df(min(20_000, self.args.write_rows)), WARM_KEY)
        c.delete(WARM_KEY)

    def write_once(self, t: Target) -> None:
        n = self.args.write_rows
        c = t.redis()
        c.delete(WRITE_KEY)
        df = self.write_df(n)
        with self.watchdog(f"{t.name} write"), Meter(self, t) as m:
            self.save(t, df, WRITE_KEY)
        xlen = c.xlen(WRITE_KEY)
        rec = m.record(rows=n, xlen=xlen, rows_per_s=n / m.wall)
        self.results[t.name].setdefault("write", []).append(rec)
        c.delete(WRITE_KEY)
        log(f"  {t.name:8s} write: {rec['rows_per_s']:>10,.0f} rows/s ({m.wall:.2f} s; server "
            f"CPU {m.server_cpu:.2f} s, Spark CPU {m.client_cpu:.2f} s, other processes "
            f"{fmt_pct(m.other)})")
        if xlen != n:
            raise RuntimeError(f"the written stream holds {xlen} entries, not {n}")

    # -- stream -------------------------------------------------------------------------
    def stream(self, t: Target) -> None:
        from pyspark.sql import functions as F
        a = self.args
        c = t.redis()
        c.delete(STREAM_KEY)
        arrivals: list[tuple[int, int, int, int]] = []   # (batch, n, sent ns, arrived ns)
        batch_rows: dict[int, int] = {}

        def sink(batch_df, batch_id):
            rows = batch_df.select(F.col("fields")["n"].alias("n"),
                                   F.col("fields")["t"].alias("t")).collect()
            now = time.time_ns()
            batch_rows[batch_id] = len(rows)
            for r in rows:
                arrivals.append((batch_id, int(r["n"]), int(r["t"]), now))

        checkpoint = tempfile.mkdtemp(prefix="bench-spark-checkpoint-")
        df = (self.spark.readStream.format("tidelog").option("url", t.url)
              .option("stream", STREAM_KEY).option("startingOffsets", "earliest").load())
        query = (df.writeStream.foreachBatch(sink)
                 .trigger(processingTime=f"{a.trigger_ms} milliseconds")
                 .option("checkpointLocation", checkpoint).start())
        producer = None
        try:
            # Let the query plan its first (empty) batches before the load starts.
            deadline = time.monotonic() + 120
            while len(query.recentProgress) < 3 and time.monotonic() < deadline:
                if query.exception() is not None:
                    raise RuntimeError(f"the query failed: {query.exception()}")
                time.sleep(0.1)
            argv = [sys.executable, str(Path(__file__).resolve()), "_produce",
                    str(t.server.port), STREAM_KEY, str(a.stream_rate), str(a.stream_seconds)]
            with Meter(self, t) as m:
                producer = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True,
                                            stdin=subprocess.DEVNULL)
                out, _ = producer.communicate(timeout=a.stream_seconds + 60)
                prod = json.loads(out)
                deadline = time.monotonic() + a.drain_timeout
                while len(arrivals) < prod["sent"] and time.monotonic() < deadline:
                    if query.exception() is not None:
                        raise RuntimeError(f"the query failed: {query.exception()}")
                    time.sleep(0.05)
            progress = list(query.recentProgress)
        finally:
            if producer is not None and producer.poll() is None:
                producer.kill()
                producer.communicate()
            query.stop()
            query.awaitTermination(60)
            shutil.rmtree(checkpoint, ignore_errors=True)
        ns = [x[1] for x in arrivals]
        data_batches = sorted(b for b, k in batch_rows.items() if k)
        skipped = set(data_batches[:a.warmup_batches])
        lat = [(arr - sent) / 1e6 for b, _, sent, arr in arrivals if b not in skipped]
        lat_all = [(arr - sent) / 1e6 for _, _, sent, arr in arrivals]
        durations = [p["durationMs"].get("triggerExecution") for p in progress
                     if p.get("numInputRows") and p.get("durationMs")]
        durations = [d for d in durations if d is not None]
        rec = m.record(
            producer=prod, received=len(arrivals), distinct=len(set(ns)),
            exactly_once=len(ns) == len(set(ns)) == prod["sent"],
            data_batches=len(data_batches), warmup_batches_excluded=len(skipped),
            rows_measured=len(lat),
            rows_per_batch_median=statistics.median(batch_rows[b] for b in data_batches)
            if data_batches else None,
            latency_ms={q: round(pct(lat, v), 1) if lat else None for q, v in
                        (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0))},
            latency_ms_all={q: round(pct(lat_all, v), 1) if lat_all else None for q, v in
                            (("p50", 0.5), ("p99", 0.99), ("max", 1.0))},
            trigger_ms=a.trigger_ms,
            batch_duration_ms={"median": pct(durations, 0.5), "p90": pct(durations, 0.9),
                               "max": max(durations) if durations else None},
            progress_samples=len(progress),
            duration_ms_median={k: statistics.median(p["durationMs"].get(k, 0) for p in
                                                     progress if p.get("numInputRows"))
                                for k in ("latestOffset", "queryPlanning", "getBatch",
                                          "addBatch", "walCommit", "commitOffsets",
                                          "triggerExecution")}
            if any(p.get("numInputRows") for p in progress) else None)
        self.results[t.name]["stream"] = rec
        c.delete(STREAM_KEY)
        L = rec["latency_ms"]
        log(f"  {t.name:8s} stream: sent {prod['sent']:,}, received {len(arrivals):,} in "
            f"{len(data_batches)} batches; latency p50 {L['p50']} ms, p99 {L['p99']} ms, "
            f"max {L['max']} ms (first {len(skipped)} batches excluded)")

    # -- breakdown outside Spark -----------------------------------------------------
    def breakdown(self, t: Target) -> None:
        import hiredis

        from tidelog.spark import connection
        from tidelog.spark.ids import MAX_ID, MIN_ID
        from tidelog.spark.reader import read_batches, read_ranges
        from tidelog.spark.schema import BatchBuilder, default_schema
        page, depth = 1000, 8                       # the options' defaults
        conn = connection.client(t.url)
        bounds = connection.entry_bounds(conn, [READ_KEY], MIN_ID, MAX_ID)
        ranges = [(READ_KEY, *bounds[READ_KEY])]
        schema = default_schema()
        rec: dict = {"page_size": page}
        # 1. XRANGE pages through redis-py (hiredis parser), nothing built.
        pages = []
        with Meter(self, t) as m:
            for _key, entries in read_ranges(conn, ranges, page, depth):
                pages.append(entries)
        rows = sum(len(p) for p in pages)
        rec["fetch"] = m.record(rows=rows, rows_per_s=rows / m.wall)
        # 2. hiredis's parse alone, on the raw bytes of one reply of a full page.
        with socket.create_connection(("127.0.0.1", t.server.port), timeout=60) as s:
            s.sendall(b"*6\r\n$6\r\nXRANGE\r\n" + _bulk(READ_KEY.encode()) + b"$1\r\n-\r\n"
                      b"$1\r\n+\r\n$5\r\nCOUNT\r\n" + _bulk(b"%d" % page))
            raw, rd = b"", hiredis.Reader()
            while True:
                chunk = s.recv(1 << 20)
                raw += chunk
                rd.feed(chunk)
                if rd.gets() is not False:
                    break
        reps = max(1, rows // page)
        parse_s = float("inf")
        for _ in range(3):                          # the fastest of three: client CPU only
            t0 = time.perf_counter()
            for _ in range(reps):
                rd = hiredis.Reader()
                rd.feed(raw)
                rd.gets()
            parse_s = min(parse_s, time.perf_counter() - t0)
        rec["hiredis_parse"] = {"seconds": round(parse_s, 4), "rows": reps * page,
                                "reply_bytes": len(raw), "rows_per_s": reps * page / parse_s,
                                "reply_sha1": hashlib.sha1(raw).hexdigest()}
        # 3. Arrow building alone, on the pages fetched in 1.
        builder = BatchBuilder(schema, False)
        build_s = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            for p in pages:
                builder.build([(READ_KEY, p)])
            build_s = min(build_s, time.perf_counter() - t0)
        rec["build"] = {"seconds": round(build_s, 4), "rows": rows, "rows_per_s": rows / build_s}
        del pages
        # 4. The whole read_batches call, as one Spark partition runs it.
        with Meter(self, t) as m:
            got = sum(b.num_rows for b in read_batches(t.url, ranges, schema, False, page, depth))
        rec["read_batches"] = m.record(rows=got, rows_per_s=got / m.wall)
        if self.args.profile:
            prof = cProfile.Profile()
            prof.enable()
            for _ in read_batches(t.url, ranges, schema, False, page, depth):
                pass
            prof.disable()
            buf = io.StringIO()
            pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(18)
            rec["profile_top"] = scrub(buf.getvalue())
            log(rec["profile_top"])
        self.results[t.name]["breakdown"] = rec
        log(f"  {t.name:8s} breakdown: fetch {rec['fetch']['rows_per_s']:,.0f} rows/s "
            f"(server CPU {rec['fetch']['server_cpu_s']} s of {rec['fetch']['wall_s']} s), "
            f"hiredis parse {rec['hiredis_parse']['rows_per_s']:,.0f} rows/s, Arrow build "
            f"{rec['build']['rows_per_s']:,.0f} rows/s, read_batches "
            f"{rec['read_batches']['rows_per_s']:,.0f} rows/s")

    # -- the whole run ------------------------------------------------------------------
    def run(self) -> None:
        a = self.args
        ts = self.targets
        need_stream_data = any(p in a.phases for p in ("read", "breakdown"))
        if need_stream_data:
            log(f"== loading {a.entries:,} entries into {READ_KEY}")
            for t in ts:
                self.guarded(t, "load", self.load)
        if any(p in a.phases for p in ("read", "write", "stream")):
            log("== starting Spark (local[2])")
            t0 = time.monotonic()
            self.start_spark()
            log(f"  SparkSession in {time.monotonic() - t0:.1f} s")
        if "read" in a.phases:
            log("== batch reads into the noop sink")
            for t in ts:
                if self.ok(t, "load"):
                    self.guarded(t, "read", self.warm_read)
            for _ in range(a.repeat):
                for parts in a.partitions:
                    for t in ts:
                        if self.ok(t, "load") and self.ok(t, "read"):
                            self.guarded(t, "read", lambda t, p=parts: self.read_once(t, p))
            for t in ts:
                if self.ok(t, "load") and self.ok(t, "read"):
                    self.guarded(t, "count", self.count_once)
        if "write" in a.phases:
            log(f"== batch writes of {a.write_rows:,} rows")
            for t in ts:
                if t.server.alive():
                    self.guarded(t, "write", self.warm_write)
            for _ in range(a.repeat):
                for t in ts:
                    if self.ok(t, "write"):
                        self.guarded(t, "write", self.write_once)
        if "stream" in a.phases:
            log(f"== streaming: {a.stream_rate:g} entries/s for {a.stream_seconds:g} s, "
                f"trigger {a.trigger_ms} ms")
            for t in ts:
                if t.server.alive():
                    self.guarded(t, "stream", self.stream)
        if "breakdown" in a.phases:
            log("== one partition's read_batches outside Spark")
            for t in ts:
                if self.ok(t, "load"):
                    self.guarded(t, "breakdown", self.breakdown)

    def stop_spark(self) -> None:
        if self.spark is not None:
            try:
                self.spark.stop()
            except Exception:  # noqa: BLE001
                pass


# -- report ---------------------------------------------------------------------------

def fmt_num(x, digits: int = 0) -> str:
    return "-" if x is None else f"{x:,.{digits}f}"


def fmt_pct(x) -> str:
    return "?" if x is None else f"{100 * x:.0f}%"


def ratio(a, b, digits: int = 3) -> str:
    if a is None or b is None or b == 0:
        return "-"
    return f"{a / b:.{digits}f}"


def median_of(runs: list[dict] | None, key: str):
    vals = [r[key] for r in runs or [] if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def render(report: dict) -> str:
    s = report["settings"]
    names = [n for n in ("redis", "tidelog") if n in report["servers"]]
    res = {n: report["servers"][n].get("results", {}) for n in names}
    both = names == ["redis", "tidelog"]
    heads = [SERVER_NAMES[n] for n in names]
    m, v = report["machine"], report["versions"]
    out = [f"Machine: {m['nproc']} CPUs ({m['cpu_model']}), Python {m['python']}, "
           f"PySpark {v.get('pyspark')} (local[2]), pyarrow {v.get('pyarrow')}, redis-py "
           f"{v.get('redis_py')} with hiredis {v.get('hiredis')}; "
           + "; ".join(f"{SERVER_NAMES[n]}: {v.get(n) or '?'}" for n in names)
           + f".  Load average at start {report.get('loadavg_start')}."]

    def row(cells: list[str]) -> str:
        return "| " + " | ".join(cells) + " |"

    def header(first: list[str], metric: str, extra: list[str] = ()) -> list[str]:
        h = first + [f"{x} {metric}" for x in heads] + (["Tidelog/Redis"] if both else [])
        h += list(extra)
        return [row(h), "|" + "|".join("---" if i < len(first) else "---:"
                                       for i in range(len(h))) + "|"]

    def rate_header(first: list[str]) -> list[str]:
        return header(first, "rows/s", [f"{x} rows/server CPU-s" for x in heads]
                      + (["Tidelog/Redis"] if both else [])
                      + [f"{x} Spark CPU s" for x in heads] + ["other processes"])

    def rate_row(label: str, runs: dict, rows: int) -> str:
        rps = [median_of(runs[n], "rows_per_s") for n in names]
        cpu = [median_of(runs[n], "server_cpu_s") for n in names]
        per_cpu = [rows / c if c else None for c in cpu]
        cells = [label] + [fmt_num(x) for x in rps] + ([ratio(rps[1], rps[0])] if both else [])
        cells += [fmt_num(x) for x in per_cpu] + ([ratio(per_cpu[1], per_cpu[0])] if both else [])
        cells += [fmt_num(median_of(runs[n], "spark_cpu_s"), 2) for n in names]
        cells.append(" / ".join(fmt_pct(median_of(runs[n], "other_cpu_share")) for n in names))
        return row(cells)

    # loading
    if any("load" in res[n] for n in names):
        out.append("")
        for n in names:
            ld = res[n].get("load")
            if ld:
                out.append(f"{SERVER_NAMES[n]}: loaded {ld['entries']:,} entries in "
                           f"{ld['wall_s']:.2f} s ({ld['entries'] / ld['wall_s']:,.0f} XADD/s, "
                           f"server CPU {ld['server_cpu_s']:.2f} s), pipelined from one "
                           f"Python socket, {LOAD_BATCH:,} XADDs per write with explicit IDs; "
                           f"RSS afterwards {(ld.get('rss_bytes') or 0) / 2**20:.0f} MiB.")
    # reads
    if any("read" in res[n] for n in names):
        out += ["", f"Batch read of {s['entries']:,} entries into the noop sink "
                f"(`df.write.format(\"noop\")`), median of {s['repeat']} run(s). Rows per "
                "server CPU-second: rows / CPU seconds of the server process; Spark CPU: "
                "seconds per run of the driver, the JVM and the Python workers; other "
                "processes: their share of the machine (Redis / Tidelog runs):", ""]
        out += rate_header(["numPartitions"])
        for p in s["partitions"]:
            runs = {n: res[n].get("read", {}).get(str(p)) for n in names}
            out.append(rate_row(str(p), runs, s["entries"]))
        counts = {n: res[n].get("count") for n in names}
        if any(counts.values()):
            out.append(rate_row(f"{s['partitions'][-1]}, `count()`",
                                {n: [counts[n]] if counts[n] else None for n in names},
                                s["entries"]))
    # writes
    if any("write" in res[n] for n in names):
        out += ["", f"Batch write of {s['write_rows']:,} rows from `spark.range` "
                f"({s['write_partitions']} partitions, columns sensor and temp, one XADD "
                f"per row, `batchSize` 1000), median of {s['repeat']} run(s):", ""]
        out += rate_header(["Write"])
        out.append(rate_row("`df.write.format(\"tidelog\")`",
                            {n: res[n].get("write") for n in names}, s["write_rows"]))
    # streaming
    st = {n: res[n].get("stream") for n in names}
    if any(st.values()):
        out += ["", f"Streaming: a producer process XADDs {s['stream_rate']:g} entries/s for "
                f"{s['stream_seconds']:g} s (`t` = `time.time_ns()` at the send); the query "
                f"reads with a {s['trigger_ms']} ms processingTime trigger into `foreachBatch`, "
                "which collects each micro-batch on the driver and takes `time.time_ns()`. "
                f"Latency = arrival - send; the first {s['warmup_batches']} micro-batches "
                "with data are excluded (warm-up).", ""]
        h = [""] + heads + (["Tidelog/Redis"] if both else [])
        out += [row(h), "|" + "|".join("---" if i == 0 else "---:" for i in range(len(h))) + "|"]

        def srow(label, get, digits=1, rat=True):
            vals = [get(st[n]) if st[n] else None for n in names]
            cells = [label] + [x if isinstance(x, str) else fmt_num(x, digits) for x in vals]
            if both:
                num = [x for x in vals if not isinstance(x, str)]
                cells.append(ratio(vals[1], vals[0], 2) if rat and len(num) == 2 else "")
            out.append(row(cells))

        srow("entries sent / received", lambda r: f"{r['producer']['sent']:,} / "
             f"{r['received']:,}", rat=False)
        srow("every entry received exactly once",
             lambda r: "yes" if r["exactly_once"] else "NO", rat=False)
        srow("micro-batches with data (excluded)", lambda r: f"{r['data_batches']} "
             f"({r['warmup_batches_excluded']})", rat=False)
        srow("entries per micro-batch, median", lambda r: r["rows_per_batch_median"], 0,
             rat=False)
        srow("latency p50, ms", lambda r: r["latency_ms"]["p50"])
        srow("latency p90, ms", lambda r: r["latency_ms"]["p90"])
        srow("latency p99, ms", lambda r: r["latency_ms"]["p99"])
        srow("latency max, ms", lambda r: r["latency_ms"]["max"])
        srow("micro-batch duration (triggerExecution) median, ms",
             lambda r: r["batch_duration_ms"]["median"], 0)
        srow("producer schedule lateness p99 / max, ms",
             lambda r: f"{r['producer']['late_p99_ms']} / {r['producer']['late_max_ms']}",
             rat=False)
        srow("server CPU s / Spark CPU s / wall s", lambda r: f"{r['server_cpu_s']:.1f} / "
             f"{r['spark_cpu_s']:.1f} / {r['wall_s']:.1f}", rat=False)
        srow("other processes' share of the machine",
             lambda r: fmt_pct(r["other_cpu_share"]), rat=False)
    # breakdown
    bd = {n: res[n].get("breakdown") for n in names}
    if any(bd.values()):
        out += ["", "One partition's `read_batches` outside Spark, in this process, over the "
                f"whole stream ({s['entries']:,} entries, pages of 1,000): each part timed "
                "alone, rows/s:", ""]
        h = ["Part"] + heads + (["Tidelog/Redis"] if both else [])
        out += [row(h), "|" + "|".join("---" if i == 0 else "---:" for i in range(len(h))) + "|"]

        def brow(label, get, rat=True):
            vals = [get(bd[n]) if bd[n] else None for n in names]
            cells = [label] + [x if isinstance(x, str) else fmt_num(x) for x in vals]
            if both:
                cells.append(ratio(vals[1], vals[0]) if rat else "")
            out.append(row(cells))

        brow("XRANGE pages via redis-py + hiredis (fetch only)",
             lambda r: r["fetch"]["rows_per_s"])
        brow("  of which server CPU, s / wall s", lambda r: f"{r['fetch']['server_cpu_s']:.2f} "
             f"/ {r['fetch']['wall_s']:.2f}", rat=False)
        brow("hiredis parse of a 1,000-entry reply alone (fastest of 3)",
             lambda r: r["hiredis_parse"]["rows_per_s"])
        brow("Arrow batches from parsed pages (BatchBuilder.build) alone, fastest of 3",
             lambda r: r["build"]["rows_per_s"])
        brow("read_batches (fetch + build, as a Spark task runs it)",
             lambda r: r["read_batches"]["rows_per_s"])
        shas = {bd[n]["hiredis_parse"].get("reply_sha1") for n in names if bd[n]}
        if both and all(bd.values()):
            out += ["", "The 1,000-entry XRANGE reply parsed above was byte-identical on both "
                    f"servers: {'yes' if len(shas) == 1 else 'NO'}."]
    errs = [(n, ph, e) for n in names
            for ph, e in report["servers"][n].get("results", {}).get("errors", {}).items()]
    if errs:
        out += ["", "Failures:"] + [f"- {SERVER_NAMES[n]}, {ph}: {e}" for n, ph, e in errs]
    return "\n".join(out)


# -- main ---------------------------------------------------------------------------------

def default_json_path() -> Path:
    base = HERE / "results" / f"{dt.date.today().isoformat()}-spark"
    path, i = base.with_suffix(".json"), 2
    while path.exists():
        path, i = base.parent / f"{base.name}-{i}.json", i + 1
    return path


def versions(todo: list[str], args, tidelog_base, tidelog_env) -> dict:
    out = {}
    for mod, name in (("pyspark", "pyspark"), ("pyarrow", "pyarrow"), ("redis", "redis_py"),
                      ("hiredis", "hiredis")):
        try:
            out[name] = __import__(mod).__version__
        except Exception:  # noqa: BLE001
            out[name] = None
    if "redis" in todo:
        out["redis"] = servers.command_version([args.redis_server])
    if "tidelog" in todo and not any("{" in a for a in tidelog_base):
        out["tidelog"] = servers.command_version(tidelog_base, env=tidelog_env)
    return out



def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_produce"]:           # the streaming test's producer process
        port, key, rate, seconds = argv[1:5]
        print(json.dumps(produce(int(port), key, float(rate), float(seconds))))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--entries", type=int, default=1_000_000,
                    help="entries in the stream that is read (default 1000000)")
    ap.add_argument("--partitions", default="1,2,4",
                    help="numPartitions values of the batch reads (default 1,2,4)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="measured runs of each batch read and write; the median is "
                    "reported (default 3)")
    ap.add_argument("--write-rows", type=int, default=500_000,
                    help="rows of each batch write (default 500000)")
    ap.add_argument("--write-partitions", type=int, default=2,
                    help="partitions of the written DataFrame (default 2)")
    ap.add_argument("--stream-rate", type=float, default=300.0,
                    help="entries/s the streaming producer sends (default 300)")
    ap.add_argument("--stream-seconds", type=float, default=20.0,
                    help="how long the streaming producer sends (default 20)")
    ap.add_argument("--trigger-ms", type=int, default=100,
                    help="processingTime trigger of the streaming query (default 100)")
    ap.add_argument("--warmup-batches", type=int, default=5,
                    help="micro-batches with data left out of the latency (default 5)")
    ap.add_argument("--drain-timeout", type=float, default=30.0,
                    help="after the producer stops, at most this long for the query to "
                    "catch up (default 30)")
    ap.add_argument("--phases", default=",".join(PHASES),
                    help=f"comma-separated subset of {','.join(PHASES)} (default all)")
    ap.add_argument("--profile", action="store_true",
                    help="breakdown: also cProfile one whole read_batches call (printed)")
    ap.add_argument("--only", choices=["tidelog", "redis"], help="benchmark one server only")
    ap.add_argument("--timeout", type=float, default=600.0,
                    help="time limit of one Spark action in seconds (default 600)")
    ap.add_argument("--load-timeout", type=float, default=600.0,
                    help="time limit of loading the read stream in seconds (default 600)")
    ap.add_argument("--json", type=Path, help="where to write the raw results "
                    "(default bench/results/<date>-spark.json)")
    ap.add_argument("--tidelog-cmd", help="command that starts Tidelog, as for bench/run.py")
    ap.add_argument("--redis-server", default="redis-server")
    ap.add_argument("--render", type=Path, metavar="JSON",
                    help="print the tables of a saved run and exit")
    args = ap.parse_args(argv)
    if args.render:
        print(render(json.loads(args.render.read_text(encoding="utf-8"))))
        return 0
    args.partitions = sorted({int(p) for p in args.partitions.split(",") if p.strip()})
    args.phases = [p.strip() for p in args.phases.split(",") if p.strip()]
    if not set(args.phases) <= set(PHASES) or not args.phases:
        ap.error(f"--phases takes a subset of {','.join(PHASES)}")
    if (args.entries < PER_MS * 10 or args.write_rows < 1 or args.repeat < 1
            or not args.partitions or min(args.partitions) < 1 or args.stream_rate <= 0
            or args.stream_seconds <= 0 or args.trigger_ms < 0 or args.warmup_batches < 0):
        ap.error("sizes, counts, rates and times must be positive (--entries at least 100)")
    try:
        import hiredis  # noqa: F401
        import pyspark  # noqa: F401
        import redis  # noqa: F401
    except ImportError as exc:
        log(f"{exc}: run it with the project's virtualenv (.venv/bin/python bench/spark.py)")
        return 2

    tidelog_base, tidelog_env = servers.tidelog_command(REPO, args.tidelog_cmd)
    tidelog_argv = servers.with_port_and_dir(tidelog_base) + ["--save", "", "--appendonly", "no"]
    todo = [n for n in ("redis", "tidelog") if args.only in (None, n)]
    if "redis" in todo and not shutil.which(args.redis_server):
        log(f"{args.redis_server} not found (Debian package redis-server)")
        return 2
    report = {
        "date": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "command": "python bench/spark.py " + " ".join(argv),
        "machine": servers.machine_info(),
        "versions": versions(todo, args, tidelog_base, tidelog_env),
        "settings": {k: getattr(args, k) for k in (
            "entries", "partitions", "repeat", "write_rows", "write_partitions", "stream_rate",
            "stream_seconds", "trigger_ms", "warmup_batches", "drain_timeout", "phases",
            "timeout", "load_timeout")},
        "loadavg_start": loadavg(),
        "servers": {},
    }

    def on_term(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    started = time.monotonic()
    targets: list[Target] = []
    bench = None
    try:
        for name in todo:
            argv_ = servers.redis_argv(args.redis_server) if name == "redis" else tidelog_argv
            env = None if name == "redis" else tidelog_env
            log(f"== starting {SERVER_NAMES[name]}")
            srv = servers.Server(name, argv_, env=env)
            try:
                srv.start()
            except servers.ServerError as exc:
                report["servers"][name] = {"error": f"could not start: {exc}"}
                log(f"  {report['servers'][name]['error']}")
                continue
            t = Target(name, srv)
            t.url = f"redis://127.0.0.1:{srv.port}/0"
            targets.append(t)
            report["servers"][name] = {"argv": srv.argv}
        bench = Bench(args, targets)
        bench.run()
    except KeyboardInterrupt:
        log("interrupted; writing what was measured")
        report["interrupted"] = True
    except Exception:  # noqa: BLE001 - keep the partial results
        report["crash"] = traceback.format_exc()
        log(report["crash"])
    finally:
        if bench is not None:
            bench.stop_spark()
            for t in targets:
                report["servers"][t.name]["results"] = bench.results[t.name]
        for t in targets:
            if t.server.alive():
                report["servers"][t.name]["rss_end_bytes"] = t.server.rss_bytes()
                report["servers"][t.name]["cpu_total_s"] = round(t.server.cpu_seconds(), 3)
            t.server.stop()
    report["loadavg_end"] = loadavg()
    report["elapsed_s"] = round(time.monotonic() - started, 1)
    table = render(report)
    report["table_markdown"] = table
    path = args.json or default_json_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(scrub(json.dumps(report, indent=2, default=str)) + "\n", encoding="utf-8")
    print(scrub(table))
    log(f"\nraw results: {path}  ({report['elapsed_s']} s)")
    return 1 if ("crash" in report or report.get("interrupted")) else 0


if __name__ == "__main__":
    sys.exit(main())
