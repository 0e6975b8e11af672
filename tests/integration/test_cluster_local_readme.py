"""README's "Cluster on one machine", run as written: its blocks, read from the
README at test time, with the ports 7000.. moved to free ones and the
directory in the test's own.  The shell block runs in bash in a session of its
own (its ``&`` leaves the launcher running after the script ends); the
``processes`` finaliser kills that whole process group whatever happens, and
the test itself stops the launcher with SIGTERM, as Ctrl-C would.

The add-node block (two machines) runs on loopback with ``make test-long``:
the second machine's node on a second port range."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from tests.support.cluster import REDIS_CLI, free_range, require_cluster_mode
from tests.support.local_cluster import check, gone, wait_ok
from tests.support.processes import server_command, server_env
from tests.support.readme import blocks, python_env

SECTION = "Cluster on one machine"
WAIT_S = 120.0


def section_blocks(lang: str) -> list[str]:
    return [b.text for b in blocks() if b.section == SECTION and b.lang == lang]


def block_with(lang: str, marker: str) -> str:
    found = [text for text in section_blocks(lang) if marker in text]
    assert len(found) == 1, f"one {lang} block with {marker!r} in README's {SECTION!r}"
    return found[0]


def move_ports(text: str, base: int) -> str:
    """7000, 7001 ... -> base, base + 1 ..."""
    return re.sub(r"\b70(\d\d)\b", lambda m: str(base + int(m.group(1))), text)


def bash(processes, script: str, cwd: Path, name: str) -> subprocess.Popen:
    env = server_env()
    env["PATH"] = os.pathsep.join([str(Path(server_command()[0]).parent), env["PATH"]])
    with open(cwd / f"{name}.out", "ab") as out:
        return processes.popen(["bash", "-c", "set -euo pipefail\n" + script], cwd=cwd, env=env,
                               stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                               start_new_session=True)


def launcher_of(port: int) -> int:
    """The pid of the launcher whose node listens on ``port`` (the node's parent)."""
    pid = int(redis.Redis(port=port, socket_timeout=10).info("server")["process_id"])
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[1])


def stop_launcher(pid: int, timeout: float = 90.0) -> None:
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while not gone(pid):
        assert time.monotonic() < deadline, f"the launcher {pid} still runs after SIGTERM"
        time.sleep(0.1)


def require_tools() -> None:
    require_cluster_mode()
    if REDIS_CLI is None:
        pytest.skip("redis-cli is not installed")
    if server_command()[0].endswith("python"):
        pytest.skip("no tidelog-server entry point to run the README's commands")


def test_the_make_targets_are_the_ones_the_makefile_has():
    text = block_with("text", "make run-cluster")
    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text()
    assert "\nrun-cluster:" in makefile
    for variable in re.findall(r"\b([A-Z]+)=", text):
        assert re.search(rf"^{variable} \?=", makefile, re.M), variable


def test_the_readme_block_and_redis_cluster(processes, tmp_path):
    require_tools()
    base = free_range(3)
    script = move_ports(block_with("text", "--cluster-local 3"), base)
    shell = bash(processes, script, tmp_path, "readme")
    assert shell.wait(WAIT_S) == 0, (tmp_path / "readme.out").read_text(errors="replace")
    out = (tmp_path / "readme.out").read_text(errors="replace")
    assert "[OK] All 16384 slots covered." in out
    assert "\nhello\n" in out
    for port in range(base, base + 3):
        assert (tmp_path / "cluster" / str(port) / "nodes.conf").exists()
        assert (tmp_path / "cluster" / str(port) / "appendonlydir").is_dir()
    code = move_ports(block_with("python", "RedisCluster("), base)
    done = subprocess.run([sys.executable, "-c", code], env=python_env(), capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == "1 hello\n"
    stop_launcher(launcher_of(base))
    assert ">>> All nodes stopped" in (tmp_path / "readme.out").read_text(errors="replace")


@pytest.mark.long
def test_the_readme_add_node_block_on_loopback(processes, tmp_path):
    require_tools()
    text = block_with("text", "--cluster add-node")
    lines = [line.split("#")[0].strip() for line in text.splitlines()
             if line.split("#")[0].strip()]
    count = int(re.search(r"--cluster-local (\d+)", lines[0]).group(1))
    first, second = free_range(count), free_range(count)

    def here(line: str) -> str:  # 10.0.0.2:7000 is the second range, 10.0.0.1:7000 the first
        line = re.sub(r"10\.0\.0\.2:70(\d\d)", lambda m: f"127.0.0.1:{second + int(m.group(1))}",
                      line)
        line = re.sub(r"10\.0\.0\.1:70(\d\d)", lambda m: f"127.0.0.1:{first + int(m.group(1))}",
                      line)
        if "10.0.0.2" in line:
            line = line.replace("--port 7000", f"--port {second}")
        return line.replace("--port 7000", f"--port {first}").replace("10.0.0.1", "127.0.0.1") \
            .replace("10.0.0.2", "127.0.0.1")

    for n, line in enumerate(lines[:2]):
        (tmp_path / f"m{n}").mkdir()
        bash(processes, here(line) + " &\n", tmp_path / f"m{n}", f"machine{n}")
    ports_first = list(range(first, first + count))
    wait_ok(ports_first, count)
    ready = tmp_path / "m1" / "machine1.out"
    deadline = time.monotonic() + WAIT_S
    while ">>> Ready" not in ready.read_text(errors="replace"):
        assert time.monotonic() < deadline, ready.read_text(errors="replace")
        time.sleep(0.1)
    script = "\n".join(here(line) for line in lines[2:]) + "\n"
    shell = bash(processes, script, tmp_path, "tools")
    assert shell.wait(300) == 0, (tmp_path / "tools.out").read_text(errors="replace")
    wait_ok([*ports_first, second], count + 1)
    check(first)
    myself = next(line for line in redis.Redis(port=second, decode_responses=True)
                  .execute_command("CLUSTER", "NODES").splitlines() if "myself" in line)
    assert len(myself.split()) > 8, myself  # the added node serves slots
    stop_launcher(launcher_of(second))
    stop_launcher(launcher_of(first))
