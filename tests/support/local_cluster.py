"""The launcher ``tidelog-server --cluster-local`` for the integration tests:
``Launcher`` starts one in a session of its own through the ``processes``
fixture (whose finaliser kills its whole process group: the launcher and its
nodes) and reads the table it prints (``tests.support.cluster.free_range(n)``
gives it n consecutive client ports whose bus ports are free too); ``wait_ok`` and ``check`` wait for
and check a cluster with redis-py and ``redis-cli --cluster check``.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
import redis

from tests.support.cluster import REDIS_CLI
from tests.support.processes import server_command, server_env

WAIT_S = 120.0
NODE_TIMEOUT = "3000"


class Launcher:
    """One ``tidelog-server --cluster-local`` process and its output file."""

    def __init__(self, processes, workdir: Path, count: int, base: int, *extra: str,
                 name: str = "launcher") -> None:
        self.count = count
        self.base = base
        self.dir = workdir / "data"
        self.out_path = workdir / f"{name}.out"
        argv = [*server_command(), "--cluster-local", str(count), "--port", str(base),
                "--dir", str(self.dir), "--cluster-node-timeout", NODE_TIMEOUT,
                "--save", "", *extra]
        with open(self.out_path, "ab") as out:
            self.proc = processes.popen(argv, cwd=workdir, env=server_env(),
                                        stdin=subprocess.DEVNULL, stdout=out,
                                        stderr=subprocess.STDOUT, start_new_session=True)

    @property
    def output(self) -> str:
        return self.out_path.read_text(errors="replace")

    def wait_for(self, text: str, after: int = 0, timeout: float = WAIT_S) -> str:
        """Until ``text`` is in the output (from offset ``after``); fails with
        the output and the nodes' logs if the launcher exits first."""
        deadline = time.monotonic() + timeout
        while text not in self.output[after:]:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"no {text!r} from the launcher (exit code {self.proc.poll()})\n"
                            f"{self.output}\n{self.logs()}")
            time.sleep(0.1)
        return self.output

    def logs(self) -> str:
        return "\n".join(f"--- {p}\n{p.read_text(errors='replace')[-3000:]}"
                         for p in sorted(self.dir.glob("*/*.log")))

    def ready(self) -> dict[int, dict[str, str]]:
        """Wait for the launcher's table; per port: its row."""
        self.wait_for(">>> Ready")
        return self.table()

    def table(self) -> dict[int, dict[str, str]]:
        lines = self.output.splitlines()
        start = max(i for i, line in enumerate(lines) if line.startswith("port "))
        header = re.split(r"\s{2,}", lines[start].strip())
        rows = {}
        for line in lines[start + 1:start + 1 + self.count]:
            row = dict(zip(header, re.split(r"\s{2,}", line.strip())))
            rows[int(row["port"])] = row
        return rows

    def ports(self) -> list[int]:
        return list(range(self.base, self.base + self.count))

    def terminate(self, timeout: float = 90.0) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)


def client(port: int) -> redis.Redis:
    return redis.Redis(port=port, socket_timeout=10, decode_responses=True)


def node_ids(ports: list[int]) -> dict[int, str]:
    return {port: client(port).execute_command("CLUSTER", "MYID") for port in ports}


def cli(*args: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
    if REDIS_CLI is None:
        pytest.skip("redis-cli is not installed")
    return subprocess.run([REDIS_CLI, *args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def wait_ok(ports: list[int], size: int, timeout: float = WAIT_S) -> None:
    """Until every node says cluster_state:ok and lists ``size`` nodes, none failing."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            good = True
            for port in ports:
                c = client(port)
                nodes = c.execute_command("CLUSTER", "NODES").strip().splitlines()
                if ("cluster_state:ok" not in c.execute_command("CLUSTER", "INFO")
                        or len(nodes) != size or any("fail" in n.split()[2] for n in nodes)):
                    good = False
        except (redis.RedisError, OSError):
            good = False
        if good:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"the cluster on {ports} is not ok within {timeout} s")
        time.sleep(0.2)


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # a zombie (its parent gone too) counts as gone
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


def check(port: int) -> subprocess.CompletedProcess:
    done = cli("--cluster", "check", f"127.0.0.1:{port}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[OK] All nodes agree about slots configuration." in done.stdout
    assert "[OK] All 16384 slots covered." in done.stdout
    return done
