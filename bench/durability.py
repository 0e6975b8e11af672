"""The durability benchmarks: restart times, and XADD throughput with the AOF on.

Both are ``Scenario``s (see groups.py), selected with ``--workloads
'durability-*'``.  They start their own servers, with the persistence
settings each measurement needs, instead of using the run's two servers
(which run without persistence); every server is stopped at the end
whatever happens.

``durability-restart``
    On each server: start with ``appendonly yes`` (``appendfsync
    everysec``, ``aof-use-rdb-preamble no``, ``save ""``) in a fresh
    directory, fill one stream with N entries (``XADD s <i>-0 sensor 17
    temp 21.5``, IDs 1-0 .. N-0, pipelined in batches of 1,000), ``SAVE``,
    stop.  Then restart on the same directory and time, from the start of
    the process until it answers ``PING`` with ``PONG`` and ``XLEN s`` is N:

    1. ``aof-incr``: the AOF as the fill wrote it (N XADDs in the
       incremental file, an empty base);
    2. ``aof-base-rdb``: after ``BGREWRITEAOF`` with ``aof-use-rdb-preamble
       yes`` (the base is an RDB snapshot);
    3. ``aof-base-cmds``: after ``BGREWRITEAOF`` with ``aof-use-rdb-preamble
       no`` (the base is the dataset as commands);
    4. ``rdb``: ``appendonly no``: the ``dump.rdb`` written by ``SAVE``.

    Before the fill, the time to start on an empty directory is measured the
    same way (the floor: process start, imports, opening the files).  Each
    server's own "DB loaded from ..." log line is read too.  The servers take
    turns step by step, so a burst of background load hits both.
``durability-xadd``
    ``XADD bench:xadd-pP-cC * sensor 17 temp 21.5`` driven by redis-benchmark
    at depths 1 and 16 with 1 and 8 connections, exactly like the ``xadd-*``
    workloads, on servers started with ``appendonly no`` (reference), then
    on servers started with ``appendonly yes``, first with ``appendfsync
    everysec`` and then, after ``CONFIG SET appendfsync always``, with
    ``always``.  Automatic AOF rewrites are off (``auto-aof-rewrite-percentage
    0``) so every figure is the cost of appending, not of a rewrite that
    happens to start.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import time
import traceback
from typing import Any

import resp
import servers
from groups import SERVER_NAMES, Log, Scenario, ScenarioError, _fmt, _machine_note, _ratio
from workloads import ENTRY, Target, xadd

KEY = "bench:durable"
BATCH = 1000
LOAD_LINE = re.compile(rb"DB loaded from (disk|append only file): ([0-9.]+) seconds")

# The persistence settings of every server these benchmarks start.
COMMON = ["--save", "", "--appendfsync", "everysec", "--aof-use-rdb-preamble", "no",
          "--auto-aof-rewrite-percentage", "0"]


def server_argv(args, name: str, port: int, dirname: str, appendonly: bool) -> list[str]:
    """The command line of one server: port, directory and persistence settings."""
    extra = COMMON + ["--appendonly", "yes" if appendonly else "no"]
    if name == "redis":
        base = [a.format(port=port, dir=dirname) for a in servers.redis_argv(args.redis_server)]
    else:
        base = [a.format(port=port, dir=dirname)
                for a in servers.with_port_and_dir(args.tidelog_base)]
    return base + extra


class Restartable:
    """A server that is stopped and started again on the same directory and port.

    ``start`` returns once the server answers PING with PONG and XLEN KEY is
    the expected length (or raises at the time limit); the directory is
    removed by ``close`` only."""

    def __init__(self, args, name: str) -> None:
        self.args = args
        self.name = name
        self.dir = tempfile.mkdtemp(prefix=f"bench-durable-{name}-")
        self.port = servers.free_port()
        self.proc: subprocess.Popen | None = None
        self.client: resp.Client | None = None
        self.logfile = os.path.join(self.dir, "server.log")
        self.env = args.tidelog_env if name == "tidelog" else None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, lines: int = 15) -> str:
        try:
            with open(self.logfile, "rb") as fh:
                text = fh.read()[-6000:].decode("utf-8", "replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def start(self, appendonly: bool, expect: int, timeout: float) -> dict:
        """Start and time it until PING answers PONG and XLEN is ``expect``."""
        if self.alive():
            raise ScenarioError("start: the server is already running")
        with open(self.logfile, "ab") as fh:
            log_from = fh.tell()
        argv = server_argv(self.args, self.name, self.port, self.dir, appendonly)
        busy0 = servers.machine_busy_seconds()
        self0 = time.process_time()
        t0 = time.monotonic()
        with open(self.logfile, "ab") as out:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, env=self.env, cwd=self.dir,
                                         start_new_session=True,
                                         preexec_fn=servers._die_with_parent)  # noqa: PLW1509
        deadline = t0 + timeout
        answered_at = None
        last: Any = None
        while True:
            now = time.monotonic()
            if now > deadline:
                raise ScenarioError(f"no PONG and XLEN {expect:,} within {timeout:.0f} s "
                                    f"(last: {last!r:.200}); log:\n{self.log_tail()}")
            if self.proc.poll() is not None:
                raise ScenarioError(f"exited with status {self.proc.returncode} while "
                                    f"starting; log:\n{self.log_tail()}")
            if self.client is None:
                try:
                    self.client = resp.Client(self.port, timeout=max(1.0, timeout))
                except OSError as exc:
                    last = exc
                    time.sleep(0.005)
                    continue
            try:
                pong = self.client.call("PING")
                if pong != b"PONG":
                    raise ScenarioError(f"PING replied {pong!r}")
                answered_at = answered_at or time.monotonic()
                last = self.client.call("XLEN", KEY)
                if last == expect:
                    break
            except resp.RespError as exc:  # -LOADING while Redis loads
                last = exc
            except OSError as exc:
                last = exc
                self.client.close()
                self.client = None
            time.sleep(0.005)
        wall = time.monotonic() - t0
        cpu = servers.cpu_seconds(self.proc.pid)
        busy1 = servers.machine_busy_seconds()
        mine = time.process_time() - self0
        other = None
        if busy0 is not None and busy1 is not None and wall > 0:
            other = round(max(0.0, busy1 - busy0 - cpu - mine) / (wall * servers.NCPU), 3)
        with open(self.logfile, "rb") as fh:
            fh.seek(log_from)
            found = LOAD_LINE.findall(fh.read())
        return {"seconds": round(wall, 3), "first_pong_s": round(answered_at - t0, 3),
                "server_cpu_s": round(cpu, 2), "other_cpu_share": other,
                "log_load_s": float(found[-1][1]) if found else None,
                "log_load_from": found[-1][0].decode() if found else None}

    def stop(self, timeout: float = 120.0) -> float:
        """SIGTERM and wait (SIGKILL past the timeout); seconds it took."""
        if self.client is not None:
            self.client.close()
            self.client = None
        proc, self.proc = self.proc, None
        t0 = time.monotonic()
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(30)
                raise ScenarioError(f"did not stop within {timeout:.0f} s of SIGTERM; killed") from None
        return round(time.monotonic() - t0, 3)

    def close(self) -> None:
        try:
            self.stop(timeout=30.0)
        except ScenarioError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)

    def sizes(self, rdb: bool = True, aof: bool = True) -> dict[str, int]:
        """Bytes of dump.rdb and of each AOF file (what a start reads)."""
        out = {}
        path = os.path.join(self.dir, "dump.rdb")
        if rdb and os.path.exists(path):
            out["dump.rdb"] = os.path.getsize(path)
        aofdir = os.path.join(self.dir, "appendonlydir")
        if aof and os.path.isdir(aofdir):
            for name in sorted(os.listdir(aofdir)):
                out[name] = os.path.getsize(os.path.join(aofdir, name))
        return out


def _persistence(s: Restartable) -> dict[str, str]:
    return resp.info_fields(s.client.call("INFO", "persistence"))


def _fill(s: Restartable, n: int, timeout: float) -> dict:
    c = s.client
    deadline = time.monotonic() + timeout
    cpu0 = servers.cpu_seconds(s.proc.pid)
    t0 = time.monotonic()
    for first in range(1, n + 1, BATCH):
        if time.monotonic() > deadline:
            raise ScenarioError(f"fill stopped at the time limit after {first - 1:,} entries")
        cmds = [("XADD", KEY, f"{i}-0") + ENTRY for i in range(first, min(first + BATCH, n + 1))]
        for reply in c.pipeline(cmds):
            if isinstance(reply, resp.RespError):
                raise ScenarioError(f"fill: XADD replied -{reply}")
    seconds = time.monotonic() - t0
    length = c.call("XLEN", KEY)
    if length != n:
        raise ScenarioError(f"fill: XLEN is {length}, expected {n}")
    return {"seconds": round(seconds, 2),
            "server_cpu_s": round(servers.cpu_seconds(s.proc.pid) - cpu0, 2)}


def _rewrite(s: Restartable, preamble: bool, timeout: float) -> dict:
    c = s.client
    c.call("CONFIG", "SET", "aof-use-rdb-preamble", "yes" if preamble else "no")
    t0 = time.monotonic()
    c.call("BGREWRITEAOF")
    deadline = t0 + timeout
    while True:
        info = _persistence(s)
        if (info.get("aof_rewrite_in_progress") == "0"
                and info.get("aof_rewrite_scheduled") == "0"):
            break
        if time.monotonic() > deadline:
            raise ScenarioError(f"BGREWRITEAOF still running after {timeout:.0f} s")
        time.sleep(0.05)
    if info.get("aof_last_bgrewrite_status") != "ok":
        raise ScenarioError(f"BGREWRITEAOF failed: aof_last_bgrewrite_status "
                            f"{info.get('aof_last_bgrewrite_status')}; log:\n{s.log_tail()}")
    return {"seconds": round(time.monotonic() - t0, 2)}


# The restarts, in order: id, label, appendonly, what happens before the stop.
LOADS = [
    ("aof-incr", "AOF replay (N XADDs in the incremental file, aof-use-rdb-preamble no)",
     True),
    ("aof-base-rdb", "rewritten AOF, aof-use-rdb-preamble yes (RDB base)", True),
    ("aof-base-cmds", "rewritten AOF, aof-use-rdb-preamble no (base as commands)", True),
    ("rdb", "snapshot (SAVE, appendonly no: dump.rdb)", False),
]


def run_restart(args, targets: list[Target], log: Log) -> dict:
    n = args.durability_entries
    names = [t.name for t in targets]
    result: dict = {
        "id": "durability-restart", "label": "Restart time", "entries": n,
        "setup": (f"Each server starts in a fresh directory with `appendonly yes`, "
                  f"`appendfsync everysec`, `aof-use-rdb-preamble no`, `save \"\"`; one stream "
                  f"is filled with {n:,} entries (`XADD {KEY} <i>-0 sensor 17 temp 21.5`, IDs "
                  f"1-0 .. {n}-0, pipelined in batches of {BATCH:,} from Python), then `SAVE`, "
                  f"then SIGTERM. Each restart is on the same directory and port; the time "
                  f"runs from the start of the process until it has answered `PING` with "
                  f"`PONG` and `XLEN` with {n:,} (polled every 5 ms). In order: the AOF as "
                  f"the fill wrote it; after `BGREWRITEAOF` with `aof-use-rdb-preamble yes`; "
                  f"after `BGREWRITEAOF` with `aof-use-rdb-preamble no`; then with "
                  f"`appendonly no`, which loads the `dump.rdb` of the `SAVE`. Each rewrite "
                  f"is waited for (`aof_rewrite_in_progress:0`) before the stop. The files "
                  f"were just written, so they are read from the page cache. One restart per "
                  f"figure; the servers take turns step by step. \"Log\" is the load time "
                  f"the server itself logs (\"DB loaded from ...\"). "
                  + _machine_note(servers.NCPU)),
        "servers": {name: {"loads": {}} for name in names},
    }
    procs = {name: Restartable(args, name) for name in names}
    failed: dict[str, str] = {}
    timeout = args.durability_timeout

    def each(step: str, fn) -> None:
        for name, s in procs.items():
            if name in failed:
                continue
            try:
                fn(name, s, result["servers"][name])
            except Exception as exc:  # noqa: BLE001 - this server stops, the other goes on
                failed[name] = f"{step}: {type(exc).__name__}: {exc}"
                rec = result["servers"][name]
                rec["error"] = failed[name]
                if not isinstance(exc, (ScenarioError, resp.RespError, OSError)):
                    rec["traceback"] = traceback.format_exc()
                log(f"  {name:8s} durability-restart   FAILED {failed[name]}")
                try:
                    s.stop(timeout=30.0)
                except ScenarioError:
                    pass

    def empty_start(name, s, rec):
        rec["empty_start"] = s.start(True, 0, timeout)
        log(f"  {name:8s} durability-restart   empty start {rec['empty_start']['seconds']:.2f} s")

    def fill(name, s, rec):
        rec["fill"] = _fill(s, n, timeout)
        t0 = time.monotonic()
        s.client.call("SAVE")
        rec["save_s"] = round(time.monotonic() - t0, 2)
        rec["stop_after_fill_s"] = s.stop()
        rec["files_after_fill"] = s.sizes()
        log(f"  {name:8s} durability-restart   filled {n:,} in {rec['fill']['seconds']:.1f} s, "
            f"SAVE {rec['save_s']:.2f} s")

    def load(lid: str, appendonly: bool):
        def step(name, s, rec):
            rec["loads"][lid] = res = s.start(appendonly, n, timeout)
            res["files"] = s.sizes(rdb=not appendonly, aof=appendonly)  # what it read
            log(f"  {name:8s} durability-restart   {lid:14s} {res['seconds']:.2f} s "
                f"(log: {res['log_load_s']} s)")
        return step

    def rewrite(preamble: bool):
        def step(name, s, rec):
            rec[f"rewrite_preamble_{'yes' if preamble else 'no'}"] = _rewrite(s, preamble,
                                                                              timeout)
            s.stop()
        return step

    def stop(name, s, rec):
        s.stop()

    t_start = time.monotonic()
    try:
        each("empty start", empty_start)
        each("fill", fill)
        each("aof-incr", load("aof-incr", True))
        each("rewrite (preamble yes)", rewrite(True))
        each("aof-base-rdb", load("aof-base-rdb", True))
        each("rewrite (preamble no)", rewrite(False))
        each("aof-base-cmds", load("aof-base-cmds", True))
        each("stop", stop)
        each("rdb", load("rdb", False))
        each("stop", stop)
    finally:
        for s in procs.values():
            s.close()
    result["wall_s"] = round(time.monotonic() - t_start, 1)
    return result


def render_restart(result: dict) -> str:
    names = [x for x in ("redis", "tidelog") if x in result["servers"]]
    recs = [result["servers"][x] for x in names]
    both = len(names) == 2
    n = result["entries"]
    lines = [f"### {result['label']} (`{result['id']}`), {n:,} entries", "",
             result["setup"], ""]
    head = ["Restart from"] + [f"{SERVER_NAMES[x]} s" for x in names]
    if both:
        head.append("Tidelog/Redis")
    head += [f"{SERVER_NAMES[x]} log s" for x in names]
    head += [f"{SERVER_NAMES[x]} MB read" for x in names]
    lines += ["| " + " | ".join(head) + " |", "|---|" + "|".join("---:" for _ in head[1:]) + "|"]

    def row(label: str, get) -> None:
        res = [get(r) for r in recs]
        secs = [x.get("seconds") if x else None for x in res]
        cells = [label] + [_fmt(v, 2) if v is not None else "-" for v in secs]
        if both:
            cells.append(_ratio(secs[1], secs[0], 1))
        cells += [_fmt(x.get("log_load_s"), 3) if x and x.get("log_load_s") is not None
                  else "-" for x in res]
        cells += [_fmt(sum(x["files"].values()) / 1e6, 1) if x and x.get("files") else "-"
                  for x in res]
        lines.append("| " + " | ".join(cells) + " |")

    row("empty directory (start-up floor)", lambda r: r.get("empty_start"))
    for lid, label, _ in LOADS:
        row(label, lambda r, lid=lid: r["loads"].get(lid))
    lines.append("")
    others = []
    for x, r in zip(names, recs):
        parts = []
        if r.get("fill"):
            parts.append(f"filled {n:,} entries in {r['fill']['seconds']:.1f} s "
                         f"(server CPU {r['fill']['server_cpu_s']:.1f} s)")
        if r.get("save_s") is not None:
            parts.append(f"SAVE {r['save_s']:.2f} s")
        for p in ("yes", "no"):
            rw = r.get(f"rewrite_preamble_{p}")
            if rw:
                parts.append(f"BGREWRITEAOF (preamble {p}) {rw['seconds']:.2f} s")
        files = r.get("files_after_fill")
        if files:
            parts.append("files after the fill: " + ", ".join(
                f"{k} {v / 1e6:.1f} MB" for k, v in files.items() if v))
        if parts:
            lines.append(f"{SERVER_NAMES[x]}: " + "; ".join(parts) + ".")
        if r.get("error"):
            lines.append(f"- {SERVER_NAMES[x]} FAILED at {r['error'].splitlines()[0][:300]}")
        for res in [r.get("empty_start")] + list(r["loads"].values()):
            if res and res.get("other_cpu_share") is not None:
                others.append(res["other_cpu_share"])
    if others:
        lines.append(f"Other processes used {100 * min(others):.0f}-{100 * max(others):.0f}% "
                     f"(median {100 * statistics.median(others):.0f}%) of the machine's CPU "
                     f"during the restarts; the whole benchmark took {result['wall_s']:.0f} s.")
    return "\n".join(lines)


# -- XADD with the AOF on ---------------------------------------------------------

MODES = [("off", "appendonly no"), ("everysec", "appendonly yes, appendfsync everysec"),
         ("always", "appendonly yes, appendfsync always")]
SHAPES = [(1, 1), (1, 8), (16, 1), (16, 8)]


def run_xadd(args, targets: list[Target], log: Log) -> dict:
    names = [t.name for t in targets]
    result: dict = {
        "id": "durability-xadd", "label": "XADD with the AOF on",
        "setup": ("redis-benchmark sends `XADD bench:xadd-pP-cC * sensor 17 temp 21.5`, as in "
                  "the `xadd-*` workloads (same calibration: about "
                  f"{args.seconds:g} s per run, median of {args.repeat} runs). The servers are "
                  "started for this benchmark, in fresh directories with `save \"\"` and "
                  "`auto-aof-rewrite-percentage 0` (no rewrite starts during a run): a pair "
                  "with `appendonly no` (reference), then a pair with `appendonly yes`, "
                  "measured with `appendfsync everysec` and then, after `CONFIG SET "
                  "appendfsync always`, with `always`. ops/CPU-s counts the server's CPU "
                  "(all its threads, e.g. the fsync thread). " + _machine_note(servers.NCPU)),
        "servers": {name: {} for name in names},
        "disk": _disk_note(),
    }
    wls = [xadd(p, c) for p, c in SHAPES]
    for mode, _ in MODES:
        if mode == "always":
            continue  # same servers as everysec
        appendonly = mode != "off"
        live: list[Target] = []
        started: list[servers.Server] = []
        try:
            for name in names:
                env = args.tidelog_env if name == "tidelog" else None
                srv = servers.Server(name, server_argv(args, name, "{port}", "{dir}", appendonly),
                                     env=env, ready_timeout=args.start_timeout)
                try:
                    srv.start()
                except servers.ServerError as exc:
                    result["servers"][name].setdefault("errors", {})[mode] = str(exc)
                    log(f"  {name:8s} durability-xadd      FAILED to start: {exc}")
                    continue
                started.append(srv)
                live.append(Target(name, srv, srv.client(timeout=args.probe_timeout), 0))
            for fsync in (["everysec", "always"] if appendonly else ["off"]):
                if fsync == "always":
                    for t in live:
                        try:
                            t.client.call("CONFIG", "SET", "appendfsync", "always")
                        except (resp.RespError, OSError) as exc:
                            result["servers"][t.name].setdefault("errors", {})[fsync] = str(exc)
                log(f"== durability-xadd: {dict(MODES)[fsync]}")
                for wl in wls:
                    recs = args.run_workload(args, live, wl)
                    for name, rec in recs.items():
                        for r in rec.get("runs", []):
                            r.pop("latency", None)
                        result["servers"][name].setdefault(fsync, {})[wl.id] = rec
                for t in live:
                    try:
                        info = resp.info_fields(t.client.call("INFO", "persistence"))
                        result["servers"][t.name].setdefault("info", {})[fsync] = {
                            k: v for k, v in info.items()
                            if k in ("aof_enabled", "aof_current_size", "aof_rewrites",
                                     "aof_delayed_fsync", "aof_last_write_status")}
                    except (resp.RespError, OSError, ValueError):
                        pass
        finally:
            for t in live:
                t.client.close()
            for srv in started:
                srv.stop()
    return result


def _disk_note() -> str | None:
    """The file system the temporary directories are on (fsync cost depends on it)."""
    tmp = os.path.realpath(tempfile.gettempdir())
    best = None
    try:
        with open("/proc/mounts", encoding="utf-8") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) < 3:
                    continue
                under = tmp == parts[1] or tmp.startswith(parts[1].rstrip("/") + "/")
                if under and (best is None or len(parts[1]) > len(best[1])):
                    best = parts
    except OSError:
        return None
    return f"{best[2]} on {best[0]}" if best else None


def render_xadd(result: dict) -> str:
    names = [x for x in ("redis", "tidelog") if x in result["servers"]]
    both = len(names) == 2
    lines = [f"### {result['label']} (`{result['id']}`)", "", result["setup"]
             + (f" The temporary directories are on {result['disk']}." if result.get("disk")
                else ""), ""]
    head = ["Persistence", "Pipeline", "Conns"]
    for metric in ("ops/s", "ops/CPU-s"):
        head += [f"{SERVER_NAMES[x]} {metric}" for x in names]
        if both:
            head.append("Tidelog/Redis")
    lines += ["| " + " | ".join(head) + " |", "|---|" + "|".join("---:" for _ in head[1:]) + "|"]
    others = []
    notes = []
    for mode, label in MODES:
        for p, c in SHAPES:
            wid = f"xadd-p{p}-c{c}"
            recs = [result["servers"][x].get(mode, {}).get(wid) for x in names]
            row = [label, str(p), str(c)]
            for key in ("rps", "ops_per_server_cpu_s"):
                vals = []
                for _name, r in zip(names, recs):
                    if r is None:
                        row.append("-")
                        vals.append(None)
                    elif "error" in r:
                        row.append("failed")
                        vals.append(None)
                    else:
                        row.append(_fmt(r.get(key)) + (" (!)" if r.get("problems") else ""))
                        vals.append(r.get(key))
                if both:
                    row.append(_ratio(vals[1], vals[0], 3))
            lines.append("| " + " | ".join(row) + " |")
            for x, r in zip(names, recs):
                if r and r.get("other_cpu_share") is not None:
                    others.append(r["other_cpu_share"])
                if r and "error" in r:
                    notes.append(f"- {SERVER_NAMES[x]}, {label}, {wid}: "
                                 f"{r['error'].splitlines()[0][:300]}")
                elif r and r.get("problems"):
                    notes.append(f"- {SERVER_NAMES[x]}, {label}, {wid}: (!) "
                                 + "; ".join(r["problems"]))
    for x in names:
        for mode, err in result["servers"][x].get("errors", {}).items():
            notes.append(f"- {SERVER_NAMES[x]}, {mode}: {err.splitlines()[0][:300]}")
    lines.append("")
    if others:
        lines.append(f"Other processes used {100 * statistics.median(others):.0f}% of the "
                     f"machine's CPU during a typical run (median; "
                     f"{100 * min(others):.0f}-{100 * max(others):.0f}%).")
    if notes:
        lines += ["", "Notes:"] + notes
    return "\n".join(lines)


SCENARIOS: list[Scenario] = [
    Scenario("durability-restart", "Restart time",
             "fill N entries; time the restart from the AOF, rewritten AOFs and dump.rdb",
             run_restart, render_restart),
    Scenario("durability-xadd", "XADD with the AOF on",
             "XADD at depths 1/16, 1/8 conns: appendonly no, everysec, always",
             run_xadd, render_xadd, driver="redis-benchmark"),
]
