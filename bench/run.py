#!/usr/bin/env python3
"""Side-by-side benchmark of Tidelog and redis-server.

    python bench/run.py                 # both servers, every workload (~6 min)
    python bench/run.py --quick         # a short smoke run (~40 s)
    python bench/run.py --only tidelog --workloads 'xadd-*'
    python bench/run.py --workloads 'group-*'      # the consumer-group benchmarks
    python bench/run.py --workloads 'durability-*' # restart times, XADD with the AOF on

Each server is started on a free loopback port with a fresh temporary
directory, loaded by redis-benchmark (C, so the client is not the
bottleneck), and stopped at the end whatever happens.  For every workload the
number of requests is calibrated so the run lasts about --seconds on that
server.  The server's CPU time (utime + stime from /proc/PID/stat) is read
before and after each run, giving ops per CPU-second next to ops per second.

Prints a markdown table on stdout (progress goes to stderr) and writes the
raw results as JSON (default: bench/results/<date>.json).

The consumer-group benchmarks (group-latency, group-drain, group-pel; see
groups.py) need a client that reacts to replies, so they are driven by
Python clients instead; they run after the redis-benchmark workloads, on the
same two servers, and print their own tables.  The durability benchmarks
(durability-restart, durability-xadd; see durability.py) come last and start
their own servers with the persistence settings they measure.
See docs/benchmarks.md for what is measured and how to read it.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import datetime as dt
import fnmatch
import io
import json
import math
import os
import resource
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path

# Run as a script (python bench/run.py): this folder is on sys.path.
import resp
import servers
from durability import SCENARIOS as DURABILITY_SCENARIOS
from groups import SCENARIOS as GROUP_SCENARIOS
from groups import Scenario
from servers import loadavg, log, scrub
from workloads import WORKLOADS, Skip, Target, Workload

SCENARIOS: list[Scenario] = GROUP_SCENARIOS + DURABILITY_SCENARIOS
HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SERVER_NAMES = {"redis": "Redis", "tidelog": "Tidelog"}


class RunFailed(RuntimeError):
    pass


# -- one redis-benchmark run ------------------------------------------------------

def bench_argv(args, target: Target, wl: Workload, requests: int) -> list[str]:
    argv = [args.redis_benchmark, "-h", "127.0.0.1", "-p", str(target.server.port),
            "-c", str(wl.clients), "-n", str(requests), "-P", str(wl.pipeline), "--csv"]
    if wl.rand_range is not None:
        r = wl.rand_range(target, wl)
        if r is not None:
            argv += ["-r", str(r)]
    return argv + wl.argv()


def run_bench(argv: list[str], timeout: float, server) -> subprocess.CompletedProcess:
    """Run redis-benchmark; give up at the timeout, or at once if the server dies
    (redis-benchmark itself would wait for it forever)."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                stdout, stderr = proc.communicate(timeout=0.2)
                return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)
            except subprocess.TimeoutExpired:
                pass
            if not server.alive():
                raise RunFailed("the server exited during the run; its log ends with:\n"
                                + server.log_tail())
            if time.monotonic() > deadline:
                raise RunFailed(f"redis-benchmark did not finish within {timeout:.0f}s "
                                f"({argv[argv.index('-n') + 1]} requests)")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def run_once(args, target: Target, wl: Workload, requests: int, timeout: float) -> dict:
    """Run redis-benchmark once; measure throughput, latency and CPU."""
    if not target.server.alive():
        raise RunFailed("server is not running")
    argv = bench_argv(args, target, wl, requests)
    ctx = wl.before(target, wl) if wl.before else None
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy0 = servers.machine_busy_seconds()
    cpu0 = target.server.cpu_seconds()
    t0 = time.monotonic()
    out = run_bench(argv, timeout, target.server)
    wall = time.monotonic() - t0
    cpu1 = target.server.cpu_seconds() if target.server.alive() else None
    busy1 = servers.machine_busy_seconds()
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    row = None
    for fields in csv.reader(io.StringIO(out.stdout)):
        if len(fields) >= 2 and fields[0] != "test":
            row = fields
    if out.returncode != 0 or row is None:
        detail = (out.stderr.strip() or out.stdout.strip())[-600:]
        if not target.server.alive():
            detail += f"\nserver exited; its log ends with:\n{target.server.log_tail()}"
        raise RunFailed(f"redis-benchmark exit status {out.returncode}: {detail}")
    rps = float(row[1])
    lat = {}
    for name, value in zip(("avg", "min", "p50", "p95", "p99", "max"), row[2:8]):
        try:
            lat[f"{name}_ms"] = float(value)
        except ValueError:
            pass
    server_cpu = None if cpu1 is None else cpu1 - cpu0
    client_cpu = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
    other_cpu = None
    if server_cpu is not None and busy0 is not None and busy1 is not None:
        # CPU the rest of the machine used meanwhile (other programs, the kernel).
        other_cpu = max(0.0, (busy1 - busy0) - server_cpu - client_cpu)
    result = {
        "requests": requests,
        "rps": rps,
        "wall_s": round(wall, 4),
        "server_cpu_s": None if server_cpu is None else round(server_cpu, 3),
        "ops_per_server_cpu_s": (requests / server_cpu) if server_cpu else None,
        "client_cpu_s": round(client_cpu, 3),
        "other_cpu_s": None if other_cpu is None else round(other_cpu, 3),
        "other_cpu_share": (None if other_cpu is None
                            else round(other_cpu / (wall * servers.NCPU), 3)),
        "latency": lat,
    }
    warnings = [line for line in out.stderr.splitlines() if line.strip()]
    if warnings:
        result["warnings"] = warnings[:5]
    if wl.after:
        problems = wl.after(target, wl, requests, ctx)
        if problems:
            result["problems"] = problems
    return result


