"""The README's six-node cluster, run as written: its block, read from the
README at test time, with the ports 7000-7005 moved to free ones and the
directory in the test's own, run by bash; the interactive reshard line is
left out (tests/integration/test_cluster_failover.py reshards with the
same tool).  The nodes detach (``--daemonize yes``), so the finaliser stops
each by the pid its INFO gives."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import pytest
import redis

from tests.support.cluster import REDIS_CLI, free_pair, require_cluster_mode
from tests.support.processes import server_command, server_env
from tests.support.readme import blocks

SECTION = "Redis Cluster"


def the_block() -> str:
    found = [b for b in blocks() if b.section == SECTION and b.lang == "text"]
    assert len(found) == 1, f"one text block in README's {SECTION!r} section, found {found}"
    return found[0].text


def test_the_readme_cluster_example(tmp_path):
    require_cluster_mode()
    if REDIS_CLI is None:
        pytest.skip("redis-cli is not installed")
    text = the_block()
    assert "--cluster reshard" in text
    ports: list[int] = []
    while len(ports) < 6:
        port = free_pair()
        if port not in ports:
            ports.append(port)
    for old, new in zip(range(7000, 7006), ports, strict=True):
        text = re.sub(rf"\b{old}\b", str(new), text)
    script = "set -euo pipefail\n" + "\n".join(
        line for line in text.splitlines() if "--cluster reshard" not in line) + "\n"
    env = server_env()
    env["PATH"] = os.pathsep.join([str(Path(server_command()[0]).parent), env["PATH"]])
    if server_command()[0].endswith("python") or "-m" in server_command():
        pytest.skip("no tidelog-server entry point to run the README's commands")
    try:
        done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, timeout=180,
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)
        logs = "\n".join(p.read_text(errors="replace")[-2000:]
                         for p in tmp_path.glob("cluster/*/server.log"))
        assert done.returncode == 0, done.stdout + done.stderr + logs
        assert "[OK] All 16384 slots covered." in done.stdout
        assert "cluster_state:ok" in done.stdout
        assert re.search(r"^\d{13}-\d+$", done.stdout, re.M), done.stdout  # the XADD's ID
        for port in ports:
            assert (tmp_path / "cluster" / str(port) / "server.log").exists()
            assert (tmp_path / "cluster" / str(port) / "nodes.conf").exists()
    finally:
        for port in ports:
            try:
                pid = redis.Redis(port=port, socket_timeout=5).info("server")["process_id"]
            except (redis.RedisError, OSError):
                continue
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
