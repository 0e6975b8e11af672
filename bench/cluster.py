#!/usr/bin/env python3
"""Redis Cluster side by side: a cluster of Tidelog nodes and one of
redis-server nodes, measured the same way in one run.

    python bench/cluster.py                    # 6 nodes (3 masters, 3 replicas) each
    python bench/cluster.py --only tidelog --idle 5

For each kind of server (every node started with ``cluster-enabled yes``,
on a loopback port whose bus port, +10000, is free too):

- **formation**: ``redis-cli --cluster create --cluster-replicas 1`` until
  every node says ``cluster_state:ok`` and every CLUSTER NODES agrees
  (wall seconds);
- **idle bus**: the CPU the nodes use over ``--idle`` seconds with no
  client at all, only the bus (per node, in % of one core);
- **reshard**: ``--keys`` keys spread over every slot, then
  ``redis-cli --cluster reshard`` of ``--slots`` slots (with their keys)
  from one master to another (wall seconds, and per 1000 slots);
- **failover**: ``kill -9`` of a master, until its replica is the master
  of its slots in every other node's CLUSTER NODES and every one says
  ``cluster_state:ok`` (wall seconds, with ``--node-timeout`` as given).

Prints a markdown table (progress on stderr) and writes the raw figures as
JSON (default: bench/results/<date>-cluster.json).  Every server is stopped
at the end, whatever happens; every wait is bounded.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import resp
import servers

sys.path.insert(0, str(servers.REPO / "src"))
from tidelog.keyslot import key_slot  # noqa: E402

WAIT_S = 60.0


def free_pair() -> int:
    """A client port whose bus port (+10000) is free too."""
    for _ in range(500):
        port = random.randint(20000, 30000)
        free = True
        for p in (port, port + 10000):
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", p))
                except OSError:
                    free = False
        if free:
            return port
    raise RuntimeError("no free port pair")


def cluster_argv(base: list[str], node_timeout: int) -> list[str]:
    return servers.with_port_and_dir(base) + [
        "--bind", "127.0.0.1", "--cluster-enabled", "yes", "--cluster-config-file", "{dir}/nodes.conf",
        "--cluster-node-timeout", str(node_timeout), "--save", "", "--appendonly", "no"]


def call(node: servers.Server, *argv: str):
    with node.client(timeout=10) as c:
        value = c.call(*argv)
    return value.decode() if isinstance(value, bytes) else value


def nodes_view(node: servers.Server) -> set[tuple[str, str, str]]:
    view = set()
    for line in call(node, "CLUSTER", "NODES").strip().splitlines():
        words = line.split()
        role = "master" if "master" in words[2] else "replica"
        view.add((words[0], role, " ".join(words[8:])))
    return view


def agreed(nodes: list[servers.Server]) -> bool:
    try:
        if not all("cluster_state:ok" in call(n, "CLUSTER", "INFO") for n in nodes):
            return False
        views = [nodes_view(n) for n in nodes]
    except (OSError, resp.RespError):
        return False
    return all(v == views[0] for v in views) and len(views[0]) >= len(nodes)


def wait(what: str, check, timeout: float = WAIT_S) -> float:
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > timeout:
            raise RuntimeError(f"{what}: not within {timeout} s")
        time.sleep(0.05)
    return time.monotonic() - started


def cli(*args: str, timeout: float = 600) -> str:
    out = subprocess.run(["redis-cli", *args], capture_output=True, text=True, timeout=timeout,
                         stdin=subprocess.DEVNULL, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"redis-cli {' '.join(args[:2])} failed:\n{out.stdout}\n{out.stderr}")
    return out.stdout


def fill(nodes: list[servers.Server], keys: int) -> None:
    """``keys`` string keys, each SET on the master of its slot."""
    owner: dict[int, servers.Server] = {}
    by_id = {call(n, "CLUSTER", "MYID"): n for n in nodes}
    for line in call(nodes[0], "CLUSTER", "NODES").strip().splitlines():
        words = line.split()
        for part in words[8:]:
            if part.startswith("["):
                continue
            first, _, last = part.partition("-")
            for slot in range(int(first), int(last or first) + 1):
                owner[slot] = by_id[words[0]]
    batches: dict[int, list] = {}
    for i in range(keys):
        key = f"key:{i}"
        node = owner[key_slot(key.encode())]
        batches.setdefault(id(node), [node, []])[1].append(("SET", key, "x" * 32))
    for node, commands in batches.values():
        with node.client() as c:
            for start in range(0, len(commands), 1000):
                c.pipeline(commands[start:start + 1000])


def run_kind(name: str, base: list[str], env, args) -> dict:
    argv = cluster_argv(base, args.node_timeout)
    nodes = [servers.Server(f"{name}-{i}", argv, env, pick_port=free_pair)
             for i in range(args.nodes)]
    result: dict = {"server": name, "nodes": args.nodes, "node_timeout_ms": args.node_timeout}
    try:
        for node in nodes:
            node.start()
        servers.log(f"{name}: {args.nodes} nodes up; creating the cluster")
        started = time.monotonic()
        cli("--cluster", "create", *(f"127.0.0.1:{n.port}" for n in nodes),
            "--cluster-replicas", "1", "--cluster-yes")
        wait("the cluster agrees", lambda: agreed(nodes))
        result["formation_s"] = round(time.monotonic() - started, 2)

        servers.log(f"{name}: idle for {args.idle} s")
        before = [n.cpu_seconds() for n in nodes]
        time.sleep(args.idle)
        used = [n.cpu_seconds() - b for n, b in zip(nodes, before, strict=True)]
        result["idle_cpu_percent_per_node"] = round(100 * sum(used) / len(nodes) / args.idle, 2)

        servers.log(f"{name}: {args.keys} keys, then a reshard of {args.slots} slots")
        fill(nodes, args.keys)
        roles = {n.port: call(n, "ROLE") for n in nodes}
        masters = [n for n in nodes if roles[n.port][0] in ("master", b"master")]
        source, target = masters[0], masters[1]
        started = time.monotonic()
        cli("--cluster", "reshard", f"127.0.0.1:{source.port}",
            "--cluster-from", call(source, "CLUSTER", "MYID"),
            "--cluster-to", call(target, "CLUSTER", "MYID"),
            "--cluster-slots", str(args.slots), "--cluster-yes")
        wait("the cluster agrees after the reshard", lambda: agreed(nodes))
        took = time.monotonic() - started
        result["reshard_slots"] = args.slots
        result["reshard_s"] = round(took, 2)
        result["reshard_s_per_1000_slots"] = round(took * 1000 / args.slots, 2)

        victim = masters[2]
        victim_id = call(victim, "CLUSTER", "MYID")
        rest = [n for n in nodes if n is not victim]
        servers.log(f"{name}: kill -9 of a master")
        victim.proc.kill()  # SIGKILL
        victim.proc.wait(30)
        killed = time.monotonic()

        def replaced() -> bool:
            try:
                for node in rest:
                    view = nodes_view(node)
                    owners = [v for v in view if v[0] != victim_id and v[1] == "master" and v[2]]
                    if len(owners) != 3:
                        return False
                    if "cluster_state:ok" not in call(node, "CLUSTER", "INFO"):
                        return False
                return True
            except (OSError, resp.RespError):
                return False

        wait("a replica takes over", replaced)
        result["failover_s"] = round(time.monotonic() - killed, 2)
    finally:
        for node in nodes:
            node.stop()
    return result


def render(results: list[dict]) -> str:
    rows = [("formation (s)", "formation_s"), ("idle bus CPU per node (% of a core)",
                                               "idle_cpu_percent_per_node"),
            ("reshard (s per 1000 slots, with keys)", "reshard_s_per_1000_slots"),
            ("failover after kill -9 (s)", "failover_s")]
    names = [r["server"] for r in results]
    lines = ["| measure | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for label, key in rows:
        lines.append(f"| {label} | " + " | ".join(str(r.get(key, "-")) for r in results) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=6)
    parser.add_argument("--node-timeout", type=int, default=2000)
    parser.add_argument("--idle", type=float, default=10.0)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--slots", type=int, default=1000)
    parser.add_argument("--only", choices=["tidelog", "redis"])
    parser.add_argument("--tidelog-cmd")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    if shutil.which("redis-cli") is None:
        print("redis-cli is needed (Debian's redis-tools)", file=sys.stderr)
        return 2
    kinds = []
    if args.only != "redis":
        kinds.append(("tidelog", *servers.tidelog_command(servers.REPO, args.tidelog_cmd)))
    if args.only != "tidelog":
        kinds.append(("redis", [servers.redis_argv()[0]], None))
    results = [run_kind(name, base, env, args) for name, base, env in kinds]
    table = render(results)
    print(table)
    out = Path(args.out or servers.REPO / "bench" / "results" /
               f"{dt.date.today().isoformat()}-cluster.json")
    out.write_text(json.dumps({"machine": servers.machine_info(), "results": results},
                              indent=2) + "\n")
    servers.log(f"raw figures: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
