"""Replication beside Redis: full-sync time and the write rate a replica keeps up with.

For each server (redis-server, then Tidelog), a primary and an empty replica
of the same kind:

1. **Full sync.**  The primary holds a stream of N entries (default
   5,000,000; both load the same dump.rdb, made by Redis from pipelined
   XADDs).  The replica is told ``REPLICAOF``; the time until its link is up
   and its offset equals the primary's is the full-sync time.  Both servers'
   CPU is measured over it.
2. **Lag under a steady XADD load.**  A producer adds entries at a fixed rate
   (paced in batches of 100, pipelined) for a few seconds, at rising rates;
   every 50 ms the replica's offset is compared with the primary's.  A rate
   is *kept up with* when the producer achieved it and the replica was
   never more than one second of writes behind, and caught up within one
   second after the load stopped.  The table gives, per rate, the achieved
   rate and the lag's median and maximum (in milliseconds of writes).

    .venv/bin/python bench/replication.py [--entries 5000000] [--seconds 5]

Results go to stdout as markdown and, with ``--json``, to a file.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

import resp
import servers

HERE = Path(__file__).resolve().parent
RATES = (5_000, 10_000, 20_000, 40_000, 80_000, 160_000)
BATCH = 100
ENTRY = ("sensor", "17", "temp", "21.5")


def info(c: resp.Client, section: str = "replication") -> dict[str, str]:
    text = c.call("INFO", section).decode()
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def offsets(primary: resp.Client, replica: resp.Client) -> tuple[int, int]:
    p = int(info(primary)["master_repl_offset"])
    r = info(replica)
    return p, int(r.get("slave_repl_offset", "0") or 0)


def make_dump(entries: int, workdir: str) -> str:
    """A dump.rdb holding a stream of ``entries`` entries (made by Redis)."""
    with servers.Server("redis-fill", servers.redis_argv()) as srv:
        c = srv.client()
        for first in range(1, entries + 1, 10_000):
            cmds = [("XADD", "bench:stream", f"{i}-0") + ENTRY
                    for i in range(first, min(first + 10_000, entries + 1))]
            c.pipeline(cmds)
        c.call("SAVE")
        path = os.path.join(workdir, "dump.rdb")
        shutil.copy(os.path.join(srv.dir, "dump.rdb"), path)
    return path


def with_dump(argv: list[str], dump: str) -> list[str]:
    """Start from ``dump`` (copied into the server's dir by a wrapper)."""
    return ["sh", "-c", f'cp "{dump}" "$0" && exec "$@"', "{dir}/dump.rdb", *argv]


def full_sync(primary: servers.Server, replica: servers.Server, timeout: float) -> dict:
    pc, rc = primary.client(), replica.client()
    cpu_p0, cpu_r0 = primary.cpu_seconds(), replica.cpu_seconds()
    t0 = time.monotonic()
    rc.call("REPLICAOF", "127.0.0.1", str(primary.port))
    while True:
        r = info(rc)
        if r.get("master_link_status") == "up":
            p_off, r_off = offsets(pc, rc)
            if p_off == r_off:
                break
        if time.monotonic() - t0 > timeout:
            raise RuntimeError(f"{replica.name}: no full sync within {timeout:.0f} s")
        time.sleep(0.02)
    return {"seconds": round(time.monotonic() - t0, 3),
            "primary_cpu_s": round(primary.cpu_seconds() - cpu_p0, 3),
            "replica_cpu_s": round(replica.cpu_seconds() - cpu_r0, 3),
            "replica_rss_bytes": replica.rss_bytes()}


def steady_load(primary: servers.Server, replica: servers.Server, rate: int,
                seconds: float) -> dict:
    pc, rc = primary.client(), replica.client()
    producer = primary.client()
    batch = [("XADD", "bench:load", "*") + ENTRY] * BATCH
    lags: list[int] = []
    sent = 0
    t0 = time.monotonic()
    next_sample = t0
    while True:
        now = time.monotonic()
        elapsed = now - t0
        if elapsed >= seconds:
            break
        if sent < rate * elapsed:
            producer.pipeline(batch)
            sent += BATCH
        else:
            time.sleep(min(0.001, rate and BATCH / rate))
        if now >= next_sample:
            p_off, r_off = offsets(pc, rc)
            lags.append(p_off - r_off)
            next_sample = now + 0.05
    achieved = sent / (time.monotonic() - t0)
    stop = time.monotonic()
    caught_up = None
    while time.monotonic() - stop < 10:
        p_off, r_off = offsets(pc, rc)
        if p_off == r_off:
            caught_up = time.monotonic() - stop
            break
        time.sleep(0.01)
    per_write = max(1, (int(info(pc)["master_repl_offset"]) // max(1, sent)) or 1)
    bytes_per_ms = max(1.0, achieved * per_write / 1000)
    lag_ms = [lag / bytes_per_ms for lag in lags]
    kept_up = (achieved >= 0.95 * rate and max(lag_ms, default=0) <= 1000
               and caught_up is not None and caught_up <= 1.0)
    return {"rate": rate, "achieved": round(achieved), "kept_up": kept_up,
            "lag_ms_median": round(statistics.median(lag_ms), 1) if lag_ms else None,
            "lag_ms_max": round(max(lag_ms), 1) if lag_ms else None,
            "caught_up_s": None if caught_up is None else round(caught_up, 3)}


def run_pair(name: str, argv: list[str], env, dump: str, args) -> dict:
    out: dict = {}
    primary = servers.Server(f"{name}-primary", with_dump(argv, dump), env,
                             ready_timeout=300)
    replica = servers.Server(f"{name}-replica", argv, env)
    with primary, replica:
        servers.log(f"{name}: primary holds {args.entries:,} entries; full sync ...")
        out["full_sync"] = full_sync(primary, replica, args.timeout)
        servers.log(f"  {out['full_sync']}")
        out["rates"] = []
        for rate in RATES:
            res = steady_load(primary, replica, rate, args.seconds)
            servers.log(f"  {name} rate {rate:,}: {res}")
            out["rates"].append(res)
            if res["achieved"] < 0.95 * rate:
                break  # the primary (or the producer) is saturated
    return out


def render(result: dict) -> str:
    names = [n for n in ("redis", "tidelog") if n in result["servers"]]
    lines = [f"Full sync of {result['entries']:,} stream entries:", "",
             "| server | seconds | primary CPU s | replica CPU s |", "|---|---:|---:|---:|"]
    for n in names:
        fs = result["servers"][n]["full_sync"]
        lines.append(f"| {n} | {fs['seconds']} | {fs['primary_cpu_s']} | {fs['replica_cpu_s']} |")
    lines += ["", "Steady XADD load (achieved rate; replica lag median / max in ms of writes; "
              "kept up?):", "", "| rate | " + " | ".join(names) + " |",
              "|---:|" + "---|" * len(names)]
    for i, rate in enumerate(RATES):
        row = [f"{rate:,}"]
        for n in names:
            rates = result["servers"][n]["rates"]
            if i < len(rates):
                r = rates[i]
                row.append(f"{r['achieved']:,}/s; {r['lag_ms_median']} / {r['lag_ms_max']}; "
                           f"{'yes' if r['kept_up'] else 'no'}")
            else:
                row.append("-")
        lines.append("| " + " | ".join(row) + " |")
    for n in names:
        kept = [r["rate"] for r in result["servers"][n]["rates"] if r["kept_up"]]
        lines.append(f"\n{n}: highest rate kept up with: {max(kept):,}/s" if kept
                     else f"\n{n}: kept up with none of the rates")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=5_000_000)
    ap.add_argument("--seconds", type=float, default=5.0, help="duration of each load step")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--only", choices=("redis", "tidelog"))
    ap.add_argument("--tidelog-cmd")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    workdir = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"bench-repl-{os.getpid()}")
    os.makedirs(workdir)
    try:
        servers.log(f"making a dump.rdb of {args.entries:,} entries ...")
        dump = make_dump(args.entries, workdir)
        tl_argv, tl_env = servers.tidelog_command(HERE.parent, args.tidelog_cmd)
        # Redis waits repl-diskless-sync-delay (5 s) for more replicas before a
        # transfer: 0 here, so the figure is the sync itself.
        plan = [("redis", servers.redis_argv() + ["--repl-diskless-sync-delay", "0"], None),
                ("tidelog", servers.with_port_and_dir(tl_argv + ["--save", ""]), tl_env)]
        result = {"entries": args.entries, "seconds_per_step": args.seconds,
                  "machine": servers.machine_info(), "servers": {}}
        for name, argv_, env in plan:
            if args.only and name != args.only:
                continue
            result["servers"][name] = run_pair(name, argv_, env, dump, args)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(render(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
