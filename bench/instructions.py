#!/usr/bin/env python3
"""Instructions per operation, counted by valgrind: a measure that noise cannot move.

    python bench/instructions.py                          # the five rows of the issue-23 table
    python bench/instructions.py --workloads 'xadd-*' --requests 20000
    python bench/instructions.py --tidelog-cmd "env PYTHONPATH=OTHER/src python -m tidelog.server.main"

CPU seconds per operation (bench/run.py) swing by 10-20% between runs on a
shared machine, so they cannot show a change of a few percent.  The number of
instructions a server executes for the same requests does not depend on
what else runs: each server is started under ``valgrind --tool=callgrind``
with counting switched off, the workload's data is prepared, counting is
switched on for exactly one redis-benchmark run of ``--requests`` requests
(``callgrind_control -i on`` / ``-i off``), and the count is dumped and
divided by the number of requests.  Redis runs the same way in the same run,
so the ratio Tidelog/Redis in instructions sits beside the CPU ratio of
bench/run.py.  Only user-space instructions of the server process are counted
(not the kernel's socket work, which is the same for both servers' requests);
valgrind runs the servers 20-50x slower, so the redis-benchmark run takes a
while (the default 20,000 requests: under a minute per workload and server).

Prints a markdown table; ``--json`` writes the raw counts.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Run as a script (python bench/run.py): this folder is on sys.path.
import servers
from servers import log
from workloads import WORKLOADS, Skip, Target, Workload

REPO = Path(__file__).resolve().parent.parent
DEFAULT = "xrange10-p16-c1,xadd-p1-c1,xadd-p16-c8,ping-p128-c1,hset-p16-c8"


def callgrind_argv(out_dir: str) -> list[str]:
    """valgrind's command line: callgrind, counting off until asked."""
    return ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--dump-instr=no",
            "--trace-children=no", f"--callgrind-out-file={out_dir}/callgrind.out.%p"]


def control(pid: int, *flags: str) -> None:
    subprocess.run(["callgrind_control", *flags, str(pid)], check=True, timeout=300,
                   capture_output=True)


def dumped_total(out_dir: str, pid: int, before: set[Path]) -> int:
    """The instruction count of the dump made since ``before`` was listed."""
    new = sorted(set(Path(out_dir).glob(f"callgrind.out.{pid}*")) - before,
                 key=lambda p: p.stat().st_mtime)
    if not new:
        raise RuntimeError("callgrind wrote no dump")
    for line in new[-1].read_text(errors="replace").splitlines():
        if line.startswith("totals:"):  # "summary:" is 0 in a dump asked for by callgrind_control
            return int(line.split()[1])
    raise RuntimeError(f"no totals line in {new[-1]}")


def count(server: servers.Server, out_dir: str, args, wl: Workload, target: Target) -> int:
    """Instructions of one redis-benchmark run of ``args.requests`` requests."""
    if wl.reset is not None:
        wl.reset(target, wl)
    bench = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(server.port), "-c", str(wl.clients),
             "-n", str(args.requests), "-P", str(wl.pipeline), "-q"]
    if wl.rand_range is not None:
        r = wl.rand_range(target, wl)
        if r is not None:
            bench += ["-r", str(r)]
    before = set(Path(out_dir).glob(f"callgrind.out.{server.pid}*"))
    control(server.pid, "-z")
    control(server.pid, "-i", "on")
    subprocess.run(bench + wl.argv(), check=True, timeout=args.timeout, capture_output=True)
    control(server.pid, "-i", "off")
    control(server.pid, "-d")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            return dumped_total(out_dir, server.pid, before)
        except RuntimeError:
            time.sleep(0.2)
    return dumped_total(out_dir, server.pid, before)


def without_env(argv: list[str], env: dict[str, str] | None) -> tuple[list[str], dict | None]:
    """Move the assignments of a leading ``env A=B ...`` into ``env``: valgrind
    must start the server itself, not ``env`` (which would exec it untraced)."""
    if not argv or Path(argv[0]).name != "env":
        return argv, env
    env = dict(env or {})
    rest = argv[1:]
    while rest and "=" in rest[0] and not rest[0].startswith("-"):
        key, _, value = rest.pop(0).partition("=")
        env[key] = value
    return rest, env


def run_server(name: str, argv: list[str], env, args, workloads: list[Workload]) -> dict[str, int]:
    argv, env = without_env(argv, env)
    out_dir = tempfile.mkdtemp(prefix=f"callgrind-{name}-")
    try:
        server = servers.Server(name, callgrind_argv(out_dir) + argv, env=env,
                                ready_timeout=args.ready_timeout)
        counts: dict[str, int] = {}
        with server:
            with server.client(timeout=args.timeout) as client:
                target = Target(name, server, client, preload=args.preload)
                for wl in workloads:
                    try:
                        total = count(server, out_dir, args, wl, target)
                    except Skip as exc:
                        log(f"{name} {wl.id}: skipped ({exc})")
                        continue
                    counts[wl.id] = total
                    log(f"{name} {wl.id}: {total / args.requests:,.0f} instructions per request")
                    if wl.cleanup is not None:
                        wl.cleanup(target, wl)
        return counts
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", default=DEFAULT,
                    help=f"comma-separated workload ids or patterns (default {DEFAULT})")
    ap.add_argument("--requests", type=int, default=20_000)
    ap.add_argument("--preload", type=int, default=20_000,
                    help="entries of the stream the XRANGE workloads read")
    ap.add_argument("--tidelog-cmd", default=None, help="command that starts Tidelog")
    ap.add_argument("--only", choices=("tidelog", "redis"), default=None)
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--ready-timeout", type=float, default=300.0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("valgrind (with callgrind_control) is needed", file=sys.stderr)
        return 2
    patterns = args.workloads.split(",")
    workloads = [w for w in WORKLOADS if any(fnmatch.fnmatchcase(w.id, p) for p in patterns)]
    # The XRANGE rows read the preloaded stream: keep the table's order, reads first.
    tidelog_argv, tidelog_env = servers.tidelog_command(REPO, args.tidelog_cmd)
    results: dict[str, dict[str, int]] = {}
    if args.only != "tidelog":
        results["redis"] = run_server("redis", servers.redis_argv(), None, args, workloads)
    if args.only != "redis":
        results["tidelog"] = run_server("tidelog", servers.with_port_and_dir(tidelog_argv),
                                        tidelog_env, args, workloads)
    print("| workload | Tidelog instructions/op | Redis instructions/op | ratio |")
    print("|---|---:|---:|---:|")
    for wl in workloads:
        t = results.get("tidelog", {}).get(wl.id)
        r = results.get("redis", {}).get(wl.id)
        per = [None if x is None else x / args.requests for x in (t, r)]
        ratio = f"{per[0] / per[1]:.2f}" if None not in per else "-"
        cells = ["-" if x is None else f"{x:,.0f}" for x in per]
        print(f"| {wl.id} | {cells[0]} | {cells[1]} | {ratio} |")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"requests": args.requests, "preload": args.preload, "tidelog_cmd": args.tidelog_cmd,
             "counts": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
