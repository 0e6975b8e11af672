#!/usr/bin/env python3
"""Scaling out: pipelined XADD against a cluster of 1 and of 2 primaries,
Tidelog and redis-server side by side in one run.

    .venv/bin/python bench/scale.py                   # 1 and 2 nodes, 5 rounds
    .venv/bin/python bench/scale.py --requests 100000 --rounds 1   # a quick look

For each kind of server, a Redis Cluster of each size in ``--nodes`` (no
replicas, no persistence, loopback):

- Tidelog through its launcher, ``tidelog-server --cluster-local N --port P
  --dir D`` (node i pinned to usable core ``i mod cores``), as a user starts
  it;
- redis-server: N nodes with ``cluster-enabled yes``, pinned the same way,
  joined with the steps ``redis-cli --cluster create`` takes (CLUSTER
  ADDSLOTSRANGE with redis-cli's split, SET-CONFIG-EPOCH, MEET).

Every cluster is started first, then the runs alternate between them, round
by round (the order turns each round), so a burst of other load lands on
every one.  A run is one ``redis-benchmark --cluster`` with ``-n`` requests of
``XADD s:{tag} * sensor 17 temp 21.5`` (``-P``, ``-c``, no ``-r``):
redis-benchmark spreads its connections over the masters and replaces
``{tag}`` by a hash tag of a slot the connection's node owns, so every XADD
goes to the right node; without ``-r`` the tag stays put, one stream a node.
redis-benchmark 7.0 wants at least two nodes for ``--cluster``: a one-node
cluster gets the same command without it, and ``{tag}`` is then a plain hash
tag, one stream.  So every node gets the same load: pipelined XADDs to one
stream.  A warm-up run of a quarter of the size comes first, not counted.
``--standalone`` adds one server of each kind without cluster mode (pinned
to the first core, the same command), to show what cluster mode costs.
``--drain N`` adds, after each XADD run, group-drain's load (bench/groups.py)
spread over the nodes: a stream on each node (a hash tag in its slots) gets
its share of N preloaded messages, and two client processes of two consumers
each (on the one node, or one process a node for two) read ``XREADGROUP ...
COUNT 100`` and XACK each batch with the next read, all started by one
signal: messages/s until the last consumer is done, the nodes' CPU per
message, and a check that every message was consumed and acknowledged once.
``--latency RATE`` adds group-latency's load (bench/groups.py) spread over the
nodes: a stream with a group on each node, one producer process a node
sending RATE / nodes XADDs a second on a fixed schedule (open loop, each
message stamped with its send time), the ten consumers split over the nodes in
two client processes (``XREADGROUP ... COUNT 10 BLOCK 1000`` + XACK): p50, p99 and max of receive
time minus send time, all nodes together, and a check that each message was
consumed and acknowledged once.
Each run: aggregate ops/s (redis-benchmark's figure), and the server CPU per
operation, the CPU seconds every node used (from the kernel's per-process CPU
clock) summed.  Per configuration the median of the rounds;
then 2 nodes / 1 node for each kind, and Tidelog/Redis.  The XADD calls each
node counted (INFO commandstats) are checked against the requests.

Prints a markdown table (progress on stderr) and writes the raw figures as
JSON (default: bench/results/<date>-scale.json).  Every process it starts is
stopped at the end, whatever happens; every wait is bounded.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import io
import json
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from array import array
from dataclasses import dataclass, field
from pathlib import Path

import cluster as bench_cluster
import groups
import resp
import servers
from workloads import ENTRY

sys.path.insert(0, str(servers.REPO / "src"))
from tidelog.keyslot import key_slot  # noqa: E402
from tidelog.server.local_cluster import split_slots  # noqa: E402

KINDS = ("redis", "tidelog")
NAMES = {"redis": "Redis", "tidelog": "Tidelog"}
KEY = "s:{tag}"      # --cluster: a tag of a slot of the node; else a plain hash tag
READY_S = 120.0


# -- the command line --------------------------------------------------------------

def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", default="1,2",
                    help="cluster sizes, comma-separated (%(default)s)")
    ap.add_argument("--requests", "-n", type=int, default=400_000,
                    help="XADDs per run, all nodes together (%(default)s)")
    ap.add_argument("--clients", "-c", type=int, default=16,
                    help="redis-benchmark connections, spread over the nodes (%(default)s)")
    ap.add_argument("--pipeline", "-P", type=int, default=16,
                    help="requests per pipeline (%(default)s)")
    ap.add_argument("--threads", type=int, default=0,
                    help="redis-benchmark --threads (0: one thread, its default)")
    ap.add_argument("--rounds", type=int, default=5, help="measured rounds (%(default)s)")
    ap.add_argument("--drain", type=int, default=0, metavar="N",
                    help="also drain N preloaded messages a round: a stream a node, "
                         "2 client processes of 2 consumers (0: not run, the default)")
    ap.add_argument("--latency", type=float, default=0, metavar="RATE",
                    help="also group-latency's load a round at RATE messages/s in all, "
                         "spread over the nodes (0: not run, the default)")
    ap.add_argument("--latency-seconds", type=float, default=10.0,
                    help="how long the producers of --latency run (%(default)s)")
    ap.add_argument("--standalone", action="store_true",
                    help="also one server of each kind without cluster mode, for reference")
    ap.add_argument("--only", choices=KINDS, help="one kind of server only")
    ap.add_argument("--no-pin", action="store_true",
                    help="pin nothing to cores (Tidelog's launcher pins its nodes all the same)")
    ap.add_argument("--timeout", type=float, default=300.0,
                    help="seconds one redis-benchmark run may take (%(default)s)")
    ap.add_argument("--tidelog-cmd", help="command that starts Tidelog, as for bench/run.py")
    ap.add_argument("--redis-benchmark", default="redis-benchmark")
    ap.add_argument("--json", type=Path, help="where to write the raw results")
    args = ap.parse_args(argv)
    try:
        args.sizes = sorted({int(x) for x in args.nodes.split(",") if x.strip()})
    except ValueError:
        ap.error(f"--nodes: not a list of numbers: {args.nodes!r}")
    if not args.sizes or args.sizes[0] < 1:
        ap.error("--nodes: sizes of at least 1")
    if args.drain < 0:
        ap.error("--drain: 0 or more")
    if args.latency < 0 or args.latency_seconds <= 0:
        ap.error("--latency: 0 or more; --latency-seconds: more than 0")
    for name in ("requests", "clients", "pipeline", "rounds"):
        if getattr(args, name) < 1:
            ap.error(f"--{name}: at least 1")
    if args.clients < args.sizes[-1]:
        ap.error(f"--clients: at least one connection per node ({args.sizes[-1]})")
    args.kinds = [args.only] if args.only else list(KINDS)
    if args.standalone:
        args.sizes.insert(0, 0)   # size 0: a server without cluster mode
    return args


def bench_argv(args: argparse.Namespace, port: int | str, requests: int,
               nodes: int) -> list[str]:
    """The redis-benchmark command line of one run against the cluster at ``port``.

    redis-benchmark 7.0 refuses ``--cluster`` with one node ("Invalid cluster:
    1 node(s)"), so a one-node cluster gets the same command without it."""
    argv = [args.redis_benchmark, "-h", "127.0.0.1", "-p", str(port),
            "-c", str(args.clients), "-n", str(requests), "-P", str(args.pipeline), "--csv"]
    if args.threads:
        argv += ["--threads", str(args.threads)]
    if nodes > 1:
        argv.insert(1, "--cluster")
    return argv + ["XADD", KEY, "*", *ENTRY]


def parse_rps(stdout: str) -> float | None:
    """Requests per second from redis-benchmark's --csv output (its last data row);
    in cluster mode it prints the cluster's nodes first, which are skipped."""
    rps = None
    for fields in csv.reader(io.StringIO(stdout)):
        if len(fields) >= 2 and fields[0] != "test":
            try:
                rps = float(fields[1])
            except ValueError:
                continue
    return rps


# -- clusters ---------------------------------------------------------------------

def free_range(count: int, tries: int = 500) -> int:
    """A port P with P .. P+count-1 and their bus ports (+10000) all free."""
    for _ in range(tries):
        first = bench_cluster.free_pair()
        ports = [p for i in range(count) for p in (first + i, first + i + 10000)]
        if all(_bindable(p) for p in ports):
            return first
    raise RuntimeError(f"no free range of {count} port pairs")


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _call(port: int, *argv: str):
    with resp.Client(port, timeout=10) as c:
        value = c.call(*argv)
    return value.decode() if isinstance(value, bytes) else value


def _info(port: int, section: str) -> dict[str, str]:
    out = {}
    for line in _call(port, "INFO", section).splitlines():
        name, sep, value = line.partition(":")
        if sep:
            out[name] = value.strip()
    return out


def xadd_calls(port: int) -> int:
    """XADD calls the node has counted (INFO commandstats; 0 before the first)."""
    stat = _info(port, "commandstats").get("cmdstat_xadd", "")
    for part in stat.split(","):
        name, _, value = part.partition("=")
        if name == "calls":
            return int(value)
    return 0


def label(kind: str, size: int) -> str:
    """A configuration's name in the results: ``tidelog-2``, ``redis-standalone``."""
    return f"{kind}-{size or 'standalone'}"


@dataclass
class Cluster:
    """One running cluster: its nodes' ports and pids, and how to stop it."""
    kind: str
    size: int
    ports: list[int] = field(default_factory=list)
    pids: list[int] = field(default_factory=list)
    launcher: subprocess.Popen | None = None          # Tidelog: the --cluster-local process
    nodes: list[servers.Server] = field(default_factory=list)  # redis: one Server a node
    tmp: str = ""
    _clocks: list = field(default_factory=list)

    @property
    def label(self) -> str:
        return label(self.kind, self.size)

    def alive(self) -> bool:
        if self.launcher is not None and self.launcher.poll() is not None:
            return False
        return all(_pid_alive(p) for p in self.pids)

    def cpu_seconds(self) -> float:
        """CPU seconds the nodes have used, summed (not the launcher's)."""
        if not self._clocks:
            self._clocks = [servers.cpu_clock(p) for p in self.pids]
        total = 0.0
        for pid, clock in zip(self.pids, self._clocks, strict=True):
            total += clock() if clock is not None else servers.cpu_seconds(pid)
        return total

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
        proc, self.launcher = self.launcher, None
        if proc is not None:
            servers._signal_group(proc.pid, signal.SIGTERM)    # the launcher stops its nodes
            try:
                proc.wait(90)
            except subprocess.TimeoutExpired:
                servers._signal_group(proc.pid, signal.SIGKILL)
                proc.wait(10)
            servers._signal_group(proc.pid, signal.SIGKILL)    # anything of the group left over
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = ""


def _pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _all_ok(ports: list[int]) -> bool:
    try:
        return all("cluster_state:ok" in _call(p, "CLUSTER", "INFO") for p in ports)
    except (OSError, resp.RespError, ValueError):
        return False


def start_tidelog(size: int, base: list[str], env: dict[str, str]) -> Cluster:
    """``tidelog-server --cluster-local size`` on a free range; wait until ok."""
    cl = Cluster("tidelog", size)
    cl.tmp = tempfile.mkdtemp(prefix=f"bench-scale-tidelog-{size}-")
    first = free_range(size)
    argv = base + ["--cluster-local", str(size), "--port", str(first), "--dir", cl.tmp,
                   "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    log_file = open(os.path.join(cl.tmp, "launcher.log"), "wb")  # noqa: SIM115 - closed below
    try:
        cl.launcher = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log_file,
                                       stderr=subprocess.STDOUT, env=env, cwd=cl.tmp,
                                       start_new_session=True)
    finally:
        log_file.close()
    cl.ports = [first + i for i in range(size)]
    try:
        deadline = time.monotonic() + READY_S
        while not _all_ok(cl.ports):
            if cl.launcher.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"tidelog --cluster-local {size} did not come up:\n"
                                   + _tail(os.path.join(cl.tmp, "launcher.log")))
            time.sleep(0.2)
        cl.pids = [int(_info(p, "server")["process_id"]) for p in cl.ports]
    except BaseException:
        cl.stop()
        raise
    return cl