def round_up(n: float, unit: int) -> int:
    return max(unit, math.ceil(n / unit) * unit)


def calibrate(args, target: Target, wl: Workload) -> tuple[int, list[dict]]:
    """Number of requests that should take about args.seconds on this server.

    Probes start small and grow until one lasts at least args.probe_seconds,
    so a slow server never gets a long probe."""
    unit = wl.pipeline * wl.clients
    if args.requests:
        return round_up(args.requests, unit), []
    n = round_up(args.probe_start, unit)
    probes = []
    while True:
        res = run_once(args, target, wl, n, timeout=args.probe_timeout)
        probes.append({"requests": n, "rps": res["rps"], "wall_s": res["wall_s"]})
        if res["wall_s"] >= args.probe_seconds or n >= args.max_requests:
            break
        growth = min(20.0, max(2.0, 1.5 * args.probe_seconds / max(res["wall_s"], 1e-3)))
        n = min(round_up(n * growth, unit), round_up(args.max_requests, unit))
    rate = res["rps"] if 0 < res["rps"] < float("inf") else n / res["wall_s"]
    wanted = min(rate * args.seconds, args.max_requests)
    return round_up(wanted, unit), probes


def new_record(target: Target, wl: Workload) -> dict:
    return {"server": target.name, "workload": wl.id, "label": wl.label,
            "pipeline": wl.pipeline, "clients": wl.clients, "command": " ".join(wl.argv())}


