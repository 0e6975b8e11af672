#!/usr/bin/env python3
"""Spark batch reads from a Tidelog cluster of one shard and of two shards.

    .venv/bin/python bench/spark_cluster.py                    # 8 streams, 400,000 entries
    .venv/bin/python bench/spark_cluster.py --entries 100000 --repeat 2

For 1 and then 2 shards: that many Tidelog nodes in cluster mode (no
persistence, loopback, a free port whose bus port is free too), the slots
given in halves with CLUSTER ADDSLOTSRANGE and the nodes joined with CLUSTER
MEET; the same ``--streams`` stream keys (hash tags chosen so that half of
them hash into each half of the slots) get ``--entries`` entries in all, by
pipelined XADDs with explicit IDs sent to the node that owns each key.  Then
``spark.read.format("tidelog")`` with ``pattern`` and ``numPartitions`` reads
them into the ``noop`` sink, ``--repeat`` times: rows/s (median), and the CPU
seconds each node used.  One local SparkSession (``--master``) serves both.

Prints a markdown table (progress on stderr) and writes the raw figures as
JSON (default: bench/results/<date>-spark-cluster.json).  Every server is
stopped at the end, whatever happens; every wait and load loop is bounded.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import time
from pathlib import Path

import cluster as bench_cluster
import servers
import spark as bench_spark

sys.path.insert(0, str(servers.REPO / "src"))
from tidelog.keyslot import key_slot  # noqa: E402

HALF = 8192


def stream_keys(count: int) -> list[str]:
    """``count`` keys ``bench:{tag}``, half of them in slots below HALF."""
    low, high = [], []
    tag = 0
    while len(low) < count // 2 or len(high) < count - count // 2:
        key = f"bench:{{{tag}}}"
        side = low if key_slot(key.encode()) < HALF else high
        if len(side) < (count // 2 if side is low else count - count // 2):
            side.append(key)
        tag += 1
    return sorted(low + high)


def start_shards(shards: int, base: list[str], env) -> list[servers.Server]:
    argv = bench_cluster.cluster_argv(base, 5000)
    nodes = [servers.Server(f"shard-{shards}-{i}", argv, env, pick_port=bench_cluster.free_pair)
             for i in range(shards)]
    try:
        for node in nodes:
            node.start()
        width = 16384 // shards
        for i, node in enumerate(nodes):
            last = 16383 if i == shards - 1 else (i + 1) * width - 1
            bench_cluster.call(node, "CLUSTER", "ADDSLOTSRANGE", str(i * width), str(last))
        for node in nodes[1:]:
            bench_cluster.call(node, "CLUSTER", "MEET", "127.0.0.1", str(nodes[0].port))
        bench_cluster.wait("the cluster agrees", lambda: bench_cluster.agreed(nodes))
    except BaseException:
        for node in nodes:
            node.stop()
        raise
    return nodes


def owner_of(nodes: list[servers.Server], key: str) -> servers.Server:
    """The node whose equal share of the slots (as start_shards gives them) holds ``key``."""
    return nodes[min(key_slot(key.encode()) // (16384 // len(nodes)), len(nodes) - 1)]


def run_shards(session, shards: int, base, env, keys: list[str], args) -> dict:
    nodes = start_shards(shards, base, env)
    result: dict = {"shards": shards, "nodes": [n.port for n in nodes]}
    try:
        per_key = args.entries // len(keys)
        for key in keys:
            done = bench_spark.load_stream(owner_of(nodes, key).port, key, per_key,
                                           args.load_timeout)
            if done["errors"]:
                raise RuntimeError(f"loading {key}: {done['first_error']}")
        total = per_key * len(keys)
        url = f"redis://127.0.0.1:{nodes[0].port}/0"
        df = (session.read.format("tidelog").option("url", url).option("pattern", "bench:*")
              .option("numPartitions", args.partitions).load())
        df.write.format("noop").mode("overwrite").save()          # warm-up: workers, JIT
        runs = []
        for i in range(args.repeat):
            cpu = [n.cpu_seconds() for n in nodes]
            started = time.monotonic()
            df.write.format("noop").mode("overwrite").save()
            seconds = time.monotonic() - started
            used = [n.cpu_seconds() - c for n, c in zip(nodes, cpu, strict=True)]
            runs.append({"seconds": round(seconds, 3), "rows_per_s": round(total / seconds),
                         "server_cpu_s": [round(u, 3) for u in used]})
            servers.log(f"{shards} shard(s), run {i + 1}: {total / seconds:,.0f} rows/s")
        result.update(entries=total, runs=runs,
                      median_rows_per_s=round(statistics.median(r["rows_per_s"] for r in runs)))
    finally:
        for node in nodes:
            node.stop()
    return result


def _program(command: str | None) -> str | None:
    """The program's name only: no path of the machine goes into the results."""
    return Path(command.split()[0]).name if command else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entries", type=int, default=400_000, help="entries in all (%(default)s)")
    ap.add_argument("--streams", type=int, default=8, help="stream keys (%(default)s)")
    ap.add_argument("--partitions", type=int, default=4, help="numPartitions (%(default)s)")
    ap.add_argument("--repeat", type=int, default=3, help="measured reads per setup (%(default)s)")
    ap.add_argument("--master", default="local[2]", help="Spark master (%(default)s)")
    ap.add_argument("--load-timeout", type=float, default=600.0)
    ap.add_argument("--tidelog-cmd", help="command that starts Tidelog, as for bench/run.py")
    ap.add_argument("--json", type=Path, help="where to write the raw results")
    args = ap.parse_args(argv)
    base, env = servers.tidelog_command(servers.REPO, args.tidelog_cmd)
    keys = stream_keys(args.streams)
    from tidelog.spark import local_session
    session = local_session("tidelog-bench-cluster", args.master, {
        "spark.sql.shuffle.partitions": "2", "spark.ui.enabled": "false"})
    results = []
    try:
        for shards in (1, 2):
            results.append(run_shards(session, shards, base, env, keys, args))
    finally:
        session.stop()
    one, two = (r["median_rows_per_s"] for r in results)
    shown = vars(args) | {"json": None, "tidelog_cmd": _program(args.tidelog_cmd)}
    report = {"date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
              "machine": servers.machine_info(), "args": shown,
              "results": results, "two_over_one": round(two / one, 3)}
    print("| shards | entries | rows/s (median) | server CPU s per node (last run) |")
    print("|---|---|---|---|")
    for r in results:
        print(f"| {r['shards']} | {r['entries']:,} | {r['median_rows_per_s']:,} | "
              f"{', '.join(str(c) for c in r['runs'][-1]['server_cpu_s'])} |")
    print(f"\n2 shards / 1 shard: {two / one:.2f}x")
    path = args.json or (servers.REPO / "bench" / "results"
                         / f"{dt.date.today().isoformat()}-spark-cluster.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n")
    servers.log(f"raw results: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