def _tail(path: str, lines: int = 20) -> str:
    try:
        with open(path, "rb") as fh:
            text = fh.read()[-8000:].decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def start_standalone(kind: str, base: list[str], env: dict[str, str] | None,
                     pin: bool) -> Cluster:
    """One server without cluster mode, pinned to the first core as a one-node
    cluster's node is."""
    cl = Cluster(kind, 0)
    argv = (servers.redis_argv() if kind == "redis" else
            servers.with_port_and_dir(base) + ["--bind", "127.0.0.1", "--save", "",
                                               "--appendonly", "no"])
    node = servers.Server(f"scale-{kind}-standalone", argv, env if kind == "tidelog" else None)
    cl.nodes.append(node)
    try:
        node.start()
        if pin:
            os.sched_setaffinity(node.pid, {sorted(os.sched_getaffinity(0))[0]})
        cl.ports, cl.pids = [node.port], [node.pid]
    except BaseException:
        cl.stop()
        raise
    return cl


def start_redis(size: int, pin: bool) -> Cluster:
    """``size`` redis-server nodes made one cluster as redis-cli would; pinned
    to cores as Tidelog's launcher pins its nodes."""
    cl = Cluster("redis", size)
    argv = bench_cluster.cluster_argv([servers.redis_argv()[0]], 5000)
    cores = sorted(os.sched_getaffinity(0)) if pin else []
    try:
        for i in range(size):
            node = servers.Server(f"scale-redis-{size}-{i}", argv,
                                  pick_port=bench_cluster.free_pair)
            cl.nodes.append(node)
            node.start()
            if cores:
                os.sched_setaffinity(node.pid, {cores[i % len(cores)]})
        for i, (node, (lo, hi)) in enumerate(zip(cl.nodes, split_slots(size), strict=True)):
            bench_cluster.call(node, "CLUSTER", "ADDSLOTSRANGE", str(lo), str(hi))
            bench_cluster.call(node, "CLUSTER", "SET-CONFIG-EPOCH", str(i + 1))
        for node in cl.nodes[1:]:
            bench_cluster.call(node, "CLUSTER", "MEET", "127.0.0.1", str(cl.nodes[0].port))
        bench_cluster.wait("the cluster agrees", lambda: bench_cluster.agreed(cl.nodes),
                           READY_S)
        cl.ports = [n.port for n in cl.nodes]
        cl.pids = [n.pid for n in cl.nodes]
    except BaseException:
        cl.stop()
        raise
    return cl