@contextlib.contextmanager
def guarded(args, target: Target, wl: Workload, record: dict):
    """Record a failure of this server on this workload instead of raising."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - one failed workload must not stop the run
        if isinstance(exc, Skip):
            record["error"] = f"skipped: {exc}"
            log(f"  {target.name:8s} {wl.id:20s} {record['error']}")
        else:
            record["error"] = f"{type(exc).__name__}: {exc}"
            if not isinstance(exc, (RunFailed, resp.RespError, OSError)):
                record["traceback"] = traceback.format_exc()
            log(f"  {target.name:8s} {wl.id:20s} FAILED {record['error']}")
        # The set-up connection may be out of step with its replies: start afresh.
        target.client.close()
        if target.server.alive():
            try:
                target.client = target.server.client(timeout=args.probe_timeout)
            except OSError as exc2:
                record["reconnect_error"] = str(exc2)


def run_workload(args, targets: list[Target], wl: Workload) -> dict[str, dict]:
    """One workload on every server: calibrate each, then the measured runs
    alternate between servers (so a burst of background load hits both)."""
    records = {t.name: new_record(t, wl) for t in targets}
    plans: dict[str, tuple[int, float]] = {}
    for t in targets:
        rec = records[t.name]
        with guarded(args, t, wl, rec):
            if not t.server.alive():
                raise RunFailed("server is not running")
            if wl.reset:
                wl.reset(t, wl)
            requests, probes = calibrate(args, t, wl)
            rec["calibration"] = probes
            rec["bench_argv"] = bench_argv(args, t, wl, requests)[1:]
            rec["runs"] = []
            expected = requests / max(probes[-1]["rps"], 1.0) if probes else args.seconds
            plans[t.name] = (requests, max(30.0, 10.0 * expected + 20.0))
    for _ in range(args.repeat):
        for t in targets:
            rec = records[t.name]
            if t.name in plans and "error" not in rec:
                with guarded(args, t, wl, rec):
                    rec["runs"].append(run_once(args, t, wl, *plans[t.name]))
    for t in targets:
        rec = records[t.name]
        runs = rec.get("runs")
        if runs and "error" not in rec:
            rec["rps"] = statistics.median(r["rps"] for r in runs)
            per_cpu = [r["ops_per_server_cpu_s"] for r in runs if r["ops_per_server_cpu_s"]]
            rec["ops_per_server_cpu_s"] = statistics.median(per_cpu) if per_cpu else None
            others = [r["other_cpu_share"] for r in runs if r.get("other_cpu_share") is not None]
            rec["other_cpu_share"] = statistics.median(others) if others else None
            problems = sorted({p for r in runs for p in r.get("problems", [])})
            if problems:
                rec["problems"] = problems
            log(f"  {t.name:8s} {wl.id:20s} {rec['rps']:>12,.0f} ops/s  "
                f"{fmt_num(rec['ops_per_server_cpu_s']):>12s} ops/CPU-s  "
                f"({plans[t.name][0]} requests x{len(runs)}; other processes "
                f"{fmt_pct(rec['other_cpu_share'])} of the machine)"
                + (f"  PROBLEMS: {problems}" if problems else ""))
        if wl.cleanup and t.server.alive():
            try:
                wl.cleanup(t, wl)
            except Exception as exc:  # noqa: BLE001 - a failed cleanup must not stop the run
                rec.setdefault("cleanup_error", repr(exc))
    return records


# -- one server -----------------------------------------------------------------------

def server_facts(target: Target) -> dict:
    facts: dict = {}
    try:
        facts["info_server"] = {k: v for k, v in resp.info_fields(
            target.client.call("INFO", "server")).items()
            if k in ("redis_version", "redis_mode", "process_id", "tcp_port",
                     "multiplexing_api", "arch_bits") or "tidelog" in k}
    except (resp.RespError, OSError, ValueError) as exc:
        facts["info_server_error"] = str(exc)
    for name in ("save", "appendonly"):
        try:
            reply = target.client.call("CONFIG", "GET", name)
            facts[f"config_{name}"] = reply[1].decode() if len(reply) == 2 else None
        except (resp.RespError, OSError, ValueError, TypeError, IndexError) as exc:
            facts[f"config_{name}"] = f"(not answered: {exc})"
    return facts



def start_target(args, name: str, argv: list[str], env, out: dict) -> Target | None:
    """Start one server; on failure record why and return None."""
    log(f"== starting {SERVER_NAMES[name]}: {shlex.join(argv)}")
    out.update({"argv": argv, "results": []})
    server = servers.Server(name, argv, env=env, ready_timeout=args.start_timeout)
    try:
        server.start()
        client = server.client(timeout=args.probe_timeout)
    except (servers.ServerError, OSError) as exc:
        server.stop()
        out["error"] = f"could not start: {exc}"
        log(f"  {out['error']}")
        return None
    target = Target(name=name, server=server, client=client, preload=args.preload)
    out.update(server_facts(target))
    out["rss_start_bytes"] = server.rss_bytes()
    return target


def stop_target(target: Target, out: dict) -> None:
    out["preload"] = target.state.get("preload")
    if target.server.alive():
        out["rss_end_bytes"] = target.server.rss_bytes()
        out["cpu_total_s"] = round(target.server.cpu_seconds(), 3)
    target.client.close()
    target.server.stop()
    out["exit_status"] = getattr(target.server, "returncode", None)


def bench_all(args, plan: list[tuple[str, list[str], dict | None]], workloads: list[Workload],
              report: dict, scenarios: list[Scenario] = ()) -> None:
    """Start every server, run each workload on each server in turn (so slow drifts
    in background load hit both alike), then each scenario (it measures every
    server itself), and stop them all whatever happens."""
    targets: list[Target] = []
    try:
        for name, argv, env in plan:
            out = report["servers"].setdefault(name, {})
            target = start_target(args, name, argv, env, out)
            if target is None:
                out["results"] = [{"server": name, "workload": wl.id, "label": wl.label,
                                   "pipeline": wl.pipeline, "clients": wl.clients,
                                   "error": out["error"].strip().splitlines()[0][:300]}
                                  for wl in workloads]
            else:
                targets.append(target)
        for wl in workloads:
            was_alive = {t.name: t.server.alive() for t in targets}
            records = run_workload(args, targets, wl)
            for target in targets:
                out = report["servers"][target.name]
                rec = records[target.name]
                rec["loadavg_after"] = loadavg()
                out["results"].append(rec)
                if was_alive[target.name] and not target.server.alive():
                    out["died"] = {"during": wl.id, "status": target.server.proc.returncode,
                                   "log_tail": target.server.log_tail()}
                    log(f"  {target.name} exited (status {target.server.proc.returncode}); "
                        f"its log ends with:\n{target.server.log_tail()}")
        for sc in scenarios:
            log(f"== {sc.id}: {sc.label}")
            live = [t for t in targets if t.server.alive()]
            result = sc.run(args, live, log)
            for name, out in report["servers"].items():
                if name not in result["servers"]:
                    why = out.get("error") or ("died during " + out["died"]["during"]
                                               if out.get("died") else "not running")
                    result["servers"][name] = {"error": f"server {why}"}
            report["scenarios"][sc.id] = result
    finally:
        for target in targets:
            stop_target(target, report["servers"][target.name])


# -- report -----------------------------------------------------------------------------

def fmt_num(x) -> str:
    return "-" if x is None else f"{x:,.0f}"


def fmt_pct(x) -> str:
    return "?" if x is None else f"{100 * x:.0f}%"


def fmt_ratio(a, b) -> str:
    if a is None or b is None or b == 0:
        return "-"
    return f"{a / b:.3f}"


def cell(rec: dict | None, key: str) -> str:
    if rec is None:
        return "-"
    if "error" in rec:
        return "failed" if not rec["error"].startswith("skipped") else "skipped"
    return fmt_num(rec.get(key)) + (" (!)" if rec.get("problems") else "")


def markdown_table(report: dict, workloads: list[Workload]) -> str:
    names = [n for n in ("redis", "tidelog") if n in report["servers"]]
    by = {(r["server"], r["workload"]): r
          for n in names for r in report["servers"][n]["results"]}
    both = names == ["redis", "tidelog"]
    head = ["Workload", "Pipeline", "Conns"]
    for metric in ("ops/s", "ops/CPU-s"):
        head += [f"{SERVER_NAMES[n]} {metric}" for n in names]
        if both:
            head.append("Tidelog/Redis")
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join("---" if i == 0 else "---:" for i in range(len(head))) + "|"]
    notes: dict[tuple[str, str], list[str]] = {}
    for wl in workloads:
        row = [wl.label, str(wl.pipeline), str(wl.clients)]
        for key in ("rps", "ops_per_server_cpu_s"):
            recs = [by.get((n, wl.id)) for n in names]
            row += [cell(r, key) for r in recs]
            if both:
                ok = all(r and "error" not in r for r in recs)
                row.append(fmt_ratio(recs[1].get(key), recs[0].get(key)) if ok else "-")
        for n in names:
            rec = by.get((n, wl.id))
            for warning in sorted({w for r in (rec or {}).get("runs", [])
                                   for w in r.get("warnings", [])}):
                notes.setdefault((n, f"redis-benchmark printed: {warning}"), []).append(wl.id)
            if rec and "error" in rec:
                msg = rec["error"].splitlines()[0][:300]
            elif rec and rec.get("problems"):
                msg = "(!) " + "; ".join(rec["problems"])
            else:
                continue
            notes.setdefault((n, msg), []).append(wl.id)
        lines.append("| " + " | ".join(row) + " |")
    m = report["machine"]
    vers = report["versions"]
    shown = [vers.get("redis_server") or "redis-server ?"] if "redis" in names else []
    if "tidelog" in names:
        shown.append((vers.get("tidelog") or "Tidelog ?")
                     + (f" on Python {vers['tidelog_python']}" if vers.get("tidelog_python") else ""))
    others = [r["other_cpu_share"] for n in names for r in report["servers"][n]["results"]
              if r.get("other_cpu_share") is not None]
    header = (f"Machine: {m['nproc']} CPUs ({m['cpu_model']}), Python {m['python']}; "
              f"{'; '.join(shown)}.  ")
    if workloads:
        header += (f"{report['settings']['repeat']} run(s) per figure (median), "
                   f"about {report['settings']['seconds']:g} s each.  Other processes used "
                   f"{fmt_pct(statistics.median(others) if others else None)} of the "
                   f"machine's CPU during a typical run ")
    header += f"(load average at start {report.get('loadavg_start')})."
    text = [header]
    if workloads:
        text += [""] + lines
    for n in names:
        pre = report["servers"][n].get("preload")
        if pre:
            rss = pre.get("rss_after_bytes")
            text.append("")
            grew = (f" (+{(rss - pre['rss_before_bytes']) / 2**20:.1f} MiB)"
                    if rss and pre.get("rss_before_bytes") else "")
            text.append(f"{SERVER_NAMES[n]}: preloaded {pre['entries']:,} entries in "
                        f"{pre['seconds']:.2f} s (pipelined from Python); RSS after "
                        f"preload {rss / 2**20:.1f} MiB{grew}." if rss else "")
    same = report.get("xrange_replies_identical")
    if same is not None:
        text.append("")
        text.append("XRANGE check replies (zero-padded start IDs) byte-identical between the "
                    f"servers: {'yes' if same else 'NO'}.")
    if notes:
        text += ["", "Notes:"]
        for (n, msg), ids in notes.items():
            which = "every workload" if len(ids) == len(workloads) > 1 else ", ".join(ids)
            text.append(f"- {SERVER_NAMES[n]}, {which}: {msg}")
    return "\n".join(text)


def scenario_sections(report: dict, scenarios: list[Scenario]) -> str:
    parts = []
    for sc in scenarios:
        result = report.get("scenarios", {}).get(sc.id)
        if result is not None:
            try:
                parts.append(sc.render(result))
            except Exception:  # noqa: BLE001 - the raw results are still in the JSON
                parts.append(f"### {sc.label}\n\n(could not render: "
                             f"{traceback.format_exc().splitlines()[-1]})")
    return "\n\n".join(parts)


def default_json_path() -> Path:
    base = HERE / "results" / dt.date.today().isoformat()
    path, i = base.with_suffix(".json"), 2
    while path.exists():
        path, i = base.parent / f"{base.name}-{i}.json", i + 1
    return path


def python_of(argv: list[str]) -> str | None:
    """The Python version that runs a command (its interpreter or #! line)."""
    exe = argv[0]
    if not os.path.isabs(exe):
        exe = shutil.which(exe) or exe
    try:
        with open(exe, "rb") as fh:
            first = fh.readline()
        if first.startswith(b"#!"):
            exe = first[2:].decode().strip().split()[0]
        out = subprocess.run([exe, "-c", "import platform; print(platform.python_version())"],
                             check=False, capture_output=True, text=True, timeout=30)
        return out.stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired, UnicodeDecodeError, IndexError):
        return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=["tidelog", "redis"], help="benchmark one server only")
    ap.add_argument("--quick", action="store_true",
                    help="very short run: 0.3 s per figure, 10,000 preloaded entries; "
                    "smaller consumer-group runs (2 s, 20,000 and 100,000 entries)")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiply the time per figure and the request cap (default 1)")
    ap.add_argument("--seconds", type=float, help="target duration of one measured run "
                    "(default 1, or 0.3 with --quick), before --scale")
    ap.add_argument("--requests", type=int,
                    help="fixed number of requests per run (no calibration)")
    ap.add_argument("--repeat", type=int,
                    help="measured runs per figure; the median is reported (default 3, "
                    "1 with --quick)")
    ap.add_argument("--preload", type=int,
                    help="entries preloaded for XRANGE (default 100000, 10000 with --quick)")
    ap.add_argument("--workloads", default="*",
                    help="comma-separated glob patterns of workload ids (default all); "
                    "'group-*' selects the consumer-group benchmarks")
    ap.add_argument("--list", action="store_true", help="list the workloads and exit")
    ap.add_argument("--json", type=Path, help="where to write the raw results "
                    "(default bench/results/<date>.json)")
    ap.add_argument("--tidelog-cmd", help="command that starts Tidelog; may use {port} and "
                    "{dir}, else '--port N --dir D' are appended (default: the project's "
                    ".venv/bin/tidelog-server, or this Python with src on the path)")
    ap.add_argument("--redis-server", default="redis-server")
    ap.add_argument("--redis-benchmark", default="redis-benchmark")
    ap.add_argument("--start-timeout", type=float, default=30.0)
    grp = ap.add_argument_group("consumer-group benchmarks (group-*)")
    grp.add_argument("--latency-seconds", type=float,
                     help="group-latency: how long the producers run (default 10, 2 with --quick)")
    grp.add_argument("--latency-rate", type=float, default=10_000.0,
                     help="group-latency: messages per second, all producers together "
                     "(default 10000)")
    grp.add_argument("--drain-messages", type=int,
                     help="group-drain: messages preloaded and drained "
                     "(default 200000, 20000 with --quick)")
    grp.add_argument("--pel-size", type=int,
                     help="group-pel: pending entries of the big group "
                     "(default 1000000, 100000 with --quick)")
    grp.add_argument("--pel-ops", type=int,
                     help="group-pel: times each operation is timed (default 2000, "
                     "400 with --quick)")
    grp.add_argument("--pel-timeout", type=float, default=300.0,
                     help="group-pel: time limit of one server's preload, in seconds "
                     "(default 300)")
    grp = ap.add_argument_group("durability benchmarks (durability-*)")
    grp.add_argument("--durability-entries", type=int,
                     help="durability-restart: entries in the stream that is reloaded "
                     "(default 500000, 20000 with --quick)")
    grp.add_argument("--durability-timeout", type=float, default=600.0,
                     help="durability-restart: time limit of one fill, rewrite or restart, "
                     "in seconds (default 600)")
    args = ap.parse_args(argv)

    args.seconds = (args.seconds or (0.3 if args.quick else 1.0)) * args.scale
    args.repeat = args.repeat or (1 if args.quick else 3)
    if args.repeat < 1 or args.seconds <= 0:
        ap.error("--repeat and --seconds must be positive")
    args.preload = args.preload or (10_000 if args.quick else 100_000)
    args.max_requests = int(20_000_000 * args.scale)
    args.probe_start = 200
    args.probe_seconds = min(0.25, args.seconds / 2)
    args.probe_timeout = 60.0
    if args.preload < 10:
        ap.error("--preload must be at least 10")
    args.latency_seconds = args.latency_seconds or (2.0 if args.quick else 10.0)
    args.drain_messages = args.drain_messages or (20_000 if args.quick else 200_000)
    args.pel_size = args.pel_size or (100_000 if args.quick else 1_000_000)
    args.pel_ops = args.pel_ops or (400 if args.quick else 2000)
    args.durability_entries = args.durability_entries or (20_000 if args.quick else 500_000)
    if args.durability_entries < 1 or args.durability_timeout <= 0:
        ap.error("--durability-entries and --durability-timeout must be positive")
    if (args.latency_seconds <= 0 or args.latency_rate <= 0 or args.drain_messages < 1
            or args.pel_size < 10 or args.pel_ops < 1 or args.pel_timeout <= 0):
        ap.error("the group-* sizes, rates and times must be positive "
                 "(--pel-size at least 10)")
    # Fixed shapes of the consumer-group benchmarks (see groups.py).
    args.latency_consumers = 10     # one group, one connection each
    args.latency_producers = 2      # connections; the rate is their total
    args.latency_procs = 2          # client processes the consumers are spread over
    args.latency_drain_s = 30.0     # after the producers stop, at most this to drain
    args.latency_buckets = 20       # printed 1 ms buckets: 0 .. 19 and >= 20
    args.drain_consumers = 4
    args.drain_procs = 2
    args.group_timeout = 120.0      # group-drain: preload, and the drain itself
    args.pel_small = 1000           # pending entries of the small group
    args.pel_depth = 20             # commands per timed batch

    patterns = [p.strip() for p in args.workloads.split(",") if p.strip()]
    workloads = [w for w in WORKLOADS if any(fnmatch.fnmatchcase(w.id, p) for p in patterns)]
    scenarios = [s for s in SCENARIOS if any(fnmatch.fnmatchcase(s.id, p) for p in patterns)]
    if args.list or not (workloads or scenarios):
        for w in WORKLOADS:
            print(f"{w.id:22s} P{w.pipeline:<4d} c{w.clients:<3d} {' '.join(w.argv())}")
        for s in SCENARIOS:
            print(f"{s.id:22s} {'(' + s.driver + ')':11s} {s.summary}")
        return 0 if args.list else 2
    needs_benchmark = workloads or any(s.id == "durability-xadd" for s in scenarios)
    if needs_benchmark and not shutil.which(args.redis_benchmark):
        log(f"{args.redis_benchmark} not found (Debian package redis-tools/redis-server)")
        return 2

    tidelog_base, tidelog_env = servers.tidelog_command(REPO, args.tidelog_cmd)
    # No persistence, as redis-server gets (--save '' --appendonly no): the
    # main workloads compare in-memory command costs, not background saves.
    tidelog_argv = servers.with_port_and_dir(tidelog_base) + ["--save", "", "--appendonly", "no"]
    # The durability benchmarks start servers of their own, with other settings,
    # and measure redis-benchmark workloads on them like the main loop does.
    args.tidelog_base, args.tidelog_env = tidelog_base, tidelog_env
    args.run_workload = run_workload
    todo = [n for n in ("redis", "tidelog") if args.only in (None, n)]
    if "redis" in todo and not shutil.which(args.redis_server):
        log(f"{args.redis_server} not found (Debian package redis-server)")
        return 2

    versions = {}
    if "redis" in todo:
        versions["redis_server"] = servers.command_version([args.redis_server])
    if "tidelog" in todo:
        if not any("{" in a for a in tidelog_base):
            versions["tidelog"] = servers.command_version(tidelog_base, env=tidelog_env)
        versions["tidelog_python"] = python_of(tidelog_base)

    report = {
        "date": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": servers.machine_info(),
        "versions": versions,
        "settings": {"seconds": args.seconds, "repeat": args.repeat, "preload": args.preload,
                     "requests": args.requests, "quick": args.quick, "scale": args.scale,
                     "max_requests": args.max_requests,
                     "workloads": [w.id for w in workloads] + [s.id for s in scenarios],
                     "groups": {k: getattr(args, k) for k in (
                         "latency_seconds", "latency_rate", "latency_consumers",
                         "latency_producers", "latency_procs", "drain_messages",
                         "drain_consumers", "drain_procs", "pel_size", "pel_small",
                         "pel_ops", "pel_depth", "pel_timeout")} if scenarios else None,
                     "durability": {k: getattr(args, k) for k in (
                         "durability_entries", "durability_timeout")} if scenarios else None},
        "loadavg_start": loadavg(),
        "servers": {},
        "scenarios": {},
    }
    plan = []
    for name in todo:
        if name == "redis":
            plan.append((name, servers.redis_argv(args.redis_server), None))
        else:
            plan.append((name, tidelog_argv, tidelog_env))
    def on_term(signum, frame):
        raise KeyboardInterrupt  # stop the servers and write what was measured

    signal.signal(signal.SIGTERM, on_term)
    started = time.monotonic()
    try:
        bench_all(args, plan, workloads, report, scenarios)
    except KeyboardInterrupt:
        log("interrupted; writing what was measured")
        report["interrupted"] = True
    except Exception:  # noqa: BLE001 - keep the partial results
        report["crash"] = traceback.format_exc()
        log(report["crash"])
    report["loadavg_end"] = loadavg()
    checks = [(report["servers"].get(n) or {}).get("preload") for n in ("redis", "tidelog")]
    if all(checks):
        report["xrange_replies_identical"] = all(
            checks[0]["id_parsing"]["probes"][k]["reply_sha1"]
            == checks[1]["id_parsing"]["probes"].get(k, {}).get("reply_sha1")
            for k in checks[0]["id_parsing"]["probes"])
    report["elapsed_s"] = round(time.monotonic() - started, 1)

    table = markdown_table(report, workloads)
    sections = scenario_sections(report, scenarios)
    if sections:
        table += "\n\n" + sections
    report["table_markdown"] = table
    path = args.json or default_json_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(scrub(json.dumps(report, indent=2)) + "\n", encoding="utf-8")
    print(scrub(table))
    log(f"\nraw results: {path}  ({report['elapsed_s']} s)")
    return 1 if ("crash" in report or report.get("interrupted")) else 0


if __name__ == "__main__":
    sys.exit(main())