# -- one run ----------------------------------------------------------------------

def run_once(args: argparse.Namespace, cl: Cluster, requests: int) -> dict:
    """One redis-benchmark run against ``cl``: ops/s, server CPU, per-node XADDs."""
    calls0 = [xadd_calls(p) for p in cl.ports]
    argv = bench_argv(args, cl.ports[0], requests, cl.size)
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy0 = servers.machine_busy_seconds()
    cpu0 = cl.cpu_seconds()
    started = time.monotonic()
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=args.timeout,
                             stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"redis-benchmark did not finish within {args.timeout:.0f} s") from exc
    wall = time.monotonic() - started
    cpu = cl.cpu_seconds() - cpu0
    busy1 = servers.machine_busy_seconds()
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    rps = parse_rps(out.stdout)
    if out.returncode != 0 or rps is None or not cl.alive():
        detail = (out.stderr.strip() or out.stdout.strip())[-600:]
        raise RuntimeError(f"{cl.label}: redis-benchmark exit status {out.returncode}"
                           f"{'' if cl.alive() else ' (a node exited)'}: {detail}")
    calls = [xadd_calls(p) - c for p, c in zip(cl.ports, calls0, strict=True)]
    keys = [_call(p, "DBSIZE") for p in cl.ports]
    client_cpu = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
    other = None
    if busy0 is not None and busy1 is not None:
        other = max(0.0, (busy1 - busy0) - cpu - client_cpu) / (wall * servers.NCPU)
    rec = {"requests": requests, "rps": rps, "wall_s": round(wall, 3),
           "server_cpu_s": round(cpu, 4),
           "server_cpu_us_per_op": round(1e6 * cpu / requests, 3),
           "ops_per_server_cpu_s": round(requests / cpu) if cpu > 0 else None,
           "client_cpu_s": round(client_cpu, 3),
           "xadd_calls_per_node": calls, "keys_per_node": keys,
           "other_cpu_share": None if other is None else round(other, 3),
           "loadavg": servers.loadavg()}
    if sum(calls) < requests:
        rec["problem"] = f"the nodes counted {sum(calls)} XADDs, fewer than {requests}"
    warnings = [line for line in out.stderr.splitlines() if line.strip()]
    if warnings:
        rec["warnings"] = warnings[:5]
    return rec


# -- drain: consumer groups over the nodes ----------------------------------------

DRAIN_PROCS = 2          # client processes, whatever the size: the same client CPU
DRAIN_CONSUMERS = 2      # consumers (connections) in each


def node_keys(size: int, prefix: str = "drain") -> list[str]:
    """One stream key per node, ``prefix:{tag}`` hashing into that node's
    share of the slots as redis-cli splits them (both kinds split so)."""
    keys = []
    for lo, hi in split_slots(max(size, 1)):
        tag = 0
        while not lo <= key_slot(f"{prefix}:{{{tag}}}".encode()) <= hi:
            tag += 1
        keys.append(f"{prefix}:{{{tag}}}")
    return keys


def drain_plan(size: int) -> list[tuple[int, list[str]]]:
    """(node index, consumer names) for each client process: DRAIN_PROCS
    processes spread over the nodes (one node: all on it)."""
    nodes = max(size, 1)
    per_node = max(1, DRAIN_PROCS // nodes)
    return [(i, [f"n{i}p{j}c{k}" for k in range(DRAIN_CONSUMERS)])
            for i in range(nodes) for j in range(per_node)]


def run_drain(cl: Cluster, messages: int, timeout: float = 300.0) -> dict:
    """Preload ``messages`` (XADD *, pipelined) spread evenly over a stream on
    each node, then drain them with the consumers of ``drain_plan`` (XREADGROUP
    COUNT 100, XACK in the same write as the next read, as bench/run.py's
    group-drain does), all started by one signal: messages/s over the slowest
    node, and the nodes' CPU per message."""
    keys = node_keys(cl.size)
    share = messages // len(keys)
    for port, key in zip(cl.ports, keys, strict=True):
        with resp.Client(port, timeout=60) as c:
            c.call("DEL", key)
            for first in range(0, share, 1000):
                cmds = [("XADD", key, "*", *ENTRY) for _ in range(min(1000, share - first))]
                for reply in c.pipeline(cmds):
                    if isinstance(reply, resp.RespError):
                        raise RuntimeError(f"{cl.label}: preload: XADD replied -{reply}")
            c.call("XGROUP", "CREATE", key, "g", "0")
    workers = groups.Workers()
    go = groups._MP.Event()
    try:
        readies = []
        stop_ns = time.monotonic_ns() + int(timeout * 1e9)
        for node, names in drain_plan(cl.size):
            ready = groups._MP.Event()
            readies.append(ready)
            workers.start(groups._drain_consumers, cl.ports[node], keys[node], "g", names,
                          share // 100 + 10, stop_ns, ready, go)
        for ready in readies:
            if not ready.wait(30):
                raise RuntimeError(f"{cl.label}: the consumer processes did not connect")
        cpu0 = cl.cpu_seconds()
        start_ns = time.monotonic_ns()
        go.set()
        procs = workers.collect_all(time.monotonic() + timeout + 40)
        cpu = cl.cpu_seconds() - cpu0
    finally:
        workers.close()
    consumers = [r for p in procs for r in p["consumers"]]
    ids = sum(len(r["ids"].split(b" ")) if r["ids"] else 0 for r in consumers)
    acked = sum(r["acked"] for r in consumers)
    wall = (max(r["end_ns"] for r in consumers) - start_ns) / 1e9
    pending = sum(_call(p, "XPENDING", k, "g")[0] for p, k in zip(cl.ports, keys, strict=True))
    errors = [e for r in consumers for e in r["errors"]]
    for port, key in zip(cl.ports, keys, strict=True):
        _call(port, "DEL", key)
    rec = {"messages": share * len(keys), "consumed": ids, "acked": acked,
           "pending_at_end": pending, "errors": errors[:5],
           "rps": ids / wall if wall > 0 else None, "wall_s": round(wall, 3),
           "server_cpu_s": round(cpu, 4),
           "server_cpu_us_per_op": round(1e6 * cpu / ids, 3) if ids else None,
           "client_cpu_s": round(sum(p["cpu_s"] for p in procs), 3),
           "loadavg": servers.loadavg()}
    if errors or ids != rec["messages"] or acked != ids or pending:
        rec["problem"] = (f"consumed {ids}, acked {acked} of {rec['messages']}, "
                          f"{pending} pending; {errors[:1]}")
    return rec


# -- latency: group-latency's load spread over the nodes ----------------------------

LATENCY_CONSUMERS = 10   # consumers in all, as group-latency: split over the nodes
LATENCY_PRODUCERS = 2    # producer connections a node
LATENCY_PROCS = 2        # consumer processes, whatever the size (group-latency's two)
LATENCY_DRAIN_S = 30.0   # after the producers stop, at most this to drain


def run_latency(cl: Cluster, rate: float, seconds: float) -> dict:
    """group-latency (bench/groups.py) over the nodes: a stream on each node
    (a hash tag in its slots) with a group, a producer process a node sending
    ``rate / nodes`` XADDs a second (open loop, each message stamped with its
    send time), and the ten consumers of group-latency split over the nodes
    in two client processes (one a node for two), as group-latency's, looping
    ``XREADGROUP ... COUNT 10 BLOCK 1000``
    and XACK.  Latency is receive time minus send time of every message, all
    nodes' messages together; the record also checks that each was consumed
    and acknowledged exactly once."""
    keys = node_keys(cl.size, "latency")
    nodes = len(keys)
    share = rate / nodes
    total = round(share * seconds)
    for port, key in zip(cl.ports, keys, strict=True):
        _call(port, "DEL", key)
        _call(port, "XGROUP", "CREATE", key, "g", "$", "MKSTREAM")
    names = [f"c{i}" for i in range(LATENCY_CONSUMERS)]
    start_ns = time.monotonic_ns() + 1_500_000_000
    produce_stop_ns = start_ns + int((2 * seconds + 5) * 1e9)
    consume_stop_ns = produce_stop_ns + int(LATENCY_DRAIN_S * 1e9)
    workers = groups.Workers()
    done = groups._MP.Event()
    try:
        readies, consumer_idx, consumer_node = [], [], []
        per_node = max(1, LATENCY_PROCS // nodes)
        for i in range(nodes):
            mine = names[i::nodes]
            for part in (mine[j::per_node] for j in range(per_node)):
                ready = groups._MP.Event()
                readies.append(ready)
                consumer_node.append(i)
                consumer_idx.append(workers.start(
                    groups._latency_consumers, cl.ports[i], keys[i], "g", part,
                    consume_stop_ns, total + int(consume_stop_ns - start_ns) // 10**9 + 100,
                    ready, done))
        for ready in readies:
            if not ready.wait(30):
                raise RuntimeError(f"{cl.label}: the consumer processes did not connect")
        producer_idx = [workers.start(groups._produce, cl.ports[i], keys[i], share, total,
                                      LATENCY_PRODUCERS, start_ns, produce_stop_ns,
                                      max(100, int(share)))
                        for i in range(nodes)]
        wait = (start_ns - time.monotonic_ns()) / 1e9
        if wait > 0:
            time.sleep(wait)
        cpu0 = cl.cpu_seconds()
        deadline = time.monotonic() + (consume_stop_ns - time.monotonic_ns()) / 1e9 + 40
        prods = [workers.collect(i, deadline) for i in producer_idx]
        done.set()
        cons = [workers.collect(i, deadline) for i in consumer_idx]
        cpu = cl.cpu_seconds() - cpu0
    finally:
        workers.close()
    lat = array("q")
    errors: list[str] = []
    problems: list[str] = []
    consumed = acked = 0
    for i, prod in enumerate(prods):
        seqs = array("q")
        for node, proc in zip(consumer_node, cons, strict=True):
            if node != i:
                continue
            for r in proc["consumers"]:
                lat.frombytes(r["lat_ns"])
                seqs.frombytes(r["seqs"])
                acked += r["acked"]
                errors += r["errors"]
        consumed += len(seqs)
        if len(set(seqs)) != len(seqs) or len(seqs) != prod["ok"] or prod["errors"]:
            problems.append(f"node {i}: {prod['ok']} produced, {len(seqs)} consumed, "
                            f"{len(seqs) - len(set(seqs))} twice, {prod['errors']} XADD errors")
    pending = sum(_call(p, "XPENDING", k, "g")[0] for p, k in zip(cl.ports, keys, strict=True))
    for port, key in zip(cl.ports, keys, strict=True):
        _call(port, "DEL", key)
    ordered = sorted(lat)
    produced = sum(p["ok"] for p in prods)
    span_s = max((p["last_send_ns"] - p["start_ns"]) / 1e9 for p in prods) + 1 / share
    rec = {"target_rate": rate, "seconds": seconds, "produced": produced,
           "achieved_rate": produced / span_s if produced else 0.0,
           "consumed": consumed, "acked": acked, "pending_at_end": pending,
           "errors": errors[:5],
           "latency_ms": {"p50": groups._ms(groups._percentile(ordered, 0.5)),
                          "p99": groups._ms(groups._percentile(ordered, 0.99)),
                          "p99.9": groups._ms(groups._percentile(ordered, 0.999)),
                          "max": groups._ms(ordered[-1] if ordered else None)},
           "server_cpu_s": round(cpu, 4),
           "server_cpu_us_per_op": round(1e6 * cpu / consumed, 3) if consumed else None,
           "client_cpu_s": round(sum(p["cpu_s"] for p in [*prods, *cons]), 3),
           "loadavg": servers.loadavg()}
    if problems or errors or pending or acked != consumed:
        rec["problem"] = "; ".join(problems + [f"{pending} pending, {acked} acked of "
                                               f"{consumed}"] + errors[:1])
    return rec


def summarize_latency(runs: dict[str, list[dict]]) -> dict[str, dict]:
    """Per configuration: the medians of its rounds' p50, p99 and max."""
    out = {}
    for name, recs in runs.items():
        good = [r for r in recs if "latency_ms" in r and "problem" not in r]
        out[name] = {"runs": len(good)}
        if good:
            for q in ("p50", "p99", "p99.9", "max"):
                vals = [r["latency_ms"][q] for r in good if r["latency_ms"][q] is not None]
                out[name][q] = round(statistics.median(vals), 3) if vals else None
            out[name]["server_cpu_us_per_op"] = round(statistics.median(
                r["server_cpu_us_per_op"] for r in good), 3)
    return out


def render_latency(summary: dict[str, dict], sizes: list[int], kinds: list[str]) -> str:
    head = ["primaries"] + [f"{NAMES[k]} p50 / p99 / max ms" for k in kinds]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for n in sizes:
        cells = [str(n) if n else "standalone (no cluster mode)"]
        for k in kinds:
            s = summary.get(label(k, n), {})
            cells.append(f"{s['p50']} / {s['p99']} / {s['max']}" if s.get("runs") else "failed")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# -- summary and table ------------------------------------------------------------

def summarize(runs: dict[str, list[dict]]) -> dict[str, dict]:
    """Per configuration ("<kind>-<size>"): the medians of its runs."""
    out = {}
    for label, recs in runs.items():
        good = [r for r in recs if "rps" in r and "problem" not in r]
        if not good:
            out[label] = {"runs": 0}
            continue
        cpus = [r["server_cpu_us_per_op"] for r in good]
        out[label] = {"runs": len(good),
                      "rps": round(statistics.median(r["rps"] for r in good)),
                      "rps_all": [round(r["rps"]) for r in good],
                      "server_cpu_us_per_op": round(statistics.median(cpus), 3),
                      "server_cpu_us_per_op_all": cpus}
    return out


def _ratio(a, b, digits: int = 2) -> str:
    return f"{a / b:.{digits}f}" if a and b else "-"


def render(summary: dict[str, dict], sizes: list[int], kinds: list[str]) -> str:
    """The markdown table: one row per cluster size, per kind ops/s and CPU per op,
    then (for two kinds) Tidelog/Redis; then the scaling of each kind."""
    both = len(kinds) == 2
    head = ["primaries"]
    for k in kinds:
        head += [f"{NAMES[k]} ops/s", f"{NAMES[k]} server CPU µs/op"]
    if both:
        head += ["Tidelog/Redis ops/s", "Tidelog/Redis ops per CPU-s"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for n in sizes:
        cells = [str(n) if n else "standalone (no cluster mode)"]
        got = {k: summary.get(label(k, n), {}) for k in kinds}
        for k in kinds:
            s = got[k]
            cells += ([f"{s['rps']:,}", f"{s['server_cpu_us_per_op']:.2f}"] if s.get("runs")
                      else ["failed", "failed"])
        if both:
            r, t = got["redis"], got["tidelog"]
            cells.append(_ratio(t.get("rps"), r.get("rps"), 3))
            cells.append(_ratio(r.get("server_cpu_us_per_op"), t.get("server_cpu_us_per_op"), 3))
        lines.append("| " + " | ".join(cells) + " |")
    clustered = [n for n in sizes if n]
    if len(clustered) >= 2:
        lo, hi = clustered[0], clustered[-1]
        lines.append("")
        for k in kinds:
            a, b = summary.get(label(k, lo), {}), summary.get(label(k, hi), {})
            lines.append(f"{NAMES[k]}: {hi} primaries / {lo}: "
                         f"{_ratio(b.get('rps'), a.get('rps'))}x the ops/s, "
                         f"{_ratio(b.get('server_cpu_us_per_op'), a.get('server_cpu_us_per_op'))}x "
                         "the server CPU per op.")
    return "\n".join(lines)


def _program(command: str | None) -> str | None:
    """The program's name only: no path of the machine goes into the results."""
    return Path(command.split()[0]).name if command else None


# -- main -------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    base, env = servers.tidelog_command(servers.REPO, args.tidelog_cmd)
    clusters: list[Cluster] = []
    runs: dict[str, list[dict]] = {}
    drains: dict[str, list[dict]] = {}
    latencies: dict[str, list[dict]] = {}
    started_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    load_before = servers.loadavg()
    try:
        for size in args.sizes:
            for kind in args.kinds:
                servers.log(f"starting {label(kind, size)}")
                if size == 0:
                    clusters.append(start_standalone(kind, base, env, not args.no_pin))
                elif kind == "tidelog":
                    clusters.append(start_tidelog(size, base, env))
                else:
                    clusters.append(start_redis(size, not args.no_pin))
        for cl in clusters:  # a warm-up run each, not counted
            run_once(args, cl, max(1000, args.requests // 4))
        for rnd in range(args.rounds):
            shift = rnd % len(clusters)
            for cl in clusters[shift:] + clusters[:shift]:
                try:
                    rec = run_once(args, cl, args.requests)
                except RuntimeError as exc:
                    rec = {"error": str(exc)}
                rec["round"] = rnd + 1
                runs.setdefault(cl.label, []).append(rec)
                servers.log(f"round {rnd + 1} {cl.label:10s} "
                            + (rec["error"] if "error" in rec else
                               f"{rec['rps']:>12,.0f} ops/s  {rec['server_cpu_us_per_op']:7.2f} "
                               f"CPU µs/op  XADDs per node {rec['xadd_calls_per_node']}  "
                               f"load {rec['loadavg']}"))
                if args.drain:
                    try:
                        drec = run_drain(cl, args.drain)
                    except (RuntimeError, groups.ScenarioError, OSError) as exc:
                        drec = {"error": str(exc)}
                    drec["round"] = rnd + 1
                    drains.setdefault(cl.label, []).append(drec)
                    servers.log(f"round {rnd + 1} {cl.label:10s} drain "
                                + (drec["error"] if "error" in drec else
                                   f"{drec['rps']:>10,.0f} msg/s  "
                                   f"{drec['server_cpu_us_per_op']:7.2f} CPU µs/msg"
                                   + (f"  PROBLEM {drec['problem']}" if "problem" in drec
                                      else "")))
                if args.latency:
                    try:
                        lrec = run_latency(cl, args.latency, args.latency_seconds)
                    except (RuntimeError, groups.ScenarioError, OSError) as exc:
                        lrec = {"error": str(exc)}
                    lrec["round"] = rnd + 1
                    latencies.setdefault(cl.label, []).append(lrec)
                    servers.log(f"round {rnd + 1} {cl.label:10s} latency "
                                + (lrec["error"] if "error" in lrec else
                                   f"{lrec['achieved_rate']:>9,.0f} msg/s  p50 "
                                   f"{lrec['latency_ms']['p50']} p99 {lrec['latency_ms']['p99']} "
                                   f"max {lrec['latency_ms']['max']} ms"
                                   + (f"  PROBLEM {lrec['problem']}" if "problem" in lrec
                                      else "")))
    finally:
        for cl in clusters:
            cl.stop()
    summary = summarize(runs)
    table = render(summary, args.sizes, args.kinds)
    print(table)
    drain_summary = summarize(drains)
    if args.drain:
        table += ("\n\nDrain (" + f"{args.drain:,}" + " messages a round; ops = messages):\n\n"
                  + render(drain_summary, args.sizes, args.kinds))
        print(table[table.index("\n\nDrain"):])
    latency_summary = summarize_latency(latencies)
    if args.latency:
        part = (f"\n\nLatency ({args.latency:,.0f} messages/s in all for "
                f"{args.latency_seconds:g} s a round, receive time - send time):\n\n"
                + render_latency(latency_summary, args.sizes, args.kinds))
        table += part
        print(part)
    shown = {k: v for k, v in vars(args).items() if k not in ("json", "sizes", "kinds")}
    shown["tidelog_cmd"] = _program(args.tidelog_cmd)
    shown["redis_benchmark"] = _program(args.redis_benchmark)
    report = {"date": started_at, "machine": servers.machine_info(),
              "loadavg_before": load_before, "loadavg_after": servers.loadavg(),
              "args": shown,
              "commands": {str(n or "standalone"): " ".join(bench_argv(args, "PORT", args.requests, n))
                           for n in args.sizes},
              "runs": runs, "summary": summary, "drains": drains,
              "drain_summary": drain_summary, "latencies": latencies,
              "latency_summary": latency_summary, "table": table}
    path = args.json or (servers.REPO / "bench" / "results"
                         / f"{dt.date.today().isoformat()}-scale.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    servers.log(f"raw results: {path}")
    return 0 if all(s.get("runs") for s in [*summary.values(), *drain_summary.values(),
                                            *latency_summary.values()]) else 1


if __name__ == "__main__":
    sys.exit(main())
